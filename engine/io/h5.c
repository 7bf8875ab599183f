/* engine/io/h5.c: the HDF5 wrapper declared in h5.h (files, nested groups, numeric datasets
 * of any rank, string arrays, attributes). HDF5's own error printing is switched off; every
 * failure is reported through datm_error naming the file, the group path and the dataset or
 * attribute, plus the innermost HDF5 error text. */
#include "io/h5.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <string.h>

struct datm_h5 {
    hid_t id;          /* file or group id */
    int   is_file;
    char  file[512];   /* file path */
    char  path[512];   /* group path inside the file, "/" for the root */
    char  where[1040]; /* "file:path" for messages */
    int   untimed;     /* objects created here carry no times (datm_h5_create_untimed) */
};

/* ---- error helpers ---- */

/* Once per process, before any other HDF5 call: errors are reported through datm_error, not
 * printed; and HDF5 does not register its exit handler. That handler flushes and closes the
 * files still open at exit, and after a failed close (a full disk) it crashed inside
 * H5F__close_cb; datm closes every file it opens, so nothing is left for it to do. */
static void h5_quiet(void)
{
    static int done;
    if (!done) {
        H5dont_atexit();
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        done = 1;
    }
}

void datm_h5_init(void) { h5_quiet(); }

/* What HDF5's error stack says: the outermost description (the API function's view), and
 * the system error of a failed read or write ("errno = 28, error message = 'No space left
 * on device'"), wherever it sits in the stack. */
typedef struct h5_reason { char top[200], sys[200], deep[200]; } h5_reason;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    h5_reason *r = data;
    if (!e->desc) return 0;
    if (n == 0 || !r->top[0]) snprintf(r->top, sizeof r->top, "%s", e->desc);
    else if (e->desc[0]) snprintf(r->deep, sizeof r->deep, "%.150s", e->desc);
    const char *m = strstr(e->desc, "error message = '");
    if (m && !r->sys[0]) {
        m += strlen("error message = '");
        size_t len = strcspn(m, "'");
        snprintf(r->sys, sizeof r->sys, "%.*s", (int)(len < 190 ? len : 190), m);
    }
    return 0;
}

/* Into buf: " (SYSTEM ERROR; hdf5: TOP)", " (hdf5: TOP)", or, when HDF5 left no record, the
 * errno of the last system call when there is one; never an empty reason. Clears the stack. */
static void h5_reason_text(char *buf, size_t size, int saved_errno)
{
    h5_reason r = {"", "", ""};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &r);
    H5Eclear2(H5E_DEFAULT);
    if (r.sys[0] && r.top[0]) snprintf(buf, size, " (%s; hdf5: %s)", r.sys, r.top);
    else if (r.top[0] && r.deep[0] && strcmp(r.deep, r.top) != 0)
        snprintf(buf, size, " (hdf5: %s: %s)", r.top, r.deep);
    else if (r.top[0]) snprintf(buf, size, " (hdf5: %s)", r.top);
    else if (saved_errno) snprintf(buf, size, " (%s)", strerror(saved_errno));
    else snprintf(buf, size, " (HDF5 gave no reason)");
}

static void join_path(char *dst, size_t size, const char *base, const char *name)
{
    if (!name || !name[0]) snprintf(dst, size, "%s", base);
    else if (name[0] == '/') snprintf(dst, size, "%s", name);
    else if (!strcmp(base, "/")) snprintf(dst, size, "/%s", name);
    else snprintf(dst, size, "%s/%s", base, name);
}

/* The reason of a failed call, taken at once: the next HDF5 call (closing the dataset) empties
 * the error stack. h5_fail uses it when set. */
static _Thread_local char pending[440];

static void h5_capture(void)
{
    int saved = errno;
    h5_reason_text(pending, sizeof pending, saved);
}

/* Sets err to "FILE:/PATH/NAME: WHAT (reason)" and clears the HDF5 stack. */
static int h5_fail(datm_error *err, int code, const datm_h5 *g, const char *name,
                   const char *what)
{
    int saved = errno;
    char reason[440], full[1024];
    if (pending[0]) {
        snprintf(reason, sizeof reason, "%s", pending);
        pending[0] = '\0';
        H5Eclear2(H5E_DEFAULT);
    } else {
        h5_reason_text(reason, sizeof reason, saved);
    }
    join_path(full, sizeof full, g ? g->path : "", name);
    datm_error_set(err, code, "%s:%s: %s%s", g ? g->file : "?", full, what, reason);
    return code;
}

static datm_h5 *h5_new(hid_t id, int is_file, const char *file, const char *path,
                       datm_error *err)
{
    datm_h5 *g = datm_alloc(sizeof *g, err);
    if (!g) return NULL;
    g->id = id;
    g->is_file = is_file;
    snprintf(g->file, sizeof g->file, "%s", file);
    snprintf(g->path, sizeof g->path, "%s", path);
    snprintf(g->where, sizeof g->where, "%s:%s", file, path);
    g->untimed = 0;
    return g;
}

const char *datm_h5_where(const datm_h5 *g) { return g ? g->where : "(null)"; }

/* ---- files and groups ---- */

static hid_t make_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    /* 1.8+ object headers: attributes may exceed 64 KiB (the resolved spec text). */
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
#if H5_VERSION_GE(1, 10, 7)
    H5Pset_file_locking(fapl, 1, 1);   /* lock, but do not fail where locks are unsupported */
#endif
    return fapl;
}

/* HDF5 takes its file lock without waiting: a writer that opens a file while a reader holds
 * it (another process reading a run's status: a pipeline waiting for the run, `datm pipeline
 * status`) fails with EAGAIN, and with it the run. Readers hold it for the moment of a read,
 * so a writer waits that out (20 ms polls, 30 s at most); other failures return at once.
 * create: H5Fcreate (truncating), else H5Fopen with flags. *saved gets errno. */
static hid_t open_waiting(const char *path, int create, unsigned flags, hid_t fcpl, hid_t fapl,
                          int *saved)
{
    for (int waited_ms = 0;; waited_ms += 20) {
        errno = 0;
        hid_t f = create ? H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl)
                         : H5Fopen(path, flags, fapl);
        *saved = errno;
        if (f >= 0 || (*saved != EAGAIN && *saved != EWOULDBLOCK) || waited_ms >= 30000)
            return f;
        H5Eclear2(H5E_DEFAULT);
        usleep(20 * 1000);
    }
}

/* A new file; untimed: its root group (and, through g->untimed, every object created in it
 * later) without the creation and modification times HDF5 stores by default. */
static int create_file(const char *path, int untimed, datm_h5 **out, datm_error *err)
{
    h5_quiet();
    *out = NULL;
    hid_t fapl = make_fapl();
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (untimed) H5Pset_obj_track_times(fcpl, 0);
    int saved = 0;
    hid_t f = open_waiting(path, 1, 0, fcpl, fapl, &saved);
    char reason[440] = "";
    if (f < 0) h5_reason_text(reason, sizeof reason, saved);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    if (f < 0) {
        return datm_error_set(err, DATM_E_IO, "%s: cannot create HDF5 file%s", path, reason);
    }
    *out = h5_new(f, 1, path, "/", err);
    if (!*out) { H5Fclose(f); return err ? err->code : DATM_E_NOMEM; }
    (*out)->untimed = untimed;
    return DATM_OK;
}

int datm_h5_create(const char *path, datm_h5 **out, datm_error *err)
{
    return create_file(path, 0, out, err);
}

int datm_h5_create_untimed(const char *path, datm_h5 **out, datm_error *err)
{
    return create_file(path, 1, out, err);
}

#if defined(__SANITIZE_ADDRESS__)
#define DATM_H5_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DATM_H5_SANITIZED 1
#endif
#endif
#ifndef DATM_H5_SANITIZED
#define DATM_H5_SANITIZED 0
#endif
#if DATM_H5_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

/* ---- reading a file that may be damaged ----
 * HDF5 1.10 trusts parts of a file that carry no checksum (the heaps of groups with many
 * links, the global heap of strings): a damaged file can crash the library itself
 * (tests/fuzz found an invalid free in H5G__dense_iterate). A file opened read-only is
 * therefore first walked in a child process: every group, dataset, attribute and string read
 * (numeric data of up to 64 MB read too, larger ones one element). A crash or a hang there
 * becomes a message here; the parent never touches such a file. */
enum { PROBE_OK = 0, PROBE_HDF5_ERROR = 10, PROBE_DEPTH = 64 };
#define PROBE_MAX_BYTES ((hsize_t)64 << 20)

static void probe_read(hid_t obj, int is_attr)
{
    hid_t t = is_attr ? H5Aget_type(obj) : H5Dget_type(obj);
    hid_t sp = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
    if (t < 0 || sp < 0) goto done;
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    H5T_class_t cls = H5Tget_class(t);
    if (np <= 0) goto done;
    hid_t mt = -1;
    if (cls == H5T_STRING && H5Tis_variable_str(t) > 0) {
        mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
    } else {
        mt = H5Tget_native_type(t, H5T_DIR_ASCEND);
    }
    if (mt < 0) goto done;
    size_t esz = H5Tget_size(mt);
    hid_t fsel = H5S_ALL, msel = H5S_ALL;
    hsize_t n = (hsize_t)np;
    if (!is_attr && n * esz > PROBE_MAX_BYTES) {   /* one element of a large dataset */
        int rank = H5Sget_simple_extent_ndims(sp);
        hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
        for (int i = 0; i < rank && i < H5S_MAX_RANK; i++) count[i] = 1;
        fsel = H5Scopy(sp);
        H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL);
        hsize_t one = 1;
        msel = H5Screate_simple(1, &one, NULL);
        n = 1;
    }
    void *buf = calloc((size_t)n, esz ? esz : 1);
    if (buf) {
        herr_t r = is_attr ? H5Aread(obj, mt, buf) : H5Dread(obj, mt, msel, fsel, H5P_DEFAULT, buf);
        if (r >= 0 && H5Tdetect_class(mt, H5T_VLEN) > 0) {
            hid_t s = msel == H5S_ALL ? H5Scopy(sp) : H5Scopy(msel);
            H5Dvlen_reclaim(mt, s, H5P_DEFAULT, buf);
            H5Sclose(s);
        } else if (r >= 0 && cls == H5T_STRING && H5Tis_variable_str(mt) > 0) {
            char **strs = buf;
            for (hsize_t i = 0; i < n; i++) H5free_memory(strs[i]);
        }
        free(buf);
    }
    if (fsel != H5S_ALL) H5Sclose(fsel);
    if (msel != H5S_ALL) H5Sclose(msel);
    H5Tclose(mt);
done:
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
}

static herr_t probe_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info; (void)data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a >= 0) { probe_read(a, 1); H5Aclose(a); }
    return 0;
}

static herr_t probe_link_cb(hid_t loc, const char *name, const H5L_info_t *info, void *data);

static void probe_object(hid_t obj, int depth)
{
    if (depth > PROBE_DEPTH) return;
    hsize_t idx = 0;
    H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, probe_attr_cb, NULL);
    H5I_type_t type = H5Iget_type(obj);
    if (type == H5I_DATASET) {
        probe_read(obj, 0);
    } else if (type == H5I_GROUP || type == H5I_FILE) {
        hsize_t li = 0;
        H5Literate(obj, H5_INDEX_NAME, H5_ITER_INC, &li, probe_link_cb, &depth);
    }
}

static herr_t probe_link_cb(hid_t loc, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    int depth = *(int *)data;
    hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
    if (o >= 0) {
        probe_object(o, depth + 1);
        H5Oclose(o);
    }
    return 0;
}

/* Walks path in a child process; DATM_OK, or an error when the walk crashed or hung. */
static int probe_file(const char *path, datm_error *err)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return DATM_OK;   /* cannot probe: read it directly, as before */
    if (pid == 0) {
        /* a crash here is the finding: die quietly, not through the handlers of a sanitizer
         * or fuzzer inherited from the parent (they would report it as the parent's) */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGABRT, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
#if DATM_H5_SANITIZED
        __sanitizer_set_death_callback(NULL);
#endif
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); }
        hid_t fapl = make_fapl();
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        if (f < 0) _exit(PROBE_HDF5_ERROR);
        probe_object(f, 0);
        _exit(PROBE_OK);   /* no close: a file the parent holds open shares its state */
    }
    /* a walk of metadata and at most 64 MB per dataset: seconds; 5 s + 1 s per MB of file */
    struct stat sb;
    const double limit = 5.0 + (stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0);
    int st = 0;
    const double t0 = datm_time_now();
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return DATM_OK;
        if (datm_time_now() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return datm_error_set(err, DATM_E_FORMAT, "%s: damaged HDF5 file: reading it did "
                                  "not finish in %.0f s (nothing was read from it)", path, limit);
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (WIFEXITED(st) && (WEXITSTATUS(st) == PROBE_OK || WEXITSTATUS(st) == PROBE_HDF5_ERROR))
        return DATM_OK;
    if (WIFSIGNALED(st))
        return datm_error_set(err, DATM_E_FORMAT, "%s: damaged HDF5 file: reading it crashed "
                              "the HDF5 library (signal %d; nothing was read from it)", path,
                              WTERMSIG(st));
    return datm_error_set(err, DATM_E_FORMAT, "%s: damaged HDF5 file: reading it crashed the "
                          "HDF5 library (exit %d; nothing was read from it)", path,
                          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int datm_h5_open(const char *path, int writable, datm_h5 **out, datm_error *err)
{
    h5_quiet();
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return datm_error_set(err, DATM_E_IO, "%s: cannot open (%s)", path, strerror(errno));
    fclose(fp);
    if (H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return datm_error_set(err, DATM_E_FORMAT, "%s: not an HDF5 file", path);
    }
    if (!writable) {
        int prc = probe_file(path, err);
        if (prc) return prc;
    }
    hid_t fapl = make_fapl();
    int saved = 0;
    errno = 0;
    hid_t f = writable ? open_waiting(path, 0, H5F_ACC_RDWR, H5P_DEFAULT, fapl, &saved)
                       : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (!writable) saved = errno;
    char reason[440] = "";
    if (f < 0) h5_reason_text(reason, sizeof reason, saved);
    H5Pclose(fapl);
    if (f < 0) {
        return datm_error_set(err, DATM_E_IO, "%s: cannot open HDF5 file%s%s", path,
                              writable ? " for writing" : "", reason);
    }
    *out = h5_new(f, 1, path, "/", err);
    if (!*out) { H5Fclose(f); return err ? err->code : DATM_E_NOMEM; }
    return DATM_OK;
}

/* 1 when every component of the relative path `name` exists under loc. */
static int link_exists(hid_t loc, const char *name)
{
    if (!name || !name[0]) return 0;
    if (!strcmp(name, "/") || !strcmp(name, ".")) return 1;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", name);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
    /* check each prefix "a", "a/b", ... so that a missing parent is not an HDF5 error */
    for (char *p = buf + (buf[0] == '/'); ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            htri_t e = H5Lexists(loc, buf, H5P_DEFAULT);
            *p = c;
            if (e <= 0) { H5Eclear2(H5E_DEFAULT); return 0; }
            if (c == '\0') break;
        }
    }
    return 1;
}

int datm_h5_exists(datm_h5 *g, const char *name)
{
    h5_quiet();
    return g && link_exists(g->id, name);
}


int datm_h5_group(datm_h5 *g, const char *name, int create, datm_h5 **out, datm_error *err)
{
    h5_quiet();
    *out = NULL;
    hid_t id;
    if (link_exists(g->id, name)) {
        id = H5Gopen2(g->id, name, H5P_DEFAULT);
        if (id < 0) return h5_fail(err, DATM_E_FORMAT, g, name, "exists but is not a group");
    } else {
        if (!create) return h5_fail(err, DATM_E_IO, g, name, "no such group");
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), gcpl = H5Pcreate(H5P_GROUP_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        if (g->untimed) H5Pset_obj_track_times(gcpl, 0);
        id = H5Gcreate2(g->id, name, lcpl, gcpl, H5P_DEFAULT);
        if (id < 0) h5_capture();
        H5Pclose(lcpl);
        H5Pclose(gcpl);
        if (id < 0) return h5_fail(err, DATM_E_IO, g, name, "cannot create group");
    }
    char path[512];
    join_path(path, sizeof path, g->path, name);
    *out = h5_new(id, 0, g->file, path, err);
    if (!*out) { H5Gclose(id); return err ? err->code : DATM_E_NOMEM; }
    (*out)->untimed = g->untimed;
    return DATM_OK;
}

/* Files HDF5 could not close (their flush failed): left to the process's end. */
static long abandoned;

int datm_h5_close_checked(datm_h5 **g, datm_error *err)
{
    if (!g || !*g) return DATM_OK;
    int rc = DATM_OK;
    datm_h5 *h = *g;
    if (h->is_file) {
        errno = 0;
        if (H5Fflush(h->id, H5F_SCOPE_LOCAL) < 0)
            rc = h5_fail(err, DATM_E_IO, h, NULL, "cannot write the file's contents");
        errno = 0;
        /* closes even after a failed flush; what it could not write is lost with the file,
         * which the caller then does not mark complete */
        if (H5Fclose(h->id) < 0) {
            if (!rc) rc = h5_fail(err, DATM_E_IO, h, NULL, "cannot close the file");
            /* HDF5 1.10 keeps a file whose last flush failed open, and closing it again
             * crashes it: it is abandoned (no exit handler will touch it: h5_quiet) */
            if (H5Iis_valid(h->id) > 0) abandoned++;
            H5Eclear2(H5E_DEFAULT);
        }
    } else if (H5Gclose(h->id) < 0) {
        rc = h5_fail(err, DATM_E_IO, h, NULL, "cannot close the group");
    }
    H5Eclear2(H5E_DEFAULT);
    datm_free(h);
    *g = NULL;
    return rc;
}

void datm_h5_close(datm_h5 **g)
{
    datm_error e = {0};
    datm_h5_close_checked(g, &e);
}

long datm_h5_open_objects(void)
{
    h5_quiet();
    ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    return n < 0 ? -1 : (long)n - abandoned;
}

int datm_h5_flush(datm_h5 *g, datm_error *err)
{
    if (H5Fflush(g->id, H5F_SCOPE_GLOBAL) < 0)
        return h5_fail(err, DATM_E_IO, g, NULL, "flush failed");
    return DATM_OK;
}

int datm_h5_delete(datm_h5 *g, const char *name, datm_error *err)
{
    h5_quiet();
    if (!link_exists(g->id, name)) return DATM_OK;
    if (H5Ldelete(g->id, name, H5P_DEFAULT) < 0)
        return h5_fail(err, DATM_E_IO, g, name, "cannot delete");
    return DATM_OK;
}

int datm_h5_is_group(datm_h5 *g, const char *name)
{
    h5_quiet();
    if (!link_exists(g->id, name)) return -1;
    H5O_info_t info;
    if (H5Oget_info_by_name(g->id, name, &info, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    return info.type == H5O_TYPE_GROUP;
}

typedef struct { char **names; int64_t n, cap; int fail; } list_acc;

static herr_t list_cb(hid_t loc, const char *name, const H5L_info_t *info, void *data)
{
    (void)loc; (void)info;
    list_acc *a = data;
    if (a->n == a->cap) {
        int64_t cap = a->cap ? 2 * a->cap : 16;
        char **nn = realloc(a->names, (size_t)cap * sizeof *nn);
        if (!nn) { a->fail = 1; return -1; }
        a->names = nn;
        a->cap = cap;
    }
    a->names[a->n] = strdup(name);
    if (!a->names[a->n]) { a->fail = 1; return -1; }
    a->n++;
    return 0;
}

int datm_h5_list(datm_h5 *g, char ***names, int64_t *n, datm_error *err)
{
    h5_quiet();
    list_acc a = {0};
    *names = NULL;
    *n = 0;
    hsize_t idx = 0;
    herr_t r = H5Literate(g->id, H5_INDEX_NAME, H5_ITER_INC, &idx, list_cb, &a);
    if (r < 0 || a.fail) {
        datm_h5_strings_free(a.names, a.n);
        return h5_fail(err, a.fail ? DATM_E_NOMEM : DATM_E_IO, g, NULL, "cannot list members");
    }
    *names = a.names;
    *n = a.n;
    return DATM_OK;
}

void datm_h5_strings_free(char **s, int64_t n)
{
    if (!s) return;
    for (int64_t i = 0; i < n; i++) free(s[i]);
    free(s);
}

/* ---- datasets ---- */

static int check_rank(datm_h5 *g, const char *name, int rank, const int64_t *dims,
                      hsize_t *hd, datm_error *err)
{
    if (rank < 0 || rank > DATM_H5_MAX_RANK || (rank > 0 && !dims))
        return h5_fail(err, DATM_E_INVALID, g, name, "invalid rank or dims");
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return h5_fail(err, DATM_E_INVALID, g, name, "negative dimension");
        hd[i] = (hsize_t)dims[i];
    }
    return DATM_OK;
}

/* Opens `name` for writing with the given shape and file type: reuses the dataset when its
 * type class, size and shape agree, otherwise unlinks it and creates a new one. */
static hid_t open_for_write(datm_h5 *g, const char *name, hid_t ftype, int rank,
                            const hsize_t *hd, datm_error *err)
{
    if (link_exists(g->id, name)) {
        hid_t d = H5Dopen2(g->id, name, H5P_DEFAULT);
        if (d >= 0) {
            hid_t t = H5Dget_type(d), s = H5Dget_space(d);
            int same = H5Tequal(t, ftype) > 0 && H5Sget_simple_extent_ndims(s) == rank;
            if (same) {
                hsize_t cur[DATM_H5_MAX_RANK];
                H5Sget_simple_extent_dims(s, cur, NULL);
                for (int i = 0; i < rank; i++) same = same && cur[i] == hd[i];
            }
            H5Tclose(t);
            H5Sclose(s);
            if (same) return d;
            H5Dclose(d);
        }
        H5Eclear2(H5E_DEFAULT);
        if (H5Ldelete(g->id, name, H5P_DEFAULT) < 0) {
            h5_fail(err, DATM_E_IO, g, name, "cannot replace existing object");
            return -1;
        }
    }
    hid_t space = rank ? H5Screate_simple(rank, hd, NULL) : H5Screate(H5S_SCALAR);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    if (g->untimed) H5Pset_obj_track_times(dcpl, 0);
    hid_t d = H5Dcreate2(g->id, name, ftype, space, lcpl, dcpl, H5P_DEFAULT);
    if (d < 0) h5_capture();
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (d < 0) h5_fail(err, DATM_E_IO, g, name, "cannot create dataset");
    return d;
}

/* DATM_TEST_FAULT=enospc:h5@N: the N-th dataset or attribute write fails as on a full disk. */
static int injected_enospc(datm_h5 *g, const char *name, datm_error *err)
{
    if (!datm_test_fault("enospc:h5")) return DATM_OK;
    H5Eclear2(H5E_DEFAULT);
    errno = ENOSPC;
    return h5_fail(err, DATM_E_IO, g, name, "write failed");
}

static int write_numeric(datm_h5 *g, const char *name, const void *x, hid_t mtype,
                         hid_t ftype, int rank, const int64_t *dims, datm_error *err)
{
    h5_quiet();
    if (injected_enospc(g, name, err)) return DATM_E_IO;
    hsize_t hd[DATM_H5_MAX_RANK];
    if (check_rank(g, name, rank, dims, hd, err)) return err ? err->code : DATM_E_INVALID;
    hid_t d = open_for_write(g, name, ftype, rank, hd, err);
    if (d < 0) return err ? err->code : DATM_E_IO;
    int64_t count = 1;
    for (int i = 0; i < rank; i++) count *= dims[i];
    herr_t r = 0;
    if (count > 0) {
        if (!x) { H5Dclose(d); return h5_fail(err, DATM_E_INVALID, g, name, "NULL data"); }
        r = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
        if (r < 0) h5_capture();
    }
    H5Dclose(d);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "write failed");
    return DATM_OK;
}

int datm_h5_write_f32(datm_h5 *g, const char *name, const float *x, int rank,
                      const int64_t *dims, datm_error *err)
{
    return write_numeric(g, name, x, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, rank, dims, err);
}

int datm_h5_write_f64(datm_h5 *g, const char *name, const double *x, int rank,
                      const int64_t *dims, datm_error *err)
{
    return write_numeric(g, name, x, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, rank, dims, err);
}

int datm_h5_write_i64(datm_h5 *g, const char *name, const int64_t *x, int rank,
                      const int64_t *dims, datm_error *err)
{
    return write_numeric(g, name, x, H5T_NATIVE_INT64, H5T_STD_I64LE, rank, dims, err);
}

int datm_h5_write_i32(datm_h5 *g, const char *name, const int32_t *x, int rank,
                      const int64_t *dims, datm_error *err)
{
    return write_numeric(g, name, x, H5T_NATIVE_INT32, H5T_STD_I32LE, rank, dims, err);
}

int datm_h5_write_scalar(datm_h5 *g, const char *name, double v, datm_error *err)
{
    return write_numeric(g, name, &v, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, NULL, err);
}

int datm_h5_write_strings(datm_h5 *g, const char *name, const char *const *s, int64_t n,
                          datm_error *err)
{
    h5_quiet();
    if (n < 0 || (n > 0 && !s)) return h5_fail(err, DATM_E_INVALID, g, name, "invalid strings");
    if (injected_enospc(g, name, err)) return DATM_E_IO;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hsize_t hd[1] = {(hsize_t)n};
    hid_t d = open_for_write(g, name, t, 1, hd, err);
    if (d < 0) { H5Tclose(t); return err ? err->code : DATM_E_IO; }
    herr_t r = 0;
    if (n > 0) {
        /* NULL entries are written as empty strings */
        const char **tmp = malloc((size_t)n * sizeof *tmp);
        if (!tmp) { H5Dclose(d); H5Tclose(t); return h5_fail(err, DATM_E_NOMEM, g, name, "out of memory"); }
        for (int64_t i = 0; i < n; i++) tmp[i] = s[i] ? s[i] : "";
        r = H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp);
        if (r < 0) h5_capture();
        free(tmp);
    }
    H5Dclose(d);
    H5Tclose(t);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "write failed");
    return DATM_OK;
}

/* Opens a dataset and checks that its shape equals (rank, dims); returns the dataset id. */
static hid_t open_checked(datm_h5 *g, const char *name, int rank, const int64_t *dims,
                          datm_error *err)
{
    if (!link_exists(g->id, name)) {
        h5_fail(err, DATM_E_IO, g, name, "no such dataset");
        return -1;
    }
    hid_t d = H5Dopen2(g->id, name, H5P_DEFAULT);
    if (d < 0) { h5_fail(err, DATM_E_FORMAT, g, name, "not a dataset"); return -1; }
    hid_t s = H5Dget_space(d);
    int r = H5Sget_simple_extent_ndims(s);
    hsize_t cur[DATM_H5_MAX_RANK] = {0};
    if (r > 0 && r <= DATM_H5_MAX_RANK) H5Sget_simple_extent_dims(s, cur, NULL);
    H5Sclose(s);
    int same = r == rank;
    for (int i = 0; same && i < rank; i++) same = (int64_t)cur[i] == dims[i];
    if (!same) {
        char want[160] = "(", got[160] = "(";
        for (int i = 0; i < rank; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? ", " : "",
                     (long long)dims[i]);
        for (int i = 0; i < r && i < DATM_H5_MAX_RANK; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "",
                     (long long)cur[i]);
        strcat(want, ")");
        strcat(got, ")");
        char what[400];
        snprintf(what, sizeof what, "shape %s, expected %s", got, want);
        H5Dclose(d);
        h5_fail(err, DATM_E_FORMAT, g, name, what);
        return -1;
    }
    return d;
}

static int read_numeric(datm_h5 *g, const char *name, void *x, hid_t mtype, int rank,
                        const int64_t *dims, datm_error *err)
{
    h5_quiet();
    hsize_t hd[DATM_H5_MAX_RANK];
    if (check_rank(g, name, rank, dims, hd, err)) return err ? err->code : DATM_E_INVALID;
    hid_t d = open_checked(g, name, rank, dims, err);
    if (d < 0) return err ? err->code : DATM_E_IO;
    hid_t t = H5Dget_type(d);
    H5T_class_t cls = H5Tget_class(t);
    H5Tclose(t);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        H5Dclose(d);
        return h5_fail(err, DATM_E_FORMAT, g, name, "is not numeric");
    }
    int64_t count = 1;
    for (int i = 0; i < rank; i++) count *= dims[i];
    herr_t r = count > 0 ? H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) : 0;
    if (r < 0) h5_capture();
    H5Dclose(d);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "read failed");
    return DATM_OK;
}

int datm_h5_read_f32(datm_h5 *g, const char *name, float *x, int rank, const int64_t *dims,
                     datm_error *err)
{
    return read_numeric(g, name, x, H5T_NATIVE_FLOAT, rank, dims, err);
}

int datm_h5_read_f64(datm_h5 *g, const char *name, double *x, int rank, const int64_t *dims,
                     datm_error *err)
{
    return read_numeric(g, name, x, H5T_NATIVE_DOUBLE, rank, dims, err);
}

int datm_h5_read_i64(datm_h5 *g, const char *name, int64_t *x, int rank, const int64_t *dims,
                     datm_error *err)
{
    return read_numeric(g, name, x, H5T_NATIVE_INT64, rank, dims, err);
}

int datm_h5_read_i32(datm_h5 *g, const char *name, int32_t *x, int rank, const int64_t *dims,
                     datm_error *err)
{
    return read_numeric(g, name, x, H5T_NATIVE_INT32, rank, dims, err);
}

int datm_h5_shape(datm_h5 *g, const char *name, int64_t *dims)
{
    h5_quiet();
    if (!link_exists(g->id, name)) return -1;
    hid_t d = H5Dopen2(g->id, name, H5P_DEFAULT);
    if (d < 0) { H5Eclear2(H5E_DEFAULT); return -1; }
    hid_t s = H5Dget_space(d);
    int r = H5Sget_simple_extent_ndims(s);
    hsize_t cur[DATM_H5_MAX_RANK];
    if (r > DATM_H5_MAX_RANK || r < 0) r = -1;
    else if (r > 0) {
        H5Sget_simple_extent_dims(s, cur, NULL);
        if (dims)
            for (int i = 0; i < r; i++) dims[i] = (int64_t)cur[i];
    }
    H5Sclose(s);
    H5Dclose(d);
    return r;
}

int datm_h5_read_scalar(datm_h5 *g, const char *name, double *v, datm_error *err)
{
    int64_t dims[DATM_H5_MAX_RANK];
    int r = datm_h5_shape(g, name, dims);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "no such dataset");
    int64_t count = 1;
    for (int i = 0; i < r; i++) count *= dims[i];
    if (count != 1) return h5_fail(err, DATM_E_FORMAT, g, name, "is not a scalar");
    return read_numeric(g, name, v, H5T_NATIVE_DOUBLE, r, dims, err);
}

int datm_h5_read_f64_alloc(datm_h5 *g, const char *name, double **out, int *rank,
                           int64_t *dims, datm_error *err)
{
    *out = NULL;
    int r = datm_h5_shape(g, name, dims);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "no such dataset");
    int64_t count = 1;
    for (int i = 0; i < r; i++) count *= dims[i];
    double *x = datm_alloc_array((size_t)(count ? count : 1), sizeof *x, err);
    if (!x) return err ? err->code : DATM_E_NOMEM;
    int rc = read_numeric(g, name, x, H5T_NATIVE_DOUBLE, r, dims, err);
    if (rc) { datm_free(x); return rc; }
    *out = x;
    *rank = r;
    return DATM_OK;
}

int datm_h5_read_strings(datm_h5 *g, const char *name, char ***out, int64_t *n,
                         datm_error *err)
{
    h5_quiet();
    *out = NULL;
    *n = 0;
    int64_t dims[DATM_H5_MAX_RANK];
    int r = datm_h5_shape(g, name, dims);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "no such dataset");
    if (r != 1) return h5_fail(err, DATM_E_FORMAT, g, name, "is not a 1-D string array");
    hid_t d = H5Dopen2(g->id, name, H5P_DEFAULT);
    hid_t ft = H5Dget_type(d);
    if (H5Tget_class(ft) != H5T_STRING) {
        H5Tclose(ft);
        H5Dclose(d);
        return h5_fail(err, DATM_E_FORMAT, g, name, "is not a string dataset");
    }
    int64_t cnt = dims[0];
    char **s = calloc((size_t)(cnt ? cnt : 1), sizeof *s);
    int rc = DATM_OK;
    if (!s) rc = h5_fail(err, DATM_E_NOMEM, g, name, "out of memory");
    else if (cnt > 0 && H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ft));
        char **raw = calloc((size_t)cnt, sizeof *raw);
        if (!raw || H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
            rc = h5_fail(err, DATM_E_IO, g, name, "read failed");
        } else {
            for (int64_t i = 0; i < cnt && !rc; i++) {
                s[i] = strdup(raw[i] ? raw[i] : "");
                if (!s[i]) rc = h5_fail(err, DATM_E_NOMEM, g, name, "out of memory");
            }
            hid_t sp = H5Dget_space(d);
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, raw);
            H5Sclose(sp);
        }
        free(raw);
        H5Tclose(mt);
    } else if (cnt > 0) {
        size_t w = H5Tget_size(ft);
        hid_t mt = H5Tcopy(ft);
        char *raw = calloc((size_t)cnt, w);
        if (!raw || H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
            rc = h5_fail(err, DATM_E_IO, g, name, "read failed");
        } else {
            for (int64_t i = 0; i < cnt && !rc; i++) {
                s[i] = strndup(raw + (size_t)i * w, w);
                if (!s[i]) rc = h5_fail(err, DATM_E_NOMEM, g, name, "out of memory");
            }
        }
        free(raw);
        H5Tclose(mt);
    }
    H5Tclose(ft);
    H5Dclose(d);
    if (rc) { datm_h5_strings_free(s, cnt); return rc; }
    *out = s;
    *n = cnt;
    return DATM_OK;
}

/* ---- attributes ---- */

int datm_h5_attr_exists(datm_h5 *g, const char *name)
{
    h5_quiet();
    htri_t e = H5Aexists(g->id, name);
    if (e < 0) H5Eclear2(H5E_DEFAULT);
    return e > 0;
}

static int attr_write(datm_h5 *g, const char *name, hid_t ftype, hid_t mtype, const void *v,
                      datm_error *err)
{
    h5_quiet();
    if (injected_enospc(g, name, err)) return DATM_E_IO;
    if (H5Aexists(g->id, name) > 0 && H5Adelete(g->id, name) < 0)
        return h5_fail(err, DATM_E_IO, g, name, "cannot replace attribute");
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g->id, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) h5_capture();
    H5Sclose(s);
    if (a < 0) return h5_fail(err, DATM_E_IO, g, name, "cannot create attribute");
    herr_t r = H5Awrite(a, mtype, v);
    if (r < 0) h5_capture();
    H5Aclose(a);
    if (r < 0) return h5_fail(err, DATM_E_IO, g, name, "cannot write attribute");
    return DATM_OK;
}

int datm_h5_attr_str(datm_h5 *g, const char *name, const char *value, datm_error *err)
{
    /* fixed-length, null-terminated UTF-8: readable by h5dump and h5py as str/bytes */
    if (!value) value = "";
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(value) + 1);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int rc = attr_write(g, name, t, t, value, err);
    H5Tclose(t);
    return rc;
}

int datm_h5_attr_f64(datm_h5 *g, const char *name, double value, datm_error *err)
{
    return attr_write(g, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, err);
}

int datm_h5_attr_i64(datm_h5 *g, const char *name, int64_t value, datm_error *err)
{
    return attr_write(g, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, err);
}

static hid_t attr_open(datm_h5 *g, const char *name, datm_error *err)
{
    h5_quiet();
    if (H5Aexists(g->id, name) <= 0) {
        h5_fail(err, DATM_E_IO, g, name, "no such attribute");
        return -1;
    }
    hid_t a = H5Aopen(g->id, name, H5P_DEFAULT);
    if (a < 0) h5_fail(err, DATM_E_IO, g, name, "cannot open attribute");
    return a;
}

int datm_h5_attr_get_str_alloc(datm_h5 *g, const char *name, char **out, datm_error *err)
{
    *out = NULL;
    hid_t a = attr_open(g, name, err);
    if (a < 0) return err ? err->code : DATM_E_IO;
    hid_t ft = H5Aget_type(a);
    int rc = DATM_OK;
    if (H5Tget_class(ft) != H5T_STRING) {
        rc = h5_fail(err, DATM_E_FORMAT, g, name, "attribute is not a string");
    } else if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ft));
        char *raw = NULL;
        if (H5Aread(a, mt, &raw) < 0) rc = h5_fail(err, DATM_E_IO, g, name, "cannot read attribute");
        else {
            *out = datm_strdup(raw ? raw : "", err);
            if (!*out) rc = DATM_E_NOMEM;
            H5free_memory(raw);
        }
        H5Tclose(mt);
    } else {
        size_t w = H5Tget_size(ft);
        hid_t mt = H5Tcopy(ft);   /* same size and character set: no conversion */
        char *buf = datm_alloc(w + 1, err);
        if (!buf) rc = DATM_E_NOMEM;
        else if (H5Aread(a, mt, buf) < 0) {
            datm_free(buf);
            rc = h5_fail(err, DATM_E_IO, g, name, "cannot read attribute");
        } else {
            buf[w] = '\0';
            *out = buf;
        }
        H5Tclose(mt);
    }
    H5Tclose(ft);
    H5Aclose(a);
    return rc;
}

int datm_h5_attr_get_str(datm_h5 *g, const char *name, char *buf, size_t size, datm_error *err)
{
    char *s = NULL;
    int rc = datm_h5_attr_get_str_alloc(g, name, &s, err);
    if (rc) return rc;
    if (size) snprintf(buf, size, "%s", s);
    datm_free(s);
    return DATM_OK;
}

static int attr_get_num(datm_h5 *g, const char *name, hid_t mtype, void *v, datm_error *err)
{
    hid_t a = attr_open(g, name, err);
    if (a < 0) return err ? err->code : DATM_E_IO;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    H5T_class_t cls = H5Tget_class(ft);
    hssize_t npts = H5Sget_simple_extent_npoints(sp);
    H5Tclose(ft);
    H5Sclose(sp);
    int rc = DATM_OK;
    if (npts != 1)
        rc = h5_fail(err, DATM_E_FORMAT, g, name, "attribute is not a scalar");
    else if (cls != H5T_INTEGER && cls != H5T_FLOAT)
        rc = h5_fail(err, DATM_E_FORMAT, g, name, "attribute is not numeric");
    else if (H5Aread(a, mtype, v) < 0)
        rc = h5_fail(err, DATM_E_IO, g, name, "cannot read attribute");
    H5Aclose(a);
    return rc;
}

int datm_h5_attr_get_f64(datm_h5 *g, const char *name, double *v, datm_error *err)
{
    return attr_get_num(g, name, H5T_NATIVE_DOUBLE, v, err);
}

int datm_h5_attr_get_i64(datm_h5 *g, const char *name, int64_t *v, datm_error *err)
{
    return attr_get_num(g, name, H5T_NATIVE_INT64, v, err);
}

/* ---- reading everything back ---- */

static int read_all(datm_h5 *g, const char *prefix, datm_h5_visit_fn fn, void *user, int depth,
                    datm_error *err)
{
    if (depth > 32) return h5_fail(err, DATM_E_FORMAT, g, NULL, "groups nested too deep");
    char **names = NULL;
    int64_t n = 0;
    int rc = datm_h5_list(g, &names, &n, err);
    for (int64_t i = 0; !rc && i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", prefix, names[i]);
        int kind = datm_h5_is_group(g, names[i]);
        if (kind == 1) {
            datm_h5 *sub = NULL;
            rc = datm_h5_group(g, names[i], 0, &sub, err);
            if (!rc) rc = read_all(sub, path, fn, user, depth + 1, err);
            datm_h5_close(&sub);
            continue;
        }
        if (kind < 0) { rc = h5_fail(err, DATM_E_FORMAT, g, names[i], "unreadable object"); break; }
        int64_t dims[DATM_H5_MAX_RANK] = {0};
        int rank = datm_h5_shape(g, names[i], dims);
        if (rank < 0) { rc = h5_fail(err, DATM_E_FORMAT, g, names[i], "unreadable dataset"); break; }
        hid_t d = H5Dopen2(g->id, names[i], H5P_DEFAULT);
        hid_t t = d >= 0 ? H5Dget_type(d) : -1;
        H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
        if (t >= 0) H5Tclose(t);
        if (d >= 0) H5Dclose(d);
        H5Eclear2(H5E_DEFAULT);
        if (cls == H5T_STRING) {
            char **s = NULL;
            int64_t ns = 0;
            rc = datm_h5_read_strings(g, names[i], &s, &ns, err);
            for (int64_t k = 0; !rc && fn && k < ns; k++)
                fn(path, 1, &ns, s[k], strlen(s[k]) + 1, user);
            datm_h5_strings_free(s, ns);
        } else if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
            double *x = NULL;
            int r = 0;
            rc = datm_h5_read_f64_alloc(g, names[i], &x, &r, dims, err);
            int64_t count = 1;
            for (int k = 0; k < r; k++) count *= dims[k];
            if (!rc && fn) fn(path, r, dims, x, (size_t)count * sizeof *x, user);
            datm_free(x);
        } else {
            rc = h5_fail(err, DATM_E_FORMAT, g, names[i], "dataset of an unexpected type");
        }
    }
    datm_h5_strings_free(names, n);
    return rc;
}

int datm_h5_read_all(datm_h5 *g, datm_h5_visit_fn fn, void *user, datm_error *err)
{
    h5_quiet();
    return read_all(g, "", fn, user, 0, err);
}

int datm_h5_verify_file(const char *path, datm_h5_visit_fn fn, void *user, datm_error *err)
{
    datm_h5 *f = NULL;
    int rc = datm_h5_open(path, 0, &f, err);
    if (!rc) rc = datm_h5_read_all(f, fn, user, err);
    datm_h5_close(&f);
    if (rc) datm_error_prefix(err, "reading back: ");
    return rc;
}

/* ---- copies between files (run records) ---- */

int datm_h5_copy(datm_h5 *src, const char *name, datm_h5 *dst, const char *dst_name,
                 datm_error *err)
{
    h5_quiet();
    herr_t r = H5Ocopy(src->id, name, dst->id, dst_name, H5P_DEFAULT, H5P_DEFAULT);
    if (r < 0) h5_capture();
    if (r < 0) {
        char what[600];
        snprintf(what, sizeof what, "cannot copy to %.500s", dst->file);
        return h5_fail(err, DATM_E_IO, src, name, what);
    }
    return DATM_OK;
}

typedef struct attr_copy {
    hid_t dst;
    char  failed[256];   /* the attribute that could not be copied */
} attr_copy;

/* Reads attribute `name` of loc in its own type (strings as stored, numbers native) and
 * writes it onto c->dst with the stored type and shape. */
static herr_t attr_copy_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    attr_copy *c = data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    hid_t mt = ft < 0 ? -1
             : H5Tget_class(ft) == H5T_STRING ? H5Tcopy(ft) : H5Tget_native_type(ft, H5T_DIR_ASCEND);
    const hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    const size_t size = mt >= 0 ? H5Tget_size(mt) : 0;
    void *buf = n >= 0 && size ? calloc((size_t)(n ? n : 1), size) : NULL;
    const int got = buf && H5Aread(a, mt, buf) >= 0;
    hid_t b = got ? H5Acreate2(c->dst, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
    const int ok = b >= 0 && H5Awrite(b, mt, buf) >= 0;
    if (!ok) h5_capture();
    if (got && H5Tdetect_class(mt, H5T_VLEN) > 0) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
    else if (got && H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0)
        H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
    free(buf);
    if (b >= 0) H5Aclose(b);
    if (mt >= 0) H5Tclose(mt);
    if (ft >= 0) H5Tclose(ft);
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0) H5Aclose(a);
    if (ok) return 0;
    snprintf(c->failed, sizeof c->failed, "%s", name);
    return -1;
}

int datm_h5_attrs_copy(datm_h5 *src, datm_h5 *dst, datm_error *err)
{
    h5_quiet();
    attr_copy c = {dst->id, ""};
    hsize_t idx = 0;
    herr_t r = H5Aiterate2(src->id, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_copy_cb, &c);
    if (r >= 0) return DATM_OK;
    char what[600];
    snprintf(what, sizeof what, "cannot copy attribute '%.200s' to %.300s", c.failed, dst->file);
    return h5_fail(err, DATM_E_IO, src, NULL, what);
}
