/* ctest-labels: unit  ctest-timeout: 120  ctest-link: datm_eval */
/* tests/test_linclass.c: the logistic regression of the unsupervised baselines (liblinear).
 *  1. known answer: n documents at x and n at -x (two classes, fixed C): by symmetry the bias
 *     is 0 and the weight w on the standardised feature solves w = 2 n C / (1 + e^w), found
 *     here by bisection;
 *  2. optimality: on random data with four classes, every one-vs-rest coefficient vector
 *     makes the gradient of liblinear's objective (written out here, on features
 *     standardised here) vanish, relative to the gradient at 0;
 *  3. the probabilities of a two-class fit are the logistic function of the coefficients;
 *  4. a separable problem is fitted with zero training and test error, with class labels
 *     that first appear out of order and one class absent (probability 0);
 *  5. CV on data drawn from a known softmax model: the path is the documented one and the
 *     chosen C its most accurate; the test error is within 4 binomial standard errors of
 *     the Bayes error, and the CV accuracy within 4 of the test accuracy;
 *     the final fit, started from the folds' mean solution, meets liblinear's stopping test
 *     (gradient at most eps times the gradient at 0); 3 folds on a subset start the path at
 *     40 over the folds' training size;
 *  6. fits are identical for 1 and 2 threads (CV on a subset);
 *  7. bad input is an error naming the document; the feature concatenation by hand. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/linclass.h"
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

/* Standardises X (N, D) float into Xs (N, D + 1) double with a trailing 1 (population sd). */
static void standardise(const float *X, int n, int d, double *Xs)
{
    for (int j = 0; j < d; j++) {
        double m = 0, s = 0;
        for (int i = 0; i < n; i++) m += X[i * d + j];
        m /= n;
        for (int i = 0; i < n; i++) s += (X[i * d + j] - m) * (X[i * d + j] - m);
        s = sqrt(s / n);
        for (int i = 0; i < n; i++) Xs[i * (d + 1) + j] = (X[i * d + j] - m) / s;
    }
    for (int i = 0; i < n; i++) Xs[i * (d + 1) + d] = 1;
}

static void test_known_answer(void)
{
    enum { n = 3 };
    const double Cpen = 0.7, a = 2.5;
    float X[2 * n];
    int32_t y[2 * n];
    for (int i = 0; i < 2 * n; i++) { X[i] = (float)(i % 2 ? -a : a); y[i] = i % 2 ? 0 : 1; }
    /* f(w) = w - 2 n C / (1 + e^w) is increasing: bisection on [0, 2 n C] */
    double lo = 0, hi = 2 * n * Cpen;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid - 2 * n * Cpen / (1 + exp(mid)) > 0) hi = mid; else lo = mid;
    }
    const double wstar = 0.5 * (lo + hi);
    datm_linclass_params p;
    datm_linclass_params_default(&p);
    p.C = Cpen;
    p.eps = 1e-10;
    datm_linclass m;
    datm_error err = {0};
    CHECK(datm_linclass_fit(X, 2 * n, 1, y, 2, &p, &m, &err) == DATM_OK);
    double w1[2], w0[2];
    datm_linclass_coef(&m, 1, w1);
    datm_linclass_coef(&m, 0, w0);
    printf("known answer: w %.12g (expected %.12g), bias %.3g; class 0: %.12g %.3g\n",
           w1[0], wstar, w1[1], w0[0], w0[1]);
    CHECK(fabs(w1[0] - wstar) < 1e-7 && fabs(w1[1]) < 1e-7);
    CHECK(w0[0] == -w1[0] && w0[1] == -w1[1]);
    CHECK(isnan(m.cv_accuracy) && m.C == Cpen);
    /* probabilities: sigmoid of the decision value at the standardised +-1 */
    float pr[4];
    const float xt[2] = {(float)a, (float)-a};
    datm_linclass_predict_proba(&m, xt, 2, pr);
    const double p1 = 1 / (1 + exp(-(w1[0] + w1[1])));
    printf("probabilities: %.7f %.7f (expected %.7f)\n", pr[1], pr[0], p1);
    CHECK(fabs(pr[1] - p1) < 1e-6 && fabs(pr[0] - (1 - p1)) < 1e-6);
    CHECK(fabs(pr[2] - p1) < 1e-6 && fabs(pr[3] - (1 - p1)) < 1e-6);
    datm_linclass_free(&m);
}

static void test_optimality(void)
{
    enum { N = 400, D = 5, C = 4 };
    static float X[N * D];
    static int32_t y[N];
    static double Xs[N * (D + 1)];
    for (int i = 0; i < N * D; i++) X[i] = (float)(1 + 2 * gauss());
    for (int i = 0; i < N; i++)
        y[i] = (int32_t)((X[i * D] > 1) + 2 * (X[i * D + 1] + gauss() > 1));
    standardise(X, N, D, Xs);
    datm_linclass_params p;
    datm_linclass_params_default(&p);
    p.C = 0.05;
    p.eps = 1e-8;
    datm_linclass m;
    datm_error err = {0};
    CHECK(datm_linclass_fit(X, N, D, y, C, &p, &m, &err) == DATM_OK);
    for (int k = 0; k < C; k++) {
        double w[D + 1], g[D + 1], g0[D + 1];
        datm_linclass_coef(&m, k, w);
        /* grad of (1/2)|w|^2 + C sum log(1 + exp(-y w.x)) = w - C sum y x sigma(-y w.x) */
        for (int j = 0; j <= D; j++) { g[j] = w[j]; g0[j] = 0; }
        for (int i = 0; i < N; i++) {
            const double yi = y[i] == k ? 1 : -1;
            double z = 0;
            for (int j = 0; j <= D; j++) z += w[j] * Xs[i * (D + 1) + j];
            const double s = 1 / (1 + exp(yi * z));
            for (int j = 0; j <= D; j++) {
                g[j] -= p.C * yi * Xs[i * (D + 1) + j] * s;
                g0[j] -= p.C * yi * Xs[i * (D + 1) + j] * 0.5;
            }
        }
        double gi = 0, g0i = 0, wi = 0;
        for (int j = 0; j <= D; j++) {
            gi = fmax(gi, fabs(g[j]));
            g0i = fmax(g0i, fabs(g0[j]));
            wi = fmax(wi, fabs(w[j]));
        }
        printf("optimality class %d: |w|_inf %.4g, |grad|_inf %.3g (at 0: %.3g)\n", k, wi, gi, g0i);
        CHECK(wi > 0.1 && gi < 1e-5 * g0i);
    }
    datm_linclass_free(&m);
}

static void test_separable(void)
{
    enum { N = 400, D = 3, C = 4 };
    static float X[N * D], Xt[N * D], P[N * C];
    static int32_t y[N], yt[N], pred[N];
    static const int32_t cls[3] = {2, 0, 1};   /* first appearance out of order; 3 absent */
    for (int s = 0; s < 2; s++) {
        float *x = s ? Xt : X;
        int32_t *yy = s ? yt : y;
        for (int i = 0; i < N; i++) {
            yy[i] = cls[i % 3];
            for (int j = 0; j < D; j++) x[i * D + j] = (float)(0.3 * gauss() + (j == yy[i] ? 4 : 0));
        }
    }
    datm_linclass m;
    datm_error err = {0};
    CHECK(datm_linclass_fit(X, N, D, y, C, NULL, &m, &err) == DATM_OK);
    datm_linclass_predict(&m, X, N, pred);
    int e = 0;
    for (int i = 0; i < N; i++) e += pred[i] != y[i];
    datm_linclass_predict(&m, Xt, N, pred);
    int et = 0;
    for (int i = 0; i < N; i++) et += pred[i] != yt[i];
    datm_linclass_predict_proba(&m, Xt, N, P);
    double worst_sum = 0, absent = 0;
    int argmax_agrees = 1;
    for (int i = 0; i < N; i++) {
        double s = 0;
        int best = 0;
        for (int k = 0; k < C; k++) { s += P[i * C + k]; if (P[i * C + k] > P[i * C + best]) best = k; }
        worst_sum = fmax(worst_sum, fabs(s - 1));
        absent = fmax(absent, P[i * C + 3]);
        argmax_agrees &= best == pred[i];
    }
    printf("separable: C %.4g (CV accuracy %.4f on %lld docs), train errors %d, test errors %d\n",
           m.C, m.cv_accuracy, (long long)m.n_cv_docs, e, et);
    CHECK(e == 0 && et == 0);
    CHECK(m.n_cv_docs == N && m.cv_accuracy == 1.0);
    CHECK(worst_sum < 1e-5 && absent == 0 && argmax_agrees);
    double w3[D + 1];
    datm_linclass_coef(&m, 3, w3);
    CHECK(w3[0] == 0 && w3[D] == 0);
    datm_linclass_free(&m);
}

enum { SN = 20000, SD = 5, SC = 3 };
static const double Wt[SD * SC] = { 1.0, -0.5, -0.5,   0.0, 0.8, -0.8,   -0.6, 0.3, 0.3,
                                    0.4, 0.4, -0.8,    0.0, 0.0, 0.0 };
static const double bt[SC] = {0.2, -0.1, 0.0};

/* Draws n documents from softmax(x W + b), x ~ N(0, I): X (n, d), y (n). */
static void draw_softmax(int64_t n, float *X, int32_t *y)
{
    for (int64_t i = 0; i < n; i++) {
        double z[SC], s = 0;
        for (int j = 0; j < SD; j++) X[i * SD + j] = (float)gauss();
        for (int k = 0; k < SC; k++) {
            z[k] = bt[k];
            for (int j = 0; j < SD; j++) z[k] += (double)X[i * SD + j] * Wt[j * SC + k];
            z[k] = exp(z[k]);
            s += z[k];
        }
        double u = unif() * s, acc = 0;
        y[i] = SC - 1;
        for (int k = 0; k < SC; k++) { acc += z[k]; if (u < acc) { y[i] = k; break; } }
    }
}

/* |grad| / |grad at 0| (2-norms) of liblinear's objective for class k's function of m at m->C,
 * on m's own standardisation of X (N, D). */
static double grad_ratio(const datm_linclass *m, const float *X, const int32_t *y, int n, int d,
                         int k)
{
    double w[64], g[64], g0[64];
    DATM_ASSERT(d + 1 <= 64);
    datm_linclass_coef(m, k, w);
    for (int j = 0; j <= d; j++) { g[j] = w[j]; g0[j] = 0; }
    for (int i = 0; i < n; i++) {
        double x[64], z = 0;
        for (int j = 0; j < d; j++) x[j] = ((double)X[i * d + j] - m->mean[j]) / m->scale[j];
        x[d] = 1;
        for (int j = 0; j <= d; j++) z += w[j] * x[j];
        const double yi = y[i] == k ? 1 : -1, sg = 1 / (1 + exp(yi * z));
        for (int j = 0; j <= d; j++) {
            g[j] -= m->C * yi * x[j] * sg;
            g0[j] -= m->C * yi * x[j] * 0.5;
        }
    }
    double a = 0, b = 0;
    for (int j = 0; j <= d; j++) { a += g[j] * g[j]; b += g0[j] * g0[j]; }
    return sqrt(a / b);
}

static void test_cv(const float *X, const int32_t *y, const float *Xt, const int32_t *yt, int nt)
{
    datm_linclass_params p;
    datm_linclass_params_default(&p);
    p.verbose = 1;
    datm_linclass m;
    datm_error err = {0};
    CHECK(datm_linclass_fit(X, SN, SD, y, SC, &p, &m, &err) == DATM_OK);
    int32_t *pred = malloc(sizeof(int32_t) * (size_t)nt);
    datm_linclass_predict(&m, Xt, nt, pred);
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
    const double r = (double)e / nt, rb = (double)eb / nt, se = sqrt(rb * (1 - rb) / nt);
    printf("cv: C %.4g (CV accuracy %.4f on %lld docs), test error %.4f, Bayes error %.4f (se %.4f)\n",
           m.C, m.cv_accuracy, (long long)m.n_cv_docs, r, rb, se);
    CHECK(m.n_cv_docs == SN);
    /* the path: x4 steps from a per-document penalty of 0.025 on the folds' 16,000
     * documents (then /4 steps when the first was best); the chosen C is the most accurate,
     * the smallest on ties */
    int best = 0;
    CHECK(m.n_path >= 2 && fabs(m.path_C[0] - 40.0 / 16000) < 1e-15);
    for (int i = 0; i < m.n_path; i++) {
        printf("  path C %.6g: CV accuracy %.4f\n", m.path_C[i], m.path_accuracy[i]);
        const double e = log(m.path_C[i] / m.path_C[0]) / log(4.0);
        CHECK(fabs(e - round(e)) < 1e-9);
        if (m.path_accuracy[i] > m.path_accuracy[best] ||
            (m.path_accuracy[i] == m.path_accuracy[best] && m.path_C[i] < m.path_C[best]))
            best = i;
    }
    CHECK(m.C == m.path_C[best] && m.cv_accuracy == m.path_accuracy[best]);
    CHECK(r <= rb + 4 * se);
    CHECK(fabs((1 - r) - m.cv_accuracy) < 4 * se);
    for (int k = 0; k < SC; k++) {
        const double q = grad_ratio(&m, X, y, SN, SD, k);
        printf("  final fit class %d: |grad| / |grad at 0| = %.3g (eps %.3g)\n", k, q, p.eps);
        CHECK(q <= p.eps);
    }
    free(pred);

    /* 3 folds on a subset of 3,000 documents: the path starts at 40 / 2,000 */
    datm_linclass m3;
    p.verbose = 0;
    p.n_folds = 3;
    p.cv_max_docs = 3000;
    CHECK(datm_linclass_fit(X, SN, SD, y, SC, &p, &m3, &err) == DATM_OK);
    CHECK(m3.n_cv_docs >= 2990 && m3.n_cv_docs <= 3010);
    CHECK(fabs(m3.path_C[0] - 40.0 / ((double)m3.n_cv_docs * 2 / 3)) < 1e-15);
    for (int k = 0; k < SC; k++) CHECK(grad_ratio(&m3, X, y, SN, SD, k) <= p.eps);
    datm_linclass_free(&m3);
    p.n_folds = 5;

    /* determinism: 1 against 2 threads */
    datm_linclass m1, m2;
    p.verbose = 0;
    p.cv_max_docs = 5000;
    omp_set_num_threads(1);
    CHECK(datm_linclass_fit(X, SN, SD, y, SC, &p, &m1, &err) == DATM_OK);
    omp_set_num_threads(2);
    CHECK(datm_linclass_fit(X, SN, SD, y, SC, &p, &m2, &err) == DATM_OK);
    CHECK(m1.n_cv_docs >= 4990 && m1.n_cv_docs <= 5010);
    CHECK(m1.C == m2.C && m1.cv_accuracy == m2.cv_accuracy);
    int same = 1;
    for (int k = 0; k < SC; k++) {
        double a[SD + 1], b[SD + 1];
        datm_linclass_coef(&m1, k, a);
        datm_linclass_coef(&m2, k, b);
        same &= memcmp(a, b, sizeof a) == 0;
    }
    CHECK(same);
    datm_linclass_free(&m1);
    datm_linclass_free(&m2);
    datm_linclass_free(&m);
}

static void test_concat_and_errors(void)
{
    /* feature concatenation: 2 documents, layers of width 2 and 1 */
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

    /* input validation names the document */
    datm_linclass m;
    datm_error err = {0};
    float x1[2] = {1, 2};
    int32_t ybad[2] = {0, 3};
    CHECK(datm_linclass_fit(x1, 2, 1, ybad, 2, NULL, &m, &err) == DATM_E_INVALID);
    fprintf(stderr, "expected error: %s\n", err.msg);
    CHECK(strstr(err.msg, "document 1") != NULL);
    float xnan[2] = {1, NAN};
    int32_t yok[2] = {0, 1};
    CHECK(datm_linclass_fit(xnan, 2, 1, yok, 2, NULL, &m, &err) == DATM_E_NUMERIC);
    fprintf(stderr, "expected error: %s\n", err.msg);
    CHECK(strstr(err.msg, "document 1") != NULL);
    /* fewer documents than folds */
    CHECK(datm_linclass_fit(x1, 2, 1, yok, 2, NULL, &m, &err) == DATM_E_INVALID);
    fprintf(stderr, "expected error: %s\n", err.msg);
}

int main(void)
{
    test_known_answer();
    test_optimality();
    test_separable();
    float *X = malloc(sizeof(float) * SN * SD), *Xt = malloc(sizeof(float) * SN * SD);
    int32_t *y = malloc(sizeof(int32_t) * SN), *yt = malloc(sizeof(int32_t) * SN);
    draw_softmax(SN, X, y);
    draw_softmax(SN, Xt, yt);
    test_cv(X, y, Xt, yt, SN);
    free(X); free(Xt); free(y); free(yt);
    test_concat_and_errors();
    return check_result();
}
