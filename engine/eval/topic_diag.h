/* engine/eval/topic_diag.h: per-topic diagnostics of a deep topic model, in the spirit of
 * MALLET's topic diagnostics: which topics are used, which repeat each other, which are
 * close to the corpus's own word frequencies.
 *
 * usage: the share of the training tokens a topic explains. Given theta(l), the expected
 *   Poisson rate of a document is Phi(1)...Phi(l) theta(l) (paper eq. 1: E[theta(l-1) |
 *   theta(l)] = Phi(l) theta(l), and Phi(1) theta(1) is the rate), so each token (n, v) is
 *   split over the layer-l topics in proportion to [Phi(1..l)]_vk theta(l)_kn and usage_k is
 *   topic k's share of all tokens (sum 1 over a layer). usage_theta_k is its share of the theta
 *   mass, sum_n theta_kn / sum_nk theta_kn. theta is the model's posterior mean (`infer`).
 * unused: usage_k < unused_share / K_l; with the default 0.1, a topic that explains less than
 *   a tenth of an equal share of the tokens. The rule looks for topics whose Phi column the
 *   data no longer shapes: on Brown at 64-32-16 (experiments/brown/whai.yaml) the layer-1
 *   topics under 0.1/K_l have diffuse columns (an effective vocabulary exp(entropy) of 600 to
 *   2,200 words, random top words) and those above it 200 to 500 words; a small real topic
 *   of one text can fall under it too (`datm topics --all` lists every topic).
 * nearest: the other topic of the same layer whose projected topic (a column of
 *   Phi(1)...Phi(l)) has the largest cosine with this one; a near-duplicate when the cosine
 *   is >= dup_cos (0.8 by default).
 * corpus_kl: KL(topic || p) = sum_v phi_vk log(phi_vk / p_v) in nats, p the reference
 *   corpus's word frequencies with half a count added to every word (so p_v > 0): small for a
 *   topic that only repeats the corpus's frequent words.
 * Children (layers >= 2) are the link_ids / link_weights of topics.h. */
#ifndef DATM_TOPIC_DIAG_H
#define DATM_TOPIC_DIAG_H

#include <stdint.h>

#include "core/core.h"
#include "data/csr.h"
#include "eval/topics.h"

#define DATM_UNUSED_SHARE 0.1
#define DATM_DUP_COSINE   0.8

/* Cosine between the columns of proj (V, K): nearest[k] = the other column with the largest
 * cosine (ties: smaller id; -1 when K = 1), cos[k] its value (NAN when K = 1). */
int datm_topics_nearest(const float *proj, int64_t V, int64_t K, int32_t *nearest, double *cos,
                        datm_error *err);

/* Token and theta-mass usage (above) of every layer's topics over the documents X (N, V):
 * theta[l-1] is theta(l) (N, K_l) of those documents, phi[l-1] is Phi(l), k[0] = V.
 * tokens[l-1] and mass[l-1] (K_l each) are filled (caller-allocated). */
int datm_topic_usage(const datm_csr *X, int n_layers, const float *const *phi,
                     const int64_t *k, const float *const *theta, double *const *tokens,
                     double *const *mass, datm_error *err);

/* Copies usage (and usage_theta, may be NULL) of layer l into s (K_l each) and sets the
 * unused flags by the rule with unused_share. */
int datm_topic_set_usage(datm_topic_set *s, int layer, const double *usage,
                         const double *usage_theta, double unused_share, datm_error *err);
/* Re-applies the unused rule with another factor (usage already set). */
void datm_topic_set_flag_unused(datm_topic_set *s, double unused_share);

/* corpus_kl of every layer: counts (V) are the reference's word totals. */
int datm_topic_set_corpus_kl(datm_topic_set *s, int n_layers, const float *const *phi,
                             const int64_t *k, const double *counts, datm_error *err);

/* Live (not unused) topics of layer t: 1 each, or all when usage is unknown. */
static inline int datm_topic_live(const datm_topic_layer *t, int64_t k)
{
    return !t->unused || !t->unused[k];
}

#endif
