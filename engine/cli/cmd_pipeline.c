/* engine/cli/cmd_pipeline.c: `datm pipeline run|status|report PIPE` — runs, states and the
 * report of a pipeline file (engine/pipeline/pipefile.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pipeline/pipefile.h"
#include "pipeline/report.h"

enum { EXIT_CLAIMS = 3 };

static void help(FILE *f)
{
    fprintf(f,
        "usage: datm pipeline run PIPE.yaml [--profile P] [-j N] [--threads T] [--only REGEX] [-o DIR]\n"
        "                         [--cache DIR] [--dry] [--force] [--strict] [--quiet]\n"
        "                         [--plugin PATH.so]\n"
        "       datm pipeline status PIPE.yaml [--profile P] [-o DIR]\n"
        "       datm pipeline report PIPE.yaml [--profile P] [-o DIR] [--strict]\n\n"
        "A pipeline file lists runs (single specs with overrides, or a matrix of axes), named\n"
        "profiles of overrides, and the tables, figures and claims made from the runs\n"
        "(README: Pipelines). Every run is cached by a key over what it computes: the\n"
        "engine's numerics version, its settings that differ from the defaults, and the\n"
        "content hashes of its data files. A COMPLETED run with the same key is reused,\n"
        "never rerun; an interrupted one resumes from its checkpoint.\n\n"
        "Run records: every report also writes OUT/records/<id>.h5 for each finished run, a\n"
        "small copy of what the report reads of it (metrics, curves, the datasets its tables\n"
        "and figures use) with the run's cache key. They are committed with the report, so\n"
        "that where the cache is not (another machine, a fresh clone) the report regenerates\n"
        "and the pipeline continues without rerunning a finished run: a run that is not\n"
        "COMPLETED in the cache but has a record with its current key counts as finished\n"
        "(status recorded). A record with another key (a changed setting or data file) is\n"
        "stale and ignored: the run is pending. A COMPLETED run in the cache wins over its\n"
        "record; --force reruns a recorded run too, and the next report replaces its record.\n\n"
        "run       runs what is neither cached nor recorded (independent runs at once within\n"
        "          the core budget, each logging to OUT/logs/<id>.log), links each run as\n"
        "          OUT/runs/<id>, then writes the report into OUT (the profile's out:, else\n"
        "          the file's out:, else results/<name>).\n"
        "          Killed or interrupted, it stops every run at a checkpoint; run it again to\n"
        "          continue.\n"
        "status    one line per run: pending, done, cached, running, failed, resumable,\n"
        "          partial or recorded, with its cache key and directory (done: linked from\n"
        "          OUT/runs; recorded: its record).\n"
        "report    (re)writes the report from the runs as they are (unfinished ones show as\n"
        "          missing): REPORT.md (runs, tables, figures, claims with their numbers),\n"
        "          runs.csv (one row per run with every metric), tables/ID.{md,csv,json},\n"
        "          figures/ID.{png,svg,dat,gp}, claims.{md,json} and records/ID.h5. Only those\n"
        "          files change: another report may live in a folder inside OUT.\n\n"
        "--profile P   the profile's overrides and out: (default: the file's default_profile)\n"
        "-j N          core budget (default 1); runs at once = N / threads\n"
        "--threads T   threads per run (default: the file's threads:, else 1)\n"
        "--only REGEX  only the runs whose id matches (and the members of chosen ensembles)\n"
        "--dry         print what would run and the cache keys; run nothing\n"
        "--plugin P    load a plugin's model variants (also DATM_PLUGIN_PATH; the runs load\n"
        "              them too; a plugin's content is part of its runs' cache keys)\n"
        "--force       rerun cached and recorded runs too (each old result is kept until its\n"
        "              new one is COMPLETED; the report then replaces its record)\n"
        "--strict      exit 3 when a claim (not marked informative) is not reproduced or\n"
        "              cannot be evaluated\n"
        "-o DIR        the output folder: report, runs/ links, logs/ (default: the profile's\n"
        "              out:, else the file's out:, else results/<name>)\n"
        "--cache DIR   the run cache (default: the file's cache:, else $DATM_CACHE, else\n"
        "              .cache/runs)\n\n"
        "Exit: 0 every run completed (and, with --strict, every claim reproduced); 1 a run\n"
        "failed or was interrupted, or the report could not be written; 2 a bad pipeline\n"
        "file (claims included) or usage; 3 (--strict) a claim not reproduced.\n");
}

typedef struct pipe_args {
    const char *verb, *file, *profile, *only, *out, *cache;
    int jobs, threads, dry, force, strict, quiet;
} pipe_args;

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, pipe_args *a)
{
    memset(a, 0, sizeof *a);
    a->jobs = 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) { help(stdout); return DATM_EXIT_OK; }
#define VALUE(flag)                                                                        \
    if (!v) { fprintf(stderr, "datm pipeline: %s needs a value\n", flag); return DATM_EXIT_USAGE; } \
    i++
        if (!strcmp(s, "--profile")) { VALUE(s); a->profile = v; }
        else if (!strcmp(s, "--only")) { VALUE(s); a->only = v; }
        else if (!strcmp(s, "-o")) { VALUE(s); a->out = v; }
        else if (!strcmp(s, "--cache")) { VALUE(s); a->cache = v; }
        else if (!strcmp(s, "-j") || !strcmp(s, "--threads")) {
            VALUE(s);
            if (parse_int(v, 1, 4096, s[1] == 'j' ? &a->jobs : &a->threads)) {
                fprintf(stderr, "datm pipeline: %s '%s': expected a whole number >= 1\n", s, v);
                return DATM_EXIT_USAGE;
            }
        } else if (!strncmp(s, "-j", 2) && s[2]) {
            if (parse_int(s + 2, 1, 4096, &a->jobs)) {
                fprintf(stderr, "datm pipeline: '%s': expected -j N\n", s);
                return DATM_EXIT_USAGE;
            }
        }
        else if (!strcmp(s, "--dry")) a->dry = 1;
        else if (!strcmp(s, "--force")) a->force = 1;
        else if (!strcmp(s, "--strict")) a->strict = 1;
        else if (!strcmp(s, "--quiet")) a->quiet = 1;
        else if (s[0] == '-') {
            fprintf(stderr, "datm pipeline: unknown option '%s' (see datm pipeline --help)\n", s);
            return DATM_EXIT_USAGE;
        } else if (!a->verb) a->verb = s;
        else if (!a->file) a->file = s;
        else {
            fprintf(stderr, "datm pipeline: unexpected argument '%s'\n", s);
            return DATM_EXIT_USAGE;
        }
#undef VALUE
    }
    if (!a->verb || !a->file) {
        help(stderr);
        return DATM_EXIT_USAGE;
    }
    if (strcmp(a->verb, "run") && strcmp(a->verb, "status") && strcmp(a->verb, "report")) {
        fprintf(stderr, "datm pipeline: unknown action '%s': run, status or report\n", a->verb);
        return DATM_EXIT_USAGE;
    }
    return -1;
}

/* Writes the report and prints the claims' tally; returns the exit code the report alone
 * calls for (0, 2 for a claim that does not parse, 1 for an unwritable report, 3 under
 * --strict for a claim not reproduced or not evaluable). */
static int write_report(const datm_pipeline *p, const datm_pipe_state *st, const pipe_args *a)
{
    const char *out = p->out_dir;
    datm_claims_summary sum;
    datm_error err = {0};
    if (datm_pipeline_report(p, st, out, &sum, &err)) {
        fprintf(stderr, "datm pipeline: report: %s\n", err.msg);
        return err.code == DATM_E_INVALID ? DATM_EXIT_USAGE : DATM_EXIT_FAIL;
    }
    printf("report: %s/REPORT.md", out);
    if (p->n_claims)
        printf("; claims: %d reproduced, %d not reproduced, %d not evaluable",
               sum.n[DATM_CLAIM_REPRODUCED], sum.n[DATM_CLAIM_NOT_REPRODUCED],
               sum.n[DATM_CLAIM_NOT_EVALUABLE]);
    if (sum.n[DATM_CLAIM_SHOWN]) printf(", %d shown (judged by eye)", sum.n[DATM_CLAIM_SHOWN]);
    printf("\n");
    if (a->strict && (sum.n_strict_not_reproduced || sum.n_strict_not_evaluable)) {
        fprintf(stderr, "datm pipeline: --strict: %d claim(s) not reproduced, %d not evaluable "
                "(%s/claims.md)\n", sum.n_strict_not_reproduced, sum.n_strict_not_evaluable, out);
        return EXIT_CLAIMS;
    }
    return DATM_EXIT_OK;
}

static int cmd_status(const datm_pipeline *p, const datm_pipe_state *st)
{
    int counts[DATM_PIPE_STATUS_COUNT_] = {0};
    printf("# pipeline %s%s%s: %d runs; cache %s; out %s\n", p->name,
           p->profile[0] ? ", profile " : "", p->profile, p->n_runs, p->cache_dir, p->out_dir);
    for (int i = 0; i < p->n_runs; i++) {
        const datm_pipe_state *s = &st[i];
        counts[s->status]++;
        char extra[64] = "";
        if (s->status == DATM_PIPE_RESUMABLE)
            snprintf(extra, sizeof extra, " (checkpoint at %lld)", (long long)s->ckpt_iteration);
        if (s->status == DATM_PIPE_RUNNING) snprintf(extra, sizeof extra, " (pid %ld)", s->pid);
        const char *where = s->status == DATM_PIPE_RECORDED ? s->record : s->dir;
        printf("%-9s %-30s %.16s  %s%s\n", datm_pipe_status_name(s->status), p->runs[i].id, s->key,
               where, extra);
    }
    printf("#");
    for (int k = 0; k < DATM_PIPE_STATUS_COUNT_; k++)
        if (counts[k]) printf(" %s %d", datm_pipe_status_name((datm_pipe_status)k), counts[k]);
    printf("\n");
    return DATM_EXIT_OK;
}

int datm_cmd_pipeline(int argc, char **argv)
{
    pipe_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    if (a.quiet) datm_log_set_level(DATM_LOG_WARN);
    datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_pipeline p;
    datm_error err = {0};
    if (datm_pipeline_load(a.file, a.profile, &cat, &p, &err)) {
        fprintf(stderr, "datm pipeline: %s\n", err.msg);
        return err.code == DATM_E_NOMEM || err.code == DATM_E_IO ? DATM_EXIT_FAIL : DATM_EXIT_USAGE;
    }
    if (a.cache) snprintf(p.cache_dir, sizeof p.cache_dir, "%s", a.cache);
    if (a.out) snprintf(p.out_dir, sizeof p.out_dir, "%s", a.out);
    int exit_code = DATM_EXIT_OK;
    datm_pipe_state *st = calloc((size_t)p.n_runs, sizeof *st);
    datm_filehash_cache fc;
    if (!st) {
        fprintf(stderr, "datm pipeline: out of memory\n");
        datm_pipeline_free(&p);
        return DATM_EXIT_FAIL;
    }
    if (datm_filehash_open(p.cache_dir, &fc, &err) ||
        datm_pipeline_states(&p, &cat, &fc, st, &err)) {
        fprintf(stderr, "datm pipeline: %s\n", err.msg);
        exit_code = DATM_EXIT_FAIL;
        goto done;
    }
    if (!strcmp(a.verb, "status")) {
        exit_code = cmd_status(&p, st);
    } else if (!strcmp(a.verb, "run")) {
        if (datm_pipeline_select(&p, a.only, &err) < 0) {
            fprintf(stderr, "datm pipeline: %s\n", err.msg);
            exit_code = DATM_EXIT_USAGE;
            goto done;
        }
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) snprintf(exe, sizeof exe, "%s", argv[0]);
        else exe[n] = '\0';
        datm_pipe_exec_opts o = {.jobs = a.jobs, .threads = a.threads, .force = a.force,
                                 .dry = a.dry, .quiet = a.quiet, .only = a.only, .datm_exe = exe};
        int n_failed = 0;
        if (datm_pipeline_execute(&p, &cat, &o, st, &n_failed, &err)) {
            fprintf(stderr, "datm pipeline: %s\n", err.msg);
            exit_code = DATM_EXIT_FAIL;
        } else {
            if (n_failed) exit_code = DATM_EXIT_FAIL;
            if (!a.dry) {
                int rc = write_report(&p, st, &a);
                if (exit_code == DATM_EXIT_OK) exit_code = rc;
            }
        }
    } else {
        exit_code = write_report(&p, st, &a);
    }
done:
    if (fc.path[0]) {
        datm_error e2 = {0};
        if (datm_filehash_save(&fc, &e2)) fprintf(stderr, "datm pipeline: warning: %s\n", e2.msg);
        datm_filehash_free(&fc);
    }
    free(st);
    datm_pipeline_free(&p);
    return exit_code;
}
