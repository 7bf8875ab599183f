/* models/variant_schema.h: schemas of the WHAI variants (wai, iwhai, ghai, layerwise), built
 * as WHAI's schema (models/whai.h) with some entries re-documented or given another default,
 * plus the variant's own keys. C cannot concatenate the extern WHAI table with a variant's
 * entries at compile time, so each variant assembles its table once before main() (a GCC
 * constructor in the variant's file) into a static array that its datm_model_ops points to;
 * the table then stays fixed, so validation, defaults and `datm describe` all read the same
 * entries. Not a variant itself. */
#ifndef DATM_MODELS_VARIANT_SCHEMA_H
#define DATM_MODELS_VARIANT_SCHEMA_H

#include "pipeline/config.h"

#define VARIANT_SCHEMA_CAP 96

/* A change to one base entry: def and/or doc (NULL: keep the base's). */
typedef struct variant_schema_edit {
    const char *key;
    const char *def;
    const char *doc;
} variant_schema_edit;

/* dst (cap entries) = base with the edits applied, then the extra entries, then the NULL
 * terminator. Aborts (DATM_ASSERT) when it does not fit or an edited key is not in base:
 * both are programmer errors found at start-up. */
void variant_schema_build(datm_param_schema *dst, int cap, const datm_param_schema *base,
                          const variant_schema_edit *edits, int n_edits,
                          const datm_param_schema *extra);

#endif
