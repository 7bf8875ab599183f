/* models/sdatm_n.c: nonlinear supervised DATM ("sdatm-n", paper section III, eqs.
 * fearure_fusion_nonlinear, nonlinear-classification, eq:Wm): per-layer softplus maps
 * g_1(l) (K_l x K_l), concatenation, softplus layers of widths a1 = 400, a2 = 200 (g_2), then
 * the Bayesian softmax. The implementation is shared with sdatm-l (models/sdatm.c); this file
 * is the variant's schema and ops. */
#include "sdatm.h"
#include "whai.h"

static datm_param_schema sdatm_n_schema[VARIANT_SCHEMA_CAP];

/* WHAI's keys (models/whai.c) with sDATM's defaults, plus the supervised keys (sdatm.h). */
__attribute__((constructor)) static void sdatm_n_schema_init(void)
{
    static const variant_schema_edit edits[] = {SDATM_SCHEMA_EDITS};
    static const datm_param_schema extra[] = {
        SDATM_EXTRA_SCHEMA,
        {"head_hidden", DATM_PARAM_INT_LIST, "[400, 200]", 1, 1e6, NULL,
         "widths of the softplus layers of g_2 (paper: a1 = 400, a2 = 200; at most 4)"},
        {"head_g1", DATM_PARAM_BOOL, "true", SDATM_NOB, NULL,
         "per-layer maps g_1(l)(theta(l)) = softplus(W theta(l) + b), W (K_l, K_l) (paper)"},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    variant_schema_build(sdatm_n_schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)DATM_COUNTOF(edits), extra);
}

extern const datm_model_ops datm_model_sdatm_n;

static int sdatm_n_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                          datm_error *err)
{
    return sdatm_create(cfg, info, &datm_model_sdatm_n, SDATM_HEAD_MLP, out, err);
}

const datm_model_ops datm_model_sdatm_n = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "sdatm-n",
    .summary = "supervised DATM, per-layer softplus maps + 400-200 softplus MLP + Bayesian softmax",
    .schema = sdatm_n_schema,
    .create = sdatm_n_create,
    .train_batch = sdatm_train_batch,
    .eval_begin = sdatm_eval_begin,
    .eval_step = sdatm_eval_step,
    .eval_end = sdatm_eval_end,
    .infer = sdatm_infer,
    .predict = sdatm_predict,
    .get_phi = sdatm_get_phi,
    .n_layers = sdatm_n_layers,
    .save = sdatm_save,
    .load = sdatm_load,
    .destroy = sdatm_destroy,
};
