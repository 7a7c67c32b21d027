#!/usr/bin/env bash
# tests/test_half_train.sh - mnist-train --dtype float16 (and --accum-dtype float16,
# --loss-scale dynamic, --fp32-weights, offload) trains to the same checkpoint on every
# schedule and both runners, with and without recomputation, as float32 does; float16
# changes the bits, and binary16 weights those of fp32 master weights; the memory lines show
# the stash and exchange halved; ipupipe-plan takes the same options and lists the halved
# bytes (the weights too, unless --fp32-weights); a bad value is refused with its options.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
PLAN=build/ipupipe-plan
need_bin "$BIN"
need_bin "$PLAN"
make_tmp half_train
syn=$tmp/syn
gen_syn "$syn" 640 100
common=(--data "$syn" --quiet --seed 5 --train-limit 512 --batch-size 8 --batches-to-accumulate 8
        --repeat-count 2 --epochs 1)

# same MODEL NAME FLAGS... : every configuration of the list trains to NAME's first checkpoint
same() {
  local model=$1 name=$2 ref="" i=0 cfg
  shift 2
  for cfg in "$@"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    if ! $BIN "${common[@]}" --model "$model" $cfg --save "$tmp/$name-$i.ckpt" > "$tmp/log" 2>&1; then
      bad "$name: $cfg runs" "$tmp/log"; continue
    fi
    if [ -z "$ref" ]; then ref=$tmp/$name-$i.ckpt; continue; fi
    if cmp -s "$ref" "$tmp/$name-$i.ckpt"; then ok "$name: $cfg = the first's bytes"
    else bad "$name: $cfg: checkpoint differs from '$1'"; fi
  done
}

h="--dtype float16"
same mlp mlp16 "$h" "$h --schedule 1f1b" "$h --schedule gpipe" "$h --schedule 1f1b --runner threads" \
  "$h --runner threads" "$h --recompute" "$h --schedule interleaved --recompute --runner threads"
same mlp mlp16-zb "$h --stages 3 --splits auto --schedule zb-h1" \
  "$h --stages 3 --splits auto --schedule zb-h1 --runner threads" "$h --stages 3 --splits auto"
same mlp mlp16-rep "$h --replicas 2" "$h --replicas 2 --runner threads"
same mlp mlp16-master "$h --fp32-weights" "$h --fp32-weights --schedule 1f1b --runner threads" \
  "$h --fp32-weights --recompute --schedule gpipe"
same mlp mlp16-off "$h --offload all" "$h --schedule 1f1b --runner threads"
same cnn cnn16 "$h" "$h --schedule 1f1b --runner threads" "$h --recompute"
a="--dtype float16 --accum-dtype float16 --loss-scale dynamic --loss-scale-period 3"
same mlp mlp16-acc "$a" "$a --schedule gpipe --runner threads" "$a --schedule 1f1b --recompute"
same mlp mlp16-adam "$h --optimizer adam --first-moment-dtype float16" \
  "$h --optimizer adam --first-moment-dtype float16 --schedule 1f1b --runner threads"

# binary16 weights are not fp32 master weights
if cmp -s "$tmp/mlp16-master-1.ckpt" "$tmp/mlp16-1.ckpt"; then bad "binary16 weights change the bits"
else ok "binary16 weights change the bits"; fi

# float16 is not float32
$BIN "${common[@]}" --model mlp --save "$tmp/f32.ckpt" > "$tmp/log" 2>&1
if cmp -s "$tmp/f32.ckpt" "$tmp/mlp16-1.ckpt"; then bad "float16 changes the bits"
else ok "float16 changes the bits"; fi

# memory: stash and exchange halved on every IPU (the lines of the setup)
$BIN --data "$syn" --seed 5 --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --repeat-count 2 \
  --epochs 1 --model mlp --no-progress > "$tmp/m32" 2>&1
$BIN --data "$syn" --seed 5 --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --repeat-count 2 \
  --epochs 1 --model mlp --no-progress --dtype float16 --loss-scale dynamic > "$tmp/m16" 2>&1
has "the setup names the precision" "Precision: storage float16 (weights float16, rounded stochastically), accumulators float32, dynamic loss scaling from 32768" "$tmp/m16"
has "the run reports the loss scale" "Dynamic loss scaling: 0 steps skipped on overflow, scale now 32768" "$tmp/m16"
hasnt "float32 prints no precision line" "Precision:" "$tmp/m32"
plan_cat() { # FILE DEVICE CATEGORY: bytes from ipupipe-plan's category comment
  sed -n "s/.*device $2 by category.* $3 \([0-9]*\).*/\1/p" "$1"
}
$PLAN --model mlp --dtype float16 --accum-dtype float32 > "$tmp/p16" 2> "$tmp/err" || bad "ipupipe-plan --dtype float16 runs" "$tmp/err"
$PLAN --model mlp --dtype float32 --accum-dtype float16 > "$tmp/p32" 2> "$tmp/err" || bad "ipupipe-plan --accum-dtype float16 runs" "$tmp/err"
for d in 0 1; do
  for c in weights stash exchange; do
    b16=$(plan_cat "$tmp/p16" $d $c); b32=$(plan_cat "$tmp/p32" $d $c)
    if [ -n "$b16" ] && [ -n "$b32" ] && [ $((2 * b16)) -le $((b32 + 1024)) ] && [ $((2 * b16 + 1024)) -ge "$b32" ]; then
      ok "ipupipe-plan: device $d $c $b32 -> $b16 bytes (half)"
    else bad "ipupipe-plan: device $d $c $b32 -> $b16 is not half" "$tmp/p16"; fi
  done
done
$PLAN --model mlp --dtype float16 --fp32-weights > "$tmp/p16m" 2> "$tmp/err" || bad "ipupipe-plan --fp32-weights runs" "$tmp/err"
w16=$(plan_cat "$tmp/p16" 0 weights); wm=$(plan_cat "$tmp/p16m" 0 weights)
if [ -n "$wm" ] && [ -n "$w16" ] && [ $((2 * w16)) -le $((wm + 1024)) ] && [ $((2 * w16 + 1024)) -ge "$wm" ]; then
  ok "ipupipe-plan --fp32-weights: device 0 weights $wm bytes, twice float16's $w16"
else bad "ipupipe-plan --fp32-weights: device 0 weights $wm vs $w16" "$tmp/p16m"; fi
has "the plan header carries the storage type" "#define IPUP_PLAN_DTYPE IPUP_DTYPE_F16 /* cfg.dtype */" "$tmp/p16"

# refusals
if $BIN "${common[@]}" --model mlp --dtype bfloat16 > "$tmp/log" 2>&1; then bad "--dtype bfloat16 is refused"
else has "--dtype bfloat16 names the choices" "--dtype: unknown 'bfloat16' (float32 or float16)" "$tmp/log"; fi
if $BIN "${common[@]}" --model mlp --loss-scale 0.5 > "$tmp/log" 2>&1; then bad "--loss-scale 0.5 is refused"
else ok "--loss-scale 0.5 is refused"; fi
if $PLAN --model mlp --loss-scale x > "$tmp/log" 2>&1; then bad "ipupipe-plan --loss-scale x is refused"
else has "ipupipe-plan --loss-scale x names the choices" "'dynamic'" "$tmp/log"; fi
finish
