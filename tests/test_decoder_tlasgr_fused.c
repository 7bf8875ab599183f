/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_decoder */
/* tests/test_decoder_tlasgr_fused.c: datm_tlasgr_step on dirty stats sums the per-thread
 * count accumulators inside its blocks instead of calling datm_gbn_stats_reduce first (A is
 * left stale, the stats dirty). Checks, bit for bit against the unfused order
 * (datm_test_hooks.tlasgr_unfused = 1), over several steps of real augmentation passes on random
 * counts and theta (sampled and expected counts, with and without r, widths that are and
 * are not multiples of 8, 1 and 2 threads): Phi, its float mirror, M, r, t; and the
 * sequences around a fused step: a second pass added without a reset, a second step without
 * a new pass, and A / tables from an explicit datm_gbn_stats_reduce afterwards. */
#include <omp.h>

#include "core/core.h"
#include "core/testhooks.h"
#include "decoder_testutil.h"


static int same(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* One training sequence on g with stats s (fused or not); the stats' A and tables of the
 * last step are copied to A_out (sum of sizes) for comparison. */
static void run(datm_gbn *g, datm_gbn_stats *s, const datm_csr *X, double **theta,
                datm_aug_mode mode, int fused, double *A_out)
{
    datm_test_hooks.tlasgr_unfused = !fused;
    for (int it = 0; it < 5; it++) {
        datm_gbn_key key = {3, DATM_STREAM_DOC, (uint64_t)it, NULL};
        if (it != 2) datm_gbn_stats_reset(s);   /* step 2: the pass adds to step 1's stats */
        MUST(datm_gbn_augment(g, X, (const double *const *)theta, &key, mode, s, NULL, TU_ERR));
        MUST(datm_tlasgr_step(g, s, 7.5, 21, NULL, TU_ERR));
        if (it == 3) MUST(datm_tlasgr_step(g, s, 7.5, 22, NULL, TU_ERR));   /* no new pass */
        if (it == 4) datm_gbn_stats_reduce(s);
    }
    int64_t o = 0;
    for (int l = 1; l <= g->L; l++) {
        const int64_t n = g->K[l - 1] * g->K[l];
        memcpy(A_out + o, s->A[l], (size_t)n * sizeof(double));
        o += n;
    }
    memcpy(A_out + o, s->tables, (size_t)g->K[g->L] * sizeof(double));
    datm_test_hooks.tlasgr_unfused = 0;
}

static void run_case(int L, const int64_t *K, int use_r, datm_aug_mode mode, int threads)
{
    char what[128];
    snprintf(what, sizeof what, "L %d, K1 %lld, r %d, %s, %d thread(s)", L, (long long)K[1],
             use_r, mode == DATM_AUG_EXPECTED ? "expected" : "sampled", threads);
    omp_set_num_threads(threads);
    datm_gbn_opts o;
    datm_gbn_opts_default(&o);
    o.use_r = use_r;
    datm_gbn *g[2];
    datm_gbn_stats *s[2];
    double *A[2];
    int64_t alen = K[L];
    for (int l = 1; l <= L; l++) alen += K[l - 1] * K[l];
    datm_csr X;
    tu_random_csr(&X, 60, K[0], 0.4, 5, 1);
    double *theta[DATM_MAX_LAYERS + 1] = {NULL};
    MUST(datm_gbn_create(L, K, &o, 11, &g[0], TU_ERR));
    tu_random_theta(g[0], 60, 0.7, 6, theta);
    for (int i = 0; i < 2; i++) {
        if (i) MUST(datm_gbn_create(L, K, &o, 11, &g[1], TU_ERR));
        MUST(datm_gbn_stats_create(g[i], &s[i], TU_ERR));
        A[i] = calloc((size_t)alen, sizeof(double));
        run(g[i], s[i], &X, theta, mode, i == 1, A[i]);
    }
    for (int l = 1; l <= L; l++) {
        const size_t n = (size_t)(K[l - 1] * K[l]);
        CHECK(same(g[0]->phi[l], g[1]->phi[l], n * sizeof(double)), "%s: Phi(%d) differs", what, l);
        CHECK(same(g[0]->phi_f[l], g[1]->phi_f[l], n * sizeof(float)), "%s: Phi_f(%d) differs",
              what, l);
        CHECK(same(g[0]->M[l], g[1]->M[l], (size_t)K[l] * sizeof(double)), "%s: M(%d) differs",
              what, l);
    }
    if (use_r) CHECK(same(g[0]->r, g[1]->r, (size_t)K[L] * sizeof(double)), "%s: r differs", what);
    CHECK(g[0]->t == g[1]->t && g[0]->t == 6, "%s: t %lld / %lld", what, (long long)g[0]->t,
          (long long)g[1]->t);
    CHECK(same(A[0], A[1], (size_t)alen * sizeof(double)), "%s: A / tables differ", what);
    double tot = 0;
    for (int64_t i = 0; i < alen; i++) tot += A[1][i];
    CHECK(tot > 0, "%s: no counts", what);
    for (int i = 0; i < 2; i++) {
        free(A[i]);
        datm_gbn_stats_destroy(&s[i]);
        datm_gbn_destroy(&g[i]);
    }
    for (int l = 1; l <= L; l++) free(theta[l]);
    datm_csr_free(&X);
}

int main(void)
{
    const int64_t K1[] = {40, 16, 8, 4}, K2[] = {37, 13, 6, 3};
    for (int threads = 1; threads <= 2; threads++)
        for (int mode = 0; mode <= 1; mode++) {
            run_case(3, K1, 1, (datm_aug_mode)mode, threads);
            run_case(2, K2, 0, (datm_aug_mode)mode, threads);
            run_case(1, K2, 1, (datm_aug_mode)mode, threads);
        }
    if (fails) {
        fprintf(stderr, "%d check(s) failed\n", fails);
        return 1;
    }
    printf("tlasgr fused reduction: identical to reduce-then-step in every case\n");
    return 0;
}
