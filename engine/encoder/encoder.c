/* engine/encoder/encoder.c: options, creation and initialisation of the WUDVE parameters,
 * re-mapping units for layer-wise training, and the Weibull posterior family (paper sec.
 * II-B). Forward/backward are in encoder_impl.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dist/weibull.h"
#include "encoder/encoder.h"

/* ---- the Weibull family ---- */
static void weibull_noise(const datm_encoder_opts *o, datm_rng *rng, int64_t n, const float *k,
                          float *noise)
{
    (void)k;
    datm_rng_uniform_fill_f(rng, noise, (size_t)n);
    if (o->u_lo > 0 || o->u_hi < 1) {
        /* truncated noise range (PyDPM uses U(0.2, 0.8), docs/reference.md 2.1) */
        const float lo = (float)o->u_lo, w = (float)(o->u_hi - o->u_lo);
        for (int64_t i = 0; i < n; i++) noise[i] = lo + w * noise[i];
    }
}
static void weibull_sample_f32(const datm_encoder_opts *o, int64_t n, const float *k,
                               const float *lam, const float *u, float *th, float *dk,
                               float *dl)
{
    (void)o;
    datm_weibull_reparam_f32(n, k, lam, u, th, dk, dl);
}
static void weibull_sample_f64(const datm_encoder_opts *o, int64_t n, const double *k,
                               const double *lam, const float *u, double *th, double *dk,
                               double *dl)
{
    (void)o;
    datm_weibull_reparam_f64(n, k, lam, u, th, dk, dl);
}

const datm_posterior_family datm_posterior_weibull = {
    "weibull", 1, weibull_noise, weibull_sample_f32, weibull_sample_f64,
    datm_weibull_kl_f32, datm_weibull_kl_f64, datm_weibull_mean_f32, datm_weibull_mean_f64,
};

/* ---- options ---- */
void datm_encoder_opts_default(datm_encoder_opts *o)
{
    memset(o, 0, sizeof *o);
    o->downward = 1;
    o->shape_per_topic = 1;
    o->lambda_is_mean = 0;
    o->k_min = 0.1;
    o->k_max = 10.0;
    o->lambda_min = 1e-10;
    o->alpha_min = 1e-4;
    o->rate_min = 1e-10;
    o->u_lo = 0.0;
    o->u_hi = 1.0;
    o->top_shape = 1.0;
    for (int l = 0; l <= DATM_MAX_LAYERS; l++) o->kl_weight[l] = 1.0;
    o->init_sd = 0.0;
    o->init_bias = 0.0;
    o->family = &datm_posterior_weibull;
}

int datm_encoder_opts_check(const datm_encoder_opts *o, const char **key, datm_error *err)
{
    const char *k = NULL;
    if (!(o->k_min > 0 && o->k_max > o->k_min)) {
        k = "k_min";
        datm_error_set(err, DATM_E_INVALID, "encoder: shape clamp [%.9g, %.9g]", o->k_min,
                       o->k_max);
    } else if (!(o->lambda_min > 0) || !(o->alpha_min > 0) || !(o->rate_min > 0)) {
        k = !(o->lambda_min > 0) ? "lambda_min" : !(o->alpha_min > 0) ? "alpha_min" : "rate_min";
        datm_error_set(err, DATM_E_INVALID,
                       "encoder: floors must be > 0 (lambda %.9g, alpha %.9g, rate %.9g)",
                       o->lambda_min, o->alpha_min, o->rate_min);
    } else if (!(o->u_lo >= 0 && o->u_hi <= 1 && o->u_lo < o->u_hi)) {
        k = "u_lo";
        datm_error_set(err, DATM_E_INVALID, "encoder: noise range (%.9g, %.9g)", o->u_lo,
                       o->u_hi);
    } else if (!(o->top_shape > 0)) {
        k = "top_shape";
        datm_error_set(err, DATM_E_INVALID, "encoder: top prior shape %.9g", o->top_shape);
    } else if (o->lambda_is_mean && o->family && o->family != &datm_posterior_weibull) {
        k = "lambda_is_mean";
        datm_error_set(err, DATM_E_INVALID,
                       "encoder: lambda_is_mean needs the Weibull family, not '%s'",
                       o->family->name);
    }
    if (key) *key = k;
    return k ? DATM_E_INVALID : DATM_OK;
}

static int validate(const datm_encoder_opts *o, datm_error *err)
{
    if (o->n_layers < 1 || o->n_layers > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "encoder: %d layers (1..%d)", o->n_layers,
                              DATM_MAX_LAYERS);
    if (o->n_vocab <= 0)
        return datm_error_set(err, DATM_E_INVALID, "encoder: vocabulary size %lld",
                              (long long)o->n_vocab);
    for (int l = 1; l <= o->n_layers; l++) {
        if (o->k[l] <= 0)
            return datm_error_set(err, DATM_E_INVALID, "encoder: layer %d has %lld units", l,
                                  (long long)o->k[l]);
        if (o->hidden[l] < 0)
            return datm_error_set(err, DATM_E_INVALID, "encoder: layer %d hidden width %lld", l,
                                  (long long)o->hidden[l]);
    }
    return datm_encoder_opts_check(o, NULL, err);
}

void datm_encoder_destroy(datm_encoder **pe)
{
    if (!pe || !*pe) return;
    datm_params_free(&(*pe)->params);
    datm_free(*pe);
    *pe = NULL;
}

static int add_view(datm_encoder *e, const char *what, int l, int64_t rows, int64_t cols,
                    datm_error *err)
{
    char name[DATM_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "l%d.%s", l, what);
    return datm_params_add(&e->params, name, rows, cols, err);
}

/* Lays out and initialises; the rng of layer l is (seed, INIT, 1000 + l). */
static int build(const datm_encoder_opts *o, uint64_t seed, datm_encoder **out, datm_error *err)
{
    *out = NULL;
    int rc = validate(o, err);
    if (rc) return rc;
    datm_encoder *e = datm_alloc(sizeof *e, err);
    if (!e) return err ? err->code : DATM_E_NOMEM;
    e->o = *o;
    if (!e->o.family) e->o.family = &datm_posterior_weibull;
    e->L = o->n_layers;
    e->K[0] = e->H[0] = o->n_vocab;
    for (int l = 1; l <= e->L; l++) {
        e->K[l] = o->k[l];
        e->H[l] = o->hidden[l] > 0 ? o->hidden[l] : o->k[l];
        e->o.hidden[l] = e->H[l];
        e->KS[l] = o->shape_per_topic ? o->k[l] : 1;
    }
    for (int l = 1; l <= e->L; l++) {
        if ((e->iW3[l] = add_view(e, "W3", l, e->H[l - 1], e->H[l], err)) < 0 ||
            (e->ib3[l] = add_view(e, "b3", l, 1, e->H[l], err)) < 0 ||
            (e->iW1[l] = add_view(e, "W1", l, e->H[l], e->KS[l], err)) < 0 ||
            (e->ib1[l] = add_view(e, "b1", l, 1, e->KS[l], err)) < 0 ||
            (e->iW2[l] = add_view(e, "W2", l, e->H[l], e->K[l], err)) < 0 ||
            (e->ib2[l] = add_view(e, "b2", l, 1, e->K[l], err)) < 0) {
            datm_encoder_destroy(&e);
            return err ? err->code : DATM_E_INVALID;
        }
    }
    if ((rc = datm_params_alloc(&e->params, err))) {
        datm_encoder_destroy(&e);
        return rc;
    }
    for (int l = 1; l <= e->L; l++) {
        datm_rng rng;
        datm_rng_init(&rng, seed, DATM_STREAM_INIT, 1000 + (uint64_t)l);
        const int w[3] = {e->iW3[l], e->iW1[l], e->iW2[l]};
        const int b[3] = {e->ib3[l], e->ib1[l], e->ib2[l]};
        for (int j = 0; j < 3; j++) {
            const datm_param_view *v = &e->params.views[w[j]];
            double sd = o->init_sd > 0 ? o->init_sd : sqrt(2.0 / (double)(v->rows + v->cols));
            datm_params_fill_normal(&e->params, w[j], sd, &rng);
            datm_params_fill_const(&e->params, b[j], o->init_bias);
        }
    }
    *out = e;
    return DATM_OK;
}

int datm_encoder_create(const datm_encoder_opts *o, uint64_t seed, datm_encoder **out,
                        datm_error *err)
{
    return build(o, seed, out, err);
}

/* Copies src view into dst view where both the row and the column map to old indices. */
static void copy_mapped(const datm_params *dp, int di, const datm_params *sp, int si,
                        const int32_t *rowmap, const int32_t *colmap)
{
    const datm_param_view *dv = &dp->views[di], *sv = &sp->views[si];
    float *d = datm_params_value(dp, di);
    const float *s = datm_params_value(sp, si);
    for (int64_t r = 0; r < dv->rows; r++) {
        int64_t rs = rowmap ? rowmap[r] : r;
        if (rs < 0 || rs >= sv->rows) continue;
        for (int64_t c = 0; c < dv->cols; c++) {
            int64_t cs = colmap ? colmap[c] : c;
            if (cs < 0 || cs >= sv->cols) continue;
            d[r * dv->cols + c] = s[rs * sv->cols + cs];
        }
    }
}

int datm_encoder_remap(const datm_encoder *src, const datm_encoder_opts *o,
                       const int32_t *const *unit_map, uint64_t seed, datm_encoder **out,
                       datm_error *err)
{
    datm_encoder *e = NULL;
    int rc = build(o, seed, &e, err);
    if (rc) return rc;
    if (e->K[0] != src->K[0]) {
        datm_encoder_destroy(&e);
        return datm_error_set(err, DATM_E_INVALID, "encoder remap: vocabulary %lld vs %lld",
                              (long long)o->n_vocab, (long long)src->K[0]);
    }
    if (e->KS[1] != e->K[1] ? src->KS[1] == src->K[1] : src->KS[1] != src->K[1]) {
        datm_encoder_destroy(&e);
        return datm_error_set(err, DATM_E_INVALID, "encoder remap: shape_per_topic differs");
    }
    const int32_t *hmap[DATM_MAX_LAYERS + 1] = {NULL};
    for (int l = 1; l <= e->L && l <= src->L; l++) {
        const int32_t *um = unit_map ? unit_map[l] : NULL;
        /* hidden units follow the unit map only when hidden width = K in both */
        hmap[l] = (e->H[l] == e->K[l] && src->H[l] == src->K[l]) ? um : NULL;
        const int32_t *ks = e->KS[l] == 1 ? NULL : um;
        copy_mapped(&e->params, e->iW3[l], &src->params, src->iW3[l], hmap[l - 1], hmap[l]);
        copy_mapped(&e->params, e->ib3[l], &src->params, src->ib3[l], NULL, hmap[l]);
        copy_mapped(&e->params, e->iW1[l], &src->params, src->iW1[l], hmap[l], ks);
        copy_mapped(&e->params, e->ib1[l], &src->params, src->ib1[l], NULL, ks);
        copy_mapped(&e->params, e->iW2[l], &src->params, src->iW2[l], hmap[l], um);
        copy_mapped(&e->params, e->ib2[l], &src->params, src->ib2[l], NULL, um);
    }
    *out = e;
    return DATM_OK;
}

double datm_encoder_dense_macs(const datm_encoder *e, double nnz_per_doc)
{
    double m = nnz_per_doc * (double)e->H[1];
    for (int l = 1; l <= e->L; l++) {
        if (l > 1) m += (double)(e->H[l - 1] * e->H[l]);
        m += (double)(e->H[l] * (e->KS[l] + e->K[l]));
        if (l < e->L) m += (double)(e->K[l] * e->K[l + 1]);   /* downward Phi theta */
    }
    return m;
}
