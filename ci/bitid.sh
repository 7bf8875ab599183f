#!/usr/bin/env bash
# ci/bitid.sh: bit-identity check of every spec in experiments/ on short runs, for refactors
# that must not change what datm computes.
#
#   bash ci/bitid.sh record [FILE]   run every spec, write one "spec sha256" line per run
#   bash ci/bitid.sh check  [FILE]   run every spec again, compare with FILE (exit 1 on a change)
#   bash ci/bitid.sh hash           run every spec, print the lines only
# FILE defaults to build/bitid.golden (a golden file holds for one machine and one set of build
# flags: BLAS, compiler and -march change the last bits, so it is not committed).
# Environment: DATM_BIN (default build/datm), BITID_ONLY (a regular expression: run only the
# specs whose path matches), BITID_KEEP=1 (keep the run directories; their path is printed).
#
# Each spec runs with its own model settings (variant, layers, every model key) and a tiny
# budget: 200 training documents, 2 epochs of batch 50, curve points, a few evaluation draws.
# The data are swapped for the corpora ci/setup.sh builds: specs on held-out documents
# (20News) get the Brown corpus laid out by tests/brown_heldout.sh, the classification specs
# (sDATM-L/N, DATM+LR on digits, MNIST, IMDB, 20News-33k) get digits, the Brown specs keep
# Brown; on Brown the budget's 200 documents are of one genre, so its runs skip the classifier
# (evaluate.classify=false). The hash of a run is SHA-256 over h5dump's text (%.17g, exact for
# float and double) of every dataset under /model, /metrics, /curves and /classification of result.h5, wall
# times excluded (names ending in _s or _s_per_doc: train_s, test_s_per_doc, wall_s).
# About 1-2 minutes on one core for the ~45 specs.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
golden=${2:-$SRC/build/bitid.golden}
datm=${DATM_BIN:-$SRC/build/datm}
case $mode in record|check|hash) ;; *)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
[ -x "$datm" ] || { echo "bitid: $datm not built" >&2; exit 2; }
command -v h5dump > /dev/null || { echo "bitid: h5dump missing (hdf5-tools)" >&2; exit 2; }
for d in brown digits; do
    [ -f "$SRC/.cache/data/$d/train.docword.gz" ] ||
        { echo "bitid: .cache/data/$d missing (bash ci/setup.sh builds it)" >&2; exit 2; }
done
T=$(mktemp -d /tmp/datm_bitid_XXXXXX)
if [ "${BITID_KEEP:-0}" = 1 ]; then echo "bitid: runs kept in $T" >&2
else trap 'rm -rf "$T"' EXIT; fi
bash "$SRC/tests/brown_heldout.sh" "$T/brown_heldout" "$SRC/.cache/data/brown"

BUDGET="data.train_docs=200 data.eval_docs=60 train.epochs=2
        train.eval_every=2 train.eval_docs=30 train.eval_samples=2 train.checkpoint_every=0
        evaluate.samples=4 evaluate.time_samples=0 output.figures=false output.report=false"

# run_hash SPEC: prints "SPEC SHA256" (or "SPEC FAILED")
run_hash() {
    local spec=$1 name dataset extra="train.batch_size=50" variant out
    name=$(echo "${spec#experiments/}" | tr '/' '_' | sed 's/\.yaml$//')
    case $spec in
        experiments/20news/*|experiments/quick/*) dataset=$T/brown_heldout ;;
        experiments/brown/*)                      dataset=brown ;;
        *)                                        dataset=digits ;;
    esac
    # Brown's first 200 training documents are of one genre: no classifier to fit on them
    case $dataset in digits) ;; *) extra="$extra evaluate.classify=false" ;; esac
    variant=$("$datm" check "$SRC/$spec" data.dataset="$dataset" | awk '/^  variant:/ {print $2; exit}')
    case $variant in
        sdatm-*)    extra="$extra model.unsup_epochs=1" ;;
        dlda-gibbs) extra="" ;;   # its spec takes the whole corpus as one batch
    esac
    out=$T/$name
    local t0=$SECONDS
    # shellcheck disable=SC2086
    if ! nice "$datm" run "$SRC/$spec" data.dataset="$dataset" $BUDGET $extra -o "$out" \
            --threads 1 --quiet > "$out.log" 2>&1; then
        echo "$spec FAILED"; sed 's/^/  /' "$out.log" | tail -5 >&2; return 0
    fi
    local ds=()
    while read -r path kind; do
        [ "$kind" = Dataset ] || continue
        case $path in */*_s|*/*_s_per_doc) continue ;; esac
        ds+=(-d "$path")
    done < <(h5ls -r "$out/result.h5" | awk '$1 ~ /^\/(model|metrics|curves|classification)\// {print $1, $2}')
    echo "bitid: $spec $((SECONDS - t0)) s" >&2
    echo "$spec $(h5dump -m %.17g "${ds[@]}" "$out/result.h5" | grep -v '^HDF5 "' | sha256sum | cut -c1-64)"
}

now=$T/hashes.txt
: > "$now"
while IFS= read -r spec; do
    [ -n "${BITID_ONLY:-}" ] && ! [[ $spec =~ $BITID_ONLY ]] && continue
    run_hash "$spec" | tee -a "$now"
done < <(cd "$SRC" && find experiments -name '*.yaml' -not -path '*/base/*' | LC_ALL=C sort)

case $mode in
    hash) ;;
    record)
        if grep -q ' FAILED$' "$now"; then echo "bitid: a run failed; nothing recorded" >&2; exit 1; fi
        cp "$now" "$golden"; echo "bitid: recorded $(wc -l < "$golden") runs in $golden" ;;
    check)
        [ -f "$golden" ] || { echo "bitid: no golden file $golden (run: bash ci/bitid.sh record)" >&2; exit 2; }
        want=$T/want.txt
        if [ -n "${BITID_ONLY:-}" ]; then
            awk -v re="$BITID_ONLY" '$1 ~ re' "$golden" > "$want"
        else cp "$golden" "$want"; fi
        if diff -u "$want" "$now"; then echo "bitid: ok, $(wc -l < "$now") runs bit-identical to $golden"
        else echo "bitid: FAIL, runs differ from $golden (- recorded, + now)"; exit 1; fi ;;
esac
