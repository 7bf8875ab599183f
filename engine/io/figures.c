/* engine/io/figures.c: gnuplot figure writer (figures.h). The .gp script chooses pngcairo or
 * png at gnuplot run time (whichever the installed gnuplot has; gnuplot-nox 5.4 has both),
 * writes NAME.png, then NAME.svg, and reads only NAME.dat next to it, so the pair can be
 * moved and rerun anywhere. */
#include "io/figures.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- finding and running gnuplot ---- */

const char *datm_gnuplot_path(void)
{
    static char found[1024];
    const char *env = getenv("DATM_GNUPLOT");
    if (env) {
        if (!env[0] || !strcmp(env, "none")) return NULL;
        if (strchr(env, '/')) return access(env, X_OK) == 0 ? env : NULL;
    }
    const char *prog = env ? env : "gnuplot";
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0 && n < 900) {
            snprintf(found, sizeof found, "%.*s/%s", (int)n, p, prog);
            if (access(found, X_OK) == 0) return found;
        }
        p += n + (e ? 1 : 0);
    }
    return NULL;
}

/* Runs `gnuplot NAME.gp` inside dir, its output into NAME.gnuplot.log (removed on success).
 * Returns 1 when the PNG and SVG exist afterwards. */
static int run_gnuplot(const char *dir, const char *name)
{
    const char *gp = datm_gnuplot_path();
    if (!gp) {
        datm_warn("figures: gnuplot not found (set DATM_GNUPLOT or install gnuplot-nox); "
                  "kept %s/%s.dat and %s.gp", dir, name, name);
        return 0;
    }
    char script[600], logname[600];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(logname, sizeof logname, "%s.gnuplot.log", name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        datm_warn("figures: cannot start gnuplot: %s", strerror(errno));
        return 0;
    }
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        int fd = open(logname, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        execl(gp, gp, script, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    char png[1200], svg[1200], log[1200];
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    snprintf(svg, sizeof svg, "%s/%s.svg", dir, name);
    snprintf(log, sizeof log, "%s/%s", dir, logname);
    struct stat sb;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && stat(png, &sb) == 0 && sb.st_size > 0 &&
             stat(svg, &sb) == 0 && sb.st_size > 0;
    if (ok) remove(log);
    else datm_warn("figures: gnuplot failed on %s/%s.gp (see %s); kept .dat and .gp", dir, name,
                   log);
    return ok;
}

/* ---- writing ---- */

static int mkdir_p(const char *dir, datm_error *err)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return datm_error_set(err, DATM_E_IO, "%s: cannot create directory: %s", buf,
                                      strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
    return DATM_OK;
}

/* Writes a gnuplot single-quoted string ('' stands for a quote). */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; s && *s; s++) {
        if (*s == '\'') fputc('\'', f);
        if (*s == '\n') { fputc(' ', f); continue; }
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* NAME.EXT in dir, written whole (datm_afile: a temporary renamed on success, errors name
 * the path and the system error). */
static FILE *open_out(const char *dir, const char *name, const char *ext, datm_afile *a,
                      datm_error *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    if (datm_afile_open(a, path, err)) return NULL;
    return a->f;
}

static int close_out(datm_afile *a, datm_error *err)
{
    return datm_afile_commit(a, err);
}

/* The common head of every script: terminal choice, sizes, labels, axes. */
static void script_head(FILE *g, const char *name, const datm_fig_opts *o)
{
    const int w = o && o->width > 0 ? o->width : 800;
    const int h = o && o->height > 0 ? o->height : 500;
    fprintf(g, "# %s.gp: written by datm; rerun with `gnuplot %s.gp` in this directory.\n"
               "# Data: %s.dat (text). Edit freely to restyle.\n", name, name, name);
    fprintf(g, "W = %d; H = %d\n", w, h);
    fprintf(g, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "    set terminal pngcairo size W,H noenhanced font 'sans,10'\n"
               "} else {\n"
               "    set terminal png size W,H noenhanced\n"
               "}\n");
    fprintf(g, "set output '%s.png'\n", name);
    if (o && o->title) { fputs("set title ", g); put_quoted(g, o->title); fputc('\n', g); }
    if (o && o->xlabel) { fputs("set xlabel ", g); put_quoted(g, o->xlabel); fputc('\n', g); }
    if (o && o->ylabel) { fputs("set ylabel ", g); put_quoted(g, o->ylabel); fputc('\n', g); }
    if (o && o->logx) fputs("set logscale x\n", g);
    if (o && o->logy) fputs("set logscale y\nset format y '%g'\n", g);
    if (o && o->logx) fputs("set format x '%g'\n", g);
}

static void script_tail(FILE *g, const char *name)
{
    fprintf(g, "set terminal svg size W,H noenhanced dynamic\n"
               "set output '%s.svg'\n"
               "replot\n"
               "unset output\n", name);
}

static int point_ok(const datm_fig_opts *o, double x, double y)
{
    if (!isfinite(x) || !isfinite(y)) return 0;
    if (o && o->logx && x <= 0) return 0;
    if (o && o->logy && y <= 0) return 0;
    return 1;
}

static const char *style_name(datm_fig_style s)
{
    static const char *const names[] = {
        [DATM_FIG_LINES] = "lines", [DATM_FIG_LINESPOINTS] = "linespoints",
        [DATM_FIG_POINTS] = "points",
    };
    _Static_assert(DATM_COUNTOF(names) == DATM_FIG_STYLE_COUNT_, "one name per style");
    return (s >= 0 && s < DATM_FIG_STYLE_COUNT_) ? names[s] : "lines";
}

int datm_figure_lines(const char *dir, const char *name, const datm_fig_opts *o,
                      const datm_series *s, int n_series, int *rendered, datm_error *err)
{
    if (rendered) *rendered = 0;
    int rc = mkdir_p(dir, err);
    if (rc) return rc;
    /* which series have points */
    int n_plot = 0;
    for (int i = 0; i < n_series; i++) {
        int64_t c = 0;
        for (int64_t j = 0; j < s[i].n; j++) c += point_ok(o, s[i].x[j], s[i].y[j]);
        if (c) n_plot++;
    }
    if (!n_plot)
        return datm_error_set(err, DATM_E_INVALID, "figure %s/%s: no plottable point", dir,
                              name);
    datm_afile ad, ag;
    FILE *d = open_out(dir, name, "dat", &ad, err);
    if (!d) return err ? err->code : DATM_E_IO;
    fprintf(d, "# %s: one block per series (gnuplot index), columns x y\n", name);
    FILE *g = open_out(dir, name, "gp", &ag, err);
    if (!g) { datm_afile_abort(&ad); return err ? err->code : DATM_E_IO; }
    script_head(g, name, o);
    fputs("set key outside right top\nset grid\n", g);
    int block = 0;
    for (int i = 0; i < n_series; i++) {
        int64_t c = 0;
        for (int64_t j = 0; j < s[i].n; j++) c += point_ok(o, s[i].x[j], s[i].y[j]);
        if (!c) continue;
        if (block) fputs("\n\n", d);
        fprintf(d, "# series %d: %s\n", block, s[i].label ? s[i].label : "");
        for (int64_t j = 0; j < s[i].n; j++)
            if (point_ok(o, s[i].x[j], s[i].y[j]))
                fprintf(d, "%.17g %.17g\n", s[i].x[j], s[i].y[j]);
        /* gnuplot's default line types repeat their colour after 8: series 9 to 16 take the
         * same colours dashed, then dotted, so that no two series of a figure look alike */
        fprintf(g, "%s'%s.dat' index %d using 1:2 with %s lw 1.5 lc %d dt %d title ",
                block ? ", \\\n     " : "plot ", name, block,
                style_name(o ? o->style : DATM_FIG_LINES), block % 8 + 1, block / 8 % 4 + 1);
        put_quoted(g, s[i].label ? s[i].label : "");
        block++;
    }
    fputc('\n', g);
    script_tail(g, name);
    rc = close_out(&ad, err);
    int rc2 = rc ? (datm_afile_abort(&ag), rc) : close_out(&ag, err);
    if (rc || rc2) return rc ? rc : rc2;
    int r = run_gnuplot(dir, name);
    if (rendered) *rendered = r;
    return DATM_OK;
}

int datm_figure_bars(const char *dir, const char *name, const datm_fig_opts *o,
                     const char *const *categories, int n_cat, const datm_series *s,
                     int n_series, int *rendered, datm_error *err)
{
    if (rendered) *rendered = 0;
    if (n_cat <= 0 || n_series <= 0)
        return datm_error_set(err, DATM_E_INVALID, "figure %s/%s: no bars", dir, name);
    int rc = mkdir_p(dir, err);
    if (rc) return rc;
    datm_afile ad, ag;
    FILE *d = open_out(dir, name, "dat", &ad, err);
    if (!d) return err ? err->code : DATM_E_IO;
    FILE *g = open_out(dir, name, "gp", &ag, err);
    if (!g) { datm_afile_abort(&ad); return err ? err->code : DATM_E_IO; }
    /* .dat: one row per category: label, then one column per series ("NaN" = no bar) */
    fprintf(d, "# %s: category", name);
    for (int i = 0; i < n_series; i++) fprintf(d, " \"%s\"", s[i].label ? s[i].label : "");
    fputc('\n', d);
    for (int c = 0; c < n_cat; c++) {
        fputc('"', d);
        for (const char *p = categories[c]; p && *p; p++) fputc(*p == '"' ? '\'' : *p, d);
        fputc('"', d);
        for (int i = 0; i < n_series; i++) {
            double y = s[i].y[c];
            if (isfinite(y)) fprintf(d, " %.17g", y);
            else fputs(" NaN", d);
        }
        fputc('\n', d);
    }
    script_head(g, name, o);
    fputs("set style data histogram\nset style histogram clustered gap 1\n"
          "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset key outside right top\n"
          "set grid ytics\nset datafile missing 'NaN'\n", g);
    if (!(o && o->logy)) fputs("set yrange [0:*]\n", g);
    for (int i = 0; i < n_series; i++) {
        fprintf(g, "%s'%s.dat' using %d%s title ", i ? ", \\\n     " : "plot ", name, i + 2,
                i ? "" : ":xtic(1)");
        put_quoted(g, s[i].label ? s[i].label : "");
    }
    fputc('\n', g);
    script_tail(g, name);
    rc = close_out(&ad, err);
    int rc2 = rc ? (datm_afile_abort(&ag), rc) : close_out(&ag, err);
    if (rc || rc2) return rc ? rc : rc2;
    int r = run_gnuplot(dir, name);
    if (rendered) *rendered = r;
    return DATM_OK;
}

int datm_figure_image_grid(const char *dir, const char *name, const datm_fig_opts *o,
                           const float *m, int64_t V, int64_t K, int h, int w, int n_show,
                           int cols, int *rendered, datm_error *err)
{
    if (rendered) *rendered = 0;
    if (h <= 0 || w <= 0 || (int64_t)h * w != V || K <= 0)
        return datm_error_set(err, DATM_E_INVALID,
                              "figure %s/%s: %lld words do not form %d x %d images", dir, name,
                              (long long)V, h, w);
    int rc = mkdir_p(dir, err);
    if (rc) return rc;
    const int n = (int)DATM_MIN((int64_t)(n_show > 0 ? n_show : K), K);
    const int gc = cols > 0 ? DATM_MIN(cols, n) : (int)ceil(sqrt((double)n));
    const int gr = (n + gc - 1) / gc;
    /* mosaic with a one-pixel NaN border between tiles; row 0 of the file is the top row */
    const int64_t MH = (int64_t)gr * (h + 1) + 1, MW = (int64_t)gc * (w + 1) + 1;
    double *mos = datm_alloc_array((size_t)(MH * MW), sizeof *mos, err);
    if (!mos) return DATM_E_NOMEM;
    for (int64_t i = 0; i < MH * MW; i++) mos[i] = NAN;
    for (int t = 0; t < n; t++) {
        double mx = 0;
        for (int64_t v = 0; v < V; v++) mx = fmax(mx, (double)m[v * K + t]);
        const int64_t r0 = (int64_t)(t / gc) * (h + 1) + 1, c0 = (int64_t)(t % gc) * (w + 1) + 1;
        for (int64_t v = 0; v < V; v++)
            mos[(r0 + v / w) * MW + c0 + v % w] = mx > 0 ? (double)m[v * K + t] / mx : 0.0;
    }
    datm_afile ad, ag;
    FILE *d = open_out(dir, name, "dat", &ad, err);
    if (!d) { datm_free(mos); return err ? err->code : DATM_E_IO; }
    fprintf(d, "# %s: %d topics as %d x %d images in a %d x %d grid, each scaled to its max;"
               " matrix rows top to bottom, NaN = border\n", name, n, h, w, gr, gc);
    for (int64_t r = 0; r < MH; r++) {
        for (int64_t c = 0; c < MW; c++) {
            double v = mos[r * MW + c];
            if (isnan(v)) fputs(c ? " NaN" : "NaN", d);
            else fprintf(d, c ? " %.6g" : "%.6g", v);
        }
        fputc('\n', d);
    }
    datm_free(mos);
    FILE *g = open_out(dir, name, "gp", &ag, err);
    if (!g) { datm_afile_abort(&ad); return err ? err->code : DATM_E_IO; }
    datm_fig_opts oo = o ? *o : (datm_fig_opts){0};
    if (!oo.width) oo.width = (int)DATM_MIN(1200, DATM_MAX(300, MW * 8));
    if (!oo.height) oo.height = (int)DATM_MIN(1200, DATM_MAX(300, MH * 8 + 40));
    oo.logx = oo.logy = 0;
    oo.xlabel = oo.ylabel = NULL;
    script_head(g, name, &oo);
    fprintf(g, "unset key\nunset xtics\nunset ytics\nunset colorbox\nset size ratio -1\n"
               "set xrange [-0.5:%lld.5]\nset yrange [%lld.5:-0.5]\n"
               "set palette gray negative\nset cbrange [0:1]\n"
               "set datafile missing 'NaN'\n"
               "plot '%s.dat' matrix with image\n",
            (long long)MW - 1, (long long)MH - 1, name);
    script_tail(g, name);
    rc = close_out(&ad, err);
    int rc2 = rc ? (datm_afile_abort(&ag), rc) : close_out(&ag, err);
    if (rc || rc2) return rc ? rc : rc2;
    int r = run_gnuplot(dir, name);
    if (rendered) *rendered = r;
    return DATM_OK;
}

int datm_vocab_image_shape(char *const *vocab, int64_t V, int *h, int *w)
{
    if (!vocab || V <= 0) return 0;
    int maxr = -1, maxc = -1;
    for (int64_t v = 0; v < V; v++) {
        int r, c, used = 0;
        if (!vocab[v] || sscanf(vocab[v], "p_%d_%d%n", &r, &c, &used) != 2 ||
            vocab[v][used] != '\0' || r < 0 || c < 0)
            return 0;
        maxr = DATM_MAX(maxr, r);
        maxc = DATM_MAX(maxc, c);
    }
    const int64_t H = maxr + 1, W = maxc + 1;
    if (H * W != V) return 0;
    for (int64_t v = 0; v < V; v++) {   /* row-major order: word v is pixel (v / W, v % W) */
        int r, c;
        sscanf(vocab[v], "p_%d_%d", &r, &c);
        if (r != v / W || c != v % W) return 0;
    }
    *h = (int)H;
    *w = (int)W;
    return 1;
}
