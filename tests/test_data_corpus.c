/* ctest-labels: unit  ctest-timeout: 300  ctest-link: datm_data */
/* tests/test_data_corpus.c: loads every data set of the table below that exists (found as a
 * spec's `dataset:` is: $DATM_DATA, then .cache/data, where ci/setup.sh writes digits from
 * Debian's python3-sklearn) and checks it against the statistics stated in the README.md of the
 * shared data sets (../shared/data/<name>/README.md, made by independent Python conversions):
 * D, W, NNZ, token total, max count, label count and per-class counts where the README gives
 * them; vocab and classes sizes; for 20news_2000, test_obs + test_heldout == test entry by
 * entry. Skips (77) when no set is found. Prints the load time of 20news_2000 train
 * (the task wants it well under a second; printed, not asserted). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/data.h"

static int failures;

typedef struct {
    const char *set, *split;
    int64_t D, W, NNZ;
    double tokens;
    float max_count;
    int n_classes;
    int class_counts[20];   /* zero-terminated when fewer classes; {0} = not stated */
} expected;

/* From each README's "Statistics" table and class-count lines. */
static const expected table[] = {
    {"20news_2000", "train", 11284, 2000, 470587, 584661, 7, 20,
     {480, 581, 589, 587, 576, 592, 582, 591, 596, 594, 598, 595, 591, 594, 592, 598, 546, 563, 463, 376}},
    {"20news_2000", "test", 7502, 2000, 304397, 375356, 7, 20,
     {318, 389, 391, 392, 383, 392, 383, 395, 397, 397, 399, 396, 393, 391, 392, 397, 364, 375, 308, 250}},
    {"20news_2000", "test_obs", 7502, 2000, 250821, 295806, 6, 20, {0}},
    {"20news_2000", "test_heldout", 7502, 2000, 76508, 79550, 4, 20, {0}},
    {"20news_33k", "train", 11292, 33749, 973452, 1535007, 11151, 20,
     {480, 581, 589, 587, 576, 592, 582, 592, 597, 595, 599, 595, 591, 594, 593, 599, 546, 564, 464, 376}},
    {"20news_33k", "test", 7515, 33749, 635288, 932659, 506, 20,
     {318, 389, 391, 392, 383, 394, 384, 396, 398, 397, 399, 396, 393, 394, 393, 398, 364, 376, 309, 251}},
    {"20news_top2000_raw", "train", 11289, 2000, 559681, 947052, 11151, 20, {0}},
    {"20news_top2000_raw", "test", 7506, 2000, 366213, 556311, 506, 20, {0}},
    {"digits", "train", 1442, 64, 47077, 450566, 16, 10, {143, 146, 142, 147, 145, 146, 145, 144, 140, 144}},
    {"digits", "test", 355, 64, 11659, 111152, 16, 10, {35, 36, 35, 36, 36, 36, 36, 35, 34, 36}},
    {"imdb", "train", 25000, 30000, 2146430, 2615184, 37, 2, {12500, 12500}},
    {"imdb", "test", 25000, 30000, 2073078, 2511276, 41, 2, {12500, 12500}},
    {"mnist", "train", 60000, 784, 8994156, 1567298545.0, 255, 10,
     {5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
    {"mnist", "test", 10000, 784, 1511219, 264923200.0, 255, 10,
     {980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
};

static void fail(const expected *e, const char *what, double got, double want)
{
    printf("FAIL %s/%s: %s = %.17g, README says %.17g\n", e->set, e->split, what, got, want);
    failures++;
}

static void check(const expected *e, const datm_corpus *c)
{
    const datm_csr *X = &c->X;
    if (X->n_rows != e->D) fail(e, "D", (double)X->n_rows, (double)e->D);
    if (X->n_cols != e->W) fail(e, "W", (double)X->n_cols, (double)e->W);
    if (X->nnz != e->NNZ) fail(e, "NNZ", (double)X->nnz, (double)e->NNZ);
    /* exact: integer counts summed in double stay exact far beyond these totals */
    if (datm_csr_total(X) != e->tokens) fail(e, "tokens", datm_csr_total(X), e->tokens);
    float mx = 0;
    double rows_sum = 0;
    for (int64_t j = 0; j < X->nnz; j++) mx = X->val[j] > mx ? X->val[j] : mx;
    for (int64_t d = 0; d < X->n_rows; d++) rows_sum += datm_csr_row_total(X, d);
    if (mx != e->max_count) fail(e, "max count", mx, e->max_count);
    if (rows_sum != e->tokens) fail(e, "sum of row totals", rows_sum, e->tokens);
    /* CSR invariants: strictly increasing columns within each row */
    for (int64_t d = 0; d < X->n_rows; d++)
        for (int64_t j = X->row_ptr[d] + 1; j < X->row_ptr[d + 1]; j++)
            if (X->col[j] <= X->col[j - 1]) { fail(e, "sorted row", (double)d, -1); break; }
    if (c->vocab && c->n_vocab != e->W) fail(e, "vocab lines", (double)c->n_vocab, (double)e->W);
    if (!c->vocab) fail(e, "vocab.txt present", 0, 1);
    if (c->n_classes != e->n_classes) fail(e, "classes", c->n_classes, e->n_classes);
    if (!c->labels) fail(e, "labels present", 0, 1);
    if (c->labels && e->class_counts[0]) {
        int64_t cnt[20] = {0};
        for (int64_t d = 0; d < X->n_rows; d++)
            if (c->labels[d] >= 0 && c->labels[d] < 20) cnt[c->labels[d]]++;
        for (int k = 0; k < e->n_classes && k < 20; k++)
            if (cnt[k] != e->class_counts[k]) {
                char what[64];
                snprintf(what, sizeof what, "count of class %d", k);
                fail(e, what, (double)cnt[k], e->class_counts[k]);
            }
    }
}

int main(void)
{
    int loaded = 0;
    datm_corpus test = {0}, obs = {0}, held = {0};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const expected *e = &table[i];
        char dir[1024];
        datm_error err = {0};
        if (datm_dataset_resolve(e->set, dir, sizeof dir, &err)) {
            printf("not checked: %s\n", err.msg);
            continue;
        }
        datm_corpus c;
        double t0 = datm_time_now();
        int rc = datm_corpus_load(dir, e->split, &c, &err);
        double dt = datm_time_now() - t0;
        if (rc) {
            printf("FAIL %s/%s: %s\n", e->set, e->split, err.msg);
            failures++;
            continue;
        }
        loaded++;
        printf("loaded %s/%s: D %lld W %lld NNZ %lld in %.3f s\n", e->set, e->split,
               (long long)c.X.n_rows, (long long)c.X.n_cols, (long long)c.X.nnz, dt);
        check(e, &c);
        if (!strcmp(e->set, "20news_2000") && !strcmp(e->split, "test")) test = c;
        else if (!strcmp(e->set, "20news_2000") && !strcmp(e->split, "test_obs")) obs = c;
        else if (!strcmp(e->set, "20news_2000") && !strcmp(e->split, "test_heldout")) held = c;
        else datm_corpus_free(&c);
    }
    /* README: test = test_obs + test_heldout */
    if (test.X.n_rows && obs.X.n_rows && held.X.n_rows) {
        int bad = 0;
        for (int64_t d = 0; d < test.X.n_rows && !bad; d++) {
            int64_t a = obs.X.row_ptr[d], b = held.X.row_ptr[d];
            for (int64_t j = test.X.row_ptr[d]; j < test.X.row_ptr[d + 1]; j++) {
                int32_t w = test.X.col[j];
                float s = 0;
                if (a < obs.X.row_ptr[d + 1] && obs.X.col[a] == w) s += obs.X.val[a++];
                if (b < held.X.row_ptr[d + 1] && held.X.col[b] == w) s += held.X.val[b++];
                if (s != test.X.val[j]) bad = 1;
            }
            if (a != obs.X.row_ptr[d + 1] || b != held.X.row_ptr[d + 1]) bad = 1;
        }
        if (bad) { printf("FAIL 20news_2000: test != test_obs + test_heldout\n"); failures++; }
    }
    datm_corpus_free(&test);
    datm_corpus_free(&obs);
    datm_corpus_free(&held);
    if (!loaded) {
        printf("skipped: none of the data sets found (bash ci/setup.sh writes digits)\n");
        return 77;
    }
    if (failures) { printf("%d failures\n", failures); return 1; }
    printf("ok (%d splits)\n", loaded);
    return 0;
}
