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

/* The spec: the result's `spec` attribute (also in a bare result file), else the run's
 * spec.resolved.yaml; none is not an error (a record without a spec has no parameters and no
 * model to load). It is flattened for datm_param and parsed for the model; a parse error is
 * kept for datm_load, so the record of a run whose spec no longer loads still opens. */
static int read_spec(datm_trained *m, datm_h5 *f, datm_error *err)
{
    char src[1300];
    int rc = DATM_OK;
    if (datm_h5_attr_exists(f, DATM_ATTR_SPEC)) {
        char *text = NULL;
        rc = datm_h5_attr_get_str_alloc(f, DATM_ATTR_SPEC, &text, err);
        if (!rc && !(m->spec_text = strdup(text)))
            rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
        datm_free(text);
        snprintf(src, sizeof src, "%s@%s", m->result, DATM_ATTR_SPEC);
    } else {
        snprintf(src, sizeof src, "%s/%s", m->dir, DATM_RESULT_SPEC_FILE);
        FILE *probe = fopen(src, "r");
        if (!probe) return DATM_OK;
        fclose(probe);
        rc = read_text(src, &m->spec_text, err);
    }
    if (!rc) rc = datm_yaml_flatten(m->spec_text, src, &m->params, err);
    if (!rc) {
        const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
        m->spec_loaded = !datm_spec_load_text(m->spec_text, src, NULL, 0, &cat, &m->spec,
                                              &m->spec_err);
    }
    return rc;
}

/* Shapes (k), vocabulary, status, metrics, curves and the data set's directory. */
static int read_record(datm_trained *m, datm_h5 *f, datm_error *err)
{
    int L = datm_result_model_shape(f, m->k, err);
    if (L < 0) return err && err->code ? err->code : DATM_E_FORMAT;
    m->n_layers = L;
    int rc = datm_result_vocab(f, &m->vocab, &m->n_vocab, err);
    if (!rc && L == 0) m->k[0] = m->vocab ? m->n_vocab : 0;
    if (!rc && m->vocab && m->n_vocab != m->k[0])
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: %lld words in the vocabulary, %lld rows "
                            "in /%s/phi_1", m->result, (long long)m->n_vocab, (long long)m->k[0],
                            DATM_GRP_MODEL);
    snprintf(m->status, sizeof m->status, "UNKNOWN");
    if (!rc && datm_h5_attr_exists(f, DATM_ATTR_STATUS))
        rc = datm_h5_attr_get_str(f, DATM_ATTR_STATUS, m->status, sizeof m->status, err);
    if (!rc && datm_h5_attr_exists(f, "variant"))
        rc = datm_h5_attr_get_str(f, "variant", m->variant, sizeof m->variant, err);
    if (!rc) rc = datm_result_metrics_read(f, &m->metrics, err);
    if (!rc) rc = datm_result_curves_read(f, &m->curves, err);
    if (!rc && datm_h5_is_group(f, DATM_GRP_DATA) == 1) {
        datm_h5 *g = NULL;
        datm_error e2 = {0};
        if (!datm_h5_group(f, DATM_GRP_DATA, 0, &g, &e2) &&
            datm_h5_attr_exists(g, DATM_DATA_ATTR_DIR) &&
            datm_h5_attr_get_str(g, DATM_DATA_ATTR_DIR, m->data_dir, sizeof m->data_dir, &e2))
            m->data_dir[0] = '\0';
        datm_h5_close(&g);
    }
    return rc;
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
    }
    datm_h5 *f = NULL;
    if (!rc) rc = datm_h5_open(m->result, 0, &f, err);
    if (!rc) rc = read_record(m, f, err);
    if (!rc) rc = read_spec(m, f, err);
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
    datm_flat_free(&m->params);
    datm_h5_strings_free(m->vocab, m->n_vocab);
    datm_result_metrics_free(&m->metrics);
    datm_result_curves_free(&m->curves);
    datm_topic_set_free(&m->topics);
    free(m);
}

const char *datm_variant(const datm_trained *m)
{
    return m->spec_loaded ? m->spec.variant : m->variant;
}
const char *datm_run_state(const datm_trained *m) { return m->status; }
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

const char *datm_param_name(const datm_trained *m, int i)
{
    return i >= 0 && i < m->params.n ? m->params.kv[i].key : NULL;
}

const char *datm_param(const datm_trained *m, const char *key)
{
    return datm_flat_get(&m->params, key);
}

const double *datm_curve(const datm_trained *m, const char *name, int64_t *n_rows)
{
    const double *c = datm_result_curves_col(&m->curves, name);
    if (n_rows) *n_rows = c ? m->curves.n_rows : 0;
    return c;
}
