# tests/testlib.sh: the shared start of the shell tests that drive the datm binary on a data
# set (sourced, not a test itself):
#   . "$(dirname "$0")/testlib.sh"
#   datm_test_init NAME DATASET     # exits 77 (skip) without the binary, the data or h5dump
#   check 'COND' 'what it means'   # prints ok / FAIL, a failure sets fail=1 and counts in fails
#   ...; exit $fail
# Tests that find their binary and data themselves source it for check and h5_scalar alone.
# Sets datm (the binary, $DATM_BIN or build/datm), data (the directory that holds DATASET,
# found by datm_data_dir) and tmp (a scratch directory removed on exit).

# datm_data_dir NAME: prints the directory holding data set NAME, looked up in the order a
# spec's `dataset: NAME` is (datm_dataset_resolve): $DATM_DATA (default ../shared/data), then
# .cache/data of the source tree, where ci/setup.sh builds brown and writes digits.
datm_data_dir() {
    local d src="${DATM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
    for d in "${DATM_DATA:-../shared/data}" "$src/.cache/data"; do
        [ -f "$d/$1/train.docword.gz" ] && { echo "$d"; return 0; }
    done
    return 1
}

datm_test_init() {
    datm="${DATM_BIN:-build/datm}"
    [ -x "$datm" ] || { echo "skipped: $datm not built"; exit 77; }
    data=$(datm_data_dir "$2") || {
        echo "skipped: data set $2 not in ${DATM_DATA:-../shared/data} nor .cache/data (bash ci/setup.sh writes it)"
        exit 77
    }
    command -v h5dump > /dev/null || { echo "skipped: h5dump missing"; exit 77; }
    fail=0
    tmp=$(mktemp -d "/tmp/datm_test_$1_XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
}

# datm_test_quick: true when DATM_TEST_QUICK=1, which ci/test.sh sets for its sanitizer job.
# The tests whose cost is training then take their small sizes (fewer epochs or documents):
# the same commands and code paths and the same checks, with bounds that hold at that size.
datm_test_quick() { [ "${DATM_TEST_QUICK:-0}" = 1 ]; }

# datm_test_sanitize BUILD_DIR: the sanitizers BUILD_DIR was configured with (its CMakeCache's
# DATM_SANITIZE, e.g. "address,undefined"); empty for a plain build. A program that a test
# builds against that build's libdatm.so needs the same flags: the sanitizer's runtime must be
# the first library of the process.
datm_test_sanitize() { sed -n 's/^DATM_SANITIZE:STRING=//p' "$1/CMakeCache.txt" 2>/dev/null; }

# datm_test_python_env BUILD_DIR: the environment of a python3 that loads BUILD_DIR's
# libdatm.so. For a sanitized build it exports LD_PRELOAD, AddressSanitizer's runtime of the
# compiler that built it (the runtime must come first in the process), and LSAN_OPTIONS with
# tests/python_lsan.supp: the leaks allocated inside CPython and numpy, which hold their
# objects at exit (test_python.sh checks that a leak of libdatm is still reported).
datm_test_python_env() {
    [ -n "$(datm_test_sanitize "$1")" ] || return 0
    local cc src=${DATM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
    cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$1/CMakeCache.txt")
    export LD_PRELOAD=$("${cc:-cc}" -print-file-name=libasan.so)
    export LSAN_OPTIONS="suppressions=$src/tests/python_lsan.supp:print_suppressions=0"
}

# datm_test_fresh NAME: the start of a test on the Brown corpus that ci/setup.sh builds into
# .cache/data/brown (a fresh clone has it, so its absence is a failure, not a skip): sets SRC
# (the source tree), datm (the binary; exit 77 when it is not built), brown (the corpus),
# fail=0 and tmp (a scratch directory removed on exit).
datm_test_fresh() {
    SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
    datm=${DATM_BIN:-$SRC/build/datm}
    [ -x "$datm" ] || { echo "skipped: $datm not built"; exit 77; }
    brown=$SRC/.cache/data/brown
    [ -f "$brown/train.docword.gz" ] || { echo "FAIL: $brown missing: run bash ci/setup.sh"; exit 1; }
    fail=0
    tmp=$(mktemp -d "/tmp/datm_test_$1_XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
}

# datm_test_heldout NAME [DIR]: the start of a test on Brown laid out for the held-out-documents
# protocol (tests/brown_heldout.sh writes it into $T/DIR, default bh): sets DATM (the binary),
# SRC, T (a scratch directory removed on exit) and fail=0; exits 77 without h5dump or Brown.
datm_test_heldout() {
    DATM=${DATM_BIN:-build/datm}
    SRC=${DATM_SOURCE_DIR:-.}
    command -v h5dump >/dev/null || { echo "skipped: h5dump (hdf5-tools) missing"; exit 77; }
    T=$(mktemp -d "/tmp/datm_$1_XXXXXX")
    trap 'rm -rf "$T"' EXIT
    bash "$SRC/tests/brown_heldout.sh" "$T/${2:-bh}" 2> "$T/bh.txt" ||
        { echo "skipped: $(cat "$T/bh.txt")"; exit 77; }
    fail=0
}

# check 'COND' ['what it means']: evaluates COND (a shell condition, so $? is the status of the
# command before the check); prints "ok: MEANING" or "FAIL: MEANING" (COND when no meaning is
# given), or, with check_table=1, the table row "ok   | MEANING" / "FAIL | MEANING" (the
# fault tables of tests/fault_lib.sh). Every check adds one to checks (the tables end with
# their count); a failure sets fail=1 and adds one to fails; the test ends with exit $fail.
check() {
    if eval "$1"; then
        check_say ok "${2:-$1}"
    else
        check_say FAIL "${2:-$1}"
        fail=1
        fails=$((${fails:-0} + 1))
    fi
    checks=$((${checks:-0} + 1))
}
check_say() {
    if [ "${check_table:-0}" = 1 ]; then printf '%-4s | %s\n' "$1" "$2"; else echo "$1: $2"; fi
}

# h5_scalar FILE DATASET: the first value of DATASET in FILE (%.17g), empty when absent.
h5_scalar() { h5dump -m %.17g -d "$2" "$1" 2>/dev/null | awk '/\(0\):/ {print $2; exit}'; }

# run_ok SPEC OUT [OVERRIDES...]: datm run SPEC -o OUT --quiet OVERRIDES with its output in
# OUT.txt (the binary is $datm, or $DATM), and checks that it exits 0; rc is its exit code.
run_ok() {
    local spec=$1 out=$2
    shift 2
    "${datm:-$DATM}" run "$spec" "$@" -o "$out" --quiet > "$out.txt" 2>&1; rc=$?
    check "[ $rc = 0 ]" "datm run exit $rc: $(tail -3 "$out.txt")"
}
