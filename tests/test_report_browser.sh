#!/usr/bin/env bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_report_browser.sh: `datm report` in a real browser. A short WHAI on the built-in
# Brown corpus (ci/setup.sh builds it), then `datm report RUN -o DIR/index.html`:
# - one file, nothing fetched: no <script src>, <link>, url(), @import, fetch or XMLHttpRequest;
# - headless Chromium (Debian's chromium; ci/setup.sh installs it for the tests) loads it with
#   every host unresolvable and a fresh profile: the DOM after loading says the page drew one
#   node per topic (the model's K_1 + K_2 + K_3), the links and the charts, with 0 script
#   errors; a screenshot is written and is a PNG of the page;
# - the error marker is not blind: the same page with a failing statement injected reports it;
# - a run directory without result.h5 is an error (exit 1) and leaves no file.
set -u
src=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
datm=${DATM_BIN:-$src/build/datm}
[ -x "$datm" ] || { echo "skip: $datm not built"; exit 77; }
brown=$src/.cache/data/brown
[ -f "$brown/train.docword.gz" ] || { echo "FAIL: $brown missing (bash ci/setup.sh builds it)"; exit 1; }
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "FAIL: chromium not installed (bash ci/setup.sh installs it for the tests)"; exit 1; }
fail=0
tmp=$(mktemp -d /tmp/datm_test_report_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/testlib.sh"   # check, run_ok

browse() {   # browse PROFILE ARGS... : headless Chromium, no network, fresh profile
  local prof=$tmp/$1; shift
  rm -rf "$prof"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$prof" "$@" 2>> "$tmp/chromium.err"
}

cat > "$tmp/spec.yaml" <<YAML
name: report-test
seed: 5
data:
  dataset: $brown
  protocol: token-split
  train_docs: 600
model:
  variant: whai
  layers: [20, 10, 4]
  lambda_is_mean: true
  eval_globals: fixed
train:
  epochs: 3
  batch_size: 100
  eval_every: 6
  eval_docs: 100
  eval_samples: 2
evaluate:
  samples: 5
  classify: false
output:
  figures: false
  report: false
YAML
run_ok "$tmp/spec.yaml" "$tmp/run"
"$datm" report "$tmp/run" -o "$tmp/out/index.html" > "$tmp/rep.txt" 2>&1; rc=$?
page=$tmp/out/index.html
check "[ $rc = 0 ] && [ -s $page ]" "datm report wrote $page (exit $rc)"
check "[ \$(ls $tmp/out | wc -l) = 1 ]" "one file"
check "! grep -Eiq '<script[^>]*src=|<link|url\\(|@import|fetch\\(|XMLHttpRequest' $page" "nothing fetched"

browse p1 --dump-dom "file://$page" > "$tmp/dom.html"
check "grep -q 'data-datm-nodes=\"34\"' $tmp/dom.html" "34 topic nodes drawn (20 + 10 + 4): $(grep -o 'data-datm-nodes="[0-9]*"' "$tmp/dom.html")"
check "grep -q 'data-datm-errors=\"0\"' $tmp/dom.html" "no script errors: $(grep -o 'id="datm-status">[^<]*' "$tmp/dom.html")"
check "grep -Eq 'data-datm-links=\"[1-9][0-9]*\"' $tmp/dom.html" "links drawn"
check "grep -Eq 'data-datm-charts=\"[3-9]\"' $tmp/dom.html" "curves drawn"
check "[ \$(grep -o '<circle[^>]*class=\"node' $tmp/dom.html | wc -l) = 34 ]" "34 node circles in the SVG"
check "grep -q 'Layer 3, topic' $tmp/dom.html" "a topic's panel is shown"

browse p2 --hide-scrollbars --window-size=1400,1000 --screenshot="$tmp/shot.png" "file://$page" > /dev/null
check "[ -s $tmp/shot.png ] && [ \"\$(head -c 8 $tmp/shot.png | od -An -tx1 | tr -d ' \\n')\" = 89504e470d0a1a0a ]" "screenshot is a PNG"
check "[ \$(stat -c %s $tmp/shot.png) -gt 20000 ]" "screenshot is not blank ($(stat -c %s "$tmp/shot.png" 2>/dev/null) bytes)"

# the marker reports errors: inject a failing statement before the drawing script ends
sed 's|^markStatus();$|undefinedFunctionForTheTest(); markStatus();|' "$page" > "$tmp/broken.html"
check "grep -q undefinedFunctionForTheTest $tmp/broken.html" "error injected"
browse p3 --dump-dom "file://$tmp/broken.html" > "$tmp/dom2.html"
check "grep -q 'data-datm-errors=\"1\"' $tmp/dom2.html" "an injected error is reported"

mkdir -p "$tmp/empty"
"$datm" report "$tmp/empty" -o "$tmp/out2/index.html" > "$tmp/e.txt" 2>&1; rc=$?
check "[ $rc = 1 ] && [ ! -e $tmp/out2/index.html ]" "no result: exit 1, no file ($rc)"
exit $fail
