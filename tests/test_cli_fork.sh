#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_cli_fork.sh: `datm fork RUN_DIR -o NEW_DIR [k=v ...] [--iteration N]` on digits
# (sdatm-n, the model whose MNIST divergence it was made to study): with no override the fork
# repeats the original run from its checkpoint exactly (error rate, loss curve, encoder); with
# an override it runs under the changed spec; RUN_DIR is not modified; a used NEW_DIR, a
# missing checkpoint and a change of shapes are refused with messages naming them; the
# per-batch log model.step_log changes no value.
. "$(dirname "$0")/testlib.sh"
datm_test_init fork digits
cat > "$tmp/s.yaml" <<'YAML'
name: fork-test
seed: 3
data:
  dataset: digits
model:
  variant: sdatm-n
  layers: [16, 8]
  unsup_epochs: 2
  kl_warmup_epochs: 1
  label_weight: 100
train:
  epochs: 6
  batch_size: 200
  eval_every: 0
  checkpoint_every: 8
  keep_checkpoints: 10
evaluate:
  perplexity: false
output:
  figures: false
YAML
vals() { h5dump -m %.17g -d /metrics/error_rate -d /curves/loss -d /model/encoder/l1.W1 -d /model/encoder/l2.W3 -d /model/adam_v "$1" | grep -v '^HDF5'; }
"$datm" run "$tmp/s.yaml" -o "$tmp/A" --threads 1 --quiet
check '[ $? -eq 0 ] && [ -f "$tmp/A/checkpoints/ckpt-000000000024.h5" ]' "original run with checkpoints"
sum_before=$(cat "$tmp"/A/checkpoints/* "$tmp/A/spec.resolved.yaml" | md5sum)
"$datm" fork "$tmp/A" -o "$tmp/F0" --iteration 24 --threads 1 --quiet
check '[ $? -eq 0 ]' "fork without overrides exits 0"
check '[ "$(vals "$tmp/A/result.h5" | grep -c "DATA {")" -eq 5 ]' "compared datasets readable"
check 'diff <(vals "$tmp/A/result.h5") <(vals "$tmp/F0/result.h5") > /dev/null' \
      "fork without overrides equals the original (error rate, loss curve, encoder)"
"$datm" fork "$tmp/A" -o "$tmp/F1" --iteration 24 model.grad_clip_rms=5 model.lr=0.0005 --threads 1 --quiet
check '[ $? -eq 0 ] && [ -f "$tmp/F1/result.h5" ]' "fork with overrides completes"
check 'grep -q "grad_clip_rms: 5" "$tmp/F1/spec.resolved.yaml" && grep -q "lr: 0.0005" "$tmp/F1/spec.resolved.yaml"' \
      "the fork's spec carries the overrides"
check '! diff <(vals "$tmp/A/result.h5") <(vals "$tmp/F1/result.h5") > /dev/null' \
      "the changed settings change the result"
check 'h5dump -a /checkpoint/forked_from "$tmp"/F1/checkpoints/ckpt-000000000024.h5 | grep -q "A/checkpoints/ckpt-000000000024.h5"' \
      "the copied checkpoint names its source"
check '[ "$(cat "$tmp"/A/checkpoints/* "$tmp/A/spec.resolved.yaml" | md5sum)" = "$sum_before" ]' \
      "RUN_DIR's checkpoints and spec are unchanged"
# model.step_log (the per-batch log the fork is used with) changes no value
"$datm" fork "$tmp/A" -o "$tmp/F4" --iteration 24 model.step_log=true --threads 1 --quiet
check '[ "$(grep -c "sdatm-n step " "$tmp/F4/run.log")" -eq 24 ]' "step_log: one line per supervised batch"
check 'diff <(vals "$tmp/A/result.h5") <(vals "$tmp/F4/result.h5") > /dev/null' "step_log changes no value"
check '[ -z "$(grep "sdatm-n step " "$tmp/F4/run.log" | sed "s/.*head NLL \([^ ]*\) error \([^ ]*\) .*/\1 \2/" | awk "\$1 < 0 || \$2 < 0 || \$2 > 1")" ]' \
      "step_log: every batch's head NLL >= 0 and error in [0, 1] (epoch starts included)"
out=$("$datm" fork "$tmp/A" -o "$tmp/F1" --quiet 2>&1); rc=$?
check '[ $rc -eq 2 ] && echo "$out" | grep -q "F1 exists and is not empty"' "a used NEW_DIR is refused"
out=$("$datm" fork "$tmp/A" -o "$tmp/F2" --iteration 25 --quiet 2>&1); rc=$?
check '[ $rc -eq 1 ] && echo "$out" | grep -q "no checkpoint after iteration 25"' "a missing checkpoint is named"
out=$("$datm" fork "$tmp/A" -o "$tmp/F3" model.layers=[12,8] --quiet 2>&1); rc=$?
check '[ $rc -eq 1 ] && echo "$out" | grep -q "phi_1: shape"' "a change of shapes is refused at the checkpoint"
check '[ ! -e "$tmp/F3/result.h5" ]' "and leaves no result.h5"
exit $fail
