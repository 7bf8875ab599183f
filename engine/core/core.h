/* engine/core: status codes and error messages, assertions, logging, progress lines,
 * monotonic timers, the floating-point mode, checked allocation. Everything else in datm
 * stands on this.
 *
 * Conventions: every fallible function returns int status (DATM_OK = 0) and fills a
 * caller-provided datm_error with a message naming the file, line, key or index at fault.
 * Only main() exits. Programmer errors abort through DATM_ASSERT with file:line. */
#ifndef DATM_CORE_H
#define DATM_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "datm_base.h"
#include "core/testhooks.h"   /* the test-only interface: path switches, DATM_TEST_FAULT */

/* ---- version (generated at build time) ---- */
const char *datm_version_string(void);   /* e.g. "0.1.0" */
const char *datm_git_commit(void);       /* short commit of the source tree, or "unknown" */
int         datm_git_dirty(void);        /* 1 uncommitted changes, 0 clean, -1 unknown */

/* ---- status codes and errors ----
 * include/datm_base.h (installed; shared with datm.h and datm_model.h) defines datm_status
 * (DATM_OK, DATM_E_*), datm_error ("file:line: field: what is wrong" messages),
 * datm_error_set, datm_error_prefix, the log levels, datm_log and DATM_MAX_LAYERS. */
#define DATM_E_COUNT_ (DATM_E_UNSUPPORTED + 1)   /* number of status codes */

const char *datm_status_name(int status);

void datm_error_clear(datm_error *err);

/* ---- assertions (programmer errors only) ---- */
void datm_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));
#define DATM_ASSERT(cond) \
    do { if (!(cond)) datm_assert_fail(#cond, __FILE__, __LINE__); } while (0)

/* ---- logging: one callback for all library output ---- */
typedef void (*datm_log_fn)(datm_log_level level, const char *msg, void *user);
/* Default: INFO and above to stderr. Pass NULL fn to restore the default. A callback gets
 * INFO and above even when the level is set above INFO (--quiet): it keeps a full record
 * (a run's run.log) and prints to the terminal only what datm_log_get_level() allows. */
void datm_log_set_callback(datm_log_fn fn, void *user);
void datm_log_set_level(datm_log_level min_level);   /* --quiet sets WARN */
datm_log_level datm_log_get_level(void);
#define datm_info(...)  datm_log(DATM_LOG_INFO, __VA_ARGS__)
#define datm_warn(...)  datm_log(DATM_LOG_WARN, __VA_ARGS__)
#define datm_debug(...) datm_log(DATM_LOG_DEBUG, __VA_ARGS__)

/* ---- timers ---- */
double datm_time_now(void);        /* monotonic seconds */
double datm_time_cpu(void);        /* process CPU seconds */

/* ---- floating-point mode (fpmode.c) ----
 * Subnormal floats flushed to zero in the calling thread and every thread of the OpenMP team
 * until datm_fp_flush_end restores the saved mode (datm_run brackets a run with them; the CLI
 * sets it for the whole process). datm_fp_flushing: is the calling thread in that mode. */
typedef struct datm_fp_mode { unsigned reg; } datm_fp_mode;
void datm_fp_flush_begin(datm_fp_mode *saved);
void datm_fp_flush_end(const datm_fp_mode *saved);
int  datm_fp_flushing(void);

/* ---- memory kept for reuse (memtune.c) ----
 * Makes the C library keep freed blocks (up to 32 MB each) and the heap's free top (up to
 * 512 MB) mapped for the next allocation instead of returning them to the system, so calls
 * that allocate per call do not page-fault afresh each time. Process-wide; called once at
 * the start of a program (the CLI and the benches). 1 when the settings took, 0 otherwise
 * (not glibc). */
int datm_mem_keep_freed(void);

/* ---- progress line for long loops ----
 * On a TTY: one rewritten line with rate and ETA. Otherwise: a plain line every
 * `plain_every_s` seconds; silent on the terminal when the log level is above INFO. With `log`
 * set, also a plain line there every `log_every_s` seconds (60) and at the end. */
typedef struct datm_progress {
    const char *label;
    int64_t total;        /* units expected (0 = unknown) */
    int64_t done;
    double  t_start, t_last;
    double  plain_every_s;
    int     tty;
    char    extra[160];   /* caller text, e.g. "loss 812.3 ppl 901" */
    FILE   *log;          /* optional record (a run's run.log): a plain line every
                           * log_every_s seconds, whatever the terminal level; caller-owned */
    double  log_every_s, t_log;
} datm_progress;
void datm_progress_begin(datm_progress *p, const char *label, int64_t total);
void datm_progress_update(datm_progress *p, int64_t done, const char *extra_fmt, ...)
    __attribute__((format(printf, 3, 4)));
void datm_progress_end(datm_progress *p);

/* ---- memory ---- */
/* Allocation helpers that set err on failure. Zeroed. 64-byte aligned. Free with datm_free. */
void *datm_alloc(size_t nbytes, datm_error *err);
void *datm_alloc_array(size_t n, size_t size, datm_error *err);
void  datm_free(void *p);
char *datm_strdup(const char *s, datm_error *err);

/* ---- stop requests (SIGINT) ---- */
void datm_stop_request(void);       /* async-signal-safe */
int  datm_stop_requested(void);
void datm_stop_reset(void);

/* ---- files written whole (fileio.c) ----
 * A reader never sees half a file: a datm_afile writes PATH.tmp.PID, and commit flushes it to
 * the device (fsync), renames it over PATH and syncs the directory; any failure removes the
 * temporary, leaves PATH as it was and names the path and the system error. */
typedef struct datm_afile {
    FILE *f;
    char  path[1024];
    char  tmp[1100];
} datm_afile;
int  datm_afile_open(datm_afile *a, const char *path, datm_error *err);
/* Checks every write made through a->f (ferror), then fsync, close, rename, directory sync. */
int  datm_afile_commit(datm_afile *a, datm_error *err);
void datm_afile_abort(datm_afile *a);   /* closes and removes the temporary */
/* The whole of `text` as the file at path, through a datm_afile. */
int  datm_write_text_atomic(const char *path, const char *text, datm_error *err);
/* fsync of a file, or of the directory that holds path (after a rename into it). */
int  datm_fsync_path(const char *path, datm_error *err);
int  datm_fsync_parent(const char *path, datm_error *err);
/* Writes s (NULL: empty) as one CSV field (RFC 4180): quoted, with quotes doubled, when it
 * holds a comma, a quote or a line break. */
void datm_csv_field(FILE *f, const char *s);
/* Writes s (NULL: empty) as a JSON string: quoted, with quote, backslash and control
 * characters escaped. */
void datm_json_string(FILE *f, const char *s);

#define DATM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DATM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define DATM_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

#endif
