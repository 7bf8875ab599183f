/* models/sdatm.c: the shared implementation of the supervised DATM variants (sdatm-l,
 * sdatm-n; paper section III, eqs. ELBO-of-classification, w-distribution, KL-gaussian,
 * prediction), built on a WHAI model (models/whai.h) and its extra-loss hook; see sdatm.h.
 * Letters: B batch documents, L layers, K_l layer widths, C classes, N training documents,
 * R rows of the softmax weights, O = width of the classifier's input. */
#include "sdatm.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "eval/classify.h"
#include "dlda_common.h"
#include "io/h5.h"
#include "nn/bayes_softmax.h"
#include "nn/mlp_head.h"
#include "sdatm_ens.h"
#include "sdatm_val.h"
#include "whai.h"

#define SDATM_W_STREAM UINT64_C(0x5DA7)   /* index2 of the W-noise streams */
#define SDATM_THIN_STREAM (UINT64_C(0x7415) << 32)   /* index1 of test-thinning streams */
#define SDATM_PRED_CHUNK 1024             /* documents per head pass in predict */
#define SDATM_DROP_STREAM UINT64_C(0x5DA8) /* index2 of the head_dropout mask streams */

typedef struct sdatm {
    datm_model   base;
    whai_model  *w;                               /* the WHAI part (encoder, decoder, Adam) */
    int          L;
    int64_t      K[DATM_MAX_LAYERS + 1];      /* K[0] = V */
    int64_t      N, C, bpe, cap;
    datm_params  hp;                              /* head parameters: MLP views + mu, rho */
    datm_adam    adam;                            /* the head's Adam */
    datm_mlp_head mh;
    datm_bsm     bs;
    float       *h_cache, *h_work;                /* head forward cache / backward work (cap) */
    float       *W, *eps;                         /* (R, C) */
    float       *P;                               /* (cap, C) */
    float       *b_work;                          /* bayes softmax work (cap) */
    float       *ds;                              /* (cap, O) */
    float       *dtheta[DATM_MAX_LAYERS + 1]; /* (cap, K_l) label gradient on theta(l) */
    /* configuration */
    int64_t      unsup_epochs, warmup_epochs;
    double       label_weight, w_kl_weight;
    int          standardize;                     /* head_standardize */
    int          head_steps;                      /* head Adam steps per mini-batch */
    int          input_mean;                      /* head_input: 0 sample, 1 mean */
    double       test_scale;                      /* head_test_input: count factor outside
                                                     training (1: full documents) */
    int          test_draws;                      /* head_test_input draws: thinnings averaged
                                                     over in prediction (0: none) */
    double       head_l2;                         /* L2 weight on the MLP weights */
    double       drop;                            /* head_dropout probability */
    float       *dmask, *fdrop;                   /* (cap, O) kept/(1 - drop) or 0; dropped features */
    float       *thmean[DATM_MAX_LAYERS + 1]; /* (cap, K_l) head input when input_mean */
    /* running training-batch statistics of the head (sdatm_track) */
    int64_t      tr_epoch, tr_bad, tr_docs;
    double       tr_nll;
    double       tr_best;                         /* lowest epoch error so far (NAN: none) */
    int          tr_warned;                       /* the divergence warning was given */
    /* per-epoch diagnostics of the encoder (sdatm_diag): Weibull shapes k per layer (sum,
     * count at the clamps), squared norms of the label and the total gradient on theta */
    int64_t      dg_epoch, dg_n[DATM_MAX_LAYERS + 1], dg_lo[DATM_MAX_LAYERS + 1],
                 dg_hi[DATM_MAX_LAYERS + 1], dg_prevB;
    double       dg_k[DATM_MAX_LAYERS + 1], dg_gl[DATM_MAX_LAYERS + 1],
                 dg_gt[DATM_MAX_LAYERS + 1];
    int64_t      dg_cut[2], dg_t[2];              /* n_clipped and t of the encoder's and the
                                                   * head's Adam at the epoch's start */
    /* early stopping on a validation split (val_fraction > 0; sdatm_val.h) */
    sdatm_val    val;
    int64_t      val_every, total_iters;
    int64_t      norm_every;                      /* head_norm_every (epochs; 0 = fixed) */
    datm_csr     Xval;                            /* (n_val, V) validation documents */
    int32_t     *yval, *val_pred;                 /* (n_val) labels, predictions */
    float       *val_probs;                       /* (n_val, C) */
    int64_t     *keep, *keep_ids;                 /* (cap) rows / ids of a filtered batch */
    int32_t     *keep_lab;                        /* (cap) */
    float       *best_enc, *best_head;            /* snapshot of the best check: encoder, head */
    datm_gbn    *best_gbn;                        /* ... and decoder (Phi, M, counters) */
    datm_train_stats last_st;                     /* reported after an early stop */
    sdatm_ens    ens;                             /* predict_snapshots: states predicted from */
    int64_t      snap_every;                      /* snapshot_every: epochs between them */
    double       lr_to;                           /* lr_decay_to (1: constant steps) */
    double       lr_enc0, lr_head0;               /* the encoder's and head's Adam steps */
    int          step_log;                        /* log every supervised mini-batch */
    double       sd_floor;                        /* head_sd_floor */
    float       *sl_enc, *sl_head;                /* step_log: parameters before the step */
} sdatm;

static sdatm *S(datm_model *m) { return (sdatm *)m; }
static const sdatm *CS(const datm_model *m) { return (const sdatm *)m; }
/* Read-only views of the WHAI part (models/whai.h: sdatm changes it only through whai_set_*). */
static const float *const *phi_f(const sdatm *s)
{
    return (const float *const *)whai_decoder(s->w)->phi_f;
}
static const float *enc_params(const sdatm *s) { return whai_encoder_weights(s->w); }
static const datm_encoder *encoder(const sdatm *s) { return whai_encoder(s->w); }
static const datm_adam *enc_adam(const sdatm *s) { return whai_adam(s->w); }

void sdatm_destroy(datm_model *m)
{
    sdatm *s = S(m);
    if (!s) return;
    if (s->w) whai_destroy(&s->w->base);
    datm_adam_free(&s->adam);
    datm_params_free(&s->hp);
    datm_free(s->h_cache); datm_free(s->h_work); datm_free(s->W); datm_free(s->eps);
    datm_free(s->P); datm_free(s->b_work); datm_free(s->ds);
    datm_free(s->dmask); datm_free(s->fdrop);
    for (int l = 0; l <= DATM_MAX_LAYERS; l++) {
        datm_free(s->dtheta[l]);
        datm_free(s->thmean[l]);
    }
    sdatm_val_free(&s->val);
    datm_csr_free(&s->Xval);
    datm_free(s->yval); datm_free(s->val_pred); datm_free(s->val_probs);
    datm_free(s->keep); datm_free(s->keep_ids); datm_free(s->keep_lab);
    datm_free(s->best_enc); datm_free(s->best_head);
    datm_free(s->sl_enc); datm_free(s->sl_head);
    datm_gbn_destroy(&s->best_gbn);
    sdatm_ens_free(&s->ens);
    datm_free(s);
}

/* ---- the label term: WHAI's extra-loss hook ---- */

/* Linear ramp over `epochs` epochs from iteration `first` (1-based). */
static double ramp(int64_t iteration, int64_t first, int64_t epochs, int64_t bpe)
{
    if (epochs <= 0) return 1.0;
    double r = (double)(iteration - first + 1) / (double)(epochs * bpe);
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

/* The documents the encoder reads for the head's features outside the training steps
 * (standardisation, validation, prediction): docs itself, or with head_test_input thinned a
 * copy in *tmp with every count times enc_input_keep, the mean of the Binomial(x, keep)
 * thinning the head's training features were computed from. */
static int sdatm_test_docs(const sdatm *s, const datm_csr *docs, datm_csr *tmp,
                           const datm_csr **use, datm_error *err)
{
    *use = docs;
    if (s->test_scale == 1.0) return DATM_OK;
    int rc = datm_csr_copy(docs, tmp, err);
    if (rc) return rc;
    const float f = (float)s->test_scale;
    for (int64_t p = 0, n = tmp->row_ptr[tmp->n_rows] - tmp->row_ptr[0]; p < n; p++)
        tmp->val[tmp->row_ptr[0] + p] *= f;
    *use = tmp;
    return DATM_OK;
}

/* Thinning draw t of docs into *tmp (a copy): every token kept with probability keep, the
 * training steps' Binomial(x, keep); streams by (seed, draw, row), so the same for any thread
 * count. */
static int sdatm_thin_docs(const datm_csr *docs, double keep, uint64_t seed, uint64_t t,
                           datm_csr *tmp, datm_error *err)
{
    datm_csr_free(tmp);
    int rc = datm_csr_copy(docs, tmp, err);
    if (rc) return rc;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < tmp->n_rows; i++) {
        datm_rng r;
        datm_rng_init2(&r, seed, DATM_STREAM_EVAL, SDATM_THIN_STREAM + t, (uint64_t)i);
        for (int64_t p = tmp->row_ptr[i]; p < tmp->row_ptr[i + 1]; p++) {
            const int64_t n = (int64_t)(tmp->val[p] + 0.5f);
            int64_t kept = 0;
            for (int64_t u = 0; u < n; u++) kept += datm_rng_uniform(&r) < keep;
            tmp->val[p] = (float)kept;
        }
    }
    return DATM_OK;
}

#define SDATM_NORM_DOCS 20000   /* documents behind the head's input standardisation */

/* The head's input standardisation (nn/mlp_head.h): mean and sd of the transformed
 * posterior-mean theta of (at most SDATM_NORM_DOCS evenly spaced) training documents (those
 * that train: validation documents are left out). */
static int sdatm_set_norm(sdatm *s, datm_error *err)
{
    const datm_csr *X = s->w->train;
    if (!X) return datm_error_set(err, DATM_E_INVALID, "%s: no training set for head_standardize",
                                  s->base.ops->name);
    const int64_t N = s->val.n ? s->val.N - s->val.n : X->n_rows, n = DATM_MIN(N, SDATM_NORM_DOCS);
    int64_t *rows = datm_alloc_array((size_t)DATM_MAX(n, 1), sizeof(int64_t), err);
    if (!rows) return DATM_E_NOMEM;
    for (int64_t i = 0; i < n; i++) rows[i] = s->val.n ? s->val.fit_rows[i * N / n] : i * N / n;
    datm_csr Xs = {0}, Xt = {0};
    const datm_csr *Xe = NULL;
    float *th[DATM_MAX_LAYERS + 1] = {NULL};
    int rc = datm_csr_select_rows(X, rows, n, &Xs, err);
    if (!rc) rc = sdatm_test_docs(s, &Xs, &Xt, &Xe, err);
    for (int l = 1; l <= s->L && !rc; l++) {
        th[l] = datm_alloc_array((size_t)(DATM_MAX(n, 1) * s->K[l]), sizeof(float), err);
        if (!th[l]) rc = DATM_E_NOMEM;
    }
    if (!rc) rc = datm_encoder_infer(encoder(s), enc_params(s), Xe, phi_f(s), NULL, 0, 0, 0, 0, 0,
                                     th, err);
    if (!rc) datm_mlp_head_set_norm(&s->mh, s->hp.value, (const float *const *)(th + 1), n,
                                    s->sd_floor);
    for (int l = 1; l <= s->L; l++) datm_free(th[l]);
    datm_csr_free(&Xs);
    datm_csr_free(&Xt);
    datm_free(rows);
    return rc;
}

/* Rows j of the (n_rows, n_cols) matrix W with a bias row/vector b (NULL: none) rewritten so
 * that W^T t + b keeps its value when the input t_j = a_j t'_j + c_j is replaced by t'_j:
 * b += sum_j c_j W[j, :], W[j, :] *= a_j. Adam moments of W follow the rescaling (the
 * gradient of a_j W[j, :] is 1/a_j that of W[j, :]). */
static void refold_rows(float *W, float *b, int64_t n_rows, int64_t n_cols, const float *a,
                        const float *c, float *m, float *v)
{
    for (int64_t j = 0; j < n_rows; j++) {
        float *w = W + j * n_cols;
        for (int64_t k = 0; b && k < n_cols; k++) b[k] += c[j] * w[k];
        for (int64_t k = 0; k < n_cols; k++) {
            w[k] *= a[j];
            m[j * n_cols + k] /= a[j];
            v[j * n_cols + k] /= a[j] * a[j];
        }
    }
}

int sdatm_head_norm_refresh(datm_model *m, datm_error *err)
{
    sdatm *s = S(m);
    datm_mlp_head *h = &s->mh;
    const int64_t S_ = h->S;
    float *blk = s->hp.value;
    float *old = datm_alloc_array((size_t)(2 * S_), sizeof(float), err);
    float *a = datm_alloc_array((size_t)(2 * S_), sizeof(float), err);
    if (!old || !a) { datm_free(old); datm_free(a); return DATM_E_NOMEM; }
    memcpy(old, blk + h->o_shift, (size_t)S_ * sizeof(float));
    memcpy(old + S_, blk + h->o_scale, (size_t)S_ * sizeof(float));
    int rc = sdatm_set_norm(s, err);
    if (!rc) {
        /* t_old = (x - shift) scale = a t_new + c, a = scale / scale', c = (shift' - shift) scale */
        float *c = a + S_;
        const float *sh = blk + h->o_shift, *sc = blk + h->o_scale;
        for (int64_t j = 0; j < S_; j++) {
            a[j] = old[S_ + j] / sc[j];
            c[j] = (sh[j] - old[j]) * old[S_ + j];
        }
        float *am = s->adam.m, *av = s->adam.v;
        if (h->per_layer) {
            for (int l = 0; l < h->L; l++) {
                const int64_t K = h->k[l], o = h->k_off[l], w = h->o_w1[l];
                refold_rows(blk + w, blk + h->o_b1[l], K, K, a + o, c + o, am + w, av + w);
            }
        } else if (h->H > 0) {
            const int64_t w = h->o_w[0];
            refold_rows(blk + w, blk + h->o_b[0], S_, h->a[0], a, c, am + w, av + w);
        } else {
            /* the Bayesian softmax reads t: its means as above (bias row D = S), and its
             * posterior sds scale with them, sigma' = a sigma (rho = softplus^-1(sigma)) */
            const int64_t C = s->C, w = s->bs.o_mu;
            refold_rows(blk + w, s->bs.bias ? blk + w + S_ * C : NULL, S_, C, a, c, am + w, av + w);
            float *rho = blk + s->bs.o_rho;
            for (int64_t j = 0; j < S_; j++)
                for (int64_t k = 0; k < C; k++) {
                    const double sg = a[j] * log1p(exp((double)rho[j * C + k]));
                    rho[j * C + k] = (float)(sg > 20 ? sg : log(expm1(fmax(sg, 1e-30))));
                }
        }
    }
    datm_free(old);
    datm_free(a);
    return rc;
}

/* grad += lam * value over parameter view v. */
static void l2_view(datm_params *p, int v, float lam)
{
    const int64_t o = p->views[v].offset, n = datm_params_len(p, v);
    for (int64_t i = 0; i < n; i++) p->grad[o + i] += lam * p->value[o + i];
}

/* sqrt(sum (a - b)^2) over n entries (b NULL: the norm of a). */
static double dist2(const float *a, const float *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)a[i] - (b ? (double)b[i] : 0.0);
        s += d * d;
    }
    return sqrt(s);
}

/* step_log: one line for the supervised mini-batch just trained; enc0/head0 hold the
 * parameters before it, nll0/bad0/docs0/cut0 the running counters before it. */
static void sdatm_step_log(const sdatm *s, const datm_train_ctx *ctx, const datm_train_stats *st,
                           double nll0, int64_t bad0, int64_t docs0, int64_t cut0)
{
    const datm_adam *ae = enc_adam(s), *ah = &s->adam;
    if (s->tr_docs <= docs0) {   /* sdatm_track started a new epoch's counters in this batch */
        nll0 = 0;
        bad0 = docs0 = 0;
    }
    const double n = (double)DATM_MAX(s->tr_docs - docs0, 1);
    datm_info("%s step %lld (epoch %lld): loss %.6g loglik %.6g | head NLL %.4g error %.4g | "
              "encoder |g| %.4g |x| %.4g |dx| %.4g | head |g| %.4g |dx| %.4g | clipped %lld",
              s->base.ops->name, (long long)ctx->iteration, (long long)ctx->epoch + 1, st->loss,
              st->loglik, (s->tr_nll - nll0) / n, (double)(s->tr_bad - bad0) / n,
              dist2(whai_encoder_grad(s->w), NULL, ae->size), dist2(enc_params(s), NULL, ae->size),
              dist2(enc_params(s), s->sl_enc, ae->size), dist2(s->hp.grad, NULL, ah->size),
              dist2(s->hp.value, s->sl_head, ah->size), (long long)(ae->n_clipped - cut0));
}

/* Running label NLL and error of the head on the training mini-batches (theta and W sampled,
 * before the batch's head step), logged once per supervised epoch: the training-side error
 * that separates an under-trained head from one that overfits. */
static void sdatm_track(sdatm *s, const datm_train_ctx *ctx, int64_t B, const int32_t *y)
{
    if (ctx->epoch != s->tr_epoch) {
        if (s->tr_docs > 0) {
            const double e = (double)s->tr_bad / (double)s->tr_docs;
            datm_info("%s epoch %lld: head on the training batches: label NLL %.4g per "
                      "document, error %.4g", s->base.ops->name, (long long)s->tr_epoch + 1,
                      s->tr_nll / (double)s->tr_docs, e);
            if (!s->tr_warned && sdatm_diverged(s->tr_best, e)) {
                s->tr_warned = 1;   /* once per run: the epochs after it repeat the story */
                datm_warn("%s epoch %lld: the head's error on its training batches jumped to "
                          "%.4g from %.4g (its lowest so far): the supervised training has "
                          "probably diverged, and later epochs will not recover it. A known "
                          "cause is model.head_sd_floor 0 (huge input scales for topics unused "
                          "when the head's standardisation was taken); else shorter runs, "
                          "smaller steps (model.lr, model.head_lr) or model.lr_decay_to < 1 "
                          "may avoid it", s->base.ops->name, (long long)s->tr_epoch + 1, e,
                          s->tr_best);
            }
            if (!(e >= s->tr_best)) s->tr_best = e;   /* NAN at first: any e is lower */
        }
        s->tr_epoch = ctx->epoch;
        s->tr_nll = 0;
        s->tr_bad = s->tr_docs = 0;
    }
    const int64_t C = s->C;
    for (int64_t i = 0; i < B; i++) {
        const float *p = s->P + i * C;
        int64_t best = 0;
        for (int64_t c = 1; c < C; c++)
            if (p[c] > p[best]) best = c;
        s->tr_bad += best != y[i];
        s->tr_nll -= log(fmax((double)p[y[i]], 1e-30));
    }
    s->tr_docs += B;
}

void sdatm_dropout_apply(uint64_t seed, int64_t iteration, int step, double p, int64_t n,
                         const float *feat, float *mask, float *out)
{
    datm_rng r;
    datm_rng_init2(&r, seed, DATM_STREAM_BATCH, (uint64_t)iteration,
                   SDATM_DROP_STREAM | ((uint64_t)step << 16));
    const float keep = (float)(1.0 - p), inv = 1.0f / keep;
    datm_rng_uniform_fill_f(&r, mask, (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        mask[i] = mask[i] < keep ? inv : 0.0f;
        out[i] = feat[i] * mask[i];
    }
}

/* head_dropout > 0: the softmax's input of head step j of this iteration, dropped
 * (sdatm_dropout_apply); the mask stays in dmask for the backward. Returns fdrop (B, O). */
static const float *head_dropout(sdatm *s, const datm_train_ctx *ctx, int j, int64_t B,
                                 const float *feat)
{
    sdatm_dropout_apply(ctx->seed, ctx->iteration, j, s->drop, B * s->mh.out_dim, feat,
                        s->dmask, s->fdrop);
    return s->fdrop;
}

/* Diagnostics logged once per epoch (both phases): the mean Weibull shape k of each layer
 * on the training batches and the shares at k_min / k_max (sample noise: the coefficient of
 * variation of a Weibull is ~1.2 / k), and in the supervised phase the size of the label
 * term's gradient on theta(l) against the total one (ELBO + label) that the encoder's
 * backward formed, both of the previous mini-batch (ws->dtheta still holds it). */
static void sdatm_diag(sdatm *s, const datm_train_ctx *ctx, const datm_encoder_ws *ws)
{
    const int L = s->L;
    if (ctx->epoch != s->dg_epoch) {
        if (s->dg_epoch >= 0 && s->dg_n[1] > 0) {
            char buf[512];
            int o = 0;
            for (int l = 1; l <= L && o < (int)sizeof buf - 96; l++) {
                const double n = (double)DATM_MAX(s->dg_n[l], 1);
                o += snprintf(buf + o, sizeof buf - (size_t)o, " | l%d k %.3g (%.2g at min, "
                              "%.2g at max)", l, s->dg_k[l] / n, (double)s->dg_lo[l] / n,
                              (double)s->dg_hi[l] / n);
                if (s->dg_gt[l] > 0)
                    o += snprintf(buf + o, sizeof buf - (size_t)o, " |label|/|total| %.3g",
                                  sqrt(s->dg_gl[l] / s->dg_gt[l]));
            }
            /* grad_clip_rms > 0: the share of gradient entries clipped in the epoch; a burst
             * marks steps whose gradients jumped far above their history */
            const datm_adam *ad[2] = {enc_adam(s), &s->adam};
            for (int j = 0; j < 2 && o < (int)sizeof buf - 64; j++)
                if (ad[j]->rms_clip > 0 && ad[j]->t > s->dg_t[j])
                    o += snprintf(buf + o, sizeof buf - (size_t)o, " | %s clipped %.3g%%",
                                  j ? "head" : "enc", 100.0 * (double)(ad[j]->n_clipped - s->dg_cut[j]) /
                                  ((double)(ad[j]->t - s->dg_t[j]) * (double)ad[j]->size));
            datm_info("%s epoch %lld encoder:%s", s->base.ops->name, (long long)s->dg_epoch + 1,
                      buf);
        }
        s->dg_epoch = ctx->epoch;
        s->dg_cut[0] = enc_adam(s)->n_clipped;
        s->dg_cut[1] = s->adam.n_clipped;
        s->dg_t[0] = enc_adam(s)->t;
        s->dg_t[1] = s->adam.t;
        for (int l = 0; l <= DATM_MAX_LAYERS; l++) {
            s->dg_n[l] = s->dg_lo[l] = s->dg_hi[l] = 0;
            s->dg_k[l] = s->dg_gl[l] = s->dg_gt[l] = 0;
        }
    }
    const datm_encoder_opts *eo = &encoder(s)->o;
    const float kmin = (float)eo->k_min * 1.0001f, kmax = (float)eo->k_max * 0.9999f;
    const int64_t B = ws->B, PB = s->dg_prevB;
    for (int l = 1; l <= L; l++) {
        const float *k = ws->k[l];
        double acc = 0;
        int64_t lo = 0, hi = 0;
        for (int64_t i = 0, n = B * s->K[l]; i < n; i++) {
            acc += k[i];
            lo += k[i] <= kmin;
            hi += k[i] >= kmax;
        }
        s->dg_k[l] += acc;
        s->dg_lo[l] += lo;
        s->dg_hi[l] += hi;
        s->dg_n[l] += B * s->K[l];
        if (PB > 0 && ctx->epoch > s->unsup_epochs) {
            /* previous batch: s->dtheta = label gradient, ws->dtheta = total */
            double gl = 0, gt = 0;
            for (int64_t i = 0, n = PB * s->K[l]; i < n; i++) {
                gl += (double)s->dtheta[l][i] * s->dtheta[l][i];
                gt += (double)ws->dtheta[l][i] * ws->dtheta[l][i];
            }
            s->dg_gl[l] += gl;
            s->dg_gt[l] += gt;
        }
    }
    s->dg_prevB = B;
}

/* Step 2 of sdatm.h: head forward on the encoder's theta sample with one W ~ q(W), label NLL
 * and KL(q(W)||p(W)) / N, backward to the head (then its Adam step) and to theta. */
static int sdatm_label_term(void *user, const datm_batch *b, const datm_train_ctx *ctx,
                            const datm_encoder_ws *ws, const float *const **dtheta, double *loss,
                            datm_error *err)
{
    sdatm *s = user;
    *dtheta = NULL;
    *loss = 0;
    sdatm_diag(s, ctx, ws);
    if (ctx->epoch < s->unsup_epochs) return DATM_OK;
    if (!b->labels)
        return datm_error_set(err, DATM_E_INVALID, "%s: mini-batch without labels",
                              s->base.ops->name);
    if (s->standardize && !datm_mlp_head_norm_is_set(&s->mh, s->hp.value)) {
        int rc = sdatm_set_norm(s, err);
        if (rc) return rc;
    }
    const int64_t B = b->X->n_rows;
    const int L = s->L;
    const float *th[DATM_MAX_LAYERS];
    float *dth[DATM_MAX_LAYERS];
    for (int l = 1; l <= L; l++) { th[l - 1] = ws->theta[l]; dth[l - 1] = s->dtheta[l]; }
    if (s->input_mean) {
        /* head_input mean: the head sees E[theta(l) | theta(l+1)] = lambda Gamma(1 + 1/k) of
         * this forward (a deterministic input, like prediction with predict_samples 0). Its
         * gradient g is handed to the encoder at the sample theta = lambda (-ln(1-u))^(1/k):
         * E[g dtheta/dlambda] = g Gamma(1 + 1/k) and E[g dtheta/dk] = g dE[theta]/dk, so the
         * encoder gets an unbiased estimate of the gradient through the mean. */
        for (int l = 1; l <= L; l++) {
            const float *lam = ws->lam[l], *k = ws->k[l];
            float *mt = s->thmean[l];
            const int64_t n = B * s->K[l];
            /* entries are independent; tgamma is slow enough to be worth the team */
#pragma omp parallel for schedule(static) if (n >= 8192 && !omp_in_parallel())
            for (int64_t i = 0; i < n; i++)
                mt[i] = lam[i] * (float)tgamma(1.0 + 1.0 / (double)k[i]);
            th[l - 1] = mt;
        }
    }
    const double kls = s->w_kl_weight / (double)s->N *
                       ramp(ctx->iteration, s->unsup_epochs * s->bpe + 1, s->warmup_epochs, s->bpe);
    double nll0 = 0, klW0 = 0;
    /* head_steps Adam steps of the head on this batch's theta sample, each with its own
     * W ~ q(W); the label gradient on theta (for the encoder) is the first step's, taken at the
     * same parameters as the encoder's own gradient, so head_steps 1 is the plain joint step */
    for (int j = 0; j < s->head_steps; j++) {
        datm_params_zero_grad(&s->hp);
        const float *feat = datm_mlp_head_forward_f32(&s->mh, s->hp.value, B, th, s->h_cache);
        datm_rng r;
        if (s->drop > 0) feat = head_dropout(s, ctx, j, B, feat);
        datm_rng_init2(&r, ctx->seed, DATM_STREAM_BATCH, (uint64_t)ctx->iteration,
                       SDATM_W_STREAM | ((uint64_t)j << 16));
        datm_rng_normal_fill_f(&r, s->eps, (size_t)(s->bs.R * s->C));
        datm_bsm_weights_f32(&s->bs, s->hp.value, s->eps, s->W);
        datm_bsm_forward_f32(&s->bs, B, feat, s->W, s->P);
        const double nll = datm_bsm_nll_f32(&s->bs, B, s->P, b->labels);
        datm_bsm_backward_f32(&s->bs, B, s->hp.value, s->hp.grad, feat, s->eps, s->W, s->P,
                              b->labels, s->label_weight / (double)B, s->b_work, s->ds, 0.0f);
        const double klW = datm_bsm_kl_f32(&s->bs, s->hp.value, s->hp.grad, kls);
        if (s->drop > 0)
            for (int64_t i = 0, n = B * s->mh.out_dim; i < n; i++) s->ds[i] *= s->dmask[i];
        datm_mlp_head_backward_f32(&s->mh, s->hp.value, s->hp.grad, B, th, s->h_cache, s->ds,
                                   s->h_work, j == 0 ? dth : NULL, 0.0f);
        if (s->head_l2 > 0) {
            /* (head_l2 / 2) ||W_m||^2 on the MLP weight matrices (not biases, not mu/rho) */
            const float lam = (float)s->head_l2;
            for (int l = 0; l < s->mh.L; l++)
                if (s->mh.per_layer) l2_view(&s->hp, s->mh.v_w1[l], lam);
            for (int h = 0; h < s->mh.H; h++) l2_view(&s->hp, s->mh.v_w[h], lam);
        }
        if (j == 0) {
            nll0 = nll;
            klW0 = klW;
            sdatm_track(s, ctx, B, b->labels);
        }
        int64_t bad = datm_adam_step(&s->adam, s->hp.value, s->hp.grad);
        if (bad || !isfinite(nll))
            return datm_error_set(err, DATM_E_NUMERIC, "%s: label NLL %g, %lld non-finite head "
                                  "gradients", s->base.ops->name, nll, (long long)bad);
    }
    *dtheta = (const float *const *)s->dtheta;
    *loss = s->label_weight * nll0 / (double)B + kls * klW0;
    return DATM_OK;
}

/* ---- the schema ---- */

/* WHAI's schema edits shared by both variants (variant_schema_build). */
static const variant_schema_edit sdatm_edits[] = {
    {"kl_warmup_epochs", "10",
     "KL terms ramp linearly from 0 to their weight over this many epochs: those of theta "
     "from the start, KL(q(W) || p(W)) from the first supervised epoch (paper sec. IV-B, "
     "after Sonderby et al.; length not given)"},
    {"eval_globals", "fixed", NULL}};

/* Keys of the supervised part (both variants; the table is SDATM_PARAMS in sdatm.h). */
static const datm_param_schema sdatm_extra[] = {DATM_PARAMS_ROWS(SDATM_PARAMS)};
DATM_PARAMS_GETTER(sdatm_params, SDATM_PARAMS)
DATM_PARAMS_GETTER(sdatm_mlp_params, SDATM_MLP_PARAMS)

void sdatm_schema_build(datm_param_schema *dst, const datm_param_schema *variant_extra)
{
    /* variant_schema_build takes one extra table: the shared keys, then the variant's */
    datm_param_schema extra[VARIANT_SCHEMA_CAP];
    int n = 0;
    for (int i = 0; sdatm_extra[i].key; i++) extra[n++] = sdatm_extra[i];
    for (int i = 0; variant_extra && variant_extra[i].key; i++) {
        DATM_ASSERT(n < VARIANT_SCHEMA_CAP - 1);
        extra[n++] = variant_extra[i];
    }
    memset(&extra[n], 0, sizeof extra[n]);
    variant_schema_build(dst, VARIANT_SCHEMA_CAP, datm_whai_schema, sdatm_edits,
                         (int)DATM_COUNTOF(sdatm_edits), extra);
}

/* ---- creation ---- */

/* The supervised part's rules on the options alone (WHAI's are whai_check_variant's). */
static int sdatm_check_own(const datm_config *cfg, sdatm_head_kind kind, datm_error *err)
{
    whai_params wp;
    sdatm_params p;
    whai_params_get(cfg, &wp);
    sdatm_params_get(cfg, &p);
    /* the label term and the head train only after the unsupervised epochs (paper sec.
     * IV-B): with none left the run would report the error rate of an untrained head */
    const datm_config *train = datm_config_train(cfg);
    const int64_t epochs = train ? datm_config_int(train, "epochs") : 0;
    if (train && p.unsup_epochs >= epochs)
        return datm_error_set(err, DATM_E_INVALID, "model.unsup_epochs: %lld is not below "
                              "train.epochs (%lld): the head and the label term train only "
                              "after the unsupervised epochs, so they would not train at all; "
                              "lower it or raise train.epochs",
                              (long long)p.unsup_epochs, (long long)epochs);
    int per_layer = 0, H = 0;
    if (kind == SDATM_HEAD_MLP) {
        sdatm_mlp_params mp;
        sdatm_mlp_params_get(cfg, &mp);
        H = mp.head_hidden.n;
        per_layer = mp.head_g1;
        if (H > DATM_MLP_MAX_HIDDEN)
            return datm_error_set(err, DATM_E_INVALID, "model.head_hidden: %d layers (max %d)",
                                  H, DATM_MLP_MAX_HIDDEN);
    }
    if (wp.enc_input_keep == 1.0 && strcmp(p.head_test_input, "full"))
        return datm_error_set(err, DATM_E_INVALID, "model.head_test_input: %s needs "
                              "model.enc_input_keep < 1 (it is 1: the documents are not "
                              "thinned)", p.head_test_input);
    /* eval_globals chain advances copies of the chain on mini-batches drawn from all training
     * rows, validation documents included (val_fraction > 0 holds at least one out, or
     * sdatm_val_split refuses it) */
    if (p.val_fraction > 0 && !strcmp(wp.eval_globals, "chain"))
        return datm_error_set(err, DATM_E_INVALID, "model.eval_globals: chain needs "
                              "model.val_fraction 0 (its mini-batches would read the validation "
                              "documents); use fixed");
    /* with the trajectory ensemble, validation only scores the prediction: one restored
     * state is not what the ensemble predicts from, so nothing is kept or stopped */
    if (p.predict_snapshots > 0 && p.val_fraction > 0 && p.val_patience > 0)
        return datm_error_set(err, DATM_E_INVALID, "model.val_patience: %lld needs "
                              "model.predict_snapshots 0 (it is %lld: with the trajectory "
                              "ensemble the validation checks only score the prediction, "
                              "nothing stops)", (long long)p.val_patience,
                              (long long)p.predict_snapshots);
    if (p.head_norm_every > 0 && !p.head_standardize)
        return datm_error_set(err, DATM_E_INVALID, "model.head_norm_every: %lld needs "
                              "model.head_standardize true", (long long)p.head_norm_every);
    if (p.head_norm_every > 0 && !per_layer && H == 0 && !p.head_bias)
        return datm_error_set(err, DATM_E_INVALID, "model.head_norm_every: %lld needs "
                              "model.head_bias true on a linear head (the shift is folded into "
                              "the intercept)", (long long)p.head_norm_every);
    return DATM_OK;
}

int sdatm_check(const datm_config *cfg, const datm_model_ops *ops, sdatm_head_kind kind,
                datm_error *err)
{
    const whai_variant v = {.ops = ops};
    int rc = sdatm_check_own(cfg, kind, err);
    return rc ? rc : whai_check_variant(cfg, &v, err);
}

int sdatm_create(const datm_config *cfg, const datm_run_info *info, const datm_model_ops *ops,
                 sdatm_head_kind kind, datm_model **out, datm_error *err)
{
    *out = NULL;
    if (info->n_classes < 2 || !info->train_labels)
        return datm_error_set(err, DATM_E_INVALID, "%s needs a labelled training set with >= 2 "
                              "classes (data set has %d)", ops->name, info->n_classes);
    int rc0 = sdatm_check_own(cfg, kind, err);   /* whai_create_variant checks the rest */
    if (rc0) return rc0;
    sdatm *s = datm_alloc(sizeof *s, err);
    if (!s) return DATM_E_NOMEM;
    s->base.ops = ops;
    whai_params wp;
    sdatm_params p;
    whai_params_get(cfg, &wp);
    sdatm_params_get(cfg, &p);
    const whai_variant v = {.ops = ops, .hooks = {.extra = sdatm_label_term, .extra_user = s}};
    datm_model *wm = NULL;
    int rc = whai_create_variant(cfg, info, &v, &wm, err);
    if (rc) { datm_free(s); return rc; }
    s->w = (whai_model *)wm;
    s->L = s->w->L;
    for (int l = 0; l <= s->L; l++) s->K[l] = s->w->K[l];
    s->N = s->w->N;
    s->C = info->n_classes;
    s->bpe = s->w->bpe;
    s->cap = s->w->B;
    s->unsup_epochs = p.unsup_epochs;
    s->warmup_epochs = wp.kl_warmup_epochs;
    s->label_weight = p.label_weight;
    s->w_kl_weight = p.w_kl_weight;
    s->standardize = p.head_standardize;
    s->head_steps = (int)p.head_steps;
    s->input_mean = !strcmp(p.head_input, "mean");
    const char *ti = p.head_test_input;
    s->test_scale = strcmp(ti, "full") ? s->w->input_keep : 1.0;
    s->test_draws = strcmp(ti, "draws") ? 0 : (int)p.head_test_draws;
    s->head_l2 = p.head_l2;
    s->drop = p.head_dropout;
    s->tr_epoch = -1;
    s->tr_best = NAN;
    s->dg_epoch = -1;
    s->val_every = p.val_every;
    s->norm_every = p.head_norm_every;
    s->step_log = p.step_log;
    s->sd_floor = p.head_sd_floor;
    s->total_iters = info->total_iters;
    rc = sdatm_val_split(&s->val, info->train_labels, info->n_train, s->C,
                         p.val_fraction, p.val_patience,
                         info->seed, err);
    if (!rc && s->val.n) {
        /* held-out documents do not train: TLASGR's rho = N / B and KL(W) / N count the rest */
        s->N = s->val.N - s->val.n;
        whai_set_n_train(s->w, s->N);
        rc = datm_csr_select_rows(info->train, s->val.rows, s->val.n, &s->Xval, err);
        s->yval = rc ? NULL : datm_alloc_array((size_t)s->val.n, sizeof(int32_t), err);
        s->val_pred = rc ? NULL : datm_alloc_array((size_t)s->val.n, sizeof(int32_t), err);
        s->val_probs = rc ? NULL : datm_alloc_array((size_t)(s->val.n * s->C), sizeof(float), err);
        s->keep = rc ? NULL : datm_alloc_array((size_t)s->cap, sizeof(int64_t), err);
        s->keep_ids = rc ? NULL : datm_alloc_array((size_t)s->cap, sizeof(int64_t), err);
        s->keep_lab = rc ? NULL : datm_alloc_array((size_t)s->cap, sizeof(int32_t), err);
        if (!rc && (!s->yval || !s->val_pred || !s->val_probs || !s->keep || !s->keep_ids ||
                    !s->keep_lab))
            rc = DATM_E_NOMEM;
        for (int64_t i = 0; !rc && i < s->val.n; i++) s->yval[i] = info->train_labels[s->val.rows[i]];
        if (!rc)
            datm_info("%s: early stopping on %lld validation documents (model.val_fraction %g, "
                      "stratified by class), %lld train", ops->name, (long long)s->val.n,
                      p.val_fraction, (long long)s->N);
    }

    /* classifier head: feature map + Bayesian softmax */
    const int L = s->L;
    int transform = datm_feat_transform_parse(p.head_transform);
    int per_layer = 0, H = 0;
    int64_t a[DATM_MLP_MAX_HIDDEN] = {0};
    if (kind == SDATM_HEAD_MLP) {
        sdatm_mlp_params mp;
        sdatm_mlp_params_get(cfg, &mp);
        const int64_t *hh = mp.head_hidden.v;
        H = mp.head_hidden.n;
        for (int j = 0; j < H && j < DATM_MLP_MAX_HIDDEN; j++) a[j] = hh[j];
        per_layer = mp.head_g1;
    }
    if (!rc && L > DATM_MAX_LAYERS)
        rc = datm_error_set(err, DATM_E_INVALID, "%s: %d layers (the head takes at most %d)",
                            ops->name, L, DATM_MAX_LAYERS);
    if (!rc) rc = datm_mlp_head_add_params(&s->mh, &s->hp, "head", L, s->K + 1, transform,
                                           per_layer, H, a, err);
    if (!rc) rc = datm_bsm_add_params(&s->bs, &s->hp, "softmax", s->mh.out_dim, s->C,
                                      p.head_bias, err);
    if (!rc) rc = datm_params_alloc(&s->hp, err);
    const int n_snap = (int)p.predict_snapshots;
    s->snap_every = p.snapshot_every;
    s->lr_to = p.lr_decay_to;
    if (!rc && n_snap > 0 && s->val.n) {
        s->val.monitor_only = 1;
        datm_info("%s: the validation checks score the prediction of the trajectory ensemble "
                  "(model.predict_snapshots %d); no state is restored", ops->name, n_snap);
    }
    if (!rc) {
        int64_t rows[DATM_MAX_LAYERS + 1] = {0}, cols[DATM_MAX_LAYERS + 1] = {0};
        for (int l = 2; l <= L; l++) { rows[l] = s->K[l - 1]; cols[l] = s->K[l]; }
        rc = sdatm_ens_init(&s->ens, n_snap, encoder(s)->params.size, s->hp.size, L, rows, cols,
                            err);
    }
    if (!rc) {
        datm_rng rng;
        datm_rng_init(&rng, info->seed, DATM_STREAM_INIT, 7000);
        datm_mlp_head_init_values(&s->mh, &s->hp, &rng);
        datm_bsm_init_values(&s->bs, &s->hp, &rng, p.w_mu_sd, p.w_sigma0);
        rc = datm_adam_init(&s->adam, s->hp.size, p.head_lr, wp.beta1, wp.beta2, wp.adam_eps,
                            err);
        s->adam.clip = wp.grad_clip;
        s->adam.rms_clip = wp.grad_clip_rms;
        s->lr_enc0 = enc_adam(s)->lr;
        s->lr_head0 = s->adam.lr;
    }
    if (!rc && s->step_log) {
        s->sl_enc = datm_alloc_array((size_t)enc_adam(s)->size, sizeof(float), err);
        s->sl_head = datm_alloc_array((size_t)s->adam.size, sizeof(float), err);
        if (!s->sl_enc || !s->sl_head) rc = err ? err->code : DATM_E_NOMEM;
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
        if (s->drop > 0) {
            s->dmask = datm_alloc_array((size_t)(B * s->mh.out_dim), sizeof(float), err);
            s->fdrop = datm_alloc_array((size_t)(B * s->mh.out_dim), sizeof(float), err);
        }
        int ok = s->h_cache && s->h_work && s->W && s->eps && s->P && s->b_work && s->ds &&
                 (s->drop <= 0 || (s->dmask && s->fdrop));
        for (int l = 1; l <= L && ok; l++) {
            s->dtheta[l] = datm_alloc_array((size_t)(B * s->K[l]), sizeof(float), err);
            s->thmean[l] = datm_alloc_array((size_t)(B * s->K[l]), sizeof(float), err);
            ok = s->dtheta[l] && s->thmean[l];
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

/* ---- WHAI's operations on the inner model ---- */

static int predict_impl(const sdatm *s, const datm_csr *docs, uint64_t seed, int nsamples,
                        float *probs, int verbose, datm_error *err);

/* The best state so far (what prediction reads: encoder weights, decoder, head) -> snapshot. */
static int snapshot_take(sdatm *s, datm_error *err)
{
    const datm_gbn *g = whai_decoder(s->w);
    const int64_t ne = encoder(s)->params.size;
    if (!s->best_enc) {
        s->best_enc = datm_alloc_array((size_t)ne, sizeof(float), err);
        s->best_head = datm_alloc_array((size_t)s->hp.size, sizeof(float), err);
        if (!s->best_enc || !s->best_head) return DATM_E_NOMEM;
        int rc = datm_gbn_create(g->L, g->K, &g->o, 0, &s->best_gbn, err);
        if (rc) return rc;
    }
    memcpy(s->best_enc, enc_params(s), (size_t)ne * sizeof(float));
    memcpy(s->best_head, s->hp.value, (size_t)s->hp.size * sizeof(float));
    datm_gbn_copy(s->best_gbn, g);
    return DATM_OK;
}

/* The best state's snapshot in a checkpoint (group SNAPSHOT_GROUP: encoder and head as flat
 * arrays, the decoder's views under "decoder"), so that a resumed run restores the same best
 * state at its end as the uninterrupted run would. Written only while training goes on (after
 * a stop the model's own state is the best). */
#define SNAPSHOT_GROUP "early_stopping_best"

static int snapshot_save(const sdatm *s, struct datm_h5 *g, datm_error *err)
{
    datm_h5 *gs = NULL, *gd = NULL;
    const int64_t ne[1] = {encoder(s)->params.size}, nh[1] = {s->hp.size};
    int rc = datm_h5_group(g, SNAPSHOT_GROUP, 1, &gs, err);
    if (!rc) rc = datm_h5_write_f32(gs, "encoder", s->best_enc, 1, ne, err);
    if (!rc) rc = datm_h5_write_f32(gs, "head", s->best_head, 1, nh, err);
    if (!rc) rc = datm_h5_group(gs, "decoder", 1, &gd, err);
    if (!rc) rc = dlda_save_gbn(s->best_gbn, gd, err);
    datm_h5_close(&gd);
    datm_h5_close(&gs);
    return rc;
}

/* Reads the snapshot written by snapshot_save (allocating it like snapshot_take). */
static int snapshot_load(sdatm *s, struct datm_h5 *g, datm_error *err)
{
    int rc = snapshot_take(s, err);
    datm_h5 *gs = NULL, *gd = NULL;
    const int64_t ne[1] = {encoder(s)->params.size}, nh[1] = {s->hp.size};
    if (!rc) rc = datm_h5_group(g, SNAPSHOT_GROUP, 0, &gs, err);
    if (!rc) rc = datm_h5_read_f32(gs, "encoder", s->best_enc, 1, ne, err);
    if (!rc) rc = datm_h5_read_f32(gs, "head", s->best_head, 1, nh, err);
    if (!rc) rc = datm_h5_group(gs, "decoder", 0, &gd, err);
    if (!rc) rc = dlda_load_gbn(s->best_gbn, gd, err);
    datm_h5_close(&gd);
    datm_h5_close(&gs);
    return rc;
}

/* Snapshot -> model (optimiser moments are left as they are: training does not go on). */
static void snapshot_restore(sdatm *s)
{
    if (!s->best_enc) return;
    whai_set_encoder_params(s->w, s->best_enc);
    memcpy(s->hp.value, s->best_head, (size_t)s->hp.size * sizeof(float));
    whai_set_decoder(s->w, s->best_gbn);
}

/* A validation check after 1-based epoch `epoch`: error of the prediction at the posterior
 * means on the held-out documents; keeps the best state; on a stop or at the run's last
 * iteration, puts the best state back. */
static int sdatm_val_check(sdatm *s, const datm_train_ctx *ctx, int64_t epoch, int last,
                           datm_error *err)
{
    const char *name = s->base.ops->name;
    int rc = predict_impl(s, &s->Xval, ctx->seed, 0, s->val_probs, 0, err);
    if (rc) return rc;
    datm_argmax_rows(s->val_probs, s->val.n, (int)s->C, s->val_pred);
    const double e = datm_error_rate(s->yval, s->val_pred, s->val.n);
    sdatm_val_verdict v;
    rc = sdatm_val_record(&s->val, epoch, e, &v, err);
    if (rc) return rc;
    const int64_t bi = s->val.best;
    if (s->val.monitor_only) {   /* trajectory ensemble: scored, never kept or restored */
        datm_info("%s epoch %lld: validation error %.9g (%lld documents, %d state%s), lowest "
                  "%.9g at epoch %lld", name, (long long)epoch, e, (long long)s->val.n,
                  s->ens.n > 0 ? s->ens.n : 1, s->ens.n > 1 ? "s" : "", s->val.error[bi],
                  (long long)s->val.epoch[bi]);
        return DATM_OK;
    }
    if (v == SDATM_VAL_BEST) rc = snapshot_take(s, err);
    if (rc) return rc;
    datm_info("%s epoch %lld: validation error %.9g (%lld documents), best %.9g at epoch %lld",
              name, (long long)epoch, e, (long long)s->val.n, s->val.error[bi],
              (long long)s->val.epoch[bi]);
    if (v == SDATM_VAL_STOP || (last && v != SDATM_VAL_BEST)) {
        snapshot_restore(s);
        datm_info("%s: restored the state of epoch %lld (validation error %.9g)", name,
                  (long long)s->val.epoch[bi], s->val.error[bi]);
    }
    if (v == SDATM_VAL_STOP && !last) {
        s->val.stopped_epoch = epoch;
        datm_info("%s: early stop after epoch %lld (%lld checks without a better validation "
                  "error); the remaining %lld iterations do not train", name, (long long)epoch,
                  (long long)s->val.patience, (long long)(s->total_iters - ctx->iteration));
    }
    return DATM_OK;
}

int sdatm_diverged(double best, double now)
{
    return isfinite(best) && isfinite(now) && now > best + 0.2 && now > 3.0 * best;
}

double sdatm_lr_factor(int64_t iteration, int64_t first_sup, int64_t total, double to)
{
    if (!(to < 1.0) || iteration < first_sup || total < first_sup) return 1.0;
    /* f = 0 at the first supervised iteration, 1 at the last */
    const double f = total > first_sup
                         ? (double)(iteration - first_sup) / (double)(total - first_sup) : 1.0;
    const double pi = 3.14159265358979323846;
    return to + (1.0 - to) * 0.5 * (1.0 + cos(pi * (f < 1.0 ? f : 1.0)));
}

int sdatm_train_batch(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                      datm_train_stats *st, datm_error *err)
{
    sdatm *s = S(m);
    if (s->lr_to < 1.0) {
        /* lr_decay_to: the steps of this iteration (a function of the iteration only, so a
         * resumed run takes the same ones) */
        const double f = sdatm_lr_factor(ctx->iteration, s->unsup_epochs * s->bpe + 1,
                                         s->total_iters, s->lr_to);
        whai_set_lr(s->w, s->lr_enc0 * f);
        s->adam.lr = s->lr_head0 * f;
    }
    if (s->val.stopped_epoch) {
        /* early-stopped: the restored best state stays; the engine's curves repeat the last
         * trained batch's statistics */
        *st = s->last_st;
        return DATM_OK;
    }
    /* validation documents never train (neither the topic model nor the head) */
    const int64_t B = b->X->n_rows;
    int64_t nk = 0;
    for (int64_t i = 0; s->val.n && i < B; i++)
        if (!s->val.is_val[b->doc_ids[i]]) s->keep[nk++] = i;
    if (!s->val.n) nk = B;
    int rc = DATM_OK;
    /* step_log in the supervised epochs: the state before the step */
    const int logging = s->step_log && ctx->epoch >= s->unsup_epochs && nk == B;
    const double nll0 = s->tr_nll;
    const int64_t bad0 = s->tr_bad, docs0 = s->tr_docs, cut0 = enc_adam(s)->n_clipped;
    if (logging) {
        memcpy(s->sl_enc, enc_params(s), (size_t)enc_adam(s)->size * sizeof(float));
        memcpy(s->sl_head, s->hp.value, (size_t)s->adam.size * sizeof(float));
    }
    if (nk == B) {
        rc = whai_train_batch(&s->w->base, b, ctx, st, err);
        if (!rc && logging) sdatm_step_log(s, ctx, st, nll0, bad0, docs0, cut0);
    } else if (nk > 0) {
        datm_csr Xk = {0};
        rc = datm_csr_select_rows(b->X, s->keep, nk, &Xk, err);
        for (int64_t i = 0; i < nk; i++) {
            s->keep_ids[i] = b->doc_ids[s->keep[i]];
            if (b->labels) s->keep_lab[i] = b->labels[s->keep[i]];
        }
        const datm_batch bk = {&Xk, s->keep_ids, b->labels ? s->keep_lab : NULL};
        if (!rc) rc = whai_train_batch(&s->w->base, &bk, ctx, st, err);
        datm_csr_free(&Xk);
    } else {
        *st = s->last_st;   /* a mini-batch of validation documents only: nothing trains */
    }
    if (rc) return rc;
    s->last_st = *st;
    const int64_t epoch = ctx->epoch + 1, sup = epoch - s->unsup_epochs;
    const int last = ctx->iteration == s->total_iters;
    const int epoch_end = s->bpe > 0 && ctx->iteration % s->bpe == 0;
    if (sup >= 1 && epoch_end && !last && s->norm_every > 0 && sup % s->norm_every == 0)
        rc = sdatm_head_norm_refresh(m, err);
    /* predict_snapshots: the states at the ends of supervised epochs E, E - every, ... (E the
     * run's last), ens.cap of them; taken before the validation check, which then scores the
     * ensemble including this epoch's state */
    const int64_t E = s->total_iters / s->bpe, back = E - epoch;
    if (!rc && s->ens.cap > 0 && sup >= 1 && epoch_end && back >= 0 &&
        back % s->snap_every == 0 && back / s->snap_every < s->ens.cap)
        sdatm_ens_take(&s->ens, epoch, enc_params(s), s->hp.value, phi_f(s));
    if (!rc && s->val.n && sup >= 1 && (last || (epoch_end && sup % s->val_every == 0)))
        rc = sdatm_val_check(s, ctx, epoch, last, err);
    return rc;
}

int sdatm_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                     datm_error *err)
{
    return whai_eval_begin(&S(m)->w->base, obs, seed, state, err);
}

int sdatm_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                    datm_error *err)
{
    return whai_eval_step(&S(m)->w->base, state, draw, acc, err);
}

void sdatm_eval_end(datm_model *m, void *state) { whai_eval_end(&S(m)->w->base, state); }

int sdatm_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                datm_theta *out, datm_error *err)
{
    return whai_infer(&CS(m)->w->base, docs, seed, nsamples, out, err);
}

int sdatm_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                  int64_t *cols)
{
    return whai_get_phi(&CS(m)->w->base, layer, phi, rows, cols);
}

int sdatm_n_layers(const datm_model *m) { return CS(m)->L; }

/* ---- prediction ---- */

/* theta[l] (N, K_l), l = 1..L (index 0 NULL); free with free_layers. */
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

/* Paper eq. (prediction): p(y | x) = mean over j of p(y | W(j), s(j)), W(j) ~ q(W),
 * theta(j) ~ q(theta | x); nsamples == 0: the posterior means of both. */
int sdatm_predict(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                  float *probs, datm_error *err)
{
    return predict_impl(CS(m), docs, seed, nsamples, probs, 1, err);
}

/* The state prediction reads: the model's own, or a held one of predict_snapshots. */
static sdatm_ens_state live_state(const sdatm *s)
{
    sdatm_ens_state st;
    memset(&st, 0, sizeof st);
    st.enc = enc_params(s);
    st.head = s->hp.value;
    for (int l = 2; l <= s->L; l++) st.phi[l] = phi_f(s)[l];
    return st;
}

/* Adds p(y | x) of every draw (nsamples joint draws of theta and W, or one at the means) on the
 * encoder's cached upward pass ec (made with st's encoder) of N documents to probs (N, C); th,
 * cache, W, eps, P are predict_impl's work space. */
static int predict_add(const sdatm *s, const sdatm_ens_state *st, const datm_encoder_cache *ec,
                       int64_t N, uint64_t seed, int nsamples, float *const *th, float *cache,
                       float *W, float *eps, float *P, float *probs, datm_error *err)
{
    const int64_t C = s->C, RC = s->bs.R * C, chunk = SDATM_PRED_CHUNK;
    const int draws = nsamples > 0 ? nsamples : 1;
    int rc = DATM_OK;
    for (int j = 0; j < draws && !rc; j++) {
        rc = datm_encoder_infer_cached(encoder(s), ec, st->phi, NULL, nsamples > 0 ? 1 : 0, seed,
                                       (uint64_t)j, 0, 0, th, err);
        if (rc) break;
        if (nsamples > 0) {
            datm_rng r;
            datm_rng_init2(&r, seed, DATM_STREAM_EVAL, (uint64_t)j, SDATM_W_STREAM);
            datm_rng_normal_fill_f(&r, eps, (size_t)RC);
        }
        datm_bsm_weights_f32(&s->bs, st->head, nsamples > 0 ? eps : NULL, W);
        for (int64_t r0 = 0; r0 < N; r0 += chunk) {
            const int64_t nb = DATM_MIN(chunk, N - r0);
            const float *tc[DATM_MAX_LAYERS];
            for (int l = 1; l <= s->L; l++) tc[l - 1] = th[l] + r0 * s->K[l];
            const float *feat = datm_mlp_head_forward_f32(&s->mh, st->head, nb, tc, cache);
            datm_bsm_forward_f32(&s->bs, nb, feat, W, P);
            float *dst = probs + r0 * C;
            for (int64_t i = 0; i < nb * C; i++) dst[i] += P[i];
        }
    }
    return rc;
}

/* sdatm_predict; verbose 0 for the validation checks (no log line). */
static int predict_impl(const sdatm *s, const datm_csr *docs, uint64_t seed, int nsamples,
                        float *probs, int verbose, datm_error *err)
{
    const int64_t N = docs->n_rows, C = s->C, RC = s->bs.R * C;
    const int draws = nsamples > 0 ? nsamples : 1;
    const int64_t chunk = SDATM_PRED_CHUNK;
    const double t0 = datm_time_now();
    float *th[DATM_MAX_LAYERS + 1] = {NULL};
    float *cache = datm_alloc_array((size_t)datm_mlp_head_cache_len(&s->mh, chunk), sizeof(float), err);
    float *W = datm_alloc_array((size_t)RC, sizeof(float), err);
    float *eps = datm_alloc_array((size_t)RC, sizeof(float), err);
    float *P = datm_alloc_array((size_t)(chunk * C), sizeof(float), err);
    datm_encoder_cache *ec = NULL;   /* the upward pass, shared by all draws */
    int rc = alloc_layers(s, N, th, err);
    if (!rc && (!cache || !W || !eps || !P)) rc = DATM_E_NOMEM;
    datm_csr Xt = {0};
    const datm_csr *Xe = NULL;
    if (!rc) memset(probs, 0, (size_t)(N * C) * sizeof(float));
    /* head_test_input draws: p(y | x) averaged over test_draws random thinnings too */
    const int thin_draws = s->test_draws > 0 ? s->test_draws : 1;
    /* predict_snapshots: p(y | x) averaged over the held states too (the model's own state
     * is the newest of them) */
    const int states = s->ens.n > 0 ? s->ens.n : 1;
    for (int t = 0; t < thin_draws && !rc; t++) {
        datm_csr_free(&Xt);
        if (s->test_draws > 0) {
            rc = sdatm_thin_docs(docs, s->w->input_keep, seed, (uint64_t)t, &Xt, err);
            Xe = &Xt;
        } else {
            rc = sdatm_test_docs(s, docs, &Xt, &Xe, err);
        }
        for (int j = 0; j < states && !rc; j++) {
            const sdatm_ens_state st = s->ens.n > 0 ? sdatm_ens_get(&s->ens, j) : live_state(s);
            datm_encoder_cache_destroy(&ec);
            rc = datm_encoder_cache_build(encoder(s), st.enc, Xe, 0, &ec, err);
            if (!rc) rc = predict_add(s, &st, ec, N, seed, nsamples, th, cache, W, eps, P, probs,
                                      err);
        }
    }
    if (!rc) {
        const float inv = 1.0f / (float)(draws * thin_draws * states);
        for (int64_t i = 0; i < N * C; i++) probs[i] *= inv;
        const double dt = datm_time_now() - t0;
        if (verbose)
            datm_info("%s predict: %lld documents x %d draws x %d input thinnings x %d states "
                      "(epochs %lld-%lld) in %.3g s (%.3g s per document)", s->base.ops->name,
                      (long long)N, draws, s->test_draws, states,
                      (long long)(s->ens.n ? s->ens.epoch[0] : 0),
                      (long long)(s->ens.n ? s->ens.epoch[s->ens.n - 1] : 0), dt,
                      N ? dt / (double)N : 0.0);
    }
    datm_encoder_cache_destroy(&ec);
    datm_csr_free(&Xt);
    free_layers(s, th);
    datm_free(cache);
    datm_free(W);
    datm_free(eps);
    datm_free(P);
    return rc;
}

/* ---- save / load: WHAI's state, then the head's views and Adam moments under "head" ---- */

int sdatm_save(const datm_model *m, struct datm_h5 *g, datm_error *err)
{
    const sdatm *s = CS(m);
    int rc = whai_save(&s->w->base, g, err);
    datm_h5 *gh = NULL;
    if (!rc) rc = datm_h5_group(g, "head", 1, &gh, err);
    const datm_params *p = &s->hp;
    for (int i = 0; i < p->n_views && !rc; i++) {
        const datm_param_view *v = &p->views[i];
        const int64_t dims[2] = {v->rows, v->cols};
        rc = datm_h5_write_f32(gh, v->name, p->value + v->offset, 2, dims, err);
    }
    const int64_t n[1] = {p->size};
    if (!rc) rc = datm_h5_write_f32(gh, "adam_m", s->adam.m, 1, n, err);
    if (!rc) rc = datm_h5_write_f32(gh, "adam_v", s->adam.v, 1, n, err);
    if (!rc) rc = datm_h5_write_scalar(gh, "adam_t", (double)s->adam.t, err);
    datm_h5_close(&gh);
    if (!rc && s->val.n) rc = sdatm_val_save(&s->val, g, err);
    if (!rc && s->val.n && s->best_enc && !s->val.stopped_epoch) rc = snapshot_save(s, g, err);
    if (!rc) rc = sdatm_ens_save(&s->ens, g, err);
    return rc;
}

int sdatm_load(datm_model *m, struct datm_h5 *g, datm_error *err)
{
    sdatm *s = S(m);
    int rc = whai_load(&s->w->base, g, err);
    datm_h5 *gh = NULL;
    if (!rc) rc = datm_h5_group(g, "head", 0, &gh, err);
    const datm_params *p = &s->hp;
    for (int i = 0; i < p->n_views && !rc; i++) {
        const datm_param_view *v = &p->views[i];
        const int64_t dims[2] = {v->rows, v->cols};
        rc = datm_h5_read_f32(gh, v->name, p->value + v->offset, 2, dims, err);
    }
    const int64_t n[1] = {p->size};
    double t = 0;
    if (!rc) rc = datm_h5_read_f32(gh, "adam_m", s->adam.m, 1, n, err);
    if (!rc) rc = datm_h5_read_f32(gh, "adam_v", s->adam.v, 1, n, err);
    if (!rc) rc = datm_h5_read_scalar(gh, "adam_t", &t, err);
    if (!rc) s->adam.t = (int64_t)t;
    datm_h5_close(&gh);
    if (!rc && s->val.n) rc = sdatm_val_load(&s->val, g, err);
    if (!rc && s->val.n) {
        if (s->val.stopped_epoch) rc = snapshot_take(s, err);   /* the saved state is the best */
        else if (datm_h5_exists(g, SNAPSHOT_GROUP)) rc = snapshot_load(s, g, err);
        else if (!s->val.monitor_only)
            s->val.best = -1;   /* a file from before snapshots were saved: a new best starts */
    }
    if (!rc) rc = sdatm_ens_load(&s->ens, g, err);
    return rc;
}
