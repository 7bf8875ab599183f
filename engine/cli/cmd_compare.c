/* engine/cli/cmd_compare.c: `datm compare RUN... [--format md|csv|json] [--all] [--plot OUT]`
 * the spec parameters that differ between runs and every final
 * metric, with deltas against the first run; --plot draws all runs' curves in one figure.
 *
 * Built on the public API (include/datm.h): each run's record (status, the resolved spec as
 * dotted keys, /metrics, /curves) comes from datm_open, which opens runs that have not
 * finished or have no model too. This file parses arguments, lines the runs up and formats
 * (writers in cli_write.c, figures in io/figures.h). */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "datm.h"
#include "io/figures.h"

int datm_cmd_compare(int argc, char **argv);

typedef struct run_info {
    const char   *arg;          /* as given */
    char          label[256];
    datm_trained *m;
} run_info;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm compare RUN... [--format md|csv|json] [--all] [--plot OUT]\n"
        "                    [--metric NAME] [--by KEY] [--group KEY]\n\n"
        "Compares runs (run directories or result.h5 files): the spec parameters that differ\n"
        "(all of them with --all; output.dir only then) and every metric under /metrics, with the delta of each run\n"
        "against the first one.\n\n"
        "  --format md|csv|json  output format (default md); csv has one row per run\n"
        "  --all                 list every parameter, not only the changed ones\n"
        "  --plot OUT            also draw the curves of all runs in one figure each:\n"
        "                        OUT.png (perplexity vs iteration), OUT_time.png (vs wall\n"
        "                        time), OUT_loss.png (training loss), each with .dat/.gp/.svg\n");
}

/* label: the run directory's name (or the file's, for a bare result file) */
static void set_label(run_info *r)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", r->arg);
    const char *base = basename(tmp);
    if (strcmp(base, "result.h5") && strcmp(base, "result.h5.part")) {
        snprintf(r->label, sizeof r->label, "%s", base);
        return;
    }
    snprintf(tmp, sizeof tmp, "%s", r->arg);
    snprintf(r->label, sizeof r->label, "%s", basename(dirname(tmp)));
}

/* a list of unique strings in first-seen order */
typedef struct strlist { char **s; int n, cap; } strlist;
static void sl_add(strlist *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->s[i], s)) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->s = realloc(l->s, (size_t)l->cap * sizeof *l->s);
        if (!l->s) { fprintf(stderr, "datm compare: out of memory\n"); exit(DATM_EXIT_FAIL); }
    }
    l->s[l->n++] = strdup(s);
}
static void sl_free(strlist *l)
{
    for (int i = 0; i < l->n; i++) free(l->s[i]);
    free(l->s);
}

static int metric_of(const run_info *r, const char *name, double *v)
{
    return datm_metric(r->m, name, v) == 0;
}

static const char *param_of(const run_info *r, const char *key)
{
    return datm_param(r->m, key);
}

static void print_md(run_info *runs, int n, const strlist *keys, const strlist *mets, int all)
{
    printf("## Parameters (%s)\n\n", all ? "all" : "changed");
    if (!keys->n) {
        printf("%s\n\n", n > 1 ? "No parameter differs between the runs." : "No parameters.");
    } else {
        printf("| parameter |");
        for (int r = 0; r < n; r++) { printf(" "); datm_cli_md_str(stdout, runs[r].label); printf(" |"); }
        printf("\n|---|");
        for (int r = 0; r < n; r++) printf("---|");
        printf("\n");
        for (int k = 0; k < keys->n; k++) {
            printf("| ");
            datm_cli_md_str(stdout, keys->s[k]);
            printf(" |");
            for (int r = 0; r < n; r++) {
                const char *v = param_of(&runs[r], keys->s[k]);
                printf(" ");
                datm_cli_md_str(stdout, v ? v : "-");
                printf(" |");
            }
            printf("\n");
        }
        printf("\n");
    }
    printf("## Metrics (delta against %s)\n\n", runs[0].label);
    printf("| metric |");
    for (int r = 0; r < n; r++) { printf(" "); datm_cli_md_str(stdout, runs[r].label); printf(" |"); }
    printf("\n|---|");
    for (int r = 0; r < n; r++) printf("---:|");
    printf("\n| status |");
    for (int r = 0; r < n; r++) printf(" %s |", datm_run_state(runs[r].m));
    printf("\n");
    for (int m = 0; m < mets->n; m++) {
        printf("| ");
        datm_cli_md_str(stdout, mets->s[m]);
        printf(" |");
        double base = NAN;
        int have0 = metric_of(&runs[0], mets->s[m], &base);
        for (int r = 0; r < n; r++) {
            double v;
            if (!metric_of(&runs[r], mets->s[m], &v)) { printf(" - |"); continue; }
            printf(" %.9g", v);
            if (r > 0 && have0 && isfinite(v) && isfinite(base)) {
                double d = v - base;
                printf(" (%+.9g", d);
                if (base != 0) printf(", %+.3g%%", 100.0 * d / fabs(base));
                printf(")");
            }
            printf(" |");
        }
        printf("\n");
    }
}

static void print_csv(run_info *runs, int n, const strlist *keys, const strlist *mets)
{
    printf("run,status");
    for (int k = 0; k < keys->n; k++) { printf(","); datm_csv_field(stdout, keys->s[k]); }
    for (int m = 0; m < mets->n; m++) { printf(","); datm_csv_field(stdout, mets->s[m]); }
    for (int m = 0; m < mets->n; m++) { printf(",delta_"); datm_csv_field(stdout, mets->s[m]); }
    printf("\n");
    for (int r = 0; r < n; r++) {
        datm_csv_field(stdout, runs[r].label);
        printf(",%s", datm_run_state(runs[r].m));
        for (int k = 0; k < keys->n; k++) {
            const char *v = param_of(&runs[r], keys->s[k]);
            printf(",");
            if (v) datm_csv_field(stdout, v);
        }
        for (int m = 0; m < mets->n; m++) {
            double v;
            printf(",");
            if (metric_of(&runs[r], mets->s[m], &v)) printf("%.17g", v);
        }
        for (int m = 0; m < mets->n; m++) {
            double v, b;
            printf(",");
            if (metric_of(&runs[r], mets->s[m], &v) && metric_of(&runs[0], mets->s[m], &b))
                printf("%.17g", v - b);
        }
        printf("\n");
    }
}

static void print_json(run_info *runs, int n, const strlist *keys, const strlist *mets)
{
    printf("{\n  \"baseline\": ");
    datm_json_string(stdout, runs[0].label);
    printf(",\n  \"parameters\": [");
    for (int k = 0; k < keys->n; k++) { printf(k ? ", " : ""); datm_json_string(stdout, keys->s[k]); }
    printf("],\n  \"metrics\": [");
    for (int m = 0; m < mets->n; m++) { printf(m ? ", " : ""); datm_json_string(stdout, mets->s[m]); }
    printf("],\n  \"runs\": [\n");
    for (int r = 0; r < n; r++) {
        printf("    {\"run\": ");
        datm_json_string(stdout, runs[r].label);
        printf(", \"path\": ");
        datm_json_string(stdout, runs[r].arg);
        printf(", \"status\": ");
        datm_json_string(stdout, datm_run_state(runs[r].m));
        printf(",\n     \"params\": {");
        int first = 1;
        for (int k = 0; k < keys->n; k++) {
            const char *v = param_of(&runs[r], keys->s[k]);
            if (!v) continue;
            printf(first ? "" : ", ");
            first = 0;
            datm_json_string(stdout, keys->s[k]);
            printf(": ");
            datm_json_string(stdout, v);
        }
        printf("},\n     \"metrics\": {");
        first = 1;
        for (int m = 0; m < mets->n; m++) {
            double v;
            if (!metric_of(&runs[r], mets->s[m], &v)) continue;
            printf(first ? "" : ", ");
            first = 0;
            datm_json_string(stdout, mets->s[m]);
            printf(": ");
            datm_cli_json_num(stdout, v, 17);
        }
        printf("},\n     \"delta\": {");
        first = 1;
        for (int m = 0; m < mets->n; m++) {
            double v, b;
            if (!metric_of(&runs[r], mets->s[m], &v) || !metric_of(&runs[0], mets->s[m], &b))
                continue;
            printf(first ? "" : ", ");
            first = 0;
            datm_json_string(stdout, mets->s[m]);
            printf(": ");
            datm_cli_json_num(stdout, v - b, 17);
        }
        printf("}}%s\n", r + 1 < n ? "," : "");
    }
    printf("  ]\n}\n");
}

/* One figure of curve `ycol` vs `xcol` with one series per run; 1 when written. */
static int plot_one(run_info *runs, int n, const char *dir, const char *name, const char *xcol,
                    const char *ycol, const char *xlabel, const char *ylabel, const char *title)
{
    datm_series *s = calloc((size_t)n, sizeof *s);
    int k = 0;
    for (int r = 0; r < n; r++) {
        int64_t nx = 0, ny = 0;
        const double *x = datm_curve(runs[r].m, xcol, &nx);
        const double *y = datm_curve(runs[r].m, ycol, &ny);
        if (!x || !y) continue;
        s[k++] = (datm_series){runs[r].label, x, y, nx < ny ? nx : ny};
    }
    int ok = 0;
    if (k) {
        datm_fig_opts o = {.title = title, .xlabel = xlabel, .ylabel = ylabel,
                           .style = DATM_FIG_LINESPOINTS};
        datm_error err = {0};
        int rc = datm_figure_lines(dir, name, &o, s, k, NULL, &err);
        if (rc && rc != DATM_E_INVALID) fprintf(stderr, "datm compare: %s\n", err.msg);
        ok = rc == DATM_OK;
        if (ok) fprintf(stderr, "datm compare: wrote %s/%s.{dat,gp,png,svg}\n", dir, name);
    }
    free(s);
    return ok;
}

/* Grouped bars of `metric`: categories = values of `by` (run labels when NULL), one series
 * per value of `group` (a single series when NULL); runs sharing a cell are averaged.
 * Returns 1 when written. */
static int plot_bars(run_info *runs, int n, const char *dir, const char *stem,
                     const char *metric, const char *by, const char *group)
{
    strlist cats = {0}, grps = {0};
    for (int r = 0; r < n; r++) {
        const char *c = by ? param_of(&runs[r], by) : runs[r].label;
        const char *g = group ? param_of(&runs[r], group) : metric;
        sl_add(&cats, c ? c : "-");
        sl_add(&grps, g ? g : "-");
    }
    double *sum = calloc((size_t)(cats.n * grps.n), sizeof *sum);
    int *cnt = calloc((size_t)(cats.n * grps.n), sizeof *cnt);
    for (int r = 0; r < n; r++) {
        double v;
        if (!metric_of(&runs[r], metric, &v) || !isfinite(v)) continue;
        const char *c = by ? param_of(&runs[r], by) : runs[r].label;
        const char *g = group ? param_of(&runs[r], group) : metric;
        int ci = 0, gi = 0;
        while (strcmp(cats.s[ci], c ? c : "-")) ci++;
        while (strcmp(grps.s[gi], g ? g : "-")) gi++;
        sum[gi * cats.n + ci] += v;
        cnt[gi * cats.n + ci]++;
    }
    datm_series *s = calloc((size_t)grps.n, sizeof *s);
    double *y = calloc((size_t)(cats.n * grps.n), sizeof *y);
    char (*labels)[160] = calloc((size_t)grps.n, sizeof *labels);
    int any = 0;
    for (int gi = 0; gi < grps.n; gi++) {
        for (int ci = 0; ci < cats.n; ci++) {
            int k = gi * cats.n + ci;
            y[k] = cnt[k] ? sum[k] / cnt[k] : NAN;
            any |= cnt[k] > 0;
        }
        if (group) snprintf(labels[gi], sizeof labels[gi], "%s = %s", group, grps.s[gi]);
        else snprintf(labels[gi], sizeof labels[gi], "%s", metric);
        s[gi] = (datm_series){labels[gi], NULL, y + gi * cats.n, cats.n};
    }
    int ok = 0;
    if (any) {
        char name[600], title[400];
        snprintf(name, sizeof name, "%s_%s", stem, metric);
        snprintf(title, sizeof title, "%s by %s", metric, by ? by : "run");
        datm_fig_opts o = {.title = title, .xlabel = by ? by : "run", .ylabel = metric};
        datm_error err = {0};
        if (datm_figure_bars(dir, name, &o, (const char *const *)cats.s, cats.n, s, grps.n,
                             NULL, &err) == DATM_OK) {
            ok = 1;
            fprintf(stderr, "datm compare: wrote %s/%s.{dat,gp,png,svg}\n", dir, name);
        } else {
            fprintf(stderr, "datm compare: %s\n", err.msg);
        }
    }
    free(labels);
    free(y);
    free(s);
    free(sum);
    free(cnt);
    sl_free(&cats);
    sl_free(&grps);
    return ok;
}

int datm_cmd_compare(int argc, char **argv)
{
    const char *format = "md", *plot = NULL, *bar_metric = NULL, *by = NULL, *group = NULL;
    int all = 0;
    const char **args = calloc((size_t)argc + 1, sizeof *args);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); free(args); return DATM_EXIT_OK; }
        else if (!strcmp(argv[i], "--format") && i + 1 < argc) format = argv[++i];
        else if (!strncmp(argv[i], "--format=", 9)) format = argv[i] + 9;
        else if (!strcmp(argv[i], "--md")) format = "md";
        else if (!strcmp(argv[i], "--csv")) format = "csv";
        else if (!strcmp(argv[i], "--json")) format = "json";
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (!strcmp(argv[i], "--plot") && i + 1 < argc) plot = argv[++i];
        else if (!strncmp(argv[i], "--plot=", 7)) plot = argv[i] + 7;
        else if (!strcmp(argv[i], "--metric") && i + 1 < argc) bar_metric = argv[++i];
        else if (!strcmp(argv[i], "--by") && i + 1 < argc) by = argv[++i];
        else if (!strcmp(argv[i], "--group") && i + 1 < argc) group = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "datm compare: unknown option '%s'\n", argv[i]);
            usage(stderr);
            free(args);
            return DATM_EXIT_USAGE;
        } else args[n++] = argv[i];
    }
    if (strcmp(format, "md") && strcmp(format, "csv") && strcmp(format, "json")) {
        fprintf(stderr, "datm compare: --format must be md, csv or json (got '%s')\n", format);
        free(args);
        return DATM_EXIT_USAGE;
    }
    if (n < 1) {
        fprintf(stderr, "datm compare: give at least one run\n");
        usage(stderr);
        free(args);
        return DATM_EXIT_USAGE;
    }
    run_info *runs = calloc((size_t)n, sizeof *runs);
    int rc = DATM_EXIT_OK;
    for (int i = 0; i < n; i++) {
        datm_error err = {0};
        runs[i].arg = args[i];
        set_label(&runs[i]);
        if (datm_open(args[i], &runs[i].m, &err)) {
            fprintf(stderr, "datm compare: %s\n", err.msg);
            rc = DATM_EXIT_FAIL;
        }
    }
    if (rc == DATM_EXIT_OK) {
        /* the same directory name twice (e.g. a/run b/run): label by the path given */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i != j && !strcmp(runs[i].label, runs[j].label))
                    snprintf(runs[i].label, sizeof runs[i].label, "%s", runs[i].arg);
        strlist keys = {0}, mets = {0}, changed = {0};
        for (int i = 0; i < n; i++) {
            const char *name;
            for (int k = 0; (name = datm_param_name(runs[i].m, k)); k++) sl_add(&keys, name);
            for (int m = 0; (name = datm_metric_name(runs[i].m, m)); m++) sl_add(&mets, name);
        }
        /* where a run was written differs by construction: not a parameter worth a column */
        static const char *const ignored[] = {"output.dir", NULL};
        for (int k = 0; k < keys.n; k++) {
            int skip = 0;
            for (int j = 0; ignored[j]; j++) skip |= !strcmp(keys.s[k], ignored[j]);
            if (skip && !all) continue;
            const char *v0 = param_of(&runs[0], keys.s[k]);
            int differs = 0;
            for (int i = 1; i < n && !differs; i++) {
                const char *v = param_of(&runs[i], keys.s[k]);
                differs = (!v0 != !v) || (v && strcmp(v, v0));
            }
            if (differs || all) sl_add(&changed, keys.s[k]);
        }
        if (!strcmp(format, "md")) print_md(runs, n, &changed, &mets, all);
        else if (!strcmp(format, "csv")) print_csv(runs, n, &changed, &mets);
        else print_json(runs, n, &changed, &mets);
        if (plot) {
            char t1[1024], t2[1024], name[512], dir[1024];
            snprintf(t1, sizeof t1, "%s", plot);
            snprintf(t2, sizeof t2, "%s", plot);
            snprintf(dir, sizeof dir, "%s", dirname(t1));
            const char *stem = basename(t2);
            int made = 0;
            snprintf(name, sizeof name, "%s", stem);
            made += plot_one(runs, n, dir, name, "iteration", "perplexity",
                             "iteration (mini-batches)", "perplexity", "held-out perplexity");
            snprintf(name, sizeof name, "%s_time", stem);
            made += plot_one(runs, n, dir, name, "wall_s", "perplexity",
                             "wall time (s)", "perplexity", "held-out perplexity");
            snprintf(name, sizeof name, "%s_loss", stem);
            made += plot_one(runs, n, dir, name, "iteration", "loss",
                             "iteration (mini-batches)", "loss", "training loss per document");
            /* grouped bars of a final metric, e.g. error vs depth (by) and width (group) */
            const char *bm = bar_metric;
            double tmpv;
            for (int r = 0; !bm && r < n; r++)
                if (metric_of(&runs[r], "error_rate", &tmpv)) bm = "error_rate";
            if (!bm) bm = "perplexity";
            const char *bk = by;
            for (int k = 0; !bk && k < changed.n; k++)
                if (!group || strcmp(changed.s[k], group)) bk = changed.s[k];
            if (n > 1) made += plot_bars(runs, n, dir, stem, bm, bk, group);
            if (!made) {
                fprintf(stderr, "datm compare: --plot: no run has curves or metrics to draw\n");
                rc = DATM_EXIT_FAIL;
            }
        }
        sl_free(&keys);
        sl_free(&mets);
        sl_free(&changed);
    }
    for (int i = 0; i < n; i++) datm_close(runs[i].m);
    free(runs);
    free(args);
    return rc;
}
