/* tests/decoder_testutil.h: small helpers shared by the decoder tests (random count
 * matrices, random theta, MUST; CHECK comes from test_check.h). Header-only; every function is static. */
#ifndef DATM_DECODER_TESTUTIL_H
#define DATM_DECODER_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/csr.h"
#include "decoder/decoder.h"
#include "rand/rand.h"
#include "test_check.h"

#define MUST(expr)                                                           \
    do {                                                                     \
        datm_error e_;                                                       \
        datm_error_clear(&e_);                                               \
        if ((expr) != DATM_OK) {                                             \
            fprintf(stderr, "FATAL %s:%d: %s\n", __FILE__, __LINE__, e_.msg); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)
#define TU_ERR (&e_)

/* Dense (N, V) Poisson(mean) counts -> CSR. Rows keep >= 1 token when force_nonempty. */
static inline void tu_random_csr(datm_csr *X, int64_t N, int64_t V, double mean, uint64_t seed,
                          int force_nonempty)
{
    datm_error err;
    datm_rng r;
    datm_rng_init(&r, seed, DATM_STREAM_TEST, 1);
    float *d = calloc((size_t)(N * V), sizeof(float));
    int64_t nnz = 0;
    for (int64_t n = 0; n < N; n++) {
        int64_t tot = 0;
        for (int64_t v = 0; v < V; v++) {
            float x = (float)datm_rng_poisson(&r, mean);
            d[n * V + v] = x;
            tot += x > 0;
        }
        if (force_nonempty && tot == 0) d[n * V + datm_rng_below(&r, (uint64_t)V)] = 1.0f;
        for (int64_t v = 0; v < V; v++) nnz += d[n * V + v] > 0;
    }
    if (datm_csr_alloc(X, N, V, nnz, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    int64_t e = 0;
    X->row_ptr[0] = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t v = 0; v < V; v++)
            if (d[n * V + v] > 0) {
                X->col[e] = (int32_t)v;
                X->val[e] = d[n * V + v];
                e++;
            }
        X->row_ptr[n + 1] = e;
    }
    free(d);
}

/* theta[l] (N, K[l]) with Gamma(shape) entries, l = 1..L. */
static inline void tu_random_theta(const datm_gbn *g, int64_t N, double shape, uint64_t seed,
                            double **theta)
{
    datm_rng r;
    datm_rng_init(&r, seed, DATM_STREAM_TEST, 2);
    for (int l = 1; l <= g->L; l++) {
        theta[l] = malloc((size_t)(N * g->K[l]) * sizeof(double));
        for (int64_t i = 0; i < N * g->K[l]; i++) theta[l][i] = datm_rng_gamma(&r, shape);
    }
}

static inline datm_gbn *tu_gbn(int L, const int64_t *K, uint64_t seed, int use_r)
{
    datm_gbn_opts o;
    datm_gbn_opts_default(&o);
    o.use_r = use_r;
    datm_gbn *g = NULL;
    datm_error err;
    if (datm_gbn_create(L, K, &o, seed, &g, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    return g;
}

#endif
