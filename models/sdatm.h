/* models/sdatm.h: what the two supervised DATM variants (sdatm-l, sdatm-n; paper section III)
 * share: the schema keys, and the implementation of every plugin operation. Not a variant
 * itself: the registry lists sdatm_l.c and sdatm_n.c, which differ only in the classifier
 * head (linear: s = [theta(1..L)]; nonlinear: per-layer g_1 maps and softplus layers).
 *
 * The recipe: a WHAI model (models/whai.h: WUDVE encoder by Adam, topics by TLASGR-MCMC,
 * paper Algorithm 1) plus the label likelihood y ~ Categorical(softmax(W^T g(s))) with the
 * Bayesian softmax (nn/bayes_softmax) over the feature map (nn/mlp_head), attached through
 * WHAI's extra-loss hook. Per mini-batch:
 *   1. encoder forward (one reparameterised theta sample per document), ELBO terms;
 *   2. supervised epochs: head forward with one W ~ q(W) draw, label NLL, KL(q(W)||p(W))/N,
 *      backward to mu, rho, the MLP and d(label loss)/d theta(l), handed to the encoder's
 *      backward as dtheta_extra, so the labels shape the encoder and (through the sampled
 *      theta) the topics;
 *   3. Adam steps on the encoder and the head;
 *   4. theta sampled with the updated encoder, upward augmentation, TLASGR step on Phi(l)
 *      (steps 1, 3 (encoder) and 4 are WHAI's; the hook does step 2 and the head's Adam).
 * Two settings that are not the paper's (defaults are): head_input mean feeds the head the
 * Weibull means lambda Gamma(1 + 1/k) instead of the sample (the label gradient still enters
 * the encoder at the sample, an unbiased estimate of the gradient through the mean), and
 * head_steps > 1 takes that many head steps per mini-batch (the label gradient on theta is the
 * first step's); head_l2 > 0 puts an L2 penalty on the MLP weights; head_dropout > 0 drops
 * (inverted dropout, training only) entries of the softmax's input features; lr_decay_to < 1
 * anneals both Adam steps (cosine, sdatm_lr_factor) over the supervised iterations.
 * At the first supervised iteration the head's input standardisation is fixed from the
 * training documents' posterior-mean theta (head_standardize; not in the paper, which feeds
 * theta as is: with theta ~ 100 per topic on MNIST the linear head did not train, ~60% error).
 * Epochs < unsup_epochs skip step 2 (the paper trains 100 unsupervised epochs first); the KL
 * terms of theta ramp in over kl_warmup_epochs from the start and the KL of W over as many
 * epochs from the start of the supervised phase (Sonderby et al., paper section IV-B).
 * Prediction (paper eq. prediction): p(y | x) averaged over nsamples joint draws of
 * (theta ~ q(theta | x), W ~ q(W)).
 * Early stopping (val_fraction > 0; not in the paper; models/sdatm_val.h): a stratified,
 * seeded part of the training documents never trains (filtered out of every mini-batch); every
 * val_every supervised epochs and at the run's last iteration the prediction at the posterior
 * means is scored on it, the best state (encoder weights, decoder, head) is kept in memory and
 * put back at the end, or after val_patience checks without improvement, after which
 * train_batch does nothing. The curve is saved under early_stopping/ in the model group.
 * With val_fraction > 0, eval_globals chain is rejected by sdatm_check (its batches draw from
 * all rows, validation documents included).
 * Trajectory ensemble (predict_snapshots > 0; not in the paper; models/sdatm_ens.h): the
 * states (encoder, head, Phi(2..L)) at the ends of the last predict_snapshots supervised epochs
 * are kept, and prediction averages p(y | x) over them (each with its own draws); infer (theta)
 * reads the final state only. With val_fraction > 0 as well, the validation checks only score
 * what prediction would read at that point (the ensemble of the states held so far, once the
 * window has begun): nothing is kept, restored or stopped (val_patience must be 0), so the
 * last check is the validation error of the final ensemble itself (ensemble settings can be
 * chosen on it instead of on test figures).
 *
 * The paper's unsupervised "DATM" baseline of Tables 3-4 is not a mode of this file: run the
 * variant whai with the same keys; `datm run` then fits the logistic regression on its theta
 * features (engine/pipeline/run.c, eval/linclass). */
#ifndef DATM_MODELS_SDATM_H
#define DATM_MODELS_SDATM_H

#include "pipeline/model.h"
#include "pipeline/params.h"
#include "variant_schema.h"

/* The supervised keys both variants share, after WHAI's (pipeline/params.h), and the MLP
 * head's keys of sDATM-N; sdatm.c reads them into these structs. */
#define SDATM_PARAMS(X) \
    X(unsup_epochs, "unsup_epochs", INT, "100", 0, 1e7, NULL, \
      "epochs without the label term before the supervised ones (paper: 100 then 300); " \
      "below train.epochs") \
    X(label_weight, "label_weight", REAL, "1", 0, 1e9, NULL, \
      "weight of the label log-likelihood in the ELBO (paper: 1)") \
    X(head_transform, "head_transform", CHOICE, "log1p", DATM_NOB, "raw|log1p|prop", \
      "theta -> classifier input: raw (paper), log(1 + theta), or per-layer proportions") \
    X(head_standardize, "head_standardize", BOOL, "true", DATM_NOB, NULL, \
      "standardise the transformed features (mean 0, sd 1 over the training documents' " \
      "posterior-mean theta, taken at the first supervised iteration and then fixed)") \
    X(head_sd_floor, "head_sd_floor", REAL, "0.1", 0, 1000, NULL, \
      "with head_standardize: each feature's sd is floored at this times the median sd of its " \
      "layer's features before scale = 1 / sd (not in the paper). A topic not yet used when the " \
      "standardisation is taken hardly varies, and an unfloored scale (up to 1e12) makes the " \
      "head's input explode once it moves: 512-256-128-64 MNIST runs collapsed that way. 0 = " \
      "a floor of 1e-6 of the feature's mean, as in runs made before this key existed") \
    X(head_lr, "head_lr", REAL, "0.001", 1e-9, 10, NULL, \
      "Adam step size of the classifier") \
    X(head_input, "head_input", CHOICE, "sample", DATM_NOB, "sample|mean", \
      "what the classifier sees in training: the encoder's theta sample (paper: E_q ln p(y | " \
      "theta) by one draw) or the Weibull means lambda Gamma(1 + 1/k) given the layer above " \
      "(label gradient handed to the encoder at the sample: unbiased for the mean's)") \
    X(head_test_input, "head_test_input", CHOICE, "full", DATM_NOB, "full|thinned|draws", \
      "with enc_input_keep < 1: what the encoder reads for the head's features outside the " \
      "training steps (input standardisation, validation, prediction): the full documents, or " \
      "every count times enc_input_keep, the mean of the thinning the head was trained on, or " \
      "(draws; prediction and validation only, standardisation as thinned) head_test_draws " \
      "random thinnings like the training steps', p(y | x) averaged over them (not in the paper)") \
    X(head_test_draws, "head_test_draws", INT, "10", 1, 10000, NULL, \
      "random thinnings averaged over by head_test_input draws") \
    X(head_l2, "head_l2", REAL, "0", 0, 1e6, NULL, \
      "L2 penalty (head_l2 / 2) ||W_m||^2 per document on the MLP weight matrices of the head " \
      "(not in the paper, whose W_m are unregularised point estimates; 0 = none)") \
    X(head_dropout, "head_dropout", REAL, "0", 0, 0.95, NULL, \
      "dropout on the Bayesian softmax's input in training (not in the paper; 0 = none): each " \
      "feature of a training step (sdatm-n: the last softplus layer, a2 = 200; sdatm-l: the " \
      "standardised theta) is zeroed with this probability, the rest scaled by 1 / (1 - p); " \
      "prediction uses all features. Against the MLP head's overfitting on 20News") \
    X(lr_decay_to, "lr_decay_to", REAL, "1", 1e-6, 1, NULL, \
      "cosine annealing of the Adam step sizes (not in the paper, whose steps are constant; " \
      "1 = none): over the supervised iterations the encoder's lr and the head's head_lr fall " \
      "from their values at the first supervised iteration to this fraction of them at the " \
      "last (the unsupervised epochs keep the full steps)") \
    X(head_steps, "head_steps", INT, "1", 1, 1000, NULL, \
      "Adam steps of the classifier per mini-batch (paper: 1, one joint step); each step " \
      "draws its own W ~ q(W) on the batch's theta sample, the label gradient on theta is the " \
      "first step's. More steps make up for a reduced epoch budget: the paper's 300 " \
      "supervised epochs are ~90,000 head steps on MNIST") \
    X(step_log, "step_log", BOOL, "false", DATM_NOB, NULL, \
      "log one line per supervised mini-batch (for studying a divergence; the log grows by a " \
      "line per batch): the loss and Poisson log-likelihood per document, the head's label NLL " \
      "and error on the batch, the norms of the encoder's gradient, parameters and step, of the " \
      "head's gradient and step, and the gradient entries grad_clip_rms clipped") \
    X(head_norm_every, "head_norm_every", INT, "0", 0, 1e6, NULL, \
      "recompute the head's input standardisation every this many supervised epochs (not in " \
      "the paper; 0 = fixed at the first supervised iteration), folding the change into the " \
      "first layer that reads it so the head's function (at the W means) is unchanged: theta " \
      "drifts while the encoder trains (MNIST: feature sds ~3x the fixed ones after 30 epochs)") \
    X(head_bias, "head_bias", BOOL, "true", DATM_NOB, NULL, \
      "add a (Bayesian) intercept row to the softmax weights") \
    X(w_sigma0, "w_sigma0", REAL, "0.01", 1e-8, 10, NULL, \
      "initial posterior sd of every softmax weight (sigma = softplus(rho))") \
    X(w_mu_sd, "w_mu_sd", REAL, "0.01", 0, 10, NULL, \
      "initial posterior means ~ N(0, sd^2)") \
    X(w_kl_weight, "w_kl_weight", REAL, "1", 0, 1e9, NULL, \
      "weight of KL(q(W) || N(0, I)) (divided by N per document; paper: 1)") \
    X(val_fraction, "val_fraction", REAL, "0", 0, 0.5, NULL, \
      "early stopping (not in the paper; 0 = off): this fraction of the training documents, " \
      "drawn per class from the run's seed, is held out of training, and the supervised phase " \
      "keeps the state (encoder, decoder, head) with the lowest validation error of the " \
      "prediction at the posterior means. With predict_snapshots > 0 the checks only score the " \
      "prediction (the ensemble once it holds states) and nothing is restored") \
    X(val_every, "val_every", INT, "1", 1, 1e6, NULL, \
      "supervised epochs between validation checks (val_fraction > 0); the last iteration is " \
      "always checked, and the best checked state is restored at the end") \
    X(val_patience, "val_patience", INT, "0", 0, 1e6, NULL, \
      "checks without a new best validation error after which the best state is restored and " \
      "the rest of the run's iterations are skipped (0 = train every epoch; must be 0 with " \
      "predict_snapshots > 0)") \
    X(predict_snapshots, "predict_snapshots", INT, "0", 0, 1000, NULL, \
      "trajectory ensemble (not in the paper; 0 = off, the paper's prediction from the final " \
      "state): the states (encoder, head, Phi(2..L)) at the ends of the last this many " \
      "supervised epochs are kept, and prediction averages p(y | x) over them, as perplexity " \
      "averages over the Phi samples collected along the chain. Memory and the result file " \
      "grow by this many copies of the encoder. With val_fraction > 0 the last validation " \
      "check scores this ensemble") \
    X(snapshot_every, "snapshot_every", INT, "1", 1, 1e6, NULL, \
      "with predict_snapshots: epochs between two held states (the last epoch's is always one), " \
      "so n states span the last n x snapshot_every epochs")
DATM_PARAMS_STRUCT(sdatm_params, SDATM_PARAMS)
void sdatm_params_get(const datm_config *c, sdatm_params *p);

#define SDATM_MLP_PARAMS(X) \
    X(head_hidden, "head_hidden", INT_LIST, "[400, 200]", 1, 1e6, NULL, \
      "widths of the softplus layers of g_2 (paper: a1 = 400, a2 = 200; at most 4)") \
    X(head_g1, "head_g1", BOOL, "true", DATM_NOB, NULL, \
      "per-layer maps g_1(l)(theta(l)) = softplus(W theta(l) + b), W (K_l, K_l) (paper)")
DATM_PARAMS_STRUCT(sdatm_mlp_params, SDATM_MLP_PARAMS)
void sdatm_mlp_params_get(const datm_config *c, sdatm_mlp_params *p);

/* dst (VARIANT_SCHEMA_CAP entries) = WHAI's schema (models/whai.h) with sDATM's defaults, the
 * supervised keys both variants share (unsup_epochs, label_weight, head_*, w_*; sdatm.c),
 * then variant_extra (NULL-terminated; may be NULL). Called once from each variant's schema
 * constructor. */
void sdatm_schema_build(datm_param_schema *dst, const datm_param_schema *variant_extra);

/* The datm_model_ops fields both variants share (all but name, summary, schema, create,
 * check). */
#define SDATM_OPS_COMMON                                                                       \
    .api_version = DATM_MODEL_API_VERSION, .train_batch = sdatm_train_batch,                   \
    .eval_begin = sdatm_eval_begin, .eval_step = sdatm_eval_step, .eval_end = sdatm_eval_end,  \
    .infer = sdatm_infer, .predict = sdatm_predict, .get_phi = sdatm_get_phi,                  \
    .n_layers = sdatm_n_layers, .save = sdatm_save, .load = sdatm_load,                        \
    .destroy = sdatm_destroy

typedef enum { SDATM_HEAD_LINEAR = 0, SDATM_HEAD_MLP = 1 } sdatm_head_kind;

/* kind and ops are the variant's; the MLP variant reads head_hidden and head_g1 too.
 * sdatm_check is the variants' check op (the options alone); sdatm_create applies it too. */
int  sdatm_check(const datm_config *cfg, const datm_model_ops *ops, sdatm_head_kind kind,
                 datm_error *err);
int  sdatm_create(const datm_config *cfg, const datm_run_info *info, const datm_model_ops *ops,
                  sdatm_head_kind kind, datm_model **out, datm_error *err);
int  sdatm_train_batch(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                       datm_train_stats *st, datm_error *err);
int  sdatm_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                      datm_error *err);
int  sdatm_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                     datm_error *err);
void sdatm_eval_end(datm_model *m, void *state);
int  sdatm_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                 datm_theta *out, datm_error *err);
int  sdatm_predict(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                   float *probs, datm_error *err);
int  sdatm_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                   int64_t *cols);
int  sdatm_n_layers(const datm_model *m);
int  sdatm_save(const datm_model *m, struct datm_h5 *g, datm_error *err);
int  sdatm_load(datm_model *m, struct datm_h5 *g, datm_error *err);
void sdatm_destroy(datm_model *m);
/* head_norm_every: recomputes the head's input standardisation from the training documents'
 * current posterior-mean theta and folds the change into the first layer that reads the
 * standardised features (g_1 maps, else the first hidden layer, else the softmax's means,
 * intercept and sds), so the head's output at the W means is unchanged; Adam moments of the
 * rescaled weights follow. Called by train_batch every head_norm_every supervised epochs. */
int  sdatm_head_norm_refresh(datm_model *m, datm_error *err);
/* head_dropout (not in the paper): inverted dropout of the softmax's input features in
 * training. mask[i] = 1 / (1 - p) with probability 1 - p, else 0 (from the stream of
 * (seed, iteration, head step)); out[i] = feat[i] * mask[i] (n entries), so E[out] = feat and
 * prediction reads the features undropped. The backward multiplies d/d out by the same mask. */
void sdatm_dropout_apply(uint64_t seed, int64_t iteration, int step, double p, int64_t n,
                         const float *feat, float *mask, float *out);
/* lr_decay_to (not in the paper): the factor on both Adam steps at 1-based `iteration` when
 * the supervised iterations are first_sup..total: 1 before first_sup and when to >= 1, else
 * to + (1 - to) (1 + cos(pi f)) / 2 with f = (iteration - first_sup) / (total - first_sup)
 * (clamped to 1), so 1 at the first supervised iteration and `to` at the last. */
double sdatm_lr_factor(int64_t iteration, int64_t first_sup, int64_t total, double to);

/* 1 when an epoch's error of the head on its training batches (`now`, a rate) says the
 * supervised training has diverged, given the lowest such error of the earlier supervised
 * epochs (`best`; NAN when there is none yet): now exceeds best by more than 0.2 and is more
 * than 3 times it. A long MNIST run at 512-256-128-64 went from 1.3% to 34% in one epoch and
 * then to chance with no other sign; the
 * ordinary epoch-to-epoch noise (1.3-2.2% there, 0.3-0.8 early on digits) stays below. */
int sdatm_diverged(double best, double now);

#endif
