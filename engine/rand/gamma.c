/* engine/rand/gamma.c: Gamma(shape, 1) by Marsaglia & Tsang (ACM TOMS 2000), its log,
 * and the samplers built from gammas: beta and Dirichlet. Gamma draws are the theta
 * updates of the Gibbs/TLASGR decoder (paper eq. 1), often with shapes far below 1. */
#include "rand/rand_internal.h"

#include "core/core.h"

/* Marsaglia-Tsang for shape a = d + 1/3 >= 1, c = 1/sqrt(9 d): returns v with draw = d v.
 * The squeeze 1 - 0.0331 x^4 accepts ~98% of tries without a log. */
static inline double mt_core(datm_rng *r, double d, double c)
{
    for (;;) {
        double x, v;
        do {
            x = datm_normal_inline(r);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = datm_rng_uniform(r);
        double x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2)
            return v;
        if (log(u) < 0.5 * x2 + d * (1.0 - v + log(v)))
            return v;
    }
}

/* Valid shape: finite and > 0 (0 handled by the callers). */
#define CHECK_SHAPE(a) DATM_ASSERT((a) >= 0.0 && (a) < INFINITY)

double datm_rng_gamma(datm_rng *r, double shape)
{
    CHECK_SHAPE(shape);
    if (shape >= 1.0) {
        double d = shape - 1.0 / 3.0;
        return d * mt_core(r, d, (1.0 / 3.0) / sqrt(d));
    }
    if (shape == 0.0)
        return 0.0;
    /* Boost: G(a) = G(a+1) U^(1/a). Exponent t = log(U)/a is often below -745 for tiny a;
     * combine in log space only when U^(1/a) alone would underflow (or lose bits as a
     * subnormal) while the product might not. */
    double d = shape + 2.0 / 3.0;
    double g = d * mt_core(r, d, (1.0 / 3.0) / sqrt(d));
    double t = log(datm_rng_uniform(r)) / shape;
    if (t > -700.0)
        return g * exp(t);
    return exp(log(g) + t);
}

double datm_rng_log_gamma(datm_rng *r, double shape)
{
    CHECK_SHAPE(shape);
    if (shape >= 1.0) {
        double d = shape - 1.0 / 3.0;
        return log(d * mt_core(r, d, (1.0 / 3.0) / sqrt(d)));
    }
    if (shape == 0.0)
        return -INFINITY;
    double d = shape + 2.0 / 3.0;
    double g = d * mt_core(r, d, (1.0 / 3.0) / sqrt(d));
    return log(g) + log(datm_rng_uniform(r)) / shape;
}

double datm_rng_beta(datm_rng *r, double a, double b)
{
    DATM_ASSERT(a > 0.0 && b > 0.0);
    if (a < 1.0 || b < 1.0) {
        /* X/(X+Y) = 1/(1 + exp(log Y - log X)); safe when X and Y both underflow. */
        double la = datm_rng_log_gamma(r, a), lb = datm_rng_log_gamma(r, b);
        double diff = lb - la;
        if (diff != diff) /* both -inf: only for shapes near 1e-308 */
            return 0.5;
        return 1.0 / (1.0 + exp(diff));
    }
    double x = datm_rng_gamma(r, a), y = datm_rng_gamma(r, b);
    return x / (x + y);
}

void datm_rng_dirichlet(datm_rng *r, const double *alpha, int k, double *out) /* alpha, out: (k) */
{
    DATM_ASSERT(k > 0);
    int small = 0;
    for (int i = 0; i < k; i++) {
        CHECK_SHAPE(alpha[i]);
        small |= alpha[i] < 1.0;
    }
    double sum = 0.0;
    if (small) {
        double mx = -INFINITY;
        for (int i = 0; i < k; i++) {
            out[i] = datm_rng_log_gamma(r, alpha[i]);
            if (out[i] > mx)
                mx = out[i];
        }
        DATM_ASSERT(mx > -INFINITY); /* not all alpha == 0 */
        for (int i = 0; i < k; i++) {
            out[i] = exp(out[i] - mx);
            sum += out[i];
        }
    } else {
        for (int i = 0; i < k; i++) {
            out[i] = datm_rng_gamma(r, alpha[i]);
            sum += out[i];
        }
    }
    double inv = 1.0 / sum;
    for (int i = 0; i < k; i++)
        out[i] *= inv;
}
