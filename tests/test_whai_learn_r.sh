#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_whai_learn_r.sh: WHAI's learn_r option and layerwise as WHAI with learn_r, through
# the command line on the small real digits set (64 words, layers 16-8, 3 epochs):
# - whai with learn_r = true completes (training, the chain evaluation whose copies carry r,
#   save); /model/r has K_L = 8 entries, all finite and > 0, and not all equal to r_init
#   (= 1.5 here): TLASGR moved them (eq. r_update); `datm infer` loads the saved model (r
#   included) and writes theta;
# - whai with learn_r = false (default) saves no /model/r;
# - keys that would be silently ignored are errors naming the key: gamma0 without learn_r,
#   top_shape with learn_r, learn_r with phi_fixed, learn_r in wai (its own iteration);
# - layerwise rejects phi_init, phi_fixed and learn_r = false, naming the key;
# - layerwise honours WHAI's KL ramp (kl_weight_start / kl_ramp_epochs given per layer for
#   the final depth): the run completes and its loss curve differs from the same run
#   without the ramp (before, layerwise ignored the ramp).
# Skips 77 without the binary, the data or h5dump.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init learn_r digits

cat > "$tmp/spec.yaml" <<YAML
name: whai-learn-r-test
seed: 4
data:
  dataset: $data/digits
  protocol: token-split
  obs_fraction: 0.8
model:
  variant: whai
  layers: [16, 8]
train:
  epochs: 3
  batch_size: 100
  eval_every: 0
evaluate:
  samples: 3
  classify: false
output:
  figures: false
  report: false
  topics: false
YAML
# values of a dataset, one per line
values() { h5dump -m %.17g -d "$2" "$1" 2>/dev/null | awk '/DATA \{/ {on = 1; next} /\}/ {on = 0}
    on { sub(/^ *\([0-9, ]*\): */, ""); n = split($0, a, /, */); for (i = 1; i <= n; i++)
         if (a[i] != "") print a[i] }'; }

# whai, learn_r = true
"$datm" run "$tmp/spec.yaml" model.learn_r=true model.r_init=1.5 -o "$tmp/r" --quiet \
    > "$tmp/r.txt" 2>&1; rc=$?
check "[ $rc = 0 ]" "whai learn_r: run exit $rc $(tail -2 "$tmp/r.txt")"
values "$tmp/r/result.h5" /model/r > "$tmp/r.vals"
check "[ \$(wc -l < '$tmp/r.vals') = 8 ]" "whai learn_r: /model/r has 8 values ($(tr '\n' ' ' < "$tmp/r.vals"))"
check "awk '{ if (!(\$1 + 0 > 0 && \$1 + 0 < 1e300)) bad++ } END { exit bad > 0 }' '$tmp/r.vals'" \
      "whai learn_r: every r_k finite and > 0"
check "awk '{ if (\$1 + 0 != 1.5) moved++ } END { exit !(moved > 0) }' '$tmp/r.vals'" \
      "whai learn_r: r moved from r_init = 1.5"
p=$(values "$tmp/r/result.h5" /metrics/perplexity | head -1)
check "awk -v p='$p' 'BEGIN { exit !(p > 1 && p < 64) }'" "whai learn_r: perplexity $p finite and < V = 64"
"$datm" infer "$tmp/r" "$data/digits/test.docword.gz" -o "$tmp/th.h5" --quiet > /dev/null 2>&1; rc=$?
check "[ $rc = 0 ] && h5dump -H -d /theta_2 '$tmp/th.h5' > /dev/null 2>&1" \
      "whai learn_r: datm infer loads the saved model with r (exit $rc)"

# whai, learn_r = false: no r
"$datm" run "$tmp/spec.yaml" train.epochs=1 -o "$tmp/n" --quiet > "$tmp/n.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && ! h5dump -H -d /model/r '$tmp/n/result.h5' > /dev/null 2>&1" \
      "whai default: completes (exit $rc) without /model/r"

# keys that would be ignored
err() { "$datm" run "$tmp/spec.yaml" train.epochs=1 "$@" -o "$tmp/bad" 2>&1; }
check "err model.gamma0=2 | grep -q 'model.gamma0 is used only with learn_r'" "whai: gamma0 without learn_r rejected"
check "err model.learn_r=true model.top_shape=0.5 | grep -q 'model.top_shape'" "whai: top_shape with learn_r rejected"
check "err model.learn_r=true model.phi_fixed=true | grep -q 'model.learn_r'" "whai: learn_r with phi_fixed rejected"
check "err model.variant=wai model.learn_r=true | grep -q 'model.learn_r is not supported by wai'" \
      "wai (its own iteration): learn_r rejected"
check "err model.variant=layerwise model.phi_init='$tmp/r/result.h5' | grep -q 'model.phi_init is not supported by layerwise'" \
      "layerwise: phi_init rejected"
check "err model.variant=layerwise model.phi_fixed=true | grep -q 'model.phi_fixed is not supported by layerwise'" \
      "layerwise: phi_fixed rejected"
check "err model.variant=layerwise model.learn_r=false | grep -q 'model.learn_r: layerwise needs true'" \
      "layerwise: learn_r = false rejected"

# layerwise honours the KL ramp
lw="model.variant=layerwise model.layers=[16,16] train.epochs=4 train.eval_every=6 train.eval_samples=1"
"$datm" run "$tmp/spec.yaml" $lw -o "$tmp/lw0" --quiet > "$tmp/lw0.txt" 2>&1; rc0=$?
"$datm" run "$tmp/spec.yaml" $lw model.kl_weight_start=[0.01,0.01] model.kl_ramp_epochs=[1,3] \
    -o "$tmp/lw1" --quiet > "$tmp/lw1.txt" 2>&1; rc1=$?
check "[ $rc0 = 0 ] && [ $rc1 = 0 ]" "layerwise with/without KL ramp: exit $rc0 / $rc1 $(tail -2 "$tmp/lw1.txt")"
l0=$(values "$tmp/lw0/result.h5" /curves/loss | head -3 | tr '\n' ' ')
l1=$(values "$tmp/lw1/result.h5" /curves/loss | head -3 | tr '\n' ' ')
check "[ -n '$l0' ] && [ '$l0' != '$l1' ]" "layerwise: the KL ramp changes the loss curve ($l0 / $l1)"
exit $fail
