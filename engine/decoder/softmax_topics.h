/* engine/decoder/softmax_topics.h: topics as a softmax of free parameters, learnt by Adam on
 * the ELBO -- the decoder of WAI (paper sec. II-E "Weibull autoencoding inference": the same
 * inference network as WHAI, Phi(l) and Omega inferred by SGD only).
 *
 * Parameterisation (our assumption: the paper does not give one; docs/reference.md 3, the
 * AVITM convention): column k of Phi(l) is phi_.k = softmax(beta_.k) over its K[l-1] rows,
 * beta free and unconstrained. No Dirichlet prior on Phi (a point estimate, as in AVITM).
 * Chain rule: d loss / d beta_vk = phi_vk (G_vk - sum_v' phi_v'k G_v'k), G = d loss / d Phi.
 *
 * Layout as engine/decoder: Phi(l) and beta(l) are (K[l-1], K[l]) row-major, layers 1-based,
 * K[0] = V. Parameters live in one datm_params block (views "beta_1".."beta_L") so Adam,
 * checkpoints and results see one flat vector. */
#ifndef DATM_SOFTMAX_TOPICS_H
#define DATM_SOFTMAX_TOPICS_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "nn/nn.h"

typedef struct datm_softmax_topics {
    int         L;
    int64_t     K[DATM_MAX_LAYERS + 1];       /* K[0] = V */
    datm_params params;                           /* value = beta, grad = d loss / d beta */
    int         ibeta[DATM_MAX_LAYERS + 1];   /* view index of beta(l) */
    float      *phi[DATM_MAX_LAYERS + 1];     /* (K[l-1], K[l]) softmax(beta) by column */
    float      *dphi[DATM_MAX_LAYERS + 1];    /* (K[l-1], K[l]) d loss / d Phi(l), set by
                                                     the caller before datm_softmax_topics_step */
    datm_adam   adam;
    void       *block;                            /* the allocation behind phi and dphi */
} datm_softmax_topics;

/* beta(l) = ln phi_init[l] (so Phi starts at phi_init, columns on the simplex, entries > 0);
 * Adam with (lr, beta1, beta2, eps). */
int  datm_softmax_topics_create(int L, const int64_t *K, const double *const *phi_init,
                                double lr, double beta1, double beta2, double eps,
                                datm_softmax_topics **out, datm_error *err);
void datm_softmax_topics_destroy(datm_softmax_topics **t);
/* phi = softmax(beta) for every layer (after loading beta). */
void datm_softmax_topics_refresh(datm_softmax_topics *t);
/* One Adam step on beta from t->dphi (chain rule above), then refresh phi. Fails
 * (DATM_E_NUMERIC) naming the layer if a gradient or a new Phi entry is not finite. */
int  datm_softmax_topics_step(datm_softmax_topics *t, datm_error *err);

/* Column softmax of beta (R, C) into phi (R, C), and its backward dbeta from dphi. */
void datm_softmax_cols_f32(int64_t R, int64_t C, const float *beta, float *phi);
void datm_softmax_cols_f64(int64_t R, int64_t C, const double *beta, double *phi);
void datm_softmax_cols_backward_f32(int64_t R, int64_t C, const float *phi, const float *dphi,
                                    float *dbeta);
void datm_softmax_cols_backward_f64(int64_t R, int64_t C, const double *phi,
                                    const double *dphi, double *dbeta);

/* Poisson log-likelihood sum_{n,v} [x_nv ln r_nv - r_nv - lnGamma(x_nv + 1)], r = theta Phi^T,
 * Phi = softmax(beta) (V, K) by column, theta (N, K), X (N, V); grad_beta (V, K) (may be
 * NULL) gets its gradient w.r.t. beta. A plain double reference (tests, small problems). */
double datm_softmax_poisson_loglik_f64(const datm_csr *X, int64_t K, const double *beta,
                                       const double *theta, double *grad_beta);

#endif
