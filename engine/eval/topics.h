/* engine/eval/topics.h: readable topics of a deep model.
 *
 * Paper eq. (Phi_notation): a topic of layer l is shown on the vocabulary through
 * Phi(1) Phi(2) ... Phi(l), whose column k is the layer-l topic projected to words; since
 * every Phi(t) has columns on the simplex, so does the product. The strongest links between
 * layers are the largest entries of each column of Phi(l): the layer-(l-1) topics that topic
 * k of layer l draws on most.
 *
 * Dimension letters: V words (= K_0), K_l topics of layer l, n top entries kept. Matrices are
 * row-major; phi[l-1] is Phi(l) with shape (K_{l-1}, K_l). */
#ifndef DATM_TOPICS_H
#define DATM_TOPICS_H

#include <stdint.h>

#include "core/core.h"

/* out (k[0], k[layer]) = Phi(1) ... Phi(layer); k has n_layers + 1 entries (k[0] = V).
 * Accumulates in double. layer is 1-based, 1 <= layer <= n_layers. */
int datm_topics_project(int n_layers, const float *const *phi, const int64_t *k, int layer,
                        float *out, datm_error *err);

/* For each column c of m (rows, cols): ids[c * n + j] and w[c * n + j] hold the row index and
 * value of the j-th largest entry (descending; ties broken by the smaller row index).
 * n <= rows. w may be NULL. */
int datm_topics_top(const float *m, int64_t rows, int64_t cols, int n, int32_t *ids,
                    float *w, datm_error *err);

/* Everything `datm topics`, `datm report` and the results file show for one model. */
#define DATM_TOPIC_MEASURES 4   /* coherence measures (eval/coherence.h): npmi, uci, umass, cv */

typedef struct datm_topic_layer {
    int64_t  k;             /* K_l */
    int      top_n;         /* n words kept per topic */
    int32_t *top_ids;       /* (K_l, top_n) word ids */
    float   *top_weights;   /* (K_l, top_n) projected probabilities */
    int      link_n;        /* m children kept per topic (0 for layer 1) */
    int32_t *link_ids;      /* (K_l, link_n) topic ids in layer l-1 */
    float   *link_weights;  /* (K_l, link_n) Phi(l) entries */
    float   *projected;     /* (V, K_l) or NULL when not kept */
    /* coherence (eval/coherence.h), index = datm_coh_measure; score[0] is NPMI */
    double  *score[DATM_TOPIC_MEASURES];      /* (K_l) per topic, NULL when not computed */
    double   score_mean[DATM_TOPIC_MEASURES]; /* over topics with a value (NAN when none) */
    double   score_live[DATM_TOPIC_MEASURES]; /* over live topics with a value */
    const double *npmi;     /* = score[0] (not owned), NULL until computed */
    double   npmi_mean;     /* = score_mean[0] */
    double   diversity;     /* unique fraction of the top-25 words (NAN until computed) */
    /* diagnostics (eval/topic_diag.h) */
    double  *usage;         /* (K_l) share of the training tokens, NULL when unknown */
    double  *usage_theta;   /* (K_l) share of the training documents' theta mass, or NULL */
    uint8_t *unused;        /* (K_l) 1 = unused (usage < unused_share / K_l), NULL = unknown */
    int64_t  n_unused;      /* topics flagged unused (0 when unknown) */
    int32_t *nearest;       /* (K_l) most similar other topic of the layer, -1 when K_l = 1 */
    double  *nearest_cos;   /* (K_l) cosine of the two projected topics */
    double  *corpus_kl;     /* (K_l) KL(topic || corpus word distribution) in nats, or NULL */
} datm_topic_layer;

typedef struct datm_topic_set {
    int     n_layers;
    int64_t n_vocab;
    datm_topic_layer layer[DATM_MAX_LAYERS];   /* [l-1] for layer l */
    /* settings the values were computed with, recorded beside them */
    unsigned measures;      /* bits (1 << datm_coh_measure) of the scores present */
    int      coh_top_n;     /* words per topic scored (0: no coherence) */
    int64_t  coh_window;    /* 0: documents; else the sliding window */
    char     coh_reference[512];   /* "training documents" or the reference's path */
    double   unused_share;  /* the unused rule's factor */
    double   dup_cos;       /* near-duplicate threshold on nearest_cos */
} datm_topic_set;

/* Fills out from Phi(1..L): projected topics (kept when keep_projected), top_n words and
 * link_n links per topic, and every topic's nearest neighbour in its layer (cosine of the
 * projected topics). Scores are left NULL and diversity NAN (see coherence.h); usage unknown
 * (topic_diag.h). */
int  datm_topic_set_build(int n_layers, const float *const *phi, const int64_t *k, int top_n,
                          int link_n, int keep_projected, datm_topic_set *out,
                          datm_error *err);
void datm_topic_set_free(datm_topic_set *s);

#endif
