/* engine/math/dot.c: float . float dot products accumulated in double, in a fixed order
 * that vectorises (8 partial sums, k mod 8), for the Poisson rates of evaluation:
 * sum_k phi_vk theta_k over K = 128 for every scored (document, word) entry. A plain
 * `s += (double)a[k] * b[k]` is one chain of K dependent double additions (4 cycles each):
 * it cannot be vectorised without changing its rounding, so it runs at ~1 flop per cycle. */
#include "math/math.h"

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
double datm_dot_f32_f64(const float *a, const float *b, int64_t n)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 8 <= n; k += 8)
        for (int j = 0; j < 8; j++) s[j] += (double)a[k + j] * (double)b[k + j];
    for (int j = 0; k < n; k++, j++) s[j] += (double)a[k] * (double)b[k];
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}
