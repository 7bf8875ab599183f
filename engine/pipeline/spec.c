/* engine/pipeline/spec.c: YAML spec -> validated datm_spec.
 *
 * Parse with libyaml keeping positions, apply "a.b=value" overrides to the tree, validate
 * each section against its schema (the engine's tables for data:/train:/evaluate:/output:,
 * the variant's table for model:), fill defaults, write the canonical resolved YAML and hash
 * it. Errors are collected (up to MAX_ERRORS) so one run of `datm check` shows several
 * mistakes; each line names file:line:column (or the override) and the key. */
#include "pipeline/pipeline.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/compose.h"
#include "io/yamltree.h"

#define MAX_ERRORS 8

typedef struct load_ctx {
    const char *file;
    char       *srcs[DATM_MAX_OVERRIDES];   /* "override 'k=v'" labels, live while loading */
    int         n_errors;
    char        msg[sizeof(((datm_error *)0)->msg)];
    int         fatal;                       /* an allocation failed */
    datm_spec  *out;                         /* gets the keys' positions */
} load_ctx;

/* Remembers where the value of sec.key was given (the last one wins, as for the value). */
static void note_where(load_ctx *c, const char *sec, const char *key, const char *where)
{
    datm_spec *s = c->out;
    char full[96];
    snprintf(full, sizeof full, "%s%s%s", sec, sec[0] ? "." : "", key);
    for (int i = 0; i < s->n_where; i++)
        if (!strcmp(s->where[i].key, full)) {
            snprintf(s->where[i].where, sizeof s->where[i].where, "%s", where);
            return;
        }
    if (s->n_where % 32 == 0) {
        datm_spec_where *w = realloc(s->where, (size_t)(s->n_where + 32) * sizeof *w);
        if (!w) return;   /* positions are a courtesy: without one the message stays as it is */
        s->where = w;
    }
    snprintf(s->where[s->n_where].key, sizeof s->where[0].key, "%s", full);
    snprintf(s->where[s->n_where].where, sizeof s->where[0].where, "%s", where);
    s->n_where++;
}

/* Where the first key of s that msg names was given, or NULL. */
static const char *locate_key(const datm_spec *s, const char *msg)
{
    const char *best = NULL, *at = NULL;
    for (int i = 0; i < s->n_where; i++) {
        const char *k = s->where[i].key;
        if (!strchr(k, '.')) continue;   /* "seed", "name": too common as plain words */
        const size_t n = strlen(k);
        for (const char *p = strstr(msg, k); p; p = strstr(p + 1, k)) {
            const char b = p > msg ? p[-1] : ' ', e = p[n];
            if (isalnum((unsigned char)b) || b == '_' || b == '.' || isalnum((unsigned char)e) ||
                e == '_')
                continue;   /* part of a longer name */
            if (!at || p < at) {
                at = p;
                best = s->where[i].where;
            }
            break;
        }
    }
    return best;
}

void datm_spec_locate_error(const datm_spec *s, datm_error *err)
{
    if (!s || !err) return;
    const char *best = locate_key(s, err->msg);
    datm_error_prefix(err, "%s: ", best ? best : s->path);
}

static void add_error(load_ctx *c, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_error(load_ctx *c, const char *where, const char *fmt, ...)
{
    c->n_errors++;
    if (c->n_errors > MAX_ERRORS) return;
    size_t o = strlen(c->msg);
    if (o && o + 1 < sizeof c->msg) c->msg[o++] = '\n';
    if (o + 1 >= sizeof c->msg) return;
    int k = snprintf(c->msg + o, sizeof c->msg - o, "%s: ", where);
    if (k < 0) return;
    o += (size_t)k;
    if (o + 1 >= sizeof c->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg + o, sizeof c->msg - o, fmt, ap);
    va_end(ap);
}

static const datm_section_id engine_sections[] = {DATM_SEC_DATA, DATM_SEC_TRAIN, DATM_SEC_EVALUATE,
                                                  DATM_SEC_OUTPUT};

static int section_by_name(const char *name)
{
    for (int s = 1; s < DATM_SEC_COUNT_; s++)
        if (strcmp(datm_section_name((datm_section_id)s), name) == 0) return s;
    return -1;
}

static void spec_params_fill(datm_spec *s);
static const char *where_given(const datm_spec *s, const char *sec, const char *key);

/* Keys kept in a table only so that resolved specs keep their hashes, though nothing reads
 * them: any value but the default is an error naming the key (it would do nothing). */
static void check_inert_keys(load_ctx *c, const datm_spec *s)
{
    const datm_param_schema *tw = &datm_output_params_schema[DATM_OUTPUT_ROW_top_words];
    if (s->p.output.top_words != strtoll(tw->def, NULL, 10)) {
        const char *w = where_given(s, "output", tw->key);
        add_error(c, w[0] ? w : c->file, "output.%s: %lld: not used (result.h5 /topics keeps "
                  "25 words per topic; `datm topics --top N` prints N of them); remove the key",
                  tw->key, (long long)s->p.output.top_words);
    }
}

/* The variant's own rules on its options (ops->check: the combinations its schema cannot
 * state), so that a spec its create would refuse is refused here, before any data is read;
 * the message is located at the key it names, as a create error is (datm_run_model_create). */
static void check_model_options(load_ctx *c, const datm_spec *s)
{
    datm_error e = {0};
    if (datm_model_check(s->ops, s->sec[DATM_SEC_MODEL], &e) == DATM_OK) return;
    const char *w = locate_key(s, e.msg);
    add_error(c, w ? w : c->file, "model %s: %s", s->variant, e.msg);
}

/* ---- overrides ---- */

int datm_override_split(const char *arg, char *key, size_t key_size, const char **value)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) return 0;
    size_t n = (size_t)(eq - arg);
    if (n >= key_size) n = key_size - 1;
    memcpy(key, arg, n);
    key[n] = '\0';
    *value = eq + 1;
    return 1;
}

/* What is wrong with an override's key path ("a.b.c": names of letters, digits, '_' and '-'
 * joined by single dots), or NULL. */
static const char *bad_key_path(const char *path, size_t len)
{
    if (len == 0) return "the key path is empty";
    if (len >= 255) return "the key path is too long";
    if (path[0] == '.' || path[len - 1] == '.') return "the key path starts or ends with '.'";
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)path[i];
        if (ch == '.' && path[i + 1] == '.') return "the key path has an empty name ('..')";
        if (ch != '.' && ch != '_' && ch != '-' && !isalnum(ch))
            return "a key name holds a character other than letters, digits, '_' and '-'";
    }
    return NULL;
}

static int apply_override(load_ctx *c, datm_ynode *root, const char *arg, const char *src,
                          datm_error *err)
{
    char key[256];
    const char *value;
    const char *eqp = strchr(arg, '=');
    const char *kp = arg[0] == '~' ? arg + 1 : arg;
    const char *why = bad_key_path(kp, arg[0] == '~' ? strlen(kp) : eqp ? (size_t)(eqp - arg) : strlen(arg));
    if (why) {
        add_error(c, src, "%s (an override is key.path=value or ~key.path)", why);
        return DATM_OK;
    }
    if (arg[0] == '~') {
        /* ~a.b removes key b of section a (e.g. a key of another variant) */
        snprintf(key, sizeof key, "%s", arg + 1);
        char *dot = strrchr(key, '.');
        datm_ynode *map = root;
        if (dot) {
            *dot = '\0';
            map = root;
            char *save = NULL;
            for (char *p = strtok_r(key, ".", &save); p && map; p = strtok_r(NULL, ".", &save))
                map = datm_ytree_get(map, p, NULL);
        }
        const char *leaf = dot ? dot + 1 : key;
        if (!map || map->kind != DATM_Y_MAP || !datm_ytree_remove(map, leaf))
            add_error(c, src, "'%s': no such key in the spec to remove", arg + 1);
        return DATM_OK;
    }
    if (!datm_override_split(arg, key, sizeof key, &value)) {
        add_error(c, src, "an override has the form key.path=value");
        return DATM_OK;
    }
    datm_ynode *map = root;
    char *save = NULL;
    char *part = strtok_r(key, ".", &save);
    while (part) {
        char *next = strtok_r(NULL, ".", &save);
        if (!next) break;
        datm_ynode *sub = datm_ytree_get(map, part, NULL);
        if (!sub || (sub->kind == DATM_Y_SCALAR && sub->text[0] == '\0')) {
            sub = datm_ytree_new_map(src, 0, 0, err);
            if (!sub) return DATM_E_NOMEM;
            int rc = datm_ytree_set(map, part, sub, err);
            if (rc) { datm_ytree_free(&sub); return rc; }
        } else if (sub->kind != DATM_Y_MAP) {
            add_error(c, src, "'%s' is a value, not a section with keys", part);
            return DATM_OK;
        }
        map = sub;
        part = next;
    }
    if (!part) {
        add_error(c, src, "empty key");
        return DATM_OK;
    }
    datm_ynode *val;
    int rc = datm_ytree_parse_value(value, src, &val, err);
    if (rc) return rc;
    rc = datm_ytree_set(map, part, val, err);
    if (rc) datm_ytree_free(&val);
    return rc;
}

/* ---- section validation ---- */

/* Does the schema of cfg have keys "<group>.x" (a group written as a nested mapping)? */
static int is_key_group(const datm_config *cfg, const char *group)
{
    const size_t n = strlen(group);
    const datm_param_schema *p = datm_config_schema(cfg);
    for (int i = 0; p[i].key; i++)
        if (!strncmp(p[i].key, group, n) && p[i].key[n] == '.') return 1;
    return 0;
}

/* Sets every key of `map` into cfg; unknown keys and bad values become errors. A mapping
 * under a key that names a group of schema keys ("coherence" for "coherence.top_n") sets
 * those keys (prefix: the group path so far, "" at the top). */
static void fill_keys(load_ctx *c, const datm_ynode *map, datm_config *cfg, const char *skip,
                      const char *prefix)
{
    const char *sec = datm_config_section(cfg);
    for (int i = 0; i < map->n; i++) {
        char full[64];
        snprintf(full, sizeof full, "%s%s", prefix, map->keys[i]);
        const char *key = full;
        const datm_ynode *v = map->kids[i];
        /* skip: the engine's own key (model.variant; model.plugin goes with it) */
        if (skip && (strcmp(key, skip) == 0 || strcmp(key, "plugin") == 0)) continue;
        char where[600];
        datm_ytree_key_where(map, i, where, sizeof where);
        if (v->kind == DATM_Y_MAP && is_key_group(cfg, key)) {
            char sub[72];
            snprintf(sub, sizeof sub, "%s.", key);
            fill_keys(c, v, cfg, NULL, sub);
            continue;
        }
        if (!datm_config_has(cfg, key) && is_key_group(cfg, key)) {
            add_error(c, where, "%s.%s: expected a mapping of its keys (%s.%s.<key>: value)", sec,
                      key, sec, key);
            continue;
        }
        if (!datm_config_has(cfg, key)) {
            datm_error e = {0};
            datm_config_set(cfg, key, "", &e);   /* fills the did-you-mean message */
            add_error(c, where, "%s", e.msg);
            continue;
        }
        if (v->kind == DATM_Y_MAP) {
            add_error(c, where, "%s.%s: expected a value, got a mapping (check the indentation)",
                      sec, key);
            continue;
        }
        datm_error e = {0};
        char *text = datm_ytree_flow_text(v, &e);
        if (!text) {
            if (e.code == DATM_E_NOMEM) { c->fatal = 1; return; }
            add_error(c, where, "%s.%s: expected a value or a flat list", sec, key);
            continue;
        }
        const datm_param_schema *p = datm_schema_find(datm_config_schema(cfg), key);
        int is_list = p->type == DATM_PARAM_INT_LIST || p->type == DATM_PARAM_REAL_LIST ||
                      p->type == DATM_PARAM_CHOICE_LIST;
        if (v->kind == DATM_Y_SEQ && !is_list) {
            add_error(c, where, "%s.%s: expected a single %s, got a list", sec, key,
                      datm_param_type_name(p->type));
        } else {
            char vwhere[600];
            datm_ytree_where(v, vwhere, sizeof vwhere);
            if (datm_config_set(cfg, key, text, &e)) add_error(c, vwhere, "%s", e.msg);
            else note_where(c, sec, key, vwhere);
        }
        datm_free(text);
    }
}

static void fill_section(load_ctx *c, const datm_ynode *map, datm_config *cfg, const char *skip)
{
    fill_keys(c, map, cfg, skip, "");
}

static void check_required(load_ctx *c, const datm_config *cfg, const char *where)
{
    datm_error e = {0};
    if (datm_config_check_complete(cfg, &e)) add_error(c, where, "%s", e.msg);
}

static void list_variants(const datm_model_catalog *cat, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    int n = cat->count();
    for (int i = 0; i < n && o + 1 < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", cat->at(i)->name);
    if (n == 0) snprintf(buf, size, "(none registered)");
}

/* model.plugin: PATH.so loads that plugin before the variant is looked up; a relative path
 * is taken from the folder of the file that names it (or the working directory for an
 * override), then from DATM_PLUGIN_PATH. Returns 1 after an error. */
static int load_plugin(load_ctx *c, const datm_ynode *map, const datm_model_catalog *cat)
{
    int pi;
    const datm_ynode *p = map ? datm_ytree_get(map, "plugin", &pi) : NULL;
    if (!p) return 0;
    char where[600];
    datm_ytree_where(p, where, sizeof where);
    if (p->kind != DATM_Y_SCALAR || !p->text[0]) {
        add_error(c, where, "model.plugin: expected the path of a plugin file (PATH.so)");
        return 1;
    }
    if (!cat->load) {
        add_error(c, where, "model.plugin: this program cannot load plugins");
        return 1;
    }
    char base[4096] = "";
    if (p->src && strncmp(p->src, "override", 8) != 0) {
        snprintf(base, sizeof base, "%s", p->src);
        char *slash = strrchr(base, '/');
        if (slash) *slash = '\0';
        else snprintf(base, sizeof base, ".");
    }
    datm_error e = {0};
    if (cat->load(p->text, base[0] ? base : NULL, "", &e)) {
        add_error(c, where, "model.plugin: %s", e.msg);
        return 1;
    }
    note_where(c, "model", "plugin", where);
    return 0;
}

static void validate_model(load_ctx *c, const datm_ynode *map, const char *sec_where,
                           const datm_model_catalog *cat, datm_spec *s, datm_error *err)
{
    char variants[512];
    list_variants(cat, variants, sizeof variants);
    int vi;
    const datm_ynode *v = map ? datm_ytree_get(map, "variant", &vi) : NULL;
    if (!v) {
        add_error(c, sec_where, "model.variant is required; registered variants: %s", variants);
        return;
    }
    if (load_plugin(c, map, cat)) return;
    char where[600];
    datm_ytree_where(v, where, sizeof where);
    if (v->kind != DATM_Y_SCALAR) {
        add_error(c, where, "model.variant: expected a name, registered variants: %s", variants);
        return;
    }
    s->ops = cat->find(v->text);
    if (!s->ops) {
        const char *cand[128];
        int n = cat->count() < 128 ? cat->count() : 128;
        for (int i = 0; i < n; i++) cand[i] = cat->at(i)->name;
        const char *near = datm_closest_name(v->text, cand, n);
        char hint[160] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        add_error(c, where, "model.variant: unknown variant '%s'%s; registered variants: %s",
                  v->text, hint, variants);
        return;
    }
    if (!datm_model_api_taken(s->ops->api_version)) {
        add_error(c, where, "model.variant: '%s' was built for plugin API %d, the engine takes "
                  "%d to %d", v->text, s->ops->api_version, DATM_MODEL_API_VERSION_MIN,
                  DATM_MODEL_API_VERSION);
        return;
    }
    snprintf(s->variant, sizeof s->variant, "%s", v->text);
    note_where(c, "model", "variant", where);
    const char *ppath = NULL, *psha = NULL;
    if (cat->source && cat->source(s->ops, &ppath, &psha)) {
        snprintf(s->plugin, sizeof s->plugin, "%s", ppath);
        snprintf(s->plugin_sha256, sizeof s->plugin_sha256, "%s", psha);
    }
    static const datm_param_schema empty[] = {{NULL, 0, NULL, 0, 0, NULL, NULL}};
    if (datm_config_create_partial(s->ops->schema ? s->ops->schema : empty, "model",
                                   &s->sec[DATM_SEC_MODEL], err)) {
        datm_error_prefix(err, "variant %s: ", v->text);
        c->fatal = 1;
        return;
    }
    fill_section(c, map, s->sec[DATM_SEC_MODEL], "variant");
    check_required(c, s->sec[DATM_SEC_MODEL], sec_where);
}

static const char *file_stem(const char *path, char *buf, size_t size)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, size, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0)) *dot = '\0';
    return buf;
}

static int validate(load_ctx *c, const datm_ynode *root, const datm_model_catalog *cat,
                    datm_spec *s, datm_error *err)
{
    if (root->kind != DATM_Y_MAP) {
        char where[600];
        datm_ytree_where(root, where, sizeof where);
        add_error(c, where, "a spec is a mapping of keys (name:, seed:, data:, model:, train:, ...)");
        return DATM_OK;
    }
    int rc = datm_config_create_partial(datm_section_schema(DATM_SEC_RUN), "", &s->sec[DATM_SEC_RUN],
                                        err);
    for (size_t k = 0; !rc && k < DATM_COUNTOF(engine_sections); k++) {
        datm_section_id id = engine_sections[k];
        rc = datm_config_create_partial(datm_section_schema(id), datm_section_name(id), &s->sec[id],
                                        err);
    }
    if (rc) return rc;

    const datm_ynode *secnode[DATM_SEC_COUNT_] = {0};
    char secwhere[DATM_SEC_COUNT_][600];
    for (int s2 = 0; s2 < DATM_SEC_COUNT_; s2++) snprintf(secwhere[s2], 600, "%s", c->file);

    const datm_param_schema *run = datm_section_schema(DATM_SEC_RUN);
    for (int i = 0; i < root->n; i++) {
        const char *key = root->keys[i];
        const datm_ynode *v = root->kids[i];
        char where[600];
        datm_ytree_key_where(root, i, where, sizeof where);
        int sid = section_by_name(key);
        if (sid > 0) {
            if (v->kind == DATM_Y_SCALAR && v->text[0] == '\0' && !v->quoted) continue; /* "train:" */
            if (v->kind != DATM_Y_MAP) {
                add_error(c, where, "'%s' is a section: it holds keys, one per indented line", key);
                continue;
            }
            secnode[sid] = v;
            snprintf(secwhere[sid], sizeof secwhere[sid], "%s", where);
            continue;
        }
        if (datm_schema_find(run, key)) continue;   /* validated below */
        /* unknown top-level key: suggest a top-level name or a key of a section */
        const char *cand[64];
        int n = 0;
        for (int j = 0; run[j].key && n < 60; j++) cand[n++] = run[j].key;
        for (int s2 = 1; s2 < DATM_SEC_COUNT_; s2++) cand[n++] = datm_section_name((datm_section_id)s2);
        const char *near = datm_closest_name(key, cand, n);
        char hint[200] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        for (size_t k = 0; !near && k < DATM_COUNTOF(engine_sections); k++)
            if (datm_schema_find(datm_section_schema(engine_sections[k]), key))
                snprintf(hint, sizeof hint, " (did you mean '%s.%s'? it belongs in the %s: section)",
                         datm_section_name(engine_sections[k]), key,
                         datm_section_name(engine_sections[k]));
        add_error(c, where, "unknown top-level key '%s'%s", key, hint);
    }
    /* top-level scalars: fill a temporary map view without the sections */
    {
        datm_ynode view = *root;
        datm_ynode *kids[256];
        char *keys[256];
        const char *ks[256];
        int kl[256], kc[256], n = 0;
        for (int i = 0; i < root->n && n < 256; i++)
            if (datm_schema_find(run, root->keys[i])) {
                kids[n] = root->kids[i];
                keys[n] = root->keys[i];
                kl[n] = root->key_line[i];
                kc[n] = root->key_col[i];
                ks[n] = root->key_src[i];
                n++;
            }
        view.n = n;
        view.kids = kids;
        view.keys = keys;
        view.key_line = kl;
        view.key_col = kc;
        view.key_src = ks;
        fill_section(c, &view, s->sec[DATM_SEC_RUN], NULL);
    }
    for (size_t k = 0; k < DATM_COUNTOF(engine_sections); k++) {
        datm_section_id id = engine_sections[k];
        if (secnode[id]) fill_section(c, secnode[id], s->sec[id], NULL);
        check_required(c, s->sec[id], secwhere[id]);
    }
    validate_model(c, secnode[DATM_SEC_MODEL], secwhere[DATM_SEC_MODEL], cat, s, err);
    if (c->fatal) return err->code ? err->code : DATM_E_NOMEM;
    if (c->n_errors) return DATM_OK;

    /* derived defaults: name from the file, output.dir from the name */
    datm_run_params_get(s->sec[DATM_SEC_RUN], &s->p.run);
    datm_output_params_get(s->sec[DATM_SEC_OUTPUT], &s->p.output);
    if (!s->p.run.name[0]) {
        char stem[256], q[300];
        file_stem(c->file, stem, sizeof stem);
        snprintf(q, sizeof q, "\"%s\"", stem);
        if (datm_config_set(s->sec[DATM_SEC_RUN], datm_run_params_schema[DATM_RUN_ROW_name].key, q, err))
            return err->code;
        datm_run_params_get(s->sec[DATM_SEC_RUN], &s->p.run);
    }
    if (!s->p.output.dir[0]) {
        char d[600];
        snprintf(d, sizeof d, "\"results/%s\"", s->p.run.name);
        if (datm_config_set(s->sec[DATM_SEC_OUTPUT], datm_output_params_schema[DATM_OUTPUT_ROW_dir].key, d, err))
            return err->code;
    }
    spec_params_fill(s);
    check_inert_keys(c, s);
    datm_config_link_train(s->sec[DATM_SEC_MODEL], s->sec[DATM_SEC_TRAIN]);
    check_model_options(c, s);
    return DATM_OK;
}

/* ---- resolved YAML ---- */

typedef struct sbuf {
    char  *p;
    size_t n, cap;
    int    oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = 1; return; }
        if (b->p && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)k;
        char *q = realloc(b->p, cap);
        if (!q) { b->oom = 1; return; }
        b->p = q;
        b->cap = cap;
    }
}

/* for_hash: leave out the keys that cannot change the numbers (where the run is written,
 * how many threads compute it), so a run keeps its hash when resumed elsewhere; data.stream
 * when false, train.reduce_chunks when 0, evaluate.cv_folds when 5 and evaluate.cv_docs when
 * 20000 (their defaults, given or not) too, so that specs written before the keys existed
 * keep their hash. */
static int hash_excluded(const datm_config *cfg, const char *key)
{
    const char *sec = datm_config_section(cfg);
    const int ev = !strcmp(sec, "evaluate");
    return (!strcmp(sec, "output") && !strcmp(key, "dir")) || (!*sec && !strcmp(key, "threads")) ||
           (!strcmp(sec, "data") && !strcmp(key, "stream") && !datm_config_bool(cfg, key)) ||
           (!strcmp(sec, "train") && !strcmp(key, "reduce_chunks") && !datm_config_int(cfg, key)) ||
           (ev && !strcmp(key, "cv_folds") && datm_config_int(cfg, key) == 5) ||
           (ev && !strcmp(key, "cv_docs") && datm_config_int(cfg, key) == 20000);
}

static void emit_section(sbuf *b, const datm_config *cfg, int indent, int comments, int for_hash)
{
    const datm_param_schema *sch = datm_config_schema(cfg);
    for (int i = 0; sch[i].key; i++) {
        if (for_hash && hash_excluded(cfg, sch[i].key)) continue;
        char val[8192];
        datm_config_format(cfg, sch[i].key, val, sizeof val);
        sb_printf(b, "%*s%s: %s%s\n", indent, "", sch[i].key, val,
                  comments && datm_config_is_default(cfg, sch[i].key) ? "  # default" : "");
    }
}

/* Where sec.key was given ("" when not given: a default or derived value). */
static const char *where_given(const datm_spec *s, const char *sec, const char *key)
{
    char full[96];
    snprintf(full, sizeof full, "%s%s%s", sec, sec[0] ? "." : "", key);
    for (int i = 0; i < s->n_where; i++)
        if (!strcmp(s->where[i].key, full)) return s->where[i].where;
    return "";
}

static void emit_origins(sbuf *b, const datm_spec *s, const datm_config *cfg, int indent)
{
    const datm_param_schema *sch = datm_config_schema(cfg);
    const char *sec = datm_config_section(cfg);
    for (int i = 0; sch[i].key; i++) {
        char val[8192];
        datm_config_format(cfg, sch[i].key, val, sizeof val);
        const char *w = where_given(s, sec, sch[i].key);
        sb_printf(b, "%*s%s: %s  # %s\n", indent, "", sch[i].key, val,
                  w[0] ? w : datm_config_is_default(cfg, sch[i].key) ? "default" : "derived");
    }
}

/* mode 0: plain; 1: "# default" marks; 2: every value's origin. */
static char *spec_yaml_mode(const datm_spec *s, int mode, int for_hash, datm_error *err)
{
    sbuf b = {0};
    if (mode == 2) emit_origins(&b, s, s->sec[DATM_SEC_RUN], 0);
    else emit_section(&b, s->sec[DATM_SEC_RUN], 0, mode, for_hash);
    for (int id = 1; id < DATM_SEC_COUNT_; id++) {
        sb_printf(&b, "%s:\n", datm_section_name((datm_section_id)id));
        if (id == DATM_SEC_MODEL) {
            const char *w = where_given(s, "model", "variant");
            if (mode == 2) sb_printf(&b, "  variant: %s  # %s\n", s->variant, w[0] ? w : "?");
            else sb_printf(&b, "  variant: %s\n", s->variant);
            /* a plugin's variant: the file (where it was loaded from), or for the hash the
             * file's content, so a rebuilt plugin is another run and a moved one the same */
            if (s->plugin[0] && for_hash) sb_printf(&b, "  plugin_sha256: %s\n", s->plugin_sha256);
            else if (s->plugin[0] && mode == 2)
                sb_printf(&b, "  plugin: \"%s\"  # sha256 %s\n", s->plugin, s->plugin_sha256);
            else if (s->plugin[0]) sb_printf(&b, "  plugin: \"%s\"\n", s->plugin);
        }
        if (mode == 2) emit_origins(&b, s, s->sec[id], 2);
        else emit_section(&b, s->sec[id], 2, mode, for_hash);
    }
    if (b.oom || !b.p) {
        free(b.p);
        datm_error_set(err, DATM_E_NOMEM, "out of memory writing the resolved spec");
        return NULL;
    }
    char *out = datm_strdup(b.p, err);
    free(b.p);
    return out;
}

static char *spec_yaml(const datm_spec *s, int with_comments, int for_hash, datm_error *err)
{
    return spec_yaml_mode(s, with_comments ? 1 : 0, for_hash, err);
}

char *datm_spec_to_yaml(const datm_spec *s, int with_comments, datm_error *err)
{
    return spec_yaml(s, with_comments, 0, err);
}

char *datm_spec_origins_yaml(const datm_spec *s, datm_error *err)
{
    return spec_yaml_mode(s, 2, 0, err);
}

/* The typed copy of the engine sections (after every value, derived ones too, is set). */
static void spec_params_fill(datm_spec *s)
{
    datm_run_params_get(s->sec[DATM_SEC_RUN], &s->p.run);
    datm_data_params_get(s->sec[DATM_SEC_DATA], &s->p.data);
    datm_train_params_get(s->sec[DATM_SEC_TRAIN], &s->p.train);
    datm_evaluate_params_get(s->sec[DATM_SEC_EVALUATE], &s->p.evaluate);
    datm_output_params_get(s->sec[DATM_SEC_OUTPUT], &s->p.output);
}

const datm_config *datm_spec_section(const datm_spec *s, datm_section_id id)
{
    DATM_ASSERT(id >= 0 && id < DATM_SEC_COUNT_ && s->sec[id]);
    return s->sec[id];
}

int datm_spec_defaults_applied(const datm_spec *s, char *buf, size_t size)
{
    size_t o = 0;
    int count = 0;
    if (size) buf[0] = '\0';
    for (int id = 0; id < DATM_SEC_COUNT_; id++) {
        const datm_config *cfg = s->sec[id];
        if (!cfg) continue;
        const datm_param_schema *sch = datm_config_schema(cfg);
        for (int i = 0; sch[i].key; i++) {
            if (!datm_config_is_default(cfg, sch[i].key)) continue;
            count++;
            if (o < size)
                o += (size_t)snprintf(buf + o, size - o, "%s%s%s\n",
                                      datm_section_name((datm_section_id)id), id ? "." : "",
                                      sch[i].key);
        }
    }
    return count;
}

void datm_spec_free(datm_spec *s)
{
    if (!s) return;
    for (int i = 0; i < DATM_SEC_COUNT_; i++) datm_config_destroy(&s->sec[i]);
    for (int i = 0; i < s->n_overrides; i++) datm_free(s->overrides[i]);
    datm_free(s->resolved);
    free(s->where);
    memset(s, 0, sizeof *s);
}

/* ---- loading ---- */

/* Validates a composed tree (consumed) under the name `name`: overrides, sections, resolved
 * text and hash. */
static int spec_load_tree(datm_ynode *root, const char *name, const char *const *overrides,
                          int n_overrides, const datm_model_catalog *cat, datm_spec *out,
                          datm_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    if (n_overrides > DATM_MAX_OVERRIDES) {
        datm_ytree_free(&root);
        return datm_error_set(err, DATM_E_INVALID, "at most %d overrides", DATM_MAX_OVERRIDES);
    }
    load_ctx c = {0};
    c.file = name;
    c.out = out;
    int rc = DATM_OK;
    for (int i = 0; i < n_overrides && !rc; i++) {
        size_t n = strlen(overrides[i]) + 16;
        c.srcs[i] = datm_alloc(n, err);
        out->overrides[i] = datm_strdup(overrides[i], err);
        if (!c.srcs[i] || !out->overrides[i]) { rc = DATM_E_NOMEM; break; }
        out->n_overrides = i + 1;
        snprintf(c.srcs[i], n, "override '%s'", overrides[i]);
        if (root->kind == DATM_Y_MAP) rc = apply_override(&c, root, overrides[i], c.srcs[i], err);
    }
    if (!rc) rc = validate(&c, root, cat, out, err);
    if (!rc && c.n_errors) {
        if (c.n_errors > MAX_ERRORS) {
            size_t o = strlen(c.msg);
            snprintf(c.msg + o, sizeof c.msg - o, "\n(%d more errors)", c.n_errors - MAX_ERRORS);
        }
        rc = datm_error_set(err, DATM_E_INVALID, "%s", c.msg);
    }
    if (!rc) {
        out->resolved = datm_spec_to_yaml(out, 0, err);
        char *h = out->resolved ? spec_yaml(out, 0, 1, err) : NULL;
        if (!h) rc = err->code;
        else datm_sha256_text(h, out->hash);
        datm_free(h);
    }
    datm_ytree_free(&root);
    for (int i = 0; i < n_overrides; i++) datm_free(c.srcs[i]);
    if (rc) datm_spec_free(out);
    return rc;
}

int datm_spec_load_text(const char *text, const char *name, const char *const *overrides,
                        int n_overrides, const datm_model_catalog *cat, datm_spec *out,
                        datm_error *err)
{
    memset(out, 0, sizeof *out);
    datm_compose comp = {0};
    datm_ynode *root = NULL, *tree = NULL;
    const char *src = datm_compose_intern(&comp, name, err);
    int rc = src ? datm_ytree_parse(text, strlen(text), src, &root, err) : err->code;
    if (!rc) rc = datm_compose_tree(&comp, root, name, &tree, err);
    if (!rc) rc = spec_load_tree(tree, name, overrides, n_overrides, cat, out, err);
    datm_compose_free(&comp);
    return rc;
}

int datm_spec_load(const char *path, const char *const *overrides, int n_overrides,
                   const datm_model_catalog *cat, datm_spec *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    datm_compose comp = {0};
    datm_ynode *tree = NULL;
    int rc = datm_compose_file(&comp, path, &tree, err);
    if (!rc) rc = spec_load_tree(tree, path, overrides, n_overrides, cat, out, err);
    datm_compose_free(&comp);
    return rc;
}
