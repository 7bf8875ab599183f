/* models/whai.c: WHAI ("whai"), Weibull hybrid autoencoding inference for DATM (paper
 * sec. II-C, Algorithm 1): the WUDVE encoder (engine/encoder) is trained by Adam on the ELBO
 * while the topics Phi(l) of the gamma belief network decoder (engine/decoder) are sampled
 * by TLASGR-MCMC from counts augmented upward from encoder samples of theta.
 *
 * One iteration on a mini-batch X (B documents), as in Algorithm 1:
 *   1. Adam step on the encoder weights for the loss -(ELBO)/B (eq. ELBO-of-VADTM), one
 *      reparameterised sample per document (noise (seed, DOC, 4 it, doc));
 *   2. theta ~ q(theta | x) with the UPDATED encoder (noise (seed, DOC, 4 it + 1, doc));
 *   3. upward augmentation of X given theta, then one TLASGR step on every Phi(l)
 *      (eqs. Phi-updata, update_M) with rho = N / B. WHAI's experiments have no r: the top
 *      prior is Gamma(top_shape = 1, 1) and c_n = 1 (paper: r = 1, c = 1; docs/reference.md 7).
 *      With learn_r the top layer is the paper's model, theta(L) ~ Gam(r, 1) with
 *      r_k ~ Gam(gamma0 / K_L, 1 / c0): the upward augmentation also draws the top-layer CRT
 *      tables, TLASGR also steps r (eq. r_update, M_r by eq. update_M), and the encoder's
 *      top KL prior in step 1 is Gamma(r, 1) with r of the chain being updated.
 * An optional hook between the augmentation and the TLASGR step lets a variant adjust the
 * preconditioners (layerwise: a new top layer); sdatm's hook adds a loss in step 1.
 *
 * Evaluation (docs/reference.md 4.5, the authors' perplexity.m): each draw pairs theta of every
 * evaluation document, drawn from the encoder on its observed part, with the Phi(1) of the
 * same chain state. eval_globals = chain (default): every draw first advances a copy of the
 * whole chain (encoder + Adam + decoder) by eval_thin more iterations of Algorithm 1 on random
 * training mini-batches, so the rate is averaged over S posterior samples of the globals as
 * the paper's "3000 samples collected after burn-in"; fixed: the current globals, averaging
 * over the encoder noise only.
 *
 * Letters: V words, L layers, K_l units, B batch documents, N training documents. */
#include "whai.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlda_common.h"
#include "eval/perplexity.h"
#include "io/h5.h"
#include "par/par.h"
#include "rand/rand.h"

DATM_PARAMS_GETTER(whai_params, WHAI_PARAMS)
const datm_param_schema datm_whai_schema[] = {DATM_PARAMS_ROWS(WHAI_PARAMS)};

/* ---- chains ---- */

static void chain_free(whai_chain *c, int owns_params)
{
    if (owns_params) {
        datm_free(c->params);
        datm_free(c->grad);
    }
    datm_adam_free(&c->adam);
    datm_gbn_stats_destroy(&c->stats);
    datm_gbn_destroy(&c->gbn);
    memset(c, 0, sizeof *c);
}

/* dst = a full copy of src (own arrays). */
static int chain_copy(const whai_model *m, whai_chain *dst, const whai_chain *src,
                      datm_error *err)
{
    memset(dst, 0, sizeof *dst);
    const int64_t n = m->enc->params.size;
    dst->params = datm_alloc_array((size_t)n, sizeof(float), err);
    dst->grad = datm_alloc_array((size_t)n, sizeof(float), err);
    int rc = (dst->params && dst->grad) ? DATM_OK : DATM_E_NOMEM;
    if (!rc) rc = datm_adam_init(&dst->adam, n, src->adam.lr, src->adam.beta1, src->adam.beta2,
                                 src->adam.eps, err);
    if (!rc) rc = datm_gbn_create(src->gbn->L, src->gbn->K, &src->gbn->o, 0, &dst->gbn, err);
    if (!rc) rc = datm_gbn_stats_create(src->gbn, &dst->stats, err);
    if (rc) { chain_free(dst, 1); return rc; }
    memcpy(dst->params, src->params, (size_t)n * sizeof(float));
    memcpy(dst->adam.m, src->adam.m, (size_t)n * sizeof(float));
    memcpy(dst->adam.v, src->adam.v, (size_t)n * sizeof(float));
    dst->adam.t = src->adam.t;
    dst->adam.clip = src->adam.clip;
    dst->adam.rms_clip = src->adam.rms_clip;
    datm_gbn_copy(dst->gbn, src->gbn);
    return DATM_OK;
}

static const float *const *phi_f(const whai_chain *c)
{
    return (const float *const *)c->gbn->phi_f;
}

/* Input thinning (enc_input_keep < 1; not in the paper): m->in_val gets, per nonzero of X,
 * a Binomial(x, keep) count from the document's own stream (thread-count independent). Any
 * q(theta | part of x) is still a valid variational distribution, so the ELBO with the full
 * x as the target stays a lower bound on ln p(x). */
static int whai_thin_input(whai_model *m, const datm_csr *X, const int64_t *doc_ids,
                           uint64_t seed, uint32_t purpose, uint64_t step, datm_error *err)
{
    const int64_t B = X->n_rows, base = X->row_ptr[0], nnz = X->row_ptr[B] - base;
    if (nnz > m->in_cap) {
        float *v = datm_alloc_array((size_t)nnz, sizeof(float), err);
        if (!v) return DATM_E_NOMEM;
        datm_free(m->in_val);
        m->in_val = v;
        m->in_cap = nnz;
    }
    const double keep = m->input_keep;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < B; i++) {
        datm_rng r;
        datm_rng_init2(&r, seed, purpose, ((uint64_t)5 << 40) + step,
                       doc_ids ? (uint64_t)doc_ids[i] : (uint64_t)i);
        for (int64_t p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            int64_t n = (int64_t)(X->val[p] + 0.5f), kept = 0;
            for (int64_t t = 0; t < n; t++) kept += datm_rng_uniform(&r) < keep;
            m->in_val[p - base] = (float)kept;
        }
    }
    return DATM_OK;
}

/* Step 1 of Algorithm 1: Adam step(s) on the encoder (eq. ELBO-of-VADTM, fixed uniform
 * noise); the paper takes one per mini-batch (encoder_steps = 1). */
static int whai_encoder_steps(whai_model *m, whai_chain *c, const datm_csr *X,
                              const int64_t *doc_ids, uint64_t seed, uint32_t purpose,
                              uint64_t step, const double *klw, const float *top,
                              datm_encoder_loss *el, const datm_batch *xb,
                              const datm_train_ctx *xctx, datm_error *err)
{
    datm_encoder_noise nz = {NULL, seed, purpose, step * 4, doc_ids, 0};
    int rc = DATM_OK;
    if (m->input_keep < 1) {
        rc = whai_thin_input(m, X, doc_ids, seed, purpose, step, err);
        if (rc) return rc;
        m->ws->in_val = m->in_val;
    }
    for (int64_t s = 0; s < m->encoder_steps && !rc; s++) {
        datm_encoder_loss l1;
        if (s > 0) nz.index = ((uint64_t)1 << 40) + step * 16 + (uint64_t)s;
        rc = datm_encoder_forward(m->enc, c->params, DATM_ENC_TRAIN, X, phi_f(c), top, klw,
                                  &nz, m->ws, s == 0 ? el : &l1, err);
        /* supervised variants: the extra loss's gradient on theta joins the backward pass */
        const float *const *dth = NULL;
        double xloss = 0;
        if (!rc && m->hooks.extra && xb)
            rc = m->hooks.extra(m->hooks.extra_user, xb, xctx, m->ws, &dth, &xloss, err);
        if (!rc) rc = datm_encoder_backward(m->enc, c->params, m->ws, dth, c->grad, NULL, err);
        if (rc) break;
        if (s == 0) el->loss += xloss;
        int64_t bad = datm_adam_step(&c->adam, c->params, c->grad);
        if (bad)
            rc = datm_error_set(err, DATM_E_NUMERIC, "whai: %lld non-finite encoder gradients",
                                (long long)bad);
    }
    m->ws->in_val = NULL;   /* the augmentation and evaluation read whole documents */
    return rc;
}

/* Steps 2 and 3a of Algorithm 1: theta from the encoder (eq. posterior-completely): a sample
 * (paper), or the posterior mean (aug_theta = mean); then the upward augmentation (with
 * learn_r also the top-layer CRT tables) into c->stats. With aug_samples > 1, several
 * samples whose counts TLASGR averages (noise streams after the first are new ones).
 * phi_fixed: theta only (no statistics). */
static int whai_augment(whai_model *m, whai_chain *c, const datm_csr *X, const int64_t *doc_ids,
                        uint64_t seed, uint32_t purpose, uint64_t step, datm_error *err)
{
    const int L = m->L;
    const int64_t B = X->n_rows;
    datm_encoder_noise nz = {NULL, seed, purpose, step * 4, doc_ids, 0};
    int rc = DATM_OK;
    datm_gbn_stats_reset(c->stats);
    const double *thd[DATM_MAX_LAYERS + 1] = {NULL};
    for (int64_t a = 0; a < m->aug_samples && !rc; a++) {
        nz.index = a == 0 ? step * 4 + 1 : ((uint64_t)2 << 40) + step * 64 + (uint64_t)a;
        rc = datm_encoder_forward(m->enc, c->params,
                                  m->aug_mean ? DATM_ENC_MEAN : DATM_ENC_SAMPLE, X, phi_f(c),
                                  NULL, NULL, &nz, m->ws, NULL, err);
        if (rc) return rc;
        for (int l = 1; l <= L; l++) {
            const float *src = m->ws->theta[l];
            double *dst = m->theta_d[l];
            for (int64_t i = 0, n = B * m->K[l]; i < n; i++) dst[i] = src[i];
            thd[l] = dst;
        }
        if (m->phi_fixed) return DATM_OK;
        datm_gbn_key key = {seed, purpose, a == 0 ? step * 4 + 2
                                                  : ((uint64_t)3 << 40) + step * 64 + (uint64_t)a,
                            doc_ids};
        if (m->aug_collect == 0)
            rc = datm_gbn_augment(c->gbn, X, thd, &key, m->count_mode, c->stats, NULL, err);
    }
    /* semi-amortised variant (not in the paper): the encoder's theta starts a short
     * upward-downward Gibbs chain of the WHAI model (c_n = 1, docs/reference.md 1.9) under the
     * current globals; the counts of its last aug_collect sweeps go to TLASGR, as the local
     * chain of DLDA-TLASGR does. */
    if (!rc && m->aug_collect > 0) {
        datm_gbn_chain *g = m->gchain;
        datm_gbn_chain_init(g, B);
        for (int l = 1; l <= L; l++)
            memcpy(g->theta[l], thd[l], (size_t)(B * m->K[l]) * sizeof(double));
        datm_gbn_sweep_opts so = {INT64_MAX, m->count_mode};
        for (int64_t w = 0; w < m->aug_burn + m->aug_collect && !rc; w++) {
            datm_gbn_key key = {seed, purpose, ((uint64_t)4 << 40) + step * 1024 + (uint64_t)w,
                                doc_ids};
            rc = datm_gbn_chain_sweep(c->gbn, X, g, &key, &so,
                                      w >= m->aug_burn ? c->stats : NULL, err);
        }
    }
    return rc;
}

/* One iteration of paper Algorithm 1 on X (rows doc_ids) for chain c (with learn_r, r too):
 * 1. encoder step(s), 2. theta from the updated encoder, 3. augmentation and TLASGR on every
 * Phi(l) and r (eqs. Phi-updata, r_update, update_M). */
static int whai_iterate(whai_model *m, whai_chain *c, const datm_csr *X, const int64_t *doc_ids,
                        uint64_t seed, uint32_t purpose, uint64_t step, const double *klw,
                        datm_encoder_loss *el, datm_tlasgr_report *rep,
                        const datm_batch *xb, const datm_train_ctx *xctx, datm_error *err)
{
    const int L = m->L;
    const int64_t B = X->n_rows;
    /* the top layer's KL prior: Gamma(r, 1) with r of this chain (learn_r), else Gamma(
     * top_shape, 1) from the encoder's options */
    const float *top = NULL;
    if (m->learn_r) {
        for (int64_t k = 0; k < m->K[L]; k++) m->r_f[k] = (float)c->gbn->r[k];
        top = m->r_f;
    }
    int rc;
    if (m->chunks) {   /* the same steps, spread over ranks and threads in fixed chunks */
        rc = whai_chunks_iterate(m, c, X, doc_ids, seed, purpose, step, klw, el, err);
    } else {
        rc = whai_encoder_steps(m, c, X, doc_ids, seed, purpose, step, klw, top, el, xb, xctx,
                                err);
        if (!rc) rc = whai_augment(m, c, X, doc_ids, seed, purpose, step, err);
    }
    if (rc || m->phi_fixed) return rc;
    /* 3. TLASGR on every Phi(l) and r (eqs. Phi-updata, r_update, update_M) */
    const double rho = (double)m->N / (double)B;
    if (m->hooks.pre_tlasgr) rc = m->hooks.pre_tlasgr(m->hooks.pre_tlasgr_user, c, rho, err);
    /* with chunks (MPI ranks) each rank also updates its share of Phi's columns */
    if (!rc) rc = m->chunks ? datm_tlasgr_step_ranks(c->gbn, c->stats, rho, seed, rep, err)
                            : datm_tlasgr_step(c->gbn, c->stats, rho, seed, rep, err);
    return rc;
}

void whai_kl_weights(const whai_model *m, int64_t it, double *klw)
{
    double r = 1.0;
    if (m->kl_warmup_epochs > 0) {
        r = (double)it / (double)(m->kl_warmup_epochs * m->bpe);
        if (r > 1) r = 1;
    }
    const double e = (double)it / (double)m->bpe;
    double f = 1.0;   /* share of the final weights */
    if (m->kl_ramp[1] > 0) {
        f = (e - (double)m->kl_ramp[0]) / (double)DATM_MAX(1, m->kl_ramp[1] - m->kl_ramp[0]);
        f = f < 0 ? 0 : (f > 1 ? 1 : f);
    }
    klw[0] = 0;
    for (int l = 1; l <= m->L; l++)
        klw[l] = r * ((1.0 - f) * m->kl_weight_start[l] + f * m->kl_weight[l]);
}

int whai_train_batch(datm_model *mm, const datm_batch *b, const datm_train_ctx *ctx,
                     datm_train_stats *st, datm_error *err)
{
    whai_model *m = (whai_model *)mm;
    if (b->X->n_rows > m->B)
        return datm_error_set(err, DATM_E_INVALID, "whai: batch of %lld documents > %lld",
                              (long long)b->X->n_rows, (long long)m->B);
    double klw[DATM_MAX_LAYERS + 1];
    m->iteration = ctx->iteration;
    whai_kl_weights(m, ctx->iteration, klw);
    datm_encoder_loss el;
    datm_tlasgr_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = whai_iterate(m, &m->ch, b->X, b->doc_ids, ctx->seed, DATM_STREAM_DOC,
                          (uint64_t)ctx->iteration, klw, &el, &rep, b, ctx, err);
    if (rc) return rc;
    memset(st, 0, sizeof *st);
    st->n_layers = m->L;
    st->loss = el.loss;
    st->loglik = el.loglik;
    for (int l = 1; l <= m->L; l++) {
        st->kl[l - 1] = el.kl[l];
        st->step[l - 1] = rep.step_mean[l];
    }
    return DATM_OK;
}

/* ---- evaluation ---- */

typedef struct whai_eval {
    const datm_csr *obs;
    uint64_t        seed;
    whai_chain      ch;          /* chain mode: the copy that keeps sampling */
    int             have_ch;
    int64_t        *perm;        /* (N) chain mode: row order for random mini-batches */
    int64_t         draws;
    int64_t         first;       /* row of the whole evaluation set of obs's row 0 (par.h) */
    datm_encoder_cache *cache;   /* fixed mode: the encoder's upward outputs, computed once */
    float          *theta[DATM_MAX_LAYERS + 1];   /* (N_obs, K_l) */
} whai_eval;

void whai_eval_end(datm_model *mm, void *state)
{
    whai_model *m = (whai_model *)mm;
    whai_eval *e = state;
    if (!e) return;
    if (e->have_ch) chain_free(&e->ch, 1);
    datm_encoder_cache_destroy(&e->cache);
    datm_free(e->perm);
    for (int l = 1; l <= m->L; l++) datm_free(e->theta[l]);
    datm_free(e);
}

int whai_eval_begin(datm_model *mm, const datm_csr *obs, uint64_t seed, void **state,
                    datm_error *err)
{
    whai_model *m = (whai_model *)mm;
    *state = NULL;
    if (obs->n_cols != m->K[0])
        return datm_error_set(err, DATM_E_INVALID, "whai: evaluation documents have %lld words, "
                              "model %lld", (long long)obs->n_cols, (long long)m->K[0]);
    whai_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return DATM_E_NOMEM;
    e->obs = obs;
    e->seed = seed;
    e->first = datm_par_eval_first();   /* noise keyed by the row in the whole set */
    int rc = DATM_OK;
    for (int l = 1; l <= m->L && !rc; l++) {
        e->theta[l] = datm_alloc_array((size_t)(DATM_MAX(obs->n_rows, 1) * m->K[l]), sizeof(float), err);
        if (!e->theta[l]) rc = DATM_E_NOMEM;
    }
    if (!rc && m->eval_chain && m->train) {
        rc = chain_copy(m, &e->ch, &m->ch, err);
        e->have_ch = !rc;
        e->perm = rc ? NULL : datm_alloc_array((size_t)m->N, sizeof(int64_t), err);
        if (!rc && !e->perm) rc = DATM_E_NOMEM;
        for (int64_t i = 0; !rc && i < m->N; i++) e->perm[i] = i;
    } else if (!rc) {
        /* the globals stay fixed: the encoder's upward pass is the same for every draw */
        rc = datm_encoder_cache_build(m->enc, m->ch.params, obs, 0, &e->cache, err);
    }
    if (rc) { whai_eval_end(mm, e); return rc; }
    *state = e;
    return DATM_OK;
}

/* One more iteration of the evaluation copy on B random training documents. */
static int eval_advance(whai_model *m, whai_eval *e, datm_error *err)
{
    const int64_t N = m->N, B = DATM_MIN(m->B, N);
    datm_rng r;
    datm_rng_init2(&r, e->seed, DATM_STREAM_EVAL, (uint64_t)1 << 40, (uint64_t)e->draws);
    for (int64_t i = 0; i < B; i++) {   /* partial Fisher-Yates: perm[0..B) a random subset */
        int64_t j = i + (int64_t)datm_rng_below(&r, (uint64_t)(N - i));
        int64_t t = e->perm[i];
        e->perm[i] = e->perm[j];
        e->perm[j] = t;
    }
    datm_csr Xb;
    int64_t r0, r1;   /* with data-parallel ranks, only this rank's rows */
    datm_par_batch_rows(B, &r0, &r1);
    int rc = datm_csr_select_rows_range(m->train, e->perm, B, r0, r1, &Xb, err);
    if (rc) return rc;
    double klw[DATM_MAX_LAYERS + 1];
    whai_kl_weights(m, m->iteration + e->draws + 1, klw);
    datm_encoder_loss el;
    rc = whai_iterate(m, &e->ch, &Xb, e->perm, e->seed, DATM_STREAM_EVAL,
                      ((uint64_t)1 << 30) + (uint64_t)e->draws, klw, &el, NULL, NULL, NULL, err);
    datm_csr_free(&Xb);
    e->draws++;
    return rc;
}

int whai_eval_step(datm_model *mm, void *state, int64_t draw, struct datm_rate_accum *acc,
                   datm_error *err)
{
    whai_model *m = (whai_model *)mm;
    whai_eval *e = state;
    const whai_chain *c = &m->ch;
    int rc = DATM_OK;
    if (e->have_ch) {
        for (int64_t t = 0; t < m->eval_thin && !rc; t++) rc = eval_advance(m, e, err);
        c = &e->ch;
    }
    if (rc) return rc;
    /* theta of the observed part from this state's encoder, paired with its Phi(1) */
    if (e->cache)
        rc = datm_encoder_infer_cached(m->enc, e->cache, phi_f(c), NULL, m->eval_theta_sample,
                                       e->seed, (uint64_t)draw, e->first, 0, e->theta, err);
    else
        rc = datm_encoder_infer(m->enc, c->params, e->obs, phi_f(c), NULL, m->eval_theta_sample,
                                e->seed, (uint64_t)draw, e->first, 0, e->theta, err);
    if (rc) return rc;
    /* fixed globals: one Phi(1) for every draw, so only theta is summed */
    if (e->cache) return datm_rate_accum_add_fixed(acc, c->gbn->phi_f[1], e->theta[1], m->K[1], err);
    datm_rate_accum_add(acc, c->gbn->phi_f[1], e->theta[1], m->K[1]);
    return DATM_OK;
}

/* ---- features, topics ---- */

int whai_infer(const datm_model *mm, const datm_csr *docs, uint64_t seed, int nsamples,
               datm_theta *out, datm_error *err)
{
    const whai_model *m = (const whai_model *)mm;
    memset(out, 0, sizeof *out);
    float *th[DATM_MAX_LAYERS + 1] = {NULL};
    int rc = DATM_OK;
    for (int l = 1; l <= m->L && !rc; l++) {
        th[l] = datm_alloc_array((size_t)(DATM_MAX(docs->n_rows, 1) * m->K[l]), sizeof(float), err);
        if (!th[l]) rc = DATM_E_NOMEM;
    }
    /* noise keyed by the row in the whole set (a rank's share of it: par.h) */
    if (!rc) rc = datm_encoder_infer(m->enc, m->ch.params, docs, phi_f(&m->ch), NULL,
                                     nsamples > 0 ? nsamples : 0, seed, 0,
                                     datm_par_eval_first(), 0, th, err);
    if (rc) {
        for (int l = 1; l <= m->L; l++) datm_free(th[l]);
        return rc;
    }
    out->n_layers = m->L;
    out->n_docs = docs->n_rows;
    for (int l = 1; l <= m->L; l++) {
        out->k[l - 1] = m->K[l];
        out->theta[l - 1] = th[l];
    }
    return DATM_OK;
}

int whai_get_phi(const datm_model *mm, int layer, const float **phi, int64_t *rows,
                 int64_t *cols)
{
    const whai_model *m = (const whai_model *)mm;
    if (layer < 1 || layer > m->L) return DATM_E_INVALID;
    *phi = m->ch.gbn->phi_f[layer];
    *rows = m->K[layer - 1];
    *cols = m->K[layer];
    return DATM_OK;
}

int whai_n_layers(const datm_model *mm) { return ((const whai_model *)mm)->L; }

/* ---- save / load: decoder views, encoder weights by name, Adam state ---- */

int whai_save(const datm_model *mm, struct datm_h5 *g, datm_error *err)
{
    const whai_model *m = (const whai_model *)mm;
    int rc = dlda_save_gbn(m->ch.gbn, g, err);
    datm_h5 *ge = NULL;
    if (!rc) rc = datm_h5_group(g, "encoder", 1, &ge, err);
    const datm_params *p = &m->enc->params;
    for (int i = 0; i < p->n_views && !rc; i++) {
        const datm_param_view *v = &p->views[i];
        const int64_t dims[2] = {v->rows, v->cols};
        rc = datm_h5_write_f32(ge, v->name, m->ch.params + v->offset, 2, dims, err);
    }
    datm_h5_close(&ge);
    const int64_t n[1] = {p->size};
    if (!rc) rc = datm_h5_write_f32(g, "adam_m", m->ch.adam.m, 1, n, err);
    if (!rc) rc = datm_h5_write_f32(g, "adam_v", m->ch.adam.v, 1, n, err);
    if (!rc) rc = datm_h5_write_scalar(g, "adam_t", (double)m->ch.adam.t, err);
    if (!rc) rc = datm_h5_write_scalar(g, "iteration", (double)m->iteration, err);
    return rc;
}

int whai_load(datm_model *mm, struct datm_h5 *g, datm_error *err)
{
    whai_model *m = (whai_model *)mm;
    int rc = dlda_load_gbn(m->ch.gbn, g, err);
    datm_h5 *ge = NULL;
    if (!rc) rc = datm_h5_group(g, "encoder", 0, &ge, err);
    const datm_params *p = &m->enc->params;
    for (int i = 0; i < p->n_views && !rc; i++) {
        const datm_param_view *v = &p->views[i];
        const int64_t dims[2] = {v->rows, v->cols};
        rc = datm_h5_read_f32(ge, v->name, m->ch.params + v->offset, 2, dims, err);
    }
    datm_h5_close(&ge);
    const int64_t n[1] = {p->size};
    double t = 0;
    if (!rc && datm_h5_exists(g, "adam_m")) {
        rc = datm_h5_read_f32(g, "adam_m", m->ch.adam.m, 1, n, err);
        if (!rc) rc = datm_h5_read_f32(g, "adam_v", m->ch.adam.v, 1, n, err);
        if (!rc) rc = datm_h5_read_scalar(g, "adam_t", &t, err);
        m->ch.adam.t = (int64_t)t;
    }
    if (!rc && datm_h5_exists(g, "iteration")) {
        rc = datm_h5_read_scalar(g, "iteration", &t, err);
        m->iteration = (int64_t)t;
    }
    return rc;
}

/* ---- creation ---- */

void whai_destroy(datm_model *mm)
{
    whai_model *m = (whai_model *)mm;
    if (!m) return;
    chain_free(&m->ch, 0);   /* the main chain's weights belong to m->enc */
    datm_encoder_ws_destroy(&m->ws);
    datm_encoder_destroy(&m->enc);
    for (int l = 0; l <= DATM_MAX_LAYERS; l++) datm_free(m->theta_d[l]);
    datm_free(m->r_f);
    datm_gbn_chain_destroy(&m->gchain);
    datm_free(m->in_val);
    whai_chunks_destroy(&m->chunks);
    datm_free(m);
}

/* A list key (WHAI_ROW_...) with [] (default), one value for all layers, or one per layer. */
static int per_layer(const datm_real_list *list, int row, int L, double def, double *out,
                     datm_error *err)
{
    const char *key = datm_whai_schema[row].key;
    const double *v = list->v;
    const int n = list->n;
    if (n != 0 && n != 1 && n != L)
        return datm_error_set(err, DATM_E_INVALID, "model.%s has %d values; give none, one, or "
                              "one per layer (%d)", key, n, L);
    for (int l = 1; l <= L; l++) out[l] = n == 0 ? def : v[n == 1 ? 0 : l - 1];
    return DATM_OK;
}

/* Warm start: Phi(l) from /model/phi_<l> of a result or checkpoint file, for every layer
 * whose stored shape matches (K[l-1], K[l]); the columns are renormalised onto the simplex. */
static int whai_phi_init(datm_gbn *g, const char *path, datm_error *err)
{
    datm_h5 *f = NULL, *grp = NULL;
    int rc = datm_h5_open(path, 0, &f, err);
    /* a result keeps the topics in /model, a checkpoint in /checkpoint/model */
    if (!rc) rc = datm_h5_group(f, datm_h5_exists(f, "model") ? "model" : "checkpoint/model", 0,
                                &grp, err);
    int loaded = 0;
    for (int l = 1; l <= g->L && !rc; l++) {
        char name[32];
        snprintf(name, sizeof name, "phi_%d", l);
        if (!datm_h5_exists(grp, name)) continue;
        const int64_t dims[2] = {g->K[l - 1], g->K[l]};
        datm_error e2;
        if (datm_h5_read_f64(grp, name, g->phi[l], 2, dims, &e2)) continue;   /* other shape */
        for (int64_t k = 0; k < g->K[l]; k++) {
            double s = 0;
            for (int64_t v = 0; v < g->K[l - 1]; v++) {
                double *p = &g->phi[l][v * g->K[l] + k];
                if (!(*p > g->o.phi_floor)) *p = g->o.phi_floor;
                s += *p;
            }
            for (int64_t v = 0; v < g->K[l - 1]; v++) g->phi[l][v * g->K[l] + k] /= s;
        }
        loaded++;
    }
    if (!rc && loaded == 0)
        rc = datm_error_set(err, DATM_E_INVALID, "model.phi_init: %s has no /model/phi_<l> of "
                            "this model's shapes", path);
    if (!rc) datm_gbn_sync_f(g);
    datm_h5_close(&grp);
    datm_h5_close(&f);
    return rc;
}

/* 1 when the real value of row `row` holds the default of cfg's schema (by value: a spec
 * re-read from a result sets every key explicitly). */
static int real_at_default(const datm_config *cfg, int row, double value)
{
    const datm_param_schema *p = &datm_config_schema(cfg)[row];
    return p->def && value == strtod(p->def, NULL);
}

/* The keys of the top layer's r are used only with learn_r, top_shape only without it, and
 * r is learnt by the TLASGR step that phi_fixed turns off: a combination in which a key
 * would be silently ignored is an error naming that key. */
static int whai_check_r_keys(const datm_config *cfg, const whai_params *p, datm_error *err)
{
    const struct { int row; double value; } r_keys[] = {
        {WHAI_ROW_gamma0, p->gamma0}, {WHAI_ROW_c0, p->c0}, {WHAI_ROW_r_init, p->r_init}};
    if (p->learn_r && !real_at_default(cfg, WHAI_ROW_top_shape, p->top_shape))
        return datm_error_set(err, DATM_E_INVALID, "model.top_shape: with learn_r = true the "
                              "top prior is Gamma(r, 1); set r_init instead");
    if (p->learn_r && p->phi_fixed)
        return datm_error_set(err, DATM_E_INVALID, "model.learn_r: r is learnt by the TLASGR "
                              "step, which phi_fixed = true turns off");
    for (size_t i = 0; !p->learn_r && i < DATM_COUNTOF(r_keys); i++)
        if (!real_at_default(cfg, r_keys[i].row, r_keys[i].value))
            return datm_error_set(err, DATM_E_INVALID, "model.%s is used only with learn_r = "
                                  "true", datm_whai_schema[r_keys[i].row].key);
    return DATM_OK;
}

/* The encoder's options from WHAI's keys with the variant's changes: K[1..L] the widths,
 * kl_weight[1..L] the final KL weights, V the vocabulary (0 before the data is read). */
static void whai_encoder_opts(const whai_params *p, const whai_variant *v, int L,
                              const int64_t *K, const double *kl_weight, int64_t V,
                              datm_encoder_opts *eo)
{
    datm_encoder_opts_default(eo);
    eo->n_layers = L;
    eo->n_vocab = V;
    for (int l = 1; l <= L; l++) {
        eo->k[l] = K[l];
        eo->hidden[l] = p->hidden.n ? p->hidden.v[l - 1] : 0;
        eo->kl_weight[l] = kl_weight[l];
    }
    eo->downward = v->no_downward ? 0 : p->downward;
    eo->shape_per_topic = p->shape_per_topic;
    eo->lambda_is_mean = p->lambda_is_mean;
    eo->k_min = p->k_min;
    eo->k_max = p->k_max;
    eo->lambda_min = p->lambda_min;
    eo->u_lo = p->u_lo;
    eo->u_hi = p->u_hi;
    eo->init_sd = p->init_sd;
    eo->init_bias = p->init_bias;
    eo->top_shape = p->top_shape;
    if (v->family) eo->family = v->family;
}

/* The augmentation options of Algorithm 1 (not in the paper): they act in WHAI's iteration
 * only (sdatm wraps it; wai has its own), and the Gibbs refinement starts from one sample
 * and needs sweeps whose counts it collects. */
static int whai_check_aug(const whai_params *p, const whai_variant *v, datm_error *err)
{
    if (v->own_iteration &&
        (p->aug_samples > 1 || p->aug_gibbs_burn > 0 || p->aug_gibbs_collect > 0 ||
         p->enc_input_keep < 1))
        return datm_error_set(err, DATM_E_INVALID, "model.%s is not supported by %s: it does "
                              "not train with WHAI's iteration (set aug_samples 1, "
                              "aug_gibbs_burn 0, aug_gibbs_collect 0, enc_input_keep 1)",
                              p->aug_samples > 1 ? "aug_samples"
                                  : (p->aug_gibbs_collect > 0 ? "aug_gibbs_collect"
                                     : (p->aug_gibbs_burn > 0 ? "aug_gibbs_burn"
                                                              : "enc_input_keep")),
                              v->ops->name);
    if (p->aug_gibbs_burn > 0 && p->aug_gibbs_collect == 0)
        return datm_error_set(err, DATM_E_INVALID, "model.aug_gibbs_burn needs "
                              "aug_gibbs_collect >= 1 (the sweeps whose counts are used)");
    if (p->aug_gibbs_collect > 0 && p->aug_samples > 1)
        return datm_error_set(err, DATM_E_INVALID, "model.aug_samples > 1 and aug_gibbs_collect "
                              "> 0 cannot be combined: the Gibbs chain starts from one sample");
    return DATM_OK;
}

int whai_check_variant(const datm_config *cfg, const whai_variant *v, datm_error *err)
{
    whai_params p;
    whai_params_get(cfg, &p);
    const int L = p.layers.n;
    if (L < 1 || L > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "model.layers: %d layers (1..%d)", L,
                              DATM_MAX_LAYERS);
    int64_t K[DATM_MAX_LAYERS + 1] = {0};
    for (int l = 1; l <= L; l++) K[l] = p.layers.v[l - 1];
    double w[DATM_MAX_LAYERS + 1], scratch[DATM_MAX_LAYERS + 1];
    int rc = per_layer(&p.kl_weight, WHAI_ROW_kl_weight, L, 1.0, w, err);
    if (!rc) rc = per_layer(&p.kl_weight_start, WHAI_ROW_kl_weight_start, L, 1.0, scratch, err);
    const int64_t *ramp = p.kl_ramp_epochs.v;
    if (!rc && (p.kl_ramp_epochs.n != 2 || ramp[1] < ramp[0]))
        rc = datm_error_set(err, DATM_E_INVALID, "model.kl_ramp_epochs: give [e0, e1] with "
                            "e0 <= e1");
    if (!rc) rc = whai_check_r_keys(cfg, &p, err);
    /* only WHAI's iteration learns r: a variant with its own train_batch (wai) would accept
     * learn_r and ignore it (layerwise's network is a WHAI model: its ops are WHAI's) */
    if (!rc && p.learn_r && v->ops->train_batch != whai_train_batch)
        rc = datm_error_set(err, DATM_E_INVALID, "model.learn_r is not supported by %s: it does "
                            "not train with WHAI's iteration, which is what learns r",
                            v->ops->name);
    if (!rc) rc = per_layer(&p.eta, WHAI_ROW_eta, L, 0.0, scratch, err);
    if (!rc && p.hidden.n != 0 && p.hidden.n != L)
        rc = datm_error_set(err, DATM_E_INVALID, "model.hidden has %d values; give none or one "
                            "per layer (%d)", p.hidden.n, L);
    if (rc) return rc;
    /* the encoder's own rules on its options (it applies them again at creation, with V) */
    datm_encoder_opts eo;
    whai_encoder_opts(&p, v, L, K, w, 0, &eo);
    const char *key = NULL;
    rc = datm_encoder_opts_check(&eo, &key, err);
    if (rc) return key ? datm_error_prefix(err, "model.%s: ", key) : rc;
    return whai_check_aug(&p, v, err);
}

int whai_create_variant(const datm_config *cfg, const datm_run_info *info, const whai_variant *v,
                        datm_model **out, datm_error *err)
{
    *out = NULL;
    int rc = whai_check_variant(cfg, v, err);   /* every rule on the options alone */
    if (rc) return rc;
    whai_params p;
    whai_params_get(cfg, &p);
    const int64_t *lay = p.layers.v;
    const int L = p.layers.n;
    if (info->n_vocab < 1) return datm_error_set(err, DATM_E_INVALID, "whai: empty vocabulary");
    if (!v->own_eval && !strcmp(p.eval_globals, "chain") && info->streamed)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "model.eval_globals chain advances the "
                              "globals on random training documents, which a streamed corpus "
                              "(data.stream) does not hold in memory; set eval_globals: fixed");
    whai_model *m = datm_alloc(sizeof *m, err);
    if (!m) return DATM_E_NOMEM;
    m->base.ops = v->ops;
    m->L = L;
    m->K[0] = info->n_vocab;
    for (int l = 1; l <= L; l++) m->K[l] = lay[l - 1];
    m->N = DATM_MAX(info->n_train, 1);
    m->B = info->batch_size > 0 ? info->batch_size : 200;
    m->bpe = info->epochs > 0 ? DATM_MAX(1, info->total_iters / info->epochs) : 1;
    m->train = info->train;
    m->kl_warmup_epochs = p.kl_warmup_epochs;
    m->count_mode = !strcmp(p.count_mode, "expected") ? DATM_AUG_EXPECTED : DATM_AUG_SAMPLED;
    m->eval_chain = v->own_eval ? 0 : !strcmp(p.eval_globals, "chain");
    m->hooks = v->hooks;
    m->eval_thin = p.eval_thin;
    m->eval_theta_sample = !strcmp(p.eval_theta, "sample") ? 1 : 0;
    m->encoder_steps = p.encoder_steps;
    m->aug_mean = !strcmp(p.aug_theta, "mean");
    m->aug_samples = p.aug_samples;
    m->aug_burn = p.aug_gibbs_burn;
    m->aug_collect = p.aug_gibbs_collect;
    m->input_keep = p.enc_input_keep;
    rc = per_layer(&p.kl_weight, WHAI_ROW_kl_weight, L, 1.0, m->kl_weight, err);
    if (!rc) {
        if (p.kl_weight_start.n == 0) memcpy(m->kl_weight_start, m->kl_weight, sizeof m->kl_weight);
        else rc = per_layer(&p.kl_weight_start, WHAI_ROW_kl_weight_start, L, 1.0,
                            m->kl_weight_start, err);
        m->kl_ramp[0] = p.kl_ramp_epochs.v[0];
        m->kl_ramp[1] = p.kl_ramp_epochs.v[1];
    }

    /* decoder: no r, top prior Gamma(top_shape = 1, 1) (docs/reference.md 1.1, 7); with learn_r
     * the gamma-NB top layer r ~ Gam(gamma0 / K_L, 1 / c0), r = r_init at the start */
    m->learn_r = p.learn_r;
    datm_gbn_opts go;
    datm_gbn_opts_default(&go);
    go.use_r = m->learn_r;
    go.r_init = p.r_init;
    go.gamma0 = p.gamma0;
    go.c0 = p.c0;
    go.init_lo = p.phi_init_lo;
    go.phi_floor = p.phi_floor;
    go.eps0 = p.eps0;
    go.tau0 = p.tau0;
    go.kappa0 = p.kappa0;
    go.epsm0 = p.epsm0;
    go.taum0 = p.taum0;
    go.kappam0 = p.kappam0;
    go.m_floor = p.m_floor;
    if (!rc) rc = per_layer(&p.eta, WHAI_ROW_eta, L, 0.0, go.eta, err);
    if (!rc) rc = datm_gbn_create(L, m->K, &go, info->seed, &m->ch.gbn, err);
    if (!rc) rc = datm_gbn_stats_create(m->ch.gbn, &m->ch.stats, err);
    m->phi_fixed = p.phi_fixed;
    const char *pinit = p.phi_init;
    if (!rc && pinit && *pinit) rc = whai_phi_init(m->ch.gbn, pinit, err);

    /* encoder (WUDVE) */
    datm_encoder_opts eo;
    whai_encoder_opts(&p, v, L, m->K, m->kl_weight, info->n_vocab, &eo);
    if (!rc) rc = datm_encoder_create(&eo, info->seed, &m->enc, err);
    if (!rc) {
        m->ch.params = m->enc->params.value;
        m->ch.grad = m->enc->params.grad;
        rc = datm_adam_init(&m->ch.adam, m->enc->params.size, p.lr, p.beta1, p.beta2,
                            p.adam_eps, err);
        m->ch.adam.clip = p.grad_clip;
        m->ch.adam.rms_clip = p.grad_clip_rms;
    }
    if (!rc) rc = datm_encoder_ws_create(m->enc, m->B, m->B * 64, &m->ws, err);
    if (!rc && m->aug_collect > 0)
        rc = datm_gbn_chain_create(m->ch.gbn, m->B, &m->gchain, err);
    if (!rc && m->learn_r && !(m->r_f = datm_alloc_array((size_t)m->K[L], sizeof(float), err)))
        rc = DATM_E_NOMEM;
    for (int l = 1; l <= L && !rc; l++) {
        m->theta_d[l] = datm_alloc_array((size_t)(m->B * m->K[l]), sizeof(double), err);
        if (!m->theta_d[l]) rc = DATM_E_NOMEM;
    }
    /* train.reduce_chunks (MPI ranks): a variant with its own iteration (wai) never runs
     * WHAI's, so its ranks repeat the whole mini-batch each */
    if (!rc && datm_par_chunks() > 0 && !v->own_iteration)
        rc = whai_chunks_create(m, datm_par_chunks(), v, err);
    if (rc) {
        whai_destroy(&m->base);
        return rc;
    }
    *out = &m->base;
    return DATM_OK;
}

/* ---- the state variants change (whai.h) ---- */

void whai_set_n_train(whai_model *w, int64_t N)
{
    w->N = N;
}

void whai_set_lr(whai_model *w, double lr)
{
    w->ch.adam.lr = lr;
}

void whai_set_encoder_params(whai_model *w, const float *params)
{
    memcpy(w->ch.params, params, (size_t)w->enc->params.size * sizeof(float));
}

void whai_set_iteration(whai_model *w, int64_t iteration)
{
    w->iteration = iteration;
}

void whai_set_adam(whai_model *w, const float *m, const float *v, int64_t t)
{
    const size_t n = (size_t)w->ch.adam.size * sizeof(float);
    memcpy(w->ch.adam.m, m, n);
    memcpy(w->ch.adam.v, v, n);
    w->ch.adam.t = t;
}

int whai_replace_encoder(whai_model *w, datm_encoder *e, datm_error *err)
{
    DATM_ASSERT(e->params.size == w->enc->params.size);
    datm_encoder_ws_destroy(&w->ws);
    datm_encoder_destroy(&w->enc);
    w->enc = e;
    w->ch.params = e->params.value;
    w->ch.grad = e->params.grad;
    return datm_encoder_ws_create(e, w->B, w->B * 64, &w->ws, err);
}

void whai_set_decoder(whai_model *w, const datm_gbn *src)
{
    datm_gbn_copy(w->ch.gbn, src);
}

void whai_set_topics(whai_model *w, const float *const *phi)
{
    datm_gbn *g = w->ch.gbn;
    for (int l = 1; l <= g->L; l++) {
        const int64_t n = g->K[l - 1] * g->K[l];
        for (int64_t i = 0; i < n; i++) g->phi[l][i] = phi[l][i];
    }
    datm_gbn_sync_f(g);
}

void whai_chain_reset_top_m(whai_chain *c, double rho)
{
    datm_gbn *g = c->gbn;
    datm_gbn_stats_reduce(c->stats);
    const int L = g->L;
    const double inv = 1.0 / (double)c->stats->n_passes;
    const int64_t R = g->K[L - 1], C = g->K[L];
    for (int64_t k = 0; k < C; k++) {
        double cs = 0;
        for (int64_t r = 0; r < R; r++) cs += c->stats->A[L][r * C + k];
        g->M[L][k] = DATM_MAX(rho * cs * inv, g->o.m_floor);
    }
    g->M_r = DATM_MAX(rho * c->stats->q_sum * inv, g->o.m_floor);
}

static int whai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                       datm_error *err);
static int whai_check(const datm_config *cfg, datm_error *err);

const datm_model_ops datm_model_whai = {
    WHAI_COMMON_OPS,
    .name = "whai",
    .summary = "DATM with Weibull hybrid autoencoding inference: WUDVE encoder by Adam, "
               "topics by TLASGR-MCMC (paper Alg. 1)",
    .schema = datm_whai_schema,
    .create = whai_create,
    .check = whai_check,
};

static int whai_check(const datm_config *cfg, datm_error *err)
{
    const whai_variant v = {.ops = &datm_model_whai};
    return whai_check_variant(cfg, &v, err);
}

static int whai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                       datm_error *err)
{
    const whai_variant v = {.ops = &datm_model_whai};
    return whai_create_variant(cfg, info, &v, out, err);
}
