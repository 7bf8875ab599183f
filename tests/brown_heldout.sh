#!/usr/bin/env bash
# tests/brown_heldout.sh OUT_DIR [BROWN_DIR]: writes the test data set `brown_heldout`, the
# built-in Brown corpus (ci/setup.sh builds it into .cache/data/brown) laid out for the
# held-out-documents protocol that the paper's 20News file uses: the training documents, the
# vocabulary and the labels unchanged (symbolic links), and each test document's tokens split
# into an observed part (test_obs, ~80%) and a held-out part (test_heldout, ~20%).
# Not a test itself (tests call it; results/baselines/brown-unigram.yaml was computed on it).
#
# Split rule (fixed, so that baselines computed on the output stay valid): the tokens of the
# test file are visited in file order (document, then word id, then the copies of a count);
# the Park-Miller generator x <- 16807 x mod (2^31 - 1), x0 = 20240613, is advanced once per
# token and the token is held out when x < 0.2 (2^31 - 1). Every product stays below 2^53, so
# awk's doubles compute it exactly and any awk (mawk, gawk) writes the same bytes.
# A document may end with an empty part (then it contributes nothing there), as in 20News.
# Exit 1 with a message when BROWN_DIR lacks the corpus.
set -eu
out=${1:?usage: brown_heldout.sh OUT_DIR [BROWN_DIR]}
src=${2:-${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}/.cache/data/brown}
for f in train.docword.gz test.docword.gz vocab.txt train.labels test.labels classes.txt; do
  [ -f "$src/$f" ] || { echo "brown_heldout: $src/$f missing (bash ci/setup.sh builds brown)" >&2; exit 1; }
done
src=$(cd "$src" && pwd)
mkdir -p "$out"
for f in train.docword.gz test.docword.gz vocab.txt train.labels test.labels classes.txt; do
  ln -sf "$src/$f" "$out/$f"
done
gzip -dc "$src/test.docword.gz" | awk -v dir="$out" '
  NR == 1 { D = $1; next }
  NR == 2 { W = $1; next }
  NR == 3 { x = 20240613; m = 2147483647; next }
  {
    o = 0; h = 0
    for (k = 0; k < $3; k++) { x = (16807 * x) % m; if (x < 0.2 * m) h++; else o++ }
    if (o) { print $1, $2, o > (dir "/obs.body"); no++ }
    if (h) { print $1, $2, h > (dir "/held.body"); nh++ }
  }
  END {
    printf "%d\n%d\n%d\n", D, W, no > (dir "/test_obs.docword")
    printf "%d\n%d\n%d\n", D, W, nh > (dir "/test_heldout.docword")
  }'
cat "$out/obs.body" >> "$out/test_obs.docword"
cat "$out/held.body" >> "$out/test_heldout.docword"
rm -f "$out/obs.body" "$out/held.body" "$out/test_obs.docword.gz" "$out/test_heldout.docword.gz"
gzip -n "$out/test_obs.docword" "$out/test_heldout.docword"
