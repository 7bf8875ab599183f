/* ctest-labels: unit;stat  ctest-timeout: 120  ctest-link: datm_dist */
/* tests/test_rsvi_sampler.c: the RSVI gamma sampler of GHAI (engine/dist/gamma_rsvi).
 * - h(eps, a): its derivatives vs central differences; the acceptance test agrees with
 *   the closed form of the Marsaglia-Tsang bound;
 * - the boosted sampler z = lam h(eps, alpha+B) prod u_i^(1/(alpha+i-1)) has the moments of
 *   Gamma(alpha, scale lam) (mean, variance: z < 4.5 from standard errors) and passes a
 *   Kolmogorov-Smirnov test on ln z against the exact gamma CDF (p > 1e-4), for alpha in
 *   {0.01, 0.1, 1, 10} and B in {1, 4 (GHAI default)}, 200,000 draws each at a fixed seed;
 * - the mean number of proposals stays at the Marsaglia-Tsang level (< 1.1 for a' >= 1);
 * - the array kernels (f32, f64) equal the scalar sample and respect the floor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"
#include "dist/gamma_rsvi.h"
#include "test_rand_stat.h"

typedef struct { double a, lam; } gamma_ctx;

static double gamma_cdf_log(double lz, const void *c)
{
    const gamma_ctx *g = c;
    double p, q;
    stat_gamma_pq_logx(g->a, lz - log(g->lam), &p, &q);
    return p;
}

static void check_h_derivatives(void)
{
    const double as[] = {1.05, 2.0, 4.1, 14.0};
    const double es[] = {-2.5, -0.7, 0.0, 0.4, 3.1};
    double worst = 0;
    for (size_t i = 0; i < DATM_COUNTOF(as); i++) {
        for (size_t j = 0; j < DATM_COUNTOF(es); j++) {
            double a = as[i], e = es[j], da, de;
            datm_rsvi_h(e, a, &da, &de);
            const double h = 1e-6;
            double na = (datm_rsvi_h(e, a + h, NULL, NULL) - datm_rsvi_h(e, a - h, NULL, NULL)) /
                        (2 * h);
            double ne = (datm_rsvi_h(e + h, a, NULL, NULL) - datm_rsvi_h(e - h, a, NULL, NULL)) /
                        (2 * h);
            double r1 = fabs(da - na) / fmax(fabs(na), 1e-8);
            double r2 = fabs(de - ne) / fmax(fabs(ne), 1e-8);
            worst = fmax(worst, fmax(r1, r2));
            CHECK(r1 < 1e-6 && r2 < 1e-6, "h'(eps=%g, a=%g): da %.12g vs %.12g, deps %.12g vs %.12g",
                  e, a, da, na, de, ne);
            /* the Marsaglia-Tsang test: accept iff ln u < eps^2/2 + d - d v + d ln v */
            double d = a - 1.0 / 3, v = pow(1 + e / sqrt(9 * d), 3);
            double bound = 0.5 * e * e + d - d * v + d * log(v);
            CHECK(datm_rsvi_accept(e, a, bound - 1e-9) && !datm_rsvi_accept(e, a, bound + 1e-9),
                  "acceptance bound at eps=%g a=%g", e, a);
        }
    }
    printf("h derivatives: max rel err %.3g\n", worst);
}

static void check_moments(double alpha, int boost, double lam, uint64_t stream)
{
    enum { N = 200000 };
    double *z = malloc(N * sizeof *z), *lz = malloc(N * sizeof *lz);
    datm_rng r;
    datm_rng_init(&r, 20240611, DATM_STREAM_TEST, stream);
    float noise[DATM_RSVI_NOISE_DIM(DATM_RSVI_MAX_BOOST)];
    long props = 0;
    for (int i = 0; i < N; i++) {
        int np;
        noise[0] = datm_rsvi_draw_eps(&r, alpha + boost, &np);
        for (int j = 1; j <= boost; j++) noise[j] = datm_rng_uniform_f(&r);
        props += np;
        z[i] = datm_rsvi_sample(alpha, lam, boost, noise, NULL, NULL, &lz[i]);
    }
    char what[96];
    snprintf(what, sizeof what, "Gamma(%g, scale %g) B=%d", alpha, lam, boost);
    stat_moments(what, z, N, alpha * lam, alpha * lam * lam);
    gamma_ctx g = {alpha, lam};
    double d, p = stat_ks(lz, N, gamma_cdf_log, &g, &d);
    double mp = (double)props / N;
    printf("  %-34s KS D %.5f p %.4f  proposals/draw %.4f\n", what, d, p, mp);
    CHECK(p > STAT_PMIN, "%s: KS p = %.3g", what, p);
    CHECK(mp < 1.1, "%s: %.4f proposals per draw", what, mp);
    free(z);
    free(lz);
}

static void check_kernels(void)
{
    enum { N = 64, B = 4 };
    float kf[N], lf[N], noise[N * (B + 1)], z32[N], dk32[N], dl32[N];
    double kd[N], ld[N], z64[N], dk64[N], dl64[N];
    datm_rng r;
    datm_rng_init(&r, 5, DATM_STREAM_TEST, 99);
    for (int i = 0; i < N; i++) {
        /* the first quarter small (shape 0.1, scale 0.05) so that some hit the floor */
        kd[i] = kf[i] = i < N / 4 ? 0.1f : (float)(0.1 + 9.9 * datm_rng_uniform(&r));
        ld[i] = lf[i] = i < N / 4 ? 0.05f : (float)(0.01 + 3 * datm_rng_uniform(&r));
        datm_rsvi_draw_noise(&r, kd[i], B, noise + i * (B + 1));
    }
    const double zmin = 1e-3;
    datm_rsvi_sample_f32(N, B, zmin, kf, lf, noise, z32, dk32, dl32);
    datm_rsvi_sample_f64(N, B, zmin, kd, ld, noise, z64, dk64, dl64);
    int floored = 0;
    for (int i = 0; i < N; i++) {
        double dk, dl, z = datm_rsvi_sample(kd[i], ld[i], B, noise + i * (B + 1), &dk, &dl, NULL);
        if (z <= zmin) {
            floored++;
            CHECK(z64[i] == zmin && dk64[i] == 0 && dl64[i] == 0, "floor at unit %d", i);
            continue;
        }
        CHECK(z64[i] == z && dk64[i] == dk && dl64[i] == dl, "f64 kernel unit %d", i);
        CHECK(fabs(z32[i] - z) <= 1e-6 * z && fabs(dk32[i] - dk) <= 1e-6 * fabs(dk) + 1e-30 &&
                  fabs(dl32[i] - dl) <= 1e-6 * fabs(dl),
              "f32 kernel unit %d", i);
    }
    printf("kernels: %d of %d units at the floor\n", floored, N);
    CHECK(floored > 0 && floored < N, "floor not exercised (%d of %d)", floored, N);
}

int main(void)
{
    check_h_derivatives();
    const double alphas[] = {0.01, 0.1, 1.0, 10.0};
    const int boosts[] = {1, 4};
    uint64_t s = 0;
    for (size_t i = 0; i < DATM_COUNTOF(alphas); i++)
        for (size_t j = 0; j < DATM_COUNTOF(boosts); j++)
            check_moments(alphas[i], boosts[j], 1.0, s++);
    check_moments(0.3, 4, 2.5, s++);   /* the scale */
    check_kernels();
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("all RSVI sampler checks passed\n");
    return 0;
}
