/* engine/nn/bayes_softmax.h: the Bayesian softmax classifier of supervised DATM (paper
 * section III, eqs. Linear-classification, w-distribution, KL-gaussian, prediction).
 *
 * Weights W (R, C), R = D (+1 bias row on a constant input 1 when bias != 0), have prior
 * N(0, I) and variational posterior N(mu, diag(sigma^2)) with sigma = softplus(rho)
 * elementwise (paper: sigma_c = log(1 + exp(rho_c))). Training draws W = mu + sigma * eps,
 * eps ~ N(0, I) (reparameterised, one draw per mini-batch); the loss is
 *   scale * sum_n -log softmax(s_n W)[y_n]  +  kl_scale * KL(q(W) || p(W)),
 *   KL = sum_{r,c} [ (mu^2 + sigma^2 - 1) / 2 - log sigma ]
 * (the exact diagonal-Gaussian KL; the paper's eq. KL-gaussian writes it with norms and
 * drops the constant). Backward gives the gradients w.r.t. mu, rho AND the input features s
 * (B, D), so the label term reaches theta and the encoder.
 *
 * mu and rho live as two views "<prefix>.mu", "<prefix>.rho" of the model's datm_params
 * block; the functions take the block base pointers, so the f64 twins run on a double copy of
 * the same block (gradient checks). f32 and f64 are generated from one source
 * (bayes_softmax_impl.h). Letters: B batch rows, D features, C classes, R = D + bias. */
#ifndef DATM_BAYES_SOFTMAX_H
#define DATM_BAYES_SOFTMAX_H

#include <stdint.h>

#include "core/core.h"
#include "nn/nn.h"
#include "rand/rand.h"

typedef struct datm_bsm {
    int64_t D, C;
    int     bias;
    int64_t R;               /* D + bias */
    int     v_mu, v_rho;     /* view indices in the params */
    int64_t o_mu, o_rho;     /* their offsets in the block: mu = block + o_mu, (R, C) */
} datm_bsm;

/* Declares the views (before datm_params_alloc). */
int  datm_bsm_add_params(datm_bsm *h, datm_params *p, const char *prefix, int64_t D, int64_t C,
                         int bias, datm_error *err);
/* mu ~ N(0, mu_sd^2) (bias row 0), rho = log(expm1(sigma0)) so every sigma starts at sigma0. */
void datm_bsm_init_values(const datm_bsm *h, datm_params *p, datm_rng *rng, double mu_sd,
                          double sigma0);
/* Work space (elements) needed by backward for a batch of B rows. */
static inline int64_t datm_bsm_work_len(const datm_bsm *h, int64_t B)
{
    return B * h->C + h->R * h->C;
}

/* W (R, C) = mu + softplus(rho) * eps; eps (R, C) or NULL for the posterior mean W = mu. */
void datm_bsm_weights_f32(const datm_bsm *h, const float *block, const float *eps, float *W);
void datm_bsm_weights_f64(const datm_bsm *h, const double *block, const double *eps, double *W);

/* P (B, C) = softmax(S W[0:D] + W[D]) row by row; S (B, D). */
void datm_bsm_forward_f32(const datm_bsm *h, int64_t B, const float *S, const float *W, float *P);
void datm_bsm_forward_f64(const datm_bsm *h, int64_t B, const double *S, const double *W,
                          double *P);

/* sum_n -log P[n, y_n] (log floored at the type's smallest normal number). */
double datm_bsm_nll_f32(const datm_bsm *h, int64_t B, const float *P, const int32_t *y);
double datm_bsm_nll_f64(const datm_bsm *h, int64_t B, const double *P, const int32_t *y);

/* Backward of scale * sum_n -log P[n, y_n] through W = mu + softplus(rho) eps:
 * gblock's mu and rho views are OVERWRITTEN with d/dmu = dW and d/drho = dW eps sigmoid(rho)
 * (eps NULL: mean weights, d/drho = 0); dS (B, D) = scale (P - onehot(y)) W[0:D]^T +
 * dS_beta dS (dS NULL: not needed). work: datm_bsm_work_len(h, B) elements. */
void datm_bsm_backward_f32(const datm_bsm *h, int64_t B, const float *block, float *gblock,
                           const float *S, const float *eps, const float *W, const float *P,
                           const int32_t *y, double scale, float *work, float *dS,
                           float dS_beta);
void datm_bsm_backward_f64(const datm_bsm *h, int64_t B, const double *block, double *gblock,
                           const double *S, const double *eps, const double *W, const double *P,
                           const int32_t *y, double scale, double *work, double *dS,
                           double dS_beta);

/* KL(q(W) || N(0, I)) summed over all R C weights; when gblock != NULL ADDS scale * dKL to
 * its mu and rho views. */
double datm_bsm_kl_f32(const datm_bsm *h, const float *block, float *gblock, double scale);
double datm_bsm_kl_f64(const datm_bsm *h, const double *block, double *gblock, double scale);

#endif
