/* datm.h: the public C API of libdatm — read a trained deep topic model and use it.
 *
 * A trained model is a run directory made by `datm run` (or its result.h5). Open it, read
 * its structure (layers, vocabulary, topic matrices, metrics, resolved spec, curves, topic
 * diagnostics), project any layer's topics to words, and infer per-layer document features
 * (theta) of new documents.
 * Training is the CLI's job (`datm run SPEC.yaml`).
 *
 * Conventions: every fallible function returns 0 on success, else a nonzero code with err
 * (may be NULL) holding a message naming what failed. Handles are opaque; the caller frees
 * what it opens. Matrices are row-major float arrays the caller allocates with the sizes the
 * getters give. Layers count from 1 (closest to the words) to datm_layers(). Not thread-safe
 * on one handle; separate handles may be used from separate threads.
 *
 *   datm_trained *m;  datm_error e;
 *   if (datm_open("results/brown_whai", &m, &e)) { fprintf(stderr, "%s\n", e.msg); ... }
 *   int64_t V = datm_vocab_size(m), K = datm_topics(m, 1);
 *   float *tw = malloc(V * K * sizeof *tw);   datm_topic_words(m, 1, tw, &e);
 *   datm_close(m); */
#ifndef DATM_H
#define DATM_H

#include <stdint.h>

#include "datm_base.h"   /* datm_error, status codes */

#ifdef __cplusplus
extern "C" {
#endif

#define DATM_API_VERSION 1   /* raised when a declaration below changes incompatibly */
#define DATM_API_MINOR   1   /* raised when functions are added (1: the record, diagnostics) */

typedef struct datm_trained datm_trained;   /* a trained model, opened from a run */
typedef struct datm_docs  datm_docs;    /* documents as word counts over a vocabulary */

/* DATM_API_VERSION of the library (compare with the header's). */
int  datm_api_version(void);

/* ---- a trained model ---- */
/* Opens a run directory or result file, also of a run not finished (result.h5.part) or
 * without a model (then datm_layers() is 0); the model is loaded at the first datm_infer. */
int  datm_open(const char *run, datm_trained **out, datm_error *err);
void datm_close(datm_trained *m);                        /* NULL is fine */

const char *datm_variant(const datm_trained *m);         /* "whai", "dlda-gibbs", ... */
const char *datm_spec_text(const datm_trained *m);       /* the run's resolved spec (YAML) */
const char *datm_run_state(const datm_trained *m);       /* "COMPLETED", "RUNNING", ... */
const char *datm_data_dir(const datm_trained *m);        /* the data set it trained on, as
                                                            resolved then; NULL if unknown */
int         datm_layers(const datm_trained *m);          /* L */
int64_t     datm_vocab_size(const datm_trained *m);      /* V */
int64_t     datm_topics(const datm_trained *m, int layer);   /* K_layer; 0 when out of range */
const char *datm_word(const datm_trained *m, int64_t v); /* word v (0-based); NULL without a
                                                           vocabulary or out of range */

/* Phi(layer): (K_{layer-1}, K_layer), K_0 = V; each column sums to 1 (paper eq. PGBN_generate). */
int  datm_phi(const datm_trained *m, int layer, float *out, datm_error *err);
/* The layer's topics on the words: Phi(1) ... Phi(layer), shape (V, K_layer), columns sum to 1. */
int  datm_topic_words(const datm_trained *m, int layer, float *out, datm_error *err);
/* For each topic k of the layer: the n most probable words, ids[k n + j] (0-based) and their
 * probabilities w[k n + j] (w may be NULL), most probable first. */
int  datm_top_words(const datm_trained *m, int layer, int n, int32_t *ids, float *w,
                    datm_error *err);
/* The same for the children in layer - 1 (layer >= 2): the largest entries of Phi(layer). */
int  datm_top_children(const datm_trained *m, int layer, int n, int32_t *ids, float *w,
                       datm_error *err);

/* The run's scalar metrics (/metrics: perplexity, error_rate, train_s, ...). */
int         datm_metric_count(const datm_trained *m);
const char *datm_metric_name(const datm_trained *m, int i);   /* in name order; NULL past the end */
int         datm_metric(const datm_trained *m, const char *name, double *value);  /* 0 found, else -1 */
/* The resolved spec as dotted keys ("model.layers" -> "[64, 32]") in its order. */
const char *datm_param_name(const datm_trained *m, int i);        /* NULL past the end */
const char *datm_param(const datm_trained *m, const char *key);   /* NULL when absent */
/* Column `name` of the training curves ("iteration", "wall_s", "perplexity", "loss", ...)
 * and its length; NULL when the run has none. */
const double *datm_curve(const datm_trained *m, const char *name, int64_t *n_rows);

/* ---- topic diagnostics (what `datm topics` shows; its --help defines each) ----
 * As the run stored them, or recomputed from Phi by datm_topics_evaluate with coherence in
 * `reference` (NULL: the training documents; a data set directory or a raw text file),
 * `measures` ("npmi,cv", NULL: all), top_n words, window (0: documents, w: sliding windows
 * of a text); top_n, window < 0: the defaults. Then the unused flags may be redrawn at
 * use < share / K_l. The getters return 0, -1 when the run lacks the value, else an error. */
int  datm_topics_evaluate(datm_trained *m, const char *reference, const char *measures,
                          int top_n, int64_t window, datm_error *err);
int  datm_topics_flag_unused(datm_trained *m, double share, datm_error *err);
/* K_layer values: "use" (share of the training tokens), "unused" (1/0), coherence "npmi",
 * "uci", "umass", "cv", "kl" (from the corpus's word frequencies, nats), "nearest" (most
 * similar topic of the layer, -1 none), "cosine" (with it). */
int  datm_topic_stat(datm_trained *m, int layer, const char *name, double *out, datm_error *err);
/* One value of a layer: "npmi" ... (mean over its topics), "npmi_live" ... (over the live
 * ones), "unused" (count), "diversity"; of layer 0, the settings: "unused_share", "dup_cos",
 * "top_n", "window", "npmi" ... (1: scored). datm_topics_reference: the coherence corpus. */
int  datm_layer_stat(datm_trained *m, int layer, const char *name, double *value, datm_error *err);
const char *datm_topics_reference(datm_trained *m);      /* NULL: no coherence */

/* ---- documents ---- */
/* Reads a UCI bag-of-words file (docword[.gz]: D, W, NNZ, then "doc word count" lines). */
int  datm_docs_read(const char *path, datm_docs **out, datm_error *err);
/* Copies a CSR matrix: n_docs rows, row_ptr (n_docs + 1), col (0-based word ids < n_words)
 * and count (>= 0) of every entry. */
int  datm_docs_from_csr(int64_t n_docs, int64_t n_words, const int64_t *row_ptr,
                        const int32_t *col, const float *count, datm_docs **out, datm_error *err);
int64_t datm_docs_count(const datm_docs *d);             /* D */
int64_t datm_docs_words(const datm_docs *d);             /* W, the words they are over */
/* Each document's length (D entries) and each word's total count (W entries); either may
 * be NULL. */
void datm_docs_totals(const datm_docs *d, double *doc_len, double *word_count);
void datm_docs_free(datm_docs *d);                     /* NULL is fine */

/* ---- inference ---- */
/* Per-layer theta of the documents under the model: theta[l - 1] receives (n_docs, K_l) for
 * every layer l (NULL: that layer is not wanted). samples 0: the posterior mean; S > 0: the average of S draws (seed). threads
 * > 0 caps OpenMP and OpenBLAS threads for the call (0: as set). The same inputs give the same
 * numbers for any thread count. Documents may use fewer words than the model, not more. */
int  datm_infer(datm_trained *m, const datm_docs *d, int samples, uint64_t seed, int threads,
                float *const *theta, datm_error *err);

/* Creates the model and loads its trained state now (datm_infer does so at its first call):
 * to see a load error early or to time inference apart from loading. */
int  datm_load(datm_trained *m, datm_error *err);

#ifdef __cplusplus
}
#endif
#endif
