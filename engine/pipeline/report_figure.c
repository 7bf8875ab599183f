/* engine/pipeline/report_figure.c: the figures of a pipeline report (report.h) through
 * engine/io/figures.h — curves of several runs overlaid (a column of each run's /curves, or
 * another group, against another) and grouped bars of a metric. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/figures.h"
#include "io/h5.h"
#include "pipeline/report_internal.h"

/* What became of one figure, for REPORT.md. */
typedef struct fig_out {
    int  made;            /* .dat and .gp written */
    int  rendered;        /* .png and .svg too */
    char why[300];        /* !made: why not */
    char skipped[1024];   /* selected runs not shown: "a (RUNNING), b (MISSING)" */
} fig_out;

static void note_skip(fig_out *o, const char *id, const char *why)
{
    size_t n = strlen(o->skipped);
    if (n + strlen(id) + strlen(why) + 8 >= sizeof o->skipped) {
        if (n + 5 < sizeof o->skipped && !strstr(o->skipped, "...")) strcat(o->skipped, ", ...");
        return;
    }
    snprintf(o->skipped + n, sizeof o->skipped - n, "%s%s (%s)", n ? ", " : "", id, why);
}

/* keep_md: not NAME.md, which its writer replaces whole (a hierarchy figure's) */
static void remove_name(const char *dir, const char *name, int keep_md)
{
    static const char *const ext[] = {"dat", "gp", "png", "svg", "gnuplot.log", "md"};
    for (size_t k = 0; k < DATM_COUNTOF(ext) - (keep_md ? 1 : 0); k++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[k]);
        remove(path);
    }
}

/* The files of figure f from an earlier report, so that a figure without data now (or an
 * atoms figure of a shallower run) leaves nothing stale. Only f's own names: the folder
 * may hold other figures and other reports' files. */
static void remove_old(const char *dir, const datm_pipe_figure *f, int keep_md)
{
    remove_name(dir, f->id, keep_md);
    for (int l = 1; f->kind == DATM_PIPE_FIG_ATOMS && l <= DATM_MAX_LAYERS; l++) {
        char name[128];
        snprintf(name, sizeof name, "%s_layer%d", f->id, l);
        remove_name(dir, name, 0);
    }
}

static datm_fig_opts opts_of(const datm_pipe_figure *f)
{
    datm_fig_opts o = {0};
    o.title = f->title;
    o.xlabel = f->xlabel[0] ? f->xlabel : NULL;
    o.ylabel = f->ylabel[0] ? f->ylabel : NULL;
    o.logx = f->logx;
    o.logy = f->logy;
    o.style = DATM_FIG_LINES;
    return o;
}

/* Passes figures.h's verdict on: "no data" (DATM_E_INVALID) is an outcome, not a failure. */
static int figure_rc(int rc, fig_out *o, datm_error *e, datm_error *err)
{
    if (rc == DATM_OK) { o->made = 1; return DATM_OK; }
    if (rc == DATM_E_INVALID) {
        snprintf(o->why, sizeof o->why, "no plottable point");
        return DATM_OK;
    }
    *err = *e;
    return rc;
}

static int fig_curves(const rep_ctx *c, const datm_pipe_figure *f, const char *dir, fig_out *o,
                      datm_error *err)
{
    const datm_pipeline *p = c->p;
    datm_series *s = calloc((size_t)p->n_runs + 1, sizeof *s);
    datm_result_curves *cv = calloc((size_t)p->n_runs + 1, sizeof *cv);
    char (*label)[256] = calloc((size_t)p->n_runs + 1, sizeof *label);
    int rc = s && cv && label ? DATM_OK : datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int n = 0;
    for (int i = 0; !rc && i < p->n_runs; i++) {
        const rep_run *r = &c->runs[i];
        if (!datm_pipe_select_match(&f->select, r->run)) continue;
        if (!r->finished) { note_skip(o, r->run->id, r->status); continue; }
        datm_h5 *h = NULL;
        datm_error e = {0};
        if (datm_result_open(rep_source(c, i), 0, &h, &e) ||
            datm_result_columns_read(h, f->group, &cv[n], &e)) {
            datm_warn("figure %s: run %s: %s", f->id, r->run->id, e.msg);
            note_skip(o, r->run->id, "unreadable result");
            datm_h5_close(&h);
            continue;
        }
        datm_h5_close(&h);
        const double *x = datm_result_curves_col(&cv[n], f->x);
        const double *y = datm_result_curves_col(&cv[n], f->y);
        if (!x || !y) {
            char why[200];
            snprintf(why, sizeof why, "no /%s/%s", f->group, x ? f->y : f->x);
            note_skip(o, r->run->id, why);
            datm_result_curves_free(&cv[n]);
            continue;
        }
        rep_fill(c, i, f->series, "%.4g", label[n], sizeof label[n]);
        s[n] = (datm_series){.label = label[n], .x = x, .y = y, .n = cv[n].n_rows};
        n++;
    }
    if (!rc && !n) snprintf(o->why, sizeof o->why, "no completed run with /%s/%s and /%s/%s",
                            f->group, f->x, f->group, f->y);
    if (!rc && n) {
        datm_fig_opts fo = opts_of(f);
        datm_error e = {0};
        rc = figure_rc(datm_figure_lines(dir, f->id, &fo, s, n, &o->rendered, &e), o, &e, err);
    }
    for (int k = 0; k < n; k++) datm_result_curves_free(&cv[k]);
    free(s);
    free(cv);
    free(label);
    return rc;
}

static int fig_bars(const rep_ctx *c, const datm_pipe_figure *f, const char *dir, fig_out *o,
                    datm_error *err)
{
    const datm_pipeline *p = c->p;
    const int one_series = !strcmp(f->category, f->series);
    datm_strlist cats = {0}, sers = {0};
    int *cat_of = calloc((size_t)p->n_runs + 1, sizeof *cat_of);
    int *ser_of = calloc((size_t)p->n_runs + 1, sizeof *ser_of);
    int rc = cat_of && ser_of ? DATM_OK : datm_error_set(err, DATM_E_NOMEM, "out of memory");
    for (int i = 0; !rc && i < p->n_runs; i++) {
        cat_of[i] = ser_of[i] = -1;
        if (!datm_pipe_select_match(&f->select, c->runs[i].run)) continue;
        if (!c->runs[i].finished) note_skip(o, c->runs[i].run->id, c->runs[i].status);
        char buf[256];
        rep_fill(c, i, f->category, "%.4g", buf, sizeof buf);
        int k = 0;
        while (k < cats.n && strcmp(cats.v[k], buf)) k++;
        if (k == cats.n && datm_strlist_push(&cats, buf, err)) { rc = err->code; break; }
        cat_of[i] = k;
        if (one_series) snprintf(buf, sizeof buf, "%s", f->metric);
        else rep_fill(c, i, f->series, "%.4g", buf, sizeof buf);
        k = 0;
        while (k < sers.n && strcmp(sers.v[k], buf)) k++;
        if (k == sers.n && datm_strlist_push(&sers, buf, err)) { rc = err->code; break; }
        ser_of[i] = k;
    }
    double *y = rc ? NULL : malloc(((size_t)cats.n * sers.n + 1) * sizeof *y);
    datm_series *s = rc ? NULL : calloc((size_t)sers.n + 1, sizeof *s);
    if (!rc && (!y || !s)) rc = datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int n_bars = 0;
    for (size_t k = 0; !rc && k < (size_t)cats.n * sers.n; k++) y[k] = NAN;
    for (int i = 0; !rc && i < p->n_runs; i++) {
        double v;
        if (cat_of[i] < 0 || rep_metric(c, i, f->metric, &v) != 0) continue;
        double *cell = &y[(size_t)ser_of[i] * cats.n + cat_of[i]];
        if (!isnan(*cell)) {
            datm_warn("figure %s: run %s has the category and series of an earlier run; not "
                      "shown", f->id, p->runs[i].id);
            continue;
        }
        *cell = v;
        n_bars++;
    }
    if (!rc && !n_bars) snprintf(o->why, sizeof o->why, "no completed run with /metrics/%s",
                                 f->metric);
    if (!rc && n_bars) {
        for (int k = 0; k < sers.n; k++)
            s[k] = (datm_series){.label = sers.v[k], .y = &y[(size_t)k * cats.n], .n = cats.n};
        datm_fig_opts fo = opts_of(f);
        datm_error e = {0};
        rc = figure_rc(datm_figure_bars(dir, f->id, &fo, (const char *const *)cats.v, cats.n, s,
                                        sers.n, &o->rendered, &e), o, &e, err);
    }
    free(y);
    free(s);
    free(cat_of);
    free(ser_of);
    datm_strlist_free(&cats);
    datm_strlist_free(&sers);
    return rc;
}

static void write_md(FILE *md, const datm_pipe_figure *f, const fig_out *o)
{
    fputs("\n### ", md);
    rep_md_text(md, f->title);
    fputs("\n\n", md);
    if (o->made && o->rendered)
        fprintf(md, "![%s](figures/%s.png)\n\nData [figures/%s.dat](figures/%s.dat), script "
                    "[figures/%s.gp](figures/%s.gp), [svg](figures/%s.svg).\n",
                f->title, f->id, f->id, f->id, f->id, f->id, f->id);
    else if (o->made)
        fprintf(md, "Not rendered (gnuplot missing or failed): data "
                    "[figures/%s.dat](figures/%s.dat), script [figures/%s.gp](figures/%s.gp); "
                    "run `gnuplot %s.gp` in figures/.\n", f->id, f->id, f->id, f->id, f->id);
    else
        fprintf(md, "No figure yet: %s.\n", o->why);
    if (o->skipped[0]) {
        fputs("\nNot shown: ", md);
        rep_md_text(md, o->skipped);
        fputs(".\n", md);
    }
}

int rep_figure_first_run(const rep_ctx *c, const datm_pipe_figure *f, FILE *md)
{
    fputs("\n### ", md);
    rep_md_text(md, f->title);
    fputs("\n\n", md);
    const int r = rep_first_finished(c, f);
    if (r >= 0) return r;
    fputs("No figure yet: no selected run is COMPLETED.\n", md);
    datm_warn("figure %s: no selected run is COMPLETED", f->id);
    return -1;
}

int rep_figures(const rep_ctx *c, FILE *md, datm_error *err)
{
    const datm_pipeline *p = c->p;
    if (!p->n_figures) return DATM_OK;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/figures", c->out);
    int rc = rep_mkdir(dir, err);
    if (rc) return rc;
    fputs("## Figures\n", md);
    for (int k = 0; k < p->n_figures && !rc; k++) {
        const datm_pipe_figure *f = &p->figures[k];
        fig_out o = {0};
        /* a hierarchy's ID.md is replaced whole when it is made, and removed when not */
        const int tree = f->kind == DATM_PIPE_FIG_HIERARCHY;
        remove_old(dir, f, tree);
        c->fig_made[k] = 0;
        if (tree) {
            rc = rep_hierarchy(c, f, md, &c->fig_made[k], err);
            if (!rc && !c->fig_made[k]) remove_old(dir, f, 0);
            continue;
        }
        if (f->kind == DATM_PIPE_FIG_ATOMS) {
            rc = rep_atoms(c, f, dir, md, &c->fig_made[k], err);
            continue;
        }
        rc = f->kind == DATM_PIPE_FIG_BARS ? fig_bars(c, f, dir, &o, err)
                                            : fig_curves(c, f, dir, &o, err);
        if (!rc && !o.made) datm_warn("figure %s: %s", f->id, o.why);
        if (!rc) write_md(md, f, &o);
        c->fig_made[k] = o.made;
    }
    fputc('\n', md);
    return rc;
}
