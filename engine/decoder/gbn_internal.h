/* engine/decoder/gbn_internal.h: what augment.c shares with gibbs.c and tlasgr.c —
 * the fixed-point scale of the count accumulators and the per-document upward pass. */
#ifndef DATM_GBN_INTERNAL_H
#define DATM_GBN_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "decoder/decoder.h"
#include "rand/rand.h"

/* Count sums are kept in int64 fixed point with 24 fractional bits: exact for sampled
 * counts, 6e-8 resolution for expected counts, and order-independent under threads. */
#define DATM_GBN_FX_SCALE 16777216.0

static inline int64_t datm_gbn_fx(double v) { return (int64_t)llround(v * DATM_GBN_FX_SCALE); }

/* Deferred layer-1 count additions per flush (see datm_gbn_upward_doc). */
#define DATM_GBN_DEFER 256

/* Scratch doubles the upward pass needs per thread: eight rows of running sums of any layer
 * (rows are taken four or eight at a time), then DATM_GBN_DEFER int64 slots. */
static inline int64_t datm_gbn_work_len(const datm_gbn *g)
{
    int64_t mx = 1;
    for (int l = 1; l <= g->L; l++) mx = g->K[l] > mx ? g->K[l] : mx;
    return 8 * mx + 8 + DATM_GBN_DEFER;
}

/* The entries of one thread's accumulator its layer-1 counts made nonzero
 * (datm_gbn_stats_track): idx[0..n) absolute positions in fx, off the position of A(1). */
typedef struct datm_gbn_list {
    int64_t *idx;
    int64_t  n;
    int64_t  off;
} datm_gbn_list;

/* Upward augmentation of one document (docs/reference.md 1.8) from theta_n[l] (K[l]) rows:
 * writes m_n[l] (K[l]) for l = 1..L, adds A(l) (sampled or expected) and top-layer tables
 * (when g->r) into the fixed-point accumulator fx (may be NULL) laid out by fx_off.
 * The document's counts are cols/vals[0..nnz). Draws only from rng. Returns the document's
 * Poisson log-likelihood under Phi(1) theta_n[1] (its rates are computed anyway) when
 * want_ll, else 0 (a log and a log-gamma per word saved; the draws are the same).
 * trk (may be NULL) lists the entries the sampled layer-1 counts make nonzero. */
double datm_gbn_upward_doc(const datm_gbn *g, const int32_t *cols, const float *vals, int64_t nnz,
                         const double *const *theta_n, int32_t *const *m_n, int64_t *fx,
                         const int64_t *fx_off, int expected, int want_ll, datm_rng *rng,
                         double *work, datm_gbn_list *trk);

/* Stream of document row i of a pass. */
static inline void datm_gbn_doc_rng(datm_rng *r, const datm_gbn_key *key, int64_t i)
{
    uint64_t id = key->doc_ids ? (uint64_t)key->doc_ids[i] : (uint64_t)i;
    datm_rng_init2(r, key->seed, key->purpose, key->step, id);
}

#endif
