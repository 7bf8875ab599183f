/* engine/data/tokenize.c: the line tokeniser of corpus building (tokenize.h): UTF-8 checked,
 * NFC, ICU word breaks, runs of alphabetic characters, full case folding. ASCII lines take a
 * fast path with the same result (for ASCII, NFC is the identity, word breaks never fall
 * inside a run of letters and case folding is tolower). Letters: U UTF-16 code units. */
#include "data/tokenize.h"

#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include "core/core.h"

/* ---- UTF-8 validity ---- */

/* Length of the valid UTF-8 sequence at s[i] (1..4), or 0 when the byte at i starts no valid
 * sequence. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t i)
{
    const unsigned c = s[i];
    if (c < 0x80) return 1;
    size_t len;
    unsigned cp, min;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;                          /* continuation byte, C0/C1, F5..FF */
    size_t k = 1;
    while (k < len && i + k < n && (s[i + k] & 0xC0) == 0x80) {
        cp = (cp << 6) | (s[i + k] & 0x3F);
        k++;
    }
    if (k < len || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

int64_t datm_utf8_check(const unsigned char *s, size_t n, int64_t *non_ascii)
{
    int64_t bad = 0, wide = 0;
    for (size_t i = 0; i < n;) {
        const size_t len = utf8_seq(s, n, i);
        if (!len) { bad++; i++; continue; }  /* the lead byte is the error; resynchronise */
        wide += len > 1;
        i += len;
    }
    if (non_ascii) *non_ascii = wide;
    return bad;
}

int64_t datm_utf8_first_bad(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        const size_t len = utf8_seq(s, n, i);
        if (!len) return (int64_t)i;
        i += len;
    }
    return -1;
}

/* ---- ICU state ---- */

typedef struct datm_icu {
    const UNormalizer2 *nfc;
    UBreakIterator     *brk;
    UChar  *u, *n, *f, *g;   /* (cap) line as UTF-16, its NFC, a folded run, its NFC */
    int32_t cap;
    char   *out;             /* (out_cap) a token as UTF-8 */
    int32_t out_cap;
} datm_icu;

void datm_tokenizer_free(datm_tokenizer *tk)
{
    datm_icu *c = tk->icu;
    if (!c) return;
    if (c->brk) ubrk_close(c->brk);
    free(c->u); free(c->n); free(c->f); free(c->g); free(c->out);
    free(c);
    tk->icu = NULL;
}

static int icu_open(datm_tokenizer *tk)
{
    if (tk->icu) return DATM_OK;
    datm_icu *c = calloc(1, sizeof *c);
    if (!c) return DATM_E_NOMEM;
    UErrorCode st = U_ZERO_ERROR;
    c->nfc = unorm2_getNFCInstance(&st);
    if (U_SUCCESS(st)) c->brk = ubrk_open(UBRK_WORD, "", NULL, 0, &st);
    tk->icu = c;
    return U_SUCCESS(st) ? DATM_OK : DATM_E_INVALID;
}

/* All four UTF-16 buffers hold at least need units. */
static int icu_reserve(datm_icu *c, int64_t need)
{
    if (need <= c->cap) return DATM_OK;
    if (need > INT32_MAX / 4) return DATM_E_INVALID;
    int32_t cap = c->cap ? c->cap : 256;
    while (cap < need) cap *= 2;
    UChar **b[4] = {&c->u, &c->n, &c->f, &c->g};
    for (int i = 0; i < 4; i++) {
        UChar *p = realloc(*b[i], (size_t)cap * sizeof(UChar));
        if (!p) return DATM_E_NOMEM;
        *b[i] = p;
    }
    c->cap = cap;
    return DATM_OK;
}

/* NFC of c->u[0..len) into c->n (from_f 0), or of c->f[0..len) into c->g (from_f 1), growing
 * the buffers when ICU asks. */
static int nfc(datm_icu *c, int from_f, int32_t len, int32_t *out_len)
{
    for (;;) {
        UErrorCode st = U_ZERO_ERROR;
        const int32_t n = unorm2_normalize(c->nfc, from_f ? c->f : c->u, len,
                                           from_f ? c->g : c->n, c->cap, &st);
        if (st == U_BUFFER_OVERFLOW_ERROR) {
            int rc = icu_reserve(c, (int64_t)n + 1);
            if (rc) return rc;
            continue;
        }
        if (U_FAILURE(st)) return DATM_E_INVALID;
        *out_len = n;
        return DATM_OK;
    }
}

/* Emits the run r[0..len) (UTF-16, NFC) as a token: folded, NFC, length-checked. */
static int emit_run(datm_tokenizer *tk, const UChar *r, int32_t len)
{
    datm_icu *c = tk->icu;
    int32_t flen;
    for (;;) {
        UErrorCode st = U_ZERO_ERROR;
        flen = u_strFoldCase(c->f, c->cap, r, len, U_FOLD_CASE_DEFAULT, &st);
        if (st == U_BUFFER_OVERFLOW_ERROR) {
            const ptrdiff_t off = r - c->n;
            int rc = icu_reserve(c, (int64_t)flen + 1);
            if (rc) return rc;
            r = c->n + off;
            continue;
        }
        if (U_FAILURE(st)) return DATM_E_INVALID;
        break;
    }
    int32_t glen;
    int rc = nfc(c, 1, flen, &glen);
    if (rc) return rc;
    const int32_t chars = u_countChar32(c->g, glen);
    if (chars > tk->max_len) { tk->long_tokens++; return DATM_OK; }
    if (chars < tk->min_len) return DATM_OK;
    if (c->out_cap < 4 * glen + 1) {
        char *o = realloc(c->out, (size_t)(4 * glen + 1));
        if (!o) return DATM_E_NOMEM;
        c->out = o;
        c->out_cap = 4 * glen + 1;
    }
    int32_t olen;
    UErrorCode st = U_ZERO_ERROR;
    u_strToUTF8(c->out, c->out_cap, &olen, c->g, glen, &st);
    if (U_FAILURE(st)) return DATM_E_INVALID;
    tk->tokens++;
    return tk->on_token(tk->user, c->out, (size_t)olen);
}

/* A letter of a token: Alphabetic, or a combining mark right after one. */
static int letter_at(UChar32 ch, int in_run)
{
    if (u_hasBinaryProperty(ch, UCHAR_ALPHABETIC)) return 1;
    return in_run && (U_GET_GC_MASK(ch) & U_GC_M_MASK) != 0;
}

/* Tokens of s[0..n) (valid UTF-8 with non-ASCII characters). */
static int letters_icu(datm_tokenizer *tk, const char *s, size_t n)
{
    int rc = icu_open(tk);
    if (rc) return rc;
    datm_icu *c = tk->icu;
    if ((rc = icu_reserve(c, (int64_t)n + 1))) return rc;
    int32_t ulen;
    UErrorCode st = U_ZERO_ERROR;
    u_strFromUTF8(c->u, c->cap, &ulen, s, (int32_t)n, &st);
    if (U_FAILURE(st)) return DATM_E_INVALID;
    int32_t nlen;
    if ((rc = nfc(c, 0, ulen, &nlen))) return rc;
    /* the break iterator reads c->n; emit_run may grow (move) it, so re-set the text then */
    ubrk_setText(c->brk, c->n, nlen, &st);
    if (U_FAILURE(st)) return DATM_E_INVALID;
    int32_t start = ubrk_first(c->brk);
    for (int32_t end = ubrk_next(c->brk); end != UBRK_DONE && !rc; start = end, end = ubrk_next(c->brk)) {
        int32_t i = start, run = -1;
        while (i <= end && !rc) {
            UChar32 ch = 0;
            int32_t next = i;
            if (i < end) U16_NEXT(c->n, next, end, ch);
            const int is_letter = i < end && letter_at(ch, run >= 0);
            if (is_letter && run < 0) run = i;
            if (!is_letter && run >= 0) {
                UChar *old = c->n;
                rc = emit_run(tk, c->n + run, i - run);
                if (!rc && c->n != old) {
                    ubrk_setText(c->brk, c->n, nlen, &st);
                    ubrk_following(c->brk, end > 0 ? end - 1 : 0);
                }
                run = -1;
            }
            if (i == end) break;
            i = next;
        }
    }
    return rc;
}

static int is_alpha(unsigned c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_space(unsigned c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Tokens of ASCII s[0..n): maximal runs of letters, lower-cased. */
static int letters_ascii(datm_tokenizer *tk, const char *s, size_t n)
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

static int letters(datm_tokenizer *tk, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return letters_icu(tk, s, n);
    return letters_ascii(tk, s, n);
}

int datm_tokenize_line(datm_tokenizer *tk, const char *line, size_t len, int *blank)
{
    int64_t wide = 0;
    const int64_t bad = datm_utf8_first_bad((const unsigned char *)line, len);
    size_t i = 0;
    while (i < len && is_space((unsigned char)line[i])) i++;
    *blank = (i == len);
    if (bad >= 0) {
        tk->utf8_error_bytes += datm_utf8_check((const unsigned char *)line, len, NULL);
        tk->bad_column = bad + 1;
        tk->bad_byte = (unsigned char)line[bad];
        return DATM_E_FORMAT;
    }
    datm_utf8_check((const unsigned char *)line, len, &wide);
    tk->non_ascii_chars += wide;
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

/* on_token of datm_token_normalize: keeps the first token */
typedef struct norm_out { char *out; size_t cap, len; int n; } norm_out;
static int keep_first(void *user, const char *tok, size_t len)
{
    norm_out *o = user;
    if (o->n++ == 0) {
        if (len >= o->cap) return DATM_E_INVALID;
        memcpy(o->out, tok, len);
        o->out[len] = '\0';
        o->len = len;
    }
    return 0;
}

int datm_token_normalize(datm_tokenizer *tk, const char *w, size_t len, char *out, size_t cap,
                         size_t *out_len)
{
    if (datm_utf8_first_bad((const unsigned char *)w, len) >= 0) return DATM_E_FORMAT;
    norm_out o = {out, cap, 0, 0};
    datm_tokenizer t = *tk;   /* same ICU state and limits, own callback and counts */
    t.on_token = keep_first;
    t.user = &o;
    t.min_len = 1;
    t.max_len = 1 << 20;
    out[0] = '\0';
    int rc = letters(&t, w, len);
    tk->icu = t.icu;          /* created on first use: keep it */
    *out_len = o.len;
    return rc;
}
