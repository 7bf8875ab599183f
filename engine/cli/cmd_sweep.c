/* engine/cli/cmd_sweep.c: `datm sweep SPEC key=a,b,c other=range(0,5) [-o DIR] [--resume]
 * [--on-error continue|stop]` — a cartesian product of runs with a manifest. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: datm sweep SPEC.yaml key=a,b,c other=range(0,5) [fixed=value ...]\n"
            "                  [-o DIR] [--resume] [--on-error continue|stop] [--threads N] [--quiet]\n\n"
            "Runs the cartesian product of the listed values (first key varies slowest), one run\n"
            "directory per job, DIR/<num>_<key=value,...>/ (DIR defaults to results/sweeps/<spec>).\n"
            "Values: a,b,c (commas inside [...] belong to a list value) or range(start,stop[,step])\n"
            "(integers, stop excluded); a key with one value is a fixed override of every job.\n"
            "Every job's spec is validated first. DIR/sweep.yaml lists each job's overrides, spec\n"
            "hash and status. --resume skips COMPLETED jobs, resumes jobs with a checkpoint and\n"
            "refuses when the definition changed. Exit 0 when every job completed, else 1.\n");
}

static void on_sigint(int sig)
{
    (void)sig;
    datm_stop_request();
}

int datm_cmd_sweep(int argc, char **argv)
{
    static const char *const extra[] = {"--resume", "--on-error ", NULL};
    datm_cli_spec_args a;
    int rc = datm_cli_parse_spec_args(argc, argv, extra, &a);
    if (rc) return rc;
    if (a.help) { help(stdout); return DATM_EXIT_OK; }
    datm_sweep_opts o;
    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--resume")) o.resume = 1;
        else if (!strncmp(argv[i], "--on-error", 10)) {
            const char *v = argv[i][10] == '=' ? argv[i] + 11 : (i + 1 < argc ? argv[++i] : "");
            if (!strcmp(v, "stop")) o.on_error = DATM_SWEEP_ON_ERROR_STOP;
            else if (!strcmp(v, "continue")) o.on_error = DATM_SWEEP_ON_ERROR_CONTINUE;
            else {
                fprintf(stderr, "datm sweep: --on-error takes continue or stop, not '%s'\n", v);
                return DATM_EXIT_USAGE;
            }
        }
    }
    if (!a.spec) { help(stderr); return DATM_EXIT_USAGE; }
    char dir[1200], exe[1200];
    if (a.out_dir) snprintf(dir, sizeof dir, "%s", a.out_dir);
    else {
        const char *b = strrchr(a.spec, '/');
        b = b ? b + 1 : a.spec;
        snprintf(dir, sizeof dir, "results/sweeps/%s", b);
        char *dot = strrchr(dir, '.');
        if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"))) *dot = '\0';
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) snprintf(exe, sizeof exe, "%s", argv[0]);
    else exe[n] = '\0';
    o.spec_path = a.spec;
    o.args = a.overrides;
    o.n_args = a.n_overrides;
    o.dir = dir;
    o.quiet = a.quiet;
    o.datm_exe = exe;
    o.threads = a.threads;
    if (a.quiet) datm_log_set_level(DATM_LOG_WARN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_error err = {0};
    rc = datm_sweep(&o, &cat, &err);
    if (rc) {
        fprintf(stderr, "datm sweep: %s\n", err.msg);
        return rc == DATM_E_INVALID && !strstr(err.msg, "did not complete") ? DATM_EXIT_USAGE
                                                                            : DATM_EXIT_FAIL;
    }
    printf("%s/sweep.yaml: every job COMPLETED\n", dir);
    return DATM_EXIT_OK;
}
