#!/bin/bash
# ctest-labels: unit  ctest-timeout: 60
# tests/test_config_keys.sh: keys that would do nothing are errors, named in the message.
# - data.obs_fraction under the heldout-docs protocol (the data set's own observed/held-out
#   parts are scored) fails before training; at its default it is accepted; under
#   token-split it is used;
# - a misspelt key is an error with a did-you-mean, in the engine's sections and in a
#   variant's table;
# - keys kept in a table only so that resolved specs keep their hashes, though nothing reads
#   them (output.top_words; ghai's u_lo/u_hi; wai's TLASGR schedule, count_mode and eta), are
#   errors at any value but their default; so is wai's phi_floor without phi_init (it only
#   floors a warm start's Phi).
# Runs on the Brown corpus laid out for held-out documents (tests/brown_heldout.sh).
. "$(dirname "$0")/testlib.sh"
datm_test_init config_keys brown
SRC=${DATM_SOURCE_DIR:-.}
bash "$SRC/tests/brown_heldout.sh" "$tmp/bh" > /dev/null
spec=$SRC/experiments/brown/unigram.yaml
small="data.train_docs=50 data.eval_docs=20 train.epochs=1 evaluate.samples=1
       output.figures=false output.report=false output.topics=false evaluate.classify=false"

# shellcheck disable=SC2086
out=$("$datm" run "$spec" data.dataset="$tmp/bh" data.protocol=heldout-docs \
      data.obs_fraction=0.5 $small -o "$tmp/a" --quiet 2>&1); rc=$?
check '[ $rc -ne 0 ] && echo "$out" | grep -q "data.obs_fraction 0.5: not used under the heldout-docs"' \
      "obs_fraction under heldout-docs is an error ($rc: $(echo "$out" | head -1))"
check '[ ! -e "$tmp/a/result.h5" ]' "no result written"
# shellcheck disable=SC2086
"$datm" run "$spec" data.dataset="$tmp/bh" data.protocol=heldout-docs data.obs_fraction=0.7 \
    $small -o "$tmp/b" --quiet > "$tmp/b.txt" 2>&1
check '[ -f "$tmp/b/result.h5" ]' "obs_fraction at its default under heldout-docs runs"
# shellcheck disable=SC2086
"$datm" run "$spec" data.dataset="$tmp/bh" data.protocol=token-split data.obs_fraction=0.5 \
    $small -o "$tmp/c" --quiet > "$tmp/c.txt" 2>&1
check '[ -f "$tmp/c/result.h5" ]' "obs_fraction under token-split runs"

out=$("$datm" check "$spec" train.epoch=3 2>&1)
check 'echo "$out" | grep -q "epochs"' "train.epoch: did you mean epochs ($(echo "$out" | head -1))"
out=$("$datm" check "$SRC/experiments/brown/whai.yaml" model.kl_weigth=[1] 2>&1)
check 'echo "$out" | grep -q "kl_weight"' "model.kl_weigth: did you mean kl_weight"
out=$("$datm" check "$spec" output.top_words=20 2>&1); rc=$?
check '[ $rc -ne 0 ] && echo "$out" | grep -q "output.top_words: 20: not used"' "output.top_words 20 is an error"
check '"$datm" check "$spec" output.top_words=10 > /dev/null 2>&1' "output.top_words at its default is accepted"
whai=$SRC/experiments/brown/whai.yaml
for kv in ghai:model.u_lo=0.2 ghai:model.u_hi=0.8 wai:model.eps0=2 wai:model.count_mode=expected \
          wai:model.eta=[0.1] wai:model.phi_floor=1e-6; do
    v=${kv%%:*} ov=${kv#*:}
    # shellcheck disable=SC2086
    out=$("$datm" run "$whai" model.variant=$v model.aug_gibbs_burn=0 model.aug_gibbs_collect=0           model.lambda_is_mean=false "~model.eta" "$ov" $small -o "$tmp/$v-${ov#model.}" --quiet 2>&1); rc=$?
    key=${ov%%=*}
    check '[ $rc -ne 0 ] && echo "$out" | grep -q "$key: .*not used by $v"' "$v: $ov is an error"
done
exit $fail
