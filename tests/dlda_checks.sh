# tests/dlda_checks.sh: the checks that test_decoder_brown.sh (the Brown corpus, everywhere)
# and test_decoder_20news.sh (the paper's 20news_2000) run on their data set; sourced after
# testlib.sh, not a test itself. The caller sets DATM (the binary), SRC (the source tree),
# T (a scratch directory), UNIGRAM (the corpus unigram's held-out perplexity) and COMMON (the
# overrides that point the specs at the data set), then calls
#   dlda_checks SAMPLES     # test-time draws of both runs
# which runs, with the 20News specs (experiments/20news/dlda-*.yaml):
# - dlda-tlasgr: 64 topics, 3 epochs of mini-batch 200;
# - dlda-gibbs: 64-32, 30 iterations, and the same killed at 15 and resumed;
# and checks, per model, that the run completes, its perplexities are finite, the held-out
# perplexity is below UNIGRAM and below perplexity_observed, and that the resumed gibbs run
# is bit-identical to the uninterrupted one (metrics, Phi, r).

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

dlda_checks() {   # samples
    local samples=$1
    $DATM run "$SRC/experiments/20news/dlda-tlasgr_128.yaml" model.layers=[64] train.epochs=3 \
        train.eval_every=100 evaluate.samples="$samples" $COMMON -o "$T/tl" --quiet
    check '[ -f "$T/tl/result.h5" ]' "dlda-tlasgr: run completed"
    metrics_ok "$T/tl" dlda-tlasgr

    local gs="$SRC/experiments/20news/dlda-gibbs_128-64-32.yaml"
    local gargs="model.layers=[64,32] train.epochs=30 train.eval_every=10
                 train.checkpoint_every=10 evaluate.samples=$samples $COMMON"
    $DATM run "$gs" $gargs -o "$T/g" --quiet
    check '[ -f "$T/g/result.h5" ]' "dlda-gibbs: run completed"
    metrics_ok "$T/g" dlda-gibbs
    DATM_TEST_KILL_AT_ITER=15 $DATM run "$gs" $gargs -o "$T/gk" --quiet >/dev/null 2>&1
    $DATM resume "$T/gk" --quiet
    dump() { h5dump -m %.17g -d /metrics/perplexity -d /metrics/perplexity_observed \
                    -d /model/phi_1 -d /model/phi_2 -d /model/r "$1/result.h5" | grep -v '^HDF5'; }
    check '[ -f "$T/gk/result.h5" ] && cmp -s <(dump "$T/g") <(dump "$T/gk")' \
        "dlda-gibbs: killed at 15 + resumed == uninterrupted (metrics, Phi, r)"
}
