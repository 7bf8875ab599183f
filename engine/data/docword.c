/* engine/data/docword.c: the UCI bag-of-words format (docword.txt[.gz]).
 *
 *   D          (line 1: documents)        -- or "D W NNZ" on one line
 *   W          (line 2: vocabulary size)
 *   NNZ        (line 3: entries)
 *   doc word count      (NNZ lines, ids 1-based, count a positive integer)
 *
 * Reading is strict: every malformed input is an error naming file:line and what is wrong;
 * nothing is dropped. Entries may come in any order (they are sorted into CSR), but a
 * repeated (doc, word) pair is an error. Writing is deterministic (gzip mtime 0) and goes
 * through a temporary file renamed on success. */
#include "data/data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "data/linereader.h"

/* Counts above 2^24 are not exactly representable in the float CSR values. */
#define DOCWORD_MAX_COUNT 16777216

/* Parses one header integer field; `what` names it in messages. */
static int header_field(const char *path, int64_t lineno, const char **p, const char *what,
                        int64_t lo, int64_t *out, datm_error *err)
{
    const char *q = datm_skip_blank(*p);
    char quoted[48];
    if (!*q)
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: header: missing %s (the header is D, W, NNZ)", path,
                              (long long)lineno, what);
    int ok = datm_parse_i64(q, p, out);
    datm_quote_field(q, datm_field_len(q), quoted);
    if (ok <= 0 || *out < lo)
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: header: %s must be an integer >= %lld, found '%s'", path,
                              (long long)lineno, what, (long long)lo, quoted);
    return DATM_OK;
}

/* Reads the header (three lines of one integer, or one line of three). */
static int read_header(datm_linereader *lr, int64_t *D, int64_t *W, int64_t *NNZ, datm_error *err)
{
    const char *path = lr->path;
    static const char *const names[3] = {"D (documents)", "W (vocabulary size)", "NNZ (entries)"};
    static const int64_t lows[3] = {1, 1, 0};
    int64_t v[3] = {0, 0, 0};
    int got = 0;
    while (got < 3) {
        char *line;
        size_t len;
        int rc = datm_linereader_next(lr, &line, &len, err);
        if (rc < 0) return -rc;
        if (rc == 0) {
            if (lr->lineno == 0)
                return datm_error_set(err, DATM_E_FORMAT,
                                      "%s:1: empty file (expected the header D, W, NNZ)", path);
            return datm_error_set(err, DATM_E_FORMAT,
                                  "%s:%lld: header: file ends before %s", path,
                                  (long long)lr->lineno + 1, names[got]);
        }
        const char *p = line;
        (void)len;
        if (!*datm_skip_blank(p)) {
            return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: header: empty line where %s was expected",
                                  path, (long long)lr->lineno, names[got]);
        }
        /* first line: one integer (UCI layout) or all three */
        int want = 1;
        if (got == 0) {
            const char *q = datm_skip_blank(p);
            q += datm_field_len(q);
            q = datm_skip_blank(q);
            if (*q) want = 3;
        }
        for (int i = 0; i < want; i++) {
            int rc2 = header_field(path, lr->lineno, &p, names[got], lows[got], &v[got], err);
            if (rc2) return rc2;
            got++;
        }
        p = datm_skip_blank(p);
        if (*p) {
            char quoted[48];
            datm_quote_field(p, datm_field_len(p), quoted);
            return datm_error_set(err, DATM_E_FORMAT,
                                  "%s:%lld: header: unexpected '%s' after %s (the header is D, W, "
                                  "NNZ: one integer per line or three on one line)",
                                  path, (long long)lr->lineno, quoted, names[got - 1]);
        }
    }
    *D = v[0]; *W = v[1]; *NNZ = v[2];
    if (*D > INT32_MAX || *W > INT32_MAX)
        return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: header: D = %lld or W = %lld exceeds %d",
                              path, (long long)lr->lineno, (long long)*D, (long long)*W, INT32_MAX);
    if (*NNZ > *D * *W)
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: header: NNZ = %lld exceeds D x W = %lld x %lld", path,
                              (long long)lr->lineno, (long long)*NNZ, (long long)*D, (long long)*W);
    return DATM_OK;
}

/* Parses "doc word count" into 0-based ids and the count; errors name path:lineno. */
static int parse_entry(const char *path, int64_t lineno, const char *line, int64_t D, int64_t W,
                       int32_t *doc, int32_t *word, int32_t *count, datm_error *err)
{
    static const char *const what[3] = {"doc id", "word id", "count"};
    int64_t v[3];
    const char *p = datm_skip_blank(line);
    char quoted[48];
    for (int i = 0; i < 3; i++) {
        if (!*p)
            return datm_error_set(err, DATM_E_FORMAT,
                                  "%s:%lld: expected 'doc word count', found %d field%s", path,
                                  (long long)lineno, i, i == 1 ? "" : "s");
        datm_quote_field(p, datm_field_len(p), quoted);
        int ok = datm_parse_i64(p, &p, &v[i]);
        if (ok == 0)
            return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: %s '%s' is not an integer%s",
                                  path, (long long)lineno, what[i], quoted,
                                  i == 2 ? " (counts must be positive integers)" : "");
        if (ok < 0) v[i] = INT64_MAX;   /* reported as out of range below */
        p = datm_skip_blank(p);
    }
    if (*p) {
        datm_quote_field(p, datm_field_len(p), quoted);
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: unexpected '%s' after 'doc word count'", path,
                              (long long)lineno, quoted);
    }
    if (v[0] < 1 || v[0] > D)
        return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: doc id %lld out of range 1..%lld (D)",
                              path, (long long)lineno, (long long)v[0], (long long)D);
    if (v[1] < 1 || v[1] > W)
        return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: word id %lld out of range 1..%lld (W)",
                              path, (long long)lineno, (long long)v[1], (long long)W);
    if (v[2] < 1)
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: count %lld must be a positive integer", path,
                              (long long)lineno, (long long)v[2]);
    if (v[2] > DOCWORD_MAX_COUNT)
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: count %lld exceeds %d (not exact in float)", path,
                              (long long)lineno, (long long)v[2], DOCWORD_MAX_COUNT);
    *doc = (int32_t)(v[0] - 1);
    *word = (int32_t)(v[1] - 1);
    *count = (int32_t)v[2];
    return DATM_OK;
}

/* Entries arrived out of order: sort by (doc, word) keeping file order for reporting. */
typedef struct { int32_t col; int32_t pad; int64_t idx; } colidx;
static int cmp_colidx(const void *a, const void *b)
{
    const colidx *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int sort_entries(const char *path, int64_t first_line, const int32_t *doc, datm_csr *m,
                        datm_error *err)
{
    int64_t nnz = m->nnz, D = m->n_rows;
    colidx *tmp = datm_alloc_array((size_t)DATM_MAX(nnz, 1), sizeof *tmp, err);
    int32_t *col = datm_alloc_array((size_t)DATM_MAX(nnz, 1), sizeof *col, err);
    float *val = datm_alloc_array((size_t)DATM_MAX(nnz, 1), sizeof *val, err);
    int64_t *next = datm_alloc_array((size_t)D + 1, sizeof *next, err);
    int rc = DATM_OK;
    if (!tmp || !col || !val || !next) { rc = err ? err->code : DATM_E_NOMEM; goto done; }
    /* row_ptr already holds the per-document offsets */
    memcpy(next, m->row_ptr, (size_t)(D + 1) * sizeof *next);
    for (int64_t j = 0; j < nnz; j++) {   /* stable counting sort by document */
        int64_t p = next[doc[j]]++;
        tmp[p].col = m->col[j];
        tmp[p].idx = j;
    }
    for (int64_t d = 0; d < D; d++) {
        int64_t a = m->row_ptr[d], b = m->row_ptr[d + 1];
        if (b - a > 1) qsort(tmp + a, (size_t)(b - a), sizeof *tmp, cmp_colidx);
        for (int64_t j = a; j < b; j++) {
            if (j > a && tmp[j].col == tmp[j - 1].col) {
                rc = datm_error_set(err, DATM_E_FORMAT,
                                    "%s:%lld: duplicate entry (doc %lld, word %lld), first at line %lld",
                                    path, (long long)(first_line + tmp[j].idx), (long long)d + 1,
                                    (long long)tmp[j].col + 1, (long long)(first_line + tmp[j - 1].idx));
                goto done;
            }
            col[j] = tmp[j].col;
            val[j] = m->val[tmp[j].idx];
        }
    }
    memcpy(m->col, col, (size_t)nnz * sizeof *col);
    memcpy(m->val, val, (size_t)nnz * sizeof *val);
done:
    datm_free(tmp); datm_free(col); datm_free(val); datm_free(next);
    return rc;
}

/* Entries as read: grown with the content (never sized from the header alone, which may lie). */
typedef struct entries { int32_t *doc, *col; float *val; int64_t n, cap; } entries;

static int entries_push(entries *e, int64_t max, int32_t d, int32_t w, int32_t c, datm_error *err)
{
    if (e->n == e->cap) {
        int64_t cap = e->cap ? DATM_MIN(2 * e->cap, max) : DATM_MIN(max, 4096);
        int32_t *nd = datm_alloc_array((size_t)cap, sizeof *nd, err);
        int32_t *nc = datm_alloc_array((size_t)cap, sizeof *nc, err);
        float *nv = datm_alloc_array((size_t)cap, sizeof *nv, err);
        if (!nd || !nc || !nv) {
            datm_free(nd); datm_free(nc); datm_free(nv);
            return err ? err->code : DATM_E_NOMEM;
        }
        if (e->n) {
            memcpy(nd, e->doc, (size_t)e->n * sizeof *nd);
            memcpy(nc, e->col, (size_t)e->n * sizeof *nc);
            memcpy(nv, e->val, (size_t)e->n * sizeof *nv);
        }
        datm_free(e->doc); datm_free(e->col); datm_free(e->val);
        e->doc = nd; e->col = nc; e->val = nv;
        e->cap = cap;
    }
    e->doc[e->n] = d;
    e->col[e->n] = w;
    e->val[e->n] = (float)c;
    e->n++;
    return DATM_OK;
}

static void entries_free(entries *e)
{
    datm_free(e->doc); datm_free(e->col); datm_free(e->val);
    memset(e, 0, sizeof *e);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Documents with at least one entry (doc ids of e, sorted or not). */
static int64_t distinct_docs(const entries *e, int sorted, datm_error *err)
{
    if (e->n == 0) return 0;
    const int32_t *d = e->doc;
    int32_t *tmp = NULL;
    if (!sorted) {
        tmp = datm_alloc_array((size_t)e->n, sizeof *tmp, err);
        if (!tmp) return -1;
        memcpy(tmp, e->doc, (size_t)e->n * sizeof *tmp);
        qsort(tmp, (size_t)e->n, sizeof *tmp, cmp_i32);
        d = tmp;
    }
    int64_t k = 1;
    for (int64_t i = 1; i < e->n; i++) k += d[i] != d[i - 1];
    datm_free(tmp);
    return k;
}

/* Documents without entries are allowed (a held-out part can be empty), but a header whose D
 * is mostly documents that never appear does not describe the file: more than 1000 empty
 * documents and more than ten per non-empty one. This also bounds the row index allocated
 * below by the content. */
#define DOCWORD_MAX_EMPTY_RATIO 10
#define DOCWORD_MAX_EMPTY_FREE 1000

int datm_docword_read(const char *path, datm_csr *out, datm_error *err)
{
    DATM_ASSERT(path && out);
    memset(out, 0, sizeof *out);
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, path, err);
    if (rc) return rc;
    int64_t D = 0, W = 0, NNZ = 0;
    entries e = {0};
    rc = read_header(&lr, &D, &W, &NNZ, err);
    if (rc) goto fail;
    int64_t first_line = lr.lineno + 1;   /* line of entry 0; blank lines are not allowed */

    int64_t trailing_blank = 0;
    int sorted = 1;
    int32_t pd = -1, pw = -1;
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, err);
        if (r < 0) { rc = -r; goto fail; }
        if (r == 0) break;
        if (!*datm_skip_blank(line)) { trailing_blank = trailing_blank ? trailing_blank : lr.lineno; continue; }
        if (trailing_blank) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: empty line among the entries",
                                path, (long long)trailing_blank);
            goto fail;
        }
        if (e.n >= NNZ) {
            rc = datm_error_set(err, DATM_E_FORMAT,
                                "%s:%lld: more entries than NNZ = %lld given in the header",
                                path, (long long)lr.lineno, (long long)NNZ);
            goto fail;
        }
        int32_t d = 0, w = 0, c = 0;
        rc = parse_entry(path, lr.lineno, line, D, W, &d, &w, &c, err);
        if (rc) goto fail;
        if (sorted) {
            if (d == pd && w == pw) {
                rc = datm_error_set(err, DATM_E_FORMAT,
                                    "%s:%lld: duplicate entry (doc %d, word %d), first at line %lld",
                                    path, (long long)lr.lineno, d + 1, w + 1, (long long)lr.lineno - 1);
                goto fail;
            }
            if (d < pd || (d == pd && w < pw)) sorted = 0;
        }
        pd = d;
        pw = w;
        rc = entries_push(&e, NNZ, d, w, c, err);
        if (rc) goto fail;
    }
    if (e.n != NNZ) {
        rc = datm_error_set(err, DATM_E_FORMAT,
                            "%s:%lld: file ends after %lld entries but the header says NNZ = %lld",
                            path, (long long)lr.lineno, (long long)e.n, (long long)NNZ);
        goto fail;
    }
    int64_t used = distinct_docs(&e, sorted, err);
    if (used < 0) { rc = err ? err->code : DATM_E_NOMEM; goto fail; }
    if (D - used > DOCWORD_MAX_EMPTY_FREE && D - used > DOCWORD_MAX_EMPTY_RATIO * used) {
        rc = datm_error_set(err, DATM_E_FORMAT,
                            "%s: header: D = %lld documents, but only %lld have an entry: the "
                            "header does not describe the file (at most %d empty documents, or "
                            "%d per non-empty one, are taken)", path, (long long)D, (long long)used,
                            DOCWORD_MAX_EMPTY_FREE, DOCWORD_MAX_EMPTY_RATIO);
        goto fail;
    }
    rc = datm_csr_alloc(out, D, W, NNZ, err);
    if (rc) goto fail;
    for (int64_t j = 0; j < NNZ; j++) {
        out->col[j] = e.col[j];
        out->val[j] = e.val[j];
        out->row_ptr[e.doc[j] + 1]++;
    }
    for (int64_t d = 0; d < D; d++) out->row_ptr[d + 1] += out->row_ptr[d];
    if (!sorted) {
        rc = sort_entries(path, first_line, e.doc, out, err);
        if (rc) goto fail;
    }
    entries_free(&e);
    datm_linereader_close(&lr);
    return DATM_OK;
fail:
    entries_free(&e);
    datm_csr_free(out);
    datm_linereader_close(&lr);
    return rc;
}

/* ---- writing ---- */

/* Decimal of v (>= 0) into p; returns the number of characters. */
static int put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (int i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

typedef struct {
    FILE  *f;
    gzFile gz;
    char   buf[1 << 16];
    size_t len;
    int    failed;
} out_stream;

static void os_flush(out_stream *s)
{
    if (!s->len || s->failed) { s->len = 0; return; }
    if (s->gz) {
        if (gzwrite(s->gz, s->buf, (unsigned)s->len) != (int)s->len) s->failed = 1;
    } else if (fwrite(s->buf, 1, s->len, s->f) != s->len) {
        s->failed = 1;
    }
    s->len = 0;
}

int datm_docword_write(const char *path, const datm_csr *m, int gzip, datm_error *err)
{
    DATM_ASSERT(path && m);
    /* validate first: the format holds positive integer counts with sorted unique ids */
    for (int64_t d = 0; d < m->n_rows; d++)
        for (int64_t j = m->row_ptr[d]; j < m->row_ptr[d + 1]; j++) {
            float v = m->val[j];
            if (!(v >= 1.0f && v <= (float)DOCWORD_MAX_COUNT && v == (float)(int32_t)v))
                return datm_error_set(err, DATM_E_INVALID,
                                      "%s: doc %lld word %d: value %.9g is not a positive integer count",
                                      path, (long long)d + 1, m->col[j] + 1, (double)v);
            if (m->col[j] < 0 || m->col[j] >= m->n_cols ||
                (j > m->row_ptr[d] && m->col[j] <= m->col[j - 1]))
                return datm_error_set(err, DATM_E_INVALID,
                                      "%s: doc %lld: word ids not strictly increasing in 1..%lld",
                                      path, (long long)d + 1, (long long)m->n_cols);
        }
    size_t plen = strlen(path);
    char *tmp = datm_alloc(plen + 32, err);
    if (!tmp) return err ? err->code : DATM_E_NOMEM;
    snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
    out_stream *s = datm_alloc(sizeof *s, err);
    if (!s) { datm_free(tmp); return err ? err->code : DATM_E_NOMEM; }
    if (gzip) s->gz = gzopen(tmp, "wb6");
    else s->f = fopen(tmp, "wb");
    if (!s->gz && !s->f) {
        int rc = datm_error_set(err, DATM_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
        datm_free(s); datm_free(tmp);
        return rc;
    }
    s->len += (size_t)put_u64(s->buf + s->len, (uint64_t)m->n_rows); s->buf[s->len++] = '\n';
    s->len += (size_t)put_u64(s->buf + s->len, (uint64_t)m->n_cols); s->buf[s->len++] = '\n';
    s->len += (size_t)put_u64(s->buf + s->len, (uint64_t)m->nnz);    s->buf[s->len++] = '\n';
    for (int64_t d = 0; d < m->n_rows; d++)
        for (int64_t j = m->row_ptr[d]; j < m->row_ptr[d + 1]; j++) {
            if (s->len > sizeof s->buf - 64) os_flush(s);
            char *p = s->buf + s->len;
            int k = put_u64(p, (uint64_t)d + 1); p[k++] = ' ';
            k += put_u64(p + k, (uint64_t)m->col[j] + 1); p[k++] = ' ';
            k += put_u64(p + k, (uint64_t)m->val[j]); p[k++] = '\n';
            s->len += (size_t)k;
        }
    os_flush(s);
    int close_failed = s->gz ? (gzclose(s->gz) != Z_OK) : (fclose(s->f) != 0);
    int rc = DATM_OK;
    if (s->failed || close_failed) {
        rc = datm_error_set(err, DATM_E_IO, "%s: write failed: %s", tmp, strerror(errno));
        remove(tmp);
    } else if (rename(tmp, path) != 0) {
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename from %s: %s", path, tmp,
                            strerror(errno));
        remove(tmp);
    }
    datm_free(s);
    datm_free(tmp);
    return rc;
}
