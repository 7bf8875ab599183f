/* models/variant_schema.h: schemas of the WHAI variants (wai, iwhai, ghai, layerwise), built
 * as WHAI's schema (models/whai.h) with some entries re-documented or given another default,
 * plus the variant's own keys. C cannot concatenate the extern WHAI table with a variant's
 * entries at compile time, so each variant assembles its table once before main() (a GCC
 * constructor in the variant's file) into a static array that its datm_model_ops points to;
 * the table then stays fixed, so validation, defaults and `datm describe` all read the same
 * entries. Not a variant itself. */
#ifndef DATM_MODELS_VARIANT_SCHEMA_H
#define DATM_MODELS_VARIANT_SCHEMA_H

#include "datm_model.h"
#include "pipeline/config.h"

/* VARIANT_SCHEMA_CAP, variant_schema_edit (a change to one base entry: def and/or doc, NULL
 * keeps the base's) and variant_schema_build() (dst (cap entries) = base with the edits
 * applied, then the extra entries, then the NULL terminator) are part of the plugin ABI:
 * include/datm_model.h declares them. variant_schema_build aborts (DATM_ASSERT) when the
 * table does not fit or an edited key is not in base: both are programmer errors found at
 * start-up. */

#endif
