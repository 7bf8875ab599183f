#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 120
# tests/test_data_corpus_cli.sh: the `datm corpus` command line. --help of each subcommand
# (exit 0), usage errors (exit 2), `corpus build` on a small directory twice (byte-identical
# output, README present), `corpus info` on it and on 20news_2000 (D and W from its README),
# and on the built-in brown set when ci/setup.sh has built it. Skips 77 without the binary.
set -u
datm="${DATM_BIN:-build/datm}"
[ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
fail=0
. "$(dirname "$0")/testlib.sh"   # check
tmp=$(mktemp -d /tmp/datm_test_corpus_cli_XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for sub in "" build info; do
  "$datm" corpus $sub --help > "$tmp/help.txt"; rc=$?
  check "[ $rc = 0 ] && grep -q usage $tmp/help.txt" "datm corpus $sub --help (rc $rc)"
done
"$datm" corpus build --input /nonexistent > /dev/null 2>&1; rc=$?
check "[ $rc = 2 ]" "build without --out must exit 2 (got $rc)"
"$datm" corpus build --bogus 1 > /dev/null 2>&1; rc=$?
check "[ $rc = 2 ]" "unknown option must exit 2 (got $rc)"
"$datm" corpus frobnicate > /dev/null 2>&1; rc=$?
check "[ $rc = 2 ]" "unknown subcommand must exit 2 (got $rc)"

mkdir -p "$tmp/in/a" "$tmp/in/b"
for i in 1 2 3 4 5 6; do
  printf 'Rivers and lakes hold water; fish swim in rivers %s.\n' "$i" > "$tmp/in/a/t$i.txt"
  printf 'Engines burn fuel and engines need oil %s times.\n' "$i" > "$tmp/in/b/t$i.txt"
done
opts=(--input "$tmp/in" --label-subdir --min-df 2 --max-df 1 --test-frac 0.34 --seed 3 --quiet)
"$datm" corpus build "${opts[@]}" --out "$tmp/out"; rc=$?
check "[ $rc = 0 ]" "corpus build (rc $rc)"
(cd "$tmp/out" && md5sum ./* > "$tmp/md5")
"$datm" corpus build "${opts[@]}" --out "$tmp/out" 2> "$tmp/again.err"; rc=$?
check "[ $rc = 1 ] && grep -q 'is not empty' $tmp/again.err && (cd $tmp/out && md5sum -c --quiet $tmp/md5)" "a second build into the set is refused without --overwrite, the set untouched"
"$datm" corpus build "${opts[@]}" --out "$tmp/out" --overwrite; rc=$?
check "[ $rc = 0 ] && (cd $tmp/out && md5sum -c --quiet $tmp/md5)" "re-run output differs"
check "[ -z \"\$(ls -d $tmp/out.new.* 2>/dev/null)\" ]" "no staging directory left behind"
check "[ -f $tmp/out/README.md ] && grep -q 'Train class counts: 4 4' $tmp/out/README.md" "README class counts (2 of 6 texts per class to test)"
"$datm" corpus info "$tmp/out" --top 3 > "$tmp/info.txt"; rc=$?
check "[ $rc = 0 ] && grep -q '^train  *8 ' $tmp/info.txt && grep -q 'top 3 training words' $tmp/info.txt" "corpus info on the built set"

data="${DATM_DATA:-/work/shared/data}"
if [ -d "$data/20news_2000" ]; then
  "$datm" corpus info "$data/20news_2000" > "$tmp/info2.txt"; rc=$?
  check "[ $rc = 0 ] && grep -Eq '^train +11284 +2000 +470587 +584661' $tmp/info2.txt" "corpus info 20news_2000: $(head -3 $tmp/info2.txt | tail -1)"
fi
src="${DATM_SOURCE_DIR:-.}"
if [ -f "$src/.cache/data/brown/train.docword.gz" ]; then
  (cd "$src" && "$datm" corpus info brown --top 5) > "$tmp/info3.txt"; rc=$?
  check "[ $rc = 0 ] && grep -q 'adventure=' $tmp/info3.txt" "corpus info brown"
fi
[ $fail = 0 ] && echo ok
exit $fail
