/* engine/cli/cmd_run.c: `datm run SPEC.yaml [key.path=value ...] [-o DIR] [--quiet]
 * [--threads N]` and the argument helpers the other spec-taking commands share. */
#include "cli/cmd_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int datm_cli_parse_spec_args(int argc, char **argv, const char *const *extra,
                             datm_cli_spec_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int skip = 0;
        for (int k = 0; extra && extra[k]; k++) {
            size_t n = strlen(extra[k]);
            if (strncmp(s, extra[k], n) == 0 && (s[n] == '\0' || s[n] == '=')) {
                skip = 1;
                /* an option written "--flag VALUE" takes the next word too */
                if (s[n] == '\0' && extra[k][n - 1] == ' ') i++;
            }
        }
        if (skip) continue;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) a->help = 1;
        else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) a->quiet = 1;
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
        } else if (strchr(s, '=')) {
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
