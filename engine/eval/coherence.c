/* engine/eval/coherence.c: the occurrence index of coherence (coherence.h) over documents or
 * sliding windows, the pair scores, NPMI per topic and topic diversity. Each indexed word gets
 * a bitset over the virtual documents, so D(a, b) is a popcount of an AND: N/64 operations
 * per pair. The measures of the suite and the topic-set driver are in coherence_suite.c. */
#include "eval/coherence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void datm_doc_index_free(datm_doc_index *ix)
{
    if (!ix) return;
    datm_free(ix->slot);
    datm_free(ix->bits);
    datm_free(ix->df);
    memset(ix, 0, sizeof *ix);
}

int datm_doc_index_build(const datm_csr *X, const int32_t *words, int64_t n_words,
                         datm_doc_index *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    const int64_t V = X->n_cols, N = X->n_rows;
    out->n_docs = N;
    out->n_vocab = V;
    out->n_blocks = (N + 63) / 64;
    out->slot = datm_alloc_array((size_t)(V ? V : 1), sizeof *out->slot, err);
    if (!out->slot) return DATM_E_NOMEM;
    for (int64_t v = 0; v < V; v++) out->slot[v] = -1;
    int64_t m = 0;
    for (int64_t i = 0; i < n_words; i++) {
        int32_t w = words[i];
        if (w < 0 || w >= V || out->slot[w] >= 0) continue;
        out->slot[w] = (int32_t)m++;
    }
    out->n_words = m;
    out->bits = datm_alloc_array((size_t)(m * out->n_blocks) + 1, sizeof *out->bits, err);
    out->df = datm_alloc_array((size_t)m + 1, sizeof *out->df, err);
    if (!out->bits || !out->df) { datm_doc_index_free(out); return DATM_E_NOMEM; }
    for (int64_t d = 0; d < N; d++) {
        for (int64_t p = X->row_ptr[d]; p < X->row_ptr[d + 1]; p++) {
            int32_t s = out->slot[X->col[p]];
            if (s < 0 || X->val[p] <= 0) continue;
            uint64_t *b = out->bits + (int64_t)s * out->n_blocks + d / 64;
            const uint64_t bit = (uint64_t)1 << (d % 64);
            if (!(*b & bit)) { *b |= bit; out->df[s]++; }
        }
    }
    return DATM_OK;
}

/* Slots of the given words in out->slot (V); returns the count of distinct indexed words. */
static int index_slots(datm_doc_index *out, int64_t V, const int32_t *words, int64_t n_words,
                       datm_error *err)
{
    out->slot = datm_alloc_array((size_t)(V ? V : 1), sizeof *out->slot, err);
    if (!out->slot) return -1;
    for (int64_t v = 0; v < V; v++) out->slot[v] = -1;
    int64_t m = 0;
    for (int64_t i = 0; i < n_words; i++) {
        int32_t w = words[i];
        if (w < 0 || w >= V || out->slot[w] >= 0) continue;
        out->slot[w] = (int32_t)m++;
    }
    out->n_words = m;
    return 0;
}

int datm_doc_index_build_windows(const datm_tokdocs *T, int64_t window, const int32_t *words,
                                 int64_t n_words, datm_doc_index *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    if (window < 1)
        return datm_error_set(err, DATM_E_INVALID, "coherence: window %lld (need >= 1)",
                              (long long)window);
    /* virtual documents: max(1, len - window + 1) windows per document, numbered in order */
    int64_t N = 0;
    for (int64_t d = 0; d < T->n_docs; d++) {
        const int64_t len = T->doc_ptr[d + 1] - T->doc_ptr[d];
        N += len > window ? len - window + 1 : 1;
    }
    out->n_docs = N;
    out->n_vocab = T->n_vocab;
    out->n_blocks = (N + 63) / 64;
    if (index_slots(out, T->n_vocab, words, n_words, err)) return DATM_E_NOMEM;
    const int64_t m = out->n_words;
    out->bits = datm_alloc_array((size_t)(m * out->n_blocks) + 1, sizeof *out->bits, err);
    out->df = datm_alloc_array((size_t)m + 1, sizeof *out->df, err);
    if (!out->bits || !out->df) { datm_doc_index_free(out); return DATM_E_NOMEM; }
    int64_t base = 0;
    for (int64_t d = 0; d < T->n_docs; d++) {
        const int64_t p0 = T->doc_ptr[d], len = T->doc_ptr[d + 1] - p0;
        const int64_t nw = len > window ? len - window + 1 : 1;
        for (int64_t p = 0; p < len; p++) {
            const int32_t w = T->tok[p0 + p];
            if (w < 0 || w >= T->n_vocab || out->slot[w] < 0) continue;
            uint64_t *b = out->bits + (int64_t)out->slot[w] * out->n_blocks;
            /* the windows s with s <= p < s + window, 0 <= s < nw */
            const int64_t s0 = p - window + 1 > 0 ? p - window + 1 : 0;
            const int64_t s1 = p < nw - 1 ? p : nw - 1;
            for (int64_t s = s0; s <= s1; s++) {
                const int64_t v = base + s;
                b[v / 64] |= (uint64_t)1 << (v % 64);
            }
        }
        base += nw;
    }
    for (int64_t i = 0; i < m; i++) {
        const uint64_t *b = out->bits + i * out->n_blocks;
        int64_t c = 0;
        for (int64_t j = 0; j < out->n_blocks; j++) c += __builtin_popcountll(b[j]);
        out->df[i] = c;
    }
    return DATM_OK;
}

int64_t datm_doc_index_df(const datm_doc_index *ix, int32_t w)
{
    if (w < 0 || w >= ix->n_vocab || ix->slot[w] < 0) return -1;
    return ix->df[ix->slot[w]];
}

int64_t datm_doc_index_co(const datm_doc_index *ix, int32_t a, int32_t b)
{
    if (a < 0 || b < 0 || a >= ix->n_vocab || b >= ix->n_vocab) return -1;
    if (ix->slot[a] < 0 || ix->slot[b] < 0) return -1;
    const uint64_t *x = ix->bits + (int64_t)ix->slot[a] * ix->n_blocks;
    const uint64_t *y = ix->bits + (int64_t)ix->slot[b] * ix->n_blocks;
    int64_t c = 0;
    for (int64_t i = 0; i < ix->n_blocks; i++) c += __builtin_popcountll(x[i] & y[i]);
    return c;
}

double datm_npmi_pair(int64_t d_ab, int64_t d_a, int64_t d_b, int64_t n_docs, double eps)
{
    if (d_a <= 0 || d_b <= 0 || n_docs <= 0) return NAN;
    const double N = (double)n_docs;
    const double pab = (double)d_ab / N + eps;
    const double pa = (double)d_a / N, pb = (double)d_b / N;
    const double den = -log(pab);
    if (den <= 0) return 1.0;   /* the pair occurs in every document */
    double v = log(pab / (pa * pb)) / den;
    return v;
}

double datm_pmi_pair(int64_t d_ab, int64_t d_a, int64_t d_b, int64_t n_docs, double eps)
{
    if (d_a <= 0 || d_b <= 0 || n_docs <= 0) return NAN;
    const double N = (double)n_docs;
    return log(((double)d_ab / N + eps) / (((double)d_a / N) * ((double)d_b / N)));
}

double datm_umass_pair(int64_t d_ab, int64_t d_cond, int64_t n_docs, double eps)
{
    if (d_cond <= 0 || n_docs <= 0) return NAN;
    const double N = (double)n_docs;
    return log(((double)d_ab / N + eps) / ((double)d_cond / N));
}

int datm_npmi_topics(const datm_doc_index *ix, const int32_t *top_ids, int64_t K, int stride,
                     int n, double eps, double *npmi, double *mean, datm_error *err)
{
    if (n > stride || n < 2)
        return datm_error_set(err, DATM_E_INVALID, "npmi: %d words per topic (need 2..%d)", n,
                              stride);
    double sum = 0;
    int64_t cnt = 0;
    for (int64_t k = 0; k < K; k++) {
        const int32_t *w = top_ids + k * stride;
        double s = 0;
        int64_t pairs = 0;
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                int64_t da = datm_doc_index_df(ix, w[i]), db = datm_doc_index_df(ix, w[j]);
                int64_t dab = datm_doc_index_co(ix, w[i], w[j]);
                if (da < 0 || db < 0)
                    return datm_error_set(err, DATM_E_INVALID,
                                          "npmi: topic %lld: word %d or %d not indexed",
                                          (long long)k, w[i], w[j]);
                double v = datm_npmi_pair(dab, da, db, ix->n_docs, eps);
                if (isnan(v)) continue;
                s += v;
                pairs++;
            }
        }
        npmi[k] = pairs ? s / (double)pairs : NAN;
        if (pairs) { sum += npmi[k]; cnt++; }
    }
    *mean = cnt ? sum / (double)cnt : NAN;
    return DATM_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

double datm_topic_diversity(const int32_t *top_ids, int64_t K, int stride, int n)
{
    if (K <= 0 || n <= 0 || n > stride) return NAN;
    datm_error err;
    int32_t *all = datm_alloc_array((size_t)(K * n), sizeof *all, &err);
    if (!all) return NAN;
    for (int64_t k = 0; k < K; k++) memcpy(all + k * n, top_ids + k * stride, (size_t)n * sizeof *all);
    qsort(all, (size_t)(K * n), sizeof *all, cmp_i32);
    int64_t uniq = 0;
    for (int64_t i = 0; i < K * n; i++) uniq += (i == 0 || all[i] != all[i - 1]);
    datm_free(all);
    return (double)uniq / (double)(K * n);
}
