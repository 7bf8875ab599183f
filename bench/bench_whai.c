/* bench/bench_whai.c: WHAI throughput on 20news_2000 (V = 2000), paper settings B = 200,
 * hidden = K. Prints, for 1 and 2 threads:
 *   train      documents/s of Algorithm 1 (Adam step + theta sample + augmentation + TLASGR),
 *              all timed batches together, and of the median batch (steadier on a machine
 *              shared with other work), their ratio, the batch-time distribution and what
 *              the slow batches (> 1.5 x the median) had more of than the others: minor page
 *              faults (allocation), involuntary context switches (the CPU taken by another
 *              process), voluntary ones (threads sleeping and being woken)
 *   infer      documents/s of the encoder mean (theta of every layer, one pass)
 *   dense      achieved GFLOP/s of the encoder's dense layers during that pass
 *              (2 x multiply-adds of the sparse first layer, every W1/W2/W3 and the downward
 *              Phi theta products, divided by the wall time of the whole pass)
 *   sgemm      GFLOP/s of OpenBLAS sgemm over the same dense shapes with B rows (each
 *              timed alone, summed), measured in the same run in rounds alternating with
 *              the inference pass (best of 5 each); "share" = dense / sgemm, and each
 *              round's own ratio (median, min, max) for how far the machine moved
 *              (the pass also does the sparse layer and the elementwise work, so < 1)
 *   test       seconds per test document for S posterior draws (theta of the observed part
 *              from the encoder + rate accumulation on observed and held-out entries, the
 *              `evaluate` stage), measured on a few draws and scaled to S
 * Usage: bench_whai [layers e.g. 128,64,32] [train_iters] [S]; data from $DATM_DATA.
 * Environment: BENCH_THREADS=n runs only n threads; BENCH_TRAIN_ONLY=1 stops after training
 * and the per-part timing (printed then as mean and minimum over the batches);
 * BENCH_PART_ITERS=n times the parts on n batches (default 30); BENCH_CLOCK=cpu times training
 * and the parts in process CPU time instead of wall time (at 1 thread, a figure that other
 * processes on a shared machine disturb much less; at 2 threads it counts spinning). */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "data/data.h"
#include "eval/perplexity.h"
#include "math/math.h"
#include "pipeline/config.h"
#include "pipeline/model.h"
#include "../models/whai.h"
#include "bench_machine.h"

/* Wall time, or process CPU time under BENCH_CLOCK=cpu. */
static int use_cpu_clock;
static double clk(void)
{
    if (!use_cpu_clock) return datm_time_now();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b);

/* Minor page faults and voluntary / involuntary context switches of the process so far. */
static void usage_now(double u[3])
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    u[0] = (double)ru.ru_minflt;
    u[1] = (double)ru.ru_nvcsw;
    u[2] = (double)ru.ru_nivcsw;
}

/* The batch-time distribution and what the slow batches had more of. bt (n) batch seconds,
 * ev (n, 3) the usage_now deltas of each batch. */
static void stall_report(const double *bt, const double *ev, int64_t n)
{
    if (n < 2) return;
    double *s = malloc((size_t)n * sizeof *s);
    memcpy(s, bt, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    const double med = s[n / 2];
    double slow_t = 0, all_t = 0, se[3] = {0}, fe[3] = {0};
    int64_t ns = 0;
    for (int64_t i = 0; i < n; i++) {
        all_t += bt[i];
        const int slow = bt[i] > 1.5 * med;
        for (int j = 0; j < 3; j++) (slow ? se : fe)[j] += ev[i * 3 + j];
        if (slow) { ns++; slow_t += bt[i] - med; }
    }
    const int64_t nf = n - ns;
    printf("  batch ms: p50 %.3f p90 %.3f p99 %.3f max %.3f; %lld of %lld batches > 1.5 x median, "
           "%.1f%% of the time above the median\n", 1e3 * med, 1e3 * s[n * 9 / 10],
           1e3 * s[n * 99 / 100], 1e3 * s[n - 1], (long long)ns, (long long)n,
           100 * slow_t / all_t);
    printf("  per batch (slow | others): page faults %.1f | %.1f, voluntary switches %.1f | %.1f, "
           "involuntary %.1f | %.1f\n", ns ? se[0] / ns : 0, nf ? fe[0] / nf : 0,
           ns ? se[1] / ns : 0, nf ? fe[1] / nf : 0, ns ? se[2] / ns : 0, nf ? fe[2] / nf : 0);
    free(s);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what, const datm_error *err)
{
    fprintf(stderr, "bench_whai: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

int main(int argc, char **argv)
{
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    datm_mem_keep_freed();   /* freed blocks reused, not faulted in afresh (core/memtune.c) */
    datm_fp_mode fp_saved;   /* subnormals flushed, as in `datm run` (core/fpmode.c) */
    datm_fp_flush_begin(&fp_saved);
    const char *layers = argc > 1 ? argv[1] : "128,64,32";
    const int64_t iters = argc > 2 ? atoll(argv[2]) : 300;
    const int64_t S = argc > 3 ? atoll(argv[3]) : 3000;
    datm_error err;
    datm_log_set_level(DATM_LOG_WARN);
    use_cpu_clock = getenv("BENCH_CLOCK") && strcmp(getenv("BENCH_CLOCK"), "cpu") == 0;
    const char *root = getenv("DATM_DATA") ? getenv("DATM_DATA") : "/work/shared/data";
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/20news_2000", root);
    datm_corpus train, obs, held;
    if (datm_corpus_load(dir, "train", &train, &err) ||
        datm_corpus_load(dir, "test_obs", &obs, &err) ||
        datm_corpus_load(dir, "test_heldout", &held, &err)) {
        fprintf(stderr, "bench_whai: 20news_2000 not found under %s (%s); skipped\n", root, err.msg);
        return 0;
    }
    const datm_csr *X = &train.X;
    const int64_t N = X->n_rows, B = 200;
    char lay[256];
    snprintf(lay, sizeof lay, "[%s]", layers);

    datm_config *cfg = NULL;
    if (datm_config_create(datm_whai_schema, "model", &cfg, &err)) die("config", &err);
    if (datm_config_set(cfg, "layers", lay, &err)) die("layers", &err);
    datm_run_info info;
    memset(&info, 0, sizeof info);
    info.n_train = N;
    info.n_vocab = X->n_cols;
    info.batch_size = B;
    info.epochs = 1;
    info.total_iters = iters;
    info.seed = 1;
    info.train = X;
    printf("bench_whai: 20news_2000 train %lld docs (nnz/doc %.1f), V %lld, layers %s, B %lld, "
           "hidden = K; OpenBLAS %s\n", (long long)N, (double)X->nnz / (double)N,
           (long long)X->n_cols, lay, (long long)B, openblas_get_config());
    bench_print_machine();

    /* BENCH_THREADS=n: only that thread count (for profiling) */
    const int only = getenv("BENCH_THREADS") ? atoi(getenv("BENCH_THREADS")) : 0;
    for (int threads = only ? only : 1; threads <= (only ? only : 2); threads++) {
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
        const datm_model_ops *ops = datm_registry_find("whai");
        datm_model *mm = NULL;
        info.threads = threads;
        if (ops->create(cfg, &info, &mm, &err)) die("create", &err);
        whai_model *m = (whai_model *)mm;

        /* training: iters mini-batches in a fixed random order (first 20 as warm-up) */
        datm_batch_iter it;
        if (datm_batch_iter_init(&it, N, B, 1, 1, 1, &err)) die("batches", &err);
        double t_train = 0;
        int64_t docs = 0, nt = 0;
        /* per-batch times: on a shared machine the median batch is the steadier figure */
        double *bt = datm_alloc_array((size_t)(iters > 0 ? iters : 1), sizeof(double), &err);
        double *bw = datm_alloc_array((size_t)(iters > 0 ? iters : 1), sizeof(double), &err);
        double *bev = datm_alloc_array((size_t)(iters > 0 ? iters : 1) * 3, sizeof(double), &err);
        if (!bt || !bw || !bev) die("alloc", &err);
        for (int64_t i = 1; i <= iters; i++) {
            const int64_t *rows;
            int64_t n = datm_batch_iter_next(&it, &rows);
            if (n == 0) n = datm_batch_iter_next(&it, &rows);
            datm_csr Xb;
            if (datm_csr_select_rows(X, rows, n, &Xb, &err)) die("select", &err);
            datm_batch b = {&Xb, rows, NULL};
            datm_train_ctx ctx = {i, 0, 1, (double)N / (double)B};
            datm_train_stats st;
            double u0[3], u1[3];
            usage_now(u0);
            double t0 = clk();
            if (ops->train_batch(mm, &b, &ctx, &st, &err)) die("train", &err);
            double dt = clk() - t0;
            usage_now(u1);
            if (i > 20) {
                t_train += dt;
                docs += n;
                for (int j = 0; j < 3; j++) bev[nt * 3 + j] = u1[j] - u0[j];
                bw[nt] = dt;
                bt[nt++] = dt / (double)n;
            }
            datm_csr_free(&Xb);
        }
        datm_batch_iter_free(&it);
        qsort(bt, (size_t)nt, sizeof(double), cmp_double);
        const double med_rate = nt > 0 ? 1.0 / bt[nt / 2] : 0.0;
        const double all_rate = (double)docs / t_train;
        printf("threads %d: train %.0f docs/s over all %lld timed batches, median batch %.0f: "
               "all / median %.3f\n", threads, all_rate, (long long)nt, med_rate,
               all_rate / med_rate);
        stall_report(bw, bev, nt);
        datm_free(bt);
        datm_free(bw);
        datm_free(bev);

        /* where the time of one iteration goes: the steps of Algorithm 1 timed one by one
         * (same calls as whai_iterate) on 30 (BENCH_PART_ITERS) more batches */
        double ph[6] = {0}, pmin[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
        const int64_t np = getenv("BENCH_PART_ITERS") ? atoll(getenv("BENCH_PART_ITERS")) : 30;
        {
            datm_batch_iter it2;
            datm_batch_iter_init(&it2, N, B, 2, 1, 1, &err);
            double klw[DATM_MAX_LAYERS + 1];
            for (int l = 0; l <= DATM_MAX_LAYERS; l++) klw[l] = 1;
            for (int64_t i = 0; i < np; i++) {
                const int64_t *rows;
                int64_t n = datm_batch_iter_next(&it2, &rows);
                if (n == 0) n = datm_batch_iter_next(&it2, &rows);   /* next epoch */
                datm_csr Xb;
                datm_csr_select_rows(X, rows, n, &Xb, &err);
                const float *const *pf = (const float *const *)m->ch.gbn->phi_f;
                datm_encoder_noise nz = {NULL, 1, DATM_STREAM_DOC, (uint64_t)i * 4, rows, 0};
                datm_encoder_loss el;
                double t0 = clk();
                datm_encoder_forward(m->enc, m->ch.params, DATM_ENC_TRAIN, &Xb, pf, NULL, klw, &nz, m->ws, &el, &err);
                double t1 = clk();
                datm_encoder_backward(m->enc, m->ch.params, m->ws, NULL, m->ch.grad, NULL, &err);
                double t2 = clk();
                datm_adam_step(&m->ch.adam, m->ch.params, m->ch.grad);
                double t3 = clk();
                nz.index++;
                datm_encoder_forward(m->enc, m->ch.params, DATM_ENC_SAMPLE, &Xb, pf, NULL, NULL, &nz, m->ws, NULL, &err);
                const double *thd[DATM_MAX_LAYERS + 1] = {NULL};
                for (int l = 1; l <= m->L; l++) {
                    for (int64_t j = 0; j < n * m->K[l]; j++) m->theta_d[l][j] = m->ws->theta[l][j];
                    thd[l] = m->theta_d[l];
                }
                double t4 = clk();
                datm_gbn_stats_reset(m->ch.stats);
                datm_gbn_key key = {1, DATM_STREAM_DOC, (uint64_t)i * 4 + 2, rows};
                datm_gbn_augment(m->ch.gbn, &Xb, thd, &key, DATM_AUG_SAMPLED, m->ch.stats, NULL, &err);
                double t5 = clk();
                datm_tlasgr_step(m->ch.gbn, m->ch.stats, (double)N / (double)n, 1, NULL, &err);
                double t6 = clk();
                const double dt[6] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5};
                for (int j = 0; j < 6; j++) {
                    ph[j] += dt[j];
                    pmin[j] = fmin(pmin[j], dt[j]);
                }
                datm_csr_free(&Xb);
            }
            datm_batch_iter_free(&it2);
            for (int j = 0; j < 6; j++) {
                ph[j] *= 1e3 / (double)np;
                pmin[j] *= 1e3;
            }
        }

        if (getenv("BENCH_TRAIN_ONLY")) {   /* profiling the training loop alone */
            /* on a loaded machine the minimum over the 30 batches is the steadier figure */
            printf("  one iteration, ms (mean | min of %lld): encoder forward+ELBO %.3f | %.3f, "
                   "backward %.3f | %.3f, Adam %.3f | %.3f, theta sample %.3f | %.3f, "
                   "augmentation %.3f | %.3f, TLASGR %.3f | %.3f (sum %.3f | %.3f)\n",
                   (long long)np, ph[0], pmin[0], ph[1], pmin[1], ph[2], pmin[2], ph[3], pmin[3], ph[4],
                   pmin[4], ph[5], pmin[5], ph[0] + ph[1] + ph[2] + ph[3] + ph[4] + ph[5],
                   pmin[0] + pmin[1] + pmin[2] + pmin[3] + pmin[4] + pmin[5]);
            ops->destroy(mm);
            continue;
        }
        /* inference (encoder mean for all training documents) and the sgemm reference in
         * alternating rounds, so that both see the same machine: on a shared machine another
         * process's burst otherwise lands on one of them and the share swings (0.38 to 1.14
         * in three runs, one minute apart). Best of the rounds for each; the paired share of
         * each round is printed too (median, min, max). */
        float *th[DATM_MAX_LAYERS + 1] = {NULL};
        for (int l = 1; l <= m->L; l++)
            th[l] = datm_alloc_array((size_t)(N * m->K[l]), sizeof(float), &err);
        double macs = datm_encoder_dense_macs(m->enc, (double)X->nnz / (double)N);

        /* OpenBLAS sgemm over the dense shapes of datm_encoder_dense_macs with B rows (the
         * sparse first layer as a dense (B, nnz/doc) x (nnz/doc, H_1) product) */
        int64_t shp[3 * 4 * DATM_MAX_LAYERS], nsh = 0, mx = 1;
        {
            const datm_encoder *e = m->enc;
            const int64_t nz = (int64_t)((double)X->nnz / (double)N + 0.5);
            shp[nsh++] = nz; shp[nsh++] = e->H[1];
            for (int l = 1; l <= e->L; l++) {
                if (l > 1) { shp[nsh++] = e->H[l - 1]; shp[nsh++] = e->H[l]; }
                shp[nsh++] = e->H[l]; shp[nsh++] = e->KS[l] + e->K[l];
                if (l < e->L) { shp[nsh++] = e->K[l + 1]; shp[nsh++] = e->K[l]; }
            }
            for (int64_t i = 0; i < nsh; i++) mx = shp[i] > mx ? shp[i] : mx;
        }
        float *A = datm_alloc_array((size_t)(B * mx), sizeof(float), &err);
        float *W = datm_alloc_array((size_t)(mx * mx), sizeof(float), &err);
        float *C = datm_alloc_array((size_t)(B * mx), sizeof(float), &err);
        for (int64_t i = 0; i < B * mx; i++) A[i] = 0.01f * (float)(i % 17);
        for (int64_t i = 0; i < mx * mx; i++) W[i] = 0.01f * (float)(i % 13);
        enum { ROUNDS = 5, GEMM_REPS = 300 };
        double gemm_macs = 0, t0;
        for (int64_t s2 = 0; s2 < nsh; s2 += 2) gemm_macs += (double)(B * shp[s2] * shp[s2 + 1]);
        double t_inf = 1e30, gbest[3 * 2 * DATM_MAX_LAYERS], share_r[ROUNDS];
        for (int64_t i = 0; i < nsh / 2; i++) gbest[i] = 1e30;
        for (int rnd = 0; rnd < ROUNDS; rnd++) {
            t0 = datm_time_now();
            if (datm_encoder_infer(m->enc, m->ch.params, X, (const float *const *)m->ch.gbn->phi_f,
                                   NULL, 0, 1, 0, 0, 0, th, &err))
                die("infer", &err);
            const double ti = datm_time_now() - t0;
            t_inf = fmin(t_inf, ti);
            double tg = 0;
            for (int64_t s2 = 0; s2 < nsh; s2 += 2) {
                const int64_t kk = shp[s2], nn = shp[s2 + 1];
                t0 = datm_time_now();
                for (int r = 0; r < GEMM_REPS; r++)
                    datm_sgemm(0, 0, B, nn, kk, 1, A, kk, W, nn, 0, C, nn);
                const double t1 = (datm_time_now() - t0) / GEMM_REPS;
                gbest[s2 / 2] = fmin(gbest[s2 / 2], t1);
                tg += t1;
            }
            share_r[rnd] = (2 * macs * (double)N / ti) / (2.0 * gemm_macs / tg);
        }
        double t_gemm = 0;
        for (int64_t i = 0; i < nsh / 2; i++) t_gemm += gbest[i];
        const double gemm_gflops = 2.0 * gemm_macs / t_gemm * 1e-9;
        qsort(share_r, ROUNDS, sizeof(double), cmp_double);

        /* test time: the evaluate stage's draws on test_obs, scaled to S */
        datm_rate_accum acc;
        if (datm_rate_accum_init(&acc, &obs.X, &held.X, &err)) die("accum", &err);
        void *state = NULL;
        const int64_t draws = 20;
        t0 = datm_time_now();
        if (ops->eval_begin(mm, &obs.X, 7, &state, &err)) die("eval", &err);
        for (int64_t d = 0; d < draws; d++)
            if (ops->eval_step(mm, state, d, &acc, &err)) die("eval step", &err);
        ops->eval_end(mm, state);
        double t_eval = datm_time_now() - t0;
        /* the same without the chain advance (globals fixed) */
        m->eval_chain = 0;
        t0 = datm_time_now();
        if (ops->eval_begin(mm, &obs.X, 7, &state, &err)) die("eval", &err);
        for (int64_t d = 0; d < draws; d++)
            if (ops->eval_step(mm, state, d, &acc, &err)) die("eval step", &err);
        ops->eval_end(mm, state);
        double t_fixed = datm_time_now() - t0;
        m->eval_chain = 1;
        const double nd = (double)obs.X.n_rows;

        const double dense_gflops = 2 * macs * (double)N / t_inf * 1e-9;
        printf("threads %d: infer (mean) %.0f docs/s | dense layers %.2f GFLOP/s (%.0f MAC/doc) "
               "| sgemm of the same shapes (B = %lld) %.1f GFLOP/s | share %.3f | test "
               "%.4g s/doc for S = %lld (%.4g without the chain advance)\n",
               threads, (double)N / t_inf, dense_gflops, macs, (long long)B, gemm_gflops,
               dense_gflops / gemm_gflops, t_eval / (double)draws * (double)S / nd,
               (long long)S, t_fixed / (double)draws * (double)S / nd);
        printf("  share per round (inference pass, then the sgemm shapes; %d rounds): median %.3f, "
               "min %.3f, max %.3f\n", (int)ROUNDS, share_r[ROUNDS / 2], share_r[0],
               share_r[ROUNDS - 1]);
        printf("  one iteration, ms: encoder forward+ELBO %.3f, backward %.3f, Adam %.3f, theta "
               "sample %.3f, augmentation %.3f, TLASGR %.3f (sum %.3f)\n", ph[0], ph[1], ph[2],
               ph[3], ph[4], ph[5], ph[0] + ph[1] + ph[2] + ph[3] + ph[4] + ph[5]);
        fflush(stdout);
        datm_rate_accum_free(&acc);
        datm_free(A); datm_free(W); datm_free(C);
        for (int l = 1; l <= m->L; l++) datm_free(th[l]);
        ops->destroy(mm);
    }
    datm_config_destroy(&cfg);
    datm_corpus_free(&train);
    datm_corpus_free(&obs);
    datm_corpus_free(&held);
    return 0;
}
