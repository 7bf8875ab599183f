/* engine/pipeline/sweep.c: `datm sweep SPEC key=a,b,c other=range(0,5)` — the cartesian
 * product of override values, one run directory per job, a manifest (sweep.yaml) with each
 * job's overrides, spec hash and status, resumable (ECOSYSTEM rows 5, 10, 11).
 *
 * Every job's spec is validated before the first job starts. Jobs run as child processes
 * (`datm run ... -o JOBDIR`, or `datm resume JOBDIR` when a checkpoint exists), so a crash
 * of one job cannot take the sweep down. --resume skips jobs whose result is COMPLETED and
 * refuses when the sweep's definition (the job spec hashes, in order) changed. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/results_layout.h"
#include "pipeline/pipeline.h"
#include "io/yamltree.h"

#define MAX_AXES 16
#define MAX_VALUES 1000
#define MAX_JOBS 10000

int datm_sweep_expand(const char *value, char **out, int max, datm_error *err)
{
    long long a, b, step = 1;
    char tail[4];
    int n = 0;
    int k = sscanf(value, "range(%lld,%lld,%lld%1[)]", &a, &b, &step, tail);
    if (k != 4) {
        step = 1;
        k = sscanf(value, "range(%lld,%lld%1[)]", &a, &b, tail);
        if (k == 3) k = 4;
    }
    if (k == 4) {
        if (step == 0 || (b - a) / step > max)
            return datm_error_set(err, DATM_E_INVALID, "'%s': bad range (step 0 or more than %d "
                                  "values)", value, max), -1;
        for (long long v = a; (step > 0 ? v < b : v > b); v += step) {
            char buf[32];
            snprintf(buf, sizeof buf, "%lld", v);
            out[n] = datm_strdup(buf, err);
            if (!out[n]) return -1;
            n++;
        }
        if (n == 0)
            return datm_error_set(err, DATM_E_INVALID, "'%s' is an empty range", value), -1;
        return n;
    }
    if (!strncmp(value, "range(", 6))
        return datm_error_set(err, DATM_E_INVALID, "'%s': write range(start,stop) or "
                              "range(start,stop,step) with integers", value), -1;
    /* comma-separated values; commas inside [...] belong to a list value */
    const char *s = value;
    int depth = 0;
    const char *start = s;
    for (;; s++) {
        if (*s == '[') depth++;
        if (*s == ']') depth--;
        if ((*s == ',' && depth == 0) || *s == '\0') {
            if (n >= max)
                return datm_error_set(err, DATM_E_INVALID, "more than %d values", max), -1;
            size_t len = (size_t)(s - start);
            out[n] = datm_alloc(len + 1, err);
            if (!out[n]) return -1;
            memcpy(out[n], start, len);
            out[n][len] = '\0';
            n++;
            if (*s == '\0') break;
            start = s + 1;
        }
    }
    return n;
}

typedef struct sweep_job {
    char  dir[1200];
    char *ov[DATM_MAX_OVERRIDES];     /* "key=value" */
    int   n_ov;
    char  hash[65];
    char  status[32];
    int   exit_code;
} sweep_job;

static void job_dir_name(const sweep_job *j, int id, int n_fixed, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "%03d", id);
    for (int i = n_fixed; i < j->n_ov && o + 2 < size; i++) {
        buf[o++] = i == n_fixed ? '_' : ',';
        for (const char *p = j->ov[i]; *p && o + 1 < size; p++)
            buf[o++] = (isalnum((unsigned char)*p) || strchr("=.-+", *p)) ? *p : '_';
    }
    buf[o < size ? o : size - 1] = '\0';
}

static int write_manifest(const datm_sweep_opts *o, const char *def_hash, sweep_job *jobs,
                          int n, datm_error *err)
{
    char path[1200], tmp[1220];
    snprintf(path, sizeof path, "%s/sweep.yaml", o->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return datm_error_set(err, DATM_E_IO, "%s: cannot write", tmp);
    fprintf(f, "# datm sweep manifest: one entry per job; status is re-read from each job's "
               "result on --resume\nspec: \"%s\"\ndefinition_hash: %s\non_error: %s\nargs:\n",
            o->spec_path, def_hash, o->on_error == DATM_SWEEP_ON_ERROR_STOP ? "stop" : "continue");
    for (int i = 0; i < o->n_args; i++) fprintf(f, "  - \"%s\"\n", o->args[i]);
    fprintf(f, "jobs:\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "  - id: %d\n    dir: \"%s\"\n    spec_hash: %s\n    status: %s\n"
                   "    exit_code: %d\n    overrides: [", i, jobs[i].dir, jobs[i].hash,
                jobs[i].status, jobs[i].exit_code);
        for (int k = 0; k < jobs[i].n_ov; k++) fprintf(f, "%s\"%s\"", k ? ", " : "", jobs[i].ov[k]);
        fprintf(f, "]\n");
    }
    int bad = fclose(f) != 0;
    if (bad || rename(tmp, path) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot write", path);
    return DATM_OK;
}

/* definition_hash of an existing manifest, or "" */
static void read_manifest_hash(const char *dir, char *hash, size_t size)
{
    hash[0] = '\0';
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    datm_ynode *root = NULL;
    datm_error e = {0};
    if (datm_ytree_parse(text, n, path, &root, &e)) return;
    datm_ynode *h = datm_ytree_get(root, "definition_hash", NULL);
    if (h && h->kind == DATM_Y_SCALAR) snprintf(hash, size, "%s", h->text);
    datm_ytree_free(&root);
}

static int run_child(const datm_sweep_opts *o, const sweep_job *j, int resume)
{
    const char *argv[DATM_MAX_OVERRIDES + 16];
    int a = 0;
    argv[a++] = o->datm_exe;
    if (resume) {
        argv[a++] = "resume";
        argv[a++] = j->dir;
    } else {
        argv[a++] = "run";
        argv[a++] = o->spec_path;
        for (int i = 0; i < j->n_ov; i++) argv[a++] = j->ov[i];
        argv[a++] = "-o";
        argv[a++] = j->dir;
    }
    if (o->threads) { argv[a++] = "--threads"; argv[a++] = o->threads; }
    if (o->quiet) argv[a++] = "--quiet";
    argv[a] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execv(o->datm_exe, (char *const *)argv);
        fprintf(stderr, "datm sweep: cannot run %s: %s\n", o->datm_exe, strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int datm_sweep(const datm_sweep_opts *o, const datm_model_catalog *cat, datm_error *err)
{
    char *vals[MAX_AXES][MAX_VALUES];
    int nv[MAX_AXES] = {0}, n_axes = 0;
    char keys[MAX_AXES][256];
    const char *fixed[DATM_MAX_OVERRIDES];
    int n_fixed = 0, rc = DATM_OK;
    for (int i = 0; i < o->n_args && !rc; i++) {
        char key[256];
        const char *value;
        if (!datm_override_split(o->args[i], key, sizeof key, &value)) {
            rc = datm_error_set(err, DATM_E_INVALID, "'%s': sweep arguments are key=a,b,c, "
                                "key=range(a,b) or key=value", o->args[i]);
            break;
        }
        char *tmp[MAX_VALUES];
        int n = datm_sweep_expand(value, tmp, MAX_VALUES, err);
        if (n < 0) { rc = err->code ? err->code : DATM_E_NOMEM; break; }
        if (n == 1) {
            datm_free(tmp[0]);
            if (n_fixed >= DATM_MAX_OVERRIDES - MAX_AXES - 4) {
                rc = datm_error_set(err, DATM_E_INVALID, "too many fixed overrides");
                break;
            }
            fixed[n_fixed++] = o->args[i];
            continue;
        }
        if (n_axes >= MAX_AXES) {
            for (int k = 0; k < n; k++) datm_free(tmp[k]);
            rc = datm_error_set(err, DATM_E_INVALID, "at most %d swept keys", MAX_AXES);
            break;
        }
        snprintf(keys[n_axes], sizeof keys[0], "%s", key);
        memcpy(vals[n_axes], tmp, (size_t)n * sizeof *tmp);
        nv[n_axes++] = n;
    }
    long long n_jobs = 1;
    for (int a = 0; a < n_axes; a++) n_jobs *= nv[a];
    if (!rc && n_jobs > MAX_JOBS)
        rc = datm_error_set(err, DATM_E_INVALID, "%lld jobs; at most %d", n_jobs, MAX_JOBS);
    sweep_job *jobs = NULL;
    if (!rc) {
        jobs = datm_alloc_array((size_t)n_jobs, sizeof *jobs, err);
        if (!jobs) rc = DATM_E_NOMEM;
    }
    /* build and validate every job (first axis varies slowest) */
    datm_sha256 defh;
    datm_sha256_init(&defh);
    for (long long j = 0; !rc && j < n_jobs; j++) {
        sweep_job *jb = &jobs[j];
        for (int i = 0; i < n_fixed && !rc; i++) {
            jb->ov[jb->n_ov] = datm_strdup(fixed[i], err);
            if (!jb->ov[jb->n_ov++]) rc = DATM_E_NOMEM;
        }
        long long rem = j;
        int idx[MAX_AXES];
        for (int a = n_axes - 1; a >= 0; a--) { idx[a] = (int)(rem % nv[a]); rem /= nv[a]; }
        for (int a = 0; a < n_axes && !rc; a++) {
            size_t len = strlen(keys[a]) + strlen(vals[a][idx[a]]) + 2;
            jb->ov[jb->n_ov] = datm_alloc(len, err);
            if (!jb->ov[jb->n_ov]) { rc = DATM_E_NOMEM; break; }
            snprintf(jb->ov[jb->n_ov++], len, "%s=%s", keys[a], vals[a][idx[a]]);
        }
        if (rc) break;
        char name[600];
        job_dir_name(jb, (int)j, n_fixed, name, sizeof name);
        snprintf(jb->dir, sizeof jb->dir, "%s/%s", o->dir, name);
        datm_spec spec;
        rc = datm_spec_load(o->spec_path, (const char *const *)jb->ov, jb->n_ov, cat, &spec, err);
        if (rc) { datm_error_prefix(err, "sweep job %lld: ", j); break; }
        snprintf(jb->hash, sizeof jb->hash, "%s", spec.hash);
        datm_spec_free(&spec);
        datm_sha256_update(&defh, jb->hash, 64);
        snprintf(jb->status, sizeof jb->status, "PENDING");
    }
    char def_hash[65] = "";
    if (!rc) datm_sha256_hex(&defh, def_hash);

    if (!rc) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "%s", o->dir);
        for (char *p = cmd + 1; *p; p++)
            if (*p == '/') { *p = '\0'; mkdir(cmd, 0777); *p = '/'; }
        if (mkdir(cmd, 0777) != 0 && errno != EEXIST)
            rc = datm_error_set(err, DATM_E_IO, "%s: cannot create directory", o->dir);
    }
    if (!rc) {
        char old[80];
        read_manifest_hash(o->dir, old, sizeof old);
        if (o->resume && !old[0])
            rc = datm_error_set(err, DATM_E_INVALID, "%s: no sweep manifest to resume", o->dir);
        else if (o->resume && strcmp(old, def_hash) != 0)
            rc = datm_error_set(err, DATM_E_INVALID, "%s: the sweep definition changed (manifest "
                                "%.12s, now %.12s): refusing to resume; use a new directory",
                                o->dir, old, def_hash);
        else if (!o->resume && old[0])
            rc = datm_error_set(err, DATM_E_INVALID, "%s already holds a sweep; use --resume or "
                                "a new directory", o->dir);
    }
    if (!rc) {
        for (long long j = 0; j < n_jobs; j++)
            if (o->resume) datm_run_status_read(jobs[j].dir, jobs[j].status, sizeof jobs[j].status);
        rc = write_manifest(o, def_hash, jobs, (int)n_jobs, err);
    }
    int n_done = 0, n_failed = 0, n_skipped = 0;
    for (long long j = 0; !rc && j < n_jobs; j++) {
        sweep_job *jb = &jobs[j];
        if (!strcmp(jb->status, DATM_STATUS_COMPLETED)) {
            n_skipped++;
            datm_info("sweep job %lld/%lld: %s already COMPLETED, skipped", j + 1, n_jobs, jb->dir);
            continue;
        }
        if (datm_stop_requested()) break;
        char ck[1300];
        int64_t it;
        datm_error e = {0};
        int resume = o->resume && datm_checkpoint_latest(jb->dir, ck, sizeof ck, &it, &e) == DATM_OK;
        datm_info("sweep job %lld/%lld: %s %s", j + 1, n_jobs, resume ? "resume" : "run", jb->dir);
        snprintf(jb->status, sizeof jb->status, "RUNNING");
        write_manifest(o, def_hash, jobs, (int)n_jobs, &e);
        jb->exit_code = run_child(o, jb, resume);
        datm_run_status_read(jb->dir, jb->status, sizeof jb->status);
        if (jb->exit_code != 0 && !strcmp(jb->status, DATM_STATUS_COMPLETED))
            snprintf(jb->status, sizeof jb->status, "FAILED");
        if (!strcmp(jb->status, "MISSING") || !strcmp(jb->status, DATM_STATUS_RUNNING))
            snprintf(jb->status, sizeof jb->status, "FAILED");
        rc = write_manifest(o, def_hash, jobs, (int)n_jobs, err);
        if (!strcmp(jb->status, DATM_STATUS_COMPLETED)) n_done++;
        else {
            n_failed++;
            datm_warn("sweep job %lld: %s (exit %d), see %s/run.log", j, jb->status, jb->exit_code,
                      jb->dir);
            if (o->on_error == DATM_SWEEP_ON_ERROR_STOP) break;
        }
    }
    if (!rc)
        datm_info("sweep %s: %lld jobs, %d completed now, %d skipped as completed, %d not completed",
                  o->dir, n_jobs, n_done, n_skipped, (int)(n_jobs - n_done - n_skipped));
    if (!rc && n_done + n_skipped < n_jobs)
        rc = datm_error_set(err, datm_stop_requested() ? DATM_E_INTERRUPTED : DATM_E_INVALID,
                            "%lld of %lld jobs did not complete (%d failed); rerun with --resume",
                            n_jobs - n_done - n_skipped, n_jobs, n_failed);
    for (long long j = 0; jobs && j < n_jobs; j++)
        for (int k = 0; k < jobs[j].n_ov; k++) datm_free(jobs[j].ov[k]);
    datm_free(jobs);
    for (int a = 0; a < n_axes; a++)
        for (int k = 0; k < nv[a]; k++) datm_free(vals[a][k]);
    return rc;
}
