/* ctest-labels: unit;stat  ctest-timeout: 600  ctest-link: datm_decoder */
/* tests/test_decoder_gibbs.c: the upward-downward local Gibbs sampler and the Gibbs draws
 * of the globals (engine/decoder/gibbs.c).
 * Checks: (1) invariance ("Geweke" check): documents drawn from the PGBN prior (c = 1)
 * and started at their true theta keep the prior marginals of theta(l) after Gibbs sweeps
 * — per-unit means within 5 standard errors, for L = 1, 2, 3; (2) with c_n, p_n sampled,
 * everything stays finite, c > 0, 0 < p < 1; (3) 1 vs 2 threads: identical theta, c, p and
 * statistics after sweeps, both count modes; (4) Phi drawn from its Dirichlet conditional
 * has the Dirichlet mean (eta + A)/(sum) within 5 se; r its gamma mean. */
#include <omp.h>

#include "decoder_testutil.h"

/* Draws N documents from the prior with c = 1; fills X and theta[l] (N, K[l]). */
static void draw_prior(const datm_gbn *g, int64_t N, uint64_t seed, datm_csr *X, double **theta)
{
    datm_rng r;
    datm_rng_init(&r, seed, DATM_STREAM_TEST, 3);
    const int L = g->L;
    for (int l = 1; l <= L; l++) theta[l] = malloc((size_t)(N * g->K[l]) * sizeof(double));
    const int64_t V = g->K[0];
    float *dense = calloc((size_t)(N * V), sizeof(float));
    int64_t nnz = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int t = L; t >= 1; t--)
            for (int64_t k = 0; k < g->K[t]; k++) {
                double shape = 0;
                if (t == L) shape = g->r[k];
                else
                    for (int64_t j = 0; j < g->K[t + 1]; j++)
                        shape += g->phi[t + 1][k * g->K[t + 1] + j] * theta[t + 1][n * g->K[t + 1] + j];
                theta[t][n * g->K[t] + k] = datm_rng_gamma(&r, shape);
            }
        for (int64_t v = 0; v < V; v++) {
            double rate = 0;
            for (int64_t k = 0; k < g->K[1]; k++) rate += g->phi[1][v * g->K[1] + k] * theta[1][n * g->K[1] + k];
            float x = (float)datm_rng_poisson(&r, rate);
            dense[n * V + v] = x;
            nnz += x > 0;
        }
    }
    datm_error err;
    if (datm_csr_alloc(X, N, V, nnz, &err)) exit(1);
    int64_t e = 0;
    X->row_ptr[0] = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t v = 0; v < V; v++)
            if (dense[n * V + v] > 0) { X->col[e] = (int32_t)v; X->val[e++] = dense[n * V + v]; }
        X->row_ptr[n + 1] = e;
    }
    free(dense);
}

static void test_invariance(int L, const int64_t *K)
{
    datm_gbn *g = tu_gbn(L, K, 100 + L, 1);
    for (int64_t k = 0; k < K[L]; k++) g->r[k] = 0.5 + 0.5 * (double)k;
    const int64_t N = 20000;
    datm_csr X;
    double *theta[DATM_MAX_LAYERS + 1] = {0};
    draw_prior(g, N, 7 + L, &X, theta);
    datm_gbn_chain *ch = NULL;
    MUST(datm_gbn_chain_create(g, N, &ch, TU_ERR));
    for (int l = 1; l <= L; l++)
        memcpy(ch->theta[l], theta[l], (size_t)(N * K[l]) * sizeof(double));
    datm_gbn_sweep_opts so = {.cp_after = INT64_MAX, .mode = DATM_AUG_SAMPLED};
    for (int s = 0; s < 10; s++) {
        datm_gbn_key key = {.seed = 5, .purpose = DATM_STREAM_DOC, .step = (uint64_t)s};
        MUST(datm_gbn_chain_sweep(g, &X, ch, &key, &so, NULL, TU_ERR));
    }
    /* prior moments: E theta(L) = r, Var = r; below, E theta(t) = Phi(t+1) E theta(t+1) and
     * Var theta(t)_k = E shape_k + Var shape_k (estimated from the prior draws themselves). */
    double worst = 0;
    int bad = 0;
    for (int l = 1; l <= L; l++)
        for (int64_t k = 0; k < K[l]; k++) {
            double m0 = 0, s0 = 0, m1 = 0;
            for (int64_t n = 0; n < N; n++) {
                double a = theta[l][n * K[l] + k], b = ch->theta[l][n * K[l] + k];
                m0 += a; s0 += a * a; m1 += b;
            }
            m0 /= N; m1 /= N;
            double var = s0 / N - m0 * m0;
            /* the two means are correlated (chain started at the truth): var of the difference
             * <= 2 var / N; use that bound */
            double z = fabs(m1 - m0) / sqrt(2 * var / N);
            worst = z > worst ? z : worst;
            bad += z > 5;
        }
    printf("L = %d: prior vs after-sweep means, worst |z| = %.3f\n", L, worst);
    CHECK(bad == 0, "L = %d: %d units off by > 5 se", L, bad);
    /* and against the analytic top-layer mean r */
    for (int64_t k = 0; k < K[L]; k++) {
        double m = 0;
        for (int64_t n = 0; n < N; n++) m += ch->theta[L][n * K[L] + k];
        m /= N;
        double se = sqrt(g->r[k] / N);
        CHECK(fabs(m - g->r[k]) < 5 * se, "L = %d top unit %lld: mean %.4f, r = %.4f", L,
              (long long)k, m, g->r[k]);
    }
    datm_gbn_chain_destroy(&ch);
    for (int l = 1; l <= L; l++) free(theta[l]);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

static void test_cp_finite(void)
{
    const int64_t K[] = {60, 10, 5, 2};
    datm_gbn *g = tu_gbn(3, K, 3, 1);
    datm_csr X;
    tu_random_csr(&X, 200, K[0], 0.2, 9, 0);   /* includes empty documents */
    datm_gbn_chain *ch = NULL;
    MUST(datm_gbn_chain_create(g, X.n_rows, &ch, TU_ERR));
    datm_gbn_sweep_opts so = {.cp_after = 2, .mode = DATM_AUG_SAMPLED};
    for (int s = 0; s < 20; s++) {
        datm_gbn_key key = {.seed = 1, .purpose = DATM_STREAM_DOC, .step = (uint64_t)s};
        MUST(datm_gbn_chain_sweep(g, &X, ch, &key, &so, NULL, TU_ERR));
    }
    int bad = 0;
    for (int l = 1; l <= 3; l++)
        for (int64_t i = 0; i < X.n_rows * K[l]; i++) bad += !(isfinite(ch->theta[l][i]) && ch->theta[l][i] >= 0);
    for (int64_t n = 0; n < X.n_rows; n++)
        for (int t = 2; t <= 4; t++) {
            double c = ch->c[n * 5 + t], p = ch->p[n * 5 + t];
            bad += !(c > 0 && isfinite(c) && p > 0 && p < 1);
        }
    CHECK(bad == 0, "%d non-finite / out-of-range local values with c, p sampled", bad);
    datm_gbn_chain_destroy(&ch);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

static void test_threads(void)
{
    const int64_t K[] = {100, 16, 8, 4};
    datm_gbn *g = tu_gbn(3, K, 8, 1);
    datm_csr X;
    tu_random_csr(&X, 400, K[0], 0.3, 10, 1);
    for (int mode = 0; mode <= 1; mode++) {
        datm_gbn_chain *ch[2];
        datm_gbn_stats *s[2];
        for (int th = 0; th < 2; th++) {
            omp_set_num_threads(th + 1);
            MUST(datm_gbn_chain_create(g, X.n_rows, &ch[th], TU_ERR));
            MUST(datm_gbn_stats_create(g, &s[th], TU_ERR));
            datm_gbn_stats_reset(s[th]);
            datm_gbn_sweep_opts so = {.cp_after = 2, .mode = (datm_aug_mode)mode};
            for (int it = 0; it < 5; it++) {
                datm_gbn_key key = {.seed = 3, .purpose = DATM_STREAM_DOC, .step = (uint64_t)it};
                MUST(datm_gbn_chain_sweep(g, &X, ch[th], &key, &so, s[th], TU_ERR));
            }
            datm_gbn_stats_reduce(s[th]);
        }
        for (int l = 1; l <= 3; l++) {
            CHECK(memcmp(ch[0]->theta[l], ch[1]->theta[l], (size_t)(X.n_rows * K[l]) * sizeof(double)) == 0,
                  "mode %d: theta(%d) differs between 1 and 2 threads", mode, l);
            CHECK(memcmp(s[0]->A[l], s[1]->A[l], (size_t)(K[l - 1] * K[l]) * sizeof(double)) == 0,
                  "mode %d: A(%d) differs between 1 and 2 threads", mode, l);
        }
        CHECK(memcmp(ch[0]->c, ch[1]->c, (size_t)(X.n_rows * 5) * sizeof(double)) == 0,
              "mode %d: c differs", mode);
        CHECK(s[0]->q_sum == s[1]->q_sum, "mode %d: q_sum differs", mode);
        for (int th = 0; th < 2; th++) {
            datm_gbn_chain_destroy(&ch[th]);
            datm_gbn_stats_destroy(&s[th]);
        }
    }
    omp_set_num_threads(2);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

static void test_globals(void)
{
    const int64_t K[] = {6, 2};
    datm_gbn *g = tu_gbn(1, K, 2, 1);
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(g, &s, TU_ERR));
    const double A[6][2] = {{5, 0}, {3, 0}, {1, 1}, {0, 2}, {0, 7}, {0, 0}};
    const double tab[2] = {4, 1}, Q = 3.0;
    const int D = 4000;
    double m[6][2] = {{0}}, sq[6][2] = {{0}}, mr[2] = {0};
    for (int d = 0; d < D; d++) {
        datm_gbn_stats_reset(s);
        datm_gbn_stats_reduce(s);
        for (int v = 0; v < 6; v++) for (int k = 0; k < 2; k++) s->A[1][v * 2 + k] = A[v][k];
        s->tables[0] = tab[0]; s->tables[1] = tab[1];
        s->q_sum = Q;
        s->n_passes = 1;
        s->dirty = 0;
        MUST(datm_gbn_gibbs_globals(g, s, 11, d, 0, TU_ERR));
        for (int v = 0; v < 6; v++)
            for (int k = 0; k < 2; k++) {
                double x = g->phi[1][v * 2 + k];
                m[v][k] += x / D;
                sq[v][k] += x * x / D;
            }
        mr[0] += g->r[0] / D; mr[1] += g->r[1] / D;
    }
    const double eta = g->eta[1];
    for (int k = 0; k < 2; k++) {
        double tot = 0;
        for (int v = 0; v < 6; v++) tot += eta + A[v][k];
        for (int v = 0; v < 6; v++) {
            double want = (eta + A[v][k]) / tot, var = sq[v][k] - m[v][k] * m[v][k];
            double se = sqrt(var / D) + 1e-12;
            CHECK(fabs(m[v][k] - want) < 5 * se, "Dirichlet mean [%d,%d]: %.5f vs %.5f (se %.5f)",
                  v, k, m[v][k], want, se);
        }
        double shape = g->gamma0 / 2 + tab[k], want = shape / (g->c0 + Q);
        double se = sqrt(shape) / (g->c0 + Q) / sqrt((double)D);
        CHECK(fabs(mr[k] - want) < 5 * se, "r[%d] mean %.5f vs %.5f", k, mr[k], want);
    }
    datm_gbn_stats_destroy(&s);
    datm_gbn_destroy(&g);
}

int main(void)
{
    const int64_t K1[] = {30, 5};
    const int64_t K2[] = {30, 6, 3};
    const int64_t K3[] = {30, 6, 4, 2};
    test_invariance(1, K1);
    test_invariance(2, K2);
    test_invariance(3, K3);
    test_cp_finite();
    test_threads();
    test_globals();
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
