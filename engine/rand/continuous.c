/* engine/rand/continuous.c: normal (ziggurat), exponential and Weibull samplers, and the
 * float normal fill. The Weibull inverse CDF is the reparameterised theta sample of the
 * WUDVE encoder (paper eq. for theta = lambda (-log(1-u))^(1/k)). */
#include "rand/rand_internal.h"

#include "core/core.h"
#include "core/testhooks.h"

int datm_zig_slow(datm_rng *r, unsigned layer, double x, double *out)
{
    if (layer == 0) {
        /* Tail beyond r (Marsaglia 1964): r + a with a ~ Exp(r) accepted w.p. exp(-a^2/2). */
        const double inv_r = 1.0 / datm_zig_r;
        double a, b;
        do {
            a = -log(datm_rng_uniform(r)) * inv_r;
            b = -log(datm_rng_uniform(r));
        } while (b + b < a * a);
        *out = datm_zig_r + a;
        return 1;
    }
    /* Wedge: a uniform height between the layer's bottom f[i] and top f[i+1]. */
    double y = datm_zig_f[layer] + datm_rng_uniform(r) * (datm_zig_f[layer + 1] - datm_zig_f[layer]);
    if (y < exp(-0.5 * x * x)) {
        *out = x;
        return 1;
    }
    return 0;
}

double datm_rng_normal(datm_rng *r)
{
    return datm_normal_inline(r);
}

void datm_rng_normal_fill_f(datm_rng *r, float *out, size_t n) /* out: (n) */
{
    for (size_t i = 0; i < n; i++)
        out[i] = (float)datm_normal_inline(r);
}

/* Leading fast-path tries among the m word pairs at w (high word first), m <= 16: their
 * values go to out; returns how many there were (m when none was rejected). */
static size_t zig_run_scalar(const uint32_t *w, size_t m, double *out)
{
    for (size_t j = 0; j < m; j++) {
        uint64_t b = ((uint64_t)w[2 * j] << 32) | w[2 * j + 1];
        unsigned layer = (unsigned)(b & 255u);
        double x = (double)(b >> 12) * 0x1p-52 * datm_zig_x[layer];
        if (!(x < datm_zig_x[layer + 1])) return j;
        out[j] = datm_zig_sign(x, b);
    }
    return m;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DATM_HAVE_AVX2_ZIG 1

/* Four tries at w (8 words): their values into t, the mask of the lanes inside their
 * layer's rectangle returned. The table entries x[i], x[i+1] by one 16-byte load per lane
 * (the layer is the low byte of the second word of each pair) regrouped by two unpacks
 * (cheaper than two gathers, which were half the time of the run); (double)(b >> 12)
 * exactly as 2^52 + k - 2^52 (k < 2^52); then the same two roundings and compare as the
 * scalar code. */
__attribute__((target("avx2")))
static inline int zig_try4_avx2(const uint32_t *w, double *t, __m256d *xv)
{
    const __m256i bit8 = _mm256_set1_epi64x(256);
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256d two52 = _mm256_set1_pd(0x1p52), scale = _mm256_set1_pd(0x1p-52);
    /* memory holds (hi, lo) word pairs: swap the halves of each 64-bit lane */
    __m256i b = _mm256_shuffle_epi32(_mm256_loadu_si256((const __m256i *)w), 0xB1);
    const double *t0 = datm_zig_x + (w[1] & 255u), *t1 = datm_zig_x + (w[3] & 255u);
    const double *t2 = datm_zig_x + (w[5] & 255u), *t3 = datm_zig_x + (w[7] & 255u);
    const __m256d pa = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(t0)), _mm_loadu_pd(t2), 1);
    const __m256d pb = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(t1)), _mm_loadu_pd(t3), 1);
    __m256d xi = _mm256_unpacklo_pd(pa, pb);    /* x[layer] of lanes 0..3 */
    __m256d xi1 = _mm256_unpackhi_pd(pa, pb);   /* x[layer + 1] */
    __m256d k = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(b, 12), magic)), two52);
    __m256d x = _mm256_mul_pd(_mm256_mul_pd(k, scale), xi);
    int acc = _mm256_movemask_pd(_mm256_cmp_pd(x, xi1, _CMP_LT_OQ));
    x = _mm256_xor_pd(x, _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(b, bit8), 55)));
    if (t) _mm256_storeu_pd(t, x);
    else *xv = x;
    return acc;
}

/* zig_run_scalar four tries at a time; a tail of 1-3 tries runs the same code on a copy
 * padded with zero words (lanes past the tail are not used). */
__attribute__((target("avx2")))
static size_t zig_run_avx2(const uint32_t *w, size_t m, double *out)
{
    size_t j = 0;
    double t[4];
    for (; j + 4 <= m; j += 4) {
        __m256d x;
        int acc = zig_try4_avx2(w + 2 * j, NULL, &x);
        if (acc == 15) {
            _mm256_storeu_pd(out + j, x);
            continue;
        }
        _mm256_storeu_pd(t, x);
        int n = __builtin_ctz((unsigned)~acc);   /* first rejected lane */
        for (int q = 0; q < n; q++) out[j + (size_t)q] = t[q];
        return j + (size_t)n;
    }
    if (j < m) {
        uint32_t pad[8] = {0};
        const size_t rest = m - j;
        memcpy(pad, w + 2 * j, rest * 2 * sizeof(uint32_t));
        const unsigned acc = (unsigned)zig_try4_avx2(pad, t, NULL) | (~0u << rest);
        const size_t n = acc == ~0u ? rest : (size_t)__builtin_ctz(~acc);   /* first rejected */
        for (size_t q = 0; q < n; q++) out[j + q] = t[q];
        return j + n;
    }
    return j;
}

/* zig_try4_avx2 for eight tries (16 words) in 512-bit registers, the table entries by two
 * gathers: the same operations per lane, so the same values and acceptances. Returns the
 * mask of the accepted lanes; their values in *xv. */
__attribute__((target("avx512f")))
static inline unsigned zig_try8_avx512(const uint32_t *w, __m512d *xv)
{
    const __m512i bit8 = _mm512_set1_epi64(256), low8 = _mm512_set1_epi64(255);
    const __m512i magic = _mm512_set1_epi64(0x4330000000000000LL);
    const __m512d two52 = _mm512_set1_pd(0x1p52), scale = _mm512_set1_pd(0x1p-52);
    const __m512i b = _mm512_shuffle_epi32(_mm512_loadu_si512((const void *)w), 0xB1);
    const __m512i li = _mm512_and_si512(b, low8);
    const __m512d xi = _mm512_i64gather_pd(li, datm_zig_x, 8);
    const __m512d xi1 = _mm512_i64gather_pd(li, datm_zig_x + 1, 8);
    const __m512d k = _mm512_sub_pd(
        _mm512_castsi512_pd(_mm512_or_si512(_mm512_srli_epi64(b, 12), magic)), two52);
    const __m512d x = _mm512_mul_pd(_mm512_mul_pd(k, scale), xi);
    const unsigned acc = _mm512_cmp_pd_mask(x, xi1, _CMP_LT_OQ);
    *xv = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x),
                                               _mm512_slli_epi64(_mm512_and_si512(b, bit8), 55)));
    return acc;
}

/* zig_run_avx2 eight tries at a time; the last 0-7 tries go to zig_run_avx2. */
__attribute__((target("avx512f,avx2")))
static size_t zig_run_avx512(const uint32_t *w, size_t m, double *out)
{
    size_t j = 0;
    for (; j + 8 <= m; j += 8) {
        __m512d x;
        const unsigned acc = zig_try8_avx512(w + 2 * j, &x);
        if (acc == 0xFFu) {
            _mm512_storeu_pd(out + j, x);
            continue;
        }
        double t[8];
        _mm512_storeu_pd(t, x);
        const int n = __builtin_ctz(~acc);   /* first rejected lane */
        for (int q = 0; q < n; q++) out[j + (size_t)q] = t[q];
        return j + (size_t)n;
    }
    return j + zig_run_avx2(w + 2 * j, m - j, out + j);
}
#endif

/* r as batch-by-batch refills leave it with word pos of the nb batches in bulk (made from
 * block counter c) next: that word's batch in r->out, the counter just past it; pos == nb
 * batches: the last batch, none left. */
static void bulk_sync(datm_rng *r, uint64_t c, const uint32_t *bulk, size_t nb, size_t pos)
{
    enum { WB = 4 * DATM_RNG_BLOCKS };
    const size_t q = pos / WB, p = pos % WB;
    const uint64_t cn = c + (uint64_t)(q < nb ? q + 1 : nb) * DATM_RNG_BLOCKS;
    r->ctr[0] = (uint32_t)cn;
    r->ctr[1] = (uint32_t)(cn >> 32);
    memcpy(r->out, bulk + (q < nb ? q : nb - 1) * WB, sizeof r->out);
    r->left = q < nb ? (int)(WB - p) : 0;
}

/* Whole buffers at a time: the pairs of words left in r->out are tries of the ziggurat's
 * fast path, taken in order; at the first try that falls outside its layer's rectangle the
 * scalar sampler takes over for that one value (it consumes the same words the call-by-call
 * sampler would), then the buffered run resumes. Same words, same order, same values. */
void datm_rng_normal_fill(datm_rng *r, double *out, size_t n) /* out: (n) */
{
    size_t (*run)(const uint32_t *, size_t, double *) = zig_run_scalar;
#ifdef DATM_HAVE_AVX2_ZIG
    if (!datm_test_hooks.rand_scalar && __builtin_cpu_supports("avx2")) run = zig_run_avx2;
    if (!datm_test_hooks.rand_scalar && __builtin_cpu_supports("avx512f")) run = zig_run_avx512;
#endif
    size_t i = 0;
    enum { NB = 16, WB = 4 * DATM_RNG_BLOCKS };   /* bulk: up to NB batches of WB words */
    uint32_t bulk[NB * WB];
    while (i < n) {
        if (r->left == 0 && n - i >= 2 * WB) {
            /* Buffer empty and many values to go: the next batches of the stream at once
             * (datm_philox_batches) and the runs over them. A rejected try is done in full
             * by the scalar sampler from r, set to the try's word exactly as batch-by-batch
             * refills would have it (bulk_sync); the run then resumes in the buffer at the
             * word where that sampler stopped. At the end r is left at the first unused
             * word, in the same state. */
            const uint64_t c = (uint64_t)r->ctr[0] | ((uint64_t)r->ctr[1] << 32);
            size_t nb = (2 * (n - i) + WB - 1) / WB;
            if (nb > NB) nb = NB;
            datm_philox_batches(r->key, c, r->ctr[2], r->ctr[3], (int64_t)nb, bulk);
            const size_t end = nb * WB;
            size_t pos = 0;   /* next unused word of the buffer */
            int r_at_pos = 0;  /* r's own state is already the one at pos */
            while (i < n && pos + 2 <= end && !(pos & 1)) {
                size_t m = (end - pos) / 2;
                if (m > n - i) m = n - i;
                const size_t j = run(bulk + pos, m, out + i);
                i += j;
                pos += 2 * j;
                if (j == m) {   /* done, or the buffer used up */
                    r_at_pos = 0;
                    break;
                }
                bulk_sync(r, c, bulk, nb, pos);
                out[i++] = datm_normal_inline(r);   /* the rejected try, done in full */
                r_at_pos = 1;
                const uint64_t cn = (uint64_t)r->ctr[0] | ((uint64_t)r->ctr[1] << 32);
                pos = (size_t)(cn - c) * 4 - (size_t)r->left;
                if (pos >= end) break;   /* the sampler read past the buffer */
            }
            if (!r_at_pos) bulk_sync(r, c, bulk, nb, pos);
            continue;
        }
        if (r->left == 0) datm_rng_refill(r);
        if (r->left < 2 || (r->left & 1)) {
            out[i++] = datm_normal_inline(r);
            continue;
        }
        size_t m = (size_t)r->left / 2;
        if (m > n - i) m = n - i;
        size_t j = run(r->out + 4 * DATM_RNG_BLOCKS - r->left, m, out + i);
        i += j;
        r->left -= 2 * (int)j;
        if (j < m) out[i++] = datm_normal_inline(r);   /* the rejected try, done in full */
    }
}

double datm_rng_exponential(datm_rng *r)
{
    return -log(datm_rng_uniform(r));
}

double datm_rng_weibull(datm_rng *r, double k, double lambda)
{
    DATM_ASSERT(k > 0.0 && lambda >= 0.0);
    /* F^-1(p) = lambda (-log(1-p))^(1/k); u plays 1-p (same law, no 1-u rounding). */
    return lambda * exp(log(-log(datm_rng_uniform(r))) / k);
}
