#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_data_stream.sh: training from a sharded corpus (data.stream: true, data/stream.h)
# on the Brown corpus that ci/setup.sh builds, converted by `datm corpus convert`:
# - with train.shuffle off, a streamed run of 5 shards gives /model, /metrics and /curves
#   bit-identical to the in-memory run; with shuffle on, a corpus of one shard does too (its
#   order is the in-memory permutation)
# - with shuffle on and 5 shards (a different, defined order): the same numbers for 1 and 2
#   threads, and a run killed mid-stream and resumed from its checkpoint equals the
#   uninterrupted one; the checkpoint names the corpus (stream_corpus)
# - a damaged or truncated shard, a missing train.shards, a model that needs the training
#   documents in memory: clear errors naming the file or the key.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_fresh stream
command -v h5dump > /dev/null || { echo "skipped: h5dump missing"; exit 77; }
cp -r "$brown" "$tmp/b5"
cp -r "$brown" "$tmp/b1"
"$datm" corpus convert "$tmp/b5" --shard-docs 1000 --quiet
check '[ $? = 0 ] && [ -f "$tmp/b5/train.shards/shard-000004.bin" ]' "convert: 4458 documents in 5 shards"
"$datm" corpus convert "$tmp/b1" --shard-docs 100000 --quiet
check '[ $? = 0 ] && [ -f "$tmp/b1/train.shards/index.bin" ]' "convert: one shard"

SPEC=$SRC/experiments/brown/whai.yaml
C="model.layers=[32,16] model.kl_weight=[0.1,0.01] model.eta=[] train.epochs=2 train.eval_every=10 data.eval_docs=200 train.eval_samples=3
   evaluate.samples=3 evaluate.classify=false output.figures=false output.report=false
   output.topics=false"
. "$(dirname "$0")/par_compare.sh"   # same DIR1 DIR2: /model, /metrics, /curves equal

run_ok "$SPEC" "$tmp/m_noshuf" $C data.dataset="$tmp/b5" train.shuffle=false
run_ok "$SPEC" "$tmp/s_noshuf" $C data.dataset="$tmp/b5" train.shuffle=false data.stream=true
check 'same "$tmp/m_noshuf" "$tmp/s_noshuf"' "shuffle off: streamed (5 shards) == in memory"
n=$(dump "$tmp/s_noshuf/result.h5" | grep -c "DATA {")
check '[ "$n" -gt 30 ]' "compared $n datasets"

run_ok "$SPEC" "$tmp/m_shuf" $C data.dataset="$tmp/b1"
run_ok "$SPEC" "$tmp/s1_shuf" $C data.dataset="$tmp/b1" data.stream=true
check 'same "$tmp/m_shuf" "$tmp/s1_shuf"' "shuffle on: streamed (1 shard) == in memory"

run_ok "$SPEC" "$tmp/s5_t1" $C data.dataset="$tmp/b5" data.stream=true threads=1
run_ok "$SPEC" "$tmp/s5_t2" $C data.dataset="$tmp/b5" data.stream=true threads=2
check 'same "$tmp/s5_t1" "$tmp/s5_t2"' "shuffle on, 5 shards: 1 thread == 2 threads"
check '! same "$tmp/s5_t1" "$tmp/m_shuf"' "shuffle on, 5 shards: its own order (differs from memory)"

# kill at iteration 30 of 46 (checkpoints every 7: the newest at 28, mid-epoch 2, mid-shard)
DATM_TEST_KILL_AT_ITER=30 "$datm" run "$SPEC" $C data.dataset="$tmp/b5" data.stream=true \
    train.checkpoint_every=7 -o "$tmp/k" --quiet > /dev/null 2>&1
check '[ $? = 137 ] && [ -f "$tmp/k/checkpoints/ckpt-000000000028.h5" ]' "killed at 30 with a checkpoint at 28"
check 'h5dump -a /checkpoint/stream_corpus "$tmp/k/checkpoints/ckpt-000000000028.h5" | grep -q "[0-9a-f]\{16\}"' \
    "the checkpoint records the corpus's content hash"
"$datm" resume "$tmp/k" --quiet > "$tmp/k.txt" 2>&1; rc=$?
check '[ $rc = 0 ]' "resume: $(tail -2 "$tmp/k.txt")"
check 'same "$tmp/s5_t2" "$tmp/k"' "killed + resumed mid-stream == uninterrupted"

# a corpus from datm corpus synth trains streamed (the CLI path of the generator)
"$datm" corpus synth --out "$tmp/syn" --docs 3000 --vocab 400 --layers 16,8 --shard-docs 700 \
    --threads 2 --quiet
check '[ $? = 0 ] && [ -f "$tmp/syn/truth.h5" ] && [ -f "$tmp/syn/vocab.txt" ]' "corpus synth wrote shards, vocab and truth"
run_ok "$SPEC" "$tmp/syn_run" $C data.dataset="$tmp/syn" data.stream=true model.layers=[16,8]
p=$(h5_scalar "$tmp/syn_run/result.h5" /metrics/perplexity)
check 'awk -v p="$p" "BEGIN {exit !(p > 1 && p < 400)}"' "streamed WHAI on the synthetic corpus: perplexity $p < V = 400"

# errors
"$datm" run "$SPEC" $C data.dataset="$brown" data.stream=true -o "$tmp/e1" --quiet > "$tmp/e1.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "no train.shards" "$tmp/e1.txt"' "no train.shards: $(head -1 "$tmp/e1.txt")"
"$datm" run "$SPEC" $C data.dataset="$tmp/b5" data.stream=true model.eval_globals=chain -o "$tmp/e2" \
    --quiet > "$tmp/e2.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "eval_globals" "$tmp/e2.txt"' "eval_globals chain refused: $(head -1 "$tmp/e2.txt")"
f=$tmp/b5/train.shards/shard-000002.bin
printf '\x07' | dd of="$f" bs=1 seek=5000 conv=notrunc 2> /dev/null
"$datm" run "$SPEC" $C data.dataset="$tmp/b5" data.stream=true -o "$tmp/e3" --quiet > "$tmp/e3.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "shard-000002.bin: payload checksum mismatch" "$tmp/e3.txt"' \
    "damaged shard: $(grep -o 'shard-000002.bin[^;]*' "$tmp/e3.txt" | head -1)"
truncate -s 3000 "$f"
"$datm" run "$SPEC" $C data.dataset="$tmp/b5" data.stream=true -o "$tmp/e4" --quiet > "$tmp/e4.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "shard-000002.bin: truncated" "$tmp/e4.txt"' \
    "truncated shard: $(grep -o 'shard-000002.bin[^;]*' "$tmp/e4.txt" | head -1)"
printf 'X' | dd of="$tmp/b1/train.shards/index.bin" bs=1 seek=70 conv=notrunc 2> /dev/null
"$datm" run "$SPEC" $C data.dataset="$tmp/b1" data.stream=true -o "$tmp/e5" --quiet > "$tmp/e5.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "index.bin: checksum mismatch" "$tmp/e5.txt"' "damaged index: $(head -1 "$tmp/e5.txt")"
exit $fail
