#!/usr/bin/env bash
# tests/fuzz/check_analyze.sh - static analysis gate (make check-analyze).
#
# One test per unit, each must give ZERO findings:
#   - clang --analyze (clang's static analyzer, default checkers) of each library
#     header's implementation (a TU with IPUPIPE_IMPLEMENTATION), in the AVX-512, AVX2
#     and portable builds (the SIMD paths differ), of the example headers that parse
#     outside data (IDX reader, checkpoint reader) and of the two tools (which also
#     run the headers' code on the tools' own paths);
#   - cppcheck --enable=warning,portability on each library header (implementation
#     defined) and the two example parser headers. A finding that is a false
#     positive may be silenced at its line with `// cppcheck-suppress ID` and a reason.
# Logs: build/analyze/*.log. Ends with `N passed, N failed`.
set -u
mkdir -p build/analyze
p=0
f=0
CLANG=${CLANG:-clang}
one() { # label, log, command...
  local label=$1 log=$2
  shift 2
  "$@" > "$log" 2>&1
  local rc=$? n
  n=$(grep -cE 'warning:|error:|\]$' "$log" || true)
  if [ "$rc" -eq 0 ] && [ "$n" -eq 0 ]; then
    p=$((p + 1))
    echo "ok   $label"
  else
    f=$((f + 1))
    echo "FAIL $label: $n finding(s) (exit $rc), log $log"
    grep -E 'warning:|error:|\]$' "$log" | sort -u | head -n 10 | sed 's/^/    /'
  fi
}
for h in ipupipe_kernels.h ipupipe_sched.h ipupipe.h examples/mnist/mnist_data.h examples/mnist/mnist_ckpt.h; do
  b=$(basename "$h" .h)
  tu=build/analyze/$b.c
  {
    echo '#define _POSIX_C_SOURCE 200809L'
    echo '#define IPUPIPE_IMPLEMENTATION'
    echo "#include \"$(basename "$h")\""
    echo 'int main(void) { return 0; }'
  } > "$tu"
  archs=("-march=native")
  case $h in ipupipe_kernels.h|ipupipe.h) archs=("-march=native" "-mavx2 -mfma" "-DIPUPIPE_NO_SIMD");; esac
  for a in "${archs[@]}"; do
    # shellcheck disable=SC2086
    one "[clang --analyze] $h $a" "build/analyze/$b${a//[^a-zA-Z0-9]/_}.log" \
      "$CLANG" --analyze -Xanalyzer -analyzer-output=text -std=c11 $a -I. -Iexamples/common -Iexamples/mnist -Iexamples/sensor -Iexamples/sched -Iexamples/plan "$tu" -o /dev/null
  done
done
for t in examples/sched/ipupipe-sched.c examples/mnist/mnist-train.c; do
  b=$(basename "$t" .c)
  one "[clang --analyze] $t" "build/analyze/tool-$b.log" \
    "$CLANG" --analyze -Xanalyzer -analyzer-output=text -std=c11 -march=native -I. -Iexamples/common -Iexamples/mnist -Iexamples/sensor -Iexamples/sched -Iexamples/plan "$t" -o /dev/null
done
if command -v cppcheck > /dev/null; then
  for h in ipupipe_kernels.h ipupipe_sched.h ipupipe.h examples/mnist/mnist_data.h examples/mnist/mnist_ckpt.h; do
    b=$(basename "$h" .h)
    one "[cppcheck] $h" "build/analyze/cppcheck-$b.log" \
      cppcheck -q --std=c11 --enable=warning,portability --inline-suppr --error-exitcode=1 \
      -DIPUPIPE_IMPLEMENTATION -D_POSIX_C_SOURCE=200809L -I. -Iexamples/common -Iexamples/mnist -Iexamples/sensor -Iexamples/sched -Iexamples/plan "$h"
  done
else
  f=$((f + 1))
  echo "FAIL [cppcheck] not installed (apt-get install cppcheck; .ci/run installs it)"
fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
