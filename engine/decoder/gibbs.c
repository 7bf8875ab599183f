/* engine/decoder/gibbs.c: the upward-downward Gibbs sampler of the gamma belief network
 * (paper Fig. 1c; docs/reference.md 1.9) for the local variables theta(l), c_n, p_n of a set
 * of documents, and the Gibbs draws of the globals (Phi from its Dirichlet conditional, r,
 * gamma0, c0; docs/reference.md 1.7) used by DLDA-Gibbs.
 *
 * Per document and sweep: upward augmentation from the current theta; then
 *   p_n(2) ~ Beta(a0 + x_.n, b0 + sum_k theta(2)_kn)   (sum_k r_k when L = 1),
 *   c_n(2) = (1 - p(2)) / p(2),
 *   c_n(t) ~ Gam(e0 + sum_k theta(t)_kn, 1) / (f0 + sum_k theta(t-1)_kn), 3 <= t <= L,
 *   c_n(L+1) ~ Gam(e0 + sum_k r_k, 1) / (f0 + sum_k theta(L)_kn),
 *   q(1) = 1, p(t) = q(t-1) / (q(t-1) + c(t)), q(t) = -ln(1 - p(t)) for t >= 3
 * (c = 1 and p from c before cp_after sweeps); then downward, t = L..1,
 *   theta(t)_kn ~ Gam(shape_kn + m(t)_kn, 1) / (c_n(t+1) + q_n(t)),
 * shape = (Phi(t+1) theta(t+1))_kn, or r_k at the top. */
#include <float.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/gbn_internal.h"

/* ---------------------------------------------------------------- chain storage */

int datm_gbn_chain_create(const datm_gbn *g, int64_t n_docs, datm_gbn_chain **out,
                          datm_error *err)
{
    *out = NULL;
    datm_gbn_chain *ch = datm_alloc(sizeof *ch, err);
    if (!ch) return err->code;
    ch->L = g->L;
    ch->n_docs = n_docs;
    for (int l = 0; l <= g->L; l++) ch->K[l] = g->K[l];
    size_t nd = (size_t)(n_docs > 0 ? n_docs : 1);
    for (int l = 1; l <= g->L; l++) {
        ch->theta[l] = datm_alloc_array(nd * (size_t)g->K[l], sizeof(double), err);
        ch->m[l] = ch->theta[l] ? datm_alloc_array(nd * (size_t)g->K[l], sizeof(int32_t), err)
                                : NULL;
        if (!ch->m[l]) { datm_gbn_chain_destroy(&ch); return err->code; }
    }
    ch->c = datm_alloc_array(nd * (size_t)(g->L + 2), sizeof(double), err);
    ch->p = ch->c ? datm_alloc_array(nd * (size_t)(g->L + 2), sizeof(double), err) : NULL;
    ch->q_top = ch->p ? datm_alloc_array(nd, sizeof(double), err) : NULL;
    ch->loglik = ch->q_top ? datm_alloc_array(nd, sizeof(double), err) : NULL;
    if (!ch->loglik) { datm_gbn_chain_destroy(&ch); return err->code; }
    datm_gbn_chain_init(ch, n_docs);
    *out = ch;
    return DATM_OK;
}

void datm_gbn_chain_destroy(datm_gbn_chain **pch)
{
    if (!pch || !*pch) return;
    datm_gbn_chain *ch = *pch;
    for (int l = 1; l <= ch->L; l++) {
        datm_free(ch->theta[l]);
        datm_free(ch->m[l]);
    }
    datm_free(ch->c);
    datm_free(ch->p);
    datm_free(ch->q_top);
    datm_free(ch->loglik);
    datm_free(ch);
    *pch = NULL;
}

void datm_gbn_chain_init(datm_gbn_chain *ch, int64_t n_docs)
{
    ch->n_docs = n_docs;
    for (int l = 1; l <= ch->L; l++) {
        int64_t n = n_docs * ch->K[l];
        double v = 1.0 / (double)ch->K[l];
        for (int64_t i = 0; i < n; i++) ch->theta[l][i] = v;
        memset(ch->m[l], 0, (size_t)n * sizeof(int32_t));
    }
    int64_t nc = n_docs * (ch->L + 2);
    for (int64_t i = 0; i < nc; i++) {
        ch->c[i] = 1.0;
        ch->p[i] = 0.5;
    }
    memset(ch->q_top, 0, (size_t)n_docs * sizeof(double));
    memset(ch->loglik, 0, (size_t)n_docs * sizeof(double));
    ch->sweeps = 0;
}

void datm_gbn_chain_copy(datm_gbn_chain *dst, const datm_gbn_chain *src)
{
    DATM_ASSERT(dst->L == src->L && dst->n_docs >= src->n_docs);
    dst->n_docs = src->n_docs;
    for (int l = 1; l <= src->L; l++) {
        size_t n = (size_t)(src->n_docs * src->K[l]);
        memcpy(dst->theta[l], src->theta[l], n * sizeof(double));
        memcpy(dst->m[l], src->m[l], n * sizeof(int32_t));
    }
    size_t nc = (size_t)(src->n_docs * (src->L + 2));
    memcpy(dst->c, src->c, nc * sizeof(double));
    memcpy(dst->p, src->p, nc * sizeof(double));
    memcpy(dst->q_top, src->q_top, (size_t)src->n_docs * sizeof(double));
    memcpy(dst->loglik, src->loglik, (size_t)src->n_docs * sizeof(double));
    dst->sweeps = src->sweeps;
}

/* ---------------------------------------------------------------- one document */

static double sum_d(const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    return s;
}

static double clip_p(double p)
{
    if (!(p >= DBL_MIN)) return DBL_MIN;
    if (p > 1.0 - DBL_EPSILON) return 1.0 - DBL_EPSILON;
    return p;
}

/* c_n, p_n and the q_n they imply; q[t] for t = 1..L+1. */
static void sample_cp(const datm_gbn *g, double *const *th, const int32_t *m1, double *cn,
                      double *pn, double *q, int sample, datm_rng *rng)
{
    const int L = g->L;
    const int64_t KL = g->K[L];
    const double sum_r = g->r ? sum_d(g->r, KL) : (double)KL;
    if (sample) {
        double x = 0.0;
        for (int64_t k = 0; k < g->K[1]; k++) x += m1[k];
        double sh = L >= 2 ? sum_d(th[2], g->K[2]) : sum_r;
        double p2 = clip_p(datm_rng_beta(rng, g->o.a0pj + x, g->o.b0pj + sh));
        pn[2] = p2;
        cn[2] = (1.0 - p2) / p2;
        for (int t = 3; t <= L + 1; t++) {
            double up = t <= L ? sum_d(th[t], g->K[t]) : sum_r;
            double below = sum_d(th[t - 1], g->K[t - 1]);
            double c = datm_rng_gamma(rng, g->o.e0cj + up) / (g->o.f0cj + below);
            cn[t] = c > DBL_MIN && isfinite(c) ? c : DBL_MIN;
        }
    } else {
        pn[2] = 1.0 / (1.0 + cn[2]);
    }
    q[1] = 1.0;
    q[2] = -log(fmax(1.0 - pn[2], DBL_MIN));
    for (int t = 3; t <= L + 1; t++) {
        double p = q[t - 1] / (q[t - 1] + cn[t]);
        pn[t] = isnan(p) ? DBL_EPSILON : p;
        q[t] = -log(fmax(1.0 - pn[t], DBL_MIN));
    }
}

/* Dot product with four partial sums (independent chains: ~4x the scalar throughput; a
 * fixed order, so still deterministic). */
static double dot4(const double *a, const double *b, int64_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static void downward(const datm_gbn *g, double *const *th, int32_t *const *mn, const double *cn,
                     const double *q, datm_rng *rng)
{
    for (int t = g->L; t >= 1; t--) {
        const int64_t Kt = g->K[t];
        const double rate = fmax(cn[t + 1] + q[t], DBL_MIN);
        for (int64_t k = 0; k < Kt; k++) {
            double shape;
            if (t == g->L) {
                shape = g->r ? g->r[k] : 1.0;
            } else {
                const int64_t Ku = g->K[t + 1];
                shape = dot4(g->phi[t + 1] + k * Ku, th[t + 1], Ku);
            }
            double a = shape + (double)mn[t][k];
            double x = a > 0 && a < INFINITY ? datm_rng_gamma(rng, a) / rate : 0.0;
            th[t][k] = isfinite(x) ? x : 0.0;
        }
    }
}

/* ---------------------------------------------------------------- a sweep */

int datm_gbn_chain_sweep(const datm_gbn *g, const datm_csr *X, datm_gbn_chain *ch,
                         const datm_gbn_key *key, const datm_gbn_sweep_opts *so,
                         datm_gbn_stats *s, datm_error *err)
{
    if (X->n_cols != g->K[0] || X->n_rows != ch->n_docs)
        return datm_error_set(err, DATM_E_INVALID,
                              "decoder: sweep over (%lld, %lld) counts, chain has %lld docs, V = %lld",
                              (long long)X->n_rows, (long long)X->n_cols, (long long)ch->n_docs,
                              (long long)g->K[0]);
    if (ch->L != g->L || (s && s->L != g->L))
        return datm_error_set(err, DATM_E_INVALID, "decoder: chain/stats depth differs from model");
    const int T = s ? s->n_threads : omp_get_max_threads();
    const int64_t wl = datm_gbn_work_len(g);
    double *work = datm_alloc_array((size_t)(T * wl), sizeof(double), err);
    if (!work) return err->code;
    const int sample = ch->sweeps >= so->cp_after;
    const int expected = so->mode == DATM_AUG_EXPECTED;
    const int L = g->L;
    const int64_t B = X->n_rows;

#pragma omp parallel for num_threads(T) schedule(dynamic, 8)
    for (int64_t n = 0; n < B; n++) {
        const int tid = omp_get_thread_num();
        datm_rng rng;
        datm_gbn_doc_rng(&rng, key, n);
        double *th[DATM_MAX_LAYERS + 1] = {0};
        int32_t *mn[DATM_MAX_LAYERS + 1] = {0};
        for (int l = 1; l <= L; l++) {
            th[l] = ch->theta[l] + n * g->K[l];
            mn[l] = ch->m[l] + n * g->K[l];
        }
        int64_t b = X->row_ptr[n], e = X->row_ptr[n + 1];
        ch->loglik[n] = datm_gbn_upward_doc(g, X->col + b, X->val + b, e - b,
                                            (const double *const *)th, mn,
                                            s ? s->fx + (int64_t)tid * s->fx_len : NULL,
                                            s ? s->fx_off : NULL, expected, 1, &rng,
                                            work + (int64_t)tid * wl, NULL);
        double q[DATM_MAX_LAYERS + 2];
        double *cn = ch->c + n * (L + 2), *pn = ch->p + n * (L + 2);
        sample_cp(g, th, mn[1], cn, pn, q, sample, &rng);
        ch->q_top[n] = q[L + 1];
        downward(g, th, mn, cn, q, &rng);
    }
    if (s) {
        if (s->trk) s->trk_lost = 1;   /* counts written without a list */
        for (int64_t n = 0; n < B; n++) s->q_sum += ch->q_top[n];
        s->n_passes++;
        s->dirty = 1;
    }
    ch->sweeps++;
    datm_free(work);
    return DATM_OK;
}

double datm_gbn_chain_loglik(const datm_gbn_chain *ch)
{
    double s = 0.0;
    for (int64_t n = 0; n < ch->n_docs; n++) s += ch->loglik[n];
    return s;
}

/* ---------------------------------------------------------------- globals by Gibbs */

int datm_gbn_gibbs_globals(datm_gbn *g, datm_gbn_stats *s, uint64_t seed, int64_t iteration,
                           int sample_hyper, datm_error *err)
{
    if (s->n_passes <= 0)
        return datm_error_set(err, DATM_E_INVALID, "gibbs: no augmentation pass in the stats");
    datm_gbn_stats_reduce(s);
    const double inv = 1.0 / (double)s->n_passes;
    int64_t maxR = 1;
    for (int l = 1; l <= g->L; l++) maxR = g->K[l - 1] > maxR ? g->K[l - 1] : maxR;
    const int T = omp_get_max_threads();
    double *buf = datm_alloc_array((size_t)(T * 2 * maxR), sizeof(double), err);
    if (!buf) return err->code;

    /* Phi(l)_k ~ Dir(eta + A(l)_.k) (log-space draws in engine/rand: no underflow) */
    for (int l = 1; l <= g->L; l++) {
        const int64_t R = g->K[l - 1], C = g->K[l];
        const double *A = s->A[l];
        double *phi = g->phi[l];
        const double eta = g->eta[l];
#pragma omp parallel for num_threads(T) schedule(dynamic, 4)
        for (int64_t k = 0; k < C; k++) {
            double *alpha = buf + (int64_t)omp_get_thread_num() * 2 * maxR, *col = alpha + maxR;
            datm_rng rng;
            datm_rng_init2(&rng, seed, DATM_STREAM_BATCH, (uint64_t)iteration * 64 + (uint64_t)l,
                           (uint64_t)k);
            for (int64_t v = 0; v < R; v++) alpha[v] = eta + A[v * C + k] * inv;
            datm_rng_dirichlet(&rng, alpha, (int)R, col);
            double s2 = 0.0;
            for (int64_t v = 0; v < R; v++) {
                double x = col[v];
                col[v] = x > g->o.phi_floor ? x : g->o.phi_floor;
                s2 += col[v];
            }
            for (int64_t v = 0; v < R; v++) phi[v * C + k] = col[v] / s2;
        }
    }
    datm_free(buf);

    if (g->r) {
        const int64_t KL = g->K[g->L];
        const double Q = s->q_sum * inv;
        datm_rng rng;
        datm_rng_init2(&rng, seed, DATM_STREAM_BATCH, (uint64_t)iteration * 64 + 63, 0);
        double sum_r = 0.0;
        for (int64_t k = 0; k < KL; k++) {
            double x = datm_rng_gamma(&rng, g->gamma0 / (double)KL + s->tables[k] * inv) /
                       (g->c0 + Q);
            g->r[k] = x > g->o.r_floor && isfinite(x) ? x : g->o.r_floor;
            sum_r += g->r[k];
        }
        if (sample_hyper) {
            /* gamma0 | tables: CRT of each unit's tables, Pois(-gamma0 ln(1 - p')) */
            int64_t lsum = 0;
            for (int64_t k = 0; k < KL; k++) {
                int64_t tk = (int64_t)llround(s->tables[k] * inv);
                if (tk > 0) lsum += datm_rng_crt(&rng, tk, g->gamma0 / (double)KL);
            }
            double g0 = datm_rng_gamma(&rng, g->o.a0 + (double)lsum) /
                        (g->o.b0 + log1p(Q / g->c0));
            if (g0 > 0 && isfinite(g0)) g->gamma0 = g0;
            double c0 = datm_rng_gamma(&rng, g->o.e0 + g->gamma0) / (g->o.f0 + sum_r);
            if (c0 > 0 && isfinite(c0)) g->c0 = c0;
        }
    }
    datm_gbn_sync_f(g);
    return DATM_OK;
}

/* ---------------------------------------------------------------- log-likelihood */

double datm_gbn_loglik(const datm_gbn *g, const datm_csr *X, const double *theta1)
{
    const int64_t K1 = g->K[1], B = X->n_rows;
    double *per = malloc((size_t)(B > 0 ? B : 1) * sizeof(double));
    if (!per) return NAN;
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t n = 0; n < B; n++) {
        const double *th = theta1 + n * K1;
        double ll = -sum_d(th, K1);
        for (int64_t e = X->row_ptr[n]; e < X->row_ptr[n + 1]; e++) {
            const double *prow = g->phi[1] + (int64_t)X->col[e] * K1;
            double rate = 0.0;
            for (int64_t k = 0; k < K1; k++) rate += prow[k] * th[k];
            double x = X->val[e];
            ll += x * log(fmax(rate, 1e-300)) - lgamma(x + 1.0);
        }
        per[n] = ll;
    }
    double s = 0.0;
    for (int64_t n = 0; n < B; n++) s += per[n];
    free(per);
    return s;
}
