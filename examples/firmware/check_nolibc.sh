#!/usr/bin/env bash
# check_nolibc.sh OUTDIR CC [FLAGS...] - compiles nolibc.c (all three headers, every hook
# defined) with -ffreestanding -nostdinc under the project's warnings and -Werror, then
# checks that the object needs no C library symbol beyond the hooks it names and the
# memcpy/memset/memcmp/memmove GCC may emit itself. Prints what it needs. CC is a gcc
# cross compiler or clang (with its --target in the flags).
set -uo pipefail
out=$1; shift
cc=$1
case $cc in
  *clang*) nm=arm-none-eabi-nm; command -v llvm-nm >/dev/null && nm=llvm-nm
           inc=$("$cc" -print-resource-dir)/include ;;
  *)       nm=${cc%gcc}nm; inc=$("$cc" -print-file-name=include) ;;
esac
mkdir -p "$out"
obj=$out/nolibc-$(basename "$cc").o
warn="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror"
if ! "$@" -std=c11 $warn -O2 -ffreestanding -nostdinc -isystem "$inc" -I. \
     -c examples/firmware/nolibc.c -o "$obj" 2> "$obj.log"; then
  echo "FAIL nolibc: the headers do not compile without libc headers ($cc):"; head -20 "$obj.log"; exit 1
fi
# the object must hold the implementation (an empty one would pass the test below)
for sym in ipup_dense_fwd_f32 ipup_sched_generate ipup_init ipup_run_steps; do
  $nm --defined-only "$obj" | awk '{print $3}' | grep -x "$sym" >/dev/null \
    || { echo "FAIL nolibc: $sym is not defined in $obj ($cc): implementation missing"; exit 1; }
done
und=$($nm -u "$obj" | awk '{print $2}' | sort -u)
libc=$(echo "$und" | grep -v '^__' | grep -vE '^my_(memcpy|memset|expf|logf|sqrtf|panic)$' \
       | grep -vE '^(memcpy|memset|memcmp|memmove)$' || true)
if [ -n "$libc" ]; then
  echo "FAIL nolibc: with every hook defined the headers still call: $(echo $libc)"; exit 1
fi
echo "nolibc: ok   the three headers, -ffreestanding -nostdinc, every hook defined ($cc): needs only" \
     "$(echo "$und" | grep -v '^__' | tr '\n' ' ')+ $(echo "$und" | grep -c '^__') compiler runtime helpers"
