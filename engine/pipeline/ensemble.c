/* engine/pipeline/ensemble.c: the prediction of several finished runs averaged — p(y|x) of
 * each test document as the mean of the members' p(y|x), equal weights — written as a run
 * directory of its own (`datm ensemble`). For sDATM the members are independent chains
 * (runs that differ in the seed): the paper's prediction (eq. prediction) averages p(y|x)
 * over posterior draws of one chain, and draws of more chains are more draws of the same
 * posterior, the usual way to reduce the variance of an MCMC average. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/classify.h"
#include "io/h5.h"
#include "io/results_layout.h"
#include "pipeline/run_internal.h"

/* The members must predict the same documents with the same labels and classes. */
static int check_members(const char *const *dirs, const datm_run_prediction *p, int n,
                         datm_error *err)
{
    for (int i = 1; i < n; i++) {
        if (strcmp(p[i].test_hash, p[0].test_hash) || p[i].n_docs != p[0].n_docs ||
            p[i].n_classes != p[0].n_classes)
            return datm_error_set(err, DATM_E_INVALID, "%s: its test documents (%lld, %d classes, "
                                  "sha256 %.12s...) are not those of %s (%lld, %d classes, "
                                  "sha256 %.12s...)", dirs[i], (long long)p[i].n_docs,
                                  p[i].n_classes, p[i].test_hash, dirs[0],
                                  (long long)p[0].n_docs, p[0].n_classes, p[0].test_hash);
        if (memcmp(p[i].labels, p[0].labels, (size_t)p[0].n_docs * sizeof *p[0].labels))
            return datm_error_set(err, DATM_E_INVALID, "%s: its test labels differ from those of "
                                  "%s", dirs[i], dirs[0]);
    }
    return DATM_OK;
}

static int write_result(const char *part, const char *const *dirs, const datm_run_prediction *p,
                        int n, const float *mean, const datm_class_report *r, datm_error *err)
{
    const int64_t N = p[0].n_docs, C = p[0].n_classes;
    double train_s = 0, predict_s = 0, errs[DATM_ENSEMBLE_MAX], seeds[DATM_ENSEMBLE_MAX];
    for (int i = 0; i < n; i++) {
        train_s += p[i].train_s;
        predict_s += p[i].predict_s;
        errs[i] = p[i].stored_error;
        seeds[i] = (double)p[i].seed;
    }
    char now[64];
    datm_utc_now(now, sizeof now);
    datm_h5 *f = NULL, *g = NULL;
    int rc = datm_h5_create(part, &f, err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_CREATED, now, err);
    if (!rc) rc = datm_h5_attr_str(f, "kind", "ensemble", err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_METRICS, 1, &g, err);
    if (!rc) rc = datm_h5_write_scalar(g, DATM_MET_ERROR_RATE, r->error_rate, err);
    if (!rc) rc = datm_h5_write_scalar(g, "macro_f1", r->macro_f1, err);
    if (!rc && N) rc = datm_h5_write_scalar(g, "predict_s_per_doc", predict_s / (double)N, err);
    if (!rc && !isnan(train_s)) rc = datm_h5_write_scalar(g, DATM_MET_TRAIN_S, train_s, err);
    if (!rc) rc = datm_h5_attr_str(g, "classifier", "ensemble", err);
    datm_h5_close(&g);
    const int64_t cc[2] = {C, C}, nc[2] = {N, C}, n1 = n;
    if (!rc) rc = datm_h5_group(f, "classification", 1, &g, err);
    if (!rc) rc = datm_h5_write_i64(g, "confusion", r->confusion, 2, cc, err);
    if (!rc) rc = datm_h5_write_f64(g, "precision", r->precision, 1, cc, err);
    if (!rc) rc = datm_h5_write_f64(g, "recall", r->recall, 1, cc, err);
    if (!rc) rc = datm_h5_write_f64(g, "f1", r->f1, 1, cc, err);
    if (!rc) rc = datm_h5_write_f32(g, "probs", mean, 2, nc, err);
    datm_h5_close(&g);
    if (!rc) rc = datm_h5_group(f, "ensemble", 1, &g, err);
    if (!rc) rc = datm_h5_write_strings(g, "members", dirs, n, err);
    if (!rc) rc = datm_h5_write_f64(g, "member_error_rate", errs, 1, &n1, err);
    if (!rc) rc = datm_h5_write_f64(g, "member_seed", seeds, 1, &n1, err);
    /* each member's p(y|x), so that the average can be checked and other weights tried */
    for (int i = 0; !rc && i < n; i++) {
        char name[48];
        snprintf(name, sizeof name, "member_probs/%d", i + 1);
        rc = datm_h5_write_f32(g, name, p[i].probs, 2, nc, err);
    }
    datm_h5_close(&g);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_FINISHED, now, err);
    if (!rc) rc = datm_h5_attr_str(f, DATM_ATTR_STATUS, DATM_STATUS_COMPLETED, err);   /* last */
    datm_h5_close(&f);
    return rc;
}

/* OUT/spec.resolved.yaml: the first member's resolved spec under a header naming the
 * members, so that readers of a run directory (datm compare, the pipeline tables) find the
 * structure and budget; OUT/members.txt: one line per member (directory, seed, error). */
static int write_texts(const char *out_dir, const char *const *dirs,
                       const datm_run_prediction *p, int n, datm_error *err)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", dirs[0], DATM_RESULT_SPEC_FILE);
    FILE *in = fopen(path, "r");
    if (!in) return datm_error_set(err, DATM_E_IO, "%s: cannot read", path);
    size_t cap = 1 << 16, len = 0;
    char *text = datm_alloc_array(cap, 1, err);
    int rc = text ? DATM_OK : DATM_E_NOMEM;
    if (!rc) {
        len = (size_t)snprintf(text, cap, "# datm ensemble of %d runs; the spec below is that of "
                               "the first, %s (the members: members.txt)\n", n, dirs[0]);
        size_t got;
        while (len < cap - 1 && (got = fread(text + len, 1, cap - 1 - len, in)) > 0) len += got;
        if (len >= cap - 1) rc = datm_error_set(err, DATM_E_INVALID, "%s: too long", path);
        text[len < cap ? len : cap - 1] = '\0';
    }
    fclose(in);
    if (!rc) {
        snprintf(path, sizeof path, "%s/%s", out_dir, DATM_RESULT_SPEC_FILE);
        rc = datm_run_write_text(path, text, err);
    }
    if (!rc) {
        len = 0;
        for (int i = 0; i < n && len < cap; i++)
            len += (size_t)snprintf(text + len, cap - len, "%s\tseed %llu\terror_rate %.9g\n",
                                    dirs[i], (unsigned long long)p[i].seed, p[i].stored_error);
        snprintf(path, sizeof path, "%s/members.txt", out_dir);
        rc = datm_run_write_text(path, text, err);
    }
    datm_free(text);
    return rc;
}

int datm_ensemble_write(const char *out_dir, const char *const *dirs,
                        const datm_run_prediction *p, int n, struct datm_class_report *report,
                        datm_error *err)
{
    if (n < 1 || n > DATM_ENSEMBLE_MAX)
        return datm_error_set(err, DATM_E_INVALID, "an ensemble has 1 to %d runs, not %d",
                              DATM_ENSEMBLE_MAX, n);
    int rc = check_members(dirs, p, n, err);
    if (rc) return rc;
    const int64_t N = p[0].n_docs;
    const int C = p[0].n_classes;
    float *mean = datm_alloc_array((size_t)(N ? N : 1) * (size_t)C, sizeof *mean, err);
    int32_t *pred = datm_alloc_array((size_t)(N ? N : 1), sizeof *pred, err);
    if (!mean || !pred) rc = DATM_E_NOMEM;
    for (int64_t j = 0; !rc && j < N * C; j++) {
        double s = 0;   /* in member order, in double: the same members give the same mean */
        for (int i = 0; i < n; i++) s += p[i].probs[j];
        mean[j] = (float)(s / n);
    }
    if (!rc) {
        datm_argmax_rows(mean, N, C, pred);
        rc = datm_class_report_compute(p[0].labels, pred, N, C, report, err);
    }
    char part[1300], final[1300];
    snprintf(part, sizeof part, "%s/%s.part", out_dir, DATM_RESULT_FILE);
    snprintf(final, sizeof final, "%s/%s", out_dir, DATM_RESULT_FILE);
    if (!rc) rc = datm_run_mkdir_p(out_dir, err);
    /* a stale result must not stand beside the new spec and members */
    if (!rc) remove(final);
    if (!rc) rc = write_texts(out_dir, dirs, p, n, err);
    if (!rc) rc = write_result(part, dirs, p, n, mean, report, err);
    if (!rc && rename(part, final) != 0)
        rc = datm_error_set(err, DATM_E_IO, "%s: cannot rename to %s", part, final);
    if (rc) remove(part);
    datm_free(mean);
    datm_free(pred);
    return rc;
}
