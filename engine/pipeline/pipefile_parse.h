/* engine/pipeline/pipefile_parse.h (internal): the helpers shared by the two halves of the
 * pipeline-file parser: pipefile.c (top level, profiles, runs, matrix) and
 * pipefile_outputs.c (references, tables, figures, claims). Errors are collected (up to
 * PIPE_MAX_ERRORS), each "file:line:col: path.to.key: message". */
#ifndef DATM_PIPEFILE_PARSE_H
#define DATM_PIPEFILE_PARSE_H

#include "pipeline/pipefile.h"
#include "io/yamltree.h"

#define PIPE_MAX_ERRORS 12

#include <string.h>

/* Copies src into dst (size bytes), cutting it when too long. */
static inline void pipe_copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

typedef struct pipe_ctx {
    datm_pipeline *p;
    int   n_errors;
    int   fatal;         /* out of memory */
    char  msg[sizeof(((datm_error *)0)->msg)];
} pipe_ctx;

void pipe_error(pipe_ctx *c, const datm_ynode *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same at a position given as text ("file:line:col"). */
void pipe_error_at(pipe_ctx *c, const char *where, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A message already positioned ("file:line:col: path: ..."). */
void pipe_error_msg(pipe_ctx *c, const char *msg);
/* The same at key i of map (the key's own position). */
void pipe_key_error(pipe_ctx *c, const datm_ynode *map, int i, const char *path,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Reports every key of `map` not in `allowed` (NULL-terminated), with a did-you-mean. */
void pipe_check_keys(pipe_ctx *c, const datm_ynode *map, const char *path,
                     const char *const *allowed);
/* map[key] as a scalar copied into dst (size); 1 when present. Errors when not a scalar or
 * (required) absent. */
int  pipe_scalar(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path,
                 char *dst, size_t size, int required);
/* map[key] as a list of scalars (a single scalar counts as a list of one). */
int  pipe_list(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path,
               datm_strlist *out);
/* map[key] as a boolean / number; default when absent. */
int  pipe_bool(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path, int def);
double pipe_number(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path,
                   double def, double lo, double hi);
/* node as a mapping (errors otherwise, naming what was expected). */
int  pipe_is_map(pipe_ctx *c, const datm_ynode *n, const char *path, const char *what);

/* pipefile_outputs.c */
void pipe_parse_references(pipe_ctx *c, const datm_ynode *n);
void pipe_parse_tables(pipe_ctx *c, const datm_ynode *n);
void pipe_parse_figures(pipe_ctx *c, const datm_ynode *n);
void pipe_parse_claims(pipe_ctx *c, const datm_ynode *n);
/* Checks that tables/figures/claims/references name runs, labels and axes that exist
 * (after the runs are known). */
void pipe_check_outputs(pipe_ctx *c);

#endif
