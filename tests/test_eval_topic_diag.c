/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_eval */
/* tests/test_eval_topic_diag.c: per-topic diagnostics (engine/eval/topic_diag.h).
 * - usage: token shares and theta-mass shares of a 2-document example worked out by hand,
 *   for layer 1 and (through the projection Phi(1) Phi(2)) layer 2, where a token no topic
 *   explains is skipped; a random corpus gives the same shares with 1 and 2 threads (bitwise);
 * - the unused rule at its threshold, re-flagging, counts;
 * - nearest topic and cosine, ties to the smaller id, K = 1;
 * - KL from the corpus distribution with the half-count smoothing, by hand. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/topic_diag.h"
#include "test_check.h"


static void test_usage_hand(void)
{
    /* V = 3, K1 = 2, K2 = 1. d0: word0 x2, word1 x1; d1: word2 x3 */
    int64_t rp[3] = {0, 2, 3};
    int32_t col[3] = {0, 1, 2};
    float val[3] = {2, 1, 3};
    datm_csr X = {2, 3, 3, rp, col, val};
    const float phi1[6] = {0.5f, 0.0f,  0.5f, 0.5f,  0.0f, 0.5f};   /* (V, K1) */
    const float phi2[2] = {0.3f, 0.7f};                              /* (K1, K2) */
    const float th1[4] = {1, 1,  0, 2}, th2[2] = {2, 0};
    const float *phi[2] = {phi1, phi2}, *th[2] = {th1, th2};
    int64_t k[3] = {3, 2, 1};
    double t1[2], t2[1], m1[2], m2[1];
    double *tok[2] = {t1, t2}, *mass[2] = {m1, m2};
    datm_error err = {0};
    CHECK(datm_topic_usage(&X, 2, phi, k, th, tok, mass, &err) == 0, "%s", err.msg);
    /* d0 word0 -> topic 0 (2 tokens); d0 word1 splits 0.5/0.5; d1 word2 -> topic 1 (3) */
    CHECK_NEAR(t1[0], 2.5 / 6, 1e-12);
    CHECK_NEAR(t1[1], 3.5 / 6, 1e-12);
    CHECK_NEAR(m1[0], 1.0 / 4, 1e-12);
    CHECK_NEAR(m1[1], 3.0 / 4, 1e-12);
    /* layer 2: d1 has theta(2) = 0, so its tokens are explained by no topic and skipped */
    CHECK_NEAR(t2[0], 1.0, 1e-12);
    CHECK_NEAR(m2[0], 1.0, 1e-12);
    /* a vocabulary mismatch is an error */
    datm_csr Y = X;
    Y.n_cols = 4;
    CHECK(datm_topic_usage(&Y, 2, phi, k, th, tok, mass, &err) == DATM_E_INVALID, "mismatch");
}

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static double unif(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

static void test_usage_threads(void)
{
    enum { N = 1500, V = 40, K = 7 };
    int64_t *rp = malloc((N + 1) * sizeof *rp);
    int32_t *col = malloc(N * V * sizeof *col);
    float *val = malloc(N * V * sizeof *val), *phi = malloc(V * K * sizeof *phi),
          *th = malloc(N * K * sizeof *th);
    int64_t p = 0;
    for (int d = 0; d < N; d++) {
        rp[d] = p;
        for (int v = 0; v < V; v++)
            if (unif() < 0.2) { col[p] = v; val[p] = (float)(1 + (int)(unif() * 4)); p++; }
    }
    rp[N] = p;
    for (int i = 0; i < V * K; i++) phi[i] = (float)unif();
    for (int i = 0; i < N * K; i++) th[i] = (float)(unif() * unif());
    datm_csr X = {N, V, p, rp, col, val};
    const float *ph[1] = {phi}, *tt[1] = {th};
    int64_t k[2] = {V, K};
    double a[K], b[K], ma[K], mb[K];
    double *ta[1] = {a}, *tb[1] = {b}, *pa[1] = {ma}, *pb[1] = {mb};
    datm_error err = {0};
    const int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(datm_topic_usage(&X, 1, ph, k, tt, ta, pa, &err) == 0, "%s", err.msg);
    omp_set_num_threads(2);
    CHECK(datm_topic_usage(&X, 1, ph, k, tt, tb, pb, &err) == 0, "%s", err.msg);
    omp_set_num_threads(nt);
    double s = 0;
    for (int j = 0; j < K; j++) {
        CHECK(memcmp(&a[j], &b[j], sizeof a[j]) == 0 && memcmp(&ma[j], &mb[j], sizeof ma[j]) == 0,
              "topic %d: %.17g vs %.17g with 1 and 2 threads", j, a[j], b[j]);
        s += a[j];
    }
    CHECK_NEAR(s, 1.0, 1e-12);
    free(rp); free(col); free(val); free(phi); free(th);
}

static void test_flags_nearest_kl(void)
{
    /* proj (V = 3, K = 3): c0 = e0, c1 = (e0 + e1)/2, c2 = e2 */
    const float proj[9] = {1, 0.5f, 0,  0, 0.5f, 0,  0, 0, 1};
    int32_t nn[3];
    double cs[3];
    datm_error err = {0};
    CHECK(datm_topics_nearest(proj, 3, 3, nn, cs, &err) == 0, "%s", err.msg);
    CHECK(nn[0] == 1 && nn[1] == 0 && nn[2] == 0, "nearest %d %d %d", nn[0], nn[1], nn[2]);
    CHECK_NEAR(cs[0], 1 / sqrt(2.0), 1e-7);
    CHECK_NEAR(cs[2], 0.0, 0);
    CHECK(datm_topics_nearest(proj, 3, 1, nn, cs, &err) == 0 && nn[0] == -1 && isnan(cs[0]), "K=1");

    /* a topic set: Phi(1) = proj columns (renormalised), one layer */
    float phi[9];
    memcpy(phi, proj, sizeof phi);
    const float *ph[1] = {phi};
    int64_t k[2] = {3, 3};
    datm_topic_set ts;
    CHECK(datm_topic_set_build(1, ph, k, 3, 0, 0, &ts, &err) == 0, "%s", err.msg);
    CHECK(ts.layer[0].nearest[0] == 1 && ts.unused_share == DATM_UNUSED_SHARE, "build");
    const double use[3] = {0.033, 0.5, 0.467};   /* threshold 0.1 / 3 = 0.0333.. */
    CHECK(datm_topic_set_usage(&ts, 1, use, NULL, DATM_UNUSED_SHARE, &err) == 0, "%s", err.msg);
    CHECK(ts.layer[0].unused[0] == 1 && ts.layer[0].unused[1] == 0 && ts.layer[0].n_unused == 1,
          "unused flag");
    CHECK(datm_topic_live(&ts.layer[0], 1) && !datm_topic_live(&ts.layer[0], 0), "live");
    datm_topic_set_flag_unused(&ts, 0.09);   /* 0.03 < 0.033 */
    CHECK(ts.layer[0].n_unused == 0 && ts.unused_share == 0.09, "re-flag");
    CHECK(datm_topic_set_usage(&ts, 2, use, NULL, 0.01, &err) == DATM_E_INVALID, "layer range");
    /* KL: counts (1, 2, 0) -> p = (1.5, 2.5, 0.5) / 4.5; topic 1 = (0.5, 0.5, 0) */
    const double counts[3] = {1, 2, 0};
    CHECK(datm_topic_set_corpus_kl(&ts, 1, ph, k, counts, &err) == 0, "%s", err.msg);
    CHECK_NEAR(ts.layer[0].corpus_kl[1], 0.5 * log(0.5 / (1.5 / 4.5)) + 0.5 * log(0.5 / (2.5 / 4.5)), 1e-7);
    CHECK_NEAR(ts.layer[0].corpus_kl[2], log(1 / (0.5 / 4.5)), 1e-7);
    datm_topic_set_free(&ts);
}

int main(void)
{
    test_usage_hand();
    test_usage_threads();
    test_flags_nearest_kl();
    return check_result();
}
