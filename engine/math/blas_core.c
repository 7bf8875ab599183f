/* engine/math/blas_core.c: makes OpenBLAS use the kernels of the CPU it runs on.
 *
 * OpenBLAS (DYNAMIC_ARCH builds, as Debian's) picks its kernels once, when the library is
 * loaded, from the CPU model number. A model newer than the library (Debian 12's 0.3.21 on an
 * Emerald Rapids Xeon, family 6 model 207, measured here) is not recognised and gets the
 * Prescott (SSE3) kernels: sgemm at (50,128)x(128,128) ran at 21 GFLOP/s against 112 with
 * the SkylakeX kernels (tests/test_math_gemm_small, same machine). Its only switch is the
 * OPENBLAS_CORETYPE environment variable, read at that same load, so when the library has
 * fallen back to Prescott on a CPU with AVX2 (or AVX-512), the program sets the variable to
 * the matching kernel family and starts itself again (execv of /proc/self/exe, same argv).
 * A user's own OPENBLAS_CORETYPE is always left alone, and DATM_BLAS_KEEP_CORE=1 turns the
 * restart off. */
#include "math/math.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel family for this CPU's features, or NULL when Prescott is what it can run. */
static const char *wanted_core(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

void datm_blas_select_core(char **argv)
{
    if (!argv || getenv("OPENBLAS_CORETYPE")) return;
    const char *keep = getenv("DATM_BLAS_KEEP_CORE");
    if (keep && strcmp(keep, "0") != 0) return;
    const char *now = openblas_get_corename();
    if (!now || strcmp(now, "Prescott") != 0) return;
    const char *want = wanted_core();
    if (!want || setenv("OPENBLAS_CORETYPE", want, 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE");   /* no restart possible: go on with Prescott */
}
