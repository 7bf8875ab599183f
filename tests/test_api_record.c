/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_api */
/* tests/test_api_record.c: the functions of include/datm.h's minor version 1 (the run's record
 * and the topic diagnostics) on fixture results (result_fixture.h):
 * - a finished run: its state, the spec as dotted keys in order, a curve's values, the stored
 *   diagnostics (nearest topic and cosine, diversity equal to the stored metric; usage and
 *   coherence absent: -1), the children of layer 2 equal to the largest entries of Phi(2);
 * - recomputed against a reference corpus directory, with a usage written beside the model:
 *   only the measures asked for, each layer mean the average of its topics', the unused flags
 *   (use < share / K_l) and their count follow datm_topics_flag_unused;
 * - a run not finished (result.h5.part) without a model opens, and inference says why not;
 * - a result without the spec attribute takes the spec from spec.resolved.yaml;
 * - unknown names, layers out of range and bad arguments are errors naming them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datm.h"
#include "result_fixture.h"
#include "test_check.h"

static char root[256];

static const char *spec_a = "name: a\nseed: 1\nmodel:\n  variant: whai\n  layers: [6, 3]\n"
                            "train:\n  epochs: 4\n";

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

/* The stored record and diagnostics of a finished fixture run. */
static void test_record(void)
{
    static const int widths[] = {6, 3};
    fixture_run r = {.spec = spec_a, .n_metrics = 1, .metric_names = {"perplexity"},
                     .metric_values = {100.0}, .n_rows = 4, .ppl0 = 200.0, .n_layers = 2,
                     .img = 6, .widths = widths};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/a", root);
    CHECK(fixture_write(dir, &r) == 0);
    datm_trained *m = NULL;
    datm_error e = {0};
    CHECK_OK(datm_open(dir, &m, &e), e);
    if (!m) return;
    CHECK(DATM_API_MINOR >= 1);
    CHECK(!strcmp(datm_run_state(m), "COMPLETED"));
    static const char *const keys[] = {"name", "seed", "model.variant", "model.layers", "train.epochs"};
    int n = 0;
    for (const char *k; (k = datm_param_name(m, n)); n++)
        CHECK(n < 5 && !strcmp(k, keys[n]), "param %d is %s", n, k);
    CHECK(n == 5, "%d params", n);
    CHECK(datm_param(m, "model.layers") && !strcmp(datm_param(m, "model.layers"), "[6, 3]"));
    CHECK(datm_param(m, "model.nope") == NULL);
    int64_t rows = -1;
    const double *ppl = datm_curve(m, "perplexity", &rows);
    CHECK(ppl && rows == 4 && isnan(ppl[0]));
    if (ppl && rows == 4) CHECK_NEAR(ppl[3], 200.0 * 0.9 * 0.9 * 0.9, 1e-9);
    CHECK(datm_curve(m, "nope", &rows) == NULL && rows == 0);

    double x[8], v;
    CHECK_OK(datm_topic_stat(m, 1, "nearest", x, &e), e);
    for (int k = 0; k < 6; k++) CHECK(x[k] >= 0 && x[k] < 6 && x[k] != k, "nearest[%d] = %g", k, x[k]);
    CHECK_OK(datm_topic_stat(m, 2, "cosine", x, &e), e);
    for (int k = 0; k < 3; k++) CHECK(x[k] > 0 && x[k] <= 1 + 1e-9, "cosine[%d] = %g", k, x[k]);
    CHECK(datm_topic_stat(m, 1, "use", x, &e) == -1 && strstr(e.msg, "use"));
    CHECK(datm_topic_stat(m, 1, "npmi", x, &e) == -1);
    CHECK(datm_topic_stat(m, 1, "bogus", x, &e) == DATM_E_INVALID && strstr(e.msg, "bogus"));
    CHECK(datm_topic_stat(m, 3, "nearest", x, &e) == DATM_E_INVALID && strstr(e.msg, "layer 3"));
    double div = NAN;
    CHECK_OK(datm_layer_stat(m, 1, "diversity", &v, &e), e);
    CHECK(datm_metric(m, "diversity_1", &div) == 0 && v == div, "diversity %g vs metric %g", v, div);
    CHECK(datm_layer_stat(m, 1, "unused", &v, &e) == -1);
    CHECK(datm_layer_stat(m, 1, "npmi_live", &v, &e) == -1);
    CHECK(datm_layer_stat(m, 1, "bogus", &v, &e) == DATM_E_INVALID);
    CHECK(datm_layer_stat(m, 0, "dup_cos", &v, &e) == 0 && v == 0.8);
    CHECK(datm_layer_stat(m, 0, "unused_share", &v, &e) == 0 && v == 0.1);
    CHECK(datm_layer_stat(m, 0, "npmi", &v, &e) == -1);
    CHECK(datm_topics_reference(m) == NULL);

    /* children = the largest entries of each column of Phi(2) (6 x 3), largest first */
    float phi[18], w[6];
    int32_t ids[6];
    CHECK_OK(datm_phi(m, 2, phi, &e), e);
    CHECK_OK(datm_top_children(m, 2, 2, ids, w, &e), e);
    for (int k = 0; k < 3; k++) {
        int best = 0;
        for (int i = 1; i < 6; i++) if (phi[i * 3 + k] > phi[best * 3 + k]) best = i;
        CHECK(ids[2 * k] == best && w[2 * k] == phi[best * 3 + k], "child of topic %d", k);
        CHECK(w[2 * k + 1] <= w[2 * k] && w[2 * k + 1] == phi[ids[2 * k + 1] * 3 + k]);
    }
    CHECK(datm_top_children(m, 1, 2, ids, w, &e) == DATM_E_INVALID);
    CHECK(datm_top_children(m, 2, 7, ids, w, &e) == DATM_E_INVALID);
    CHECK(datm_topics_flag_unused(m, -1.0, &e) == DATM_E_INVALID);
    datm_close(m);
}

/* Recomputed with a reference corpus and a usage: measures, means, unused flags. */
static void test_evaluate(void)
{
    static const int widths[] = {6, 3};
    fixture_run r = {.spec = spec_a, .n_layers = 2, .img = 6, .widths = widths};
    char dir[400], corpus[400], path[600];
    snprintf(dir, sizeof dir, "%s/b", root);
    snprintf(corpus, sizeof corpus, "%s/corpus", root);
    CHECK(fixture_write(dir, &r) == 0);
    /* /usage: layer-1 shares, two of them below 0.5 / 6 */
    static const double use1[6] = {0.4, 0.3, 0.2, 0.06, 0.03, 0.01}, use2[3] = {0.5, 0.3, 0.2};
    const double *tok[2] = {use1, use2};
    const int64_t k[3] = {36, 6, 3};
    datm_error e = {0};
    datm_h5 *f = NULL;
    snprintf(path, sizeof path, "%s/result.h5", dir);
    CHECK_OK(datm_h5_open(path, 1, &f, &e), e);
    CHECK_OK(datm_usage_write(f, 2, k, tok, tok, 10, &e), e);
    datm_h5_close(&f);
    /* a reference corpus over the fixture's 36 pixel words: 12 documents, each one image row */
    snprintf(path, sizeof path, "mkdir -p '%s'", corpus);
    CHECK(system(path) == 0);
    snprintf(path, sizeof path, "%s/vocab.txt", corpus);
    FILE *vf = fopen(path, "w");
    for (int i = 0; vf && i < 36; i++) fprintf(vf, "p_%d_%d\n", i / 6, i % 6);
    if (vf) fclose(vf);
    snprintf(path, sizeof path, "%s/train.docword", corpus);
    FILE *df = fopen(path, "w");
    if (df) {
        fprintf(df, "12\n36\n72\n");
        for (int d = 0; d < 12; d++)
            for (int j = 0; j < 6; j++) fprintf(df, "%d %d %d\n", d + 1, (d % 6) * 6 + j + 1, 1 + j % 2);
        fclose(df);
    }
    datm_trained *m = NULL;
    CHECK_OK(datm_open(dir, &m, &e), e);
    if (!m) return;
    CHECK(datm_topics_evaluate(m, NULL, "bogus", -1, -1, &e) != 0 && strstr(e.msg, "bogus"));
    CHECK(datm_topics_evaluate(m, "/nonexistent/ref", NULL, -1, -1, &e) != 0 &&
          strstr(e.msg, "/nonexistent/ref"));
    CHECK_OK(datm_topics_evaluate(m, corpus, "npmi,cv", 4, 0, &e), e);
    double x[6], live[6], v;
    CHECK(datm_layer_stat(m, 0, "npmi", &v, &e) == 0 && datm_layer_stat(m, 0, "cv", &v, &e) == 0);
    CHECK(datm_layer_stat(m, 0, "uci", &v, &e) == -1);
    CHECK(datm_layer_stat(m, 0, "top_n", &v, &e) == 0 && v == 4);
    CHECK(datm_topics_reference(m) && strstr(datm_topics_reference(m), corpus));
    for (int l = 1; l <= 2; l++) {
        const int K = l == 1 ? 6 : 3;
        CHECK_OK(datm_topic_stat(m, l, "npmi", x, &e), e);
        double s = 0;
        int n = 0;
        for (int t = 0; t < K; t++) if (isfinite(x[t])) { s += x[t]; n++; }
        CHECK(n > 0 && datm_layer_stat(m, l, "npmi", &v, &e) == 0);
        if (n) CHECK_NEAR(v, s / n, 1e-12);
        CHECK(datm_topic_stat(m, l, "umass", x, &e) == -1);
        CHECK_OK(datm_topic_stat(m, l, "kl", x, &e), e);
        for (int t = 0; t < K; t++) CHECK(x[t] >= 0, "kl[%d] = %g", t, x[t]);
    }
    CHECK_OK(datm_topic_stat(m, 1, "use", x, &e), e);
    for (int t = 0; t < 6; t++) CHECK_NEAR(x[t], use1[t], 1e-12);
    for (int pass = 0; pass < 2; pass++) {
        const double share = pass ? 0.5 : 0.1;
        CHECK_OK(datm_topics_flag_unused(m, share, &e), e);
        CHECK_OK(datm_topic_stat(m, 1, "unused", live, &e), e);
        int n = 0;
        for (int t = 0; t < 6; t++) {
            CHECK(live[t] == (use1[t] < share / 6), "share %g topic %d", share, t);
            n += live[t] != 0;
        }
        CHECK(datm_layer_stat(m, 1, "unused", &v, &e) == 0 && v == n, "%g unused, %d", v, n);
        CHECK(datm_layer_stat(m, 0, "unused_share", &v, &e) == 0 && v == share);
    }
    datm_close(m);
}

/* An unfinished run without a model; a result whose spec is only in spec.resolved.yaml. */
static void test_unfinished(void)
{
    fixture_run r = {.spec = spec_a, .status = "RUNNING", .n_metrics = 1,
                     .metric_names = {"train_s"}, .metric_values = {1.5}};
    char dir[400], a[600], b[600];
    snprintf(dir, sizeof dir, "%s/c", root);
    CHECK(fixture_write(dir, &r) == 0);
    snprintf(a, sizeof a, "%s/result.h5", dir);
    snprintf(b, sizeof b, "%s/result.h5.part", dir);
    CHECK(rename(a, b) == 0);
    datm_trained *m = NULL;
    datm_error e = {0};
    CHECK_OK(datm_open(dir, &m, &e), e);
    if (!m) return;
    CHECK(datm_layers(m) == 0 && !strcmp(datm_run_state(m), "RUNNING"));
    CHECK(datm_param(m, "train.epochs") && !strcmp(datm_param(m, "train.epochs"), "4"));
    const int64_t row_ptr[2] = {0, 1};
    const int32_t col[1] = {0};
    const float count[1] = {1.0f};
    datm_docs *d = NULL;
    float th[8], *theta[1] = {th};
    CHECK_OK(datm_docs_from_csr(1, 1, row_ptr, col, count, &d, &e), e);
    CHECK(datm_infer(m, d, 0, 1, 1, theta, &e) != 0 && strstr(e.msg, "phi_1"), "%s", e.msg);
    double x[4];
    CHECK(datm_topic_stat(m, 1, "nearest", x, &e) > 0);
    datm_docs_free(d);
    datm_close(m);

    static const int widths[] = {4};
    fixture_run s = {.n_layers = 1, .img = 4, .widths = widths};
    snprintf(dir, sizeof dir, "%s/d", root);
    CHECK(fixture_write(dir, &s) == 0);
    snprintf(a, sizeof a, "%s/spec.resolved.yaml", dir);
    write_text(a, spec_a);
    CHECK_OK(datm_open(dir, &m, &e), e);
    if (!m) return;
    CHECK(datm_spec_text(m) && !strcmp(datm_spec_text(m), spec_a));
    CHECK(datm_param(m, "model.variant") && !strcmp(datm_param(m, "model.variant"), "whai"));
    datm_close(m);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/datm_test_api_record_XXXXXX");
    if (!mkdtemp(root)) { perror("mkdtemp"); return 1; }
    test_record();
    test_evaluate();
    test_unfinished();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return check_result();
}
