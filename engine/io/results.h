/* engine/io/results.h: reading (and the topics part of writing) RUN_DIR/result.h5, with the
 * names of results_layout.h. Shared by `datm compare`, `check-metrics`, `topics`, `figures`
 * and the pipeline's topics stage. */
#ifndef DATM_RESULTS_H
#define DATM_RESULTS_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "data/data.h"
#include "data/tokdocs.h"
#include "eval/coherence.h"
#include "eval/topics.h"
#include "io/h5.h"

/* Resolves RUN (a run directory or a result file) to the result path: RUN itself when it is
 * a file, else RUN/result.h5, else RUN/result.h5.part (an unfinished run). DATM_E_IO when
 * none exists. */
int datm_result_path(const char *run, char *path, size_t size, datm_error *err);
/* Opens it read-only (or writable). */
int datm_result_open(const char *run, int writable, datm_h5 **out, datm_error *err);

/* /metrics: every scalar dataset, in name order. */
typedef struct datm_result_metrics {
    int64_t n;
    char  **names;    /* (n) */
    double *values;   /* (n) */
} datm_result_metrics;
int  datm_result_metrics_read(datm_h5 *f, datm_result_metrics *out, datm_error *err);   /* empty if absent */
/* Value of a metric; returns 0 and sets *v, or -1 when absent. */
int  datm_result_metrics_get(const datm_result_metrics *m, const char *name, double *v);
void datm_result_metrics_free(datm_result_metrics *m);

/* /curves: 1-D datasets of equal length, one column each, in name order. */
typedef struct datm_result_curves {
    int64_t  n_rows;
    int      n_cols;
    char   **names;   /* (n_cols) */
    double **cols;    /* (n_cols) x (n_rows) */
} datm_result_curves;
int  datm_result_curves_read(datm_h5 *f, datm_result_curves *out, datm_error *err);     /* empty if absent */
/* The same for any group of equal-length 1-D columns (e.g. /sample_curve); empty if absent. */
int  datm_result_columns_read(datm_h5 *f, const char *group, datm_result_curves *out,
                              datm_error *err);
const double *datm_result_curves_col(const datm_result_curves *c, const char *name);   /* NULL if absent */
void datm_result_curves_free(datm_result_curves *c);

/* The vocabulary: /data/vocab, else vocab.txt in the directory named by the /data `dir`
 * attribute. *vocab NULL (and DATM_OK) when neither exists. */
int  datm_result_vocab(datm_h5 *f, char ***vocab, int64_t *n, datm_error *err);

/* Number of layers with /model/phi_<l> (0 when none) and their shapes: k[0] = V. */
int  datm_result_model_shape(datm_h5 *f, int64_t *k, datm_error *err);

/* Writes a topic set under /topics (names in results_layout.h), and the per-layer means of
 * its coherence measures, diversity and unused count under /metrics when computed. */
int  datm_topics_write(datm_h5 *f, const datm_topic_set *s, datm_error *err);
/* Reads /topics back (projected when stored). */
int  datm_topics_read(datm_h5 *f, datm_topic_set *out, datm_error *err);

/* Writes /usage: tokens[l-1], mass[l-1] (K_l) of each layer (eval/topic_diag.h). */
int  datm_usage_write(datm_h5 *f, int n_layers, const int64_t *k, const double *const *tokens,
                      const double *const *mass, int64_t n_docs, datm_error *err);

/* What the topics stage and `datm topics --recompute` compute. */
typedef struct datm_topics_opts {
    datm_coh_opts coh;          /* measures, top_n, window */
    double        unused_share; /* the unused rule (DATM_UNUSED_SHARE) */
    double        dup_cos;      /* near-duplicate threshold (DATM_DUP_COSINE) */
} datm_topics_opts;
void datm_topics_opts_default(datm_topics_opts *o);

/* A loaded reference corpus for coherence: path "" or NULL = the training documents of the
 * dataset named in f's /data; a data set directory (train.docword[.gz]) = its training
 * documents; any other path = a raw-text source read as token sequences over f's vocabulary
 * (datm_tokdocs_read_text; the only kind sliding windows can use). */
typedef struct datm_topics_ref {
    datm_coh_ref ref;          /* points into corpus or tokens */
    datm_corpus  corpus;
    int          have_corpus;
    datm_tokdocs tokens;
    char         name[1200];   /* recorded as coherence_reference */
} datm_topics_ref;
int  datm_topics_reference_load(datm_h5 *f, const char *path, datm_topics_ref *r,
                                datm_error *err);
void datm_topics_reference_free(datm_topics_ref *r);
/* Before a run: the reference exists, and a window > 0 has a raw-text reference. */
int  datm_topics_reference_check(const char *path, int64_t window, datm_error *err);

/* The pipeline's topics stage (datm_stage_hook signature): reads /model/phi_<l> from
 * result_path, builds the topic set (top 25 words, 5 links, projected kept when
 * V * K_l <= 2^22), takes the run's usage from /usage, computes the coherence measures of
 * the spec's evaluate.coherence (default: NPMI of the top 10 words over documents) against
 * its reference (default: the training documents of the dataset named in /data; skipped with
 * a warning when they cannot be loaded), diversity (top 25) and the diagnostics, and writes
 * /topics and the metrics into result_path. */
int  datm_topics_stage(const char *run_dir, const char *result_path, datm_error *err);
/* Builds the topic set of f's model with the options, the run's /usage when present, and
 * (ref non-NULL) coherence and corpus_kl against ref, named ref_name in the settings. */
int  datm_topics_compute_with(datm_h5 *f, const datm_coh_ref *ref, const char *ref_name,
                              const datm_topics_opts *o, datm_topic_set *out, datm_error *err);
/* Same with the default options and documents X as the reference (NULL: no coherence). */
int  datm_topics_compute(datm_h5 *f, const datm_csr *reference, datm_topic_set *out,
                         datm_error *err);

#endif
