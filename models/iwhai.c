/* models/iwhai.c: IWHAI ("iwhai"), independent WHAI (paper sec. II-E "Variations of WHAI"):
 * WHAI without the stochastic-downward connections, q(theta(l) | .) = Weibull(k(l), lam(l))
 * instead of Weibull(k(l) + Phi(l+1) theta(l+1), lam(l)). The KL still compares it with the
 * prior Gamma(Phi(l+1) theta(l+1), 1), and the topics are still sampled by TLASGR-MCMC, so
 * the only change from WHAI is engine/encoder's opts.downward = 0 (docs/reference.md 3:
 * this is PyDPM's WHAI with encode_prior = False). Everything else is models/whai.c. */
#include <string.h>

#include "variant_schema.h"
#include "whai.h"

static datm_param_schema iwhai_schema[VARIANT_SCHEMA_CAP];

__attribute__((constructor)) static void iwhai_schema_init(void)
{
    static const variant_schema_edit edits[] = {
        {"downward", "false",
         "IWHAI has no downward term Phi(l+1) theta(l+1) in the Weibull shape; must stay false "
         "(use whai for true)"},
    };
    variant_schema_build(iwhai_schema, VARIANT_SCHEMA_CAP, datm_whai_schema, edits,
                         (int)DATM_COUNTOF(edits), NULL);
}

static int iwhai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                        datm_error *err);
static int iwhai_check(const datm_config *cfg, datm_error *err);

const datm_model_ops datm_model_iwhai = {
    WHAI_COMMON_OPS,
    .name = "iwhai",
    .summary = "IWHAI: WHAI without the stochastic-downward term in the encoder (paper sec. "
               "II-E); the KL prior keeps Phi(l+1) theta(l+1)",
    .schema = iwhai_schema,
    .create = iwhai_create,
    .check = iwhai_check,
};

static const whai_variant iwhai_variant = {.ops = &datm_model_iwhai, .no_downward = 1};

/* downward stays in the table (its default is false here) but cannot be turned on */
static int iwhai_check_downward(const datm_config *cfg, datm_error *err)
{
    whai_params p;
    whai_params_get(cfg, &p);
    if (p.downward)
        return datm_error_set(err, DATM_E_INVALID,
                              "model.downward: iwhai has no downward term (use variant whai)");
    return DATM_OK;
}

static int iwhai_check(const datm_config *cfg, datm_error *err)
{
    int rc = iwhai_check_downward(cfg, err);
    return rc ? rc : whai_check_variant(cfg, &iwhai_variant, err);
}

static int iwhai_create(const datm_config *cfg, const datm_run_info *info, datm_model **out,
                        datm_error *err)
{
    int rc = iwhai_check_downward(cfg, err);   /* whai_create_variant checks the rest */
    return rc ? rc : whai_create_variant(cfg, info, &iwhai_variant, out, err);
}
