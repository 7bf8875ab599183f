#!/bin/bash
# ctest-labels: e2e;regression  ctest-timeout: 300
# tests/test_cli_compare_e2e.sh: the quick spec end to end through the result readers, on the
# Brown corpus that ci/setup.sh builds, laid out by tests/brown_heldout.sh for the
# held-out-documents protocol the spec asks for:
# `datm run experiments/quick/unigram.yaml` twice (alpha 0.5 and 2) -> result.h5 readable by
# h5dump with the documented names -> figures (.dat/.gp, .png when gnuplot exists) ->
# check-metrics against results/baselines/brown-unigram.yaml (pass for alpha 0.5, fail for
# alpha 2: the baseline discriminates) -> compare (csv rows, changed key, delta) -> topics.
# With python3, the alpha-2 run is also checked against the independent reference script.
# Skips (77) without the binary or the Brown corpus.
set -u
BIN=${DATM_BIN:-}
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then echo "skipped: DATM_BIN not built"; exit 77; fi
T=$(mktemp -d /tmp/datm_test_cli_e2e.XXXXXX)
DATA=$T/brown_heldout
if ! bash "$SRC/tests/brown_heldout.sh" "$DATA" 2> "$T/bh.txt"; then
  echo "skipped: $(cat "$T/bh.txt")"; rm -rf "$T"; exit 77
fi
fails=0
. "$(dirname "$0")/testlib.sh"   # check

cd "$SRC" || exit 1
"$BIN" run experiments/quick/unigram.yaml data.dataset="$DATA" -o "$T/a05" --quiet > "$T/run1.txt" 2>&1
check '[ $? -eq 0 ]'
"$BIN" run experiments/quick/unigram.yaml data.dataset="$DATA" model.alpha=2 -o "$T/a2" --quiet > "$T/run2.txt" 2>&1
check '[ $? -eq 0 ]'
check '[ -f "$T/a05/result.h5" ] && [ ! -e "$T/a05/result.h5.part" ]'

# h5dump reads it and shows the documented names
if command -v h5dump > /dev/null; then
  h5dump -H "$T/a05/result.h5" > "$T/h5.txt" 2>&1
  check '[ $? -eq 0 ]'
  for name in '"metrics"' '"perplexity"' '"curves"' '"iteration"' '"wall_s"' '"topics"' \
              '"layer_1"' '"top_ids"' '"sample_curve"' '"vocab"' '"phi_1"' 'ATTRIBUTE "status"' 'ATTRIBUTE "spec"'; do
    check "grep -q '$name' \"\$T/h5.txt\""
  done
  check 'h5dump -a /status "$T/a05/result.h5" | grep -q COMPLETED'
fi

# figures of the run
for f in perplexity_vs_iteration perplexity_vs_time perplexity_vs_samples loss; do
  check "[ -s \"\$T/a05/figures/$f.dat\" ] && [ -s \"\$T/a05/figures/$f.gp\" ]"
  if command -v gnuplot > /dev/null; then check "[ -s \"\$T/a05/figures/$f.png\" ]"; fi
done

# regression check: pass for the spec as written, fail when a parameter moved the metric
"$BIN" check-metrics "$T/a05" --baseline results/baselines/brown-unigram.yaml > "$T/cm1.txt"
check '[ $? -eq 0 ]'
"$BIN" check-metrics "$T/a2" --baseline results/baselines/brown-unigram.yaml > "$T/cm2.txt"
check '[ $? -eq 1 ]'
check 'grep -q "| perplexity | .* | FAIL |" "$T/cm2.txt"'

# compare: one csv row per run, alpha the changed key, delta = difference of the values
"$BIN" compare "$T/a05" "$T/a2" --format csv > "$T/cmp.csv"
check '[ $? -eq 0 ] && [ $(wc -l < "$T/cmp.csv") -eq 3 ]'
check 'head -1 "$T/cmp.csv" | grep -q "^run,status,model.alpha,.*perplexity"'
check 'grep -Eq "^a2,COMPLETED,2(\.0)?,[^/]*$" "$T/cmp.csv"'
check 'awk -F, "NR==1{for(i=1;i<=NF;i++) c[\$i]=i} NR==2{p1=\$c[\"perplexity\"]} NR==3{p2=\$c[\"perplexity\"]; d=\$c[\"delta_perplexity\"]; exit !(d != 0 && (p2 - p1 - d)^2 < 1e-12)}" "$T/cmp.csv"'
"$BIN" compare "$T/a05" "$T/a2" --plot "$T/cmp/ppl" > "$T/cmp.md" 2> /dev/null
check '[ $? -eq 0 ] && [ -s "$T/cmp/ppl.dat" ] && grep -Eq "\| model.alpha \| 0.5 \| 2(\.0)? \|" "$T/cmp.md"'

# topics: one layer, one topic, the corpus' most frequent words (NPMI -0.019989 by
# unigram_reference.py, results/baselines/brown-unigram.yaml)
"$BIN" topics "$T/a05" > "$T/topics.txt"
check '[ $? -eq 0 ] && grep -q "## layer 1: 1 topics, NPMI -0.0200" "$T/topics.txt"'

# the alpha-2 run against the independent reference
if command -v python3 > /dev/null; then
  python3 results/baselines/unigram_reference.py "$DATA" 2 > "$T/ref2.txt"
  ppl=$(sed -n 's/^perplexity: //p' "$T/ref2.txt")
  printf 'metrics:\n  perplexity: {value: %s, rel_tol: 1.0e-5, direction: equal}\n' "$ppl" > "$T/ref2.yaml"
  "$BIN" check-metrics "$T/a2" --baseline "$T/ref2.yaml" > "$T/cm3.txt"
  check '[ $? -eq 0 ]'
fi

if [ $fails -ne 0 ]; then echo "$fails check(s) failed; files in $T"; cat "$T"/run*.txt | tail -20; exit 1; fi
rm -rf "$T"
echo "test_cli_compare_e2e: ok"
