/* engine/rand/continuous.c: normal (ziggurat), exponential and Weibull samplers, and the
 * float normal fill. The Weibull inverse CDF is the reparameterised theta sample of the
 * WUDVE encoder (paper eq. for theta = lambda (-log(1-u))^(1/k)). */
#include "rand/rand_internal.h"

#include "core/core.h"

int datm_zig_slow(datm_rng *r, unsigned layer, double x, double *out)
{
    if (layer == 0) {
        /* Tail beyond r (Marsaglia 1964): r + a with a ~ Exp(r) accepted w.p. exp(-a^2/2). */
        const double inv_r = 1.0 / datm_zig_r;
        double a, b;
        do {
            a = -log(datm_rng_uniform(r)) * inv_r;
            b = -log(datm_rng_uniform(r));
        } while (b + b < a * a);
        *out = datm_zig_r + a;
        return 1;
    }
    /* Wedge: a uniform height between the layer's bottom f[i] and top f[i+1]. */
    double y = datm_zig_f[layer] + datm_rng_uniform(r) * (datm_zig_f[layer + 1] - datm_zig_f[layer]);
    if (y < exp(-0.5 * x * x)) {
        *out = x;
        return 1;
    }
    return 0;
}

double datm_rng_normal(datm_rng *r)
{
    return datm_normal_inline(r);
}

void datm_rng_normal_fill_f(datm_rng *r, float *out, size_t n) /* out: (n) */
{
    for (size_t i = 0; i < n; i++)
        out[i] = (float)datm_normal_inline(r);
}

double datm_rng_exponential(datm_rng *r)
{
    return -log(datm_rng_uniform(r));
}

double datm_rng_weibull(datm_rng *r, double k, double lambda)
{
    DATM_ASSERT(k > 0.0 && lambda >= 0.0);
    /* F^-1(p) = lambda (-log(1-p))^(1/k); u plays 1-p (same law, no 1-u rounding). */
    return lambda * exp(log(-log(datm_rng_uniform(r))) / k);
}
