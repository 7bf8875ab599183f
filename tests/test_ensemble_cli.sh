#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_ensemble_cli.sh: `datm ensemble` (the class prediction of finished runs averaged)
# on the small real digits set: two sdatm-n runs that differ only in the seed (32-16, 5 + 35
# epochs, or 5 + 7 with DATM_TEST_QUICK; prediction from 20 seeded draws), then
# - the ensemble of one run reproduces that run's error rate and macro-F1 to the last digit
#   (the member's prediction is recomputed from its result.h5, as its evaluate stage made it);
# - the ensemble of both: /classification/probs is the mean of the two members' stored
#   probabilities (each row sums to 1), the error rate is a rate below 0.15 (0.5 with
#   DATM_TEST_QUICK; chance is 0.9), the members' reported
#   rates are recorded, members.txt and spec.resolved.yaml are written, datm compare reads it;
# - the same run twice warns that it is one chain twice;
# - bad input is an error naming the run and writes nothing: an unsupervised run (no
#   prediction of its own), a directory that is not a run, a member whose test file changed
#   since it ran, -o naming a member.
# Skips 77 without the binary, the data or h5dump.
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_init ensemble digits

spec() {   # variant -> spec text
    cat <<YAML
name: ensemble-cli-test
seed: 3
data:
  dataset: $data/digits
model:
  variant: $1
  layers: [32, 16]
$( [ "$1" != whai ] && printf '  unsup_epochs: 5\n  kl_warmup_epochs: 3\n  k_min: 1\n  label_weight: 10\n')
train:
  epochs: $(datm_test_quick && echo 12 || echo 40)
  batch_size: 50
  eval_every: 0
evaluate:
  perplexity: false
  predict_samples: 20
output:
  figures: false
  report: false
  topics: false
YAML
}
spec sdatm-n > "$tmp/n.yaml"
scalar() { h5dump -m %.17g -d "$2" "$1/result.h5" 2>/dev/null |
           awk '/DATA \{/ {on = 1; next} on { sub(/^ *\([0-9, ]*\): */, ""); print; exit }'; }
numbers() {   # every value of dataset $2 of run $1, one per line
    h5dump -m %.9g -d "$2" "$1/result.h5" 2>/dev/null |
        awk '/DATA \{/ {on = 1; next} /^ *\}/ {on = 0} on { sub(/^ *\([0-9, ]*\): */, "");
             n = split($0, v, /, */); for (i = 1; i <= n; i++) if (v[i] != "") print v[i] }'
}

"$datm" run "$tmp/n.yaml" -o "$tmp/a" --threads 2 > "$tmp/a.txt" 2>&1; ra=$?
"$datm" run "$tmp/n.yaml" seed=4 -o "$tmp/b" --threads 2 > "$tmp/b.txt" 2>&1; rb=$?
check "[ $ra = 0 ] && [ $rb = 0 ]" "two runs complete (exit $ra, $rb)"

"$datm" ensemble "$tmp/a" -o "$tmp/e1" --threads 2 > "$tmp/e1.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && grep -q 'as reported' '$tmp/e1.txt'" "ensemble of one run: $(tail -1 "$tmp/e1.txt")"
for m in error_rate macro_f1; do
    x=$(scalar "$tmp/a" /metrics/$m); y=$(scalar "$tmp/e1" /metrics/$m)
    check "[ -n '$x' ] && [ '$x' = '$y' ]" "one member: $m $y equals the run's $x"
done

"$datm" ensemble "$tmp/a" "$tmp/b" -o "$tmp/e2" --threads 2 > "$tmp/e2.txt" 2>&1; rc=$?
check "[ $rc = 0 ] && [ -f '$tmp/e2/result.h5' ]" "ensemble of two runs: $(tail -1 "$tmp/e2.txt")"
paste <(numbers "$tmp/e2" /ensemble/member_probs/1) <(numbers "$tmp/e2" /ensemble/member_probs/2) \
      <(numbers "$tmp/e2" /classification/probs) > "$tmp/p.txt"
check "awk 'NF != 3 {bad = 1} { d = \$3 - (\$1 + \$2) / 2; if (d < 0) d = -d; if (d > m) m = d }
           END { print \"  max |mean - probs| \" m \", \" NR \" entries\"; exit bad || m > 1e-6 || NR < 1000 }' '$tmp/p.txt'" \
      "the probabilities are the members' mean"
check "numbers '$tmp/e2' /classification/probs | awk '{ s += \$1 } NR % 10 == 0 { d = s - 1; if (d < 0) d = -d; if (d > m) m = d; s = 0 } END { exit m > 1e-5 }'" \
      "each document's probabilities sum to 1"
e=$(scalar "$tmp/e2" /metrics/error_rate)
emax=$(datm_test_quick && echo 0.5 || echo 0.15)   # 7 supervised epochs: far better than chance (0.9)
check "awk -v e='$e' -v m=$emax 'BEGIN { exit !(e >= 0 && e < m) }'" "the ensemble's error rate $e is a rate below $emax"
check "[ \"\$(numbers '$tmp/e2' /ensemble/member_error_rate | tr '\n' ' ')\" = \"\$(scalar '$tmp/a' /metrics/error_rate | xargs printf '%.9g') \$(scalar '$tmp/b' /metrics/error_rate | xargs printf '%.9g') \" ]" \
      "the members' reported rates are recorded"
check "[ \$(wc -l < '$tmp/e2/members.txt') = 2 ] && head -1 '$tmp/e2/spec.resolved.yaml' | grep -q 'ensemble of 2 runs'" \
      "members.txt and spec.resolved.yaml written"
check "'$datm' compare '$tmp/e2' --format csv 2>/dev/null | grep -q '^e2,COMPLETED,'" "datm compare reads it"

"$datm" ensemble "$tmp/a" "$tmp/a" -o "$tmp/e3" > "$tmp/e3.txt" 2>&1
check "grep -q 'same spec and seed' '$tmp/e3.txt'" "the same run twice warns: $(grep -m1 'same spec' "$tmp/e3.txt")"

# bad input: an error naming what is wrong, nothing written
spec whai > "$tmp/u.yaml"   # any finished unsupervised run: one epoch is enough
"$datm" run "$tmp/u.yaml" train.epochs=1 -o "$tmp/u" --threads 2 > /dev/null 2>&1
"$datm" ensemble "$tmp/a" "$tmp/u" -o "$tmp/bad1" > "$tmp/bad1.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'u: model whai has no class prediction' '$tmp/bad1.txt' && [ ! -e '$tmp/bad1/result.h5' ]" \
      "an unsupervised member: $(tail -1 "$tmp/bad1.txt")"
mkdir -p "$tmp/notarun"
"$datm" ensemble "$tmp/notarun" -o "$tmp/bad2" > "$tmp/bad2.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'notarun/spec.resolved.yaml' '$tmp/bad2.txt' && [ ! -e '$tmp/bad2' ]" \
      "not a run: $(tail -1 "$tmp/bad2.txt")"
# a member whose test documents changed since it ran (its spec points at a copy of the set
# with one count more)
cp -r "$data/digits" "$tmp/digits2"
zcat "$data/digits/test.docword.gz" | awk 'NR == 4 { $3 = $3 + 1 } { print }' | gzip > "$tmp/digits2/test.docword.gz"
cp -r "$tmp/a" "$tmp/moved"
sed -i "s|dataset: .*|dataset: $tmp/digits2|" "$tmp/moved/spec.resolved.yaml"
"$datm" ensemble "$tmp/moved" -o "$tmp/bad3" > "$tmp/bad3.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && grep -q 'are not the ones the run was evaluated on' '$tmp/bad3.txt' && [ ! -e '$tmp/bad3/result.h5' ]" \
      "changed test documents: $(tail -1 "$tmp/bad3.txt" | cut -c1-160)"
"$datm" ensemble "$tmp/a" -o "$tmp/a" > "$tmp/bad4.txt" 2>&1; rc=$?
check "[ $rc = 2 ] && grep -q 'also a member' '$tmp/bad4.txt'" "-o naming a member is a usage error"
exit $fail
