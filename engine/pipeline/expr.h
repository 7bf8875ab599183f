/* engine/pipeline/expr.h: claim expressions of pipeline files (claims.ID.expr), parsed once
 * and evaluated against the metrics of finished runs.
 *
 * Grammar (lowest precedence first):
 *   expr    := or
 *   or      := and ('or' and)*
 *   and     := not ('and' not)*
 *   not     := 'not' not | cmp
 *   cmp     := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?    (no chains: a < b < c)
 *   sum     := prod (('+' | '-') prod)*
 *   prod    := unary (('*' | '/') unary)*
 *   unary   := '-' unary | primary
 *   primary := NUMBER | RUN '.' METRIC ['@' SOURCE] | FUNC '(' args ')' | '(' expr ')'
 * NUMBER: 12, 0.5, .5, 1e-3. RUN and METRIC: letters, digits, '_', '-' and '+'; a '-' or '+'
 * directly between two name characters belongs to the name (run ids such as whai_128-64-32
 * or sdatm+lr), so `whai_128-64-32.perplexity` is one reference and subtraction and
 * addition need spaces (`a.x - b.x`, `a.x + 1`). A run id made of digits only
 * (`128.perplexity`) is read as a reference when a name character follows the '.'.
 * RUN.METRIC@SOURCE is the figure references.SOURCE.RUN.METRIC of the pipeline file (a
 * recorded baseline, the paper's value) rather than the run's own; to the parser it is a
 * reference whose metric is "METRIC@SOURCE", and the caller's lookup tells them apart.
 * Functions: abs(x), min(a, b), max(a, b) give numbers; approx(x, ref, rel) holds when
 * |x - ref| <= rel * |ref|; between(x, lo, hi) holds when lo <= x <= hi. The whole expression
 * must be a truth value (a comparison, approx, between, or and/or/not of them).
 *
 * Values: a reference whose run or metric is missing, or whose value is NaN, is not known;
 * arithmetic on an unknown value, and a division by zero, give an unknown value; a
 * comparison with an unknown side is NOT_EVALUABLE. and/or use three-valued (Kleene) logic:
 * FALSE and X = FALSE, TRUE or X = TRUE for any X, so one known failing side decides.
 *
 * Tolerance: every comparison is loosened in the claim's favour by
 *   tol = rel_tol * |right side| + abs_tol:
 *   a < b  holds when a < b + tol       a <= b  when a <= b + tol
 *   a > b  holds when a > b - tol       a >= b  when a >= b - tol
 *   a == b holds when |a - b| <= tol    a != b  when a != b (unaffected)
 *   approx(x, ref, rel): |x - ref| <= rel * |ref| + tol (tol of the right side ref)
 *   between(x, lo, hi):  lo - tol(lo) <= x <= hi + tol(hi)
 * Under an odd number of `not`s the same comparisons are tightened by tol instead (a < b
 * becomes a < b - tol, a != b becomes |a - b| > tol, == becomes exact), so the tolerance
 * favours the claim as a whole, never the negated part. */
#ifndef DATM_EXPR_H
#define DATM_EXPR_H

#include <stddef.h>

#include "core/core.h"

typedef enum {
    DATM_EXPR_FALSE = 0,
    DATM_EXPR_TRUE = 1,
    DATM_EXPR_NOT_EVALUABLE = 2
} datm_expr_verdict;

/* "holds", "fails", "not evaluable". */
const char *datm_expr_verdict_name(datm_expr_verdict v);

typedef struct datm_expr datm_expr;   /* a parsed expression (opaque) */

/* Parses `text`. On error returns DATM_E_FORMAT, sets *err_col (may be NULL) to the 1-based
 * column of the fault inside `text`, and err->msg to
 *   "column C: what is wrong\n  <text>\n  <spaces>^"
 * so that the caller can prefix "file:line:col: claims.ID.expr: ". */
int  datm_expr_parse(const char *text, datm_expr **out, int *err_col, datm_error *err);
void datm_expr_destroy(datm_expr **e);

/* The references of e, in order of appearance (repeats included). */
int         datm_expr_n_refs(const datm_expr *e);
const char *datm_expr_ref_run(const datm_expr *e, int i);
const char *datm_expr_ref_metric(const datm_expr *e, int i);

/* Looks up run.metric: returns 0 and sets *v when known, nonzero when the run or the metric
 * is missing. A NaN *v counts as missing. */
typedef int (*datm_expr_lookup_fn)(void *user, const char *run, const char *metric, double *v);

/* Evaluates e with the tolerance above. explain (may be NULL) receives the expression with
 * every reference followed by its value, compound sides by "= value", comparisons inside
 * and/or/not in brackets with their own verdict, and the verdict at the end, e.g.
 *   "whai_128.perplexity (825) <= wai_128.perplexity (843.1): holds"
 * (truncated with "..." to explain_size). Numbers use "%.6g" (C locale). */
datm_expr_verdict datm_expr_eval(const datm_expr *e, datm_expr_lookup_fn lookup, void *user,
                                 double rel_tol, double abs_tol, char *explain,
                                 size_t explain_size);

/* Replaces every {name} in tmpl by values[i] where names[i] == name (claims' {axis}
 * placeholders, per instance). An unknown name or an unclosed '{' is DATM_E_INVALID naming
 * it; the result longer than out_size is DATM_E_INVALID. */
int  datm_expr_substitute(const char *tmpl, int n, const char *const *names,
                          const char *const *values, char *out, size_t out_size,
                          datm_error *err);

#endif
