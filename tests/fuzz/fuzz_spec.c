/* tests/fuzz/fuzz_spec.c: libFuzzer harness of the spec parser (YAML -> validated sections
 * of every registered variant) with command-line overrides. Input: the YAML text up to the
 * first NUL byte; each further NUL-separated chunk is one override ("a.b=v" or "~a.b"), at
 * most 8. Properties: no crash, leak or sanitizer report; a rejection has a message; an
 * accepted spec's resolved YAML loads again to the same hash (the resolved text is what a
 * run keeps and `resume` reads back). */
#include "fuzz_util.h"
#include "pipeline/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *ov[8];
    int n_ov = 0;
    size_t text_len = strlen(buf);
    for (size_t i = text_len; i < size && n_ov < 8; i++)
        if (buf[i] == '\0' && i + 1 <= size) ov[n_ov++] = buf + i + 1;
    datm_log_set_level(DATM_LOG_ERROR);
    const datm_model_catalog cat = DATM_REGISTRY_CATALOG;
    datm_spec s;
    datm_error e = {0};
    if (datm_spec_load_text(buf, "fuzz.yaml", ov, n_ov, &cat, &s, &e) != DATM_OK) {
        fuzz_expect_message(&e, NULL);
        free(buf);
        return 0;
    }
    datm_spec r;
    datm_error e2 = {0};
    if (datm_spec_load_text(s.resolved, "resolved.yaml", NULL, 0, &cat, &r, &e2) != DATM_OK) {
        fprintf(stderr, "the resolved spec does not load: %s\n---\n%s---\n", e2.msg, s.resolved);
        abort();
    }
    if (strcmp(r.hash, s.hash) != 0) {
        fprintf(stderr, "hash changed on reload\n---\n%s---\n%s---\n", s.resolved, r.resolved);
        abort();
    }
    char *y = datm_spec_to_yaml(&s, 1, &e2);
    datm_free(y);
    datm_spec_free(&r);
    datm_spec_free(&s);
    free(buf);
    return 0;
}
