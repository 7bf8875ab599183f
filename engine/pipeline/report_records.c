/* engine/pipeline/report_records.c: the run records a report writes (pipefile.h, record.c):
 * for every finished run, OUT/records/<id>.h5 with what this report reads of the run — its
 * /metrics and /curves, the groups its curves figures draw, the datasets its tables show
 * (`dataset:/path`), the topic tree of a hierarchy figure and the Phi matrices of an atoms
 * figure. A run read from its record keeps that record (it is the run's only copy here). */
#include <string.h>

#include "io/results_layout.h"
#include "pipeline/report_internal.h"

const char *rep_source(const rep_ctx *c, int i)
{
    const datm_pipe_state *s = c->runs[i].st;
    return s->status == DATM_PIPE_RECORDED ? s->record : s->dir;
}

int rep_first_finished(const rep_ctx *c, const datm_pipe_figure *f)
{
    for (int r = 0; r < c->p->n_runs; r++)
        if (datm_pipe_select_match(&f->select, c->runs[r].run) && c->runs[r].finished) return r;
    return -1;
}

/* Pushes s onto l unless it is there already. */
static int push_once(datm_strlist *l, const char *s, datm_error *err)
{
    for (int k = 0; k < l->n; k++)
        if (!strcmp(l->v[k], s)) return DATM_OK;
    return datm_strlist_push(l, s, err);
}

/* The datasets of run i that the tables show: "dataset:/path[FROM:]" -> "/path". */
static int table_datasets(const rep_ctx *c, int i, datm_record_parts *w, datm_error *err)
{
    int rc = DATM_OK;
    for (int t = 0; t < c->p->n_tables && !rc; t++) {
        const datm_pipe_table *tb = &c->p->tables[t];
        if (!datm_pipe_select_match(&tb->select, c->runs[i].run)) continue;
        for (int k = 0; k < tb->n_values && !rc; k++) {
            const char *m = tb->values[k].metric;
            if (tb->values[k].ref[0] || tb->values[k].text[0] || strncmp(m, "dataset:", 8))
                continue;
            char path[128];
            snprintf(path, sizeof path, "%s", m + 8);
            path[strcspn(path, "[")] = '\0';
            rc = push_once(&w->datasets, path, err);
        }
    }
    return rc;
}

/* What the figures read of run i: curve groups; the topics or Phi of the run a hierarchy or
 * atoms figure draws. */
static int figure_parts(const rep_ctx *c, int i, datm_record_parts *w, datm_error *err)
{
    int rc = DATM_OK;
    for (int k = 0; k < c->p->n_figures && !rc; k++) {
        const datm_pipe_figure *f = &c->p->figures[k];
        if (!datm_pipe_select_match(&f->select, c->runs[i].run)) continue;
        if (f->kind == DATM_PIPE_FIG_CURVES) rc = push_once(&w->groups, f->group, err);
        else if (f->kind == DATM_PIPE_FIG_HIERARCHY && rep_first_finished(c, f) == i) w->topics = 1;
        else if (f->kind == DATM_PIPE_FIG_ATOMS && rep_first_finished(c, f) == i) w->phi = 1;
    }
    return rc;
}

/* The parts of run i's record. /curves always: a curves figure added to the pipeline file
 * later draws from the records too. */
static int record_parts(const rep_ctx *c, int i, datm_record_parts *w, datm_error *err)
{
    int rc = push_once(&w->groups, DATM_GRP_METRICS, err);
    if (!rc) rc = push_once(&w->groups, DATM_GRP_CURVES, err);
    if (!rc) rc = figure_parts(c, i, w, err);
    if (!rc) rc = table_datasets(c, i, w, err);
    return rc;
}

int rep_records(const rep_ctx *c, datm_error *err)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", c->out, DATM_RECORD_DIR);
    int rc = DATM_OK, made = 0;
    for (int i = 0; i < c->p->n_runs && !rc; i++) {
        const rep_run *r = &c->runs[i];
        if (!r->finished) continue;
        char path[1400];
        datm_record_path(c->out, r->run->id, path, sizeof path);
        if (!strcmp(rep_source(c, i), path)) continue;   /* read from this very record */
        if (!made) rc = rep_mkdir(dir, err);
        made = 1;
        datm_record_parts w = {0};
        if (!rc) rc = record_parts(c, i, &w, err);
        datm_error e = {0};
        /* like an unreadable result, a run whose record cannot be made is a warning: the
         * rest of the report still stands (an unwritable OUT fails the report elsewhere) */
        if (!rc && datm_record_write(rep_source(c, i), path, r->st->key, &w, &e) != DATM_OK)
            datm_warn("report: run %s: %s", r->run->id, e.msg);
        datm_record_parts_free(&w);
    }
    return rc;
}
