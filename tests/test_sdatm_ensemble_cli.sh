#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_sdatm_ensemble_cli.sh: sDATM's trajectory ensemble (model.predict_snapshots,
# model.snapshot_every) through the command line on the small real digits set (sdatm-n,
# layers 16-8, 2 + 5 epochs):
# - the run completes; result.h5 holds the states of epochs 3, 5 and 7 (three states two
#   epochs apart, ending at the last) under /model/trajectory_ensemble, and the log says the
#   prediction read three states;
# - its test error differs from the run without the option (same seed: the training is the
#   same, the prediction averages), and both are finite rates;
# - predict_snapshots with val_fraction and val_patience is an error naming the key, and
#   writes no result.h5;
# - predict_snapshots with val_fraction (no patience) runs: the validation checks only score
#   (early_stopping's monitor_only is 1), the last check scores the three-state ensemble, and
#   nothing is restored.
# Skips 77 without the binary, the data or h5dump.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init sdatm_ens digits

cat > "$tmp/spec.yaml" <<YAML
name: sdatm-ensemble-cli-test
seed: 6
data:
  dataset: $data/digits
model:
  variant: sdatm-n
  layers: [16, 8]
  unsup_epochs: 2
  kl_warmup_epochs: 1
  k_min: 1
  label_weight: 10
train:
  epochs: 7
  batch_size: 100
  eval_every: 0
evaluate:
  perplexity: false
output:
  figures: false
  report: false
  topics: false
YAML
err_rate() { h5dump -m %.17g -d /metrics/error_rate "$1/result.h5" 2>/dev/null |
             awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }'; }

"$datm" run "$tmp/spec.yaml" -o "$tmp/one" --threads 2 > "$tmp/one.txt" 2>&1; rc0=$?
"$datm" run "$tmp/spec.yaml" model.predict_snapshots=3 model.snapshot_every=2 -o "$tmp/ens" \
    --threads 2 > "$tmp/ens.txt" 2>&1; rc=$?
check "[ $rc0 = 0 ] && [ $rc = 0 ] && [ -f '$tmp/ens/result.h5' ]" \
      "runs complete: exit $rc0 / $rc $(tail -1 "$tmp/ens.txt")"
epochs=$(h5dump -d /model/trajectory_ensemble/epoch "$tmp/ens/result.h5" 2>/dev/null |
         awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }')
check "[ '$epochs' = '3, 5, 7' ]" "held states: epochs $epochs (want 3, 5, 7)"
check "grep -q 'x 3 states (epochs 3-7)' '$tmp/ens/run.log'" "the prediction read three states"
e0=$(err_rate "$tmp/one"); e1=$(err_rate "$tmp/ens")
check "awk -v a='$e0' -v b='$e1' 'BEGIN { exit !(a >= 0 && a < 1 && b >= 0 && b < 1 && a != b) }'" \
      "error rates finite and different: final state $e0, ensemble $e1"
check "! h5dump -d /model/trajectory_ensemble/epoch '$tmp/one/result.h5' > /dev/null 2>&1" \
      "no ensemble group without the option"

"$datm" run "$tmp/spec.yaml" model.predict_snapshots=3 model.val_fraction=0.2 \
    model.val_patience=2 -o "$tmp/bad" > "$tmp/bad.txt" 2>&1; rc=$?
check "[ $rc != 0 ] && grep -q 'model.val_patience: 2 needs model.predict_snapshots 0' '$tmp/bad.txt'" \
      "with val_fraction and val_patience: an error naming the key: $(grep -m1 -i error "$tmp/bad.txt")"
check "[ ! -e '$tmp/bad/result.h5' ]" "no result written for the rejected spec"

"$datm" run "$tmp/spec.yaml" model.predict_snapshots=3 model.snapshot_every=2 \
    model.val_fraction=0.2 -o "$tmp/val" --threads 2 > "$tmp/val.txt" 2>&1; rc=$?
mon=$(h5dump -a /model/early_stopping/monitor_only "$tmp/val/result.h5" 2>/dev/null |
      awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }')
check "[ $rc = 0 ] && [ '$mon' = 1 ]" "with val_fraction: the run completes (exit $rc), monitor_only $mon"
check "grep -q 'epoch 7: validation error .* 3 states' '$tmp/val/run.log'" \
      "the last check scored the three-state ensemble: $(grep 'epoch 7: validation' "$tmp/val/run.log" | sed 's/.*epoch 7/epoch 7/')"
check "! grep -q 'restored the state' '$tmp/val/run.log'" "no state restored"
exit $fail
