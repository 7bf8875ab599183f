/* models/ghai.c: GHAI, WHAI with the Weibull posterior replaced by a gamma one (paper sec.
 * II-E, eq. RSVI-posterior): q(theta(l) | .) = Gamma(k(l) [+ Phi(l+1) theta(l+1)], lam(l)),
 * sampled by RSVI with shape boosting B and differentiated through the accepted proposal
 * (engine/dist/gamma_rsvi), with the analytic gamma-gamma KL to the prior Gamma(alpha, 1).
 *
 * Modelling assumptions (the paper gives none of these):
 *   - lam(l) is the gamma SCALE (mean k lam), the same role it has for the Weibull;
 *   - gradients use the pathwise term only (no score correction); with the default B = 4
 *     its bias is < 0.5% (tests/test_rsvi_gradient.c), B is the key `rsvi_boost`;
 *   - a draw below GHAI_THETA_MIN (1e-10) is set to it with zero gradient.
 * Everything else (encoder, TLASGR decoder, Algorithm 1, evaluation, save/load) is WHAI's
 * (models/whai.c) with this family swapped in. This file holds the family tables (one per B,
 * since a family carries no parameters) and the variant's ops. */
#include <stdlib.h>
#include <string.h>

#include "dist/gamma_rsvi.h"
#include "ghai.h"
#include "variant_schema.h"
#include "whai.h"

/* ---- the posterior family ---- */
static void ghai_noise(int boost, datm_rng *rng, int64_t n, const float *k, float *noise)
{
    const int nd = DATM_RSVI_NOISE_DIM(boost);
    for (int64_t j = 0; j < n; j++) datm_rsvi_draw_noise(rng, (double)k[j], boost, noise + j * nd);
}

#define GHAI_FAMILY(B)                                                                       \
    static void ghai_noise_##B(const datm_encoder_opts *o, datm_rng *rng, int64_t n,         \
                               const float *k, float *noise)                                 \
    {                                                                                        \
        (void)o;                                                                             \
        ghai_noise(B, rng, n, k, noise);                                                     \
    }                                                                                        \
    static void ghai_sample_f32_##B(const datm_encoder_opts *o, int64_t n, const float *k,   \
                                    const float *lam, const float *noise, float *th,         \
                                    float *dk, float *dl)                                    \
    {                                                                                        \
        (void)o;                                                                             \
        datm_rsvi_sample_f32(n, B, GHAI_THETA_MIN, k, lam, noise, th, dk, dl);               \
    }                                                                                        \
    static void ghai_sample_f64_##B(const datm_encoder_opts *o, int64_t n, const double *k,  \
                                    const double *lam, const float *noise, double *th,       \
                                    double *dk, double *dl)                                  \
    {                                                                                        \
        (void)o;                                                                             \
        datm_rsvi_sample_f64(n, B, GHAI_THETA_MIN, k, lam, noise, th, dk, dl);               \
    }                                                                                        \
    static const datm_posterior_family ghai_family_##B = {                                   \
        "gamma-rsvi-B" #B, DATM_RSVI_NOISE_DIM(B), ghai_noise_##B, ghai_sample_f32_##B,       \
        ghai_sample_f64_##B, datm_gamma_kl_f32, datm_gamma_kl_f64, datm_gamma_mean_f32,       \
        datm_gamma_mean_f64,                                                                 \
    };

GHAI_FAMILY(1)
GHAI_FAMILY(2)
GHAI_FAMILY(3)
GHAI_FAMILY(4)
GHAI_FAMILY(5)
GHAI_FAMILY(6)
GHAI_FAMILY(7)
GHAI_FAMILY(8)

const datm_posterior_family *ghai_family(int boost)
{
    static const datm_posterior_family *const table[GHAI_MAX_BOOST + 1] = {
        NULL,           &ghai_family_1, &ghai_family_2, &ghai_family_3, &ghai_family_4,
        &ghai_family_5, &ghai_family_6, &ghai_family_7, &ghai_family_8,
    };
    return boost >= 1 && boost <= GHAI_MAX_BOOST ? table[boost] : NULL;
}

/* ---- the variant ---- */
static datm_param_schema ghai_schema[VARIANT_SCHEMA_CAP];

/* The variant's own model: keys, after WHAI's (pipeline/params.h). */
#define GHAI_PARAMS(X) \
    X(rsvi_boost, "rsvi_boost", INT, "4", 1, GHAI_MAX_BOOST, NULL, \
      "RSVI shape boosting B: propose Gamma(alpha + B) by Marsaglia-Tsang and multiply by " \
      "prod u_i^(1/(alpha+i-1)); the paper does not state B, 4 keeps the pathwise " \
      "gradient's bias < 0.5% (blei-lab ars-reparameterization uses 2 and 4)")
DATM_PARAMS_STRUCT(ghai_params, GHAI_PARAMS)
static DATM_PARAMS_GETTER(ghai_params, GHAI_PARAMS)

__attribute__((constructor)) static void ghai_schema_init(void)
{
    static const variant_schema_edit edits[] = {
        {"k_min", NULL, "gamma shape clamp, lower (as WHAI's Weibull clamp)"},
        {"k_max", NULL, "gamma shape clamp, upper"},
        {"lambda_min", NULL, "floor of the gamma scale lam (mean k lam)"},
        {"lambda_is_mean", "false", "must be false for ghai (the mean parameterisation is Weibull only)"},
        {"u_lo", NULL, "not used by ghai (RSVI draws its own noise): any value but 0 is an "
                       "error"},
        {"u_hi", NULL, "not used by ghai (RSVI draws its own noise): any value but 1 is an "
                       "error"},
    };
    static const datm_param_schema extra[] = {DATM_PARAMS_ROWS(GHAI_PARAMS)};
    variant_schema_build(ghai_schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)DATM_COUNTOF(edits), extra);
}

static int ghai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                       datm_error *err);
static int ghai_check(const datm_config *cfg, datm_error *err);

const datm_model_ops datm_model_ghai = {
    WHAI_COMMON_OPS,
    .name = "ghai",
    .summary = "GHAI: WHAI with a gamma variational posterior reparameterised by RSVI with "
               "shape boosting (paper sec. II-E, eq. RSVI-posterior)",
    .schema = ghai_schema,
    .create = ghai_create,
    .check = ghai_check,
};

/* GHAI's changes to WHAI from cfg (the family of its rsvi_boost), after its own rules. */
static int ghai_variant(const datm_config *cfg, whai_variant *v, datm_error *err)
{
    memset(v, 0, sizeof *v);
    v->ops = &datm_model_ghai;
    ghai_params p;
    whai_params wp;
    ghai_params_get(cfg, &p);
    whai_params_get(cfg, &wp);
    /* WHAI's noise bounds: kept in the table (resolved specs keep their hashes), inert here */
    const struct { int row; double value; } inert[] = {{WHAI_ROW_u_lo, wp.u_lo},
                                                        {WHAI_ROW_u_hi, wp.u_hi}};
    for (size_t i = 0; i < DATM_COUNTOF(inert); i++) {
        const datm_param_schema *r = &datm_whai_schema[inert[i].row];
        if (inert[i].value != strtod(r->def, NULL))
            return datm_error_set(err, DATM_E_INVALID, "model.%s: %g: not used by ghai (RSVI "
                                  "draws its own noise); remove the key", r->key, inert[i].value);
    }
    v->family = ghai_family((int)p.rsvi_boost);
    if (!v->family)
        return datm_error_set(err, DATM_E_INVALID, "model.rsvi_boost: %lld (1..%d)",
                              (long long)p.rsvi_boost, GHAI_MAX_BOOST);
    return DATM_OK;
}

/* WHAI's rules with the gamma family (lambda_is_mean is Weibull only: the encoder's rule). */
static int ghai_check(const datm_config *cfg, datm_error *err)
{
    whai_variant v;
    int rc = ghai_variant(cfg, &v, err);
    return rc ? rc : whai_check_variant(cfg, &v, err);
}

static int ghai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                       datm_error *err)
{
    whai_variant v;
    int rc = ghai_variant(cfg, &v, err);
    return rc ? rc : whai_create_variant(cfg, info, &v, out, err);
}
