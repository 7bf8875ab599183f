/* ctest-labels: unit  ctest-timeout: 30  ctest-link: datm_io */
/* tests/test_io_yaml_flat.c: YAML -> dotted keys (engine/io/yaml_flat.h), used by compare
 * (spec parameters) and check-metrics (baselines): nested maps, scalar sequences as one
 * flow value, sequences of maps indexed, empty collections, quoted scalars, document order,
 * 1-based value lines, and syntax errors naming src:line:col. */
#include <stdio.h>
#include <string.h>

#include "io/yaml_flat.h"
#include "test_check.h"


static int is(const datm_flat *f, const char *k, const char *v)
{
    const char *got = datm_flat_get(f, k);
    if (!got || strcmp(got, v)) {
        fprintf(stderr, "%s = '%s', expected '%s'\n", k, got ? got : "(absent)", v);
        return 0;
    }
    return 1;
}

int main(void)
{
    const char *text =
        "name: \"quick run\"\n"          /* line 1 */
        "seed: 1\n"
        "model:\n"
        "  variant: whai\n"
        "  layers: [128, 64, 32]\n"      /* line 5 */
        "  hidden: []\n"
        "  extra: {}\n"
        "jobs:\n"
        "  - {name: a, x: 1}\n"
        "  - name: b\n"                  /* line 10 */
        "    x: 2\n"
        "metrics:\n"
        "  perplexity: {value: 950, rel_tol: 0.1, direction: lower}\n";
    datm_flat f;
    datm_error err = {0};
    CHECK(datm_yaml_flatten(text, "t.yaml", &f, &err) == 0);
    CHECK(is(&f, "name", "quick run") && is(&f, "seed", "1") && is(&f, "model.variant", "whai"));
    CHECK(is(&f, "model.layers", "[128, 64, 32]") && is(&f, "model.hidden", "[]"));
    CHECK(is(&f, "model.extra", "{}"));
    CHECK(is(&f, "jobs.0.name", "a") && is(&f, "jobs.1.x", "2"));
    CHECK(is(&f, "metrics.perplexity.rel_tol", "0.1"));
    CHECK(datm_flat_get(&f, "model") == NULL && datm_flat_get(&f, "nope") == NULL);
    CHECK(f.n == 13 && !strcmp(f.kv[0].key, "name") && !strcmp(f.kv[12].key, "metrics.perplexity.direction"));
    CHECK(f.kv[3].line == 5 && !strcmp(f.kv[3].key, "model.layers"));
    CHECK(!strcmp(f.kv[8].key, "jobs.1.name") && f.kv[8].line == 10);
    datm_flat_free(&f);
    CHECK(f.n == 0 && f.kv == NULL);

    CHECK(datm_yaml_flatten("", "empty.yaml", &f, &err) == 0 && f.n == 0);
    datm_flat_free(&f);
    CHECK(datm_yaml_flatten("a: [1, 2\n", "bad.yaml", &f, &err) == DATM_E_FORMAT);
    CHECK(strstr(err.msg, "bad.yaml:2:1:") != NULL);
    CHECK(datm_yaml_flatten("- 1\n- 2\n", "seq.yaml", &f, &err) == DATM_E_FORMAT);
    CHECK(strstr(err.msg, "seq.yaml:1: the document is not a mapping") != NULL);
    CHECK(datm_yaml_flatten_file("/nonexistent/x.yaml", &f, &err) == DATM_E_IO);
    CHECK(strstr(err.msg, "/nonexistent/x.yaml") != NULL);
    return check_result();
}
