#!/usr/bin/env bash
# check_link.sh ELF MAP - proves what the firmware links: no heap (malloc & co., _sbrk),
# no stdio, no assert() printing path, no threads; lists the libc/libm members that are
# linked and prints the size (arm-none-eabi-size) and the biggest RAM objects. FW_BINUTILS
# (default arm-none-eabi-) is the prefix of the nm and size used: riscv64-unknown-elf- for
# the RISC-V image.
set -euo pipefail
elf=$1; map=$2
nm=${FW_BINUTILS:-arm-none-eabi-}nm
size=${FW_BINUTILS:-arm-none-eabi-}size
bad='^(malloc|_malloc_r|free|_free_r|calloc|_calloc_r|realloc|_realloc_r|memalign|_sbrk|_sbrk_r|sbrk|printf|fprintf|vfprintf|_vfprintf_r|_svfprintf_r|iprintf|puts|fputs|fwrite|_fwrite_r|putchar|__assert_func|__assert|abort|pthread_.*|__sync_.*|__atomic_.*)$'
found=$($nm "$elf" | awk '{print $NF}' | grep -E "$bad" || true)
if [ -n "$found" ]; then
  echo "FAIL firmware links forbidden symbols (heap/stdio/assert/threads):"; echo "$found"
  echo "  see $map (\"Archive member included\") for who pulls them in"; exit 1
fi
if grep -E '^ *\.text\.(_?malloc|_malloc_r|_free_r|_sbrk)' "$map" >/dev/null; then
  echo "FAIL $map places heap code"; exit 1
fi
echo "firmware: no heap, stdio or thread symbol linked (nm $elf: none of malloc, _malloc_r, free, calloc, realloc, _sbrk, printf, puts, fwrite, __assert_func, pthread_*)"
# library code that survives --gc-sections: the input sections the map file places
# from archives (libc_nano/libg_nano, libm, libgcc), after "Linker script and memory map".
echo "firmware: library objects linked (after --gc-sections; see docs/embedded.md, \"Porting\"):"
awk '/^Linker script and memory map/ {on = 1}
     on && /^ *\.(text|data|rodata)[^ ]* *$/ {sec = $1; next}
     on && /\.a\(/ { n = split($0, f, " "); if (f[1] ~ /^\./) { sec = f[1]; sz = f[3]; obj = f[4] } else { sz = f[2]; obj = f[3] }
                      if (sec ~ /^\.(text|data|rodata)/ && sz != "0x0") { sub(/.*\//, "", obj); print obj } }' "$map" \
  | sort -u | tr '\n' ' ' | fold -s -w 100 | sed 's/^/  /'
echo
$size "$elf"
echo "firmware: biggest RAM objects (bytes):"
$nm -S -t d --size-sort "$elf" | awk '$3 ~ /^[bBdD]$/ {printf "  %8d %s\n", $2 + 0, $4}' | sort -rn | sed -n 1,12p
img=$($nm -S -t d "$elf" | awk '$4 ~ /^fw_(train|test)_[xy]$/ {s += $2} END {print s + 0}')
text=$($size -A -d "$elf" | awk '$1 == ".text" {print $2}')
lib=$($nm -S -t d "$elf" | awk '$3 ~ /^[tTrR]$/ && $4 ~ /^ipup/ {s += $2} END {print s + 0}')
echo "firmware: flash: .text $text bytes = compiled-in MNIST images and labels $img + code and constants $((text - img))," \
     "of which the ipupipe headers' functions (ipup_*) $lib"
echo "firmware: biggest functions (bytes):"
$nm -S -t d --size-sort "$elf" | awk '$3 ~ /^[tT]$/ && $4 !~ /^fw_(train|test)_/ {printf "  %8d %s\n", $2 + 0, $4}' | sort -rn | sed -n 1,8p
