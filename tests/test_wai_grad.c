/* ctest-labels: unit;grad  ctest-timeout: 120  ctest-link: datm_encoder */
/* tests/test_wai_grad.c: the gradient WAI trains its topics with. With the encoder's uniform
 * noise fixed, the full loss -(ELBO)/B of a 3-layer WUDVE (Poisson likelihood, Weibull-gamma
 * KLs with downward terms) is a function of the free topic parameters beta(l), Phi(l) =
 * column softmax of beta(l). The analytic gradient -- the encoder's d loss / d Phi(l) chained
 * through datm_softmax_cols_backward -- matches 4th-order central differences of the loss
 * w.r.t. every beta(l) entry to rel. err < 1e-4 (double). Also: with the KL terms removed
 * (1 layer, KL weight 0), -B times that gradient equals datm_softmax_poisson_loglik_f64's
 * gradient of the Poisson log-likelihood at the sampled theta (rel 1e-9). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decoder/softmax_topics.h"
#include "encoder/encoder.h"
#include "grad_testutil.h"
#include "test_check.h"


enum { V = 20, B = 4 };

typedef struct {
    datm_encoder *e;
    datm_encoder_ws_f64 *ws;
    const datm_csr *X;
    double *params;
    double *beta[DATM_MAX_LAYERS + 1];
    double *phi[DATM_MAX_LAYERS + 1];
    float *noise[DATM_MAX_LAYERS + 1];
    int which;                   /* layer whose beta is varied */
    double klw[DATM_MAX_LAYERS + 1];
} ctx_t;

static double loss_of(ctx_t *c, double *dphi_which)
{
    const datm_encoder *e = c->e;
    for (int l = 1; l <= e->L; l++) datm_softmax_cols_f64(e->K[l - 1], e->K[l], c->beta[l], c->phi[l]);
    datm_encoder_noise nz;
    memset(&nz, 0, sizeof nz);
    nz.fixed = (const float *const *)c->noise;
    datm_encoder_loss loss;
    datm_error err;
    if (datm_encoder_forward_f64(e, c->params, DATM_ENC_TRAIN, c->X, (const double *const *)c->phi,
                                 NULL, c->klw, &nz, c->ws, &loss, &err)) {
        printf("forward: %s\n", err.msg);
        return NAN;
    }
    if (dphi_which) {
        double *grad = datm_alloc_array((size_t)e->params.size, sizeof(double), NULL);
        double *dphi[DATM_MAX_LAYERS + 1] = {NULL};
        dphi[c->which] = dphi_which;
        if (datm_encoder_backward_f64(e, c->params, c->ws, NULL, grad, dphi, &err))
            printf("backward: %s\n", err.msg);
        datm_free(grad);
    }
    return loss.loss;
}

static double objective(void *vc, const double *x, double *g)
{
    ctx_t *c = vc;
    const int l = c->which;
    const int64_t R = c->e->K[l - 1], C = c->e->K[l];
    double *keep = c->beta[l];
    c->beta[l] = (double *)x;
    double *dphi = g ? datm_alloc_array((size_t)(R * C), sizeof(double), NULL) : NULL;
    double f = loss_of(c, dphi);
    if (g) {
        datm_softmax_cols_backward_f64(R, C, c->phi[l], dphi, g);
        datm_free(dphi);
    }
    c->beta[l] = keep;
    return f;
}

static void setup(ctx_t *c, datm_csr *X, int L, const int64_t *K, uint64_t seed)
{
    datm_error err;
    datm_rng r;
    datm_rng_init(&r, seed, DATM_STREAM_TEST, 0);
    memset(c, 0, sizeof *c);
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = L;
    o.n_vocab = V;
    for (int l = 1; l <= L; l++) o.k[l] = K[l];
    DATM_ASSERT(datm_encoder_create(&o, seed, &c->e, &err) == 0);
    datm_encoder *e = c->e;
    for (int l = 1; l <= L; l++) datm_params_fill_uniform(&e->params, e->ib1[l], 0.3, 1.0, &r);
    c->params = datm_alloc_array((size_t)e->params.size, sizeof(double), NULL);
    for (int64_t i = 0; i < e->params.size; i++) c->params[i] = e->params.value[i];
    gt_random_counts(&r, B, V, 4, X);
    c->X = X;
    datm_encoder_ws_create_f64(e, B, 0, &c->ws, &err);
    for (int l = 1; l <= L; l++) {
        const int64_t n = K[l - 1] * K[l];
        c->beta[l] = datm_alloc_array((size_t)n, sizeof(double), NULL);
        c->phi[l] = datm_alloc_array((size_t)n, sizeof(double), NULL);
        for (int64_t i = 0; i < n; i++) c->beta[l][i] = datm_rng_normal(&r);
        c->noise[l] = datm_alloc_array((size_t)(B * K[l]), sizeof(float), NULL);
        for (int64_t i = 0; i < B * K[l]; i++) c->noise[l][i] = (float)(0.05 + 0.9 * datm_rng_uniform(&r));
        c->klw[l] = 1.0;
    }
}

static void teardown(ctx_t *c, datm_csr *X)
{
    for (int l = 1; l <= c->e->L; l++) {
        datm_free(c->beta[l]);
        datm_free(c->phi[l]);
        datm_free(c->noise[l]);
    }
    datm_free(c->params);
    datm_encoder_ws_destroy_f64(&c->ws);
    datm_encoder_destroy(&c->e);
    datm_csr_free(X);
}

int main(void)
{
    datm_error err;
    {
        const int64_t K[] = {V, 6, 4, 3};
        ctx_t c;
        datm_csr X;
        setup(&c, &X, 3, K, 1);
        const double f0 = loss_of(&c, NULL);
        const double floor = 2e5 * DBL_EPSILON * fabs(f0) / 1e-4;
        int bad = 0;
        for (int l = 1; l <= 3; l++)
            for (int64_t i = 0; i < B * K[l]; i++) bad += c.ws->k[l][i] <= 0.101 || c.ws->k[l][i] >= 9.9;
        CHECK(bad == 0, "%d shapes at the clamp", bad);
        for (int l = 1; l <= 3; l++) {
            c.which = l;
            datm_gradcheck gc;
            datm_gradcheck_f64(objective, &c, c.beta[l], K[l - 1] * K[l], NULL, 0, 1e-4, floor, &gc,
                               &err);
            printf("d loss / d beta(%d): %lld entries, max rel err %.3g (worst %lld: %.10g vs %.10g)\n",
                   l, (long long)gc.n_checked, gc.max_rel_err, (long long)gc.worst,
                   gc.worst_analytic, gc.worst_numeric);
            CHECK(gc.max_rel_err < 1e-4, "beta(%d) gradient rel err %.3g", l, gc.max_rel_err);
            CHECK(gc.n_below_floor * 10 < gc.n_checked, "beta(%d): %lld gradients below the floor", l,
                  (long long)gc.n_below_floor);
        }
        teardown(&c, &X);
    }
    {
        /* one layer, no KL: the encoder's topic gradient is the Poisson likelihood's */
        const int64_t K[] = {V, 5};
        ctx_t c;
        datm_csr X;
        setup(&c, &X, 1, K, 2);
        c.klw[1] = 0.0;
        c.which = 1;
        double g[V * 5], ref[V * 5];
        objective(&c, c.beta[1], g);
        double theta[B * 5];
        for (int i = 0; i < B * 5; i++) theta[i] = c.ws->theta[1][i];
        datm_softmax_poisson_loglik_f64(&X, 5, c.beta[1], theta, ref);
        double worst = 0;
        for (int i = 0; i < V * 5; i++)
            worst = fmax(worst, fabs(-B * g[i] - ref[i]) / fmax(fabs(ref[i]), 1e-6));
        printf("encoder topic gradient vs Poisson loglik gradient: max rel diff %.3g\n", worst);
        CHECK(worst < 1e-9, "encoder d loss / d beta differs from the loglik gradient (%.3g)", worst);
        teardown(&c, &X);
    }
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("all WAI gradient checks passed\n");
    return 0;
}
