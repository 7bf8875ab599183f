/* engine/pipeline/pipefile_outputs.c: the parts of a pipeline file that read finished runs —
 * references (others' figures), tables, figures and claims (pipefile.h) — and the checks
 * that they name runs, labels and axes that exist. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipefile_parse.h"
#include "pipeline/report.h"

/* ---- references: {SOURCE: {RUN: {METRIC: value}}} ---- */

void pipe_parse_references(pipe_ctx *c, const datm_ynode *n)
{
    datm_pipeline *p = c->p;
    if (!pipe_is_map(c, n, "references", "references: {SOURCE: {RUN: {METRIC: value}}}")) return;
    for (int s = 0; s < n->n; s++) {
        char path[200];
        snprintf(path, sizeof path, "references.%s", n->keys[s]);
        const datm_ynode *src = n->kids[s];
        if (!pipe_is_map(c, src, path, "{RUN: {METRIC: value}}")) continue;
        for (int r = 0; r < src->n; r++) {
            char rpath[400];
            snprintf(rpath, sizeof rpath, "%s.%s", path, src->keys[r]);
            const datm_ynode *run = src->kids[r];
            if (!pipe_is_map(c, run, rpath, "{METRIC: value}")) continue;
            if (datm_pipeline_find_run(p, src->keys[r]) < 0) {
                const char **cand = malloc((size_t)(p->n_runs + 1) * sizeof *cand);
                if (!cand) { c->fatal = 1; return; }
                for (int k = 0; k < p->n_runs; k++) cand[k] = p->runs[k].id;
                const char *near = datm_closest_name(src->keys[r], cand, p->n_runs);
                pipe_key_error(c, src, r, path, "'%s' is not the id of a run%s%s%s", src->keys[r],
                               near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
                free(cand);
                continue;
            }
            for (int m = 0; m < run->n; m++) {
                const datm_ynode *v = run->kids[m];
                if (v->kind != DATM_Y_SCALAR) {
                    pipe_key_error(c, run, m, rpath, "%s: expected a number or a short text",
                                   run->keys[m]);
                    continue;
                }
                if ((p->n_refs & 63) == 0) {
                    datm_pipe_ref *q = realloc(p->refs, (size_t)(p->n_refs + 64) * sizeof *q);
                    if (!q) { c->fatal = 1; return; }
                    p->refs = q;
                }
                datm_pipe_ref *f = &p->refs[p->n_refs++];
                memset(f, 0, sizeof *f);
                snprintf(f->source, sizeof f->source, "%s", n->keys[s]);
                snprintf(f->run, sizeof f->run, "%s", src->keys[r]);
                snprintf(f->metric, sizeof f->metric, "%s", run->keys[m]);
                snprintf(f->text, sizeof f->text, "%s", v->text);
                char *end;
                double x = strtod(v->text, &end);
                f->value = (end != v->text && *end == '\0' && !v->quoted) ? x : NAN;
            }
        }
    }
}

/* ---- the run selection shared by tables, figures and claims ---- */

static void parse_select(pipe_ctx *c, const datm_ynode *m, const char *path, datm_pipe_select *s)
{
    pipe_list(c, m, "runs", path, &s->ids);
    const datm_ynode *w = datm_ytree_get(m, "where", NULL);
    if (!w || !pipe_is_map(c, w, path, "where: {LABEL: value}")) return;
    for (int i = 0; i < w->n; i++) {
        if (w->kids[i]->kind != DATM_Y_SCALAR || s->n_where >= DATM_PIPE_MAX_LABELS) {
            pipe_key_error(c, w, i, path, "where.%s: expected a single value (at most %d labels)",
                           w->keys[i], DATM_PIPE_MAX_LABELS);
            continue;
        }
        snprintf(s->where_key[s->n_where], 64, "%s", w->keys[i]);
        snprintf(s->where_val[s->n_where], 256, "%s", w->kids[i]->text);
        s->n_where++;
    }
}

/* Grows an array of `size`-byte items by one zeroed slot. */
static void *grow(pipe_ctx *c, void **arr, int *n, size_t size)
{
    char *q = realloc(*arr, (size_t)(*n + 1) * size);
    if (!q) { c->fatal = 1; return NULL; }
    *arr = q;
    memset(q + (size_t)*n * size, 0, size);
    return q + (size_t)(*n)++ * size;
}

/* ---- tables ---- */

static void parse_column(pipe_ctx *c, const datm_ynode *v, const char *path, datm_pipe_column *col)
{
    snprintf(col->format, sizeof col->format, "%%.4g");
    if (v->kind == DATM_Y_SCALAR) {   /* shorthand: a metric name */
        snprintf(col->metric, sizeof col->metric, "%s", v->text);
        snprintf(col->label, sizeof col->label, "%s", v->text);
        return;
    }
    if (!pipe_is_map(c, v, path, "a column: a metric name or {metric:, label:, ref:, format:, "
                     "text:}"))
        return;
    static const char *const keys[] = {"metric", "label", "ref", "format", "text", NULL};
    pipe_check_keys(c, v, path, keys);
    int has_m = pipe_scalar(c, v, "metric", path, col->metric, sizeof col->metric, 0);
    int has_t = pipe_scalar(c, v, "text", path, col->text, sizeof col->text, 0);
    pipe_scalar(c, v, "ref", path, col->ref, sizeof col->ref, 0);
    if (has_m == has_t)
        pipe_error(c, v, path, "give exactly one of 'metric' (a /metrics name or label:NAME) or "
                   "'text' (a template such as \"{k_1}-{k_2}\")");
    if (has_m && !strncmp(col->metric, "dataset:", 8) && (col->metric[8] != '/' || col->ref[0]))
        pipe_error(c, v, path, "metric '%s': a dataset column is 'dataset:/group/name' or "
                   "'dataset:/group/name[FROM:]' (a run's result.h5 dataset, entries joined by "
                   "'-'), with no 'ref'", col->metric);
    if (col->ref[0] && !has_m)
        pipe_error(c, v, path, "'ref' needs 'metric': the reference figure of which metric");
    if (pipe_scalar(c, v, "format", path, col->format, sizeof col->format, 0)) {
        const char *f = col->format;
        int ok = f[0] == '%' && strlen(f) >= 2 && strchr("eEfgG", f[strlen(f) - 1]) &&
                 strspn(f + 1, "0123456789.") == strlen(f) - 2;
        if (!ok)
            pipe_error(c, datm_ytree_get(v, "format", NULL), path, "format '%s': give a printf "
                       "number format such as %%.1f, %%.3g or %%.2e", f);
    }
    if (!pipe_scalar(c, v, "label", path, col->label, sizeof col->label, 0))
        snprintf(col->label, sizeof col->label, "%.60s%s%.60s", col->ref, col->ref[0] ? " " : "",
                 has_m ? col->metric : col->text);
}

static void parse_table(pipe_ctx *c, const char *id, const datm_ynode *m, const char *path)
{
    static const char *const keys[] = {"title", "note", "runs", "where", "rows", "columns_by",
                                       "values", "formats", NULL};
    if (!pipe_is_map(c, m, path, "a table {title:, runs:, rows:, values:, ...}")) return;
    pipe_check_keys(c, m, path, keys);
    datm_pipeline *p = c->p;
    datm_pipe_table *t = grow(c, (void **)&p->tables, &p->n_tables, sizeof *t);
    if (!t) return;
    snprintf(t->id, sizeof t->id, "%s", id);
    datm_ytree_where(m, t->where, sizeof t->where);
    if (!pipe_scalar(c, m, "title", path, t->title, sizeof t->title, 0))
        snprintf(t->title, sizeof t->title, "%s", id);
    pipe_scalar(c, m, "note", path, t->note, sizeof t->note, 0);
    parse_select(c, m, path, &t->select);
    pipe_list(c, m, "rows", path, &t->rows);
    datm_error e = {0};
    if (t->rows.n == 0 && datm_strlist_push(&t->rows, "id", &e)) c->fatal = 1;
    pipe_list(c, m, "columns_by", path, &t->columns_by);
    const datm_ynode *v = datm_ytree_get(m, "values", NULL);
    if (!v) {
        pipe_error(c, m, path, "'values' is required: the columns, e.g. [perplexity, "
                   "{metric: perplexity, ref: paper}]");
    } else {
        int n = v->kind == DATM_Y_SEQ ? v->n : 1;
        t->values = calloc((size_t)n, sizeof *t->values);
        if (!t->values) { c->fatal = 1; return; }
        t->n_values = n;
        for (int i = 0; i < n; i++) {
            char cp[160];
            snprintf(cp, sizeof cp, "%.120s.values[%d]", path, i + 1);
            parse_column(c, v->kind == DATM_Y_SEQ ? v->kids[i] : v, cp, &t->values[i]);
        }
    }
    datm_strlist fmts = {0};
    if (pipe_list(c, m, "formats", path, &fmts)) {
        for (int i = 0; i < fmts.n; i++) {
            if (!strcmp(fmts.v[i], "md")) t->md = 1;
            else if (!strcmp(fmts.v[i], "csv")) t->csv = 1;
            else if (!strcmp(fmts.v[i], "json")) t->json = 1;
            else pipe_error(c, datm_ytree_get(m, "formats", NULL), path, "formats: '%s' is not one "
                            "of md, csv, json", fmts.v[i]);
        }
    } else {
        t->md = t->csv = t->json = 1;
    }
    datm_strlist_free(&fmts);
}

void pipe_parse_tables(pipe_ctx *c, const datm_ynode *n)
{
    if (!pipe_is_map(c, n, "tables", "tables: {ID: {...}, ...}")) return;
    for (int i = 0; i < n->n && !c->fatal; i++) {
        char path[128];
        snprintf(path, sizeof path, "tables.%s", n->keys[i]);
        parse_table(c, n->keys[i], n->kids[i], path);
    }
}

/* ---- figures ---- */

static void parse_figure(pipe_ctx *c, const char *id, const datm_ynode *m, const char *path)
{
    static const char *const keys[] = {"kind", "title", "runs", "where", "group", "x", "y",
                                       "metric", "category", "series", "xlabel", "ylabel",
                                       "logx", "logy", "top", "links", "words", NULL};
    if (!pipe_is_map(c, m, path, "a figure {kind:, runs:, x:, y:, ...}")) return;
    pipe_check_keys(c, m, path, keys);
    datm_pipeline *p = c->p;
    datm_pipe_figure *f = grow(c, (void **)&p->figures, &p->n_figures, sizeof *f);
    if (!f) return;
    snprintf(f->id, sizeof f->id, "%s", id);
    datm_ytree_where(m, f->where, sizeof f->where);
    char kind[32] = "curves";
    pipe_scalar(c, m, "kind", path, kind, sizeof kind, 0);
    if (!strcmp(kind, "curves")) f->kind = DATM_PIPE_FIG_CURVES;
    else if (!strcmp(kind, "bars")) f->kind = DATM_PIPE_FIG_BARS;
    else if (!strcmp(kind, "hierarchy")) f->kind = DATM_PIPE_FIG_HIERARCHY;
    else if (!strcmp(kind, "atoms")) f->kind = DATM_PIPE_FIG_ATOMS;
    else pipe_error(c, datm_ytree_get(m, "kind", NULL), path, "kind: '%s' is not curves, bars, "
                    "hierarchy or atoms", kind);
    if (!pipe_scalar(c, m, "title", path, f->title, sizeof f->title, 0))
        snprintf(f->title, sizeof f->title, "%s", id);
    parse_select(c, m, path, &f->select);
    snprintf(f->group, sizeof f->group, "curves");
    snprintf(f->x, sizeof f->x, "iteration");
    snprintf(f->y, sizeof f->y, "perplexity");
    snprintf(f->series, sizeof f->series, "{id}");
    snprintf(f->category, sizeof f->category, "{id}");
    pipe_scalar(c, m, "group", path, f->group, sizeof f->group, 0);
    pipe_scalar(c, m, "x", path, f->x, sizeof f->x, 0);
    pipe_scalar(c, m, "y", path, f->y, sizeof f->y, 0);
    int has_metric = pipe_scalar(c, m, "metric", path, f->metric, sizeof f->metric, 0);
    pipe_scalar(c, m, "category", path, f->category, sizeof f->category, 0);
    pipe_scalar(c, m, "series", path, f->series, sizeof f->series, 0);
    pipe_scalar(c, m, "xlabel", path, f->xlabel, sizeof f->xlabel, 0);
    pipe_scalar(c, m, "ylabel", path, f->ylabel, sizeof f->ylabel, 0);
    /* atoms: 64 tiles of a layer fill a readable 8 x 8 grid; more is allowed for a closer look */
    const int atoms = f->kind == DATM_PIPE_FIG_ATOMS;
    f->top = atoms ? 64 : 3;
    f->links = 3;
    f->words = 8;
    const char *const counts[] = {"top", "links", "words"};
    int *const count_of[] = {&f->top, &f->links, &f->words};
    for (int q = 0; q < 3; q++) {
        char v[32] = "";
        if (!pipe_scalar(c, m, counts[q], path, v, sizeof v, 0)) continue;
        char *end;
        long n = strtol(v, &end, 10);
        if (q == 0 && atoms) {
            if (*end || n < 1 || n > 1024)
                pipe_error(c, datm_ytree_get(m, "top", NULL), path, "top: '%s': the number of "
                           "atoms per layer, from 1 to 1024", v);
            else f->top = (int)n;
        } else if (*end || n < 1 || n > 100 || f->kind != DATM_PIPE_FIG_HIERARCHY) {
            pipe_error(c, datm_ytree_get(m, counts[q], NULL), path, "%s: '%s': a count from 1 "
                       "to 100, for kind: hierarchy%s", counts[q], v,
                       q == 0 ? " (or atoms, up to 1024)" : " only");
        } else {
            *count_of[q] = (int)n;
        }
    }
    f->logx = pipe_bool(c, m, "logx", path, 0);
    f->logy = pipe_bool(c, m, "logy", path, 0);
    if (f->kind == DATM_PIPE_FIG_BARS && !has_metric)
        pipe_error(c, m, path, "a bars figure needs 'metric'");
    if (f->kind != DATM_PIPE_FIG_BARS && has_metric)
        pipe_error(c, datm_ytree_get(m, "metric", NULL), path, "'metric' is for kind: bars; a "
                   "curves figure plots the columns x and y of each run's /%s", f->group);
    if (!f->xlabel[0]) snprintf(f->xlabel, sizeof f->xlabel, "%s", f->kind ? "" : f->x);
    if (!f->ylabel[0]) snprintf(f->ylabel, sizeof f->ylabel, "%s", f->kind ? f->metric : f->y);
}

void pipe_parse_figures(pipe_ctx *c, const datm_ynode *n)
{
    if (!pipe_is_map(c, n, "figures", "figures: {ID: {...}, ...}")) return;
    for (int i = 0; i < n->n && !c->fatal; i++) {
        char path[128];
        snprintf(path, sizeof path, "figures.%s", n->keys[i]);
        parse_figure(c, n->keys[i], n->kids[i], path);
    }
}

/* ---- claims ---- */

/* The values of label `axis` over the runs, in order of first appearance. */
static void axis_values(const datm_pipeline *p, const char *axis, datm_strlist *out, int *fatal)
{
    datm_error e = {0};
    for (int i = 0; i < p->n_runs; i++) {
        const char *v = datm_pipe_run_label(&p->runs[i], axis);
        if (!v) continue;
        int seen = 0;
        for (int k = 0; k < out->n && !seen; k++) seen = !strcmp(out->v[k], v);
        if (!seen && datm_strlist_push(out, v, &e)) *fatal = 1;
    }
}

static void parse_quantifier(pipe_ctx *c, const datm_ynode *q, const char *path,
                             datm_pipe_claim *cl)
{
    /* forall: [axis, ...] (every value of those labels), forall: axis, or
     * forall: {axis: [values], ...} */
    const datm_ynode *items[DATM_PIPE_MAX_AXES];
    const char *names[DATM_PIPE_MAX_AXES];
    int n = 0;
    if (q->kind == DATM_Y_MAP) {
        for (int i = 0; i < q->n && n < DATM_PIPE_MAX_AXES; i++, n++) {
            names[n] = q->keys[i];
            items[n] = q->kids[i];
        }
    } else if (q->kind == DATM_Y_SEQ) {
        for (int i = 0; i < q->n && n < DATM_PIPE_MAX_AXES; i++, n++) {
            if (q->kids[i]->kind != DATM_Y_SCALAR) {
                pipe_error(c, q->kids[i], path, "expected an axis (label) name");
                return;
            }
            names[n] = q->kids[i]->text;
            items[n] = NULL;
        }
    } else {
        names[n] = q->text;
        items[n++] = NULL;
    }
    datm_error e = {0};
    for (int a = 0; a < n; a++) {
        snprintf(cl->axis[a], sizeof cl->axis[a], "%s", names[a]);
        if (items[a]) {
            if (items[a]->kind == DATM_Y_SCALAR) {
                if (datm_strlist_push(&cl->axis_values[a], items[a]->text, &e)) c->fatal = 1;
            } else if (items[a]->kind == DATM_Y_SEQ) {
                for (int k = 0; k < items[a]->n; k++) {
                    const datm_ynode *it = items[a]->kids[k];
                    if (it->kind != DATM_Y_SCALAR)
                        pipe_error(c, it, path, "%s: expected a list of values", names[a]);
                    else if (datm_strlist_push(&cl->axis_values[a], it->text, &e)) c->fatal = 1;
                }
            } else {
                pipe_error(c, items[a], path, "%s: expected a list of values", names[a]);
            }
        } else {
            axis_values(c->p, names[a], &cl->axis_values[a], &c->fatal);
            if (cl->axis_values[a].n == 0)
                pipe_error(c, q, path, "'%s' is no run's label or matrix axis", names[a]);
        }
    }
    cl->n_axes = n;
}

static void parse_claim(pipe_ctx *c, const char *id, const datm_ynode *m, const char *path)
{
    static const char *const keys[] = {"text", "expr", "figure", "forall", "exists", "rel_tol",
                                       "abs_tol", "informative", NULL};
    if (!pipe_is_map(c, m, path, "a claim {text:, expr:, forall:, ...}")) return;
    pipe_check_keys(c, m, path, keys);
    datm_pipeline *p = c->p;
    datm_pipe_claim *cl = grow(c, (void **)&p->claims, &p->n_claims, sizeof *cl);
    if (!cl) return;
    snprintf(cl->id, sizeof cl->id, "%s", id);
    datm_ytree_where(m, cl->where, sizeof cl->where);
    pipe_scalar(c, m, "text", path, cl->text, sizeof cl->text, 1);
    if (pipe_scalar(c, m, "figure", path, cl->figure, sizeof cl->figure, 0)) {
        /* judged by eye: nothing to evaluate, quantify or loosen, and never a --strict gate */
        static const char *const numeric[] = {"expr", "forall", "exists", "rel_tol", "abs_tol"};
        for (size_t k = 0; k < DATM_COUNTOF(numeric); k++)
            if (datm_ytree_get(m, numeric[k], NULL))
                pipe_error(c, datm_ytree_get(m, numeric[k], NULL), path, "'%s' with 'figure': a "
                           "claim is either decided by an expr or shown by a figure a person "
                           "judges", numeric[k]);
        if (!cl->figure[0])
            pipe_error(c, datm_ytree_get(m, "figure", NULL), path, "figure: give the id of a "
                       "figure under figures:");
        cl->informative = 1;
        return;
    }
    pipe_scalar(c, m, "expr", path, cl->expr, sizeof cl->expr, 1);
    const datm_ynode *fa = datm_ytree_get(m, "forall", NULL);
    const datm_ynode *ex = datm_ytree_get(m, "exists", NULL);
    if (fa && ex) pipe_error(c, m, path, "give 'forall' or 'exists', not both");
    else if (fa || ex) parse_quantifier(c, fa ? fa : ex, path, cl);
    cl->exists = ex != NULL;
    cl->rel_tol = pipe_number(c, m, "rel_tol", path, 0, 0, 1);
    cl->abs_tol = pipe_number(c, m, "abs_tol", path, 0, 0, 1e300);
    cl->informative = pipe_bool(c, m, "informative", path, 0);
    /* every {placeholder} of the expression must be a quantified axis */
    for (const char *q = strchr(cl->expr, '{'); q; q = strchr(q + 1, '{')) {
        const char *e = strchr(q, '}');
        if (!e) {
            pipe_error(c, datm_ytree_get(m, "expr", NULL), path, "expr: an unclosed '{'");
            break;
        }
        int found = 0;
        for (int a = 0; a < cl->n_axes && !found; a++)
            found = strlen(cl->axis[a]) == (size_t)(e - q - 1) &&
                    !strncmp(cl->axis[a], q + 1, (size_t)(e - q - 1));
        if (!found)
            pipe_error(c, datm_ytree_get(m, "expr", NULL), path, "expr: {%.*s} is not an axis of "
                       "forall/exists", (int)(e - q - 1), q + 1);
    }
}

void pipe_parse_claims(pipe_ctx *c, const datm_ynode *n)
{
    if (!pipe_is_map(c, n, "claims", "claims: {ID: {...}, ...}")) return;
    for (int i = 0; i < n->n && !c->fatal; i++) {
        char path[128];
        snprintf(path, sizeof path, "claims.%s", n->keys[i]);
        parse_claim(c, n->keys[i], n->kids[i], path);
    }
}

/* ---- cross-checks ---- */

static int label_known(const datm_pipeline *p, const char *key)
{
    if (!strcmp(key, "id")) return 1;
    for (int i = 0; i < p->n_runs; i++)
        if (datm_pipe_run_label(&p->runs[i], key)) return 1;
    return 0;
}

static int select_nonempty(const datm_pipeline *p, const datm_pipe_select *s)
{
    for (int i = 0; i < p->n_runs; i++)
        if (datm_pipe_select_match(s, &p->runs[i])) return 1;
    return 0;
}

static void check_select(pipe_ctx *c, const datm_pipe_select *s, const char *where,
                         const char *what)
{
    const datm_pipeline *p = c->p;
    for (int i = 0; i < s->n_where; i++)
        if (!label_known(p, s->where_key[i]))
            pipe_error_at(c, where, what, "where: '%s' is no run's label", s->where_key[i]);
    if (!select_nonempty(p, s)) pipe_error_at(c, where, what, "selects no run");
}

void pipe_check_outputs(pipe_ctx *c)
{
    const datm_pipeline *p = c->p;
    for (int i = 0; i < p->n_tables; i++) {
        const datm_pipe_table *t = &p->tables[i];
        char what[96];
        snprintf(what, sizeof what, "tables.%s", t->id);
        check_select(c, &t->select, t->where, what);
        const datm_strlist *ls[] = {&t->rows, &t->columns_by};
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < ls[k]->n; j++)
                if (!label_known(p, ls[k]->v[j]))
                    pipe_error_at(c, t->where, what, "'%s' is no run's label", ls[k]->v[j]);
        for (int j = 0; j < t->n_values; j++) {
            const char *src = t->values[j].ref;
            int known = !src[0];
            for (int r = 0; r < p->n_refs && !known; r++) known = !strcmp(p->refs[r].source, src);
            if (!known)
                pipe_error_at(c, t->where, what, "values[%d]: ref '%s' is not a source under "
                              "references:", j + 1, src);
        }
    }
    for (int i = 0; i < p->n_figures; i++) {
        char what[96];
        snprintf(what, sizeof what, "figures.%s", p->figures[i].id);
        check_select(c, &p->figures[i].select, p->figures[i].where, what);
    }
    /* Claims are parsed and their run references resolved now, so that a typo fails the
     * pipeline before hours of training rather than at report time. */
    for (int i = 0; i < p->n_claims; i++) {
        datm_error e = {0};
        if (datm_pipe_claim_check(p, &p->claims[i], &e)) {
            if (e.code == DATM_E_NOMEM) c->fatal = 1;
            pipe_error_msg(c, e.msg);
        }
    }
}
