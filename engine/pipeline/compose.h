/* engine/pipeline/compose.h (internal): spec composition. A YAML file may start with
 *     defaults: [base/a.yaml, base/b.yaml]
 * (paths relative to the file that names them). The composed tree is: each default in order
 * (themselves composed), then the file's own keys, merged key by key (datm_ytree_merge).
 * Every node keeps the file:line:col it came from, so messages and `datm check --origins`
 * point at the file that set a value. */
#ifndef DATM_COMPOSE_H
#define DATM_COMPOSE_H

#include "io/yamltree.h"

#define DATM_COMPOSE_MAX_DEPTH 16
#define DATM_COMPOSE_MAX_FILES 128

/* The files read while composing; their names are the `src` labels of the tree's nodes, so
 * this outlives the tree. */
typedef struct datm_compose {
    char *files[DATM_COMPOSE_MAX_FILES];   /* as named (normalised relative paths) */
    int   n_files;
} datm_compose;

/* Reads and composes `path`. */
int  datm_compose_file(datm_compose *c, const char *path, datm_ynode **out, datm_error *err);
/* Composes an already parsed tree (takes ownership of `root`) whose defaults are relative to
 * the directory of `path`. */
int  datm_compose_tree(datm_compose *c, datm_ynode *root, const char *path, datm_ynode **out,
                       datm_error *err);
/* Keeps `name` alive for the lifetime of c; returns the stored copy (NULL when out of room). */
const char *datm_compose_intern(datm_compose *c, const char *name, datm_error *err);
void datm_compose_free(datm_compose *c);

/* Lexical path normalisation ("a/b/../c" -> "a/c", "./x" -> "x"); in place. */
void datm_path_normalise(char *path);

#endif
