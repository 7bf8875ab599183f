/* engine/pipeline/curves.c: the per-evaluation rows of /curves (results_layout.h): one 1-D
 * f64 dataset per column, equal lengths, NaN where a value was not measured. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/results_layout.h"
#include "pipeline/run_internal.h"

int datm_curves_init(datm_curve_table *t, int n_layers, datm_error *err)
{
    memset(t, 0, sizeof *t);
    if (n_layers < 1 || n_layers > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "curves: %d layers (1..%d)", n_layers,
                              DATM_MAX_LAYERS);
    static const char *const fixed[] = {DATM_CURVE_ITERATION, DATM_CURVE_EPOCH, DATM_CURVE_WALL_S,
                                        DATM_CURVE_LOSS, DATM_CURVE_LOGLIK, DATM_CURVE_PERPLEXITY,
                                        "perplexity_observed"};
    for (size_t i = 0; i < DATM_COUNTOF(fixed); i++)
        snprintf(t->names[t->n_cols++], sizeof t->names[0], "%s", fixed[i]);
    for (int l = 1; l <= n_layers; l++)
        snprintf(t->names[t->n_cols++], sizeof t->names[0], DATM_CURVE_KL_FMT, l);
    for (int l = 1; l <= n_layers; l++)
        snprintf(t->names[t->n_cols++], sizeof t->names[0], DATM_CURVE_STEP_FMT, l);
    return DATM_OK;
}

int datm_curves_append(datm_curve_table *t, const double *row, datm_error *err)
{
    if (t->n_rows == t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 64;
        for (int c = 0; c < t->n_cols; c++) {
            double *p = datm_alloc_array((size_t)cap, sizeof *p, err);
            if (!p) return DATM_E_NOMEM;
            if (t->n_rows) memcpy(p, t->col[c], (size_t)t->n_rows * sizeof *p);
            datm_free(t->col[c]);
            t->col[c] = p;
        }
        t->cap = cap;
    }
    for (int c = 0; c < t->n_cols; c++) t->col[c][t->n_rows] = row[c];
    t->n_rows++;
    return DATM_OK;
}

int datm_curves_write(const datm_curve_table *t, datm_h5 *g, datm_error *err)
{
    int64_t dims[1] = {t->n_rows};
    double dummy = NAN;
    for (int c = 0; c < t->n_cols; c++) {
        int rc = datm_h5_write_f64(g, t->names[c], t->n_rows ? t->col[c] : &dummy, 1, dims, err);
        if (rc) return rc;
    }
    return DATM_OK;
}

int datm_curves_load(datm_curve_table *t, datm_h5 *g, datm_error *err)
{
    int64_t dims[DATM_H5_MAX_RANK];
    int rank = datm_h5_shape(g, t->names[0], dims);
    if (rank != 1) return datm_error_set(err, DATM_E_FORMAT, "%s: no curve '%s'", datm_h5_where(g),
                                         t->names[0]);
    int64_t n = dims[0];
    t->n_rows = 0;
    double *row = datm_alloc_array((size_t)t->n_cols, sizeof *row, err);
    double *cols[DATM_CURVE_MAX_COLS] = {0};
    int rc = row ? DATM_OK : DATM_E_NOMEM;
    for (int c = 0; c < t->n_cols && !rc; c++) {
        cols[c] = datm_alloc_array((size_t)(n ? n : 1), sizeof(double), err);
        if (!cols[c]) { rc = DATM_E_NOMEM; break; }
        if (n) rc = datm_h5_read_f64(g, t->names[c], cols[c], 1, &n, err);
    }
    for (int64_t i = 0; i < n && !rc; i++) {
        for (int c = 0; c < t->n_cols; c++) row[c] = cols[c][i];
        rc = datm_curves_append(t, row, err);
    }
    for (int c = 0; c < t->n_cols; c++) datm_free(cols[c]);
    datm_free(row);
    return rc;
}

void datm_curves_free(datm_curve_table *t)
{
    for (int c = 0; c < t->n_cols; c++) datm_free(t->col[c]);
    memset(t, 0, sizeof *t);
}
