#!/bin/bash
# ctest-labels: e2e  ctest-timeout: 300
# tests/test_bad_inputs.sh: the bad-input table. Every row feeds datm one malformed input (a
# spec, an override, a data file, a result or checkpoint file, an output place, an argument)
# and asserts: the exit code (2 spec or usage error, 1 anything else), a message naming the
# place (file:line, the key, the path), no crash, no sanitizer report, no HDF5 handle left
# open; and where a run was refused, nothing written (no run directory, a finished run
# untouched). Rows on data run both `datm check` and `datm run`: check must reject whatever
# run rejects before training. The output is the table (class | input | outcome | message).
. "$(dirname "$0")/fault_lib.sh"
fault_init bad_inputs
chmod 755 "$tmp"
n=0

# t CLASS 'input' EXIT 'PATTERN' CMD...: one row
t() {
  local cls=$1 what=$2 want=$3 pat=$4; shift 4
  n=$((n + 1))
  local e="$tmp/err.$n"
  "$@" > "$e.out" 2> "$e"; local rc=$?
  cat "$e.out" >> "$e"
  row "$cls" "$what" "$want" "$rc" "$e" "$pat"
}
# tr CLASS 'input' EXIT 'PATTERN' ARGS...: `datm check` and then `datm run` with ARGS (the spec
# and overrides): both reject with the message, and the run leaves no directory behind
tr_() {
  local cls=$1 what=$2 want=$3 pat=$4; shift 4
  n=$((n + 1))
  local out="$tmp/out.$n" e="$tmp/err.$n"
  $datm check "$@" --quiet > /dev/null 2> "$e.check"; local rc1=$?
  $datm run "$@" -o "$out" --quiet 2> "$e"; local rc=$?
  if [ $rc1 != $rc ]; then echo "check exited $rc1, run $rc" >> "$e"; rc=99; fi
  grep -qE -- "$pat" "$e.check" || { echo "check's message lacks /$pat/" >> "$e"; rc=98; }
  if [ -e "$out/result.h5" ]; then echo "a result was written" >> "$e"; rc=97; fi
  if [ "$want" = 2 ] && [ -e "$out" ]; then echo "the run directory was created" >> "$e"; rc=96; fi
  if [ "$want" = 1 ] && [ -e "$out/result.h5.part" ] && [ "$(status "$out/result.h5.part")" != FAILED ]; then
    echo "the refused run is not marked FAILED" >> "$e"; rc=95; fi
  row "$cls" "$what" "$want" "$rc" "$e" "$pat"
}
spec() { printf "%b" "$2" > "$tmp/$1.yaml"; echo "$tmp/$1.yaml"; }
base="name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  epochs: 1\n  batch_size: 20\nevaluate:\n  samples: 2\n"

# ================= spec files =================
tr_ spec "YAML syntax error (unclosed [)" 2 "s1.yaml:[0-9]+:[0-9]+" "$(spec s1 "${base}model:\n  layers: [8, 4\n")"
tr_ spec "tab for indentation" 2 "s2.yaml:[0-9]+" "$(spec s2 "data:\n\tdataset: x\n")"
tr_ spec "unknown top-level key" 2 "s3.yaml:1:1: .*sed.*did you mean .seed." "$(spec s3 "sed: 1\n${base}")"
tr_ spec "unknown key in train:" 2 "s4.yaml:7:3: unknown key .epoch. in section .train. \\(did you mean .epochs.\\?\\)" "$(spec s4 "name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  epoch: 2\n")"
tr_ spec "string for an integer" 2 "s5.yaml:[0-9]+:[0-9]+: train.epochs" "$(spec s5 "name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  epochs: many\n")"
tr_ spec "fraction for an integer" 2 "s6.yaml:[0-9]+:[0-9]+: train.epochs" "$(spec s6 "name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  epochs: 1.5\n")"
tr_ spec "epochs: 0 (below range)" 2 "s7.yaml:[0-9]+:[0-9]+: train.epochs: value 0 is out of range" "$(spec s7 "name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  epochs: 0\n")"
tr_ spec "negative batch_size" 2 "train.batch_size" "$(spec s8 "name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  batch_size: -5\n")"
tr_ spec "unknown variant" 2 "s9.yaml:[0-9]+:[0-9]+: .*whia.*did you mean .whai." "$(spec s9 "data:\n  dataset: $corpus\nmodel:\n  variant: whia\n")"
tr_ spec "model.variant missing" 2 "s10.yaml.*variant" "$(spec s10 "data:\n  dataset: $corpus\nmodel:\n  layers: [4]\n")"
tr_ spec "data.dataset missing" 2 "s11.yaml.*data.dataset" "$(spec s11 "model:\n  variant: unigram\n")"
tr_ spec "duplicate key" 2 "s12.yaml:[0-9]+:[0-9]+.*seed" "$(spec s12 "seed: 1\nseed: 2\n${base}")"
tr_ spec "empty file" 2 "s13.yaml" "$(spec s13 "")"
tr_ spec "NUL byte in the file" 2 "s14.yaml: contains a NUL byte" "$(spec s14 "seed: 1\0\n${base}")"
tr_ spec "obs_fraction 1.5" 2 "data.obs_fraction: value 1.5 is out of range" "$(spec s15 "${base}")" data.obs_fraction=1.5
tr_ spec "protocol not a choice" 2 "data.protocol.*heldout-docs" "$(spec s16 "${base}")" data.protocol=heldout
tr_ spec "seed -1" 2 "seed: value -1 is out of range" "$(spec s17 "${base}")" seed=-1
tr_ spec "threads 5000" 2 "threads: value 5000 is out of range" "$(spec s18 "${base}")" threads=5000
tr_ spec "boolean 'maybe'" 2 "train.shuffle" "$(spec s19 "${base}")" train.shuffle=maybe
tr_ spec "list for a scalar" 2 "s20.yaml:[0-9]+:[0-9]+: train.epochs" "$(spec s20 "name: bad\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\ntrain:\n  epochs: [1, 2]\n")"
tr_ spec "mapping for a scalar" 2 "s21.yaml:1:1: .*seed: expected a value, got a mapping" "$(spec s21 "seed: {a: 1}\n${base}")"
tr_ spec "layers: [] (model's own check)" 2 "s22.yaml:[0-9]+:[0-9]+.*model.layers" "$(spec s22 "data:\n  dataset: $corpus\nmodel:\n  variant: whai\n  layers: []\n")"
tr_ spec "layers with a negative width" 2 "model.layers" "$(spec s23 "data:\n  dataset: $corpus\nmodel:\n  variant: whai\n  layers: [8, -1]\n")"
tr_ spec "kl_weight: 3 values for 2 layers" 2 "s24.yaml:[0-9]+:[0-9]+: model whai: model.kl_weight has 3 values" "$(spec s24 "data:\n  dataset: $corpus\nmodel:\n  variant: whai\n  layers: [8, 4]\n  kl_weight: [1, 1, 1]\n")"
tr_ spec "sdatm-n unsup_epochs >= train.epochs (a rule across sections)" 2 "s29.yaml:[0-9]+:[0-9]+: model sdatm-n: model.unsup_epochs: 4 is not below train.epochs \\(3\\)" "$(spec s29 "data:\n  dataset: $corpus\nmodel:\n  variant: sdatm-n\n  layers: [8]\n  unsup_epochs: 4\ntrain:\n  epochs: 3\n")"
tr_ spec "undefined YAML alias" 2 "s25.yaml" "$(spec s25 "seed: *nothere\n${base}")"
tr_ spec "two YAML documents" 2 "s26.yaml" "$(spec s26 "${base}---\nseed: 2\n")"
tr_ spec "a top-level list" 2 "s27.yaml" "$(spec s27 "- a\n- b\n")"
tr_ spec "section given a scalar" 2 "s28.yaml:[0-9]+:[0-9]+: .*train.*section" "$(spec s28 "seed: 1\ntrain: 5\ndata:\n  dataset: $corpus\nmodel:\n  variant: unigram\n")"
t spec "spec file missing" 1 "$tmp/none.yaml: cannot open spec file" $datm run "$tmp/none.yaml" -o "$tmp/o_none"
mkdir -p "$tmp/specdir.yaml"
t spec "spec path is a directory" 1 "specdir.yaml" $datm run "$tmp/specdir.yaml" -o "$tmp/o_dir"
head -c 3000000 /dev/zero | tr '\0' '#' > "$tmp/huge.yaml"
t spec "spec larger than the limit" 2 "huge.yaml: larger than" $datm check "$tmp/huge.yaml"

# ================= overrides =================
S=$(spec ov "${base}")
tr_ override "'=5' (no key)" 2 "override '=5'" "$S" =5
tr_ override "'train..epochs=5'" 2 "override 'train..epochs=5'" "$S" train..epochs=5
tr_ override "'train.epochs.x=5' (into a scalar)" 2 "override 'train.epochs.x=5'" "$S" train.epochs.x=5
tr_ override "'nosuch.key=1'" 2 "override 'nosuch.key=1'.*nosuch" "$S" nosuch.key=1
tr_ override "'train.epochs=' (empty)" 2 "override 'train.epochs='" "$S" train.epochs=
tr_ override "'train.epochs=abc'" 2 "override 'train.epochs=abc': train.epochs" "$S" train.epochs=abc
tr_ override "'model.layers=[8,' (unclosed)" 2 "override 'model.layers=\\[8,'" "$S" model.variant=whai "model.layers=[8,"
tr_ override "'model.layers=[a,b]'" 2 "model.layers" "$S" model.variant=whai "model.layers=[a,b]"
tr_ override "'~train.nosuch' (remove unknown)" 2 "override '~train.nosuch'" "$S" "~train.nosuch"
tr_ override "'~' alone" 2 "override '~'" "$S" "~"
tr_ override "'seed=1e99'" 2 "override 'seed=1e99'.*seed" "$S" seed=1e99
tr_ override "'train.batch_size=99999999999999999999'" 2 "train.batch_size" "$S" train.batch_size=99999999999999999999
tr_ override "'data.dataset=' (empty data set)" 1 "override 'data.dataset=': data.dataset is empty" "$S" data.dataset=
tr_ override "'.train.epochs=1' (leading dot)" 2 "override '.train.epochs=1'" "$S" .train.epochs=1
tr_ override "'train.epochs=1=2'" 2 "override 'train.epochs=1=2'" "$S" train.epochs=1=2
tr_ override "'model.variant=whai2'" 2 "whai2.*did you mean" "$S" model.variant=whai2
tr_ override "'train.epochs=-3'" 2 "train.epochs: value -3 is out of range" "$S" train.epochs=-3
many=(); for i in $(seq 70); do many+=("seed=$i"); done
t override "70 overrides (more than 62)" 2 "too many overrides" $datm check "$S" "${many[@]}"

# ================= docword =================
# bad_set NAME: a copy of the tiny corpus whose train.docword the row then writes (plain)
bad_set() { cp -r "$corpus" "$tmp/$1"; rm -f "$tmp/$1/train.docword.gz"; echo "$tmp/$1"; }
dw() {   # dw NAME 'what' 'PATTERN' CONTENT (printf %b): a row on a bad train.docword
  local d; d=$(bad_set "$1"); printf "%b" "$4" > "$d/train.docword"
  tr_ docword "$2" 1 "$3" "$S" data.dataset="$d"
}
dw d1 "empty file" "train.docword:1: empty file" ""
dw d2 "header D not an integer" "train.docword:1: header: D \\(documents\\) must be an integer" "x\n60\n1\n1 1 1\n"
dw d3 "header of two fields" "train.docword:[0-9]+: header" "3 60\n1 1 1\n"
dw d4 "fewer entries than NNZ" "train.docword:[0-9]+: file ends after 2 entries but the header says NNZ = 3" "3\n60\n3\n1 1 1\n2 2 2\n"
dw d5 "more entries than NNZ" "train.docword:6: more entries than NNZ = 2" "3\n60\n2\n1 1 1\n2 2 2\n3 3 3\n"
dw d6 "doc id 0" "train.docword:4: doc id 0 out of range" "3\n60\n1\n0 1 1\n"
dw d7 "doc id beyond D" "train.docword:4: doc id 4 out of range 1..3" "3\n60\n1\n4 1 1\n"
dw d8 "word id beyond W" "train.docword:4: word id 61 out of range 1..60" "3\n60\n1\n1 61 1\n"
dw d9 "count 0" "train.docword:4: count 0 must be a positive integer" "3\n60\n1\n1 1 0\n"
dw d10 "negative count" "train.docword:4: count -2 must be a positive integer" "3\n60\n1\n1 1 -2\n"
dw d11 "fractional count" "train.docword:4: count '1.5' is not an integer" "3\n60\n1\n1 1 1.5\n"
dw d12 "duplicate (doc, word)" "train.docword:5: duplicate entry \\(doc 1, word 2\\), first at line 4" "3\n60\n2\n1 2 1\n1 2 3\n"
dw d13 "duplicate, unsorted" "train.docword:6: duplicate entry \\(doc 1, word 2\\), first at line 4" "3\n60\n3\n1 2 1\n3 1 1\n1 2 3\n"
dw d14 "extra field" "train.docword:4: unexpected '9' after 'doc word count'" "3\n60\n1\n1 1 1 9\n"
dw d15 "blank line among entries" "train.docword:5: empty line among the entries" "3\n60\n2\n1 1 1\n\n2 2 2\n"
dw d16 "D = 2000000000, 2 entries" "train.docword: header: D = 2000000000 documents, but only 2 have an entry" "2000000000\n60\n2\n1 1 1\n2 2 2\n"
dw d17 "NNZ larger than D x W" "train.docword:3: header: NNZ = 1000 exceeds D x W" "2\n3\n1000\n1 1 1\n"
dw d18 "W = 0" "train.docword:2: header: W \\(vocabulary size\\) must be an integer >= 1" "2\n0\n0\n"
dw d19 "count 2^25 (not exact in float)" "train.docword:4: count 33554432 exceeds 16777216" "3\n60\n1\n1 1 33554432\n"
dw d20 "binary junk line" "train.docword:4: doc id" "3\n60\n1\n\x01\x02\x03\n"
dw d21 "header line with trailing text" "train.docword:1: header: W \\(vocabulary size\\) must be an integer >= 1, found 'docs'" "3 docs\n60\n1\n1 1 1\n"
d=$(bad_set d22); zcat "$corpus/train.docword.gz" | gzip -n | head -c 300 > "$d/train.docword.gz"
tr_ docword "truncated gzip" 1 "train.docword.gz:[0-9]+: truncated or corrupt gzip data" "$S" data.dataset="$d"
d=$(bad_set d23); cp "$corpus/train.docword.gz" "$d/"; printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' | dd of="$d/train.docword.gz" bs=1 seek=200 conv=notrunc 2> /dev/null
tr_ docword "corrupt gzip bytes" 1 "train.docword.gz:[0-9]+: (truncated or corrupt gzip data|doc id|word id|count|duplicate|expected)" "$S" data.dataset="$d"
d=$(bad_set d24); mkdir "$d/train.docword"
tr_ docword "train.docword is a directory" 1 "train.docword.gz: not found" "$S" data.dataset="$d"
d=$(bad_set d25); zcat "$corpus/train.docword.gz" > "$d/train.docword"
zcat "$corpus/test.docword.gz" | awk 'NR == 2 { $1 = 61 } { print }' | gzip -n > "$d/test.docword.gz"
tr_ docword "test split with another W (61 vs vocab.txt 60)" 1 "vocab.txt:60: file ends after 60 lines, expected 61" "$S" data.dataset="$d" evaluate.classify=true
d=$(bad_set d26); zcat "$corpus/train.docword.gz" > "$d/train.docword"
zcat "$corpus/test.docword.gz" > "$d/test_obs.docword"; zcat "$corpus/train.docword.gz" > "$d/test_heldout.docword"; rm -f "$d"/*.labels
tr_ docword "test_obs and test_heldout of different lengths" 1 "test_obs has 30 documents, test_heldout 120" "$S" data.dataset="$d" data.protocol=heldout-docs
tr_ docword "heldout-docs without its files" 1 "data.protocol heldout-docs: .* has no test_obs/test_heldout" "$S" data.protocol=heldout-docs

# ================= vocab =================
vb() {   # vb NAME 'what' 'PATTERN' CONTENT: a row on a bad vocab.txt
  local d; d=$(bad_set "$1"); cp "$corpus/train.docword.gz" "$d/"; printf "%b" "$4" > "$d/vocab.txt"
  tr_ vocab "$2" 1 "$3" "$S" data.dataset="$d"
}
vb v1 "59 words for W = 60" "vocab.txt:[0-9]+: file ends after 59 lines, expected 60" "$(seq -f 'w%g' 1 59 | tr '\n' '#' | sed 's/#/\\n/g')"
vb v2 "61 words for W = 60" "vocab.txt:61: more than the expected 60 lines" "$(seq -f 'w%g' 1 61 | tr '\n' '#' | sed 's/#/\\n/g')"
vb v3 "blank line inside" "vocab.txt:3: empty line" "w1\nw2\n\nw4\n"
vb v4 "empty file" "vocab.txt:1: empty file" ""
vb v5 "a word twice" "vocab.txt:7: 'w2' repeats line 2" "$(seq -f 'w%g' 1 6 | tr '\n' '#' | sed 's/#/\\n/g')w2\n$(seq -f 'w%g' 8 60 | tr '\n' '#' | sed 's/#/\\n/g')"

# ================= labels and classes =================
lb() {   # lb NAME 'what' 'PATTERN' FILE CONTENT
  local d; d=$(bad_set "$1"); cp "$corpus/train.docword.gz" "$d/"; printf "%b" "$5" > "$d/$4"
  tr_ labels "$2" 1 "$3" "$S" data.dataset="$d" evaluate.classify=true
}
labs() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) print i % 3 }' | tr '\n' '#' | sed 's/#/\\n/g'; }
lb l1 "label not an integer" "train.labels:2: label 'x' is not an integer" train.labels "0\nx\n$(labs 118)"
lb l2 "negative label" "train.labels:1: label -1" train.labels "-1\n$(labs 119)"
lb l3 "label 3 with 3 classes" "train.labels:1: label 3 out of range 0..2" train.labels "3\n$(labs 119)"
lb l4 "119 labels for 120 documents" "train.labels:[0-9]+: file ends after 119 labels, expected 120" train.labels "$(labs 119)"
lb l5 "121 labels for 120 documents" "train.labels:121: more labels than the 120 documents" train.labels "$(labs 121)"
lb l6 "blank line" "train.labels:2: empty line" train.labels "0\n\n$(labs 119)"
lb l7 "classes.txt empty" "classes.txt:1: empty file" classes.txt ""
d=$(bad_set l8); cp "$corpus/train.docword.gz" "$d/"; rm "$d/classes.txt"; awk '{ print ($1 == 2 ? 1 : $1) }' "$corpus/train.labels" > "$d/train.labels"
tr_ labels "test class unseen in training (no classes.txt)" 1 "test.labels:[0-9]+: class 2, but the training labels have 2 classes" "$S" data.dataset="$d" evaluate.classify=true
lb l9 "label 1e3" "train.labels:1: label '1e3' is not an integer" train.labels "1e3\n$(labs 119)"

# ================= data sets =================
tr_ dataset "name not found (did you mean)" 1 "data.dataset: data set 'tinyy' not found" "$S" data.dataset=tinyy
tr_ dataset "path is a file" 1 "data.dataset" "$S" data.dataset="$S"
mkdir -p "$tmp/emptyset"
tr_ dataset "directory without train.docword" 1 "emptyset/train.docword.gz: not found" "$S" data.dataset="$tmp/emptyset"
tr_ dataset "batch_size > N with drop_last" 1 "train.batch_size 500 with drop_last leaves no mini-batch" "$S" train.batch_size=500 train.drop_last=true
tr_ memory "a model larger than the machine" 1 "out of memory: .* GB" "$S" model.variant=whai "model.layers=[1000000,1000000]"

# ================= output places of a run =================
$datm run "$S" -o "$tmp/done" --quiet 2> /dev/null
sum=$(md5sum < "$tmp/done/result.h5")
t output "run -o a COMPLETED run" 1 "$tmp/done holds a COMPLETED run.*--overwrite" $datm run "$S" -o "$tmp/done"
t output "check -o a COMPLETED run" 1 "$tmp/done holds a COMPLETED run" $datm check "$S" -o "$tmp/done"
DATM_TEST_SIGINT_AT_ITER=3 $datm run "$spec_w" -o "$tmp/intr" --quiet 2> /dev/null
t output "run -o an INTERRUPTED run" 1 "unfinished run \\(status INTERRUPTED, checkpoint after iteration 3\\): continue it with 'datm resume $tmp/intr'" $datm run "$spec_w" -o "$tmp/intr"
mkdir -p "$tmp/foreign"; echo notes > "$tmp/foreign/notes.txt"
t output "run -o a directory of other files" 1 "$tmp/foreign holds 'notes.txt', which datm did not write" $datm run "$S" -o "$tmp/foreign"
mkdir -p "$tmp/stage.new"; echo "/x" > "$tmp/stage.new/replaces.txt"
t output "run -o an --overwrite run's staging dir" 1 "replacement being written by an --overwrite run" $datm run "$S" -o "$tmp/stage.new"
long="$tmp/$(printf 'a%.0s' $(seq 1100))"
t output "run -o a 1100-character path" 2 "the directory path is too long" $datm run "$S" -o "$long" --quiet
t output "run -o a path with a quote" 2 "holds '\"'" $datm run "$S" -o "$tmp/a\"b" --quiet
check '[ "$(md5sum < "$tmp/done/result.h5")" = "$sum" ] && [ -f "$tmp/foreign/notes.txt" ] && [ "$(ls "$tmp/foreign")" = notes.txt ]' \
      "  refused outputs: the COMPLETED run and the foreign directory are untouched"

# ================= result and checkpoint files read by the other commands =================
docs="$corpus/test.docword.gz"
mkdir -p "$tmp/junk"; echo "not hdf5" > "$tmp/junk/result.h5"; cp "$tmp/done/spec.resolved.yaml" "$tmp/junk/"
t result "compare: result.h5 is text" 1 "$tmp/junk/result.h5: not an HDF5 file" $datm compare "$tmp/done" "$tmp/junk"
t result "topics: result.h5 is text" 1 "$tmp/junk/result.h5: not an HDF5 file" $datm topics "$tmp/junk"
t result "figures: result.h5 is text" 1 "$tmp/junk/result.h5: not an HDF5 file" $datm figures "$tmp/junk"
t result "infer: result.h5 is text" 1 "$tmp/junk/result.h5: not an HDF5 file" $datm infer "$tmp/junk" "$docs" -o "$tmp/i1.csv"
mkdir -p "$tmp/trunc"; cp "$tmp/done/spec.resolved.yaml" "$tmp/trunc/"; head -c 3000 "$tmp/done/result.h5" > "$tmp/trunc/result.h5"
t result "compare: truncated result.h5" 1 "$tmp/trunc/result.h5: cannot open HDF5 file \\(hdf5: .*truncated file" $datm compare "$tmp/done" "$tmp/trunc"
t result "check-metrics: truncated result.h5" 1 "$tmp/trunc/result.h5" $datm check-metrics "$tmp/trunc" --baseline "$DATM_SOURCE_DIR/results/baselines/brown-unigram.yaml"
: > "$tmp/empty.h5"
t result "topics: empty result file" 1 "empty.h5: not an HDF5 file" $datm topics "$tmp/empty.h5"
t result "compare: missing run" 1 "$tmp/nothere" $datm compare "$tmp/done" "$tmp/nothere"
printf 'metrics:\n  perplexity: {value: abc}\n' > "$tmp/bad_base.yaml"
t result "check-metrics: malformed baseline" 2 "bad_base.yaml" $datm check-metrics "$tmp/done" --baseline "$tmp/bad_base.yaml"
$datm run "$spec_w" -o "$tmp/w" --quiet 2> /dev/null
awk 'NR == 2 { $1 = 61 } { print }' <(zcat "$docs") > "$tmp/wide.docword"
t result "infer: documents with more words than the model" 1 "wide.docword: 61 words, but the model of $tmp/w has a vocabulary of 60" $datm infer "$tmp/w" "$tmp/wide.docword" -o "$tmp/i2.csv"
t result "infer: documents file malformed" 1 "spec.resolved.yaml:[0-9]+: header|yaml:1: header" $datm infer "$tmp/w" "$tmp/w/spec.resolved.yaml" -o "$tmp/i3.csv"
t result "infer: --layer 3 of a 2-layer model" 1 "--layer 3: the model has 2 layers" $datm infer "$tmp/w" "$docs" -o "$tmp/i4.csv" --layer 3
mkdir -p "$tmp/nomodel"; cp "$tmp/w/spec.resolved.yaml" "$tmp/nomodel/"; cp "$tmp/w/result.h5" "$tmp/nomodel/"
h5dump -H "$tmp/nomodel/result.h5" > /dev/null
python3 -c "import h5py" 2> /dev/null && python3 -c "
import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f: del f['model']" "$tmp/nomodel/result.h5" &&
t result "infer: result without /model" 1 "nomodel/result.h5.*model" $datm infer "$tmp/nomodel" "$docs" -o "$tmp/i5.csv"
t result "ensemble of an unsupervised run" 1 "model whai has no class prediction of its own" $datm ensemble "$tmp/w" -o "$tmp/ens"
t result "resume: directory without a run" 1 "$tmp/emptyset is not a run directory" $datm resume "$tmp/emptyset"
mkdir -p "$tmp/badspec"; cp -r "$tmp/intr/." "$tmp/badspec/"; echo "model: [" >> "$tmp/badspec/spec.resolved.yaml"
t result "resume: damaged spec.resolved.yaml" 2 "badspec/spec.resolved.yaml:[0-9]+" $datm resume "$tmp/badspec"
t result "fork: no checkpoint after iteration 7" 1 "$tmp/intr: no checkpoint after iteration 7" $datm fork "$tmp/intr" -o "$tmp/f1" --iteration 7
t result "fork: another layer shape" 1 "phi_1|shape" $datm fork "$tmp/intr" -o "$tmp/f2" "model.layers=[9,4]"
t result "fork: into an existing run" 2 "exists and is not empty" $datm fork "$tmp/intr" -o "$tmp/done"
t result "infer -o onto the run's result.h5" 2 "is an input of this command" $datm infer "$tmp/w" "$docs" -o "$tmp/w/result.h5" --overwrite
zcat "$docs" > "$tmp/docs.csv"
t result "infer -o onto the documents" 2 "is an input of this command" $datm infer "$tmp/w" "$tmp/docs.csv" -o "$tmp/docs.csv" --overwrite
touch "$tmp/exists.csv"
t result "infer -o onto an existing file" 1 "exists.csv exists; it is left as it is" $datm infer "$tmp/w" "$docs" -o "$tmp/exists.csv"
mkdir -p "$tmp/in_text/a"; echo "some words here" > "$tmp/in_text/a/t.txt"
t result "corpus build --out onto its input" 2 "lies in the input|holds the input" $datm corpus build --input "$tmp/in_text" --out "$tmp/in_text/out"
t result "corpus build --out onto a data set" 1 "is not empty \\(it holds" $datm corpus build --input "$tmp/done" --out "$corpus"
t result "ensemble -o onto a member" 2 "also a member" $datm ensemble "$tmp/w" -o "$tmp/w"
check '[ ! -s "$tmp/exists.csv" ] && [ -f "$corpus/train.docword.gz" ] && [ "$(md5sum < "$tmp/done/result.h5")" = "$sum" ]' \
      "  refused outputs: the existing file, the data set and the finished runs are untouched"

# ================= command lines =================
t args "unknown command" 2 "unknown command 'rnu'" $datm rnu
t args "run without a spec" 2 "usage: datm run" $datm run
t args "--threads -1" 2 "threads" $datm run "$S" --threads -1 -o "$tmp/a1"
t args "--threads abc" 2 "threads" $datm run "$S" --threads abc -o "$tmp/a2"
t args "-o without a value" 2 "-o needs a directory" $datm run "$S" -o
t args "unknown option" 2 "unknown option '--frobnicate'" $datm run "$S" --frobnicate
t args "infer --samples x" 2 "--samples 'x': expected a whole number" $datm infer "$tmp/w" "$docs" -o "$tmp/i6.csv" --samples x
t args "infer -o without .h5/.csv" 2 "must end in .h5 or .csv" $datm infer "$tmp/w" "$docs" -o "$tmp/i7.txt"
t args "corpus build without --input" 2 "--input and --out are required" $datm corpus build --out "$tmp/cb"
t args "describe an unknown variant" 2 "whia" $datm describe whia
t args "sweep with a bad range" 2 "range" $datm sweep "$S" "seed=range(5,1,0)" -o "$tmp/sw"
t args "resume --overwrite" 2 "--overwrite is for 'datm run'" $datm resume "$tmp/intr" --overwrite
t args "fork --iteration -3" 2 "--iteration '-3' is not a mini-batch count" $datm fork "$tmp/intr" -o "$tmp/f3" --iteration -3

echo "rows: $checks"
exit $fail
