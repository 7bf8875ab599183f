/* engine/pipeline/record.c: run records (pipefile.h): OUT/records/<id>.h5, a compact copy of
 * a finished run's result.h5 that holds what the pipeline's report reads of the run, kept
 * beside the committed report so that the report regenerates, and the pipeline continues,
 * where the run cache is not (another machine, a fresh clone). A record is written whole
 * (NAME.tmp, renamed) and carries no times, so the same run gives the same bytes and a
 * regenerated report changes no committed file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/h5.h"
#include "io/results.h"
#include "io/results_layout.h"
#include "pipeline/pipefile.h"

void datm_record_path(const char *out_dir, const char *id, char *out, size_t size)
{
    snprintf(out, size, "%s/%s/%s.h5", out_dir, DATM_RECORD_DIR, id);
}

void datm_record_parts_free(datm_record_parts *w)
{
    datm_strlist_free(&w->groups);
    datm_strlist_free(&w->datasets);
    w->topics = w->phi = 0;
}

int datm_record_key(const char *path, char key[65], datm_error *err)
{
    datm_h5 *h = NULL;
    int rc = datm_h5_open(path, 0, &h, err);
    if (rc) return rc;
    char status[32] = "";
    if (!datm_h5_attr_exists(h, DATM_RECORD_ATTR_KEY))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: no %s attribute (not a run record)", path,
                            DATM_RECORD_ATTR_KEY);
    if (!rc) rc = datm_h5_attr_get_str(h, DATM_RECORD_ATTR_KEY, key, 65, err);
    if (!rc && datm_h5_attr_exists(h, DATM_ATTR_STATUS))
        rc = datm_h5_attr_get_str(h, DATM_ATTR_STATUS, status, sizeof status, err);
    if (!rc && strcmp(status, "COMPLETED"))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: status '%s', not COMPLETED", path, status);
    datm_h5_close(&h);
    return rc;
}

/* The parent group of the path `name` ("a/b/c" -> "a/b"; "" at the root) created in dst. */
static int make_parent(datm_h5 *dst, const char *name, datm_error *err)
{
    char parent[256];
    snprintf(parent, sizeof parent, "%s", name[0] == '/' ? name + 1 : name);
    char *slash = strrchr(parent, '/');
    if (!slash) return DATM_OK;
    *slash = '\0';
    datm_h5 *g = NULL;
    int rc = datm_h5_group(dst, parent, 1, &g, err);
    datm_h5_close(&g);
    return rc;
}

/* Copies object `name` (a group with everything under it, or a dataset) when src has it and
 * dst does not yet (a dataset inside a group already copied). */
static int copy_object(datm_h5 *src, datm_h5 *dst, const char *name, datm_error *err)
{
    if (!datm_h5_exists(src, name) || datm_h5_exists(dst, name)) return DATM_OK;
    int rc = make_parent(dst, name, err);
    if (!rc) rc = datm_h5_copy(src, name, dst, name, err);
    return rc;
}

/* Group `name` made in dst (no times) with the attributes of src's. */
static int copy_group_shell(datm_h5 *src, datm_h5 *dst, const char *name, datm_error *err)
{
    datm_h5 *s = NULL, *d = NULL;
    int rc = datm_h5_group(src, name, 0, &s, err);
    if (!rc) rc = datm_h5_group(dst, name, 1, &d, err);
    if (!rc) rc = datm_h5_attrs_copy(s, d, err);
    datm_h5_close(&s);
    datm_h5_close(&d);
    return rc;
}

/* /topics without the projections of its layers (V x K per layer; the topic tree reads the
 * top words and links): the group and its layers with their attributes, then their other
 * datasets. The groups are made here rather than copied: a copy of a group without its
 * members would carry the time of the copy. */
static int copy_topics(datm_h5 *src, datm_h5 *dst, datm_error *err)
{
    if (datm_h5_is_group(src, DATM_GRP_TOPICS) != 1 || datm_h5_exists(dst, DATM_GRP_TOPICS))
        return DATM_OK;
    int rc = copy_group_shell(src, dst, DATM_GRP_TOPICS, err);
    datm_h5 *g = NULL;
    char **layers = NULL;
    int64_t n_layers = 0;
    if (!rc) rc = datm_h5_group(src, DATM_GRP_TOPICS, 0, &g, err);
    if (!rc) rc = datm_h5_list(g, &layers, &n_layers, err);
    datm_h5_close(&g);
    for (int64_t l = 0; l < n_layers && !rc; l++) {
        char layer[256];
        snprintf(layer, sizeof layer, "%s/%s", DATM_GRP_TOPICS, layers[l]);
        if (datm_h5_is_group(src, layer) != 1) {
            rc = copy_object(src, dst, layer, err);
            continue;
        }
        char **names = NULL;
        int64_t n = 0;
        rc = copy_group_shell(src, dst, layer, err);
        if (!rc) rc = datm_h5_group(src, layer, 0, &g, err);
        if (!rc) rc = datm_h5_list(g, &names, &n, err);
        datm_h5_close(&g);
        for (int64_t k = 0; k < n && !rc; k++) {
            char path[512];
            if (!strcmp(names[k], DATM_TOPICS_PROJECTED)) continue;
            snprintf(path, sizeof path, "%s/%s", layer, names[k]);
            rc = copy_object(src, dst, path, err);
        }
        datm_h5_strings_free(names, n);
    }
    datm_h5_strings_free(layers, n_layers);
    return rc;
}

/* /data/vocab: copied, or, for a run that names its vocabulary file instead
 * (datm_result_vocab reads DIR/vocab.txt), written from that file: a record must not need
 * the data set. */
static int copy_vocab(datm_h5 *src, datm_h5 *dst, datm_error *err)
{
    char name[64];
    snprintf(name, sizeof name, "%s/%s", DATM_GRP_DATA, DATM_DATA_VOCAB);
    if (datm_h5_exists(dst, name)) return DATM_OK;
    if (datm_h5_shape(src, name, NULL) == 1) return copy_object(src, dst, name, err);
    char **vocab = NULL;
    int64_t n = 0;
    int rc = datm_result_vocab(src, &vocab, &n, err);
    if (!rc && n > 0) rc = make_parent(dst, name, err);
    if (!rc && n > 0) rc = datm_h5_write_strings(dst, name, (const char *const *)vocab, n, err);
    datm_h5_strings_free(vocab, n);
    return rc;
}

/* /model/phi_1 .. phi_L (the chain datm_result_model_shape finds) and /usage: what the atoms
 * figure projects and orders. */
static int copy_phi(datm_h5 *src, datm_h5 *dst, datm_error *err)
{
    int64_t k[DATM_MAX_LAYERS + 1];
    const int L = datm_result_model_shape(src, k, err);
    int rc = DATM_OK;
    for (int l = 1; l <= L && !rc; l++) {
        char name[64], fmt[32];
        snprintf(fmt, sizeof fmt, "%%s/%s", DATM_MODEL_PHI_FMT);
        snprintf(name, sizeof name, fmt, DATM_GRP_MODEL, l);
        rc = copy_object(src, dst, name, err);
    }
    if (!rc) rc = copy_object(src, dst, DATM_GRP_USAGE, err);
    return rc;
}

/* Everything of w, in a fixed order: the same source gives the same file. */
static int copy_parts(datm_h5 *src, datm_h5 *dst, const char *key, const datm_record_parts *w,
                      datm_error *err)
{
    int rc = datm_h5_attrs_copy(src, dst, err);
    if (!rc) rc = datm_h5_attr_str(dst, DATM_RECORD_ATTR_KEY, key, err);
    for (int i = 0; i < w->groups.n && !rc; i++) rc = copy_object(src, dst, w->groups.v[i], err);
    for (int i = 0; i < w->datasets.n && !rc; i++)
        rc = copy_object(src, dst, w->datasets.v[i], err);
    if (!rc && w->topics) rc = copy_topics(src, dst, err);
    if (!rc && w->phi) rc = copy_phi(src, dst, err);
    if (!rc && (w->topics || w->phi)) rc = copy_vocab(src, dst, err);
    return rc;
}

int datm_record_write(const char *src_run, const char *path, const char *key,
                      const datm_record_parts *w, datm_error *err)
{
    char tmp[1400];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return datm_error_set(err, DATM_E_IO, "%s: path too long", path);
    datm_h5 *src = NULL, *dst = NULL;
    int rc = datm_result_open(src_run, 0, &src, err);
    if (!rc) rc = datm_h5_create_untimed(tmp, &dst, err);
    if (!rc) rc = copy_parts(src, dst, key, w, err);
    datm_h5_close(&src);
    if (dst) {
        datm_error e2 = {0};
        if (datm_h5_close_checked(&dst, &e2) && !rc) rc = datm_error_set(err, e2.code, "%s", e2.msg);
    }
    if (!rc && rename(tmp, path) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s: %s", tmp, path,
                            strerror(errno));
    if (rc) {
        unlink(tmp);
        datm_error_prefix(err, "record %s: ", path);
    }
    return rc;
}
