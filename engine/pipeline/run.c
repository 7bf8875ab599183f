/* engine/pipeline/run.c: one run of a spec: data -> registry create -> train (mini-batch
 * epochs, curve evaluations, checkpoints) -> evaluate (perplexity per docs/reference.md 4.5,
 * timing, classification) -> result.h5 (engine/io/results_layout.h) -> topics -> figures ->
 * report.
 *
 * result.h5 is written as result.h5.part with status RUNNING first (provenance recorded
 * before any work), completed in place, marked COMPLETED last and only then renamed, so a
 * crash at any instant never leaves a COMPLETED file. FAILED and INTERRUPTED runs keep
 * result.h5.part with that status. No silent NaN: the loss, the per-layer KL and every Phi(l)
 * are checked after each mini-batch, and the run stops naming the batch and the quantity. */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/classify.h"
#include "eval/linclass.h"
#include "eval/perplexity.h"
#include "io/results.h"
#include "io/results_layout.h"
#include "data/stream.h"
#include "par/par.h"
#include "pipeline/run_internal.h"
#include "rand/rand.h"

typedef struct run_ctx {
    const datm_spec     *spec;
    const datm_run_opts *opts;
    datm_run_data        data;
    datm_model          *m;
    int                  n_layers;
    datm_curve_table     curves;
    datm_ckpt_state      st;
    uint64_t             seed;
    int64_t              bpe, total;    /* batches per epoch, mini-batches in the run */
    char                 part[1300], final[1300];
    FILE                *log;
    char                 dir[1024];      /* where this run writes: opts->run_dir, or
                                            run_dir.new for an --overwrite run */
    char                 final_dir[1024];/* the directory an --overwrite run replaces, or "" */
    datm_run_lock        lock;           /* held on dir while writing it */
    datm_run_lock        final_lock;     /* held on final_dir until the swap */
    /* final metrics; NaN when not measured */
    double ppl, ppl_obs, test_s_per_doc, error_rate;
    const char *classifier;    /* "model" (own predict) or "logreg" (liblinear on theta) */
    double macro_f1, predict_s_per_doc;
    /* the final evaluation's perplexity after n draws, at up to SAMPLE_CURVE_MAX points */
#define SAMPLE_CURVE_MAX 64
    double sc_n[SAMPLE_CURVE_MAX], sc_ppl[SAMPLE_CURVE_MAX], sc_obs[SAMPLE_CURVE_MAX];
    int    sc_len;
    datm_class_report report;  /* confusion matrix and per-class F1 (n_classes 0: none) */
    int completed;             /* result.h5 is COMPLETED and in place */
} run_ctx;

/* ---- small helpers ---- */

int datm_run_mkdir_p(const char *path, datm_error *err)
{
    char buf[1200];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return datm_error_set(err, DATM_E_IO, "%s: cannot create directory (%s)", buf,
                                  strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create directory (%s)", buf, strerror(errno));
    struct stat st;
    if (stat(buf, &st) != 0)
        return datm_error_set(err, DATM_E_IO, "%s: %s", buf, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return datm_error_set(err, DATM_E_IO, "%s: %s (a directory is needed here)", buf,
                              strerror(ENOTDIR));
    return DATM_OK;
}

int datm_run_write_text(const char *path, const char *text, datm_error *err)
{
    return datm_write_text_atomic(path, text, err);
}

/* A seed for evaluation draws at `index`, from the run's root seed. */
static uint64_t eval_seed(uint64_t seed, uint64_t index)
{
    datm_rng r;
    datm_rng_init(&r, seed, DATM_STREAM_EVAL, index);
    return datm_rng_u64(&r);
}

static void tee_log(datm_log_level level, const char *msg, void *user)
{
    static const char *const tag[] = {"debug: ", "", "warning: ", "error: "};
    FILE *f = user;
    if (level >= datm_log_get_level()) fprintf(stderr, "%s%s\n", tag[level], msg);
    if (f) {
        fprintf(f, "%s%s\n", tag[level], msg);
        fflush(f);
    }
}

/* ---- perplexity (docs/reference.md 4.5) ---- */

/* Where the final evaluation records its running perplexity: after n collected draws. */
typedef struct sample_curve {
    double *n, *ppl, *obs;
    int     len, cap;
} sample_curve;

/* Every floor(S/20) collected draws (every draw when S < 20) and the last one: 20 to 39
 * O(nnz) scorings whatever S is. */
static int is_checkpoint(int64_t collected, int64_t samples)
{
    const int64_t step = samples >= 20 ? samples / 20 : 1;
    return collected == samples || collected % step == 0;
}

/* The evaluation documents are split over the ranks when the model computes only its own
 * rows (par.h): rank q scores rows [N q / R, N (q + 1) / R). */
static int eval_split(int64_t N)
{
    return datm_par_own_rows() && datm_par_size() > 1 && N >= datm_par_size();
}

static int64_t eval_row0(int64_t N, int q) { return N * q / datm_par_size(); }

/* full = the accumulators of every rank's rows (part: this rank's), on every rank: the same
 * values, entry by entry, as one process's accumulator, so the perplexity computed from it
 * is one process's. */
static int accum_gather(datm_rate_accum *full, const datm_rate_accum *part, datm_error *err)
{
    const int R = datm_par_size(), me = datm_par_rank();
    const int64_t N = full->n_docs;
    int rc = datm_rate_accum_place(full, part, eval_row0(N, me), err);
    int64_t *bytes = rc ? NULL : datm_alloc_array((size_t)R * 3, sizeof *bytes, err);
    if (!rc && !bytes) rc = DATM_E_NOMEM;
    const int64_t *rp = full->pattern.row_ptr;
    for (int q = 0; !rc && q < R; q++) {
        const int64_t a = eval_row0(N, q), b = eval_row0(N, q + 1);
        bytes[q] = (rp[b] - rp[a]) * (int64_t)sizeof(double);
        bytes[R + q] = (b - a) * (int64_t)sizeof(double);
        bytes[2 * R + q] = (b - a) * full->fixed_K * (int64_t)sizeof(double);
    }
    if (!rc) rc = datm_par_gather_parts(full->rate, bytes, err);
    if (!rc) rc = datm_par_gather_parts(full->norm, bytes + R, err);
    if (!rc && full->fixed_phi) rc = datm_par_gather_parts(full->theta_sum, bytes + 2 * R, err);
    datm_free(bytes);
    return rc;
}

/* Accumulates `samples` posterior rates after `burnin` discarded ones, on the evaluation
 * documents' observed part; returns the per-word perplexity of the held-out part and of the
 * observed part, and the wall time of the whole pass; `curve` (may be NULL) gets the running
 * perplexity at the checkpoints above. Over MPI ranks (eval_split) each rank draws the
 * samples of its share of the documents and the accumulators are gathered before each
 * scoring (accum_gather). */
static int eval_perplexity(datm_model *m, const datm_csr *obs, const datm_csr *held,
                           int64_t burnin, int64_t samples, uint64_t seed, double *ppl,
                           double *ppl_obs, double *secs, const char *progress,
                           sample_curve *curve, datm_error *err)
{
    *ppl = *ppl_obs = NAN;
    if (secs) *secs = 0;
    if (!m->ops->eval_begin || !m->ops->eval_step || obs->n_rows == 0) return DATM_OK;
    const int split = eval_split(obs->n_rows);
    const int64_t d0 = split ? eval_row0(obs->n_rows, datm_par_rank()) : 0;
    const int64_t d1 = split ? eval_row0(obs->n_rows, datm_par_rank() + 1) : obs->n_rows;
    const datm_csr obs_p = datm_csr_rows_view(obs, d0, d1);
    const datm_csr held_p = held ? datm_csr_rows_view(held, d0, d1) : obs_p;
    datm_rate_accum acc, pacc;
    memset(&pacc, 0, sizeof pacc);
    int rc = datm_rate_accum_init(&acc, obs, held, err);
    if (rc) return rc;
    if (split) rc = datm_rate_accum_init(&pacc, &obs_p, held ? &held_p : NULL, err);
    datm_rate_accum *mine = split ? &pacc : &acc;   /* what the model adds to */
    double t0 = datm_time_now();
    void *state = NULL;
    datm_par_set_eval_first(d0);
    if (!rc) rc = m->ops->eval_begin(m, split ? &obs_p : obs, seed, &state, err);
    /* the final evaluation can take minutes (S = 3000 draws): show its progress */
    datm_progress prog;
    if (progress) datm_progress_begin(&prog, progress, burnin + samples);
    const char *int_env = progress ? getenv("DATM_TEST_SIGINT_AT_DRAW") : NULL;   /* tests */
    const int64_t int_at = int_env ? atoll(int_env) : -1;
    for (int64_t d = 0; !rc && d < burnin + samples; d++) {
        if (d + 1 == int_at) raise(SIGINT);
        /* a long final evaluation (S = 600 draws of 20 chain iterations: minutes) must obey
         * Ctrl-C too; the caller checkpoints the trained state so resume redoes only this */
        if (progress && datm_stop_requested()) {
            rc = datm_error_set(err, DATM_E_INTERRUPTED, "interrupted at draw %lld of %lld",
                                (long long)(d + 1), (long long)(burnin + samples));
            break;
        }
        if (d == burnin) datm_rate_accum_reset(mine);
        rc = m->ops->eval_step(m, state, d, mine, err);
        /* how the estimate settles with S (sample averaging); the scoring is inside the timed
         * pass, but O(nnz) per checkpoint, small beside one draw */
        if (!rc && curve && d >= burnin && curve->len < curve->cap &&
            is_checkpoint(d - burnin + 1, samples)) {
            if (split) rc = accum_gather(&acc, &pacc, err);
            if (rc) break;
            curve->n[curve->len] = (double)(d - burnin + 1);
            curve->ppl[curve->len] = held ? datm_rate_accum_perplexity(&acc, held) : NAN;
            curve->obs[curve->len] = datm_rate_accum_perplexity(&acc, obs);
            curve->len++;
        }
        if (progress) datm_progress_update(&prog, d + 1, "draw %lld of %lld", (long long)(d + 1),
                                           (long long)(burnin + samples));
    }
    if (progress) datm_progress_end(&prog);
    if (state && m->ops->eval_end) m->ops->eval_end(m, state);
    datm_par_set_eval_first(0);
    if (!rc && split) rc = accum_gather(&acc, &pacc, err);
    if (secs) *secs = datm_time_now() - t0;
    if (!rc) {
        *ppl = held ? datm_rate_accum_perplexity(&acc, held) : NAN;
        *ppl_obs = datm_rate_accum_perplexity(&acc, obs);
    }
    datm_rate_accum_free(&acc);
    datm_rate_accum_free(&pacc);
    if (rc) datm_error_prefix(err, "perplexity evaluation: ");
    return rc;
}

/* ---- training ---- */

/* Position of the first non-finite entry of x (n), or -1. First a pass without branches
 * (exponent bits all set: inf or NaN), which the compiler vectorises, since Phi is checked
 * every mini-batch (650,000 entries at V = 5,000, K = 128-64-32) and is nearly always fine. */
static int64_t first_nonfinite(const float *x, int64_t n)
{
    uint32_t any = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        any |= (u & 0x7f800000u) == 0x7f800000u;
    }
    for (int64_t i = 0; any && i < n; i++)
        if (!isfinite(x[i])) return i;
    return -1;
}

static int check_finite(run_ctx *c, const datm_train_stats *s, int64_t iter, datm_error *err)
{
    int64_t ep = (iter - 1) / c->bpe, b = (iter - 1) % c->bpe;
    const char *bad = NULL;
    char what[64];
    double val = 0;
    if (!isfinite(s->loss)) { bad = "loss"; val = s->loss; }
    for (int l = 0; !bad && l < s->n_layers && l < DATM_MAX_LAYERS; l++)
        if (!isfinite(s->kl[l])) {
            snprintf(what, sizeof what, "KL of layer %d", l + 1);
            bad = what;
            val = s->kl[l];
        }
    if (bad)
        return datm_error_set(err, DATM_E_NUMERIC, "iteration %lld (epoch %lld, batch %lld): %s "
                              "is %g; stopped (the last good checkpoint is kept)", (long long)iter,
                              (long long)ep, (long long)b, bad, val);
    if (!c->spec->p.train.check_phi || !c->m->ops->get_phi)
        return DATM_OK;
    for (int l = 1; l <= c->n_layers; l++) {
        const float *phi;
        int64_t rows, cols;
        if (c->m->ops->get_phi(c->m, l, &phi, &rows, &cols) != DATM_OK) continue;
        const int64_t i = first_nonfinite(phi, rows * cols);
        if (i >= 0)
            return datm_error_set(err, DATM_E_NUMERIC, "iteration %lld (epoch %lld, batch %lld): "
                                  "Phi(%d)[%lld, %lld] is %g; stopped (the last good "
                                  "checkpoint is kept)", (long long)iter, (long long)ep,
                                  (long long)b, l, (long long)(i / cols), (long long)(i % cols),
                                  (double)phi[i]);
    }
    return DATM_OK;
}

static int curve_point(run_ctx *c, int64_t iter, datm_error *err)
{
    const datm_train_params *tc = &c->spec->p.train;
    double row[DATM_CURVE_MAX_COLS];
    for (int i = 0; i < DATM_CURVE_MAX_COLS; i++) row[i] = NAN;
    datm_train_accum *a = &c->st.acc;
    double n = (double)a->n;
    row[0] = (double)iter;
    row[1] = (double)iter / (double)c->bpe;
    row[2] = a->train_s;
    row[3] = a->n ? a->loss / n : NAN;
    row[4] = a->n ? a->loglik / n : NAN;
    int rc = eval_perplexity(c->m, &c->data.curve_obs, &c->data.curve_held,
                             tc->eval_burnin, tc->eval_samples,
                             eval_seed(c->seed, (uint64_t)iter), &row[5], &row[6], NULL, NULL,
                             NULL, err);
    if (rc) return rc;
    for (int l = 0; l < c->n_layers; l++) {
        row[7 + l] = a->n ? a->kl[l] / n : NAN;
        row[7 + c->n_layers + l] = a->n ? a->step[l] / n : NAN;
    }
    rc = datm_curves_append(&c->curves, row, err);
    if (rc) return rc;
    /* heartbeat: a RUNNING result whose heartbeat is old belongs to a dead process */
    datm_h5 *f = NULL;
    datm_error e = {0};
    char now[64];
    datm_utc_now(now, sizeof now);
    if (datm_par_rank() == 0 && !datm_h5_open(c->part, 1, &f, &e))
        datm_h5_attr_str(f, DATM_ATTR_HEARTBEAT, now, &e);
    datm_h5_close(&f);
    datm_info("iter %lld epoch %.3f train %.1fs loss %.9g perplexity %.9g (observed %.9g)",
              (long long)iter, row[1], row[2], row[3], row[5], row[6]);
    double keep = a->train_s;
    memset(a, 0, sizeof *a);
    a->train_s = keep;
    return DATM_OK;
}

static int do_checkpoint(run_ctx *c, datm_error *err)
{
    const datm_train_params *tc = &c->spec->p.train;
    /* state kept in slices over the ranks (Adam's moments) is made whole first, on every
     * rank: a collective */
    int rc = datm_par_sharded_gather(err);
    if (rc || datm_par_rank() != 0) return rc;   /* rank 0 writes; the state is the same */
    return datm_checkpoint_write(c->dir, c->spec, c->m, &c->st, &c->curves,
                                 (int)tc->keep_checkpoints, err);
}

/* Where the mini-batches come from: the in-memory iterator over train_X, or the stream over
 * train.shards (data.stream; data/stream.h). Both are positioned by (epoch, batch), the
 * position a checkpoint records, and give the same order when train.shuffle is off. */
typedef struct batch_src {
    int             stream;
    datm_batch_iter it;
    datm_stream     st;
    datm_csr        X;      /* the in-memory mini-batch */
} batch_src;

static int src_open(run_ctx *c, batch_src *s, datm_error *err)
{
    const datm_train_params *tc = &c->spec->p.train;
    memset(s, 0, sizeof *s);
    s->stream = c->data.stream;
    if (!s->stream) {
        int rc = datm_batch_iter_init(&s->it, c->data.train_X.n_rows, tc->batch_size, c->seed,
                                      tc->shuffle, tc->drop_last, err);
        if (!rc) datm_batch_iter_seek(&s->it, c->st.epoch, c->st.batch);
        return rc;
    }
    datm_stream_opts o = {
        .batch_size = tc->batch_size, .seed = c->seed, .shuffle = tc->shuffle,
        .drop_last = tc->drop_last, .split_seed = (uint64_t)c->spec->p.run.seed,
        /* token-split trains on each document's observed part, as in memory */
        .obs_frac = strcmp(c->data.protocol, "token-split") ? 0.0 : c->spec->p.data.obs_fraction};
    if (datm_par_own_rows() && datm_par_size() > 1) {   /* this rank's chunks' rows only */
        datm_par_own(datm_par_chunks(), &o.own0, &o.own1);
        o.own_of = datm_par_chunks();
    }
    int rc = datm_stream_open(&s->st, &c->data.shards, &o, err);
    if (!rc) rc = datm_stream_seek(&s->st, c->st.epoch, c->st.batch, err);
    return rc;
}

static int src_next(run_ctx *c, batch_src *s, const datm_csr **X, const int64_t **rows,
                    int64_t *n, datm_error *err)
{
    if (s->stream) return datm_stream_next(&s->st, X, rows, n, err);
    datm_csr_free(&s->X);
    *n = datm_batch_iter_next(&s->it, rows);
    if (*n == 0) *n = datm_batch_iter_next(&s->it, rows);   /* epoch boundary */
    DATM_ASSERT(*n > 0);
    *X = &s->X;
    int64_t r0, r1;   /* with data-parallel ranks, only this rank's rows */
    datm_par_batch_rows(*n, &r0, &r1);
    return datm_csr_select_rows_range(&c->data.train_X, *rows, *n, r0, r1, &s->X, err);
}

static void src_close(batch_src *s)
{
    if (s->stream) datm_stream_close(&s->st);
    else datm_batch_iter_free(&s->it);
    datm_csr_free(&s->X);
}

/* Where the time in collectives went, by kind (par.h), for docs/scaling.md's ranks
 * benchmark; with DATM_PAR_SKEW=1 also the time spent waiting for the other ranks to arrive. */
static void log_collective_kinds(const datm_par_traffic *t)
{
    char line[1024];
    size_t n = 0;
    line[0] = '\0';
    for (int k = 0; k < DATM_PAR_N_KINDS && n < sizeof line; k++) {
        if (!t->kind_calls[k]) continue;
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %lld calls %.2f s",
                              n ? ", " : "", datm_par_kind_name(k),
                              (long long)t->kind_calls[k], t->kind_s[k]);
    }
    if (!n) return;   /* one process: nothing was exchanged */
    if (n < sizeof line && t->skew_s > 0)
        snprintf(line + n, sizeof line - n, "; %.2f s waiting for the ranks to arrive",
                 t->skew_s);
    datm_info("MPI: rank %d collectives by kind: %s", datm_par_rank(), line);
}

static int train_stage(run_ctx *c, datm_error *err)
{
    const datm_train_params *tc = &c->spec->p.train;
    const int64_t B = tc->batch_size;
    const int64_t eval_every = tc->eval_every;
    const int64_t ckpt_every = tc->checkpoint_every;
    const char *kill_env = getenv("DATM_TEST_KILL_AT_ITER");   /* tests: simulate a crash */
    const int64_t kill_at = kill_env ? atoll(kill_env) : -1;
    const char *int_env = getenv("DATM_TEST_SIGINT_AT_ITER");   /* tests: Ctrl-C at a batch */
    const int64_t int_at = int_env ? atoll(int_env) : -1;
    batch_src src;
    const int64_t first = c->st.iteration;   /* resume: the mini-batches before are done */
    const double cpu0 = datm_time_cpu();
    int rc = src_open(c, &src, err);
    if (rc) return rc;
    datm_progress prog;
    datm_progress_begin(&prog, "train", c->total);
    prog.done = c->st.iteration;
    prog.log = c->log;   /* a quiet or detached run still shows its progress in run.log */
    const double rho = (double)c->data.n_train / (double)B;
    int32_t *labels = NULL;
    if (c->data.train_labels) {
        labels = datm_alloc_array((size_t)B, sizeof *labels, err);
        if (!labels) rc = DATM_E_NOMEM;
    }
    for (int64_t iter = c->st.iteration + 1; !rc && iter <= c->total; iter++) {
        const int64_t *rows;
        const datm_csr *X;
        int64_t n;
        const int64_t ep = (iter - 1) / c->bpe, b = (iter - 1) % c->bpe;
        rc = src_next(c, &src, &X, &rows, &n, err);
        if (rc) break;
        if (labels)
            for (int64_t i = 0; i < n; i++) labels[i] = c->data.train_labels[rows[i]];
        datm_batch batch = {X, rows, labels};
        datm_train_ctx ctx = {iter, ep, c->seed, rho};
        datm_train_stats s;
        memset(&s, 0, sizeof s);
        double t0 = datm_time_now();
        rc = c->m->ops->train_batch(c->m, &batch, &ctx, &s, err);
        double dt = datm_time_now() - t0;
        if (rc) {
            datm_error_prefix(err, "iteration %lld (epoch %lld, batch %lld): ", (long long)iter,
                              (long long)ep, (long long)b);
            break;
        }
        rc = check_finite(c, &s, iter, err);
        if (rc) break;
        datm_train_accum *a = &c->st.acc;
        a->loss += s.loss;
        a->loglik += s.loglik;
        for (int l = 0; l < c->n_layers; l++) {
            a->kl[l] += s.kl[l];
            a->step[l] += s.step[l];
        }
        a->n++;
        a->train_s += dt;
        c->st.iteration = iter;
        c->st.epoch = b + 1 == c->bpe ? ep + 1 : ep;
        c->st.batch = b + 1 == c->bpe ? 0 : b + 1;
        datm_progress_update(&prog, iter, "epoch %lld loss %.6g", (long long)ep, s.loss);
        if (iter == c->total || (eval_every > 0 && iter % eval_every == 0))
            rc = curve_point(c, iter, err);
        if (!rc && ckpt_every > 0 && iter % ckpt_every == 0 && iter != c->total)
            rc = do_checkpoint(c, err);
        if (iter == kill_at) raise(SIGKILL);
        if (iter == int_at) raise(SIGINT);
        /* every rank stops at the same mini-batch (the checkpoint is a collective) */
        int stop = datm_stop_requested();
        if (!rc && datm_par_size() > 1) rc = datm_par_any(stop, &stop, err);
        if (!rc && stop && iter != c->total) {
            datm_warn("interrupted at iteration %lld: writing a checkpoint", (long long)iter);
            rc = do_checkpoint(c, err);
            if (!rc) rc = datm_error_set(err, DATM_E_INTERRUPTED, "interrupted at iteration %lld "
                                         "(resume with: datm resume %s)", (long long)iter,
                                         c->dir);
        }
    }
    datm_progress_end(&prog);
    datm_free(labels);
    src_close(&src);
    if (!rc && datm_par_chunks() > 0 && c->st.iteration > first) {
        /* what this rank exchanged (docs/scaling.md's bytes per step) */
        datm_par_traffic t;
        datm_par_traffic_get(&t);
        const int64_t steps = c->st.iteration - first;
        datm_info("MPI: rank %d of %d sent %lld bytes in %lld collectives over %lld "
                  "mini-batches: %.0f bytes a mini-batch; %.2f s in collectives (%.2f s of "
                  "CPU), %.2f s process CPU in training", datm_par_rank(), datm_par_size(),
                  (long long)t.bytes_sent, (long long)t.calls, (long long)steps,
                  (double)t.bytes_sent / (double)steps, t.wait_s, t.wait_cpu_s,
                  datm_time_cpu() - cpu0);
        log_collective_kinds(&t);
    }
    /* the state rank 0 writes into the result, whole (a collective, as in do_checkpoint) */
    if (!rc) rc = datm_par_sharded_gather(err);
    return rc;
}

/* ---- evaluate ---- */

/* Unsupervised models (docs/reference.md 4.6): error rate of an L2 logistic regression, penalty by
 * cross-validation on the training documents, on the concatenated per-layer theta (log1p). */
/* Over MPI ranks (eval_split) each rank infers its share of the documents, keyed by their
 * rows in X, and the rows are gathered: every rank holds one process's features. */
static int features(const datm_model *m, const datm_csr *X, uint64_t seed, int ns, float **out,
                    int64_t *d, datm_error *err)
{
    const int split = eval_split(X->n_rows), R = datm_par_size();
    const int64_t N = X->n_rows;
    const int64_t d0 = split ? eval_row0(N, datm_par_rank()) : 0;
    const int64_t d1 = split ? eval_row0(N, datm_par_rank() + 1) : N;
    const datm_csr Xp = datm_csr_rows_view(X, d0, d1);
    datm_theta th;
    memset(&th, 0, sizeof th);
    datm_par_set_eval_first(d0);
    int rc = m->ops->infer(m, &Xp, seed, ns, &th, err);
    datm_par_set_eval_first(0);
    if (rc) return rc;
    *d = 0;
    for (int l = 0; l < th.n_layers; l++) *d += th.k[l];
    *out = datm_alloc_array((size_t)(N ? N : 1) * (size_t)*d, sizeof **out, err);
    if (!*out) rc = DATM_E_NOMEM;
    else datm_features_concat(th.n_layers, th.k, (const float *const *)th.theta, Xp.n_rows, 1,
                              *out + d0 * *d);
    datm_theta_free(&th);
    int64_t *bytes = split && !rc ? datm_alloc_array((size_t)R, sizeof *bytes, err) : NULL;
    if (split && !rc && !bytes) rc = DATM_E_NOMEM;
    for (int q = 0; bytes && q < R; q++)
        bytes[q] = (eval_row0(N, q + 1) - eval_row0(N, q)) * *d * (int64_t)sizeof **out;
    if (bytes) rc = datm_par_gather_parts(*out, bytes, err);
    datm_free(bytes);
    return rc;
}

/* Confusion matrix, per-class and macro F1 of the test predictions (eval/classify). */
static int class_report(run_ctx *c, const int32_t *pred, int64_t n, int C, datm_error *err)
{
    datm_class_report_free(&c->report);
    int rc = datm_class_report_compute(c->data.test.labels, pred, n, C, &c->report, err);
    if (!rc) c->macro_f1 = c->report.macro_f1;
    return rc;
}

static int classify_logreg(run_ctx *c, uint64_t seed, datm_error *err)
{
    const datm_evaluate_params *ec = &c->spec->p.evaluate;
    const int ns = (int)ec->feature_samples;
    const datm_csr *Xtr = &c->data.train_X, *Xte = &c->data.test.X;
    const int C = c->data.train.n_classes;
    float *ftr = NULL, *fte = NULL;
    int32_t *pred = NULL;
    int64_t d = 0, d2 = 0;
    datm_linclass lr;
    memset(&lr, 0, sizeof lr);
    double t0 = datm_time_now();
    int rc = features(c->m, Xtr, seed ^ 0x1, ns, &ftr, &d, err);
    if (!rc) rc = features(c->m, Xte, seed ^ 0x2, ns, &fte, &d2, err);
    if (!rc && d != d2) rc = datm_error_set(err, DATM_E_INVALID, "features: %lld vs %lld columns",
                                            (long long)d, (long long)d2);
    datm_linclass_params p;
    datm_linclass_params_default(&p);
    p.n_folds = (int)ec->cv_folds;
    p.cv_max_docs = ec->cv_docs;
    if (!rc) rc = datm_linclass_fit(ftr, Xtr->n_rows, d, c->data.train_labels, C, &p, &lr, err);
    if (!rc) {
        pred = datm_alloc_array((size_t)(Xte->n_rows ? Xte->n_rows : 1), sizeof *pred, err);
        if (!pred) rc = DATM_E_NOMEM;
    }
    if (!rc) {
        datm_linclass_predict(&lr, fte, Xte->n_rows, pred);
        c->error_rate = datm_error_rate(c->data.test.labels, pred, Xte->n_rows);
        c->classifier = "logreg";
        rc = class_report(c, pred, Xte->n_rows, C, err);
        datm_info("evaluate: error rate %.9g of logistic regression (liblinear, C %.4g, CV "
                  "accuracy %.4f) on %lld theta features of %lld test documents (%.1fs)",
                  c->error_rate, lr.C, lr.cv_accuracy, (long long)d, (long long)Xte->n_rows,
                  datm_time_now() - t0);
    }
    datm_linclass_free(&lr);
    datm_free(ftr);
    datm_free(fte);
    datm_free(pred);
    if (rc) datm_error_prefix(err, "classification: ");
    return rc;
}

static int evaluate_stage(run_ctx *c, datm_error *err)
{
    const datm_evaluate_params *ec = &c->spec->p.evaluate;
    const uint64_t es = eval_seed(c->seed, DATM_RUN_EVAL_INDEX);
    int rc = DATM_OK;
    if (ec->perplexity && eval_split(c->data.eval_obs.n_rows))
        datm_info("evaluate: the %lld evaluation documents split over %d MPI ranks",
                  (long long)c->data.eval_obs.n_rows, datm_par_size());
    if (ec->perplexity) {
        double secs = 0;
        int64_t S = ec->samples;
        sample_curve sc = {c->sc_n, c->sc_ppl, c->sc_obs, 0, SAMPLE_CURVE_MAX};
        rc = eval_perplexity(c->m, &c->data.eval_obs, &c->data.eval_held,
                             ec->burnin, S, es, &c->ppl, &c->ppl_obs, &secs,
                             "evaluate", &sc, err);
        if (rc) return rc;
        c->sc_len = sc.len;
        for (int i = 0; i < sc.len; i++)
            datm_info("evaluate: after %lld of %lld draws: perplexity %.6g (observed part %.6g)",
                      (long long)sc.n[i], (long long)S, sc.ppl[i], sc.obs[i]);
        int64_t ts = ec->time_samples;
        if (ts > 0) {
            double p1, p2;
            rc = eval_perplexity(c->m, &c->data.eval_obs, NULL, 0, ts, es, &p1, &p2, &secs,
                                 "test time", NULL, err);
            if (rc) return rc;
        }
        if (c->data.eval_obs.n_rows) c->test_s_per_doc = secs / (double)c->data.eval_obs.n_rows;
        datm_info("evaluate: perplexity %.9g (observed part %.9g) over %lld documents, S = %lld; "
                  "%.3g s per document", c->ppl, c->ppl_obs, (long long)c->data.eval_obs.n_rows,
                  (long long)S, c->test_s_per_doc);
    }
    if (c->data.have_test && !c->m->ops->predict && c->m->ops->infer && c->data.test.labels &&
        c->data.train_labels && c->data.train.n_classes > 0)
        return classify_logreg(c, es, err);
    if (c->data.have_test && c->m->ops->predict && c->data.test.labels &&
        c->data.train.n_classes > 0) {
        c->classifier = "model";
        const datm_csr *X = &c->data.test.X;
        int C = c->data.train.n_classes;
        float *probs = datm_alloc_array((size_t)X->n_rows * (size_t)C, sizeof *probs, err);
        int32_t *pred = datm_alloc_array((size_t)(X->n_rows ? X->n_rows : 1), sizeof *pred, err);
        if (!probs || !pred) rc = DATM_E_NOMEM;
        const double t0 = datm_time_now();
        if (!rc) rc = c->m->ops->predict(c->m, X, datm_run_predict_seed(c->seed),
                                         (int)ec->predict_samples, probs, err);
        if (!rc && X->n_rows) c->predict_s_per_doc = (datm_time_now() - t0) / (double)X->n_rows;
        if (!rc) {
            datm_argmax_rows(probs, X->n_rows, C, pred);
            c->error_rate = datm_error_rate(c->data.test.labels, pred, X->n_rows);
            rc = class_report(c, pred, X->n_rows, C, err);
            datm_info("evaluate: error rate %.9g on %lld test documents", c->error_rate,
                      (long long)X->n_rows);
        }
        datm_free(probs);
        datm_free(pred);
    }
    return rc;
}

/* ---- result file ---- */

static int write_metric(datm_h5 *g, const char *name, double v, datm_error *err)
{
    return isnan(v) ? DATM_OK : datm_h5_write_scalar(g, name, v, err);
}

/* /metrics/val_error: the validation error rate of the state a supervised run ends with,
 * from the early_stopping record the variant saved under /model when model.val_fraction > 0:
 * the best check's (the state kept), or the last check's when the record only monitored
 * (monitor_only: the model is the last trained one). A setting is chosen on it, on documents
 * carved from the training set, without reading the test set (evaluate.classify: false).
 * Nothing is written when the run has no such record. */
static int write_val_error(datm_h5 *f, datm_error *err)
{
    datm_h5 *gm = NULL, *gv = NULL, *g = NULL;
    datm_error e = {0};
    double v = NAN, *errs = NULL;
    int64_t monitor = 0, dims[DATM_H5_MAX_RANK] = {0};
    int rank = 0;
    if (datm_h5_exists(f, DATM_GRP_MODEL) &&
        datm_h5_group(f, DATM_GRP_MODEL, 0, &gm, &e) == DATM_OK &&
        datm_h5_exists(gm, "early_stopping") &&
        datm_h5_group(gm, "early_stopping", 0, &gv, &e) == DATM_OK) {
        if (datm_h5_attr_get_i64(gv, "monitor_only", &monitor, &e) != DATM_OK) monitor = 0;
        if (!monitor) {
            if (datm_h5_attr_get_f64(gv, "best_error", &v, &e) != DATM_OK) v = NAN;
        } else if (datm_h5_exists(gv, "val_error") &&
                   datm_h5_read_f64_alloc(gv, "val_error", &errs, &rank, dims, &e) == DATM_OK &&
                   rank == 1 && dims[0] > 0) {
            v = errs[dims[0] - 1];
        }
    }
    datm_free(errs);
    datm_h5_close(&gv);
    datm_h5_close(&gm);
    int rc = DATM_OK;
    if (!isnan(v)) {
        rc = datm_h5_group(f, DATM_GRP_METRICS, 1, &g, err);
        if (!rc) rc = write_metric(g, DATM_MET_VAL_ERROR, v, err);
        datm_h5_close(&g);
    }
    return rc;
}

/* Fills result.h5.part with everything the run has; `status` is set by the caller. */
static int write_result_body(run_ctx *c, int with_model, int with_metrics, datm_error *err)
{
    datm_h5 *f = NULL, *g = NULL;
    int rc = datm_h5_open(c->part, 1, &f, err);
    if (rc) return rc;
    if (with_metrics) {
        rc = datm_h5_group(f, DATM_GRP_METRICS, 1, &g, err);
        if (!rc) rc = write_metric(g, DATM_MET_PERPLEXITY, c->ppl, err);
        if (!rc) rc = write_metric(g, DATM_MET_PERPLEXITY_OBS, c->ppl_obs, err);
        if (!rc) rc = write_metric(g, DATM_MET_TEST_S_PER_DOC, c->test_s_per_doc, err);
        if (!rc) rc = write_metric(g, DATM_MET_TRAIN_S, c->st.acc.train_s, err);
        if (!rc) rc = write_metric(g, DATM_MET_ERROR_RATE, c->error_rate, err);
        if (!rc) rc = write_metric(g, "macro_f1", c->macro_f1, err);
        if (!rc) rc = write_metric(g, "predict_s_per_doc", c->predict_s_per_doc, err);
        const datm_evaluate_params *ec = &c->spec->p.evaluate;
        if (!rc) rc = datm_h5_attr_i64(g, "samples", ec->samples, err);
        if (!rc) rc = datm_h5_attr_i64(g, "burnin", ec->burnin, err);
        if (!rc) rc = datm_h5_attr_i64(g, "time_samples", ec->time_samples, err);
        if (!rc) rc = datm_h5_attr_str(g, "protocol", c->data.protocol, err);
        if (!rc && c->classifier) rc = datm_h5_attr_str(g, "classifier", c->classifier, err);
        if (!rc) rc = datm_h5_attr_i64(g, "eval_docs", c->data.eval_obs.n_rows, err);
        datm_h5_close(&g);
    }
    if (!rc && with_metrics && c->sc_len > 0) {
        const int64_t n = c->sc_len;
        rc = datm_h5_group(f, DATM_GRP_SAMPLE_CURVE, 1, &g, err);
        if (!rc) rc = datm_h5_write_f64(g, "samples", c->sc_n, 1, &n, err);
        if (!rc) rc = datm_h5_write_f64(g, DATM_MET_PERPLEXITY, c->sc_ppl, 1, &n, err);
        if (!rc) rc = datm_h5_write_f64(g, DATM_MET_PERPLEXITY_OBS, c->sc_obs, 1, &n, err);
        datm_h5_close(&g);
    }
    if (!rc && with_metrics && c->report.n_classes > 0) {
        /* /classification: confusion (C, C) true x predicted, per-class precision/recall/F1 */
        const int64_t C = c->report.n_classes, cc[2] = {C, C};
        rc = datm_h5_group(f, "classification", 1, &g, err);
        if (!rc) rc = datm_h5_write_i64(g, "confusion", c->report.confusion, 2, cc, err);
        if (!rc) rc = datm_h5_write_f64(g, "precision", c->report.precision, 1, cc, err);
        if (!rc) rc = datm_h5_write_f64(g, "recall", c->report.recall, 1, cc, err);
        if (!rc) rc = datm_h5_write_f64(g, "f1", c->report.f1, 1, cc, err);
        datm_h5_close(&g);
    }
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CURVES, 1, &g, err);
    if (!rc) rc = datm_curves_write(&c->curves, g, err);
    datm_h5_close(&g);
    if (!rc && with_model) {
        datm_h5_delete(f, DATM_GRP_MODEL, err);
        rc = datm_h5_group(f, DATM_GRP_MODEL, 1, &g, err);
        if (!rc) rc = datm_h5_attr_str(g, "variant", c->spec->variant, err);
        if (!rc && c->m->ops->save) rc = c->m->ops->save(c->m, g, err);
        /* readers rely on phi_<l>: add what the variant's save() did not */
        for (int l = 1; !rc && c->m->ops->get_phi && l <= c->n_layers; l++) {
            char name[32];
            snprintf(name, sizeof name, DATM_MODEL_PHI_FMT, l);
            const float *phi;
            int64_t dims[2];
            if (datm_h5_exists(g, name) ||
                c->m->ops->get_phi(c->m, l, &phi, &dims[0], &dims[1]) != DATM_OK)
                continue;
            rc = datm_h5_write_f32(g, name, phi, 2, dims, err);
        }
        datm_h5_close(&g);
    }
    if (!rc && with_model && with_metrics) rc = write_val_error(f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_CHECKPOINT, 1, &g, err);
    if (!rc) rc = datm_h5_attr_i64(g, "iteration", c->st.iteration, err);
    if (!rc) rc = datm_h5_attr_i64(g, "epoch", c->st.epoch, err);
    if (!rc) rc = datm_h5_attr_i64(g, "batch", c->st.batch, err);
    if (!rc) rc = datm_h5_attr_i64(g, "total_iters", c->total, err);
    datm_h5_close(&g);
    int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
    if (!rc) rc = rc2;
    if (rc) datm_error_prefix(err, "writing %s: ", c->part);
    return rc;
}

static int set_status(run_ctx *c, const char *status, const char *msg, datm_error *err)
{
    datm_h5 *f = NULL;
    char now[64];
    datm_utc_now(now, sizeof now);
    int rc = datm_h5_open(c->part, 1, &f, err);
    if (!rc && msg) rc = datm_h5_attr_str(f, "error", msg, err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_FINISHED, now, err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_HEARTBEAT, now, err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_STATUS, status, err);   /* last */
    int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
    return rc ? rc : rc2;
}

/* Marks result.h5.part COMPLETED and renames it to result.h5, only after its contents are on
 * the disk and every dataset in it has been read back; then the status itself is read back.
 * A failure anywhere leaves result.h5.part (not COMPLETED) and names the file. */
static int finish_result(run_ctx *c, datm_error *err)
{
    int rc = datm_fsync_path(c->part, err);
    if (!rc) rc = datm_h5_verify_file(c->part, NULL, NULL, err);
    if (!rc) rc = set_status(c, DATM_STATUS_COMPLETED, NULL, err);
    if (!rc) rc = datm_fsync_path(c->part, err);
    if (!rc) {
        char status[32] = "";
        datm_h5 *f = NULL;
        rc = datm_h5_open(c->part, 0, &f, err);
        if (!rc) rc = datm_h5_attr_get_str(f, DATM_ATTR_STATUS, status, sizeof status, err);
        datm_h5_close(&f);
        if (!rc && strcmp(status, DATM_STATUS_COMPLETED) != 0)
            rc = datm_error_set(err, DATM_E_IO, "%s: status reads back as '%s'", c->part, status);
    }
    datm_test_kill("completed");
    if (!rc && rename(c->part, c->final) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s (%s)", c->part, c->final,
                            strerror(errno));
    if (rc) return datm_error_prefix(err, "completing the result: ");
    c->completed = 1;
    datm_error e = {0};
    datm_fsync_parent(c->final, &e);
    return DATM_OK;
}

/* ---- report (markdown summary) ---- */

static int write_report(run_ctx *c, datm_error *err)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/report.md", c->dir);
    datm_afile a;
    int rc = datm_afile_open(&a, path, err);
    if (rc) return rc;
    FILE *f = a.f;
    const datm_run_params *rp = &c->spec->p.run;
    fprintf(f, "# %s\n\nvariant `%s`, data `%s` (%s), seed %lld, spec hash `%.16s`\n\n",
            rp->name, c->spec->variant,
            c->spec->p.data.dataset, c->data.protocol,
            (long long)rp->seed, c->spec->hash);
    fprintf(f, "| metric | value |\n|---|---|\n");
    const struct { const char *name; double v; } mets[] = {
        {DATM_MET_PERPLEXITY, c->ppl}, {DATM_MET_PERPLEXITY_OBS, c->ppl_obs},
        {DATM_MET_ERROR_RATE, c->error_rate}, {DATM_MET_TEST_S_PER_DOC, c->test_s_per_doc},
        {DATM_MET_TRAIN_S, c->st.acc.train_s}};
    for (size_t i = 0; i < DATM_COUNTOF(mets); i++)
        if (!isnan(mets[i].v)) fprintf(f, "| %s | %.9g |\n", mets[i].name, mets[i].v);
    fprintf(f, "\n%lld mini-batches of %lld documents; %lld training and %lld evaluation "
               "documents; S = %lld samples.\n\n", (long long)c->st.iteration,
            (long long)c->spec->p.train.batch_size,
            (long long)c->data.n_train, (long long)c->data.eval_obs.n_rows,
            (long long)c->spec->p.evaluate.samples);
    fprintf(f, "Figures: `figures/` (each with its `.gp` and `.dat`).\n\n## Resolved spec\n\n```yaml\n%s```\n",
            c->spec->resolved);
    return datm_afile_commit(&a, err);
}

/* ---- the run directory ---- */

/* What a fresh run may do with its directory (rundir.c says why), decided without writing:
 * 0 in place (*clean: an earlier attempt with nothing to lose is removed first), 1 written
 * aside into DIR.new (--overwrite of a run worth keeping until then), or an error naming
 * `datm resume` or --overwrite. A directory that does not exist yet must be creatable. */
static int decide_dir(const datm_run_opts *opts, int check_lock, datm_rundir_state *st,
                      int *clean, datm_error *err)
{
    const char *dir = opts->run_dir;
    *clean = 0;
    int rc = datm_rundir_inspect(dir, st, err);
    if (rc) return -rc;
    if (!st->exists) {
        /* the nearest existing ancestor must take a new directory */
        char anc[1100];
        snprintf(anc, sizeof anc, "%s", dir);
        for (;;) {
            char *slash = strrchr(anc, '/');
            if (!slash) { snprintf(anc, sizeof anc, "."); break; }
            if (slash == anc) { anc[1] = '\0'; break; }
            *slash = '\0';
            struct stat sb;
            if (stat(anc, &sb) == 0) break;
        }
        struct stat sb;
        if (stat(anc, &sb) == 0 && !S_ISDIR(sb.st_mode))
            return -datm_error_set(err, DATM_E_IO, "%s: cannot create directory (%s is not a "
                                   "directory)", dir, anc);
        if (access(anc, W_OK | X_OK) != 0)
            return -datm_error_set(err, DATM_E_IO, "%s: cannot create directory in %s (%s)", dir,
                                   anc, strerror(errno));
        return 0;
    }
    if (access(dir, W_OK | X_OK) != 0)
        return -datm_error_set(err, DATM_E_IO, "%s: cannot write (%s)", dir, strerror(errno));
    if (st->foreign[0])
        return -datm_error_set(err, DATM_E_IO, "%s holds '%s', which datm did not write: a run "
                               "needs a new or empty directory (or one of its own runs); choose "
                               "another -o", dir, st->foreign);
    if (st->has_marker)
        return -datm_error_set(err, DATM_E_IO, "%s is the replacement being written by an "
                               "--overwrite run (%s/%s): continue it with 'datm resume %s'",
                               dir, dir, DATM_RUN_REPLACES_FILE, dir);
    long pid = 0;
    if (check_lock && datm_run_lock_holder(dir, &pid))
        return -datm_error_set(err, DATM_E_IO, "%s is being written by process %ld (lock %s/%s); "
                               "wait for it to finish or stop it", dir, pid, dir,
                               DATM_RUN_LOCK_FILE);
    const int finished = st->has_result || !strcmp(st->status, DATM_STATUS_COMPLETED);
    const int resumable = !finished && st->ckpt_iter >= 0;
    if (finished && !opts->overwrite)
        return -datm_error_set(err, DATM_E_IO, "%s holds a COMPLETED run (%s/%s); it is left as it "
                               "is: choose another -o, or pass --overwrite to replace it (the old "
                               "run stays until the new one is COMPLETED)", dir, dir,
                               DATM_RESULT_FILE);
    if (resumable && !opts->overwrite)
        return -datm_error_set(err, DATM_E_IO, "%s holds an unfinished run (status %s, checkpoint "
                               "after iteration %lld): continue it with 'datm resume %s', or pass "
                               "--overwrite to start afresh (the old run stays until the new one "
                               "is COMPLETED)", dir, st->status, (long long)st->ckpt_iter, dir);
    if (finished || resumable) return 1;
    *clean = !st->empty;
    return 0;
}

/* A fresh run's claim on its directory: in place, or written aside into DIR.new. On return
 * c->lock is held on c->dir (and c->final_lock on the replaced directory). */
static int claim_dir(run_ctx *c, datm_error *err)
{
    const char *dir = c->opts->run_dir;
    datm_rundir_state st;
    int clean = 0;
    int d = decide_dir(c->opts, 0, &st, &clean, err);
    if (d < 0) return -d;
    if (d == 1) {
        char stage[1300];
        datm_run_lock sl;
        int rc = datm_rundir_stage(dir, stage, sizeof stage, &sl, err);
        if (rc) return rc;
        char real[PATH_MAX];
        if (!realpath(dir, real) || strlen(real) >= sizeof c->final_dir ||
            strlen(stage) >= sizeof c->dir) {
            rc = datm_error_set(err, DATM_E_IO, "%s: %s", dir, strerror(errno ? errno : ENAMETOOLONG));
            datm_run_lock_release(&sl);
            return rc;
        }
        snprintf(c->final_dir, sizeof c->final_dir, "%.*s", (int)sizeof c->final_dir - 1, real);
        c->final_lock = c->lock;   /* dir stays locked until the swap */
        c->lock = sl;
        snprintf(c->dir, sizeof c->dir, "%.*s", (int)sizeof c->dir - 1, stage);
        datm_info("%s holds a %s run: the new run is written to %s and replaces it when it is "
                  "COMPLETED", dir, st.has_result ? "COMPLETED" : "resumable", stage);
        return DATM_OK;
    }
    if (!clean) return DATM_OK;
    /* nothing to lose: an attempt that failed or was killed before its first checkpoint */
    if (strcmp(st.status, "MISSING") != 0)
        datm_info("%s: starting afresh over an earlier attempt (status %s, no checkpoint)", dir,
                  st.status);
    return datm_rundir_clean(dir, err);
}

/* resume: the directory must hold an unfinished run; an --overwrite run's replacement
 * (replaces.txt) is swapped in when it completes. */
static int resume_dir(run_ctx *c, datm_error *err)
{
    const char *dir = c->opts->run_dir;
    datm_rundir_state st;
    int rc = datm_rundir_inspect(dir, &st, err);
    if (rc) return rc;
    if (st.has_result)
        return datm_error_set(err, DATM_E_IO, "%s is COMPLETED (%s/%s); there is nothing to "
                              "resume", dir, dir, DATM_RESULT_FILE);
    char target[PATH_MAX];
    if (datm_rundir_replaces(dir, target, sizeof target) && strlen(target) < sizeof c->final_dir) {
        rc = datm_run_lock_acquire(target, &c->final_lock, err);
        if (rc) return rc;
        snprintf(c->final_dir, sizeof c->final_dir, "%.*s", (int)sizeof c->final_dir - 1, target);
    }
    return DATM_OK;
}

static int prepare(run_ctx *c, datm_error *err)
{
    const char *dir = c->opts->run_dir;
    if (strlen(dir) + 8 >= sizeof c->dir)
        return datm_error_set(err, DATM_E_INVALID, "%.200s...: run directory path too long (at "
                              "most %d characters)", dir, (int)sizeof c->dir - 8);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    if (datm_par_rank() != 0) {
        /* another rank of an MPI run: rank 0 owns the directory; this one writes nothing and
         * reads only the checkpoint that resume continues from */
        snprintf(c->part, sizeof c->part, "%s/%s.part", c->dir, DATM_RESULT_FILE);
        snprintf(c->final, sizeof c->final, "%s/%s", c->dir, DATM_RESULT_FILE);
        return DATM_OK;
    }
    /* one writer per run directory: a second run, resume or fork fails here, naming the
     * holder, before it has touched a file. A pipeline on the same cache may move a directory
     * that holds nothing finished aside (sched.c) just as a fresh run makes it and takes its
     * lock: the directory is then gone, and the run makes it afresh. */
    int rc = DATM_OK;
    for (int attempt = 0;; attempt++) {
        rc = datm_run_mkdir_p(dir, err);
        if (rc) return rc;
        rc = datm_run_lock_acquire(dir, &c->lock, err);
        struct stat sb;
        if (!rc || c->opts->resume || attempt >= 3 || stat(dir, &sb) == 0) break;
        datm_error_clear(err);
    }
    if (!rc) rc = c->opts->resume ? resume_dir(c, err) : claim_dir(c, err);
    if (rc) return rc;
    snprintf(c->part, sizeof c->part, "%s/%s.part", c->dir, DATM_RESULT_FILE);
    snprintf(c->final, sizeof c->final, "%s/%s", c->dir, DATM_RESULT_FILE);
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", c->dir, DATM_RESULT_SPEC_FILE);
    rc = datm_run_write_text(path, c->spec->resolved, err);
    if (rc) return rc;
    if (!c->opts->resume) {
        char buf[16384];
        size_t o = 0;
        buf[0] = '\0';
        for (int i = 0; i < c->spec->n_overrides && o < sizeof buf; i++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\n", c->spec->overrides[i]);
        snprintf(path, sizeof path, "%s/overrides.txt", c->dir);
        rc = datm_run_write_text(path, buf, err);
        if (rc) return rc;
    }
    snprintf(path, sizeof path, "%s/run.log", c->dir);
    c->log = fopen(path, c->opts->resume ? "a" : "w");
    if (!c->log) datm_warn("%s: cannot write the run's log (%s)", path, strerror(errno));
    return DATM_OK;
}

/* The model of `s` for the training set of `d`, created as a run does (also what
 * datm_run_predict rebuilds before loading a finished run's state). */
int datm_run_model_create(const datm_spec *s, const datm_run_data *d, uint64_t seed,
                          datm_model **m, int64_t *bpe, int64_t *total, datm_error *err)
{
    const datm_train_params *tc = &s->p.train;
    const int64_t N = d->n_train, B = tc->batch_size;
    *bpe = tc->drop_last ? N / B : (N + B - 1) / B;
    if (*bpe <= 0)
        return datm_error_set(err, DATM_E_INVALID, "train.batch_size %lld with drop_last leaves no "
                              "mini-batch of %lld documents", (long long)B, (long long)N);
    *total = *bpe * tc->epochs;
    /* the chunk plan the model splits its mini-batches by (engine/par/par.h) */
    const int R = datm_par_size();
    if (R > 1 && tc->reduce_chunks < R)
        return datm_error_set(err, DATM_E_INVALID, "train.reduce_chunks is %lld: a run on %d MPI "
                              "ranks needs train.reduce_chunks >= %d (each rank computes whole "
                              "chunks of every mini-batch)", (long long)tc->reduce_chunks, R, R);
    datm_par_set_chunks(tc->reduce_chunks);
    datm_run_info info = {
        .n_train = N, .n_vocab = d->n_vocab, .n_classes = d->train.n_classes,
        .batch_size = B, .epochs = tc->epochs, .total_iters = *total,
        .seed = seed, .threads = omp_get_max_threads(),
        .train = d->stream ? NULL : &d->train_X,   /* streamed: never whole in memory */
        .streamed = d->stream,
        .train_labels = d->train_labels, .vocab = d->train.vocab};
    int rc = s->ops->create(datm_spec_section(s, DATM_SEC_MODEL), &info, m, err);
    if (rc) {
        datm_error_prefix(err, "model %s: ", s->variant);
        datm_spec_locate_error(s, err);
    }
    return rc;
}

uint64_t datm_run_predict_seed(uint64_t seed)
{
    return eval_seed(seed, DATM_RUN_EVAL_INDEX) ^ 0x5bd1e995u;
}

static int setup_model(run_ctx *c, datm_error *err)
{
    const datm_spec *s = c->spec;
    int rc = datm_run_model_create(s, &c->data, c->seed, &c->m, &c->bpe, &c->total, err);
    if (rc) return rc;
    if (c->data.stream) datm_shardset_hash_hex(&c->data.shards, c->st.corpus);
    c->n_layers = c->m->ops->n_layers ? c->m->ops->n_layers(c->m) : 1;
    rc = datm_curves_init(&c->curves, c->n_layers, err);
    if (rc || !c->opts->resume) return rc;
    char path[1300];
    int64_t it;
    datm_error e = {0};
    if (datm_checkpoint_latest(c->dir, path, sizeof path, &it, &e)) {
        datm_info("resume: no complete checkpoint in %s; starting from the beginning",
                  c->dir);
        return DATM_OK;
    }
    rc = datm_checkpoint_read(path, s, c->m, &c->st, &c->curves, err);
    /* the position must be one of this run's: epoch * batches-per-epoch + batch */
    if (!rc && (c->st.iteration > c->total || c->st.batch >= c->bpe ||
                c->st.epoch * c->bpe + c->st.batch != c->st.iteration))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: iteration %lld (epoch %lld, batch %lld) is "
                            "not a position of this run (%lld mini-batches of %lld per epoch)",
                            path, (long long)c->st.iteration, (long long)c->st.epoch,
                            (long long)c->st.batch, (long long)c->total, (long long)c->bpe);
    /* a streamed run resumes at (epoch, batch) of the stream of the same corpus only */
    char have[24] = "";
    if (c->data.stream) datm_shardset_hash_hex(&c->data.shards, have);
    if (!rc && strcmp(have, c->st.corpus) != 0)
        rc = datm_error_set(err, DATM_E_INVALID, "%s: written on corpus %s, but this run reads "
                            "%s (content hash of %s)", path,
                            c->st.corpus[0] ? c->st.corpus : "in memory", have[0] ? have : "in memory",
                            c->data.stream ? c->data.shards.dir : "the docword files");
    if (!rc) datm_info("resume: continuing after iteration %lld of %lld (%s)",
                       (long long)c->st.iteration, (long long)c->total, path);
    return rc;
}

int datm_run(const datm_spec *spec, const datm_run_opts *opts, datm_error *err)
{
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.spec = spec;
    c.opts = opts;
    c.lock.fd = c.final_lock.fd = -1;
    c.ppl = c.ppl_obs = c.test_s_per_doc = c.error_rate = NAN;
    c.macro_f1 = c.predict_s_per_doc = NAN;
    const datm_run_params *rp = &spec->p.run;
    c.seed = (uint64_t)rp->seed;
    int threads = (int)rp->threads;
    if (threads > 0) {
        /* OpenBLAS (the pthreads build) keeps its own thread count, all cores by default,
         * apart from OpenMP's: without this `--threads 1` still ran every product the engine
         * does not wrap in its own single-thread section on all cores. Both counts stay set
         * for the rest of the process, like OpenMP's. Determinism does not depend on it: the
         * engine's parallel code splits work by fixed blocks, and 1 vs 2 threads give the same
         * numbers (tests/test_pipeline_e2e.c, test_pipeline_threads.c). */
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
    }
    threads = omp_get_max_threads();
    /* an MPI run (engine/par/par.h): every rank trains, rank 0 alone writes and talks */
    const int writer = datm_par_rank() == 0;
    if (!writer && datm_log_get_level() < DATM_LOG_WARN) datm_log_set_level(DATM_LOG_WARN);

    int rc = prepare(&c, err);
    /* the other ranks read the run directory (resume) only once rank 0 has claimed it */
    if (!rc) rc = datm_par_barrier(err);
    if (rc) {
        datm_log(DATM_LOG_ERROR, "%s", err->msg);
        if (c.log) fclose(c.log);
        datm_run_lock_release(&c.final_lock);
        datm_run_lock_release(&c.lock);
        return rc;
    }
    /* subnormals flushed for the whole run, in every thread (core/fpmode.c says why) */
    datm_fp_mode fp_saved;
    datm_fp_flush_begin(&fp_saved);
    datm_log_set_callback(tee_log, c.log);
    datm_info("run %s: variant %s, spec hash %.16s, %d threads (BLAS %d) -> %s",
              rp->name, spec->variant, spec->hash, threads,
              openblas_get_num_threads(), c.dir);
    if (datm_par_size() > 1)
        datm_info("MPI: %d ranks x %d threads; each mini-batch in %lld chunks (train.reduce_chunks)",
                  datm_par_size(), threads, (long long)spec->p.train.reduce_chunks);

    /* result.h5.part with provenance and status RUNNING before any work */
    datm_h5 *f = NULL;
    if (writer) rc = datm_h5_create(c.part, &f, err);
    if (!rc && writer) rc = datm_provenance_write(f, spec, opts, threads, err);
    if (f) {
        int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
        if (!rc) rc = rc2;
    }
    if (!rc) {
        double t0 = datm_time_now();
        const datm_evaluate_params *ec = &spec->p.evaluate;
        rc = datm_topics_reference_check(ec->coherence_reference,
                                         ec->coherence_window, err);
        if (!rc) rc = datm_run_data_load(spec, &c.data, err);
        if (!rc)
            datm_info("data: %s (%s): %lld training documents, %lld evaluation documents, V = %lld "
                      "(%.2fs)", c.data.dir, c.data.protocol, (long long)c.data.n_train,
                      (long long)c.data.eval_obs.n_rows, (long long)c.data.n_vocab,
                      datm_time_now() - t0);
    }
    if (!rc && writer) {
        rc = datm_h5_open(c.part, 1, &f, err);
        if (!rc) rc = datm_data_info_write(f, spec, &c.data, err);
        if (f) {
            int rc2 = datm_h5_close_checked(&f, rc ? NULL : err);
            if (!rc) rc = rc2;
        }
    }
    int have_model = 0;
    if (!rc) rc = setup_model(&c, err);
    if (!rc) have_model = 1;
    /* wall and process CPU per stage in the log: on a shared machine the CPU seconds are the
     * comparable figure */
    double t_wall = datm_time_now(), t_cpu = datm_time_cpu();
    if (!rc) rc = train_stage(&c, err);
    if (!rc)
        datm_info("time: training %.2f s wall, %.2f s CPU", datm_time_now() - t_wall,
                  datm_time_cpu() - t_cpu);
    if (!rc) {
        t_wall = datm_time_now();
        t_cpu = datm_time_cpu();
        rc = evaluate_stage(&c, err);
        if (!rc)
            datm_info("time: evaluation %.2f s wall, %.2f s CPU", datm_time_now() - t_wall,
                      datm_time_cpu() - t_cpu);
        if (rc == DATM_E_INTERRUPTED) {
            /* training is complete: checkpoint it so that resume goes straight to evaluation
             * (the evaluation reads a copy of the chain, so its numbers do not change) */
            datm_error e = {0};
            if (do_checkpoint(&c, &e)) datm_warn("checkpoint after the interruption: %s", e.msg);
            char what[sizeof err->msg];
            snprintf(what, sizeof what, "%s", err->msg);
            datm_error_set(err, DATM_E_INTERRUPTED, "%.700s (training is complete; resume "
                           "with: datm resume %.200s)", what, c.dir);
        }
    }

    const datm_output_params *oc = &spec->p.output;
    if (!rc && writer) {
        rc = write_result_body(&c, 1, 1, err);
        datm_test_kill("result");
        if (!rc && opts->topics && oc->topics) {
            /* optional: a topics stage that cannot run (no reference corpus) warns; one whose
             * write failed (a full disk) fails the run, since the file may be damaged */
            datm_error e = {0};
            if (datm_run_usage_write(c.m, &c.data.train_X, eval_seed(c.seed, DATM_RUN_EVAL_INDEX),
                                     c.part, &e)) {
                if (e.code == DATM_E_IO) rc = datm_error_set(err, e.code, "topic usage: %s", e.msg);
                else datm_warn("topic usage: %s", e.msg);
            }
            datm_error_clear(&e);
            if (!rc && opts->topics(c.dir, c.part, &e)) {
                if (e.code == DATM_E_IO) rc = datm_error_set(err, e.code, "topics stage: %s", e.msg);
                else datm_warn("topics stage: %s", e.msg);
            }
        }
        if (!rc) rc = finish_result(&c, err);
        if (!rc) {
            datm_info("result: %s (COMPLETED)", c.final);
            datm_test_kill("renamed");
            datm_error e = {0};
            if (opts->figures && oc->figures &&
                opts->figures(c.dir, c.final, &e)) {
                /* the result stays COMPLETED; the command still fails, naming the file */
                datm_log(DATM_LOG_ERROR, "figures stage: %s", e.msg);
                rc = datm_error_set(err, e.code, "figures stage: %s (%s is COMPLETED)", e.msg,
                                    c.final);
            }
            datm_error_clear(&e);
            if (datm_run_write_tracking(c.dir, c.final, c.spec->resolved, &e)) {
                /* the result stays COMPLETED; the command still fails, naming the file */
                datm_log(DATM_LOG_ERROR, "metrics.json/params.yaml: %s", e.msg);
                rc = datm_error_set(err, e.code, "%s (%s is COMPLETED)", e.msg, c.final);
            }
            datm_error_clear(&e);
            if (oc->report) {
                int bad = opts->report ? opts->report(c.dir, c.final, &e) : write_report(&c, &e);
                if (bad) {
                    datm_log(DATM_LOG_ERROR, "report stage: %s", e.msg);
                    if (!rc)
                        rc = datm_error_set(err, e.code, "report stage: %s (%s is COMPLETED)",
                                            e.msg, c.final);
                }
            }
            if (c.final_dir[0] && !rc) {
                datm_error es = {0};
                int rs = datm_rundir_swap(c.dir, c.final_dir, &c.lock, &c.final_lock, &es);
                if (rs) {
                    datm_log(DATM_LOG_ERROR, "%s", es.msg);
                    rc = datm_error_set(err, es.code, "%s", es.msg);
                } else {
                    datm_info("%s: replaced by the new COMPLETED run", c.final_dir);
                }
            }
        }
    }
    if (rc && !c.completed && writer) {
        /* keep what there is; the status says how it ended */
        const char *status = rc == DATM_E_INTERRUPTED ? DATM_STATUS_INTERRUPTED : DATM_STATUS_FAILED;
        datm_error e = {0};
        int numeric = rc == DATM_E_NUMERIC;
        if (have_model && write_result_body(&c, !numeric, 0, &e))
            datm_warn("%s", e.msg);
        datm_error_clear(&e);
        if (set_status(&c, status, err->msg, &e)) {
            datm_warn("%s (the status %s could not be recorded)", e.msg, status);
            datm_log(DATM_LOG_ERROR, "%s; %s is not COMPLETED", err->msg, c.part);
        } else {
            datm_log(DATM_LOG_ERROR, "%s; %s is %s", err->msg, c.part, status);
        }
        if (c.final_dir[0])
            datm_log(DATM_LOG_ERROR, "%s is as it was (the run meant to replace it is in %s)",
                     c.final_dir, c.dir);
    }
    datm_log_set_callback(NULL, NULL);
    if (c.log) fclose(c.log);
    if (c.m) c.m->ops->destroy(c.m);
    datm_curves_free(&c.curves);
    datm_run_data_free(&c.data);
    datm_class_report_free(&c.report);
    datm_fp_flush_end(&fp_saved);
    datm_run_lock_release(&c.final_lock);
    datm_run_lock_release(&c.lock);
    long open_objects = datm_h5_open_objects();
    if (open_objects > 0)
        datm_warn("internal: %ld HDF5 object(s) left open by the run", open_objects);
    return rc;
}

int datm_run_check(const datm_spec *spec, const datm_run_opts *opts, datm_run_check_info *info,
                   datm_error *err)
{
    memset(info, 0, sizeof *info);
    datm_rundir_state st;
    int clean = 0;
    int d = decide_dir(opts, 1, &st, &clean, err);
    if (d < 0) return -d;
    info->replaces = d == 1;
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.spec = spec;
    c.opts = opts;
    c.seed = (uint64_t)spec->p.run.seed;
    int rc = datm_run_data_load(spec, &c.data, err);
    if (!rc) {
        info->n_train = c.data.n_train;
        info->n_eval = c.data.eval_obs.n_rows;
        info->n_vocab = c.data.n_vocab;
        snprintf(info->protocol, sizeof info->protocol, "%s", c.data.protocol);
        rc = datm_run_model_create(spec, &c.data, c.seed, &c.m, &c.bpe, &c.total, err);
    }
    if (!rc) info->total_iters = c.total;
    if (c.m) c.m->ops->destroy(c.m);
    datm_run_data_free(&c.data);
    return rc;
}

int datm_run_status_read(const char *run_dir, char *status, size_t size)
{
    char path[1300];
    const char *names[2] = {DATM_RESULT_FILE, DATM_RESULT_FILE ".part"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", run_dir, names[i]);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        datm_h5 *f = NULL;
        datm_error e = {0};
        if (datm_h5_open(path, 0, &f, &e) ||
            datm_h5_attr_get_str(f, DATM_ATTR_STATUS, status, size, &e)) {
            datm_h5_close(&f);
            snprintf(status, size, "UNREADABLE");
            return DATM_OK;
        }
        datm_h5_close(&f);
        return DATM_OK;
    }
    snprintf(status, size, "MISSING");
    return DATM_OK;
}
