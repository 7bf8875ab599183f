#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_api_install.sh: the installed library. `cmake --install` into a scratch prefix
# puts bin/datm, lib/libdatm.{so,a}, include/datm.h and lib/pkgconfig/datm.pc in place; a
# small C program (tests/api_example.c) builds against it with
# `pkg-config --cflags --libs datm` and, on a WHAI trained here on Brown:
# - prints the run's variant, layers and vocabulary as the result file has them;
# - names the same top words of topic 1 as `datm topics`;
# - infers the same layer-1 theta of the first test document as `datm infer` (bit for bit:
#   the same code through the API);
# and libdatm.so exports exactly the functions include/datm.h declares.
set -u
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${DATM_BUILD_DIR:-$SRC/build}
datm=${DATM_BIN:-$BUILD/datm}
[ -x "$datm" ] || { echo "skipped: $datm not built"; exit 77; }
for t in pkg-config cc; do
  command -v $t > /dev/null || { echo "FAIL: $t missing (ci/setup.sh installs it)"; exit 1; }
done
brown=$SRC/.cache/data/brown
[ -f "$brown/test.docword.gz" ] || { echo "FAIL: $brown missing: run bash ci/setup.sh"; exit 1; }
. "$SRC/tests/testlib.sh"
fail=0
tmp=$(mktemp -d /tmp/datm_test_api_XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$BUILD" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1
check "[ $? = 0 ]" "cmake --install into a scratch prefix"
lib=$(ls -d "$tmp"/prefix/lib*/ | head -1)
for f in bin/datm include/datm.h include/datm_model.h include/datm_base.h; do check "[ -f '$tmp/prefix/$f' ]" "installed $f"; done
for f in libdatm.so libdatm.a pkgconfig/datm.pc; do check "[ -e '$lib$f' ]" "installed lib/$f"; done

# exported symbols == the functions of the headers (datm_base.h, datm.h; datm_model.h, the plugin ABI:
# its functions and extern tables, but the entry point a plugin defines)
nm -D --defined-only "$lib/libdatm.so" | awk '$3 !~ /^DATM_/ {sub(/@.*/, "", $3); print $3}' | sort > "$tmp/exported"
{ grep -ohE '\b(datm|whai|variant)_[A-Za-z0-9_]*\s*\(' "$SRC/include/datm_base.h" "$SRC/include/datm.h" "$SRC/include/datm_model.h" | tr -d ' ('
  sed -n 's/^extern const [a-z_]* *\([a-z_]*\).*/\1/p' "$SRC/include/datm_model.h"
} | grep -vx datm_plugin_register | sort -u > "$tmp/declared"
check "cmp -s '$tmp/exported' '$tmp/declared'" \
  "libdatm.so exports the headers' $(wc -l < "$tmp/declared") functions and tables and nothing else"

export PKG_CONFIG_PATH="$lib/pkgconfig"
san=$(datm_test_sanitize "$BUILD")   # a sanitized libdatm.so: the example takes the same runtime
sanflags=${san:+-fsanitize=$san -fno-omit-frame-pointer}
cc -std=c11 -Wall -Werror $sanflags $(pkg-config --cflags datm) "$SRC/tests/api_example.c" -o "$tmp/example" \
  $(pkg-config --libs datm) > "$tmp/cc.log" 2>&1
check "[ $? = 0 ]" "the example builds with pkg-config --cflags --libs datm ($(head -3 "$tmp/cc.log"))"

"$datm" run "$SRC/experiments/brown/whai.yaml" -o "$tmp/run" --quiet --threads 2 \
  "model.layers=[16,8]" "model.kl_weight=[0.1,0.01]" "model.eta=[]" train.epochs=1 train.eval_every=0 \
  model.aug_gibbs_burn=0 model.aug_gibbs_collect=0 evaluate.samples=2 evaluate.classify=false \
  output.figures=false output.report=false > "$tmp/run.log" 2>&1
check "[ $? = 0 ]" "a small WHAI trains on Brown"
LD_LIBRARY_PATH="$lib" "$tmp/example" "$tmp/run" "$brown/test.docword.gz" > "$tmp/out.txt" 2> "$tmp/err.txt"
check "[ $? = 0 ]" "the example runs ($(cat "$tmp/err.txt"))"
cat "$tmp/out.txt"
check "grep -qx 'api 1 variant whai layers 2 vocab 5000' '$tmp/out.txt'" "variant, layers and vocabulary"
words=$(sed -n 's/^topic 1: //p' "$tmp/out.txt")
check "[ -n '$words' ] && echo \"\$(\"$datm\" topics '$tmp/run' --layer 1 --all --top 5 2>/dev/null)\" | grep -q -- \"$words\"" \
  "the top words of topic 1 ($words) are datm topics' ones"
"$datm" infer "$tmp/run" "$brown/test.docword.gz" -o "$tmp/theta.csv" --layer 1 --threads 2 --quiet
want=$(sed -n '2p' "$tmp/theta.csv" | cut -d, -f2- | tr ',' ' ')
got=$(sed -n 's/^docs [0-9]* theta_1\[0\]: //p' "$tmp/out.txt")
check "[ -n '$got' ] && [ '$got' = '$want' ]" "layer-1 theta of the first document equals datm infer's"
exit $fail
