#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_fault_kill.sh: kill -9 at every stage of a run (fault injection). After each kill:
# no result.h5 unless it is COMPLETED and whole; a finished run is never lost; `datm resume`
# (or, for an --overwrite run, `datm resume DIR.new` / `DIR`) ends with the metrics, curves
# and model of the undisturbed run, bit for bit.
# - DATM_TEST_KILL_AT_ITER: in training, right after a mini-batch
# - DATM_TEST_FAULT=kill:ckpt (a checkpoint written, not renamed), kill:result (result body
#   written, status not COMPLETED), kill:completed (COMPLETED, not renamed), kill:renamed
#   (result.h5 in place, figures and report not made), kill:swap (an --overwrite run swapped
#   in, the old one not yet removed)
# - SIGKILL from outside at seeded random instants of training, evaluation and result writing
. "$(dirname "$0")/fault_lib.sh"
fault_init fault_kill

# what must be equal (wall-clock quantities excluded)
same() { h5dump -m %.17g -d /metrics/perplexity -d /curves/iteration -d /curves/loss \
                -d /curves/perplexity -d /model/phi_1 -d /model/phi_2 "$1" 2>/dev/null | grep -v '^HDF5'; }
$datm run "$spec_w" -o "$tmp/ref" --quiet 2> /dev/null || { echo "FAIL: reference run"; exit 1; }
same "$tmp/ref/result.h5" > "$tmp/ref.dump"
equal_ref() { same "$1" | cmp -s - "$tmp/ref.dump"; }

finish() {   # finish DIR WHAT: resume a killed run and compare with the reference
  local d=$1 what=$2
  $datm resume "$d" --quiet 2> "$d.resume.err"; local rc=$?
  row kill-9 "$what: resume" 0 $rc "$d.resume.err"
  check 'equal_ref "$d/result.h5"' "  $what: resumed run equals the undisturbed one"
}

# ---- training ----
for k in 1 4 10 17; do
  d="$tmp/iter_$k"
  DATM_TEST_KILL_AT_ITER=$k $datm run "$spec_w" -o "$d" --quiet 2> "$d.err" & wait $!; rc=$?
  row kill-9 "SIGKILL after mini-batch $k of 18" 137 $rc /dev/null
  check '[ ! -e "$d/result.h5" ] && [ "$(status "$d/result.h5.part")" = RUNNING ]' "  iteration $k: no result.h5, .part RUNNING"
  has_ckpt=0; ls "$d/checkpoints"/*.h5 > /dev/null 2>&1 && has_ckpt=1
  $datm run "$spec_w" -o "$d" --quiet 2> "$d.again.err"; rc=$?
  if [ $has_ckpt = 1 ]; then
    row kill-9 "run again into the killed run (iteration $k, has a checkpoint)" 1 $rc "$d.again.err" "datm resume $d"
  else
    row kill-9 "run again into the killed run (iteration $k, no checkpoint)" 0 $rc "$d.again.err"
    check 'equal_ref "$d/result.h5"' "  iteration $k: the fresh run equals the reference"
    continue
  fi
  finish "$d" "SIGKILL after mini-batch $k"
done

# ---- named instants ----
for point in ckpt@1 ckpt@3 result completed renamed; do
  d="$tmp/pt_${point%@*}${point#*@}"
  DATM_TEST_FAULT=kill:$point $datm run "$spec_w" -o "$d" --quiet 2> "$d.err" & wait $!; rc=$?
  row kill-9 "SIGKILL at kill:$point" 137 $rc /dev/null
  case $point in
    ckpt*) check '[ -z "$(ls "$d/checkpoints" | grep -v "\.h5$" | grep -v tmp)" ] && [ ! -e "$d/result.h5" ]' "  kill:$point: a temporary checkpoint at most, no result.h5"
           finish "$d" "kill:$point" ;;
    result|completed)
           check '[ ! -e "$d/result.h5" ]' "  kill:$point: no result.h5 (the .part is $(status "$d/result.h5.part"))"
           finish "$d" "kill:$point"
           [ $point = completed ] && check 'grep -q "datm figures" "$d.resume.err" || true' "  kill:completed: resume names datm figures" ;;
    renamed)
           check '[ "$(status "$d/result.h5")" = COMPLETED ] && equal_ref "$d/result.h5"' "  kill:renamed: result.h5 COMPLETED and whole"
           $datm resume "$d" > "$d.resume.out" 2>&1; rc=$?
           row kill-9 "kill:renamed: resume says COMPLETED" 0 $rc "$d.resume.out" "already COMPLETED" ;;
  esac
done

# ---- --overwrite killed before and during the swap: the old run stays until the new one is in ----
for point in result completed swap; do
  d="$tmp/ow_$point"
  $datm run "$spec_u" -o "$d" --quiet 2> /dev/null
  old=$(md5sum < "$d/result.h5")
  DATM_TEST_FAULT=kill:$point $datm run "$spec_w" -o "$d" --overwrite --quiet 2> "$d.err" & wait $!; rc=$?
  row kill-9 "--overwrite run, SIGKILL at kill:$point" 137 $rc /dev/null
  if [ $point = swap ]; then
    check '[ "$(status "$d/result.h5")" = COMPLETED ] && equal_ref "$d/result.h5"' "  kill:swap: DIR holds the new COMPLETED run"
    $datm resume "$d" > "$d.resume.out" 2>&1; rc=$?
    row kill-9 "kill:swap: resume DIR finishes the replacement" 0 $rc "$d.resume.out" "already COMPLETED"
    check '[ ! -e "$d.new" ] && [ ! -e "$d/replaces.txt" ]' "  kill:swap: the old run and the marker are gone"
  else
    check '[ "$(md5sum < "$d/result.h5")" = "$old" ]' "  kill:$point: the old COMPLETED result is intact"
    $datm resume "$d" > "$d.resume.out" 2>&1
    check 'grep -q "datm resume $d.new" "$d.resume.out"' "  kill:$point: resume DIR points at DIR.new"
    $datm resume "$d.new" --quiet 2> "$d.new.err"; rc=$?
    row kill-9 "kill:$point: resume DIR.new completes and swaps" 0 $rc "$d.new.err"
    check '[ ! -e "$d.new" ] && equal_ref "$d/result.h5"' "  kill:$point: DIR now holds the new run"
  fi
done

# ---- SIGKILL from outside at seeded random instants ----
RANDOM=26
spec_slow="$tmp/slow.yaml"
sed 's/epochs: 3/epochs: 6/; s/samples: 4/samples: 40/' "$spec_w" > "$spec_slow"
$datm run "$spec_slow" -o "$tmp/slow_ref" --quiet 2> /dev/null
same "$tmp/slow_ref/result.h5" > "$tmp/slow.dump"
t0=$(date +%s%N); $datm run "$spec_slow" -o "$tmp/slow_time" --quiet 2> /dev/null; t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
for i in 1 2 3 4 5 6; do
  d="$tmp/rand_$i"
  at=$(( RANDOM % (ms + 1) ))
  $datm run "$spec_slow" -o "$d" --quiet 2> "$d.err" &
  pid=$!
  sleep "$(awk -v m=$at 'BEGIN { printf "%.3f", m / 1000 }')"
  kill -9 $pid 2> /dev/null
  wait $pid; rc=$?
  if [ -e "$d/result.h5" ]; then
    check '[ "$(status "$d/result.h5")" = COMPLETED ] && same "$d/result.h5" | cmp -s - "$tmp/slow.dump"' "random kill $i at ${at} ms of ${ms} (rc $rc): result.h5 is COMPLETED and whole"
  elif [ ! -f "$d/spec.resolved.yaml" ]; then   # killed before the run had written anything
    $datm run "$spec_slow" -o "$d" --quiet 2> "$d.resume.err"; rc2=$?
    row kill-9 "random kill $i at ${at} ms of ${ms} ms (before the first file), then run" 0 $rc2 "$d.resume.err"
    check 'same "$d/result.h5" | cmp -s - "$tmp/slow.dump"' "  random kill $i: the new run equals the undisturbed one"
  else
    $datm resume "$d" --quiet 2> "$d.resume.err"; rc2=$?
    row kill-9 "random kill $i at ${at} ms of ${ms} ms, then resume" 0 $rc2 "$d.resume.err"
    check 'same "$d/result.h5" | cmp -s - "$tmp/slow.dump"' "  random kill $i: resumed run equals the undisturbed one"
  fi
done

echo "rows: $checks"
exit $fail
