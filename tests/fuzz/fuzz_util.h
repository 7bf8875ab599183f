/* tests/fuzz/fuzz_util.h: helpers of the libFuzzer harnesses. The readers take paths, so a
 * harness writes its input to a scratch file first: under /dev/shm when it exists (memory,
 * fast), else the temporary directory; one directory per process, removed at exit. */
#ifndef DATM_FUZZ_UTIL_H
#define DATM_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static char fuzz_dir_[256];

static inline void fuzz_cleanup_(void)
{
    if (!fuzz_dir_[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir_);
    if (system(cmd) != 0) { /* nothing to do */ }
}

/* The scratch directory of this process (created on first use). */
static inline const char *fuzz_dir(void)
{
    if (fuzz_dir_[0]) return fuzz_dir_;
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(fuzz_dir_, sizeof fuzz_dir_, "%s/datm_fuzz_%ld", base, (long)getpid());
    mkdir(fuzz_dir_, 0700);
    atexit(fuzz_cleanup_);
    datm_log_set_level(DATM_LOG_ERROR);   /* readers' warnings are expected here */
    return fuzz_dir_;
}

/* Writes data to DIR/name; returns the path (static buffer per slot 0..7). */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char paths[8][512];
    static int slot;
    char *p = paths[slot++ & 7];
    if ((size_t)snprintf(p, 512, "%s/%s", fuzz_dir(), name) >= 512) abort();
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
    return p;
}

/* Splits data at the separator line "\n#--\n" into up to max parts; returns the count. */
static inline int fuzz_split(const uint8_t *data, size_t size, const uint8_t **part, size_t *len, int max)
{
    static const char sep[] = "\n#--\n";
    const size_t sl = sizeof sep - 1;
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; n < max - 1 && i + sl <= size; i++)
        if (!memcmp(data + i, sep, sl)) {
            part[n] = data + start;
            len[n++] = i + 1 - start;   /* keep the '\n' ending the part */
            start = i + sl;
            i = start - 1;
        }
    part[n] = data + start;
    len[n++] = size - start;
    return n;
}

/* A failed reader must say where: a message naming the file it was given. */
static inline void fuzz_expect_message(const datm_error *e, const char *path)
{
    if (!e->msg[0]) {
        fprintf(stderr, "error without a message (code %d)\n", e->code);
        abort();
    }
    if (path && !strstr(e->msg, path) && e->code != DATM_E_NOMEM) {
        fprintf(stderr, "message does not name %s: %s\n", path, e->msg);
        abort();
    }
}

#endif
