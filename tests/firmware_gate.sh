#!/usr/bin/env bash
# tests/firmware_gate.sh - the firmware gates of `make check`, one check each:
#   make firmware firmware-run  train on the Cortex-M4F under QEMU (and the inference and
#                               device program of docs/embedded.md), the host's bits
#   make firmware-finetune      the sensor classifier's head fine-tuned on the device
#   make firmware-kws           DS-CNN's classifier fine-tuned on the device (body frozen)
#   make firmware-cross         the Cortex-M4F and the Cortex-M7 train to the same bits
#   make firmware-f16           the training image in float16: the reference loop's bits,
#                               RAM smaller than float32's by what the plans say
#   make firmware-riscv-run     the training firmware on RISC-V (QEMU virt), the host's bits
#   make firmware-dual-run      stage 0 on core 0, stage 1 on core 1 of a dual Cortex-M33
#                               (musca-b1), the single-core run's bits (block below)
# Needs the Debian packages of `.ci/deps.sh firmware` (make check installs them).
# Ends with `N passed, N failed`.
. "$(dirname "$0")/lib.sh"
mkdir -p build/logs
for t in "firmware firmware-run" firmware-finetune firmware-kws firmware-cross firmware-f16; do
  log=build/logs/firmware-${t%% *}-${t##* }.log
  # shellcheck disable=SC2086
  if make --no-print-directory $t > "$log" 2>&1; then ok "make $t"
  else bad "make $t (log $log)" "$log"; tail -n 20 "$log" | sed 's/^/    /'; fi
done
# ---- RISC-V: the training firmware on qemu-system-riscv32 -M virt
# (rv32imafc, picolibc) must end with the weights of the host's portable build
log=build/logs/firmware-riscv-run.log
if make --no-print-directory firmware-riscv-run > "$log" 2>&1; then ok "make firmware-riscv-run"
else bad "make firmware-riscv-run (log $log)" "$log"; tail -n 20 "$log" | sed 's/^/    /'; fi
# ---- end of the RISC-V block
# ---- dual core (examples/firmware/dual/): after firmware-run, whose final weights it wants
log=build/logs/firmware-dual-run.log
if make --no-print-directory firmware-dual-run > "$log" 2>&1; then ok "make firmware-dual-run"
else bad "make firmware-dual-run (log $log)" "$log"; tail -n 20 "$log" | sed 's/^/    /'; fi
# ---- end dual core
finish
