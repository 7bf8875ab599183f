/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_decoder */
/* tests/test_decoder_augment_fast.c: the AVX2 paths of the upward augmentation (running
 * sums of eight words at once, categorical draws by counting) against the portable ones
 * (datm_test_hooks.augment_scalar = 1: four words at once, binary search), including the block
 * search used for words with several tokens. Checks, bit for bit,
 * the per-document counts m(l) and the summed A(l) and top-layer tables of one pass, for
 * sampled and expected counts, 1 and 2 threads, and widths that are multiples of 8, of 4
 * only, and of neither (the portable draw is then used by both). */
#include <omp.h>

#include "core/core.h"
#include "core/testhooks.h"
#include "decoder_testutil.h"


static int same(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

static void run_case(int L, const int64_t *K, datm_aug_mode mode, int threads, double mean)
{
    char what[128];
    snprintf(what, sizeof what, "L %d, K %lld-%lld, %s, %d thread(s), mean count %g", L,
             (long long)K[1], (long long)K[L], mode == DATM_AUG_EXPECTED ? "expected" : "sampled",
             threads, mean);
    omp_set_num_threads(threads);
    datm_gbn *g = tu_gbn(L, K, 4, 1);
    const int64_t N = 90;
    datm_csr X;
    tu_random_csr(&X, N, K[0], mean, 8, 1);
    double *theta[DATM_MAX_LAYERS + 1] = {NULL};
    tu_random_theta(g, N, 0.6, 9, theta);
    datm_gbn_stats *s[2];
    int32_t *m[2][DATM_MAX_LAYERS + 1];
    for (int v = 0; v < 2; v++) {
        datm_test_hooks.augment_scalar = v;
        MUST(datm_gbn_stats_create(g, &s[v], TU_ERR));
        for (int l = 1; l <= L; l++) m[v][l] = calloc((size_t)(N * K[l]), sizeof(int32_t));
        datm_gbn_stats_reset(s[v]);
        datm_gbn_key key = {6, DATM_STREAM_DOC, 3, NULL};
        MUST(datm_gbn_augment(g, &X, (const double *const *)theta, &key, mode, s[v], m[v],
                              TU_ERR));
        datm_gbn_stats_reduce(s[v]);
    }
    datm_test_hooks.augment_scalar = 0;
    double tot = 0;
    for (int l = 1; l <= L; l++) {
        const size_t n = (size_t)(K[l - 1] * K[l]);
        CHECK(same(s[0]->A[l], s[1]->A[l], n * sizeof(double)), "%s: A(%d) differs", what, l);
        CHECK(same(m[0][l], m[1][l], (size_t)(N * K[l]) * sizeof(int32_t)), "%s: m(%d) differs",
              what, l);
        for (size_t i = 0; i < n; i++) tot += s[0]->A[l][i];
    }
    CHECK(same(s[0]->tables, s[1]->tables, (size_t)K[L] * sizeof(double)), "%s: tables differ",
          what);
    CHECK(tot > 0, "%s: no counts", what);
    for (int v = 0; v < 2; v++) {
        for (int l = 1; l <= L; l++) free(m[v][l]);
        datm_gbn_stats_destroy(&s[v]);
    }
    for (int l = 1; l <= L; l++) free(theta[l]);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

int main(void)
{
    const int64_t Ka[] = {300, 128, 64, 32}, Kb[] = {120, 20, 12, 4}, Kc[] = {77, 13, 7, 3};
    /* block search (categorical_cum_blocks) with 12 and 5 blocks (a remainder past the
     * vector loop) and MNIST-like counts (mean 40 per word) */
    const int64_t Kd[] = {150, 96, 40, 32};
    for (int threads = 1; threads <= 2; threads++)
        for (int mode = 0; mode <= 1; mode++) {
            run_case(3, Ka, (datm_aug_mode)mode, threads, 0.8);
            run_case(3, Kb, (datm_aug_mode)mode, threads, 0.8);
            run_case(2, Kc, (datm_aug_mode)mode, threads, 0.8);
            run_case(3, Ka, (datm_aug_mode)mode, threads, 40.0);
            run_case(3, Kd, (datm_aug_mode)mode, threads, 40.0);
        }
    if (fails) {
        fprintf(stderr, "%d check(s) failed\n", fails);
        return 1;
    }
    printf("augment: AVX2 and portable paths identical in every case\n");
    return 0;
}
