/* engine/pipeline/params.h: typed parameter structs generated from one table per section or
 * model (X-macros; the way Redis's standardConfig keeps one row per setting).
 *
 * A table is a macro that applies X to each row:
 *
 *   #define DATM_TRAIN_PARAMS(X)                                                     \
 *       X(epochs, "epochs", INT, "10", 1, 1e7, NULL, "passes over the training documents") \
 *       ...
 *
 * with the columns (C field, key, type, default, min, max, choices, one-line doc); type is a
 * datm_param_type without its DATM_PARAM_ prefix, min > max means no bounds (DATM_NOB), the
 * default is YAML text (NULL: required). From the table come:
 *   DATM_PARAMS_DECLARE(name, TABLE)  the struct `name` (one typed field per row) and the
 *                                     prototypes of name_schema[] and name_get();
 *   DATM_PARAMS_DEFINE(name, TABLE)   name_schema[] (the datm_param_schema rows that validate
 *                                     specs, fill defaults, print `datm describe` and the
 *                                     README key reference) and name_get(), which copies a
 *                                     validated configuration into the struct;
 *   DATM_PARAMS_STRUCT / _GETTER / _ROWS  the same pieces one by one, for a model whose
 *                                     table is made of parts (each part its own struct).
 * Tables compose by concatenation (#define A_PARAMS(X) B_PARAMS(X) C_ROWS(X)), so a variant's
 * schema is the rows of the parts it uses and nothing else: a key it would ignore is not in
 * its table, and setting it is an unknown-key error with a did-you-mean.
 *
 * Code reads the struct's fields, never a key string. Strings and lists in the struct point
 * into the datm_config they were copied from and live as long as it does. */
#ifndef DATM_PARAMS_H
#define DATM_PARAMS_H

#include "datm_model.h"
#include "pipeline/config.h"

/* DATM_NOB, datm_int_list, datm_real_list, the DATM_PARAM_CTYPE_* field types, the
 * datm_param_get_<TYPE>() copies and DATM_PARAMS_STRUCT / _GETTER / _ROWS are part of the
 * plugin ABI (a plugin builds its tables the same way): include/datm_model.h defines them.
 * The rows' last columns (default, min, max, choices, doc) are passed on as __VA_ARGS__, so
 * that DATM_NOB, which stands for two of them, expands inside the initialiser. */

/* Struct + name_schema[] + name_get() for a table used as a whole. */
#define DATM_PARAMS_DECLARE(name, TABLE)                                   \
    DATM_PARAMS_STRUCT(name, TABLE)                                        \
    void name##_get(const datm_config *c, name *p);                        \
    extern const datm_param_schema name##_schema[];

#define DATM_PARAMS_DEFINE(name, TABLE)                                    \
    const datm_param_schema name##_schema[] = {DATM_PARAMS_ROWS(TABLE)};   \
    DATM_PARAMS_GETTER(name, TABLE)

#endif
