/* engine/plugin/plugin.h: opening an out-of-tree model plugin (a shared object built against
 * include/datm_model.h). The loader dlopen()s the file, finds its one entry point
 * (DATM_PLUGIN_ENTRY), checks the model API version (DATM_MODEL_API_VERSION_MIN and later:
 * a version-1 table has no check op, which datm_model_check knows) and validates every
 * variant it offers (name, contract functions, schema); models/registry.c then adds the
 * variants to the catalog. Each failure is an error naming the file and what is wrong. The
 * way ggml loads its back-ends and SQLite its extensions: a known symbol, a version check,
 * a clear error. */
#ifndef DATM_PLUGIN_H
#define DATM_PLUGIN_H

#include "datm_model.h"
#include "core/core.h"
#include "pipeline/model.h"

/* The one symbol a plugin exports (include/datm_model.h declares it for plugins). */
#define DATM_PLUGIN_ENTRY "datm_plugin_register"
#define DATM_PLUGIN_MAX_MODELS 16

/* What the entry point returns, datm_plugin_info, is defined by include/datm_model.h. */

typedef struct datm_plugin {
    char                  path[4096];           /* the file as opened (absolute) */
    char                  sha256[65];           /* of the file's content */
    char                  name[64];
    int                   n_models;
    const datm_model_ops *models[DATM_PLUGIN_MAX_MODELS];
    void                 *handle;               /* dlopen handle, kept open for the process */
} datm_plugin;

/* Opens the plugin file `path`; `where` (may be "") prefixes messages ("spec.yaml:4:11: ",
 * "--plugin: "). The handle stays open (variants' code and tables live in it). */
int datm_plugin_open(const char *path, const char *where, datm_plugin *out, datm_error *err);

/* Checks one variant's table: name, api_version, required functions, schema. */
int datm_plugin_check_ops(const datm_model_ops *ops, datm_error *err);
/* A schema is valid when every key is a lower-case name given once (not `variant` or
 * `plugin`), every type known, a CHOICE has choices, every row has a doc line and every
 * default parses within its bounds. */
int datm_plugin_check_schema(const datm_param_schema *schema, datm_error *err);

/* Finds `name` (a file path) as given when it holds a '/', else in the directories of
 * DATM_PLUGIN_PATH; relative paths with '/' are taken relative to `base_dir` (NULL: the
 * working directory). Writes the absolute path into out. */
int datm_plugin_resolve(const char *name, const char *base_dir, char *out, size_t size,
                        datm_error *err);

#endif
