/* engine/io/topics_stage.c: the pipeline's topics stage (results.h): projected topics of
 * every layer from /model/phi_<l>, NPMI against the training documents of the run's dataset
 * (document co-occurrence), diversity, all written back into result.h5. Kept apart from
 * results.c because it is the only io code that loads a corpus. */
#include <stdio.h>
#include <string.h>

#include "data/data.h"
#include "io/results.h"
#include "io/results_layout.h"

/* Loads the training documents named in /data (the `dir` attribute, else `dataset`). */
static int load_reference(datm_h5 *f, datm_corpus *c, datm_error *err)
{
    if (datm_h5_is_group(f, DATM_GRP_DATA) != 1)
        return datm_error_set(err, DATM_E_IO, "%s: no /%s group naming the dataset",
                              datm_h5_where(f), DATM_GRP_DATA);
    datm_h5 *g = NULL;
    int rc = datm_h5_group(f, DATM_GRP_DATA, 0, &g, err);
    if (rc) return rc;
    char dir[1024] = "", name[512] = "";
    if (datm_h5_attr_exists(g, DATM_DATA_ATTR_DIR))
        datm_h5_attr_get_str(g, DATM_DATA_ATTR_DIR, dir, sizeof dir, err);
    if (datm_h5_attr_exists(g, DATM_DATA_ATTR_NAME))
        datm_h5_attr_get_str(g, DATM_DATA_ATTR_NAME, name, sizeof name, err);
    datm_h5_close(&g);
    if (!dir[0] && name[0]) {
        rc = datm_dataset_resolve(name, dir, sizeof dir, err);
        if (rc) return rc;
    }
    if (!dir[0])
        return datm_error_set(err, DATM_E_IO, "%s: /%s names no dataset", datm_h5_where(f),
                              DATM_GRP_DATA);
    return datm_corpus_load(dir, "train", c, err);
}

int datm_topics_stage(const char *run_dir, const char *result_path, datm_error *err)
{
    (void)run_dir;
    datm_h5 *f = NULL;
    int rc = datm_h5_open(result_path, 1, &f, err);
    if (rc) return rc;
    datm_corpus corpus;
    memset(&corpus, 0, sizeof corpus);
    datm_error e2 = {0};
    const datm_csr *ref = NULL;
    if (load_reference(f, &corpus, &e2) == DATM_OK) ref = &corpus.X;
    else datm_warn("topics: no NPMI (reference corpus not loaded: %s)", e2.msg);
    datm_topic_set ts;
    rc = datm_topics_compute(f, ref, &ts, err);
    if (!rc) {
        rc = datm_topics_write(f, &ts, err);
        for (int l = 1; !rc && l <= ts.n_layers; l++)
            datm_info("topics: layer %d: %lld topics, NPMI %.4f, diversity %.4f", l,
                      (long long)ts.layer[l - 1].k, ts.layer[l - 1].npmi_mean,
                      ts.layer[l - 1].diversity);
        datm_topic_set_free(&ts);
    }
    if (ref) datm_corpus_free(&corpus);
    datm_h5_close(&f);
    return rc;
}
