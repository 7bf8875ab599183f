#!/bin/bash
# ctest-labels: unit  ctest-timeout: 60
# tests/test_params_read.sh: every key of every parameter table is read by the code
# (ci/params_read.py: each row's typed struct field has a read somewhere in engine/ and
# models/, or the key is read by name from a stored spec), and the check itself catches an
# unread row: a copy of the sources with one extra row in WHAI's table must fail, naming it.
. "$(dirname "$0")/testlib.sh"
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v python3 > /dev/null || { echo "skipped: python3 missing"; exit 77; }
fail=0
tmp=$(mktemp -d /tmp/datm_test_params_read_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$(python3 "$SRC/ci/params_read.py" "$SRC" 2>&1); rc=$?
check '[ $rc -eq 0 ] && echo "$out" | grep -q " 0 unread"' "every key is read ($(echo "$out" | tail -3))"
cp -r "$SRC/engine" "$SRC/models" "$tmp/"
sed -i 's|^    X(phi_floor, "phi_floor"|    X(zz_unread, "zz_unread", REAL, "1", 0, 2, NULL, "x") \\\n&|' \
    "$tmp/models/whai.h"
out=$(python3 "$SRC/ci/params_read.py" "$tmp" 2>&1); rc=$?
check '[ $rc -eq 1 ] && echo "$out" | grep -q "whai_params.zz_unread"' "an unread row fails ($out)"
exit $fail
