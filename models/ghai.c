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
 * This file holds the family tables (one per B, since a family carries no parameters). */
#include "dist/gamma_rsvi.h"
#include "ghai.h"

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
