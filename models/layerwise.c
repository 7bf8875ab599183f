/* models/layerwise.c: "layerwise", DATM trained by WHAI with layer-wise width learning
 * (paper sec. II-D, Algorithm 2). Layers are added one at a time; while layer l is the top,
 * its latent counts are modelled by a truncated gamma-negative-binomial process,
 * theta(l) ~ Gam(r, 1) with r_k ~ Gam(gamma0 / K_l, 1 / c0) sampled by TLASGR-MCMC (paper eq.
 * r_update) from the top-layer CRT tables; all layers are trained jointly by Algorithm 1
 * with the KL prior of the top layer Gamma(r, 1); at the end of the stage, the units of layer
 * l with r_k < u are deleted with their Phi(l) columns and encoder parameters, and the next
 * layer starts with at most the inferred width of layer l.
 *
 * Modelling assumptions (no public code exists for this rule; docs/reference.md 3):
 *   - stages split the run's mini-batches: stage s gets the share stage_fractions[s] (default
 *     equal shares); the iteration counter t of the TLASGR step size continues across stages;
 *   - K_lmax = min(layers[l-1], inferred K_{l-1}) (Algorithm 2 uses the inferred width alone;
 *     with layers = [K1max, K1max, K1max] the two rules agree);
 *   - pruning deletes unit k of the top layer when r_k < prune_u (paper: u = 0.01), at the end
 *     of every stage including the last; at least the unit with the largest r_k is kept;
 *   - deleted: the Phi(l) column, the unit's shape and scale outputs (W1, b1, W2, b2 columns)
 *     and its hidden unit (W3(l) column, b3(l)) when the hidden width equals K_l; the kept
 *     units keep their weights, Adam moments, Phi columns and preconditioner M_k;
 *   - a new layer: Phi(l+1) and its encoder weights freshly initialised (WHAI's rules), its
 *     Adam moments zero, r = r_init (default 1, WHAI's r) until TLASGR updates it, and its
 *     M_k (and M for r) set from the first mini-batch as on the first TLASGR step;
 *   - while a layer is below the top its prior is Gamma(Phi(l+1) theta(l+1), 1) as in WHAI;
 *   - one iteration is WHAI's with learn_r (models/whai.c: encoder_steps Adam steps with the
 *     top KL prior Gamma(r, 1), theta sampled or its mean per aug_theta, augmentation with the
 *     top-layer tables, TLASGR on Phi and r, WHAI's KL-weight schedule); the only addition is
 *     the new top layer's M_k and M_r, set through WHAI's pre-TLASGR hook;
 *   - phi_init and phi_fixed are rejected: a warm start of topics whose widths change with
 *     every stage is not defined, and fixed topics (no TLASGR) would leave r at r_init.
 * The inferred structure is logged at each stage and saved as /model/inferred_layers.
 * Everything else (encoder keys, evaluation in both eval_globals modes, features, topics,
 * save/load of the parts) is WHAI's on the current stage's network (models/whai.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/h5.h"
#include "variant_schema.h"
#include "whai.h"

typedef struct lw_model {
    datm_model   base;
    whai_model  *w;           /* the current stage's network (its decoder has r) */
    datm_config *cfg;         /* a copy of the spec's model section, set per stage */
    datm_config *spec;        /* the spec's model section as given */
    datm_run_info info;
    int          L_target;    /* number of stages / final depth */
    int64_t      kmax[DATM_MAX_LAYERS + 1];   /* layers[] of the spec */
    int64_t      stage_end[DATM_MAX_LAYERS + 1];   /* last iteration of stage s */
    int          stage;       /* current stage = current depth */
    int          fresh_top;   /* 1: the top layer's M and M_r are set on the next step */
    int          done;        /* the final pruning happened */
    double       prune_u;
} lw_model;

static datm_param_schema lw_schema[VARIANT_SCHEMA_CAP];

/* The variant's own model: keys, after WHAI's (pipeline/params.h). */
#define LAYERWISE_PARAMS(X) \
    X(prune_u, "prune_u", REAL, "0.01", 0, 1e6, NULL, \
      "delete the top layer's units with r_k < prune_u at the end of each stage (paper: u)") \
    X(stage_fractions, "stage_fractions", REAL_LIST, "[]", 1e-9, 1e9, NULL, \
      "share of the run's mini-batches per stage (normalised): [] = equal shares")
DATM_PARAMS_STRUCT(lw_params, LAYERWISE_PARAMS)
static DATM_PARAMS_GETTER(lw_params, LAYERWISE_PARAMS)

__attribute__((constructor)) static void lw_schema_init(void)
{
    static const variant_schema_edit edits[] = {
        {"layers", "[128, 128, 128]",
         "Algorithm 2: the number of entries is the depth L; layers[0] = K_1max; a later layer "
         "starts with K_lmax = min(layers[l-1], inferred K_{l-1}) units"},
        {"eval_globals", NULL,
         "chain: each evaluation draw advances a copy of the network (with r) by eval_thin "
         "iterations; fixed: current globals only"},
        {"learn_r", "true",
         "must stay true: the top layer is a gamma-NB process whose r is learnt by TLASGR and "
         "decides the pruning (Algorithm 2)"},
        {"gamma0", NULL, "top-layer gamma-NB process r_k ~ Gam(gamma0 / K_l, 1 / c0): gamma0"},
        {"c0", NULL, "r_k ~ Gam(gamma0 / K_l, 1 / c0): c0"},
        {"r_init", NULL, "r_k of a new top layer before TLASGR updates it (WHAI's r = 1)"},
        {"phi_init", NULL,
         "not supported (must stay \"\"): the widths change at every stage"},
        {"phi_fixed", NULL, "not supported (must stay false): r and Phi are learnt by TLASGR"},
        {"aug_gibbs_burn", NULL,
         WHAI_AUG_GIBBS_BURN_DOC ". With them the upper layers kept every unit in a check on "
         "20News (layers [128, 128, 128], 21 epochs: widths 112-112-112 with 5 + 5 sweeps, "
         "76-38-32 without): no r_k fell below prune_u"},
    };
    static const datm_param_schema extra[] = {DATM_PARAMS_ROWS(LAYERWISE_PARAMS)};
    variant_schema_build(lw_schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)DATM_COUNTOF(edits), extra);
}

/* ---- building a stage's network ---- */

/* The stage's model section: layers = K[1..L]; per-layer lists given for the final depth
 * (kl_weight, kl_weight_start, eta, hidden with one entry per layer) cut to the first L
 * entries, set at every stage (the section holds the previous stage's cut until then). */
static int set_layers(lw_model *m, int L, const int64_t *K, datm_error *err)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "[");
    for (int l = 1; l <= L; l++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", l > 1 ? ", " : "", (long long)K[l]);
    snprintf(buf + n, sizeof buf - (size_t)n, "]");
    int rc = datm_config_set(m->cfg, datm_whai_schema[WHAI_ROW_layers].key, buf, err);
    whai_params sp;   /* the spec's model: section */
    whai_params_get(m->spec, &sp);
    const struct { int row; const datm_real_list *list; } real_keys[] = {
        {WHAI_ROW_kl_weight, &sp.kl_weight},
        {WHAI_ROW_kl_weight_start, &sp.kl_weight_start},
        {WHAI_ROW_eta, &sp.eta}};
    for (size_t i = 0; i < DATM_COUNTOF(real_keys) && !rc; i++) {
        const double *v = real_keys[i].list->v;
        if (real_keys[i].list->n != m->L_target) continue;
        n = snprintf(buf, sizeof buf, "[");
        for (int l = 0; l < L; l++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%.17g", l ? ", " : "", v[l]);
        snprintf(buf + n, sizeof buf - (size_t)n, "]");
        rc = datm_config_set(m->cfg, datm_whai_schema[real_keys[i].row].key, buf, err);
    }
    const int64_t *h = sp.hidden.v;
    if (!rc && sp.hidden.n == m->L_target) {
        n = snprintf(buf, sizeof buf, "[");
        for (int l = 0; l < L; l++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld", l ? ", " : "", (long long)h[l]);
        snprintf(buf + n, sizeof buf - (size_t)n, "]");
        rc = datm_config_set(m->cfg, datm_whai_schema[WHAI_ROW_hidden].key, buf, err);
    }
    return rc;
}

/* Copies src's views into a same-shaped encoder dst's views, through the unit maps (the
 * moments of Adam travel with the weights): remap a shallow copy whose values are x. */
static int remap_vector(const datm_encoder *src, const float *x, const datm_encoder *dst,
                        const int32_t *const *map, int fresh_from, float *out, datm_error *err)
{
    datm_encoder tmp = *src;
    tmp.params.value = (float *)x;
    datm_encoder *r = NULL;
    int rc = datm_encoder_remap(&tmp, &dst->o, map, 0, &r, err);
    if (rc) return rc;
    memcpy(out, r->params.value, (size_t)r->params.size * sizeof(float));
    /* layers from fresh_from up are new: their moments start at zero */
    for (int l = fresh_from; l <= r->L; l++) {
        const int v[6] = {r->iW3[l], r->ib3[l], r->iW1[l], r->ib1[l], r->iW2[l], r->ib2[l]};
        for (int j = 0; j < 6; j++)
            memset(out + r->params.views[v[j]].offset, 0,
                   (size_t)datm_params_len(&r->params, v[j]) * sizeof(float));
    }
    datm_encoder_destroy(&r);
    return DATM_OK;
}

/* WHAI's pre-TLASGR hook: a new top layer's M_k and M_r start at the first mini-batch's
 * estimate (paper eq. update_M with eps' = 1), as on the first TLASGR step of a fresh network;
 * its other layers keep their annealed M. Only the training chain: fresh_top is set by
 * lw_prune at the start of a training batch and cleared by that batch's own iteration, so
 * an evaluation copy never starts with a fresh top layer. */
static int lw_pre_tlasgr(void *user, whai_chain *c, double rho, datm_error *err)
{
    (void)err;
    lw_model *m = user;
    if (!whai_is_training_chain(m->w, c) || !m->fresh_top) return DATM_OK;
    m->fresh_top = 0;
    if (c->gbn->t == 0) return DATM_OK;   /* the first TLASGR step sets every M anyway */
    whai_chain_reset_top_m(c, rho);
    return DATM_OK;
}

/* The decoder of the new network w with old's trained layers carried over (layers 1..L_old,
 * the top one through keep; layers above L_old as w has them), handed to w whole. */
static int lw_carry_decoder(whai_model *w, const whai_model *old, const int32_t *keep,
                            datm_error *err)
{
    const datm_gbn *g0 = whai_decoder(w), *og = whai_decoder(old);
    datm_gbn *g = NULL;
    int rc = datm_gbn_create(g0->L, g0->K, &g0->o, 0, &g, err);
    if (rc) return rc;
    datm_gbn_copy(g, g0);
    const int L = g->L, Lo = old->L;
    for (int l = 1; l <= Lo; l++) {
        const int64_t R = g->K[l - 1], C = g->K[l], Co = og->K[l];
        for (int64_t k = 0; k < C; k++) {
            const int64_t ko = (l == Lo && keep) ? keep[k] : k;
            for (int64_t r = 0; r < R; r++) g->phi[l][r * C + k] = og->phi[l][r * Co + ko];
            g->M[l][k] = og->M[l][ko];
        }
    }
    if (L == Lo && g->r)   /* final pruning: r of the kept units */
        for (int64_t k = 0; k < g->K[L]; k++) g->r[k] = og->r[keep ? keep[k] : k];
    g->t = og->t;
    g->M_r = og->M_r;
    g->gamma0 = og->gamma0;
    g->c0 = og->c0;
    datm_gbn_sync_f(g);
    whai_set_decoder(w, g);
    datm_gbn_destroy(&g);
    return DATM_OK;
}

/* The encoder of w: old's trained weights and Adam moments through the unit map (keep at
 * old's top layer), layers above old's fresh with zero moments; Adam's step count goes on. */
static int lw_carry_encoder(lw_model *m, whai_model *w, const whai_model *old,
                            const int32_t *keep, datm_error *err)
{
    int32_t *maps[DATM_MAX_LAYERS + 1] = {NULL};
    maps[old->L] = (int32_t *)keep;
    const int32_t *const *map = (const int32_t *const *)maps;
    const datm_encoder *oe = whai_encoder(old);
    const datm_adam *oa = whai_adam(old);
    datm_encoder *e2 = NULL;
    const int64_t n = whai_encoder(w)->params.size;
    float *am = datm_alloc_array((size_t)n, sizeof(float), err);
    float *av = datm_alloc_array((size_t)n, sizeof(float), err);
    int rc = am && av ? DATM_OK : DATM_E_NOMEM;
    if (!rc) rc = datm_encoder_remap(oe, &whai_encoder(w)->o, map, m->info.seed, &e2, err);
    if (!rc && e2->params.size != n)
        rc = datm_error_set(err, DATM_E_INVALID, "layerwise: encoder layout mismatch");
    if (!rc) rc = remap_vector(oe, oa->m, e2, map, old->L + 1, am, err);
    if (!rc) rc = remap_vector(oe, oa->v, e2, map, old->L + 1, av, err);
    if (!rc) {
        rc = whai_replace_encoder(w, e2, err);   /* takes e2 */
        if (!rc) whai_set_adam(w, am, av, oa->t);
    } else {
        datm_encoder_destroy(&e2);
    }
    datm_free(am);
    datm_free(av);
    return rc;
}

/* The trained parts of old carried over into the new network w (decoder, encoder, Adam, the
 * KL schedule's iteration). */
static int lw_carry_over(lw_model *m, whai_model *w, const whai_model *old, const int32_t *keep,
                         datm_error *err)
{
    int rc = lw_carry_decoder(w, old, keep, err);
    if (!rc) whai_set_iteration(w, old->iteration);   /* the KL schedule of its evaluation chain */
    if (!rc) rc = lw_carry_encoder(m, w, old, keep, err);
    return rc;
}

/* A network with widths K[1..L] from the spec's keys (WHAI with learn_r: a decoder with r)
 * and, when old is given, the trained parts of old carried over: layers 1..L_old-1 whole,
 * layer L_old through keep (n_keep unit indices), layers above L_old fresh. */
static int lw_build(lw_model *m, int L, const int64_t *K, const whai_model *old,
                    const int32_t *keep, whai_model **out, datm_error *err)
{
    *out = NULL;
    int rc = set_layers(m, L, K, err);
    datm_model *inner = NULL;
    whai_variant v;
    memset(&v, 0, sizeof v);
    v.ops = &datm_model_whai;   /* the stage's network is a WHAI model (with learn_r) */
    v.hooks.pre_tlasgr = lw_pre_tlasgr;
    v.hooks.pre_tlasgr_user = m;
    if (!rc) rc = whai_create_variant(m->cfg, &m->info, &v, &inner, err);
    if (rc) return rc;
    whai_model *w = (whai_model *)inner;
    DATM_ASSERT(w->learn_r && whai_decoder(w)->r);
    if (old) rc = lw_carry_over(m, w, old, keep, err);
    if (rc) {
        whai_destroy(&w->base);
        return rc;
    }
    *out = w;
    return DATM_OK;
}

/* Deletes the top layer's units with r_k < u; with grow, adds a layer on top. */
static int lw_prune(lw_model *m, int grow, datm_error *err)
{
    whai_model *w = m->w;
    const int L = w->L;
    const datm_gbn *g = whai_decoder(w);
    const int64_t K = g->K[L];
    int32_t *keep = datm_alloc_array((size_t)K, sizeof(int32_t), err);
    if (!keep) return DATM_E_NOMEM;
    int64_t n = 0, best = 0;
    for (int64_t k = 0; k < K; k++) {
        if (g->r[k] >= m->prune_u) keep[n++] = (int32_t)k;
        if (g->r[k] > g->r[best]) best = k;
    }
    if (n == 0) keep[n++] = (int32_t)best;
    int64_t K2[DATM_MAX_LAYERS + 2];
    for (int l = 0; l <= L; l++) K2[l] = w->K[l];
    K2[L] = n;
    int L2 = L;
    if (grow) {
        L2 = L + 1;
        K2[L2] = DATM_MIN(m->kmax[L2], n);
    }
    datm_info("layerwise: stage %d ends at iteration %lld: layer %d keeps %lld of %lld units "
              "(r_k >= %.9g)%s", m->stage, (long long)g->t, L, (long long)n, (long long)K,
              m->prune_u, grow ? "; adding a layer" : "");
    whai_model *w2 = NULL;
    int rc = lw_build(m, L2, K2, w, keep, &w2, err);
    datm_free(keep);
    if (rc) return rc;
    whai_destroy(&w->base);
    m->w = w2;
    m->fresh_top = grow;
    if (grow) m->stage++;
    return DATM_OK;
}

/* ---- one iteration of Algorithm 2's inner loop: WHAI's with learn_r ---- */

static int lw_train_batch(datm_model *mm, const datm_batch *b, const datm_train_ctx *ctx,
                          datm_train_stats *st, datm_error *err)
{
    lw_model *m = (lw_model *)mm;
    int rc = DATM_OK;
    /* stage boundary: prune the top layer and grow */
    while (!rc && m->stage < m->L_target && ctx->iteration > m->stage_end[m->stage])
        rc = lw_prune(m, 1, err);
    if (!rc) rc = whai_train_batch(&m->w->base, b, ctx, st, err);
    if (rc) return rc;
    /* the last stage also ends with pruning (Algorithm 2) */
    if (!m->done && m->stage == m->L_target && ctx->iteration >= m->stage_end[m->stage]) {
        rc = lw_prune(m, 0, err);
        m->done = 1;
    }
    return rc;
}

/* ---- evaluation: WHAI's on the current network (its chain copies carry r) ---- */

static int lw_eval_begin(datm_model *mm, const datm_csr *obs, uint64_t seed, void **state,
                         datm_error *err)
{
    return whai_eval_begin(&((lw_model *)mm)->w->base, obs, seed, state, err);
}

static int lw_eval_step(datm_model *mm, void *state, int64_t draw, struct datm_rate_accum *acc,
                        datm_error *err)
{
    return whai_eval_step(&((lw_model *)mm)->w->base, state, draw, acc, err);
}

static void lw_eval_end(datm_model *mm, void *state)
{
    whai_eval_end(&((lw_model *)mm)->w->base, state);
}

/* ---- WHAI's on the current network ---- */

static int lw_infer(const datm_model *mm, const datm_csr *docs, uint64_t seed, int nsamples,
                    datm_theta *out, datm_error *err)
{
    return whai_infer(&((const lw_model *)mm)->w->base, docs, seed, nsamples, out, err);
}

static int lw_get_phi(const datm_model *mm, int layer, const float **phi, int64_t *rows,
                      int64_t *cols)
{
    return whai_get_phi(&((const lw_model *)mm)->w->base, layer, phi, rows, cols);
}

static int lw_n_layers(const datm_model *mm) { return ((const lw_model *)mm)->w->L; }

/* WHAI's datasets (decoder views incl. r, encoder, Adam) plus inferred_layers (L + 1: V, K_1..
 * K_L) and layerwise_state [stage, fresh_top, done]. */
static int lw_save(const datm_model *mm, struct datm_h5 *g, datm_error *err)
{
    const lw_model *m = (const lw_model *)mm;
    const whai_model *w = m->w;
    int rc = whai_save(&w->base, g, err);
    const int64_t n[1] = {w->L + 1}, three[1] = {3};
    const int64_t st[3] = {m->stage, m->fresh_top, m->done};
    if (!rc) rc = datm_h5_write_i64(g, "inferred_layers", w->K, 1, n, err);
    if (!rc) rc = datm_h5_write_i64(g, "layerwise_state", st, 1, three, err);
    return rc;
}

static int lw_load(datm_model *mm, struct datm_h5 *g, datm_error *err)
{
    lw_model *m = (lw_model *)mm;
    int64_t dims[2] = {0, 0};
    int rc = datm_h5_shape(g, "inferred_layers", dims);
    if (rc < 0 || dims[0] < 2 || dims[0] > DATM_MAX_LAYERS + 1)
        return datm_error_set(err, DATM_E_FORMAT, "layerwise: no valid inferred_layers");
    const int L = (int)dims[0] - 1;
    int64_t K[DATM_MAX_LAYERS + 1], st[3];
    const int64_t three[1] = {3};
    rc = datm_h5_read_i64(g, "inferred_layers", K, 1, dims, err);
    if (!rc) rc = datm_h5_read_i64(g, "layerwise_state", st, 1, three, err);
    if (rc) return rc;
    if (K[0] != m->w->K[0])
        return datm_error_set(err, DATM_E_FORMAT, "layerwise: saved vocabulary %lld, model %lld",
                              (long long)K[0], (long long)m->w->K[0]);
    whai_model *w2 = NULL;
    rc = lw_build(m, L, K, NULL, NULL, &w2, err);
    if (rc) return rc;
    whai_destroy(&m->w->base);
    m->w = w2;
    m->stage = (int)st[0];
    m->fresh_top = (int)st[1];
    m->done = (int)st[2];
    return whai_load(&m->w->base, g, err);
}

static void lw_destroy(datm_model *mm)
{
    lw_model *m = (lw_model *)mm;
    if (!m) return;
    if (m->w) whai_destroy(&m->w->base);
    datm_config_destroy(&m->cfg);
    datm_config_destroy(&m->spec);
    datm_free(m);
}

static int lw_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err);
static int lw_check(const datm_config *cfg, datm_error *err);

const datm_model_ops datm_model_layerwise = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "layerwise",
    .summary = "DATM-WHAI with layer-wise training: add layers one at a time with a gamma-NB top "
               "layer and prune units with r_k < u (paper Alg. 2)",
    .schema = lw_schema,
    .create = lw_create,
    .train_batch = lw_train_batch,
    .eval_begin = lw_eval_begin,
    .eval_step = lw_eval_step,
    .eval_end = lw_eval_end,
    .infer = lw_infer,
    .predict = NULL,
    .get_phi = lw_get_phi,
    .n_layers = lw_n_layers,
    .save = lw_save,
    .load = lw_load,
    .destroy = lw_destroy,
    .check = lw_check,
};

/* Algorithm 2's own rules; each stage's network is then a WHAI model of the spec's keys. */
static int lw_check_own(const datm_config *cfg, datm_error *err)
{
    whai_params wp;
    lw_params p;
    whai_params_get(cfg, &wp);
    lw_params_get(cfg, &p);
    const int L = wp.layers.n;
    if (L < 1 || L > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "model.layers: %d layers (1..%d)", L,
                              DATM_MAX_LAYERS);
    const int nf = p.stage_fractions.n;
    if (nf != 0 && nf != L)
        return datm_error_set(err, DATM_E_INVALID, "model.stage_fractions has %d values; give "
                              "none or one per layer (%d)", nf, L);
    if (!wp.learn_r)
        return datm_error_set(err, DATM_E_INVALID, "model.learn_r: layerwise needs true (the "
                              "top layer's r decides the pruning of Algorithm 2)");
    const char *pinit = wp.phi_init;
    if (pinit && *pinit)
        return datm_error_set(err, DATM_E_INVALID, "model.phi_init is not supported by "
                              "layerwise: the layer widths change at every stage (leave it \"\")");
    if (wp.phi_fixed)
        return datm_error_set(err, DATM_E_INVALID, "model.phi_fixed is not supported by "
                              "layerwise: r and Phi must be learnt by TLASGR for the pruning");
    return DATM_OK;
}

/* The last stage's network has every layer of the spec: WHAI's rules on the spec's keys are
 * those of every stage (a stage takes the first l values of a per-layer list). */
static int lw_check(const datm_config *cfg, datm_error *err)
{
    const whai_variant v = {.ops = &datm_model_whai};
    int rc = lw_check_own(cfg, err);
    return rc ? rc : whai_check_variant(cfg, &v, err);
}

static int lw_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err)
{
    *out = NULL;
    int rc0 = lw_check_own(cfg, err);   /* each stage's whai_create_variant checks the rest */
    if (rc0) return rc0;
    whai_params wp;
    lw_params p;
    whai_params_get(cfg, &wp);
    lw_params_get(cfg, &p);
    const int64_t *lay = wp.layers.v;
    const int L = wp.layers.n;
    const double *fr = p.stage_fractions.v;
    const int nf = p.stage_fractions.n;
    lw_model *m = datm_alloc(sizeof *m, err);
    if (!m) return DATM_E_NOMEM;
    m->base.ops = &datm_model_layerwise;
    m->info = *info;
    m->L_target = L;
    for (int l = 1; l <= L; l++) m->kmax[l] = lay[l - 1];
    m->prune_u = p.prune_u;
    m->stage = 1;
    const int64_t T = DATM_MAX(info->total_iters, 1);
    double tot = 0, acc = 0;
    for (int l = 1; l <= L; l++) tot += nf ? fr[l - 1] : 1.0;
    for (int l = 1; l <= L; l++) {
        acc += nf ? fr[l - 1] : 1.0;
        m->stage_end[l] = l == L ? T : (int64_t)llround((double)T * acc / tot);
    }
    int rc = datm_config_copy(cfg, &m->cfg, err);
    if (!rc) rc = datm_config_copy(cfg, &m->spec, err);
    int64_t K1[2] = {info->n_vocab, m->kmax[1]};
    if (!rc) rc = lw_build(m, 1, K1, NULL, NULL, &m->w, err);
    if (rc) {
        lw_destroy(&m->base);
        return rc;
    }
    *out = &m->base;
    return DATM_OK;
}
