/* engine/data/tokenize.h (internal to engine/data): the tokeniser of `datm corpus build`.
 *
 * Text is UTF-8; a line with invalid UTF-8 (overlong forms, surrogates, code points above
 * U+10FFFF, truncated sequences) is an error: datm_tokenize_line returns DATM_E_FORMAT and
 * sets bad_column / bad_byte so that the caller can name file:line:column.
 * A line is put in Unicode normalisation form C and cut into words by ICU's word break
 * iterator (which also segments scripts written without spaces: Chinese, Japanese, Thai);
 * a token is a maximal run of alphabetic characters (the Unicode Alphabetic property, with
 * combining marks that follow a letter) inside a word, case folded (full folding: "Straße"
 * -> "strasse") and normalised to NFC again, kept when its length in characters is within
 * [min_len, max_len]. Digits, punctuation and symbols separate tokens. On ASCII text this is
 * exactly "maximal runs of a-z/A-Z, lower-cased", which a fast path computes without ICU.
 * In tagged mode (Brown) the line is first split at white space into word/TAG items and only
 * the part before the last '/' is tokenised. */
#ifndef DATM_DATA_TOKENIZE_H
#define DATM_DATA_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

struct datm_icu;

typedef struct datm_tokenizer {
    int  tagged, min_len, max_len;
    /* Called for each token (folded, NFC, NUL-terminated UTF-8); non-zero return stops. */
    int  (*on_token)(void *user, const char *tok, size_t len);
    void *user;
    /* counts, accumulated over calls */
    int64_t utf8_error_bytes, non_ascii_chars, untagged, tokens, long_tokens;
    /* the first invalid UTF-8 of the last line rejected: 1-based byte column and its byte */
    int64_t bad_column;
    int     bad_byte;
    struct datm_icu *icu;   /* created at the first non-ASCII line; datm_tokenizer_free */
} datm_tokenizer;

/* Tokenises one line (no '\n'). Returns 0; DATM_E_FORMAT for invalid UTF-8 (bad_column,
 * bad_byte set; no token of the line emitted); DATM_E_NOMEM or DATM_E_INVALID when ICU
 * fails; or the first non-zero on_token result. *blank is set to 1 when the line holds only
 * white space. */
int datm_tokenize_line(datm_tokenizer *tk, const char *line, size_t len, int *blank);

/* One word normalised like a token (NFC, case folded), into out (size cap, NUL-terminated);
 * the length in *out_len. For stop-word files. Returns 0, DATM_E_FORMAT (invalid UTF-8) or
 * DATM_E_INVALID (too long for out). */
int datm_token_normalize(datm_tokenizer *tk, const char *w, size_t len, char *out, size_t cap,
                         size_t *out_len);

void datm_tokenizer_free(datm_tokenizer *tk);   /* the ICU state; the struct stays usable */

/* Number of invalid bytes in s[0..n) as UTF-8 and (in *non_ascii) of valid characters
 * outside ASCII. Overlong forms, surrogates and code points above U+10FFFF are invalid. */
int64_t datm_utf8_check(const unsigned char *s, size_t n, int64_t *non_ascii);
/* Offset of the first invalid byte of s[0..n), or -1 when it is all valid UTF-8. */
int64_t datm_utf8_first_bad(const unsigned char *s, size_t n);

#endif
