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
 * At the first supervised iteration the head's input standardisation is fixed from the
 * training documents' posterior-mean theta (head_standardize; not in the paper, which feeds
 * theta as is: with theta ~ 100 per topic on MNIST the linear head did not train, ~60% error).
 * Epochs < unsup_epochs skip step 2 (the paper trains 100 unsupervised epochs first); the KL
 * terms of theta ramp in over kl_warmup_epochs from the start and the KL of W over as many
 * epochs from the start of the supervised phase (Sonderby et al., paper section IV-B).
 * Prediction (paper eq. prediction): p(y | x) averaged over nsamples joint draws of
 * (theta ~ q(theta | x), W ~ q(W)).
 *
 * The paper's unsupervised "DATM" baseline of Tables 3-4 is not a mode of this file: run the
 * variant whai with the same keys; `datm run` then fits the logistic regression on its theta
 * features (engine/pipeline/run.c, eval/logreg). */
#ifndef DATM_MODELS_SDATM_H
#define DATM_MODELS_SDATM_H

#include "pipeline/model.h"
#include "variant_schema.h"

#define SDATM_NOB 1.0, 0.0
/* WHAI's schema edits shared by both variants (variant_schema_build). */
#define SDATM_SCHEMA_EDITS                                                                     \
    {"kl_warmup_epochs", "10",                                                                 \
     "KL terms ramp linearly from 0 to their weight over this many epochs: those of theta "   \
     "from the start, KL(q(W) || p(W)) from the first supervised epoch (paper sec. IV-B, "     \
     "after Sonderby et al.; length not given)"},                                              \
    {"eval_globals", "fixed", NULL}
/* Keys of the supervised part (both variants). */
#define SDATM_EXTRA_SCHEMA                                                                     \
    {"unsup_epochs", DATM_PARAM_INT, "100", 0, 1e7, NULL,                                      \
     "epochs without the label term before the supervised ones (paper: 100 then 300)"},       \
    {"label_weight", DATM_PARAM_REAL, "1", 0, 1e9, NULL,                                       \
     "weight of the label log-likelihood in the ELBO (paper: 1)"},                             \
    {"head_transform", DATM_PARAM_CHOICE, "log1p", SDATM_NOB, "raw|log1p|prop",                \
     "theta -> classifier input: raw (paper), log(1 + theta), or per-layer proportions"},      \
    {"head_standardize", DATM_PARAM_BOOL, "true", SDATM_NOB, NULL,                            \
     "standardise the transformed features (mean 0, sd 1 over the training documents' "       \
     "posterior-mean theta, taken at the first supervised iteration and then fixed)"},         \
    {"head_lr", DATM_PARAM_REAL, "0.001", 1e-9, 10, NULL, "Adam step size of the classifier"}, \
    {"head_bias", DATM_PARAM_BOOL, "true", SDATM_NOB, NULL,                                    \
     "add a (Bayesian) intercept row to the softmax weights"},                                 \
    {"w_sigma0", DATM_PARAM_REAL, "0.01", 1e-8, 10, NULL,                                      \
     "initial posterior sd of every softmax weight (sigma = softplus(rho))"},                  \
    {"w_mu_sd", DATM_PARAM_REAL, "0.01", 0, 10, NULL, "initial posterior means ~ N(0, sd^2)"}, \
    {"w_kl_weight", DATM_PARAM_REAL, "1", 0, 1e9, NULL,                                        \
     "weight of KL(q(W) || N(0, I)) (divided by N per document; paper: 1)"}

typedef enum { SDATM_HEAD_LINEAR = 0, SDATM_HEAD_MLP = 1 } sdatm_head_kind;

/* kind and ops are the variant's; the MLP variant reads head_hidden and head_g1 too. */
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

#endif
