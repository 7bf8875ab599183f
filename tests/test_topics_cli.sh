#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_topics_cli.sh: per-topic diagnostics and the coherence settings end to end on the
# built-in Brown corpus (ci/setup.sh builds it; a short WHAI on 800 of its documents):
# - a spec with evaluate.coherence as a mapping (measures [npmi, cv], top_n 6) runs; result.h5
#   has /usage (shares summing to 1), per layer npmi and cv (no uci), usage, unused, nearest,
#   corpus_kl, the settings as /topics attributes, and the metrics npmi_live_1, cv_1, unused_1;
# - `datm topics` lists live topics by usage (non-increasing), counts the hidden unused ones
#   (with --all every topic is listed), prints children for layer 2 and the settings header;
#   --unused-share 0.9 hides more topics; --by-index keeps index order;
# - --recompute with a raw-text reference and a sliding window records the window and the
#   reference; a window against the (count-only) training documents is an error; a missing
#   reference file is an error naming it; the run's own reference given in the spec must load.
set -u
src=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
datm=${DATM_BIN:-$src/build/datm}
[ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
command -v h5dump > /dev/null || { echo "skip: h5dump missing"; exit 77; }
brown=$src/.cache/data/brown
if [ ! -f "$brown/train.docword.gz" ]; then
  echo "FAIL: $brown missing (bash ci/setup.sh builds it)"; exit 1
fi
fail=0
tmp=$(mktemp -d /tmp/datm_test_topics_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/testlib.sh"   # check, run_ok

cat > "$tmp/spec.yaml" <<YAML
name: topics-cli-test
seed: 3
data:
  dataset: $brown
  protocol: token-split
  train_docs: 800
model:
  variant: whai
  layers: [24, 8]
  lambda_is_mean: true
  kl_weight: [0.1, 0.01]
  eval_globals: fixed
train:
  epochs: 4
  batch_size: 100
  eval_docs: 100
  eval_samples: 2
evaluate:
  samples: 5
  classify: false
  coherence:
    measures: [npmi, cv]
    top_n: 6
output:
  figures: false
  report: false
YAML
run_ok "$tmp/spec.yaml" "$tmp/run"
R=$tmp/run/result.h5
h5() { h5dump "$@" "$R" 2>/dev/null; }
check "h5 -d /usage/tokens_1 | grep -q '( 24 )'" "/usage/tokens_1 has 24 entries"
sum=$(h5 -d /usage/tokens_1 -y -w 0 | awk '/DATA \{/ {getline; gsub(",", " "); for (i = 1; i <= NF; i++) s += $i} END {printf "%.6f", s}')
check "[ \"$sum\" = 1.000000 ]" "usage shares sum to 1 (got $sum)"
for d in npmi cv usage usage_theta unused nearest nearest_cos corpus_kl; do
  check "h5 -d /topics/layer_1/$d | grep -q '( 24 )'" "/topics/layer_1/$d (24)"
done
check "! h5 -d /topics/layer_1/uci | grep -q DATASET" "uci not computed (not asked for)"
check "h5 -d /topics/layer_2/link_ids | grep -q '( 8, 5 )'" "layer-2 children (8, 5)"
check "h5 -a /topics/coherence_measures | grep -q '\"npmi,cv\"'" "measures recorded"
check "h5 -a /topics/coherence_top_n | grep -q '(0): 6'" "top_n recorded"
check "h5 -a /topics/coherence_window | grep -q '(0): 0'" "window recorded"
check "h5 -a /topics/coherence_reference | grep -q 'training documents'" "reference recorded"
for m in npmi_1 npmi_live_1 cv_1 cv_live_2 unused_1 diversity_2; do
  check "h5 -d /metrics/$m | grep -q DATASET" "/metrics/$m"
done

"$datm" topics "$tmp/run" > "$tmp/t.txt" 2>&1; rc=$?
check "[ $rc = 0 ]" "datm topics exit $rc"
check "grep -q '^# coherence: npmi cv of the top 6 words, document co-occurrence' $tmp/t.txt" "settings header"
check "grep -q '^## layer 1: 24 topics, NPMI -*0\.[0-9]* ([0-9]* live topics: -*0\.[0-9]*), [0-9]* unused, diversity' $tmp/t.txt" "layer summary"
check "grep -q '^   live: npmi [-+]0\.[0-9]* cv [-+]0\.[0-9]* | all: npmi' $tmp/t.txt" "live and all coherence"
# usage column of layer 1 is non-increasing
awk '/^## layer 1/{f=1;next} /^## /{f=0} f && /^t[0-9]/ {print $3}' "$tmp/t.txt" | tr -d % > "$tmp/use.txt"
check "[ -s $tmp/use.txt ] && sort -g -r -c $tmp/use.txt" "layer 1 listed by usage"
shown=$(wc -l < "$tmp/use.txt")
unused=$(h5 -a /topics/layer_1/n_unused | sed -n 's/.*(0): //p')
check "[ $shown = $((24 - unused)) ]" "live topics shown ($shown of 24, $unused unused)"
if [ "$unused" -gt 0 ]; then
  check "grep -q \"^($unused unused topic(s) hidden\" $tmp/t.txt" "hidden count said"
fi
check "grep -q '^      children: L1.t[0-9]* 0\\.' $tmp/t.txt" "children with weights"
check "grep -q '^## links from layer 2 down' $tmp/t.txt" "tree"
"$datm" topics "$tmp/run" --all --no-tree --layer 1 > "$tmp/all.txt"
check "[ \$(grep -c '^t[0-9]' $tmp/all.txt) = 24 ]" "--all lists every topic"
"$datm" topics "$tmp/run" --unused-share 0.9 --layer 1 --no-tree > "$tmp/u9.txt"
n9=$(grep -c '^t[0-9]' "$tmp/u9.txt")
check "[ $n9 -lt $shown ] && grep -q \"^($((24 - n9)) unused topic(s) hidden: use < 0.9 / 24\" $tmp/u9.txt" "--unused-share 0.9 hides more and says how many"
"$datm" topics "$tmp/run" --by-index --all --layer 1 --no-tree | awk '/^t[0-9]/{print substr(\$1,2)}' > "$tmp/idx.txt"
check "sort -n -c $tmp/idx.txt" "--by-index order"

# a raw-text reference (one document per line, words of the corpus) with a sliding window
zcat "$brown/train.docword.gz" | awk -v V="$brown/vocab.txt" '
  BEGIN { while ((getline w < V) > 0) voc[++n] = w }
  NR > 3 { for (i = 0; i < $3; i++) line[$1] = line[$1] " " voc[$2] }
  END { for (d = 1; d <= 800; d++) print line[d] }' > "$tmp/ref.txt"
"$datm" topics "$tmp/run" --recompute --reference "$tmp/ref.txt" --window 10 --measures all \
  --layer 1 --no-tree > "$tmp/w.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && grep -q 'sliding windows of 10 positions in text $tmp/ref.txt' $tmp/w.txt" "window + text reference ($rc)"
check "grep -q ' uci ' $tmp/w.txt && grep -q ' umass ' $tmp/w.txt" "all measures"
"$datm" topics "$tmp/run" --recompute --window 10 > "$tmp/e1.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'token order' $tmp/e1.txt" "window on counts is an error ($rc)"
"$datm" topics "$tmp/run" --recompute --reference "$tmp/nope.txt" > "$tmp/e2.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'nope.txt' $tmp/e2.txt" "missing reference named ($rc)"
"$datm" topics "$tmp/run" --window 10 > "$tmp/e3.txt" 2>&1; rc=$?
check "[ $rc = 2 ]" "--window without --recompute is a usage error ($rc)"
# the spec's reference is checked before training: a missing file, a window without text
"$datm" run "$tmp/spec.yaml" evaluate.coherence.reference="$tmp/nope.txt" -o "$tmp/r2" > "$tmp/e4.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'evaluate.coherence.reference: .*nope.txt: no such file' $tmp/e4.txt && ! grep -q '^train ' $tmp/r2/run.log" "missing reference: error before training ($rc)"
"$datm" run "$tmp/spec.yaml" evaluate.coherence.window=20 -o "$tmp/r3" > "$tmp/e5.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'window 20 needs the order of the tokens' $tmp/e5.txt" "window on counts: error before training ($rc)"
"$datm" run "$tmp/spec.yaml" evaluate.coherence.reference="$tmp/ref.txt" evaluate.coherence.window=10 \
  "evaluate.coherence.measures=[cv]" -o "$tmp/r4" --quiet > "$tmp/r4.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && h5dump -a /topics/coherence_window $tmp/r4/result.h5 | grep -q '(0): 10' && h5dump -d /topics/layer_1/cv $tmp/r4/result.h5 > /dev/null 2>&1" "a run with a text reference and a window ($rc)"
exit $fail
