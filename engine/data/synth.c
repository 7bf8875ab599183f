/* engine/data/synth.c: the PGBN corpus generator (process and streams in synth.h). */
#include "data/synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/shard.h"
#include "rand/rand.h"

#define TOPIC_INDEX ((uint64_t)1 << 40)
#define DOC_INDEX   UINT64_MAX          /* document draws: (seed, DOC, DOC_INDEX, d) */
#define LEN_INDEX   (UINT64_MAX - 1)    /* document lengths */

void datm_synth_defaults(datm_synth_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_docs = 10000;
    o->n_vocab = 5000;
    o->n_layers = 3;
    o->k[0] = 128;
    o->k[1] = 64;
    o->k[2] = 32;
    o->eta = 0.05;
    o->len_law = DATM_SYNTH_LEN_POISSON;
    o->len_mean = 100;
    o->len_shape = 2;
    o->seed = 1;
    o->docs_per_shard = DATM_SHARD_DEFAULT_DOCS;
}

static int check_opts(const datm_synth_opts *o, datm_error *err)
{
    if (o->n_docs < 1 || o->n_vocab < 2 || o->n_vocab > INT32_MAX || o->n_layers < 1 ||
        o->n_layers > DATM_MAX_LAYERS || !(o->eta > 0) || !(o->len_mean >= 1) ||
        !(o->len_shape > 0) || o->docs_per_shard < 1)
        return datm_error_set(err, DATM_E_INVALID, "synth: N %lld, V %lld, %d layers, eta %g, "
                              "length mean %g shape %g, %lld per shard: out of range",
                              (long long)o->n_docs, (long long)o->n_vocab, o->n_layers, o->eta,
                              o->len_mean, o->len_shape, (long long)o->docs_per_shard);
    for (int l = 0; l < o->n_layers; l++)
        if (o->k[l] < 1 || o->k[l] > 100000)
            return datm_error_set(err, DATM_E_INVALID, "synth: layer %d width %lld", l + 1,
                                  (long long)o->k[l]);
    return DATM_OK;
}

int datm_synth_topics(const datm_synth_opts *o, float *phi[DATM_MAX_LAYERS], datm_error *err)
{
    int rc = check_opts(o, err);
    if (rc) return rc;
    for (int l = 0; l < o->n_layers; l++) phi[l] = NULL;
    for (int l = 0; !rc && l < o->n_layers; l++) {
        const int64_t rows = l ? o->k[l - 1] : o->n_vocab, cols = o->k[l];
        const double a = l ? 1.0 : o->eta;
        double *alpha = datm_alloc_array((size_t)rows, sizeof *alpha, err);
        double *col = datm_alloc_array((size_t)rows, sizeof *col, err);
        phi[l] = datm_alloc_array((size_t)(rows * cols), sizeof *phi[l], err);
        if (!alpha || !col || !phi[l]) rc = DATM_E_NOMEM;
        for (int64_t v = 0; !rc && v < rows; v++) alpha[v] = a;
        datm_rng r;
        datm_rng_init(&r, o->seed, DATM_STREAM_INIT, TOPIC_INDEX + (uint64_t)l);
        for (int64_t k = 0; !rc && k < cols; k++) {
            datm_rng_dirichlet(&r, alpha, (int)rows, col);
            for (int64_t v = 0; v < rows; v++) phi[l][v * cols + k] = (float)col[v];
        }
        datm_free(alpha);
        datm_free(col);
    }
    if (rc)
        for (int l = 0; l < o->n_layers; l++) { datm_free(phi[l]); phi[l] = NULL; }
    return rc;
}

static int64_t doc_length(const datm_synth_opts *o, int64_t d)
{
    datm_rng r;
    datm_rng_init2(&r, o->seed, DATM_STREAM_DOC, LEN_INDEX, (uint64_t)d);
    switch (o->len_law) {
    case DATM_SYNTH_LEN_FIXED: return (int64_t)llround(o->len_mean);
    case DATM_SYNTH_LEN_NEGBIN:
        return (int64_t)datm_rng_poisson(&r, datm_rng_gamma(&r, o->len_shape) * o->len_mean /
                                                 o->len_shape);
    default: return (int64_t)datm_rng_poisson(&r, o->len_mean);
    }
}

/* Per-thread scratch of one document. */
typedef struct doc_work {
    double  *theta[DATM_MAX_LAYERS];   /* (K_l) */
    double  *w;                        /* (max K_l) */
    int64_t *counts;                   /* (K_1) */
} doc_work;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Draws the n words of document d into words (sorted). cdf: (K_1, V) word CDFs of Phi(1). */
static void draw_doc(const datm_synth_opts *o, float *const phi[DATM_MAX_LAYERS],
                     const double *cdf, int64_t d, int64_t n, doc_work *w, int32_t *words)
{
    const int L = o->n_layers;
    const int64_t V = o->n_vocab, K1 = o->k[0];
    datm_rng r;
    datm_rng_init2(&r, o->seed, DATM_STREAM_DOC, DOC_INDEX, (uint64_t)d);
    /* theta in log space: tiny gamma shapes would underflow to 0 (rand.h) */
    for (int64_t k = 0; k < o->k[L - 1]; k++) w->theta[L - 1][k] = datm_rng_log_gamma(&r, 1.0);
    for (int l = L - 2; l >= 0; l--) {
        const int64_t K = o->k[l], Kup = o->k[l + 1];
        double *up = w->w;   /* exp(log theta(l+1)), K_{l+1} <= scratch size */
        for (int64_t j = 0; j < Kup; j++) up[j] = exp(w->theta[l + 1][j]);
        for (int64_t k = 0; k < K; k++) {
            const float *row = phi[l + 1] + k * Kup;
            double sh = 0;
            for (int64_t j = 0; j < Kup; j++) sh += (double)row[j] * up[j];
            w->theta[l][k] = sh > 0 ? datm_rng_log_gamma(&r, sh) : -INFINITY;
        }
    }
    double mx = -INFINITY;
    for (int64_t k = 0; k < K1; k++) mx = fmax(mx, w->theta[0][k]);
    for (int64_t k = 0; k < K1; k++) {
        w->w[k] = isfinite(mx) ? exp(w->theta[0][k] - mx) : 1.0;
        w->counts[k] = 0;
    }
    datm_rng_multinomial(&r, n, w->w, (int)K1, w->counts);
    int64_t t = 0;
    for (int64_t k = 0; k < K1; k++)
        for (int64_t c = 0; c < w->counts[k]; c++)
            words[t++] = (int32_t)datm_rng_categorical_cumsum(&r, cdf + k * V, (int)V);
    qsort(words, (size_t)n, sizeof *words, cmp_i32);
}

/* Documents [first, first + n) as one CSR (drawn in parallel), appended to the writer. */
static int draw_shard(const datm_synth_opts *o, float *const phi[DATM_MAX_LAYERS],
                      const double *cdf, int64_t first, int64_t n, datm_shard_writer *wr,
                      double *tokens, datm_error *err)
{
    int64_t *off = datm_alloc_array((size_t)n + 1, sizeof *off, err);   /* token offsets */
    int64_t *dist = datm_alloc_array((size_t)n + 1, sizeof *dist, err); /* distinct words */
    if (!off || !dist) { datm_free(off); datm_free(dist); return DATM_E_NOMEM; }
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) off[i + 1] = doc_length(o, first + i);
    for (int64_t i = 0; i < n; i++) off[i + 1] += off[i];
    int32_t *words = datm_alloc_array((size_t)DATM_MAX(off[n], 1), sizeof *words, err);
    datm_csr m = {0};
    int rc = words ? DATM_OK : DATM_E_NOMEM;
    int failed = 0;
    if (!rc) {
        #pragma omp parallel
        {
            doc_work w;
            memset(&w, 0, sizeof w);
            int ok = 1;
            for (int l = 0; l < o->n_layers; l++)
                ok &= (w.theta[l] = malloc(sizeof(double) * (size_t)o->k[l])) != NULL;
            int64_t kmax = 0;
            for (int l = 0; l < o->n_layers; l++) kmax = DATM_MAX(kmax, o->k[l]);
            ok &= (w.w = malloc(sizeof(double) * (size_t)kmax)) != NULL;
            ok &= (w.counts = malloc(sizeof(int64_t) * (size_t)o->k[0])) != NULL;
            if (!ok) {
                #pragma omp atomic write
                failed = 1;
            }
            #pragma omp for schedule(dynamic, 64)
            for (int64_t i = 0; i < n; i++) {
                if (!ok) continue;
                int32_t *wd = words + off[i];
                const int64_t len = off[i + 1] - off[i];
                draw_doc(o, phi, cdf, first + i, len, &w, wd);
                int64_t u = 0;
                for (int64_t j = 0; j < len; j++) u += j == 0 || wd[j] != wd[j - 1];
                dist[i + 1] = u;
            }
            for (int l = 0; l < o->n_layers; l++) free(w.theta[l]);
            free(w.w);
            free(w.counts);
        }
        if (failed) rc = datm_error_set(err, DATM_E_NOMEM, "synth: out of memory");
    }
    for (int64_t i = 0; !rc && i < n; i++) dist[i + 1] += dist[i];
    if (!rc) rc = datm_csr_alloc(&m, n, o->n_vocab, dist[n], err);
    if (!rc) {
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            int64_t e = dist[i] - 1;
            m.row_ptr[i + 1] = dist[i + 1];
            for (int64_t j = off[i]; j < off[i + 1]; j++) {
                if (j == off[i] || words[j] != words[j - 1]) {
                    m.col[++e] = words[j];
                    m.val[e] = 0;
                }
                m.val[e] += 1.0f;
            }
        }
        *tokens += (double)off[n];
        rc = datm_shard_writer_add(wr, &m, err);
    }
    datm_csr_free(&m);
    datm_free(words);
    datm_free(off);
    datm_free(dist);
    return rc;
}

int datm_synth_write(const datm_synth_opts *o, float *const phi[DATM_MAX_LAYERS],
                     const char *out_dir, int overwrite, double *tokens, datm_error *err)
{
    int rc = check_opts(o, err);
    if (rc) return rc;
    const int64_t V = o->n_vocab, K1 = o->k[0];
    double *cdf = datm_alloc_array((size_t)(K1 * V), sizeof *cdf, err);   /* (K_1, V) */
    if (!cdf) return DATM_E_NOMEM;
    for (int64_t k = 0; k < K1; k++) {
        double s = 0;
        for (int64_t v = 0; v < V; v++) cdf[k * V + v] = s += (double)phi[0][v * K1 + k];
    }
    datm_shard_writer wr;
    rc = datm_shard_writer_open(&wr, out_dir, V, o->docs_per_shard, overwrite, err);
    if (rc) { datm_free(cdf); return rc; }
    double tok = 0;
    datm_progress prog;
    datm_progress_begin(&prog, "synth", o->n_docs);
    for (int64_t first = 0; !rc && first < o->n_docs; first += o->docs_per_shard) {
        const int64_t n = DATM_MIN(o->docs_per_shard, o->n_docs - first);
        rc = draw_shard(o, phi, cdf, first, n, &wr, &tok, err);
        datm_progress_update(&prog, first + n, "%.0f tokens", tok);
        if (!rc && datm_stop_requested())
            rc = datm_error_set(err, DATM_E_INTERRUPTED, "synth: interrupted (nothing written)");
    }
    datm_progress_end(&prog);
    datm_free(cdf);
    if (!rc) rc = datm_shard_writer_commit(&wr, err);
    else datm_shard_writer_abort(&wr);
    if (!rc && tokens) *tokens = tok;
    return rc;
}
