#!/usr/bin/env bash
# ci/readme_keys.sh [DATM_BIN]: regenerate README.md's spec-key reference from the schema
# tables (`datm describe --all --markdown`), between the spec-keys markers.
# With --check: exit 1 if README.md is out of date (used by tests/test_readme_keys.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
datm="${1:-${DATM_BIN:-build/datm}}"
keys=$("$datm" describe --all --markdown)
new=$(awk -v keys="$keys" '
  /<!-- BEGIN spec-keys/ { print; print keys; skip = 1; next }
  /<!-- END spec-keys/   { skip = 0 }
  !skip { print }' README.md)
if [ $check = 1 ]; then
  if [ "$new" != "$(cat README.md)" ]; then
    echo "README.md spec-key reference is out of date: run bash ci/readme_keys.sh" >&2
    exit 1
  fi
  exit 0
fi
printf '%s\n' "$new" > README.md
