/* tests/plugin_bad.c: the plugins of tests/test_plugin_load.sh, one source compiled with a
 * switch per fault: NO_ENTRY (no datm_plugin_register), BAD_VERSION (the entry point claims
 * another model API version), BAD_OPS_VERSION (the variant's table does), CLASH (the variant
 * is named "whai"), BAD_SCHEMA (a default outside its bounds), DUP_KEY (a key given twice);
 * none of them: a valid plugin with variant "test-variant" whose create refuses to train.
 * Valid ones with a switch: CHECK_OP (a check op that refuses alpha > 0.9), V1_TABLE (the
 * entry point and the table claim model API version 1, whose tables end at destroy: the
 * check member this one has anyway refuses everything, so reading it is caught). */
#include <datm_model.h>

#ifndef NAME
#define NAME "test-variant"
#endif

static int create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                  datm_error *err)
{
    (void)cfg;
    (void)info;
    (void)out;
    return datm_error_set(err, DATM_E_UNSUPPORTED, "test-variant does not train");
}

#if defined(CHECK_OP)
static int check(const datm_config *cfg, datm_error *err)
{
    const double a = datm_config_real(cfg, "alpha");
    if (a > 0.9)
        return datm_error_set(err, DATM_E_INVALID, "model.alpha: %g: %s takes at most 0.9", a,
                              NAME);
    return DATM_OK;
}
#elif defined(V1_TABLE)
static int check(const datm_config *cfg, datm_error *err)
{
    (void)cfg;
    return datm_error_set(err, DATM_E_INVALID, "the check member of a version-1 table was read");
}
#endif

static const datm_param_schema schema[] = {
#if defined(BAD_SCHEMA)
    {"alpha", DATM_PARAM_REAL, "5", 0, 1, NULL, "a weight in [0, 1]"},
#else
    {"alpha", DATM_PARAM_REAL, "0.5", 0, 1, NULL, "a weight in [0, 1]"},
#endif
#if defined(DUP_KEY)
    {"alpha", DATM_PARAM_REAL, "0.5", 0, 1, NULL, "the same key again"},
#endif
    {NULL, 0, NULL, 0, 0, NULL, NULL},
};

static const datm_model_ops ops = {
    WHAI_COMMON_OPS,
    .name = NAME,
    .summary = "a test plugin's variant",
    .schema = schema,
    .create = create,
#if defined(CHECK_OP) || defined(V1_TABLE)
    .check = check,
#endif
};

#if defined(BAD_OPS_VERSION) || defined(V1_TABLE)
static datm_model_ops ops2;
__attribute__((constructor)) static void init2(void)
{
    ops2 = ops;
#if defined(V1_TABLE)
    ops2.api_version = 1;
#else
    ops2.api_version = DATM_MODEL_API_VERSION + 1;
#endif
}
#define OPS &ops2
#else
#define OPS &ops
#endif

#if defined(NO_ENTRY)
__attribute__((visibility("default"))) const datm_model_ops *test_plugin_ops(void) { return OPS; }
#elif defined(BAD_VERSION) || defined(V1_TABLE)
__attribute__((visibility("default"))) const datm_plugin_info *datm_plugin_register(void)
{
    static const datm_model_ops *const models[] = {OPS, NULL};
#if defined(V1_TABLE)
    static const datm_plugin_info info = {1, "version-1", models};
#else
    static const datm_plugin_info info = {DATM_MODEL_API_VERSION + 98, "bad-version", models};
#endif
    return &info;
}
#else
DATM_PLUGIN("test", OPS)
#endif
