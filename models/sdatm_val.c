/* models/sdatm_val.c: the validation split and early-stopping record of sDATM's supervised
 * phase (see sdatm_val.h; not in the paper). */
#include "sdatm_val.h"

#include <math.h>
#include <string.h>

#include "io/h5.h"
#include "rand/rand.h"

#define SDATM_VAL_STREAM 7100   /* DATM_STREAM_INIT index of the split's shuffles */

void sdatm_val_free(sdatm_val *v)
{
    datm_free(v->rows);
    datm_free(v->fit_rows);
    datm_free(v->is_val);
    datm_free(v->epoch);
    datm_free(v->error);
    memset(v, 0, sizeof *v);
    v->best = -1;
}

int sdatm_val_split(sdatm_val *v, const int32_t *labels, int64_t N, int C, double fraction,
                    int64_t patience, uint64_t seed, datm_error *err)
{
    memset(v, 0, sizeof *v);
    v->best = -1;
    v->N = N;
    v->patience = patience;
    if (fraction <= 0) return DATM_OK;
    int64_t *count = datm_alloc_array((size_t)C, sizeof(int64_t), err);
    int64_t *idx = datm_alloc_array((size_t)DATM_MAX(N, 1), sizeof(int64_t), err);
    v->is_val = datm_alloc_array((size_t)DATM_MAX(N, 1), sizeof(uint8_t), err);
    int rc = (count && idx && v->is_val) ? DATM_OK : DATM_E_NOMEM;
    for (int64_t i = 0; i < N && !rc; i++) {
        if (labels[i] < 0 || labels[i] >= C)
            rc = datm_error_set(err, DATM_E_INVALID, "model.val_fraction: training label %d of "
                                "document %lld is outside 0..%d", labels[i], (long long)i, C - 1);
        else count[labels[i]]++;
    }
    for (int c = 0; c < C && !rc; c++) {
        /* the class's documents in row order, shuffled (Fisher-Yates, own stream per class),
         * the first round(fraction * N_c) validate */
        int64_t m = 0;
        for (int64_t i = 0; i < N; i++)
            if (labels[i] == c) idx[m++] = i;
        datm_rng r;
        datm_rng_init2(&r, seed, DATM_STREAM_INIT, SDATM_VAL_STREAM, (uint64_t)c);
        for (int64_t i = m - 1; i > 0; i--) {
            int64_t j = (int64_t)datm_rng_below(&r, (uint64_t)i + 1);
            int64_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
        }
        const int64_t take = (int64_t)floor(fraction * (double)m + 0.5);
        for (int64_t i = 0; i < take; i++) v->is_val[idx[i]] = 1;
        v->n += take;
    }
    if (!rc && v->n == 0)
        rc = datm_error_set(err, DATM_E_INVALID, "model.val_fraction: %g of %lld training "
                            "documents in %d classes gives no validation document (raise it or "
                            "set 0 to turn early stopping off)", fraction, (long long)N, C);
    if (!rc && v->n >= N)
        rc = datm_error_set(err, DATM_E_INVALID, "model.val_fraction: %g leaves no training "
                            "document (%lld of %lld held out)", fraction, (long long)v->n,
                            (long long)N);
    if (!rc) {
        v->rows = datm_alloc_array((size_t)v->n, sizeof(int64_t), err);
        v->fit_rows = datm_alloc_array((size_t)(N - v->n), sizeof(int64_t), err);
        if (!v->rows || !v->fit_rows) rc = DATM_E_NOMEM;
    }
    if (!rc) {
        int64_t a = 0, b = 0;
        for (int64_t i = 0; i < N; i++) {
            if (v->is_val[i]) v->rows[a++] = i;
            else v->fit_rows[b++] = i;
        }
    }
    datm_free(count);
    datm_free(idx);
    if (rc) sdatm_val_free(v);
    return rc;
}

int sdatm_val_record(sdatm_val *v, int64_t epoch, double error, sdatm_val_verdict *verdict,
                     datm_error *err)
{
    if (v->n_checks == v->cap) {
        const int64_t cap = v->cap ? 2 * v->cap : 64;
        int64_t *e = datm_alloc_array((size_t)cap, sizeof(int64_t), err);
        double *x = datm_alloc_array((size_t)cap, sizeof(double), err);
        if (!e || !x) { datm_free(e); datm_free(x); return DATM_E_NOMEM; }
        if (v->n_checks) {
            memcpy(e, v->epoch, (size_t)v->n_checks * sizeof(int64_t));
            memcpy(x, v->error, (size_t)v->n_checks * sizeof(double));
        }
        datm_free(v->epoch);
        datm_free(v->error);
        v->epoch = e;
        v->error = x;
        v->cap = cap;
    }
    const int64_t i = v->n_checks++;
    v->epoch[i] = epoch;
    v->error[i] = error;
    if (v->best < 0 || error < v->error[v->best]) {
        v->best = i;
        *verdict = SDATM_VAL_BEST;
    } else if (v->patience > 0 && i - v->best >= v->patience) {
        *verdict = SDATM_VAL_STOP;
    } else {
        *verdict = SDATM_VAL_WORSE;
    }
    return DATM_OK;
}

int sdatm_val_save(const sdatm_val *v, struct datm_h5 *g, datm_error *err)
{
    datm_h5 *gv = NULL;
    int rc = datm_h5_delete(g, "early_stopping", err);   /* a checkpoint rewritten in place */
    if (!rc) rc = datm_h5_group(g, "early_stopping", 1, &gv, err);
    const int64_t nv[1] = {v->n}, nc[1] = {v->n_checks};
    if (!rc) rc = datm_h5_write_i64(gv, "val_docs", v->rows, 1, nv, err);
    if (!rc && v->n_checks) rc = datm_h5_write_i64(gv, "epoch", v->epoch, 1, nc, err);
    if (!rc && v->n_checks) rc = datm_h5_write_f64(gv, "val_error", v->error, 1, nc, err);
    if (!rc) rc = datm_h5_attr_i64(gv, "best_epoch", v->best >= 0 ? v->epoch[v->best] : 0, err);
    if (!rc) rc = datm_h5_attr_f64(gv, "best_error", v->best >= 0 ? v->error[v->best] : NAN, err);
    if (!rc) rc = datm_h5_attr_i64(gv, "stopped_epoch", v->stopped_epoch, err);
    if (!rc) rc = datm_h5_attr_i64(gv, "patience", v->patience, err);
    if (!rc) rc = datm_h5_attr_i64(gv, "monitor_only", v->monitor_only, err);
    datm_h5_close(&gv);
    return rc;
}

int sdatm_val_load(sdatm_val *v, struct datm_h5 *g, datm_error *err)
{
    if (!datm_h5_exists(g, "early_stopping")) return DATM_OK;
    datm_h5 *gv = NULL;
    int rc = datm_h5_group(g, "early_stopping", 0, &gv, err);
    int64_t dims[2] = {0, 0}, stopped = 0, best_epoch = 0;
    if (!rc && datm_h5_shape(gv, "val_docs", dims) >= 0 && dims[0] != v->n)
        rc = datm_error_set(err, DATM_E_INVALID, "early_stopping/val_docs: %lld documents in the "
                            "file, %lld from this spec's model.val_fraction and seed",
                            (long long)dims[0], (long long)v->n);
    int64_t *rows = NULL;
    if (!rc && v->n) {
        rows = datm_alloc_array((size_t)v->n, sizeof(int64_t), err);
        if (!rows) rc = DATM_E_NOMEM;
        if (!rc) rc = datm_h5_read_i64(gv, "val_docs", rows, 1, &v->n, err);
        if (!rc && memcmp(rows, v->rows, (size_t)v->n * sizeof(int64_t)))
            rc = datm_error_set(err, DATM_E_INVALID, "early_stopping/val_docs: not the split of "
                                "this spec's model.val_fraction and seed");
    }
    datm_free(rows);
    v->n_checks = 0;
    v->best = -1;
    if (!rc && datm_h5_exists(gv, "epoch")) {
        int64_t nc = 0;
        rc = datm_h5_shape(gv, "epoch", &nc) < 0 ? DATM_E_IO : DATM_OK;
        if (!rc && nc > v->cap) {
            datm_free(v->epoch);
            datm_free(v->error);
            v->epoch = datm_alloc_array((size_t)nc, sizeof(int64_t), err);
            v->error = datm_alloc_array((size_t)nc, sizeof(double), err);
            v->cap = nc;
            if (!v->epoch || !v->error) rc = DATM_E_NOMEM;
        }
        if (!rc) rc = datm_h5_read_i64(gv, "epoch", v->epoch, 1, &nc, err);
        if (!rc) rc = datm_h5_read_f64(gv, "val_error", v->error, 1, &nc, err);
        if (!rc) v->n_checks = nc;
    }
    if (!rc) rc = datm_h5_attr_get_i64(gv, "stopped_epoch", &stopped, err);
    if (!rc) rc = datm_h5_attr_get_i64(gv, "best_epoch", &best_epoch, err);
    if (!rc) {
        v->stopped_epoch = stopped;
        for (int64_t i = 0; i < v->n_checks; i++)
            if (v->epoch[i] == best_epoch) v->best = i;
    }
    datm_h5_close(&gv);
    return rc;
}
