#!/bin/bash
# ctest-labels: unit  ctest-timeout: 60
# tests/test_readme_pipeline.sh: the example pipeline file of README.md (section Pipelines)
# loads as written (runs, matrix, profiles, references, tables, figures, claims all valid),
# and `--dry` lists its five runs with their cache keys, so the documented format cannot
# drift from the parser; `status` under each profile names the profile's report folder.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_fresh readme_pipe
mkdir -p "$tmp/pipelines"
ln -s "$SRC/experiments" "$tmp/experiments"
# the first ```yaml block after "## Pipelines"
awk '/^## Pipelines/ {sec = 1} sec && /^```yaml/ {on = 1; next} on && /^```/ {exit} on' \
  "$SRC/README.md" > "$tmp/pipelines/depth.yaml"
check "[ -s '$tmp/pipelines/depth.yaml' ] && grep -q '^claims:' '$tmp/pipelines/depth.yaml'" \
  "README has the example"
cd "$tmp"
DATM_DATA=$SRC/.cache/data "$datm" pipeline run pipelines/depth.yaml --dry --cache "$tmp/c" \
  > "$tmp/dry.txt" 2>&1
rc=$?
cat "$tmp/dry.txt"
check "[ $rc = 0 ]" "it loads (exit $rc)"
check "[ \$(grep -c 'would run' '$tmp/dry.txt') = 5 ]" "five runs would run"
check "grep -q 'whai_64-32_s2 ' '$tmp/dry.txt' && grep -q 'train.epochs=5' '$tmp/dry.txt'" \
  "matrix ids expanded, the default profile applied"
# a profile's out: is the folder of status (and run, report) under that profile
DATM_DATA=$SRC/.cache/data "$datm" pipeline status pipelines/depth.yaml --profile full \
  --cache "$tmp/c" > "$tmp/status.txt" 2>&1
check "head -1 '$tmp/status.txt' | grep -q '; out results/depth/full\$'" "the full profile's out:"
DATM_DATA=$SRC/.cache/data "$datm" pipeline status pipelines/depth.yaml --cache "$tmp/c" \
  > "$tmp/status.txt" 2>&1
check "head -1 '$tmp/status.txt' | grep -q '; out results/depth\$'" "the file's out: (quick)"
exit $fail
