/* ctest-labels: unit;grad  ctest-timeout: 60  ctest-link: datm_decoder */
/* tests/test_wai_softmax_topics.c: WAI's softmax-parameterised topics
 * (engine/decoder/softmax_topics), in double unless stated:
 *   - column softmax: columns on the simplex, invariant to a per-column shift of beta;
 *   - its backward vs central differences of J(beta) = sum_vk w_vk phi_vk(beta): rel < 1e-4;
 *   - the Poisson log-likelihood of X under theta softmax(beta)^T: value vs a direct sum, its
 *     gradient w.r.t. beta vs the engine/nn gradient checker (4th-order central
 *     differences): rel err < 1e-4 on every entry;
 *   - f32 kernels vs f64 (rel 1e-5);
 *   - datm_softmax_topics: starts exactly at phi_init; one step equals a hand-computed Adam
 *     step on the chain-ruled gradient; Adam steps on the Poisson likelihood with a fixed
 *     theta raise it (recovering topics from synthetic data). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "decoder/softmax_topics.h"
#include "nn/nn.h"
#include "rand/rand.h"
#include "test_check.h"


enum { V = 12, K = 4, N = 7 };

typedef struct { const double *w; } jctx;

static double obj_j(void *c, const double *beta, double *grad)
{
    const jctx *j = c;
    double phi[V * K], dphi[V * K];
    datm_softmax_cols_f64(V, K, beta, phi);
    double s = 0;
    for (int i = 0; i < V * K; i++) s += j->w[i] * phi[i];
    if (grad) {
        memcpy(dphi, j->w, sizeof dphi);
        datm_softmax_cols_backward_f64(V, K, phi, dphi, grad);
    }
    return s;
}

typedef struct { const datm_csr *X; const double *theta; } llctx;

static double obj_ll(void *c, const double *beta, double *grad)
{
    const llctx *l = c;
    return datm_softmax_poisson_loglik_f64(l->X, K, beta, l->theta, grad);
}

/* A random sparse count matrix (N, V) with about half the entries nonzero. */
static void make_counts(datm_rng *r, datm_csr *X)
{
    datm_error err;
    DATM_ASSERT(datm_csr_alloc(X, N, V, N * V, &err) == 0);
    int64_t p = 0;
    for (int n = 0; n < N; n++) {
        X->row_ptr[n] = p;
        for (int v = 0; v < V; v++) {
            if (datm_rng_uniform(r) < 0.5) continue;
            X->col[p] = v;
            X->val[p] = (float)(1 + datm_rng_below(r, 6));
            p++;
        }
    }
    X->row_ptr[N] = p;
    X->nnz = p;
}

int main(void)
{
    datm_rng r;
    datm_rng_init(&r, 3, DATM_STREAM_TEST, 1);
    double beta[V * K], phi[V * K], w[V * K], theta[N * K];
    for (int i = 0; i < V * K; i++) {
        beta[i] = 2 * datm_rng_normal(&r);
        w[i] = datm_rng_normal(&r);
    }
    for (int i = 0; i < N * K; i++) theta[i] = datm_rng_gamma(&r, 0.7) * 3;

    /* simplex and shift invariance */
    datm_softmax_cols_f64(V, K, beta, phi);
    double shifted[V * K], phi2[V * K];
    for (int v = 0; v < V; v++)
        for (int k = 0; k < K; k++) shifted[v * K + k] = beta[v * K + k] + 10.0 * (k + 1);
    datm_softmax_cols_f64(V, K, shifted, phi2);
    for (int k = 0; k < K; k++) {
        double s = 0;
        for (int v = 0; v < V; v++) {
            s += phi[v * K + k];
            CHECK(phi[v * K + k] > 0, "phi entry (%d,%d) not positive", v, k);
            CHECK(fabs(phi[v * K + k] - phi2[v * K + k]) < 1e-14, "shift invariance (%d,%d)", v, k);
        }
        CHECK(fabs(s - 1) < 1e-14, "column %d sums to %.17g", k, s);
    }

    /* backward of the softmax */
    datm_error err;
    datm_gradcheck gc;
    jctx jc = {w};
    DATM_ASSERT(datm_gradcheck_f64(obj_j, &jc, beta, V * K, NULL, 0, 1e-4, 1e-10, &gc, &err) == 0);
    printf("softmax backward: %lld entries, max rel err %.3g\n", (long long)gc.n_checked,
           gc.max_rel_err);
    CHECK(gc.max_rel_err < 1e-4, "softmax backward: rel err %.3g at %lld (%.12g vs %.12g)",
          gc.max_rel_err, (long long)gc.worst, gc.worst_analytic, gc.worst_numeric);

    /* Poisson log-likelihood and its gradient w.r.t. beta */
    datm_csr X;
    make_counts(&r, &X);
    double direct = 0;
    for (int n = 0; n < N; n++) {
        for (int v = 0; v < V; v++) {
            double rate = 0, x = 0;
            for (int k = 0; k < K; k++) rate += theta[n * K + k] * phi[v * K + k];
            for (int64_t p = X.row_ptr[n]; p < X.row_ptr[n + 1]; p++)
                if (X.col[p] == v) x = X.val[p];
            direct += x * log(rate) - rate - lgamma(x + 1);
        }
    }
    double ll = datm_softmax_poisson_loglik_f64(&X, K, beta, theta, NULL);
    CHECK(fabs(ll - direct) < 1e-10 * fabs(direct), "loglik %.17g vs direct %.17g", ll, direct);
    llctx lc = {&X, theta};
    DATM_ASSERT(datm_gradcheck_f64(obj_ll, &lc, beta, V * K, NULL, 0, 1e-4, 1e-10, &gc, &err) == 0);
    printf("Poisson loglik d/dbeta: %lld entries, max rel err %.3g\n", (long long)gc.n_checked,
           gc.max_rel_err);
    CHECK(gc.max_rel_err < 1e-4, "loglik gradient: rel err %.3g at %lld (%.12g vs %.12g)",
          gc.max_rel_err, (long long)gc.worst, gc.worst_analytic, gc.worst_numeric);

    /* f32 kernels */
    float bf[V * K], pf[V * K], wf[V * K], gf[V * K];
    double g64[V * K];
    for (int i = 0; i < V * K; i++) {
        bf[i] = (float)beta[i];
        wf[i] = (float)w[i];
    }
    datm_softmax_cols_f32(V, K, bf, pf);
    datm_softmax_cols_backward_f32(V, K, pf, wf, gf);
    datm_softmax_cols_backward_f64(V, K, phi, w, g64);
    double worst = 0;
    for (int i = 0; i < V * K; i++) {
        worst = fmax(worst, fabs(pf[i] - phi[i]) / phi[i]);
        worst = fmax(worst, fabs(gf[i] - g64[i]) / fmax(fabs(g64[i]), 1e-3));
    }
    CHECK(worst < 1e-5, "f32 kernels vs f64: rel %.3g", worst);

    /* the topics object: init, one Adam step by hand */
    int64_t Ks[2] = {V, K};
    double *init[2] = {NULL, phi};
    datm_softmax_topics *t = NULL;
    const double lr = 0.01;
    DATM_ASSERT(datm_softmax_topics_create(1, Ks, (const double *const *)init, lr, 0.9, 0.999, 1e-8,
                                           &t, &err) == 0);
    worst = 0;
    for (int i = 0; i < V * K; i++) worst = fmax(worst, fabs(t->phi[1][i] - phi[i]) / phi[i]);
    CHECK(worst < 1e-6, "initial Phi differs from phi_init (rel %.3g)", worst);
    float b0[V * K], p0[V * K];
    memcpy(b0, datm_params_value(&t->params, t->ibeta[1]), sizeof b0);
    memcpy(p0, t->phi[1], sizeof p0);
    for (int i = 0; i < V * K; i++) t->dphi[1][i] = wf[i];
    DATM_ASSERT(datm_softmax_topics_step(t, &err) == 0);
    datm_softmax_cols_backward_f32(V, K, p0, wf, gf);
    const float *b1 = datm_params_value(&t->params, t->ibeta[1]);
    worst = 0;
    for (int i = 0; i < V * K; i++) {
        /* first Adam step: m = 0.1 g, v = 0.001 g^2, bias-corrected -> lr g / (|g| + eps') */
        double g = gf[i], expect = b0[i] - lr * g / (fabs(g) + 1e-8);
        worst = fmax(worst, fabs(b1[i] - expect));
    }
    CHECK(worst < 1e-6, "Adam step on beta: max abs diff %.3g", worst);
    float pchk[V * K];
    datm_softmax_cols_f32(V, K, b1, pchk);
    CHECK(memcmp(pchk, t->phi[1], sizeof pchk) == 0, "phi not refreshed after the step");
    datm_softmax_topics_destroy(&t);

    /* learning: counts drawn from theta Phi_true^T; Adam on -loglik from a flat start */
    {
        double beta_t[V * K], phi_t[V * K], flat[V * K];
        for (int i = 0; i < V * K; i++) {
            beta_t[i] = 1.5 * datm_rng_normal(&r);
            flat[i] = 1.0 / V;
        }
        datm_softmax_cols_f64(V, K, beta_t, phi_t);
        datm_csr Y;
        DATM_ASSERT(datm_csr_alloc(&Y, N, V, N * V, &err) == 0);
        int64_t p = 0;
        for (int n = 0; n < N; n++) {
            Y.row_ptr[n] = p;
            for (int v = 0; v < V; v++) {
                double rate = 0;
                for (int k = 0; k < K; k++) rate += 20 * theta[n * K + k] * phi_t[v * K + k];
                uint64_t c = datm_rng_poisson(&r, rate);
                if (c) { Y.col[p] = v; Y.val[p] = (float)c; p++; }
            }
        }
        Y.row_ptr[N] = p;
        Y.nnz = p;
        double th20[N * K];
        for (int i = 0; i < N * K; i++) th20[i] = 20 * theta[i];
        double *fl[2] = {NULL, flat};
        DATM_ASSERT(datm_softmax_topics_create(1, Ks, (const double *const *)fl, 0.05, 0.9, 0.999,
                                               1e-8, &t, &err) == 0);
        double bb[V * K], gb[V * K];
        double first = 0, last = 0, truth = datm_softmax_poisson_loglik_f64(&Y, K, beta_t, th20, NULL);
        for (int it = 0; it < 300; it++) {
            const float *bv = datm_params_value(&t->params, t->ibeta[1]);
            for (int i = 0; i < V * K; i++) bb[i] = bv[i];
            double l = datm_softmax_poisson_loglik_f64(&Y, K, bb, th20, NULL);
            if (it == 0) first = l;
            last = l;
            /* d(-ll)/dPhi, obtained from the beta-gradient's pre-image: use the phi form */
            double ph[V * K];
            datm_softmax_cols_f64(V, K, bb, ph);
            for (int i = 0; i < V * K; i++) gb[i] = 0;
            for (int n = 0; n < N; n++)
                for (int64_t q = Y.row_ptr[n]; q < Y.row_ptr[n + 1]; q++) {
                    int v = Y.col[q];
                    double rate = 0;
                    for (int k = 0; k < K; k++) rate += th20[n * K + k] * ph[v * K + k];
                    for (int k = 0; k < K; k++) gb[v * K + k] -= Y.val[q] / rate * th20[n * K + k];
                }
            for (int n = 0; n < N; n++)
                for (int v = 0; v < V; v++)
                    for (int k = 0; k < K; k++) gb[v * K + k] += th20[n * K + k];
            for (int i = 0; i < V * K; i++) t->dphi[1][i] = (float)gb[i];
            DATM_ASSERT(datm_softmax_topics_step(t, &err) == 0);
        }
        printf("learning: loglik %.6g -> %.6g (true topics %.6g)\n", first, last, truth);
        CHECK(last > first && last > truth - 0.02 * fabs(truth),
              "Adam on softmax topics did not fit: %.9g -> %.9g (truth %.9g)", first, last, truth);
        datm_softmax_topics_destroy(&t);
        datm_csr_free(&Y);
    }
    datm_csr_free(&X);
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("all softmax-topic checks passed\n");
    return 0;
}
