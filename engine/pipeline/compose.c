/* engine/pipeline/compose.c: `defaults: [...]` composition of YAML specs (compose.h).
 * Merge order: the defaults in the order listed (each composed first), then the file's own
 * keys; command-line overrides come after all of them (spec.c). Errors name every place
 * involved: the defaults entry that names a missing file, each link of a cycle, both
 * positions of a key whose type differs between two files. */
#include "pipeline/compose.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct frame {
    char real[PATH_MAX];   /* identity of the file (realpath) */
    const char *name;      /* as named */
    char at[700];          /* where it was named: "file:line:col" of the defaults entry */
} frame;

const char *datm_compose_intern(datm_compose *c, const char *name, datm_error *err)
{
    for (int i = 0; i < c->n_files; i++)
        if (!strcmp(c->files[i], name)) return c->files[i];
    if (c->n_files >= DATM_COMPOSE_MAX_FILES) {
        datm_error_set(err, DATM_E_INVALID, "%s: a spec may be composed of at most %d files",
                       name, DATM_COMPOSE_MAX_FILES);
        return NULL;
    }
    char *s = datm_strdup(name, err);
    if (!s) return NULL;
    c->files[c->n_files++] = s;
    return s;
}

void datm_compose_free(datm_compose *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_files; i++) datm_free(c->files[i]);
    c->n_files = 0;
}

void datm_path_normalise(char *path)
{
    /* Split on '/', drop "." parts, let ".." cancel a preceding real part. */
    const int absolute = path[0] == '/';
    char *parts[256];
    int n = 0;
    char *save = NULL;
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = strtok_r(buf, "/", &save); p && n < 256; p = strtok_r(NULL, "/", &save)) {
        if (!strcmp(p, ".")) continue;
        if (!strcmp(p, "..") && n > 0 && strcmp(parts[n - 1], "..") != 0) { n--; continue; }
        if (!strcmp(p, "..") && absolute) continue;
        parts[n++] = p;
    }
    size_t o = 0, size = strlen(path) + 1;
    char out[PATH_MAX];
    if (absolute) out[o++] = '/';
    for (int i = 0; i < n && o + 1 < sizeof out; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? "/" : "", parts[i]);
    if (o == 0) out[o++] = '.';
    out[o < sizeof out ? o : sizeof out - 1] = '\0';
    snprintf(path, size, "%s", out);
}

static int compose_tree_rec(datm_compose *c, datm_ynode *root, const char *path, frame *stack,
                            int depth, datm_ynode **out, datm_error *err);

static int compose_file_rec(datm_compose *c, const char *path, const char *named_at,
                            frame *stack, int depth, datm_ynode **out, datm_error *err)
{
    *out = NULL;
    frame *me = &stack[depth];
    if (!realpath(path, me->real)) {
        if (named_at)
            return datm_error_set(err, DATM_E_IO, "%s: defaults names '%s', which cannot be "
                                  "opened: %s", named_at, path, strerror(errno));
        return datm_error_set(err, DATM_E_IO, "%s: cannot open spec file: %s", path,
                              strerror(errno));
    }
    me->name = path;
    snprintf(me->at, sizeof me->at, "%s", named_at ? named_at : "");
    for (int i = 0; i < depth; i++) {
        if (strcmp(stack[i].real, me->real) != 0) continue;
        char chain[sizeof err->msg];
        size_t o = 0;
        for (int j = i + 1; j <= depth && o + 1 < sizeof chain; j++)
            o += (size_t)snprintf(chain + o, sizeof chain - o, "%s  %s names %s", j > i + 1 ? "\n" : "",
                                  stack[j].at, stack[j].name);
        return datm_error_set(err, DATM_E_INVALID, "%s: cycle in defaults (a file includes "
                              "itself):\n%s", named_at, chain);
    }
    char *text = NULL;
    int rc = datm_read_text_file(path, 1u << 20, "spec", &text, err);
    if (rc) {
        if (named_at) datm_error_prefix(err, "%s: defaults: ", named_at);
        return rc;
    }
    const char *src = datm_compose_intern(c, path, err);
    datm_ynode *root = NULL;
    if (!src) rc = err->code;
    else rc = datm_ytree_parse(text, strlen(text), src, &root, err);
    datm_free(text);
    if (rc) return rc;
    return compose_tree_rec(c, root, path, stack, depth, out, err);
}

static int compose_tree_rec(datm_compose *c, datm_ynode *root, const char *path, frame *stack,
                            int depth, datm_ynode **out, datm_error *err)
{
    *out = NULL;
    int di;
    datm_ynode *defs = root->kind == DATM_Y_MAP ? datm_ytree_get(root, "defaults", &di) : NULL;
    if (!defs) { *out = root; return DATM_OK; }
    char where[700];
    datm_ytree_where(defs, where, sizeof where);
    if (defs->kind != DATM_Y_SEQ) {
        datm_ytree_free(&root);
        return datm_error_set(err, DATM_E_INVALID, "%s: defaults: expected a list of spec files, "
                              "e.g. defaults: [../base/whai.yaml]", where);
    }
    if (depth + 1 >= DATM_COMPOSE_MAX_DEPTH) {
        datm_ytree_free(&root);
        return datm_error_set(err, DATM_E_INVALID, "%s: defaults nest more than %d files deep",
                              where, DATM_COMPOSE_MAX_DEPTH);
    }
    datm_ynode *acc = datm_ytree_new_map(root->src, 1, 1, err);
    int rc = acc ? DATM_OK : DATM_E_NOMEM;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0';
    else dir[0] = '\0';
    for (int i = 0; i < defs->n && !rc; i++) {
        const datm_ynode *it = defs->kids[i];
        char at[700];
        datm_ytree_where(it, at, sizeof at);
        if (it->kind != DATM_Y_SCALAR || it->text[0] == '\0') {
            rc = datm_error_set(err, DATM_E_INVALID, "%s: defaults: each entry is the path of a "
                                "spec file (relative to %s)", at, dir[0] ? dir : "this file's folder");
            break;
        }
        char sub[PATH_MAX];
        if (it->text[0] == '/') snprintf(sub, sizeof sub, "%s", it->text);
        else snprintf(sub, sizeof sub, "%s%s", dir, it->text);
        datm_path_normalise(sub);
        datm_ynode *t = NULL;
        rc = compose_file_rec(c, sub, at, stack, depth + 1, &t, err);
        if (rc) break;
        if (t->kind != DATM_Y_MAP) {
            char tw[700];
            datm_ytree_where(t, tw, sizeof tw);
            datm_ytree_free(&t);
            rc = datm_error_set(err, DATM_E_INVALID, "%s: a spec file named in defaults (at %s) "
                                "must be a mapping of keys", tw, at);
            break;
        }
        rc = datm_ytree_merge(acc, t, "", err);
    }
    if (!rc) {
        datm_ytree_remove(root, "defaults");
        rc = datm_ytree_merge(acc, root, "", err);   /* consumes root */
        root = NULL;
    }
    datm_ytree_free(&root);
    if (rc) { datm_ytree_free(&acc); return rc; }
    *out = acc;
    return DATM_OK;
}

int datm_compose_file(datm_compose *c, const char *path, datm_ynode **out, datm_error *err)
{
    frame *stack = datm_alloc_array(DATM_COMPOSE_MAX_DEPTH + 1, sizeof *stack, err);
    if (!stack) return DATM_E_NOMEM;
    int rc = compose_file_rec(c, path, NULL, stack, 0, out, err);
    datm_free(stack);
    return rc;
}

int datm_compose_tree(datm_compose *c, datm_ynode *root, const char *path, datm_ynode **out,
                      datm_error *err)
{
    frame *stack = datm_alloc_array(DATM_COMPOSE_MAX_DEPTH + 1, sizeof *stack, err);
    if (!stack) { datm_ytree_free(&root); return DATM_E_NOMEM; }
    stack[0].name = path;
    stack[0].at[0] = '\0';
    if (!realpath(path, stack[0].real)) snprintf(stack[0].real, sizeof stack[0].real, "%s", path);
    int rc = compose_tree_rec(c, root, path, stack, 0, out, err);
    datm_free(stack);
    return rc;
}
