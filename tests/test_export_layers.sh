#!/usr/bin/env bash
# tests/test_export_layers.sh - the C export (examples/common/export_c.h) of the layers of
# issue 30: tests/export_layers.c trains small models of every new layer kind over 2 stages
# and exports them; each header compiles under the house warnings with -Werror in gcc and
# clang (and as C++17 with g++), its arrays hash to the exported bits, and its predict
# gives ipup_predict's outputs: bit for bit without batch-norm folding, within 1e-5 of the
# largest output where a batch norm is folded into the layer before it (the fold rounds
# differently). About 20 s on 2 cores.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
make_tmp export_layers
WARN=(-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror)
INCS=(-I. -Itests -Iexamples/common)
if ! nice gcc -std=c11 "${WARN[@]}" -Wstrict-prototypes -O1 "${INCS[@]}" tests/export_layers.c -o "$tmp/gen" \
     -lm -lpthread > "$tmp/gen.log" 2>&1; then
  give_up "tests/export_layers.c builds as the generator" "$tmp/gen.log"
fi
if "$tmp/gen" "$tmp" > "$tmp/gen.log" 2>&1; then ok "the models train and export: $(grep -c '^ok' "$tmp/gen.log") headers"
else give_up "the models train and export" "$tmp/gen.log"; fi
for name in mixed shortcut plain cnn3; do
  hdr=$tmp/$name.h
  upper=$(echo "$name" | tr a-z A-Z)
  fold=()
  n=$(sed -n "s/^#define ${upper}_BN_FOLDED \([0-9]*\).*/\1/p" "$hdr")
  [ -n "$n" ] && fold=(-DXD_BN_FOLDED="$n")
  for cc in gcc clang g++; do
    log=$tmp/$name-$cc.log
    case $cc in g++) std=(-std=c++17 -x c++) ;; *) std=(-std=c11 -Wstrict-prototypes) ;; esac
    if ! nice $cc "${std[@]}" "${WARN[@]}" -O1 "${INCS[@]}" -DEXPORT_HEADER="\"$hdr\"" -DEXPORT_NAME="$name" \
         -DEXPORT_UPPER="$upper" "${fold[@]}" tests/export_layers.c -o "$tmp/drv" -lm > "$log" 2>&1; then
      bad "$name: the header compiles with $cc ${std[*]} -Werror" "$log"; continue
    fi
    if "$tmp/drv" "$tmp/$name.bin" > "$log" 2>&1 && [ "$(grep -c '^ok' "$log")" = 2 ]; then
      ok "$name ($cc, ${n:-0} batch norms folded): $(sed -n 's/^ok   predict: //p' "$log")"
    else bad "$name ($cc): weights exact and predict == ipup_predict" "$log"; fi
  done
done
if grep -q '^#define MIXED_BN_FOLDED 5 ' "$tmp/mixed.h" && grep -q 'ipup_batchnorm_fwd_infer_f32' "$tmp/mixed.h" &&
   ! grep -q 'mixed_w1\[' "$tmp/mixed.h" && grep -q 'mixed_m15\[' "$tmp/mixed.h"; then
  ok "mixed: the 5 batch norms after a conv, depthwise or dense layer are folded (no arrays of their own), the one after a ReLU runs"
else bad "mixed: batch norms folded where a conv, depthwise or dense layer precedes them"; fi
finish
