/* engine/core/memory.c: zeroed, aligned allocation that reports failure through datm_error,
 * and the process-wide stop flag set by the SIGINT handler. */
#include "core/core.h"

#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of memory the system can still give (MemAvailable + SwapFree of /proc/meminfo), or
 * SIZE_MAX when unknown. */
static size_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return SIZE_MAX;
    char line[256];
    unsigned long long kb, avail = 0, swap = 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) { avail = kb; found = 1; }
        else if (sscanf(line, "SwapFree: %llu kB", &kb) == 1) swap = kb;
    }
    fclose(f);
    return found ? (size_t)((avail + swap) * 1024ULL) : SIZE_MAX;
}

/* Bytes held in datm_alloc blocks (their usable sizes), and what the system had to give when
 * the first large block was asked for. */
static int64_t live_bytes;   /* signed: a block freed here that came from malloc only lowers it */
static size_t avail_at_start;

void *datm_alloc(size_t nbytes, datm_error *err)
{
    void *p = NULL;
    /* A model or corpus too large for the machine would be granted (overcommit) and then,
     * zeroed page by page, end in the out-of-memory killer: refuse it with a message instead,
     * when one block exceeds what the system has now, or when this process's blocks would
     * exceed what it had when the first large one was asked for. Only blocks of 64 MiB and
     * more are checked (a look at /proc/meminfo each). */
    if (nbytes >= ((size_t)64 << 20)) {
        size_t avail = mem_available();
        size_t start = __atomic_load_n(&avail_at_start, __ATOMIC_RELAXED);
        if (!start) {
            int64_t held0 = __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
            start = avail == SIZE_MAX ? SIZE_MAX : avail + (held0 > 0 ? (size_t)held0 : 0);
            __atomic_store_n(&avail_at_start, start, __ATOMIC_RELAXED);
        }
        int64_t held = __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
        size_t live = held > 0 ? (size_t)held : 0;
        if (nbytes > avail || (start != SIZE_MAX && live + nbytes > start)) {
            datm_error_set(err, DATM_E_NOMEM, "out of memory: %.2f GB more needed (%.2f GB held "
                           "already), %.2f GB available on this machine", (double)nbytes / 1e9,
                           (double)live / 1e9, (double)avail / 1e9);
            return NULL;
        }
    }
    size_t n = nbytes ? (nbytes + 63) / 64 * 64 : 64;
    if (posix_memalign(&p, 64, n) != 0 || !p) {
        datm_error_set(err, DATM_E_NOMEM, "out of memory allocating %zu bytes", nbytes);
        return NULL;
    }
    memset(p, 0, n);
    __atomic_add_fetch(&live_bytes, (int64_t)malloc_usable_size(p), __ATOMIC_RELAXED);
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

void datm_free(void *p)
{
    if (!p) return;
    __atomic_sub_fetch(&live_bytes, (int64_t)malloc_usable_size(p), __ATOMIC_RELAXED);
    free(p);
}

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
