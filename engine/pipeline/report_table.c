/* engine/pipeline/report_table.c: the tables of a pipeline report (report.h). A table is
 * first built as a grid of cells — long form: one row per selected run; pivot form: one
 * row per combination of the `rows` labels and one group of value columns per combination
 * of the `columns_by` labels — then written as markdown, CSV and JSON from that grid, so
 * the three formats always agree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5.h"
#include "pipeline/report_internal.h"

typedef struct grid {
    int    n_rows, n_cols;
    char **head;          /* (n_cols) */
    int   *is_value;      /* (n_cols) 0: a label column, 1: a value column */
    rep_cell *cells;      /* (n_rows, n_cols) row-major */
} grid;

static void grid_free(grid *g)
{
    for (int j = 0; g->head && j < g->n_cols; j++) free(g->head[j]);
    free(g->head);
    free(g->is_value);
    free(g->cells);
    memset(g, 0, sizeof *g);
}

static int grid_alloc(grid *g, int n_rows, int n_cols, datm_error *err)
{
    g->n_rows = n_rows;
    g->n_cols = n_cols;
    g->head = calloc((size_t)n_cols, sizeof *g->head);
    g->is_value = calloc((size_t)n_cols, sizeof *g->is_value);
    g->cells = calloc((size_t)(n_rows ? n_rows : 1) * (size_t)n_cols, sizeof *g->cells);
    if (!g->head || !g->is_value || !g->cells) {
        grid_free(g);
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    return DATM_OK;
}

static int set_head(grid *g, int j, const char *s, int is_value, datm_error *err)
{
    g->head[j] = strdup(s);
    g->is_value[j] = is_value;
    return g->head[j] ? DATM_OK : datm_error_set(err, DATM_E_NOMEM, "out of memory");
}

static void text_cell(rep_cell *x, const char *s)
{
    memset(x, 0, sizeof *x);
    if (!s) return;
    x->kind = REP_TEXT;
    snprintf(x->text, sizeof x->text, "%s", s);
}

/* A column "dataset:/path[a:]" (run i's result.h5 dataset, e.g. the structure layer-wise
 * learning infers, /model/inferred_layers): its entries from index a on, joined by "-". */
static void dataset_cell(const rep_ctx *c, int i, const char *spec, rep_cell *x)
{
    if (!c->runs[i].finished) return;
    char path[128];
    snprintf(path, sizeof path, "%s", spec);
    long from = 0;
    char *br = strchr(path, '[');
    if (br) {
        from = strtol(br + 1, NULL, 10);
        *br = '\0';
    }
    datm_h5 *h = NULL;
    datm_error e = {0};
    double *v = NULL;
    int rank = 0;
    int64_t dims[8] = {0};
    if (datm_result_open(rep_source(c, i), 0, &h, &e) == DATM_OK &&
        datm_h5_read_f64_alloc(h, path, &v, &rank, dims, &e) == DATM_OK) {
        int64_t n = 1;
        for (int d = 0; d < rank; d++) n *= dims[d];
        size_t at = 0;
        x->text[0] = '\0';
        for (int64_t k = from; k < n && at + 32 < sizeof x->text; k++)
            at += (size_t)snprintf(x->text + at, sizeof x->text - at, "%s%.6g",
                                   k > from ? "-" : "", v[k]);
        if (from < n) x->kind = REP_TEXT;
    } else {
        datm_warn("report: run %s: %s; its value counts as missing", c->runs[i].run->id, e.msg);
    }
    datm_free(v);
    datm_h5_close(&h);
}

/* The value of column col for run i. */
static void value_cell(const rep_ctx *c, int i, const datm_pipe_column *col, rep_cell *x)
{
    memset(x, 0, sizeof *x);
    snprintf(x->fmt, sizeof x->fmt, "%s", col->format[0] ? col->format : "%.4g");
    const datm_pipe_run *r = c->runs[i].run;
    if (col->text[0]) {
        if (rep_fill(c, i, col->text, x->fmt, x->text, sizeof x->text) == 0) x->kind = REP_TEXT;
        return;
    }
    if (col->ref[0]) {
        const datm_pipe_ref *ref = datm_pipeline_ref(c->p, col->ref, r->id, col->metric);
        if (!ref) return;
        if (isnan(ref->value)) text_cell(x, ref->text);
        else { x->kind = REP_NUMBER; x->v = ref->value; }
        snprintf(x->fmt, sizeof x->fmt, "%s", col->format[0] ? col->format : "%.4g");
        return;
    }
    if (!strncmp(col->metric, "label:", 6)) {
        text_cell(x, datm_pipe_run_label(r, col->metric + 6));
        return;
    }
    if (!strncmp(col->metric, "dataset:", 8)) {
        dataset_cell(c, i, col->metric + 8, x);
        return;
    }
    double v;
    if (rep_metric(c, i, col->metric, &v) == 0) {
        x->kind = REP_NUMBER;
        x->v = v;
    }
}

/* Long form: one row per selected run. */
static int build_long(const rep_ctx *c, const datm_pipe_table *t, grid *g, datm_error *err)
{
    int n = 0;
    for (int i = 0; i < c->p->n_runs; i++) n += datm_pipe_select_match(&t->select, c->runs[i].run);
    int rc = grid_alloc(g, n, t->rows.n + t->n_values, err);
    for (int j = 0; !rc && j < t->rows.n; j++) rc = set_head(g, j, t->rows.v[j], 0, err);
    for (int j = 0; !rc && j < t->n_values; j++)
        rc = set_head(g, t->rows.n + j, t->values[j].label, 1, err);
    for (int i = 0, row = 0; !rc && i < c->p->n_runs; i++) {
        if (!datm_pipe_select_match(&t->select, c->runs[i].run)) continue;
        rep_cell *x = &g->cells[(size_t)row++ * g->n_cols];
        for (int j = 0; j < t->rows.n; j++)
            text_cell(&x[j], datm_pipe_run_label(c->runs[i].run, t->rows.v[j]));
        for (int j = 0; j < t->n_values; j++) value_cell(c, i, &t->values[j], &x[t->rows.n + j]);
    }
    return rc;
}

/* The labels keys of run r joined by '\x1f' (the identity of a row or column group), and
 * for display joined by " / ". */
static void combo(const datm_pipe_run *r, const datm_strlist *keys, char *id, size_t n_id,
                  char *shown, size_t n_shown)
{
    size_t a = 0, b = 0;
    id[0] = shown[0] = '\0';
    for (int k = 0; k < keys->n; k++) {
        const char *v = datm_pipe_run_label(r, keys->v[k]);
        a += (size_t)snprintf(id + a, a < n_id ? n_id - a : 0, "%s%s", k ? "\x1f" : "", v ? v : "");
        b += (size_t)snprintf(shown + b, b < n_shown ? n_shown - b : 0, "%s%s", k ? " / " : "",
                              v ? v : "-");
        if (a >= n_id) a = n_id - 1;
        if (b >= n_shown) b = n_shown - 1;
    }
}

/* Index of s in l, appending it when absent; -1 when out of memory. */
static int intern(datm_strlist *l, const char *s)
{
    for (int k = 0; k < l->n; k++)
        if (!strcmp(l->v[k], s)) return k;
    datm_error e = {0};
    return datm_strlist_push(l, s, &e) ? -1 : l->n - 1;
}

/* Pivot form: rows by the `rows` labels, column groups by the `columns_by` labels. */
static int build_pivot(const rep_ctx *c, const datm_pipe_table *t, grid *g, datm_error *err)
{
    const datm_pipeline *p = c->p;
    datm_strlist rows = {0}, groups = {0}, shown = {0};
    int *row_of = calloc((size_t)p->n_runs + 1, sizeof *row_of);
    int *group_of = calloc((size_t)p->n_runs + 1, sizeof *group_of);
    int rc = row_of && group_of ? DATM_OK : datm_error_set(err, DATM_E_NOMEM, "out of memory");
    char id[2048], disp[2048];
    for (int i = 0; !rc && i < p->n_runs; i++) {
        row_of[i] = group_of[i] = -1;
        if (!datm_pipe_select_match(&t->select, c->runs[i].run)) continue;
        combo(c->runs[i].run, &t->rows, id, sizeof id, disp, sizeof disp);
        row_of[i] = intern(&rows, id);
        combo(c->runs[i].run, &t->columns_by, id, sizeof id, disp, sizeof disp);
        const int n_before = groups.n;
        group_of[i] = intern(&groups, id);
        datm_error e = {0};
        if (groups.n > n_before && datm_strlist_push(&shown, disp, &e)) group_of[i] = -1;
        if (row_of[i] < 0 || group_of[i] < 0 || shown.n != groups.n)
            rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    const int nv = t->n_values;
    if (!rc) rc = grid_alloc(g, rows.n, t->rows.n + groups.n * nv, err);
    for (int j = 0; !rc && j < t->rows.n; j++) rc = set_head(g, j, t->rows.v[j], 0, err);
    for (int k = 0; !rc && k < groups.n; k++)
        for (int v = 0; !rc && v < nv; v++) {
            char head[600];
            snprintf(head, sizeof head, "%s%s%s", shown.v[k], nv > 1 ? " " : "",
                     nv > 1 ? t->values[v].label : "");
            rc = set_head(g, t->rows.n + k * nv + v, head, 1, err);
        }
    int *owner = rc ? NULL : calloc((size_t)rows.n * (size_t)(groups.n ? groups.n : 1) + 1,
                                    sizeof *owner);
    if (!rc && !owner) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (int i = 0; !rc && i < p->n_runs; i++) {
        if (row_of[i] < 0) continue;
        rep_cell *x = &g->cells[(size_t)row_of[i] * g->n_cols];
        int *own = &owner[(size_t)row_of[i] * groups.n + group_of[i]];
        if (*own) {
            datm_warn("table %s: runs %s and %s fall into the same cell; showing %s", t->id,
                      p->runs[*own - 1].id, p->runs[i].id, p->runs[*own - 1].id);
            continue;
        }
        *own = i + 1;
        if (x[0].kind == REP_MISSING && t->rows.n)
            for (int j = 0; j < t->rows.n; j++)
                text_cell(&x[j], datm_pipe_run_label(c->runs[i].run, t->rows.v[j]));
        for (int v = 0; v < nv; v++)
            value_cell(c, i, &t->values[v], &x[t->rows.n + group_of[i] * nv + v]);
    }
    free(owner);
    free(row_of);
    free(group_of);
    datm_strlist_free(&rows);
    datm_strlist_free(&groups);
    datm_strlist_free(&shown);
    return rc;
}

/* ---- writers ---- */

static void write_md(FILE *f, const grid *g)
{
    fputc('|', f);
    for (int j = 0; j < g->n_cols; j++) {
        fputc(' ', f);
        rep_md_text(f, g->head[j]);
        fputs(" |", f);
    }
    fputs("\n|", f);
    for (int j = 0; j < g->n_cols; j++) fputs(g->is_value[j] ? "---:|" : "---|", f);
    fputc('\n', f);
    for (int r = 0; r < g->n_rows; r++) {
        fputc('|', f);
        for (int j = 0; j < g->n_cols; j++) {
            fputc(' ', f);
            rep_md_cell(f, &g->cells[(size_t)r * g->n_cols + j]);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}

static void write_csv(FILE *f, const grid *g)
{
    for (int j = 0; j < g->n_cols; j++) {
        if (j) fputc(',', f);
        datm_csv_field(f, g->head[j]);
    }
    fputc('\n', f);
    for (int r = 0; r < g->n_rows; r++) {
        for (int j = 0; j < g->n_cols; j++) {
            if (j) fputc(',', f);
            rep_csv_cell(f, &g->cells[(size_t)r * g->n_cols + j]);
        }
        fputc('\n', f);
    }
}

static void write_json(FILE *f, const datm_pipe_table *t, const grid *g)
{
    fputs("{\n  \"id\": ", f);
    datm_json_string(f, t->id);
    fputs(",\n  \"title\": ", f);
    datm_json_string(f, t->title);
    fputs(",\n  \"note\": ", f);
    datm_json_string(f, t->note);
    fputs(",\n  \"columns\": [", f);
    for (int j = 0; j < g->n_cols; j++) {
        if (j) fputs(", ", f);
        datm_json_string(f, g->head[j]);
    }
    fputs("],\n  \"rows\": [", f);
    for (int r = 0; r < g->n_rows; r++) {
        fputs(r ? ",\n    [" : "\n    [", f);
        for (int j = 0; j < g->n_cols; j++) {
            if (j) fputs(", ", f);
            rep_json_cell(f, &g->cells[(size_t)r * g->n_cols + j]);
        }
        fputc(']', f);
    }
    fputs(g->n_rows ? "\n  ]\n}\n" : "]\n}\n", f);
}

static void write_note(FILE *f, const datm_pipe_table *t)
{
    if (t->note[0]) fprintf(f, "\n%s\n", t->note);
}

static int write_files(const rep_ctx *c, const datm_pipe_table *t, const grid *g,
                       datm_error *err)
{
    static const char *const ext[] = {"md", "csv", "json"};
    const int want[] = {t->md, t->csv, t->json};
    for (int k = 0; k < 3; k++) {
        if (!want[k]) continue;
        char rel[200];
        snprintf(rel, sizeof rel, "tables/%s.%s", t->id, ext[k]);
        FILE *f = rep_open(c, rel, err);
        if (!f) return err->code;
        if (k == 0) {
            fputs("# ", f);
            rep_md_text(f, t->title);
            fputs("\n\n", f);
            write_md(f, g);
            write_note(f, t);
        } else if (k == 1) {
            write_csv(f, g);
        } else {
            write_json(f, t, g);
        }
        int rc = rep_close(c, f, rel, err);
        if (rc) return rc;
    }
    return DATM_OK;
}

int rep_tables(const rep_ctx *c, FILE *md, datm_error *err)
{
    const datm_pipeline *p = c->p;
    if (!p->n_tables) return DATM_OK;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/tables", c->out);
    int rc = rep_mkdir(dir, err);
    if (rc) return rc;
    fputs("## Tables\n", md);
    for (int k = 0; k < p->n_tables && !rc; k++) {
        const datm_pipe_table *t = &p->tables[k];
        grid g = {0};
        rc = t->columns_by.n ? build_pivot(c, t, &g, err) : build_long(c, t, &g, err);
        if (!rc) rc = write_files(c, t, &g, err);
        if (!rc) {
            fputs("\n### ", md);
            rep_md_text(md, t->title);
            fputs("\n\n", md);
            write_md(md, &g);
            write_note(md, t);
            static const char *const ext[] = {"md", "csv", "json"};
            const int want[] = {t->md, t->csv, t->json};
            const char *sep = "\nFiles:";
            for (int e = 0; e < 3; e++)
                if (want[e]) {
                    fprintf(md, "%s [%s](tables/%s.%s)", sep, ext[e], t->id, ext[e]);
                    sep = ",";
                }
            if (want[0] || want[1] || want[2]) fputc('\n', md);
        }
        grid_free(&g);
    }
    fputc('\n', md);
    return rc;
}
