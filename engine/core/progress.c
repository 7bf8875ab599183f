/* engine/core/progress.c: progress line with rate and ETA for long loops.
 * On a terminal the line is rewritten in place; otherwise a plain line is printed at most
 * every plain_every_s seconds so logs of CI runs stay short. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void datm_progress_begin(datm_progress *p, const char *label, int64_t total)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->total = total;
    p->t_start = p->t_last = datm_time_now();
    p->plain_every_s = 10.0;
    p->tty = isatty(fileno(stderr));
    p->log_every_s = 60.0;
    p->t_log = p->t_start;
}

static void progress_print(datm_progress *p, int final, int to_terminal, int to_log)
{
    double el = datm_time_now() - p->t_start;
    double rate = el > 0 ? (double)p->done / el : 0.0;
    char eta[32] = "";
    if (p->total > 0 && rate > 0 && !final)
        snprintf(eta, sizeof eta, " eta %.0fs", (double)(p->total - p->done) / rate);
    char line[400];
    if (p->total > 0)
        snprintf(line, sizeof line, "%s %lld/%lld (%.0f%%) %.1f/s %.1fs%s %s", p->label,
                 (long long)p->done, (long long)p->total, 100.0 * (double)p->done / (double)p->total,
                 rate, el, eta, p->extra);
    else
        snprintf(line, sizeof line, "%s %lld %.1f/s %.1fs %s", p->label, (long long)p->done, rate, el,
                 p->extra);
    if (to_terminal) {
        if (p->tty) fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
        else fprintf(stderr, "%s\n", line);
        fflush(stderr);
    }
    if (to_log && p->log) {
        fprintf(p->log, "%s\n", line);
        fflush(p->log);
    }
}

void datm_progress_update(datm_progress *p, int64_t done, const char *extra_fmt, ...)
{
    p->done = done;
    if (extra_fmt) {
        va_list ap;
        va_start(ap, extra_fmt);
        vsnprintf(p->extra, sizeof p->extra, extra_fmt, ap);
        va_end(ap);
    }
    double now = datm_time_now();
    double every = p->tty ? 0.2 : p->plain_every_s;
    const int term = datm_log_get_level() <= DATM_LOG_INFO && now - p->t_last >= every;
    const int log = p->log && now - p->t_log >= p->log_every_s;
    if (term) p->t_last = now;
    if (log) p->t_log = now;
    if (term || log) progress_print(p, 0, term, log);
}

void datm_progress_end(datm_progress *p)
{
    progress_print(p, 1, datm_log_get_level() <= DATM_LOG_INFO, 1);
}
