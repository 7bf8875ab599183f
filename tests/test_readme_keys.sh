# ctest-labels: unit  ctest-timeout: 30
# README.md's spec-key reference must equal what the schema tables generate.
set -euo pipefail
bash "$DATM_SOURCE_DIR/ci/readme_keys.sh" --check "$DATM_BIN"
