/* engine/pipeline/run_usage.c: the topic usage of a trained model over its training documents
 * (eval/topic_diag.h): theta is the model's posterior mean (its `infer`), the shares are
 * written to /usage of the result, where the topics stage reads them to flag unused topics. */
#include <string.h>

#include "eval/topic_diag.h"
#include "io/results.h"
#include "pipeline/run_internal.h"

int datm_run_usage_write(const datm_model *m, const datm_csr *X, uint64_t seed,
                         const char *result_path, datm_error *err)
{
    const datm_model_ops *ops = m->ops;
    if (!ops->infer || !ops->get_phi || !ops->n_layers || X->n_rows == 0) return DATM_OK;
    const int L = ops->n_layers(m);
    if (L < 1 || L > DATM_MAX_LAYERS) return DATM_OK;
    const float *phi[DATM_MAX_LAYERS];
    int64_t k[DATM_MAX_LAYERS + 1];
    for (int l = 1; l <= L; l++) {
        int64_t rows, cols;
        if (ops->get_phi(m, l, &phi[l - 1], &rows, &cols))
            return datm_error_set(err, DATM_E_INVALID, "usage: no Phi(%d)", l);
        if (l == 1) k[0] = rows;
        k[l] = cols;
    }
    datm_theta th;
    memset(&th, 0, sizeof th);
    int rc = ops->infer(m, X, seed, 0, &th, err);
    if (!rc && th.n_layers != L)
        rc = datm_error_set(err, DATM_E_INVALID, "usage: infer gave %d layers, the model has %d",
                            th.n_layers, L);
    double *tok[DATM_MAX_LAYERS] = {0}, *mass[DATM_MAX_LAYERS] = {0};
    for (int l = 0; l < L && !rc; l++) {
        tok[l] = datm_alloc_array((size_t)k[l + 1], sizeof *tok[l], err);
        mass[l] = datm_alloc_array((size_t)k[l + 1], sizeof *mass[l], err);
        if (!tok[l] || !mass[l]) rc = DATM_E_NOMEM;
    }
    if (!rc)
        rc = datm_topic_usage(X, L, phi, k, (const float *const *)th.theta, tok, mass, err);
    datm_h5 *f = NULL;
    if (!rc) rc = datm_h5_open(result_path, 1, &f, err);
    if (!rc) rc = datm_usage_write(f, L, k, (const double *const *)tok,
                                   (const double *const *)mass, X->n_rows, err);
    datm_h5_close(&f);
    for (int l = 0; l < L; l++) { datm_free(tok[l]); datm_free(mass[l]); }
    datm_theta_free(&th);
    return rc;
}
