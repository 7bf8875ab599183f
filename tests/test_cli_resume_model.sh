#!/bin/bash
# ctest-labels: slow;e2e  ctest-timeout: 600
# tests/test_cli_resume_model.sh: kill -9 and resume with a real topic model (dlda-tlasgr on
# the digits set): the plugin's save/load must carry the whole state (Phi, r, M, counters)
# so the resumed run ends bit-identical (17 digits) to the uninterrupted one: final
# perplexity, every curve point and Phi(1).
# Skips (77) without the digits data set or when dlda-tlasgr is not registered.
set -u
DATM=${DATM_BIN:-build/datm}
SRC=${DATM_SOURCE_DIR:-.}
. "$(dirname "$0")/testlib.sh"
datm_data_dir digits > /dev/null || { echo "skipped: no digits in \$DATM_DATA nor .cache/data (bash ci/setup.sh writes it)"; exit 77; }
command -v h5dump >/dev/null || { echo "skipped: h5dump missing"; exit 77; }
$DATM models | grep -q '^dlda-tlasgr ' || { echo "skipped: dlda-tlasgr not registered"; exit 77; }
T=$(mktemp -d /tmp/datm_resume_model_XXXXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/dg.yaml" <<'YAML'
name: resume-model
data:
  dataset: digits
model:
  variant: dlda-tlasgr
  layers: [16, 8]
  test_burnin: 5
train:
  epochs: 2
  batch_size: 200
  eval_every: 4
  eval_docs: 100
  eval_samples: 2
  checkpoint_every: 5
evaluate:
  samples: 5
  classify: false
output:
  figures: false
YAML
fail=0
vals() { h5dump -m %.17g -d /metrics/perplexity -d /metrics/perplexity_observed -d /curves/perplexity \
                -d /curves/loss -d /model/phi_1 "$1" | grep -v '^HDF5'; }
nice -n 5 $DATM run "$T/dg.yaml" -o "$T/A" --quiet || { echo "FAIL: uninterrupted run"; exit 1; }
DATM_TEST_KILL_AT_ITER=12 nice -n 5 $DATM run "$T/dg.yaml" -o "$T/B" --quiet 2>/dev/null
check '[ ! -e "$T/B/result.h5" ]' "killed run leaves no result.h5"
nice -n 5 $DATM resume "$T/B" --quiet
check '[ $? -eq 0 ]' "resume exits 0"
check '[ "$(vals "$T/A/result.h5" | grep -c "DATA {")" -eq 5 ]' "compared datasets readable"
check 'diff <(vals "$T/A/result.h5") <(vals "$T/B/result.h5") > /dev/null' "kill+resume equals uninterrupted (perplexity, curves, Phi(1))"
[ $fail -eq 0 ] && echo "test_cli_resume_model: all checks passed"
exit $fail
