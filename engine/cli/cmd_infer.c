/* engine/cli/cmd_infer.c: `datm infer RUN DOCS.docword[.gz] -o OUT.h5|OUT.csv` — document
 * features of new documents from a trained run: each document's theta of every layer, the
 * posterior mean (default) or the average of S draws. The practitioner's entry point after
 * `datm run`. The run is opened and the documents read and inferred through the public API
 * (include/datm.h: datm_open, datm_docs_read, datm_load, datm_infer: for WHAI one encoder pass per
 * document, no iterations, OpenMP over documents); this file parses arguments, guards the
 * output and writes it.
 *
 * OUT.h5: /theta_<l> (N, K_l) float32 per layer (l = 1 closest to the words), attributes
 * run, docs, samples, seed, variant, seconds (wall time of the inference, after the model's
 * load). OUT.csv: a header line then one row per document: doc
 * (1-based, as in the docword file), then theta_<l>_<k> for every layer and unit, numbers
 * with %.9g. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "datm.h"
#include "io/h5.h"
#include "io/results_layout.h"

int datm_cmd_infer(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm infer RUN DOCS.docword[.gz] -o OUT.h5|OUT.csv [--samples S] [--seed N]\n"
        "                  [--layer l] [--normalize] [--overwrite] [--threads N] [--quiet]\n\n"
        "Writes the per-layer document features (theta) of the documents in DOCS (UCI bag of\n"
        "words over the run's vocabulary) inferred by the trained model of RUN (a run\n"
        "directory or its result.h5).\n\n"
        "  --samples S   average of S posterior draws (default 0: the posterior mean)\n"
        "  --seed N      seed of the draws (default 1)\n"
        "  --layer l     only layer l (default: all layers)\n"
        "  --normalize   divide each document's theta of a layer by its sum (topic proportions)\n"
        "  --overwrite   replace OUT when it exists (only once the new file is complete);\n"
        "                OUT is never one of the inputs nor inside a run directory\n"
        "  --threads N   OpenMP and OpenBLAS threads (default: all)\n"
        "  --quiet       no progress messages\n");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* What was inferred: theta[l - 1] (n_docs, k[l]) for the layers l0..l1 written. */
typedef struct inferred {
    int64_t n_docs;
    int64_t k[DATM_MAX_LAYERS + 1];
    float  *theta[DATM_MAX_LAYERS];
    int     l0, l1;
} inferred;

static int write_h5(const char *path, const inferred *t, const char *run, const char *docs,
                    int samples, uint64_t seed, const char *variant, double secs,
                    datm_error *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    datm_h5 *f = NULL;
    int rc = datm_h5_create(tmp, &f, err);
    for (int l = t->l0; l <= t->l1 && !rc; l++) {
        char name[32];
        snprintf(name, sizeof name, "theta_%d", l);
        const int64_t dims[2] = {t->n_docs, t->k[l]};
        rc = datm_h5_write_f32(f, name, t->theta[l - 1], 2, dims, err);
    }
    if (!rc) rc = datm_h5_attr_str(f, "run", run, err);
    if (!rc) rc = datm_h5_attr_str(f, "docs", docs, err);
    if (!rc) rc = datm_h5_attr_str(f, "variant", variant, err);
    if (!rc) rc = datm_h5_attr_i64(f, "samples", samples, err);
    if (!rc) rc = datm_h5_attr_i64(f, "seed", (int64_t)seed, err);
    if (!rc) rc = datm_h5_attr_f64(f, "seconds", secs, err);
    if (f) {
        int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
        if (!rc) rc = rc2;
    }
    if (!rc) rc = datm_fsync_path(tmp, err);
    if (!rc) rc = datm_h5_verify_file(tmp, NULL, NULL, err);
    if (!rc && rename(tmp, path) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename from %s (%s)", path, tmp,
                            strerror(errno));
    if (rc) remove(tmp);
    return rc;
}

static int write_csv(const char *path, const inferred *t, datm_error *err)
{
    datm_afile a;
    int rc = datm_afile_open(&a, path, err);
    if (rc) return rc;
    FILE *f = a.f;
    fprintf(f, "doc");
    for (int l = t->l0; l <= t->l1; l++)
        for (int64_t k = 0; k < t->k[l]; k++) fprintf(f, ",theta_%d_%lld", l, (long long)(k + 1));
    fputc('\n', f);
    for (int64_t n = 0; n < t->n_docs; n++) {
        fprintf(f, "%lld", (long long)(n + 1));
        for (int l = t->l0; l <= t->l1; l++) {
            const float *row = t->theta[l - 1] + n * t->k[l];
            for (int64_t k = 0; k < t->k[l]; k++) fprintf(f, ",%.9g", (double)row[k]);
        }
        fputc('\n', f);
    }
    return datm_afile_commit(&a, err);
}

/* Divides each document's theta of the written layers by its sum (rows summing to 0 stay). */
static void normalise(inferred *t)
{
    for (int l = t->l0; l <= t->l1; l++)
        for (int64_t n = 0; n < t->n_docs; n++) {
            float *row = t->theta[l - 1] + n * t->k[l];
            double s = 0;
            for (int64_t k = 0; k < t->k[l]; k++) s += row[k];
            if (s > 0)
                for (int64_t k = 0; k < t->k[l]; k++) row[k] = (float)(row[k] / s);
        }
}

/* A whole number in [lo, hi] for option `opt`; prints the error. */
static int parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "datm infer: %s '%s': expected a whole number in [%lld, %lld]\n", opt, s,
                lo, hi);
        return 1;
    }
    *out = v;
    return 0;
}

typedef struct infer_args {
    const char *run, *docs, *out;
    int samples, layer, normalize, quiet, overwrite;
    uint64_t seed;
} infer_args;

/* 0: go on; -1: --help printed; else the exit code of a usage error (printed). */
static int parse_args(int argc, char **argv, infer_args *a)
{
    memset(a, 0, sizeof *a);
    a->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        long long v;
        int has_value = i + 1 < argc;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) { usage(stdout); return -1; }
        else if ((!strcmp(s, "-o") || !strcmp(s, "--samples") || !strcmp(s, "--seed") ||
                  !strcmp(s, "--layer") || !strcmp(s, "--threads")) && !has_value) {
            fprintf(stderr, "datm infer: %s needs a value\n", s);
            return DATM_EXIT_USAGE;
        }
        else if (!strcmp(s, "-o")) a->out = argv[++i];
        else if (!strcmp(s, "--samples")) {
            if (parse_int(s, argv[++i], 0, 1000000, &v)) return DATM_EXIT_USAGE;
            a->samples = (int)v;
        } else if (!strcmp(s, "--seed")) {
            if (parse_int(s, argv[++i], 0, INT64_MAX, &v)) return DATM_EXIT_USAGE;
            a->seed = (uint64_t)v;
        } else if (!strcmp(s, "--layer")) {
            if (parse_int(s, argv[++i], 1, 64, &v)) return DATM_EXIT_USAGE;
            a->layer = (int)v;
        } else if (!strcmp(s, "--threads")) {
            if (datm_cli_threads("infer", argv[++i])) return DATM_EXIT_USAGE;
        }
        else if (!strcmp(s, "--normalize")) a->normalize = 1;
        else if (!strcmp(s, "--overwrite")) a->overwrite = 1;
        else if (!strcmp(s, "--quiet")) a->quiet = 1;
        else if (s[0] == '-' && s[1]) {
            fprintf(stderr, "datm infer: unknown option '%s'\n\n", s);
            usage(stderr);
            return DATM_EXIT_USAGE;
        }
        else if (!a->run) a->run = s;
        else if (!a->docs) a->docs = s;
        else { usage(stderr); return DATM_EXIT_USAGE; }
    }
    if (!a->run || !a->docs || !a->out) { usage(stderr); return DATM_EXIT_USAGE; }
    if (!ends_with(a->out, ".h5") && !ends_with(a->out, ".csv")) {
        fprintf(stderr, "datm infer: -o must end in .h5 or .csv (got '%s')\n", a->out);
        return DATM_EXIT_USAGE;
    }
    return 0;
}

/* The output is never an input, nor a file of the run (its result, spec or partial result). */
static int guard_output(const infer_args *a)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", a->run);
    if (ends_with(dir, ".h5")) {
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
    }
    char p1[1200], p2[1200], p3[1200];
    snprintf(p1, sizeof p1, "%s/%s", dir, DATM_RESULT_FILE);
    snprintf(p2, sizeof p2, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
    snprintf(p3, sizeof p3, "%s/%s.part", dir, DATM_RESULT_FILE);
    const char *inputs[] = {a->docs, a->run, p1, p2, p3};
    return datm_cli_output_file("infer", a->out, inputs, 5, a->overwrite);
}

/* Infers theta of d under m into t (every layer; the caller frees t->theta). */
static int infer_all(datm_trained *m, const datm_docs *d, const infer_args *a, inferred *t,
                     double *secs, datm_error *err)
{
    const int L = datm_layers(m);
    t->n_docs = datm_docs_count(d);
    for (int l = 1; l <= L; l++) {
        t->k[l] = datm_topics(m, l);
        t->theta[l - 1] = malloc((size_t)(t->n_docs * t->k[l]) * sizeof(float) + 1);
        if (!t->theta[l - 1]) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    const double t0 = datm_time_now();
    int rc = datm_infer(m, d, a->samples, a->seed, 0, t->theta, err);
    *secs = datm_time_now() - t0;
    if (rc) return rc;
    t->l0 = 1;
    t->l1 = L;
    if (a->layer) {
        if (a->layer > L)
            return datm_error_set(err, DATM_E_INVALID, "--layer %d: the model has %d layers",
                                  a->layer, L);
        t->l0 = t->l1 = a->layer;
    }
    if (a->normalize) normalise(t);
    return DATM_OK;
}

int datm_cmd_infer(int argc, char **argv)
{
    infer_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc < 0) return DATM_EXIT_OK;
    if (prc) return prc;
    if (a.quiet) datm_log_set_level(DATM_LOG_WARN);
    int orc = guard_output(&a);
    if (orc) return orc;

    datm_error err = {0};
    datm_trained *m = NULL;
    datm_docs *d = NULL;
    inferred t;
    memset(&t, 0, sizeof t);
    double secs = 0;
    int rc = datm_open(a.run, &m, &err);
    if (!rc) rc = datm_docs_read(a.docs, &d, &err);
    if (!rc && datm_docs_words(d) > datm_vocab_size(m))
        rc = datm_error_set(&err, DATM_E_INVALID, "%s: %lld words, but the model of %s has a "
                            "vocabulary of %lld", a.docs, (long long)datm_docs_words(d), a.run,
                            (long long)datm_vocab_size(m));
    if (!rc) rc = datm_load(m, &err);
    if (!rc) rc = infer_all(m, d, &a, &t, &secs, &err);
    if (!rc)
        rc = ends_with(a.out, ".h5") ? write_h5(a.out, &t, a.run, a.docs, a.samples, a.seed,
                                                datm_variant(m), secs, &err)
                                     : write_csv(a.out, &t, &err);
    if (!rc && !a.quiet)
        fprintf(stderr, "infer: %lld documents, %s, %d layer(s), %.3g s (%.0f documents/s) -> %s\n",
                (long long)t.n_docs, a.samples ? "average of draws" : "posterior mean",
                t.l1 - t.l0 + 1, secs, secs > 0 ? (double)t.n_docs / secs : 0.0, a.out);
    if (rc) fprintf(stderr, "datm infer: %s\n", err.msg);
    for (int l = 0; l < DATM_MAX_LAYERS; l++) free(t.theta[l]);
    datm_docs_free(d);
    datm_close(m);
    return rc ? DATM_EXIT_FAIL : DATM_EXIT_OK;
}
