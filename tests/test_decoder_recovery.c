/* ctest-labels: stat;e2e  ctest-timeout: 900 */
/* tests/test_decoder_recovery.c: synthetic recovery by the registered models.
 * Data: 2000 documents drawn from a 2-layer PGBN with known Phi(1) (V = 500, K = 20-10,
 * sparse Dirichlet(0.05) topics; Phi(2) columns Dirichlet(1), so every layer-1 topic carries
 * a comparable share of the tokens — with Dirichlet(0.1) two of the topics get < 4 tokens
 * per document and dlda-gibbs did not find them in 400 iterations, measured mean cosine
 * 0.88), fixed seed; plus 300 test documents split 70/30 by tokens.
 * Checks: (1) dlda-gibbs (400 iterations, via the plugin contract) recovers the layer-1
 * topics: mean cosine similarity >= 0.9 after the best one-to-one matching (Hungarian
 * algorithm); (2) its per-heldout-word perplexity on the test documents (eval_begin/step,
 * chain mode) is finite and below the unigram model's; (3) dlda-tlasgr (mini-batch 200,
 * 20 epochs, shortened local chains of 10 + 5 sweeps to keep CI fast) reaches mean cosine
 * >= 0.9 too; (4) save -> load into a fresh model reproduces Phi. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data.h"
#include "eval/perplexity.h"
#include "io/h5.h"
#include "pipeline/config.h"
#include "pipeline/model.h"
#include "rand/rand.h"
#include "test_check.h"

#define MUST(expr)                                                                \
    do {                                                                          \
        if ((expr) != DATM_OK) {                                                  \
            fprintf(stderr, "FATAL %s:%d: %s\n", __FILE__, __LINE__, err.msg);    \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

enum { V = 500, K1 = 20, K2 = 10, NTRAIN = 2000, NTEST = 300 };

static double phi1_true[V * K1], phi2_true[K1 * K2];

static void dirichlet_cols(datm_rng *r, double *phi, int rows, int cols, double a)
{
    double *alpha = malloc((size_t)rows * sizeof(double)), *out = malloc((size_t)rows * sizeof(double));
    for (int v = 0; v < rows; v++) alpha[v] = a;
    for (int k = 0; k < cols; k++) {
        datm_rng_dirichlet(r, alpha, rows, out);
        for (int v = 0; v < rows; v++) phi[v * cols + k] = out[v];
    }
    free(alpha);
    free(out);
}

/* n documents from the 2-layer PGBN: theta2 ~ Gam(1, 1), theta1 ~ Gam(Phi2 theta2, scale 15),
 * x ~ Pois(Phi1 theta1). */
static void draw_docs(datm_rng *r, int n, float *dense)
{
    for (int d = 0; d < n; d++) {
        double t2[K2], t1[K1];
        for (int k = 0; k < K2; k++) t2[k] = datm_rng_gamma(r, 1.0);
        for (int k = 0; k < K1; k++) {
            double sh = 0;
            for (int j = 0; j < K2; j++) sh += phi2_true[k * K2 + j] * t2[j];
            t1[k] = 15.0 * datm_rng_gamma(r, sh);
        }
        for (int v = 0; v < V; v++) {
            double rate = 0;
            for (int k = 0; k < K1; k++) rate += phi1_true[v * K1 + k] * t1[k];
            dense[(int64_t)d * V + v] = (float)datm_rng_poisson(r, rate);
        }
    }
}

static void to_csr(const float *dense, int64_t n, datm_csr *X)
{
    datm_error err;
    int64_t nnz = 0;
    for (int64_t i = 0; i < n * V; i++) nnz += dense[i] > 0;
    MUST(datm_csr_alloc(X, n, V, nnz, &err));
    int64_t e = 0;
    X->row_ptr[0] = 0;
    for (int64_t d = 0; d < n; d++) {
        for (int v = 0; v < V; v++)
            if (dense[d * V + v] > 0) { X->col[e] = v; X->val[e++] = dense[d * V + v]; }
        X->row_ptr[d + 1] = e;
    }
}

/* Hungarian algorithm (potentials, O(n^3)) maximising sum of w[i][j]; returns match[i]. */
static void hungarian_max(int n, const double *w, int *match)
{
    double *u = calloc((size_t)n + 1, sizeof(double)), *v = calloc((size_t)n + 1, sizeof(double));
    int *p = calloc((size_t)n + 1, sizeof(int)), *way = calloc((size_t)n + 1, sizeof(int));
    double *minv = malloc(((size_t)n + 1) * sizeof(double));
    int *used = malloc(((size_t)n + 1) * sizeof(int));
    for (int i = 1; i <= n; i++) {
        p[0] = i;
        int j0 = 0;
        for (int j = 0; j <= n; j++) { minv[j] = INFINITY; used[j] = 0; }
        do {
            used[j0] = 1;
            int i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (int j = 1; j <= n; j++)
                if (!used[j]) {
                    double cur = -w[(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
                    if (cur < minv[j]) { minv[j] = cur; way[j] = j0; }
                    if (minv[j] < delta) { delta = minv[j]; j1 = j; }
                }
            for (int j = 0; j <= n; j++)
                if (used[j]) { u[p[j]] += delta; v[j] -= delta; }
                else minv[j] -= delta;
            j0 = j1;
        } while (p[j0] != 0);
        do { int j1 = way[j0]; p[j0] = p[j1]; j0 = j1; } while (j0);
    }
    for (int j = 1; j <= n; j++) match[p[j] - 1] = j - 1;
    free(u); free(v); free(p); free(way); free(minv); free(used);
}

static double mean_matched_cosine(const float *phi, int64_t rows, int64_t cols)
{
    double w[K1 * K1];
    for (int i = 0; i < K1; i++)
        for (int j = 0; j < K1; j++) {
            double ab = 0, aa = 0, bb = 0;
            for (int64_t v = 0; v < rows; v++) {
                double a = phi1_true[v * K1 + i], b = phi[v * cols + j];
                ab += a * b; aa += a * a; bb += b * b;
            }
            w[i * K1 + j] = ab / sqrt(aa * bb);
        }
    int match[K1];
    hungarian_max(K1, w, match);
    double s = 0;
    for (int i = 0; i < K1; i++) s += w[i * K1 + match[i]];
    if (getenv("DATM_TEST_VERBOSE")) {
        for (int i = 0; i < K1; i++) printf(" %.3f", w[i * K1 + match[i]]);
        printf("\n");
    }
    return s / K1;
}

static datm_model *make_model(const char *name, const datm_csr *train, int64_t batch,
                              const char *const *kv, datm_config **cfg_out)
{
    datm_error err;
    const datm_model_ops *ops = datm_registry_find(name);
    if (!ops) { fprintf(stderr, "model %s not registered\n", name); exit(1); }
    datm_config *cfg = NULL;
    MUST(datm_config_create(ops->schema, "model", &cfg, &err));
    for (int i = 0; kv[i]; i += 2) MUST(datm_config_set(cfg, kv[i], kv[i + 1], &err));
    datm_run_info info = {.n_train = train->n_rows, .n_vocab = V, .batch_size = batch,
                          .seed = 7, .threads = 2, .train = train};
    datm_model *m = NULL;
    MUST(ops->create(cfg, &info, &m, &err));
    *cfg_out = cfg;
    return m;
}

static double eval_ppl(datm_model *m, const datm_csr *obs, const datm_csr *ho, int S)
{
    datm_error err;
    datm_rate_accum acc;
    MUST(datm_rate_accum_init(&acc, obs, ho, &err));
    void *st = NULL;
    MUST(m->ops->eval_begin(m, obs, 99, &st, &err));
    for (int s = 0; s < S; s++) MUST(m->ops->eval_step(m, st, s, &acc, &err));
    m->ops->eval_end(m, st);
    double p = datm_rate_accum_perplexity(&acc, ho);
    datm_rate_accum_free(&acc);
    return p;
}

int main(void)
{
    datm_error err;
    datm_rng r;
    datm_rng_init(&r, 2024, DATM_STREAM_TEST, 0);
    dirichlet_cols(&r, phi1_true, V, K1, 0.05);
    dirichlet_cols(&r, phi2_true, K1, K2, 1.0);
    float *dense = malloc((size_t)NTRAIN * V * sizeof(float));
    draw_docs(&r, NTRAIN, dense);
    datm_csr train, test, obs, ho;
    to_csr(dense, NTRAIN, &train);
    draw_docs(&r, NTEST, dense);
    to_csr(dense, NTEST, &test);
    free(dense);
    MUST(datm_token_split(&test, 0.7, 5, &obs, &ho, &err));
    printf("synthetic: %lld train docs, %.0f tokens\n", (long long)train.n_rows, datm_csr_total(&train));

    /* ---- dlda-gibbs ---- */
    const char *kv_g[] = {"layers", "[20, 10]", "eta", "[0.05]", "test_burnin", "30", NULL};
    datm_config *cfg_g = NULL;
    datm_model *mg = make_model("dlda-gibbs", &train, NTRAIN, kv_g, &cfg_g);
    datm_batch b = {.X = &train, .doc_ids = NULL, .labels = NULL};
    datm_train_stats st;
    double t0 = datm_time_now();
    for (int it = 1; it <= 400; it++) {
        datm_train_ctx ctx = {.iteration = it, .epoch = it - 1, .seed = 7, .rho = 1.0};
        MUST(mg->ops->train_batch(mg, &b, &ctx, &st, &err));
        if (it % 100 == 0) printf("gibbs it %d: loglik/doc %.3f\n", it, st.loglik);
    }
    const float *phi;
    int64_t rows, cols;
    MUST(mg->ops->get_phi(mg, 1, &phi, &rows, &cols));
    double cos_g = mean_matched_cosine(phi, rows, cols);
    printf("dlda-gibbs: mean matched cosine %.4f (%.1f s)\n", cos_g, datm_time_now() - t0);
    CHECK(cos_g >= 0.9, "dlda-gibbs recovery: mean cosine %.4f < 0.9", cos_g);

    double ppl_g = eval_ppl(mg, &obs, &ho, 30);
    /* unigram reference on the same split */
    const char *kv_u[] = {NULL};
    datm_config *cfg_u = NULL;
    datm_model *mu = make_model("unigram", &train, 200, kv_u, &cfg_u);
    datm_train_ctx ctx1 = {.iteration = 1, .seed = 7, .rho = 1.0};
    MUST(mu->ops->train_batch(mu, &b, &ctx1, &st, &err));
    double ppl_u = eval_ppl(mu, &obs, &ho, 1);
    printf("held-out perplexity: dlda-gibbs %.3f, unigram %.3f\n", ppl_g, ppl_u);
    CHECK(isfinite(ppl_g) && ppl_g < ppl_u, "dlda-gibbs perplexity %.3f not below unigram %.3f",
          ppl_g, ppl_u);

    /* save -> load round trip */
    char path[] = "/tmp/datm_recovery_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    datm_h5 *h = NULL;
    MUST(datm_h5_create(path, &h, &err));
    MUST(mg->ops->save(mg, h, &err));
    datm_h5_close(&h);
    datm_config *cfg_g2 = NULL;
    datm_model *mg2 = make_model("dlda-gibbs", &train, NTRAIN, kv_g, &cfg_g2);
    MUST(datm_h5_open(path, 0, &h, &err));
    MUST(mg2->ops->load(mg2, h, &err));
    datm_h5_close(&h);
    unlink(path);
    const float *phi2;
    MUST(mg2->ops->get_phi(mg2, 1, &phi2, &rows, &cols));
    CHECK(memcmp(phi, phi2, (size_t)(rows * cols) * sizeof(float)) == 0, "loaded Phi(1) differs");
    mg2->ops->destroy(mg2);
    datm_config_destroy(&cfg_g2);

    /* ---- dlda-tlasgr ---- */
    const char *kv_t[] = {"layers", "[20, 10]", "eta", "[0.05]", "test_burnin", "30",
                          "burnin_sweeps", "10", "collect_sweeps", "5", NULL};
    datm_config *cfg_t = NULL;
    datm_model *mt = make_model("dlda-tlasgr", &train, 200, kv_t, &cfg_t);
    datm_batch_iter itr;
    MUST(datm_batch_iter_init(&itr, NTRAIN, 200, 7, 1, 0, &err));
    t0 = datm_time_now();
    int64_t it = 0;
    for (int ep = 0; ep < 20; ep++) {
        const int64_t *rowsel;
        int64_t nb;
        while ((nb = datm_batch_iter_next(&itr, &rowsel)) > 0) {
            datm_csr Xb;
            MUST(datm_csr_select_rows(&train, rowsel, nb, &Xb, &err));
            datm_batch bb = {.X = &Xb, .doc_ids = rowsel, .labels = NULL};
            datm_train_ctx ctx = {.iteration = ++it, .epoch = ep, .seed = 7,
                                  .rho = (double)NTRAIN / (double)nb};
            MUST(mt->ops->train_batch(mt, &bb, &ctx, &st, &err));
            datm_csr_free(&Xb);
        }
    }
    MUST(mt->ops->get_phi(mt, 1, &phi, &rows, &cols));
    double cos_t = mean_matched_cosine(phi, rows, cols);
    printf("dlda-tlasgr: mean matched cosine %.4f after %lld mini-batches (%.1f s)\n", cos_t,
           (long long)it, datm_time_now() - t0);
    CHECK(cos_t >= 0.9, "dlda-tlasgr recovery: mean cosine %.4f < 0.9", cos_t);
    datm_batch_iter_free(&itr);

    mg->ops->destroy(mg);
    mu->ops->destroy(mu);
    mt->ops->destroy(mt);
    datm_config_destroy(&cfg_g);
    datm_config_destroy(&cfg_u);
    datm_config_destroy(&cfg_t);
    datm_csr_free(&train);
    datm_csr_free(&test);
    datm_csr_free(&obs);
    datm_csr_free(&ho);
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
