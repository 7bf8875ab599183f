/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_nn */
/* datm_softplus_f32 and datm_softplus_backward_f32 take entries i and i + n/2 together
 * through datm_vexpf_x2 / datm_vlog1p01f_x2 (engine/nn/vmath.h). Checks, bit for bit, that
 * every entry equals the one-entry forms (datm_vexpf, datm_vlog1p01f) applied alone, for
 * odd and even n (the last entry of an odd n goes alone), small n, inputs from -100 to 100
 * with the extremes and signed zeros, and the in-place backward (dz = dy) the encoder uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn.h"
#include "nn/vmath.h"
#include "test_check.h"

static float ref_softplus(float v)
{
    float a = v < 0 ? -v : v;
    return (v > 0 ? v : 0.0f) + datm_vlog1p01f(datm_vexpf(-a));
}

static float ref_softplus_back(float v, float dy)
{
    float a = v < 0 ? -v : v;
    float e = datm_vexpf(-a);
    float num = v >= 0 ? 1.0f : e;
    return dy * num / (1.0f + e);
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

int main(void)
{
    const int64_t sizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 127, 6400, 6401};
    const int64_t nmax = 6401;
    float *z = malloc((size_t)nmax * sizeof *z), *y = malloc((size_t)nmax * sizeof *y);
    float *dy = malloc((size_t)nmax * sizeof *dy), *dz = malloc((size_t)nmax * sizeof *dz);
    if (!z || !y || !dy || !dz) return 1;
    unsigned st = 12345u;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int64_t n = sizes[si];
        for (int64_t i = 0; i < n; i++) {
            st = st * 1664525u + 1013904223u;
            const float u = (float)(st >> 8) / 16777216.0f;     /* [0, 1) */
            z[i] = -100.0f + 200.0f * u * u * u;                 /* dense near -100 and 0 */
            if (i % 7 == 0) z[i] = (i % 2 ? -1.0f : 1.0f) * (float)(i % 23) * 0.25f;
            st = st * 1664525u + 1013904223u;
            dy[i] = ((float)(st >> 8) / 16777216.0f - 0.5f) * 4.0f;
        }
        if (n > 4) { z[0] = 0.0f; z[1] = -0.0f; z[2] = 88.7f; z[3] = -200.0f; z[4] = 1e-30f; }
        datm_softplus_f32(n, z, y);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) bad += !same_bits(y[i], ref_softplus(z[i]));
        CHECK(bad == 0, "softplus n = %lld: %d entries differ from the one-entry form",
              (long long)n, bad);
        datm_softplus_backward_f32(n, z, dy, dz);
        bad = 0;
        for (int64_t i = 0; i < n; i++) bad += !same_bits(dz[i], ref_softplus_back(z[i], dy[i]));
        CHECK(bad == 0, "softplus backward n = %lld: %d entries differ", (long long)n, bad);
        /* in place: dz = dy */
        memcpy(dz, dy, (size_t)n * sizeof *dz);
        datm_softplus_backward_f32(n, z, dz, dz);
        bad = 0;
        for (int64_t i = 0; i < n; i++) bad += !same_bits(dz[i], ref_softplus_back(z[i], dy[i]));
        CHECK(bad == 0, "in-place softplus backward n = %lld: %d entries differ", (long long)n, bad);
        /* and sanity against libm (the forms themselves are tested in test_nn_vmath) */
        double maxrel = 0;
        for (int64_t i = 0; i < n; i++) {
            const double v = z[i], r = (v > 0 ? v : 0.0) + log1p(exp(-fabs(v)));
            if (r > 1e-30) maxrel = fmax(maxrel, fabs(y[i] - r) / r);
        }
        CHECK(maxrel < 1e-6, "softplus n = %lld: rel. error %.3g vs libm", (long long)n, maxrel);
    }
    free(z); free(y); free(dy); free(dz);
    if (fails) return 1;
    printf("test_nn_softplus_x2: ok\n");
    return 0;
}
