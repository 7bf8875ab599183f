/* engine/cli/cli.h: the `datm` command's subcommands. Each subcommand lives in its own
 * cmd_<name>.c, exports one datm_cmd_<name>() and is listed once in the table in main.c.
 * A subcommand returns the process exit code: 0 ok, 1 failure, 2 usage or spec error
 * (77 = skipped, for check-metrics). Every subcommand handles --help. */
#ifndef DATM_CLI_H
#define DATM_CLI_H

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

#endif
