/* engine/pipeline/report.h: the report of a pipeline (`datm pipeline report`), made from the
 * runs alone and regenerable at any time (report*.c). Into OUT_DIR:
 *
 *   REPORT.md            title, description, profile, the runs (id, status, cache key, spec,
 *                        overrides, train_s), every table with its note, every figure, and the
 *                        claims with their verdicts and the numbers of each instance
 *   runs.csv             one row per run: id, status, key, dir (its directory in the cache,
 *                        or records/ID.h5 when read from its record), spec, overrides, its
 *                        labels and every /metrics value (the union over runs, by name)
 *   tables/ID.{md,csv,json}   per the table's formats (see datm_pipe_table)
 *   figures/ID.{dat,gp,png,svg}   through engine/io/figures.h (an atoms figure:
 *                        figures/ID_layerL.* per layer; a hierarchy: figures/ID.md)
 *   claims.md, claims.json
 *   records/ID.h5        the run record of every finished run read from the cache (what
 *                        this report reads of it, pipefile.h, report_records.c)
 *
 * Values: a run counts as finished when its state is DONE or CACHED (its result COMPLETED),
 * or RECORDED (read from OUT/records/ID.h5 instead, through rep_source);
 * any other run is shown with its status (RUNNING, FAILED, INTERRUPTED, MISSING) and its
 * metrics and curves count as missing. Missing cells print "-" in markdown and CSV and
 * null in JSON; claims over them are not evaluable.
 *
 * Table cells: `metric` (a /metrics value, or `label:KEY` for a label of the run), `ref`
 * (references.<ref>.<run id>.<metric>: a number, or its text as written), or `text`, a
 * template whose {KEY} is a label of the run (id, axes, labels:) or else one of its metrics
 * ({label:KEY} and {metric:KEY} force one); integers print as integers, other numbers with
 * the column's format. Markdown uses the column's format (default %.4g); CSV and JSON carry
 * the shortest decimal that reads back to the same double.
 * Pivot tables: the header of a column is its `columns_by` values joined by " / ", followed
 * by the value's label when the table has more than one value column. When several runs
 * fall into one pivot cell, the first (in run order) is shown and a warning is logged.
 * Bars figures: categories and series are the distinct values of the `category` and
 * `series` templates in order of first appearance; when the two templates are equal, all
 * bars form one series named after the metric.
 *
 * Determinism: the same runs give byte-identical files, except timing values (train_s,
 * test_s_per_doc, wall-time curves); the PNG and SVG images too, with one gnuplot (it
 * writes no date into them). No timestamps; paths are relative: specs to the pipeline
 * file's folder, everything else to OUT_DIR. Every file is written to NAME.tmp and renamed
 * when complete; the figures of an ID are removed first so that a figure without data
 * leaves no stale image. Nothing else in OUT_DIR is removed or changed, so another report
 * may live in a folder inside it (a pipeline's profiles with their own out:). Numbers use
 * the C locale (the CLI sets it). */
#ifndef DATM_REPORT_H
#define DATM_REPORT_H

#include "pipeline/pipefile.h"

typedef enum {
    DATM_CLAIM_REPRODUCED = 0,
    DATM_CLAIM_NOT_REPRODUCED,
    DATM_CLAIM_NOT_EVALUABLE,
    DATM_CLAIM_SHOWN,          /* a claim a figure shows (claims.ID.figure): drawn, for a
                                  person to judge; no number decides it */
    DATM_CLAIM_VERDICT_COUNT_
} datm_claim_verdict;

/* "reproduced", "not reproduced", "not evaluable", "shown; judged by eye". */
const char *datm_claim_verdict_name(datm_claim_verdict v);

typedef struct datm_claims_summary {
    int n[DATM_CLAIM_VERDICT_COUNT_];   /* claims per verdict */
    int n_strict_not_reproduced;        /* non-informative claims not reproduced (--strict: 3) */
    int n_strict_not_evaluable;         /* non-informative claims not evaluable */
} datm_claims_summary;

/* Writes the report of p into out_dir (created) from the runs' states st (n_runs, from
 * datm_pipeline_states). sum (may be NULL) receives the claims' verdicts. Fails on an
 * unwritable out_dir (DATM_E_IO) or a claim that does not parse (DATM_E_INVALID, naming
 * the claim's position); unreadable results and figures without data are logged warnings
 * and show as missing. */
int datm_pipeline_report(const datm_pipeline *p, const datm_pipe_state *st, const char *out_dir,
                         datm_claims_summary *sum, datm_error *err);

/* Checks claim c of p at load time: every instance (each combination of its axis values)
 * substitutes, parses, and names only runs of p. The message is
 * "<c->where>: claims.<id>.expr: ..." with the column and a caret line for a syntax
 * error, or a did-you-mean for an unknown run. DATM_E_INVALID. */
int datm_pipe_claim_check(const datm_pipeline *p, const datm_pipe_claim *c, datm_error *err);

#endif
