/* engine/eval/linclass.c: logistic regression on document features by liblinear (see
 * linclass.h): input checks, standardisation, the conversion to liblinear's sparse rows,
 * the fit (C by linclass_ovr.c's CV path, then the final one-vs-rest fit) and prediction
 * by liblinear's predict functions. */
#include "eval/linclass_internal.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "nn/mlp_head.h"

void datm_linclass_params_default(datm_linclass_params *p)
{
    memset(p, 0, sizeof *p);
    p->n_folds = 5;
    p->eps = 0.01;
    p->cv_tol = 0.3;
    p->cv_patience = 1;
    p->standardize = 1;
    p->cv_max_docs = 20000;
}

void datm_linclass_free(datm_linclass *m)
{
    if (!m) return;
    if (m->lib) free_and_destroy_model(&m->lib);
    datm_free(m->mean);
    datm_free(m->scale);
    datm_free(m->path_C);
    datm_free(m->path_accuracy);
    memset(m, 0, sizeof *m);
}

/* liblinear prints its solver's progress through a process-wide hook: dropped. */
static void lc_print_null(const char *s) { (void)s; }

/* ---- input ---- */

static int lc_check(const float *X, int64_t n, int64_t d, const int32_t *y, int c, datm_error *err)
{
    if (n < 1 || d < 1 || c < 2)
        return datm_error_set(err, DATM_E_INVALID,
                              "linclass: need N >= 1, D >= 1, C >= 2 (got N %lld, D %lld, C %d)",
                              (long long)n, (long long)d, c);
    if (n > INT32_MAX || d >= INT32_MAX)
        return datm_error_set(err, DATM_E_INVALID, "linclass: N %lld or D %lld beyond liblinear's "
                              "int indices", (long long)n, (long long)d);
    for (int64_t i = 0; i < n; i++)
        if (y[i] < 0 || y[i] >= c)
            return datm_error_set(err, DATM_E_INVALID, "linclass: label %d of document %lld not "
                                  "in [0, %d)", (int)y[i], (long long)i, c);
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(X[i]))
            return datm_error_set(err, DATM_E_NUMERIC, "linclass: feature %lld of document %lld "
                                  "is not finite", (long long)(i % d), (long long)(i / d));
    return DATM_OK;
}

/* Column mean and sd over all N rows (sd 0 -> 1); 0 and 1 when not standardising. */
static int lc_scaling(datm_linclass *m, const float *X, int64_t n, int64_t d, int standardize,
                      datm_error *err)
{
    m->mean = datm_alloc_array((size_t)d, sizeof(double), err);
    m->scale = datm_alloc_array((size_t)d, sizeof(double), err);
    if (!m->mean || !m->scale) return DATM_E_NOMEM;
    for (int64_t j = 0; j < d; j++) m->scale[j] = 1.0;
    if (!standardize) return DATM_OK;
    double *sq = datm_alloc_array((size_t)d, sizeof(double), err);
    if (!sq) return DATM_E_NOMEM;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < d; j++) {
            const double x = X[i * d + j];
            m->mean[j] += x;
            sq[j] += x * x;
        }
    for (int64_t j = 0; j < d; j++) {
        m->mean[j] /= (double)n;
        const double var = sq[j] / (double)n - m->mean[j] * m->mean[j];
        m->scale[j] = var > 1e-24 * (1 + m->mean[j] * m->mean[j]) ? sqrt(var) : 1.0;
    }
    datm_free(sq);
    return DATM_OK;
}

/* One row as liblinear's sparse nodes: the standardised non-zero features (1-based
 * indices), the bias feature (index D + 1, value 1) and the terminator; node has room for
 * D + 2 entries. */
static void lc_row(const datm_linclass *m, const float *x, struct feature_node *node)
{
    const int64_t d = m->n_features;
    int k = 0;
    for (int64_t j = 0; j < d; j++) {
        const double v = ((double)x[j] - m->mean[j]) / m->scale[j];
        if (v != 0) node[k++] = (struct feature_node){(int)(j + 1), v};
    }
    node[k++] = (struct feature_node){(int)(d + 1), 1.0};
    node[k] = (struct feature_node){-1, 0};
}

int datm_linclass_fit(const float *X, int64_t n, int64_t d, const int32_t *y, int c,
                      const datm_linclass_params *p_in, datm_linclass *out, datm_error *err)
{
    datm_linclass_params pd;
    if (!p_in) { datm_linclass_params_default(&pd); p_in = &pd; }
    memset(out, 0, sizeof *out);
    int rc = lc_check(X, n, d, y, c, err);
    if (rc) return rc;
    if (p_in->C <= 0 && p_in->n_folds < 2)
        return datm_error_set(err, DATM_E_INVALID, "linclass: n_folds %d < 2", p_in->n_folds);
    if (!(p_in->eps > 0) || !(p_in->cv_tol > 0))
        return datm_error_set(err, DATM_E_INVALID, "linclass: eps %g or cv_tol %g <= 0",
                              p_in->eps, p_in->cv_tol);
    out->n_features = d;
    out->n_classes = c;
    out->cv_accuracy = NAN;
    if ((rc = lc_scaling(out, X, n, d, p_in->standardize, err))) { datm_linclass_free(out); return rc; }

    struct feature_node *space = datm_alloc_array((size_t)n * (size_t)(d + 2), sizeof *space, err);
    struct feature_node **xr = datm_alloc_array((size_t)n, sizeof *xr, err);
    double *yd = datm_alloc_array((size_t)n, sizeof(double), err);
    if (!space || !xr || !yd) rc = DATM_E_NOMEM;
    if (!rc) {
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            xr[i] = space + i * (d + 2);
            lc_row(out, X + i * d, xr[i]);
            yd[i] = y[i];
        }
    }
    struct problem prob = {(int)n, (int)(d + 1), yd, xr, 1.0};
    struct parameter param = {.solver_type = L2R_LR, .eps = p_in->eps, .C = 1, .p = 0.1};
    const char *bad = rc ? NULL : check_parameter(&prob, &param);
    if (bad) rc = datm_error_set(err, DATM_E_INVALID, "linclass: liblinear: %s", bad);

    const int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
    set_print_string_function(lc_print_null);
    double *w_cv = NULL;   /* (C, D + 1) the folds' mean solutions at the chosen C */
    if (!rc && p_in->C > 0) {
        out->C = p_in->C;
    } else if (!rc) {
        w_cv = datm_alloc_array((size_t)c * (size_t)(d + 1), sizeof *w_cv, err);
        rc = w_cv ? datm_linclass_cv(&prob, y, c, &param, p_in, out, w_cv, err) : DATM_E_NOMEM;
    }
    if (!rc) {
        param.C = out->C;
        out->lib = datm_linclass_ovr_fit(&prob, c, &param, w_cv, err);
        if (!out->lib) rc = err && err->code ? err->code : DATM_E_NOMEM;
    }
    datm_free(w_cv);
    set_print_string_function(NULL);   /* liblinear's default (stdout) */
    openblas_set_num_threads(blas_threads);
    datm_free(space);
    datm_free(xr);
    datm_free(yd);
    if (rc) datm_linclass_free(out);
    return rc;
}

/* Our class k -> liblinear's label index, -1 if k was not among the training labels. */
static int lc_label_index(const datm_linclass *m, int k)
{
    for (int i = 0; i < m->lib->nr_class; i++)
        if (m->lib->label[i] == k) return i;
    return -1;
}

void datm_linclass_predict_proba(const datm_linclass *m, const float *X, int64_t n, float *probs)
{
    const int64_t d = m->n_features;
    const int c = m->n_classes, nl = m->lib->nr_class;
    #pragma omp parallel
    {
        struct feature_node *node = malloc((size_t)(d + 2) * sizeof *node);
        double *pe = malloc((size_t)nl * sizeof *pe);
        DATM_ASSERT(node && pe);
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            lc_row(m, X + i * d, node);
            predict_probability(m->lib, node, pe);
            for (int k = 0; k < c; k++) probs[i * c + k] = 0;
            for (int l = 0; l < nl; l++) probs[i * c + m->lib->label[l]] = (float)pe[l];
        }
        free(node);
        free(pe);
    }
}

void datm_linclass_predict(const datm_linclass *m, const float *X, int64_t n, int32_t *pred)
{
    const int64_t d = m->n_features;
    #pragma omp parallel
    {
        struct feature_node *node = malloc((size_t)(d + 2) * sizeof *node);
        DATM_ASSERT(node);
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            lc_row(m, X + i * d, node);
            pred[i] = (int32_t)predict(m->lib, node);
        }
        free(node);
    }
}

void datm_linclass_coef(const datm_linclass *m, int k, double *w)
{
    const int64_t d = m->n_features;
    const int li = lc_label_index(m, k);
    for (int64_t j = 0; j < d; j++) w[j] = li < 0 ? 0 : get_decfun_coef(m->lib, (int)(j + 1), li);
    w[d] = li < 0 ? 0 : get_decfun_bias(m->lib, li);
}

void datm_features_concat(int L, const int64_t *k, const float *const *theta, int64_t n,
                          int transform, float *X)
{
    int64_t S = 0;
    for (int l = 0; l < L; l++) S += k[l];
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float *o = X + i * S;
        for (int l = 0; l < L; l++) {
            const float *t = theta[l] + i * k[l];
            double sum = 0;
            if (transform == DATM_FEAT_PROP)
                for (int64_t j = 0; j < k[l]; j++) sum += t[j];
            const double inv = sum > DBL_MIN ? 1.0 / sum : 0.0;
            for (int64_t j = 0; j < k[l]; j++)
                o[j] = transform == DATM_FEAT_LOG1P ? log1pf(t[j])
                     : transform == DATM_FEAT_PROP  ? (float)(t[j] * inv)
                                                    : t[j];
            o += k[l];
        }
    }
}
