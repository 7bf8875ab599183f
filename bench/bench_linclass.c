/* bench/bench_linclass.c: time and error of the logistic-regression classifier (eval/linclass,
 * liblinear) on document features written by `datm infer ... -o F.csv`, transformed like the
 * pipeline's DATM + LR evaluation (log1p of theta of all layers).
 *
 * usage: bench_linclass TRAIN.csv TRAIN.labels TEST.csv TEST.labels [folds=5] [cv_max=20000]
 *                       [C=0] [eps=0.01] [cv_tol=0.01] [patience=2] [verbose=0] [reps=1]
 * Prints the fit's wall time (C choice + final fit), the chosen C and its CV accuracy, the
 * prediction time and the test error rate. A benchmark: it prints, never passes or fails. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "eval/classify.h"
#include "eval/linclass.h"

/* Reads a `datm infer` CSV (header line, then doc id and the features): X (N, D), log1p. */
static float *read_csv(const char *path, int64_t *n_out, int64_t *d_out)
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); exit(1); }
    size_t cap = 1 << 20;
    char *line = malloc(cap);
    if (!fgets(line, (int)cap, f)) { fprintf(stderr, "%s: empty\n", path); exit(1); }
    int64_t d = 0;
    for (char *s = line; *s; s++) d += *s == ',';
    int64_t n = 0, room = 1024;
    float *X = malloc(sizeof(float) * (size_t)(room * d));
    while (fgets(line, (int)cap, f)) {
        if (n == room) { room *= 2; X = realloc(X, sizeof(float) * (size_t)(room * d)); }
        char *s = strchr(line, ',');
        for (int64_t j = 0; j < d; j++) {
            if (!s) { fprintf(stderr, "%s: line %lld: %lld fields, expected %lld\n", path,
                              (long long)(n + 2), (long long)j, (long long)d); exit(1); }
            char *e;
            X[n * d + j] = log1pf(strtof(s + 1, &e));
            s = strchr(e, ',');
        }
        n++;
    }
    fclose(f);
    free(line);
    *n_out = n;
    *d_out = d;
    return X;
}

static int32_t *read_labels(const char *path, int64_t n, int *c)
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); exit(1); }
    int32_t *y = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        if (fscanf(f, "%d", &y[i]) != 1) {
            fprintf(stderr, "%s: line %lld: no label\n", path, (long long)(i + 1));
            exit(1);
        }
        if (y[i] + 1 > *c) *c = y[i] + 1;
    }
    fclose(f);
    return y;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_linclass TRAIN.csv TRAIN.labels TEST.csv TEST.labels "
                        "[folds=5] [cv_max=20000] [C=0] [eps=0.01] [cv_tol=0.01] [patience=2] [verbose=0] [reps=1]\n");
        return 2;
    }
    datm_linclass_params p;
    datm_linclass_params_default(&p);
    int reps = 1;
    for (int i = 5; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq) { fprintf(stderr, "bad option %s\n", argv[i]); return 2; }
        const double v = atof(eq + 1);
        if (!strncmp(argv[i], "folds=", 6)) p.n_folds = (int)v;
        else if (!strncmp(argv[i], "cv_max=", 7)) p.cv_max_docs = (int64_t)v;
        else if (!strncmp(argv[i], "C=", 2)) p.C = v;
        else if (!strncmp(argv[i], "eps=", 4)) p.eps = v;
        else if (!strncmp(argv[i], "cv_tol=", 7)) p.cv_tol = v;
        else if (!strncmp(argv[i], "patience=", 9)) p.cv_patience = (int)v;
        else if (!strncmp(argv[i], "verbose=", 8)) p.verbose = (int)v;
        else if (!strncmp(argv[i], "reps=", 5)) reps = (int)v;
        else { fprintf(stderr, "bad option %s\n", argv[i]); return 2; }
    }
    int64_t ntr, nte, d, d2;
    int c = 0;
    float *Xtr = read_csv(argv[1], &ntr, &d), *Xte = read_csv(argv[3], &nte, &d2);
    if (d != d2) { fprintf(stderr, "%lld vs %lld features\n", (long long)d, (long long)d2); return 1; }
    int32_t *ytr = read_labels(argv[2], ntr, &c), *yte = read_labels(argv[4], nte, &c);
    int32_t *pred = malloc(sizeof(int32_t) * (size_t)nte);
    printf("data: %lld train, %lld test documents, %lld features, %d classes; %d threads\n",
           (long long)ntr, (long long)nte, (long long)d, c, omp_get_max_threads());
    for (int r = 0; r < reps; r++) {
        datm_linclass m;
        datm_error err = {0};
        double t0 = datm_time_now();
        if (datm_linclass_fit(Xtr, ntr, d, ytr, c, &p, &m, &err)) {
            fprintf(stderr, "fit: %s\n", err.msg);
            return 1;
        }
        double t1 = datm_time_now();
        datm_linclass_predict(&m, Xte, nte, pred);
        double t2 = datm_time_now();
        printf("fit %.3f s (C %.6g, CV accuracy %.4f on %lld docs), predict %.4f s, test error %.4f\n",
               t1 - t0, m.C, m.cv_accuracy, (long long)m.n_cv_docs, t2 - t1,
               datm_error_rate(yte, pred, nte));
        datm_linclass_free(&m);
    }
    free(Xtr); free(Xte); free(ytr); free(yte); free(pred);
    return 0;
}
