#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 600
# tests/test_pipeline_cache.sh: `datm pipeline run|status` on the Brown corpus (ci/setup.sh
# builds it into .cache/data/brown): the run cache and the scheduler.
# - a second invocation starts nothing (every run reused)
# - a comment change in a spec changes no key; a setting change reruns that run only; a
#   changed data file reruns every run that reads it
# - -j 1 and -j 2 give identical /metrics for every run (timings aside)
# - a pipeline killed with SIGKILL mid-way and rerun ends with the same /metrics as an
#   uninterrupted one
# - two pipeline processes on one cache: a run the other process started (or finished) after
#   this one read its states is waited for (or taken), not failed
# - a run whose lock another process is looking at (a pipeline reading its states takes the
#   lock shared for an instant) when the run takes it waits the look out: held here for
#   seconds from before the pipeline resumes the run; a run used to fail at once there, and
#   the pipeline reported it FAILED
# - a run whose result.h5.part another process is reading (HDF5 locks a file it reads shared;
#   a pipeline waiting for the run read its status every 100 ms) waits the read out: held
#   here for 3 s from the moment the file appears; the run used to fail on its next open
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_fresh pipecache
command -v h5dump > /dev/null || { echo "FAIL: h5dump missing (ci/setup.sh installs hdf5-tools)"; exit 1; }
cp -r "$brown" "$tmp/brown"

# A small WHAI on a copy of Brown (DATM_TEST_QUICK: its first 1,000 training documents and
# 200 evaluation ones); the pipeline: two widths and a claim.
cat > "$tmp/spec.yaml" <<SPEC
# a comment
defaults: [$SRC/experiments/brown/whai.yaml]
data: {dataset: $tmp/brown$(datm_test_quick && echo ', train_docs: 1000, eval_docs: 200')}
model: {layers: [16], kl_weight: [0.1], eta: []}
train: {epochs: 2, eval_every: 0, checkpoint_every: 10}
evaluate: {samples: 5, classify: false}
output: {figures: false, topics: false}
SPEC
cat > "$tmp/p.yaml" <<PIPE
name: cachetest
runs:
  - {id: w16, spec: spec.yaml}
  - {id: w8, spec: spec.yaml, overrides: ["model.layers=[8]"]}
PIPE
metrics() {   # the /metrics of run ID in cache C, without the timings
  local dir
  dir=$(readlink -f "$tmp/out_$2/runs/$1")
  h5dump -g /metrics "$dir/result.h5" | awk '/DATASET/{keep = $0 !~ /_s"|_s_per_doc"/} keep'
}
run() {  # run CACHE [args...]: the pipeline into cache C with its own out dir
  local c=$1; shift
  "$datm" pipeline run "$tmp/p.yaml" --cache "$tmp/c_$c" --quiet "$@" > "$tmp/run_$c.log" 2>&1
}
status() { "$datm" pipeline status "$tmp/p.yaml" --cache "$tmp/c_$1" | awk '!/^#/{print $1, $2}'; }
sed -i "s|^name: cachetest|name: cachetest\nout: out_a|" "$tmp/p.yaml"

run a -j 1; check '[ $? = 0 ]' "first run completes"
check '[ "$(status a | tr "\n" " ")" = "done w16 done w8 " ]' "both runs done"
run a -j 1
check '! grep -q "started" "$tmp/run_a.log"' "a second invocation starts nothing"
t0=$(date +%s%N); run a -j 2; t1=$(date +%s%N)
echo "all-cached invocation: $(( (t1 - t0) / 1000000 )) ms"

sed -i 's/^# a comment/# another comment, reworded/' "$tmp/spec.yaml"
check '[ "$(status a | tr "\n" " ")" = "done w16 done w8 " ]' "a comment change keeps every key"

sed -i 's/kl_weight: \[0.1\]/kl_weight: [0.2]/' "$tmp/p.yaml" "$tmp/spec.yaml"
check '[ "$(status a | tr "\n" " ")" = "pending w16 pending w8 " ]' "a setting of the shared spec changes both keys"
sed -i 's/kl_weight: \[0.2\]/kl_weight: [0.1]/' "$tmp/spec.yaml"
sed -i 's/overrides: \["model.layers=\[8\]"\]/overrides: ["model.layers=[8]", "model.lr=0.002"]/' "$tmp/p.yaml"
check '[ "$(status a | tr "\n" " ")" = "done w16 pending w8 " ]' "a run's own setting changes only its key"
sed -i 's/, "model.lr=0.002"//' "$tmp/p.yaml"
check '[ "$(status a | tr "\n" " ")" = "done w16 done w8 " ]' "and back: both cached again"

touch "$tmp/brown/train.docword.gz"
check '[ "$(status a | tr "\n" " ")" = "done w16 done w8 " ]' "a touched data file with the same bytes keeps the keys"
cp "$tmp/brown/train.labels" "$tmp/labels.bak"
echo >> "$tmp/brown/train.labels"
check '[ "$(status a | tr "\n" " ")" = "pending w16 pending w8 " ]' "a changed data file changes the keys"
cp "$tmp/labels.bak" "$tmp/brown/train.labels"

# -j 1 and -j 2 agree
sed -i 's/^out: out_a/out: out_b/' "$tmp/p.yaml"
run b -j 2; check '[ $? = 0 ]' "-j 2 run completes"
for id in w16 w8; do
  check '[ "$(metrics $id a)" = "$(metrics $id b)" ] && [ -n "$(metrics $id a)" ]' "$id: -j 1 and -j 2 give identical /metrics"
done

# kill -9 mid-way, rerun: the same /metrics as the uninterrupted run
sed -i 's/^out: out_b/out: out_k/' "$tmp/p.yaml"
sed -i 's/epochs: 2,/epochs: 6,/' "$tmp/spec.yaml"
"$datm" pipeline run "$tmp/p.yaml" --cache "$tmp/c_k" -j 2 --quiet > "$tmp/run_k1.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do   # until a checkpoint exists
  ls "$tmp"/c_k/*/checkpoints/ckpt-*.h5 > /dev/null 2>&1 && break
  sleep 0.05
done
kill -9 $pid; wait $pid 2>/dev/null
sleep 1
check 'status k | grep -qv "^done"' "killed mid-way: some run is not done"
run k -j 2; check '[ $? = 0 ]' "the rerun completes"
check 'grep -q "resume started" "$tmp/run_k.log" || grep -q "run started" "$tmp/run_k.log"' "the rerun continued the runs"
sed -i 's/^out: out_k/out: out_u/' "$tmp/p.yaml"
run u -j 2; check '[ $? = 0 ]' "uninterrupted run completes"
for id in w16 w8; do
  check '[ "$(metrics $id k)" = "$(metrics $id u)" ] && [ -n "$(metrics $id u)" ]' "$id: killed and rerun equals uninterrupted"
done
# two processes on one cache: the first reads every state, runs w16, then reaches w8, which
# the second process has started meanwhile; both end with every run COMPLETED
sed -i 's/^out: out_u/out: out_r/' "$tmp/p.yaml"
"$datm" pipeline run "$tmp/p.yaml" --cache "$tmp/c_r" -j 1 > "$tmp/run_r1.log" 2>&1 &
pid=$!
for _ in $(seq 1 400); do   # until the first process runs w16
  grep -q "w16: run started" "$tmp/run_r1.log" 2> /dev/null && break
  sleep 0.05
done
"$datm" pipeline run "$tmp/p.yaml" --cache "$tmp/c_r" -j 1 --only '^w8$' > "$tmp/run_r2.log" 2>&1
r2=$?
wait $pid; r1=$?
check '[ $r1 = 0 ] && [ $r2 = 0 ]' "two processes on one cache both complete (exit $r1, $r2)"
check 'cat "$tmp/run_r1.log" "$tmp/run_r2.log" | grep -q "w8: run by \(another \)\?process\|w8: completed by another process"' \
  "one process waits for (or takes) the run the other one started"
check '! grep -q FAILED "$tmp/run_r1.log" "$tmp/run_r2.log"' "no run FAILED"
check '[ "$(metrics w8 r)" = "$(metrics w8 u)" ]' "w8: the same /metrics"

# a look at the lock when the pipeline's resume takes it: w8 interrupted (kill -9 of its
# pipeline after a checkpoint: the run stops at a checkpoint), then resumed by a rerun while
# another process holds the lock shared from before the rerun until 5 s after it started the
# resume (less than the 10 s a writer waits out a holder that names no live process)
sed -i 's/^out: out_r/out: out_l/' "$tmp/p.yaml"
"$datm" pipeline run "$tmp/p.yaml" --cache "$tmp/c_l" -j 1 --only '^w8$' --quiet > "$tmp/run_l1.log" 2>&1 &
pid=$!
for _ in $(seq 1 400); do
  ls "$tmp"/c_l/*/checkpoints/ckpt-*.h5 > /dev/null 2>&1 && break
  sleep 0.05
done
kill -9 $pid; wait $pid 2>/dev/null
d=$(dirname "$(ls -d "$tmp"/c_l/*/checkpoints | head -n 1)")
for _ in $(seq 1 200); do [ -e "$d/run.lock" ] || break; sleep 0.1; done   # stopped
check '[ "$(status l | grep w8 | cut -d" " -f1)" = resumable ]' "killed after a checkpoint: w8 resumable"
log="$tmp/out_l/logs/w8.log"
flock -s "$d/run.lock" sh -c "for i in \$(seq 1 1200); do grep -qs '^\\$ .* resume ' '$log' && break; sleep 0.05; done; sleep 5" &
look=$!
until ! flock -n -x "$d/run.lock" true; do sleep 0.05; done   # the look is held
"$datm" pipeline run "$tmp/p.yaml" --cache "$tmp/c_l" -j 1 --only '^w8$' > "$tmp/run_l.log" 2>&1
check '[ $? = 0 ] && grep -q "w8: resume started" "$tmp/run_l.log" && ! grep -q FAILED "$tmp/run_l.log"' \
  "a resume that meets a look at its lock waits it out and completes"
check '! grep -q "being written" "$log"' "the resume did not fail on the look"
wait $look

"$datm" run "$tmp/spec.yaml" -o "$tmp/h5look" --quiet --threads 1 > "$tmp/h5look.log" 2>&1 &
pid=$!
for _ in $(seq 1 4000); do [ -e "$tmp/h5look/result.h5.part" ] && break; sleep 0.005; done
flock -s "$tmp/h5look/result.h5.part" sleep 3
wait $pid
check '[ $? = 0 ] && ! grep -q "Resource temporarily unavailable" "$tmp/h5look.log"' \
  "a run whose result another process is reading waits the read out and completes"
exit $fail
