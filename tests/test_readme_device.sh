#!/usr/bin/env bash
# tests/test_readme_device.sh - the device program of docs/embedded.md ("A device that
# learns in the field") as a reader would build it from that page alone:
#   - examples/firmware/readme_extract.sh takes out the C block after `<!-- device.c -->`
#     and the sh block after `<!-- device.sh -->`, and runs that block's
#     build/ipupipe-plan command, which writes pools.h; the pool sizes the page's text
#     quotes are those of pools.h;
#   - the program compiles with gcc and clang (C11) and g++ and clang++ (C++17), the
#     house warnings and -Werror, and each build runs: exit 0 (its own checks: restored
#     state == saved, resumed run == uninterrupted run, the model's error below the noisy
#     input's) and the same figures checked here from its output;
#   - the portable-kernel build (-DIPUPIPE_NO_SIMD: the bits of the firmware image) and
#     the page's own `cc` line print exactly the output the page quotes (after
#     `<!-- device.out -->`);
#   - linked with tests/readme_device_heap.c (-Dmain=device_main; gcc and clang builds) it
#     makes 0 heap calls from its first line to its return, the C library's included;
#   - a pools.h planned for another micro-batch size is refused by ipup_init with a
#     message (the pools are the plan's: smaller for micro-batches of 4).
# The Cortex-M4F image of the same text is make firmware-readme (in make firmware-run).
# Costs about 10 compiles of ipupipe.h (about a minute on 2 shared cores).
. "$(dirname "$0")/lib.sh"
need_bin build/ipupipe-plan
make_tmp readme_device
root=$PWD
readme=${1:-docs/embedded.md} # the page (an argument: another copy of it)
mkvar() { make -s --no-print-directory --eval 'rd-print-%: ; @echo $($*)' "rd-print-$1" 2>/dev/null; }
WARN=$(mkvar WARN)
CXXWARN=$(mkvar CXXWARN)
CSTD=$(mkvar CSTD)
LIBS=$(mkvar LIBS)
if [ -z "$WARN" ] || [ -z "$CXXWARN" ] || [ -z "$CSTD" ]; then bad "could not read WARN, CXXWARN and CSTD from the Makefile"; finish; exit 1; fi

# 1. the program and its pools.h, from the page
src=$tmp/src
if examples/firmware/readme_extract.sh "$readme" "$src" build/ipupipe-plan > "$tmp/extract.log" 2>&1; then
  ok "readme_extract.sh: device.c, the plan command and pools.h from $readme"
else
  bad "readme_extract.sh could not take the device program out of $readme" "$tmp/extract.log"; finish; exit 1
fi
def() { sed -n "s/^#define $1 \([0-9][0-9]*\).*/\1/p" "$src/pools.h"; }
quoted=$(tr '\n' ' ' < "$readme" | grep -o 'For the command above: IPU0 [0-9]* bytes, IPU1 [0-9]*, host [0-9]*')
want="For the command above: IPU0 $(def IPUP_PLAN_IPU0_BYTES) bytes, IPU1 $(def IPUP_PLAN_IPU1_BYTES), host $(def IPUP_PLAN_HOST_BYTES)"
if [ "$quoted" = "$want" ]; then ok "$readme's pool sizes are pools.h's ($want)"
else bad "$readme says '$quoted', pools.h gives '$want'"; fi
awk '$0 == "<!-- device.out -->" { on = 1; next } on == 1 && /^```/ { on = 2; next }
     on == 2 && /^```/ { exit } on == 2 { print }' "$readme" > "$tmp/quoted.txt"
if [ -s "$tmp/quoted.txt" ]; then ok "$readme quotes the program's output ($(grep -c '' < "$tmp/quoted.txt") lines)"
else bad "no \`\`\`text block after a line <!-- device.out --> in $readme"; fi

# figures NAME OUTPUT: the program's own promises, checked again from what it printed
figures() {
  local name=$1 log=$2 s f e
  s=$(sed -n 's/^state [0-9]* bytes in [0-9]* flash pages; restored \([0-9a-f]*\), saved \([0-9a-f]*\)$/\1 \2/p' "$log")
  f=$(sed -n 's/^final state \([0-9a-f]*\), uninterrupted \([0-9a-f]*\); frozen layers save \([0-9]*\) bytes$/\1 \2 \3/p' "$log")
  e=$(sed -n 's/^held-out mean squared error: noisy input \([0-9.]*\), model before training \([0-9.]*\), after \([0-9.]*\)$/\1 \2 \3/p' "$log")
  if awk -v s="$s" -v f="$f" -v e="$e" 'BEGIN { split(s, a, " "); split(f, b, " "); split(e, c, " ")
        exit !(a[1] != "" && a[1] == a[2] && b[1] != "" && b[1] == b[2] && b[3] > 0 &&
               c[3] + 0 < c[1] + 0 && c[1] + 0 < c[2] + 0) }'; then
    ok "$name: restored state = saved ($s), final = uninterrupted, frozen layers save bytes, error $e: after < noisy input < before"
  else
    bad "$name: the figures do not hold (state: '$s'; final: '$f'; error noisy/before/after: '$e')" "$log"
  fi
  # the loss falls: step 40's below step 20's, in both runs
  if awk 'BEGIN { n = 0 } /^step 20: loss/ { a[n] = $4 + 0 } /^step 40: loss/ { b[n++] = $4 + 0 }
          END { exit !(n == 2 && b[0] < a[0] && b[1] < a[1]) }' "$log"; then ok "$name: the loss falls from step 20 to step 40, in both runs"
  else bad "$name: the loss does not fall from step 20 to 40" "$log"; fi
}

# 2. every compiler, the house flags
for cc in gcc clang g++ clang++; do
  case $cc in
    gcc | clang) flags="$CSTD $WARN -O2 -march=native -x c" ;;
    *) flags="-std=c++17 $CXXWARN -O1 -march=native -x c++" ;;
  esac
  # shellcheck disable=SC2086 # word lists
  if $cc $flags -I. "$src/device.c" -x none -o "$tmp/device-$cc" $LIBS > "$tmp/cc-$cc.log" 2>&1; then
    ok "$cc: device.c compiles warning-free (-Werror)"
  else
    bad "$cc: device.c does not compile" "$tmp/cc-$cc.log"; continue
  fi
  if "$tmp/device-$cc" > "$tmp/out-$cc.txt" 2>&1; then ok "$cc: the program exits 0"
  else bad "$cc: the program exits $?" "$tmp/out-$cc.txt"; continue; fi
  figures "$cc" "$tmp/out-$cc.txt"
done

# 3. the bits of the firmware image, and the page's own cc line
# shellcheck disable=SC2086
if gcc $CSTD $WARN -O2 -DIPUPIPE_NO_SIMD -I. "$src/device.c" -o "$tmp/device-portable" $LIBS > "$tmp/cc-portable.log" 2>&1 &&
   "$tmp/device-portable" > "$tmp/out-portable.txt" 2>&1; then
  if diff "$tmp/quoted.txt" "$tmp/out-portable.txt" > "$tmp/diff-portable.txt"; then
    ok "portable kernels (-DIPUPIPE_NO_SIMD): the output is $readme's, line for line"
  else bad "portable kernels: the output differs from $readme's quote" "$tmp/diff-portable.txt"; fi
else bad "the portable build does not compile or run" "$tmp/cc-portable.log"; fi
ccl=$(cat "$src/cc.cmd")
if (cd "$src" && eval "$ccl -I$root") > "$tmp/cc-readme.log" 2>&1 && (cd "$src" && ./device) > "$tmp/out-readme.txt" 2>&1 &&
   diff "$tmp/quoted.txt" "$tmp/out-readme.txt" > "$tmp/diff-readme.txt"; then
  ok "$readme's '$ccl': builds, runs, prints the quoted output"
else
  cat "$tmp/cc-readme.log" "$tmp/diff-readme.txt" > "$tmp/readme-cc.log" 2>/dev/null
  bad "$readme's '$ccl' does not build, run or print the quoted output" "$tmp/readme-cc.log"
fi

# 4. no heap call, the C library's included
for cc in gcc clang; do
  # shellcheck disable=SC2086
  if $cc $CSTD $WARN -O2 -march=native -I. -Dmain=device_main -c "$src/device.c" -o "$tmp/dev-$cc.o" > "$tmp/heap-$cc.log" 2>&1 &&
     $cc $CSTD $WARN -O2 -c tests/readme_device_heap.c -o "$tmp/heap-$cc.o" >> "$tmp/heap-$cc.log" 2>&1 &&
     $cc "$tmp/dev-$cc.o" "$tmp/heap-$cc.o" -o "$tmp/devheap-$cc" $LIBS >> "$tmp/heap-$cc.log" 2>&1; then
    "$tmp/devheap-$cc" > "$tmp/heap-$cc.txt" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && grep -qx 'heap calls during the program: 0' "$tmp/heap-$cc.txt"; then
      ok "$cc: 0 heap calls from the program's first line to its return (every allocator call of the process counted)"
    else bad "$cc: the heap count failed (exit $rc)" "$tmp/heap-$cc.txt"; fi
  else bad "$cc: the heap-counting build failed" "$tmp/heap-$cc.log"; fi
done

# 5. pools planned for another configuration (--batch-size 4) are refused with a message
sed 's/--batch-size 8 /--batch-size 4 /' "$readme" > "$tmp/doc.b4.md"
# shellcheck disable=SC2086
if examples/firmware/readme_extract.sh "$tmp/doc.b4.md" "$tmp/b4" build/ipupipe-plan > "$tmp/b4.log" 2>&1 &&
   gcc $CSTD $WARN -O2 -I. "$tmp/b4/device.c" -o "$tmp/device-b4" $LIBS >> "$tmp/b4.log" 2>&1; then
  "$tmp/device-b4" > "$tmp/out-b4.txt" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && grep -qE '^ipup_init: .*(out of memory|too small)' "$tmp/out-b4.txt"; then
    ok "pools.h planned for micro-batches of 4: ipup_init refuses the micro-batches of 8 (exit $rc: $(grep -m1 '^ipup_init: ' "$tmp/out-b4.txt" | cut -c1-100)...)"
  else bad "pools planned for micro-batches of 4 were not refused (exit $rc)" "$tmp/out-b4.txt"; fi
else bad "the batch-4 variant did not build" "$tmp/b4.log"; fi
finish
