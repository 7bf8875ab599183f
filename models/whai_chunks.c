/* models/whai_chunks.c: WHAI's iteration (paper Algorithm 1, steps 1-3a) over a mini-batch
 * cut into C fixed chunks (train.reduce_chunks; engine/par/par.h), so that it can be spread
 * over MPI ranks and give the same numbers for any number of them.
 *
 * Step 1: every chunk's encoder gradient (its share of the mini-batch mean: backward scaled
 * by 1 / B, not 1 / B_chunk) goes into its row of a (C, P) array and its loss terms into its
 * slot; the engine adds the C rows in chunk order 0..C-1 over the ranks
 * (datm_par_sum_chunks_part: each rank ends with the sum of its range of the P entries) and
 * gathers the loss slots; each rank takes Adam's step on its range of the parameters
 * (datm_adam_step_range: entry by entry what one process's step gives) and the ranks exchange
 * the updated parameters (datm_par_gather_part_f32). Adam's moments stay sliced: each rank's
 * own range is current, and the run gathers them whole (datm_par_sharded_gather) before rank 0
 * writes them. Step 2-3a: theta of this rank's chunks from the updated encoder, the
 * upward augmentation of their documents into fixed-point counts, summed over the ranks
 * exactly (datm_par_sum_i64_listed: the stats list their nonzero entries, so the counts are
 * cleared, folded and sent without a pass over all of them). The caller (whai.c) takes the
 * TLASGR step.
 *
 * Only this rank's chunks' rows of the mini-batch are read (datm_par_set_own_rows): the run
 * hands over a mini-batch of B rows whose other rows are empty.
 *
 * Chunks are the unit of work on one rank too: its chunks run on its OpenMP threads, one
 * chunk per thread at a time, each with single-threaded BLAS and a workspace of its own. A
 * chunk's numbers depend only on its rows, so results do not depend on the thread or rank
 * count; they differ from the one-process reduction (reduce_chunks 0) at float rounding.
 *
 * Letters: B documents of the mini-batch, C chunks, P encoder parameters, L layers. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "par/par.h"
#include "rand/rand.h"
#include "whai.h"

/* Loss terms per chunk, after the gradient in its slot: sums over the chunk's documents. */
enum { CH_LOSS = 0, CH_LOGLIK, CH_KL };   /* CH_KL + l - 1: KL(l) */

struct whai_chunks {
    int64_t           C;
    int64_t           P;             /* encoder parameters */
    float            *grads;         /* (C, P) each chunk's gradient */
    double           *sums;          /* (C, CH_KL + L) each chunk's loss terms */
    int               T;             /* workspaces: one per thread */
    datm_encoder_ws **ws;            /* (T) each for one chunk */
    float            *adam_m, *adam_v;   /* the main chain's moments, registered as sliced */
};

static int n_sums(const whai_model *m) { return CH_KL + m->L; }
static float *slot_grad(whai_chunks *k, int64_t c) { return k->grads + c * k->P; }

void whai_chunks_destroy(whai_chunks **pk)
{
    whai_chunks *k = *pk;
    if (!k) return;
    datm_par_sharded_remove(k->adam_m);
    datm_par_sharded_remove(k->adam_v);
    for (int t = 0; k->ws && t < k->T; t++) datm_encoder_ws_destroy(&k->ws[t]);
    datm_free(k->ws);
    datm_free(k->grads);
    datm_free(k->sums);
    datm_free(k);
    *pk = NULL;
}

int whai_chunks_create(whai_model *m, int64_t C, const whai_variant *v, datm_error *err)
{
    const char *bad = v->hooks.extra ? "a supervised loss (sdatm)"
                    : v->hooks.pre_tlasgr ? "a pre-TLASGR hook (layerwise)"
                    : m->learn_r ? "model.learn_r"
                    : m->aug_samples > 1 ? "model.aug_samples > 1"
                    : m->aug_collect > 0 ? "model.aug_gibbs_collect > 0"
                    : m->input_keep < 1 ? "model.enc_input_keep < 1" : NULL;
    if (bad)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "train.reduce_chunks %lld: %s is not "
                              "supported with chunked mini-batches (set reduce_chunks 0, one "
                              "process)", (long long)C, bad);
    if (C > m->B)
        return datm_error_set(err, DATM_E_INVALID, "train.reduce_chunks %lld > batch_size %lld: "
                              "a chunk must hold a document", (long long)C, (long long)m->B);
    whai_chunks *k = datm_alloc(sizeof *k, err);
    if (!k) return DATM_E_NOMEM;
    k->C = C;
    k->P = m->enc->params.size;
    k->grads = datm_alloc_array((size_t)(C * k->P), sizeof(float), err);
    k->sums = k->grads ? datm_alloc_array((size_t)(C * n_sums(m)), sizeof(double), err) : NULL;
    k->T = omp_get_max_threads();
    k->ws = k->sums ? datm_alloc_array((size_t)k->T, sizeof *k->ws, err) : NULL;
    int rc = k->ws ? DATM_OK : DATM_E_NOMEM;
    const int64_t cap = (m->B + C - 1) / C;
    for (int t = 0; t < k->T && !rc; t++)
        rc = datm_encoder_ws_create(m->enc, cap, cap * 64, &k->ws[t], err);
    if (rc) { whai_chunks_destroy(&k); return rc; }
    /* the main chain's Adam moments are updated by ranges (whai_chunks_iterate) */
    if (datm_par_sharded_add(m->ch.adam.m, k->P) || datm_par_sharded_add(m->ch.adam.v, k->P)) {
        whai_chunks_destroy(&k);
        return datm_error_set(err, DATM_E_UNSUPPORTED, "whai: too many sliced arrays");
    }
    k->adam_m = m->ch.adam.m;
    k->adam_v = m->ch.adam.v;
    datm_par_set_own_rows(1);
    m->chunks = k;
    return DATM_OK;
}

/* Runs f on every chunk of this rank, chunks spread over the threads; the first failure
 * (lowest chunk) is returned. */
typedef int (*chunk_fn)(whai_model *m, whai_chain *c, datm_encoder_ws *ws, const datm_csr *X,
                        int64_t ch, const void *arg, datm_error *err);

static int for_own_chunks(whai_model *m, whai_chain *c, const datm_csr *X, chunk_fn f,
                          const void *arg, datm_error *err)
{
    whai_chunks *k = m->chunks;
    int64_t c0, c1;
    datm_par_own(k->C, &c0, &c1);
    int rc = DATM_OK;
    int64_t bad_chunk = INT64_MAX;
    const int blas = openblas_get_num_threads();
    openblas_set_num_threads(1);   /* parallel over chunks, not inside the products */
#pragma omp parallel num_threads(k->T)
    {
        datm_encoder_ws *ws = k->ws[omp_get_thread_num()];
        datm_error e = {0};
#pragma omp for schedule(dynamic, 1)
        for (int64_t ch = c0; ch < c1; ch++) {
            int r = f(m, c, ws, X, ch, arg, &e);
            if (r) {
#pragma omp critical(whai_chunks_err)
                if (ch < bad_chunk) {
                    bad_chunk = ch;
                    rc = r;
                    if (err) *err = e;
                }
            }
        }
    }
    openblas_set_num_threads(blas);
    return rc;
}

typedef struct grad_arg {
    const int64_t *doc_ids;
    uint64_t       seed;
    uint32_t       purpose;
    uint64_t       index;   /* noise stream index of this encoder step */
    const double  *klw;
} grad_arg;

/* Step 1 on one chunk: its gradient and loss sums into its slot. */
static int chunk_grad(whai_model *m, whai_chain *c, datm_encoder_ws *ws, const datm_csr *X,
                      int64_t ch, const void *argp, datm_error *err)
{
    const grad_arg *a = argp;
    whai_chunks *k = m->chunks;
    int64_t r0, r1;
    datm_par_chunk_rows(X->n_rows, k->C, ch, &r0, &r1);
    float *g = slot_grad(k, ch);
    double *sums = k->sums + ch * n_sums(m);
    if (r1 <= r0) {   /* a short last mini-batch: fewer documents than chunks */
        memset(g, 0, (size_t)k->P * sizeof(float));
        memset(sums, 0, (size_t)(CH_KL + m->L) * sizeof(double));
        return DATM_OK;
    }
    const datm_csr Xc = datm_csr_rows_view(X, r0, r1);
    datm_encoder_noise nz = {NULL, a->seed, a->purpose, a->index, a->doc_ids + r0, 0};
    datm_encoder_loss el;
    ws->B_norm = X->n_rows;
    int rc = datm_encoder_forward(m->enc, c->params, DATM_ENC_TRAIN, &Xc,
                                  (const float *const *)c->gbn->phi_f, NULL, a->klw, &nz, ws,
                                  &el, err);
    if (!rc) rc = datm_encoder_backward(m->enc, c->params, ws, NULL, g, NULL, err);
    ws->B_norm = 0;
    if (rc) return rc;
    const double n = (double)(r1 - r0);
    sums[CH_LOSS] = el.loss * n;
    sums[CH_LOGLIK] = el.loglik * n;
    for (int l = 1; l <= m->L; l++) sums[CH_KL + l - 1] = el.kl[l] * n;
    return DATM_OK;
}

typedef struct theta_arg {
    const int64_t *doc_ids;
    uint64_t       seed;
    uint32_t       purpose;
    uint64_t       index;
} theta_arg;

/* Step 2 on one chunk: theta from the updated encoder into m->theta_d (mini-batch rows). */
static int chunk_theta(whai_model *m, whai_chain *c, datm_encoder_ws *ws, const datm_csr *X,
                       int64_t ch, const void *argp, datm_error *err)
{
    const theta_arg *a = argp;
    int64_t r0, r1;
    datm_par_chunk_rows(X->n_rows, m->chunks->C, ch, &r0, &r1);
    if (r1 <= r0) return DATM_OK;
    const datm_csr Xc = datm_csr_rows_view(X, r0, r1);
    datm_encoder_noise nz = {NULL, a->seed, a->purpose, a->index, a->doc_ids + r0, 0};
    int rc = datm_encoder_forward(m->enc, c->params,
                                  m->aug_mean ? DATM_ENC_MEAN : DATM_ENC_SAMPLE, &Xc,
                                  (const float *const *)c->gbn->phi_f, NULL, NULL, &nz, ws,
                                  NULL, err);
    if (rc) return rc;
    for (int l = 1; l <= m->L; l++) {
        const float *src = ws->theta[l];
        double *dst = m->theta_d[l] + r0 * m->K[l];
        for (int64_t i = 0, n = (r1 - r0) * m->K[l]; i < n; i++) dst[i] = src[i];
    }
    return DATM_OK;
}

/* grad[this rank's range] = the chunks' gradients added in chunk order (over the ranks);
 * el = the loss terms per document. */
static int sum_chunks(whai_model *m, float *grad, int64_t B, datm_encoder_loss *el,
                      datm_error *err)
{
    whai_chunks *k = m->chunks;
    const int ns = n_sums(m);
    int rc = datm_par_sum_chunks_part(k->grads, k->P, k->C, grad, err);
    if (!rc) rc = datm_par_gather_slots(k->sums, (size_t)ns * sizeof(double), k->C, err);
    if (rc) return rc;
    double tot[CH_KL + DATM_MAX_LAYERS] = {0};
    for (int64_t ch = 0; ch < k->C; ch++)
        for (int j = 0; j < ns; j++) tot[j] += k->sums[ch * ns + j];
    memset(el, 0, sizeof *el);
    el->loss = tot[CH_LOSS] / (double)B;
    el->loglik = tot[CH_LOGLIK] / (double)B;
    for (int l = 1; l <= m->L; l++) el->kl[l] = tot[CH_KL + l - 1] / (double)B;
    return DATM_OK;
}

int whai_chunks_iterate(whai_model *m, whai_chain *c, const datm_csr *X,
                        const int64_t *doc_ids, uint64_t seed, uint32_t purpose,
                        uint64_t step, const double *klw, datm_encoder_loss *el,
                        datm_error *err)
{
    whai_chunks *k = m->chunks;
    const int64_t B = X->n_rows;
    if (!doc_ids)
        return datm_error_set(err, DATM_E_INVALID, "whai: chunked mini-batches need document ids");
    int rc = DATM_OK;
    /* 1. encoder step(s): noise indices as in whai_encoder_steps */
    for (int64_t s = 0; s < m->encoder_steps && !rc; s++) {
        grad_arg ga = {doc_ids, seed, purpose,
                       s == 0 ? step * 4 : ((uint64_t)1 << 40) + step * 16 + (uint64_t)s, klw};
        datm_encoder_loss l1, *lo = s == 0 ? el : &l1;
        rc = for_own_chunks(m, c, X, chunk_grad, &ga, err);
        if (!rc) rc = sum_chunks(m, c->grad, B, lo, err);
        if (rc) return rc;
        if (!isfinite(lo->loss))
            return datm_error_set(err, DATM_E_NUMERIC, "encoder: non-finite loss (loglik %.9g, "
                                  "kl(1) %.9g)", lo->loglik, lo->kl[1]);
        /* Adam on this rank's range; the count of non-finite entries over all ranks */
        int64_t i0, i1;
        datm_par_part(k->P, &i0, &i1);
        int64_t bad = datm_adam_step_range(&c->adam, c->params, c->grad, i0, i1);
        rc = datm_par_sum_i64(&bad, 1, err);
        if (!rc && bad)
            return datm_error_set(err, DATM_E_NUMERIC, "whai: %lld non-finite encoder gradients",
                                  (long long)bad);
        if (!rc) rc = datm_par_gather_part_f32(c->params, k->P, err);
        if (rc) return rc;
    }
    /* 2. theta of this rank's chunks from the updated encoder */
    theta_arg ta = {doc_ids, seed, purpose, step * 4 + 1};
    rc = for_own_chunks(m, c, X, chunk_theta, &ta, err);
    if (rc || m->phi_fixed) return rc;
    /* 3a. upward augmentation of this rank's documents; counts summed over the ranks */
    int64_t c0, c1, r0, r1, e0;
    datm_par_own(k->C, &c0, &c1);
    datm_par_chunk_rows(B, k->C, c0, &r0, &e0);
    datm_par_chunk_rows(B, k->C, c1 - 1, &e0, &r1);
    /* the counts listed as they are made, so that clearing, folding and exchanging them
     * costs what the mini-batch's counts take, not the V x K1 of A(1) (the same counts) */
    rc = datm_gbn_stats_track(c->stats, err);
    if (rc) return rc;
    datm_gbn_stats_reset(c->stats);
    if (c1 > c0 && r1 > r0) {
        const datm_csr Xr = datm_csr_rows_view(X, r0, r1);
        const double *thd[DATM_MAX_LAYERS + 1] = {NULL};
        for (int l = 1; l <= m->L; l++) thd[l] = m->theta_d[l] + r0 * m->K[l];
        datm_gbn_key key = {seed, purpose, step * 4 + 2, doc_ids + r0};
        rc = datm_gbn_augment(c->gbn, &Xr, thd, &key, m->count_mode, c->stats, NULL, err);
        if (rc) return rc;
    }
    int64_t *idx, *n_idx;
    int64_t *fx = datm_gbn_stats_fold_listed(c->stats, &idx, &n_idx);
    rc = datm_par_sum_i64_listed(fx, c->stats->fx_len, idx, n_idx, err);
    c->stats->n_passes = 1;   /* one augmentation pass over the whole mini-batch */
    return rc;
}
