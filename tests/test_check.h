/* tests/test_check.h: the one check family of the C tests. Include once per test program (it
 * defines the failure counter `fails`); a test's main ends with `return check_result();`.
 *
 *   CHECK(cond);                      on failure prints  FAIL file:line: cond
 *   CHECK(cond, "fmt", args...);      on failure prints  FAIL file:line: <fmt with args>
 *   CHECK_NEAR(a, b, tol);            |a - b| <= tol, printing both values (as doubles)
 *   CHECK_OK(call, err);              call returns 0 (DATM_OK), else prints err.msg
 *
 * Every failed check adds one to `fails`; only the first CHECK_PRINT_MAX failures are printed,
 * so a check inside a loop over a large array does not flood the log. The message, when given,
 * must start with a string literal. */
#ifndef DATM_TEST_CHECK_H
#define DATM_TEST_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define CHECK_PRINT_MAX 50

static int fails;   /* failed checks so far */

/* fmt is " " (no message: print expr) or " " followed by the caller's format. */
__attribute__((format(printf, 4, 5), unused))
static void check_fail_(const char *file, int line, const char *expr, const char *fmt, ...)
{
    if (fails++ >= CHECK_PRINT_MAX) {
        if (fails == CHECK_PRINT_MAX + 1) fprintf(stderr, "(further failures not printed)\n");
        return;
    }
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    if (!fmt[1]) {
        fputs(expr, stderr);
    } else {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt + 1, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
}

#define CHECK(c, ...)                                                                   \
    do {                                                                                \
        if (!(c)) check_fail_(__FILE__, __LINE__, #c, " " __VA_ARGS__);                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                           \
    do {                                                                                \
        const double a_ = (double)(a), b_ = (double)(b);                                \
        CHECK(fabs(a_ - b_) <= (tol), "%s = %.17g, expected %.17g (tolerance %g)", #a,  \
              a_, b_, (double)(tol));                                                   \
    } while (0)

#define CHECK_OK(call, err) CHECK((call) == 0, "%s: %s", #call, (err).msg)

/* The exit status of a test: 1 after any failure (with the count on stderr), else 0. */
__attribute__((unused)) static int check_result(void)
{
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    return fails ? 1 : 0;
}

#endif
