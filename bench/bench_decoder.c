/* bench/bench_decoder.c: throughput of the decoder kernels on 20news_2000 (or a synthetic
 * corpus when the data is absent): one upward-downward Gibbs sweep over the training set,
 * one upward augmentation pass from a given theta (WHAI's use), and one DLDA-TLASGR
 * mini-batch (200 documents, 20 L + 10 L local sweeps + the TLASGR step), for 1 and 2
 * threads. Prints wall and process CPU seconds (the machine may be shared: with one thread
 * the CPU time is the cost), microseconds per document-sweep and tokens per second.
 *   bench_decoder [layers, e.g. 128,64,32] [repeats]
 * Test time per document of a trained model (the paper's "test time", S draws of theta):
 *   bench_decoder --test-time RUN/result.h5 [S = 3000] [burn-in = 100] [docs = all]
 * reads /model/phi_l and /model/r of a dlda-* result, and times burn-in + S Gibbs sweeps of
 * the (first `docs`) 20news_2000 test documents' theta on their observed part with the
 * globals fixed; the cost is linear in the documents, so per-document figures carry over.
 * Never passes or fails. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "decoder/decoder.h"
#include "io/h5.h"
#include "rand/rand.h"
#include "math/math.h"

static void die(const datm_error *e)
{
    fprintf(stderr, "bench_decoder: %s\n", e->msg);
    exit(1);
}

static int parse_layers(const char *s, int64_t *K)
{
    int L = 0;
    while (*s && L < DATM_MAX_LAYERS) {
        K[++L] = strtoll(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return L;
}

static int test_time(const char *path, int S, int burn, int64_t ndocs)
{
    datm_error err;
    char dir[512];
    datm_corpus c;
    memset(&c, 0, sizeof c);
    if (datm_dataset_resolve("20news_2000", dir, sizeof dir, &err) ||
        datm_corpus_load(dir, "test_obs", &c, &err))
        die(&err);
    if (ndocs > 0 && ndocs < c.X.n_rows) {
        datm_csr sub;
        int64_t *rows = malloc((size_t)ndocs * sizeof(int64_t));
        for (int64_t i = 0; i < ndocs; i++) rows[i] = i;
        if (datm_csr_select_rows(&c.X, rows, ndocs, &sub, &err)) die(&err);
        free(rows);
        datm_csr_free(&c.X);
        c.X = sub;
    }
    datm_h5 *f = NULL, *m = NULL;
    if (datm_h5_open(path, 0, &f, &err) || datm_h5_group(f, "model", 0, &m, &err)) die(&err);
    int64_t K[DATM_MAX_LAYERS + 1] = {c.X.n_cols};
    int L = 0;
    for (int l = 1; l <= DATM_MAX_LAYERS; l++) {
        char name[16];
        int64_t d[8];
        snprintf(name, sizeof name, "phi_%d", l);
        if (datm_h5_shape(m, name, d) != 2) break;
        K[l] = d[1];
        L = l;
    }
    datm_gbn_opts o;
    datm_gbn_opts_default(&o);
    datm_gbn *g = NULL;
    if (L < 1 || datm_gbn_create(L, K, &o, 1, &g, &err)) {
        fprintf(stderr, "bench_decoder: %s: no /model/phi_1\n", path);
        return 1;
    }
    for (int l = 1; l <= L; l++) {
        char name[16];
        snprintf(name, sizeof name, "phi_%d", l);
        int64_t d[2] = {K[l - 1], K[l]};
        if (datm_h5_read_f64(m, name, g->phi[l], 2, d, &err)) die(&err);
    }
    int64_t dr[1] = {K[L]};
    if (datm_h5_read_f64(m, "r", g->r, 1, dr, &err)) die(&err);
    datm_gbn_sync_f(g);
    datm_h5_close(&m);
    datm_h5_close(&f);
    datm_gbn_chain *ch = NULL;
    if (datm_gbn_chain_create(g, c.X.n_rows, &ch, &err)) die(&err);
    datm_gbn_sweep_opts so = {.cp_after = 10, .mode = DATM_AUG_SAMPLED};
    double t0 = datm_time_now(), c0 = datm_time_cpu(), tb = 0, cb = 0;
    for (int sw = 0; sw < burn + S; sw++) {
        if (sw == burn) { tb = datm_time_now() - t0; cb = datm_time_cpu() - c0; }
        datm_gbn_key key = {.seed = 1, .purpose = DATM_STREAM_EVAL, .step = (uint64_t)sw};
        if (datm_gbn_chain_sweep(g, &c.X, ch, &key, &so, NULL, &err)) die(&err);
    }
    double dt = datm_time_now() - t0, dc = datm_time_cpu() - c0;
    double n = (double)c.X.n_rows;
    printf("%s: L = %d, %lld test documents, %d threads\n", path, L, (long long)c.X.n_rows,
           omp_get_max_threads());
    printf("burn-in %d sweeps: %.3f s wall, %.3f s cpu\n", burn, tb, cb);
    printf("S = %d sweeps: %.3f s wall (%.6f s per document), %.3f s cpu (%.6f s per document)\n",
           S, dt - tb, (dt - tb) / n, dc - cb, (dc - cb) / n);
    datm_gbn_chain_destroy(&ch);
    datm_gbn_destroy(&g);
    datm_corpus_free(&c);
    return 0;
}

int main(int argc, char **argv)
{
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    datm_mem_keep_freed();   /* freed blocks reused, not faulted in afresh (core/memtune.c) */
    datm_fp_mode fp_saved;   /* subnormals flushed, as in `datm run` (core/fpmode.c) */
    datm_fp_flush_begin(&fp_saved);
    if (argc > 2 && strcmp(argv[1], "--test-time") == 0)
        return test_time(argv[2], argc > 3 ? atoi(argv[3]) : 3000, argc > 4 ? atoi(argv[4]) : 100,
                         argc > 5 ? atoll(argv[5]) : 0);
    int64_t K[DATM_MAX_LAYERS + 1];
    int L = parse_layers(argc > 1 ? argv[1] : "128,64,32", K);
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    datm_error err;
    datm_corpus c;
    memset(&c, 0, sizeof c);
    char dir[512];
    int have = datm_dataset_resolve("20news_2000", dir, sizeof dir, &err) == DATM_OK &&
               datm_corpus_load(dir, "train", &c, &err) == DATM_OK;
    if (!have) {
        fprintf(stderr, "20news_2000 not found; benchmarking a synthetic Poisson corpus\n");
        datm_rng r;
        datm_rng_init(&r, 1, DATM_STREAM_TEST, 0);
        int64_t N = 11284, V = 2000, per = 42, nnz = N * per;
        if (datm_csr_alloc(&c.X, N, V, nnz, &err)) die(&err);
        for (int64_t n = 0; n <= N; n++) c.X.row_ptr[n] = n * per;
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < per; j++) {
                c.X.col[n * per + j] = (int32_t)(j * (V / per) + (int64_t)datm_rng_below(&r, V / per));
                c.X.val[n * per + j] = 1.0f + (float)datm_rng_poisson(&r, 0.25);
            }
    }
    K[0] = c.X.n_cols;
    const datm_csr *X = &c.X;
    const double tokens = datm_csr_total(X);
    printf("corpus: %lld docs, %.0f tokens, nnz %lld; layers", (long long)X->n_rows, tokens,
           (long long)X->nnz);
    for (int l = 1; l <= L; l++) printf(" %lld", (long long)K[l]);
    printf("\n");

    datm_gbn_opts o;
    datm_gbn_opts_default(&o);
    datm_gbn *g = NULL;
    if (datm_gbn_create(L, K, &o, 1, &g, &err)) die(&err);
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        datm_gbn_chain *ch = NULL;
        datm_gbn_stats *s = NULL;
        if (datm_gbn_chain_create(g, X->n_rows, &ch, &err) || datm_gbn_stats_create(g, &s, &err))
            die(&err);
        datm_gbn_sweep_opts so = {.cp_after = 0, .mode = DATM_AUG_SAMPLED};
        /* full Gibbs sweeps */
        double t0 = datm_time_now(), c0 = datm_time_cpu();
        for (int i = 0; i < reps; i++) {
            datm_gbn_stats_reset(s);
            datm_gbn_key key = {.seed = 1, .purpose = DATM_STREAM_DOC, .step = (uint64_t)i};
            if (datm_gbn_chain_sweep(g, X, ch, &key, &so, s, &err)) die(&err);
        }
        double dt = (datm_time_now() - t0) / reps, dc = (datm_time_cpu() - c0) / reps;
        printf("threads %d: Gibbs sweep    %8.3f s (cpu %.3f s)  %7.2f us/doc  %6.2f Mtok/s\n",
               threads, dt, dc, 1e6 * dt / (double)X->n_rows, tokens / dt / 1e6);
        /* augmentation only, from the chain's theta */
        t0 = datm_time_now();
        c0 = datm_time_cpu();
        for (int i = 0; i < reps; i++) {
            datm_gbn_stats_reset(s);
            datm_gbn_key key = {.seed = 2, .purpose = DATM_STREAM_DOC, .step = (uint64_t)i};
            if (datm_gbn_augment(g, X, (const double *const *)ch->theta, &key, DATM_AUG_SAMPLED, s,
                                 NULL, &err))
                die(&err);
        }
        dt = (datm_time_now() - t0) / reps;
        dc = (datm_time_cpu() - c0) / reps;
        printf("threads %d: augment pass   %8.3f s (cpu %.3f s)  %7.2f us/doc  %6.2f Mtok/s\n",
               threads, dt, dc, 1e6 * dt / (double)X->n_rows, tokens / dt / 1e6);
        /* one DLDA-TLASGR mini-batch of 200 documents */
        const int64_t B = 200;
        int64_t rows[200];
        for (int64_t i = 0; i < B; i++) rows[i] = (i * 7919) % X->n_rows;
        datm_csr Xb;
        if (datm_csr_select_rows(X, rows, B, &Xb, &err)) die(&err);
        datm_gbn_chain *bc = NULL;
        if (datm_gbn_chain_create(g, B, &bc, &err)) die(&err);
        datm_gbn *gc = NULL;
        if (datm_gbn_create(L, K, &o, 1, &gc, &err)) die(&err);
        int sweeps = 30 * L;
        so.cp_after = 10;
        t0 = datm_time_now();
        c0 = datm_time_cpu();
        for (int i = 0; i < reps; i++) {
            datm_gbn_chain_init(bc, B);
            datm_gbn_stats_reset(s);
            for (int sw = 0; sw < sweeps; sw++) {
                datm_gbn_key key = {.seed = 3, .purpose = DATM_STREAM_DOC,
                                    .step = (uint64_t)(i * 4096 + sw), .doc_ids = rows};
                if (datm_gbn_chain_sweep(gc, &Xb, bc, &key, &so, sw >= 20 * L ? s : NULL, &err))
                    die(&err);
            }
            if (datm_tlasgr_step(gc, s, (double)X->n_rows / (double)B, 4, NULL, &err)) die(&err);
        }
        dt = (datm_time_now() - t0) / reps;
        dc = (datm_time_cpu() - c0) / reps;
        printf("threads %d: TLASGR batch   %8.3f s (cpu %.3f s)  %7.2f us/doc-sweep (%d sweeps of "
               "%lld docs)\n", threads, dt, dc, 1e6 * dt / (double)(B * sweeps), sweeps,
               (long long)B);
        datm_csr_free(&Xb);
        datm_gbn_chain_destroy(&bc);
        datm_gbn_destroy(&gc);
        datm_gbn_chain_destroy(&ch);
        datm_gbn_stats_destroy(&s);
    }
    datm_gbn_destroy(&g);
    datm_corpus_free(&c);
    return 0;
}
