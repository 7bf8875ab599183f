/* engine/data/tokenize.c: line tokeniser and UTF-8 checker for corpus building. */
#include "data/tokenize.h"

int64_t datm_utf8_check(const unsigned char *s, size_t n, int64_t *non_ascii)
{
    int64_t bad = 0, wide = 0;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t len;
        unsigned cp, min;
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; min = 0x800; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
        else { bad++; i++; continue; }          /* continuation byte, C0/C1, F5..FF */
        size_t k = 1;
        while (k < len && i + k < n && (s[i + k] & 0xC0) == 0x80) {
            cp = (cp << 6) | (s[i + k] & 0x3F);
            k++;
        }
        if (k < len || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            bad++;      /* the lead byte is the error; resynchronise on the next byte */
            i++;
            continue;
        }
        wide++;
        i += len;
    }
    if (non_ascii) *non_ascii = wide;
    return bad;
}

static int is_alpha(unsigned c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_space(unsigned c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Emits the letter runs of s[0..n). */
static int letters(datm_tokenizer *tk, const char *s, size_t n)
{
    char buf[64];
    size_t i = 0;
    while (i < n) {
        if (!is_alpha((unsigned char)s[i])) { i++; continue; }
        size_t j = i;
        while (j < n && is_alpha((unsigned char)s[j])) j++;
        size_t len = j - i;
        if (len > (size_t)tk->max_len || len >= sizeof buf) {
            tk->long_tokens++;
        } else if (len >= (size_t)tk->min_len) {
            for (size_t k = 0; k < len; k++) buf[k] = (char)(s[i + k] | 0x20);
            buf[len] = '\0';
            tk->tokens++;
            int rc = tk->on_token(tk->user, buf, len);
            if (rc) return rc;
        }
        i = j;
    }
    return 0;
}

int datm_tokenize_line(datm_tokenizer *tk, const char *line, size_t len, int *blank)
{
    int64_t wide = 0;
    tk->utf8_error_bytes += datm_utf8_check((const unsigned char *)line, len, &wide);
    tk->non_ascii_chars += wide;
    size_t i = 0;
    while (i < len && is_space((unsigned char)line[i])) i++;
    *blank = (i == len);
    if (*blank) return 0;
    if (!tk->tagged) return letters(tk, line, len);
    while (i < len) {
        size_t j = i;
        while (j < len && !is_space((unsigned char)line[j])) j++;
        size_t w = j;   /* word part ends at the last '/' of the item */
        while (w > i && line[w - 1] != '/') w--;
        if (w == i) { tk->untagged++; w = j; }
        else w--;
        int rc = letters(tk, line + i, w - i);
        if (rc) return rc;
        i = j;
        while (i < len && is_space((unsigned char)line[i])) i++;
    }
    return 0;
}
