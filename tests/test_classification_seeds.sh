#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_classification_seeds.sh: a classification pipeline row with `seeds:` (the
# ensemble of independent chains) through pipelines/classification.sh on the digits set
# (sdatm-n 16-8, 5 + 15 epochs, two seeds, beside a plain row):
# - one run per seed (OUT/<id>_seed<s>, with seed=<s> in its overrides), then OUT/<id> by
#   `datm ensemble`: its error rate is the one `datm ensemble` computes from the two runs, its
#   wall_s the sum of theirs (n/a, with a warning, when a member has none);
# - table.md's row says the prediction is averaged over 2 runs (seeds 1, 2), and the commands
#   section lists both runs and the ensemble;
# - a second call runs nothing again.
# Skips 77 without the binary, the data, h5dump or the pipeline script.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init seeds digits
src="${DATM_SOURCE_DIR:-.}"
[ -f "$src/pipelines/classification.sh" ] || { echo "skip: no pipelines/classification.sh"; exit 77; }
datm=$(cd "$(dirname "$datm")" && pwd)/$(basename "$datm")

cat > "$tmp/pipe.yaml" <<YAML
name: seeds-test
out: $tmp/out
common: data.dataset=$data/digits output.figures=false output.report=false
runs:
  - {id: one, spec: experiments/digits/sdatm-n_64-32.yaml, data: digits, model: sDATM-N, paper: "-", paper_s: "-", set: model.layers=[16,8] train.epochs=20 model.unsup_epochs=5 model.kl_warmup_epochs=3 evaluate.predict_samples=10}
  - {id: two, spec: experiments/digits/sdatm-n_64-32.yaml, data: digits, model: sDATM-N, paper: "-", paper_s: "-", seeds: "1 2", set: model.layers=[16,8] train.epochs=20 model.unsup_epochs=5 model.kl_warmup_epochs=3 evaluate.predict_samples=10}
targets:
  - {id: two, what: digits sDATM-N, max: 50}
order:
sweep:
  spec: experiments/digits/sdatm-n_64-32.yaml
  widths:
  depths:
  set:
YAML
(cd "$src" && bash pipelines/classification.sh "$tmp/pipe.yaml" --datm "$datm" --threads 2) \
    > "$tmp/log.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && [ -f '$tmp/out/two/result.h5' ] && [ -f '$tmp/out/one/result.h5' ]" \
      "the pipeline completes (exit $rc): $(tail -1 "$tmp/log.txt")"
check "grep -qx 'seed=2' '$tmp/out/two_seed2/overrides.txt' && grep -qx 'seed=1' '$tmp/out/two_seed1/overrides.txt'" \
      "one run per seed, the seed among its overrides"
"$datm" ensemble "$tmp/out/two_seed1" "$tmp/out/two_seed2" -o "$tmp/check" --quiet > /dev/null 2>&1
er() { h5dump -m %.17g -d /metrics/error_rate "$1/result.h5" 2>/dev/null |
       awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }'; }
a=$(er "$tmp/out/two"); b=$(er "$tmp/check")
check "[ -n '$a' ] && [ '$a' = '$b' ]" "the row's error rate $a is datm ensemble's of the two runs ($b)"
w=$(cat "$tmp/out/two/wall_s" 2>/dev/null); w1=$(cat "$tmp/out/two_seed1/wall_s"); w2=$(cat "$tmp/out/two_seed2/wall_s")
check "awk -v w='$w' -v a='$w1' -v b='$w2' 'BEGIN { d = w - a - b; exit !(w > 0 && d < 0.11 && d > -0.11) }'" \
      "wall_s $w = $w1 + $w2"
check "grep '| digits | sDATM-N |' '$tmp/out/table.md' | grep -q 'averaged over 2 runs, seeds 1, 2'" \
      "the table row says what was averaged"
check "grep -q 'ensemble $tmp/out/two_seed1 $tmp/out/two_seed2 -o $tmp/out/two' '$tmp/out/table.md'" \
      "the commands list the ensemble"
(cd "$src" && bash pipelines/classification.sh "$tmp/pipe.yaml" --datm "$datm" --threads 2) \
    > "$tmp/log2.txt" 2>&1
check "[ \$(grep -c 'done already' '$tmp/log2.txt') = 4 ]" "a second call runs nothing again"
# a member without wall_s (a run made outside the pipeline): a warning naming it, and the
# row's wall s n/a instead of a sum that counts it as 0
rm -rf "$tmp/out/two" "$tmp/out/two_seed2/wall_s"
(cd "$src" && bash pipelines/classification.sh "$tmp/pipe.yaml" --datm "$datm" --threads 2) \
    > "$tmp/log3.txt" 2>&1
check "grep -q 'two_seed2/wall_s missing' '$tmp/log3.txt' && [ -f '$tmp/out/two/result.h5' ] && [ ! -e '$tmp/out/two/wall_s' ]" \
      "a member without wall_s: warned, the ensemble made, no wall_s sum"
check "grep '| digits | sDATM-N |' '$tmp/out/table.md' | grep -q '| n/a |\$'" "and the row's wall s is n/a"
exit $fail
