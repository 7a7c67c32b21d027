#!/usr/bin/env bash
# tests/run.sh - runs test binaries and shell tests, sums their closing lines.
#
# usage: tests/run.sh LABEL [WRAPPER...] -- BINARY...
#   Each BINARY (a test program or a tests/test_*.sh script) must end its output
#   with a line `N passed, N failed`. The WRAPPER words (e.g. valgrind ...) are
#   put in front of each binary. A binary that crashes or prints no closing line
#   counts as one failed test. Totals are appended to build/test-totals, the time
#   this call took (seconds) to build/test-times.
set -u
label=$1; shift
wrap=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do wrap+=("$1"); shift; done
shift || true
mkdir -p build/logs
tp=0; tf=0
start=$(date +%s)
for bin in "$@"; do
  name=$(basename "$bin")
  log="build/logs/$label-$name.log"
  t0=$(date +%s)
  if [ "${#wrap[@]}" -gt 0 ]; then "${wrap[@]}" "$bin" >"$log" 2>&1; rc=$?
  else "$bin" >"$log" 2>&1; rc=$?; fi
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then p=0; f=1
  else p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}; fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$f" -ne 0 ]; then
    printf 'FAIL [%s] %s (exit %d): %s\n' "$label" "$name" "$rc" "${line:-no closing line}"
    grep -E '^(FAIL|    )|ERROR SUMMARY: [1-9]|runtime error|Sanitizer|WARNING: ThreadSanitizer|Possible data race' "$log" | head -n 30
    echo "  (full log: $log)"
  else
    printf 'ok   [%s] %s: %s (%d s)\n' "$label" "$name" "$line" "$(( $(date +%s) - t0 ))"
  fi
  tp=$((tp + p)); tf=$((tf + f))
done
echo "$tp $tf" >> build/test-totals
# the gate's time, for the table that tests/total.sh prints
echo "$label $(( $(date +%s) - start ))" >> build/test-times
