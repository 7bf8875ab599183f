#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 240
# tests/test_cli_resume.sh: crash safety and resume of `datm run` on real data (the quick
# unigram spec on the Brown corpus that ci/setup.sh builds, laid out by tests/brown_heldout.sh
# for the spec's held-out-documents protocol; mini-batches of 200: 23 per epoch, 69 in all).
# - a run killed with SIGKILL mid-run leaves no result.h5 (only result.h5.part, status RUNNING)
#   and its checkpoints; `datm resume` finishes it with metrics and curves bit-identical to
#   the same run uninterrupted (every value compared at 17 significant digits)
# - SIGINT writes a checkpoint, marks the run INTERRUPTED (exit 1); resume completes it equal
# - resume of a COMPLETED run does nothing; kept checkpoints respect keep_checkpoints
# Skips (77) without the binary, the Brown corpus or h5dump.
set -u
SRC=${DATM_SOURCE_DIR:-.}
. "$(dirname "$0")/testlib.sh"
datm_test_init resume brown
DATM=$datm
T=$tmp
bash "$(dirname "$0")/brown_heldout.sh" "$T/bh" || exit 1
SPEC=$SRC/experiments/quick/unigram.yaml
COMMON="data.dataset=$T/bh train.batch_size=200 train.epochs=3 train.checkpoint_every=7
        train.eval_every=5 output.figures=false"

# wall-clock quantities differ between runs; drop those datasets before comparing
dumpcmp() { h5dump -m %.17g -d /metrics/perplexity -d /metrics/perplexity_observed \
                   -d /curves/iteration -d /curves/loss -d /curves/perplexity \
                   -d /curves/perplexity_observed -d /model/counts -d /model/phi_1 "$1" | grep -v '^HDF5'; }

$DATM run "$SPEC" $COMMON -o "$T/A" --quiet || { echo "FAIL: uninterrupted run"; exit 1; }
check '[ -f "$T/A/result.h5" ] && [ ! -e "$T/A/result.h5.part" ]' "A completed"
nd=$(dumpcmp "$T/A/result.h5" | grep -c "DATA {")
check '[ "$nd" -eq 8 ]' "all 8 compared datasets are readable ($nd)"

# --- SIGKILL at iteration 40 (checkpoints at 7, 14, ..., 35) ---
DATM_TEST_KILL_AT_ITER=40 $DATM run "$SPEC" $COMMON -o "$T/B" --quiet 2>/dev/null
rc=$?
check '[ $rc -eq 137 ]' "killed run exits by SIGKILL (rc $rc)"
check '[ ! -e "$T/B/result.h5" ]' "a killed run leaves no result.h5"
check '[ -f "$T/B/result.h5.part" ]' "a killed run leaves result.h5.part"
check 'h5dump -a /status "$T/B/result.h5.part" | grep -q "\"RUNNING\""' "killed run is RUNNING, not COMPLETED"
n=$(ls "$T/B/checkpoints" | grep -c '^ckpt-.*\.h5$')
check '[ "$n" -eq 2 ]' "keep_checkpoints=2 keeps two checkpoints (found $n)"
check 'ls "$T/B/checkpoints" | grep -q ckpt-000000000035.h5' "newest checkpoint is iteration 35"
$DATM resume "$T/B" 2>/dev/null || { echo "FAIL: resume"; fail=1; }
check '[ -f "$T/B/result.h5" ]' "resumed run completed"
check 'h5dump -a /status "$T/B/result.h5" | grep -q "\"COMPLETED\""' "resumed status COMPLETED"
check 'diff <(dumpcmp "$T/A/result.h5") <(dumpcmp "$T/B/result.h5") >/dev/null' "kill+resume equals uninterrupted (metrics, curves, model)"
check 'grep -q "resume: continuing after iteration 35" "$T/B/run.log"' "resume started from the checkpoint"

# --- SIGINT at iteration 10: checkpoint + INTERRUPTED ---
DATM_TEST_SIGINT_AT_ITER=10 $DATM run "$SPEC" $COMMON -o "$T/C" --quiet 2>/dev/null
rc=$?
check '[ $rc -eq 1 ]' "interrupted run exits 1 (rc $rc)"
check 'h5dump -a /status "$T/C/result.h5.part" | grep -q "\"INTERRUPTED\""' "status INTERRUPTED"
check '[ -f "$T/C/checkpoints/ckpt-000000000010.h5" ]' "SIGINT wrote a checkpoint at iteration 10"
$DATM resume "$T/C" --quiet || { echo "FAIL: resume after SIGINT"; fail=1; }
check 'diff <(dumpcmp "$T/A/result.h5") <(dumpcmp "$T/C/result.h5") >/dev/null' "SIGINT+resume equals uninterrupted"

# --- SIGINT during the final evaluation (draw 2 of 3): checkpoint of the trained state,
# INTERRUPTED; resume skips training and gives the uninterrupted numbers ---
EV="evaluate.samples=3"
$DATM run "$SPEC" $COMMON $EV -o "$T/E0" --quiet || { echo "FAIL: run with 3 draws"; fail=1; }
DATM_TEST_SIGINT_AT_DRAW=2 $DATM run "$SPEC" $COMMON $EV -o "$T/E" --quiet 2>"$T/E.err"
rc=$?
check '[ $rc -eq 1 ]' "run interrupted in the evaluation exits 1 (rc $rc)"
check 'grep -q "interrupted at draw 2 of 3" "$T/E.err"' "the message names the draw"
check 'h5dump -a /status "$T/E/result.h5.part" | grep -q "\"INTERRUPTED\""' "status INTERRUPTED"
check '[ ! -e "$T/E/result.h5" ]' "no result.h5 from an interrupted evaluation"
check '[ -f "$T/E/checkpoints/ckpt-000000000069.h5" ]' "the trained state (iteration 69 of 69) is checkpointed"
$DATM resume "$T/E" --quiet || { echo "FAIL: resume after SIGINT in the evaluation"; fail=1; }
check 'diff <(dumpcmp "$T/E0/result.h5") <(dumpcmp "$T/E/result.h5") >/dev/null' "evaluation SIGINT+resume equals uninterrupted"

# --- resume of a completed run is a no-op ---
out=$($DATM resume "$T/A" 2>&1)
check 'echo "$out" | grep -q "already COMPLETED"' "resume of COMPLETED run does nothing"
# --- resume of a directory without a run ---
$DATM resume "$T/nothing" --quiet 2>/dev/null
check '[ $? -ne 0 ]' "resume of a missing run fails"

[ $fail -eq 0 ] && echo "test_cli_resume: all checks passed"
exit $fail
