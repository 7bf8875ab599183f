/* engine/data/split.c: the seeded per-document token split (docs/reference.md 4.5,
 * "token-split"): each token of document n goes to the observed part with probability
 * obs_frac, independently, drawing from the stream (seed, DATM_STREAM_SPLIT, n), so the split
 * is the same for any thread count and any document order. A non-empty document always
 * keeps at least one observed token (one token chosen uniformly is moved back if needed).
 * Letters: N documents, V words. */
#include "data/data.h"

#include <math.h>
#include <string.h>

#include "rand/rand.h"

/* Binomial(t, p) draw, exact. Small t: count uniforms below p. Large t: the order-statistic
 * recursion (Knuth, TAOCP vol. 2, 3.4.1): the a-th smallest of t uniforms is Beta(a, t-a+1);
 * conditioning on it leaves a binomial of about half the size. */
static int64_t binomial(datm_rng *r, int64_t t, double p)
{
    int64_t acc = 0;
    while (t > 64) {
        if (p <= 0.0) return acc;
        if (p >= 1.0) return acc + t;
        int64_t a = 1 + t / 2, b = t - a + 1;
        double x = datm_rng_beta(r, (double)a, (double)b);
        if (x >= p) {
            t = a - 1;
            p = p / x;
        } else {
            acc += a;
            t = b - 1;
            p = (p - x) / (1.0 - x);
        }
    }
    for (int64_t i = 0; i < t; i++) acc += datm_rng_uniform(r) < p;
    return acc;
}

/* The split of the rows with keep[n] != 0 (keep NULL: all; the others are left empty), into
 * obs and, unless NULL, heldout (only without keep) for its first n_held rows (n_held < 0:
 * all; the later held-out rows are left empty, their draws made all the same, so obs does not
 * change). */
static int split_rows(const datm_csr *X, int64_t first_doc, int parallel, const uint8_t *keep,
                      double obs_frac, uint64_t seed, int64_t n_held, datm_csr *obs,
                      datm_csr *heldout, datm_error *err)
{
    DATM_ASSERT(X && obs && !(keep && heldout));
    memset(obs, 0, sizeof *obs);
    if (heldout) memset(heldout, 0, sizeof *heldout);
    if (!(obs_frac >= 0.0 && obs_frac <= 1.0))
        return datm_error_set(err, DATM_E_INVALID, "token split: obs_frac = %.9g not in [0, 1]",
                              obs_frac);
    const int64_t N = X->n_rows;
    for (int64_t j = 0; j < X->nnz; j++)
        if (!(X->val[j] >= 1.0f && X->val[j] == floorf(X->val[j])))
            return datm_error_set(err, DATM_E_INVALID,
                                  "token split: entry %lld has value %.9g; counts must be positive integers",
                                  (long long)j, (double)X->val[j]);
    float *ov = datm_alloc_array((size_t)DATM_MAX(X->nnz, 1), sizeof *ov, err);   /* (nnz) */
    if (!ov) return err ? err->code : DATM_E_NOMEM;

    #pragma omp parallel for schedule(dynamic, 256) if (parallel)
    for (int64_t n = 0; n < N; n++) {
        datm_rng r;
        datm_rng_init(&r, seed, DATM_STREAM_SPLIT, (uint64_t)(first_doc + n));
        int64_t a = X->row_ptr[n], b = X->row_ptr[n + 1], kept = 0, total = 0;
        if (keep && !keep[n]) {   /* not wanted: no draws, the row left empty */
            for (int64_t j = a; j < b; j++) ov[j] = 0.0f;
            continue;
        }
        for (int64_t j = a; j < b; j++) {
            int64_t c = (int64_t)X->val[j];
            int64_t k = binomial(&r, c, obs_frac);
            ov[j] = (float)k;
            kept += k;
            total += c;
        }
        if (kept == 0 && total > 0) {   /* move one uniformly chosen token to obs */
            int64_t t = (int64_t)datm_rng_below(&r, (uint64_t)total);
            for (int64_t j = a; j < b; j++) {
                t -= (int64_t)X->val[j];
                if (t < 0) { ov[j] = 1.0f; break; }
            }
        }
    }

    if (n_held < 0 || n_held > N) n_held = N;
    const int64_t nnz_held_rows = X->row_ptr[n_held];   /* entries of the first n_held rows */
    int64_t nnz_o = 0, nnz_h = 0;
    for (int64_t j = 0; j < X->nnz; j++) {
        nnz_o += ov[j] > 0.0f;
        nnz_h += j < nnz_held_rows && ov[j] < X->val[j];
    }
    int rc = datm_csr_alloc(obs, N, X->n_cols, nnz_o, err);
    if (!rc && heldout) rc = datm_csr_alloc(heldout, N, X->n_cols, nnz_h, err);
    if (rc) {
        datm_csr_free(obs);
        datm_free(ov);
        return rc;
    }
    int64_t po = 0, ph = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t j = X->row_ptr[n]; j < X->row_ptr[n + 1]; j++) {
            if (ov[j] > 0.0f) { obs->col[po] = X->col[j]; obs->val[po++] = ov[j]; }
            if (heldout && n < n_held && ov[j] < X->val[j]) {
                heldout->col[ph] = X->col[j];
                heldout->val[ph++] = X->val[j] - ov[j];
            }
        }
        obs->row_ptr[n + 1] = po;
        if (heldout) heldout->row_ptr[n + 1] = ph;
    }
    datm_free(ov);
    return DATM_OK;
}

int datm_token_split_rows(const datm_csr *X, int64_t first_doc, int parallel, double obs_frac,
                          uint64_t seed, datm_csr *obs, datm_csr *heldout, datm_error *err)
{
    DATM_ASSERT(heldout);
    return split_rows(X, first_doc, parallel, NULL, obs_frac, seed, -1, obs, heldout, err);
}

int datm_token_split_rows_obs(const datm_csr *X, int64_t first_doc, const uint8_t *keep,
                              double obs_frac, uint64_t seed, datm_csr *obs, datm_error *err)
{
    return split_rows(X, first_doc, 0, keep, obs_frac, seed, -1, obs, NULL, err);
}

int datm_token_split(const datm_csr *X, double obs_frac, uint64_t seed, datm_csr *obs,
                     datm_csr *heldout, datm_error *err)
{
    return datm_token_split_rows(X, 0, 1, obs_frac, seed, obs, heldout, err);
}

int datm_token_split_held_first(const datm_csr *X, double obs_frac, uint64_t seed,
                                int64_t n_held, datm_csr *obs, datm_csr *heldout,
                                datm_error *err)
{
    DATM_ASSERT(heldout);
    return split_rows(X, 0, 1, NULL, obs_frac, seed, n_held, obs, heldout, err);
}
