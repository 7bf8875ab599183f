#!/usr/bin/env python3
"""ci/params_read.py [SOURCE_DIR]: every key of every parameter table is read by the code.

The tables (X-macros, engine/pipeline/params.h) generate a typed struct per section or model;
a row whose struct field nothing reads is a key that a spec can set to no effect. For each
DATM_PARAMS_STRUCT / DATM_PARAMS_DECLARE(S, TABLE), this expands TABLE's rows (tables compose
by concatenation), finds every variable or member declared with type S in engine/ and
models/, and requires for each row's field F a read `v.F` or `v->F` (not an assignment) of
one of them somewhere in those sources, or a read of the key by name from a stored resolved
spec (datm_flat_get(.., "section.key"): engine/io reads a result's spec, below the typed
layer). Keys whose only use is to be kept are listed in KEPT with the reason. A static check of references: it proves the value
reaches code, not what that code does with it (tests/test_config_keys.sh checks that keys
kept only for spec hashes are refused at other values). Exit 1 naming each unread key.
"""
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
files = {}
for top in ("engine", "models"):
    for dirpath, _, names in os.walk(os.path.join(src, top)):
        for n in names:
            if n.endswith((".c", ".h")):
                p = os.path.join(dirpath, n)
                with open(p, encoding="utf-8", errors="replace") as f:
                    files[p] = f.read()

def logical_lines(text):
    return re.sub(r"\\\n", " ", text).split("\n")

# table name -> body of its #define (rows X(...) and other tables T(X))
tables = {}
for text in files.values():
    for line in logical_lines(text):
        m = re.match(r"\s*#\s*define\s+([A-Z0-9_]+)\(X\)\s*(.*)$", line)
        if m:
            tables[m.group(1)] = m.group(2)

def fields(table, seen=()):
    if table not in tables or table in seen:
        sys.exit(f"params_read: table {table} not found")
    body = tables[table]
    out = [(m.group(1), m.group(2)) for m in re.finditer(r"\bX\(\s*(\w+)\s*,\s*(\"[^\"]*\")", body)]
    for m in re.finditer(r"\b([A-Z0-9_]+)\(X\)", body):
        out += fields(m.group(1), seen + (table,))
    return out

structs = {}
for text in files.values():
    for m in re.finditer(r"DATM_PARAMS_(?:STRUCT|DECLARE)\((\w+),\s*(\w+)\)", text):
        if m.group(1) != "name":
            structs[m.group(1)] = m.group(2)
if len(structs) < 10:
    sys.exit(f"params_read: only {len(structs)} parameter structs found under {src}")

# keys whose use is to be stored with the results, not to steer the computation
KEPT = {"datm_run_params.description":
        "free text kept with the results (spec.resolved.yaml, result.h5 /spec, the report)"}

alltext = "\n".join(files.values())
# every read v.f / v->f of the sources (an assignment v.f = ... is not a read), and every key
# read by name from a stored spec
reads = set(re.findall(r"(?=\b(\w+)\s*(?:\.|->)\s*(\w+)\b(?!\s*=[^=]))", alltext))
flat_keys = {k.rsplit(".", 1)[-1]
             for k in re.findall(r"datm_flat_get\([^,()]+,\s*\"([\w.]+)\"", alltext)}
bad, n_keys = [], 0
for s, table in sorted(structs.items()):
    # variables, parameters and members of type s (or pointers to it)
    names = set(re.findall(r"\b" + s + r"\s*(?:const\s*)?\*?\s*(?:const\s+)?(\w+)\s*[;,=)\[]",
                           alltext))
    names.discard("name")
    rows = fields(table)
    n_keys += len(rows)
    if not names:
        bad.append(f"{s}: no variable of this type")
        continue
    for field, key in rows:
        k = key.strip('"')
        if f"{s}.{field}" in KEPT or k.rsplit(".", 1)[-1] in flat_keys and \
                re.search(r"datm_flat_get\([^,()]+,\s*\"(?:[\w.]+\.)?" + re.escape(k) + r"\"", alltext):
            continue
        if not any((v, field) in reads for v in names):
            bad.append(f"{s}.{field} (key {key} of {table}): never read")
for b in bad:
    print("params_read: " + b)
print(f"params_read: {len(structs)} tables, {n_keys} keys, {len(bad)} unread")
sys.exit(1 if bad else 0)
