#!/bin/bash
# ctest-labels: regression  ctest-timeout: 1200
# tests/test_decoder_20news.sh: short real-data runs of dlda-tlasgr and dlda-gibbs on
# 20news_2000 (heldout-docs protocol) through `datm run` (the full runs and their
# measured figures are in the issue-3 report; their commands are the specs in
# experiments/20news/dlda-*.yaml). Checks, per model:
# - the run completes; perplexity and perplexity_observed are finite;
# - held-out perplexity is below the unigram model's 1364.8 (results/baselines/
#   quick-unigram.yaml, computed independently by unigram_reference.py): a topic model that
#   does not beat the corpus unigram on this file has learnt nothing;
# - perplexity_observed < perplexity: theta was inferred from the observed part, so the
#   averaged rate must fit it better than the unseen held-out part;
# - dlda-gibbs killed (SIGKILL) after a checkpoint and resumed ends bit-identical to the same
#   run uninterrupted (Phi(1), r, metrics): the saved training chain restores the sampler.
# Skips (77) without 20news_2000 under DATM_DATA (the paper's own file, not shipped) or
# without h5dump; test_decoder_brown.sh runs the same checks on the Brown corpus everywhere.
set -u
DATM=${DATM_BIN:-build/datm}
SRC=${DATM_SOURCE_DIR:-.}
: "${DATM_DATA:=$SRC/../shared/data}"
export DATM_DATA
[ -d "$DATM_DATA/20news_2000" ] || { echo "skipped: the paper's 20news_2000 is not in $DATM_DATA (test_decoder_brown covers the code)"; exit 77; }
command -v h5dump >/dev/null || { echo "skipped: h5dump (hdf5-tools) missing"; exit 77; }
T=$(mktemp -d /tmp/datm_dlda_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
. "$(dirname "$0")/testlib.sh"   # check, h5_scalar
UNIGRAM=1364.8156259919924
COMMON="data.eval_docs=1000 train.eval_docs=200 train.eval_samples=2 evaluate.classify=false
        output.figures=false output.report=false output.topics=false model.test_burnin=30"

. "$(dirname "$0")/dlda_checks.sh"
# dlda-tlasgr: 171 TLASGR steps of mini-batch 200 over 20news_2000; 100 draws after 30.
dlda_checks 100
exit $fail
