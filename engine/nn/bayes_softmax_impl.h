/* engine/nn/bayes_softmax_impl.h: the body of the Bayesian softmax head, included twice by
 * bayes_softmax.c with REAL = float / double and SFX = f32 / f64 (one source, two precisions;
 * the f64 one is what the gradient checks run). Not a public header. */
#ifndef REAL
#error "define REAL, SFX, SOFTPLUS, SIGMOID, EXPR, LOGR, TINY before including"
#endif

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

void FN(datm_bsm_weights)(const datm_bsm *h, const REAL *block, const REAL *eps, REAL *W)
{
    const REAL *mu = block + h->o_mu, *rho = block + h->o_rho;
    const int64_t n = h->R * h->C;
    if (!eps) {
        for (int64_t i = 0; i < n; i++) W[i] = mu[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) W[i] = mu[i] + SOFTPLUS(rho[i]) * eps[i];
}

void FN(datm_bsm_forward)(const datm_bsm *h, int64_t B, const REAL *S, const REAL *W, REAL *P)
{
    const int64_t C = h->C;
    FN(datm_dense_forward)(B, h->D, C, S, W, h->bias ? W + h->D * C : NULL, P);
    #pragma omp parallel for schedule(static) if (B * C > 4096)
    for (int64_t n = 0; n < B; n++) {
        REAL *z = P + n * C, mx = z[0], s = 0;
        for (int64_t c = 1; c < C; c++) mx = z[c] > mx ? z[c] : mx;
        for (int64_t c = 0; c < C; c++) { z[c] = EXPR(z[c] - mx); s += z[c]; }
        for (int64_t c = 0; c < C; c++) z[c] /= s;
    }
}

double FN(datm_bsm_nll)(const datm_bsm *h, int64_t B, const REAL *P, const int32_t *y)
{
    double s = 0;
    for (int64_t n = 0; n < B; n++) {
        REAL p = P[n * h->C + y[n]];
        s -= (double)LOGR(p > TINY ? p : TINY);
    }
    return s;
}

void FN(datm_bsm_backward)(const datm_bsm *h, int64_t B, const REAL *block, REAL *gblock,
                           const REAL *S, const REAL *eps, const REAL *W, const REAL *P,
                           const int32_t *y, double scale, REAL *work, REAL *dS, REAL dS_beta)
{
    const int64_t C = h->C, D = h->D, RC = h->R * C;
    REAL *dZ = work, *dW = work + B * C;   /* (B, C), (R, C) */
    for (int64_t n = 0; n < B; n++)
        for (int64_t c = 0; c < C; c++)
            dZ[n * C + c] = (REAL)(scale * ((double)P[n * C + c] - (c == y[n])));
    /* dW[0:D] = S^T dZ, dW[D] = colsum dZ; dS = dZ W[0:D]^T + beta dS */
    FN(datm_dense_backward)(B, D, C, S, W, dZ, dW, h->bias ? dW + D * C : NULL, dS, dS_beta);
    REAL *gmu = gblock + h->o_mu, *grho = gblock + h->o_rho;
    const REAL *rho = block + h->o_rho;
    for (int64_t i = 0; i < RC; i++) {
        gmu[i] = dW[i];
        grho[i] = eps ? dW[i] * eps[i] * SIGMOID(rho[i]) : (REAL)0;
    }
}

double FN(datm_bsm_kl)(const datm_bsm *h, const REAL *block, REAL *gblock, double scale)
{
    const REAL *mu = block + h->o_mu, *rho = block + h->o_rho;
    const int64_t n = h->R * h->C;
    double kl = 0;
    for (int64_t i = 0; i < n; i++) {
        double s = (double)SOFTPLUS(rho[i]);
        if (s < 1e-30) s = 1e-30;
        double m = (double)mu[i];
        kl += 0.5 * (m * m + s * s - 1.0) - log(s);
        if (gblock) {
            /* d/dsigma = sigma - 1/sigma; dsigma/drho = sigmoid(rho) */
            double sg = (double)SIGMOID(rho[i]);
            gblock[h->o_mu + i] += (REAL)(scale * m);
            gblock[h->o_rho + i] += (REAL)(scale * (s * sg - sg / s));
        }
    }
    return kl;
}

#undef FN
#undef CAT
#undef CAT_
