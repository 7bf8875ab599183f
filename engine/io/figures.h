/* engine/io/figures.h: figures through gnuplot. Every figure NAME is written as
 * DIR/NAME.dat (the numbers, text) and DIR/NAME.gp (the script, kept so anyone can restyle
 * and rerun `gnuplot NAME.gp` inside DIR), then gnuplot is run to make DIR/NAME.png
 * (pngcairo when the installed gnuplot has it, else png) and DIR/NAME.svg.
 *
 * gnuplot is found at run time: $DATM_GNUPLOT if set (a path, or "" / "none" to disable),
 * else `gnuplot` on PATH. When it is missing or fails, a warning is logged, the .dat and .gp
 * stay, and the call still succeeds (*rendered, when asked for, tells which happened). */
#ifndef DATM_FIGURES_H
#define DATM_FIGURES_H

#include <stdint.h>

#include "core/core.h"

typedef enum {
    DATM_FIG_LINES = 0,
    DATM_FIG_LINESPOINTS,
    DATM_FIG_POINTS,
    DATM_FIG_STYLE_COUNT_
} datm_fig_style;

typedef struct datm_fig_opts {
    const char *title;
    const char *xlabel, *ylabel;
    int  logx, logy;        /* log-scale axes (non-positive values are dropped) */
    datm_fig_style style;
    int  width, height;     /* pixels; 0 = 800 x 500 */
} datm_fig_opts;

/* One curve: (x[i], y[i]) for i < n; non-finite points are skipped. */
typedef struct datm_series {
    const char   *label;    /* legend entry */
    const double *x;        /* (n) */
    const double *y;        /* (n) */
    int64_t       n;
} datm_series;

/* Path of the gnuplot program, or NULL when unavailable (see above). */
const char *datm_gnuplot_path(void);

/* Line plot of several series in one figure. Fails (DATM_E_INVALID) when no series has a
 * plottable point. rendered (may be NULL) = 1 when PNG and SVG were made. */
int datm_figure_lines(const char *dir, const char *name, const datm_fig_opts *o,
                      const datm_series *s, int n_series, int *rendered, datm_error *err);

/* Grouped bars: categories (n_cat) along x, one bar per series in each group; series i
 * gives y (n_cat) in s[i].y (s[i].x ignored; NaN = no bar). */
int datm_figure_bars(const char *dir, const char *name, const datm_fig_opts *o,
                     const char *const *categories, int n_cat, const datm_series *s,
                     int n_series, int *rendered, datm_error *err);

/* Image grid: column k of m (V, K) (row-major) is shown as an h x w image (V = h * w,
 * pixel v at row v / w, column v % w), each tile scaled to its own maximum, at most
 * n_show tiles in rows of `cols` tiles. */
int datm_figure_image_grid(const char *dir, const char *name, const datm_fig_opts *o,
                           const float *m, int64_t V, int64_t K, int h, int w, int n_show,
                           int cols, int *rendered, datm_error *err);

/* Image shape from a vocabulary of pixel names "p_<row>_<col>" (mnist, digits): 1 and
 * (*h, *w) when every word is such a name and V = h * w in row-major order, else 0. */
int datm_vocab_image_shape(char *const *vocab, int64_t V, int *h, int *w);

/* The standard figures of one run, made from RUN_DIR/result.h5 (or result.h5.part) into
 * RUN_DIR/figures/: perplexity vs iteration and vs wall time, training loss, per-layer KL,
 * per-layer mean step size eps/M_k, and image grids of the projected topics of each layer
 * for image data. Figures whose data are absent are skipped. *n_made (may be NULL) counts
 * the figures written (.dat/.gp). */
int datm_figures_for_run(const char *run_dir, datm_error *err);
int datm_figures_for_result(const char *result_path, const char *out_dir, int *n_made,
                            datm_error *err);
/* The same with the signature of datm_stage_hook (pipeline.h): figures into RUN_DIR/figures
 * from result_path. */
int datm_figures_stage(const char *run_dir, const char *result_path, datm_error *err);

#endif
