/* engine/decoder/tlasgr.c: topic-layer-adaptive stochastic gradient Riemannian MCMC for
 * the globals of the gamma belief network (paper section II-A: eqs. Phi-updata, r_update,
 * update_M; docs/reference.md 1.3-1.7).
 *
 * For column k of Phi(l), with A the augmented counts averaged over the passes in the stats,
 * rho = N / B, eta = eta(l), R = K[l-1]:
 *   phi~_vk = phi_vk + (eps_t / M_k) [(rho A_vk + eta) - (rho A_.k + eta R) phi_vk]
 *             + sqrt(2 eps_t phi_vk / M_k) z_vk,         z ~ N(0, 1) elementwise,
 * then the column is projected onto the simplex. M_k = rho A_.k on the first step, then
 * (1 - eps'_t) M_k + eps'_t rho A_.k, floored at m_floor. The r update is eq. r_update with
 * M^(L+1) annealed from rho sum_n q_n(L+1).
 *
 * Two implementations with bit-identical results (tests/test_decoder_tlasgr_fast.c):
 * datm_tlasgr_step_ref walks one column at a time down the row-major Phi (a 1 KB stride per
 * entry at K = 128: every access a cache miss); datm_tlasgr_step takes blocks of 8 columns
 * (one 64-byte line of each row), draws the block's noise column by column from the same
 * streams, and runs the update and the projection across the 8 columns at once (AVX2 when
 * the CPU has it; the same IEEE operations in the same order either way), blocks spread over
 * OpenMP threads (all layers in one parallel region). On dirty stats datm_tlasgr_step sums
 * each block's counts from the per-thread accumulators itself (block_reduce: the same values
 * as datm_gbn_stats_reduce, which is then not run; A stays stale until a consumer reduces
 * it). Per column, every sum runs over v in
 * increasing order in both. On a non-finite column both leave that column as it was, update
 * every other column of every layer, leave r and t, and name the first (layer, column). */
#include <omp.h>
#include <string.h>

#include "decoder/gbn_internal.h"
#include "core/testhooks.h"

double datm_tlasgr_eps(double eps0, double tau0, double kappa0, int64_t t)
{
    return eps0 * pow((tau0 + (double)t) / (tau0 + 1.0), -kappa0);
}

void datm_simplex_project(double *col, const double *old, int64_t n, int64_t stride,
                          double floor)
{
    double s = 0.0;
    for (int64_t v = 0; v < n; v++) s += col[v * stride];
    const double d = s - 1.0;
    double s2 = 0.0;
    for (int64_t v = 0; v < n; v++) {
        double x = col[v * stride] - d * old[v * stride];
        if (!(x >= floor)) x = isnan(x) ? x : floor;   /* NaN is left for the caller to see */
        col[v * stride] = x;
        s2 += x;
    }
    for (int64_t v = 0; v < n; v++) col[v * stride] /= s2;
}

/* New M from an estimate: set on the first step, annealed afterwards, floored. */
static double anneal_m(double m_old, double est, int first, double eps_m, double floor)
{
    double m = first ? est : (1.0 - eps_m) * m_old + eps_m * est;
    return m > floor ? m : floor;
}

/* The top-layer shape r (paper eq. r_update), shared by both implementations. */
static int step_r(datm_gbn *g, const datm_gbn_stats *s, double rho, uint64_t seed, int64_t t,
                  int first, double eps, double eps_m, double inv, datm_tlasgr_report *rep,
                  datm_error *err)
{
    const int64_t KL = g->K[g->L];
    const double q = s->q_sum * inv;
    g->M_r = anneal_m(g->M_r, rho * q, first, eps_m, g->o.m_floor);
    const double a = eps / g->M_r;
    rep->step_mean[g->L + 1] = a;
    datm_rng rng;
    datm_rng_init2(&rng, seed, DATM_STREAM_PHI_NOISE, (uint64_t)t * 64 + 63, 0);
    for (int64_t k = 0; k < KL; k++) {
        double rk = g->r[k];
        double drift = (rho * s->tables[k] * inv + g->gamma0 / (double)KL) -
                       rk * (g->c0 + rho * q);
        double nr = fabs(rk + a * drift + sqrt(2.0 * a * rk) * datm_rng_normal(&rng));
        if (!isfinite(nr))
            return datm_error_set(err, DATM_E_NUMERIC, "tlasgr: step %lld: r[%lld] = %.17g",
                                  (long long)t, (long long)k, nr);
        g->r[k] = nr > g->o.r_floor ? nr : g->o.r_floor;
    }
    return DATM_OK;
}

/* ---------------------------------------------------------------- reference */

int datm_tlasgr_step_ref(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                         datm_tlasgr_report *rep, datm_error *err)
{
    if (s->n_passes <= 0)
        return datm_error_set(err, DATM_E_INVALID, "tlasgr: no augmentation pass in the stats");
    if (!(rho > 0) || !isfinite(rho))
        return datm_error_set(err, DATM_E_INVALID, "tlasgr: rho = %.17g", rho);
    datm_gbn_stats_reduce(s);
    const int64_t t = g->t + 1;
    const int first = g->t == 0;
    const double eps = datm_tlasgr_eps(g->o.eps0, g->o.tau0, g->o.kappa0, t);
    const double eps_m = datm_tlasgr_eps(g->o.epsm0, g->o.taum0, g->o.kappam0, t);
    const double inv = 1.0 / (double)s->n_passes;
    datm_tlasgr_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->eps = eps;
    rep->eps_m = eps_m;

    int64_t maxR = 1;
    for (int l = 1; l <= g->L; l++) maxR = g->K[l - 1] > maxR ? g->K[l - 1] : maxR;
    double *buf = datm_alloc_array((size_t)(2 * maxR), sizeof(double), err);
    if (!buf) return err->code;
    double *nw = buf, *old = buf + maxR;
    int bad_l = -1;       /* first layer with a non-finite column; its first such column */
    int64_t bad_k = -1;

    for (int l = 1; l <= g->L; l++) {
        const int64_t R = g->K[l - 1], C = g->K[l];
        const double *A = s->A[l];
        double *phi = g->phi[l];
        const double eta = g->eta[l];
        double *M = g->M[l];
        double step_sum = 0.0;
        for (int64_t k = 0; k < C; k++) {
            double cs = 0.0;
            for (int64_t v = 0; v < R; v++) cs += A[v * C + k];
            M[k] = anneal_m(M[k], rho * cs * inv, first, eps_m, g->o.m_floor);
            step_sum += eps / M[k];
        }
        rep->step_mean[l] = step_sum / (double)C;
        int64_t bad = -1;
        for (int64_t k = 0; k < C; k++) {
            datm_rng rng;
            datm_rng_init2(&rng, seed, DATM_STREAM_PHI_NOISE, (uint64_t)t * 64 + (uint64_t)l,
                           (uint64_t)k);
            double cs = 0.0;
            for (int64_t v = 0; v < R; v++) cs += A[v * C + k];
            const double b = rho * cs * inv + eta * (double)R;
            const double a = eps / M[k];
            for (int64_t v = 0; v < R; v++) {
                double p = phi[v * C + k];
                old[v] = p;
                double drift = (rho * A[v * C + k] * inv + eta) - b * p;
                double sd = sqrt(2.0 * a * (p > 0 ? p : 0.0));
                nw[v] = p + a * drift + sd * datm_rng_normal(&rng);
            }
            datm_simplex_project(nw, old, R, 1, g->o.phi_floor);
            int ok = 1;
            for (int64_t v = 0; v < R; v++) ok &= isfinite(nw[v]);
            if (!ok) {   /* the column stays as it was; the other columns are updated */
                if (bad < 0) bad = k;
                continue;
            }
            for (int64_t v = 0; v < R; v++) phi[v * C + k] = nw[v];
        }
        if (bad >= 0 && bad_l < 0) {
            bad_l = l;
            bad_k = bad;
        }
    }
    datm_free(buf);
    if (bad_l >= 0)
        return datm_error_set(err, DATM_E_NUMERIC,
                              "tlasgr: step %lld: non-finite Phi(%d) column %lld (M_k = %.9g)",
                              (long long)t, bad_l, (long long)bad_k, g->M[bad_l][bad_k]);
    if (g->r) {
        int rc = step_r(g, s, rho, seed, t, first, eps, eps_m, inv, rep, err);
        if (rc) return rc;
    }
    g->t = t;
    datm_gbn_sync_f(g);
    return DATM_OK;
}

/* ---------------------------------------------------------------- blocked */

#define TL_W 8     /* columns per block: one 64-byte line of a row of doubles */
#define TL_CH 256  /* rows of noise drawn at a time (per column) */

/* What the blocks of one layer share. */
typedef struct tl_layer {
    int64_t R, C;
    const double *A;       /* (R, C) summed counts */
    double *phi;           /* (R, C) */
    float  *phi_f;         /* (R, C) float mirror */
    double *M;             /* (C) preconditioner, updated here */
    double rho, inv, eta, eps, eps_m, m_floor, floor;
    int first;
    uint64_t seed, index;  /* noise of column k: (seed, PHI_NOISE, index, k) */
    /* fused reduction (stats dirty): the block's counts are summed here from the T
     * per-thread fixed-point accumulators fx + t fx_len (this layer's part) */
    const int64_t *fx;     /* NULL: A is current */
    int64_t fx_len;
    int T;
    int avx2;              /* use the AVX2 kernels */
    int avx512;            /* use the AVX-512 kernels (full blocks) */
} tl_layer;

/* The block's counts from the accumulators, exactly as datm_gbn_stats_reduce makes them
 * ((double)sum / scale), into ab (R, TL_W); cs = their column sums (v increasing). The
 * stats' A is not written (it stays for datm_gbn_stats_reduce to make on demand): the
 * step reads fx once instead of reading it, writing A and reading A back. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* block_reduce for a full block: four int64 lanes at a time; (double)acc exactly as
 * 2^52 + acc - 2^52 when 0 <= acc < 2^52 (else that row goes the scalar way), and
 * acc / 2^24 as acc * 2^-24 (exact: a power of two, no underflow for acc >= 1). */
__attribute__((target("avx2")))
static void block_reduce_avx2(const tl_layer *Lr, int64_t k0, double *ab, double *cs)
{
    const int64_t R = Lr->R, C = Lr->C, n = Lr->fx_len;
    const int64_t *fx = Lr->fx;
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256d two52 = _mm256_set1_pd(0x1p52), scale = _mm256_set1_pd(1.0 / DATM_GBN_FX_SCALE);
    __m256d c0 = _mm256_loadu_pd(cs), c1 = _mm256_loadu_pd(cs + 4);
    for (int64_t v = 0; v < R; v++) {
        const int64_t o = v * C + k0;
        if (v + 16 < R)
            for (int t = 0; t < Lr->T; t++) __builtin_prefetch(fx + t * n + o + 16 * C, 0, 3);
        __m256i a0 = _mm256_loadu_si256((const __m256i *)(fx + o));
        __m256i a1 = _mm256_loadu_si256((const __m256i *)(fx + o + 4));
        for (int t = 1; t < Lr->T; t++) {
            a0 = _mm256_add_epi64(a0, _mm256_loadu_si256((const __m256i *)(fx + t * n + o)));
            a1 = _mm256_add_epi64(a1, _mm256_loadu_si256((const __m256i *)(fx + t * n + o + 4)));
        }
        double *ar = ab + v * TL_W;
        const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(a0, 52), _mm256_srli_epi64(a1, 52));
        if (!_mm256_testz_si256(hi, hi)) {   /* negative or >= 2^52: convert one by one */
            int64_t t0[8];
            _mm256_storeu_si256((__m256i *)t0, a0);
            _mm256_storeu_si256((__m256i *)(t0 + 4), a1);
            for (int j = 0; j < 8; j++) ar[j] = (double)t0[j] / DATM_GBN_FX_SCALE;
        } else {
            __m256d d0 = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a0, magic)), two52);
            __m256d d1 = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a1, magic)), two52);
            _mm256_storeu_pd(ar, _mm256_mul_pd(d0, scale));
            _mm256_storeu_pd(ar + 4, _mm256_mul_pd(d1, scale));
        }
        c0 = _mm256_add_pd(c0, _mm256_loadu_pd(ar));
        c1 = _mm256_add_pd(c1, _mm256_loadu_pd(ar + 4));
    }
    _mm256_storeu_pd(cs, c0);
    _mm256_storeu_pd(cs + 4, c1);
}

/* The same with the 8 columns in one 512-bit register: vcvtqq2pd is the exact conversion
 * (double)acc for every int64 (round to nearest, as C's), so no row needs the scalar way;
 * the column sums are the same additions in the same order. */
__attribute__((target("avx512f,avx512dq")))
static void block_reduce_avx512(const tl_layer *Lr, int64_t k0, double *ab, double *cs)
{
    const int64_t R = Lr->R, C = Lr->C, n = Lr->fx_len;
    const int64_t *fx = Lr->fx;
    const __m512d scale = _mm512_set1_pd(1.0 / DATM_GBN_FX_SCALE);
    __m512d c = _mm512_loadu_pd(cs);
    for (int64_t v = 0; v < R; v++) {
        const int64_t o = v * C + k0;
        if (v + 16 < R)
            for (int t = 0; t < Lr->T; t++) __builtin_prefetch(fx + t * n + o + 16 * C, 0, 3);
        __m512i a = _mm512_loadu_si512((const void *)(fx + o));
        for (int t = 1; t < Lr->T; t++)
            a = _mm512_add_epi64(a, _mm512_loadu_si512((const void *)(fx + t * n + o)));
        const __m512d d = _mm512_mul_pd(_mm512_cvtepi64_pd(a), scale);
        _mm512_storeu_pd(ab + v * TL_W, d);
        c = _mm512_add_pd(c, d);
    }
    _mm512_storeu_pd(cs, c);
}
#endif

static void block_reduce(const tl_layer *Lr, int64_t k0, int w, double *ab, double *cs)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (Lr->avx512 && w == TL_W) {
        block_reduce_avx512(Lr, k0, ab, cs);
        return;
    }
    if (Lr->avx2 && w == TL_W) {
        block_reduce_avx2(Lr, k0, ab, cs);
        return;
    }
#endif
    const int64_t R = Lr->R, C = Lr->C, n = Lr->fx_len;
    const int64_t *fx = Lr->fx;
    for (int64_t v = 0; v < R; v++) {
        const int64_t o = v * C + k0;
        if (v + 16 < R)
            for (int t = 0; t < Lr->T; t++) __builtin_prefetch(fx + t * n + o + 16 * C, 0, 3);
        double *ar = ab + v * TL_W;
        for (int j = 0; j < w; j++) {
            int64_t acc = 0;
            for (int t = 0; t < Lr->T; t++) acc += fx[t * n + o + j];
            const double a = (double)acc / DATM_GBN_FX_SCALE;
            ar[j] = a;
            cs[j] += a;
        }
    }
}

/* Column sums of A over the block (v increasing), M updated, the step sizes a = eps / M
 * and the drift slopes b = rho A_.k + eta R. The block's counts are then at *Ap, row v at
 * *Ap + v *As (the stats' A, or ab when they are reduced here). */
static void block_setup(const tl_layer *Lr, int64_t k0, int w, double *a, double *b,
                        datm_rng *rng, double *ab, const double **Ap, int64_t *As)
{
    const int64_t R = Lr->R, C = Lr->C;
    double cs[TL_W] = {0};
    if (Lr->fx) {
        block_reduce(Lr, k0, w, ab, cs);
        *Ap = ab;
        *As = TL_W;
    } else {
        *Ap = Lr->A + k0;
        *As = C;
        for (int64_t v = 0; v < R; v++) {
            const double *ar = Lr->A + v * C + k0;
            if (v + 16 < R) __builtin_prefetch(ar + 16 * C, 0, 3);   /* see TL_PF */
            for (int j = 0; j < w; j++) cs[j] += ar[j];
        }
    }
    for (int j = 0; j < w; j++) {
        double *M = Lr->M + k0 + j;
        *M = anneal_m(*M, Lr->rho * cs[j] * Lr->inv, Lr->first, Lr->eps_m, Lr->m_floor);
        b[j] = Lr->rho * cs[j] * Lr->inv + Lr->eta * (double)R;
        a[j] = Lr->eps / *M;
        datm_rng_init2(&rng[j], Lr->seed, DATM_STREAM_PHI_NOISE, Lr->index, (uint64_t)(k0 + j));
    }
}

/* Writes the columns j < w of the block whose bit is set in ok: the new rows nw (R, TL_W)
 * divided by their column sums s2, to phi and its float mirror (the other columns stay as
 * they were). */
static void store_columns(const tl_layer *Lr, int64_t k0, int w, const double *nw,
                          const double *s2, unsigned ok)
{
    const int64_t R = Lr->R, C = Lr->C;
    for (int64_t v = 0; v < R; v++)
        for (int j = 0; j < w; j++)
            if (ok >> j & 1) {
                double x = nw[v * TL_W + j] / s2[j];
                Lr->phi[v * C + k0 + j] = x;
                Lr->phi_f[v * C + k0 + j] = (float)x;
            }
}

/* Portable kernel for w <= TL_W columns; z (TL_W, TL_CH) noise scratch, nw (R, TL_W) the
 * new block. Returns a bit mask of the columns whose projected values are all finite (those
 * are written to phi and phi_f; the others are left as they were). All finite after the
 * division by s2 <=> all x finite and max|x| / s2 finite (division is monotone). */
static unsigned block_scalar(const tl_layer *Lr, int64_t k0, int w, double *z, double *nw,
                             double *ab)
{
    const int64_t R = Lr->R, C = Lr->C;
    double a[TL_W], b[TL_W], s[TL_W] = {0}, d[TL_W], s2[TL_W] = {0}, mx[TL_W] = {0};
    int fin[TL_W];
    datm_rng rng[TL_W];
    const double *Ap;
    int64_t As;
    block_setup(Lr, k0, w, a, b, rng, ab, &Ap, &As);
    for (int64_t v0 = 0; v0 < R; v0 += TL_CH) {
        const int64_t n = R - v0 < TL_CH ? R - v0 : TL_CH;
        for (int j = 0; j < w; j++) datm_rng_normal_fill(&rng[j], z + j * TL_CH, (size_t)n);
        for (int64_t v = v0; v < v0 + n; v++) {
            const double *pr = Lr->phi + v * C + k0, *ar = Ap + v * As;
            for (int j = 0; j < w; j++) {
                double p = pr[j];
                double drift = (Lr->rho * ar[j] * Lr->inv + Lr->eta) - b[j] * p;
                double sd = sqrt(2.0 * a[j] * (p > 0 ? p : 0.0));
                double x = p + a[j] * drift + sd * z[j * TL_CH + (v - v0)];
                nw[v * TL_W + j] = x;
                s[j] += x;
            }
        }
    }
    for (int j = 0; j < w; j++) {
        d[j] = s[j] - 1.0;
        fin[j] = 1;
    }
    for (int64_t v = 0; v < R; v++) {
        const double *pr = Lr->phi + v * C + k0;
        for (int j = 0; j < w; j++) {
            double x = nw[v * TL_W + j] - d[j] * pr[j];
            if (!(x >= Lr->floor)) x = isnan(x) ? x : Lr->floor;
            nw[v * TL_W + j] = x;
            s2[j] += x;
            fin[j] &= isfinite(x) != 0;
            mx[j] = fabs(x) > mx[j] ? fabs(x) : mx[j];
        }
    }
    unsigned ok = 0;
    for (int j = 0; j < w; j++) ok |= (unsigned)(fin[j] && isfinite(mx[j] / s2[j])) << j;
    store_columns(Lr, k0, w, nw, s2, ok);
    return ok;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TL_HAVE_AVX2 1
#define TL_PF 16   /* rows ahead to prefetch: rows are C doubles apart, and the hardware
                      prefetcher stops at every 4 KB page */

/* The same for a full block of 8 columns, two 4-lane halves per row, the same IEEE
 * operations in the same order. max(p, 0) is (p > 0 ? p : 0.0) exactly (maxpd returns the
 * second operand for NaN and for -0 vs 0). */
__attribute__((target("avx2")))
static unsigned block_avx2(const tl_layer *Lr, int64_t k0, double *z, double *nw, double *ab)
{
    const int64_t R = Lr->R, C = Lr->C;
    double as[TL_W], bs[TL_W];
    datm_rng rng[TL_W];
    const double *Ap;
    int64_t As;
    block_setup(Lr, k0, TL_W, as, bs, rng, ab, &Ap, &As);
    __m256d a[2], b[2], s[2], d[2], s2[2], mx[2], fin[2];
    const __m256d vrho = _mm256_set1_pd(Lr->rho), vinv = _mm256_set1_pd(Lr->inv);
    const __m256d veta = _mm256_set1_pd(Lr->eta), two = _mm256_set1_pd(2.0);
    const __m256d zero = _mm256_setzero_pd(), vfloor = _mm256_set1_pd(Lr->floor);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    for (int h = 0; h < 2; h++) {
        a[h] = _mm256_loadu_pd(as + 4 * h);
        b[h] = _mm256_loadu_pd(bs + 4 * h);
        s[h] = s2[h] = mx[h] = zero;
        fin[h] = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    }
    for (int64_t v0 = 0; v0 < R; v0 += TL_CH) {
        const int64_t n = R - v0 < TL_CH ? R - v0 : TL_CH;
        for (int j = 0; j < TL_W; j++) datm_rng_normal_fill(&rng[j], z + j * TL_CH, (size_t)n);
        for (int64_t v = v0; v < v0 + n; v++) {
            const double *pr = Lr->phi + v * C + k0, *ar = Ap + v * As;
            if (v + TL_PF < R) {
                _mm_prefetch((const char *)(pr + TL_PF * C), _MM_HINT_T0);
                _mm_prefetch((const char *)(ar + TL_PF * As), _MM_HINT_T0);
            }
            const double *zr = z + (v - v0);
            for (int h = 0; h < 2; h++) {
                const int j = 4 * h;
                __m256d p = _mm256_loadu_pd(pr + j);
                __m256d av = _mm256_loadu_pd(ar + j);
                __m256d drift = _mm256_sub_pd(
                    _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(vrho, av), vinv), veta),
                    _mm256_mul_pd(b[h], p));
                __m256d sd = _mm256_sqrt_pd(_mm256_mul_pd(_mm256_mul_pd(two, a[h]),
                                                          _mm256_max_pd(p, zero)));
                __m256d zz = _mm256_setr_pd(zr[(j + 0) * TL_CH], zr[(j + 1) * TL_CH],
                                            zr[(j + 2) * TL_CH], zr[(j + 3) * TL_CH]);
                __m256d x = _mm256_add_pd(_mm256_add_pd(p, _mm256_mul_pd(a[h], drift)),
                                          _mm256_mul_pd(sd, zz));
                _mm256_storeu_pd(nw + v * TL_W + j, x);
                s[h] = _mm256_add_pd(s[h], x);
            }
        }
    }
    for (int h = 0; h < 2; h++) d[h] = _mm256_sub_pd(s[h], _mm256_set1_pd(1.0));
    for (int64_t v = 0; v < R; v++) {
        const double *pr = Lr->phi + v * C + k0;
        if (v + TL_PF < R) _mm_prefetch((const char *)(pr + TL_PF * C), _MM_HINT_T0);
        for (int h = 0; h < 2; h++) {
            __m256d x = _mm256_sub_pd(_mm256_loadu_pd(nw + v * TL_W + 4 * h),
                                      _mm256_mul_pd(d[h], _mm256_loadu_pd(pr + 4 * h)));
            /* keep x when x >= floor or x is NaN, else floor */
            __m256d keep = _mm256_or_pd(_mm256_cmp_pd(x, vfloor, _CMP_GE_OQ),
                                        _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
            x = _mm256_blendv_pd(vfloor, x, keep);
            _mm256_storeu_pd(nw + v * TL_W + 4 * h, x);
            s2[h] = _mm256_add_pd(s2[h], x);
            /* finite: x - x == 0 (false for inf and NaN) */
            fin[h] = _mm256_and_pd(fin[h], _mm256_cmp_pd(_mm256_sub_pd(x, x), zero, _CMP_EQ_OQ));
            mx[h] = _mm256_max_pd(mx[h], _mm256_and_pd(x, absmask));
        }
    }
    unsigned ok = 0;
    for (int h = 0; h < 2; h++) {
        __m256d q = _mm256_div_pd(mx[h], s2[h]);
        __m256d good = _mm256_and_pd(fin[h], _mm256_cmp_pd(_mm256_sub_pd(q, q), zero, _CMP_EQ_OQ));
        ok |= (unsigned)_mm256_movemask_pd(good) << (4 * h);
    }
    if (ok == 0xFFu) {
        for (int64_t v = 0; v < R; v++) {
            double *pr = Lr->phi + v * C + k0;
            float *fr = Lr->phi_f + v * C + k0;
            if (v + TL_PF < R) {
                _mm_prefetch((const char *)(pr + TL_PF * C), _MM_HINT_T0);
                _mm_prefetch((const char *)(fr + TL_PF * C), _MM_HINT_T0);
            }
            for (int h = 0; h < 2; h++) {
                __m256d x = _mm256_div_pd(_mm256_loadu_pd(nw + v * TL_W + 4 * h), s2[h]);
                _mm256_storeu_pd(pr + 4 * h, x);
                _mm_storeu_ps(fr + 4 * h, _mm256_cvtpd_ps(x));
            }
        }
    } else {
        double s2s[TL_W];
        _mm256_storeu_pd(s2s, s2[0]);
        _mm256_storeu_pd(s2s + 4, s2[1]);
        store_columns(Lr, k0, TL_W, nw, s2s, ok);
    }
    return ok;
}

/* block_avx2 with the 8 columns of a row in one 512-bit register: the same IEEE operations
 * in the same order per column (the build is ISO C: no contraction into FMA), so the same
 * bits. */
__attribute__((target("avx512f,avx512dq")))
static unsigned block_avx512(const tl_layer *Lr, int64_t k0, double *z, double *nw, double *ab)
{
    const int64_t R = Lr->R, C = Lr->C;
    double as[TL_W], bs[TL_W];
    datm_rng rng[TL_W];
    const double *Ap;
    int64_t As;
    block_setup(Lr, k0, TL_W, as, bs, rng, ab, &Ap, &As);
    const __m512d a = _mm512_loadu_pd(as), b = _mm512_loadu_pd(bs);
    const __m512d vrho = _mm512_set1_pd(Lr->rho), vinv = _mm512_set1_pd(Lr->inv);
    const __m512d veta = _mm512_set1_pd(Lr->eta), two = _mm512_set1_pd(2.0);
    const __m512d zero = _mm512_setzero_pd(), vfloor = _mm512_set1_pd(Lr->floor);
    const __m512i zidx = _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                                            _mm512_set1_epi64(TL_CH));
    __m512d s = zero, s2 = zero, mx = zero;
    __mmask8 fin = 0xFF;
    for (int64_t v0 = 0; v0 < R; v0 += TL_CH) {
        const int64_t n = R - v0 < TL_CH ? R - v0 : TL_CH;
        for (int j = 0; j < TL_W; j++) datm_rng_normal_fill(&rng[j], z + j * TL_CH, (size_t)n);
        for (int64_t v = v0; v < v0 + n; v++) {
            const double *pr = Lr->phi + v * C + k0, *ar = Ap + v * As;
            if (v + TL_PF < R) {
                _mm_prefetch((const char *)(pr + TL_PF * C), _MM_HINT_T0);
                _mm_prefetch((const char *)(ar + TL_PF * As), _MM_HINT_T0);
            }
            const __m512d p = _mm512_loadu_pd(pr), av = _mm512_loadu_pd(ar);
            const __m512d drift = _mm512_sub_pd(
                _mm512_add_pd(_mm512_mul_pd(_mm512_mul_pd(vrho, av), vinv), veta),
                _mm512_mul_pd(b, p));
            const __m512d sd = _mm512_sqrt_pd(_mm512_mul_pd(_mm512_mul_pd(two, a),
                                                            _mm512_max_pd(p, zero)));
            const __m512d zz = _mm512_i64gather_pd(zidx, z + (v - v0), 8);
            const __m512d x = _mm512_add_pd(_mm512_add_pd(p, _mm512_mul_pd(a, drift)),
                                            _mm512_mul_pd(sd, zz));
            _mm512_storeu_pd(nw + v * TL_W, x);
            s = _mm512_add_pd(s, x);
        }
    }
    const __m512d d = _mm512_sub_pd(s, _mm512_set1_pd(1.0));
    const __m512d absmask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL));
    for (int64_t v = 0; v < R; v++) {
        const double *pr = Lr->phi + v * C + k0;
        if (v + TL_PF < R) _mm_prefetch((const char *)(pr + TL_PF * C), _MM_HINT_T0);
        __m512d x = _mm512_sub_pd(_mm512_loadu_pd(nw + v * TL_W),
                                  _mm512_mul_pd(d, _mm512_loadu_pd(pr)));
        /* keep x when x >= floor or x is NaN, else floor */
        const __mmask8 keep = _mm512_cmp_pd_mask(x, vfloor, _CMP_GE_OQ) |
                              _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);
        x = _mm512_mask_blend_pd(keep, vfloor, x);
        _mm512_storeu_pd(nw + v * TL_W, x);
        s2 = _mm512_add_pd(s2, x);
        fin &= _mm512_cmp_pd_mask(_mm512_sub_pd(x, x), zero, _CMP_EQ_OQ);
        mx = _mm512_max_pd(mx, _mm512_and_pd(x, absmask));
    }
    const __m512d q = _mm512_div_pd(mx, s2);
    const unsigned ok = fin & _mm512_cmp_pd_mask(_mm512_sub_pd(q, q), zero, _CMP_EQ_OQ);
    if (ok == 0xFFu) {
        for (int64_t v = 0; v < R; v++) {
            double *pr = Lr->phi + v * C + k0;
            float *fr = Lr->phi_f + v * C + k0;
            if (v + TL_PF < R) {
                _mm_prefetch((const char *)(pr + TL_PF * C), _MM_HINT_T0);
                _mm_prefetch((const char *)(fr + TL_PF * C), _MM_HINT_T0);
            }
            const __m512d x = _mm512_div_pd(_mm512_loadu_pd(nw + v * TL_W), s2);
            _mm512_storeu_pd(pr, x);
            _mm256_storeu_ps(fr, _mm512_cvtpd_ps(x));
        }
    } else {
        double s2s[TL_W];
        _mm512_storeu_pd(s2s, s2);
        store_columns(Lr, k0, TL_W, nw, s2s, ok);
    }
    return ok;
}
#endif

int64_t datm_tlasgr_n_blocks(const datm_gbn *g)
{
    int64_t n = 0;
    for (int l = 1; l <= g->L; l++) n += (g->K[l] + TL_W - 1) / TL_W;
    return n;
}

void datm_tlasgr_block(const datm_gbn *g, int64_t bk, int *layer, int64_t *k0, int *w)
{
    int l = 1;
    int64_t first = 0;
    while (bk >= first + (g->K[l] + TL_W - 1) / TL_W) first += (g->K[l++] + TL_W - 1) / TL_W;
    *layer = l;
    *k0 = (bk - first) * TL_W;
    *w = (int)(g->K[l] - *k0 < TL_W ? g->K[l] - *k0 : TL_W);
}

/* Blocks weighed by their rows (a block of Phi(1) has V, one of Phi(2) K_1): part p starts
 * at the first block whose preceding rows reach p / parts of all rows. */
static int64_t part_start(const datm_gbn *g, int p, int parts)
{
    int64_t total = 0;
    for (int l = 1; l <= g->L; l++) total += g->K[l - 1] * ((g->K[l] + TL_W - 1) / TL_W);
    const int64_t goal = total * p / parts;
    int64_t bk = 0, acc = 0;
    for (int l = 1; l <= g->L; l++)
        for (int64_t b = 0; b < (g->K[l] + TL_W - 1) / TL_W; b++, bk++) {
            if (acc >= goal) return bk;
            acc += g->K[l - 1];
        }
    return bk;
}

void datm_tlasgr_part_blocks(const datm_gbn *g, int part, int parts, int64_t *b0, int64_t *b1)
{
    *b0 = part == 0 ? 0 : part_start(g, part, parts);
    *b1 = part + 1 == parts ? datm_tlasgr_n_blocks(g) : part_start(g, part + 1, parts);
}

int datm_tlasgr_step(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed,
                     datm_tlasgr_report *rep, datm_error *err)
{
    return datm_tlasgr_step_part(g, s, rho, seed, 0, 1, NULL, NULL, rep, err);
}

int datm_tlasgr_step_part(datm_gbn *g, datm_gbn_stats *s, double rho, uint64_t seed, int part,
                          int parts, datm_tlasgr_exchange_fn exchange, void *user,
                          datm_tlasgr_report *rep, datm_error *err)
{
    if (s->n_passes <= 0)
        return datm_error_set(err, DATM_E_INVALID, "tlasgr: no augmentation pass in the stats");
    if (!(rho > 0) || !isfinite(rho))
        return datm_error_set(err, DATM_E_INVALID, "tlasgr: rho = %.17g", rho);
    /* dirty stats: the counts of A are reduced inside the blocks (block_reduce; A itself
     * stays stale and the stats dirty), the tables here */
    const int fused = s->dirty && !datm_test_hooks.tlasgr_unfused;
    if (fused) {
        const int64_t o = s->fx_off[g->L + 1], KL = g->K[g->L];
        for (int64_t k = 0; k < KL; k++) {
            int64_t acc = 0;
            for (int th = 0; th < s->n_threads; th++) acc += s->fx[th * s->fx_len + o + k];
            s->tables[k] = (double)acc / DATM_GBN_FX_SCALE;
        }
    } else {
        datm_gbn_stats_reduce(s);
    }
    const int64_t t = g->t + 1;
    const int first = g->t == 0;
    const double eps = datm_tlasgr_eps(g->o.eps0, g->o.tau0, g->o.kappa0, t);
    const double eps_m = datm_tlasgr_eps(g->o.epsm0, g->o.taum0, g->o.kappam0, t);
    const double inv = 1.0 / (double)s->n_passes;
    datm_tlasgr_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->eps = eps;
    rep->eps_m = eps_m;
    int use_avx2 = 0;
#ifdef TL_HAVE_AVX2
    use_avx2 = !datm_test_hooks.tlasgr_scalar && __builtin_cpu_supports("avx2");
#endif
    const int use_avx512 = use_avx2 && !datm_test_hooks.tlasgr_avx2 &&
                           __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");

    int64_t maxR = 1;
    for (int l = 1; l <= g->L; l++) maxR = g->K[l - 1] > maxR ? g->K[l - 1] : maxR;
    const int T = omp_get_max_threads();
    /* per thread: noise (TL_W, TL_CH) and the new block (maxR, TL_W); a fused block's
     * counts (block_reduce) share the new block's rows: row v of the counts is read just
     * before row v of the new block is written over it (a smaller working set in L2) */
    const int64_t per = TL_W * TL_CH + TL_W * maxR;
    double *buf = datm_alloc_array((size_t)(T * per), sizeof(double), err);
    if (!buf) return err->code;

    /* every block of every layer in one parallel region (the layers are independent given
     * the counts): one fork/join instead of one per layer, the big layer-1 blocks first */
    tl_layer Lr[DATM_MAX_LAYERS + 1];
    int64_t first_blk[DATM_MAX_LAYERS + 2], bad[DATM_MAX_LAYERS + 1];
    first_blk[1] = 0;
    for (int l = 1; l <= g->L; l++) {
        const tl_layer x = {g->K[l - 1], g->K[l], s->A[l], g->phi[l], g->phi_f[l], g->M[l], rho,
                            inv, g->eta[l], eps, eps_m, g->o.m_floor, g->o.phi_floor, first,
                            seed, (uint64_t)t * 64 + (uint64_t)l,
                            fused ? s->fx + s->fx_off[l] : NULL, s->fx_len, s->n_threads,
                            use_avx2, use_avx512};
        Lr[l] = x;
        first_blk[l + 1] = first_blk[l] + (g->K[l] + TL_W - 1) / TL_W;
        bad[l] = -1;
    }
    /* this part's blocks (all of them unless the columns are split over processes) */
    int64_t b0, nblk;
    datm_tlasgr_part_blocks(g, part, parts, &b0, &nblk);
    /* blocks in pairs: the float mirror's rows hold two blocks per 64-byte line (8 floats
     * each), which one thread then writes alone instead of two at once (false sharing) */
#pragma omp parallel for num_threads(T) schedule(dynamic, 2) if (T > 1 && nblk - b0 > 1)
    for (int64_t bk = b0; bk < nblk; bk++) {
        int l = 1;
        while (bk >= first_blk[l + 1]) l++;
        const tl_layer *ly = &Lr[l];
        double *z = buf + (int64_t)omp_get_thread_num() * per, *nw = z + TL_W * TL_CH;
        double *ab = nw;
        const int64_t k0 = (bk - first_blk[l]) * TL_W;
        const int w = (int)(ly->C - k0 < TL_W ? ly->C - k0 : TL_W);
        unsigned ok;
#ifdef TL_HAVE_AVX2
        if (use_avx512 && w == TL_W) ok = block_avx512(ly, k0, z, nw, ab);
        else if (use_avx2 && w == TL_W) ok = block_avx2(ly, k0, z, nw, ab);
        else
#endif
            ok = block_scalar(ly, k0, w, z, nw, ab);
        if (ok != (1u << w) - 1) {
            int j = 0;
            while (ok >> j & 1) j++;
#pragma omp critical(datm_tlasgr_bad)
            if (bad[l] < 0 || k0 + j < bad[l]) bad[l] = k0 + j;
        }
    }
    (void)use_avx2;
    datm_free(buf);
    if (exchange) {   /* the other parts' columns (and their first bad column per layer) */
        int rc = exchange(g, part, parts, bad, user, err);
        if (rc) return rc;
    }
    for (int l = 1; l <= g->L; l++) {
        const int64_t C = g->K[l];
        double step_sum = 0.0;
        for (int64_t k = 0; k < C; k++) step_sum += eps / g->M[l][k];
        rep->step_mean[l] = step_sum / (double)C;
    }
    for (int l = 1; l <= g->L; l++)
        if (bad[l] >= 0) {
            return datm_error_set(err, DATM_E_NUMERIC,
                                  "tlasgr: step %lld: non-finite Phi(%d) column %lld (M_k = %.9g)",
                                  (long long)t, l, (long long)bad[l], g->M[l][bad[l]]);
        }

    if (g->r) {
        int rc = step_r(g, s, rho, seed, t, first, eps, eps_m, inv, rep, err);
        if (rc) return rc;
    }
    g->t = t;
    return DATM_OK;
}
