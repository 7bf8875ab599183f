#!/bin/bash
# ctest-labels: regression  ctest-timeout: 900
# tests/test_ci_gate.sh: the CI regression gate, pipelines/ci.yaml (WHAI, DLDA-TLASGR, sDATM-N
# and the unigram model on the Brown corpus that ci/setup.sh builds), run as CI runs it:
# `datm pipeline run pipelines/ci.yaml -j 2 --strict`, into a cache and an output folder of
# its own. Every claim must be reproduced (exit 0); then, all runs cached:
# - a second invocation starts nothing and exits 0;
# - the same pipeline with one baseline moved by 10% exits 3 naming the claim (the gate can
#   fail), and a claim naming a run that does not exist is refused before anything runs (2).
set -u
. "$(dirname "$0")/testlib.sh"
datm_test_fresh cigate
cd "$SRC"

t0=$SECONDS
"$datm" pipeline run pipelines/ci.yaml -j 2 --strict --quiet --cache "$tmp/cache" -o "$tmp/out" \
  > "$tmp/run1.log" 2>&1
rc=$?
echo "gate: exit $rc in $((SECONDS - t0)) s"
cat "$tmp/run1.log"
check "[ $rc = 0 ]" "the gate passes: every run completes and every claim is reproduced"
check "grep -q 'claims: 6 reproduced, 0 not reproduced, 0 not evaluable' '$tmp/run1.log'" \
  "six claims reproduced"
check "[ \$(grep -c '\"verdict\": \"reproduced\"' '$tmp/out/claims.json') = 6 ]" "claims.json agrees"
check "grep -q '^| whai | WHAI' '$tmp/out/tables/gate.md'" "the gate table has the WHAI row"

"$datm" pipeline run pipelines/ci.yaml -j 2 --strict --quiet --cache "$tmp/cache" -o "$tmp/out" \
  > "$tmp/run2.log" 2>&1
check "[ $? = 0 ] && ! grep -q started '$tmp/run2.log'" "a second invocation starts nothing"

# The same file elsewhere (spec paths made absolute): the same cache keys.
sed "s|\.\./experiments/|$SRC/experiments/|; s|^out: .*|out: out|" pipelines/ci.yaml > "$tmp/moved.yaml"
sed 's/whai: {perplexity: \([0-9.]*\)}/whai: {perplexity: 2000}/' "$tmp/moved.yaml" > "$tmp/bad.yaml"
check "! cmp -s '$tmp/moved.yaml' '$tmp/bad.yaml'" "the baseline was moved"
"$datm" pipeline run "$tmp/bad.yaml" -j 2 --strict --quiet --cache "$tmp/cache" > "$tmp/bad.log" 2>&1
rc=$?
check "[ $rc = 3 ]" "a baseline 10%+ off: exit 3 (got $rc)"
check "! grep -q started '$tmp/bad.log'" "... and nothing reran"
check "grep -q '1 claim(s) not reproduced' '$tmp/bad.log' && grep -q 'whai_band.*not reproduced' '$tmp/out/REPORT.md'" \
  "... the tally counts it and the report names it"
sed 's/approx(whai.perplexity, /approx(wahi.perplexity, /' "$tmp/moved.yaml" > "$tmp/typo.yaml"
"$datm" pipeline run "$tmp/typo.yaml" --cache "$tmp/cache2" > "$tmp/typo.log" 2>&1
rc=$?
check "[ $rc = 2 ] && grep -q \"typo.yaml:[0-9]*:[0-9]*: claims.whai_band.expr: 'wahi'\" '$tmp/typo.log'" \
  "a claim naming no run: exit 2 at load, naming file:line and the claim (got $rc)"
check "[ ! -e '$tmp/cache2' ] || [ -z \"\$(ls '$tmp/cache2' | grep -v filehash)\" ]" "... before any run"
exit $fail
