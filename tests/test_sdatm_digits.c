/* ctest-labels: e2e  ctest-timeout: 600 */
/* tests/test_sdatm_digits.c: sdatm-l and sdatm-n end to end through the plugin contract on the
 * real `digits` set (1,442 training / 355 test 8x8 images; $DATM_DATA/digits or the copy
 * ci/setup.sh writes into .cache/data, skipped when absent): a short run (unsupervised epochs, then supervised ones) must
 *  1. classify the test images far better than chance (error < 0.25; chance is 0.90 for
 *     ten balanced classes, and a model whose label gradient or head were broken stays near
 *     it: the error after the unsupervised epochs alone is checked to be > 0.5);
 *  2. give bit-identical class probabilities after save -> load into a fresh model;
 *  3. give probabilities that sum to 1 for every document;
 *  4. predict with nsamples 0 (evaluate.predict_samples: 0, which a spec must accept): the
 *     posterior mean of theta and of W, no sampling, so the probabilities do not depend on
 *     the seed (sampled draws do), sum to 1, and classify within 0.05 of the 20-draw error.
 * The run is small (layers 32-16, 40 epochs of
 * mini-batches of 50, k_min 1, label_weight 10), so this is a smoke test of the whole path, not of the paper's
 * numbers (those are the `regression`/`slow` pipelines). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "eval/classify.h"
#include "io/h5.h"
#include "pipeline/pipeline.h"
#include "sdatm_testrun.h"
#include "test_check.h"


static const char *SPEC =
    "name: t\nseed: 3\ndata:\n  dataset: digits\nmodel:\n  variant: %s\n  layers: [32, 16]\n"
    "  unsup_epochs: %d\n  kl_warmup_epochs: 2\n  k_min: 1\n  label_weight: 10\n"
    "train:\n  epochs: %d\n  batch_size: 50\n";

typedef sdatm_testrun run;

static int make(run *r, const char *variant, int unsup, int epochs,
                const datm_corpus *tr)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, unsup, epochs);
    datm_error err = {0};
    if (sdatm_testrun_make(r, text, tr, 50, epochs, 3, &err)) {
        fprintf(stderr, "make: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* Epochs [e0, e1) of the batch order of seed 3 (iteration counter *iter). */
static int train_epochs(run *r, const datm_corpus *tr, int64_t e0, int64_t e1, int64_t *iter)
{
    datm_error err = {0};
    datm_batch_iter it;
    if (datm_batch_iter_init(&it, tr->X.n_rows, 50, 3, 1, 0, &err)) return 1;
    datm_batch_iter_seek(&it, e0, 0);
    int rc = sdatm_testrun_epochs(r, tr, &it, 3, iter, e0, e1);
    datm_batch_iter_free(&it);
    return rc;
}

static double test_error(run *r, const datm_corpus *te, int ns, float *probs)
{
    return sdatm_testrun_error(r, &te->X, te->labels, te->n_classes, 11, ns, probs);
}

int main(void)
{
    datm_corpus tr, te;
    datm_error err = {0};
    if (sdatm_testrun_digits(&tr, &te, &err)) {
        printf("skipped: digits not found (%s)\n", err.msg);
        return 77;
    }
    const int64_t NT = te.X.n_rows, C = te.n_classes;
    {   /* evaluate.predict_samples: 0 is a valid setting */
        datm_model_catalog cat = DATM_REGISTRY_CATALOG;
        datm_spec sp;
        const char *ov[1] = {"evaluate.predict_samples=0"};
        char text[1024];
        snprintf(text, sizeof text, SPEC, "sdatm-l", 1, 2);
        int rc = datm_spec_load_text(text, "test", ov, 1, &cat, &sp, &err);
        if (rc) fprintf(stderr, "spec with predict_samples 0: %s\n", err.msg);
        CHECK(rc == 0);
        if (!rc) {
            CHECK(datm_config_int(datm_spec_section(&sp, DATM_SEC_EVALUATE), "predict_samples") == 0);
            datm_spec_free(&sp);
        }
    }
    float *p1 = malloc(sizeof(float) * (size_t)(NT * C)), *p2 = malloc(sizeof(float) * (size_t)(NT * C));
    const char *variants[2] = {"sdatm-l", "sdatm-n"};
    for (int v = 0; v < 2; v++) {
        run r;
        memset(&r, 0, sizeof r);
        int64_t iter = 0;
        if (make(&r, variants[v], 10, 40, &tr)) return 1;
        if (train_epochs(&r, &tr, 0, 10, &iter)) return 1;
        double e_unsup = test_error(&r, &te, 5, p1);
        if (train_epochs(&r, &tr, 10, 40, &iter)) return 1;
        double e = test_error(&r, &te, 20, p1);
        printf("%s: test error %.4f after 10 unsupervised epochs, %.4f after 30 supervised ones\n",
               variants[v], e_unsup, e);
        CHECK(e_unsup > 0.5);
        CHECK(e < 0.25);
        double worst = 0;
        for (int64_t i = 0; i < NT; i++) {
            double s = 0;
            for (int64_t c = 0; c < C; c++) s += p1[i * C + c];
            worst = fmax(worst, fabs(s - 1));
        }
        CHECK(worst < 1e-4);

        /* nsamples 0: the posterior means, seed-free */
        float *q1 = malloc(sizeof(float) * (size_t)(NT * C)), *q2 = malloc(sizeof(float) * (size_t)(NT * C));
        double em = test_error(&r, &te, 0, q1);
        if (r.m->ops->predict(r.m, &te.X, 12345, 0, q2, &err)) {
            fprintf(stderr, "predict: %s\n", err.msg);
            fails++;
        }
        CHECK(memcmp(q1, q2, sizeof(float) * (size_t)(NT * C)) == 0);
        if (r.m->ops->predict(r.m, &te.X, 12345, 1, q2, &err)) fails++;
        CHECK(memcmp(q1, q2, sizeof(float) * (size_t)(NT * C)) != 0);   /* one draw differs */
        worst = 0;
        for (int64_t i = 0; i < NT; i++) {
            double s = 0;
            for (int64_t c = 0; c < C; c++) s += q1[i * C + c];
            worst = fmax(worst, fabs(s - 1));
        }
        CHECK(worst < 1e-4);
        printf("%s: test error %.4f with the posterior means (nsamples 0)\n", variants[v], em);
        CHECK(fabs(em - e) < 0.05);
        free(q1);
        free(q2);

        /* save -> load into a fresh model -> identical predictions */
        char path[256];
        snprintf(path, sizeof path, "test_sdatm_digits_%d.h5", v);
        datm_h5 *f = NULL;
        CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
        CHECK(r.m->ops->save(r.m, f, &err) == DATM_OK);
        datm_h5_close(&f);
        run r2;
        memset(&r2, 0, sizeof r2);
        if (make(&r2, variants[v], 10, 40, &tr)) return 1;
        CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
        if (r2.m->ops->load(r2.m, f, &err)) { fprintf(stderr, "load: %s\n", err.msg); fails++; }
        datm_h5_close(&f);
        remove(path);
        double e2 = test_error(&r2, &te, 20, p2);
        CHECK(e2 == e);
        CHECK(memcmp(p1, p2, sizeof(float) * (size_t)(NT * C)) == 0);
        r.m->ops->destroy(r.m);
        r2.m->ops->destroy(r2.m);
        datm_spec_free(&r.spec);
        datm_spec_free(&r2.spec);
    }
    free(p1);
    free(p2);
    datm_corpus_free(&tr);
    datm_corpus_free(&te);
    return check_result();
}
