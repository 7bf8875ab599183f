/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_eval */
/* tests/test_eval_perplexity.c: the sparse rate accumulator (engine/eval/perplexity.c)
 * against a naive dense computation: rate (N, V) = sum_s theta_s Phi^T, each row normalised
 * by its full sum over V, perplexity exp(-sum y log p / sum y), on both the observed and the
 * held-out parts (relative error < 1e-10). Also: chunked add_rows equals add; add_fixed
 * (one Phi for all samples: theta summed, the rate formed when scored) equals add, alone
 * and mixed with add and with a second Phi pointer (which folds the pending sum); empty
 * held-out rows; NAN without samples; reset. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/perplexity.h"
#include "rand/rand.h"
#include "test_check.h"


static void dense_to_csr(const float *d, int64_t N, int64_t V, datm_csr *X)
{
    datm_error err;
    int64_t nnz = 0;
    for (int64_t i = 0; i < N * V; i++) nnz += d[i] > 0;
    if (datm_csr_alloc(X, N, V, nnz, &err)) exit(1);
    int64_t e = 0;
    X->row_ptr[0] = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t v = 0; v < V; v++)
            if (d[n * V + v] > 0) { X->col[e] = (int32_t)v; X->val[e++] = d[n * V + v]; }
        X->row_ptr[n + 1] = e;
    }
}

static double dense_ppl(const double *rate, const float *y, int64_t N, int64_t V)
{
    double ll = 0, tok = 0;
    for (int64_t n = 0; n < N; n++) {
        double s = 0;
        for (int64_t v = 0; v < V; v++) s += rate[n * V + v];
        for (int64_t v = 0; v < V; v++)
            if (y[n * V + v] > 0) {
                ll += y[n * V + v] * log(fmax(rate[n * V + v] / s, 1e-300));
                tok += y[n * V + v];
            }
    }
    return exp(-ll / tok);
}

int main(void)
{
    const int64_t N = 37, V = 53, K = 7;
    const int S = 5;
    datm_rng r;
    datm_rng_init(&r, 1, DATM_STREAM_TEST, 0);
    float *obs = calloc((size_t)(N * V), sizeof(float)), *ho = calloc((size_t)(N * V), sizeof(float));
    for (int64_t n = 0; n < N; n++)
        for (int64_t v = 0; v < V; v++) {
            obs[n * V + v] = (float)datm_rng_poisson(&r, 0.3);
            if (n % 9 != 4) ho[n * V + v] = (float)datm_rng_poisson(&r, 0.15);   /* some rows empty */
        }
    /* Phi (V, K) with columns on the simplex */
    float *phi = malloc((size_t)(V * K) * sizeof(float));
    for (int64_t k = 0; k < K; k++) {
        double s = 0;
        for (int64_t v = 0; v < V; v++) s += (phi[v * K + k] = (float)datm_rng_uniform(&r));
        for (int64_t v = 0; v < V; v++) phi[v * K + k] = (float)(phi[v * K + k] / s);
    }
    /* float phi columns sum to 1 only to ~1e-7, so the dense reference is computed twice:
     * normalised by sum_k theta (exactly what the accumulator does, tolerance 1e-10) and by
     * the full row sum over V (the definition; tolerance 1e-5) */
    datm_csr Xo, Xh;
    dense_to_csr(obs, N, V, &Xo);
    dense_to_csr(ho, N, V, &Xh);
    datm_rate_accum a, b, f, g;
    datm_error err;
    float *phi2 = malloc((size_t)(V * K) * sizeof(float));   /* phi at another address */
    memcpy(phi2, phi, (size_t)(V * K) * sizeof(float));
    if (datm_rate_accum_init(&a, &Xo, &Xh, &err) || datm_rate_accum_init(&b, &Xo, &Xh, &err) ||
        datm_rate_accum_init(&f, &Xo, &Xh, &err) || datm_rate_accum_init(&g, &Xo, &Xh, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    CHECK(isnan(datm_rate_accum_perplexity(&a, &Xh)), "no samples must give NAN");
    double *rate = calloc((size_t)(N * V), sizeof(double)), *norm = calloc((size_t)N, sizeof(double));
    float *theta = malloc((size_t)(N * K) * sizeof(float));
    for (int s = 0; s < S; s++) {
        for (int64_t i = 0; i < N * K; i++) theta[i] = (float)datm_rng_gamma(&r, 0.4);
        datm_rate_accum_add(&a, phi, theta, K);
        /* the same sample in three chunks */
        datm_rate_accum_add_rows(&b, phi, theta, K, 0, 10);
        datm_rate_accum_add_rows(&b, phi, theta + 10 * K, K, 10, 20);
        datm_rate_accum_add_rows(&b, phi, theta + 30 * K, K, 30, N - 30);
        CHECK(datm_rate_accum_add_fixed(&f, phi, theta, K, &err) == DATM_OK, "add_fixed");
        if (s == 2) datm_rate_accum_add(&g, phi, theta, K);
        else CHECK(datm_rate_accum_add_fixed(&g, s < 2 ? phi : phi2, theta, K, &err) == DATM_OK, "add_fixed");
        for (int64_t n = 0; n < N; n++) {
            for (int64_t k = 0; k < K; k++) norm[n] += theta[n * K + k];
            for (int64_t v = 0; v < V; v++) {
                double x = 0;
                for (int64_t k = 0; k < K; k++) x += (double)phi[v * K + k] * theta[n * K + k];
                rate[n * V + v] += x;
            }
        }
    }
    CHECK(a.n_samples == S && b.n_samples == S, "n_samples %lld / %lld, want %d",
          (long long)a.n_samples, (long long)b.n_samples, S);
    for (int part = 0; part < 2; part++) {
        const float *y = part ? ho : obs;
        const datm_csr *Y = part ? &Xh : &Xo;
        /* dense rate at every (n, v), normaliser sum_k theta (the accumulator's) */
        double ll = 0, tok = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t v = 0; v < V; v++)
                if (y[n * V + v] > 0) {
                    ll += y[n * V + v] * log(rate[n * V + v] / norm[n]);
                    tok += y[n * V + v];
                }
        double want = exp(-ll / tok);
        double got = datm_rate_accum_perplexity(&a, Y), got_b = datm_rate_accum_perplexity(&b, Y);
        double got_f = datm_rate_accum_perplexity(&f, Y), got_g = datm_rate_accum_perplexity(&g, Y);
        CHECK(fabs(got_f - want) < 1e-10 * want, "fixed part %d: %.17g vs %.17g", part, got_f, want);
        CHECK(fabs(got_g - want) < 1e-10 * want, "mixed part %d: %.17g vs %.17g", part, got_g, want);
        double full = dense_ppl(rate, y, N, V);
        printf("%s: sparse %.12g, dense %.12g (row-sum normalised %.12g)\n",
               part ? "held-out" : "observed", got, want, full);
        CHECK(fabs(got - want) < 1e-10 * want, "part %d: %.17g vs %.17g", part, got, want);
        CHECK(fabs(got_b - want) < 1e-10 * want, "chunked part %d: %.17g vs %.17g", part, got_b, want);
        /* float phi columns sum to 1 within ~1e-6, so the two normalisations agree closely */
        CHECK(fabs(full - want) < 1e-5 * want, "normaliser: %.17g vs %.17g", full, want);
    }
    datm_rate_accum_reset(&a);
    CHECK(a.n_samples == 0 && isnan(datm_rate_accum_perplexity(&a, &Xh)), "reset");
    datm_rate_accum_reset(&f);
    CHECK(f.n_samples == 0 && f.fixed_phi == NULL, "reset of a fixed sum");
    /* after a reset, one fixed sample is scored like one add */
    datm_rate_accum_reset(&b);
    datm_rate_accum_add_fixed(&f, phi, theta, K, &err);
    datm_rate_accum_add(&b, phi, theta, K);
    CHECK(fabs(datm_rate_accum_perplexity(&f, &Xh) / datm_rate_accum_perplexity(&b, &Xh) - 1) < 1e-12,
          "fixed after reset");
    /* obs-only accumulator */
    datm_rate_accum c;
    if (datm_rate_accum_init(&c, &Xo, NULL, &err)) return 1;
    CHECK(c.pattern.nnz == Xo.nnz, "obs-only pattern has %lld entries, obs %lld",
          (long long)c.pattern.nnz, (long long)Xo.nnz);
    datm_rate_accum_free(&c);
    datm_rate_accum_free(&a);
    datm_rate_accum_free(&b);
    datm_rate_accum_free(&f);
    datm_rate_accum_free(&g);
    free(phi2);
    datm_csr_free(&Xo);
    datm_csr_free(&Xh);
    free(obs); free(ho); free(phi); free(rate); free(norm); free(theta);
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
