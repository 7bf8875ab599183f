/* engine/eval/classify.c: classification metrics (error rate, confusion matrix, per-class and
 * macro F1) used for the paper's classification tables (section III, Tables 3-4). */
#include "eval/classify.h"

#include <math.h>
#include <string.h>

void datm_argmax_rows(const float *probs, int64_t n, int c, int32_t *pred)
{
    DATM_ASSERT(c >= 1);
    for (int64_t i = 0; i < n; i++) {
        const float *p = probs + i * (int64_t)c;
        int best = 0;
        for (int j = 1; j < c; j++)
            if (p[j] > p[best]) best = j;
        pred[i] = best;
    }
}

double datm_error_rate(const int32_t *y, const int32_t *pred, int64_t n)
{
    if (n <= 0) return NAN;
    int64_t e = 0;
    for (int64_t i = 0; i < n; i++) e += (y[i] != pred[i]);
    return (double)e / (double)n;
}

void datm_class_report_free(datm_class_report *r)
{
    if (!r) return;
    datm_free(r->confusion);
    datm_free(r->precision);
    datm_free(r->recall);
    datm_free(r->f1);
    memset(r, 0, sizeof *r);
}

int datm_class_report_compute(const int32_t *y, const int32_t *pred, int64_t n, int c,
                              datm_class_report *r, datm_error *err)
{
    memset(r, 0, sizeof *r);
    if (c < 1) return datm_error_set(err, DATM_E_INVALID, "class report: %d classes", c);
    for (int64_t i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= c)
            return datm_error_set(err, DATM_E_INVALID,
                                  "class report: true label %d of document %lld not in [0, %d)",
                                  (int)y[i], (long long)i, c);
        if (pred[i] < 0 || pred[i] >= c)
            return datm_error_set(err, DATM_E_INVALID,
                                  "class report: predicted label %d of document %lld not in [0, %d)",
                                  (int)pred[i], (long long)i, c);
    }
    r->n_classes = c;
    r->n_docs = n;
    r->confusion = datm_alloc_array((size_t)c * (size_t)c, sizeof(int64_t), err);
    r->precision = datm_alloc_array((size_t)c, sizeof(double), err);
    r->recall = datm_alloc_array((size_t)c, sizeof(double), err);
    r->f1 = datm_alloc_array((size_t)c, sizeof(double), err);
    if (!r->confusion || !r->precision || !r->recall || !r->f1) {
        datm_class_report_free(r);
        return DATM_E_NOMEM;
    }
    for (int64_t i = 0; i < n; i++) {
        r->confusion[(int64_t)y[i] * c + pred[i]]++;
        r->n_errors += (y[i] != pred[i]);
    }
    r->error_rate = n > 0 ? (double)r->n_errors / (double)n : NAN;

    double f1_sum = 0;
    int f1_n = 0;
    for (int k = 0; k < c; k++) {
        int64_t tp = r->confusion[(int64_t)k * c + k], row = 0, col = 0;
        for (int j = 0; j < c; j++) {
            row += r->confusion[(int64_t)k * c + j];   /* true class k */
            col += r->confusion[(int64_t)j * c + k];   /* predicted k */
        }
        r->precision[k] = col > 0 ? (double)tp / (double)col : NAN;
        r->recall[k] = row > 0 ? (double)tp / (double)row : NAN;
        if (row == 0 && col == 0) {
            r->f1[k] = NAN;   /* class absent from both: no F1 */
        } else {
            /* F1 = 2 tp / (2 tp + fp + fn); equals the harmonic mean when both exist and is
             * 0 when the class occurs but is never predicted (or vice versa). */
            r->f1[k] = 2.0 * (double)tp / (double)(row + col);
            f1_sum += r->f1[k];
            f1_n++;
        }
    }
    r->macro_f1 = f1_n > 0 ? f1_sum / f1_n : NAN;
    return DATM_OK;
}
