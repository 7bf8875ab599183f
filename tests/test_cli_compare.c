/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_io */
/* tests/test_cli_compare.c: the result-reading subcommands of the `datm` binary ($DATM_BIN)
 * on fixture results written with the engine's own h5 functions.
 * - compare: md shows only the changed parameters and deltas against the first run; csv has
 *   a header and one row per run whose numbers parse back to the stored metrics and deltas;
 *   json carries the same numbers (NaN as null); --plot writes .dat/.gp (+ .png); a missing
 *   run exits 1, a bad --format 2; the spec is read from spec.resolved.yaml when the result
 *   has no spec attribute;
 * - check-metrics: pass 0, fail 1 (per direction lower/higher/equal, abs and rel tolerance),
 *   missing metric 1 or 77 with skip_if_missing, missing run 77/1, status RUNNING 1, a
 *   malformed baseline 2 with file:line;
 * - topics: layers, NPMI/diversity lines, the link tree, --layer/--top;
 * - figures: `datm figures RUN` writes RUN/figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "result_fixture.h"
#include "test_check.h"


static const char *bin;
static char root[256];
static char out[1 << 16];

/* Runs `datm ARGS` (shell words), stdout into out; returns the exit code. */
static int datm(const char *args)
{
    char cmd[2048], path[400];
    snprintf(path, sizeof path, "%s/stdout.txt", root);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s > '%s'", root, bin, args, path);
    int st = system(cmd);
    char *s = fixture_slurp(path);
    snprintf(out, sizeof out, "%s", s ? s : "");
    free(s);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *name, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", root, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

static const char *spec_a =
    "name: quick\nseed: 1\ndata:\n  dataset: digits\nmodel:\n  variant: whai\n  layers: [16, 8]\n"
    "train:\n  epochs: 3\n  lr: 0.001\n";
static const char *spec_b =
    "name: quick\nseed: 1\ndata:\n  dataset: digits\nmodel:\n  variant: whai\n  layers: [32]\n"
    "train:\n  epochs: 3\n  lr: 0.01\n";

static void test_compare(void)
{
    const int w2[2] = {6, 3};
    fixture_run a = {.spec = spec_a, .n_metrics = 3,
                     .metric_names = {"perplexity", "train_s", "error_rate"},
                     .metric_values = {800, 10, 0.25}, .n_rows = 8, .ppl0 = 1000,
                     .n_layers = 2, .img = 6, .widths = w2};
    fixture_run b = {.spec = spec_b, .n_metrics = 3,
                     .metric_names = {"perplexity", "train_s", "test_s_per_doc"},
                     .metric_values = {760, 12.5, 0.001}, .n_rows = 5, .ppl0 = 900};
    /* c: no spec attribute; the spec comes from spec.resolved.yaml */
    fixture_run c = {.n_metrics = 1, .metric_names = {"perplexity"}, .metric_values = {NAN}};
    char d[400];
    snprintf(d, sizeof d, "%s/run_a", root);
    fixture_write(d, &a);
    snprintf(d, sizeof d, "%s/run_b", root);
    fixture_write(d, &b);
    snprintf(d, sizeof d, "%s/run_c", root);
    fixture_write(d, &c);
    write_file("run_c/spec.resolved.yaml", spec_a);

    CHECK(datm("compare run_a run_b") == 0);
    CHECK(strstr(out, "| model.layers | [16, 8] | [32] |") != NULL);
    CHECK(strstr(out, "| train.lr | 0.001 | 0.01 |") != NULL);
    CHECK(strstr(out, "data.dataset") == NULL && strstr(out, "train.epochs") == NULL);
    CHECK(strstr(out, "| perplexity | 800 | 760 (-40, -5%) |") != NULL);
    CHECK(strstr(out, "| train_s | 10 | 12.5 (+2.5, +25%) |") != NULL);
    CHECK(strstr(out, "| error_rate | 0.25 | - |") != NULL);
    if (fails) fprintf(stderr, "%s", out);

    CHECK(datm("compare run_a run_b --all") == 0 && strstr(out, "| train.epochs | 3 | 3 |"));

    /* csv: header + one row per run */
    CHECK(datm("compare run_a run_b run_c --format csv") == 0);
    char *line = strtok(out, "\n");
    /* metrics in /metrics name order (the fixture's topics add diversity_1, diversity_2) */
    CHECK(line && !strcmp(line, "run,status,model.layers,train.lr,diversity_1,diversity_2,error_rate,"
                                "perplexity,train_s,test_s_per_doc,delta_diversity_1,"
                                "delta_diversity_2,delta_error_rate,delta_perplexity,delta_train_s,"
                                "delta_test_s_per_doc"));
    int rows = 0;
    char *rowv[3] = {0};
    while ((line = strtok(NULL, "\n")) && rows < 3) rowv[rows++] = line;
    CHECK(rows == 3 && !strtok(NULL, "\n"));
    if (rows == 3) {
        /* diversity of the fixture: 6 topics x 25 words over 36 pixels */
        CHECK(!strncmp(rowv[0], "run_a,COMPLETED,\"[16, 8]\",0.001,", 32));
        CHECK(strstr(rowv[0], ",0.25,800,10,,0,0,0,0,0,") != NULL);
        CHECK(!strcmp(rowv[1], "run_b,COMPLETED,[32],0.01,,,,760,12.5,0.001,,,,-40,2.5,"));
        CHECK(!strcmp(rowv[2], "run_c,COMPLETED,\"[16, 8]\",0.001,,,,nan,,,,,,nan,,"));
    }

    CHECK(datm("compare run_a run_b run_c --format json") == 0);
    CHECK(strstr(out, "\"baseline\": \"run_a\"") && strstr(out, "\"parameters\": [\"model.layers\", \"train.lr\"]"));
    CHECK(strstr(out, "\"metrics\": {\"perplexity\": 760, \"train_s\": 12.5, \"test_s_per_doc\": 0.001}"));
    CHECK(strstr(out, "\"delta\": {\"perplexity\": -40, \"train_s\": 2.5}"));
    CHECK(strstr(out, "\"metrics\": {\"perplexity\": null}"));

    CHECK(datm("compare run_a run_b --plot cmp/ppl") == 0);
    char p[600];
    snprintf(p, sizeof p, "%s/cmp/ppl.dat", root);
    CHECK(fixture_exists(p));
    snprintf(p, sizeof p, "%s/cmp/ppl_time.gp", root);
    CHECK(fixture_exists(p));
    snprintf(p, sizeof p, "%s/cmp/ppl.dat", root);
    char *dat = fixture_slurp(p);
    CHECK(dat && strstr(dat, "# series 0: run_a") && strstr(dat, "# series 1: run_b"));
    free(dat);
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        snprintf(p, sizeof p, "%s/cmp/ppl_loss.png", root);
        CHECK(fixture_exists(p));
    }

    CHECK(datm("compare run_a no_such_run") == 1);
    CHECK(datm("compare run_a --format xml") == 2);
    CHECK(datm("compare") == 2);
    CHECK(datm("compare --help") == 0 && strstr(out, "usage: datm compare"));
}

/* error vs depth (by) and width (group), runs of the same cell averaged */
static void test_compare_bars(void)
{
    static const char *specs[5] = {
        "seed: 1\nmodel:\n  layers: [16]\n  hidden: 32\n",
        "seed: 2\nmodel:\n  layers: [16]\n  hidden: 32\n",
        "seed: 1\nmodel:\n  layers: [16, 8]\n  hidden: 32\n",
        "seed: 1\nmodel:\n  layers: [16]\n  hidden: 64\n",
        "seed: 1\nmodel:\n  layers: [16, 8]\n  hidden: 64\n",
    };
    const double err_rate[5] = {0.30, 0.20, 0.22, 0.21, 0.18};
    char runs[600] = "", d[400];
    for (int i = 0; i < 5; i++) {
        fixture_run r = {.spec = specs[i], .n_metrics = 1, .metric_names = {"error_rate"},
                         .metric_values = {err_rate[i]}};
        snprintf(d, sizeof d, "%s/bar_%d", root, i);
        fixture_write(d, &r);
        snprintf(runs + strlen(runs), sizeof runs - strlen(runs), " bar_%d", i);
    }
    char args[800];
    snprintf(args, sizeof args, "compare%s --plot bars/b --by model.layers --group model.hidden", runs);
    CHECK(datm(args) == 0);
    char p[600];
    snprintf(p, sizeof p, "%s/bars/b_error_rate.dat", root);
    char *dat = fixture_slurp(p);
    /* rows: [16] -> hidden 32: mean(0.30, 0.20) = 0.25, hidden 64: 0.21; [16, 8] -> 0.22, 0.18 */
    CHECK(dat && strstr(dat, "\"model.hidden = 32\" \"model.hidden = 64\""));
    CHECK(dat && strstr(dat, "\"[16]\" 0.25 0.20999999999999999\n"));
    CHECK(dat && strstr(dat, "\"[16, 8]\" 0.22 0.17999999999999999\n"));
    if (dat && fails) fprintf(stderr, "%s", dat);
    free(dat);
}

static void test_check_metrics(void)
{
    /* run_a: perplexity 800, train_s 10, error_rate 0.25 */
    write_file("pass.yaml",
               "description: all within tolerance\n"
               "metrics:\n"
               "  perplexity: {value: 780, rel_tol: 0.05, direction: lower}\n"   /* 800 <= 819 */
               "  error_rate: {value: 0.3, abs_tol: 0.01, direction: lower}\n"   /* better */
               "  train_s:\n    value: 10.5\n    abs_tol: 0.5\n    direction: equal\n");
    CHECK(datm("check-metrics run_a --baseline pass.yaml") == 0);
    CHECK(strstr(out, "| perplexity | 800 | 780 | 39 | lower | +20 | PASS |") != NULL);
    CHECK(strstr(out, "3 passed, 0 failed, 0 skipped"));
    write_file("fail_lower.yaml", "metrics:\n  perplexity: {value: 780, rel_tol: 0.02, direction: lower}\n");
    CHECK(datm("check-metrics run_a --baseline fail_lower.yaml") == 1 && strstr(out, "| FAIL |"));
    write_file("fail_higher.yaml", "metrics:\n  error_rate: {value: 0.3, abs_tol: 0.04, direction: higher}\n");
    CHECK(datm("check-metrics run_a --baseline fail_higher.yaml") == 1);
    write_file("pass_higher.yaml", "metrics:\n  error_rate: {value: 0.3, abs_tol: 0.05, direction: higher}\n");
    CHECK(datm("check-metrics run_a --baseline pass_higher.yaml") == 0);
    write_file("fail_equal.yaml", "metrics:\n  train_s: {value: 9, rel_tol: 0.1, direction: equal}\n");
    CHECK(datm("check-metrics run_a --baseline fail_equal.yaml") == 1);   /* |10-9| > 0.9 */
    write_file("missing.yaml", "metrics:\n  perplexity: {value: 900, rel_tol: 0, direction: lower}\n"
                               "  npmi_1: {value: 0.1, abs_tol: 0.1, direction: higher}\n");
    CHECK(datm("check-metrics run_a --baseline missing.yaml") == 1 && strstr(out, "FAIL (missing)"));
    write_file("skip.yaml", "skip_if_missing: true\n"
                            "metrics:\n  perplexity: {value: 900, rel_tol: 0, direction: lower}\n"
                            "  npmi_1: {value: 0.1, abs_tol: 0.1, direction: higher}\n");
    CHECK(datm("check-metrics run_a --baseline skip.yaml") == 77 && strstr(out, "SKIP (missing)"));
    CHECK(datm("check-metrics no_such_run --baseline skip.yaml") == 77);
    CHECK(datm("check-metrics no_such_run --baseline pass.yaml") == 1);
    /* a failure wins over a skip */
    write_file("skipfail.yaml", "metrics:\n  perplexity: {value: 700, rel_tol: 0, direction: lower}\n"
                                "  npmi_1: {value: 0.1, abs_tol: 0.1, direction: higher, skip_if_missing: true}\n");
    CHECK(datm("check-metrics run_a --baseline skipfail.yaml") == 1);
    /* NaN metric fails */
    write_file("nan.yaml", "metrics:\n  perplexity: {value: 700, rel_tol: 1, direction: lower}\n");
    CHECK(datm("check-metrics run_c --baseline nan.yaml") == 1);
    /* an unfinished run fails unless the baseline allows it */
    fixture_run r = {.status = "RUNNING", .n_metrics = 1, .metric_names = {"perplexity"},
                     .metric_values = {700}};
    char d[400];
    snprintf(d, sizeof d, "%s/run_r", root);
    fixture_write(d, &r);
    CHECK(datm("check-metrics run_r --baseline nan.yaml") == 1);
    write_file("incomplete_ok.yaml", "require_completed: false\n"
                                     "metrics:\n  perplexity: {value: 700, rel_tol: 0, direction: equal}\n");
    CHECK(datm("check-metrics run_r --baseline incomplete_ok.yaml") == 0);
    /* malformed baselines: usage error naming file:line and key */
    write_file("bad1.yaml", "metrics:\n  perplexity: {value: 700, rel_tol: 1, direction: down}\n");
    CHECK(datm("check-metrics run_a --baseline bad1.yaml 2> bad.txt") == 2);
    char p[600];
    snprintf(p, sizeof p, "%s/bad.txt", root);
    char *msg = fixture_slurp(p);
    CHECK(msg && strstr(msg, "bad1.yaml:2: metrics.perplexity.direction: 'down'"));
    free(msg);
    write_file("bad2.yaml", "metrics:\n  perplexity:\n    value: 700\n    tolerance: 3\n    direction: lower\n");
    CHECK(datm("check-metrics run_a --baseline bad2.yaml 2> bad.txt") == 2);
    msg = fixture_slurp(p);
    CHECK(msg && strstr(msg, "bad2.yaml:4: metrics.perplexity: unknown key 'tolerance'"));
    free(msg);
    write_file("bad3.yaml", "metrics:\n  perplexity: {rel_tol: 1, direction: lower}\n");
    CHECK(datm("check-metrics run_a --baseline bad3.yaml") == 2);
    write_file("bad4.yaml", "metrics: [1, 2\n");
    CHECK(datm("check-metrics run_a --baseline bad4.yaml") == 2);
    CHECK(datm("check-metrics run_a") == 2);
    CHECK(datm("check-metrics run_a --baseline pass.yaml --format csv") == 0 &&
          strstr(out, "perplexity,800,780,39,lower,20,PASS"));
}

static void test_topics_and_figures(void)
{
    CHECK(datm("topics run_a") == 0);
    CHECK(strstr(out, "## layer 1: 6 topics") && strstr(out, "## layer 2: 3 topics"));
    CHECK(strstr(out, "## links from layer 2 down"));
    /* fixture: layer-1 topic 0 lights image row 0, so its words are p_0_* */
    CHECK(strstr(out, "L2.t0:") && strstr(out, "  L1.t"));
    char *t0 = strstr(out, "\nt0 ");
    CHECK(t0 && strstr(t0, "p_0_") && strstr(t0, "p_0_") < strchr(t0 + 1, '\n'));
    CHECK(datm("topics run_a --layer 1 --top 3 --no-tree") == 0);
    CHECK(!strstr(out, "## layer 2") && !strstr(out, "links from"));
    char *l = strstr(out, "\nt5 ");
    CHECK(l != NULL);
    if (l) {   /* three words, all of image row 5 */
        char buf[256];
        sscanf(l + 1, "%255[^\n]", buf);
        int words = 0;
        for (char *s = strstr(buf, "p_5_"); s; s = strstr(s + 1, "p_5_")) words++;
        CHECK(words == 3 && !strstr(buf, "p_4_"));
    }
    CHECK(datm("topics run_a --layer 3") == 2);
    CHECK(datm("topics run_b") == 1);   /* no model, no topics */

    CHECK(datm("figures run_a") == 0);
    char p[600];
    snprintf(p, sizeof p, "%s/run_a/figures/perplexity_vs_iteration.gp", root);
    CHECK(fixture_exists(p));
    snprintf(p, sizeof p, "%s/run_a/figures/topics_layer_1.dat", root);
    CHECK(fixture_exists(p));
    CHECK(datm("figures no_such_run") == 1);
}

int main(void)
{
    bin = getenv("DATM_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        printf("skipped: DATM_BIN (%s) is not an executable datm\n", bin ? bin : "unset");
        return 77;
    }
    snprintf(root, sizeof root, "/tmp/datm_test_cli_compare_%d", (int)getpid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", root);
    if (system(cmd) != 0) return 1;
    setenv("DATM_GNUPLOT", "", 0);   /* keep whatever the environment says */
    unsetenv("DATM_GNUPLOT");
    test_compare();
    test_compare_bars();
    test_check_metrics();
    test_topics_and_figures();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (!fails && !getenv("DATM_TEST_KEEP") && system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", root);
    if (fails) { fprintf(stderr, "%d check(s) failed (files in %s)\n", fails, root); return 1; }
    printf("test_cli_compare: ok\n");
    return 0;
}
