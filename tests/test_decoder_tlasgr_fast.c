/* ctest-labels: unit  ctest-timeout: 300  ctest-link: datm_decoder */
/* tests/test_decoder_tlasgr_fast.c: the blocked TLASGR step (datm_tlasgr_step: 8-column
 * blocks, AVX2 or portable kernel, OpenMP over blocks) against the plain column-by-column
 * reference (datm_tlasgr_step_ref). Checks, bit for bit, after several steps: Phi, its float
 * mirror, M, r, t and the report, for shapes whose widths are and are not multiples of 8,
 * counts with empty topics, huge counts, tiny eta; with the AVX-512 (where the CPU has it),
 * the AVX2 and the portable kernel and with 1 and 2 threads. Also the error path: a NaN count fails on the same step, names the
 * same column and leaves the same state (the float mirror there: the rounding of Phi). Prints the time of both on a 2000 x 128 layer. */
#include <omp.h>

#include "core/core.h"
#include "core/testhooks.h"
#include "decoder_testutil.h"


typedef struct tcase {
    const char *name;
    int L;
    int64_t K[5];
    int use_r;
    double eta;       /* <= 0: default */
    double rho;
    int kind;         /* 0 Poisson counts, 1 + empty odd topics, 2 huge, 3 NaN at step 3 */
} tcase;

/* Counts for step `it` of case c into s (one pass). */
static void fill_stats(datm_gbn_stats *s, const tcase *c, int it)
{
    datm_gbn_stats_reset(s);
    datm_gbn_stats_reduce(s);
    datm_rng r;
    datm_rng_init2(&r, 5, DATM_STREAM_TEST, 77, (uint64_t)it);
    for (int l = 1; l <= s->L; l++) {
        const int64_t R = s->K[l - 1], C = s->K[l];
        for (int64_t v = 0; v < R; v++)
            for (int64_t k = 0; k < C; k++) {
                double a = (double)datm_rng_poisson(&r, 0.3 + (double)(k % 5));
                if (c->kind == 1 && (k % 2)) a = 0;
                if (c->kind == 2) a = (v == k % 3) ? 1e9 : a;
                s->A[l][v * C + k] = a;
            }
    }
    if (c->kind == 3 && it == 3) s->A[1][7 * s->K[1] + (s->K[1] > 9 ? 9 : 0)] = NAN;
    for (int64_t k = 0; k < s->K[s->L]; k++) s->tables[k] = (double)(k % 4);
    s->q_sum = 2.5;
    s->n_passes = 1;
    s->dirty = 0;
}

static int same(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

static void compare(const datm_gbn *a, const datm_gbn *b, int failed, const char *what)
{
    for (int l = 1; l <= a->L; l++) {
        size_t n = (size_t)(a->K[l - 1] * a->K[l]);
        CHECK(same(a->phi[l], b->phi[l], n * sizeof(double)), "%s: Phi(%d) differs", what, l);
        /* the float mirror: equal, or (after a failed step, where the reference leaves it
         * stale) the rounding of Phi */
        int fok = same(a->phi_f[l], b->phi_f[l], n * sizeof(float));
        if (!fok && failed) {
            fok = 1;
            for (size_t i = 0; i < n; i++) fok &= a->phi_f[l][i] == (float)a->phi[l][i];
        }
        CHECK(fok, "%s: Phi_f(%d) differs", what, l);
        CHECK(same(a->M[l], b->M[l], (size_t)a->K[l] * sizeof(double)), "%s: M(%d) differs",
              what, l);
    }
    if (a->r) CHECK(same(a->r, b->r, (size_t)a->K[a->L] * sizeof(double)), "%s: r differs", what);
    CHECK(a->t == b->t && a->M_r == b->M_r, "%s: t %lld/%lld, M_r %.17g/%.17g", what,
          (long long)a->t, (long long)b->t, a->M_r, b->M_r);
}

static void run_case(const tcase *c)
{
    datm_gbn_opts o;
    datm_gbn_opts_default(&o);
    o.use_r = c->use_r;
    if (c->eta > 0)
        for (int l = 1; l <= c->L; l++) o.eta[l] = c->eta;
    datm_gbn *ref = NULL;
    MUST(datm_gbn_create(c->L, c->K, &o, 11, &ref, TU_ERR));
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(ref, &s, TU_ERR));
    /* variants: (threads, force_scalar, force_avx2) */
    enum { NV = 4 };
    const int var[NV][3] = {{1, 0, 0}, {2, 0, 0}, {2, 1, 0}, {1, 0, 1}};
    datm_gbn *fast[NV];
    for (int i = 0; i < NV; i++) {
        MUST(datm_gbn_create(c->L, c->K, &o, 11, &fast[i], TU_ERR));
        datm_gbn_copy(fast[i], ref);
    }
    const int steps = 6;
    for (int it = 0; it < steps; it++) {
        fill_stats(s, c, it);
        datm_tlasgr_report rr, rf;
        datm_error er, ef;
        int rc_ref = datm_tlasgr_step_ref(ref, s, c->rho, 99, &rr, &er);
        for (int i = 0; i < NV; i++) {
            omp_set_num_threads(var[i][0]);
            datm_test_hooks.tlasgr_scalar = var[i][1];
            datm_test_hooks.tlasgr_avx2 = var[i][2];
            fill_stats(s, c, it);
            int rc = datm_tlasgr_step(fast[i], s, c->rho, 99, &rf, &ef);
            char what[160];
            snprintf(what, sizeof what, "%s, step %d, %d thread(s)%s", c->name, it, var[i][0],
                     var[i][1] ? ", portable kernel" : var[i][2] ? ", AVX2 kernel" : "");
            CHECK(rc == rc_ref, "%s: status %d vs reference %d", what, rc, rc_ref);
            if (rc && rc_ref)
                CHECK(strcmp(ef.msg, er.msg) == 0, "%s: error '%s' vs reference '%s'", what,
                      ef.msg, er.msg);
            if (!rc && !rc_ref)
                CHECK(same(&rf, &rr, sizeof rr), "%s: report differs", what);
            compare(fast[i], ref, rc_ref != 0, what);
        }
        datm_test_hooks_reset();
        omp_set_num_threads(2);
        if (rc_ref) {
            CHECK(c->kind == 3, "%s: reference failed: %s", c->name, er.msg);
            break;
        }
    }
    if (c->kind == 3) CHECK(ref->t == 3, "%s: the NaN step did not fail (t = %lld)", c->name,
                            (long long)ref->t);
    for (int i = 0; i < NV; i++) datm_gbn_destroy(&fast[i]);
    datm_gbn_stats_destroy(&s);
    datm_gbn_destroy(&ref);
}

static void timing(void)
{
    const int64_t K[] = {2000, 128, 64, 32};
    datm_gbn *g = tu_gbn(3, K, 3, 0);
    datm_gbn_stats *s = NULL;
    MUST(datm_gbn_stats_create(g, &s, TU_ERR));
    tcase c = {"timing", 3, {0}, 0, 0, 50, 0};
    double tr = 1e30, tf = 1e30;
    omp_set_num_threads(1);
    for (int rep = 0; rep < 5; rep++) {
        fill_stats(s, &c, rep);
        double t0 = datm_time_now();
        MUST(datm_tlasgr_step_ref(g, s, 50, 1, NULL, TU_ERR));
        double t1 = datm_time_now();
        MUST(datm_tlasgr_step(g, s, 50, 1, NULL, TU_ERR));
        double t2 = datm_time_now();
        tr = fmin(tr, t1 - t0);
        tf = fmin(tf, t2 - t1);
    }
    omp_set_num_threads(2);
    printf("  2000-128-64-32, 1 thread: reference %.3f ms, blocked %.3f ms\n", tr * 1e3, tf * 1e3);
    datm_gbn_stats_destroy(&s);
    datm_gbn_destroy(&g);
}

int main(void)
{
    const tcase cases[] = {
        {"2000-128-64-32", 3, {2000, 128, 64, 32}, 0, 0, 56, 0},
        {"300-40-10, r", 2, {300, 40, 10}, 1, 0, 20, 0},
        {"97-13-5-3, r, empty topics", 3, {97, 13, 5, 3}, 1, 0, 7, 1},
        {"64-8, eta tiny", 1, {64, 8}, 0, 1e-12, 1e6, 1},
        {"50-19, huge counts", 1, {50, 19}, 1, 0, 1e6, 2},
        {"120-24-9, NaN count", 2, {120, 24, 9}, 0, 0, 10, 3},
    };
    for (size_t i = 0; i < DATM_COUNTOF(cases); i++) run_case(&cases[i]);
    timing();
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
