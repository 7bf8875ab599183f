/* engine/data/shard_convert.c: a UCI docword file (data.h) to a shard set (shard.h) in one
 * pass that holds one shard at a time, so a docword file larger than memory converts. UCI
 * files list their entries by document; a file that does not (a document id smaller than
 * one already seen) is read whole instead (datm_docword_read, which sorts), with a note.
 * Every line is checked as datm_docword_read checks it: errors name file:line. */
#include "data/shard.h"

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "data/linereader.h"

typedef struct conv {
    datm_linereader lr;
    datm_shard_writer w;
    datm_csr doc;            /* (1, V) the document being gathered */
    int64_t cap;
    int64_t D, V, NNZ, seen, cur;   /* header; entries read; current document (1-based) */
} conv;

static int cmp_col(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts the gathered document by word (entries carry their count in the pair) and appends it
 * to the shard writer, then `gap` empty documents. */
static int emit(conv *c, int64_t gap, datm_error *err)
{
    const int64_t n = c->doc.nnz;
    int32_t *pair = malloc(sizeof *pair * (size_t)(2 * n + 2));
    if (!pair) return datm_error_set(err, DATM_E_NOMEM, "%s: out of memory", c->lr.path);
    for (int64_t j = 0; j < n; j++) {
        pair[2 * j] = c->doc.col[j];
        pair[2 * j + 1] = (int32_t)c->doc.val[j];
    }
    qsort(pair, (size_t)n, 2 * sizeof *pair, cmp_col);
    for (int64_t j = 0; j < n; j++) {
        if (j > 0 && pair[2 * j] == pair[2 * j - 2]) {
            const int word = (int)pair[2 * j] + 1;   /* read before the buffer goes */
            free(pair);
            return datm_error_set(err, DATM_E_FORMAT, "%s: document %lld: word %d appears twice",
                                  c->lr.path, (long long)c->cur, word);
        }
        c->doc.col[j] = pair[2 * j];
        c->doc.val[j] = (float)pair[2 * j + 1];
    }
    free(pair);
    c->doc.n_rows = 1;
    c->doc.row_ptr[0] = 0;
    c->doc.row_ptr[1] = n;
    int rc = datm_shard_writer_add(&c->w, &c->doc, err);
    c->doc.nnz = 0;
    c->doc.row_ptr[1] = 0;
    for (int64_t g = 0; !rc && g < gap; g++) rc = datm_shard_writer_add(&c->w, &c->doc, err);
    return rc;
}

static int header(conv *c, datm_error *err)
{
    int64_t v[3];
    int got = 0;
    while (got < 3) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&c->lr, &line, &len, err);
        if (r < 0) return -r;
        if (r == 0)
            return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: header: ends after %d of D, W, NNZ",
                                  c->lr.path, (long long)c->lr.lineno, got);
        const char *p = datm_skip_blank(line);
        while (*p && got < 3) {
            if (datm_parse_i64(p, &p, &v[got]) <= 0 || v[got] < (got == 2 ? 0 : 1))
                return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: header: D, W, NNZ must be "
                                      "positive integers", c->lr.path, (long long)c->lr.lineno);
            got++;
            p = datm_skip_blank(p);
        }
    }
    c->D = v[0];
    c->V = v[1];
    c->NNZ = v[2];
    return DATM_OK;
}

/* 1: the file is not ordered by document (the caller reads it whole); 0 ok; else an error. */
static int stream_entries(conv *c, datm_error *err)
{
    char *line;
    size_t len;
    int r;
    c->cur = 1;
    while ((r = datm_linereader_next(&c->lr, &line, &len, err)) > 0) {
        const char *p = datm_skip_blank(line);
        if (!*p) continue;
        int64_t d, w, n;
        if (datm_parse_i64(p, &p, &d) <= 0 || datm_parse_i64(datm_skip_blank(p), &p, &w) <= 0 ||
            datm_parse_i64(datm_skip_blank(p), &p, &n) <= 0 || *datm_skip_blank(p))
            return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: expected 'doc word count'",
                                  c->lr.path, (long long)c->lr.lineno);
        if (d < 1 || d > c->D || w < 1 || w > c->V || n < 1 || n > 16777216)
            return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: doc %lld, word %lld, count %lld out "
                                  "of range (D = %lld, W = %lld, counts 1..2^24)", c->lr.path,
                                  (long long)c->lr.lineno, (long long)d, (long long)w,
                                  (long long)n, (long long)c->D, (long long)c->V);
        if (d < c->cur) return 1;
        if (d > c->cur) {
            int rc = emit(c, d - c->cur - 1, err);
            if (rc) return rc;
            c->cur = d;
        }
        if (c->doc.nnz == c->cap) {
            int64_t cap = c->cap ? 2 * c->cap : 1024;
            int32_t *col = realloc(c->doc.col, sizeof *col * (size_t)cap);
            if (col) c->doc.col = col;
            float *val = col ? realloc(c->doc.val, sizeof *val * (size_t)cap) : NULL;
            if (val) c->doc.val = val;
            if (!val) return datm_error_set(err, DATM_E_NOMEM, "%s: out of memory", c->lr.path);
            c->cap = cap;
        }
        c->doc.col[c->doc.nnz] = (int32_t)(w - 1);
        c->doc.val[c->doc.nnz++] = (float)n;
        c->seen++;
    }
    if (r < 0) return -r;
    if (c->seen != c->NNZ)
        return datm_error_set(err, DATM_E_FORMAT, "%s: header says NNZ = %lld, the file has %lld "
                              "entries", c->lr.path, (long long)c->NNZ, (long long)c->seen);
    return emit(c, c->D - c->cur, err);
}

int datm_shards_from_docword(const char *path, const char *out_dir, int64_t docs_per_shard,
                             int overwrite, datm_error *err)
{
    conv c;
    memset(&c, 0, sizeof c);
    int64_t rp[2] = {0, 0};
    c.doc.row_ptr = rp;
    int rc = datm_linereader_open(&c.lr, path, err);
    if (!rc) rc = header(&c, err);
    c.doc.n_cols = c.V;
    if (!rc) rc = datm_shard_writer_open(&c.w, out_dir, c.V, docs_per_shard, overwrite, err);
    int opened = !rc;
    int unordered = 0;
    if (!rc) {
        int r = stream_entries(&c, err);
        if (r == 1) unordered = 1;
        else rc = r;
    }
    datm_linereader_close(&c.lr);
    free(c.doc.col);
    free(c.doc.val);
    if (!rc && unordered) {
        datm_info("%s: entries are not ordered by document: reading the file whole", path);
        datm_shard_writer_abort(&c.w);
        datm_csr m = {0};
        rc = datm_docword_read(path, &m, err);
        if (!rc) rc = datm_shard_writer_open(&c.w, out_dir, m.n_cols, docs_per_shard, overwrite,
                                             err);
        if (!rc) rc = datm_shard_writer_add(&c.w, &m, err);
        datm_csr_free(&m);
    }
    if (!rc) return datm_shard_writer_commit(&c.w, err);
    if (opened) datm_shard_writer_abort(&c.w);
    return rc;
}
