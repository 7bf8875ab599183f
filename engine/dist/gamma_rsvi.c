/* engine/dist/gamma_rsvi.c: RSVI for the gamma posterior of GHAI (paper sec. II-E, eq.
 * RSVI-posterior; Naesseth et al. 2017 with the Marsaglia-Tsang proposal and shape
 * boosting) and the gamma-gamma KL. The maths is stated in gamma_rsvi.h. */
#include <math.h>

#include "core/core.h"
#include "dist/gamma_rsvi.h"
#include "math/math.h"

double datm_rsvi_h(double eps, double a, double *dh_da, double *dh_deps)
{
    const double d = a - 1.0 / 3.0;
    const double c = 1.0 / sqrt(9.0 * d);          /* 1 / sqrt(9a - 3) */
    const double w = 1.0 + c * eps;
    if (!(w > 0)) {
        if (dh_da) *dh_da = 0;
        if (dh_deps) *dh_deps = 0;
        return 0;
    }
    const double h = d * w * w * w;
    /* d ln h / da = 1/d + 3 eps (dc/da) / w, dc/da = -4.5 c^3 */
    if (dh_da) *dh_da = h * (1.0 / d - 13.5 * eps * c * c * c / w);
    /* dh/deps = 3 d c w^2 = sqrt(d) w^2 */
    if (dh_deps) *dh_deps = 3.0 * d * c * w * w;
    return h;
}

int datm_rsvi_accept(double eps, double a, double log_u)
{
    const double d = a - 1.0 / 3.0;
    const double c = 1.0 / sqrt(9.0 * d);
    const double w = 1.0 + c * eps;
    if (!(w > 0)) return 0;
    const double v = w * w * w;
    return log_u < 0.5 * eps * eps + d - d * v + d * log(v);
}

float datm_rsvi_draw_eps(datm_rng *r, double a, int *n_proposals)
{
    DATM_ASSERT(a >= 1.0);
    int n = 0;
    for (;;) {
        n++;
        const float eps = (float)datm_rng_normal(r);
        const double lu = log(datm_rng_uniform(r));
        if (datm_rsvi_accept((double)eps, a, lu)) {
            if (n_proposals) *n_proposals = n;
            return eps;
        }
    }
}

void datm_rsvi_draw_noise(datm_rng *r, double alpha, int boost, float *out)
{
    DATM_ASSERT(boost >= 0 && boost <= DATM_RSVI_MAX_BOOST && alpha > 0);
    out[0] = datm_rsvi_draw_eps(r, alpha + boost, NULL);
    for (int i = 1; i <= boost; i++) out[i] = datm_rng_uniform_f(r);
}

double datm_rsvi_sample(double alpha, double lam, int boost, const float *noise,
                        double *dz_dalpha, double *dz_dlam, double *log_z)
{
    double dh;
    const double h = datm_rsvi_h((double)noise[0], alpha + boost, &dh, NULL);
    if (!(h > 0)) {
        if (dz_dalpha) *dz_dalpha = 0;
        if (dz_dlam) *dz_dlam = 0;
        if (log_z) *log_z = -INFINITY;
        return 0;
    }
    double lz = log(lam) + log(h), dlog = dh / h;
    for (int i = 1; i <= boost; i++) {
        const double ai = alpha + (double)(i - 1);
        const double lu = log((double)noise[i]);
        lz += lu / ai;
        dlog -= lu / (ai * ai);       /* d/dalpha of ln(u)/ai */
    }
    const double z = exp(lz);
    if (dz_dalpha) *dz_dalpha = z * dlog;
    if (dz_dlam) *dz_dlam = z / lam;
    if (log_z) *log_z = lz;
    return z;
}

double datm_rsvi_score(double eps, double a)
{
    double ha;
    const double h = datm_rsvi_h(eps, a, &ha, NULL);
    if (!(h > 0)) return 0;
    const double d = a - 1.0 / 3.0;
    const double c = 1.0 / sqrt(9.0 * d);
    const double w = 1.0 + c * eps;
    /* ln pi = (a-1) ln h - h - lnGamma(a) + ln(dh/deps), dh/deps = sqrt(d) w^2 */
    return log(h) + (a - 1.0) * ha / h - ha - datm_digamma(a) + 0.5 / d +
           2.0 * eps * (-4.5 * c * c * c) / w;
}

double datm_gamma_gamma_kl(double a, double lam, double alpha, double beta, double *da,
                           double *dlam, double *dalpha, double *dbeta)
{
    const double psa = datm_digamma(a);
    const double bl = beta * lam;
    const double kl = (a - alpha) * psa - lgamma(a) + lgamma(alpha) - alpha * log(bl) +
                      a * bl - a;
    if (da) *da = (a - alpha) * datm_trigamma(a) + bl - 1.0;
    if (dlam) *dlam = -alpha / lam + a * beta;
    if (dalpha) *dalpha = -psa + datm_digamma(alpha) - log(bl);
    if (dbeta) *dbeta = -alpha / beta + a * lam;
    return kl;
}

/* ---- array kernels: one source for both precisions ---- */
#define DATM_RSVI_KERNELS(R, SFX)                                                          \
    void datm_rsvi_sample_##SFX(int64_t n, int boost, double z_min, const R *k,             \
                                const R *lam, const float *noise, R *z, R *dz_dk,           \
                                R *dz_dlam)                                                 \
    {                                                                                       \
        const int nd = DATM_RSVI_NOISE_DIM(boost);                                          \
        for (int64_t i = 0; i < n; i++) {                                                   \
            double dk, dl;                                                                  \
            double zi = datm_rsvi_sample((double)k[i], (double)lam[i], boost,               \
                                         noise + i * nd, &dk, &dl, NULL);                   \
            if (!(zi > z_min)) { zi = z_min; dk = 0; dl = 0; }                              \
            z[i] = (R)zi;                                                                   \
            if (dz_dk) dz_dk[i] = (R)dk;                                                    \
            if (dz_dlam) dz_dlam[i] = (R)dl;                                                \
        }                                                                                   \
    }                                                                                       \
    void datm_gamma_kl_##SFX(int64_t n, const R *k, const R *lam, const R *alpha, R *kl,    \
                             R *dk, R *dlam, R *dalpha)                                     \
    {                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                   \
            double a, b, c;                                                                 \
            kl[i] = (R)datm_gamma_gamma_kl((double)k[i], (double)lam[i], (double)alpha[i],  \
                                           1.0, &a, &b, &c, NULL);                          \
            if (dk) dk[i] = (R)a;                                                           \
            if (dlam) dlam[i] = (R)b;                                                       \
            if (dalpha) dalpha[i] = (R)c;                                                   \
        }                                                                                   \
    }                                                                                       \
    void datm_gamma_mean_##SFX(int64_t n, const R *k, const R *lam, R *mean)                \
    {                                                                                       \
        for (int64_t i = 0; i < n; i++) mean[i] = k[i] * lam[i];                            \
    }

DATM_RSVI_KERNELS(float, f32)
DATM_RSVI_KERNELS(double, f64)
