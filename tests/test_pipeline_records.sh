#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_pipeline_records.sh: run records (README: Pipelines), on a small corpus this test
# writes itself (no data set needed): a report writes OUT/records/<id>.h5 for every finished
# run, and without the run cache the pipeline takes its runs from them.
# - after run + report every finished run has a record; one that no figure draws from is
#   small (under 64 KB) and holds /metrics and /curves but no model; the run a hierarchy
#   figure draws keeps its /topics (without projections) and /data/vocab; a table's
#   dataset:/PATH column keeps that dataset; a second report rewrites the same bytes
# - the cache deleted, `report` gives byte-identical REPORT.md, claims, tables and figure
#   data, and runs.csv apart from its dir column (a recorded run's dir is records/ID.h5);
#   `status` says recorded; `run` starts nothing and makes no cache directory
# - one run's setting changed in the pipeline file: that run is pending (its stale record
#   ignored, said in one line naming it), the others stay recorded, the report shows it
#   MISSING
# - --force reruns a recorded run (a cache directory again, status done)
# - a truncated record: a warning naming the file, the run pending, the report MISSING
set -u
. "$(dirname "$0")/testlib.sh"   # check
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
datm=${DATM_BIN:-$SRC/build/datm}
[ -x "$datm" ] || { echo "skipped: $datm not built"; exit 77; }
command -v h5dump > /dev/null || { echo "skipped: h5dump missing"; exit 77; }
fail=0
tmp=$(mktemp -d /tmp/datm_test_records_XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# 300 documents of 40 words, each from one of three themes of 20 words ("redaaa" ..) (a fixed LCG: the
# same corpus every time), built into a data set by `datm corpus build`.
awk 'BEGIN {
  split("red blue green", theme, " ")
  s = 12345
  for (d = 0; d < 300; d++) {
    t = d % 3 + 1; line = ""
    for (k = 0; k < 40; k++) {
      s = (s * 1103515245 + 12345) % 2147483648
      w = int(s / 65536) % 20
      c = substr("abcdefghijklmnopqrst", w + 1, 1)
      line = line " " theme[t] c c c
    }
    print substr(line, 2)
  }
}' > "$tmp/docs.txt"
"$datm" corpus build --format lines --input "$tmp/docs.txt" --out "$tmp/data" --no-stopwords \
  --min-df 1 --quiet > "$tmp/build.log" 2>&1
check '[ $? = 0 ] && [ -f "$tmp/data/train.docword.gz" ]' "the corpus is built"

cat > "$tmp/whai.yaml" <<SPEC
defaults: [$SRC/experiments/brown/whai.yaml]
name: rec-whai
data: {dataset: $tmp/data}
model: {layers: [8, 4], kl_weight: [0.1, 0.1], eta: [0.1, 0.1]}
train: {epochs: 1, eval_every: 0, checkpoint_every: 0}
evaluate: {samples: 2, classify: false}
output: {figures: false, topics: true}
SPEC
cat > "$tmp/uni.yaml" <<SPEC
defaults: [$SRC/experiments/brown/unigram.yaml]
name: rec-uni
data: {dataset: $tmp/data}
evaluate: {classify: false}
output: {figures: false}
SPEC
cat > "$tmp/p.yaml" <<PIPE
name: rectest
out: out
cache: cache
runs:
  - {id: w8, spec: whai.yaml}
  - {id: w6, spec: whai.yaml, overrides: ["model.layers=[6,3]"]}
  - {id: uni, spec: uni.yaml}
tables:
  ppl:
    title: Perplexity
    runs: ["w*"]
    values: [{metric: perplexity, format: "%.2f"}, {metric: "dataset:/model/phi_2[0:]", label: phi2}]
figures:
  curves:
    kind: curves
    runs: ["w*"]
    x: iteration
    y: perplexity
  tree:
    kind: hierarchy
    runs: [w8]
claims:
  beats:
    text: the two-layer WHAI beats the unigram model
    expr: "w8.perplexity < uni.perplexity"
    informative: true
PIPE
P=$tmp/p.yaml
O=$tmp/out
st() { "$datm" pipeline status "$P" 2> "$tmp/status_err.txt" | awk '!/^#/{print $1, $2}' | tr '\n' ' '; }
rundirs() { ls "$tmp/cache" 2> /dev/null | grep -v '^filehash' | wc -l; }

"$datm" pipeline run "$P" -j 2 --quiet > "$tmp/run1.log" 2>&1
check '[ $? = 0 ]' "the pipeline runs"
for id in w8 w6 uni; do
  check '[ -f "$O/records/$id.h5" ]' "run $id has a record"
done
size=$(stat -c %s "$O/records/uni.h5")
echo "record sizes: $(cd "$O/records" && stat -c '%n %s' *.h5 | tr '\n' ' ')"
check '[ "$size" -lt 65536 ]' "a record no figure draws from is small ($size bytes)"
names=$(h5dump -n "$O/records/uni.h5")
check 'echo "$names" | grep -q " /metrics/perplexity$"' "a record holds /metrics"
check 'echo "$names" | grep -q " /curves/iteration$"' "a record holds /curves"
check '! echo "$names" | grep -q "/model\|/checkpoint\|/encoder"' "a record holds no model"
check 'h5dump -a /pipeline_key "$O/records/uni.h5" | grep -q "$(awk -F, '\''$1 == "uni" {print $3}'\'' "$O/runs.csv")"' \
  "a record carries its run's cache key"
check 'h5dump -a /status "$O/records/uni.h5" | grep -q "\"COMPLETED\""' "a record keeps the root attributes"
names=$(h5dump -n "$O/records/w8.h5")
check 'echo "$names" | grep -q " /topics/layer_2/top_ids$"' "the hierarchy's run keeps /topics"
check '! echo "$names" | grep -q "projected"' "... without the projections"
check 'echo "$names" | grep -q " /data/vocab$"' "... and its vocabulary"
check 'echo "$names" | grep -q " /model/phi_2$"' "a table's dataset column keeps its dataset"
check '! echo "$names" | grep -q " /model/phi_1$"' "... and only that one of /model"

keep() {   # keep NAME: the report's files (runs.csv without its dir column) into $tmp/NAME
  mkdir -p "$tmp/$1"
  cp "$O/REPORT.md" "$O/claims.md" "$O/claims.json" "$tmp/$1/"
  cut -d, -f1-3,5- "$O/runs.csv" > "$tmp/$1/runs.csv"
  cp -r "$O/tables" "$tmp/$1/tables"
  mkdir -p "$tmp/$1/figures"
  cp "$O"/figures/*.dat "$O"/figures/*.md "$tmp/$1/figures/"
  md5sum "$O"/records/*.h5 | sed "s|$O/||" > "$tmp/$1/records.md5"
}
keep cached
"$datm" pipeline report "$P" > "$tmp/report2.log" 2>&1
keep cached2
check 'diff -r "$tmp/cached" "$tmp/cached2" > /dev/null' "a second report writes the same records and files"

rm -rf "$tmp/cache"
"$datm" pipeline report "$P" > "$tmp/report3.log" 2>&1
check '[ $? = 0 ]' "the report without the cache"
keep recorded
check 'diff -r "$tmp/cached" "$tmp/recorded"' "... is byte-identical (runs.csv apart from its dir column)"
check 'grep -q "^uni,COMPLETED,.*,records/uni.h5," "$O/runs.csv"' "runs.csv names the record as a recorded run's dir"
check '[ "$(st)" = "recorded w8 recorded w6 recorded uni " ]' "status: every run recorded"
"$datm" pipeline run "$P" -j 2 --quiet > "$tmp/run2.log" 2>&1
check '[ $? = 0 ]' "run with every run recorded exits 0"
check '! grep -q "started" "$tmp/run2.log"' "run starts nothing"
check '[ "$(rundirs)" = 0 ]' "run makes no cache directory"
keep again
check 'diff -r "$tmp/cached" "$tmp/again" > /dev/null' "the report of that run is the same"

sed -i 's/overrides: \["model.layers=\[6,3\]"\]/overrides: ["model.layers=[6,3]", "model.lr=0.002"]/' "$P"
check '[ "$(st)" = "recorded w8 pending w6 recorded uni " ]' "a changed setting: that run pending, the others recorded"
check '[ "$(grep -c "stale" "$tmp/status_err.txt")" = 1 ] && grep -q "records/w6.h5" "$tmp/status_err.txt"' \
  "the stale record is said in one line naming it"
"$datm" pipeline report "$P" > "$tmp/report4.log" 2>&1
check 'grep -q "^| w6 | MISSING |" "$O/REPORT.md"' "the report shows that run MISSING, not its stale record"
sed -i 's/, "model.lr=0.002"//' "$P"
check '[ "$(st)" = "recorded w8 recorded w6 recorded uni " ]' "and back: recorded again"

"$datm" pipeline run "$P" --only '^uni$' --force --quiet > "$tmp/run3.log" 2>&1
check '[ $? = 0 ] && grep -q "uni: run started" "$tmp/run3.log"' "--force reruns a recorded run"
check '[ "$(rundirs)" = 1 ]' "... into the cache"
check '[ "$(st)" = "recorded w8 recorded w6 done uni " ]' "... which then wins over its record"

head -c 2000 "$O/records/w8.h5" > "$tmp/trunc.h5" && mv "$tmp/trunc.h5" "$O/records/w8.h5"
check '[ "$(st)" = "pending w8 recorded w6 done uni " ]' "a truncated record: the run pending"
check 'grep -q "records/w8.h5" "$tmp/status_err.txt"' "... with a warning naming the file"
"$datm" pipeline report "$P" > "$tmp/report5.log" 2>&1
check '[ $? = 0 ] && grep -q "^| w8 | MISSING |" "$O/REPORT.md"' "... and the report shows it MISSING"
exit $fail
