/* engine/data/textfiles.c: the one-item-per-line files of a data set: `*.labels` (one class
 * id per document), `vocab.txt` (one token per word id), `classes.txt` (one name per class).
 * Strict like the docword reader: counts and ranges are checked and errors name file:line.
 * Blank lines are errors, except blank lines at the very end of a file. */
#include "data/data.h"

#include <stdlib.h>
#include <string.h>

#include "data/linereader.h"

/* Strips trailing blanks in place; returns the new length. */
static size_t rstrip(char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return n;
}

int datm_labels_read(const char *path, int64_t n_docs, int n_classes, int32_t **out,
                     datm_error *err)
{
    DATM_ASSERT(path && out && n_docs >= 0);
    *out = NULL;
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, path, err);
    if (rc) return rc;
    int32_t *lab = datm_alloc_array((size_t)DATM_MAX(n_docs, 1), sizeof *lab, err);
    if (!lab) { datm_linereader_close(&lr); return err ? err->code : DATM_E_NOMEM; }
    int64_t n = 0, blank = 0;
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, err);
        if (r < 0) { rc = -r; goto fail; }
        if (r == 0) break;
        const char *p = datm_skip_blank(line);
        if (!*p) { if (!blank) blank = lr.lineno; continue; }
        if (blank) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: empty line", path, (long long)blank);
            goto fail;
        }
        if (n >= n_docs) {
            rc = datm_error_set(err, DATM_E_FORMAT,
                                "%s:%lld: more labels than the %lld documents", path,
                                (long long)lr.lineno, (long long)n_docs);
            goto fail;
        }
        int64_t v;
        const char *end;
        char quoted[48];
        datm_quote_field(p, strlen(p), quoted);
        int ok = datm_parse_i64(p, &end, &v);
        if (ok == 0 || *datm_skip_blank(end)) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: label '%s' is not an integer",
                                path, (long long)lr.lineno, quoted);
            goto fail;
        }
        if (ok < 0 || v < 0 || v > INT32_MAX || (n_classes > 0 && v >= n_classes)) {
            if (n_classes > 0)
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: label %s out of range 0..%d",
                                    path, (long long)lr.lineno, quoted, n_classes - 1);
            else
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: label %s must be >= 0",
                                    path, (long long)lr.lineno, quoted);
            goto fail;
        }
        lab[n++] = (int32_t)v;
    }
    if (n != n_docs) {
        if (lr.lineno == 0 && n_docs > 0)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:1: empty file (expected %lld labels)",
                                path, (long long)n_docs);
        else
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: file ends after %lld labels, expected %lld (one per document)",
                                path, (long long)lr.lineno, (long long)n, (long long)n_docs);
        goto fail;
    }
    datm_linereader_close(&lr);
    *out = lab;
    return DATM_OK;
fail:
    datm_linereader_close(&lr);
    datm_free(lab);
    return rc;
}

void datm_lines_free(char **lines, int64_t n)
{
    if (!lines) return;
    for (int64_t i = 0; i < n; i++) datm_free(lines[i]);
    datm_free(lines);
}

int datm_lines_read(const char *path, int64_t expect_n, char ***out, int64_t *n_out,
                    datm_error *err)
{
    DATM_ASSERT(path && out && n_out);
    *out = NULL;
    *n_out = 0;
    datm_linereader lr;
    int rc = datm_linereader_open(&lr, path, err);
    if (rc) return rc;
    /* grown with the content: expect_n may come from a header that lies */
    int64_t cap = expect_n > 0 ? DATM_MIN(expect_n, 1024) : 1024, n = 0, blank = 0;
    char **lines = datm_alloc_array((size_t)cap, sizeof *lines, err);
    if (!lines) { datm_linereader_close(&lr); return err ? err->code : DATM_E_NOMEM; }
    for (;;) {
        char *line;
        size_t len;
        int r = datm_linereader_next(&lr, &line, &len, err);
        if (r < 0) { rc = -r; goto fail; }
        if (r == 0) break;
        len = rstrip(line, len);
        if (len == 0) { if (!blank) blank = lr.lineno; continue; }
        if (blank) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: empty line", path, (long long)blank);
            goto fail;
        }
        if (expect_n > 0 && n >= expect_n) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: more than the expected %lld lines",
                                path, (long long)lr.lineno, (long long)expect_n);
            goto fail;
        }
        if (n == cap) {
            char **nl = datm_alloc_array((size_t)cap * 2, sizeof *nl, err);
            if (!nl) { rc = err ? err->code : DATM_E_NOMEM; goto fail; }
            memcpy(nl, lines, (size_t)n * sizeof *nl);
            datm_free(lines);
            lines = nl;
            cap *= 2;
        }
        lines[n] = datm_strdup(line, err);
        if (!lines[n]) { rc = err ? err->code : DATM_E_NOMEM; goto fail; }
        n++;
    }
    if (n == 0) {
        rc = datm_error_set(err, DATM_E_FORMAT, "%s:1: empty file", path);
        goto fail;
    }
    if (expect_n > 0 && n != expect_n) {
        rc = datm_error_set(err, DATM_E_FORMAT, "%s:%lld: file ends after %lld lines, expected %lld",
                            path, (long long)lr.lineno, (long long)n, (long long)expect_n);
        goto fail;
    }
    datm_linereader_close(&lr);
    *out = lines;
    *n_out = n;
    return DATM_OK;
fail:
    datm_linereader_close(&lr);
    datm_lines_free(lines, n);
    return rc;
}
