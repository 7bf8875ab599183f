/* engine/pipeline/pipefile.h: pipeline files (pipelines/NAME.yaml) — several runs, the tables,
 * figures and claims made from them — and the machinery of `datm pipeline`: the parsed file
 * (pipefile.c), the content-addressed run cache (cache.c), the scheduler (sched.c), claim
 * expressions (expr.c) and the report (report*.c).
 *
 * A pipeline file (full YAML, parsed with the spec's positioned tree; every message names
 * file:line:col and the key, with a did-you-mean for unknown keys):
 *
 *   name: ci                         # default: the file's stem
 *   description: one paragraph
 *   cache: ../.cache/runs            # run cache (default $DATM_CACHE, else .cache/runs under
 *                                    #   the current directory)
 *   out: ../results/ci               # report directory of `pipeline run` (default
 *                                    #   results/<name>); `pipeline report -o` overrides
 *   threads: 1                       # threads per run (default 1)
 *   overrides: [train.epochs=2]      # for every run (before the profile's and the run's)
 *   default_profile: quick           # profile used without --profile (default: none)
 *   profiles:
 *     quick: {description: ..., overrides: [...]}
 *     paper: {description: ..., overrides: [], out: ../results/paper/paper-budget}
 *                                    # a profile's out: (relative to this file) replaces the
 *                                    #   file's, so that profiles keep their reports apart
 *   runs:                            # single runs
 *     - id: whai
 *       spec: ../experiments/brown/whai.yaml   # relative to this file
 *       overrides: [model.layers=[32]]
 *       profiles: {quick: [train.epochs=1]}    # extra overrides under a profile
 *       labels: {variant: whai, depth: "32"}   # free labels (tables, figures, claims)
 *     - id: news_n
 *       ensemble: [news_n_s1, news_n_s2]       # `datm ensemble` of finished runs (ids or
 *                                              #   glob patterns); depends on them
 *   matrix:                          # runs generated from axes (cartesian product)
 *     - id: "{variant}_{layers}"
 *       spec: "../experiments/20news/{variant}_{layers}.yaml"
 *       axes: {variant: [whai, wai], layers: ["128", "128-64"]}
 *       exclude: [{variant: wai, layers: "128"}]
 *       overrides: ["seed={seed}"]   # {axis} is replaced everywhere: id, spec, overrides,
 *       labels: {...}                #   labels, ensemble members
 *   references:                      # figures of others (a paper) by run id and metric
 *     paper: {whai_128: {perplexity: 591, test_s_per_doc: 0.2}}
 *   tables:  {ID: {...}}             # see datm_pipe_table
 *   figures: {ID: {...}}             # see datm_pipe_figure
 *   claims:  {ID: {...}}             # see datm_pipe_claim
 *
 * Every run carries labels: its matrix axes, then its own labels:, plus `id`. */
#ifndef DATM_PIPEFILE_H
#define DATM_PIPEFILE_H

#include <stdint.h>

#include "pipeline/pipeline.h"

#define DATM_PIPE_MAX_RUNS 2000
#define DATM_PIPE_MAX_LABELS 16
#define DATM_PIPE_MAX_AXES 8

/* A list of owned strings. */
typedef struct datm_strlist {
    char **v;
    int    n;
} datm_strlist;
int  datm_strlist_push(datm_strlist *l, const char *s, datm_error *err);
void datm_strlist_free(datm_strlist *l);

typedef enum {
    DATM_PIPE_RUN_SPEC = 0,   /* datm run SPEC overrides */
    DATM_PIPE_RUN_ENSEMBLE    /* datm ensemble of other runs' results */
} datm_pipe_run_kind;

typedef struct datm_pipe_run {
    char  id[128];
    datm_pipe_run_kind kind;
    char  spec[1024];            /* SPEC: path as usable from the current directory */
    datm_strlist overrides;      /* SPEC: pipeline, profile, run, run-profile overrides in order */
    datm_strlist members;        /* ENSEMBLE: run ids (patterns expanded) */
    int   n_labels;
    char  label_key[DATM_PIPE_MAX_LABELS][64];
    char  label_val[DATM_PIPE_MAX_LABELS][256];
    char  where[600];            /* file:line:col of the entry that made it */
    int   selected;              /* chosen by --only (or needed by a chosen run) */
} datm_pipe_run;

/* Value of label `key` of run r ("id" is always a label), or NULL. */
const char *datm_pipe_run_label(const datm_pipe_run *r, const char *key);

/* Which runs a table, figure or claim reads: every run whose id matches one of `ids`
 * (glob patterns: * ? [..]) — all runs when empty — and whose labels equal every `where`
 * pair. */
typedef struct datm_pipe_select {
    datm_strlist ids;
    int   n_where;
    char  where_key[DATM_PIPE_MAX_LABELS][64];
    char  where_val[DATM_PIPE_MAX_LABELS][256];
} datm_pipe_select;

/* One column (a value shown in every cell group) of a table. */
typedef struct datm_pipe_column {
    char label[128];       /* header; default: the metric (or "ref metric") */
    char metric[128];      /* a /metrics name; a label of the run (label: prefix); or a
                              result.h5 dataset joined by "-" (dataset:/path[FROM:]) */
    char ref[64];          /* non-empty: the reference value of `references.<ref>` instead */
    char format[16];       /* printf format of numbers, default "%.4g" */
    char text[256];        /* non-empty: a template "{k_1}-{k_2}" of metrics/labels instead */
} datm_pipe_column;

/* A table. Long form (no `columns_by`): one row per selected run, the row's label
 * columns (`rows`) then `values`. Pivot form (`columns_by: [layers]`): one row per distinct
 * combination of the `rows` labels, one group of `values` columns per distinct combination
 * of the `columns_by` labels, in order of first appearance. */
typedef struct datm_pipe_table {
    char id[64];
    char title[256];
    char note[1024];               /* printed under the table */
    datm_pipe_select select;       /* runs: and where: */
    datm_strlist rows;             /* label keys that name a row (default: [id]) */
    datm_strlist columns_by;       /* label keys of column groups (pivot form) */
    datm_pipe_column *values;      /* (n_values) */
    int   n_values;
    int   md, csv, json;           /* formats: [md, csv, json] (default all three) */
    char  where[600];
} datm_pipe_table;

typedef enum {
    DATM_PIPE_FIG_CURVES = 0,   /* one line per run: /curves (or another group) column y vs x */
    DATM_PIPE_FIG_BARS,         /* grouped bars of a metric: categories x series */
    DATM_PIPE_FIG_HIERARCHY,    /* the topic tree of one run (text): top topics, children */
    DATM_PIPE_FIG_ATOMS         /* one run's topics of each layer projected to pixels, as
                                   image grids (pixel vocabularies p_<row>_<col> only) */
} datm_pipe_fig_kind;

typedef struct datm_pipe_figure {
    char id[64];
    datm_pipe_fig_kind kind;
    char title[256];
    datm_pipe_select select;
    char group[64];       /* CURVES: result group of the columns (default "curves") */
    char x[64], y[64];    /* CURVES: column names (default iteration, perplexity) */
    char metric[128];     /* BARS: the metric */
    char category[256];   /* BARS: template of the x category (default "{id}") */
    char series[256];     /* legend template (default "{id}"; BARS: one bar per series) */
    char xlabel[128], ylabel[128];
    int  logx, logy;
    int  top, links, words;   /* HIERARCHY: top-layer topics, children per topic, words;
                                 ATOMS: top = atoms per layer, the most used first */
    char where[600];
} datm_pipe_figure;

/* A claim: a boolean expression over run metrics (expr.c), for every combination of the
 * values of the `forall` axes (or at least one, `exists`), with a tolerance that loosens
 * every comparison in the claim's favour by rel_tol * |right side| + abs_tol.
 * Or a claim no number decides (`figure: ID` instead of expr): it points at a figure of the
 * pipeline that a person judges, is reported "shown; judged by eye" once the figure is
 * drawn (never "reproduced"), and is always informative. */
typedef struct datm_pipe_claim {
    char id[64];
    char text[512];            /* the claim in words */
    char expr[1024];           /* e.g. "whai_{layers}.perplexity <= wai_{layers}.perplexity" */
    char figure[64];           /* non-empty: the figure that shows it (no expr, no axes) */
    int  n_axes;
    char axis[DATM_PIPE_MAX_AXES][64];
    datm_strlist axis_values[DATM_PIPE_MAX_AXES];
    int  exists;               /* 0: forall (every instance holds), 1: exists */
    double rel_tol, abs_tol;
    int  informative;          /* 1: shown but never counts for --strict */
    char where[600];
} datm_pipe_claim;

/* A reference figure: references.<source>.<run id>.<metric> = number or text. */
typedef struct datm_pipe_ref {
    char source[64], run[128], metric[128];
    double value;              /* NAN when text */
    char   text[128];          /* as written */
} datm_pipe_ref;

typedef struct datm_pipeline {
    char path[1024];           /* the pipeline file */
    char name[128];
    char description[2048];
    char cache_dir[1024];
    char out_dir[1024];
    char profile[64];          /* chosen profile ("" none) */
    int  threads;
    datm_pipe_run    *runs;    int n_runs;
    datm_pipe_table  *tables;  int n_tables;
    datm_pipe_figure *figures; int n_figures;
    datm_pipe_claim  *claims;  int n_claims;
    datm_pipe_ref    *refs;    int n_refs;
    datm_strlist profiles;     /* names declared */
} datm_pipeline;

/* Parses and checks a pipeline file under `profile` (NULL: default_profile, if any). Every
 * run's spec is loaded and validated with its overrides (errors name the run's entry and
 * the spec position). Exit-code class of errors: DATM_E_INVALID / DATM_E_FORMAT. */
int  datm_pipeline_load(const char *path, const char *profile, const datm_model_catalog *cat,
                        datm_pipeline *out, datm_error *err);
void datm_pipeline_free(datm_pipeline *p);
/* Index of run `id`, or -1. */
int  datm_pipeline_find_run(const datm_pipeline *p, const char *id);
/* 1 when run r matches the selection. */
int  datm_pipe_select_match(const datm_pipe_select *s, const datm_pipe_run *r);
/* The reference value, or NULL. */
const datm_pipe_ref *datm_pipeline_ref(const datm_pipeline *p, const char *source,
                                       const char *run, const char *metric);
/* ---- the run cache (cache.c) ----
 * A run's key is the SHA-256 of: DATM_NUMERICS_VERSION (engine/core/numerics.h: what the
 * engine computes), the variant and every setting of its resolved spec that differs from the
 * schema default (so comments, key order, composition and keys added later at a default that
 * keeps the old behaviour do not count; the run's threads and output.dir never count), and
 * the name and SHA-256 of every file of its data set. An ensemble's key is over its members'
 * keys. The run lives in CACHE/<spec name>-<key[0:16]>; a COMPLETED one is reused, never
 * rerun. File hashes are remembered in CACHE/filehash.tsv by (path, size, mtime). */
typedef struct datm_filehash_cache {
    char    path[1100];     /* CACHE/filehash.tsv */
    int     n, cap, dirty;
    struct datm_filehash_entry {
        char     *file;     /* absolute path */
        long long size, mtime_ns;
        char      hex[65];
    } *e;
} datm_filehash_cache;
int  datm_filehash_open(const char *cache_dir, datm_filehash_cache *fc, datm_error *err);
int  datm_filehash_get(datm_filehash_cache *fc, const char *path, char hex[65], datm_error *err);
int  datm_filehash_save(datm_filehash_cache *fc, datm_error *err);   /* when changed */
void datm_filehash_free(datm_filehash_cache *fc);

typedef enum {
    DATM_PIPE_PENDING = 0,   /* nothing in the cache: will run */
    DATM_PIPE_DONE,          /* COMPLETED, linked from this pipeline's out/runs/<id> */
    DATM_PIPE_CACHED,        /* COMPLETED in the cache (another pipeline or an earlier link) */
    DATM_PIPE_RUNNING,       /* a live process holds its run directory's lock */
    DATM_PIPE_FAILED,        /* FAILED: rerun only with --force */
    DATM_PIPE_RESUMABLE,     /* INTERRUPTED or killed, with a checkpoint: will resume */
    DATM_PIPE_PARTIAL,       /* killed before its first checkpoint: will start afresh */
    DATM_PIPE_RECORDED,      /* not COMPLETED in the cache, but OUT/records/<id>.h5 holds it
                                with its current key: finished, not rerun (--force reruns) */
    DATM_PIPE_STATUS_COUNT_
} datm_pipe_status;
const char *datm_pipe_status_name(datm_pipe_status s);   /* "pending", "done", ... */

typedef struct datm_pipe_state {
    char    key[65];
    char    dir[1200];        /* the run's directory in the cache */
    char    result[32];       /* status attribute of its result: COMPLETED, FAILED, ...,
                                 MISSING */
    datm_pipe_status status;
    int64_t ckpt_iteration;   /* RESUMABLE: mini-batches of its newest checkpoint */
    long    pid;              /* RUNNING: the holder */
    char    record[1300];     /* its record with the run's current key ("" none, or stale or
                                 unreadable: then ignored); RECORDED when the cache has no
                                 COMPLETED result */
} datm_pipe_state;

/* Keys and states of every run (st: n_runs). Spec runs first, then ensembles (their keys
 * need the members'). A run without a COMPLETED result in the cache is RECORDED when its
 * record has the run's key; a record with another key (stale) or one that cannot be read is
 * ignored with a one-line warning naming it. */
int  datm_pipeline_states(const datm_pipeline *p, const datm_model_catalog *cat,
                          datm_filehash_cache *fc, datm_pipe_state *st, datm_error *err);
/* Re-reads the state of run i (its key and dir already set). */
void datm_pipe_state_refresh(const datm_pipeline *p, int i, datm_pipe_state *st);
/* The same, by a process that holds the run's lock itself (never RUNNING). */
void datm_pipe_state_refresh_held(const datm_pipeline *p, int i, datm_pipe_state *st);

/* ---- run records (record.c) ----
 * OUT/records/<id>.h5: what the report reads of a finished run (root attributes, /metrics,
 * /curves and whatever the pipeline's tables and figures read of it), with the run's cache
 * key as the root attribute pipeline_key. A report writes one for every finished run it
 * reads from the cache; committed with the report, records let the report regenerate and
 * the pipeline continue where the cache is not (another machine, a fresh clone). */
#define DATM_RECORD_DIR "records"
#define DATM_RECORD_ATTR_KEY "pipeline_key"
/* What a record holds beyond the root attributes, copied in this order. */
typedef struct datm_record_parts {
    datm_strlist groups;     /* whole groups: metrics, curves, ... */
    datm_strlist datasets;   /* single datasets ("/model/inferred_layers") */
    int topics;              /* /topics without its projections, and /data/vocab */
    int phi;                 /* /model/phi_1..L, /usage and /data/vocab */
} datm_record_parts;
void datm_record_parts_free(datm_record_parts *w);
/* OUT_DIR/records/<id>.h5 into out. */
void datm_record_path(const char *out_dir, const char *id, char *out, size_t size);
/* The pipeline key of the record at path (key: 65 chars). Fails naming the file when it cannot
 * be read (DATM_E_IO, DATM_E_FORMAT for a damaged file), has no key or is not COMPLETED. */
int  datm_record_key(const char *path, char key[65], datm_error *err);
/* Writes the record of the run at src_run (a run directory or a result file, a record too)
 * to path (PATH.tmp, renamed when complete) with key; parts that src_run lacks are left out.
 * The same source and parts give the same bytes. */
int  datm_record_write(const char *src_run, const char *path, const char *key,
                       const datm_record_parts *w, datm_error *err);

/* ---- running (sched.c) ---- */
typedef struct datm_pipe_exec_opts {
    int  jobs;              /* core budget (-j); runs at once = max(1, jobs / threads) */
    int  threads;           /* threads per run; 0: the pipeline file's `threads` */
    int  force;             /* rerun COMPLETED and recorded runs too (the old result is kept
                               until the new one completes: datm run --overwrite) */
    int  dry;               /* print what would run, run nothing */
    int  quiet;             /* no live status line, only events */
    const char *only;       /* POSIX extended regex over run ids (NULL: all); the members of
                               a chosen ensemble are chosen too */
    const char *datm_exe;   /* the datm binary that runs each run */
} datm_pipe_exec_opts;

/* Marks the runs chosen by opts->only (p->runs[i].selected). Returns the count, or -1 with
 * err set for a bad regex. */
int  datm_pipeline_select(datm_pipeline *p, const char *only, datm_error *err);
/* Runs every selected run that is neither COMPLETED in the cache nor recorded (st from
 * datm_pipeline_states, updated in place; a member of an ensemble to be run is run even when
 * recorded, the ensemble needs its model): pending ones with `datm run`, resumable ones with `datm resume`,
 * ensembles once their members are done; independent runs at once within the core budget,
 * each with its log in OUT/logs/<id>.log, every finished run linked as OUT/runs/<id>.
 * Killing the pipeline stops its runs at a checkpoint (they get SIGINT) and a rerun
 * continues where they stopped. *n_failed counts runs that did not complete. Returns DATM_OK
 * unless the pipeline itself could not go on (then err says why). */
int  datm_pipeline_execute(datm_pipeline *p, const datm_model_catalog *cat,
                           const datm_pipe_exec_opts *o, datm_pipe_state *st, int *n_failed,
                           datm_error *err);

/* fnmatch-style glob (* ? [...]) match of a whole string. */
int  datm_glob_match(const char *pattern, const char *s);

#endif
