/* engine/api/api_model.c: the trained-model half of the public API (include/datm.h): open a
 * run, read its structure, topics and metrics. What is read at open is small (shapes,
 * vocabulary, metrics, the resolved spec's text); Phi is read from the file on each call, and
 * the model itself is created and loaded only for inference (api_infer.c). */
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "eval/topics.h"
#include "io/results_layout.h"

int datm_api_version(void) { return DATM_API_VERSION; }

static int read_text(const char *path, char **out, datm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return datm_error_set(err, DATM_E_IO, "%s: cannot open", path);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *b = realloc(buf, cap);
            if (!b) { free(buf); fclose(f); return datm_error_set(err, DATM_E_NOMEM, "out of memory"); }
            buf = b;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); return datm_error_set(err, DATM_E_IO, "%s: read error", path); }
    buf[n] = '\0';
    *out = buf;
    return DATM_OK;
}

int datm_open(const char *run, datm_trained **out, datm_error *err)
{
    *out = NULL;
    if (!run) return datm_error_set(err, DATM_E_INVALID, "datm_open: no run given");
    datm_trained *m = calloc(1, sizeof *m);
    if (!m) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int rc = datm_result_path(run, m->result, sizeof m->result, err);
    if (!rc) {
        /* the run's directory holds spec.resolved.yaml beside result.h5 */
        snprintf(m->dir, sizeof m->dir, "%s", m->result);
        char *slash = strrchr(m->dir, '/');
        if (slash) *slash = '\0';
        else snprintf(m->dir, sizeof m->dir, ".");
        char spec[1300];
        snprintf(spec, sizeof spec, "%s/%s", m->dir, DATM_RESULT_SPEC_FILE);
        rc = read_text(spec, &m->spec_text, err);
        if (!rc) {
            const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
            rc = datm_spec_load(spec, NULL, 0, &cat, &m->spec, err);
            m->spec_loaded = !rc;
        }
    }
    datm_h5 *f = NULL;
    if (!rc) rc = datm_h5_open(m->result, 0, &f, err);
    if (!rc) {
        int L = datm_result_model_shape(f, m->k, err);
        if (L < 0) rc = err && err->code ? err->code : DATM_E_FORMAT;
        else if (L == 0)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s: no /%s/phi_1 (not a trained run?)",
                                m->result, DATM_GRP_MODEL);
        m->n_layers = L;
    }
    if (!rc) rc = datm_result_vocab(f, &m->vocab, &m->n_vocab, err);
    if (!rc && m->vocab && m->n_vocab != m->k[0])
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: %lld words in the vocabulary, %lld rows "
                            "in /%s/phi_1", m->result, (long long)m->n_vocab, (long long)m->k[0],
                            DATM_GRP_MODEL);
    if (!rc) rc = datm_result_metrics_read(f, &m->metrics, err);
    if (!rc && datm_h5_is_group(f, DATM_GRP_DATA) == 1) {
        datm_h5 *g = NULL;
        datm_error e2 = {0};
        if (!datm_h5_group(f, DATM_GRP_DATA, 0, &g, &e2) &&
            datm_h5_attr_exists(g, DATM_DATA_ATTR_DIR) &&
            datm_h5_attr_get_str(g, DATM_DATA_ATTR_DIR, m->data_dir, sizeof m->data_dir, &e2))
            m->data_dir[0] = '\0';
        datm_h5_close(&g);
    }
    datm_h5_close(&f);
    if (rc) {
        datm_close(m);
        return rc;
    }
    *out = m;
    return DATM_OK;
}

void datm_close(datm_trained *m)
{
    if (!m) return;
    if (m->model) m->model->ops->destroy(m->model);
    if (m->spec_loaded) datm_spec_free(&m->spec);
    free(m->spec_text);
    datm_h5_strings_free(m->vocab, m->n_vocab);
    datm_result_metrics_free(&m->metrics);
    free(m);
}

const char *datm_variant(const datm_trained *m) { return m->spec.variant; }
const char *datm_spec_text(const datm_trained *m) { return m->spec_text; }
const char *datm_data_dir(const datm_trained *m) { return m->data_dir[0] ? m->data_dir : NULL; }
int datm_layers(const datm_trained *m) { return m->n_layers; }
int64_t datm_vocab_size(const datm_trained *m) { return m->k[0]; }

int64_t datm_topics(const datm_trained *m, int layer)
{
    return layer >= 1 && layer <= m->n_layers ? m->k[layer] : 0;
}

const char *datm_word(const datm_trained *m, int64_t v)
{
    return m->vocab && v >= 0 && v < m->n_vocab ? m->vocab[v] : NULL;
}

static int check_layer(const datm_trained *m, int layer, datm_error *err)
{
    if (layer < 1 || layer > m->n_layers)
        return datm_error_set(err, DATM_E_INVALID, "layer %d: the model of %s has layers 1..%d",
                              layer, m->dir, m->n_layers);
    return DATM_OK;
}

/* Phi(1) .. Phi(upto), each (K_{l-1}, K_l), read from the result file (caller frees). */
static int read_phis(const datm_trained *m, int upto, float **phi, datm_error *err)
{
    datm_h5 *f = NULL, *g = NULL;
    int rc = datm_h5_open(m->result, 0, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_MODEL, 0, &g, err);
    for (int l = 1; l <= upto && !rc; l++) {
        const int64_t dims[2] = {m->k[l - 1], m->k[l]};
        phi[l - 1] = malloc((size_t)(dims[0] * dims[1]) * sizeof(float));
        if (!phi[l - 1]) { rc = datm_error_set(err, DATM_E_NOMEM, "out of memory"); break; }
        char name[32];
        snprintf(name, sizeof name, DATM_MODEL_PHI_FMT, l);
        rc = datm_h5_read_f32(g, name, phi[l - 1], 2, dims, err);
    }
    datm_h5_close(&g);
    datm_h5_close(&f);
    return rc;
}

static void free_phis(float **phi, int n)
{
    for (int l = 0; l < n; l++) free(phi[l]);
}

int datm_phi(const datm_trained *m, int layer, float *out, datm_error *err)
{
    int rc = check_layer(m, layer, err);
    if (rc) return rc;
    datm_h5 *f = NULL, *g = NULL;
    rc = datm_h5_open(m->result, 0, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_MODEL, 0, &g, err);
    if (!rc) {
        const int64_t dims[2] = {m->k[layer - 1], m->k[layer]};
        char name[32];
        snprintf(name, sizeof name, DATM_MODEL_PHI_FMT, layer);
        rc = datm_h5_read_f32(g, name, out, 2, dims, err);
    }
    datm_h5_close(&g);
    datm_h5_close(&f);
    return rc;
}

int datm_topic_words(const datm_trained *m, int layer, float *out, datm_error *err)
{
    int rc = check_layer(m, layer, err);
    if (rc) return rc;
    float *phi[DATM_MAX_LAYERS] = {0};
    rc = read_phis(m, layer, phi, err);
    if (!rc)
        rc = datm_topics_project(m->n_layers, (const float *const *)phi, m->k, layer, out, err);
    free_phis(phi, layer);
    return rc;
}

int datm_top_words(const datm_trained *m, int layer, int n, int32_t *ids, float *w,
                   datm_error *err)
{
    int rc = check_layer(m, layer, err);
    if (rc) return rc;
    if (n < 1 || n > m->k[0])
        return datm_error_set(err, DATM_E_INVALID, "top words: n = %d, expected 1..%lld", n,
                              (long long)m->k[0]);
    float *tw = malloc((size_t)(m->k[0] * m->k[layer]) * sizeof *tw);
    if (!tw) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    rc = datm_topic_words(m, layer, tw, err);
    if (!rc) rc = datm_topics_top(tw, m->k[0], m->k[layer], n, ids, w, err);
    free(tw);
    return rc;
}

int datm_metric_count(const datm_trained *m) { return (int)m->metrics.n; }

const char *datm_metric_name(const datm_trained *m, int i)
{
    return i >= 0 && i < m->metrics.n ? m->metrics.names[i] : NULL;
}

int datm_metric(const datm_trained *m, const char *name, double *value)
{
    return datm_result_metrics_get(&m->metrics, name, value);
}
