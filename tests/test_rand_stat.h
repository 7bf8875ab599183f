/* tests/test_rand_stat.h: small statistics toolkit shared by the engine/rand tests:
 * moment checks with standard-error tolerances, Kolmogorov-Smirnov and chi-square
 * goodness-of-fit p-values, the regularised incomplete gamma function and a local digamma
 * (engine/math is a separate part; these are independent reference implementations).
 * Header-only (static functions); include once per test program. */
#ifndef DATM_TEST_RAND_STAT_H
#define DATM_TEST_RAND_STAT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h"

/* z threshold for moment checks: two-sided p ~ 7e-6 per check for a correct sampler. */
#define STAT_Z 4.5
/* p-value floor for goodness-of-fit tests. */
#define STAT_PMIN 1e-4

static inline double stat_lgamma(double x)
{
    int s;
    return lgamma_r(x, &s);
}

/* digamma: recurrence up to x >= 10, then the asymptotic series (error < 1e-15). */
static inline double stat_digamma(double x)
{
    double acc = 0.0;
    while (x < 10.0) {
        acc -= 1.0 / x;
        x += 1.0;
    }
    double x2 = 1.0 / (x * x);
    return acc + log(x) - 0.5 / x
           - x2 * (1.0 / 12 - x2 * (1.0 / 120 - x2 * (1.0 / 252 - x2 * (1.0 / 240 - x2 * (1.0 / 132)))));
}

/* Regularised incomplete gamma with the argument given as log x, so CDFs of tiny-shape
 * gammas far below the double range can be evaluated. Returns P(a, x) in *p, Q in *q. */
static inline void stat_gamma_pq_logx(double a, double lx, double *p, double *q)
{
    double x = exp(lx);
    if (x < a + 1.0) {
        /* series: P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)) */
        double term = 1.0, sum = 1.0;
        for (int n = 1; n < 100000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * 1e-17)
                break;
        }
        *p = exp(a * lx - x - stat_lgamma(a + 1.0)) * sum;
        if (*p > 1.0)
            *p = 1.0;
        *q = 1.0 - *p;
    } else {
        /* continued fraction for Q, modified Lentz */
        const double tiny = 1e-300;
        double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
        for (int i = 1; i < 100000; i++) {
            double an = -i * (i - a);
            b += 2.0;
            d = an * d + b;
            if (fabs(d) < tiny)
                d = tiny;
            c = b + an / c;
            if (fabs(c) < tiny)
                c = tiny;
            d = 1.0 / d;
            double del = d * c;
            h *= del;
            if (fabs(del - 1.0) < 1e-16)
                break;
        }
        *q = exp(a * lx - x - stat_lgamma(a)) * h;
        *p = 1.0 - *q;
    }
}

static inline double stat_gamma_p(double a, double x)
{
    double p, q;
    if (x <= 0.0)
        return 0.0;
    stat_gamma_pq_logx(a, log(x), &p, &q);
    return p;
}

/* Upper tail of chi-square with df degrees of freedom. */
static inline double stat_chi2_pvalue(double chi2, int df)
{
    double p, q;
    if (chi2 <= 0.0)
        return 1.0;
    stat_gamma_pq_logx(0.5 * df, log(0.5 * chi2), &p, &q);
    return q;
}

/* Asymptotic Kolmogorov distribution with Stephens' small-sample correction. */
static inline double stat_ks_pvalue(double d, size_t n)
{
    double en = sqrt((double)n);
    double lam = (en + 0.12 + 0.11 / en) * d;
    if (lam < 0.2)
        return 1.0;
    double s = 0.0;
    for (int k = 1; k <= 100; k++) {
        double t = exp(-2.0 * k * k * lam * lam);
        s += (k & 1) ? t : -t;
        if (t < 1e-18)
            break;
    }
    s *= 2.0;
    return s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
}

static inline int stat_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef double (*stat_cdf_fn)(double x, const void *ctx);

/* KS distance of x[0..n) (sorted in place) to cdf; returns the p-value. */
static inline double stat_ks(double *x, size_t n, stat_cdf_fn cdf, const void *ctx, double *dout)
{
    qsort(x, n, sizeof(double), stat_cmp_double);
    double d = 0.0;
    for (size_t i = 0; i < n; i++) {
        double f = cdf(x[i], ctx);
        double d1 = f - (double)i / (double)n, d2 = (double)(i + 1) / (double)n - f;
        if (d1 > d)
            d = d1;
        if (d2 > d)
            d = d2;
    }
    if (dout)
        *dout = d;
    return stat_ks_pvalue(d, n);
}

/* Pearson chi-square of observed counts vs expected counts over nb bins (all expected
 * >= 5 by construction of the caller); df = nb - 1. Returns the p-value. */
static inline double stat_chi2(const double *obs, const double *expd, int nb, double *chi2out)
{
    double c = 0.0;
    for (int i = 0; i < nb; i++)
        c += (obs[i] - expd[i]) * (obs[i] - expd[i]) / expd[i];
    if (chi2out)
        *chi2out = c;
    return stat_chi2_pvalue(c, nb - 1);
}

/* Checks the sample mean against mu (SE from the true variance) and the sample variance
 * against var (SE from the sample fourth central moment). Prints a summary line. */
static inline void stat_moments(const char *what, const double *x, size_t n, double mu, double var)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    double s2 = 0.0, m4 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - m, d2 = d * d;
        s2 += d2;
        m4 += d2 * d2;
    }
    s2 /= (double)(n - 1);
    m4 /= (double)n;
    if (var == 0.0) { /* degenerate law: the draws must all equal mu */
        printf("  %-34s constant %.17g (exp %.17g), var %.3g\n", what, m, mu, s2);
        CHECK(fabs(m - mu) <= 1e-9 * fmax(1.0, fabs(mu)) && s2 <= 1e-18, "%s: not constant %.17g", what, mu);
        return;
    }
    double se_m = sqrt(var / (double)n), se_v = sqrt(fmax(m4 - s2 * s2, 0.0) / (double)n);
    double zm = (m - mu) / se_m, zv = (s2 - var) / (se_v > 0 ? se_v : 1e-300);
    printf("  %-34s mean %.9g (exp %.9g, z %.2f)  var %.9g (exp %.9g, z %.2f)\n", what, m, mu, zm,
           s2, var, zv);
    CHECK(fabs(zm) < STAT_Z, "%s: mean %.17g vs %.17g (z = %.2f)", what, m, mu, zm);
    CHECK(fabs(zv) < STAT_Z, "%s: variance %.17g vs %.17g (z = %.2f)", what, s2, var, zv);
}

/* trigamma: recurrence up to x >= 10, then the asymptotic series. */
static inline double stat_trigamma(double x)
{
    double acc = 0.0;
    while (x < 10.0) {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    double ix = 1.0 / x, ix2 = ix * ix;
    return acc + ix + 0.5 * ix2
           + ix * ix2 * (1.0 / 6 - ix2 * (1.0 / 30 - ix2 * (1.0 / 42 - ix2 * (1.0 / 30))));
}

/* Chi-square of integer draws against a pmf on {0, 1, ...}: obs[k] / pmf[k] for k < K
 * (the remaining mass 1 - sum pmf is the tail bin, observed `tail`). Adjacent bins are
 * pooled left to right until each expected count is >= 5. Returns the p-value. */
static inline double stat_chi2_pmf(const double *obs, const double *pmf, int K, double tail_obs,
                                   double n, int *df_out, double *chi_out)
{
    double chi = 0.0, eo = 0.0, oo = 0.0, emass = 0.0;
    int bins = 0;
    double last_e = 0.0, last_o = 0.0;
    int have_last = 0;
    for (int k = 0; k <= K; k++) {
        double e, o;
        if (k < K) {
            e = n * pmf[k];
            o = obs[k];
            emass += pmf[k];
        } else {
            e = n * fmax(1.0 - emass, 0.0);
            o = tail_obs;
        }
        eo += e;
        oo += o;
        if (eo >= 5.0 || k == K) {
            if (eo < 5.0 && have_last) { /* merge a small final pool into the previous one */
                chi -= (last_o - last_e) * (last_o - last_e) / last_e;
                eo += last_e;
                oo += last_o;
                bins--;
            }
            if (eo > 0.0) {
                chi += (oo - eo) * (oo - eo) / eo;
                bins++;
                last_e = eo;
                last_o = oo;
                have_last = 1;
            }
            eo = oo = 0.0;
        }
    }
    if (df_out)
        *df_out = bins - 1;
    if (chi_out)
        *chi_out = chi;
    return bins > 1 ? stat_chi2_pvalue(chi, bins - 1) : 1.0;
}

#endif
