/* models/whai.h: WHAI's state and contract functions, for the variants that are WHAI with
 * one part swapped (iwhai: no downward term; ghai: another posterior family; ...). A variant
 * file fills its own datm_model_ops with these functions and its own create, which calls
 * whai_create_variant() with its overrides. Not a variant itself; whai.c is. */
#ifndef DATM_MODELS_WHAI_H
#define DATM_MODELS_WHAI_H

#include "decoder/decoder.h"
#include "encoder/encoder.h"
#include "pipeline/model.h"

/* The WHAI schema (model: section); variants may reuse it as their own. */
extern const datm_param_schema datm_whai_schema[];
/* WHAI's own table (layerwise's per-stage network is a plain WHAI model). */
extern const datm_model_ops datm_model_whai;

/* Optional extra loss on theta for supervised variants (sdatm): called in step 1 of each
 * TRAINING iteration (not the evaluation chain) between the encoder's forward and backward.
 * It reads ws->theta[l] (B, K_l), sets *dtheta to its d(extra loss)/d theta(l) arrays
 * (1-based, (B, K_l); NULL: no gradient this time) and *loss to the extra loss per document,
 * which whai adds to the reported loss. The variant sets whai_model.extra after creation. */
typedef int (*whai_extra_fn)(void *user, const datm_batch *b, const datm_train_ctx *ctx,
                             const datm_encoder_ws *ws, const float *const **dtheta,
                             double *loss, datm_error *err);

/* One copy of everything Algorithm 1 updates: encoder weights + Adam, decoder (Phi, M, t;
 * with learn_r also r and M_r). */
typedef struct whai_chain {
    float          *params;      /* (enc->params.size) encoder weights */
    float          *grad;        /* (enc->params.size) */
    datm_adam       adam;
    datm_gbn       *gbn;
    datm_gbn_stats *stats;
} whai_chain;

/* Optional hook of step 3 of an iteration (layerwise: a new top layer's M_k and M_r from the
 * first mini-batch): called for every chain (training and evaluation copies) after the
 * upward augmentation has filled c->stats and before the TLASGR step, with rho = N / B. */
typedef int (*whai_pre_tlasgr_fn)(void *user, whai_chain *c, double rho, datm_error *err);

typedef struct whai_model {
    datm_model       base;
    int              L;
    int64_t          K[DATM_MAX_LAYERS + 1];   /* K[0] = V */
    int64_t          N, B, bpe;                    /* training docs, batch size, batches/epoch */
    datm_encoder    *enc;                          /* layout + options (weights in chain) */
    whai_chain       ch;                           /* the training chain */
    datm_encoder_ws *ws;                           /* training workspace (B docs) */
    double          *theta_d[DATM_MAX_LAYERS + 1];   /* (B, K_l) theta for augmentation */
    const datm_csr  *train;                        /* borrowed (evaluation chain batches) */
    /* configuration */
    double           kl_weight[DATM_MAX_LAYERS + 1];        /* final weights w_l */
    double           kl_weight_start[DATM_MAX_LAYERS + 1];  /* before kl_ramp[0] */
    int64_t          kl_ramp[2];                                /* epochs [e0, e1] */
    int64_t          kl_warmup_epochs;
    int              phi_fixed;                    /* no TLASGR: encoder against fixed Phi */
    int64_t          iteration;                    /* last training iteration (KL schedule) */
    datm_aug_mode    count_mode;
    int              eval_chain;                   /* eval_globals == chain */
    int64_t          eval_thin;
    int              eval_theta_sample;            /* 1: one encoder draw per evaluation draw; 0: mean */
    int64_t          encoder_steps;                /* Adam steps per mini-batch (paper: 1) */
    int              aug_mean;                     /* augmentation from the mean theta */
    int64_t          aug_samples;                  /* encoder samples augmented per batch */
    int64_t          aug_burn, aug_collect;        /* Gibbs refinement sweeps (0: off) */
    datm_gbn_chain  *gchain;                       /* (B docs) scratch of the refinement */
    double           input_keep;                   /* encoder-step input thinning (1: off) */
    float           *in_val;                       /* (in_cap) thinned counts of a batch */
    int64_t          in_cap;
    whai_extra_fn    extra;                        /* NULL, or the supervised hook above */
    void            *extra_user;
    whai_pre_tlasgr_fn pre_tlasgr;                 /* NULL, or the hook above */
    void            *pre_tlasgr_user;
    /* learn_r: the decoder has r (K_L), r ~ Gam(gamma0/K_L, 1/c0) learnt by TLASGR (paper eq.
     * r_update), and the encoder's top KL prior is Gamma(r, 1); else Gamma(top_shape, 1) */
    int              learn_r;
    float           *r_f;                          /* (K_L) float copy of r, learn_r only */
} whai_model;

/* What a variant changes; zero-initialised = plain WHAI from the spec. */
typedef struct whai_variant {
    const datm_model_ops        *ops;       /* the variant's table (goes into base.ops) */
    int                          no_downward;   /* 1: force opts.downward = 0 (IWHAI) */
    const datm_posterior_family *family;    /* non-NULL: replaces the Weibull family */
    int                          own_iteration; /* 1: trains without whai_train_batch (wai),
                                                   so WHAI's augmentation options are refused */
} whai_variant;

int  whai_create_variant(const datm_config *cfg, const datm_run_info *info,
                         const whai_variant *v, datm_model **out, datm_error *err);
/* KL weights klw[0..L] of training iteration it (1-based; klw[0] = 0): kl_weight_start until
 * epoch kl_ramp_epochs[0], linear to kl_weight at kl_ramp_epochs[1], times the warm-up ramp
 * from 0 over kl_warmup_epochs. Every WHAI-based variant should use this schedule. */
void whai_kl_weights(const whai_model *m, int64_t it, double *klw);

/* One iteration of Algorithm 1 (and the training statistics) on the mini-batch b; with
 * learn_r also the r step. Variants built on WHAI (sdatm, layerwise) call it for training. */
int  whai_train_batch(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                      datm_train_stats *st, datm_error *err);
int  whai_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                     datm_error *err);
int  whai_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                    datm_error *err);
void whai_eval_end(datm_model *m, void *state);
int  whai_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                datm_theta *out, datm_error *err);
int  whai_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                  int64_t *cols);
int  whai_n_layers(const datm_model *m);
int  whai_save(const datm_model *m, struct datm_h5 *g, datm_error *err);
int  whai_load(datm_model *m, struct datm_h5 *g, datm_error *err);

/* The ops every variant that is WHAI with a different encoder or schema shares; a variant's
 * ops are { WHAI_COMMON_OPS, .name = ..., .summary = ..., .schema = ..., .create = ... }. */
#define WHAI_COMMON_OPS                                                                     \
    .api_version = DATM_MODEL_API_VERSION, .train_batch = whai_train_batch,                 \
    .eval_begin = whai_eval_begin, .eval_step = whai_eval_step, .eval_end = whai_eval_end,  \
    .infer = whai_infer, .predict = NULL, .get_phi = whai_get_phi,                          \
    .n_layers = whai_n_layers, .save = whai_save, .load = whai_load,                        \
    .destroy = whai_destroy
void whai_destroy(datm_model *m);

#endif
