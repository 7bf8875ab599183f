/* ctest-labels: unit;stat  ctest-timeout: 600  ctest-link: datm_decoder */
/* tests/test_decoder_augment.c: upward count augmentation (engine/decoder/augment.c).
 * Checks: (1) layer-1 counts are preserved exactly (sum_k A(1)_vk = sum_n x_vn, and
 * sum_k m(1)_kn = x_.n); (2) per (k', n), layer-t tables are <= customers and >= 1 when
 * customers > 0, and A(t), m(t) agree; (3) top-layer table sums have the CRT mean
 * r (psi(r + m) - psi(r)) within 5 standard errors; (4) the expected ("collapsed") counts
 * equal the mean of the sampled counts within 5 standard errors and preserve layer-1 totals;
 * (5) bitwise-identical results with 1 and 2 threads, for both modes. */
#include <omp.h>

#include "decoder_testutil.h"
#include "math/math.h"

static void test_preservation(void)
{
    const int L = 3;
    const int64_t K[] = {40, 12, 6, 3};
    datm_gbn *g = tu_gbn(L, K, 11, 1);
    datm_csr X;
    const int64_t N = 60;
    tu_random_csr(&X, N, K[0], 0.6, 5, 1);
    double *theta[DATM_MAX_LAYERS + 1] = {0};
    tu_random_theta(g, N, 0.3, 7, theta);
    int32_t *m[DATM_MAX_LAYERS + 1] = {0};
    for (int l = 1; l <= L; l++) m[l] = calloc((size_t)(N * K[l]), sizeof(int32_t));

    /* one document at a time: A(t) rows are then that document's tables */
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(g, &s, TU_ERR));
    for (int64_t n = 0; n < N; n++) {
        datm_csr Xn;
        MUST(datm_csr_select_rows(&X, &n, 1, &Xn, TU_ERR));
        const double *th[DATM_MAX_LAYERS + 1] = {0};
        int32_t *mn[DATM_MAX_LAYERS + 1] = {0};
        for (int l = 1; l <= L; l++) {
            th[l] = theta[l] + n * K[l];
            mn[l] = m[l] + n * K[l];
        }
        datm_gbn_key key = {.seed = 3, .purpose = DATM_STREAM_DOC, .step = 1, .doc_ids = &n};
        datm_gbn_stats_reset(s);
        MUST(datm_gbn_augment(g, &Xn, th, &key, DATM_AUG_SAMPLED, s, mn, TU_ERR));
        datm_gbn_stats_reduce(s);
        /* layer 1: every token assigned once */
        int64_t tok = 0, msum = 0;
        for (int64_t e = Xn.row_ptr[0]; e < Xn.row_ptr[1]; e++) {
            int64_t v = Xn.col[e];
            double a = 0;
            for (int64_t k = 0; k < K[1]; k++) a += s->A[1][v * K[1] + k];
            CHECK(a == Xn.val[e], "doc %lld word %lld: sum_k A = %g, x = %g", (long long)n,
                  (long long)v, a, Xn.val[e]);
            tok += (int64_t)Xn.val[e];
        }
        for (int64_t k = 0; k < K[1]; k++) msum += mn[1][k];
        CHECK(msum == tok, "doc %lld: sum_k m1 = %lld, tokens %lld", (long long)n,
              (long long)msum, (long long)tok);
        /* layers >= 2: tables per (k', n) */
        for (int t = 2; t <= L; t++) {
            int64_t tsum = 0;
            for (int64_t kp = 0; kp < K[t - 1]; kp++) {
                double tab = 0;
                for (int64_t k = 0; k < K[t]; k++) tab += s->A[t][kp * K[t] + k];
                int64_t cust = mn[t - 1][kp];
                CHECK(tab <= cust, "layer %d unit %lld: %g tables > %lld customers", t,
                      (long long)kp, tab, (long long)cust);
                CHECK(cust == 0 || tab >= 1, "layer %d unit %lld: no table for %lld customers",
                      t, (long long)kp, (long long)cust);
                CHECK(cust > 0 || tab == 0, "layer %d unit %lld: tables without customers", t,
                      (long long)kp);
                tsum += (int64_t)tab;
            }
            int64_t ms = 0;
            for (int64_t k = 0; k < K[t]; k++) ms += mn[t][k];
            CHECK(ms == tsum, "layer %d: m sums to %lld, tables %lld", t, (long long)ms,
                  (long long)tsum);
        }
        /* top tables: <= customers, >= 1 when customers > 0 */
        for (int64_t k = 0; k < K[L]; k++) {
            int64_t cust = mn[L][k];
            double tab = s->tables[k];
            CHECK(tab <= cust && (cust == 0 || tab >= 1), "top unit %lld: %g tables, %lld cust",
                  (long long)k, tab, (long long)cust);
        }
        datm_csr_free(&Xn);
    }
    datm_gbn_stats_destroy(&s);
    for (int l = 1; l <= L; l++) { free(theta[l]); free(m[l]); }
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

/* One word, one topic: m(1) = x exactly, so the top tables are CRT(x, r) per document. */
static void test_crt_mean(void)
{
    const int64_t K[] = {1, 1};
    datm_gbn *g = tu_gbn(1, K, 1, 1);
    const double r = 0.7;
    const int x = 9;
    g->r[0] = r;
    const int64_t N = 20000;
    datm_csr X;
    datm_error err;
    if (datm_csr_alloc(&X, N, 1, N, &err)) exit(1);
    for (int64_t n = 0; n <= N; n++) X.row_ptr[n] = n;
    for (int64_t n = 0; n < N; n++) { X.col[n] = 0; X.val[n] = (float)x; }
    double *th = malloc((size_t)N * sizeof(double));
    for (int64_t n = 0; n < N; n++) th[n] = 1.0;
    const double *theta[2] = {NULL, th};
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(g, &s, TU_ERR));
    datm_gbn_stats_reset(s);
    datm_gbn_key key = {.seed = 9, .purpose = DATM_STREAM_DOC, .step = 0, .doc_ids = NULL};
    MUST(datm_gbn_augment(g, &X, theta, &key, DATM_AUG_SAMPLED, s, NULL, TU_ERR));
    datm_gbn_stats_reduce(s);
    double mean = r * (datm_digamma(r + x) - datm_digamma(r));
    double var = 0;
    for (int i = 0; i < x; i++) var += (r / (r + i)) * (1 - r / (r + i));
    double got = s->tables[0] / (double)N, se = sqrt(var / (double)N);
    printf("CRT(%d, %.2f): mean %.6f, expected %.6f (se %.6f)\n", x, r, got, mean, se);
    CHECK(fabs(got - mean) < 5 * se, "CRT mean %.6f vs %.6f (5 se = %.6f)", got, mean, 5 * se);
    datm_gbn_stats_destroy(&s);
    free(th);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

/* Expected counts vs the mean of sampled counts over many passes. */
static void test_expected(void)
{
    const int L = 2;
    const int64_t K[] = {15, 5, 3};
    datm_gbn *g = tu_gbn(L, K, 21, 1);
    datm_csr X;
    const int64_t N = 8;
    tu_random_csr(&X, N, K[0], 1.0, 6, 1);
    double *theta[DATM_MAX_LAYERS + 1] = {0};
    tu_random_theta(g, N, 1.0, 8, theta);
    datm_gbn_stats *se = NULL, *ss = NULL;
    MUST(datm_gbn_stats_create(g, &se, TU_ERR));
    MUST(datm_gbn_stats_create(g, &ss, TU_ERR));
    datm_gbn_stats_reset(se);
    datm_gbn_stats_reset(ss);
    /* Both modes draw the same tokens and tables from the same streams, so in each pass they
     * share m(1); given m(1), sampled minus expected layer-2 counts have mean zero. */
    const int P = 4000;
    const int64_t n2 = K[1] * K[2];
    double *sum2 = calloc((size_t)n2, sizeof(double)), *sq2 = calloc((size_t)n2, sizeof(double));
    double *exp2 = calloc((size_t)n2, sizeof(double));
    const int64_t n1 = K[0] * K[1];
    double *sum1 = calloc((size_t)n1, sizeof(double)), *sq1 = calloc((size_t)n1, sizeof(double));
    for (int p = 0; p < P; p++) {
        datm_gbn_key key = {.seed = 4, .purpose = DATM_STREAM_DOC, .step = (uint64_t)p};
        datm_gbn_stats_reset(ss);
        MUST(datm_gbn_augment(g, &X, (const double *const *)theta, &key, DATM_AUG_SAMPLED, ss,
                              NULL, TU_ERR));
        datm_gbn_stats_reset(se);
        MUST(datm_gbn_augment(g, &X, (const double *const *)theta, &key, DATM_AUG_EXPECTED, se,
                              NULL, TU_ERR));
        datm_gbn_stats_reduce(ss);
        datm_gbn_stats_reduce(se);
        for (int64_t i = 0; i < n2; i++) {
            double d = ss->A[2][i] - se->A[2][i];   /* zero-mean given the shared m(1) */
            sum2[i] += d;
            sq2[i] += d * d;
            exp2[i] += se->A[2][i];
        }
        for (int64_t i = 0; i < n1; i++) {
            sum1[i] += ss->A[1][i];
            sq1[i] += ss->A[1][i] * ss->A[1][i];
        }
        if (p == 0) {
            /* expected layer-1 counts keep each word's total */
            for (int64_t v = 0; v < K[0]; v++) {
                double a = 0, x = 0;
                for (int64_t k = 0; k < K[1]; k++) a += se->A[1][v * K[1] + k];
                for (int64_t n = 0; n < N; n++)
                    for (int64_t e = X.row_ptr[n]; e < X.row_ptr[n + 1]; e++)
                        if (X.col[e] == v) x += X.val[e];
                CHECK(fabs(a - x) < 1e-5, "expected A(1) row %lld sums to %.9g, x = %.9g",
                      (long long)v, a, x);
            }
        }
    }
    int bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n2; i++) {
        double m = sum2[i] / P, var = sq2[i] / P - m * m;
        double z = var > 0 ? fabs(m) / sqrt(var / P) : (fabs(m) < 1e-6 ? 0 : 99);
        worst = z > worst ? z : worst;
        bad += z > 5;
    }
    printf("layer-2 sampled - expected: worst |z| = %.3f over %lld cells\n", worst, (long long)n2);
    CHECK(bad == 0, "%d layer-2 cells differ by > 5 se", bad);
    /* layer 1: the expected counts are deterministic; compare with the sampled mean */
    datm_gbn_stats_reduce(se);
    bad = 0;
    worst = 0;
    for (int64_t i = 0; i < n1; i++) {
        double m = sum1[i] / P, var = sq1[i] / P - m * m;
        double d = fabs(m - se->A[1][i]);
        double z = var > 0 ? d / sqrt(var / P) : (d < 1e-6 ? 0 : 99);
        worst = z > worst ? z : worst;
        bad += z > 5;
    }
    printf("layer-1 sampled mean vs expected: worst |z| = %.3f over %lld cells\n", worst,
           (long long)n1);
    CHECK(bad == 0, "%d layer-1 cells differ by > 5 se", bad);
    free(sum1); free(sq1); free(sum2); free(sq2); free(exp2);
    datm_gbn_stats_destroy(&se);
    datm_gbn_stats_destroy(&ss);
    for (int l = 1; l <= L; l++) free(theta[l]);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

/* Same seed, 1 vs 2 threads: identical stats and m, both modes. */
static void test_threads(void)
{
    const int L = 3;
    const int64_t K[] = {80, 20, 10, 5};
    datm_gbn *g = tu_gbn(L, K, 2, 1);
    datm_csr X;
    const int64_t N = 300;
    tu_random_csr(&X, N, K[0], 0.3, 12, 1);
    double *theta[DATM_MAX_LAYERS + 1] = {0};
    tu_random_theta(g, N, 0.5, 13, theta);
    for (int mode = 0; mode <= 1; mode++) {
        datm_gbn_stats *s[2];
        int32_t *m[2][DATM_MAX_LAYERS + 1] = {{0}};
        for (int th = 0; th < 2; th++) {
            omp_set_num_threads(th + 1);
            for (int l = 1; l <= L; l++) m[th][l] = calloc((size_t)(N * K[l]), sizeof(int32_t));
            MUST(datm_gbn_stats_create(g, &s[th], TU_ERR));
            datm_gbn_stats_reset(s[th]);
            datm_gbn_key key = {.seed = 77, .purpose = DATM_STREAM_DOC, .step = 5};
            MUST(datm_gbn_augment(g, &X, (const double *const *)theta, &key, (datm_aug_mode)mode,
                                  s[th], m[th], TU_ERR));
            datm_gbn_stats_reduce(s[th]);
        }
        for (int l = 1; l <= L; l++) {
            CHECK(memcmp(s[0]->A[l], s[1]->A[l], (size_t)(K[l - 1] * K[l]) * sizeof(double)) == 0,
                  "mode %d layer %d: A differs between 1 and 2 threads", mode, l);
            CHECK(memcmp(m[0][l], m[1][l], (size_t)(N * K[l]) * sizeof(int32_t)) == 0,
                  "mode %d layer %d: m differs between 1 and 2 threads", mode, l);
        }
        CHECK(memcmp(s[0]->tables, s[1]->tables, (size_t)K[L] * sizeof(double)) == 0,
              "mode %d: tables differ between 1 and 2 threads", mode);
        for (int th = 0; th < 2; th++) {
            datm_gbn_stats_destroy(&s[th]);
            for (int l = 1; l <= L; l++) free(m[th][l]);
        }
    }
    omp_set_num_threads(2);
    for (int l = 1; l <= L; l++) free(theta[l]);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

int main(void)
{
    test_preservation();
    test_crt_mean();
    test_expected();
    test_threads();
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
