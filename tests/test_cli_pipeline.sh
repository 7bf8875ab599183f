#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 240
# tests/test_cli_pipeline.sh: the user-facing pipeline commands end to end, on the Brown
# corpus that ci/setup.sh builds (laid out by tests/brown_heldout.sh for the
# held-out-documents protocol of the CI spec).
# - datm run experiments/quick/ci.yaml: result.h5 COMPLETED with the documented names
#   (h5dump), spec.resolved.yaml / overrides.txt / run.log / report.md (with --quiet, run.log
#   still has the info lines and the training progress), figures with their
#   .gp and .dat, then `datm check-metrics` against results/baselines/brown-unigram.yaml
#   passes, and fails against a baseline moved by 1%
# - datm check: exit 0 and the resolved spec for a good spec, exit 2 with file:line:col and
#   the key for a bad one, exit 1 for a missing file; overrides listed in overrides.txt
# - datm run of a spec whose data set is misspelt or empty: exit 1, no result.h5, the message
#   names file:line:col and data.dataset (and the closest data set: brown for brwn); a value
#   the model's own check rejects (model.layers: []) is refused as a bad spec (exit 2), named
#   with its file:line:col
# - datm models / describe VARIANT / describe --all --markdown (every engine key documented)
# - every command answers --help with exit 0
# Skips (77) without the Brown corpus or h5dump.
set -u
. "$(dirname "$0")/testlib.sh"   # check
datm_test_heldout cli brown_heldout
BH=$T/brown_heldout

# --- run -> HDF5 -> figures -> check-metrics ---
$DATM run "$SRC/experiments/quick/ci.yaml" data.dataset="$BH" evaluate.burnin=0 -o "$T/run" --quiet 2> "$T/quiet_err.txt"
check '[ $? -eq 0 ]' "quick CI run exits 0"
R=$T/run
# --quiet quietens the terminal only: run.log keeps the record, with the final progress line
check '! grep -q "result:" "$T/quiet_err.txt"' "--quiet prints no info lines"
check 'grep -q "^result: .*(COMPLETED)" "$R/run.log"' "run.log of a quiet run has its info lines"
check 'grep -q "^train [0-9]*/[0-9]* (100%)" "$R/run.log"' "run.log of a quiet run has the training progress"
for f in result.h5 spec.resolved.yaml overrides.txt run.log report.md; do
  check '[ -f "$R/$f" ]' "run directory has $f"
done
check '[ ! -e "$R/result.h5.part" ]' "no .part left after COMPLETED"
check 'grep -qx "evaluate.burnin=0" "$R/overrides.txt"' "overrides.txt lists the override"
names=$(h5dump -n "$R/result.h5")
for n in /metrics/perplexity /metrics/perplexity_observed /metrics/test_s_per_doc /metrics/train_s \
         /curves/iteration /curves/epoch /curves/wall_s /curves/loss /curves/perplexity /curves/kl_1 \
         /model/phi_1 /data/vocab /checkpoint; do
  check 'echo "$names" | grep -q " $n\$"' "h5dump lists $n"
done
attrs=$(h5dump -H "$R/result.h5")
for a in status spec spec_hash seed threads git_commit compiler blas_config hdf5_version yaml_version host argv created_utc finished_utc defaults_applied; do
  check 'echo "$attrs" | grep -q "ATTRIBUTE \"$a\""' "root attribute $a"
done
check 'h5dump -a /status "$R/result.h5" | grep -q "\"COMPLETED\""' "status COMPLETED"
check 'h5dump -a /defaults_applied "$R/result.h5" | grep -q "train.shuffle"' "defaults applied are recorded"
check '[ -f "$R/figures/perplexity_vs_iteration.gp" ] && [ -f "$R/figures/perplexity_vs_iteration.dat" ]' "figure script and data kept"
if command -v gnuplot >/dev/null; then
  check '[ -s "$R/figures/perplexity_vs_iteration.png" ] && [ -s "$R/figures/perplexity_vs_iteration.svg" ]' "figure rendered"
fi
$DATM check-metrics "$R" --baseline "$SRC/results/baselines/brown-unigram.yaml" > "$T/cm.txt"
check '[ $? -eq 0 ]' "check-metrics against the Brown unigram baseline passes"
# the perplexity 1% lower: 3007.624 / 1.01
sed 's/value: 3007.6240141219669/value: 2977.846/' "$SRC/results/baselines/brown-unigram.yaml" > "$T/moved.yaml"
check '! cmp -s "$SRC/results/baselines/brown-unigram.yaml" "$T/moved.yaml"' "the moved baseline differs"
$DATM check-metrics "$R" --baseline "$T/moved.yaml" > /dev/null
check '[ $? -eq 1 ]' "check-metrics fails against a baseline 1% off"

# --- check ---
out=$($DATM check "$SRC/experiments/quick/ci.yaml" data.dataset="$BH" train.epochs=5)
check '[ $? -eq 0 ]' "check of the CI spec exits 0"
check 'echo "$out" | grep -q "^  epochs: 5$" && echo "$out" | grep -q "batch_size: 1000$" && echo "$out" | grep -q "shuffle: true  # default"' "resolved spec printed with defaults marked"
check 'echo "$out" | grep -q "spec_hash: [0-9a-f]\{64\}"' "hash printed"
printf 'data:\n  dataset: brown\nmodel:\n  variant: unigram\n  alpah: 1\ntrain:\n  epochs: 0\n' > "$T/bad.yaml"
$DATM check "$T/bad.yaml" 2> "$T/bad.txt"
check '[ $? -eq 2 ]' "check of a bad spec exits 2"
check 'grep -q "bad.yaml:5:3: unknown key .alpah. in section .model. (did you mean .alpha.?)" "$T/bad.txt"' "unknown key with position and suggestion"
check 'grep -q "bad.yaml:7:11: train.epochs: value 0 is out of range \[1, 10000000\]" "$T/bad.txt"' "range error with position and bounds"
$DATM check "$T/none.yaml" 2>/dev/null
check '[ $? -eq 1 ]' "missing spec file exits 1"
$DATM run "$T/bad.yaml" -o "$T/badrun" 2>/dev/null
check '[ $? -eq 2 ] && [ ! -e "$T/badrun" ]' "run refuses a bad spec before creating anything"
printf 'data:\n  dataset: brwn\nmodel:\n  variant: unigram\n' > "$T/typo.yaml"
$DATM run "$T/typo.yaml" -o "$T/typorun" --quiet 2> "$T/typo.txt"
check '[ $? -eq 1 ] && [ ! -e "$T/typorun/result.h5" ]' "a missing data set fails the run, no result.h5"
check 'grep -q "typo.yaml:2:12: data.dataset: data set .brwn. not found: looked in .* (did you mean .brown.?)" "$T/typo.txt"' "missing data set: file:line:col, key, places looked and a suggestion"
printf 'data:\n  dataset: ""\nmodel:\n  variant: unigram\n' > "$T/empty.yaml"
$DATM run "$T/empty.yaml" -o "$T/emptyrun" --quiet 2> "$T/empty.txt"
check '[ $? -eq 1 ] && grep -q "empty.yaml:2:12: data.dataset is empty" "$T/empty.txt"' "empty data.dataset named at file:line:col"
printf 'data:\n  dataset: brown\nmodel:\n  variant: whai\n  layers: []\n' > "$T/nolayers.yaml"
$DATM run "$T/nolayers.yaml" -o "$T/nolayersrun" --quiet 2> "$T/nolayers.txt"
check '[ $? -eq 2 ] && grep -q "nolayers.yaml:5:11: model whai: model.layers: 0 layers" "$T/nolayers.txt"' "a model's own check names file:line:col of the key"
$DATM run "$T/nolayers.yaml" "model.layers=[8,8,8,8,8,8,8,8,8]" -o "$T/nolayersrun2" --quiet 2> "$T/nolayers2.txt"
check 'grep -q "override .model.layers=\[8,8,8,8,8,8,8,8,8\].: model whai: model.layers: 9 layers" "$T/nolayers2.txt"' "... or the override that set it"

# --- models / describe ---
check '$DATM models | grep -q "^unigram "' "models lists unigram"
check '$DATM describe unigram | grep -q "model.alpha"' "describe unigram shows its key"
md=$($DATM describe --all --markdown)
for k in name seed threads data.dataset data.protocol data.obs_fraction train.epochs train.batch_size \
         train.eval_every train.checkpoint_every evaluate.samples evaluate.time_samples output.dir model.alpha; do
  check 'echo "$md" | grep -q "^| \`$k\` |"' "describe --all --markdown documents $k"
done
$DATM describe nosuch 2>/dev/null
check '[ $? -eq 2 ]' "describe of an unknown variant exits 2"

# --- help ---
for c in run resume sweep check models describe; do
  $DATM $c --help > /dev/null
  check '[ $? -eq 0 ]' "datm $c --help exits 0"
done

[ $fail -eq 0 ] && echo "test_cli_pipeline: all checks passed"
exit $fail
