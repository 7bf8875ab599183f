/* models/sdatm.c: the shared implementation of the supervised DATM variants (sdatm-l,
 * sdatm-n; paper section III, eqs. ELBO-of-classification, w-distribution, KL-gaussian,
 * prediction). See sdatm.h for the recipe. Letters: B batch documents, V words, L layers,
 * K_l layer widths, C classes, N training documents, R rows of the softmax weights. */
#include "sdatm.h"

#include <math.h>
#include <string.h>

#include "decoder/decoder.h"
#include "encoder/encoder.h"
#include "eval/classify.h"
#include "eval/logreg.h"
#include "eval/perplexity.h"
#include "io/h5.h"
#include "nn/bayes_softmax.h"
#include "nn/mlp_head.h"

#define SDATM_W_STREAM UINT64_C(0x5DA7)   /* index2 of the W-noise streams */
#define SDATM_PRED_CHUNK 1024             /* documents per head pass in predict */

typedef struct sdatm {
    datm_model base;
    int      kind;                               /* sdatm_head_kind */
    int      L;
    int64_t  K[DATM_ENC_MAX_LAYERS + 1];         /* K[0] = V */
    int64_t  N, C, bpe;                          /* training docs, classes, batches/epoch */
    datm_encoder    *enc;
    datm_encoder_ws *ws;                         /* training workspace (cap docs) */
    int64_t          cap;
    datm_gbn        *gbn;
    datm_gbn_stats  *stats;
    datm_adam        adam_enc, adam_head;
    datm_params      hp;                         /* head parameters: MLP views + mu, rho */
    datm_mlp_head    mh;
    datm_bsm         bs;
    float   *h_cache, *h_work;                   /* head forward cache / backward work (cap) */
    float   *W, *eps;                            /* (R, C) */
    float   *P;                                  /* (cap, C) */
    float   *b_work;                             /* bayes softmax work (cap) */
    float   *ds;                                 /* (cap, O) d loss / d head output */
    float   *dtheta[DATM_ENC_MAX_LAYERS + 1];    /* (cap, K_l) label gradient on theta(l) */
    double  *theta_d[DATM_ENC_MAX_LAYERS + 1];   /* (cap, K_l) theta for the augmentation */
    /* configuration */
    int      classifier;                         /* 0 bayes-softmax, 1 logreg */
    int64_t  unsup_epochs, warmup_epochs;
    double   kl_weight[DATM_ENC_MAX_LAYERS + 1];
    double   label_weight, w_kl_weight;
    int      phi_update_sup;
    datm_aug_mode count_mode;
    int64_t  feature_samples, lr_folds, lr_cv_docs;
    int      lr_transform;
    const datm_csr *train;                       /* borrowed: the logreg baseline's features */
    const int32_t  *train_labels;
} sdatm;

/* ---- creation ---- */

void sdatm_destroy(datm_model *m)
{
    sdatm *s = (sdatm *)m;
    if (!s) return;
    datm_encoder_ws_destroy(&s->ws);
    datm_encoder_destroy(&s->enc);
    datm_gbn_stats_destroy(&s->stats);
    datm_gbn_destroy(&s->gbn);
    datm_adam_free(&s->adam_enc);
    datm_adam_free(&s->adam_head);
    datm_params_free(&s->hp);
    datm_free(s->h_cache); datm_free(s->h_work); datm_free(s->W); datm_free(s->eps);
    datm_free(s->P); datm_free(s->b_work); datm_free(s->ds);
    for (int l = 0; l <= DATM_ENC_MAX_LAYERS; l++) {
        datm_free(s->dtheta[l]);
        datm_free(s->theta_d[l]);
    }
    datm_free(s);
}

/* A list key with [] (default), one value for all layers, or one value per layer. */
static int per_layer_reals(const datm_config *cfg, const char *key, int L, double def,
                           double *out, datm_error *err)
{
    const double *v;
    int n = datm_config_real_list(cfg, key, &v);
    if (n != 0 && n != 1 && n != L)
        return datm_error_set(err, DATM_E_INVALID, "model.%s has %d values; give none, one, or "
                              "one per layer (%d)", key, n, L);
    for (int l = 1; l <= L; l++) out[l] = n == 0 ? def : v[n == 1 ? 0 : l - 1];
    return DATM_OK;
}

int sdatm_create(const datm_config *cfg, const datm_run_info *info, const datm_model_ops *ops,
                 sdatm_head_kind kind, datm_model **out, datm_error *err)
{
    *out = NULL;
    const int64_t *lay;
    int L = datm_config_int_list(cfg, "layers", &lay);
    if (L < 1 || L > DATM_ENC_MAX_LAYERS || L > DATM_GBN_MAX_LAYERS || L > DATM_MLP_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "model.layers: %d layers (1..%d)", L,
                              DATM_ENC_MAX_LAYERS);
    const int classifier = !strcmp(datm_config_str(cfg, "classifier"), "logreg");
    if (info->n_classes < 2 || !info->train_labels)
        return datm_error_set(err, DATM_E_INVALID, "%s needs a labelled training set with >= 2 "
                              "classes (data set has %d)", ops->name, info->n_classes);
    sdatm *s = datm_alloc(sizeof *s, err);
    if (!s) return DATM_E_NOMEM;
    s->base.ops = ops;
    s->kind = kind;
    s->L = L;
    s->K[0] = info->n_vocab;
    for (int l = 1; l <= L; l++) s->K[l] = lay[l - 1];
    s->N = info->n_train;
    s->C = info->n_classes;
    s->bpe = info->epochs > 0 ? DATM_MAX(1, info->total_iters / info->epochs) : 1;
    s->cap = DATM_MAX(1, info->batch_size);
    s->classifier = classifier;
    s->unsup_epochs = datm_config_int(cfg, "unsup_epochs");
    s->warmup_epochs = datm_config_int(cfg, "kl_warmup_epochs");
    s->label_weight = datm_config_real(cfg, "label_weight");
    s->w_kl_weight = datm_config_real(cfg, "w_kl_weight");
    s->phi_update_sup = datm_config_bool(cfg, "update_phi_supervised");
    s->count_mode = !strcmp(datm_config_str(cfg, "count_mode"), "expected") ? DATM_AUG_EXPECTED
                                                                             : DATM_AUG_SAMPLED;
    s->feature_samples = datm_config_int(cfg, "feature_samples");
    s->lr_folds = datm_config_int(cfg, "logreg_folds");
    s->lr_cv_docs = datm_config_int(cfg, "logreg_cv_docs");
    s->lr_transform = datm_feat_transform_parse(datm_config_str(cfg, "logreg_transform"));
    s->train = info->train;
    s->train_labels = info->train_labels;
    int rc = per_layer_reals(cfg, "kl_weight", L, 1.0, s->kl_weight, err);

    /* decoder: WHAI has no r (top prior Gamma(1, 1), reference-notes 1.1) */
    datm_gbn_opts go;
    datm_gbn_opts_default(&go);
    go.use_r = 0;
    go.init_lo = datm_config_real(cfg, "phi_init_lo");
    go.phi_floor = datm_config_real(cfg, "phi_floor");
    if (!rc) rc = per_layer_reals(cfg, "eta", L, 0.0, go.eta, err);
    if (!rc) rc = datm_gbn_create(L, s->K, &go, info->seed, &s->gbn, err);
    if (!rc) rc = datm_gbn_stats_create(s->gbn, &s->stats, err);

    /* encoder */
    datm_encoder_opts eo;
    datm_encoder_opts_default(&eo);
    eo.n_layers = L;
    eo.n_vocab = info->n_vocab;
    const int64_t *hid;
    int nh = datm_config_int_list(cfg, "hidden", &hid);
    if (!rc && nh != 0 && nh != L)
        rc = datm_error_set(err, DATM_E_INVALID, "model.hidden has %d values; give none or one "
                            "per layer (%d)", nh, L);
    for (int l = 1; l <= L; l++) {
        eo.k[l] = s->K[l];
        eo.hidden[l] = nh ? hid[l - 1] : 0;
        eo.kl_weight[l] = s->kl_weight[l];
    }
    eo.downward = datm_config_bool(cfg, "downward");
    eo.shape_per_topic = datm_config_bool(cfg, "shape_per_topic");
    eo.lambda_is_mean = datm_config_bool(cfg, "lambda_is_mean");
    eo.k_min = datm_config_real(cfg, "k_min");
    eo.k_max = datm_config_real(cfg, "k_max");
    eo.u_lo = datm_config_real(cfg, "u_lo");
    eo.u_hi = datm_config_real(cfg, "u_hi");
    if (!rc) rc = datm_encoder_create(&eo, info->seed, &s->enc, err);
    if (!rc) rc = datm_encoder_ws_create(s->enc, s->cap, s->cap * 64, &s->ws, err);
    const double clip = datm_config_real(cfg, "grad_clip");
    if (!rc) rc = datm_adam_init(&s->adam_enc, s->enc->params.size, datm_config_real(cfg, "lr"),
                                 0.9, 0.999, 1e-8, err);
    s->adam_enc.clip = clip;

    /* classifier head: feature map + Bayesian softmax */
    int transform = datm_feat_transform_parse(datm_config_str(cfg, "head_transform"));
    int per_layer = 0, H = 0;
    int64_t a[DATM_MLP_MAX_HIDDEN] = {0};
    if (kind == SDATM_HEAD_MLP) {
        const int64_t *hh;
        H = datm_config_int_list(cfg, "head_hidden", &hh);
        if (H > DATM_MLP_MAX_HIDDEN && !rc)
            rc = datm_error_set(err, DATM_E_INVALID, "model.head_hidden: %d layers (max %d)", H,
                                DATM_MLP_MAX_HIDDEN);
        for (int j = 0; j < H && j < DATM_MLP_MAX_HIDDEN; j++) a[j] = hh[j];
        per_layer = datm_config_bool(cfg, "head_g1");
    }
    if (!rc) rc = datm_mlp_head_add_params(&s->mh, &s->hp, "head", L, s->K + 1, transform,
                                           per_layer, H, a, err);
    if (!rc) rc = datm_bsm_add_params(&s->bs, &s->hp, "softmax", s->mh.out_dim, s->C,
                                      datm_config_bool(cfg, "head_bias"), err);
    if (!rc) rc = datm_params_alloc(&s->hp, err);
    if (!rc) {
        datm_rng rng;
        datm_rng_init(&rng, info->seed, DATM_STREAM_INIT, 7000);
        datm_mlp_head_init_values(&s->mh, &s->hp, &rng);
        datm_bsm_init_values(&s->bs, &s->hp, &rng, datm_config_real(cfg, "w_mu_sd"),
                             datm_config_real(cfg, "w_sigma0"));
        rc = datm_adam_init(&s->adam_head, s->hp.size, datm_config_real(cfg, "head_lr"), 0.9,
                            0.999, 1e-8, err);
        s->adam_head.clip = clip;
    }

    /* work space for batches of up to cap documents */
    const int64_t B = s->cap, RC = s->bs.R * s->C;
    if (!rc) {
        s->h_cache = datm_alloc_array((size_t)datm_mlp_head_cache_len(&s->mh, B), sizeof(float), err);
        s->h_work = datm_alloc_array((size_t)datm_mlp_head_work_len(&s->mh, B), sizeof(float), err);
        s->W = datm_alloc_array((size_t)RC, sizeof(float), err);
        s->eps = datm_alloc_array((size_t)RC, sizeof(float), err);
        s->P = datm_alloc_array((size_t)(B * s->C), sizeof(float), err);
        s->b_work = datm_alloc_array((size_t)datm_bsm_work_len(&s->bs, B), sizeof(float), err);
        s->ds = datm_alloc_array((size_t)(B * s->mh.out_dim), sizeof(float), err);
        int ok = s->h_cache && s->h_work && s->W && s->eps && s->P && s->b_work && s->ds;
        for (int l = 1; l <= L && ok; l++) {
            s->dtheta[l] = datm_alloc_array((size_t)(B * s->K[l]), sizeof(float), err);
            s->theta_d[l] = datm_alloc_array((size_t)(B * s->K[l]), sizeof(double), err);
            ok = s->dtheta[l] && s->theta_d[l];
        }
        if (!ok) rc = DATM_E_NOMEM;
    }
    if (rc) {
        sdatm_destroy(&s->base);
        return rc;
    }
    *out = &s->base;
    return DATM_OK;
}

/* ---- training (paper Algorithm 1 plus the label term) ---- */

static const float *const *phi_f(const sdatm *s)
{
    return (const float *const *)s->gbn->phi_f;
}

/* Linear ramp over `epochs` epochs starting at iteration first (1-based). */
static double ramp(int64_t iteration, int64_t first, int64_t epochs, int64_t bpe)
{
    if (epochs <= 0) return 1.0;
    double r = (double)(iteration - first + 1) / (double)(epochs * bpe);
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

int sdatm_train_batch(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                      datm_train_stats *st, datm_error *err)
{
    sdatm *s = (sdatm *)m;
    const datm_csr *X = b->X;
    const int64_t B = X->n_rows;
    const int L = s->L;
    if (B > s->cap)
        return datm_error_set(err, DATM_E_INVALID, "%s: batch of %lld documents > batch_size %lld",
                              s->base.ops->name, (long long)B, (long long)s->cap);
    const int sup = s->classifier == 0 && b->labels && ctx->epoch >= s->unsup_epochs;
    double klw[DATM_ENC_MAX_LAYERS + 1] = {0};
    const double warm = ramp(ctx->iteration, 1, s->warmup_epochs, s->bpe);
    for (int l = 1; l <= L; l++) klw[l] = s->kl_weight[l] * warm;
    const uint64_t it = (uint64_t)ctx->iteration;

    /* 1. encoder forward: one reparameterised sample, ELBO terms */
    datm_encoder_noise nz = {NULL, ctx->seed, DATM_STREAM_DOC, it * 4, b->doc_ids, 0};
    datm_encoder_loss el;
    int rc = datm_encoder_forward(s->enc, s->enc->params.value, DATM_ENC_TRAIN, X, phi_f(s),
                                  NULL, klw, &nz, s->ws, &el, err);
    if (rc) return rc;

    /* 2. label term: NLL of y under softmax(g(s) W), W ~ q(W); KL(q(W) || p(W)) / N */
    double nll = 0, klW = 0, wkl_scale = 0;
    if (sup) {
        datm_params_zero_grad(&s->hp);
        const float *th[DATM_MLP_MAX_LAYERS];
        float *dth[DATM_MLP_MAX_LAYERS];
        for (int l = 1; l <= L; l++) { th[l - 1] = s->ws->theta[l]; dth[l - 1] = s->dtheta[l]; }
        const float *feat = datm_mlp_head_forward_f32(&s->mh, s->hp.value, B, th, s->h_cache);
        datm_rng r;
        datm_rng_init2(&r, ctx->seed, DATM_STREAM_BATCH, it, SDATM_W_STREAM);
        datm_rng_normal_fill_f(&r, s->eps, (size_t)(s->bs.R * s->C));
        datm_bsm_weights_f32(&s->bs, s->hp.value, s->eps, s->W);
        datm_bsm_forward_f32(&s->bs, B, feat, s->W, s->P);
        nll = datm_bsm_nll_f32(&s->bs, B, s->P, b->labels);
        datm_bsm_backward_f32(&s->bs, B, s->hp.value, s->hp.grad, feat, s->eps, s->W, s->P,
                              b->labels, s->label_weight / (double)B, s->b_work, s->ds, 0.0f);
        wkl_scale = s->w_kl_weight / (double)s->N *
                    ramp(ctx->iteration, s->unsup_epochs * s->bpe + 1, s->warmup_epochs, s->bpe);
        klW = datm_bsm_kl_f32(&s->bs, s->hp.value, s->hp.grad, wkl_scale);
        datm_mlp_head_backward_f32(&s->mh, s->hp.value, s->hp.grad, B, th, s->h_cache, s->ds,
                                   s->h_work, dth, 0.0f);
    }

    /* 3. encoder backward (with the label gradient on theta) and Adam steps */
    rc = datm_encoder_backward(s->enc, s->enc->params.value, s->ws,
                               sup ? (const float *const *)s->dtheta : NULL,
                               s->enc->params.grad, NULL, err);
    if (rc) return rc;
    datm_adam_step(&s->adam_enc, s->enc->params.value, s->enc->params.grad);
    if (sup) datm_adam_step(&s->adam_head, s->hp.value, s->hp.grad);

    /* 4. theta from the updated encoder, upward augmentation, TLASGR step on Phi */
    datm_tlasgr_report rep;
    memset(&rep, 0, sizeof rep);
    if (!sup || s->phi_update_sup) {
        nz.index = it * 4 + 1;
        rc = datm_encoder_forward(s->enc, s->enc->params.value, DATM_ENC_SAMPLE, X, phi_f(s),
                                  NULL, NULL, &nz, s->ws, NULL, err);
        if (rc) return rc;
        const double *thd[DATM_GBN_MAX_LAYERS + 1] = {NULL};
        for (int l = 1; l <= L; l++) {
            const float *src = s->ws->theta[l];
            double *dst = s->theta_d[l];
            for (int64_t i = 0, n = B * s->K[l]; i < n; i++) dst[i] = src[i];
            thd[l] = dst;
        }
        datm_gbn_stats_reset(s->stats);
        datm_gbn_key key = {ctx->seed, DATM_STREAM_DOC, it * 4 + 2, b->doc_ids};
        rc = datm_gbn_augment(s->gbn, X, thd, &key, s->count_mode, s->stats, NULL, err);
        if (!rc) rc = datm_tlasgr_step(s->gbn, s->stats, ctx->rho, ctx->seed, &rep, err);
        if (rc) return rc;
    }

    memset(st, 0, sizeof *st);
    st->n_layers = L;
    st->loglik = el.loglik;
    st->loss = el.loss + (s->label_weight * nll / (double)DATM_MAX(B, 1)) + wkl_scale * klW;
    for (int l = 1; l <= L; l++) {
        st->kl[l - 1] = el.kl[l];
        st->step[l - 1] = rep.step_mean[l];
    }
    if (!isfinite(st->loss))
        return datm_error_set(err, DATM_E_NUMERIC, "%s: loss is %g (ELBO part %g, label NLL %g)",
                              s->base.ops->name, st->loss, el.loss, nll);
    return DATM_OK;
}

/* ---- features, perplexity ---- */

/* theta[l] (N, K_l), l = 1..L (index 0 NULL), caller frees with free_layers. */
static int alloc_layers(const sdatm *s, int64_t n, float **theta, datm_error *err)
{
    theta[0] = NULL;
    for (int l = 1; l <= s->L; l++) {
        theta[l] = datm_alloc_array((size_t)(DATM_MAX(n, 1) * s->K[l]), sizeof(float), err);
        if (!theta[l]) return DATM_E_NOMEM;
    }
    return DATM_OK;
}

static void free_layers(const sdatm *s, float **theta)
{
    for (int l = 1; l <= s->L; l++) { datm_free(theta[l]); theta[l] = NULL; }
}

int sdatm_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                datm_theta *out, datm_error *err)
{
    const sdatm *s = (const sdatm *)m;
    memset(out, 0, sizeof *out);
    float *th[DATM_ENC_MAX_LAYERS + 1] = {NULL};
    int rc = alloc_layers(s, docs->n_rows, th, err);
    if (!rc) rc = datm_encoder_infer(s->enc, s->enc->params.value, docs, phi_f(s), NULL,
                                     nsamples, seed, 0, 0, 0, th, err);
    if (rc) { free_layers(s, th); return rc; }
    out->n_layers = s->L;
    out->n_docs = docs->n_rows;
    for (int l = 1; l <= s->L; l++) {
        out->k[l - 1] = s->K[l];
        out->theta[l - 1] = th[l];
    }
    return DATM_OK;
}

typedef struct sdatm_eval {
    const datm_csr *obs;
    uint64_t        seed;
    float          *theta[DATM_ENC_MAX_LAYERS + 1];
} sdatm_eval;

int sdatm_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                     datm_error *err)
{
    sdatm *s = (sdatm *)m;
    sdatm_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return DATM_E_NOMEM;
    e->obs = obs;
    e->seed = seed;
    int rc = alloc_layers(s, obs->n_rows, e->theta, err);
    if (rc) { free_layers(s, e->theta); datm_free(e); return rc; }
    *state = e;
    return DATM_OK;
}

int sdatm_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                    datm_error *err)
{
    sdatm *s = (sdatm *)m;
    sdatm_eval *e = state;
    int rc = datm_encoder_infer(s->enc, s->enc->params.value, e->obs, phi_f(s), NULL, 1,
                                e->seed, (uint64_t)draw, 0, 0, e->theta, err);
    if (rc) return rc;
    datm_rate_accum_add(acc, s->gbn->phi_f[1], e->theta[1], s->K[1]);
    return DATM_OK;
}

void sdatm_eval_end(datm_model *m, void *state)
{
    sdatm *s = (sdatm *)m;
    sdatm_eval *e = state;
    if (!e) return;
    free_layers(s, e->theta);
    datm_free(e);
}

/* ---- prediction ---- */

/* The DATM + logistic regression baseline: features of the training documents (theta of all
 * layers averaged over feature_samples draws), logistic regression with CV, applied to the
 * test documents' features. */
static int predict_logreg(const sdatm *s, const datm_csr *docs, uint64_t seed, float *probs,
                          datm_error *err)
{
    if (!s->train || !s->train_labels)
        return datm_error_set(err, DATM_E_INVALID, "%s: classifier logreg needs the training set",
                              s->base.ops->name);
    const int L = s->L;
    int64_t S = 0, k[DATM_ENC_MAX_LAYERS];
    for (int l = 1; l <= L; l++) { k[l - 1] = s->K[l]; S += s->K[l]; }
    float *th[DATM_ENC_MAX_LAYERS + 1] = {NULL};
    float *Ftr = NULL, *Fte = NULL;
    const int ns = (int)s->feature_samples;
    const int64_t ntr = s->train->n_rows, nte = docs->n_rows;
    datm_logreg lr;
    memset(&lr, 0, sizeof lr);
    double t0 = datm_time_now();
    int rc = alloc_layers(s, DATM_MAX(ntr, nte), th, err);
    Ftr = datm_alloc_array((size_t)(ntr * S), sizeof(float), err);
    Fte = datm_alloc_array((size_t)(DATM_MAX(nte, 1) * S), sizeof(float), err);
    if (!rc && (!Ftr || !Fte)) rc = DATM_E_NOMEM;
    /* training features from their own streams (seed ^ 1), test features from `seed` */
    if (!rc) rc = datm_encoder_infer(s->enc, s->enc->params.value, s->train, phi_f(s), NULL, ns,
                                     seed ^ UINT64_C(0x7261696e), 0, 0, 0, th, err);
    if (!rc) datm_features_concat(L, k, (const float *const *)(th + 1), ntr, s->lr_transform, Ftr);
    if (!rc) rc = datm_encoder_infer(s->enc, s->enc->params.value, docs, phi_f(s), NULL, ns,
                                     seed, 0, 0, 0, th, err);
    if (!rc) datm_features_concat(L, k, (const float *const *)(th + 1), nte, s->lr_transform, Fte);
    double t1 = datm_time_now();
    if (!rc) {
        datm_logreg_params p;
        datm_logreg_params_default(&p);
        p.n_folds = (int)s->lr_folds;
        p.cv_max_docs = s->lr_cv_docs;
        rc = datm_logreg_fit_cv(Ftr, ntr, S, s->train_labels, (int)s->C, &p, &lr, err);
    }
    if (!rc) {
        datm_logreg_predict_proba(&lr, Fte, nte, probs);
        int best = 0;
        for (int i = 1; i < lr.n_lambdas; i++)
            if (lr.cv_lambdas[i] == lr.lambda) best = i;
        datm_info("%s logreg baseline: %lld x %lld features (%s, %d draws) in %.3g s; lambda "
                  "%.9g by %d-fold CV (CV error %.9g); fit %.3g s", s->base.ops->name,
                  (long long)ntr, (long long)S, datm_feat_transform_name(s->lr_transform), ns,
                  t1 - t0, lr.lambda, (int)s->lr_folds, lr.n_lambdas ? lr.cv_error[best] : NAN,
                  datm_time_now() - t1);
    }
    datm_logreg_free(&lr);
    free_layers(s, th);
    datm_free(Ftr);
    datm_free(Fte);
    return rc;
}

int sdatm_predict(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                  float *probs, datm_error *err)
{
    const sdatm *s = (const sdatm *)m;
    if (s->classifier == 1) return predict_logreg(s, docs, seed, probs, err);
    const int64_t N = docs->n_rows, C = s->C, RC = s->bs.R * C;
    const int draws = nsamples > 0 ? nsamples : 1;
    const int64_t chunk = SDATM_PRED_CHUNK;
    const double t0 = datm_time_now();
    float *th[DATM_ENC_MAX_LAYERS + 1] = {NULL};
    float *cache = datm_alloc_array((size_t)datm_mlp_head_cache_len(&s->mh, chunk), sizeof(float), err);
    float *W = datm_alloc_array((size_t)RC, sizeof(float), err);
    float *eps = datm_alloc_array((size_t)RC, sizeof(float), err);
    float *P = datm_alloc_array((size_t)(chunk * C), sizeof(float), err);
    int rc = alloc_layers(s, N, th, err);
    if (!rc && (!cache || !W || !eps || !P)) rc = DATM_E_NOMEM;
    if (!rc) memset(probs, 0, (size_t)(N * C) * sizeof(float));
    for (int j = 0; j < draws && !rc; j++) {
        /* theta(j) ~ q(theta | x) (nsamples == 0: the posterior mean), W(j) ~ q(W) */
        rc = datm_encoder_infer(s->enc, s->enc->params.value, docs, phi_f(s), NULL,
                                nsamples > 0 ? 1 : 0, seed, (uint64_t)j, 0, 0, th, err);
        if (rc) break;
        if (nsamples > 0) {
            datm_rng r;
            datm_rng_init2(&r, seed, DATM_STREAM_EVAL, (uint64_t)j, SDATM_W_STREAM);
            datm_rng_normal_fill_f(&r, eps, (size_t)RC);
        }
        datm_bsm_weights_f32(&s->bs, s->hp.value, nsamples > 0 ? eps : NULL, W);
        for (int64_t r0 = 0; r0 < N; r0 += chunk) {
            const int64_t nb = DATM_MIN(chunk, N - r0);
            const float *tc[DATM_MLP_MAX_LAYERS];
            for (int l = 1; l <= s->L; l++) tc[l - 1] = th[l] + r0 * s->K[l];
            const float *feat = datm_mlp_head_forward_f32(&s->mh, s->hp.value, nb, tc, cache);
            datm_bsm_forward_f32(&s->bs, nb, feat, W, P);
            float *dst = probs + r0 * C;
            for (int64_t i = 0; i < nb * C; i++) dst[i] += P[i];
        }
    }
    if (!rc) {
        const float inv = 1.0f / (float)draws;
        for (int64_t i = 0; i < N * C; i++) probs[i] *= inv;
        const double dt = datm_time_now() - t0;
        datm_info("%s predict: %lld documents x %d draws in %.3g s (%.3g s per document)",
                  s->base.ops->name, (long long)N, draws, dt, N ? dt / (double)N : 0.0);
    }
    free_layers(s, th);
    datm_free(cache);
    datm_free(W);
    datm_free(eps);
    datm_free(P);
    return rc;
}

/* ---- topics, layers ---- */

int sdatm_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                  int64_t *cols)
{
    const sdatm *s = (const sdatm *)m;
    if (layer < 1 || layer > s->L) return DATM_E_INVALID;
    *phi = s->gbn->phi_f[layer];
    *rows = s->K[layer - 1];
    *cols = s->K[layer];
    return DATM_OK;
}

int sdatm_n_layers(const datm_model *m) { return ((const sdatm *)m)->L; }

/* ---- save / load: decoder views, encoder and head blocks, both Adam states ---- */

static int save_block(datm_h5 *g, const char *name, const float *x, int64_t n, datm_error *err)
{
    const int64_t dims[1] = {n};
    return datm_h5_write_f32(g, name, x, 1, dims, err);
}

static int load_block(datm_h5 *g, const char *name, float *x, int64_t n, datm_error *err)
{
    const int64_t dims[1] = {n};
    return datm_h5_read_f32(g, name, x, 1, dims, err);
}

int sdatm_save(const datm_model *m, struct datm_h5 *g, datm_error *err)
{
    const sdatm *s = (const sdatm *)m;
    datm_gbn_view v[3 * DATM_GBN_MAX_LAYERS + 2];
    int n = datm_gbn_views(s->gbn, v, (int)DATM_COUNTOF(v));
    int rc = DATM_OK;
    for (int i = 0; i < n && !rc; i++)
        rc = datm_h5_write_f64(g, v[i].name, v[i].data, v[i].rank, v[i].dims, err);
    const datm_params *ep = &s->enc->params, *hp = &s->hp;
    if (!rc) rc = save_block(g, "encoder", ep->value, ep->size, err);
    if (!rc) rc = save_block(g, "head", hp->value, hp->size, err);
    if (!rc) rc = save_block(g, "adam_enc_m", s->adam_enc.m, ep->size, err);
    if (!rc) rc = save_block(g, "adam_enc_v", s->adam_enc.v, ep->size, err);
    if (!rc) rc = save_block(g, "adam_head_m", s->adam_head.m, hp->size, err);
    if (!rc) rc = save_block(g, "adam_head_v", s->adam_head.v, hp->size, err);
    if (!rc) rc = datm_h5_write_scalar(g, "adam_enc_t", (double)s->adam_enc.t, err);
    if (!rc) rc = datm_h5_write_scalar(g, "adam_head_t", (double)s->adam_head.t, err);
    return rc;
}

int sdatm_load(datm_model *m, struct datm_h5 *g, datm_error *err)
{
    sdatm *s = (sdatm *)m;
    datm_gbn_view v[3 * DATM_GBN_MAX_LAYERS + 2];
    int n = datm_gbn_views(s->gbn, v, (int)DATM_COUNTOF(v));
    int rc = DATM_OK;
    for (int i = 0; i < n && !rc; i++)
        rc = datm_h5_read_f64(g, v[i].name, v[i].data, v[i].rank, v[i].dims, err);
    if (rc) return rc;
    datm_gbn_view_commit(s->gbn);
    const datm_params *ep = &s->enc->params, *hp = &s->hp;
    double t1 = 0, t2 = 0;
    if (!rc) rc = load_block(g, "encoder", ep->value, ep->size, err);
    if (!rc) rc = load_block(g, "head", hp->value, hp->size, err);
    if (!rc) rc = load_block(g, "adam_enc_m", s->adam_enc.m, ep->size, err);
    if (!rc) rc = load_block(g, "adam_enc_v", s->adam_enc.v, ep->size, err);
    if (!rc) rc = load_block(g, "adam_head_m", s->adam_head.m, hp->size, err);
    if (!rc) rc = load_block(g, "adam_head_v", s->adam_head.v, hp->size, err);
    if (!rc) rc = datm_h5_read_scalar(g, "adam_enc_t", &t1, err);
    if (!rc) rc = datm_h5_read_scalar(g, "adam_head_t", &t2, err);
    if (!rc) {
        s->adam_enc.t = (int64_t)t1;
        s->adam_head.t = (int64_t)t2;
        rc = datm_gbn_check(s->gbn, 1e-6, err);
    }
    return rc;
}
