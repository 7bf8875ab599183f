/* engine/math/csr_mm.c: sparse (CSR) times dense products, OpenMP, plus plain references.
 *
 * Letters: N documents (rows of X), V words (columns of X), K the dense width.
 *   datm_csr_mm : C (N, K) = X (N, V) B (V, K)     -- e.g. the encoder's first layer
 *   datm_csr_tmm: C (V, K) = X^T (V, N) A (N, K)   -- e.g. its weight gradient
 *
 * Determinism: in both products every output element is summed by exactly one thread in a
 * fixed order (ascending column for csr_mm, ascending document for csr_tmm), so the result
 * is bit-identical for any thread count. csr_tmm gets there by transposing X (a stable
 * counting sort, O(nnz + V)) and running over words; no atomics, no per-thread partials. */
#include "math/math.h"

#include <stdlib.h>
#include <string.h>

void datm_csr_mm(const datm_csr *X, const float *B, int64_t K, float *C)
{
    DATM_ASSERT(X && K >= 0);
    DATM_ASSERT(X->n_rows == 0 || K == 0 || (B && C));
    const int64_t N = X->n_rows;
    const int64_t *rp = X->row_ptr;
    const int32_t *col = X->col;
    const float *val = X->val;
    #pragma omp parallel for schedule(dynamic, 64)
    for (int64_t n = 0; n < N; n++) {
        float *restrict c = C + n * K;
        for (int64_t k = 0; k < K; k++) c[k] = 0.0f;
        for (int64_t j = rp[n]; j < rp[n + 1]; j++) {
            const float w = val[j];
            const float *restrict b = B + (int64_t)col[j] * K;
            #pragma omp simd
            for (int64_t k = 0; k < K; k++) c[k] += w * b[k];
        }
    }
}

/* Accumulates C (V, K) from a transposed copy: tptr (V + 1), trow / tval (nnz). */
static void tmm_transposed(int64_t V, const int64_t *tptr, const int32_t *trow,
                           const float *tval, const float *A, int64_t K, float *C)
{
    #pragma omp parallel for schedule(dynamic, 16)
    for (int64_t v = 0; v < V; v++) {
        float *restrict c = C + v * K;
        for (int64_t k = 0; k < K; k++) c[k] = 0.0f;
        for (int64_t j = tptr[v]; j < tptr[v + 1]; j++) {
            const float w = tval[j];
            const float *restrict a = A + (int64_t)trow[j] * K;
            #pragma omp simd
            for (int64_t k = 0; k < K; k++) c[k] += w * a[k];
        }
    }
}

/* Same sums in the same order (document ascending per element), serial and without the
 * transposed copy: used when that copy cannot be allocated. */
static void tmm_serial(const datm_csr *X, const float *A, int64_t K, float *C)
{
    memset(C, 0, (size_t)(X->n_cols * K) * sizeof *C);
    for (int64_t n = 0; n < X->n_rows; n++) {
        const float *restrict a = A + n * K;
        for (int64_t j = X->row_ptr[n]; j < X->row_ptr[n + 1]; j++) {
            const float w = X->val[j];
            float *restrict c = C + (int64_t)X->col[j] * K;
            for (int64_t k = 0; k < K; k++) c[k] += w * a[k];
        }
    }
}

void datm_csr_tmm(const datm_csr *X, const float *A, int64_t K, float *C)
{
    DATM_ASSERT(X && K >= 0);
    DATM_ASSERT(X->n_rows <= INT32_MAX);
    const int64_t V = X->n_cols, N = X->n_rows, nnz = X->nnz;
    if (V == 0 || K == 0) return;
    DATM_ASSERT(C && (N == 0 || A));
    int64_t *tptr = malloc((size_t)(V + 1) * sizeof *tptr);
    int32_t *trow = malloc((size_t)DATM_MAX(nnz, 1) * sizeof *trow);
    float *tval = malloc((size_t)DATM_MAX(nnz, 1) * sizeof *tval);
    if (!tptr || !trow || !tval) {
        free(tptr); free(trow); free(tval);
        tmm_serial(X, A, K, C);
        return;
    }
    /* Stable counting sort by column: within a word, documents stay ascending. */
    memset(tptr, 0, (size_t)(V + 1) * sizeof *tptr);
    for (int64_t j = 0; j < nnz; j++) tptr[X->col[j] + 1]++;
    for (int64_t v = 0; v < V; v++) tptr[v + 1] += tptr[v];
    int64_t *next = malloc((size_t)V * sizeof *next);
    if (!next) {
        free(tptr); free(trow); free(tval);
        tmm_serial(X, A, K, C);
        return;
    }
    memcpy(next, tptr, (size_t)V * sizeof *next);
    for (int64_t n = 0; n < N; n++)
        for (int64_t j = X->row_ptr[n]; j < X->row_ptr[n + 1]; j++) {
            int64_t p = next[X->col[j]]++;
            trow[p] = (int32_t)n;
            tval[p] = X->val[j];
        }
    free(next);
    tmm_transposed(V, tptr, trow, tval, A, K, C);
    free(tptr); free(trow); free(tval);
}

/* ---- plain references (double accumulation, one thread) ---- */

void datm_csr_mm_ref(const datm_csr *X, const float *B, int64_t K, float *C)
{
    double *acc = malloc((size_t)DATM_MAX(K, 1) * sizeof *acc);
    DATM_ASSERT(acc);
    for (int64_t n = 0; n < X->n_rows; n++) {
        for (int64_t k = 0; k < K; k++) acc[k] = 0.0;
        for (int64_t j = X->row_ptr[n]; j < X->row_ptr[n + 1]; j++)
            for (int64_t k = 0; k < K; k++)
                acc[k] += (double)X->val[j] * (double)B[(int64_t)X->col[j] * K + k];
        for (int64_t k = 0; k < K; k++) C[n * K + k] = (float)acc[k];
    }
    free(acc);
}

void datm_csr_tmm_ref(const datm_csr *X, const float *A, int64_t K, float *C)
{
    const int64_t VK = X->n_cols * K;
    double *acc = calloc((size_t)DATM_MAX(VK, 1), sizeof *acc);
    DATM_ASSERT(acc);
    for (int64_t n = 0; n < X->n_rows; n++)
        for (int64_t j = X->row_ptr[n]; j < X->row_ptr[n + 1]; j++)
            for (int64_t k = 0; k < K; k++)
                acc[(int64_t)X->col[j] * K + k] += (double)X->val[j] * (double)A[n * K + k];
    for (int64_t i = 0; i < VK; i++) C[i] = (float)acc[i];
    free(acc);
}
