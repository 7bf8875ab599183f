/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_eval */
/* tests/test_eval_coherence.c: the coherence suite of engine/eval/coherence.h.
 * - hand values: a 4-document corpus whose document counts are written out below; NPMI, UCI,
 *   UMass and C_V of three topics computed from those counts by the formulas (a word absent
 *   from the corpus is left out; a topic with one scored word is NAN);
 * - sliding windows: the windows of a token sequence counted by hand (positions without a
 *   vocabulary word, a document shorter than the window), and random sequences against a
 *   brute-force count of every window;
 * - gensim: per-topic figures of gensim 4.2.0's CoherenceModel (u_mass, c_uci, c_npmi, c_v)
 *   on the fixed case of tests/data/coherence_gensim.txt (made by make_coherence_fixture.py
 *   with Debian's python3-gensim), within 1e-9;
 * - the topic-set driver: all/live means, settings recorded, a window without token order is
 *   an error; measure lists parse (and unknown names fail). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/coherence.h"
#include "test_check.h"

#define EPS 1e-12
#define NEAR(a, b, tol) CHECK(fabs((a) - (b)) <= (tol) * (1 + fabs(b)), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static double unif(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* CSR from a dense 0/1 matrix (N, V) */
static void csr_from_dense(const int *dense, int64_t N, int64_t V, datm_csr *X)
{
    datm_error err;
    int64_t nnz = 0;
    for (int64_t i = 0; i < N * V; i++) nnz += dense[i] != 0;
    datm_csr_alloc(X, N, V, nnz, &err);
    int64_t p = 0;
    for (int64_t d = 0; d < N; d++) {
        X->row_ptr[d] = p;
        for (int64_t v = 0; v < V; v++)
            if (dense[d * V + v]) { X->col[p] = (int32_t)v; X->val[p] = (float)dense[d * V + v]; p++; }
    }
    X->row_ptr[N] = p;
}

static double npmi_c(double dab, double da, double db, double n)
{
    const double pab = dab / n + EPS;
    return log(pab / (da / n * db / n)) / -log(pab);
}
static double pmi_c(double dab, double da, double db, double n)
{
    return log((dab / n + EPS) / (da / n * db / n));
}
static double umass_c(double dab, double dcond, double n) { return log((dab / n + EPS) / (dcond / n)); }

/* C_V from an NPMI matrix S (m x m, diagonal included), as in coherence.h */
static double cv_c(const double *S, int m)
{
    double u[8] = {0}, s = 0;
    for (int j = 0; j < m; j++) for (int i = 0; i < m; i++) u[j] += S[i * m + j];
    for (int i = 0; i < m; i++) {
        double ab = 0, aa = 0, bb = 0;
        for (int j = 0; j < m; j++) { ab += S[i * m + j] * u[j]; aa += S[i * m + j] * S[i * m + j]; bb += u[j] * u[j]; }
        s += ab / sqrt(aa * bb);
    }
    return s / m;
}

static void test_hand(void)
{
    /* words a b c d e f = 0..5; f occurs nowhere.
     *   d0: a b c    d1: a b    d2: a c d    d3: b e
     * D(a) 3, D(b) 3, D(c) 2, D(d) 1, D(e) 1, D(f) 0;
     * D(a,b) 2, D(a,c) 2, D(b,c) 1, D(a,d) 1, D(c,d) 1, D(a,e) 0, D(b,e) 1, N = 4 */
    const int dense[4 * 6] = {1, 1, 1, 0, 0, 0,  1, 1, 0, 0, 0, 0,  1, 0, 1, 1, 0, 0,
                              0, 1, 0, 0, 1, 0};
    datm_csr X;
    csr_from_dense(dense, 4, 6, &X);
    /* topics (K = 3, n = 3): [a b c], [a f e], [f d f'] where f' = f: one scored word */
    const int32_t top[9] = {0, 1, 2,  0, 5, 4,  5, 3, 5};
    datm_error err = {0};
    datm_doc_index ix;
    CHECK(datm_doc_index_build(&X, top, 9, &ix, &err) == 0, "%s", err.msg);
    CHECK(datm_doc_index_df(&ix, 0) == 3 && datm_doc_index_df(&ix, 5) == 0 &&
          datm_doc_index_co(&ix, 0, 2) == 2 && datm_doc_index_co(&ix, 0, 4) == 0, "counts");
    double s[3];
    /* NPMI */
    CHECK(datm_coherence_topics(&ix, DATM_COH_NPMI, top, 3, 3, 3, s, &err) == 0, "%s", err.msg);
    NEAR(s[0], (npmi_c(2, 3, 3, 4) + npmi_c(2, 3, 2, 4) + npmi_c(1, 3, 2, 4)) / 3, 1e-12);
    NEAR(s[1], npmi_c(0, 3, 1, 4), 1e-12);   /* f is left out: only (a, e) */
    CHECK(isnan(s[2]), "one scored word gives NAN, got %g", s[2]);
    /* UCI */
    CHECK(datm_coherence_topics(&ix, DATM_COH_UCI, top, 3, 3, 3, s, &err) == 0, "%s", err.msg);
    NEAR(s[0], (pmi_c(2, 3, 3, 4) + pmi_c(2, 3, 2, 4) + pmi_c(1, 3, 2, 4)) / 3, 1e-12);
    NEAR(s[1], pmi_c(0, 3, 1, 4), 1e-12);
    /* UMass: each word given the better-ranked ones: P(b|a), P(c|a), P(c|b) */
    CHECK(datm_coherence_topics(&ix, DATM_COH_UMASS, top, 3, 3, 3, s, &err) == 0, "%s", err.msg);
    NEAR(s[0], (umass_c(2, 3, 4) + umass_c(2, 3, 4) + umass_c(1, 3, 4)) / 3, 1e-12);
    NEAR(s[1], umass_c(0, 3, 4), 1e-12);      /* e given a */
    /* C_V: S over (a, b, c) with the diagonal NPMI(w, w), D(w, w) = D(w) */
    CHECK(datm_coherence_topics(&ix, DATM_COH_CV, top, 3, 3, 3, s, &err) == 0, "%s", err.msg);
    const double S[9] = {npmi_c(3, 3, 3, 4), npmi_c(2, 3, 3, 4), npmi_c(2, 3, 2, 4),
                         npmi_c(2, 3, 3, 4), npmi_c(3, 3, 3, 4), npmi_c(1, 3, 2, 4),
                         npmi_c(2, 3, 2, 4), npmi_c(1, 3, 2, 4), npmi_c(2, 2, 2, 4)};
    NEAR(s[0], cv_c(S, 3), 1e-12);
    /* the legacy NPMI function agrees */
    double np[3], mean;
    CHECK(datm_npmi_topics(&ix, top, 3, 3, 3, EPS, np, &mean, &err) == 0, "%s", err.msg);
    NEAR(np[0], (npmi_c(2, 3, 3, 4) + npmi_c(2, 3, 2, 4) + npmi_c(1, 3, 2, 4)) / 3, 1e-12);
    /* pair functions: edge cases */
    NEAR(datm_pmi_pair(4, 4, 4, 4, EPS), log(1 + EPS), 1e-15);
    CHECK(isnan(datm_umass_pair(0, 0, 4, EPS)) && isnan(datm_pmi_pair(0, 0, 2, 4, EPS)), "NAN");
    CHECK(datm_coherence_topics(&ix, DATM_COH_CV, top, 3, 3, 1, s, &err) == DATM_E_INVALID, "n < 2");
    datm_doc_index_free(&ix);
    datm_csr_free(&X);
}

static void test_windows(void)
{
    /* doc0 = a b _ a c (a position without a vocabulary word), doc1 = c; window 2:
     * windows [a b] [b _] [_ a] [a c] and [c]: N = 5, D(a) 3, D(b) 2, D(c) 2, D(a,b) 1,
     * D(a,c) 1, D(b,c) 0 */
    int64_t dp[3] = {0, 5, 6};
    int32_t tok[6] = {0, 1, -1, 0, 2, 2};
    datm_tokdocs T = {2, 3, dp, tok};
    const int32_t words[3] = {0, 1, 2};
    datm_doc_index ix;
    datm_error err = {0};
    CHECK(datm_doc_index_build_windows(&T, 2, words, 3, &ix, &err) == 0, "%s", err.msg);
    CHECK(ix.n_docs == 5, "N %lld", (long long)ix.n_docs);
    CHECK(datm_doc_index_df(&ix, 0) == 3 && datm_doc_index_df(&ix, 1) == 2 &&
          datm_doc_index_df(&ix, 2) == 2, "df");
    CHECK(datm_doc_index_co(&ix, 0, 1) == 1 && datm_doc_index_co(&ix, 0, 2) == 1 &&
          datm_doc_index_co(&ix, 1, 2) == 0, "co");
    datm_doc_index_free(&ix);
    /* a window longer than every document: each document is one virtual document */
    CHECK(datm_doc_index_build_windows(&T, 100, words, 3, &ix, &err) == 0, "%s", err.msg);
    CHECK(ix.n_docs == 2 && datm_doc_index_df(&ix, 0) == 1 && datm_doc_index_co(&ix, 0, 2) == 1,
          "whole documents");
    datm_doc_index_free(&ix);
    CHECK(datm_doc_index_build_windows(&T, 0, words, 3, &ix, &err) == DATM_E_INVALID, "window 0");

    /* random sequences against a brute-force count over every window */
    enum { D = 40, V = 12, W = 7 };
    int64_t rp[D + 1];
    int32_t *rt = malloc(D * 60 * sizeof *rt);
    rp[0] = 0;
    for (int d = 0; d < D; d++) {
        int len = (int)(unif() * 30);   /* some shorter than the window, some empty */
        for (int i = 0; i < len; i++) rt[rp[d] + i] = unif() < 0.2 ? -1 : (int32_t)(unif() * V);
        rp[d + 1] = rp[d] + len;
    }
    datm_tokdocs R = {D, V, rp, rt};
    int32_t all[V];
    for (int v = 0; v < V; v++) all[v] = v;
    CHECK(datm_doc_index_build_windows(&R, W, all, V, &ix, &err) == 0, "%s", err.msg);
    int64_t n = 0, df[V] = {0}, co[V][V];
    memset(co, 0, sizeof co);
    for (int d = 0; d < D; d++) {
        const int64_t len = rp[d + 1] - rp[d], nw = len > W ? len - W + 1 : 1;
        for (int64_t s = 0; s < nw; s++) {
            int in[V] = {0};
            for (int64_t p = s; p < s + W && p < len; p++)
                if (rt[rp[d] + p] >= 0) in[rt[rp[d] + p]] = 1;
            for (int a = 0; a < V; a++) {
                df[a] += in[a];
                for (int b = 0; b < V; b++) co[a][b] += in[a] && in[b];
            }
            n++;
        }
    }
    CHECK(ix.n_docs == n, "windows %lld vs %lld", (long long)ix.n_docs, (long long)n);
    for (int a = 0; a < V; a++) {
        CHECK(datm_doc_index_df(&ix, a) == df[a], "df %d", a);
        for (int b = 0; b < V; b++) CHECK(datm_doc_index_co(&ix, a, b) == co[a][b], "co %d %d", a, b);
    }
    datm_doc_index_free(&ix);
    free(rt);
}

/* ---- gensim fixture ---- */

typedef struct fixture {
    datm_tokdocs T;
    char  **vocab;
    int     V, K, n;
    int32_t top[64];
} fixture;

static int word_id(fixture *f, const char *w)
{
    for (int v = 0; v < f->V; v++) if (!strcmp(f->vocab[v], w)) return v;
    f->vocab = realloc(f->vocab, (size_t)(f->V + 1) * sizeof *f->vocab);
    f->vocab[f->V] = strdup(w);
    return f->V++;
}

static void test_gensim(void)
{
    const char *src = getenv("DATM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/coherence_gensim.txt", src ? src : ".");
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL, "cannot open %s", path);
    if (!fp) return;
    fixture f = {0};
    char line[8192];
    int n_texts = 0, checked = 0;
    f.T.doc_ptr = calloc(1024, sizeof *f.T.doc_ptr);
    f.T.tok = malloc(100000 * sizeof *f.T.tok);
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        if (sscanf(line, "texts %d", &n_texts) == 1) {
            for (int d = 0; d < n_texts && fgets(line, sizeof line, fp); d++) {
                int64_t p = f.T.doc_ptr[d];
                for (char *w = strtok(line, " \n"); w; w = strtok(NULL, " \n")) f.T.tok[p++] = word_id(&f, w);
                f.T.doc_ptr[d + 1] = p;
            }
            f.T.n_docs = n_texts;
        } else if (sscanf(line, "topics %d %d", &f.K, &f.n) == 2) {
            for (int k = 0; k < f.K && fgets(line, sizeof line, fp); k++) {
                int j = 0;
                for (char *w = strtok(line, " \n"); w && j < f.n; w = strtok(NULL, " \n"))
                    f.top[k * f.n + j++] = word_id(&f, w);
            }
        } else if (!strncmp(line, "measure ", 8)) {
            char name[32];
            long long window;
            CHECK(sscanf(line, "measure %31s window %lld", name, &window) == 2, "line %s", line);
            unsigned mask = 0;
            datm_error err = {0};
            CHECK(datm_coh_parse_list(name, &mask, &err) == 0, "%s", err.msg);
            int m = __builtin_ctz(mask);
            double want[16], got[16];
            CHECK(fgets(line, sizeof line, fp) != NULL, "values");
            char *p = line;
            for (int k = 0; k < f.K; k++) want[k] = strtod(p, &p);
            f.T.n_vocab = f.V;
            datm_doc_index ix;
            CHECK(datm_doc_index_build_windows(&f.T, window ? window : INT64_MAX, f.top, f.K * f.n,
                                               &ix, &err) == 0, "%s", err.msg);
            CHECK(datm_coherence_topics(&ix, (datm_coh_measure)m, f.top, f.K, f.n, f.n, got, &err) == 0,
                  "%s", err.msg);
            for (int k = 0; k < f.K; k++) {
                CHECK(fabs(got[k] - want[k]) <= 1e-9 * (1 + fabs(want[k])),
                      "gensim %s window %lld topic %d: %.17g, gensim %.17g", name, window, k, got[k],
                      want[k]);
                checked++;
            }
            datm_doc_index_free(&ix);
        }
    }
    fclose(fp);
    CHECK(checked == 25, "%d gensim figures checked (expected 25)", checked);
    for (int v = 0; v < f.V; v++) free(f.vocab[v]);
    free(f.vocab);
    free(f.T.doc_ptr);
    free(f.T.tok);
}

static void test_driver(void)
{
    datm_error err = {0};
    unsigned mask;
    CHECK(datm_coh_parse_list("[npmi, c_v]", &mask, &err) == 0 &&
          mask == ((1u << DATM_COH_NPMI) | (1u << DATM_COH_CV)), "parse");
    CHECK(datm_coh_parse_list("all", &mask, &err) == 0 && mask == 15u, "all");
    CHECK(datm_coh_parse_list("npmi,umas", &mask, &err) == DATM_E_INVALID && strstr(err.msg, "umas"),
          "unknown measure");
    CHECK(!strcmp(datm_coh_name(DATM_COH_UMASS), "umass"), "names");

    /* a 2-layer topic set over a random corpus: scores equal the direct calls, live means
     * skip the flagged topics, settings are recorded */
    enum { N = 60, V = 30 };
    int *dense = calloc(N * V, sizeof *dense);
    for (int i = 0; i < N * V; i++) dense[i] = unif() < 0.25;
    datm_csr X;
    csr_from_dense(dense, N, V, &X);
    float a[V * 6], b[6 * 2];
    for (int i = 0; i < V * 6; i++) a[i] = (float)(unif() + 0.01);
    for (int i = 0; i < 12; i++) b[i] = (float)(unif() + 0.01);
    for (int j = 0; j < 6; j++) { double s = 0; for (int v = 0; v < V; v++) s += a[v * 6 + j]; for (int v = 0; v < V; v++) a[v * 6 + j] /= (float)s; }
    for (int j = 0; j < 2; j++) { double s = 0; for (int v = 0; v < 6; v++) s += b[v * 2 + j]; for (int v = 0; v < 6; v++) b[v * 2 + j] /= (float)s; }
    const float *ph[2] = {a, b};
    int64_t kk[3] = {V, 6, 2};
    datm_topic_set ts;
    CHECK(datm_topic_set_build(2, ph, kk, 25, 2, 0, &ts, &err) == 0, "%s", err.msg);
    ts.layer[0].unused = calloc(6, 1);
    ts.layer[0].unused[1] = ts.layer[0].unused[4] = 1;
    datm_coh_opts o;
    datm_coh_opts_default(&o);
    o.measures = 15u;
    o.top_n = 5;
    datm_coh_ref ref = {&X, NULL};
    CHECK(datm_topic_set_coherence_ref(&ts, &ref, &o, 25, &err) == 0, "%s", err.msg);
    CHECK(ts.measures == 15u && ts.coh_top_n == 5 && ts.coh_window == 0, "settings");
    datm_doc_index ix;
    const datm_topic_layer *t = &ts.layer[0];
    CHECK(datm_doc_index_build(&X, t->top_ids, t->k * t->top_n, &ix, &err) == 0, "%s", err.msg);
    for (int m = 0; m < DATM_COH_COUNT_; m++) {
        double s[6];
        CHECK(datm_coherence_topics(&ix, (datm_coh_measure)m, t->top_ids, 6, t->top_n, 5, s, &err) == 0, "%s", err.msg);
        double all = 0, live = 0;
        for (int k = 0; k < 6; k++) {
            NEAR(t->score[m][k], s[k], 1e-14);
            all += s[k] / 6;
            if (k != 1 && k != 4) live += s[k] / 4;
        }
        NEAR(t->score_mean[m], all, 1e-12);
        NEAR(t->score_live[m], live, 1e-12);
    }
    CHECK(t->npmi == t->score[0] && t->npmi_mean == t->score_mean[0], "npmi aliases");
    datm_doc_index_free(&ix);
    /* a window over documents without token order is an error naming the fix */
    o.window = 10;
    CHECK(datm_topic_set_coherence_ref(&ts, &ref, &o, 25, &err) == DATM_E_INVALID &&
          strstr(err.msg, "token order"), "window needs tokens: %s", err.msg);
    datm_topic_set_free(&ts);
    datm_csr_free(&X);
    free(dense);
}

int main(void)
{
    test_hand();
    test_windows();
    test_gensim();
    test_driver();
    return check_result();
}
