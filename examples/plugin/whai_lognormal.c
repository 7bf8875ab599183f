/* examples/plugin/whai_lognormal.c: a model plugin — WHAI with a log-normal posterior
 * ("whai-lognormal"), built outside datm against the installed datm_model.h.
 *
 * WHAI's encoder gives each unit of each layer a shape k and a scale lam (paper sec. II-C).
 * Here they parameterise a log-normal instead of a Weibull:
 *   q(theta | k, lam) = LogNormal(mu = ln lam, sigma = 1 / k),
 *   theta = lam exp(eps / k),  eps ~ N(0, 1)      (reparameterised, so d theta / d(k, lam)
 *                                                   exist: -theta eps / k^2 and theta / lam)
 * so a larger shape (with the downward term, a larger prior shape Phi(l+1) theta(l+1)) gives
 * a narrower posterior, as for the Weibull and the gamma. Against WHAI's prior
 * Gamma(alpha, 1) the KL has a closed form (E[ln theta] = mu, E[theta] = lam e^(1/(2k^2)),
 * entropy mu + 1/2 + ln(sigma sqrt(2 pi))):
 *   KL = -alpha ln lam + ln k - ln(2 pi)/2 - 1/2 + lam e^(1/(2k^2)) + lgamma(alpha).
 * Everything else (encoder network, TLASGR-MCMC topics, evaluation, save/load) is WHAI's.
 * test_lognormal_grad.c checks every derivative against central finite differences and the
 * KL and mean against Monte Carlo. */
#include <math.h>
#include <string.h>

#include <datm_model.h>

#include "whai_lognormal.h"

/* ---- the posterior family ---- */
static void ln_noise(const datm_encoder_opts *o, datm_rng *rng, int64_t n, const float *k,
                     float *noise)
{
    (void)o;
    (void)k;
    datm_rng_normal_fill_f(rng, noise, (size_t)n);
}

/* One source for float and double (the gradient checks run in double). */
#define LN_FAMILY(T, SUF, EXP, LOG, LGAMMA)                                                   \
    static void ln_sample_##SUF(const datm_encoder_opts *o, int64_t n, const T *k,           \
                                const T *lam, const float *noise, T *th, T *dk, T *dl)       \
    {                                                                                        \
        (void)o;                                                                             \
        for (int64_t j = 0; j < n; j++) {                                                    \
            const T e = (T)noise[j] / k[j];                                                  \
            const T g = EXP(e);                                                              \
            th[j] = lam[j] * g;                                                              \
            if (dk) dk[j] = -th[j] * e / k[j];                                               \
            if (dl) dl[j] = g;                                                               \
        }                                                                                    \
    }                                                                                        \
    static void ln_kl_##SUF(int64_t n, const T *k, const T *lam, const T *alpha, T *kl,      \
                            T *dk, T *dl, T *da)                                             \
    {                                                                                        \
        for (int64_t j = 0; j < n; j++) {                                                    \
            const T m = EXP((T)0.5 / (k[j] * k[j]));   /* E[theta] / lam */                  \
            const T ll = LOG(lam[j]);                                                        \
            kl[j] = -alpha[j] * ll + LOG(k[j]) - (T)0.91893853320467274178 - (T)0.5 +        \
                    lam[j] * m + LGAMMA(alpha[j]);                                           \
            if (dk) dk[j] = (T)1 / k[j] - lam[j] * m / (k[j] * k[j] * k[j]);                 \
            if (dl) dl[j] = -alpha[j] / lam[j] + m;                                          \
            if (da) da[j] = -ll + (T)datm_digamma((double)alpha[j]);                         \
        }                                                                                    \
    }                                                                                        \
    static void ln_mean_##SUF(int64_t n, const T *k, const T *lam, T *mean)                  \
    {                                                                                        \
        for (int64_t j = 0; j < n; j++) mean[j] = lam[j] * EXP((T)0.5 / (k[j] * k[j]));      \
    }

LN_FAMILY(float, f32, expf, logf, lgammaf)
LN_FAMILY(double, f64, exp, log, lgamma)

static const datm_posterior_family lognormal_family = {
    "lognormal", 1, ln_noise, ln_sample_f32, ln_sample_f64, ln_kl_f32, ln_kl_f64,
    ln_mean_f32, ln_mean_f64,
};

const datm_posterior_family *whai_lognormal_family(void) { return &lognormal_family; }

/* ---- the variant: WHAI's keys with three re-documented ---- */
static datm_param_schema schema[VARIANT_SCHEMA_CAP];

__attribute__((constructor)) static void schema_init(void)
{
    static const variant_schema_edit edits[] = {
        {"k_min", "0.5", "lower clamp of the shape k: the log-normal sigma = 1/k is at most "
                         "1/k_min, and E[theta] = lam e^(1/(2 k^2)) grows fast below 0.5"},
        {"lambda_is_mean", "false", "must be false: lam is the log-normal's e^mu"},
        {"u_lo", NULL, "not used (the noise is N(0, 1)): any value but 0 is an error"},
        {"u_hi", NULL, "not used (the noise is N(0, 1)): any value but 1 is an error"},
    };
    variant_schema_build(schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)(sizeof edits / sizeof edits[0]), NULL);
}

static int create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                  datm_error *err);
static int check(const datm_config *cfg, datm_error *err);

static const datm_model_ops whai_lognormal_ops = {
    WHAI_COMMON_OPS,
    .name = "whai-lognormal",
    .summary = "WHAI with a log-normal posterior LogNormal(ln lam, 1/k) (example plugin)",
    .schema = schema,
    .create = create,
    .check = check,
};

/* The variant's own rules on its keys; WHAI's are whai_check_variant's. */
static int check_own(const datm_config *cfg, datm_error *err)
{
    if (datm_config_bool(cfg, "lambda_is_mean"))
        return datm_error_set(err, DATM_E_INVALID, "model.lambda_is_mean: must be false for "
                              "whai-lognormal (lam is e^mu)");
    if (datm_config_real(cfg, "u_lo") != 0 || datm_config_real(cfg, "u_hi") != 1)
        return datm_error_set(err, DATM_E_INVALID, "model.u_lo/u_hi: not used by "
                              "whai-lognormal (its noise is N(0, 1)); remove the keys");
    return DATM_OK;
}

static const whai_variant variant = {.ops = &whai_lognormal_ops, .family = &lognormal_family};

/* datm calls it when it validates a spec (datm check, datm pipeline run --dry), before any
 * data is read. */
static int check(const datm_config *cfg, datm_error *err)
{
    int rc = check_own(cfg, err);
    return rc ? rc : whai_check_variant(cfg, &variant, err);
}

static int create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                  datm_error *err)
{
    int rc = check_own(cfg, err);   /* whai_create_variant applies WHAI's rules */
    return rc ? rc : whai_create_variant(cfg, info, &variant, out, err);
}

DATM_PLUGIN("whai-lognormal", &whai_lognormal_ops)
