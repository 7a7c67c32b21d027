#!/usr/bin/env bash
# tests/fuzz/check_freestanding.sh - the firmware-style gate (make check-freestanding).
#
# Compiles each header's implementation on its own with -ffreestanding (house
# warnings, -Werror) and inspects the object with nm:
#   - no header references malloc, calloc, realloc, free, aligned_alloc,
#     posix_memalign or strdup, in the default (hosted, threaded) build either;
#   - with the documented hooks defined (IPUPIPE_ASSERT, IPUPIPE_MEMSET/MEMCPY,
#     IPUPIPE_EXPF/LOGF/SQRTF) and IPUPIPE_NO_THREADS, the
#     only undefined symbols left are the hooks' own functions (fw_*) and the
#     memcpy/memset the compiler itself may emit: no libc, no libm;
#   - the cooperative runner (ipupipe.h with IPUPIPE_NO_THREADS) needs no thread
#     symbol: no pthread_*, __atomic_*, __sync_*, sched_yield, nanosleep,
#     clock_gettime, usleep;
#   - no header text calls the allocator (grep, comments included).
# Ends with `N passed, N failed`.
set -u
CC=${CC:-gcc}
WARN=(-std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Wstrict-prototypes -Werror)
dir=build/freestanding
mkdir -p "$dir"
p=0
f=0
ok() { p=$((p + 1)); echo "ok   $1"; }
bad() { f=$((f + 1)); echo "FAIL $1"; }
HEAP='^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|valloc|strdup|strndup)$'
THREADS='^(pthread_.*|__atomic_.*|__sync_.*|sched_yield|nanosleep|clock_gettime|usleep|thrd_.*|mtx_.*|cnd_.*)$'
HOOKS='
#include <stddef.h>
void fw_panic(const char *what);
void *fw_memset(void *d, int c, size_t n);
void *fw_memcpy(void *d, const void *s, size_t n);
float fw_expf(float x);
float fw_logf(float x);
float fw_sqrtf(float x);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : fw_panic(#c))
#define IPUPIPE_MEMSET(d, c, n) fw_memset((d), (c), (n))
#define IPUPIPE_MEMCPY(d, s, n) fw_memcpy((d), (s), (n))
#define IPUPIPE_EXPF(x) fw_expf(x)
#define IPUPIPE_LOGF(x) fw_logf(x)
#define IPUPIPE_SQRTF(x) fw_sqrtf(x)
'
build() { # name, header, hooks(0/1), extra flags...
  local name=$1 h=$2 hooks=$3
  shift 3
  {
    [ "$hooks" = 1 ] && printf '%s\n' "$HOOKS"
    echo '#define IPUPIPE_IMPLEMENTATION'
    echo "#include \"$h\""
  } > "$dir/$name.c"
  if "$CC" "${WARN[@]}" -O2 -ffreestanding "$@" -I. -c "$dir/$name.c" -o "$dir/$name.o" 2> "$dir/$name.log"; then
    nm -u "$dir/$name.o" | awk '{print $NF}' | sort -u > "$dir/$name.undef"
    return 0
  fi
  bad "[$name] -ffreestanding compile of $h failed (log $dir/$name.log)"
  head -n 5 "$dir/$name.log" | sed 's/^/    /'
  return 1
}
for h in ipupipe_kernels.h ipupipe_sched.h ipupipe.h; do
  b=$(basename "$h" .h)
  # 1. default settings (threads on for ipupipe.h): no heap symbol
  if build "$b-default" "$h" 0 -march=native; then
    heap=$(grep -E "$HEAP" "$dir/$b-default.undef" | tr '\n' ' ')
    if [ -z "$heap" ]; then ok "[$b-default] no heap symbol ($(wc -l < "$dir/$b-default.undef") undefined: $(tr '\n' ' ' < "$dir/$b-default.undef"))"
    else bad "[$b-default] references $heap"; fi
  fi
  # 2. firmware settings: hooks + no threads + portable kernels
  for arch in "-DIPUPIPE_NO_SIMD" "-march=native"; do
    n="$b-fw${arch//[^a-zA-Z0-9]/_}"
    if build "$n" "$h" 1 -DIPUPIPE_NO_THREADS $arch; then
      other=$(grep -vE '^(fw_.*|memcpy|memset)$' "$dir/$n.undef" | tr '\n' ' ')
      thr=$(grep -E "$THREADS" "$dir/$n.undef" | tr '\n' ' ')
      if [ -z "$other" ]; then ok "[$n] only hooks and compiler memcpy/memset undefined: $(tr '\n' ' ' < "$dir/$n.undef")"
      else bad "[$n] needs more than the hooks: $other"; fi
      if [ "$h" = ipupipe.h ]; then
        if [ -z "$thr" ]; then ok "[$n] cooperative runner: no thread symbol"
        else bad "[$n] IPUPIPE_NO_THREADS still references $thr"; fi
      fi
    fi
  done
done
# 3. the text of the headers
hits=$(grep -nE '\b(malloc|calloc|realloc|free)\s*\(' ipupipe*.h | head -n 5)
if [ -z "$hits" ]; then ok "[grep] no allocator call in ipupipe*.h (comments included)"
else bad "[grep] allocator call in a header:"; echo "$hits" | sed 's/^/    /'; fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
