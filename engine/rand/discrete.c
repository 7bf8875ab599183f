/* engine/rand/discrete.c: Poisson, categorical (cumulative-sum binary search), multinomial
 * and the Chinese restaurant table count (CRT). CRT + multinomial are the upward count
 * augmentation of the gamma belief network decoder (docs/reference.md: crt_multi_aug). */
#include "rand/rand_internal.h"

#include "core/core.h"

#include <stdlib.h>

/* ---- Poisson ---- */

/* Inversion by sequential search from 0; expected mean + 1 steps. */
static uint64_t poisson_inversion(datm_rng *r, double mean)
{
    const double p0 = exp(-mean);
    for (;;) {
        double u = datm_rng_uniform(r), p = p0, s = p0;
        uint64_t k = 0;
        while (u > s) {
            k++;
            p *= mean / (double)k;
            s += p;
            /* Rounding in s can leave u above the total; the tail mass is < 1e-16 here, so
             * redraw rather than return an absurd k. */
            if (p < 1e-20 && (double)k > mean)
                break;
        }
        if (u <= s)
            return k;
    }
}

/* PTRS: transformed rejection with squeeze (W. Hoermann, "The transformed rejection method
 * for generating Poisson random variables", Insurance: Math. & Econ. 12, 1993). Exact;
 * about 1.1 tries per draw, most accepted without a log. */
static uint64_t poisson_ptrs(datm_rng *r, double mean)
{
    const double slam = sqrt(mean), loglam = log(mean);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double log_inv_alpha = log(1.1239 + 1.1328 / (b - 3.4));
    const double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        double u = datm_rng_uniform(r) - 0.5;
        double v = datm_rng_uniform(r);
        double us = 0.5 - fabs(u); /* >= 2^-53 > 0 */
        double k = floor((2.0 * a / us + b) * u + mean + 0.43);
        if (us >= 0.07 && v <= vr)
            return (uint64_t)k;
        if (k < 0.0 || (us < 0.013 && v > us))
            continue;
        int sign;
        double lhs = log(v) + log_inv_alpha - log(a / (us * us) + b);
        if (lhs <= -mean + k * loglam - lgamma_r(k + 1.0, &sign))
            return (uint64_t)k;
    }
}

uint64_t datm_rng_poisson(datm_rng *r, double mean)
{
    DATM_ASSERT(mean >= 0.0 && mean < 1e18);
    if (mean < 10.0)
        return mean > 0.0 ? poisson_inversion(r, mean) : 0;
    return poisson_ptrs(r, mean);
}

/* ---- categorical, multinomial ---- */

int datm_rng_categorical_cumsum(datm_rng *r, const double *cumsum, int k) /* cumsum: (k) */
{
    /* t in (0, total): the smallest i with t < cumsum[i] has P(i) = increment / total, and
     * a zero increment (cumsum[i] == cumsum[i-1] <= t) is never chosen. */
    double t = datm_rng_uniform(r) * cumsum[k - 1];
    int lo = 0, hi = k - 1;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (t < cumsum[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

#define DATM_MULTINOMIAL_STACK 512

void datm_rng_multinomial(datm_rng *r, int64_t n, const double *w, int k, int64_t *counts)
{ /* w, counts: (k) */
    DATM_ASSERT(k > 0 && n >= 0);
    if (n == 0)
        return;
    double stack[DATM_MULTINOMIAL_STACK];
    double *cs = stack;
    if (k > DATM_MULTINOMIAL_STACK) {
        cs = malloc((size_t)k * sizeof(double));
        DATM_ASSERT(cs != NULL);
    }
    double s = 0.0;
    for (int i = 0; i < k; i++) {
        DATM_ASSERT(w[i] >= 0.0);
        s += w[i];
        cs[i] = s;
    }
    DATM_ASSERT(s > 0.0 && s < INFINITY);
    if (k == 1)
        counts[0] += n;
    else
        for (int64_t t = 0; t < n; t++)
            counts[datm_rng_categorical_cumsum(r, cs, k)]++;
    if (cs != stack)
        free(cs);
}

/* ---- CRT ---- */

int64_t datm_rng_crt(datm_rng *r, int64_t m, double conc)
{
    DATM_ASSERT(m >= 0 && conc >= 0.0);
    if (m == 0)
        return 0;
    if (conc == 0.0)
        return 1;
    if (conc == INFINITY)
        return m;
    /* Customer 1 always opens a table; customer i+1 (i = 1..m-1) does w.p. conc/(conc+i). */
    int64_t l = 1, i = 1;
    /* Dense phase: one uniform per customer while the probabilities are large. */
    double dense_end = 16.0 + 4.0 * conc;
    int64_t iend = (double)m < dense_end ? m : (int64_t)dense_end;
    for (; i < iend; i++)
        if (datm_rng_uniform(r) * (conc + (double)i) < conc)
            l++;
    /* Sparse phase, blocks [a, 2a): thinning. Candidates come from Bernoulli(p_a) with
     * p_a = conc/(conc+a) >= p_j on the block, found by geometric skips; a candidate j is
     * kept w.p. p_j/p_a = (conc+a)/(conc+j). Each j is then Bernoulli(p_j), independently,
     * at about conc/(1+conc/a) candidates per block instead of a uniforms. */
    while (i < m) {
        int64_t a = i, b = (a > m - a) ? m : 2 * a;
        double ca = conc + (double)a;
        double inv_log_q = -1.0 / log1p(conc / (double)a); /* 1 / log(1 - p_a) */
        int64_t j = a;
        for (;;) {
            double g = floor(log(datm_rng_uniform(r)) * inv_log_q); /* failures before a hit */
            if (g >= (double)(b - j))
                break;
            j += (int64_t)g;
            if (datm_rng_uniform(r) * (conc + (double)j) < ca)
                l++;
            if (++j >= b)
                break;
        }
        i = b;
    }
    return l;
}
