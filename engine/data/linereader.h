/* engine/data/linereader.h (internal to engine/data): reads a text file line by line,
 * plain or gzip (zlib detects the gzip magic), counting lines so that every error can name
 * file:line, and turning a truncated or corrupt gzip stream into an error rather than a
 * silent early end of file. */
#ifndef DATM_DATA_LINEREADER_H
#define DATM_DATA_LINEREADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

typedef struct datm_linereader {
    void       *gz;        /* gzFile */
    const char *path;      /* for messages; not owned */
    char       *buf;       /* (cap) */
    size_t      cap, len, pos;
    int64_t     lineno;    /* number of the line last returned (1-based) */
    int         eof;       /* no more input from the file */
    int         gzip;      /* 1 when the file is gzip-compressed */
    int         zerr;      /* damaged gzip data met; reported when the good data runs out */
    char        zmsg[128];
} datm_linereader;

int  datm_linereader_open(datm_linereader *lr, const char *path, datm_error *err);
/* Returns 1 and the next line (NUL-terminated, without "\n" or "\r\n") in *line / *len,
 * 0 at end of file, or a negative status (err set, naming path:line) on a read error. */
int  datm_linereader_next(datm_linereader *lr, char **line, size_t *len, datm_error *err);
void datm_linereader_close(datm_linereader *lr);

/* Parsing helpers shared by the readers. */
/* Copies at most 40 characters of s[0..n) into out (size >= 48) for a message, with "..." */
void datm_quote_field(const char *s, size_t n, char *out);
/* Skips spaces and tabs. */
static inline const char *datm_skip_blank(const char *p)
{
    while (*p == ' ' || *p == '\t') p++;
    return p;
}
/* Parses a signed decimal integer field that ends at a blank or the end of the string.
 * Returns 1 on success (value in *out, *end after it), 0 when the field is not an integer,
 * -1 when it is an integer out of the int64 range. */
int datm_parse_i64(const char *p, const char **end, int64_t *out);
/* Length of the field at p (up to a blank or end of string). */
size_t datm_field_len(const char *p);

#endif
