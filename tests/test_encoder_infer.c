/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_encoder */
/* The encoder at realistic size (V = 2000, 128-64-32, B = 200): forward + backward give
 * bit-identical loss, gradients and dPhi with 1 and 2 threads (row blocks and column splits
 * must not change any number); batched inference equals the plain forward (mean) and is
 * thread-count independent (samples); the average of S samples of the top layer (no
 * downward term above it) matches the Weibull mean within 5.5 standard errors. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "encoder/encoder.h"
#include "test_check.h"


enum { V = 2000, B = 200, N = 1100, L = 3 };

int main(void)
{
    datm_error err;
    datm_rng rng;
    datm_rng_init(&rng, 5, DATM_STREAM_TEST, 0);
    /* N documents with ~40 distinct words each */
    datm_csr X;
    datm_csr_alloc(&X, N, V, N * 60, NULL);
    int64_t nnz = 0;
    X.row_ptr[0] = 0;
    for (int i = 0; i < N; i++) {
        for (int v = 0; v < V; v++)
            if (datm_rng_uniform(&rng) < 0.02) {
                X.col[nnz] = v;
                X.val[nnz] = (float)(1 + datm_rng_below(&rng, 3));
                nnz++;
                if (nnz == (int64_t)N * 60) break;
            }
        X.row_ptr[i + 1] = nnz;
    }
    X.nnz = nnz;
    datm_encoder_opts o;
    datm_encoder_opts_default(&o);
    o.n_layers = L; o.n_vocab = V; o.k[1] = 128; o.k[2] = 64; o.k[3] = 32;
    datm_encoder *e = NULL;
    if (datm_encoder_create(&o, 9, &e, &err)) { printf("%s\n", err.msg); return 1; }
    float *phi[L + 1] = {NULL};
    for (int l = 1; l <= L; l++) {
        int64_t R = e->K[l - 1], C = e->K[l];
        phi[l] = datm_alloc_array((size_t)(R * C), sizeof(float), NULL);
        for (int64_t j = 0; j < C; j++) {
            double s = 0;
            for (int64_t r = 0; r < R; r++) s += phi[l][r * C + j] = (float)(0.05 + datm_rng_uniform(&rng));
            for (int64_t r = 0; r < R; r++) phi[l][r * C + j] = (float)(phi[l][r * C + j] / s);
        }
    }
    datm_encoder_ws *ws = NULL;
    datm_encoder_ws_create(e, B, 0, &ws, &err);
    const int64_t P = e->params.size;
    float *g[2], *dphi[2][L + 1];
    double loss[2];
    int64_t ids[B];
    for (int i = 0; i < B; i++) ids[i] = 3 * i + 1;
    datm_csr Xb = X;
    Xb.n_rows = B;
    Xb.row_ptr = X.row_ptr + 100;   /* rows 100..299: a view that does not start at 0 */
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        g[t] = datm_alloc_array((size_t)P, sizeof(float), NULL);
        for (int l = 1; l <= L; l++)
            dphi[t][l] = datm_alloc_array((size_t)(e->K[l - 1] * e->K[l]), sizeof(float), NULL);
        datm_encoder_noise nz = {NULL, 77, DATM_STREAM_DOC, 12, ids, 0};
        datm_encoder_loss lo;
        int rc = datm_encoder_forward(e, e->params.value, DATM_ENC_TRAIN, &Xb, (const float *const *)phi,
                                      NULL, NULL, &nz, ws, &lo, &err);
        if (!rc) rc = datm_encoder_backward(e, e->params.value, ws, NULL, g[t], dphi[t], &err);
        CHECK(rc == 0, "train pass: %s", err.msg);
        loss[t] = lo.loss;
        printf("%d thread(s): %d row block(s), loss %.9g\n", t + 1, ws->nb, lo.loss);
    }
    CHECK(ws->nb == 4, "B = 200 should make 4 row blocks (got %d)", ws->nb);
    CHECK(loss[0] == loss[1], "loss differs: %.9g vs %.9g", loss[0], loss[1]);
    CHECK(memcmp(g[0], g[1], (size_t)P * sizeof(float)) == 0, "gradients differ between 1 and 2 threads");
    for (int l = 1; l <= L; l++)
        CHECK(memcmp(dphi[0][l], dphi[1][l], (size_t)(e->K[l - 1] * e->K[l]) * sizeof(float)) == 0,
              "dPhi(%d) differs between 1 and 2 threads", l);

    /* inference: mean equals the plain forward; samples thread-count independent */
    float *th[2][L + 1];
    for (int t = 0; t < 2; t++)
        for (int l = 1; l <= L; l++) th[t][l] = datm_alloc_array((size_t)(N * e->K[l]), sizeof(float), NULL);
    omp_set_num_threads(2);
    datm_encoder_infer(e, e->params.value, &X, (const float *const *)phi, NULL, 0, 1, 0, 0, 300, th[0], &err);
    datm_csr Xf = X;
    Xf.n_rows = B;
    datm_encoder_forward(e, e->params.value, DATM_ENC_MEAN, &Xf, (const float *const *)phi, NULL, NULL,
                         NULL, ws, NULL, &err);
    /* (different row blocks -> different sgemm shapes: equal to float rounding, not bits) */
    for (int l = 1; l <= L; l++) {
        double md = 0;
        for (int64_t i = 0; i < B * e->K[l]; i++)
            md = fmax(md, fabs(ws->theta[l][i] - th[0][l][i]) / fmax(1e-6, fabs(th[0][l][i])));
        CHECK(md < 1e-4, "infer mean != forward mean at layer %d (rel %.3g)", l, md);
    }
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        datm_encoder_infer(e, e->params.value, &X, (const float *const *)phi, NULL, 3, 4, 10, 0, 300,
                           th[t], &err);
    }
    for (int l = 1; l <= L; l++)
        CHECK(memcmp(th[0][l], th[1][l], (size_t)(N * e->K[l]) * sizeof(float)) == 0,
              "infer samples differ between 1 and 2 threads at layer %d", l);
    /* the cached split (upward once, draws later) gives the same numbers */
    {
        datm_encoder_cache *cache = NULL;
        CHECK(datm_encoder_cache_build(e, e->params.value, &X, 300, &cache, &err) == 0, "cache");
        datm_encoder_infer_cached(e, cache, (const float *const *)phi, NULL, 3, 4, 10, 0, 300, th[0], &err);
        for (int l = 1; l <= L; l++)
            CHECK(memcmp(th[0][l], th[1][l], (size_t)(N * e->K[l]) * sizeof(float)) == 0,
                  "cached draws differ from infer at layer %d", l);
        datm_encoder_cache_destroy(&cache);
    }

    /* S-sample average of the top layer vs its mean: z = (avg - mean) / (sd / sqrt(S)) with
     * the Weibull variance lam^2 (G(1 + 2/k) - G(1 + 1/k)^2), over units with k >= 1 (light
     * enough tails for the normal approximation at S = 400) */
    {
        const int S = 400;
        const int64_t K3 = e->K[3];
        double *acc = datm_alloc_array((size_t)(B * K3), sizeof(double), NULL);
        for (int d = 0; d < S; d++) {
            datm_encoder_noise nz = {NULL, 3, DATM_STREAM_EVAL, (uint64_t)d, NULL, 0};
            datm_encoder_forward(e, e->params.value, DATM_ENC_SAMPLE, &Xf, (const float *const *)phi,
                                 NULL, NULL, &nz, ws, NULL, &err);
            for (int64_t i = 0; i < B * K3; i++) acc[i] += ws->theta[3][i];
        }
        double zmax = 0, z2 = 0;
        int64_t used = 0;
        for (int64_t i = 0; i < B * K3; i++) {
            double k = ws->k[3][i], lam = ws->lam[3][i];
            if (k < 1) continue;
            double mu = lam * tgamma(1 + 1 / k), var = lam * lam * (tgamma(1 + 2 / k) - pow(tgamma(1 + 1 / k), 2));
            double z = (acc[i] / S - mu) / sqrt(var / S);
            zmax = fmax(zmax, fabs(z));
            z2 += z * z;
            used++;
        }
        printf("top layer: %lld units with k >= 1, max |z| %.3g, mean z^2 %.3g (S = %d)\n",
               (long long)used, zmax, used ? z2 / (double)used : 0.0, S);
        CHECK(used > 100, "too few units with k >= 1 (%lld)", (long long)used);
        CHECK(zmax < 5.5 && fabs(z2 / (double)used - 1) < 0.25, "sample mean vs exact mean");
        datm_free(acc);
    }
    for (int t = 0; t < 2; t++) {
        datm_free(g[t]);
        for (int l = 1; l <= L; l++) { datm_free(dphi[t][l]); datm_free(th[t][l]); }
    }
    for (int l = 1; l <= L; l++) datm_free(phi[l]);
    datm_encoder_ws_destroy(&ws);
    datm_encoder_destroy(&e);
    datm_csr_free(&X);
    return check_result();
}
