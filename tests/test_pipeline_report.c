/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_pipeline_report.c: the pipeline report (engine/pipeline/report*.c) over a
 * pipeline built by hand and small result.h5 files (tests/result_fixture.h):
 * - runs table: status of finished, running, missing and unreadable runs, the cache key
 *   cut to 12 hex, the spec relative to the pipeline file, overrides, train_s, a finished
 *   run's id linked to its record; runs.csv with labels and every metric
 * - run records: OUT/records/<id>.h5 for every finished run (none for the others), with the
 *   run's key as pipeline_key and its /metrics
 * - tables in long and pivot form (one and two values per column group), reference values
 *   beside ours (a number and a text), a label column, text templates with integers, a
 *   result.h5 dataset joined by "-" (dataset:/model/inferred_layers[1:]);
 *   missing values as "-" (md, csv) and null (json); full precision in csv/json
 * - figures: the .dat of overlaid curves (NaN rows dropped) and of grouped bars; the topic
 *   tree of a run (top topics, children by Phi weight, top words) in REPORT.md and ID.md; a
 *   figure without data says so in REPORT.md and leaves no stale file
 * - claims: reproduced / not reproduced / not evaluable, forall and exists, tolerance,
 *   informative claims outside --strict, three-valued logic over a running run; the
 *   summary; claims.md / claims.json
 * - determinism: two reports of the same runs are byte-identical, records too (and a second
 *   report directory gives the same REPORT.md, tables, claims and figure data); no absolute
 *   path, no .tmp left
 * - datm_pipe_claim_check: syntax errors with the claim's position and column, unknown
 *   runs with a did-you-mean; a report with a bad claim fails naming it; an unwritable
 *   report directory fails */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/topics.h"
#include "io/h5.h"
#include "pipeline/report.h"
#include "pipeline_fixture.h"
#include "result_fixture.h"
#include "test_check.h"

#define S(x) ((x) ? (x) : "(null)")

static char base[256];
static datm_pipeline P;
static datm_pipe_state ST[16];

/* A run with labels "k=v;k=v" and a state. */
static void add_run(const char *id, const char *labels, datm_pipe_status status,
                    const char *overrides)
{
    P.runs = realloc(P.runs, (size_t)(P.n_runs + 1) * sizeof *P.runs);
    datm_pipe_run *r = &P.runs[P.n_runs];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->spec, sizeof r->spec, "%s/pipe/specs/%s.yaml", base, id);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", labels);
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(t, '=');
        *eq = '\0';
        snprintf(r->label_key[r->n_labels], 64, "%s", t);
        snprintf(r->label_val[r->n_labels], 256, "%s", eq + 1);
        r->n_labels++;
    }
    if (overrides) pf_push(&r->overrides, overrides);
    r->selected = 1;
    datm_pipe_state *s = &ST[P.n_runs];
    memset(s, 0, sizeof *s);
    for (int k = 0; k < 64; k++) s->key[k] = "0123456789abcdef"[(P.n_runs * 7 + k) % 16];
    snprintf(s->dir, sizeof s->dir, "%s/cache/%s", base, id);
    s->status = status;
    snprintf(s->result, sizeof s->result, "%s", status == DATM_PIPE_DONE ? "COMPLETED" : "MISSING");
    P.n_runs++;
}

static void add_ref(const char *run, const char *metric, const char *text)
{
    P.refs = realloc(P.refs, (size_t)(P.n_refs + 1) * sizeof *P.refs);
    datm_pipe_ref *f = &P.refs[P.n_refs++];
    memset(f, 0, sizeof *f);
    snprintf(f->source, sizeof f->source, "paper");
    snprintf(f->run, sizeof f->run, "%s", run);
    snprintf(f->metric, sizeof f->metric, "%s", metric);
    snprintf(f->text, sizeof f->text, "%s", text);
    char *end;
    double v = strtod(text, &end);
    f->value = *end ? NAN : v;
}

static datm_pipe_table *add_table(const char *id, const char *runs, const char *rows,
                                  const char *columns_by, int n_values)
{
    P.tables = realloc(P.tables, (size_t)(P.n_tables + 1) * sizeof *P.tables);
    datm_pipe_table *t = &P.tables[P.n_tables++];
    memset(t, 0, sizeof *t);
    snprintf(t->id, sizeof t->id, "%s", id);
    snprintf(t->title, sizeof t->title, "Table %s", id);
    if (runs) pf_push(&t->select.ids, runs);
    pf_push(&t->rows, rows);
    if (columns_by) pf_push(&t->columns_by, columns_by);
    t->values = calloc((size_t)n_values, sizeof *t->values);
    t->n_values = n_values;
    t->md = t->csv = t->json = 1;
    snprintf(t->where, sizeof t->where, "demo.yaml:%d:3", 40 + P.n_tables);
    return t;
}

static void column(datm_pipe_column *c, const char *label, const char *metric, const char *ref,
                   const char *text, const char *format)
{
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->metric, sizeof c->metric, "%s", metric ? metric : "");
    snprintf(c->ref, sizeof c->ref, "%s", ref ? ref : "");
    snprintf(c->text, sizeof c->text, "%s", text ? text : "");
    snprintf(c->format, sizeof c->format, "%s", format ? format : "%.4g");
}

static datm_pipe_figure *add_figure(const char *id, datm_pipe_fig_kind kind, const char *runs)
{
    datm_pipe_figure *f = pf_add_figure(&P, id, kind, runs);
    if (kind == DATM_PIPE_FIG_CURVES) snprintf(f->xlabel, sizeof f->xlabel, "iteration");
    snprintf(f->ylabel, sizeof f->ylabel, "perplexity");
    return f;
}

static datm_pipe_claim *add_claim(const char *id, const char *expr, const char *axis,
                                  const char *values, int exists, double rel_tol,
                                  int informative)
{
    P.claims = realloc(P.claims, (size_t)(P.n_claims + 1) * sizeof *P.claims);
    datm_pipe_claim *c = &P.claims[P.n_claims++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->text, sizeof c->text, "The claim %s", id);
    snprintf(c->expr, sizeof c->expr, "%s", expr);
    if (axis) {
        c->n_axes = 1;
        snprintf(c->axis[0], sizeof c->axis[0], "%s", axis);
        pf_push(&c->axis_values[0], values);
    }
    c->exists = exists;
    c->rel_tol = rel_tol;
    c->informative = informative;
    snprintf(c->where, sizeof c->where, "demo.yaml:%d:3", 80 + P.n_claims);
    return c;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

static void result(const char *id, int n, const char *const *names, const double *values,
                   int n_rows, double ppl0)
{
    fixture_run r = {.n_metrics = n, .n_rows = n_rows, .ppl0 = ppl0};
    for (int k = 0; k < n; k++) {
        r.metric_names[k] = names[k];
        r.metric_values[k] = values[k];
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cache/%s", base, id);
    CHECK(fixture_write(dir, &r) == 0, "fixture %s", id);
}

/* The pipeline and its runs. */
static void build(void)
{
    char path[600];
    snprintf(path, sizeof path, "mkdir -p '%s/pipe/specs' '%s/cache/broken'", base, base);
    CHECK(system(path) == 0, "mkdir");
    snprintf(P.path, sizeof P.path, "%s/pipe/demo.yaml", base);
    write_file(P.path, "# the pipeline file (contents unused: the test builds the struct)\n");
    snprintf(P.name, sizeof P.name, "demo");
    snprintf(P.description, sizeof P.description, "A test pipeline | with a bar.");
    snprintf(P.profile, sizeof P.profile, "quick");
    add_run("whai_128", "variant=whai;layers=128", DATM_PIPE_DONE, "train.epochs=2");
    add_run("whai_128-64", "variant=whai;layers=128-64", DATM_PIPE_CACHED, NULL);
    add_run("wai_128", "variant=wai;layers=128", DATM_PIPE_DONE, NULL);
    add_run("wai_128-64", "variant=wai;layers=128-64", DATM_PIPE_RUNNING, NULL);
    add_run("lone", "", DATM_PIPE_PENDING, NULL);
    add_run("broken", "variant=x;layers=1", DATM_PIPE_DONE, NULL);   /* no result.h5 */
    for (int i = 0; i < P.n_runs; i++) write_file(P.runs[i].spec, "name: x\n");
    {
        const char *n[] = {"perplexity", "train_s", "k_1", "test_s_per_doc"};
        const double v[] = {825.04, 12.5, 128, 0.25};
        result("whai_128", 4, n, v, 4, 900);
    }
    {
        const char *n[] = {"perplexity", "train_s", "k_1", "k_2"};
        const double v[] = {800.5, 20.25, 128, 64};
        result("whai_128-64", 4, n, v, 3, 1000);
    }
    {
        const char *n[] = {"perplexity", "npmi_1"};
        const double v[] = {843.1, NAN};
        result("wai_128", 2, n, v, 0, 0);
    }
    {   /* a running run has a result file with numbers; they must not count */
        const char *n[] = {"perplexity"};
        const double v[] = {1.0};
        result("wai_128-64", 1, n, v, 2, 5);
    }
    {   /* a dataset outside /metrics for a "dataset:" column (layer-wise: inferred widths) */
        char path[700];
        snprintf(path, sizeof path, "%s/cache/whai_128/result.h5", base);
        datm_h5 *h = NULL;
        datm_error e = {0};
        const int64_t w[4] = {2000, 121, 110, 84}, n = 4;
        CHECK(datm_h5_open(path, 1, &h, &e) == 0 &&
              datm_h5_write_i64(h, "/model/inferred_layers", w, 1, &n, &e) == 0,
              "inferred_layers: %s", e.msg);
        datm_h5_close(&h);
    }
    {   /* /topics and /data/vocab of a two-layer model for a "hierarchy" figure */
        char path[700];
        snprintf(path, sizeof path, "%s/cache/whai_128-64/result.h5", base);
        const float phi1[6 * 3] = {0.5f, 0.025f, 0.025f, 0.4f, 0.025f, 0.025f,
                                   0.025f, 0.5f, 0.025f, 0.025f, 0.4f, 0.025f,
                                   0.025f, 0.025f, 0.5f, 0.025f, 0.025f, 0.4f};
        const float phi2[3 * 2] = {0.7f, 0.1f, 0.2f, 0.3f, 0.1f, 0.6f};
        const float *const phi[2] = {phi1, phi2};
        const int64_t k[3] = {6, 3, 2};
        const char *const words[6] = {"w0", "w1", "w2", "w3", "w4", "w5"};
        datm_topic_set ts;
        datm_h5 *h = NULL;
        datm_error e = {0};
        CHECK(datm_topic_set_build(2, phi, k, 5, 2, 0, &ts, &e) == 0 &&
              datm_h5_open(path, 1, &h, &e) == 0 && datm_topics_write(h, &ts, &e) == 0 &&
              datm_h5_write_strings(h, "data/vocab", words, 6, &e) == 0, "topics: %s", e.msg);
        datm_h5_close(&h);
        datm_topic_set_free(&ts);
    }
    add_ref("whai_128", "perplexity", "591");
    add_ref("whai_128-64", "perplexity", "n/a");

    datm_pipe_table *t = add_table("long", "wha*,wai*", "variant,layers", NULL, 6);
    column(&t->values[0], "perplexity", "perplexity", NULL, NULL, "%.1f");
    column(&t->values[1], "paper", "perplexity", "paper", NULL, NULL);
    column(&t->values[2], "widths", NULL, NULL, "{k_1}-{k_2}", NULL);
    column(&t->values[3], "variant", "label:variant", NULL, NULL, NULL);
    column(&t->values[4], "ppl text", NULL, NULL, "{id}: {perplexity}", "%.2f");
    column(&t->values[5], "structure", "dataset:/model/inferred_layers[1:]", NULL, NULL, NULL);
    snprintf(t->note, sizeof t->note, "Perplexity on held-out words; lower is better.");
    t = add_table("pivot", NULL, "variant", "layers", 1);
    column(&t->values[0], "perplexity", "perplexity", NULL, NULL, "%.1f");
    t->select.n_where = 0;
    pf_push(&t->select.ids, "wha*,wai*");
    t->json = 0;
    t = add_table("pivot2", "whai*", "variant", "layers", 2);
    column(&t->values[0], "ours", "perplexity", NULL, NULL, "%.1f");
    column(&t->values[1], "paper", "perplexity", "paper", NULL, NULL);
    t->csv = 0;

    add_figure("curves", DATM_PIPE_FIG_CURVES, "whai*,wai_128-64");
    datm_pipe_figure *f = add_figure("bars", DATM_PIPE_FIG_BARS, "wha*,wai*");
    snprintf(f->metric, sizeof f->metric, "perplexity");
    snprintf(f->category, sizeof f->category, "{layers}");
    snprintf(f->series, sizeof f->series, "{variant}");
    add_figure("nodata", DATM_PIPE_FIG_CURVES, "wai_128-64");
    f = add_figure("onebars", DATM_PIPE_FIG_BARS, "whai*");
    snprintf(f->metric, sizeof f->metric, "train_s");
    f = add_figure("tree", DATM_PIPE_FIG_HIERARCHY, "whai_128-64");
    f->top = 2;
    f->links = 2;
    f->words = 2;
    add_figure("notree", DATM_PIPE_FIG_HIERARCHY, "whai_128");   /* no /topics */

    add_claim("deeper", "whai_{layers}.perplexity <= wai_{layers}.perplexity", "layers",
              "128,128-64", 0, 0, 0);                                        /* NE */
    add_claim("depth_helps", "whai_128-64.perplexity < whai_128.perplexity", NULL, NULL, 0, 0, 0);
    add_claim("wai_best", "wai_128.perplexity < whai_128.perplexity", NULL, NULL, 0, 0.01, 0);
    add_claim("wai_best_info", "wai_128.perplexity < whai_128.perplexity", NULL, NULL, 0, 0.01, 1);
    add_claim("wai_low", "wai_{layers}.perplexity < 800", "layers", "128,128-64", 0, 0, 0);
    add_claim("some_low", "whai_{layers}.perplexity < 810", "layers", "128,128-64", 1, 0, 0);
    add_claim("within_3pct", "wai_128.perplexity < whai_128.perplexity", NULL, NULL, 0, 0.03, 0);
    add_claim("lone_runs", "lone.perplexity > 0", NULL, NULL, 0, 0, 0);
    add_claim("nan_metric", "wai_128.npmi_1 > 0 or wai_128.perplexity > 1", NULL, NULL, 0, 0, 0);
}

static char *slurp2(const char *dir, const char *rel)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return fixture_slurp(path);
}

static int has_line(const char *text, const char *line)
{
    const size_t n = strlen(line);
    for (const char *q = text; q && (q = strstr(q, line)); q++)
        if ((q == text || q[-1] == '\n') && (q[n] == '\n' || q[n] == '\0')) return 1;
    return 0;
}

#define CHECK_LINE(text, line) \
    CHECK(has_line(text, line), "missing line '%s' in:\n%s", line, S(text))

static const char *const files[] = {
    "REPORT.md", "runs.csv", "claims.md", "claims.json", "tables/long.md", "tables/long.csv",
    "tables/long.json", "tables/pivot.md", "tables/pivot.csv", "tables/pivot2.md",
    "tables/pivot2.json", "figures/curves.dat", "figures/curves.gp", "figures/bars.dat",
    "figures/bars.gp", "figures/onebars.dat", "figures/tree.md",
};

static void check_report(const char *out)
{
    char *md = slurp2(out, "REPORT.md");
    CHECK(md != NULL, "REPORT.md");
    if (!md) return;
    CHECK(!strstr(md, base), "REPORT.md holds an absolute path");
    CHECK_LINE(md, "# demo");
    CHECK_LINE(md, "A test pipeline | with a bar.");
    CHECK_LINE(md, "- pipeline file: `../pipe/demo.yaml`");
    CHECK_LINE(md, "- profile: `quick`");
    CHECK_LINE(md, "- runs: 6 (3 COMPLETED, 1 RUNNING, 1 MISSING, 1 UNREADABLE)");
    CHECK_LINE(md, "- claims: 4 reproduced, 3 not reproduced, 2 not evaluable");
    /* runs table */
    char line[512];
    snprintf(line, sizeof line, "| [whai_128](records/whai_128.h5) | COMPLETED | `%.12s` | "
             "specs/whai_128.yaml | `train.epochs=2` | 12.5 |", ST[0].key);
    CHECK_LINE(md, line);
    snprintf(line, sizeof line, "| [whai_128-64](records/whai_128-64.h5) | COMPLETED | `%.12s` | "
             "specs/whai_128-64.yaml | | 20.2 |", ST[1].key);
    CHECK_LINE(md, line);
    snprintf(line, sizeof line, "| wai_128-64 | RUNNING | `%.12s` | specs/wai_128-64.yaml | | - |",
             ST[3].key);
    CHECK_LINE(md, line);
    snprintf(line, sizeof line, "| lone | MISSING | `%.12s` | specs/lone.yaml | | - |", ST[4].key);
    CHECK_LINE(md, line);
    /* long table: references beside ours, templates, labels, missing */
    CHECK_LINE(md, "| variant | layers | perplexity | paper | widths | variant | ppl text | "
                   "structure |");
    CHECK_LINE(md, "|---|---|---:|---:|---:|---:|---:|---:|");
    CHECK_LINE(md, "| whai | 128 | 825.0 | 591 | - | whai | whai_128: 825.04 | 121-110-84 |");
    CHECK_LINE(md, "| whai | 128-64 | 800.5 | n/a | 128-64 | whai | whai_128-64: 800.50 | - |");
    CHECK_LINE(md, "| wai | 128 | 843.1 | - | - | wai | wai_128: 843.10 | - |");
    CHECK_LINE(md, "| wai | 128-64 | - | - | - | wai | - | - |");
    CHECK_LINE(md, "Perplexity on held-out words; lower is better.");
    CHECK_LINE(md, "Files: [md](tables/long.md), [csv](tables/long.csv), [json](tables/long.json)");
    /* pivot tables */
    CHECK_LINE(md, "| variant | 128 | 128-64 |");
    CHECK_LINE(md, "| whai | 825.0 | 800.5 |");
    CHECK_LINE(md, "| wai | 843.1 | - |");
    CHECK_LINE(md, "Files: [md](tables/pivot.md), [csv](tables/pivot.csv)");
    CHECK_LINE(md, "| variant | 128 ours | 128 paper | 128-64 ours | 128-64 paper |");
    CHECK_LINE(md, "| whai | 825.0 | 591 | 800.5 | n/a |");
    /* figures */
    CHECK(strstr(md, "Not rendered (gnuplot missing or failed): data [figures/curves.dat]") != NULL,
          "curves not rendered note");
    CHECK(strstr(md, "\nNot shown: wai_128-64 (RUNNING).\n") != NULL, "skipped runs named");
    CHECK(strstr(md, "No figure yet: no completed run with /curves/iteration and "
                     "/curves/perplexity.") != NULL, "nodata figure");
    /* the topic hierarchy: top topics by index (usage unknown), children by Phi weight */
    CHECK_LINE(md, "### Figure tree");
    CHECK(strstr(md, "\n```\nL2.t0: w0 w1\n  L1.t0 (0.700): w0 w1\n  L1.t1 (0.200): w2 w3\n"
                     "L2.t1: w4 w5\n  L1.t2 (0.600): w4 w5\n  L1.t1 (0.300): w2 w3\n```\n"),
          "topic tree in REPORT.md: %s", S(md));
    CHECK(strstr(md, "also in [figures/tree.md](figures/tree.md)") != NULL, "tree file linked");
    CHECK(strstr(md, "### Figure notree\n\nNo figure yet: run whai_128 has no topics to show")
          != NULL, "a run without /topics");
    /* claims */
    CHECK_LINE(md, "| id | claim | verdict | numbers |");
    CHECK_LINE(md, "| deeper | The claim deeper | **not evaluable** | layers=128: "
                   "whai_128.perplexity (825.04) <= wai_128.perplexity (843.1): holds<br>"
                   "layers=128-64: whai_128-64.perplexity (800.5) <= wai_128-64.perplexity "
                   "(missing): not evaluable |");
    CHECK_LINE(md, "| depth_helps | The claim depth_helps | reproduced | whai_128-64.perplexity "
                   "(800.5) < whai_128.perplexity (825.04): holds |");
    CHECK_LINE(md, "| wai_best | The claim wai_best | **not reproduced** | wai_128.perplexity "
                   "(843.1) < whai_128.perplexity (825.04) (tolerance 8.25): fails |");
    CHECK(strstr(md, "| wai_best_info | The claim wai_best_info (informative) | **not reproduced** |"),
          "informative claim");
    CHECK(strstr(md, "| wai_low | The claim wai_low | **not reproduced** | layers=128: "
                     "wai_128.perplexity (843.1) < 800: fails<br>layers=128-64: "
                     "wai_128-64.perplexity (missing) < 800: not evaluable |"), "forall F+NE");
    CHECK(strstr(md, "| some_low | The claim some_low | reproduced |"), "exists");
    CHECK(strstr(md, "| within_3pct | The claim within_3pct | reproduced |"), "tolerance");
    CHECK(strstr(md, "| lone_runs | The claim lone_runs | **not evaluable** | lone.perplexity "
                     "(missing) > 0: not evaluable |"), "missing run");
    CHECK(strstr(md, "| nan_metric | The claim nan_metric | reproduced | [wai_128.npmi_1 (NaN) > 0: "
                     "not evaluable] or [wai_128.perplexity (843.1) > 1: holds]: holds |"),
          "NaN metric, or");
    free(md);

    /* tables in csv and json */
    char *csv = slurp2(out, "tables/long.csv");
    CHECK_LINE(csv, "variant,layers,perplexity,paper,widths,variant,ppl text,structure");
    CHECK_LINE(csv, "whai,128,825.04,591,-,whai,whai_128: 825.04,121-110-84");
    CHECK_LINE(csv, "wai,128-64,-,-,-,wai,-,-");
    free(csv);
    char *json = slurp2(out, "tables/long.json");
    CHECK(json && strstr(json, "\"columns\": [\"variant\", \"layers\", \"perplexity\", \"paper\", "
                               "\"widths\", \"variant\", \"ppl text\", \"structure\"]"),
          "json columns: %s", S(json));
    CHECK(json && strstr(json, "[\"whai\", \"128-64\", 800.5, \"n/a\", \"128-64\", \"whai\", "
                               "\"whai_128-64: 800.50\", null]"), "json row: %s", S(json));
    CHECK(json && strstr(json, "[\"whai\", \"128\", 825.04, 591, null, \"whai\", "
                               "\"whai_128: 825.04\", \"121-110-84\"]"), "json dataset: %s", S(json));
    CHECK(json && strstr(json, "[\"wai\", \"128-64\", null, null, null, \"wai\", null, null]"),
          "json nulls: %s", S(json));
    CHECK(json && strstr(json, "\"note\": \"Perplexity on held-out words; lower is better.\""),
          "json note");
    free(json);
    char *tmd = slurp2(out, "tables/pivot.md");
    CHECK(tmd && !strncmp(tmd, "# Table pivot\n\n| variant | 128 | 128-64 |\n", 41), "pivot.md: %s", S(tmd));
    free(tmd);
    char path[700];
    snprintf(path, sizeof path, "%s/tables/pivot.json", out);
    CHECK(!fixture_exists(path), "pivot.json not asked for");
    snprintf(path, sizeof path, "%s/tables/pivot2.csv", out);
    CHECK(!fixture_exists(path), "pivot2.csv not asked for");

    /* runs.csv: labels and the union of metrics by name */
    char *runs = slurp2(out, "runs.csv");
    CHECK_LINE(runs, "id,status,key,dir,spec,overrides,variant,layers,k_1,k_2,npmi_1,perplexity,"
                     "test_s_per_doc,train_s");
    snprintf(line, sizeof line, "whai_128,COMPLETED,%s,../cache/whai_128,specs/whai_128.yaml,"
             "train.epochs=2,whai,128,128,-,-,825.04,0.25,12.5", ST[0].key);
    CHECK_LINE(runs, line);
    snprintf(line, sizeof line, "lone,MISSING,%s,../cache/lone,specs/lone.yaml,,-,-,-,-,-,-,-,-",
             ST[4].key);
    CHECK_LINE(runs, line);
    free(runs);

    /* figures' data */
    char *dat = slurp2(out, "figures/curves.dat");
    char want[2048];
    int n = snprintf(want, sizeof want, "# curves: one block per series (gnuplot index), columns "
                     "x y\n# series 0: whai_128\n");
    for (int i = 1; i < 4; i++)
        n += snprintf(want + n, sizeof want - n, "%.17g %.17g\n", 10.0 * (i + 1), 900 * pow(0.9, i));
    n += snprintf(want + n, sizeof want - n, "\n\n# series 1: whai_128-64\n");
    for (int i = 1; i < 3; i++)
        n += snprintf(want + n, sizeof want - n, "%.17g %.17g\n", 10.0 * (i + 1), 1000 * pow(0.9, i));
    CHECK(dat && !strcmp(dat, want), "curves.dat:\n%s\nwant:\n%s", S(dat), want);
    free(dat);
    dat = slurp2(out, "figures/bars.dat");
    snprintf(want, sizeof want, "# bars: category \"whai\" \"wai\"\n\"128\" %.17g %.17g\n"
             "\"128-64\" %.17g NaN\n", 825.04, 843.1, 800.5);
    CHECK(dat && !strcmp(dat, want), "bars.dat:\n%s\nwant:\n%s", S(dat), want);
    free(dat);
    dat = slurp2(out, "figures/onebars.dat");
    snprintf(want, sizeof want, "# onebars: category \"train_s\"\n\"whai_128\" %.17g\n"
             "\"whai_128-64\" %.17g\n", 12.5, 20.25);
    CHECK(dat && !strcmp(dat, want), "onebars.dat (one series):\n%s\nwant:\n%s", S(dat), want);
    free(dat);
    snprintf(path, sizeof path, "%s/figures/nodata.dat", out);
    CHECK(!fixture_exists(path), "no .dat for a figure without data");

    /* claims files */
    char *cm = slurp2(out, "claims.md");
    CHECK_LINE(cm, "9 claims: 4 reproduced, 3 not reproduced, 2 not evaluable.");
    CHECK_LINE(cm, "## wai_low: not reproduced");
    CHECK_LINE(cm, "- for every layers in {128, 128-64}");
    CHECK_LINE(cm, "- tolerance: rel_tol 0.01, abs_tol 0 (each comparison loosened by rel_tol * "
                   "|right side| + abs_tol)");
    CHECK_LINE(cm, "- layers=128: wai_128.perplexity (843.1) < 800: fails");
    free(cm);
    char *cj = slurp2(out, "claims.json");
    CHECK(cj && strstr(cj, "\"summary\": {\"reproduced\": 4, \"not_reproduced\": 3, "
                           "\"not_evaluable\": 2, \"shown\": 0, \"strict_not_reproduced\": 2, "
                           "\"strict_not_evaluable\": 2}"), "claims.json summary: %s", S(cj));
    CHECK(cj && strstr(cj, "{\"axes\": {\"layers\": \"128-64\"}, \"verdict\": \"not evaluable\", "
                           "\"explanation\": \"wai_128-64.perplexity (missing) < 800: not "
                           "evaluable\"}"), "claims.json instance");
    CHECK(cj && strstr(cj, "\"quantifier\": \"exists\""), "exists in json");
    free(cj);
}

/* No NAME.tmp left anywhere under dir. */
static int no_tmp(const char *dir)
{
    const char *subs[] = {"", "/tables", "/figures", "/records"};
    for (int k = 0; k < 4; k++) {
        char d[700];
        snprintf(d, sizeof d, "%s%s", dir, subs[k]);
        DIR *h = opendir(d);
        if (!h) continue;
        for (struct dirent *e; (e = readdir(h));) {
            size_t n = strlen(e->d_name);
            if (n > 4 && !strcmp(e->d_name + n - 4, ".tmp")) { closedir(h); return 0; }
        }
        closedir(h);
    }
    return 1;
}

/* A record for each finished run (its key as pipeline_key, its /metrics), none for others. */
static void check_records(const char *out)
{
    for (int i = 0; i < P.n_runs; i++) {
        char path[800], key[65] = "";
        datm_record_path(out, P.runs[i].id, path, sizeof path);
        const int finished = i < 3;   /* whai_128, whai_128-64, wai_128 */
        CHECK(fixture_exists(path) == finished, "record of %s %s", P.runs[i].id,
              finished ? "missing" : "written");
        if (!finished) continue;
        datm_error err = {0};
        CHECK(datm_record_key(path, key, &err) == DATM_OK && !strcmp(key, ST[i].key),
              "record key of %s: %s", P.runs[i].id, err.msg);
        datm_h5 *h = NULL;
        CHECK(datm_h5_open(path, 0, &h, &err) == DATM_OK, "open %s: %s", path, err.msg);
        CHECK(h && datm_h5_shape(h, "metrics/perplexity", NULL) == 0, "record of %s has "
              "/metrics/perplexity", P.runs[i].id);
        datm_h5_close(&h);
    }
}

static void check_claim_errors(void)
{
    datm_error err = {0};
    for (int k = 0; k < P.n_claims; k++)
        CHECK(datm_pipe_claim_check(&P, &P.claims[k], &err) == DATM_OK, "claim %s: %s",
              P.claims[k].id, err.msg);
    datm_pipe_claim bad = P.claims[0];
    snprintf(bad.expr, sizeof bad.expr, "whai_{layers}.perplexity <= (wai_{layers}.perplexity");
    CHECK(datm_pipe_claim_check(&P, &bad, &err) == DATM_E_INVALID, "syntax error");
    CHECK(strstr(err.msg, "demo.yaml:81:3: claims.deeper.expr (layers=128): column 43: expected ')' to close the '(' at column 24"),
          "syntax error message: %s", err.msg);
    CHECK(strstr(err.msg, "\n  whai_128.perplexity <= (wai_128.perplexity\n  " /* 42 spaces */
                          "                                          ^") != NULL,
          "caret: %s", err.msg);
    snprintf(bad.expr, sizeof bad.expr, "whai_{layers}.perplexity <= wia_{layers}.perplexity");
    CHECK(datm_pipe_claim_check(&P, &bad, &err) == DATM_E_INVALID, "unknown run");
    CHECK(strstr(err.msg, "demo.yaml:81:3: claims.deeper.expr (layers=128): 'wia_128' is not the "
                          "id of a run (did you mean 'wai_128'?)"), "unknown run message: %s",
          err.msg);
    snprintf(bad.expr, sizeof bad.expr, "whai_{depth}.perplexity < 1");
    CHECK(datm_pipe_claim_check(&P, &bad, &err) == DATM_E_INVALID &&
          strstr(err.msg, "unknown placeholder '{depth}'"), "placeholder: %s", err.msg);

    /* the report itself refuses a claim that does not parse, naming it */
    char out[600];
    snprintf(out, sizeof out, "%s/out_bad", base);
    datm_pipe_claim keep = P.claims[1];
    snprintf(P.claims[1].expr, sizeof P.claims[1].expr, "whai_128.perplexity <");
    CHECK(datm_pipeline_report(&P, ST, out, NULL, &err) == DATM_E_INVALID &&
          strstr(err.msg, "demo.yaml:82:3: claims.depth_helps.expr: column 22: unexpected end"),
          "report with a bad claim: %s", err.msg);
    P.claims[1] = keep;
    CHECK(no_tmp(out), "no .tmp after a failed report");
    CHECK(datm_pipeline_report(&P, ST, "/proc/datm_no_such/out", NULL, &err) == DATM_E_IO,
          "unwritable out dir: %s", err.msg);
}

int main(void)
{
    setenv("DATM_GNUPLOT", "none", 1);   /* .dat/.gp only: fast, and the same on every host */
    datm_log_set_level(DATM_LOG_ERROR);
    snprintf(base, sizeof base, "/tmp/datm_report_XXXXXX");
    if (!mkdtemp(base)) { perror("mkdtemp"); return 1; }
    build();

    char out1[600], out2[600], cmd[1400];
    snprintf(out1, sizeof out1, "%s/out1", base);
    snprintf(out2, sizeof out2, "%s/out2", base);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/runs' && ln -s ../../cache/whai_128 '%s/runs/whai_128'",
             out1, out1);
    CHECK(system(cmd) == 0, "link");
    /* stale figure files of an ID without data now must go */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/figures' && echo old > '%s/figures/nodata.png'", out1,
             out1);
    CHECK(system(cmd) == 0, "stale");

    datm_claims_summary sum;
    datm_error err = {0};
    int rc = datm_pipeline_report(&P, ST, out1, &sum, &err);
    CHECK(rc == DATM_OK, "report: %s", err.msg);
    CHECK(sum.n[DATM_CLAIM_REPRODUCED] == 4 && sum.n[DATM_CLAIM_NOT_REPRODUCED] == 3 &&
          sum.n[DATM_CLAIM_NOT_EVALUABLE] == 2, "summary %d %d %d", sum.n[0], sum.n[1], sum.n[2]);
    CHECK(sum.n_strict_not_reproduced == 2 && sum.n_strict_not_evaluable == 2,
          "strict counts %d %d", sum.n_strict_not_reproduced, sum.n_strict_not_evaluable);
    snprintf(cmd, sizeof cmd, "%s/figures/nodata.png", out1);
    CHECK(!fixture_exists(cmd), "stale nodata.png removed");
    check_report(out1);
    check_records(out1);
    snprintf(cmd, sizeof cmd, "cp '%s/records/whai_128.h5' '%s/first_record.h5'", out1, base);
    CHECK(system(cmd) == 0, "keep a record");
    CHECK(no_tmp(out1), "no .tmp left");

    /* determinism: the same runs give the same bytes */
    char *first[sizeof files / sizeof files[0]];
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) first[k] = slurp2(out1, files[k]);
    CHECK(datm_pipeline_report(&P, ST, out1, NULL, &err) == DATM_OK, "report again: %s", err.msg);
    CHECK(datm_pipeline_report(&P, ST, out2, NULL, &err) == DATM_OK, "report 2: %s", err.msg);
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char *again = slurp2(out1, files[k]), *other = slurp2(out2, files[k]);
        CHECK(first[k] && again && !strcmp(first[k], again), "%s differs between two reports",
              files[k]);
        CHECK(first[k] && other && !strcmp(first[k], other), "%s differs in another dir",
              files[k]);
        free(again);
        free(other);
        free(first[k]);
    }
    check_records(out1);
    snprintf(cmd, sizeof cmd, "cmp -s '%s/records/whai_128.h5' '%s/first_record.h5'", out1, base);
    CHECK(system(cmd) == 0, "a second report rewrites a record with the same bytes");
    check_claim_errors();

    datm_pipeline_free(&P);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (getenv("KEEP")) printf("kept %s\n", base);
    else if (!fails && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    printf("test_pipeline_report: %d failure%s\n", fails, fails == 1 ? "" : "s");
    return fails ? 1 : 0;
}
