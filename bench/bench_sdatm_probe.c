/* bench/bench_sdatm_probe.c: a diagnostic for the supervised variants (issue 7): trains a spec
 * the way `datm run` does (same batches, seeds and train ctx; one thread) and every
 * PROBE_EVERY epochs prints the error of the model's own prediction on evenly spaced TRAINING
 * and test documents (posterior means, and PROBE_S draws), and of a logistic regression
 * (3-fold CV over 4 penalties) on the model's posterior-mean theta of the same documents:
 * training vs test error separates an under-trained head from an overfitting one, and the
 * regression shows what a well-fitted classifier gets from the same features.
 * usage: bench_sdatm_probe SPEC.yaml [key=value ...]
 *        bench_sdatm_probe --eval RUN_DIR [S]   a finished run (its spec.resolved.yaml and
 *            result.h5): error at the posterior means and with S (50) draws on its early-
 *            stopping validation documents, on every 10th training document that trained, and
 *            on the test set (validation vs test separates overfitting from a train/test shift)
 *        bench_sdatm_probe --drift RUN_DIR      the head's stored input standardisation against
 *            log1p(posterior-mean theta) of the run's training documents: per feature
 *            (mean - shift) * scale and sd * scale (0 and 1 when nothing drifted)
 * env: PROBE_EVERY (5), PROBE_S (10; 0 = skip sampled prediction), PROBE_NTR / PROBE_NTE
 * (3000 documents each), PROBE_LR (1: regression at every point, n: every n-th, 0: never),
 * PROBE_FS (draws averaged into the regression's features; 0 = the mean), PROBE_ENS (0; n > 0:
 * also the test error of p(y|x) at the posterior means averaged over the last 2, 3, 5, ..., n
 * probe points, i.e. a snapshot ensemble along the training trajectory), PROBE_ON (test;
 * "val": every "test" figure is read on the model's early-stopping validation documents
 * instead, the split of model.val_fraction > 0 redrawn from the run's seed, and the test set
 * is not read: settings such as PROBE_ENS's ensemble can then be chosen without looking at
 * the test set. The run's own early stopping still restores its best checked state at the
 * last iteration, so the last probe point reads that state). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "pipeline/run_internal.h"
#include "eval/classify.h"
#include "eval/linclass.h"
#include "data/data.h"
#include "io/h5.h"
#include "math/math.h"
#include "../models/sdatm_val.h"

static double err_of(const float *P, const int32_t *y, int64_t n, int C)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int b = 0;
        for (int c = 1; c < C; c++) if (P[i * C + c] > P[i * C + b]) b = c;
        bad += b != y[i];
    }
    return (double)bad / (double)n;
}

static int g_fs = 0;
static float *feats(const datm_model *m, const datm_csr *X, int64_t *d)
{
    datm_theta th; memset(&th, 0, sizeof th);
    datm_error e = {0};
    if (m->ops->infer(m, X, 1, g_fs, &th, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
    *d = 0;
    for (int l = 0; l < th.n_layers; l++) *d += th.k[l];
    float *f = malloc(sizeof(float) * (size_t)(X->n_rows * *d));
    datm_features_concat(th.n_layers, th.k, (const float *const *)th.theta, X->n_rows, 1, f);
    datm_theta_free(&th);
    return f;
}

/* A finished run's model, created on its training set (the split of model.val_fraction is
 * redrawn from the same seed) and loaded from result.h5; *g is its /model group (open). */
static datm_model *load_run(const char *dir, datm_spec *s, datm_run_data *d, datm_h5 **f,
                            datm_h5 **g)
{
    char path[1200];
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_error err = {0};
    datm_model *m = NULL;
    memset(d, 0, sizeof *d);
    snprintf(path, sizeof path, "%s/spec.resolved.yaml", dir);
    int rc = datm_spec_load(path, NULL, 0, &cat, s, &err);
    if (!rc) rc = datm_run_data_load(s, d, &err);
    if (!rc) {
        const datm_config *tc = datm_spec_section(s, DATM_SEC_TRAIN);
        const int64_t N = d->train_X.n_rows, B = datm_config_int(tc, "batch_size");
        const int64_t E = datm_config_int(tc, "epochs");
        datm_run_info info = {.n_train = N, .n_vocab = d->train_X.n_cols,
            .n_classes = d->train.n_classes, .batch_size = B, .epochs = E,
            .total_iters = (N + B - 1) / B * E,
            .seed = (uint64_t)datm_config_int(datm_spec_section(s, DATM_SEC_RUN), "seed"),
            .threads = 1, .train = &d->train_X, .train_labels = d->train_labels,
            .vocab = d->train.vocab};
        rc = s->ops->create(datm_spec_section(s, DATM_SEC_MODEL), &info, &m, &err);
    }
    snprintf(path, sizeof path, "%s/result.h5", dir);
    if (!rc) rc = datm_h5_open(path, 0, f, &err);
    if (!rc) rc = datm_h5_group(*f, "model", 0, g, &err);
    if (!rc) rc = m->ops->load(m, *g, &err);
    if (rc) { fprintf(stderr, "%s: %s\n", dir, err.msg); exit(1); }
    return m;
}

static double pred_err(const datm_model *m, const datm_csr *X, const int32_t *y, int C, int S)
{
    datm_error e = {0};
    float *P = malloc(sizeof(float) * (size_t)(X->n_rows * C));
    if (m->ops->predict(m, X, 5, S, P, &e)) { fprintf(stderr, "%s\n", e.msg); exit(1); }
    double r = err_of(P, y, X->n_rows, C);
    free(P);
    return r;
}

static int eval_run(const char *dir, int S)
{
    datm_spec s; datm_run_data d; datm_h5 *f = NULL, *g = NULL, *gv = NULL;
    datm_model *m = load_run(dir, &s, &d, &f, &g);
    datm_error err = {0};
    const int C = d.train.n_classes;
    const int64_t N = d.train_X.n_rows;
    if (datm_h5_exists(g, "early_stopping") && !datm_h5_group(g, "early_stopping", 0, &gv, &err)) {
        int64_t nv = 0, nt = 0;
        datm_h5_shape(gv, "val_docs", &nv);
        int64_t *rows = malloc(8 * (size_t)nv), *tr = malloc(8 * (size_t)N);
        int32_t *y = malloc(4 * (size_t)nv), *yt = malloc(4 * (size_t)N);
        uint8_t *isv = calloc((size_t)N, 1);
        datm_h5_read_i64(gv, "val_docs", rows, 1, &nv, &err);
        for (int64_t i = 0; i < nv; i++) { y[i] = d.train_labels[rows[i]]; isv[rows[i]] = 1; }
        for (int64_t i = 0; i < N; i += 10)
            if (!isv[i]) { tr[nt] = i; yt[nt++] = d.train_labels[i]; }
        datm_csr Xv = {0}, Xt = {0};
        datm_csr_select_rows(&d.train_X, rows, nv, &Xv, &err);
        datm_csr_select_rows(&d.train_X, tr, nt, &Xt, &err);
        printf("validation (%lld docs): means %.4f, %d draws %.4f\n", (long long)nv,
               pred_err(m, &Xv, y, C, 0), S, pred_err(m, &Xv, y, C, S));
        printf("trained docs (%lld, every 10th row): means %.4f\n", (long long)nt,
               pred_err(m, &Xt, yt, C, 0));
    } else {
        /* no validation split: every training document trained */
        int64_t nt = 0, *tr = malloc(8 * (size_t)N);
        int32_t *yt = malloc(4 * (size_t)N);
        for (int64_t i = 0; i < N; i += 10) { tr[nt] = i; yt[nt++] = d.train_labels[i]; }
        datm_csr Xt = {0};
        datm_csr_select_rows(&d.train_X, tr, nt, &Xt, &err);
        printf("trained docs (%lld, every 10th row): means %.4f\n", (long long)nt,
               pred_err(m, &Xt, yt, C, 0));
        datm_csr_free(&Xt);
        free(tr);
        free(yt);
    }
    printf("test (%lld docs): means %.4f, %d draws %.4f\n", (long long)d.test.X.n_rows,
           pred_err(m, &d.test.X, d.test.labels, C, 0), S, pred_err(m, &d.test.X, d.test.labels, C, S));
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int drift_run(const char *dir)
{
    datm_spec s; datm_run_data d; datm_h5 *f = NULL, *g = NULL, *gh = NULL;
    datm_model *m = load_run(dir, &s, &d, &f, &g);
    datm_error err = {0};
    int64_t dims[2] = {0, 0};
    if (datm_h5_group(g, "head", 0, &gh, &err) || datm_h5_shape(gh, "head.norm_shift", dims) != 2) {
        fprintf(stderr, "%s: no head.norm_shift\n", dir);
        return 1;
    }
    const int64_t S = dims[1];
    float *sh = malloc(4 * (size_t)S), *sc = malloc(4 * (size_t)S);
    datm_h5_read_f32(gh, "head.norm_shift", sh, 2, dims, &err);
    datm_h5_read_f32(gh, "head.norm_scale", sc, 2, dims, &err);
    datm_theta th; memset(&th, 0, sizeof th);
    if (m->ops->infer(m, &d.train_X, 1, 0, &th, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    double *zm = malloc(8 * (size_t)S), *zs = malloc(8 * (size_t)S);
    int64_t j = 0;
    for (int l = 0; l < th.n_layers; l++)
        for (int64_t k = 0; k < th.k[l] && j < S; k++, j++) {
            double s1 = 0, s2 = 0;
            for (int64_t n = 0; n < th.n_docs; n++) {
                const double x = log1p((double)th.theta[l][n * th.k[l] + k]);
                s1 += x; s2 += x * x;
            }
            const double mu = s1 / (double)th.n_docs, sd = sqrt(fmax(s2 / (double)th.n_docs - mu * mu, 0));
            zm[j] = fabs((mu - sh[j]) * sc[j]);
            zs[j] = sd * sc[j];
        }
    qsort(zm, (size_t)j, 8, cmp_dbl);
    qsort(zs, (size_t)j, 8, cmp_dbl);
    printf("%s: %lld features; |standardised mean| median %.3g p90 %.3g max %.3g; standardised "
           "sd median %.3g p10 %.3g p90 %.3g\n", dir, (long long)j, zm[j / 2], zm[j * 9 / 10],
           zm[j - 1], zs[j / 2], zs[j / 10], zs[j * 9 / 10]);
    return 0;
}

int main(int argc, char **argv)
{
    datm_runtime_env(argv);   /* BLAS kernels, OpenMP wait policy (may restart) */
    datm_mem_keep_freed();   /* freed blocks reused, not faulted in afresh (core/memtune.c) */
    datm_fp_mode fp_saved;   /* subnormals flushed, as in `datm run` (core/fpmode.c) */
    datm_fp_flush_begin(&fp_saved);
    omp_set_num_threads(1);
    if (argc >= 3 && !strcmp(argv[1], "--eval")) {
        datm_log_set_level(DATM_LOG_WARN);
        return eval_run(argv[2], argc > 3 ? atoi(argv[3]) : 50);
    }
    if (argc >= 3 && !strcmp(argv[1], "--drift")) {
        datm_log_set_level(DATM_LOG_WARN);
        return drift_run(argv[2]);
    }
    g_fs = getenv("PROBE_FS") ? atoi(getenv("PROBE_FS")) : 0;
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_spec s; datm_error err = {0};
    int every = getenv("PROBE_EVERY") ? atoi(getenv("PROBE_EVERY")) : 5;
    int S = getenv("PROBE_S") ? atoi(getenv("PROBE_S")) : 10;
    int do_lr = getenv("PROBE_LR") ? atoi(getenv("PROBE_LR")) : 1;
    int64_t ntr_eval = getenv("PROBE_NTR") ? atoll(getenv("PROBE_NTR")) : 3000;
    int64_t nte_eval = getenv("PROBE_NTE") ? atoll(getenv("PROBE_NTE")) : 3000;
    if (datm_spec_load(argv[1], (const char *const *)argv + 2, argc - 2, &cat, &s, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    datm_run_data d; memset(&d, 0, sizeof d);
    if (datm_run_data_load(&s, &d, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    const datm_config *tc = datm_spec_section(&s, DATM_SEC_TRAIN);
    const int64_t N = d.train_X.n_rows, B = datm_config_int(tc, "batch_size");
    const int64_t bpe = (N + B - 1) / B, E = datm_config_int(tc, "epochs");
    uint64_t seed = (uint64_t)datm_config_int(datm_spec_section(&s, DATM_SEC_RUN), "seed");
    datm_run_info info = {.n_train = N, .n_vocab = d.train_X.n_cols, .n_classes = d.train.n_classes,
        .batch_size = B, .epochs = E, .total_iters = bpe * E, .seed = seed, .threads = 1,
        .train = &d.train_X, .train_labels = d.train_labels, .vocab = d.train.vocab};
    datm_model *m = NULL;
    if (s.ops->create(datm_spec_section(&s, DATM_SEC_MODEL), &info, &m, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    const int C = d.train.n_classes;
    /* evaluation subsets: evenly spaced rows */
    int64_t ntr = ntr_eval < N ? ntr_eval : N, nte = nte_eval < d.test.X.n_rows ? nte_eval : d.test.X.n_rows;
    const int64_t nte_cap = nte_eval < N ? nte_eval : N;   /* room for validation rows too */
    int64_t *rtr = malloc(sizeof(int64_t) * ntr), *rte = malloc(sizeof(int64_t) * (nte > nte_cap ? nte : nte_cap));
    int32_t *ytr = malloc(4 * ntr), *yte = malloc(4 * (nte > nte_cap ? nte : nte_cap));
    for (int64_t i = 0; i < ntr; i++) { rtr[i] = i * N / ntr; ytr[i] = d.train_labels[rtr[i]]; }
    const char *on = getenv("PROBE_ON");
    const int on_val = on && !strcmp(on, "val");
    const char *tname = on_val ? "val" : "test";
    sdatm_val v;
    memset(&v, 0, sizeof v);
    if (on_val) {
        const double frac = datm_config_real(datm_spec_section(&s, DATM_SEC_MODEL), "val_fraction");
        if (!(frac > 0)) { fprintf(stderr, "PROBE_ON=val needs model.val_fraction > 0\n"); return 1; }
        /* the split the model drew in create (same labels, fraction and seed) */
        if (sdatm_val_split(&v, d.train_labels, N, C, frac, 0, seed, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
        nte = nte_eval < v.n ? nte_eval : v.n;
        /* "train" figures: documents that train (not the validation ones) */
        const int64_t nf = N - v.n;
        ntr = ntr_eval < nf ? ntr_eval : nf;
        for (int64_t i = 0; i < ntr; i++) { rtr[i] = v.fit_rows[i * nf / ntr]; ytr[i] = d.train_labels[rtr[i]]; }
        for (int64_t i = 0; i < nte; i++) { rte[i] = v.rows[i * v.n / nte]; yte[i] = d.train_labels[rte[i]]; }
        printf("PROBE_ON=val: \"test\" figures are on %lld of the %lld validation documents; the test set is not read\n",
               (long long)nte, (long long)v.n);
    } else {
        for (int64_t i = 0; i < nte; i++) { rte[i] = i * d.test.X.n_rows / nte; yte[i] = d.test.labels[rte[i]]; }
    }
    datm_csr Xtr = {0}, Xte = {0};
    datm_csr_select_rows(&d.train_X, rtr, ntr, &Xtr, &err);
    datm_csr_select_rows(on_val ? &d.train_X : &d.test.X, rte, nte, &Xte, &err);
    float *P = malloc(sizeof(float) * (size_t)((ntr > nte ? ntr : nte) * C));
    const int ens = getenv("PROBE_ENS") ? atoi(getenv("PROBE_ENS")) : 0;
    float **ring = ens > 0 ? calloc((size_t)ens, sizeof(float *)) : NULL;
    float *Pavg = ens > 0 ? malloc(sizeof(float) * (size_t)(nte * C)) : NULL;
    int n_probe = 0;
    datm_batch_iter it;
    datm_batch_iter_init(&it, N, B, seed, datm_config_bool(tc, "shuffle"), datm_config_bool(tc, "drop_last"), &err);
    int32_t *lab = malloc(4 * B);
    double t0 = datm_time_now(), loss = 0; int64_t nl = 0;
    for (int64_t iter = 1; iter <= bpe * E; iter++) {
        const int64_t *rows; int64_t n = datm_batch_iter_next(&it, &rows);
        if (n == 0) n = datm_batch_iter_next(&it, &rows);
        const int64_t ep = (iter - 1) / bpe;
        datm_csr X = {0};
        datm_csr_select_rows(&d.train_X, rows, n, &X, &err);
        for (int64_t i = 0; i < n; i++) lab[i] = d.train_labels[rows[i]];
        datm_batch b = {&X, rows, lab};
        datm_train_ctx ctx = {iter, ep, seed, (double)N / (double)B};
        datm_train_stats st; memset(&st, 0, sizeof st);
        if (m->ops->train_batch(m, &b, &ctx, &st, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
        loss += st.loss; nl++;
        datm_csr_free(&X);
        if (iter % bpe == 0 && ((ep + 1) % every == 0 || ep + 1 == E)) {
            double r[4] = {NAN, NAN, NAN, NAN};
            if (m->ops->predict) {
                m->ops->predict(m, &Xtr, 5, 0, P, &err); r[0] = err_of(P, ytr, ntr, C);
                m->ops->predict(m, &Xte, 5, 0, P, &err); r[1] = err_of(P, yte, nte, C);
                if (ens > 0) {
                    float **slot = &ring[n_probe % ens];
                    if (!*slot) *slot = malloc(sizeof(float) * (size_t)(nte * C));
                    memcpy(*slot, P, sizeof(float) * (size_t)(nte * C));
                    n_probe++;
                    printf("ensemble %s error (last k probe points):", tname);
                    for (int k = 2; k <= ens && k <= n_probe; k = k < 3 ? k + 1 : k + 2) {
                        memset(Pavg, 0, sizeof(float) * (size_t)(nte * C));
                        for (int j = 0; j < k; j++) {
                            const float *q = ring[(n_probe - 1 - j) % ens];
                            for (int64_t i = 0; i < nte * C; i++) Pavg[i] += q[i];
                        }
                        printf(" k=%d %.4f", k, err_of(Pavg, yte, nte, C));
                    }
                    printf("\n");
                }
                if (S > 0) {
                    m->ops->predict(m, &Xtr, 5, S, P, &err); r[2] = err_of(P, ytr, ntr, C);
                    m->ops->predict(m, &Xte, 5, S, P, &err); r[3] = err_of(P, yte, nte, C);
                }
            }
            double lr_tr = NAN, lr_te = NAN;
            if (do_lr && ((ep + 1) % (every * do_lr) == 0 || ep + 1 == E)) {
                int64_t dd;
                float *ftr = feats(m, &Xtr, &dd), *fte = feats(m, &Xte, &dd);
                datm_linclass_params p; datm_linclass_params_default(&p);
                p.n_folds = 3;
                datm_linclass lr;
                if (!datm_linclass_fit(ftr, ntr, dd, ytr, C, &p, &lr, &err)) {
                    int32_t *pr = malloc(4 * (ntr > nte ? ntr : nte));
                    datm_linclass_predict(&lr, ftr, ntr, pr);
                    lr_tr = datm_error_rate(ytr, pr, ntr);
                    datm_linclass_predict(&lr, fte, nte, pr);
                    lr_te = datm_error_rate(yte, pr, nte);
                    free(pr); datm_linclass_free(&lr);
                }
                free(ftr); free(fte);
            }
            printf("epoch %3lld loss %10.4f | head mean: train %.4f %s %.4f | head S=%d: train %.4f %s %.4f | LR(mean theta, %lld docs): train %.4f %s %.4f | %.0fs\n",
                   (long long)ep + 1, loss / nl, r[0], tname, r[1], S, r[2], tname, r[3], (long long)ntr, lr_tr, tname, lr_te, datm_time_now() - t0);
            fflush(stdout);
            loss = 0; nl = 0;
        }
    }
    sdatm_val_free(&v);
    return 0;
}
