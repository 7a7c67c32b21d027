#!/usr/bin/env bash
# tests/run.sh - runs test binaries and shell tests, sums their closing lines.
#
# usage: tests/run.sh LABEL [WRAPPER...] -- BINARY...
#   Each BINARY (a test program or a tests/test_*.sh script) must end its output
#   with a line `N passed, N failed`. The WRAPPER words (e.g. valgrind ...) are
#   put in front of each binary. A binary that crashes or prints no closing line
#   counts as one failed test. Totals are appended to build/test-totals, the time
#   this call took (seconds) to build/test-times. RUN_JOBS=N runs N binaries at a
#   time (default 1).
set -u
label=$1; shift
wrap=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do wrap+=("$1"); shift; done
shift || true
mkdir -p build/logs
tp=0; tf=0
start=$(date +%s)
jobs=${RUN_JOBS:-1}
# Runs one binary into its log; its exit status and seconds go to LOG.rc.
run_one() {
  local bin=$1 log=$2 t0 rc
  t0=$(date +%s)
  if [ "${#wrap[@]}" -gt 0 ]; then "${wrap[@]}" "$bin" >"$log" 2>&1; rc=$?
  else "$bin" >"$log" 2>&1; rc=$?; fi
  echo "$rc $(( $(date +%s) - t0 ))" > "$log.rc"
}
# RUN_JOBS binaries at a time (tests/tier.sh sets it to the core count); the results
# are printed in the order given, when all have finished.
for bin in "$@"; do
  log="build/logs/$label-$(basename "$bin").log"
  rm -f "$log.rc"
  if [ "$jobs" -le 1 ]; then run_one "$bin" "$log"; continue; fi
  run_one "$bin" "$log" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait
for bin in "$@"; do
  name=$(basename "$bin")
  log="build/logs/$label-$name.log"
  read -r rc secs < "$log.rc" || { rc=1; secs=0; }
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then p=0; f=1
  else p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}; fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$f" -ne 0 ]; then
    printf 'FAIL [%s] %s (exit %d): %s\n' "$label" "$name" "$rc" "${line:-no closing line}"
    grep -E '^(FAIL|    )|ERROR SUMMARY: [1-9]|runtime error|Sanitizer|WARNING: ThreadSanitizer|Possible data race' "$log" | head -n 30
    echo "  (full log: $log)"
  else
    printf 'ok   [%s] %s: %s (%d s)\n' "$label" "$name" "$line" "$secs"
  fi
  tp=$((tp + p)); tf=$((tf + f))
done
echo "$tp $tf" >> build/test-totals
# the gate's time, for the table that tests/total.sh prints
echo "$label $(( $(date +%s) - start ))" >> build/test-times
