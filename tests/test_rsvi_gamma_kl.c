/* ctest-labels: unit;grad  ctest-timeout: 60  ctest-link: datm_dist */
/* tests/test_rsvi_gamma_kl.c: KL(Gamma(a, scale lam) || Gamma(alpha, rate beta)) of GHAI
 * (engine/dist/gamma_rsvi) over a grid a in [0.1, 10], lam in [0.05, 7], alpha in
 * [1e-3, 100], beta in {1, 2.5}:
 *   - the closed form vs numerical integration of E_q[ln q - ln p] (Simpson in t = ln z,
 *     tails below 1e-16 cut): |diff| < 1e-7 (1 + |KL|);
 *   - its derivatives w.r.t. a, lam, alpha, beta vs 4th-order central differences of the
 *     closed form: rel err < 1e-6 (relative to max(|FD|, 1e-4));
 *   - the f32/f64 array kernels (beta = 1) agree with the scalar (f32 to 1e-5 relative). */
#include <math.h>
#include <stdio.h>

#include "core/core.h"
#include "dist/gamma_rsvi.h"
#include "test_rand_stat.h"

/* ln Gamma(z; shape s, scale c) */
static double lq(double s, double c, double lz)
{
    return -stat_lgamma(s) - s * log(c) + (s - 1) * lz - exp(lz) / c;
}

static double kl_numeric(double a, double lam, double alpha, double beta)
{
    /* lower tail: P(z < e^t) ~ (e^t/lam)^a / Gamma(a+1) < 1e-16 */
    double lo = log(lam) + (-37.0 + stat_lgamma(a + 1)) / a;
    double hi = log(lam * (a + 60 + 12 * sqrt(a)));
    const int n = 200000;
    const double dt = (hi - lo) / n;
    double s = 0;
    for (int k = 0; k <= n; k++) {
        double t = lo + k * dt, w = (k == 0 || k == n) ? 1 : (k % 2 ? 4 : 2);
        double l1 = lq(a, lam, t), l2 = lq(alpha, 1.0 / beta, t);
        s += w * exp(l1 + t) * (l1 - l2);
    }
    return s * dt / 3;
}

static double fd4(double (*f)(const double *x), double *x, int i)
{
    const double h = 1e-3 * fmax(1e-2, fabs(x[i]) < 1 ? fabs(x[i]) : 1.0);
    double x0 = x[i], v[4];
    const double off[4] = {-2, -1, 1, 2};
    for (int j = 0; j < 4; j++) {
        x[i] = x0 + off[j] * h;
        v[j] = f(x);
    }
    x[i] = x0;
    return (v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * h);
}

static double kl_of(const double *x)
{
    return datm_gamma_gamma_kl(x[0], x[1], x[2], x[3], NULL, NULL, NULL, NULL);
}

int main(void)
{
    const double as[] = {0.1, 0.5, 1.0, 3.0, 10.0};
    const double lams[] = {0.05, 1.0, 7.0};
    const double alphas[] = {1e-3, 0.3, 1.0, 20.0, 100.0};
    const double betas[] = {1.0, 2.5};
    double worst_int = 0, worst_d = 0;
    int n = 0;
    for (size_t i = 0; i < DATM_COUNTOF(as); i++)
        for (size_t j = 0; j < DATM_COUNTOF(lams); j++)
            for (size_t m = 0; m < DATM_COUNTOF(alphas); m++)
                for (size_t b = 0; b < DATM_COUNTOF(betas); b++) {
                    double x[4] = {as[i], lams[j], alphas[m], betas[b]}, d[4];
                    double kl = datm_gamma_gamma_kl(x[0], x[1], x[2], x[3], &d[0], &d[1], &d[2],
                                                    &d[3]);
                    double num = kl_numeric(x[0], x[1], x[2], x[3]);
                    double e = fabs(kl - num) / (1 + fabs(kl));
                    worst_int = fmax(worst_int, e);
                    CHECK(e < 1e-7, "KL(a=%g lam=%g || alpha=%g beta=%g) = %.12g, integral %.12g",
                          x[0], x[1], x[2], x[3], kl, num);
                    for (int p = 0; p < 4; p++) {
                        double fd = fd4(kl_of, x, p);
                        double r = fabs(d[p] - fd) / fmax(fabs(fd), 1e-4);
                        worst_d = fmax(worst_d, r);
                        CHECK(r < 1e-6, "dKL/dx%d at (a=%g lam=%g alpha=%g beta=%g): %.12g vs %.12g",
                              p, x[0], x[1], x[2], x[3], d[p], fd);
                    }
                    n++;
                }
    printf("%d points: KL vs integral max err %.3g; derivatives max rel err %.3g\n", n, worst_int,
           worst_d);

    /* array kernels */
    enum { N = 6 };
    const double kd[N] = {0.1, 0.5, 1, 2, 7, 10}, ld[N] = {0.05, 3, 1, 0.2, 1.5, 0.9};
    const double ad[N] = {1e-3, 1, 0.3, 100, 7, 2};
    float kf[N], lf[N], af[N], kl32[N], dk32[N], dl32[N], da32[N];
    double kl64[N], dk64[N], dl64[N], da64[N];
    for (int i = 0; i < N; i++) {
        kf[i] = (float)kd[i];
        lf[i] = (float)ld[i];
        af[i] = (float)ad[i];
    }
    datm_gamma_kl_f64(N, kd, ld, ad, kl64, dk64, dl64, da64);
    datm_gamma_kl_f32(N, kf, lf, af, kl32, dk32, dl32, da32);
    for (int i = 0; i < N; i++) {
        double a, b, c;
        double kl = datm_gamma_gamma_kl(kd[i], ld[i], ad[i], 1.0, &a, &b, &c, NULL);
        CHECK(kl64[i] == kl && dk64[i] == a && dl64[i] == b && da64[i] == c, "f64 kernel %d", i);
        /* the f32 inputs are the rounded values: compare with the scalar at those */
        kl = datm_gamma_gamma_kl(kf[i], lf[i], af[i], 1.0, &a, &b, &c, NULL);
        CHECK(fabs(kl32[i] - kl) <= 1e-5 * fmax(1, fabs(kl)) &&
                  fabs(dk32[i] - a) <= 1e-5 * fmax(1, fabs(a)) &&
                  fabs(dl32[i] - b) <= 1e-5 * fmax(1, fabs(b)) &&
                  fabs(da32[i] - c) <= 1e-5 * fmax(1, fabs(c)),
              "f32 kernel %d", i);
    }
    double mean[N];
    datm_gamma_mean_f64(N, kd, ld, mean);
    for (int i = 0; i < N; i++) CHECK(mean[i] == kd[i] * ld[i], "mean %d", i);
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("all gamma-gamma KL checks passed\n");
    return 0;
}
