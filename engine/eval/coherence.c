/* engine/eval/coherence.c: NPMI coherence from document co-occurrence and topic diversity
 * (formulas in coherence.h). Each indexed word gets a bitset over documents, so D(a, b) is a
 * popcount of an AND: N/64 operations per pair. */
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

int datm_topic_set_coherence(datm_topic_set *s, const datm_csr *X, int n_npmi, int n_div,
                             datm_error *err)
{
    if (X->n_cols != s->n_vocab)
        return datm_error_set(err, DATM_E_INVALID,
                              "coherence: reference corpus has %lld words, topics have %lld",
                              (long long)X->n_cols, (long long)s->n_vocab);
    /* index the union of all layers' scored words once */
    int64_t total = 0;
    for (int l = 0; l < s->n_layers; l++)
        total += s->layer[l].k * DATM_MIN(n_npmi, s->layer[l].top_n);
    int32_t *words = datm_alloc_array((size_t)total + 1, sizeof *words, err);
    if (!words) return DATM_E_NOMEM;
    int64_t m = 0;
    for (int l = 0; l < s->n_layers; l++) {
        const datm_topic_layer *t = &s->layer[l];
        const int nn = DATM_MIN(n_npmi, t->top_n);
        for (int64_t k = 0; k < t->k; k++)
            for (int j = 0; j < nn; j++) words[m++] = t->top_ids[k * t->top_n + j];
    }
    datm_doc_index ix;
    int rc = datm_doc_index_build(X, words, m, &ix, err);
    datm_free(words);
    if (rc) return rc;
    for (int l = 0; l < s->n_layers && !rc; l++) {
        datm_topic_layer *t = &s->layer[l];
        datm_free(t->npmi);
        t->npmi = datm_alloc_array((size_t)t->k + 1, sizeof *t->npmi, err);
        if (!t->npmi) { rc = DATM_E_NOMEM; break; }
        const int nn = DATM_MIN(n_npmi, t->top_n);
        if (nn >= 2)
            rc = datm_npmi_topics(&ix, t->top_ids, t->k, t->top_n, nn, DATM_NPMI_EPS, t->npmi,
                                  &t->npmi_mean, err);
        else {
            for (int64_t k = 0; k < t->k; k++) t->npmi[k] = NAN;
            t->npmi_mean = NAN;
        }
        t->diversity = datm_topic_diversity(t->top_ids, t->k, t->top_n,
                                            DATM_MIN(n_div, t->top_n));
    }
    datm_doc_index_free(&ix);
    return rc;
}
