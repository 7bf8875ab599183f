#!/bin/bash
# ctest-labels: unit  ctest-timeout: 300
# tests/test_fuzz_smoke.sh: the harnesses of tests/fuzz (docword, corpus, spec, pipeline,
# result, checkpoint) as plain programs of this build (fuzz_replay_HARNESS,
# tests/fuzz/replay_main.c):
# each runs on every kept input of tests/fuzz/corpus/HARNESS (seeds and the inputs of past
# findings) and on DATM_FUZZ_MUTANTS (default 30) seeded mutants of each; any crash, abort
# (a harness's property failed: a reader accepted what it must reject, a failure without a
# message) or sanitizer report fails, with the input left in the output. In the ASan+UBSan
# build this is the memory check of every reader on damaged input. When the libFuzzer build
# is there too (cmake -DDATM_FUZZ=ON), each harness is also fuzzed DATM_FUZZ_SECONDS (default
# 3) from its kept inputs. Long runs: tests/fuzz/run_fuzz.sh.
set -u
src="${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
bld="${DATM_BUILD_DIR:-$src/build}"
fz="${DATM_FUZZ_DIR:-}"
mutants="${DATM_FUZZ_MUTANTS:-30}"
secs="${DATM_FUZZ_SECONDS:-3}"
harnesses="docword corpus spec pipeline result checkpoint"
for h in $harnesses; do
  [ -x "$bld/tests/fuzz_replay_$h" ] || { echo "skipped: $bld/tests/fuzz_replay_$h not built"; exit 77; }
done
tmp=$(mktemp -d /tmp/datm_fuzz_smoke_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# HDF5 1.10 leaks metadata-cache blocks on some corrupt object headers (inside the library)
export LSAN_OPTIONS="suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0"
export OMP_NUM_THREADS=1
fail=0
for h in $harnesses; do
  corpus="$src/tests/fuzz/corpus/$h"
  mkdir -p "$tmp/$h"
  if (cd "$tmp/$h" && "$bld/tests/fuzz_replay_$h" --mutants "$mutants" --seed 1 "$corpus") > "$tmp/$h.log" 2>&1; then
    echo "ok: $h: $(tail -1 "$tmp/$h.log")"
  else
    echo "FAIL: $h on a kept input or one of its mutants (left in $tmp/$h/fuzz_replay_failed.bin):"
    tail -30 "$tmp/$h.log"; od -c "$tmp/$h/fuzz_replay_failed.bin" 2>/dev/null | head -8; fail=1
  fi
  if [ -n "$fz" ] && [ -x "$fz/fuzz_$h" ]; then
    mkdir -p "$tmp/$h-new" "$tmp/$h-art"
    if "$fz/fuzz_$h" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1536 \
         -artifact_prefix="$tmp/$h-art/" "$tmp/$h-new" "$corpus" > "$tmp/$h.fuzz" 2>&1; then
      echo "ok: $h fuzzed ${secs}s with libFuzzer ($(grep -o 'Done [0-9]* runs' "$tmp/$h.fuzz"))"
    else
      echo "FAIL: libFuzzer found an input for $h:"; tail -40 "$tmp/$h.fuzz"; ls "$tmp/$h-art"; fail=1
    fi
  fi
done
exit $fail
