/* engine/pipeline/checkpoint.c: resume state in RUN_DIR/checkpoints/ckpt-<iteration>.h5.
 *
 * A checkpoint holds the model's full state (its save(): parameters, optimiser moments,
 * counters), the data cursor (epoch, batch), the training accumulators and the curve rows so
 * far. Random streams are keyed by (seed, purpose, iteration/doc), so no generator state is
 * needed. It is written to ckpt-<it>.h5.tmp, flushed to the disk, read back whole, stamped with
 * the SHA-256 of its contents (`digest`) and then `complete` (last), then renamed: a run killed
 * at any instant leaves either a complete checkpoint or none, and a checkpoint damaged later
 * (a bad disk, a copy cut short) fails its digest. Resume and fork take the newest checkpoint
 * that is complete and whole, warning about each damaged one they pass over. Only the newest
 * `keep` are kept. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/results_layout.h"
#include "pipeline/run_internal.h"

#define CKPT_DIR "checkpoints"

static int parse_ckpt_name(const char *name, int64_t *it)
{
    long long v;
    char tail[8];
    if (sscanf(name, "ckpt-%lld.h5%7s", &v, tail) != 1) return 0;   /* rejects .h5.tmp */
    *it = v;
    return 1;
}

/* Iterations of the checkpoints in run_dir/checkpoints, newest first; returns count. */
static int list_ckpts(const char *run_dir, int64_t *its, int max)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", run_dir, CKPT_DIR);
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) && n < max) {
        int64_t it;
        if (parse_ckpt_name(e->d_name, &it)) its[n++] = it;
    }
    closedir(dp);
    for (int i = 1; i < n; i++)   /* insertion sort, descending */
        for (int j = i; j > 0 && its[j] > its[j - 1]; j--) {
            int64_t t = its[j]; its[j] = its[j - 1]; its[j - 1] = t;
        }
    return n;
}

static void ckpt_path(const char *run_dir, int64_t it, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s/ckpt-%012lld.h5", run_dir, CKPT_DIR, (long long)it);
}

static int write_accum(datm_h5 *g, const datm_train_accum *a, datm_error *err)
{
    int64_t dl[1] = {DATM_MAX_LAYERS};
    int rc = datm_h5_write_scalar(g, "loss_sum", a->loss, err);
    if (!rc) rc = datm_h5_write_scalar(g, "loglik_sum", a->loglik, err);
    if (!rc) rc = datm_h5_write_f64(g, "kl_sum", a->kl, 1, dl, err);
    if (!rc) rc = datm_h5_write_f64(g, "step_sum", a->step, 1, dl, err);
    if (!rc) rc = datm_h5_write_scalar(g, "n_sum", (double)a->n, err);
    if (!rc) rc = datm_h5_write_scalar(g, "train_s", a->train_s, err);
    return rc;
}

static int read_accum(datm_h5 *g, datm_train_accum *a, datm_error *err)
{
    int64_t dl[1] = {DATM_MAX_LAYERS};
    double n = 0;
    int rc = datm_h5_read_scalar(g, "loss_sum", &a->loss, err);
    if (!rc) rc = datm_h5_read_scalar(g, "loglik_sum", &a->loglik, err);
    if (!rc) rc = datm_h5_read_f64(g, "kl_sum", a->kl, 1, dl, err);
    if (!rc) rc = datm_h5_read_f64(g, "step_sum", a->step, 1, dl, err);
    if (!rc) rc = datm_h5_read_scalar(g, "n_sum", &n, err);
    if (!rc) rc = datm_h5_read_scalar(g, "train_s", &a->train_s, err);
    a->n = (int64_t)n;
    return rc;
}

/* SHA-256 of every dataset under /checkpoint (names, shapes and values, values as doubles):
 * attributes (spec_hash, forked_from, complete) are not part of it, so a fork that re-stamps
 * them keeps the digest. Reading everything is also the check that the file reads back. */
static void digest_visit(const char *path, int rank, const int64_t *dims, const void *bytes,
                         size_t n_bytes, void *user)
{
    datm_sha256 *c = user;
    datm_sha256_update(c, path, strlen(path) + 1);
    int64_t r = rank;
    datm_sha256_update(c, &r, sizeof r);
    datm_sha256_update(c, dims, (size_t)rank * sizeof *dims);
    datm_sha256_update(c, bytes, n_bytes);
}

static int ckpt_digest(datm_h5 *g, char hex[65], datm_error *err)
{
    datm_sha256 c;
    datm_sha256_init(&c);
    int rc = datm_h5_read_all(g, digest_visit, &c, err);
    if (!rc) datm_sha256_hex(&c, hex);
    return rc;
}

/* Opens path and checks it: `complete`, and the digest when it has one (checkpoints written
 * before digests were kept are only read back whole). */
static int ckpt_check(const char *path, datm_error *err)
{
    datm_h5 *f = NULL, *g = NULL;
    int64_t done = 0;
    char want[80] = "", got[65];
    int rc = datm_h5_open(path, 0, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 0, &g, err);
    if (!rc && datm_h5_attr_exists(g, "complete"))
        rc = datm_h5_attr_get_i64(g, "complete", &done, err);
    if (!rc && done != 1) rc = datm_error_set(err, DATM_E_FORMAT, "%s: incomplete checkpoint", path);
    if (!rc && datm_h5_attr_exists(g, "digest"))
        rc = datm_h5_attr_get_str(g, "digest", want, sizeof want, err);
    if (!rc) rc = ckpt_digest(g, got, err);
    if (!rc && want[0] && strcmp(want, got) != 0)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: contents do not match their digest (%.12s "
                            "stored, %.12s read): the file is damaged", path, want, got);
    datm_h5_close(&g);
    datm_h5_close(&f);
    return rc;
}

int datm_checkpoint_write(const char *run_dir, const datm_spec *spec, const datm_model *m,
                          const datm_ckpt_state *st, const datm_curve_table *curves, int keep,
                          datm_error *err)
{
    char dir[1200], path[1300], tmp[1320];
    snprintf(dir, sizeof dir, "%s/%s", run_dir, CKPT_DIR);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create directory (%s)", dir,
                              strerror(errno));
    ckpt_path(run_dir, st->iteration, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);

    datm_h5 *f = NULL, *g = NULL, *mg = NULL, *cg = NULL, *ag = NULL;
    int rc = datm_h5_create(tmp, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 1, &g, err);
    if (!rc) rc = datm_h5_attr_i64(g, "iteration", st->iteration, err);
    if (!rc) rc = datm_h5_attr_i64(g, "epoch", st->epoch, err);
    if (!rc) rc = datm_h5_attr_i64(g, "batch", st->batch, err);
    if (!rc) rc = datm_h5_attr_str(g, "spec_hash", spec->hash, err);
    if (!rc) rc = datm_h5_attr_str(g, "variant", spec->variant, err);
    if (!rc && st->corpus[0]) rc = datm_h5_attr_str(g, "stream_corpus", st->corpus, err);
    if (!rc) rc = datm_h5_group(g, "model", 1, &mg, err);
    if (!rc && m->ops->save) rc = m->ops->save(m, mg, err);
    if (!rc) rc = datm_h5_group(g, "curves", 1, &cg, err);
    if (!rc) rc = datm_curves_write(curves, cg, err);
    if (!rc) rc = datm_h5_group(g, "accum", 1, &ag, err);
    if (!rc) rc = write_accum(ag, &st->acc, err);
    datm_h5_close(&ag);
    datm_h5_close(&cg);
    datm_h5_close(&mg);
    datm_h5_close(&g);
    if (f) {
        int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
        if (!rc) rc = rc2;
    }
    /* on the disk, then read back whole: its digest, and `complete` last */
    if (!rc) rc = datm_fsync_path(tmp, err);
    char hex[65];
    if (!rc) rc = datm_h5_open(tmp, 1, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 0, &g, err);
    if (!rc) rc = ckpt_digest(g, hex, err);
    if (!rc) rc = datm_h5_attr_str(g, "digest", hex, err);
    if (!rc) rc = datm_h5_attr_i64(g, "complete", 1, err);   /* last */
    datm_h5_close(&g);
    if (f) {
        int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
        if (!rc) rc = rc2;
    }
    if (!rc) rc = datm_fsync_path(tmp, err);
    datm_test_kill("ckpt");
    if (rc) {
        remove(tmp);
        return datm_error_prefix(err, "writing checkpoint %s: ", path);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return datm_error_set(err, DATM_E_IO, "%s: cannot rename checkpoint into place (%s)", path,
                              strerror(e));
    }
    datm_error e2 = {0};
    datm_fsync_parent(path, &e2);
    /* keep the newest `keep` */
    int64_t its[4096];
    int n = list_ckpts(run_dir, its, 4096);
    for (int i = keep; i < n; i++) {
        char old[1300];
        ckpt_path(run_dir, its[i], old, sizeof old);
        remove(old);
    }
    return DATM_OK;
}

int datm_checkpoint_latest(const char *run_dir, char *path, size_t size, int64_t *iteration,
                           datm_error *err)
{
    int64_t its[4096];
    int n = list_ckpts(run_dir, its, 4096);
    for (int i = 0; i < n; i++) {
        ckpt_path(run_dir, its[i], path, size);
        datm_error e = {0};
        if (ckpt_check(path, &e) == DATM_OK) {
            if (iteration) *iteration = its[i];
            return DATM_OK;
        }
        datm_warn("%s%s", e.msg, i + 1 < n ? "; skipped, trying the previous checkpoint" : "; skipped");
    }
    return datm_error_set(err, DATM_E_IO, "%s: no complete checkpoint", run_dir);
}

int datm_checkpoint_at(const char *run_dir, int64_t iteration, char *path, size_t size,
                       datm_error *err)
{
    ckpt_path(run_dir, iteration, path, size);
    if (access(path, R_OK) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: no checkpoint after iteration %lld (%s: %s)",
                              run_dir, (long long)iteration, path, strerror(errno));
    return ckpt_check(path, err);
}

/* Copies src to dst byte for byte. */
static int copy_file(const char *src, const char *dst, datm_error *err)
{
    FILE *in = fopen(src, "rb");
    if (!in) return datm_error_set(err, DATM_E_IO, "%s: cannot open (%s)", src, strerror(errno));
    FILE *out = fopen(dst, "wb");
    if (!out) {
        int e = errno;
        fclose(in);
        return datm_error_set(err, DATM_E_IO, "%s: cannot create (%s)", dst, strerror(e));
    }
    char buf[1 << 16];
    size_t n;
    int rc = DATM_OK;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            rc = datm_error_set(err, DATM_E_IO, "%s: cannot write (%s)", dst, strerror(errno));
            break;
        }
    if (!rc && ferror(in)) rc = datm_error_set(err, DATM_E_IO, "%s: cannot read (%s)", src, strerror(errno));
    if (!rc && (fflush(out) != 0 || fsync(fileno(out)) != 0))
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot write (%s)", dst, strerror(errno));
    fclose(in);
    if (fclose(out) != 0 && !rc)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot write (%s)", dst, strerror(errno));
    return rc;
}

int datm_checkpoint_fork(const char *src, const char *new_run_dir, const datm_spec *new_spec,
                         int64_t *iteration, datm_error *err)
{
    int rc0 = ckpt_check(src, err);
    if (rc0) return rc0;
    char dir[1200], path[1300], tmp[1320];
    snprintf(dir, sizeof dir, "%s/%s", new_run_dir, CKPT_DIR);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create directory (%s)", dir,
                              strerror(errno));
    datm_h5 *f = NULL, *g = NULL;
    int64_t it = -1;
    int rc = datm_h5_open(src, 0, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 0, &g, err);
    if (!rc) rc = datm_h5_attr_get_i64(g, "iteration", &it, err);
    datm_h5_close(&g);
    datm_h5_close(&f);
    if (rc) return rc;
    ckpt_path(new_run_dir, it, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    rc = copy_file(src, tmp, err);
    if (!rc) rc = datm_h5_open(tmp, 1, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 0, &g, err);
    if (!rc) rc = datm_h5_attr_str(g, "spec_hash", new_spec->hash, err);
    if (!rc) rc = datm_h5_attr_str(g, "forked_from", src, err);
    datm_h5_close(&g);
    if (f) {
        int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
        if (!rc) rc = rc2;
    }
    if (!rc) rc = ckpt_check(tmp, err);   /* the copy is whole */
    if (!rc && rename(tmp, path) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s (%s)", tmp, path,
                            strerror(errno));
    if (rc) remove(tmp);
    if (!rc && iteration) *iteration = it;
    return rc;
}

int datm_checkpoint_read(const char *path, const datm_spec *spec, datm_model *m,
                         datm_ckpt_state *st, datm_curve_table *curves, datm_error *err)
{
    datm_h5 *f = NULL, *g = NULL, *mg = NULL, *cg = NULL, *ag = NULL;
    char hash[80] = "";
    memset(st, 0, sizeof *st);
    int rc = datm_h5_open(path, 0, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 0, &g, err);
    if (!rc) rc = datm_h5_attr_get_str(g, "spec_hash", hash, sizeof hash, err);
    if (!rc && strcmp(hash, spec->hash) != 0)
        rc = datm_error_set(err, DATM_E_INVALID, "%s was written by a different spec (hash %.12s, "
                            "this spec %.12s); resume needs the run's own spec.resolved.yaml",
                            path, hash, spec->hash);
    if (!rc) rc = datm_h5_attr_get_i64(g, "iteration", &st->iteration, err);
    if (!rc) rc = datm_h5_attr_get_i64(g, "epoch", &st->epoch, err);
    if (!rc) rc = datm_h5_attr_get_i64(g, "batch", &st->batch, err);
    if (!rc && datm_h5_attr_exists(g, "stream_corpus"))
        rc = datm_h5_attr_get_str(g, "stream_corpus", st->corpus, sizeof st->corpus, err);
    if (!rc && (st->iteration < 0 || st->epoch < 0 || st->batch < 0))
        rc = datm_error_set(err, DATM_E_FORMAT, "iteration %lld, epoch %lld, batch %lld: not a "
                            "position in a run", (long long)st->iteration, (long long)st->epoch,
                            (long long)st->batch);
    if (!rc) rc = datm_h5_group(g, "model", 0, &mg, err);
    if (!rc && m->ops->load) rc = m->ops->load(m, mg, err);
    else if (!rc && !m->ops->load)
        rc = datm_error_set(err, DATM_E_UNSUPPORTED, "variant %s cannot load its state", spec->variant);
    if (!rc) rc = datm_h5_group(g, "curves", 0, &cg, err);
    if (!rc) rc = datm_curves_load(curves, cg, err);
    if (!rc) rc = datm_h5_group(g, "accum", 0, &ag, err);
    if (!rc) rc = read_accum(ag, &st->acc, err);
    if (!rc && (st->acc.n < 0 || !(st->acc.train_s >= 0) || !isfinite(st->acc.loss) ||
                !isfinite(st->acc.loglik)))
        rc = datm_error_set(err, DATM_E_FORMAT, "accum: %lld batches, %g s, loss %g: not a "
                            "training state", (long long)st->acc.n, st->acc.train_s, st->acc.loss);
    datm_h5_close(&ag);
    datm_h5_close(&cg);
    datm_h5_close(&mg);
    datm_h5_close(&g);
    datm_h5_close(&f);
    if (rc) datm_error_prefix(err, "reading checkpoint %s: ", path);
    return rc;
}
