#!/usr/bin/env bash
# ci/skip_report.sh NAME=JUNIT.xml ...: what the test runs of ci/test.sh did not check. For
# each CTest JUnit file (ctest --output-junit) it prints how many tests were skipped (exit 77)
# and, per skipped test, the reason the test printed (its first output line starting with
# "skip", else its last line), then one closing line over all files:
#   ci: P passed, F failed, S skipped
# A test skips only when its data are absent: see README.md ("Tests") for which may.
set -euo pipefail
total_p=0 total_f=0 total_s=0
for arg in "$@"; do
  name=${arg%%=*} file=${arg#*=}
  if [ ! -f "$file" ]; then
    echo "skip report: $file missing ($name run did not finish)"
    total_f=$((total_f + 1))
    continue
  fi
  # one record per testcase: name, status, failure flag, reason (XML entities decoded)
  read -r n f s < <(awk '
    /<testsuite / { in_suite = 1 }
    in_suite && /^[ \t]*tests="/ { gsub(/[^0-9]/, ""); t = $0 }
    in_suite && /^[ \t]*failures="/ { gsub(/[^0-9]/, ""); f = $0 }
    in_suite && /^[ \t]*skipped="/ { gsub(/[^0-9]/, ""); s = $0 }
    /^[ \t]*>/ { in_suite = 0 }
    END { print t + 0, f + 0, s + 0 }' "$file")
  total_p=$((total_p + n - f - s)) total_f=$((total_f + f)) total_s=$((total_s + s))
  echo "skipped tests ($name): $s of $n"
  awk -v run="$name" '
    function dec(x) {
      gsub(/&lt;/, "<", x); gsub(/&gt;/, ">", x); gsub(/&quot;/, "\"", x)
      gsub(/&apos;/, "\047", x); gsub(/&amp;/, "\\&", x); return x
    }
    /<testcase / {
      tc = $0; sub(/.*<testcase name="/, "", tc); sub(/".*/, "", tc)
      notrun = ($0 ~ /status="notrun"/); out = 0; reason = ""; last = ""
    }
    notrun && /<system-out>/ { out = 1; sub(/.*<system-out>/, "") }
    notrun && out {
      line = $0; end = sub(/<\/system-out>.*/, "", line)
      if (line != "") { last = line; if (reason == "" && tolower(line) ~ /^skip/) reason = line }
      if (end) out = 0
    }
    notrun && /<\/testcase>/ {
      r = reason != "" ? reason : (last != "" ? last : "(no reason printed)")
      printf "  %s: %s\n", tc, dec(r)
      notrun = 0
    }' "$file"
done
echo "ci: $total_p passed, $total_f failed, $total_s skipped"
