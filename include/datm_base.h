/* datm_base.h: what datm's two installed headers share, and the engine stands on: status
 * codes, the error struct every fallible function fills, the error and log functions, and the
 * bound on layers. include/datm.h (libdatm, reading trained models) and include/datm_model.h
 * (the plugin ABI) include it; so does the engine (engine/core/core.h), so each of these is
 * defined here once. Self-contained: it includes nothing of the engine. */
#ifndef DATM_BASE_H
#define DATM_BASE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The most layers of any model (encoder, decoder, heads, results, figures): one bound so the
 * fixed-size per-layer arrays of every part agree. */
#define DATM_MAX_LAYERS 8

/* ---- errors and logging ---- */
typedef enum {
    DATM_OK = 0,
    DATM_E_IO,          /* file missing / unreadable / unwritable */
    DATM_E_FORMAT,      /* malformed input file */
    DATM_E_INVALID,     /* bad argument or config value */
    DATM_E_NOMEM,       /* allocation failed */
    DATM_E_NUMERIC,     /* NaN / Inf / divergence detected */
    DATM_E_INTERRUPTED, /* SIGINT / stop requested */
    DATM_E_UNSUPPORTED  /* feature not available for this model / data */
} datm_status;

typedef struct datm_error {
    int  code;          /* datm_status; DATM_OK (0) when no error */
    char msg[1024];     /* what failed, naming the file, line or field where there is one */
} datm_error;

/* Sets err (if non-NULL) and returns code: `return datm_error_set(err, DATM_E_INVALID, ...)`. */
int  datm_error_set(datm_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends context ("while loading X: ") to an existing message; returns err->code. */
int  datm_error_prefix(datm_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

typedef enum { DATM_LOG_DEBUG = 0, DATM_LOG_INFO, DATM_LOG_WARN, DATM_LOG_ERROR } datm_log_level;
/* datm's log (silenced by --quiet). */
void datm_log(datm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
