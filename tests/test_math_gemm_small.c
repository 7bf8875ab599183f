/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_math */
/* tests/test_math_gemm_small.c: datm_sgemm_small (engine/math/gemm_small.c) against a double
 * reference, for every op(A)/op(B) combination, beta 0 and 1, shapes with M, N, K at and off
 * the kernel's 6 x 16 blocks (N % 8 == 0; other N fall back to BLAS and are checked too).
 * Tolerance: 1e-5 of sum_k |a_ik b_kj| (float rounding of K terms, K <= 300). The property the
 * encoder relies on: computing rows [0, m) and [m, M) in two calls gives the same bits as one
 * call, for every split. On a CPU with AVX-512F the 512-bit kernel gives the bits of the AVX2
 * one (shapes at and off its 10 x 32 tiles and 16- and 8-column tails). datm_sgemm_small_bias
 * gives the bits of bias rows + beta = 1. Prints GFLOP/s of the paths at (50, 128) x (128, 128). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/testhooks.h"
#include "math/math.h"
#include "rand/rand.h"
#include "test_check.h"


static void fill(float *x, int64_t n, datm_rng *r)
{
    for (int64_t i = 0; i < n; i++) x[i] = (float)(datm_rng_uniform(r) * 2.0 - 1.0);
}

static void one(int ta, int tb, int64_t M, int64_t N, int64_t K, float beta, datm_rng *r)
{
    const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 2;
    float *A = malloc(sizeof(float) * (size_t)((ta ? K : M) * lda));
    float *B = malloc(sizeof(float) * (size_t)((tb ? N : K) * ldb));
    float *C = malloc(sizeof(float) * (size_t)(M * ldc)), *C0 = malloc(sizeof(float) * (size_t)(M * ldc));
    float *C2 = malloc(sizeof(float) * (size_t)(M * ldc));
    fill(A, (ta ? K : M) * lda, r);
    fill(B, (tb ? N : K) * ldb, r);
    fill(C0, M * ldc, r);
    memcpy(C, C0, sizeof(float) * (size_t)(M * ldc));
    datm_sgemm_small(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
    double worst = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                double a = ta ? A[k * lda + i] : A[i * lda + k];
                double b = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += a * b;
                mag += fabs(a * b);
            }
            if (beta == 1.0f) { s += C0[i * ldc + j]; mag += fabs(C0[i * ldc + j]); }
            double e = fabs(C[i * ldc + j] - s) / (mag + 1e-30);
            worst = e > worst ? e : worst;
        }
    CHECK(worst < 1e-5, "ta %d tb %d M %lld N %lld K %lld beta %g: error %.3g", ta, tb,
          (long long)M, (long long)N, (long long)K, beta, worst);
    /* the 512-bit kernel (when the CPU has it) gives the AVX2 kernel's bits */
    if (N % 8 == 0 && !tb) {
        memcpy(C2, C0, sizeof(float) * (size_t)(M * ldc));
        datm_test_hooks.sgemm_small_avx2 = 1;
        datm_sgemm_small(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C2, ldc);
        datm_test_hooks.sgemm_small_avx2 = 0;
        int same = 1;
        for (int64_t i = 0; i < M; i++) same &= memcmp(C + i * ldc, C2 + i * ldc, sizeof(float) * (size_t)N) == 0;
        CHECK(same, "ta %d M %lld N %lld K %lld beta %g: AVX-512 and AVX2 kernels differ", ta,
              (long long)M, (long long)N, (long long)K, beta);
    }
    /* the same rows from two calls, every split (the kernel path: op(B) = B, N % 8 == 0) */
    for (int64_t m = 1; N % 8 == 0 && !tb && m < M; m += (M > 20 ? 7 : 1)) {   /* BLAS: no */
        memcpy(C2, C0, sizeof(float) * (size_t)(M * ldc));
        datm_sgemm_small(ta, tb, m, N, K, 1.0f, A, lda, B, ldb, beta, C2, ldc);
        datm_sgemm_small(ta, tb, M - m, N, K, 1.0f, ta ? A + m : A + m * lda, lda, B, ldb, beta,
                         C2 + m * ldc, ldc);
        int same = 1;
        for (int64_t i = 0; i < M; i++) same &= memcmp(C + i * ldc, C2 + i * ldc, sizeof(float) * (size_t)N) == 0;
        CHECK(same, "ta %d tb %d M %lld N %lld K %lld: rows split at %lld differ", ta, tb,
              (long long)M, (long long)N, (long long)K, (long long)m);
    }
    free(A); free(B); free(C); free(C0); free(C2);
}

int main(void)
{
    datm_rng r;
    datm_rng_init(&r, 1, DATM_STREAM_TEST, 42);
    const int64_t Ms[] = {1, 2, 5, 6, 7, 10, 11, 12, 13, 20, 50, 101};
    const int64_t Ns[] = {8, 16, 24, 32, 40, 48, 56, 64, 128, 1, 10};
    const int64_t Ks[] = {1, 3, 32, 128, 300};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
                for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
                    for (size_t c = 0; c < sizeof Ks / sizeof *Ks; c++)
                        for (int be = 0; be < 2; be++)
                            one(ta, tb, Ms[a], Ns[b], Ks[c], (float)be, &r);
    /* bias form: the same bits as bias rows + beta = 1 */
    for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++) {
            const int64_t M = Ms[a], N = Ns[b], K = 37;
            float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
            float *bias = malloc(sizeof(float) * (size_t)N);
            float *C1 = malloc(sizeof(float) * (size_t)(M * N)), *C2 = malloc(sizeof(float) * (size_t)(M * N));
            fill(A, M * K, &r);
            fill(B, K * N, &r);
            fill(bias, N, &r);
            datm_sgemm_small_bias(M, N, K, A, K, B, N, bias, C1, N);
            for (int64_t i = 0; i < M; i++) memcpy(C2 + i * N, bias, sizeof(float) * (size_t)N);
            datm_sgemm_small(0, 0, M, N, K, 1.0f, A, K, B, N, 1.0f, C2, N);
            CHECK(memcmp(C1, C2, sizeof(float) * (size_t)(M * N)) == 0, "bias form M %lld N %lld",
                  (long long)M, (long long)N);
            free(A); free(B); free(bias); free(C1); free(C2);
        }
    /* speed at the encoder's main shape */
    enum { M = 50, N = 128, K = 128 };
    static float A[M * K], B[K * N], C[M * N];
    fill(A, M * K, &r);
    fill(B, K * N, &r);
    for (int force = 0; force < 3; force++) {   /* default kernel, AVX2 kernel, BLAS */
        datm_test_hooks.sgemm_small_avx2 = force == 1;
        datm_test_hooks.sgemm_small_blas = force == 2;
        double best = 1e30;
        for (int rep = 0; rep < 20; rep++) {
            double t0 = datm_time_now();
            for (int it = 0; it < 100; it++) datm_sgemm_small(0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
            double dt = (datm_time_now() - t0) / 100;
            best = dt < best ? dt : best;
        }
        printf("  (%d,%d)x(%d,%d): %s %.1f GFLOP/s\n", M, K, K, N,
               force == 2 ? "BLAS        " : force ? "small, AVX2 " : "small       ",
               2.0 * M * N * K / best * 1e-9);
    }
    datm_test_hooks_reset();
    printf(fails ? "FAILED (%d)\n" : "ok\n", fails);
    return fails ? 1 : 0;
}
