#!/usr/bin/env bash
# check_nolibc.sh OUTDIR CC [FLAGS...] - compiles nolibc.c (all three headers, every hook
# defined) with -ffreestanding -nostdinc under the project's warnings and -Werror, then
# checks that the object needs no C library symbol beyond the hooks it names and the
# memcpy/memset/memcmp/memmove GCC may emit itself. Prints what it needs.
set -uo pipefail
out=$1; shift
cc=$1
nm=${cc%gcc}nm
mkdir -p "$out"
obj=$out/nolibc-$(basename "$cc").o
warn="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror"
inc=$("$cc" -print-file-name=include)
if ! "$@" -std=c11 $warn -O2 -ffreestanding -nostdinc -isystem "$inc" -I. \
     -c examples/firmware/nolibc.c -o "$obj" 2> "$obj.log"; then
  echo "FAIL nolibc: the headers do not compile without libc headers ($cc):"; head -20 "$obj.log"; exit 1
fi
und=$($nm -u "$obj" | awk '{print $2}' | sort -u)
libc=$(echo "$und" | grep -v '^__' | grep -vE '^my_(memcpy|memset|expf|logf|sqrtf|vsnprintf|panic)$' \
       | grep -vE '^(memcpy|memset|memcmp|memmove)$' || true)
if [ -n "$libc" ]; then
  echo "FAIL nolibc: with every hook defined the headers still call: $(echo $libc)"; exit 1
fi
echo "nolibc: ok   the three headers, -ffreestanding -nostdinc, every hook defined ($cc): needs only" \
     "$(echo "$und" | grep -v '^__' | tr '\n' ' ')+ $(echo "$und" | grep -c '^__') compiler runtime helpers"
