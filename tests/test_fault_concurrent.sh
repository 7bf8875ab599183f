#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 240
# tests/test_fault_concurrent.sh: several writers of one run directory. Exactly one holds the
# directory's lock (run.lock, with its pid); every other run, resume, fork or --overwrite run
# into it fails at once naming that pid, writes nothing there, and the one writer's result is
# the undisturbed run's; once the holder is killed, the lock is free again.
. "$(dirname "$0")/fault_lib.sh"
fault_init fault_conc

same() { h5dump -m %.17g -d /metrics/perplexity -d /curves/loss -d /model/phi_1 "$1" 2>/dev/null | grep -v '^HDF5'; }
slow="$tmp/slow.yaml"
sed 's/epochs: 3/epochs: 40/' "$spec_w" > "$slow"
$datm run "$slow" -o "$tmp/ref" --quiet 2> /dev/null || { echo "FAIL: reference run"; exit 1; }
same "$tmp/ref/result.h5" > "$tmp/ref.dump"

# wait until DIR's lock is held (the first writer started), at most 20 s
wait_lock() { for _ in $(seq 200); do [ -s "$1/run.lock" ] && return 0; sleep 0.1; done; return 1; }

# ---- two runs started together: one writes, the other fails at once naming it ----
d="$tmp/two"
$datm run "$slow" -o "$d" --quiet 2> "$tmp/first.err" & p1=$!
wait_lock "$d"
holder=$(cat "$d/run.lock")
$datm run "$slow" -o "$d" --quiet 2> "$tmp/second.err"; rc=$?
row concurrent "a second run into a directory being written" 1 $rc "$tmp/second.err" "$d is being written by process $p1"
$datm resume "$d" --quiet 2> "$tmp/resume.err"; rc=$?
row concurrent "resume of a run being written" 1 $rc "$tmp/resume.err" "being written by process $p1"
$datm run "$slow" -o "$d" --overwrite --quiet 2> "$tmp/ow.err"; rc=$?
row concurrent "--overwrite run into a directory being written" 1 $rc "$tmp/ow.err" "being written by process $p1"
$datm check "$slow" -o "$d" > /dev/null 2> "$tmp/check.err"; rc=$?
row concurrent "datm check of a run into a directory being written" 1 $rc "$tmp/check.err" "being written by process $p1"
wait $p1; rc=$?
row concurrent "the first run completes" 0 $rc "$tmp/first.err"
check '[ "$holder" = "$p1" ]' "  run.lock held the first run's pid ($holder)"
check 'same "$d/result.h5" | cmp -s - "$tmp/ref.dump"' "  its result is the undisturbed run's"
check '[ "$(grep -c "^run tiny-whai" "$d/run.log")" = 1 ]' "  run.log has one run's lines (no interleaving)"
check '[ ! -e "$d/run.lock" ]' "  the lock file is removed at the end"

# ---- a fork into a directory being written ----
DATM_TEST_KILL_AT_ITER=7 $datm run "$spec_w" -o "$tmp/src" --quiet 2> /dev/null & wait $!
mkdir -p "$tmp/fdst"
$datm run "$slow" -o "$tmp/fdst" --quiet 2> /dev/null & p2=$!
wait_lock "$tmp/fdst"
$datm fork "$tmp/src" -o "$tmp/fdst" --quiet 2> "$tmp/fork.err"; rc=$?
row concurrent "fork into a directory being written" 2 $rc "$tmp/fork.err" "exists and is not empty|being written"
wait $p2

# ---- the holder killed: the lock is free, resume takes over ----
d="$tmp/killed"
$datm run "$slow" -o "$d" --quiet 2> /dev/null & p3=$!
wait_lock "$d"
while ! ls "$d/checkpoints"/*.h5 > /dev/null 2>&1; do sleep 0.05; done
kill -9 $p3; wait $p3 2> /dev/null
check '[ -f "$d/run.lock" ]' "a killed writer leaves its lock file"
$datm resume "$d" --quiet 2> "$tmp/after.err"; rc=$?
row concurrent "resume after the writer was killed (stale lock file)" 0 $rc "$tmp/after.err"
check 'same "$d/result.h5" | cmp -s - "$tmp/ref.dump"' "  resumed run equals the undisturbed one"

# ---- three at once into a COMPLETED run with --overwrite: one replaces it, two are refused ----
d="$tmp/ow3"
$datm run "$spec_u" -o "$d" --quiet 2> /dev/null
for i in 1 2 3; do $datm run "$slow" -o "$d" --overwrite --quiet 2> "$tmp/ow3_$i.err" & eval "q$i=\$!"; done
wait $q1; r1=$?; wait $q2; r2=$?; wait $q3; r3=$?
n_ok=0; for r in $r1 $r2 $r3; do [ $r = 0 ] && n_ok=$((n_ok + 1)); done
check '[ $n_ok = 1 ]' "three --overwrite runs at once: exactly one succeeds (exits $r1 $r2 $r3)"
for i in 1 2 3; do
  eval "r=\$r$i"
  [ "$r" != 0 ] && row concurrent "--overwrite run $i of three at once (refused)" 1 "$r" "$tmp/ow3_$i.err" "being written by process"
done
check 'same "$d/result.h5" | cmp -s - "$tmp/ref.dump" && [ ! -e "$d.new" ]' "  the directory holds the new run, no staging left"

echo "rows: $checks"
exit $fail
