#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 240
# tests/test_fault_checkpoint.sh: damaged checkpoints. A run killed after its third checkpoint
# (iterations 9, 12, 15 kept) gets its newest checkpoint damaged in one way per row: bytes of
# its data flipped (caught by the SHA-256 digest), truncated, emptied, replaced by text, its
# `complete` mark missing; `datm resume` warns naming the file and falls back to the newest
# whole one, and the run ends bit-identical to the undisturbed one. All damaged: it starts
# over with a warning per file. A checkpoint of another spec is an error naming it. `datm fork`
# falls back the same way.
. "$(dirname "$0")/fault_lib.sh"
fault_init fault_ckpt

same() { h5dump -m %.17g -d /metrics/perplexity -d /curves/loss -d /model/phi_1 "$1" 2>/dev/null | grep -v '^HDF5'; }
$datm run "$spec_w" -o "$tmp/ref" --quiet 2> /dev/null || { echo "FAIL: reference run"; exit 1; }
same "$tmp/ref/result.h5" > "$tmp/ref.dump"
DATM_TEST_KILL_AT_ITER=16 $datm run "$spec_w" -o "$tmp/base" --quiet 2> /dev/null & wait $!
newest="checkpoints/ckpt-000000000015.h5"
check '[ -f "$tmp/base/$newest" ]' "the killed run kept checkpoints 9, 12, 15"

# flip bytes in the middle of the file (raw data: only the digest sees it)
damage_flip() { local n; n=$(stat -c %s "$1"); printf '\x55\xaa\x55\xaa\x55\xaa\x55\xaa' |
                dd of="$1" bs=1 seek=$((n * 3 / 4)) conv=notrunc 2> /dev/null; }
damage_trunc() { truncate -s $(( $(stat -c %s "$1") / 2 )) "$1"; }
damage_empty() { : > "$1"; }
damage_text() { echo "not a checkpoint" > "$1"; }
damage_incomplete() { python3 - "$1" <<'PY' 2>/dev/null || h5dump -a /checkpoint/complete "$1" > /dev/null
import sys
try:
    import h5py
except ImportError:
    sys.exit(1)
with h5py.File(sys.argv[1], "r+") as f:
    del f["checkpoint"].attrs["complete"]
PY
}
for kind in flip trunc empty text; do
  d="$tmp/$kind"
  cp -r "$tmp/base" "$d"
  damage_$kind "$d/$newest"
  $datm resume "$d" --quiet 2> "$d.err"; rc=$?
  row checkpoint "newest checkpoint $kind, resume" 0 $rc "$d.err" "warning: $d/$newest: .*skipped, trying the previous"
  check 'grep -q "continuing after iteration 12" "$d/run.log" && same "$d/result.h5" | cmp -s - "$tmp/ref.dump"' \
        "  $kind: resumed from iteration 12, equal to the undisturbed run"
done

# every checkpoint damaged: a warning for each, the run starts over and still ends equal
d="$tmp/all"
cp -r "$tmp/base" "$d"
for f in "$d"/checkpoints/*.h5; do damage_flip "$f"; done
$datm resume "$d" --quiet 2> "$d.err"; rc=$?
row checkpoint "every checkpoint damaged, resume" 0 $rc "$d.err" "ckpt-000000000009.h5: .*damaged"
check '[ "$(grep -c "damaged" "$d.err")" -ge 3 ] && grep -q "no complete checkpoint\|starting from the beginning" "$d/run.log" && same "$d/result.h5" | cmp -s - "$tmp/ref.dump"' \
      "  all damaged: three warnings, started over, equal to the undisturbed run"

# a checkpoint of another spec in its place: an error naming it, nothing changed
d="$tmp/foreign"
cp -r "$tmp/base" "$d"
$datm run "$spec_w" model.lr=0.002 train.epochs=4 -o "$tmp/other" --quiet 2> /dev/null
cp "$tmp/other/checkpoints/ckpt-000000000015.h5" "$d/$newest"
$datm resume "$d" --quiet 2> "$d.err"; rc=$?
row checkpoint "newest checkpoint from another spec" 1 $rc "$d.err" "$newest was written by a different spec"
check '[ ! -e "$d/result.h5" ]' "  foreign checkpoint: no result"

# fork from a run whose newest checkpoint is damaged: the previous one, with a warning
d="$tmp/forksrc"
cp -r "$tmp/base" "$d"
damage_flip "$d/$newest"
$datm fork "$d" -o "$tmp/forked" --quiet 2> "$tmp/fork.err"; rc=$?
row checkpoint "fork from a run with a damaged newest checkpoint" 0 $rc "$tmp/fork.err" "$newest: .*damaged"
check 'grep -q "after iteration 12" "$tmp/fork.err" || grep -q "continuing after iteration 12" "$tmp/forked/run.log"' "  fork started from iteration 12"
$datm fork "$d" -o "$tmp/forked15" --iteration 15 --quiet 2> "$tmp/fork15.err"; rc=$?
row checkpoint "fork --iteration 15 (the damaged one)" 1 $rc "$tmp/fork15.err" "$newest: contents do not match their digest"
check '[ ! -e "$tmp/forked15/checkpoints" ] || [ -z "$(ls "$tmp/forked15/checkpoints")" ]' "  no checkpoint copied"

echo "rows: $checks"
exit $fail
