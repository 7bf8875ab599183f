/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_eval */
/* tests/test_eval_topics.c: projected topics, top-n selection, layer links, NPMI coherence
 * and topic diversity (engine/eval/topics.h, coherence.h).
 * - projection: Phi(1)Phi(2)Phi(3) against a hand product and a naive triple loop; columns of
 *   the product sum to 1;
 * - top-n: order, ties by smaller id, NaN ranked last, against a full sort;
 * - NPMI: a 6-document corpus computed by hand from the document counts; a random corpus
 *   against a brute-force dense reference; edge cases (never co-occurring pair, a pair in
 *   every document, a word in no document);
 * - diversity: hand-counted unions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/coherence.h"
#include "eval/topics.h"
#include "test_check.h"


static uint64_t rng_state = 88172645463325252ULL;
static double unif(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* random (r, c) matrix with columns on the simplex */
static float *simplex_cols(int64_t r, int64_t c)
{
    float *m = malloc((size_t)(r * c) * sizeof *m);
    for (int64_t j = 0; j < c; j++) {
        double s = 0;
        for (int64_t i = 0; i < r; i++) { m[i * c + j] = (float)(unif() + 0.01); s += m[i * c + j]; }
        for (int64_t i = 0; i < r; i++) m[i * c + j] = (float)(m[i * c + j] / s);
    }
    return m;
}

/* a CSR from a dense (N, V) 0/1 pattern; counts = 1 + (n + v) % 3 */
static void csr_from_dense(const int *dense, int64_t N, int64_t V, datm_csr *X)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < N * V; i++) nnz += dense[i] != 0;
    X->n_rows = N; X->n_cols = V; X->nnz = nnz;
    X->row_ptr = calloc((size_t)N + 1, sizeof *X->row_ptr);
    X->col = malloc((size_t)(nnz + 1) * sizeof *X->col);
    X->val = malloc((size_t)(nnz + 1) * sizeof *X->val);
    int64_t p = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t v = 0; v < V; v++)
            if (dense[n * V + v]) { X->col[p] = (int32_t)v; X->val[p] = (float)(1 + (n + v) % 3); p++; }
        X->row_ptr[n + 1] = p;
    }
}
static void csr_release(datm_csr *X) { free(X->row_ptr); free(X->col); free(X->val); }

static void test_projection(void)
{
    datm_error err = {0};
    /* hand example: V=3, K1=2, K2=2 */
    const float p1[6] = {0.5f, 0.1f, 0.3f, 0.2f, 0.2f, 0.7f};   /* (3, 2) */
    const float p2[4] = {0.25f, 1.0f, 0.75f, 0.0f};              /* (2, 2) */
    const float *phi[2] = {p1, p2};
    int64_t k[3] = {3, 2, 2};
    float out[6];
    CHECK(datm_topics_project(2, phi, k, 2, out, &err) == 0);
    /* column 0: 0.25*col0(p1) + 0.75*col1(p1); column 1: col0(p1) */
    CHECK_NEAR(out[0], 0.25 * 0.5 + 0.75 * 0.1, 1e-7);
    CHECK_NEAR(out[2], 0.25 * 0.3 + 0.75 * 0.2, 1e-7);
    CHECK_NEAR(out[4], 0.25 * 0.2 + 0.75 * 0.7, 1e-7);
    CHECK_NEAR(out[1], 0.5, 1e-7);
    CHECK_NEAR(out[3], 0.3, 1e-7);
    CHECK_NEAR(out[5], 0.2, 1e-7);
    CHECK(datm_topics_project(2, phi, k, 1, out, &err) == 0);
    CHECK(memcmp(out, p1, sizeof p1) == 0);
    CHECK(datm_topics_project(2, phi, k, 3, out, &err) == DATM_E_INVALID);

    /* random 3-layer model vs a naive reference in double */
    const int64_t V = 37, K1 = 11, K2 = 7, K3 = 4;
    float *a = simplex_cols(V, K1), *b = simplex_cols(K1, K2), *c = simplex_cols(K2, K3);
    const float *ph[3] = {a, b, c};
    int64_t kk[4] = {V, K1, K2, K3};
    float *p3 = malloc((size_t)(V * K3) * sizeof *p3);
    CHECK(datm_topics_project(3, ph, kk, 3, p3, &err) == 0);
    double maxdiff = 0;
    for (int64_t v = 0; v < V; v++)
        for (int64_t t = 0; t < K3; t++) {
            double s = 0;
            for (int64_t i = 0; i < K1; i++)
                for (int64_t j = 0; j < K2; j++)
                    s += (double)a[v * K1 + i] * b[i * K2 + j] * c[j * K3 + t];
            maxdiff = fmax(maxdiff, fabs(s - p3[v * K3 + t]));
        }
    CHECK(maxdiff < 1e-7);
    for (int64_t t = 0; t < K3; t++) {
        double s = 0;
        for (int64_t v = 0; v < V; v++) s += p3[v * K3 + t];
        CHECK_NEAR(s, 1.0, 1e-5);   /* float columns on the simplex */
    }

    /* topic set: links of layer 2 are the top entries of Phi(2) columns */
    datm_topic_set ts;
    CHECK(datm_topic_set_build(3, ph, kk, 25, 3, 1, &ts, &err) == 0);
    CHECK(ts.n_layers == 3 && ts.layer[0].link_n == 0 && ts.layer[1].link_n == 3);
    CHECK(ts.layer[2].projected && memcmp(ts.layer[2].projected, p3, (size_t)(V * K3) * sizeof *p3) == 0);
    for (int64_t t = 0; t < K2; t++) {
        const int32_t *ids = ts.layer[1].link_ids + t * 3;
        for (int j = 0; j < 3; j++) CHECK(ts.layer[1].link_weights[t * 3 + j] == b[ids[j] * K2 + t]);
        int better = 0;   /* no entry outside the kept three is larger than the third */
        for (int64_t i = 0; i < K1; i++)
            if (i != ids[0] && i != ids[1] && i != ids[2] && b[i * K2 + t] > b[ids[2] * K2 + t]) better++;
        CHECK(better == 0);
    }
    for (int64_t t = 0; t < K3; t++)
        CHECK(ts.layer[2].top_weights[t * 25] == ts.layer[2].top_weights[t * 25] &&
              ts.layer[2].top_weights[t * 25] >= ts.layer[2].top_weights[t * 25 + 24]);
    datm_topic_set_free(&ts);
    free(a); free(b); free(c); free(p3);
}

static int cmp_desc(const void *x, const void *y)
{
    const float *a = x, *b = y;   /* pairs (value, row) */
    if (a[0] != b[0]) return a[0] > b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

static void test_top(void)
{
    datm_error err = {0};
    /* one column with ties and a NaN */
    const float m[6] = {0.2f, NAN, 0.5f, 0.2f, 0.5f, 0.1f};
    int32_t ids[6];
    float w[6];
    CHECK(datm_topics_top(m, 6, 1, 6, ids, w, &err) == 0);
    const int32_t want[6] = {2, 4, 0, 3, 5, 1};
    for (int i = 0; i < 6; i++) CHECK(ids[i] == want[i]);
    CHECK(datm_topics_top(m, 6, 1, 7, ids, w, &err) == DATM_E_INVALID);

    /* random matrix against a full sort */
    const int64_t R = 200, C = 5;
    float *r = malloc((size_t)(R * C) * sizeof *r);
    for (int64_t i = 0; i < R * C; i++) r[i] = (float)floor(unif() * 50);   /* many ties */
    int32_t tid[5 * 20];
    float tw[5 * 20];
    CHECK(datm_topics_top(r, R, C, 20, tid, tw, &err) == 0);
    for (int64_t c = 0; c < C; c++) {
        float pairs[200][2];
        for (int64_t i = 0; i < R; i++) { pairs[i][0] = r[i * C + c]; pairs[i][1] = (float)i; }
        qsort(pairs, (size_t)R, sizeof pairs[0], cmp_desc);
        for (int j = 0; j < 20; j++) {
            CHECK(tid[c * 20 + j] == (int32_t)pairs[j][1]);
            CHECK(tw[c * 20 + j] == pairs[j][0]);
        }
    }
    free(r);
}

static void test_npmi_hand(void)
{
    datm_error err = {0};
    /* 6 documents over 5 words (rows = documents):
     * d0 {0,1}  d1 {0,1,2}  d2 {0,2}  d3 {1,3}  d4 {3}  d5 {0,1,2,3}; word 4 occurs nowhere.
     * D(0)=4 D(1)=4 D(2)=3 D(3)=3; D(0,1)=3 D(0,2)=3 D(1,2)=2 D(0,3)=1 D(1,3)=2 D(2,3)=1 */
    const int dense[6 * 5] = {
        1, 1, 0, 0, 0,
        1, 1, 1, 0, 0,
        1, 0, 1, 0, 0,
        0, 1, 0, 1, 0,
        0, 0, 0, 1, 0,
        1, 1, 1, 1, 0,
    };
    datm_csr X;
    csr_from_dense(dense, 6, 5, &X);
    const int32_t words[5] = {0, 1, 2, 3, 4};
    datm_doc_index ix;
    CHECK(datm_doc_index_build(&X, words, 5, &ix, &err) == 0);
    CHECK(datm_doc_index_df(&ix, 0) == 4 && datm_doc_index_df(&ix, 2) == 3 && datm_doc_index_df(&ix, 4) == 0);
    CHECK(datm_doc_index_co(&ix, 0, 1) == 3 && datm_doc_index_co(&ix, 1, 2) == 2 && datm_doc_index_co(&ix, 2, 3) == 1);

    /* NPMI(a,b) = log(P(a,b) / (P(a) P(b))) / -log P(a,b) with P = D / 6 (eps negligible) */
    const double n01 = log((3.0 / 6) / ((4.0 / 6) * (4.0 / 6))) / -log(3.0 / 6);   /* log(9/8)/log 2 */
    const double n02 = log((3.0 / 6) / ((4.0 / 6) * (3.0 / 6))) / -log(3.0 / 6);   /* log(3/2)/log 2 */
    const double n12 = log((2.0 / 6) / ((4.0 / 6) * (3.0 / 6))) / -log(2.0 / 6);   /* 0 */
    CHECK_NEAR(n01, log(9.0 / 8) / log(2.0), 1e-15);
    CHECK_NEAR(n12, 0.0, 1e-15);
    CHECK_NEAR(datm_npmi_pair(3, 4, 4, 6, DATM_NPMI_EPS), n01, 1e-11);
    CHECK_NEAR(datm_npmi_pair(2, 4, 3, 6, DATM_NPMI_EPS), 0.0, 1e-11);
    /* a pair that never co-occurs: log(eps / (P(a)P(b))) / -log(eps) */
    CHECK_NEAR(datm_npmi_pair(0, 2, 3, 6, 1e-12), log(1e-12 / (2.0 / 6 * 3.0 / 6)) / -log(1e-12), 1e-12);
    CHECK(datm_npmi_pair(0, 2, 3, 6, 1e-12) < -0.9);
    CHECK_NEAR(datm_npmi_pair(6, 6, 6, 6, 1e-12), 1.0, 0);     /* in every document */
    CHECK(isnan(datm_npmi_pair(0, 0, 3, 6, 1e-12)));    /* word in no document */

    /* topics (stride 4): t0 = {0, 1, 2}, t1 = {4, 0, 1}: pairs with word 4 are left out */
    const int32_t top[2 * 4] = {0, 1, 2, 3, 4, 0, 1, 2};
    double npmi[2], mean;
    CHECK(datm_npmi_topics(&ix, top, 2, 4, 3, DATM_NPMI_EPS, npmi, &mean, &err) == 0);
    CHECK_NEAR(npmi[0], (n01 + n02 + n12) / 3, 1e-11);
    CHECK_NEAR(npmi[1], n01, 1e-11);
    CHECK_NEAR(mean, ((n01 + n02 + n12) / 3 + n01) / 2, 1e-11);
    /* top 4 of t0 adds word 3: D(0,3)=1 D(1,3)=2 D(2,3)=1 */
    const double n03 = log((1.0 / 6) / ((4.0 / 6) * (3.0 / 6))) / -log(1.0 / 6);
    const double n13 = log((2.0 / 6) / ((4.0 / 6) * (3.0 / 6))) / -log(2.0 / 6);
    const double n23 = log((1.0 / 6) / ((3.0 / 6) * (3.0 / 6))) / -log(1.0 / 6);
    CHECK(datm_npmi_topics(&ix, top, 1, 4, 4, DATM_NPMI_EPS, npmi, &mean, &err) == 0);
    CHECK_NEAR(npmi[0], (n01 + n02 + n12 + n03 + n13 + n23) / 6, 1e-11);
    datm_doc_index_free(&ix);

    /* diversity: t0 {0,1,2,3}, t1 {4,0,1,2}: 5 unique of 8; first 2: {0,1},{4,0} 3 of 4 */
    CHECK_NEAR(datm_topic_diversity(top, 2, 4, 4), 5.0 / 8, 0);
    CHECK_NEAR(datm_topic_diversity(top, 2, 4, 2), 3.0 / 4, 0);
    CHECK_NEAR(datm_topic_diversity(top, 1, 4, 4), 1.0, 0);
    csr_release(&X);
}

static void test_npmi_random(void)
{
    datm_error err = {0};
    /* 150 documents (crosses 64-bit block boundaries), 40 words, density ~0.2 */
    const int64_t N = 150, V = 40;
    int *dense = calloc((size_t)(N * V), sizeof *dense);
    for (int64_t i = 0; i < N * V; i++) dense[i] = unif() < 0.2 + 0.3 * ((i % V) < 5);
    datm_csr X;
    csr_from_dense(dense, N, V, &X);
    const int K = 6, n = 10;
    int32_t top[6 * 10];
    for (int i = 0; i < K * n; i++) top[i] = (int32_t)((i * 7 + i / n) % V);
    datm_doc_index ix;
    CHECK(datm_doc_index_build(&X, top, K * n, &ix, &err) == 0);
    double npmi[6], mean;
    CHECK(datm_npmi_topics(&ix, top, K, n, n, 1e-12, npmi, &mean, &err) == 0);
    double msum = 0;
    int mcnt = 0;
    for (int k = 0; k < K; k++) {
        double s = 0;
        int pairs = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                int a = top[k * n + i], b = top[k * n + j], da = 0, db = 0, dab = 0;
                for (int64_t d = 0; d < N; d++) {
                    da += dense[d * V + a]; db += dense[d * V + b];
                    dab += dense[d * V + a] && dense[d * V + b];
                }
                if (!da || !db) continue;
                double pab = (double)dab / N + 1e-12;
                s += log(pab / ((double)da / N * (double)db / N)) / -log(pab);
                pairs++;
            }
        CHECK_NEAR(npmi[k], s / pairs, 1e-12);
        CHECK(npmi[k] >= -1 && npmi[k] <= 1);
        msum += s / pairs;
        mcnt++;
    }
    CHECK_NEAR(mean, msum / mcnt, 1e-12);
    datm_doc_index_free(&ix);

    /* coherence on a topic set: layer values equal the direct calls */
    const int64_t K1 = 8, K2 = 3;
    float *a = simplex_cols(V, K1), *b = simplex_cols(K1, K2);
    const float *ph[2] = {a, b};
    int64_t kk[3] = {V, K1, K2};
    datm_topic_set ts;
    CHECK(datm_topic_set_build(2, ph, kk, 25, 2, 0, &ts, &err) == 0);
    CHECK(datm_topic_set_coherence(&ts, &X, 10, 25, &err) == 0);
    for (int l = 0; l < 2; l++) {
        datm_topic_layer *t = &ts.layer[l];
        CHECK(t->npmi != NULL);
        datm_doc_index ix2;
        CHECK(datm_doc_index_build(&X, t->top_ids, t->k * t->top_n, &ix2, &err) == 0);
        double *np = malloc((size_t)t->k * sizeof *np), m2;
        CHECK(datm_npmi_topics(&ix2, t->top_ids, t->k, t->top_n, 10, 1e-12, np, &m2, &err) == 0);
        CHECK_NEAR(t->npmi_mean, m2, 1e-12);
        CHECK_NEAR(t->diversity, datm_topic_diversity(t->top_ids, t->k, 25, 25), 0);
        free(np);
        datm_doc_index_free(&ix2);
    }
    /* vocabulary mismatch is an error */
    datm_csr Y = X;
    Y.n_cols = V + 1;
    CHECK(datm_topic_set_coherence(&ts, &Y, 10, 25, &err) == DATM_E_INVALID);
    datm_topic_set_free(&ts);
    free(a); free(b);
    csr_release(&X);
    free(dense);
}

int main(void)
{
    test_projection();
    test_top();
    test_npmi_hand();
    test_npmi_random();
    return check_result();
}
