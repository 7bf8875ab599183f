/* engine/cli/cmd_resume.c: `datm resume RUN_DIR` — continue a run from its last complete
 * checkpoint with the run's own spec.resolved.yaml; the finished run has the same metrics
 * as the run would have had uninterrupted (random streams are keyed by iteration). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "io/results_layout.h"

static void help(FILE *f)
{
    fprintf(f, "usage: datm resume RUN_DIR [--threads N] [--quiet]\n\n"
               "Continues the run in RUN_DIR from its newest complete checkpoint (from the start\n"
               "when there is none), using RUN_DIR/spec.resolved.yaml. A COMPLETED run is left\n"
               "alone. Exit 0 completed, 1 failed or interrupted, 2 usage error.\n");
}

int datm_cmd_resume(int argc, char **argv)
{
    /* no overrides: sweep job directories contain '=' */
    const char *dir = NULL;
    datm_cli_spec_args a;
    int rc = datm_cli_parse_run_dir_args(argc, argv, 0, &dir, &a);
    if (rc) return rc;
    if (a.help) { help(stdout); return DATM_EXIT_OK; }
    if (!dir || a.spec || a.n_overrides || a.out_dir) { help(stderr); return DATM_EXIT_USAGE; }
    if (a.overwrite) {
        fprintf(stderr, "datm resume: --overwrite is for 'datm run' (resume continues a run)\n");
        return DATM_EXIT_USAGE;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "datm resume: %s: %s\n", dir, stat(dir, &st) != 0 ? strerror(errno)
                                                                         : strerror(ENOTDIR));
        return DATM_EXIT_FAIL;
    }
    datm_error perr = {0};
    if (datm_run_finish_part(dir, &perr) < 0) {
        fprintf(stderr, "datm resume: %s\n", perr.msg);
        return DATM_EXIT_FAIL;
    }
    char status[64];
    datm_run_status_read(dir, status, sizeof status);
    if (!strcmp(status, "COMPLETED")) {
        /* an --overwrite run stopped between its completion and the swap: finish the swap */
        datm_error err = {0};
        if (datm_run_replace_finish(dir, &err)) {
            fprintf(stderr, "datm resume: %s\n", err.msg);
            return DATM_EXIT_FAIL;
        }
        printf("%s: already COMPLETED; nothing to resume\n", dir);
        char stage[1200];
        snprintf(stage, sizeof stage, "%s.new", dir);
        char target[1200];
        if (datm_rundir_replaces(stage, target, sizeof target))
            printf("(%s holds an unfinished run that is to replace it: datm resume %s)\n", dir,
                   stage);
        return DATM_EXIT_OK;
    }
    char spec_file[1200];
    snprintf(spec_file, sizeof spec_file, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
    if (stat(spec_file, &st) != 0) {
        fprintf(stderr, "datm resume: %s is not a run directory (no %s: %s)\n", dir,
                DATM_RESULT_SPEC_FILE, strerror(errno));
        return DATM_EXIT_FAIL;
    }
    char spec_path[1200];
    snprintf(spec_path, sizeof spec_path, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
    datm_cli_spec_args b = a;
    b.spec = spec_path;
    b.out_dir = dir;
    datm_spec spec;
    rc = datm_cli_load_spec(&b, &spec);
    if (rc) return rc;
    if (!a.quiet) fprintf(stderr, "resume %s (status %s)\n", dir, status);
    rc = datm_cli_execute(&spec, 1, a.quiet, argc, argv);
    datm_spec_free(&spec);
    return rc;
}
