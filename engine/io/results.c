/* engine/io/results.c: reading result.h5 (metrics, curves, vocabulary, model shapes) and
 * writing/reading the /topics group, with the names of results_layout.h. */
#include "io/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/coherence.h"
#include "io/results_layout.h"

int datm_result_path(const char *run, char *path, size_t size, datm_error *err)
{
    struct stat sb;
    if (stat(run, &sb) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: no such run directory or result file", run);
    if (S_ISREG(sb.st_mode)) { snprintf(path, size, "%s", run); return DATM_OK; }
    snprintf(path, size, "%s/%s", run, DATM_RESULT_FILE);
    if (stat(path, &sb) == 0) return DATM_OK;
    snprintf(path, size, "%s/%s.part", run, DATM_RESULT_FILE);
    if (stat(path, &sb) == 0) return DATM_OK;
    return datm_error_set(err, DATM_E_IO, "%s: no %s in this run directory", run,
                          DATM_RESULT_FILE);
}

int datm_result_open(const char *run, int writable, datm_h5 **out, datm_error *err)
{
    char path[1024];
    *out = NULL;
    int rc = datm_result_path(run, path, sizeof path, err);
    if (rc) return rc;
    return datm_h5_open(path, writable, out, err);
}

/* ---- metrics ---- */

void datm_result_metrics_free(datm_result_metrics *m)
{
    if (!m) return;
    datm_h5_strings_free(m->names, m->n);
    datm_free(m->values);
    memset(m, 0, sizeof *m);
}

int datm_result_metrics_read(datm_h5 *f, datm_result_metrics *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    if (datm_h5_is_group(f, DATM_GRP_METRICS) != 1) return DATM_OK;
    datm_h5 *g = NULL;
    int rc = datm_h5_group(f, DATM_GRP_METRICS, 0, &g, err);
    if (rc) return rc;
    char **names = NULL;
    int64_t n = 0;
    rc = datm_h5_list(g, &names, &n, err);
    if (rc) { datm_h5_close(&g); return rc; }
    out->names = calloc((size_t)n + 1, sizeof *out->names);
    out->values = datm_alloc_array((size_t)n + 1, sizeof *out->values, err);
    if (!out->names || !out->values) rc = DATM_E_NOMEM;
    for (int64_t i = 0; i < n && !rc; i++) {
        int64_t dims[DATM_H5_MAX_RANK];
        int r = datm_h5_shape(g, names[i], dims);
        int64_t cnt = 1;
        for (int j = 0; j < r; j++) cnt *= dims[j];
        if (r < 0 || cnt != 1) continue;   /* only scalars are metrics */
        double v;
        rc = datm_h5_read_scalar(g, names[i], &v, err);
        if (rc) break;
        out->names[out->n] = names[i];
        names[i] = NULL;
        out->values[out->n++] = v;
    }
    datm_h5_strings_free(names, n);
    datm_h5_close(&g);
    if (rc) datm_result_metrics_free(out);
    return rc;
}

int datm_result_metrics_get(const datm_result_metrics *m, const char *name, double *v)
{
    for (int64_t i = 0; i < m->n; i++)
        if (!strcmp(m->names[i], name)) { *v = m->values[i]; return 0; }
    return -1;
}

/* ---- curves ---- */

void datm_result_curves_free(datm_result_curves *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_cols; i++) datm_free(c->cols ? c->cols[i] : NULL);
    datm_h5_strings_free(c->names, c->n_cols);
    free(c->cols);
    memset(c, 0, sizeof *c);
}

int datm_result_curves_read(datm_h5 *f, datm_result_curves *out, datm_error *err)
{
    return datm_result_columns_read(f, DATM_GRP_CURVES, out, err);
}

int datm_result_columns_read(datm_h5 *f, const char *group, datm_result_curves *out,
                             datm_error *err)
{
    memset(out, 0, sizeof *out);
    if (datm_h5_is_group(f, group) != 1) return DATM_OK;
    datm_h5 *g = NULL;
    int rc = datm_h5_group(f, group, 0, &g, err);
    if (rc) return rc;
    char **names = NULL;
    int64_t n = 0;
    rc = datm_h5_list(g, &names, &n, err);
    if (rc) { datm_h5_close(&g); return rc; }
    out->names = calloc((size_t)n + 1, sizeof *out->names);
    out->cols = calloc((size_t)n + 1, sizeof *out->cols);
    if (!out->names || !out->cols) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    out->n_rows = -1;
    for (int64_t i = 0; i < n && !rc; i++) {
        int64_t dims[DATM_H5_MAX_RANK];
        if (datm_h5_shape(g, names[i], dims) != 1) continue;   /* curves are 1-D */
        if (out->n_rows >= 0 && dims[0] != out->n_rows) {
            rc = datm_error_set(err, DATM_E_FORMAT,
                                "%s/%s: %lld rows, other curves have %lld", datm_h5_where(g),
                                names[i], (long long)dims[0], (long long)out->n_rows);
            break;
        }
        out->n_rows = dims[0];
        double *x = datm_alloc_array((size_t)dims[0] + 1, sizeof *x, err);
        if (!x) { rc = DATM_E_NOMEM; break; }
        rc = datm_h5_read_f64(g, names[i], x, 1, dims, err);
        if (rc) { datm_free(x); break; }
        out->cols[out->n_cols] = x;
        out->names[out->n_cols++] = names[i];
        names[i] = NULL;
    }
    if (out->n_rows < 0) out->n_rows = 0;
    datm_h5_strings_free(names, n);
    datm_h5_close(&g);
    if (rc) datm_result_curves_free(out);
    return rc;
}

const double *datm_result_curves_col(const datm_result_curves *c, const char *name)
{
    for (int i = 0; i < c->n_cols; i++)
        if (!strcmp(c->names[i], name)) return c->cols[i];
    return NULL;
}

/* ---- vocabulary and model ---- */

int datm_result_vocab(datm_h5 *f, char ***vocab, int64_t *n, datm_error *err)
{
    *vocab = NULL;
    *n = 0;
    char name[64];
    snprintf(name, sizeof name, "%s/%s", DATM_GRP_DATA, DATM_DATA_VOCAB);
    if (datm_h5_shape(f, name, NULL) == 1) return datm_h5_read_strings(f, name, vocab, n, err);
    if (datm_h5_is_group(f, DATM_GRP_DATA) != 1) return DATM_OK;
    datm_h5 *g = NULL;
    int rc = datm_h5_group(f, DATM_GRP_DATA, 0, &g, err);
    if (rc) return rc;
    char dir[1024] = "";
    if (datm_h5_attr_exists(g, DATM_DATA_ATTR_DIR))
        datm_h5_attr_get_str(g, DATM_DATA_ATTR_DIR, dir, sizeof dir, err);
    datm_h5_close(&g);
    if (!dir[0]) return DATM_OK;
    char path[1100];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    FILE *fp = fopen(path, "r");
    if (!fp) return DATM_OK;
    int64_t cap = 1024, cnt = 0;
    char **v = malloc((size_t)cap * sizeof *v);
    char line[4096];
    while (v && fgets(line, sizeof line, fp)) {
        size_t L = strcspn(line, "\r\n");
        line[L] = '\0';
        if (cnt == cap) {
            char **nv = realloc(v, (size_t)(cap *= 2) * sizeof *nv);
            if (!nv) break;
            v = nv;
        }
        v[cnt] = strdup(line);
        if (!v[cnt]) break;
        cnt++;
    }
    fclose(fp);
    if (!v) return datm_error_set(err, DATM_E_NOMEM, "out of memory reading %s", path);
    *vocab = v;
    *n = cnt;
    return DATM_OK;
}

int datm_result_model_shape(datm_h5 *f, int64_t *k, datm_error *err)
{
    (void)err;
    int L = 0;
    for (int l = 1; l <= DATM_TOPICS_MAX_LAYERS; l++) {
        char name[64], fmt[32];
        snprintf(fmt, sizeof fmt, "%%s/%s", DATM_MODEL_PHI_FMT);
        snprintf(name, sizeof name, fmt, DATM_GRP_MODEL, l);
        int64_t dims[DATM_H5_MAX_RANK];
        if (datm_h5_shape(f, name, dims) != 2) break;
        if (l == 1) k[0] = dims[0];
        else if (dims[0] != k[l - 1]) break;   /* not a chain: stop at the last consistent layer */
        k[l] = dims[1];
        L = l;
    }
    return L;
}

/* ---- /topics ---- */

static void layer_name(char *buf, size_t size, int l)
{
    char fmt[48];
    snprintf(fmt, sizeof fmt, "%s/%s", DATM_GRP_TOPICS, DATM_TOPICS_LAYER_FMT);
    snprintf(buf, size, fmt, l);
}

static int write_metric_l(datm_h5 *f, const char *fmt, int l, double v, datm_error *err)
{
    char name[64], full[80];
    snprintf(name, sizeof name, fmt, l);
    snprintf(full, sizeof full, "%s/%s", DATM_GRP_METRICS, name);
    return datm_h5_write_scalar(f, full, v, err);
}

int datm_topics_write(datm_h5 *f, const datm_topic_set *s, datm_error *err)
{
    int rc = datm_h5_delete(f, DATM_GRP_TOPICS, err);   /* replace a previous set whole */
    datm_h5 *top = NULL;
    if (!rc) rc = datm_h5_group(f, DATM_GRP_TOPICS, 1, &top, err);
    if (!rc) rc = datm_h5_attr_i64(top, DATM_TOPICS_ATTR_LAYERS, s->n_layers, err);
    if (!rc) rc = datm_h5_attr_i64(top, DATM_TOPICS_ATTR_TOP_N, s->n_layers ? s->layer[0].top_n : 0, err);
    if (!rc) rc = datm_h5_attr_i64(top, "n_vocab", s->n_vocab, err);
    datm_h5_close(&top);
    for (int l = 1; l <= s->n_layers && !rc; l++) {
        const datm_topic_layer *t = &s->layer[l - 1];
        char gname[64];
        layer_name(gname, sizeof gname, l);
        datm_h5 *g = NULL;
        rc = datm_h5_group(f, gname, 1, &g, err);
        if (rc) break;
        int64_t d[2] = {t->k, t->top_n};
        rc = datm_h5_write_i32(g, DATM_TOPICS_TOP_IDS, t->top_ids, 2, d, err);
        if (!rc) rc = datm_h5_write_f32(g, DATM_TOPICS_TOP_WEIGHTS, t->top_weights, 2, d, err);
        if (!rc && t->link_n > 0) {
            int64_t dl[2] = {t->k, t->link_n};
            rc = datm_h5_write_i32(g, DATM_TOPICS_LINK_IDS, t->link_ids, 2, dl, err);
            if (!rc) rc = datm_h5_write_f32(g, DATM_TOPICS_LINK_WEIGHTS, t->link_weights, 2, dl, err);
        }
        if (!rc && t->projected) {
            int64_t dp[2] = {s->n_vocab, t->k};
            rc = datm_h5_write_f32(g, DATM_TOPICS_PROJECTED, t->projected, 2, dp, err);
        }
        if (!rc && t->npmi) {
            int64_t dn[1] = {t->k};
            rc = datm_h5_write_f64(g, DATM_TOPICS_NPMI, t->npmi, 1, dn, err);
            if (!rc) rc = datm_h5_attr_f64(g, DATM_TOPICS_ATTR_NPMI, t->npmi_mean, err);
            if (!rc) rc = write_metric_l(f, DATM_MET_NPMI_FMT, l, t->npmi_mean, err);
        }
        if (!rc && !isnan(t->diversity)) {
            rc = datm_h5_attr_f64(g, DATM_TOPICS_ATTR_DIVERSITY, t->diversity, err);
            if (!rc) rc = write_metric_l(f, DATM_MET_DIVERSITY_FMT, l, t->diversity, err);
        }
        datm_h5_close(&g);
    }
    return rc;
}

int datm_topics_read(datm_h5 *f, datm_topic_set *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    datm_h5 *top = NULL;
    int rc = datm_h5_group(f, DATM_GRP_TOPICS, 0, &top, err);
    if (rc) return rc;
    int64_t L = 0, V = 0;
    rc = datm_h5_attr_get_i64(top, DATM_TOPICS_ATTR_LAYERS, &L, err);
    if (!rc && datm_h5_attr_exists(top, "n_vocab")) rc = datm_h5_attr_get_i64(top, "n_vocab", &V, err);
    datm_h5_close(&top);
    if (rc) return rc;
    if (L < 1 || L > DATM_TOPICS_MAX_LAYERS)
        return datm_error_set(err, DATM_E_FORMAT, "%s: /%s has %lld layers",
                              datm_h5_where(f), DATM_GRP_TOPICS, (long long)L);
    out->n_layers = (int)L;
    out->n_vocab = V;
    for (int l = 1; l <= L && !rc; l++) {
        datm_topic_layer *t = &out->layer[l - 1];
        t->npmi_mean = NAN;
        t->diversity = NAN;
        char gname[64];
        layer_name(gname, sizeof gname, l);
        datm_h5 *g = NULL;
        rc = datm_h5_group(f, gname, 0, &g, err);
        if (rc) break;
        int64_t d[DATM_H5_MAX_RANK];
        if (datm_h5_shape(g, DATM_TOPICS_TOP_IDS, d) != 2) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s/%s: missing or not 2-D",
                                datm_h5_where(g), DATM_TOPICS_TOP_IDS);
            datm_h5_close(&g);
            break;
        }
        t->k = d[0];
        t->top_n = (int)d[1];
        t->top_ids = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->top_ids, err);
        t->top_weights = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->top_weights, err);
        if (!t->top_ids || !t->top_weights) rc = DATM_E_NOMEM;
        if (!rc) rc = datm_h5_read_i32(g, DATM_TOPICS_TOP_IDS, t->top_ids, 2, d, err);
        if (!rc) rc = datm_h5_read_f32(g, DATM_TOPICS_TOP_WEIGHTS, t->top_weights, 2, d, err);
        if (!rc && datm_h5_shape(g, DATM_TOPICS_LINK_IDS, d) == 2) {
            t->link_n = (int)d[1];
            t->link_ids = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->link_ids, err);
            t->link_weights = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->link_weights, err);
            if (!t->link_ids || !t->link_weights) rc = DATM_E_NOMEM;
            if (!rc) rc = datm_h5_read_i32(g, DATM_TOPICS_LINK_IDS, t->link_ids, 2, d, err);
            if (!rc) rc = datm_h5_read_f32(g, DATM_TOPICS_LINK_WEIGHTS, t->link_weights, 2, d, err);
        }
        if (!rc && datm_h5_shape(g, DATM_TOPICS_PROJECTED, d) == 2 && d[1] == t->k) {
            if (!out->n_vocab) out->n_vocab = d[0];
            t->projected = datm_alloc_array((size_t)(d[0] * d[1]), sizeof *t->projected, err);
            if (!t->projected) rc = DATM_E_NOMEM;
            else rc = datm_h5_read_f32(g, DATM_TOPICS_PROJECTED, t->projected, 2, d, err);
        }
        if (!rc && datm_h5_shape(g, DATM_TOPICS_NPMI, d) == 1 && d[0] == t->k) {
            t->npmi = datm_alloc_array((size_t)t->k + 1, sizeof *t->npmi, err);
            if (!t->npmi) rc = DATM_E_NOMEM;
            else rc = datm_h5_read_f64(g, DATM_TOPICS_NPMI, t->npmi, 1, d, err);
        }
        if (!rc && datm_h5_attr_exists(g, DATM_TOPICS_ATTR_NPMI))
            rc = datm_h5_attr_get_f64(g, DATM_TOPICS_ATTR_NPMI, &t->npmi_mean, err);
        if (!rc && datm_h5_attr_exists(g, DATM_TOPICS_ATTR_DIVERSITY))
            rc = datm_h5_attr_get_f64(g, DATM_TOPICS_ATTR_DIVERSITY, &t->diversity, err);
        datm_h5_close(&g);
    }
    if (rc) datm_topic_set_free(out);
    return rc;
}

int datm_topics_compute(datm_h5 *f, const datm_csr *reference, datm_topic_set *out,
                        datm_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t k[DATM_TOPICS_MAX_LAYERS + 1];
    const int L = datm_result_model_shape(f, k, err);
    if (L < 1)
        return datm_error_set(err, DATM_E_FORMAT, "%s: no /%s/phi_1 (the model's topics)",
                              datm_h5_where(f), DATM_GRP_MODEL);
    float *phi[DATM_TOPICS_MAX_LAYERS] = {0};
    int rc = DATM_OK;
    int keep = 1;
    for (int l = 1; l <= L && !rc; l++) {
        char name[64], fmt[32];
        snprintf(fmt, sizeof fmt, "%%s/%s", DATM_MODEL_PHI_FMT);
        snprintf(name, sizeof name, fmt, DATM_GRP_MODEL, l);
        int64_t d[2] = {k[l - 1], k[l]};
        phi[l - 1] = datm_alloc_array((size_t)(d[0] * d[1]), sizeof *phi[l - 1], err);
        if (!phi[l - 1]) { rc = DATM_E_NOMEM; break; }
        rc = datm_h5_read_f32(f, name, phi[l - 1], 2, d, err);
        if (k[0] * k[l] > ((int64_t)1 << 22)) keep = 0;   /* keep projections when small */
    }
    if (!rc)
        rc = datm_topic_set_build(L, (const float *const *)phi, k, DATM_DIVERSITY_TOP_N, 5,
                                  keep, out, err);
    for (int l = 0; l < L; l++) datm_free(phi[l]);
    if (!rc && reference)
        rc = datm_topic_set_coherence(out, reference, DATM_NPMI_TOP_N, DATM_DIVERSITY_TOP_N, err);
    else if (!rc)
        for (int l = 0; l < L; l++)
            out->layer[l].diversity = datm_topic_diversity(out->layer[l].top_ids, out->layer[l].k,
                                                           out->layer[l].top_n,
                                                           DATM_MIN(DATM_DIVERSITY_TOP_N, out->layer[l].top_n));
    if (rc) datm_topic_set_free(out);
    return rc;
}
