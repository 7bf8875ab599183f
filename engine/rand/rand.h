/* engine/rand: counter-based random streams and the samplers every model uses.
 *
 * A stream is keyed by (seed, purpose, index): e.g. (seed, DATM_STREAM_DOC, doc id) or
 * (seed, DATM_STREAM_BATCH, iteration). Work split over OpenMP threads draws from streams
 * keyed by the work item, never by the thread, so results do not depend on the thread
 * count. The generator is Philox4x32-10 (Salmon et al., SC'11).
 *
 * Keying: the Philox key is a Philox hash of (seed, purpose, index) and ctr[2..3] holds
 * index2; ctr[0..1] counts output blocks (4 words each, 2^64 blocks per stream). Words
 * come out block by block in counter order; they are made DATM_RNG_BLOCKS blocks at a
 * time (SIMD when the CPU has AVX2; the same words either way).
 * datm_rng_init(r, s, p, i) is the same stream as datm_rng_init2(r, s, p, 0, i).
 * A datm_rng is plain data: copy it to fork a stream position, memcpy it to checkpoint.
 *
 * All samplers are in double precision; shape/rate conventions are stated per function.
 * Invalid parameters (NaN, negative shapes/means) are programmer errors and abort through
 * DATM_ASSERT unless a function states otherwise. The word-level generators are inline. */
#ifndef DATM_RAND_H
#define DATM_RAND_H

#include <stddef.h>
#include <stdint.h>

#define DATM_RNG_BLOCKS 8

typedef struct datm_rng {
    uint32_t key[2];
    uint32_t ctr[4];     /* ctr[0..1]: next block counter; ctr[2..3]: stream index */
    uint32_t out[4 * DATM_RNG_BLOCKS]; /* current output blocks, in counter order */
    int      left;       /* unused words at the end of out */
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

/* The raw Philox4x32-10 block function (Random123 word order): out = philox(ctr, key). */
void datm_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

void datm_rng_init(datm_rng *r, uint64_t seed, uint32_t purpose, uint64_t index);
/* Two indices, e.g. (iteration, doc). */
void datm_rng_init2(datm_rng *r, uint64_t seed, uint32_t purpose, uint64_t index, uint64_t index2);
/* Computes the next DATM_RNG_BLOCKS output blocks and advances the block counter (used by
 * the inline generators below; call it directly only to discard the rest of a buffer). */
void datm_rng_refill(datm_rng *r);

static inline uint32_t datm_rng_u32(datm_rng *r)
{
    if (r->left == 0)
        datm_rng_refill(r);
    return r->out[4 * DATM_RNG_BLOCKS - r->left--];
}

/* Two words, the first in the high half (as two datm_rng_u32 calls would give them). */
static inline uint64_t datm_rng_u64(datm_rng *r)
{
    if (r->left >= 2) {
        const uint32_t *w = r->out + 4 * DATM_RNG_BLOCKS - r->left;
        r->left -= 2;
        return ((uint64_t)w[0] << 32) | w[1];
    }
    uint64_t hi = datm_rng_u32(r);
    return (hi << 32) | datm_rng_u32(r);
}

/* U(0,1), open at both ends: (k + 1/2) 2^-52 for a uniform 52-bit k, so the extremes are
 * 2^-53 and 1 - 2^-53 (both exact). */
static inline double datm_rng_uniform(datm_rng *r)
{
    return ((double)(datm_rng_u64(r) >> 12) + 0.5) * 0x1p-52;
}

/* U(0,1) open, 24-bit: (k + 1/2) 2^-23 for a uniform 23-bit k; extremes 2^-24, 1 - 2^-24. */
static inline float datm_rng_uniform_f(datm_rng *r)
{
    return ((float)(int32_t)(datm_rng_u32(r) >> 9) + 0.5f) * 0x1p-23f;
}

/* Same values as n calls of datm_rng_uniform_f, several times faster. */
void     datm_rng_uniform_fill_f(datm_rng *r, float *out, size_t n);
/* Same values as n calls of datm_rng_uniform and the same stream position after them; long
 * runs come from whole batches of the counter (AVX-512 when the CPU has it). */
void     datm_rng_uniform_fill(datm_rng *r, double *out, size_t n);
uint64_t datm_rng_below(datm_rng *r, uint64_t n); /* uniform integer in [0, n), n > 0; unbiased */
double   datm_rng_normal(datm_rng *r);            /* N(0,1), 256-layer ziggurat */
void     datm_rng_normal_fill_f(datm_rng *r, float *out, size_t n);
/* Same values as n calls of datm_rng_normal (the stream ends in the same state), faster:
 * the ziggurat's one-word fast path runs over whole output buffers at once. */
void     datm_rng_normal_fill(datm_rng *r, double *out, size_t n);
double   datm_rng_exponential(datm_rng *r);       /* Exp(1) */

/* Gamma(shape, rate 1) for any shape > 0 (Marsaglia-Tsang; shape < 1 via the boost
 * G(a) = G(a+1) U^(1/a) done in log space). shape == 0 gives 0. For tiny shapes the draw
 * can underflow to 0 or a subnormal (0 in the engine's flush mode, core/fpmode.c): callers
 * who normalise should use datm_rng_log_gamma. */
double   datm_rng_gamma(datm_rng *r, double shape);
/* log of a Gamma(shape, rate 1) draw; never underflows for shape > 0 (-inf for shape 0). */
double   datm_rng_log_gamma(datm_rng *r, double shape);
/* Beta(a, b), a, b > 0; computed from log-gammas when a or b < 1, so tiny a, b still give
 * values in [0, 1] rather than 0/0. */
double   datm_rng_beta(datm_rng *r, double a, double b);
/* Dirichlet(alpha[0..k)) into out[0..k); alpha >= 0, not all 0. Log-space when any alpha < 1. */
void     datm_rng_dirichlet(datm_rng *r, const double *alpha, int k, double *out);
/* Poisson(mean), mean >= 0 and finite: inversion for mean < 10, PTRS (Hoermann 1993) above. */
uint64_t datm_rng_poisson(datm_rng *r, double mean);
/* Index i in [0,k) with P(i) proportional to the increments of cumsum (ascending, cumsum[k-1] > 0). */
int      datm_rng_categorical_cumsum(datm_rng *r, const double *cumsum, int k);
/* counts[i] += draws of n categorical trials with weights w (not necessarily normalised). */
void     datm_rng_multinomial(datm_rng *r, int64_t n, const double *w, int k, int64_t *counts);
/* Chinese restaurant table count: sum_{i=1..m} Bernoulli(conc / (conc + i - 1)); 0 if m == 0.
 * conc >= 0 (conc == 0 gives 1 for m >= 1). Exact; O(min(m, 16 + 4 conc) + conc log m) work. */
int64_t  datm_rng_crt(datm_rng *r, int64_t m, double conc);
/* Weibull(shape k, scale lambda) by inverse CDF: lambda (-log u)^(1/k), u ~ U(0,1). */
double   datm_rng_weibull(datm_rng *r, double k, double lambda);

/* In-place Fisher-Yates shuffle of idx[0..n). */
void     datm_rng_shuffle_i64(datm_rng *r, int64_t *idx, int64_t n);

#endif
