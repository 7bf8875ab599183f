/* engine/cli/cmd_infer.c: `datm infer RUN DOCS.docword[.gz] -o OUT.h5|OUT.csv` — document
 * features of new documents from a trained run: each document's theta of every layer, the
 * posterior mean (default) or the average of S draws, from the model's own `infer` (for
 * WHAI: one encoder pass, no iterations; OpenMP over documents). The practitioner's entry
 * point after `datm run`.
 *
 * OUT.h5: /theta_<l> (N, K_l) float32 per layer (l = 1 closest to the words), attributes
 * run, docs, samples, seed, variant, seconds. OUT.csv: a header line then one row per
 * document: doc (1-based, as in the docword file), then theta_<l>_<k> for every layer and
 * unit, numbers with %.9g. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "data/data.h"
#include "io/h5.h"
#include "io/results_layout.h"
#include "pipeline/pipeline.h"

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

static int write_h5(const char *path, const datm_theta *t, int l0, int l1, const char *run,
                    const char *docs, int samples, uint64_t seed, const char *variant,
                    double secs, datm_error *err)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    datm_h5 *f = NULL;
    int rc = datm_h5_create(tmp, &f, err);
    for (int l = l0; l <= l1 && !rc; l++) {
        char name[32];
        snprintf(name, sizeof name, "theta_%d", l);
        const int64_t dims[2] = {t->n_docs, t->k[l - 1]};
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

static int write_csv(const char *path, const datm_theta *t, int l0, int l1, datm_error *err)
{
    datm_afile a;
    int rc = datm_afile_open(&a, path, err);
    if (rc) return rc;
    FILE *f = a.f;
    fprintf(f, "doc");
    for (int l = l0; l <= l1; l++)
        for (int64_t k = 0; k < t->k[l - 1]; k++) fprintf(f, ",theta_%d_%lld", l, (long long)(k + 1));
    fputc('\n', f);
    for (int64_t n = 0; n < t->n_docs; n++) {
        fprintf(f, "%lld", (long long)(n + 1));
        for (int l = l0; l <= l1; l++) {
            const float *row = t->theta[l - 1] + n * t->k[l - 1];
            for (int64_t k = 0; k < t->k[l - 1]; k++) fprintf(f, ",%.9g", (double)row[k]);
        }
        fputc('\n', f);
    }
    return datm_afile_commit(&a, err);
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

int datm_cmd_infer(int argc, char **argv)
{
    const char *run = NULL, *docs = NULL, *out = NULL;
    int samples = 0, layer = 0, normalize = 0, quiet = 0, overwrite = 0;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if ((!strcmp(a, "-o") || !strcmp(a, "--samples") || !strcmp(a, "--seed") ||
                  !strcmp(a, "--layer") || !strcmp(a, "--threads")) && !has_value) {
            fprintf(stderr, "datm infer: %s needs a value\n", a);
            return DATM_EXIT_USAGE;
        }
        else if (!strcmp(a, "-o")) out = argv[++i];
        else if (!strcmp(a, "--samples")) {
            if (parse_int(a, argv[++i], 0, 1000000, &v)) return DATM_EXIT_USAGE;
            samples = (int)v;
        } else if (!strcmp(a, "--seed")) {
            if (parse_int(a, argv[++i], 0, INT64_MAX, &v)) return DATM_EXIT_USAGE;
            seed = (uint64_t)v;
        } else if (!strcmp(a, "--layer")) {
            if (parse_int(a, argv[++i], 1, 64, &v)) return DATM_EXIT_USAGE;
            layer = (int)v;
        } else if (!strcmp(a, "--threads")) {
            if (datm_cli_threads("infer", argv[++i])) return DATM_EXIT_USAGE;
        }
        else if (!strcmp(a, "--normalize")) normalize = 1;
        else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "datm infer: unknown option '%s'\n\n", a);
            usage(stderr);
            return DATM_EXIT_USAGE;
        }
        else if (!run) run = a;
        else if (!docs) docs = a;
        else { usage(stderr); return DATM_EXIT_USAGE; }
    }
    if (!run || !docs || !out) { usage(stderr); return DATM_EXIT_USAGE; }
    if (!ends_with(out, ".h5") && !ends_with(out, ".csv")) {
        fprintf(stderr, "datm infer: -o must end in .h5 or .csv (got '%s')\n", out);
        return DATM_EXIT_USAGE;
    }
    if (quiet) datm_log_set_level(DATM_LOG_WARN);

    /* the run: its directory holds the resolved spec and result.h5 */
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s", run);
    if (ends_with(dir, ".h5")) {
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
    }
    {   /* the output is never an input, nor a file of the run */
        char p1[1200], p2[1200], p3[1200];
        snprintf(p1, sizeof p1, "%s/%s", dir, DATM_RESULT_FILE);
        snprintf(p2, sizeof p2, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
        snprintf(p3, sizeof p3, "%s/%s.part", dir, DATM_RESULT_FILE);
        const char *inputs[] = {docs, run, p1, p2, p3};
        int orc = datm_cli_output_file("infer", out, inputs, 5, overwrite);
        if (orc) return orc;
    }
    datm_error err = {0};
    datm_spec spec;
    memset(&spec, 0, sizeof spec);
    datm_model *m = NULL;
    datm_h5 *f = NULL, *g = NULL;
    datm_csr X = {0};
    datm_theta th;
    memset(&th, 0, sizeof th);
    int rc;
    const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    snprintf(path, sizeof path, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
    rc = datm_spec_load(path, NULL, 0, &cat, &spec, &err);
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s", dir, DATM_RESULT_FILE);
        rc = datm_h5_open(path, 0, &f, &err);
    }
    if (!rc) rc = datm_h5_group(f, DATM_GRP_MODEL, 0, &g, &err);
    int64_t dims[8] = {0};
    if (!rc && datm_h5_shape(g, "phi_1", dims) != 2)
        rc = datm_error_set(&err, DATM_E_FORMAT, "%s: /%s/phi_1 missing (not a trained run?)",
                            path, DATM_GRP_MODEL);
    const int64_t V = dims[0];
    if (!rc) rc = datm_docword_read(docs, &X, &err);
    if (!rc && X.n_cols > V)
        rc = datm_error_set(&err, DATM_E_INVALID, "%s: %lld words, but the model of %s has a "
                            "vocabulary of %lld", docs, (long long)X.n_cols, run, (long long)V);
    if (!rc) X.n_cols = V;   /* a smaller W only means the last words never occur */
    if (!rc) {
        const datm_config *tc = datm_spec_section(&spec, DATM_SEC_TRAIN);
        const datm_config *rc_ = datm_spec_section(&spec, DATM_SEC_RUN);
        datm_run_info info = {
            .n_train = 1, .n_vocab = V, .batch_size = datm_config_int(tc, "batch_size"),
            .epochs = 1, .total_iters = 1, .seed = (uint64_t)datm_config_int(rc_, "seed"),
            .threads = 0, .train = NULL};
        rc = spec.ops->create(datm_spec_section(&spec, DATM_SEC_MODEL), &info, &m, &err);
        if (!rc && spec.ops->load) rc = spec.ops->load(m, g, &err);
        if (!rc && !spec.ops->infer)
            rc = datm_error_set(&err, DATM_E_UNSUPPORTED, "model %s has no infer", spec.variant);
    }
    datm_h5_close(&g);
    datm_h5_close(&f);
    double secs = 0;
    if (!rc) {
        double t0 = datm_time_now();
        rc = spec.ops->infer(m, &X, seed, samples, &th, &err);
        secs = datm_time_now() - t0;
    }
    int l0 = 1, l1 = th.n_layers;
    if (!rc && layer) {
        if (layer < 1 || layer > th.n_layers)
            rc = datm_error_set(&err, DATM_E_INVALID, "--layer %d: the model has %d layers", layer,
                                th.n_layers);
        l0 = l1 = layer;
    }
    if (!rc && normalize)
        for (int l = l0; l <= l1; l++)
            for (int64_t n = 0; n < th.n_docs; n++) {
                float *row = th.theta[l - 1] + n * th.k[l - 1];
                double s = 0;
                for (int64_t k = 0; k < th.k[l - 1]; k++) s += row[k];
                if (s > 0)
                    for (int64_t k = 0; k < th.k[l - 1]; k++) row[k] = (float)(row[k] / s);
            }
    if (!rc)
        rc = ends_with(out, ".h5") ? write_h5(out, &th, l0, l1, run, docs, samples, seed,
                                              spec.variant, secs, &err)
                                   : write_csv(out, &th, l0, l1, &err);
    if (!rc && !quiet)
        fprintf(stderr, "infer: %lld documents, %s, %d layer(s), %.3g s (%.0f documents/s) -> %s\n",
                (long long)X.n_rows, samples ? "average of draws" : "posterior mean", l1 - l0 + 1,
                secs, secs > 0 ? (double)X.n_rows / secs : 0.0, out);
    if (rc) fprintf(stderr, "datm infer: %s\n", err.msg);
    datm_theta_free(&th);
    if (m) m->ops->destroy(m);
    datm_csr_free(&X);
    datm_spec_free(&spec);
    return rc ? DATM_EXIT_FAIL : DATM_EXIT_OK;
}
