/* models/sdatm_n.c: nonlinear supervised DATM ("sdatm-n", paper section III, eqs.
 * fearure_fusion_nonlinear, nonlinear-classification, eq:Wm): per-layer softplus maps
 * g_1(l) (K_l x K_l), concatenation, softplus layers of widths a1 = 400, a2 = 200 (g_2), then
 * the Bayesian softmax. The implementation and the shared keys are in models/sdatm.c; this
 * file is the variant's name, head kind and the keys of its MLP. */
#include "sdatm.h"

static datm_param_schema sdatm_n_schema[VARIANT_SCHEMA_CAP];

__attribute__((constructor)) static void sdatm_n_schema_init(void)
{
    static const datm_param_schema mlp_keys[] = {DATM_PARAMS_ROWS(SDATM_MLP_PARAMS)};
    sdatm_schema_build(sdatm_n_schema, mlp_keys);
}

extern const datm_model_ops datm_model_sdatm_n;

static int sdatm_n_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                          datm_error *err)
{
    return sdatm_create(cfg, info, &datm_model_sdatm_n, SDATM_HEAD_MLP, out, err);
}

static int sdatm_n_check(const datm_config *cfg, datm_error *err)
{
    return sdatm_check(cfg, &datm_model_sdatm_n, SDATM_HEAD_MLP, err);
}

const datm_model_ops datm_model_sdatm_n = {
    SDATM_OPS_COMMON,
    .name = "sdatm-n",
    .summary = "supervised DATM, per-layer softplus maps + 400-200 softplus MLP + Bayesian softmax",
    .schema = sdatm_n_schema,
    .create = sdatm_n_create,
    .check = sdatm_n_check,
};
