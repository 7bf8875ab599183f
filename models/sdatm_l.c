/* models/sdatm_l.c: linear supervised DATM ("sdatm-l", paper section III, eqs. fearure_fusion
 * and Linear-classification): y ~ Categorical(softmax(W^T s)), s = [theta(1), ..., theta(L)]
 * (after the head_transform), W with a Gaussian variational posterior. The implementation and
 * the shared keys are in models/sdatm.c; this file is the variant's name and head kind. */
#include "sdatm.h"

static datm_param_schema sdatm_l_schema[VARIANT_SCHEMA_CAP];

__attribute__((constructor)) static void sdatm_l_schema_init(void)
{
    sdatm_schema_build(sdatm_l_schema, NULL);
}

extern const datm_model_ops datm_model_sdatm_l;

static int sdatm_l_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                          datm_error *err)
{
    return sdatm_create(cfg, info, &datm_model_sdatm_l, SDATM_HEAD_LINEAR, out, err);
}

static int sdatm_l_check(const datm_config *cfg, datm_error *err)
{
    return sdatm_check(cfg, &datm_model_sdatm_l, SDATM_HEAD_LINEAR, err);
}

const datm_model_ops datm_model_sdatm_l = {
    SDATM_OPS_COMMON,
    .name = "sdatm-l",
    .summary = "supervised DATM, linear Bayesian softmax on the concatenated theta of all layers",
    .schema = sdatm_l_schema,
    .create = sdatm_l_create,
    .check = sdatm_l_check,
};
