/* engine/eval/classify.h: classification metrics for the paper's Tables 3-4 (section III):
 * arg-max prediction from class probabilities, error rate, the per-class confusion matrix,
 * per-class precision/recall/F1 and their macro average.
 *
 * Dimension letters: N documents, C classes. Labels are 0..C-1 (int32, as datm_labels_read
 * gives them). A class that never occurs and is never predicted has no F1 and is left out
 * of the macro average (sklearn's zero_division convention would count it as 0 or 1;
 * leaving it out is the only choice that does not depend on a convention). */
#ifndef DATM_CLASSIFY_H
#define DATM_CLASSIFY_H

#include <stdint.h>

#include "core/core.h"

/* pred[n] = argmax_c probs[n, c] (first maximum on ties); probs (N, C) row-major. */
void datm_argmax_rows(const float *probs, int64_t n, int c, int32_t *pred);

typedef struct datm_class_report {
    int      n_classes;     /* C */
    int64_t  n_docs;        /* N */
    int64_t  n_errors;
    double   error_rate;    /* n_errors / N (NAN when N == 0) */
    int64_t *confusion;     /* (C, C): confusion[t * C + p] = #docs of true class t predicted p */
    double  *precision;     /* (C) NAN where the class is never predicted */
    double  *recall;        /* (C) NAN where the class never occurs */
    double  *f1;            /* (C) NAN where both above are NAN; 0 if one of them is 0 */
    double   macro_f1;      /* mean of the non-NAN f1 */
} datm_class_report;

/* Fills r (allocating its arrays) from true labels y and predictions pred, both (N), values
 * in [0, C). Out-of-range labels are an error naming the index. */
int  datm_class_report_compute(const int32_t *y, const int32_t *pred, int64_t n, int c,
                               datm_class_report *r, datm_error *err);
void datm_class_report_free(datm_class_report *r);

/* Error rate only (no allocation); labels assumed in range. */
double datm_error_rate(const int32_t *y, const int32_t *pred, int64_t n);

#endif
