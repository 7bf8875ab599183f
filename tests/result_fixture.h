/* tests/result_fixture.h: small result.h5 files for the tests of the readers (compare,
 * check-metrics, topics, figures), written with the engine's own h5 wrapper in the layout
 * of engine/io/results_layout.h. Header-only; include from one test file. */
#ifndef DATM_TEST_RESULT_FIXTURE_H
#define DATM_TEST_RESULT_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/h5.h"
#include "io/results.h"
#include "io/results_layout.h"

typedef struct fixture_run {
    const char *spec;           /* resolved YAML text stored in the `spec` attribute */
    const char *status;         /* "COMPLETED" when NULL */
    int         n_metrics;
    const char *metric_names[8];
    double      metric_values[8];
    int         n_rows;         /* curve rows (0: no /curves) */
    double      ppl0;           /* perplexity curve: ppl0 * 0.9^row */
    int         n_layers;       /* 0: no model/topics; else phi_1..phi_L of an image model */
    int         img;            /* image side (vocab p_r_c, V = img * img) */
    const int  *widths;         /* K_1..K_L */
} fixture_run;

static uint64_t fixture_rng = 0x9E3779B97F4A7C15ULL;
static double fixture_unif(void)
{
    fixture_rng ^= fixture_rng << 13; fixture_rng ^= fixture_rng >> 7; fixture_rng ^= fixture_rng << 17;
    return (double)(fixture_rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Creates DIR (and parents) and DIR/result.h5 for run r. Returns 0 on success. */
static int fixture_write(const char *dir, const fixture_run *r)
{
    char cmd[1200], path[1100];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) return 1;
    snprintf(path, sizeof path, "%s/%s", dir, DATM_RESULT_FILE);
    datm_error err = {0};
    datm_h5 *f = NULL;
    int rc = datm_h5_create(path, &f, &err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_STATUS, r->status ? r->status : "COMPLETED", &err);
    if (!rc && r->spec) rc = datm_h5_attr_str(f, DATM_ATTR_SPEC, r->spec, &err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_VERSION, "test", &err);
    for (int i = 0; !rc && i < r->n_metrics; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s/%s", DATM_GRP_METRICS, r->metric_names[i]);
        rc = datm_h5_write_scalar(f, name, r->metric_values[i], &err);
    }
    if (!rc && r->n_rows > 0) {
        const int n = r->n_rows;
        double *it = malloc(n * sizeof *it), *ws = malloc(n * sizeof *ws),
               *pp = malloc(n * sizeof *pp), *lo = malloc(n * sizeof *lo),
               *kl = malloc(n * sizeof *kl), *st = malloc(n * sizeof *st);
        for (int i = 0; i < n; i++) {
            it[i] = 10.0 * (i + 1);
            ws[i] = 0.5 * (i + 1);
            pp[i] = r->ppl0 * pow(0.9, i);
            lo[i] = 1000.0 / (i + 1);
            kl[i] = 50.0 / (i + 1);
            st[i] = 1e-3 / (i + 1);
        }
        pp[0] = NAN;   /* a row without a perplexity evaluation */
        int64_t d[1] = {n};
        rc = datm_h5_write_f64(f, "curves/iteration", it, 1, d, &err);
        if (!rc) rc = datm_h5_write_f64(f, "curves/wall_s", ws, 1, d, &err);
        if (!rc) rc = datm_h5_write_f64(f, "curves/perplexity", pp, 1, d, &err);
        if (!rc) rc = datm_h5_write_f64(f, "curves/loss", lo, 1, d, &err);
        for (int l = 1; !rc && l <= (r->n_layers ? r->n_layers : 1); l++) {
            char name[64];
            for (int i = 0; i < n; i++) { kl[i] = 50.0 * l / (i + 1); st[i] = 1e-3 * l / (i + 1); }
            snprintf(name, sizeof name, "curves/kl_%d", l);
            rc = datm_h5_write_f64(f, name, kl, 1, d, &err);
            snprintf(name, sizeof name, "curves/step_%d", l);
            if (!rc) rc = datm_h5_write_f64(f, name, st, 1, d, &err);
        }
        free(it); free(ws); free(pp); free(lo); free(kl); free(st);
    }
    if (!rc && r->n_layers > 0) {
        const int V = r->img * r->img;
        char **vocab = malloc(V * sizeof *vocab);
        for (int v = 0; v < V; v++) {
            vocab[v] = malloc(32);
            snprintf(vocab[v], 32, "p_%d_%d", v / r->img, v % r->img);
        }
        rc = datm_h5_write_strings(f, "data/vocab", (const char *const *)vocab, V, &err);
        for (int v = 0; v < V; v++) free(vocab[v]);
        free(vocab);
        int64_t prev = V;
        for (int l = 1; !rc && l <= r->n_layers; l++) {
            const int64_t K = r->widths[l - 1];
            float *phi = malloc((size_t)(prev * K) * sizeof *phi);
            for (int64_t k = 0; k < K; k++) {
                double s = 0;
                for (int64_t v = 0; v < prev; v++) {
                    /* layer 1: topic k lights row k % img of the image, plus noise */
                    double x = 0.02 * fixture_unif();
                    if (l == 1 && (v / r->img) == k % r->img) x += 1.0;
                    if (l > 1 && v % K == k) x += 1.0;
                    phi[v * K + k] = (float)x;
                    s += x;
                }
                for (int64_t v = 0; v < prev; v++) phi[v * K + k] = (float)(phi[v * K + k] / s);
            }
            char name[64];
            snprintf(name, sizeof name, "model/phi_%d", l);
            int64_t d[2] = {prev, K};
            rc = datm_h5_write_f32(f, name, phi, 2, d, &err);
            free(phi);
            prev = K;
        }
        datm_topic_set ts;
        if (!rc) rc = datm_topics_compute(f, NULL, &ts, &err);
        if (!rc) { rc = datm_topics_write(f, &ts, &err); datm_topic_set_free(&ts); }
    }
    datm_h5_close(&f);
    if (rc) fprintf(stderr, "fixture_write %s: %s\n", path, err.msg);
    return rc;
}

__attribute__((unused)) static int fixture_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && sb.st_size > 0;
}

__attribute__((unused)) static char *fixture_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

#endif
