/* engine/api/api_infer.c: documents and inference of the public API (include/datm.h). The
 * model is created from the run's resolved spec and loaded from its result file at the first
 * inference (the model's own `infer` op: for WHAI one encoder pass per document, OpenMP over
 * documents), and kept for the next calls. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "io/results_layout.h"

int datm_docs_read(const char *path, datm_docs **out, datm_error *err)
{
    *out = NULL;
    datm_docs *d = calloc(1, sizeof *d);
    if (!d) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int rc = datm_docword_read(path, &d->x, err);
    if (rc) { free(d); return rc; }
    *out = d;
    return DATM_OK;
}

int datm_docs_from_csr(int64_t n_docs, int64_t n_words, const int64_t *row_ptr,
                       const int32_t *col, const float *count, datm_docs **out, datm_error *err)
{
    *out = NULL;
    if (n_docs < 0 || n_words < 1 || !row_ptr || (row_ptr[n_docs] > 0 && (!col || !count)))
        return datm_error_set(err, DATM_E_INVALID, "documents: %lld rows over %lld words: "
                              "expected n_docs >= 0, n_words >= 1 and the three arrays",
                              (long long)n_docs, (long long)n_words);
    if (row_ptr[0] != 0)
        return datm_error_set(err, DATM_E_INVALID, "documents: row_ptr[0] = %lld, expected 0",
                              (long long)row_ptr[0]);
    for (int64_t i = 0; i < n_docs; i++)
        if (row_ptr[i + 1] < row_ptr[i])
            return datm_error_set(err, DATM_E_INVALID, "documents: row_ptr decreases at row %lld",
                                  (long long)i);
    const int64_t nnz = row_ptr[n_docs];
    for (int64_t p = 0; p < nnz; p++) {
        if (col[p] < 0 || col[p] >= n_words)
            return datm_error_set(err, DATM_E_INVALID, "documents: entry %lld has word %d, "
                                  "outside 0..%lld", (long long)p, col[p], (long long)(n_words - 1));
        if (!(count[p] >= 0.0f) || count[p] > 1e30f)
            return datm_error_set(err, DATM_E_INVALID, "documents: entry %lld has count %g, "
                                  "expected a finite number >= 0", (long long)p, (double)count[p]);
    }
    datm_docs *d = calloc(1, sizeof *d);
    if (!d) return datm_error_set(err, DATM_E_NOMEM, "out of memory");
    int rc = datm_csr_alloc(&d->x, n_docs, n_words, nnz, err);
    if (rc) { free(d); return rc; }
    memcpy(d->x.row_ptr, row_ptr, (size_t)(n_docs + 1) * sizeof *row_ptr);
    if (nnz) {
        memcpy(d->x.col, col, (size_t)nnz * sizeof *col);
        memcpy(d->x.val, count, (size_t)nnz * sizeof *count);
    }
    *out = d;
    return DATM_OK;
}

int64_t datm_docs_count(const datm_docs *d) { return d ? d->x.n_rows : 0; }
int64_t datm_docs_words(const datm_docs *d) { return d ? d->x.n_cols : 0; }

void datm_docs_totals(const datm_docs *d, double *doc_len, double *word_count)
{
    const datm_csr *x = &d->x;
    if (word_count)
        for (int64_t v = 0; v < x->n_cols; v++) word_count[v] = 0;
    for (int64_t i = 0; i < x->n_rows; i++) {
        double s = 0;
        for (int64_t p = x->row_ptr[i]; p < x->row_ptr[i + 1]; p++) {
            s += x->val[p];
            if (word_count) word_count[x->col[p]] += x->val[p];
        }
        if (doc_len) doc_len[i] = s;
    }
}

void datm_docs_free(datm_docs *d)
{
    if (!d) return;
    datm_csr_free(&d->x);
    free(d);
}

int datm_load(datm_trained *m, datm_error *err)
{
    if (m->model) return DATM_OK;
    if (m->n_layers < 1)
        return datm_error_set(err, DATM_E_FORMAT, "%s: no /%s/phi_1 (not a trained run?)",
                              m->result, DATM_GRP_MODEL);
    if (!m->spec_loaded && m->spec_err.code)
        return datm_error_set(err, m->spec_err.code, "%s", m->spec_err.msg);
    if (!m->spec_loaded)
        return datm_error_set(err, DATM_E_IO, "%s: no spec (neither the result's `spec` nor "
                              "%s/%s)", m->result, m->dir, DATM_RESULT_SPEC_FILE);
    const datm_spec *s = &m->spec;
    if (!s->ops->infer)
        return datm_error_set(err, DATM_E_UNSUPPORTED, "model %s has no inference", s->variant);
    datm_train_params tp;
    datm_run_params rp;
    datm_train_params_get(datm_spec_section(s, DATM_SEC_TRAIN), &tp);
    datm_run_params_get(datm_spec_section(s, DATM_SEC_RUN), &rp);
    datm_run_info info = {
        .n_train = 1, .n_vocab = m->k[0], .batch_size = tp.batch_size, .epochs = 1,
        .total_iters = 1, .seed = (uint64_t)rp.seed, .threads = 0, .train = NULL};
    datm_h5 *f = NULL, *g = NULL;
    int rc = s->ops->create(datm_spec_section(s, DATM_SEC_MODEL), &info, &m->model, err);
    if (!rc) rc = datm_h5_open(m->result, 0, &f, err);
    if (!rc) rc = datm_h5_group(f, DATM_GRP_MODEL, 0, &g, err);
    if (!rc && s->ops->load) rc = s->ops->load(m->model, g, err);
    datm_h5_close(&g);
    datm_h5_close(&f);
    if (rc && m->model) {
        m->model->ops->destroy(m->model);
        m->model = NULL;
    }
    return rc;
}

int datm_infer(datm_trained *m, const datm_docs *d, int samples, uint64_t seed, int threads,
               float *const *theta, datm_error *err)
{
    if (!d || !theta)
        return datm_error_set(err, DATM_E_INVALID, "datm_infer: no documents or no output");
    if (samples < 0)
        return datm_error_set(err, DATM_E_INVALID, "datm_infer: samples %d < 0", samples);
    if (m->n_layers < 1) return datm_load(m, err);   /* says why there is no model */
    if (d->x.n_cols > m->k[0])
        return datm_error_set(err, DATM_E_INVALID, "documents over %lld words, but the model "
                              "of %s has a vocabulary of %lld", (long long)d->x.n_cols, m->dir,
                              (long long)m->k[0]);
    int rc = datm_load(m, err);
    if (rc) return rc;
    datm_csr x = d->x;   /* a view: fewer words only means the last ones never occur */
    x.n_cols = m->k[0];
    const int omp_had = omp_get_max_threads(), blas_had = openblas_get_num_threads();
    if (threads > 0) {
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
    }
    datm_theta th;
    memset(&th, 0, sizeof th);
    rc = m->model->ops->infer(m->model, &x, seed, samples, &th, err);
    if (threads > 0) {
        omp_set_num_threads(omp_had);
        openblas_set_num_threads(blas_had);
    }
    if (!rc && (th.n_layers != m->n_layers || th.n_docs != x.n_rows))
        rc = datm_error_set(err, DATM_E_FORMAT, "%s: inference gave %d layers of %lld documents, "
                            "expected %d of %lld", m->dir, th.n_layers, (long long)th.n_docs,
                            m->n_layers, (long long)x.n_rows);
    for (int l = 1; l <= th.n_layers && !rc; l++) {
        if (th.k[l - 1] != m->k[l]) {
            rc = datm_error_set(err, DATM_E_FORMAT, "%s: inference gave %lld topics in layer %d, "
                                "expected %lld", m->dir, (long long)th.k[l - 1], l,
                                (long long)m->k[l]);
            break;
        }
        if (theta[l - 1])
            memcpy(theta[l - 1], th.theta[l - 1], (size_t)(th.n_docs * th.k[l - 1]) * sizeof(float));
    }
    datm_theta_free(&th);
    return rc;
}
