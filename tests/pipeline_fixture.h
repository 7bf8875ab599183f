/* tests/pipeline_fixture.h: pieces of a pipeline built by hand, without a pipeline file, for
 * the report tests (test_pipeline_report.c, test_pipeline_report_figs.c). Header-only; each
 * test keeps its own runs, since theirs differ (labels and overrides, key patterns). */
#ifndef DATM_TEST_PIPELINE_FIXTURE_H
#define DATM_TEST_PIPELINE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipefile.h"

/* Appends each item of the comma-separated csv to l. */
static inline void pf_push(datm_strlist *l, const char *csv)
{
    datm_error e = {0};
    char buf[512];
    snprintf(buf, sizeof buf, "%s", csv);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        datm_strlist_push(l, t, &e);
}

/* Appends to p the figure `id` of `kind` over the runs `runs` (ids or patterns, comma-
 * separated), with the pipeline file's defaults: title "Figure ID", perplexity vs iteration
 * from /curves, one series and one category per run ("{id}"). The caller sets the rest. */
static inline datm_pipe_figure *pf_add_figure(datm_pipeline *p, const char *id,
                                              datm_pipe_fig_kind kind, const char *runs)
{
    datm_pipe_figure *all = realloc(p->figures, (size_t)(p->n_figures + 1) * sizeof *all);
    if (!all) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    p->figures = all;
    datm_pipe_figure *f = &p->figures[p->n_figures++];
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s", id);
    snprintf(f->title, sizeof f->title, "Figure %s", id);
    f->kind = kind;
    pf_push(&f->select.ids, runs);
    snprintf(f->group, sizeof f->group, "curves");
    snprintf(f->x, sizeof f->x, "iteration");
    snprintf(f->y, sizeof f->y, "perplexity");
    snprintf(f->series, sizeof f->series, "{id}");
    snprintf(f->category, sizeof f->category, "{id}");
    return f;
}

#endif
