/* engine/math/gemm_small.c: single-precision products of the small shapes of the encoder
 * (tens of rows, K and N up to a few hundred) without OpenBLAS's packing and per-call set-up.
 *
 * An AVX2+FMA register-blocked kernel: 6 rows x 16 columns of C in 12 registers, one row of B
 * (16 floats) loaded per k and each A(i, k) broadcast. Every entry of C is one FMA chain over
 * k = 0 .. K-1 in increasing order, whatever M and however the caller splits the rows, so
 * results do not depend on the thread count or on the row blocks (OpenBLAS's edge kernels
 * make them depend on both). op(B) = B^T goes to BLAS: transposing B for every call of a
 * product this small costs more than the product. */
#include "math/math.h"
#include "core/testhooks.h"


#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DATM_HAVE_SMALL_GEMM 1

/* C rows i0 .. i0+mr-1 (mr <= 6), columns j0 .. j0+16*nv-1 (nv = 1 or 2 vectors of 8): A(i, k)
 * = A[i rs + k cs]; B (K, *) row-major with row stride ldb. Rows past mr repeat the last one
 * (computed, not stored). */
__attribute__((target("avx2,fma")))
static void kernel(int64_t K, const float *A, int64_t rs, int64_t cs, const float *B, int64_t ldb,
                   float *C, int64_t ldc, int64_t i0, int mr, int64_t j0, int nv, int beta1,
                   const float *bias)
{
    const float *a[6];
    for (int r = 0; r < 6; r++) a[r] = A + (i0 + (r < mr ? r : mr - 1)) * rs;
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    const float *b = B + j0;
    if (nv == 2) {
        for (int64_t k = 0; k < K; k++, b += ldb) {
            const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            const int64_t o = k * cs;
            __m256 x;
            x = _mm256_broadcast_ss(a[0] + o); c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
            x = _mm256_broadcast_ss(a[1] + o); c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
            x = _mm256_broadcast_ss(a[2] + o); c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
            x = _mm256_broadcast_ss(a[3] + o); c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
            x = _mm256_broadcast_ss(a[4] + o); c40 = _mm256_fmadd_ps(x, b0, c40); c41 = _mm256_fmadd_ps(x, b1, c41);
            x = _mm256_broadcast_ss(a[5] + o); c50 = _mm256_fmadd_ps(x, b0, c50); c51 = _mm256_fmadd_ps(x, b1, c51);
        }
    } else {
        for (int64_t k = 0; k < K; k++, b += ldb) {
            const __m256 b0 = _mm256_loadu_ps(b);
            const int64_t o = k * cs;
            c00 = _mm256_fmadd_ps(_mm256_broadcast_ss(a[0] + o), b0, c00);
            c10 = _mm256_fmadd_ps(_mm256_broadcast_ss(a[1] + o), b0, c10);
            c20 = _mm256_fmadd_ps(_mm256_broadcast_ss(a[2] + o), b0, c20);
            c30 = _mm256_fmadd_ps(_mm256_broadcast_ss(a[3] + o), b0, c30);
            c40 = _mm256_fmadd_ps(_mm256_broadcast_ss(a[4] + o), b0, c40);
            c50 = _mm256_fmadd_ps(_mm256_broadcast_ss(a[5] + o), b0, c50);
        }
    }
    const __m256 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    for (int r = 0; r < mr; r++) {
        float *c = C + (i0 + r) * ldc + j0;
        for (int v = 0; v < nv; v++) {
            __m256 x = acc[r][v];
            if (bias) x = _mm256_add_ps(_mm256_loadu_ps(bias + j0 + 8 * v), x);
            else if (beta1) x = _mm256_add_ps(_mm256_loadu_ps(c + 8 * v), x);
            _mm256_storeu_ps(c + 8 * v, x);
        }
    }
}

__attribute__((target("avx2,fma")))
static void small_gemm(int trans_a, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *B, int64_t ldb, int beta1, const float *bias, float *C,
                       int64_t ldc)
{
    const int64_t rs = trans_a ? 1 : lda, cs = trans_a ? lda : 1;
    for (int64_t i0 = 0; i0 < M; i0 += 6) {
        const int mr = (int)(M - i0 < 6 ? M - i0 : 6);
        int64_t j0 = 0;
        for (; j0 + 16 <= N; j0 += 16)
            kernel(K, A, rs, cs, B, ldb, C, ldc, i0, mr, j0, 2, beta1, bias);
        if (j0 < N) kernel(K, A, rs, cs, B, ldb, C, ldc, i0, mr, j0, 1, beta1, bias);
    }
}

/* The same products with 512-bit vectors (CPUs with AVX-512F): 10 rows x 32 columns of C
 * in 20 registers, two 16-float rows of B per k. The rows of a block are 50 (the encoder's
 * row blocks), five tiles of 10. Every entry of C is still one FMA chain from zero over k in
 * increasing order, then the bias or C added: the bits of the AVX2 kernel above, twice the
 * multiply-adds per instruction. nv = 1 (16 columns) for a tail; an 8-column tail goes to the
 * AVX2 kernel. */
enum { MR512 = 10 };

__attribute__((target("avx512f")))
static void kernel512(int64_t K, const float *A, int64_t rs, int64_t cs, const float *B,
                      int64_t ldb, float *C, int64_t ldc, int64_t i0, int mr, int64_t j0, int nv,
                      int beta1, const float *bias)
{
    const float *a[MR512];
    for (int r = 0; r < MR512; r++) a[r] = A + (i0 + (r < mr ? r : mr - 1)) * rs;
    __m512 c[MR512][2];
#pragma GCC unroll 10
    for (int r = 0; r < MR512; r++) c[r][0] = c[r][1] = _mm512_setzero_ps();
    const float *b = B + j0;
    if (nv == 2) {
        for (int64_t k = 0; k < K; k++, b += ldb) {
            const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
            const int64_t o = k * cs;
#pragma GCC unroll 10
            for (int r = 0; r < MR512; r++) {
                const __m512 x = _mm512_set1_ps(a[r][o]);
                c[r][0] = _mm512_fmadd_ps(x, b0, c[r][0]);
                c[r][1] = _mm512_fmadd_ps(x, b1, c[r][1]);
            }
        }
    } else {
        for (int64_t k = 0; k < K; k++, b += ldb) {
            const __m512 b0 = _mm512_loadu_ps(b);
            const int64_t o = k * cs;
#pragma GCC unroll 10
            for (int r = 0; r < MR512; r++)
                c[r][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[r][o]), b0, c[r][0]);
        }
    }
    for (int r = 0; r < mr; r++) {
        float *cr = C + (i0 + r) * ldc + j0;
        for (int v = 0; v < nv; v++) {
            __m512 x = c[r][v];
            if (bias) x = _mm512_add_ps(_mm512_loadu_ps(bias + j0 + 16 * v), x);
            else if (beta1) x = _mm512_add_ps(_mm512_loadu_ps(cr + 16 * v), x);
            _mm512_storeu_ps(cr + 16 * v, x);
        }
    }
}

__attribute__((target("avx512f,avx2,fma")))
static void small_gemm512(int trans_a, int64_t M, int64_t N, int64_t K, const float *A,
                          int64_t lda, const float *B, int64_t ldb, int beta1, const float *bias,
                          float *C, int64_t ldc)
{
    const int64_t rs = trans_a ? 1 : lda, cs = trans_a ? lda : 1;
    for (int64_t i0 = 0; i0 < M; i0 += MR512) {
        const int mr = (int)(M - i0 < MR512 ? M - i0 : MR512);
        int64_t j0 = 0;
        for (; j0 + 32 <= N; j0 += 32)
            kernel512(K, A, rs, cs, B, ldb, C, ldc, i0, mr, j0, 2, beta1, bias);
        if (j0 + 16 <= N) {
            kernel512(K, A, rs, cs, B, ldb, C, ldc, i0, mr, j0, 1, beta1, bias);
            j0 += 16;
        }
        for (int q = 0; j0 < N && q < mr; q += 6)   /* 8-column tail: AVX2 tiles of 6 rows */
            kernel(K, A, rs, cs, B, ldb, C, ldc, i0 + q, mr - q < 6 ? mr - q : 6, j0, 1, beta1,
                   bias);
    }
}

static void small_gemm_any(int trans_a, int64_t M, int64_t N, int64_t K, const float *A,
                           int64_t lda, const float *B, int64_t ldb, int beta1, const float *bias,
                           float *C, int64_t ldc)
{
    if (!datm_test_hooks.sgemm_small_avx2 && __builtin_cpu_supports("avx512f"))
        small_gemm512(trans_a, M, N, K, A, lda, B, ldb, beta1, bias, C, ldc);
    else
        small_gemm(trans_a, M, N, K, A, lda, B, ldb, beta1, bias, C, ldc);
}
#endif

int datm_sgemm_small_kernel(int trans_b, int64_t N, float alpha, float beta)
{
#ifdef DATM_HAVE_SMALL_GEMM
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           !datm_test_hooks.sgemm_small_blas && !trans_b && alpha == 1.0f &&
           (beta == 0.0f || beta == 1.0f) && N % 8 == 0;
#else
    (void)trans_b, (void)N, (void)alpha, (void)beta;
    return 0;
#endif
}

void datm_sgemm_small(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                      const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                      float *C, int64_t ldc)
{
#ifdef DATM_HAVE_SMALL_GEMM
    if (datm_sgemm_small_kernel(trans_b, N, alpha, beta) && M > 0 && N > 0 && K > 0) {
        DATM_ASSERT(ldc >= N && lda >= (trans_a ? M : K) && ldb >= N);
        small_gemm_any(trans_a, M, N, K, A, lda, B, ldb, beta == 1.0f, NULL, C, ldc);
        return;
    }
#endif
    datm_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void datm_sgemm_small_bias(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc)
{
#ifdef DATM_HAVE_SMALL_GEMM
    if (datm_sgemm_small_kernel(0, N, 1.0f, 0.0f) && M > 0 && N > 0 && K > 0) {
        DATM_ASSERT(ldc >= N && lda >= K && ldb >= N);
        small_gemm_any(0, M, N, K, A, lda, B, ldb, 0, bias, C, ldc);
        return;
    }
#endif
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) C[i * ldc + j] = bias[j];
    datm_sgemm_small(0, 0, M, N, K, 1.0f, A, lda, B, ldb, 1.0f, C, ldc);
}
