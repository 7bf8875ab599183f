/* ctest-labels: unit  ctest-timeout: 60 */
/* tests/test_sdatm_diverged.c: sdatm_diverged (models/sdatm.c), the test behind the warning
 * that the supervised training has diverged. On the per-epoch training-batch errors of real
 * runs (MNIST sDATM-N 512-256-128-64):
 *  - the 3 + 57 epoch run that collapsed (epochs 4-44): the test fires first at epoch 40,
 *    where the error went from 1.33% to 33.6%, and not before;
 *  - a healthy 3 + 33 epoch run (seed 2): it never fires;
 * and on made-up cases: no best yet (NAN), non-finite errors, large but ordinary swings of an
 * early, still poor head (0.5 -> 0.75), a jump of more than 0.2 that is less than 3x. */
#include <math.h>
#include <stdio.h>

#include "../models/sdatm.h"
#include "test_check.h"

/* the 1-based index of the first epoch the test fires on, replaying the running best as
 * sdatm_track keeps it; 0 when it never fires */
static int first_firing(const double *err, int n)
{
    double best = NAN;
    for (int i = 0; i < n; i++) {
        if (sdatm_diverged(best, err[i])) return i + 1;
        if (!(err[i] >= best)) best = err[i];
    }
    return 0;
}

int main(void)
{
    /* supervised epochs 4..44 of mnist_n_w512_e60 (run.log, "head on the training batches") */
    static const double collapsed[] = {
        0.1607, 0.05753, 0.04547, 0.03873, 0.0315, 0.03002, 0.02622, 0.02463, 0.02273, 0.02137,
        0.0204, 0.01967, 0.01937, 0.01795, 0.01733, 0.01705, 0.01735, 0.022, 0.0143, 0.015,
        0.01462, 0.01553, 0.01617, 0.01435, 0.01552, 0.01533, 0.01455, 0.01427, 0.01488, 0.0143,
        0.01465, 0.01363, 0.0135, 0.01453, 0.0125, 0.01332, 0.3364, 0.6614, 0.7483, 0.8407, 0.896};
    /* epochs 4..36 of mnist_n_w512x2_seed2 */
    static const double healthy[] = {
        0.1449, 0.05453, 0.04248, 0.03578, 0.03195, 0.02795, 0.02492, 0.02305, 0.02078, 0.02007,
        0.02685, 0.01578, 0.01545, 0.01687, 0.01577, 0.01548, 0.01512, 0.01458, 0.01477, 0.01558,
        0.01475, 0.01338, 0.0127, 0.014, 0.0125, 0.0166, 0.01245, 0.01245, 0.01048, 0.01233,
        0.01295, 0.01035};
    const int nc = (int)(sizeof collapsed / sizeof *collapsed);
    const int nh = (int)(sizeof healthy / sizeof *healthy);
    const int fc = first_firing(collapsed, nc), fh = first_firing(healthy, nh);
    printf("collapsed run: fires at its supervised-phase epoch index %d (epoch %d); healthy run: "
           "%d\n", fc, fc + 3, fh);
    CHECK(fc + 3 == 40, "the collapsed run should fire at epoch 40, fired at %d", fc + 3);
    CHECK(fh == 0, "the healthy run fired at index %d", fh);
    CHECK(!sdatm_diverged(NAN, 0.9), "no best yet");
    CHECK(!sdatm_diverged(0.01, NAN) && !sdatm_diverged(0.01, INFINITY), "non-finite error");
    CHECK(!sdatm_diverged(0.5, 0.75), "an early, poor head's swing (+0.25, 1.5x)");
    CHECK(!sdatm_diverged(0.12, 0.33), "more than 0.2 up but under 3x");
    CHECK(!sdatm_diverged(0.01, 0.2), "3x or more but not 0.2 up");
    CHECK(sdatm_diverged(0.0, 0.25), "from a perfect fit to 25 percent");
    return fails ? 1 : 0;
}
