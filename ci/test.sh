#!/usr/bin/env bash
# ci/test.sh: set up a fresh Debian machine, build datm with -Werror, and pass the tests.
#   bash ci/test.sh            default suite: labels unit|stat|grad|e2e|regression, not slow
#   DATM_TEST_LABELS='unit' bash ci/test.sh   only some labels (a ctest -L regex)
# Then builds datm with -DDATM_MPI=ON (build-mpi) and runs the tests labelled mpi under mpirun.
# Also builds and runs the unit and e2e tests (not stat) under AddressSanitizer + UBSan
# (DATM_SKIP_ASAN=1 skips). Ends with the skipped tests and their reasons (ci/skip_report.sh)
# and one line `ci: P passed, F failed, S skipped` over both runs. The data the tests need
# come from ci/setup.sh (.cache/data: brown, digits); only the tests that reproduce the paper
# on its own files (../shared/data, or DATM_DATA) skip without them.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

DATM_SETUP_TESTS=1 bash ci/setup.sh   # also the browser of tests/test_report_browser.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDATM_WERROR=ON >/dev/null
cmake --build build -j"$jobs"

export DATM_DATA="${DATM_DATA:-$(cd .. && pwd)/shared/data}"
labels="${DATM_TEST_LABELS:-unit|stat|grad|e2e|regression}"
reports=("Release=$PWD/build/ctest-junit.xml")
rm -f build/ctest-junit.xml build-asan/ctest-junit.xml
rc=0
ctest --test-dir build -L "$labels" -LE slow --output-on-failure -j1 --timeout 1800 \
      --output-junit "$PWD/build/ctest-junit.xml" || rc=$?

# The MPI build (-DDATM_MPI=ON: engine/par/par_mpi.c): only the datm binary, and the test of
# data-parallel runs over mpirun ranks (tests/mpi_ranks.sh: 2 ranks == 1 rank, resume on
# another rank count).
if [ "$rc" = 0 ]; then
  cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DDATM_WERROR=ON -DDATM_MPI=ON >/dev/null
  cmake --build build-mpi -j"$jobs" --target datm
  reports+=("MPI=$PWD/build-mpi/ctest-junit.xml")
  rm -f build-mpi/ctest-junit.xml
  ctest --test-dir build-mpi -L mpi --output-on-failure -j1 --timeout 900 \
        --output-junit "$PWD/build-mpi/ctest-junit.xml" || rc=$?
fi

if [ "$rc" = 0 ] && [ "${DATM_SKIP_ASAN:-0}" != 1 ]; then
  # Optimised (-O2 -g) so the sanitizer job stays within CI's time; the heavy statistical
  # tests (label stat) run in the Release job above only.
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDATM_WERROR=ON \
        -DDATM_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j"$jobs"
  reports+=("ASan+UBSan=$PWD/build-asan/ctest-junit.xml")
  # The unit and e2e labels: every command on its error paths (faults, outputs, resume,
  # fork, infer, corpus build, pipelines, exports, the bad-input table, kill -9 at every
  # stage), the installed library and plugin example built with the same sanitizers, and the
  # Python package with the sanitizer's runtime preloaded (tests/testlib.sh). DATM_TEST_QUICK=1:
  # the tests whose cost is training take their small sizes (fewer epochs or documents, the
  # same code paths and checks); the Release job above runs them at full size.
  # OMP_WAIT_POLICY=passive is the setting datm gives itself at start (engine/math/
  # runtime_env.c), so each datm process of the job skips its restart, which under
  # ASan costs as much as the rest of a short command (0.17 s against 0.09 s for `datm
  # describe whai`); test_cli_blas_core unsets it to run the restart.
  DATM_TEST_QUICK=1 OMP_WAIT_POLICY=passive ASAN_OPTIONS=detect_leaks=1 \
    ctest --test-dir build-asan -L 'unit|e2e' -LE 'slow|regression|stat' \
        --output-on-failure -j"$jobs" \
        --output-junit "$PWD/build-asan/ctest-junit.xml" || rc=$?
fi
bash ci/skip_report.sh "${reports[@]}"
exit "$rc"
