/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_io */
/* tests/test_io_figures.c: the gnuplot figure writer and the result readers.
 * - a fixture result.h5 (2 layers, 6x6 pixel vocabulary, 12 curve rows) gives every standard
 *   figure of datm_figures_for_run as .dat + .gp, and .png + .svg when gnuplot is installed;
 * - the .dat numbers equal the curves (non-finite rows dropped);
 * - with DATM_GNUPLOT=none the .dat/.gp are kept, no .png, and the call still succeeds;
 * - grouped bars and image grids (the brightest image row of a tile is the one the fixture
 *   topic lights); a figure with no finite point is refused;
 * - metrics, curves and /topics read back as written; pixel vocabularies are recognised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/figures.h"
#include "result_fixture.h"
#include "test_check.h"


static int has(const char *dir, const char *name, const char *ext)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.%s", dir, name, ext);
    return fixture_exists(p);
}

int main(void)
{
    char root[256], run[300], figs[400], cmd[800];
    snprintf(root, sizeof root, "/tmp/datm_test_io_figures_%d", (int)getpid());
    snprintf(run, sizeof run, "%s/run_a", root);
    snprintf(figs, sizeof figs, "%s/figures", run);
    const int widths[2] = {6, 3};
    fixture_run fr = {.spec = "model:\n  variant: whai\n", .n_metrics = 2,
                      .metric_names = {"perplexity", "train_s"}, .metric_values = {812.5, 3.25},
                      .n_rows = 12, .ppl0 = 1000, .n_layers = 2, .img = 6, .widths = widths};
    if (fixture_write(run, &fr)) return 1;
    const int gp = datm_gnuplot_path() != NULL;
    if (!gp) fprintf(stderr, "gnuplot not installed: checking .dat/.gp only\n");

    datm_error err = {0};
    CHECK(datm_figures_for_run(run, &err) == 0);
    if (err.msg[0]) fprintf(stderr, "%s\n", err.msg);
    const char *names[] = {"perplexity_vs_iteration", "perplexity_vs_time", "loss", "kl_layers",
                           "step_size", "topics_layer_1", "topics_layer_2"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK(has(figs, names[i], "dat") && has(figs, names[i], "gp"));
        if (gp) CHECK(has(figs, names[i], "png") && has(figs, names[i], "svg"));
        if (!has(figs, names[i], "dat")) fprintf(stderr, "missing %s\n", names[i]);
    }

    /* the .dat holds the perplexity curve without the NaN row */
    char p[1200];
    snprintf(p, sizeof p, "%s/perplexity_vs_iteration.dat", figs);
    FILE *f = fopen(p, "r");
    char line[256];
    int rows = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        double x, y;
        if (sscanf(line, "%lf %lf", &x, &y) != 2) { CHECK(0); continue; }
        rows++;
        int i = rows;   /* row 0 (NaN) dropped: file row r is curve row r */
        CHECK(x == 10.0 * (i + 1));
        CHECK(fabs(y - 1000 * pow(0.9, i)) <= 1e-12 * y);
    }
    if (f) fclose(f);
    CHECK(rows == 11);
    /* the kl figure has one block per layer */
    snprintf(p, sizeof p, "%s/kl_layers.gp", figs);
    char *gps = fixture_slurp(p);
    CHECK(gps && strstr(gps, "index 0") && strstr(gps, "index 1") && strstr(gps, "'layer 2'") &&
          strstr(gps, "pngcairo") && strstr(gps, ".svg"));
    free(gps);

    /* the image grid: tile 0 of layer 1 lights image row 0 (pixels p_0_*) */
    snprintf(p, sizeof p, "%s/topics_layer_1.dat", figs);
    f = fopen(p, "r");
    double tile_row_sum[6] = {0};
    int r = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        r++;
        if (r < 1 || r > 6) continue;   /* mosaic row 0 is the border; rows 1..6 = tile row 0 */
        char *s = line;
        for (int c = 0; c <= 6; c++) {
            char *end;
            double v = strtod(s, &end);
            if (end == s) break;
            s = end;
            if (c >= 1) tile_row_sum[r - 1] += v;
        }
    }
    if (f) fclose(f);
    CHECK(tile_row_sum[0] > 5.0 && tile_row_sum[1] < 1.0 && tile_row_sum[5] < 1.0);

    /* no gnuplot: .dat/.gp kept, no png, success */
    char figs2[500];
    snprintf(figs2, sizeof figs2, "%s/nogp", root);
    setenv("DATM_GNUPLOT", "none", 1);
    CHECK(datm_gnuplot_path() == NULL);
    char res[600];
    snprintf(res, sizeof res, "%s/result.h5", run);
    int made = 0;
    CHECK(datm_figures_for_result(res, figs2, &made, &err) == 0 && made == 7);
    CHECK(has(figs2, "loss", "dat") && has(figs2, "loss", "gp") && !has(figs2, "loss", "png"));
    unsetenv("DATM_GNUPLOT");

    /* grouped bars: error vs depth for two widths */
    const char *cats[3] = {"1 layer", "2 layers", "3 layers"};
    const double e1[3] = {0.31, 0.27, 0.25}, e2[3] = {0.29, NAN, 0.22};
    datm_series bs[2] = {{"K=128", NULL, e1, 3}, {"K=256", NULL, e2, 3}};
    datm_fig_opts bo = {.title = "error vs depth", .xlabel = "depth", .ylabel = "error rate"};
    int rendered = -1;
    CHECK(datm_figure_bars(root, "bars", &bo, cats, 3, bs, 2, &rendered, &err) == 0);
    CHECK(has(root, "bars", "dat") && has(root, "bars", "gp"));
    CHECK(rendered == gp);
    snprintf(p, sizeof p, "%s/bars.dat", root);
    char *bd = fixture_slurp(p);
    CHECK(bd && strstr(bd, "\"2 layers\" 0.27000000000000002 NaN"));
    free(bd);

    /* a figure without a finite point is refused */
    const double nanv[2] = {NAN, NAN}, xs[2] = {1, 2};
    datm_series ns = {"none", xs, nanv, 2};
    CHECK(datm_figure_lines(root, "empty", NULL, &ns, 1, NULL, &err) == DATM_E_INVALID);
    /* log axes drop non-positive points */
    const double ly[3] = {1e-3, 0, 1e-5};
    datm_series ls = {"it's", xs, ly, 2};
    datm_fig_opts lo = {.logy = 1, .title = "quote ' in title"};
    CHECK(datm_figure_lines(root, "logy", &lo, &ls, 1, &rendered, &err) == 0 && rendered == gp);

    /* readers */
    datm_h5 *h = NULL;
    CHECK(datm_result_open(run, 0, &h, &err) == 0);
    datm_result_metrics m;
    double v = 0;
    CHECK(datm_result_metrics_read(h, &m, &err) == 0 && m.n == 4);   /* + diversity_1, diversity_2 */
    CHECK(datm_result_metrics_get(&m, "diversity_2", &v) == 0 && v > 0 && v <= 1);
    CHECK(datm_result_metrics_get(&m, "perplexity", &v) == 0 && v == 812.5);
    CHECK(datm_result_metrics_get(&m, "nope", &v) == -1);
    datm_result_metrics_free(&m);
    datm_result_curves c;
    CHECK(datm_result_curves_read(h, &c, &err) == 0 && c.n_rows == 12 && c.n_cols == 8);
    CHECK(datm_result_curves_col(&c, "step_2") && datm_result_curves_col(&c, "step_2")[1] == 1e-3 * 2 / 2);
    datm_result_curves_free(&c);
    datm_topic_set ts, ts2;
    CHECK(datm_topics_read(h, &ts, &err) == 0 && ts.n_layers == 2 && ts.n_vocab == 36);
    CHECK(datm_topics_compute(h, NULL, &ts2, &err) == 0);
    CHECK(ts.layer[1].k == 3 && ts.layer[1].link_n == 5 && ts.layer[0].top_n == 25);
    CHECK(!memcmp(ts.layer[0].top_ids, ts2.layer[0].top_ids, 6 * 25 * sizeof(int32_t)));
    CHECK(!memcmp(ts.layer[1].link_ids, ts2.layer[1].link_ids, 3 * 5 * sizeof(int32_t)));
    CHECK(ts.layer[0].diversity == ts2.layer[0].diversity && ts.layer[0].diversity > 0);
    /* fixture topic k of layer 1 lights image row k: its top 6 words are pixels of row k */
    for (int j = 0; j < 6; j++) CHECK(ts.layer[0].top_ids[2 * 25 + j] / 6 == 2);
    datm_topic_set_free(&ts);
    datm_topic_set_free(&ts2);
    char **vocab = NULL;
    int64_t V = 0;
    int ih = 0, iw = 0;
    CHECK(datm_result_vocab(h, &vocab, &V, &err) == 0 && V == 36);
    CHECK(datm_vocab_image_shape(vocab, V, &ih, &iw) == 1 && ih == 6 && iw == 6);
    char *tmpv = vocab[1]; vocab[1] = vocab[2]; vocab[2] = tmpv;   /* out of order */
    CHECK(datm_vocab_image_shape(vocab, V, &ih, &iw) == 0);
    datm_h5_strings_free(vocab, V);
    char *words[2] = {"apple", "p_0_0"};
    CHECK(datm_vocab_image_shape(words, 2, &ih, &iw) == 0);
    datm_h5_close(&h);
    CHECK(datm_result_open(root, 0, &h, &err) == DATM_E_IO && strstr(err.msg, root));

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (!fails && !getenv("DATM_TEST_KEEP") && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", root);
    if (fails) { fprintf(stderr, "%d check(s) failed (files kept in %s)\n", fails, root); return 1; }
    printf("test_io_figures: ok\n");
    return 0;
}
