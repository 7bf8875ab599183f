/* engine/pipeline/pipeline.h: the experiment pipeline — YAML specs validated against schemas,
 * the run stages (train -> evaluate -> figures -> report), checkpoints and resume, sweeps,
 * and schema documentation.
 *
 * A spec has top-level keys (name, seed, threads, ...) and the sections data:, model:,
 * train:, evaluate:, output:. The engine's sections have schemas in the same
 * datm_param_schema form as the models'; model: holds `variant` plus the keys of that
 * variant's schema. Every message about a spec names file:line:column and the key. */
#ifndef DATM_PIPELINE_H
#define DATM_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "pipeline/config.h"
#include "pipeline/model.h"
#include "pipeline/sections.h"

/* ---- sections (enum + table) ---- */
typedef enum {
    DATM_SEC_RUN = 0,    /* top-level scalar keys: name, seed, threads, ... */
    DATM_SEC_DATA,
    DATM_SEC_MODEL,      /* the variant's schema */
    DATM_SEC_TRAIN,
    DATM_SEC_EVALUATE,
    DATM_SEC_OUTPUT,
    DATM_SEC_COUNT_
} datm_section_id;

const char *datm_section_name(datm_section_id s);   /* "" for RUN, "data", "model", ... */
const char *datm_section_doc(datm_section_id s);
/* Engine schema of a section (NULL for DATM_SEC_MODEL: it comes from the variant). */
const datm_param_schema *datm_section_schema(datm_section_id s);

/* How the pipeline finds variants. Pass DATM_REGISTRY_CATALOG (models/registry.c) from
 * programs; tests may pass their own. Taking the registry as an argument keeps the
 * pipeline library free of a link-time dependency on the models library. */
typedef struct datm_model_catalog {
    const datm_model_ops *(*find)(const char *name);
    int                   (*count)(void);
    const datm_model_ops *(*at)(int i);
    /* Optional (NULL: a spec's model.plugin is an error): load a plugin file, and tell
     * where a variant came from (datm_registry_load, datm_registry_source in model.h). */
    int (*load)(const char *path, const char *base_dir, const char *where, datm_error *err);
    int (*source)(const datm_model_ops *ops, const char **path, const char **sha256);
} datm_model_catalog;
#define DATM_REGISTRY_CATALOG                                                            \
    ((datm_model_catalog){datm_registry_find, datm_registry_count, datm_registry_at,     \
                          datm_registry_load, datm_registry_source})

/* ---- spec ---- */
#define DATM_MAX_OVERRIDES 64

/* Where one key's value was given: "file:line:col" or "override 'k=v'". */
typedef struct datm_spec_where {
    char key[96];      /* "section.key" ("seed" for top-level keys) */
    char where[600];
} datm_spec_where;

typedef struct datm_spec {
    char  path[512];                     /* spec file, or "<text>" */
    char  variant[64];                   /* model.variant */
    const datm_model_ops *ops;           /* registry entry of the variant */
    datm_config *sec[DATM_SEC_COUNT_];   /* validated sections, every key resolved */
    datm_spec_params p;                  /* the engine sections typed (from sec[]) */
    char *overrides[DATM_MAX_OVERRIDES]; /* as given on the command line */
    int   n_overrides;
    char *resolved;                      /* canonical resolved YAML (no comments) */
    char  hash[65];                      /* SHA-256 hex of `resolved` without output.dir and
                                            threads (they cannot change the numbers); with
                                            a plugin's variant, its file's SHA-256 instead
                                            of its path */
    char  plugin[4096];                  /* the plugin file of the variant ("" built-in) */
    char  plugin_sha256[65];             /* its content's SHA-256 */
    datm_spec_where *where;              /* (n_where) every key given in the file or overrides */
    int   n_where;
} datm_spec;

/* Loads YAML from `path`, composing it first when it starts with `defaults: [a.yaml, ...]`
 * (paths relative to the file naming them; merge order: the defaults in order, each composed
 * the same way, then the file's own keys, then the overrides; mappings merge key by key,
 * values and lists replace; compose.h), applies overrides "a.b=value" (or "~a.b" to remove a key) in
 * order, validates every section, fills defaults, applies the variant's own rules on its
 * options (datm_model_check: what its create would refuse, found before any data is read),
 * resolves and hashes. On error the message names file:line:column (or the
 * override) and the key; up to a few errors are reported, one per line. */
int  datm_spec_load(const char *path, const char *const *overrides, int n_overrides,
                    const datm_model_catalog *cat, datm_spec *out, datm_error *err);
/* Same from text in memory; `name` stands for the file name in messages. */
int  datm_spec_load_text(const char *text, const char *name, const char *const *overrides,
                         int n_overrides, const datm_model_catalog *cat, datm_spec *out,
                         datm_error *err);
void datm_spec_free(datm_spec *s);
/* Errors found after loading (a model's checks that need the data, at create) name keys but
 * not where they were given: prefixes err's message with the position of the first key of
 * the spec that it names ("model.layers" -> "spec.yaml:12:11: "); else prefixes the spec's
 * path. */
void datm_spec_locate_error(const datm_spec *s, datm_error *err);
/* Resolved YAML; with_comments marks keys whose value is the schema default with
 * "# default" (for printing). Caller frees with datm_free. */
char *datm_spec_to_yaml(const datm_spec *s, int with_comments, datm_error *err);
/* Resolved YAML with the origin of every value as a comment: "# file:line:col" of the file
 * (spec or one of its defaults) or override that set it, "# default" (schema default) or
 * "# derived" (name from the file, output.dir from the name). Caller frees with datm_free. */
char *datm_spec_origins_yaml(const datm_spec *s, datm_error *err);
/* Shorthand getters on the sections. */
const datm_config *datm_spec_section(const datm_spec *s, datm_section_id id);
/* Lists "section.key" of every value that came from a schema default into buf (one per
 * line); returns the count. */
int  datm_spec_defaults_applied(const datm_spec *s, char *buf, size_t size);

/* Splits "a.b.c=value" -> key "a.b.c", value. Returns 0 when the text has no '='. */
int  datm_override_split(const char *arg, char *key, size_t key_size, const char **value);

/* ---- hashing (SHA-256, FIPS 180-4) ---- */
typedef struct datm_sha256 {
    uint32_t h[8];
    uint64_t n_bytes;
    uint8_t  buf[64];
    size_t   fill;
} datm_sha256;
void datm_sha256_init(datm_sha256 *c);
void datm_sha256_update(datm_sha256 *c, const void *data, size_t n);
void datm_sha256_hex(datm_sha256 *c, char hex[65]);   /* finishes */
void datm_sha256_text(const char *text, char hex[65]);
int  datm_sha256_file(const char *path, char hex[65], datm_error *err);

/* ---- schema documentation (datm describe) ---- */
/* Text table (markdown != 0: a markdown section with a table) of one schema. */
void datm_schema_describe(FILE *f, const char *title, const char *summary,
                          const datm_param_schema *schema, const char *prefix, int markdown);
/* Every engine section and then every variant of the catalog. */
void datm_describe_all(FILE *f, const datm_model_catalog *cat, int markdown);

/* ---- running ---- */
/* Hooks the CLI fills with the figures/report writers (engine/io, results engineer); NULL
 * skips the stage. Called after result.h5 is complete, with the run directory. */
typedef int (*datm_stage_hook)(const char *run_dir, const char *result_path, datm_error *err);

typedef struct datm_run_opts {
    const char *run_dir;       /* output directory (created) */
    int         quiet;
    int         resume;        /* continue from the last complete checkpoint in run_dir */
    int         overwrite;     /* a fresh run may replace a finished or unfinished run in
                                  run_dir: written aside (run_dir.new) and swapped in when
                                  COMPLETED; without it such a run_dir is refused */
    int         argc;          /* recorded as provenance */
    char      **argv;
    datm_stage_hook figures;   /* figures stage */
    datm_stage_hook report;    /* report stage */
    datm_stage_hook topics;    /* writes /topics (and npmi/diversity metrics) into result.h5 */
} datm_run_opts;

/* Final outcome of a run. */
typedef enum {
    DATM_RUN_COMPLETED = 0,
    DATM_RUN_FAILED,
    DATM_RUN_INTERRUPTED
} datm_run_status;

/* What a run directory may hold, and how a run treats it (rundir.c; README "Safety"): a fresh
 * run needs a new or empty directory, or one whose earlier attempt has nothing to lose (FAILED
 * or killed before its first checkpoint). A COMPLETED run (result.h5) or an unfinished one with
 * a checkpoint is refused naming `datm resume` or --overwrite; a directory holding files datm
 * did not write is refused. All this before any file is touched. */
#define DATM_RUN_REPLACES_FILE "replaces.txt"   /* in DIR.new: the directory it replaces */
/* Finishes an --overwrite run that was stopped after it COMPLETED in DIR.new but before it was
 * swapped in (dir = DIR.new, or DIR after the swap when the old run's removal was cut short);
 * a no-op for other directories. */
int  datm_run_replace_finish(const char *dir, datm_error *err);
/* Puts the complete directory new_dir in the place of target in one step (renameat2
 * RENAME_EXCHANGE; two renames where the file system lacks it) and removes target's old
 * contents: what --overwrite does for corpora and ensembles. */
int  datm_dir_replace(const char *new_dir, const char *target, datm_error *err);
/* Removes path and everything under it (symbolic links are removed, not followed). */
int  datm_dir_remove(const char *path, datm_error *err);
/* A run stopped between marking result.h5.part COMPLETED and renaming it: verifies the file and
 * renames it (1, with a warning), 0 when dir is not in that state, -code on error. */
int  datm_run_finish_part(const char *dir, datm_error *err);
/* 1 when dir is an --overwrite run's replacement (target = the directory it replaces). */
int  datm_rundir_replaces(const char *dir, char *target, size_t size);

/* Runs every stage of `spec` into opts->run_dir. Returns DATM_OK when completed; an
 * interrupted run returns DATM_E_INTERRUPTED after writing a checkpoint. RUN_DIR gets
 * spec.resolved.yaml, overrides.txt, result.h5 (written as result.h5.part and renamed when
 * COMPLETED), checkpoints/ckpt-<iteration>.h5 and run.log. */
/* metrics.json (every /metrics scalar, flat; NaN as null) and params.yaml (the resolved spec's
 * settings as dotted keys) into a finished run's directory, for experiment trackers (DVC,
 * MLflow) to read without a converter (tracking.c). datm_run writes them after COMPLETED. */
int  datm_run_write_tracking(const char *dir, const char *result, const char *resolved,
                             datm_error *err);
int  datm_run(const datm_spec *spec, const datm_run_opts *opts, datm_error *err);

/* Everything datm_run checks before training starts, without writing anything (datm check):
 * the run directory as a fresh run would claim it (opts->run_dir, opts->overwrite; a lock
 * held by another process), the data set (every file read and cross-checked), and the model
 * created for it (sizes against the data, its memory allocated and freed). */
typedef struct datm_run_check_info {
    int64_t n_train, n_eval, n_vocab, total_iters;
    char    protocol[32];
    int     replaces;     /* the run would be written aside and replace a run in run_dir */
} datm_run_check_info;
int  datm_run_check(const datm_spec *spec, const datm_run_opts *opts, datm_run_check_info *info,
                    datm_error *err);

/* Reads the status attribute of RUN_DIR/result.h5 (or result.h5.part): "COMPLETED", ...;
 * "MISSING" when neither exists. */
int  datm_run_status_read(const char *run_dir, char *status, size_t size);

/* The class probabilities of a COMPLETED run's test documents, recomputed as its evaluate
 * stage did: the run's resolved spec and data, its model created and loaded from result.h5,
 * the model's own predict with the run's seed and evaluate.predict_samples (the engine's
 * draws are seeded, so this reproduces the run's /metrics/error_rate exactly). */
typedef struct datm_run_prediction {
    int64_t  n_docs;          /* N test documents */
    int      n_classes;       /* C */
    float   *probs;           /* (N, C) */
    int32_t *labels;          /* (N) true classes */
    double   stored_error;    /* /metrics/error_rate of result.h5 (NAN when absent) */
    double   train_s;         /* /metrics/train_s (NAN when absent) */
    double   predict_s;       /* wall time of the prediction pass just made */
    char     test_hash[80];   /* sha256 of the test documents' file (the data set's identity) */
    char     spec_hash[80];
    char     variant[64];
    uint64_t seed;
} datm_run_prediction;

int  datm_run_predict(const char *run_dir, const datm_model_catalog *cat,
                      datm_run_prediction *out, datm_error *err);
void datm_run_prediction_free(datm_run_prediction *p);

/* `datm ensemble`: p(y|x) of every test document averaged over the members (equal weights),
 * written to OUT_DIR as a run directory: result.h5 (COMPLETED; /metrics error_rate, macro_f1,
 * predict_s_per_doc and train_s summed over the members; /classification as a run's, plus
 * probs (N, C); /ensemble members, member_error_rate, member_seed, member_probs/<i>),
 * spec.resolved.yaml (the first member's, under a header) and members.txt. The members must
 * share the test documents and labels. report (freed by the caller with
 * datm_class_report_free) gets the ensemble's metrics. Nothing is left half-written. */
#define DATM_ENSEMBLE_MAX 64
struct datm_class_report;
int  datm_ensemble_write(const char *out_dir, const char *const *dirs,
                         const datm_run_prediction *p, int n, struct datm_class_report *report,
                         datm_error *err);

/* Path of the newest complete checkpoint of run_dir, or DATM_E_IO when there is none. */
int  datm_checkpoint_latest(const char *run_dir, char *path, size_t size, int64_t *iteration,
                            datm_error *err);
/* Path of run_dir's checkpoint after `iteration` mini-batches, or DATM_E_IO naming it when it
 * is missing or incomplete. */
int  datm_checkpoint_at(const char *run_dir, int64_t iteration, char *path, size_t size,
                        datm_error *err);
/* `datm fork`: copies the complete checkpoint src into new_run_dir/checkpoints/ (created) and
 * stamps it with the hash of new_spec, the spec it will be resumed under, and the path it was
 * forked from (attribute forked_from). The copy appears under its final name only when whole;
 * src is not modified. *iteration gets its mini-batch count. */
int  datm_checkpoint_fork(const char *src, const char *new_run_dir, const datm_spec *new_spec,
                          int64_t *iteration, datm_error *err);

/* ---- run-directory lock (runlock.c) ----
 * A process writing a run directory holds an advisory lock (flock) on RUN_DIR/run.lock, which
 * holds its pid; the kernel releases it when the process ends in any way. A second writer
 * fails at once with a message naming the holder's pid; a momentary holder that names no live
 * process (a look by datm_run_lock_holder, a datm_run_lock_try) is waited out. */
#define DATM_RUN_LOCK_FILE "run.lock"
typedef struct datm_run_lock {
    int  fd;           /* -1 when not held */
    char path[1300];
} datm_run_lock;
/* Takes the lock of an existing run_dir, or fails (DATM_E_IO) naming the holder's pid. */
int  datm_run_lock_acquire(const char *run_dir, datm_run_lock *lk, datm_error *err);
/* Takes the lock of run_dir for a moment's work without writing a pid and without waiting
 * (a pipeline moving an abandoned run directory aside): *busy = 1 and an error when another
 * process holds it. Writers that meet it wait until it is released. */
int  datm_run_lock_try(const char *run_dir, datm_run_lock *lk, int *busy, datm_error *err);
/* Releases and removes the lock file; a no-op when not held. */
void datm_run_lock_release(datm_run_lock *lk);
/* 1 when a live process holds run_dir's lock (*pid gets its pid, 0 when unreadable), else 0. */
int  datm_run_lock_holder(const char *run_dir, long *pid);

/* ---- sweeps ---- */
typedef enum { DATM_SWEEP_ON_ERROR_CONTINUE = 0, DATM_SWEEP_ON_ERROR_STOP } datm_sweep_on_error;

typedef struct datm_sweep_opts {
    const char *spec_path;
    const char *const *args;   /* "k=a,b,c", "k=range(0,5)", or fixed "k=v" */
    int         n_args;
    const char *dir;           /* sweep directory (manifest sweep.yaml + job dirs) */
    int         resume;        /* skip COMPLETED jobs; refuse if the definition changed */
    datm_sweep_on_error on_error;
    int         quiet;
    const char *datm_exe;      /* this program (jobs run as child processes) */
    const char *threads;       /* "--threads N" passed on, or NULL */
} datm_sweep_opts;

/* Expands one sweep argument into values: "a,b,c" (commas outside brackets),
 * "range(a,b[,step])" (integers, b exclusive), or a single value. Returns the count (<= max)
 * of strings allocated into out (datm_free each), or -1 with err set. */
int  datm_sweep_expand(const char *value, char **out, int max, datm_error *err);
/* Validates every job's spec, writes DIR/sweep.yaml and runs the jobs one after another.
 * Returns DATM_OK when every job is COMPLETED. */
int  datm_sweep(const datm_sweep_opts *opts, const datm_model_catalog *cat, datm_error *err);

#endif
