#!/bin/bash
# pipelines/classification.sh: runs pipelines/classification.yaml (issue 7: paper Tables 3-4 and
# Fig. "classification") and writes
#   OUT/table.md               our test error rates (and test time per document) beside the
#                              paper's, with each run's structure, epochs and exact command, and
#                              the pipeline's targets marked met / missed (then OUT/notes.md,
#                              hand-written findings, when it exists)
#   OUT/error_depth_width.png  sDATM-N test error vs depth, one line per first-layer width
#                              (+ .svg, and the .dat/.gp to restyle it)
# usage: pipelines/classification.sh [PIPELINE.yaml] [--datm PATH] [--out DIR] [--only REGEX]
#                                    [--dry] [--report-only] [--threads N]
#   --only REGEX   run only the table rows / sweep points whose id matches (report lists all)
#   --dry          print the commands only
#   --report-only  run nothing; build the report from the runs that exist
#   --threads N    passed to every `datm run` (default: datm's, all cores; it caps OpenMP's
#                  and OpenBLAS's threads), and as OPENBLAS_NUM_THREADS
# A run with OUT/<id>/result.h5 (COMPLETED) is not run again, so the script can be stopped and
# restarted. Each run's wall time goes to OUT/<id>/wall_s. A row with seeds: "1 2" runs once
# per seed (OUT/<id>_seed<s>) and averages their prediction with `datm ensemble` into OUT/<id>. Needs gnuplot for the figure.
set -u
PIPE=pipelines/classification.yaml
DATM=${DATM_BIN:-build/datm}
OUT=""
ONLY=""
DRY=0
REPORT_ONLY=0
THREADS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --datm) DATM=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --dry) DRY=1; shift ;;
        --report-only) REPORT_ONLY=1; shift ;;
        --threads) THREADS=(--threads "$2"); export OPENBLAS_NUM_THREADS=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) PIPE=$1; shift ;;
    esac
done
[ -f "$PIPE" ] || { echo "classification: no pipeline file $PIPE" >&2; exit 2; }

# ---- reading the pipeline file (top-level scalars, "- {k: v, ...}" rows, sweep: block) ----
scalar() { awk -v k="$1" '$0 ~ "^" k ":" {sub("^" k ": *", ""); print; exit}' "$PIPE"; }
rows() { section runs; }
section() { awk -v sec="$1:" '/^[a-z_]+:/ {s = $1} s == sec && /^ *- *\{/ {print}' "$PIPE"; }
sweep_key() {
    awk -v k="$1" '/^[a-z_]+:/ {s = $1} s == "sweep:" && $1 == k ":" {sub("^ *" k ": *", ""); print; exit}' "$PIPE"
}
field() {   # value of key $2 in the flow mapping $1 (values may be quoted; no ", key: " inside)
    echo "$1" | sed 's/^ *- *{//; s/} *$//; s/, *\([a-z_][a-z_0-9]*\): /\n\1: /g' |
        awk -v k="$2" '{sub(/^ +/, "")} index($0, k ": ") == 1 {sub(k ": *", ""); gsub(/^"|"$/, ""); print; exit}'
}
[ -n "$OUT" ] || OUT=$(scalar out)
[ -n "$OUT" ] || OUT=results/classification
COMMON=$(scalar common)
mkdir -p "$OUT"

# ---- running ----
run_one() {   # id spec overrides...
    local id=$1 spec=$2
    shift 2
    if [ -n "$ONLY" ] && ! echo "$id" | grep -Eq "$ONLY"; then return 0; fi
    if [ -f "$OUT/$id/result.h5" ]; then echo "[$id] done already"; return 0; fi
    # shellcheck disable=SC2086
    echo "[$id] $DATM run $spec $COMMON $* -o $OUT/$id"
    [ "$DRY" = 1 ] && return 0
    local t0 t1
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    if "$DATM" run "$spec" $COMMON "$@" -o "$OUT/$id" "${THREADS[@]}" --quiet; then
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", b - a}' > "$OUT/$id/wall_s"
    else
        echo "[$id] FAILED (see $OUT/$id/run.log)" >&2
    fi
}

sweep_layers() {   # width depth -> "[w,w/2,...]"
    awk -v w="$1" -v d="$2" 'BEGIN {s = "["; for (l = 0; l < d; l++) {v = int(w / 2 ^ l); if (v < 1) v = 1; s = s (l ? "," : "") v} print s "]"}'
}

# A row with `seeds: "1 2 ..."` is an ensemble of independent chains: one run per seed
# (OUT/<id>_seed<s>, the row's overrides plus seed=<s>), then `datm ensemble` of them into
# OUT/<id> (p(y|x) averaged over the runs); its wall_s is the members' sum (none, with a
# warning, when a member has no wall_s: a run made outside the pipeline).
ensemble_one() {   # id seeds...
    local id=$1 members=() s w total=0
    shift
    if [ -n "$ONLY" ] && ! echo "$id" | grep -Eq "$ONLY"; then return 0; fi
    if [ -f "$OUT/$id/result.h5" ]; then echo "[$id] done already"; return 0; fi
    for s in "$@"; do members+=("$OUT/${id}_seed$s"); done
    echo "[$id] $DATM ensemble ${members[*]} -o $OUT/$id"
    [ "$DRY" = 1 ] && return 0
    if "$DATM" ensemble "${members[@]}" -o "$OUT/$id" "${THREADS[@]}" --quiet; then
        for s in "${members[@]}"; do
            if ! w=$(cat "$s/wall_s" 2> /dev/null) || [ -z "$w" ]; then
                echo "[$id] warning: $s/wall_s missing (a run made outside the pipeline?);" \
                     "the row's wall s is left n/a" >&2
                total=
                break
            fi
            total=$(awk -v a="$total" -v b="$w" 'BEGIN {printf "%.1f", a + b}')
        done
        if [ -n "$total" ]; then echo "$total" > "$OUT/$id/wall_s"; fi
    else
        echo "[$id] ensemble FAILED" >&2
    fi
}

if [ "$REPORT_ONLY" = 0 ]; then
    while IFS= read -r r; do
        id=$(field "$r" id)
        seeds=$(field "$r" seeds)
        if [ -n "$seeds" ]; then
            for s in $seeds; do
                # shellcheck disable=SC2046
                run_one "${id}_seed$s" "$(field "$r" spec)" $(field "$r" set) "seed=$s"
            done
            # shellcheck disable=SC2086
            ensemble_one "$id" $seeds
        else
            # shellcheck disable=SC2046
            run_one "$id" "$(field "$r" spec)" $(field "$r" set)
        fi
    done < <(rows)
    SPEC=$(sweep_key spec)
    for w in $(sweep_key widths); do
        for d in $(sweep_key depths); do
            # shellcheck disable=SC2046
            run_one "sweep_w${w}_d${d}" "$SPEC" $(sweep_key set) "model.layers=$(sweep_layers "$w" "$d")"
        done
    done
fi
[ "$DRY" = 1 ] && exit 0

# ---- the report ----
metric() {   # run dir, metric name -> value (empty when absent)
    [ -f "$1/result.h5" ] || return 0
    "$DATM" compare "$1" --format csv 2>/dev/null | awk -F, -v m="$2" '
        NR == 1 {for (i = 1; i <= NF; i++) if ($i == m) c = i; next}
        NR == 2 && c {print $c}'
}
pct() { [ -n "$1" ] && awk -v x="$1" 'BEGIN {printf "%.2f", 100 * x}' || echo "n/a"; }
resolved() {   # run dir, key (a.b) -> value in spec.resolved.yaml
    [ -f "$1/spec.resolved.yaml" ] || return 0
    awk -v k="$2" 'BEGIN {split(k, p, ".")} /^[a-z_]+:/ {s = $1; sub(":", "", s)}
        s == p[1] && $1 == p[2] ":" {sub("^ *" p[2] ": *", ""); print; exit}' "$1/spec.resolved.yaml"
}

MD="$OUT/table.md"
cmd_of() {   # row -> the command(s) that produced it
    local id seeds m=""
    id=$(field "$1" id)
    seeds=$(field "$1" seeds)
    if [ -z "$seeds" ]; then
        echo "$DATM run $(field "$1" spec) $COMMON $(field "$1" set) -o $OUT/$id ${THREADS[*]}" |
            sed 's/  */ /g'
        return
    fi
    for s in $seeds; do
        echo "$DATM run $(field "$1" spec) $COMMON $(field "$1" set) seed=$s -o $OUT/${id}_seed$s ${THREADS[*]}" |
            sed 's/  */ /g'
        m="$m $OUT/${id}_seed$s"
    done
    echo "$DATM ensemble$m -o $OUT/$id ${THREADS[*]}" | sed 's/  */ /g; s/ *$//'
}
err_of() { pct "$(metric "$OUT/$1" error_rate)"; }   # run id -> error % (n/a when not run)
{
    echo "# Classification (issue 7): test error rates, ours beside the paper's"
    echo
    echo "Written by \`pipelines/classification.sh\` from \`$PIPE\` (common overrides \`$COMMON\`)."
    echo "Error = test error of the model's own prediction (sDATM: p(y|x) averaged over the spec's"
    echo "evaluate.predict_samples joint draws of theta and W, 50 as in paper eq. prediction, or, where"
    echo "it is 0, p(y|x) at the posterior means of theta and W) or of the L2 logistic regression"
    echo "(penalty by 5-fold CV on the training set) on DATM's posterior-mean theta of all layers"
    echo "(DATM + LR). Test s/doc ="
    echo "wall time of the prediction pass per test document (/metrics/predict_s_per_doc;"
    echo "n/a for DATM + LR); wall s = the whole run (data loading, training, evaluation), on a shared"
    echo "2-core machine, so both are upper bounds. Paper: Table 3 (MNIST) and Table 4 (20News, IMDB);"
    echo "the paper's DATM row is unsupervised DATM features + a classifier, its MNIST baseline DLDA+SVM."
    echo "The paper trains 512-256-128-64 for 100 unsupervised + 300 supervised epochs on all training"
    echo "documents; the columns layers, epochs (unsup.) and train docs show where a run differs."
    echo "A row whose train docs say \"minus N% validation\" used early stopping (model.val_fraction:"
    echo "that share of the training documents, per class, never trains; the state of the epoch with"
    echo "the lowest validation error is kept; the test set is never looked at)."
    echo "An epochs entry with \"mean of n states m apart\" used the trajectory ensemble"
    echo "(model.predict_snapshots / snapshot_every; not in the paper): p(y|x) averaged over the states"
    echo "at the ends of n supervised epochs, m epochs apart, ending at the last."
    echo "An entry with \"averaged over k runs, seeds ...\" is \`datm ensemble\` of k runs of the row's"
    echo "spec that differ only in the seed (independent chains; not in the paper): p(y|x) averaged"
    echo "over the runs; its wall s is the sum of the runs'."
    echo
    echo "| data | model | layers | epochs (unsup.) | train docs | our error % | paper error % | macro-F1 | test s/doc | paper test s/doc | wall s |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    while IFS= read -r r; do
        id=$(field "$r" id)
        d="$OUT/$id"
        status="not run"
        [ -f "$d/result.h5" ] && status=ok
        [ -f "$d/result.h5.part" ] && [ ! -f "$d/result.h5" ] && status="unfinished"
        err=$(metric "$d" error_rate)
        f1=$(metric "$d" macro_f1)
        tt=$(metric "$d" predict_s_per_doc)
        ntr=$(resolved "$d" data.train_docs)
        [ "$ntr" = 0 ] && ntr=all
        vf=$(resolved "$d" model.val_fraction)
        if [ -n "$vf" ] && awk -v x="$vf" 'BEGIN {exit !(x > 0)}'; then
            # early stopping: the held-out share and the epoch whose state was kept
            be=$(h5dump -a /model/early_stopping/best_epoch "$d/result.h5" 2>/dev/null |
                 awk '/\(0\):/ {print $2; exit}')
            ntr="$ntr minus $(awk -v x="$vf" 'BEGIN {printf "%g", 100 * x}')% validation (best epoch ${be:-?})"
        fi
        un=$(resolved "$d" model.unsup_epochs)
        [ -n "$un" ] || un="all"
        [ -f "$d/spec.resolved.yaml" ] || un=""
        ens=""
        ps=$(resolved "$d" model.predict_snapshots)
        if [ -n "$ps" ] && [ "$ps" != 0 ]; then   # trajectory ensemble: how many states, how far apart
            ens=", mean of $ps states $(resolved "$d" model.snapshot_every) apart"
        fi
        if [ -f "$d/members.txt" ]; then   # datm ensemble: independent runs (seeds) averaged
            ens="$ens; p(y|x) averaged over $(wc -l < "$d/members.txt") runs, seeds $(field "$r" seeds | sed 's/ /, /g')"
        fi
        f1s=$( [ -n "$f1" ] && awk -v x="$f1" 'BEGIN {printf "%.4f", x}' || echo n/a)
        tts=$( [ -n "$tt" ] && awk -v x="$tt" 'BEGIN {printf "%.3g", x}' || echo n/a)
        echo "| $(field "$r" data) | $(field "$r" model) | $(resolved "$d" model.layers) |" \
             "$(resolved "$d" train.epochs) (${un})${ens} | ${ntr:-} |" \
             "$( [ "$status" = ok ] && pct "$err" || echo "$status") | $(field "$r" paper) |" \
             "$f1s | $tts | $(field "$r" paper_s) |" \
             "$(cat "$d/wall_s" 2>/dev/null || echo n/a) |"
    done < <(rows)
    echo
    echo "## Targets"
    echo
    echo "| target | measured | verdict |"
    echo "| --- | --- | --- |"
    while IFS= read -r t; do   # error of run id <= max %
        tid=$(field "$t" id)
        e=$(err_of "$tid")
        v=$(awk -v e="$e" -v m="$(field "$t" max)" 'BEGIN {print (e == "n/a") ? "not run" : (e + 0 <= m + 0) ? "met" : "missed"}')
        echo "| $(field "$t" what) error <= $(field "$t" max)% (\`$tid\`) | $( [ "$e" = n/a ] && echo n/a || echo "$e%") | $v |"
    done < <(section targets)
    while IFS= read -r t; do   # sDATM-N <= sDATM-L <= DATM + LR on one data set
        en=$(err_of "$(field "$t" n)"); el=$(err_of "$(field "$t" l)"); eu=$(err_of "$(field "$t" u)")
        v=$(awk -v n="$en" -v l="$el" -v u="$eu" 'BEGIN {
            if (n == "n/a" || l == "n/a" || u == "n/a") {print "not run"; exit}
            a = (n + 0 <= l + 0); b = (l + 0 <= u + 0)
            print (a && b) ? "met" : (a ? "missed (sDATM-L > DATM + LR)" : (b ? "missed (sDATM-N > sDATM-L)" : "missed (both)"))}')
        echo "| $(field "$t" what): sDATM-N <= sDATM-L <= DATM + LR | $en <= $el <= $eu % | $v |"
    done < <(section order)
    echo
    echo "## Commands"
    echo
    echo "Each row's run (its result.h5, spec.resolved.yaml and overrides.txt are in the run directory):"
    echo
    echo '```'
    while IFS= read -r r; do cmd_of "$r"; done < <(rows)
    echo '```'
    if [ -f "$OUT/notes.md" ]; then   # hand-written findings, kept across re-runs
        echo
        cat "$OUT/notes.md"
    fi
    echo
    echo "## sDATM-N error vs depth and width (digits)"
    echo
    echo "Spec \`$(sweep_key spec)\` with \`$(sweep_key set)\`; layer l has width w / 2^(l-1)."
    echo
    printf "| width \\\\ depth |"
    for dd in $(sweep_key depths); do printf " %s |" "$dd"; done
    echo
    printf "| --- |"
    for dd in $(sweep_key depths); do printf " --- |"; done
    echo
    for w in $(sweep_key widths); do
        printf "| %s |" "$w"
        for dd in $(sweep_key depths); do printf " %s |" "$(pct "$(metric "$OUT/sweep_w${w}_d${dd}" error_rate)")"; done
        echo
    done
    echo
    echo "Figure: \`error_depth_width.png\` (.svg; data \`error_depth_width.dat\`, gnuplot \`.gp\`)."
    echo "Point (w, L): \`$(echo "$DATM run $(sweep_key spec) $COMMON $(sweep_key set) model.layers=[w,w/2,..] -o $OUT/sweep_w<w>_d<L> ${THREADS[*]}" | sed 's/  */ /g')\`"
} > "$MD"
echo "classification: wrote $MD"

# ---- the figure ----
if [ -z "$(sweep_key widths)" ] || [ -z "$(sweep_key depths)" ]; then
    echo "classification: no sweep widths/depths in $PIPE; no figure"
    exit 0
fi
DAT="$OUT/error_depth_width.dat"
{
    printf "# depth"
    for w in $(sweep_key widths); do printf " w%s" "$w"; done
    echo "   (test error %, NaN = not run)"
    for dd in $(sweep_key depths); do
        printf "%s" "$dd"
        for w in $(sweep_key widths); do
            e=$(metric "$OUT/sweep_w${w}_d${dd}" error_rate)
            printf " %s" "$( [ -n "$e" ] && pct "$e" || echo NaN)"
        done
        echo
    done
} > "$DAT"
GP="$OUT/error_depth_width.gp"
{
    echo "# sDATM-N test error vs depth, one line per first-layer width (pipelines/classification.sh)"
    echo "set xlabel 'depth L (layers)'"
    echo "set ylabel 'test error (%)'"
    echo "set title 'sDATM-N on digits: error vs depth and width'"
    echo "set key top right"
    echo "set grid"
    echo "set xtics 1"
    printf "plot"
    i=2
    sep=""
    for w in $(sweep_key widths); do
        printf "%s '%s' using 1:%d with linespoints lw 2 title 'width %s'" "$sep" "$(basename "$DAT")" "$i" "$w"
        sep=","
        i=$((i + 1))
    done
    echo
} > "$GP"
if ! awk '!/^#/ {for (i = 2; i <= NF; i++) if ($i != "NaN") found = 1} END {exit !found}' "$DAT"; then
    echo "classification: no sweep point has been run; $GP left for later"
elif command -v gnuplot >/dev/null; then
    (cd "$OUT" && gnuplot -e "set terminal pngcairo size 800,560; set output 'error_depth_width.png'" "$(basename "$GP")" &&
        gnuplot -e "set terminal svg size 800,560; set output 'error_depth_width.svg'" "$(basename "$GP")") &&
        echo "classification: wrote $OUT/error_depth_width.png"
else
    echo "classification: gnuplot not found; $GP left for later" >&2
fi
