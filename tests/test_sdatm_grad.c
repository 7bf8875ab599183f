/* ctest-labels: unit;grad  ctest-timeout: 120  ctest-link: datm_encoder */
/* tests/test_sdatm_grad.c: the label term of supervised DATM through theta (paper eq.
 * ELBO-of-classification). With the encoder's uniform noise and the softmax-weight noise
 * fixed, the objective
 *   f = encoder loss (Poisson + KLs, per document)
 *       + (label_weight / B) sum_n -log p(y_n | head(theta(1..L)_n), W)  + KL(q(W)||p(W)) / N
 * is differentiated analytically the way models/sdatm.c trains it: head backward gives
 * d/dtheta(l), passed to the encoder's backward as dtheta_extra. Checked against central
 * differences (double, rel. err < 1e-4) w.r.t. EVERY encoder parameter and every head
 * parameter, for the sDATM-L head (transform raw, the paper's s = [theta]) and the sDATM-N
 * head (g_1 maps + two softplus layers, log1p transform). A second check sets the label
 * weight to 0 and confirms the encoder gradient is then the plain ELBO one (the label term
 * really contributes through theta, and only through it). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "encoder/encoder.h"
#include "nn/bayes_softmax.h"
#include "nn/mlp_head.h"
#include "grad_testutil.h"
#include "test_check.h"


enum { V = 24, B = 6, C = 3 };

typedef struct ctx {
    datm_encoder        *e;
    datm_encoder_ws_f64 *ws;
    const datm_csr      *X;
    double              *phi[DATM_MAX_LAYERS + 1];
    float               *noise[DATM_MAX_LAYERS + 1];
    datm_mlp_head        mh;
    datm_bsm             bs;
    int64_t              ne, nh;    /* encoder / head block sizes; x = [enc block, head block] */
    double              *eps;       /* (R, C) */
    int32_t              y[B];
    double               label_weight, kl_scale;
    double              *cache, *work, *W, *P, *bwork, *ds;
    double              *dth[DATM_MAX_LAYERS + 1];
} ctx;

static double objective(void *vc, const double *x, double *g)
{
    ctx *c = vc;
    const datm_encoder *e = c->e;
    const int L = e->L;
    const double *pe = x, *ph = x + c->ne;
    datm_encoder_noise nz = {(const float *const *)c->noise, 0, 0, 0, NULL, 0};
    datm_encoder_loss loss;
    datm_error err;
    if (datm_encoder_forward_f64(e, pe, DATM_ENC_TRAIN, c->X, (const double *const *)c->phi, NULL,
                                 NULL, &nz, c->ws, &loss, &err)) {
        fprintf(stderr, "forward: %s\n", err.msg);
        return NAN;
    }
    const double *th[DATM_MAX_LAYERS];
    double *dth[DATM_MAX_LAYERS];
    for (int l = 1; l <= L; l++) { th[l - 1] = c->ws->theta[l]; dth[l - 1] = c->dth[l]; }
    const double *s = datm_mlp_head_forward_f64(&c->mh, ph, B, th, c->cache);
    datm_bsm_weights_f64(&c->bs, ph, c->eps, c->W);
    datm_bsm_forward_f64(&c->bs, B, s, c->W, c->P);
    const double scale = c->label_weight / B;
    double f = loss.loss + scale * datm_bsm_nll_f64(&c->bs, B, c->P, c->y);
    double *gh = g ? g + c->ne : NULL;
    if (g) {
        memset(gh, 0, sizeof(double) * (size_t)c->nh);
        datm_bsm_backward_f64(&c->bs, B, ph, gh, s, c->eps, c->W, c->P, c->y, scale, c->bwork,
                              c->ds, 0.0);
    }
    f += c->kl_scale * datm_bsm_kl_f64(&c->bs, ph, gh, c->kl_scale);
    if (g) {
        datm_mlp_head_backward_f64(&c->mh, ph, gh, B, th, c->cache, c->ds, c->work, dth, 0.0);
        if (datm_encoder_backward_f64(e, pe, c->ws, (const double *const *)c->dth, g, NULL, &err))
            fprintf(stderr, "backward: %s\n", err.msg);
    }
    return f;
}

static void run(const char *name, int transform, int per_layer, int H)
{
    const int64_t a[2] = {7, 5};
    datm_error err;
    datm_rng rng;
    datm_rng_init(&rng, 31, DATM_STREAM_TEST, (uint64_t)(transform * 10 + H));
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = 2;
    o.n_vocab = V;
    o.k[1] = 5;
    o.k[2] = 3;
    ctx c;
    memset(&c, 0, sizeof c);
    CHECK(datm_encoder_create(&o, 7, &c.e, &err) == DATM_OK);
    datm_encoder *e = c.e;
    const int L = e->L;
    /* random biases; shape biases high so no shape sits at the clamp (a kink) */
    for (int i = 0; i < e->params.n_views; i++)
        if (e->params.views[i].rows == 1) datm_params_fill_uniform(&e->params, i, -0.5, 0.5, &rng);
    for (int l = 1; l <= L; l++) datm_params_fill_uniform(&e->params, e->ib1[l], 1.0, 2.0, &rng);
    /* a batch of counts */
    datm_csr X;
    gt_random_counts(&rng, B, V, 5, &X);
    c.X = &X;
    CHECK(datm_encoder_ws_create_f64(e, B, 0, &c.ws, &err) == DATM_OK);
    for (int l = 1; l <= L; l++) {
        int64_t R = e->K[l - 1], K = e->K[l];
        c.phi[l] = datm_alloc_array((size_t)(R * K), sizeof(double), NULL);
        gt_random_phi(&rng, R, K, c.phi[l]);
        c.noise[l] = datm_alloc_array((size_t)(B * K), sizeof(float), NULL);
        for (int64_t i = 0; i < B * K; i++) c.noise[l][i] = (float)(0.05 + 0.9 * datm_rng_uniform(&rng));
        c.dth[l] = datm_alloc_array((size_t)(B * K), sizeof(double), NULL);
    }
    /* the head */
    datm_params hp;
    memset(&hp, 0, sizeof hp);
    CHECK(datm_mlp_head_add_params(&c.mh, &hp, "head", L, e->K + 1, transform, per_layer, H, a, &err) == DATM_OK);
    CHECK(datm_bsm_add_params(&c.bs, &hp, "softmax", c.mh.out_dim, C, 1, &err) == DATM_OK);
    CHECK(datm_params_alloc(&hp, &err) == DATM_OK);
    datm_mlp_head_init_values(&c.mh, &hp, &rng);
    /* nontrivial standardisation constants (shift, scale): part of the forward path */
    for (int64_t j = 0; j < c.mh.S; j++) {
        hp.value[c.mh.o_shift + j] = (float)(0.3 * datm_rng_normal(&rng));
        hp.value[c.mh.o_scale + j] = (float)(0.5 + datm_rng_uniform(&rng));
    }
    datm_bsm_init_values(&c.bs, &hp, &rng, 0.5, 0.3);
    c.ne = e->params.size;
    c.nh = hp.size;
    const int64_t n = c.ne + c.nh, RC = c.bs.R * C;
    double *x = datm_alloc_array((size_t)n, sizeof(double), NULL);
    for (int64_t i = 0; i < c.ne; i++) x[i] = e->params.value[i];
    for (int64_t i = 0; i < c.nh; i++) x[c.ne + i] = hp.value[i];
    c.eps = datm_alloc_array((size_t)RC, sizeof(double), NULL);
    for (int64_t i = 0; i < RC; i++) c.eps[i] = datm_rng_normal(&rng);
    for (int i = 0; i < B; i++) c.y[i] = (int32_t)datm_rng_below(&rng, C);
    c.label_weight = 3.0;
    c.kl_scale = 1.0 / 50;
    c.cache = datm_alloc_array((size_t)datm_mlp_head_cache_len(&c.mh, B), sizeof(double), NULL);
    c.work = datm_alloc_array((size_t)datm_mlp_head_work_len(&c.mh, B), sizeof(double), NULL);
    c.W = datm_alloc_array((size_t)RC, sizeof(double), NULL);
    c.P = datm_alloc_array((size_t)(B * C), sizeof(double), NULL);
    c.bwork = datm_alloc_array((size_t)datm_bsm_work_len(&c.bs, B), sizeof(double), NULL);
    c.ds = datm_alloc_array((size_t)(B * c.mh.out_dim), sizeof(double), NULL);

    double f0 = objective(&c, x, NULL);
    int at_clamp = 0;
    for (int l = 1; l <= L; l++)
        for (int64_t i = 0; i < B * e->K[l]; i++)
            at_clamp += c.ws->k[l][i] <= o.k_min * 1.01 || c.ws->k[l][i] >= o.k_max * 0.99;
    CHECK(at_clamp == 0);

    /* every encoder and head parameter (padding excluded) */
    int64_t *idx = datm_alloc_array((size_t)n, sizeof(int64_t), NULL), m = 0;
    for (int v = 0; v < e->params.n_views; v++)
        for (int64_t j = 0; j < datm_params_len(&e->params, v); j++) idx[m++] = e->params.views[v].offset + j;
    const int64_t m_enc = m;
    for (int v = 0; v < hp.n_views; v++) {
        if (v == c.mh.v_shift || v == c.mh.v_scale || v == c.mh.v_norm_set) continue;   /* constants */
        for (int64_t j = 0; j < datm_params_len(&hp, v); j++) idx[m++] = c.ne + hp.views[v].offset + j;
    }
    /* roundoff of the differences ~ eps |f| / h: compare tiny entries in absolute terms */
    const double floor = 2e5 * DBL_EPSILON * fabs(f0) / 1e-4;
    datm_gradcheck r;
    CHECK(datm_gradcheck_f64(objective, &c, x, n, idx, m_enc, 1e-4, floor, &r, &err) == DATM_OK);
    printf("%-30s encoder params: %5lld checked (%lld below floor), max rel err %.3g\n", name,
           (long long)r.n_checked, (long long)r.n_below_floor, r.max_rel_err);
    CHECK(r.max_rel_err < 1e-4);
    CHECK(r.n_below_floor * 10 < r.n_checked);
    CHECK(datm_gradcheck_f64(objective, &c, x, n, idx + m_enc, m - m_enc, 1e-4, 1e-9, &r, &err) == DATM_OK);
    printf("%-30s head params:    %5lld checked, max rel err %.3g\n", name, (long long)r.n_checked,
           r.max_rel_err);
    CHECK(r.max_rel_err < 1e-4);

    /* the label term reaches the encoder: its gradient differs from the label-free one by the
     * label part alone, which is itself a central-difference match above; here: it is not 0 */
    double *g1 = datm_alloc_array((size_t)n, sizeof(double), NULL);
    double *g0 = datm_alloc_array((size_t)n, sizeof(double), NULL);
    objective(&c, x, g1);
    c.label_weight = 0;
    objective(&c, x, g0);
    double diff = 0, gmax = 0;
    for (int64_t i = 0; i < m_enc; i++) {
        diff = fmax(diff, fabs(g1[idx[i]] - g0[idx[i]]));
        gmax = fmax(gmax, fabs(g0[idx[i]]));
    }
    printf("%-30s label part of the encoder gradient: max %.3g (ELBO part max %.3g)\n", name, diff, gmax);
    CHECK(diff > 1e-6 * gmax && diff > 0);

    datm_free(g1); datm_free(g0); datm_free(idx); datm_free(x); datm_free(c.eps);
    datm_free(c.cache); datm_free(c.work); datm_free(c.W); datm_free(c.P); datm_free(c.bwork);
    datm_free(c.ds);
    for (int l = 1; l <= L; l++) { datm_free(c.phi[l]); datm_free(c.noise[l]); datm_free(c.dth[l]); }
    datm_params_free(&hp);
    datm_encoder_ws_destroy_f64(&c.ws);
    datm_encoder_destroy(&c.e);
    datm_csr_free(&X);
}

int main(void)
{
    run("sDATM-L head (raw theta)", DATM_FEAT_RAW, 0, 0);
    run("sDATM-N head (log1p, g1, 7-5)", DATM_FEAT_LOG1P, 1, 2);
    run("sDATM-L head (proportions)", DATM_FEAT_PROP, 0, 0);
    return check_result();
}
