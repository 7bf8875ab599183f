/* engine/core/fileio.c: files written whole (core.h): PATH.tmp.PID, flushed to the device,
 * renamed over PATH, the directory synced. Every failure names the path and the system error
 * and leaves PATH as it was. DATM_TEST_FAULT=enospc:write fails a commit as a full disk would. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

int datm_afile_open(datm_afile *a, const char *path, datm_error *err)
{
    memset(a, 0, sizeof *a);
    if (strlen(path) >= sizeof a->path)
        return datm_error_set(err, DATM_E_INVALID, "%s: path too long", path);
    snprintf(a->path, sizeof a->path, "%s", path);
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, "w");
    if (!a->f)
        return datm_error_set(err, DATM_E_IO, "%s: cannot create (%s)", a->tmp, strerror(errno));
    return DATM_OK;
}

void datm_afile_abort(datm_afile *a)
{
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp[0]) remove(a->tmp);
    a->tmp[0] = '\0';
}

int datm_fsync_path(const char *path, datm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return datm_error_set(err, DATM_E_IO, "%s: cannot open to sync (%s)", path, strerror(errno));
    int rc = fsync(fd) != 0 && errno != EINVAL && errno != EROFS ? errno : 0;
    close(fd);
    if (rc)
        return datm_error_set(err, DATM_E_IO, "%s: cannot flush to disk (%s)", path, strerror(rc));
    return DATM_OK;
}

int datm_fsync_parent(const char *path, datm_error *err)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    return datm_fsync_path(dir, err);
}

int datm_afile_commit(datm_afile *a, datm_error *err)
{
    if (!a->f) return datm_error_set(err, DATM_E_IO, "%s: not open", a->path);
    int e = 0;
    if (datm_test_fault("enospc:write")) e = ENOSPC;
    if (!e && (ferror(a->f) || fflush(a->f) != 0)) e = errno ? errno : EIO;
    if (!e && fsync(fileno(a->f)) != 0 && errno != EINVAL) e = errno;
    if (fclose(a->f) != 0 && !e) e = errno ? errno : EIO;
    a->f = NULL;
    if (e) {
        int rc = datm_error_set(err, DATM_E_IO, "%s: cannot write (%s)", a->tmp, strerror(e));
        datm_afile_abort(a);
        return rc;
    }
    if (rename(a->tmp, a->path) != 0) {
        int rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename %s into place (%s)", a->path,
                                a->tmp, strerror(errno));
        datm_afile_abort(a);
        return rc;
    }
    a->tmp[0] = '\0';
    datm_error e2 = {0};
    datm_fsync_parent(a->path, &e2);   /* best effort: the file itself is complete */
    return DATM_OK;
}

int datm_write_text_atomic(const char *path, const char *text, datm_error *err)
{
    datm_afile a;
    int rc = datm_afile_open(&a, path, err);
    if (rc) return rc;
    fputs(text, a.f);
    return datm_afile_commit(&a, err);
}

void datm_csv_field(FILE *f, const char *s)
{
    if (!s || !s[strcspn(s, ",\"\n\r")]) {
        fputs(s ? s : "", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void datm_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch == '\n') fputs("\\n", f);
        else if (ch == '\t') fputs("\\t", f);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}
