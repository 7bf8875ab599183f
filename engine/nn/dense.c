/* engine/nn/dense.c: dense and sparse-input layers, softplus; f32 and f64 instances of
 * nn_dense_impl.h. The sparse products in f32 go through engine/math (OpenMP, deterministic);
 * the f64 ones are plain loops (they serve gradient checks). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "math/math.h"
#include "nn/nn.h"
#include "nn/vmath.h"

/* The f32 layers' products split the rows of C over the OpenMP team when they are called
 * outside a parallel region (the sDATM head runs in the serial part of an iteration; at 2
 * threads the second core waited for it). datm_sgemm_small's kernel makes each entry of C
 * one FMA chain over k whatever rows it is given, so the split changes no bits and the
 * results stay independent of the thread count; where it would hand the product to BLAS
 * (whose bits depend on the split) there is no split and BLAS gets one thread. Below SPLIT_MIN_MACS multiply-adds the
 * fork and join cost more than they save. */
enum { SPLIT_MIN_MACS = 1 << 20, SPLIT_MIN_ROWS = 16 };

static int split_rows(int trans_b, int64_t M, int64_t N, int64_t K, float alpha, float beta)
{
    return M >= SPLIT_MIN_ROWS && M * N * K >= SPLIT_MIN_MACS && !omp_in_parallel() &&
           omp_get_max_threads() > 1 && datm_sgemm_small_kernel(trans_b, N, alpha, beta);
}

/* A product the small kernel does not take goes to BLAS with one thread: OpenBLAS's bits
 * depend on how many threads split it (edge kernels), so a threaded call would make the
 * numbers depend on the run's thread count (a head of 15 classes, N % 8 != 0, did). With more
 * than one BLAS thread its workers also wake and then spin (sched_yield) beside the OpenMP
 * team of the next parallel loop: ~14% of the CPU samples of an MNIST sDATM-N iteration at 2
 * threads for dX = dY W^T. These products are small; one thread loses little. */
static void gemm_blas1(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                       float *C, int64_t ldc)
{
    if (omp_in_parallel()) {   /* BLAS called from a team member runs on one thread anyway */
        datm_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const int blas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    datm_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    openblas_set_num_threads(blas);
}

static void gemm_split(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                       float *C, int64_t ldc)
{
    if (!datm_sgemm_small_kernel(trans_b, N, alpha, beta) || M <= 0 || N <= 0 || K <= 0) {
        gemm_blas1(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (!split_rows(trans_b, M, N, K, alpha, beta)) {
        datm_sgemm_small(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#pragma omp parallel
    {
        const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        const int64_t i0 = M * t / nt, i1 = M * (t + 1) / nt;
        /* row i of op(A) starts at A + i (stored transposed) or A + i lda */
        if (i1 > i0)
            datm_sgemm_small(trans_a, trans_b, i1 - i0, N, K, alpha, A + i0 * (trans_a ? 1 : lda),
                             lda, B, ldb, beta, C + i0 * ldc, ldc);
    }
}

static void gemm_bias_split(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                            const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc)
{
    if (!datm_sgemm_small_kernel(0, N, 1.0f, 0.0f) || M <= 0 || N <= 0 || K <= 0) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) C[i * ldc + j] = bias[j];
        gemm_blas1(0, 0, M, N, K, 1.0f, A, lda, B, ldb, 1.0f, C, ldc);
        return;
    }
    if (!split_rows(0, M, N, K, 1.0f, 0.0f)) {
        datm_sgemm_small_bias(M, N, K, A, lda, B, ldb, bias, C, ldc);
        return;
    }
#pragma omp parallel
    {
        const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        const int64_t i0 = M * t / nt, i1 = M * (t + 1) / nt;
        if (i1 > i0)
            datm_sgemm_small_bias(i1 - i0, N, K, A + i0 * lda, lda, B, ldb, bias, C + i0 * ldc,
                                  ldc);
    }
}

#define R float
#define FN(name) name##_f32
#define GEMM gemm_split   /* no packing for small shapes; rows split over the team */
#define GEMM_BIAS gemm_bias_split
#include "nn/nn_dense_impl.h"
#undef R
#undef FN
#undef GEMM
#undef GEMM_BIAS

#define R double
#define FN(name) name##_f64
#define GEMM datm_dgemm
#include "nn/nn_dense_impl.h"
#undef R
#undef FN
#undef GEMM

/* softplus(z) = max(z, 0) + ln(1 + e^-|z|); its derivative sigmoid(z) = s / (1 + e^-|z|)
 * with s = 1 for z >= 0 and e^-|z| below. f32: vectorised (nn/vmath.h), f64: libm.
 * The f32 loops take entries i and i + n/2 together through the _x2 forms of vmath.h: one
 * entry's chain of polynomial steps is longer than the out-of-order window covers, two
 * interleaved ones keep more units busy (~15% faster); every entry gets the operations of
 * the one-entry form (tests/test_nn_softplus_x2.c checks them bit for bit). */
DATM_VEC_CLONES
void datm_softplus_f32(int64_t n, const float *z, float *y)
{
    const int64_t h = n / 2;
#pragma omp simd
    for (int64_t i = 0; i < h; i++) {
        const float v1 = z[i], v2 = z[i + h];
        const float a1 = v1 < 0 ? -v1 : v1, a2 = v2 < 0 ? -v2 : v2;
        float e1, e2, l1, l2;
        datm_vexpf_x2(-a1, -a2, &e1, &e2);
        datm_vlog1p01f_x2(e1, e2, &l1, &l2);
        y[i] = (v1 > 0 ? v1 : 0.0f) + l1;
        y[i + h] = (v2 > 0 ? v2 : 0.0f) + l2;
    }
    for (int64_t i = 2 * h; i < n; i++) {   /* n odd: the last entry */
        float v = z[i], a = v < 0 ? -v : v;
        y[i] = (v > 0 ? v : 0.0f) + datm_vlog1p01f(datm_vexpf(-a));
    }
}

DATM_VEC_CLONES
void datm_softplus_backward_f32(int64_t n, const float *z, const float *dy, float *dz)
{
    const int64_t h = n / 2;
#pragma omp simd
    for (int64_t i = 0; i < h; i++) {
        const float v1 = z[i], v2 = z[i + h];
        const float a1 = v1 < 0 ? -v1 : v1, a2 = v2 < 0 ? -v2 : v2;
        float e1, e2;
        datm_vexpf_x2(-a1, -a2, &e1, &e2);
        const float num1 = v1 >= 0 ? 1.0f : e1, num2 = v2 >= 0 ? 1.0f : e2;
        const float d1 = dy[i] * num1 / (1.0f + e1), d2 = dy[i + h] * num2 / (1.0f + e2);
        dz[i] = d1;
        dz[i + h] = d2;
    }
    for (int64_t i = 2 * h; i < n; i++) {
        float v = z[i], a = v < 0 ? -v : v;
        float e = datm_vexpf(-a);
        float num = v >= 0 ? 1.0f : e;
        dz[i] = dy[i] * num / (1.0f + e);
    }
}

void datm_softplus_f64(int64_t n, const double *z, double *y)
{
    for (int64_t i = 0; i < n; i++) {
        double v = z[i];
        y[i] = (v > 0 ? v : 0.0) + log1p(exp(-fabs(v)));
    }
}

void datm_softplus_backward_f64(int64_t n, const double *z, const double *dy, double *dz)
{
    for (int64_t i = 0; i < n; i++) {
        double v = z[i], e = exp(-fabs(v));
        dz[i] = dy[i] * (v >= 0 ? 1.0 : e) / (1.0 + e);
    }
}

/* Rows of W are gathered at random (one per nonzero): the row of the nonzero
 * DATM_SPARSE_PF ahead (across documents) is prefetched while the current one is accumulated
 * (W of the 2000-word first layer does not fit in L2; one nonzero's work is shorter than an
 * L3 miss). */
#define DATM_SPARSE_PF 3
DATM_VEC_CLONES
void datm_sparse_dense_forward_f32(const datm_csr *X, const float *xval, int64_t n_out,
                                   const float *W, const float *b, float *Y)
{
    const int64_t B = X->n_rows, pend = X->row_ptr[B];
    for (int64_t p = X->row_ptr[0]; p < X->row_ptr[0] + DATM_SPARSE_PF - 1 && p < pend; p++) {
        const char *nx = (const char *)(W + (int64_t)X->col[p] * n_out);
        for (int64_t o = 0; o < n_out * (int64_t)sizeof(float); o += 64)
            __builtin_prefetch(nx + o, 0, 3);
    }
    for (int64_t i = 0; i < B; i++) {
        float *restrict y = Y + i * n_out;
        if (b) memcpy(y, b, (size_t)n_out * sizeof(float));
        else memset(y, 0, (size_t)n_out * sizeof(float));
        const int64_t p0 = X->row_ptr[i], p1 = X->row_ptr[i + 1];
        for (int64_t p = p0; p < p1; p++) {
            const float *restrict w = W + (int64_t)X->col[p] * n_out;
            if (p + DATM_SPARSE_PF - 1 < pend) {
                const char *nx = (const char *)(W + (int64_t)X->col[p + DATM_SPARSE_PF - 1] * n_out);
                for (int64_t o = 0; o < n_out * (int64_t)sizeof(float); o += 64)
                    __builtin_prefetch(nx + o, 0, 3);
            }
            const float x = xval[p];
#pragma omp simd
            for (int64_t j = 0; j < n_out; j++) y[j] += x * w[j];
        }
    }
}

void datm_sparse_dense_backward_f32(const datm_csr *X, const float *xval, int64_t n_out,
                                    const float *dY, float *dW, float *db)
{
    datm_csr Xv = *X;
    Xv.val = (float *)xval;
    if (dW) datm_csr_tmm(&Xv, dY, n_out, dW);
    if (db) {
        for (int64_t j = 0; j < n_out; j++) db[j] = 0;
        for (int64_t i = 0; i < X->n_rows; i++)
            for (int64_t j = 0; j < n_out; j++) db[j] += dY[i * n_out + j];
    }
}

void datm_sparse_dense_forward_f64(const datm_csr *X, const double *xval, int64_t n_out,
                                   const double *W, const double *b, double *Y)
{
    for (int64_t i = 0; i < X->n_rows; i++) {
        double *y = Y + i * n_out;
        for (int64_t j = 0; j < n_out; j++) y[j] = b ? b[j] : 0.0;
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            const double *w = W + (int64_t)X->col[p] * n_out;
            for (int64_t j = 0; j < n_out; j++) y[j] += xval[p] * w[j];
        }
    }
}

void datm_sparse_dense_backward_f64(const datm_csr *X, const double *xval, int64_t n_out,
                                    const double *dY, double *dW, double *db)
{
    if (dW) {
        memset(dW, 0, (size_t)(X->n_cols * n_out) * sizeof(double));
        for (int64_t i = 0; i < X->n_rows; i++)
            for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
                double *w = dW + (int64_t)X->col[p] * n_out;
                for (int64_t j = 0; j < n_out; j++) w[j] += xval[p] * dY[i * n_out + j];
            }
    }
    if (db) {
        for (int64_t j = 0; j < n_out; j++) db[j] = 0;
        for (int64_t i = 0; i < X->n_rows; i++)
            for (int64_t j = 0; j < n_out; j++) db[j] += dY[i * n_out + j];
    }
}
