/* engine/nn/vmath.h: branch-free float exp, log, log1p, lgamma and digamma that compilers
 * vectorise (loops marked `#pragma omp simd`), for the transcendental-heavy loops of the
 * encoder: softplus, the Weibull sample, the Weibull-gamma KL. libm's scalar versions were
 * ~70% of a WHAI iteration before these (perf, see bench/bench_whai.c).
 *
 * Accuracy (checked against libm double in tests/test_nn_vmath.c): exp, log, log1p (and
 * log1p01 on [0, 1]) within 2 ulp-ish (rel. 3e-7); lgamma within 6e-6 of max(1, |lgamma|);
 * digamma within 2e-6 relative for x >= 1e-3 (plus absolute 1e-5 near its root); Gamma
 * within 1e-5 relative on (0, 12], 2e-5 on (12, 34). lgamma, digamma and Gamma share one
 * shift with one division (datm_vshift8f); the pairs lgamma+digamma and Gamma+digamma of one
 * argument come from one call. Domains: exp any x (clamped to [-87.3, 88], giving 0 / large
 * finite at the ends); log, lgamma, digamma x > 0 (normal floats); Gamma 0 < x < 34; log1p
 * x > -1. Pure functions of their argument: identical results on every call, every thread
 * count. (Without -ffast-math the compiler keeps the rounding trick below.)
 * always_inline: a vlogf left out of line inside a loop stops the vectoriser. */
#ifndef DATM_VMATH_H
#define DATM_VMATH_H

#include <stdint.h>
#include <string.h>

/* Put on a function whose loops use these: gcc compiles it twice (AVX2+FMA and baseline
 * x86-64) and picks one at load time, so the default build still gets 8-wide vectors. */
#define DATM_VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

static inline __attribute__((always_inline)) float datm_vbits2f(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}
static inline __attribute__((always_inline)) int32_t datm_vf2bits(float f)
{
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i;
}

/* x if c, else +0 (bitwise: a select with a constant arm would block vectorisation). */
static inline __attribute__((always_inline)) float datm_vkeepf(int c, float x)
{
    return datm_vbits2f(datm_vf2bits(x) & -(int32_t)(c != 0));
}
static inline __attribute__((always_inline)) double datm_vkeep(int c, double x)
{
    int64_t i;
    memcpy(&i, &x, sizeof i);
    i &= -(int64_t)(c != 0);
    memcpy(&x, &i, sizeof x);
    return x;
}

/* sqrt(x), x >= 0 finite: x rsqrt(x + 1e-30) with the bit-trick estimate and three Newton
 * steps (rel. err. ~1e-7). libm's sqrtf keeps a call for errno and so blocks vectorisation
 * at -O2. */
static inline __attribute__((always_inline)) float datm_vsqrtf(float x)
{
    float y = x + 1e-30f;
    float r = datm_vbits2f(0x5f3759df - (datm_vf2bits(y) >> 1));
    r = r * (1.5f - 0.5f * y * r * r);
    r = r * (1.5f - 0.5f * y * r * r);
    r = r * (1.5f - 0.5f * y * r * r);
    return x * r;
}

/* datm_vsqrtf of two independent arguments, steps interleaved (as datm_vexpf_x2 below). */
static inline __attribute__((always_inline)) void datm_vsqrtf_x2(float x1, float x2, float *s1,
                                                                 float *s2)
{
    float y1 = x1 + 1e-30f, y2 = x2 + 1e-30f;
    float r1 = datm_vbits2f(0x5f3759df - (datm_vf2bits(y1) >> 1));
    float r2 = datm_vbits2f(0x5f3759df - (datm_vf2bits(y2) >> 1));
    r1 = r1 * (1.5f - 0.5f * y1 * r1 * r1);
    r2 = r2 * (1.5f - 0.5f * y2 * r2 * r2);
    r1 = r1 * (1.5f - 0.5f * y1 * r1 * r1);
    r2 = r2 * (1.5f - 0.5f * y2 * r2 * r2);
    r1 = r1 * (1.5f - 0.5f * y1 * r1 * r1);
    r2 = r2 * (1.5f - 0.5f * y2 * r2 * r2);
    *s1 = x1 * r1;
    *s2 = x2 * r2;
}

/* e^x: x = n ln2 + r, |r| <= ln2/2, degree-6 Taylor-like minimax polynomial for e^r. */
static inline __attribute__((always_inline)) float datm_vexpf(float x)
{
    /* clamp to [-87.3, 88] on the bit pattern with integer min (no float compare: a
     * float select against a constant lets gcc fold one arm and leave a branch the
     * vectoriser refuses under -ftrapping-math) */
    uint32_t u = (uint32_t)datm_vf2bits(x);
    u = u < 0xC2AE999Au ? u : 0xC2AE999Au;     /* x >= -87.3 (negative floats: larger u) */
    int32_t ix = (int32_t)u;
    ix = ix < 0x42B00000 ? ix : 0x42B00000;    /* x <= 88 */
    x = datm_vbits2f(ix);
    /* round to nearest by the 1.5 2^23 trick: t's low mantissa bits hold n (no libm call,
     * no float-to-int conversion) */
    float t = x * 1.44269504088896341f + 12582912.0f;
    int32_t ni = datm_vf2bits(t) - 0x4B400000;
    float n = t - 12582912.0f;
    float r = x - n * 0.693145751953125f;       /* ln2 split in two for exact n*ln2_hi */
    r = r - n * 1.428606765330187045e-06f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * datm_vbits2f((ni + 127) << 23);
}

/* ln x for x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), z = m - 1, and Cephes' logf
 * polynomial ln(1 + z) = z - z^2/2 + z^3 P(z) (no division). */
static inline __attribute__((always_inline)) float datm_vlogf(float x)
{
    int32_t ix = datm_vf2bits(x);
    int32_t e = (ix - 0x3f3504f3) >> 23;                 /* arithmetic shift (gcc, clang) */
    float m = datm_vbits2f((int32_t)((uint32_t)ix - ((uint32_t)e << 23)));
    float z = m - 1.0f, z2 = z * z;
    float p = 7.0376836292e-2f;
    p = p * z - 1.1514610310e-1f;
    p = p * z + 1.1676998740e-1f;
    p = p * z - 1.2420140846e-1f;
    p = p * z + 1.4249322787e-1f;
    p = p * z - 1.6668057665e-1f;
    p = p * z + 2.0000714765e-1f;
    p = p * z - 2.4999993993e-1f;
    p = p * z + 3.3333331174e-1f;
    float y = z * z2 * p - 0.5f * z2 + z;
    return y + (float)e * 0.693147180559945309f;
}

/* datm_vexpf of two independent arguments with the steps of the two interleaved: the same
 * operations on each (the same results), two dependency chains in flight at once for loops
 * whose one chain is longer than the out-of-order window covers (see datm_softplus_f32). */
static inline __attribute__((always_inline)) void datm_vexpf_x2(float x1, float x2, float *y1,
                                                                float *y2)
{
    uint32_t u1 = (uint32_t)datm_vf2bits(x1), u2 = (uint32_t)datm_vf2bits(x2);
    u1 = u1 < 0xC2AE999Au ? u1 : 0xC2AE999Au;
    u2 = u2 < 0xC2AE999Au ? u2 : 0xC2AE999Au;
    int32_t i1 = (int32_t)u1, i2 = (int32_t)u2;
    i1 = i1 < 0x42B00000 ? i1 : 0x42B00000;
    i2 = i2 < 0x42B00000 ? i2 : 0x42B00000;
    x1 = datm_vbits2f(i1);
    x2 = datm_vbits2f(i2);
    float t1 = x1 * 1.44269504088896341f + 12582912.0f;
    float t2 = x2 * 1.44269504088896341f + 12582912.0f;
    int32_t n1 = datm_vf2bits(t1) - 0x4B400000, n2 = datm_vf2bits(t2) - 0x4B400000;
    float m1 = t1 - 12582912.0f, m2 = t2 - 12582912.0f;
    float r1 = x1 - m1 * 0.693145751953125f, r2 = x2 - m2 * 0.693145751953125f;
    r1 = r1 - m1 * 1.428606765330187045e-06f;
    r2 = r2 - m2 * 1.428606765330187045e-06f;
    float p1 = 1.9875691500e-4f, p2 = 1.9875691500e-4f;
    p1 = p1 * r1 + 1.3981999507e-3f;
    p2 = p2 * r2 + 1.3981999507e-3f;
    p1 = p1 * r1 + 8.3334519073e-3f;
    p2 = p2 * r2 + 8.3334519073e-3f;
    p1 = p1 * r1 + 4.1665795894e-2f;
    p2 = p2 * r2 + 4.1665795894e-2f;
    p1 = p1 * r1 + 1.6666665459e-1f;
    p2 = p2 * r2 + 1.6666665459e-1f;
    p1 = p1 * r1 + 5.0000001201e-1f;
    p2 = p2 * r2 + 5.0000001201e-1f;
    p1 = p1 * r1 * r1 + r1 + 1.0f;
    p2 = p2 * r2 * r2 + r2 + 1.0f;
    *y1 = p1 * datm_vbits2f((n1 + 127) << 23);
    *y2 = p2 * datm_vbits2f((n2 + 127) << 23);
}

/* datm_vlogf of two independent arguments, steps interleaved (as datm_vexpf_x2). */
static inline __attribute__((always_inline)) void datm_vlogf_x2(float x1, float x2, float *y1,
                                                                float *y2)
{
    int32_t ix1 = datm_vf2bits(x1), ix2 = datm_vf2bits(x2);
    int32_t e1 = (ix1 - 0x3f3504f3) >> 23, e2 = (ix2 - 0x3f3504f3) >> 23;
    float m1 = datm_vbits2f((int32_t)((uint32_t)ix1 - ((uint32_t)e1 << 23)));
    float m2 = datm_vbits2f((int32_t)((uint32_t)ix2 - ((uint32_t)e2 << 23)));
    float z1 = m1 - 1.0f, z2 = m2 - 1.0f;
    float zz1 = z1 * z1, zz2 = z2 * z2;
    float p1 = 7.0376836292e-2f, p2 = 7.0376836292e-2f;
    p1 = p1 * z1 - 1.1514610310e-1f;
    p2 = p2 * z2 - 1.1514610310e-1f;
    p1 = p1 * z1 + 1.1676998740e-1f;
    p2 = p2 * z2 + 1.1676998740e-1f;
    p1 = p1 * z1 - 1.2420140846e-1f;
    p2 = p2 * z2 - 1.2420140846e-1f;
    p1 = p1 * z1 + 1.4249322787e-1f;
    p2 = p2 * z2 + 1.4249322787e-1f;
    p1 = p1 * z1 - 1.6668057665e-1f;
    p2 = p2 * z2 - 1.6668057665e-1f;
    p1 = p1 * z1 + 2.0000714765e-1f;
    p2 = p2 * z2 + 2.0000714765e-1f;
    p1 = p1 * z1 - 2.4999993993e-1f;
    p2 = p2 * z2 - 2.4999993993e-1f;
    p1 = p1 * z1 + 3.3333331174e-1f;
    p2 = p2 * z2 + 3.3333331174e-1f;
    float y1_ = z1 * zz1 * p1 - 0.5f * zz1 + z1, y2_ = z2 * zz2 * p2 - 0.5f * zz2 + z2;
    *y1 = y1_ + (float)e1 * 0.693147180559945309f;
    *y2 = y2_ + (float)e2 * 0.693147180559945309f;
}

/* ln(1 + x) for x > -1, accurate for small x: u = 1 + x, ln u - ((u - 1) - x) / u. */
static inline __attribute__((always_inline)) float datm_vlog1pf(float x)
{
    float u = 1.0f + x;
    float c = (u - 1.0f) - x;            /* rounding error of u */
    return datm_vlogf(u) - c / u;
}

/* ln(1 + t) for t in [0, 1] (softplus: t = e^-|z|): t P(t) with P the degree-8 Chebyshev
 * fit of ln(1 + t) / t on [0, 1] (fit error 3e-8, float evaluation 1.7e-7 relative): no range
 * reduction and no division, about half the work of datm_vlog1pf. */
static inline __attribute__((always_inline)) float datm_vlog1p01f(float t)
{
    float p = 5.253457797e-03f;
    p = p * t - 2.958850739e-02f;
    p = p * t + 7.836166802e-02f;
    p = p * t - 1.367476971e-01f;
    p = p * t + 1.911143108e-01f;
    p = p * t - 2.484436989e-01f;
    p = p * t + 3.331927134e-01f;
    p = p * t - 4.999950152e-01f;
    p = p * t + 9.999999705e-01f;
    return p * t;
}

/* datm_vlog1p01f of two independent arguments, steps interleaved (as datm_vexpf_x2). */
static inline __attribute__((always_inline)) void datm_vlog1p01f_x2(float t1, float t2,
                                                                    float *y1, float *y2)
{
    float p1 = 5.253457797e-03f, p2 = 5.253457797e-03f;
    p1 = p1 * t1 - 2.958850739e-02f;
    p2 = p2 * t2 - 2.958850739e-02f;
    p1 = p1 * t1 + 7.836166802e-02f;
    p2 = p2 * t2 + 7.836166802e-02f;
    p1 = p1 * t1 - 1.367476971e-01f;
    p2 = p2 * t2 - 1.367476971e-01f;
    p1 = p1 * t1 + 1.911143108e-01f;
    p2 = p2 * t2 + 1.911143108e-01f;
    p1 = p1 * t1 - 2.484436989e-01f;
    p2 = p2 * t2 - 2.484436989e-01f;
    p1 = p1 * t1 + 3.331927134e-01f;
    p2 = p2 * t2 + 3.331927134e-01f;
    p1 = p1 * t1 - 4.999950152e-01f;
    p2 = p2 * t2 - 4.999950152e-01f;
    p1 = p1 * t1 + 9.999999705e-01f;
    p2 = p2 * t2 + 9.999999705e-01f;
    *y1 = p1 * t1;
    *y2 = p2 * t2;
}

/* The shift shared by lgamma, digamma and Gamma at x > 0: when x < 8, z = x + 8, P = x (x+1)
 * ... (x+7) and S = sum_{i<8} 1/(x+i) (ln Gamma(x) = ln Gamma(z) - ln P, psi(x) = psi(z) - S);
 * otherwise z = x, P = 1, S = 0. S = N / P is summed as fractions pairwise, so one division,
 * q = 1 / (z P), gives 1/z = q P, 1/P = q z and S = N q z (no overflow: z P < 4.2e9). The
 * selects are integer masks, not float selects (see datm_vexpf). */
static inline __attribute__((always_inline)) void datm_vshift8f(float x, float *z, float *iz,
                                                                float *P, float *iP, float *S)
{
    int32_t small = -(int32_t)(x < 8.0f);
    float xs = datm_vbits2f((datm_vf2bits(x) & small) | (datm_vf2bits(1.0f) & ~small));
    float d1 = xs + 1.0f, d2 = xs + 2.0f, d3 = xs + 3.0f, d4 = xs + 4.0f, d5 = xs + 5.0f,
          d6 = xs + 6.0f, d7 = xs + 7.0f;
    float p01 = xs * d1, p23 = d2 * d3, p45 = d4 * d5, p67 = d6 * d7;
    float n01 = xs + d1, n23 = d2 + d3, n45 = d4 + d5, n67 = d6 + d7;
    float p03 = p01 * p23, p47 = p45 * p67;
    float n03 = n01 * p23 + n23 * p01, n47 = n45 * p67 + n67 * p45;
    float pp = p03 * p47, nn = n03 * p47 + n47 * p03;
    pp = datm_vbits2f((datm_vf2bits(pp) & small) | (datm_vf2bits(1.0f) & ~small));
    nn = datm_vbits2f(datm_vf2bits(nn) & small);
    float zz = x + datm_vbits2f(datm_vf2bits(8.0f) & small);
    float q = 1.0f / (zz * pp);
    *z = zz;
    *iz = q * pp;
    *P = pp;
    *iP = q * zz;
    *S = nn * (*iP);
}

/* Stirling's series ln Gamma(z) - ((z - 1/2) ln z - z + ln sqrt(2 pi)) to 1/z^5 (error < 1e-9
 * for z >= 8), and the asymptotic psi(z) = ln z - 1/(2z) - 1/(12 z^2) + 1/(120 z^4) -
 * 1/(252 z^6), from ln z and 1/z. */
static inline __attribute__((always_inline)) float datm_vstirlingf(float z, float lz, float iz)
{
    float iz2 = iz * iz;
    float ser = iz * (0.0833333333f + iz2 * (-0.00277777778f + iz2 * 0.000793650794f));
    return (z - 0.5f) * lz - z + 0.918938533204672742f + ser;
}
static inline __attribute__((always_inline)) float datm_vpsi_asymf(float lz, float iz)
{
    float iz2 = iz * iz;
    return lz - 0.5f * iz - iz2 * (0.0833333333f - iz2 * (0.00833333333f - iz2 * 0.00396825397f));
}

/* ln Gamma(x), x > 0 (datm_vshift8f, then Stirling). */
static inline __attribute__((always_inline)) float datm_vlgammaf(float x)
{
    float z, iz, P, iP, S;
    datm_vshift8f(x, &z, &iz, &P, &iP, &S);
    return datm_vstirlingf(z, datm_vlogf(z), iz) - datm_vlogf(P);
}

/* psi(x), x > 0 (datm_vshift8f, then the asymptotic series). */
static inline __attribute__((always_inline)) float datm_vdigammaf(float x)
{
    float z, iz, P, iP, S;
    datm_vshift8f(x, &z, &iz, &P, &iP, &S);
    return datm_vpsi_asymf(datm_vlogf(z), iz) - S;
}

/* Gamma(x), 0 < x < 34 (e^(Stirling) stays below the clamp of datm_vexpf): e^(Stirling) / P,
 * no ln P. */
static inline __attribute__((always_inline)) float datm_vgammaf(float x)
{
    float z, iz, P, iP, S;
    datm_vshift8f(x, &z, &iz, &P, &iP, &S);
    return datm_vexpf(datm_vstirlingf(z, datm_vlogf(z), iz)) * iP;
}

/* ln Gamma(x) and psi(x) together (one shift, one ln z). */
static inline __attribute__((always_inline)) void datm_vlgamma_digammaf(float x, float *lg,
                                                                        float *dg)
{
    float z, iz, P, iP, S;
    datm_vshift8f(x, &z, &iz, &P, &iP, &S);
    float lz = datm_vlogf(z);
    *lg = datm_vstirlingf(z, lz, iz) - datm_vlogf(P);
    *dg = datm_vpsi_asymf(lz, iz) - S;
}

/* Gamma(x) and psi(x) together, 0 < x < 34. */
static inline __attribute__((always_inline)) void datm_vgamma_digammaf(float x, float *g,
                                                                       float *dg)
{
    float z, iz, P, iP, S;
    datm_vshift8f(x, &z, &iz, &P, &iP, &S);
    float lz = datm_vlogf(z);
    *g = datm_vexpf(datm_vstirlingf(z, lz, iz)) * iP;
    *dg = datm_vpsi_asymf(lz, iz) - S;
}

#endif
