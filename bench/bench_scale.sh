#!/bin/bash
# bench/bench_scale.sh BUILD DATA_DIR [STEP...]: the corpus-size benchmark of docs/scaling.md.
# BUILD is a build directory (datm and bench/bench_stream), DATA_DIR a directory with room for
# the corpora (~0.8 GB at 1M documents, ~7.5 GB at 10M; not /tmp). The steps, in the order
# given (default all five, in this order):
#   gen1m          datm corpus synth --docs 1000000 --vocab 5000 --layers 128,64,32 --seed 1
#   stream1m       one epoch of WHAI 128-64-32 (B = 200) streamed from the 1M corpus's shards
#   memory1m       the same epoch with the corpus held in memory (the ratio's denominator)
#   gen10m         the same generator at --docs 10000000 --seed 3
#   stream10m      one epoch streamed from the 10M corpus
# Each runs on one thread (OMP_NUM_THREADS=1, synth --threads 1) under /usr/bin/time -v; a
# corpus already there is kept. Per step it prints the command, `uptime` before and after,
# bench_stream's figures (documents/s, batch assembly, its own peak RSS) and time's wall
# time, CPU and maximum resident set; the whole output goes to DATA_DIR/bench_scale.log too.
# A step's progress (bench_stream prints documents/s every 500 mini-batches) is in
# DATA_DIR/STEP.err while it runs. Not a CTest test: its figures depend on the machine.
set -u
build=$(cd "${1:?usage: bench_scale.sh BUILD DATA_DIR [STEP...]}" && pwd)
data=${2:?usage: bench_scale.sh BUILD DATA_DIR [STEP...]}
shift 2
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(gen1m stream1m memory1m gen10m stream10m)
mkdir -p "$data" && data=$(cd "$data" && pwd)
log=$data/bench_scale.log
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
say() { echo "$*" | tee -a "$log"; }
# timed STEP CMD...: runs CMD under /usr/bin/time -v, reports its figures
timed() {
    local step=$1
    shift
    say "== $step: $* (load $(uptime | sed 's/.*load average: //'))"
    /usr/bin/time -v "$@" > "$data/$step.out" 2> "$data/$step.err"
    local rc=$?
    cat "$data/$step.out" | tee -a "$log"
    say "exit $rc; $(grep -E 'Elapsed \(wall' "$data/$step.err" | sed 's/^\s*//');" \
        "user $(awk -F': ' '/User time/ {print $2}' "$data/$step.err") s," \
        "system $(awk -F': ' '/System time/ {print $2}' "$data/$step.err") s," \
        "max RSS $(awk -F': ' '/Maximum resident/ {printf "%.0f MB", $2 / 1024}' "$data/$step.err");" \
        "load after $(uptime | sed 's/.*load average: //')"
    return $rc
}
synth() {   # synth NAME DOCS SEED
    if [ -f "$data/$1/train.shards/index.bin" ]; then
        say "== $1: kept ($(ls "$data/$1/train.shards" | wc -l) files)"
        return 0
    fi
    timed "gen_$1" "$build/datm" corpus synth --out "$data/$1" --docs "$2" --vocab 5000 \
        --layers 128,64,32 --seed "$3" --threads 1 --quiet
}
say "bench_scale: $(date -u +%FT%TZ); $("$build/datm" --version | head -1); $(nproc --all) cores;" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for s in "${steps[@]}"; do
    case $s in
        gen1m)     synth syn1m 1000000 1 ;;
        gen10m)    synth syn10m 10000000 3 ;;
        stream1m)  timed "$s" "$build/bench/bench_stream" "$data/syn1m/train.shards" stream ;;
        memory1m)  timed "$s" "$build/bench/bench_stream" "$data/syn1m/train.shards" memory ;;
        stream10m) timed "$s" "$build/bench/bench_stream" "$data/syn10m/train.shards" stream ;;
        *) echo "unknown step $s" >&2; exit 2 ;;
    esac || exit 1
done
