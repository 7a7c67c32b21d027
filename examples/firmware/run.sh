#!/usr/bin/env bash
# run.sh ELF QEMU-COMMAND... - runs the firmware in QEMU under a time limit and checks
# what it printed: it must exit 0 (its own checks passed), the loss must fall and the
# held-out accuracy must reach FW_MIN_ACC percent (default 75).
set -uo pipefail
elf=$1; shift
log=$(dirname "$elf")/run.log
min_acc=${FW_MIN_ACC:-75}
limit=${FW_TIMEOUT:-300}
start=$(date +%s)
timeout "$limit" "$@" -kernel "$elf" </dev/null >"$log" 2>&1
rc=$?
cat "$log"
fail() { echo "FAIL firmware-run: $*"; echo "  (log: $log)"; exit 1; }
[ "$rc" -eq 124 ] && fail "QEMU did not finish within ${limit}s (FW_TIMEOUT)"
[ "$rc" -ne 0 ] && fail "the firmware exited with status $rc (its own checks failed or it faulted)"
grep -q '^FIRMWARE OK' "$log" || fail "no 'FIRMWARE OK' line"
acc=$(sed -n 's/^held-out accuracy .* = \([0-9.]*\)%.*/\1/p' "$log" | tail -n 1)
[ -n "$acc" ] || fail "no 'held-out accuracy' line"
awk -v a="$acc" -v m="$min_acc" 'BEGIN { exit !(a + 0 >= m + 0) }' || fail "held-out accuracy $acc% is below $min_acc%"
# loss falling: mean of the last 8 printed step losses below half the mean of the first 8
awk '/^step [0-9]+ .*loss/ { for (i = 1; i < NF; i++) if ($i == "loss") l[n++] = $(i + 1) }
     END { if (n < 16) exit 1; for (i = 0; i < 8; i++) { f += l[i]; e += l[n - 1 - i] }
           printf "firmware-run: mean loss of the first 8 steps %.4f, of the last 8 %.4f\n", f / 8, e / 8
           exit !(e < 0.5 * f) }' "$log" || fail "the loss did not fall to half over the run"
# the state saved after half the steps, restored after a re-init ("reboot"): the resumed
# run's final weights have the uninterrupted run's bits (main.c fw_reboot_and_resume)
grep -q '^state saved after step [0-9]*: [0-9]* bytes in [0-9]* pages of' "$log" || fail "no 'state saved' line"
line=$(grep '^state restore:' "$log" | tail -n 1)
[ -n "$line" ] || fail "no 'state restore' line"
resumed=$(sed -n 's/.*resumed \([0-9a-f]*\),.*/\1/p' <<<"$line")
uninterrupted=$(sed -n 's/.*uninterrupted \([0-9a-f]*\):.*/\1/p' <<<"$line")
[ -n "$resumed" ] && [ "$resumed" = "$uninterrupted" ] ||
  fail "the run restored from its saved state ended with weights $resumed, the uninterrupted run with $uninterrupted"
final=$(sed -n 's/^final weights FNV-1a \([0-9a-f]*\).*/\1/p' "$log" | tail -n 1)
[ "$final" = "$uninterrupted" ] || fail "the uninterrupted hash $uninterrupted is not the final weights' $final"
echo "firmware-run: state saved, restored after a re-init, final weights identical ($resumed)"
echo "firmware-run: OK in $(( $(date +%s) - start )) s (held-out accuracy $acc% >= $min_acc%)"
