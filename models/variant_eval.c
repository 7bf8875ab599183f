/* models/variant_eval.c: chain-mode evaluation for WHAI variants (see the header). Random
 * mini-batches of the copy: draw d uses the stream (seed, EVAL, 2^40, d) for a partial
 * Fisher-Yates shuffle; its iteration noise uses step 2^30 + d, as models/whai.c does. */
#include <string.h>

#include "rand/rand.h"
#include "variant_eval.h"

typedef struct variant_eval {
    const variant_chain_ops *ops;
    variant_eval_cfg         cfg;
    const datm_csr          *obs;
    uint64_t                 seed;
    void                    *copy;
    int64_t                 *perm;     /* (N) row order of the training documents */
    int64_t                  advanced; /* copy iterations so far */
    float                   *theta[DATM_MAX_LAYERS + 1];   /* (N_obs, K_l) */
} variant_eval;

void variant_eval_end(datm_model *m, void *state)
{
    variant_eval *e = state;
    if (!e) return;
    if (e->copy) e->ops->free_copy(m, e->copy);
    datm_free(e->perm);
    for (int l = 0; l <= DATM_MAX_LAYERS; l++) datm_free(e->theta[l]);
    datm_free(e);
}

int variant_eval_begin(datm_model *m, const variant_chain_ops *ops, const variant_eval_cfg *cfg,
                       const datm_csr *obs, uint64_t seed, void **state, datm_error *err)
{
    *state = NULL;
    const datm_encoder *enc = cfg->enc;
    if (obs->n_cols != enc->K[0])
        return datm_error_set(err, DATM_E_INVALID, "evaluation documents have %lld words, model "
                              "%lld", (long long)obs->n_cols, (long long)enc->K[0]);
    if (!cfg->train || cfg->train->n_rows < 1)
        return datm_error_set(err, DATM_E_INVALID, "chain evaluation needs the training set");
    variant_eval *e = datm_alloc(sizeof *e, err);
    if (!e) return DATM_E_NOMEM;
    e->ops = ops;
    e->cfg = *cfg;
    e->obs = obs;
    e->seed = seed;
    int rc = DATM_OK;
    for (int l = 1; l <= enc->L && !rc; l++) {
        e->theta[l] = datm_alloc_array((size_t)(DATM_MAX(obs->n_rows, 1) * enc->K[l]),
                                       sizeof(float), err);
        if (!e->theta[l]) rc = DATM_E_NOMEM;
    }
    const int64_t N = cfg->train->n_rows;
    if (!rc && !(e->perm = datm_alloc_array((size_t)N, sizeof(int64_t), err))) rc = DATM_E_NOMEM;
    for (int64_t i = 0; !rc && i < N; i++) e->perm[i] = i;
    if (!rc && !(e->copy = ops->copy(m, err))) rc = err->code ? err->code : DATM_E_NOMEM;
    if (rc) {
        variant_eval_end(m, e);
        return rc;
    }
    *state = e;
    return DATM_OK;
}

static int advance(datm_model *m, variant_eval *e, datm_error *err)
{
    const int64_t N = e->cfg.train->n_rows, B = DATM_MIN(e->cfg.B, N);
    datm_rng r;
    datm_rng_init2(&r, e->seed, DATM_STREAM_EVAL, (uint64_t)1 << 40, (uint64_t)e->advanced);
    for (int64_t i = 0; i < B; i++) {   /* perm[0..B): a uniformly random subset */
        int64_t j = i + (int64_t)datm_rng_below(&r, (uint64_t)(N - i));
        int64_t t = e->perm[i];
        e->perm[i] = e->perm[j];
        e->perm[j] = t;
    }
    datm_csr Xb;
    int rc = datm_csr_select_rows(e->cfg.train, e->perm, B, &Xb, err);
    if (rc) return rc;
    rc = e->ops->iterate(m, e->copy, &Xb, e->perm, e->seed, DATM_STREAM_EVAL,
                         ((uint64_t)1 << 30) + (uint64_t)e->advanced, err);
    datm_csr_free(&Xb);
    e->advanced++;
    return rc;
}

int variant_eval_step(datm_model *m, void *state, int64_t draw, datm_rate_accum *acc,
                      datm_error *err)
{
    variant_eval *e = state;
    int rc = DATM_OK;
    for (int64_t t = 0; t < e->cfg.thin && !rc; t++) rc = advance(m, e, err);
    if (rc) return rc;
    const float *params;
    const float *const *phi;
    e->ops->view(m, e->copy, &params, &phi);
    rc = datm_encoder_infer(e->cfg.enc, params, e->obs, phi, NULL, e->cfg.theta_sample ? 1 : 0,
                            e->seed, (uint64_t)draw, 0, 0, e->theta, err);
    if (rc) return rc;
    datm_rate_accum_add(acc, phi[1], e->theta[1], e->cfg.enc->K[1]);
    return DATM_OK;
}
