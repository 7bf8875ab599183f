/* ctest-labels: unit;grad  ctest-timeout: 120  ctest-link: datm_models */
/* tests/test_variants_ghai_grad.c: GHAI's gamma posterior family (models/ghai.c) plugged into
 * the WUDVE encoder (engine/encoder):
 *   - with the RSVI noise (eps, u_1..u_B) fixed, the analytic gradient of the full loss
 *     (Poisson likelihood + gamma-gamma KLs) w.r.t. every encoder parameter and every Phi(l)
 *     entry matches 4th-order central differences to rel. err < 1e-4 in double, for 3
 *     layers with the downward term and B = 4 (GHAI), and 2 layers without it and B = 1;
 *   - the f32 path agrees with the f64 path (loss rel 1e-4);
 *   - with drawn noise, the average of 4000 sampled top-layer thetas matches the family's
 *     mean k lam (z < 4.5 per unit from the gamma variance k lam^2);
 *   - ghai_family() covers B = 1..GHAI_MAX_BOOST with noise_dim 1 + B, NULL outside. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../models/ghai.h"
#include "dist/gamma_rsvi.h"
#include "encoder/encoder.h"
#include "grad_testutil.h"
#include "test_check.h"


enum { V = 20, B = 4 };

typedef struct {
    datm_encoder *e;
    datm_encoder_ws_f64 *ws;
    const datm_csr *X;
    double *phi[DATM_MAX_LAYERS + 1];
    float *noise[DATM_MAX_LAYERS + 1];
    int which;          /* 0: encoder parameters; l >= 1: Phi(l) */
    double *params;
} ctx_t;

static double objective(void *vc, const double *x, double *g)
{
    ctx_t *c = vc;
    const datm_encoder *e = c->e;
    const double *params = c->which == 0 ? x : c->params;
    double *keep = NULL;
    if (c->which > 0) {
        keep = c->phi[c->which];
        c->phi[c->which] = (double *)x;
    }
    datm_encoder_noise nz;
    memset(&nz, 0, sizeof nz);
    nz.fixed = (const float *const *)c->noise;
    datm_encoder_loss loss;
    datm_error err;
    double f = NAN;
    if (datm_encoder_forward_f64(e, params, DATM_ENC_TRAIN, c->X, (const double *const *)c->phi,
                                 NULL, NULL, &nz, c->ws, &loss, &err)) {
        printf("forward: %s\n", err.msg);
    } else {
        f = loss.loss;
        if (g) {
            double *grad = c->which == 0 ? g : datm_alloc_array((size_t)e->params.size,
                                                                sizeof(double), NULL);
            double *dphi[DATM_MAX_LAYERS + 1] = {NULL};
            if (c->which > 0) dphi[c->which] = g;
            if (datm_encoder_backward_f64(e, params, c->ws, NULL, grad, dphi, &err))
                printf("backward: %s\n", err.msg);
            if (c->which > 0) datm_free(grad);
        }
    }
    if (keep) c->phi[c->which] = keep;
    return f;
}

static void run(const char *name, int L, const int64_t *K, int downward, int boost, uint64_t seed)
{
    datm_error err;
    datm_rng r;
    datm_rng_init(&r, seed, DATM_STREAM_TEST, 0);
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = L;
    o.n_vocab = V;
    for (int l = 1; l <= L; l++) o.k[l] = K[l];
    o.downward = downward;
    o.family = ghai_family(boost);
    datm_encoder *e = NULL;
    if (datm_encoder_create(&o, seed, &e, &err)) {
        printf("%s\n", err.msg);
        fails++;
        return;
    }
    const int nd = o.family->noise_dim;
    for (int i = 0; i < e->params.n_views; i++)
        if (e->params.views[i].rows == 1) datm_params_fill_uniform(&e->params, i, -0.5, 0.5, &r);
    for (int l = 1; l <= L; l++) datm_params_fill_uniform(&e->params, e->ib1[l], 0.0, 1.0, &r);
    datm_csr X;
    gt_random_counts(&r, B, V, 4, &X);
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.X = &X;
    datm_encoder_ws_create_f64(e, B, 0, &c.ws, &err);
    for (int l = 1; l <= L; l++) {
        const int64_t R = e->K[l - 1], C = e->K[l];
        c.phi[l] = datm_alloc_array((size_t)(R * C), sizeof(double), NULL);
        gt_random_phi(&r, R, C, c.phi[l]);
        /* fixed noise: an eps inside the proposal's support and u in [0.05, 0.95] */
        c.noise[l] = datm_alloc_array((size_t)(B * C * nd), sizeof(float), NULL);
        for (int64_t i = 0; i < B * C; i++) {
            c.noise[l][i * nd] = (float)(0.8 * datm_rng_normal(&r));
            for (int j = 1; j < nd; j++)
                c.noise[l][i * nd + j] = (float)(0.05 + 0.9 * datm_rng_uniform(&r));
        }
    }
    const int64_t n = e->params.size;
    c.params = datm_alloc_array((size_t)n, sizeof(double), NULL);
    for (int64_t i = 0; i < n; i++) c.params[i] = e->params.value[i];
    /* keep shapes clear of the clamp at 0.1 (a kink for finite differences) */
    for (int it = 0; it < 20; it++) {
        objective(&c, c.params, NULL);
        int moved = 0;
        for (int l = 1; l <= L; l++)
            for (int64_t j = 0; j < e->KS[l]; j++) {
                double mn = 1e30;
                for (int64_t i = 0; i < B; i++) mn = fmin(mn, c.ws->kt[l][i * e->KS[l] + j]);
                if (mn < 0.3) {
                    c.params[e->params.views[e->ib1[l]].offset + j] += 0.5;
                    moved = 1;
                }
            }
        if (!moved) break;
    }
    for (int64_t i = 0; i < n; i++) c.params[i] = e->params.value[i] = (float)c.params[i];
    double f0 = objective(&c, c.params, NULL);
    int bad = 0;
    for (int l = 1; l <= L; l++)
        for (int64_t i = 0; i < B * e->K[l]; i++)
            bad += c.ws->k[l][i] <= o.k_min * 1.01 || c.ws->k[l][i] >= o.k_max * 0.99 ||
                   c.ws->theta[l][i] <= GHAI_THETA_MIN;
    CHECK(bad == 0, "%s: %d units at a clamp or the floor", name, bad);
    /* roundoff of the differences ~ eps |f| / h: compare tiny entries in absolute terms */
    const double floor = 2e5 * DBL_EPSILON * fabs(f0) / 1e-4;
    int64_t *idx = datm_alloc_array((size_t)n, sizeof(int64_t), NULL), m = 0;
    for (int v = 0; v < e->params.n_views; v++)
        for (int64_t j = 0; j < datm_params_len(&e->params, v); j++)
            idx[m++] = e->params.views[v].offset + j;
    datm_gradcheck gc;
    datm_gradcheck_f64(objective, &c, c.params, n, idx, m, 1e-4, floor, &gc, &err);
    printf("%-34s params: %5lld checked, max rel err %.3g (worst %lld: %.10g vs %.10g)\n", name,
           (long long)gc.n_checked, gc.max_rel_err, (long long)gc.worst, gc.worst_analytic,
           gc.worst_numeric);
    CHECK(gc.max_rel_err < 1e-4, "%s: parameter gradient rel err %.3g", name, gc.max_rel_err);
    CHECK(gc.n_below_floor * 10 < gc.n_checked, "%s: %lld gradients below the floor", name,
          (long long)gc.n_below_floor);
    for (int l = 1; l <= L; l++) {
        c.which = l;
        datm_gradcheck_f64(objective, &c, c.phi[l], e->K[l - 1] * e->K[l], NULL, 0, 1e-4, floor,
                           &gc, &err);
        printf("%-34s Phi(%d): %5lld checked, max rel err %.3g\n", name, l,
               (long long)gc.n_checked, gc.max_rel_err);
        CHECK(gc.max_rel_err < 1e-4, "%s: dPhi(%d) rel err %.3g", name, l, gc.max_rel_err);
    }
    c.which = 0;

    /* f32 path */
    {
        datm_encoder_ws *w32 = NULL;
        datm_encoder_ws_create(e, B, 0, &w32, &err);
        float *pf[DATM_MAX_LAYERS + 1] = {NULL};
        for (int l = 1; l <= L; l++) {
            const int64_t nn = e->K[l - 1] * e->K[l];
            pf[l] = datm_alloc_array((size_t)nn, sizeof(float), NULL);
            for (int64_t i = 0; i < nn; i++) pf[l][i] = (float)c.phi[l][i];
        }
        datm_encoder_noise nz;
        memset(&nz, 0, sizeof nz);
        nz.fixed = (const float *const *)c.noise;
        datm_encoder_loss l32;
        int rc = datm_encoder_forward(e, e->params.value, DATM_ENC_TRAIN, &X,
                                      (const float *const *)pf, NULL, NULL, &nz, w32, &l32, &err);
        CHECK(rc == 0 && fabs(l32.loss - f0) < 1e-4 * fabs(f0), "%s: f32 loss %.9g vs f64 %.9g",
              name, l32.loss, f0);
        for (int l = 1; l <= L; l++) datm_free(pf[l]);
        datm_encoder_ws_destroy(&w32);
    }
    for (int l = 1; l <= L; l++) {
        datm_free(c.phi[l]);
        datm_free(c.noise[l]);
    }
    datm_free(idx);
    datm_free(c.params);
    datm_encoder_ws_destroy_f64(&c.ws);
    datm_csr_free(&X);
    datm_encoder_destroy(&e);
}

/* Sampled theta of a one-layer encoder averages to the family mean k lam. */
static void check_sample_mean(void)
{
    datm_error err;
    datm_rng r;
    datm_rng_init(&r, 11, DATM_STREAM_TEST, 5);
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = 1;
    o.n_vocab = V;
    o.k[1] = 6;
    o.family = ghai_family(4);
    datm_encoder *e = NULL;
    datm_encoder_create(&o, 3, &e, &err);
    datm_csr X;
    gt_random_counts(&r, B, V, 4, &X);
    datm_encoder_ws *ws = NULL;
    datm_encoder_ws_create(e, B, 0, &ws, &err);
    const int64_t n = B * 6;
    float mean[B * 6];
    datm_encoder_forward(e, e->params.value, DATM_ENC_MEAN, &X, NULL, NULL, NULL, NULL, ws, NULL,
                         &err);
    memcpy(mean, ws->theta[1], sizeof mean);
    double kk[B * 6], ll[B * 6], s[B * 6] = {0};
    for (int64_t i = 0; i < n; i++) {
        kk[i] = ws->k[1][i];
        ll[i] = ws->lam[1][i];
    }
    const int S = 4000;
    for (int d = 0; d < S; d++) {
        datm_encoder_noise nz;
        memset(&nz, 0, sizeof nz);
        nz.seed = 99;
        nz.purpose = DATM_STREAM_EVAL;
        nz.index = (uint64_t)d;
        datm_encoder_forward(e, e->params.value, DATM_ENC_SAMPLE, &X, NULL, NULL, NULL, &nz, ws,
                             NULL, &err);
        for (int64_t i = 0; i < n; i++) s[i] += ws->theta[1][i];
    }
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = s[i] / S, mu = kk[i] * ll[i], se = sqrt(kk[i] * ll[i] * ll[i] / S);
        CHECK(fabs(mean[i] - mu) < 1e-5 * mu, "mean mode %.9g vs k lam %.9g", mean[i], mu);
        double z = (m - mu) / se;
        worst = fmax(worst, fabs(z));
        CHECK(fabs(z) < 4.5, "unit %lld: sample mean %.9g vs k lam %.9g (z %.2f)", (long long)i, m,
              mu, z);
    }
    printf("sampled theta vs k lam: %lld units, max |z| %.2f\n", (long long)n, worst);
    datm_encoder_ws_destroy(&ws);
    datm_csr_free(&X);
    datm_encoder_destroy(&e);
}

int main(void)
{
    for (int b = 0; b <= GHAI_MAX_BOOST + 1; b++) {
        const datm_posterior_family *f = ghai_family(b);
        if (b < 1 || b > GHAI_MAX_BOOST) CHECK(f == NULL, "ghai_family(%d) should be NULL", b);
        else CHECK(f && f->noise_dim == 1 + b, "ghai_family(%d)", b);
    }
    const int64_t K3[] = {V, 6, 4, 3}, K2[] = {V, 5, 3};
    run("ghai 3 layers, downward, B=4", 3, K3, 1, 4, 1);
    run("ghai 2 layers, no downward, B=1", 2, K2, 0, 1, 3);
    check_sample_mean();
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("all GHAI encoder checks passed\n");
    return 0;
}
