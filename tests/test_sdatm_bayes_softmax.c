/* ctest-labels: unit;grad  ctest-timeout: 60  ctest-link: datm_nn */
/* tests/test_sdatm_bayes_softmax.c: the Bayesian softmax head of sDATM (engine/nn/bayes_softmax).
 *  1. gradient check (central differences, double, rel. err < 1e-4) of
 *     scale * NLL(y | softmax(S W)) + kl_scale * KL(q || p), W = mu + softplus(rho) eps with
 *     eps fixed, w.r.t. every mu, every rho and every input feature S; with and without the
 *     bias row; and with the mean weights (eps = NULL: rho gets no NLL gradient);
 *  2. the analytic KL equals E_q[log q(w) - log p(w)] by numerical quadrature for sigma from
 *     1e-3 to 10;
 *  3. the f32 path agrees with the f64 path (same source) to float accuracy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bayes_softmax.h"
#include "test_check.h"
#include "test_util.h"


/* the test's own generator (tests/test_util.h), independent of the engine's */
static uint64_t rs = 777;
static double unif(void) { return tu_unif(&rs); }
static double gauss(void) { return tu_gauss(&rs); }

enum { B = 7, D = 5, C = 4 };

typedef struct ctx {
    datm_bsm h;
    int64_t  size;           /* block elements; x = [block, S (B, D)] */
    const double *eps;       /* (R, C) or NULL */
    int32_t  y[B];
    double   scale, kl_scale;
} ctx;

static double objective(void *vc, const double *x, double *grad)
{
    ctx *c = vc;
    const datm_bsm *h = &c->h;
    const double *S = x + c->size;
    double W[(D + 1) * C], P[B * C], work[B * C + (D + 1) * C];
    datm_bsm_weights_f64(h, x, c->eps, W);
    datm_bsm_forward_f64(h, B, S, W, P);
    double f = c->scale * datm_bsm_nll_f64(h, B, P, c->y);
    if (grad) {
        memset(grad, 0, sizeof(double) * (size_t)(c->size + B * D));
        datm_bsm_backward_f64(h, B, x, grad, S, c->eps, W, P, c->y, c->scale, work,
                              grad + c->size, 0.0);
    }
    f += c->kl_scale * datm_bsm_kl_f64(h, x, grad, c->kl_scale);
    return f;
}

static void run_check(int bias, int use_eps)
{
    ctx c;
    memset(&c, 0, sizeof c);
    datm_params p;
    memset(&p, 0, sizeof p);
    datm_error err = {0};
    CHECK(datm_bsm_add_params(&c.h, &p, "cls", D, C, bias, &err) == DATM_OK);
    c.size = p.size;
    const int64_t n = c.size + B * D, RC = c.h.R * C;
    double *x = calloc((size_t)n, sizeof(double));
    double eps[(D + 1) * C];
    for (int64_t i = 0; i < RC; i++) {
        x[c.h.o_mu + i] = 0.7 * gauss();
        x[c.h.o_rho + i] = -1.5 + gauss();    /* sigma from ~0.05 to ~1.5 */
        eps[i] = gauss();
    }
    for (int64_t i = 0; i < B * D; i++) x[c.size + i] = fabs(gauss()) * 1.5;   /* theta-like */
    for (int i = 0; i < B; i++) c.y[i] = (int32_t)(unif() * C);
    c.eps = use_eps ? eps : NULL;
    c.scale = 1.0 / B;
    c.kl_scale = 1.0 / 300;   /* KL / N_train, as in a per-document ELBO */
    /* check the real entries (mu, rho, S), not the alignment padding of the block */
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)n), m = 0;
    for (int64_t i = 0; i < RC; i++) { idx[m++] = c.h.o_mu + i; idx[m++] = c.h.o_rho + i; }
    for (int64_t i = 0; i < B * D; i++) idx[m++] = c.size + i;
    datm_gradcheck gc;
    CHECK(datm_gradcheck_f64(objective, &c, x, n, idx, m, 1e-5, 1e-9, &gc, &err) == DATM_OK);
    free(idx);
    printf("bayes softmax grad check (bias %d, eps %d): %lld entries, max rel err %.3g "
           "(worst %lld: %.9g vs %.9g)\n", bias, use_eps, (long long)gc.n_checked,
           gc.max_rel_err, (long long)gc.worst, gc.worst_analytic, gc.worst_numeric);
    CHECK(gc.max_rel_err < 1e-4);

    /* f32 twin: same numbers to float accuracy */
    float *xf = calloc((size_t)n, sizeof(float)), *gf = calloc((size_t)n, sizeof(float));
    double *g = calloc((size_t)n, sizeof(double));
    float epsf[(D + 1) * C], Wf[(D + 1) * C], Pf[B * C], workf[B * C + (D + 1) * C];
    for (int64_t i = 0; i < n; i++) xf[i] = (float)x[i];
    for (int64_t i = 0; i < RC; i++) epsf[i] = (float)eps[i];
    double f64v = objective(&c, x, g);
    datm_bsm_weights_f32(&c.h, xf, use_eps ? epsf : NULL, Wf);
    datm_bsm_forward_f32(&c.h, B, xf + c.size, Wf, Pf);
    double f32v = c.scale * datm_bsm_nll_f32(&c.h, B, Pf, c.y);
    datm_bsm_backward_f32(&c.h, B, xf, gf, xf + c.size, use_eps ? epsf : NULL, Wf, Pf, c.y,
                          c.scale, workf, gf + c.size, 0.0f);
    f32v += c.kl_scale * datm_bsm_kl_f32(&c.h, xf, gf, c.kl_scale);
    double gmax = 0, gdiff = 0;
    for (int64_t i = 0; i < n; i++) {
        gmax = fmax(gmax, fabs(g[i]));
        gdiff = fmax(gdiff, fabs(g[i] - gf[i]));
    }
    printf("  f32 vs f64: objective %.9g vs %.9g, max grad diff %.3g (max |grad| %.3g)\n",
           f32v, f64v, gdiff, gmax);
    CHECK(fabs(f32v - f64v) <= 1e-5 * fmax(1, fabs(f64v)));
    CHECK(gdiff <= 1e-5 * fmax(1, gmax));
    free(xf); free(gf); free(g); free(x);
    datm_params_free(&p);
}

/* KL(N(m, s^2) || N(0, 1)) = int q (log q - log p) by the trapezoid rule on m +- 12 s */
static double kl_quadrature(double m, double s)
{
    const int n = 200000;
    const double a = m - 12 * s, b = m + 12 * s, dx = (b - a) / n;
    double sum = 0;
    for (int i = 0; i <= n; i++) {
        double w = a + i * dx, z = (w - m) / s;
        double lq = -0.5 * z * z - log(s) - 0.5 * log(2 * M_PI);
        double lp = -0.5 * w * w - 0.5 * log(2 * M_PI);
        double v = exp(lq) * (lq - lp);
        sum += (i == 0 || i == n) ? 0.5 * v : v;
    }
    return sum * dx;
}

static void kl_check(void)
{
    datm_params p;
    memset(&p, 0, sizeof p);
    datm_bsm h;
    datm_error err = {0};
    CHECK(datm_bsm_add_params(&h, &p, "k", 1, 2, 0, &err) == DATM_OK);   /* R C = 2 weights */
    double *x = calloc((size_t)p.size, sizeof(double));
    const double sig[] = {1e-3, 0.05, 0.5, 1.0, 3.0, 10.0}, mus[] = {0.0, -0.8, 2.5};
    double worst = 0;
    for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++)
        for (size_t j = 0; j < sizeof mus / sizeof mus[0]; j++) {
            double rho = log(expm1(sig[i]));
            x[h.o_mu] = mus[j]; x[h.o_rho] = rho;
            x[h.o_mu + 1] = 0; x[h.o_rho + 1] = log(expm1(1.0));   /* KL 0 */
            double kl = datm_bsm_kl_f64(&h, x, NULL, 1.0), q = kl_quadrature(mus[j], sig[i]);
            worst = fmax(worst, fabs(kl - q) / fmax(1e-3, fabs(q)));
        }
    printf("KL vs quadrature: max rel err %.3g\n", worst);
    CHECK(worst < 1e-6);
    free(x);
    datm_params_free(&p);
}

int main(void)
{
    run_check(1, 1);
    run_check(0, 1);
    run_check(1, 0);
    kl_check();
    return check_result();
}
