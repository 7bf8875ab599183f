/* engine/cli/cli.h: the `datm` command's subcommands. Each subcommand lives in its own
 * cmd_<name>.c, exports one datm_cmd_<name>() and is listed once in the table in main.c.
 * A subcommand returns the process exit code: 0 ok, 1 failure, 2 usage or spec error
 * (77 = skipped, for check-metrics). Every subcommand handles --help. */
#ifndef DATM_CLI_H
#define DATM_CLI_H

#include <stdio.h>

typedef struct datm_cli_command {
    const char *name;
    const char *summary;                  /* one line for `datm --help` */
    int (*run)(int argc, char **argv);    /* argv[0] is the subcommand name */
} datm_cli_command;

enum { DATM_EXIT_OK = 0, DATM_EXIT_FAIL = 1, DATM_EXIT_USAGE = 2, DATM_EXIT_SKIP = 77 };

/* `--threads N` (cli_threads.c): sets OpenMP's and OpenBLAS's thread counts; DATM_EXIT_USAGE
 * with a message naming command `cmd` when N is not a positive integer. */
int datm_cli_threads(const char *cmd, const char *value);

/* Loads the plugins of this command (cli_plugin.c): takes every `--plugin PATH.so` out of
 * argv (argc shrinks), then the plugin files of DATM_PLUGIN_PATH. DATM_EXIT_OK, or the exit
 * code after printing the error. */
int datm_cli_plugins(int *argc, char **argv);

/* Writers for machine-readable output (cli_write.c): a JSON string (escaped, quoted), a JSON
 * number with `digits` significant digits (null when not finite), a CSV field (quoted when it
 * holds a comma, quote or newline), a markdown table cell ('|' escaped, newlines as spaces). */
void datm_cli_json_num(FILE *f, double v, int digits);
void datm_cli_md_str(FILE *f, const char *s);

#endif
