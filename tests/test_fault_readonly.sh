#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 240
# tests/test_fault_readonly.sh: outputs that cannot be written. Each row: exit 1 (2 for a
# usage error), a message naming the path and the system error (ENOTDIR, EROFS, EACCES, EISDIR),
# nothing written and nothing finished lost, for run, resume, infer, corpus build and ensemble:
# - -o onto a regular file, or below one (ENOTDIR)
# - a read-only file system (a read-only tmpfs in a private mount namespace: EROFS)
# - a directory the user may not write (EACCES: as nobody when run as root, else chmod)
. "$(dirname "$0")/fault_lib.sh"
fault_init fault_ro
chmod 755 "$tmp"

$datm run "$spec_w" -o "$tmp/good" --quiet 2> /dev/null || { echo "FAIL: reference run"; exit 1; }
docs="$corpus/test.docword.gz"

# ---- ENOTDIR / EISDIR ----
touch "$tmp/file"
$datm run "$spec_u" -o "$tmp/file" --quiet 2> "$tmp/e1"; rc=$?
row read-only "run -o onto a regular file" 1 $rc "$tmp/e1" "$tmp/file: Not a directory"
check '[ -f "$tmp/file" ] && [ ! -s "$tmp/file" ]' "  the file is untouched"
$datm run "$spec_u" -o "$tmp/file/sub" --quiet 2> "$tmp/e2"; rc=$?
row read-only "run -o below a regular file" 1 $rc "$tmp/e2" "$tmp/file/sub: .*Not a directory"
$datm check "$spec_u" -o "$tmp/file/sub" > /dev/null 2> "$tmp/e2c"; rc=$?
row read-only "check -o below a regular file" 1 $rc "$tmp/e2c" "Not a directory"
$datm infer "$tmp/good" "$docs" -o "$tmp/file/t.csv" 2> "$tmp/e3"; rc=$?
row read-only "infer -o below a regular file" 1 $rc "$tmp/e3" "cannot write in $tmp/file \\(Not a directory\\)"
$datm infer "$tmp/good" "$docs" -o "$tmp" 2> "$tmp/e4"; rc=$?
row read-only "infer -o onto a directory" 2 $rc "$tmp/e4" "must end in .h5 or .csv"
mkdir -p "$tmp/d.csv"
$datm infer "$tmp/good" "$docs" -o "$tmp/d.csv" 2> "$tmp/e4b"; rc=$?
row read-only "infer -o onto a directory named .csv" 1 $rc "$tmp/e4b" "d.csv: Is a directory"
$datm corpus build --input "$tmp/good" --out "$tmp/file" --quiet 2> "$tmp/e5"; rc=$?
row read-only "corpus build --out onto a regular file" 1 $rc "$tmp/e5" "$tmp/file: Not a directory"
$datm resume "$tmp/file" 2> "$tmp/e6"; rc=$?
row read-only "resume of a regular file" 1 $rc "$tmp/e6" "$tmp/file: Not a directory"

# ---- EROFS: a read-only file system ----
ns=""
if unshare -Urm true 2>/dev/null; then ns="unshare -Urm"; elif [ "$(id -u)" = 0 ]; then ns="unshare -m"; fi
ro() {   # ro DIR CMD...: CMD with DIR mounted read-only
  local dir=$1; shift
  $ns sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"' "$dir" "$@"
}
if [ -n "$ns" ] && ro "$tmp" true 2>/dev/null; then
  mkdir -p "$tmp/rofs"
  cp -r "$tmp/good" "$tmp/rofs/good"
  sum=$(md5sum < "$tmp/rofs/good/result.h5")
  ro "$tmp/rofs" $datm run "$spec_u" -o "$tmp/rofs/new" --quiet 2> "$tmp/r1"; rc=$?
  row read-only "run -o on a read-only file system" 1 $rc "$tmp/r1" "$tmp/rofs/new: cannot create directory \\(Read-only file system\\)"
  ro "$tmp/rofs" $datm check "$spec_u" -o "$tmp/rofs/new" 2> "$tmp/r1c" > /dev/null; rc=$?
  row read-only "check -o on a read-only file system" 1 $rc "$tmp/r1c" "Read-only file system"
  ro "$tmp/rofs" $datm run "$spec_w" -o "$tmp/rofs/good" --overwrite --quiet 2> "$tmp/r2"; rc=$?
  row read-only "--overwrite of a COMPLETED run on a read-only file system" 1 $rc "$tmp/r2" "$tmp/rofs/good.*Read-only file system"
  check '[ "$(md5sum < "$tmp/rofs/good/result.h5")" = "$sum" ]' "  the COMPLETED run is intact"
  mkdir -p "$tmp/rofs/unfinished"
  DATM_TEST_KILL_AT_ITER=7 $datm run "$spec_w" -o "$tmp/rofs/unfinished" --quiet 2> /dev/null & wait $!
  ro "$tmp/rofs" $datm resume "$tmp/rofs/unfinished" --quiet 2> "$tmp/r3"; rc=$?
  row read-only "resume on a read-only file system" 1 $rc "$tmp/r3" "unfinished.*Read-only file system"
  check '[ -f "$tmp/rofs/unfinished/checkpoints/ckpt-000000000006.h5" ]' "  its checkpoints are intact"
  ro "$tmp/rofs" $datm infer "$tmp/rofs/good" "$docs" -o "$tmp/rofs/theta.h5" 2> "$tmp/r4"; rc=$?
  row read-only "infer -o on a read-only file system" 1 $rc "$tmp/r4" "cannot write in $tmp/rofs \\(Read-only file system\\)"
  ro "$tmp/rofs" $datm corpus build --input "$tmp/good" --out "$tmp/rofs/set" --quiet 2> "$tmp/r5"; rc=$?
  row read-only "corpus build --out on a read-only file system" 1 $rc "$tmp/r5" "$tmp/rofs/set.*Read-only file system"
  ro "$tmp/rofs" $datm corpus build --input "$tmp/good" --out "$tmp/rofs/good" --overwrite --quiet 2> "$tmp/r5b"; rc=$?
  row read-only "corpus build --out --overwrite onto a run on a read-only file system" 1 $rc "$tmp/r5b" "$tmp/rofs/good.*Read-only file system"
  ro "$tmp/rofs" $datm ensemble "$tmp/good" -o "$tmp/rofs/ens" 2> "$tmp/r6"; rc=$?
  row read-only "ensemble -o on a read-only file system" 1 $rc "$tmp/r6" "Read-only file system"
  ro "$tmp/rofs" $datm figures "$tmp/rofs/good" 2> "$tmp/r7"; rc=$?
  row read-only "figures of a run on a read-only file system" 1 $rc "$tmp/r7" "Read-only file system"
else
  echo "skip: no read-only mount (neither unshare -Urm nor root)"
fi

# ---- EACCES: a directory the user may not write ----
mkdir -p "$tmp/locked"
cp -r "$tmp/good" "$tmp/locked/good"
chmod -R a+rX "$tmp"
as_user=()
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv > /dev/null; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
else
  chmod 555 "$tmp/locked" "$tmp/locked/good"
fi
if [ "$(id -u)" != 0 ] || [ ${#as_user[@]} -gt 0 ]; then
  sum=$(md5sum < "$tmp/locked/good/result.h5")
  "${as_user[@]}" $datm run "$spec_u" -o "$tmp/locked/new" --quiet 2> "$tmp/a1"; rc=$?
  row read-only "run -o in a directory without write permission" 1 $rc "$tmp/a1" "$tmp/locked/new: cannot create directory \\(Permission denied\\)"
  "${as_user[@]}" $datm run "$spec_w" -o "$tmp/locked/good" --overwrite --quiet 2> "$tmp/a2"; rc=$?
  row read-only "--overwrite of a COMPLETED run without write permission" 1 $rc "$tmp/a2" "Permission denied"
  check '[ "$(md5sum < "$tmp/locked/good/result.h5")" = "$sum" ]' "  the COMPLETED run is intact"
  "${as_user[@]}" $datm infer "$tmp/locked/good" "$docs" -o "$tmp/locked/t.csv" 2> "$tmp/a3"; rc=$?
  row read-only "infer -o without write permission" 1 $rc "$tmp/a3" "Permission denied"
  "${as_user[@]}" $datm corpus build --input "$tmp/good" --out "$tmp/locked/set" --quiet 2> "$tmp/a4"; rc=$?
  row read-only "corpus build --out without write permission" 1 $rc "$tmp/a4" "Permission denied"
  chmod 600 "$spec_u"; [ "$(id -u)" != 0 ] && chmod 000 "$spec_u"
  "${as_user[@]}" $datm run "$spec_u" -o "$tmp/x" --quiet 2> "$tmp/a5"; rc=$?
  row read-only "run with an unreadable spec file" 1 $rc "$tmp/a5" "$spec_u: cannot open spec file.*Permission denied"
  chmod 644 "$spec_u"
else
  echo "skip: EACCES rows (root without setpriv)"
fi

echo "rows: $checks"
exit $fail
