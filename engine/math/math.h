/* engine/math: special functions, numerically safe elementwise maps, dense kernels over
 * OpenBLAS (row-major, shape-checked) and sparse CSR x dense products with OpenMP.
 *
 * Layout convention of the whole engine: dense matrices are row-major. Documents are rows:
 * theta is (N, K), counts X are CSR (N, V). Phi(l) is (K_{l-1}, K_l) with columns on the
 * simplex, so the Poisson rate is theta Phi^T, shape (N, V). */
#ifndef DATM_MATH_H
#define DATM_MATH_H

#include <math.h>
#include <stdint.h>

#include "data/csr.h"

double datm_digamma(double x);   /* psi(x), x > 0 (and non-integer x < 0); rel. err < 1e-12 */
double datm_trigamma(double x);  /* psi'(x), x > 0 */
/* lgamma: use libm lgamma(); it is thread-safe for our use (signgam not read). */

/* softplus(x) = log(1 + e^x) without overflow or loss for large |x|. */
static inline double datm_softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
static inline float datm_softplusf(float x)
{
    return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
}
/* d softplus / dx = sigmoid(x), stable for both signs. */
static inline double datm_sigmoid(double x)
{
    if (x >= 0) { double e = exp(-x); return 1.0 / (1.0 + e); }
    double e = exp(x);
    return e / (1.0 + e);
}
static inline float datm_sigmoidf(float x)
{
    if (x >= 0) { float e = expf(-x); return 1.0f / (1.0f + e); }
    float e = expf(x);
    return e / (1.0f + e);
}

/* C (M,N) = alpha op(A) op(B) + beta C, row-major; op = transpose when trans != 0.
 * lda/ldb/ldc are the row strides of A, B, C as stored. Shapes are checked (DATM_ASSERT). */
void datm_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                float *C, int64_t ldc);
/* The same for the small products of the encoder (engine/math/gemm_small.c): an AVX2+FMA
 * kernel without packing when op(B) = B, alpha == 1, beta is 0 or 1 and N % 8 == 0 (else
 * datm_sgemm). There every entry of C is one FMA chain over k in order: a row's result does
 * not depend on M or on how the caller splits the rows (BLAS edge kernels make it depend on
 * both). */
void datm_sgemm_small(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                      float *C, int64_t ldc);
/* Does datm_sgemm_small (with beta 0 or 1: also datm_sgemm_small_bias) take its own kernel
 * for these arguments, rather than BLAS? Only then may a caller split the rows of C at will. */
int datm_sgemm_small_kernel(int trans_b, int64_t N, float alpha, float beta);
/* C (M, N) = bias (N, every row) + A (M, K) B (K, N): the same values as C set to the bias
 * rows and datm_sgemm_small with beta = 1, without that pass over C. */
void datm_sgemm_small_bias(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc);
void datm_dgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                double *C, int64_t ldc);

/* Call first thing in main(): chooses the settings the BLAS and OpenMP libraries read only from
 * the environment at load (engine/math/runtime_env.c) and restarts the program with argv when it
 * set one: OPENBLAS_CORETYPE when OpenBLAS fell back to its Prescott kernels on a CPU with
 * AVX2 / AVX-512 (not when set, or DATM_BLAS_KEEP_CORE=1), OMP_WAIT_POLICY=passive (not when
 * OMP_WAIT_POLICY or GOMP_SPINCOUNT is set). Returns only when nothing was done. */
void datm_runtime_env(char **argv);

/* The OpenMP wait policy in force, for the record: OMP_WAIT_POLICY's value, or what rules. */
const char *datm_omp_wait_policy(void);

/* sum_k (double)a[k] b[k], k < n, as 8 partial sums (k mod 8) combined in a fixed order: the
 * same value on every machine and thread count; vectorised (engine/math/dot.c). */
double datm_dot_f32_f64(const float *a, const float *b, int64_t n);

/* C (N, K) = X (N, V) * B (V, K): CSR times dense, OpenMP over rows. Overwrites C. */
void datm_csr_mm(const datm_csr *X, const float *B, int64_t K, float *C);
/* C (V, K) = X^T (V, N) * A (N, K): dense^T x CSR; deterministic for any thread count. */
void datm_csr_tmm(const datm_csr *X, const float *A, int64_t K, float *C);
/* Plain single-threaded references of the two products (for tests). */
void datm_csr_mm_ref(const datm_csr *X, const float *B, int64_t K, float *C);
void datm_csr_tmm_ref(const datm_csr *X, const float *A, int64_t K, float *C);

#endif
