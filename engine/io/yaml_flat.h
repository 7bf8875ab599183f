/* engine/io/yaml_flat.h: a YAML document flattened to dotted keys ("model.layers" ->
 * "[128, 64]"), for comparing resolved specs across runs and for reading small files such
 * as metric baselines. Sequences of scalars become one flow value; other sequences are
 * indexed ("jobs.0.name"). Keys keep document order. */
#ifndef DATM_YAML_FLAT_H
#define DATM_YAML_FLAT_H

#include <stdint.h>

#include "core/core.h"

typedef struct datm_flat_kv {
    char *key;     /* "a.b.c" */
    char *value;   /* scalar text (quotes removed) or "[x, y]"; "{}" / "[]" for empty ones */
    int   line;    /* 1-based line of the value in the source */
} datm_flat_kv;

typedef struct datm_flat {
    int64_t       n;
    datm_flat_kv *kv;   /* (n) */
} datm_flat;

/* Parses text (src names it in messages: "file:line:col: what"). */
int  datm_yaml_flatten(const char *text, const char *src, datm_flat *out, datm_error *err);
int  datm_yaml_flatten_file(const char *path, datm_flat *out, datm_error *err);
const char *datm_flat_get(const datm_flat *f, const char *key);   /* NULL when absent */
void datm_flat_free(datm_flat *f);

#endif
