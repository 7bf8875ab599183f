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
. "$(dirname "$0")/testlib.sh"   # check, h5_scalar
datm_test_heldout dlda_brown
UNIGRAM=$(awk '/^  perplexity:/ {on = 1} on && /value:/ {print $2; exit}' "$SRC/results/baselines/brown-unigram.yaml")
COMMON="data.dataset=$T/bh train.eval_docs=200 train.eval_samples=2 evaluate.classify=false
        output.figures=false output.report=false output.topics=false model.test_burnin=20"

. "$(dirname "$0")/dlda_checks.sh"
# Half the test-time draws of the 20News test (50 after a burn-in of 20) keep the test short;
# the margin to the unigram stays wide (measured: dlda-tlasgr 2274, dlda-gibbs 2407, unigram 3008).
dlda_checks 50
exit $fail
