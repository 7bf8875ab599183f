/* engine/pipeline/cache.c: the content-addressed run cache of `datm pipeline` (pipefile.h):
 * run keys, the remembered file hashes, and the state of each run's directory. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/numerics.h"
#include "data/data.h"
#include "io/results_layout.h"
#include "pipeline/pipefile.h"
#include "pipeline/run_internal.h"

#define FILEHASH_NAME "filehash.tsv"

/* ---- remembered file hashes ---- */

void datm_filehash_free(datm_filehash_cache *fc)
{
    for (int i = 0; i < fc->n; i++) datm_free(fc->e[i].file);
    free(fc->e);
    memset(fc, 0, sizeof *fc);
}

static int fh_add(datm_filehash_cache *fc, const char *file, long long size, long long mt,
                  const char *hex, datm_error *err)
{
    if (fc->n == fc->cap) {
        int cap = fc->cap ? fc->cap * 2 : 64;
        void *e = realloc(fc->e, (size_t)cap * sizeof *fc->e);
        if (!e) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
        fc->e = e;
        fc->cap = cap;
    }
    struct datm_filehash_entry *x = &fc->e[fc->n];
    x->file = datm_strdup(file, err);
    if (!x->file) return DATM_E_NOMEM;
    x->size = size;
    x->mtime_ns = mt;
    snprintf(x->hex, sizeof x->hex, "%s", hex);
    fc->n++;
    return DATM_OK;
}

int datm_filehash_open(const char *cache_dir, datm_filehash_cache *fc, datm_error *err)
{
    memset(fc, 0, sizeof *fc);
    snprintf(fc->path, sizeof fc->path, "%s/%s", cache_dir, FILEHASH_NAME);
    FILE *f = fopen(fc->path, "r");
    if (!f) return DATM_OK;   /* a new cache */
    char line[PATH_MAX + 200];
    int rc = DATM_OK;
    while (!rc && fgets(line, sizeof line, f)) {
        long long size, mt;
        char hex[65], file[PATH_MAX];
        /* a line that does not parse (a torn write) is forgotten: the file is hashed again */
        if (sscanf(line, "%lld\t%lld\t%64[0-9a-f]\t%4095[^\n]", &size, &mt, hex, file) == 4 &&
            strlen(hex) == 64)
            rc = fh_add(fc, file, size, mt, hex, err);
    }
    fclose(f);
    return rc;
}

int datm_filehash_get(datm_filehash_cache *fc, const char *path, char hex[65], datm_error *err)
{
    char abs[PATH_MAX];
    if (!realpath(path, abs))
        return datm_error_set(err, DATM_E_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (stat(abs, &st) != 0) return datm_error_set(err, DATM_E_IO, "%s: %s", abs, strerror(errno));
    long long size = (long long)st.st_size;
    long long mt = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    for (int i = fc->n - 1; i >= 0; i--)
        if (!strcmp(fc->e[i].file, abs)) {
            if (fc->e[i].size == size && fc->e[i].mtime_ns == mt) {
                memcpy(hex, fc->e[i].hex, 65);
                return DATM_OK;
            }
            break;
        }
    int rc = datm_sha256_file(abs, hex, err);
    if (rc) return rc;
    fc->dirty = 1;
    return fh_add(fc, abs, size, mt, hex, err);
}

int datm_filehash_save(datm_filehash_cache *fc, datm_error *err)
{
    if (!fc->dirty) return DATM_OK;
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", fc->path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (slash && datm_run_mkdir_p(dir, err)) return err->code;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", fc->path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return datm_error_set(err, DATM_E_IO, "%s: %s", tmp, strerror(errno));
    for (int i = 0; i < fc->n; i++) {
        int dup = 0;   /* keep only the newest entry of a file */
        for (int j = i + 1; j < fc->n && !dup; j++) dup = !strcmp(fc->e[i].file, fc->e[j].file);
        if (!dup)
            fprintf(f, "%lld\t%lld\t%s\t%s\n", fc->e[i].size, fc->e[i].mtime_ns, fc->e[i].hex,
                    fc->e[i].file);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, fc->path) != 0) {
        int e = errno;
        unlink(tmp);
        return datm_error_set(err, DATM_E_IO, "%s: cannot write: %s", fc->path, strerror(e));
    }
    fc->dirty = 0;
    return DATM_OK;
}

/* ---- keys ---- */

typedef struct sbuf {
    char  *p;
    size_t n, cap;
    int    oom;
} sbuf;

static void sb_add(sbuf *b, const char *a, const char *c, const char *d)
{
    const char *parts[3] = {a, c, d};
    for (int k = 0; k < 3 && !b->oom; k++) {
        size_t l = strlen(parts[k]);
        if (b->n + l + 2 > b->cap) {
            size_t cap = (b->cap + l) * 2 + 1024;
            char *q = realloc(b->p, cap);
            if (!q) { b->oom = 1; return; }
            b->p = q;
            b->cap = cap;
        }
        memcpy(b->p + b->n, parts[k], l);
        b->n += l;
        b->p[b->n] = '\0';
    }
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "data <file> <sha256>" lines of every regular file of the data set's folder. */
static int add_data_files(sbuf *b, const char *dir, datm_filehash_cache *fc, datm_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return datm_error_set(err, DATM_E_IO, "%s: %s", dir, strerror(errno));
    char *names[512];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 512) {
        if (de->d_name[0] == '.') continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p) continue;
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        names[n] = datm_strdup(de->d_name, err);
        if (!names[n]) break;
        n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    int rc = DATM_OK;
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX], hex[65];
        if (!rc && snprintf(p, sizeof p, "%s/%s", dir, names[i]) >= (int)sizeof p)
            rc = datm_error_set(err, DATM_E_IO, "%s/%s: path too long", dir, names[i]);
        if (!rc) rc = datm_filehash_get(fc, p, hex, err);
        if (!rc) {
            sb_add(b, "data ", names[i], " ");
            sb_add(b, hex, "\n", "");
        }
        datm_free(names[i]);
    }
    return rc;
}

/* "sec.key=value" of every setting that differs from its schema default; output.dir and
 * threads never (they cannot change the numbers). */
static int add_settings(sbuf *b, const datm_spec *s, datm_error *err)
{
    char line[9000];
    snprintf(line, sizeof line, "variant %s\n", s->variant);
    sb_add(b, line, "", "");
    if (s->plugin[0]) {   /* a plugin's variant: its code is part of the key (not its path) */
        snprintf(line, sizeof line, "plugin %s\n", s->plugin_sha256);
        sb_add(b, line, "", "");
    }
    for (int id = 0; id < DATM_SEC_COUNT_; id++) {
        const datm_config *cfg = s->sec[id];
        const datm_param_schema *sch = datm_config_schema(cfg);
        const char *sec = datm_config_section(cfg);
        datm_config *def = NULL;
        int rc = datm_config_create_partial(sch, sec, &def, err);
        if (rc) return rc;
        for (int i = 0; sch[i].key; i++) {
            if ((!strcmp(sec, "output") && !strcmp(sch[i].key, "dir")) ||
                (!sec[0] && !strcmp(sch[i].key, "threads")))
                continue;
            char v[8192], dv[8192] = "";
            datm_config_format(cfg, sch[i].key, v, sizeof v);
            if (sch[i].def) datm_config_format(def, sch[i].key, dv, sizeof dv);
            if (sch[i].def && !strcmp(v, dv)) continue;
            snprintf(line, sizeof line, "%s%s%s=%s\n", sec, sec[0] ? "." : "", sch[i].key, v);
            sb_add(b, line, "", "");
        }
        datm_config_destroy(&def);
    }
    return DATM_OK;
}

static int spec_key(const datm_pipe_run *r, const datm_model_catalog *cat,
                    datm_filehash_cache *fc, char key[65], char name[256], datm_error *err)
{
    datm_spec s;
    int rc = datm_spec_load(r->spec, (const char *const *)r->overrides.v, r->overrides.n, cat, &s,
                            err);
    if (rc) {
        datm_error_prefix(err, "%s: run '%s': ", r->where, r->id);
        return rc;
    }
    snprintf(name, 256, "%s", s.p.run.name);
    sbuf b = {0};
    char head[128];
    snprintf(head, sizeof head, "datm run cache key 1\nnumerics %d\n", DATM_NUMERICS_VERSION);
    sb_add(&b, head, "", "");
    rc = add_settings(&b, &s, err);
    char dir[PATH_MAX];
    const char *ds = s.p.data.dataset;
    if (!rc) rc = datm_dataset_resolve(ds, dir, sizeof dir, err);
    if (!rc) rc = add_data_files(&b, dir, fc, err);
    if (rc) datm_error_prefix(err, "%s: run '%s': ", r->where, r->id);
    else if (b.oom) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    else datm_sha256_text(b.p, key);
    free(b.p);
    datm_spec_free(&s);
    return rc;
}

/* ---- states ---- */

static const char *const status_names[DATM_PIPE_STATUS_COUNT_] = {
    "pending", "done", "cached", "running", "failed", "resumable", "partial", "recorded"};
_Static_assert(sizeof status_names / sizeof *status_names == DATM_PIPE_STATUS_COUNT_,
               "one name per status");

const char *datm_pipe_status_name(datm_pipe_status s)
{
    return s >= 0 && s < DATM_PIPE_STATUS_COUNT_ ? status_names[s] : "?";
}

/* 1 when out/runs/<id> is a link to dir. */
static int linked(const datm_pipeline *p, const datm_pipe_run *r, const char *dir)
{
    char link[1600], target[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    snprintf(link, sizeof link, "%s/runs/%s", p->out_dir, r->id);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    return realpath(link, a) && realpath(dir, b) && !strcmp(a, b);
}

/* The state of run i's cache directory. probe: look at the lock (0: this process holds it,
 * and its own look would see it held) */
static void cache_state_read(const datm_pipeline *p, int i, datm_pipe_state *st, int probe)
{
    st->pid = 0;
    st->ckpt_iteration = 0;
    struct stat sb;
    const int exists = stat(st->dir, &sb) == 0;
    /* the lock before the status: a writer makes its result final before it lets the lock
     * go, so a status read after "not locked" is the final one; read before, it could be the
     * running status of a writer that completed in between, and the run would be taken for
     * an abandoned one */
    const int held = probe && exists && datm_run_lock_holder(st->dir, &st->pid);
    if (held) {
        /* its result is not opened: HDF5 locks a file it reads, and the writer's own open of
         * it would meet that lock (h5.c waits it out, but a pipeline waiting for the run
         * reads every 100 ms) */
        snprintf(st->result, sizeof st->result, "RUNNING");
        st->status = DATM_PIPE_RUNNING;
        return;
    }
    datm_run_status_read(st->dir, st->result, sizeof st->result);
    if (!exists) { st->status = DATM_PIPE_PENDING; return; }
    if (!strcmp(st->result, "COMPLETED")) {
        st->status = linked(p, &p->runs[i], st->dir) ? DATM_PIPE_DONE : DATM_PIPE_CACHED;
        return;
    }
    if (!strcmp(st->result, "FAILED")) { st->status = DATM_PIPE_FAILED; return; }
    char ck[1400];
    datm_error e = {0};
    if (p->runs[i].kind == DATM_PIPE_RUN_SPEC &&
        datm_checkpoint_latest(st->dir, ck, sizeof ck, &st->ckpt_iteration, &e) == DATM_OK)
        st->status = DATM_PIPE_RESUMABLE;
    else
        st->status = DATM_PIPE_PARTIAL;
}

/* The cache's state, then the record's: a COMPLETED result in the cache always wins, and a
 * run another process writes is waited for; anything else with a usable record is finished. */
static void state_read(const datm_pipeline *p, int i, datm_pipe_state *st, int probe)
{
    cache_state_read(p, i, st, probe);
    if (st->record[0] && st->status != DATM_PIPE_DONE && st->status != DATM_PIPE_CACHED &&
        st->status != DATM_PIPE_RUNNING)
        st->status = DATM_PIPE_RECORDED;
}

/* Sets st->record when OUT/records/<id>.h5 has the run's key; a record with another key
 * (stale) or one that cannot be read is left unused, said in one line. Read only when the
 * cache has no COMPLETED result, which wins anyway. */
static void record_look(const datm_pipeline *p, int i, datm_pipe_state *st)
{
    char path[sizeof st->record], key[65];
    st->record[0] = '\0';
    datm_record_path(p->out_dir, p->runs[i].id, path, sizeof path);
    if (st->status == DATM_PIPE_DONE || st->status == DATM_PIPE_CACHED || access(path, F_OK) != 0)
        return;
    datm_error e = {0};
    if (datm_record_key(path, key, &e) != DATM_OK) {
        datm_warn("run %s: its record is not used: %s", p->runs[i].id, e.msg);
    } else if (strcmp(key, st->key) != 0) {
        datm_warn("run %s: its record %s is stale (key %.12s, the run's is now %.12s): "
                  "ignored", p->runs[i].id, path, key, st->key);
    } else {
        snprintf(st->record, sizeof st->record, "%s", path);
        if (st->status != DATM_PIPE_RUNNING) st->status = DATM_PIPE_RECORDED;
    }
}

void datm_pipe_state_refresh(const datm_pipeline *p, int i, datm_pipe_state *st)
{
    state_read(p, i, st, 1);
}

void datm_pipe_state_refresh_held(const datm_pipeline *p, int i, datm_pipe_state *st)
{
    state_read(p, i, st, 0);
}

int datm_pipeline_states(const datm_pipeline *p, const datm_model_catalog *cat,
                         datm_filehash_cache *fc, datm_pipe_state *st, datm_error *err)
{
    char name[256];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->n_runs; i++) {
            const datm_pipe_run *r = &p->runs[i];
            if (pass == 0 && r->kind == DATM_PIPE_RUN_SPEC) {
                memset(&st[i], 0, sizeof st[i]);
                int rc = spec_key(r, cat, fc, st[i].key, name, err);
                if (rc) return rc;
            } else if (pass == 1 && r->kind == DATM_PIPE_RUN_ENSEMBLE) {
                memset(&st[i], 0, sizeof st[i]);
                datm_sha256 h;
                datm_sha256_init(&h);
                const char head[] = "datm ensemble cache key 1\n";
                datm_sha256_update(&h, head, sizeof head - 1);
                for (int k = 0; k < r->members.n; k++) {
                    int j = datm_pipeline_find_run(p, r->members.v[k]);
                    DATM_ASSERT(j >= 0);
                    datm_sha256_update(&h, st[j].key, 64);
                    datm_sha256_update(&h, "\n", 1);
                }
                datm_sha256_hex(&h, st[i].key);
                snprintf(name, sizeof name, "ensemble-%s", r->id);
            } else {
                continue;
            }
            for (char *q = name; *q; q++)   /* a folder name */
                if (*q == '/' || *q == ' ') *q = '_';
            if (snprintf(st[i].dir, sizeof st[i].dir, "%s/%.200s-%.16s", p->cache_dir, name,
                         st[i].key) >= (int)sizeof st[i].dir)
                return datm_error_set(err, DATM_E_INVALID, "%s: cache path too long",
                                      p->cache_dir);
            datm_pipe_state_refresh(p, i, &st[i]);
            record_look(p, i, &st[i]);
        }
    return DATM_OK;
}
