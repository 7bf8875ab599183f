/* models/unigram.c: the Dirichlet-smoothed unigram baseline ("unigram").
 *
 * One "topic": phi_v = (n_v + alpha) / (n + alpha V), where n_v counts word v in the training
 * documents seen so far, rescaled to the corpus size (after whole epochs it is exactly the
 * corpus count). Its Poisson rate for document d is phi times the document's token count, so
 * its per-heldout-word perplexity is the reference every topic model must beat. It exercises
 * the whole plugin contract (train_batch, eval_*, infer, get_phi, save/load) so the pipeline
 * can be tested end to end without a topic model. */
#include <math.h>
#include <string.h>

#include "eval/perplexity.h"
#include "io/h5.h"
#include "pipeline/model.h"
#include "pipeline/params.h"

/* V = vocabulary size. */
typedef struct unigram {
    datm_model base;
    int64_t  V;
    int64_t  n_train;     /* N documents in the training set */
    double   alpha;       /* Dirichlet pseudo-count per word */
    double  *counts;      /* (V) tokens of each word over every mini-batch seen */
    double   docs_seen;   /* documents over every mini-batch seen (with repeats) */
    float   *phi;         /* (V, 1) current distribution, sums to 1 */
} unigram;

/* model: keys (pipeline/params.h) */
#define UNIGRAM_PARAMS(X)                                                                  \
    X(alpha, "alpha", REAL, "0.5", 1e-9, 1e6, NULL,                                        \
      "Dirichlet smoothing pseudo-count added to every word (> 0: unseen words keep mass)")
DATM_PARAMS_STRUCT(unigram_params, UNIGRAM_PARAMS)
static DATM_PARAMS_GETTER(unigram_params, UNIGRAM_PARAMS)
static const datm_param_schema unigram_schema[] = {DATM_PARAMS_ROWS(UNIGRAM_PARAMS)};

static void unigram_refresh(unigram *u)
{
    double scale = u->docs_seen > 0 ? (double)u->n_train / u->docs_seen : 0.0;
    double total = 0;
    for (int64_t v = 0; v < u->V; v++) total += u->counts[v] * scale + u->alpha;
    for (int64_t v = 0; v < u->V; v++)
        u->phi[v] = total > 0 ? (float)((u->counts[v] * scale + u->alpha) / total)
                              : (float)(1.0 / (double)u->V);
}

static void unigram_destroy(datm_model *m)
{
    unigram *u = (unigram *)m;
    if (!u) return;
    datm_free(u->counts);
    datm_free(u->phi);
    datm_free(u);
}

static int unigram_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                          datm_error *err);

static int unigram_train_batch(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                               datm_train_stats *st, datm_error *err)
{
    (void)ctx;
    unigram *u = (unigram *)m;
    const datm_csr *X = b->X;
    if (X->n_cols != u->V)
        return datm_error_set(err, DATM_E_INVALID, "unigram: batch has %lld words, model %lld",
                              (long long)X->n_cols, (long long)u->V);
    /* loss: per-document negative log-likelihood of the batch under the model before the
     * update (up to the multinomial coefficient) */
    double nll = 0;
    for (int64_t i = 0; i < X->nnz; i++) nll -= (double)X->val[i] * log((double)u->phi[X->col[i]]);
    for (int64_t i = 0; i < X->nnz; i++) u->counts[X->col[i]] += X->val[i];
    u->docs_seen += (double)X->n_rows;
    unigram_refresh(u);
    memset(st, 0, sizeof *st);
    st->n_layers = 1;
    st->loss = X->n_rows ? nll / (double)X->n_rows : 0.0;
    st->loglik = -st->loss;
    return DATM_OK;
}

typedef struct unigram_eval {
    int64_t n;
    float  *theta;   /* (N, 1) token count of each evaluation document */
} unigram_eval;

static int unigram_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                              datm_error *err)
{
    (void)m;
    (void)seed;
    unigram_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return DATM_E_NOMEM;
    e->n = obs->n_rows;
    e->theta = datm_alloc_array((size_t)(obs->n_rows ? obs->n_rows : 1), sizeof *e->theta, err);
    if (!e->theta) { datm_free(e); return DATM_E_NOMEM; }
    for (int64_t d = 0; d < obs->n_rows; d++) e->theta[d] = (float)datm_csr_row_total(obs, d);
    *state = e;
    return DATM_OK;
}

static int unigram_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                             datm_error *err)
{
    (void)draw;
    (void)err;
    unigram *u = (unigram *)m;
    unigram_eval *e = state;
    datm_rate_accum_add(acc, u->phi, e->theta, 1);   /* rate_d = phi * (tokens of d) */
    return DATM_OK;
}

static void unigram_eval_end(datm_model *m, void *state)
{
    (void)m;
    unigram_eval *e = state;
    if (!e) return;
    datm_free(e->theta);
    datm_free(e);
}

static int unigram_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                         datm_theta *out, datm_error *err)
{
    (void)m;
    (void)seed;
    (void)nsamples;
    memset(out, 0, sizeof *out);
    out->n_layers = 1;
    out->n_docs = docs->n_rows;
    out->k[0] = 1;
    out->theta[0] = datm_alloc_array((size_t)(docs->n_rows ? docs->n_rows : 1), sizeof(float), err);
    if (!out->theta[0]) return DATM_E_NOMEM;
    for (int64_t d = 0; d < docs->n_rows; d++) out->theta[0][d] = (float)datm_csr_row_total(docs, d);
    return DATM_OK;
}

static int unigram_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                           int64_t *cols)
{
    const unigram *u = (const unigram *)m;
    if (layer != 1) return DATM_E_INVALID;
    *phi = u->phi;
    *rows = u->V;
    *cols = 1;
    return DATM_OK;
}

static int unigram_n_layers(const datm_model *m)
{
    (void)m;
    return 1;
}

static int unigram_save(const datm_model *m, struct datm_h5 *g, datm_error *err)
{
    const unigram *u = (const unigram *)m;
    int64_t dv[1] = {u->V}, dphi[2] = {u->V, 1};
    int rc = datm_h5_write_f64(g, "counts", u->counts, 1, dv, err);
    if (!rc) rc = datm_h5_write_scalar(g, "docs_seen", u->docs_seen, err);
    if (!rc) rc = datm_h5_write_scalar(g, "alpha", u->alpha, err);
    if (!rc) rc = datm_h5_write_f32(g, "phi_1", u->phi, 2, dphi, err);
    return rc;
}

static int unigram_load(datm_model *m, struct datm_h5 *g, datm_error *err)
{
    unigram *u = (unigram *)m;
    int64_t dv[1] = {u->V};
    int rc = datm_h5_read_f64(g, "counts", u->counts, 1, dv, err);
    if (!rc) rc = datm_h5_read_scalar(g, "docs_seen", &u->docs_seen, err);
    if (!rc) unigram_refresh(u);
    return rc;
}

const datm_model_ops datm_model_unigram = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "unigram",
    .summary = "Dirichlet-smoothed unigram baseline (one topic: the corpus word distribution)",
    .schema = unigram_schema,
    .create = unigram_create,
    .train_batch = unigram_train_batch,
    .eval_begin = unigram_eval_begin,
    .eval_step = unigram_eval_step,
    .eval_end = unigram_eval_end,
    .infer = unigram_infer,
    .predict = NULL,
    .get_phi = unigram_get_phi,
    .n_layers = unigram_n_layers,
    .save = unigram_save,
    .load = unigram_load,
    .destroy = unigram_destroy,
};

static int unigram_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                          datm_error *err)
{
    *out = NULL;
    if (info->n_vocab <= 0)
        return datm_error_set(err, DATM_E_INVALID, "unigram: empty vocabulary");
    unigram *u = datm_alloc(sizeof *u, err);
    if (!u) return DATM_E_NOMEM;
    u->base.ops = &datm_model_unigram;
    u->V = info->n_vocab;
    u->n_train = info->n_train;
    unigram_params p;
    unigram_params_get(cfg, &p);
    u->alpha = p.alpha;
    u->counts = datm_alloc_array((size_t)u->V, sizeof *u->counts, err);
    u->phi = datm_alloc_array((size_t)u->V, sizeof *u->phi, err);
    if (!u->counts || !u->phi) {
        unigram_destroy(&u->base);
        return DATM_E_NOMEM;
    }
    unigram_refresh(u);
    *out = &u->base;
    return DATM_OK;
}
