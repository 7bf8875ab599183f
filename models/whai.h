/* models/whai.h: WHAI's state and contract functions, for the variants that are WHAI with
 * one part swapped (iwhai: no downward term; ghai: another posterior family; ...). A variant
 * file fills its own datm_model_ops with these functions and its own create, which calls
 * whai_create_variant() with its overrides. Not a variant itself; whai.c is. */
#ifndef DATM_MODELS_WHAI_H
#define DATM_MODELS_WHAI_H

#include "datm_model.h"
#include "decoder/decoder.h"
#include "encoder/encoder.h"
#include "pipeline/model.h"
#include "pipeline/params.h"

/* aug_gibbs_burn's help, which a variant that adds to it (layerwise) extends */
#define WHAI_AUG_GIBBS_BURN_DOC                                                              \
    "semi-amortised augmentation: upward-downward Gibbs sweeps (c_n = 1, the WHAI model) "   \
    "started from the encoder's theta and discarded before the counts are collected "       \
    "(0 = off, paper Alg. 1). Not in the paper"

/* WHAI's model: keys, one row each (pipeline/params.h): the schema datm_whai_schema, which
 * the variants built on WHAI edit and extend (variant_schema.h; base rows first, in this
 * order), and the struct whai_params. */
#define WHAI_PARAMS(X) \
    X(layers, "layers", INT_LIST, "[128, 64, 32]", 1, 1e6, NULL, \
      "widths K_1..K_L from the bottom (topics over words) up") \
    X(hidden, "hidden", INT_LIST, "[]", 1, 1e6, NULL, \
      "encoder hidden widths H_l: [] = K_l (paper), else one per layer") \
    X(downward, "downward", BOOL, "true", DATM_NOB, NULL, \
      "add Phi(l+1) theta(l+1) to the Weibull shape (paper eq. posterior-completely; " \
      "false = IWHAI)") \
    X(shape_per_topic, "shape_per_topic", BOOL, "true", DATM_NOB, NULL, \
      "shape k from a K_l x K_l layer (paper); false: one shape per document (authors' code)") \
    X(lambda_is_mean, "lambda_is_mean", BOOL, "false", DATM_NOB, NULL, \
      "false: softplus output is the Weibull scale (paper); true: it is the mean, scale = " \
      "mean / Gamma(1 + 1/k) (PyDPM)") \
    X(k_min, "k_min", REAL, "0.1", 1e-6, 1e6, NULL, \
      "Weibull shape clamp, lower (code: 0.1)") \
    X(k_max, "k_max", REAL, "10", 1e-6, 1e6, NULL, \
      "Weibull shape clamp, upper (code: 10)") \
    X(lambda_min, "lambda_min", REAL, "1e-10", 1e-30, 1, NULL, \
      "floor of the Weibull scale") \
    X(u_lo, "u_lo", REAL, "0", 0, 1, NULL, \
      "noise u ~ U(u_lo, u_hi): (0, 1) paper; (0.2, 0.8) PyDPM") \
    X(u_hi, "u_hi", REAL, "1", 0, 1, NULL, \
      "noise range, upper end") \
    X(kl_weight, "kl_weight", REAL_LIST, "[]", 0, 1e6, NULL, \
      "KL weights w_l: [] = 1 (paper), one value for all layers, or one per layer " \
      "(reference codes: 0.05, or 0.1/0.01/0.001)") \
    X(top_shape, "top_shape", REAL, "1", 1e-6, 1e6, NULL, \
      "top-layer prior Gamma(top_shape, 1) (paper: r = 1; one TF derivative uses 0.01); " \
      "learn_r = true replaces it by Gamma(r, 1)") \
    X(learn_r, "learn_r", BOOL, "false", DATM_NOB, NULL, \
      "learn the top-layer shape r_k ~ Gam(gamma0 / K_L, 1 / c0) by TLASGR from the top-layer " \
      "CRT tables (paper eq. r_update); the top KL prior becomes Gamma(r, 1). false: fixed " \
      "top_shape (the paper's WHAI experiments, r = 1)") \
    X(gamma0, "gamma0", REAL, "1", 1e-12, 1e6, NULL, \
      "learn_r: r_k ~ Gam(gamma0 / K_L, 1 / c0): gamma0 (TLASGR code: 1)") \
    X(c0, "c0", REAL, "1", 1e-12, 1e6, NULL, \
      "learn_r: r_k ~ Gam(gamma0 / K_L, 1 / c0): c0 (TLASGR code: 1)") \
    X(r_init, "r_init", REAL, "1", 1e-12, 1e6, NULL, \
      "learn_r: r_k before the first TLASGR step (1 = WHAI's fixed r)") \
    X(kl_weight_start, "kl_weight_start", REAL_LIST, "[]", 0, 1e6, NULL, \
      "KL weights before kl_ramp_epochs[0] ([] = kl_weight: no schedule); they move linearly to " \
      "kl_weight between the two epochs of kl_ramp_epochs") \
    X(kl_ramp_epochs, "kl_ramp_epochs", INT_LIST, "[0, 0]", 0, 1e6, NULL, \
      "[e0, e1]: epochs between which the KL weights go from kl_weight_start to kl_weight") \
    X(kl_warmup_epochs, "kl_warmup_epochs", INT, "0", 0, 1e6, NULL, \
      "ramp the KL weights linearly from 0 to w_l over this many epochs (0 = off)") \
    X(lr, "lr", REAL, "1e-3", 1e-12, 10, NULL, \
      "Adam learning rate of the encoder") \
    X(beta1, "beta1", REAL, "0.9", 0, 0.999999, NULL, \
      "Adam beta1") \
    X(beta2, "beta2", REAL, "0.999", 0, 0.99999999, NULL, \
      "Adam beta2") \
    X(adam_eps, "adam_eps", REAL, "1e-8", 1e-20, 1, NULL, \
      "Adam epsilon") \
    X(grad_clip, "grad_clip", REAL, "0", 0, 1e12, NULL, \
      "element-wise gradient clip (0 = none; rGBN-RNN uses 1)") \
    X(grad_clip_rms, "grad_clip_rms", REAL, "0", 0, 1e6, NULL, \
      "element-wise gradient clip relative to Adam's history (not in the paper; 0 = none): " \
      "each entry is clipped to this many times the root of its bias-corrected second moment " \
      "before the step, so a sudden run of gradients far above their history cannot move " \
      "every weight by several steps at once while the second moment catches up") \
    X(init_sd, "init_sd", REAL, "0", 0, 10, NULL, \
      "encoder weights ~ N(0, init_sd^2); 0 = Xavier sqrt(2 / (fan_in + fan_out))") \
    X(init_bias, "init_bias", REAL, "0", -10, 10, NULL, \
      "initial encoder biases") \
    X(eta, "eta", REAL_LIST, "[]", 1e-12, 1e6, NULL, \
      "Dirichlet eta(l) of the Phi(l) columns: [] = 1/K_l (paper), one value, or one per layer") \
    X(phi_init_lo, "phi_init_lo", REAL, "0.05", 0, 1, NULL, \
      "Phi init: entries lo + (1 - lo) U(0,1), columns normalised (docs/reference.md 1.1)") \
    X(phi_floor, "phi_floor", REAL, "1e-10", 0, 1e-3, NULL, \
      "Phi entries are clamped to >= phi_floor before renormalising") \
    X(phi_init, "phi_init", STRING, "", 0, 0, NULL, \
      "warm start: read Phi(l) from /model/phi_<l> of this result (or checkpoint) .h5 (layers " \
      "whose shape matches; \"\" = random init). Not in the paper") \
    X(phi_fixed, "phi_fixed", BOOL, "false", 0, 0, NULL, \
      "keep Phi fixed (no augmentation, no TLASGR): train the encoder against given topics") \
    X(eps0, "eps0", REAL, "1", 1e-12, 1e6, NULL, \
      "TLASGR step eps_t = eps0 ((tau0 + t)/(tau0 + 1))^-kappa0") \
    X(tau0, "tau0", REAL, "20", 0, 1e12, NULL, \
      "eps_t schedule: tau0") \
    X(kappa0, "kappa0", REAL, "0.7", 0, 1, NULL, \
      "eps_t schedule: kappa0") \
    X(epsm0, "epsm0", REAL, "0.5", 0, 1, NULL, \
      "eps'_t of the annealed M (paper eq. update_M), same form; MATLAB TLASGR: 0.5, 20, 0.7; " \
      "paper: eps'_t = eps_t (1, 20, 0.7)") \
    X(taum0, "taum0", REAL, "20", 0, 1e12, NULL, \
      "eps'_t schedule: tau") \
    X(kappam0, "kappam0", REAL, "0.7", 0, 1, NULL, \
      "eps'_t schedule: kappa") \
    X(m_floor, "m_floor", REAL, "1", 1e-12, 1e12, NULL, \
      "M_k >= m_floor, so empty topics do not get huge steps (docs/reference.md 1.4)") \
    X(count_mode, "count_mode", CHOICE, "sampled", DATM_NOB, "sampled|expected", \
      "augmented counts fed to TLASGR: sampled, or their expectations (docs/reference.md 1.8)") \
    X(encoder_steps, "encoder_steps", INT, "1", 1, 1000, NULL, \
      "Adam steps on the encoder per mini-batch before theta is sampled (paper: 1)") \
    X(aug_theta, "aug_theta", CHOICE, "sample", DATM_NOB, "sample|mean", \
      "theta fed to the upward augmentation: one encoder sample (paper Alg. 1) or its mean") \
    X(aug_samples, "aug_samples", INT, "1", 1, 1000, NULL, \
      "encoder samples of theta per document augmented per mini-batch; TLASGR gets their " \
      "average counts (paper Alg. 1: 1). Not in the paper") \
    X(aug_gibbs_burn, "aug_gibbs_burn", INT, "0", 0, 1000, NULL, WHAI_AUG_GIBBS_BURN_DOC) \
    X(aug_gibbs_collect, "aug_gibbs_collect", INT, "0", 0, 1000, NULL, \
      "with Gibbs refinement: sweeps whose augmented counts TLASGR averages (0 = off; needs " \
      "aug_samples = 1)") \
    X(enc_input_keep, "enc_input_keep", REAL, "1", 1e-6, 1, NULL, \
      "encoder training steps read a binomial thinning of each document (every token kept with " \
      "this probability) while the likelihood scores the whole document, so the encoder learns " \
      "to infer theta from part of a document, as at test time (heldout-docs protocol); still a " \
      "lower bound on ln p(x). 1 = off (paper Alg. 1). Not in the paper") \
    X(eval_globals, "eval_globals", CHOICE, "chain", DATM_NOB, "chain|fixed", \
      "chain: each evaluation draw advances a copy of the whole chain by eval_thin iterations, " \
      "averaging over Phi samples (paper: samples collected after burn-in); fixed: current " \
      "globals only") \
    X(eval_thin, "eval_thin", INT, "1", 1, 1e6, NULL, \
      "chain iterations per evaluation draw") \
    X(eval_theta, "eval_theta", CHOICE, "sample", DATM_NOB, "sample|mean", \
      "theta of an evaluation draw: one encoder sample (paper eq. perplexity) or the mean")
DATM_PARAMS_STRUCT(whai_params, WHAI_PARAMS)
/* Copies WHAI's keys of a validated model: section (of whai or of a variant built on it). */
void whai_params_get(const datm_config *c, whai_params *p);
/* Row indices: datm_whai_schema[WHAI_ROW_lr], and the same row of a variant's schema. */
#define WHAI_ROW_(field, ...) WHAI_ROW_##field,
enum { WHAI_PARAMS(WHAI_ROW_) WHAI_ROW_COUNT_ };
/* datm_whai_schema and WHAI's own table datm_model_whai (layerwise's per-stage network is a
 * plain WHAI model) are declared by include/datm_model.h. */

/* What a variant changes in WHAI is part of the plugin ABI, defined by include/datm_model.h:
 * - whai_variant (zero-initialised = plain WHAI from the spec): its ops table; no_downward
 *   (force opts.downward = 0, IWHAI); family (non-NULL replaces the Weibull family);
 *   own_iteration (1: trains without whai_train_batch (wai), so WHAI's augmentation options
 *   are refused); own_eval (1: the variant evaluates its own way (wai): WHAI's evaluation
 *   chain stays off); hooks;
 * - whai_hooks: functions that change WHAI's iteration, given at creation and fixed for the
 *   model's life; a NULL function keeps WHAI's own behaviour:
 *   extra (whai_extra_fn): an extra loss on theta for supervised variants (sdatm), called in
 *     step 1 of each TRAINING iteration (not the evaluation chain) between the encoder's
 *     forward and backward. It reads ws->theta[l] (B, K_l), sets *dtheta to its
 *     d(extra loss)/d theta(l) arrays (1-based, (B, K_l); NULL: no gradient this time) and
 *     *loss to the extra loss per document, which whai adds to the reported loss;
 *   pre_tlasgr (whai_pre_tlasgr_fn): step 3 of an iteration (layerwise: a new top layer's
 *     M_k and M_r from the first mini-batch), called for every chain (training and
 *     evaluation copies) after the upward augmentation has filled c->stats and before the
 *     TLASGR step, with rho = N / B; it reads c and changes it only through
 *     whai_chain_reset_top_m (below).
 * It also declares whai_create_variant and whai_check_variant (WHAI's rules on the options
 * alone, for a variant's check op), the contract functions whai_train_batch ...
 * whai_destroy, WHAI_COMMON_OPS (the ops every variant that is WHAI with a different encoder
 * or schema shares: { WHAI_COMMON_OPS, .name = ..., .summary = ..., .schema = ...,
 * .create = ... }) and the setters whai_set_n_train, whai_set_lr, whai_set_iteration. */

/* WHAI's iteration over a mini-batch cut into fixed chunks (train.reduce_chunks > 0, for
 * MPI ranks: engine/par/par.h; models/whai_chunks.c). */
typedef struct whai_chunks whai_chunks;

/* One copy of everything Algorithm 1 updates: encoder weights + Adam, decoder (Phi, M, t;
 * with learn_r also r and M_r). */
typedef struct whai_chain {
    float          *params;      /* (enc->params.size) encoder weights */
    float          *grad;        /* (enc->params.size) */
    datm_adam       adam;
    datm_gbn       *gbn;
    datm_gbn_stats *stats;
} whai_chain;

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
    whai_hooks       hooks;                        /* the variant's changes (above) */
    /* learn_r: the decoder has r (K_L), r ~ Gam(gamma0/K_L, 1/c0) learnt by TLASGR (paper eq.
     * r_update), and the encoder's top KL prior is Gamma(r, 1); else Gamma(top_shape, 1) */
    int              learn_r;
    float           *r_f;                          /* (K_L) float copy of r, learn_r only */
    whai_chunks     *chunks;                       /* NULL: the one-process reduction */
} whai_model;

/* Chunked iteration (models/whai_chunks.c): create refuses the options it does not support
 * (hooks, learn_r, several augmentation samples, Gibbs refinement, input thinning);
 * iterate does steps 1, 2 and the augmentation of Algorithm 1 with the counts of every rank
 * summed into c->stats, ready for the TLASGR step. */
int  whai_chunks_create(whai_model *m, int64_t C, const whai_variant *v, datm_error *err);
void whai_chunks_destroy(whai_chunks **k);
int  whai_chunks_iterate(whai_model *m, whai_chain *c, const datm_csr *X,
                         const int64_t *doc_ids, uint64_t seed, uint32_t purpose,
                         uint64_t step, const double *klw, datm_encoder_loss *el,
                         datm_error *err);

/* The state a variant built on WHAI may change after creation, each through one function
 * (a variant reads whai_model's scalar fields and, through the const views below, its
 * chain, but never writes either; tests/test_whai_contract.sh checks the variant files):
 * - whai_set_n_train: N, the training documents that TLASGR's rho = N / B and the KL terms
 *   count (sdatm holds validation documents out);
 * - whai_set_lr: the encoder's Adam step size (sdatm's cosine annealing);
 * - whai_set_encoder_params: the encoder's weights (size enc->params.size; sdatm restores
 *   its best validation state; wai after each of its own Adam steps);
 * - whai_set_adam: the encoder's Adam moments m, v (size enc->params.size) and step count t
 *   (wai's own Adam after each step; layerwise's moments remapped with the encoder);
 * - whai_set_iteration: the last training iteration, which drives the KL schedule
 *   (layerwise's next stage continues the previous one's);
 * - whai_replace_encoder: a new encoder of the same layout (takes ownership of e; the chain's
 *   weights and gradients become e's, Adam's moments stay: whai_set_adam sets them;
 *   layerwise's remapped encoder after pruning);
 * - whai_set_decoder: the whole decoder (Phi, phi_f, M, eta, r, M_r, gamma0, c0, the TLASGR
 *   step t and options) copied from src, of the same shape (sdatm restores its best state;
 *   layerwise's next stage carries the trained layers over through its unit map);
 * - whai_set_topics: Phi(l), l = 1..L, from float arrays (K_{l-1}, K_l) with columns summing
 *   to 1, and its float copy (wai's softmax topics, for WHAI's infer, evaluation and save);
 * - whai_chain_reset_top_m: for a pre_tlasgr hook, on the chain it is given: the top layer's
 *   preconditioner M_k and M_r set from this iteration's counts (paper eq. update_M with
 *   eps' = 1), as the first TLASGR step does for every layer (layerwise's new top layer).
 * (whai_set_n_train, whai_set_lr and whai_set_iteration are declared by include/datm_model.h.) */
void whai_set_encoder_params(whai_model *w, const float *params);
void whai_set_adam(whai_model *w, const float *m, const float *v, int64_t t);
int  whai_replace_encoder(whai_model *w, datm_encoder *e, datm_error *err);
void whai_set_decoder(whai_model *w, const datm_gbn *src);
void whai_set_topics(whai_model *w, const float *const *phi);
void whai_chain_reset_top_m(whai_chain *c, double rho);

/* What a variant reads of the training chain, as const views (the encoder's layout and
 * weights, their last gradient, Adam, the decoder); whai_is_training_chain tells a hook which
 * chain it was given (the training one or an evaluation copy). */
static inline const datm_encoder *whai_encoder(const whai_model *w) { return w->enc; }
static inline const float *whai_encoder_weights(const whai_model *w) { return w->ch.params; }
static inline const float *whai_encoder_grad(const whai_model *w) { return w->ch.grad; }
static inline const datm_adam *whai_adam(const whai_model *w) { return &w->ch.adam; }
static inline const datm_gbn *whai_decoder(const whai_model *w) { return w->ch.gbn; }
static inline int whai_is_training_chain(const whai_model *w, const whai_chain *c)
{
    return c == &w->ch;
}

/* KL weights klw[0..L] of training iteration it (1-based; klw[0] = 0): kl_weight_start until
 * epoch kl_ramp_epochs[0], linear to kl_weight at kl_ramp_epochs[1], times the warm-up ramp
 * from 0 over kl_warmup_epochs. Every WHAI-based variant should use this schedule. */
void whai_kl_weights(const whai_model *m, int64_t it, double *klw);

/* whai_train_batch is one iteration of Algorithm 1 (and the training statistics) on the
 * mini-batch b; with learn_r also the r step. Variants built on WHAI (sdatm, layerwise) call
 * it for training. */

#endif
