#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_val_error_metric.sh: /metrics/val_error, the criterion settings are chosen on
# without reading the test set (pipelines/select_classification.yaml), on the small digits set:
# - an sdatm-l run with model.val_fraction > 0 and evaluate.classify false writes val_error,
#   equal to the best_error its early-stopping record keeps, and a rate in [0, 1], and no
#   error_rate (the test documents are not read);
# - with checks every epoch and patience, val_error is the smallest recorded check (the state
#   kept), not the last one;
# - a run without val_fraction writes no val_error.
# Skips 77 without the binary, the data or h5dump.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init val_error digits

cat > "$tmp/l.yaml" <<YAML
name: val-error-test
seed: 2
data:
  dataset: $data/digits
  protocol: token-split
  obs_fraction: 0.95
model:
  variant: sdatm-l
  layers: [16]
  unsup_epochs: 3
  kl_warmup_epochs: 2
  k_min: 1
  label_weight: 10
train:
  epochs: 12
  batch_size: 50
evaluate:
  perplexity: false
  predict_samples: 0
output:
  figures: false
  report: false
  topics: false
YAML
scalar() { h5dump -m %.17g -d "$2" "$1/result.h5" 2>/dev/null |
           awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }'; }
attr() { h5dump -m %.17g -a "$2" "$1/result.h5" 2>/dev/null |
         awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }'; }
numbers() {
    h5dump -m %.17g -d "$2" "$1/result.h5" 2>/dev/null |
        awk '/DATA \{/ {on = 1; next} /^ *\}/ {on = 0} on { sub(/^ *\([0-9, ]*\): */, "");
             n = split($0, v, /, */); for (i = 1; i <= n; i++) if (v[i] != "") print v[i] }'
}

"$datm" run "$tmp/l.yaml" model.val_fraction=0.2 model.val_every=1000000 evaluate.classify=false \
    -o "$tmp/a" --threads 1 --quiet > "$tmp/a.txt" 2>&1; rc=$?
check "[ $rc = 0 ]" "a run with a validation split and no test scoring completes (exit $rc)"
v=$(scalar "$tmp/a" /metrics/val_error)
b=$(attr "$tmp/a" /model/early_stopping/best_error)
check "[ -n '$v' ] && [ '$v' = '$b' ]" "val_error $v equals the kept state's best_error $b"
check "awk 'BEGIN { exit !($v >= 0 && $v <= 1) }'" "val_error $v is a rate"
check "[ -z \"\$(scalar '$tmp/a' /metrics/error_rate)\" ]" "no test error rate without evaluate.classify"

"$datm" run "$tmp/l.yaml" model.val_fraction=0.2 model.val_every=1 model.val_patience=100 \
    evaluate.classify=false -o "$tmp/b" --threads 1 --quiet > "$tmp/b.txt" 2>&1; rc=$?
v=$(scalar "$tmp/b" /metrics/val_error)
m=$(numbers "$tmp/b" /model/early_stopping/val_error | sort -g | head -1)
n=$(numbers "$tmp/b" /model/early_stopping/val_error | wc -l)
check "[ $rc = 0 ] && [ $n -gt 1 ] && [ -n '$v' ] && awk 'BEGIN { exit !($v == $m) }'" \
    "with $n checks, val_error $v is the smallest check's $m"

"$datm" run "$tmp/l.yaml" evaluate.classify=false -o "$tmp/c" --threads 1 --quiet \
    > "$tmp/c.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && [ -z \"\$(scalar '$tmp/c' /metrics/val_error)\" ]" \
    "no validation split: no val_error (exit $rc)"
exit $fail
