/* engine/io/yamltree.h: the one libyaml wrapper of datm: a YAML document as a small tree that
 * remembers where every key and value came from (file:line:column, or the command-line
 * override), so that messages can point at the text the user wrote. Specs and pipeline files
 * are read as trees (pipeline/spec.c, compose.c, pipefile.c); io/yaml_flat.h flattens a tree to
 * dotted keys for baselines and stored specs. */
#ifndef DATM_IO_YAMLTREE_H
#define DATM_IO_YAMLTREE_H

#include "core/core.h"

typedef enum { DATM_Y_SCALAR = 0, DATM_Y_MAP, DATM_Y_SEQ } datm_ykind;

typedef struct datm_ynode {
    datm_ykind kind;
    char  *text;                 /* SCALAR: the value as written (quotes removed) */
    int    quoted;               /* SCALAR: written in quotes */
    int    line, col;            /* 1-based position; 0 for overrides */
    const char *src;             /* file name or "override 'k=v'" (owned by the tree root) */
    int    n;                    /* MAP: pairs; SEQ: items */
    char **keys;                 /* MAP: (n) */
    int   *key_line, *key_col;   /* MAP: (n) positions of the keys */
    const char **key_src;        /* MAP: (n) file of each key (differs from src after a merge) */
    struct datm_ynode **kids;    /* (n) */
} datm_ynode;

/* Parses a YAML document; errors name file:line:col (syntax, duplicate key, non-scalar key,
 * more than one document). An empty document gives an empty MAP. */
int  datm_ytree_parse(const char *text, size_t len, const char *src, datm_ynode **out,
                      datm_error *err);
/* Parses the value of an override: a YAML flow scalar or sequence ("0.5", "[1, 2]", "abc"). */
int  datm_ytree_parse_value(const char *text, const char *src, datm_ynode **out, datm_error *err);
void datm_ytree_free(datm_ynode **n);
/* Reads a whole text file (at most max_bytes, no NUL bytes; `what` names the kind of file in
 * messages, e.g. "spec"); *out freed with datm_free. */
int  datm_read_text_file(const char *path, size_t max_bytes, const char *what, char **out,
                         datm_error *err);

datm_ynode *datm_ytree_get(const datm_ynode *map, const char *key, int *index);
/* Sets map[key] = val (takes ownership), replacing an existing value. */
int  datm_ytree_set(datm_ynode *map, const char *key, datm_ynode *val, datm_error *err);
/* Removes map[key] (and frees it); returns 1 when it was there. */
int  datm_ytree_remove(datm_ynode *map, const char *key);
datm_ynode *datm_ytree_new_map(const char *src, int line, int col, datm_error *err);
/* Merges `over` into `base` (Hydra/Helm style): a mapping merges key by key, recursively; a
 * scalar or list replaces; an empty (null) value over a mapping leaves the mapping as it is.
 * Consumes `over`. A key that is a mapping in one and a value or list in the other (or a
 * list in one and a single value in the other) is an error naming both places; `path` is the
 * dotted key path of `base` (""  at the top), used in messages. */
int  datm_ytree_merge(datm_ynode *base, datm_ynode *over, const char *path, datm_error *err);
/* Flow text of a node ("[1, 2]" for a sequence of scalars); NULL for nested collections. */
char *datm_ytree_flow_text(const datm_ynode *n, datm_error *err);
/* "file:line:col" (or the override) of a node / of key i of a map. */
void datm_ytree_where(const datm_ynode *n, char *buf, size_t size);
void datm_ytree_key_where(const datm_ynode *map, int i, char *buf, size_t size);

#endif
