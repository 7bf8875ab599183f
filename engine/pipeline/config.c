/* engine/pipeline/config.c: the typed, validated configuration of one spec section.
 *
 * A datm_config holds one value per key of its schema (config.h). Values are parsed from
 * YAML scalar or flow text, checked against the key's type and bounds, and remember whether
 * they came from the schema default (so results can list the defaults that were applied).
 * Messages name "section.key" and the offending text; the spec loader prefixes file:line:col. */
#include "pipeline/config.h"
#include "pipeline/params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct config_value {
    int      set;         /* 1 once a default or an explicit value was stored */
    int      is_default;
    int64_t  i;           /* INT, BOOL */
    double   r;           /* REAL */
    char    *s;           /* STRING, CHOICE; CHOICE_LIST as "[a, b]" */
    int64_t *il;          /* (len) INT_LIST */
    double  *rl;          /* (len) REAL_LIST */
    int      len;
} config_value;

struct datm_config {
    const datm_param_schema *schema;
    int           n;            /* keys in schema */
    char          section[48];
    config_value *v;            /* (n) */
    const datm_config *train;   /* a model section's spec's train: section (not owned), or NULL */
};

static const char *const type_names[] = {
    [DATM_PARAM_INT] = "int",           [DATM_PARAM_REAL] = "real",
    [DATM_PARAM_BOOL] = "bool",         [DATM_PARAM_STRING] = "string",
    [DATM_PARAM_CHOICE] = "choice",     [DATM_PARAM_INT_LIST] = "int list",
    [DATM_PARAM_REAL_LIST] = "real list", [DATM_PARAM_CHOICE_LIST] = "choice list",
};
_Static_assert(DATM_COUNTOF(type_names) == DATM_PARAM_TYPE_COUNT_, "type_names lists every type");

const char *datm_param_type_name(datm_param_type t)
{
    return (t >= 0 && t < DATM_PARAM_TYPE_COUNT_) ? type_names[t] : "?";
}

int datm_schema_count(const datm_param_schema *schema)
{
    int n = 0;
    while (schema && schema[n].key) n++;
    return n;
}

const datm_param_schema *datm_schema_find(const datm_param_schema *schema, const char *key)
{
    for (int i = 0; schema && schema[i].key; i++)
        if (strcmp(schema[i].key, key) == 0) return &schema[i];
    return NULL;
}

/* ---- did-you-mean ---- */

static int edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 63 || nb > 63) return 1000;
    int d[64][64];
    for (size_t i = 0; i <= na; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int sub = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) !=
                                         tolower((unsigned char)b[j - 1]));
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int best = sub < del ? sub : del;
            best = best < ins ? best : ins;
            /* adjacent transposition (Damerau) */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

const char *datm_closest_name(const char *word, const char *const *cands, int n)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    size_t wl = strlen(word);
    for (int i = 0; i < n; i++) {
        if (!cands[i]) continue;
        int d = edit_distance(word, cands[i]);
        /* a prefix relation ("epoch" vs "epochs", "lr" vs "lr_decay") also counts as close */
        size_t cl = strlen(cands[i]);
        if (wl >= 3 && cl >= 3 &&
            (strncasecmp(word, cands[i], wl < cl ? wl : cl) == 0))
            d = d < 1 ? d : 1;
        if (d < best_d) { best_d = d; best = cands[i]; }
    }
    size_t limit = wl <= 4 ? 2 : wl / 3 + 1;
    return (best && (size_t)best_d <= limit) ? best : NULL;
}

/* ---- value parsing ---- */

static void trim(const char *s, const char **b, const char **e)
{
    while (*s && isspace((unsigned char)*s)) s++;
    const char *t = s + strlen(s);
    while (t > s && isspace((unsigned char)t[-1])) t--;
    *b = s;
    *e = t;
}

/* Copies text without surrounding quotes (YAML "..." or '...'). */
static void unquote(const char *b, const char *e, char *out, size_t size)
{
    if (e - b >= 2 && ((*b == '"' && e[-1] == '"') || (*b == '\'' && e[-1] == '\''))) {
        b++;
        e--;
    }
    size_t n = (size_t)(e - b);
    if (n >= size) n = size - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

static int in_bounds(const datm_param_schema *p, double x)
{
    return p->min > p->max || (x >= p->min && x <= p->max);
}

static void fmt_real(double x, char *buf, size_t size)
{
    /* the shortest text that reads back to the same double */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    /* keep reals recognisable as reals in YAML ("1" -> "1.0") */
    if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 < size) strcat(buf, ".0");
}

static int bounds_error(const char *sec, const datm_param_schema *p, const char *text,
                        datm_error *err)
{
    char lo[40], hi[40];
    if (p->type == DATM_PARAM_INT || p->type == DATM_PARAM_INT_LIST) {
        snprintf(lo, sizeof lo, "%.0f", p->min);
        snprintf(hi, sizeof hi, "%.0f", p->max);
    } else {
        fmt_real(p->min, lo, sizeof lo);
        fmt_real(p->max, hi, sizeof hi);
    }
    return datm_error_set(err, DATM_E_INVALID, "%s.%s: value %s is out of range [%s, %s]", sec,
                          p->key, text, lo, hi);
}

static int parse_int(const char *sec, const datm_param_schema *p, const char *text, int64_t *out,
                     datm_error *err)
{
    char buf[128];
    const char *b, *e;
    trim(text, &b, &e);
    unquote(b, e, buf, sizeof buf);
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (!buf[0] || *end || errno)
        return datm_error_set(err, DATM_E_INVALID, "%s.%s: expected an integer, got '%s'", sec,
                              p->key, buf);
    if (!in_bounds(p, (double)v)) return bounds_error(sec, p, buf, err);
    *out = v;
    return DATM_OK;
}

static int parse_real(const char *sec, const datm_param_schema *p, const char *text, double *out,
                      datm_error *err)
{
    char buf[128];
    const char *b, *e;
    trim(text, &b, &e);
    unquote(b, e, buf, sizeof buf);
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (!buf[0] || *end || errno || !isfinite(v))
        return datm_error_set(err, DATM_E_INVALID, "%s.%s: expected a finite real number, got '%s'",
                              sec, p->key, buf);
    if (!in_bounds(p, v)) return bounds_error(sec, p, buf, err);
    *out = v;
    return DATM_OK;
}

static int parse_bool(const char *sec, const datm_param_schema *p, const char *text, int64_t *out,
                      datm_error *err)
{
    char buf[64];
    const char *b, *e;
    trim(text, &b, &e);
    unquote(b, e, buf, sizeof buf);
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    for (size_t i = 0; i < DATM_COUNTOF(yes); i++) {
        if (strcasecmp(buf, yes[i]) == 0) { *out = 1; return DATM_OK; }
        if (strcasecmp(buf, no[i]) == 0) { *out = 0; return DATM_OK; }
    }
    return datm_error_set(err, DATM_E_INVALID, "%s.%s: expected true or false, got '%s'", sec,
                          p->key, buf);
}

static int parse_choice(const char *sec, const datm_param_schema *p, const char *text, char **out,
                        datm_error *err)
{
    char buf[256];
    const char *b, *e;
    trim(text, &b, &e);
    unquote(b, e, buf, sizeof buf);
    char choices[512];
    snprintf(choices, sizeof choices, "%s", p->choices ? p->choices : "");
    const char *cand[64];
    int nc = 0;
    for (char *tok = strtok(choices, "|"); tok && nc < 64; tok = strtok(NULL, "|")) cand[nc++] = tok;
    for (int i = 0; i < nc; i++)
        if (strcmp(cand[i], buf) == 0) {
            *out = datm_strdup(buf, err);
            return *out ? DATM_OK : DATM_E_NOMEM;
        }
    const char *near = datm_closest_name(buf, cand, nc);
    char hint[160] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    return datm_error_set(err, DATM_E_INVALID, "%s.%s: '%s' is not one of %s%s", sec, p->key, buf,
                          p->choices, hint);
}

/* Splits "[a, b, c]" (or a bare scalar "a") into items; returns count or -1. */
static int split_flow_list(const char *text, char items[][64], int max)
{
    const char *b, *e;
    trim(text, &b, &e);
    if (b < e && *b == '[') {
        if (e[-1] != ']') return -1;
        b++;
        e--;
    }
    int n = 0;
    const char *s = b;
    while (s < e) {
        const char *c = memchr(s, ',', (size_t)(e - s));
        const char *stop = c ? c : e;
        const char *ib = s, *ie = stop;
        while (ib < ie && isspace((unsigned char)*ib)) ib++;
        while (ie > ib && isspace((unsigned char)ie[-1])) ie--;
        if (ie > ib) {
            if (n >= max || ie - ib >= 64) return -1;
            memcpy(items[n], ib, (size_t)(ie - ib));
            items[n][ie - ib] = '\0';
            n++;
        } else if (c) {
            return -1;   /* empty item "[1,,2]" */
        }
        s = c ? c + 1 : e;
    }
    return n;
}

#define MAX_LIST 256

static void value_clear(config_value *v)
{
    datm_free(v->s);
    datm_free(v->il);
    datm_free(v->rl);
    memset(v, 0, sizeof *v);
}

static int parse_value(const char *sec, const datm_param_schema *p, const char *text,
                       config_value *out, datm_error *err)
{
    config_value v = {0};
    int rc = DATM_OK;
    switch (p->type) {
    case DATM_PARAM_INT: rc = parse_int(sec, p, text, &v.i, err); break;
    case DATM_PARAM_REAL: rc = parse_real(sec, p, text, &v.r, err); break;
    case DATM_PARAM_BOOL: rc = parse_bool(sec, p, text, &v.i, err); break;
    case DATM_PARAM_CHOICE: rc = parse_choice(sec, p, text, &v.s, err); break;
    case DATM_PARAM_STRING: {
        char buf[1024];
        const char *b, *e;
        trim(text, &b, &e);
        unquote(b, e, buf, sizeof buf);
        v.s = datm_strdup(buf, err);
        if (!v.s) rc = DATM_E_NOMEM;
        break;
    }
    case DATM_PARAM_INT_LIST:
    case DATM_PARAM_REAL_LIST: {
        static char items[MAX_LIST][64];   /* spec loading is single-threaded */
        int n = split_flow_list(text, items, MAX_LIST);
        if (n < 0) {
            rc = datm_error_set(err, DATM_E_INVALID,
                                "%s.%s: expected a list like [1, 2, 3] (at most %d items), got '%s'",
                                sec, p->key, MAX_LIST, text);
            break;
        }
        v.len = n;
        if (p->type == DATM_PARAM_INT_LIST) {
            v.il = datm_alloc_array((size_t)(n ? n : 1), sizeof *v.il, err);
            if (!v.il) { rc = DATM_E_NOMEM; break; }
            for (int i = 0; i < n && rc == DATM_OK; i++) {
                rc = parse_int(sec, p, items[i], &v.il[i], err);
                if (rc) datm_error_prefix(err, "item %d of ", i + 1);
            }
        } else {
            v.rl = datm_alloc_array((size_t)(n ? n : 1), sizeof *v.rl, err);
            if (!v.rl) { rc = DATM_E_NOMEM; break; }
            for (int i = 0; i < n && rc == DATM_OK; i++) {
                rc = parse_real(sec, p, items[i], &v.rl[i], err);
                if (rc) datm_error_prefix(err, "item %d of ", i + 1);
            }
        }
        break;
    }
    case DATM_PARAM_CHOICE_LIST: {
        static char items[MAX_LIST][64];
        int n = split_flow_list(text, items, MAX_LIST);
        if (n < 0) {
            rc = datm_error_set(err, DATM_E_INVALID, "%s.%s: expected a list like [%s], got '%s'",
                                sec, p->key, p->choices ? p->choices : "", text);
            break;
        }
        char flow[1024];
        size_t o = (size_t)snprintf(flow, sizeof flow, "[");
        for (int i = 0; i < n && rc == DATM_OK; i++) {
            char *one = NULL;
            rc = parse_choice(sec, p, items[i], &one, err);
            if (rc) { datm_error_prefix(err, "item %d of ", i + 1); break; }
            if (o < sizeof flow) o += (size_t)snprintf(flow + o, sizeof flow - o, "%s%s", i ? ", " : "", one);
            datm_free(one);
        }
        if (rc) break;
        if (o < sizeof flow) snprintf(flow + o, sizeof flow - o, "]");
        v.s = datm_strdup(flow, err);
        if (!v.s) rc = DATM_E_NOMEM;
        break;
    }
    default: DATM_ASSERT(0);
    }
    if (rc) { value_clear(&v); return rc; }
    v.set = 1;
    value_clear(out);
    *out = v;
    return DATM_OK;
}

/* ---- creation ---- */

static int config_new(const datm_param_schema *schema, const char *section, int require,
                      datm_config **out, datm_error *err)
{
    *out = NULL;
    datm_config *c = datm_alloc(sizeof *c, err);
    if (!c) return DATM_E_NOMEM;
    c->schema = schema;
    c->n = datm_schema_count(schema);
    snprintf(c->section, sizeof c->section, "%s", section ? section : "");
    c->v = datm_alloc_array((size_t)(c->n ? c->n : 1), sizeof *c->v, err);
    if (!c->v) { datm_free(c); return DATM_E_NOMEM; }
    for (int i = 0; i < c->n; i++) {
        const datm_param_schema *p = &schema[i];
        DATM_ASSERT(p->type >= 0 && p->type < DATM_PARAM_TYPE_COUNT_);
        if (!p->def) continue;
        int rc = parse_value(c->section, p, p->def, &c->v[i], err);
        if (rc) {
            datm_error_prefix(err, "schema default of ");
            datm_config_destroy(&c);
            return rc;
        }
        c->v[i].is_default = 1;
    }
    if (require) {
        int rc = datm_config_check_complete(c, err);
        if (rc) { datm_config_destroy(&c); return rc; }
    }
    *out = c;
    return DATM_OK;
}

int datm_config_create(const datm_param_schema *schema, const char *section, datm_config **out,
                       datm_error *err)
{
    return config_new(schema, section, 1, out, err);
}

int datm_config_create_partial(const datm_param_schema *schema, const char *section,
                               datm_config **out, datm_error *err)
{
    return config_new(schema, section, 0, out, err);
}

void datm_config_destroy(datm_config **pc)
{
    if (!pc || !*pc) return;
    datm_config *c = *pc;
    for (int i = 0; i < c->n; i++) value_clear(&c->v[i]);
    datm_free(c->v);
    datm_free(c);
    *pc = NULL;
}

int datm_config_copy(const datm_config *src, datm_config **out, datm_error *err)
{
    int rc = datm_config_create_partial(src->schema, src->section, out, err);
    if (rc) return rc;
    for (int i = 0; i < src->n; i++) {
        if (!src->v[i].set) { value_clear(&(*out)->v[i]); continue; }
        char buf[8192];
        datm_config_format(src, src->schema[i].key, buf, sizeof buf);
        rc = parse_value(src->section, &src->schema[i], buf, &(*out)->v[i], err);
        if (rc) { datm_config_destroy(out); return rc; }
        (*out)->v[i].is_default = src->v[i].is_default;
    }
    return DATM_OK;
}

static int key_index(const datm_config *c, const char *key)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->schema[i].key, key) == 0) return i;
    return -1;
}

int datm_config_set(datm_config *c, const char *key, const char *text, datm_error *err)
{
    int i = key_index(c, key);
    if (i < 0) {
        const char *cand[256];
        int n = c->n < 256 ? c->n : 256;
        for (int j = 0; j < n; j++) cand[j] = c->schema[j].key;
        const char *near = datm_closest_name(key, cand, n);
        char hint[160] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        return datm_error_set(err, DATM_E_INVALID, "unknown key '%s' in section '%s'%s", key,
                              c->section, hint);
    }
    int rc = parse_value(c->section, &c->schema[i], text, &c->v[i], err);
    if (rc == DATM_OK) c->v[i].is_default = 0;
    return rc;
}

int datm_config_check_complete(const datm_config *c, datm_error *err)
{
    for (int i = 0; i < c->n; i++)
        if (!c->v[i].set)
            return datm_error_set(err, DATM_E_INVALID, "%s.%s is required (%s: %s)", c->section,
                                  c->schema[i].key, datm_param_type_name(c->schema[i].type),
                                  c->schema[i].doc ? c->schema[i].doc : "");
    return DATM_OK;
}

const datm_param_schema *datm_config_schema(const datm_config *c) { return c->schema; }
const char *datm_config_section(const datm_config *c) { return c->section; }
int datm_config_has(const datm_config *c, const char *key) { return key_index(c, key) >= 0; }
void datm_config_link_train(datm_config *model, const datm_config *train) { model->train = train; }
const datm_config *datm_config_train(const datm_config *c) { return c ? c->train : NULL; }

int datm_config_is_default(const datm_config *c, const char *key)
{
    int i = key_index(c, key);
    DATM_ASSERT(i >= 0);
    return c->v[i].is_default;
}

/* YAML needs quotes for strings that would read as another type or hold special chars. */
static int needs_quotes(const char *s)
{
    if (!*s) return 1;
    static const char *const special[] = {"true", "false", "yes", "no", "on", "off", "null", "~"};
    for (size_t i = 0; i < DATM_COUNTOF(special); i++)
        if (strcasecmp(s, special[i]) == 0) return 1;
    char *end;
    strtod(s, &end);
    if (!*end) return 1;
    if (!isalpha((unsigned char)*s) && *s != '/' && *s != '.' && *s != '_') return 1;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_-./+", *p)) return 1;
    return 0;
}

static int fmt_string(const char *s, char *buf, size_t size)
{
    if (!needs_quotes(s)) return snprintf(buf, size, "%s", s);
    size_t o = 0;
    if (o + 1 < size) buf[o++] = '"';
    for (const char *p = s; *p && o + 3 < size; p++) {
        if (*p == '"' || *p == '\\') buf[o++] = '\\';
        buf[o++] = *p;
    }
    if (o + 1 < size) buf[o++] = '"';
    buf[o < size ? o : size - 1] = '\0';
    return (int)o;
}

int datm_config_format(const datm_config *c, const char *key, char *buf, size_t size)
{
    int i = key_index(c, key);
    DATM_ASSERT(i >= 0 && size > 0);
    const config_value *v = &c->v[i];
    buf[0] = '\0';
    if (!v->set) return snprintf(buf, size, "null");
    switch (c->schema[i].type) {
    case DATM_PARAM_INT: return snprintf(buf, size, "%lld", (long long)v->i);
    case DATM_PARAM_BOOL: return snprintf(buf, size, "%s", v->i ? "true" : "false");
    case DATM_PARAM_REAL: fmt_real(v->r, buf, size); return (int)strlen(buf);
    case DATM_PARAM_STRING:
    case DATM_PARAM_CHOICE: return fmt_string(v->s, buf, size);
    case DATM_PARAM_CHOICE_LIST: return snprintf(buf, size, "%s", v->s);
    case DATM_PARAM_INT_LIST:
    case DATM_PARAM_REAL_LIST: {
        size_t o = (size_t)snprintf(buf, size, "[");
        for (int j = 0; j < v->len && o < size; j++) {
            char item[40];
            if (c->schema[i].type == DATM_PARAM_INT_LIST)
                snprintf(item, sizeof item, "%lld", (long long)v->il[j]);
            else
                fmt_real(v->rl[j], item, sizeof item);
            o += (size_t)snprintf(buf + o, size - o, "%s%s", j ? ", " : "", item);
        }
        if (o < size) o += (size_t)snprintf(buf + o, size - o, "]");
        return (int)(o < size ? o : size - 1);
    }
    default: DATM_ASSERT(0);
    }
    return 0;
}

/* ---- typed getters ---- */

static const config_value *get(const datm_config *c, const char *key, datm_param_type t1,
                               datm_param_type t2)
{
    int i = key_index(c, key);
    if (i < 0) {
        fprintf(stderr, "datm: internal error: key '%s' is not in the schema of section '%s'\n",
                key, c->section);
        DATM_ASSERT(i >= 0);
    }
    DATM_ASSERT(c->schema[i].type == t1 || c->schema[i].type == t2);
    DATM_ASSERT(c->v[i].set);
    return &c->v[i];
}

int64_t datm_config_int(const datm_config *c, const char *key)
{
    return get(c, key, DATM_PARAM_INT, DATM_PARAM_INT)->i;
}

double datm_config_real(const datm_config *c, const char *key)
{
    return get(c, key, DATM_PARAM_REAL, DATM_PARAM_REAL)->r;
}

int datm_config_bool(const datm_config *c, const char *key)
{
    return (int)get(c, key, DATM_PARAM_BOOL, DATM_PARAM_BOOL)->i;
}

const char *datm_config_str(const datm_config *c, const char *key)
{
    return get(c, key, DATM_PARAM_STRING, DATM_PARAM_CHOICE)->s;
}

int datm_config_int_list(const datm_config *c, const char *key, const int64_t **vals)
{
    const config_value *v = get(c, key, DATM_PARAM_INT_LIST, DATM_PARAM_INT_LIST);
    *vals = v->il;
    return v->len;
}

const char *datm_config_choice_list(const datm_config *c, const char *key)
{
    return get(c, key, DATM_PARAM_CHOICE_LIST, DATM_PARAM_CHOICE_LIST)->s;
}

int datm_config_real_list(const datm_config *c, const char *key, const double **vals)
{
    const config_value *v = get(c, key, DATM_PARAM_REAL_LIST, DATM_PARAM_REAL_LIST);
    *vals = v->rl;
    return v->len;
}

/* ---- the typed structs' copy functions (pipeline/params.h) ---- */

void datm_param_get_INT(const datm_config *c, const char *key, int64_t *out)
{
    *out = datm_config_int(c, key);
}

void datm_param_get_REAL(const datm_config *c, const char *key, double *out)
{
    *out = datm_config_real(c, key);
}

void datm_param_get_BOOL(const datm_config *c, const char *key, int *out)
{
    *out = datm_config_bool(c, key);
}

void datm_param_get_STRING(const datm_config *c, const char *key, const char **out)
{
    *out = get(c, key, DATM_PARAM_STRING, DATM_PARAM_STRING)->s;
}

void datm_param_get_CHOICE(const datm_config *c, const char *key, const char **out)
{
    *out = get(c, key, DATM_PARAM_CHOICE, DATM_PARAM_CHOICE)->s;
}

void datm_param_get_INT_LIST(const datm_config *c, const char *key, datm_int_list *out)
{
    out->n = datm_config_int_list(c, key, &out->v);
}

void datm_param_get_REAL_LIST(const datm_config *c, const char *key, datm_real_list *out)
{
    out->n = datm_config_real_list(c, key, &out->v);
}

void datm_param_get_CHOICE_LIST(const datm_config *c, const char *key, const char **out)
{
    *out = datm_config_choice_list(c, key);
}
