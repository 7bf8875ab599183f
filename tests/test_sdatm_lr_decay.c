/* ctest-labels: e2e  ctest-timeout: 300 */
/* tests/test_sdatm_lr_decay.c: model.lr_decay_to (models/sdatm.c, sdatm_lr_factor), cosine
 * annealing of the encoder's and the head's Adam steps over the supervised iterations.
 *  1. sdatm_lr_factor: 1 before the first supervised iteration and for to >= 1; 1 at the first
 *     supervised iteration, `to` at the last, (1 + to) / 2 half way, never increasing, within
 *     [to, 1]; a one-iteration supervised phase gets `to`.
 *  2. On the real digits set (skipped when absent), sdatm-n, 3 unsupervised + 9 supervised
 *     epochs: lr_decay_to 1 gives bit for bit the predictions of a run without the key; 0.05
 *     trains (finite), changes them, and classifies the test images far better than chance
 *     (< 0.5; chance 0.9); with the supervised phase left out (3 epochs, all unsupervised)
 *     0.05 gives bit for bit the predictions of a run without the key (the unsupervised
 *     epochs keep the full steps). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/sdatm.h"
#include "sdatm_testrun.h"
#include "test_check.h"

enum { B = 50, SEED = 3 };

static void check_factor(void)
{
    const int64_t first = 31, total = 130;   /* 100 supervised iterations */
    const double to = 0.1;
    CHECK(sdatm_lr_factor(1, first, total, to) == 1.0, "before the supervised phase");
    CHECK(sdatm_lr_factor(30, first, total, to) == 1.0, "last unsupervised iteration");
    CHECK(sdatm_lr_factor(first, first, total, to) == 1.0, "first supervised iteration: %g",
          sdatm_lr_factor(first, first, total, to));
    CHECK(fabs(sdatm_lr_factor(total, first, total, to) - to) < 1e-15, "last iteration: %g",
          sdatm_lr_factor(total, first, total, to));
    /* half way: f = 0.5 at iteration first + (total - first) / 2 (total - first = 99 is odd:
     * use a range with an even length) */
    CHECK(fabs(sdatm_lr_factor(81, 31, 131, to) - (1 + to) / 2) < 1e-15, "half way: %g",
          sdatm_lr_factor(81, 31, 131, to));
    double prev = 1.0;
    int bad = 0;
    for (int64_t it = 1; it <= total; it++) {
        const double f = sdatm_lr_factor(it, first, total, to);
        bad += f > prev || f < to - 1e-15 || f > 1.0;
        prev = f;
    }
    CHECK(bad == 0, "%d iterations out of order or outside [to, 1]", bad);
    for (int64_t it = 1; it <= total; it++) bad += sdatm_lr_factor(it, first, total, 1.0) != 1.0;
    CHECK(bad == 0, "to = 1 is not constant");
    CHECK(sdatm_lr_factor(5, 5, 5, to) == to, "one supervised iteration: %g",
          sdatm_lr_factor(5, 5, 5, to));
    printf("factor: %.4f at the first supervised iteration, %.4f half way, %.4f at the last\n",
           sdatm_lr_factor(first, first, total, to), sdatm_lr_factor(81, 31, 131, to),
           sdatm_lr_factor(total, first, total, to));
}

static const char *SPEC =
    "name: t\nseed: 3\ndata:\n  dataset: digits\nmodel:\n  variant: sdatm-n\n  layers: [32, 16]\n"
    "  unsup_epochs: 3\n  kl_warmup_epochs: 2\n  k_min: 1\n  label_weight: 10\n%s";

/* A fresh model trained `epochs` epochs; its test error at the posterior means (P gets
 * p(y | x)); NAN on a failure. */
static double run(const char *extra, int64_t epochs, const datm_corpus *tr,
                  const datm_corpus *te, float *P)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, extra);
    sdatm_testrun r;
    datm_error err = {0};
    double e = NAN;
    if (sdatm_testrun_make(&r, text, tr, B, epochs, SEED, &err))
        fprintf(stderr, "%s: %s\n", extra, err.msg);
    else if (!sdatm_testrun_train(&r, tr, SEED, epochs))
        e = sdatm_testrun_error(&r, &te->X, te->labels, te->n_classes, 1, 0, P);
    sdatm_testrun_drop(&r);
    return e;
}

static double maxdiff(const float *a, const float *b, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i]));
    return d;
}

int main(void)
{
    check_factor();
    datm_corpus tr, te;
    datm_error err = {0};
    if (sdatm_testrun_digits(&tr, &te, &err)) {
        printf("skipped: the digits part (%s)\n", err.msg);
        return fails ? 1 : 77;
    }
    const int64_t NP = te.X.n_rows * te.n_classes;
    float *P0 = malloc(sizeof(float) * (size_t)NP), *P1 = malloc(sizeof(float) * (size_t)NP);
    float *P2 = malloc(sizeof(float) * (size_t)NP);
    const double e0 = run("", 12, &tr, &te, P0);
    const double e1 = run("  lr_decay_to: 1\n", 12, &tr, &te, P1);
    const double e2 = run("  lr_decay_to: 0.05\n", 12, &tr, &te, P2);
    const double d01 = maxdiff(P0, P1, NP), d02 = maxdiff(P0, P2, NP);
    printf("3 + 9 epochs: test error without the key %.4f, lr_decay_to 1 %.4f (max |dp| %.1e), "
           "0.05 %.4f (max |dp| %.2g)\n", e0, e1, d01, e2, d02);
    CHECK(isfinite(e0) && isfinite(e1) && isfinite(e2), "a run failed");
    CHECK(d01 == 0, "lr_decay_to 1 differs from the default by %g", d01);
    CHECK(d02 > 1e-3, "lr_decay_to 0.05 has no effect (max |dp| %g)", d02);
    CHECK(e2 < 0.5, "lr_decay_to 0.05: test error %g (chance 0.9)", e2);
    const double u0 = run("", 3, &tr, &te, P0);
    const double u2 = run("  lr_decay_to: 0.05\n", 3, &tr, &te, P2);
    const double du = maxdiff(P0, P2, NP);
    printf("3 unsupervised epochs only: without the key %.4f, lr_decay_to 0.05 %.4f (max |dp| "
           "%.1e)\n", u0, u2, du);
    CHECK(isfinite(u0) && isfinite(u2), "an unsupervised-only run failed");
    CHECK(du == 0, "lr_decay_to changed the unsupervised epochs (max |dp| %g)", du);
    free(P0); free(P1); free(P2);
    datm_corpus_free(&tr);
    datm_corpus_free(&te);
    return fails ? 1 : 0;
}
