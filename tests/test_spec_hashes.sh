#!/bin/bash
# ctest-labels: unit  ctest-timeout: 120
# tests/test_spec_hashes.sh: every spec in experiments/ resolves to the spec hash recorded in
# tests/data/spec_hashes.txt. Specs are composed from shared bases (`defaults:`); the hash is
# over the resolved spec, so moving a setting into a base, rewording a comment or reordering
# keys must leave it unchanged, and any change of what a spec computes shows up here.
# A deliberate change (a new schema key, a new spec, a new default) is recorded with
#     DATM_UPDATE_SPEC_HASHES=1 bash tests/test_spec_hashes.sh
# and the diff of tests/data/spec_hashes.txt is reviewed in the commit.
set -u
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
datm=${DATM_BIN:-$SRC/build/datm}
[ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
golden=$SRC/tests/data/spec_hashes.txt
cd "$SRC"
now=$(mktemp)
trap 'rm -f "$now"' EXIT
fail=0
# every spec file (not the bases, which are fragments composed into specs)
while IFS= read -r f; do
  h=$("$datm" check "$f" --quiet 2>&1 | sed -n 's/^# spec_hash: //p')
  if [ -z "$h" ]; then
    echo "FAIL: $f does not validate:"; "$datm" check "$f" --quiet 2>&1 | tail -5; fail=1
    continue
  fi
  echo "$f $h" >> "$now"
done < <(find experiments -name '*.yaml' -not -path '*/base/*' | LC_ALL=C sort)
if [ "${DATM_UPDATE_SPEC_HASHES:-0}" = 1 ]; then
  cp "$now" "$golden"; echo "updated $golden ($(wc -l < "$golden") specs)"; exit $fail
fi
if ! diff -u "$golden" "$now"; then
  echo "FAIL: resolved spec hashes differ from tests/data/spec_hashes.txt (lines above: - recorded, + now)"
  fail=1
else
  echo "ok: $(wc -l < "$now") specs resolve to their recorded hashes"
fi
exit $fail
