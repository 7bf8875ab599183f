/* engine/io/run_figures.c: the standard figures of one run (figures.h), made from the
 * /curves, /sample_curve, /topics and /data of its result.h5: perplexity vs iteration, vs
 * wall time and (final evaluation) vs the number of collected samples,
 * training loss, per-layer KL, per-layer mean step size eps/M_k (paper Fig. "adaptive
 * stepsize"), and projected topics as image grids for pixel vocabularies. */
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/figures.h"
#include "io/results.h"
#include "io/results_layout.h"

/* x and every y column named in ys[] (NULL-terminated) or matching fmt (per layer). */
static int curve_fig(const char *dir, const char *name, const datm_result_curves *c, const char *xcol,
                     const char *xlabel, const char *const *ys, const char *fmt,
                     const char *title, const char *ylabel, int logy, int *made,
                     datm_error *err)
{
    const double *x = datm_result_curves_col(c, xcol);
    if (!x || c->n_rows == 0) return DATM_OK;
    datm_series s[DATM_MAX_LAYERS + 4];
    char labels[DATM_MAX_LAYERS][32];
    int n = 0;
    for (int i = 0; ys && ys[i]; i++) {
        const double *y = datm_result_curves_col(c, ys[i]);
        /* perplexity curves get the protocol's words for the two scored parts */
        const char *label = !strcmp(ys[i], DATM_CURVE_PERPLEXITY)       ? "held-out words"
                            : !strcmp(ys[i], DATM_CURVE_PERPLEXITY_OBS) ? "observed words"
                                                                         : ys[i];
        if (y) s[n++] = (datm_series){label, x, y, c->n_rows};
    }
    for (int l = 1; fmt && l <= DATM_MAX_LAYERS; l++) {
        char col[32];
        snprintf(col, sizeof col, fmt, l);
        const double *y = datm_result_curves_col(c, col);
        if (!y) continue;
        /* a model without this quantity writes zeros (or NaN): no line for it */
        int any = 0;
        for (int64_t i = 0; i < c->n_rows; i++) any |= isfinite(y[i]) && y[i] != 0;
        if (!any) continue;
        snprintf(labels[l - 1], sizeof labels[l - 1], "layer %d", l);
        s[n++] = (datm_series){labels[l - 1], x, y, c->n_rows};
    }
    if (!n) return DATM_OK;
    datm_fig_opts o = {.title = title, .xlabel = xlabel, .ylabel = ylabel, .logy = logy,
                       .style = c->n_rows <= 30 ? DATM_FIG_LINESPOINTS : DATM_FIG_LINES};
    datm_error e2 = {0};
    int rc = datm_figure_lines(dir, name, &o, s, n, NULL, &e2);
    if (rc == DATM_E_INVALID) return DATM_OK;   /* nothing finite to draw: skip the figure */
    if (rc) { if (err) *err = e2; return rc; }
    (*made)++;
    return DATM_OK;
}

int datm_figures_for_result(const char *result_path, const char *out_dir, int *n_made,
                            datm_error *err)
{
    int made = 0;
    if (n_made) *n_made = 0;
    datm_h5 *f = NULL;
    int rc = datm_h5_open(result_path, 0, &f, err);
    if (rc) return rc;
    /* a title prefix: the run directory's name */
    char tmp[PATH_MAX], run[256];
    if (!realpath(result_path, tmp)) snprintf(tmp, sizeof tmp, "%s", result_path);
    snprintf(run, sizeof run, "%s", basename(dirname(tmp)));

    datm_result_curves c;
    rc = datm_result_curves_read(f, &c, err);
    if (!rc) {
        char t[400];
        static const char *const ppl[] = {DATM_CURVE_PERPLEXITY, DATM_CURVE_PERPLEXITY_OBS, NULL};
        static const char *const loss[] = {DATM_CURVE_LOSS, NULL};
        snprintf(t, sizeof t, "%s: per-word perplexity of the evaluation documents", run);
        rc = curve_fig(out_dir, "perplexity_vs_iteration", &c, DATM_CURVE_ITERATION,
                       "iteration (mini-batches)", ppl, NULL, t, "perplexity", 0, &made, err);
        if (!rc)
            rc = curve_fig(out_dir, "perplexity_vs_time", &c, DATM_CURVE_WALL_S,
                           "wall time (s)", ppl, NULL, t, "perplexity", 0, &made, err);
        snprintf(t, sizeof t, "%s: training loss per document", run);
        if (!rc)
            rc = curve_fig(out_dir, "loss", &c, DATM_CURVE_ITERATION, "iteration (mini-batches)",
                           loss, NULL, t, "loss", 0, &made, err);
        snprintf(t, sizeof t, "%s: KL per document, per layer", run);
        if (!rc)
            rc = curve_fig(out_dir, "kl_layers", &c, DATM_CURVE_ITERATION,
                           "iteration (mini-batches)", NULL, DATM_CURVE_KL_FMT, t, "KL", 0, &made,
                           err);
        snprintf(t, sizeof t, "%s: mean effective step size eps/M_k per layer", run);
        if (!rc)
            rc = curve_fig(out_dir, "step_size", &c, DATM_CURVE_ITERATION,
                           "iteration (mini-batches)", NULL, DATM_CURVE_STEP_FMT, t, "eps / M_k",
                           1, &made, err);
        datm_result_curves_free(&c);
    }

    /* the final evaluation as its draws accumulate (sample averaging, paper eq. perplexity) */
    if (!rc) rc = datm_result_columns_read(f, DATM_GRP_SAMPLE_CURVE, &c, err);
    if (!rc) {
        char t[400];
        static const char *const ppl[] = {DATM_CURVE_PERPLEXITY, DATM_CURVE_PERPLEXITY_OBS, NULL};
        snprintf(t, sizeof t, "%s: final evaluation, perplexity after n collected samples", run);
        rc = curve_fig(out_dir, "perplexity_vs_samples", &c, "samples",
                       "collected samples S", ppl, NULL, t, "perplexity", 0, &made, err);
        datm_result_curves_free(&c);
    }

    /* image grids of the projected topics for pixel vocabularies */
    if (!rc && datm_h5_is_group(f, DATM_GRP_TOPICS) == 1) {
        char **vocab = NULL;
        int64_t V = 0;
        int h = 0, w = 0;
        rc = datm_result_vocab(f, &vocab, &V, err);
        if (!rc && datm_vocab_image_shape(vocab, V, &h, &w)) {
            datm_topic_set ts;
            rc = datm_topics_read(f, &ts, err);
            for (int l = 1; !rc && l <= ts.n_layers; l++) {
                const datm_topic_layer *t = &ts.layer[l - 1];
                if (!t->projected || ts.n_vocab != V) continue;
                char name[64], title[sizeof run + 96];   /* run, the words and two numbers */
                snprintf(name, sizeof name, "topics_layer_%d", l);
                snprintf(title, sizeof title, "%s: layer %d topics projected to pixels (%lld)",
                         run, l, (long long)t->k);
                datm_fig_opts o = {.title = title};
                rc = datm_figure_image_grid(out_dir, name, &o, t->projected, V, t->k, h, w, 64,
                                            0, NULL, err);
                if (!rc) made++;
            }
            datm_topic_set_free(&ts);   /* also when a grid failed to draw */
        }
        datm_h5_strings_free(vocab, V);
    }
    datm_h5_close(&f);
    if (n_made) *n_made = made;
    return rc;
}

int datm_figures_stage(const char *run_dir, const char *result_path, datm_error *err)
{
    char out[1024];
    snprintf(out, sizeof out, "%s/figures", run_dir);
    int made = 0;
    int rc = datm_figures_for_result(result_path, out, &made, err);
    if (!rc) datm_info("figures: %d figure(s) in %s", made, out);
    return rc;
}

int datm_figures_for_run(const char *run_dir, datm_error *err)
{
    char path[1024];
    int rc = datm_result_path(run_dir, path, sizeof path, err);
    if (rc) return rc;
    char tmp[1024];   /* RUN may name the result file itself: figures go beside it */
    snprintf(tmp, sizeof tmp, "%s", path);
    return datm_figures_stage(dirname(tmp), path, err);
}
