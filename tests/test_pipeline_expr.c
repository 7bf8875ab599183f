/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_pipeline
 * tests/test_pipeline_expr.c: claim expressions (engine/pipeline/expr.c).
 * - numbers (1e-3, .5), references with '-' inside names, digit-only run ids, precedence of
 *   * / over + -, unary minus, parentheses, comparisons, and/or/not, the five functions
 * - parse errors: the column of the fault and a caret under it (unclosed '(', chained
 *   comparisons, a subtraction without spaces, unknown functions, wrong argument counts,
 *   type errors, '&&', an expression that is a number, trailing tokens, empty)
 * - tolerance: loosens <, <=, >, >=, == in the claim's favour by rel*|right| + abs; != is
 *   unaffected; under `not` it tightens instead; approx and between take it too
 * - three-valued logic: missing / NaN metrics and division by zero are not evaluable; a
 *   known FALSE decides `and`, a known TRUE decides `or`
 * - the explanation shows every referenced number and the verdict
 * - {axis} substitution */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/expr.h"
#include "test_check.h"

/* A small table of run.metric values. */
static const struct { const char *run, *metric; double v; } table[] = {
    {"whai_128", "perplexity", 825.0},
    {"wai_128", "perplexity", 843.1},
    {"whai_128-64-32", "perplexity", 800.0},
    {"a", "x", 10.0},
    {"b", "x", 4.0},
    {"c", "x", 2.0},
    {"z", "x", 0.0},
    {"n", "x", NAN},
    {"128", "ppl", 7.0},
    {"r-1", "m_2", 3.0},
    {"sdatm+lr", "error_rate", 0.25},
};

static int lookup(void *user, const char *run, const char *metric, double *v)
{
    int *calls = user;
    if (calls) (*calls)++;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].run, run) && !strcmp(table[i].metric, metric)) {
            *v = table[i].v;
            return 0;
        }
    return 1;
}

/* Parses and evaluates; returns the verdict, or -1 when the text does not parse. */
static int ev(const char *text, double rel, double abs_tol, char *explain, size_t n)
{
    datm_expr *e = NULL;
    datm_error err = {0};
    if (datm_expr_parse(text, &e, NULL, &err) != DATM_OK) {
        fprintf(stderr, "unexpected parse error in '%s': %s\n", text, err.msg);
        return -1;
    }
    char buf[1024];
    int r = (int)datm_expr_eval(e, lookup, NULL, rel, abs_tol, explain ? explain : buf,
                                explain ? n : sizeof buf);
    datm_expr_destroy(&e);
    return r;
}

#define T DATM_EXPR_TRUE
#define F DATM_EXPR_FALSE
#define NE DATM_EXPR_NOT_EVALUABLE

static void check_values(void)
{
    static const struct { const char *text; int want; } cases[] = {
        /* numbers and arithmetic precedence */
        {"1e-3 * 1000 == 1", T},
        {".5 + .5 == 1", T},
        {"2 + 3 * 4 == 14", T},
        {"(2 + 3) * 4 == 20", T},
        {"10 - 4 - 3 == 3", T},          /* left associative */
        {"8 / 4 / 2 == 1", T},
        {"-2 * -3 == 6", T},
        {"- (1 + 2) == -3", T},
        {"2 - -1 == 3", T},
        /* references, names with '-' and '_', a digit-only run id */
        {"whai_128.perplexity <= wai_128.perplexity", T},
        {"whai_128-64-32.perplexity < whai_128.perplexity", T},
        {"r-1.m_2 == 3", T},
        {"sdatm+lr.error_rate * 4 == 1", T},
        {"a.x + 1 == 11", T},
        {"128.ppl == 7", T},
        {"a.x - b.x == 6", T},
        {"a.x / b.x * c.x == 5", T},
        {"a.x - b.x * c.x == 2", T},
        /* comparisons */
        {"a.x > b.x", T}, {"a.x < b.x", F}, {"a.x >= 10", T}, {"a.x <= 9.99", F},
        {"a.x != 10", F}, {"a.x == 10.0", T},
        /* logic and precedence: not > and > or */
        {"a.x > 1 and b.x > 1", T},
        {"a.x > 1 and b.x > 5", F},
        {"a.x < 1 or b.x > 1", T},
        {"not a.x < 1", T},
        {"not a.x > 1 or b.x > 1", T},     /* (not a>1) or b>1 */
        {"a.x < 1 and b.x < 1 or c.x > 1", T},   /* (F and F) or T */
        {"a.x < 1 and (b.x < 1 or c.x > 1)", F},
        {"not (a.x > 1 and b.x > 1)", F},
        {"not not a.x > 1", T},
        /* functions */
        {"abs(b.x - a.x) == 6", T},
        {"min(a.x, b.x) == 4 and max(a.x, b.x) == 10", T},
        {"approx(wai_128.perplexity, 840, 0.01)", T},
        {"approx(wai_128.perplexity, 800, 0.01)", F},
        {"between(b.x, 2, 4)", T},
        {"between(b.x, 5, 6)", F},
        {"not between(b.x, 5, 6)", T},
        /* three-valued logic */
        {"missing.x < 1", NE},
        {"a.nometric < 1", NE},
        {"n.x < 1", NE},                    /* NaN counts as missing */
        {"a.x / z.x > 1", NE},               /* division by zero */
        {"missing.x < 1 and a.x < 1", F},    /* a known FALSE decides 'and' */
        {"a.x < 1 and missing.x < 1", F},
        {"missing.x < 1 and a.x > 1", NE},
        {"missing.x < 1 or a.x > 1", T},     /* a known TRUE decides 'or' */
        {"missing.x < 1 or a.x < 1", NE},
        {"not missing.x < 1", NE},
        {"min(missing.x, 1) < 5", NE},
        {"approx(missing.x, 1, 0.1)", NE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ex[1024];
        int got = ev(cases[i].text, 0, 0, ex, sizeof ex);
        CHECK(got == cases[i].want, "'%s': verdict %d, want %d (%s)", cases[i].text, got,
              cases[i].want, ex);
    }
}

/* Parse error: the column and the message fragment, and a caret under that column. */
static void check_errors(void)
{
    static const struct { const char *text; int col; const char *frag; } cases[] = {
        {"", 1, "empty expression"},
        {"a.x < (b.x + 1", 15, "expected ')' to close the '(' at column 7"},
        {"a.x < b.x < c.x", 11, "do not chain"},
        {"a.x-b.x == 6", 6, "unexpected '.' after 'a.x-b'"},
        {"a.x < 2-1", 7, "put spaces around a subtraction"},
        {"a.x < foo(1)", 7, "unknown function 'foo'"},
        {"min(a.x) < 1", 1, "min() takes 2 arguments, got 1"},
        {"approx(a.x, 1) ", 1, "approx() takes 3 arguments"},
        {"a.x + (b.x < 1) > 0", 8, "'+' needs a number here"},
        {"a.x and b.x < 1", 1, "'and' needs a truth value"},
        {"a.x < 1 && b.x < 1", 9, "'&&': write 'and'"},
        {"a.x = 1", 5, "write '=='"},
        {"a.x + 1", 1, "the expression is a number"},
        {"a.x < 1 b.x", 9, "unexpected 'b.x' after a complete expression"},
        {"a.x < ", 7, "unexpected end"},
        {"a. < 1", 3, "expected a metric name after 'a.'"},
        {"whai < 1", 1, "'whai' is not a number, a reference"},
        {"a.x < 1+2", 7, "around a subtraction or an addition"},
        {"a.x < 1 $", 9, "unexpected character '$'"},
        {"not 3", 5, "'not' needs a truth value"},
        {"a.x < (1, 2)", 9, "expected ')'"},
        {"abs(a.x < 1) > 0", 5, "abs needs a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        datm_expr *e = NULL;
        datm_error err = {0};
        int col = -1;
        int rc = datm_expr_parse(cases[i].text, &e, &col, &err);
        CHECK(rc == DATM_E_FORMAT && e == NULL, "'%s': parse returned %d", cases[i].text, rc);
        CHECK(col == cases[i].col, "'%s': column %d, want %d (%s)", cases[i].text, col,
              cases[i].col, err.msg);
        char head[64];
        snprintf(head, sizeof head, "column %d: ", cases[i].col);
        CHECK(!strncmp(err.msg, head, strlen(head)), "'%s': message '%s' does not start with '%s'",
              cases[i].text, err.msg, head);
        CHECK(strstr(err.msg, cases[i].frag) != NULL, "'%s': message '%s' lacks '%s'",
              cases[i].text, err.msg, cases[i].frag);
        /* the caret line: two spaces, col-1 spaces, '^' */
        const char *caret = strrchr(err.msg, '\n');
        CHECK(caret && (int)strlen(caret) == 1 + 2 + cases[i].col && caret[strlen(caret) - 1] == '^',
              "'%s': caret line '%s' not under column %d", cases[i].text, caret ? caret + 1 : "",
              cases[i].col);
        const char *line = strchr(err.msg, '\n');
        CHECK(line && !strncmp(line + 3, cases[i].text, strlen(cases[i].text)),
              "'%s': the message does not quote the expression", cases[i].text);
    }
}

static void check_tolerance(void)
{
    /* whai 825 vs wai 843.1: 843.1 < 825 fails; within 3% of 825 (24.75) it holds */
    CHECK(ev("wai_128.perplexity < whai_128.perplexity", 0, 0, NULL, 0) == F, "no tol");
    CHECK(ev("wai_128.perplexity < whai_128.perplexity", 0.03, 0, NULL, 0) == T, "rel tol <");
    CHECK(ev("wai_128.perplexity < whai_128.perplexity", 0.02, 0, NULL, 0) == F,
          "2%% of 825 = 16.5 < 18.1");
    CHECK(ev("wai_128.perplexity <= whai_128.perplexity", 0, 18.1, NULL, 0) == T, "abs tol <=");
    CHECK(ev("wai_128.perplexity < whai_128.perplexity", 0, 18.1, NULL, 0) == F,
          "strict < at exactly the tolerance");
    CHECK(ev("b.x > a.x", 0.5, 0, NULL, 0) == F, "4 > 10 - 5 fails");
    CHECK(ev("b.x > a.x", 0.61, 0, NULL, 0) == T, "4 > 10 - 6.1 holds");
    CHECK(ev("b.x >= a.x", 0, 6, NULL, 0) == T, ">= with abs tol");
    CHECK(ev("a.x == 10.5", 0, 0.5, NULL, 0) == T, "== within tol");
    CHECK(ev("a.x == 10.5", 0, 0.4, NULL, 0) == F, "== outside tol");
    CHECK(ev("a.x == 11", 0.1, 0, NULL, 0) == T, "== rel tol of the right side 1.1");
    CHECK(ev("a.x != 10.5", 0, 1, NULL, 0) == T, "!= unaffected");
    CHECK(ev("a.x != 10", 0, 1, NULL, 0) == F, "!= unaffected (equal)");
    /* under not the tolerance tightens: not (a < 10.5) is a >= 10.5 in the claim's favour */
    CHECK(ev("not a.x > 10.5", 0, 1, NULL, 0) == T, "not tightens >: 10 > 11.5 false");
    CHECK(ev("a.x > 10.5", 0, 1, NULL, 0) == T, "loosened > holds");
    CHECK(ev("not a.x == 10.5", 0, 1, NULL, 0) == T, "not ==: exact");
    CHECK(ev("not a.x != 10.5", 0, 1, NULL, 0) == T, "not !=: |d| > tol fails, so not holds");
    CHECK(ev("not not a.x > 10.5", 0, 1, NULL, 0) == T, "double not loosens again");
    CHECK(ev("approx(a.x, 11, 0.05)", 0, 0.5, NULL, 0) == T, "approx + tol: 1 <= 0.55 + 0.5");
    CHECK(ev("approx(a.x, 11, 0.05)", 0, 0.4, NULL, 0) == F, "approx + tol: 1 > 0.95");
    CHECK(ev("between(a.x, 2, 9)", 0, 1, NULL, 0) == T, "between + tol above");
    CHECK(ev("between(c.x, 3, 9)", 0.4, 0, NULL, 0) == T, "between + rel tol below: 3 - 1.2");
    CHECK(ev("not between(a.x, 2, 9.5)", 0, 1, NULL, 0) == T, "not between tightens");
}

static void check_explain(void)
{
    char ex[1024];
    int r = ev("whai_128.perplexity <= wai_128.perplexity", 0, 0, ex, sizeof ex);
    CHECK(r == T && !strcmp(ex, "whai_128.perplexity (825) <= wai_128.perplexity (843.1): holds"),
          "explain: '%s'", ex);
    ev("a.x < 1 and missing.x < 1", 0, 0, ex, sizeof ex);
    CHECK(!strcmp(ex, "[a.x (10) < 1: fails] and [missing.x (missing) < 1: not evaluable]: fails"),
          "explain and: '%s'", ex);
    ev("(a.x - b.x) / 2 > c.x", 0.1, 0, ex, sizeof ex);
    CHECK(!strcmp(ex, "(a.x (10) - b.x (4)) / 2 (= 3) > c.x (2) (tolerance 0.2): holds"),
          "explain compound side and tolerance: '%s'", ex);
    ev("n.x < 1 or a.x / z.x > 1", 0, 0, ex, sizeof ex);
    CHECK(!strcmp(ex, "[n.x (NaN) < 1: not evaluable] or [a.x (10) / z.x (0) (= division by "
                      "zero) > 1: not evaluable]: not evaluable"), "explain NaN: '%s'", ex);
    ev("not (a.x > 1 or b.x > 1)", 0, 0, ex, sizeof ex);
    CHECK(!strcmp(ex, "not ([a.x (10) > 1: holds] or [b.x (4) > 1: holds]): fails"),
          "explain not: '%s'", ex);
    ev("approx(wai_128.perplexity, 840, 0.01)", 0, 0, ex, sizeof ex);
    CHECK(!strcmp(ex, "approx(wai_128.perplexity (843.1), 840, 0.01) (|difference| = 3.1): holds"),
          "explain approx: '%s'", ex);
    char small[24];
    ev("whai_128.perplexity <= wai_128.perplexity", 0, 0, small, sizeof small);
    CHECK(strlen(small) == sizeof small - 1 && !strcmp(small + sizeof small - 4, "..."),
          "truncated: '%s'", small);
}

static void check_refs_and_substitute(void)
{
    datm_expr *e = NULL;
    datm_error err = {0};
    CHECK(datm_expr_parse("whai_128-64.ppl < wai.ppl and abs(x-1.y) > 0", &e, NULL, &err) == 0,
          "parse: %s", err.msg);
    CHECK(e && datm_expr_n_refs(e) == 3, "3 refs");
    if (e && datm_expr_n_refs(e) == 3) {
        CHECK(!strcmp(datm_expr_ref_run(e, 0), "whai_128-64") &&
              !strcmp(datm_expr_ref_metric(e, 0), "ppl"), "ref 0");
        CHECK(!strcmp(datm_expr_ref_run(e, 2), "x-1") && !strcmp(datm_expr_ref_metric(e, 2), "y"),
              "ref 2");
    }
    datm_expr_destroy(&e);
    CHECK(e == NULL, "destroy nulls");
    /* RUN.METRIC@SOURCE: a reference figure; the parser hands "METRIC@SOURCE" to the lookup */
    CHECK(datm_expr_parse("approx(whai-1.ppl, whai-1.ppl@base_line, 0.03)", &e, NULL, &err) == 0,
          "parse @: %s", err.msg);
    CHECK(e && datm_expr_n_refs(e) == 2 && !strcmp(datm_expr_ref_run(e, 1), "whai-1") &&
          !strcmp(datm_expr_ref_metric(e, 1), "ppl@base_line"), "ref @");
    datm_expr_destroy(&e);
    CHECK(datm_expr_parse("a.x@ < 1", &e, NULL, &err) != 0 && strstr(err.msg, "after '@'"),
          "'@' without a source: %s", err.msg);
    datm_expr_destroy(&e);

    const char *names[] = {"variant", "layers"}, *values[] = {"whai", "128-64"};
    char out[128];
    CHECK(datm_expr_substitute("{variant}_{layers}.ppl < wai_{layers}.ppl", 2, names, values,
                               out, sizeof out, &err) == 0 &&
          !strcmp(out, "whai_128-64.ppl < wai_128-64.ppl"), "substitute: '%s'", out);
    CHECK(datm_expr_substitute("{depth}.ppl < 1", 2, names, values, out, sizeof out, &err) ==
              DATM_E_INVALID && strstr(err.msg, "'{depth}'") && strstr(err.msg, "column 1"),
          "unknown placeholder: %s", err.msg);
    CHECK(datm_expr_substitute("a.x < {layers", 2, names, values, out, sizeof out, &err) ==
              DATM_E_INVALID && strstr(err.msg, "unclosed"), "unclosed: %s", err.msg);
    CHECK(datm_expr_substitute("{variant}{variant}", 2, names, values, out, 8, &err) ==
              DATM_E_INVALID, "too long");

    /* evaluation reads every reference once per evaluation, also on decided branches */
    int calls = 0;
    CHECK(datm_expr_parse("a.x < 1 and b.x < 1", &e, NULL, &err) == 0, "parse");
    char ex[256];
    datm_expr_eval(e, lookup, &calls, 0, 0, ex, sizeof ex);
    CHECK(calls == 2, "lookups: %d", calls);
    datm_expr_destroy(&e);
}

int main(void)
{
    check_values();
    check_errors();
    check_tolerance();
    check_explain();
    check_refs_and_substitute();
    printf("test_pipeline_expr: %d failure%s\n", fails, fails == 1 ? "" : "s");
    return fails ? 1 : 0;
}
