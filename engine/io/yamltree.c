/* engine/io/yamltree.c: libyaml document -> datm_ynode tree with source positions.
 * Only what specs need: maps with scalar keys, sequences, scalars. Aliases are expanded
 * (bounded depth); duplicate keys are errors because YAML would silently keep one. */
#include "io/yamltree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#define MAX_DEPTH 32
#define MAX_NODES 100000

typedef struct build_ctx {
    yaml_document_t *doc;
    const char *src;
    int nodes;
} build_ctx;

static datm_ynode *node_new(datm_ykind kind, const char *src, int line, int col, datm_error *err)
{
    datm_ynode *n = datm_alloc(sizeof *n, err);
    if (!n) return NULL;
    n->kind = kind;
    n->src = src;
    n->line = line;
    n->col = col;
    return n;
}

void datm_ytree_free(datm_ynode **pn)
{
    if (!pn || !*pn) return;
    datm_ynode *n = *pn;
    for (int i = 0; i < n->n; i++) {
        if (n->keys) datm_free(n->keys[i]);
        datm_ytree_free(&n->kids[i]);
    }
    datm_free(n->keys);
    datm_free(n->key_line);
    datm_free(n->key_col);
    datm_free(n->key_src);
    datm_free(n->kids);
    datm_free(n->text);
    datm_free(n);
    *pn = NULL;
}

/* Grows the child arrays of a MAP/SEQ by one slot. */
static int push_slot(datm_ynode *n, datm_error *err)
{
    int m = n->n + 1;
    datm_ynode **kids = datm_alloc_array((size_t)m, sizeof *kids, err);
    if (!kids) return DATM_E_NOMEM;
    if (n->n) memcpy(kids, n->kids, (size_t)n->n * sizeof *kids);
    datm_free(n->kids);
    n->kids = kids;
    if (n->kind == DATM_Y_MAP) {
        char **keys = datm_alloc_array((size_t)m, sizeof *keys, err);
        int *kl = datm_alloc_array((size_t)m, sizeof *kl, err);
        int *kc = datm_alloc_array((size_t)m, sizeof *kc, err);
        const char **ks = datm_alloc_array((size_t)m, sizeof *ks, err);
        if (!keys || !kl || !kc || !ks) {
            datm_free(keys); datm_free(kl); datm_free(kc); datm_free(ks);
            return DATM_E_NOMEM;
        }
        if (n->n) {
            memcpy(keys, n->keys, (size_t)n->n * sizeof *keys);
            memcpy(kl, n->key_line, (size_t)n->n * sizeof *kl);
            memcpy(kc, n->key_col, (size_t)n->n * sizeof *kc);
            memcpy(ks, n->key_src, (size_t)n->n * sizeof *ks);
        }
        datm_free(n->keys); datm_free(n->key_line); datm_free(n->key_col); datm_free(n->key_src);
        n->keys = keys; n->key_line = kl; n->key_col = kc; n->key_src = ks;
        ks[m - 1] = n->src;
    }
    n->n = m;
    return DATM_OK;
}

static int build(build_ctx *c, yaml_node_t *y, int depth, datm_ynode **out, datm_error *err)
{
    *out = NULL;
    int line = (int)y->start_mark.line + 1, col = (int)y->start_mark.column + 1;
    if (depth > MAX_DEPTH || ++c->nodes > MAX_NODES)
        return datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: document nests too deeply or is too "
                              "large (aliases?)", c->src, line, col);
    datm_ynode *n = NULL;
    switch (y->type) {
    case YAML_SCALAR_NODE: {
        n = node_new(DATM_Y_SCALAR, c->src, line, col, err);
        if (!n) return DATM_E_NOMEM;
        n->text = datm_alloc(y->data.scalar.length + 1, err);
        if (!n->text) { datm_ytree_free(&n); return DATM_E_NOMEM; }
        memcpy(n->text, y->data.scalar.value, y->data.scalar.length);
        n->quoted = y->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    y->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        break;
    }
    case YAML_SEQUENCE_NODE: {
        n = node_new(DATM_Y_SEQ, c->src, line, col, err);
        if (!n) return DATM_E_NOMEM;
        for (yaml_node_item_t *it = y->data.sequence.items.start; it < y->data.sequence.items.top;
             it++) {
            datm_ynode *kid;
            int rc = build(c, yaml_document_get_node(c->doc, *it), depth + 1, &kid, err);
            if (!rc) rc = push_slot(n, err);
            if (rc) { datm_ytree_free(&kid); datm_ytree_free(&n); return rc; }
            n->kids[n->n - 1] = kid;
        }
        break;
    }
    case YAML_MAPPING_NODE: {
        n = node_new(DATM_Y_MAP, c->src, line, col, err);
        if (!n) return DATM_E_NOMEM;
        for (yaml_node_pair_t *p = y->data.mapping.pairs.start; p < y->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
            int kl = (int)k->start_mark.line + 1, kc = (int)k->start_mark.column + 1;
            if (k->type != YAML_SCALAR_NODE) {
                datm_ytree_free(&n);
                return datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: a key must be a plain name, "
                                      "not a list or mapping", c->src, kl, kc);
            }
            char key[256];
            size_t kn = k->data.scalar.length < sizeof key - 1 ? k->data.scalar.length : sizeof key - 1;
            memcpy(key, k->data.scalar.value, kn);
            key[kn] = '\0';
            int prev;
            if (datm_ytree_get(n, key, &prev)) {
                int pl = n->key_line[prev];
                datm_ytree_free(&n);
                return datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: duplicate key '%s' (first "
                                      "given on line %d)", c->src, kl, kc, key, pl);
            }
            datm_ynode *kid;
            int rc = build(c, yaml_document_get_node(c->doc, p->value), depth + 1, &kid, err);
            if (!rc) rc = push_slot(n, err);
            if (rc) { datm_ytree_free(&kid); datm_ytree_free(&n); return rc; }
            n->keys[n->n - 1] = datm_strdup(key, err);
            n->key_line[n->n - 1] = kl;
            n->key_col[n->n - 1] = kc;
            n->kids[n->n - 1] = kid;
            if (!n->keys[n->n - 1]) { datm_ytree_free(&n); return DATM_E_NOMEM; }
        }
        break;
    }
    default:
        return datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: empty node", c->src, line, col);
    }
    *out = n;
    return DATM_OK;
}

static int parser_error(yaml_parser_t *p, const char *src, datm_error *err)
{
    const yaml_mark_t *m = &p->problem_mark;
    char ctx[200] = "";
    if (p->context)
        snprintf(ctx, sizeof ctx, " (%s, line %d column %d)", p->context,
                 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
    return datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: YAML syntax error: %s%s", src,
                          (int)m->line + 1, (int)m->column + 1,
                          p->problem ? p->problem : "unknown problem", ctx);
}

int datm_ytree_parse(const char *text, size_t len, const char *src, datm_ynode **out,
                     datm_error *err)
{
    *out = NULL;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return datm_error_set(err, DATM_E_NOMEM, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        int rc = parser_error(&parser, src, err);
        yaml_parser_delete(&parser);
        return rc;
    }
    int rc = DATM_OK;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        *out = datm_ytree_new_map(src, 1, 1, err);
        rc = *out ? DATM_OK : DATM_E_NOMEM;
    } else {
        build_ctx c = {&doc, src, 0};
        rc = build(&c, root, 0, out, err);
        if (!rc && (*out)->kind == DATM_Y_SCALAR && (*out)->text[0] == '\0') {
            datm_ytree_free(out);   /* "---" with nothing */
            *out = datm_ytree_new_map(src, 1, 1, err);
            rc = *out ? DATM_OK : DATM_E_NOMEM;
        }
    }
    if (!rc) {
        /* a second document is a mistake in a spec */
        yaml_document_t doc2;
        if (!yaml_parser_load(&parser, &doc2)) {
            rc = parser_error(&parser, src, err);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
            if (r2)
                rc = datm_error_set(err, DATM_E_FORMAT, "%s:%d:%d: a spec holds one YAML document; "
                                    "found a second one", src, (int)r2->start_mark.line + 1,
                                    (int)r2->start_mark.column + 1);
            yaml_document_delete(&doc2);
        }
        if (rc) datm_ytree_free(out);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int datm_ytree_parse_value(const char *text, const char *src, datm_ynode **out, datm_error *err)
{
    *out = NULL;
    /* Parse as a one-key flow mapping so "[1, 2]", "'x'" and plain text all work. */
    size_t n = strlen(text);
    char *buf = datm_alloc(n + 16, err);
    if (!buf) return DATM_E_NOMEM;
    snprintf(buf, n + 16, "v: %s\n", text);
    datm_ynode *root = NULL;
    datm_error e2 = {0};
    int rc = datm_ytree_parse(buf, strlen(buf), src, &root, &e2);
    datm_free(buf);
    if (rc || root->kind != DATM_Y_MAP || root->n != 1) {
        datm_ytree_free(&root);
        /* Not valid YAML (e.g. "a: b"): keep the text as one plain scalar. */
        datm_ynode *s = node_new(DATM_Y_SCALAR, src, 0, 0, err);
        if (!s) return DATM_E_NOMEM;
        s->text = datm_strdup(text, err);
        if (!s->text) { datm_ytree_free(&s); return DATM_E_NOMEM; }
        *out = s;
        return DATM_OK;
    }
    datm_ynode *v = root->kids[0];
    root->kids[0] = NULL;
    datm_ytree_free(&root);
    /* positions inside the synthetic text mean nothing: mark as override */
    v->line = v->col = 0;
    for (int i = 0; i < v->n; i++) {
        v->kids[i]->line = v->kids[i]->col = 0;
        if (v->key_line) v->key_line[i] = v->key_col[i] = 0;
    }
    *out = v;
    return DATM_OK;
}

datm_ynode *datm_ytree_get(const datm_ynode *map, const char *key, int *index)
{
    if (!map || map->kind != DATM_Y_MAP) return NULL;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->keys[i], key) == 0) {
            if (index) *index = i;
            return map->kids[i];
        }
    return NULL;
}

int datm_ytree_remove(datm_ynode *map, const char *key)
{
    int i;
    if (!datm_ytree_get(map, key, &i)) return 0;
    datm_ytree_free(&map->kids[i]);
    datm_free(map->keys[i]);
    for (int j = i + 1; j < map->n; j++) {
        map->kids[j - 1] = map->kids[j];
        map->keys[j - 1] = map->keys[j];
        map->key_line[j - 1] = map->key_line[j];
        map->key_col[j - 1] = map->key_col[j];
        map->key_src[j - 1] = map->key_src[j];
    }
    map->n--;
    return 1;
}

datm_ynode *datm_ytree_new_map(const char *src, int line, int col, datm_error *err)
{
    return node_new(DATM_Y_MAP, src, line, col, err);
}

int datm_ytree_set(datm_ynode *map, const char *key, datm_ynode *val, datm_error *err)
{
    DATM_ASSERT(map->kind == DATM_Y_MAP);
    int i;
    if (datm_ytree_get(map, key, &i)) {
        datm_ytree_free(&map->kids[i]);
        map->kids[i] = val;
        map->key_line[i] = val->line;
        map->key_col[i] = val->col;
        map->key_src[i] = val->src;
        return DATM_OK;
    }
    char *k = datm_strdup(key, err);
    if (!k) return DATM_E_NOMEM;
    int rc = push_slot(map, err);
    if (rc) { datm_free(k); return rc; }
    map->keys[map->n - 1] = k;
    map->key_line[map->n - 1] = val->line;
    map->key_col[map->n - 1] = val->col;
    map->key_src[map->n - 1] = val->src;
    map->kids[map->n - 1] = val;
    return DATM_OK;
}

static const char *kind_noun(const datm_ynode *n)
{
    return n->kind == DATM_Y_MAP ? "a mapping" : n->kind == DATM_Y_SEQ ? "a list" : "a single value";
}

static int is_null(const datm_ynode *n)
{
    return n->kind == DATM_Y_SCALAR && !n->quoted && n->text[0] == '\0';
}

int datm_ytree_merge(datm_ynode *base, datm_ynode *over, const char *path, datm_error *err)
{
    DATM_ASSERT(base->kind == DATM_Y_MAP && over->kind == DATM_Y_MAP);
    int rc = DATM_OK;
    for (int i = 0; i < over->n && !rc; i++) {
        const char *key = over->keys[i];
        datm_ynode *ov = over->kids[i];
        char full[512];
        snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "." : "", key);
        int bi;
        datm_ynode *bv = datm_ytree_get(base, key, &bi);
        if (bv && bv->kind == DATM_Y_MAP && is_null(ov)) continue;   /* "train:" adds nothing */
        if (bv && !is_null(bv) && bv->kind != ov->kind) {
            char here[600], there[600];
            datm_ytree_key_where(over, i, here, sizeof here);
            datm_ytree_key_where(base, bi, there, sizeof there);
            rc = datm_error_set(err, DATM_E_INVALID, "%s: '%s' is %s here but %s in %s (a key "
                                "keeps its type across the files a spec is composed of)", here,
                                full, kind_noun(ov), kind_noun(bv), there);
            break;
        }
        if (bv && bv->kind == DATM_Y_MAP) {
            over->kids[i] = NULL;
            rc = datm_ytree_merge(bv, ov, full, err);   /* consumes ov */
            if (!rc) {   /* the key now reads as given last */
                base->key_line[bi] = over->key_line[i];
                base->key_col[bi] = over->key_col[i];
                base->key_src[bi] = over->key_src[i];
            }
            continue;
        }
        over->kids[i] = NULL;
        rc = datm_ytree_set(base, key, ov, err);
        if (rc) { datm_ytree_free(&ov); break; }
        datm_ytree_get(base, key, &bi);
        base->key_line[bi] = over->key_line[i];
        base->key_col[bi] = over->key_col[i];
        base->key_src[bi] = over->key_src[i];
    }
    datm_ytree_free(&over);
    return rc;
}

char *datm_ytree_flow_text(const datm_ynode *n, datm_error *err)
{
    if (n->kind == DATM_Y_SCALAR) return datm_strdup(n->text, err);
    if (n->kind != DATM_Y_SEQ) return NULL;
    size_t cap = 3;
    for (int i = 0; i < n->n; i++) {
        if (n->kids[i]->kind != DATM_Y_SCALAR) return NULL;
        cap += strlen(n->kids[i]->text) + 2;
    }
    char *s = datm_alloc(cap, err);
    if (!s) return NULL;
    size_t o = 0;
    s[o++] = '[';
    for (int i = 0; i < n->n; i++) {
        if (i) { s[o++] = ','; s[o++] = ' '; }
        size_t l = strlen(n->kids[i]->text);
        memcpy(s + o, n->kids[i]->text, l);
        o += l;
    }
    s[o++] = ']';
    s[o] = '\0';
    return s;
}

void datm_ytree_where(const datm_ynode *n, char *buf, size_t size)
{
    if (n->line > 0) snprintf(buf, size, "%s:%d:%d", n->src, n->line, n->col);
    else snprintf(buf, size, "%s", n->src);
}

void datm_ytree_key_where(const datm_ynode *map, int i, char *buf, size_t size)
{
    if (map->key_line[i] > 0)
        snprintf(buf, size, "%s:%d:%d", map->key_src ? map->key_src[i] : map->src,
                 map->key_line[i], map->key_col[i]);
    else
        snprintf(buf, size, "%s", map->kids[i]->src);
}

int datm_read_text_file(const char *path, size_t max_bytes, const char *what, char **out,
                        datm_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return datm_error_set(err, DATM_E_IO, "%s: is a directory, not a %s file", path, what);
    FILE *f = fopen(path, "rb");
    if (!f)
        return datm_error_set(err, DATM_E_IO, "%s: cannot open %s file: %s", path, what,
                              strerror(errno));
    char *text = datm_alloc(max_bytes + 1, err);
    if (!text) { fclose(f); return DATM_E_NOMEM; }
    size_t n = fread(text, 1, max_bytes + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        datm_free(text);
        return datm_error_set(err, DATM_E_IO, "%s: read error", path);
    }
    if (n > max_bytes) {
        datm_free(text);
        return datm_error_set(err, DATM_E_FORMAT, "%s: larger than %zu bytes; not a %s", path,
                              max_bytes, what);
    }
    text[n] = '\0';
    if (strlen(text) != n) {
        datm_free(text);
        return datm_error_set(err, DATM_E_FORMAT, "%s: contains a NUL byte; not a YAML text", path);
    }
    *out = text;
    return DATM_OK;
}
