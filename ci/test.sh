#!/usr/bin/env bash
# ci/test.sh: set up a fresh Debian machine, build datm with -Werror, and pass the tests.
#   bash ci/test.sh            default suite + the real-data regression label
#   DATM_TEST_LABELS='unit' bash ci/test.sh   only some labels (a ctest -L regex)
# Also builds and runs the unit tests (not stat) under AddressSanitizer + UBSan
# (DATM_SKIP_ASAN=1 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

bash ci/setup.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDATM_WERROR=ON >/dev/null
cmake --build build -j"$jobs"

export DATM_DATA="${DATM_DATA:-$(cd .. && pwd)/shared/data}"
labels="${DATM_TEST_LABELS:-unit|stat|grad|e2e|regression}"
ctest --test-dir build -L "$labels" -LE slow --output-on-failure -j1 --timeout 1800

if [ "${DATM_SKIP_ASAN:-0}" != 1 ]; then
  # Optimised (-O2 -g) so the sanitizer job stays within CI's time; the heavy statistical
  # tests (label stat) run in the Release job above only.
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDATM_WERROR=ON \
        -DDATM_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan -L unit -LE 'slow|regression|stat' \
        --output-on-failure -j"$jobs"
fi
