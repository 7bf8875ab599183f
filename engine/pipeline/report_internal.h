/* engine/pipeline/report_internal.h (internal): what the parts of the report share — the
 * runs with their metrics (report.c), text helpers and atomic files (report_text.c) — and
 * the entry points of the tables, figures and claims parts. */
#ifndef DATM_REPORT_INTERNAL_H
#define DATM_REPORT_INTERNAL_H

#include <stdio.h>

#include "io/results.h"
#include "pipeline/report.h"

/* One run as the report sees it. */
typedef struct rep_run {
    const datm_pipe_run   *run;
    const datm_pipe_state *st;
    const char *status;        /* COMPLETED, RUNNING, FAILED, INTERRUPTED, MISSING */
    int         finished;      /* COMPLETED: its metrics and curves count */
    datm_result_metrics m;     /* empty unless finished and readable */
} rep_run;

typedef struct rep_ctx {
    const datm_pipeline *p;
    rep_run    *runs;          /* (p->n_runs) */
    const char *out;           /* the report directory */
    int        *fig_made;      /* (p->n_figures) 1 when the figure was drawn (rep_figures);
                                  the claims a figure shows read it */
} rep_ctx;

/* A value to print: missing, a number (with its display format), or a text. */
typedef enum { REP_MISSING = 0, REP_NUMBER, REP_TEXT } rep_kind;
typedef struct rep_cell {
    rep_kind kind;
    double   v;
    char     text[256];
    char     fmt[16];          /* NUMBER: markdown format */
} rep_cell;

/* ---- report.c ---- */
/* Metric `name` of run i: 0 and *v when finished, present and not NaN; else -1. */
int rep_metric(const rep_ctx *c, int i, const char *name, double *v);

/* ---- report_records.c ---- */
/* What every reader of the report opens for run i (datm_result_open accepts both): its
 * record when the run is RECORDED, else its directory in the cache. */
const char *rep_source(const rep_ctx *c, int i);
/* Index of the first finished run that figure f selects, -1 when none: the run a hierarchy
 * or atoms figure draws. */
int rep_first_finished(const rep_ctx *c, const datm_pipe_figure *f);
/* OUT/records/<id>.h5 of every finished run not read from that record itself; a record that
 * cannot be written is a warning naming it, the report goes on. */
int rep_records(const rep_ctx *c, datm_error *err);

/* ---- report_text.c ---- */
/* Fills template tmpl ("{k_1}-{k_2}") for run i: a {KEY} is the run's label, else its
 * metric ({label:KEY}, {metric:KEY} force one); integers print as integers, other numbers
 * with fmt. Returns 0, or -1 when a key has no value (out holds the text so far). */
int  rep_fill(const rep_ctx *c, int i, const char *tmpl, const char *fmt, char *out, size_t size);
/* Number in a printf format checked to be %[digits.][eEfgG] (else %.4g). */
void rep_num(char *out, size_t size, double v, const char *fmt);
/* The shortest decimal that reads back as v ("nan", "inf", "-inf" for non-finite). */
void rep_num_exact(char *out, size_t size, double v);
/* Writers of one cell or string in each format. */
void rep_md_text(FILE *f, const char *s);             /* '|' escaped, newlines as spaces */
void rep_md_cell(FILE *f, const rep_cell *x);         /* "-" when missing */
void rep_csv_cell(FILE *f, const rep_cell *x);
void rep_json_cell(FILE *f, const rep_cell *x);       /* null when missing or not finite */
/* `target` relative to directory `dir` (both existing; realpath'd), e.g. "../p/ci.yaml".
 * Falls back to target as given when relative, else its base name. */
void rep_relpath(const char *target, const char *dir, char *out, size_t size);
/* Creates dir and its parents. */
int  rep_mkdir(const char *dir, datm_error *err);
/* OUT/rel written as OUT/rel.tmp, renamed by rep_close when complete. */
FILE *rep_open(const rep_ctx *c, const char *rel, datm_error *err);
int   rep_close(const rep_ctx *c, FILE *f, const char *rel, datm_error *err);

/* ---- report_table.c ---- */
/* Writes tables/ID.* per the table's formats and the table's section into md (REPORT.md). */
int rep_tables(const rep_ctx *c, FILE *md, datm_error *err);

/* ---- report_figure.c ---- */
/* Every figure into OUT/figures and its section into md; c->fig_made records which were
 * drawn. */
int rep_figures(const rep_ctx *c, FILE *md, datm_error *err);
/* The section heading of a figure drawn from one run, and the index in c->runs of its first
 * COMPLETED selected run; -1 (with a "No figure yet" line and a warning) when there is none.
 * Shared by the figures made from a single run's topics (hierarchy, atoms). */
int rep_figure_first_run(const rep_ctx *c, const datm_pipe_figure *f, FILE *md);
/* A "hierarchy" figure: the topic tree of the first COMPLETED selected run, into
 * OUT/figures/ID.md (written whole, rep_open) and md (report_hierarchy.c). *made = 1 when
 * written. */
int rep_hierarchy(const rep_ctx *c, const datm_pipe_figure *f, FILE *md,
                  int *made, datm_error *err);
/* An "atoms" figure: the image grids of each layer's atoms of the first COMPLETED selected
 * run, into DIR/ID_layerL.* and md (report_atoms.c). *made = 1 when a layer was drawn. */
int rep_atoms(const rep_ctx *c, const datm_pipe_figure *f, const char *dir, FILE *md,
              int *made, datm_error *err);

/* ---- report_claims.c ---- */
/* The verdict of one claim and its instances (one per combination of axis values). */
typedef struct rep_claim {
    datm_claim_verdict verdict;
    int    n_inst;
    int   *idx;                /* (n_inst, n_axes) the index of each axis value */
    char **explain;            /* (n_inst) datm_expr_eval's explanation */
    int   *inst_verdict;       /* (n_inst) datm_expr_verdict */
} rep_claim;
/* Evaluates every claim of the pipeline: *out (p->n_claims), counted into sum. */
int  rep_claims_eval(const rep_ctx *c, rep_claim **out, datm_claims_summary *sum,
                     datm_error *err);
/* The claims section of REPORT.md, claims.md and claims.json. */
int  rep_claims_write(const rep_ctx *c, const rep_claim *r, const datm_claims_summary *sum,
                      FILE *md, datm_error *err);
void rep_claims_free(rep_claim *r, int n);

#endif
