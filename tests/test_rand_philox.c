/* ctest-labels: unit;stat  ctest-timeout: 120  ctest-link: datm_rand */
/* tests/test_rand_philox.c: the Philox4x32-10 generator and stream keying of engine/rand.
 * - the raw block function against Random123's published known-answer vectors;
 * - stream layout: init == init2 with index 0, block counter carry, determinism;
 * - independence of neighbouring streams (KS of first draws, cross-correlations, bit
 *   balance of XORed words) for each key field (seed, purpose, index, index2);
 * - exact extremes of the open-interval uniforms; uniform_fill_f == repeated uniform_f and
 *   uniform_fill == repeated uniform (values and stream position, odd and even offsets);
 * - unbiased bounded integers (32- and 64-bit paths) and shuffles;
 * - a parallel OpenMP sampling kernel keyed by work item: 1 and 2 threads and a serial
 *   run give bit-identical output. */
#include "core/testhooks.h"
#include "rand/rand.h"
#include "rand/rand_internal.h"
#include "test_rand_stat.h"

#include <omp.h>
#include <stdint.h>
#include <string.h>

static void test_kat(void)
{
    /* Random123 tests/kat_vectors, "philox4x32 10": ctr[4] key[2] -> out[4]. */
    static const uint32_t kat[3][10] = {
        { 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
        { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
          0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
        { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
          0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
    };
    for (int t = 0; t < 3; t++) {
        uint32_t out[4];
        datm_philox4x32_10(kat[t], kat[t] + 4, out);
        for (int j = 0; j < 4; j++)
            CHECK(out[j] == kat[t][6 + j], "KAT %d word %d: %08x != %08x", t, j, out[j], kat[t][6 + j]);
    }
    printf("  Philox4x32-10 known-answer vectors checked (3)\n");
}

static void test_layout(void)
{
    datm_rng a, b;
    datm_rng_init(&a, 42, DATM_STREAM_TEST, 7);
    datm_rng_init2(&b, 42, DATM_STREAM_TEST, 0, 7);
    CHECK(memcmp(&a, &b, sizeof a) == 0, "init(s,p,i) != init2(s,p,0,i)");
    /* The stream is philox(ctr = (block, index2), key): first block words in order. */
    uint32_t ctr[4] = { 0, 0, 7, 0 }, out[4];
    datm_philox4x32_10(ctr, a.key, out);
    for (int j = 0; j < 4; j++)
        CHECK(datm_rng_u32(&a) == out[j], "stream word %d is not block 0 word %d", j, j);
    /* ... then blocks 1, 2, ... across refills of DATM_RNG_BLOCKS blocks */
    for (uint32_t blk = 1; blk < 3 * DATM_RNG_BLOCKS; blk++) {
        ctr[0] = blk;
        datm_philox4x32_10(ctr, a.key, out);
        for (int j = 0; j < 4; j++)
            CHECK(datm_rng_u32(&a) == out[j], "block %u word %d out of order", blk, j);
    }
    /* Counter carry from ctr[0] into ctr[1]. */
    datm_rng_init2(&a, 1, DATM_STREAM_TEST, 5, 9);
    a.ctr[0] = 0xffffffffu - 2;
    datm_rng_refill(&a);
    CHECK(a.ctr[0] == DATM_RNG_BLOCKS - 3 && a.ctr[1] == 1, "block counter carry");
    uint32_t cc[4] = { 0, 1, 9, 0 };
    datm_philox4x32_10(cc, a.key, out);
    CHECK(memcmp(a.out + 12, out, sizeof out) == 0, "block after the carry");
    /* The AVX2 and portable block paths give the same words. */
    datm_rng_init2(&a, 3, DATM_STREAM_TEST, 1, 2);
    b = a;
    uint32_t wa[1000], wb[1000];
    datm_test_hooks.rand_scalar = 1;
    for (int i = 0; i < 1000; i++)
        wa[i] = datm_rng_u32(&a);
    datm_test_hooks.rand_scalar = 0;
    for (int i = 0; i < 1000; i++)
        wb[i] = datm_rng_u32(&b);
    CHECK(memcmp(wa, wb, sizeof wa) == 0, "SIMD and portable Philox paths differ");
    /* Many batches at once (datm_philox_batches: four at a time with AVX-512) are the words
     * of refill after refill, across the carry from ctr[0] into ctr[1], on both paths. */
    for (int force = 0; force < 2; force++) {
        datm_test_hooks.rand_scalar = force;
        static uint32_t bw[11 * 4 * DATM_RNG_BLOCKS];
        datm_rng_init2(&a, 4, DATM_STREAM_TEST, 7, 3);
        a.ctr[0] = 0xffffffffu - 5 * DATM_RNG_BLOCKS - 3;
        b = a;
        datm_philox_batches(a.key, (uint64_t)a.ctr[0] | ((uint64_t)a.ctr[1] << 32), a.ctr[2],
                            a.ctr[3], 11, bw);
        int same = 1;
        for (int q = 0; q < 11; q++) {
            datm_rng_refill(&b);
            same &= memcmp(bw + q * 4 * DATM_RNG_BLOCKS, b.out, sizeof b.out) == 0;
        }
        CHECK(same, "datm_philox_batches (%s) differs from refills", force ? "portable" : "SIMD");
    }
    datm_test_hooks.rand_scalar = 0;
    /* Determinism and sensitivity to every key field. */
    datm_rng base, v;
    datm_rng_init2(&base, 123, DATM_STREAM_DOC, 4, 5);
    uint64_t w0 = datm_rng_u64(&base);
    datm_rng_init2(&v, 123, DATM_STREAM_DOC, 4, 5);
    CHECK(datm_rng_u64(&v) == w0, "same key gives a different stream");
    datm_rng_init2(&v, 124, DATM_STREAM_DOC, 4, 5);
    CHECK(datm_rng_u64(&v) != w0, "seed ignored");
    datm_rng_init2(&v, 123, DATM_STREAM_EVAL, 4, 5);
    CHECK(datm_rng_u64(&v) != w0, "purpose ignored");
    datm_rng_init2(&v, 123, DATM_STREAM_DOC, 4ull << 32, 5);
    CHECK(datm_rng_u64(&v) != w0, "index high word ignored");
    datm_rng_init2(&v, 123, DATM_STREAM_DOC, 4, 5ull << 32);
    CHECK(datm_rng_u64(&v) != w0, "index2 high word ignored");
    datm_rng_init2(&v, 123, DATM_STREAM_DOC, 5, 4);
    CHECK(datm_rng_u64(&v) != w0, "index and index2 interchangeable");
    /* A copied state continues identically (fork / checkpoint by value). */
    datm_rng c = base;
    for (int i = 0; i < 10; i++)
        CHECK(datm_rng_u32(&c) == datm_rng_u32(&base), "copied state diverges");
}

/* Stream family: 0 varies seed, 1 purpose, 2 index, 3 index2. */
static void stream_of(datm_rng *r, int field, uint64_t s)
{
    switch (field) {
    case 0: datm_rng_init2(r, 1000 + s, DATM_STREAM_TEST, 3, 3); break;
    case 1: datm_rng_init2(r, 99, DATM_STREAM_USER + (uint32_t)s, 3, 3); break;
    case 2: datm_rng_init2(r, 99, DATM_STREAM_TEST, s, 3); break;
    default: datm_rng_init2(r, 99, DATM_STREAM_TEST, 3, s); break;
    }
}

static double cdf_uniform(double x, const void *ctx)
{
    (void)ctx;
    return x <= 0 ? 0 : (x >= 1 ? 1 : x);
}

static void test_independence(void)
{
    enum { S = 4096, T = 64 };
    static const char *names[4] = { "seed", "purpose", "index", "index2" };
    static double u[S][T];
    static double first[S];
    for (int field = 0; field < 4; field++) {
        for (int s = 0; s < S; s++) {
            datm_rng r;
            stream_of(&r, field, (uint64_t)s);
            for (int t = 0; t < T; t++)
                u[s][t] = datm_rng_uniform(&r);
            first[s] = u[s][0];
        }
        /* first draws of consecutive streams are uniform */
        double d, p = stat_ks(first, S, cdf_uniform, NULL, &d);
        CHECK(p > STAT_PMIN, "%s: KS of first draws p = %.3g", names[field], p);
        /* correlation of neighbouring streams at equal positions and lag 1 */
        double c0 = 0, c1 = 0;
        for (int s = 0; s + 1 < S; s++)
            for (int t = 0; t < T; t++) {
                c0 += (u[s][t] - 0.5) * (u[s + 1][t] - 0.5);
                if (t + 1 < T)
                    c1 += (u[s][t] - 0.5) * (u[s + 1][t + 1] - 0.5);
            }
        /* each product has variance (1/12)^2; normalise to a correlation */
        double n0 = (double)(S - 1) * T, n1 = (double)(S - 1) * (T - 1);
        double z0 = c0 / (n0 / 12.0) * sqrt(n0), z1 = c1 / (n1 / 12.0) * sqrt(n1);
        CHECK(fabs(z0) < STAT_Z && fabs(z1) < STAT_Z, "%s: neighbour correlation z = %.2f, %.2f",
              names[field], z0, z1);
        /* bits of XOR of first words of neighbouring streams are fair coins */
        double ones[32] = { 0 };
        for (int s = 0; s + 1 < S; s++) {
            datm_rng a, b;
            stream_of(&a, field, (uint64_t)s);
            stream_of(&b, field, (uint64_t)s + 1);
            uint32_t x = datm_rng_u32(&a) ^ datm_rng_u32(&b);
            for (int k = 0; k < 32; k++)
                ones[k] += (x >> k) & 1u;
        }
        double chi = 0;
        for (int k = 0; k < 32; k++) {
            double e = (S - 1) / 2.0;
            chi += (ones[k] - e) * (ones[k] - e) / (e / 2.0); /* binomial variance n/4 */
        }
        double pb = stat_chi2_pvalue(chi, 32);
        CHECK(pb > STAT_PMIN, "%s: XOR bit balance chi2 = %.3g p = %.3g", names[field], chi, pb);
        printf("  streams by %-7s KS p %.3g, corr z %.2f / %.2f, xor-bit p %.3g\n", names[field], p,
               z0, z1, pb);
    }
}

static void test_uniform_extremes(void)
{
    datm_rng r;
    memset(&r, 0, sizeof r);
    r.left = 4 * DATM_RNG_BLOCKS;
    r.out[0] = r.out[1] = 0;
    r.out[2] = r.out[3] = 0xffffffffu;
    double lo = datm_rng_uniform(&r), hi = datm_rng_uniform(&r);
    CHECK(lo == 0x1p-53 && hi == 1.0 - 0x1p-53 && lo > 0.0 && hi < 1.0,
          "uniform extremes %.17g %.17g", lo, hi);
    r.left = 4 * DATM_RNG_BLOCKS;
    r.out[0] = 0;
    r.out[1] = 0xffffffffu;
    float flo = datm_rng_uniform_f(&r), fhi = datm_rng_uniform_f(&r);
    CHECK(flo == 0x1p-24f && fhi == 1.0f - 0x1p-24f && flo > 0.0f && fhi < 1.0f,
          "uniform_f extremes %.9g %.9g", flo, fhi);
    /* and in practice */
    datm_rng_init(&r, 5, DATM_STREAM_TEST, 0);
    int bad = 0;
    for (int i = 0; i < 2000000; i++) {
        double x = datm_rng_uniform(&r);
        float f = datm_rng_uniform_f(&r);
        bad += !(x > 0.0 && x < 1.0) + !(f > 0.0f && f < 1.0f);
    }
    CHECK(bad == 0, "%d uniforms outside (0,1)", bad);
}

static void test_uniform_fill(void)
{
    enum { N = 1000 };
    static float a[N], b[N];
    /* several start offsets inside a block and lengths around the batch size */
    static const int lens[] = { 0, 1, 3, 4, 5, 31, 32, 33, 64, 100, 999 };
    static const int offs[] = { 0, 1, 3, 4, 17, 31, 32, 33 };
    for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            int off = offs[oi];
            datm_rng r1, r2;
            datm_rng_init(&r1, 77, DATM_STREAM_TEST, (uint64_t)off);
            for (int i = 0; i < off; i++)
                (void)datm_rng_u32(&r1);
            r2 = r1;
            int n = lens[li];
            datm_rng_uniform_fill_f(&r1, a, (size_t)n);
            for (int i = 0; i < n; i++)
                b[i] = datm_rng_uniform_f(&r2);
            CHECK(memcmp(a, b, (size_t)n * sizeof(float)) == 0, "fill differs (off %d, n %d)", off, n);
            CHECK(datm_rng_u32(&r1) == datm_rng_u32(&r2), "fill leaves another state (off %d, n %d)",
                  off, n);
        }
    /* fill across the 32-bit block counter boundary */
    datm_rng r1, r2;
    datm_rng_init(&r1, 78, DATM_STREAM_TEST, 0);
    r1.ctr[0] = 0xfffffff0u;
    r2 = r1;
    datm_rng_uniform_fill_f(&r1, a, N);
    for (int i = 0; i < N; i++)
        b[i] = datm_rng_uniform_f(&r2);
    CHECK(memcmp(a, b, sizeof a) == 0 && r1.ctr[1] == 1 && r2.ctr[1] == 1, "fill across counter carry");
    /* moments and KS of the fill */
    enum { M = 1000000 };
    float *f = malloc(M * sizeof(float));
    double *x = malloc(M * sizeof(double));
    datm_rng_init(&r1, 79, DATM_STREAM_TEST, 0);
    datm_rng_uniform_fill_f(&r1, f, M);
    for (int i = 0; i < M; i++)
        x[i] = f[i];
    stat_moments("uniform_fill_f U(0,1)", x, M, 0.5, 1.0 / 12.0);
    double d, p = stat_ks(x, M, cdf_uniform, NULL, &d);
    CHECK(p > STAT_PMIN, "uniform_fill_f KS p = %.3g", p);
    free(f);
    free(x);
}

/* datm_rng_uniform_fill (double): the same values and stream position as repeated
 * datm_rng_uniform, from even and odd word offsets (a u64 straddling two buffers). */
static void test_uniform_fill_double(void)
{
    enum { N = 3000 };
    static double a[N], b[N];
    static const int lens[] = { 0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 999, 2999 };
    static const int offs[] = { 0, 1, 2, 3, 17, 30, 31, 32, 33 };
    for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            int off = offs[oi];
            datm_rng r1, r2;
            datm_rng_init(&r1, 91, DATM_STREAM_TEST, (uint64_t)off);
            for (int i = 0; i < off; i++)
                (void)datm_rng_u32(&r1);
            r2 = r1;
            int n = lens[li];
            datm_rng_uniform_fill(&r1, a, (size_t)n);
            for (int i = 0; i < n; i++)
                b[i] = datm_rng_uniform(&r2);
            CHECK(memcmp(a, b, (size_t)n * sizeof(double)) == 0, "double fill differs (off %d, n %d)", off, n);
            int same = 1;
            for (int k = 0; k < 40; k++) same &= datm_rng_u32(&r1) == datm_rng_u32(&r2);
            CHECK(same && r1.ctr[0] == r2.ctr[0] && r1.left == r2.left,
                  "double fill leaves another state (off %d, n %d)", off, n);
        }
}

static void test_below_shuffle(void)
{
    datm_rng r;
    datm_rng_init(&r, 11, DATM_STREAM_TEST, 1);
    /* 32-bit path: n = 7 */
    double obs[7] = { 0 }, ex[7];
    enum { N = 700000 };
    for (int i = 0; i < N; i++) {
        uint64_t k = datm_rng_below(&r, 7);
        CHECK(k < 7, "below(7) = %llu", (unsigned long long)k);
        if (k < 7)
            obs[k]++;
    }
    for (int i = 0; i < 7; i++)
        ex[i] = N / 7.0;
    double p = stat_chi2(obs, ex, 7, NULL);
    CHECK(p > STAT_PMIN, "below(7) chi2 p = %.3g", p);
    /* a large 32-bit n where a biased modulo would show: n = 3 * 2^30 */
    double o3[3] = { 0 }, e3[3] = { N / 3.0, N / 3.0, N / 3.0 };
    for (int i = 0; i < N; i++)
        o3[datm_rng_below(&r, 3u << 30) >> 30]++;
    p = stat_chi2(o3, e3, 3, NULL);
    CHECK(p > STAT_PMIN, "below(3*2^30) chi2 p = %.3g", p);
    /* 64-bit path: n = 3 * 2^62, thirds by the top bits */
    double o64[3] = { 0 };
    for (int i = 0; i < N; i++) {
        uint64_t k = datm_rng_below(&r, 3ull << 62);
        CHECK(k < (3ull << 62), "below 64 out of range");
        o64[k >> 62]++;
    }
    p = stat_chi2(o64, e3, 3, NULL);
    CHECK(p > STAT_PMIN, "below(3*2^62) chi2 p = %.3g", p);
    CHECK(datm_rng_below(&r, 1) == 0, "below(1)");
    printf("  below(): 32- and 64-bit paths uniform\n");

    /* shuffles: permutations, each element's final position uniform */
    enum { K = 10, R = 200000 };
    double pos[K][K];
    memset(pos, 0, sizeof pos);
    int64_t idx[K];
    for (int rep = 0; rep < R; rep++) {
        for (int i = 0; i < K; i++)
            idx[i] = i;
        datm_rng_shuffle_i64(&r, idx, K);
        int seen = 0;
        for (int i = 0; i < K; i++) {
            seen |= 1 << idx[i];
            pos[idx[i]][i]++;
        }
        if (seen != (1 << K) - 1) {
            CHECK(0, "shuffle is not a permutation");
            break;
        }
    }
    double eK[K];
    for (int i = 0; i < K; i++)
        eK[i] = (double)R / K;
    for (int e = 0; e < K; e++) {
        p = stat_chi2(pos[e], eK, K, NULL);
        CHECK(p > STAT_PMIN / K, "shuffle: element %d position chi2 p = %.3g", e, p);
    }
}

/* ---- OpenMP: parallel work keyed by work item ---- */

enum { KD = 20000, KW = 8 };

/* One work item (a "document"): a mix of samplers with item-dependent parameters. */
static void kernel_item(uint64_t seed, int64_t d, double *out) /* out: (KW) */
{
    datm_rng r;
    datm_rng_init2(&r, seed, DATM_STREAM_DOC, 3, (uint64_t)d);
    double shape = 0.001 + (double)(d % 97) * 0.11;
    out[0] = datm_rng_gamma(&r, shape);
    out[1] = (double)datm_rng_crt(&r, d % 300, 0.05 + (double)(d % 13));
    out[2] = (double)datm_rng_poisson(&r, (double)(d % 50) * 0.7);
    out[3] = datm_rng_normal(&r);
    out[4] = datm_rng_weibull(&r, 0.5 + (double)(d % 7), 1.3);
    out[5] = datm_rng_beta(&r, shape, 1.0 + shape);
    double cs[5] = { 1, 1.5, 4, 4, 9 };
    out[6] = datm_rng_categorical_cumsum(&r, cs, 5);
    float f[3];
    datm_rng_uniform_fill_f(&r, f, 3);
    out[7] = (double)f[0] + f[1] + f[2];
}

static void run_kernel(int threads, double *out)
{
    omp_set_num_threads(threads);
#pragma omp parallel for schedule(dynamic, 7)
    for (int64_t d = 0; d < KD; d++)
        kernel_item(2024, d, out + d * KW);
}

static void test_openmp(void)
{
    double *ser = malloc(sizeof(double) * KD * KW), *t1 = malloc(sizeof(double) * KD * KW),
           *t2 = malloc(sizeof(double) * KD * KW);
    for (int64_t d = 0; d < KD; d++)
        kernel_item(2024, d, ser + d * KW);
    run_kernel(1, t1);
    run_kernel(2, t2);
    int nt = 0;
#pragma omp parallel
    {
#pragma omp single
        nt = omp_get_num_threads();
    }
    CHECK(memcmp(ser, t1, sizeof(double) * KD * KW) == 0, "1 thread differs from serial");
    CHECK(memcmp(t1, t2, sizeof(double) * KD * KW) == 0, "2 threads differ from 1 thread");
    printf("  OpenMP kernel (%d items x %d draws): serial, 1 and 2 threads bit-identical (team %d)\n",
           KD, KW, nt);
    free(ser);
    free(t1);
    free(t2);
}

int main(void)
{
    printf("test_rand_philox\n");
    test_kat();
    test_layout();
    test_independence();
    test_uniform_extremes();
    test_uniform_fill();
    test_uniform_fill_double();
    test_below_shuffle();
    test_openmp();
    printf(fails ? "FAILED: %d checks\n" : "all checks passed\n", fails);
    return fails ? 1 : 0;
}
