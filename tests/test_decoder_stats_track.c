/* ctest-labels: unit  ctest-timeout: 300  ctest-link: datm_decoder */
/* tests/test_decoder_stats_track.c: the sparse bookkeeping of the augmentation counts
 * (datm_gbn_stats_track, engine/decoder/augment.c) against the dense accumulators it stands
 * in for. Over several mini-batches, on 1 and 2 threads, a tracked and an untracked stats
 * get the same passes; after each fold (1) every accumulator of every thread is equal
 * between the two, (2) the list holds exactly thread 0's nonzero entries, each once;
 * another process's counts are then added the way an exchange does (appending the entries
 * they make nonzero), and (3) after the next reset every accumulator is 0 again. A pass of
 * expected counts, a second fold, an exchange that lost its list and counts added after the
 * plain fold (datm_gbn_stats_fold, which gives no list to append to) must fall back to the
 * dense ways and still leave the accumulators equal and clear. */
#include <omp.h>

#include "decoder_testutil.h"

/* (1) and (2): the same accumulators; the list is thread 0's nonzeros, each once. */
static void check_fold(const datm_gbn_stats *a, const datm_gbn_stats *b, const int64_t *idx,
                       int64_t n, const char *what)
{
    const int64_t len = a->fx_len;
    CHECK(memcmp(a->fx, b->fx, (size_t)(a->n_threads * len) * sizeof(int64_t)) == 0,
          "%s: tracked and dense accumulators differ", what);
    if (n < 0) return;   /* unknown: nothing listed to check */
    char *seen = calloc((size_t)len, 1);
    int64_t nz = 0, bad = 0;
    for (int64_t i = 0; i < len; i++) nz += a->fx[i] != 0;
    for (int64_t j = 0; j < n; j++) {
        bad += idx[j] < 0 || idx[j] >= len || seen[idx[j]] || a->fx[idx[j]] == 0;
        if (idx[j] >= 0 && idx[j] < len) seen[idx[j]] = 1;
    }
    CHECK(bad == 0 && n == nz, "%s: %lld listed (%lld bad), %lld nonzero", what, (long long)n,
          (long long)bad, (long long)nz);
    free(seen);
}

/* Another process's pairs added as datm_par_sum_i64_listed adds them: entries new to x
 * appended to the list. */
static void add_remote(datm_gbn_stats *a, datm_gbn_stats *b, int64_t *idx, int64_t *n,
                       uint64_t seed)
{
    datm_rng r;
    datm_rng_init2(&r, seed, 0, 0, 0);
    for (int j = 0; j < 200; j++) {
        const int64_t i = (int64_t)(datm_rng_uniform(&r) * (double)a->fx_len) % a->fx_len;
        const int64_t v = 1 + (int64_t)(datm_rng_uniform(&r) * 5) * (int64_t)16777216;
        if (idx && *n >= 0 && a->fx[i] == 0) idx[(*n)++] = i;
        a->fx[i] += v;
        b->fx[i] += v;
    }
}

static void check_clear(const datm_gbn_stats *s, const char *what)
{
    int64_t nz = 0;
    for (int64_t i = 0; i < s->n_threads * s->fx_len; i++) nz += s->fx[i] != 0;
    CHECK(nz == 0, "%s: %lld entries left after reset", what, (long long)nz);
}

static void run(int threads)
{
    omp_set_num_threads(threads);
    const int L = 3;
    const int64_t K[] = {300, 32, 16, 8};
    datm_gbn *g = tu_gbn(L, K, 5, 1);
    datm_csr X;
    const int64_t N = 120;
    tu_random_csr(&X, N, K[0], 0.05, 9, 1);
    double *theta[DATM_MAX_LAYERS + 1] = {0};
    tu_random_theta(g, N, 0.4, 3, theta);
    datm_gbn_stats *a = NULL, *b = NULL;   /* tracked, dense */
    MUST(datm_gbn_stats_create(g, &a, TU_ERR));
    MUST(datm_gbn_stats_create(g, &b, TU_ERR));
    MUST(datm_gbn_stats_track(a, TU_ERR));
    /* steps: 0, 1, 4, 5, 6 sampled; 2 expected; 3 folds twice; 5 loses the list in its
     * exchange; 6 folds without a list and gets counts added unlisted */
    for (int step = 0; step < 7; step++) {
        char what[64];
        snprintf(what, sizeof what, "%d threads, step %d", threads, step);
        datm_gbn_stats_reset(a);
        datm_gbn_stats_reset(b);
        check_clear(a, what);
        const datm_aug_mode mode = step == 2 ? DATM_AUG_EXPECTED : DATM_AUG_SAMPLED;
        datm_gbn_key key = {.seed = 11, .purpose = DATM_STREAM_DOC, .step = (uint64_t)step};
        MUST(datm_gbn_augment(g, &X, (const double *const *)theta, &key, mode, a, NULL, TU_ERR));
        MUST(datm_gbn_augment(g, &X, (const double *const *)theta, &key, mode, b, NULL, TU_ERR));
        int64_t *idx = NULL, *n = NULL;
        if (step == 6) datm_gbn_stats_fold(a);
        else datm_gbn_stats_fold_listed(a, &idx, &n);
        datm_gbn_stats_fold(b);
        if (step == 3) {   /* a second fold: unknown from then on */
            datm_gbn_stats_fold_listed(a, &idx, &n);
            datm_gbn_stats_fold(b);
        }
        const int expect_list = step != 2 && step != 3 && step != 6;
        CHECK((idx != NULL && n && *n >= 0) == expect_list, "%s: list %s", what,
              expect_list ? "missing" : "given where the counts were not listed");
        check_fold(a, b, idx, idx && n ? *n : -1, what);
        if (step == 5 && n) *n = -1;   /* as an exchange that went dense */
        add_remote(a, b, idx, n, 100 + (uint64_t)step);
        check_fold(a, b, idx, idx && n ? *n : -1, what);
    }
    datm_gbn_stats_reset(a);
    check_clear(a, "last reset");
    datm_gbn_stats_destroy(&a);
    datm_gbn_stats_destroy(&b);
    for (int l = 1; l <= L; l++) free(theta[l]);
    datm_csr_free(&X);
    datm_gbn_destroy(&g);
}

int main(void)
{
    run(1);
    run(2);
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
