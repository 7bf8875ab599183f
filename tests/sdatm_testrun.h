/* tests/sdatm_testrun.h: the harness the sDATM end-to-end tests share: a model built from spec
 * text through the registry (as `datm run` does), mini-batch training on a labelled corpus in
 * the engine's batch order, and the error rate of the model's own prediction. Header-only
 * (static inline functions). */
#ifndef DATM_TESTS_SDATM_TESTRUN_H
#define DATM_TESTS_SDATM_TESTRUN_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "eval/classify.h"
#include "pipeline/pipeline.h"

/* The digits set's train and (te != NULL) test parts, found as a spec's `dataset: digits` is
 * (datm_dataset_resolve: $DATM_DATA/digits, else the copy that ci/setup.sh writes into
 * .cache/data/digits from Debian's python3-sklearn). Non-zero with err set when absent: the
 * caller skips (exit 77) with the message. */
static inline int sdatm_testrun_digits(datm_corpus *tr, datm_corpus *te, datm_error *err)
{
    char dir[1024];
    if (datm_dataset_resolve("digits", dir, sizeof dir, err)) return 1;
    if (datm_corpus_load(dir, "train", tr, err)) return 1;
    if (te && datm_corpus_load(dir, "test", te, err)) {
        datm_corpus_free(tr);
        return 1;
    }
    return 0;
}

/* With DATM_TEST_QUICK=1 (ci/test.sh's sanitizer job; tests/testlib.sh) keeps every other
 * document of c (rows 0, 2, 4, ...: each class in proportion) with its label; else leaves c
 * as it is. For the tests whose checks are exact identities, not error bounds: the same
 * epochs, code paths and checks at half the cost. */
static inline int sdatm_testrun_quick(datm_corpus *c, datm_error *err)
{
    const char *quick = getenv("DATM_TEST_QUICK");
    if (!quick || strcmp(quick, "1")) return 0;
    const int64_t n = (c->X.n_rows + 1) / 2;
    int64_t *rows = malloc((size_t)n * sizeof *rows);
    if (!rows) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) rows[i] = 2 * i;
    datm_csr half;
    int rc = datm_csr_select_rows(&c->X, rows, n, &half, err);
    free(rows);
    if (rc) return rc;
    datm_csr_free(&c->X);
    c->X = half;
    if (c->labels)
        for (int64_t i = 0; i < n; i++) c->labels[i] = c->labels[2 * i];
    return 0;
}

typedef struct sdatm_testrun {
    datm_spec     spec;
    datm_model   *m;
    datm_run_info info;
} sdatm_testrun;

/* The model of spec `text` for training set tr: mini-batches of B, `epochs` epochs, `seed`,
 * 2 threads. Non-zero (err set) on a spec or create error; drop r either way. */
static inline int sdatm_testrun_make(sdatm_testrun *r, const char *text,
                                     const datm_corpus *tr, int64_t B, int64_t epochs,
                                     uint64_t seed, datm_error *err)
{
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    memset(r, 0, sizeof *r);
    if (datm_spec_load_text(text, "test", NULL, 0, &cat, &r->spec, err)) return 1;
    const int64_t N = tr->X.n_rows, bpe = (N + B - 1) / B;
    datm_run_info info = {.n_train = N, .n_vocab = tr->X.n_cols, .n_classes = tr->n_classes,
                          .batch_size = B, .epochs = epochs, .total_iters = bpe * epochs,
                          .seed = seed, .threads = 2, .train = &tr->X, .train_labels = tr->labels};
    r->info = info;
    return r->spec.ops->create(datm_spec_section(&r->spec, DATM_SEC_MODEL), &r->info, &r->m, err)
               ? 1 : 0;
}

/* 1 when spec `text` with the one override `ov` fails to load with an error that names `key`
 * (printed either way), 0 when it loads or the error does not name the key. */
static inline int sdatm_testrun_spec_rejects(const char *text, const char *ov, const char *key)
{
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_spec sp;
    datm_error err = {0};
    const char *o[1] = {ov};
    if (datm_spec_load_text(text, "test", o, 1, &cat, &sp, &err) == DATM_OK) {
        datm_spec_free(&sp);
        fprintf(stderr, "%s accepted\n", ov);
        return 0;
    }
    printf("%s -> %s\n", ov, err.msg);
    return strstr(err.msg, key) != NULL;
}

static inline void sdatm_testrun_drop(sdatm_testrun *r)
{
    if (r->m) r->m->ops->destroy(r->m);
    r->m = NULL;
    datm_spec_free(&r->spec);
}

/* One train_batch on rows[0..n) of tr at 1-based iteration `it` of 0-based epoch `ep`; a
 * failure or a non-finite loss is printed and returns non-zero. */
static inline int sdatm_testrun_step(sdatm_testrun *r, const datm_corpus *tr,
                                     const int64_t *rows, int64_t n, int64_t it, int64_t ep,
                                     uint64_t seed)
{
    datm_error err = {0};
    datm_csr X = {0};
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    if (!lab || datm_csr_select_rows(&tr->X, rows, n, &X, &err)) { free(lab); return 1; }
    for (int64_t i = 0; i < n; i++) lab[i] = tr->labels[rows[i]];
    datm_batch b = {&X, rows, lab};
    datm_train_ctx ctx = {it, ep, seed, (double)tr->X.n_rows / (double)r->info.batch_size};
    datm_train_stats st;
    memset(&st, 0, sizeof st);
    int rc = r->m->ops->train_batch(r->m, &b, &ctx, &st, &err);
    datm_csr_free(&X);
    free(lab);
    if (rc) fprintf(stderr, "train: %s\n", err.msg);
    if (!rc && !isfinite(st.loss)) { fprintf(stderr, "train: loss %g\n", st.loss); rc = 1; }
    return rc;
}

/* Epochs [e0, e1) in the batch order of `it` (already at epoch e0), counting iterations in
 * *iter. */
static inline int sdatm_testrun_epochs(sdatm_testrun *r, const datm_corpus *tr,
                                       datm_batch_iter *it, uint64_t seed, int64_t *iter,
                                       int64_t e0, int64_t e1)
{
    for (int64_t e = e0; e < e1; e++)
        for (;;) {
            const int64_t *rows;
            int64_t n = datm_batch_iter_next(it, &rows);
            if (n == 0) break;
            if (sdatm_testrun_step(r, tr, rows, n, ++*iter, e, seed)) return 1;
        }
    return 0;
}

/* Epochs [0, epochs) from a new batch order drawn from `seed`. */
static inline int sdatm_testrun_train(sdatm_testrun *r, const datm_corpus *tr,
                                      uint64_t seed, int64_t epochs)
{
    datm_error err = {0};
    datm_batch_iter it;
    if (datm_batch_iter_init(&it, tr->X.n_rows, r->info.batch_size, seed, 1, 0, &err)) return 1;
    int64_t iter = 0;
    int rc = sdatm_testrun_epochs(r, tr, &it, seed, &iter, 0, epochs);
    datm_batch_iter_free(&it);
    return rc;
}

/* Error rate of the model's prediction (nsamples draws, 0 = at the means; prediction seed
 * `seed`) on the documents X with labels y; P (n, C) gets p(y | x). NAN on failure. */
static inline double sdatm_testrun_error(const sdatm_testrun *r, const datm_csr *X,
                                         const int32_t *y, int C, uint64_t seed, int nsamples,
                                         float *P)
{
    datm_error err = {0};
    const int64_t n = X->n_rows;
    int32_t *pred = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    double e = NAN;
    if (pred && !r->m->ops->predict(r->m, X, seed, nsamples, P, &err)) {
        datm_argmax_rows(P, n, C, pred);
        e = datm_error_rate(y, pred, n);
    } else {
        fprintf(stderr, "predict: %s\n", err.msg);
    }
    free(pred);
    return e;
}

#endif
