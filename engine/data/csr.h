/* engine/data/csr.h: compressed sparse rows of document-word counts.
 * Rows are documents (N), columns are words (V). Within a row, col ids are strictly
 * increasing and 0-based; values are counts > 0 stored as float. */
#ifndef DATM_CSR_H
#define DATM_CSR_H

#include <stdint.h>

#include "datm_model.h"
#include "core/core.h"

/* datm_csr (n_rows, n_cols, nnz, row_ptr, col, val) is part of the plugin ABI:
 * include/datm_model.h defines it. */

int  datm_csr_alloc(datm_csr *m, int64_t n_rows, int64_t n_cols, int64_t nnz, datm_error *err);
void datm_csr_free(datm_csr *m);          /* frees arrays, zeroes the struct */
/* out = the rows src[rows[i]] in the given order (a mini-batch). */
int  datm_csr_select_rows(const datm_csr *src, const int64_t *rows, int64_t n, datm_csr *out,
                          datm_error *err);
/* The same n rows with only those at positions [r0, r1) filled, the others empty (a
 * data-parallel rank's share of a mini-batch, par/par.h). */
int  datm_csr_select_rows_range(const datm_csr *src, const int64_t *rows, int64_t n, int64_t r0,
                                int64_t r1, datm_csr *out, datm_error *err);
/* Rows [r0, r1) of m as a CSR of their own that shares m's arrays (nothing copied; valid
 * while m is). */
datm_csr datm_csr_rows_view(const datm_csr *m, int64_t r0, int64_t r1);
int  datm_csr_copy(const datm_csr *src, datm_csr *out, datm_error *err);
/* Room for `need` entries in m->col and m->val, whose capacity is *cap (entries): grown to
 * max(need, 2 *cap) by realloc, the contents kept. `what` names the buffer in the error. */
int  datm_csr_reserve_nnz(datm_csr *m, int64_t *cap, int64_t need, const char *what,
                          datm_error *err);
double datm_csr_total(const datm_csr *m);              /* sum of all values */
double datm_csr_row_total(const datm_csr *m, int64_t row);

#endif
