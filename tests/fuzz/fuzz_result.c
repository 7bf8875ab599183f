/* tests/fuzz/fuzz_result.c: libFuzzer harness of the result-file readers (engine/io/results.c
 * over engine/io/h5.c): an HDF5 file as `datm compare`, `check-metrics`, `topics` and
 * `figures` read it: the status attributes, /metrics, /curves, /sample_curve, the vocabulary,
 * the model's shape and /topics. Seeds: small result files of real runs
 * (tests/fuzz/corpus/result). Properties: no crash or sanitizer report in datm's code; every
 * failure has a message (never an empty HDF5 reason). */
#include "fuzz_util.h"
#include "io/results.h"
#include "io/results_layout.h"

static void expect(int rc, const datm_error *e)
{
    if (rc) fuzz_expect_message(e, NULL);
    if (rc && strstr(e->msg, "(hdf5: )")) {
        fprintf(stderr, "empty HDF5 reason: %s\n", e->msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("result.h5", data, size);
    datm_h5 *f = NULL;
    datm_error e = {0};
    int rc = datm_result_open(path, 0, &f, &e);
    expect(rc, &e);
    if (rc) return 0;
    char buf[256];
    datm_error_clear(&e);
    expect(datm_h5_attr_get_str(f, DATM_ATTR_STATUS, buf, sizeof buf, &e), &e);
    char *spec = NULL;
    datm_error_clear(&e);
    expect(datm_h5_attr_get_str_alloc(f, DATM_ATTR_SPEC, &spec, &e), &e);
    datm_free(spec);
    datm_result_metrics m;
    datm_error_clear(&e);
    rc = datm_result_metrics_read(f, &m, &e);
    expect(rc, &e);
    if (!rc) {
        double v;
        datm_result_metrics_get(&m, DATM_MET_PERPLEXITY, &v);
        datm_result_metrics_free(&m);
    }
    datm_result_curves c;
    datm_error_clear(&e);
    rc = datm_result_curves_read(f, &c, &e);
    expect(rc, &e);
    if (!rc) {
        datm_result_curves_col(&c, "iteration");
        datm_result_curves_free(&c);
    }
    datm_error_clear(&e);
    rc = datm_result_columns_read(f, DATM_GRP_SAMPLE_CURVE, &c, &e);
    expect(rc, &e);
    if (!rc) datm_result_curves_free(&c);
    char **vocab = NULL;
    int64_t nv = 0;
    datm_error_clear(&e);
    rc = datm_result_vocab(f, &vocab, &nv, &e);
    expect(rc, &e);
    if (!rc) datm_h5_strings_free(vocab, nv);
    int64_t k[DATM_MAX_LAYERS + 1];
    datm_error_clear(&e);
    datm_result_model_shape(f, k, &e);
    datm_topic_set ts;
    memset(&ts, 0, sizeof ts);
    datm_error_clear(&e);
    rc = datm_topics_read(f, &ts, &e);
    expect(rc, &e);
    if (!rc) datm_topic_set_free(&ts);
    datm_h5_close(&f);
    return 0;
}
