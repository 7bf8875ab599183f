/* engine/core/log.c: the single log callback every library message goes through. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>

/* The log sink is process-wide configuration set once by main(); it is not model state. */
static datm_log_fn log_fn;
static void *log_user;
static datm_log_level log_min = DATM_LOG_INFO;

void datm_log_set_callback(datm_log_fn fn, void *user) { log_fn = fn; log_user = user; }
void datm_log_set_level(datm_log_level min_level) { log_min = min_level; }
datm_log_level datm_log_get_level(void) { return log_min; }

void datm_log(datm_log_level level, const char *fmt, ...)
{
    /* a callback keeps INFO for its record even when the terminal shows less (--quiet) */
    if (level < log_min && !(log_fn && level >= DATM_LOG_INFO)) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (log_fn) { log_fn(level, buf, log_user); return; }
    static const char *const tag[] = {"debug: ", "", "warning: ", "error: "};
    fprintf(stderr, "%s%s\n", tag[level], buf);
}
