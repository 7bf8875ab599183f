/* engine/rand/philox.c: the Philox4x32-10 generator (Salmon, Moraes, Dror & Shaw, SC'11),
 * stream keying by (seed, purpose, index, index2), and the word-level helpers built on it:
 * the float uniform fill, unbiased bounded integers, shuffling. */
#include "rand/rand_internal.h"

#include "core/core.h"

#include <string.h>

/* Tag in the hashing counter so key derivation never equals an ordinary output block. */
#define DATM_KEY_TAG UINT32_C(0x6B657964) /* "keyd" */

void datm_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += DATM_PHILOX_W0;
            k1 += DATM_PHILOX_W1;
        }
        DATM_PHILOX_ROUND(c0, c1, c2, c3, k0, k1);
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
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

void datm_rng_refill(datm_rng *r)
{
    datm_philox4x32_10(r->ctr, r->key, r->out);
    if (++r->ctr[0] == 0)
        ++r->ctr[1];
    r->left = 4;
}

/* ---- float uniform fill ---- */

/* Blocks per batch in the fill: the counters of a batch are independent, so the rounds run
 * over arrays the compiler can vectorise (pmuludq does four 32x32->64 products). */
#define DATM_FILL_BATCH 8

static void philox_batch(const uint32_t key[2], uint64_t ctr01, uint32_t c2v, uint32_t c3v,
                         uint32_t out[4 * DATM_FILL_BATCH])
{
    uint32_t c0[DATM_FILL_BATCH], c1[DATM_FILL_BATCH], c2[DATM_FILL_BATCH], c3[DATM_FILL_BATCH];
    for (int j = 0; j < DATM_FILL_BATCH; j++) {
        uint64_t c = ctr01 + (uint64_t)j;
        c0[j] = (uint32_t)c;
        c1[j] = (uint32_t)(c >> 32);
        c2[j] = c2v;
        c3[j] = c3v;
    }
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        for (int j = 0; j < DATM_FILL_BATCH; j++)
            DATM_PHILOX_ROUND(c0[j], c1[j], c2[j], c3[j], k0, k1);
        k0 += DATM_PHILOX_W0;
        k1 += DATM_PHILOX_W1;
    }
    for (int j = 0; j < DATM_FILL_BATCH; j++) {
        out[4 * j + 0] = c0[j];
        out[4 * j + 1] = c1[j];
        out[4 * j + 2] = c2[j];
        out[4 * j + 3] = c3[j];
    }
}

void datm_rng_uniform_fill_f(datm_rng *r, float *out, size_t n) /* out: (n) */
{
    size_t i = 0;
    while (i < n && r->left > 0)
        out[i++] = datm_rng_uniform_f(r);
    /* Now r->left == 0 (or done): whole blocks straight from the counter, in the same
     * order datm_rng_u32 would have produced them. */
    uint32_t w[4 * DATM_FILL_BATCH];
    while (n - i >= 4 * DATM_FILL_BATCH) {
        uint64_t c = (uint64_t)r->ctr[0] | ((uint64_t)r->ctr[1] << 32);
        philox_batch(r->key, c, r->ctr[2], r->ctr[3], w);
        c += DATM_FILL_BATCH;
        r->ctr[0] = (uint32_t)c;
        r->ctr[1] = (uint32_t)(c >> 32);
        for (int j = 0; j < 4 * DATM_FILL_BATCH; j++)
            out[i + (size_t)j] = ((float)(int32_t)(w[j] >> 9) + 0.5f) * 0x1p-23f;
        i += 4 * DATM_FILL_BATCH;
    }
    while (i < n)
        out[i++] = datm_rng_uniform_f(r);
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
