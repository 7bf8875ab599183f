/* engine/cli/cmd_fork.c: `datm fork RUN_DIR -o NEW_DIR [key.path=value ...]` — a new run that
 * starts from one of RUN_DIR's checkpoints under RUN_DIR's spec with some keys changed: to see
 * what a change of settings does from one state of a long run (a step size, a clip, more
 * epochs) without training the run's first part again. RUN_DIR is only read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "io/results_layout.h"
#include "pipeline/pipeline.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: datm fork RUN_DIR -o NEW_DIR [key.path=value ...] [--iteration N]\n"
            "                 [--threads N] [--quiet]\n\n"
            "Starts a new run in NEW_DIR (which must not exist, or be empty) from a checkpoint\n"
            "of RUN_DIR, the newest complete one or the one after N mini-batches\n"
            "(--iteration N; RUN_DIR/checkpoints/ckpt-<N>.h5), with RUN_DIR/spec.resolved.yaml\n"
            "and the overrides, and runs it to the end like `datm resume`. RUN_DIR is only read.\n"
            "The model's shapes must stay (another shape is refused when the checkpoint is\n"
            "read); the random streams are keyed by iteration, so with no override the new\n"
            "run repeats RUN_DIR's. Runs keep checkpoints only with train.checkpoint_every > 0.\n"
            "Exit 0 completed, 1 failed or interrupted, 2 usage error.\n");
}

/* NEW_DIR is fresh: missing (then created) or an empty directory. */
static int fresh_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) return mkdir(dir, 0777) == 0;
    if (!S_ISDIR(st.st_mode)) return 0;
    char probe[1300];
    snprintf(probe, sizeof probe, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
    if (stat(probe, &st) == 0) return 0;
    snprintf(probe, sizeof probe, "%s/checkpoints", dir);
    return stat(probe, &st) != 0;
}

int datm_cmd_fork(int argc, char **argv)
{
    /* --iteration N is this command's own; the rest as resume's, with overrides */
    const char *dir = NULL, *iter_s = NULL;
    char *args[DATM_MAX_OVERRIDES + 16];
    int nargs = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--iteration")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "datm fork: --iteration needs a number\n");
                return DATM_EXIT_USAGE;
            }
            iter_s = argv[++i];
        } else if (!strncmp(argv[i], "--iteration=", 12)) {
            iter_s = argv[i] + 12;
        } else if (nargs < (int)(sizeof args / sizeof args[0]) - 1) {
            args[nargs++] = argv[i];
        } else {
            fprintf(stderr, "datm fork: too many arguments\n");
            return DATM_EXIT_USAGE;
        }
    }
    args[nargs] = NULL;
    datm_cli_spec_args a;
    int rc = datm_cli_parse_run_dir_args(nargs, args, 1, &dir, &a);
    if (rc) return rc;
    if (a.help) { help(stdout); return DATM_EXIT_OK; }
    if (!dir || a.spec || !a.out_dir) { help(stderr); return DATM_EXIT_USAGE; }
    long long iteration = -1;
    if (iter_s) {
        char *end = NULL;
        errno = 0;
        iteration = strtoll(iter_s, &end, 10);
        if (errno || !end || *end || iteration < 0) {
            fprintf(stderr, "datm fork: --iteration '%s' is not a mini-batch count\n", iter_s);
            return DATM_EXIT_USAGE;
        }
    }
    datm_error err = {0};
    char ckpt[1300];
    int64_t it = iteration;
    rc = iteration >= 0 ? datm_checkpoint_at(dir, iteration, ckpt, sizeof ckpt, &err)
                        : datm_checkpoint_latest(dir, ckpt, sizeof ckpt, &it, &err);
    if (rc) {
        fprintf(stderr, "datm fork: %s\n", err.msg);
        return DATM_EXIT_FAIL;
    }
    if (!fresh_dir(a.out_dir)) {
        fprintf(stderr, "datm fork: %s exists and is not empty (a fork writes a new run)\n",
                a.out_dir);
        return DATM_EXIT_USAGE;
    }
    char spec_path[1200];
    snprintf(spec_path, sizeof spec_path, "%s/%s", dir, DATM_RESULT_SPEC_FILE);
    datm_cli_spec_args b = a;
    b.spec = spec_path;
    datm_spec spec;
    rc = datm_cli_load_spec(&b, &spec);
    if (rc) return rc;
    if (datm_checkpoint_fork(ckpt, a.out_dir, &spec, &it, &err)) {
        fprintf(stderr, "datm fork: %s\n", err.msg);
        datm_spec_free(&spec);
        return DATM_EXIT_FAIL;
    }
    if (!a.quiet)
        fprintf(stderr, "fork %s after iteration %lld -> %s (%d override%s)\n", dir,
                (long long)it, a.out_dir, a.n_overrides, a.n_overrides == 1 ? "" : "s");
    rc = datm_cli_execute(&spec, 1, a.quiet, argc, argv);
    datm_spec_free(&spec);
    return rc;
}
