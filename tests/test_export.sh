#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_export.sh: `datm export` and the tracker files on a small WHAI trained on Brown, each format read back
# with Debian's python3 (json, numpy):
# - pyldavis: per layer, topic_term_dists (K, V) and doc_topic_dists (D, K) rows sum to 1,
#   doc_lengths (D) and term_frequency (V) are the training documents' counts, the shapes
#   agree with each other and the vocabulary, and topic_term_dists equals the topics on the
#   words libdatm gives (python datm.Run.topic_words) to float precision;
# - json and csv: the topic weights equal those of the HDF5 model (round trip) and theta
#   rows sum to 1; mallet: one topic-keys line per topic, doc-topics rows of K proportions;
# - an existing output is refused without --overwrite and kept;
# - datm topics --format json|csv lists every topic with the same top words and weights;
# - the run wrote metrics.json (equal to its /metrics) and params.yaml (flat dotted keys that
#   PyYAML reads back to the resolved settings) beside result.h5.
set -u
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${DATM_BUILD_DIR:-$SRC/build}
datm=${DATM_BIN:-$BUILD/datm}
[ -x "$datm" ] || { echo "skipped: $datm not built"; exit 77; }
py=/usr/bin/python3
"$py" -c 'import numpy, yaml' 2> /dev/null || {
  echo "FAIL: $py lacks numpy or yaml (ci/setup.sh installs python3-numpy python3-yaml)"; exit 1; }
brown=$SRC/.cache/data/brown
[ -f "$brown/train.docword.gz" ] || { echo "FAIL: $brown missing: run bash ci/setup.sh"; exit 1; }
. "$SRC/tests/testlib.sh"
fail=0
tmp=$(mktemp -d /tmp/datm_test_export_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pylib() { ( datm_test_python_env "$BUILD"; exec "$@" ); }   # a python3 that loads libdatm.so

"$datm" run "$SRC/experiments/brown/whai.yaml" -o "$tmp/run" --quiet --threads 2 \
  "model.layers=[16,8]" "model.kl_weight=[0.1,0.01]" "model.eta=[]" train.epochs=1 train.eval_every=0 \
  model.aug_gibbs_burn=0 model.aug_gibbs_collect=0 evaluate.samples=2 evaluate.classify=false \
  output.figures=false output.report=false > "$tmp/run.log" 2>&1
check "[ $? = 0 ]" "a small WHAI trains on Brown"
for t in pyldavis json; do
  "$datm" export "$tmp/run" --to $t -o "$tmp/$t.json" --top 7 2> "$tmp/$t.log"
  check "[ $? = 0 ] && [ -s '$tmp/$t.json' ]" "export --to $t ($(tail -1 "$tmp/$t.log"))"
done
for t in mallet csv; do
  "$datm" export "$tmp/run" --to $t -o "$tmp/$t" --top 7 2> "$tmp/$t.log"
  check "[ $? = 0 ] && [ -d '$tmp/$t' ]" "export --to $t ($(tail -1 "$tmp/$t.log"))"
done

DATM_LIB=$BUILD/libdatm.so PYTHONPATH=$SRC/python pylib "$py" - "$tmp" "$brown" > "$tmp/py.log" 2>&1 <<'PY'
import csv, gzip, json, sys
import numpy as np
import datm
tmp, brown = sys.argv[1], sys.argv[2]
r = datm.Run(tmp + "/run")
# the training documents' counts, read independently of datm
with gzip.open(brown + "/train.docword.gz", "rt") as f:
    D, V, _ = (int(f.readline()) for _ in range(3))
    dl, tf = np.zeros(D), np.zeros(V)
    for line in f:
        d, w, c = line.split(); dl[int(d) - 1] += float(c); tf[int(w) - 1] += float(c)
P = json.load(open(tmp + "/pyldavis.json"))
assert len(P["layers"]) == 2
for L in P["layers"]:
    l, K = L["layer"], r.k[L["layer"] - 1]
    tt, dt = np.array(L["topic_term_dists"]), np.array(L["doc_topic_dists"])
    assert tt.shape == (K, V) and dt.shape == (D, K), (tt.shape, dt.shape)
    assert np.allclose(tt.sum(1), 1, atol=1e-4) and np.allclose(dt.sum(1), 1, atol=1e-4)
    assert len(L["vocab"]) == V and L["vocab"] == r.vocab
    assert np.array_equal(np.array(L["doc_lengths"]), dl) and np.array_equal(np.array(L["term_frequency"]), tf)
    assert np.allclose(tt, r.topic_words(l).T, rtol=1e-6, atol=1e-9)
print("pyldavis ok")
J = json.load(open(tmp + "/json.json"))
for L in J["layers"]:
    l = L["layer"]; tw = r.topic_words(l); idx = {w: i for i, w in enumerate(r.vocab)}
    for t in L["topics"]:
        for e in t["words"]:
            assert np.float32(e["weight"]) == tw[idx[e["word"]], t["topic"] - 1], e
    th = np.array(L["theta"]); assert th.shape == (D, r.k[l - 1]) and np.allclose(th.sum(1), 1, atol=1e-4)
print("json ok")
for l in (1, 2):
    tw = r.topic_words(l); idx = {w: i for i, w in enumerate(r.vocab)}
    rows = list(csv.DictReader(open("%s/csv/topics-%d.csv" % (tmp, l))))
    assert len(rows) == r.k[l - 1] * 7
    for row in rows:
        assert np.float32(row["weight"]) == tw[idx[row["word"]], int(row["topic"]) - 1], row
    th = np.loadtxt("%s/csv/theta-%d.csv" % (tmp, l), delimiter=",", skiprows=1)[:, 1:]
    assert th.shape == (D, r.k[l - 1]) and np.allclose(th.sum(1), 1, atol=1e-4)
    keys = open("%s/mallet/topic-keys-%d.txt" % (tmp, l)).read().splitlines()
    assert len(keys) == r.k[l - 1] and all(len(k.split("\t")[2].split()) == 7 for k in keys)
    dts = open("%s/mallet/doc-topics-%d.txt" % (tmp, l)).read().splitlines()
    assert len(dts) == D and len(dts[0].split("\t")) == 2 + r.k[l - 1]
print("csv, mallet ok")
# metrics.json and params.yaml beside result.h5, as trackers read them
M = json.load(open(tmp + "/run/metrics.json"))
assert M == {k: v for k, v in r.metrics.items()}, (M, r.metrics)
import yaml
Y = yaml.safe_load(open(tmp + "/run/params.yaml"))
assert Y["model.variant"] == "whai" and Y["model.layers"] == [16, 8] and Y["train.epochs"] == 1
assert Y["model.kl_weight"] == [0.1, 0.01] and Y["evaluate.classify"] is False
assert all("." in k or k in ("name", "description", "seed", "threads") for k in Y)
print("metrics.json, params.yaml ok")
PY
rc=$?
cat "$tmp/py.log"
check "[ $rc = 0 ]" "every format reads back with python and agrees with the model"
# datm topics --format json|csv: every topic, its top words equal to libdatm's
"$datm" topics "$tmp/run" --format json --top 5 > "$tmp/topics.json" 2> /dev/null
"$datm" topics "$tmp/run" --format csv --top 5 > "$tmp/topics.csv" 2> /dev/null
DATM_LIB=$BUILD/libdatm.so PYTHONPATH=$SRC/python pylib "$py" - "$tmp" > "$tmp/py2.log" 2>&1 <<'PY'
import csv, json, sys
import numpy as np
import datm
tmp = sys.argv[1]
r = datm.Run(tmp + "/run")
T = json.load(open(tmp + "/topics.json"))
assert [len(L["topics"]) for L in T["layers"]] == r.k
rows = list(csv.DictReader(open(tmp + "/topics.csv")))
assert len(rows) == 5 * sum(r.k)
for L in T["layers"]:
    want = r.topics(L["layer"], top=5)
    for t in L["topics"]:
        got = [(w["word"], np.float32(w["weight"])) for w in t["words"]]
        assert [w for w, _ in got] == [w for w, _ in want[t["topic"]]], (got, want[t["topic"]])
        assert all(a == np.float32(b) for (_, a), (_, b) in zip(got, want[t["topic"]]))
print("topics --format ok")
PY
rc=$?
cat "$tmp/py2.log"
check "[ $rc = 0 ]" "datm topics --format json and csv list every topic with libdatm's top words"
before=$(md5sum < "$tmp/json.json")
"$datm" export "$tmp/run" --to json -o "$tmp/json.json" 2> "$tmp/again.log"
check "[ $? = 1 ] && grep -q 'exists' '$tmp/again.log' && [ \"\$(md5sum < '$tmp/json.json')\" = '$before' ]" \
  "an existing output is refused without --overwrite and kept"
exit $fail
