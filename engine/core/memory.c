/* engine/core/memory.c: zeroed, aligned allocation that reports failure through datm_error,
 * and the process-wide stop flag set by the SIGINT handler. */
#include "core/core.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void *datm_alloc(size_t nbytes, datm_error *err)
{
    void *p = NULL;
    size_t n = nbytes ? (nbytes + 63) / 64 * 64 : 64;
    if (posix_memalign(&p, 64, n) != 0 || !p) {
        datm_error_set(err, DATM_E_NOMEM, "out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    memset(p, 0, n);
    return p;
}

void *datm_alloc_array(size_t n, size_t size, datm_error *err)
{
    if (size && n > SIZE_MAX / size) {
        datm_error_set(err, DATM_E_NOMEM, "array of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    return datm_alloc(n * size, err);
}

void datm_free(void *p) { free(p); }

char *datm_strdup(const char *s, datm_error *err)
{
    size_t n = strlen(s) + 1;
    char *d = datm_alloc(n, err);
    if (d) memcpy(d, s, n);
    return d;
}

/* Set from a signal handler; read by long loops between mini-batches. */
static volatile sig_atomic_t stop_flag;
void datm_stop_request(void) { stop_flag = 1; }
int datm_stop_requested(void) { return stop_flag != 0; }
void datm_stop_reset(void) { stop_flag = 0; }
