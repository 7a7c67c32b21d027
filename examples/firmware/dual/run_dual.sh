#!/usr/bin/env bash
# run_dual.sh ELF SINGLE_LOG QEMU-COMMAND... - runs the dual-core firmware (dual_main.h) in
# QEMU under a time limit and checks what it printed: exit 0 and FIRMWARE DUAL OK (its own
# checks: the plain loop's bits after 2 steps, the same final weights on two cores and on
# one, the loss halved, the accuracy), the per-core instruction lines, and, when the
# single-core firmware's log SINGLE_LOG exists (make firmware-run writes it), the same
# final weights as that run on the Cortex-M4F.
set -uo pipefail
elf=$1; single=$2; shift 2
log=$(dirname "$elf")/run.log
limit=${FW_TIMEOUT:-120}
start=$(date +%s)
timeout "$limit" "$@" -kernel "$elf" </dev/null >"$log" 2>&1
rc=$?
grep -v '^step [0-9]* loss' "$log"
fail() { echo "FAIL firmware-dual-run: $*"; echo "  (log: $log)"; exit 1; }
[ "$rc" -eq 124 ] && fail "QEMU did not finish within ${limit}s (FW_TIMEOUT)"
[ "$rc" -ne 0 ] && fail "the firmware exited with status $rc (its own checks failed or it faulted)"
grep -q '^FIRMWARE DUAL OK' "$log" || fail "no 'FIRMWARE DUAL OK' line"
grep -q '^core 1 released' "$log" || fail "core 1 did not start"
n=$(grep -c '^step [0-9]* loss [0-9.]* instructions core 0 [0-9]* core 1 [0-9]*$' "$log")
[ "$n" -gt 0 ] || fail "no per-core instruction lines"
dual=$(sed -n 's/^final weights FNV-1a \([0-9a-f]*\) (two cores).*/\1/p' "$log")
[ -n "$dual" ] || fail "no final weights line"
if [ -f "$single" ]; then
  one=$(sed -n 's/^final weights FNV-1a \([0-9a-f]*\) (expf.*/\1/p' "$single" | tail -n 1)
  [ "$one" = "$dual" ] || fail "two cores trained to $dual, the single-core firmware ($single) to $one"
  echo "firmware-dual-run: the same final weights as the single-core Cortex-M4F run ($single): $dual"
fi
echo "firmware-dual-run: OK in $(( $(date +%s) - start )) s ($n steps on two cores)"
