/* tests/fuzz/fuzz_pipeline.c: libFuzzer harness of the pipeline-file parser (runs, matrix
 * axes, profiles, references, tables, figures, claims and their expressions; every run's spec
 * loaded with its overrides). Input: the pipeline YAML, optionally followed by "\n#--\n" and
 * the text of s.yaml, a spec file beside it that the pipeline's runs may name (`spec:
 * s.yaml`; data set `fz`, an empty directory found through DATM_DATA); a third part, when
 * present, is the profile to choose. Properties: no crash, leak or sanitizer report; a
 * rejection has a message. */
#include "fuzz_util.h"
#include "pipeline/pipefile.h"
#include "pipeline/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    static char data_dir[300];
    if (!data_dir[0]) {   /* `dataset: fz` resolves to an empty directory of this process */
        snprintf(data_dir, sizeof data_dir, "%s/fz", fuzz_dir());
        mkdir(data_dir, 0700);
        setenv("DATM_DATA", fuzz_dir(), 1);
    }
    const uint8_t *part[3];
    size_t len[3];
    const int n = fuzz_split(data, size, part, len, 3);
    const char *path = fuzz_file("p.yaml", part[0], len[0]);
    fuzz_file("s.yaml", n > 1 ? part[1] : NULL, n > 1 ? len[1] : 0);
    char profile[64] = "";
    if (n > 2) {
        size_t k = len[2] < sizeof profile - 1 ? len[2] : sizeof profile - 1;
        memcpy(profile, part[2], k);
        profile[k] = '\0';
        profile[strcspn(profile, "\n")] = '\0';
    }
    const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_pipeline p;
    datm_error e = {0};
    if (datm_pipeline_load(path, profile[0] ? profile : NULL, &cat, &p, &e) != DATM_OK) {
        fuzz_expect_message(&e, NULL);
        return 0;
    }
    datm_pipeline_free(&p);
    return 0;
}
