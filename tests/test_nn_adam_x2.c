/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_nn */
/* datm_adam_step takes entries i and i + size/2 together (their square roots through
 * datm_vsqrtf_x2, engine/nn/vmath.h). Checks, bit for bit over several steps, that the
 * parameters and both moments equal a one-entry-at-a-time implementation of the same
 * operations (datm_vsqrtf), and the count of non-finite gradient entries, for odd and even
 * sizes (the last entry of an odd size goes alone), with NaN/Inf gradient entries, with and
 * without clipping, above and below the size where the step runs over OpenMP threads.
 * datm_adam_step_range too: three copies of the state (as three MPI ranks hold), each
 * stepping its own uneven range of the entries, together equal the one-entry form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/vmath.h"
#include "test_check.h"

/* One entry at a time: Kingma & Ba with both bias corrections folded into the step and eps,
 * non-finite entries skipped, as documented in nn.h. */
static int64_t ref_step(datm_adam *a, float *x, const float *g)
{
    a->t++;
    const float b1 = (float)a->beta1, b2 = (float)a->beta2;
    const double c1 = 1.0 - pow(a->beta1, (double)a->t);
    const double c2 = 1.0 - pow(a->beta2, (double)a->t);
    const float step = (float)(a->lr * sqrt(c2) / c1);
    const float eps = (float)(a->eps * sqrt(c2));
    const float clip = (float)a->clip > 0 ? (float)a->clip : INFINITY;
    int64_t bad = 0;
    for (int64_t i = 0; i < a->size; i++) {
        float gi = g[i];
        int fin = (gi - gi) == 0.0f;
        bad += !fin;
        if (!fin) continue;
        gi = gi < clip ? gi : clip;
        gi = gi > -clip ? gi : -clip;
        float mi = b1 * a->m[i] + (1.0f - b1) * gi;
        float vi = b2 * a->v[i] + (1.0f - b2) * gi * gi;
        a->m[i] = mi;
        a->v[i] = vi;
        x[i] -= 1.0f * step * mi / (datm_vsqrtf(vi) + eps);
    }
    return bad;
}

int main(void)
{
    const int64_t sizes[] = {1, 2, 3, 17, 1000, 1001, 300001, 300002};
    datm_error err;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int clip = 0; clip < 2; clip++) {
            const int64_t n = sizes[si];
            datm_adam a, r, p[3];
            if (datm_adam_init(&a, n, 1e-3, 0.9, 0.999, 1e-8, &err) ||
                datm_adam_init(&r, n, 1e-3, 0.9, 0.999, 1e-8, &err))
                return 1;
            for (int q = 0; q < 3; q++) {
                if (datm_adam_init(&p[q], n, 1e-3, 0.9, 0.999, 1e-8, &err)) return 1;
                p[q].clip = clip ? 0.05 : 0.0;
            }
            /* the three ranges: [0, n/5), [n/5, n/2), [n/2, n) */
            const int64_t cut[4] = {0, n / 5, n / 2, n};
            a.clip = r.clip = clip ? 0.05 : 0.0;
            float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
            float *g = malloc((size_t)n * sizeof *g), *z = malloc((size_t)n * sizeof *z);
            float *pm = malloc((size_t)n * sizeof *pm), *pv = malloc((size_t)n * sizeof *pv);
            if (!x || !y || !g || !z || !pm || !pv) return 1;
            unsigned st = 99u + (unsigned)si;
            for (int64_t i = 0; i < n; i++) {
                st = st * 1664525u + 1013904223u;
                x[i] = y[i] = z[i] = ((float)(st >> 8) / 16777216.0f - 0.5f);
            }
            for (int step = 0; step < 4; step++) {
                for (int64_t i = 0; i < n; i++) {
                    st = st * 1664525u + 1013904223u;
                    g[i] = ((float)(st >> 8) / 16777216.0f - 0.5f) * 0.3f;
                    if (i % 97 == 5) g[i] = (step % 2) ? NAN : INFINITY;
                    if (i % 89 == 3) g[i] = 0.0f;
                }
                const int64_t b1 = datm_adam_step(&a, x, g), b2 = ref_step(&r, y, g);
                CHECK(b1 == b2, "size %lld clip %d step %d: %lld non-finite counted, expected %lld",
                      (long long)n, clip, step, (long long)b1, (long long)b2);
                CHECK(memcmp(x, y, (size_t)n * sizeof *x) == 0 &&
                          memcmp(a.m, r.m, (size_t)n * sizeof *x) == 0 &&
                          memcmp(a.v, r.v, (size_t)n * sizeof *x) == 0,
                      "size %lld clip %d step %d: parameters or moments differ from the one-entry "
                      "form", (long long)n, clip, step);
                int64_t b3 = 0;
                for (int q = 0; q < 3; q++) {
                    b3 += datm_adam_step_range(&p[q], z, g, cut[q], cut[q + 1]);
                    memcpy(pm + cut[q], p[q].m + cut[q], (size_t)(cut[q + 1] - cut[q]) * sizeof *pm);
                    memcpy(pv + cut[q], p[q].v + cut[q], (size_t)(cut[q + 1] - cut[q]) * sizeof *pv);
                }
                CHECK(b3 == b2 && memcmp(z, y, (size_t)n * sizeof *z) == 0 &&
                          memcmp(pm, r.m, (size_t)n * sizeof *z) == 0 &&
                          memcmp(pv, r.v, (size_t)n * sizeof *z) == 0,
                      "size %lld clip %d step %d: three ranges stepped apart differ from the "
                      "one-entry form (%lld non-finite counted)", (long long)n, clip, step,
                      (long long)b3);
            }
            datm_adam_free(&a);
            datm_adam_free(&r);
            for (int q = 0; q < 3; q++) datm_adam_free(&p[q]);
            free(x); free(y); free(g); free(z); free(pm); free(pv);
        }
    }
    if (fails) return 1;
    printf("test_nn_adam_x2: ok\n");
    return 0;
}
