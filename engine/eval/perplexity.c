/* engine/eval/perplexity.c: per-heldout-word perplexity from a Poisson rate averaged over
 * posterior samples (docs/reference.md 4.5; paper eq. perplexity; docs/reference.md 4.1-4.3).
 *
 * The rate Phi(1) theta is only needed where tokens are scored, so the accumulator keeps it
 * on the union pattern of the observed and held-out parts, plus the normaliser
 * sum_v (Phi theta)_vn = sum_k theta_kn per document (columns of Phi(1) sum to 1). Numerators
 * and normalisers are summed separately over samples and divided at the end: the ratio of
 * sums of the reference code. */
#include "eval/perplexity.h"
#include "math/math.h"

#include <math.h>
#include <string.h>

/* Union of the column sets of row n of a and b (b may be NULL); writes into out (may be NULL
 * to count). Returns the count. */
static int64_t merge_row(const datm_csr *a, const datm_csr *b, int64_t n, int32_t *out)
{
    int64_t i = a->row_ptr[n], ie = a->row_ptr[n + 1];
    int64_t j = b ? b->row_ptr[n] : 0, je = b ? b->row_ptr[n + 1] : 0;
    int64_t c = 0;
    while (i < ie || j < je) {
        int32_t v;
        if (j >= je || (i < ie && a->col[i] < b->col[j])) v = a->col[i++];
        else if (i >= ie || b->col[j] < a->col[i]) v = b->col[j++];
        else { v = a->col[i]; i++; j++; }
        if (out) out[c] = v;
        c++;
    }
    return c;
}

int datm_rate_accum_init(datm_rate_accum *a, const datm_csr *obs, const datm_csr *heldout,
                         datm_error *err)
{
    memset(a, 0, sizeof *a);
    if (heldout && (heldout->n_rows != obs->n_rows || heldout->n_cols != obs->n_cols))
        return datm_error_set(err, DATM_E_INVALID,
                              "perplexity: observed part is (%lld, %lld), held-out part (%lld, %lld)",
                              (long long)obs->n_rows, (long long)obs->n_cols,
                              (long long)heldout->n_rows, (long long)heldout->n_cols);
    const int64_t N = obs->n_rows;
    int64_t nnz = 0;
    for (int64_t n = 0; n < N; n++) nnz += merge_row(obs, heldout, n, NULL);
    int rc = datm_csr_alloc(&a->pattern, N, obs->n_cols, nnz, err);
    if (rc) return rc;
    a->pattern.row_ptr[0] = 0;
    for (int64_t n = 0; n < N; n++) {
        int64_t c = merge_row(obs, heldout, n, a->pattern.col + a->pattern.row_ptr[n]);
        a->pattern.row_ptr[n + 1] = a->pattern.row_ptr[n] + c;
    }
    for (int64_t e = 0; e < nnz; e++) a->pattern.val[e] = 1.0f;
    a->rate = datm_alloc_array((size_t)(nnz > 0 ? nnz : 1), sizeof(double), err);
    a->norm = a->rate ? datm_alloc_array((size_t)(N > 0 ? N : 1), sizeof(double), err) : NULL;
    if (!a->norm) {
        datm_rate_accum_free(a);
        return err->code;
    }
    a->n_docs = N;
    a->n_vocab = obs->n_cols;
    a->n_samples = 0;
    return DATM_OK;
}

void datm_rate_accum_free(datm_rate_accum *a)
{
    datm_csr_free(&a->pattern);
    datm_free(a->rate);
    datm_free(a->norm);
    datm_free(a->theta_sum);
    memset(a, 0, sizeof *a);
}

void datm_rate_accum_reset(datm_rate_accum *a)
{
    if (a->pattern.nnz > 0) memset(a->rate, 0, (size_t)a->pattern.nnz * sizeof(double));
    if (a->n_docs > 0) memset(a->norm, 0, (size_t)a->n_docs * sizeof(double));
    a->n_samples = 0;
    a->fixed_phi = NULL;
}

/* sum_k phi[k] t[k] with four partial sums (a fixed order: deterministic). */
static double dot_f_d(const float *phi, const double *t, int64_t K)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        s0 += (double)phi[k] * t[k];
        s1 += (double)phi[k + 1] * t[k + 1];
        s2 += (double)phi[k + 2] * t[k + 2];
        s3 += (double)phi[k + 3] * t[k + 3];
    }
    for (; k < K; k++) s0 += (double)phi[k] * t[k];
    return (s0 + s1) + (s2 + s3);
}

/* The pending fixed-Phi rate of entry e of document d (0 when none is pending). */
static inline double fixed_rate(const datm_rate_accum *a, int64_t d, int64_t e)
{
    if (!a->fixed_phi) return 0.0;
    return dot_f_d(a->fixed_phi + (int64_t)a->pattern.col[e] * a->fixed_K,
                   a->theta_sum + d * a->fixed_K, a->fixed_K);
}

/* Folds the pending fixed-Phi sum into rate. */
static void fixed_fold(datm_rate_accum *a)
{
    if (!a->fixed_phi) return;
    const datm_csr *P = &a->pattern;
#pragma omp parallel for schedule(dynamic, 32)
    for (int64_t d = 0; d < a->n_docs; d++)
        for (int64_t e = P->row_ptr[d]; e < P->row_ptr[d + 1]; e++) a->rate[e] += fixed_rate(a, d, e);
    a->fixed_phi = NULL;
}

int datm_rate_accum_add_fixed(datm_rate_accum *a, const float *phi1, const float *theta,
                              int64_t K, datm_error *err)
{
    if (a->fixed_phi && (a->fixed_phi != phi1 || a->fixed_K != K)) fixed_fold(a);
    if (!a->fixed_phi) {
        if (!a->theta_sum || a->fixed_K != K) {
            datm_free(a->theta_sum);
            a->theta_sum = datm_alloc_array((size_t)(a->n_docs > 0 ? a->n_docs : 1) * (size_t)K,
                                            sizeof(double), err);
            if (!a->theta_sum) return DATM_E_NOMEM;
        } else {
            memset(a->theta_sum, 0, (size_t)(a->n_docs * K) * sizeof(double));
        }
        a->fixed_phi = phi1;
        a->fixed_K = K;
    }
    a->n_samples++;
#pragma omp parallel for schedule(static)
    for (int64_t d = 0; d < a->n_docs; d++) {
        const float *th = theta + d * K;
        double *ts = a->theta_sum + d * K, s = 0.0;
        for (int64_t k = 0; k < K; k++) {
            ts[k] += th[k];
            s += th[k];
        }
        a->norm[d] += s;
    }
    return DATM_OK;
}

void datm_rate_accum_add_rows(datm_rate_accum *a, const float *phi1, const float *theta,
                              int64_t K, int64_t first, int64_t n)
{
    DATM_ASSERT(first >= 0 && n >= 0 && first + n <= a->n_docs);
    const datm_csr *P = &a->pattern;
    if (first == 0) a->n_samples++;   /* a sample added in chunks starts at document 0 */
#pragma omp parallel for schedule(dynamic, 32)
    for (int64_t i = 0; i < n; i++) {
        const int64_t d = first + i;
        const float *th = theta + i * K;
        double s = 0.0;
        for (int64_t k = 0; k < K; k++) s += th[k];
        a->norm[d] += s;
        /* the rate of every scored entry: a vectorised double-accumulated dot (one chain of
         * K dependent additions was ~40% of the test time at S = 3000) */
        for (int64_t e = P->row_ptr[d]; e < P->row_ptr[d + 1]; e++)
            a->rate[e] += datm_dot_f32_f64(phi1 + (int64_t)P->col[e] * K, th, K);
    }
}

void datm_rate_accum_add(datm_rate_accum *a, const float *phi1, const float *theta, int64_t K)
{
    datm_rate_accum_add_rows(a, phi1, theta, K, 0, a->n_docs);
}

/* log p of y's entries of document d, p = rate / norm (log floored at 1e-300), and their
 * token count. */
static double doc_loglik(const datm_rate_accum *a, const datm_csr *y, int64_t d, double *tok)
{
    const datm_csr *P = &a->pattern;
    int64_t e = P->row_ptr[d];
    const int64_t ee = P->row_ptr[d + 1];
    double ll = 0.0;
    for (int64_t j = y->row_ptr[d]; j < y->row_ptr[d + 1]; j++) {
        while (e < ee && P->col[e] < y->col[j]) e++;
        DATM_ASSERT(e < ee && P->col[e] == y->col[j]);   /* y must lie in the pattern */
        const double r = a->rate[e] + fixed_rate(a, d, e);
        double p = a->norm[d] > 0 ? r / a->norm[d] : 0.0;
        ll += (double)y->val[j] * log(p > 1e-300 ? p : 1e-300);
        *tok += y->val[j];
    }
    return ll;
}

double datm_rate_accum_perplexity(const datm_rate_accum *a, const datm_csr *y)
{
    DATM_ASSERT(y->n_rows == a->n_docs && y->n_cols == a->n_vocab);
    if (a->n_samples <= 0) return NAN;
    double ll = 0.0, tok = 0.0;
    if (!a->fixed_phi) {
        /* one running sum over all entries in order */
        const datm_csr *P = &a->pattern;
        for (int64_t d = 0; d < a->n_docs; d++) {
            int64_t e = P->row_ptr[d];
            const int64_t ee = P->row_ptr[d + 1];
            for (int64_t j = y->row_ptr[d]; j < y->row_ptr[d + 1]; j++) {
                while (e < ee && P->col[e] < y->col[j]) e++;
                DATM_ASSERT(e < ee && P->col[e] == y->col[j]);   /* y must lie in the pattern */
                double p = a->norm[d] > 0 ? a->rate[e] / a->norm[d] : 0.0;
                ll += (double)y->val[j] * log(p > 1e-300 ? p : 1e-300);
                tok += y->val[j];
            }
        }
        return tok > 0 ? exp(-ll / tok) : NAN;
    }
    /* a pending fixed-Phi sum: the rates cost O(K) each, so per document in parallel, the
     * documents' sums added in order (thread-count independent) */
    double *per = datm_alloc_array((size_t)(a->n_docs > 0 ? a->n_docs : 1) * 2, sizeof(double), NULL);
    DATM_ASSERT(per != NULL);
#pragma omp parallel for schedule(dynamic, 32)
    for (int64_t d = 0; d < a->n_docs; d++) per[2 * d] = doc_loglik(a, y, d, &per[2 * d + 1]);
    for (int64_t d = 0; d < a->n_docs; d++) {
        ll += per[2 * d];
        tok += per[2 * d + 1];
    }
    datm_free(per);
    return tok > 0 ? exp(-ll / tok) : NAN;
}

int datm_rate_accum_place(datm_rate_accum *full, const datm_rate_accum *part, int64_t first,
                          datm_error *err)
{
    DATM_ASSERT(first >= 0 && first + part->n_docs <= full->n_docs);
    const int64_t e0 = full->pattern.row_ptr[first];
    DATM_ASSERT(full->pattern.row_ptr[first + part->n_docs] - e0 == part->pattern.nnz);
    if (part->pattern.nnz > 0)
        memcpy(full->rate + e0, part->rate, (size_t)part->pattern.nnz * sizeof(double));
    if (part->n_docs > 0)
        memcpy(full->norm + first, part->norm, (size_t)part->n_docs * sizeof(double));
    full->n_samples = part->n_samples;
    full->fixed_phi = part->fixed_phi;
    if (!part->fixed_phi) return DATM_OK;
    const int64_t K = part->fixed_K;
    if (!full->theta_sum || full->fixed_K != K) {
        datm_free(full->theta_sum);
        full->theta_sum = datm_alloc_array((size_t)(full->n_docs > 0 ? full->n_docs : 1) *
                                           (size_t)K, sizeof(double), err);
        if (!full->theta_sum) {
            full->fixed_phi = NULL;
            return DATM_E_NOMEM;
        }
    }
    full->fixed_K = K;
    if (part->n_docs > 0)
        memcpy(full->theta_sum + first * K, part->theta_sum,
               (size_t)(part->n_docs * K) * sizeof(double));
    return DATM_OK;
}
