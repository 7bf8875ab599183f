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

/* Whole buffers at a time: the pairs of words left in r->out are tries of the ziggurat's
 * fast path, taken in order; at the first try that falls outside its layer's rectangle the
 * scalar sampler takes over for that one value (it consumes the same words the call-by-call
 * sampler would), then the buffered run resumes. Same words, same order, same values. */
void datm_rng_normal_fill(datm_rng *r, double *out, size_t n) /* out: (n) */
{
    size_t i = 0;
    while (i < n) {
        if (r->left < 2 || (r->left & 1)) {
            out[i++] = datm_normal_inline(r);
            continue;
        }
        const uint32_t *w = r->out + 4 * DATM_RNG_BLOCKS - r->left;
        size_t m = (size_t)r->left / 2;
        if (m > n - i) m = n - i;
        size_t j = 0;
        for (; j < m; j++) {
            uint64_t b = ((uint64_t)w[2 * j] << 32) | w[2 * j + 1];
            unsigned layer = (unsigned)(b & 255u);
            double x = (double)(b >> 12) * 0x1p-52 * datm_zig_x[layer];
            if (!(x < datm_zig_x[layer + 1])) break;
            out[i + j] = datm_zig_sign(x, b);
        }
        i += j;
        r->left -= 2 * (int)j;
        if (j < m) out[i++] = datm_normal_inline(r);   /* the rejected try, done in full */
    }
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
