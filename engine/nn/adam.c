/* engine/nn/adam.c: Adam with bias correction (Kingma & Ba 2015, Algorithm 1) over a flat
 * parameter block; optional element-wise gradient clipping (some reference WHAI codes clip;
 * docs/reference.md 2.3). */
#include <math.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/vmath.h"

int datm_adam_init(datm_adam *a, int64_t size, double lr, double beta1, double beta2,
                   double eps, datm_error *err)
{
    memset(a, 0, sizeof *a);
    if (!(lr > 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps > 0))
        return datm_error_set(err, DATM_E_INVALID,
                              "adam: bad hyper-parameters lr=%.9g beta1=%.9g beta2=%.9g eps=%.9g",
                              lr, beta1, beta2, eps);
    a->lr = lr;
    a->beta1 = beta1;
    a->beta2 = beta2;
    a->eps = eps;
    a->size = size;
    a->m = datm_alloc_array((size_t)size, sizeof(float), err);
    a->v = datm_alloc_array((size_t)size, sizeof(float), err);
    if (!a->m || !a->v) {
        datm_adam_free(a);
        return err ? err->code : DATM_E_NOMEM;
    }
    return DATM_OK;
}

void datm_adam_free(datm_adam *a)
{
    if (!a) return;
    datm_free(a->m);
    datm_free(a->v);
    memset(a, 0, sizeof *a);
}

/* The rms_clip path (a separate loop so the default one keeps its speed and its values).
 * Why a clip relative to each entry's own history: after many steps of small gradients, v
 * lags a sudden run of large ones by ~1 / (1 - b2) steps, and for that long Adam's steps are
 * several times lr wherever the new gradient is coherent, on every entry at once. Bounding
 * g_i by a multiple of its running RMS caps how fast the update can outgrow its history
 * while v still adapts to a lasting change (by a factor up to 1 + (1 - b2)(rms_clip^2 - 1)
 * per step). Not in the paper or Kingma & Ba; the gradient clipping by a running norm of,
 * e.g., Adafactor (Shazeer & Stern 2018, section 6) is the same idea applied to the update. */
static int64_t adam_step_rms(datm_adam *a, float *x, const float *g, int64_t i0, int64_t i1,
                             float step, float eps)
{
    const float b1 = (float)a->beta1, b2 = (float)a->beta2;
    const float clip = (float)a->clip > 0 ? (float)a->clip : INFINITY;
    /* bias correction of v before this step (t - 1 steps taken); 0 on the first step */
    const double cprev = 1.0 - pow(a->beta2, (double)(a->t - 1));
    const float rc = cprev > 0 ? (float)(a->rms_clip / sqrt(cprev)) : 0.0f;
    float *m = a->m, *v = a->v;
    int64_t bad = 0, cut = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad, cut) if (i1 - i0 > 262144)
    for (int64_t i = i0; i < i1; i++) {
        float gi = g[i];
        if (!((gi - gi) == 0.0f)) {   /* NaN or +-Inf: the entry is left alone */
            bad++;
            continue;
        }
        gi = gi < clip ? gi : clip;
        gi = gi > -clip ? gi : -clip;
        const float lim = rc * sqrtf(v[i]);
        if (lim > 0 && fabsf(gi) > lim) {
            gi = gi > 0 ? lim : -lim;
            cut++;
        }
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        x[i] -= step * m[i] / (sqrtf(v[i]) + eps);
    }
    a->n_clipped += cut;
    return bad;
}

int64_t datm_adam_step(datm_adam *a, float *x, const float *g)
{
    return datm_adam_step_range(a, x, g, 0, a->size);
}

DATM_VEC_CLONES
int64_t datm_adam_step_range(datm_adam *a, float *x, const float *g, int64_t i0, int64_t i1)
{
    DATM_ASSERT(i0 >= 0 && i0 <= i1 && i1 <= a->size);
    a->t++;
    const float b1 = (float)a->beta1, b2 = (float)a->beta2;
    /* Fold both bias corrections into one step size and the epsilon (exact algebra). */
    const double c1 = 1.0 - pow(a->beta1, (double)a->t);
    const double c2 = 1.0 - pow(a->beta2, (double)a->t);
    const float step = (float)(a->lr * sqrt(c2) / c1);
    const float eps = (float)(a->eps * sqrt(c2));
    if (a->rms_clip > 0) return adam_step_rms(a, x, g, i0, i1, step, eps);
    const float clip = (float)a->clip > 0 ? (float)a->clip : INFINITY;
    /* the range as a block of its own (the pairing below is within it) */
    const int64_t size = i1 - i0;
    float *m = a->m + i0, *v = a->v + i0;
    x += i0;
    g += i0;
    int64_t bad = 0;
    /* branch-free (vectorised): a non-finite gradient entry leaves its parameter and moments
     * untouched (keep = 0) and is counted. Entries i and i + size/2 go together, their square
     * roots through datm_vsqrtf_x2 (two Newton chains in flight, ~14% faster); each entry
     * gets the operations of the one-entry form (tests/test_nn_adam_x2.c, bit for bit). */
    const int64_t h = size / 2;
#pragma omp parallel for simd schedule(static) reduction(+ : bad) if (size > 262144)
    for (int64_t i = 0; i < h; i++) {
        const int64_t j = i + h;
        float gi = g[i], gj = g[j];
        const int fi = (gi - gi) == 0.0f, fj = (gj - gj) == 0.0f;   /* false for NaN, +-Inf */
        bad += !fi;
        bad += !fj;
        gi = fi ? gi : 0.0f;
        gj = fj ? gj : 0.0f;
        gi = gi < clip ? gi : clip;
        gj = gj < clip ? gj : clip;
        gi = gi > -clip ? gi : -clip;
        gj = gj > -clip ? gj : -clip;
        const float mi = b1 * m[i] + (1.0f - b1) * gi, mj = b1 * m[j] + (1.0f - b1) * gj;
        const float vi = b2 * v[i] + (1.0f - b2) * gi * gi, vj = b2 * v[j] + (1.0f - b2) * gj * gj;
        const float ki = (float)fi, kj = (float)fj;
        m[i] = fi ? mi : m[i];
        m[j] = fj ? mj : m[j];
        v[i] = fi ? vi : v[i];
        v[j] = fj ? vj : v[j];
        float si, sj;
        datm_vsqrtf_x2(vi, vj, &si, &sj);
        x[i] -= ki * step * mi / (si + eps);
        x[j] -= kj * step * mj / (sj + eps);
    }
    for (int64_t i = 2 * h; i < size; i++) {   /* odd size: the last entry alone */
        float gi = g[i];
        int fin = (gi - gi) == 0.0f;
        bad += !fin;
        gi = fin ? gi : 0.0f;
        gi = gi < clip ? gi : clip;
        gi = gi > -clip ? gi : -clip;
        float mi = b1 * m[i] + (1.0f - b1) * gi;
        float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        float keep = (float)fin;
        m[i] = fin ? mi : m[i];
        v[i] = fin ? vi : v[i];
        x[i] -= keep * step * mi / (datm_vsqrtf(vi) + eps);
    }
    return bad;
}
