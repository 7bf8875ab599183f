/* engine/rand/rand_internal.h: pieces shared by the rand .c files and not part of the
 * public contract: the Philox round, the ziggurat tables and an inlinable normal. */
#ifndef DATM_RAND_INTERNAL_H
#define DATM_RAND_INTERNAL_H

#include "rand/rand.h"

#include <math.h>
#include <string.h>

/* Philox4x32 constants (Salmon et al. 2011): round multipliers and Weyl key increments. */
#define DATM_PHILOX_M0 UINT32_C(0xD2511F53)
#define DATM_PHILOX_M1 UINT32_C(0xCD9E8D57)
#define DATM_PHILOX_W0 UINT32_C(0x9E3779B9)
#define DATM_PHILOX_W1 UINT32_C(0xBB67AE85)

/* One Philox4x32 round on c[0..3] with round key (k0, k1). */
#define DATM_PHILOX_ROUND(c0, c1, c2, c3, k0, k1)                          \
    do {                                                                   \
        uint64_t p0_ = (uint64_t)DATM_PHILOX_M0 * (c0);                    \
        uint64_t p1_ = (uint64_t)DATM_PHILOX_M1 * (c2);                    \
        uint32_t n0_ = (uint32_t)(p1_ >> 32) ^ (c1) ^ (k0);                \
        uint32_t n2_ = (uint32_t)(p0_ >> 32) ^ (c3) ^ (k1);                \
        (c1) = (uint32_t)p1_;                                              \
        (c3) = (uint32_t)p0_;                                              \
        (c0) = n0_;                                                        \
        (c2) = n2_;                                                        \
    } while (0)

/* nbatch batches of DATM_RNG_BLOCKS blocks from block counter ctr01 (stream words c2, c3)
 * into out (4 DATM_RNG_BLOCKS words per batch): the words datm_rng_refill would give batch
 * after batch, made several batches at a time where the CPU allows. */
void datm_philox_batches(const uint32_t key[2], uint64_t ctr01, uint32_t c2, uint32_t c3,
                         int64_t nbatch, uint32_t *out);

/* 256-layer ziggurat for exp(-x^2/2) (ziggurat_table.c, made by gen_ziggurat.py):
 * x[0] = v / f(r) (base strip), x[1] = r, ..., x[256] = 0; f[i] = exp(-x[i]^2/2). */
extern const double datm_zig_r;
extern const double datm_zig_x[257];
extern const double datm_zig_f[257];

/* Rejection branch of the ziggurat (tail or wedge); returns 1 and sets *x on acceptance. */
int datm_zig_slow(datm_rng *r, unsigned layer, double x, double *out);

/* Flips the sign of x when bit 8 of b is set, without a (50% mispredicted) branch. */
static inline double datm_zig_sign(double x, uint64_t b)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u ^= (b & 256u) << 55;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* N(0,1). One 64-bit word per try: bits 0-7 pick the layer, bit 8 the sign, bits 12-63
 * the position in the layer; about 99% of tries return after one multiply and compare. */
static inline double datm_normal_inline(datm_rng *r)
{
    for (;;) {
        uint64_t b = datm_rng_u64(r);
        unsigned i = (unsigned)(b & 255u);
        double x = (double)(b >> 12) * 0x1p-52 * datm_zig_x[i];
        if (x < datm_zig_x[i + 1])
            return datm_zig_sign(x, b);
        double y;
        if (datm_zig_slow(r, i, x, &y))
            return datm_zig_sign(y, b);
    }
}

#endif
