/* engine/eval/topic_diag.c: per-topic diagnostics (formulas in topic_diag.h): token usage,
 * the unused flag, nearest neighbours by cosine, KL from the corpus distribution. Sums over
 * documents run in fixed blocks added in order, so the values do not depend on the number of
 * threads. Letters: V words, N documents, K topics of the layer at hand. */
#include "eval/topic_diag.h"

#include <math.h>
#include <string.h>

#include "math/math.h"

#define USAGE_BLOCK 256   /* documents per partial sum */

int datm_topics_nearest(const float *proj, int64_t V, int64_t K, int32_t *nearest, double *cos,
                        datm_error *err)
{
    for (int64_t k = 0; k < K; k++) { nearest[k] = -1; cos[k] = NAN; }
    if (K < 2) return DATM_OK;
    /* pt (K, V): the columns of proj as rows, for contiguous dot products */
    float *pt = datm_alloc_array((size_t)(K * V), sizeof *pt, err);
    double *norm = datm_alloc_array((size_t)K, sizeof *norm, err);
    double *c = datm_alloc_array((size_t)(K * K), sizeof *c, err);
    if (!pt || !norm || !c) { datm_free(pt); datm_free(norm); datm_free(c); return DATM_E_NOMEM; }
    for (int64_t v = 0; v < V; v++)
        for (int64_t k = 0; k < K; k++) pt[k * V + v] = proj[v * K + k];
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t a = 0; a < K; a++) {
        norm[a] = sqrt(datm_dot_f32_f64(pt + a * V, pt + a * V, V));
        for (int64_t b = 0; b < a; b++) c[a * K + b] = datm_dot_f32_f64(pt + a * V, pt + b * V, V);
    }
    for (int64_t a = 0; a < K; a++) {
        double best = -INFINITY;
        for (int64_t b = 0; b < K; b++) {
            if (b == a) continue;
            const double dot = a > b ? c[a * K + b] : c[b * K + a];
            const double den = norm[a] * norm[b];
            const double v = den > 0 ? dot / den : 0.0;
            if (v > best) { best = v; nearest[a] = (int32_t)b; }
        }
        cos[a] = best;
    }
    datm_free(pt);
    datm_free(norm);
    datm_free(c);
    return DATM_OK;
}

/* out (K) += the token shares of documents [d0, d1) of X for the projected topics proj (V, K)
 * and theta (N, K). */
static void usage_block(const datm_csr *X, const float *proj, const float *theta, int64_t K,
                        int64_t d0, int64_t d1, double *out, double *mass, double *w)
{
    for (int64_t d = d0; d < d1; d++) {
        const float *th = theta + d * K;
        for (int64_t k = 0; k < K; k++) mass[k] += th[k];
        for (int64_t p = X->row_ptr[d]; p < X->row_ptr[d + 1]; p++) {
            const float *pr = proj + (int64_t)X->col[p] * K;
            double s = 0;
            for (int64_t k = 0; k < K; k++) { w[k] = (double)pr[k] * th[k]; s += w[k]; }
            if (!(s > 0)) continue;   /* a token no topic explains (theta all 0) */
            const double f = X->val[p] / s;
            for (int64_t k = 0; k < K; k++) out[k] += w[k] * f;
        }
    }
}

static void normalise(double *x, int64_t K)
{
    double s = 0;
    for (int64_t k = 0; k < K; k++) s += x[k];
    for (int64_t k = 0; k < K; k++) x[k] = s > 0 ? x[k] / s : NAN;
}

int datm_topic_usage(const datm_csr *X, int n_layers, const float *const *phi,
                     const int64_t *k, const float *const *theta, double *const *tokens,
                     double *const *mass, datm_error *err)
{
    const int64_t V = k[0], N = X->n_rows;
    if (X->n_cols != V)
        return datm_error_set(err, DATM_E_INVALID, "topic usage: documents have %lld words, "
                              "topics %lld", (long long)X->n_cols, (long long)V);
    const int64_t nb = (N + USAGE_BLOCK - 1) / USAGE_BLOCK;
    int rc = DATM_OK;
    for (int l = 1; l <= n_layers && !rc; l++) {
        const int64_t K = k[l];
        float *proj = datm_alloc_array((size_t)(V * K), sizeof *proj, err);
        double *part = datm_alloc_array((size_t)((nb + 1) * K), sizeof *part, err);
        double *pmass = datm_alloc_array((size_t)((nb + 1) * K), sizeof *pmass, err);
        if (!proj || !part || !pmass) rc = DATM_E_NOMEM;
        if (!rc) rc = datm_topics_project(n_layers, phi, k, l, proj, err);
        if (!rc) {
#pragma omp parallel
            {
                datm_error e2;
                double *w = datm_alloc_array((size_t)K, sizeof *w, &e2);
#pragma omp for schedule(dynamic, 1)
                for (int64_t b = 0; b < nb; b++)
                    if (w)
                        usage_block(X, proj, theta[l - 1], K, b * USAGE_BLOCK,
                                    DATM_MIN(N, (b + 1) * USAGE_BLOCK), part + b * K,
                                    pmass + b * K, w);
                if (!w) {
#pragma omp atomic write
                    rc = DATM_E_NOMEM;
                }
                datm_free(w);
            }
            if (rc) datm_error_set(err, rc, "topic usage: out of memory");
        }
        if (!rc) {
            for (int64_t j = 0; j < K; j++) tokens[l - 1][j] = mass[l - 1][j] = 0;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t j = 0; j < K; j++) {
                    tokens[l - 1][j] += part[b * K + j];
                    mass[l - 1][j] += pmass[b * K + j];
                }
            normalise(tokens[l - 1], K);
            normalise(mass[l - 1], K);
        }
        datm_free(proj);
        datm_free(part);
        datm_free(pmass);
    }
    return rc;
}

void datm_topic_set_flag_unused(datm_topic_set *s, double unused_share)
{
    s->unused_share = unused_share;
    for (int l = 0; l < s->n_layers; l++) {
        datm_topic_layer *t = &s->layer[l];
        t->n_unused = 0;
        if (!t->usage || !t->unused) continue;
        for (int64_t k = 0; k < t->k; k++) {
            /* NAN usage (no tokens at all) is not evidence of disuse */
            t->unused[k] = t->usage[k] < unused_share / (double)t->k;
            t->n_unused += t->unused[k];
        }
    }
}

int datm_topic_set_usage(datm_topic_set *s, int layer, const double *usage,
                         const double *usage_theta, double unused_share, datm_error *err)
{
    if (layer < 1 || layer > s->n_layers)
        return datm_error_set(err, DATM_E_INVALID, "topic usage: layer %d of %d", layer,
                              s->n_layers);
    datm_topic_layer *t = &s->layer[layer - 1];
    const size_t K = (size_t)t->k;
    if (!t->usage) t->usage = datm_alloc_array(K + 1, sizeof *t->usage, err);
    if (!t->unused) t->unused = datm_alloc_array(K + 1, sizeof *t->unused, err);
    if (usage_theta && !t->usage_theta)
        t->usage_theta = datm_alloc_array(K + 1, sizeof *t->usage_theta, err);
    if (!t->usage || !t->unused || (usage_theta && !t->usage_theta)) return DATM_E_NOMEM;
    memcpy(t->usage, usage, K * sizeof *usage);
    if (usage_theta) memcpy(t->usage_theta, usage_theta, K * sizeof *usage_theta);
    datm_topic_set_flag_unused(s, unused_share);
    return DATM_OK;
}

int datm_topic_set_corpus_kl(datm_topic_set *s, int n_layers, const float *const *phi,
                             const int64_t *k, const double *counts, datm_error *err)
{
    const int64_t V = k[0];
    double total = 0;
    for (int64_t v = 0; v < V; v++) total += counts[v];
    const double den = total + 0.5 * (double)V;
    int rc = DATM_OK;
    for (int l = 1; l <= n_layers && l <= s->n_layers && !rc; l++) {
        datm_topic_layer *t = &s->layer[l - 1];
        const int64_t K = k[l];
        float *proj = t->projected;
        if (!proj) {
            proj = datm_alloc_array((size_t)(V * K), sizeof *proj, err);
            if (!proj) return DATM_E_NOMEM;
            rc = datm_topics_project(n_layers, phi, k, l, proj, err);
        }
        datm_free(t->corpus_kl);
        t->corpus_kl = rc ? NULL : datm_alloc_array((size_t)K + 1, sizeof *t->corpus_kl, err);
        if (!rc && !t->corpus_kl) rc = DATM_E_NOMEM;
        for (int64_t j = 0; !rc && j < K; j++) {
            double kl = 0, mass = 0;
            for (int64_t v = 0; v < V; v++) {
                const double q = proj[v * K + j];
                if (q <= 0) continue;
                kl += q * log(q * den / (counts[v] + 0.5));
                mass += q;
            }
            /* the projected column sums to 1 up to float rounding */
            t->corpus_kl[j] = mass > 0 ? kl / mass + log(1.0 / mass) : NAN;
        }
        if (proj != t->projected) datm_free(proj);
    }
    return rc;
}
