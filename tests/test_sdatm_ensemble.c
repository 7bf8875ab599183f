/* ctest-labels: e2e  ctest-timeout: 600 */
/* tests/test_sdatm_ensemble.c: sDATM's trajectory ensemble (model.predict_snapshots;
 * models/sdatm_ens.c, models/sdatm.c). Checks:
 *  1. spec validation: predict_snapshots out of range is rejected naming the key; with
 *     val_fraction > 0 and val_patience > 0 it is rejected at create, naming
 *     model.val_patience;
 *  2. on the real digits set (skipped when absent), sdatm-l and sdatm-n:
 *     - predict_snapshots 1 predicts exactly as 0 (the one held state is the final one);
 *     - with predict_snapshots 3 and E epochs, p(y | x) on the test set is the mean of the
 *       predictions of three runs without snapshots trained for E - 2, E - 1 and E epochs
 *       (what the ensemble claims to average; the snapshots do not change training);
 *     - predict_snapshots 2 with snapshot_every 2: the mean of the runs of E - 2 and E epochs;
 *     - save -> load into a fresh model keeps the predictions, and the saved epochs are
 *       E - 2, E - 1, E;
 *     - resume: saved after epoch E - 1 (two states held) and continued in a fresh model, the
 *       run predicts exactly as the uninterrupted one;
 *  3. with val_fraction 0.2 too (sdatm-n, digits): the validation checks only score, so
 *     - the ensemble's p(y | x) on the test set is the mean of three runs with the same split
 *       and no snapshots trained for E - 2, E - 1 and E epochs, checked only at their last
 *       iteration (one check: its state is the best, nothing is put back);
 *     - a check every supervised epoch is recorded, monitor_only is 1, and the last check's
 *       validation error is exactly that of the final ensemble's own prediction on the saved
 *       validation rows.
 * DATM_TEST_QUICK=1: every other training document (sdatm_testrun_quick; the checks are
 * identities, which hold at any size). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "io/h5.h"
#include "pipeline/pipeline.h"
#include "sdatm_testrun.h"
#include "test_check.h"


static const char *SPEC =
    "name: t\nseed: 4\ndata:\n  dataset: digits\nmodel:\n  variant: %s\n  layers: [32, 16]\n"
    "  unsup_epochs: 3\n  kl_warmup_epochs: 2\n  k_min: 1\n  label_weight: 10\n"
    "  predict_snapshots: %d\n  snapshot_every: %d\n  val_fraction: %g\n"
    "train:\n  epochs: %d\n  batch_size: 50\n";

enum { E = 8, B = 50 };

typedef sdatm_testrun run;

static int make_every(run *r, const char *variant, int snaps, int every, double frac,
                      int epochs, const datm_corpus *tr, datm_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, snaps, every, frac, epochs);
    return sdatm_testrun_make(r, text, tr, B, epochs, 4, err);
}

static int make(run *r, const char *variant, int snaps, double frac, int epochs,
                const datm_corpus *tr, datm_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, snaps, 1, frac, epochs);
    return sdatm_testrun_make(r, text, tr, B, epochs, 4, err);
}

static int spec_rejects(const char *ov, const char *key)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, "sdatm-n", 0, 1, 0.0, E);
    return sdatm_testrun_spec_rejects(text, ov, key);
}

/* Trains a model of `epochs` epochs with `snaps` snapshots; p(y | x) at the posterior means
 * on te into P (n, C). Non-zero on failure. */
static int run_predict(const char *variant, int snaps, int every, int epochs,
                       const datm_corpus *tr, const datm_corpus *te, float *P)
{
    datm_error err = {0};
    run r;
    int rc = make_every(&r, variant, snaps, every, 0, epochs, tr, &err);
    if (rc) fprintf(stderr, "create: %s\n", err.msg);
    if (!rc) rc = sdatm_testrun_train(&r, tr, 4, epochs);
    if (!rc) rc = isnan(sdatm_testrun_error(&r, &te->X, te->labels, te->n_classes, 5, 0, P));
    sdatm_testrun_drop(&r);
    return rc;
}

static float max_abs_diff(const float *a, const float *b, int64_t n)
{
    float d = 0;
    for (int64_t i = 0; i < n; i++) d = fmaxf(d, fabsf(a[i] - b[i]));
    return d;
}

static void test_digits(const char *variant, const datm_corpus *tr, const datm_corpus *te)
{
    const int64_t n = te->X.n_rows * te->n_classes;
    float *P[E + 1] = {NULL}, *ens = malloc(sizeof(float) * (size_t)n),
          *one = malloc(sizeof(float) * (size_t)n), *mean = malloc(sizeof(float) * (size_t)n),
          *q = malloc(sizeof(float) * (size_t)n);
    for (int e = E - 2; e <= E; e++) P[e] = malloc(sizeof(float) * (size_t)n);
    datm_error err = {0};
    const char *path = "test_sdatm_ensemble.h5";
    for (int e = E - 2; e <= E; e++)
        if (run_predict(variant, 0, 1, e, tr, te, P[e])) { fails++; goto out; }
    if (run_predict(variant, 1, 1, E, tr, te, one) || run_predict(variant, 3, 1, E, tr, te, ens) ||
        run_predict(variant, 2, 2, E, tr, te, q)) {
        fails++;
        goto out;
    }
    CHECK(memcmp(one, P[E], sizeof(float) * (size_t)n) == 0);
    /* predict_add's order: the states' p(y | x) summed oldest first, then times 1/3 */
    for (int64_t i = 0; i < n; i++) mean[i] = ((0.0f + P[E - 2][i]) + P[E - 1][i]) + P[E][i];
    for (int64_t i = 0; i < n; i++) mean[i] *= 1.0f / 3.0f;
    const float d = max_abs_diff(ens, mean, n), d_last = max_abs_diff(ens, P[E], n);
    printf("%s: ensemble of epochs %d-%d vs the mean of three runs: max |diff| %g (vs the "
           "final state alone: %g)\n", variant, E - 2, E, (double)d, (double)d_last);
    CHECK(d <= 1e-6f);
    CHECK(d_last > 1e-4f);   /* the states differ, so the ensemble is not the last state */
    for (int64_t i = 0; i < n; i++) mean[i] = ((0.0f + P[E - 2][i]) + P[E][i]) * 0.5f;
    const float d2 = max_abs_diff(q, mean, n);
    printf("%s: 2 states every 2 epochs vs the mean of the runs of %d and %d epochs: max |diff| "
           "%g\n", variant, E - 2, E, (double)d2);
    CHECK(d2 <= 1e-6f);

    /* save -> load; the saved epochs; resume after epoch E - 1 */
    run a, b;
    datm_batch_iter it;
    int64_t iter = 0;
    CHECK(datm_batch_iter_init(&it, tr->X.n_rows, B, 4, 1, 0, &err) == DATM_OK);
    if (make(&a, variant, 3, 0, E, tr, &err) ||
        sdatm_testrun_epochs(&a, tr, &it, 4, &iter, 0, E - 1)) {
        fails++;
        sdatm_testrun_drop(&a);
        datm_batch_iter_free(&it);
        goto out;
    }
    datm_h5 *f = NULL;
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(a.m->ops->save(a.m, f, &err) == DATM_OK);
    datm_h5_close(&f);
    sdatm_testrun_drop(&a);
    if (make(&b, variant, 3, 0, E, tr, &err)) { fails++; datm_batch_iter_free(&it); goto out; }
    CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
    if (b.m->ops->load(b.m, f, &err)) { fprintf(stderr, "load: %s\n", err.msg); fails++; }
    datm_h5_close(&f);
    CHECK(sdatm_testrun_epochs(&b, tr, &it, 4, &iter, E - 1, E) == 0);
    datm_batch_iter_free(&it);
    CHECK(!isnan(sdatm_testrun_error(&b, &te->X, te->labels, te->n_classes, 5, 0, q)));
    CHECK(memcmp(q, ens, sizeof(float) * (size_t)n) == 0);   /* resumed == uninterrupted */
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(b.m->ops->save(b.m, f, &err) == DATM_OK);
    datm_h5_close(&f);
    sdatm_testrun_drop(&b);
    CHECK(make(&b, variant, 3, 0, E, tr, &err) == 0);
    CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
    datm_h5 *g = NULL;
    int64_t ep[3] = {0};
    const int64_t ne[1] = {3};
    CHECK(datm_h5_group(f, "trajectory_ensemble", 0, &g, &err) == DATM_OK);
    CHECK(datm_h5_read_i64(g, "epoch", ep, 1, ne, &err) == DATM_OK);
    datm_h5_close(&g);
    CHECK(ep[0] == E - 2 && ep[1] == E - 1 && ep[2] == E);
    if (b.m && b.m->ops->load(b.m, f, &err)) { fprintf(stderr, "load: %s\n", err.msg); fails++; }
    datm_h5_close(&f);
    if (b.m) {
        CHECK(!isnan(sdatm_testrun_error(&b, &te->X, te->labels, te->n_classes, 5, 0, q)));
        CHECK(memcmp(q, ens, sizeof(float) * (size_t)n) == 0);   /* save -> load */
    }
    sdatm_testrun_drop(&b);
    /* a model made for fewer states cannot read three */
    CHECK(make(&b, variant, 2, 0, E, tr, &err) == 0);
    CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
    if (b.m) {
        const int rc = b.m->ops->load(b.m, f, &err);
        printf("load into predict_snapshots 2 -> %s\n", rc ? err.msg : "accepted");
        CHECK(rc != DATM_OK && strstr(err.msg, "predict_snapshots"));
    }
    datm_h5_close(&f);
    sdatm_testrun_drop(&b);
out:
    remove(path);
    for (int e = E - 2; e <= E; e++) free(P[e]);
    free(ens);
    free(one);
    free(mean);
    free(q);
}

/* sdatm-n with val_fraction 0.2 (checks every val_every supervised epochs, patience). */
static int make_val(run *r, int snaps, int val_every, int patience, int epochs,
                    const datm_corpus *tr, datm_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, "sdatm-n", snaps, 1, 0.2, epochs);
    char full[1200];
    snprintf(full, sizeof full, "%s", text);
    /* the validation keys go into the model section, before "train:" */
    char *tp = strstr(full, "train:");
    char tail[256];
    snprintf(tail, sizeof tail, "%s", strstr(text, "train:"));
    snprintf(tp, sizeof full - (size_t)(tp - full), "  val_every: %d\n  val_patience: %d\n%s",
             val_every, patience, tail);
    return sdatm_testrun_make(r, full, tr, B, epochs, 4, err);
}

/* Part 3 (see the head of the file). */
static void test_with_validation(const datm_corpus *tr, const datm_corpus *te)
{
    const int64_t n = te->X.n_rows * te->n_classes;
    float *P[E + 1] = {NULL}, *ens = malloc(sizeof(float) * (size_t)n),
          *mean = malloc(sizeof(float) * (size_t)n);
    datm_error err = {0};
    run r;
    const char *path = "test_sdatm_ensemble_val.h5";
    for (int e = E - 2; e <= E; e++) {
        P[e] = malloc(sizeof(float) * (size_t)n);
        /* val_every above the run: the one check is the last iteration's (always the best) */
        if (make_val(&r, 0, 1000, 0, e, tr, &err) || sdatm_testrun_train(&r, tr, 4, e) ||
            isnan(sdatm_testrun_error(&r, &te->X, te->labels, te->n_classes, 5, 0, P[e]))) {
            fprintf(stderr, "validation run of %d epochs: %s\n", e, err.msg);
            fails++;
            sdatm_testrun_drop(&r);
            goto out;
        }
        sdatm_testrun_drop(&r);
    }
    if (make_val(&r, 3, 1, 0, E, tr, &err) || sdatm_testrun_train(&r, tr, 4, E) ||
        isnan(sdatm_testrun_error(&r, &te->X, te->labels, te->n_classes, 5, 0, ens))) {
        fprintf(stderr, "ensemble with validation: %s\n", err.msg);
        fails++;
        sdatm_testrun_drop(&r);
        goto out;
    }
    for (int64_t i = 0; i < n; i++) mean[i] = ((0.0f + P[E - 2][i]) + P[E - 1][i]) + P[E][i];
    for (int64_t i = 0; i < n; i++) mean[i] *= 1.0f / 3.0f;
    const float d = max_abs_diff(ens, mean, n);
    printf("sdatm-n with val_fraction 0.2: ensemble of epochs %d-%d vs the mean of three runs: "
           "max |diff| %g\n", E - 2, E, (double)d);
    CHECK(d <= 1e-6f);

    /* the saved record, and the final ensemble scored on the saved validation rows */
    datm_h5 *f = NULL, *g = NULL;
    int64_t nv = 0, nc = 0, mon = -1, stopped = -1;
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(r.m->ops->save(r.m, f, &err) == DATM_OK);
    CHECK(datm_h5_group(f, "early_stopping", 0, &g, &err) == DATM_OK);
    CHECK(datm_h5_shape(g, "val_docs", &nv) == 1 && nv > 0);
    CHECK(datm_h5_shape(g, "epoch", &nc) == 1 && nc == E - 3);   /* unsup_epochs 3 */
    CHECK(datm_h5_attr_get_i64(g, "monitor_only", &mon, &err) == DATM_OK && mon == 1);
    CHECK(datm_h5_attr_get_i64(g, "stopped_epoch", &stopped, &err) == DATM_OK && stopped == 0);
    int64_t *vrows = malloc(sizeof(int64_t) * (size_t)(nv > 0 ? nv : 1));
    double *ve = malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1));
    if (nv > 0 && nc > 0) {
        CHECK(datm_h5_read_i64(g, "val_docs", vrows, 1, &nv, &err) == DATM_OK);
        CHECK(datm_h5_read_f64(g, "val_error", ve, 1, &nc, &err) == DATM_OK);
        datm_csr X = {0};
        int32_t *y = malloc(sizeof(int32_t) * (size_t)nv);
        float *pv = malloc(sizeof(float) * (size_t)(nv * te->n_classes));
        CHECK(datm_csr_select_rows(&tr->X, vrows, nv, &X, &err) == DATM_OK);
        for (int64_t i = 0; i < nv; i++) y[i] = tr->labels[vrows[i]];
        const double e_val = sdatm_testrun_error(&r, &X, y, te->n_classes, 7, 0, pv);
        printf("last check %.4f (checks %lld), the final ensemble on the validation rows "
               "%.4f\n", ve[nc - 1], (long long)nc, e_val);
        CHECK(e_val == ve[nc - 1]);
        datm_csr_free(&X);
        free(y);
        free(pv);
    }
    datm_h5_close(&g);
    datm_h5_close(&f);
    free(vrows);
    free(ve);
    sdatm_testrun_drop(&r);
out:
    remove(path);
    for (int e = E - 2; e <= E; e++) free(P[e]);
    free(ens);
    free(mean);
}

int main(void)
{
    CHECK(spec_rejects("model.predict_snapshots=-1", "predict_snapshots"));
    CHECK(spec_rejects("model.predict_snapshots=1001", "predict_snapshots"));
    CHECK(spec_rejects("model.snapshot_every=0", "snapshot_every"));

    datm_corpus tr, te;
    datm_error err = {0};
    if (sdatm_testrun_digits(&tr, &te, &err)) {
        printf("skipped: the digits part (%s)\n", err.msg);
        return fails ? 1 : 77;
    }
    if (sdatm_testrun_quick(&tr, &err)) {
        fprintf(stderr, "digits: %s\n", err.msg);
        return 1;
    }
    {   /* with early stopping's patience: rejected at create */
        run r;
        const int rc = make_val(&r, 3, 1, 2, E, &tr, &err);
        printf("predict_snapshots 3 with val_fraction 0.2, val_patience 2 -> %s\n",
               rc ? err.msg : "accepted");
        CHECK(rc != 0 && strstr(err.msg, "model.val_patience"));
        sdatm_testrun_drop(&r);
    }
    test_with_validation(&tr, &te);
    test_digits("sdatm-l", &tr, &te);
    test_digits("sdatm-n", &tr, &te);
    datm_corpus_free(&tr);
    datm_corpus_free(&te);
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    return fails ? 1 : 0;
}
