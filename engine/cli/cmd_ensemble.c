/* engine/cli/cmd_ensemble.c: `datm ensemble RUN... -o OUT` — the class prediction of several
 * finished supervised runs averaged (equal weights over the members' p(y|x)), written as a
 * run directory that `datm compare` and the pipeline tables read like any other. Each
 * member's prediction is recomputed from its result.h5 and must reproduce the error rate
 * the member reported; otherwise nothing is written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "eval/classify.h"
#include "pipeline/pipeline.h"

int datm_cmd_ensemble(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm ensemble RUN... -o OUT [--threads N] [--quiet]\n\n"
        "Averages the class probabilities p(y|x) of the test documents over finished runs of\n"
        "supervised models (sdatm-l, sdatm-n), equal weights, and writes OUT as a run\n"
        "directory: OUT/result.h5 (error rate, macro-F1, confusion matrix, the averaged and\n"
        "each member's probabilities), OUT/members.txt, OUT/spec.resolved.yaml (the first\n"
        "member's). Typical use: runs of one spec with different seeds (independent chains),\n"
        "e.g.  datm run SPEC seed=2 -o runs/s2  then  datm ensemble runs/s1 runs/s2 -o runs/ens\n\n"
        "Each member's prediction is recomputed from its result.h5 with its own data set,\n"
        "seed and evaluate.predict_samples; it must reproduce the error rate the run\n"
        "reported, and all members must have the same test documents and labels.\n\n"
        "  -o OUT        output run directory (created; a non-empty one is refused unless\n"
        "                --overwrite, which replaces it once the new one is complete)\n"
        "  --threads N   OpenMP and OpenBLAS threads (default: all)\n"
        "  --quiet       no progress messages\n");
}

int datm_cmd_ensemble(int argc, char **argv)
{
    const char *out = NULL;
    const char *dirs[DATM_ENSEMBLE_MAX];
    int n = 0, quiet = 0, overwrite = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(a, "--threads") && i + 1 < argc) {
            if (datm_cli_threads("ensemble", argv[++i])) return DATM_EXIT_USAGE;
        }
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "datm ensemble: unknown option '%s'\n\n", a);
            usage(stderr);
            return DATM_EXIT_USAGE;
        }
        else if (n == DATM_ENSEMBLE_MAX) {
            fprintf(stderr, "datm ensemble: at most %d runs\n", DATM_ENSEMBLE_MAX);
            return DATM_EXIT_USAGE;
        }
        else dirs[n++] = a;
    }
    if (!n || !out) { usage(stderr); return DATM_EXIT_USAGE; }
    for (int i = 0; i < n; i++)
        if (!strcmp(dirs[i], out)) {
            fprintf(stderr, "datm ensemble: -o %s is also a member\n", out);
            return DATM_EXIT_USAGE;
        }
    /* never into a member, never over an earlier output without --overwrite */
    int replace = 0;
    int orc = datm_cli_output_dir("ensemble", out, dirs, n, overwrite, &replace);
    if (orc) return orc;
    if (quiet) datm_log_set_level(DATM_LOG_WARN);

    const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_run_prediction p[DATM_ENSEMBLE_MAX];
    memset(p, 0, sizeof p);
    datm_error err = {0};
    int rc = DATM_OK;
    for (int i = 0; i < n && !rc; i++) {
        rc = datm_run_predict(dirs[i], &cat, &p[i], &err);
        if (rc) break;
        /* the member's own prediction must be the one it reported */
        const int64_t N = p[i].n_docs;
        int32_t *pred = malloc((size_t)(N ? N : 1) * sizeof *pred);
        if (!pred) {
            rc = datm_error_set(&err, DATM_E_NOMEM, "out of memory");
            break;
        }
        datm_argmax_rows(p[i].probs, N, p[i].n_classes, pred);
        const double e = datm_error_rate(p[i].labels, pred, N);
        free(pred);
        if (!isnan(p[i].stored_error) && fabs(e - p[i].stored_error) > 1e-12)
            rc = datm_error_set(&err, DATM_E_INVALID, "%s: recomputed, its prediction has error "
                                "rate %.9g, but its result.h5 reports %.9g (was the run made by "
                                "another build of datm?)", dirs[i], e, p[i].stored_error);
        else if (isnan(p[i].stored_error))
            datm_warn("%s: result.h5 has no error rate to check the recomputed one against",
                      dirs[i]);
        if (!rc && !quiet)
            printf("member %d: %s (%s, seed %llu): error rate %.4f%% (as reported), %lld test "
                   "documents, %.1fs\n", i + 1, dirs[i], p[i].variant,
                   (unsigned long long)p[i].seed, 100 * e, (long long)N, p[i].predict_s);
        for (int j = 0; !rc && j < i; j++)
            if (!strcmp(p[j].spec_hash, p[i].spec_hash) && p[j].seed == p[i].seed)
                datm_warn("%s and %s have the same spec and seed: the same chain twice",
                          dirs[j], dirs[i]);
    }
    datm_class_report r;
    memset(&r, 0, sizeof r);
    datm_cli_stage sg;
    int staged = 0;
    if (!rc && replace) {
        if (datm_cli_stage_begin("ensemble", out, &sg)) {
            for (int i = 0; i < n; i++) datm_run_prediction_free(&p[i]);
            return DATM_EXIT_FAIL;
        }
        staged = 1;
    }
    if (!rc) rc = datm_ensemble_write(staged ? sg.stage : out, dirs, p, n, &r, &err);
    if (staged) {
        int rc2 = datm_cli_stage_end(&sg, !rc, &err);
        if (!rc) rc = rc2;
    }
    const double er = r.error_rate, f1 = r.macro_f1;
    for (int i = 0; i < n; i++) datm_run_prediction_free(&p[i]);
    datm_class_report_free(&r);
    if (rc) {
        fprintf(stderr, "datm ensemble: %s (nothing written)\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    if (!quiet)
        printf("ensemble of %d runs: error rate %.4f%%, macro-F1 %.4f -> %s/result.h5\n", n,
               100 * er, f1, out);
    return DATM_EXIT_OK;
}
