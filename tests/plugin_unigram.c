/* tests/plugin_unigram.c: a plugin variant written from scratch against include/datm_model.h
 * alone ("plugin-unigram"): the Dirichlet-smoothed unigram model, one topic
 * phi_v = (n_v s + alpha) / sum_w (n_w s + alpha), where n_v counts word v over the
 * mini-batches seen and s = N / (documents seen) rescales them to the corpus; a document's
 * rate is phi times its length. It fills every function of datm_model_ops itself (no WHAI),
 * so tests/test_plugin_load.sh can check the ABI is enough for a variant of its own: its
 * held-out perplexity must equal the built-in unigram's, a closed form of the same counts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <datm_model.h>

typedef struct pu_model {
    datm_model base;     /* first: the engine holds a datm_model pointer */
    int64_t    V, N;
    double     alpha;
    double    *counts;   /* (V) tokens of each word over the mini-batches seen */
    double     seen;     /* documents seen, with repeats */
    float     *phi;      /* (V, 1) */
} pu_model;

static const datm_param_schema pu_schema[] = {
    {"alpha", DATM_PARAM_REAL, "0.5", 1e-9, 1e6, NULL, "pseudo-count added to every word"},
    {NULL, 0, NULL, 0, 0, NULL, NULL},
};

static void pu_refresh(pu_model *u)
{
    const double s = u->seen > 0 ? (double)u->N / u->seen : 0;
    double z = 0;
    for (int64_t v = 0; v < u->V; v++) z += u->counts[v] * s + u->alpha;
    for (int64_t v = 0; v < u->V; v++) u->phi[v] = (float)((u->counts[v] * s + u->alpha) / z);
}

static double row_len(const datm_csr *X, int64_t d)
{
    double t = 0;
    for (int64_t i = X->row_ptr[d]; i < X->row_ptr[d + 1]; i++) t += X->val[i];
    return t;
}

static void pu_destroy(datm_model *m)
{
    pu_model *u = (pu_model *)m;
    if (!u) return;
    free(u->counts);
    free(u->phi);
    free(u);
}

static int pu_train(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                    datm_train_stats *st, datm_error *err)
{
    (void)ctx;
    (void)err;
    pu_model *u = (pu_model *)m;
    double nll = 0;
    for (int64_t i = 0; i < b->X->nnz; i++) {
        nll -= b->X->val[i] * log(u->phi[b->X->col[i]]);
        u->counts[b->X->col[i]] += b->X->val[i];
    }
    u->seen += (double)b->X->n_rows;
    pu_refresh(u);
    memset(st, 0, sizeof *st);
    st->n_layers = 1;
    st->loss = b->X->n_rows ? nll / (double)b->X->n_rows : 0;
    st->loglik = -st->loss;
    return DATM_OK;
}

static float *lengths(const datm_csr *X, datm_error *err)
{
    float *t = malloc((size_t)(X->n_rows ? X->n_rows : 1) * sizeof *t);
    if (!t) {
        datm_error_set(err, DATM_E_NOMEM, "plugin-unigram: out of memory");
        return NULL;
    }
    for (int64_t d = 0; d < X->n_rows; d++) t[d] = (float)row_len(X, d);
    return t;
}

static int pu_eval_begin(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                         datm_error *err)
{
    (void)m;
    (void)seed;
    *state = lengths(obs, err);
    return *state ? DATM_OK : DATM_E_NOMEM;
}

static int pu_eval_step(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                        datm_error *err)
{
    (void)draw;
    (void)err;
    datm_rate_accum_add(acc, ((pu_model *)m)->phi, state, 1);
    return DATM_OK;
}

static void pu_eval_end(datm_model *m, void *state)
{
    (void)m;
    free(state);
}

static int pu_infer(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                    datm_theta *out, datm_error *err)
{
    (void)m;
    (void)seed;
    (void)nsamples;
    memset(out, 0, sizeof *out);
    out->n_layers = 1;
    out->n_docs = docs->n_rows;
    out->k[0] = 1;
    out->theta[0] = lengths(docs, err);
    return out->theta[0] ? DATM_OK : DATM_E_NOMEM;
}

static int pu_get_phi(const datm_model *m, int layer, const float **phi, int64_t *rows,
                      int64_t *cols)
{
    if (layer != 1) return DATM_E_INVALID;
    *phi = ((const pu_model *)m)->phi;
    *rows = ((const pu_model *)m)->V;
    *cols = 1;
    return DATM_OK;
}

static int pu_n_layers(const datm_model *m)
{
    (void)m;
    return 1;
}

static int pu_save(const datm_model *m, struct datm_h5 *g, datm_error *err)
{
    const pu_model *u = (const pu_model *)m;
    const int64_t dv[1] = {u->V}, dphi[2] = {u->V, 1};
    int rc = datm_h5_write_f64(g, "counts", u->counts, 1, dv, err);
    if (!rc) rc = datm_h5_write_scalar(g, "seen", u->seen, err);
    if (!rc) rc = datm_h5_write_f32(g, "phi_1", u->phi, 2, dphi, err);
    return rc;
}

static int pu_load(datm_model *m, struct datm_h5 *g, datm_error *err)
{
    pu_model *u = (pu_model *)m;
    const int64_t dv[1] = {u->V};
    int64_t dims[8];
    if (datm_h5_shape(g, "counts", dims) != 1 || dims[0] != u->V)
        return datm_error_set(err, DATM_E_FORMAT, "plugin-unigram: counts: not (%lld)",
                              (long long)u->V);
    int rc = datm_h5_read_f64(g, "counts", u->counts, 1, dv, err);
    if (!rc) rc = datm_h5_read_scalar(g, "seen", &u->seen, err);
    if (!rc) pu_refresh(u);
    return rc;
}

static int pu_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err);

static const datm_model_ops pu_ops = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "plugin-unigram",
    .summary = "smoothed unigram model written as a plugin from scratch (a test)",
    .schema = pu_schema,
    .create = pu_create,
    .train_batch = pu_train,
    .eval_begin = pu_eval_begin,
    .eval_step = pu_eval_step,
    .eval_end = pu_eval_end,
    .infer = pu_infer,
    .predict = NULL,
    .get_phi = pu_get_phi,
    .n_layers = pu_n_layers,
    .save = pu_save,
    .load = pu_load,
    .destroy = pu_destroy,
};

static int pu_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                     datm_error *err)
{
    pu_model *u = calloc(1, sizeof *u);
    if (!u) return datm_error_set(err, DATM_E_NOMEM, "plugin-unigram: out of memory");
    u->counts = calloc((size_t)info->n_vocab, sizeof *u->counts);
    u->phi = calloc((size_t)info->n_vocab, sizeof *u->phi);
    if (!u->counts || !u->phi) {
        pu_destroy(&u->base);
        return datm_error_set(err, DATM_E_NOMEM, "plugin-unigram: out of memory");
    }
    u->base.ops = &pu_ops;
    u->V = info->n_vocab;
    u->N = info->n_train;
    u->alpha = datm_config_real(cfg, "alpha");
    pu_refresh(u);
    *out = &u->base;
    return DATM_OK;
}

DATM_PLUGIN("plugin-unigram", &pu_ops)
