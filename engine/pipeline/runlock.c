/* engine/pipeline/runlock.c: the run-directory lock. A process that writes a run directory
 * (run, resume, fork, the pipeline's jobs) holds an advisory lock on RUN_DIR/run.lock, a file
 * holding its pid, for as long as it writes there; a second writer fails at once with a
 * message naming the holder, instead of interleaving logs and overwriting results.
 *
 * The lock is flock(2) on an open file description: the kernel drops it when the holder exits
 * in any way (kill -9 included), so a stale file never blocks anyone. Protocol (the usual
 * one for lock files that are removed): take the lock, then check that the path still names
 * the file locked (a releaser may have unlinked it in between) and retry when not; release
 * by unlinking while still holding the lock, then closing. O_CLOEXEC keeps child programs
 * (gnuplot) from inheriting the lock.
 *
 * Not every holder is a writer. datm_run_lock_holder looks by taking a shared lock for an
 * instant, and a pipeline moving an abandoned run aside (sched.c) holds the lock without a
 * pid for as long as the rename takes; a writer that met either used to fail at once, and its
 * pipeline then reported a run that another process went on to complete as FAILED. A writer
 * writes its pid as soon as it holds the lock, so: a busy lock whose file names a live process
 * is a writer's (fail at once, naming it); one whose file names nobody, or a dead process (a
 * writer killed with SIGKILL leaves its file), is a look or a writer between its lock and its
 * pid, both momentary, and is waited out (LOCK_GRACE_S at most). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/pipeline.h"

/* How long a writer waits out a busy lock that names no live process (seconds): a look holds
 * it for two system calls, so this only matters on a machine so loaded that the looker is not
 * scheduled for a while. */
#define LOCK_GRACE_S 10.0
#define LOCK_POLL_US 10000

static void lock_path(const char *run_dir, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", run_dir, DATM_RUN_LOCK_FILE);
}

/* The pid written in the lock file open as fd (0 when unreadable). */
static long read_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = '\0';
    long pid = strtol(buf, NULL, 10);
    return pid > 0 ? pid : 0;
}

/* 1 when pid names a live process (one that exists, ours included). */
static int alive(long pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* 1 when fd is the file at path (a releaser unlinks the file while it still holds it). */
static int same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
           a.st_dev == b.st_dev;
}

/* Takes the lock of run_dir into lk. with_pid: a writer's lock (its pid written, a busy lock
 * naming nobody waited out); else a moment's lock (no pid, no wait: *busy = 1 when another
 * process holds it). */
static int lock_take(const char *run_dir, datm_run_lock *lk, int with_pid, int *busy,
                     datm_error *err)
{
    lk->fd = -1;
    if (busy) *busy = 0;
    lock_path(run_dir, lk->path, sizeof lk->path);
    long waited_us = 0;
    for (int attempt = 0; attempt < 100;) {
        int fd = open(lk->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            return datm_error_set(err, DATM_E_IO, "%s: cannot create the run's lock file (%s)",
                                  lk->path, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            long pid = read_pid(fd);
            int same = same_file(fd, lk->path);
            close(fd);
            if (e != EWOULDBLOCK)
                return datm_error_set(err, DATM_E_IO, "%s: cannot lock (%s)", lk->path,
                                      strerror(e));
            if (!same) { attempt++; continue; }   /* released meanwhile: a new file */
            if (!with_pid) {
                if (busy) *busy = 1;
            } else if (!alive(pid) && waited_us < (long)(LOCK_GRACE_S * 1e6)) {
                usleep(LOCK_POLL_US);   /* a look, or a writer about to write its pid */
                waited_us += LOCK_POLL_US;
                continue;
            }
            if (alive(pid))
                return datm_error_set(err, DATM_E_IO, "%s is being written by process %ld "
                                      "(lock %s); wait for it to finish or stop it", run_dir,
                                      pid, lk->path);
            return datm_error_set(err, DATM_E_IO, "%s is being written by another process "
                                  "(lock %s); wait for it to finish or stop it", run_dir,
                                  lk->path);
        }
        /* the file we locked must still be the one at the path */
        if (!same_file(fd, lk->path)) {
            close(fd);
            attempt++;
            continue;
        }
        if (!with_pid) {
            /* a stale pid left by a killed writer would pass this moment's holder off as a
             * live writer to one that meets it */
            if (ftruncate(fd, 0) != 0) { /* then a writer that meets it fails: rare, visible */ }
            lk->fd = fd;
            return DATM_OK;
        }
        char pid[32];
        int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
            int e = errno;
            unlink(lk->path);
            close(fd);
            return datm_error_set(err, DATM_E_IO, "%s: cannot write the lock file (%s)", lk->path,
                                  strerror(e));
        }
        lk->fd = fd;
        return DATM_OK;
    }
    return datm_error_set(err, DATM_E_IO, "%s: the lock file keeps being replaced", lk->path);
}

int datm_run_lock_acquire(const char *run_dir, datm_run_lock *lk, datm_error *err)
{
    return lock_take(run_dir, lk, 1, NULL, err);
}

int datm_run_lock_try(const char *run_dir, datm_run_lock *lk, int *busy, datm_error *err)
{
    return lock_take(run_dir, lk, 0, busy, err);
}

void datm_run_lock_release(datm_run_lock *lk)
{
    if (!lk || lk->fd < 0) return;
    unlink(lk->path);   /* while still held: a waiter that opened it retries on a new file */
    close(lk->fd);
    lk->fd = -1;
}

int datm_run_lock_holder(const char *run_dir, long *pid)
{
    char path[1300];
    lock_path(run_dir, path, sizeof path);
    if (pid) *pid = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    int held = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
        held = errno == EWOULDBLOCK;
        if (held && pid) *pid = read_pid(fd);
    }
    close(fd);   /* also drops the shared lock when it was taken */
    return held;
}
