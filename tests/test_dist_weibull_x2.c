/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_dist */
/* datm_weibull_reparam_f32 and datm_weibull_kl_f32 (with all derivatives) take entries i and
 * i + n/2 together through datm_vlogf_x2 / datm_vexpf_x2 (engine/nn/vmath.h). Checks, bit for
 * bit, that theta and both derivatives of every entry equal the one-entry forms (datm_vlogf,
 * datm_vexpf) applied alone, with and without the derivatives, and that KL and its three
 * derivatives equal the one-entry forms (datm_vgamma_digammaf, datm_vlgamma_digammaf,
 * datm_vlogf), for odd and even n (the last entry of an odd n goes alone) and small n, at
 * shapes across the clamp range [0.1, 10], noise over (0, 1), prior shapes from 1e-4 to 50. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/weibull.h"
#include "math/math.h"
#include "nn/vmath.h"
#include "test_check.h"

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

int main(void)
{
    const int64_t sizes[] = {1, 2, 3, 9, 16, 17, 33, 127, 6400, 6401};
    const int64_t nmax = 6401;
    float *k = malloc((size_t)nmax * sizeof *k), *lam = malloc((size_t)nmax * sizeof *lam);
    float *u = malloc((size_t)nmax * sizeof *u), *th = malloc((size_t)nmax * sizeof *th);
    float *dk = malloc((size_t)nmax * sizeof *dk), *dl = malloc((size_t)nmax * sizeof *dl);
    float *th2 = malloc((size_t)nmax * sizeof *th2), *al = malloc((size_t)nmax * sizeof *al);
    float *kl = malloc((size_t)nmax * sizeof *kl), *da = malloc((size_t)nmax * sizeof *da);
    if (!k || !lam || !u || !th || !dk || !dl || !th2 || !al || !kl || !da) return 1;
    const float eg = (float)DATM_EULER_GAMMA;
    unsigned st = 777u;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int64_t n = sizes[si];
        for (int64_t i = 0; i < n; i++) {
            st = st * 1664525u + 1013904223u;
            k[i] = 0.1f * powf(100.0f, (float)(st >> 8) / 16777216.0f);   /* [0.1, 10) */
            st = st * 1664525u + 1013904223u;
            lam[i] = 1e-4f + 5.0f * (float)(st >> 8) / 16777216.0f;
            st = st * 1664525u + 1013904223u;
            u[i] = (2.0f * (float)(st >> 9) + 1.0f) * 0x1p-24f;             /* (0, 1) like the rng */
            st = st * 1664525u + 1013904223u;
            al[i] = 1e-4f * powf(5e5f, (float)(st >> 8) / 16777216.0f);      /* [1e-4, 50) */
        }
        datm_weibull_reparam_f32(n, k, lam, u, th, dk, dl);
        datm_weibull_reparam_f32(n, k, lam, u, th2, NULL, NULL);
        int bad = 0, bad2 = 0;
        double maxrel = 0;
        for (int64_t i = 0; i < n; i++) {
            const float lt = datm_vlogf(-datm_vlogf(1.0f - u[i])), ik = 1.0f / k[i];
            const float e = datm_vexpf(lt * ik), t = lam[i] * e;
            bad += !same_bits(th[i], t) || !same_bits(dk[i], -t * lt * ik * ik) ||
                   !same_bits(dl[i], e);
            bad2 += !same_bits(th2[i], lam[i] * datm_vexpf(lt / k[i]));
            const double ref = lam[i] * pow(-log1p(-(double)u[i]), 1.0 / k[i]);
            if (ref > 1e-30 && ref < 1e30)   /* float range (vexpf clamps below e^-87.3) */
                maxrel = fmax(maxrel, fabs(th[i] - ref) / ref);
        }
        CHECK(bad == 0, "n = %lld: %d entries (theta, dk, dlam) differ from the one-entry form",
              (long long)n, bad);
        CHECK(bad2 == 0, "n = %lld, no derivatives: %d entries differ", (long long)n, bad2);
        CHECK(maxrel < 1e-4, "n = %lld: rel. error %.3g vs the double reference", (long long)n,
              maxrel);
        datm_weibull_kl_f32(n, k, lam, al, kl, dk, dl, da);
        bad = 0;
        double maxabs = 0;
        for (int64_t i = 0; i < n; i++) {
            const float ik = 1.0f / k[i], a = al[i], l = lam[i];
            float g, pg, lga, pga;
            datm_vgamma_digammaf(1.0f + ik, &g, &pg);
            datm_vlgamma_digammaf(a, &lga, &pga);
            const float ll = datm_vlogf(l);
            const float r = -a * ll + eg * a * ik + datm_vlogf(k[i]) + l * g - eg - 1.0f + lga;
            bad += !same_bits(kl[i], r) ||
                   !same_bits(dk[i], ik - eg * a * ik * ik - l * g * pg * ik * ik) ||
                   !same_bits(dl[i], -a / l + g) || !same_bits(da[i], -ll + eg * ik + pga);
            const double ref = datm_weibull_gamma_kl(k[i], l, a, 1.0, NULL, NULL, NULL, NULL);
            maxabs = fmax(maxabs, fabs(kl[i] - ref) / fmax(1.0, fabs(ref)));
        }
        CHECK(bad == 0, "KL n = %lld: %d entries (KL or a derivative) differ from the one-entry "
              "form", (long long)n, bad);
        CHECK(maxabs < 1e-3, "KL n = %lld: error %.3g vs the double reference", (long long)n,
              maxabs);
    }
    free(k); free(lam); free(u); free(th); free(dk); free(dl); free(th2); free(al); free(kl);
    free(da);
    if (fails) return 1;
    printf("test_dist_weibull_x2: ok\n");
    return 0;
}
