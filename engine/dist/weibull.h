/* engine/dist/weibull.h: the Weibull variational posterior of WHAI (paper sec. II-B).
 *
 * Weibull(k, lambda): density k/lambda^k x^(k-1) exp(-(x/lambda)^k), shape k, scale lambda.
 * - reparameterised sample theta = lambda (-log(1-u))^(1/k), u ~ U(0,1), and its partial
 *   derivatives d theta/dk = -theta log(-log(1-u)) / k^2, d theta/d lambda = theta / lambda;
 * - the analytic KL to Gamma(alpha, rate beta), paper eq. (Gamma-Weibull-KL):
 *     KL = -alpha ln lambda + gamma alpha / k + ln k + beta lambda Gamma(1+1/k) - gamma - 1
 *          - alpha ln beta + ln Gamma(alpha)            (gamma = Euler-Mascheroni)
 *   with its derivatives w.r.t. k, lambda, alpha (and beta);
 * - the mean lambda Gamma(1 + 1/k).
 * Scalar functions are double; the array kernels (float and double) are what the encoder's
 * hot loops call. Callers clamp k (WHAI: [0.1, 10]) and floor lambda and alpha first. */
#ifndef DATM_WEIBULL_H
#define DATM_WEIBULL_H

#include <stdint.h>

#define DATM_EULER_GAMMA 0.57721566490153286061

/* theta for uniform u in (0,1); the derivatives are written when the pointers are non-NULL. */
double datm_weibull_reparam(double k, double lambda, double u, double *dtheta_dk,
                            double *dtheta_dlambda);
double datm_weibull_mean(double k, double lambda);
/* KL(Weibull(k, lambda) || Gamma(alpha, rate beta)); derivatives optional (NULL). */
double datm_weibull_gamma_kl(double k, double lambda, double alpha, double beta,
                             double *dk, double *dlambda, double *dalpha, double *dbeta);

/* Array kernels over n units (rate beta = 1, as in WHAI). dth_dk, dth_dlam may be NULL.
 * kl_* : alpha (n) per unit; dk, dlam, dalpha may be NULL. */
void datm_weibull_reparam_f32(int64_t n, const float *k, const float *lam, const float *u,
                              float *theta, float *dth_dk, float *dth_dlam);
void datm_weibull_reparam_f64(int64_t n, const double *k, const double *lam, const float *u,
                              double *theta, double *dth_dk, double *dth_dlam);
void datm_weibull_kl_f32(int64_t n, const float *k, const float *lam, const float *alpha,
                         float *kl, float *dk, float *dlam, float *dalpha);
void datm_weibull_kl_f64(int64_t n, const double *k, const double *lam, const double *alpha,
                         double *kl, double *dk, double *dlam, double *dalpha);
void datm_weibull_mean_f32(int64_t n, const float *k, const float *lam, float *mean);
void datm_weibull_mean_f64(int64_t n, const double *k, const double *lam, double *mean);

#endif
