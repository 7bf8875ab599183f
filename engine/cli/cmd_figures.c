/* engine/cli/cmd_figures.c: `datm figures RUN... [--out DIR]`: (re)makes the standard
 * figures of each run from its result.h5 (the same as the run's figures stage): .dat and
 * .gp always, .png and .svg when gnuplot is installed. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "io/figures.h"
#include "io/results.h"

int datm_cmd_figures(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm figures RUN... [--out DIR]\n\n"
        "Makes the standard figures of each run (a run directory or result.h5) in\n"
        "RUN/figures (or DIR with one run): perplexity vs iteration and vs wall time,\n"
        "training loss, KL per layer, mean step size eps/M_k per layer, and image grids of\n"
        "the projected topics for pixel vocabularies (p_<row>_<col>). Each figure is NAME.dat\n"
        "and NAME.gp (rerun `gnuplot NAME.gp` there to restyle) plus NAME.png and NAME.svg\n"
        "when gnuplot is found ($DATM_GNUPLOT, else gnuplot on PATH).\n");
}

int datm_cmd_figures(int argc, char **argv)
{
    const char *out = NULL;
    const char *runs[256];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "datm figures: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return DATM_EXIT_USAGE;
        } else if (n < 256) runs[n++] = argv[i];
    }
    if (!n) { usage(stderr); return DATM_EXIT_USAGE; }
    if (out && n > 1) {
        fprintf(stderr, "datm figures: --out takes one run\n");
        return DATM_EXIT_USAGE;
    }
    int rc = DATM_EXIT_OK;
    for (int i = 0; i < n; i++) {
        datm_error err = {0};
        int r;
        if (out) {
            char path[1024];
            int made = 0;
            r = datm_result_path(runs[i], path, sizeof path, &err);
            if (!r) r = datm_figures_for_result(path, out, &made, &err);
            if (!r) printf("%s: %d figure(s) in %s\n", runs[i], made, out);
        } else {
            r = datm_figures_for_run(runs[i], &err);
        }
        if (r) {
            fprintf(stderr, "datm figures: %s\n", err.msg);
            rc = DATM_EXIT_FAIL;
        }
    }
    return rc;
}
