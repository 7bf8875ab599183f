/* ctest-labels: unit;stat  ctest-timeout: 120  ctest-link: datm_data */
/* tests/test_data_split_batches.c: the seeded token split and the mini-batch iterator.
 * Token split:
 *  - obs + heldout == X entry by entry, every non-empty document keeps >= 1 observed token,
 *    rows stay sorted, no zero entries stored;
 *  - same seed -> identical, other seed -> different, 1 thread == 2 threads (bitwise);
 *  - total observed tokens vs its expectation p T + sum_n (1-p)^{T_n} (the >= 1 rule),
 *    within 5 binomial standard deviations;
 *  - counts above the direct-sampling threshold (1000 and 100000 per entry): the mean and
 *    variance of the observed part match Binomial(c, p) (5 standard errors);
 *  - obs_frac = 0 keeps exactly one token per document, obs_frac = 1 holds nothing out,
 *    obs_frac outside [0, 1] is an error;
 *  - the observed part of chosen rows alone equals those rows of the whole split.
 * Mini-batches:
 *  - each epoch visits every document exactly once, in ceil(n/B) batches with the last one
 *    partial (or n/B full batches with drop_last), then returns 0 once;
 *  - epochs differ, the same seed repeats, shuffle = 0 is the identity;
 *  - seek(epoch, b) reproduces batch b of that epoch (resume);
 *  - the position of one document over 4000 epochs is uniform (chi-square, 9 dof, p = 0.001). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "test_check.h"


/* N docs; doc n has (n % 9) distinct words with counts 1 + (n*j) % 6 (some empty docs). */
static datm_csr make_counts(int64_t N, int64_t V)
{
    datm_csr m;
    datm_error err;
    if (datm_csr_alloc(&m, N, V, N * 9, &err)) { printf("%s\n", err.msg); exit(1); }
    int64_t p = 0;
    for (int64_t n = 0; n < N; n++) {
        int len = (int)(n % 9);
        for (int j = 0; j < len; j++) {
            m.col[p] = (int32_t)((n * 7 + j * (V / 9)) % V);
            m.val[p] = (float)(1 + (n * (j + 1)) % 6);
            p++;
        }
        /* keep columns sorted */
        for (int64_t a = m.row_ptr[n] + 1; a < p; a++)
            for (int64_t b = a; b > m.row_ptr[n] && m.col[b - 1] > m.col[b]; b--) {
                int32_t t = m.col[b]; m.col[b] = m.col[b - 1]; m.col[b - 1] = t;
                float f = m.val[b]; m.val[b] = m.val[b - 1]; m.val[b - 1] = f;
            }
        m.row_ptr[n + 1] = p;
    }
    m.nnz = p;
    return m;
}

static int csr_equal(const datm_csr *a, const datm_csr *b)
{
    return a->n_rows == b->n_rows && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, (size_t)(a->n_rows + 1) * sizeof *a->row_ptr) &&
           !memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) &&
           !memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

static void check_split_sums(const datm_csr *X, const datm_csr *o, const datm_csr *h, const char *tag)
{
    int bad_sum = 0, bad_keep = 0, bad_zero = 0;
    for (int64_t n = 0; n < X->n_rows; n++) {
        int64_t a = o->row_ptr[n], b = h->row_ptr[n];
        for (int64_t j = X->row_ptr[n]; j < X->row_ptr[n + 1]; j++) {
            float s = 0;
            if (a < o->row_ptr[n + 1] && o->col[a] == X->col[j]) s += o->val[a++];
            if (b < h->row_ptr[n + 1] && h->col[b] == X->col[j]) s += h->val[b++];
            if (s != X->val[j]) bad_sum = 1;
        }
        if (a != o->row_ptr[n + 1] || b != h->row_ptr[n + 1]) bad_sum = 1;
        if (X->row_ptr[n + 1] > X->row_ptr[n] && o->row_ptr[n + 1] == o->row_ptr[n]) bad_keep = 1;
    }
    for (int64_t j = 0; j < o->nnz; j++) bad_zero |= !(o->val[j] > 0);
    for (int64_t j = 0; j < h->nnz; j++) bad_zero |= !(h->val[j] > 0);
    CHECK(!bad_sum, "%s: obs + heldout != X", tag);
    CHECK(!bad_keep, "%s: a non-empty document has no observed token", tag);
    CHECK(!bad_zero, "%s: zero entry stored", tag);
}

static void test_split(void)
{
    datm_error err;
    datm_csr X = make_counts(20000, 500), o1, h1, o2, h2;
    const double p = 0.7;
    omp_set_num_threads(1);
    CHECK(datm_token_split(&X, p, 42, &o1, &h1, &err) == 0, "split: %s", err.msg);
    check_split_sums(&X, &o1, &h1, "p=0.7");
    omp_set_num_threads(2);
    CHECK(datm_token_split(&X, p, 42, &o2, &h2, &err) == 0, "split: %s", err.msg);
    CHECK(csr_equal(&o1, &o2) && csr_equal(&h1, &h2), "split differs between 1 and 2 threads");
    datm_csr_free(&o2); datm_csr_free(&h2);
    CHECK(datm_token_split(&X, p, 43, &o2, &h2, &err) == 0, "split: %s", err.msg);
    CHECK(!csr_equal(&o1, &o2), "seeds 42 and 43 give the same split");
    datm_csr_free(&o2); datm_csr_free(&h2);
    /* held-out parts of the first rows only: the same obs, the same first held-out rows, the
     * later ones empty */
    const int64_t nh = 777;
    CHECK(datm_token_split_held_first(&X, p, 42, nh, &o2, &h2, &err) == 0, "split: %s", err.msg);
    CHECK(csr_equal(&o1, &o2), "held_first changes the observed parts");
    CHECK(h2.n_rows == X.n_rows && h2.row_ptr[nh] == h1.row_ptr[nh] &&
          h2.nnz == h1.row_ptr[nh], "held_first: %lld held-out entries, want %lld in the first "
          "%lld rows and none after", (long long)h2.nnz, (long long)h1.row_ptr[nh],
          (long long)nh);
    int same = !memcmp(h2.row_ptr, h1.row_ptr, (size_t)(nh + 1) * sizeof *h1.row_ptr);
    for (int64_t j = 0; j < h2.nnz; j++)
        same &= h2.col[j] == h1.col[j] && h2.val[j] == h1.val[j];
    CHECK(same, "held_first: the first rows' held-out parts differ from datm_token_split's");
    datm_csr_free(&o2); datm_csr_free(&h2);
    CHECK(datm_token_split_held_first(&X, p, 42, -1, &o2, &h2, &err) == 0, "split: %s", err.msg);
    CHECK(csr_equal(&o1, &o2) && csr_equal(&h1, &h2), "held_first with n_held < 0 is not the "
          "whole split");
    datm_csr_free(&o2); datm_csr_free(&h2);

    /* total observed vs expectation, with the >= 1 rule's correction */
    double T = datm_csr_total(&X), expect = p * T, var = p * (1 - p) * T;
    for (int64_t n = 0; n < X.n_rows; n++) {
        double tn = datm_csr_row_total(&X, n);
        if (tn > 0) expect += pow(1 - p, tn);
    }
    double got = datm_csr_total(&o1);
    CHECK(fabs(got - expect) < 5 * sqrt(var), "observed tokens %.0f, expected %.1f +- %.1f", got,
          expect, sqrt(var));
    datm_csr_free(&o1); datm_csr_free(&h1);

    /* extremes */
    CHECK(datm_token_split(&X, 0.0, 1, &o1, &h1, &err) == 0, "split 0: %s", err.msg);
    check_split_sums(&X, &o1, &h1, "p=0");
    int one = 1;
    for (int64_t n = 0; n < X.n_rows; n++)
        if (X.row_ptr[n + 1] > X.row_ptr[n] && datm_csr_row_total(&o1, n) != 1.0) one = 0;
    CHECK(one, "obs_frac 0 must keep exactly one token per document");
    datm_csr_free(&o1); datm_csr_free(&h1);
    CHECK(datm_token_split(&X, 1.0, 1, &o1, &h1, &err) == 0, "split 1: %s", err.msg);
    CHECK(h1.nnz == 0 && csr_equal(&o1, &X), "obs_frac 1 must keep everything");
    datm_csr_free(&o1); datm_csr_free(&h1);
    CHECK(datm_token_split(&X, 1.5, 1, &o1, &h1, &err) == DATM_E_INVALID, "obs_frac 1.5 accepted");
    datm_csr_free(&X);

    /* large counts: Binomial(c, p) moments over many documents */
    const double counts[2] = {1000, 100000};
    for (int t = 0; t < 2; t++) {
        const int64_t N = 4000;
        datm_csr Y;
        datm_csr_alloc(&Y, N, 3, N, &err);
        for (int64_t n = 0; n < N; n++) { Y.col[n] = 1; Y.val[n] = (float)counts[t]; Y.row_ptr[n + 1] = n + 1; }
        const double q = 0.3;
        CHECK(datm_token_split(&Y, q, 7, &o1, &h1, &err) == 0, "split: %s", err.msg);
        check_split_sums(&Y, &o1, &h1, "large counts");
        double s = 0, s2 = 0;
        for (int64_t n = 0; n < N; n++) {
            double k = datm_csr_row_total(&o1, n);
            s += k;
            s2 += k * k;
        }
        double mean = s / N, v = (s2 - N * mean * mean) / (N - 1);
        double c = counts[t], m0 = q * c, v0 = q * (1 - q) * c;
        CHECK(fabs(mean - m0) < 5 * sqrt(v0 / N), "Binomial(%g, %g) mean %.3f vs %.3f", c, q, mean, m0);
        CHECK(fabs(v / v0 - 1) < 5 * sqrt(2.0 / (N - 1)), "Binomial(%g, %g) variance %.3f vs %.3f", c,
              q, v, v0);
        datm_csr_free(&o1); datm_csr_free(&h1); datm_csr_free(&Y);
    }
}

static void test_batches(void)
{
    datm_error err;
    datm_batch_iter it, it2;
    const int64_t n = 1003, B = 100;
    CHECK(datm_batch_iter_init(&it, n, B, 5, 1, 0, &err) == 0, "init: %s", err.msg);
    CHECK(datm_batch_iter_batches_per_epoch(&it) == 11, "batches per epoch");
    int64_t *first = malloc((size_t)n * sizeof *first), *seen = calloc((size_t)n, sizeof *seen);
    int64_t *order[3];
    for (int e = 0; e < 3; e++) {
        order[e] = malloc((size_t)n * sizeof *order[e]);
        int64_t got = 0, nb = 0, m;
        const int64_t *rows;
        while ((m = datm_batch_iter_next(&it, &rows)) > 0) {
            CHECK(m == (nb < 10 ? B : 3), "epoch %d batch %lld has %lld rows", e, (long long)nb, (long long)m);
            for (int64_t i = 0; i < m; i++) { order[e][got + i] = rows[i]; seen[rows[i]]++; }
            got += m;
            nb++;
        }
        CHECK(got == n && nb == 11, "epoch %d: %lld rows in %lld batches", e, (long long)got, (long long)nb);
        CHECK(it.epoch == e + 1, "epoch counter after epoch %d is %lld", e, (long long)it.epoch);
    }
    for (int64_t i = 0; i < n; i++) CHECK(seen[i] == 3, "document %lld seen %lld times in 3 epochs", (long long)i, (long long)seen[i]);
    CHECK(memcmp(order[0], order[1], (size_t)n * sizeof(int64_t)) != 0, "epochs 0 and 1 in the same order");

    /* same seed repeats; seek reproduces a batch of a later epoch */
    CHECK(datm_batch_iter_init(&it2, n, B, 5, 1, 0, &err) == 0, "init: %s", err.msg);
    datm_batch_iter_seek(&it2, 2, 4);
    const int64_t *rows;
    int64_t m = datm_batch_iter_next(&it2, &rows);
    CHECK(m == B && !memcmp(rows, order[2] + 4 * B, (size_t)B * sizeof *rows), "seek(2, 4) differs");
    datm_batch_iter_seek(&it2, 0, 10);
    m = datm_batch_iter_next(&it2, &rows);
    CHECK(m == 3 && !memcmp(rows, order[0] + 1000, 3 * sizeof *rows), "seek(0, 10): last partial batch");
    CHECK(datm_batch_iter_next(&it2, &rows) == 0 && it2.epoch == 1, "end of epoch after seek");
    m = datm_batch_iter_next(&it2, &rows);
    CHECK(m == B && !memcmp(rows, order[1], (size_t)B * sizeof *rows), "epoch 1 after seek differs");
    datm_batch_iter_free(&it2);

    /* drop_last */
    CHECK(datm_batch_iter_init(&it2, n, B, 5, 1, 1, &err) == 0, "init: %s", err.msg);
    CHECK(datm_batch_iter_batches_per_epoch(&it2) == 10, "drop_last batches per epoch");
    int64_t nb = 0;
    while ((m = datm_batch_iter_next(&it2, &rows)) > 0) { CHECK(m == B, "drop_last partial batch"); nb++; }
    CHECK(nb == 10, "drop_last gave %lld batches", (long long)nb);
    datm_batch_iter_free(&it2);

    /* no shuffle: identity */
    CHECK(datm_batch_iter_init(&it2, 10, 4, 5, 0, 0, &err) == 0, "init: %s", err.msg);
    int64_t k = 0, ok = 1;
    for (int e = 0; e < 2; e++) {
        while ((m = datm_batch_iter_next(&it2, &rows)) > 0)
            for (int64_t i = 0; i < m; i++) ok &= rows[i] == (k++ % 10);
    }
    CHECK(ok && k == 20, "shuffle = 0 must visit 0..n-1 in order");
    datm_batch_iter_free(&it2);
    CHECK(datm_batch_iter_init(&it2, 10, 0, 5, 1, 0, &err) == DATM_E_INVALID, "batch size 0 accepted");
    CHECK(datm_batch_iter_init(&it2, 10, 11, 5, 1, 1, &err) == DATM_E_INVALID, "empty drop_last accepted");

    /* uniformity of the shuffle: position of document 0 among 10, over 4000 epochs */
    CHECK(datm_batch_iter_init(&it2, 10, 10, 99, 1, 0, &err) == 0, "init: %s", err.msg);
    int64_t pos[10] = {0};
    const int E = 4000;
    for (int e = 0; e < E; e++) {
        m = datm_batch_iter_next(&it2, &rows);
        for (int i = 0; i < 10; i++) if (rows[i] == 0) pos[i]++;
        datm_batch_iter_next(&it2, &rows);   /* end of epoch */
    }
    double chi2 = 0;
    for (int i = 0; i < 10; i++) chi2 += (pos[i] - E / 10.0) * (pos[i] - E / 10.0) / (E / 10.0);
    CHECK(chi2 < 27.88, "shuffle positions not uniform: chi2 = %.2f (9 dof, 0.1%% level 27.88)", chi2);
    datm_batch_iter_free(&it2);

    datm_batch_iter_free(&it);
    for (int e = 0; e < 3; e++) free(order[e]);
    free(first);
    free(seen);
}

/* The observed part of chosen rows (datm_token_split_rows_obs, a data-parallel rank's
 * stream): a kept row equals its row of the whole split of the same first document, every
 * other row is empty; no mask gives the whole observed part. */
static void test_split_kept_rows(void)
{
    datm_csr X = make_counts(300, 50), o, h, ok, oa;
    datm_error err;
    uint8_t keep[300];
    for (int i = 0; i < 300; i++) keep[i] = (uint8_t)((i * 7) % 3 == 0);
    if (datm_token_split_rows(&X, 1000, 0, 0.5, 21, &o, &h, &err) ||
        datm_token_split_rows_obs(&X, 1000, keep, 0.5, 21, &ok, &err) ||
        datm_token_split_rows_obs(&X, 1000, NULL, 0.5, 21, &oa, &err)) {
        printf("%s\n", err.msg);
        exit(1);
    }
    int bad = 0;
    for (int64_t n = 0; n < X.n_rows; n++) {
        const int64_t a = o.row_ptr[n], b = o.row_ptr[n + 1];
        const int64_t ka = ok.row_ptr[n], kb = ok.row_ptr[n + 1];
        if (!keep[n]) bad += kb != ka;
        else bad += kb - ka != b - a || memcmp(o.col + a, ok.col + ka, (size_t)(b - a) * 4) ||
                    memcmp(o.val + a, ok.val + ka, (size_t)(b - a) * 4);
    }
    CHECK(bad == 0, "split of kept rows: %d rows differ from the whole split", bad);
    CHECK(csr_equal(&o, &oa), "split of all rows (no mask) != the whole split's observed part");
    datm_csr_free(&X);
    datm_csr_free(&o);
    datm_csr_free(&h);
    datm_csr_free(&ok);
    datm_csr_free(&oa);
}

int main(void)
{
    test_split();
    test_split_kept_rows();
    test_batches();
    return check_result();
}
