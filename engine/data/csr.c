/* engine/data/csr.c: allocation, row selection (mini-batches), copies and totals of the
 * document-word CSR matrix. Letters: N rows (documents), V columns (words). */
#include "data/csr.h"

#include <stdlib.h>
#include <string.h>

int datm_csr_alloc(datm_csr *m, int64_t n_rows, int64_t n_cols, int64_t nnz, datm_error *err)
{
    DATM_ASSERT(m);
    memset(m, 0, sizeof *m);
    if (n_rows < 0 || n_cols < 0 || nnz < 0)
        return datm_error_set(err, DATM_E_INVALID, "csr: negative size (%lld x %lld, nnz %lld)",
                              (long long)n_rows, (long long)n_cols, (long long)nnz);
    m->row_ptr = datm_alloc_array((size_t)n_rows + 1, sizeof *m->row_ptr, err);
    m->col = datm_alloc_array((size_t)DATM_MAX(nnz, 1), sizeof *m->col, err);
    m->val = datm_alloc_array((size_t)DATM_MAX(nnz, 1), sizeof *m->val, err);
    if (!m->row_ptr || !m->col || !m->val) {
        datm_csr_free(m);
        return err ? err->code : DATM_E_NOMEM;
    }
    m->n_rows = n_rows;
    m->n_cols = n_cols;
    m->nnz = nnz;
    return DATM_OK;
}

void datm_csr_free(datm_csr *m)
{
    if (!m) return;
    datm_free(m->row_ptr);
    datm_free(m->col);
    datm_free(m->val);
    memset(m, 0, sizeof *m);
}

int datm_csr_select_rows(const datm_csr *src, const int64_t *rows, int64_t n, datm_csr *out,
                         datm_error *err)
{
    return datm_csr_select_rows_range(src, rows, n, 0, n, out, err);
}

int datm_csr_select_rows_range(const datm_csr *src, const int64_t *rows, int64_t n, int64_t r0,
                               int64_t r1, datm_csr *out, datm_error *err)
{
    DATM_ASSERT(src && out && n >= 0 && (n == 0 || rows));
    r0 = DATM_MAX(r0, 0);
    r1 = DATM_MIN(r1, n);
    int64_t nnz = 0;
    for (int64_t i = r0; i < r1; i++) {
        DATM_ASSERT(rows[i] >= 0 && rows[i] < src->n_rows);
        nnz += src->row_ptr[rows[i] + 1] - src->row_ptr[rows[i]];
    }
    int rc = datm_csr_alloc(out, n, src->n_cols, nnz, err);
    if (rc) return rc;
    int64_t p = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i >= r0 && i < r1) {
            int64_t a = src->row_ptr[rows[i]], len = src->row_ptr[rows[i] + 1] - a;
            memcpy(out->col + p, src->col + a, (size_t)len * sizeof *out->col);
            memcpy(out->val + p, src->val + a, (size_t)len * sizeof *out->val);
            p += len;
        }
        out->row_ptr[i + 1] = p;
    }
    return DATM_OK;
}

int datm_csr_reserve_nnz(datm_csr *m, int64_t *cap, int64_t need, const char *what,
                         datm_error *err)
{
    if (need <= *cap) return DATM_OK;
    int64_t nc = DATM_MAX(need, 2 * *cap);
    int32_t *c = realloc(m->col, (size_t)nc * sizeof *c);
    if (c) m->col = c;
    float *v = c ? realloc(m->val, (size_t)nc * sizeof *v) : NULL;
    if (v) m->val = v;
    if (!c || !v) return datm_error_set(err, DATM_E_NOMEM, "%s: out of memory", what);
    *cap = nc;
    return DATM_OK;
}

int datm_csr_copy(const datm_csr *src, datm_csr *out, datm_error *err)
{
    DATM_ASSERT(src && out);
    int rc = datm_csr_alloc(out, src->n_rows, src->n_cols, src->nnz, err);
    if (rc) return rc;
    memcpy(out->row_ptr, src->row_ptr, (size_t)(src->n_rows + 1) * sizeof *out->row_ptr);
    memcpy(out->col, src->col, (size_t)src->nnz * sizeof *out->col);
    memcpy(out->val, src->val, (size_t)src->nnz * sizeof *out->val);
    return DATM_OK;
}

/* Sums in double: MNIST's 1.5e9 tokens are past float's exact range. */
double datm_csr_total(const datm_csr *m)
{
    double s = 0.0;
    for (int64_t j = 0; j < m->nnz; j++) s += m->val[j];
    return s;
}

double datm_csr_row_total(const datm_csr *m, int64_t row)
{
    DATM_ASSERT(row >= 0 && row < m->n_rows);
    double s = 0.0;
    for (int64_t j = m->row_ptr[row]; j < m->row_ptr[row + 1]; j++) s += m->val[j];
    return s;
}

datm_csr datm_csr_rows_view(const datm_csr *m, int64_t r0, int64_t r1)
{
    datm_csr v = *m;
    v.n_rows = r1 - r0;
    v.row_ptr = m->row_ptr + r0;
    v.nnz = m->row_ptr[r1] - m->row_ptr[r0];
    return v;
}
