/* ctest-labels: unit;stat  ctest-timeout: 180  ctest-link: datm_rand */
/* tests/test_rand_samplers.c: every engine/rand sampler at fixed seeds.
 * Moments: the sample mean against the exact mean with tolerance STAT_Z standard errors
 * (from the exact variance) and the sample variance against the exact variance (SE from
 * the sample fourth central moment). Goodness of fit: Kolmogorov-Smirnov against the exact
 * CDF for continuous laws, pooled Pearson chi-square against the exact pmf for discrete
 * ones; both must have p > STAT_PMIN. Plus the ziggurat table's defining identities,
 * edge cases, and agreement of gamma with exp(log_gamma) on the same stream. */
#include "core/testhooks.h"
#include "rand/rand.h"
#include "rand/rand_internal.h"
#include "test_rand_stat.h"

#include "core/core.h"

#include <float.h>
#include <string.h>

static double *xbuf; /* (NMAX) scratch sample */
#define NMAX 2000000

static void rng_for(datm_rng *r, uint64_t case_id)
{
    datm_rng_init(r, 20240601, DATM_STREAM_TEST, case_id);
}

static void report_gof(const char *what, double p, double stat)
{
    printf("  %-34s GOF p %.3g (stat %.4g)\n", what, p, stat);
    CHECK(p > STAT_PMIN, "%s: goodness of fit p = %.3g", what, p);
}

/* One continuous law under test, one row: n draws from stream case_id, the sample moments
 * against the exact mean and variance (skipped when var is NaN: no finite 8th moment for the
 * standard error), Kolmogorov-Smirnov against the exact CDF (skipped when cdf is NULL), and
 * with `unit` every draw inside [0, 1]. */
typedef struct law_case {
    char     name[64];
    uint64_t case_id;
    size_t   n;
    double (*draw)(datm_rng *r, const void *par);
    const void *par;
    double   mean, var;
    double (*cdf)(double x, const void *par);
    int      unit;
} law_case;

static void run_law(const law_case *c)
{
    datm_rng r;
    rng_for(&r, c->case_id);
    int bad = 0;
    for (size_t i = 0; i < c->n; i++) {
        xbuf[i] = c->draw(&r, c->par);
        bad += c->unit && !(xbuf[i] >= 0.0 && xbuf[i] <= 1.0);
    }
    CHECK(bad == 0, "%s: %d draws outside [0,1]", c->name, bad);
    if (!isnan(c->var)) stat_moments(c->name, xbuf, c->n, c->mean, c->var);
    if (c->cdf) {
        char what[96];
        double d, p = stat_ks(xbuf, c->n, c->cdf, c->par, &d);
        snprintf(what, sizeof what, "%s: KS", c->name);
        report_gof(what, p, d);
    }
}

/* ---- ziggurat table ---- */

static void test_ziggurat_table(void)
{
    const double r = datm_zig_r, *x = datm_zig_x, *f = datm_zig_f;
    double v = r * exp(-0.5 * r * r) + sqrt(M_PI / 2) * erfc(r / sqrt(2.0));
    double worst = 0.0;
    CHECK(x[1] == r && x[256] == 0.0 && f[256] == 1.0, "ziggurat endpoints");
    worst = fmax(worst, fabs(x[0] * exp(-0.5 * r * r) / v - 1.0));
    for (int i = 1; i < 256; i++) {
        CHECK(x[i + 1] < x[i], "ziggurat x not decreasing at %d", i);
        worst = fmax(worst, fabs(f[i] / exp(-0.5 * x[i] * x[i]) - 1.0));
        worst = fmax(worst, fabs(x[i] * (f[i + 1] - f[i]) / v - 1.0));
    }
    printf("  ziggurat: layer areas and heights match v = %.17g within %.3g (relative)\n", v, worst);
    CHECK(worst < 1e-12, "ziggurat table identities off by %.3g", worst);
}

/* ---- continuous laws ---- */

static double cdf_normal(double x, const void *c)
{
    (void)c;
    return 0.5 * erfc(-x / sqrt(2.0));
}

static double cdf_exp(double x, const void *c)
{
    (void)c;
    return x <= 0 ? 0 : -expm1(-x);
}

static void test_normal(void)
{
    datm_rng r;
    rng_for(&r, 1);
    const size_t n = NMAX;
    for (size_t i = 0; i < n; i++)
        xbuf[i] = datm_rng_normal(&r);
    stat_moments("normal", xbuf, n, 0.0, 1.0);
    /* fine-binned chi-square on [-4, 4] (width 1/40) plus two tails: sensitive to errors in
     * single ziggurat layers or wedges */
    enum { NB = 322 };
    static double obs[NB], ex[NB];
    memset(obs, 0, sizeof obs);
    size_t tail = 0;
    for (size_t i = 0; i < n; i++) {
        double z = xbuf[i];
        int b = z < -4.0 ? 0 : (z >= 4.0 ? NB - 1 : 1 + (int)floor((z + 4.0) * 40.0));
        if (b > NB - 2 && z < 4.0)
            b = NB - 2;
        obs[b]++;
        tail += fabs(z) > datm_zig_r;
    }
    for (int b = 0; b < NB; b++) {
        double lo = b == 0 ? -INFINITY : -4.0 + (b - 1) / 40.0;
        double hi = b == NB - 1 ? INFINITY : -4.0 + b / 40.0;
        ex[b] = (double)n * (cdf_normal(hi, NULL) - cdf_normal(lo, NULL));
    }
    double chi, p = stat_chi2(obs, ex, NB, &chi);
    report_gof("normal: 322-bin chi-square", p, chi);
    double pt = erfc(datm_zig_r / sqrt(2.0)), zt = ((double)tail - n * pt) / sqrt(n * pt * (1 - pt));
    printf("  normal: tail beyond r: %zu draws (expected %.1f, z %.2f)\n", tail, n * pt, zt);
    CHECK(fabs(zt) < STAT_Z, "normal tail fraction z = %.2f", zt);
    double d;
    p = stat_ks(xbuf, n, cdf_normal, NULL, &d);
    report_gof("normal: KS", p, d);
    /* normal_fill_f is the float rounding of the same sequence */
    datm_rng a, b;
    rng_for(&a, 2);
    b = a;
    float fv[1001];
    datm_rng_normal_fill_f(&a, fv, 1001);
    int same = 1;
    for (int i = 0; i < 1001; i++)
        same &= fv[i] == (float)datm_rng_normal(&b);
    CHECK(same, "normal_fill_f is not (float)normal");
    /* normal_fill (double) is the same sequence exactly, and leaves the stream where the
     * calls would: runs of many lengths, from buffer positions odd and even (a uniform_f
     * between runs takes one word), over many rejections (20000 values ~ 200 slow paths) */
    static double dv[20000];
    for (int force = 0; force < 2; force++) {   /* the AVX2 path and the portable one */
        datm_test_hooks.rand_scalar = force;
        rng_for(&a, 3);
        b = a;
        same = 1;
        size_t lens[] = {0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 100, 999, 20000};
        for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
            datm_rng_normal_fill(&a, dv, lens[t]);
            for (size_t i = 0; i < lens[t]; i++) same &= dv[i] == datm_rng_normal(&b);
            same &= datm_rng_uniform_f(&a) == datm_rng_uniform_f(&b);
            same &= memcmp(&a, &b, sizeof a) == 0;
        }
        /* a long run across the carry of the block counter (bulk batches) */
        rng_for(&a, 4);
        a.ctr[0] = 0xffffffffu - 40;
        b = a;
        datm_rng_normal_fill(&a, dv, 3000);
        for (size_t i = 0; i < 3000; i++) same &= dv[i] == datm_rng_normal(&b);
        same &= memcmp(&a, &b, sizeof a) == 0;
        CHECK(same, "normal_fill (%s) is not the sequence of datm_rng_normal",
              force ? "portable" : "SIMD");
    }
    datm_test_hooks.rand_scalar = 0;
}

static double draw_exp(datm_rng *r, const void *par)
{
    (void)par;
    return datm_rng_exponential(r);
}

static void test_exponential(void)
{
    run_law(&(law_case){"exponential", 3, 500000, draw_exp, NULL, 1.0, 1.0, cdf_exp, 0});
}

static double cdf_gamma(double x, const void *c)
{
    return stat_gamma_p(*(const double *)c, x);
}

static double cdf_log_gamma(double t, const void *c)
{
    double p, q;
    stat_gamma_pq_logx(*(const double *)c, t, &p, &q);
    return p;
}

static void test_gamma(void)
{
    static const double shapes[] = { 1e-3, 0.1, 0.5, 1.0, 3.7, 100.0 };
    const size_t n = 600000;
    char what[96];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        double a = shapes[s];
        datm_rng r;
        rng_for(&r, 100 + s);
        size_t under = 0;
        for (size_t i = 0; i < n; i++) {
            xbuf[i] = datm_rng_gamma(&r, a);
            under += xbuf[i] < DBL_MIN;
            if (!(xbuf[i] >= 0.0 && xbuf[i] < INFINITY)) {
                CHECK(0, "gamma(%g) gave %g", a, xbuf[i]);
                break;
            }
        }
        snprintf(what, sizeof what, "gamma(%g)", a);
        stat_moments(what, xbuf, n, a, a);
        /* draws below DBL_MIN (underflowed to 0 or subnormal): P(a, DBL_MIN), binomially */
        double pu = stat_gamma_p(a, DBL_MIN);
        double zu = pu > 0 ? ((double)under - n * pu) / sqrt(n * pu * (1 - pu) + 1e-300) : (double)under;
        CHECK(fabs(zu) < STAT_Z, "gamma(%g): %zu draws below DBL_MIN, expected %.1f", a, under, n * pu);
        if (a >= 0.1) {
            double d, p = stat_ks(xbuf, n, cdf_gamma, &a, &d);
            snprintf(what, sizeof what, "gamma(%g): KS", a);
            report_gof(what, p, d);
        } else {
            printf("  gamma(%g): %zu of %zu draws below DBL_MIN (expected %.1f)\n", a, under, n, n * pu);
        }
        /* log_gamma: exact mean digamma(a), variance trigamma(a); KS via P(a, e^t) */
        rng_for(&r, 200 + s);
        for (size_t i = 0; i < n; i++)
            xbuf[i] = datm_rng_log_gamma(&r, a);
        snprintf(what, sizeof what, "log_gamma(%g)", a);
        stat_moments(what, xbuf, n, stat_digamma(a), stat_trigamma(a));
        double d, p = stat_ks(xbuf, n, cdf_log_gamma, &a, &d);
        snprintf(what, sizeof what, "log_gamma(%g): KS", a);
        report_gof(what, p, d);
        /* same stream: gamma == exp(log_gamma) up to rounding whenever representable */
        datm_rng r1, r2;
        rng_for(&r1, 300 + s);
        r2 = r1;
        double worst = 0.0;
        for (int i = 0; i < 10000; i++) {
            double g = datm_rng_gamma(&r1, a), lg = datm_rng_log_gamma(&r2, a);
            if (lg > -700.0)
                worst = fmax(worst, fabs(g / exp(lg) - 1.0));
        }
        CHECK(worst < 1e-12, "gamma(%g) vs exp(log_gamma) differ by %.3g", a, worst);
    }
    /* large and moderate shapes not in the list, mean/var only */
    datm_rng r;
    rng_for(&r, 150);
    for (size_t i = 0; i < n; i++)
        xbuf[i] = datm_rng_gamma(&r, 1e5);
    stat_moments("gamma(1e5)", xbuf, n, 1e5, 1e5);
    CHECK(datm_rng_gamma(&r, 0.0) == 0.0 && datm_rng_log_gamma(&r, 0.0) == -INFINITY, "gamma(0)");
    /* very tiny shape: the log stays finite (no underflow in log space) */
    double lg = datm_rng_log_gamma(&r, 1e-200);
    CHECK(lg < -1e150 && lg > -INFINITY, "log_gamma(1e-200) = %g", lg);
}

typedef struct {
    double a, b;
} beta_par;

/* Closed-form beta CDFs used here: arcsine, integer (a, b) polynomial, x^a (b = 1),
 * 1 - (1-x)^b (a = 1). */
static double cdf_beta(double x, const void *c)
{
    const beta_par *p = c;
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    if (p->a == 0.5 && p->b == 0.5)
        return 2.0 / M_PI * asin(sqrt(x));
    if (p->b == 1.0)
        return pow(x, p->a);
    if (p->a == 1.0)
        return -expm1(p->b * log1p(-x));
    /* integer a, b: I_x(a,b) = sum_{j=a}^{a+b-1} C(a+b-1, j) x^j (1-x)^(a+b-1-j) */
    int a = (int)p->a, b = (int)p->b, m = a + b - 1;
    double s = 0.0, binom = 1.0;
    for (int j = 0; j <= m; j++) {
        if (j >= a)
            s += binom * pow(x, j) * pow(1 - x, m - j);
        binom = binom * (m - j) / (j + 1);
    }
    return s;
}

static double draw_beta(datm_rng *r, const void *par)
{
    const beta_par *p = par;
    return datm_rng_beta(r, p->a, p->b);
}

static void test_beta(void)
{
    static const beta_par pars[] = { { 0.5, 0.5 }, { 2, 5 }, { 3, 1 }, { 1, 0.2 }, { 1e-3, 2e-3 }, { 7.5, 0.3 } };
    for (size_t s = 0; s < sizeof pars / sizeof pars[0]; s++) {
        const double a = pars[s].a, b = pars[s].b;
        law_case c = {"", 400 + s, 500000, draw_beta, &pars[s], a / (a + b),
                      a * b / ((a + b) * (a + b) * (a + b + 1)), s < 4 ? cdf_beta : NULL, 1};
        snprintf(c.name, sizeof c.name, "beta(%g, %g)", a, b);
        run_law(&c);
    }
}

static void test_dirichlet(void)
{
    static const double a1[] = { 0.3, 1.0, 2.5, 7.0 };       /* log-space path */
    static const double a2[] = { 1.5, 2.0, 3.0 };            /* direct path */
    static const double a3[] = { 1e-3, 1e-3, 1e-3, 1e-3 };   /* tiny: all would underflow */
    static const double a4[] = { 1.0, 1.0, 1.0 };            /* marginal Beta(1, 2) */
    const double *as[] = { a1, a2, a3, a4 };
    const int ks[] = { 4, 3, 4, 3 };
    const size_t n = 400000;
    char what[96];
    for (int c = 0; c < 4; c++) {
        int k = ks[c];
        double a0 = 0;
        for (int i = 0; i < k; i++)
            a0 += as[c][i];
        datm_rng r;
        rng_for(&r, 500 + (uint64_t)c);
        double *comp = malloc(sizeof(double) * n * (size_t)k);
        int bad = 0;
        for (size_t t = 0; t < n; t++) {
            double out[4], s = 0;
            datm_rng_dirichlet(&r, as[c], k, out);
            for (int i = 0; i < k; i++) {
                s += out[i];
                bad += !(out[i] >= 0.0 && out[i] <= 1.0);
                comp[(size_t)i * n + t] = out[i];
            }
            bad += fabs(s - 1.0) > 1e-12;
        }
        CHECK(bad == 0, "dirichlet case %d: %d invalid draws", c, bad);
        for (int i = 0; i < k; i++) {
            double ai = as[c][i];
            snprintf(what, sizeof what, "dirichlet case %d comp %d", c, i);
            stat_moments(what, comp + (size_t)i * n, n, ai / a0, ai * (a0 - ai) / (a0 * a0 * (a0 + 1)));
        }
        if (c == 3) {
            beta_par bp = { 1.0, 2.0 };
            memcpy(xbuf, comp, n * sizeof(double));
            double d, p = stat_ks(xbuf, n, cdf_beta, &bp, &d);
            report_gof("dirichlet(1,1,1) comp 0 vs Beta(1,2): KS", p, d);
        }
        free(comp);
    }
}

typedef struct {
    double k, lambda;
} weib_par;

static double cdf_weibull(double x, const void *c)
{
    const weib_par *p = c;
    return x <= 0 ? 0 : -expm1(-pow(x / p->lambda, p->k));
}

static double draw_weibull(datm_rng *r, const void *par)
{
    const weib_par *p = par;
    return datm_rng_weibull(r, p->k, p->lambda);
}

static void test_weibull(void)
{
    static const weib_par pars[] = { { 0.1, 1.0 }, { 0.5, 2.0 }, { 1.7, 0.8 }, { 10.0, 3.0 } };
    for (size_t s = 0; s < sizeof pars / sizeof pars[0]; s++) {
        const double k = pars[s].k, l = pars[s].lambda;
        const double g1 = exp(stat_lgamma(1 + 1 / k)), g2 = exp(stat_lgamma(1 + 2 / k));
        law_case c = {"", 600 + s, 500000, draw_weibull, &pars[s], l * g1,
                      k >= 0.5 ? l * l * (g2 - g1 * g1) : NAN, cdf_weibull, 0};
        snprintf(c.name, sizeof c.name, "weibull(k %g, lambda %g)", k, l);
        run_law(&c);
    }
}

/* ---- discrete laws ---- */

static void test_poisson(void)
{
    static const double means[] = { 0.5, 5.0, 9.99, 10.0, 40.0, 1000.0 };
    const size_t n = 600000;
    char what[96];
    for (size_t s = 0; s < sizeof means / sizeof means[0]; s++) {
        double mu = means[s];
        datm_rng r;
        rng_for(&r, 700 + s);
        int K = (int)(mu + 12.0 * sqrt(mu) + 30.0);
        double *obs = calloc((size_t)K, sizeof(double)), *pmf = malloc(sizeof(double) * (size_t)K);
        double tail = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t k = datm_rng_poisson(&r, mu);
            xbuf[i] = (double)k;
            if (k < (uint64_t)K)
                obs[k]++;
            else
                tail++;
        }
        for (int k = 0; k < K; k++)
            pmf[k] = exp(-mu + k * log(mu) - stat_lgamma(k + 1.0));
        snprintf(what, sizeof what, "poisson(%g)", mu);
        stat_moments(what, xbuf, n, mu, mu);
        int df;
        double chi, p = stat_chi2_pmf(obs, pmf, K, tail, (double)n, &df, &chi);
        snprintf(what, sizeof what, "poisson(%g): chi-square df %d", mu, df);
        report_gof(what, p, chi);
        free(obs);
        free(pmf);
    }
    datm_rng r;
    rng_for(&r, 790);
    CHECK(datm_rng_poisson(&r, 0.0) == 0, "poisson(0)");
    size_t nz = 0;
    for (int i = 0; i < 100000; i++)
        nz += datm_rng_poisson(&r, 1e-3) != 0;
    double e = 100000 * -expm1(-1e-3);
    CHECK(fabs((double)nz - e) < STAT_Z * sqrt(e), "poisson(1e-3) nonzero %zu vs %.1f", nz, e);
}

static void test_categorical_multinomial(void)
{
    /* weights with zeros in the first, middle and last positions */
    static const double w[] = { 0, 1, 2, 0, 3.5, 0.25, 0, 10, 0 };
    enum { K = 9 };
    double cs[K], s = 0;
    for (int i = 0; i < K; i++)
        cs[i] = (s += w[i]);
    datm_rng r;
    rng_for(&r, 800);
    const size_t n = 1000000;
    double obs[K] = { 0 }, o2[K], e2[K];
    for (size_t t = 0; t < n; t++)
        obs[datm_rng_categorical_cumsum(&r, cs, K)]++;
    int nb = 0;
    for (int i = 0; i < K; i++) {
        if (w[i] == 0) {
            CHECK(obs[i] == 0, "zero-weight category %d drawn %g times", i, obs[i]);
            continue;
        }
        o2[nb] = obs[i];
        e2[nb++] = n * w[i] / s;
    }
    double chi, p = stat_chi2(o2, e2, nb, &chi);
    report_gof("categorical_cumsum (k 9, zeros)", p, chi);
    double one[1] = { 0.7 };
    CHECK(datm_rng_categorical_cumsum(&r, one, 1) == 0, "categorical k = 1");

    /* larger k: 1000 categories with random weights */
    enum { KL = 1000 };
    static double wl[KL], cl[KL], ol[KL], pm[KL];
    s = 0;
    for (int i = 0; i < KL; i++) {
        wl[i] = datm_rng_gamma(&r, 2.0);
        cl[i] = (s += wl[i]);
        ol[i] = 0;
    }
    for (size_t t = 0; t < n; t++)
        ol[datm_rng_categorical_cumsum(&r, cl, KL)]++;
    for (int i = 0; i < KL; i++)
        pm[i] = wl[i] / s;
    int df;
    p = stat_chi2_pmf(ol, pm, KL, 0.0, (double)n, &df, &chi);
    report_gof("categorical_cumsum (k 1000)", p, chi);

    /* multinomial: k = 9 (stack path), n = 37 per call: per-category moments, total */
    const size_t reps = 200000;
    double *cnt = malloc(sizeof(double) * reps * K);
    int bad = 0;
    for (size_t t = 0; t < reps; t++) {
        int64_t c[K] = { 0 };
        datm_rng_multinomial(&r, 37, w, K, c);
        int64_t tot = 0;
        for (int i = 0; i < K; i++) {
            tot += c[i];
            cnt[(size_t)i * reps + t] = (double)c[i];
        }
        bad += tot != 37;
    }
    CHECK(bad == 0, "multinomial totals wrong in %d draws", bad);
    char what[64];
    s = cs[K - 1];
    for (int i = 0; i < K; i++) {
        double pi = w[i] / s;
        if (pi == 0) {
            double mx = 0;
            for (size_t t = 0; t < reps; t++)
                mx = fmax(mx, cnt[(size_t)i * reps + t]);
            CHECK(mx == 0, "multinomial zero-weight category %d drawn", i);
            continue;
        }
        snprintf(what, sizeof what, "multinomial(37) comp %d", i);
        stat_moments(what, cnt + (size_t)i * reps, reps, 37 * pi, 37 * pi * (1 - pi));
    }
    free(cnt);
    /* multinomial with k > 512 (heap path), n = 5 per call: pooled counts chi-square */
    enum { KH = 700 };
    static double wh[KH], oh[KH], ph[KH];
    s = 0;
    for (int i = 0; i < KH; i++)
        s += (wh[i] = 1.0 + (i % 7));
    static int64_t ch[KH];
    memset(ch, 0, sizeof ch);
    const int64_t calls = 200000;
    for (int64_t t = 0; t < calls; t++)
        datm_rng_multinomial(&r, 5, wh, KH, ch);
    int64_t tot = 0;
    for (int i = 0; i < KH; i++) {
        tot += ch[i];
        oh[i] = (double)ch[i];
        ph[i] = wh[i] / s;
    }
    CHECK(tot == 5 * calls, "multinomial heap path total %lld", (long long)tot);
    p = stat_chi2_pmf(oh, ph, KH, 0.0, (double)tot, &df, &chi);
    report_gof("multinomial (k 700, n 5)", p, chi);
}

/* Exact CRT pmf by the Poisson-binomial recursion over customers. */
static void crt_pmf(int m, double rc, double *pmf) /* pmf: (m + 1) */
{
    for (int l = 0; l <= m; l++)
        pmf[l] = 0;
    pmf[0] = 1;
    for (int i = 1; i <= m; i++) {
        double p = rc / (rc + i - 1);
        for (int l = i; l >= 1; l--)
            pmf[l] = pmf[l] * (1 - p) + pmf[l - 1] * p;
        pmf[0] *= 1 - p;
    }
}

static void test_crt(void)
{
    static const struct {
        int m;
        double r;
    } cases[] = { { 1, 0.5 }, { 7, 0.3 }, { 50, 2.0 }, { 300, 0.7 }, { 2000, 0.05 }, { 1000, 40.0 }, { 5000, 1e-3 } };
    const size_t n = 200000;
    char what[96];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int m = cases[c].m;
        double rc = cases[c].r;
        double mean = 0, var = 0;
        for (int i = 1; i <= m; i++) {
            double p = rc / (rc + i - 1);
            mean += p;
            var += p * (1 - p);
        }
        double dg = rc * (stat_digamma(rc + m) - stat_digamma(rc));
        CHECK(fabs(dg - mean) < 1e-9 * mean, "CRT mean formula r(psi(r+m)-psi(r)) = %.17g vs sum %.17g",
              dg, mean);
        datm_rng r;
        rng_for(&r, 900 + c);
        double *pmf = malloc(sizeof(double) * (size_t)(m + 1)), *obs = calloc((size_t)(m + 1), sizeof(double));
        int bad = 0;
        for (size_t t = 0; t < n; t++) {
            int64_t l = datm_rng_crt(&r, m, rc);
            bad += l < 1 || l > m;
            xbuf[t] = (double)l;
            if (l >= 0 && l <= m)
                obs[l]++;
        }
        CHECK(bad == 0, "CRT(%d, %g) out of [1, m] %d times", m, rc, bad);
        snprintf(what, sizeof what, "crt(m %d, r %g)", m, rc);
        stat_moments(what, xbuf, n, dg, var);
        crt_pmf(m, rc, pmf);
        int df;
        double chi, p = stat_chi2_pmf(obs, pmf, m + 1, 0.0, (double)n, &df, &chi);
        snprintf(what, sizeof what, "crt(m %d, r %g): chi-square df %d", m, rc, df);
        report_gof(what, p, chi);
        free(pmf);
        free(obs);
    }
    /* very large m: moments only (the sparse phase does O(r log m) work) */
    static const double rs[] = { 3.0, 1e-3, 250.0 };
    for (int c = 0; c < 3; c++) {
        const int64_t m = 1000000;
        double rc = rs[c], var = 0;
        for (int64_t i = 1; i <= m; i++) {
            double p = rc / (rc + (double)i - 1);
            var += p * (1 - p);
        }
        datm_rng r;
        rng_for(&r, 950 + (uint64_t)c);
        const size_t nn = rc > 100 ? 5000 : 50000; /* ~4 conc log2(m) candidates per draw */
        for (size_t t = 0; t < nn; t++)
            xbuf[t] = (double)datm_rng_crt(&r, m, rc);
        snprintf(what, sizeof what, "crt(m 1e6, r %g)", rc);
        stat_moments(what, xbuf, nn, rc * (stat_digamma(rc + m) - stat_digamma(rc)), var);
    }
    datm_rng r;
    rng_for(&r, 990);
    CHECK(datm_rng_crt(&r, 0, 3.0) == 0 && datm_rng_crt(&r, 5, 0.0) == 1 && datm_rng_crt(&r, 5, INFINITY) == 5,
          "CRT edge cases");
}

int main(void)
{
    printf("test_rand_samplers\n");
    xbuf = malloc(sizeof(double) * NMAX);
    static const struct {
        const char *name;
        void (*fn)(void);
    } parts[] = { { "ziggurat table", test_ziggurat_table }, { "normal", test_normal },
                  { "exponential", test_exponential }, { "gamma", test_gamma }, { "beta", test_beta },
                  { "dirichlet", test_dirichlet }, { "weibull", test_weibull }, { "poisson", test_poisson },
                  { "categorical/multinomial", test_categorical_multinomial }, { "crt", test_crt } };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        double t0 = datm_time_now();
        parts[i].fn();
        printf("  [%s: %.2f s]\n", parts[i].name, datm_time_now() - t0);
    }
    free(xbuf);
    printf(fails ? "FAILED: %d checks\n" : "all checks passed\n", fails);
    return fails ? 1 : 0;
}
