#!/usr/bin/env bash
# tests/fuzz/make_seeds.sh DATM_BINARY: (re)makes the seed inputs of the fuzz harnesses in
# tests/fuzz/corpus/<harness>/seed-*: small docword files and data sets, the repository's
# spec files with overrides, and the result.h5 and checkpoints of a tiny WHAI run (V = 40,
# layers 6-3, the spec that fuzz_checkpoint.c loads). Inputs the fuzzer found are kept beside
# them (tests/fuzz/README.md). Deterministic data; the HDF5 files carry timestamps.
set -euo pipefail
datm=$(readlink -f "${1:?usage: make_seeds.sh DATM_BINARY}")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
c="$here/corpus"
mkdir -p "$c"/{docword,corpus,spec,pipeline,result,checkpoint}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- docword ----
printf '3\n5\n4\n1 1 2\n1 3 1\n2 5 7\n3 2 1\n' > "$c/docword/seed-uci"
printf '3 5 4\n3 2 1\n1 3 1\n2 5 7\n1 1 2\n' > "$c/docword/seed-oneline-unsorted"
printf '2\n4\n0\n' > "$c/docword/seed-empty-docs"
printf '2\r\n3\r\n2\r\n1 1 1\r\n2 3 16777216\r\n' > "$c/docword/seed-crlf"
printf '4\n6\n5\n1 1 1\n1 6 2\n2 2 3\n4 4 4\n4 5 1\n' | gzip -n > "$c/docword/seed-gzip"

# ---- data sets: train.docword, vocab.txt, train.labels, classes.txt cut at "#--" ----
{ printf '3\n4\n5\n1 1 1\n1 2 2\n2 3 1\n3 4 5\n3 1 1\n#--\n'
  printf 'alpha\nbeta\ngamma\ndelta\n#--\n0\n1\n1\n#--\nsport\nscience\n'; } > "$c/corpus/seed-full"
{ printf '2 3 2\n1 1 1\n2 3 4\n#--\n'; printf 'a\nb\nc\n#--\n2\n0\n'; } > "$c/corpus/seed-no-classes"
printf '2 3 2\n1 1 1\n2 3 4\n' > "$c/corpus/seed-docword-only"

# ---- specs: every spec file of the repository, and overrides after NUL bytes ----
i=0
for f in "$src"/experiments/*/*.yaml; do
  i=$((i + 1))
  cp "$f" "$c/spec/seed-$(basename "$(dirname "$f")")-$(basename "$f" .yaml)"
done
{ cat "$src/experiments/quick/unigram.yaml"; printf '\0model.alpha=0.25\0~train.eval_every\0train.epochs=3'; } \
  > "$c/spec/seed-overrides"
{ cat "$src/experiments/brown/whai.yaml"; printf '\0model.layers=[8,4]\0model.kl_weight=[1,2]\0seed=7'; } \
  > "$c/spec/seed-overrides-lists"

# ---- pipelines: the repository's pipeline files, and small ones over a spec s.yaml given
# after "#--" (a third part names the profile; data set fz: see fuzz_pipeline.c) ----
for f in "$src"/pipelines/*.yaml "$src"/examples/plugin/compare.yaml; do
  cp "$f" "$c/pipeline/seed-$(basename "$f" .yaml)"
done
sp='data: {dataset: fz}\nmodel: {variant: whai, layers: [8, 4]}\ntrain: {epochs: 2}\n'
printf 'name: p\nruns:\n  - {id: a, spec: s.yaml, overrides: [seed=2], labels: {k: "1"}}\n#--\n%b' "$sp" \
  > "$c/pipeline/seed-one-run"
printf '%s\n' 'name: q' 'default_profile: quick' 'profiles:' '  quick: {overrides: [train.epochs=1]}' \
  'matrix:' '  - id: "w_{s}"' '    spec: s.yaml' '    axes: {s: ["1", "2"]}' '    overrides: ["seed={s}"]' \
  'references:' '  paper: {w_1: {perplexity: 900}}' 'tables:' '  t: {runs: ["w_*"], rows: [id], values: [{metric: perplexity}]}' \
  'figures:' '  f: {kind: curves, runs: ["w_*"], x: iteration, y: perplexity}' 'claims:' \
  '  c: {text: t, forall: {s: ["1", "2"]}, expr: "w_{s}.perplexity < 2 * w_1.perplexity@paper and not (1 > 2)"}' \
  > "$c/pipeline/seed-matrix"
{ cat "$c/pipeline/seed-matrix"; printf '#--\n%b#--\nquick\n' "$sp"; } > "$c/pipeline/seed-matrix-profile"

# ---- a tiny run: result files and checkpoints ----
mkdir -p "$tmp/fuzzset"
awk 'BEGIN { D = 30; V = 40; n = 0; s = 12345
  for (d = 1; d <= D; d++) for (w = 1; w <= V; w++) {
    s = (s * 1103515245 + 12345) % 2147483648
    if (s % 7 == 0) { line[++n] = d " " w " " (1 + s % 5) } }
  print D; print V; print n; for (i = 1; i <= n; i++) print line[i] }' | gzip -n > "$tmp/fuzzset/train.docword.gz"
for w in $(seq 1 40); do echo "word$w"; done > "$tmp/fuzzset/vocab.txt"
# the exact text of fuzz_checkpoint.c's spec (its hash must match the checkpoints')
printf 'name: fuzz\nseed: 1\ndata:\n  dataset: fuzzset\nmodel:\n  variant: whai\n  layers: [6, 3]\ntrain:\n  epochs: 2\n  batch_size: 10\n  checkpoint_every: 2\n' \
  > "$tmp/fuzz.yaml"
(cd "$tmp" && "$datm" run fuzz.yaml -o R evaluate.samples=5 output.figures=false --quiet) ||
  (cd "$tmp" && "$datm" run fuzz.yaml -o R --quiet)
cp "$tmp/R/result.h5" "$c/result/seed-completed.h5"
# a killed run's .part (RUNNING) and an interrupted one's
(cd "$tmp" && DATM_TEST_SIGINT_AT_ITER=3 "$datm" run fuzz.yaml -o S --quiet 2>/dev/null) || true
cp "$tmp/S/result.h5.part" "$c/result/seed-interrupted.h5"
n=0
for f in "$tmp"/R/checkpoints/*.h5 "$tmp"/S/checkpoints/*.h5; do
  [ -f "$f" ] || continue
  n=$((n + 1)); cp "$f" "$c/checkpoint/seed-$n.h5"
done
ls -l "$c"/result "$c"/checkpoint
