#!/usr/bin/env bash
# tests/fuzz/run_fuzz.sh - one libFuzzer target: replay, then fuzz for a bounded time.
#
# usage: tests/fuzz/run_fuzz.sh SECONDS build/fuzz/fuzz_NAME
#   1. replays every seed (tests/fuzz/corpus/NAME/) and every regression input
#      (tests/fuzz/regress/NAME/: crashers found earlier, kept after their fix);
#      each input is one test and must run clean under ASan+UBSan;
#   2. fuzzes for SECONDS (0: skip) on a working corpus build/fuzz/corpus/NAME (the
#      seeds are read, never written); a crash is one failed test, its input is
#      saved as build/fuzz/crashes/NAME-crash-* (copy it to tests/fuzz/regress/NAME/
#      once fixed). The execution count goes to build/fuzz/stats.txt.
# Ends with `N passed, N failed` (for tests/run.sh); exit 1 on any failure.
set -u
secs=$1
bin=$2
name=$(basename "$bin")
short=${name#fuzz_}
seeds=tests/fuzz/corpus/$short
regress=tests/fuzz/regress/$short
work=build/fuzz/corpus/$short
crashes=build/fuzz/crashes
mkdir -p "$work" "$crashes"
p=0
f=0
opts=(-timeout=10 -rss_limit_mb=2048 -max_len=4096 -close_fd_mask=3)
for d in "$seeds" "$regress"; do
  [ -d "$d" ] || continue
  for in in "$d"/*; do
    [ -f "$in" ] || continue
    if "$bin" "${opts[@]}" "$in" > "build/fuzz/replay-$short.log" 2>&1; then
      p=$((p + 1))
    else
      f=$((f + 1))
      echo "FAIL replay $in"
      grep -E 'ERROR|runtime error|SUMMARY|deadly signal' "build/fuzz/replay-$short.log" | head -n 5 | sed 's/^/    /'
    fi
  done
done
echo "$name: replayed $p inputs ($f failed) from $seeds and $regress"
if [ "$secs" -gt 0 ]; then
  log="build/fuzz/run-$short.log"
  "$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix="$crashes/$short-" "$work" "$seeds" > "$log" 2>&1
  rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  rate=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
  corp=$(find "$work" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    p=$((p + 1))
    echo "$name: ${execs:-0} executions in $secs s (${rate:-0}/s), no crash; working corpus $corp inputs"
  else
    f=$((f + 1))
    echo "FAIL $name: the fuzzer stopped with exit $rc after ${execs:-?} executions (log: $log)"
    grep -E 'ERROR|runtime error|SUMMARY|deadly signal|Test unit written' "$log" | head -n 8 | sed 's/^/    /'
  fi
  echo "$name ${execs:-0} $secs $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> build/fuzz/stats.txt
fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
