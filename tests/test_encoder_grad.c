/* ctest-labels: unit;grad  ctest-timeout: 120  ctest-link: datm_encoder */
/* WUDVE + ELBO backward (paper eqs. ELBO-of-VADTM, posterior-completely, MLP2,
 * Gamma-Weibull-KL): with the uniform noise fixed, every encoder parameter's analytic
 * gradient of the full loss matches 4th-order central differences to rel. err < 1e-4 in
 * double, in several configurations (WHAI 3 layers; IWHAI; one shape per document with the
 * mean parameterisation, truncated noise, KL weights, hidden != K and a top-shape vector;
 * one layer). The same check covers d loss / d Phi(l) (for WAI) and an extra loss term on
 * theta (for supervised heads), and the input-thinned form (h(0) reads other counts than
 * the likelihood, ws->in_val; WHAI's enc_input_keep). The f32 path agrees with the f64 path, is identical with 1
 * and 2 threads, and stays finite with the shapes pinned at the clamp bounds. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "encoder/encoder.h"
#include "grad_testutil.h"
#include "test_check.h"


enum { V = 30, B = 5 };

typedef struct {
    datm_encoder *e;
    datm_encoder_ws_f64 *ws;
    const datm_csr *X;
    double *phi[DATM_MAX_LAYERS + 1];
    double *top;                               /* (K_L) or NULL */
    float *noise[DATM_MAX_LAYERS + 1];
    double *c[DATM_MAX_LAYERS + 1];        /* extra loss sum c_l . theta_l */
    int which;                                 /* 0: params; l >= 1: Phi(l) */
    double *params;                            /* f64 copy of the block */
} ctx_t;

static double objective(void *vc, const double *x, double *g)
{
    ctx_t *c = vc;
    const datm_encoder *e = c->e;
    const double *params = c->which == 0 ? x : c->params;
    double *phi_save = NULL;
    if (c->which > 0) { phi_save = c->phi[c->which]; c->phi[c->which] = (double *)x; }
    datm_encoder_noise nz = {(const float *const *)c->noise, 0, 0, 0, NULL, 0};
    datm_encoder_loss loss;
    datm_error err;
    if (datm_encoder_forward_f64(e, params, DATM_ENC_TRAIN, c->X, (const double *const *)c->phi,
                                 c->top, NULL, &nz, c->ws, &loss, &err)) {
        printf("forward: %s\n", err.msg);
        return NAN;
    }
    double f = loss.loss;
    for (int l = 1; l <= e->L; l++)
        for (int64_t i = 0; i < B * e->K[l]; i++) f += c->c[l][i] * c->ws->theta[l][i];
    if (g) {
        double *grad = c->which == 0 ? g : datm_alloc_array((size_t)e->params.size, sizeof(double), NULL);
        double *dphi[DATM_MAX_LAYERS + 1] = {NULL};
        if (c->which > 0) dphi[c->which] = g;
        if (datm_encoder_backward_f64(e, params, c->ws, (const double *const *)c->c, grad, dphi, &err))
            printf("backward: %s\n", err.msg);
        if (c->which > 0) datm_free(grad);
    }
    if (phi_save) c->phi[c->which] = phi_save;
    return f;
}

/* Runs the checks on one configuration; returns the worst relative error over params. */
static void run_config(const char *name, datm_encoder_opts *o, int with_top, int thin,
                       uint64_t seed)
{
    datm_error err;
    datm_rng rng;
    datm_rng_init(&rng, seed, DATM_STREAM_TEST, 0);
    datm_encoder *e = NULL;
    if (datm_encoder_create(o, seed, &e, &err)) { printf("%s\n", err.msg); fails++; return; }
    const int L = e->L;
    /* random non-zero biases so every term of the gradient is exercised */
    for (int i = 0; i < e->params.n_views; i++)
        if (e->params.views[i].rows == 1) datm_params_fill_uniform(&e->params, i, -0.5, 0.5, &rng);
    /* shape biases >= 0 keep kt = softplus(.) away from the lower clamp 0.1 */
    for (int l = 1; l <= e->L; l++) datm_params_fill_uniform(&e->params, e->ib1[l], 0.0, 1.0, &rng);
    datm_csr X;
    gt_random_counts(&rng, B, V, 5, &X);
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.X = &X;
    datm_encoder_ws_create_f64(e, B, 0, &c.ws, &err);
    /* thin: h(0) reads floor(0.6 x) (some zeros) while the likelihood scores x */
    float *thinned = NULL;
    if (thin) {
        thinned = datm_alloc_array((size_t)X.nnz, sizeof(float), NULL);
        for (int64_t p = 0; p < X.nnz; p++) thinned[p] = floorf(0.6f * X.val[p]);
    }
    for (int l = 1; l <= L; l++) {
        int64_t R = e->K[l - 1], C = e->K[l];
        c.phi[l] = datm_alloc_array((size_t)(R * C), sizeof(double), NULL);
        gt_random_phi(&rng, R, C, c.phi[l]);
        c.noise[l] = datm_alloc_array((size_t)(B * C), sizeof(float), NULL);
        for (int64_t i = 0; i < B * C; i++)
            c.noise[l][i] = (float)(o->u_lo + (o->u_hi - o->u_lo) * (0.05 + 0.9 * datm_rng_uniform(&rng)));
        c.c[l] = datm_alloc_array((size_t)(B * C), sizeof(double), NULL);
        for (int64_t i = 0; i < B * C; i++) c.c[l][i] = 0.1 * datm_rng_normal(&rng);
    }
    if (with_top) {
        c.top = datm_alloc_array((size_t)e->K[L], sizeof(double), NULL);
        for (int64_t j = 0; j < e->K[L]; j++) c.top[j] = 0.2 + datm_rng_uniform(&rng);
    }
    int64_t n = e->params.size;
    c.params = datm_alloc_array((size_t)n, sizeof(double), NULL);
    for (int64_t i = 0; i < n; i++) c.params[i] = e->params.value[i];

    /* no unit may sit at a clamp: finite differences would straddle the kink */
    /* keep every shape clear of the clamp (finite differences must not straddle its kink, and
     * k near 0.1 makes lam Gamma(1 + 1/k) ~ 1e6 swamp the loss): raise b1 of any unit whose
     * shape is below 0.3 in some document */
    for (int it = 0; it < 20; it++) {
        objective(&c, c.params, NULL);
        int moved = 0;
        for (int l = 1; l <= L; l++)
            for (int64_t j = 0; j < e->KS[l]; j++) {
                double kmin_j = 1e30;
                for (int64_t i = 0; i < B; i++) kmin_j = fmin(kmin_j, c.ws->kt[l][i * e->KS[l] + j]);
                if (kmin_j < 0.3) { c.params[e->params.views[e->ib1[l]].offset + j] += 0.5; moved = 1; }
            }
        if (!moved) break;
    }
    for (int64_t i = 0; i < n; i++) e->params.value[i] = (float)c.params[i];
    for (int64_t i = 0; i < n; i++) c.params[i] = e->params.value[i];
    double f0 = objective(&c, c.params, NULL);
    if (thin) {
        c.ws->in_val = thinned;
        double ft = objective(&c, c.params, NULL);
        CHECK(fabs(ft - f0) > 1e-6 * fabs(f0), "%s: the thinned input does not change the loss", name);
        f0 = ft;
    }
    /* the differences carry roundoff ~1.5 eps |f| / h: entries whose |gradient| is below
     * floor = 2e5 eps |f| / h are compared in absolute terms (|a - d| < 1e-4 floor) */
    const double floor = 2e5 * DBL_EPSILON * fabs(f0) / 1e-4;
    int at_clamp = 0;
    for (int l = 1; l <= L; l++)
        for (int64_t i = 0; i < B * e->K[l]; i++)
            if (c.ws->k[l][i] <= o->k_min * 1.01 || c.ws->k[l][i] >= o->k_max * 0.99) at_clamp++;
    CHECK(at_clamp == 0, "%s: %d shapes at the clamp", name, at_clamp);

    /* every parameter (padding excluded) */
    int64_t *idx = datm_alloc_array((size_t)n, sizeof(int64_t), NULL), m = 0;
    for (int v = 0; v < e->params.n_views; v++)
        for (int64_t j = 0; j < datm_params_len(&e->params, v); j++) idx[m++] = e->params.views[v].offset + j;
    datm_gradcheck r;
    datm_gradcheck_f64(objective, &c, c.params, n, idx, m, 1e-4, floor, &r, &err);
    printf("%-44s params: %5lld checked (%lld below %.1e), max rel err %.3g (worst %lld: %.12g vs %.12g)\n",
           name, (long long)r.n_checked, (long long)r.n_below_floor, floor, r.max_rel_err,
           (long long)r.worst, r.worst_analytic, r.worst_numeric);
    CHECK(r.max_rel_err < 1e-4, "%s: parameter gradient", name);
    CHECK(r.n_below_floor * 10 < r.n_checked, "%s: too many zero gradients (%lld)", name,
          (long long)r.n_below_floor);
    for (int l = 1; l <= L; l++) {
        c.which = l;
        datm_gradcheck_f64(objective, &c, c.phi[l], e->K[l - 1] * e->K[l], NULL, 0, 1e-4, floor, &r, &err);
        printf("%-44s Phi(%d): %5lld checked, max rel err %.3g\n", name, l, (long long)r.n_checked, r.max_rel_err);
        CHECK(r.max_rel_err < 1e-4, "%s: dPhi(%d)", name, l);
    }
    c.which = 0;

    /* f32 vs f64, and 1 vs 2 threads bitwise */
    {
        datm_encoder_ws *w32 = NULL;
        datm_encoder_ws_create(e, B, 0, &w32, &err);
        w32->in_val = thinned;
        float *phif[DATM_MAX_LAYERS + 1] = {NULL}, *topf = NULL, *cf[DATM_MAX_LAYERS + 1] = {NULL};
        for (int l = 1; l <= L; l++) {
            int64_t nn = e->K[l - 1] * e->K[l];
            phif[l] = datm_alloc_array((size_t)nn, sizeof(float), NULL);
            for (int64_t i = 0; i < nn; i++) phif[l][i] = (float)c.phi[l][i];
            cf[l] = datm_alloc_array((size_t)(B * e->K[l]), sizeof(float), NULL);
            for (int64_t i = 0; i < B * e->K[l]; i++) cf[l][i] = (float)c.c[l][i];
        }
        if (c.top) {
            topf = datm_alloc_array((size_t)e->K[L], sizeof(float), NULL);
            for (int64_t j = 0; j < e->K[L]; j++) topf[j] = (float)c.top[j];
        }
        float *g1 = datm_alloc_array((size_t)n, sizeof(float), NULL);
        float *g2 = datm_alloc_array((size_t)n, sizeof(float), NULL);
        double *gd = datm_alloc_array((size_t)n, sizeof(double), NULL);
        datm_encoder_noise nz = {(const float *const *)c.noise, 0, 0, 0, NULL, 0};
        datm_encoder_loss l1, l2;
        omp_set_num_threads(1);
        datm_encoder_forward(e, e->params.value, DATM_ENC_TRAIN, &X, (const float *const *)phif, topf,
                             NULL, &nz, w32, &l1, &err);
        datm_encoder_backward(e, e->params.value, w32, (const float *const *)cf, g1, NULL, &err);
        omp_set_num_threads(2);
        datm_encoder_forward(e, e->params.value, DATM_ENC_TRAIN, &X, (const float *const *)phif, topf,
                             NULL, &nz, w32, &l2, &err);
        datm_encoder_backward(e, e->params.value, w32, (const float *const *)cf, g2, NULL, &err);
        CHECK(l1.loss == l2.loss && memcmp(g1, g2, (size_t)n * sizeof(float)) == 0,
              "%s: f32 results differ between 1 and 2 threads", name);
        /* f64 at the float-rounded parameters */
        datm_encoder_ws_f64 *wd = c.ws;
        datm_encoder_loss ld;
        double *pd = datm_alloc_array((size_t)n, sizeof(double), NULL);
        for (int64_t i = 0; i < n; i++) pd[i] = e->params.value[i];
        double *phid[DATM_MAX_LAYERS + 1] = {NULL};
        for (int l = 1; l <= L; l++) {
            int64_t nn = e->K[l - 1] * e->K[l];
            phid[l] = datm_alloc_array((size_t)nn, sizeof(double), NULL);
            for (int64_t i = 0; i < nn; i++) phid[l][i] = phif[l][i];
        }
        double *topd = NULL;
        if (topf) {
            topd = datm_alloc_array((size_t)e->K[L], sizeof(double), NULL);
            for (int64_t j = 0; j < e->K[L]; j++) topd[j] = topf[j];
        }
        datm_encoder_forward_f64(e, pd, DATM_ENC_TRAIN, &X, (const double *const *)phid, topd, NULL,
                                 &nz, wd, &ld, &err);
        datm_encoder_backward_f64(e, pd, wd, (const double *const *)c.c, gd, NULL, &err);
        double gmax = 0, dmax = 0;
        for (int64_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(gd[i]));
        for (int64_t i = 0; i < n; i++) dmax = fmax(dmax, fabs(g1[i] - gd[i]));
        printf("%-44s f32 vs f64: loss %.9g vs %.12g, max |grad diff| / max |grad| = %.3g\n", name,
               l1.loss, ld.loss, dmax / gmax);
        CHECK(fabs(l1.loss - ld.loss) < 1e-4 * fabs(ld.loss), "%s: f32 loss", name);
        CHECK(dmax < 1e-3 * gmax, "%s: f32 gradient", name);
        for (int l = 1; l <= L; l++) { datm_free(phif[l]); datm_free(cf[l]); datm_free(phid[l]); }
        datm_free(topf); datm_free(topd); datm_free(g1); datm_free(g2); datm_free(gd); datm_free(pd);

        /* shapes pinned at both clamp bounds, extreme noise: loss and gradient finite */
        for (int side = 0; side < 2; side++) {
            for (int l = 1; l <= L; l++) datm_params_fill_const(&e->params, e->ib1[l], side ? 40.0 : -40.0);
            float *un[DATM_MAX_LAYERS + 1] = {NULL};
            for (int l = 1; l <= L; l++) {
                un[l] = datm_alloc_array((size_t)(B * e->K[l]), sizeof(float), NULL);
                for (int64_t i = 0; i < B * e->K[l]; i++) un[l][i] = (i % 2) ? 1 - 0x1p-24f : 0x1p-24f;
            }
            float *phi2[DATM_MAX_LAYERS + 1] = {NULL};
            for (int l = 1; l <= L; l++) {
                int64_t nn = e->K[l - 1] * e->K[l];
                phi2[l] = datm_alloc_array((size_t)nn, sizeof(float), NULL);
                for (int64_t i = 0; i < nn; i++) phi2[l][i] = (float)c.phi[l][i];
            }
            datm_encoder_noise nz2 = {(const float *const *)un, 0, 0, 0, NULL, 0};
            float *g3 = datm_alloc_array((size_t)n, sizeof(float), NULL);
            datm_encoder_loss l3;
            int rc = datm_encoder_forward(e, e->params.value, DATM_ENC_TRAIN, &X, (const float *const *)phi2,
                                          NULL, NULL, &nz2, w32, &l3, &err);
            if (!rc) rc = datm_encoder_backward(e, e->params.value, w32, NULL, g3, NULL, &err);
            int bad = 0;
            int64_t at_bound = 0;
            const float kb = (float)(side ? o->k_max : o->k_min);
            for (int64_t i = 0; i < n; i++) bad += !isfinite(g3[i]);
            for (int l = 1; l <= L; l++)
                for (int64_t i = 0; i < B * e->K[l]; i++) {
                    bad += !isfinite(w32->theta[l][i]);
                    at_bound += w32->k[l][i] == kb;
                }
            /* the top layer has no downward term, so all of its shapes sit at the bound */
            CHECK(rc == 0 && bad == 0 && isfinite(l3.loss) && at_bound >= B * e->K[L],
                  "%s: clamp %s: rc %d, %d non-finite, %lld at the bound, loss %g (%s)", name,
                  side ? "k_max" : "k_min", rc, bad, (long long)at_bound, l3.loss, rc ? err.msg : "");
            printf("%-44s shapes at %s (%lld units): loss %.9g, all finite: %s\n", name,
                   side ? "k_max" : "k_min", (long long)at_bound, l3.loss, (rc == 0 && bad == 0) ? "yes" : "no");
            for (int l = 1; l <= L; l++) { datm_free(un[l]); datm_free(phi2[l]); }
            datm_free(g3);
        }
        datm_encoder_ws_destroy(&w32);
    }
    for (int l = 1; l <= L; l++) { datm_free(c.phi[l]); datm_free(c.noise[l]); datm_free(c.c[l]); }
    datm_free(c.top);
    datm_free(c.params);
    datm_free(idx);
    datm_free(thinned);
    datm_encoder_ws_destroy_f64(&c.ws);
    datm_csr_free(&X);
    datm_encoder_destroy(&e);
}

int main(void)
{
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = 3; o.n_vocab = V; o.k[1] = 6; o.k[2] = 4; o.k[3] = 3;
    run_config("whai 6-4-3 (paper defaults)", &o, 0, 0, 1);
    run_config("whai 6-4-3, h(0) from thinned counts", &o, 0, 1, 5);

    datm_encoder_opts_default(&o);
    o.n_layers = 2; o.n_vocab = V; o.k[1] = 5; o.k[2] = 3; o.downward = 0;
    run_config("iwhai 5-3 (no downward term)", &o, 0, 0, 2);

    datm_encoder_opts_default(&o);
    o.n_layers = 3; o.n_vocab = V; o.k[1] = 6; o.k[2] = 4; o.k[3] = 2;
    o.hidden[1] = 7; o.hidden[2] = 5; o.hidden[3] = 4;
    o.shape_per_topic = 0; o.lambda_is_mean = 1; o.u_lo = 0.2; o.u_hi = 0.8;
    o.kl_weight[1] = 0.1; o.kl_weight[2] = 0.01; o.kl_weight[3] = 0.001;
    run_config("code options (scalar k, mean, U(.2,.8), w, r)", &o, 1, 0, 3);

    datm_encoder_opts_default(&o);
    o.n_layers = 1; o.n_vocab = V; o.k[1] = 8;
    run_config("one layer, 8", &o, 0, 0, 4);

    return check_result();
}
