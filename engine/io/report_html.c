/* engine/io/report_html.c: the data of `datm report` (report_html.h) as one JSON object
 * embedded in the page of report_page.c. Reads result.h5 only: root attributes, /metrics,
 * /curves, /sample_curve, the vocabulary and /topics (or topics built from /model). */
#include "io/report_html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/topic_diag.h"
#include "io/results.h"
#include "io/results_layout.h"
#include "io/yaml_flat.h"

typedef struct sbuf {
    char  *p;
    size_t n, cap;
    int    oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->n + n + 1) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) { b->oom = 1; return; }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { sb_put(b, tmp, (size_t)n); return; }
    char *big = malloc((size_t)n + 1);
    if (!big) { b->oom = 1; return; }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)n);
    free(big);
}

/* A JSON string; '<', '>' and '&' as \u escapes so that no text can end the script element. */
static void json_str(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        const unsigned c = *p;
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; sb_put(b, e, 2); }
        else if (c == '\n') sb_put(b, "\\n", 2);
        else if (c == '\t') sb_put(b, "\\t", 2);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&') sb_printf(b, "\\u%04x", c);
        else sb_put(b, (const char *)p, 1);
    }
    sb_put(b, "\"", 1);
}

static void json_num(sbuf *b, double x)
{
    if (isfinite(x)) sb_printf(b, "%.9g", x);
    else sb_put(b, "null", 4);
}

static void json_array(sbuf *b, const double *x, int64_t n)
{
    sb_put(b, "[", 1);
    for (int64_t i = 0; i < n; i++) {
        if (i) sb_put(b, ",", 1);
        json_num(b, x[i]);
    }
    sb_put(b, "]", 1);
}

/* "key": value pairs of the root attributes and the spec's main keys */
static void json_meta(sbuf *b, datm_h5 *f, const char *run)
{
    static const char *const attrs[] = {DATM_ATTR_STATUS, DATM_ATTR_VERSION, DATM_ATTR_GIT_COMMIT,
                                        DATM_ATTR_CREATED, DATM_ATTR_FINISHED, DATM_ATTR_SPEC_HASH,
                                        DATM_ATTR_HOST, DATM_ATTR_BLAS};
    sb_put(b, "\"run\":", 6);
    json_str(b, run);
    for (size_t i = 0; i < DATM_COUNTOF(attrs); i++) {
        char v[1024] = "";
        datm_error e = {0};
        if (!datm_h5_attr_exists(f, attrs[i]) || datm_h5_attr_get_str(f, attrs[i], v, sizeof v, &e))
            continue;
        sb_printf(b, ",\"%s\":", attrs[i]);
        json_str(b, v);
    }
    char *spec = NULL;
    datm_error e = {0};
    if (datm_h5_attr_exists(f, DATM_ATTR_SPEC) && !datm_h5_attr_get_str_alloc(f, DATM_ATTR_SPEC, &spec, &e)) {
        sb_put(b, ",\"spec\":", 8);
        json_str(b, spec);
        datm_flat fl = {0};
        if (!datm_yaml_flatten(spec, "spec", &fl, &e)) {
            static const char *const keys[] = {"name", "model.variant", "model.layers", "data.dataset"};
            for (size_t i = 0; i < DATM_COUNTOF(keys); i++) {
                const char *v = datm_flat_get(&fl, keys[i]);
                if (!v) continue;
                sb_printf(b, ",\"%s\":", keys[i]);
                json_str(b, v);
            }
            datm_flat_free(&fl);
        }
        datm_free(spec);
    }
}

static int json_metrics(sbuf *b, datm_h5 *f, datm_error *err)
{
    datm_result_metrics m;
    int rc = datm_result_metrics_read(f, &m, err);
    if (rc) return rc;
    sb_put(b, ",\"metrics\":[", 12);
    for (int64_t i = 0; i < m.n; i++) {
        sb_printf(b, "%s[", i ? "," : "");
        json_str(b, m.names[i]);
        sb_put(b, ",", 1);
        json_num(b, m.values[i]);
        sb_put(b, "]", 1);
    }
    sb_put(b, "]", 1);
    datm_result_metrics_free(&m);
    return DATM_OK;
}

static int json_columns(sbuf *b, datm_h5 *f, const char *group, const char *key, datm_error *err)
{
    datm_result_curves c;
    int rc = datm_result_columns_read(f, group, &c, err);
    if (rc) return rc;
    sb_printf(b, ",\"%s\":{", key);
    for (int i = 0; i < c.n_cols; i++) {
        if (i) sb_put(b, ",", 1);
        json_str(b, c.names[i]);
        sb_put(b, ":", 1);
        json_array(b, c.cols[i], c.n_rows);
    }
    sb_put(b, "}", 1);
    datm_result_curves_free(&c);
    return DATM_OK;
}

static void json_topic(sbuf *b, const datm_topic_set *ts, const datm_topic_layer *t, int64_t k,
                       char **vocab, int64_t V)
{
    sb_printf(b, "{\"id\":%lld,\"words\":[", (long long)k);
    for (int j = 0; j < t->top_n; j++) {
        const int32_t w = t->top_ids[k * t->top_n + j];
        if (j) sb_put(b, ",", 1);
        if (vocab && w >= 0 && w < V) json_str(b, vocab[w]);
        else sb_printf(b, "\"w%d\"", w);
    }
    sb_put(b, "],\"weights\":[", 13);
    for (int j = 0; j < t->top_n; j++) {
        if (j) sb_put(b, ",", 1);
        json_num(b, t->top_weights[k * t->top_n + j]);
    }
    sb_put(b, "],\"scores\":{", 12);
    int first = 1;
    for (int m = 0; m < DATM_COH_COUNT_; m++) {
        if (!t->score[m]) continue;
        sb_printf(b, "%s\"%s\":", first ? "" : ",", datm_coh_name(m));
        json_num(b, t->score[m][k]);
        first = 0;
    }
    sb_put(b, "}", 1);
    sb_put(b, ",\"usage\":", 9);
    json_num(b, t->usage ? t->usage[k] : NAN);
    sb_printf(b, ",\"unused\":%s", t->unused && t->unused[k] ? "true" : "false");
    sb_put(b, ",\"kl\":", 6);
    json_num(b, t->corpus_kl ? t->corpus_kl[k] : NAN);
    sb_printf(b, ",\"nearest\":%d,\"nearest_cos\":", t->nearest ? t->nearest[k] : -1);
    json_num(b, t->nearest_cos ? t->nearest_cos[k] : NAN);
    sb_put(b, ",\"children\":[", 13);
    for (int j = 0; j < t->link_n; j++) {
        sb_printf(b, "%s[%d,", j ? "," : "", t->link_ids[k * t->link_n + j]);
        json_num(b, t->link_weights[k * t->link_n + j]);
        sb_put(b, "]", 1);
    }
    sb_put(b, "]}", 2);
    (void)ts;
}

static void json_topics(sbuf *b, const datm_topic_set *ts, char **vocab, int64_t V)
{
    sb_put(b, ",\"settings\":{\"measures\":[", 25);
    int first = 1;
    for (int m = 0; m < DATM_COH_COUNT_; m++)
        if (ts->measures & (1u << m)) { sb_printf(b, "%s\"%s\"", first ? "" : ",", datm_coh_name(m)); first = 0; }
    sb_printf(b, "],\"top_n\":%d,\"window\":%lld,\"reference\":", ts->coh_top_n,
              (long long)ts->coh_window);
    json_str(b, ts->coh_reference);
    sb_put(b, ",\"unused_share\":", 16);
    json_num(b, ts->unused_share);
    sb_put(b, ",\"dup_cos\":", 11);
    json_num(b, ts->dup_cos);
    sb_put(b, "},\"layers\":[", 12);
    for (int l = 0; l < ts->n_layers; l++) {
        const datm_topic_layer *t = &ts->layer[l];
        sb_printf(b, "%s{\"layer\":%d,\"k\":%lld,\"n_unused\":%lld,\"usage_known\":%s,\"diversity\":",
                  l ? "," : "", l + 1, (long long)t->k, (long long)t->n_unused,
                  t->usage ? "true" : "false");
        json_num(b, t->diversity);
        sb_put(b, ",\"mean\":{", 9);
        first = 1;
        for (int m = 0; m < DATM_COH_COUNT_; m++) {
            if (!t->score[m]) continue;
            sb_printf(b, "%s\"%s\":[", first ? "" : ",", datm_coh_name(m));
            json_num(b, t->score_mean[m]);
            sb_put(b, ",", 1);
            json_num(b, t->score_live[m]);
            sb_put(b, "]", 1);
            first = 0;
        }
        sb_put(b, "},\"topics\":[", 12);
        for (int64_t k = 0; k < t->k; k++) {
            if (k) sb_put(b, ",", 1);
            json_topic(b, ts, t, k, vocab, V);
        }
        sb_put(b, "]}", 2);
    }
    sb_put(b, "]", 1);
}

/* The JSON object of the run into b. */
static int build_json(const char *run, sbuf *b, datm_error *err)
{
    datm_h5 *f = NULL;
    int rc = datm_result_open(run, 0, &f, err);
    if (rc) return rc;
    sb_put(b, "{", 1);
    json_meta(b, f, run);
    rc = json_metrics(b, f, err);
    if (!rc) rc = json_columns(b, f, DATM_GRP_CURVES, "curves", err);
    if (!rc) rc = json_columns(b, f, DATM_GRP_SAMPLE_CURVE, "sample_curve", err);
    if (!rc) {
        datm_topic_set ts;
        int have = 0;
        if (datm_h5_is_group(f, DATM_GRP_TOPICS) == 1) {
            rc = datm_topics_read(f, &ts, err);
            have = !rc;
        } else {
            int64_t k[DATM_MAX_LAYERS + 1];
            datm_error e2 = {0};
            if (datm_result_model_shape(f, k, &e2) >= 1) {
                datm_topics_opts o;
                datm_topics_opts_default(&o);
                rc = datm_topics_compute_with(f, NULL, NULL, &o, &ts, err);
                have = !rc;
            }
        }
        if (have) {
            char **vocab = NULL;
            int64_t V = 0;
            datm_error e2 = {0};
            if (datm_result_vocab(f, &vocab, &V, &e2)) vocab = NULL;
            json_topics(b, &ts, vocab, V);
            datm_h5_strings_free(vocab, V);
            datm_topic_set_free(&ts);
        }
    }
    sb_put(b, "}", 1);
    datm_h5_close(&f);
    if (!rc && b->oom) rc = datm_error_set(err, DATM_E_NOMEM, "report: out of memory");
    return rc;
}

int datm_report_html_write(const char *run, const char *out_path, datm_error *err)
{
    sbuf b = {0};
    int rc = build_json(run, &b, err);
    if (rc) { free(b.p); return rc; }
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        free(b.p);
        return datm_error_set(err, DATM_E_IO, "%s: cannot write", tmp);
    }
    int ok = fputs(datm_report_page_head, fp) >= 0 && fwrite(b.p, 1, b.n, fp) == b.n &&
             fputs(datm_report_page_tail, fp) >= 0;
    ok = (fclose(fp) == 0) && ok;
    free(b.p);
    if (!ok) {
        remove(tmp);
        return datm_error_set(err, DATM_E_IO, "%s: write failed", tmp);
    }
    if (rename(tmp, out_path) != 0) {
        remove(tmp);
        return datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s", tmp, out_path);
    }
    return DATM_OK;
}
