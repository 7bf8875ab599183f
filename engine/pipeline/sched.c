/* engine/pipeline/sched.c: running a pipeline's runs (pipefile.h, datm_pipeline_execute).
 *
 * Each run is a child process (`datm run SPEC ... -o DIR`, `datm resume DIR`, `datm ensemble
 * MEMBERS... -o DIR`), so one run's crash cannot take the pipeline down and its run directory
 * is the only state: a COMPLETED result is reused, a checkpointed one resumed, a partial one
 * (no checkpoint yet) started afresh. Children get SIGINT when the pipeline dies
 * (PR_SET_PDEATHSIG), which makes them write a checkpoint and stop, so `kill -9` of the
 * pipeline followed by a rerun continues every run where it stopped. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/pipefile.h"
#include "pipeline/run_internal.h"

/* ---- choosing runs ---- */

int datm_pipeline_select(datm_pipeline *p, const char *only, datm_error *err)
{
    for (int i = 0; i < p->n_runs; i++) p->runs[i].selected = only == NULL;
    if (!only) return p->n_runs;
    regex_t re;
    int rc = regcomp(&re, only, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char m[200];
        regerror(rc, &re, m, sizeof m);
        datm_error_set(err, DATM_E_INVALID, "--only '%s': %s", only, m);
        return -1;
    }
    for (int i = 0; i < p->n_runs; i++)
        p->runs[i].selected = regexec(&re, p->runs[i].id, 0, NULL, 0) == 0;
    regfree(&re);
    for (int i = 0; i < p->n_runs; i++) {   /* an ensemble needs its members */
        const datm_pipe_run *r = &p->runs[i];
        if (!r->selected || r->kind != DATM_PIPE_RUN_ENSEMBLE) continue;
        for (int k = 0; k < r->members.n; k++) {
            int j = datm_pipeline_find_run(p, r->members.v[k]);
            if (j >= 0) p->runs[j].selected = 1;
        }
    }
    int n = 0;
    for (int i = 0; i < p->n_runs; i++) n += p->runs[i].selected;
    return n;
}

/* ---- one child ---- */

typedef enum { JOB_WAITING = 0, JOB_RUNNING, JOB_FINISHED, JOB_ELSEWHERE } job_phase;

typedef struct job {
    job_phase phase;
    pid_t     pid;
    double    t0;
    char      action[16];   /* run, resume, ensemble */
    int       ok;           /* FINISHED: COMPLETED */
    int       twin;         /* >= 0: an earlier selected run with the same cache key (the
                               same computation, the same directory): this one waits for it
                               and is linked to its result instead of running it twice */
} job;

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig) { (void)sig; stop_flag = 1; }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int mkdir_p(const char *path)
{
    datm_error e = {0};
    return datm_run_mkdir_p(path, &e) ? -1 : 0;
}

/* Moves run i's directory, which holds nothing finished (a partial run that died before its
 * first checkpoint, or a failed one), out of the way so the run can start afresh. Another
 * pipeline process on the same cache may decide the same at the same moment, or its writer
 * may be about to take the directory: the move is made holding the run's lock (a moment's
 * lock, which writers wait out, runlock.c) and only when the state read under it is still the
 * one read before (st->status, PARTIAL or FAILED). *moved = 0 when it does not happen: another
 * process holds the lock or has moved the directory first, or the state changed; the caller
 * decides again on its next round. A writer that finds its directory moved makes it afresh
 * (run.c, prepare). */
static int set_aside(const datm_pipeline *p, int i, datm_pipe_state *st, int *moved,
                     datm_error *err)
{
    *moved = 0;
    datm_run_lock lk;
    int busy = 0;
    datm_error e = {0};
    if (datm_run_lock_try(st->dir, &lk, &busy, &e) != DATM_OK) {
        struct stat sb;
        if (busy || stat(st->dir, &sb) != 0) return DATM_OK;
        return datm_error_set(err, e.code, "%s", e.msg);
    }
    const datm_pipe_status was = st->status;
    datm_pipe_state_refresh_held(p, i, st);
    if (st->status != was) {
        datm_run_lock_release(&lk);
        return DATM_OK;
    }
    char to[1300];
    snprintf(to, sizeof to, "%s.failed-%ld-%ld", st->dir, (long)time(NULL), (long)getpid());
    if (rename(st->dir, to) != 0) {
        int en = errno;
        datm_run_lock_release(&lk);
        return datm_error_set(err, DATM_E_IO, "%s: cannot move aside to %s: %s", st->dir, to,
                              strerror(en));
    }
    /* the lock file moved with the directory: released there */
    if (snprintf(lk.path, sizeof lk.path, "%s/%s", to, DATM_RUN_LOCK_FILE) >= (int)sizeof lk.path)
        lk.path[0] = '\0';
    datm_run_lock_release(&lk);
    *moved = 1;
    datm_log(DATM_LOG_INFO, "%s: moved aside to %s (it held no finished result)", st->dir, to);
    return DATM_OK;
}

/* 1 when dir changed in the last few seconds: a run directory another process has just
 * made, before its writer took the run lock, must not be moved aside as abandoned. */
static int just_made(const char *dir)
{
    struct stat sb;
    return stat(dir, &sb) == 0 && difftime(time(NULL), sb.st_mtime) < 5.0;
}

static void build_argv(const datm_pipeline *p, int i, const datm_pipe_state *st,
                       const datm_pipe_state *all, const datm_pipe_exec_opts *o, int threads,
                       char **argv, int max, char *thr, size_t thr_size)
{
    const datm_pipe_run *r = &p->runs[i];
    int a = 0;
    snprintf(thr, thr_size, "%d", threads);
    argv[a++] = (char *)o->datm_exe;
    if (r->kind == DATM_PIPE_RUN_ENSEMBLE) {
        argv[a++] = "ensemble";
        for (int k = 0; k < r->members.n && a < max - 8; k++)
            argv[a++] = (char *)all[datm_pipeline_find_run(p, r->members.v[k])].dir;
        argv[a++] = "-o";
        argv[a++] = (char *)st->dir;
    } else if (st->status == DATM_PIPE_RESUMABLE) {
        argv[a++] = "resume";
        argv[a++] = (char *)st->dir;
    } else {
        argv[a++] = "run";
        argv[a++] = (char *)r->spec;
        for (int k = 0; k < r->overrides.n && a < max - 8; k++) argv[a++] = r->overrides.v[k];
        argv[a++] = "-o";
        argv[a++] = (char *)st->dir;
        if (st->status == DATM_PIPE_DONE || st->status == DATM_PIPE_CACHED)
            argv[a++] = "--overwrite";   /* --force: keeps the old result until the new one */
    }
    argv[a++] = "--threads";
    argv[a++] = thr;
    argv[a++] = "--quiet";
    argv[a] = NULL;
}

static int start_child(const datm_pipeline *p, int i, datm_pipe_state *st,
                       const datm_pipe_state *all, const datm_pipe_exec_opts *o, int threads,
                       job *j, datm_error *err)
{
    char *argv[DATM_MAX_OVERRIDES + DATM_ENSEMBLE_MAX + 16], thr[16];
    build_argv(p, i, st, all, o, threads, argv, (int)(sizeof argv / sizeof *argv), thr, sizeof thr);
    snprintf(j->action, sizeof j->action, "%s", argv[1]);
    char logdir[1200], log[1400];
    snprintf(logdir, sizeof logdir, "%s/logs", p->out_dir);
    if (mkdir_p(logdir) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create: %s", logdir, strerror(errno));
    snprintf(log, sizeof log, "%s/%s.log", logdir, p->runs[i].id);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return datm_error_set(err, DATM_E_IO, "%s: %s", log, strerror(errno));
    {   /* the command, so the log says how to repeat the run by hand */
        char line[8192];
        size_t n = 0;
        n += (size_t)snprintf(line + n, sizeof line - n, "$");
        for (int k = 0; argv[k] && n + 2 < sizeof line; k++)
            n += (size_t)snprintf(line + n, sizeof line - n, " %s", argv[k]);
        if (n + 2 < sizeof line) line[n++] = '\n';
        if (write(fd, line, n < sizeof line ? n : sizeof line - 1) < 0) { /* the log is a courtesy */ }
    }
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        return datm_error_set(err, DATM_E_IO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* the run stops at a checkpoint when the pipeline dies, so a rerun can continue it */
        prctl(PR_SET_PDEATHSIG, SIGINT);
        if (getppid() != parent) _exit(130);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) { dup2(nul, 0); close(nul); }
        signal(SIGINT, SIG_DFL);
        execv(o->datm_exe, argv);
        fprintf(stderr, "datm pipeline: cannot run %s: %s\n", o->datm_exe, strerror(errno));
        _exit(127);
    }
    close(fd);
    j->pid = pid;
    j->phase = JOB_RUNNING;
    j->t0 = now_s();
    return DATM_OK;
}

/* OUT/runs/<id> -> the run's directory in the cache. */
static void link_run(const datm_pipeline *p, int i, const datm_pipe_state *st)
{
    char dir[1200], link[1600], target[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/runs", p->out_dir);
    if (mkdir_p(dir) != 0) return;
    snprintf(link, sizeof link, "%s/%s", dir, p->runs[i].id);
    if (!realpath(st->dir, target)) return;
    char tmp[1700];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", link, (long)getpid());
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, link) != 0) {
        datm_warn("%s: cannot link the run: %s", link, strerror(errno));
        unlink(tmp);
    }
}

/* The last "(NN%)" of the run's log, for the status line; "" when none. */
static void run_progress(const char *dir, char *out, size_t size)
{
    out[0] = '\0';
    char path[1400];
    snprintf(path, sizeof path, "%s/run.log", dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fseek(f, -4096, SEEK_END) != 0) rewind(f);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *pc = strstr(line, "%)");
        char *op = pc ? pc : NULL;
        while (op && op > line && op[-1] != '(') op--;
        if (pc && op > line) {
            char stage[32] = "";
            sscanf(line, "%31s", stage);
            snprintf(out, size, "%s %.*s%%", stage, (int)(pc - op), op);
        }
    }
    fclose(f);
}

static void status_line(const datm_pipeline *p, const datm_pipe_state *st, const job *jobs,
                        int n_sel, int n_done, int n_failed, double t0, int tty)
{
    char line[600];
    size_t o = (size_t)snprintf(line, sizeof line, "[%s] %d/%d done, %d failed, %.0fs",
                                p->name, n_done, n_sel, n_failed, now_s() - t0);
    for (int i = 0; i < p->n_runs && o + 40 < sizeof line; i++) {
        if (jobs[i].phase != JOB_RUNNING) continue;
        char pr[64];
        run_progress(st[i].dir, pr, sizeof pr);
        o += (size_t)snprintf(line + o, sizeof line - o, " | %s%s%s", p->runs[i].id,
                              pr[0] ? " " : "", pr);
    }
    if (tty) fprintf(stderr, "\r\033[K%.*s", 160, line);
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static void event(int tty, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void event(int tty, const char *fmt, ...)
{
    if (tty) fprintf(stderr, "\r\033[K");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* A run another process holds: said once, when this one starts waiting for it. */
static void waiting_for(int tty, const char *id, const datm_pipe_state *s)
{
    if (s->pid > 0) event(tty, "%s: run by process %ld; waiting for it", id, s->pid);
    else event(tty, "%s: run by another process; waiting for it", id);
}

/* 1 when every member of ensemble i is COMPLETED, -1 when one can no longer be, else 0. */
static int members_ready(const datm_pipeline *p, int i, const datm_pipe_state *st,
                         const job *jobs)
{
    const datm_pipe_run *r = &p->runs[i];
    int ready = 1;
    for (int k = 0; k < r->members.n; k++) {
        int m = datm_pipeline_find_run(p, r->members.v[k]);
        if (!strcmp(st[m].result, "COMPLETED") && jobs[m].phase != JOB_RUNNING) continue;
        /* a member known only by its record has no model to predict with */
        if (jobs[m].phase == JOB_FINISHED && (!jobs[m].ok || st[m].status == DATM_PIPE_RECORDED))
            return -1;
        ready = 0;
    }
    return ready;
}

/* 1 when run i counts as finished without running: COMPLETED in the cache, or recorded. */
static int finished_state(const datm_pipe_state *s)
{
    return s->status == DATM_PIPE_DONE || s->status == DATM_PIPE_CACHED ||
           s->status == DATM_PIPE_RECORDED;
}

/* A run to be run despite its record (--force, or a member of an ensemble to be run, which
 * needs the member's model): the record is set aside for this invocation and the cache's own
 * state decides how it runs (afresh, resumed, or --overwrite of a COMPLETED one). */
static void drop_record(const datm_pipeline *p, int i, datm_pipe_state *st)
{
    if (!st->record[0]) return;
    st->record[0] = '\0';
    datm_pipe_state_refresh(p, i, st);
}

/* Every selected ensemble that will run needs its members' models, which a record does not
 * hold: a member known only by its record is run again. */
static void members_unrecord(const datm_pipeline *p, const datm_pipe_exec_opts *o,
                             datm_pipe_state *st, int tty)
{
    for (int i = 0; i < p->n_runs; i++) {
        const datm_pipe_run *r = &p->runs[i];
        if (!r->selected || r->kind != DATM_PIPE_RUN_ENSEMBLE || (finished_state(&st[i]) && !o->force))
            continue;
        for (int k = 0; k < r->members.n; k++) {
            int m = datm_pipeline_find_run(p, r->members.v[k]);
            if (m < 0 || st[m].status != DATM_PIPE_RECORDED) continue;
            drop_record(p, m, &st[m]);
            event(tty, "%s: only its record is here; run again for ensemble %s, which needs "
                  "its model", p->runs[m].id, r->id);
        }
    }
}

static void dry_run(const datm_pipeline *p, const datm_pipe_state *st,
                    const datm_pipe_exec_opts *o, int threads)
{
    for (int i = 0; i < p->n_runs; i++) {
        if (!p->runs[i].selected) continue;
        const datm_pipe_state *s = &st[i];
        int reuse = finished_state(s) && !o->force;
        const char *shown = s->status == DATM_PIPE_RECORDED ? "recorded" : "cached";
        printf("%-10s %-28s %.12s", reuse ? shown : datm_pipe_status_name(s->status),
               p->runs[i].id, s->key);
        if (!reuse && s->status != DATM_PIPE_RUNNING) {
            char *argv[DATM_MAX_OVERRIDES + DATM_ENSEMBLE_MAX + 16], thr[16];
            build_argv(p, i, s, st, o, threads, argv, (int)(sizeof argv / sizeof *argv), thr,
                       sizeof thr);
            printf("  would run:");
            for (int k = 1; argv[k]; k++) printf(" %s", argv[k]);
        }
        printf("\n");
    }
}

int datm_pipeline_execute(datm_pipeline *p, const datm_model_catalog *cat,
                          const datm_pipe_exec_opts *o, datm_pipe_state *st, int *n_failed,
                          datm_error *err)
{
    (void)cat;
    *n_failed = 0;
    const int threads = o->threads > 0 ? o->threads : p->threads;
    int slots = o->jobs / threads;
    if (slots < 1) slots = 1;
    if (o->dry) { dry_run(p, st, o, threads); return DATM_OK; }

    job *jobs = calloc((size_t)p->n_runs, sizeof *jobs);
    if (!jobs) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    const int tty = !o->quiet && isatty(2);
    int n_sel = 0, n_done = 0, running = 0, rc = DATM_OK;
    members_unrecord(p, o, st, tty);
    for (int i = 0; i < p->n_runs; i++) {
        if (p->runs[i].selected && o->force) drop_record(p, i, &st[i]);
    }
    for (int i = 0; i < p->n_runs; i++) {
        jobs[i].twin = -1;
        if (!p->runs[i].selected) { jobs[i].phase = JOB_FINISHED; jobs[i].ok = 1; continue; }
        n_sel++;
        /* a recorded run is no twin: the other run, not recorded, is to make the result */
        for (int j = 0; j < i && jobs[i].twin < 0; j++)
            if (p->runs[j].selected && jobs[j].twin < 0 && !strcmp(st[j].dir, st[i].dir) &&
                st[j].status != DATM_PIPE_RECORDED)
                jobs[i].twin = j;
        if (finished_state(&st[i]) && !o->force) {
            jobs[i].phase = JOB_FINISHED;
            jobs[i].ok = 1;
            n_done++;
            if (st[i].status != DATM_PIPE_RECORDED) link_run(p, i, &st[i]);
        } else if (st[i].status == DATM_PIPE_RUNNING) {
            jobs[i].phase = JOB_ELSEWHERE;   /* another process writes it: wait for it */
            waiting_for(tty, p->runs[i].id, &st[i]);
        }
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_flag = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    const double t0 = now_s();
    double last_line = 0;
    int announced_stop = 0;
    for (;;) {
        /* start what can start */
        for (int i = 0; i < p->n_runs && !stop_flag && running < slots && !rc; i++) {
            if (jobs[i].phase != JOB_WAITING) continue;
            if (jobs[i].twin >= 0) {
                const int j = jobs[i].twin;
                if (jobs[j].phase != JOB_FINISHED) continue;
                jobs[i].phase = JOB_FINISHED;
                jobs[i].ok = jobs[j].ok;
                if (jobs[i].ok) {
                    datm_pipe_state_refresh(p, i, &st[i]);
                    n_done++;
                    link_run(p, i, &st[i]);
                    datm_pipe_state_refresh(p, i, &st[i]);
                    event(tty, "%s: the same run as %s (key %.12s)", p->runs[i].id,
                          p->runs[j].id, st[i].key);
                } else {
                    (*n_failed)++;
                    event(tty, "%s: not run: the same run as %s, which did not complete",
                          p->runs[i].id, p->runs[j].id);
                }
                continue;
            }
            if (p->runs[i].kind == DATM_PIPE_RUN_ENSEMBLE) {
                int mr = members_ready(p, i, st, jobs);
                if (mr < 0) {
                    jobs[i].phase = JOB_FINISHED;
                    (*n_failed)++;
                    event(tty, "%s: not run: a member did not complete", p->runs[i].id);
                    continue;
                }
                if (!mr) continue;
            }
            /* another pipeline process on the same cache may have started or finished this
             * run since the states were read: wait for it, or take its result */
            datm_pipe_state_refresh(p, i, &st[i]);
            if (st[i].status == DATM_PIPE_RUNNING) {
                jobs[i].phase = JOB_ELSEWHERE;
                waiting_for(tty, p->runs[i].id, &st[i]);
                continue;
            }
            if (!o->force && finished_state(&st[i])) {
                jobs[i].phase = JOB_FINISHED;
                jobs[i].ok = 1;
                n_done++;
                if (st[i].status == DATM_PIPE_RECORDED) {   /* the other process stopped */
                    event(tty, "%s: not completed by another process; its record stands",
                          p->runs[i].id);
                    continue;
                }
                link_run(p, i, &st[i]);
                event(tty, "%s: completed by another process", p->runs[i].id);
                continue;
            }
            if (st[i].status == DATM_PIPE_PARTIAL && just_made(st[i].dir))
                continue;   /* maybe a run another process starts: it locks it in a moment */
            /* an ensemble is cheap and has no checkpoints: an unfinished one starts over */
            if (st[i].status == DATM_PIPE_PARTIAL || st[i].status == DATM_PIPE_FAILED ||
                (p->runs[i].kind == DATM_PIPE_RUN_ENSEMBLE && st[i].status != DATM_PIPE_PENDING)) {
                int moved = 0;
                rc = set_aside(p, i, &st[i], &moved, err);
                if (rc) break;
                if (!moved) continue;   /* decided again on the next round */
                st[i].status = DATM_PIPE_PENDING;
            }
            rc = start_child(p, i, &st[i], st, o, threads, &jobs[i], err);
            if (rc) break;
            running++;
            event(tty, "%s: %s started (%.12s)", p->runs[i].id, jobs[i].action, st[i].key);
        }
        if (rc) break;
        /* collect what ended */
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            for (int i = 0; i < p->n_runs; i++) {
                if (jobs[i].phase != JOB_RUNNING || jobs[i].pid != pid) continue;
                running--;
                jobs[i].phase = JOB_FINISHED;
                datm_pipe_state_refresh(p, i, &st[i]);
                if (st[i].status == DATM_PIPE_RUNNING && !stop_flag) {
                    /* the child lost the run's lock to another process: wait for that one */
                    jobs[i].phase = JOB_ELSEWHERE;
                    waiting_for(tty, p->runs[i].id, &st[i]);
                    continue;
                }
                jobs[i].ok = !strcmp(st[i].result, "COMPLETED");
                double secs = now_s() - jobs[i].t0;
                if (jobs[i].ok) {
                    n_done++;
                    link_run(p, i, &st[i]);
                    datm_pipe_state_refresh(p, i, &st[i]);
                    event(tty, "%s: completed in %.1fs", p->runs[i].id, secs);
                } else {
                    (*n_failed)++;
                    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                    event(tty, "%s: %s (exit %d after %.1fs); its log: %s/logs/%s.log",
                          p->runs[i].id, stop_flag ? "stopped" : "FAILED", code, secs,
                          p->out_dir, p->runs[i].id);
                }
            }
        }
        /* runs another process holds */
        for (int i = 0; i < p->n_runs; i++) {
            if (jobs[i].phase != JOB_ELSEWHERE) continue;
            datm_pipe_state_refresh(p, i, &st[i]);
            if (st[i].status == DATM_PIPE_RUNNING) continue;
            if (!strcmp(st[i].result, "COMPLETED")) {
                jobs[i].phase = JOB_FINISHED;
                jobs[i].ok = 1;
                n_done++;
                link_run(p, i, &st[i]);
            } else {
                jobs[i].phase = JOB_WAITING;   /* it stopped: continue it here */
            }
        }
        int waiting = 0;
        for (int i = 0; i < p->n_runs; i++)
            waiting += jobs[i].phase == JOB_WAITING || jobs[i].phase == JOB_ELSEWHERE;
        if (running == 0 && (waiting == 0 || stop_flag)) break;
        if (stop_flag && !announced_stop) {
            announced_stop = 1;
            event(tty, "stopping: the running runs write a checkpoint; rerun to continue");
            for (int i = 0; i < p->n_runs; i++)
                if (jobs[i].phase == JOB_RUNNING) kill(jobs[i].pid, SIGINT);
        }
        if (!tty && running == 0 && waiting > 0) {
            /* only runs held elsewhere or ensembles waiting on them remain */
        }
        double t = now_s();
        if (!o->quiet && (tty ? t - last_line >= 0.5 : t - last_line >= 60)) {
            status_line(p, st, jobs, n_sel, n_done, *n_failed, t0, tty);
            last_line = t;
        }
        usleep(100 * 1000);
    }
    if (rc) {   /* the pipeline cannot go on: stop the runs at a checkpoint */
        for (int i = 0; i < p->n_runs; i++)
            if (jobs[i].phase == JOB_RUNNING) kill(jobs[i].pid, SIGINT);
        for (int i = 0; i < p->n_runs; i++)
            if (jobs[i].phase == JOB_RUNNING) waitpid(jobs[i].pid, NULL, 0);
    }
    for (int i = 0; i < p->n_runs; i++)
        if (jobs[i].phase == JOB_WAITING) (*n_failed)++;   /* not started: stopped early */
    if (tty) fprintf(stderr, "\r\033[K");
    if (!o->quiet)
        fprintf(stderr, "[%s] %d/%d runs completed, %d not, %.0fs\n", p->name, n_done, n_sel,
                *n_failed, now_s() - t0);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (!rc && stop_flag) rc = datm_error_set(err, DATM_E_INTERRUPTED, "interrupted; rerun the "
                                              "same command to continue where it stopped");
    free(jobs);
    return rc;
}
