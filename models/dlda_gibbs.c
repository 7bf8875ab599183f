/* models/dlda_gibbs.c: DLDA-Gibbs ("dlda-gibbs"), the batch Gibbs sampler of the gamma
 * belief network / deep LDA (paper section II-A, Table 1 DLDA rows; docs/reference.md 1.7-1.9).
 *
 * Every train_batch call is one Gibbs iteration over the WHOLE training set (the spec sets
 * train.batch_size >= N, train.epochs = iterations): upward-downward sweep of every
 * document's theta(l), c_n, p_n (engine/decoder/gibbs.c), then Phi(l) from its Dirichlet
 * conditional Dir(eta + A(l)_.k), r from its gamma conditional and, with sample_hyper,
 * gamma0 and c0. All layers are sampled jointly from the first iteration (not greedy
 * layer-wise as in the GBN code: the widths are fixed here, nothing is pruned).
 *
 * Evaluation (eval_globals: chain, default): the test documents' chain is burnt in with the
 * globals fixed, then every draw runs one more Gibbs iteration on a copy of the training
 * chain and eval_thin test sweeps with the copy's globals, so the rate Phi(1) theta is
 * averaged over joint posterior samples of (Phi, theta) — the Zhou / Cong protocol with the
 * topics learnt from the training documents only. */
#include <string.h>

#include "dlda_common.h"
#include "rand/rand.h"

typedef struct dlda_gibbs {
    dlda_base       b;        /* header, config, globals, training set (first member) */
    int             sample_hyper;
    datm_gbn_chain *ch;       /* local state of every training document */
    datm_gbn_stats *s;
} dlda_gibbs;

/* The variant's own rows of model: (after DLDA_COMMON_PARAMS; pipeline/params.h). */
#define DLDA_GIBBS_PARAMS(X) \
    X(sample_hyper, "sample_hyper", BOOL, "true", DATM_NOB, NULL, \
      "resample gamma0 and c0 each iteration (GBN code); false keeps them fixed") \
    X(cp_after, "cp_after", INT, "10", 0, 1e9, NULL, \
      "iterations (sweeps of a chain) before c_n, p_n are sampled; c = 1 until then")
DATM_PARAMS_STRUCT(dlda_gibbs_params, DLDA_GIBBS_PARAMS)
static DATM_PARAMS_GETTER(dlda_gibbs_params, DLDA_GIBBS_PARAMS)
#define DLDA_GIBBS_ALL_PARAMS(X) DLDA_COMMON_PARAMS(X) DLDA_GIBBS_PARAMS(X)
static const datm_param_schema dlda_gibbs_schema[] = {DATM_PARAMS_ROWS(DLDA_GIBBS_ALL_PARAMS)};

/* One Gibbs iteration on (g, ch) over X. */
static int gibbs_iterate(const dlda_gibbs *m, datm_gbn *g, datm_gbn_chain *ch, datm_gbn_stats *s,
                         uint64_t seed, uint32_t purpose, int64_t it, datm_error *err)
{
    datm_gbn_stats_reset(s);
    datm_gbn_key key = {.seed = seed, .purpose = purpose, .step = (uint64_t)it, .doc_ids = NULL};
    datm_gbn_sweep_opts so = {.cp_after = m->b.c.cp_after, .mode = m->b.c.mode};
    int rc = datm_gbn_chain_sweep(g, m->b.train, ch, &key, &so, s, err);
    if (!rc) rc = datm_gbn_gibbs_globals(g, s, seed, it, m->sample_hyper, err);
    return rc;
}

static void dg_destroy(datm_model *mm)
{
    dlda_gibbs *m = (dlda_gibbs *)mm;
    if (!m) return;
    datm_gbn_destroy(&m->b.g);
    datm_gbn_chain_destroy(&m->ch);
    datm_gbn_stats_destroy(&m->s);
    datm_free(m);
}

static int dg_train_batch(datm_model *mm, const datm_batch *b, const datm_train_ctx *ctx,
                          datm_train_stats *st, datm_error *err)
{
    dlda_gibbs *m = (dlda_gibbs *)mm;
    if (b->X->n_rows != m->b.n_train)
        return datm_error_set(err, DATM_E_INVALID,
                              "dlda-gibbs: got a mini-batch of %lld documents; this batch sampler "
                              "needs the whole training set (train.batch_size >= %lld)",
                              (long long)b->X->n_rows, (long long)m->b.n_train);
    int rc = gibbs_iterate(m, m->b.g, m->ch, m->s, ctx->seed, DATM_STREAM_DOC, ctx->iteration, err);
    if (rc) return datm_error_prefix(err, "dlda-gibbs iteration %lld: ", (long long)ctx->iteration);
    memset(st, 0, sizeof *st);
    st->n_layers = m->b.g->L;
    st->loglik = datm_gbn_chain_loglik(m->ch) / (double)m->b.n_train;
    st->loss = -st->loglik;
    return DATM_OK;
}

/* ---------------------------------------------------------------- evaluation */

typedef struct dg_eval {
    dlda_eval       e;        /* test chain, copy of the globals (chain mode) */
    datm_gbn_chain *ch;       /* chain mode: copy of the training chain */
    datm_gbn_stats *s;
} dg_eval;

static void dg_eval_end(datm_model *mm, void *state)
{
    (void)mm;
    dg_eval *e = state;
    if (!e) return;
    dlda_eval_close(&e->e);
    datm_gbn_chain_destroy(&e->ch);
    datm_gbn_stats_destroy(&e->s);
    datm_free(e);
}

static int dg_eval_begin(datm_model *mm, const datm_csr *obs, uint64_t seed, void **state,
                         datm_error *err)
{
    dlda_gibbs *m = (dlda_gibbs *)mm;
    *state = NULL;
    dg_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return err->code;
    int rc = dlda_eval_open(&m->b, obs, seed, m->b.c.cp_after, &e->e, err);
    if (!rc && e->e.g) {
        rc = datm_gbn_chain_create(m->b.g, m->b.n_train, &e->ch, err);
        if (!rc) rc = datm_gbn_stats_create(m->b.g, &e->s, err);
        if (!rc) datm_gbn_chain_copy(e->ch, m->ch);
    }
    if (!rc) rc = dlda_eval_burnin(&m->b, &e->e, err);
    if (rc) { dg_eval_end(mm, e); return rc; }
    *state = e;
    return DATM_OK;
}

static int dg_eval_step(datm_model *mm, void *state, int64_t draw, struct datm_rate_accum *acc,
                        datm_error *err)
{
    (void)draw;
    dlda_gibbs *m = (dlda_gibbs *)mm;
    dg_eval *e = state;
    int rc = DATM_OK;
    if (e->e.g)
        rc = gibbs_iterate(m, e->e.g, e->ch, e->s, dlda_eval_seed(e->e.seed), DATM_STREAM_EVAL,
                           ((int64_t)1 << 40) + e->e.draws, err);
    if (!rc) rc = dlda_eval_draw(&m->b, &e->e, acc, err);
    return rc;
}

/* ---------------------------------------------------------------- the rest of the contract */

static int dg_save(const datm_model *mm, struct datm_h5 *grp, datm_error *err)
{
    const dlda_gibbs *m = (const dlda_gibbs *)mm;
    int rc = dlda_save_gbn(m->b.g, grp, err);
    /* the training chain, for an exact resume */
    const datm_gbn_chain *ch = m->ch;
    for (int l = 1; l <= ch->L && !rc; l++) {
        char name[32];
        snprintf(name, sizeof name, "chain_theta_%d", l);
        int64_t d[2] = {ch->n_docs, ch->K[l]};
        rc = datm_h5_write_f64(grp, name, ch->theta[l], 2, d, err);
    }
    int64_t dc[2] = {ch->n_docs, ch->L + 2};
    if (!rc) rc = datm_h5_write_f64(grp, "chain_c", ch->c, 2, dc, err);
    if (!rc) rc = datm_h5_write_f64(grp, "chain_p", ch->p, 2, dc, err);
    if (!rc) rc = datm_h5_write_scalar(grp, "chain_sweeps", (double)ch->sweeps, err);
    return rc;
}

static int dg_load(datm_model *mm, struct datm_h5 *grp, datm_error *err)
{
    dlda_gibbs *m = (dlda_gibbs *)mm;
    int rc = dlda_load_gbn(m->b.g, grp, err);
    datm_gbn_chain *ch = m->ch;
    for (int l = 1; l <= ch->L && !rc; l++) {
        char name[32];
        snprintf(name, sizeof name, "chain_theta_%d", l);
        int64_t d[2] = {ch->n_docs, ch->K[l]};
        rc = datm_h5_read_f64(grp, name, ch->theta[l], 2, d, err);
    }
    int64_t dc[2] = {ch->n_docs, ch->L + 2};
    if (!rc) rc = datm_h5_read_f64(grp, "chain_c", ch->c, 2, dc, err);
    if (!rc) rc = datm_h5_read_f64(grp, "chain_p", ch->p, 2, dc, err);
    double sw = 0;
    if (!rc) rc = datm_h5_read_scalar(grp, "chain_sweeps", &sw, err);
    if (!rc) ch->sweeps = (int64_t)sw;
    return rc;
}

static int dg_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err);

const datm_model_ops datm_model_dlda_gibbs = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "dlda-gibbs",
    .summary = "deep LDA / PGBN by batch upward-downward Gibbs sampling (Phi from Dirichlet "
               "conditionals, all layers jointly)",
    .schema = dlda_gibbs_schema,
    .create = dg_create,
    .check = dlda_check,
    .train_batch = dg_train_batch,
    .eval_begin = dg_eval_begin,
    .eval_step = dg_eval_step,
    .eval_end = dg_eval_end,
    .infer = dlda_op_infer,
    .predict = NULL,
    .get_phi = dlda_op_get_phi,
    .n_layers = dlda_op_n_layers,
    .save = dg_save,
    .load = dg_load,
    .destroy = dg_destroy,
};

static int dg_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err)
{
    *out = NULL;
    if (!info->train || info->n_train < 1)
        return datm_error_set(err, DATM_E_INVALID, "dlda-gibbs: needs the training set");
    if (info->batch_size > 0 && info->batch_size < info->n_train)
        return datm_error_set(err, DATM_E_INVALID,
                              "dlda-gibbs samples the whole training set per iteration: set "
                              "train.batch_size >= %lld (got %lld); train.epochs = iterations",
                              (long long)info->n_train, (long long)info->batch_size);
    dlda_gibbs *m = datm_alloc(sizeof *m, err);
    if (!m) return err->code;
    m->b.base.ops = &datm_model_dlda_gibbs;
    dlda_common_params pc;
    dlda_gibbs_params pg;
    dlda_common_params_get(cfg, &pc);
    dlda_gibbs_params_get(cfg, &pg);
    int rc = dlda_cfg_read(&pc, pg.cp_after, info, &m->b.c, err);
    m->sample_hyper = pg.sample_hyper;
    m->b.train = info->train;
    m->b.n_train = info->n_train;
    if (!rc) rc = datm_gbn_create(m->b.c.L, m->b.c.K, &m->b.c.o, info->seed, &m->b.g, err);
    if (!rc) rc = datm_gbn_chain_create(m->b.g, m->b.n_train, &m->ch, err);
    if (!rc) rc = datm_gbn_stats_create(m->b.g, &m->s, err);
    if (rc) { dg_destroy(&m->b.base); return rc; }
    *out = &m->b.base;
    return DATM_OK;
}
