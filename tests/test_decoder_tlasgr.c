/* ctest-labels: unit;stat  ctest-timeout: 600  ctest-link: datm_decoder */
/* tests/test_decoder_tlasgr.c: the TLASGR-MCMC step (engine/decoder/tlasgr.c).
 * Checks: (1) the step-size schedule eps_t = eps0 ((tau0 + t)/(tau0 + 1))^-kappa0;
 * (2) the simplex projection: shift along the old column (exact when nothing is clamped),
 * negative entries clamped to the floor (> 0 after renormalising), column sums 1; (3) one step keeps every column on
 * the simplex, > 0, finite, M >= m_floor, r > 0 for extreme inputs: empty topics, all
 * counts 0, eta 1e-12, counts 1e9, rho 1e6; (4) M is set on the first step and annealed
 * with eps'_t afterwards; (5) with fixed counts and a constant small step, the chain's
 * long-run mean of phi matches the Dirichlet posterior mean (rho A + eta)/(rho A. + eta V)
 * within 5 batch-means standard errors (+ a 2% discretisation allowance); (6) 1 vs 2
 * threads give the same Phi. */
#include <float.h>
#include <omp.h>

#include "decoder_testutil.h"

static void test_schedule(void)
{
    CHECK(fabs(datm_tlasgr_eps(1, 20, 0.7, 1) - 1.0) < 1e-15, "eps_1 != eps0");
    double e = datm_tlasgr_eps(1, 20, 0.7, 21);
    CHECK(fabs(e - pow(41.0 / 21.0, -0.7)) < 1e-15, "eps_21 = %.17g", e);
    CHECK(fabs(datm_tlasgr_eps(0.5, 20, 0.7, 100) - 0.5 * pow(120.0 / 21.0, -0.7)) < 1e-15,
          "eps'_100");
}

static void test_projection(void)
{
    /* nothing clamped: exactly the shift along the old column */
    double old[4] = {0.1, 0.2, 0.3, 0.4};
    double col[4] = {0.12, 0.25, 0.31, 0.42};
    double want[4];
    double s = 0.12 + 0.25 + 0.31 + 0.42;
    for (int i = 0; i < 4; i++) want[i] = col[i] - (s - 1.0) * old[i];
    datm_simplex_project(col, old, 4, 1, 1e-10);
    for (int i = 0; i < 4; i++)
        CHECK(fabs(col[i] - want[i]) < 1e-15, "shift entry %d: %.17g vs %.17g", i, col[i], want[i]);
    /* negative entries, strided column */
    double old2[10] = {0.25, -1, 0.25, -1, 0.25, -1, 0.25, -1, 0, -1};
    double col2[10] = {-0.3, 7, 0.9, 7, -1e-3, 7, 0.6, 7, -5, 7};
    datm_simplex_project(col2, old2, 5, 2, 1e-10);
    double t = 0;
    for (int i = 0; i < 5; i++) {
        CHECK(col2[2 * i] > 0 && isfinite(col2[2 * i]), "entry %d = %.17g", i,
              col2[2 * i]);
        t += col2[2 * i];
    }
    CHECK(fabs(t - 1.0) < 1e-14, "projected column sums to %.17g", t);
    for (int i = 0; i < 5; i++) CHECK(col2[2 * i + 1] == 7, "stride: neighbour %d touched", i);
}

static void check_gbn(const datm_gbn *g, const char *what)
{
    for (int l = 1; l <= g->L; l++) {
        int64_t R = g->K[l - 1], C = g->K[l];
        for (int64_t k = 0; k < C; k++) {
            double s = 0;
            for (int64_t v = 0; v < R; v++) {
                double x = g->phi[l][v * C + k];
                CHECK(isfinite(x) && x > 0, "%s: Phi(%d)[%lld,%lld] = %.17g",
                      what, l, (long long)v, (long long)k, x);
                s += x;
            }
            CHECK(fabs(s - 1) < 1e-12, "%s: Phi(%d) column %lld sums to %.17g", what, l,
                  (long long)k, s);
            CHECK(g->M[l][k] >= g->o.m_floor && isfinite(g->M[l][k]), "%s: M = %.17g", what,
                  g->M[l][k]);
        }
    }
    if (g->r)
        for (int64_t k = 0; k < g->K[g->L]; k++)
            CHECK(isfinite(g->r[k]) && g->r[k] > 0, "%s: r[%lld] = %.17g", what, (long long)k,
                  g->r[k]);
}

/* Fills the stats by hand: pass count 1, A from a generator. */
static void set_stats(datm_gbn_stats *s, double (*f)(int l, int64_t v, int64_t k), double q,
                      double tab)
{
    datm_gbn_stats_reset(s);
    datm_gbn_stats_reduce(s);
    for (int l = 1; l <= s->L; l++)
        for (int64_t v = 0; v < s->K[l - 1]; v++)
            for (int64_t k = 0; k < s->K[l]; k++) s->A[l][v * s->K[l] + k] = f(l, v, k);
    for (int64_t k = 0; k < s->K[s->L]; k++) s->tables[k] = tab;
    s->q_sum = q;
    s->n_passes = 1;
    s->dirty = 0;
}

static double f_zero(int l, int64_t v, int64_t k) { (void)l; (void)v; (void)k; return 0; }
static double f_empty_odd(int l, int64_t v, int64_t k)
{
    (void)l;
    return (k % 2) ? 0.0 : (double)((v * 7 + k) % 5);
}
static double f_huge(int l, int64_t v, int64_t k) { (void)l; return (v == k % 3) ? 1e9 : 0.0; }

static void test_extremes(void)
{
    const int L = 3;
    const int64_t K[] = {200, 16, 8, 4};
    struct {
        const char *name;
        double (*f)(int, int64_t, int64_t);
        double eta, rho, q, tab;
    } cases[] = {
        {"all zero counts", f_zero, 0, 10, 0, 0},
        {"empty topics", f_empty_odd, 0, 50, 3, 2},
        {"eta tiny", f_empty_odd, 1e-12, 1, 1, 1},
        {"huge counts, big rho", f_huge, 0, 1e6, 1e3, 1e9},
        {"eta tiny, zero counts", f_zero, 1e-12, 1e6, 0, 0},
    };
    for (size_t c = 0; c < DATM_COUNTOF(cases); c++) {
        datm_gbn_opts o;
        datm_gbn_opts_default(&o);
        for (int l = 1; l <= L; l++) o.eta[l] = cases[c].eta;
        datm_gbn *g = NULL;
        MUST(datm_gbn_create(L, K, &o, 3, &g, TU_ERR));
        datm_gbn_stats *s = NULL;
        MUST(datm_gbn_stats_create(g, &s, TU_ERR));
        for (int step = 0; step < 25; step++) {
            set_stats(s, cases[c].f, cases[c].q, cases[c].tab);
            datm_error err;
            int rc = datm_tlasgr_step(g, s, cases[c].rho, 99, NULL, &err);
            CHECK(rc == DATM_OK, "%s step %d: %s", cases[c].name, step, err.msg);
            if (rc) break;
        }
        check_gbn(g, cases[c].name);
        datm_error err;
        CHECK(datm_gbn_check(g, 1e-12, &err) == DATM_OK, "%s: %s", cases[c].name, err.msg);
        datm_gbn_stats_destroy(&s);
        datm_gbn_destroy(&g);
    }
}

static double f_ramp(int l, int64_t v, int64_t k) { (void)l; return (double)((v + k) % 4) * 3.0; }

static void test_m_anneal(void)
{
    const int64_t K[] = {6, 3};
    datm_gbn *g = tu_gbn(1, K, 4, 1);
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(g, &s, TU_ERR));
    set_stats(s, f_ramp, 2.0, 1.0);
    const double rho = 7.0;
    MUST(datm_tlasgr_step(g, s, rho, 1, NULL, TU_ERR));
    double est[3];
    for (int64_t k = 0; k < 3; k++) {
        double cs = 0;
        for (int64_t v = 0; v < 6; v++) cs += f_ramp(1, v, k);
        est[k] = rho * cs;
        CHECK(fabs(g->M[1][k] - est[k]) < 1e-12 * est[k], "first step: M = %.17g, want %.17g",
              g->M[1][k], est[k]);
    }
    CHECK(fabs(g->M_r - rho * 2.0) < 1e-12, "first step: M_r = %.17g", g->M_r);
    /* second step: counts doubled -> M = (1 - eps'_2) M + eps'_2 * 2 est */
    double A2 = 0;
    (void)A2;
    datm_gbn_stats_reset(s);
    datm_gbn_stats_reduce(s);
    for (int64_t v = 0; v < 6; v++)
        for (int64_t k = 0; k < 3; k++) s->A[1][v * 3 + k] = 2 * f_ramp(1, v, k);
    s->n_passes = 1;
    s->dirty = 0;
    s->q_sum = 2.0;
    double em = datm_tlasgr_eps(0.5, 20, 0.7, 2);
    MUST(datm_tlasgr_step(g, s, rho, 1, NULL, TU_ERR));
    for (int64_t k = 0; k < 3; k++) {
        double want = (1 - em) * est[k] + em * 2 * est[k];
        CHECK(fabs(g->M[1][k] - want) < 1e-12 * want, "second step: M = %.17g, want %.17g",
              g->M[1][k], want);
    }
    datm_gbn_stats_destroy(&s);
    datm_gbn_destroy(&g);
}

/* Fixed counts, constant step: long-run mean of the column vs the Dirichlet posterior mean. */
static const double STAT_A[5] = {40, 20, 12, 4, 0};
static double f_stat(int l, int64_t v, int64_t k) { (void)l; (void)k; return STAT_A[v]; }

static void test_stationary(void)
{
    const int64_t K[] = {5, 1};
    datm_gbn_opts o;
    datm_gbn_opts_default(&o);
    o.use_r = 0;
    o.eta[1] = 0.5;
    o.eps0 = 0.02;
    o.tau0 = 1e300;   /* constant step */
    datm_gbn *g = NULL;
    MUST(datm_gbn_create(1, K, &o, 8, &g, TU_ERR));
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(g, &s, TU_ERR));
    const double rho = 1.0;
    double alpha[5], a0 = 0;
    for (int v = 0; v < 5; v++) a0 += (alpha[v] = rho * STAT_A[v] + 0.5);
    const int burn = 2000, nb = 50, bl = 2000;
    double bm[50][5] = {{0}};
    for (int it = 0; it < burn + nb * bl; it++) {
        set_stats(s, f_stat, 0, 0);
        MUST(datm_tlasgr_step(g, s, rho, 5, NULL, TU_ERR));
        if (it >= burn) {
            int b = (it - burn) / bl;
            for (int v = 0; v < 5; v++) bm[b][v] += g->phi[1][v] / bl;
        }
    }
    for (int v = 0; v < 5; v++) {
        double m = 0, ss = 0;
        for (int b = 0; b < nb; b++) m += bm[b][v] / nb;
        for (int b = 0; b < nb; b++) ss += (bm[b][v] - m) * (bm[b][v] - m);
        double se = sqrt(ss / (nb - 1) / nb), want = alpha[v] / a0;
        printf("phi[%d]: chain mean %.5f (se %.5f), Dirichlet mean %.5f\n", v, m, se, want);
        CHECK(fabs(m - want) < 5 * se + 0.02 * want, "phi[%d] mean %.5f vs %.5f", v, m, want);
    }
    datm_gbn_stats_destroy(&s);
    datm_gbn_destroy(&g);
}

static void test_threads(void)
{
    const int64_t K[] = {300, 40, 10};
    datm_gbn *g[2];
    for (int th = 0; th < 2; th++) {
        omp_set_num_threads(th + 1);
        g[th] = tu_gbn(2, K, 6, 1);
        datm_gbn_stats *s = NULL;
        MUST(datm_gbn_stats_create(g[th], &s, TU_ERR));
        for (int it = 0; it < 5; it++) {
            set_stats(s, f_empty_odd, 3, 2);
            MUST(datm_tlasgr_step(g[th], s, 20, 42, NULL, TU_ERR));
        }
        datm_gbn_stats_destroy(&s);
    }
    for (int l = 1; l <= 2; l++)
        CHECK(memcmp(g[0]->phi[l], g[1]->phi[l], (size_t)(K[l - 1] * K[l]) * sizeof(double)) == 0,
              "Phi(%d) differs between 1 and 2 threads", l);
    CHECK(memcmp(g[0]->r, g[1]->r, 10 * sizeof(double)) == 0, "r differs between thread counts");
    omp_set_num_threads(2);
    datm_gbn_destroy(&g[0]);
    datm_gbn_destroy(&g[1]);
}

int main(void)
{
    test_schedule();
    test_projection();
    test_extremes();
    test_m_anneal();
    test_stationary();
    test_threads();
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
