#!/usr/bin/env bash
# tests/test_trainer.sh - end-to-end tests of build/mnist-train.
#
#  1. every schedule and both runners write byte-identical --save files for the
#     same seed (small synthetic IDX files written here: no network, no data/);
#     with recomputation and offload too;
#  2. a run stopped after epoch 1 and resumed for epoch 2 ends with the bytes of a
#     2-epoch run;
#  3. bad flags and bad checkpoints give clear errors;
#  4. --summary-json and --trace write what they promise; the host loop's options
#     (--launch-seconds, --outfeed, --synthetic-data, --infeed-benchmark) do what they say
#     and leave the checkpoint's bits alone;
#  5. with real MNIST (data/mnist, fetched by `make data` when missing) the mlp
#     pipeline reaches >= 97% test accuracy in 2 epochs.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
need_bin "$BIN"
make_tmp trainer
syn=$tmp/syn
gen_syn "$syn" 640 100
common=(--data "$syn" --quiet --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --repeat-count 3)

# ---- 1. schedules x runners: identical checkpoints
ref=""
for model in mlp cnn; do
  if [ "$model" = mlp ]; then splits=(--splits dense128 dense64 dense32); else splits=(--splits conv64 pool2); fi
  lim=(); [ "$model" = cnn ] && lim=(--train-limit 128 --batches-to-accumulate 4)
  ref=""
  for sched in grouped interleaved sequential gpipe 1f1b interleaved-1f1b zb-h1; do
    for runner in coop threads; do
      f=$tmp/$model-$sched-$runner.ckpt
      if ! $BIN "${common[@]}" "${lim[@]}" --model $model "${splits[@]}" --epochs 1 --schedule $sched \
           --runner $runner --save "$f" > "$tmp/log" 2>&1; then
        bad "$model $sched/$runner runs" "$tmp/log"; continue
      fi
      if [ -z "$ref" ]; then ref=$f; continue; fi
      if cmp -s "$ref" "$f"; then ok "$model $sched/$runner: checkpoint identical to $(basename "$ref")"
      else bad "$model $sched/$runner: checkpoint differs from $(basename "$ref")"; fi
    done
  done
  for extra in "--recompute" "--offload" "--recompute --offload --runner threads"; do
    f=$tmp/$model-extra.ckpt
    # shellcheck disable=SC2086
    if $BIN "${common[@]}" "${lim[@]}" --model $model "${splits[@]}" --epochs 1 --schedule 1f1b $extra \
         --save "$f" > "$tmp/log" 2>&1 && cmp -s "$ref" "$f"; then ok "$model $extra: checkpoint identical"
    else bad "$model $extra: checkpoint identical" "$tmp/log"; fi
  done
done
# a different seed must give a different checkpoint (the comparison can fail)
$BIN "${common[@]}" --seed 8 --epochs 1 --save "$tmp/seed8.ckpt" > "$tmp/log" 2>&1
$BIN "${common[@]}" --epochs 1 --save "$tmp/seed7.ckpt" > "$tmp/log" 2>&1
if [ -s "$tmp/seed8.ckpt" ] && ! cmp -s "$tmp/seed7.ckpt" "$tmp/seed8.ckpt"; then ok "another seed, another checkpoint"
else bad "another seed, another checkpoint"; fi

# the per-epoch learning-rate decay reaches the emulator: epoch 2 differs with another decay
$BIN "${common[@]}" --epochs 2 --lr-decay 0.5 --save "$tmp/decay05.ckpt" > "$tmp/log" 2>&1
$BIN "${common[@]}" --epochs 2 --lr-decay 1.0 --save "$tmp/decay10.ckpt" > "$tmp/log" 2>&1
if [ -s "$tmp/decay05.ckpt" ] && ! cmp -s "$tmp/decay05.ckpt" "$tmp/decay10.ckpt"; then ok "--lr-decay changes epoch 2"
else bad "--lr-decay changes epoch 2" "$tmp/log"; fi

# ---- 2. resume: 1 epoch + 1 epoch == 2 epochs (also across runners and schedules)
$BIN "${common[@]}" --epochs 2 --save "$tmp/two.ckpt" > "$tmp/log2" 2>&1
$BIN "${common[@]}" --epochs 1 --save "$tmp/one.ckpt" > "$tmp/log" 2>&1
$BIN "${common[@]}" --epochs 2 --load "$tmp/one.ckpt" --save "$tmp/resumed.ckpt" --runner threads \
     --schedule interleaved > "$tmp/log" 2>&1
if [ -s "$tmp/two.ckpt" ] && cmp -s "$tmp/two.ckpt" "$tmp/resumed.ckpt"; then ok "resume after epoch 1 == 2-epoch run"
else bad "resume after epoch 1 == 2-epoch run" "$tmp/log"; fi
if cmp -s "$tmp/one.ckpt" "$tmp/two.ckpt"; then bad "1-epoch and 2-epoch checkpoints differ"
else ok "1-epoch and 2-epoch checkpoints differ"; fi
for m in cnn mlp-gelu; do
  mo=(--model $m --train-limit 96 --batch-size 4 --batches-to-accumulate 4)
  $BIN "${common[@]}" "${mo[@]}" --epochs 2 --save "$tmp/$m-two.ckpt" > "$tmp/log" 2>&1
  $BIN "${common[@]}" "${mo[@]}" --epochs 1 --save "$tmp/$m-one.ckpt" > "$tmp/log" 2>&1
  $BIN "${common[@]}" "${mo[@]}" --epochs 2 --load "$tmp/$m-one.ckpt" --save "$tmp/$m-res.ckpt" > "$tmp/log" 2>&1
  if [ -s "$tmp/$m-two.ckpt" ] && cmp -s "$tmp/$m-two.ckpt" "$tmp/$m-res.ckpt"; then ok "$m: resume == uninterrupted"
  else bad "$m: resume == uninterrupted" "$tmp/log"; fi
done

# ---- 3. errors: exit code 2 and a message containing the expected words
expect_err() { # NAME "words" ARGS...
  local name=$1 words=$2; shift 2
  if $BIN "$@" > "$tmp/out" 2> "$tmp/err"; then bad "$name: should fail" "$tmp/out"; return; fi
  if grep -qF -- "$words" "$tmp/err"; then ok "$name"; else bad "$name: expected '$words'" "$tmp/err"; fi
}
expect_err "unknown split lists the layer ids" \
  "unknown layer 'dense99'; the layers of model mlp are: flatten, dense256, dense128, dense64, dense32, logits, cel" \
  --data "$syn" --splits dense99
expect_err "split on the first layer: empty stage 0" "stage 0 would be empty" --data "$syn" --splits flatten
expect_err "splits out of order: empty stage named" "stage 1 would be empty: 'dense128' does not come after 'dense64'" \
  --data "$syn" --splits dense64 dense128
expect_err "repeated split" "stage 1 would be empty" --data "$syn" --splits dense64 dense64
expect_err "unknown option" "unknown option '--bogus'" --data "$syn" --bogus
expect_err "unknown schedule lists them" "unknown 'pipedream' (grouped, interleaved" --data "$syn" --schedule pipedream
expect_err "unknown model" "unknown model 'resnet'" --model resnet
expect_err "bad number" "--batch-size needs an integer" --batch-size 0
expect_err "missing value" "--epochs needs a value" --epochs
expect_err "unknown runner" "unknown 'gpu' (coop or threads)" --data "$syn" --runner gpu
expect_err "missing data says make data" "make data" --data "$tmp/nowhere"
expect_err "step larger than the data" "one step needs 4096 samples" --data "$syn" --batch-size 256 --train-limit 100
expect_err "schedule that cannot run says why" "cannot run" --data "$syn" --strict --batches-to-accumulate 3
printf 'not a checkpoint at all, just some text to be long enough for a header ........................\n' > "$tmp/junk.ckpt"
expect_err "--load refuses a non-checkpoint" "not IPUPCKPT" --data "$syn" --load "$tmp/junk.ckpt"
cp "$tmp/two.ckpt" "$tmp/corrupt.ckpt"
printf '\x55' | dd of="$tmp/corrupt.ckpt" bs=1 seek=500 conv=notrunc status=none
expect_err "--load refuses a corrupt checkpoint" "corrupt checkpoint: the CRC-32 is" "${common[@]}" --epochs 3 --load "$tmp/corrupt.ckpt"
expect_err "--load refuses another model" "holds model 'mlp', this run trains 'cnn'" --data "$syn" --model cnn --load "$tmp/two.ckpt"
expect_err "--load refuses another optimizer" "the optimizer is momentum in the file, adam in this emulator" "${common[@]}" --epochs 3 --optimizer adam --load "$tmp/two.ckpt"
expect_err "--load refuses other step geometry" "steps per epoch" "${common[@]}" --epochs 3 --batch-size 4 --load "$tmp/two.ckpt"

# ---- 4. outputs
if $BIN "${common[@]}" --epochs 1 --summary-json "$tmp/s.json" --trace "$tmp/t.json" > "$tmp/out" 2>&1 &&
   grep -q '"test_accuracy": [01]\.[0-9]' "$tmp/s.json" && grep -q '"train_samples_per_second": ' "$tmp/s.json" &&
   grep -q '"ipu_peak_memory_bytes": \[[0-9]*, [0-9]*\]' "$tmp/s.json" && grep -q '"simulated_ipu_seconds": ' "$tmp/s.json" && grep -q '"simulated_launch_seconds": 0.0084840' "$tmp/s.json" &&
   grep -q '"final_loss": ' "$tmp/s.json" && grep -q '"epochs": 1' "$tmp/s.json" && grep -q '"traceEvents"' "$tmp/t.json"
then ok "--summary-json and --trace"
else bad "--summary-json and --trace" "$tmp/s.json"; fi
if $BIN --data "$syn" --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --epochs 1 --no-progress > "$tmp/out" 2>&1 &&
   grep -q '^  0\. flatten-dense256-dense128-dense64  (IPU0)$' "$tmp/out" && grep -q '^  1\. dense32-logits-cel  (IPU1)$' "$tmp/out" &&
   grep -q '^Step 8, Epoch 1, Mean loss: ' "$tmp/out" && grep -q '^Test accuracy: [0-9.]*%$' "$tmp/out" &&
   grep -q '^Throughput: [0-9]* samples/s$' "$tmp/out" && grep -q '^  IPU1: ' "$tmp/out"
then ok "output: stages, memory, Step lines, test accuracy, throughput"
else bad "output: stages, memory, Step lines, test accuracy, throughput" "$tmp/out"; fi
if $BIN --data "$syn" --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --epochs 1 --splits auto --stages 3 > "$tmp/out" 2>&1 &&
   grep -q '^  2\. ' "$tmp/out"; then ok "--splits auto --stages 3 makes 3 stages"
else bad "--splits auto --stages 3 makes 3 stages" "$tmp/out"; fi

# --splits auto: the library's balancer (ipup_balance_stages) over the emulator's layers,
# where an activation is a layer of its own: for the mlp on 2 IPUs stage 1 starts at the
# ReLU of dense256 (the weight-gradient-only dense256 is the largest stage on its own)
if $BIN --data "$syn" --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --epochs 1 --splits auto --stages 2 \
     --no-progress > "$tmp/out" 2>&1 &&
   grep -q '^  0\. flatten-dense256  (IPU0)$' "$tmp/out" &&
   grep -q '^  1\. dense256\.relu-dense128-dense64-dense32-logits-cel  (IPU1)$' "$tmp/out" &&
   $BIN --data "$syn" --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --epochs 1 --splits dense256.relu \
     --no-progress > "$tmp/out2" 2>&1 && grep -q '^  1\. dense256\.relu-dense128' "$tmp/out2"
then ok "--splits auto --stages 2: the library's split, which --splits can name"
else bad "--splits auto --stages 2: the library's split, which --splits can name" "$tmp/out"; fi
# the stage split is in the state's descriptor (docs/state.md), so the files differ there:
# compare the step and the tensor records (names, shapes, values), which follow it
ck_values() { local d; d=$(od -An -tu4 -j104 -N4 "$1" | tr -d ' '); od -An -tx1 -j92 -N8 "$1"; tail -c +$((68 + 48 + d + 1)) "$1" | head -c -4; }
if $BIN "${common[@]}" --epochs 1 --splits auto --stages 5 --save "$tmp/auto5.ckpt" > "$tmp/log" 2>&1 &&
   ! cmp -s "$tmp/seed7.ckpt" "$tmp/auto5.ckpt" && cmp -s <(ck_values "$tmp/seed7.ckpt") <(ck_values "$tmp/auto5.ckpt")
then ok "--splits auto --stages 5: the same step, tensors and values in the checkpoint"
else bad "--splits auto --stages 5: the same step, tensors and values in the checkpoint" "$tmp/log"; fi

# ---- 1b. the IPU count (--ipus: replicas of the pipeline), the mapping, sharding
loud=(--data "$syn" --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --repeat-count 3)
# --ipus 4 on the 2-IPU pipeline is 2 replicas: the bits of --replicas 2
$BIN "${loud[@]}" --train-limit 640 --epochs 1 --replicas 2 --save "$tmp/rep2.ckpt" > "$tmp/log" 2>&1
if $BIN "${loud[@]}" --train-limit 640 --epochs 1 --ipus 4 --no-progress --save "$tmp/ipus4.ckpt" > "$tmp/out" 2>&1 &&
   grep -q '^Pipeline: 2 stages on 2 IPUs x 2 replicas = 4 IPUs, ' "$tmp/out" && [ -s "$tmp/rep2.ckpt" ] &&
   cmp -s "$tmp/rep2.ckpt" "$tmp/ipus4.ckpt" && ! cmp -s "$tmp/seed7.ckpt" "$tmp/ipus4.ckpt"
then ok "--ipus 4 trains 2 replicas of the 2-IPU pipeline (the bits of --replicas 2)"
else bad "--ipus 4 trains 2 replicas of the 2-IPU pipeline (the bits of --replicas 2)" "$tmp/out"; fi
if $BIN "${loud[@]}" --train-limit 640 --epochs 1 --ipus 8 --batches-to-accumulate 2 --no-progress > "$tmp/out" 2>&1 &&
   grep -q '^Pipeline: 2 stages on 2 IPUs x 4 replicas = 8 IPUs, ' "$tmp/out" &&
   grep -q 'x 4 replica(s) = 64 samples per step' "$tmp/out"
then ok "--ipus 8 trains 4 replicas of the 2-IPU pipeline"
else bad "--ipus 8 trains 4 replicas of the 2-IPU pipeline" "$tmp/out"; fi
if $BIN "${loud[@]}" --epochs 1 --splits auto --stages 3 --ipus 6 --train-limit 640 --batches-to-accumulate 4 --no-progress \
     > "$tmp/out" 2>&1 && grep -q '^Pipeline: 3 stages on 3 IPUs x 2 replicas = 6 IPUs, ' "$tmp/out"
then ok "--stages 3 --ipus 6: 2 replicas of 3 IPUs"
else bad "--stages 3 --ipus 6: 2 replicas of 3 IPUs" "$tmp/out"; fi
# --map moves stages between IPUs, never the bits; two stages on one IPU need one IPU
if $BIN "${loud[@]}" --epochs 1 --map 1,0 --no-progress --save "$tmp/map10.ckpt" > "$tmp/out" 2>&1 &&
   grep -q '^  0\. .*(IPU1)$' "$tmp/out" && grep -q '^  1\. .*(IPU0)$' "$tmp/out" && cmp -s "$tmp/seed7.ckpt" "$tmp/map10.ckpt"
then ok "--map 1,0: stage 0 on IPU1, stage 1 on IPU0, checkpoint identical"
else bad "--map 1,0: stage 0 on IPU1, stage 1 on IPU0, checkpoint identical" "$tmp/out"; fi
if $BIN "${loud[@]}" --epochs 1 --map 0,0 --ipus 2 --no-progress --save "$tmp/map00.ckpt" > "$tmp/out" 2>&1 &&
   grep -q '^Pipeline: 2 stages on 1 IPU x 2 replicas = 2 IPUs, ' "$tmp/out" && [ -s "$tmp/map00.ckpt" ]
then ok "--map 0,0 --ipus 2: both stages on one IPU, so 2 IPUs are 2 replicas"
else bad "--map 0,0 --ipus 2: both stages on one IPU, so 2 IPUs are 2 replicas" "$tmp/out"; fi
# --map with a bracket: a concurrent stage (user guide 6.5.7), the same bits on both runners
conc=(--splits dense128 dense64 dense32 --map "0,[1,2],2,3" --epochs 1 --no-progress)
if $BIN "${loud[@]}" "${conc[@]}" --save "$tmp/conc-coop.ckpt" > "$tmp/out" 2>&1 &&
   grep -q '^  1\. dense128  (IPU1+IPU2: concurrent, split by output units)$' "$tmp/out" &&
   grep -q '^Pipeline: 4 stages on 4 IPUs x 1 replica' "$tmp/out" &&
   $BIN "${loud[@]}" "${conc[@]}" --runner threads --save "$tmp/conc-thr.ckpt" > "$tmp/log" 2>&1 &&
   cmp -s "$tmp/conc-coop.ckpt" "$tmp/conc-thr.ckpt" &&
   $BIN "${loud[@]}" "${conc[@]}" --load "$tmp/conc-coop.ckpt" --epochs 2 > "$tmp/log" 2>&1
then ok "--map \"0,[1,2],2,3\": a concurrent stage on IPU1+IPU2, same checkpoint on both runners, resumable"
else bad "--map \"0,[1,2],2,3\": a concurrent stage on IPU1+IPU2, same checkpoint on both runners, resumable" "$tmp/out"; fi
if ! $BIN "${loud[@]}" --map "0,[1,2]" --epochs 1 > "$tmp/out" 2>&1 && grep -q 'stage 1 is the last stage and cannot be concurrent' "$tmp/out" &&
   ! $BIN "${loud[@]}" --map "0,[1,1]" --epochs 1 > "$tmp/out2" 2>&1 && grep -q 'lists device 1 twice' "$tmp/out2"
then ok "--map: a concurrent last stage and a repeated device are refused with their reasons"
else bad "--map: a concurrent last stage and a repeated device are refused with their reasons" "$tmp/out"; fi
# --schedule sharding is sequential (the TF1 tutorial's step 2), named as such
$BIN "${loud[@]}" --epochs 1 --schedule sequential --save "$tmp/seq.ckpt" > "$tmp/log" 2>&1
if $BIN "${loud[@]}" --epochs 1 --schedule sharding --no-progress --save "$tmp/shard.ckpt" > "$tmp/out" 2>&1 &&
   grep -q 'schedule sequential (sharding: no pipelining, one IPU at work at a time)' "$tmp/out" &&
   grep -q 'no main phase: the pipeline never fills' "$tmp/out" && [ -s "$tmp/seq.ckpt" ] && cmp -s "$tmp/seq.ckpt" "$tmp/shard.ckpt"
then ok "--schedule sharding: sequential, named sharding, same checkpoint"
else bad "--schedule sharding: sequential, named sharding, same checkpoint" "$tmp/out"; fi
if $BIN --help | grep -q 'sharding' && $BIN --help | grep -q -- '--ipus N .*IPUs in all' && $BIN --help | grep -q -- '--map'
then ok "--help names sharding, --ipus and --map"
else bad "--help names sharding, --ipus and --map"; fi

# the host loop: the launch cost, synthetic data, the infeed benchmark, the outfeed; the
# training bits do not depend on the launch or the outfeed mode
expect_err "--launch-seconds refuses a negative launch" "--launch-seconds needs seconds in [0, 1000]" --launch-seconds -1
expect_err "--outfeed names its choices" "--outfeed: unknown 'logits' (loss, outputs or both)" --outfeed logits
$BIN "${common[@]}" --epochs 1 --save "$tmp/host0.ckpt" > "$tmp/log" 2>&1
if $BIN --data "$syn" --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 8 --repeat-count 3 --epochs 1 \
     --launch-seconds 0 --outfeed both --runner threads --save "$tmp/host1.ckpt" > "$tmp/out" 2>&1 &&
   grep -q '^Outfeed (both): 64 records delivered during the run, the last of step 7, mean loss [0-9.]*, 512 output rows of 10 floats' "$tmp/out" &&
   grep -q '^Simulated time per step: \([0-9.]*\) us (pipeline \1 us + launch 0.00 us: 3 emulator calls x 0.00 us over 8 steps)$' "$tmp/out" &&
   [ -s "$tmp/host0.ckpt" ] && cmp -s "$tmp/host0.ckpt" "$tmp/host1.ckpt"
then ok "--launch-seconds 0 and --outfeed both: no launch, the records, the same checkpoint"
else bad "--launch-seconds 0 and --outfeed both: no launch, the records, the same checkpoint" "$tmp/out"; fi
if $BIN --synthetic-data --data "$tmp/nowhere" --train-limit 1024 --test-limit 64 --epochs 1 --no-progress > "$tmp/out" 2>&1 &&
   grep -q '^Data: synthetic, 1024 training and 64 test images of random pixels' "$tmp/out" &&
   $BIN --synthetic-data --data "$tmp/nowhere" --train-limit 1024 --test-limit 64 --infeed-benchmark > "$tmp/out2" 2>&1 &&
   grep -q '^Infeed benchmark: the host feed delivers [0-9]* samples/s (1024 samples of epoch 1 in' "$tmp/out2" &&
   grep -q '^Simulated IPUs consume [0-9]* samples/s (one emulator call of 2 steps: 1024 samples' "$tmp/out2" &&
   grep -q '^Feed / IPUs: [0-9.]*x: ' "$tmp/out2" && ! grep -q '^Test accuracy' "$tmp/out2"
then ok "--synthetic-data reads nothing; --infeed-benchmark measures and does not train"
else bad "--synthetic-data reads nothing; --infeed-benchmark measures and does not train" "$tmp/out $tmp/out2"; fi

# ---- 5. real data: mlp >= 97% in 2 epochs
if [ -n "${IPUPIPE_TEST_SLOW:-}" ] && [ "${IPUPIPE_TEST_SLOW}" != 0 ]; then
  echo "skip real-data accuracy under IPUPIPE_TEST_SLOW"
else
  if [ ! -f data/mnist/t10k-labels-idx1-ubyte ]; then examples/mnist/fetch-mnist.sh data/mnist > "$tmp/fetch" 2>&1 || cat "$tmp/fetch"; fi
  if [ -f data/mnist/t10k-labels-idx1-ubyte ] &&
     $BIN --model mlp --epochs 2 --batches-to-accumulate 4 --learning-rate 0.05 --lr-decay 0.3 --quiet > "$tmp/out" 2>&1; then
    acc=$(sed -n 's/^Test accuracy: \([0-9.]*\)%$/\1/p' "$tmp/out")
    if awk -v a="$acc" 'BEGIN { exit !(a >= 97.0) }'; then ok "real MNIST: mlp reaches $acc% (>= 97%) in 2 epochs"
    else bad "real MNIST: mlp reaches only ${acc:-?}% in 2 epochs (< 97%)" "$tmp/out"; fi
  else
    bad "real MNIST: no data/mnist and 'make data' failed (network?)" "$tmp/out"
  fi
fi

finish
