#!/usr/bin/env bash
# tests/test_trainer_knobs.sh - build/mnist-train's knobs from the Graphcore tutorials, on
# small synthetic IDX files (no network, no data/):
#  1. PopXL's Adam: mlp-gelu's eps 1e-5, --adam-eps, --weight-decay, --no-bias-correction
#     (each changes the weights; refused with another optimizer or a bad value);
#  2. --test-batch-size: the same test accuracy and checkpoint as without it;
#  3. the power-of-two rule over replicas x IPUs: a warning, an error under --strict.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
tool=build/mnist-train
need_bin "$tool"
make_tmp trainer_knobs
syn=$tmp/syn
gen_syn "$syn" 600 163
g=(--data "$syn" --seed 3 --epochs 1 --train-limit 300 --no-progress --model mlp-gelu)

# ---- 1. PopXL's Adam
expect 0 "mlp-gelu trains with Adam" -- "${g[@]}" --save "$tmp/base.ckpt"
has "mlp-gelu uses the PopXL tutorial's eps 1e-5" "Optimizer adam (eps 1e-05), learning rate 0.001" "$tmp/out"
expect 0 "--adam-eps 1e-5 is the recipe's" -- "${g[@]}" --adam-eps 1e-5 --quiet --save "$tmp/eps5.ckpt"
if cmp -s "$tmp/base.ckpt" "$tmp/eps5.ckpt"; then ok "--adam-eps 1e-5: the recipe's bits"
else bad "--adam-eps 1e-5: the recipe's bits"; fi
for k in "--adam-eps 1e-8" "--weight-decay 0.01" "--no-bias-correction"; do
  # shellcheck disable=SC2086
  expect 0 "$k runs" -- "${g[@]}" $k --save "$tmp/k.ckpt"
  if [ -s "$tmp/k.ckpt" ] && ! cmp -s "$tmp/base.ckpt" "$tmp/k.ckpt"; then ok "$k changes the weights"
  else bad "$k changes the weights"; fi
done
expect 0 "the switches on the optimizer line" -- "${g[@]}" --weight-decay 0.01 --no-bias-correction --adam-eps 1e-8
has "the optimizer line names them" "Optimizer adam (eps 1e-08, decoupled weight decay 0.01, no bias correction)" "$tmp/out"
expect 2 "--weight-decay with momentum" -- --data "$syn" --model mlp --weight-decay 0.01
has "says it is Adam's" "--weight-decay is an option of Adam, but this run trains with momentum; add --optimizer adam or drop it" "$tmp/err"
expect 0 "--weight-decay with --optimizer adam" -- --data "$syn" --model mlp --optimizer adam --weight-decay 0.01 \
  --epochs 1 --train-limit 300 --batch-size 8 --batches-to-accumulate 4 --quiet
expect 2 "--adam-eps 0" -- "${g[@]}" --adam-eps 0
has "--adam-eps 0 says why" "--adam-eps must be > 0 (e.g. 1e-8 or 1e-5), got '0'" "$tmp/err"
expect 2 "--weight-decay -1" -- "${g[@]}" --weight-decay -1
has "--weight-decay -1 says why" "--weight-decay needs a number in [0, 1], got '-1'" "$tmp/err"

# ---- 2. --test-batch-size: the evaluation's micro-batch, not the training's
# (a learning rate low enough that the test accuracy is neither 0 nor 100%)
lo=(--learning-rate 0.00003)
expect 0 "--test-batch-size 80" -- "${g[@]}" "${lo[@]}" --test-batch-size 80 --save "$tmp/tb80.ckpt"
has "the test micro-batch is named" "Test: micro-batch 80 x 6 micro-batches per wave (--test-batch-size)" "$tmp/out"
grep '^Test accuracy' "$tmp/out" > "$tmp/acc80"
"$tool" "${g[@]}" "${lo[@]}" --save "$tmp/tb5.ckpt" > "$tmp/out5" 2>&1
grep '^Test accuracy' "$tmp/out5" > "$tmp/acc5"
if [ -s "$tmp/acc5" ] && cmp -s "$tmp/acc5" "$tmp/acc80"; then ok "--test-batch-size 80: the accuracy at 5 ($(cat "$tmp/acc5"))"
else bad "--test-batch-size 80: the accuracy at 5" "$tmp/acc5" "$tmp/acc80"; fi
if [ -s "$tmp/tb5.ckpt" ] && cmp -s "$tmp/tb5.ckpt" "$tmp/tb80.ckpt"; then ok "--test-batch-size leaves training alone (the same checkpoint)"
else bad "--test-batch-size leaves training alone (the same checkpoint)"; fi
expect 0 "--test-batch-size 7, threads, 3 stages" -- "${g[@]}" --test-batch-size 7 --runner threads --stages 3 \
  --splits auto --quiet
expect 2 "--test-batch-size 0" -- "${g[@]}" --test-batch-size 0
has "--test-batch-size 0 says why" "--test-batch-size needs an integer in 1..4096, got '0'" "$tmp/err"

# ---- 3. power-of-two IPU counts (replicas x IPUs per replica)
m=(--data "$syn" --model mlp --epochs 1 --train-limit 300 --batch-size 8 --batches-to-accumulate 4 --quiet)
expect 0 "--ipus 6 runs" -- "${m[@]}" --ipus 6
has "--ipus 6 warns" "mnist-train: warning: 6 IPUs (3 replicas x 2 IPUs) is not a power of two; Graphcore allocates IPUs in powers of two, so this run would occupy 8 (an error under --strict)" "$tmp/err"
expect 2 "--ipus 6 --strict" -- "${m[@]}" --ipus 6 --strict
has "--ipus 6 --strict says what to use" "mnist-train: error: 6 IPUs (3 replicas x 2 IPUs) is not a power of two: Graphcore allocates IPUs in powers of two (1, 2, 4, 8, 16, 32, 64); use 4 or 8 IPUs in all, or drop --strict" "$tmp/err"
expect 2 "--replicas 3 --strict" -- "${m[@]}" --replicas 3 --strict
expect 0 "--ipus 8 --strict" -- "${m[@]}" --ipus 8 --strict
hasnt "--ipus 8: no warning" "power of two" "$tmp/err"
expect 2 "3 IPUs a replica, --ipus 6 --strict" -- "${m[@]}" --ipus 6 --stages 3 --splits auto --schedule 1f1b --strict
has "names the replica's IPUs" "one replica's 3 IPUs make no power of two with any replica count" "$tmp/err"

finish
