/* tests/grad_testutil.h: the random inputs of the encoder gradient tests (counts, Phi), so each
 * test draws them the same way from its own generator. Header-only; every function is static.
 * Dimension letters: B documents, V words, R rows and K columns of one Phi. */
#ifndef DATM_GRAD_TESTUTIL_H
#define DATM_GRAD_TESTUTIL_H

#include <stdint.h>

#include "data/csr.h"
#include "rand/rand.h"

/* A (B, V) batch of counts into X (allocated here): each entry is present with probability
 * 1/2 and then 1 + U{0, ..., spread - 1}. */
__attribute__((unused))
static void gt_random_counts(datm_rng *r, int64_t B, int64_t V, uint64_t spread, datm_csr *X)
{
    datm_csr_alloc(X, B, V, B * V, NULL);
    int64_t p = 0;
    X->row_ptr[0] = 0;
    for (int64_t i = 0; i < B; i++) {
        for (int64_t v = 0; v < V; v++)
            if (datm_rng_uniform(r) < 0.5) {
                X->col[p] = (int32_t)v;
                X->val[p++] = (float)(1 + datm_rng_below(r, spread));
            }
        X->row_ptr[i + 1] = p;
    }
    X->nnz = p;
}

/* phi: (R, K), each column 0.05 + U(0, 1) per entry, then scaled to sum 1 (no entry near 0). */
__attribute__((unused))
static void gt_random_phi(datm_rng *r, int64_t R, int64_t K, double *phi)
{
    for (int64_t j = 0; j < K; j++) {
        double s = 0;
        for (int64_t v = 0; v < R; v++) s += phi[v * K + j] = 0.05 + datm_rng_uniform(r);
        for (int64_t v = 0; v < R; v++) phi[v * K + j] /= s;
    }
}

#endif
