#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_python.sh: the pytest suite of the Python package (python/tests) with Debian's
# python3 (numpy, scipy, pytest from ci/setup.sh), against this build's libdatm.so and datm.
set -u
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${DATM_BUILD_DIR:-$SRC/build}
[ -e "$BUILD/libdatm.so" ] || { echo "skipped: $BUILD/libdatm.so not built"; exit 77; }
py=/usr/bin/python3   # Debian's, where python3-numpy/-scipy/-pytest are installed
"$py" -c 'import numpy, scipy, pytest' 2> /dev/null || {
  echo "FAIL: $py lacks numpy, scipy or pytest (ci/setup.sh installs python3-numpy python3-scipy python3-pytest)"
  exit 1; }
cd "$SRC"
DATM_LIB=$BUILD/libdatm.so DATM_BIN=${DATM_BIN:-$BUILD/datm} PYTHONPATH=$SRC/python \
  "$py" -m pytest -q -p no:cacheprovider python/tests
