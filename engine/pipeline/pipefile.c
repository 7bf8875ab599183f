/* engine/pipeline/pipefile.c: pipeline files -> datm_pipeline (pipefile.h): the top level,
 * profiles, single runs and matrix expansion. Each run's spec is loaded with its overrides
 * so a typo in row 40 is reported before row 1 starts; tables, figures and claims are
 * parsed by pipefile_outputs.c. Messages name file:line:col and the key path
 * ("runs[3].spec"), several per load, with a did-you-mean for unknown keys. */
#include "pipeline/pipefile.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/compose.h"
#include "pipeline/pipefile_parse.h"

/* ---- small pieces ---- */

int datm_strlist_push(datm_strlist *l, const char *s, datm_error *err)
{
    if ((l->n & 15) == 0) {
        char **v = realloc(l->v, (size_t)(l->n + 16) * sizeof *v);
        if (!v) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
        l->v = v;
    }
    l->v[l->n] = datm_strdup(s, err);
    if (!l->v[l->n]) return DATM_E_NOMEM;
    l->n++;
    return DATM_OK;
}

void datm_strlist_free(datm_strlist *l)
{
    for (int i = 0; i < l->n; i++) datm_free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int datm_glob_match(const char *pattern, const char *s)
{
    return fnmatch(pattern, s, 0) == 0;
}

const char *datm_pipe_run_label(const datm_pipe_run *r, const char *key)
{
    if (!strcmp(key, "id")) return r->id;
    for (int i = 0; i < r->n_labels; i++)
        if (!strcmp(r->label_key[i], key)) return r->label_val[i];
    return NULL;
}

int datm_pipe_select_match(const datm_pipe_select *s, const datm_pipe_run *r)
{
    int ok = s->ids.n == 0;
    for (int i = 0; i < s->ids.n && !ok; i++) ok = datm_glob_match(s->ids.v[i], r->id);
    for (int i = 0; i < s->n_where && ok; i++) {
        const char *v = datm_pipe_run_label(r, s->where_key[i]);
        ok = v && !strcmp(v, s->where_val[i]);
    }
    return ok;
}

int datm_pipeline_find_run(const datm_pipeline *p, const char *id)
{
    for (int i = 0; i < p->n_runs; i++)
        if (!strcmp(p->runs[i].id, id)) return i;
    return -1;
}

const datm_pipe_ref *datm_pipeline_ref(const datm_pipeline *p, const char *source,
                                       const char *run, const char *metric)
{
    for (int i = 0; i < p->n_refs; i++) {
        const datm_pipe_ref *r = &p->refs[i];
        if (!strcmp(r->source, source) && !strcmp(r->run, run) && !strcmp(r->metric, metric))
            return r;
    }
    return NULL;
}

/* ---- error collection and typed getters (pipefile_parse.h) ---- */

static void vadd(pipe_ctx *c, const char *where, const char *path, const char *fmt, va_list ap)
{
    c->n_errors++;
    if (c->n_errors > PIPE_MAX_ERRORS) return;
    size_t o = strlen(c->msg);
    if (o && o + 1 < sizeof c->msg) c->msg[o++] = '\n';
    if (o + 1 >= sizeof c->msg) return;
    int k = snprintf(c->msg + o, sizeof c->msg - o, "%s: %s%s", where, path, path[0] ? ": " : "");
    if (k < 0 || o + (size_t)k + 1 >= sizeof c->msg) return;
    vsnprintf(c->msg + o + (size_t)k, sizeof c->msg - o - (size_t)k, fmt, ap);
}

void pipe_error_msg(pipe_ctx *c, const char *msg)
{
    c->n_errors++;
    if (c->n_errors > PIPE_MAX_ERRORS) return;
    size_t o = strlen(c->msg);
    if (o && o + 1 < sizeof c->msg) c->msg[o++] = '\n';
    if (o + 1 < sizeof c->msg) snprintf(c->msg + o, sizeof c->msg - o, "%s", msg);
}

void pipe_error(pipe_ctx *c, const datm_ynode *at, const char *path, const char *fmt, ...)
{
    char where[700];
    if (at) datm_ytree_where(at, where, sizeof where);
    else pipe_copy(where, sizeof where, c->p->path);
    va_list ap;
    va_start(ap, fmt);
    vadd(c, where, path, fmt, ap);
    va_end(ap);
}

void pipe_error_at(pipe_ctx *c, const char *where, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadd(c, where, path, fmt, ap);
    va_end(ap);
}

void pipe_key_error(pipe_ctx *c, const datm_ynode *map, int i, const char *path,
                    const char *fmt, ...)
{
    char where[700];
    datm_ytree_key_where(map, i, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vadd(c, where, path, fmt, ap);
    va_end(ap);
}

void pipe_check_keys(pipe_ctx *c, const datm_ynode *map, const char *path,
                     const char *const *allowed)
{
    int n_allowed = 0;
    while (allowed[n_allowed]) n_allowed++;
    for (int i = 0; i < map->n; i++) {
        int ok = 0;
        for (int k = 0; k < n_allowed && !ok; k++) ok = !strcmp(map->keys[i], allowed[k]);
        if (ok) continue;
        const char *near = datm_closest_name(map->keys[i], allowed, n_allowed);
        char hint[160] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        char list[600];
        size_t o = 0;
        list[0] = '\0';
        for (int k = 0; k < n_allowed && o + 1 < sizeof list; k++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", k ? ", " : "", allowed[k]);
        pipe_key_error(c, map, i, path, "unknown key '%s'%s; known keys: %s", map->keys[i], hint,
                       list);
    }
}

int pipe_is_map(pipe_ctx *c, const datm_ynode *n, const char *path, const char *what)
{
    if (n->kind == DATM_Y_MAP) return 1;
    pipe_error(c, n, path, "expected %s (a mapping of keys)", what);
    return 0;
}

int pipe_scalar(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path,
                char *dst, size_t size, int required)
{
    const datm_ynode *v = datm_ytree_get(map, key, NULL);
    char full[300];
    snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "." : "", key);
    if (!v) {
        if (required) pipe_error(c, map, path, "'%s' is required", key);
        return 0;
    }
    if (v->kind != DATM_Y_SCALAR) {
        pipe_error(c, v, full, "expected a single value, got %s",
                   v->kind == DATM_Y_MAP ? "a mapping" : "a list");
        return 0;
    }
    if (strlen(v->text) >= size) {
        pipe_error(c, v, full, "longer than %zu characters", size - 1);
        return 0;
    }
    snprintf(dst, size, "%s", v->text);
    return 1;
}

int pipe_list(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path,
              datm_strlist *out)
{
    const datm_ynode *v = datm_ytree_get(map, key, NULL);
    char full[300];
    snprintf(full, sizeof full, "%s%s%s", path, path[0] ? "." : "", key);
    if (!v) return 0;
    datm_error e = {0};
    if (v->kind == DATM_Y_SCALAR) {
        if (v->text[0] == '\0' && !v->quoted) return 1;   /* "key:" = empty list */
        if (datm_strlist_push(out, v->text, &e)) c->fatal = 1;
        return 1;
    }
    if (v->kind != DATM_Y_SEQ) {
        pipe_error(c, v, full, "expected a list of values, got a mapping");
        return 0;
    }
    for (int i = 0; i < v->n; i++) {
        const datm_ynode *it = v->kids[i];
        if (it->kind != DATM_Y_SCALAR) {
            pipe_error(c, it, full, "item %d: expected a single value (quote an override that "
                       "holds ': ', e.g. \"model.x=a: b\")", i + 1);
            continue;
        }
        if (datm_strlist_push(out, it->text, &e)) c->fatal = 1;
    }
    return 1;
}

int pipe_bool(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path, int def)
{
    char t[16];
    if (!pipe_scalar(c, map, key, path, t, sizeof t, 0)) return def;
    if (!strcmp(t, "true")) return 1;
    if (!strcmp(t, "false")) return 0;
    pipe_error(c, datm_ytree_get(map, key, NULL), path, "%s: expected true or false, got '%s'",
               key, t);
    return def;
}

double pipe_number(pipe_ctx *c, const datm_ynode *map, const char *key, const char *path,
                   double def, double lo, double hi)
{
    char t[64];
    if (!pipe_scalar(c, map, key, path, t, sizeof t, 0)) return def;
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end || !isfinite(v) || v < lo || v > hi) {
        pipe_error(c, datm_ytree_get(map, key, NULL), path, "%s: expected a number in [%g, %g], "
                   "got '%s'", key, lo, hi, t);
        return def;
    }
    return v;
}

/* ---- runs ---- */

static int valid_id(const char *id)
{
    if (!id[0]) return 0;
    for (const char *q = id; *q; q++)
        if (!isalnum((unsigned char)*q) && !strchr("_-+", *q)) return 0;
    return 1;
}

/* Replaces {axis} by its value in `in`; unknown placeholders are errors. */
static int substitute(pipe_ctx *c, const datm_ynode *at, const char *path, const char *in,
                      int n_axes, char axis[][64], const char *const *vals, char *out,
                      size_t size)
{
    size_t o = 0;
    for (const char *q = in; *q; q++) {
        if (*q == '{') {
            const char *e = strchr(q, '}');
            if (!e) {
                pipe_error(c, at, path, "'%s': an unclosed '{'", in);
                return 0;
            }
            char name[64];
            size_t n = (size_t)(e - q - 1);
            if (n >= sizeof name) n = sizeof name - 1;
            memcpy(name, q + 1, n);
            name[n] = '\0';
            int k = -1;
            for (int a = 0; a < n_axes; a++)
                if (!strcmp(axis[a], name)) k = a;
            if (k < 0) {
                pipe_error(c, at, path, "'%s': {%s} is not an axis of this matrix", in, name);
                return 0;
            }
            o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s", vals[k]);
            q = e;
            continue;
        }
        if (o + 1 < size) out[o] = *q;
        o++;
    }
    if (o >= size) {
        pipe_error(c, at, path, "'%s' is too long once its axes are filled in", in);
        return 0;
    }
    out[o] = '\0';
    return 1;
}

/* The spec path of a run, relative to the pipeline file's folder. */
static void spec_path(const datm_pipeline *p, const char *spec, char *out, size_t size)
{
    if (spec[0] == '/') {
        snprintf(out, size, "%s", spec);
    } else {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", p->path);
        char *slash = strrchr(dir, '/');
        if (slash) slash[1] = '\0';
        else dir[0] = '\0';
        snprintf(out, size, "%s%s", dir, spec);
    }
    datm_path_normalise(out);
}

/* Everything a run entry or matrix entry may hold, before axis substitution. */
typedef struct run_tmpl {
    const datm_ynode *node;
    char path[64];
    char id[256], spec[1024];
    datm_strlist ensemble;
    datm_strlist overrides;
    datm_strlist profile_ov;   /* overrides of the chosen profile for this entry */
    int n_labels;
    char label_key[DATM_PIPE_MAX_LABELS][64];
    char label_val[DATM_PIPE_MAX_LABELS][256];
} run_tmpl;

static void tmpl_free(run_tmpl *t)
{
    datm_strlist_free(&t->ensemble);
    datm_strlist_free(&t->overrides);
    datm_strlist_free(&t->profile_ov);
}

static void parse_tmpl(pipe_ctx *c, const datm_ynode *m, const char *path, run_tmpl *t)
{
    t->node = m;
    snprintf(t->path, sizeof t->path, "%s", path);
    pipe_scalar(c, m, "id", path, t->id, sizeof t->id, 1);
    int has_spec = pipe_scalar(c, m, "spec", path, t->spec, sizeof t->spec, 0);
    int has_ens = pipe_list(c, m, "ensemble", path, &t->ensemble);
    if (has_spec == has_ens)
        pipe_error(c, m, path, "give exactly one of 'spec' (a run) or 'ensemble' (the average "
                   "of other runs' predictions)");
    pipe_list(c, m, "overrides", path, &t->overrides);
    const datm_ynode *pr = datm_ytree_get(m, "profiles", NULL);
    if (pr && pipe_is_map(c, pr, path, "profiles: {PROFILE: [overrides]}")) {
        for (int i = 0; i < pr->n; i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.profiles", path);
            int known = 0;
            for (int k = 0; k < c->p->profiles.n; k++) known |= !strcmp(c->p->profiles.v[k], pr->keys[i]);
            if (!known) {
                const char *near = datm_closest_name(pr->keys[i], (const char *const *)c->p->profiles.v,
                                                     c->p->profiles.n);
                pipe_key_error(c, pr, i, sub, "'%s' is not a profile of this pipeline%s%s%s",
                               pr->keys[i], near ? " (did you mean '" : "", near ? near : "",
                               near ? "'?)" : "");
                continue;
            }
            if (strcmp(pr->keys[i], c->p->profile) != 0) continue;
            pipe_list(c, pr, pr->keys[i], sub, &t->profile_ov);
        }
    }
    const datm_ynode *lb = datm_ytree_get(m, "labels", NULL);
    if (lb && pipe_is_map(c, lb, path, "labels: {KEY: value}")) {
        for (int i = 0; i < lb->n; i++) {
            if (lb->kids[i]->kind != DATM_Y_SCALAR) {
                pipe_key_error(c, lb, i, path, "labels.%s: expected a single value", lb->keys[i]);
                continue;
            }
            if (t->n_labels >= DATM_PIPE_MAX_LABELS) {
                pipe_key_error(c, lb, i, path, "at most %d labels", DATM_PIPE_MAX_LABELS);
                break;
            }
            snprintf(t->label_key[t->n_labels], 64, "%s", lb->keys[i]);
            snprintf(t->label_val[t->n_labels], 256, "%s", lb->kids[i]->text);
            t->n_labels++;
        }
    }
}

/* Adds one run from a template with axis values (n_axes may be 0). */
static void add_run(pipe_ctx *c, const run_tmpl *t, int n_axes, char axis[][64],
                    const char *const *vals)
{
    datm_pipeline *p = c->p;
    if (p->n_runs >= DATM_PIPE_MAX_RUNS) {
        if (p->n_runs == DATM_PIPE_MAX_RUNS)
            pipe_error(c, t->node, t->path, "more than %d runs", DATM_PIPE_MAX_RUNS);
        return;
    }
    if ((p->n_runs & 63) == 0) {
        datm_pipe_run *r = realloc(p->runs, (size_t)(p->n_runs + 64) * sizeof *r);
        if (!r) { c->fatal = 1; return; }
        p->runs = r;
    }
    datm_pipe_run *r = &p->runs[p->n_runs];
    memset(r, 0, sizeof *r);
    datm_ytree_where(t->node, r->where, sizeof r->where);
    char buf[1024];
    if (!substitute(c, datm_ytree_get(t->node, "id", NULL), t->path, t->id, n_axes, axis, vals,
                    buf, sizeof buf))
        return;
    if (strlen(buf) >= sizeof r->id || !valid_id(buf)) {
        pipe_error(c, datm_ytree_get(t->node, "id", NULL), t->path, "id '%s': use letters, digits, "
                   "'_', '-' and '+' (no '.', which separates run and metric in claims), at most "
                   "%zu characters", buf, sizeof r->id - 1);
        return;
    }
    snprintf(r->id, sizeof r->id, "%.*s", (int)sizeof r->id - 1, buf);
    int dup = datm_pipeline_find_run(p, r->id);
    if (dup >= 0) {
        pipe_error(c, t->node, t->path, "run id '%s' is already used by the entry at %s", r->id,
                   p->runs[dup].where);
        return;
    }
    datm_error e = {0};
    if (t->spec[0]) {
        r->kind = DATM_PIPE_RUN_SPEC;
        if (!substitute(c, datm_ytree_get(t->node, "spec", NULL), t->path, t->spec, n_axes, axis,
                        vals, buf, sizeof buf))
            goto drop;
        spec_path(p, buf, r->spec, sizeof r->spec);
    } else {
        r->kind = DATM_PIPE_RUN_ENSEMBLE;
        for (int i = 0; i < t->ensemble.n; i++) {
            if (!substitute(c, t->node, t->path, t->ensemble.v[i], n_axes, axis, vals, buf,
                            sizeof buf))
                goto drop;
            if (datm_strlist_push(&r->members, buf, &e)) { c->fatal = 1; goto drop; }
        }
    }
    const datm_strlist *lists[] = {&t->overrides, &t->profile_ov};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < lists[k]->n; i++) {
            if (!substitute(c, t->node, t->path, lists[k]->v[i], n_axes, axis, vals, buf, sizeof buf))
                goto drop;
            if (datm_strlist_push(&r->overrides, buf, &e)) { c->fatal = 1; goto drop; }
        }
    for (int a = 0; a < n_axes && r->n_labels < DATM_PIPE_MAX_LABELS; a++) {
        snprintf(r->label_key[r->n_labels], 64, "%s", axis[a]);
        snprintf(r->label_val[r->n_labels], 256, "%s", vals[a]);
        r->n_labels++;
    }
    for (int i = 0; i < t->n_labels && r->n_labels < DATM_PIPE_MAX_LABELS; i++) {
        if (!substitute(c, t->node, t->path, t->label_val[i], n_axes, axis, vals, buf, sizeof buf))
            goto drop;
        int k = r->n_labels;
        for (int j = 0; j < r->n_labels; j++)
            if (!strcmp(r->label_key[j], t->label_key[i])) k = j;   /* own label over an axis */
        snprintf(r->label_key[k], 64, "%s", t->label_key[i]);
        snprintf(r->label_val[k], 256, "%.255s", buf);
        if (k == r->n_labels) r->n_labels++;
    }
    r->selected = 1;
    p->n_runs++;
    return;
drop:   /* not counted, so datm_pipeline_free would not see its lists; the slot is reused */
    datm_strlist_free(&r->members);
    datm_strlist_free(&r->overrides);
}

static const char *const run_keys[] = {"id", "spec", "ensemble", "overrides", "profiles",
                                       "labels", NULL};
static const char *const matrix_keys[] = {"id", "spec", "ensemble", "overrides", "profiles",
                                          "labels", "axes", "exclude", NULL};

static void parse_runs(pipe_ctx *c, const datm_ynode *n)
{
    if (n->kind != DATM_Y_SEQ) {
        if (!(n->kind == DATM_Y_SCALAR && n->text[0] == '\0'))
            pipe_error(c, n, "runs", "expected a list of runs (- id: ..., spec: ...)");
        return;
    }
    for (int i = 0; i < n->n; i++) {
        char path[64];
        snprintf(path, sizeof path, "runs[%d]", i + 1);
        if (!pipe_is_map(c, n->kids[i], path, "a run {id: ..., spec: ...}")) continue;
        pipe_check_keys(c, n->kids[i], path, run_keys);
        run_tmpl t = {0};
        parse_tmpl(c, n->kids[i], path, &t);
        if (c->n_errors == 0) add_run(c, &t, 0, NULL, NULL);
        tmpl_free(&t);
    }
}

static void parse_matrix_entry(pipe_ctx *c, const datm_ynode *m, const char *path)
{
    pipe_check_keys(c, m, path, matrix_keys);
    const datm_ynode *ax = datm_ytree_get(m, "axes", NULL);
    if (!ax) { pipe_error(c, m, path, "'axes' is required: {AXIS: [values], ...}"); return; }
    if (!pipe_is_map(c, ax, path, "axes: {AXIS: [values], ...}")) return;
    if (ax->n == 0 || ax->n > DATM_PIPE_MAX_AXES) {
        pipe_error(c, ax, path, "axes: give 1 to %d axes", DATM_PIPE_MAX_AXES);
        return;
    }
    char axis[DATM_PIPE_MAX_AXES][64];
    datm_strlist vals[DATM_PIPE_MAX_AXES] = {{0}};
    int n_axes = ax->n, bad = 0;
    char sub[96];
    snprintf(sub, sizeof sub, "%s.axes", path);
    for (int a = 0; a < n_axes; a++) {
        snprintf(axis[a], 64, "%s", ax->keys[a]);
        if (!valid_id(axis[a]) || !strcmp(axis[a], "id")) {
            pipe_key_error(c, ax, a, sub, "'%s' is not a usable axis name", axis[a]);
            bad = 1;
        }
        pipe_list(c, ax, ax->keys[a], sub, &vals[a]);
        if (vals[a].n == 0) {
            pipe_key_error(c, ax, a, sub, "axis '%s' has no values", axis[a]);
            bad = 1;
        }
    }
    /* exclude: [{axis: value, ...}] */
    const datm_ynode *ex = datm_ytree_get(m, "exclude", NULL);
    if (ex && ex->kind != DATM_Y_SEQ) {
        pipe_error(c, ex, path, "exclude: expected a list of {AXIS: value} mappings");
        ex = NULL;
    }
    for (int i = 0; ex && i < ex->n; i++) {
        const datm_ynode *e = ex->kids[i];
        if (!pipe_is_map(c, e, path, "an exclude entry {AXIS: value}")) { bad = 1; continue; }
        for (int k = 0; k < e->n; k++) {
            int known = 0;
            for (int a = 0; a < n_axes; a++) known |= !strcmp(axis[a], e->keys[k]);
            if (!known) {
                pipe_key_error(c, e, k, path, "exclude: '%s' is not an axis", e->keys[k]);
                bad = 1;
            }
        }
    }
    run_tmpl t = {0};
    parse_tmpl(c, m, path, &t);
    if (!bad && c->n_errors == 0) {
        int idx[DATM_PIPE_MAX_AXES] = {0};
        for (;;) {
            const char *v[DATM_PIPE_MAX_AXES];
            for (int a = 0; a < n_axes; a++) v[a] = vals[a].v[idx[a]];
            int skip = 0;
            for (int i = 0; ex && i < ex->n && !skip; i++) {
                const datm_ynode *e = ex->kids[i];
                int all = e->n > 0;
                for (int k = 0; k < e->n && all; k++)
                    for (int a = 0; a < n_axes; a++)
                        if (!strcmp(axis[a], e->keys[k]))
                            all = e->kids[k]->kind == DATM_Y_SCALAR && !strcmp(e->kids[k]->text, v[a]);
                skip = all;
            }
            if (!skip) add_run(c, &t, n_axes, axis, v);
            if (c->n_errors || c->fatal) break;
            int a = n_axes - 1;   /* the last axis varies fastest */
            while (a >= 0 && ++idx[a] == vals[a].n) idx[a--] = 0;
            if (a < 0) break;
        }
    }
    tmpl_free(&t);
    for (int a = 0; a < n_axes; a++) datm_strlist_free(&vals[a]);
}

static void parse_matrix(pipe_ctx *c, const datm_ynode *n)
{
    if (n->kind == DATM_Y_MAP) {
        parse_matrix_entry(c, n, "matrix");
        return;
    }
    if (n->kind != DATM_Y_SEQ) {
        if (!(n->kind == DATM_Y_SCALAR && n->text[0] == '\0'))
            pipe_error(c, n, "matrix", "expected a list of matrix entries (- id: ..., axes: ...)");
        return;
    }
    for (int i = 0; i < n->n; i++) {
        char path[64];
        snprintf(path, sizeof path, "matrix[%d]", i + 1);
        if (pipe_is_map(c, n->kids[i], path, "a matrix entry {id:, spec:, axes:}"))
            parse_matrix_entry(c, n->kids[i], path);
    }
}

/* ---- profiles ---- */

/* map.out (path: the key's parent, "" at the top level) as a folder relative to the
 * pipeline file, into dst; 1 when present. An empty path would put the report beside the
 * pipeline file (or overwrite another pipeline's), so it is an error. */
static int parse_out(pipe_ctx *c, const datm_ynode *map, const char *path, char *dst,
                     size_t size)
{
    char tmp[1024];
    if (!pipe_scalar(c, map, "out", path, tmp, sizeof tmp, 0)) return 0;
    if (!tmp[0]) {
        char full[200];
        snprintf(full, sizeof full, "%s%sout", path, path[0] ? "." : "");
        pipe_error(c, datm_ytree_get(map, "out", NULL), full, "give the report's folder, "
                   "relative to this file (e.g. ../results/NAME)");
        return 0;
    }
    spec_path(c->p, tmp, dst, size);
    return 1;
}

/* Profiles: each {description:, overrides: [...], out: FOLDER}. The chosen one's overrides
 * go into prof_ov and its out: (when given) replaces the file's, so that two profiles of one
 * pipeline keep their reports (and runs/ links) apart. */
static void parse_profiles(pipe_ctx *c, const datm_ynode *n, const char *chosen,
                           datm_strlist *prof_ov)
{
    datm_pipeline *p = c->p;
    datm_error e = {0};
    if (n && pipe_is_map(c, n, "profiles", "profiles: {NAME: {overrides: [...]}}")) {
        static const char *const keys[] = {"description", "overrides", "out", NULL};
        for (int i = 0; i < n->n; i++) {
            if (datm_strlist_push(&p->profiles, n->keys[i], &e)) c->fatal = 1;
            char path[128];
            snprintf(path, sizeof path, "profiles.%s", n->keys[i]);
            const datm_ynode *pm = n->kids[i];
            if (pm->kind == DATM_Y_SCALAR && pm->text[0] == '\0') continue;   /* "paper:" */
            if (!pipe_is_map(c, pm, path, "a profile {description:, overrides: [...]}")) continue;
            pipe_check_keys(c, pm, path, keys);
            const int is_chosen = chosen && !strcmp(chosen, n->keys[i]);
            if (is_chosen) pipe_list(c, pm, "overrides", path, prof_ov);
            char out[sizeof p->out_dir];
            if (parse_out(c, pm, path, out, sizeof out) && is_chosen)
                snprintf(p->out_dir, sizeof p->out_dir, "%s", out);
        }
    }
    if (chosen && chosen[0]) {
        int known = 0;
        for (int k = 0; k < p->profiles.n; k++) known |= !strcmp(p->profiles.v[k], chosen);
        if (!known) {
            const char *near = datm_closest_name(chosen, (const char *const *)p->profiles.v,
                                                 p->profiles.n);
            char list[512] = "";
            size_t o = 0;
            for (int k = 0; k < p->profiles.n && o + 1 < sizeof list; k++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", k ? ", " : "",
                                      p->profiles.v[k]);
            pipe_error(c, n, "profiles", "no profile '%s'%s%s%s; this pipeline has: %s", chosen,
                       near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
                       p->profiles.n ? list : "(none)");
        }
        snprintf(p->profile, sizeof p->profile, "%s", chosen);
    }
}

/* ---- checks after parsing ---- */

/* Ensemble members: patterns expanded to run ids, each an existing SPEC run. */
static void resolve_members(pipe_ctx *c)
{
    datm_pipeline *p = c->p;
    datm_error e = {0};
    for (int i = 0; i < p->n_runs; i++) {
        datm_pipe_run *r = &p->runs[i];
        if (r->kind != DATM_PIPE_RUN_ENSEMBLE) continue;
        datm_strlist ids = {0};
        for (int k = 0; k < r->members.n; k++) {
            int found = 0;
            for (int j = 0; j < p->n_runs; j++) {
                if (j == i || !datm_glob_match(r->members.v[k], p->runs[j].id)) continue;
                found = 1;
                if (p->runs[j].kind != DATM_PIPE_RUN_SPEC) {
                    pipe_error_at(c, r->where, r->id, "ensemble member '%s' is itself an "
                                  "ensemble; members are runs of a spec", p->runs[j].id);
                    continue;
                }
                if (datm_strlist_push(&ids, p->runs[j].id, &e)) c->fatal = 1;
            }
            if (!found)
                pipe_error_at(c, r->where, r->id, "ensemble member '%s' matches no run",
                              r->members.v[k]);
        }
        if (ids.n > DATM_ENSEMBLE_MAX)
            pipe_error_at(c, r->where, r->id, "an ensemble has at most %d members",
                          DATM_ENSEMBLE_MAX);
        datm_strlist_free(&r->members);
        r->members = ids;
    }
}

/* Loads every run's spec with its overrides; errors name the run's entry. */
static void check_specs(pipe_ctx *c, const datm_model_catalog *cat)
{
    datm_pipeline *p = c->p;
    for (int i = 0; i < p->n_runs && c->n_errors <= PIPE_MAX_ERRORS; i++) {
        datm_pipe_run *r = &p->runs[i];
        if (r->kind != DATM_PIPE_RUN_SPEC) continue;
        datm_spec s;
        datm_error e = {0};
        if (datm_spec_load(r->spec, (const char *const *)r->overrides.v, r->overrides.n, cat, &s,
                           &e) == DATM_OK) {
            datm_spec_free(&s);
            continue;
        }
        char at[700];
        snprintf(at, sizeof at, "%s", r->where);
        c->n_errors++;
        if (c->n_errors > PIPE_MAX_ERRORS) break;
        size_t o = strlen(c->msg);
        if (o && o + 1 < sizeof c->msg) c->msg[o++] = '\n';
        if (o + 1 < sizeof c->msg &&
            snprintf(c->msg + o, sizeof c->msg - o, "%s: run '%s' (spec %s): %s", at, r->id,
                     r->spec, e.msg) < 0)
            c->msg[o] = '\0';
    }
}

/* ---- the whole file ---- */

static const char *const top_keys[] = {"name", "description", "cache", "out", "threads",
                                       "overrides", "default_profile", "profiles", "runs",
                                       "matrix", "references", "tables", "figures", "claims",
                                       NULL};

static void file_stem(const char *path, char *buf, size_t size)
{
    const char *b = strrchr(path, '/');
    pipe_copy(buf, size, b ? b + 1 : path);
    char *dot = strrchr(buf, '.');
    if (dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"))) *dot = '\0';
}

static void parse_top(pipe_ctx *c, const datm_ynode *root, const char *profile,
                      const datm_model_catalog *cat)
{
    datm_pipeline *p = c->p;
    if (root->kind != DATM_Y_MAP) {
        pipe_error(c, root, "", "a pipeline file is a mapping of keys (name:, runs:, matrix:, "
                   "tables:, ...)");
        return;
    }
    pipe_check_keys(c, root, "", top_keys);
    char stem[128];
    file_stem(p->path, stem, sizeof stem);
    if (!pipe_scalar(c, root, "name", "", p->name, sizeof p->name, 0))
        snprintf(p->name, sizeof p->name, "%s", stem);
    pipe_scalar(c, root, "description", "", p->description, sizeof p->description, 0);
    char tmp[1024];
    if (pipe_scalar(c, root, "cache", "", tmp, sizeof tmp, 0)) spec_path(p, tmp, p->cache_dir,
                                                                       sizeof p->cache_dir);
    if (!parse_out(c, root, "", p->out_dir, sizeof p->out_dir))   /* a profile may replace it */
        snprintf(p->out_dir, sizeof p->out_dir, "results/%s", p->name);
    p->threads = (int)pipe_number(c, root, "threads", "", 1, 1, 1024);

    char defprof[64] = "";
    pipe_scalar(c, root, "default_profile", "", defprof, sizeof defprof, 0);
    datm_strlist common = {0}, prof_ov = {0};
    pipe_list(c, root, "overrides", "", &common);
    parse_profiles(c, datm_ytree_get(root, "profiles", NULL), profile ? profile : defprof,
                   &prof_ov);

    const datm_ynode *n;
    if ((n = datm_ytree_get(root, "runs", NULL))) parse_runs(c, n);
    if ((n = datm_ytree_get(root, "matrix", NULL))) parse_matrix(c, n);
    if (!c->n_errors && p->n_runs == 0)
        pipe_error(c, root, "", "no runs: give runs: and/or matrix:");
    /* the common and profile overrides go first, before each run's own */
    datm_error e = {0};
    for (int i = 0; i < p->n_runs && !c->fatal; i++) {
        datm_pipe_run *r = &p->runs[i];
        if (r->kind != DATM_PIPE_RUN_SPEC) continue;
        datm_strlist all = {0};
        for (int k = 0; k < common.n; k++) c->fatal |= datm_strlist_push(&all, common.v[k], &e) != 0;
        for (int k = 0; k < prof_ov.n; k++) c->fatal |= datm_strlist_push(&all, prof_ov.v[k], &e) != 0;
        for (int k = 0; k < r->overrides.n; k++)
            c->fatal |= datm_strlist_push(&all, r->overrides.v[k], &e) != 0;
        datm_strlist_free(&r->overrides);
        r->overrides = all;
        if (r->overrides.n > DATM_MAX_OVERRIDES)
            pipe_error_at(c, r->where, r->id, "more than %d overrides", DATM_MAX_OVERRIDES);
    }
    datm_strlist_free(&common);
    datm_strlist_free(&prof_ov);
    if (c->n_errors || c->fatal) return;
    resolve_members(c);
    if ((n = datm_ytree_get(root, "references", NULL))) pipe_parse_references(c, n);
    if ((n = datm_ytree_get(root, "tables", NULL))) pipe_parse_tables(c, n);
    if ((n = datm_ytree_get(root, "figures", NULL))) pipe_parse_figures(c, n);
    if ((n = datm_ytree_get(root, "claims", NULL))) pipe_parse_claims(c, n);
    if (!c->n_errors) pipe_check_outputs(c);
    if (!c->n_errors && cat) check_specs(c, cat);
}

int datm_pipeline_load(const char *path, const char *profile, const datm_model_catalog *cat,
                       datm_pipeline *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    datm_path_normalise(out->path);
    const char *cache = getenv("DATM_CACHE");
    snprintf(out->cache_dir, sizeof out->cache_dir, "%s", cache && cache[0] ? cache : ".cache/runs");
    datm_compose comp = {0};
    datm_ynode *root = NULL;
    int rc = datm_compose_file(&comp, out->path, &root, err);
    if (rc) { datm_compose_free(&comp); return rc; }
    pipe_ctx c = {0};
    c.p = out;
    parse_top(&c, root, profile, cat);
    datm_ytree_free(&root);
    datm_compose_free(&comp);
    if (c.fatal) {
        datm_pipeline_free(out);
        return datm_error_set(err, DATM_E_NOMEM, "out of memory reading %s", path);
    }
    if (c.n_errors) {
        if (c.n_errors > PIPE_MAX_ERRORS) {
            size_t o = strlen(c.msg);
            snprintf(c.msg + o, sizeof c.msg - o, "\n(%d more errors)", c.n_errors - PIPE_MAX_ERRORS);
        }
        datm_pipeline_free(out);
        return datm_error_set(err, DATM_E_INVALID, "%s", c.msg);
    }
    return DATM_OK;
}

void datm_pipeline_free(datm_pipeline *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_runs; i++) {
        datm_strlist_free(&p->runs[i].overrides);
        datm_strlist_free(&p->runs[i].members);
    }
    free(p->runs);
    for (int i = 0; i < p->n_tables; i++) {
        datm_strlist_free(&p->tables[i].select.ids);
        datm_strlist_free(&p->tables[i].rows);
        datm_strlist_free(&p->tables[i].columns_by);
        free(p->tables[i].values);
    }
    free(p->tables);
    for (int i = 0; i < p->n_figures; i++) datm_strlist_free(&p->figures[i].select.ids);
    free(p->figures);
    for (int i = 0; i < p->n_claims; i++)
        for (int a = 0; a < p->claims[i].n_axes; a++) datm_strlist_free(&p->claims[i].axis_values[a]);
    free(p->claims);
    free(p->refs);
    datm_strlist_free(&p->profiles);
    memset(p, 0, sizeof *p);
}
