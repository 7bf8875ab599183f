#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 600
# tests/test_plugin_example.sh: examples/plugin as a researcher uses it. `cmake --install`
# into a scratch prefix; the example's files are copied to a folder of their own and built
# there with its CMakeLists (pkg-config datm, the installed headers only); then
# - its gradient test passes (finite differences and Monte Carlo of the log-normal family);
# - the installed datm trains its spec on Brown (model.plugin relative to the spec), and the
#   run's provenance names the plugin file and its SHA-256 (that of the file); libdatm
#   (tests/api_example.c) opens that run, loading the plugin, and infers as `datm infer`;
# - `datm pipeline run compare.yaml` gives the table with both rows (built-in whai and the
#   plugin's whai-lognormal) and finite figures; a second run finds both in the cache.
# DATM_TEST_QUICK: the example's specs train 2 epochs on Brown's first 1,000 documents. A
# sanitized build (DATM_SANITIZE) builds the example with the same sanitizers.
set -u
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${DATM_BUILD_DIR:-$SRC/build}
[ -x "$BUILD/datm" ] || { echo "skipped: $BUILD/datm not built"; exit 77; }
for t in pkg-config cc cmake h5dump sha256sum; do
  command -v $t > /dev/null || { echo "FAIL: $t missing (ci/setup.sh installs it)"; exit 1; }
done
[ -f "$SRC/.cache/data/brown/test.docword.gz" ] || { echo "FAIL: .cache/data/brown missing: run bash ci/setup.sh"; exit 1; }
. "$SRC/tests/testlib.sh"
fail=0
tmp=$(mktemp -d /tmp/datm_test_plugin_example_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset DATM_PLUGIN_PATH
export DATM_DATA="$SRC/.cache/data"   # dataset: brown -> the corpus ci/setup.sh builds

cmake --install "$BUILD" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1
check "[ $? = 0 ]" "cmake --install into a scratch prefix"
check "[ -f '$tmp/prefix/include/datm_model.h' ]" "datm_model.h installed beside datm.h"
datm="$tmp/prefix/bin/datm"
lib=$(ls -d "$tmp"/prefix/lib*/ | head -1)

mkdir -p "$tmp/plugin"
cp "$SRC"/examples/plugin/*.c "$SRC"/examples/plugin/*.h "$SRC"/examples/plugin/*.yaml \
   "$SRC"/examples/plugin/CMakeLists.txt "$tmp/plugin/"
if datm_test_quick; then   # 2 epochs on the first 1,000 training documents instead of 20 on all
  sed -i 's/^  epochs: 20$/  epochs: 2/; s/^  dataset: brown$/  dataset: brown\n  train_docs: 1000/' \
    "$tmp"/plugin/*.yaml
fi
export PKG_CONFIG_PATH="$lib/pkgconfig"
san=$(datm_test_sanitize "$BUILD")   # a sanitized libdatm.so: the example takes the same runtime
sanflags=${san:+-fsanitize=$san -fno-omit-frame-pointer}
(cd "$tmp/plugin" && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${sanflags:+"-DCMAKE_C_FLAGS=$sanflags"} &&
   cmake --build build) \
  > "$tmp/build.log" 2>&1
check "[ $? = 0 ] && [ -f '$tmp/plugin/build/whai_lognormal.so' ]" \
  "the example builds out of tree with pkg-config datm ($(grep -m2 -i error "$tmp/build.log"))"

"$tmp/plugin/build/test_lognormal_grad" > "$tmp/grad.txt" 2>&1
check "[ $? = 0 ] && grep -q '^ok: [0-9]* checks, 0 failed' '$tmp/grad.txt'" \
  "the plugin's gradient test: $(tail -1 "$tmp/grad.txt")"

(cd "$tmp/plugin" && "$datm" run whai_lognormal.yaml -o "$tmp/run" --quiet --threads 2 train.epochs=3) \
  > "$tmp/run.log" 2>&1
check "[ $? = 0 ] && grep -q COMPLETED '$tmp/run/run.log'" "datm run the plugin's spec ($(tail -2 "$tmp/run.log"))"
sha=$(sha256sum "$tmp/plugin/build/whai_lognormal.so" | cut -d' ' -f1)
check "h5dump -a plugin '$tmp/run/result.h5' | grep -q '\"$tmp/plugin/build/whai_lognormal.so\"'" \
  "the result names the plugin file"
check "h5dump -a plugin_sha256 '$tmp/run/result.h5' | grep -q '\"$sha\"'" "and its SHA-256"
check "grep -q 'variant: whai-lognormal' '$tmp/run/spec.resolved.yaml' && grep -q 'plugin: \"$tmp/plugin/build/whai_lognormal.so\"' '$tmp/run/spec.resolved.yaml'" \
  "the resolved spec names the variant and the plugin file"

# the C API (libdatm.so) reads the plugin's run: it loads the plugin named in the run's spec
cc -std=c11 -Wall -Werror $sanflags $(pkg-config --cflags datm) "$SRC/tests/api_example.c" -o "$tmp/api_example" \
  $(pkg-config --libs datm) > "$tmp/cc.log" 2>&1
LD_LIBRARY_PATH="$lib" "$tmp/api_example" "$tmp/run" "$SRC/.cache/data/brown/test.docword.gz" \
  > "$tmp/api.txt" 2> "$tmp/api.err"
check "[ $? = 0 ] && grep -q '^api 1 variant whai-lognormal layers 2 vocab 5000' '$tmp/api.txt'" \
  "libdatm opens the plugin's run ($(head -c 200 "$tmp/api.err"))"
"$datm" infer "$tmp/run" "$SRC/.cache/data/brown/test.docword.gz" -o "$tmp/theta.csv" --layer 1 --threads 2 --quiet
want=$(sed -n '2p' "$tmp/theta.csv" | cut -d, -f2- | tr ',' ' ')
got=$(sed -n 's/^docs [0-9]* theta_1\[0\]: //p' "$tmp/api.txt")
check "[ -n '$got' ] && [ '$got' = '$want' ]" "libdatm's theta of the first test document equals datm infer's"

(cd "$tmp/plugin" && "$datm" pipeline run compare.yaml -o "$tmp/cmp" --cache "$tmp/cache" -j 2 --quiet) \
  > "$tmp/pipe.log" 2>&1
check "[ $? = 0 ]" "datm pipeline run compare.yaml ($(tail -2 "$tmp/pipe.log"))"
cat "$tmp/cmp/tables/posterior.md" 2>/dev/null
csv="$tmp/cmp/tables/posterior.csv"
check "[ \$(grep -c . '$csv') = 3 ]" "the table has a header and two rows"
check "grep -q '^whai,Weibull (built-in),' '$csv' && grep -q '^lognormal,log-normal (plugin),' '$csv'" \
  "the rows: built-in whai and the plugin's variant"
check "awk -F, 'NR > 1 { for (i = 3; i <= NF; i++) if (\$i == \"\" || \$i !~ /^-?[0-9.]+(e[-+]?[0-9]+)?\$/) bad = 1 } END { exit bad }' '$csv'" \
  "every figure of the table is a finite number"
check "awk -F, 'NR > 1 && (\$3 < 100 || \$3 > 5000) { bad = 1 } END { exit bad }' '$csv'" \
  "both perplexities lie between 100 and 5000 (Brown's unigram model: ~3130)"
(cd "$tmp/plugin" && "$datm" pipeline run compare.yaml -o "$tmp/cmp" --cache "$tmp/cache" -j 2) \
  > "$tmp/pipe2.log" 2>&1
check "[ $? = 0 ] && ! grep -q 'run started' '$tmp/pipe2.log'" "a second pipeline run trains nothing (both cached)"
exit $fail
