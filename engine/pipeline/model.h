/* engine/pipeline/model.h: the plugin contract between the engine and a model variant.
 *
 * Each variant is one file in models/ that fills one `const datm_model_ops` and is listed in
 * models/registry.c. The engine never names a variant. A variant's state struct starts with
 * `datm_model base;` so the engine can hold it as a datm_model pointer.
 *
 * The engine's train stage: for each mini-batch, train_batch(); every eval interval (and at
 * the end) it evaluates per-heldout-word perplexity by eval_begin() on the evaluation
 * documents' observed part, then eval_step() repeatedly — each call adds one posterior
 * sample of the Poisson rate Phi(1) theta into a datm_rate_accum — then eval_end(). */
#ifndef DATM_MODEL_H
#define DATM_MODEL_H

#include <stdint.h>

#include "datm_model.h"
#include "core/core.h"
#include "data/csr.h"
#include "pipeline/config.h"

/* The contract itself is the plugin ABI, so that built-in and out-of-tree variants fill the
 * same table: include/datm_model.h defines DATM_MODEL_API_VERSION, datm_model, datm_run_info
 * (what the engine tells a model about the run), datm_batch, datm_train_ctx,
 * datm_train_stats (filled by train_batch; the engine logs it and stores it in /curves),
 * datm_theta (per-layer features, each (N, K_l) row-major, owned by the struct; free with
 * datm_theta_free) and datm_model_ops, with the duty of each function. */

/* 1 when this datm takes tables built for model API `version`
 * (DATM_MODEL_API_VERSION_MIN..DATM_MODEL_API_VERSION). */
int datm_model_api_taken(int version);
/* The variant's own option checks (ops->check) on its validated model: section; DATM_OK for a
 * table without them (check NULL, or built for model API version 1, which has no check). */
int datm_model_check(const datm_model_ops *ops, const datm_config *cfg, datm_error *err);

/* The registry: models/registry.c. The built-in variants, then those of loaded plugins. */
const datm_model_ops *datm_registry_find(const char *name);
int                   datm_registry_count(void);
const datm_model_ops *datm_registry_at(int i);
/* Loads the plugin file `path` (relative: to base_dir, else in DATM_PLUGIN_PATH's
 * directories; engine/plugin/plugin.h) and registers its variants; a file loaded already is
 * not loaded again. `where` prefixes messages. A variant named like a registered one is an
 * error. */
int datm_registry_load(const char *path, const char *base_dir, const char *where,
                       datm_error *err);
/* 1 with the plugin file and its SHA-256 when ops came from a plugin; 0 for a built-in. */
int datm_registry_source(const datm_model_ops *ops, const char **path, const char **sha256);

#endif
