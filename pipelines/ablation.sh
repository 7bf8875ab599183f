#!/bin/bash
# pipelines/ablation.sh: runs pipelines/ablation.yaml (the ablation of issue 6) and writes the
# comparison: OUT/ablation.md (Table 1 and 2 figures of the paper beside ours, and the
# paper's qualitative findings checked one by one with the numbers) and one perplexity-vs-
# time figure per depth (OUT/ppl_<depth>_time.png and friends, by `datm compare --plot`).
#
# usage: pipelines/ablation.sh [PIPELINE.yaml] [--datm PATH] [--out DIR] [--dry] [--report-only]
#   --dry          print the commands only
#   --report-only  do not run anything; build the report from the runs that exist
# A run whose OUT/<id>/result.h5 exists (COMPLETED) is not run again, so the script can be
# stopped and restarted; a run that failed is retried. Each run's wall time (training and
# evaluation) goes to OUT/<id>/wall_s. Needs h5dump (hdf5-tools) and awk.
set -u
PIPE=pipelines/ablation.yaml
DATM=${DATM_BIN:-build/datm}
OUT=""
DRY=0
REPORT_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
        --datm) DATM=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --dry) DRY=1; shift ;;
        --report-only) REPORT_ONLY=1; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) PIPE=$1; shift ;;
    esac
done
[ -f "$PIPE" ] || { echo "ablation: no pipeline file $PIPE" >&2; exit 2; }
command -v h5dump >/dev/null || { echo "ablation: h5dump (hdf5-tools) is needed" >&2; exit 2; }

# ---- the pipeline file: top-level scalars and one-line flow mappings under runs/layerwise ----
top() { awk -v k="$1" '$0 ~ "^" k ":" {sub("^" k ": *", ""); print; exit}' "$PIPE"; }
items() {   # the "- {...}" lines of section $1
    awk -v s="$1" '/^[a-z_]+:/ {cur = $1; sub(":", "", cur)} cur == s && /^ *- *\{/ {print}' "$PIPE"
}
field() {   # field KEY of a "{k: v, k: v}" line (a value may hold commas, not ", key: ")
    echo "$1" | sed 's/^ *- *{//; s/} *$//; s/, *\([a-z_][a-z_0-9]*\): /\n\1: /g' |
        awk -v k="$2" '{sub(/^ +/, "")} index($0, k ": ") == 1 {sub(k ": *", ""); print; exit}'
}
[ -n "$OUT" ] || OUT=$(top out)
COMMON=$(top common)
mkdir -p "$OUT"

scalar() { h5dump -m %.17g -d "$2" "$1" 2>/dev/null | awk '/\(0\):/ {print $2; exit}'; }
array() {   # one value per line
    h5dump -m %.17g -d "$2" "$1" 2>/dev/null |
        awk '/DATA \{/ {on = 1; next} on && /\}/ {exit} on {sub(/^ *\([0-9]+\): */, ""); n = split($0, a, ","); for (i = 1; i <= n; i++) if (a[i] ~ /[0-9]/) {gsub(/ /, "", a[i]); print a[i]}}'
}
done_run() { [ -f "$OUT/$1/result.h5" ] && h5dump -a /status "$OUT/$1/result.h5" 2>/dev/null | grep -q COMPLETED; }

run_one() {
    local line=$1 id spec set
    id=$(field "$line" id); spec=$(field "$line" spec); set=$(field "$line" set)
    if done_run "$id"; then echo "ablation: $id already COMPLETED"; return 0; fi
    # shellcheck disable=SC2086
    local cmd="$DATM run $spec $COMMON $set -o $OUT/$id --quiet"
    echo "ablation: $cmd"
    [ $DRY -eq 1 ] && return 0
    rm -rf "${OUT:?}/$id"
    local t0 t1
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    $DATM run "$spec" $COMMON $set -o "$OUT/$id" --quiet || { echo "ablation: $id FAILED" >&2; return 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", b - a}' > "$OUT/$id/wall_s"
}

if [ $REPORT_ONLY -eq 0 ]; then
    while read -r line; do run_one "$line"; done < <(items runs; items layerwise)
    [ $DRY -eq 1 ] && exit 0
fi

# ---- table rows: id model group paper ppl ppl_obs train_s test_s wall_s ----
TSV="$OUT/ablation.tsv"
: > "$TSV"
while read -r line; do
    id=$(field "$line" id)
    f="$OUT/$id/result.h5"
    done_run "$id" || { echo "ablation: $id has no completed result; left out" >&2; continue; }
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$id" "$(field "$line" model)" \
        "$(field "$line" group)" "$(field "$line" paper)" "$(scalar "$f" /metrics/perplexity)" \
        "$(scalar "$f" /metrics/perplexity_observed)" "$(scalar "$f" /metrics/train_s)" \
        "$(scalar "$f" /metrics/test_s_per_doc)" "$(cat "$OUT/$id/wall_s" 2>/dev/null || echo -)" \
        "$(field "$line" paper_time)" >> "$TSV"
done < <(items runs)
LTSV="$OUT/layerwise.tsv"
: > "$LTSV"
while read -r line; do
    id=$(field "$line" id)
    f="$OUT/$id/result.h5"
    done_run "$id" || { echo "ablation: $id has no completed result; left out" >&2; continue; }
    K=$(array "$f" /model/inferred_layers | awk 'NR > 1' | paste -sd- -)
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$id" "$(field "$line" k1max)" \
        "$(field "$line" paper_structure)" "$K" "$(field "$line" paper)" \
        "$(scalar "$f" /metrics/perplexity)" "$(scalar "$f" /metrics/perplexity_observed)" \
        "$(scalar "$f" /metrics/train_s)" >> "$LTSV"
done < <(items layerwise)

# ---- GHAI vs WHAI at equal wall time: mean over GHAI's curve points of ppl_ghai(t) -
#      ppl_whai(t), WHAI's curve linearly interpolated (clamped at its ends) ----
curve_gap() {
    local a="$OUT/$1/result.h5" b="$OUT/$2/result.h5"
    [ -f "$a" ] && [ -f "$b" ] || { echo "-"; return; }
    paste <(array "$a" /curves/wall_s) <(array "$a" /curves/perplexity) > "$OUT/.ca"
    paste <(array "$b" /curves/wall_s) <(array "$b" /curves/perplexity) > "$OUT/.cb"
    awk 'NR == FNR {t[n] = $1; p[n] = $2; n++; next}
         {x = $1; if (x <= t[0]) q = p[0]; else if (x >= t[n-1]) q = p[n-1];
          else for (i = 1; i < n; i++) if (x <= t[i]) {q = p[i-1] + (p[i] - p[i-1]) * (x - t[i-1]) / (t[i] - t[i-1]); break}
          s += $2 - q; m++}
         END {if (m) printf "%.1f\n", s / m; else print "-"}' "$OUT/.cb" "$OUT/.ca"
    rm -f "$OUT/.ca" "$OUT/.cb"
}

# ---- figures: one perplexity-vs-time plot per depth ----
for g in 128 128-64 128-64-32; do
    runs=()
    for m in whai wai iwhai ghai; do done_run "${m}_$g" && runs+=("$OUT/${m}_$g"); done
    if [ ${#runs[@]} -ge 2 ] && ! "$DATM" compare "${runs[@]}" --plot "$OUT/ppl_$g" > "$OUT/.compare.log" 2>&1; then
        echo "ablation: warning: the figures of depth $g were not made:" >&2
        sed 's/^/  /' "$OUT/.compare.log" >&2
    fi
done
rm -f "$OUT/.compare.log"

# ---- the report ----
MD="$OUT/ablation.md"
{
    echo "# Ablation of the WHAI variants on 20news_2000 (heldout-docs)"
    echo
    echo "Made by \`pipelines/ablation.sh $PIPE\` at git $(git rev-parse --short HEAD 2>/dev/null || echo '?');"
    echo "common overrides: \`$COMMON\`. \"ours\" = per-heldout-word perplexity on the held-out"
    echo "part of the test documents (\`perplexity\`); \"obs.\" = the same on their observed part"
    echo "(\`perplexity_observed\`; DESIGN section 6: the paper's figures sit near this one)."
    echo "train s = training wall time (\`/metrics/train_s\`), run s = the whole run (training +"
    echo "curve points + final evaluation), test s/doc = evaluation time per document."
    echo
    echo "## Table 1 (20News): fixed structures"
    echo
    echo "| model | size | paper | ours | obs. | train s | run s | test s/doc (paper) |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{printf "| %s | %s | %s | %.1f | %.1f | %.1f | %s | %.4g (%s) |\n", $2, $3, $4, $5, $6, $7, $9, $8, $10}' "$TSV"
    echo
    echo "## Table 2 (20News): layer-wise training, L = 3, u = 0.01"
    echo
    echo "| K1max | paper structure | ours | paper | ours | obs. | train s |"
    echo "|---|---|---|---|---|---|---|"
    awk -F'\t' '{printf "| %s | %s | %s | %s | %.1f | %.1f | %.1f |\n", $2, $3, $4, $5, $6, $7, $8}' "$LTSV"
    echo
    echo "## The paper's findings, checked"
    echo
    ppl() { awk -F'\t' -v id="$1" -v c="${2:-5}" '$1 == id {print $c}' "$TSV"; }
    # 1. whai <= wai at every depth
    verdict=reproduced; detail=""; nm=0
    for g in 128 128-64 128-64-32; do
        a=$(ppl whai_$g); b=$(ppl wai_$g)
        [ -n "$a" ] && [ -n "$b" ] || continue
        nm=$((nm + 1))
        detail="$detail $g: whai $(printf %.1f "$a") vs wai $(printf %.1f "$b");"
        awk -v a="$a" -v b="$b" 'BEGIN {exit !(a <= b)}' || verdict="NOT reproduced"
    done
    [ $nm -eq 0 ] && verdict="not measured"
    [ $nm -gt 0 ] && [ $nm -lt 3 ] && verdict="$verdict at the $nm measured depth(s)"
    echo "1. WHAI <= WAI at every depth: **$verdict** ($detail)"
    # 2. ghai worse than whai and slower to converge
    verdict=reproduced; detail=""; nm=0
    for g in 128 128-64 128-64-32; do
        a=$(ppl whai_$g); b=$(ppl ghai_$g)
        [ -n "$a" ] && [ -n "$b" ] || continue
        nm=$((nm + 1))
        gap=$(curve_gap ghai_$g whai_$g)
        detail="$detail $g: ghai $(printf %.1f "$b") vs whai $(printf %.1f "$a"), mean curve gap at equal wall time $gap;"
        awk -v a="$a" -v b="$b" -v gp="$gap" 'BEGIN {exit !(b > a && gp + 0 > 0)}' || verdict="NOT reproduced"
    done
    [ $nm -eq 0 ] && verdict="not measured"
    [ $nm -gt 0 ] && [ $nm -lt 3 ] && verdict="$verdict at the $nm measured depth(s)"
    echo "2. GHAI worse than WHAI and slower to converge in time (GHAI's curve above WHAI's at equal"
    echo "   wall time, on average): **$verdict** ($detail)"
    # 3. whai improves with depth, iwhai barely
    w1=$(ppl whai_128); w3=$(ppl whai_128-64-32); i1=$(ppl iwhai_128); i3=$(ppl iwhai_128-64-32)
    if [ -n "$w1" ] && [ -n "$w3" ] && [ -n "$i1" ] && [ -n "$i3" ]; then
        dw=$(awk -v a="$w1" -v b="$w3" 'BEGIN {printf "%.1f", a - b}')
        di=$(awk -v a="$i1" -v b="$i3" 'BEGIN {printf "%.1f", a - b}')
        verdict=$(awk -v dw="$dw" -v di="$di" 'BEGIN {print (dw > 0 && di < 0.5 * dw) ? "reproduced" : "NOT reproduced"}')
        echo "3. WHAI improves with depth while IWHAI barely does (gain 128 -> 128-64-32 > 0 for WHAI,"
        echo "   IWHAI's gain < half of WHAI's; paper: 10 vs 4): **$verdict** (WHAI gain $dw, IWHAI gain $di)"
    else
        echo "3. WHAI improves with depth while IWHAI barely does: **not measured**"
    fi
    # 4. layerwise 128 prunes and is no worse than fixed 128-64-32
    l=$(awk -F'\t' '$2 == 128' "$LTSV")
    if [ -n "$l" ] && [ -n "$w3" ]; then
        K=$(echo "$l" | cut -f4); lp=$(echo "$l" | cut -f6)
        verdict=$(echo "$K" | awk -F- -v lp="$lp" -v w="$w3" '{p = 0; for (i = 1; i <= NF; i++) if ($i < 128) p = 1; print (p && lp <= w) ? "reproduced" : "NOT reproduced"}')
        echo "4. Layer-wise with K1max = 128 prunes to a smaller structure and is no worse than the fixed"
        echo "   128-64-32: **$verdict** (inferred $K, perplexity $(printf %.1f "$lp") vs fixed whai 128-64-32 $(printf %.1f "$w3"))"
    else
        echo "4. Layer-wise with K1max = 128 vs fixed 128-64-32: **not measured**"
    fi
    echo
    echo "Figures: perplexity vs wall time per depth: ppl_<depth>_time.png (vs iteration: ppl_<depth>.png)."
} > "$MD"
echo "ablation: report $MD"
