#!/bin/bash
# ctest-labels: unit  ctest-timeout: 300
# tests/test_plugin_load.sh: loading model plugins (engine/plugin, models/registry.c). Plugins
# are compiled here with cc against include/datm_model.h alone (tests/plugin_bad.c, one
# fault per switch; examples/plugin/whai_lognormal.c as the good one). Checked:
# - each loading error's message: file missing (--plugin, model.plugin in a spec with its
#   file:line:col), not a shared object, no entry point, the model API version of the entry
#   point and of a variant's table (both numbers), a variant named like a built-in one, a
#   schema default outside its bounds, a key given twice;
# - a plugin built for model API version 1 (its table ends at destroy) still loads and its
#   table is not read past destroy; a version-2 variant's check op refuses a spec at
#   validation (datm check, pipeline --dry), the message located at the key;
# - `datm models` marks built-in and loaded variants; --plugin, model.plugin and the
#   directories of DATM_PLUGIN_PATH each load; describe prints a plugin's keys;
# - the datm binary exports exactly the plugin ABI (engine/plugin/datm_plugin.dynlist = the
#   functions and tables of include/datm_model.h);
# - a plugin's file and SHA-256 go into the resolved spec; the spec hash and the pipeline
#   cache key follow the plugin's content, not its path;
# - a variant of its own (tests/plugin_unigram.c) trains, evaluates, saves and loads through
#   the ABI alone, with the built-in unigram's perplexity; `pipeline run --plugin` passes the
#   plugin on to the runs it starts.
set -u
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
datm=${DATM_BIN:-$SRC/build/datm}
[ -x "$datm" ] || { echo "skipped: $datm not built"; exit 77; }
command -v cc > /dev/null || { echo "FAIL: cc missing (ci/setup.sh installs it)"; exit 1; }
. "$SRC/tests/testlib.sh"
fail=0
tmp=$(mktemp -d /tmp/datm_test_plugin_load_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset DATM_PLUGIN_PATH

build() {   # build OUT.so [cc flags...]: a plugin from tests/plugin_bad.c
    local out=$1; shift
    cc -std=c11 -shared -fPIC -Wall -I"$SRC/include" "$@" "$SRC/tests/plugin_bad.c" -o "$out" 2> "$tmp/cc.log" ||
        { echo "FAIL: cc $*: $(head -3 "$tmp/cc.log")"; fail=1; }
}
mkdir -p "$tmp/good" "$tmp/copy" "$tmp/o0"
build "$tmp/good/test_variant.so"
build "$tmp/noentry.so" -DNO_ENTRY
build "$tmp/version.so" -DBAD_VERSION
build "$tmp/opsversion.so" -DBAD_OPS_VERSION
build "$tmp/clash.so" -DCLASH -DNAME='"whai"'
build "$tmp/schema.so" -DBAD_SCHEMA
build "$tmp/dupkey.so" -DDUP_KEY
build "$tmp/checkop.so" -DCHECK_OP -DNAME='"check-variant"'
build "$tmp/v1.so" -DV1_TABLE -DNAME='"v1-variant"'
echo "not a plugin" > "$tmp/text.so"
cc -std=c11 -shared -fPIC -O2 -I"$SRC/include" "$SRC/examples/plugin/whai_lognormal.c" -o "$tmp/good/whai_lognormal.so" -lm
cp "$tmp/good/whai_lognormal.so" "$tmp/copy/whai_lognormal.so"
cc -std=c11 -shared -fPIC -O0 -I"$SRC/include" "$SRC/examples/plugin/whai_lognormal.c" -o "$tmp/o0/whai_lognormal.so" -lm

# expect NAME 'REGEX' CMD...: CMD fails (exit 1 or 2) and its stderr matches REGEX
expect() {
    local what=$1 re=$2; shift 2
    "$@" > "$tmp/out" 2> "$tmp/err"
    local rc=$?
    check "[ $rc = 1 -o $rc = 2 ] && grep -qE -- \"\$re\" '$tmp/err'" "$what (exit $rc: $(head -c 300 "$tmp/err"))"
}
expect "file missing" "^datm: --plugin: plugin 'nope.so': no such file \(looked for nope.so\b" \
  "$datm" models --plugin nope.so
expect "not a shared object" "^datm: --plugin: plugin $tmp/text.so: not a shared object \(no ELF header" \
  "$datm" models --plugin "$tmp/text.so"
cp "$SRC/tests/plugin_bad.c" "$tmp/elf.so"; cc -c -fPIC -I"$SRC/include" "$SRC/tests/plugin_bad.c" -o "$tmp/elf.so"
expect "an ELF object that is not a shared object" "plugin $tmp/elf.so: not a loadable shared object: .*elf.so" \
  "$datm" models --plugin "$tmp/elf.so"
expect "no entry point" "plugin $tmp/noentry.so: no entry point: the file does not export datm_plugin_register\(\)" \
  "$datm" models --plugin "$tmp/noentry.so"
expect "api_version of the entry point (both numbers)" \
  "plugin $tmp/version.so: built for model API version 101, this datm takes versions 1 to 3 \(rebuild it" \
  "$datm" models --plugin "$tmp/version.so"
expect "api_version of a variant's table (both numbers)" \
  "plugin $tmp/opsversion.so: variant test-variant: built for model API version 4, this datm takes versions 1 to 3" \
  "$datm" run "$SRC/experiments/brown/whai.yaml" --plugin "$tmp/opsversion.so"
expect "a variant named like a built-in one" \
  "plugin $tmp/clash.so: variant 'whai' clashes with the built-in variant of that name \(give it another name\)" \
  "$datm" describe whai --plugin "$tmp/clash.so"
expect "a schema default outside its bounds" \
  "plugin $tmp/schema.so: variant test-variant: schema: schema default of model.alpha: value 5 is out of range \[0.0, 1.0\]" \
  "$datm" models --plugin "$tmp/schema.so"
expect "a schema key given twice" \
  "plugin $tmp/dupkey.so: variant test-variant: schema row 2: key 'alpha' is given twice \(rows 1 and 2\)" \
  "$datm" models --plugin "$tmp/dupkey.so"
expect "a clash between two plugins names the first one's file" \
  "variant 'whai-lognormal' clashes with the loaded variant of that name from $tmp/good/whai_lognormal.so" \
  "$datm" models --plugin "$tmp/good/whai_lognormal.so" --plugin "$tmp/o0/whai_lognormal.so"
expect "DATM_PLUGIN_PATH: a bad file in a plugin directory is named" \
  "^datm: DATM_PLUGIN_PATH \($tmp\): plugin $tmp/clash.so: variant 'whai' clashes" \
  env DATM_PLUGIN_PATH="$tmp" "$datm" models
expect "--plugin without a path" "^datm: --plugin needs the path of a plugin file" "$datm" models --plugin

# model.plugin in a spec: located at the key, relative to the spec's folder
spec="$tmp/spec/lognormal.yaml"
mkdir -p "$tmp/spec"
sed "s|plugin: build/whai_lognormal.so|plugin: missing/whai_lognormal.so|" \
  "$SRC/examples/plugin/whai_lognormal.yaml" > "$spec"
line=$(grep -n 'plugin:' "$spec" | cut -d: -f1)
expect "model.plugin: file missing, at the key's file:line:col" \
  "^$spec:$line:11: model.plugin: plugin 'missing/whai_lognormal.so': no such file \(looked for $tmp/spec/missing/whai_lognormal.so" \
  "$datm" check "$spec"
expect "model.plugin given as an override: not a shared object, named by the override" \
  "^override 'model.plugin=$tmp/text.so': model.plugin: plugin $tmp/text.so: not a shared object" \
  "$datm" check "$spec" model.plugin="$tmp/text.so"

# loading that works
"$datm" models --plugin "$tmp/good/whai_lognormal.so" > "$tmp/models.txt" 2>&1
check "grep -qE '^whai +built-in ' '$tmp/models.txt'" "datm models marks whai built-in"
check "grep -qE '^whai-lognormal +plugin .*\($tmp/good/whai_lognormal.so\)$' '$tmp/models.txt'" \
  "datm models marks whai-lognormal as a plugin with its file"
DATM_PLUGIN_PATH="/nonexistent:$tmp/good" "$datm" models > "$tmp/models2.txt" 2>&1
check "grep -qE '^test-variant +plugin ' '$tmp/models2.txt' && grep -qE '^whai-lognormal +plugin ' '$tmp/models2.txt'" \
  "every *.so of a DATM_PLUGIN_PATH directory is loaded"
"$datm" describe whai-lognormal --plugin "$tmp/good/whai_lognormal.so" > "$tmp/describe.txt" 2>&1
check "grep -q 'model.k_min .*default 0.5' '$tmp/describe.txt'" "describe prints the plugin's keys with its own defaults"
"$datm" describe --all --markdown > /dev/null 2>&1
check "[ $? = 0 ]" "describe --all without plugins"

# the binary exports exactly the plugin ABI
nm -D --defined-only "$datm" | awk '{print $3}' | grep -v '@' | grep -v '^__' | sort > "$tmp/exe_syms"
{ grep -ohE '\b(datm|whai|variant)_[A-Za-z0-9_]*\s*\(' "$SRC/include/datm_base.h" "$SRC/include/datm_model.h" | tr -d ' ('
  sed -n 's/^extern const [a-z_]* *\([a-z_]*\).*/\1/p' "$SRC/include/datm_model.h"
} | grep -vx datm_plugin_register | sort -u > "$tmp/abi"
check "cmp -s '$tmp/exe_syms' '$tmp/abi'" "datm exports the $(wc -l < "$tmp/abi") functions and tables of datm_model.h and nothing else ($(diff "$tmp/exe_syms" "$tmp/abi" | head -3 | tr '\n' ' '))"

# a version-1 plugin loads (its table is read up to destroy); a check op refuses at validation
printf 'data:\n  dataset: brown\nmodel:\n  variant: v1-variant\n' > "$tmp/spec/v1.yaml"
"$datm" check "$tmp/spec/v1.yaml" --spec-only --quiet --plugin "$tmp/v1.so" > /dev/null 2> "$tmp/err"
check "[ $? = 0 ]" "a plugin built for model API version 1 loads and its spec validates ($(head -c 300 "$tmp/err"))"
printf 'data:\n  dataset: brown\nmodel:\n  variant: check-variant\n  alpha: 0.95\n' > "$tmp/spec/cv.yaml"
expect "a check op refuses at spec validation, located at the key" \
  "^$tmp/spec/cv.yaml:5:10: model check-variant: model.alpha: 0.95: check-variant takes at most 0.9" \
  "$datm" check "$tmp/spec/cv.yaml" --spec-only --plugin "$tmp/checkop.so"
"$datm" check "$tmp/spec/cv.yaml" --spec-only --quiet --plugin "$tmp/checkop.so" model.alpha=0.5 > /dev/null 2> "$tmp/err"
check "[ $? = 0 ]" "a value the check op takes passes ($(head -c 300 "$tmp/err"))"
printf 'name: cv\nout: out\nruns:\n  - id: ok\n    spec: cv.yaml\n    overrides: [model.alpha=0.5]\n  - id: high\n    spec: cv.yaml\n' > "$tmp/spec/cvpipe.yaml"
expect "pipeline --dry: a row the check op refuses is named" \
  "run 'high' \(spec [^)]*cv.yaml\): $tmp/spec/cv.yaml:5:10: model check-variant: model.alpha" \
  "$datm" pipeline run "$tmp/spec/cvpipe.yaml" --dry --cache "$tmp/cache" --plugin "$tmp/checkop.so"

# resolved spec, spec hash and pipeline cache key
cp "$SRC/examples/plugin/whai_lognormal.yaml" "$tmp/spec/lognormal.yaml"
hash_of() { "$datm" check "$tmp/spec/lognormal.yaml" model.plugin="$1" 2> "$tmp/check.err" | tee "$tmp/check.out" | sed -n 's/^# spec_hash: //p'; }
ha=$(hash_of "$tmp/good/whai_lognormal.so")
check "grep -q \"^  plugin: \\\"$tmp/good/whai_lognormal.so\\\"\" '$tmp/check.out'" "the resolved spec names the plugin file ($(cat "$tmp/check.err"))"
hb=$(hash_of "$tmp/copy/whai_lognormal.so")
hc=$(hash_of "$tmp/o0/whai_lognormal.so")
check "[ -n '$ha' ] && [ '$ha' = '$hb' ]" "the same plugin content at another path: the same spec hash"
check "[ -n '$hc' ] && [ '$ha' != '$hc' ]" "another plugin content: another spec hash"
cat > "$tmp/spec/pipe.yaml" <<EOP
name: plugin-key
out: out
runs:
  - id: ln
    spec: lognormal.yaml
    overrides: [model.plugin=PLUGIN]
EOP
key_of() {
    sed "s|PLUGIN|$1|" "$tmp/spec/pipe.yaml" > "$tmp/spec/pipe_k.yaml"
    "$datm" pipeline run "$tmp/spec/pipe_k.yaml" --dry --cache "$tmp/cache" 2>&1 | grep -oE '\b[0-9a-f]{12,64}\b' | head -1
}
ka=$(key_of "$tmp/good/whai_lognormal.so"); kb=$(key_of "$tmp/copy/whai_lognormal.so"); kc=$(key_of "$tmp/o0/whai_lognormal.so")
check "[ -n '$ka' ] && [ '$ka' = '$kb' ] && [ '$ka' != '$kc' ]" \
  "pipeline cache key: same plugin content same key ($ka, $kb), another content another key ($kc)"
# a variant of its own (tests/plugin_unigram.c: every contract function, no WHAI) trains,
# evaluates, saves and loads through the ABI: its perplexity is the built-in unigram's (the
# same closed form of the same counts), and `datm infer` loads it from the result
cc -std=c11 -shared -fPIC -Wall -Werror -I"$SRC/include" "$SRC/tests/plugin_unigram.c" -o "$tmp/unigram.so" -lm 2> "$tmp/cc.log"
check "[ $? = 0 ]" "tests/plugin_unigram.c builds with the installed header alone ($(head -3 "$tmp/cc.log"))"
brown_ok=0; [ -f "$SRC/.cache/data/brown/train.docword.gz" ] && brown_ok=1
check "[ $brown_ok = 1 ]" ".cache/data/brown (bash ci/setup.sh builds it)"
common=(--quiet --threads 2 output.figures=false output.report=false evaluate.classify=false)
DATM_DATA="$SRC/.cache/data" "$datm" run "$SRC/experiments/brown/unigram.yaml" -o "$tmp/u_builtin" "${common[@]}" > "$tmp/u1.log" 2>&1
DATM_DATA="$SRC/.cache/data" "$datm" run "$SRC/experiments/brown/unigram.yaml" -o "$tmp/u_plugin" "${common[@]}" \
  --plugin "$tmp/unigram.so" model.variant=plugin-unigram > "$tmp/u2.log" 2>&1
check "[ $? = 0 ]" "the from-scratch plugin trains on Brown ($(tail -2 "$tmp/u2.log"))"
p1=$(sed -n 's/^ *"perplexity": \([^,]*\),*$/\1/p' "$tmp/u_builtin/metrics.json")
p2=$(sed -n 's/^ *"perplexity": \([^,]*\),*$/\1/p' "$tmp/u_plugin/metrics.json")
check "[ -n '$p1' ] && [ '$p1' = '$p2' ]" "its perplexity equals the built-in unigram's ($p2 vs $p1)"
check "h5dump -d /model/phi_1 -A 0 '$tmp/u_plugin/result.h5' > /dev/null 2>&1" "its save() wrote /model/phi_1"
DATM_DATA="$SRC/.cache/data" "$datm" infer "$tmp/u_plugin" "$SRC/.cache/data/brown/test.docword.gz" -o "$tmp/u_theta.csv" --quiet > "$tmp/u3.log" 2>&1
check "[ $? = 0 ] && [ \$(grep -c . '$tmp/u_theta.csv') -gt 500 ]" "datm infer loads it from the result ($(tail -1 "$tmp/u3.log"))"
# `datm pipeline run --plugin P`: the `datm run` processes it starts load P too
cat > "$tmp/spec/pu.yaml" <<EOP
name: pu
out: out
runs:
  - id: pu
    spec: $SRC/experiments/brown/unigram.yaml
    overrides: [model.variant=plugin-unigram, output.figures=false, output.report=false]
EOP
DATM_DATA="$SRC/.cache/data" "$datm" pipeline run "$tmp/spec/pu.yaml" --plugin "$tmp/unigram.so" \
  -o "$tmp/pu_out" --cache "$tmp/pu_cache" --quiet > "$tmp/pu.log" 2>&1
check "[ $? = 0 ] && grep -q '\"perplexity\": $p1' '$tmp/pu_out/runs/pu/metrics.json'" \
  "pipeline run --plugin: its runs load the plugin ($(tail -2 "$tmp/pu.log"))"
exit $fail
