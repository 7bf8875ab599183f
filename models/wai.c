/* models/wai.c: WAI ("wai"), Weibull autoencoding inference (paper sec. II-E "Variations of
 * WHAI"): WHAI's inference network and ELBO, but the topics Phi(l) are point estimates
 * learnt by gradient steps on the same loss instead of being sampled by TLASGR-MCMC.
 *
 * Modelling assumptions (the paper gives no details of WAI):
 *   - Phi(l) columns are a softmax of free parameters beta(l) (engine/decoder/softmax_topics,
 *     the AVITM convention, docs/reference.md 3), initialised at WHAI's random initial
 *     Phi (same seed, same draws), with no Dirichlet prior (a point estimate, as AVITM);
 *   - beta is trained by its own Adam (phi_lr, phi_beta1, phi_beta2, phi_adam_eps) on the
 *     loss -(ELBO)/B of the mini-batch, whose gradient w.r.t. Phi(l) comes from the encoder's
 *     backward pass (likelihood for Phi(1), the KL priors and downward terms for Phi(l >= 2));
 *   - one iteration: encoder forward (one reparameterised sample), backward to the encoder
 *     weights and to every Phi(l), one Adam step on each (simultaneous, same loss); with
 *     WHAI's encoder_steps = S > 1, S encoder steps and the topic step with the last;
 *   - evaluation: eval_globals = chain advances a copy of the whole WAI state by eval_thin
 *     more SGD iterations per draw (the same protocol and iteration budget as WHAI's chain
 *     evaluation); fixed: the current Phi and encoder only.
 * The encoder, its options and keys, features, topics and most of save/load are WHAI's
 * (models/whai.h): this variant owns its training state (encoder weights, their Adam, the
 * softmax topics) and hands it to the WHAI model it holds after each step (whai_set_encoder_
 * params, whai_set_adam, whai_set_topics), so WHAI's infer/get_phi/eval(fixed)/save read it. */
#include <stdlib.h>
#include <string.h>

#include "decoder/softmax_topics.h"
#include "io/h5.h"
#include "variant_eval.h"
#include "variant_schema.h"
#include "whai.h"

/* Everything one WAI iteration updates (the model's own, or an evaluation copy). */
typedef struct wai_state {
    float                *params;   /* (enc->params.size) encoder weights */
    float                *grad;     /* (enc->params.size) */
    datm_adam             adam;     /* of the encoder */
    datm_softmax_topics  *smt;      /* beta, Phi, their Adam */
} wai_state;

typedef struct wai_model {
    datm_model       base;
    whai_model      *w;      /* encoder layout, options; its chain mirrors st (wai_mirror) */
    wai_state       *st;     /* the training state (owned) */
    datm_encoder_ws *ws;     /* (B docs) workspace of the iterations (owned) */
    int              eval_chain;
    int64_t          eval_thin;
} wai_model;

static datm_param_schema wai_schema[VARIANT_SCHEMA_CAP];

/* The variant's own model: keys, after WHAI's (pipeline/params.h). */
#define WAI_PARAMS(X) \
    X(phi_lr, "phi_lr", REAL, "1e-2", 1e-12, 10, NULL, \
      "Adam learning rate of the topic parameters beta (Phi(l)_.k = softmax(beta(l)_.k))") \
    X(phi_beta1, "phi_beta1", REAL, "0.9", 0, 0.999999, NULL, \
      "Adam beta1 of beta") \
    X(phi_beta2, "phi_beta2", REAL, "0.999", 0, 0.99999999, NULL, \
      "Adam beta2 of beta") \
    X(phi_adam_eps, "phi_adam_eps", REAL, "1e-8", 1e-20, 1, NULL, \
      "Adam epsilon of beta")
DATM_PARAMS_STRUCT(wai_params, WAI_PARAMS)
static DATM_PARAMS_GETTER(wai_params, WAI_PARAMS)

__attribute__((constructor)) static void wai_schema_init(void)
{
    static const char inert[] =
        "not used by wai (topics are learnt by Adam, not TLASGR): any value but the default is "
        "an error";
    static const variant_schema_edit edits[] = {
        {"eta", NULL, inert},       {"eps0", NULL, inert},      {"tau0", NULL, inert},
        {"kappa0", NULL, inert},    {"epsm0", NULL, inert},     {"taum0", NULL, inert},
        {"kappam0", NULL, inert},   {"m_floor", NULL, inert},   {"count_mode", NULL, inert},
        {"phi_floor", NULL,
         "floor of a phi_init warm start's entries before beta = ln Phi; without phi_init any "
         "value but the default is an error"},
        {"phi_init_lo", NULL,
         "initial Phi as WHAI's: entries lo + (1 - lo) U(0,1), columns normalised; beta = ln Phi"},
        {"eval_globals", NULL,
         "chain: each evaluation draw advances a copy of the WAI state (encoder and topics) by "
         "eval_thin SGD iterations (WHAI's protocol with SGD); fixed: current Phi only. SGD "
         "is not a sampler, so chain goes on training (samples x eval_thin more iterations): "
         "on 20News at 600 draws 20 apart the held-out perplexity rose as draws were added, "
         "where fixed's fell slightly"},
        {"eval_thin", NULL, "SGD iterations of the copy per evaluation draw"},
    };
    static const datm_param_schema extra[] = {DATM_PARAMS_ROWS(WAI_PARAMS)};
    variant_schema_build(wai_schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)DATM_COUNTOF(edits), extra);
}

/* ---- one iteration ---- */

static int wai_iterate(wai_model *m, wai_state *s, const datm_csr *X, const int64_t *doc_ids,
                       uint64_t seed, uint32_t purpose, uint64_t step, int64_t it,
                       datm_encoder_loss *el, datm_error *err)
{
    whai_model *w = m->w;
    double klw[DATM_MAX_LAYERS + 1];
    whai_kl_weights(w, it, klw);   /* WHAI's schedule: warm-up, kl_weight_start, ramp */
    datm_encoder_noise nz = {NULL, seed, purpose, step * 4, doc_ids, 0};
    /* encoder_steps Adam steps on the encoder (WHAI's key; paper: 1), noise streams as WHAI's;
     * the topics take their one step with the last, like WHAI's one TLASGR step per batch */
    const int64_t S = w->encoder_steps > 0 ? w->encoder_steps : 1;
    const datm_encoder *enc = whai_encoder(w);
    for (int64_t j = 0; j < S; j++) {
        datm_encoder_loss l1;
        const int last = j == S - 1;
        if (j > 0) nz.index = ((uint64_t)1 << 40) + step * 16 + (uint64_t)j;
        int rc = datm_encoder_forward(enc, s->params, DATM_ENC_TRAIN, X,
                                      (const float *const *)s->smt->phi, NULL, klw, &nz, m->ws,
                                      j == 0 ? el : &l1, err);
        if (!rc) rc = datm_encoder_backward(enc, s->params, m->ws, NULL, s->grad,
                                            last ? s->smt->dphi : NULL, err);
        if (rc) return rc;
        int64_t bad = datm_adam_step(&s->adam, s->params, s->grad);
        if (bad)
            return datm_error_set(err, DATM_E_NUMERIC, "wai: %lld non-finite encoder gradients",
                                  (long long)bad);
    }
    return datm_softmax_topics_step(s->smt, err);
}

/* WHAI's training chain takes the training state: the encoder's weights and Adam, and the
 * current softmax topics as its decoder's Phi (for infer, evaluation with fixed globals,
 * topics, save). */
static void wai_mirror(wai_model *m)
{
    const wai_state *s = m->st;
    whai_set_encoder_params(m->w, s->params);
    whai_set_adam(m->w, s->adam.m, s->adam.v, s->adam.t);
    whai_set_topics(m->w, (const float *const *)s->smt->phi);
}

static int wai_train_batch(datm_model *mm, const datm_batch *b, const datm_train_ctx *ctx,
                           datm_train_stats *st, datm_error *err)
{
    wai_model *m = (wai_model *)mm;
    if (b->X->n_rows > m->w->B)
        return datm_error_set(err, DATM_E_INVALID, "wai: batch of %lld documents > %lld",
                              (long long)b->X->n_rows, (long long)m->w->B);
    datm_encoder_loss el;
    int rc = wai_iterate(m, m->st, b->X, b->doc_ids, ctx->seed, DATM_STREAM_DOC,
                         (uint64_t)ctx->iteration, ctx->iteration, &el, err);
    if (rc) return rc;
    wai_mirror(m);
    memset(st, 0, sizeof *st);
    st->n_layers = m->w->L;
    st->loss = el.loss;
    st->loglik = el.loglik;
    for (int l = 1; l <= m->w->L; l++) st->kl[l - 1] = el.kl[l];
    return DATM_OK;
}

/* ---- copies of the state (evaluation chain) ---- */

static void wai_state_free(wai_state *s)
{
    if (!s) return;
    datm_free(s->params);
    datm_free(s->grad);
    datm_adam_free(&s->adam);
    datm_softmax_topics_destroy(&s->smt);
    datm_free(s);
}

/* The encoder part of a state: n weights (zero gradient) and an Adam, copies of params and a
 * (moments, step count, clipping); s->smt stays NULL. */
static wai_state *wai_state_new(int64_t n, const float *params, const datm_adam *a,
                                datm_error *err)
{
    wai_state *s = datm_alloc(sizeof *s, err);
    if (!s) return NULL;
    s->params = datm_alloc_array((size_t)n, sizeof(float), err);
    s->grad = datm_alloc_array((size_t)n, sizeof(float), err);
    int rc = s->params && s->grad ? DATM_OK : DATM_E_NOMEM;
    if (!rc) rc = datm_adam_init(&s->adam, n, a->lr, a->beta1, a->beta2, a->eps, err);
    if (rc) {
        wai_state_free(s);
        return NULL;
    }
    memcpy(s->params, params, (size_t)n * sizeof(float));
    memcpy(s->adam.m, a->m, (size_t)n * sizeof(float));
    memcpy(s->adam.v, a->v, (size_t)n * sizeof(float));
    s->adam.t = a->t;
    s->adam.clip = a->clip;
    s->adam.rms_clip = a->rms_clip;
    return s;
}

static void *wai_copy(datm_model *mm, datm_error *err)
{
    wai_model *m = (wai_model *)mm;
    const wai_state *src = m->st;
    wai_state *s = wai_state_new(whai_encoder(m->w)->params.size, src->params, &src->adam, err);
    if (!s) return NULL;
    const datm_softmax_topics *t = src->smt;
    int rc = datm_softmax_topics_create(t->L, t->K, (const double *const *)whai_decoder(m->w)->phi,
                                        t->adam.lr, t->adam.beta1, t->adam.beta2, t->adam.eps,
                                        &s->smt, err);
    if (rc) {
        wai_state_free(s);
        return NULL;
    }
    const int64_t np = t->params.size;
    memcpy(s->smt->params.value, t->params.value, (size_t)np * sizeof(float));
    memcpy(s->smt->adam.m, t->adam.m, (size_t)np * sizeof(float));
    memcpy(s->smt->adam.v, t->adam.v, (size_t)np * sizeof(float));
    s->smt->adam.t = t->adam.t;
    datm_softmax_topics_refresh(s->smt);
    return s;
}

static void wai_free_copy(datm_model *mm, void *c)
{
    (void)mm;
    wai_state_free(c);
}

static int wai_copy_iterate(datm_model *mm, void *c, const datm_csr *X, const int64_t *doc_ids,
                            uint64_t seed, uint32_t purpose, uint64_t step, datm_error *err)
{
    wai_model *m = (wai_model *)mm;
    wai_state *s = c;
    datm_encoder_loss el;
    return wai_iterate(m, s, X, doc_ids, seed, purpose, step, s->adam.t + 1, &el, err);
}

static void wai_view(datm_model *mm, void *c, const float **params, const float *const **phi)
{
    (void)mm;
    const wai_state *s = c;
    *params = s->params;
    *phi = (const float *const *)s->smt->phi;
}

static const variant_chain_ops wai_chain_ops = {wai_copy, wai_free_copy, wai_copy_iterate,
                                                wai_view};

/* ---- evaluation: the chain protocol, or WHAI's with the current Phi ---- */

typedef struct wai_eval {
    int   chain;
    void *inner;
} wai_eval;

static int wai_eval_begin(datm_model *mm, const datm_csr *obs, uint64_t seed, void **state,
                          datm_error *err)
{
    wai_model *m = (wai_model *)mm;
    *state = NULL;
    wai_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return DATM_E_NOMEM;
    e->chain = m->eval_chain && m->w->train;
    int rc;
    if (e->chain) {
        variant_eval_cfg c = {whai_encoder(m->w), m->w->train, m->w->B, m->eval_thin,
                              m->w->eval_theta_sample};
        rc = variant_eval_begin(mm, &wai_chain_ops, &c, obs, seed, &e->inner, err);
    } else {
        rc = whai_eval_begin(&m->w->base, obs, seed, &e->inner, err);
    }
    if (rc) {
        datm_free(e);
        return rc;
    }
    *state = e;
    return DATM_OK;
}

static int wai_eval_step(datm_model *mm, void *state, int64_t draw, datm_rate_accum *acc,
                         datm_error *err)
{
    wai_model *m = (wai_model *)mm;
    wai_eval *e = state;
    return e->chain ? variant_eval_step(mm, e->inner, draw, acc, err)
                    : whai_eval_step(&m->w->base, e->inner, draw, acc, err);
}

static void wai_eval_end(datm_model *mm, void *state)
{
    wai_model *m = (wai_model *)mm;
    wai_eval *e = state;
    if (!e) return;
    if (e->chain) variant_eval_end(mm, e->inner);
    else whai_eval_end(&m->w->base, e->inner);
    datm_free(e);
}

/* ---- the rest is WHAI's, on the inner model ---- */

static int wai_infer(const datm_model *mm, const datm_csr *docs, uint64_t seed, int nsamples,
                     datm_theta *out, datm_error *err)
{
    return whai_infer(&((const wai_model *)mm)->w->base, docs, seed, nsamples, out, err);
}

static int wai_get_phi(const datm_model *mm, int layer, const float **phi, int64_t *rows,
                       int64_t *cols)
{
    return whai_get_phi(&((const wai_model *)mm)->w->base, layer, phi, rows, cols);
}

static int wai_n_layers(const datm_model *mm) { return ((const wai_model *)mm)->w->L; }

/* WHAI's groups (Phi, encoder, its Adam) plus softmax_topics/{beta_l, adam_m, adam_v, adam_t}. */
static int wai_save(const datm_model *mm, struct datm_h5 *g, datm_error *err)
{
    const wai_model *m = (const wai_model *)mm;
    int rc = whai_save(&m->w->base, g, err);
    datm_h5 *gs = NULL;
    if (!rc) rc = datm_h5_group(g, "softmax_topics", 1, &gs, err);
    const datm_softmax_topics *t = m->st->smt;
    for (int l = 1; l <= t->L && !rc; l++) {
        const datm_param_view *v = &t->params.views[t->ibeta[l]];
        const int64_t dims[2] = {v->rows, v->cols};
        rc = datm_h5_write_f32(gs, v->name, t->params.value + v->offset, 2, dims, err);
    }
    const int64_t n[1] = {t->params.size};
    if (!rc) rc = datm_h5_write_f32(gs, "adam_m", t->adam.m, 1, n, err);
    if (!rc) rc = datm_h5_write_f32(gs, "adam_v", t->adam.v, 1, n, err);
    if (!rc) rc = datm_h5_write_scalar(gs, "adam_t", (double)t->adam.t, err);
    datm_h5_close(&gs);
    return rc;
}

static int wai_load(datm_model *mm, struct datm_h5 *g, datm_error *err)
{
    wai_model *m = (wai_model *)mm;
    int rc = whai_load(&m->w->base, g, err);
    datm_h5 *gs = NULL;
    if (!rc) rc = datm_h5_group(g, "softmax_topics", 0, &gs, err);
    datm_softmax_topics *t = m->st->smt;
    for (int l = 1; l <= t->L && !rc; l++) {
        const datm_param_view *v = &t->params.views[t->ibeta[l]];
        const int64_t dims[2] = {v->rows, v->cols};
        rc = datm_h5_read_f32(gs, v->name, t->params.value + v->offset, 2, dims, err);
    }
    const int64_t n[1] = {t->params.size};
    double at = 0;
    if (!rc) rc = datm_h5_read_f32(gs, "adam_m", t->adam.m, 1, n, err);
    if (!rc) rc = datm_h5_read_f32(gs, "adam_v", t->adam.v, 1, n, err);
    if (!rc) rc = datm_h5_read_scalar(gs, "adam_t", &at, err);
    datm_h5_close(&gs);
    if (rc) return rc;
    t->adam.t = (int64_t)at;
    datm_softmax_topics_refresh(t);
    /* the encoder's weights and Adam as WHAI loaded them */
    wai_state *st = m->st;
    const datm_adam *a = whai_adam(m->w);
    const size_t ne = (size_t)a->size * sizeof(float);
    memcpy(st->params, whai_encoder_weights(m->w), ne);
    memcpy(st->adam.m, a->m, ne);
    memcpy(st->adam.v, a->v, ne);
    st->adam.t = a->t;
    wai_mirror(m);
    return DATM_OK;
}

static void wai_destroy(datm_model *mm)
{
    wai_model *m = (wai_model *)mm;
    if (!m) return;
    wai_state_free(m->st);
    datm_encoder_ws_destroy(&m->ws);
    if (m->w) whai_destroy(&m->w->base);
    datm_free(m);
}

static int wai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                      datm_error *err);
static int wai_check(const datm_config *cfg, datm_error *err);

const datm_model_ops datm_model_wai = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "wai",
    .summary = "WAI: WHAI's encoder and ELBO, topics as softmax parameters learnt by Adam "
               "instead of TLASGR-MCMC (paper sec. II-E)",
    .schema = wai_schema,
    .create = wai_create,
    .train_batch = wai_train_batch,
    .eval_begin = wai_eval_begin,
    .eval_step = wai_eval_step,
    .eval_end = wai_eval_end,
    .infer = wai_infer,
    .predict = NULL,
    .get_phi = wai_get_phi,
    .n_layers = wai_n_layers,
    .save = wai_save,
    .load = wai_load,
    .destroy = wai_destroy,
    .check = wai_check,
};

/* WHAI's TLASGR keys (the schedule, count_mode, Dirichlet eta) stay in wai's table (resolved
 * specs keep their hashes) but do nothing here: any value but the default is an error naming
 * the key; phi_floor acts only on a phi_init warm start. */
static int wai_check_inert(const datm_config *cfg, datm_error *err)
{
    whai_params wp;
    whai_params_get(cfg, &wp);
    const struct { int row; double value; } inert[] = {
        {WHAI_ROW_eps0, wp.eps0},     {WHAI_ROW_tau0, wp.tau0},   {WHAI_ROW_kappa0, wp.kappa0},
        {WHAI_ROW_epsm0, wp.epsm0},   {WHAI_ROW_taum0, wp.taum0}, {WHAI_ROW_kappam0, wp.kappam0},
        {WHAI_ROW_m_floor, wp.m_floor}};
    for (size_t i = 0; i < DATM_COUNTOF(inert); i++) {
        const datm_param_schema *r = &datm_whai_schema[inert[i].row];
        if (inert[i].value != strtod(r->def, NULL))
            return datm_error_set(err, DATM_E_INVALID, "model.%s: %g: not used by wai (its "
                                  "topics are learnt by Adam, not TLASGR); remove the key",
                                  r->key, inert[i].value);
    }
    if (wp.eta.n != 0)
        return datm_error_set(err, DATM_E_INVALID, "model.eta: %d value(s): not used by wai (its "
                              "topics are learnt by Adam, not TLASGR); remove the key", wp.eta.n);
    /* phi_floor clamps a warm start's Phi (whai_phi_init) before wai takes beta = ln Phi */
    const datm_param_schema *pf = &datm_whai_schema[WHAI_ROW_phi_floor];
    if ((!wp.phi_init || !*wp.phi_init) && wp.phi_floor != strtod(pf->def, NULL))
        return datm_error_set(err, DATM_E_INVALID, "model.%s: %g: not used by wai without "
                              "phi_init (it only floors a warm start's Phi); remove the key",
                              pf->key, wp.phi_floor);
    const datm_param_schema *cm = &datm_whai_schema[WHAI_ROW_count_mode];
    if (strcmp(wp.count_mode, cm->def) != 0)
        return datm_error_set(err, DATM_E_INVALID, "model.%s: %s: not used by wai (its topics "
                              "are learnt by Adam, not TLASGR); remove the key", cm->key,
                              wp.count_mode);
    return DATM_OK;
}

/* WAI as WHAI with its own iteration and evaluation. */
static whai_variant wai_variant(void)
{
    whai_variant v;
    memset(&v, 0, sizeof v);
    v.ops = &datm_model_wai;
    v.own_iteration = 1;   /* Phi by Adam in wai_train_batch, not WHAI's TLASGR iteration */
    v.own_eval = 1;        /* WHAI's own chain would run TLASGR: WAI evaluates its own way */
    return v;
}

static int wai_check(const datm_config *cfg, datm_error *err)
{
    const whai_variant v = wai_variant();
    int rc = wai_check_inert(cfg, err);
    return rc ? rc : whai_check_variant(cfg, &v, err);
}

static int wai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                      datm_error *err)
{
    *out = NULL;
    int rc0 = wai_check_inert(cfg, err);   /* whai_create_variant checks the rest */
    if (rc0) return rc0;
    wai_model *m = datm_alloc(sizeof *m, err);
    if (!m) return DATM_E_NOMEM;
    m->base.ops = &datm_model_wai;
    const whai_variant v = wai_variant();
    datm_model *inner = NULL;
    int rc = whai_create_variant(cfg, info, &v, &inner, err);
    if (rc) {
        datm_free(m);
        return rc;
    }
    m->w = (whai_model *)inner;
    whai_params wp;
    whai_params_get(cfg, &wp);
    m->eval_chain = !strcmp(wp.eval_globals, "chain");
    m->eval_thin = m->w->eval_thin;
    const datm_encoder *enc = whai_encoder(m->w);
    m->st = wai_state_new(enc->params.size, whai_encoder_weights(m->w), whai_adam(m->w), err);
    rc = m->st ? DATM_OK : err->code;
    if (!rc) rc = datm_encoder_ws_create(enc, m->w->B, m->w->B * 64, &m->ws, err);
    const datm_gbn *g = whai_decoder(m->w);
    wai_params p;
    wai_params_get(cfg, &p);
    if (!rc) rc = datm_softmax_topics_create(g->L, g->K, (const double *const *)g->phi, p.phi_lr,
                                             p.phi_beta1, p.phi_beta2, p.phi_adam_eps,
                                             &m->st->smt, err);
    if (rc) {
        wai_destroy(&m->base);
        return rc;
    }
    wai_mirror(m);
    *out = &m->base;
    return DATM_OK;
}
