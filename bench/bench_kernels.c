/* bench/bench_kernels.c: GFLOP/s of the math kernels at the shapes WHAI uses.
 *   - datm_csr_mm  (C = X B) and datm_csr_tmm (C = X^T A) on 20news_2000 train (N 11,284,
 *     V 2,000, nnz 470,587) and on a mini-batch of 200 of its documents, K = 128, with 1 and
 *     2 OpenMP threads; the plain references for scale. FLOPs = 2 nnz K.
 *   - datm_sgemm at the encoder / decoder shapes of a batch of 200 documents, V = 2000,
 *     K = 128: H = X W (200 x 2000 x 128), dW = X^T dH (2000 x 200 x 128), rate = theta Phi^T
 *     (200 x 128 x 2000), with 1 and 2 BLAS threads. FLOPs = 2 M N K.
 * Each figure is the best of 5 timings of a loop lasting >= 0.2 s. Prints; never fails.
 * Usage: bench_kernels [DATA_DIR]   (default $DATM_DATA/20news_2000 or ../shared/data/...) */
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "math/math.h"
#include "rand/rand.h"

typedef void (*kernel_fn)(void *ctx);

/* Seconds per call: best of 5 runs of a loop of >= 0.2 s. */
static double time_call(kernel_fn f, void *ctx)
{
    f(ctx);   /* warm-up */
    int reps = 1;
    for (;;) {
        double t0 = datm_time_now();
        for (int r = 0; r < reps; r++) f(ctx);
        double dt = datm_time_now() - t0;
        if (dt >= 0.2) break;
        reps *= 2;
    }
    double best = 1e30;
    for (int k = 0; k < 5; k++) {
        double t0 = datm_time_now();
        for (int r = 0; r < reps; r++) f(ctx);
        double dt = (datm_time_now() - t0) / reps;
        if (dt < best) best = dt;
    }
    return best;
}

typedef struct { const datm_csr *X; const float *D; int64_t K; float *C; } sp_ctx;
static void run_mm(void *p) { sp_ctx *c = p; datm_csr_mm(c->X, c->D, c->K, c->C); }
static void run_tmm(void *p) { sp_ctx *c = p; datm_csr_tmm(c->X, c->D, c->K, c->C); }
static void run_mm_ref(void *p) { sp_ctx *c = p; datm_csr_mm_ref(c->X, c->D, c->K, c->C); }
static void run_tmm_ref(void *p) { sp_ctx *c = p; datm_csr_tmm_ref(c->X, c->D, c->K, c->C); }

typedef struct { int ta, tb; int64_t M, N, K; const float *A, *B; float *C; } gm_ctx;
static void run_gemm(void *p)
{
    gm_ctx *g = p;
    datm_sgemm(g->ta, g->tb, g->M, g->N, g->K, 1.0f, g->A, g->ta ? g->M : g->K, g->B,
               g->tb ? g->K : g->N, 0.0f, g->C, g->N);
}

static void bench_sparse(const char *label, const datm_csr *X, int64_t K, datm_rng *r)
{
    int64_t N = X->n_rows, V = X->n_cols;
    float *B = malloc((size_t)(V * K) * sizeof *B), *A = malloc((size_t)(N * K) * sizeof *A);
    float *C = malloc((size_t)(DATM_MAX(N, V) * K) * sizeof *C);
    datm_rng_uniform_fill_f(r, B, (size_t)(V * K));
    datm_rng_uniform_fill_f(r, A, (size_t)(N * K));
    double flops = 2.0 * (double)X->nnz * (double)K;
    sp_ctx mm = {X, B, K, C}, tmm = {X, A, K, C};
    for (int th = 1; th <= 2; th++) {
        omp_set_num_threads(th);
        printf("%-22s K=%-4lld threads=%d  csr_mm %7.3f GFLOP/s  csr_tmm %7.3f GFLOP/s\n", label,
               (long long)K, th, flops / time_call(run_mm, &mm) * 1e-9,
               flops / time_call(run_tmm, &tmm) * 1e-9);
    }
    printf("%-22s K=%-4lld reference  csr_mm %7.3f GFLOP/s  csr_tmm %7.3f GFLOP/s  (serial, double accumulation)\n",
           label, (long long)K, flops / time_call(run_mm_ref, &mm) * 1e-9,
           flops / time_call(run_tmm_ref, &tmm) * 1e-9);
    free(A); free(B); free(C);
}

int main(int argc, char **argv)
{
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    datm_mem_keep_freed();   /* freed blocks reused, not faulted in afresh (core/memtune.c) */
    char dir[1024];
    const char *env = getenv("DATM_DATA");
    if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
    else snprintf(dir, sizeof dir, "%s/20news_2000", env && *env ? env : "../shared/data");
    datm_corpus c;
    datm_error err = {0};
    double t0 = datm_time_now();
    if (datm_corpus_load(dir, "train", &c, &err)) {
        fprintf(stderr, "bench_kernels: %s\n", err.msg);
        return 1;
    }
    printf("20news_2000 train loaded in %.3f s: N %lld V %lld nnz %lld\n", datm_time_now() - t0,
           (long long)c.X.n_rows, (long long)c.X.n_cols, (long long)c.X.nnz);
    datm_rng r;
    datm_rng_init(&r, 1, DATM_STREAM_TEST, 0);
    const int64_t K = 128, B = 200;

    bench_sparse("20news_2000 train", &c.X, K, &r);
    int64_t rows[200];
    for (int64_t i = 0; i < B; i++) rows[i] = (int64_t)datm_rng_below(&r, (uint64_t)c.X.n_rows);
    datm_csr batch;
    if (datm_csr_select_rows(&c.X, rows, B, &batch, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    printf("mini-batch of %lld docs: nnz %lld\n", (long long)B, (long long)batch.nnz);
    bench_sparse("batch 200", &batch, K, &r);

    /* dense shapes of one WHAI mini-batch: B = 200 documents, V = 2000, K = 128 */
    const int64_t V = c.X.n_cols;
    struct { const char *what; int ta, tb; int64_t M, N, Kd; } shapes[] = {
        {"H = X W       (B,V)(V,K)", 0, 0, B, K, V},
        {"dW = X^T dH   (V,B)(B,K)", 1, 0, V, K, B},
        {"rate = th Phi^T (B,K)(K,V)", 0, 1, B, V, K},
        {"K x K layer   (B,K)(K,K)", 0, 0, B, K, K},
    };
    float *A = malloc((size_t)(V * V) * sizeof *A), *Bm = malloc((size_t)(V * V) * sizeof *Bm);
    float *C = malloc((size_t)(V * V) * sizeof *C);
    datm_rng_uniform_fill_f(&r, A, (size_t)(V * V));
    datm_rng_uniform_fill_f(&r, Bm, (size_t)(V * V));
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        gm_ctx g = {shapes[s].ta, shapes[s].tb, shapes[s].M, shapes[s].N, shapes[s].Kd, A, Bm, C};
        double flops = 2.0 * (double)g.M * (double)g.N * (double)g.K;
        printf("sgemm %-28s", shapes[s].what);
        for (int th = 1; th <= 2; th++) {
            openblas_set_num_threads(th);
            printf("  %d thr %7.2f GFLOP/s", th, flops / time_call(run_gemm, &g) * 1e-9);
        }
        printf("\n");
    }
    free(A); free(Bm); free(C);
    datm_csr_free(&batch);
    datm_corpus_free(&c);
    return 0;
}
