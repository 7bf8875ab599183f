/* engine/core/testhooks.h: the whole test-only interface of the engine, in one place. A
 * product run never sets any of it; it exists so that tests can reach a code path the CPU or
 * the input would not choose on its own, and fail a run deterministically.
 *
 * 1. Paths (datm_test_hooks): each field, when nonzero, makes one dispatch take the portable
 *    or other path so a test can compare it with the fast one on the same machine. Tests set
 *    a field around the calls they compare and set it back to 0 (datm_test_hooks_reset).
 *    The fields are read, never written, by the engine; they are plain ints read once per
 *    call, so the cost in a product run is one load.
 * 2. Faults (DATM_TEST_FAULT): the environment variable DATM_TEST_FAULT="point[@n],..."
 *    makes datm_test_fault(point) return 1 at the n-th time (1 by default) the program
 *    reaches `point`, and 0 otherwise; without the variable it is always 0. The
 *    fault-injection tests (tests/test_fault_*.sh) use it:
 *      enospc:write  a datm_afile commit fails with ENOSPC (a full disk)
 *      enospc:h5     an HDF5 dataset or attribute write fails with ENOSPC
 *      kill:<where>  SIGKILL at a point of the run (datm_test_kill): ckpt (a checkpoint
 *                    written, not yet renamed), result (result body written, status not yet
 *                    COMPLETED), completed (status COMPLETED, not yet renamed), renamed
 *                    (result.h5 in place, figures not yet made), swap (an --overwrite run
 *                    swapped in, the old run not yet removed) */
#ifndef DATM_CORE_TESTHOOKS_H
#define DATM_CORE_TESTHOOKS_H

typedef struct datm_test_hooks_t {
    int sgemm_small_avx2;   /* math/gemm_small.c: the AVX2 kernel even where AVX-512 is there */
    int sgemm_small_blas;   /* math/gemm_small.c: the BLAS path instead of the small kernels */
    int rand_scalar;        /* rand/philox.c, continuous.c: portable blocks, no AVX2/AVX-512 */
    int tlasgr_scalar;      /* decoder/tlasgr.c: the portable block kernel, no AVX2 */
    int tlasgr_avx2;        /* decoder/tlasgr.c: the AVX2 kernels even where AVX-512 is there */
    int tlasgr_unfused;     /* decoder/tlasgr.c: reduce dirty stats first (no fused reduce) */
    int augment_scalar;     /* decoder/augment.c: the portable paths, no AVX2 */
} datm_test_hooks_t;

extern datm_test_hooks_t datm_test_hooks;   /* all 0 in a product run */

void datm_test_hooks_reset(void);            /* every path back to 0 */

int  datm_test_fault(const char *point);
void datm_test_kill(const char *where);     /* raise(SIGKILL) when "kill:<where>" fires */

#endif
