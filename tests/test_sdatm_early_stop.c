/* ctest-labels: e2e  ctest-timeout: 600 */
/* tests/test_sdatm_early_stop.c: early stopping of the supervised phase on a validation split
 * of the training documents (model.val_fraction / val_every / val_patience; models/sdatm.c,
 * models/sdatm_val.c). Checks:
 *  1. the split (sdatm_val_split) on labels sorted by class, as IMDB and 20News are stored:
 *     exactly round(fraction * N_c) documents of every class, not the first ones of the
 *     class's block, the same rows for the same seed and other rows for another seed;
 *     a fraction that gives no validation document is an error naming model.val_fraction;
 *  2. the record (sdatm_val_record) on a fixed sequence of errors: new bests, ties keep the
 *     earlier state, STOP after `patience` checks without improvement, never with patience 0;
 *  3. spec validation: out-of-range val_fraction / val_every / val_patience are rejected with
 *     the key named; on digits a fraction too small for any document is rejected at create,
 *     and so is eval_globals chain (its mini-batches would read the validation documents);
 *  4. on the real digits set (skipped when absent), sdatm-l and sdatm-n: a mini-batch of
 *     validation documents only changes nothing (bit-identical predictions), so they never
 *     train; after the run, the saved record's best is the first argmin of its curve, the
 *     checks are every val_every epochs of the supervised phase, a stop happens exactly
 *     `patience` checks after the best, and the model's own prediction at the posterior means
 *     on the saved validation rows scores exactly the best error (the best state was put back);
 *     after a stop, further batches do not change the model; save -> load keeps predictions;
 *  5. resume: saved mid-run (with the best check's snapshot) and continued in a fresh model,
 *     a run ends with the uninterrupted run's record and predictions.
 * DATM_TEST_QUICK=1: every other training document (sdatm_testrun_quick). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/sdatm_val.h"
#include "data/data.h"
#include "eval/classify.h"
#include "io/h5.h"
#include "pipeline/pipeline.h"
#include "sdatm_testrun.h"
#include "test_check.h"


static void test_split(void)
{
    enum { N = 1000, C = 4 };
    int32_t y[N];
    for (int i = 0; i < N; i++) y[i] = i < 100 ? 0 : i < 400 ? 1 : i < 450 ? 2 : 3;  /* sorted */
    const int64_t nc[C] = {100, 300, 50, 550}, first[C] = {0, 100, 400, 450};
    datm_error err = {0};
    sdatm_val a, b, c;
    CHECK(sdatm_val_split(&a, y, N, C, 0.1, 0, 5, &err) == DATM_OK);
    CHECK(sdatm_val_split(&b, y, N, C, 0.1, 0, 5, &err) == DATM_OK);
    CHECK(sdatm_val_split(&c, y, N, C, 0.1, 0, 6, &err) == DATM_OK);
    int64_t per[C] = {0}, in_head[C] = {0};
    for (int64_t i = 0; i < a.n; i++) {
        const int64_t r = a.rows[i];
        per[y[r]]++;
        if (r - first[y[r]] < (int64_t)floor(0.1 * (double)nc[y[r]] + 0.5)) in_head[y[r]]++;
        CHECK(a.is_val[r] == 1);
        if (i > 0) CHECK(a.rows[i] > a.rows[i - 1]);
    }
    for (int k = 0; k < C; k++) {
        CHECK(per[k] == (int64_t)floor(0.1 * (double)nc[k] + 0.5));
        CHECK(in_head[k] < per[k]);   /* a shuffle, not the head of the class's block */
    }
    CHECK(a.n + (a.N - a.n) == N);
    for (int64_t i = 0; i < a.N - a.n; i++) CHECK(a.is_val[a.fit_rows[i]] == 0);
    CHECK(a.n == b.n && memcmp(a.rows, b.rows, (size_t)a.n * sizeof(int64_t)) == 0);
    CHECK(a.n == c.n && memcmp(a.rows, c.rows, (size_t)a.n * sizeof(int64_t)) != 0);
    sdatm_val_free(&a);
    sdatm_val_free(&b);
    sdatm_val_free(&c);
    sdatm_val z;
    CHECK(sdatm_val_split(&z, y, N, C, 0.0001, 0, 5, &err) != DATM_OK);
    CHECK(strstr(err.msg, "model.val_fraction") != NULL);
    CHECK(sdatm_val_split(&z, y, N, C, 0, 0, 5, &err) == DATM_OK && z.n == 0);
    sdatm_val_free(&z);
}

static void test_record(void)
{
    const double e[] = {0.5, 0.4, 0.45, 0.4, 0.39, 0.6, 0.6, 0.39, 0.1};
    const sdatm_val_verdict want2[] = {SDATM_VAL_BEST, SDATM_VAL_BEST, SDATM_VAL_WORSE,
                                       SDATM_VAL_STOP, SDATM_VAL_BEST, SDATM_VAL_WORSE,
                                       SDATM_VAL_STOP, SDATM_VAL_STOP, SDATM_VAL_BEST};
    datm_error err = {0};
    for (int patience = 0; patience <= 2; patience += 2) {
        sdatm_val v;
        memset(&v, 0, sizeof v);
        v.best = -1;
        v.patience = patience;
        for (int i = 0; i < 9; i++) {
            sdatm_val_verdict got;
            CHECK(sdatm_val_record(&v, 10 + i, e[i], &got, &err) == DATM_OK);
            if (patience) CHECK(got == want2[i]);
            else CHECK(got != SDATM_VAL_STOP);
        }
        CHECK(v.n_checks == 9 && v.best == 8 && v.epoch[3] == 13);
        sdatm_val_free(&v);
    }
}

static const char *SPEC =
    "name: t\nseed: 3\ndata:\n  dataset: digits\nmodel:\n  variant: %s\n  layers: [32, 16]\n"
    "  unsup_epochs: 5\n  kl_warmup_epochs: 2\n  k_min: 1\n  label_weight: 10\n"
    "  val_fraction: %g\n  val_every: %d\n  val_patience: %d\n"
    "train:\n  epochs: %d\n  batch_size: 50\n";

enum { EPOCHS = 40, B = 50 };

static int spec_error(const char *variant, const char *ov, const char *key)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, 0.2, 1, 0, EPOCHS);
    return sdatm_testrun_spec_rejects(text, ov, key);
}

typedef sdatm_testrun run;

static int make(run *r, const char *variant, double frac, int every, int patience,
                const datm_corpus *tr, datm_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, frac, every, patience, EPOCHS);
    return sdatm_testrun_make(r, text, tr, B, EPOCHS, 3, err);
}

static void drop(run *r) { sdatm_testrun_drop(r); }

/* One train_batch on rows[0..n) of tr at iteration it, epoch ep. */
static int step(run *r, const datm_corpus *tr, const int64_t *rows, int64_t n, int64_t it,
                int64_t ep)
{
    return sdatm_testrun_step(r, tr, rows, n, it, ep, 3);
}

/* Epochs [e0, e1) from the batch order `it` (iteration counter *iter). */
static int train_epochs(run *r, const datm_corpus *tr, datm_batch_iter *it, int64_t *iter,
                        int64_t e0, int64_t e1)
{
    return sdatm_testrun_epochs(r, tr, it, 3, iter, e0, e1);
}

static int train_all(run *r, const datm_corpus *tr) { return sdatm_testrun_train(r, tr, 3, EPOCHS); }

/* Error of the model's prediction at the posterior means on rows of tr; probs (n, C). */
static double error_on(const run *r, const datm_corpus *tr, const int64_t *rows, int64_t n,
                       float *probs)
{
    datm_error err = {0};
    datm_csr X = {0};
    double e = NAN;
    int32_t *y = malloc(sizeof(int32_t) * (size_t)n), *pred = malloc(sizeof(int32_t) * (size_t)n);
    if (!datm_csr_select_rows(&tr->X, rows, n, &X, &err) &&
        !r->m->ops->predict(r->m, &X, 7, 0, probs, &err)) {
        for (int64_t i = 0; i < n; i++) y[i] = tr->labels[rows[i]];
        datm_argmax_rows(probs, n, tr->n_classes, pred);
        e = datm_error_rate(y, pred, n);
    } else {
        fprintf(stderr, "predict: %s\n", err.msg);
    }
    datm_csr_free(&X);
    free(y);
    free(pred);
    return e;
}

static void test_digits_run(const char *variant, const datm_corpus *tr, int patience)
{
    const int every = 1;
    run r;
    datm_error err = {0};
    if (make(&r, variant, 0.2, every, patience, tr, &err)) {
        fprintf(stderr, "make: %s\n", err.msg);
        fails++;
        drop(&r);
        return;
    }
    /* the validation rows, as the model saves them */
    const char *path = "test_sdatm_early_stop.h5";
    datm_h5 *f = NULL, *g = NULL;
    int64_t nv = 0;
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(r.m->ops->save(r.m, f, &err) == DATM_OK);
    CHECK(datm_h5_group(f, "early_stopping", 0, &g, &err) == DATM_OK);
    CHECK(datm_h5_shape(g, "val_docs", &nv) == 1 && nv > 0);
    int64_t *vrows = malloc(sizeof(int64_t) * (size_t)nv);
    CHECK(datm_h5_read_i64(g, "val_docs", vrows, 1, &nv, &err) == DATM_OK);
    datm_h5_close(&g);
    datm_h5_close(&f);
    const int64_t NT = tr->X.n_rows, C = tr->n_classes;
    float *p1 = malloc(sizeof(float) * (size_t)(NT * C)), *p2 = malloc(sizeof(float) * (size_t)(NT * C));

    /* a mini-batch of validation documents only: nothing may change */
    int64_t some[B];
    for (int i = 0; i < B; i++) some[i] = i;
    error_on(&r, tr, some, B, p1);
    CHECK(step(&r, tr, vrows, nv < B ? nv : B, 1, 0) == 0);
    error_on(&r, tr, some, B, p2);
    CHECK(memcmp(p1, p2, sizeof(float) * (size_t)(B * C)) == 0);
    drop(&r);

    /* the whole run */
    if (make(&r, variant, 0.2, every, patience, tr, &err)) { fails++; drop(&r); free(vrows); return; }
    if (train_all(&r, tr)) { fails++; drop(&r); free(vrows); return; }
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(r.m->ops->save(r.m, f, &err) == DATM_OK);
    CHECK(datm_h5_group(f, "early_stopping", 0, &g, &err) == DATM_OK);
    int64_t nc = 0, best_epoch = -1, stopped = -1;
    double best_error = NAN;
    CHECK(datm_h5_shape(g, "epoch", &nc) == 1 && nc >= 1);
    int64_t *ep = malloc(sizeof(int64_t) * (size_t)(nc > 0 ? nc : 1));
    double *ve = malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1));
    CHECK(datm_h5_read_i64(g, "epoch", ep, 1, &nc, &err) == DATM_OK);
    CHECK(datm_h5_read_f64(g, "val_error", ve, 1, &nc, &err) == DATM_OK);
    CHECK(datm_h5_attr_get_i64(g, "best_epoch", &best_epoch, &err) == DATM_OK);
    CHECK(datm_h5_attr_get_f64(g, "best_error", &best_error, &err) == DATM_OK);
    CHECK(datm_h5_attr_get_i64(g, "stopped_epoch", &stopped, &err) == DATM_OK);
    datm_h5_close(&g);
    datm_h5_close(&f);
    int64_t arg = 0;
    for (int64_t i = 0; i < nc; i++) {
        CHECK(ep[i] == 5 + (i + 1) * every);   /* unsup_epochs 5, then every `every` */
        if (ve[i] < ve[arg]) arg = i;
    }
    CHECK(best_epoch == ep[arg] && best_error == ve[arg]);
    if (stopped > 0) {
        CHECK(patience > 0);
        CHECK(nc == arg + patience + 1 && stopped == ep[nc - 1]);
    } else {
        CHECK(ep[nc - 1] == EPOCHS);
    }
    const double e_val = error_on(&r, tr, vrows, nv, p1);
    printf("%s patience %d: %lld checks, best %.4f at epoch %lld, stopped after epoch %lld; "
           "validation error of the final model %.4f\n", variant, patience, (long long)nc,
           best_error, (long long)best_epoch, (long long)stopped, e_val);
    CHECK(e_val == best_error);   /* the best checked state is the one kept */

    /* further batches after a stop do nothing */
    error_on(&r, tr, some, B, p1);
    if (stopped > 0) {
        CHECK(step(&r, tr, some, B, r.info.total_iters, EPOCHS - 1) == 0);
        error_on(&r, tr, some, B, p2);
        CHECK(memcmp(p1, p2, sizeof(float) * (size_t)(B * C)) == 0);
    }
    /* save -> load into a fresh model: the same predictions */
    run r2;
    if (make(&r2, variant, 0.2, every, patience, tr, &err)) { fails++; }
    else {
        CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
        if (r2.m->ops->load(r2.m, f, &err)) { fprintf(stderr, "load: %s\n", err.msg); fails++; }
        datm_h5_close(&f);
        error_on(&r2, tr, some, B, p2);
        CHECK(memcmp(p1, p2, sizeof(float) * (size_t)(B * C)) == 0);
    }
    drop(&r2);
    remove(path);
    free(ep);
    free(ve);
    free(vrows);
    free(p1);
    free(p2);
    drop(&r);
}

/* The record of checks in a saved model: count, best epoch, stopped epoch. */
static void saved_record(run *r, const char *path, int64_t *nc, int64_t *best, int64_t *stopped)
{
    datm_error err = {0};
    datm_h5 *f = NULL, *g = NULL;
    *nc = *best = *stopped = -1;
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(r->m->ops->save(r->m, f, &err) == DATM_OK);
    CHECK(datm_h5_group(f, "early_stopping", 0, &g, &err) == DATM_OK);
    CHECK(datm_h5_shape(g, "epoch", nc) == 1);
    CHECK(datm_h5_attr_get_i64(g, "best_epoch", best, &err) == DATM_OK);
    CHECK(datm_h5_attr_get_i64(g, "stopped_epoch", stopped, &err) == DATM_OK);
    datm_h5_close(&g);
    datm_h5_close(&f);
}

/* A run saved after the epoch of its best check (the state a checkpoint holds, that check's
 * snapshot included) and continued in a fresh model loaded from the file ends exactly as the
 * uninterrupted run: same record, same predictions, so the best state put back at the end is
 * the snapshot read from the file (needs a best before the last epoch; reported). */
static void test_resume(const char *variant, const datm_corpus *tr)
{
    datm_error err = {0};
    const char *path = "test_sdatm_early_stop_resume.h5";
    const int64_t NT = tr->X.n_rows, C = tr->n_classes;
    float *p1 = malloc(sizeof(float) * (size_t)(NT * C)), *p2 = malloc(sizeof(float) * (size_t)(NT * C));
    int64_t all[B];
    for (int i = 0; i < B; i++) all[i] = i;
    run a, b, c;
    int64_t nc1, best1, st1, nc2, best2, st2, ncm, bestm, stm;
    if (make(&a, variant, 0.2, 1, 0, tr, &err) || train_all(&a, tr)) { fails++; drop(&a); goto out; }
    saved_record(&a, path, &nc1, &best1, &st1);
    error_on(&a, tr, all, B, p1);
    drop(&a);
    const int64_t half = best1 > 0 && best1 < EPOCHS ? best1 : EPOCHS / 2;
    if (!(best1 > 0 && best1 < EPOCHS))
        printf("  (best at the last epoch: the snapshot is not exercised)\n");

    datm_batch_iter it;
    int64_t iter = 0;
    datm_batch_iter_init(&it, NT, B, 3, 1, 0, &err);
    if (make(&b, variant, 0.2, 1, 0, tr, &err) || train_epochs(&b, tr, &it, &iter, 0, half)) {
        fails++;
        drop(&b);
        datm_batch_iter_free(&it);
        goto out;
    }
    saved_record(&b, path, &ncm, &bestm, &stm);   /* the checkpoint */
    drop(&b);
    if (make(&c, variant, 0.2, 1, 0, tr, &err)) { fails++; drop(&c); datm_batch_iter_free(&it); goto out; }
    datm_h5 *f = NULL;
    CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
    if (c.m->ops->load(c.m, f, &err)) { fprintf(stderr, "load: %s\n", err.msg); fails++; }
    datm_h5_close(&f);
    CHECK(train_epochs(&c, tr, &it, &iter, half, EPOCHS) == 0);
    datm_batch_iter_free(&it);
    saved_record(&c, path, &nc2, &best2, &st2);
    error_on(&c, tr, all, B, p2);
    drop(&c);
    printf("%s resumed after epoch %lld (best then: epoch %lld): %lld checks, best epoch %lld "
           "(uninterrupted: %lld, %lld)\n", variant, (long long)half, (long long)bestm,
           (long long)nc2, (long long)best2, (long long)nc1, (long long)best1);
    CHECK(nc2 == nc1 && best2 == best1 && st2 == st1);
    CHECK(memcmp(p1, p2, sizeof(float) * (size_t)(B * C)) == 0);
    CHECK(bestm == best1 || !(best1 < EPOCHS));   /* the checkpoint holds the final best */
out:
    remove(path);
    free(p1);
    free(p2);
}

int main(void)
{
    test_split();
    test_record();
    CHECK(spec_error("sdatm-n", "model.val_fraction=0.9", "val_fraction"));
    CHECK(spec_error("sdatm-n", "model.val_fraction=-0.1", "val_fraction"));
    CHECK(spec_error("sdatm-l", "model.val_every=0", "val_every"));
    CHECK(spec_error("sdatm-l", "model.val_patience=-1", "val_patience"));

    datm_corpus tr;
    datm_error err = {0};
    if (sdatm_testrun_digits(&tr, NULL, &err)) {
        printf("skipped: the digits part (%s)\n", err.msg);
        if (fails) { fprintf(stderr, "%d checks failed\n", fails); return 1; }
        return 77;
    }
    if (sdatm_testrun_quick(&tr, &err)) {
        fprintf(stderr, "digits: %s\n", err.msg);
        return 1;
    }
    {   /* a fraction that holds out no document of digits' classes: an error at create */
        run r;
        int rc = make(&r, "sdatm-n", 1e-4, 1, 0, &tr, &err);
        printf("val_fraction 1e-4 -> %s\n", rc ? err.msg : "accepted");
        CHECK(rc != 0 && strstr(err.msg, "model.val_fraction") != NULL);
        drop(&r);
    }
    {   /* eval_globals chain advances the chain on batches of all rows: rejected at create */
        char text[1024], with[1200];
        snprintf(text, sizeof text, SPEC, "sdatm-l", 0.2, 1, 0, EPOCHS);
        const char *t = strstr(text, "train:");
        snprintf(with, sizeof with, "%.*s  eval_globals: chain\n%s", (int)(t - text), text, t);
        run r;
        int rc = sdatm_testrun_make(&r, with, &tr, B, EPOCHS, 3, &err);
        printf("eval_globals chain with val_fraction 0.2 -> %s\n", rc ? err.msg : "accepted");
        CHECK(rc != 0 && strstr(err.msg, "model.eval_globals") != NULL);
        drop(&r);
    }
    test_digits_run("sdatm-l", &tr, 0);
    test_digits_run("sdatm-n", &tr, 2);
    test_resume("sdatm-l", &tr);
    datm_corpus_free(&tr);
    return check_result();
}
