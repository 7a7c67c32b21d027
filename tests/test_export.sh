#!/usr/bin/env bash
# tests/test_export.sh - build/mnist-train --export-c (examples/common/export_c.h): a trained
# model as a C header that needs only ipupipe_kernels.h.
#
#  1. mlp (two splits: the ReLU after a dense layer fused, and a ReLU that begins a
#     stage), cnn (conv, pool, dropout over three stages), mlp-gelu, and mlp and cnn
#     with a concurrent stage (--map "0,[1,2],2,3", "0,[1,2,3],0"), each after a
#     short run on synthetic images: the header compiles under the house warnings with
#     -Werror in gcc and clang, and as C++17 with g++ and clang++ (mlp, cnn), and
#     tests/export_driver.c finds in one process that the arrays hold the trained bits
#     (FNV-1a against the trainer's) and that the generated predict gives the logits and
#     classes of ipup_predict bit for bit on the test images;
#  2. equal runs write byte-identical headers; --export-name and the default name;
#  3. refusals with their exact messages: unwritable path, a directory, bad names (the
#     library's prefixes: ipup.h's default name, IPUPIPE_net; a keyword; a leading '_'),
#     --export-name alone, two outputs naming one file; a refused export leaves no file.
# Each compiler compiles ipupipe.h's implementation once, in a translation unit of its own
# that every driver it builds links (-DXD_IMPL_APART); tests/test_sensor.sh builds the
# driver with the implementation in the driver's translation unit.
# Costs about a minute on 2 cores (the mlp header is 4 MB of floats for the compilers).
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
need_bin "$BIN"
make_tmp export
syn=$tmp/syn
gen_syn "$syn" 256 100
common=(--data "$syn" --quiet --seed 3 --train-limit 256 --epochs 1 --batch-size 8 --batches-to-accumulate 4)
WARN=(-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror)

# impl_obj CC STD...: $tmp/impl-CC.o, ipupipe.h's implementation compiled by CC as the
# driver is (language, warnings, -O1), once; the drivers CC builds link it
impl_obj() {
  local cc=$1
  shift
  [ -f "$tmp/impl-$cc.o" ] && return 0
  printf '#define IPUPIPE_IMPLEMENTATION\n#include "ipupipe.h"\n' > "$tmp/impl.c"
  nice $cc "$@" "${WARN[@]}" -O1 -I. -c "$tmp/impl.c" -o "$tmp/impl-$cc.o" > "$tmp/impl-$cc.log" 2>&1
}

# export NAME MODEL COMPILERS -- TRAINER-ARGS...: train, export, check with each compiler
check_export() {
  local name=$1 model=$2 compilers=$3 hdr upper split=() cc std log
  shift 4
  hdr=$tmp/$name.h
  upper=$(echo "$name" | tr a-z A-Z)
  if ! $BIN "${common[@]}" --model "$model" "$@" --export-c "$hdr" > "$tmp/$name.log" 2>&1 || [ ! -s "$hdr" ]; then
    bad "$name: mnist-train --export-c writes $hdr" "$tmp/$name.log"; return
  fi
  ok "$name: mnist-train --export-c writes a header of $(wc -c < "$hdr") bytes"
  grep -q "^#define ${upper}_SPLIT " "$hdr" && split=(-DXD_HAS_SPLIT)
  grep -q "^#define ${upper}_MAP_TEXT " "$hdr" && split+=(-DXD_HAS_MAP)
  for cc in $compilers; do
    log=$tmp/$name-$cc.log
    case $cc in g++|clang++) std=(-std=c++17 -x c++) ;; *) std=(-std=c11 -Wstrict-prototypes) ;; esac
    if ! impl_obj "$cc" "${std[@]}"; then
      bad "$name: ipupipe.h's implementation compiles with $cc ${std[*]} -Werror" "$tmp/impl-$cc.log"; continue
    fi
    if ! nice $cc "${std[@]}" "${WARN[@]}" -O1 -I. -DEXPORT_HEADER="\"$hdr\"" -DEXPORT_NAME="$name" \
         -DEXPORT_UPPER="$upper" -DXD_IMPL_APART "${split[@]}" tests/export_driver.c -x none "$tmp/impl-$cc.o" \
         -o "$tmp/drv" -lm -lpthread > "$log" 2>&1; then
      bad "$name: the header compiles with $cc ${std[*]} -Werror" "$log"; continue
    fi
    ok "$name: the header compiles with $cc ${std[*]} -Werror"
    if "$tmp/drv" "$syn/t10k-images-idx3-ubyte" 100 > "$log" 2>&1 && ! grep -q FAIL "$log" \
       && [ "$(grep -c '^ok' "$log")" = 2 ]; then
      ok "$name ($cc): weights exact, predict == ipup_predict bit for bit: $(sed -n 's/^ok   predict: //p' "$log")"
    else bad "$name ($cc): weights exact and predict == ipup_predict" "$log"; fi
  done
}

# ---- 1. models x compilers
check_export mlp mlp "gcc clang g++ clang++" --
check_export mlp_relu_split mlp "gcc clang" -- --splits dense256.relu dense64
if grep -q 'ipup_relu_fwd_f32' "$tmp/mlp_relu_split.h" && ! grep -q 'ipup_relu_fwd_f32' "$tmp/mlp.h"; then
  ok "a ReLU that begins a stage runs on its own, as in the emulator; within a stage it is fused"
else bad "a ReLU that begins a stage runs on its own, as in the emulator; within a stage it is fused"; fi
if grep -q '^#define MLP_LOSS "xent" ' "$tmp/mlp.h" && grep -q 'float \*logits, int32_t \*cls' "$tmp/mlp.h"; then
  ok "mlp: MLP_LOSS \"xent\", predict(n, x, logits, cls, scratch)"
else bad "mlp: MLP_LOSS \"xent\", predict(n, x, logits, cls, scratch)"; fi
check_export cnn cnn "gcc clang g++ clang++" -- --train-limit 64 --splits conv64 pool2
if grep -q 'dropout, identity at inference' "$tmp/cnn.h" && grep -q 'ipup_conv3x3_relu_fwd_f32' "$tmp/cnn.h"; then
  ok "cnn: dropout is a view at inference, conv and ReLU fused"
else bad "cnn: dropout is a view at inference, conv and ReLU fused"; fi
check_export gelu mlp-gelu "gcc" -- --train-limit 32 --batch-size 4 --batches-to-accumulate 2
# concurrent stages (docs/schedules.md §9): each branch's slice goes back into its layer's
# array, the driver runs ipup_predict on the concurrent emulator it was exported from
check_export conc mlp "gcc clang g++" -- --map "0,[1,2],2,3" --stages 4 --splits auto
if grep -q '^#define CONC_MAP_TEXT "0,\[1,2\],2,3"' "$tmp/conc.h" && grep -q '^static const float conc_w1\[200704\]' "$tmp/conc.h" &&
   [ "$(grep -c '^static const float conc_[wb]1\[' "$tmp/conc.h")" = 2 ]; then
  ok "concurrent: dense256's two branches are one array conc_w1 (784 x 256) and one conc_b1; CONC_MAP_TEXT"
else bad "concurrent: dense256's two branches are one array conc_w1 (784 x 256) and one conc_b1; CONC_MAP_TEXT"; fi
check_export cnn_conc cnn "gcc" -- --train-limit 64 --splits conv64 pool2 --map "0,[1,2,3],0"

# ---- 2. determinism and names
$BIN "${common[@]}" --model mlp --export-c "$tmp/again.h" --export-name mlp > "$tmp/log" 2>&1
if cmp -s "$tmp/mlp.h" "$tmp/again.h"; then ok "equal runs write byte-identical headers"
else bad "equal runs write byte-identical headers" "$tmp/log"; fi
$BIN "${common[@]}" --model mlp --train-limit 64 --export-c "$tmp/x.h" --export-name digits > "$tmp/log" 2>&1
if grep -q '^static inline void digits_predict(' "$tmp/x.h" && grep -q '^#define DIGITS_SCRATCH_FLOATS' "$tmp/x.h"; then
  ok "--export-name digits: digits_predict, DIGITS_SCRATCH_FLOATS"
else bad "--export-name digits: digits_predict, DIGITS_SCRATCH_FLOATS" "$tmp/log"; fi
$BIN "${common[@]}" --model mlp --train-limit 64 --export-c "$tmp/9-net.v2.h" > "$tmp/log" 2>&1
if grep -q '^static inline void m9_net_predict(' "$tmp/9-net.v2.h"; then ok "default name of 9-net.v2.h: m9_net"
else bad "default name of 9-net.v2.h: m9_net" "$tmp/log"; fi

# ---- 3. refusals: exit 2, the exact message, no file
expect_msg() { # NAME "message" ARGS...
  local name=$1 msg=$2 rc
  shift 2
  $BIN "${common[@]}" --model mlp --train-limit 64 "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "mnist-train: error: $msg" ]; then ok "refused: $name"
  else echo "    exit $rc, expected: mnist-train: error: $msg" > "$tmp/why"; cat "$tmp/err" >> "$tmp/why"
       bad "refused: $name" "$tmp/why"; fi
}
expect_msg "unwritable path" \
  "--export-c: cannot create $tmp/no/such/dir/m.h: No such file or directory (directory missing or not writable?); nothing was run" \
  --export-c "$tmp/no/such/dir/m.h"
mkdir -p "$tmp/adir"
expect_msg "a directory" \
  "--export-c: $tmp/adir is a directory, not a regular file; give the path of a file to write; nothing was run" \
  --export-c "$tmp/adir"
expect_msg "a name starting with a digit" \
  "--export-name: the name '9lives' must start with a letter (it prefixes C identifiers)" \
  --export-c "$tmp/n.h" --export-name 9lives
expect_msg "a name with a dash" \
  "--export-name: the name 'my-net' has '-'; use letters, digits and '_' (it prefixes C identifiers)" \
  --export-c "$tmp/n.h" --export-name my-net
expect_msg "a name too long" \
  "--export-name: the name 'a234567890123456789012345678901234' must have 1 to 32 characters" \
  --export-c "$tmp/n.h" --export-name a234567890123456789012345678901234
expect_msg "--export-name alone" "--export-name needs --export-c FILE.h" --export-name net
# names whose C names would clash with ipupipe.h's (ipup_predict, IPUP_IN) or C's, refused
# before training; the default name of ipup.h is one
expect_msg "the default name of ipup.h (ipup_predict would clash with ipupipe.h's)" \
  "--export-c $tmp/ipup.h: the name 'ipup' would generate names in ipupipe's own name spaces (ipup_, IPUP_, IPUPIPE_), which clash in a program that includes ipupipe.h; give --export-name NAME" \
  --export-c "$tmp/ipup.h"
expect_msg "--export-name IPUPIPE_net" \
  "--export-name: the name 'IPUPIPE_net' would generate names in ipupipe's own name spaces (ipup_, IPUP_, IPUPIPE_), which clash in a program that includes ipupipe.h; give another" \
  --export-c "$tmp/n.h" --export-name IPUPIPE_net
expect_msg "--export-name int (a C keyword)" \
  "--export-name: the name 'int' is a C keyword (it prefixes C identifiers); give another" --export-c "$tmp/n.h" --export-name int
expect_msg "--export-name _net (reserved identifiers)" \
  "--export-name: the name '_net' must start with a letter (it prefixes C identifiers)" --export-c "$tmp/n.h" --export-name _net
expect_msg "--export-c and --save on one file" \
  "--save and --export-c both name $tmp/same; give each output its own file" --save "$tmp/same" --export-c "$tmp/same"
if [ ! -e "$tmp/n.h" ] && [ ! -e "$tmp/ipup.h" ] && [ -z "$(ls "$tmp" | grep '\.tmp$')" ]; then ok "a refused export leaves no file and no temporary"
else bad "a refused export leaves no file and no temporary"; fi
finish
