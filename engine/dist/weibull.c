/* engine/dist/weibull.c: Weibull reparameterisation, mean, and the analytic KL to a gamma
 * distribution with its derivatives (paper eq. Gamma-Weibull-KL). The scalar double code is
 * the reference; the f64 array kernels loop over it; the f32 array kernels are the fast path
 * (vectorised float exp/log/lgamma/digamma of nn/vmath.h, an AVX2+FMA clone chosen at run
 * time), tested against the reference in tests/test_dist_weibull.c. */
#include <math.h>

#include "dist/weibull.h"
#include "math/math.h"
#include "nn/vmath.h"


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

void datm_weibull_mean_f64(int64_t n, const double *k, const double *lam, double *mean)
{
    for (int64_t i = 0; i < n; i++) mean[i] = datm_weibull_mean(k[i], lam[i]);
}

/* The float kernels below are long chains of dependent polynomial steps (C11 mode: no FMA
 * contraction), longer than the out-of-order window covers at 8 lanes; gcc's scheduling
 * before register allocation interleaves independent steps (the KL with derivatives ~20%
 * faster). The operations, and so the results, are the same. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("schedule-insns", "sched-pressure")
#endif

/* ---- fast float kernels ----
 * ln(1 - u) as datm_vlogf(1 - u): the noise u = (2j + 1) 2^-24 of datm_rng_uniform_f makes
 * 1 - u exact, and vlogf is accurate near 1 (z = m - 1 exact), so no log1p (and its
 * division) is needed; for rescaled noise (u_lo > 0) 1 - u rounds by at most 2^-24.
 * (the optional outputs are separate loops: a conditional store inside the loop keeps gcc
 * from vectorising it) */

/* The sample takes entries i and i + n/2 together through the _x2 forms of nn/vmath.h (two
 * chains of three transcendental functions in flight; the scheduling above does not split
 * one chain): every entry gets the same operations as alone (tests/test_dist_weibull_x2.c
 * checks it bit for bit against the one-entry form). */
DATM_VEC_CLONES
void datm_weibull_reparam_f32(int64_t n, const float *k, const float *lam, const float *u,
                              float *theta, float *dth_dk, float *dth_dlam)
{
    const int64_t h = n / 2, odd = n - 2 * h;
    if (dth_dk && dth_dlam) {
#pragma omp simd
        for (int64_t i = 0; i < h; i++) {
            const int64_t j = i + h;
            float l1, l2, lt1, lt2, e1, e2;   /* ln t, t = -ln(1 - u) ~ Exp(1) */
            datm_vlogf_x2(1.0f - u[i], 1.0f - u[j], &l1, &l2);
            datm_vlogf_x2(-l1, -l2, &lt1, &lt2);
            const float ik1 = 1.0f / k[i], ik2 = 1.0f / k[j];
            datm_vexpf_x2(lt1 * ik1, lt2 * ik2, &e1, &e2);   /* t^(1/k) */
            const float th1 = lam[i] * e1, th2 = lam[j] * e2;
            const float d1 = -th1 * lt1 * ik1 * ik1, d2 = -th2 * lt2 * ik2 * ik2;
            theta[i] = th1;
            theta[j] = th2;
            dth_dk[i] = d1;
            dth_dk[j] = d2;
            dth_dlam[i] = e1;
            dth_dlam[j] = e2;
        }
        for (int64_t i = n - odd; i < n; i++) {   /* n odd: the last entry alone */
            float lt = datm_vlogf(-datm_vlogf(1.0f - u[i]));
            float ik = 1.0f / k[i];
            float e = datm_vexpf(lt * ik);
            float th = lam[i] * e;
            theta[i] = th;
            dth_dk[i] = -th * lt * ik * ik;
            dth_dlam[i] = e;
        }
        return;
    }
#pragma omp simd
    for (int64_t i = 0; i < h; i++) {
        const int64_t j = i + h;
        float l1, l2, lt1, lt2, e1, e2;
        datm_vlogf_x2(1.0f - u[i], 1.0f - u[j], &l1, &l2);
        datm_vlogf_x2(-l1, -l2, &lt1, &lt2);
        datm_vexpf_x2(lt1 / k[i], lt2 / k[j], &e1, &e2);
        const float th1 = lam[i] * e1, th2 = lam[j] * e2;
        theta[i] = th1;
        theta[j] = th2;
    }
    for (int64_t i = n - odd; i < n; i++) {
        float lt = datm_vlogf(-datm_vlogf(1.0f - u[i]));
        theta[i] = lam[i] * datm_vexpf(lt / k[i]);
    }
    /* partial requests (rare): from the values just computed */
    if (dth_dk || dth_dlam)
        for (int64_t i = 0; i < n; i++) {
            float lt = datm_vlogf(-datm_vlogf(1.0f - u[i])), ik = 1.0f / k[i];
            if (dth_dk) dth_dk[i] = -theta[i] * lt * ik * ik;
            if (dth_dlam) dth_dlam[i] = datm_vexpf(lt * ik);
        }
}

DATM_VEC_CLONES
void datm_weibull_kl_f32(int64_t n, const float *k, const float *lam, const float *alpha,
                         float *kl, float *dk, float *dlam, float *dalpha)
{
    const float eg = (float)DATM_EULER_GAMMA;
    if (dk && dlam && dalpha) {
        /* entries i and i + n/2 together, the logarithms and the exponential of the two
         * through the _x2 forms (the operations of datm_vgamma_digammaf, datm_vlgamma_digammaf
         * and datm_vlogf on each entry: the same results; tests/test_dist_weibull_x2.c) */
        const int64_t h = n / 2;
#pragma omp simd
        for (int64_t i = 0; i < h; i++) {
            const int64_t j = i + h;
            const float ik1 = 1.0f / k[i], ik2 = 1.0f / k[j];
            const float a1 = alpha[i], a2 = alpha[j], l1 = lam[i], l2 = lam[j];
            /* Gamma(1 + 1/k), psi(1 + 1/k) */
            float z1, iz1, P1, iP1, S1, z2, iz2, P2, iP2, S2, lz1, lz2, ex1, ex2;
            datm_vshift8f(1.0f + ik1, &z1, &iz1, &P1, &iP1, &S1);
            datm_vshift8f(1.0f + ik2, &z2, &iz2, &P2, &iP2, &S2);
            datm_vlogf_x2(z1, z2, &lz1, &lz2);
            datm_vexpf_x2(datm_vstirlingf(z1, lz1, iz1), datm_vstirlingf(z2, lz2, iz2), &ex1, &ex2);
            const float g1 = ex1 * iP1, g2 = ex2 * iP2;
            const float pg1 = datm_vpsi_asymf(lz1, iz1) - S1, pg2 = datm_vpsi_asymf(lz2, iz2) - S2;
            /* lgamma(a), psi(a) */
            float za1, iza1, Pa1, iPa1, Sa1, za2, iza2, Pa2, iPa2, Sa2, lza1, lza2, lPa1, lPa2;
            datm_vshift8f(a1, &za1, &iza1, &Pa1, &iPa1, &Sa1);
            datm_vshift8f(a2, &za2, &iza2, &Pa2, &iPa2, &Sa2);
            datm_vlogf_x2(za1, za2, &lza1, &lza2);
            datm_vlogf_x2(Pa1, Pa2, &lPa1, &lPa2);
            const float lga1 = datm_vstirlingf(za1, lza1, iza1) - lPa1;
            const float lga2 = datm_vstirlingf(za2, lza2, iza2) - lPa2;
            const float pga1 = datm_vpsi_asymf(lza1, iza1) - Sa1;
            const float pga2 = datm_vpsi_asymf(lza2, iza2) - Sa2;
            float ll1, ll2, lk1, lk2;
            datm_vlogf_x2(l1, l2, &ll1, &ll2);
            datm_vlogf_x2(k[i], k[j], &lk1, &lk2);
            const float kl1 = -a1 * ll1 + eg * a1 * ik1 + lk1 + l1 * g1 - eg - 1.0f + lga1;
            const float kl2 = -a2 * ll2 + eg * a2 * ik2 + lk2 + l2 * g2 - eg - 1.0f + lga2;
            const float dk1 = ik1 - eg * a1 * ik1 * ik1 - l1 * g1 * pg1 * ik1 * ik1;
            const float dk2 = ik2 - eg * a2 * ik2 * ik2 - l2 * g2 * pg2 * ik2 * ik2;
            const float dl1 = -a1 / l1 + g1, dl2 = -a2 / l2 + g2;
            const float da1 = -ll1 + eg * ik1 + pga1, da2 = -ll2 + eg * ik2 + pga2;
            kl[i] = kl1;
            kl[j] = kl2;
            dk[i] = dk1;
            dk[j] = dk2;
            dlam[i] = dl1;
            dlam[j] = dl2;
            dalpha[i] = da1;
            dalpha[j] = da2;
        }
        for (int64_t i = 2 * h; i < n; i++) {   /* n odd: the last entry alone */
            float ik = 1.0f / k[i], a = alpha[i], l = lam[i];
            float g, pg, lga, pga;   /* Gamma(1 + 1/k), psi(1 + 1/k), lgamma(a), psi(a) */
            datm_vgamma_digammaf(1.0f + ik, &g, &pg);
            datm_vlgamma_digammaf(a, &lga, &pga);
            float ll = datm_vlogf(l);
            kl[i] = -a * ll + eg * a * ik + datm_vlogf(k[i]) + l * g - eg - 1.0f + lga;
            dk[i] = ik - eg * a * ik * ik - l * g * pg * ik * ik;
            dlam[i] = -a / l + g;
            dalpha[i] = -ll + eg * ik + pga;
        }
        return;
    }
#pragma omp simd
    for (int64_t i = 0; i < n; i++) {
        float ik = 1.0f / k[i], a = alpha[i], l = lam[i];
        float g = datm_vgammaf(1.0f + ik);
        kl[i] = -a * datm_vlogf(l) + eg * a * ik + datm_vlogf(k[i]) + l * g - eg - 1.0f +
                datm_vlgammaf(a);
    }
    if (dk || dlam || dalpha)
        for (int64_t i = 0; i < n; i++) {
            float ik = 1.0f / k[i], a = alpha[i], l = lam[i];
            float g = datm_vgammaf(1.0f + ik);
            if (dk) dk[i] = ik - eg * a * ik * ik - l * g * datm_vdigammaf(1.0f + ik) * ik * ik;
            if (dlam) dlam[i] = -a / l + g;
            if (dalpha) dalpha[i] = -datm_vlogf(l) + eg * ik + datm_vdigammaf(a);
        }
}

DATM_VEC_CLONES
void datm_weibull_mean_f32(int64_t n, const float *k, const float *lam, float *mean)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++) mean[i] = lam[i] * datm_vgammaf(1.0f + 1.0f / k[i]);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
