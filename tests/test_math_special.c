/* ctest-labels: unit  ctest-timeout: 60  ctest-link: datm_math */
/* tests/test_math_special.c: digamma and trigamma against independently derived values.
 *  1. closed forms (Gauss's digamma theorem at rationals, psi'(1) = pi^2/6, ...) computed in
 *     long double from Euler's gamma, pi, ln 2, ln 3 and Catalan's constant;
 *  2. a table of 22-digit values computed with mpmath (dps 40) at the exact double
 *     arguments, including the three doubles around the positive root of psi;
 *  3. identities on a grid: recurrence psi(x+1) = psi(x) + 1/x, reflection, duplication
 *     psi(2x) = (psi(x) + psi(x + 1/2))/2 + ln 2, and psi' = d psi/dx by central differences.
 * Tolerance: 1e-12 relative (the contract in math.h) for x > 0 and for the listed x < 0. */
#include <math.h>
#include <stdio.h>

#include "math/math.h"

static int failures;

static void check_rel(const char *what, double x, double got, double want, double tol)
{
    double rel = (want == got) ? 0.0 : fabs(got - want) / fabs(want);
    if (!(rel <= tol)) {
        printf("FAIL %s(%.17g) = %.17g, want %.17g (rel err %.3g > %.3g)\n", what, x, got,
               want, rel, tol);
        failures++;
    }
}

/* x, psi(x), psi'(x): mpmath 1.3.0, mp.dps = 40, evaluated at mpf(double x). */
static const double table[][3] = {
    {1e-300, -9.999999999999999749409e+299, INFINITY},
    {1e-150, -9.999999999999999937046e+149, 9.999999999999999874093e+299},
    {1e-08, -100000000.5772156463599, 10000000000000001.22648},
    {0.001, -1000.575571931810279655, 1000001.642533195827345},
    {0.1, -10.4237549404110762321, 101.4332991507927477047},
    {0.25, -4.22745353337626540809, 17.19732915450711073927},
    {0.5, -1.963510026021423479441, 4.934802200544679309417},
    {0.9, -0.7549269499470513491974, 1.922539959477203445385},
    {0.99, -0.5937863040555951592594, 1.669304101071824537886},
    {1.0, -0.5772156649015328606065, 1.644934066848226436472},
    {1.2, -0.2890398965921883518301, 1.26737720542377918894},
    {1.4, -0.06138454458511623680064, 1.025356590529597525389},
    {1.46, -0.001580561987083452106151, 0.9691196215098878945523},
    {1.461632144968362, -3.072790566546292843089e-16, 0.9676722454476214516215},
    {1.4616321449683622, -9.241265521729427516792e-17, 0.9676722454476212549952},
    {1.4616321449683625, 1.224537462200406903132e-16, 0.9676722454476210583688},
    {1.47, 0.008066489011364868442326, 0.9603162090511507018856},
    {1.5, 0.03648997397857652055902, 0.9348022005446793094172},
    {1.9, 0.3561841611640596581205, 0.687972058242635655951},
    {1.95, 0.3900219627420430553242, 0.6657762033790460791406},
    {1.97, 0.4032522088137712882755, 0.6572838134442674499921},
    {2.0, 0.4227843350984671393935, 0.6449340668482264364724},
    {2.5, 0.7031566406452431872257, 0.4903577561002348649728},
    {3.7, 1.167153539361511440948, 0.3100378576700383021582},
    {7.25, 1.910453526883736028382, 0.1478792331589321696521},
    {9.999, 2.251647417205735314158, 0.105177386676728862153},
    {10.0, 2.251752589066721107647, 0.1051663356816857461222},
    {12.5, 2.48519565127491204815, 0.08328522460157837044359},
    {100.0, 4.600161852738087400199, 0.01005016666333357139525},
    {1234.5, 7.118016231827997843305, 0.0008103727271269666526951},
    {1000000.0, 13.81551005796419077077, 0.000001000000500000166666667},
    {1000000000000000.0, 34.53877639491068476027, 1.0000000000000005e-15},
    {-1e-300, 9.999999999999999749409e+299, INFINITY},
    {-1e-08, 99999999.42278431655687, 10000000000000001.22648},
    {-0.3, 2.113309779635398873407, 13.9451602678057224889},
    {-0.75, -2.894120200042932074756, 18.97510693228488851705},
    {-0.99, -99.55078444776757555517, 10002.64151757890253746},
    {-0.5, 0.03648997397857652055902, 8.934802200544679309417},
    {-1.5, 0.7031566406452431872257, 9.379246644989123753862},
    {-2.25, 4.158583564657972274818, 19.3794105118691373626},
    {-10.3, 4.662403493582087017508, 14.98688706572263781997},
};

int main(void)
{
    const long double EG = 0.577215664901532860606512090082402431L;   /* Euler gamma */
    const long double PI = 3.141592653589793238462643383279502884L;
    const long double LN2 = 0.693147180559945309417232121458176568L;
    const long double LN3 = 1.098612288668109691395245236922525704L;
    const long double CATALAN = 0.915965594177219015054603514932384110L;
    const double TOL = 1e-12;

    /* 1. closed forms */
    check_rel("psi", 1.0, datm_digamma(1.0), (double)-EG, TOL);
    check_rel("psi", 0.5, datm_digamma(0.5), (double)(-EG - 2 * LN2), TOL);
    check_rel("psi", 0.25, datm_digamma(0.25), (double)(-EG - PI / 2 - 3 * LN2), TOL);
    check_rel("psi", 0.75, datm_digamma(0.75), (double)(-EG + PI / 2 - 3 * LN2), TOL);
    check_rel("psi", 1.0 / 3, datm_digamma(1.0 / 3),
              (double)(-EG - PI / (2 * sqrtl(3.0L)) - 1.5L * LN3), 1e-12);
    /* psi(n) = -gamma + H_{n-1};  psi(n + 1/2) = -gamma - 2 ln 2 + sum_{k=1..n} 2/(2k-1) */
    long double h = 0.0L, hh = 0.0L;
    for (int n = 1; n <= 40; n++) {
        check_rel("psi", (double)n, datm_digamma((double)n), (double)(-EG + h), TOL);
        hh += 2.0L / (2 * n - 1);
        check_rel("psi", n + 0.5, datm_digamma(n + 0.5), (double)(-EG - 2 * LN2 + hh), TOL);
        h += 1.0L / n;
    }
    /* psi'(n) = pi^2/6 - sum_{k<n} 1/k^2;  psi'(1/2) = pi^2/2;  psi'(1/4) = pi^2 + 8 G */
    long double s2 = 0.0L;
    for (int n = 1; n <= 40; n++) {
        check_rel("trigamma", (double)n, datm_trigamma((double)n), (double)(PI * PI / 6 - s2), TOL);
        s2 += 1.0L / ((long double)n * n);
    }
    check_rel("trigamma", 0.5, datm_trigamma(0.5), (double)(PI * PI / 2), TOL);
    check_rel("trigamma", 0.25, datm_trigamma(0.25), (double)(PI * PI + 8 * CATALAN), TOL);

    /* 2. high-precision table */
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        double x = table[i][0];
        check_rel("psi", x, datm_digamma(x), table[i][1], TOL);
        if (isinf(table[i][2])) {
            if (!isinf(datm_trigamma(x))) { printf("FAIL trigamma(%g) not inf\n", x); failures++; }
        } else {
            check_rel("trigamma", x, datm_trigamma(x), table[i][2], TOL);
        }
    }

    /* 3. identities on a grid (each side computed independently; tolerance covers the
     *    rounding of the identity's own arithmetic, scaled by the sizes of its terms). */
    for (double x = 0.013; x < 60.0; x *= 1.07) {
        double lhs = datm_digamma(x + 1.0), rhs = datm_digamma(x) + 1.0 / x;
        double scale = fabs(datm_digamma(x)) + 1.0 / x;
        if (fabs(lhs - rhs) > 4e-15 * scale) {
            printf("FAIL recurrence at x = %.17g: %.17g vs %.17g\n", x, lhs, rhs);
            failures++;
        }
        double dup = 0.5 * (datm_digamma(x) + datm_digamma(x + 0.5)) + (double)LN2;
        double dscale = fabs(datm_digamma(x)) + fabs(datm_digamma(x + 0.5)) + 1.0;
        if (fabs(datm_digamma(2 * x) - dup) > 4e-15 * dscale) {
            printf("FAIL duplication at x = %.17g\n", x);
            failures++;
        }
        double t1 = datm_trigamma(x + 1.0), t2 = datm_trigamma(x) - 1.0 / (x * x);
        if (fabs(t1 - t2) > 4e-15 * (datm_trigamma(x) + 1.0 / (x * x))) {
            printf("FAIL trigamma recurrence at x = %.17g\n", x);
            failures++;
        }
        /* psi' by a central difference of psi: truncation ~ psi''' h^2 / 6. */
        double hstep = 1e-4 * x;
        double fd = (datm_digamma(x + hstep) - datm_digamma(x - hstep)) / (2 * hstep);
        if (fabs(fd - datm_trigamma(x)) > 1e-6 * datm_trigamma(x)) {
            printf("FAIL trigamma vs finite difference at x = %.17g: %.17g vs %.17g\n", x,
                   datm_trigamma(x), fd);
            failures++;
        }
    }
    /* reflection for x < 0: psi(1 - x) - psi(x) = pi cot(pi x) */
    for (double x = -7.93; x < 0.0; x += 0.37) {
        double want = datm_digamma(1.0 - x) - (double)PI / tan((double)PI * x);
        double scale = fabs(datm_digamma(1.0 - x)) + fabs((double)PI / tan((double)PI * x));
        if (fabs(datm_digamma(x) - want) > 1e-13 * scale) {
            printf("FAIL reflection at x = %.17g\n", x);
            failures++;
        }
    }
    /* poles and special inputs */
    if (!isnan(datm_digamma(0.0)) || !isnan(datm_digamma(-3.0)) || !isnan(datm_digamma(NAN))) {
        printf("FAIL poles / NaN must give NaN\n");
        failures++;
    }
    if (datm_digamma(INFINITY) != INFINITY || datm_trigamma(INFINITY) != 0.0) {
        printf("FAIL infinity\n");
        failures++;
    }
    /* softplus / sigmoid from math.h: no overflow, exact limits */
    if (datm_softplus(1000.0) != 1000.0 || datm_softplus(-1000.0) != 0.0 ||
        fabs(datm_softplus(0.0) - log(2.0)) > 1e-16 || datm_sigmoid(-1000.0) != 0.0 ||
        datm_sigmoid(1000.0) != 1.0 || !isfinite(datm_softplusf(200.0f))) {
        printf("FAIL softplus/sigmoid limits\n");
        failures++;
    }
    if (failures) { printf("%d failures\n", failures); return 1; }
    printf("ok\n");
    return 0;
}
