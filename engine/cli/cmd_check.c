/* engine/cli/cmd_check.c: `datm check SPEC [k=v ...]` — validate a spec and print it resolved
 * (defaults marked), its hash and the defaults that were applied; then check what `datm run`
 * would check before training (output directory, data, model; datm_run_check), writing
 * nothing. --spec-only stops after the spec. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"

static void help(FILE *f)
{
    fprintf(f, "usage: datm check SPEC.yaml [key.path=value ...] [--origins] [--threads N] [--quiet]\n\n"
               "Validates SPEC against the engine's and the model variant's schemas and the\n"
               "variant's own rules on its options, after composing its defaults: files and\n"
               "applying the overrides, then prints the resolved spec (\"# default\" marks\n"
               "values taken from the schema) and its SHA-256.\n"
               "--origins: mark every value with where it came from instead: the file:line:col\n"
               "of the spec or base file that set it last, the override, or default/derived.\n"
               "Then everything `datm run` checks before training, without writing anything:\n"
               "the output directory (output.dir or -o DIR, with --overwrite as run takes it),\n"
               "the data set (every file read and cross-checked) and the model created for it\n"
               "(sizes against the data and the machine's memory). --spec-only: the spec alone.\n"
               "Exit 0 valid, 1 data, model or output directory rejected, 2 invalid spec.\n");
}

int datm_cmd_check(int argc, char **argv)
{
    /* --origins is ours: take it out before the shared spec-argument parser sees it */
    int origins = 0, spec_only = 0, n = 0;
    char *args[512];
    for (int i = 0; i < argc && n < 511; i++) {
        if (i > 0 && !strcmp(argv[i], "--origins")) { origins = 1; continue; }
        if (i > 0 && !strcmp(argv[i], "--spec-only")) { spec_only = 1; continue; }
        args[n++] = argv[i];
    }
    args[n] = NULL;
    datm_cli_spec_args a;
    datm_spec spec;
    int rc = datm_cli_open_spec(n, args, help, &a, &spec);
    if (rc >= 0) return rc;
    if (!a.quiet) {
        datm_error err = {0};
        char *text = origins ? datm_spec_origins_yaml(&spec, &err) : datm_spec_to_yaml(&spec, 1, &err);
        if (!text) {
            fprintf(stderr, "datm check: %s\n", err.msg);
            datm_spec_free(&spec);
            return DATM_EXIT_FAIL;
        }
        fputs(text, stdout);
        datm_free(text);
        char defaults[8192];
        int nd = datm_spec_defaults_applied(&spec, defaults, sizeof defaults);
        printf("# %d keys took their schema default\n", nd);
    }
    printf("# spec_hash: %s\n", spec.hash);
    if (!spec_only) {
        datm_run_opts o = {0};
        o.run_dir = spec.p.output.dir;
        o.overwrite = a.overwrite;
        datm_run_check_info info;
        datm_error err = {0};
        if (datm_run_check(&spec, &o, &info, &err)) {
            fprintf(stderr, "%s\n%s: rejected (datm run would stop here)\n", err.msg, a.spec);
            datm_spec_free(&spec);
            return DATM_EXIT_FAIL;
        }
        printf("# data: %lld training and %lld evaluation documents, V = %lld (%s); %lld "
               "mini-batches\n# output: %s%s\n", (long long)info.n_train, (long long)info.n_eval,
               (long long)info.n_vocab, info.protocol, (long long)info.total_iters, o.run_dir,
               info.replaces ? " (replaced when the new run completes: --overwrite)" : "");
    }
    printf("%s: ok\n", a.spec);
    datm_spec_free(&spec);
    return DATM_EXIT_OK;
}
