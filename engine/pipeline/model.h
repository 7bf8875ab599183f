/* engine/pipeline/model.h: the plugin contract between the engine and a model variant.
 *
 * Each variant is one file in models/ that fills one `const datm_model_ops` and is listed in
 * models/registry.c. The engine never names a variant. A variant's state struct starts with
 * `datm_model base;` so the engine can hold it as a datm_model pointer.
 *
 * The engine's train stage: for each mini-batch, train_batch(); every eval interval (and at
 * the end) it evaluates per-heldout-word perplexity by eval_begin() on the evaluation
 * documents' observed part, then eval_step() repeatedly — each call adds one posterior
 * sample of the Poisson rate Phi(1) theta into a datm_rate_accum — then eval_end(). */
#ifndef DATM_MODEL_H
#define DATM_MODEL_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "pipeline/config.h"

#define DATM_MODEL_API_VERSION 1

struct datm_h5;              /* engine/io/h5.h */
struct datm_rate_accum;      /* engine/eval/perplexity.h */

typedef struct datm_model {
    const struct datm_model_ops *ops;
} datm_model;

/* What the engine tells a model about the run (beyond its own model: section). */
typedef struct datm_run_info {
    int64_t      n_train;       /* N training documents */
    int64_t      n_vocab;       /* V */
    int          n_classes;     /* 0 when the corpus has no labels */
    int64_t      batch_size;    /* B */
    int64_t      epochs;
    int64_t      total_iters;   /* mini-batches over the whole run */
    uint64_t     seed;
    int          threads;
    const datm_csr *train;      /* the whole training set (batch models such as Gibbs use it) */
    const int32_t  *train_labels; /* (N) or NULL */
    char *const    *vocab;      /* (V) or NULL */
    int             streamed;   /* 1: data.stream, mini-batches read from disk and train NULL
                                 * (a model that needs random access to the training documents
                                 * says so at create) */
} datm_run_info;

typedef struct datm_batch {
    const datm_csr *X;          /* (B, V) counts of this mini-batch */
    const int64_t  *doc_ids;    /* (B) row ids in the training set */
    const int32_t  *labels;     /* (B) or NULL */
} datm_batch;


typedef struct datm_train_ctx {
    int64_t  iteration;         /* global mini-batch counter, starts at 1, counts across epochs */
    int64_t  epoch;             /* from 0 */
    uint64_t seed;
    double   rho;               /* N / B */
} datm_train_ctx;

/* Filled by train_batch; the engine logs it and stores it in /curves. */
typedef struct datm_train_stats {
    double loss;                      /* per-document negative ELBO or -loglik (lower better) */
    double loglik;                    /* per-document Poisson log-likelihood */
    int    n_layers;
    double kl[DATM_MAX_LAYERS];       /* per-document KL of each layer (0 if n/a) */
    double step[DATM_MAX_LAYERS];     /* mean effective step eps/M_k per layer (0 if n/a) */
} datm_train_stats;

/* Per-layer document features (theta), each (N, K_l) row-major. */
typedef struct datm_theta {
    int      n_layers;
    int64_t  n_docs;
    int64_t  k[DATM_MAX_LAYERS];
    float   *theta[DATM_MAX_LAYERS];  /* owned by the struct; free with datm_theta_free */
} datm_theta;
void datm_theta_free(datm_theta *t);

typedef struct datm_model_ops {
    int         api_version;          /* DATM_MODEL_API_VERSION */
    const char *name;                 /* as written in YAML: "whai", "dlda-gibbs", ... */
    const char *summary;              /* one line for `datm models` */
    const datm_param_schema *schema;  /* keys of the model: section */

    int  (*create)(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                   datm_error *err);
    /* One optimisation/sampling step on one mini-batch (batch models get the whole set). */
    int  (*train_batch)(datm_model *m, const datm_batch *b, const datm_train_ctx *ctx,
                        datm_train_stats *st, datm_error *err);

    /* Perplexity evaluation on `obs` (the observed part of the evaluation documents). */
    int  (*eval_begin)(datm_model *m, const datm_csr *obs, uint64_t seed, void **state,
                       datm_error *err);
    /* Adds one posterior sample of rate = theta(1) Phi(1)^T for every evaluation document. */
    int  (*eval_step)(datm_model *m, void *state, int64_t draw, struct datm_rate_accum *acc,
                      datm_error *err);
    void (*eval_end)(datm_model *m, void *state);

    /* Features for new documents: per-layer theta averaged over nsamples draws (0 = mean). */
    int  (*infer)(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                  datm_theta *out, datm_error *err);

    /* Optional (supervised models): class probabilities (N, C) averaged over nsamples. */
    int  (*predict)(const datm_model *m, const datm_csr *docs, uint64_t seed, int nsamples,
                    float *probs, datm_error *err);

    /* Topics of layer l (1-based): Phi(l), shape (*rows, *cols) = (K_{l-1}, K_l), borrowed. */
    int  (*get_phi)(const datm_model *m, int layer, const float **phi, int64_t *rows,
                    int64_t *cols);
    int  (*n_layers)(const datm_model *m);

    /* Full state (parameters, optimiser moments, counters) for results and resume. */
    int  (*save)(const datm_model *m, struct datm_h5 *g, datm_error *err);
    int  (*load)(datm_model *m, struct datm_h5 *g, datm_error *err);  /* into a created model */
    void (*destroy)(datm_model *m);
} datm_model_ops;

/* The registry: models/registry.c. The built-in variants, then those of loaded plugins. */
const datm_model_ops *datm_registry_find(const char *name);
int                   datm_registry_count(void);
const datm_model_ops *datm_registry_at(int i);
/* Loads the plugin file `path` (relative: to base_dir, else in DATM_PLUGIN_PATH's
 * directories; engine/plugin/plugin.h) and registers its variants; a file loaded already is
 * not loaded again. `where` prefixes messages. A variant named like a registered one is an
 * error. */
int datm_registry_load(const char *path, const char *base_dir, const char *where,
                       datm_error *err);
/* 1 with the plugin file and its SHA-256 when ops came from a plugin; 0 for a built-in. */
int datm_registry_source(const datm_model_ops *ops, const char **path, const char **sha256);

#endif
