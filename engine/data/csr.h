/* engine/data/csr.h: compressed sparse rows of document-word counts.
 * Rows are documents (N), columns are words (V). Within a row, col ids are strictly
 * increasing and 0-based; values are counts > 0 stored as float. */
#ifndef DATM_CSR_H
#define DATM_CSR_H

#include <stdint.h>

#include "core/core.h"

typedef struct datm_csr {
    int64_t  n_rows;    /* N documents */
    int64_t  n_cols;    /* V words */
    int64_t  nnz;
    int64_t *row_ptr;   /* (N + 1) */
    int32_t *col;       /* (nnz) */
    float   *val;       /* (nnz) */
} datm_csr;

int  datm_csr_alloc(datm_csr *m, int64_t n_rows, int64_t n_cols, int64_t nnz, datm_error *err);
void datm_csr_free(datm_csr *m);          /* frees arrays, zeroes the struct */
/* out = the rows src[rows[i]] in the given order (a mini-batch). */
int  datm_csr_select_rows(const datm_csr *src, const int64_t *rows, int64_t n, datm_csr *out,
                          datm_error *err);
int  datm_csr_copy(const datm_csr *src, datm_csr *out, datm_error *err);
double datm_csr_total(const datm_csr *m);              /* sum of all values */
double datm_csr_row_total(const datm_csr *m, int64_t row);

#endif
