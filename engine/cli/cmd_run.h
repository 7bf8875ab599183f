/* engine/cli/cmd_run.h: helpers shared by the spec-taking subcommands (run, check, resume,
 * sweep): argument splitting into spec path, key=value overrides and options. */
#ifndef DATM_CMD_RUN_H
#define DATM_CMD_RUN_H

#include <stdio.h>

#include "pipeline/pipeline.h"

typedef struct datm_cli_spec_args {
    const char *spec;                            /* SPEC.yaml */
    const char *overrides[DATM_MAX_OVERRIDES];   /* key.path=value */
    int         n_overrides;
    const char *out_dir;                         /* -o DIR */
    const char *threads;                         /* --threads N */
    int         quiet;
    int         help;
    int         overwrite;                       /* --overwrite */
} datm_cli_spec_args;

/* Parses argv[1..]: the spec, k=v overrides, -o DIR, --threads N, --quiet, --help. Options
 * in `extra` (NULL-terminated list of flag names) are skipped and left to the caller.
 * Returns 0 or prints a message and returns DATM_EXIT_USAGE. */
int datm_cli_parse_spec_args(int argc, char **argv, const char *const *extra,
                             datm_cli_spec_args *a);
/* Loads the spec with the overrides (+ threads=N from --threads); prints errors. */
int datm_cli_load_spec(const datm_cli_spec_args *a, datm_spec *spec);
/* The arguments of the commands that take RUN_DIR (resume, fork): RUN_DIR is the first word
 * after argv[0] that is not an option or an option's value (--threads, -o) and, when
 * with_overrides, not a key=value or ~key override (without them a directory name may hold
 * '=': sweep job directories do); the rest is parsed as datm_cli_parse_spec_args does.
 * *dir is NULL when there is none. Returns 0 or the exit code of a usage error. */
int datm_cli_parse_run_dir_args(int argc, char **argv, int with_overrides, const char **dir,
                                datm_cli_spec_args *a);
/* The prologue of the commands that take SPEC [k=v ...]: parse, --help (help(stdout)), a
 * missing SPEC (help(stderr)), load. Returns -1 with *spec loaded (caller frees it) when the
 * command should go on, else the exit code to return. */
int datm_cli_open_spec(int argc, char **argv, void (*help)(FILE *), datm_cli_spec_args *a,
                       datm_spec *spec);

/* Runs a loaded spec into its output.dir with the figures/topics hooks and a SIGINT
 * handler; returns the exit code. overwrite: datm_run_opts.overwrite. */
int  datm_cli_execute(const datm_spec *spec, int resume, int quiet, int argc, char **argv);
int  datm_cli_execute_ex(const datm_spec *spec, int resume, int quiet, int overwrite, int argc,
                         char **argv);
void datm_cli_fill_run_hooks(datm_run_opts *o);

/* ---- outputs of the commands that write files (cli_output.c) ----
 * An output file is refused (message, exit code returned; 0 = may write) when it is one of
 * `inputs`, a directory, inside a run directory, or exists (the last two unless overwrite).
 * An output directory is refused when it holds or lies in an input, is a file, cannot be
 * written, or is not empty without overwrite; *replace = 1 when it is not empty and overwrite
 * was given: write the new contents aside and datm_dir_replace them in. */
int datm_cli_output_file(const char *cmd, const char *out, const char *const *inputs, int n_inputs,
                         int overwrite);
int datm_cli_output_dir(const char *cmd, const char *out, const char *const *inputs, int n_inputs,
                        int overwrite, int *replace);
/* Writing a directory aside to replace OUT: stage = OUT.new.PID/<name of OUT> (created; the
 * same last name, so files that name their directory are right). end: when ok, stage replaces
 * OUT (datm_dir_replace); OUT.new.PID is removed either way. */
typedef struct datm_cli_stage {
    const char *final;
    char holder[1100], stage[1400];
} datm_cli_stage;
int datm_cli_stage_begin(const char *cmd, const char *out, datm_cli_stage *s);
int datm_cli_stage_end(datm_cli_stage *s, int ok, datm_error *err);

#endif
