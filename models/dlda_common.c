/* models/dlda_common.c: the parts of dlda-gibbs and dlda-tlasgr that are the same —
 * configuration, the test-document chain (perplexity and features with the globals fixed,
 * docs/reference.md 1.9/4.2), save/load of the decoder. See dlda_common.h. */
#include "dlda_common.h"
#include "par/par.h"

#include <math.h>
#include <string.h>

#include "rand/rand.h"

DATM_PARAMS_GETTER(dlda_common_params, DLDA_COMMON_PARAMS)

/* The rules on the common keys alone (the check op of both variants). */
static int dlda_check_params(const dlda_common_params *p, datm_error *err)
{
    const int L = p->layers.n;
    if (L < 1 || L > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_INVALID, "model.layers: %d layers (1..%d allowed)", L,
                              DATM_MAX_LAYERS);
    const int ne = p->eta.n;
    if (ne != 0 && ne != 1 && ne != L)
        return datm_error_set(err, DATM_E_INVALID,
                              "model.eta: %d values for %d layers (give [], one value, or %d)", ne,
                              L, L);
    return DATM_OK;
}

int dlda_check(const datm_config *cfg, datm_error *err)
{
    dlda_common_params p;
    dlda_common_params_get(cfg, &p);
    return dlda_check_params(&p, err);
}

int dlda_cfg_read(const dlda_common_params *p, int64_t cp_after, const datm_run_info *info,
                  dlda_cfg *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = dlda_check_params(p, err);
    if (rc) return rc;
    const int L = p->layers.n;
    if (info->n_vocab < 1)
        return datm_error_set(err, DATM_E_INVALID, "model: empty vocabulary");
    out->L = L;
    out->K[0] = info->n_vocab;
    for (int l = 1; l <= L; l++) out->K[l] = p->layers.v[l - 1];
    datm_gbn_opts *o = &out->o;
    datm_gbn_opts_default(o);
    const int ne = p->eta.n;
    for (int l = 1; l <= L; l++) o->eta[l] = ne == 0 ? 0.0 : p->eta.v[ne == 1 ? 0 : l - 1];
    o->init_lo = p->phi_init_lo;
    o->use_r = 1;
    o->gamma0 = p->gamma0;
    o->c0 = p->c0;
    o->r_floor = p->r_floor;
    o->phi_floor = p->phi_floor;
    o->a0pj = p->a0pj;
    o->b0pj = p->b0pj;
    o->e0cj = p->e0cj;
    o->f0cj = p->f0cj;
    out->mode = strcmp(p->count_mode, "expected") == 0 ? DATM_AUG_EXPECTED : DATM_AUG_SAMPLED;
    out->test_burnin = p->test_burnin;
    out->eval_thin = p->eval_thin;
    out->eval_chain = strcmp(p->eval_globals, "chain") == 0;
    out->cp_after = cp_after;
    return DATM_OK;
}

/* ---------------------------------------------------------------- test chain */

int dlda_test_begin(const datm_gbn *g, const datm_csr *X, uint64_t seed, int64_t cp_after,
                    dlda_test *t, datm_error *err)
{
    memset(t, 0, sizeof *t);
    if (X->n_cols != g->K[0])
        return datm_error_set(err, DATM_E_INVALID, "dlda: documents have %lld words, model %lld",
                              (long long)X->n_cols, (long long)g->K[0]);
    t->X = X;
    t->seed = seed;
    t->cp_after = cp_after;
    t->mode = DATM_AUG_SAMPLED;
    int rc = datm_gbn_chain_create(g, X->n_rows, &t->ch, err);
    if (rc) return rc;
    t->theta_f = datm_alloc_array((size_t)((X->n_rows ? X->n_rows : 1) * g->K[1]), sizeof(float),
                                  err);
    if (!t->theta_f) { dlda_test_end(t); return err->code; }
    /* a data-parallel rank's share of the evaluation documents: each keyed by its row in the
     * whole set (par/par.h), as on one rank */
    const int64_t first = datm_par_eval_first();
    if (first > 0) {
        t->ids = datm_alloc_array((size_t)DATM_MAX(X->n_rows, 1), sizeof(int64_t), err);
        if (!t->ids) { dlda_test_end(t); return err->code; }
        for (int64_t i = 0; i < X->n_rows; i++) t->ids[i] = first + i;
    }
    return DATM_OK;
}

int dlda_test_sweeps(const datm_gbn *g, dlda_test *t, int64_t n, datm_error *err)
{
    datm_gbn_sweep_opts so = {.cp_after = t->cp_after, .mode = t->mode};
    for (int64_t i = 0; i < n; i++) {
        datm_gbn_key key = {.seed = t->seed, .purpose = DATM_STREAM_EVAL,
                            .step = (uint64_t)t->ch->sweeps, .doc_ids = t->ids};
        int rc = datm_gbn_chain_sweep(g, t->X, t->ch, &key, &so, NULL, err);
        if (rc) return rc;
        if (datm_stop_requested())
            return datm_error_set(err, DATM_E_INTERRUPTED, "dlda: stop requested");
    }
    return DATM_OK;
}

void dlda_test_add(const datm_gbn *g, dlda_test *t, datm_rate_accum *acc)
{
    const int64_t n = t->X->n_rows * g->K[1];
    for (int64_t i = 0; i < n; i++) t->theta_f[i] = (float)t->ch->theta[1][i];
    datm_rate_accum_add(acc, g->phi_f[1], t->theta_f, g->K[1]);
}

void dlda_test_end(dlda_test *t)
{
    datm_gbn_chain_destroy(&t->ch);
    datm_free(t->theta_f);
    datm_free(t->ids);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- evaluation */

int dlda_eval_open(const dlda_base *b, const datm_csr *obs, uint64_t seed, int64_t cp_after,
                   dlda_eval *e, datm_error *err)
{
    memset(e, 0, sizeof *e);
    e->seed = seed;
    int rc = dlda_test_begin(b->g, obs, seed, cp_after, &e->t, err);
    if (!rc && b->c.eval_chain) {
        rc = datm_gbn_create(b->g->L, b->g->K, &b->g->o, 0, &e->g, err);
        if (!rc) datm_gbn_copy(e->g, b->g);
    }
    if (rc) dlda_eval_close(e);
    return rc;
}

int dlda_eval_burnin(const dlda_base *b, dlda_eval *e, datm_error *err)
{
    return dlda_test_sweeps(b->g, &e->t, b->c.test_burnin, err);
}

int dlda_eval_draw(const dlda_base *b, dlda_eval *e, datm_rate_accum *acc, datm_error *err)
{
    const datm_gbn *g = e->g ? e->g : b->g;
    int rc = dlda_test_sweeps(g, &e->t, b->c.eval_thin, err);
    if (rc) return rc;
    dlda_test_add(g, &e->t, acc);
    e->draws++;
    return DATM_OK;
}

void dlda_eval_close(dlda_eval *e)
{
    dlda_test_end(&e->t);
    datm_gbn_destroy(&e->g);
}

/* ---------------------------------------------------------------- shared contract entries */

int dlda_op_infer(const datm_model *mm, const datm_csr *docs, uint64_t seed, int nsamples,
                  datm_theta *out, datm_error *err)
{
    const dlda_base *b = (const dlda_base *)mm;
    return dlda_infer(b->g, &b->c, docs, seed, nsamples, out, err);
}

int dlda_op_get_phi(const datm_model *mm, int layer, const float **phi, int64_t *rows,
                    int64_t *cols)
{
    const dlda_base *b = (const dlda_base *)mm;
    if (layer < 1 || layer > b->g->L) return DATM_E_INVALID;
    *phi = b->g->phi_f[layer];
    *rows = b->g->K[layer - 1];
    *cols = b->g->K[layer];
    return DATM_OK;
}

int dlda_op_n_layers(const datm_model *mm) { return ((const dlda_base *)mm)->g->L; }

/* ---------------------------------------------------------------- features */

int dlda_infer(const datm_gbn *g, const dlda_cfg *c, const datm_csr *docs, uint64_t seed,
               int nsamples, datm_theta *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    const int S = nsamples > 0 ? nsamples : 100;
    dlda_test t;
    int64_t cp = c->cp_after >= 0 ? c->cp_after : 10;
    int rc = dlda_test_begin(g, docs, seed, cp, &t, err);
    if (rc) return rc;
    const int64_t N = docs->n_rows;
    out->n_layers = g->L;
    out->n_docs = N;
    double *acc[DATM_MAX_LAYERS + 1] = {0};
    for (int l = 1; l <= g->L && !rc; l++) {
        out->k[l - 1] = g->K[l];
        acc[l] = datm_alloc_array((size_t)((N ? N : 1) * g->K[l]), sizeof(double), err);
        out->theta[l - 1] = acc[l] ? datm_alloc_array((size_t)((N ? N : 1) * g->K[l]),
                                                      sizeof(float), err)
                                   : NULL;
        if (!out->theta[l - 1]) rc = err->code;
    }
    if (!rc) rc = dlda_test_sweeps(g, &t, c->test_burnin, err);
    for (int s = 0; s < S && !rc; s++) {
        rc = dlda_test_sweeps(g, &t, 1, err);
        for (int l = 1; l <= g->L && !rc; l++)
            for (int64_t i = 0; i < N * g->K[l]; i++) acc[l][i] += t.ch->theta[l][i];
    }
    for (int l = 1; l <= g->L && !rc; l++)
        for (int64_t i = 0; i < N * g->K[l]; i++) out->theta[l - 1][i] = (float)(acc[l][i] / S);
    for (int l = 1; l <= g->L; l++) datm_free(acc[l]);
    dlda_test_end(&t);
    if (rc) datm_theta_free(out);
    return rc;
}

/* ---------------------------------------------------------------- save / load */

int dlda_save_gbn(datm_gbn *g, datm_h5 *grp, datm_error *err)
{
    datm_gbn_view v[3 * DATM_MAX_LAYERS + 2];
    int n = datm_gbn_views(g, v, (int)DATM_COUNTOF(v));
    for (int i = 0; i < n; i++) {
        int rc = datm_h5_write_f64(grp, v[i].name, v[i].data, v[i].rank, v[i].dims, err);
        if (rc) return rc;
    }
    return DATM_OK;
}

int dlda_load_gbn(datm_gbn *g, datm_h5 *grp, datm_error *err)
{
    datm_gbn_view v[3 * DATM_MAX_LAYERS + 2];
    int n = datm_gbn_views(g, v, (int)DATM_COUNTOF(v));
    for (int i = 0; i < n; i++) {
        int rc = datm_h5_read_f64(grp, v[i].name, v[i].data, v[i].rank, v[i].dims, err);
        if (rc) return rc;
    }
    datm_gbn_view_commit(g);
    return datm_gbn_check(g, 1e-6, err);
}

double dlda_loglik_per_doc(const datm_gbn *g, const datm_csr *X, const double *theta1)
{
    return X->n_rows > 0 ? datm_gbn_loglik(g, X, theta1) / (double)X->n_rows : 0.0;
}
