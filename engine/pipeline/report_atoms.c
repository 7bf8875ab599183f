/* engine/pipeline/report_atoms.c: the "atoms" figure of a pipeline report (report.h): the
 * dictionary atoms of one run drawn as images, one grid per layer (paper sec. IV-B, the
 * MNIST figure of each layer's atoms: points, then strokes, then parts with depth). An atom
 * of layer l is its topic projected to the pixels through Phi(1) ... Phi(l) (paper eq.
 * Phi_notation); the grid shows the `top` most used of the layer, each tile scaled to its
 * own maximum. Only a pixel vocabulary (p_<row>_<col>, engine/io/figures.h) has a picture;
 * any other run gets a "not drawable" line, not a figure. Files: figures/ID_layerL.{dat,gp,
 * png,svg}. */
#include <stdlib.h>
#include <string.h>

#include "eval/topics.h"
#include "io/figures.h"
#include "io/h5.h"
#include "io/results.h"
#include "pipeline/report_internal.h"

/* ord (K) = the topics of layer y by usage, most used first, ties (and unknown usage) by
 * index: a stable insertion sort, so the same run always gives the same grid. */
static void order_by_usage(const datm_topic_layer *y, int64_t *ord)
{
    for (int64_t k = 0; k < y->k; k++) {
        int64_t j = k;
        while (j > 0 && y->usage && y->usage[k] > y->usage[ord[j - 1]]) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = k;
    }
}

/* Grid of layer l into DIR/ID_layerL.*, its lines in md. */
static int draw_layer(const datm_pipe_figure *f, const char *dir, const datm_topic_set *ts,
                      int l, int h, int w, FILE *md, datm_error *err)
{
    const datm_topic_layer *y = &ts->layer[l - 1];
    const int64_t V = ts->n_vocab, K = y->k;
    const int n = (int)(f->top < K ? f->top : K);
    if (!y->projected) {
        fprintf(md, "- layer %d: not drawable (its %lld topics projected to %lld pixels are "
                    "too large to keep)\n", l, (long long)K, (long long)V);
        return DATM_OK;
    }
    int64_t *ord = malloc((size_t)K * sizeof *ord);
    float *m = malloc((size_t)(V * n) * sizeof *m);   /* (V, n): the chosen atoms in order */
    if (!ord || !m) {
        free(ord);
        free(m);
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    order_by_usage(y, ord);
    for (int64_t v = 0; v < V; v++)
        for (int t = 0; t < n; t++) m[v * n + t] = y->projected[v * K + ord[t]];
    /* a short title: a grid of a few small tiles is only 300 pixels wide; the figure's own
     * title heads its section of REPORT.md */
    char name[128], title[160];
    snprintf(name, sizeof name, "%s_layer%d", f->id, l);
    snprintf(title, sizeof title, "layer %d: %d of %lld atoms, most used first", l, n,
             (long long)K);
    datm_fig_opts o = {.title = title};
    int rendered = 0;
    int rc = datm_figure_image_grid(dir, name, &o, m, V, n, h, w, n, 0, &rendered, err);
    free(ord);
    free(m);
    if (rc) return rc;
    if (rendered)
        fprintf(md, "- layer %d (%d of %lld atoms): ![layer %d](figures/%s.png) data "
                    "[figures/%s.dat](figures/%s.dat), script [figures/%s.gp](figures/%s.gp), "
                    "[svg](figures/%s.svg)\n", l, n, (long long)K, l, name, name, name, name,
                name, name);
    else
        fprintf(md, "- layer %d (%d of %lld atoms): not rendered (gnuplot missing or failed): "
                    "data [figures/%s.dat](figures/%s.dat), script [figures/%s.gp](figures/%s.gp)"
                    "; run `gnuplot %s.gp` in figures/\n", l, n, (long long)K, name, name, name,
                name, name);
    return DATM_OK;
}

int rep_atoms(const rep_ctx *c, const datm_pipe_figure *f, const char *dir, FILE *md,
              int *made, datm_error *err)
{
    *made = 0;
    const int i = rep_figure_first_run(c, f, md);
    if (i < 0) return DATM_OK;
    const char *id = c->runs[i].run->id;
    datm_h5 *h5 = NULL;
    datm_error e = {0};
    char **vocab = NULL;
    int64_t V = 0;
    int h = 0, w = 0;
    int rc = datm_result_open(rep_source(c, i), 0, &h5, &e);
    if (!rc) rc = datm_result_vocab(h5, &vocab, &V, &e);
    const int image = !rc && datm_vocab_image_shape(vocab, V, &h, &w);
    datm_h5_strings_free(vocab, V);
    if (!rc && !image) {
        fprintf(md, "Not drawable: run %s's vocabulary (%lld words) is not the pixels of an "
                    "image (p_<row>_<col>), so its atoms have no picture.\n", id, (long long)V);
        datm_warn("figure %s: run %s: not drawable (no pixel vocabulary)", f->id, id);
        datm_h5_close(&h5);
        return DATM_OK;
    }
    /* the projections from the run's Phi, with /usage for the order: the same for a run
     * whose /topics were not kept (the topics stage keeps only small projections) */
    datm_topic_set ts;
    memset(&ts, 0, sizeof ts);
    if (!rc) rc = datm_topics_compute(h5, NULL, &ts, &e);
    datm_h5_close(&h5);
    if (!rc && ts.n_vocab != V) {
        rc = datm_error_set(&e, DATM_E_FORMAT, "/model/phi_1 has %lld rows for %lld words",
                            (long long)ts.n_vocab, (long long)V);
        datm_topic_set_free(&ts);
    }
    if (rc) {
        fprintf(md, "No figure yet: run %s has no topics to show (see the warning of "
                    "`datm pipeline report`).\n", id);
        datm_warn("figure %s: run %s: %s", f->id, id, e.msg);
        return DATM_OK;
    }
    fprintf(md, "Run %s: the %d most used dictionary atoms of each layer (its topics projected "
                "to the %d x %d pixels through the layers below), each scaled to its own "
                "maximum, dark = high. No number decides what they show; a person judges.\n\n",
            id, f->top, h, w);
    for (int l = 1; l <= ts.n_layers && !rc; l++) {
        rc = draw_layer(f, dir, &ts, l, h, w, md, err);
        if (!rc && ts.layer[l - 1].projected) *made = 1;
    }
    datm_topic_set_free(&ts);
    return rc;
}
