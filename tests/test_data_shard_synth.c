/* ctest-labels: unit;stat  ctest-timeout: 120  ctest-link: datm_data */
/* tests/test_data_shard_synth.c: the sharded corpus, its mini-batch stream and the PGBN
 * generator (engine/data/shard.h, stream.h, synth.h).
 * Shards: a random corpus written in shards of 7 documents reads back equal (every shard and
 *  the first-n reader), with the totals and a content hash that changes with one count.
 * Stream: each epoch visits every document exactly once, in ceil(N/B) mini-batches of the
 *  right rows; seek(e, b) gives the same batches as reading on; shuffle off is the identity
 *  order, and a one-shard corpus is visited in the in-memory iterator's order (data/batch.c);
 *  with a token split each row is the observed part of datm_token_split of that document.
 * Synth: 1 thread == 2 threads (content hash); one layer of K topics (theta(1) ~ Gam(1)^K,
 *  so E[word v] = mean_k Phi(1)[v, k]): the frequency of every word with p_v > 1e-3 is within
 *  5 standard errors (a ratio estimator over documents, which allows for the correlation of
 *  words in a document) of p_v; Poisson lengths have mean and variance within 5 standard
 *  errors of M; negbin lengths have variance M + M^2 / S within 15%. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "data/shard.h"
#include "data/stream.h"
#include "data/synth.h"
#include "rand/rand.h"
#include "test_check.h"

static char dir[256];

static void random_corpus(datm_csr *X, int64_t N, int64_t V)
{
    datm_error err = {0};
    datm_rng r;
    datm_rng_init(&r, 11, DATM_STREAM_TEST, 0);
    int64_t nnz = 0, *len = malloc(sizeof *len * (size_t)N);
    for (int64_t d = 0; d < N; d++) nnz += len[d] = (int64_t)datm_rng_below(&r, 6);
    CHECK_OK(datm_csr_alloc(X, N, V, nnz, &err), err);
    int64_t e = 0;
    for (int64_t d = 0; d < N; d++) {
        int64_t v = -1;
        for (int64_t j = 0; j < len[d]; j++) {
            v += 1 + (int64_t)datm_rng_below(&r, 3);
            X->col[e] = (int32_t)v;
            X->val[e++] = (float)(1 + datm_rng_below(&r, 4));
        }
        X->row_ptr[d + 1] = e;
    }
    free(len);
}

static int csr_equal(const datm_csr *a, const datm_csr *b)
{
    return a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, sizeof *a->row_ptr * (size_t)(a->n_rows + 1)) &&
           !memcmp(a->col, b->col, sizeof *a->col * (size_t)a->nnz) &&
           !memcmp(a->val, b->val, sizeof *a->val * (size_t)a->nnz);
}

static void write_set(const datm_csr *X, const char *path, int64_t per_shard)
{
    datm_error err = {0};
    datm_shard_writer w;
    CHECK_OK(datm_shard_writer_open(&w, path, X->n_cols, per_shard, 1, &err), err);
    CHECK_OK(datm_shard_writer_add(&w, X, &err), err);
    CHECK_OK(datm_shard_writer_commit(&w, &err), err);
}

/* Row `row` of the batch equals document id of X (or of the obs part ref). */
static int row_is(const datm_csr *B, int64_t row, const datm_csr *X, int64_t id)
{
    int64_t a = B->row_ptr[row], n = B->row_ptr[row + 1] - a;
    int64_t c = X->row_ptr[id], m = X->row_ptr[id + 1] - c;
    return n == m && !memcmp(B->col + a, X->col + c, sizeof *B->col * (size_t)n) &&
           !memcmp(B->val + a, X->val + c, sizeof *B->val * (size_t)n);
}

static void test_shards_and_stream(void)
{
    datm_error err = {0};
    const int64_t N = 103, V = 40, B = 10;
    datm_csr X = {0}, Y = {0};
    random_corpus(&X, N, V);
    char p7[300], p1[300];
    snprintf(p7, sizeof p7, "%s/s7.shards", dir);
    snprintf(p1, sizeof p1, "%s/s1.shards", dir);
    write_set(&X, p7, 7);
    write_set(&X, p1, 1000);
    datm_shardset s7, s1;
    CHECK_OK(datm_shardset_open(p7, &s7, &err), err);
    CHECK_OK(datm_shardset_open(p1, &s1, &err), err);
    CHECK(s7.n_shards == 15 && s7.n_docs == N && s7.nnz == X.nnz && s1.n_shards == 1);
    CHECK(s7.tokens == datm_csr_total(&X));
    CHECK_OK(datm_shardset_read_first(&s7, 0, &Y, &err), err);
    CHECK(csr_equal(&X, &Y), "shards read back differ");
    datm_csr_free(&Y);
    /* a split with shards and no docword loads whole (data.stream: false on a synth corpus) */
    datm_corpus c;
    CHECK_OK(datm_corpus_load(dir, "s7", &c, &err), err);
    CHECK(csr_equal(&X, &c.X) && !c.labels && !c.vocab, "datm_corpus_load of s7.shards differs");
    datm_corpus_free(&c);
    CHECK(datm_corpus_load(dir, "absent", &c, &err) == DATM_E_IO && strstr(err.msg, "absent.shards"),
          "a missing split names the shard directory too: %s", err.msg);
    CHECK_OK(datm_shardset_read_first(&s7, 50, &Y, &err), err);
    CHECK(Y.n_rows == 50 && Y.nnz == X.row_ptr[50] && !memcmp(Y.col, X.col, sizeof *Y.col * (size_t)Y.nnz));
    datm_csr_free(&Y);
    /* one count more: another content hash */
    X.val[0] += 1;
    char p8[300];
    snprintf(p8, sizeof p8, "%s/s8.shards", dir);
    write_set(&X, p8, 7);
    datm_shardset s8;
    CHECK_OK(datm_shardset_open(p8, &s8, &err), err);
    CHECK(s8.content_hash != s7.content_hash, "content hash blind to a count");
    datm_shardset_close(&s8);
    X.val[0] -= 1;

    for (int shuffle = 0; shuffle <= 1; shuffle++) {
        datm_stream st;
        datm_stream_opts o = {.batch_size = B, .seed = 5, .shuffle = shuffle};
        CHECK_OK(datm_stream_open(&st, &s7, &o, &err), err);
        const int64_t bpe = datm_stream_batches_per_epoch(&st);
        CHECK(bpe == 11);
        int64_t *seen = calloc((size_t)N, sizeof *seen), order0[103], k = 0;
        int64_t saved_ids[3][10];
        for (int64_t e = 0; e < 3; e++) {
            for (int64_t b = 0; b < bpe; b++) {
                const datm_csr *Bx;
                const int64_t *ids;
                int64_t n;
                CHECK_OK(datm_stream_next(&st, &Bx, &ids, &n, &err), err);
                CHECK(n == (b + 1 < bpe ? B : N - B * (bpe - 1)));
                for (int64_t i = 0; i < n; i++) {
                    seen[ids[i]]++;
                    CHECK(row_is(Bx, i, &X, ids[i]), "batch row is not its document");
                    if (e == 0) order0[k++] = ids[i];
                }
                if (e == 1 && b >= 4 && b < 7) memcpy(saved_ids[b - 4], ids, sizeof *ids * (size_t)n);
            }
        }
        for (int64_t d = 0; d < N; d++) CHECK(seen[d] == 3, "document %lld seen %lld times in 3 epochs", (long long)d, (long long)seen[d]);
        if (!shuffle) for (int64_t i = 0; i < N; i++) CHECK(order0[i] == i, "shuffle off: not the identity");
        /* seek to epoch 1, batch 4 (inside shard order) and read on */
        CHECK_OK(datm_stream_seek(&st, 1, 4, &err), err);
        for (int b = 0; b < 3; b++) {
            const datm_csr *Bx;
            const int64_t *ids;
            int64_t n;
            CHECK_OK(datm_stream_next(&st, &Bx, &ids, &n, &err), err);
            CHECK(!memcmp(ids, saved_ids[b], sizeof *ids * (size_t)n), "seek: batch %d differs", b + 4);
        }
        free(seen);
        datm_stream_close(&st);
    }
    /* one shard: the in-memory iterator's order */
    datm_stream st;
    datm_stream_opts o = {.batch_size = B, .seed = 5, .shuffle = 1};
    CHECK_OK(datm_stream_open(&st, &s1, &o, &err), err);
    datm_batch_iter it;
    CHECK_OK(datm_batch_iter_init(&it, N, B, 5, 1, 0, &err), err);
    for (int b = 0; b < 25; b++) {
        const datm_csr *Bx;
        const int64_t *ids, *rows;
        int64_t n, m = datm_batch_iter_next(&it, &rows);
        if (m == 0) m = datm_batch_iter_next(&it, &rows);
        CHECK_OK(datm_stream_next(&st, &Bx, &ids, &n, &err), err);
        CHECK(n == m && !memcmp(ids, rows, sizeof *ids * (size_t)n), "one shard: batch %d is not the in-memory one", b);
    }
    datm_batch_iter_free(&it);
    datm_stream_close(&st);
    /* token split: rows are the observed parts of datm_token_split */
    datm_csr obs = {0}, held = {0};
    CHECK_OK(datm_token_split(&X, 0.6, 9, &obs, &held, &err), err);
    datm_stream_opts os = {.batch_size = B, .seed = 5, .shuffle = 1, .obs_frac = 0.6, .split_seed = 9};
    CHECK_OK(datm_stream_open(&st, &s7, &os, &err), err);
    for (int b = 0; b < 11; b++) {
        const datm_csr *Bx;
        const int64_t *ids;
        int64_t n;
        CHECK_OK(datm_stream_next(&st, &Bx, &ids, &n, &err), err);
        for (int64_t i = 0; i < n; i++) CHECK(row_is(Bx, i, &obs, ids[i]), "token split row differs");
    }
    datm_stream_close(&st);
    datm_csr_free(&obs);
    datm_csr_free(&held);
    datm_shardset_close(&s7);
    datm_shardset_close(&s1);
    datm_csr_free(&X);
}

/* Lengths and words of a synthetic corpus of one layer. */
static void test_synth(void)
{
    datm_error err = {0};
    datm_synth_opts o;
    datm_synth_defaults(&o);
    o.n_docs = 6000;
    o.n_vocab = 300;
    o.n_layers = 1;
    o.k[0] = 8;
    o.docs_per_shard = 1000;
    o.seed = 4;
    float *phi[DATM_MAX_LAYERS] = {0};
    CHECK_OK(datm_synth_topics(&o, phi, &err), err);
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/syn_a.shards", dir);
    snprintf(b, sizeof b, "%s/syn_b.shards", dir);
    omp_set_num_threads(1);
    CHECK_OK(datm_synth_write(&o, phi, a, 1, NULL, &err), err);
    omp_set_num_threads(2);
    CHECK_OK(datm_synth_write(&o, phi, b, 1, NULL, &err), err);
    datm_shardset sa, sb;
    CHECK_OK(datm_shardset_open(a, &sa, &err), err);
    CHECK_OK(datm_shardset_open(b, &sb, &err), err);
    CHECK(sa.content_hash == sb.content_hash, "synth: 1 thread != 2 threads");
    datm_csr X = {0};
    CHECK_OK(datm_shardset_read_first(&sa, 0, &X, &err), err);
    const int64_t N = X.n_rows, V = o.n_vocab, K = o.k[0];
    double T = datm_csr_total(&X), s1 = 0, s2 = 0;
    for (int64_t d = 0; d < N; d++) {
        double n = datm_csr_row_total(&X, d);
        s1 += n;
        s2 += n * n;
    }
    double mean = s1 / (double)N, var = s2 / (double)N - mean * mean;
    CHECK(fabs(mean - 100) < 5 * sqrt(100.0 / (double)N), "Poisson length mean %g", mean);
    /* var of the sample variance of Poisson(M): (M + 2 M^2) / N */
    CHECK(fabs(var - 100) < 5 * sqrt((100 + 2 * 1e4) / (double)N), "Poisson length variance %g", var);
    double *f = calloc((size_t)V, sizeof *f), *p = calloc((size_t)V, sizeof *p);
    double *se = calloc((size_t)V, sizeof *se);
    for (int64_t v = 0; v < V; v++) {
        for (int64_t k = 0; k < K; k++) p[v] += phi[0][v * K + k] / (double)K;
    }
    for (int64_t j = 0; j < X.nnz; j++) f[X.col[j]] += X.val[j] / T;
    /* ratio estimator: var(f_v) ~ sum_d (x_dv - f_v n_d)^2 / T^2 */
    double *xd = calloc((size_t)V, sizeof *xd);
    for (int64_t d = 0; d < N; d++) {
        double n = datm_csr_row_total(&X, d);
        for (int64_t j = X.row_ptr[d]; j < X.row_ptr[d + 1]; j++) xd[X.col[j]] = X.val[j];
        for (int64_t v = 0; v < V; v++) se[v] += (xd[v] - f[v] * n) * (xd[v] - f[v] * n);
        for (int64_t j = X.row_ptr[d]; j < X.row_ptr[d + 1]; j++) xd[X.col[j]] = 0;
    }
    int tested = 0;
    for (int64_t v = 0; v < V; v++) {
        if (p[v] < 1e-3) continue;
        tested++;
        double s = sqrt(se[v]) / T;
        CHECK(fabs(f[v] - p[v]) < 5 * s, "word %lld: frequency %g, expected %g (se %g)", (long long)v, f[v], p[v], s);
    }
    CHECK(tested > 50, "only %d words tested", tested);
    printf("synth: %lld documents, mean length %.3f, variance %.2f, %d word frequencies tested\n",
           (long long)N, mean, var, tested);
    datm_csr_free(&X);
    /* negbin lengths: variance M + M^2 / S */
    o.len_law = DATM_SYNTH_LEN_NEGBIN;
    o.len_shape = 4;
    CHECK_OK(datm_synth_write(&o, phi, b, 1, NULL, &err), err);
    datm_shardset_close(&sb);
    CHECK_OK(datm_shardset_open(b, &sb, &err), err);
    CHECK_OK(datm_shardset_read_first(&sb, 0, &X, &err), err);
    s1 = s2 = 0;
    for (int64_t d = 0; d < N; d++) {
        double n = datm_csr_row_total(&X, d);
        s1 += n;
        s2 += n * n;
    }
    mean = s1 / (double)N;
    var = s2 / (double)N - mean * mean;
    CHECK(fabs(var / (100 + 1e4 / 4) - 1) < 0.15, "negbin length variance %g, expected %g", var, 100 + 1e4 / 4);
    printf("negbin: mean %.2f variance %.1f (expected %.1f)\n", mean, var, 100 + 1e4 / 4);
    datm_csr_free(&X);
    free(f); free(p); free(se); free(xd);
    datm_free(phi[0]);
    datm_shardset_close(&sa);
    datm_shardset_close(&sb);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/datm_shard_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    test_shards_and_stream();
    test_synth();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_result();
}
