/* engine/cli/cmd_run.c: `datm run SPEC.yaml [key.path=value ...] [-o DIR] [--quiet]
 * [--threads N]` and the argument helpers the other spec-taking commands share. */
#include "cli/cmd_run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/figures.h"
#include "io/h5.h"
#include "io/results.h"

int datm_cli_parse_spec_args(int argc, char **argv, const char *const *extra,
                             datm_cli_spec_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int skip = 0;
        for (int k = 0; extra && extra[k]; k++) {
            /* "--flag " (trailing space): an option with a value, "--flag V" or "--flag=V" */
            size_t n = strlen(extra[k]);
            int takes_value = n > 0 && extra[k][n - 1] == ' ';
            if (takes_value) n--;
            if (strncmp(s, extra[k], n) == 0 && (s[n] == '\0' || s[n] == '=')) {
                skip = 1;
                if (s[n] == '\0' && takes_value) i++;
            }
        }
        if (skip) continue;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) a->help = 1;
        else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) a->quiet = 1;
        else if (!strcmp(s, "--overwrite")) a->overwrite = 1;
        else if (!strcmp(s, "-o") || !strcmp(s, "--out")) {
            if (++i >= argc) { fprintf(stderr, "datm: %s needs a directory\n", s); return DATM_EXIT_USAGE; }
            a->out_dir = argv[i];
        } else if (!strcmp(s, "--threads")) {
            if (++i >= argc) { fprintf(stderr, "datm: --threads needs a number\n"); return DATM_EXIT_USAGE; }
            a->threads = argv[i];
        } else if (!strncmp(s, "--threads=", 10)) a->threads = s + 10;
        else if (s[0] == '-' && s[1]) {
            fprintf(stderr, "datm %s: unknown option '%s' (see --help)\n", argv[0], s);
            return DATM_EXIT_USAGE;
        } else if (strchr(s, '=') || s[0] == '~') {
            if (a->n_overrides >= DATM_MAX_OVERRIDES - 2) {
                fprintf(stderr, "datm: too many overrides (at most %d)\n", DATM_MAX_OVERRIDES - 2);
                return DATM_EXIT_USAGE;
            }
            a->overrides[a->n_overrides++] = s;
        } else if (!a->spec) a->spec = s;
        else {
            fprintf(stderr, "datm %s: unexpected argument '%s' (overrides are key.path=value)\n",
                    argv[0], s);
            return DATM_EXIT_USAGE;
        }
    }
    return DATM_EXIT_OK;
}

int datm_cli_parse_run_dir_args(int argc, char **argv, int with_overrides, const char **dir,
                                datm_cli_spec_args *a)
{
    char *rest[DATM_MAX_OVERRIDES + 16];
    int nrest = 0;
    const int cap = (int)(sizeof rest / sizeof rest[0]) - 1;
    *dir = NULL;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const int value = i > 0 && (!strcmp(argv[i - 1], "--threads") || !strcmp(argv[i - 1], "-o") ||
                                    !strcmp(argv[i - 1], "--out"));
        const int override = with_overrides && (strchr(s, '=') || s[0] == '~');
        if (i > 0 && !*dir && s[0] != '-' && !value && !override) {
            *dir = s;
        } else {
            if (nrest >= cap) {
                fprintf(stderr, "datm: too many arguments\n");
                return DATM_EXIT_USAGE;
            }
            rest[nrest++] = argv[i];
        }
    }
    rest[nrest] = NULL;
    return datm_cli_parse_spec_args(nrest, rest, NULL, a);
}

int datm_cli_load_spec(const datm_cli_spec_args *a, datm_spec *spec)
{
    const char *ov[DATM_MAX_OVERRIDES];
    int n = 0;
    for (int i = 0; i < a->n_overrides; i++) ov[n++] = a->overrides[i];
    char tbuf[64], obuf[1100];
    if (a->threads) {
        snprintf(tbuf, sizeof tbuf, "threads=%s", a->threads);
        ov[n++] = tbuf;
    }
    if (a->out_dir) {
        if (strlen(a->out_dir) + 16 > sizeof obuf || strchr(a->out_dir, '"') ||
            strchr(a->out_dir, '\\')) {
            fprintf(stderr, "datm: -o %.80s...: the directory path is too long (at most %d "
                            "characters) or holds '\"' or '\\'\n", a->out_dir,
                    (int)sizeof obuf - 16);
            return DATM_EXIT_USAGE;
        }
        snprintf(obuf, sizeof obuf, "output.dir=\"%s\"", a->out_dir);
        ov[n++] = obuf;
    }
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_error err = {0};
    if (datm_spec_load(a->spec, ov, n, &cat, spec, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code == DATM_E_IO ? DATM_EXIT_FAIL : DATM_EXIT_USAGE;
    }
    return DATM_EXIT_OK;
}

/* ---- datm run ---- */

static void on_sigint(int sig)
{
    (void)sig;
    datm_stop_request();
}

void datm_cli_fill_run_hooks(datm_run_opts *o)
{
    o->figures = datm_figures_stage;
    o->topics = datm_topics_stage;
    o->report = NULL;   /* the pipeline's own report.md */
}

int datm_cli_execute(const datm_spec *spec, int resume, int quiet, int argc, char **argv)
{
    return datm_cli_execute_ex(spec, resume, quiet, 0, argc, argv);
}

int datm_cli_execute_ex(const datm_spec *spec, int resume, int quiet, int overwrite, int argc,
                        char **argv)
{
    datm_run_opts o;
    memset(&o, 0, sizeof o);
    o.run_dir = spec->p.output.dir;
    o.quiet = quiet;
    o.resume = resume;
    o.overwrite = overwrite;
    o.argc = argc;
    o.argv = argv;
    datm_cli_fill_run_hooks(&o);
    if (quiet) datm_log_set_level(DATM_LOG_WARN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    datm_error err = {0};
    int rc = datm_run(spec, &o, &err);
    long open_objects = datm_h5_open_objects();
    if (open_objects > 0) datm_warn("internal: %ld HDF5 object(s) still open", open_objects);
    if (rc == DATM_OK) return DATM_EXIT_OK;
    return DATM_EXIT_FAIL;   /* datm_run printed the message (and keeps it in run.log) */
}

int datm_cli_open_spec(int argc, char **argv, void (*help)(FILE *), datm_cli_spec_args *a,
                       datm_spec *spec)
{
    int rc = datm_cli_parse_spec_args(argc, argv, NULL, a);
    if (rc) return rc;
    if (a->help) { help(stdout); return DATM_EXIT_OK; }
    if (!a->spec) { help(stderr); return DATM_EXIT_USAGE; }
    rc = datm_cli_load_spec(a, spec);
    return rc ? rc : -1;
}

static void run_help(FILE *f)
{
    fprintf(f,
            "usage: datm run SPEC.yaml [key.path=value ...] [-o DIR] [--overwrite] [--threads N]\n"
            "                [--quiet] [--plugin PATH.so]\n\n"
            "Overrides: key.path=value sets a key (lists as [1,2]); ~key.path removes one.\n"
            "Validates SPEC (after the overrides), then runs its stages: train (mini-batch\n"
            "epochs with curve evaluations and checkpoints), evaluate (per-heldout-word\n"
            "perplexity, timing, classification), topics, figures and report. Writes into the\n"
            "run directory (output.dir, default results/<name>; -o DIR overrides):\n"
            "  spec.resolved.yaml  overrides.txt  run.log  report.md  figures/\n"
            "  result.h5           (result.h5.part until COMPLETED; FAILED/INTERRUPTED stay .part)\n"
            "  checkpoints/ckpt-<iteration>.h5\n"
            "SIGINT (Ctrl-C) writes a checkpoint and marks the run INTERRUPTED; continue it with\n"
            "'datm resume DIR'. Exit 0 completed, 1 failed or interrupted, 2 spec or usage error.\n"
            "DIR must be new or empty, or hold an attempt with nothing to lose (FAILED, or\n"
            "killed before its first checkpoint). A COMPLETED run there, or an unfinished one\n"
            "with a checkpoint (resume it), is refused unless --overwrite: then the new run is\n"
            "written to DIR.new and replaces DIR only when it is COMPLETED. One process writes a\n"
            "run directory at a time (DIR/run.lock holds its pid); a second fails at once.\n"
            "--threads N: OpenMP and OpenBLAS threads (default: all).\n"
            "--plugin PATH.so: load a plugin's model variants (repeatable; also the spec's\n"
            "model.plugin: PATH.so, relative to the spec's folder, and every *.so in the\n"
            "directories of DATM_PLUGIN_PATH); its file and SHA-256 go into the run's\n"
            "provenance and spec hash.\n"
            "--quiet: only warnings and errors on the terminal; run.log still gets every\n"
            "message and a progress line each minute (follow it with tail -f).\n"
            "OpenMP threads sleep at barriers (OMP_WAIT_POLICY=passive, set at start-up unless\n"
            "OMP_WAIT_POLICY or GOMP_SPINCOUNT is set): spin-waiting made N > 1 several times\n"
            "slower on a machine shared with other busy processes.\n"
            "Data-parallel over MPI ranks (a build with -DDATM_MPI=ON; datm --version says):\n"
            "'mpirun -n R datm run SPEC train.reduce_chunks=C' with R <= C: the same numbers\n"
            "for any R; rank 0 writes DIR; resume on any number of ranks (docs/scaling.md).\n");
}

int datm_cmd_run(int argc, char **argv)
{
    datm_cli_spec_args a;
    datm_spec spec;
    int rc = datm_cli_open_spec(argc, argv, run_help, &a, &spec);
    if (rc >= 0) return rc;
    if (!a.quiet) {
        datm_error err = {0};
        char *text = datm_spec_to_yaml(&spec, 1, &err);
        if (text) fprintf(stderr, "---\n%s# spec_hash: %s\n---\n", text, spec.hash);
        datm_free(text);
    }
    rc = datm_cli_execute_ex(&spec, 0, a.quiet, a.overwrite, argc, argv);
    datm_spec_free(&spec);
    return rc;
}
