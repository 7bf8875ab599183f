/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_nn */
/* Parameter block layout (alignment, named views) and Adam: the bias-corrected first step
 * has size lr in every coordinate; Adam matches a double-precision reference of Kingma & Ba
 * Alg. 1 over many steps; it minimises a badly scaled quadratic; the grad_clip_rms path matches a
 * reference that clips each entry by its running RMS; non-finite gradients are
 * skipped and counted; the gradient checker flags a wrong gradient. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/nn.h"
#include "test_check.h"


static double quad(void *ctx, const double *x, double *g)
{
    (void)ctx;
    double f = 0;
    for (int i = 0; i < 3; i++) {
        f += (i + 1) * x[i] * x[i] * x[i];
        if (g) g[i] = 3 * (i + 1) * x[i] * x[i] * (i == 2 ? 1.01 : 1.0);  /* 1% wrong at 2 */
    }
    return f;
}

int main(void)
{
    datm_error err;
    datm_params p;
    memset(&p, 0, sizeof p);
    int a = datm_params_add(&p, "a", 3, 5, &err);
    int b = datm_params_add(&p, "b", 1, 7, &err);
    int c = datm_params_add(&p, "c", 2, 2, &err);
    CHECK(a == 0 && b == 1 && c == 2, "view indices");
    CHECK(datm_params_add(&p, "b", 1, 1, &err) == -1, "duplicate name accepted");
    CHECK(datm_params_add(&p, "z", 0, 1, &err) == -1, "empty view accepted");
    CHECK(datm_params_alloc(&p, &err) == 0, "alloc");
    for (int i = 0; i < p.n_views; i++) {
        CHECK(p.views[i].offset % 16 == 0, "view %d offset %lld", i, (long long)p.views[i].offset);
        CHECK(((uintptr_t)datm_params_value(&p, i) & 63) == 0, "view %d not 64-byte aligned", i);
    }
    CHECK(datm_params_find(&p, "c") == c && datm_params_find(&p, "nope") == -1, "find");
    CHECK(datm_params_count(&p) == 15 + 7 + 4, "count %lld", (long long)datm_params_count(&p));
    CHECK(p.views[1].offset >= 15 && p.views[2].offset >= p.views[1].offset + 7, "overlap");

    /* Adam vs a double reference */
    enum { N = 50 };
    datm_adam ad;
    CHECK(datm_adam_init(&ad, N, 0.01, 0.9, 0.999, 1e-8, &err) == 0, "adam init");
    float x[N], g[N];
    double m[N] = {0}, v[N] = {0};
    datm_rng rng;
    datm_rng_init(&rng, 3, DATM_STREAM_TEST, 0);
    for (int i = 0; i < N; i++) x[i] = (float)datm_rng_normal(&rng);
    for (int t = 1; t <= 1000; t++) {
        for (int i = 0; i < N; i++) g[i] = (float)((i % 7 + 1) * x[i] + 0.1 * datm_rng_normal(&rng));
        float x_before[N];
        memcpy(x_before, x, sizeof x);
        datm_adam_step(&ad, x, g);
        for (int i = 0; i < N; i++) {
            m[i] = 0.9 * m[i] + 0.1 * g[i];
            v[i] = 0.999 * v[i] + 0.001 * (double)g[i] * g[i];
            double mh = m[i] / (1 - pow(0.9, t)), vh = v[i] / (1 - pow(0.999, t));
            double step = 0.01 * mh / (sqrt(vh) + 1e-8);
            if (t == 1) CHECK(fabs(fabs(step) - 0.01) < 1e-6, "first step %g", step);
            CHECK(fabs((x_before[i] - x[i]) - step) < 1e-6, "step %d/%d: %.9g vs %.9g", t, i,
                  x_before[i] - x[i], step);
        }
    }
    double norm = 0;
    for (int i = 0; i < N; i++) norm = fmax(norm, fabs(x[i]));
    CHECK(norm < 0.2, "Adam did not approach the minimum: max |x| %g", norm);
    /* non-finite gradients are skipped */
    g[0] = NAN; g[1] = INFINITY;
    for (int i = 2; i < N; i++) g[i] = 1;
    float x0 = x[0], x1 = x[1];
    CHECK(datm_adam_step(&ad, x, g) == 2, "non-finite count");
    CHECK(x[0] == x0 && x[1] == x1, "non-finite entries moved");
    datm_adam_free(&ad);
    datm_params_free(&p);

    /* grad_clip_rms: against a double reference that clips g_i to c sqrt(v_i / (1 - b2^(t-1)))
     * before the step; small gradients for 200 steps, then a run 50x as large */
    {
        const double c = 3;
        CHECK(datm_adam_init(&ad, N, 0.01, 0.9, 0.999, 1e-8, &err) == 0, "adam init");
        ad.rms_clip = c;
        double xr[N], mr[N] = {0}, vr[N] = {0};
        int64_t cut_ref = 0;
        for (int i = 0; i < N; i++) xr[i] = x[i] = (float)datm_rng_normal(&rng);
        for (int t = 1; t <= 260; t++) {
            for (int i = 0; i < N; i++)
                g[i] = (float)((t > 200 ? 50.0 : 1.0) * (0.3 + 0.1 * datm_rng_normal(&rng)));
            datm_adam_step(&ad, x, g);
            const double cp = 1 - pow(0.999, t - 1);
            for (int i = 0; i < N; i++) {
                double gi = g[i];
                if (cp > 0 && vr[i] > 0) {
                    const double lim = c * sqrt(vr[i] / cp);
                    if (fabs(gi) > lim) { gi = gi > 0 ? lim : -lim; cut_ref++; }
                }
                mr[i] = 0.9 * mr[i] + 0.1 * gi;
                vr[i] = 0.999 * vr[i] + 0.001 * gi * gi;
                xr[i] -= 0.01 * (mr[i] / (1 - pow(0.9, t))) / (sqrt(vr[i] / (1 - pow(0.999, t))) + 1e-8);
            }
        }
        double dmax = 0;
        for (int i = 0; i < N; i++) dmax = fmax(dmax, fabs(x[i] - xr[i]));
        CHECK(dmax < 1e-4, "rms clip: max |x - reference| %g", dmax);
        /* the jump at t = 201 is clipped on every entry; v catches up within the run */
        CHECK(ad.n_clipped == cut_ref && cut_ref >= N && cut_ref < 60 * N,
              "rms clip: %lld clipped, reference %lld", (long long)ad.n_clipped, (long long)cut_ref);
        datm_adam_free(&ad);
    }

    /* the checker sees a 1% error in one coordinate and not in the others */
    double xq[3] = {0.5, -1.2, 0.8};
    datm_gradcheck r;
    int64_t idx01[2] = {0, 1};
    datm_gradcheck_f64(quad, NULL, xq, 3, idx01, 2, 1e-4, 1e-12, &r, &err);
    CHECK(r.max_rel_err < 1e-9, "exact coordinates flagged: %g", r.max_rel_err);
    datm_gradcheck_f64(quad, NULL, xq, 3, NULL, 0, 1e-4, 1e-12, &r, &err);
    CHECK(r.worst == 2 && fabs(r.max_rel_err - 0.01 / 1.01) < 1e-6, "wrong coordinate: %lld %g",
          (long long)r.worst, r.max_rel_err);
    CHECK(xq[0] == 0.5 && xq[1] == -1.2 && xq[2] == 0.8, "x not restored");

    return check_result();
}
