/* ctest-labels: unit;grad  ctest-timeout: 120  ctest-link: datm_eval */
/* tests/test_logreg_fit.c: the multinomial logistic regression of the unsupervised baseline.
 *  1. the analytic gradient of the objective matches central differences (rel. err < 1e-4);
 *  2. at the fitted solution the central-difference gradient is ~0 (a direct optimality
 *     check that does not trust the analytic gradient) and nudging any coordinate raises f;
 *  3. on data drawn from a known softmax model (N = 20000) the fitted weights are within
 *     6 standard errors of the truth;
 *  4. a separable problem is fitted with zero training and test error;
 *  5. CV on the softmax-model data picks a penalty whose test error is within 3 binomial
 *     standard errors of the Bayes error (predicting with the true weights);
 *  6. fitting with 1 and 2 OpenMP threads gives bit-identical weights;
 *  7. the feature concatenation of per-layer theta (raw, log1p, proportions) by hand. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/logreg.h"
#include "nn/mlp_head.h"
#include "test_check.h"


/* splitmix64 + Box-Muller: the test's own generator, independent of the engine's */
static uint64_t rs = 12345;
static double unif(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

/* Draws n documents from softmax(x W + b), x ~ N(0, I): X (n, d), y (n). */
static void draw_softmax(int64_t n, int d, int c, const double *W, const double *b, float *X, int32_t *y)
{
    for (int64_t i = 0; i < n; i++) {
        double z[8], s = 0;
        for (int j = 0; j < d; j++) X[i * d + j] = (float)gauss();
        for (int k = 0; k < c; k++) {
            z[k] = b[k];
            for (int j = 0; j < d; j++) z[k] += (double)X[i * d + j] * W[j * c + k];
            z[k] = exp(z[k]);
            s += z[k];
        }
        double u = unif() * s, acc = 0;
        y[i] = (int32_t)(c - 1);
        for (int k = 0; k < c; k++) { acc += z[k]; if (u < acc) { y[i] = k; break; } }
    }
}

static void test_gradient(void)
{
    enum { N = 60, D = 4, C = 3 };
    float X[N * D];
    int32_t y[N];
    for (int i = 0; i < N * D; i++) X[i] = (float)(2 * gauss());
    for (int i = 0; i < N; i++) y[i] = (int32_t)(unif() * C);
    for (int fb = 0; fb <= 1; fb++) {
        const int P = (D + fb) * C;
        double w[(D + 1) * C], g[(D + 1) * C];
        for (int j = 0; j < P; j++) w[j] = gauss();
        datm_logreg_objective(X, N, D, y, C, fb, 0.3, w, g);
        double worst = 0;
        for (int j = 0; j < P; j++) {
            const double h = 1e-5, w0 = w[j];
            w[j] = w0 + h; double fp = datm_logreg_objective(X, N, D, y, C, fb, 0.3, w, NULL);
            w[j] = w0 - h; double fm = datm_logreg_objective(X, N, D, y, C, fb, 0.3, w, NULL);
            w[j] = w0;
            double num = (fp - fm) / (2 * h);
            double rel = fabs(num - g[j]) / fmax(1e-8, fmax(fabs(num), fabs(g[j])));
            worst = fmax(worst, rel);
        }
        printf("gradient check (bias %d): max rel err %.3g\n", fb, worst);
        CHECK(worst < 1e-4);
    }
}

static void test_optimum(void)
{
    enum { N = 300, D = 5, C = 4 };
    static float X[N * D];
    static int32_t y[N];
    for (int i = 0; i < N * D; i++) X[i] = (float)(1 + gauss());
    for (int i = 0; i < N; i++) y[i] = (int32_t)((X[i * D] > 1) + 2 * (X[i * D + 1] + 0.5 * gauss() > 1));
    datm_logreg_params p;
    datm_logreg_params_default(&p);
    p.standardize = 0;
    p.tol = 1e-10;
    p.max_iter = 2000;
    datm_logreg m;
    datm_error err = {0};
    const double lambda = 0.01;
    CHECK(datm_logreg_fit(X, N, D, y, C, lambda, &p, &m, &err) == DATM_OK);
    const int P = (D + 1) * C;
    double f0 = datm_logreg_objective(X, N, D, y, C, 1, lambda, m.w, NULL);
    double worst = 0, rise = 1;
    for (int j = 0; j < P; j++) {
        const double h = 1e-4, w0 = m.w[j];
        m.w[j] = w0 + h; double fp = datm_logreg_objective(X, N, D, y, C, 1, lambda, m.w, NULL);
        m.w[j] = w0 - h; double fm = datm_logreg_objective(X, N, D, y, C, 1, lambda, m.w, NULL);
        m.w[j] = w0;
        worst = fmax(worst, fabs(fp - fm) / (2 * h));
        rise = fmin(rise, fmin(fp - f0, fm - f0));
    }
    printf("optimum: f %.12g, iterations %d, |grad|_inf %.3g, central-diff |grad|_inf %.3g, min rise %.3g\n",
           f0, m.iterations, m.grad_norm, worst, rise);
    /* the objective's scale is O(1); a gradient of 1e-6 moves f by < 1e-10 over h */
    CHECK(worst < 1e-6);
    CHECK(m.grad_norm < 1e-6);
    CHECK(rise >= -1e-14);
    datm_logreg_free(&m);
}

enum { SN = 20000, SD = 5, SC = 3 };
static const double Wt[SD * SC] = { 1.0, -0.5, -0.5,   0.0, 0.8, -0.8,   -0.6, 0.3, 0.3,
                                    0.4, 0.4, -0.8,    0.0, 0.0, 0.0 };
static const double bt[SC] = {0.2, -0.1, 0.0};

static void test_recovery(const float *X, const int32_t *y)
{
    datm_logreg_params p;
    datm_logreg_params_default(&p);
    p.standardize = 0;
    p.tol = 1e-9;
    datm_logreg m;
    datm_error err = {0};
    CHECK(datm_logreg_fit(X, SN, SD, y, SC, 1e-8, &p, &m, &err) == DATM_OK);
    /* The Fisher information per document is ~ E[p(1-p)] x x^T with p ~ 1/3, so each
     * coefficient's standard error is ~ 1/sqrt(N * 2/9 * 1) ~ 0.015; allow 6 SE = 0.09.
     * Columns of Wt sum to 0, the parameterisation the (tiny) L2 penalty selects. */
    double worst = 0;
    for (int j = 0; j < SD * SC; j++) worst = fmax(worst, fabs(m.w[j] - Wt[j]));
    double bworst = 0;
    for (int k = 1; k < SC; k++)
        bworst = fmax(bworst, fabs((m.w[SD * SC + k] - m.w[SD * SC]) - (bt[k] - bt[0])));
    printf("recovery: max |W - W_true| %.4f, max |db - db_true| %.4f\n", worst, bworst);
    CHECK(worst < 0.09);
    CHECK(bworst < 0.09);
    datm_logreg_free(&m);
}

static void test_separable(void)
{
    enum { N = 400, D = 3, C = 3 };
    static float X[N * D], Xt[N * D];
    static int32_t y[N], yt[N], pred[N];
    for (int s = 0; s < 2; s++) {
        float *x = s ? Xt : X;
        int32_t *yy = s ? yt : y;
        for (int i = 0; i < N; i++) {
            yy[i] = i % C;
            for (int j = 0; j < D; j++) x[i * D + j] = (float)(0.3 * gauss() + (j == yy[i] ? 4 : 0));
        }
    }
    datm_logreg m;
    datm_error err = {0};
    CHECK(datm_logreg_fit_cv(X, N, D, y, C, NULL, &m, &err) == DATM_OK);
    datm_logreg_predict(&m, X, N, pred);
    int e = 0;
    for (int i = 0; i < N; i++) e += pred[i] != y[i];
    datm_logreg_predict(&m, Xt, N, pred);
    int et = 0;
    for (int i = 0; i < N; i++) et += pred[i] != yt[i];
    printf("separable: lambda %.3g, train errors %d, test errors %d\n", m.lambda, e, et);
    CHECK(e == 0 && et == 0);
    datm_logreg_free(&m);
}

static void test_cv(const float *X, const int32_t *y, const float *Xt, const int32_t *yt, int nt)
{
    datm_logreg_params p;
    datm_logreg_params_default(&p);
    p.verbose = 0;
    datm_logreg m;
    datm_error err = {0};
    CHECK(datm_logreg_fit_cv(X, SN, SD, y, SC, &p, &m, &err) == DATM_OK);
    int32_t *pred = malloc(sizeof(int32_t) * (size_t)nt);
    datm_logreg_predict(&m, Xt, nt, pred);
    int e = 0, eb = 0;
    for (int i = 0; i < nt; i++) {
        e += pred[i] != yt[i];
        double best = -1e300; int bk = 0;
        for (int k = 0; k < SC; k++) {
            double z = bt[k];
            for (int j = 0; j < SD; j++) z += (double)Xt[i * SD + j] * Wt[j * SC + k];
            if (z > best) { best = z; bk = k; }
        }
        eb += bk != yt[i];
    }
    double r = (double)e / nt, rb = (double)eb / nt, se = sqrt(rb * (1 - rb) / nt);
    printf("cv: lambda %.3g (cv error %.4f), test error %.4f, Bayes error %.4f (se %.4f)\n",
           m.lambda, m.cv_error[0], r, rb, se);
    for (int l = 0; l < m.n_lambdas; l++)
        printf("  lambda %.3g: cv error %.4f logloss %.4f\n", m.cv_lambdas[l], m.cv_error[l], m.cv_logloss[l]);
    CHECK(r <= rb + 3 * se);
    free(pred);

    /* thread-count independence */
    datm_logreg m1, m2;
    p.cv_max_docs = 5000;
    omp_set_num_threads(1);
    CHECK(datm_logreg_fit_cv(X, SN, SD, y, SC, &p, &m1, &err) == DATM_OK);
    omp_set_num_threads(2);
    CHECK(datm_logreg_fit_cv(X, SN, SD, y, SC, &p, &m2, &err) == DATM_OK);
    CHECK(m1.lambda == m2.lambda);
    CHECK(memcmp(m1.w, m2.w, sizeof(double) * (SD + 1) * SC) == 0);
    datm_logreg_free(&m1);
    datm_logreg_free(&m2);
    datm_logreg_free(&m);
}

int main(void)
{
    test_gradient();
    test_optimum();
    test_separable();
    float *X = malloc(sizeof(float) * SN * SD), *Xt = malloc(sizeof(float) * SN * SD);
    int32_t *y = malloc(sizeof(int32_t) * SN), *yt = malloc(sizeof(int32_t) * SN);
    draw_softmax(SN, SD, SC, Wt, bt, X, y);
    draw_softmax(SN, SD, SC, Wt, bt, Xt, yt);
    test_recovery(X, y);
    test_cv(X, y, Xt, yt, SN);
    free(X); free(Xt); free(y); free(yt);

    /* feature concatenation: 2 documents, layers of width 2 and 1 */
    {
        const float t1[4] = {1, 3, 0, 2}, t2[2] = {4, 0};
        const float *th[2] = {t1, t2};
        const int64_t k[2] = {2, 1};
        float F[6];
        datm_features_concat(2, k, th, 2, 0, F);
        CHECK(F[0] == 1 && F[1] == 3 && F[2] == 4 && F[3] == 0 && F[4] == 2 && F[5] == 0);
        datm_features_concat(2, k, th, 2, 1, F);
        CHECK(fabsf(F[1] - logf(4)) < 1e-6f && fabsf(F[2] - logf(5)) < 1e-6f && F[5] == 0);
        datm_features_concat(2, k, th, 2, 2, F);
        CHECK(F[0] == 0.25f && F[1] == 0.75f && F[2] == 1 && F[3] == 0 && F[4] == 1 && F[5] == 0);
    }

    /* input validation names the document */
    datm_logreg m;
    datm_error err = {0};
    float x1[2] = {1, 2};
    int32_t ybad[2] = {0, 3};
    CHECK(datm_logreg_fit(x1, 2, 1, ybad, 2, 0.1, NULL, &m, &err) == DATM_E_INVALID);
    fprintf(stderr, "expected error: %s\n", err.msg);

    return check_result();
}
