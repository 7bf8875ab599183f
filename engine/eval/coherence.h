/* engine/eval/coherence.h: topic quality beyond perplexity, per layer.
 *
 * Counts. A reference corpus gives N "virtual documents": its documents themselves (boolean
 * document, window 0), or every run of `window` consecutive token positions of each document
 * (boolean sliding window; a document shorter than the window is one virtual document; the
 * positions of words outside the vocabulary count as positions). D(w) is the number of
 * virtual documents containing w, D(a, b) the number containing both; P = D / N.
 *
 * Measures over the top n words w_1..w_n of a topic (most probable first), eps = 1e-12:
 *   npmi  = mean over pairs i < j of NPMI(w_i, w_j),
 *           NPMI(a, b) = log[(P(a,b) + eps) / (P(a) P(b))] / -log(P(a,b) + eps)   in [-1, 1]
 *           (1 for a pair in every virtual document, where the ratio is 0/0);
 *   uci   = mean over pairs i < j of PMI(w_i, w_j) = log[(P(a,b) + eps) / (P(a) P(b))]
 *           (Newman et al. 2010, "UCI");
 *   umass = mean over pairs j < i of log[(P(w_i, w_j) + eps) / P(w_j)]: each word given every
 *           better-ranked one (Mimno et al. 2011, "UMass");
 *   cv    = mean over i of cos(v(w_i), sum_j v(w_j)) with the context vectors
 *           v(w)_j = NPMI(w, w_j), j = 1..n (NPMI(w, w) with D(w, w) = D(w))
 *           (Roeder et al. 2015, "C_V": one-set segmentation, NPMI, gamma 1).
 * These are the definitions of gensim's CoherenceModel (c_npmi, c_uci, u_mass, c_v; pairs in
 * both orders average to the same value for the symmetric measures). gensim's defaults pair
 * each measure with its own counting: u_mass on documents, c_uci and c_npmi on windows of 10,
 * c_v on windows of 110; here one `window` applies to every measure and is recorded with the
 * values. Words that occur in no virtual document are left out of their topic's score (their
 * ratios are undefined); a topic with fewer than two scored words gets NAN, and a layer's
 * mean is over the topics with a value.
 *
 * Topic diversity: |union of the top-n words of all K topics| / (n K), n = 25 by default. */
#ifndef DATM_COHERENCE_H
#define DATM_COHERENCE_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "data/tokdocs.h"
#include "eval/topics.h"

#define DATM_NPMI_TOP_N      10
#define DATM_NPMI_EPS        1e-12
#define DATM_DIVERSITY_TOP_N 25

/* Occurrence bitsets of a set of words over the virtual documents, built once. */
typedef struct datm_doc_index {
    int64_t   n_docs;     /* N virtual documents (documents or windows) */
    int64_t   n_vocab;    /* V */
    int64_t   n_words;    /* words indexed */
    int64_t   n_blocks;   /* 64-bit blocks per word: ceil(N / 64) */
    int32_t  *slot;       /* (V) slot of each word in bits, -1 when not indexed */
    uint64_t *bits;       /* (n_words, n_blocks) bit d set when virtual document d has the word */
    int64_t  *df;         /* (n_words) D(w) */
} datm_doc_index;

/* Indexes the given words over the documents of X (duplicates and ids outside [0, V)
 * ignored). */
int  datm_doc_index_build(const datm_csr *X, const int32_t *words, int64_t n_words,
                          datm_doc_index *out, datm_error *err);
/* The same over the sliding windows of `window` >= 1 positions of the documents of T. */
int  datm_doc_index_build_windows(const datm_tokdocs *T, int64_t window, const int32_t *words,
                                  int64_t n_words, datm_doc_index *out, datm_error *err);
void datm_doc_index_free(datm_doc_index *ix);
int64_t datm_doc_index_df(const datm_doc_index *ix, int32_t w);              /* -1: not indexed */
int64_t datm_doc_index_co(const datm_doc_index *ix, int32_t a, int32_t b);   /* -1: not indexed */

/* NPMI of one word pair from counts (formula above); NAN when d_a or d_b is 0. */
double datm_npmi_pair(int64_t d_ab, int64_t d_a, int64_t d_b, int64_t n_docs, double eps);
/* PMI (uci) of one pair; NAN when d_a or d_b is 0. */
double datm_pmi_pair(int64_t d_ab, int64_t d_a, int64_t d_b, int64_t n_docs, double eps);
/* UMass term log[(d_ab / N + eps) / (d_cond / N)]; NAN when d_cond is 0. */
double datm_umass_pair(int64_t d_ab, int64_t d_cond, int64_t n_docs, double eps);

/* Per-topic NPMI: top_ids (K, stride), the first n words of each row are scored.
 * npmi (K) receives the per-topic scores; returns the mean over finite ones in *mean. */
int datm_npmi_topics(const datm_doc_index *ix, const int32_t *top_ids, int64_t K, int stride,
                     int n, double eps, double *npmi, double *mean, datm_error *err);

/* ---- the suite ---- */
typedef enum {
    DATM_COH_NPMI = 0,
    DATM_COH_UCI,
    DATM_COH_UMASS,
    DATM_COH_CV,
    DATM_COH_COUNT_
} datm_coh_measure;
_Static_assert(DATM_COH_COUNT_ == DATM_TOPIC_MEASURES, "topics.h keeps one score per measure");

const char *datm_coh_name(datm_coh_measure m);      /* "npmi", "uci", "umass", "cv" */
/* Parses a measure list: "npmi,cv", "[npmi, cv]", "all"; names as above (also "c_v",
 * "u_mass", "c_uci", "c_npmi", "pmi"). *mask gets bit (1 << m) per measure. */
int datm_coh_parse_list(const char *text, unsigned *mask, datm_error *err);

/* Per-topic score of measure m (formulas above) over the first n (>= 2) of each row of
 * top_ids (K, stride): score (K); NAN for a topic with fewer than two scored words. */
int datm_coherence_topics(const datm_doc_index *ix, datm_coh_measure m, const int32_t *top_ids,
                          int64_t K, int stride, int n, double *score, datm_error *err);

/* Mean of the finite entries of x (K) whose keep flag is set (keep NULL: all); NAN if none. */
double datm_mean_finite(const double *x, const uint8_t *keep, int64_t K);

/* Unique fraction of the first n entries of each row of top_ids (K, stride). */
double datm_topic_diversity(const int32_t *top_ids, int64_t K, int stride, int n);

/* Settings of a topic set's coherence; recorded beside the values. */
typedef struct datm_coh_opts {
    unsigned measures;     /* bits (1 << datm_coh_measure); NPMI is always added */
    int      top_n;        /* words per topic, >= 2 (DATM_NPMI_TOP_N) */
    int64_t  window;       /* 0: boolean document; >= 1: boolean sliding window */
} datm_coh_opts;
void datm_coh_opts_default(datm_coh_opts *o);   /* npmi, top 10, documents */

/* The reference corpus: documents as counts (window 0 only) or as token sequences (any
 * window); its vocabulary must be the topics'. */
typedef struct datm_coh_ref {
    const datm_csr     *X;      /* or NULL */
    const datm_tokdocs *T;      /* or NULL; used when set */
} datm_coh_ref;

/* Fills every layer's per-topic scores and means (all topics, and live ones when the
 * unused flags are set) for the measures of o, and the diversity (top n_div words). */
int datm_topic_set_coherence_ref(datm_topic_set *s, const datm_coh_ref *ref,
                                 const datm_coh_opts *o, int n_div, datm_error *err);
/* Recomputes every layer's score_mean and score_live (after the unused flags change). */
void datm_topic_set_summarise(datm_topic_set *s);
/* NPMI only over the documents of X (kept for callers of the first version). */
int datm_topic_set_coherence(datm_topic_set *s, const datm_csr *X, int n_npmi, int n_div,
                             datm_error *err);

#endif
