#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_par_chunks.sh: WHAI with each mini-batch cut into fixed chunks
# (train.reduce_chunks, engine/par/par.h), the plan MPI ranks share, in one process:
# - 1 chunk gives /model, /metrics and /curves bit-identical to the one-process reduction
#   (reduce_chunks 0): the chunked iteration is the same algorithm;
# - 4 chunks: the same numbers for 1 and 2 threads (chunks run on threads), and differ from
#   1 chunk (the gradient is added in another order: float rounding);
# - a run killed mid-way and resumed from its checkpoint equals the uninterrupted one;
# - options the chunked iteration does not support, and more chunks than documents, are
#   refused naming the key;
# - dlda-tlasgr with 4 chunks is bit-identical to the one-process run. tests/mpi_ranks.sh checks the same plan over MPI ranks.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_fresh par_chunks
command -v h5dump > /dev/null || { echo "skipped: h5dump missing"; exit 77; }
. "$(dirname "$0")/par_compare.sh"
C="$PAR_C data.dataset=$brown"

run_ok "$PAR_SPEC" "$tmp/plain" $C threads=1
run_ok "$PAR_SPEC" "$tmp/c1" $C train.reduce_chunks=1 threads=1
check 'same "$tmp/plain" "$tmp/c1"' "1 chunk == the one-process reduction"
n=$(dump "$tmp/c1/result.h5" | grep -c "DATA {")
check '[ "$n" -gt 20 ]' "compared $n datasets"
run_ok "$PAR_SPEC" "$tmp/c4t1" $C train.reduce_chunks=4 threads=1
run_ok "$PAR_SPEC" "$tmp/c4t2" $C train.reduce_chunks=4 threads=2
check 'same "$tmp/c4t1" "$tmp/c4t2"' "4 chunks: 1 thread == 2 threads"
check '! same "$tmp/c1" "$tmp/c4t1"' "4 chunks differ from 1 (the sum's order)"

DATM_TEST_KILL_AT_ITER=12 "$datm" run "$PAR_SPEC" $C train.reduce_chunks=4 threads=2 \
    train.checkpoint_every=5 -o "$tmp/k" --quiet > /dev/null 2>&1
check '[ $? = 137 ] && [ -f "$tmp/k/checkpoints/ckpt-000000000010.h5" ]' "killed at 12 with a checkpoint at 10"
"$datm" resume "$tmp/k" --threads 1 --quiet > "$tmp/k.txt" 2>&1; rc=$?
check '[ $rc = 0 ] && same "$tmp/k" "$tmp/c4t1"' "resumed (1 thread) == uninterrupted: $(tail -1 "$tmp/k.txt")"

# DLDA-TLASGR: each document's local chain is its own, and the two float sums are added in
# one process's order: chunks change nothing
run_ok "$PAR_DLDA" "$tmp/d0" $PAR_DC data.dataset="$brown" threads=1
run_ok "$PAR_DLDA" "$tmp/d4" $PAR_DC data.dataset="$brown" threads=2 train.reduce_chunks=4
check 'same "$tmp/d0" "$tmp/d4"' "dlda-tlasgr: 4 chunks, 2 threads == the one-process run"

"$datm" run "$PAR_SPEC" $C train.reduce_chunks=4 model.aug_gibbs_burn=2 \
    model.aug_gibbs_collect=2 -o "$tmp/bad1" --quiet > "$tmp/bad1.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "aug_gibbs_collect > 0 is not supported with chunked" "$tmp/bad1.txt"' \
    "an unsupported option is refused: $(grep -o 'train.reduce_chunks 4: [^;]*' "$tmp/bad1.txt" | head -1)"
"$datm" run "$PAR_SPEC" $C train.reduce_chunks=300 -o "$tmp/bad2" --quiet > "$tmp/bad2.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "reduce_chunks 300 > batch_size 200" "$tmp/bad2.txt"' \
    "more chunks than documents per mini-batch: refused"
exit $fail
