/* ctest-labels: unit;grad;stat  ctest-timeout: 120  ctest-link: datm_encoder */
/* tests/test_sdatm_mean_grad.c: the label gradient of sdatm's head_input = mean (models/sdatm.c).
 * The head sees the Weibull mean m = lambda Gamma(1 + 1/k) and its gradient g = dloss/dm is
 * handed to the encoder's backward as dtheta_extra at the SAMPLE theta = lambda (-ln(1-u))^(1/k).
 * Claim: averaged over u ~ U(0, 1) this is the gradient of sum g . m w.r.t. every encoder
 * parameter (E[dtheta/dlambda] = Gamma(1 + 1/k), E[dtheta/dk] = dm/dk). Checked for a one-layer
 * encoder (lambda and k then do not depend on the noise) with a fixed random g:
 *   estimate = mean over M draws of [backward(g) - backward(0)] (the label part alone),
 *   reference = central differences of F(params) = sum g . lambda Gamma(1 + 1/k);
 * per parameter z = (estimate - reference) / standard error: max |z| < 5.5 over the parameters
 * and mean z^2 < 1.6 (about 1 if the estimate is unbiased); and the estimate is far from 0. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder/encoder.h"
#include "grad_testutil.h"
#include "test_check.h"


enum { V = 20, B = 4, K = 4, M = 6000 };

static datm_encoder *e;
static datm_encoder_ws_f64 *ws;
static datm_csr X;
static double *phi[2];
static float *noise[2];
static double g[B * K];

static int forward(const double *p)
{
    datm_encoder_noise nz = {(const float *const *)noise, 0, 0, 0, NULL, 0};
    datm_encoder_loss loss;
    datm_error err;
    if (datm_encoder_forward_f64(e, p, DATM_ENC_TRAIN, &X, (const double *const *)phi, NULL, NULL,
                                 &nz, ws, &loss, &err)) {
        fprintf(stderr, "forward: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* F = sum g . lambda Gamma(1 + 1/k) at parameters p */
static double mean_objective(const double *p)
{
    if (forward(p)) return NAN;
    double f = 0;
    for (int64_t i = 0; i < B * K; i++) f += g[i] * ws->lam[1][i] * tgamma(1.0 + 1.0 / ws->k[1][i]);
    return f;
}

int main(void)
{
    datm_error err;
    datm_rng rng;
    datm_rng_init(&rng, 17, DATM_STREAM_TEST, 1);
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = 1;
    o.n_vocab = V;
    o.k[1] = K;
    if (datm_encoder_create(&o, 5, &e, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    for (int i = 0; i < e->params.n_views; i++)
        if (e->params.views[i].rows == 1) datm_params_fill_uniform(&e->params, i, -0.5, 0.5, &rng);
    datm_params_fill_uniform(&e->params, e->ib1[1], 1.0, 2.0, &rng);   /* shapes off the clamps */
    gt_random_counts(&rng, B, V, 5, &X);
    if (datm_encoder_ws_create_f64(e, B, 0, &ws, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    phi[1] = malloc(sizeof(double) * V * K);
    gt_random_phi(&rng, V, K, phi[1]);
    noise[1] = malloc(sizeof(float) * B * K);
    for (int i = 0; i < B * K; i++) g[i] = datm_rng_normal(&rng);

    const int64_t n = e->params.size;
    double *x = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) x[i] = e->params.value[i];
    double *g1 = malloc(sizeof(double) * (size_t)n), *g0 = malloc(sizeof(double) * (size_t)n);
    double *sum = calloc((size_t)n, sizeof(double)), *sum2 = calloc((size_t)n, sizeof(double));
    double *dth[2] = {NULL, malloc(sizeof(double) * B * K)};
    double *zero[2] = {NULL, calloc(B * K, sizeof(double))};
    memcpy(dth[1], g, sizeof g);
    int at_clamp = 0;
    for (int d = 0; d < M; d++) {
        for (int i = 0; i < B * K; i++)   /* u in (0, 1) also after rounding to float */
            noise[1][i] = (float)fmin(fmax(datm_rng_uniform(&rng), 1e-7), 1 - 1e-7);
        if (forward(x)) return 1;
        if (d == 0)
            for (int i = 0; i < B * K; i++)
                at_clamp += ws->k[1][i] <= o.k_min * 1.01 || ws->k[1][i] >= o.k_max * 0.99;
        /* the backward uses the workspace as scratch: a fresh forward before each */
        if (datm_encoder_backward_f64(e, x, ws, (const double *const *)dth, g1, NULL, &err) ||
            forward(x) ||
            datm_encoder_backward_f64(e, x, ws, (const double *const *)zero, g0, NULL, &err)) {
            fprintf(stderr, "backward: %s\n", err.msg);
            return 1;
        }
        for (int64_t i = 0; i < n; i++) {
            const double v = g1[i] - g0[i];
            sum[i] += v;
            sum2[i] += v * v;
        }
    }
    CHECK(at_clamp == 0);
    /* every parameter (padding excluded) */
    double zmax = 0, z2 = 0, emax = 0;
    int64_t m = 0;
    for (int v = 0; v < e->params.n_views; v++)
        for (int64_t j = 0; j < datm_params_len(&e->params, v); j++) {
            const int64_t i = e->params.views[v].offset + j;
            const double h = 1e-5, xi = x[i];
            x[i] = xi + h;
            const double fp = mean_objective(x);
            x[i] = xi - h;
            const double fm = mean_objective(x);
            x[i] = xi;
            const double ref = (fp - fm) / (2 * h);
            const double mu = sum[i] / M, var = fmax(sum2[i] / M - mu * mu, 0.0);
            const double se = sqrt(var / M) + 1e-7 * (1 + fabs(ref));
            const double z = (mu - ref) / se;
            zmax = fmax(zmax, fabs(z));
            z2 += z * z;
            emax = fmax(emax, fabs(mu));
            m++;
        }
    printf("%lld encoder parameters, %d draws: max |z| %.3g, mean z^2 %.3g, max |estimate| %.3g\n",
           (long long)m, M, zmax, z2 / (double)m, emax);
    CHECK(zmax < 5.5);
    CHECK(z2 / (double)m < 1.6);
    CHECK(emax > 1e-3);
    datm_encoder_ws_destroy_f64(&ws);
    datm_encoder_destroy(&e);
    datm_csr_free(&X);
    return check_result();
}
