/* ctest-labels: unit  ctest-timeout: 30  ctest-link: datm_eval */
/* tests/test_classify_metrics.c: classification metrics on hand-computed cases: arg-max with
 * ties, error rate, confusion matrix, per-class precision/recall/F1, macro-F1 with a class
 * that never occurs, and rejection of out-of-range labels. */
#include <math.h>
#include <stdio.h>

#include "eval/classify.h"
#include "test_check.h"

#define NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-12)

int main(void)
{
    /* arg-max: first maximum wins on ties */
    const float probs[4 * 3] = {0.2f, 0.5f, 0.3f,   0.4f, 0.4f, 0.2f,
                                0.1f, 0.1f, 0.8f,   0.3f, 0.3f, 0.4f};
    int32_t am[4];
    datm_argmax_rows(probs, 4, 3, am);
    CHECK(am[0] == 1 && am[1] == 0 && am[2] == 2 && am[3] == 2);

    /* 3 classes + class 3 that never occurs and is never predicted.
     * y    = 0 0 0 1 1 2 2 2 2 2
     * pred = 0 0 1 1 2 2 2 2 0 1
     * confusion rows (true) x cols (pred):
     *   t0: 2 1 0 0   t1: 0 1 1 0   t2: 1 1 3 0   t3: 0 0 0 0
     * errors 4 of 10.
     * class 0: tp 2, pred 3, true 3 -> P 2/3 R 2/3 F1 2/3
     * class 1: tp 1, pred 3, true 2 -> P 1/3 R 1/2 F1 2/(3+2) = 0.4
     * class 2: tp 3, pred 4, true 5 -> P 3/4 R 3/5 F1 6/9 = 2/3
     * macro-F1 over classes 0..2 = (2/3 + 0.4 + 2/3) / 3 */
    const int32_t y[10] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 2};
    const int32_t p[10] = {0, 0, 1, 1, 2, 2, 2, 2, 0, 1};
    datm_class_report r;
    datm_error err = {0};
    CHECK(datm_class_report_compute(y, p, 10, 4, &r, &err) == DATM_OK);
    CHECK(r.n_errors == 4);
    NEAR(r.error_rate, 0.4);
    NEAR(datm_error_rate(y, p, 10), 0.4);
    const int64_t conf[16] = {2, 1, 0, 0, 0, 1, 1, 0, 1, 1, 3, 0, 0, 0, 0, 0};
    for (int i = 0; i < 16; i++) CHECK(r.confusion[i] == conf[i]);
    NEAR(r.precision[0], 2.0 / 3); NEAR(r.recall[0], 2.0 / 3); NEAR(r.f1[0], 2.0 / 3);
    NEAR(r.precision[1], 1.0 / 3); NEAR(r.recall[1], 0.5);     NEAR(r.f1[1], 0.4);
    NEAR(r.precision[2], 0.75);    NEAR(r.recall[2], 0.6);     NEAR(r.f1[2], 2.0 / 3);
    CHECK(isnan(r.precision[3]) && isnan(r.recall[3]) && isnan(r.f1[3]));
    NEAR(r.macro_f1, (2.0 / 3 + 0.4 + 2.0 / 3) / 3);
    /* F1 equals the harmonic mean of P and R where both exist */
    for (int k = 0; k < 3; k++)
        NEAR(r.f1[k], 2 * r.precision[k] * r.recall[k] / (r.precision[k] + r.recall[k]));
    datm_class_report_free(&r);

    /* a class that occurs but is never predicted: precision NAN, recall 0, F1 0 (counted) */
    const int32_t y2[3] = {0, 1, 1}, p2[3] = {1, 1, 1};
    CHECK(datm_class_report_compute(y2, p2, 3, 2, &r, &err) == DATM_OK);
    CHECK(isnan(r.precision[0]) && r.recall[0] == 0 && r.f1[0] == 0);
    NEAR(r.f1[1], 2.0 * 2 / (2 + 3));
    NEAR(r.macro_f1, 0.4);
    datm_class_report_free(&r);

    /* out-of-range labels are rejected with the index named */
    const int32_t bad[2] = {0, 5};
    CHECK(datm_class_report_compute(bad, p2, 2, 2, &r, &err) == DATM_E_INVALID);
    CHECK(err.msg[0] != 0);
    fprintf(stderr, "expected error: %s\n", err.msg);

    return check_result();
}
