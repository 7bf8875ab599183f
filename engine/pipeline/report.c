/* engine/pipeline/report.c: `datm pipeline report` (report.h): reads every finished run's
 * /metrics once, evaluates the claims, and writes REPORT.md (header, runs, then the tables,
 * figures and claims parts) and runs.csv. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/h5.h"
#include "pipeline/report_internal.h"

int rep_metric(const rep_ctx *c, int i, const char *name, double *v)
{
    const rep_run *r = &c->runs[i];
    if (!r->finished || datm_result_metrics_get(&r->m, name, v) != 0 || isnan(*v)) return -1;
    return 0;
}

/* The status shown for a run, from the scheduler's state. */
static const char *status_of(const datm_pipe_state *s, int *finished)
{
    *finished = 0;
    switch (s->status) {
    case DATM_PIPE_DONE:
    case DATM_PIPE_CACHED:
    case DATM_PIPE_RECORDED: *finished = 1; return "COMPLETED";
    case DATM_PIPE_RUNNING: return "RUNNING";
    case DATM_PIPE_FAILED: return "FAILED";
    case DATM_PIPE_RESUMABLE:
    case DATM_PIPE_PARTIAL: return "INTERRUPTED";
    default: return "MISSING";
    }
}

static void load_runs(rep_ctx *c, const datm_pipe_state *st)
{
    for (int i = 0; i < c->p->n_runs; i++) {
        rep_run *r = &c->runs[i];
        r->run = &c->p->runs[i];
        r->st = &st[i];
        r->status = status_of(&st[i], &r->finished);
        if (!r->finished) continue;
        datm_h5 *h = NULL;
        datm_error e = {0};
        if (datm_result_open(rep_source(c, i), 0, &h, &e) ||
            datm_result_metrics_read(h, &r->m, &e)) {
            datm_warn("report: run %s: %s; its values count as missing", r->run->id, e.msg);
            r->finished = 0;
            r->status = "UNREADABLE";
        }
        datm_h5_close(&h);
    }
}

static void free_runs(rep_ctx *c)
{
    for (int i = 0; c->runs && i < c->p->n_runs; i++) datm_result_metrics_free(&c->runs[i].m);
    free(c->runs);
    c->runs = NULL;
}

/* The folder of the pipeline file ("." when it has none). */
static void pipe_dir(const datm_pipeline *p, char *out, size_t size)
{
    snprintf(out, size, "%s", p->path);
    char *slash = strrchr(out, '/');
    if (slash == out) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(out, size, ".");
}

/* How run r was made: its spec relative to the pipeline file, or its ensemble members. */
static void made_from(const rep_ctx *c, const datm_pipe_run *r, char *out, size_t size)
{
    if (r->kind == DATM_PIPE_RUN_ENSEMBLE) {
        size_t n = (size_t)snprintf(out, size, "ensemble of");
        for (int k = 0; k < r->members.n && n < size; k++)
            n += (size_t)snprintf(out + n, size - n, "%s %s", k ? "," : "", r->members.v[k]);
        return;
    }
    char dir[1024];
    pipe_dir(c->p, dir, sizeof dir);
    rep_relpath(r->spec, dir, out, size);
}

static void write_header(const rep_ctx *c, const datm_claims_summary *sum, FILE *md)
{
    const datm_pipeline *p = c->p;
    char rel[1200];
    fputs("# ", md);
    rep_md_text(md, p->name);
    fputs("\n\n", md);
    if (p->description[0]) fprintf(md, "%s\n\n", p->description);
    rep_relpath(p->path, c->out, rel, sizeof rel);
    fprintf(md, "- pipeline file: `%s`\n- profile: %s%s%s\n", rel, p->profile[0] ? "`" : "",
            p->profile[0] ? p->profile : "none", p->profile[0] ? "`" : "");
    static const char *const shown[] = {"COMPLETED", "RUNNING", "INTERRUPTED", "FAILED",
                                        "MISSING", "UNREADABLE"};
    fprintf(md, "- runs: %d (", p->n_runs);
    const char *sep = "";
    for (size_t k = 0; k < DATM_COUNTOF(shown); k++) {
        int n = 0;
        for (int i = 0; i < p->n_runs; i++) n += !strcmp(c->runs[i].status, shown[k]);
        if (n) { fprintf(md, "%s%d %s", sep, n, shown[k]); sep = ", "; }
    }
    fputs(")\n", md);
    if (p->n_claims) {
        fprintf(md, "- claims: %d reproduced, %d not reproduced, %d not evaluable",
                sum->n[DATM_CLAIM_REPRODUCED], sum->n[DATM_CLAIM_NOT_REPRODUCED],
                sum->n[DATM_CLAIM_NOT_EVALUABLE]);
        if (sum->n[DATM_CLAIM_SHOWN])
            fprintf(md, ", %d shown (judged by eye)", sum->n[DATM_CLAIM_SHOWN]);
        fputc('\n', md);
    }
    fputs("\nEvery file here is made from the runs alone by `datm pipeline report`; run it again "
          "at any time.\n\n", md);
}

static void write_runs_md(const rep_ctx *c, FILE *md)
{
    const datm_pipeline *p = c->p;
    fputs("## Runs\n\n| id | status | key | spec | overrides | train_s |\n"
          "|---|---|---|---|---|---:|\n", md);
    for (int i = 0; i < p->n_runs; i++) {
        const rep_run *r = &c->runs[i];
        char from[1200];
        fputs("| ", md);
        /* the record, not runs/ID: it is committed with the report, and the same whether
         * the run was read from the cache or from the record */
        if (r->finished)
            fprintf(md, "[%s](%s/%s.h5)", r->run->id, DATM_RECORD_DIR, r->run->id);
        else rep_md_text(md, r->run->id);
        fprintf(md, " | %s | `%.12s` | ", r->status, r->st->key[0] ? r->st->key : "-");
        made_from(c, r->run, from, sizeof from);
        rep_md_text(md, from);
        fputs(" |", md);
        for (int k = 0; k < r->run->overrides.n; k++) {
            fputs(" `", md);
            rep_md_text(md, r->run->overrides.v[k]);
            fputc('`', md);
        }
        double t;
        if (rep_metric(c, i, "train_s", &t) == 0) fprintf(md, " | %.1f |\n", t);
        else fputs(" | - |\n", md);
    }
    fputs("\nEvery run's labels and metrics: [runs.csv](runs.csv). A finished run's id links "
          "to its record (`records/ID.h5`: what this report reads of the run, with its cache "
          "key); `runs/ID` links to its directory in the run cache where that is.\n\n", md);
}

/* runs.csv: id, status, key, dir, spec, overrides, the labels (in order of first appearance)
 * and the metrics (by name) of every run. dir: the run's directory in the cache, or
 * records/ID.h5 for a run read from its record. */
static int write_runs_csv(const rep_ctx *c, datm_error *err)
{
    const datm_pipeline *p = c->p;
    datm_strlist labels = {0}, metrics = {0};
    int rc = DATM_OK;
    for (int i = 0; i < p->n_runs && !rc; i++) {
        const datm_pipe_run *r = &p->runs[i];
        for (int k = 0; k < r->n_labels && !rc; k++) {
            int seen = !strcmp(r->label_key[k], "id");
            for (int j = 0; j < labels.n && !seen; j++) seen = !strcmp(labels.v[j], r->label_key[k]);
            if (!seen) rc = datm_strlist_push(&labels, r->label_key[k], err);
        }
        for (int64_t k = 0; c->runs[i].finished && k < c->runs[i].m.n && !rc; k++) {
            const char *name = c->runs[i].m.names[k];
            int at = 0;
            while (at < metrics.n && strcmp(metrics.v[at], name) < 0) at++;
            if (at < metrics.n && !strcmp(metrics.v[at], name)) continue;
            rc = datm_strlist_push(&metrics, name, err);   /* then move it into place */
            for (int j = metrics.n - 1; !rc && j > at; j--) {
                char *t = metrics.v[j];
                metrics.v[j] = metrics.v[j - 1];
                metrics.v[j - 1] = t;
            }
        }
    }
    FILE *f = rc ? NULL : rep_open(c, "runs.csv", err);
    if (f) {
        fputs("id,status,key,dir,spec,overrides", f);
        for (int j = 0; j < labels.n; j++) { fputc(',', f); datm_csv_field(f, labels.v[j]); }
        for (int j = 0; j < metrics.n; j++) { fputc(',', f); datm_csv_field(f, metrics.v[j]); }
        fputc('\n', f);
        for (int i = 0; i < p->n_runs; i++) {
            const rep_run *r = &c->runs[i];
            char buf[1400], ov[4096];
            datm_csv_field(f, r->run->id);
            fprintf(f, ",%s,%s,", r->status, r->st->key);
            if (r->st->status == DATM_PIPE_RECORDED) {
                snprintf(buf, sizeof buf, "%s/%s.h5", DATM_RECORD_DIR, r->run->id);
                datm_csv_field(f, buf);
            } else if (r->st->dir[0]) {
                rep_relpath(r->st->dir, c->out, buf, sizeof buf);
                datm_csv_field(f, buf);
            }
            fputc(',', f);
            made_from(c, r->run, buf, sizeof buf);
            datm_csv_field(f, buf);
            fputc(',', f);
            size_t n = 0;
            ov[0] = '\0';
            for (int k = 0; k < r->run->overrides.n && n < sizeof ov; k++)
                n += (size_t)snprintf(ov + n, sizeof ov - n, "%s%s", k ? " " : "",
                                      r->run->overrides.v[k]);
            datm_csv_field(f, ov);
            for (int j = 0; j < labels.n; j++) {
                const char *v = datm_pipe_run_label(r->run, labels.v[j]);
                fputc(',', f);
                datm_csv_field(f, v ? v : "-");
            }
            for (int j = 0; j < metrics.n; j++) {
                double v;
                fputc(',', f);
                if (rep_metric(c, i, metrics.v[j], &v) == 0) {
                    rep_num_exact(buf, sizeof buf, v);
                    fputs(buf, f);
                } else {
                    fputc('-', f);
                }
            }
            fputc('\n', f);
        }
        rc = rep_close(c, f, "runs.csv", err);
    } else if (!rc) {
        rc = err->code;
    }
    datm_strlist_free(&labels);
    datm_strlist_free(&metrics);
    return rc;
}

int datm_pipeline_report(const datm_pipeline *p, const datm_pipe_state *st, const char *out_dir,
                         datm_claims_summary *sum, datm_error *err)
{
    datm_claims_summary local;
    if (!sum) sum = &local;
    memset(sum, 0, sizeof *sum);
    rep_ctx c = {.p = p, .out = out_dir};
    int rc = rep_mkdir(out_dir, err);
    if (rc) return rc;
    c.runs = calloc((size_t)p->n_runs + 1, sizeof *c.runs);
    c.fig_made = calloc((size_t)p->n_figures + 1, sizeof *c.fig_made);
    if (!c.runs || !c.fig_made) {
        free(c.runs);
        free(c.fig_made);
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    load_runs(&c, st);
    rc = rep_records(&c, err);
    /* the figures first (their section held in memory): a claim that a figure shows is
     * judged on whether it was drawn, and the claims' tally heads REPORT.md */
    char *figs = NULL;
    size_t figs_n = 0;
    FILE *fm = open_memstream(&figs, &figs_n);
    if (!fm && !rc) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    if (!rc) rc = rep_figures(&c, fm, err);
    if (fm && fclose(fm) != 0 && !rc) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    rep_claim *claims = NULL;
    if (!rc) rc = rep_claims_eval(&c, &claims, sum, err);
    FILE *md = rc ? NULL : rep_open(&c, "REPORT.md", err);
    if (md) {
        write_header(&c, sum, md);
        write_runs_md(&c, md);
        rc = rep_tables(&c, md, err);
        if (!rc && figs_n) fwrite(figs, 1, figs_n, md);
        if (!rc) rc = rep_claims_write(&c, claims, sum, md, err);
        if (!rc) {
            rc = rep_close(&c, md, "REPORT.md", err);
        } else {
            char tmp[1200];
            fclose(md);
            snprintf(tmp, sizeof tmp, "%s/REPORT.md.tmp", out_dir);
            remove(tmp);
        }
    } else if (!rc) {
        rc = err->code;
    }
    if (!rc) rc = write_runs_csv(&c, err);
    rep_claims_free(claims, p->n_claims);
    free_runs(&c);
    free(c.fig_made);
    free(figs);
    return rc;
}
