/* engine/encoder/encoder_f32.c: the single-precision instance of encoder_impl.h (training and
 * inference), plus batched inference of document features over OpenMP threads. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "encoder/encoder.h"
#include "math/math.h"
#include "nn/vmath.h"

#define R float
#define ENC(name) name
#define NN(name) name##_f32
#define FAM(member) member##_f32
#define WS datm_encoder_ws
#define GEMM datm_sgemm_small
#define VEC_ATTR DATM_VEC_CLONES
#define VLOG datm_vlogf
#define VLOG1P datm_vlog1pf
#define VEXP datm_vexpf
#define VLGAMMA datm_vlgammaf
#define VDIGAMMA datm_vdigammaf
#define KEEP datm_vkeepf
#include "encoder/encoder_impl.h"

/* The chunked inference loop. what = 0: upward + draws from X; 1: upward only, kt/lt of
 * every document stored into the cache; 2: draws only, from the cache (X unused). */
static int infer_chunks(const datm_encoder *e, const float *params, const datm_csr *X, int64_t N,
                        datm_encoder_cache *cache, int what, const float *const *phi,
                        const float *top_shape, int nsamples, uint64_t seed, uint64_t draw0,
                        int64_t first_id, int64_t chunk, float *const *theta, datm_error *err)
{
    const int L = e->L;
    if (nsamples < 0) return datm_error_set(err, DATM_E_INVALID, "encoder: nsamples %d", nsamples);
    if (what != 1 && L >= 2 && e->o.downward)
        for (int l = 2; l <= L; l++)
            if (!phi || !phi[l])
                return datm_error_set(err, DATM_E_INVALID, "encoder: Phi(%d) missing", l);
    if (N == 0) return DATM_OK;
    if (chunk <= 0) chunk = 512;
    const int64_t n_chunks = (N + chunk - 1) / chunk;
    int64_t nnz_max = 0;
    if (what != 2)
        for (int64_t c = 0; c < n_chunks; c++) {
            int64_t r0 = c * chunk, r1 = DATM_MIN(N, r0 + chunk);
            nnz_max = DATM_MAX(nnz_max, X->row_ptr[r1] - X->row_ptr[r0]);
        }
    int nt = omp_get_max_threads();
    if (nt > n_chunks) nt = (int)n_chunks;
    datm_encoder_ws **ws = datm_alloc_array((size_t)nt, sizeof *ws, err);
    if (!ws) return err ? err->code : DATM_E_NOMEM;
    int rc = DATM_OK;
    for (int t = 0; t < nt && !rc; t++) {
        rc = datm_encoder_ws_create(e, chunk, DATM_MAX(nnz_max, 1), &ws[t], err);
        if (!rc && what != 1) make_phiT(e, phi, ws[t]);
    }
    if (rc) {
        for (int t = 0; t < nt; t++) datm_encoder_ws_destroy(&ws[t]);
        datm_free(ws);
        return rc;
    }
    /* Documents in parallel over chunks of a fixed size; BLAS always single-threaded (its own
     * threads would oversubscribe and split products differently) */
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t c = 0; c < n_chunks; c++) {
        datm_encoder_ws *w = ws[omp_get_thread_num()];
        int64_t r0 = c * chunk, r1 = DATM_MIN(N, r0 + chunk), B = r1 - r0;
        if (what != 2) {
            datm_csr Xc = *X;
            Xc.n_rows = B;
            Xc.row_ptr = X->row_ptr + r0;
            Xc.nnz = X->row_ptr[r1] - X->row_ptr[r0];
            datm_error e2;
            if (prepare(e, &Xc, w, &e2)) continue;   /* cannot fail: capacity reserved above */
            upward(e, params, w);
            if (what == 1) {
                for (int l = 1; l <= L; l++) {
                    memcpy(cache->kt[l] + r0 * e->KS[l], w->kt[l], (size_t)(B * e->KS[l]) * sizeof(float));
                    memcpy(cache->lt[l] + r0 * e->K[l], w->lt[l], (size_t)(B * e->K[l]) * sizeof(float));
                }
                continue;
            }
        } else {
            w->B = B;
            for (int l = 1; l <= L; l++) {
                memcpy(w->kt[l], cache->kt[l] + r0 * e->KS[l], (size_t)(B * e->KS[l]) * sizeof(float));
                memcpy(w->lt[l], cache->lt[l] + r0 * e->K[l], (size_t)(B * e->K[l]) * sizeof(float));
            }
        }
        if (nsamples == 0) {
            topdown(e, DATM_ENC_MEAN, phi, top_shape, NULL, w);
            for (int l = 1; l <= L; l++)
                memcpy(theta[l] + r0 * e->K[l], w->theta[l], (size_t)(B * e->K[l]) * sizeof(float));
            continue;
        }
        for (int l = 1; l <= L; l++)
            memset(theta[l] + r0 * e->K[l], 0, (size_t)(B * e->K[l]) * sizeof(float));
        for (int s = 0; s < nsamples; s++) {
            datm_encoder_noise nz = {NULL, seed, DATM_STREAM_EVAL, draw0 + (uint64_t)s, NULL,
                                     first_id + r0};
            topdown(e, DATM_ENC_SAMPLE, phi, top_shape, &nz, w);
            for (int l = 1; l <= L; l++) {
                float *dst = theta[l] + r0 * e->K[l];
                const float *src = w->theta[l];
                for (int64_t i = 0, n = B * e->K[l]; i < n; i++) dst[i] += src[i];
            }
        }
        if (nsamples > 1) {
            const float inv = 1.0f / (float)nsamples;
            for (int l = 1; l <= L; l++) {
                float *dst = theta[l] + r0 * e->K[l];
                for (int64_t i = 0, n = B * e->K[l]; i < n; i++) dst[i] *= inv;
            }
        }
    }
    openblas_set_num_threads(blas_threads);
    for (int t = 0; t < nt; t++) datm_encoder_ws_destroy(&ws[t]);
    datm_free(ws);
    return DATM_OK;
}

int datm_encoder_infer(const datm_encoder *e, const float *params, const datm_csr *X,
                       const float *const *phi, const float *top_shape, int nsamples,
                       uint64_t seed, uint64_t draw0, int64_t first_id, int64_t chunk,
                       float *const *theta, datm_error *err)
{
    if (X->n_cols != e->K[0])
        return datm_error_set(err, DATM_E_INVALID, "encoder: documents have %lld words, encoder %lld",
                              (long long)X->n_cols, (long long)e->K[0]);
    return infer_chunks(e, params, X, X->n_rows, NULL, 0, phi, top_shape, nsamples, seed, draw0,
                        first_id, chunk, theta, err);
}

void datm_encoder_cache_destroy(datm_encoder_cache **pc)
{
    if (!pc || !*pc) return;
    for (int l = 0; l <= DATM_MAX_LAYERS; l++) {
        datm_free((*pc)->kt[l]);
        datm_free((*pc)->lt[l]);
    }
    datm_free(*pc);
    *pc = NULL;
}

int datm_encoder_cache_build(const datm_encoder *e, const float *params, const datm_csr *X,
                             int64_t chunk, datm_encoder_cache **out, datm_error *err)
{
    *out = NULL;
    if (X->n_cols != e->K[0])
        return datm_error_set(err, DATM_E_INVALID, "encoder: documents have %lld words, encoder %lld",
                              (long long)X->n_cols, (long long)e->K[0]);
    datm_encoder_cache *c = datm_alloc(sizeof *c, err);
    if (!c) return err ? err->code : DATM_E_NOMEM;
    c->n_docs = X->n_rows;
    int rc = DATM_OK;
    for (int l = 1; l <= e->L && !rc; l++) {
        c->kt[l] = datm_alloc_array((size_t)(DATM_MAX(c->n_docs, 1) * e->KS[l]), sizeof(float), err);
        c->lt[l] = datm_alloc_array((size_t)(DATM_MAX(c->n_docs, 1) * e->K[l]), sizeof(float), err);
        if (!c->kt[l] || !c->lt[l]) rc = DATM_E_NOMEM;
    }
    if (!rc) rc = infer_chunks(e, params, X, X->n_rows, c, 1, NULL, NULL, 0, 0, 0, 0, chunk, NULL, err);
    if (rc) { datm_encoder_cache_destroy(&c); return rc; }
    *out = c;
    return DATM_OK;
}

int datm_encoder_infer_cached(const datm_encoder *e, const datm_encoder_cache *c,
                              const float *const *phi, const float *top_shape, int nsamples,
                              uint64_t seed, uint64_t draw0, int64_t first_id, int64_t chunk,
                              float *const *theta, datm_error *err)
{
    return infer_chunks(e, NULL, NULL, c->n_docs, (datm_encoder_cache *)c, 2, phi, top_shape,
                        nsamples, seed, draw0, first_id, chunk, theta, err);
}
