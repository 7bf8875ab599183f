/* engine/math/gemm.c: row-major sgemm/dgemm wrappers over cblas with shape checks.
 *
 * The engine stores every dense matrix row-major; these wrappers take the shape of op(A),
 * op(B) and the row strides as stored, assert that they are consistent (a wrong stride is a
 * programmer error, not a data error), and handle the degenerate K = 0 case themselves
 * because reference BLAS rejects lda = 0. Dimensions must fit the 32-bit BLAS interface. */
#include "math/math.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

/* Checks shared by both precisions. A is stored (M, K) or, transposed, (K, M); B is (K, N)
 * or (N, K); C is (M, N). */
static void gemm_check(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                       const void *A, int64_t lda, const void *B, int64_t ldb,
                       const void *C, int64_t ldc)
{
    DATM_ASSERT(M >= 0 && N >= 0 && K >= 0);
    DATM_ASSERT(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX);
    DATM_ASSERT(lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
    DATM_ASSERT(ldc >= DATM_MAX(N, 1));
    DATM_ASSERT(M == 0 || N == 0 || C != NULL);
    if (M > 0 && N > 0 && K > 0) {
        DATM_ASSERT(A != NULL && B != NULL);
        DATM_ASSERT(lda >= (trans_a ? M : K));
        DATM_ASSERT(ldb >= (trans_b ? K : N));
    }
}

void datm_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                float *C, int64_t ldc)
{
    gemm_check(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc);
    if (M == 0 || N == 0) return;
    if (K == 0 || alpha == 0.0f) {
        /* C = beta C; beta == 0 overwrites (NaN in C must not survive). */
        for (int64_t i = 0; i < M; i++) {
            float *c = C + i * ldc;
            if (beta == 0.0f) memset(c, 0, (size_t)N * sizeof *c);
            else for (int64_t j = 0; j < N; j++) c[j] *= beta;
        }
        return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, A,
                (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

void datm_dgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                double *C, int64_t ldc)
{
    gemm_check(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc);
    if (M == 0 || N == 0) return;
    if (K == 0 || alpha == 0.0) {
        for (int64_t i = 0; i < M; i++) {
            double *c = C + i * ldc;
            if (beta == 0.0) memset(c, 0, (size_t)N * sizeof *c);
            else for (int64_t j = 0; j < N; j++) c[j] *= beta;
        }
        return;
    }
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, A,
                (int)lda, B, (int)ldb, beta, C, (int)ldc);
}
