/* engine/dist/gamma_rsvi.h: the gamma variational posterior of GHAI (paper sec. II-E, eq.
 * RSVI-posterior) made differentiable by rejection-sampling variational inference (RSVI,
 * Naesseth et al. 2017) with shape boosting B, and the analytic gamma-gamma KL.
 *
 * Sampling z ~ Gamma(alpha, scale lam) (mean alpha lam):
 *   1. for a' = alpha + B draw eps ~ N(0,1) until the Marsaglia-Tsang test accepts
 *      z~ = h(eps, a') = (a' - 1/3) (1 + eps / sqrt(9 a' - 3))^3  (then z~ ~ Gamma(a', 1));
 *   2. z = lam h(eps, a') prod_{i=1..B} u_i^(1/(alpha + i - 1)),  u_i ~ U(0,1).
 * The noise of one unit is the float vector (eps, u_1, .., u_B) (DATM_RSVI_NOISE_DIM(B)).
 * The reparameterised gradient differentiates z at fixed noise ("through the accepted
 * proposal"): dz/dalpha = z [d ln h/da' + sum_i -ln(u_i) / (alpha + i - 1)^2], dz/dlam =
 * z / lam. It ignores the dependence of the accepted eps's density on alpha; that
 * correction term, f(z) d/da' ln pi(eps; a') with pi(eps; a') = Gamma(h; a') |dh/deps|, is
 * available as datm_rsvi_score() (tests use it to show the estimator is exact with it and
 * nearly unbiased without it for B >= 1). B >= 1 is required whenever alpha may be < 1
 * (h needs a' > 1/3; Marsaglia-Tsang needs a' >= 1).
 *
 * KL(Gamma(a, scale lam) || Gamma(alpha, rate beta)) =
 *   (a - alpha) psi(a) - lnGamma(a) + lnGamma(alpha) - alpha ln(beta lam) + a beta lam - a.
 * Scalars are double; the array kernels (beta = 1) are what a posterior family calls. */
#ifndef DATM_GAMMA_RSVI_H
#define DATM_GAMMA_RSVI_H

#include <stdint.h>

#include "rand/rand.h"

#define DATM_RSVI_MAX_BOOST 16
#define DATM_RSVI_NOISE_DIM(B) (1 + (B))

/* h(eps, a) (a > 1/3) and, when non-NULL, dh/da and dh/deps. Returns 0 where
 * 1 + eps / sqrt(9a - 3) <= 0 (outside the proposal's support). */
double datm_rsvi_h(double eps, double a, double *dh_da, double *dh_deps);
/* 1 if the Marsaglia-Tsang test accepts eps for shape a (>= 1) with log_u = ln U(0,1). */
int    datm_rsvi_accept(double eps, double a, double log_u);
/* An accepted eps for Gamma(a, 1), a >= 1, rounded to float before the test (so the stored
 * float noise is exactly an accepted value). *n_proposals (may be NULL) gets the count. */
float  datm_rsvi_draw_eps(datm_rng *r, double a, int *n_proposals);
/* The noise of one unit: out[0] = eps accepted for alpha + boost, out[1..boost] = u_i. */
void   datm_rsvi_draw_noise(datm_rng *r, double alpha, int boost, float *out);
/* z = lam h(eps, alpha + B) prod u_i^(1/(alpha+i-1)) and its partial derivatives (may be
 * NULL). ln z is returned in *log_z when non-NULL (it does not underflow for tiny alpha). */
double datm_rsvi_sample(double alpha, double lam, int boost, const float *noise,
                        double *dz_dalpha, double *dz_dlam, double *log_z);
/* d/da ln pi(eps; a): the score of the accepted eps's density at the boosted shape a. */
double datm_rsvi_score(double eps, double a);

/* KL(Gamma(a, scale lam) || Gamma(alpha, rate beta)); derivatives optional (NULL). */
double datm_gamma_gamma_kl(double a, double lam, double alpha, double beta, double *da,
                           double *dlam, double *dalpha, double *dbeta);

/* Array kernels over n units, noise (n, 1 + boost); z floored at z_min (derivatives 0 there).
 * dz_dk, dz_dlam may be NULL. */
void datm_rsvi_sample_f32(int64_t n, int boost, double z_min, const float *k, const float *lam,
                          const float *noise, float *z, float *dz_dk, float *dz_dlam);
void datm_rsvi_sample_f64(int64_t n, int boost, double z_min, const double *k,
                          const double *lam, const float *noise, double *z, double *dz_dk,
                          double *dz_dlam);
/* KL to Gamma(alpha, rate 1) per unit; dk, dlam, dalpha may be NULL. */
void datm_gamma_kl_f32(int64_t n, const float *k, const float *lam, const float *alpha,
                       float *kl, float *dk, float *dlam, float *dalpha);
void datm_gamma_kl_f64(int64_t n, const double *k, const double *lam, const double *alpha,
                       double *kl, double *dk, double *dlam, double *dalpha);
/* E[z] = k lam. */
void datm_gamma_mean_f32(int64_t n, const float *k, const float *lam, float *mean);
void datm_gamma_mean_f64(int64_t n, const double *k, const double *lam, double *mean);

#endif
