/* engine/core/error.c: status names and datm_error messages. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    [DATM_OK] = "ok",
    [DATM_E_IO] = "i/o error",
    [DATM_E_FORMAT] = "format error",
    [DATM_E_INVALID] = "invalid argument",
    [DATM_E_NOMEM] = "out of memory",
    [DATM_E_NUMERIC] = "numerical error",
    [DATM_E_INTERRUPTED] = "interrupted",
    [DATM_E_UNSUPPORTED] = "unsupported",
};
_Static_assert(DATM_COUNTOF(status_names) == DATM_E_COUNT_, "status_names must list every status");

const char *datm_status_name(int status)
{
    if (status < 0 || status >= DATM_E_COUNT_) return "unknown status";
    return status_names[status];
}

int datm_error_set(datm_error *err, int code, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int datm_error_prefix(datm_error *err, const char *fmt, ...)
{
    if (!err) return DATM_E_INVALID;
    char prefix[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(prefix);
    if (n >= sizeof err->msg) n = sizeof err->msg - 1;
    memcpy(err->msg, prefix, n);
    size_t m = strlen(old);
    if (m > sizeof err->msg - 1 - n) m = sizeof err->msg - 1 - n;
    memcpy(err->msg + n, old, m);
    err->msg[n + m] = '\0';
    return err->code;
}

void datm_error_clear(datm_error *err)
{
    if (err) { err->code = DATM_OK; err->msg[0] = '\0'; }
}

void datm_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: internal error: assertion failed: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}
