#!/usr/bin/env bash
# run_kws.sh ELF QEMU-COMMAND... - checks the keyword-spotting firmware image (kws.c): what
# it links (no heap, stdio, assert printing or threads), its sizes (text/data/bss), then
# runs it in QEMU under a time limit and checks what it printed: exit 0 (its own checks
# passed: the frozen body unchanged, the host's bits), KWS OK, the frozen body's hash
# unchanged, the held-out accuracy on speaker B up by KWS_MIN_GAIN points (default 30), the
# RAM and instructions-per-sample lines.
set -uo pipefail
elf=$1; shift
log=$(dirname "$elf")/kws.log
limit=${FW_TIMEOUT:-300}
min_gain=${KWS_MIN_GAIN:-30}
fail() { echo "FAIL firmware-kws: $*"; echo "  (log: $log)"; exit 1; }
bad='^(malloc|_malloc_r|free|_free_r|calloc|_calloc_r|realloc|_realloc_r|memalign|_sbrk|_sbrk_r|'
bad+='sbrk|printf|fprintf|vfprintf|_vfprintf_r|_svfprintf_r|iprintf|puts|fputs|fwrite|_fwrite_r|'
bad+='putchar|__assert_func|__assert|abort|pthread_.*|__sync_.*|__atomic_.*)$'
found=$(arm-none-eabi-nm "$elf" | awk '{print $NF}' | grep -E "$bad" || true)
[ -z "$found" ] ||
  fail "the image links forbidden symbols (heap/stdio/assert/threads): ${found//$'\n'/ }"
echo "firmware-kws: no heap, stdio or thread symbol linked"
arm-none-eabi-size "$elf"
data=$(arm-none-eabi-nm -S -t d "$elf" |
       awk '$4 ~ /^kws_(weights|shots_[xy]|test_[xy])$/ {s += $2} END {print s + 0}')
echo "firmware-kws: of .text, $data bytes are the pre-trained weights and speaker B's samples"
start=$(date +%s)
timeout "$limit" "$@" -kernel "$elf" </dev/null >"$log" 2>&1
rc=$?
cat "$log"
[ "$rc" -eq 124 ] && fail "QEMU did not finish within ${limit}s (FW_TIMEOUT)"
[ "$rc" -ne 0 ] && fail "the image exited with status $rc (its own checks failed or it faulted)"
grep -q '^KWS OK' "$log" || fail "no 'KWS OK' line"
grep -q '^same bits as the host' "$log" || fail "no 'same bits as the host' line"
before=$(sed -n 's/^speaker B held-out accuracy before fine-tuning .* = \([0-9.]*\)%.*/\1/p' "$log")
after=$(sed -n 's/^speaker B held-out accuracy after fine-tuning .* = \([0-9.]*\)%.*/\1/p' "$log")
if [ -z "$before" ] || [ -z "$after" ]; then fail "no accuracy lines"; fi
awk -v b="$before" -v a="$after" -v g="$min_gain" 'BEGIN { exit !(a - b >= g) }' \
  || fail "the accuracy rose from $before% to $after%, less than $min_gain points"
b0=$(sed -n 's/^frozen body before FNV-1a \([0-9a-f]*\).*/\1/p' "$log")
b1=$(sed -n 's/^frozen body after  FNV-1a \([0-9a-f]*\).*/\1/p' "$log")
if [ -z "$b0" ] || [ "$b0" != "$b1" ]; then fail "the frozen body's hash changed: $b0 -> $b1"; fi
hash=$(sed -n 's/^final weights FNV-1a \([0-9a-f]*\).*/\1/p' "$log")
ram=$(sed -n 's/^RAM: .*; total \([0-9]*\).*/\1/p' "$log")
ips=$(sed -n 's/^instructions per sample: fine-tuning \([0-9]*\).*inference \([0-9]*\).*/\1 \2/p' \
      "$log")
if [ -z "$hash" ] || [ -z "$ram" ] || [ -z "$ips" ]; then
  fail "no final weights, RAM or instructions line"
fi
echo "firmware-kws: OK in $(( $(date +%s) - start )) s (speaker B accuracy $before% ->" \
     "$after%, final weights $hash = the host's, RAM $ram bytes, instructions per sample:" \
     "fine-tuning ${ips% *}, inference ${ips#* })"
