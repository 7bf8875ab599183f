/* engine/decoder/softmax_topics.c: WAI's topics, Phi(l) columns = softmax of free parameters
 * trained by Adam (paper sec. II-E; parameterisation stated in softmax_topics.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decoder/softmax_topics.h"

#define DATM_SMT_KERNELS(R, SFX, EXP)                                                      \
    void datm_softmax_cols_##SFX(int64_t rows, int64_t C, const R *beta, R *phi)            \
    {                                                                                       \
        for (int64_t k = 0; k < C; k++) {                                                   \
            R mx = beta[k];                                                                 \
            for (int64_t v = 1; v < rows; v++) mx = beta[v * C + k] > mx ? beta[v * C + k] : mx; \
            double s = 0;                                                                   \
            for (int64_t v = 0; v < rows; v++) {                                            \
                R e = EXP(beta[v * C + k] - mx);                                            \
                phi[v * C + k] = e;                                                         \
                s += (double)e;                                                             \
            }                                                                               \
            const R inv = (R)(1.0 / s);                                                     \
            for (int64_t v = 0; v < rows; v++) phi[v * C + k] *= inv;                       \
        }                                                                                   \
    }                                                                                       \
    void datm_softmax_cols_backward_##SFX(int64_t rows, int64_t C, const R *phi,            \
                                          const R *dphi, R *dbeta)                          \
    {                                                                                       \
        for (int64_t k = 0; k < C; k++) {                                                   \
            double s = 0;                                                               \
            for (int64_t v = 0; v < rows; v++)                                              \
                s += (double)phi[v * C + k] * (double)dphi[v * C + k];                      \
            for (int64_t v = 0; v < rows; v++)                                              \
                dbeta[v * C + k] = (R)((double)phi[v * C + k] * ((double)dphi[v * C + k] - s)); \
        }                                                                                   \
    }

DATM_SMT_KERNELS(float, f32, expf)
DATM_SMT_KERNELS(double, f64, exp)

int datm_softmax_topics_create(int L, const int64_t *K, const double *const *phi_init,
                               double lr, double beta1, double beta2, double eps,
                               datm_softmax_topics **out, datm_error *err)
{
    *out = NULL;
    if (L < 1 || L > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "softmax topics: %d layers (1..%d)", L,
                              DATM_MAX_LAYERS);
    for (int l = 0; l <= L; l++)
        if (K[l] <= 0)
            return datm_error_set(err, DATM_E_INVALID, "softmax topics: K[%d] = %lld", l,
                                  (long long)K[l]);
    datm_softmax_topics *t = datm_alloc(sizeof *t, err);
    if (!t) return err ? err->code : DATM_E_NOMEM;
    t->L = L;
    int64_t total = 0;
    for (int l = 0; l <= L; l++) t->K[l] = K[l];
    for (int l = 1; l <= L; l++) {
        char name[DATM_PARAM_NAME_MAX];
        snprintf(name, sizeof name, "beta_%d", l);
        if ((t->ibeta[l] = datm_params_add(&t->params, name, K[l - 1], K[l], err)) < 0) {
            datm_softmax_topics_destroy(&t);
            return err ? err->code : DATM_E_INVALID;
        }
        total += K[l - 1] * K[l];
    }
    int rc = datm_params_alloc(&t->params, err);
    if (!rc) rc = datm_adam_init(&t->adam, t->params.size, lr, beta1, beta2, eps, err);
    if (rc) {
        datm_softmax_topics_destroy(&t);
        return rc;
    }
    t->block = datm_alloc_array((size_t)(2 * total), sizeof(float), err);
    if (!t->block) {
        datm_softmax_topics_destroy(&t);
        return err ? err->code : DATM_E_NOMEM;
    }
    float *p = t->block;
    for (int l = 1; l <= L; l++) {
        const int64_t n = K[l - 1] * K[l];
        t->phi[l] = p;
        t->dphi[l] = p + n;
        p += 2 * n;
        float *beta = datm_params_value(&t->params, t->ibeta[l]);
        for (int64_t i = 0; i < n; i++) {
            const double x = phi_init[l][i];
            if (!(x > 0) || !isfinite(x)) {
                rc = datm_error_set(err, DATM_E_INVALID,
                                    "softmax topics: initial Phi(%d) entry %lld = %.17g (must be > 0)",
                                    l, (long long)i, x);
                datm_softmax_topics_destroy(&t);
                return rc;
            }
            beta[i] = (float)log(x);
        }
    }
    datm_softmax_topics_refresh(t);
    *out = t;
    return DATM_OK;
}

void datm_softmax_topics_destroy(datm_softmax_topics **pt)
{
    if (!pt || !*pt) return;
    datm_softmax_topics *t = *pt;
    datm_params_free(&t->params);
    datm_adam_free(&t->adam);
    datm_free(t->block);
    datm_free(t);
    *pt = NULL;
}

void datm_softmax_topics_refresh(datm_softmax_topics *t)
{
    for (int l = 1; l <= t->L; l++)
        datm_softmax_cols_f32(t->K[l - 1], t->K[l], datm_params_value(&t->params, t->ibeta[l]),
                              t->phi[l]);
}

int datm_softmax_topics_step(datm_softmax_topics *t, datm_error *err)
{
    for (int l = 1; l <= t->L; l++) {
        const int64_t R = t->K[l - 1], C = t->K[l];
        float *g = datm_params_grad(&t->params, t->ibeta[l]);
        datm_softmax_cols_backward_f32(R, C, t->phi[l], t->dphi[l], g);
        for (int64_t i = 0; i < R * C; i++)
            if (!isfinite(g[i]))
                return datm_error_set(err, DATM_E_NUMERIC,
                                      "softmax topics: non-finite gradient of beta(%d) at "
                                      "(%lld, %lld)", l, (long long)(i / C), (long long)(i % C));
    }
    datm_adam_step(&t->adam, t->params.value, t->params.grad);
    datm_softmax_topics_refresh(t);
    for (int l = 1; l <= t->L; l++) {
        const int64_t n = t->K[l - 1] * t->K[l];
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(t->phi[l][i]))
                return datm_error_set(err, DATM_E_NUMERIC,
                                      "softmax topics: non-finite Phi(%d) after step %lld", l,
                                      (long long)t->adam.t);
    }
    return DATM_OK;
}

double datm_softmax_poisson_loglik_f64(const datm_csr *X, int64_t K, const double *beta,
                                       const double *theta, double *grad_beta)
{
    const int64_t V = X->n_cols, N = X->n_rows;
    datm_error err;
    double *phi = datm_alloc_array((size_t)(V * K), sizeof(double), &err);
    double *G = grad_beta ? datm_alloc_array((size_t)(V * K), sizeof(double), &err) : NULL;
    double *tsum = datm_alloc_array((size_t)K, sizeof(double), &err);
    DATM_ASSERT(phi && tsum && (!grad_beta || G));
    datm_softmax_cols_f64(V, K, beta, phi);
    /* ll = sum_n [sum_v x ln r - sum_k theta_nk colsum_k(Phi)] - sum lnGamma(x + 1);
     * d ll / d phi_vk = sum_n (x_nv / r_nv) theta_nk - sum_n theta_nk */
    double ll = 0;
    for (int64_t n = 0; n < N; n++) {
        const double *t = theta + n * K;
        for (int64_t p = X->row_ptr[n]; p < X->row_ptr[n + 1]; p++) {
            const int64_t v = X->col[p];
            const double x = X->val[p];
            double r = 0;
            for (int64_t k = 0; k < K; k++) r += t[k] * phi[v * K + k];
            ll += x * log(r) - lgamma(x + 1.0);
            if (G)
                for (int64_t k = 0; k < K; k++) G[v * K + k] += x / r * t[k];
        }
        for (int64_t k = 0; k < K; k++) {
            ll -= t[k];   /* columns of Phi sum to 1 */
            tsum[k] += t[k];
        }
    }
    if (G) {
        for (int64_t v = 0; v < V; v++)
            for (int64_t k = 0; k < K; k++) G[v * K + k] -= tsum[k];
        datm_softmax_cols_backward_f64(V, K, phi, G, grad_beta);
    }
    datm_free(tsum);
    datm_free(G);
    datm_free(phi);
    return ll;
}
