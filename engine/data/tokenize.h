/* engine/data/tokenize.h (internal to engine/data): the tokeniser of `datm corpus build`.
 * A token is a maximal run of ASCII letters, lower-cased, kept when its length is within
 * [min_len, max_len]. Every other byte separates tokens; non-ASCII UTF-8 characters are
 * counted, invalid UTF-8 bytes are counted as errors. In tagged mode (Brown) the line is
 * first split at white space into word/TAG items and only the part before the last '/' is
 * tokenised. */
#ifndef DATM_DATA_TOKENIZE_H
#define DATM_DATA_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

typedef struct datm_tokenizer {
    int  tagged, min_len, max_len;
    /* Called for each token (lower-case, NUL-terminated); non-zero return stops. */
    int  (*on_token)(void *user, const char *tok, size_t len);
    void *user;
    /* counts, accumulated over calls */
    int64_t utf8_error_bytes, non_ascii_chars, untagged, tokens, long_tokens;
} datm_tokenizer;

/* Tokenises one line (no '\n'). Returns 0, or the first non-zero on_token result.
 * *blank is set to 1 when the line holds only white space. */
int datm_tokenize_line(datm_tokenizer *tk, const char *line, size_t len, int *blank);

/* Number of invalid bytes in s[0..n) as UTF-8 and (in *non_ascii) of valid characters
 * outside ASCII. Overlong forms, surrogates and code points above U+10FFFF are invalid. */
int64_t datm_utf8_check(const unsigned char *s, size_t n, int64_t *non_ascii);

#endif
