/* ctest-labels: unit;grad  ctest-timeout: 120  ctest-link: datm_dist */
/* Weibull posterior (paper eqs. Weibull reparameterisation, Gamma-Weibull-KL):
 * - the analytic KL(Weibull(k, lam) || Gamma(alpha, beta)) equals the integral
 *   E_q[ln q - ln p] computed by quadrature (t = (x/lam)^k ~ Exp(1), t = e^s, trapezoid on a
 *   fine grid: spectrally accurate for this smooth, doubly-exponentially decaying integrand),
 *   for k in 0.1..10, alpha in 1e-3..100, several lam and beta;
 * - its derivatives w.r.t. k, lam, alpha, beta equal 4th-order central differences, both of
 *   the analytic KL and (for k and alpha) of the quadrature;
 * - the reparameterised sample inverts the CDF (F(theta(u)) = u) and its derivatives equal
 *   differences; the sample mean of 200k draws matches lam Gamma(1 + 1/k) within 5 s.e.;
 * - nothing is NaN/Inf at the clamp bounds k = 0.1, 10 with extreme noise, scales and
 *   prior shapes, in both array precisions, and f32 agrees with f64. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "dist/weibull.h"
#include "math/math.h"
#include "rand/rand.h"
#include "test_check.h"


/* KL by quadrature over s = ln t. */
static double kl_quad(double k, double lam, double alpha, double beta)
{
    const double lo = -60.0, hi = 6.0, h = 5e-4;
    double sum = 0;
    for (long i = 0;; i++) {
        double s = lo + h * (double)i;
        if (s > hi) break;
        double t = exp(s);
        double logq = log(k) - log(lam) + (k - 1) / k * s - t;
        double logx = log(lam) + s / k;
        double logp = alpha * log(beta) - lgamma(alpha) + (alpha - 1) * logx - beta * exp(logx);
        double w = exp(s - t);                   /* e^{-t} dt = exp(s - e^s) ds */
        sum += (i == 0 ? 0.5 : 1.0) * w * (logq - logp);
    }
    return sum * h;
}

/* The KL formula in long double (64-bit mantissa): finite differences of it are ~2000x
 * less affected by roundoff than those of the double code (at k = 0.1 the term
 * lam Gamma(11) ~ 1e7 cancels against the others). Its value is checked against quadrature. */
static long double kl_ld(long double k, long double lam, long double a, long double b)
{
    const long double eg = 0.577215664901532860606512090082402431L;
    return -a * logl(lam) + eg * a / k + logl(k) + b * lam * expl(lgammal(1 + 1 / k)) - eg - 1 -
           a * logl(b) + lgammal(a);
}

static double d4(double (*f)(const double *, int), const double *x0, int i, double h)
{
    double x[4] = {x0[0], x0[1], x0[2], x0[3]};
    double v[4];
    const double o[4] = {-2, -1, 1, 2};
    for (int j = 0; j < 4; j++) { x[i] = x0[i] + o[j] * h; v[j] = f(x, i); }
    return (v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * h);
}
/* 4th-order central difference of kl_ld in long double. */
static double d4_ld(const double *x0, int i, long double h)
{
    long double x[4] = {x0[0], x0[1], x0[2], x0[3]}, v[4];
    const long double o[4] = {-2, -1, 1, 2};
    for (int j = 0; j < 4; j++) {
        x[i] = (long double)x0[i] + o[j] * h;
        v[j] = kl_ld(x[0], x[1], x[2], x[3]);
    }
    return (double)((v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * h));
}
static double f_quad(const double *x, int i)
{
    (void)i;
    return kl_quad(x[0], x[1], x[2], x[3]);
}

static double relerr(double a, double b) { return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-12); }

int main(void)
{
    const double ks[] = {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0};
    const double alphas[] = {1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0};
    const double lams[] = {0.05, 1.0, 30.0};
    double worst_v = 0, worst_d = 0, worst_dq = 0;
    int n_cases = 0;
    for (size_t a = 0; a < sizeof ks / sizeof *ks; a++)
        for (size_t b = 0; b < sizeof alphas / sizeof *alphas; b++)
            for (size_t c = 0; c < sizeof lams / sizeof *lams; c++) {
                double beta = (c == 1) ? 1.0 : 2.5;
                double x[4] = {ks[a], lams[c], alphas[b], beta};
                double g[4];
                double kl = datm_weibull_gamma_kl(x[0], x[1], x[2], x[3], &g[0], &g[1], &g[2], &g[3]);
                double q = kl_quad(x[0], x[1], x[2], x[3]);
                /* absolute tolerance relative to the size of the terms being cancelled */
                double scale = fmax(1.0, fabs(x[2] * log(x[1])) + fabs(lgamma(x[2])) + x[1] * x[3] * tgamma(1 + 1 / x[0]));
                double ev = fabs(kl - q) / scale;
                worst_v = fmax(worst_v, ev);
                CHECK(ev < 1e-9 && kl >= -1e-9 * scale, "KL(k=%g lam=%g alpha=%g beta=%g) = %.12g, quadrature %.12g",
                      x[0], x[1], x[2], x[3], kl, q);
                /* magnitudes of the terms of each analytic derivative: its own roundoff */
                double gk = tgamma(1 + 1 / x[0]), eg = DATM_EULER_GAMMA;
                double terms[4] = {
                    1 / x[0] + eg * x[2] / (x[0] * x[0]) +
                        x[3] * x[1] * gk * fabs(datm_digamma(1 + 1 / x[0])) / (x[0] * x[0]),
                    x[2] / x[1] + x[3] * gk,
                    fabs(log(x[1])) + eg / x[0] + fabs(log(x[3])) + fabs(datm_digamma(x[2])),
                    x[2] / x[3] + x[1] * gk};
                for (int i = 0; i < 4; i++) {
                    double h = 1e-4 * fmax(1e-3, fabs(x[i]));
                    double d = d4_ld(x, i, h);
                    /* |g - d| <= 1e-6 |g| + roundoff of g (64 eps terms) + of the stencil
                     * (~1.5 eps_ld |f| / h, with margin) */
                    double tol_abs = 64 * DBL_EPSILON * terms[i] + 1e2 * LDBL_EPSILON * scale / h;
                    double e = fabs(g[i] - d) / (fmax(fabs(g[i]), fabs(d)) + tol_abs / 1e-6);
                    worst_d = fmax(worst_d, e);
                    CHECK(e < 1e-6, "dKL/dx%d at (%g, %g, %g, %g): %.12g vs %.12g", i, x[0], x[1],
                          x[2], x[3], g[i], d);
                }
                if (c == 1 && (b % 2 == 1)) {   /* a subset: derivative of the quadrature */
                    for (int i = 0; i < 3; i += 2) {
                        double h = 1e-3 * fabs(x[i]);
                        double d = d4(f_quad, x, i, h);
                        /* quadrature values carry ~1e-13 scale of error; 1.5 noise / h */
                        double tol_abs = 64 * DBL_EPSILON * terms[i] + 1e-12 * scale / h;
                        double e = fabs(g[i] - d) / (fmax(fabs(g[i]), fabs(d)) + tol_abs / 1e-4);
                        worst_dq = fmax(worst_dq, e);
                        CHECK(e < 1e-4, "dKL/dx%d vs quadrature at (%g, %g, %g): %.12g vs %.12g",
                              i, x[0], x[1], x[2], g[i], d);
                    }
                }
                n_cases++;
            }
    printf("KL: %d cases; max scaled |analytic - quadrature| %.3g; max rel err of derivatives "
           "%.3g (vs differences of the formula in long double), %.3g (vs differences of the "
           "quadrature)\n",
           n_cases, worst_v, worst_d, worst_dq);

    /* Reparameterisation: CDF inversion and derivatives */
    double worst_r = 0;
    const double us[] = {0x1p-24, 1e-3, 0.2, 0.5, 0.8, 0.999, 1 - 0x1p-24};
    for (size_t a = 0; a < sizeof ks / sizeof *ks; a++)
        for (size_t i = 0; i < sizeof us / sizeof *us; i++) {
            double k = ks[a], lam = 1.7, u = us[i], dk, dl;
            double th = datm_weibull_reparam(k, lam, u, &dk, &dl);
            /* F(theta) = 1 - exp(-(theta/lam)^k) must be u: compare -log(1-u) */
            double t = pow(th / lam, k);
            CHECK(relerr(t, -log1p(-u)) < 1e-12 || th == 0, "CDF inversion k=%g u=%g", k, u);
            double hk = 1e-4 * k, hl = 1e-4 * lam;
            double nk = (datm_weibull_reparam(k - 2 * hk, lam, u, 0, 0) - 8 * datm_weibull_reparam(k - hk, lam, u, 0, 0) +
                         8 * datm_weibull_reparam(k + hk, lam, u, 0, 0) - datm_weibull_reparam(k + 2 * hk, lam, u, 0, 0)) / (12 * hk);
            double nl = (datm_weibull_reparam(k, lam - 2 * hl, u, 0, 0) - 8 * datm_weibull_reparam(k, lam - hl, u, 0, 0) +
                         8 * datm_weibull_reparam(k, lam + hl, u, 0, 0) - datm_weibull_reparam(k, lam + 2 * hl, u, 0, 0)) / (12 * hl);
            if (th > 1e-200) {
                double e = fmax(relerr(dk, nk), relerr(dl, nl));
                worst_r = fmax(worst_r, e);
                CHECK(e < 1e-6, "dtheta k=%g u=%g: dk %.12g vs %.12g, dl %.12g vs %.12g", k, u, dk, nk, dl, nl);
            }
        }
    printf("reparameterisation: max rel err of derivatives %.3g\n", worst_r);

    /* sample mean vs lam Gamma(1 + 1/k) */
    datm_rng rng;
    datm_rng_init(&rng, 11, DATM_STREAM_TEST, 5);
    const double kk[] = {0.5, 1.0, 3.0};
    for (int a = 0; a < 3; a++) {
        const int n = 200000;
        double s = 0, s2 = 0;
        for (int i = 0; i < n; i++) {
            double th = datm_weibull_reparam(kk[a], 2.0, datm_rng_uniform(&rng), NULL, NULL);
            s += th;
            s2 += th * th;
        }
        double m = s / n, sd = sqrt((s2 / n - m * m) / n);
        double mu = datm_weibull_mean(kk[a], 2.0);
        printf("k=%g: sample mean %.6f, exact %.6f, z = %.2f\n", kk[a], m, mu, (m - mu) / sd);
        CHECK(fabs(m - mu) < 5 * sd, "mean at k=%g", kk[a]);
    }

    /* clamp bounds, extreme noise/scales/priors: finite in f32 and f64; f32 ~ f64 */
    {
        enum { NN = 2 * 4 * 5 * 4 };
        float kf[NN], lf[NN], uf[NN], af[NN], th[NN], dk[NN], dl[NN], kl[NN], g1[NN], g2[NN], g3[NN], mf[NN];
        double kd[NN], ld[NN], ad[NN], thd[NN], dkd[NN], dld[NN], kld[NN], h1[NN], h2[NN], h3[NN], md[NN];
        const double kb[] = {0.1, 10.0}, lb[] = {1e-10, 1e-3, 1.0, 1e4};
        const float ub[] = {0x1p-24f, 0.2f, 0.5f, 0.8f, 1 - 0x1p-24f};
        const double ab[] = {1e-4, 1e-3, 1.0, 1e4};
        int n = 0;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 4; b++)
                for (int c = 0; c < 5; c++)
                    for (int d = 0; d < 4; d++, n++) {
                        kd[n] = kf[n] = (float)kb[a];
                        ld[n] = lf[n] = (float)lb[b];
                        uf[n] = ub[c];
                        ad[n] = af[n] = (float)ab[d];
                    }
        datm_weibull_reparam_f32(NN, kf, lf, uf, th, dk, dl);
        datm_weibull_kl_f32(NN, kf, lf, af, kl, g1, g2, g3);
        datm_weibull_mean_f32(NN, kf, lf, mf);
        datm_weibull_reparam_f64(NN, kd, ld, uf, thd, dkd, dld);
        datm_weibull_kl_f64(NN, kd, ld, ad, kld, h1, h2, h3);
        datm_weibull_mean_f64(NN, kd, ld, md);
        int bad = 0, mism = 0;
        for (int i = 0; i < NN; i++) {
            float v[] = {th[i], dk[i], dl[i], kl[i], g1[i], g2[i], g3[i], mf[i]};
            double w[] = {thd[i], dkd[i], dld[i], kld[i], h1[i], h2[i], h3[i], md[i]};
            for (int j = 0; j < 8; j++) {
                if (!isfinite(v[j]) || !isfinite(w[j])) {
                    bad++;
                    printf("non-finite: k=%g lam=%g u=%g alpha=%g quantity %d: %g %g\n", kd[i], ld[i], uf[i], ad[i], j, v[j], w[j]);
                }
                /* f32 agrees with f64 where the f64 value is a normal float, to 1e-5
                 * relative or 1e-6 of the magnitude of the terms that cancel in it */
                double g1 = tgamma(1 + 1 / kd[i]);
                double mag = 0;
                if (j == 3) mag = fabs(ad[i] * log(ld[i])) + DATM_EULER_GAMMA * ad[i] / kd[i] +
                                  fabs(log(kd[i])) + ld[i] * g1 + fabs(lgamma(ad[i])) + 1;
                if (j == 4) mag = 1 / kd[i] + DATM_EULER_GAMMA * ad[i] / (kd[i] * kd[i]) +
                                  ld[i] * g1 * fabs(datm_digamma(1 + 1 / kd[i])) / (kd[i] * kd[i]);
                if (j == 5) mag = ad[i] / ld[i] + g1;
                if (j == 6) mag = fabs(log(ld[i])) + DATM_EULER_GAMMA / kd[i] + fabs(datm_digamma(ad[i]));
                if (fabs(w[j]) > 1e-30 && fabs(w[j]) < 1e30 &&
                    fabs(v[j] - w[j]) > 1e-5 * fabs(w[j]) + 1e-6 * mag + 1e-30) {
                    mism++;
                    printf("f32/f64 mismatch: k=%g lam=%g u=%g alpha=%g q%d: %.9g vs %.17g\n", kd[i], ld[i], uf[i], ad[i], j, v[j], w[j]);
                }
            }
        }
        CHECK(bad == 0, "%d non-finite values at the bounds", bad);
        CHECK(mism == 0, "%d f32/f64 mismatches", mism);
    }
    return check_result();
}
