/* engine/io/yaml_flat.c: YAML -> dotted key/value list (yaml_flat.h), over libyaml's
 * document loader. */
#include "io/yaml_flat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

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

static int all_scalars(yaml_document_t *doc, yaml_node_t *seq)
{
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++) {
        yaml_node_t *c = yaml_document_get_node(doc, *it);
        if (!c || c->type != YAML_SCALAR_NODE) return 0;
    }
    return 1;
}

static int walk(yaml_document_t *doc, yaml_node_t *node, const char *prefix, datm_flat *f,
                int64_t *cap, int depth, datm_error *err)
{
    if (depth > 64) return datm_error_set(err, DATM_E_FORMAT, "YAML nested too deeply");
    const int line = (int)node->start_mark.line + 1;
    if (node->type == YAML_SCALAR_NODE)
        return push(f, cap, prefix, (const char *)node->data.scalar.value, line, err);
    if (node->type == YAML_SEQUENCE_NODE) {
        if (all_scalars(doc, node)) {
            size_t len = 3;
            for (yaml_node_item_t *it = node->data.sequence.items.start;
                 it < node->data.sequence.items.top; it++)
                len += yaml_document_get_node(doc, *it)->data.scalar.length + 2;
            char *buf = malloc(len);
            if (!buf) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
            strcpy(buf, "[");
            for (yaml_node_item_t *it = node->data.sequence.items.start;
                 it < node->data.sequence.items.top; it++) {
                if (it != node->data.sequence.items.start) strcat(buf, ", ");
                strcat(buf, (const char *)yaml_document_get_node(doc, *it)->data.scalar.value);
            }
            strcat(buf, "]");
            int rc = push(f, cap, prefix, buf, line, err);
            free(buf);
            return rc;
        }
        int i = 0;
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             it < node->data.sequence.items.top; it++, i++) {
            char key[1024];
            snprintf(key, sizeof key, "%s%s%d", prefix, prefix[0] ? "." : "", i);
            int rc = walk(doc, yaml_document_get_node(doc, *it), key, f, cap, depth + 1, err);
            if (rc) return rc;
        }
        return DATM_OK;
    }
    if (node->type == YAML_MAPPING_NODE) {
        if (node->data.mapping.pairs.start == node->data.mapping.pairs.top && prefix[0])
            return push(f, cap, prefix, "{}", line, err);
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
             p < node->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (!k || k->type != YAML_SCALAR_NODE)
                return datm_error_set(err, DATM_E_FORMAT, "line %d: a key that is not a scalar",
                                      k ? (int)k->start_mark.line + 1 : line);
            char key[1024];
            snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "",
                     (const char *)k->data.scalar.value);
            int rc = walk(doc, yaml_document_get_node(doc, p->value), key, f, cap, depth + 1, err);
            if (rc) return rc;
        }
        return DATM_OK;
    }
    return DATM_OK;
}

int datm_yaml_flatten(const char *text, const char *src, datm_flat *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p)) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&p, &doc)) {
        int rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: %s%s%s", src,
                                (int)p.problem_mark.line + 1, (int)p.problem_mark.column + 1,
                                p.problem ? p.problem : "YAML error",
                                p.context ? " " : "", p.context ? p.context : "");
        yaml_parser_delete(&p);
        return rc;
    }
    int64_t cap = 0;
    int rc = DATM_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root) {
        if (root->type != YAML_MAPPING_NODE)
            rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d: the document is not a mapping", src,
                                (int)root->start_mark.line + 1);
        else rc = walk(&doc, root, "", out, &cap, 0, err);
    }
    if (rc && err) {
        if (strncmp(err->msg, src, strlen(src))) datm_error_prefix(err, "%s: ", src);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    if (rc) datm_flat_free(out);
    return rc;
}

int datm_yaml_flatten_file(const char *path, datm_flat *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *fp = fopen(path, "rb");
    if (!fp) return datm_error_set(err, DATM_E_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(fp); return datm_error_set(err, DATM_E_NOMEM, "out of memory"); }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, 4096, fp);
        n += got;
        if (got < 4096) break;
    }
    fclose(fp);
    buf[n] = '\0';
    int rc = datm_yaml_flatten(buf, path, out, err);
    free(buf);
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
