#!/bin/bash
# ctest-labels: e2e;mpi  ctest-timeout: 1800
# tests/mpi_ranks.sh (CTest test_par_mpi, registered in a -DDATM_MPI=ON build only): WHAI
# trained data-parallel by `mpirun -n R datm run` (engine/par/par.h) on Brown:
# - 2 ranks give /model, /metrics and /curves bit-identical to 1 rank, with 1 or 2 threads
#   per rank (4 chunks per mini-batch); 3 ranks too (uneven: 1, 1, 2 chunks). Each rank
#   steps Adam on its range of the parameters, reads only its chunks' rows and evaluates its
#   share of the evaluation documents (fixed globals, and the evaluation chain of
#   eval_globals: chain) and of the documents whose features classification infers; a
#   streamed corpus too (and resumed), and expected counts (exchanged densely);
# - rank 0 alone writes: the run directory holds one result and one log;
# - dlda-tlasgr on 2 ranks is bit-identical to one process without chunks;
# - a 2-rank run killed mid-way and resumed by 1 rank equals the uninterrupted run, and a
#   1-rank run killed and resumed on 2 ranks too (Adam's moments, kept in slices, are
#   gathered whole into the checkpoint);
# - more ranks than chunks is refused with a message naming the key, and ends every rank;
#   a command other than run and resume is refused on several ranks before it writes.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_fresh par_mpi
command -v h5dump > /dev/null || { echo "skipped: h5dump missing"; exit 77; }
command -v mpirun > /dev/null || { echo "FAIL: mpirun missing (ci/setup.sh installs openmpi-bin)"; exit 1; }
"$datm" --version | grep -q "^MPI: yes" || { echo "FAIL: $datm is not an MPI build"; exit 1; }
. "$(dirname "$0")/par_compare.sh"
C="$PAR_C data.dataset=$brown train.reduce_chunks=4"
# --bind-to none: OpenMPI binds a rank to one core when R <= 2 (its threads would share it)
mpi() { local n=$1; shift; mpirun --oversubscribe --allow-run-as-root --bind-to none -n "$n" "$@"; }
# mpi_ok N DIR ARGS: mpirun -n N datm run SPEC ARGS -o DIR
mpi_ok() {
    local n=$1 out=$2
    shift 2
    mpi "$n" "$datm" run "$PAR_SPEC" $C "$@" -o "$out" --quiet > "$out.txt" 2>&1; rc=$?
    check "[ $rc = 0 ]" "mpirun -n $n datm run: exit $rc $(tail -3 "$out.txt")"
}

mpi_ok 1 "$tmp/r1" threads=1
mpi_ok 2 "$tmp/r2" threads=1
check 'same "$tmp/r1" "$tmp/r2"' "2 ranks x 1 thread == 1 rank"
n=$(dump "$tmp/r2/result.h5" | grep -c "DATA {")
check '[ "$n" -gt 20 ]' "compared $n datasets"
mpi_ok 2 "$tmp/r2t2" threads=2
check 'same "$tmp/r1" "$tmp/r2t2"' "2 ranks x 2 threads == 1 rank"
mpi_ok 3 "$tmp/r3" threads=1
check 'same "$tmp/r1" "$tmp/r3"' "3 ranks (uneven chunks) == 1 rank"
check '[ "$(ls "$tmp/r2" | tr "\n" " ")" = "$(ls "$tmp/r1" | tr "\n" " ")" ]' \
    "rank 0 alone writes: $(ls "$tmp/r2" | tr '\n' ' ')"
check 'grep -q "MPI: 2 ranks x 1 threads" "$tmp/r2/run.log"' "the log names the ranks"
check 'grep -q "evaluation documents split over 2 MPI ranks" "$tmp/r2/run.log"' \
    "the evaluation documents are split over the ranks"
# the evaluation chain (its TLASGR steps spread over the ranks, each rank's documents drawn)
mpi_ok 1 "$tmp/c1" threads=1 model.eval_globals=chain
mpi_ok 2 "$tmp/c2" threads=1 model.eval_globals=chain
check 'same "$tmp/c1" "$tmp/c2"' "eval_globals chain: 2 ranks == 1 rank"
# classification: each rank infers the features of its share of the training and test
# documents (the logistic regression then fits on all of them, as one process)
mpi_ok 1 "$tmp/e1" threads=1 evaluate.classify=true
mpi_ok 2 "$tmp/e2" threads=1 evaluate.classify=true
check 'same "$tmp/e1" "$tmp/e2" && h5dump -d /metrics/error_rate "$tmp/e2/result.h5" > /dev/null' \
    "with classification (/metrics/error_rate): 2 ranks == 1 rank"
# streamed: each rank copies only its chunks' rows of a mini-batch
cp -r "$brown" "$tmp/b3"
"$datm" corpus convert "$tmp/b3" --shard-docs 2000 --quiet > "$tmp/b3.txt" 2>&1
check '[ -f "$tmp/b3/train.shards/shard-000002.bin" ]' "convert: 3 shards $(tail -1 "$tmp/b3.txt")"
mpi_ok 1 "$tmp/s1" threads=1 data.dataset="$tmp/b3" data.stream=true
mpi_ok 2 "$tmp/s2" threads=1 data.dataset="$tmp/b3" data.stream=true
check 'same "$tmp/s1" "$tmp/s2"' "streamed (3 shards): 2 ranks == 1 rank"
# streamed, killed on 2 ranks and resumed on 2: the stream seeks into a later shard, whose
# rows each rank again splits only where they fall in its chunks
DATM_TEST_KILL_AT_ITER=12 mpi 2 -x DATM_TEST_KILL_AT_ITER "$datm" run "$PAR_SPEC" $C threads=1 \
    data.dataset="$tmp/b3" data.stream=true train.checkpoint_every=5 -o "$tmp/sk" --quiet \
    > "$tmp/sk0.txt" 2>&1
check '[ -f "$tmp/sk/checkpoints/ckpt-000000000010.h5" ] && [ ! -f "$tmp/sk/result.h5" ]' \
    "streamed, 2 ranks killed at 12 with a checkpoint at 10"
mpi 2 "$datm" resume "$tmp/sk" --quiet > "$tmp/sk.txt" 2>&1; rc=$?
check '[ $rc = 0 ] && same "$tmp/sk" "$tmp/s1"' \
    "streamed, 2 ranks killed at 12, resumed on 2 == uninterrupted: $(tail -1 "$tmp/sk.txt")"
# expected counts are not listed as they are made (datm_gbn_stats_track): their exchange
# takes the dense ways
mpi_ok 1 "$tmp/x1" threads=1 model.count_mode=expected
mpi_ok 2 "$tmp/x2" threads=1 model.count_mode=expected
check 'same "$tmp/x1" "$tmp/x2"' "expected counts (dense exchange): 2 ranks == 1 rank"

# DLDA-TLASGR: the documents' local chains spread over the ranks; equal to one process
# without chunks (reduce_chunks 0) at every rank count
"$datm" run "$PAR_DLDA" $PAR_DC data.dataset="$brown" threads=1 -o "$tmp/d0" --quiet > "$tmp/d0.txt" 2>&1
check '[ -f "$tmp/d0/result.h5" ]' "dlda-tlasgr, one process: $(tail -1 "$tmp/d0.txt")"
mpi 2 "$datm" run "$PAR_DLDA" $PAR_DC data.dataset="$brown" threads=1 train.reduce_chunks=4 \
    -o "$tmp/d2" --quiet > "$tmp/d2.txt" 2>&1
check 'same "$tmp/d0" "$tmp/d2"' "dlda-tlasgr: 2 ranks == one process: $(tail -1 "$tmp/d2.txt")"

DATM_TEST_KILL_AT_ITER=12 mpi 2 -x DATM_TEST_KILL_AT_ITER "$datm" run "$PAR_SPEC" $C threads=1 \
    train.checkpoint_every=5 -o "$tmp/k" --quiet > "$tmp/k0.txt" 2>&1
check '[ -f "$tmp/k/checkpoints/ckpt-000000000010.h5" ] && [ ! -f "$tmp/k/result.h5" ]' \
    "2 ranks killed at 12 with a checkpoint at 10"
mpi 1 "$datm" resume "$tmp/k" --quiet > "$tmp/k.txt" 2>&1; rc=$?
check '[ $rc = 0 ] && same "$tmp/k" "$tmp/r1"' "resumed by 1 rank == uninterrupted: $(tail -1 "$tmp/k.txt")"
DATM_TEST_KILL_AT_ITER=12 mpi 1 -x DATM_TEST_KILL_AT_ITER "$datm" run "$PAR_SPEC" $C threads=1 \
    train.checkpoint_every=5 -o "$tmp/k1" --quiet > "$tmp/k10.txt" 2>&1
mpi 2 "$datm" resume "$tmp/k1" --quiet > "$tmp/k1.txt" 2>&1; rc=$?
check '[ $rc = 0 ] && same "$tmp/k1" "$tmp/r1"' "1 rank killed, resumed by 2 ranks == uninterrupted: $(tail -1 "$tmp/k1.txt")"

timeout 120 mpirun --oversubscribe --allow-run-as-root -n 3 "$datm" run "$PAR_SPEC" $C \
    train.reduce_chunks=2 -o "$tmp/bad" --quiet > "$tmp/bad.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && [ $rc != 124 ] && grep -q "needs train.reduce_chunks >= 3" "$tmp/bad.txt"' \
    "3 ranks, 2 chunks: refused (exit $rc), no rank left waiting"
mpi 2 "$datm" corpus synth --out "$tmp/syn" --docs 10 --quiet > "$tmp/syn.txt" 2>&1; rc=$?
check '[ $rc != 0 ] && grep -q "only run and resume work on several MPI ranks" "$tmp/syn.txt" && [ ! -e "$tmp/syn" ]' \
    "another command on 2 ranks is refused before it writes (exit $rc)"
exit $fail
