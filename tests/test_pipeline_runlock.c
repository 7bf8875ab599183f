/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_pipeline_runlock.c: the run-directory lock (engine/pipeline/runlock.c).
 * - a held lock is seen by datm_run_lock_holder with the holder's pid; a second acquire (from
 *   another process) fails at once, naming that pid
 * - release removes the lock file and frees the directory; a lock file left by a process killed
 *   with SIGKILL blocks nobody (the kernel drops flock locks of dead processes) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

    /* a directory that cannot hold the lock file */
    datm_error e5 = {0};
    CHECK(datm_run_lock_acquire("/nonexistent/dir", &b, &e5) != DATM_OK &&
          strstr(e5.msg, "/nonexistent/dir/run.lock") && strstr(e5.msg, "No such file"),
          "missing directory: %s", e5.msg);
    rmdir(dir);
    printf("%s\n", fails ? "FAIL" : "ok");
    return fails ? 1 : 0;
}
