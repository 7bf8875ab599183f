/* engine/api/api_topics.c: the topic diagnostics of the public API (include/datm.h): usage,
 * unused flags, coherence, distance from the corpus, nearest topic (eval/topic_diag.h) and
 * the strongest children of each topic (eval/topics.h, paper eq. Phi_notation). The handle
 * holds one topic set: the run's /topics, read at first use (computed from /model with the
 * defaults when the run has none), or what datm_topics_evaluate recomputed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "eval/coherence.h"
#include "eval/topic_diag.h"
#include "io/results_layout.h"

/* Computes the set from Phi with coherence in reference (NULL: the training documents, and
 * when they cannot be read, no coherence, with a warning). */
static int compute(datm_trained *m, const char *reference, const datm_topics_opts *o,
                   datm_error *err)
{
    datm_h5 *f = NULL;
    int rc = datm_h5_open(m->result, 0, &f, err);
    if (rc) return rc;
    datm_topics_ref r;
    datm_error e2 = {0};
    const int have = datm_topics_reference_load(f, reference, &r, &e2) == DATM_OK;
    if (!have && reference) rc = datm_error_set(err, e2.code, "%s", e2.msg);
    if (!have && !reference) datm_log(DATM_LOG_WARN, "topics: no coherence (%s)", e2.msg);
    datm_topic_set ts;
    if (!rc) rc = datm_topics_compute_with(f, have ? &r.ref : NULL, r.name, o, &ts, err);
    if (have) datm_topics_reference_free(&r);
    datm_h5_close(&f);
    if (rc) return rc;
    datm_topic_set_free(&m->topics);
    m->topics = ts;
    m->topics_ready = 1;
    return DATM_OK;
}

int datm_topics_evaluate(datm_trained *m, const char *reference, const char *measures,
                         int top_n, int64_t window, datm_error *err)
{
    datm_topics_opts o;
    datm_topics_opts_default(&o);
    o.coh.measures = (1u << DATM_COH_COUNT_) - 1;
    if (measures) {
        int rc = datm_coh_parse_list(measures, &o.coh.measures, err);
        if (rc) return rc;
    }
    if (top_n >= 0) o.coh.top_n = top_n;
    if (window >= 0) o.coh.window = window;
    return compute(m, reference, &o, err);
}

int datm_api_topics_ready(datm_trained *m, datm_error *err)
{
    if (m->topics_ready) return DATM_OK;
    datm_h5 *f = NULL;
    int rc = datm_h5_open(m->result, 0, &f, err);
    if (rc) return rc;
    const int stored = datm_h5_is_group(f, DATM_GRP_TOPICS) == 1;
    if (stored) rc = datm_topics_read(f, &m->topics, err);
    datm_h5_close(&f);
    if (stored) {
        m->topics_ready = !rc;
        return rc;
    }
    return datm_topics_evaluate(m, NULL, NULL, -1, -1, err);
}

int datm_topics_flag_unused(datm_trained *m, double share, datm_error *err)
{
    if (!(share >= 0.0) || share > 1e6)
        return datm_error_set(err, DATM_E_INVALID, "unused share %g: expected a number >= 0",
                              share);
    int rc = datm_api_topics_ready(m, err);
    if (rc) return rc;
    datm_topic_set_flag_unused(&m->topics, share);
    datm_topic_set_summarise(&m->topics);
    return DATM_OK;
}

/* The index of a coherence measure's name, -1 when it is none. */
static int measure_of(const char *name, size_t len)
{
    for (int c = 0; c < DATM_COH_COUNT_; c++)
        if (strlen(datm_coh_name(c)) == len && !strncmp(name, datm_coh_name(c), len)) return c;
    return -1;
}

static int layer_of(datm_trained *m, int layer, int lowest, datm_topic_layer **t, datm_error *err)
{
    int rc = datm_api_topics_ready(m, err);
    if (rc) return rc;
    if (layer < lowest || layer > m->topics.n_layers)
        return datm_error_set(err, DATM_E_INVALID, "layer %d: the topics of %s have layers "
                              "%d..%d", layer, m->dir, lowest, m->topics.n_layers);
    *t = layer ? &m->topics.layer[layer - 1] : NULL;
    return DATM_OK;
}

static int absent(int layer, const char *name, datm_error *err)
{
    datm_error_set(err, DATM_E_UNSUPPORTED, "layer %d has no %s (not computed for this run)",
                   layer, name);
    return -1;
}

int datm_topic_stat(datm_trained *m, int layer, const char *name, double *out, datm_error *err)
{
    datm_topic_layer *t = NULL;
    int rc = layer_of(m, layer, 1, &t, err);
    if (rc) return rc;
    const int c = measure_of(name, strlen(name));
    const int unused = !strcmp(name, "unused"), nearest = !strcmp(name, "nearest");
    const double *d = c >= 0                    ? t->score[c]
                      : !strcmp(name, "use")    ? t->usage
                      : !strcmp(name, "kl")     ? t->corpus_kl
                      : !strcmp(name, "cosine") ? t->nearest_cos : NULL;
    if (c < 0 && !unused && !nearest && strcmp(name, "use") && strcmp(name, "kl") &&
        strcmp(name, "cosine"))
        return datm_error_set(err, DATM_E_INVALID, "topic statistic '%s': expected use, "
                              "unused, npmi, uci, umass, cv, kl, nearest or cosine", name);
    if (!d && !(unused && t->unused) && !(nearest && t->nearest)) return absent(layer, name, err);
    for (int64_t k = 0; k < t->k; k++)
        out[k] = d ? d[k] : unused ? (double)t->unused[k] : (double)t->nearest[k];
    return DATM_OK;
}

int datm_layer_stat(datm_trained *m, int layer, const char *name, double *value, datm_error *err)
{
    datm_topic_layer *t = NULL;
    int rc = layer_of(m, layer, 0, &t, err);
    if (rc) return rc;
    const datm_topic_set *s = &m->topics;
    const size_t n = strlen(name);
    const int live = n > 5 && !strcmp(name + n - 5, "_live");
    const int c = measure_of(name, live ? n - 5 : n);
    if (!t) {   /* the settings */
        if (c >= 0 && !live) {
            *value = 1.0;
            return s->measures & (1u << c) ? DATM_OK : absent(0, name, err);
        }
        if (!strcmp(name, "unused_share")) *value = s->unused_share;
        else if (!strcmp(name, "dup_cos")) *value = s->dup_cos;
        else if (!strcmp(name, "top_n")) *value = s->coh_top_n;
        else if (!strcmp(name, "window")) *value = (double)s->coh_window;
        else return datm_error_set(err, DATM_E_INVALID, "setting '%s': expected unused_share, "
                                   "dup_cos, top_n, window or a coherence measure", name);
        return DATM_OK;
    }
    if (c >= 0) {
        if (!t->score[c]) return absent(layer, name, err);
        *value = live ? t->score_live[c] : t->score_mean[c];
    } else if (!strcmp(name, "unused")) {
        if (!t->usage) return absent(layer, "usage", err);
        *value = (double)t->n_unused;
    } else if (!strcmp(name, "diversity")) {
        *value = t->diversity;
    } else {
        return datm_error_set(err, DATM_E_INVALID, "layer statistic '%s': expected a coherence "
                              "measure (npmi, uci, umass, cv, each also _live), unused or "
                              "diversity", name);
    }
    return DATM_OK;
}

const char *datm_topics_reference(datm_trained *m)
{
    if (datm_api_topics_ready(m, NULL) || !m->topics.measures) return NULL;
    return m->topics.coh_reference;
}

int datm_top_children(const datm_trained *m, int layer, int n, int32_t *ids, float *w,
                      datm_error *err)
{
    if (layer < 2 || layer > m->n_layers)
        return datm_error_set(err, DATM_E_INVALID, "children of layer %d: the model of %s has "
                              "layers 1..%d, children from layer 2", layer, m->dir, m->n_layers);
    const int64_t rows = m->k[layer - 1], cols = m->k[layer];
    if (n < 1 || n > rows)
        return datm_error_set(err, DATM_E_INVALID, "children: n = %d, expected 1..%lld", n,
                              (long long)rows);
    float *phi = malloc((size_t)(rows * cols) * sizeof *phi);
    if (!phi) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int rc = datm_phi(m, layer, phi, err);
    if (!rc) rc = datm_topics_top(phi, rows, cols, n, ids, w, err);
    free(phi);
    return rc;
}
