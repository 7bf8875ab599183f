/* engine/pipeline/model.c: small helpers of the plugin contract (model.h). */
#include "pipeline/model.h"

#include <string.h>

void datm_theta_free(datm_theta *t)
{
    if (!t) return;
    for (int l = 0; l < DATM_MAX_LAYERS; l++) datm_free(t->theta[l]);
    memset(t, 0, sizeof *t);
}

int datm_model_api_taken(int version)
{
    return version >= DATM_MODEL_API_VERSION_MIN && version <= DATM_MODEL_API_VERSION;
}

int datm_model_check(const datm_model_ops *ops, const datm_config *cfg, datm_error *err)
{
    /* a version-1 table ends at destroy: its memory holds no check member to read */
    if (ops->api_version < 2 || !ops->check) return DATM_OK;
    return ops->check(cfg, err);
}
