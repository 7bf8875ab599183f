#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_whai_cli.sh: WHAI through the command line on the small real digits set:
# `datm run` of a short whai spec (COMPLETED result.h5 with perplexity, the encoder's named
# weights and Phi), then `datm infer` on the test documents: the CSV has one row per
# document and one column per unit of the chosen layer, normalised rows sum to 1; the HDF5
# holds theta_<l> of shape (N, K_l) for every layer; the mean is deterministic (two calls,
# 1 and 2 threads, identical files); usage errors exit 2. Skips 77 without the binary or
# the data.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init whai_cli digits

cat > "$tmp/spec.yaml" <<YAML
name: whai-cli-test
seed: 2
data:
  dataset: $data/digits
  protocol: token-split
  obs_fraction: 0.8
model:
  variant: whai
  layers: [16, 8]
  eval_globals: fixed
train:
  epochs: 3
  batch_size: 100
  eval_docs: 100
  eval_samples: 2
evaluate:
  samples: 5
output:
  figures: false
  report: false
YAML
run_ok "$tmp/spec.yaml" "$tmp/run"
check "h5dump -a /status '$tmp/run/result.h5' | grep -q COMPLETED" "result.h5 not COMPLETED"
check "h5dump -d /metrics/perplexity '$tmp/run/result.h5' > /dev/null 2>&1" "no /metrics/perplexity"
check "h5dump -H -d /model/encoder/l1.W3 '$tmp/run/result.h5' | grep -q '( 64, 16 )'" "encoder view l1.W3 (64, 16) missing"
check "h5dump -H -d /model/phi_2 '$tmp/run/result.h5' | grep -q '( 16, 8 )'" "phi_2 (16, 8) missing"

docs="$data/digits/test.docword.gz"
n=$(zcat "$docs" | head -1)
"$datm" infer "$tmp/run" "$docs" -o "$tmp/th.csv" --layer 2 --normalize --quiet; rc=$?
check "[ $rc = 0 ]" "datm infer csv exit $rc"
rows=$(($(wc -l < "$tmp/th.csv") - 1))
cols=$(head -1 "$tmp/th.csv" | awk -F, '{print NF}')
check "[ $rows = $n ]" "csv has $rows rows, expected $n"
check "[ $cols = 9 ]" "csv has $cols columns, expected 1 + 8"
check "awk -F, 'NR > 1 { s = 0; for (i = 2; i <= NF; i++) s += \$i; if (s < 0.9999 || s > 1.0001) bad++ } END { exit bad > 0 }' '$tmp/th.csv'" \
      "normalised rows do not sum to 1"
"$datm" infer "$tmp/run/result.h5" "$docs" -o "$tmp/a.h5" --threads 1 --quiet; rc1=$?
"$datm" infer "$tmp/run" "$docs" -o "$tmp/b.h5" --threads 2 --quiet; rc2=$?
check "[ $rc1 = 0 ] && [ $rc2 = 0 ]" "datm infer h5 exit $rc1 / $rc2"
check "h5dump -H -d /theta_1 '$tmp/a.h5' | grep -q '( $n, 16 )'" "theta_1 shape"
check "h5dump -H -d /theta_2 '$tmp/a.h5' | grep -q '( $n, 8 )'" "theta_2 shape"
check "[ \"\$(h5dump -d /theta_1 -d /theta_2 '$tmp/a.h5' | tail -n +2)\" = \"\$(h5dump -d /theta_1 -d /theta_2 '$tmp/b.h5' | tail -n +2)\" ]" \
      "theta differs between 1 and 2 threads"
"$datm" infer "$tmp/run" > /dev/null 2>&1; rc=$?
check "[ $rc = 2 ]" "missing arguments must exit 2 (got $rc)"
"$datm" infer "$tmp/run" "$docs" -o "$tmp/x.txt" > /dev/null 2>&1; rc=$?
check "[ $rc = 2 ]" "-o without .h5/.csv must exit 2 (got $rc)"
"$datm" infer "$tmp/run" "$docs" -o "$tmp/t0.h5" --threads 0 2> "$tmp/t0.err"; rc=$?
check "[ $rc = 2 ] && grep -q -- '--threads' '$tmp/t0.err' && [ ! -e '$tmp/t0.h5' ]" \
      "--threads 0 must exit 2 naming the option, writing nothing (got $rc)"
"$datm" infer --help | grep -q usage; check "[ $? = 0 ]" "--help"
exit $fail
