/* engine/math/runtime_env.c: the two settings of the BLAS and OpenMP runtimes that can only be
 * chosen through the environment before the libraries load, and the restart that applies them.
 *
 * OpenBLAS kernels. OpenBLAS (DYNAMIC_ARCH builds, as Debian's) picks its kernels once, when
 * the library is loaded, from the CPU model number. A model newer than the library (Debian 12's
 * 0.3.21 on an Emerald Rapids Xeon, family 6 model 207, measured here) is not recognised and
 * gets the Prescott (SSE3) kernels: sgemm at (50,128)x(128,128) ran at 21 GFLOP/s against 112
 * with the SkylakeX kernels (tests/test_math_gemm_small, same machine). Its only switch is the
 * OPENBLAS_CORETYPE environment variable, read at that same load. When the library has fallen
 * back to Prescott on a CPU with AVX2 (or AVX-512), the variable is set to the matching family.
 * A user's own OPENBLAS_CORETYPE is always left alone; DATM_BLAS_KEEP_CORE=1 keeps Prescott.
 *
 * OpenMP wait policy. libgomp's threads spin (about 300,000 polls) at every barrier and at the
 * end of every parallel region before they sleep. On a machine whose cores are busy with other
 * processes, a spinning thread takes the core its descheduled sibling needs, so every barrier
 * waits for a time slice: bench_whai (128-64-32, 2 threads, load average ~11 on 2 cores) trained
 * 1,226 documents/s spinning, 5,934 with GOMP_SPINCOUNT=10000 and 11,001 with
 * OMP_WAIT_POLICY=passive. libgomp reads the policy once, in its constructor, before main(), and
 * offers no call to change it, so OMP_WAIT_POLICY=passive is set here. A user's own
 * OMP_WAIT_POLICY or GOMP_SPINCOUNT is always left alone (OMP_WAIT_POLICY=active restores the
 * spinning). Neither setting changes any computed number.
 *
 * When either variable was set, the program starts itself again (execv of /proc/self/exe, same
 * argv), once: after the restart both are set, so nothing more is done. */
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

/* Sets OPENBLAS_CORETYPE when OpenBLAS fell back to Prescott on a newer CPU; 1 when set. */
static int select_blas_core(void)
{
    if (getenv("OPENBLAS_CORETYPE")) return 0;
    const char *keep = getenv("DATM_BLAS_KEEP_CORE");
    if (keep && strcmp(keep, "0") != 0) return 0;
    const char *now = openblas_get_corename();
    if (!now || strcmp(now, "Prescott") != 0) return 0;
    const char *want = wanted_core();
    return want && setenv("OPENBLAS_CORETYPE", want, 1) == 0;
}

/* Sets OMP_WAIT_POLICY=passive unless the user chose a policy or a spin count; 1 when set. */
static int select_wait_policy(void)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return 0;
    return setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
}

void datm_runtime_env(char **argv)
{
    if (!argv) return;
    const int core = select_blas_core();
    const int wait = select_wait_policy();
    if (!core && !wait) return;
    execv("/proc/self/exe", argv);
    /* no restart possible: go on with what the libraries chose at load */
    if (core) unsetenv("OPENBLAS_CORETYPE");
    if (wait) unsetenv("OMP_WAIT_POLICY");
}

const char *datm_omp_wait_policy(void)
{
    const char *wp = getenv("OMP_WAIT_POLICY"), *sc = getenv("GOMP_SPINCOUNT");
    if (wp) return wp;
    return sc ? "GOMP_SPINCOUNT" : "libgomp default (spin, then sleep)";
}
