/* engine/dist/weibull.c: Weibull reparameterisation, mean, and the analytic KL to a gamma
 * distribution with its derivatives (paper eq. Gamma-Weibull-KL). Reference scalar code in
 * double; the array kernels loop over it (the encoder's fast path lives in engine/encoder). */
#include <math.h>

#include "dist/weibull.h"
#include "math/math.h"

double datm_weibull_reparam(double k, double lambda, double u, double *dtheta_dk,
                            double *dtheta_dlambda)
{
    double t = -log1p(-u);                 /* Exp(1) variate, > 0 for u in (0,1) */
    double lt = log(t);
    double theta = lambda * exp(lt / k);
    if (dtheta_dk) *dtheta_dk = -theta * lt / (k * k);
    if (dtheta_dlambda) *dtheta_dlambda = exp(lt / k);
    return theta;
}

double datm_weibull_mean(double k, double lambda)
{
    return lambda * exp(lgamma(1.0 + 1.0 / k));
}

double datm_weibull_gamma_kl(double k, double lambda, double alpha, double beta, double *dk,
                             double *dlambda, double *dalpha, double *dbeta)
{
    const double eg = DATM_EULER_GAMMA;
    double ik = 1.0 / k;
    double g = exp(lgamma(1.0 + ik));      /* Gamma(1 + 1/k) */
    double ll = log(lambda), lb = log(beta);
    double kl = -alpha * ll + eg * alpha * ik + log(k) + beta * lambda * g - eg - 1.0
                - alpha * lb + lgamma(alpha);
    if (dk) *dk = ik - eg * alpha * ik * ik - beta * lambda * g * datm_digamma(1.0 + ik) * ik * ik;
    if (dlambda) *dlambda = -alpha / lambda + beta * g;
    if (dalpha) *dalpha = -ll + eg * ik - lb + datm_digamma(alpha);
    if (dbeta) *dbeta = -alpha / beta + lambda * g;
    return kl;
}

void datm_weibull_reparam_f64(int64_t n, const double *k, const double *lam, const float *u,
                              double *theta, double *dth_dk, double *dth_dlam)
{
    for (int64_t i = 0; i < n; i++) {
        double a, b;
        theta[i] = datm_weibull_reparam(k[i], lam[i], u[i], &a, &b);
        if (dth_dk) dth_dk[i] = a;
        if (dth_dlam) dth_dlam[i] = b;
    }
}

void datm_weibull_reparam_f32(int64_t n, const float *k, const float *lam, const float *u,
                              float *theta, float *dth_dk, float *dth_dlam)
{
    for (int64_t i = 0; i < n; i++) {
        double a, b;
        theta[i] = (float)datm_weibull_reparam(k[i], lam[i], u[i], &a, &b);
        if (dth_dk) dth_dk[i] = (float)a;
        if (dth_dlam) dth_dlam[i] = (float)b;
    }
}

void datm_weibull_kl_f64(int64_t n, const double *k, const double *lam, const double *alpha,
                         double *kl, double *dk, double *dlam, double *dalpha)
{
    for (int64_t i = 0; i < n; i++) {
        double a, b, c;
        kl[i] = datm_weibull_gamma_kl(k[i], lam[i], alpha[i], 1.0, &a, &b, &c, NULL);
        if (dk) dk[i] = a;
        if (dlam) dlam[i] = b;
        if (dalpha) dalpha[i] = c;
    }
}

void datm_weibull_kl_f32(int64_t n, const float *k, const float *lam, const float *alpha,
                         float *kl, float *dk, float *dlam, float *dalpha)
{
    for (int64_t i = 0; i < n; i++) {
        double a, b, c;
        kl[i] = (float)datm_weibull_gamma_kl(k[i], lam[i], alpha[i], 1.0, &a, &b, &c, NULL);
        if (dk) dk[i] = (float)a;
        if (dlam) dlam[i] = (float)b;
        if (dalpha) dalpha[i] = (float)c;
    }
}

void datm_weibull_mean_f32(int64_t n, const float *k, const float *lam, float *mean)
{
    for (int64_t i = 0; i < n; i++) mean[i] = (float)datm_weibull_mean(k[i], lam[i]);
}

void datm_weibull_mean_f64(int64_t n, const double *k, const double *lam, double *mean)
{
    for (int64_t i = 0; i < n; i++) mean[i] = datm_weibull_mean(k[i], lam[i]);
}
