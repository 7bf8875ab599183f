/* engine/data/synth.h: synthetic corpora drawn from a Poisson gamma belief network (PGBN,
 * Zhou et al. 2016; docs/reference.md) with known topics, written straight to shards
 * (data/shard.h) -- for scale benchmarks and recovery tests.
 *
 * Generative process, layers l = 1..L of widths K_l, vocabulary V:
 *   Phi(1)[:, k] ~ Dir(eta, ..., eta) over V words;  Phi(l)[:, k] ~ Dir(1, ..., 1) over K_{l-1}
 *   theta(L) ~ Gam(1, 1)^{K_L};  theta(l) ~ Gam(Phi(l+1) theta(l+1), 1)   (l = L-1..1)
 *   n_d from the length law (poisson: Pois(mean); fixed: mean; negbin: Pois(Gam(shape,
 *   mean / shape)), i.e. over-dispersed);  x_d ~ Mult(n_d, Phi(1) theta(1) / |theta(1)|)
 * which is the PGBN's x ~ Pois(Phi(1) theta(1)) conditioned on the document length.
 * Topics come from the streams (seed, INIT, 2^40 + l); document d from (seed, DOC, 2^64-1, d)
 * and its length from (seed, DOC, 2^64-2, d): the corpus is the same for any thread count.
 * Documents are drawn a shard at a time, in parallel (OpenMP), and written in order.
 * Letters: N documents, V words, K_l widths, L layers. */
#ifndef DATM_SYNTH_H
#define DATM_SYNTH_H

#include <stdint.h>

#include "core/core.h"

typedef enum { DATM_SYNTH_LEN_POISSON, DATM_SYNTH_LEN_FIXED, DATM_SYNTH_LEN_NEGBIN } datm_synth_len;

typedef struct datm_synth_opts {
    int64_t  n_docs;             /* N */
    int64_t  n_vocab;            /* V */
    int      n_layers;           /* L */
    int64_t  k[DATM_MAX_LAYERS]; /* K_1..K_L */
    double   eta;                /* Dirichlet of the word topics */
    datm_synth_len len_law;
    double   len_mean, len_shape;
    uint64_t seed;
    int64_t  docs_per_shard;
} datm_synth_opts;

void datm_synth_defaults(datm_synth_opts *o);
/* Draws the topics: phi[l] (K_{l-1}, K_l) row-major, columns sum to 1, l = 0..L-1 (phi[0] is
 * Phi(1), K_0 = V); allocated here, freed by the caller (datm_free). */
int  datm_synth_topics(const datm_synth_opts *o, float *phi[DATM_MAX_LAYERS], datm_error *err);
/* Draws the N documents and writes them to the shard set out_dir (shard.h: written aside and
 * renamed). tokens (may be NULL) gets the total count. */
int  datm_synth_write(const datm_synth_opts *o, float *const phi[DATM_MAX_LAYERS],
                      const char *out_dir, int overwrite, double *tokens, datm_error *err);

#endif
