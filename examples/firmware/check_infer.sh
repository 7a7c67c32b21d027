#!/usr/bin/env bash
# check_infer.sh ELF EXPECT QEMU-COMMAND... - runs the inference-only firmware (infer.c)
# in QEMU under a time limit and checks that its held-out classes and the FNV-1a hash of
# all its output bits are exactly those of ipup_predict on the host (EXPECT, written by
# gen_infer.c with the portable kernels); prints the image's size.
set -uo pipefail
elf=$1; expect=$2; shift 2
log=$(dirname "$elf")/infer.log
limit=${FW_TIMEOUT:-300}
start=$(date +%s)
timeout "$limit" "$@" -kernel "$elf" </dev/null >"$log" 2>&1
rc=$?
cat "$log"
fail() { echo "FAIL firmware-infer: $*"; echo "  (log: $log, expected: $expect)"; exit 1; }
[ "$rc" -eq 124 ] && fail "QEMU did not finish within ${limit}s (FW_TIMEOUT)"
[ "$rc" -ne 0 ] && fail "the firmware exited with status $rc"
grep -q '^INFER OK' "$log" || fail "no 'INFER OK' line"
pick() { grep -E '^(classes |output FNV-1a |correct )' "$1" | sed 's/, instructions.*//'; }
[ -n "$(pick "$expect")" ] || fail "$expect holds no expected lines"
diff <(pick "$expect") <(pick "$log") > "$log.diff" || { cat "$log.diff"; fail "the firmware's predictions differ from ipup_predict's on the host"; }
echo "firmware-infer: classes of $(grep -c '' < <(pick "$log" | grep '^classes')) lines, $(sed -n 's/^correct \([0-9/]*\).*/\1/p' "$log") right," \
     "and $(grep '^output' "$log") identical to ipup_predict on the host (portable kernels), in $(( $(date +%s) - start )) s"
arm-none-eabi-size "$elf"
nm=arm-none-eabi-nm
img=$($nm -S -t d "$elf" | awk '$4 ~ /^fw_test_[xy]$/ {s += $2} END {print s + 0}')
wts=$($nm -S -t d "$elf" | awk '$4 ~ /^fw_net_[wb][0-9]+$/ {s += $2} END {print s + 0}')
text=$(arm-none-eabi-size -A -d "$elf" | awk '$1 == ".text" {print $2}')
echo "firmware-infer: flash .text $text bytes = held-out images and labels $img + exported weights $wts" \
     "+ code and constants $((text - img - wts))"
