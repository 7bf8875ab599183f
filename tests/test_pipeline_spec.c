/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_pipeline_spec.c: spec loading and validation (engine/pipeline/spec.c, config.c).
 * - 14 distinct malformed specs: each message must name "file:LINE:" of the fault and the key
 * - overrides (nested keys, lists, sections created by an override, override errors)
 * - schema defaults applied and listed; required keys; derived name and output.dir
 * - the resolved YAML reloads to the same values and hash; hash ignores output.dir/threads
 * - SHA-256 against the FIPS 180-4 test vectors; sweep value expansion; did-you-mean */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "test_check.h"
#include "toy_catalog.h"   /* two fake variants, so the test does not depend on real models */

static const char *good =
    "name: t\n"
    "seed: 7\n"
    "data:\n"
    "  dataset: digits\n"
    "model:\n"
    "  variant: toy\n"
    "  k: 5\n"
    "  layers: [10, 5]\n"
    "train:\n"
    "  epochs: 3\n";

/* Loads text; expects failure whose message contains every needle. */
static void expect_error(const char *what, const char *text, const char *const *ov, int nov,
                         const char *n1, const char *n2, const char *n3)
{
    datm_spec s;
    datm_error err = {0};
    int rc = datm_spec_load_text(text, "spec.yaml", ov, nov, &toy_cat, &s, &err);
    if (rc == DATM_OK) {
        fprintf(stderr, "[%s] expected an error, got none\n", what);
        fails++;
        datm_spec_free(&s);
        return;
    }
    const char *needles[3] = {n1, n2, n3};
    for (int i = 0; i < 3; i++)
        if (needles[i] && !strstr(err.msg, needles[i])) {
            fprintf(stderr, "[%s] message lacks '%s':\n%s\n", what, needles[i], err.msg);
            fails++;
        }
}

static void test_malformed(void)
{
    /* 1 unknown key in a section, with did-you-mean */
    expect_error("unknown key", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\ntrain:\n"
                 "  epoch: 3\n", NULL, 0, "spec.yaml:7:3:", "'epoch'", "did you mean 'epochs'");
    /* 2 out of range, with the bounds */
    expect_error("range", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\ntrain:\n"
                 "  batch_size: 0\n", NULL, 0, "spec.yaml:7:15:", "train.batch_size",
                 "[1, 1000000000]");
    /* 3 wrong type: text for an int */
    expect_error("type int", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: five\n", NULL, 0,
                 "spec.yaml:5:6:", "model.k", "expected an integer");
    /* 4 wrong type: bool */
    expect_error("type bool", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n"
                 "  downward: maybe\n", NULL, 0, "spec.yaml:6:13:", "model.downward",
                 "true or false");
    /* 5 choice with did-you-mean */
    expect_error("choice", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n"
                 "  encoder: weibul\n", NULL, 0, "spec.yaml:6:12:", "model.encoder",
                 "did you mean 'weibull'");
    /* 6 unknown variant */
    expect_error("variant", "data:\n  dataset: d\nmodel:\n  variant: wha\n", NULL, 0,
                 "spec.yaml:4:12:", "model.variant", "did you mean 'whai'");
    /* 7 required key missing (model.k) */
    expect_error("required", "data:\n  dataset: d\nmodel:\n  variant: toy\n", NULL, 0,
                 "spec.yaml:3:1:", "model.k is required", NULL);
    /* 8 list element out of range names the item */
    expect_error("list item", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n"
                 "  layers: [10, 0, 5]\n", NULL, 0, "spec.yaml:6:11:", "item 2 of model.layers",
                 "out of range");
    /* 9 a list where a scalar is expected */
    expect_error("list for scalar", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n"
                 "evaluate:\n  samples: [1, 2]\n", NULL, 0, "spec.yaml:7:3:", "evaluate.samples",
                 "got a list");
    /* 10 YAML syntax error (bad indentation) with position */
    expect_error("syntax", "data:\n  dataset: d\n model:\n  variant: toy\n", NULL, 0,
                 "spec.yaml:3:", "YAML syntax error", NULL);
    /* 11 duplicate key */
    expect_error("duplicate", "data:\n  dataset: d\n  dataset: e\nmodel:\n  variant: toy\n  k: 1\n",
                 NULL, 0, "spec.yaml:3:3:", "duplicate key 'dataset'", "line 2");
    /* 12 unknown top-level key that belongs to a section */
    expect_error("top-level", "epochs: 3\ndata:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n",
                 NULL, 0, "spec.yaml:1:1:", "'epochs'", "train.epochs");
    /* 13 a section written as a value */
    expect_error("section scalar", "data: digits\nmodel:\n  variant: toy\n  k: 1\n", NULL, 0,
                 "spec.yaml:1:1:", "'data' is a section", NULL);
    /* 14 a value written as a mapping */
    expect_error("mapping for value", "data:\n  dataset:\n    name: d\nmodel:\n  variant: toy\n"
                 "  k: 1\n", NULL, 0, "spec.yaml:2:3:", "data.dataset", "got a mapping");
    /* 15 real not finite */
    expect_error("real", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n  lr: .nan\n",
                 NULL, 0, "spec.yaml:6:7:", "model.lr", "finite real");
    /* 16 two documents */
    expect_error("two docs", "data:\n  dataset: d\n---\nseed: 1\n", NULL, 0, "spec.yaml:4:",
                 "second", NULL);
    /* several errors are reported together */
    expect_error("several", "data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 0\ntrain:\n"
                 "  epochs: -1\n", NULL, 0, "spec.yaml:5:6:", "spec.yaml:7:11:", NULL);
}

static void test_overrides(void)
{
    const char *ov[] = {"train.epochs=9", "model.layers=[4, 3, 2]", "evaluate.samples=3",
                        "model.encoder=gamma", "seed=11", "output.figures=false"};
    datm_spec s;
    datm_error err = {0};
    int rc = datm_spec_load_text(good, "good.yaml", ov, 6, &toy_cat, &s, &err);
    CHECK(rc == DATM_OK);
    if (rc) { fprintf(stderr, "%s\n", err.msg); return; }
    CHECK(datm_config_int(datm_spec_section(&s, DATM_SEC_TRAIN), "epochs") == 9);
    const int64_t *l;
    int n = datm_config_int_list(datm_spec_section(&s, DATM_SEC_MODEL), "layers", &l);
    CHECK(n == 3 && l[0] == 4 && l[1] == 3 && l[2] == 2);
    CHECK(datm_config_int(datm_spec_section(&s, DATM_SEC_EVALUATE), "samples") == 3);
    CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_MODEL), "encoder"), "gamma"));
    CHECK(datm_config_int(datm_spec_section(&s, DATM_SEC_RUN), "seed") == 11);
    /* a variant's rules read the train: section through the model section (datm_config_train);
     * a copy of the section stands alone */
    CHECK(datm_config_train(datm_spec_section(&s, DATM_SEC_MODEL)) ==
          datm_spec_section(&s, DATM_SEC_TRAIN));
    datm_config *copy = NULL;
    CHECK(datm_config_copy(datm_spec_section(&s, DATM_SEC_MODEL), &copy, &err) == DATM_OK);
    CHECK(copy && datm_config_train(copy) == NULL);
    datm_config_destroy(&copy);
    CHECK(datm_config_bool(datm_spec_section(&s, DATM_SEC_OUTPUT), "figures") == 0);
    CHECK(s.n_overrides == 6 && !strcmp(s.overrides[1], "model.layers=[4, 3, 2]"));
    /* overridden keys are not defaults; untouched ones are */
    CHECK(!datm_config_is_default(datm_spec_section(&s, DATM_SEC_EVALUATE), "samples"));
    CHECK(datm_config_is_default(datm_spec_section(&s, DATM_SEC_EVALUATE), "burnin"));
    datm_spec_free(&s);

    /* override errors name the override and the key */
    const char *bad1[] = {"train.epoch=3"};
    expect_error("override unknown", good, bad1, 1, "override 'train.epoch=3'", "'epoch'",
                 "did you mean 'epochs'");
    const char *bad2[] = {"model.lr=2"};
    expect_error("override range", good, bad2, 1, "override 'model.lr=2'", "model.lr",
                 "out of range");
    const char *bad3[] = {"seed.x=1"};
    expect_error("override into value", good, bad3, 1, "override 'seed.x=1'", "'seed'", NULL);
    const char *bad4[] = {"nosuchsection.a=1"};
    expect_error("override section", good, bad4, 1, "override 'nosuchsection.a=1'",
                 "unknown top-level key 'nosuchsection'", NULL);
    /* an override may create a whole section and supply a required key */
    const char *mk[] = {"data.dataset=mnist", "model.variant=toy", "model.k=2"};
    rc = datm_spec_load_text("seed: 3\n", "min.yaml", mk, 3, &toy_cat, &s, &err);
    CHECK(rc == DATM_OK);
    if (!rc) {
        CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_DATA), "dataset"), "mnist"));
        datm_spec_free(&s);
    }
}

static void test_defaults_and_resolve(void)
{
    datm_spec s, s2;
    datm_error err = {0};
    int rc = datm_spec_load_text(good, "dir/good.yaml", NULL, 0, &toy_cat, &s, &err);
    CHECK(rc == DATM_OK);
    if (rc) { fprintf(stderr, "%s\n", err.msg); return; }
    /* schema defaults are filled and listed */
    CHECK(datm_config_int(datm_spec_section(&s, DATM_SEC_TRAIN), "batch_size") == 200);
    CHECK(fabs(datm_config_real(datm_spec_section(&s, DATM_SEC_MODEL), "lr") - 0.001) < 1e-15);
    char buf[8192];
    int nd = datm_spec_defaults_applied(&s, buf, sizeof buf);
    CHECK(nd > 10);
    CHECK(strstr(buf, "train.batch_size\n") != NULL);
    CHECK(strstr(buf, "model.lr\n") != NULL);
    CHECK(strstr(buf, "train.epochs\n") == NULL);   /* given in the spec */
    CHECK(strstr(buf, "model.layers\n") == NULL);
    /* name given; output.dir derived from it */
    CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_OUTPUT), "dir"), "results/t"));
    /* resolved text reloads to the same values and hash */
    rc = datm_spec_load_text(s.resolved, "resolved.yaml", NULL, 0, &toy_cat, &s2, &err);
    CHECK(rc == DATM_OK);
    if (!rc) {
        CHECK(!strcmp(s.hash, s2.hash));
        CHECK(!strcmp(s.resolved, s2.resolved));
        datm_spec_free(&s2);
    }
    /* the commented form marks defaults */
    char *c = datm_spec_to_yaml(&s, 1, &err);
    CHECK(c && strstr(c, "batch_size: 200  # default") && strstr(c, "epochs: 3\n"));
    datm_free(c);
    /* the hash ignores output.dir and threads, but not the seed */
    const char *o1[] = {"output.dir=elsewhere", "threads=2"};
    rc = datm_spec_load_text(good, "dir/good.yaml", o1, 2, &toy_cat, &s2, &err);
    CHECK(rc == DATM_OK && !strcmp(s.hash, s2.hash));
    if (!rc) datm_spec_free(&s2);
    const char *o2[] = {"seed=8"};
    rc = datm_spec_load_text(good, "dir/good.yaml", o2, 1, &toy_cat, &s2, &err);
    CHECK(rc == DATM_OK && strcmp(s.hash, s2.hash) != 0);
    if (!rc) datm_spec_free(&s2);
    datm_spec_free(&s);
    /* name derived from the file name */
    rc = datm_spec_load_text("data:\n  dataset: d\nmodel:\n  variant: toy\n  k: 1\n",
                             "x/my-exp.yaml", NULL, 0, &toy_cat, &s, &err);
    CHECK(rc == DATM_OK);
    if (!rc) {
        CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_RUN), "name"), "my-exp"));
        CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_OUTPUT), "dir"),
                      "results/my-exp"));
        datm_spec_free(&s);
    }
    /* strings that look like other types round-trip through quotes */
    const char *o3[] = {"model.tag='true'"};
    rc = datm_spec_load_text(good, "g.yaml", o3, 1, &toy_cat, &s, &err);
    CHECK(rc == DATM_OK);
    if (!rc) {
        CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_MODEL), "tag"), "true"));
        rc = datm_spec_load_text(s.resolved, "r.yaml", NULL, 0, &toy_cat, &s2, &err);
        CHECK(rc == DATM_OK && !strcmp(datm_config_str(datm_spec_section(&s2, DATM_SEC_MODEL),
                                                       "tag"), "true"));
        if (!rc) datm_spec_free(&s2);
        datm_spec_free(&s);
    }
}

static void test_sha256(void)
{
    char h[65];
    datm_sha256_text("abc", h);
    CHECK(!strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    datm_sha256_text("", h);
    CHECK(!strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    datm_sha256_text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
    CHECK(!strcmp(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    /* one million 'a' fed in uneven pieces */
    datm_sha256 c;
    datm_sha256_init(&c);
    char a[1000];
    memset(a, 'a', sizeof a);
    for (int i = 0, k = 1; i < 1000000; i += k, k = k % 997 + 1)
        datm_sha256_update(&c, a, (size_t)(i + k <= 1000000 ? k : 1000000 - i));
    datm_sha256_hex(&c, h);
    CHECK(!strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

static void test_sweep_expand(void)
{
    char *v[16];
    datm_error err = {0};
    int n = datm_sweep_expand("a,b,c", v, 16, &err);
    CHECK(n == 3 && !strcmp(v[0], "a") && !strcmp(v[2], "c"));
    for (int i = 0; i < n; i++) datm_free(v[i]);
    n = datm_sweep_expand("range(0,5)", v, 16, &err);
    CHECK(n == 5 && !strcmp(v[0], "0") && !strcmp(v[4], "4"));
    for (int i = 0; i < n; i++) datm_free(v[i]);
    n = datm_sweep_expand("range(10,0,-5)", v, 16, &err);
    CHECK(n == 2 && !strcmp(v[0], "10") && !strcmp(v[1], "5"));
    for (int i = 0; i < n; i++) datm_free(v[i]);
    n = datm_sweep_expand("[1,2],[3,4]", v, 16, &err);
    CHECK(n == 2 && !strcmp(v[0], "[1,2]") && !strcmp(v[1], "[3,4]"));
    for (int i = 0; i < n; i++) datm_free(v[i]);
    n = datm_sweep_expand("0.5", v, 16, &err);
    CHECK(n == 1 && !strcmp(v[0], "0.5"));
    for (int i = 0; i < n; i++) datm_free(v[i]);
    CHECK(datm_sweep_expand("range(0,x)", v, 16, &err) == -1 && strstr(err.msg, "range"));
    CHECK(datm_sweep_expand("range(3,3)", v, 16, &err) == -1);
}

static void test_config_direct(void)
{
    datm_config *c = NULL;
    datm_error err = {0};
    /* model tests create configurations from a schema without a spec */
    CHECK(datm_config_create(toy_schema, "model", &c, &err) != DATM_OK);   /* k required */
    CHECK(strstr(err.msg, "model.k is required") != NULL);
    CHECK(datm_config_create_partial(toy_schema, "model", &c, &err) == DATM_OK);
    CHECK(datm_config_set(c, "k", "4", &err) == DATM_OK);
    CHECK(datm_config_check_complete(c, &err) == DATM_OK);
    CHECK(datm_config_set(c, "layrs", "[1]", &err) != DATM_OK && strstr(err.msg, "'layers'"));
    CHECK(datm_config_set(c, "eta", "[0.5, 2.5e-1]", &err) == DATM_OK);
    const double *e;
    CHECK(datm_config_real_list(c, "eta", &e) == 2 && e[1] == 0.25);
    char buf[64];
    datm_config_format(c, "eta", buf, sizeof buf);
    CHECK(!strcmp(buf, "[0.5, 0.25]"));
    datm_config_format(c, "lr", buf, sizeof buf);
    CHECK(!strcmp(buf, "0.001"));
    datm_config *d = NULL;
    CHECK(datm_config_copy(c, &d, &err) == DATM_OK && datm_config_int(d, "k") == 4);
    datm_config_destroy(&d);
    datm_config_destroy(&c);
    CHECK(c == NULL);
    const char *cands[] = {"batch_size", "epochs", "eval_every"};
    CHECK(datm_closest_name("batchsize", cands, 3) == cands[0]);
    CHECK(datm_closest_name("zzzzzz", cands, 3) == NULL);
}

int main(void)
{
    test_malformed();
    test_overrides();
    test_defaults_and_resolve();
    test_sha256();
    test_sweep_expand();
    test_config_direct();
    return check_result();
}
