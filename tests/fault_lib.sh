# tests/fault_lib.sh: the shared start of the fault-injection and bad-input tests (sourced):
# a tiny generated corpus and specs, so each check runs in a fraction of a second, and the
# checks every row makes: the exit code, no crash (no signal, no sanitizer report), a
# message naming the place, nothing finished lost.
#   . "$(dirname "$0")/fault_lib.sh"; fault_init NAME
# Sets datm, tmp (scratch, removed on exit), corpus (a data set dir), spec_u (unigram),
# spec_w (a small WHAI with checkpoints every 3 mini-batches), fail, checks (the rows so far).
# The plain assertion rows are tests/testlib.sh's check, printed as table rows.
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"   # check
check_table=1
fault_init() {
    datm="${DATM_BIN:-build/datm}"
    [ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
    command -v h5dump > /dev/null || { echo "skip: h5dump missing"; exit 77; }
    fail=0; checks=0
    tmp=$(mktemp -d "/tmp/datm_$1_XXXXXX")
    trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
    export DATM_GNUPLOT=none   # figures: .dat and .gp only (fast, no gnuplot needed)
    corpus="$tmp/tiny"
    make_corpus "$corpus" 120 60 11
    spec_u="$tmp/unigram.yaml"
    printf 'name: tiny-unigram\nseed: 1\ndata:\n  dataset: %s\nmodel:\n  variant: unigram\ntrain:\n  epochs: 2\n  batch_size: 20\n  checkpoint_every: 4\nevaluate:\n  samples: 2\n' "$corpus" > "$spec_u"
    spec_w="$tmp/whai.yaml"
    printf 'name: tiny-whai\nseed: 1\ndata:\n  dataset: %s\nmodel:\n  variant: whai\n  layers: [8, 4]\ntrain:\n  epochs: 3\n  batch_size: 20\n  checkpoint_every: 3\n  keep_checkpoints: 3\n  eval_every: 6\n  eval_samples: 2\nevaluate:\n  samples: 4\n  classify: false\n' "$corpus" > "$spec_w"
}

# make_corpus DIR D V SEED: train/test docword (gzip), vocab, labels (3 classes), classes.txt.
make_corpus() {
    mkdir -p "$1"
    for split in train test; do
        local D=$2; [ $split = test ] && D=$(($2 / 4))
        awk -v D="$D" -v V="$3" -v s="$4$split" 'BEGIN {
            srand(length(s) * 7919 + (s ~ /test/)); n = 0
            for (d = 1; d <= D; d++) { k = 0
                for (w = 1; w <= V; w++) if (rand() < 0.15 || w == (d % V) + 1) { e[++n] = d " " w " " (1 + int(rand() * 4)) }
            }
            print D; print V; print n; for (i = 1; i <= n; i++) print e[i] }' | gzip -n > "$1/$split.docword.gz"
        awk -v D="$D" 'BEGIN { for (d = 1; d <= D; d++) print d % 3 }' > "$1/$split.labels"
    done
    for w in $(seq 1 "$3"); do echo "w$w"; done > "$1/vocab.txt"
    printf 'alpha\nbeta\ngamma\n' > "$1/classes.txt"
}

# row CLASS 'what' EXPECTED_RC ACTUAL_RC ERRFILE [PATTERN]: one table row: the exit code, no
# crash or sanitizer report, and (when given) the message matching PATTERN (grep -E).
row() {
    local cls=$1 what=$2 want=$3 got=$4 errf=$5 pat=${6:-}
    local ok=1 why=""
    checks=$((checks + 1))
    if [ "$got" -ge 128 ] && [ "$want" -lt 128 ]; then ok=0; why="killed by signal $((got - 128))"; fi
    if [ "$got" != "$want" ]; then ok=0; why="$why exit $got, expected $want"; fi
    if grep -qE "AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|LeakSanitizer" "$errf" 2>/dev/null; then
        ok=0; why="$why sanitizer report"
    fi
    if grep -q "(hdf5: )" "$errf" 2>/dev/null; then ok=0; why="$why empty HDF5 reason"; fi
    if grep -q "HDF5 object(s)" "$errf" 2>/dev/null; then ok=0; why="$why HDF5 handles left open"; fi
    if [ -n "$pat" ] && ! grep -qE -- "$pat" "$errf" 2>/dev/null; then ok=0; why="$why message lacks /$pat/"; fi
    local msg
    msg=$(grep -E '^(error: |datm |warning: .*(cannot|damaged|skipped|No space))|: (rejected|cannot|not )' "$errf" 2>/dev/null |
          grep -v 'gnuplot not found' | tail -1 | sed "s|$tmp/||g" | cut -c1-170)
    if [ $ok = 1 ]; then
        printf 'ok   | %-12s | %s | exit %s | %s\n' "$cls" "$what" "$got" "$msg"
    else
        printf 'FAIL | %-12s | %s |%s | %s\n' "$cls" "$what" "$why" "$msg"
        sed 's/^/    /' "$errf" 2>/dev/null | tail -5
        fail=1
    fi
}

# status FILE: the status attribute of a result file ("" when unreadable).
status() { h5dump -a /status "$1" 2>/dev/null | sed -n 's/.*"\([A-Z]*\)".*/\1/p' | head -1; }
# metric FILE NAME: a /metrics scalar at 17 digits.
metric() { h5dump -m %.17g -d "/metrics/$2" "$1" 2>/dev/null | awk '/\(0\)/ { sub(/.*\(0\): */, ""); print }'; }
