#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_corpus_french_e2e.sh: a non-English corpus end to end. A generated French corpus
# (UTF-8, accents, capitals, elisions, French stop words; 3 themes: cuisine, sport, musique)
# as JSON Lines with a category field -> `datm corpus build --format jsonl --stopwords-lang fr`
# -> `datm run` (WHAI 6-3) -> `datm topics` and `datm report`:
# - the vocabulary keeps accented words folded to lower case (crème, équipe, mélodie; no
#   "Crème") and holds no French stop word (le, et, à, des);
# - the run completes with a held-out perplexity below 0.7 x the unigram's (each document is
#   mostly one theme, so topics must beat word frequencies; measured: 23 against 44);
# - each theme is the majority of the top 5 words of some used topic (the model found the
#   three themes), printed in UTF-8 by `datm topics`; the HTML report carries the words.
set -u
src=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
datm=${DATM_BIN:-$src/build/datm}
[ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
fail=0
tmp=$(mktemp -d /tmp/datm_test_french_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/testlib.sh"   # check, run_ok

cuisine="fromage crème café pâtisserie boulangère gâteau farine beurre sucre chocolat crêpe omelette fraîche soupe légumes épices cuisinière recette goûter dîner déjeuner baguette confiture pâte"
sport="équipe joueur entraîneur match stade ballon championnat victoire défaite arbitre coupe tournoi gardien attaquant défenseur saison supporters vélo course médaille athlète piscine entraînement"
musique="mélodie chanson orchestre piano guitare concert chanteur chœur opéra symphonie violon rythme harmonie compositeur partition accordéon musicien scène refrain batterie festival opérette"
stops="le la les et de des à est un une du au en il elle nous"
awk -v seed=11 -v c="$cuisine" -v s="$sport" -v m="$musique" -v st="$stops" 'BEGIN {
  srand(seed)
  nw[1] = split(c, w1, " "); nw[2] = split(s, w2, " "); nw[3] = split(m, w3, " ")
  ns = split(st, sw, " ")
  name[1] = "cuisine"; name[2] = "sport"; name[3] = "musique"
  for (d = 1; d <= 360; d++) {
    t = 1 + (d % 3)
    line = ""
    for (i = 1; i <= 50; i++) {
      r = rand()
      if (r < 0.3) word = sw[1 + int(rand() * ns)]
      else {
        th = (rand() < 0.85) ? t : 1 + int(rand() * 3)
        k = 1 + int(rand() * rand() * nw[th])       # a few frequent words per theme
        word = (th == 1) ? w1[k] : (th == 2) ? w2[k] : w3[k]
      }
      if (rand() < 0.1) word = toupper(substr(word, 1, 1)) substr(word, 2)   # ASCII capitals only
      if (rand() < 0.05) word = "l\047" word                                    # elision
      line = line (i > 1 ? " " : "") word (rand() < 0.08 ? "," : "")
    }
    printf "{\"texte\": \"%s.\", \"thème\": \"%s\"}\n", line, name[t]
  }
}' > "$tmp/corpus.jsonl"
# capitals with accents written by hand (awk toupper is ASCII): folded to the same words
printf '{"texte": "CRÈME Crème ÉQUIPE Équipe MÉLODIE Mélodie", "thème": "cuisine"}\n' >> "$tmp/corpus.jsonl"

"$datm" corpus build --format jsonl --input "$tmp/corpus.jsonl" --text-field texte \
  --label-field thème --stopwords-lang fr --out "$tmp/fr" --min-df 2 --max-df 0.9 \
  --test-frac 0.15 --quiet > "$tmp/build.txt" 2>&1; rc=$?
check "[ $rc = 0 ]" "corpus build exit $rc: $(tail -2 "$tmp/build.txt")"
v=$tmp/fr/vocab.txt
check "grep -qx 'crème' $v && grep -qx 'équipe' $v && grep -qx 'mélodie' $v && grep -qx 'chœur' $v" "accented words kept"
check "! grep -q '^[A-ZÀ-Þ]' $v && ! grep -qx 'Crème' $v && ! grep -qx 'ÉQUIPE' $v" "folded to lower case"
check "! grep -Eqx 'le|et|à|des|une' $v" "French stop words removed"
check "grep -qx 'musique' $tmp/fr/classes.txt && grep -qx 'sport' $tmp/fr/classes.txt" "categories from the JSON field"
check "grep -q 'built-in list for .fr.' $tmp/fr/README.md" "README names the stop list"

cat > "$tmp/spec.yaml" <<YAML
name: french-e2e
seed: 2
data:
  dataset: $tmp/fr
  protocol: token-split
model:
  variant: whai
  layers: [6, 3]
  lambda_is_mean: true
  kl_weight: [0.1, 0.01]
  eval_globals: fixed
  aug_gibbs_burn: 3
  aug_gibbs_collect: 3
train:
  epochs: 100
  batch_size: 25
  eval_docs: 100
  eval_samples: 2
evaluate:
  samples: 20
  classify: false
output:
  figures: false
  report: false
YAML
run_ok "$tmp/spec.yaml" "$tmp/run"
ppl=$(h5dump -d /metrics/perplexity "$tmp/run/result.h5" 2>/dev/null | sed -n 's/.*(0): //p')
# the unigram perplexity of the held-out words under the training words' frequencies is what a
# one-topic model reaches; the documents' themes must do better
uni=$(zcat "$tmp/fr/train.docword.gz" | awk 'NR > 3 {c[$2] += $3; n += $3} END {
  for (w in c) h -= c[w] / n * log(c[w] / n); printf "%.1f", exp(h) }')
check "awk -v p='$ppl' -v u='$uni' 'BEGIN {exit !(p > 0 && p < 0.7 * u)}'" "held-out perplexity $ppl < 0.7 x unigram $uni"

"$datm" topics "$tmp/run" --layer 1 --no-tree --top 5 > "$tmp/topics.txt" 2>&1; rc=$?
check "[ $rc = 0 ]" "datm topics exit $rc"
# majority theme of each shown topic's top 5 words
found=$(awk -v c="$cuisine" -v s="$sport" -v m="$musique" 'BEGIN {
    n = split(c, a, " "); for (i = 1; i <= n; i++) th[a[i]] = "cuisine"
    n = split(s, a, " "); for (i = 1; i <= n; i++) th[a[i]] = "sport"
    n = split(m, a, " "); for (i = 1; i <= n; i++) th[a[i]] = "musique" }
  /^t[0-9]/ { split(substr($0, index($0, ":") + 1), w, " "); delete cnt
    for (i = 1; i <= 5; i++) cnt[th[w[i]]]++
    for (t in cnt) if (t != "" && cnt[t] >= 3) seen[t] = 1 }
  END { for (t in seen) print t }' "$tmp/topics.txt" | sort | tr '\n' ' ')
check "[ \"$found\" = 'cuisine musique sport ' ]" "the three themes found as topics (got: $found)"
check "grep -q 'crème\\|équipe\\|mélodie\\|pâtisserie\\|entraîneur\\|chœur' $tmp/topics.txt" "UTF-8 words in datm topics"
"$datm" report "$tmp/run" -o "$tmp/report.html" > /dev/null 2>&1; rc=$?
check "[ $rc = 0 ] && grep -q 'mélodie\\|crème\\|équipe' $tmp/report.html" "report carries the words ($rc)"
exit $fail
