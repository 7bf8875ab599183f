#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_cli_sweep.sh: `datm sweep` on real data (the quick unigram spec on the Brown
# corpus that ci/setup.sh builds, laid out by tests/brown_heldout.sh for the spec's
# held-out-documents protocol; 9 mini-batches of 500 per epoch).
# - cartesian product (2 x 2 jobs, range()), one directory per job, manifest statuses
# - a job spec error is reported before any job runs (exit 2, nothing run)
# - --on-error continue runs the other jobs after a failing one; stop halts at it
# - sweep resume: jobs killed mid-run (SIGKILL) are FAILED in the manifest; --resume skips
#   the COMPLETED ones, resumes the others from their checkpoints, and they end equal to
#   a plain run of the same overrides; a changed definition is refused
# Skips (77) without the binary, the Brown corpus or h5dump.
set -u
SRC=${DATM_SOURCE_DIR:-.}
. "$(dirname "$0")/testlib.sh"
datm_test_init sweep brown
DATM=$datm
T=$tmp
bash "$(dirname "$0")/brown_heldout.sh" "$T/bh" || exit 1
SPEC=$SRC/experiments/quick/unigram.yaml
FIX="data.dataset=$T/bh train.epochs=2 output.figures=false train.checkpoint_every=10"
ppl() { h5dump -m %.17g -d /metrics/perplexity "$1" | sed -n 's/^ *(0): //p'; }

# --- product and manifest ---
$DATM sweep "$SPEC" model.alpha=0.1,2.0 'seed=range(0,2)' $FIX -o "$T/s1" --quiet
check '[ $? -eq 0 ]' "sweep of 4 jobs exits 0"
n=$(ls -d "$T"/s1/0* | wc -l)
check '[ "$n" -eq 4 ]' "4 job directories ($n)"
check '[ -f "$T/s1/003_model.alpha=2.0,seed=1/result.h5" ]' "job dir named by its overrides"
check '[ "$(grep -c "status: COMPLETED" "$T/s1/sweep.yaml")" -eq 4 ]' "manifest: 4 COMPLETED"
p1=$(ppl "$T/s1/000_model.alpha=0.1,seed=0/result.h5"); p2=$(ppl "$T/s1/002_model.alpha=2.0,seed=0/result.h5")
check '[ -n "$p1" ] && [ "$p1" != "$p2" ]' "alpha changes the perplexity ($p1 vs $p2)"

# --- invalid job spec: refused before running anything ---
$DATM sweep "$SPEC" model.alpha=0.1,-1 $FIX -o "$T/s2" --quiet 2>"$T/err2"
check '[ $? -eq 2 ]' "invalid value in a sweep exits 2"
check 'grep -q "model.alpha" "$T/err2" && grep -q "out of range" "$T/err2"' "message names the key"
check '[ ! -e "$T/s2/000_model.alpha=0.1" ]' "no job ran"

# --- on-error: batch_size 20000 with drop_last leaves no mini-batch: a runtime failure ---
$DATM sweep "$SPEC" train.drop_last=true,false train.batch_size=20000 $FIX -o "$T/s3" --quiet 2>/dev/null
check '[ $? -eq 1 ]' "a failed job makes the sweep exit 1"
check 'grep -q "status: FAILED" "$T/s3/sweep.yaml" && grep -q "status: COMPLETED" "$T/s3/sweep.yaml"' "continue: failed and completed jobs"
$DATM sweep "$SPEC" train.drop_last=true,false train.batch_size=20000 $FIX -o "$T/s4" --on-error stop --quiet 2>/dev/null
check 'grep -q "status: PENDING" "$T/s4/sweep.yaml"' "stop: later jobs stay PENDING"

# --- resume: every job killed at iteration 15 (checkpoint at 10) ---
DATM_TEST_KILL_AT_ITER=15 $DATM sweep "$SPEC" model.alpha=0.1,2.0 $FIX -o "$T/s5" --quiet 2>/dev/null
check '[ $? -eq 1 ]' "killed jobs: sweep exits 1"
check '[ "$(grep -c "status: FAILED" "$T/s5/sweep.yaml")" -eq 2 ]' "killed jobs are FAILED in the manifest"
check '[ ! -e "$T/s5/000_model.alpha=0.1/result.h5" ]' "killed job has no result.h5"
# complete job 0 by hand so that --resume must skip it
$DATM resume "$T/s5/000_model.alpha=0.1" --quiet
out=$($DATM sweep "$SPEC" model.alpha=0.1,2.0 $FIX -o "$T/s5" --resume 2>&1)
check '[ $? -eq 0 ]' "sweep --resume completes"
check 'echo "$out" | grep -q "000_model.alpha=0.1 already COMPLETED, skipped"' "completed job skipped"
check 'echo "$out" | grep -q "resume $T/s5/001_model.alpha=2.0"' "killed job resumed from its checkpoint"
check '[ "$(grep -c "status: COMPLETED" "$T/s5/sweep.yaml")" -eq 2 ]' "manifest: all COMPLETED"
$DATM run "$SPEC" $FIX model.alpha=2.0 -o "$T/plain" --quiet
check '[ "$(ppl "$T/plain/result.h5")" = "$(ppl "$T/s5/001_model.alpha=2.0/result.h5")" ]' "resumed job equals a plain run"
$DATM sweep "$SPEC" model.alpha=0.1,3.0 $FIX -o "$T/s5" --resume --quiet 2>"$T/err5"
check '[ $? -eq 2 ] && grep -q "definition changed" "$T/err5"' "changed definition refused"
$DATM sweep "$SPEC" model.alpha=0.1,2.0 $FIX -o "$T/s5" --quiet 2>/dev/null
check '[ $? -eq 2 ]' "a second sweep into the same directory needs --resume"

[ $fail -eq 0 ] && echo "test_cli_sweep: all checks passed"
exit $fail
