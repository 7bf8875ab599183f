#!/bin/bash
# bench/bench_ranks.sh DATM CORPUS [ROUNDS]: MPI ranks against OpenMP threads on the same work
# (docs/scaling.md). DATM is an MPI build of datm (-DDATM_MPI=ON), CORPUS a sharded corpus
# (`datm corpus synth --out CORPUS --docs 20000 --vocab 5000 --layers 128,64,32`). One epoch
# of WHAI 128-64-32 (B = 200, streamed, no evaluation) in each configuration:
#   1x1 C=0   one process, one thread, the one-process reduction (train.reduce_chunks 0)
#   1x1       mpirun -n 1, one thread, C chunks a mini-batch
#   1x1core   1x1 with the whole process held to one core (taskset -c 0): a 1x1 run has
#             the machine's second core for its helper threads (the stream's read-ahead,
#             which reads, checks and splits every shard), so 1x1 alone uses more than
#             one core; this row is the one-core baseline
#   1x2       mpirun -n 1, two threads, C chunks
#   2x1       mpirun -n 2, one thread each, C chunks
#   2x1bound  2x1 with OpenMPI's own binding, each rank held to a core of its own (what a
#             user's `mpirun -n 2 datm run SPEC` does): no rank moves between the cores
#   2x(1x1)   two independent 1x1 runs at the same time (no MPI, no exchange): the machine's
#             own ceiling for two single-threaded processes (shared caches, memory bandwidth,
#             and on a virtual machine whatever the host runs beside it); its speed-up is
#             2 x 1x1 / the slower of the two, the most 2x1 could reach on this machine
# (mpirun --bind-to none, except in 2x1bound: OpenMPI binds a rank to one core when R <= 2,
# which would put the threads of 1 x 2, and the stream's read-ahead thread, on that core)
# and prints per run the training time (/metrics/train_s: the mini-batches only), the speed-up
# over 1x1 of the same round, from rank 0's run.log the bytes it sent other ranks per
# mini-batch, its wall and CPU time inside collectives (MPI polls while it waits), its
# process CPU time in training and that CPU time outside the collectives (the work itself:
# on a machine whose cores other processes hold, the steadier figure; "1x1 / this" is the
# speed-up it implies when every rank has a core of its own; 0 for threads, whose CPU times
# add up), and `uptime`'s load average
# before and after; the 8-chunk runs must give the same /model
# (checked). ROUNDS (default 1) repeats the four, interleaved, so that a change of the
# machine's load shows. BENCH_CHUNKS sets C (default 8), BENCH_BATCH the mini-batch size B
# (default 200), BENCH_STREAM=false reads the corpus into memory instead of streaming it (a
# streamed run has a read-ahead thread per process, which 1x1 runs on the idle core; a
# synthetic corpus, shards only, is then read whole in shard order). For the multi-rank rows
# rank 0's time in collectives by kind follows (engine/par/par.h); BENCH_ROWS (default all)
# names the rows to run besides 1x1, which every round runs as the base of its speed-ups
# (`BENCH_ROWS="2x1 2x(1x1)"`: shorter rounds, so more of them fit while the machine stays as
# it is). After the last round each row's train seconds and speed-up over its round's 1x1
# are summed up as min / median / max. DATM_PAR_SKEW=1 in the
# environment adds a barrier before each collective and reports the wait for the other rank
# to arrive apart from the exchange (the barrier itself slows the run a little). Not a CTest
# test: its figures depend on the machine.
set -u
datm=${1:?usage: bench_ranks.sh DATM CORPUS [ROUNDS]}
corpus=$(cd "${2:?usage: bench_ranks.sh DATM CORPUS [ROUNDS]}" && pwd)
rounds=${3:-1}
src=$(cd "$(dirname "$0")/.." && pwd)
"$datm" --version | grep -q "^MPI: yes" || { echo "$datm is not an MPI build" >&2; exit 2; }
tmp=$(mktemp -d /tmp/bench_ranks_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
args=(model.layers=[128,64,32] model.kl_weight=[0.1,0.01,0.001] model.aug_gibbs_burn=0
      model.aug_gibbs_collect=0 model.eval_globals=fixed train.epochs=1
      train.batch_size="${BENCH_BATCH:-200}"
      data.dataset="$corpus" data.stream="${BENCH_STREAM:-true}" data.eval_docs=50 train.eval_samples=1
      evaluate.perplexity=false evaluate.classify=false output.figures=false
      output.report=false output.topics=false)
load() { uptime | sed 's/.*load average: //'; }
train_s() { h5dump -d /metrics/train_s "$1/result.h5" | awk '/\(0\)/ {print $2}'; }
model() { h5dump -d /model/phi_1 -d /model/encoder/l1.W3 -m %.9g "$1/result.h5" | grep -v '^HDF5 "' |
          md5sum | cut -c1-12; }
chunks=${BENCH_CHUNKS:-8}
rows=${BENCH_ROWS:-1x1C0 1x1core 1x2 2x1 2x1bound 2x(1x1)}
for x in $rows; do
    case $x in 1x1C0|1x1core|1x2|2x1|2x1bound|"2x(1x1)") ;;
        *) echo "BENCH_ROWS: unknown row '$x' (rows: 1x1C0 1x1core 1x2 2x1 2x1bound 2x(1x1))" >&2
           exit 2 ;;
    esac
done
want() { [[ " $rows " == *" $1 "* ]]; }
# note NAME SECONDS SPEED-UP: one line of the closing summary
note() { echo "$1 $2 $3" >> "$tmp/summary"; }
# launch OUT RANKS THREADS CHUNKS: the benchmark's run under mpirun, its output in OUT.txt
# (held to the cores of the caller's pin, when set)
launch() {
    "${pin[@]}" mpirun --oversubscribe --allow-run-as-root --bind-to "${bind:-none}" -n "$2" "$datm" run \
        "$src/experiments/brown/whai.yaml" "${args[@]}" threads="$3" \
        train.reduce_chunks="$4" -o "$1" --quiet > "$1.txt" 2>&1
}
# run NAME RANKS THREADS CHUNKS [CPUS]
run() {
    local name=$1 n=$2 t=$3 c=$4 l0 out=$tmp/$1.$r pin=()
    [ -n "${5:-}" ] && pin=(taskset -c "$5")
    l0=$(load)
    if [ "$c" = 0 ]; then
        "$datm" run "$src/experiments/brown/whai.yaml" "${args[@]}" threads="$t" \
            train.reduce_chunks=0 -o "$out" --quiet > "$out.txt" 2>&1
    else
        launch "$out" "$n" "$t" "$c"
    fi || { echo "$name failed: $(tail -3 "$out.txt")"; exit 1; }
    local s b w
    s=$(train_s "$out")
    b=$(sed -n 's/.*: \([0-9]*\) bytes a mini-batch.*/\1/p' "$out/run.log")
    w=$(sed -n 's/.*; \([0-9.]*\) s in collectives (\([0-9.]*\) s of CPU), \([0-9.]*\) s process CPU.*/\1 \2 \3/p' "$out/run.log")
    local ws=- wc=- cpu=- comp=-
    if [ -n "$w" ]; then
        read -r ws wc cpu <<< "$w"
        comp=$(echo "$cpu - $wc" | bc -l)
    fi
    [ "$name" = 1x1 ] && { base=$s; cbase=$comp; }
    note "$name" "$s" "$(echo "$base / $s" | bc -l)"
    [ "$name" = 1x1core ] && core=$s
    [ "$name" = 2x1 ] && ranks=$s
    [ "$name" = 2x1bound ] && bound=$s
    printf "%-7s %d x %d  C=%d  train %6.2f s  speed-up %4.2f  bytes/step/rank %8s  rank 0: collectives %5s s wall %5s s CPU, CPU %5s s, outside collectives %5.2f s (1x1 / this %4.2f)  model %s  load %s -> %s\n" \
        "$name" "$n" "$t" "$c" "$s" "$(echo "$base / $s" | bc -l)" "${b:--}" "$ws" "$wc" "$cpu" \
        "${comp/-/0}" "$( [ "$comp" = - ] || [ "$t" != 1 ] && echo 0 || echo "$cbase / $comp" | bc -l)" \
        "$(model "$out")" "$l0" "$(load)"
    [ "$n" -gt 1 ] && sed -n 's/.*collectives by kind: /        rank 0 by kind: /p' "$out/run.log"
    return 0
}
echo "datm: $("$datm" --version | head -1); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "corpus: $corpus ($(ls "$corpus/train.shards" | wc -l) files)"
# pair: the ceiling row, two copies of the 1x1 run started together without mpirun
pair() {
    local l0 a=$tmp/pairA.$r b=$tmp/pairB.$r sa sb slow pin=()
    l0=$(load)
    for x in "$a" "$b"; do
        launch "$x" 1 1 "$chunks" &
    done
    wait || true
    for x in "$a" "$b"; do
        [ -f "$x/result.h5" ] || { echo "2x(1x1) failed: $(tail -3 "$x.txt")"; exit 1; }
    done
    sa=$(train_s "$a"); sb=$(train_s "$b")
    slow=$(echo "if ($sa > $sb) $sa else $sb" | bc -l)
    note "2x(1x1)" "$slow" "$(echo "2 * $base / $slow" | bc -l)"
    printf "%-7s 2 runs of 1 x 1 at once  train %6.2f s and %6.2f s  ceiling speed-up %4.2f (2 x 1x1 / %6.2f s)  model %s  load %s -> %s\n" \
        "2x(1x1)" "$sa" "$sb" "$(echo "2 * $base / $slow" | bc -l)" "$slow" "$(model "$a")" "$l0" "$(load)"
}
for r in $(seq 1 "$rounds"); do
    echo "round $r"
    base=0 ranks=0 core=0 bound=0
    run 1x1 1 1 "$chunks"
    want 1x1C0 && run 1x1C0 1 1 0
    want 1x1core && run 1x1core 1 1 "$chunks" 0
    want 1x2 && run 1x2 1 2 "$chunks"
    want 2x1 && run 2x1 2 1 "$chunks"
    want 2x1bound && bind=core run 2x1bound 2 1 "$chunks"
    want "2x(1x1)" && pair
    if want 2x1 || want 2x1bound; then
        sep=""
        printf "round %d:" "$r"
        if want 2x1; then
            printf " 2x1 over 1x1 %4.2f" "$(echo "$base / $ranks" | bc -l)"
            want 1x1core && printf ", over 1x1core (one core) %4.2f" "$(echo "$core / $ranks" | bc -l)"
            sep=";"
        fi
        want 2x1bound && printf "%s 2x1bound over 1x1 %4.2f" "$sep" "$(echo "$base / $bound" | bc -l)"
        echo
    fi
done
# the summary: per row, min / median / max over the rounds (the median of an even count is
# the mean of the middle two); for 2x(1x1) the slower run's seconds and the ceiling speed-up
echo "summary over $rounds round(s): train seconds and speed-up over the same round's 1x1, min / median / max"
stat() {   # the min, median and max of the numbers on standard input
    sort -g | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                     printf "%6.2f / %6.2f / %6.2f", v[1], m, v[NR]}'
}
for x in 1x1 $rows; do
    printf "%-7s train %s s   speed-up %s\n" "$x" \
        "$(awk -v n="$x" '$1 == n {print $2}' "$tmp/summary" | stat)" \
        "$(awk -v n="$x" '$1 == n {print $3}' "$tmp/summary" | stat)"
done
