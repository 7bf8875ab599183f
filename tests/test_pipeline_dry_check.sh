#!/bin/bash
# ctest-labels: unit  ctest-timeout: 120
# tests/test_pipeline_dry_check.sh: a variant's own option checks (the check op of its
# datm_model_ops) run wherever a spec is validated, before any data is read, so a row that
# its create would refuse is refused when the pipeline is loaded:
# - `datm pipeline run --dry` (and `pipeline status`) of a pipeline with a row `wai` +
#   model.enc_input_keep=0.5 exits 2, naming the row, its spec file, where the value was
#   given (the override) and the key; rows of ghai + lambda_is_mean and wai + eta too, each
#   named; the good rows alone pass --dry (exit 0, one cache key each);
# - `datm check` and `datm run` of the same spec and override exit 2 with the same message,
#   and the run leaves no run directory; a key set in the spec file is located at its
#   file:line:col.
# Uses the Brown corpus of .cache/data (ci/setup.sh); nothing trains.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init dry_check brown
cd "$tmp" || exit 1

cat > wai.yaml <<EOF
name: dry-wai
data:
  dataset: brown
model:
  variant: wai
  layers: [8, 4]
train:
  epochs: 1
EOF
sed 's/variant: wai/variant: ghai/' wai.yaml > ghai.yaml
good_rows='  - id: wai_ok
    spec: wai.yaml
  - id: ghai_ok
    spec: ghai.yaml
    overrides: [model.rsvi_boost=2]'
printf 'name: dry-good\nout: out\nruns:\n%s\n' "$good_rows" > good.yaml
printf 'name: dry-bad\nout: out\nruns:\n%s\n%s\n' "$good_rows" '  - id: wai_keep
    spec: wai.yaml
    overrides: [model.enc_input_keep=0.5]
  - id: ghai_mean
    spec: ghai.yaml
    overrides: [model.lambda_is_mean=true]
  - id: wai_eta
    spec: wai.yaml
    overrides: ["model.eta=[0.1]"]' > bad.yaml

DATM_DATA="$data" "$datm" pipeline run good.yaml --dry --cache "$tmp/cache" > good.out 2>&1
rc=$?
check "[ $rc = 0 ]" "a good pipeline passes --dry (exit $rc: $(head -c 300 good.out))"
check "[ \$(grep -cE '\b[0-9a-f]{12,64}\b' good.out) -ge 2 ]" "--dry lists a cache key for each good row"

DATM_DATA="$data" "$datm" pipeline run bad.yaml --dry --cache "$tmp/cache" > bad.out 2>&1
rc=$?
check "[ $rc = 2 ]" "a row its variant refuses makes --dry exit 2 (exit $rc)"
check "grep -qE \"run 'wai_keep' \\(spec [^)]*wai.yaml\\): override 'model.enc_input_keep=0.5': model wai: model.enc_input_keep is not supported by wai\" bad.out" \
  "the message names the row, its spec, the override and the key ($(grep wai_keep bad.out | head -c 300))"
check "grep -qE \"run 'ghai_mean' \\(spec [^)]*ghai.yaml\\): override 'model.lambda_is_mean=true': model ghai: model.lambda_is_mean: .*Weibull\" bad.out" \
  "ghai + lambda_is_mean is named at --dry ($(grep ghai_mean bad.out | head -c 300))"
check "grep -qE \"run 'wai_eta' .*model wai: model.eta: .*not used by wai\" bad.out" \
  "wai + eta is named at --dry ($(grep wai_eta bad.out | head -c 300))"
check "! grep -qE \"run '(wai_ok|ghai_ok)'\" bad.out" "the good rows are not named"

DATM_DATA="$data" "$datm" pipeline status bad.yaml --cache "$tmp/cache" > status.out 2>&1
rc=$?
check "[ $rc = 2 ] && grep -q \"run 'wai_keep'.*model.enc_input_keep\" status.out" \
  "pipeline status refuses the same row (exit $rc)"

DATM_DATA="$data" "$datm" check wai.yaml model.enc_input_keep=0.5 > check.out 2>&1
rc=$?
check "[ $rc = 2 ] && grep -q \"^override 'model.enc_input_keep=0.5': model wai: model.enc_input_keep\" check.out" \
  "datm check: exit 2, located at the override (exit $rc: $(head -c 300 check.out))"
DATM_DATA="$data" "$datm" run wai.yaml model.enc_input_keep=0.5 -o "$tmp/run" --quiet > run.out 2>&1
rc=$?
check "[ $rc = 2 ] && grep -q 'model wai: model.enc_input_keep' run.out && [ ! -e '$tmp/run' ]" \
  "datm run: exit 2 before anything is read or written (exit $rc: $(head -c 300 run.out))"
sed 's/^  layers: \[8, 4\]$/  layers: [8, 4]\n  enc_input_keep: 0.5/' wai.yaml > wai_keep.yaml
DATM_DATA="$data" "$datm" check wai_keep.yaml > keep.out 2>&1
rc=$?
check "[ $rc = 2 ] && grep -q '^wai_keep.yaml:7:19: model wai: model.enc_input_keep' keep.out" \
  "a key set in the spec file is located at its file:line:col (exit $rc: $(head -c 300 keep.out))"
exit $fail
