/* engine/cli/cmd_check_metrics.c: `datm check-metrics RUN --baseline FILE.yaml`
 * checks the final metrics of a run against a baseline with
 * tolerances and a direction, prints a table, and exits 0 (pass), 1 (fail) or 77 (skipped:
 * the run or a metric is absent and the baseline says skip_if_missing: true).
 *
 * Baseline YAML:
 *   skip_if_missing: false        # default for every metric (optional)
 *   require_completed: true       # the run's status must be COMPLETED (optional, default)
 *   metrics:
 *     perplexity: {value: 950, rel_tol: 0.10, direction: lower}
 *     npmi_1:     {value: 0.05, abs_tol: 0.03, direction: higher, skip_if_missing: true}
 * direction lower: pass when actual <= value + tol (lower is better; only worse fails);
 * higher: actual >= value - tol; equal: |actual - value| <= tol.
 * tol = max(abs_tol, rel_tol * |value|) over the ones given (0 when neither). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/results.h"
#include "io/results_layout.h"
#include "io/yaml_flat.h"

int datm_cmd_check_metrics(int argc, char **argv);

typedef enum { DIR_LOWER = 0, DIR_HIGHER, DIR_EQUAL, DIR_COUNT_ } direction;
static const char *const dir_names[] = {[DIR_LOWER] = "lower", [DIR_HIGHER] = "higher",
                                        [DIR_EQUAL] = "equal"};
_Static_assert(DATM_COUNTOF(dir_names) == DIR_COUNT_, "one name per direction");

typedef struct check {
    char      name[128];
    double    value, abs_tol, rel_tol;
    int       has_abs, has_rel, skip_if_missing, line;
    direction dir;
} check;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: datm check-metrics RUN --baseline FILE.yaml [--format md|csv]\n\n"
        "Checks the metrics of RUN (a run directory or result.h5) against a baseline.\n"
        "Exit 0 when all pass, 1 when one fails, 77 when the run or a metric is absent and\n"
        "the baseline allows it (skip_if_missing: true), 2 on a usage or baseline error.\n\n"
        "Baseline YAML:\n"
        "  skip_if_missing: false      # default for every metric\n"
        "  require_completed: true     # the run must have status COMPLETED\n"
        "  metrics:\n"
        "    perplexity: {value: 950, rel_tol: 0.1, direction: lower}\n"
        "    npmi_1: {value: 0.05, abs_tol: 0.03, direction: higher, skip_if_missing: true}\n"
        "direction: lower (lower is better: fails only when worse than value + tol),\n"
        "higher (fails below value - tol), equal (fails when |actual - value| > tol);\n"
        "tol = max(abs_tol, rel_tol * |value|).\n");
}

static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "1")) { *out = 1; return 0; }
    if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "0")) { *out = 0; return 0; }
    return -1;
}

static int parse_real(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return (end == s || *end) ? -1 : 0;
}

/* Reads the baseline; messages name file:line and the key. */
static int load_baseline(const char *path, check **out, int *n_out, int *require_completed,
                         datm_error *err)
{
    datm_flat fl;
    int rc = datm_yaml_flatten_file(path, &fl, err);
    if (rc) return rc;
    int def_skip = 0;
    *require_completed = 1;
    check *c = calloc((size_t)fl.n + 1, sizeof *c);
    int n = 0;
    for (int64_t i = 0; i < fl.n && !rc; i++) {
        const char *k = fl.kv[i].key, *v = fl.kv[i].value;
        const int line = fl.kv[i].line;
        if (!strcmp(k, "skip_if_missing")) {
            if (parse_bool(v, &def_skip))
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: skip_if_missing: '%s' is not a boolean", path, line, v);
            continue;
        }
        if (!strcmp(k, "require_completed")) {
            if (parse_bool(v, require_completed))
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: require_completed: '%s' is not a boolean", path, line, v);
            continue;
        }
        if (strncmp(k, "metrics.", 8)) {
            /* free-form documentation keys (description, run, command, ...) are allowed */
            continue;
        }
        const char *rest = k + 8, *dot = strrchr(rest, '.');
        if (!dot || dot == rest) {
            rc = datm_error_set(err, DATM_E_FORMAT,
                                "%s:%d: metrics.%s: expected a mapping {value, abs_tol|rel_tol, direction}",
                                path, line, rest);
            break;
        }
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(dot - rest), rest);
        const char *field = dot + 1;
        int j = 0;
        while (j < n && strcmp(c[j].name, name)) j++;
        if (j == n) {
            memset(&c[n], 0, sizeof c[n]);
            snprintf(c[n].name, sizeof c[n].name, "%s", name);
            c[n].value = NAN;
            c[n].skip_if_missing = -1;
            c[n].dir = DIR_COUNT_;
            c[n].line = line;
            n++;
        }
        check *ck = &c[j];
        double x;
        if (!strcmp(field, "value")) {
            if (parse_real(v, &ck->value))
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: metrics.%s.value: '%s' is not a number", path, line, name, v);
        } else if (!strcmp(field, "abs_tol") || !strcmp(field, "rel_tol")) {
            if (parse_real(v, &x) || x < 0)
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: metrics.%s.%s: '%s' is not a number >= 0", path, line, name, field, v);
            else if (field[0] == 'a') { ck->abs_tol = x; ck->has_abs = 1; }
            else { ck->rel_tol = x; ck->has_rel = 1; }
        } else if (!strcmp(field, "direction")) {
            int d = 0;
            while (d < DIR_COUNT_ && strcmp(dir_names[d], v)) d++;
            if (d == DIR_COUNT_)
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: metrics.%s.direction: '%s' (expected lower, higher or equal)", path, line, name, v);
            ck->dir = (direction)d;
        } else if (!strcmp(field, "skip_if_missing")) {
            if (parse_bool(v, &ck->skip_if_missing))
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: metrics.%s.skip_if_missing: '%s' is not a boolean", path, line, name, v);
        } else if (strcmp(field, "note") && strcmp(field, "doc")) {
            rc = datm_error_set(err, DATM_E_FORMAT,
                                "%s:%d: metrics.%s: unknown key '%s' (known: value, abs_tol, rel_tol, direction, skip_if_missing, note)",
                                path, line, name, field);
        }
    }
    for (int j = 0; j < n && !rc; j++) {
        if (isnan(c[j].value))
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: metrics.%s: missing 'value'", path, c[j].line, c[j].name);
        else if (c[j].dir == DIR_COUNT_)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: metrics.%s: missing 'direction' (lower, higher or equal)", path, c[j].line, c[j].name);
        if (c[j].skip_if_missing < 0) c[j].skip_if_missing = def_skip;
    }
    if (!rc && n == 0) rc = datm_error_set(err, DATM_E_FORMAT, "%s: no metrics: section", path);
    datm_flat_free(&fl);
    if (rc) { free(c); return rc; }
    *out = c;
    *n_out = n;
    return DATM_OK;
}

static double tolerance(const check *c)
{
    double t = 0;
    if (c->has_abs) t = fmax(t, c->abs_tol);
    if (c->has_rel) t = fmax(t, c->rel_tol * fabs(c->value));
    return t;
}

static int passes(const check *c, double v)
{
    if (isnan(v)) return 0;
    const double tol = tolerance(c);
    switch (c->dir) {
    case DIR_LOWER: return v <= c->value + tol;
    case DIR_HIGHER: return v >= c->value - tol;
    case DIR_EQUAL: return fabs(v - c->value) <= tol;
    default: return 0;
    }
}

int datm_cmd_check_metrics(int argc, char **argv)
{
    const char *run = NULL, *baseline = NULL, *format = "md";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return DATM_EXIT_OK; }
        else if (!strcmp(argv[i], "--baseline") && i + 1 < argc) baseline = argv[++i];
        else if (!strncmp(argv[i], "--baseline=", 11)) baseline = argv[i] + 11;
        else if (!strcmp(argv[i], "--format") && i + 1 < argc) format = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "datm check-metrics: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return DATM_EXIT_USAGE;
        } else if (!run) run = argv[i];
        else {
            fprintf(stderr, "datm check-metrics: one run only (got '%s' and '%s')\n", run, argv[i]);
            return DATM_EXIT_USAGE;
        }
    }
    if (!run || !baseline) {
        fprintf(stderr, "datm check-metrics: need RUN and --baseline FILE.yaml\n");
        usage(stderr);
        return DATM_EXIT_USAGE;
    }
    const int csv = !strcmp(format, "csv");
    if (!csv && strcmp(format, "md")) {
        fprintf(stderr, "datm check-metrics: --format must be md or csv\n");
        return DATM_EXIT_USAGE;
    }
    datm_error err = {0};
    check *c = NULL;
    int n = 0, require_completed = 1;
    if (load_baseline(baseline, &c, &n, &require_completed, &err)) {
        fprintf(stderr, "datm check-metrics: %s\n", err.msg);
        return DATM_EXIT_USAGE;
    }
    /* an absent run skips only when every metric may be missing */
    int skip_all = 1;
    for (int j = 0; j < n; j++) skip_all = skip_all && c[j].skip_if_missing;

    datm_h5 *f = NULL;
    if (datm_result_open(run, 0, &f, &err)) {
        fprintf(stderr, "datm check-metrics: %s\n", err.msg);
        free(c);
        if (skip_all) {
            printf("SKIPPED: run %s is absent (skip_if_missing)\n", run);
            return DATM_EXIT_SKIP;
        }
        return DATM_EXIT_FAIL;
    }
    char status[64] = "UNKNOWN";
    if (datm_h5_attr_exists(f, DATM_ATTR_STATUS))
        datm_h5_attr_get_str(f, DATM_ATTR_STATUS, status, sizeof status, &err);
    datm_result_metrics m;
    int rc = datm_result_metrics_read(f, &m, &err);
    datm_h5_close(&f);
    if (rc) {
        fprintf(stderr, "datm check-metrics: %s\n", err.msg);
        free(c);
        return DATM_EXIT_FAIL;
    }
    int n_fail = 0, n_skip = 0, n_pass = 0;
    if (csv) printf("metric,actual,baseline,tolerance,direction,delta,result\n");
    else {
        printf("## check-metrics: %s against %s (status %s)\n\n", run, baseline, status);
        printf("| metric | actual | baseline | tolerance | direction | delta | result |\n"
               "|---|---:|---:|---:|---|---:|---|\n");
    }
    for (int j = 0; j < n; j++) {
        double v;
        const char *res;
        int have = datm_result_metrics_get(&m, c[j].name, &v) == 0;
        if (!have) {
            res = c[j].skip_if_missing ? "SKIP (missing)" : "FAIL (missing)";
            if (c[j].skip_if_missing) n_skip++; else n_fail++;
        } else if (passes(&c[j], v)) { res = "PASS"; n_pass++; }
        else { res = "FAIL"; n_fail++; }
        if (csv) {
            printf("%s,", c[j].name);
            if (have) printf("%.17g", v);
            printf(",%.17g,%.17g,%s,", c[j].value, tolerance(&c[j]), dir_names[c[j].dir]);
            if (have) printf("%.17g", v - c[j].value);
            printf(",%s\n", res);
        } else {
            printf("| %s | ", c[j].name);
            if (have) printf("%.9g", v); else printf("-");
            printf(" | %.9g | %.9g | %s | ", c[j].value, tolerance(&c[j]), dir_names[c[j].dir]);
            if (have) printf("%+.9g", v - c[j].value); else printf("-");
            printf(" | %s |\n", res);
        }
    }
    int status_ok = !require_completed || !strcmp(status, DATM_STATUS_COMPLETED);
    if (!status_ok) {
        fprintf(stderr, "datm check-metrics: run status is %s, not %s\n", status,
                DATM_STATUS_COMPLETED);
        n_fail++;
    }
    if (!csv)
        printf("\n%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
    datm_result_metrics_free(&m);
    free(c);
    if (n_fail) return DATM_EXIT_FAIL;
    if (n_skip) return DATM_EXIT_SKIP;
    return DATM_EXIT_OK;
}
