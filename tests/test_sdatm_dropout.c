/* ctest-labels: unit;stat;e2e  ctest-timeout: 300 */
/* tests/test_sdatm_dropout.c: model.head_dropout (models/sdatm.c, sdatm_dropout_apply).
 *  1. sdatm_dropout_apply on 200,000 entries, p = 0.3: every mask entry is 0 or 1 / (1 - p)
 *     and out = feat * mask exactly; the kept share is 1 - p within 4 standard errors; the
 *     dropped sum is unbiased for the feature sum (|sum out - sum feat| < 4 SE, SE^2 =
 *     sum feat^2 p / (1 - p)); the same (seed, iteration, step) gives the same mask, another
 *     iteration or step an independent one (agreement share (1-p)^2 + p^2 within 4 SE).
 *  2. On the real digits set (skipped when absent), sdatm-n and sdatm-l, 3 unsupervised + 9
 *     supervised epochs: head_dropout 0 gives bit for bit the predictions of a run without the
 *     key (the paper's path draws no masks); head_dropout 0.5 trains (finite), changes the
 *     predictions, and classifies the test images far better than chance (< 0.5; chance 0.9). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/sdatm.h"
#include "data/data.h"
#include "eval/classify.h"
#include "pipeline/pipeline.h"
#include "sdatm_testrun.h"
#include "test_check.h"

enum { B = 50, EPOCHS = 12 };

static void check_apply(void)
{
    const int64_t n = 200000;
    const double p = 0.3, keep = 1 - p;
    float *feat = malloc(sizeof(float) * (size_t)n), *m1 = malloc(sizeof(float) * (size_t)n);
    float *o1 = malloc(sizeof(float) * (size_t)n), *m2 = malloc(sizeof(float) * (size_t)n);
    float *o2 = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) feat[i] = (float)(0.5 + sin(0.001 * (double)i) + (double)(i % 7));
    sdatm_dropout_apply(11, 5, 0, p, n, feat, m1, o1);
    const float inv = 1.0f / (float)keep;
    int64_t kept = 0, bad = 0;
    double so = 0, sf = 0, sf2 = 0;
    for (int64_t i = 0; i < n; i++) {
        bad += !(m1[i] == 0.0f || m1[i] == inv) || o1[i] != feat[i] * m1[i];
        kept += m1[i] != 0.0f;
        so += o1[i];
        sf += feat[i];
        sf2 += (double)feat[i] * feat[i];
    }
    const double share = (double)kept / (double)n, se_share = sqrt(keep * p / (double)n);
    const double se_sum = sqrt(sf2 * p / keep);
    printf("apply: kept %.5f (1 - p = %.2f, SE %.1e), sum out - sum feat = %.1f (SE %.1f), "
           "%lld malformed\n", share, keep, se_share, so - sf, se_sum, (long long)bad);
    CHECK(bad == 0, "%lld entries are not 0 / 1/(1-p) or out != feat * mask", (long long)bad);
    CHECK(fabs(share - keep) < 4 * se_share, "kept share %g vs %g", share, keep);
    CHECK(fabs(so - sf) < 4 * se_sum, "dropped sum biased: %g vs %g", so, sf);
    sdatm_dropout_apply(11, 5, 0, p, n, feat, m2, o2);
    CHECK(!memcmp(m1, m2, sizeof(float) * (size_t)n), "same stream, different mask");
    const double agree_exp = keep * keep + p * p, se_agree = sqrt(agree_exp * (1 - agree_exp) / (double)n);
    for (int which = 0; which < 2; which++) {
        sdatm_dropout_apply(11, which ? 5 : 6, which ? 1 : 0, p, n, feat, m2, o2);
        int64_t agree = 0;
        for (int64_t i = 0; i < n; i++) agree += (m1[i] != 0.0f) == (m2[i] != 0.0f);
        const double a = (double)agree / (double)n;
        printf("apply: other %s: agreement %.5f (independent: %.4f, SE %.1e)\n",
               which ? "step" : "iteration", a, agree_exp, se_agree);
        CHECK(fabs(a - agree_exp) < 4 * se_agree, "masks of another %s not independent: %g",
              which ? "step" : "iteration", a);
    }
    free(feat); free(m1); free(o1); free(m2); free(o2);
}

static const char *SPEC =
    "name: t\nseed: 3\ndata:\n  dataset: digits\nmodel:\n  variant: %s\n  layers: [32, 16]\n"
    "  unsup_epochs: 3\n  kl_warmup_epochs: 2\n  k_min: 1\n  label_weight: 10\n%s"
    "train:\n  epochs: %d\n  batch_size: 50\n";

/* Trains a fresh model for EPOCHS epochs (the engine's batch order) and predicts the test set
 * at the posterior means into P; returns the test error, or NAN on a failure. */
static double run(const char *variant, const char *extra, const datm_corpus *tr,
                  const datm_corpus *te, float *P)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, variant, extra, EPOCHS);
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_spec spec;
    datm_error err = {0};
    datm_model *m = NULL;
    memset(&spec, 0, sizeof spec);
    const int64_t N = tr->X.n_rows, bpe = (N + B - 1) / B;
    datm_run_info info = {.n_train = N, .n_vocab = tr->X.n_cols, .n_classes = tr->n_classes,
                          .batch_size = B, .epochs = EPOCHS, .total_iters = bpe * EPOCHS,
                          .seed = 3, .threads = 1, .train = &tr->X, .train_labels = tr->labels};
    int rc = datm_spec_load_text(text, "test", NULL, 0, &cat, &spec, &err);
    if (!rc) rc = spec.ops->create(datm_spec_section(&spec, DATM_SEC_MODEL), &info, &m, &err);
    datm_batch_iter it;
    int have_it = 0;
    if (!rc) rc = datm_batch_iter_init(&it, N, B, 3, 1, 0, &err);
    have_it = !rc;
    int64_t iter = 0;
    int32_t lab[B];
    for (int64_t e = 0; e < EPOCHS && !rc; e++)
        for (;;) {
            const int64_t *rows;
            const int64_t n = datm_batch_iter_next(&it, &rows);
            if (n == 0) break;
            datm_csr X = {0};
            rc = datm_csr_select_rows(&tr->X, rows, n, &X, &err);
            for (int64_t i = 0; i < n; i++) lab[i] = tr->labels[rows[i]];
            datm_batch b = {&X, rows, lab};
            datm_train_ctx ctx = {++iter, e, 3, (double)N / (double)B};
            datm_train_stats st;
            memset(&st, 0, sizeof st);
            if (!rc) rc = m->ops->train_batch(m, &b, &ctx, &st, &err);
            datm_csr_free(&X);
            if (!rc && !isfinite(st.loss)) rc = datm_error_set(&err, DATM_E_NUMERIC, "loss %g", st.loss);
            if (rc) break;
        }
    if (have_it) datm_batch_iter_free(&it);
    double e = NAN;
    int32_t *pred = malloc(sizeof(int32_t) * (size_t)te->X.n_rows);
    if (!rc) rc = m->ops->predict(m, &te->X, 1, 0, P, &err);
    if (!rc) {
        datm_argmax_rows(P, te->X.n_rows, te->n_classes, pred);
        e = datm_error_rate(te->labels, pred, te->X.n_rows);
    } else {
        fprintf(stderr, "%s%s: %s\n", variant, extra, err.msg);
    }
    free(pred);
    if (m) m->ops->destroy(m);
    datm_spec_free(&spec);
    return e;
}

int main(void)
{
    check_apply();
    datm_corpus tr, te;
    datm_error err = {0};
    if (sdatm_testrun_digits(&tr, &te, &err)) {
        printf("skipped: the digits part (%s)\n", err.msg);
        return fails ? 1 : 77;
    }
    const int64_t NP = te.X.n_rows * te.n_classes;
    float *P0 = malloc(sizeof(float) * (size_t)NP), *P1 = malloc(sizeof(float) * (size_t)NP);
    float *P2 = malloc(sizeof(float) * (size_t)NP);
    const char *variant[2] = {"sdatm-n", "sdatm-l"};
    for (int v = 0; v < 2; v++) {
        const double e0 = run(variant[v], "", &tr, &te, P0);
        const double e1 = run(variant[v], "  head_dropout: 0\n", &tr, &te, P1);
        const double e2 = run(variant[v], "  head_dropout: 0.5\n", &tr, &te, P2);
        double d01 = 0, d02 = 0;
        for (int64_t i = 0; i < NP; i++) {
            d01 = fmax(d01, fabs((double)P0[i] - P1[i]));
            d02 = fmax(d02, fabs((double)P0[i] - P2[i]));
        }
        printf("%s: test error without the key %.4f, head_dropout 0 %.4f (max |dp| %.1e), "
               "0.5 %.4f (max |dp| %.2g)\n", variant[v], e0, e1, d01, e2, d02);
        CHECK(isfinite(e0) && isfinite(e1) && isfinite(e2), "%s: a run failed", variant[v]);
        CHECK(d01 == 0, "%s: head_dropout 0 differs from the default by %g", variant[v], d01);
        CHECK(d02 > 1e-3, "%s: head_dropout 0.5 has no effect (max |dp| %g)", variant[v], d02);
        CHECK(e2 < 0.5, "%s: head_dropout 0.5 test error %g (chance 0.9)", variant[v], e2);
    }
    free(P0); free(P1); free(P2);
    datm_corpus_free(&tr);
    datm_corpus_free(&te);
    return fails ? 1 : 0;
}
