/* engine/decoder/augment.c: upward count augmentation of the gamma belief network
 * (paper eq. DLDA; docs/reference.md 1.8) and the statistics it accumulates.
 *
 * Layer 1: every count x_vn is split over topics by one categorical draw per token with
 * P(k) proportional to phi_vk theta_kn, giving A(1) (V, K1) and m(1) (N, K1).
 * Layer t >= 2: m(t-1)_k'n customers sit at CRT(m, omega) tables with omega =
 * (Phi(t) theta(t))_k'n, the gamma shape of theta(t-1)_k'n; the tables are split like
 * tokens, giving A(t) and m(t). Top layer: CRT(m(L)_kn, r_k) tables feed the r update.
 * The expected form replaces the split counts put into A by phi_vk theta_kn x_vn / rate_vn
 * (layer 1) and phi theta (psi(m + omega) - psi(omega)) (layers >= 2). */
#include <omp.h>
#include <string.h>

#include "decoder/gbn_internal.h"
#include "core/testhooks.h"
#include "math/math.h"

/* ---------------------------------------------------------------- statistics */

int datm_gbn_stats_create(const datm_gbn *g, datm_gbn_stats **out, datm_error *err)
{
    *out = NULL;
    datm_gbn_stats *s = datm_alloc(sizeof *s, err);
    if (!s) return err->code;
    s->L = g->L;
    int64_t off = 0;
    for (int l = 0; l <= g->L; l++) s->K[l] = g->K[l];
    for (int l = 1; l <= g->L; l++) {
        s->fx_off[l] = off;
        off += g->K[l - 1] * g->K[l];
        s->A[l] = datm_alloc_array((size_t)(g->K[l - 1] * g->K[l]), sizeof(double), err);
        if (!s->A[l]) { datm_gbn_stats_destroy(&s); return err->code; }
    }
    s->fx_off[g->L + 1] = off;
    off += g->K[g->L];
    s->fx_len = off;
    s->tables = datm_alloc_array((size_t)g->K[g->L], sizeof(double), err);
    s->n_threads = omp_get_max_threads();
    if (s->n_threads < 1) s->n_threads = 1;
    s->fx = s->tables ? datm_alloc_array((size_t)(s->n_threads * s->fx_len), sizeof(int64_t), err)
                      : NULL;
    if (!s->fx) { datm_gbn_stats_destroy(&s); return err->code; }
    *out = s;
    return DATM_OK;
}

void datm_gbn_stats_destroy(datm_gbn_stats **ps)
{
    if (!ps || !*ps) return;
    datm_gbn_stats *s = *ps;
    for (int l = 1; l <= s->L; l++) datm_free(s->A[l]);
    datm_free(s->tables);
    datm_free(s->fx);
    datm_free(s->trk);
    datm_free(s->trk_n);
    datm_free(s);
    *ps = NULL;
}

int datm_gbn_stats_track(datm_gbn_stats *s, datm_error *err)
{
    if (s->trk) return DATM_OK;
    s->trk = datm_alloc_array((size_t)(s->n_threads * s->fx_len), sizeof(int64_t), err);
    s->trk_n = s->trk ? datm_alloc_array((size_t)s->n_threads, sizeof(int64_t), err) : NULL;
    if (!s->trk_n) {
        datm_free(s->trk);
        s->trk = NULL;
        return DATM_E_NOMEM;
    }
    s->trk_lost = 1;   /* what the accumulators hold now was not listed */
    return DATM_OK;
}

/* The listed entries describe every nonzero count (else the dense ways are taken). */
static int listed(const datm_gbn_stats *s)
{
    return s->trk && !s->trk_lost && s->trk_n[0] >= 0;
}

void datm_gbn_stats_reset(datm_gbn_stats *s)
{
    const int T = s->n_threads;
    if (listed(s)) {
        /* the listed entries of A(1), then layers >= 2 and the tables densely */
        const int64_t tail = s->fx_off[2];
        for (int t = 0; t < T; t++) {
            int64_t *fx = s->fx + (int64_t)t * s->fx_len;
            const int64_t *idx = s->trk + (int64_t)t * s->fx_len;
            for (int64_t j = 0; j < s->trk_n[t]; j++) fx[idx[j]] = 0;
            memset(fx + tail, 0, (size_t)(s->fx_len - tail) * sizeof(int64_t));
        }
    } else {
        /* one accumulator per thread (2 MB each at V = 2000, K1 = 128), each cleared by a
         * thread of its own rather than all of them by one */
#pragma omp parallel for num_threads(T) schedule(static) if (T > 1 && !omp_in_parallel())
        for (int t = 0; t < T; t++)
            memset(s->fx + (int64_t)t * s->fx_len, 0, (size_t)s->fx_len * sizeof(int64_t));
    }
    if (s->trk) {
        memset(s->trk_n, 0, (size_t)T * sizeof(int64_t));
        s->trk_lost = 0;
        s->trk_tail = 0;
    }
    s->q_sum = 0.0;
    s->n_passes = 0;
    s->dirty = 1;
}

void datm_gbn_stats_reduce(datm_gbn_stats *s)
{
    if (!s->dirty) return;
    int64_t n = s->fx_len;
    int T = s->n_threads;
    const int64_t *fx = s->fx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        int64_t acc = 0;
        for (int t = 0; t < T; t++) acc += fx[(int64_t)t * n + i];
        double v = (double)acc / DATM_GBN_FX_SCALE;
        int l = 1;
        while (l <= s->L && i >= s->fx_off[l + 1]) l++;
        if (l <= s->L) s->A[l][i - s->fx_off[l]] = v;
        else s->tables[i - s->fx_off[s->L + 1]] = v;
    }
    s->dirty = 0;
}

/* Entries [i0, i1) of the accumulators added into thread 0's, the others cleared. */
static void fold_dense(datm_gbn_stats *s, int64_t i0, int64_t i1)
{
    const int64_t n = s->fx_len;
    const int T = s->n_threads;
    int64_t *fx = s->fx;
    if (T == 1) return;
#pragma omp parallel for schedule(static)
    for (int64_t i = i0; i < i1; i++) {
        int64_t acc = fx[i];
        for (int t = 1; t < T; t++) {
            acc += fx[(int64_t)t * n + i];
            fx[(int64_t)t * n + i] = 0;
        }
        fx[i] = acc;
    }
}

/* The listed fold: each other thread's listed entries of A(1) into thread 0's (listing
 * those that were 0 there), layers >= 2 and the tables densely, whose nonzero entries
 * thread 0's list then gets too. Integer sums: the same values as fold_dense. */
static void fold_listed(datm_gbn_stats *s)
{
    const int64_t n = s->fx_len, tail = s->fx_off[2];
    int64_t *fx = s->fx, *idx0 = s->trk;
    for (int t = 1; t < s->n_threads; t++) {
        int64_t *ft = fx + (int64_t)t * n;
        const int64_t *idx = s->trk + (int64_t)t * n;
        for (int64_t j = 0; j < s->trk_n[t]; j++) {
            const int64_t i = idx[j];
            if (fx[i] == 0) idx0[s->trk_n[0]++] = i;
            fx[i] += ft[i];
            ft[i] = 0;
        }
        s->trk_n[t] = 0;
    }
    fold_dense(s, tail, n);
    for (int64_t i = tail; i < n; i++)
        if (fx[i] != 0) idx0[s->trk_n[0]++] = i;
    s->trk_tail = 1;
}

int64_t *datm_gbn_stats_fold(datm_gbn_stats *s)
{
    int64_t *idx, *n;
    int64_t *fx = datm_gbn_stats_fold_listed(s, &idx, &n);
    if (n) *n = -1;   /* the caller may add counts (another process's) that no list records */
    return fx;
}

int64_t *datm_gbn_stats_fold_listed(datm_gbn_stats *s, int64_t **idx, int64_t **n)
{
    if (s->trk && s->trk_tail) s->trk_lost = 1;   /* a second fold would list the tail twice */
    *idx = NULL;
    *n = NULL;
    if (listed(s)) {
        fold_listed(s);
        *idx = s->trk;
        *n = &s->trk_n[0];
    } else {
        fold_dense(s, 0, s->fx_len);
        if (s->trk) s->trk_n[0] = -1;
    }
    s->dirty = 1;
    return s->fx;
}

/* ---------------------------------------------------------------- one document */

/* cum[0..K) = running sums of w_k = a[k] * b[k]; returns the total. */
static double cum_product(const double *a, const double *b, int64_t K, double *cum)
{
    double s = 0.0;
    for (int64_t k = 0; k < K; k++) {
        s += a[k] * b[k];
        cum[k] = s;
    }
    return s;
}

/* Same with a float first factor (layer 1 reads Phi(1) as float: half the memory traffic of
 * the V x K1 rows that dominate the pass; sums stay in double). */
static double cum_product_f(const float *a, const double *b, int64_t K, double *cum)
{
    double s = 0.0;
    for (int64_t k = 0; k < K; k++) {
        s += (double)a[k] * b[k];
        cum[k] = s;
    }
    return s;
}

/* cum_product_f of four rows at once. Each running sum is the same sequential chain as in
 * cum_product_f (bit-identical results), but four independent chains hide the latency of
 * the additions that bounds the one-row loop (~3x the throughput at K1 = 128). */
static void cum_product_f4(const float *const a[4], const double *b, int64_t K,
                           double *const cum[4], double s[4])
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    double *c0 = cum[0], *c1 = cum[1], *c2 = cum[2], *c3 = cum[3];
    for (int64_t k = 0; k < K; k++) {
        const double bk = b[k];
        s0 += (double)a0[k] * bk;
        s1 += (double)a1[k] * bk;
        s2 += (double)a2[k] * bk;
        s3 += (double)a3[k] * bk;
        c0[k] = s0;
        c1[k] = s1;
        c2[k] = s2;
        c3[k] = s3;
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AUG_HAVE_AVX2 1
/* cum_product_f4 of eight rows (two sets of four, one row per double lane): each lane is the
 * same chain s += (double)a[k] * b[k] in increasing k as cum_product_f (exact conversion,
 * the same rounded product and sum: bit-identical), four k at a time with 4 x 4 transposes
 * in and out; two independent sets hide the latency of the additions. */
__attribute__((target("avx2")))
static void cum_product_f8_avx2(const float *const a[8], const double *b, int64_t K,
                                double *const cum[8], double s[8])
{
    __m256d sv[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        const __m256d b0 = _mm256_broadcast_sd(b + k), b1 = _mm256_broadcast_sd(b + k + 1);
        const __m256d b2 = _mm256_broadcast_sd(b + k + 2), b3 = _mm256_broadcast_sd(b + k + 3);
        for (int h = 0; h < 2; h++) {
            __m128 r0 = _mm_loadu_ps(a[4 * h] + k), r1 = _mm_loadu_ps(a[4 * h + 1] + k);
            __m128 r2 = _mm_loadu_ps(a[4 * h + 2] + k), r3 = _mm_loadu_ps(a[4 * h + 3] + k);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);   /* r_j = (row 0..3) at k + j */
            __m256d o0 = _mm256_add_pd(sv[h], _mm256_mul_pd(_mm256_cvtps_pd(r0), b0));
            __m256d o1 = _mm256_add_pd(o0, _mm256_mul_pd(_mm256_cvtps_pd(r1), b1));
            __m256d o2 = _mm256_add_pd(o1, _mm256_mul_pd(_mm256_cvtps_pd(r2), b2));
            __m256d o3 = _mm256_add_pd(o2, _mm256_mul_pd(_mm256_cvtps_pd(r3), b3));
            sv[h] = o3;
            /* back to rows: row i gets (o0[i], o1[i], o2[i], o3[i]) */
            __m256d t0 = _mm256_unpacklo_pd(o0, o1), t1 = _mm256_unpackhi_pd(o0, o1);
            __m256d t2 = _mm256_unpacklo_pd(o2, o3), t3 = _mm256_unpackhi_pd(o2, o3);
            _mm256_storeu_pd(cum[4 * h] + k, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(cum[4 * h + 1] + k, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(cum[4 * h + 2] + k, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(cum[4 * h + 3] + k, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
    }
    _mm256_storeu_pd(s, sv[0]);
    _mm256_storeu_pd(s + 4, sv[1]);
    for (; k < K; k++)
        for (int i = 0; i < 8; i++) {
            s[i] += (double)a[i][k] * b[k];
            cum[i][k] = s[i];
        }
}
#endif

/* cum_product of four rows at once: four independent chains, each the same sequence of
 * operations as cum_product (bit-identical), for the layers >= 2 whose one-row loop is bound
 * by the latency of its additions. */
static void cum_product4(const double *const a[4], const double *b, int64_t K,
                         double *const cum[4], double s[4])
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    double *c0 = cum[0], *c1 = cum[1], *c2 = cum[2], *c3 = cum[3];
    for (int64_t k = 0; k < K; k++) {
        const double bk = b[k];
        s0 += a0[k] * bk;
        s1 += a1[k] * bk;
        s2 += a2[k] * bk;
        s3 += a3[k] * bk;
        c0[k] = s0;
        c1[k] = s1;
        c2[k] = s2;
        c3[k] = s3;
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
    s[3] = s3;
}

/* Adds one sampled count at each of base[idx[0..n)]. The layer-1 rows of the accumulator
 * (V x K1 int64, 2 MB at V = 2000, K1 = 128) are mostly out of the private caches: the
 * additions are collected and applied here with the lines a few additions ahead prefetched,
 * instead of one cache miss per token in the middle of the draws. Integer sums: the order
 * does not change them. */
static void flush_counts(int64_t *base, const int64_t *idx, int n, datm_gbn_list *trk)
{
    enum { PF = 12 };
    for (int i = 0; i < n && i < PF; i++) __builtin_prefetch(base + idx[i], 1, 3);
    if (trk) {   /* also list the entries made nonzero (datm_gbn_stats_track) */
        for (int i = 0; i < n; i++) {
            if (i + PF < n) __builtin_prefetch(base + idx[i + PF], 1, 3);
            int64_t *p = base + idx[i];
            if (*p == 0) trk->idx[trk->n++] = trk->off + idx[i];
            *p += (int64_t)DATM_GBN_FX_SCALE;
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i + PF < n) __builtin_prefetch(base + idx[i + PF], 1, 3);
        base[idx[i]] += (int64_t)DATM_GBN_FX_SCALE;
    }
}

/* A layer-1 token of word row `row` (= v K1) drawn to topic k: counted in m(1) and, for
 * sampled counts (queue), queued for the accumulator acc1 of A(1) (flushed when full). */
static inline void layer1_token(int k, int64_t row, int32_t *m1, int queue, int64_t *acc1,
                                int64_t *defer, int *nd, datm_gbn_list *trk)
{
    m1[k]++;
    if (!queue) return;
    if (*nd == DATM_GBN_DEFER) {
        flush_counts(acc1, defer, *nd, trk);
        *nd = 0;
    }
    defer[(*nd)++] = row + k;
}

/* The draw of datm_rng_categorical_cumsum (same uniform, same result: the smallest i with
 * t < cum[i], k - 1 when there is none) by a branchless search: the binary search's
 * branches are unpredictable and were ~9% of a sweep. cum (k) must be non-decreasing. */
static inline int categorical_cum(datm_rng *r, const double *cum, int k)
{
    const double t = datm_rng_uniform(r) * cum[k - 1];
    const double *base = cum;
    int n = k - 1;   /* search cum[0..k-1); none below t -> k - 1 */
    if (n <= 0) return 0;
    while (n > 1) {
        const int half = n >> 1;
        base = !(t < base[half]) ? base + half : base;
        n -= half;
    }
    return (int)(base - cum) + !(t < base[0]);
}

/* Largest k drawn by categorical_cum_blocks_n (its block ends live on the stack), and the
 * draws it makes per call. */
enum { AUG_BLOCKS_MAX_K = 8 * 256, AUG_BLOCKS_CHUNK = 256 };

#ifdef AUG_HAVE_AVX2
/* categorical_cum by counting: for non-decreasing cum, the smallest i < k - 1 with
 * t < cum[i] (k - 1 when there is none) is min(#{i < k : !(t < cum[i])}, k - 1), the same
 * index from the same uniform. k % 4 == 0: four compares per instruction, no dependent
 * chain of loads (the binary search's seven were most of its time at k = 128). */
__attribute__((target("avx2")))
static int categorical_cum_count4(datm_rng *r, const double *cum, int k)
{
    const double t = datm_rng_uniform(r) * cum[k - 1];
    const __m256d tv = _mm256_set1_pd(t);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0;
    int i = 0;
    for (; i + 8 <= k; i += 8) {   /* a true compare is all ones: subtracting counts it */
        c0 = _mm256_sub_epi64(c0, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(cum + i), _CMP_NLT_UQ)));
        c1 = _mm256_sub_epi64(c1, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(cum + i + 4), _CMP_NLT_UQ)));
    }
    if (i < k)
        c0 = _mm256_sub_epi64(c0, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(cum + i), _CMP_NLT_UQ)));
    c0 = _mm256_add_epi64(c0, c1);
    __m128i h = _mm_add_epi64(_mm256_castsi256_si128(c0), _mm256_extracti128_si256(c0, 1));
    const int n = (int)(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1));
    return n < k - 1 ? n : k - 1;
}

/* ends[b] = cum[8b + 7] for the k / 8 blocks of eight (k % 8 == 0), for cum_blocks_index. */
static void block_ends(const double *cum, int k, double *ends)
{
    for (int b = 0; b < k / 8; b++) ends[b] = cum[8 * b + 7];
}

/* The index categorical_cum_count4 draws for the scaled uniform t, in two steps, for
 * k % 8 == 0 and ends from block_ends: the number of
 * entries !(t < cum[i]) is 8 nb + (the count within block nb), where nb counts the blocks
 * whose last entry is !(t < end). For non-decreasing cum every block before nb lies wholly
 * below t and every block after it wholly above, so this is the same index from the same
 * uniform (bit-identical draws) with k / 8 + 8 compares instead of k: at K1 = 128, 6 vector
 * compares instead of 32. On MNIST (~26,000 tokens per image) the per-token draws were ~45%
 * of an sDATM epoch. */
__attribute__((target("avx2"), always_inline))
static inline int cum_blocks_index(double t, const double *cum, const double *ends, int k)
{
    const __m256d tv = _mm256_set1_pd(t);
    const int nb_all = k / 8;
    __m256i c0 = _mm256_setzero_si256(), c1 = c0;
    int b = 0;
    for (; b + 8 <= nb_all; b += 8) {
        c0 = _mm256_sub_epi64(c0, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(ends + b), _CMP_NLT_UQ)));
        c1 = _mm256_sub_epi64(c1, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(ends + b + 4), _CMP_NLT_UQ)));
    }
    if (b + 4 <= nb_all) {
        c0 = _mm256_sub_epi64(c0, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(ends + b), _CMP_NLT_UQ)));
        b += 4;
    }
    c0 = _mm256_add_epi64(c0, c1);
    __m128i h = _mm_add_epi64(_mm256_castsi256_si128(c0), _mm256_extracti128_si256(c0, 1));
    int nb = (int)(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1));
    for (; b < nb_all; b++) nb += !(t < ends[b]);
    if (nb >= nb_all) return k - 1;   /* t at or past the total: the last index, as count4 */
    const double *blk = cum + 8 * nb;
    __m256i d = _mm256_sub_epi64(
        _mm256_setzero_si256(),
        _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(blk), _CMP_NLT_UQ)));
    d = _mm256_sub_epi64(d, _mm256_castpd_si256(_mm256_cmp_pd(tv, _mm256_loadu_pd(blk + 4), _CMP_NLT_UQ)));
    h = _mm_add_epi64(_mm256_castsi256_si128(d), _mm256_extracti128_si256(d, 1));
    const int n = 8 * nb + (int)(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1));
    return n < k - 1 ? n : k - 1;
}

/* n draws of categorical_cum_count4 (same uniforms in the same order, same indices) by the
 * block search, into out[0..n): one call per word rather than per token, so the draws of a
 * word overlap in the pipeline instead of each waiting for a call and its return. */
__attribute__((target("avx2")))
static void categorical_cum_blocks_n(datm_rng *r, const double *cum, const double *ends, int k,
                                     int n, int *out)
{
    /* the uniforms first, in bulk (the same values; whole Philox batches for long words) */
    double u[AUG_BLOCKS_CHUNK];
    datm_rng_uniform_fill(r, u, (size_t)n);
    const double total = cum[k - 1];
    for (int i = 0; i < n; i++) out[i] = cum_blocks_index(u[i] * total, cum, ends, k);
}
#else
static int categorical_cum_count4(datm_rng *r, const double *cum, int k)
{
    return categorical_cum(r, cum, k);   /* not used: use_avx2 is 0 */
}
static void block_ends(const double *cum, int k, double *ends)
{
    (void)cum, (void)k, (void)ends;
}
static void categorical_cum_blocks_n(datm_rng *r, const double *cum, const double *ends, int k,
                                     int n, int *out)
{
    (void)ends;
    for (int i = 0; i < n; i++) out[i] = categorical_cum(r, cum, k);   /* not used: use_avx2 is 0 */
}
#endif

static double cum_fallback_f(const float *a, int64_t K, double *cum)
{
    double s = 0.0;
    for (int64_t k = 0; k < K; k++) {
        s += a[k];
        cum[k] = s;
    }
    if (s > 0 && isfinite(s)) return s;
    for (int64_t k = 0; k < K; k++) cum[k] = (double)(k + 1);
    return (double)K;
}

/* Fallback weights when phi theta vanishes (theta underflowed): phi's row, else uniform. */
static double cum_fallback(const double *a, int64_t K, double *cum)
{
    double s = 0.0;
    for (int64_t k = 0; k < K; k++) {
        s += a[k];
        cum[k] = s;
    }
    if (s > 0 && isfinite(s)) return s;
    for (int64_t k = 0; k < K; k++) cum[k] = (double)(k + 1);
    return (double)K;
}

double datm_gbn_upward_doc(const datm_gbn *g, const int32_t *cols, const float *vals,
                           int64_t nnz, const double *const *theta_n, int32_t *const *m_n,
                           int64_t *fx, const int64_t *fx_off, int expected, int want_ll,
                           datm_rng *rng, double *work, datm_gbn_list *trk)
{
    double *cum = work;
    const int L = g->L;
    double ll = 0.0;
    /* deferred layer-1 count additions (sampled counts), after the running sums */
    int64_t mxk = 1;
    for (int l = 1; l <= L; l++) mxk = g->K[l] > mxk ? g->K[l] : mxk;
    int64_t *defer = (int64_t *)(void *)(work + 8 * mxk + 8);
    int use_avx2 = 0;
#ifdef AUG_HAVE_AVX2
    use_avx2 = !datm_test_hooks.augment_scalar && __builtin_cpu_supports("avx2");
#endif
    const int group = use_avx2 ? 8 : 4;   /* words whose running sums are made together */
    const int count4 = use_avx2 && g->K[1] % 4 == 0;   /* categorical_cum_count4 at layer 1 */
    /* categorical_cum_blocks_n at layer 1 for words with more than one token */
    const int blocks1 = use_avx2 && g->K[1] % 8 == 0 && g->K[1] >= 32 && g->K[1] <= AUG_BLOCKS_MAX_K;
    double ends[AUG_BLOCKS_MAX_K / 8];
    int drawn[AUG_BLOCKS_CHUNK];
    int nd = 0;

    /* layer 1: multinomial split of the word counts. The rates of up to eight (AVX2) or four
     * words are computed together (cum_product_f8_avx2, cum_product_f4), then the words are
     * split in their own order, so the draws are those of one word at a time. */
    {
        const int64_t K1 = g->K[1];
        const double *th = theta_n[1];
        int32_t *m1 = m_n[1];
        memset(m1, 0, (size_t)K1 * sizeof(int32_t));
        if (want_ll)
            for (int64_t k = 0; k < K1; k++) ll -= th[k];   /* sum_v rate = sum_k theta */
        int64_t e = 0;
        while (e < nnz) {
            int64_t xs[8], vs[8] = {0};
            int nw = 0;
            for (; e < nnz && nw < group; e++) {
                int64_t x = (int64_t)llroundf(vals[e]);
                if (x <= 0) continue;
                xs[nw] = x;
                vs[nw] = cols[e];
                nw++;
            }
            const float *prows[8];
            double *cums[8], ss[8];
            for (int j = 0; j < 8; j++) {
                prows[j] = g->phi_f[1] + vs[j < nw ? j : 0] * K1;
                cums[j] = cum + (int64_t)j * K1;
            }
            if (nw > 4) {   /* avx2 only; rows past nw repeat row 0 into spare scratch */
#ifdef AUG_HAVE_AVX2
                cum_product_f8_avx2(prows, th, K1, cums, ss);
#endif
            } else if (nw == 4) {
                cum_product_f4(prows, th, K1, cums, ss);
            } else {
                for (int j = 0; j < nw; j++) ss[j] = cum_product_f(prows[j], th, K1, cums[j]);
            }
            for (int j = 0; j < nw; j++) {
                const int64_t x = xs[j], v = vs[j];
                double *cj = cums[j];
                double s = ss[j];
                if (want_ll)
                    ll += (double)x * log(s > 1e-300 ? s : 1e-300) -
                          (x > 1 ? lgamma((double)x + 1.0) : 0.0);
                if (!(s > 0) || !isfinite(s)) s = cum_fallback_f(prows[j], K1, cj);
                int64_t *arow = fx ? fx + fx_off[1] + v * K1 : NULL;
                if (blocks1 && x > 1) {
                    block_ends(cj, (int)K1, ends);
                    for (int64_t i0 = 0; i0 < x; i0 += AUG_BLOCKS_CHUNK) {
                        const int nc = (int)(x - i0 < AUG_BLOCKS_CHUNK ? x - i0 : AUG_BLOCKS_CHUNK);
                        categorical_cum_blocks_n(rng, cj, ends, (int)K1, nc, drawn);
                        for (int i = 0; i < nc; i++)
                            layer1_token(drawn[i], v * K1, m1, arow && !expected,
                                         fx ? fx + fx_off[1] : NULL, defer, &nd, trk);
                    }
                } else
                    for (int64_t i = 0; i < x; i++) {
                        int k = count4 ? categorical_cum_count4(rng, cj, (int)K1)
                                       : categorical_cum(rng, cj, (int)K1);
                        layer1_token(k, v * K1, m1, arow && !expected,
                                     fx ? fx + fx_off[1] : NULL, defer, &nd, trk);
                    }
                if (arow && expected) {
                    double prev = 0.0, f = (double)x / s;
                    for (int64_t k = 0; k < K1; k++) {
                        arow[k] += datm_gbn_fx((cj[k] - prev) * f);
                        prev = cj[k];
                    }
                }
            }
        }
    }

    if (nd) flush_counts(fx + fx_off[1], defer, nd, trk);

    /* layers t >= 2: CRT tables of the layer below, split over the units of layer t. The
     * running sums of up to four rows with customers are computed together (cum_product4),
     * then the rows are drawn in their own order (the same draws as one row at a time). */
    for (int t = 2; t <= L; t++) {
        const int64_t Kp = g->K[t - 1], Kt = g->K[t];
        const double *th = theta_n[t];
        const int32_t *mp = m_n[t - 1];
        int32_t *mt = m_n[t];
        memset(mt, 0, (size_t)Kt * sizeof(int32_t));
        int64_t kn = 0;
        while (kn < Kp) {
            int64_t ks[4];
            int nr = 0;
            for (; kn < Kp && nr < 4; kn++)
                if (mp[kn] > 0) ks[nr++] = kn;
            if (nr == 0) break;
            const double *prows[4];
            double *cums[4], oms[4];
            for (int j = 0; j < 4; j++) {
                prows[j] = g->phi[t] + ks[j < nr ? j : 0] * Kt;
                cums[j] = work + (int64_t)j * Kt;
            }
            if (nr == 4) cum_product4(prows, th, Kt, cums, oms);
            else
                for (int j = 0; j < nr; j++) oms[j] = cum_product(prows[j], th, Kt, cums[j]);
            for (int j = 0; j < nr; j++) {
                const int64_t kp = ks[j];
                const int64_t c = mp[kp];
                const double *prow = prows[j];
                double *cum = cums[j];
                double omega = oms[j];
                double s = omega;
                int64_t tables;
                if (!(omega > 0) || !isfinite(omega)) {
                    /* shape -> 0: the first customer opens the only table */
                    s = cum_fallback(prow, Kt, cum);
                    omega = 0.0;
                    tables = 1;
                } else {
                    tables = datm_rng_crt(rng, c, omega);
                }
                int64_t *arow = fx ? fx + fx_off[t] + kp * Kt : NULL;
                const int blocks = use_avx2 && Kt % 8 == 0 && Kt >= 32 &&
                                   Kt <= AUG_BLOCKS_MAX_K && tables > 1;
                if (blocks) {
                    block_ends(cum, (int)Kt, ends);
                    for (int64_t i0 = 0; i0 < tables; i0 += AUG_BLOCKS_CHUNK) {
                        const int nc = (int)(tables - i0 < AUG_BLOCKS_CHUNK ? tables - i0 : AUG_BLOCKS_CHUNK);
                        categorical_cum_blocks_n(rng, cum, ends, (int)Kt, nc, drawn);
                        for (int i = 0; i < nc; i++) {
                            mt[drawn[i]]++;
                            if (arow && !expected) arow[drawn[i]] += (int64_t)DATM_GBN_FX_SCALE;
                        }
                    }
                } else
                    for (int64_t i = 0; i < tables; i++) {
                        int k = use_avx2 && Kt % 4 == 0 ? categorical_cum_count4(rng, cum, (int)Kt)
                                                         : categorical_cum(rng, cum, (int)Kt);
                        mt[k]++;
                        if (arow && !expected) arow[k] += (int64_t)DATM_GBN_FX_SCALE;
                    }
                if (arow && expected) {
                    double w = omega > 2.2e-16 ? omega : 2.2e-16;
                    double et = w * (datm_digamma((double)c + w) - datm_digamma(w));
                    double prev = 0.0, f = et / s;
                    for (int64_t k = 0; k < Kt; k++) {
                        arow[k] += datm_gbn_fx((cum[k] - prev) * f);
                        prev = cum[k];
                    }
                }
            }
        }
    }

    /* top layer: tables for r (docs/reference.md 1.7) */
    if (g->r && fx) {
        const int64_t KL = g->K[L];
        const int32_t *mL = m_n[L];
        int64_t *trow = fx + fx_off[L + 1];
        for (int64_t k = 0; k < KL; k++)
            if (mL[k] > 0)
                trow[k] += datm_rng_crt(rng, mL[k], g->r[k]) * (int64_t)DATM_GBN_FX_SCALE;
    }
    return ll;
}

/* ---------------------------------------------------------------- a pass from given theta */

int datm_gbn_augment(const datm_gbn *g, const datm_csr *X, const double *const *theta,
                     const datm_gbn_key *key, datm_aug_mode mode, datm_gbn_stats *s,
                     int32_t *const *m_out, datm_error *err)
{
    if (X->n_cols != g->K[0])
        return datm_error_set(err, DATM_E_INVALID, "decoder: counts have %lld columns, V = %lld",
                              (long long)X->n_cols, (long long)g->K[0]);
    if (s && s->L != g->L)
        return datm_error_set(err, DATM_E_INVALID, "decoder: stats for %d layers, model has %d",
                              s->L, g->L);
    const int T = s ? s->n_threads : omp_get_max_threads();
    const int64_t wl = datm_gbn_work_len(g);
    int64_t ml = 0;
    for (int l = 1; l <= g->L; l++) ml += g->K[l];
    double *work = datm_alloc_array((size_t)(T * wl), sizeof(double), err);
    int32_t *mscr = work ? datm_alloc_array((size_t)(T * ml), sizeof(int32_t), err) : NULL;
    if (!mscr) { datm_free(work); return err->code; }

    const int64_t B = X->n_rows;
    /* sampled layer-1 counts list what they make nonzero when tracked; anything else
     * written to tracked stats leaves them unlisted until the next reset */
    const int track = s && listed(s) && mode != DATM_AUG_EXPECTED;
    if (s && s->trk && !track) s->trk_lost = 1;
#pragma omp parallel for num_threads(T) schedule(dynamic, 8)
    for (int64_t n = 0; n < B; n++) {
        const int tid = omp_get_thread_num();
        datm_gbn_list lst = {0}, *trk = NULL;
        if (track) {
            lst = (datm_gbn_list){s->trk + (int64_t)tid * s->fx_len, s->trk_n[tid], s->fx_off[1]};
            trk = &lst;
        }
        datm_rng rng;
        datm_gbn_doc_rng(&rng, key, n);
        const double *th[DATM_MAX_LAYERS + 1] = {0};
        int32_t *mn[DATM_MAX_LAYERS + 1] = {0};
        int64_t o = 0;
        for (int l = 1; l <= g->L; l++) {
            th[l] = theta[l] + n * g->K[l];
            mn[l] = m_out ? m_out[l] + n * g->K[l] : mscr + (int64_t)tid * ml + o;
            o += g->K[l];
        }
        int64_t b = X->row_ptr[n], e = X->row_ptr[n + 1];
        datm_gbn_upward_doc(g, X->col + b, X->val + b, e - b, th, mn,
                            s ? s->fx + (int64_t)tid * s->fx_len : NULL, s ? s->fx_off : NULL,
                            mode == DATM_AUG_EXPECTED, 0, &rng, work + (int64_t)tid * wl, trk);
        if (trk) s->trk_n[tid] = lst.n;
    }
    if (s) {
        if (g->r) {
            /* no local c_n here: q(1) = 1, q(t+1) = ln(1 + q(t) / c) with c = 1 */
            double q = 1.0;
            for (int t = 2; t <= g->L + 1; t++) q = log1p(q);
            s->q_sum += q * (double)B;
        }
        s->n_passes++;
        s->dirty = 1;
    }
    datm_free(mscr);
    datm_free(work);
    return DATM_OK;
}
