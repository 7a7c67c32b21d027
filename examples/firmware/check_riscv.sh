#!/usr/bin/env bash
# check_riscv.sh - compiles each ipupipe header (declarations + implementation) with
# riscv64-unknown-elf-gcc and picolibc, freestanding (-ffreestanding, no OS), for a
# 32-bit MCU ABI (rv32imafc/ilp32f) and a 64-bit one (rv64imafdc/lp64d), under the
# project's warnings with -Werror, and lists the C library symbols each object needs
# (nm -u): that list is the headers' libc surface (README, "Embedded use").
# Skips (exit 0, says so) when the Debian packages gcc-riscv64-unknown-elf and
# picolibc-riscv64-unknown-elf are not installed.
set -uo pipefail
cc=riscv64-unknown-elf-gcc
if ! command -v $cc >/dev/null || ! $cc --specs=picolibc.specs -print-file-name=picolibc.specs >/dev/null 2>&1 \
   || [ ! -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ]; then
  echo "firmware-riscv: skipped: riscv64-unknown-elf-gcc with picolibc not installed" \
       "(apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)"
  exit 0
fi
out=build/firmware/riscv
mkdir -p $out
warn="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror"
fail=0
for abi in "rv32imafc ilp32f" "rv64imafdc lp64d"; do
  set -- $abi
  for h in ipupipe_kernels.h ipupipe_sched.h ipupipe.h; do
    [ -f "$h" ] || continue
    src=$out/${h%.h}.c
    # ipupipe.h on an MCU: cooperative runner only (no pthread, no atomics)
    printf '#define IPUPIPE_NO_THREADS\n#define IPUPIPE_IMPLEMENTATION\n#include "%s"\n' "$h" > "$src"
    obj=$out/${h%.h}-$1.o
    if $cc --specs=picolibc.specs -march=$1 -mabi=$2 -std=c11 $warn -ffreestanding -O2 \
         -ffunction-sections -I. -c "$src" -o "$obj" 2> "$obj.log"; then
      und=$(riscv64-unknown-elf-nm -u "$obj" | awk '{print $2}' | sort -u)
      libc=$(echo "$und" | grep -v '^__' ; echo "$und" | grep '^__assert_func$' || true)
      rt=$(echo "$und" | grep '^__' | grep -vc '^__assert_func$' || true)
      echo "firmware-riscv: ok   $h ($1/$2, picolibc, -ffreestanding): libc:" \
           "$(echo $libc | tr '\n' ' ')+ $rt libgcc helpers (soft double, 64-bit division)"
    else
      echo "FAIL firmware-riscv: $h ($1/$2):"; head -20 "$obj.log"; fail=1
    fi
  done
done
exit $fail
