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

#include "pipeline/config.h"

#define DATM_NOB 1.0, 0.0   /* no bounds (min > max) */

typedef struct datm_int_list {
    const int64_t *v;   /* (n) */
    int            n;
} datm_int_list;

typedef struct datm_real_list {
    const double *v;    /* (n) */
    int           n;
} datm_real_list;

#define DATM_PARAM_CTYPE_INT         int64_t
#define DATM_PARAM_CTYPE_REAL        double
#define DATM_PARAM_CTYPE_BOOL        int
#define DATM_PARAM_CTYPE_STRING      const char *
#define DATM_PARAM_CTYPE_CHOICE      const char *
#define DATM_PARAM_CTYPE_INT_LIST    datm_int_list
#define DATM_PARAM_CTYPE_REAL_LIST   datm_real_list
#define DATM_PARAM_CTYPE_CHOICE_LIST const char *   /* flow text "[a, b]" */

/* Copy one validated value (the key is in c's schema with this type, else DATM_ASSERT). */
void datm_param_get_INT(const datm_config *c, const char *key, int64_t *out);
void datm_param_get_REAL(const datm_config *c, const char *key, double *out);
void datm_param_get_BOOL(const datm_config *c, const char *key, int *out);
void datm_param_get_STRING(const datm_config *c, const char *key, const char **out);
void datm_param_get_CHOICE(const datm_config *c, const char *key, const char **out);
void datm_param_get_INT_LIST(const datm_config *c, const char *key, datm_int_list *out);
void datm_param_get_REAL_LIST(const datm_config *c, const char *key, datm_real_list *out);
void datm_param_get_CHOICE_LIST(const datm_config *c, const char *key, const char **out);

/* The rows' last columns (default, min, max, choices, doc) are passed on as __VA_ARGS__, so
 * that DATM_NOB, which stands for two of them, expands inside the initialiser. */
#define DATM_PARAM_X_FIELD_(field, key, type, ...) DATM_PARAM_CTYPE_##type field;
#define DATM_PARAM_X_ROW_(field, key, type, ...)   {key, DATM_PARAM_##type, __VA_ARGS__},
#define DATM_PARAM_X_GET_(field, key, type, ...)   datm_param_get_##type(c, key, &p->field);

/* The struct `name` with one field per row of TABLE. */
#define DATM_PARAMS_STRUCT(name, TABLE)                                    \
    typedef struct name {                                                  \
        TABLE(DATM_PARAM_X_FIELD_)                                         \
    } name;

/* name_get(): copies TABLE's keys of a validated configuration into the struct. It works on
 * any configuration whose schema holds TABLE's rows (a variant's table made of parts). */
#define DATM_PARAMS_GETTER(name, TABLE)                                    \
    void name##_get(const datm_config *c, name *p)                         \
    {                                                                      \
        TABLE(DATM_PARAM_X_GET_)                                           \
    }

/* The rows of TABLE as a NULL-terminated schema initialiser: {DATM_PARAMS_ROWS(T)}. */
#define DATM_PARAMS_ROWS(TABLE) TABLE(DATM_PARAM_X_ROW_){NULL, 0, NULL, 0, 0, NULL, NULL}

/* Struct + name_schema[] + name_get() for a table used as a whole. */
#define DATM_PARAMS_DECLARE(name, TABLE)                                   \
    DATM_PARAMS_STRUCT(name, TABLE)                                        \
    void name##_get(const datm_config *c, name *p);                        \
    extern const datm_param_schema name##_schema[];

#define DATM_PARAMS_DEFINE(name, TABLE)                                    \
    const datm_param_schema name##_schema[] = {DATM_PARAMS_ROWS(TABLE)};   \
    DATM_PARAMS_GETTER(name, TABLE)

#endif
