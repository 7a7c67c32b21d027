#!/usr/bin/env bash
# tests/tier.sh - one tier of the suite, for `make test` and `make check`.
#
# usage: tests/tier.sh NAME JOBS BINS-TARGET GATE...
#   Builds every program of the tier in parallel (make -jJOBS BINS-TARGET, log
#   build/logs/NAME-bins.log), then runs the gates one after another (make GATE: each
#   gate builds again what failed to build and shows why; each gate runs JOBS test
#   programs at a time), then prints each gate's time
#   and the closing line `N passed, N failed`. Exit status 1 on any failure.
set -u
name=$1 jobs=$2 bins=$3
shift 3
cd "$(dirname "$0")/.." || exit 1
mkdir -p build/logs
rm -f build/test-totals build/test-times
# the gates below add to the totals instead of starting them again (Makefile: test-begin)
export IPUP_TIER=$name RUN_JOBS=$jobs
start=$(date +%s)
echo "building the programs of 'make $name' (make -j$jobs $bins; log build/logs/$name-bins.log)"
if ! make --no-print-directory -j"$jobs" -k "$bins" > "build/logs/$name-bins.log" 2>&1; then
  echo "note: some programs did not build; the gates below build them again and show why"
fi
echo "build $(( $(date +%s) - start ))" >> build/test-times
for gate in "$@"; do
  if ! make --no-print-directory "$gate"; then
    echo "FAIL make $gate stopped (see above)"
    echo "0 1" >> build/test-totals
  fi
done
echo "make $name took $(( $(date +%s) - start )) s"
tests/total.sh
