/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_core */
/* tests/test_core_fpmode.c: datm_fp_flush_begin / _end (engine/core/fpmode.c). In the mode,
 * every thread of an OpenMP team (also threads started after it was set) and OpenBLAS's
 * workers give 0 for a product below float's normal range; after _end the calling thread, the
 * team of omp_get_max_threads() threads and the BLAS workers give the subnormal again. */
#include <cblas.h>
#include <float.h>
#include <omp.h>
#include <stdio.h>

#include "core/core.h"
#include "test_check.h"

/* x * x with x = 1e-20f is 1e-40, a subnormal float; volatile so it is computed at run time */
static float tiny_square(void)
{
    volatile float x = 1e-20f;
    return x * x;
}

/* per thread of a team of n: does the product flush, is the mode on */
static void team(int n, int out_zero[], int out_mode[])
{
#pragma omp parallel num_threads(n)
    {
        const int t = omp_get_thread_num();
        out_zero[t] = tiny_square() == 0.0f;
        out_mode[t] = datm_fp_flushing();
    }
}

/* a BLAS product of subnormal-producing entries, on 2 BLAS threads: how many outputs are
 * nonzero */
static long blas_nonzero(void)
{
    enum { N = 256, K = 32 };
    static float A[N * K], B[K * N], C[N * N];
    for (int i = 0; i < N * K; i++) A[i] = B[i] = 1e-20f;
    openblas_set_num_threads(2);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
    long nz = 0;
    for (int i = 0; i < N * N; i++) nz += C[i] != 0.0f;
    return nz;
}

int main(void)
{
    int zero[8], mode[8];
    omp_set_num_threads(2);
    CHECK(!datm_fp_flushing(), "mode off");
    CHECK(tiny_square() > 0.0f && tiny_square() < FLT_MIN, "subnormal by default");
    CHECK(blas_nonzero() == 256L * 256L, "BLAS keeps subnormals");

    datm_fp_mode saved;
    datm_fp_flush_begin(&saved);
#if defined(__x86_64__) || defined(__aarch64__)
    CHECK(datm_fp_flushing(), "mode on");
    CHECK(tiny_square() == 0.0f, "flushed");
    team(2, zero, mode);
    for (int t = 0; t < 2; t++) CHECK(zero[t] && mode[t], "thread %d flushes", t);
    team(4, zero, mode);   /* a larger team: threads started now copy the mode */
    for (int t = 0; t < 4; t++) CHECK(zero[t] && mode[t], "thread %d flushes", t);
    CHECK(blas_nonzero() == 0, "BLAS workers flush");
#endif
    datm_fp_flush_end(&saved);
    CHECK(!datm_fp_flushing(), "mode off");
    CHECK(tiny_square() > 0.0f, "subnormal again");
    team(2, zero, mode);   /* the team of omp_get_max_threads() threads */
    for (int t = 0; t < 2; t++) CHECK(!zero[t] && !mode[t], "thread %d restored", t);
    CHECK(blas_nonzero() == 256L * 256L, "BLAS keeps subnormals");
    if (!fails) printf("core_fpmode: all checks passed\n");
    return fails ? 1 : 0;
}
