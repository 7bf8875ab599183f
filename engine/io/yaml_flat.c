/* engine/io/yaml_flat.c: YAML -> dotted key/value list (yaml_flat.h), a walk over the tree of
 * io/yamltree.h (so baselines and stored specs are parsed exactly as specs are: duplicate
 * keys and second documents are errors that name file:line:col). */
#include "io/yaml_flat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yamltree.h"

#define FLAT_MAX_BYTES (4u << 20)   /* a baseline or a resolved spec is a few KiB */

static int push(datm_flat *f, int64_t *cap, const char *key, const char *value, int line,
                datm_error *err)
{
    if (f->n == *cap) {
        int64_t nc = *cap ? 2 * *cap : 32;
        datm_flat_kv *kv = realloc(f->kv, (size_t)nc * sizeof *kv);
        if (!kv) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
        f->kv = kv;
        *cap = nc;
    }
    f->kv[f->n].key = strdup(key);
    f->kv[f->n].value = strdup(value);
    f->kv[f->n].line = line;
    if (!f->kv[f->n].key || !f->kv[f->n].value) {
        free(f->kv[f->n].key);
        free(f->kv[f->n].value);
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    f->n++;
    return DATM_OK;
}

/* One entry per leaf: a scalar, a sequence of scalars as its flow text ("[]" when empty), an
 * empty mapping below the top as "{}"; other sequences are indexed ("jobs.0.name"). */
static int walk(const datm_ynode *n, const char *prefix, datm_flat *f, int64_t *cap,
                datm_error *err)
{
    if (n->kind == DATM_Y_SCALAR) return push(f, cap, prefix, n->text, n->line, err);
    int scalars = n->kind == DATM_Y_SEQ;
    for (int i = 0; i < n->n && scalars; i++) scalars = n->kids[i]->kind == DATM_Y_SCALAR;
    if (scalars) {
        char *flow = datm_ytree_flow_text(n, err);
        if (!flow) return DATM_E_NOMEM;
        int rc = push(f, cap, prefix, flow, n->line, err);
        datm_free(flow);
        return rc;
    }
    if (n->kind == DATM_Y_MAP && n->n == 0 && prefix[0])
        return push(f, cap, prefix, "{}", n->line, err);
    for (int i = 0; i < n->n; i++) {
        char key[1024];
        if (n->kind == DATM_Y_MAP)
            snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", n->keys[i]);
        else
            snprintf(key, sizeof key, "%s%s%d", prefix, prefix[0] ? "." : "", i);
        int rc = walk(n->kids[i], key, f, cap, err);
        if (rc) return rc;
    }
    return DATM_OK;
}

int datm_yaml_flatten(const char *text, const char *src, datm_flat *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    datm_ynode *root = NULL;
    int rc = datm_ytree_parse(text, strlen(text), src, &root, err);
    if (rc) return rc;
    int64_t cap = 0;
    if (root->kind != DATM_Y_MAP)
        rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: the document is not a mapping", src,
                            root->line);
    else
        rc = walk(root, "", out, &cap, err);
    datm_ytree_free(&root);
    if (rc) datm_flat_free(out);
    return rc;
}

int datm_yaml_flatten_file(const char *path, datm_flat *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    int rc = datm_read_text_file(path, FLAT_MAX_BYTES, "YAML", &text, err);
    if (rc) return rc;
    rc = datm_yaml_flatten(text, path, out, err);
    datm_free(text);
    return rc;
}

const char *datm_flat_get(const datm_flat *f, const char *key)
{
    for (int64_t i = 0; i < f->n; i++)
        if (!strcmp(f->kv[i].key, key)) return f->kv[i].value;
    return NULL;
}

void datm_flat_free(datm_flat *f)
{
    if (!f) return;
    for (int64_t i = 0; i < f->n; i++) { free(f->kv[i].key); free(f->kv[i].value); }
    free(f->kv);
    memset(f, 0, sizeof *f);
}
