#!/usr/bin/env bash
# tests/fuzz/run_fuzz.sh HARNESS SECONDS [FUZZ_BUILD_DIR] [WORK_DIR]: fuzzes one harness
# (docword, corpus, spec, pipeline, result, checkpoint) at low priority for SECONDS. New inputs go to
# WORK_DIR/HARNESS (default /tmp/datm_fuzz_work), crashes to WORK_DIR/HARNESS-artifacts; the
# kept corpus tests/fuzz/corpus/HARNESS is read, never written. Keep a finding by copying its
# (minimised: -minimize_crash=1) input into tests/fuzz/corpus/HARNESS after the fix.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
h=${1:?usage: run_fuzz.sh HARNESS SECONDS [FUZZ_BUILD_DIR] [WORK_DIR]}
secs=${2:?seconds}
bin="${3:-$here/../../build/fuzz}/fuzz_$h"
work="${4:-/tmp/datm_fuzz_work}"
mkdir -p "$work/$h" "$work/$h-artifacts"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export OMP_NUM_THREADS=1
exec nice -n 19 "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=3072 \
  -malloc_limit_mb=2048 -artifact_prefix="$work/$h-artifacts/" -print_final_stats=1 \
  "$work/$h" "$here/corpus/$h"
