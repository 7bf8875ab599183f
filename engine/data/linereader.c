/* engine/data/linereader.c: buffered line reading over zlib's gz* API (which reads plain
 * files transparently), with line numbers and strict detection of damaged gzip data. */
#include "data/linereader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

enum { LR_INIT_CAP = 1 << 16, LR_MAX_LINE = 1 << 28 };

int datm_linereader_open(datm_linereader *lr, const char *path, datm_error *err)
{
    memset(lr, 0, sizeof *lr);
    lr->path = path;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return datm_error_set(err, DATM_E_IO, "%s: cannot open: %s", path,
                              errno ? strerror(errno) : "out of memory");
    gzbuffer(gz, 1 << 17);
    lr->gz = gz;
    lr->buf = datm_alloc(LR_INIT_CAP, err);
    if (!lr->buf) {
        gzclose(gz);
        lr->gz = NULL;
        return err ? err->code : DATM_E_NOMEM;
    }
    lr->cap = LR_INIT_CAP;
    return DATM_OK;
}

void datm_linereader_close(datm_linereader *lr)
{
    if (lr->gz) gzclose((gzFile)lr->gz);
    datm_free(lr->buf);
    memset(lr, 0, sizeof *lr);
}

/* Appends more input after the unread part; sets eof at the end of the stream. */
static int fill(datm_linereader *lr, datm_error *err)
{
    gzFile gz = (gzFile)lr->gz;
    if (lr->pos > 0) {   /* keep the unread tail at the front */
        memmove(lr->buf, lr->buf + lr->pos, lr->len - lr->pos);
        lr->len -= lr->pos;
        lr->pos = 0;
    }
    if (lr->len + 1 >= lr->cap) {
        if (lr->cap >= LR_MAX_LINE)
            return datm_error_set(err, DATM_E_FORMAT, "%s:%lld: line longer than %d bytes",
                                  lr->path, (long long)lr->lineno + 1, LR_MAX_LINE);
        char *nb = datm_alloc(lr->cap * 2, err);
        if (!nb) return err ? err->code : DATM_E_NOMEM;
        memcpy(nb, lr->buf, lr->len);
        datm_free(lr->buf);
        lr->buf = nb;
        lr->cap *= 2;
    }
    if (lr->zerr) {   /* reported once the data before the damage has been consumed */
        return datm_error_set(err, DATM_E_FORMAT,
                              "%s:%lld: truncated or corrupt gzip data (zlib: %s)", lr->path,
                              (long long)lr->lineno + 1, lr->zmsg);
    }
    int got = gzread(gz, lr->buf + lr->len, (unsigned)(lr->cap - 1 - lr->len));
    if (lr->len == 0 && got > 0 && lr->lineno == 0) lr->gzip = !gzdirect(gz);
    int errnum = Z_OK;
    const char *zmsg = gzerror(gz, &errnum);
    if (errnum == Z_ERRNO)
        return datm_error_set(err, DATM_E_IO, "%s:%lld: read error: %s", lr->path,
                              (long long)lr->lineno + 1, strerror(errno));
    if (got < 0 || errnum != Z_OK) {
        /* zlib prefixes its message with the path; keep only the reason */
        size_t pl = strlen(lr->path);
        if (zmsg && !strncmp(zmsg, lr->path, pl) && !strncmp(zmsg + pl, ": ", 2)) zmsg += pl + 2;
        snprintf(lr->zmsg, sizeof lr->zmsg, "%s", zmsg ? zmsg : "unknown error");
        lr->zerr = 1;
        if (got <= 0) return fill(lr, err);
    }
    if (got == 0) lr->eof = 1;
    lr->len += (size_t)got;
    return DATM_OK;
}

int datm_linereader_next(datm_linereader *lr, char **line, size_t *len, datm_error *err)
{
    for (;;) {
        char *start = lr->buf + lr->pos;
        size_t avail = lr->len - lr->pos;
        char *nl = avail ? memchr(start, '\n', avail) : NULL;
        if (nl || (lr->eof && avail > 0)) {
            size_t n = nl ? (size_t)(nl - start) : avail;
            lr->pos += nl ? n + 1 : n;
            if (n > 0 && start[n - 1] == '\r') n--;
            start[n] = '\0';   /* the '\n' (or the spare byte kept by fill) */
            lr->lineno++;
            *line = start;
            *len = n;
            return 1;
        }
        if (lr->eof) return 0;
        int rc = fill(lr, err);
        if (rc) return -rc;
    }
}

void datm_quote_field(const char *s, size_t n, char *out)
{
    size_t m = n > 40 ? 40 : n;
    memcpy(out, s, m);
    if (n > 40) memcpy(out + m, "...", 4);
    else out[m] = '\0';
}

size_t datm_field_len(const char *p)
{
    size_t n = 0;
    while (p[n] && p[n] != ' ' && p[n] != '\t') n++;
    return n;
}

int datm_parse_i64(const char *p, const char **end, int64_t *out)
{
    int neg = 0;
    const char *q = p;
    if (*q == '-' || *q == '+') { neg = (*q == '-'); q++; }
    if (*q < '0' || *q > '9') return 0;
    uint64_t v = 0;
    int overflow = 0;
    while (*q >= '0' && *q <= '9') {
        unsigned d = (unsigned)(*q - '0');
        if (v > (UINT64_C(9223372036854775807) - d) / 10) overflow = 1;
        else v = v * 10 + d;
        q++;
    }
    if (*q && *q != ' ' && *q != '\t') return 0;   /* e.g. "1.5", "2x", "1e3" */
    if (end) *end = q;
    if (overflow) return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 1;
}
