# tests/testlib.sh: the shared start of the shell tests that drive the datm binary on a data
# set of $DATM_DATA (sourced, not a test itself):
#   . "$(dirname "$0")/testlib.sh"
#   datm_test_init NAME DATASET     # exits 77 (skip) without the binary, the data or h5dump
#   check 'COND' 'what it means'   # prints ok / FAIL, a failure sets fail=1
#   ...; exit $fail
# Sets datm (the binary, $DATM_BIN or build/datm), data ($DATM_DATA or ../shared/data) and tmp
# (a scratch directory removed on exit).
datm_test_init() {
    datm="${DATM_BIN:-build/datm}"
    data="${DATM_DATA:-../shared/data}"
    [ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
    [ -f "$data/$2/train.docword.gz" ] || { echo "skip: $data/$2 missing"; exit 77; }
    command -v h5dump > /dev/null || { echo "skip: h5dump missing"; exit 77; }
    fail=0
    tmp=$(mktemp -d "/tmp/datm_test_$1_XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
}
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }
