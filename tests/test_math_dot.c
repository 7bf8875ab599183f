/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_math */
/* tests/test_math_dot.c: datm_dot_f32_f64 (engine/math/dot.c) for n = 0 .. 300: equal bit for
 * bit to the stated order (8 partial sums k mod 8, combined ((0+4)+(1+5))+((2+6)+(3+7))) written
 * out plainly here, and within 1e-15 of sum |a b| of a long-double reference. Prints its
 * speed against the one-chain loop at n = 128. */
#include <math.h>
#include <stdio.h>

#include "core/core.h"
#include "math/math.h"
#include "rand/rand.h"

static double order_ref(const float *a, const float *b, int n)
{
    double s[8] = {0};
    for (int k = 0; k < n; k++) s[k % 8] += (double)a[k] * (double)b[k];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

static double chain(const float *a, const float *b, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (double)a[k] * b[k];
    return s;
}

int main(void)
{
    enum { NMAX = 301 };
    static float a[NMAX], b[NMAX];
    datm_rng r;
    datm_rng_init(&r, 3, DATM_STREAM_TEST, 9);
    int fails = 0;
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < NMAX; i++) {
            a[i] = (float)(datm_rng_uniform(&r) * 2 - 1);
            b[i] = (float)datm_rng_uniform(&r);
        }
        for (int n = 0; n < NMAX; n++) {
            double v = datm_dot_f32_f64(a, b, n);
            long double ex = 0, mag = 0;
            for (int k = 0; k < n; k++) {
                ex += (long double)a[k] * b[k];
                mag += fabsl((long double)a[k] * b[k]);
            }
            if (v != order_ref(a, b, n) || fabsl(v - ex) > 1e-15L * mag) {
                if (fails++ < 10)
                    printf("FAIL n %d: %.17g, order %.17g, exact %.17Lg\n", n, v, order_ref(a, b, n), ex);
            }
        }
    }
    double sink = 0, t[2] = {1e30, 1e30};
    for (int rep = 0; rep < 10; rep++) {
        double t0 = datm_time_now();
        for (int i = 0; i < 20000; i++) sink += datm_dot_f32_f64(a + (i & 7), b, 128);
        double t1 = datm_time_now();
        for (int i = 0; i < 20000; i++) sink += chain(a + (i & 7), b, 128);
        double t2 = datm_time_now();
        t[0] = fmin(t[0], t1 - t0);
        t[1] = fmin(t[1], t2 - t1);
    }
    printf("  n = 128: %.1f ns per dot (one chain: %.1f ns) [%g]\n", t[0] / 20000 * 1e9,
           t[1] / 20000 * 1e9, sink > 0 ? 1.0 : 0.0);
    printf(fails ? "FAILED\n" : "ok\n");
    return fails ? 1 : 0;
}
