#!/usr/bin/env bash
# check_readme.sh ELF EXPECT QEMU-COMMAND... - checks the image of the device program of
# docs/embedded.md (firmware.mk: make firmware-readme): what it links (no heap, stdio, assert
# printing or threads), its sizes, then runs it in QEMU under a time limit and wants
# exit 0 (the program's own checks: restored state == saved, resumed run == uninterrupted
# run, the model's error below the noisy input's) and every line it printed equal to
# EXPECT, the output of the same text built on the host with the portable kernels.
set -uo pipefail
elf=$1; expect=$2; shift 2
log=$(dirname "$elf")/run.log
limit=${FW_TIMEOUT:-300}
fail() { echo "FAIL firmware-readme: $*"; echo "  (log: $log, expected: $expect)"; exit 1; }
bad='^(malloc|_malloc_r|free|_free_r|calloc|_calloc_r|realloc|_realloc_r|memalign|_sbrk|_sbrk_r|sbrk|printf|fprintf|vfprintf|_vfprintf_r|_svfprintf_r|iprintf|puts|fputs|fwrite|_fwrite_r|putchar|__assert_func|__assert|abort|pthread_.*|__sync_.*|__atomic_.*)$'
found=$(arm-none-eabi-nm "$elf" | awk '{print $NF}' | grep -E "$bad" || true)
[ -z "$found" ] || fail "the image links forbidden symbols (heap/stdio/assert/threads): $(tr '\n' ' ' <<<"$found")"
echo "firmware-readme: no heap, stdio or thread symbol linked (nm: none of malloc, free, _sbrk, printf, fputs, __assert_func, pthread_*)"
arm-none-eabi-size "$elf"
start=$(date +%s)
timeout "$limit" "$@" -kernel "$elf" </dev/null >"$log" 2>&1
rc=$?
cat "$log"
[ "$rc" -eq 124 ] && fail "QEMU did not finish within ${limit}s (FW_TIMEOUT)"
[ "$rc" -ne 0 ] && fail "the image exited with status $rc (the program's own checks failed, or it faulted)"
[ -s "$expect" ] || fail "$expect is empty"
diff "$expect" "$log" > "$log.diff" || { cat "$log.diff"; fail "the image's output differs from the host build's (portable kernels)"; }
grep -q '^held-out mean squared error: ' "$log" || fail "no 'held-out mean squared error' line"
saved=$(sed -n 's/^state .* restored \([0-9a-f]*\), saved \([0-9a-f]*\)$/\1 \2/p' "$log")
final=$(sed -n 's/^final state \([0-9a-f]*\), uninterrupted \([0-9a-f]*\);.*/\1 \2/p' "$log")
read -r a b <<<"$saved"; read -r c d <<<"$final"
if [ -z "${a:-}" ] || [ "$a" != "${b:-}" ]; then fail "the restored state (${a:-}) is not the saved one (${b:-})"; fi
if [ -z "${c:-}" ] || [ "$c" != "${d:-}" ]; then fail "the resumed run ended at ${c:-}, the uninterrupted one at ${d:-}"; fi
echo "firmware-readme: OK in $(( $(date +%s) - start )) s: restored state $a = saved, final state $c = uninterrupted," \
     "all $(grep -c '' < "$log") lines identical to the host build (portable kernels)"
