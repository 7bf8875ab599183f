/* engine/io/h5.h: a small wrapper over the HDF5 C API for results and checkpoints.
 * A datm_h5 is an open file or group. Datasets are written whole; reads check the shape and
 * fail with a message naming the file and dataset.
 *
 * Names may be paths relative to g ("a/b/x"); writing creates missing parent groups.
 * Writing an existing dataset overwrites it (in place when type class and shape agree,
 * otherwise it is unlinked and recreated). Reads convert between numeric types (an i64
 * dataset can be read as f64). Rank 0 means a scalar (dims may be NULL). */
#ifndef DATM_H5_H
#define DATM_H5_H

#include <stdint.h>

#include "core/core.h"

typedef struct datm_h5 datm_h5;

#define DATM_H5_MAX_RANK 8

int  datm_h5_create(const char *path, datm_h5 **out, datm_error *err);   /* truncates */
int  datm_h5_open(const char *path, int writable, datm_h5 **out, datm_error *err);
/* Opens the group `name` under g, creating it (and parents, "a/b/c") when create != 0. */
int  datm_h5_group(datm_h5 *g, const char *name, int create, datm_h5 **out, datm_error *err);
int  datm_h5_exists(datm_h5 *g, const char *name);
void datm_h5_close(datm_h5 **g);   /* closes and nulls; closing a file flushes it */
/* The same, reporting a failed flush or close (a full disk) naming the file and the system
 * error; the handle is closed and nulled either way. Use it on files being written. */
int  datm_h5_close_checked(datm_h5 **g, datm_error *err);
/* HDF5 objects (files, groups, datasets, ...) open in this process: 0 when every handle was
 * closed (files whose close failed on a full disk, which HDF5 keeps, are not counted). */
long datm_h5_open_objects(void);
/* Sets up HDF5 for datm (errors through datm_error, no exit handler); called by every
 * function here, and before any direct HDF5 call elsewhere. */
void datm_h5_init(void);

int datm_h5_write_f32(datm_h5 *g, const char *name, const float *x, int rank,
                      const int64_t *dims, datm_error *err);
int datm_h5_write_f64(datm_h5 *g, const char *name, const double *x, int rank,
                      const int64_t *dims, datm_error *err);
int datm_h5_write_i64(datm_h5 *g, const char *name, const int64_t *x, int rank,
                      const int64_t *dims, datm_error *err);
int datm_h5_write_i32(datm_h5 *g, const char *name, const int32_t *x, int rank,
                      const int64_t *dims, datm_error *err);
int datm_h5_write_scalar(datm_h5 *g, const char *name, double v, datm_error *err);
int datm_h5_write_strings(datm_h5 *g, const char *name, const char *const *s, int64_t n,
                          datm_error *err);
/* Reads into caller memory; the stored shape must equal dims. */
int datm_h5_read_f32(datm_h5 *g, const char *name, float *x, int rank, const int64_t *dims,
                     datm_error *err);
int datm_h5_read_f64(datm_h5 *g, const char *name, double *x, int rank, const int64_t *dims,
                     datm_error *err);
int datm_h5_read_i64(datm_h5 *g, const char *name, int64_t *x, int rank, const int64_t *dims,
                     datm_error *err);
int datm_h5_read_scalar(datm_h5 *g, const char *name, double *v, datm_error *err);
/* Shape of a dataset: returns rank (<= 8) or -1 when absent. */
int datm_h5_shape(datm_h5 *g, const char *name, int64_t *dims);

int datm_h5_attr_str(datm_h5 *g, const char *name, const char *value, datm_error *err);
int datm_h5_attr_f64(datm_h5 *g, const char *name, double value, datm_error *err);
int datm_h5_attr_i64(datm_h5 *g, const char *name, int64_t value, datm_error *err);
/* Reads a string attribute into buf (truncated to size). */
int datm_h5_attr_get_str(datm_h5 *g, const char *name, char *buf, size_t size, datm_error *err);

/* ---- additions (owner: results) ---- */
int datm_h5_read_i32(datm_h5 *g, const char *name, int32_t *x, int rank, const int64_t *dims,
                     datm_error *err);
/* Reads a 1-D string dataset; *out is (n) strings; free with datm_h5_strings_free. */
int  datm_h5_read_strings(datm_h5 *g, const char *name, char ***out, int64_t *n,
                          datm_error *err);
void datm_h5_strings_free(char **s, int64_t n);
/* Reads a whole numeric dataset of any shape as doubles: *out has prod(dims) entries
 * (datm_free), *rank and dims (<= DATM_H5_MAX_RANK) filled. */
int  datm_h5_read_f64_alloc(datm_h5 *g, const char *name, double **out, int *rank,
                            int64_t *dims, datm_error *err);
/* Reads a string attribute of any length; *out is allocated (datm_free). */
int  datm_h5_attr_get_str_alloc(datm_h5 *g, const char *name, char **out, datm_error *err);
int  datm_h5_attr_get_f64(datm_h5 *g, const char *name, double *v, datm_error *err);
int  datm_h5_attr_get_i64(datm_h5 *g, const char *name, int64_t *v, datm_error *err);
int  datm_h5_attr_exists(datm_h5 *g, const char *name);
/* Names of the direct children of g (groups and datasets) in creation-independent name
 * order; *names (n) freed with datm_h5_strings_free. */
int  datm_h5_list(datm_h5 *g, char ***names, int64_t *n, datm_error *err);
int  datm_h5_is_group(datm_h5 *g, const char *name);   /* 1 group, 0 dataset/other, -1 absent */
/* Unlinks a dataset or group (no error when absent). */
int  datm_h5_delete(datm_h5 *g, const char *name, datm_error *err);
int  datm_h5_flush(datm_h5 *g, datm_error *err);
/* Reads every dataset under g (groups recursively, in name order) in full and, when fn is
 * given, passes each to it: numeric data as doubles (rank, dims, bytes), strings one by one
 * (each with its NUL). Fails naming the first object that cannot be read. */
typedef void (*datm_h5_visit_fn)(const char *path, int rank, const int64_t *dims,
                                 const void *bytes, size_t n_bytes, void *user);
int  datm_h5_read_all(datm_h5 *g, datm_h5_visit_fn fn, void *user, datm_error *err);
/* Opens path read-only and reads it all (datm_h5_read_all): the file is whole and readable. */
int  datm_h5_verify_file(const char *path, datm_h5_visit_fn fn, void *user, datm_error *err);
/* ---- copies between files (run records, engine/pipeline/record.c) ---- */
/* A new file (truncating) whose objects carry no creation or modification times, so the same
 * content written in the same order gives the same bytes: files kept under version control. */
int  datm_h5_create_untimed(const char *path, datm_h5 **out, datm_error *err);
/* Copies object `name` under src (a dataset, or a group with everything under it; attributes
 * too; as stored, times included) to dst_name under dst, whose parent group must exist. */
int  datm_h5_copy(datm_h5 *src, const char *name, datm_h5 *dst, const char *dst_name,
                  datm_error *err);
/* Copies every attribute of src onto dst (none of the same name there yet), in name order. */
int  datm_h5_attrs_copy(datm_h5 *src, datm_h5 *dst, datm_error *err);
/* "FILE:/group/path" of g, for messages. */
const char *datm_h5_where(const datm_h5 *g);

#endif
