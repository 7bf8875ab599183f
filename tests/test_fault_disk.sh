#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_fault_disk.sh: a full disk at every kind of write (fault injection). Each row: exit
# 1 (never a crash, also not at exit), a message naming the file and "No space left on device"
# (or "File too large"), no COMPLETED result that is not whole, and nothing finished lost:
# - DATM_TEST_FAULT=enospc:h5@N fails the N-th HDF5 write of a run (provenance, curves,
#   checkpoints, the result body, the status); the checkpoints before it stay whole, and
#   `datm resume` then finishes the run with the metrics of an undisturbed run
# - DATM_TEST_FAULT=enospc:write@N fails the N-th text file (spec, overrides, figures, report)
# - a real full file system: a small tmpfs in a private mount namespace (unshare -Urm, or mount
#   as root); skipped rows when neither is allowed
# - RLIMIT_FSIZE (ulimit -f): the kernel fails a write that grows a file past the limit
# - --overwrite of a COMPLETED run on a full disk: the old result stays byte for byte
. "$(dirname "$0")/fault_lib.sh"
fault_init fault_disk
# Under LeakSanitizer: an HDF5 file whose flush or close failed is abandoned on purpose (closing
# it again crashes HDF5 1.10), so its blocks inside libhdf5 are still held when datm exits 1.
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/fuzz/lsan.supp:print_suppressions=0"

$datm run "$spec_w" -o "$tmp/ref" --quiet 2> /dev/null || { echo "FAIL: reference run"; exit 1; }
ref_ppl=$(metric "$tmp/ref/result.h5" perplexity)

# ---- injected ENOSPC in HDF5 writes ----
for n in 1 10 40 80 130 200 260 300 315 325; do
  d="$tmp/h5_$n"
  DATM_TEST_FAULT=enospc:h5@$n $datm run "$spec_w" -o "$d" --quiet 2> "$d.err"; rc=$?
  row disk-full "enospc in HDF5 write #$n" 1 $rc "$d.err" "$d/.*: .*No space left on device"
  check '[ ! -e "$d/result.h5" ] && [ "$(status "$d/result.h5.part")" != COMPLETED ]' \
        "  enospc:h5@$n: no COMPLETED result"
  check '[ -z "$(ls "$d/checkpoints" 2>/dev/null | grep tmp)" ]' "  enospc:h5@$n: no checkpoint temporary left"
done
# the run that failed in a checkpoint after several good ones resumes to the reference
d="$tmp/h5_200"
n_ck=$(ls "$d/checkpoints" | grep -c '\.h5$')
$datm resume "$d" --quiet 2> "$d.resume.err"; rc=$?
row disk-full "resume after the disk was freed (h5@200, $n_ck checkpoints kept)" 0 $rc "$d.resume.err"
check '[ "$(metric "$d/result.h5" perplexity)" = "$ref_ppl" ]' "  resumed perplexity equals the undisturbed run's ($ref_ppl)"

# ---- injected ENOSPC in text files ----
for n in 1 2 3 8 15; do
  d="$tmp/w_$n"
  DATM_TEST_FAULT=enospc:write@$n $datm run "$spec_w" -o "$d" --quiet 2> "$d.err"; rc=$?
  row disk-full "enospc in text file #$n" 1 $rc "$d.err" "$d/.*tmp.*No space left on device"
  check '[ -z "$(find "$d" -name "*.tmp.*")" ]' "  enospc:write@$n: no temporary left"
  if [ $n -ge 3 ]; then
    check '[ "$(status "$d/result.h5")" = COMPLETED ]' "  enospc:write@$n (figures/report): result.h5 COMPLETED and whole"
  fi
done

# ---- --overwrite of a COMPLETED run while the disk is full: the old run stays ----
cp -r "$tmp/ref" "$tmp/keep"
sum0=$(md5sum "$tmp/keep/result.h5" | cut -d' ' -f1)
DATM_TEST_FAULT=enospc:h5@250 $datm run "$spec_w" model.layers=[6,3] -o "$tmp/keep" --overwrite --quiet 2> "$tmp/keep.err"; rc=$?
row disk-full "--overwrite of a COMPLETED run, disk full" 1 $rc "$tmp/keep.err" "No space left on device"
check '[ "$(md5sum "$tmp/keep/result.h5" | cut -d" " -f1)" = "$sum0" ]' "  the COMPLETED result is byte for byte the old one"
check 'grep -q "is as it was" "$tmp/keep.err"' "  the message says the old run is as it was"

# ---- RLIMIT_FSIZE: the kernel refuses to grow a file ----
# (a result is ~85 kB, a checkpoint ~30 kB: the limit falls in the first checkpoint, the
# result body, and the topics stage after it, which the read-back before COMPLETED catches)
for kb in 8 40 60; do
  d="$tmp/fsize_$kb"
  mkdir "$d"
  (ulimit -f $kb; trap '' XFSZ; exec $datm run "$spec_w" -o "$d/run" --quiet) 2> "$d.err"; rc=$?
  pat="File too large"; [ $kb = 60 ] && pat="reading back: $d/run/result.h5.part"
  row disk-full "ulimit -f $kb (file size limit)" 1 $rc "$d.err" "$pat"
  check '[ ! -e "$d/run/result.h5" ]' "  ulimit -f $kb: no result.h5"
done

# ---- a real full file system: a small tmpfs ----
ns=""
if unshare -Urm true 2>/dev/null; then ns="unshare -Urm"; elif [ "$(id -u)" = 0 ]; then ns="unshare -m"; fi
if [ -n "$ns" ] && $ns sh -c "mount -t tmpfs -o size=64k tmpfs '$tmp'" 2>/dev/null; then
  for size in 24k 48k 96k 150k; do
    d="$tmp/tmpfs_$size"
    mkdir -p "$d"
    $ns sh -c "mount -t tmpfs -o size=$size tmpfs '$d' && exec $datm run '$spec_w' -o '$d/run' --quiet" 2> "$d.err"; rc=$?
    row disk-full "tmpfs of $size" 1 $rc "$d.err" "$d/run/.*No space left on device"
  done
  # a COMPLETED run on the small disk, then --overwrite that cannot fit: the old run stays
  d="$tmp/tmpfs_keep"
  mkdir -p "$d"
  $ns sh -c "mount -t tmpfs -o size=300k tmpfs '$d' && $datm run '$spec_u' -o '$d/run' --quiet &&
             md5sum '$d/run/result.h5' > '$d.sum0' &&
             $datm run '$spec_w' model.layers=[30,20] -o '$d/run' --overwrite --quiet 2> '$d.err';
             echo \$? > '$d.rc'; md5sum '$d/run/result.h5' > '$d.sum1'; ls '$d' > '$d.ls'" 2> "$d.err0"
  rc=$(cat "$d.rc" 2>/dev/null || echo 99)
  row disk-full "tmpfs: --overwrite of a COMPLETED run that does not fit" 1 "$rc" "$d.err" "No space left on device"
  check 'cmp -s <(cut -d" " -f1 "$d.sum0") <(cut -d" " -f1 "$d.sum1")' "  tmpfs: the old COMPLETED result is intact"
else
  echo "skip: no tmpfs (neither unshare -Urm nor root); the injected rows above stand for it"
fi

echo "rows: $checks"
exit $fail
