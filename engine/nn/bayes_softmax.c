/* engine/nn/bayes_softmax.c: the Bayesian softmax head of sDATM (paper section III); see
 * bayes_softmax.h. The numeric body is bayes_softmax_impl.h, instantiated in f32 and f64. */
#include "nn/bayes_softmax.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "math/math.h"

int datm_bsm_add_params(datm_bsm *h, datm_params *p, const char *prefix, int64_t D, int64_t C,
                        int bias, datm_error *err)
{
    if (D < 1 || C < 2)
        return datm_error_set(err, DATM_E_INVALID, "bayes softmax '%s': need D >= 1 and C >= 2 "
                              "(got D %lld, C %lld)", prefix, (long long)D, (long long)C);
    h->D = D;
    h->C = C;
    h->bias = bias ? 1 : 0;
    h->R = D + h->bias;
    char name[DATM_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.mu", prefix);
    h->v_mu = datm_params_add(p, name, h->R, C, err);
    if (h->v_mu < 0) return err ? err->code : DATM_E_INVALID;
    snprintf(name, sizeof name, "%s.rho", prefix);
    h->v_rho = datm_params_add(p, name, h->R, C, err);
    if (h->v_rho < 0) return err ? err->code : DATM_E_INVALID;
    h->o_mu = p->views[h->v_mu].offset;
    h->o_rho = p->views[h->v_rho].offset;
    return DATM_OK;
}

void datm_bsm_init_values(const datm_bsm *h, datm_params *p, datm_rng *rng, double mu_sd,
                          double sigma0)
{
    datm_params_fill_normal(p, h->v_mu, mu_sd, rng);
    if (h->bias) {
        float *mu = datm_params_value(p, h->v_mu);
        for (int64_t c = 0; c < h->C; c++) mu[h->D * h->C + c] = 0;
    }
    datm_params_fill_const(p, h->v_rho, log(expm1(sigma0)));   /* softplus^-1(sigma0) */
}

#define REAL float
#define SFX f32
#define SOFTPLUS datm_softplusf
#define SIGMOID datm_sigmoidf
#define EXPR expf
#define LOGR logf
#define TINY FLT_MIN
#include "nn/bayes_softmax_impl.h"
#undef REAL
#undef SFX
#undef SOFTPLUS
#undef SIGMOID
#undef EXPR
#undef LOGR
#undef TINY

#define REAL double
#define SFX f64
#define SOFTPLUS datm_softplus
#define SIGMOID datm_sigmoid
#define EXPR exp
#define LOGR log
#define TINY DBL_MIN
#include "nn/bayes_softmax_impl.h"
