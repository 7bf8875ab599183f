/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_pipeline_file.c: pipeline files (engine/pipeline/pipefile.c).
 * - runs, matrix expansion (order, labels, exclude, {axis} in every field), profiles and the
 *   override order (file, profile, run, run's profile), references, tables, figures, claims
 * - the report folder: the file's out:, replaced by the chosen profile's out: (both relative
 *   to the pipeline file), results/<name> without either
 * - an atoms figure (top: atoms per layer) and a claim shown by a figure (informative, no
 *   expr)
 * - 29 malformed files: each message names file:LINE:col of the fault and the key path */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/pipefile.h"
#include "test_check.h"
#include "toy_catalog.h"

static char dir[256];

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) { perror(p); exit(1); }
    fputs(text, f);
    fclose(f);
}

static int load(const char *name, const char *profile, datm_pipeline *p, datm_error *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return datm_pipeline_load(path, profile, &toy_cat, p, err);
}

static void expect_error(const char *name, const char *text, const char *profile, ...)
{
    put(name, text);
    datm_pipeline p;
    datm_error err = {0};
    if (load(name, profile, &p, &err) == DATM_OK) {
        CHECK(0, "%s: expected an error, got none", name);
        datm_pipeline_free(&p);
        return;
    }
    va_list ap;
    va_start(ap, profile);
    for (const char *n = va_arg(ap, const char *); n; n = va_arg(ap, const char *))
        CHECK(strstr(err.msg, n) != NULL, "%s: message lacks '%s':\n%s", name, n, err.msg);
    va_end(ap);
}

static const char *spec = "data: {dataset: digits}\nmodel: {variant: toy, k: 3}\n";

static const char *good =
    "name: demo\n"                                                      /* 1 */
    "overrides: [train.epochs=2]\n"                                     /* 2 */
    "profiles:\n"                                                       /* 3 */
    "  quick: {overrides: [train.batch_size=7], out: ../reports/q}\n"   /* 4 */
    "  paper:\n"                                                        /* 5 */
    "runs:\n"                                                           /* 6 */
    "  - id: base\n"                                                    /* 7 */
    "    spec: s.yaml\n"                                                /* 8 */
    "    overrides: [model.k=4]\n"                                      /* 9 */
    "    profiles: {quick: [model.k=5]}\n"                              /* 10 */
    "    labels: {variant: toy, depth: \"1\"}\n"                        /* 11 */
    "  - id: avg\n"                                                     /* 12 */
    "    ensemble: [\"m_*_s1\"]\n"                                      /* 13 */
    "matrix:\n"                                                         /* 14 */
    "  - id: \"m_{w}_s{seed}\"\n"                                       /* 15 */
    "    spec: s.yaml\n"                                                /* 16 */
    "    axes: {w: [\"10\", \"20\", \"30\"], seed: [1, 2]}\n"           /* 17 */
    "    exclude: [{w: \"30\", seed: 2}]\n"                             /* 18 */
    "    overrides: [\"model.layers=[{w}]\", \"seed={seed}\"]\n"        /* 19 */
    "    labels: {depth: \"d{w}\"}\n"                                   /* 20 */
    "references:\n"                                                     /* 21 */
    "  paper: {m_10_s1: {perplexity: 591, structure: 64-62-55}}\n"      /* 22 */
    "tables:\n"                                                         /* 23 */
    "  t1:\n"                                                           /* 24 */
    "    runs: [\"m_*\"]\n"                                             /* 25 */
    "    rows: [seed]\n"                                                /* 26 */
    "    columns_by: [w]\n"                                             /* 27 */
    "    values: [perplexity, {metric: perplexity, ref: paper, format: \"%.1f\"}]\n" /* 28 */
    "figures:\n"                                                        /* 29 */
    "  f1: {kind: curves, runs: [\"m_*\"], where: {seed: \"1\"}, x: wall_s}\n" /* 30 */
    "  atoms: {kind: atoms, runs: [base], top: 16}\n"                   /* 30b */
    "claims:\n"                                                         /* 31 */
    "  c1:\n"                                                           /* 32 */
    "    text: wider is better\n"                                       /* 33 */
    "    forall: {seed: [1, 2]}\n"                                      /* 34 */
    "    expr: \"m_20_s{seed}.perplexity <= m_10_s{seed}.perplexity\"\n" /* 35 */
    "    rel_tol: 0.01\n"                                               /* 36 */
    "  by_eye: {text: the atoms look like strokes, figure: atoms}\n"   /* 37 */
    "out: reports/all\n";                                              /* 38 */

static void test_good(void)
{
    put("s.yaml", spec);
    put("good.yaml", good);
    datm_pipeline p;
    datm_error err = {0};
    int rc = load("good.yaml", "quick", &p, &err);
    CHECK(rc == DATM_OK, "good: %s", err.msg);
    if (rc) return;
    CHECK(p.n_runs == 7, "runs: 2 + 3 x 2 - 1 = 7, got %d", p.n_runs);
    const char *order[] = {"base", "avg", "m_10_s1", "m_10_s2", "m_20_s1", "m_20_s2", "m_30_s1"};
    for (int i = 0; i < 7 && i < p.n_runs; i++)
        CHECK(!strcmp(p.runs[i].id, order[i]), "run %d: %s, expected %s", i, p.runs[i].id, order[i]);
    const datm_pipe_run *b = &p.runs[0];
    CHECK(b->overrides.n == 4 && !strcmp(b->overrides.v[0], "train.epochs=2") &&
          !strcmp(b->overrides.v[1], "train.batch_size=7") && !strcmp(b->overrides.v[2], "model.k=4") &&
          !strcmp(b->overrides.v[3], "model.k=5"), "override order: file, profile, run, run profile");
    CHECK(strstr(b->spec, "/s.yaml") != NULL, "spec relative to the pipeline file: %s", b->spec);
    CHECK(!strcmp(datm_pipe_run_label(b, "depth"), "1"), "labels");
    const datm_pipe_run *m = &p.runs[4];
    CHECK(!strcmp(m->overrides.v[2], "model.layers=[20]") && !strcmp(m->overrides.v[3], "seed=1"),
          "axes substituted into overrides: %s %s", m->overrides.v[2], m->overrides.v[3]);
    CHECK(!strcmp(datm_pipe_run_label(m, "w"), "20") && !strcmp(datm_pipe_run_label(m, "depth"), "d20"),
          "axis labels and templated labels");
    const datm_pipe_run *avg = &p.runs[1];
    CHECK(avg->kind == DATM_PIPE_RUN_ENSEMBLE && avg->members.n == 3, "ensemble members: %d",
          avg->members.n);
    CHECK(p.n_tables == 1 && p.tables[0].n_values == 2 && !strcmp(p.tables[0].values[1].ref, "paper") &&
          !strcmp(p.tables[0].values[1].format, "%.1f"), "table");
    const datm_pipe_ref *r = datm_pipeline_ref(&p, "paper", "m_10_s1", "perplexity");
    CHECK(r && r->value == 591, "reference value");
    r = datm_pipeline_ref(&p, "paper", "m_10_s1", "structure");
    CHECK(r && !strcmp(r->text, "64-62-55"), "reference text");
    CHECK(p.n_figures == 2 && !strcmp(p.figures[0].x, "wall_s") && p.figures[0].select.n_where == 1,
          "figure");
    CHECK(p.n_figures == 2 && p.figures[1].kind == DATM_PIPE_FIG_ATOMS && p.figures[1].top == 16,
          "atoms figure with top: 16");
    CHECK(p.n_claims == 2 && p.claims[0].n_axes == 1 && p.claims[0].axis_values[0].n == 2 &&
          p.claims[0].rel_tol == 0.01 && !p.claims[0].figure[0], "claim");
    CHECK(p.n_claims == 2 && !strcmp(p.claims[1].figure, "atoms") && !p.claims[1].expr[0] &&
          p.claims[1].informative, "a claim shown by a figure is informative, without expr");
    /* the quick profile's out: replaces the file's; relative to the pipeline file */
    char want[600];
    snprintf(want, sizeof want, "%s", dir);
    *strrchr(want, '/') = '\0';   /* ../reports/q from the file's folder */
    strcat(want, "/reports/q");
    CHECK(!strcmp(p.out_dir, want), "profile out: %s, want %s", p.out_dir, want);
    datm_error e2 = {0};
    CHECK(datm_pipeline_select(&p, "^m_10", &e2) == 2, "--only");
    CHECK(datm_pipeline_select(&p, "^avg$", &e2) == 4, "--only takes an ensemble's members");
    datm_pipeline_free(&p);
    rc = load("good.yaml", NULL, &p, &err);
    CHECK(rc == DATM_OK && p.runs[0].overrides.n == 2, "no profile: file and run overrides only");
    snprintf(want, sizeof want, "%s/reports/all", dir);
    CHECK(rc || !strcmp(p.out_dir, want), "the file's out: %s, want %s", p.out_dir, want);
    if (!rc) datm_pipeline_free(&p);
    rc = load("good.yaml", "paper", &p, &err);   /* a profile without out: keeps the file's */
    CHECK(rc == DATM_OK && !strcmp(p.out_dir, want), "paper profile out: %s", p.out_dir);
    if (!rc) datm_pipeline_free(&p);
    put("noout.yaml", "runs: [{id: a, spec: s.yaml}]\n");
    rc = load("noout.yaml", NULL, &p, &err);
    CHECK(rc == DATM_OK && !strcmp(p.out_dir, "results/noout"), "default out: %s", p.out_dir);
    if (!rc) datm_pipeline_free(&p);
}

static void test_errors(void)
{
    /* P1 unknown top-level key */
    expect_error("p1.yaml", "runs: [{id: a, spec: s.yaml}]\ntabels: {}\n", NULL, "p1.yaml:2:1:",
                 "unknown key 'tabels'", "did you mean 'tables'", NULL);
    /* P2 a run without id */
    expect_error("p2.yaml", "runs:\n  - spec: s.yaml\n", NULL, "p2.yaml:2:5:", "runs[1]",
                 "'id' is required", NULL);
    /* P3 a run with both spec and ensemble */
    expect_error("p3.yaml", "runs:\n  - {id: a, spec: s.yaml, ensemble: [b]}\n", NULL,
                 "p3.yaml:2:5:", "runs[1]", "exactly one of 'spec'", NULL);
    /* P4 a duplicate id names both entries */
    expect_error("p4.yaml", "runs:\n  - {id: a, spec: s.yaml}\n  - {id: a, spec: s.yaml}\n", NULL,
                 "p4.yaml:3:5:", "'a' is already used", "p4.yaml:2:5", NULL);
    /* P5 a placeholder that is no axis */
    expect_error("p5.yaml", "matrix:\n  - id: \"m_{w}\"\n    spec: s.yaml\n    axes: {v: [1]}\n",
                 NULL, "p5.yaml:2:9:", "matrix[1]", "{w} is not an axis", NULL);
    /* P6 an unknown profile chosen on the command line */
    expect_error("p6.yaml", "profiles: {quick: {}, paper: {}}\nruns: [{id: a, spec: s.yaml}]\n",
                 "quik", "p6.yaml:1:", "no profile 'quik'", "did you mean 'quick'", NULL);
    /* P7 a run's profile overrides for an undeclared profile */
    expect_error("p7.yaml", "profiles: {quick: {}}\nruns:\n  - id: a\n    spec: s.yaml\n"
                 "    profiles: {paper: [model.k=2]}\n", NULL, "p7.yaml:5:16:",
                 "runs[1].profiles", "'paper' is not a profile", NULL);
    /* P8 a bad override of a run: the run's entry and the override */
    expect_error("p8.yaml", "runs:\n  - id: a\n    spec: s.yaml\n    overrides: [model.k=zero]\n",
                 NULL, "p8.yaml:2:5:", "run 'a'", "override 'model.k=zero'", NULL);
    /* P9 a missing spec file */
    expect_error("p9.yaml", "runs:\n  - {id: a, spec: nope.yaml}\n", NULL, "p9.yaml:2:5:",
                 "nope.yaml", "cannot open", NULL);
    /* P10 a table column with an unknown reference source */
    expect_error("p10.yaml", "runs: [{id: a, spec: s.yaml}]\ntables:\n  t:\n"
                 "    values: [{metric: perplexity, ref: paper}]\n", NULL, "p10.yaml:4:5:",
                 "tables.t", "ref 'paper'", NULL);
    /* P11 a table row label no run has */
    expect_error("p11.yaml", "runs: [{id: a, spec: s.yaml}]\ntables:\n  t: {rows: [variant], "
                 "values: [perplexity]}\n", NULL, "p11.yaml:3:6:", "tables.t",
                 "'variant' is no run's label", NULL);
    /* P12 a claim placeholder that is not quantified */
    expect_error("p12.yaml", "runs: [{id: a, spec: s.yaml}]\nclaims:\n  c:\n    text: t\n"
                 "    expr: \"a_{d}.x < 1\"\n", NULL, "p12.yaml:5:11:", "claims.c",
                 "{d} is not an axis", NULL);
    /* P13 a figure of an unknown kind */
    expect_error("p13.yaml", "runs: [{id: a, spec: s.yaml}]\nfigures:\n  f: {kind: pie}\n", NULL,
                 "p13.yaml:3:13:", "figures.f", "'pie' is not curves, bars, hierarchy or atoms",
                 NULL);
    /* P14 a reference to an unknown run id, with a did-you-mean */
    expect_error("p14.yaml", "runs: [{id: whai_128, spec: s.yaml}]\nreferences:\n"
                 "  paper: {whai_12: {perplexity: 1}}\n", NULL, "p14.yaml:3:11:",
                 "references.paper", "did you mean 'whai_128'", NULL);
    /* P15 an ensemble member that matches nothing */
    expect_error("p15.yaml", "runs:\n  - {id: a, spec: s.yaml}\n  - {id: e, ensemble: [b_*]}\n",
                 NULL, "p15.yaml:3:5:", "'b_*' matches no run", NULL);
    /* P16 a YAML syntax error */
    expect_error("p16.yaml", "runs:\n  - {id: a, spec: s.yaml\n", NULL, "p16.yaml:3:",
                 "YAML syntax error", NULL);
    /* P17 an id holding '.' (the run/metric separator of claims) */
    expect_error("p17.yaml", "runs: [{id: a.b, spec: s.yaml}]\n", NULL, "p17.yaml:1:",
                 "id 'a.b'", "no '.'", NULL);
    /* P18 an axis without values */
    expect_error("p18.yaml", "matrix:\n  - id: m\n    spec: s.yaml\n    axes: {w: []}\n", NULL,
                 "p18.yaml:4:12:", "axis 'w' has no values", NULL);
    /* P19 a table column format that is not a number format */
    expect_error("p19.yaml", "runs: [{id: a, spec: s.yaml}]\ntables:\n  t:\n"
                 "    values: [{metric: x, format: \"%s\"}]\n", NULL, "p19.yaml:4:", "format '%s'",
                 NULL);
    /* P20 a claim naming a run that does not exist: found at load time, not after training */
    expect_error("p20.yaml", "runs: [{id: whai, spec: s.yaml}]\nclaims:\n  c:\n    text: t\n"
                 "    expr: \"wahi.perplexity < 1\"\n", NULL, "p20.yaml:", "claims.c",
                 "wahi", "did you mean 'whai'", NULL);
    /* P21 a claim with a syntax error: the column with a caret */
    expect_error("p21.yaml", "runs: [{id: a, spec: s.yaml}]\nclaims:\n  c:\n    text: t\n"
                 "    expr: \"a.x < < 1\"\n", NULL, "p21.yaml:", "claims.c", "^", NULL);
    /* P22 a claim naming a reference figure the file does not record */
    expect_error("p22.yaml", "runs: [{id: a, spec: s.yaml}]\nreferences:\n  base: {a: {ppl: 5}}\n"
                 "claims:\n  c:\n    text: t\n    expr: \"a.ppl < a.pll@base\"\n", NULL,
                 "p22.yaml:", "claims.c", "references.base has no figure a.pll", NULL);
    /* P23 a profile's out: that is empty */
    expect_error("p23.yaml", "profiles:\n  paper: {out: \"\"}\nruns: [{id: a, spec: s.yaml}]\n",
                 NULL, "p23.yaml:2:", "profiles.paper.out", "the report's folder", NULL);
    /* P24 a profile's out: that is a list, in a profile not chosen */
    expect_error("p24.yaml", "profiles:\n  quick: {}\n  paper:\n    out: [a, b]\n"
                 "runs: [{id: a, spec: s.yaml}]\n", "quick", "p24.yaml:4:10:", "profiles.paper.out",
                 "expected a single value", NULL);
    /* P25 the top-level out: empty */
    expect_error("p25.yaml", "out: ''\nruns: [{id: a, spec: s.yaml}]\n", NULL, "p25.yaml:1:",
                 "out: give the report's folder", NULL);
    /* P26 a claim shown by a figure that does not exist, with a did-you-mean */
    expect_error("p26.yaml", "runs: [{id: a, spec: s.yaml}]\nfigures:\n  atoms: {kind: atoms}\n"
                 "claims:\n  g:\n    text: t\n    figure: atom\n", NULL, "p26.yaml:6:5:",
                 "claims.g.figure", "'atom' is not a figure", "did you mean 'atoms'", NULL);
    /* P27 a claim with both figure and expr */
    expect_error("p27.yaml", "runs: [{id: a, spec: s.yaml}]\nfigures:\n  atoms: {kind: atoms}\n"
                 "claims:\n  g:\n    text: t\n    figure: atoms\n    expr: \"a.x > 0\"\n", NULL,
                 "p27.yaml:8:", "claims.g", "'expr' with 'figure'", NULL);
    /* P28 an atoms figure's top: out of range */
    expect_error("p28.yaml", "runs: [{id: a, spec: s.yaml}]\nfigures:\n"
                 "  atoms: {kind: atoms, top: 0}\n", NULL, "p28.yaml:3:", "figures.atoms",
                 "top: '0'", "from 1 to 1024", NULL);
    /* P29 links: on an atoms figure */
    expect_error("p29.yaml", "runs: [{id: a, spec: s.yaml}]\nfigures:\n"
                 "  atoms: {kind: atoms, links: 2}\n", NULL, "p29.yaml:3:", "figures.atoms",
                 "links: '2'", "for kind: hierarchy only", NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/datm_pipefile_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_good();
    test_errors();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!fails && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
