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

#define DATM_TOPICS_MAX_LAYERS 8   /* = DATM_MAX_LAYERS of pipeline/model.h */

/* Everything `datm topics` and the results file show for one model. */
typedef struct datm_topic_layer {
    int64_t  k;             /* K_l */
    int      top_n;         /* n words kept per topic */
    int32_t *top_ids;       /* (K_l, top_n) word ids */
    float   *top_weights;   /* (K_l, top_n) projected probabilities */
    int      link_n;        /* m children kept per topic (0 for layer 1) */
    int32_t *link_ids;      /* (K_l, link_n) topic ids in layer l-1 */
    float   *link_weights;  /* (K_l, link_n) Phi(l) entries */
    float   *projected;     /* (V, K_l) or NULL when not kept */
    double  *npmi;          /* (K_l) per-topic NPMI, NULL until computed */
    double   npmi_mean;     /* mean over topics with a finite value (NAN when none) */
    double   diversity;     /* unique fraction of the top-25 words (NAN until computed) */
} datm_topic_layer;

typedef struct datm_topic_set {
    int     n_layers;
    int64_t n_vocab;
    datm_topic_layer layer[DATM_TOPICS_MAX_LAYERS];   /* [l-1] for layer l */
} datm_topic_set;

/* Fills out from Phi(1..L): projected topics (kept when keep_projected), top_n words and
 * link_n links per topic. npmi is left NULL and diversity NAN (see coherence.h). */
int  datm_topic_set_build(int n_layers, const float *const *phi, const int64_t *k, int top_n,
                          int link_n, int keep_projected, datm_topic_set *out,
                          datm_error *err);
void datm_topic_set_free(datm_topic_set *s);

#endif
