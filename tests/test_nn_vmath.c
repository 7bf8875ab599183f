/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_nn */
/* The vectorisable float exp, log, log1p, lgamma and digamma of engine/nn/vmath.h against
 * libm in double at the same float arguments, on dense grids over their working ranges
 * (error measured relative to max(1, |f|) for lgamma/digamma and log, relative otherwise);
 * and the clamped ends of exp stay finite. Also Gamma, the lgamma+digamma and Gamma+digamma
 * pairs, log1p01 (ln(1 + t) on [0, 1]) and the array
 * softplus built on it, relative to libm. Each kernel and range is one row of a table run by
 * one sweep (inputs: range and grid; reference; tolerance). */
#include <math.h>
#include <stdio.h>

#include "math/math.h"
#include "nn/nn.h"
#include "nn/vmath.h"
#include "test_check.h"


typedef float (*ffn)(float);
typedef double (*dfn)(double);

/* One row per kernel and range: the float kernel f against the double reference ref at the
 * same float arguments, on n log- or linearly-spaced points in [lo, hi]; the error is
 * relative to |ref| or, with rel1, to max(1, |ref|); it must stay within tol. */
typedef struct kernel_case {
    const char *name;
    ffn         f;
    dfn         ref;
    double      lo, hi;
    int         logscale, relative_to_one;
    double      tol;
} kernel_case;

/* max error of one case over its grid */
static double sweep(const kernel_case *c)
{
    const int n = 200001;
    double worst = 0, at = c->lo;
    for (int i = 0; i < n; i++) {
        double t = (double)i / (n - 1);
        double xd = c->logscale ? c->lo * pow(c->hi / c->lo, t) : c->lo + (c->hi - c->lo) * t;
        float x = (float)xd;
        double r = c->ref((double)x);
        double v = c->f(x);
        double scale = c->relative_to_one ? fmax(1.0, fabs(r)) : fabs(r);
        double e = fabs(v - r) / scale;
        if (!(e <= worst)) { worst = e; at = x; }
    }
    printf("%-9s [%g, %g]: max error %.3g at %.9g (tolerance %.1g)\n", c->name, c->lo, c->hi,
           worst, at, c->tol);
    CHECK(worst <= c->tol, "%s: error %.3g at %.9g", c->name, worst, at);
    return worst;
}

static double lgamma_d(double x) { return lgamma(x); }
static double tgamma_d(double x) { return tgamma(x); }
/* the paired functions, each output on its own */
static float lg_of_pair(float x) { float a, b; datm_vlgamma_digammaf(x, &a, &b); return a; }
static float dg_of_pair(float x) { float a, b; datm_vlgamma_digammaf(x, &a, &b); return b; }
static float g_of_pair(float x) { float a, b; datm_vgamma_digammaf(x, &a, &b); return a; }
static float dg_of_gpair(float x) { float a, b; datm_vgamma_digammaf(x, &a, &b); return b; }
/* the array softplus of engine/nn (exp + log1p01) one value at a time, and libm's */
static float softplus_f(float x)
{
    float y;
    datm_softplus_f32(1, &x, &y);
    return y;
}
static double softplus_d(double x) { return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x))); }
static double digamma_d(double x) { return datm_digamma(x); }

int main(void)
{
    /* float rounding of the result alone is 6e-8 relative; the polynomials add a few ulp.
     * lgamma(x) = lgamma(x + 8) - ln(prod) cancels two terms ~10 for x < 8: ~4 ulp of 10.
     * Gamma = e^(Stirling) / P: the exp argument reaches ~85 near 34 (85 x 6e-8 relative). */
    static const kernel_case cases[] = {
        {"exp",       datm_vexpf,       exp,       -87.0, 88.0, 0, 0, 5e-7},
        {"log",       datm_vlogf,       log,       1e-37, 1e38, 1, 1, 3e-7},
        {"log",       datm_vlogf,       log,       0.5,   2.0,  0, 0, 5e-7},
        {"log1p",     datm_vlog1pf,     log1p,     -0.999, 1e6, 0, 0, 5e-7},
        {"log1p",     datm_vlog1pf,     log1p,     1e-30, 1.0,  1, 0, 5e-7},
        {"log1p01",   datm_vlog1p01f,   log1p,     1e-38, 1.0,  1, 0, 5e-7},
        {"log1p01",   datm_vlog1p01f,   log1p,     1e-6,  1.0,  0, 0, 5e-7},
        {"softplus",  softplus_f,       softplus_d, -87.0, 88.0, 0, 0, 5e-7},
        {"lgamma",    datm_vlgammaf,    lgamma_d,  1e-4,  1e4,  1, 1, 6e-6},
        {"digamma",   datm_vdigammaf,   digamma_d, 1e-4,  1e4,  1, 1, 2e-6},
        {"gamma",     datm_vgammaf,     tgamma_d,  1e-4,  12.0, 1, 0, 1e-5},
        {"gamma",     datm_vgammaf,     tgamma_d,  12.0,  33.9, 0, 0, 2e-5},
        {"lg(pair)",  lg_of_pair,       lgamma_d,  1e-4,  1e4,  1, 1, 6e-6},
        {"dg(pair)",  dg_of_pair,       digamma_d, 1e-4,  1e4,  1, 1, 2e-6},
        {"g(pair)",   g_of_pair,        tgamma_d,  1e-4,  12.0, 1, 0, 1e-5},
        {"dg(gpair)", dg_of_gpair,      digamma_d, 1e-4,  33.9, 1, 1, 2e-6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) sweep(&cases[i]);
    CHECK(datm_vlog1p01f(0.0f) == 0.0f, "log1p01(0) = %g", datm_vlog1p01f(0.0f));
    /* clamped ends */
    float big = datm_vexpf(1000.0f), tiny = datm_vexpf(-1000.0f), inf_arg = datm_vexpf(INFINITY);
    CHECK(isfinite(big) && big > 1e38f, "exp(1000) = %g", big);
    CHECK(tiny >= 0 && tiny < 2e-38f, "exp(-1000) = %g", tiny);
    CHECK(isfinite(inf_arg), "exp(inf) = %g", inf_arg);
    return check_result();
}
