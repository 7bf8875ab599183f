/* engine/nn/mlp_head.h: the feature map of supervised DATM from the per-layer document
 * features theta(1..L) to the input of the Bayesian softmax (paper section III):
 *   t(l) = (transform(theta(l)) - shift) * scale       (see below; the paper uses theta as is)
 *   u(l) = softplus(t(l) W1(l) + b1(l)), W1(l) (K_l, K_l)   eq. (eq:Wm), g_1^(l); or u = t
 *   s    = [u(1), ..., u(L)]                            eqs. (fearure_fusion[_nonlinear])
 *   h_1  = softplus(s W_2 + b_2), ..., h_H = softplus(h_{H-1} W_{H+1} + b_{H+1})   g_2
 * sDATM-L: no g_1 and no hidden layers (out = s); sDATM-N: g_1 on, hidden widths a1 = 400,
 * a2 = 200 (eq. eq:Wm). The MLP weights are point estimates (the paper's W_m).
 *
 * transform: theta's scale follows the document length (Phi's columns sum to 1, so
 * sum_k theta(1)_k ~ the token count: ~26,000 for an MNIST image), which saturates a softmax
 * fed with raw theta; log1p(theta) or the per-layer proportions theta / sum_k theta remove it.
 * All three are differentiable, so the label term still reaches theta. shift and scale (S
 * each) standardise the transformed features (mean 0, sd 1 over a set of documents, set by
 * datm_mlp_head_set_norm; identity until then): the linear head's SGD is badly conditioned
 * when every feature carries a large common offset (log1p theta ~ 4.7 on MNIST). They are
 * constants: views of the block (so they are saved with the head) whose gradient is 0.
 *
 * Parameters are views "<prefix>.g1_W<l>/g1_b<l>", "<prefix>.g2_W<j>/g2_b<j>" and the
 * constants "<prefix>.norm_shift/norm_scale/norm_set" of the model's datm_params. f32 and f64 come from one source (mlp_head_impl.h). Letters: B batch rows,
 * L theta layers, K_l layer widths, S = sum_l K_l, H hidden layers, O = output width. */
#ifndef DATM_MLP_HEAD_H
#define DATM_MLP_HEAD_H

#include <stdint.h>

#include "core/core.h"
#include "nn/nn.h"
#include "rand/rand.h"

#define DATM_MLP_MAX_HIDDEN 4

typedef enum {
    DATM_FEAT_RAW = 0,    /* t = theta (the paper's equations) */
    DATM_FEAT_LOG1P,      /* t = log(1 + theta) */
    DATM_FEAT_PROP,       /* t = theta / sum_k theta (per layer and document) */
    DATM_FEAT_COUNT_
} datm_feat_transform;
/* "raw" | "log1p" | "prop" -> enum, -1 if unknown. */
int datm_feat_transform_parse(const char *s);
const char *datm_feat_transform_name(int t);

typedef struct datm_mlp_head {
    int      L;
    int64_t  k[DATM_MAX_LAYERS];        /* K_l */
    int64_t  k_off[DATM_MAX_LAYERS];    /* column of u(l) inside s */
    int64_t  S;                             /* sum K_l */
    int      transform;                     /* datm_feat_transform */
    int      per_layer;                     /* g_1 maps on/off */
    int      H;                             /* hidden layers of g_2 */
    int64_t  a[DATM_MLP_MAX_HIDDEN];        /* their widths */
    int64_t  out_dim;                       /* O = a[H-1], or S when H == 0 */
    int64_t  o_w1[DATM_MAX_LAYERS], o_b1[DATM_MAX_LAYERS];   /* block offsets */
    int64_t  o_w[DATM_MLP_MAX_HIDDEN], o_b[DATM_MLP_MAX_HIDDEN];
    int      v_w1[DATM_MAX_LAYERS], v_b1[DATM_MAX_LAYERS];   /* view indices */
    int      v_w[DATM_MLP_MAX_HIDDEN], v_b[DATM_MLP_MAX_HIDDEN];
    int      v_shift, v_scale, v_norm_set;          /* constants: (1, S), (1, S), (1, 1) */
    int64_t  o_shift, o_scale, o_norm_set;
} datm_mlp_head;

/* Declares the views (before datm_params_alloc). */
int  datm_mlp_head_add_params(datm_mlp_head *h, datm_params *p, const char *prefix, int L,
                              const int64_t *k, int transform, int per_layer, int H,
                              const int64_t *a, datm_error *err);
/* W ~ N(0, 1/n_in) (LeCun normal), b = 0; shift 0, scale 1 (not yet set). */
void datm_mlp_head_init_values(const datm_mlp_head *h, datm_params *p, datm_rng *rng);
/* shift = mean, scale = 1 / sd of transform(theta) over n documents (theta[l] (n, K_l)), the
 * sd floored at sd_floor times the median sd of its layer's features (1 when that median is
 * 0); marks the head's norm as set. sd_floor 0: the old floor, 1e-6 of the
 * mean's scale, under which a feature that does not vary in those documents (a topic not yet
 * used) gets a scale up to 1e12 and, once it moves, saturates the head (see sdatm.c). */
void datm_mlp_head_set_norm(const datm_mlp_head *h, float *block, const float *const *theta,
                            int64_t n, double sd_floor);
static inline int datm_mlp_head_norm_is_set(const datm_mlp_head *h, const float *block)
{
    return block[h->o_norm_set] != 0.0f;
}

/* Elements of the forward cache and of the backward work space for a batch of B rows. */
int64_t datm_mlp_head_cache_len(const datm_mlp_head *h, int64_t B);
int64_t datm_mlp_head_work_len(const datm_mlp_head *h, int64_t B);

/* theta[l] (B, K_l) row-major. Fills cache; returns the output (B, O) inside the cache. */
const float  *datm_mlp_head_forward_f32(const datm_mlp_head *h, const float *block, int64_t B,
                                        const float *const *theta, float *cache);
const double *datm_mlp_head_forward_f64(const datm_mlp_head *h, const double *block, int64_t B,
                                        const double *const *theta, double *cache);

/* Backward for upstream dout (B, O): the head's gradient views in gblock are OVERWRITTEN
 * (the constants' with 0);
 * dtheta[l] (B, K_l) = d/dtheta(l) + beta dtheta[l] (dtheta NULL: not needed). */
void datm_mlp_head_backward_f32(const datm_mlp_head *h, const float *block, float *gblock,
                                int64_t B, const float *const *theta, const float *cache,
                                const float *dout, float *work, float *const *dtheta,
                                float beta);
void datm_mlp_head_backward_f64(const datm_mlp_head *h, const double *block, double *gblock,
                                int64_t B, const double *const *theta, const double *cache,
                                const double *dout, double *work, double *const *dtheta,
                                double beta);

#endif
