/* models/sdatm_l.c: linear supervised DATM ("sdatm-l", paper section III, eqs. fearure_fusion
 * and Linear-classification): y ~ Categorical(softmax(W^T s)), s = [theta(1), ..., theta(L)]
 * (after the head_transform), W with a Gaussian variational posterior. The implementation is
 * shared with sdatm-n (models/sdatm.c); this file is the variant's schema and ops. */
#include "sdatm.h"
#include "whai.h"

static datm_param_schema sdatm_l_schema[VARIANT_SCHEMA_CAP];

/* WHAI's keys (models/whai.c) with sDATM's defaults, plus the supervised keys (sdatm.h). */
__attribute__((constructor)) static void sdatm_l_schema_init(void)
{
    static const variant_schema_edit edits[] = {SDATM_SCHEMA_EDITS};
    static const datm_param_schema extra[] = {
        SDATM_EXTRA_SCHEMA,
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    variant_schema_build(sdatm_l_schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)DATM_COUNTOF(edits), extra);
}

extern const datm_model_ops datm_model_sdatm_l;

static int sdatm_l_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                          datm_error *err)
{
    return sdatm_create(cfg, info, &datm_model_sdatm_l, SDATM_HEAD_LINEAR, out, err);
}

const datm_model_ops datm_model_sdatm_l = {
    .api_version = DATM_MODEL_API_VERSION,
    .name = "sdatm-l",
    .summary = "supervised DATM, linear Bayesian softmax on the concatenated theta of all layers",
    .schema = sdatm_l_schema,
    .create = sdatm_l_create,
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
