/* engine/cli/cli_plugin.c: the plugins of one `datm` command: every `--plugin PATH.so` (any
 * command; run, describe, models and pipeline document it) and every plugin file in the
 * directories of DATM_PLUGIN_PATH, loaded into the registry before the command runs. The
 * --plugin files are put in front of DATM_PLUGIN_PATH so that the `datm run` processes a
 * pipeline or sweep starts load them too. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "pipeline/model.h"
#include "plugin/plugin.h"

static int fail(const datm_error *e)
{
    fprintf(stderr, "datm: %s\n", e->msg);
    return e->code == DATM_E_IO ? DATM_EXIT_FAIL : DATM_EXIT_USAGE;
}

static int so_name(const char *s)
{
    size_t n = strlen(s);
    return n > 3 && s[0] != '.' && !strcmp(s + n - 3, ".so");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.so of dir, in name order (so the registry's order does not depend on readdir). */
static int load_dir(const char *dir, datm_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return DATM_OK;   /* a directory that is not there holds no plugin (as PATH) */
    char *names[256];
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < 256;)
        if (so_name(de->d_name)) names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    int rc = DATM_OK;
    for (int i = 0; i < n; i++) {
        if (!rc && names[i]) {
            char p[4096], where[4200];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);
            snprintf(where, sizeof where, "DATM_PLUGIN_PATH (%s): ", dir);
            rc = datm_registry_load(p, NULL, where, err);
        }
        free(names[i]);
    }
    return rc;
}

int datm_cli_plugins(int *argc, char **argv)
{
    datm_error err = {0};
    char added[8192] = "";
    size_t o = 0;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--plugin")) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "datm: --plugin needs the path of a plugin file (PATH.so)\n");
                return DATM_EXIT_USAGE;
            }
            v = argv[++i];
        } else if (!strncmp(argv[i], "--plugin=", 9)) v = argv[i] + 9;
        else { argv[out++] = argv[i]; continue; }
        char path[4096];
        if (datm_plugin_resolve(v, NULL, path, sizeof path, &err) ||
            datm_registry_load(path, NULL, "", &err)) {
            datm_error_prefix(&err, "--plugin: ");
            return fail(&err);
        }
        if (o + strlen(path) + 2 < sizeof added)   /* the absolute file, for child processes */
            o += (size_t)snprintf(added + o, sizeof added - o, "%s%s", o ? ":" : "", path);
    }
    *argc = out;
    argv[out] = NULL;
    const char *env = getenv("DATM_PLUGIN_PATH");
    if (env && *env) {
        char buf[8192];
        snprintf(buf, sizeof buf, "%s", env);
        for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            struct stat st;
            int rc = DATM_OK;
            if (stat(d, &st) == 0 && S_ISREG(st.st_mode))
                rc = datm_registry_load(d, NULL, "DATM_PLUGIN_PATH: ", &err);
            else rc = load_dir(d, &err);
            if (rc) return fail(&err);
        }
    }
    if (added[0]) {
        char val[16384];
        snprintf(val, sizeof val, "%s%s%s", added, env && *env ? ":" : "", env ? env : "");
        setenv("DATM_PLUGIN_PATH", val, 1);
    }
    return DATM_EXIT_OK;
}
