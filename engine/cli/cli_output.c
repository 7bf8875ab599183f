/* engine/cli/cli_output.c: where the commands that write files may write (cmd_run.h). An
 * output is never one of the command's inputs, never inside a run directory, and never an
 * existing file or a non-empty directory unless the user says --overwrite; and with it, a
 * directory is replaced only once its replacement is complete (datm_dir_replace). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "io/results_layout.h"
#include "pipeline/pipeline.h"

/* The absolute form of path, which need not exist: realpath of its directory + its name. */
static int abs_path(const char *path, char *out, size_t size)
{
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
    if (realpath(dir, real)) return snprintf(out, size, "%s", real) < (int)size;
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : dir;
    if (slash == dir) snprintf(real, sizeof real, "/");
    else if (!slash) { if (!realpath(".", real)) return 0; }
    else { *slash = '\0'; if (!realpath(dir, real)) return 0; }
    return snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", base) < (int)size;
}

/* 1 when a is b or lies inside b (both absolute). */
static int within(const char *a, const char *b)
{
    size_t n = strlen(b);
    return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/' || !strcmp(b, "/"));
}

/* 1 when dir looks like a run directory (datm wrote its spec or result there). */
static int is_run_dir(const char *dir)
{
    static const char *const marks[] = {DATM_RESULT_SPEC_FILE, DATM_RESULT_FILE,
                                        DATM_RESULT_FILE ".part", "checkpoints"};
    for (size_t i = 0; i < DATM_COUNTOF(marks); i++) {
        char p[PATH_MAX + 64];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, marks[i]);
        if (stat(p, &st) == 0) return 1;
    }
    return 0;
}

int datm_cli_output_file(const char *cmd, const char *out, const char *const *inputs, int n_inputs,
                         int overwrite)
{
    char ao[PATH_MAX];
    if (!abs_path(out, ao, sizeof ao)) {
        fprintf(stderr, "datm %s: %s: %s\n", cmd, out, strerror(errno ? errno : ENOENT));
        return DATM_EXIT_FAIL;
    }
    struct stat so, si;
    const int exists = stat(out, &so) == 0;
    for (int i = 0; i < n_inputs; i++) {
        char ai[PATH_MAX];
        if (!inputs[i]) continue;
        int same = exists && stat(inputs[i], &si) == 0 && si.st_dev == so.st_dev &&
                   si.st_ino == so.st_ino;
        if (!same && abs_path(inputs[i], ai, sizeof ai)) same = !strcmp(ai, ao);
        if (same) {
            fprintf(stderr, "datm %s: -o %s is an input of this command (%s); choose another "
                            "output\n", cmd, out, inputs[i]);
            return DATM_EXIT_USAGE;
        }
    }
    if (exists && S_ISDIR(so.st_mode)) {
        fprintf(stderr, "datm %s: -o %s: %s (a file name is needed)\n", cmd, out, strerror(EISDIR));
        return DATM_EXIT_FAIL;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", ao);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = slash == parent ? (slash[1] = '\0', '/') : '\0';
    struct stat sp;
    int why = stat(parent, &sp) != 0 ? errno : !S_ISDIR(sp.st_mode) ? ENOTDIR
            : access(parent, W_OK | X_OK) != 0 ? errno : 0;
    if (why) {
        fprintf(stderr, "datm %s: -o %s: cannot write in %s (%s)\n", cmd, out, parent,
                strerror(why));
        return DATM_EXIT_FAIL;
    }
    if (is_run_dir(parent) && !overwrite) {
        fprintf(stderr, "datm %s: -o %s is inside the run directory %s, which only its run "
                        "writes; choose a path outside it, or pass --overwrite\n", cmd, out,
                parent);
        return DATM_EXIT_FAIL;
    }
    if (exists && !overwrite) {
        fprintf(stderr, "datm %s: %s exists; it is left as it is: choose another -o, or pass "
                        "--overwrite to replace it (it is replaced only when the new file is "
                        "complete)\n", cmd, out);
        return DATM_EXIT_FAIL;
    }
    return DATM_EXIT_OK;
}

int datm_cli_output_dir(const char *cmd, const char *out, const char *const *inputs, int n_inputs,
                        int overwrite, int *replace)
{
    *replace = 0;
    char ao[PATH_MAX];
    if (!abs_path(out, ao, sizeof ao)) {
        fprintf(stderr, "datm %s: %s: %s\n", cmd, out, strerror(errno ? errno : ENOENT));
        return DATM_EXIT_FAIL;
    }
    for (int i = 0; i < n_inputs; i++) {
        char ai[PATH_MAX];
        if (!inputs[i] || !abs_path(inputs[i], ai, sizeof ai)) continue;
        if (within(ao, ai) || within(ai, ao)) {
            fprintf(stderr, "datm %s: the output %s %s the input %s; choose another output\n",
                    cmd, out, within(ao, ai) ? "lies in" : "holds", inputs[i]);
            return DATM_EXIT_USAGE;
        }
    }
    struct stat st;
    if (stat(out, &st) != 0) {
        /* created by the command: its nearest existing ancestor must take it */
        char anc[PATH_MAX];
        snprintf(anc, sizeof anc, "%s", ao);
        for (char *slash; (slash = strrchr(anc, '/')) != NULL;) {
            if (slash == anc) { anc[1] = '\0'; break; }
            *slash = '\0';
            if (stat(anc, &st) == 0) break;
        }
        int why = stat(anc, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR
                : access(anc, W_OK | X_OK) != 0 ? errno : 0;
        if (why) {
            fprintf(stderr, "datm %s: %s: cannot create directory in %s (%s)\n", cmd, out, anc,
                    strerror(why));
            return DATM_EXIT_FAIL;
        }
        return DATM_EXIT_OK;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "datm %s: %s: %s (the output is a directory)\n", cmd, out, strerror(ENOTDIR));
        return DATM_EXIT_FAIL;
    }
    if (access(out, W_OK | X_OK) != 0) {
        fprintf(stderr, "datm %s: %s: cannot write (%s)\n", cmd, out, strerror(errno));
        return DATM_EXIT_FAIL;
    }
    DIR *d = opendir(out);
    if (!d) {
        fprintf(stderr, "datm %s: %s: cannot list (%s)\n", cmd, out, strerror(errno));
        return DATM_EXIT_FAIL;
    }
    char first[256] = "";
    for (struct dirent *e; !first[0] && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "run.lock"))
            snprintf(first, sizeof first, "%s", e->d_name);
    closedir(d);
    if (!first[0]) return DATM_EXIT_OK;
    if (!overwrite) {
        fprintf(stderr, "datm %s: %s is not empty (it holds '%s'); it is left as it is: choose "
                        "another output, or pass --overwrite to replace it (it is replaced only "
                        "when the new one is complete)\n", cmd, out, first);
        return DATM_EXIT_FAIL;
    }
    *replace = 1;
    return DATM_EXIT_OK;
}

int datm_cli_stage_begin(const char *cmd, const char *out, datm_cli_stage *s)
{
    memset(s, 0, sizeof s[0]);
    s->final = out;
    char name[256];
    snprintf(name, sizeof name, "%s", out);
    size_t n = strlen(name);
    while (n > 1 && name[n - 1] == '/') name[--n] = '\0';
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    snprintf(s->holder, sizeof s->holder, "%.*s.new.%ld", (int)n, out, (long)getpid());
    snprintf(s->stage, sizeof s->stage, "%s/%s", s->holder, base);
    if (mkdir(s->holder, 0777) != 0) {
        fprintf(stderr, "datm %s: %s: cannot create directory (%s)\n", cmd, s->holder,
                strerror(errno));
        return DATM_EXIT_FAIL;
    }
    return DATM_EXIT_OK;
}

int datm_cli_stage_end(datm_cli_stage *s, int ok, datm_error *err)
{
    int rc = DATM_OK;
    if (ok) rc = datm_dir_replace(s->stage, s->final, err);
    datm_error e = {0};
    datm_dir_remove(s->holder, &e);
    return rc;
}
