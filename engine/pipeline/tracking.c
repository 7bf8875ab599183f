/* engine/pipeline/tracking.c: metrics.json and params.yaml beside a finished run's result.h5,
 * in the flat forms experiment trackers read without a converter (`dvc metrics diff`,
 * `dvc params diff`, MLflow's log_metrics/log_params):
 *
 *   metrics.json   {"perplexity": 2399.46, "train_s": 6.6, ...}: every scalar of /metrics,
 *                  in name order; a NaN is null
 *   params.yaml    one line per setting of the resolved spec, its dotted path as the key:
 *                  "model.layers: [64, 32, 16]", "train.epochs: 30", "variant: whai" ... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/results.h"
#include "pipeline/pipeline.h"
#include "io/yamltree.h"

static void json_key(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int write_metrics(const char *dir, const char *result, datm_error *err)
{
    datm_h5 *h = NULL;
    datm_result_metrics m = {0};
    int rc = datm_h5_open(result, 0, &h, err);
    if (!rc) rc = datm_result_metrics_read(h, &m, err);
    datm_h5_close(&h);
    char path[1300];
    snprintf(path, sizeof path, "%.1200s/metrics.json", dir);
    datm_afile a;
    if (!rc) rc = datm_afile_open(&a, path, err);
    if (rc) {
        datm_result_metrics_free(&m);
        return rc;
    }
    fputc('{', a.f);
    for (int64_t i = 0; i < m.n; i++) {
        fputs(i ? ",\n  " : "\n  ", a.f);
        json_key(a.f, m.names[i]);
        if (isfinite(m.values[i])) fprintf(a.f, ": %.17g", m.values[i]);
        else fputs(": null", a.f);
    }
    fputs(m.n ? "\n}\n" : "}\n", a.f);
    datm_result_metrics_free(&m);
    return datm_afile_commit(&a, err);
}

/* One "path: value" line per leaf; sequences of scalars in flow form. */
static int flatten(FILE *f, const datm_ynode *n, const char *path, datm_error *err)
{
    if (n->kind == DATM_Y_MAP) {
        for (int i = 0; i < n->n; i++) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", n->keys[i]);
            int rc = flatten(f, n->kids[i], sub, err);
            if (rc) return rc;
        }
        return DATM_OK;
    }
    if (n->kind == DATM_Y_SEQ) {
        char *t = datm_ytree_flow_text(n, err);
        if (!t) return err && err->code ? err->code : DATM_E_INVALID;
        fprintf(f, "%s: %s\n", path, t);
        free(t);
        return DATM_OK;
    }
    /* a scalar: quoted when YAML would read it differently or it was quoted */
    const char *v = n->text ? n->text : "";
    int quote = n->quoted || !v[0] || strpbrk(v, ":#{}[],&*!|>'\"%@`") || v[0] == '-' ||
                v[0] == ' ' || v[strlen(v) - 1] == ' ';
    if (quote) {
        fprintf(f, "%s: \"", path);
        for (const char *p = v; *p; p++) {
            if (*p == '"' || *p == '\\') fputc('\\', f);
            fputc(*p, f);
        }
        fputs("\"\n", f);
    } else {
        fprintf(f, "%s: %s\n", path, v);
    }
    return DATM_OK;
}

static int write_params(const char *dir, const char *resolved, datm_error *err)
{
    datm_ynode *t = NULL;
    int rc = datm_ytree_parse(resolved, strlen(resolved), "spec.resolved.yaml", &t, err);
    char path[1300];
    snprintf(path, sizeof path, "%.1200s/params.yaml", dir);
    datm_afile a;
    if (!rc) rc = datm_afile_open(&a, path, err);
    if (!rc) {
        fputs("# the run's settings (its resolved spec), one dotted key per line\n", a.f);
        rc = flatten(a.f, t, "", err);
        if (!rc) rc = datm_afile_commit(&a, err);
        else datm_afile_abort(&a);
    }
    datm_ytree_free(&t);
    return rc;
}

int datm_run_write_tracking(const char *dir, const char *result, const char *resolved,
                            datm_error *err)
{
    int rc = write_metrics(dir, result, err);
    if (!rc) rc = write_params(dir, resolved, err);
    return rc;
}
