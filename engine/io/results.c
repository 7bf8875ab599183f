/* engine/io/results.c: reading result.h5 (metrics, curves, vocabulary, model shapes) and
 * writing/reading the /topics group, with the names of results_layout.h. */
#include "io/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/coherence.h"
#include "eval/topic_diag.h"
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
    for (int l = 1; l <= DATM_MAX_LAYERS; l++) {
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
    return isnan(v) ? DATM_OK : datm_h5_write_scalar(f, full, v, err);
}

/* "npmi,cv" for the measures in mask */
static void measure_list(unsigned mask, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int m = 0; m < DATM_COH_COUNT_ && o + 1 < size; m++)
        if (mask & (1u << m))
            o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? "," : "", datm_coh_name(m));
}

static int write_settings(datm_h5 *top, const datm_topic_set *s, datm_error *err)
{
    char ms[64];
    measure_list(s->measures, ms, sizeof ms);
    int rc = datm_h5_attr_i64(top, DATM_TOPICS_ATTR_LAYERS, s->n_layers, err);
    if (!rc) rc = datm_h5_attr_i64(top, DATM_TOPICS_ATTR_TOP_N, s->n_layers ? s->layer[0].top_n : 0, err);
    if (!rc) rc = datm_h5_attr_i64(top, "n_vocab", s->n_vocab, err);
    if (!rc) rc = datm_h5_attr_str(top, DATM_TOPICS_ATTR_MEASURES, ms, err);
    if (!rc) rc = datm_h5_attr_i64(top, DATM_TOPICS_ATTR_COH_TOP_N, s->coh_top_n, err);
    if (!rc) rc = datm_h5_attr_i64(top, DATM_TOPICS_ATTR_WINDOW, s->coh_window, err);
    if (!rc) rc = datm_h5_attr_str(top, DATM_TOPICS_ATTR_REFERENCE, s->coh_reference, err);
    if (!rc) rc = datm_h5_attr_f64(top, DATM_TOPICS_ATTR_UNUSED_SHARE, s->unused_share, err);
    if (!rc) rc = datm_h5_attr_f64(top, DATM_TOPICS_ATTR_DUP_COS, s->dup_cos, err);
    return rc;
}

/* Per-topic scores of every measure, with their means as attributes and metrics. */
static int write_scores(datm_h5 *f, datm_h5 *g, const datm_topic_layer *t, int l, datm_error *err)
{
    int rc = DATM_OK;
    const int64_t d[1] = {t->k};
    for (int m = 0; m < DATM_COH_COUNT_ && !rc; m++) {
        if (!t->score[m]) continue;
        const char *name = datm_coh_name(m);
        char attr[48], met[48];
        rc = datm_h5_write_f64(g, name, t->score[m], 1, d, err);
        if (!rc) rc = datm_h5_attr_f64(g, name, t->score_mean[m], err);
        snprintf(attr, sizeof attr, "%s_live", name);
        if (!rc) rc = datm_h5_attr_f64(g, attr, t->score_live[m], err);
        snprintf(met, sizeof met, "%s_%%d", name);   /* npmi_<l> keeps its meaning: all topics */
        if (!rc) rc = write_metric_l(f, met, l, t->score_mean[m], err);
        snprintf(met, sizeof met, "%s_live_%%d", name);
        if (!rc) rc = write_metric_l(f, met, l, t->score_live[m], err);
    }
    return rc;
}

static int write_diagnostics(datm_h5 *f, datm_h5 *g, const datm_topic_layer *t, int l,
                             datm_error *err)
{
    const int64_t d[1] = {t->k};
    int rc = DATM_OK;
    if (t->usage) {
        int32_t *u = datm_alloc_array((size_t)t->k + 1, sizeof *u, err);
        if (!u) return DATM_E_NOMEM;
        for (int64_t k = 0; k < t->k; k++) u[k] = t->unused ? t->unused[k] : 0;
        rc = datm_h5_write_f64(g, DATM_TOPICS_USAGE, t->usage, 1, d, err);
        if (!rc) rc = datm_h5_write_i32(g, DATM_TOPICS_UNUSED, u, 1, d, err);
        if (!rc) rc = datm_h5_attr_i64(g, DATM_TOPICS_ATTR_N_UNUSED, t->n_unused, err);
        if (!rc) rc = write_metric_l(f, DATM_MET_UNUSED_FMT, l, (double)t->n_unused, err);
        datm_free(u);
    }
    if (!rc && t->usage_theta) rc = datm_h5_write_f64(g, DATM_TOPICS_USAGE_THETA, t->usage_theta, 1, d, err);
    if (!rc && t->nearest) rc = datm_h5_write_i32(g, DATM_TOPICS_NEAREST, t->nearest, 1, d, err);
    if (!rc && t->nearest_cos) rc = datm_h5_write_f64(g, DATM_TOPICS_NEAREST_COS, t->nearest_cos, 1, d, err);
    if (!rc && t->corpus_kl) rc = datm_h5_write_f64(g, DATM_TOPICS_CORPUS_KL, t->corpus_kl, 1, d, err);
    return rc;
}

int datm_topics_write(datm_h5 *f, const datm_topic_set *s, datm_error *err)
{
    int rc = datm_h5_delete(f, DATM_GRP_TOPICS, err);   /* replace a previous set whole */
    datm_h5 *top = NULL;
    if (!rc) rc = datm_h5_group(f, DATM_GRP_TOPICS, 1, &top, err);
    if (!rc) rc = write_settings(top, s, err);
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
        if (!rc) rc = write_scores(f, g, t, l, err);
        if (!rc) rc = write_diagnostics(f, g, t, l, err);
        if (!rc && !isnan(t->diversity)) {
            rc = datm_h5_attr_f64(g, DATM_TOPICS_ATTR_DIVERSITY, t->diversity, err);
            if (!rc) rc = write_metric_l(f, DATM_MET_DIVERSITY_FMT, l, t->diversity, err);
        }
        datm_h5_close(&g);
    }
    return rc;
}

/* Reads the 1-D dataset `name` of K entries under g into a new array, when present with that
 * shape (else leaves *out NULL). */
static int read_vec_f64(datm_h5 *g, const char *name, int64_t K, double **out, datm_error *err)
{
    int64_t d[DATM_H5_MAX_RANK];
    if (datm_h5_shape(g, name, d) != 1 || d[0] != K) return DATM_OK;
    *out = datm_alloc_array((size_t)K + 1, sizeof **out, err);
    if (!*out) return DATM_E_NOMEM;
    return datm_h5_read_f64(g, name, *out, 1, d, err);
}

static int read_vec_i32(datm_h5 *g, const char *name, int64_t K, int32_t **out, datm_error *err)
{
    int64_t d[DATM_H5_MAX_RANK];
    if (datm_h5_shape(g, name, d) != 1 || d[0] != K) return DATM_OK;
    *out = datm_alloc_array((size_t)K + 1, sizeof **out, err);
    if (!*out) return DATM_E_NOMEM;
    return datm_h5_read_i32(g, name, *out, 1, d, err);
}

static int read_settings(datm_h5 *top, datm_topic_set *out, datm_error *err)
{
    int rc = DATM_OK;
    if (datm_h5_attr_exists(top, DATM_TOPICS_ATTR_MEASURES)) {
        char ms[128] = "";
        rc = datm_h5_attr_get_str(top, DATM_TOPICS_ATTR_MEASURES, ms, sizeof ms, err);
        if (!rc && ms[0]) rc = datm_coh_parse_list(ms, &out->measures, err);
    }
    int64_t v = 0;
    if (!rc && datm_h5_attr_exists(top, DATM_TOPICS_ATTR_COH_TOP_N)) {
        rc = datm_h5_attr_get_i64(top, DATM_TOPICS_ATTR_COH_TOP_N, &v, err);
        out->coh_top_n = (int)v;
    }
    if (!rc && datm_h5_attr_exists(top, DATM_TOPICS_ATTR_WINDOW))
        rc = datm_h5_attr_get_i64(top, DATM_TOPICS_ATTR_WINDOW, &out->coh_window, err);
    if (!rc && datm_h5_attr_exists(top, DATM_TOPICS_ATTR_REFERENCE))
        rc = datm_h5_attr_get_str(top, DATM_TOPICS_ATTR_REFERENCE, out->coh_reference,
                                  sizeof out->coh_reference, err);
    if (!rc && datm_h5_attr_exists(top, DATM_TOPICS_ATTR_UNUSED_SHARE))
        rc = datm_h5_attr_get_f64(top, DATM_TOPICS_ATTR_UNUSED_SHARE, &out->unused_share, err);
    if (!rc && datm_h5_attr_exists(top, DATM_TOPICS_ATTR_DUP_COS))
        rc = datm_h5_attr_get_f64(top, DATM_TOPICS_ATTR_DUP_COS, &out->dup_cos, err);
    return rc;
}

static int read_layer(datm_h5 *g, datm_topic_layer *t, int64_t *n_vocab, datm_error *err)
{
    int64_t d[DATM_H5_MAX_RANK];
    if (datm_h5_shape(g, DATM_TOPICS_TOP_IDS, d) != 2)
        return datm_error_set(err, DATM_E_FORMAT, "%s/%s: missing or not 2-D", datm_h5_where(g),
                              DATM_TOPICS_TOP_IDS);
    t->k = d[0];
    t->top_n = (int)d[1];
    t->top_ids = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->top_ids, err);
    t->top_weights = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->top_weights, err);
    if (!t->top_ids || !t->top_weights) return DATM_E_NOMEM;
    int rc = datm_h5_read_i32(g, DATM_TOPICS_TOP_IDS, t->top_ids, 2, d, err);
    if (!rc) rc = datm_h5_read_f32(g, DATM_TOPICS_TOP_WEIGHTS, t->top_weights, 2, d, err);
    if (!rc && datm_h5_shape(g, DATM_TOPICS_LINK_IDS, d) == 2) {
        t->link_n = (int)d[1];
        t->link_ids = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->link_ids, err);
        t->link_weights = datm_alloc_array((size_t)(d[0] * d[1]) + 1, sizeof *t->link_weights, err);
        if (!t->link_ids || !t->link_weights) return DATM_E_NOMEM;
        rc = datm_h5_read_i32(g, DATM_TOPICS_LINK_IDS, t->link_ids, 2, d, err);
        if (!rc) rc = datm_h5_read_f32(g, DATM_TOPICS_LINK_WEIGHTS, t->link_weights, 2, d, err);
    }
    if (!rc && datm_h5_shape(g, DATM_TOPICS_PROJECTED, d) == 2 && d[1] == t->k) {
        if (!*n_vocab) *n_vocab = d[0];
        t->projected = datm_alloc_array((size_t)(d[0] * d[1]), sizeof *t->projected, err);
        if (!t->projected) return DATM_E_NOMEM;
        rc = datm_h5_read_f32(g, DATM_TOPICS_PROJECTED, t->projected, 2, d, err);
    }
    for (int m = 0; m < DATM_COH_COUNT_ && !rc; m++) {
        const char *name = datm_coh_name(m);
        char attr[48];
        rc = read_vec_f64(g, name, t->k, &t->score[m], err);
        if (!rc && datm_h5_attr_exists(g, name)) rc = datm_h5_attr_get_f64(g, name, &t->score_mean[m], err);
        snprintf(attr, sizeof attr, "%s_live", name);
        if (!rc && datm_h5_attr_exists(g, attr)) rc = datm_h5_attr_get_f64(g, attr, &t->score_live[m], err);
    }
    if (!rc && datm_h5_attr_exists(g, DATM_TOPICS_ATTR_DIVERSITY))
        rc = datm_h5_attr_get_f64(g, DATM_TOPICS_ATTR_DIVERSITY, &t->diversity, err);
    if (!rc) rc = read_vec_f64(g, DATM_TOPICS_USAGE, t->k, &t->usage, err);
    if (!rc) rc = read_vec_f64(g, DATM_TOPICS_USAGE_THETA, t->k, &t->usage_theta, err);
    int32_t *unused = NULL;
    if (!rc) rc = read_vec_i32(g, DATM_TOPICS_UNUSED, t->k, &unused, err);
    if (!rc && unused && t->usage) {
        t->unused = datm_alloc_array((size_t)t->k + 1, sizeof *t->unused, err);
        if (!t->unused) rc = DATM_E_NOMEM;
        for (int64_t k = 0; !rc && k < t->k; k++) {
            t->unused[k] = unused[k] != 0;
            t->n_unused += t->unused[k];
        }
    }
    datm_free(unused);
    if (!rc) rc = read_vec_i32(g, DATM_TOPICS_NEAREST, t->k, &t->nearest, err);
    if (!rc) rc = read_vec_f64(g, DATM_TOPICS_NEAREST_COS, t->k, &t->nearest_cos, err);
    if (!rc) rc = read_vec_f64(g, DATM_TOPICS_CORPUS_KL, t->k, &t->corpus_kl, err);
    return rc;
}

int datm_topics_read(datm_h5 *f, datm_topic_set *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    datm_h5 *top = NULL;
    int rc = datm_h5_group(f, DATM_GRP_TOPICS, 0, &top, err);
    if (rc) return rc;
    int64_t L = 0, V = 0;
    out->unused_share = DATM_UNUSED_SHARE;
    out->dup_cos = DATM_DUP_COSINE;
    rc = datm_h5_attr_get_i64(top, DATM_TOPICS_ATTR_LAYERS, &L, err);
    if (!rc && datm_h5_attr_exists(top, "n_vocab")) rc = datm_h5_attr_get_i64(top, "n_vocab", &V, err);
    if (!rc) rc = read_settings(top, out, err);
    datm_h5_close(&top);
    if (rc) return rc;
    if (L < 1 || L > DATM_MAX_LAYERS)
        return datm_error_set(err, DATM_E_FORMAT, "%s: /%s has %lld layers",
                              datm_h5_where(f), DATM_GRP_TOPICS, (long long)L);
    out->n_layers = (int)L;
    out->n_vocab = V;
    for (int l = 1; l <= L && !rc; l++) {
        datm_topic_layer *t = &out->layer[l - 1];
        for (int m = 0; m < DATM_TOPIC_MEASURES; m++) t->score_mean[m] = t->score_live[m] = NAN;
        t->diversity = NAN;
        char gname[64];
        layer_name(gname, sizeof gname, l);
        datm_h5 *g = NULL;
        rc = datm_h5_group(f, gname, 0, &g, err);
        if (rc) break;
        rc = read_layer(g, t, &out->n_vocab, err);
        datm_h5_close(&g);
    }
    /* files written before the measures were recorded: the scores present say which */
    if (!rc && !out->measures)
        for (int m = 0; m < DATM_COH_COUNT_; m++)
            if (out->layer[0].score[m]) out->measures |= 1u << m;
    if (!rc && out->measures && !out->coh_top_n) out->coh_top_n = DATM_NPMI_TOP_N;
    for (int l = 0; !rc && l < out->n_layers; l++) {
        out->layer[l].npmi = out->layer[l].score[0];
        out->layer[l].npmi_mean = out->layer[l].score_mean[0];
    }
    if (rc) datm_topic_set_free(out);
    return rc;
}

int datm_usage_write(datm_h5 *f, int n_layers, const int64_t *k, const double *const *tokens,
                     const double *const *mass, int64_t n_docs, datm_error *err)
{
    int rc = datm_h5_delete(f, DATM_GRP_USAGE, err);
    datm_h5 *g = NULL;
    if (!rc) rc = datm_h5_group(f, DATM_GRP_USAGE, 1, &g, err);
    if (!rc) rc = datm_h5_attr_i64(g, DATM_USAGE_ATTR_DOCS, n_docs, err);
    for (int l = 1; l <= n_layers && !rc; l++) {
        char name[32];
        const int64_t d[1] = {k[l]};
        snprintf(name, sizeof name, DATM_USAGE_TOKENS_FMT, l);
        rc = datm_h5_write_f64(g, name, tokens[l - 1], 1, d, err);
        snprintf(name, sizeof name, DATM_USAGE_THETA_FMT, l);
        if (!rc) rc = datm_h5_write_f64(g, name, mass[l - 1], 1, d, err);
    }
    datm_h5_close(&g);
    return rc;
}

/* /usage of the run into s (when present and shaped like the model). */
static int read_usage(datm_h5 *f, datm_topic_set *s, double unused_share, datm_error *err)
{
    if (datm_h5_is_group(f, DATM_GRP_USAGE) != 1) return DATM_OK;
    datm_h5 *g = NULL;
    int rc = datm_h5_group(f, DATM_GRP_USAGE, 0, &g, err);
    for (int l = 1; l <= s->n_layers && !rc; l++) {
        char name[32];
        double *tok = NULL, *mass = NULL;
        snprintf(name, sizeof name, DATM_USAGE_TOKENS_FMT, l);
        rc = read_vec_f64(g, name, s->layer[l - 1].k, &tok, err);
        snprintf(name, sizeof name, DATM_USAGE_THETA_FMT, l);
        if (!rc) rc = read_vec_f64(g, name, s->layer[l - 1].k, &mass, err);
        if (!rc && tok) rc = datm_topic_set_usage(s, l, tok, mass, unused_share, err);
        datm_free(tok);
        datm_free(mass);
    }
    datm_h5_close(&g);
    return rc;
}

/* Word totals (V) of the reference: column sums of X, or token counts of T. */
static double *reference_counts(const datm_coh_ref *ref, int64_t V, datm_error *err)
{
    double *c = datm_alloc_array((size_t)V + 1, sizeof *c, err);
    if (!c) return NULL;
    if (ref->T) {
        const int64_t T = ref->T->doc_ptr[ref->T->n_docs];
        for (int64_t i = 0; i < T; i++)
            if (ref->T->tok[i] >= 0 && ref->T->tok[i] < V) c[ref->T->tok[i]] += 1;
    } else if (ref->X) {
        for (int64_t p = 0; p < ref->X->nnz; p++)
            if (ref->X->col[p] < V) c[ref->X->col[p]] += ref->X->val[p];
    }
    return c;
}

int datm_topics_compute_with(datm_h5 *f, const datm_coh_ref *ref, const char *ref_name,
                             const datm_topics_opts *o, datm_topic_set *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t k[DATM_MAX_LAYERS + 1];
    const int L = datm_result_model_shape(f, k, err);
    if (L < 1)
        return datm_error_set(err, DATM_E_FORMAT, "%s: no /%s/phi_1 (the model's topics)",
                              datm_h5_where(f), DATM_GRP_MODEL);
    float *phi[DATM_MAX_LAYERS] = {0};
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
    const float *const *cphi = (const float *const *)phi;
    if (!rc)
        rc = datm_topic_set_build(L, cphi, k, DATM_DIVERSITY_TOP_N, 5, keep, out, err);
    if (!rc) {
        out->dup_cos = o->dup_cos;
        rc = read_usage(f, out, o->unused_share, err);
    }
    if (!rc && ref && (ref->X || ref->T)) {
        snprintf(out->coh_reference, sizeof out->coh_reference, "%s",
                 ref_name ? ref_name : "training documents");
        double *counts = reference_counts(ref, k[0], err);
        if (!counts) rc = DATM_E_NOMEM;
        if (!rc) rc = datm_topic_set_corpus_kl(out, L, cphi, k, counts, err);
        datm_free(counts);
        if (!rc) rc = datm_topic_set_coherence_ref(out, ref, &o->coh, DATM_DIVERSITY_TOP_N, err);
    } else if (!rc) {
        for (int l = 0; l < L; l++)
            out->layer[l].diversity = datm_topic_diversity(out->layer[l].top_ids, out->layer[l].k,
                                                           out->layer[l].top_n,
                                                           DATM_MIN(DATM_DIVERSITY_TOP_N, out->layer[l].top_n));
    }
    for (int l = 0; l < L; l++) datm_free(phi[l]);
    if (rc) datm_topic_set_free(out);
    return rc;
}

void datm_topics_opts_default(datm_topics_opts *o)
{
    datm_coh_opts_default(&o->coh);
    o->unused_share = DATM_UNUSED_SHARE;
    o->dup_cos = DATM_DUP_COSINE;
}

int datm_topics_compute(datm_h5 *f, const datm_csr *reference, datm_topic_set *out,
                        datm_error *err)
{
    datm_topics_opts o;
    datm_topics_opts_default(&o);
    datm_coh_ref ref = {reference, NULL};
    return datm_topics_compute_with(f, &ref, NULL, &o, out, err);
}
