/* engine/rand: counter-based random streams and the samplers every model uses.
 *
 * A stream is keyed by (seed, purpose, index): e.g. (seed, DATM_STREAM_DOC, doc id) or
 * (seed, DATM_STREAM_BATCH, iteration). Work split over OpenMP threads draws from streams
 * keyed by the work item, never by the thread, so results do not depend on the thread
 * count. The generator is Philox4x32-10 (Salmon et al., SC'11).
 *
 * All samplers are in double precision; shape/rate conventions are stated per function. */
#ifndef DATM_RAND_H
#define DATM_RAND_H

#include <stddef.h>
#include <stdint.h>

typedef struct datm_rng {
    uint32_t key[2];
    uint32_t ctr[4];     /* ctr[0..1]: block counter; ctr[2..3]: stream index */
    uint32_t out[4];     /* current output block */
    int      left;       /* unused words in out */
} datm_rng;

/* Purposes: one per kind of randomness, so streams never collide. Append only. */
typedef enum {
    DATM_STREAM_INIT = 1,      /* parameter initialisation */
    DATM_STREAM_SHUFFLE,       /* mini-batch order, index = epoch */
    DATM_STREAM_SPLIT,         /* token split, index = doc */
    DATM_STREAM_BATCH,         /* per mini-batch global draws, index = iteration */
    DATM_STREAM_DOC,           /* per document local draws; use datm_rng_init2(.., iter, doc) */
    DATM_STREAM_PHI_NOISE,     /* TLASGR Gaussian noise, index = iteration*64 + layer */
    DATM_STREAM_EVAL,          /* evaluation draws */
    DATM_STREAM_TEST,          /* unit tests */
    DATM_STREAM_USER           /* first free purpose */
} datm_stream_purpose;

void datm_rng_init(datm_rng *r, uint64_t seed, uint32_t purpose, uint64_t index);
/* Two indices, e.g. (iteration, doc). */
void datm_rng_init2(datm_rng *r, uint64_t seed, uint32_t purpose, uint64_t index, uint64_t index2);

uint32_t datm_rng_u32(datm_rng *r);
uint64_t datm_rng_u64(datm_rng *r);
double   datm_rng_uniform(datm_rng *r);           /* U(0,1), open at both ends */
float    datm_rng_uniform_f(datm_rng *r);         /* U(0,1) open, 24-bit */
void     datm_rng_uniform_fill_f(datm_rng *r, float *out, size_t n);
uint64_t datm_rng_below(datm_rng *r, uint64_t n); /* uniform integer in [0, n) */
double   datm_rng_normal(datm_rng *r);            /* N(0,1) */
void     datm_rng_normal_fill_f(datm_rng *r, float *out, size_t n);

double   datm_rng_gamma(datm_rng *r, double shape);           /* Gamma(shape, rate 1); any shape > 0 */
double   datm_rng_beta(datm_rng *r, double a, double b);
void     datm_rng_dirichlet(datm_rng *r, const double *alpha, int k, double *out);
uint64_t datm_rng_poisson(datm_rng *r, double mean);
/* Index i in [0,k) with P(i) proportional to the increments of cumsum (ascending, cumsum[k-1] > 0). */
int      datm_rng_categorical_cumsum(datm_rng *r, const double *cumsum, int k);
/* counts[i] += draws of n categorical trials with weights w (not necessarily normalised). */
void     datm_rng_multinomial(datm_rng *r, int64_t n, const double *w, int k, int64_t *counts);
/* Chinese restaurant table count: sum_{i=1..m} Bernoulli(conc / (conc + i - 1)); 0 if m == 0. */
int64_t  datm_rng_crt(datm_rng *r, int64_t m, double conc);
double   datm_rng_weibull(datm_rng *r, double k, double lambda);  /* inverse CDF */

/* In-place Fisher-Yates shuffle of idx[0..n). */
void     datm_rng_shuffle_i64(datm_rng *r, int64_t *idx, int64_t n);

#endif
