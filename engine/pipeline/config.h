/* engine/pipeline/config.h: parameter schemas and the typed, validated configuration a model
 * receives. A schema is a table of keys with type, default, bounds and one line of docs; the
 * same table validates specs (unknown key -> error with did-you-mean), fills defaults, and
 * prints `datm describe MODEL`. */
#ifndef DATM_CONFIG_H
#define DATM_CONFIG_H

#include <stdint.h>

#include "datm_model.h"
#include "core/core.h"

/* datm_param_type, datm_param_schema (tables end with an entry whose key is NULL), the
 * opaque datm_config (a section after validation: every schema key present) and its typed
 * getters datm_config_int/real/bool/str/int_list/real_list are part of the plugin ABI:
 * include/datm_model.h defines them. A getter's key must be in the section's schema (else
 * DATM_ASSERT: programmer error). */

/* CHOICE_LIST as flow text "[a, b]" (items validated, in the given order). */
const char *datm_config_choice_list(const datm_config *c, const char *key);

/* ---- building a configuration (the spec loader; model tests) ----
 * A schema entry whose `def` is NULL is required: validation fails when it is absent. */

/* A configuration holding every key of `schema` at its default. `section` names it in
 * messages ("model", "train"). Fails when a default does not parse or a key is required. */
int  datm_config_create(const datm_param_schema *schema, const char *section, datm_config **out,
                        datm_error *err);
/* Without failing on required keys (they stay unset until datm_config_set). */
int  datm_config_create_partial(const datm_param_schema *schema, const char *section,
                                datm_config **out, datm_error *err);
void datm_config_destroy(datm_config **c);
int  datm_config_copy(const datm_config *src, datm_config **out, datm_error *err);
/* Sets `key` from YAML scalar/flow text ("0.5", "true", "[128, 64]"), type- and bound-checked.
 * Unknown key -> DATM_E_INVALID naming the closest key. */
int  datm_config_set(datm_config *c, const char *key, const char *text, datm_error *err);
/* Fails naming the first required key that is still unset. */
int  datm_config_check_complete(const datm_config *c, datm_error *err);

const datm_param_schema *datm_config_schema(const datm_config *c);
const char *datm_config_section(const datm_config *c);
int  datm_config_has(const datm_config *c, const char *key);         /* key in the schema */
/* The spec loader links a model section to its spec's train: section, which the variant's
 * rules read through datm_config_train (include/datm_model.h); copies are not linked. */
void datm_config_link_train(datm_config *model, const datm_config *train);
int  datm_config_is_default(const datm_config *c, const char *key);  /* value came from def */
/* The value as YAML flow text (round-trips through datm_config_set). Returns chars written. */
int  datm_config_format(const datm_config *c, const char *key, char *buf, size_t size);

/* Schema helpers. */
const datm_param_schema *datm_schema_find(const datm_param_schema *schema, const char *key);
int         datm_schema_count(const datm_param_schema *schema);
const char *datm_param_type_name(datm_param_type t);
/* The candidate closest to `word` by edit distance, or NULL when none is close enough. */
const char *datm_closest_name(const char *word, const char *const *cands, int n);

#endif
