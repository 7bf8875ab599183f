/* models/registry.c: the only list of model variants. Adding a variant = one extern line and
 * one table entry. The registry is the one global table the style guide allows. */
#include <string.h>

#include "pipeline/model.h"

/* extern const datm_model_ops datm_model_xxx; -- one line per variant, in table order */
extern const datm_model_ops datm_model_unigram;
extern const datm_model_ops datm_model_dlda_gibbs;
extern const datm_model_ops datm_model_dlda_tlasgr;
extern const datm_model_ops datm_model_sdatm_l;
extern const datm_model_ops datm_model_sdatm_n;
extern const datm_model_ops datm_model_whai;
extern const datm_model_ops datm_model_wai;
extern const datm_model_ops datm_model_iwhai;
extern const datm_model_ops datm_model_ghai;
extern const datm_model_ops datm_model_layerwise;

static const datm_model_ops *const registry[] = {
    &datm_model_unigram,
    &datm_model_dlda_gibbs,
    &datm_model_dlda_tlasgr,
    &datm_model_sdatm_l,
    &datm_model_sdatm_n,
    &datm_model_whai,
    &datm_model_wai,
    &datm_model_iwhai,
    &datm_model_ghai,
    &datm_model_layerwise,
    NULL /* end */
};

int datm_registry_count(void) { return (int)(sizeof registry / sizeof registry[0]) - 1; }

const datm_model_ops *datm_registry_at(int i)
{
    return (i >= 0 && i < datm_registry_count()) ? registry[i] : NULL;
}

const datm_model_ops *datm_registry_find(const char *name)
{
    for (int i = 0; i < datm_registry_count(); i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}
