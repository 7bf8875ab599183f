/* engine/eval/coherence.h: topic quality beyond perplexity (ECOSYSTEM.md B4), per layer.
 *
 * NPMI coherence with document co-occurrence: over the N documents of a reference corpus
 * (the training set), P(w) = D(w)/N and P(w_i, w_j) = D(w_i, w_j)/N where D counts the
 * documents containing the word(s). For a topic with top words W (the first n_npmi, default
 * 10), the score is the mean over pairs i < j of
 *   NPMI = log[(P(w_i,w_j) + eps) / (P(w_i) P(w_j))] / -log(P(w_i,w_j) + eps),  eps = 1e-12,
 * in [-1, 1] (1 when the pair occurs in every document, where the ratio is 0/0). Pairs with a
 * word that occurs in no document are left out (their P(w) = 0 makes the ratio undefined);
 * a topic with no scorable pair gets NAN. The layer score is the mean over topics.
 *
 * Topic diversity: |union of the top-n words of all K topics| / (n K), n = 25 by default. */
#ifndef DATM_COHERENCE_H
#define DATM_COHERENCE_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "eval/topics.h"

#define DATM_NPMI_TOP_N      10
#define DATM_NPMI_EPS        1e-12
#define DATM_DIVERSITY_TOP_N 25

/* Document-occurrence bitsets of a set of words, built once from the reference corpus. */
typedef struct datm_doc_index {
    int64_t   n_docs;     /* N */
    int64_t   n_vocab;    /* V */
    int64_t   n_words;    /* words indexed */
    int64_t   n_blocks;   /* 64-bit blocks per word: ceil(N / 64) */
    int32_t  *slot;       /* (V) slot of each word in bits, -1 when not indexed */
    uint64_t *bits;       /* (n_words, n_blocks) bit d set when document d contains the word */
    int64_t  *df;         /* (n_words) document frequency D(w) */
} datm_doc_index;

/* Indexes the given words (duplicates and ids outside [0, V) ignored; ids < 0 skipped). */
int  datm_doc_index_build(const datm_csr *X, const int32_t *words, int64_t n_words,
                          datm_doc_index *out, datm_error *err);
void datm_doc_index_free(datm_doc_index *ix);
int64_t datm_doc_index_df(const datm_doc_index *ix, int32_t w);              /* -1: not indexed */
int64_t datm_doc_index_co(const datm_doc_index *ix, int32_t a, int32_t b);   /* -1: not indexed */

/* NPMI of one word pair from counts (see the formula above); NAN when d_a or d_b is 0. */
double datm_npmi_pair(int64_t d_ab, int64_t d_a, int64_t d_b, int64_t n_docs, double eps);

/* Per-topic NPMI: top_ids (K, stride), the first n words of each row are scored.
 * npmi (K) receives the per-topic scores; returns the mean over finite ones in *mean. */
int datm_npmi_topics(const datm_doc_index *ix, const int32_t *top_ids, int64_t K, int stride,
                     int n, double eps, double *npmi, double *mean, datm_error *err);

/* Unique fraction of the first n entries of each row of top_ids (K, stride). */
double datm_topic_diversity(const int32_t *top_ids, int64_t K, int stride, int n);

/* Fills npmi/npmi_mean (first n_npmi words) and diversity (first n_div words) of every layer
 * of s using the reference corpus X (its columns must match the vocabulary). */
int datm_topic_set_coherence(datm_topic_set *s, const datm_csr *X, int n_npmi, int n_div,
                             datm_error *err);

#endif
