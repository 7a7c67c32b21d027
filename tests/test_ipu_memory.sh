#!/usr/bin/env bash
# tests/test_ipu_memory.sh - finite IPU memory, per-stage recomputation and offload in
# build/mnist-train and build/ipupipe-plan:
#  1. every knob (--offload optimizer|weights|activations|all, --recompute,
#     --recompute-stages, combined) writes the --save file of the plain run, byte for
#     byte (mlp and cnn, 1f1b and grouped, both runners; small synthetic IDX files), and a
#     run resumed across them ends with the bits of an uninterrupted one;
#  2. --ipu-memory below the plan: exit 2 with IPUP_ERR_OOM's message (the IPU, its
#     stages, bytes by category, the remedies in the tutorials' order), the same text
#     from ipupipe-plan; at the plan's bytes it runs; with the remedies it fits;
#  3. bad values of the new options are refused with a message.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
PLAN=build/ipupipe-plan
need_bin "$BIN"
need_bin "$PLAN"
make_tmp ipu_memory
syn=$tmp/syn
gen_syn "$syn" 300 40
common=(--data "$syn" --quiet --seed 3 --train-limit 256 --batch-size 8 --batches-to-accumulate 8 --repeat-count 2
        --epochs 1)

# ---- 1. the bits do not change
for model in mlp cnn; do
  lim=(); [ "$model" = cnn ] && lim=(--train-limit 64 --batches-to-accumulate 4 --optimizer adam)
  for sched in 1f1b grouped; do
    ref=$tmp/$model-$sched.ckpt
    if ! $BIN "${common[@]}" "${lim[@]}" --model $model --schedule $sched --save "$ref" > "$tmp/log" 2>&1; then
      bad "$model $sched: the plain run" "$tmp/log"; continue
    fi
    for extra in "--offload" "--offload weights" "--offload activations" "--offload all" \
                 "--recompute --offload all" "--recompute-stages 0,1 --offload weights,activations" \
                 "--offload all --runner threads"; do
      f=$tmp/$model-knob.ckpt
      rm -f "$f"
      # shellcheck disable=SC2086
      if $BIN "${common[@]}" "${lim[@]}" --model $model --schedule $sched $extra --save "$f" > "$tmp/log" 2>&1 &&
         cmp -s "$ref" "$f"; then ok "$model $sched $extra: checkpoint identical"
      else bad "$model $sched $extra: checkpoint identical" "$tmp/log"; fi
    done
  done
done

# a run saved with everything offloaded resumes without it, and the other way, to the
# bits of an uninterrupted run (the state is the same whatever lives in streaming memory)
run2=(--data "$syn" --quiet --seed 3 --train-limit 256 --batch-size 8 --batches-to-accumulate 8 --repeat-count 2
      --model mlp --optimizer adam)
$BIN "${run2[@]}" --epochs 2 --save "$tmp/e2.ckpt" > "$tmp/log" 2>&1
$BIN "${run2[@]}" --epochs 1 --offload all --save "$tmp/e1-off.ckpt" > "$tmp/log" 2>&1
$BIN "${run2[@]}" --epochs 2 --load "$tmp/e1-off.ckpt" --save "$tmp/e2-a.ckpt" > "$tmp/log" 2>&1
$BIN "${run2[@]}" --epochs 1 --save "$tmp/e1.ckpt" > "$tmp/log" 2>&1
$BIN "${run2[@]}" --epochs 2 --offload all --recompute --runner threads --load "$tmp/e1.ckpt" --save "$tmp/e2-b.ckpt" \
  > "$tmp/log" 2>&1
if [ -s "$tmp/e2.ckpt" ] && cmp -s "$tmp/e2.ckpt" "$tmp/e2-a.ckpt" && cmp -s "$tmp/e2.ckpt" "$tmp/e2-b.ckpt"; then
  ok "resumed across offload and recomputation: the bits of the uninterrupted run"
else bad "resumed across offload and recomputation: the bits of the uninterrupted run" "$tmp/log"; fi

# ---- 2. --ipu-memory
tool=$BIN
expect 2 "mlp at 256K: refused" -- "${common[@]}" --model mlp --ipu-memory 256K
has "OOM: the IPU and its stage" "error: the pipeline cannot run: IPU0 (replica 0, device 0) out of memory: stage 0 (layers 0..6) needs" "$tmp/err"
has "OOM: the bytes by category and the limit" "(weights 968448, grads 968448, optimizer 968448," "$tmp/err"
has "OOM: the limit" "but the IPU has 262144 (cfg.ipu_bytes)" "$tmp/err"
has "OOM: the remedies in order" "Fix, in the tutorials' order: recomputation of stage 0 (cfg.recompute_stages; saves " "$tmp/err"
has "OOM: then offload" "), offload the optimizer state (IPUP_OFFLOAD_OPTIMIZER; saves 964352 bytes), offload the weights" "$tmp/err"
has "OOM: then more stages, a smaller micro-batch" ", split the model over more stages and IPUs, or use a smaller micro-batch (" "$tmp/err"
has "OOM: the code" "(IPUP_ERR_OOM: " "$tmp/err"
cp "$tmp/err" "$tmp/err-train"
tool=$PLAN
expect 2 "ipupipe-plan --ipu-memory 256K: refused" -- --model mlp --batch-size 8 --microbatches 8 --repeat-count 2 \
  --ipu-memory 256K
sed 's/^ipupipe-plan: /mnist-train: /' "$tmp/err" > "$tmp/err-plan"
if cmp -s "$tmp/err-plan" "$tmp/err-train"; then ok "ipupipe-plan says what the trainer says"
else bad "ipupipe-plan says what the trainer says" "$tmp/err-plan" "$tmp/err-train"; fi
# the header carries the new knobs, and its pools fit the limit
expect 0 "ipupipe-plan with every knob" -- --model mlp --recompute-stages 0 --offload all --ipu-memory 4M
has "header: the recompute mask" "#define IPUP_PLAN_RECOMPUTE_STAGES 0x1u" "$tmp/out"
has "header: the offload bits" "#define IPUP_PLAN_OFFLOAD 7 " "$tmp/out"
has "header: the memory per IPU" "#define IPUP_PLAN_IPU_MEMORY 4194304 " "$tmp/out"
big=$(sed -n 's/^#define IPUP_PLAN_IPU[0-9]*_BYTES \([0-9]*\).*/\1/p' "$tmp/out" | sort -n | tail -1)
if [ -n "$big" ] && [ "$big" -le 4194304 ]; then ok "header: every pool within --ipu-memory ($big bytes)"
else bad "header: every pool within --ipu-memory ($big bytes)" "$tmp/out"; fi
# the plan's own bytes fit; one byte less does not
expect 0 "ipupipe-plan without a limit" -- --model mlp --batch-size 8 --microbatches 8 --repeat-count 2
need=$(sed -n 's/^#define IPUP_PLAN_IPU0_BYTES \([0-9]*\).*/\1/p' "$tmp/out")
tool=$BIN
expect 0 "the trainer at the plan's bytes runs" -- "${common[@]}" --model mlp --ipu-memory "$need"
expect 2 "one byte less is refused" -- "${common[@]}" --model mlp --ipu-memory $((need - 1))
# the remedies the message gives make the mlp fit in 2.5 MB per IPU
expect 2 "mlp at 2560K: refused" -- "${common[@]}" --model mlp --batch-size 32 --ipu-memory 2560K
expect 0 "mlp at 2560K with recomputation and offload fits" -- "${common[@]}" --model mlp --batch-size 32 --ipu-memory 2560K \
  --recompute --offload all

# ---- 3. bad values
expect 2 "--ipu-memory 12X" -- "${common[@]}" --ipu-memory 12X
has "--ipu-memory: what it takes" "--ipu-memory needs a byte count > 0 such as 262144, 256K, 1M or 4MB, got '12X'" "$tmp/err"
expect 2 "--offload stash" -- "${common[@]}" --offload stash
has "--offload: what it takes" "--offload: unknown 'stash'" "$tmp/err"
expect 2 "--recompute-stages 0,0" -- "${common[@]}" --recompute-stages 0,0
has "--recompute-stages: what it takes" "--recompute-stages needs a comma list of distinct stage indices" "$tmp/err"
expect 2 "--recompute-stages 2 on 2 stages" -- "${common[@]}" --recompute-stages 2
has "--recompute-stages past the stages" "cfg.recompute_stages has bit 2 set but the model has 2 stages" "$tmp/err"

finish
