/* engine/rand/philox.c: the Philox4x32-10 generator (Salmon, Moraes, Dror & Shaw, SC'11),
 * stream keying by (seed, purpose, index, index2), and the word-level helpers built on it:
 * the float uniform fill, unbiased bounded integers, shuffling. */
#include "rand/rand_internal.h"

#include "core/core.h"
#include "core/testhooks.h"

#include <string.h>

/* Tag in the hashing counter so key derivation never equals an ordinary output block. */
#define DATM_KEY_TAG UINT32_C(0x6B657964) /* "keyd" */

/* Ten rounds, unrolled: the key schedule adds the Weyl constants before rounds 2..10. */
static inline void philox10(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    uint32_t c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
#define R_ DATM_PHILOX_ROUND(c0, c1, c2, c3, k0, k1)
#define B_ (k0 += DATM_PHILOX_W0, k1 += DATM_PHILOX_W1)
    R_; B_; R_; B_; R_; B_; R_; B_; R_; B_;
    R_; B_; R_; B_; R_; B_; R_; B_; R_;
#undef R_
#undef B_
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
}

void datm_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = { ctr[0], ctr[1], ctr[2], ctr[3] };
    philox10(c, key[0], key[1]);
    memcpy(out, c, sizeof c);
}

void datm_rng_init2(datm_rng *r, uint64_t seed, uint32_t purpose, uint64_t index, uint64_t index2)
{
    /* key = first half of philox((purpose, index, tag), seed): a keyed hash, so streams of
     * different (purpose, index) get unrelated keys; index2 then selects the stream within
     * that key exactly (no collisions possible along index2). */
    uint32_t hc[4] = { purpose, (uint32_t)index, (uint32_t)(index >> 32), DATM_KEY_TAG };
    uint32_t hk[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    uint32_t h[4];
    datm_philox4x32_10(hc, hk, h);
    memset(r, 0, sizeof(*r));
    r->key[0] = h[0];
    r->key[1] = h[1];
    r->ctr[2] = (uint32_t)index2;
    r->ctr[3] = (uint32_t)(index2 >> 32);
    r->left = 0;
}

void datm_rng_init(datm_rng *r, uint64_t seed, uint32_t purpose, uint64_t index)
{
    datm_rng_init2(r, seed, purpose, 0, index);
}

/* ---- float uniform fill ---- */

/* The fill produces DATM_FILL_BATCH blocks at a time. With AVX2 the blocks run in 64-bit
 * lanes (4 per register, word in the low half: _mm256_mul_epu32 reads only that half, so
 * no masking is needed); otherwise one block after another. Integer arithmetic only: both
 * paths give exactly the words of philox10(), hence identical streams on every machine. */
#define DATM_FILL_BATCH DATM_RNG_BLOCKS

static void philox_batch_scalar(const uint32_t key[2], uint64_t ctr01, uint32_t c2, uint32_t c3,
                                uint32_t out[4 * DATM_FILL_BATCH])
{
    for (int j = 0; j < DATM_FILL_BATCH; j++) {
        uint64_t c = ctr01 + (uint64_t)j;
        uint32_t *o = out + 4 * j;
        o[0] = (uint32_t)c;
        o[1] = (uint32_t)(c >> 32);
        o[2] = c2;
        o[3] = c3;
        philox10(o, key[0], key[1]);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DATM_HAVE_AVX2_FILL 1

__attribute__((target("avx2")))
static void philox_batch_avx2(const uint32_t key[2], uint64_t ctr01, uint32_t c2v, uint32_t c3v,
                              uint32_t out[4 * DATM_FILL_BATCH])
{
    /* lanes: blocks 0-3 in *a, blocks 4-7 in *b */
    __m256i ca = _mm256_add_epi64(_mm256_set1_epi64x((long long)ctr01), _mm256_setr_epi64x(0, 1, 2, 3));
    __m256i cb = _mm256_add_epi64(ca, _mm256_set1_epi64x(4));
    __m256i c0a = ca, c0b = cb;
    __m256i c1a = _mm256_srli_epi64(ca, 32), c1b = _mm256_srli_epi64(cb, 32);
    __m256i c2a = _mm256_set1_epi64x(c2v), c2b = c2a;
    __m256i c3a = _mm256_set1_epi64x(c3v), c3b = c3a;
    const __m256i m0 = _mm256_set1_epi64x(DATM_PHILOX_M0), m1 = _mm256_set1_epi64x(DATM_PHILOX_M1);
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        __m256i kk0 = _mm256_set1_epi64x(k0), kk1 = _mm256_set1_epi64x(k1);
        __m256i p0a = _mm256_mul_epu32(c0a, m0), p1a = _mm256_mul_epu32(c2a, m1);
        __m256i p0b = _mm256_mul_epu32(c0b, m0), p1b = _mm256_mul_epu32(c2b, m1);
        c0a = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1a, 32), c1a), kk0);
        c2a = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0a, 32), c3a), kk1);
        c0b = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1b, 32), c1b), kk0);
        c2b = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0b, 32), c3b), kk1);
        c1a = p1a;
        c3a = p0a;
        c1b = p1b;
        c3b = p0b;
        k0 += DATM_PHILOX_W0;
        k1 += DATM_PHILOX_W1;
    }
    /* (w0 | w1 << 32) and (w2 | w3 << 32) per block, then interleave to block order */
    __m256i v01a = _mm256_blend_epi32(c0a, _mm256_slli_epi64(c1a, 32), 0xAA);
    __m256i v23a = _mm256_blend_epi32(c2a, _mm256_slli_epi64(c3a, 32), 0xAA);
    __m256i v01b = _mm256_blend_epi32(c0b, _mm256_slli_epi64(c1b, 32), 0xAA);
    __m256i v23b = _mm256_blend_epi32(c2b, _mm256_slli_epi64(c3b, 32), 0xAA);
    __m256i loa = _mm256_unpacklo_epi64(v01a, v23a), hia = _mm256_unpackhi_epi64(v01a, v23a);
    __m256i lob = _mm256_unpacklo_epi64(v01b, v23b), hib = _mm256_unpackhi_epi64(v01b, v23b);
    _mm256_storeu_si256((__m256i *)(out + 0), _mm256_permute2x128_si256(loa, hia, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 8), _mm256_permute2x128_si256(loa, hia, 0x31));
    _mm256_storeu_si256((__m256i *)(out + 16), _mm256_permute2x128_si256(lob, hib, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 24), _mm256_permute2x128_si256(lob, hib, 0x31));
}

/* Four batches (32 blocks) at once in 512-bit registers, eight blocks per register as in
 * the AVX2 path: four independent chains, so the rounds run at the multipliers' throughput
 * rather than at the latency of one chain (the AVX2 batch's two chains wait on it). The
 * same integer arithmetic: the words of philox10(). */
__attribute__((target("avx512f")))
static void philox_4batches_avx512(const uint32_t key[2], uint64_t ctr01, uint32_t c2v,
                                   uint32_t c3v, uint32_t out[16 * DATM_FILL_BATCH])
{
    enum { Q = 4 };
    __m512i c0[Q], c1[Q], c2[Q], c3[Q];
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    for (int q = 0; q < Q; q++) {
        const __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)(ctr01 + 8u * (uint64_t)q)), lane);
        c0[q] = c;
        c1[q] = _mm512_srli_epi64(c, 32);
        c2[q] = _mm512_set1_epi64(c2v);
        c3[q] = _mm512_set1_epi64(c3v);
    }
    const __m512i m0 = _mm512_set1_epi64(DATM_PHILOX_M0), m1 = _mm512_set1_epi64(DATM_PHILOX_M1);
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        const __m512i kk0 = _mm512_set1_epi64(k0), kk1 = _mm512_set1_epi64(k1);
#pragma GCC unroll 4
        for (int q = 0; q < Q; q++) {
            const __m512i p0 = _mm512_mul_epu32(c0[q], m0), p1 = _mm512_mul_epu32(c2[q], m1);
            c0[q] = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(p1, 32), c1[q]), kk0);
            c2[q] = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(p0, 32), c3[q]), kk1);
            c1[q] = p1;
            c3[q] = p0;
        }
        k0 += DATM_PHILOX_W0;
        k1 += DATM_PHILOX_W1;
    }
    /* per block (w0 | w1 << 32) and (w2 | w3 << 32), interleaved to block order */
    const __m512i ilo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i ihi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    for (int q = 0; q < Q; q++) {
        const __m512i v01 = _mm512_mask_blend_epi32(0xAAAA, c0[q], _mm512_slli_epi64(c1[q], 32));
        const __m512i v23 = _mm512_mask_blend_epi32(0xAAAA, c2[q], _mm512_slli_epi64(c3[q], 32));
        _mm512_storeu_si512((void *)(out + 32 * q), _mm512_permutex2var_epi64(v01, ilo, v23));
        _mm512_storeu_si512((void *)(out + 32 * q + 16), _mm512_permutex2var_epi64(v01, ihi, v23));
    }
}
#endif

static void philox_batch(const uint32_t key[2], uint64_t ctr01, uint32_t c2, uint32_t c3,
                         uint32_t out[4 * DATM_FILL_BATCH])
{
#ifdef DATM_HAVE_AVX2_FILL
    if (!datm_test_hooks.rand_scalar && __builtin_cpu_supports("avx2")) {
        philox_batch_avx2(key, ctr01, c2, c3, out);
        return;
    }
#endif
    philox_batch_scalar(key, ctr01, c2, c3, out);
}

void datm_philox_batches(const uint32_t key[2], uint64_t ctr01, uint32_t c2, uint32_t c3,
                         int64_t nbatch, uint32_t *out)
{
    int64_t b = 0;
#ifdef DATM_HAVE_AVX2_FILL
    if (!datm_test_hooks.rand_scalar && __builtin_cpu_supports("avx512f"))
        for (; b + 4 <= nbatch; b += 4)
            philox_4batches_avx512(key, ctr01 + (uint64_t)(b * DATM_FILL_BATCH), c2, c3,
                                   out + b * 4 * DATM_FILL_BATCH);
#endif
    for (; b < nbatch; b++)
        philox_batch(key, ctr01 + (uint64_t)(b * DATM_FILL_BATCH), c2, c3,
                     out + b * 4 * DATM_FILL_BATCH);
}

/* Next DATM_RNG_BLOCKS blocks into r->out; advances the 64-bit block counter. */
void datm_rng_refill(datm_rng *r)
{
    uint64_t c = (uint64_t)r->ctr[0] | ((uint64_t)r->ctr[1] << 32);
    philox_batch(r->key, c, r->ctr[2], r->ctr[3], r->out);
    c += DATM_RNG_BLOCKS;
    r->ctr[0] = (uint32_t)c;
    r->ctr[1] = (uint32_t)(c >> 32);
    r->left = 4 * DATM_RNG_BLOCKS;
}

void datm_rng_uniform_fill_f(datm_rng *r, float *out, size_t n) /* out: (n) */
{
    size_t i = 0;
    while (i < n && r->left > 0)
        out[i++] = datm_rng_uniform_f(r);
    /* Now r->left == 0 (or done): whole blocks straight from the counter, in the same
     * order datm_rng_u32 would have produced them. */
    enum { NB = 8, WB = 4 * DATM_FILL_BATCH };   /* up to NB batches per generator call */
    uint32_t w[NB * WB];
    while (n - i >= WB) {
        uint64_t c = (uint64_t)r->ctr[0] | ((uint64_t)r->ctr[1] << 32);
        size_t nb = (n - i) / WB;
        if (nb > NB) nb = NB;
        datm_philox_batches(r->key, c, r->ctr[2], r->ctr[3], (int64_t)nb, w);
        c += (uint64_t)nb * DATM_FILL_BATCH;
        r->ctr[0] = (uint32_t)c;
        r->ctr[1] = (uint32_t)(c >> 32);
        for (size_t j = 0; j < nb * WB; j++)
            out[i + j] = ((float)(int32_t)(w[j] >> 9) + 0.5f) * 0x1p-23f;
        i += nb * WB;
    }
    while (i < n)
        out[i++] = datm_rng_uniform_f(r);
}

static inline double uniform_of_words(uint32_t hi, uint32_t lo)
{
    return ((double)((((uint64_t)hi << 32) | lo) >> 12) + 0.5) * 0x1p-52;
}

void datm_rng_uniform_fill(datm_rng *r, double *out, size_t n) /* out: (n) */
{
    size_t i = 0;
    while (i < n && r->left >= 2)
        out[i++] = datm_rng_uniform(r);
    if (n - i < 2 * 4 * DATM_FILL_BATCH) {   /* too few for a whole batch: word by word */
        while (i < n)
            out[i++] = datm_rng_uniform(r);
        return;
    }
    /* Now r->left is 0 or 1: the words that follow come straight from the counter, whole
     * batches at a time, paired (high, low) in the order datm_rng_u64 reads them; a word left
     * in the buffer is the first high half. */
    uint32_t hi = 0;
    int have_hi = 0;
    if (r->left == 1) {
        hi = r->out[4 * DATM_RNG_BLOCKS - 1];
        r->left = 0;
        have_hi = 1;
    }
    enum { NB = 8, WB = 4 * DATM_FILL_BATCH };   /* up to NB batches per generator call */
    uint32_t w[NB * WB];
    for (;;) {
        const size_t words = 2 * (n - i) - (size_t)have_hi;   /* still to consume */
        if (words < WB) break;
        uint64_t c = (uint64_t)r->ctr[0] | ((uint64_t)r->ctr[1] << 32);
        size_t nb = words / WB;
        if (nb > NB) nb = NB;
        datm_philox_batches(r->key, c, r->ctr[2], r->ctr[3], (int64_t)nb, w);
        c += (uint64_t)nb * DATM_FILL_BATCH;
        r->ctr[0] = (uint32_t)c;
        r->ctr[1] = (uint32_t)(c >> 32);
        size_t j = 0;
        if (have_hi) {
            out[i++] = uniform_of_words(hi, w[0]);
            j = 1;
        }
        for (; j + 2 <= nb * WB; j += 2)
            out[i++] = uniform_of_words(w[j], w[j + 1]);
        have_hi = j < nb * WB;
        if (have_hi) hi = w[j];
    }
    /* the rest through the buffer (refilled from the advanced counter) */
    if (have_hi && i < n)
        out[i++] = uniform_of_words(hi, datm_rng_u32(r));
    while (i < n)
        out[i++] = datm_rng_uniform(r);
}

/* ---- integers ---- */

uint64_t datm_rng_below(datm_rng *r, uint64_t n)
{
    DATM_ASSERT(n > 0);
    /* Lemire's multiply-shift with rejection of the biased low products (ACM TOMACS 2019). */
    if (n <= UINT32_MAX) {
        uint32_t n32 = (uint32_t)n;
        uint64_t m = (uint64_t)datm_rng_u32(r) * n32;
        if ((uint32_t)m < n32) {
            uint32_t t = (0u - n32) % n32;
            while ((uint32_t)m < t)
                m = (uint64_t)datm_rng_u32(r) * n32;
        }
        return m >> 32;
    }
    __extension__ typedef unsigned __int128 u128;
    u128 m = (u128)datm_rng_u64(r) * n;
    if ((uint64_t)m < n) {
        uint64_t t = (0u - n) % n;
        while ((uint64_t)m < t)
            m = (u128)datm_rng_u64(r) * n;
    }
    return (uint64_t)(m >> 64);
}

void datm_rng_shuffle_i64(datm_rng *r, int64_t *idx, int64_t n) /* idx: (n) */
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)datm_rng_below(r, (uint64_t)i + 1);
        int64_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}
