/* engine/pipeline/run_internal.h (internal): pieces of `datm run` shared by run.c,
 * run_data.c, curves.c, checkpoint.c and provenance.c. */
#ifndef DATM_RUN_INTERNAL_H
#define DATM_RUN_INTERNAL_H

#include "data/data.h"
#include "data/shard.h"
#include "io/h5.h"
#include "pipeline/pipeline.h"

/* ---- data of one run (run_data.c) ---- */
typedef struct datm_run_data {
    char      dir[1024];         /* resolved dataset directory */
    char      protocol[32];      /* "heldout-docs" | "token-split" */
    datm_corpus train;           /* the training split as loaded (vocab, labels) */
    datm_csr  train_X;           /* (N, V) what the model trains on */
    int32_t  *train_labels;      /* (N) or NULL; borrowed from `train` */
    datm_csr  eval_obs;          /* (N_e, V) observed part of the evaluation documents */
    datm_csr  eval_held;         /* (N_e, V) held-out part (scored) */
    datm_csr  curve_obs;         /* (N_c, V) first rows of eval_*, for curve points */
    datm_csr  curve_held;
    datm_corpus test;            /* full test documents with labels (classification), or empty */
    int       have_test;
    char      file_hash[4][80];  /* sha256 of the files read: train, test_obs, test_heldout, test */
    char      file_name[4][64];
    int       n_files;
    int64_t   n_train, n_vocab;  /* N, V of the training documents (in memory or streamed) */
    int       stream;            /* data.stream: train_X is empty, mini-batches come from shards */
    datm_shardset shards;        /* DIR/train.shards when streaming */
} datm_run_data;

int  datm_run_data_load(const datm_spec *spec, datm_run_data *d, datm_error *err);
void datm_run_data_free(datm_run_data *d);

/* ---- files of a run directory (run.c) ---- */
int datm_run_mkdir_p(const char *path, datm_error *err);   /* "a/b/c", parents too */
/* Writes `text` to path.tmp and renames it: a reader never sees half a file. */
int datm_run_write_text(const char *path, const char *text, datm_error *err);

/* ---- the run directory (rundir.c) ---- */
typedef struct datm_rundir_state {
    int     exists, empty;      /* empty: nothing but a lock file */
    int     has_result;         /* result.h5: a run that COMPLETED (only it gets that name) */
    int     has_marker;         /* replaces.txt: an --overwrite run being written aside */
    char    status[32];         /* of result.h5 or result.h5.part; MISSING, UNREADABLE */
    int64_t ckpt_iter;          /* newest complete checkpoint, -1 when none */
    char    foreign[256];       /* first entry datm does not write ("" when none) */
} datm_rundir_state;
/* What dir holds; a path that exists but is no directory is an error naming ENOTDIR. */
int datm_rundir_inspect(const char *dir, datm_rundir_state *s, datm_error *err);
/* Removes path and everything under it (no symbolic links followed). */
int datm_rundir_rm_tree(const char *path, datm_error *err);
/* Removes what datm wrote into dir (keeps the lock file and foreign files). */
int datm_rundir_clean(const char *dir, datm_error *err);
/* Prepares DIR.new for an --overwrite run of dir: created (or an earlier unfinished attempt
 * there cleaned), locked, with replaces.txt naming dir's absolute path. */
int datm_rundir_stage(const char *dir, char *stage, size_t size, datm_run_lock *stage_lock,
                      datm_error *err);
/* Exchanges the COMPLETED stage with target and removes the old run; the locks (held) follow
 * their files; target_lock is released. */
int datm_rundir_swap(const char *stage, const char *target, datm_run_lock *stage_lock,
                     datm_run_lock *target_lock, datm_error *err);

/* ---- the model of a run (run.c) ---- */
/* Index of the evaluate stage's draws in the run's evaluation seed stream. */
#define DATM_RUN_EVAL_INDEX UINT64_C(0xFFFFFFFFFFFF)
/* Creates the model of `s` for the training set of `d` as `datm run` does: *bpe mini-batches
 * per epoch, *total in the whole run. Errors name the model and the spec position. */
int datm_run_model_create(const datm_spec *s, const datm_run_data *d, uint64_t seed,
                          datm_model **m, int64_t *bpe, int64_t *total, datm_error *err);
/* Seed of the evaluate stage's class prediction (ops->predict) of a run with root `seed`. */
uint64_t datm_run_predict_seed(uint64_t seed);

/* ---- topic usage (run_usage.c) ---- */
/* /usage of result_path: the shares of the training documents X's tokens and theta mass per
 * topic of every layer (eval/topic_diag.h), theta from the model's infer (posterior mean).
 * Nothing is written for a model without infer. */
int datm_run_usage_write(const datm_model *m, const datm_csr *X, uint64_t seed,
                         const char *result_path, datm_error *err);

/* ---- curves: one row per evaluation (curves.c) ---- */
#define DATM_CURVE_MAX_COLS (8 + 2 * DATM_MAX_LAYERS)
typedef struct datm_curve_table {
    int      n_cols;
    char     names[DATM_CURVE_MAX_COLS][32];
    double  *col[DATM_CURVE_MAX_COLS];   /* (cap) each */
    int64_t  n_rows, cap;
} datm_curve_table;

/* Columns: iteration, epoch, wall_s, loss, loglik, perplexity, perplexity_observed,
 * kl_<l>, step_<l> for l = 1..n_layers. */
int  datm_curves_init(datm_curve_table *t, int n_layers, datm_error *err);
int  datm_curves_append(datm_curve_table *t, const double *row, datm_error *err);  /* (n_cols) */
int  datm_curves_write(const datm_curve_table *t, datm_h5 *g, datm_error *err);
/* Reads rows written by datm_curves_write into an initialised table (same columns). */
int  datm_curves_load(datm_curve_table *t, datm_h5 *g, datm_error *err);
void datm_curves_free(datm_curve_table *t);

/* ---- training accumulators between curve points (saved in checkpoints) ---- */
typedef struct datm_train_accum {
    double  loss, loglik;                 /* sums over batches since the last curve point */
    double  kl[DATM_MAX_LAYERS], step[DATM_MAX_LAYERS];
    int64_t n;                            /* batches summed */
    double  train_s;                      /* training wall time so far (excl. evaluation) */
} datm_train_accum;

/* ---- checkpoints (checkpoint.c): RUN_DIR/checkpoints/ckpt-<iteration>.h5 ---- */
typedef struct datm_ckpt_state {
    int64_t iteration;          /* mini-batches done */
    int64_t epoch, batch;       /* position of the next mini-batch */
    datm_train_accum acc;
    char    corpus[24];         /* data.stream: content hash of train.shards ("" in memory);
                                 * (epoch, batch) is then the stream position (data/stream.h) */
} datm_ckpt_state;

int datm_checkpoint_write(const char *run_dir, const datm_spec *spec, const datm_model *m,
                          const datm_ckpt_state *st, const datm_curve_table *curves, int keep,
                          datm_error *err);
/* Loads `path` into a created model, the state and the curve rows; checks the spec hash. */
int datm_checkpoint_read(const char *path, const datm_spec *spec, datm_model *m,
                         datm_ckpt_state *st, datm_curve_table *curves, datm_error *err);

/* ---- provenance (provenance.c) ---- */
void datm_utc_now(char *buf, size_t size);   /* ISO 8601, e.g. 2026-01-01T12:00:00Z */
/* Root attributes: version, git, compiler, libraries, host, argv, spec, seed, threads. */
int  datm_provenance_write(datm_h5 *root, const datm_spec *spec, const datm_run_opts *opts,
                           int threads, datm_error *err);
/* /data attributes and scalars. */
int  datm_data_info_write(datm_h5 *root, const datm_spec *spec, const datm_run_data *d,
                          datm_error *err);

#endif
