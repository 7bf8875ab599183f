/* ctest-labels: e2e  ctest-timeout: 300 */
/* tests/test_sdatm_test_input.c: model.head_test_input (models/sdatm.c) on the real digits set
 * (skipped when absent). With enc_input_keep 0.5 the head trains on features the encoder
 * computes from Binomial(x, 0.5) thinnings; `thinned` makes the encoder read x * 0.5 wherever
 * the head's features are computed outside training. Checks:
 *  1. a short run (2 unsupervised + 10 supervised epochs) with head_test_input thinned, saved
 *     and loaded into a model with head_test_input full: the latter's prediction on the test
 *     documents with every count halved is bit-identical to the former's on the documents
 *     themselves (the encoder reads exactly x * keep, and the standardisation fixed at the
 *     first supervised step came from the same reading, as it is part of the saved head);
 *  2. the prediction is finite and far better than chance (< 0.5; chance 0.9);
 *  3. head_test_input thinned with enc_input_keep 1 is rejected naming the key;
 *  4. head_test_input draws (p(y | x) averaged over 10 random thinnings) on the same saved
 *     model: reproducible bit for bit, rows sum to 1, far better than chance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5.h"
#include "sdatm_testrun.h"
#include "test_check.h"


enum { B = 50, EPOCHS = 12 };
static const char *SPEC =
    "name: t\nseed: 5\ndata:\n  dataset: digits\nmodel:\n  variant: sdatm-n\n  layers: [32, 16]\n"
    "  unsup_epochs: 2\n  kl_warmup_epochs: 1\n  k_min: 1\n  label_weight: 10\n"
    "  enc_input_keep: %g\n  head_test_input: %s\n"
    "train:\n  epochs: 12\n  batch_size: 50\n";

/* The spec with enc_input_keep `keep` and head_test_input `ti`. */
static int make(sdatm_testrun *r, double keep, const char *ti, const datm_corpus *tr,
                datm_error *err)
{
    char text[1024];
    snprintf(text, sizeof text, SPEC, keep, ti);
    return sdatm_testrun_make(r, text, tr, B, EPOCHS, 5, err);
}

int main(void)
{
    datm_corpus tr, te;
    datm_error err = {0};
    sdatm_testrun r;
    if (sdatm_testrun_digits(&tr, &te, &err)) {
        printf("skipped: digits not found (%s)\n", err.msg);
        return 77;
    }
    /* 3: rejected without thinning */
    int rc = make(&r, 1.0, "thinned", &tr, &err);
    printf("enc_input_keep 1, head_test_input thinned -> %s\n", rc ? err.msg : "accepted");
    CHECK(rc != 0 && strstr(err.msg, "model.head_test_input") != NULL);
    sdatm_testrun_drop(&r);

    const int C = tr.n_classes;
    const int64_t NT = te.X.n_rows;
    float *P1 = malloc(sizeof(float) * (size_t)(NT * C)), *P2 = malloc(sizeof(float) * (size_t)(NT * C));
    const char *path = "test_sdatm_test_input.h5";
    if (make(&r, 0.5, "thinned", &tr, &err) || sdatm_testrun_train(&r, &tr, 5, EPOCHS)) {
        fprintf(stderr, "run: %s\n", err.msg);
        fails++;
    } else {
        const double e1 = sdatm_testrun_error(&r, &te.X, te.labels, C, 1, 0, P1);
        datm_h5 *f = NULL;
        CHECK(datm_h5_create(path, &f, &err) == DATM_OK);
        CHECK(r.m->ops->save(r.m, f, &err) == DATM_OK);
        datm_h5_close(&f);
        sdatm_testrun q;
        if (make(&q, 0.5, "full", &tr, &err)) {
            fprintf(stderr, "make: %s\n", err.msg);
            fails++;
        } else {
            CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
            CHECK(q.m->ops->load(q.m, f, &err) == DATM_OK);
            datm_h5_close(&f);
            datm_csr half = {0};
            CHECK(datm_csr_copy(&te.X, &half, &err) == DATM_OK);
            for (int64_t p = 0; p < half.row_ptr[half.n_rows]; p++) half.val[p] *= 0.5f;
            const double e2 = sdatm_testrun_error(&q, &half, te.labels, C, 1, 0, P2);
            printf("test error: thinned %.4f, full model on halved counts %.4f\n", e1, e2);
            CHECK(memcmp(P1, P2, sizeof(float) * (size_t)(NT * C)) == 0);
            CHECK(isfinite(e1) && e1 < 0.5);
            datm_csr_free(&half);
        }
        sdatm_testrun_drop(&q);
        /* 4: draws: averaged over random thinnings, reproducible, as good as chance allows */
        sdatm_testrun d;
        if (make(&d, 0.5, "draws", &tr, &err)) {
            fprintf(stderr, "make: %s\n", err.msg);
            fails++;
        } else {
            CHECK(datm_h5_open(path, 0, &f, &err) == DATM_OK);
            CHECK(d.m->ops->load(d.m, f, &err) == DATM_OK);
            datm_h5_close(&f);
            const double e3 = sdatm_testrun_error(&d, &te.X, te.labels, C, 1, 0, P2);
            const double e4 = sdatm_testrun_error(&d, &te.X, te.labels, C, 1, 0, P1);
            printf("test error: 10 random thinnings %.4f\n", e3);
            CHECK(memcmp(P1, P2, sizeof(float) * (size_t)(NT * C)) == 0);
            CHECK(isfinite(e3) && e3 < 0.5 && e3 == e4);
            double mx = 0;
            for (int64_t i = 0; i < NT; i++) {
                double sp = 0;
                for (int c = 0; c < C; c++) sp += P1[i * C + c];
                mx = fmax(mx, fabs(sp - 1));
            }
            CHECK(mx < 1e-4);   /* an average of distributions */
        }
        sdatm_testrun_drop(&d);
        remove(path);
    }
    sdatm_testrun_drop(&r);
    free(P1);
    free(P2);
    datm_corpus_free(&tr);
    datm_corpus_free(&te);
    return check_result();
}
