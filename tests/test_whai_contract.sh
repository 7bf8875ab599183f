#!/bin/bash
# ctest-labels: unit  ctest-timeout: 60
# tests/test_whai_contract.sh: the variants built on WHAI (every models/*.c but WHAI's own
# whai.c and whai_chunks.c) change WHAI's state only through the functions models/whai.h
# lists (whai_set_*, whai_replace_encoder, whai_chain_reset_top_m) and read its chain only
# through the const views there (whai_encoder, whai_encoder_weights, whai_adam,
# whai_decoder, ...), so the compiler rejects a write through what they read. Checked here:
# - no variant file names a member of whai_model that leads to mutable memory (the chain
#   ch, the encoder enc, the workspace ws, the augmentation and chunk buffers, the hooks);
# - no variant file assigns to a member of a whai_model (w->x = ..., old->x++, s->w->x += ...)
#   or of the chain a hook is given (c->x = ...).
. "$(dirname "$0")/testlib.sh"   # check
SRC=${DATM_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
fail=0
mapfile -t files < <(ls "$SRC"/models/*.c | grep -vE '/whai(_chunks)?\.c$')
check '[ ${#files[@]} -ge 10 ]' "${#files[@]} variant files under models/"
who='(->w|\<w|\<w2|\<old)->'
members=$(grep -nE "$who(ch|enc|ws|theta_d|gchain|in_val|r_f|chunks|hooks)\>" "${files[@]}")
check '[ -z "$members" ]' "no variant names whai_model's chain, encoder, workspace or buffers${members:+:
$members}"
# the left side starts a statement's expression (not an index: maps[old->L] = ... is no write)
lhs="(^|[^[A-Za-z0-9_>-])([A-Za-z_][A-Za-z0-9_]*->w->|\<w->|\<w2->|\<old->|\<c->)[][A-Za-z0-9_.> *+-]*"
writes=$(grep -nE "$lhs([-+*/]?=[^=]|\+\+|--)" "${files[@]}" | grep -vE "$lhs(==|!=|<=|>=)")
check '[ -z "$writes" ]' "no variant assigns to a member of whai_model or of a hook's chain${writes:+:
$writes}"
# the pattern finds a write when there is one (a guard against a pattern that matches nothing)
probe=$(printf '    s->w->N = 3;\n    old->iteration++;\n    c->gbn->t += 1;\n' |
        grep -cE "$lhs([-+*/]?=[^=]|\+\+|--)")
check '[ "$probe" = 3 ]' "the write pattern finds the 3 writes of a probe ($probe)"
exit $fail
