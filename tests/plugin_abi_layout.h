/* tests/plugin_abi_layout.h: the layout facts of the plugin ABI that the installed
 * include/datm_model.h and the engine's own headers must agree on (sizes, member offsets,
 * constants), as one X-macro list; tests/plugin_abi_public.c expands it under the installed
 * header, tests/test_plugin_abi.c under the engine's headers, and the test compares. */
#ifndef DATM_TEST_PLUGIN_ABI_LAYOUT_H
#define DATM_TEST_PLUGIN_ABI_LAYOUT_H

#include <stddef.h>

#define OFF(T, m) X(offsetof(T, m), #T "." #m)
#define SIZE(T)   X(sizeof(T), "sizeof " #T)
#define VAL(v)    X((size_t)(v), #v)

#define PLUGIN_ABI_LAYOUT                                                                    \
    VAL(DATM_MODEL_API_VERSION) VAL(DATM_MODEL_API_VERSION_MIN) VAL(DATM_MAX_LAYERS)          \
    VAL(DATM_OK) VAL(DATM_E_IO) VAL(DATM_E_INVALID) VAL(DATM_E_UNSUPPORTED) VAL(DATM_LOG_ERROR) \
    SIZE(datm_error) OFF(datm_error, msg)                                                    \
    VAL(DATM_PARAM_INT) VAL(DATM_PARAM_REAL) VAL(DATM_PARAM_BOOL) VAL(DATM_PARAM_STRING)     \
    VAL(DATM_PARAM_CHOICE) VAL(DATM_PARAM_INT_LIST) VAL(DATM_PARAM_REAL_LIST)                \
    VAL(DATM_PARAM_CHOICE_LIST) VAL(DATM_PARAM_TYPE_COUNT_)                                  \
    SIZE(datm_param_schema) OFF(datm_param_schema, type) OFF(datm_param_schema, def)         \
    OFF(datm_param_schema, min) OFF(datm_param_schema, max) OFF(datm_param_schema, choices)  \
    OFF(datm_param_schema, doc) SIZE(datm_int_list) OFF(datm_int_list, n)                    \
    SIZE(datm_real_list) OFF(datm_real_list, n)                                              \
    SIZE(datm_csr) OFF(datm_csr, nnz) OFF(datm_csr, row_ptr) OFF(datm_csr, col)              \
    OFF(datm_csr, val)                                                                       \
    SIZE(datm_run_info) OFF(datm_run_info, n_vocab) OFF(datm_run_info, n_classes)            \
    OFF(datm_run_info, batch_size) OFF(datm_run_info, epochs) OFF(datm_run_info, total_iters) \
    OFF(datm_run_info, seed) OFF(datm_run_info, threads) OFF(datm_run_info, train)           \
    OFF(datm_run_info, train_labels) OFF(datm_run_info, vocab) OFF(datm_run_info, streamed)  \
    SIZE(datm_batch) OFF(datm_batch, doc_ids) OFF(datm_batch, labels)                        \
    SIZE(datm_train_ctx) OFF(datm_train_ctx, epoch) OFF(datm_train_ctx, seed)                \
    OFF(datm_train_ctx, rho)                                                                 \
    SIZE(datm_train_stats) OFF(datm_train_stats, loglik) OFF(datm_train_stats, n_layers)     \
    OFF(datm_train_stats, kl) OFF(datm_train_stats, step)                                    \
    SIZE(datm_theta) OFF(datm_theta, n_docs) OFF(datm_theta, k) OFF(datm_theta, theta)       \
    SIZE(datm_model)                                                                         \
    SIZE(datm_model_ops) OFF(datm_model_ops, name) OFF(datm_model_ops, summary)              \
    OFF(datm_model_ops, schema) OFF(datm_model_ops, create) OFF(datm_model_ops, train_batch) \
    OFF(datm_model_ops, eval_begin) OFF(datm_model_ops, eval_step)                           \
    OFF(datm_model_ops, eval_end) OFF(datm_model_ops, infer) OFF(datm_model_ops, predict)    \
    OFF(datm_model_ops, get_phi) OFF(datm_model_ops, n_layers) OFF(datm_model_ops, save)     \
    OFF(datm_model_ops, load) OFF(datm_model_ops, destroy) OFF(datm_model_ops, check)        \
    SIZE(datm_plugin_info) OFF(datm_plugin_info, name) OFF(datm_plugin_info, models)         \
    SIZE(datm_posterior_family) OFF(datm_posterior_family, noise_dim)                        \
    OFF(datm_posterior_family, draw_noise) OFF(datm_posterior_family, sample_f32)            \
    OFF(datm_posterior_family, sample_f64) OFF(datm_posterior_family, kl_f32)                \
    OFF(datm_posterior_family, kl_f64) OFF(datm_posterior_family, mean_f32)                  \
    OFF(datm_posterior_family, mean_f64)                                                     \
    SIZE(whai_hooks) OFF(whai_hooks, extra_user) OFF(whai_hooks, pre_tlasgr)                 \
    OFF(whai_hooks, pre_tlasgr_user)                                                         \
    SIZE(whai_variant) OFF(whai_variant, no_downward) OFF(whai_variant, family)              \
    OFF(whai_variant, own_iteration) OFF(whai_variant, own_eval) OFF(whai_variant, hooks)    \
    SIZE(variant_schema_edit) OFF(variant_schema_edit, def) OFF(variant_schema_edit, doc)    \
    VAL(VARIANT_SCHEMA_CAP)

#endif
