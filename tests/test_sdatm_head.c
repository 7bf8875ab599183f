/* ctest-labels: unit;grad  ctest-timeout: 60  ctest-link: datm_nn */
/* tests/test_sdatm_head.c: the whole sDATM classifier head theta(1..L) -> mlp_head -> Bayesian
 * softmax, as sDATM-L (no g_1, no hidden layers) and sDATM-N (g_1 maps + hidden layers), for
 * each feature transform (raw, log1p, prop). Gradient check (central differences, double,
 * rel. err < 1e-4) of scale * NLL + kl_scale * KL with a fixed weight noise eps, w.r.t. every
 * head parameter (g_1, g_2, mu, rho) and every input theta(l)_nk, with nontrivial input
 * standardisation constants (shift, scale; constants, so not differentiated); the f32 path
 * agrees with the f64 one. A last check: datm_mlp_head_set_norm gives standardised features
 * mean 0 and sd 1 over the documents it saw. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/bayes_softmax.h"
#include "nn/mlp_head.h"
#include "test_check.h"
#include "test_util.h"


/* the test's own generator (tests/test_util.h), independent of the engine's */
static uint64_t rs = 4242;
static double unif(void) { return tu_unif(&rs); }
static double gauss(void) { return tu_gauss(&rs); }

enum { B = 5, L = 3, C = 3 };
static const int64_t K[L] = {4, 3, 2};
static const int64_t A[2] = {6, 5};

typedef struct ctx {
    datm_mlp_head mh;
    datm_bsm      bs;
    int64_t       size;          /* block elements; x = [block, theta(1), ..., theta(L)] */
    int64_t       th_off[L];
    const double *eps;
    int32_t       y[B];
    double        scale, kl_scale;
    double       *cache, *work, *W, *P, *bwork;
} ctx;

static double objective(void *vc, const double *x, double *grad)
{
    ctx *c = vc;
    const double *theta[L];
    double *dtheta[L];
    for (int l = 0; l < L; l++) {
        theta[l] = x + c->th_off[l];
        dtheta[l] = grad ? grad + c->th_off[l] : NULL;
    }
    const double *s = datm_mlp_head_forward_f64(&c->mh, x, B, theta, c->cache);
    datm_bsm_weights_f64(&c->bs, x, c->eps, c->W);
    datm_bsm_forward_f64(&c->bs, B, s, c->W, c->P);
    double f = c->scale * datm_bsm_nll_f64(&c->bs, B, c->P, c->y);
    if (grad) {
        memset(grad, 0, sizeof(double) * (size_t)c->th_off[L - 1] + sizeof(double) * B * K[L - 1]);
        double *ds = malloc(sizeof(double) * B * c->mh.out_dim);
        datm_bsm_backward_f64(&c->bs, B, x, grad, s, c->eps, c->W, c->P, c->y, c->scale,
                              c->bwork, ds, 0.0);
        /* beta = 1: the head adds to whatever the encoder put in dtheta (here 0) */
        datm_mlp_head_backward_f64(&c->mh, x, grad, B, theta, c->cache, ds, c->work, dtheta, 1.0);
        free(ds);
    }
    f += c->kl_scale * datm_bsm_kl_f64(&c->bs, x, grad, c->kl_scale);
    return f;
}

static void run(int per_layer, int H, int transform)
{
    ctx c;
    memset(&c, 0, sizeof c);
    datm_params p;
    memset(&p, 0, sizeof p);
    datm_error err = {0};
    CHECK(datm_mlp_head_add_params(&c.mh, &p, "head", L, K, transform, per_layer, H, A, &err) == DATM_OK);
    CHECK(datm_bsm_add_params(&c.bs, &p, "cls", c.mh.out_dim, C, 1, &err) == DATM_OK);
    c.size = p.size;
    int64_t n = c.size;
    for (int l = 0; l < L; l++) { c.th_off[l] = n; n += B * K[l]; }
    double *x = calloc((size_t)n, sizeof(double));
    /* parameter values: every view gets N(0, 0.5^2), rho around log(expm1(0.2)) */
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)n), m = 0;
    for (int v = 0; v < p.n_views; v++)
        for (int64_t i = 0; i < datm_params_len(&p, v); i++) {
            int64_t o = p.views[v].offset + i;
            x[o] = v == c.bs.v_rho ? -1.5 + 0.5 * gauss() : 0.5 * gauss();
            /* the standardisation constants: nontrivial values, not checked (gradient 0) */
            if (v == c.mh.v_scale) x[o] = 0.5 + unif();
            if (v == c.mh.v_norm_set) x[o] = 1;
            if (v == c.mh.v_shift || v == c.mh.v_scale || v == c.mh.v_norm_set) continue;
            idx[m++] = o;
        }
    /* theta: positive, spread over two orders of magnitude (gamma-like features) */
    for (int l = 0; l < L; l++)
        for (int64_t i = 0; i < B * K[l]; i++) {
            x[c.th_off[l] + i] = exp(1.5 * gauss()) * 0.5;
            idx[m++] = c.th_off[l] + i;
        }
    double *eps = malloc(sizeof(double) * (size_t)(c.bs.R * C));
    for (int64_t i = 0; i < c.bs.R * C; i++) eps[i] = gauss();
    c.eps = eps;
    for (int i = 0; i < B; i++) c.y[i] = (int32_t)(unif() * C);
    c.scale = 1.0 / B;
    c.kl_scale = 1.0 / 100;
    c.cache = malloc(sizeof(double) * (size_t)datm_mlp_head_cache_len(&c.mh, B));
    c.work = malloc(sizeof(double) * (size_t)datm_mlp_head_work_len(&c.mh, B));
    c.W = malloc(sizeof(double) * (size_t)(c.bs.R * C));
    c.P = malloc(sizeof(double) * B * C);
    c.bwork = malloc(sizeof(double) * (size_t)datm_bsm_work_len(&c.bs, B));

    datm_gradcheck gc;
    CHECK(datm_gradcheck_f64(objective, &c, x, n, idx, m, 1e-5, 1e-9, &gc, &err) == DATM_OK);
    printf("head grad check (g1 %d, hidden %d, transform %s): %lld entries, max rel err %.3g "
           "(worst %lld: %.9g vs %.9g)\n", per_layer, H, datm_feat_transform_name(transform),
           (long long)gc.n_checked, gc.max_rel_err, (long long)gc.worst, gc.worst_analytic,
           gc.worst_numeric);
    CHECK(gc.max_rel_err < 1e-4);

    /* f32 path: the same numbers to float accuracy */
    double *g = calloc((size_t)n, sizeof(double));
    double f64v = objective(&c, x, g);
    float *xf = calloc((size_t)n, sizeof(float)), *gf = calloc((size_t)n, sizeof(float));
    for (int64_t i = 0; i < n; i++) xf[i] = (float)x[i];
    float *epsf = malloc(sizeof(float) * (size_t)(c.bs.R * C));
    for (int64_t i = 0; i < c.bs.R * C; i++) epsf[i] = (float)eps[i];
    float *cachef = malloc(sizeof(float) * (size_t)datm_mlp_head_cache_len(&c.mh, B));
    float *workf = malloc(sizeof(float) * (size_t)datm_mlp_head_work_len(&c.mh, B));
    float *Wf = malloc(sizeof(float) * (size_t)(c.bs.R * C)), Pf[B * C];
    float *bworkf = malloc(sizeof(float) * (size_t)datm_bsm_work_len(&c.bs, B));
    float *dsf = malloc(sizeof(float) * B * (size_t)c.mh.out_dim);
    const float *thf[L];
    float *dthf[L];
    for (int l = 0; l < L; l++) { thf[l] = xf + c.th_off[l]; dthf[l] = gf + c.th_off[l]; }
    const float *sf = datm_mlp_head_forward_f32(&c.mh, xf, B, thf, cachef);
    datm_bsm_weights_f32(&c.bs, xf, epsf, Wf);
    datm_bsm_forward_f32(&c.bs, B, sf, Wf, Pf);
    double f32v = c.scale * datm_bsm_nll_f32(&c.bs, B, Pf, c.y);
    datm_bsm_backward_f32(&c.bs, B, xf, gf, sf, epsf, Wf, Pf, c.y, c.scale, bworkf, dsf, 0.0f);
    datm_mlp_head_backward_f32(&c.mh, xf, gf, B, thf, cachef, dsf, workf, dthf, 0.0f);
    f32v += c.kl_scale * datm_bsm_kl_f32(&c.bs, xf, gf, c.kl_scale);
    double gmax = 0, gdiff = 0;
    for (int64_t j = 0; j < m; j++) {
        gmax = fmax(gmax, fabs(g[idx[j]]));
        gdiff = fmax(gdiff, fabs(g[idx[j]] - gf[idx[j]]));
    }
    printf("  f32 vs f64: objective %.9g vs %.9g, max grad diff %.3g (max |grad| %.3g)\n",
           f32v, f64v, gdiff, gmax);
    CHECK(fabs(f32v - f64v) <= 1e-5 * fmax(1, fabs(f64v)));
    CHECK(gdiff <= 2e-5 * fmax(1, gmax));

    free(g); free(xf); free(gf); free(epsf); free(cachef); free(workf); free(Wf); free(bworkf);
    free(dsf); free(x); free(idx); free(eps); free(c.cache); free(c.work); free(c.W); free(c.P);
    free(c.bwork);
    datm_params_free(&p);
}

int main(void)
{
    for (int t = 0; t < DATM_FEAT_COUNT_; t++) {
        run(0, 0, t);   /* sDATM-L */
        run(1, 2, t);   /* sDATM-N */
    }
    run(1, 0, DATM_FEAT_LOG1P);
    run(0, 1, DATM_FEAT_RAW);
    CHECK(datm_feat_transform_parse("prop") == DATM_FEAT_PROP);
    /* set_norm: the standardised features of the documents it saw have mean 0 and sd 1 */
    for (int t = 0; t < DATM_FEAT_COUNT_; t++) {
        datm_params p;
        memset(&p, 0, sizeof p);
        datm_mlp_head mh;
        datm_error err = {0};
        CHECK(datm_mlp_head_add_params(&mh, &p, "h", L, K, t, 0, 0, A, &err) == DATM_OK);
        CHECK(datm_params_alloc(&p, &err) == DATM_OK);
        datm_rng r;
        datm_rng_init(&r, 5, DATM_STREAM_TEST, 1);
        datm_mlp_head_init_values(&mh, &p, &r);
        CHECK(!datm_mlp_head_norm_is_set(&mh, p.value));
        enum { N = 64 };
        float *th[L];
        for (int l = 0; l < L; l++) {
            th[l] = malloc(sizeof(float) * N * (size_t)K[l]);
            for (int64_t i = 0; i < N * K[l]; i++) th[l][i] = (float)(exp(1.5 * gauss()) * 20);
        }
        datm_mlp_head_set_norm(&mh, p.value, (const float *const *)th, N, 0.1);
        CHECK(datm_mlp_head_norm_is_set(&mh, p.value));
        float *cache = malloc(sizeof(float) * (size_t)datm_mlp_head_cache_len(&mh, N));
        const float *s = datm_mlp_head_forward_f32(&mh, p.value, N, (const float *const *)th, cache);
        double worst = 0;
        for (int64_t j = 0; j < mh.S; j++) {
            double m = 0, q = 0;
            for (int i = 0; i < N; i++) { m += s[i * mh.S + j]; q += (double)s[i * mh.S + j] * s[i * mh.S + j]; }
            m /= N;
            worst = fmax(worst, fmax(fabs(m), fabs(sqrt(q / N - m * m) - 1)));
        }
        printf("set_norm (%s): max |mean|, |sd - 1| of the standardised features %.3g\n",
               datm_feat_transform_name(t), worst);
        CHECK(worst < 1e-3);
        /* a feature that does not vary (a topic not yet used): with sd_floor 0.1 its scale is
         * 1 / (0.1 x the median sd of its layer), not the 1e12 of the old floor (sd_floor 0) */
        {
            const int64_t K0 = K[0], j = 2;
            for (int i = 0; i < N; i++) th[0][i * K0 + j] = 0.0f;
            datm_mlp_head_set_norm(&mh, p.value, (const float *const *)th, N, 0.1);
            const float *sc = p.value + mh.o_scale;
            double sds[16], med;
            int nk = 0;
            for (int64_t k = 0; k < K0; k++)
                if (k != j) sds[nk++] = 1.0 / sc[k];
            sds[nk++] = 0.0;
            for (int a = 0; a < nk; a++)   /* insertion sort, nk <= 16 */
                for (int b = a; b > 0 && sds[b] < sds[b - 1]; b--) {
                    double tmp = sds[b]; sds[b] = sds[b - 1]; sds[b - 1] = tmp;
                }
            med = nk % 2 ? sds[nk / 2] : 0.5 * (sds[nk / 2 - 1] + sds[nk / 2]);
            printf("set_norm (%s): constant feature's scale %.4g, 1 / (0.1 median sd) %.4g\n",
                   datm_feat_transform_name(t), sc[j], 1.0 / (0.1 * med));
            CHECK(fabs(sc[j] * 0.1 * med - 1) < 1e-4);
            datm_mlp_head_set_norm(&mh, p.value, (const float *const *)th, N, 0.0);
            CHECK(sc[j] > 1e11);   /* the old floor */
        }
        for (int l = 0; l < L; l++) free(th[l]);
        free(cache);
        datm_params_free(&p);
    }
    CHECK(datm_feat_transform_parse("nope") == -1);
    return check_result();
}
