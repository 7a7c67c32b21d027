#!/usr/bin/env bash
# run_riscv.sh ELF HOST-REFERENCE QEMU-COMMAND... - the training firmware on RISC-V
# against the host: runs HOST-REFERENCE (main.c built for the host with the portable
# kernels and fw_math.h, the same data and pools), then the image in QEMU through
# run.sh (exit 0, FIRMWARE OK, the loss halved, the accuracy, the state restored with the
# same bits; time limit FW_TIMEOUT, default 120 s), and wants the host's bits: the same
# final weights hash, the same loss at every step, the same held-out accuracy line.
set -uo pipefail
elf=$1; host=$2; shift 2
dir=$(dirname "$elf")
hlog=$dir/host.log
start=$(date +%s)
fail() { echo "FAIL firmware-riscv-run: $*"; exit 1; }
"$host" >"$hlog" 2>&1 || { tail -n 5 "$hlog"; fail "the host reference $host failed (log: $hlog)"; }
grep -q '^FIRMWARE OK' "$hlog" || fail "the host reference printed no 'FIRMWARE OK' (log: $hlog)"
FW_TIMEOUT=${FW_TIMEOUT:-120} "$(dirname "$0")/../run.sh" "$elf" "$@" || exit 1
log=$dir/run.log
hash_of() { sed -n 's/^final weights FNV-1a \([0-9a-f]*\).*/\1/p' "$1" | tail -n 1; }
acc_of() { grep '^held-out accuracy' "$1" | tail -n 1; }
losses_of() { awk '/^step [0-9]+ loss/ { print $2, $4 }' "$1"; }
rv=$(hash_of "$log"); ref=$(hash_of "$hlog")
if [ -z "$rv" ] || [ "$rv" != "$ref" ]; then
  fail "final weights: RISC-V FNV-1a ${rv:-none}, host build ${ref:-none} (logs: $log, $hlog)"
fi
[ "$(acc_of "$log")" = "$(acc_of "$hlog")" ] ||
  fail "held-out accuracy: RISC-V '$(acc_of "$log")', host '$(acc_of "$hlog")'"
steps=$(losses_of "$hlog" | wc -l)
if [ "$steps" -eq 0 ] || ! diff <(losses_of "$log") <(losses_of "$hlog") >/dev/null; then
  fail "the step losses differ from the host's: diff <(grep '^step' $log) <(grep '^step' $hlog)"
fi
n='\([0-9]*\)'
ips=$(sed -n "s/^instructions per step: pipelined $n.*plain loop $n.*/\\1 \\2/p" "$log")
echo "firmware-riscv-run: final weights FNV-1a $rv on RV32IMAFC = the host build's" \
     "$ref (portable kernels, fw_math.h); $steps step losses and the held-out accuracy identical"
echo "firmware-riscv-run: instructions per step (QEMU -icount, minstret; instructions," \
     "not cycles): pipelined ${ips% *}, plain loop ${ips#* }"
echo "firmware-riscv-run: OK in $(( $(date +%s) - start )) s"
