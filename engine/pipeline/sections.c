/* engine/pipeline/sections.c: the engine's spec sections (top level, data:, train:,
 * evaluate:, output:): their schemas and typed structs made from the tables in sections.h,
 * and the section list. The model: section's keys come from the variant's schema. */
#include "pipeline/pipeline.h"
#include "pipeline/sections.h"

DATM_PARAMS_DEFINE(datm_run_params, DATM_RUN_PARAMS)
DATM_PARAMS_DEFINE(datm_data_params, DATM_DATA_PARAMS)
DATM_PARAMS_DEFINE(datm_train_params, DATM_TRAIN_PARAMS)
DATM_PARAMS_DEFINE(datm_evaluate_params, DATM_EVALUATE_PARAMS)
DATM_PARAMS_DEFINE(datm_output_params, DATM_OUTPUT_PARAMS)

typedef struct section_entry {
    const char *name;
    const char *doc;
    const datm_param_schema *schema;
} section_entry;

static const section_entry sections[] = {
    [DATM_SEC_RUN] = {"", "top-level keys", datm_run_params_schema},
    [DATM_SEC_DATA] = {"data", "the corpus and the evaluation protocol",
                       datm_data_params_schema},
    [DATM_SEC_MODEL] = {"model", "`variant` (and `plugin: PATH.so`, the plugin file that "
                                 "provides it) plus the keys of that variant's schema", NULL},
    [DATM_SEC_TRAIN] = {"train", "mini-batch training, curve evaluations, checkpoints",
                        datm_train_params_schema},
    [DATM_SEC_EVALUATE] = {"evaluate", "final evaluation of the trained model",
                           datm_evaluate_params_schema},
    [DATM_SEC_OUTPUT] = {"output", "where and what to write", datm_output_params_schema},
};
_Static_assert(DATM_COUNTOF(sections) == DATM_SEC_COUNT_, "sections lists every section");

const char *datm_section_name(datm_section_id s)
{
    DATM_ASSERT(s >= 0 && s < DATM_SEC_COUNT_);
    return sections[s].name;
}

const char *datm_section_doc(datm_section_id s)
{
    DATM_ASSERT(s >= 0 && s < DATM_SEC_COUNT_);
    return sections[s].doc;
}

const datm_param_schema *datm_section_schema(datm_section_id s)
{
    DATM_ASSERT(s >= 0 && s < DATM_SEC_COUNT_);
    return sections[s].schema;
}
