/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_spec_compose.c: spec composition with `defaults:` (engine/pipeline/compose.c).
 * - merge order: defaults in order, then the spec's keys, then overrides; mappings merge key
 *   by key, values and lists replace; an empty section adds nothing; diamonds are allowed
 * - every value remembers the file:line it came from (datm check --origins)
 * - a composed spec has the hash of the same spec written out flat
 * - 13 error cases, each message naming the file:line of every place involved and the key */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_check.h"
#include "toy_catalog.h"

static char dir[256];

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    mkdir(p, 0755);
    *slash = '/';
    FILE *f = fopen(p, "w");
    if (!f) { perror(p); exit(1); }
    fputs(text, f);
    fclose(f);
}

static int load(const char *name, const char *const *ov, int nov, datm_spec *s, datm_error *err)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return datm_spec_load(p, ov, nov, &toy_cat, s, err);
}

static const char *where_of(const datm_spec *s, const char *key)
{
    for (int i = 0; i < s->n_where; i++)
        if (!strcmp(s->where[i].key, key)) return s->where[i].where;
    return "";
}

/* Expects `name` to fail with a message holding every needle (NULL ends the list). */
static void expect_error(const char *name, const char *const *ov, int nov, ...)
{
    datm_spec s;
    datm_error err = {0};
    if (load(name, ov, nov, &s, &err) == DATM_OK) {
        CHECK(0, "%s: expected an error, got none", name);
        datm_spec_free(&s);
        return;
    }
    va_list ap;
    va_start(ap, nov);
    for (const char *n = va_arg(ap, const char *); n; n = va_arg(ap, const char *))
        CHECK(strstr(err.msg, n) != NULL, "%s: message lacks '%s':\n%s", name, n, err.msg);
    va_end(ap);
}

static const char *base =
    "# shared settings\n"                 /* 1 */
    "seed: 3\n"                           /* 2 */
    "data:\n"                             /* 3 */
    "  dataset: digits\n"                 /* 4 */
    "model:\n"                            /* 5 */
    "  variant: toy\n"                    /* 6 */
    "  k: 5\n"                            /* 7 */
    "  layers: [10, 5]\n"                 /* 8 */
    "  eta: [0.5]\n"                      /* 9 */
    "train:\n"                            /* 10 */
    "  epochs: 3\n";                      /* 11 */

static void test_merge(void)
{
    put("base/common.yaml", base);
    put("base/deep.yaml", "model:\n  layers: [20, 10, 5]\n  lr: 0.01\n");
    put("exp/a.yaml", "defaults: [../base/common.yaml, ../base/deep.yaml]\n"
                      "name: a\n"
                      "model:\n"
                      "  layers: [30]\n"
                      "train:\n");
    const char *ov[] = {"model.k=9"};
    datm_spec s;
    datm_error err = {0};
    int rc = load("exp/a.yaml", ov, 1, &s, &err);
    CHECK(rc == DATM_OK, "compose a.yaml: %s", err.msg);
    if (rc) return;
    const int64_t *l;
    const double *eta;
    const datm_config *m = datm_spec_section(&s, DATM_SEC_MODEL);
    CHECK(datm_config_int_list(m, "layers", &l) == 1 && l[0] == 30, "spec's layers win");
    CHECK(datm_config_real(m, "lr") == 0.01, "the second default overrides the first");
    CHECK(datm_config_real_list(m, "eta", &eta) == 1 && eta[0] == 0.5, "first default kept");
    CHECK(datm_config_int(m, "k") == 9, "override wins over every file");
    CHECK(datm_config_int(datm_spec_section(&s, DATM_SEC_TRAIN), "epochs") == 3,
          "an empty 'train:' keeps the base's keys");
    CHECK(datm_config_int(datm_spec_section(&s, DATM_SEC_RUN), "seed") == 3, "top-level key");
    CHECK(strstr(where_of(&s, "model.layers"), "exp/a.yaml:4:") != NULL, "origin of layers: %s",
          where_of(&s, "model.layers"));
    CHECK(strstr(where_of(&s, "model.lr"), "base/deep.yaml:3:") != NULL, "origin of lr: %s",
          where_of(&s, "model.lr"));
    CHECK(strstr(where_of(&s, "model.eta"), "base/common.yaml:9:") != NULL, "origin of eta: %s",
          where_of(&s, "model.eta"));
    CHECK(strstr(where_of(&s, "model.k"), "override 'model.k=9'") != NULL, "origin of k: %s",
          where_of(&s, "model.k"));
    CHECK(strstr(where_of(&s, "train.epochs"), "base/common.yaml:11:") != NULL,
          "origin of epochs: %s", where_of(&s, "train.epochs"));

    /* the same spec written flat has the same resolved text and hash */
    datm_spec flat;
    rc = datm_spec_load_text("name: a\nseed: 3\ndata: {dataset: digits}\nmodel:\n  variant: toy\n"
                             "  k: 9\n  layers: [30]\n  eta: [0.5]\n  lr: 0.01\ntrain: {epochs: 3}\n",
                             "flat.yaml", NULL, 0, &toy_cat, &flat, &err);
    CHECK(rc == DATM_OK, "flat: %s", err.msg);
    if (!rc) {
        CHECK(!strcmp(flat.hash, s.hash), "composed and flat hashes differ");
        CHECK(!strcmp(flat.resolved, s.resolved), "composed and flat resolved texts differ");
        datm_spec_free(&flat);
    }
    char *o = datm_spec_origins_yaml(&s, &err);
    CHECK(o && strstr(o, "layers: [30]  # ") && strstr(o, "exp/a.yaml:4:"), "origins text:\n%s",
          o ? o : err.msg);
    CHECK(o && strstr(o, "downward: true  # default"), "origins mark defaults");
    datm_free(o);
    datm_spec_free(&s);

    /* a diamond (two bases sharing a third) is not a cycle */
    put("d/root.yaml", base);
    put("d/left.yaml", "defaults: [root.yaml]\nmodel: {lr: 0.02}\n");
    put("d/right.yaml", "defaults: [root.yaml]\nmodel: {tag: r}\n");
    put("d/spec.yaml", "defaults: [left.yaml, right.yaml]\n");
    rc = load("d/spec.yaml", NULL, 0, &s, &err);
    CHECK(rc == DATM_OK, "diamond: %s", err.msg);
    if (!rc) {
        m = datm_spec_section(&s, DATM_SEC_MODEL);
        CHECK(datm_config_real(m, "lr") == 0.02 && !strcmp(datm_config_str(m, "tag"), "r"),
              "diamond merges both sides");
        CHECK(!strcmp(datm_config_str(datm_spec_section(&s, DATM_SEC_RUN), "name"), "spec"),
              "name derives from the spec file, not a base");
        datm_spec_free(&s);
    }
}

static void test_errors(void)
{
    /* E1 a missing file: the defaults entry that names it */
    put("e1.yaml", "defaults: [base/common.yaml, nope.yaml]\n");
    expect_error("e1.yaml", NULL, 0, "e1.yaml:1:30:", "nope.yaml", "cannot be opened", NULL);
    /* E2 a cycle of two files: both links */
    put("e2a.yaml", "defaults: [e2b.yaml]\n");
    put("e2b.yaml", "seed: 1\ndefaults: [e2a.yaml]\n");
    expect_error("e2a.yaml", NULL, 0, "cycle", "e2a.yaml:1:12 names", "e2b.yaml:2:12 names",
                 NULL);
    /* E3 a file that includes itself */
    put("e3.yaml", "defaults: [./e3.yaml]\n");
    expect_error("e3.yaml", NULL, 0, "cycle", "e3.yaml:1:12", NULL);
    /* E4 a section that is a mapping in the base and a value in the spec */
    put("e4.yaml", "defaults: [base/common.yaml]\nmodel: 3\n");
    expect_error("e4.yaml", NULL, 0, "e4.yaml:2:1:", "'model' is a single value here",
                 "a mapping in", "base/common.yaml:5:1", NULL);
    /* E5 a list in the base, a single value in the spec */
    put("e5.yaml", "defaults: [base/common.yaml]\nmodel:\n  layers: 7\n");
    expect_error("e5.yaml", NULL, 0, "e5.yaml:3:3:", "'model.layers'", "base/common.yaml:8:3",
                 NULL);
    /* E6 an unknown key in a base: the base's position and a did-you-mean */
    put("base/typo.yaml", "train:\n  epoch: 4\n");
    put("e6.yaml", "defaults: [base/common.yaml, base/typo.yaml]\n");
    expect_error("e6.yaml", NULL, 0, "base/typo.yaml:2:3:", "'epoch'", "did you mean 'epochs'",
                 NULL);
    /* E7 defaults is not a list */
    put("e7.yaml", "defaults: base/common.yaml\n");
    expect_error("e7.yaml", NULL, 0, "e7.yaml:1:11:", "defaults: expected a list", NULL);
    /* E8 a defaults entry that is not a path */
    put("e8.yaml", "defaults: [{file: base/common.yaml}]\n");
    expect_error("e8.yaml", NULL, 0, "e8.yaml:1:12:", "each entry is the path", NULL);
    /* E9 a YAML syntax error inside a base */
    put("base/bad.yaml", "model:\n  k: [1, 2\n");
    put("e9.yaml", "defaults: [base/bad.yaml]\n");
    expect_error("e9.yaml", NULL, 0, "base/bad.yaml:", "YAML syntax error", NULL);
    /* E10 a value out of range in a base: the base's position and the key */
    put("base/range.yaml", "model:\n  lr: 5\n");
    put("e10.yaml", "defaults: [base/common.yaml, base/range.yaml]\n");
    expect_error("e10.yaml", NULL, 0, "base/range.yaml:2:7:", "model.lr", NULL);
    /* E11 a directory named as a base */
    put("e11.yaml", "defaults: [base]\n");
    expect_error("e11.yaml", NULL, 0, "e11.yaml:1:12:", "is a directory", NULL);
    /* E12 a chain deeper than the limit */
    for (int i = 0; i < 20; i++) {
        char n[32], t[64];
        snprintf(n, sizeof n, "chain/c%d.yaml", i);
        snprintf(t, sizeof t, "defaults: [c%d.yaml]\n", i + 1);
        put(n, t);
    }
    put("chain/c20.yaml", base);
    expect_error("chain/c0.yaml", NULL, 0, "chain/c", "nest more than", NULL);
    /* E13 a base that is a list, not a mapping */
    put("base/list.yaml", "- a\n- b\n");
    put("e13.yaml", "defaults: [base/list.yaml]\n");
    expect_error("e13.yaml", NULL, 0, "base/list.yaml:1:1:", "must be a mapping",
                 "e13.yaml:1:12", NULL);
    /* E14 an override of the wrong type after composition names the override */
    put("e14.yaml", "defaults: [base/common.yaml]\n");
    const char *ov[] = {"model.k=many"};
    expect_error("e14.yaml", ov, 1, "override 'model.k=many'", "model.k", NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/datm_compose_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_merge();
    test_errors();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!fails && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
