/* engine/math/special.c: digamma psi(x) and trigamma psi'(x) in double precision.
 *
 * Method (ours; standard analysis, no borrowed code):
 *  - x >= 10: the asymptotic (Stirling-type) series with Bernoulli numbers B_2..B_16;
 *    the first omitted term is below 1e-17 relative there.
 *  - 0 < x < 10: the recurrence psi(x) = psi(x + n) - sum_{k<n} 1/(x + k) up to x + n >= 10.
 *  - near the positive root x0 = 1.4616... of psi, the recurrence loses relative accuracy
 *    (psi -> 0 while its parts do not), so psi is written as
 *        psi(x) = psi(x) - psi(x0) = d * S(x),   d = x - x0 (x0 in two doubles),
 *    where every part of S is a positive sum or a difference rewritten as a product with d
 *    factored out exactly; this keeps ~1e-15 relative error right through the root.
 *  - -1 < x < 0: psi(x) = psi(x + 1) - 1/x;  x < -1 (non-integer): the reflection
 *    psi(x) = psi(1 - x) - pi cot(pi x).
 * Non-positive integers are poles: NaN. */
#include "math/math.h"

#include <float.h>

/* Positive root of psi, split as hi + lo (hi = nearest double). */
static const double PSI_ROOT_HI = 1.4616321449683622;
static const double PSI_ROOT_LO = 9.549995429965697e-17;
static const double PI = 3.14159265358979323846264338327950288;

/* B_{2k} / (2k), k = 1..8: psi(x) ~ ln x - 1/(2x) - sum_k (B_{2k}/2k) x^{-2k}. */
static const double PSI_ASYM[8] = {
    1.0 / 12.0, -1.0 / 120.0, 1.0 / 252.0, -1.0 / 240.0,
    1.0 / 132.0, -691.0 / 32760.0, 1.0 / 12.0, -3617.0 / 8160.0,
};
/* B_{2k}, k = 1..8: psi'(x) ~ 1/x + 1/(2x^2) + sum_k B_{2k} x^{-2k-1}. */
static const double BERN[8] = {
    1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0,
    5.0 / 66.0, -691.0 / 2730.0, 7.0 / 6.0, -3617.0 / 510.0,
};

enum { ASYM_FROM = 10 };

static double psi_asymptotic(double x)   /* x >= ASYM_FROM */
{
    double z = 1.0 / (x * x), s = 0.0;
    for (int k = 7; k >= 0; k--) s = s * z + PSI_ASYM[k];
    return log(x) - 0.5 / x - s * z;
}

/* psi(x) for x within ~0.5 of the root: d * S with S built from positive pieces.
 * S = sum_{k<n} 1/((x0+k)(x+k)) + [psi(x+n) - psi(x0+n)] / d, and the bracket uses the
 * asymptotic series at a = x0+n, b = x+n:
 *   ln(b/a)/d = log1p(d/a)/d,   (1/(2a) - 1/(2b))/d = 1/(2ab),
 *   (a^-m - b^-m)/d = sum_{j<m} a^{j-m} b^{-1-j}   (m = 2k). */
static double psi_near_root(double x)
{
    double d = (x - PSI_ROOT_HI) - PSI_ROOT_LO;   /* x - PSI_ROOT_HI is exact (Sterbenz) */
    double x0 = PSI_ROOT_HI;
    enum { N_SHIFT = 10 };
    double s = 0.0;
    for (int k = 0; k < N_SHIFT; k++) s += 1.0 / ((x0 + k) * (x + k));
    double a = x0 + N_SHIFT, b = x + N_SHIFT;
    double t = (d != 0.0) ? log1p(d / a) / d : 1.0 / a;
    t += 0.5 / (a * b);
    double ia = 1.0 / a, ib = 1.0 / b;
    for (int k = 0; k < 8; k++) {
        int m = 2 * (k + 1);
        /* sum_{j=0}^{m-1} a^{-(m-j)} b^{-(1+j)} */
        double acc = 0.0, pa = 1.0, pb = ib;
        for (int j = 0; j < m; j++) pa *= ia;   /* a^{-m} */
        for (int j = 0; j < m; j++) {
            acc += pa * pb;
            pa *= a;
            pb *= ib;
        }
        t += PSI_ASYM[k] * acc;
    }
    return d * (s + t);
}

double datm_digamma(double x)
{
    if (isnan(x)) return x;
    if (x == INFINITY) return INFINITY;
    if (x <= 0.0) {
        double fl = floor(x);
        if (x == fl) return NAN;                 /* pole */
        /* (-1, 0): one step of the recurrence keeps tiny |x| exact (psi ~ -1/x) */
        if (x > -1.0) return datm_digamma(x + 1.0) - 1.0 / x;
        /* psi(x) = psi(1 - x) - pi cot(pi x); cot has period 1, so use the fraction. */
        double r = x - fl;                       /* in (0, 1) */
        return datm_digamma(1.0 - x) - PI / tan(PI * r);
    }
    if (fabs(x - PSI_ROOT_HI) < 0.5) return psi_near_root(x);
    double shift = 0.0;
    while (x < ASYM_FROM) {
        shift += 1.0 / x;
        x += 1.0;
    }
    return psi_asymptotic(x) - shift;
}

double datm_trigamma(double x)
{
    if (isnan(x)) return x;
    if (x == INFINITY) return 0.0;
    if (x <= 0.0) {
        double fl = floor(x);
        if (x == fl) return NAN;                 /* pole */
        if (x > -1.0) return datm_trigamma(x + 1.0) + 1.0 / (x * x);
        /* psi'(x) + psi'(1 - x) = pi^2 / sin^2(pi x) */
        double s = sin(PI * (x - fl));
        return PI * PI / (s * s) - datm_trigamma(1.0 - x);
    }
    double shift = 0.0;
    while (x < ASYM_FROM) {
        shift += 1.0 / (x * x);
        x += 1.0;
    }
    double z = 1.0 / (x * x), s = 0.0;
    for (int k = 7; k >= 0; k--) s = s * z + BERN[k];
    return shift + 1.0 / x + 0.5 * z + s * z / x;
}
