/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_pipeline_runlock.c: the run-directory lock (engine/pipeline/runlock.c).
 * - a held lock is seen by datm_run_lock_holder with the holder's pid; a second acquire (from
 *   another process) fails at once, naming that pid
 * - release removes the lock file and frees the directory; a lock file left by a process killed
 *   with SIGKILL blocks nobody (the kernel drops flock locks of dead processes)
 * - a holder that is not a writer is waited out, not failed on: a look (the shared lock
 *   datm_run_lock_holder takes for an instant, held here for 0.3 s by another process, on a
 *   fresh lock file and on one naming a dead process) and a datm_run_lock_try (no pid written;
 *   it reports busy while a writer holds the lock). Before, a writer that met a look failed at
 *   once, and a pipeline reported a run FAILED that another pipeline process completed. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/pipeline.h"
#include "test_check.h"

/* A child that takes the lock of dir, signals the parent through a pipe, then waits. */
static pid_t spawn_holder(const char *dir)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        datm_run_lock lk;
        datm_error e = {0};
        char ok = datm_run_lock_acquire(dir, &lk, &e) == DATM_OK ? 'y' : 'n';
        if (write(fds[1], &ok, 1) != 1) _exit(3);
        for (;;) pause();
    }
    close(fds[1]);
    char ok = 0;
    if (read(fds[0], &ok, 1) != 1 || ok != 'y') pid = -1;
    close(fds[0]);
    return pid;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A child that holds dir's lock for 0.3 s the way a non-writer does: shared (a look, as
 * datm_run_lock_holder between its flock and its close) or as datm_run_lock_try; returns once
 * it holds it. */
static pid_t spawn_brief(const char *dir, int shared)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, DATM_RUN_LOCK_FILE);
        char ok = 'n';
        datm_run_lock lk = {.fd = -1};
        if (shared) {
            int fd = open(path, O_RDONLY | O_CREAT, 0666);
            if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) == 0) ok = 'y';
        } else {
            datm_error e = {0};
            int busy = 0;
            if (datm_run_lock_try(dir, &lk, &busy, &e) == DATM_OK) ok = 'y';
        }
        if (write(fds[1], &ok, 1) != 1) _exit(3);
        usleep(300 * 1000);
        datm_run_lock_release(&lk);
        _exit(0);
    }
    close(fds[1]);
    char ok = 0;
    if (read(fds[0], &ok, 1) != 1 || ok != 'y') pid = -1;
    close(fds[0]);
    return pid;
}

/* acquire while a brief holder (spawn_brief) holds dir's lock: it must succeed once the holder
 * lets go, not fail at once */
static void check_waits_out(const char *dir, int shared, const char *what)
{
    pid_t h = spawn_brief(dir, shared);
    CHECK(h > 0, "%s: the brief holder took the lock", what);
    if (h <= 0) return;
    datm_run_lock lk;
    datm_error e = {0};
    double t0 = now_s();
    int rc = datm_run_lock_acquire(dir, &lk, &e);
    double waited = now_s() - t0;
    CHECK(rc == DATM_OK, "%s: the writer waits it out: %s", what, e.msg);
    CHECK(waited > 0.1, "%s: the writer waited (%.3f s)", what, waited);
    long pid = 0;
    CHECK(rc != DATM_OK || (datm_run_lock_holder(dir, &pid) == 1 && pid == (long)getpid()),
          "%s: then the writer holds it (%ld)", what, pid);
    datm_run_lock_release(&lk);
    waitpid(h, NULL, 0);
}

int main(void)
{
    char dir[] = "/tmp/datm_runlock_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    long pid = -1;
    CHECK(datm_run_lock_holder(dir, &pid) == 0 && pid == 0, "no lock: no holder (pid %ld)", pid);

    /* held by this process */
    datm_run_lock a;
    datm_error e = {0};
    CHECK(datm_run_lock_acquire(dir, &a, &e) == DATM_OK, "acquire: %s", e.msg);
    CHECK(datm_run_lock_holder(dir, &pid) == 1 && pid == (long)getpid(),
          "holder is this process (%ld vs %ld)", pid, (long)getpid());
    datm_run_lock b;
    datm_error e2 = {0};
    char want[64];
    snprintf(want, sizeof want, "process %ld", (long)getpid());
    CHECK(datm_run_lock_acquire(dir, &b, &e2) != DATM_OK && strstr(e2.msg, want) &&
          strstr(e2.msg, dir), "second acquire fails naming the holder: %s", e2.msg);
    datm_run_lock_release(&a);
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, DATM_RUN_LOCK_FILE);
    struct stat st;
    CHECK(stat(path, &st) != 0, "release removes %s", path);
    CHECK(datm_run_lock_holder(dir, &pid) == 0, "released: no holder");
    datm_run_lock_release(&a);   /* twice: a no-op */

    /* held by another process, then that process killed */
    pid_t child = spawn_holder(dir);
    CHECK(child > 0, "child took the lock");
    if (child > 0) {
        CHECK(datm_run_lock_holder(dir, &pid) == 1 && pid == (long)child,
              "holder is the child (%ld vs %ld)", pid, (long)child);
        datm_error e3 = {0};
        snprintf(want, sizeof want, "process %ld", (long)child);
        CHECK(datm_run_lock_acquire(dir, &b, &e3) != DATM_OK && strstr(e3.msg, want),
              "acquire while the child holds it fails naming it: %s", e3.msg);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        CHECK(stat(path, &st) == 0, "a killed holder leaves its lock file");
        CHECK(datm_run_lock_holder(dir, &pid) == 0, "a killed holder holds nothing");
        datm_error e4 = {0};
        CHECK(datm_run_lock_acquire(dir, &b, &e4) == DATM_OK, "acquire after the kill: %s", e4.msg);
        datm_run_lock_release(&b);
    }

    /* holders that are not writers */
    check_waits_out(dir, 1, "a look on a fresh lock file");
    {   /* a lock file naming a dead process (a writer killed with SIGKILL leaves one) */
        pid_t dead = fork();
        if (dead == 0) _exit(0);
        waitpid(dead, NULL, 0);
        FILE *f = fopen(path, "w");
        if (f) { fprintf(f, "%ld\n", (long)dead); fclose(f); }
        check_waits_out(dir, 1, "a look on a dead writer's lock file");
    }
    check_waits_out(dir, 0, "datm_run_lock_try");
    {   /* datm_run_lock_try: no pid; busy while a writer holds the lock */
        datm_run_lock t, w;
        datm_error e6 = {0};
        int busy = -1;
        CHECK(datm_run_lock_try(dir, &t, &busy, &e6) == DATM_OK && busy == 0, "try: %s", e6.msg);
        CHECK(datm_run_lock_holder(dir, &pid) == 1 && pid == 0, "a try names no pid (%ld)", pid);
        datm_run_lock_release(&t);
        CHECK(datm_run_lock_acquire(dir, &w, &e6) == DATM_OK, "acquire: %s", e6.msg);
        pid_t c2 = fork();
        if (c2 == 0) {
            datm_run_lock t2;
            datm_error e7 = {0};
            int b2 = 0;
            _exit(datm_run_lock_try(dir, &t2, &b2, &e7) != DATM_OK && b2 == 1 ? 0 : 1);
        }
        int ws = -1;
        waitpid(c2, &ws, 0);
        CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "a try while a writer holds it: busy");
        datm_run_lock_release(&w);
    }

    /* a directory that cannot hold the lock file */
    datm_error e5 = {0};
    CHECK(datm_run_lock_acquire("/nonexistent/dir", &b, &e5) != DATM_OK &&
          strstr(e5.msg, "/nonexistent/dir/run.lock") && strstr(e5.msg, "No such file"),
          "missing directory: %s", e5.msg);
    rmdir(dir);
    printf("%s\n", fails ? "FAIL" : "ok");
    return fails ? 1 : 0;
}
