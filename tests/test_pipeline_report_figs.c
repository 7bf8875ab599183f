/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_pipeline
 * tests/test_pipeline_report_figs.c: the parts of the pipeline report (engine/pipeline/
 * report*.c) that pictures and nested report folders need, over a pipeline built by hand and
 * small result.h5 files made here (tests/result_fixture.h; no corpus needed):
 * - an atoms figure: one image grid per layer of a run with a pixel vocabulary, the `top`
 *   most used atoms first (by /usage), in figures/ID_layerL.dat with the chosen topics in the
 *   tiles; a run whose vocabulary is not pixels gets a "Not drawable" line, a figure of an
 *   unfinished run "No figure yet"; stale ID_layerL files of an earlier report go
 * - a claim shown by a figure: "shown; judged by eye" when drawn, not evaluable when not,
 *   never counted for --strict; claims.md and claims.json
 * - nested reports (a profile's out: inside another's): writing the outer report never
 *   removes or touches a file of the inner one (report files, figures, runs/ links, logs/),
 *   and writing the inner one never touches the outer one's
 * - byte-stable images: with gnuplot installed, two reports of the same runs give the same
 *   PNG and SVG bytes (curves and image grids)
 * - run records: the runs read from their records alone (RECORDED, the cache set aside) give
 *   the same REPORT.md and figure data, the atoms' grids included */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/figures.h"
#include "pipeline/report.h"
#include "pipeline_fixture.h"
#include "result_fixture.h"
#include "test_check.h"

#define S(x) ((x) ? (x) : "(null)")

static char base[256];
static datm_pipeline P;
static datm_pipe_state ST[8];

static void add_run(const char *id, datm_pipe_status status)
{
    P.runs = realloc(P.runs, (size_t)(P.n_runs + 1) * sizeof *P.runs);
    datm_pipe_run *r = &P.runs[P.n_runs];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->spec, sizeof r->spec, "%s/pipe/%s.yaml", base, id);
    r->selected = 1;
    datm_pipe_state *s = &ST[P.n_runs];
    memset(s, 0, sizeof *s);
    for (int k = 0; k < 64; k++) s->key[k] = "0123456789abcdef"[(P.n_runs * 5 + k) % 16];
    snprintf(s->dir, sizeof s->dir, "%s/cache/%s", base, id);
    s->status = status;
    snprintf(s->result, sizeof s->result, "%s", status == DATM_PIPE_DONE ? "COMPLETED" : "MISSING");
    P.n_runs++;
}

static datm_pipe_figure *add_figure(const char *id, datm_pipe_fig_kind kind, const char *run)
{
    datm_pipe_figure *f = pf_add_figure(&P, id, kind, run);
    f->top = 64;
    return f;
}

static void add_figure_claim(const char *id, const char *figure)
{
    P.claims = realloc(P.claims, (size_t)(P.n_claims + 1) * sizeof *P.claims);
    datm_pipe_claim *c = &P.claims[P.n_claims++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->text, sizeof c->text, "The atoms of %s look like strokes", figure);
    snprintf(c->figure, sizeof c->figure, "%s", figure);
    c->informative = 1;
    snprintf(c->where, sizeof c->where, "demo.yaml:%d:3", 50 + P.n_claims);
}

/* The runs: "img" (6 x 6 pixels, 2 layers of 6 and 3 atoms, with /usage), "words" (a
 * vocabulary of words), "later" (not finished). */
static void build(void)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/pipe'", base);
    CHECK(system(cmd) == 0, "mkdir");
    snprintf(P.path, sizeof P.path, "%s/pipe/demo.yaml", base);
    FILE *f = fopen(P.path, "w");
    if (f) { fputs("# built by the test\n", f); fclose(f); }
    snprintf(P.name, sizeof P.name, "demo");
    add_run("img", DATM_PIPE_DONE);
    add_run("words", DATM_PIPE_DONE);
    add_run("later", DATM_PIPE_PENDING);

    const int widths[2] = {6, 3};
    fixture_run r = {.n_rows = 4, .ppl0 = 900, .n_layers = 2, .img = 6, .widths = widths};
    CHECK(fixture_write(ST[0].dir, &r) == 0, "fixture img");
    /* layer-1 usage: the order by use is 1, 3, 4, 0 (0 before 5 on a tie), 5, 2 */
    const double u1[6] = {0.1, 0.3, 0.05, 0.25, 0.2, 0.1}, u2[3] = {0.2, 0.2, 0.6};
    const double *const tok[2] = {u1, u2};
    const int64_t k[3] = {36, 6, 3};
    char path[1300];
    snprintf(path, sizeof path, "%s/result.h5", ST[0].dir);
    datm_h5 *h = NULL;
    datm_error e = {0};
    CHECK(datm_h5_open(path, 1, &h, &e) == 0 && datm_usage_write(h, 2, k, tok, tok, 10, &e) == 0,
          "usage: %s", e.msg);
    datm_h5_close(&h);

    fixture_run w = {.n_rows = 0};
    CHECK(fixture_write(ST[1].dir, &w) == 0, "fixture words");
    snprintf(path, sizeof path, "%s/result.h5", ST[1].dir);
    const char *const vocab[4] = {"apple", "pear", "plum", "fig"};
    const float phi[4 * 2] = {0.4f, 0.1f, 0.4f, 0.1f, 0.1f, 0.4f, 0.1f, 0.4f};
    const int64_t d[2] = {4, 2};
    CHECK(datm_h5_open(path, 1, &h, &e) == 0 &&
          datm_h5_write_strings(h, "data/vocab", vocab, 4, &e) == 0 &&
          datm_h5_write_f32(h, "model/phi_1", phi, 2, d, &e) == 0, "words: %s", e.msg);
    datm_h5_close(&h);

    add_figure("atoms", DATM_PIPE_FIG_ATOMS, "img")->top = 4;
    add_figure("wordatoms", DATM_PIPE_FIG_ATOMS, "words");
    add_figure("lateatoms", DATM_PIPE_FIG_ATOMS, "later");
    add_figure("curves", DATM_PIPE_FIG_CURVES, "img");
    add_figure_claim("g", "atoms");
    add_figure_claim("g_words", "wordatoms");
}

static char *slurp2(const char *dir, const char *rel)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return fixture_slurp(path);
}

static int exists2(const char *dir, const char *rel)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return fixture_exists(path);
}

/* Value at (row, col) of the matrix in an image grid's .dat (comment line first). */
static double grid_at(const char *dat, int row, int col)
{
    const char *q = strchr(dat, '\n');
    for (int r = 0; q && r < row; r++) q = strchr(q + 1, '\n');
    if (!q) return NAN;
    q++;
    char *end;
    double v = NAN;
    for (int c = 0; c <= col; c++) {
        v = strtod(q, &end);
        if (end == q) return NAN;
        q = end;
    }
    return v;
}

static void check_atoms(const char *out)
{
    char *md = slurp2(out, "REPORT.md");
    CHECK(md && !strstr(md, base), "REPORT.md holds an absolute path");
    CHECK(md && strstr(md, "### Figure atoms\n\nRun img: the 4 most used dictionary atoms of each "
                           "layer (its topics projected to the 6 x 6 pixels"), "atoms: %s", S(md));
    CHECK(md && strstr(md, "- layer 1 (4 of 6 atoms): not rendered (gnuplot missing or failed): "
                           "data [figures/atoms_layer1.dat](figures/atoms_layer1.dat)"),
          "layer 1 line");
    CHECK(md && strstr(md, "- layer 2 (3 of 3 atoms): not rendered"), "layer 2 line (top > K)");
    CHECK(md && strstr(md, "### Figure wordatoms\n\nNot drawable: run words's vocabulary (4 words) "
                           "is not the pixels of an image (p_<row>_<col>)"), "words: not drawable");
    CHECK(md && strstr(md, "### Figure lateatoms\n\nNo figure yet: no selected run is COMPLETED."),
          "unfinished run");
    CHECK(md && strstr(md, "- claims: 0 reproduced, 0 not reproduced, 1 not evaluable, 1 shown "
                           "(judged by eye)\n"), "header tally");
    CHECK(md && strstr(md, "| g | The atoms of atoms look like strokes (informative) | shown; "
                           "judged by eye | figure atoms (Figures: Figure atoms): shown, for a "
                           "person to judge; no number decides it |"), "claim g: %s", S(md));
    CHECK(md && strstr(md, "| g_words | The atoms of wordatoms look like strokes (informative) | "
                           "**not evaluable** | figure wordatoms"), "claim g_words");
    free(md);

    char *dat = slurp2(out, "figures/atoms_layer1.dat");
    CHECK(dat && !strncmp(dat, "# atoms_layer1: 4 topics as 6 x 6 images in a 2 x 2 grid", 55),
          "layer 1 .dat: %.80s", S(dat));
    /* tile t (row t / 2, column t % 2 of the grid) shows topic ord[t] = 1, 3, 4, 0, whose
     * bright pixel row is its index (result_fixture.h) */
    const int ord[4] = {1, 3, 4, 0};
    for (int t = 0; dat && t < 4; t++) {
        const int r0 = (t / 2) * 7 + 1, c0 = (t % 2) * 7 + 1;
        CHECK(grid_at(dat, r0 + ord[t], c0 + 2) > 0.9, "tile %d: row %d bright", t, ord[t]);
        CHECK(grid_at(dat, r0 + (ord[t] + 1) % 6, c0 + 2) < 0.1, "tile %d: other rows dark", t);
    }
    free(dat);
    CHECK(exists2(out, "figures/atoms_layer2.dat") && exists2(out, "figures/atoms_layer2.gp"),
          "layer 2 files");
    CHECK(!exists2(out, "figures/atoms_layer3.dat"), "stale layer 3 removed");
    CHECK(!exists2(out, "figures/wordatoms_layer1.dat"), "no grid for words");

    char *cm = slurp2(out, "claims.md");
    CHECK(cm && strstr(cm, "2 claims: 0 reproduced, 0 not reproduced, 1 not evaluable, 1 shown "
                           "(judged by eye)."), "claims.md tally");
    CHECK(cm && strstr(cm, "## g: shown; judged by eye\n") &&
          strstr(cm, "- shown by: figure `atoms` (a person judges it)"), "claims.md g: %s", S(cm));
    free(cm);
    char *cj = slurp2(out, "claims.json");
    CHECK(cj && strstr(cj, "\"not_evaluable\": 1, \"shown\": 1, \"strict_not_reproduced\": 0, "
                           "\"strict_not_evaluable\": 0}"), "claims.json summary: %s", S(cj));
    CHECK(cj && strstr(cj, "\"expr\": null, \"figure\": \"atoms\""), "claims.json figure");
    CHECK(cj && strstr(cj, "\"verdict\": \"shown; judged by eye\", \"instances\": [\n       "
                           "{\"axes\": {}, \"verdict\": \"shown; judged by eye\""),
          "claims.json verdicts");
    free(cj);
}

/* A listing of dir (or of dir without its sub-folder `skip`): every file with its size and
 * modification time, every link with its target, every folder. */
static char *snapshot(const char *dir, const char *skip)
{
    char cmd[1600], list[700];
    snprintf(list, sizeof list, "%s/snap.txt", base);
    snprintf(cmd, sizeof cmd, "cd '%s' && find . %s%s%s -type l -printf 'L %%p %%l\\n' -o "
             "-type f -printf 'F %%p %%s %%T@\\n' -o -type d -printf 'D %%p\\n' | sort > '%s'",
             dir, skip ? "-path ./" : "", skip ? skip : "", skip ? " -prune -o" : "", list);
    if (system(cmd) != 0) return NULL;
    return fixture_slurp(list);
}

/* The report of out's records alone (every finished run RECORDED, its cache directory moved
 * away) into another folder: the same REPORT.md and figure data. */
static void check_from_records(const char *out)
{
    datm_pipe_state saved[8];
    memcpy(saved, ST, sizeof saved);
    char other[600], cmd[1600];
    snprintf(other, sizeof other, "%s/from_records", base);
    snprintf(cmd, sizeof cmd, "mv '%s/cache' '%s/cache_away'", base, base);
    CHECK(system(cmd) == 0, "cache moved away");
    for (int i = 0; i < P.n_runs; i++) {
        if (ST[i].status != DATM_PIPE_DONE) continue;
        datm_record_path(out, P.runs[i].id, ST[i].record, sizeof ST[i].record);
        ST[i].status = DATM_PIPE_RECORDED;
        CHECK(fixture_exists(ST[i].record), "record of %s", P.runs[i].id);
    }
    datm_error err = {0};
    CHECK(datm_pipeline_report(&P, ST, other, NULL, &err) == DATM_OK, "report from records: %s",
          err.msg);
    static const char *const same[] = {"REPORT.md", "claims.md", "figures/atoms_layer1.dat",
                                       "figures/atoms_layer2.dat", "figures/curves.dat"};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        snprintf(cmd, sizeof cmd, "cmp -s '%s/%s' '%s/%s'", out, same[k], other, same[k]);
        CHECK(system(cmd) == 0, "%s differs when read from the records", same[k]);
    }
    snprintf(cmd, sizeof cmd, "mv '%s/cache_away' '%s/cache'", base, base);
    CHECK(system(cmd) == 0, "cache moved back");
    memcpy(ST, saved, sizeof saved);
}

/* runs/ links and logs/ as `datm pipeline run` leaves them. */
static void fake_run_output(const char *out)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/runs' '%s/logs' && ln -sfn '%s' '%s/runs/img' && "
             "echo log > '%s/logs/img.log'", out, out, ST[0].dir, out, out);
    CHECK(system(cmd) == 0, "runs/ and logs/ of %s", out);
}

static void check_nested(void)
{
    char outer[600], inner[700];
    snprintf(outer, sizeof outer, "%s/nest", base);
    snprintf(inner, sizeof inner, "%s/paper-budget", outer);
    fake_run_output(outer);
    fake_run_output(inner);
    datm_error err = {0};
    CHECK(datm_pipeline_report(&P, ST, inner, NULL, &err) == DATM_OK, "inner: %s", err.msg);
    CHECK(datm_pipeline_report(&P, ST, outer, NULL, &err) == DATM_OK, "outer: %s", err.msg);
    char *in0 = snapshot(inner, NULL), *out0 = snapshot(outer, "paper-budget");
    CHECK(in0 && strstr(in0, "F ./figures/atoms_layer1.dat") && strstr(in0, "L ./runs/img ") &&
          strstr(in0, "F ./logs/img.log"), "inner listing: %s", S(in0));
    sleep(1);   /* a rewrite would show in the modification times */
    CHECK(datm_pipeline_report(&P, ST, outer, NULL, &err) == DATM_OK, "outer again: %s", err.msg);
    char *in1 = snapshot(inner, NULL);
    CHECK(in0 && in1 && !strcmp(in0, in1), "the outer report touched the inner one:\n%s\n--- now:\n%s",
          S(in0), S(in1));
    char *out1 = snapshot(outer, "paper-budget");
    CHECK(datm_pipeline_report(&P, ST, inner, NULL, &err) == DATM_OK, "inner again: %s", err.msg);
    char *out2 = snapshot(outer, "paper-budget");
    CHECK(out1 && out2 && !strcmp(out1, out2), "the inner report touched the outer one:\n%s\n"
          "--- now:\n%s", S(out1), S(out2));
    CHECK(out0 && out1 && strcmp(out0, out1), "the outer report was rewritten (times moved)");
    free(in0);
    free(in1);
    free(out0);
    free(out1);
    free(out2);
}

/* With gnuplot: two reports give the same PNG and SVG bytes. */
static void check_images(void)
{
    unsetenv("DATM_GNUPLOT");
    if (!datm_gnuplot_path()) {
        printf("gnuplot not installed: image bytes not checked\n");
        return;
    }
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/img_a", base);
    snprintf(b, sizeof b, "%s/img_b", base);
    datm_error err = {0};
    CHECK(datm_pipeline_report(&P, ST, a, NULL, &err) == DATM_OK, "report a: %s", err.msg);
    sleep(1);   /* a date written into an image would differ */
    CHECK(datm_pipeline_report(&P, ST, b, NULL, &err) == DATM_OK, "report b: %s", err.msg);
    static const char *const img[] = {"figures/atoms_layer1.png", "figures/atoms_layer1.svg",
                                      "figures/atoms_layer2.png", "figures/curves.png",
                                      "figures/curves.svg", "REPORT.md"};
    for (size_t k = 0; k < sizeof img / sizeof img[0]; k++) {
        char pa[700], pb[700], cmd[1500];
        snprintf(pa, sizeof pa, "%s/%s", a, img[k]);
        snprintf(pb, sizeof pb, "%s/%s", b, img[k]);
        CHECK(fixture_exists(pa), "%s rendered", img[k]);
        snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", pa, pb);
        CHECK(system(cmd) == 0, "%s differs between two reports", img[k]);
    }
    char *md = slurp2(a, "REPORT.md");
    CHECK(md && strstr(md, "- layer 1 (4 of 6 atoms): ![layer 1](figures/atoms_layer1.png)"),
          "rendered grid shown in REPORT.md");
    free(md);
}

int main(void)
{
    setenv("DATM_GNUPLOT", "none", 1);   /* .dat/.gp only until check_images */
    datm_log_set_level(DATM_LOG_ERROR);
    snprintf(base, sizeof base, "/tmp/datm_report_figs_XXXXXX");
    if (!mkdtemp(base)) { perror("mkdtemp"); return 1; }
    build();

    char out[600], cmd[1400];
    snprintf(out, sizeof out, "%s/out", base);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/figures' && echo old > '%s/figures/atoms_layer3.dat'",
             out, out);
    CHECK(system(cmd) == 0, "stale");
    datm_claims_summary sum;
    datm_error err = {0};
    CHECK(datm_pipeline_report(&P, ST, out, &sum, &err) == DATM_OK, "report: %s", err.msg);
    CHECK(sum.n[DATM_CLAIM_SHOWN] == 1 && sum.n[DATM_CLAIM_NOT_EVALUABLE] == 1 &&
          sum.n_strict_not_evaluable == 0 && sum.n_strict_not_reproduced == 0,
          "tally %d %d, strict %d %d", sum.n[DATM_CLAIM_SHOWN], sum.n[DATM_CLAIM_NOT_EVALUABLE],
          sum.n_strict_not_evaluable, sum.n_strict_not_reproduced);
    check_atoms(out);
    check_from_records(out);
    /* a claim naming a figure the pipeline lacks */
    datm_pipe_claim bad = P.claims[0];
    snprintf(bad.figure, sizeof bad.figure, "atom");
    CHECK(datm_pipe_claim_check(&P, &bad, &err) == DATM_E_INVALID &&
          strstr(err.msg, "demo.yaml:51:3: claims.g.figure: 'atom' is not a figure of this "
                          "pipeline (did you mean 'atoms'?)"), "bad figure: %s", err.msg);
    check_nested();
    check_images();

    datm_pipeline_free(&P);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (getenv("KEEP")) printf("kept %s\n", base);
    else if (!fails && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    printf("test_pipeline_report_figs: %d failure%s\n", fails, fails == 1 ? "" : "s");
    return fails ? 1 : 0;
}
