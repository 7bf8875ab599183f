/* engine/pipeline/model.c: small helpers of the plugin contract (model.h). */
#include "pipeline/model.h"

#include <string.h>

void datm_theta_free(datm_theta *t)
{
    if (!t) return;
    for (int l = 0; l < DATM_MAX_LAYERS; l++) datm_free(t->theta[l]);
    memset(t, 0, sizeof *t);
}
