/* examples/plugin/test_lognormal_grad.c: the example plugin's log-normal family checked
 * against independent references:
 *   - d theta / dk, d theta / dlam of the reparameterised sample, and dKL / dk, dlam, dalpha,
 *     against central finite differences in double (relative error < 1e-6);
 *   - the float functions against the double ones (relative error < 1e-4);
 *   - the closed-form KL(LogNormal || Gamma(alpha, 1)) and E[theta] against Monte Carlo
 *     averages of ln q - ln p and theta over 400,000 draws (within 5 standard errors).
 * Exit 0 when every check passes. Built with the plugin's source and `pkg-config datm`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "whai_lognormal.h"

static int fails;

static void check(int ok, const char *what, double got, double want)
{
    if (!ok) {
        fails++;
        printf("FAIL %s: %.10g vs %.10g\n", what, got, want);
    }
}

static double rel(double a, double b) { return fabs(a - b) / fmax(1e-8, fmax(fabs(a), fabs(b))); }

/* splitmix64 uniforms and Box-Muller normals: the test's own generator */
static uint64_t state = 12345;
static double unif(void)
{
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

int main(void)
{
    const datm_posterior_family *f = whai_lognormal_family();
    const double h = 1e-6;
    int n_checked = 0;
    for (int t = 0; t < 200; t++) {
        const double k = 0.5 + 9.5 * unif(), lam = exp(-4 + 5 * unif()), a = 0.05 + 5 * unif();
        const float eps = (float)normal();
        double th, dk, dl, p, m;
        f->sample_f64(NULL, 1, &k, &lam, &eps, &th, &dk, &dl);
        double kp = k + h, km = k - h, lp = lam * (1 + h), lm = lam * (1 - h);
        f->sample_f64(NULL, 1, &kp, &lam, &eps, &p, NULL, NULL);
        f->sample_f64(NULL, 1, &km, &lam, &eps, &m, NULL, NULL);
        check(rel(dk, (p - m) / (2 * h)) < 1e-6 || fabs(dk - (p - m) / (2 * h)) < 1e-9,
              "d theta / dk", dk, (p - m) / (2 * h));
        f->sample_f64(NULL, 1, &k, &lp, &eps, &p, NULL, NULL);
        f->sample_f64(NULL, 1, &k, &lm, &eps, &m, NULL, NULL);
        check(rel(dl, (p - m) / (lp - lm)) < 1e-6, "d theta / dlam", dl, (p - m) / (lp - lm));

        double kl, gk, gl, ga, ap = a + h, am = a - h;
        f->kl_f64(1, &k, &lam, &a, &kl, &gk, &gl, &ga);
        f->kl_f64(1, &kp, &lam, &a, &p, NULL, NULL, NULL);
        f->kl_f64(1, &km, &lam, &a, &m, NULL, NULL, NULL);
        check(fabs(gk - (p - m) / (2 * h)) < 1e-6 * fmax(1, fabs(gk)), "dKL / dk", gk,
              (p - m) / (2 * h));
        f->kl_f64(1, &k, &lp, &a, &p, NULL, NULL, NULL);
        f->kl_f64(1, &k, &lm, &a, &m, NULL, NULL, NULL);
        check(fabs(gl - (p - m) / (lp - lm)) < 1e-6 * fmax(1, fabs(gl)), "dKL / dlam", gl,
              (p - m) / (lp - lm));
        f->kl_f64(1, &k, &lam, &ap, &p, NULL, NULL, NULL);
        f->kl_f64(1, &k, &lam, &am, &m, NULL, NULL, NULL);
        check(fabs(ga - (p - m) / (2 * h)) < 1e-6 * fmax(1, fabs(ga)), "dKL / dalpha", ga,
              (p - m) / (2 * h));

        /* float against double */
        const float kf = (float)k, lf = (float)lam, af = (float)a;
        float thf, dkf, dlf, klf, gkf, glf, gaf;
        f->sample_f32(NULL, 1, &kf, &lf, &eps, &thf, &dkf, &dlf);
        f->kl_f32(1, &kf, &lf, &af, &klf, &gkf, &glf, &gaf);
        check(rel(thf, th) < 1e-4, "theta f32", thf, th);
        check(fabs(klf - kl) < 1e-4 * fmax(1, fabs(kl)), "KL f32", klf, kl);
        check(fabs(gkf - gk) < 1e-4 * fmax(1, fabs(gk)), "dKL / dk f32", gkf, gk);
        n_checked += 7;
    }

    /* the closed forms against Monte Carlo */
    const double ks[] = {0.6, 1.5, 4.0}, lams[] = {0.2, 1.0, 3.0}, as[] = {0.3, 1.0, 2.5};
    for (int c = 0; c < 3; c++) {
        const double k = ks[c], lam = lams[c], a = as[c];
        const double mu = log(lam), s = 1 / k;
        double kl, mean, sum = 0, sum2 = 0, tsum = 0, tsum2 = 0;
        f->kl_f64(1, &k, &lam, &a, &kl, NULL, NULL, NULL);
        f->mean_f64(1, &k, &lam, &mean);
        const int N = 400000;
        for (int i = 0; i < N; i++) {
            const float eps = (float)normal();
            double th;
            f->sample_f64(NULL, 1, &k, &lam, &eps, &th, NULL, NULL);
            const double z = (log(th) - mu) / s;
            const double lq = -log(th) - log(s) - 0.91893853320467274 - 0.5 * z * z;
            const double lp = (a - 1) * log(th) - th - lgamma(a);
            sum += lq - lp;
            sum2 += (lq - lp) * (lq - lp);
            tsum += th;
            tsum2 += th * th;
        }
        const double mk = sum / N, sek = sqrt((sum2 / N - mk * mk) / N);
        const double mt = tsum / N, set = sqrt((tsum2 / N - mt * mt) / N);
        check(fabs(mk - kl) < 5 * sek, "KL vs Monte Carlo", kl, mk);
        check(fabs(mt - mean) < 5 * set, "E[theta] vs Monte Carlo", mean, mt);
        printf("k %.1f lam %.1f alpha %.1f: KL %.6f (Monte Carlo %.6f +- %.6f), E[theta] %.6f "
               "(%.6f +- %.6f)\n", k, lam, a, kl, mk, sek, mean, mt, set);
        n_checked += 2;
    }
    printf("%s: %d checks, %d failed\n", fails ? "FAIL" : "ok", n_checked, fails);
    return fails ? 1 : 0;
}
