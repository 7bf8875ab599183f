#!/bin/bash
# ctest-labels: regression  ctest-timeout: 1200
# tests/test_decoder_brown.sh: the fresh-clone counterpart of test_decoder_20news.sh: the same
# short runs of dlda-tlasgr and dlda-gibbs through `datm run` with the 20News specs
# (experiments/20news/dlda-*.yaml), on the Brown corpus that ci/setup.sh builds, laid out by
# tests/brown_heldout.sh for the same held-out-documents protocol. Checks, per model:
# - the run completes; perplexity and perplexity_observed are finite;
# - held-out perplexity is below the unigram model's on the same files (results/baselines/
#   brown-unigram.yaml, computed independently by unigram_reference.py): a topic model that
#   does not beat the corpus unigram has learnt nothing;
# - perplexity_observed < perplexity: theta was inferred from the observed part, so the
#   averaged rate must fit it better than the unseen held-out part;
# - dlda-gibbs killed (SIGKILL) after a checkpoint and resumed ends bit-identical to the same
#   run uninterrupted (Phi(1), r, metrics): the saved training chain restores the sampler.
# Skips (77) without the Brown corpus or without h5dump.
set -u
DATM=${DATM_BIN:-build/datm}
SRC=${DATM_SOURCE_DIR:-.}
command -v h5dump >/dev/null || { echo "skipped: h5dump (hdf5-tools) missing"; exit 77; }
T=$(mktemp -d /tmp/datm_dlda_brown_XXXXXX)
trap 'rm -rf "$T"' EXIT
bash "$SRC/tests/brown_heldout.sh" "$T/bh" 2> "$T/bh.txt" || { echo "skipped: $(cat "$T/bh.txt")"; exit 77; }
fail=0
. "$(dirname "$0")/testlib.sh"   # check
UNIGRAM=$(awk '/^  perplexity:/ {on = 1} on && /value:/ {print $2; exit}' "$SRC/results/baselines/brown-unigram.yaml")
COMMON="data.dataset=$T/bh train.eval_docs=200 train.eval_samples=2 evaluate.classify=false
        output.figures=false output.report=false output.topics=false model.test_burnin=20"

metrics_ok() {   # run_dir name
    local p o
    p=$(h5_scalar "$1/result.h5" /metrics/perplexity)
    o=$(h5_scalar "$1/result.h5" /metrics/perplexity_observed)
    echo "$2: perplexity $p, perplexity_observed $o"
    check 'awk -v p="$p" -v o="$o" "BEGIN{exit !(p > 1 && p < 1e9 && o > 1 && o < 1e9)}"' \
        "$2: perplexities finite"
    check 'awk -v p="$p" -v u=$UNIGRAM "BEGIN{exit !(p < u)}"' "$2: held-out $p < unigram $UNIGRAM"
    check 'awk -v p="$p" -v o="$o" "BEGIN{exit !(o < p)}"' "$2: observed $o < held-out $p"
}

# Half the test-time draws of the 20News test (50 after a burn-in of 20) keep the test short;
# the margin to the unigram stays wide (measured: dlda-tlasgr 2274, dlda-gibbs 2407, unigram 3008).
# dlda-tlasgr: 64 topics, 3 epochs of mini-batch 200 (69 TLASGR steps), 50 draws after 20
$DATM run "$SRC/experiments/20news/dlda-tlasgr_128.yaml" model.layers=[64] train.epochs=3 \
    train.eval_every=100 evaluate.samples=50 $COMMON -o "$T/tl" --quiet
check '[ -f "$T/tl/result.h5" ]' "dlda-tlasgr: run completed"
metrics_ok "$T/tl" dlda-tlasgr

# dlda-gibbs: 64-32, 30 iterations, 50 draws after 20; and kill at 15 + resume vs uninterrupted
GS="$SRC/experiments/20news/dlda-gibbs_128-64-32.yaml"
GARGS="model.layers=[64,32] train.epochs=30 train.eval_every=10 train.checkpoint_every=10
       evaluate.samples=50 $COMMON"
$DATM run "$GS" $GARGS -o "$T/g" --quiet
check '[ -f "$T/g/result.h5" ]' "dlda-gibbs: run completed"
metrics_ok "$T/g" dlda-gibbs
DATM_TEST_KILL_AT_ITER=15 $DATM run "$GS" $GARGS -o "$T/gk" --quiet >/dev/null 2>&1
$DATM resume "$T/gk" --quiet
dump() { h5dump -m %.17g -d /metrics/perplexity -d /metrics/perplexity_observed \
                -d /model/phi_1 -d /model/phi_2 -d /model/r "$1/result.h5" | grep -v '^HDF5'; }
check '[ -f "$T/gk/result.h5" ] && cmp -s <(dump "$T/g") <(dump "$T/gk")' \
    "dlda-gibbs: killed at 15 + resumed == uninterrupted (metrics, Phi, r)"
exit $fail
