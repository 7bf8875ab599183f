/* engine/pipeline/expr.c: claim expressions (expr.h). A tokenizer, a recursive-descent
 * parser that builds a node array and checks types (number vs truth value) with the column
 * of every fault, and an evaluator that keeps each node's value so that the explanation can
 * show the numbers behind the verdict. */
#include "pipeline/expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- node kinds (enum + table) ---- */
typedef enum {
    N_NUM = 0, N_REF, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV,
    N_LT, N_LE, N_GT, N_GE, N_EQ, N_NE,
    N_AND, N_OR, N_NOT,
    N_ABS, N_MIN, N_MAX, N_APPROX, N_BETWEEN,
    N_COUNT_
} node_kind;

static const struct {
    const char *sym;   /* operator or function name */
    int arity;
    int boolean;       /* the node is a truth value */
    int prec;          /* binding strength when printed (higher binds tighter) */
} kinds[] = {
    [N_NUM] = {"", 0, 0, 9},      [N_REF] = {"", 0, 0, 9},     [N_NEG] = {"-", 1, 0, 7},
    [N_ADD] = {"+", 2, 0, 5},     [N_SUB] = {"-", 2, 0, 5},    [N_MUL] = {"*", 2, 0, 6},
    [N_DIV] = {"/", 2, 0, 6},     [N_LT] = {"<", 2, 1, 4},     [N_LE] = {"<=", 2, 1, 4},
    [N_GT] = {">", 2, 1, 4},      [N_GE] = {">=", 2, 1, 4},    [N_EQ] = {"==", 2, 1, 4},
    [N_NE] = {"!=", 2, 1, 4},     [N_AND] = {"and", 2, 1, 2},  [N_OR] = {"or", 2, 1, 1},
    [N_NOT] = {"not", 1, 1, 3},   [N_ABS] = {"abs", 1, 0, 9},  [N_MIN] = {"min", 2, 0, 9},
    [N_MAX] = {"max", 2, 0, 9},   [N_APPROX] = {"approx", 3, 1, 9},
    [N_BETWEEN] = {"between", 3, 1, 9},
};
_Static_assert(DATM_COUNTOF(kinds) == N_COUNT_, "one table row per node kind");

typedef struct node {
    node_kind kind;
    int    col;        /* 1-based column of the node's first character */
    int    a[3];       /* children */
    double num;        /* N_NUM */
    int    start, len; /* N_NUM: source text */
    int    ref;        /* N_REF: index into refs */
} node;

typedef struct ref {
    char run[128], metric[128];
} ref;

struct datm_expr {
    char  *text;
    node  *nodes;
    int    n_nodes, cap_nodes;
    ref   *refs;
    int    n_refs, cap_refs;
    int    root;
};

const char *datm_expr_verdict_name(datm_expr_verdict v)
{
    switch (v) {
    case DATM_EXPR_TRUE: return "holds";
    case DATM_EXPR_FALSE: return "fails";
    default: return "not evaluable";
    }
}

/* ---- tokens ---- */
typedef enum { T_END = 0, T_NUM, T_REF, T_FUNC, T_KIND, T_LP, T_RP, T_COMMA } tok_kind;

typedef struct tok {
    tok_kind  t;
    node_kind op;      /* T_KIND: the operator; T_FUNC: the function */
    int       pos, len;
    double    num;
    char      run[128], metric[128];
} tok;

typedef struct parser {
    datm_expr  *e;
    const char *s;
    int         pos;
    tok         cur;
    int         failed, err_col;
    char        what[400];
} parser;

static void fail_at(parser *p, int pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(parser *p, int pos, const char *fmt, ...)
{
    if (p->failed) return;
    p->failed = 1;
    p->err_col = pos + 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->what, sizeof p->what, fmt, ap);
    va_end(ap);
}

static int name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int joiner(char c) { return c == '-' || c == '+'; }

/* End of the name starting at i: name characters, and '-' or '+' directly between two of
 * them (run ids such as whai_128-64 or sdatm+lr). */
static int name_end(const char *s, int i)
{
    int j = i;
    while (name_char(s[j]) || (joiner(s[j]) && j > i && name_char(s[j - 1]) && name_char(s[j + 1])))
        j++;
    return j;
}

/* End of a number at i (digits [. digits] [e[+-]digits]), i when none. */
static int number_end(const char *s, int i)
{
    int j = i, digits = 0;
    while (isdigit((unsigned char)s[j])) { j++; digits++; }
    if (s[j] == '.') {
        j++;
        while (isdigit((unsigned char)s[j])) { j++; digits++; }
    }
    if (!digits) return i;
    if (s[j] == 'e' || s[j] == 'E') {
        int k = j + 1;
        if (s[k] == '+' || s[k] == '-') k++;
        if (isdigit((unsigned char)s[k])) {
            while (isdigit((unsigned char)s[k])) k++;
            j = k;
        }
    }
    return j;
}

static const node_kind funcs[] = {N_ABS, N_MIN, N_MAX, N_APPROX, N_BETWEEN};

static void lex_name(parser *p, int i)
{
    const char *s = p->s;
    tok *t = &p->cur;
    int j = name_end(s, i);
    const int n = j - i;
    if (s[j] == '.' && name_char(s[j + 1])) {
        int k = name_end(s, j + 1);
        if (n >= (int)sizeof t->run || k - j - 1 >= (int)sizeof t->metric) {
            fail_at(p, i, "reference too long");
            return;
        }
        if (s[k] == '.') {
            fail_at(p, k, "unexpected '.' after '%.*s' (a reference is RUN.METRIC; a run id "
                          "may not contain '.')", k - i, s + i);
            return;
        }
        if (s[k] == '@') {   /* RUN.METRIC@SOURCE: a figure of references.SOURCE */
            if (!name_char(s[k + 1])) {
                fail_at(p, k + 1, "expected the name of a references source after '@'");
                return;
            }
            k = name_end(s, k + 1);
            if (k - j - 1 >= (int)sizeof t->metric) {
                fail_at(p, i, "reference too long");
                return;
            }
        }
        t->t = T_REF;
        snprintf(t->run, sizeof t->run, "%.*s", n, s + i);
        snprintf(t->metric, sizeof t->metric, "%.*s", k - j - 1, s + j + 1);
        t->pos = i;
        t->len = k - i;
        return;
    }
    if (s[j] == '.') {
        fail_at(p, j + 1, "expected a metric name after '%.*s.'", n, s + i);
        return;
    }
    t->pos = i;
    t->len = n;
    static const node_kind words[] = {N_AND, N_OR, N_NOT};
    for (size_t w = 0; w < DATM_COUNTOF(words); w++)
        if ((int)strlen(kinds[words[w]].sym) == n && !strncmp(s + i, kinds[words[w]].sym, n)) {
            t->t = T_KIND;
            t->op = words[w];
            return;
        }
    int k = j;
    while (s[k] == ' ' || s[k] == '\t') k++;
    if (s[k] == '(') {
        for (size_t f = 0; f < DATM_COUNTOF(funcs); f++)
            if ((int)strlen(kinds[funcs[f]].sym) == n && !strncmp(s + i, kinds[funcs[f]].sym, n)) {
                t->t = T_FUNC;
                t->op = funcs[f];
                return;
            }
        fail_at(p, i, "unknown function '%.*s' (functions: abs, min, max, approx, between)", n,
                s + i);
        return;
    }
    fail_at(p, i, "'%.*s' is not a number, a reference RUN.METRIC, a function or and/or/not%s",
            n, s + i,
            (memchr(s + i, '-', n) || memchr(s + i, '+', n))
                ? " (a '-' or '+' between two name characters belongs to the name: put spaces "
                  "around a subtraction or an addition)" : "");
}

/* Reads the next token into p->cur. */
static void next(parser *p)
{
    const char *s = p->s;
    int i = p->pos;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') i++;
    tok *t = &p->cur;
    memset(t, 0, sizeof *t);
    t->pos = i;
    if (p->failed || !s[i]) { t->t = T_END; p->pos = i; return; }
    if (isdigit((unsigned char)s[i]) || (s[i] == '.' && isdigit((unsigned char)s[i + 1]))) {
        int j = number_end(s, i);
        /* a number unless a name character follows, or a '-' or '.' that joins a name */
        int joined = name_char(s[j]) || (joiner(s[j]) && name_char(s[j + 1])) ||   /* 128-64.x */
                     (s[j] == '.' && name_char(s[j - 1]) && name_char(s[j + 1]) &&
                      !isdigit((unsigned char)s[j + 1]));
        if (!joined || s[i] == '.') {
            t->t = T_NUM;
            t->num = strtod(s + i, NULL);
            t->len = j - i;
            p->pos = j;
            return;
        }
    }
    if (name_char(s[i])) {
        lex_name(p, i);
        p->pos = i + (t->t == T_END ? 1 : t->len);
        return;
    }
    static const struct { const char *sym; tok_kind t; node_kind op; } ops[] = {
        {"<=", T_KIND, N_LE}, {">=", T_KIND, N_GE}, {"==", T_KIND, N_EQ}, {"!=", T_KIND, N_NE},
        {"<", T_KIND, N_LT},  {">", T_KIND, N_GT},  {"+", T_KIND, N_ADD}, {"-", T_KIND, N_SUB},
        {"*", T_KIND, N_MUL}, {"/", T_KIND, N_DIV}, {"(", T_LP, N_COUNT_},
        {")", T_RP, N_COUNT_}, {",", T_COMMA, N_COUNT_},
    };
    static const struct { const char *sym, *hint; } wrong[] = {
        {"&&", "write 'and'"}, {"||", "write 'or'"}, {"!", "write 'not'"}, {"=", "write '=='"},
    };
    for (size_t w = 0; w < DATM_COUNTOF(wrong); w++)
        if (!strncmp(s + i, wrong[w].sym, strlen(wrong[w].sym)) && strncmp(s + i, "!=", 2) &&
            strncmp(s + i, "==", 2)) {
            fail_at(p, i, "'%s': %s", wrong[w].sym, wrong[w].hint);
            t->t = T_END;
            return;
        }
    for (size_t o = 0; o < DATM_COUNTOF(ops); o++) {
        size_t n = strlen(ops[o].sym);
        if (!strncmp(s + i, ops[o].sym, n)) {
            t->t = ops[o].t;
            t->op = ops[o].op;
            t->len = (int)n;
            p->pos = i + (int)n;
            return;
        }
    }
    fail_at(p, i, "unexpected character '%c'", s[i]);
    t->t = T_END;
}

/* ---- parser ---- */
static int add_node(parser *p, node_kind k, int pos)
{
    datm_expr *e = p->e;
    if (e->n_nodes == e->cap_nodes) {
        int cap = e->cap_nodes ? 2 * e->cap_nodes : 16;
        node *nn = realloc(e->nodes, (size_t)cap * sizeof *nn);
        if (!nn) { fail_at(p, pos, "out of memory"); return -1; }
        e->nodes = nn;
        e->cap_nodes = cap;
    }
    node *n = &e->nodes[e->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = k;
    n->col = pos + 1;
    n->a[0] = n->a[1] = n->a[2] = -1;
    return e->n_nodes++;
}

static int is_bool(const parser *p, int n) { return kinds[p->e->nodes[n].kind].boolean; }

/* Checks that child n is a number (want 0) or a truth value (want 1) for `what`. */
static int want(parser *p, int n, int want_bool, const char *what)
{
    if (n < 0 || p->failed) return -1;
    if (is_bool(p, n) == want_bool) return n;
    fail_at(p, p->e->nodes[n].col - 1, "%s needs %s here, not %s", what,
            want_bool ? "a truth value (a comparison)" : "a number",
            want_bool ? "a number" : "a truth value");
    return -1;
}

static int binary(parser *p, node_kind k, int pos, int l, int r)
{
    if (l < 0 || r < 0) return -1;
    int n = add_node(p, k, pos);
    if (n < 0) return -1;
    p->e->nodes[n].col = p->e->nodes[l].col;
    p->e->nodes[n].a[0] = l;
    p->e->nodes[n].a[1] = r;
    return n;
}

static int parse_or(parser *p);

static int parse_call(parser *p)
{
    const node_kind f = p->cur.op;
    const int pos = p->cur.pos;
    next(p);   /* the name */
    next(p);   /* '(' */
    int args[3], n = 0;
    if (p->cur.t != T_RP) {
        for (;;) {
            int a = want(p, parse_or(p), 0, kinds[f].sym);
            if (a < 0) return -1;
            if (n < 3) args[n] = a;
            n++;
            if (p->cur.t != T_COMMA) break;
            next(p);
        }
    }
    if (p->cur.t != T_RP) {
        fail_at(p, p->cur.pos, "expected ',' or ')' in %s(...)", kinds[f].sym);
        return -1;
    }
    if (n != kinds[f].arity) {
        fail_at(p, pos, "%s() takes %d argument%s, got %d", kinds[f].sym, kinds[f].arity,
                kinds[f].arity > 1 ? "s" : "", n);
        return -1;
    }
    next(p);
    int k = add_node(p, f, pos);
    if (k < 0) return -1;
    for (int i = 0; i < n; i++) p->e->nodes[k].a[i] = args[i];
    return k;
}

static int parse_primary(parser *p)
{
    if (p->failed) return -1;
    tok *t = &p->cur;
    switch (t->t) {
    case T_NUM: {
        int n = add_node(p, N_NUM, t->pos);
        if (n < 0) return -1;
        p->e->nodes[n].num = t->num;
        p->e->nodes[n].start = t->pos;
        p->e->nodes[n].len = t->len;
        next(p);
        return n;
    }
    case T_REF: {
        datm_expr *e = p->e;
        if (e->n_refs == e->cap_refs) {
            int cap = e->cap_refs ? 2 * e->cap_refs : 8;
            ref *nr = realloc(e->refs, (size_t)cap * sizeof *nr);
            if (!nr) { fail_at(p, t->pos, "out of memory"); return -1; }
            e->refs = nr;
            e->cap_refs = cap;
        }
        int n = add_node(p, N_REF, t->pos);
        if (n < 0) return -1;
        snprintf(e->refs[e->n_refs].run, sizeof e->refs[0].run, "%s", t->run);
        snprintf(e->refs[e->n_refs].metric, sizeof e->refs[0].metric, "%s", t->metric);
        e->nodes[n].ref = e->n_refs++;
        next(p);
        return n;
    }
    case T_FUNC:
        return parse_call(p);
    case T_LP: {
        const int pos = t->pos;
        next(p);
        int n = parse_or(p);
        if (n < 0) return -1;
        if (p->cur.t != T_RP) {
            fail_at(p, p->cur.pos, "expected ')' to close the '(' at column %d", pos + 1);
            return -1;
        }
        next(p);
        return n;
    }
    case T_END:
        fail_at(p, t->pos, "unexpected end of the expression");
        return -1;
    default:
        fail_at(p, t->pos, "unexpected '%.*s'", t->len, p->s + t->pos);
        return -1;
    }
}

/* A prefix operator: token `tok` makes a node `kind` over the operand `self` parses (so it
 * nests: "- -x", "not not a"), whose type must be want_bool; without the token, `below`. */
static int parse_prefix(parser *p, node_kind tok, node_kind kind, int want_bool, const char *what,
                        int (*self)(parser *), int (*below)(parser *))
{
    if (p->cur.t == T_KIND && p->cur.op == tok) {
        const int pos = p->cur.pos;
        next(p);
        int c = want(p, self(p), want_bool, what);
        if (c < 0) return -1;
        int n = add_node(p, kind, pos);
        if (n >= 0) p->e->nodes[n].a[0] = c;
        return n;
    }
    return below(p);
}

/* Left-associative operators k1, k2 (may be equal) over operands parsed by `sub`, each of
 * which must be a truth value (want_bool) or a number. */
static int parse_left(parser *p, node_kind k1, node_kind k2, int want_bool,
                      int (*sub)(parser *))
{
    int l = sub(p);
    while (l >= 0 && p->cur.t == T_KIND && (p->cur.op == k1 || p->cur.op == k2)) {
        const node_kind k = p->cur.op;
        const int pos = p->cur.pos;
        char what[8];
        snprintf(what, sizeof what, "'%s'", kinds[k].sym);
        next(p);
        l = want(p, l, want_bool, what);
        int r = want(p, sub(p), want_bool, what);
        l = binary(p, k, pos, l, r);
    }
    return l;
}

static int parse_unary(parser *p)
{
    return parse_prefix(p, N_SUB, N_NEG, 0, "unary '-'", parse_unary, parse_primary);
}

static int parse_prod(parser *p) { return parse_left(p, N_MUL, N_DIV, 0, parse_unary); }
static int parse_sum(parser *p) { return parse_left(p, N_ADD, N_SUB, 0, parse_prod); }

static int is_cmp(node_kind k) { return k >= N_LT && k <= N_NE; }

static int parse_cmp(parser *p)
{
    int l = parse_sum(p);
    if (l < 0 || p->cur.t != T_KIND || !is_cmp(p->cur.op)) return l;
    const node_kind k = p->cur.op;
    const int pos = p->cur.pos;
    char what[32];
    snprintf(what, sizeof what, "'%s'", kinds[k].sym);
    next(p);
    l = want(p, l, 0, what);
    int r = want(p, parse_sum(p), 0, what);
    int n = binary(p, k, pos, l, r);
    if (n >= 0 && p->cur.t == T_KIND && is_cmp(p->cur.op)) {
        fail_at(p, p->cur.pos, "comparisons do not chain: write 'a < b and b < c'");
        return -1;
    }
    return n;
}

static int parse_not(parser *p)
{
    return parse_prefix(p, N_NOT, N_NOT, 1, "'not'", parse_not, parse_cmp);
}

static int parse_and(parser *p) { return parse_left(p, N_AND, N_AND, 1, parse_not); }

static int parse_or(parser *p) { return parse_left(p, N_OR, N_OR, 1, parse_and); }

void datm_expr_destroy(datm_expr **e)
{
    if (!e || !*e) return;
    free((*e)->text);
    free((*e)->nodes);
    free((*e)->refs);
    free(*e);
    *e = NULL;
}

int datm_expr_parse(const char *text, datm_expr **out, int *err_col, datm_error *err)
{
    *out = NULL;
    if (err_col) *err_col = 0;
    datm_expr *e = calloc(1, sizeof *e);
    if (!e || !(e->text = strdup(text ? text : ""))) {
        free(e);
        return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    }
    parser p = {.e = e, .s = e->text};
    next(&p);
    if (p.cur.t == T_END && !p.failed) fail_at(&p, p.cur.pos, "empty expression");
    int root = parse_or(&p);
    if (!p.failed && p.cur.t != T_END) {
        if (p.cur.t == T_KIND && is_cmp(p.cur.op))
            fail_at(&p, p.cur.pos, "comparisons do not chain: write 'a < b and b < c'");
        else
            fail_at(&p, p.cur.pos, "unexpected '%.*s' after a complete expression", p.cur.len,
                    p.s + p.cur.pos);
    }
    if (!p.failed && !is_bool(&p, root))
        fail_at(&p, 0, "the expression is a number; a claim is a comparison "
                       "(e.g. a.perplexity < b.perplexity)");
    if (p.failed) {
        if (err_col) *err_col = p.err_col;
        datm_error_set(err, DATM_E_FORMAT, "column %d: %s\n  %s\n  %*s^", p.err_col, p.what,
                       e->text, p.err_col - 1, "");
        datm_expr_destroy(&e);
        return DATM_E_FORMAT;
    }
    e->root = root;
    *out = e;
    return DATM_OK;
}

int datm_expr_n_refs(const datm_expr *e) { return e ? e->n_refs : 0; }
const char *datm_expr_ref_run(const datm_expr *e, int i) { return e->refs[i].run; }
const char *datm_expr_ref_metric(const datm_expr *e, int i) { return e->refs[i].metric; }

/* ---- evaluation ---- */
typedef struct evalctx {
    const datm_expr *e;
    datm_expr_lookup_fn lookup;
    void  *user;
    double rel_tol, abs_tol;
    double *val;            /* (n_nodes) numbers; NaN = unknown */
    const char **why;       /* (n_nodes) why a number is unknown */
    datm_expr_verdict *ver; /* (n_nodes) truth values */
    double *tol;            /* (n_nodes) tolerance applied by a comparison (signed) */
    double *aux;            /* (n_nodes) approx: |x - ref|, limit in tol */
} evalctx;

static double tol_of(const evalctx *c, double right, int polarity)
{
    return polarity * (c->rel_tol * fabs(right) + c->abs_tol);
}

static double eval_num(evalctx *c, int n)
{
    const node *d = &c->e->nodes[n];
    double v = NAN, x = NAN, y = NAN;
    c->why[n] = NULL;
    if (kinds[d->kind].arity >= 1) x = eval_num(c, d->a[0]);
    if (kinds[d->kind].arity >= 2) y = eval_num(c, d->a[1]);
    switch (d->kind) {
    case N_NUM: v = d->num; break;
    case N_REF: {
        const ref *r = &c->e->refs[d->ref];
        if (c->lookup(c->user, r->run, r->metric, &v) != 0) { v = NAN; c->why[n] = "missing"; }
        else if (isnan(v)) c->why[n] = "NaN";
        break;
    }
    case N_NEG: v = -x; break;
    case N_ADD: v = x + y; break;
    case N_SUB: v = x - y; break;
    case N_MUL: v = x * y; break;
    case N_DIV:
        if (y == 0 && !isnan(x)) { v = NAN; c->why[n] = "division by zero"; }
        else v = x / y;
        break;
    case N_ABS: v = fabs(x); break;
    case N_MIN: v = isnan(x) || isnan(y) ? NAN : fmin(x, y); break;
    case N_MAX: v = isnan(x) || isnan(y) ? NAN : fmax(x, y); break;
    default: DATM_ASSERT(0);
    }
    if (isnan(v) && !c->why[n]) c->why[n] = "unknown";
    c->val[n] = v;
    return v;
}

static datm_expr_verdict tv(int b) { return b ? DATM_EXPR_TRUE : DATM_EXPR_FALSE; }

/* Truth value of n; polarity +1 loosens comparisons by the tolerance, -1 (under an odd
 * number of nots) tightens them. */
static datm_expr_verdict eval_bool(evalctx *c, int n, int polarity)
{
    const node *d = &c->e->nodes[n];
    datm_expr_verdict r = DATM_EXPR_NOT_EVALUABLE;
    c->tol[n] = 0;
    if (d->kind == N_AND || d->kind == N_OR) {
        datm_expr_verdict a = eval_bool(c, d->a[0], polarity), b = eval_bool(c, d->a[1], polarity);
        const datm_expr_verdict decide = d->kind == N_AND ? DATM_EXPR_FALSE : DATM_EXPR_TRUE;
        if (a == decide || b == decide) r = decide;
        else if (a == DATM_EXPR_NOT_EVALUABLE || b == DATM_EXPR_NOT_EVALUABLE) r = DATM_EXPR_NOT_EVALUABLE;
        else r = a;   /* both sides hold the value that does not decide */
    } else if (d->kind == N_NOT) {
        datm_expr_verdict a = eval_bool(c, d->a[0], -polarity);
        r = a == DATM_EXPR_NOT_EVALUABLE ? a : tv(a == DATM_EXPR_FALSE);
    } else if (is_cmp(d->kind)) {
        double x = eval_num(c, d->a[0]), y = eval_num(c, d->a[1]);
        double m = tol_of(c, y, polarity);
        c->tol[n] = m;
        if (!isnan(x) && !isnan(y)) {
            switch (d->kind) {
            case N_LT: r = tv(x < y + m); break;
            case N_LE: r = tv(x <= y + m); break;
            case N_GT: r = tv(x > y - m); break;
            case N_GE: r = tv(x >= y - m); break;
            case N_EQ: r = tv(polarity > 0 ? fabs(x - y) <= m : x == y); break;
            default:   r = tv(polarity > 0 ? x != y : fabs(x - y) > -m); break;
            }
        }
    } else if (d->kind == N_APPROX) {
        double x = eval_num(c, d->a[0]), ref = eval_num(c, d->a[1]), rel = eval_num(c, d->a[2]);
        double m = tol_of(c, ref, polarity);
        c->tol[n] = m;
        c->aux[n] = fabs(x - ref);
        if (!isnan(x) && !isnan(ref) && !isnan(rel)) r = tv(fabs(x - ref) <= rel * fabs(ref) + m);
    } else if (d->kind == N_BETWEEN) {
        double x = eval_num(c, d->a[0]), lo = eval_num(c, d->a[1]), hi = eval_num(c, d->a[2]);
        double mlo = tol_of(c, lo, polarity), mhi = tol_of(c, hi, polarity);
        c->tol[n] = mhi;
        c->aux[n] = mlo;
        if (!isnan(x) && !isnan(lo) && !isnan(hi)) r = tv(lo - mlo <= x && x <= hi + mhi);
    } else {
        DATM_ASSERT(0);
    }
    c->ver[n] = r;
    return r;
}

/* ---- explanation ---- */
typedef struct sbuf {
    char  *buf;
    size_t size, len;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (!b->buf || b->len + 1 >= b->size) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    b->len += (size_t)w;
    if (b->len >= b->size) b->len = b->size - 1;
}

static void put_value(sbuf *b, const evalctx *c, int n)
{
    if (isnan(c->val[n])) sb_printf(b, "%s", c->why[n]);
    else sb_printf(b, "%.6g", c->val[n]);
}

static void render(sbuf *b, const evalctx *c, int n, int top);

/* A child printed in parentheses when it binds less tightly than its parent. */
static void render_child(sbuf *b, const evalctx *c, int parent, int child, int right)
{
    const int pp = kinds[c->e->nodes[parent].kind].prec, cp = kinds[c->e->nodes[child].kind].prec;
    const int paren = cp < pp || (right && cp == pp && cp != 9 && (c->e->nodes[parent].kind == N_SUB ||
                                                                 c->e->nodes[parent].kind == N_DIV));
    if (paren) sb_printf(b, "(");
    render(b, c, child, 0);
    if (paren) sb_printf(b, ")");
}

/* A side of a comparison: the expression, and its value when it is compound. */
static void render_side(sbuf *b, const evalctx *c, int n)
{
    render(b, c, n, 0);
    const node_kind k = c->e->nodes[n].kind;
    if (k != N_NUM && k != N_REF) {
        sb_printf(b, " (= ");
        put_value(b, c, n);
        sb_printf(b, ")");
    }
}

static void render_tol(sbuf *b, double m)
{
    if (m != 0 && !isnan(m)) sb_printf(b, " (tolerance %.3g)", fabs(m));
}

static void render(sbuf *b, const evalctx *c, int n, int top)
{
    const node *d = &c->e->nodes[n];
    const char *sym = kinds[d->kind].sym;
    const int bracket = kinds[d->kind].boolean && d->kind != N_AND && d->kind != N_OR &&
                        d->kind != N_NOT && !top;
    if (bracket) sb_printf(b, "[");
    switch (d->kind) {
    case N_NUM: sb_printf(b, "%.*s", d->len, c->e->text + d->start); break;
    case N_REF:
        sb_printf(b, "%s.%s (", c->e->refs[d->ref].run, c->e->refs[d->ref].metric);
        put_value(b, c, n);
        sb_printf(b, ")");
        break;
    case N_NEG: sb_printf(b, "-"); render_child(b, c, n, d->a[0], 1); break;
    case N_ADD: case N_SUB: case N_MUL: case N_DIV:
        render_child(b, c, n, d->a[0], 0);
        sb_printf(b, " %s ", sym);
        render_child(b, c, n, d->a[1], 1);
        break;
    case N_LT: case N_LE: case N_GT: case N_GE: case N_EQ: case N_NE:
        render_side(b, c, d->a[0]);
        sb_printf(b, " %s ", sym);
        render_side(b, c, d->a[1]);
        render_tol(b, c->tol[n]);
        break;
    case N_AND: case N_OR:
        render_child(b, c, n, d->a[0], 0);
        sb_printf(b, " %s ", sym);
        render_child(b, c, n, d->a[1], 1);
        break;
    case N_NOT: sb_printf(b, "not "); render_child(b, c, n, d->a[0], 1); break;
    default:   /* functions */
        sb_printf(b, "%s(", sym);
        for (int i = 0; i < kinds[d->kind].arity; i++) {
            if (i) sb_printf(b, ", ");
            render(b, c, d->a[i], 0);
        }
        sb_printf(b, ")");
        if (d->kind == N_APPROX && !isnan(c->aux[n])) {
            sb_printf(b, " (|difference| = %.6g", c->aux[n]);
            render_tol(b, c->tol[n]);
            sb_printf(b, ")");
        } else if (d->kind == N_BETWEEN && ((c->aux[n] != 0 && !isnan(c->aux[n])) ||
                                            (c->tol[n] != 0 && !isnan(c->tol[n])))) {
            sb_printf(b, " (tolerance %.3g below, %.3g above)", fabs(c->aux[n]), fabs(c->tol[n]));
        }
        break;
    }
    if (bracket) sb_printf(b, ": %s]", datm_expr_verdict_name(c->ver[n]));
}

datm_expr_verdict datm_expr_eval(const datm_expr *e, datm_expr_lookup_fn lookup, void *user,
                                 double rel_tol, double abs_tol, char *explain,
                                 size_t explain_size)
{
    if (explain && explain_size) explain[0] = '\0';
    const size_t n = (size_t)e->n_nodes;
    evalctx c = {.e = e, .lookup = lookup, .user = user, .rel_tol = rel_tol, .abs_tol = abs_tol};
    c.val = calloc(n, sizeof *c.val);
    c.why = calloc(n, sizeof *c.why);
    c.ver = calloc(n, sizeof *c.ver);
    c.tol = calloc(n, sizeof *c.tol);
    c.aux = calloc(n, sizeof *c.aux);
    datm_expr_verdict r = DATM_EXPR_NOT_EVALUABLE;
    if (c.val && c.why && c.ver && c.tol && c.aux) {
        for (size_t i = 0; i < n; i++) c.aux[i] = NAN;
        r = eval_bool(&c, e->root, +1);
        if (explain && explain_size) {
            sbuf b = {explain, explain_size, 0};
            render(&b, &c, e->root, 1);
            sb_printf(&b, ": %s", datm_expr_verdict_name(r));
            if (b.len + 1 >= b.size && b.size > 4) strcpy(b.buf + b.size - 4, "...");
        }
    } else if (explain && explain_size) {
        snprintf(explain, explain_size, "out of memory");
    }
    free(c.val); free(c.why); free(c.ver); free(c.tol); free(c.aux);
    return r;
}

int datm_expr_substitute(const char *tmpl, int n, const char *const *names,
                         const char *const *values, char *out, size_t out_size,
                         datm_error *err)
{
    size_t len = 0;
    for (const char *s = tmpl; *s;) {
        const char *piece = s;
        size_t plen = 1;
        if (*s == '{') {
            const char *close = strchr(s, '}');
            if (!close)
                return datm_error_set(err, DATM_E_INVALID, "column %d: unclosed '{'",
                                      (int)(s - tmpl) + 1);
            const size_t nl = (size_t)(close - s - 1);
            int found = -1;
            for (int i = 0; i < n && found < 0; i++)
                if (strlen(names[i]) == nl && !strncmp(names[i], s + 1, nl)) found = i;
            if (found < 0)
                return datm_error_set(err, DATM_E_INVALID,
                                      "column %d: unknown placeholder '{%.*s}' (not an axis "
                                      "of the claim)", (int)(s - tmpl) + 1, (int)nl, s + 1);
            piece = values[found];
            plen = strlen(piece);
            s = close + 1;
        } else {
            s++;
        }
        if (len + plen + 1 > out_size)
            return datm_error_set(err, DATM_E_INVALID, "expression longer than %zu characters "
                                                       "after substitution", out_size - 1);
        memcpy(out + len, piece, plen);
        len += plen;
    }
    out[len] = '\0';
    return DATM_OK;
}
