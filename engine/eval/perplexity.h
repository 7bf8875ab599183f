/* engine/eval/perplexity.h: per-heldout-word perplexity, accumulated over posterior samples.
 *
 * docs/reference.md 4.5: rate = Phi(1) theta summed over S collected samples, normalised per
 * document, then perplexity = exp(-sum y log(rate_vn / sum_v rate_vn) / sum y). Because the
 * columns of Phi(1) sum to 1, sum_v (Phi theta)_vn = sum_k theta_kn, so the accumulator keeps
 * the rate only at the entries that are scored (the union of the observed and held-out
 * patterns) plus one normaliser per document: exact, and O(nnz K) per sample; under fixed
 * globals (one Phi(1) for every sample) O(N K) per sample and O(nnz K) per scoring. */
#ifndef DATM_PERPLEXITY_H
#define DATM_PERPLEXITY_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"

typedef struct datm_rate_accum {
    int64_t  n_docs, n_vocab;
    datm_csr pattern;       /* (N, V) union of the scored entries; val unused */
    double  *rate;          /* (pattern.nnz) summed rate at each scored entry */
    double  *norm;          /* (N) summed sum_k theta_kn */
    int64_t  n_samples;
    /* samples added under one fixed Phi(1) (datm_rate_accum_add_fixed): their theta summed,
     * the rate Phi(1) sum_s theta_s formed only when scored */
    const float *fixed_phi; /* (V, fixed_K) or NULL when none is pending */
    int64_t  fixed_K;
    double  *theta_sum;     /* (N, fixed_K) */
} datm_rate_accum;

/* heldout may be NULL (only obs scored). Both must have the same (N, V). */
int  datm_rate_accum_init(datm_rate_accum *a, const datm_csr *obs, const datm_csr *heldout,
                          datm_error *err);
void datm_rate_accum_free(datm_rate_accum *a);
void datm_rate_accum_reset(datm_rate_accum *a);
/* Adds one sample: phi1 (V, K) row-major, theta (N, K) row-major. OpenMP over documents. */
void datm_rate_accum_add(datm_rate_accum *a, const float *phi1, const float *theta, int64_t K);
/* Same with a document subset: theta rows correspond to docs first..first+n-1. A call with
 * first == 0 counts as the start of a new sample (n_samples + 1). */
void datm_rate_accum_add_rows(datm_rate_accum *a, const float *phi1, const float *theta,
                              int64_t K, int64_t first, int64_t n);
/* Adds one sample whose Phi(1) is the same matrix for every add_fixed call until the next
 * reset (evaluation with fixed globals): sums theta only, O(N K) instead of O(nnz K) per
 * sample; the rate Phi(1) sum_s theta_s is formed when scored. Equal to add() up to the
 * rounding of the sums. A call with another phi1 pointer first folds the pending sum into
 * the rate. May be mixed with add(). */
int  datm_rate_accum_add_fixed(datm_rate_accum *a, const float *phi1, const float *theta,
                               int64_t K, datm_error *err);
/* full's documents [first, first + part->n_docs) = part's (their rates, normalisers and
 * pending fixed-Phi sums; part's sample count and pending Phi(1)): part accumulated rows of
 * full's documents (a data-parallel rank's share of the evaluation documents). */
int  datm_rate_accum_place(datm_rate_accum *full, const datm_rate_accum *part, int64_t first,
                           datm_error *err);
/* Perplexity of y (same N, V; entries must be in the pattern) under the accumulated rate.
 * Log floored at 1e-300. Returns NAN when no samples or no tokens. */
double datm_rate_accum_perplexity(const datm_rate_accum *a, const datm_csr *y);

#endif
