/* ctest-labels: unit;stat  ctest-timeout: 600  ctest-link: datm_models */
/* WHAI end to end on the small real digits set (1,442 8x8 images as 64-word documents, a
 * seeded 80/20 token split of the test images), with the authors' code's stabilisers (mean
 * parameterisation, KL weight 0.1, augmentation from the mean theta with expected
 * counts), Algorithm 1 for 40 epochs must
 *   - beat the unigram model (the training corpus's smoothed word frequencies) on the
 *     held-out tokens by at least 10% in perplexity (averaged over 20 draws);
 *   - give bit-identical topics and perplexity with 1 and 2 threads (same seed);
 *   - survive save/load: a fresh model loaded from the saved state infers the same theta
 *     and continues training identically.
 * Skipped (77) when the digits set is not found (ci/setup.sh writes it into .cache/data). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "eval/perplexity.h"
#include "io/h5.h"
#include "pipeline/config.h"
#include "pipeline/model.h"
#include "../models/whai.h"
#include "test_check.h"


typedef struct { datm_corpus train; datm_csr obs, held; } data_t;

static datm_model *make(const data_t *d, int epochs, datm_error *err)
{
    datm_config *cfg = NULL;
    if (datm_config_create(datm_whai_schema, "model", &cfg, err) ||
        datm_config_set(cfg, "layers", "[32, 16]", err) ||
        datm_config_set(cfg, "kl_weight", "[0.1]", err) ||
        datm_config_set(cfg, "lambda_is_mean", "true", err) ||
        datm_config_set(cfg, "aug_theta", "mean", err) ||
        datm_config_set(cfg, "count_mode", "expected", err) ||
        datm_config_set(cfg, "lr", "3e-3", err)) {
        printf("config: %s\n", err->msg);
        exit(1);
    }
    const int64_t N = d->train.X.n_rows, B = 100;
    datm_run_info info = {.n_train = N, .n_vocab = d->train.X.n_cols, .batch_size = B,
                          .epochs = epochs, .total_iters = epochs * ((N + B - 1) / B), .seed = 3,
                          .train = &d->train.X};
    datm_model *m = NULL;
    if (datm_registry_find("whai")->create(cfg, &info, &m, err)) {
        printf("create: %s\n", err->msg);
        exit(1);
    }
    datm_config_destroy(&cfg);
    return m;
}

/* Trains iterations [it0, it1) in the fixed batch order of epoch e = (it-1)/bpe. */
static void train(datm_model *m, const data_t *d, int64_t it0, int64_t it1, datm_error *err)
{
    const int64_t N = d->train.X.n_rows, B = 100;
    datm_batch_iter it;
    datm_batch_iter_init(&it, N, B, 3, 1, 0, err);
    const int64_t bpe = datm_batch_iter_batches_per_epoch(&it);
    for (int64_t i = it0; i < it1; i++) {
        datm_batch_iter_seek(&it, (i - 1) / bpe, (i - 1) % bpe);
        const int64_t *rows;
        int64_t n = datm_batch_iter_next(&it, &rows);
        datm_csr Xb;
        datm_csr_select_rows(&d->train.X, rows, n, &Xb, err);
        datm_batch b = {&Xb, rows, NULL};
        datm_train_ctx ctx = {i, (i - 1) / bpe, 3, (double)N / (double)B};
        datm_train_stats st;
        if (m->ops->train_batch(m, &b, &ctx, &st, err)) {
            printf("train %lld: %s\n", (long long)i, err->msg);
            exit(1);
        }
        datm_csr_free(&Xb);
    }
    datm_batch_iter_free(&it);
}

static double perplexity(datm_model *m, const data_t *d, datm_error *err)
{
    datm_rate_accum a;
    datm_rate_accum_init(&a, &d->obs, &d->held, err);
    void *st = NULL;
    whai_model *w = (whai_model *)m;
    int chain = w->eval_chain;
    w->eval_chain = 0;   /* the globals as trained */
    m->ops->eval_begin(m, &d->obs, 11, &st, err);
    for (int s = 0; s < 20; s++) m->ops->eval_step(m, st, s, &a, err);
    m->ops->eval_end(m, st);
    w->eval_chain = chain;
    double p = datm_rate_accum_perplexity(&a, &d->held);
    datm_rate_accum_free(&a);
    return p;
}

int main(void)
{
    datm_error err;
    datm_log_set_level(DATM_LOG_WARN);
    char dir[1024];
    data_t d;
    datm_corpus test;
    if (datm_dataset_resolve("digits", dir, sizeof dir, &err) ||
        datm_corpus_load(dir, "train", &d.train, &err) || datm_corpus_load(dir, "test", &test, &err)) {
        printf("skipped: digits not found (%s)\n", err.msg);
        return 77;
    }
    if (datm_token_split(&test.X, 0.8, 17, &d.obs, &d.held, &err)) { printf("%s\n", err.msg); return 1; }

    /* unigram reference: training word frequencies + 0.5 */
    const int64_t V = d.train.X.n_cols;
    double *f = calloc((size_t)V, sizeof(double)), tot = 0, ll = 0, ny = 0;
    for (int64_t p = 0; p < d.train.X.nnz; p++) f[d.train.X.col[p]] += d.train.X.val[p];
    for (int64_t v = 0; v < V; v++) { f[v] += 0.5; tot += f[v]; }
    for (int64_t p = 0; p < d.held.nnz; p++) {
        ll += d.held.val[p] * log(f[d.held.col[p]] / tot);
        ny += d.held.val[p];
    }
    const double ppl_uni = exp(-ll / ny);
    free(f);

    const int epochs = 40;
    const int64_t T = epochs * ((d.train.X.n_rows + 99) / 100);
    double ppl[2];
    float *phi1[2];
    datm_model *m2 = NULL;
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        datm_model *m = make(&d, epochs, &err);
        train(m, &d, 1, T + 1, &err);
        ppl[t] = perplexity(m, &d, &err);
        const float *phi;
        int64_t r, c;
        m->ops->get_phi(m, 1, &phi, &r, &c);
        phi1[t] = malloc((size_t)(r * c) * sizeof(float));
        memcpy(phi1[t], phi, (size_t)(r * c) * sizeof(float));
        printf("%d thread(s): held-out perplexity %.6f after %lld iterations (unigram %.6f)\n",
               t + 1, ppl[t], (long long)T, ppl_uni);
        if (t == 1) m2 = m;
        else m->ops->destroy(m);
    }
    CHECK(ppl[0] < 0.9 * ppl_uni, "whai %.3f not 10%% better than unigram %.3f", ppl[0], ppl_uni);
    CHECK(ppl[0] == ppl[1], "perplexity differs between 1 and 2 threads: %.9g vs %.9g", ppl[0], ppl[1]);
    CHECK(memcmp(phi1[0], phi1[1], (size_t)(V * 32) * sizeof(float)) == 0,
          "Phi(1) differs between 1 and 2 threads");

    /* save / load */
    const char *path = "test_whai_train.h5";
    datm_h5 *h = NULL, *g = NULL;
    int rc = datm_h5_create(path, &h, &err);
    if (!rc) rc = datm_h5_group(h, "model", 1, &g, &err);
    if (!rc) rc = m2->ops->save(m2, g, &err);
    datm_h5_close(&g);
    datm_h5_close(&h);
    CHECK(rc == 0, "save: %s", err.msg);
    datm_model *m3 = make(&d, epochs, &err);
    rc = datm_h5_open(path, 0, &h, &err);
    if (!rc) rc = datm_h5_group(h, "model", 0, &g, &err);
    if (!rc) rc = m3->ops->load(m3, g, &err);
    datm_h5_close(&g);
    datm_h5_close(&h);
    remove(path);
    CHECK(rc == 0, "load: %s", err.msg);
    datm_theta ta, tb;
    m2->ops->infer(m2, &test.X, 5, 0, &ta, &err);
    m3->ops->infer(m3, &test.X, 5, 0, &tb, &err);
    int same = 1;
    for (int l = 0; l < ta.n_layers; l++)
        same &= memcmp(ta.theta[l], tb.theta[l], (size_t)(ta.n_docs * ta.k[l]) * sizeof(float)) == 0;
    CHECK(same, "loaded model infers a different theta");
    train(m2, &d, T + 1, T + 6, &err);
    train(m3, &d, T + 1, T + 6, &err);
    const float *pa, *pb;
    int64_t r, c;
    m2->ops->get_phi(m2, 2, &pa, &r, &c);
    m3->ops->get_phi(m3, 2, &pb, &r, &c);
    CHECK(memcmp(pa, pb, (size_t)(r * c) * sizeof(float)) == 0,
          "loaded model continues training differently");
    datm_theta_free(&ta);
    datm_theta_free(&tb);
    m2->ops->destroy(m2);
    m3->ops->destroy(m3);
    free(phi1[0]);
    free(phi1[1]);
    datm_corpus_free(&d.train);
    datm_corpus_free(&test);
    datm_csr_free(&d.obs);
    datm_csr_free(&d.held);
    return check_result();
}
