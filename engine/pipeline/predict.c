/* engine/pipeline/predict.c: the class probabilities of a finished run's test documents,
 * recomputed from what the run left behind (spec.resolved.yaml and result.h5), for `datm
 * ensemble`. The model is created exactly as `datm run` creates it (datm_run_model_create),
 * its state loaded from /model, and predict called with the seed of the run's evaluate stage,
 * so a run's own recomputed error equals its stored /metrics/error_rate: the check that what
 * an ensemble averages is what each member reported. */
#include <math.h>
#include <string.h>

#include "io/h5.h"
#include "io/results_layout.h"
#include "pipeline/run_internal.h"
#include "eval/classify.h"

void datm_run_prediction_free(datm_run_prediction *p)
{
    datm_free(p->probs);
    datm_free(p->labels);
    memset(p, 0, sizeof *p);
}

static double scalar_or_nan(datm_h5 *f, const char *path)
{
    double v;
    datm_error e = {0};
    if (!datm_h5_exists(f, path) || datm_h5_read_scalar(f, path, &v, &e)) return NAN;
    return v;
}

/* The hash of the test documents' file among those the data loader read. */
static const char *test_file_hash(const datm_run_data *d, const char **name)
{
    for (int i = 0; i < d->n_files; i++)
        if (!strncmp(d->file_name[i], "test.", 5)) {
            *name = d->file_name[i];
            return d->file_hash[i];
        }
    return NULL;
}

/* The result file must be COMPLETED and, when it recorded the hash of the test file, the
 * file must still be that one (a changed data set would silently change the members). */
static int check_result(datm_h5 *f, const char *path, const char *test_name,
                        const char *test_hash, datm_error *err)
{
    char status[64] = "";
    datm_error e = {0};
    if (!datm_h5_attr_exists(f, DATM_ATTR_STATUS) ||
        datm_h5_attr_get_str(f, DATM_ATTR_STATUS, status, sizeof status, &e) ||
        strcmp(status, DATM_STATUS_COMPLETED))
        return datm_error_set(err, DATM_E_INVALID, "%s: status %s, not %s (only a finished run "
                              "can predict)", path, status[0] ? status : "missing",
                              DATM_STATUS_COMPLETED);
    datm_h5 *g = NULL;
    if (datm_h5_group(f, DATM_GRP_DATA, 0, &g, &e)) return DATM_OK;   /* older file: no hashes */
    char attr[96], stored[80] = "";
    snprintf(attr, sizeof attr, "sha256:%s", test_name);
    int rc = DATM_OK;
    if (datm_h5_attr_exists(g, attr) &&
        !datm_h5_attr_get_str(g, attr, stored, sizeof stored, &e) && strcmp(stored, test_hash))
        rc = datm_error_set(err, DATM_E_INVALID, "%s: the test documents (%s) are not the ones "
                            "the run was evaluated on (sha256 %.12s..., now %.12s...)", path,
                            test_name, stored, test_hash);
    datm_h5_close(&g);
    return rc;
}

int datm_run_predict(const char *run_dir, const datm_model_catalog *cat,
                     datm_run_prediction *out, datm_error *err)
{
    memset(out, 0, sizeof *out);
    char path[1200], result[1200];
    snprintf(path, sizeof path, "%s/%s", run_dir, DATM_RESULT_SPEC_FILE);
    snprintf(result, sizeof result, "%s/%s", run_dir, DATM_RESULT_FILE);
    datm_spec spec;
    memset(&spec, 0, sizeof spec);
    datm_run_data data;
    memset(&data, 0, sizeof data);
    datm_model *m = NULL;
    datm_h5 *f = NULL, *g = NULL;
    int rc = datm_spec_load(path, NULL, 0, cat, &spec, err);
    if (!rc && !spec.ops->predict)
        rc = datm_error_set(err, DATM_E_UNSUPPORTED, "%s: model %s has no class prediction of "
                            "its own (a supervised variant is needed)", run_dir, spec.variant);
    if (!rc) rc = datm_h5_open(result, 0, &f, err);
    if (!rc) rc = datm_run_data_load(&spec, &data, err);
    const char *test_name = NULL, *hash = NULL;
    if (!rc) {
        hash = test_file_hash(&data, &test_name);
        if (!data.have_test || !data.test.labels || !hash || data.train.n_classes < 2)
            rc = datm_error_set(err, DATM_E_INVALID, "%s: data set %s has no labelled test "
                                "documents", run_dir, data.dir);
    }
    if (!rc) rc = check_result(f, result, test_name, hash, err);
    const uint64_t seed =
        rc ? 0 : (uint64_t)spec.p.run.seed;
    int64_t bpe, total;
    if (!rc) rc = datm_run_model_create(&spec, &data, seed, &m, &bpe, &total, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_MODEL, 0, &g, err);
    if (!rc && spec.ops->load) rc = spec.ops->load(m, g, err);
    datm_h5_close(&g);
    const int64_t N = rc ? 0 : data.test.X.n_rows;
    const int C = data.train.n_classes;
    if (!rc) {
        out->probs = datm_alloc_array((size_t)(N ? N : 1) * (size_t)C, sizeof *out->probs, err);
        out->labels = datm_alloc_array((size_t)(N ? N : 1), sizeof *out->labels, err);
        if (!out->probs || !out->labels) rc = DATM_E_NOMEM;
    }
    if (!rc) {
        const datm_evaluate_params *ec = &spec.p.evaluate;
        const double t0 = datm_time_now();
        rc = spec.ops->predict(m, &data.test.X, datm_run_predict_seed(seed),
                               (int)ec->predict_samples, out->probs, err);
        out->predict_s = datm_time_now() - t0;
    }
    if (!rc) {
        memcpy(out->labels, data.test.labels, (size_t)N * sizeof *out->labels);
        out->n_docs = N;
        out->n_classes = C;
        out->stored_error = scalar_or_nan(f, DATM_GRP_METRICS "/" DATM_MET_ERROR_RATE);
        out->train_s = scalar_or_nan(f, DATM_GRP_METRICS "/" DATM_MET_TRAIN_S);
        out->seed = seed;
        snprintf(out->test_hash, sizeof out->test_hash, "%s", hash);
        snprintf(out->spec_hash, sizeof out->spec_hash, "%s", spec.hash);
        snprintf(out->variant, sizeof out->variant, "%s", spec.variant);
    }
    datm_h5_close(&f);
    if (m) m->ops->destroy(m);
    datm_run_data_free(&data);
    datm_spec_free(&spec);
    if (rc) datm_run_prediction_free(out);
    return rc;
}
