#!/usr/bin/env bash
# ci/fetch_digits.sh: the small labelled image set of the tests. Takes the "digits" file that
# Debian's python3-sklearn package ships (sklearn/datasets/data/digits.csv.gz: the 1,797
# 8x8 images of the test part of the UCI "Optical Recognition of Handwritten Digits" set,
# E. Alpaydin and C. Kaynak 1998, 64 block counts 0..16 and the digit per line; package
# licence BSD-3-Clause), checks the file's SHA-256 and writes it into .cache/data/digits in
# our corpus format, where the data set name `digits` resolves (datm_dataset_resolve).
# Only the .deb is downloaded (`apt-get download`, no root needed, nothing installed).
#
# Recipe: word `p_r_c` (0-based row r and column c; wordID = 8 r + c + 1), count = the block
# count (zeros not stored); the source has no split, so the j-th image (file order) of each
# digit goes to test when j % 5 == 4 (stratified 80/20: 1,442 train, 355 test images);
# `*.docs` gives each document's 0-based csv row.
# Idempotent: nothing is done when .cache/data/digits/.stamp matches this recipe.
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=python3-sklearn
member=./usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
sha256=6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8  # of the csv, unzipped
cache=.cache
out="$cache/data/digits"
stamp="$pkg:digits.csv sha256:$sha256 recipe:$(sed -n '/^# Recipe/,/^# Idempotent/p' "$0" | sha1sum | cut -d' ' -f1)"

if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] && [ -f "$out/train.docword.gz" ]; then
  echo "fetch_digits: $out is up to date"
  exit 0
fi

mkdir -p "$cache/data"
work=$(cd "$(mktemp -d "$cache/digits-work.XXXXXX")" && pwd)
trap 'rm -rf "$work"' EXIT

# apt-get download needs the package lists; on a machine whose lists were never fetched
# (or are stale) it fails, and one `apt-get update` fixes that
fetch() { (cd "$work" && apt-get download -q "$pkg" >/dev/null 2>"$work/apt.err"); }
if ! fetch; then
  echo "fetch_digits: apt-get download $pkg failed; running apt-get update once"
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  fetch || { cat "$work/apt.err" >&2; echo "fetch_digits: apt-get download $pkg failed" >&2; exit 1; }
fi
deb=$(ls "$work"/"$pkg"_*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -xO "$member" | gzip -dc > "$work/digits.csv"
got=$(sha256sum "$work/digits.csv" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "fetch_digits: $member of $(basename "$deb") has SHA-256 $got, expected $sha256" >&2
  exit 1
fi

new="$work/digits"
mkdir -p "$new"
awk -F, -v dir="$new" '
  NF != 65 { printf "fetch_digits: digits.csv line %d has %d fields, expected 65\n", NR, NF > "/dev/stderr"; bad = 1; exit 1 }
  {
    y = $65; j = seen[y]++; s = (j % 5 == 4) ? "test" : "train"
    d = ++D[s]
    print y > (dir "/" s ".labels")
    print NR - 1 > (dir "/" s ".docs")
    for (k = 1; k <= 64; k++)
      if ($k != 0) { print d, k, $k > (dir "/" s ".body"); nnz[s]++ }
  }
  END {
    if (bad) exit 1
    for (s in D) printf "%d\n64\n%d\n", D[s], nnz[s] > (dir "/" s ".docword")
    for (r = 0; r < 8; r++) for (c = 0; c < 8; c++) print "p_" r "_" c > (dir "/vocab.txt")
    for (y = 0; y < 10; y++) print y > (dir "/classes.txt")
  }' "$work/digits.csv"
for s in train test; do
  cat "$new/$s.body" >> "$new/$s.docword" && rm "$new/$s.body"
done
gzip -9n "$new/train.docword" "$new/test.docword"

stats() {  # split -> "| split | D | W | NNZ | tokens | max count |"
  gzip -dc "$new/$1.docword.gz" | awk -v s="$1" 'NR == 1 {D = $1} NR == 2 {W = $1} NR == 3 {N = $1}
    NR > 3 {t += $3; if ($3 > m) m = $3} END {printf "| %s | %d | %d | %d | %d | %d |\n", s, D, W, N, t, m}'
}
classes() { sort -n "$new/$1.labels" | uniq -c | awk '{printf " %d", $1}'; }
cat > "$new/README.md" <<MD
# digits: 8x8 handwritten digits as 64-word documents

Written by \`ci/fetch_digits.sh\` from \`$(basename "$deb")\` (Debian), file
\`${member#./}\` (SHA-256 of the unzipped csv \`$sha256\`): the 1,797 images of the test
part of the UCI "Optical Recognition of Handwritten Digits" set (E. Alpaydin, C. Kaynak, 1998;
CC BY 4.0 at UCI; scikit-learn's licence BSD-3-Clause). A small real labelled set for fast
tests (not in the paper).

## Conversion
Word \`p_r_c\` (0-based row r, column c; wordID = 8 r + c + 1), count = the block count 0..16.
The j-th image (file order) of each digit goes to test when j % 5 == 4. \`*.docs\` gives the
0-based csv row of each document.

## Statistics
| split | D | W | NNZ | tokens | max count |
| --- | --- | --- | --- | --- | --- |
$(stats train)
$(stats test)

Class counts train:$(classes train); test:$(classes test).
MD
echo "$stamp" > "$new/.stamp"

# replace the old set only once the new one is complete
rm -rf "$out.old"
[ -e "$out" ] && mv "$out" "$out.old"
mv "$new" "$out"
rm -rf "$out.old"
echo "fetch_digits: wrote $out"
sed -n '/^| split/,/^Class/p' "$out/README.md"
