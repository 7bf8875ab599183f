/* engine/pipeline/rundir.c: what `datm run` may do with its output directory. A finished run
 * is never modified without --overwrite, and even then it stays whole until its replacement
 * is COMPLETED; an unfinished run with a checkpoint is resumed, never silently restarted; a
 * directory holding files datm did not write is not a run directory at all.
 *
 * --overwrite writes the new run aside, into DIR.new (with DIR.new/replaces.txt naming DIR),
 * and when it is COMPLETED exchanges the two directories in one step (renameat2
 * RENAME_EXCHANGE; two renames where the file system lacks it), then removes the old run. A
 * crash before the exchange leaves DIR as it was and DIR.new resumable; `datm resume DIR.new`
 * finishes the replacement. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/results_layout.h"
#include "pipeline/run_internal.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* Every name datm writes into a run directory (and their temporaries, NAME.tmp...);
 * report.html is where ci/main.sh puts `datm report`'s page. */
static const char *const run_entries[] = {
    DATM_RESULT_SPEC_FILE, "overrides.txt", "run.log", "report.md", "figures", "checkpoints",
    DATM_RESULT_FILE, DATM_RESULT_FILE ".part", DATM_RUN_LOCK_FILE, DATM_RUN_REPLACES_FILE,
    "members.txt", "metrics.json", "params.yaml", "report.html", NULL};

static int is_run_entry(const char *name)
{
    for (int i = 0; run_entries[i]; i++) {
        size_t n = strlen(run_entries[i]);
        if (!strncmp(name, run_entries[i], n) && (name[n] == '\0' || !strncmp(name + n, ".tmp", 4)))
            return 1;
    }
    return 0;
}

static int path_exists(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p) return 0;
    struct stat st;
    return lstat(p, &st) == 0;
}

int datm_rundir_inspect(const char *dir, datm_rundir_state *s, datm_error *err)
{
    memset(s, 0, sizeof *s);
    s->ckpt_iter = -1;
    snprintf(s->status, sizeof s->status, "MISSING");
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) return DATM_OK;
        return datm_error_set(err, DATM_E_IO, "%s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return datm_error_set(err, DATM_E_IO, "%s: %s (the run's output must be a directory)", dir,
                              strerror(ENOTDIR));
    s->exists = 1;
    DIR *d = opendir(dir);
    if (!d) return datm_error_set(err, DATM_E_IO, "%s: cannot list (%s)", dir, strerror(errno));
    s->empty = 1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (!strcmp(e->d_name, DATM_RUN_LOCK_FILE)) continue;   /* ours, or a dead writer's */
        s->empty = 0;
        if (!is_run_entry(e->d_name) && !s->foreign[0])
            snprintf(s->foreign, sizeof s->foreign, "%s", e->d_name);
    }
    closedir(d);
    s->has_result = path_exists(dir, DATM_RESULT_FILE);
    s->has_marker = path_exists(dir, DATM_RUN_REPLACES_FILE);
    datm_run_status_read(dir, s->status, sizeof s->status);
    char path[1300];
    int64_t it;
    datm_error e = {0};
    datm_log_level lv = datm_log_get_level();
    datm_log_set_level(DATM_LOG_ERROR);   /* "incomplete checkpoint, skipped" is not news here */
    if (datm_checkpoint_latest(dir, path, sizeof path, &it, &e) == DATM_OK) s->ckpt_iter = it;
    datm_log_set_level(lv);
    return DATM_OK;
}

int datm_rundir_rm_tree(const char *path, datm_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return DATM_OK;
        return datm_error_set(err, DATM_E_IO, "%s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return datm_error_set(err, DATM_E_IO, "%s: cannot list (%s)", path, strerror(errno));
        int rc = DATM_OK;
        for (struct dirent *e; !rc && (e = readdir(d)) != NULL;) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[PATH_MAX];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rc = datm_rundir_rm_tree(sub, err);
        }
        closedir(d);
        if (rc) return rc;
        if (rmdir(path) != 0)
            return datm_error_set(err, DATM_E_IO, "%s: cannot remove (%s)", path, strerror(errno));
        return DATM_OK;
    }
    if (unlink(path) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot remove (%s)", path, strerror(errno));
    return DATM_OK;
}

int datm_dir_remove(const char *path, datm_error *err)
{
    return datm_rundir_rm_tree(path, err);
}

int datm_rundir_clean(const char *dir, datm_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return datm_error_set(err, DATM_E_IO, "%s: cannot list (%s)", dir, strerror(errno));
    int rc = DATM_OK;
    for (struct dirent *e; !rc && (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            !strcmp(e->d_name, DATM_RUN_LOCK_FILE) || !is_run_entry(e->d_name))
            continue;
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        rc = datm_rundir_rm_tree(sub, err);
    }
    closedir(d);
    return rc;
}

/* The directory's absolute path without a trailing '/', or an error naming it. */
static int abs_dir(const char *dir, char *out, size_t size, datm_error *err)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return datm_error_set(err, DATM_E_IO, "%s: %s", dir, strerror(errno));
    if (strlen(real) + 8 >= size)
        return datm_error_set(err, DATM_E_INVALID, "%s: path too long", real);
    snprintf(out, size, "%s", real);
    return DATM_OK;
}

int datm_rundir_stage(const char *dir, char *stage, size_t size, datm_run_lock *stage_lock,
                      datm_error *err)
{
    char real[PATH_MAX];
    int rc = abs_dir(dir, real, sizeof real, err);
    if (rc) return rc;
    if (!strcmp(real, "/"))
        return datm_error_set(err, DATM_E_INVALID, "/: cannot be replaced by a run");
    if (strlen(real) + sizeof ".new" >= size)
        return datm_error_set(err, DATM_E_INVALID, "%s: path too long", real);
    snprintf(stage, size, "%s.new", real);
    datm_rundir_state st;
    rc = datm_rundir_inspect(stage, &st, err);
    if (rc) return rc;
    if (st.foreign[0])
        return datm_error_set(err, DATM_E_IO, "%s holds '%s', which datm did not write; an "
                              "--overwrite run of %s is written there first: move it away", stage,
                              st.foreign, real);
    if (!st.exists && mkdir(stage, 0777) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create directory (%s)", stage,
                              strerror(errno));
    rc = datm_run_lock_acquire(stage, stage_lock, err);
    if (rc) return rc;
    /* an earlier --overwrite attempt that did not finish: started afresh, as asked */
    if (st.exists && !st.empty) {
        datm_info("%s: removing an earlier unfinished replacement of %s (status %s)", stage, real,
                  st.status);
        rc = datm_rundir_clean(stage, err);
    }
    char marker[PATH_MAX + 32], text[PATH_MAX + 2];
    snprintf(marker, sizeof marker, "%s/%s", stage, DATM_RUN_REPLACES_FILE);
    snprintf(text, sizeof text, "%s\n", real);
    if (!rc) rc = datm_write_text_atomic(marker, text, err);
    if (rc) datm_run_lock_release(stage_lock);
    return rc;
}

int datm_rundir_replaces(const char *dir, char *target, size_t size)
{
    char marker[1400];
    snprintf(marker, sizeof marker, "%s/%s", dir, DATM_RUN_REPLACES_FILE);
    FILE *f = fopen(marker, "r");
    if (!f) return 0;
    char line[PATH_MAX + 2] = "";
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    if (!ok || line[0] != '/') return 0;
    snprintf(target, size, "%s", line);
    return 1;
}

/* Exchanges the directory `stage` (complete) with `target`; *old gets where the replaced
 * contents now are (stage's path, or target.old.PID where the file system has no exchange). */
static int exchange_dirs(const char *stage, const char *target, char *old, size_t size,
                         datm_error *err)
{
    char real_stage[PATH_MAX];
    int rc = abs_dir(stage, real_stage, sizeof real_stage, err);
    if (rc) return rc;
    if (syscall(SYS_renameat2, AT_FDCWD, real_stage, AT_FDCWD, target, RENAME_EXCHANGE) == 0) {
        snprintf(old, size, "%s", real_stage);
        return DATM_OK;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return datm_error_set(err, DATM_E_IO, "%s: cannot exchange with %s (%s); the new "
                              "contents are complete there, the old ones untouched", real_stage,
                              target, strerror(errno));
    /* no atomic exchange on this file system: two renames */
    char moved[PATH_MAX + 64];
    snprintf(moved, sizeof moved, "%s.old.%ld", target, (long)getpid());
    if (rename(target, moved) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot move aside to %s (%s); the new "
                              "contents are complete in %s", target, moved, strerror(errno),
                              real_stage);
    if (rename(real_stage, target) != 0) {
        int e = errno;
        rename(moved, target);
        return datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s (%s); the new contents "
                              "are complete there, the old ones kept", real_stage, target,
                              strerror(e));
    }
    snprintf(old, size, "%s", moved);
    return DATM_OK;
}

int datm_dir_replace(const char *new_dir, const char *target, datm_error *err)
{
    char old[PATH_MAX + 64];
    int rc = exchange_dirs(new_dir, target, old, sizeof old, err);
    if (rc) return rc;
    datm_error e = {0};
    datm_fsync_parent(target, &e);
    if (datm_rundir_rm_tree(old, &e))
        datm_warn("the replaced contents could not be removed entirely: %s", e.msg);
    return DATM_OK;
}

int datm_rundir_swap(const char *stage, const char *target, datm_run_lock *stage_lock,
                     datm_run_lock *target_lock, datm_error *err)
{
    char oldbuf[PATH_MAX + 64];
    int rc = exchange_dirs(stage, target, oldbuf, sizeof oldbuf, err);
    if (rc) return rc;
    const char *old = oldbuf;
    /* the lock files moved with their directories */
    if (stage_lock && stage_lock->fd >= 0 &&
        snprintf(stage_lock->path, sizeof stage_lock->path, "%s/%s", target,
                 DATM_RUN_LOCK_FILE) >= (int)sizeof stage_lock->path)
        stage_lock->path[0] = '\0';
    if (target_lock && target_lock->fd >= 0 &&
        snprintf(target_lock->path, sizeof target_lock->path, "%s/%s", old,
                 DATM_RUN_LOCK_FILE) >= (int)sizeof target_lock->path)
        target_lock->path[0] = '\0';
    datm_error e = {0};
    datm_fsync_parent(target, &e);
    datm_test_kill("swap");
    char marker[PATH_MAX + 32];
    snprintf(marker, sizeof marker, "%s/%s", target, DATM_RUN_REPLACES_FILE);
    unlink(marker);
    if (datm_rundir_rm_tree(old, &e))
        datm_warn("the replaced run could not be removed entirely: %s", e.msg);
    datm_run_lock_release(target_lock);
    return DATM_OK;
}

int datm_run_replace_finish(const char *dir, datm_error *err)
{
    char target[PATH_MAX], real[PATH_MAX];
    if (!datm_rundir_replaces(dir, target, sizeof target)) return DATM_OK;
    int rc = abs_dir(dir, real, sizeof real, err);
    if (rc) return rc;
    datm_run_lock lk = {.fd = -1}, tk = {.fd = -1};
    if (!strcmp(real, target)) {
        /* exchanged already (stopped before the cleanup): remove the old run at DIR.new */
        char stage[PATH_MAX + 8];
        snprintf(stage, sizeof stage, "%s.new", target);
        rc = datm_run_lock_acquire(dir, &lk, err);
        if (!rc && !path_exists(stage, DATM_RUN_REPLACES_FILE)) rc = datm_rundir_rm_tree(stage, err);
        if (!rc) {
            char marker[PATH_MAX + 32];
            snprintf(marker, sizeof marker, "%s/%s", real, DATM_RUN_REPLACES_FILE);
            unlink(marker);
        }
        datm_run_lock_release(&lk);
        return rc;
    }
    char status[64];
    datm_run_status_read(dir, status, sizeof status);
    if (strcmp(status, DATM_STATUS_COMPLETED) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: not COMPLETED (status %s); resume it first",
                              dir, status);
    rc = datm_run_lock_acquire(dir, &lk, err);
    if (!rc) rc = datm_run_lock_acquire(target, &tk, err);
    if (!rc) rc = datm_rundir_swap(dir, target, &lk, &tk, err);
    if (!rc) datm_info("%s now holds the COMPLETED run that replaced it", target);
    datm_run_lock_release(&tk);
    datm_run_lock_release(&lk);
    return rc;
}

int datm_run_finish_part(const char *dir, datm_error *err)
{
    char part[PATH_MAX + 64], final[PATH_MAX + 64], status[32] = "";
    if (snprintf(part, sizeof part, "%s/%s.part", dir, DATM_RESULT_FILE) >= (int)sizeof part ||
        snprintf(final, sizeof final, "%s/%s", dir, DATM_RESULT_FILE) >= (int)sizeof final)
        return 0;
    struct stat st;
    if (stat(final, &st) == 0 || stat(part, &st) != 0) return 0;
    datm_h5 *f = NULL;
    datm_error e = {0};
    int ok = datm_h5_open(part, 0, &f, &e) == DATM_OK &&
             datm_h5_attr_get_str(f, DATM_ATTR_STATUS, status, sizeof status, &e) == DATM_OK;
    datm_h5_close(&f);
    if (!ok || strcmp(status, DATM_STATUS_COMPLETED) != 0) return 0;
    datm_run_lock lk;
    int rc = datm_run_lock_acquire(dir, &lk, err);
    if (!rc) rc = datm_h5_verify_file(part, NULL, NULL, err);
    if (!rc && rename(part, final) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s (%s)", part, final,
                            strerror(errno));
    datm_run_lock_release(&lk);
    if (rc) return -rc;
    datm_fsync_parent(final, &e);
    datm_warn("%s: the run was COMPLETED but stopped before renaming its result; renamed it "
              "(its figures and report were not made: datm figures %s)", final, dir);
    return 1;
}
