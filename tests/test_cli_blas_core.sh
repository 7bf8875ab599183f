#!/bin/bash
# ctest-labels: unit  ctest-timeout: 60
# tests/test_cli_blas_core.sh: datm makes OpenBLAS use the kernels of the CPU
# (engine/math/runtime_env.c). `datm --version` prints the BLAS configuration, whose last word
# but one names the kernel family in use, and the OpenMP wait policy.
# - a user's OPENBLAS_CORETYPE is kept (Haswell asked, Haswell used; on CPUs with AVX2+FMA);
# - where OpenBLAS on its own falls back to Prescott (DATM_BLAS_KEEP_CORE=1 shows what it
#   picks) on a CPU with AVX2+FMA, plain datm runs with a newer family instead; where it does
#   not fall back, datm keeps its choice.
# - OpenMP threads sleep at barriers unless the user chose: OMP_WAIT_POLICY=passive by
#   default, a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT kept.
# Skips (77) when the binary is missing.
set -u
DATM=${DATM_BIN:-build/datm}
[ -x "$DATM" ] || { echo "skip: $DATM not built"; exit 77; }
fail=0
. "$(dirname "$0")/testlib.sh"   # check
core() { "$@" --version | sed -n 's/^BLAS: .* \([A-Za-z0-9]*\) MAX_THREADS=.*/\1/p'; }

v=$("$DATM" --version)
check 'echo "$v" | grep -q "^BLAS: OpenBLAS"' "--version prints the BLAS configuration"
unset OPENBLAS_CORETYPE
own=$(DATM_BLAS_KEEP_CORE=1 core "$DATM")
ours=$(core "$DATM")
echo "OpenBLAS's own choice: $own; datm's: $ours"
check '[ -n "$own" ] && [ -n "$ours" ]' "the kernel family is read from --version"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    forced=$(OPENBLAS_CORETYPE=Haswell core "$DATM")
    check '[ "$forced" = Haswell ]' "OPENBLAS_CORETYPE=Haswell is kept (got '$forced')"
    if [ "$own" = Prescott ]; then
        check '[ "$ours" != Prescott ]' "Prescott fallback replaced on an AVX2 CPU (got '$ours')"
    else
        check '[ "$ours" = "$own" ]' "OpenBLAS's own choice kept when it recognised the CPU"
    fi
else
    check '[ "$ours" = "$own" ]' "no AVX2: OpenBLAS's own choice kept"
fi
wp() { "$@" --version | sed -n 's/^OpenMP wait policy: //p'; }
w=$(env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$DATM" --version | sed -n 's/^OpenMP wait policy: //p')
check '[ "$w" = passive ]' "OMP_WAIT_POLICY=passive by default (got '$w')"
w=$(OMP_WAIT_POLICY=active wp "$DATM")
check '[ "$w" = active ]' "a user's OMP_WAIT_POLICY is kept (got '$w')"
w=$(env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=1000 "$DATM" --version | sed -n 's/^OpenMP wait policy: //p')
check '[ "$w" = GOMP_SPINCOUNT ]' "a user's GOMP_SPINCOUNT is kept, no policy added (got '$w')"
exit $fail
