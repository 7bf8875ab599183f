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
export DATM_LIB=$BUILD/libdatm.so DATM_BIN=${DATM_BIN:-$BUILD/datm} PYTHONPATH=$SRC/python
. "$SRC/tests/testlib.sh"
datm_test_python_env "$BUILD"
if [ -n "$(datm_test_sanitize "$BUILD")" ]; then   # the suppressions are not blind to libdatm
  leak=$("$py" -c '
import ctypes, os, sys
lib = ctypes.CDLL(os.environ["DATM_LIB"])
docs, err = ctypes.c_void_p(), ctypes.create_string_buffer(1024)
sys.exit(lib.datm_docs_read(sys.argv[1].encode(), ctypes.byref(docs), err))   # never closed
' "$SRC/.cache/data/brown/test.docword.gz" 2>&1 > /dev/null)
  grep -q "in datm_docs_read" <<< "$leak" ||
    { echo "FAIL: a leak of libdatm under python is not reported with the suppressions"; exit 1; }
  echo "ok: a leak of libdatm under python is reported with the suppressions"
fi
"$py" -m pytest -q -p no:cacheprovider python/tests
