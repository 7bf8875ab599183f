/* tests/fuzz/fuzz_checkpoint.c: libFuzzer harness of the checkpoint reader that `datm resume`
 * and `datm fork` use: an HDF5 file read by datm_checkpoint_read into a created WHAI model
 * (V = 40, layers 6-3, the spec of the seed checkpoints in tests/fuzz/corpus/checkpoint).
 * Properties: no crash or sanitizer report in datm's code; a rejected file gets a message
 * naming it and never an empty HDF5 reason; an accepted one leaves a consistent state. */
#include "fuzz_util.h"
#include "pipeline/run_internal.h"

static const char spec_text[] =
    "name: fuzz\nseed: 1\ndata:\n  dataset: fuzzset\nmodel:\n  variant: whai\n  layers: [6, 3]\n"
    "train:\n  epochs: 2\n  batch_size: 10\n  checkpoint_every: 2\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static datm_spec spec;
    static int loaded;
    const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    if (!loaded) {
        datm_error e = {0};
        fuzz_dir();
        if (datm_spec_load_text(spec_text, "fuzz.yaml", NULL, 0, &cat, &spec, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            abort();
        }
        loaded = 1;
    }
    const char *path = fuzz_file("ckpt.h5", data, size);
    datm_run_info info = {.n_train = 30, .n_vocab = 40, .batch_size = 10, .epochs = 2,
                          .total_iters = 6, .seed = 1, .threads = 1};
    datm_model *m = NULL;
    datm_error e = {0};
    if (spec.ops->create(datm_spec_section(&spec, DATM_SEC_MODEL), &info, &m, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        abort();
    }
    datm_curve_table curves;
    if (datm_curves_init(&curves, 2, &e)) abort();
    datm_ckpt_state st;
    int rc = datm_checkpoint_read(path, &spec, m, &st, &curves, &e);
    if (rc) {
        fuzz_expect_message(&e, path);
        if (strstr(e.msg, "(hdf5: )")) {
            fprintf(stderr, "empty HDF5 reason: %s\n", e.msg);
            abort();
        }
    } else {
        if (st.iteration < 0 || st.epoch < 0 || st.batch < 0 || st.acc.n < 0) abort();
        for (int c = 0; c < curves.n_cols; c++)
            if (curves.n_rows > curves.cap) abort();
    }
    datm_curves_free(&curves);
    m->ops->destroy(m);
    return 0;
}
