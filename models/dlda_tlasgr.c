/* models/dlda_tlasgr.c: DLDA-TLASGR ("dlda-tlasgr"), deep LDA with topic-layer-adaptive
 * stochastic gradient Riemannian MCMC for the globals (paper section II-A, eqs. Phi-updata,
 * r_update, update_M; docs/reference.md 1.3-1.10).
 *
 * Per mini-batch (B = train.batch_size, 200 in the paper): a fresh local Gibbs chain
 * (theta(t) = 1/K_t, c = 1) runs burnin_sweeps upward-downward sweeps, then collect_sweeps
 * more whose augmented counts are averaged; then one TLASGR step on every Phi(l) and r with
 * rho = N / B. c_n, p_n are sampled after cp_after sweeps of each local chain.
 *
 * Evaluation (eval_globals: chain, default): the test documents' chain is burnt in with the
 * globals fixed, then every draw runs one more TLASGR mini-batch step on a copy of the
 * globals (a random mini-batch of training documents) and eval_thin test sweeps with the
 * copy's globals — the authors' protocol of one test sweep per training mini-batch with
 * Phi(1) theta summed over the collected draws. */
#include <string.h>

#include "dlda_common.h"
#include "par/par.h"
#include "rand/rand.h"

typedef struct dlda_tlasgr {
    dlda_base       b;        /* header, config, globals, training set (first member) */
    int64_t         burnin, collect, cp_after;   /* local chain per mini-batch */
    int64_t         B;        /* mini-batch size */
    datm_gbn_chain *ch;       /* local chain, capacity >= B */
    datm_gbn_stats *s;
} dlda_tlasgr;

/* The variant's own rows of model: (after DLDA_COMMON_PARAMS; pipeline/params.h). */
#define DLDA_TLASGR_PARAMS(X) \
    X(burnin_sweeps, "burnin_sweeps", INT, "0", 0, 1e6, NULL, \
      "local Gibbs sweeps per mini-batch before collecting (0 = 20 L, docs/reference.md 1.10)") \
    X(collect_sweeps, "collect_sweeps", INT, "0", 0, 1e6, NULL, \
      "local sweeps whose augmented counts are averaged for the update (0 = 10 L)") \
    X(cp_after, "cp_after", INT, "-1", -1, 1e6, NULL, \
      "local sweeps before c_n, p_n are sampled (-1 = min(burnin/2, 10))") \
    X(eps0, "eps0", REAL, "1", 1e-12, 1e6, NULL, \
      "step eps_t = eps0 ((tau0 + t)/(tau0 + 1))^-kappa0, t = mini-batches so far") \
    X(tau0, "tau0", REAL, "20", 0, 1e12, NULL, \
      "eps_t schedule: tau0") \
    X(kappa0, "kappa0", REAL, "0.7", 0, 1, NULL, \
      "eps_t schedule: kappa0") \
    X(epsm0, "epsm0", REAL, "0.5", 0, 1, NULL, \
      "eps'_t of the annealed M (paper eq. update_M), same form; MATLAB TLASGR: 0.5, 20, 0.7") \
    X(taum0, "taum0", REAL, "20", 0, 1e12, NULL, \
      "eps'_t schedule: tau") \
    X(kappam0, "kappam0", REAL, "0.7", 0, 1, NULL, \
      "eps'_t schedule: kappa") \
    X(m_floor, "m_floor", REAL, "1", 1e-12, 1e12, NULL, \
      "M_k >= m_floor, so empty topics do not get huge steps (docs/reference.md 1.4)")
DATM_PARAMS_STRUCT(dlda_tlasgr_params, DLDA_TLASGR_PARAMS)
static DATM_PARAMS_GETTER(dlda_tlasgr_params, DLDA_TLASGR_PARAMS)
#define DLDA_TLASGR_ALL_PARAMS(X) DLDA_COMMON_PARAMS(X) DLDA_TLASGR_PARAMS(X)
static const datm_param_schema dlda_tlasgr_schema[] = {DATM_PARAMS_ROWS(DLDA_TLASGR_ALL_PARAMS)};

/* Local chain on mini-batch X (rows doc_ids) and one TLASGR step on g; *loglik (may be NULL)
 * gets the log-likelihood sum of the last sweep. */
static int tlasgr_iterate(dlda_tlasgr *m, datm_gbn *g, const datm_csr *X, const int64_t *doc_ids,
                          uint64_t seed, uint32_t purpose, uint64_t step, datm_tlasgr_report *rep,
                          double *loglik, datm_error *err)
{
    const int64_t B = X->n_rows;
    if (B > m->B) {   /* capacity of the local chain */
        datm_gbn_chain_destroy(&m->ch);
        int rc = datm_gbn_chain_create(g, B, &m->ch, err);
        if (rc) return rc;
        m->B = B;
    }
    datm_gbn_sweep_opts so = {.cp_after = m->cp_after, .mode = m->b.c.mode};
    double rho = (double)m->b.n_train / (double)B, ll = 0;
    if (datm_par_chunks() > 0) {   /* the documents' chains spread over MPI ranks */
        int rc = dlda_chunks_sweeps(g, X, doc_ids, m->ch, m->burnin, m->collect, &so, seed,
                                    purpose, step, m->s, &ll, err);
        if (loglik) *loglik = ll;
        return rc ? rc : datm_tlasgr_step_ranks(g, m->s, rho, seed, rep, err);
    }
    datm_gbn_chain_init(m->ch, B);
    datm_gbn_stats_reset(m->s);
    for (int64_t sw = 0; sw < m->burnin + m->collect; sw++) {
        datm_gbn_key key = {.seed = seed, .purpose = purpose, .step = step * 4096 + (uint64_t)sw,
                            .doc_ids = doc_ids};
        int rc = datm_gbn_chain_sweep(g, X, m->ch, &key, &so, sw >= m->burnin ? m->s : NULL, err);
        if (rc) return rc;
    }
    if (loglik) *loglik = datm_gbn_chain_loglik(m->ch);
    return datm_tlasgr_step(g, m->s, rho, seed, rep, err);
}

static void dt_destroy(datm_model *mm)
{
    dlda_tlasgr *m = (dlda_tlasgr *)mm;
    if (!m) return;
    datm_gbn_destroy(&m->b.g);
    datm_gbn_chain_destroy(&m->ch);
    datm_gbn_stats_destroy(&m->s);
    datm_free(m);
}

static int dt_train_batch(datm_model *mm, const datm_batch *b, const datm_train_ctx *ctx,
                          datm_train_stats *st, datm_error *err)
{
    dlda_tlasgr *m = (dlda_tlasgr *)mm;
    if (b->X->n_rows < 1) return DATM_OK;
    datm_tlasgr_report rep;
    double ll = 0;
    int rc = tlasgr_iterate(m, m->b.g, b->X, b->doc_ids, ctx->seed, DATM_STREAM_DOC,
                            (uint64_t)ctx->iteration, &rep, &ll, err);
    if (rc) return datm_error_prefix(err, "dlda-tlasgr mini-batch %lld: ", (long long)ctx->iteration);
    memset(st, 0, sizeof *st);
    st->n_layers = m->b.g->L;
    st->loglik = ll / (double)b->X->n_rows;
    st->loss = -st->loglik;
    for (int l = 1; l <= m->b.g->L; l++) st->step[l - 1] = rep.step_mean[l];
    return DATM_OK;
}

/* ---------------------------------------------------------------- evaluation */

typedef struct dt_eval {
    dlda_eval e;          /* test chain, copy of the globals (chain mode) */
    int64_t  *perm;       /* (N) chain mode: row order for random mini-batches */
} dt_eval;

static void dt_eval_end(datm_model *mm, void *state)
{
    (void)mm;
    dt_eval *e = state;
    if (!e) return;
    dlda_eval_close(&e->e);
    datm_free(e->perm);
    datm_free(e);
}

static int dt_eval_begin(datm_model *mm, const datm_csr *obs, uint64_t seed, void **state,
                         datm_error *err)
{
    dlda_tlasgr *m = (dlda_tlasgr *)mm;
    *state = NULL;
    dt_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return err->code;
    int64_t cp = m->b.c.cp_after >= 0 ? m->b.c.cp_after : 10;
    int rc = dlda_eval_open(&m->b, obs, seed, cp, &e->e, err);
    if (!rc && e->e.g) {
        e->perm = datm_alloc_array((size_t)m->b.n_train, sizeof(int64_t), err);
        if (!e->perm) rc = err->code;
        for (int64_t i = 0; !rc && i < m->b.n_train; i++) e->perm[i] = i;
    }
    if (!rc) rc = dlda_eval_burnin(&m->b, &e->e, err);
    if (rc) { dt_eval_end(mm, e); return rc; }
    *state = e;
    return DATM_OK;
}

/* One TLASGR step of the evaluation copy on B random training documents. */
static int dt_eval_advance(dlda_tlasgr *m, dt_eval *e, datm_error *err)
{
    const int64_t N = m->b.n_train, B = m->B < N ? m->B : N;
    datm_rng r;
    datm_rng_init2(&r, dlda_eval_seed(e->e.seed), DATM_STREAM_EVAL, (uint64_t)1 << 40,
                   (uint64_t)e->e.draws);
    for (int64_t i = 0; i < B; i++) {   /* partial Fisher-Yates: perm[0..B) is a random subset */
        int64_t j = i + (int64_t)datm_rng_below(&r, (uint64_t)(N - i));
        int64_t t = e->perm[i];
        e->perm[i] = e->perm[j];
        e->perm[j] = t;
    }
    datm_csr Xb;
    int64_t r0, r1;   /* with data-parallel ranks, only this rank's rows */
    datm_par_batch_rows(B, &r0, &r1);
    int rc = datm_csr_select_rows_range(m->b.train, e->perm, B, r0, r1, &Xb, err);
    if (rc) return rc;
    rc = tlasgr_iterate(m, e->e.g, &Xb, e->perm, dlda_eval_seed(e->e.seed), DATM_STREAM_EVAL,
                        ((uint64_t)1 << 30) + (uint64_t)e->e.draws, NULL, NULL, err);
    datm_csr_free(&Xb);
    return rc;
}

static int dt_eval_step(datm_model *mm, void *state, int64_t draw, struct datm_rate_accum *acc,
                        datm_error *err)
{
    (void)draw;
    dlda_tlasgr *m = (dlda_tlasgr *)mm;
    dt_eval *e = state;
    int rc = e->e.g ? dt_eval_advance(m, e, err) : DATM_OK;
    if (!rc) rc = dlda_eval_draw(&m->b, &e->e, acc, err);
    return rc;
}

/* ---------------------------------------------------------------- the rest of the contract */

static int dt_save(const datm_model *mm, struct datm_h5 *grp, datm_error *err)
{
    return dlda_save_gbn(((const dlda_tlasgr *)mm)->b.g, grp, err);
}

static int dt_load(datm_model *mm, struct datm_h5 *grp, datm_error *err)
{
    return dlda_load_gbn(((dlda_tlasgr *)mm)->b.g, grp, err);
}

static int dt_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err);

const datm_model_ops datm_model_dlda_tlasgr = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "dlda-tlasgr",
    .summary = "deep LDA / PGBN with TLASGR-MCMC globals and a local Gibbs chain per mini-batch",
    .schema = dlda_tlasgr_schema,
    .create = dt_create,
    .check = dlda_check,
    .train_batch = dt_train_batch,
    .eval_begin = dt_eval_begin,
    .eval_step = dt_eval_step,
    .eval_end = dt_eval_end,
    .infer = dlda_op_infer,
    .predict = NULL,
    .get_phi = dlda_op_get_phi,
    .n_layers = dlda_op_n_layers,
    .save = dt_save,
    .load = dt_load,
    .destroy = dt_destroy,
};

static int dt_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err)
{
    *out = NULL;
    if (info->streamed)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "dlda-tlasgr: its evaluation chain draws "
                              "random training documents, which a streamed corpus (data.stream) "
                              "does not hold in memory");
    if (!info->train || info->n_train < 1)
        return datm_error_set(err, DATM_E_INVALID, "dlda-tlasgr: needs the training set");
    dlda_tlasgr *m = datm_alloc(sizeof *m, err);
    if (!m) return err->code;
    m->b.base.ops = &datm_model_dlda_tlasgr;
    dlda_common_params pc;
    dlda_tlasgr_params pt;
    dlda_common_params_get(cfg, &pc);
    dlda_tlasgr_params_get(cfg, &pt);
    int rc = dlda_cfg_read(&pc, pt.cp_after, info, &m->b.c, err);
    if (!rc) {
        datm_gbn_opts *o = &m->b.c.o;
        o->eps0 = pt.eps0;
        o->tau0 = pt.tau0;
        o->kappa0 = pt.kappa0;
        o->epsm0 = pt.epsm0;
        o->taum0 = pt.taum0;
        o->kappam0 = pt.kappam0;
        o->m_floor = pt.m_floor;
        const int64_t bs = pt.burnin_sweeps, cs = pt.collect_sweeps;
        m->burnin = bs > 0 ? bs : 20 * (int64_t)m->b.c.L;
        m->collect = cs > 0 ? cs : 10 * (int64_t)m->b.c.L;
        m->cp_after = m->b.c.cp_after >= 0 ? m->b.c.cp_after : DATM_MIN(m->burnin / 2, 10);
    }
    m->b.train = info->train;
    m->b.n_train = info->n_train;
    m->B = info->batch_size > 0 ? DATM_MIN(info->batch_size, info->n_train) : 200;
    if (!rc) rc = datm_gbn_create(m->b.c.L, m->b.c.K, &m->b.c.o, info->seed, &m->b.g, err);
    if (!rc) rc = datm_gbn_chain_create(m->b.g, m->B, &m->ch, err);
    if (!rc) rc = datm_gbn_stats_create(m->b.g, &m->s, err);
    if (rc) { dt_destroy(&m->b.base); return rc; }
    /* with chunks a rank runs the chains of its chunks' documents only (dlda_chunks.c) */
    datm_par_set_own_rows(1);
    *out = &m->b.base;
    return DATM_OK;
}
