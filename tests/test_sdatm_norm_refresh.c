/* ctest-labels: e2e  ctest-timeout: 600 */
/* tests/test_sdatm_norm_refresh.c: model.head_norm_every / sdatm_head_norm_refresh (models/
 * sdatm.c) on the real digits set (skipped when absent), for the three places the change is
 * folded into: the softmax itself (sdatm-l), the per-layer g_1 maps (sdatm-n) and the first
 * hidden layer (sdatm-n with head_g1 false). After a short run (3 unsupervised + 4 supervised
 * epochs, theta has drifted from the standardisation fixed at the first supervised step):
 *  1. the refresh leaves the prediction at the posterior means unchanged (the fold is exact in
 *     real arithmetic; float rounding on logits of order 10 allows ~1e-5, checked at 2e-4);
 *  2. the stored shift and scale are then the mean and 1/sd of log1p(posterior-mean theta) of
 *     the training documents, recomputed here (relative 1e-3 on features with sd > 1e-3);
 *  3. a training run with head_norm_every 1 stays finite and classifies the test images far
 *     better than chance (< 0.5; chance 0.9);
 *  4. head_norm_every with head_standardize false is rejected naming the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/sdatm.h"
#include "data/data.h"
#include "eval/classify.h"
#include "io/h5.h"
#include "pipeline/pipeline.h"
#include "sdatm_testrun.h"
#include "test_check.h"


enum { B = 50 };
static const char *SPEC =
    "name: t\nseed: 4\ndata:\n  dataset: digits\nmodel:\n  variant: %s\n  layers: [32, 16]\n"
    "  unsup_epochs: 3\n  kl_warmup_epochs: 2\n  k_min: 1\n  label_weight: 10\n"
    "  head_norm_every: %d\n%s"
    "train:\n  epochs: %d\n  batch_size: 50\n";

typedef sdatm_testrun run;

static int make(run *r, const char *variant, int every, const char *extra, int epochs,
                const datm_corpus *tr, datm_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, every, extra, epochs);
    return sdatm_testrun_make(r, text, tr, B, epochs, 4, err);
}

static void drop(run *r) { sdatm_testrun_drop(r); }

static int train(run *r, const datm_corpus *tr, int epochs)
{
    return sdatm_testrun_train(r, tr, 4, epochs);
}

static double predict(run *r, const datm_corpus *te, float *P)
{
    return sdatm_testrun_error(r, &te->X, te->labels, te->n_classes, 1, 0, P);
}

/* Check 2: stored shift / scale vs log1p(posterior-mean theta) of all training documents. */
static void check_norm(run *r, const datm_corpus *tr)
{
    datm_error err = {0};
    const char *path = "test_sdatm_norm_refresh.h5";
    datm_h5 *f = NULL, *g = NULL;
    CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
    CHECK(r->m->ops->save(r->m, f, &err) == DATM_OK);
    int64_t dims[2] = {0, 0};
    CHECK(datm_h5_group(f, "head", 0, &g, &err) == DATM_OK);
    CHECK(datm_h5_shape(g, "head.norm_shift", dims) == 2);
    const int64_t S = dims[1];
    float *sh = malloc(sizeof(float) * (size_t)S), *sc = malloc(sizeof(float) * (size_t)S);
    CHECK(datm_h5_read_f32(g, "head.norm_shift", sh, 2, dims, &err) == DATM_OK);
    CHECK(datm_h5_read_f32(g, "head.norm_scale", sc, 2, dims, &err) == DATM_OK);
    datm_h5_close(&g);
    datm_h5_close(&f);
    remove(path);
    datm_theta th;
    memset(&th, 0, sizeof th);
    CHECK(r->m->ops->infer(r->m, &tr->X, 1, 0, &th, &err) == DATM_OK);
    int64_t j = 0, checked = 0;
    double worst_m = 0, worst_s = 0;
    for (int l = 0; l < th.n_layers; l++)
        for (int64_t k = 0; k < th.k[l]; k++, j++) {
            double s1 = 0, s2 = 0;
            for (int64_t n = 0; n < th.n_docs; n++) {
                const double x = log1p((double)th.theta[l][n * th.k[l] + k]);
                s1 += x;
                s2 += x * x;
            }
            const double mu = s1 / (double)th.n_docs;
            const double sd = sqrt(fmax(s2 / (double)th.n_docs - mu * mu, 0));
            if (j >= S || sd <= 1e-3) continue;
            checked++;
            worst_m = fmax(worst_m, fabs(sh[j] - mu) / sd);
            worst_s = fmax(worst_s, fabs(sc[j] * sd - 1));
        }
    printf("  norm vs recomputed: %lld of %lld features checked, max |shift - mean| / sd %.2e, "
           "max |scale sd - 1| %.2e\n", (long long)checked, (long long)S, worst_m, worst_s);
    CHECK(j == S && checked > S / 2);
    CHECK(worst_m < 1e-3 && worst_s < 1e-3);
    datm_theta_free(&th);
    free(sh);
    free(sc);
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
    float *P1 = malloc(sizeof(float) * (size_t)(NT * C)), *P2 = malloc(sizeof(float) * (size_t)(NT * C));
    const char *variant[3] = {"sdatm-l", "sdatm-n", "sdatm-n"};
    const char *extra[3] = {"", "", "  head_g1: false\n"};
    for (int v = 0; v < 3; v++) {
        printf("%s %s", variant[v], extra[v][0] ? extra[v] : "\n");
        run r;
        if (make(&r, variant[v], 0, extra[v], 7, &tr, &err) || train(&r, &tr, 7)) {
            fprintf(stderr, "make/train: %s\n", err.msg);
            fails++;
            drop(&r);
            continue;
        }
        const double e1 = predict(&r, &te, P1);
        CHECK(sdatm_head_norm_refresh(r.m, &err) == DATM_OK);
        const double e2 = predict(&r, &te, P2);
        double worst = 0;
        for (int64_t i = 0; i < NT * C; i++) worst = fmax(worst, fabs((double)P1[i] - P2[i]));
        printf("  refresh: test error %.4f -> %.4f, max |p - p'| %.2e\n", e1, e2, worst);
        CHECK(worst < 2e-4);
        check_norm(&r, &tr);
        drop(&r);

        /* a run that refreshes every supervised epoch */
        if (make(&r, variant[v], 1, extra[v], 12, &tr, &err) || train(&r, &tr, 12)) {
            fprintf(stderr, "make/train: %s\n", err.msg);
            fails++;
        } else {
            const double e = predict(&r, &te, P1);
            printf("  head_norm_every 1, 12 epochs: test error %.4f\n", e);
            CHECK(e < 0.5);
        }
        drop(&r);
    }
    {
        run r;
        int rc = make(&r, "sdatm-l", 1, "  head_standardize: false\n", 7, &tr, &err);
        printf("head_norm_every without head_standardize -> %s\n", rc ? err.msg : "accepted");
        CHECK(rc != 0 && strstr(err.msg, "model.head_norm_every") != NULL);
        drop(&r);
    }
    free(P1);
    free(P2);
    datm_corpus_free(&tr);
    datm_corpus_free(&te);
    return check_result();
}
