#!/usr/bin/env bash
# check_riscv.sh - the headers with riscv64-unknown-elf-gcc, freestanding:
#  1. nolibc.c (all three headers, every platform hook defined) with -ffreestanding
#     -nostdinc, for rv32imafc/ilp32f and rv64imafdc/lp64d (check_nolibc.sh): no C library
#     header and no libc symbol needed;
#  2. with picolibc's headers (--specs=picolibc.specs) and the default hooks, each header
#     (declarations + implementation) on its own, and the C library symbols each object
#     needs (nm -u): the headers' default libc surface (docs/embedded.md, "The C library the headers use").
# All under the project's warnings with -Werror. Skips (exit 0, says so) what the
# installed Debian packages (gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf) do
# not allow.
set -uo pipefail
cc=riscv64-unknown-elf-gcc
if ! command -v $cc >/dev/null; then
  echo "firmware-riscv: skipped: riscv64-unknown-elf-gcc not installed (apt-get install gcc-riscv64-unknown-elf)"
  exit 0
fi
fail=0
examples/firmware/check_nolibc.sh build/firmware/riscv $cc -march=rv32imafc -mabi=ilp32f || fail=1
examples/firmware/check_nolibc.sh build/firmware/riscv $cc -march=rv64imafdc -mabi=lp64d || fail=1
if [ ! -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ]; then
  echo "firmware-riscv: picolibc part skipped: picolibc-riscv64-unknown-elf not installed"
  exit $fail
fi
out=build/firmware/riscv
mkdir -p $out
warn="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror"
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
      if [ "$(riscv64-unknown-elf-nm --defined-only "$obj" | awk '$2 == "T"' | wc -l)" -eq 0 ]; then
        echo "FAIL firmware-riscv: $h ($1/$2): the object defines no function (implementation missing)"; fail=1; continue
      fi
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
