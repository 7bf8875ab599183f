/* engine/pipeline/report_claims.c: the claims of a pipeline (report.h). A claim's
 * expression (expr.h) is evaluated once per instance — each combination of the values of
 * its forall/exists axes, substituted as {axis} — against the finished runs' metrics:
 *   forall: reproduced when every instance holds; not reproduced when one fails (even if
 *           others are not evaluable); else not evaluable.
 *   exists: reproduced when one instance holds; not reproduced when every one fails; else
 *           not evaluable.
 * A claim shown by a figure (claims.ID.figure) has one instance: "shown; judged by eye" when
 * the figure was drawn, else not evaluable.
 * Written into REPORT.md (a table), claims.md and claims.json. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/config.h"
#include "pipeline/expr.h"
#include "pipeline/report_internal.h"

#define MAX_INSTANCES 100000
#define EXPLAIN_SIZE 2048

const char *datm_claim_verdict_name(datm_claim_verdict v)
{
    static const char *const names[] = {
        [DATM_CLAIM_REPRODUCED] = "reproduced",
        [DATM_CLAIM_NOT_REPRODUCED] = "not reproduced",
        [DATM_CLAIM_NOT_EVALUABLE] = "not evaluable",
        [DATM_CLAIM_SHOWN] = "shown; judged by eye",
    };
    _Static_assert(DATM_COUNTOF(names) == DATM_CLAIM_VERDICT_COUNT_, "one name per verdict");
    return (int)v >= 0 && v < DATM_CLAIM_VERDICT_COUNT_ ? names[v] : "?";
}

/* Number of instances of claim cl (the product of its axes' value counts). */
static long n_instances(const datm_pipe_claim *cl)
{
    long n = 1;
    for (int a = 0; a < cl->n_axes && n <= MAX_INSTANCES; a++) n *= cl->axis_values[a].n;
    return n;
}

/* The expression of instance k (axis indices in idx, filled here) of claim cl. */
static int instance_expr(const datm_pipe_claim *cl, long k, int *idx, char *out, size_t size,
                         datm_error *err)
{
    const char *names[DATM_PIPE_MAX_AXES], *values[DATM_PIPE_MAX_AXES];
    for (int a = cl->n_axes - 1; a >= 0; a--) {   /* the last axis varies fastest */
        const int n = cl->axis_values[a].n;
        idx[a] = (int)(k % n);
        k /= n;
        names[a] = cl->axis[a];
        values[a] = cl->axis_values[a].v[idx[a]];
    }
    return datm_expr_substitute(cl->expr, cl->n_axes, names, values, out, size, err);
}

/* "layers=128, variant=whai" of an instance. */
static void instance_axes(const datm_pipe_claim *cl, const int *idx, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int a = 0; a < cl->n_axes && n < size; a++)
        n += (size_t)snprintf(out + n, size - n, "%s%s=%s", a ? ", " : "", cl->axis[a],
                              cl->axis_values[a].v[idx[a]]);
}

/* Parses instance k; errors carry the claim's position. */
static int instance_parse(const datm_pipe_claim *cl, long k, int *idx, datm_expr **e,
                          datm_error *err)
{
    char text[4096];
    int rc = instance_expr(cl, k, idx, text, sizeof text, err);
    if (!rc) rc = datm_expr_parse(text, e, NULL, err);
    if (rc) {
        char axes[512];
        instance_axes(cl, idx, axes, sizeof axes);
        datm_error_prefix(err, "%s: claims.%s.expr%s%s%s: ", cl->where, cl->id,
                          axes[0] ? " (" : "", axes, axes[0] ? ")" : "");
        err->code = DATM_E_INVALID;
        return DATM_E_INVALID;
    }
    return DATM_OK;
}

/* The reference figure named by RUN.METRIC@SOURCE (metric_at = "METRIC@SOURCE"), or NULL. */
static const datm_pipe_ref *ref_figure(const datm_pipeline *p, const char *run,
                                       const char *metric_at)
{
    const char *at = strchr(metric_at, '@');
    char metric[128];
    if (!at || at - metric_at >= (long)sizeof metric) return NULL;
    snprintf(metric, sizeof metric, "%.*s", (int)(at - metric_at), metric_at);
    return datm_pipeline_ref(p, at + 1, run, metric);
}

/* Index of figure `id` of p, or -1. */
static int find_figure(const datm_pipeline *p, const char *id)
{
    for (int k = 0; k < p->n_figures; k++)
        if (!strcmp(p->figures[k].id, id)) return k;
    return -1;
}

/* A claim shown by a figure names one of the pipeline's figures. */
static int figure_claim_check(const datm_pipeline *p, const datm_pipe_claim *cl,
                              datm_error *err)
{
    if (find_figure(p, cl->figure) >= 0) return DATM_OK;
    const char **cand = malloc(((size_t)p->n_figures + 1) * sizeof *cand);
    if (!cand) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (int k = 0; k < p->n_figures; k++) cand[k] = p->figures[k].id;
    const char *near = datm_closest_name(cl->figure, cand, p->n_figures);
    datm_error_set(err, DATM_E_INVALID, "%s: claims.%s.figure: '%s' is not a figure of this "
                   "pipeline%s%s%s", cl->where, cl->id, cl->figure, near ? " (did you mean '" : "",
                   near ? near : "", near ? "'?)" : "");
    free(cand);
    return DATM_E_INVALID;
}

int datm_pipe_claim_check(const datm_pipeline *p, const datm_pipe_claim *cl, datm_error *err)
{
    if (cl->figure[0]) return figure_claim_check(p, cl, err);
    const long n = n_instances(cl);
    if (n > MAX_INSTANCES)
        return datm_error_set(err, DATM_E_INVALID, "%s: claims.%s: more than %d instances",
                              cl->where, cl->id, MAX_INSTANCES);
    const char **cand = malloc(((size_t)p->n_runs + 1) * sizeof *cand);
    if (!cand) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (int i = 0; i < p->n_runs; i++) cand[i] = p->runs[i].id;
    int rc = DATM_OK;
    for (long k = 0; k < n && !rc; k++) {
        int idx[DATM_PIPE_MAX_AXES];
        datm_expr *e = NULL;
        rc = instance_parse(cl, k, idx, &e, err);
        for (int r = 0; !rc && r < datm_expr_n_refs(e); r++) {
            const char *run = datm_expr_ref_run(e, r);
            const char *at = strchr(datm_expr_ref_metric(e, r), '@');
            if (at && !ref_figure(p, run, datm_expr_ref_metric(e, r))) {
                char axes[512];
                instance_axes(cl, idx, axes, sizeof axes);
                rc = datm_error_set(err, DATM_E_INVALID,
                                    "%s: claims.%s.expr%s%s%s: %s.%s: references.%s has no "
                                    "figure %s.%.*s", cl->where, cl->id, axes[0] ? " (" : "",
                                    axes, axes[0] ? ")" : "", run, datm_expr_ref_metric(e, r),
                                    at + 1, run, (int)(at - datm_expr_ref_metric(e, r)),
                                    datm_expr_ref_metric(e, r));
                break;
            }
            if (datm_pipeline_find_run(p, run) >= 0) continue;
            const char *near = datm_closest_name(run, cand, p->n_runs);
            char axes[512];
            instance_axes(cl, idx, axes, sizeof axes);
            rc = datm_error_set(err, DATM_E_INVALID,
                                "%s: claims.%s.expr%s%s%s: '%s' is not the id of a run%s%s%s",
                                cl->where, cl->id, axes[0] ? " (" : "", axes, axes[0] ? ")" : "",
                                run, near ? " (did you mean '" : "", near ? near : "",
                                near ? "'?)" : "");
        }
        datm_expr_destroy(&e);
    }
    free(cand);
    return rc;
}

/* ---- evaluation ---- */

static int lookup(void *user, const char *run, const char *metric, double *v)
{
    const rep_ctx *c = user;
    if (strchr(metric, '@')) {
        const datm_pipe_ref *r = ref_figure(c->p, run, metric);
        if (!r || isnan(r->value)) return 1;
        *v = r->value;
        return 0;
    }
    const int i = datm_pipeline_find_run(c->p, run);
    if (i < 0 || !c->runs[i].finished) return 1;
    return datm_result_metrics_get(&c->runs[i].m, metric, v) == 0 ? 0 : 1;   /* NaN passes */
}

static datm_claim_verdict aggregate(const datm_pipe_claim *cl, const int *v, int n)
{
    int n_true = 0, n_false = 0;
    for (int k = 0; k < n; k++) {
        n_true += v[k] == DATM_EXPR_TRUE;
        n_false += v[k] == DATM_EXPR_FALSE;
    }
    if (cl->exists) {
        if (n_true) return DATM_CLAIM_REPRODUCED;
        return n && n_false == n ? DATM_CLAIM_NOT_REPRODUCED : DATM_CLAIM_NOT_EVALUABLE;
    }
    if (n_false) return DATM_CLAIM_NOT_REPRODUCED;
    return n && n_true == n ? DATM_CLAIM_REPRODUCED : DATM_CLAIM_NOT_EVALUABLE;
}

/* A claim shown by a figure: whether the figure was drawn, nothing more. */
static int eval_figure_claim(const rep_ctx *c, const datm_pipe_claim *cl, rep_claim *r,
                             datm_error *err)
{
    const int k = find_figure(c->p, cl->figure);
    const int made = k >= 0 && c->fig_made[k];
    r->idx = calloc(1, sizeof *r->idx);
    r->explain = calloc(1, sizeof *r->explain);
    r->inst_verdict = calloc(1, sizeof *r->inst_verdict);
    if (r->idx && r->explain) r->explain[0] = malloc(EXPLAIN_SIZE);
    if (!r->idx || !r->explain || !r->inst_verdict || !r->explain[0])
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    snprintf(r->explain[0], EXPLAIN_SIZE, made ? "figure %s (Figures: %s): shown, for a person "
             "to judge; no number decides it" : "figure %s (Figures: %s): not drawn (see there "
             "why): not evaluable", cl->figure, k >= 0 ? c->p->figures[k].title : "?");
    r->n_inst = 1;
    r->inst_verdict[0] = made ? DATM_EXPR_TRUE : DATM_EXPR_NOT_EVALUABLE;
    r->verdict = made ? DATM_CLAIM_SHOWN : DATM_CLAIM_NOT_EVALUABLE;
    return DATM_OK;
}

static int eval_claim(const rep_ctx *c, const datm_pipe_claim *cl, rep_claim *r, datm_error *err)
{
    if (cl->figure[0]) return eval_figure_claim(c, cl, r, err);
    const long n = n_instances(cl);
    if (n > MAX_INSTANCES)
        return datm_error_set(err, DATM_E_INVALID, "%s: claims.%s: more than %d instances",
                              cl->where, cl->id, MAX_INSTANCES);
    const int na = cl->n_axes ? cl->n_axes : 1;
    r->idx = calloc((size_t)n * na + 1, sizeof *r->idx);
    r->explain = calloc((size_t)n + 1, sizeof *r->explain);
    r->inst_verdict = calloc((size_t)n + 1, sizeof *r->inst_verdict);
    if (!r->idx || !r->explain || !r->inst_verdict)
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (long k = 0; k < n; k++) {
        datm_expr *e = NULL;
        int rc = instance_parse(cl, k, &r->idx[k * na], &e, err);
        if (rc) return rc;
        r->explain[k] = malloc(EXPLAIN_SIZE);
        if (!r->explain[k]) {
            datm_expr_destroy(&e);
            return datm_error_set(err, DATM_E_NOMEM, "out of memory");
        }
        r->inst_verdict[k] = (int)datm_expr_eval(e, lookup, (void *)c, cl->rel_tol, cl->abs_tol,
                                                 r->explain[k], EXPLAIN_SIZE);
        datm_expr_destroy(&e);
        r->n_inst = (int)(k + 1);
    }
    r->verdict = aggregate(cl, r->inst_verdict, r->n_inst);
    return DATM_OK;
}

int rep_claims_eval(const rep_ctx *c, rep_claim **out, datm_claims_summary *sum, datm_error *err)
{
    const datm_pipeline *p = c->p;
    memset(sum, 0, sizeof *sum);
    *out = calloc((size_t)p->n_claims + 1, sizeof **out);
    if (!*out) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (int k = 0; k < p->n_claims; k++) {
        int rc = eval_claim(c, &p->claims[k], &(*out)[k], err);
        if (rc) return rc;
        const datm_claim_verdict v = (*out)[k].verdict;
        sum->n[v]++;
        if (!p->claims[k].informative) {
            sum->n_strict_not_reproduced += v == DATM_CLAIM_NOT_REPRODUCED;
            sum->n_strict_not_evaluable += v == DATM_CLAIM_NOT_EVALUABLE;
        }
    }
    return DATM_OK;
}

void rep_claims_free(rep_claim *r, int n)
{
    if (!r) return;
    for (int k = 0; k < n; k++) {
        for (int i = 0; r[k].explain && i < r[k].n_inst; i++) free(r[k].explain[i]);
        free(r[k].explain);
        free(r[k].idx);
        free(r[k].inst_verdict);
    }
    free(r);
}

/* ---- writing ---- */

static const int *inst_idx(const datm_pipe_claim *cl, const rep_claim *r, int k)
{
    return &r->idx[(size_t)k * (cl->n_axes ? cl->n_axes : 1)];
}

/* One instance as text: "layers=128: explanation" (or the explanation alone). */
static void instance_line(const datm_pipe_claim *cl, const rep_claim *r, int k, char *out,
                          size_t size)
{
    char axes[512];
    instance_axes(cl, inst_idx(cl, r, k), axes, sizeof axes);
    snprintf(out, size, "%s%s%s", axes, axes[0] ? ": " : "", r->explain[k]);
}

static void quantifier(FILE *f, const datm_pipe_claim *cl)
{
    fprintf(f, "%s ", cl->exists ? "for some" : "for every");
    for (int a = 0; a < cl->n_axes; a++) {
        fprintf(f, "%s%s in {", a ? " and " : "", cl->axis[a]);
        for (int v = 0; v < cl->axis_values[a].n; v++)
            fprintf(f, "%s%s", v ? ", " : "", cl->axis_values[a].v[v]);
        fputc('}', f);
    }
}

static void summary_line(FILE *f, const datm_pipeline *p, const datm_claims_summary *s)
{
    fprintf(f, "%d claim%s: %d reproduced, %d not reproduced, %d not evaluable", p->n_claims,
            p->n_claims == 1 ? "" : "s", s->n[DATM_CLAIM_REPRODUCED],
            s->n[DATM_CLAIM_NOT_REPRODUCED], s->n[DATM_CLAIM_NOT_EVALUABLE]);
    if (s->n[DATM_CLAIM_SHOWN]) fprintf(f, ", %d shown (judged by eye)", s->n[DATM_CLAIM_SHOWN]);
    fputc('.', f);
}

/* Verdicts that call for a reader's attention are bold: every one but reproduced and
 * shown. */
static int bold_verdict(datm_claim_verdict v)
{
    return v != DATM_CLAIM_REPRODUCED && v != DATM_CLAIM_SHOWN;
}

static void write_report_section(const rep_ctx *c, const rep_claim *r,
                                 const datm_claims_summary *sum, FILE *md)
{
    const datm_pipeline *p = c->p;
    fputs("## Claims\n\n", md);
    summary_line(md, p, sum);
    fputs(" Details: [claims.md](claims.md), [claims.json](claims.json).\n\n"
          "| id | claim | verdict | numbers |\n|---|---|---|---|\n", md);
    char line[EXPLAIN_SIZE + 600];
    for (int k = 0; k < p->n_claims; k++) {
        const datm_pipe_claim *cl = &p->claims[k];
        fputs("| ", md);
        rep_md_text(md, cl->id);
        fputs(" | ", md);
        rep_md_text(md, cl->text);
        if (cl->informative) fputs(" (informative)", md);
        fprintf(md, " | %s%s%s | ", bold_verdict(r[k].verdict) ? "**" : "",
                datm_claim_verdict_name(r[k].verdict), bold_verdict(r[k].verdict) ? "**" : "");
        if (!r[k].n_inst) fputs("no instance (an axis without values)", md);
        for (int i = 0; i < r[k].n_inst; i++) {
            instance_line(cl, &r[k], i, line, sizeof line);
            if (i) fputs("<br>", md);
            rep_md_text(md, line);
        }
        fputs(" |\n", md);
    }
    fputc('\n', md);
}

static void write_claims_md(const rep_ctx *c, const rep_claim *r, const datm_claims_summary *sum,
                            FILE *f)
{
    const datm_pipeline *p = c->p;
    char line[EXPLAIN_SIZE + 600];
    fputs("# Claims: ", f);
    rep_md_text(f, p->name);
    fputs("\n\n", f);
    summary_line(f, p, sum);
    fputc('\n', f);
    for (int k = 0; k < p->n_claims; k++) {
        const datm_pipe_claim *cl = &p->claims[k];
        fprintf(f, "\n## %s: %s\n\n", cl->id, datm_claim_verdict_name(r[k].verdict));
        if (cl->text[0]) fprintf(f, "%s\n\n", cl->text);
        if (cl->figure[0]) fprintf(f, "- shown by: figure `%s` (a person judges it)\n", cl->figure);
        else fprintf(f, "- expression: `%s`\n", cl->expr);
        if (cl->n_axes) {
            fputs("- ", f);
            quantifier(f, cl);
            fputc('\n', f);
        }
        if (cl->rel_tol != 0 || cl->abs_tol != 0) {
            char a[40], b[40];
            rep_num_exact(a, sizeof a, cl->rel_tol);
            rep_num_exact(b, sizeof b, cl->abs_tol);
            fprintf(f, "- tolerance: rel_tol %s, abs_tol %s (each comparison loosened by "
                       "rel_tol * |right side| + abs_tol)\n", a, b);
        }
        if (cl->informative) fputs("- informative: shown, never fails --strict\n", f);
        fputs("\n", f);
        if (!r[k].n_inst) fputs("No instance: an axis has no values.\n", f);
        for (int i = 0; i < r[k].n_inst; i++) {
            instance_line(cl, &r[k], i, line, sizeof line);
            fputs("- ", f);
            fputs(line, f);
            fputc('\n', f);
        }
    }
}

static void write_claims_json(const rep_ctx *c, const rep_claim *r,
                              const datm_claims_summary *sum, FILE *f)
{
    const datm_pipeline *p = c->p;
    char a[40], b[40];
    fputs("{\n  \"pipeline\": ", f);
    datm_json_string(f, p->name);
    fprintf(f, ",\n  \"summary\": {\"reproduced\": %d, \"not_reproduced\": %d, "
               "\"not_evaluable\": %d, \"shown\": %d, \"strict_not_reproduced\": %d, "
               "\"strict_not_evaluable\": %d},\n  \"claims\": [",
            sum->n[DATM_CLAIM_REPRODUCED], sum->n[DATM_CLAIM_NOT_REPRODUCED],
            sum->n[DATM_CLAIM_NOT_EVALUABLE], sum->n[DATM_CLAIM_SHOWN],
            sum->n_strict_not_reproduced, sum->n_strict_not_evaluable);
    for (int k = 0; k < p->n_claims; k++) {
        const datm_pipe_claim *cl = &p->claims[k];
        fputs(k ? ",\n    {\"id\": " : "\n    {\"id\": ", f);
        datm_json_string(f, cl->id);
        fputs(", \"text\": ", f);
        datm_json_string(f, cl->text);
        fputs(", \"expr\": ", f);
        if (cl->figure[0]) fputs("null", f);
        else datm_json_string(f, cl->expr);
        fputs(", \"figure\": ", f);
        if (cl->figure[0]) datm_json_string(f, cl->figure);
        else fputs("null", f);
        fprintf(f, ", \"quantifier\": \"%s\", \"axes\": {", cl->exists ? "exists" : "forall");
        for (int x = 0; x < cl->n_axes; x++) {
            if (x) fputs(", ", f);
            datm_json_string(f, cl->axis[x]);
            fputs(": [", f);
            for (int v = 0; v < cl->axis_values[x].n; v++) {
                if (v) fputs(", ", f);
                datm_json_string(f, cl->axis_values[x].v[v]);
            }
            fputc(']', f);
        }
        rep_num_exact(a, sizeof a, cl->rel_tol);
        rep_num_exact(b, sizeof b, cl->abs_tol);
        fprintf(f, "}, \"rel_tol\": %s, \"abs_tol\": %s, \"informative\": %s,\n     \"verdict\": ",
                a, b, cl->informative ? "true" : "false");
        datm_json_string(f, datm_claim_verdict_name(r[k].verdict));
        fputs(", \"instances\": [", f);
        for (int i = 0; i < r[k].n_inst; i++) {
            const int *idx = inst_idx(cl, &r[k], i);
            fputs(i ? ",\n       {\"axes\": {" : "\n       {\"axes\": {", f);
            for (int x = 0; x < cl->n_axes; x++) {
                if (x) fputs(", ", f);
                datm_json_string(f, cl->axis[x]);
                fputs(": ", f);
                datm_json_string(f, cl->axis_values[x].v[idx[x]]);
            }
            fputs("}, \"verdict\": ", f);
            datm_json_string(f, cl->figure[0] ? datm_claim_verdict_name(r[k].verdict)
                                : datm_expr_verdict_name((datm_expr_verdict)r[k].inst_verdict[i]));
            fputs(", \"explanation\": ", f);
            datm_json_string(f, r[k].explain[i]);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs(p->n_claims ? "\n  ]\n}\n" : "]\n}\n", f);
}

int rep_claims_write(const rep_ctx *c, const rep_claim *r, const datm_claims_summary *sum,
                     FILE *md, datm_error *err)
{
    if (!c->p->n_claims) return DATM_OK;
    write_report_section(c, r, sum, md);
    FILE *f = rep_open(c, "claims.md", err);
    if (!f) return err->code;
    write_claims_md(c, r, sum, f);
    int rc = rep_close(c, f, "claims.md", err);
    if (rc) return rc;
    f = rep_open(c, "claims.json", err);
    if (!f) return err->code;
    write_claims_json(c, r, sum, f);
    return rep_close(c, f, "claims.json", err);
}
