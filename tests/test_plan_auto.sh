#!/usr/bin/env bash
# tests/test_plan_auto.sh - the automatic plan in the tools. build/mnist-train --plan auto
# trains with the plan ipup_plan_auto chooses, and its simulated throughput equals the
# plan's prediction (two cells of docs/tutorials.md's table: cnn at 1M on 4 IPUs, mlp-gelu
# at 4M on 2 IPUs, on synthetic data); build/ipupipe-plan --auto writes the header of that
# plan (the same choice as the trainer's), names the smallest memory that fits when none
# does (exit 2), and refuses the options the plan chooses itself; the trainer likewise.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-plan
make_tmp plan_auto
need_bin "$tool"
need_bin build/mnist-train
gen_syn "$tmp/data" 600 100

# the trainer: predicted == simulated, and the plan line
cell() { # NAME MODEL IPUS MEMORY
  local name=$1
  shift
  if build/mnist-train --data "$tmp/data" --epochs 1 --quiet --plan auto --model "$1" --ipus "$2" \
       --ipu-memory "$3" >"$tmp/train.out" 2>"$tmp/train.err"; then ok "$name: trains"
  else bad "$name: trains" "$tmp/train.out" "$tmp/train.err"; fi
  if grep -qE '^Simulated throughput: ([0-9]+) samples/s \(--plan auto predicted \1 for ' "$tmp/train.out"; then
    ok "$name: simulated samples/s = predicted ($(grep -o 'predicted [0-9]*' "$tmp/train.out" | tail -1))"
  else bad "$name: simulated samples/s = predicted" "$tmp/train.out"; fi
  has "$name: the plan is printed" "Plan auto for " "$tmp/train.out"
}
cell "cnn, 4 IPUs, 1M" cnn 4 1M
has "cnn, 4 IPUs, 1M: 4 replicas of batch 1 x 64" "1 stage, schedule grouped, 4 replicas, batch 1 x 64 micro-batches" \
  "$tmp/train.out"
cell "mlp-gelu, 2 IPUs, 4M" mlp-gelu 2 4M
has "mlp-gelu, 2 IPUs, 4M: 2 stages of batch 30" "2 stages, schedule grouped, 1 replica, batch 30 x 1" "$tmp/train.out"

# ipupipe-plan --auto: the same plan as a header
expect 0 "--auto writes the header" -- --auto --model mlp-gelu --ipus 2 --ipu-memory 4M
has "--auto: the plan on stderr" "2 stages at 0,2, grouped, 1 replica, B 30 x M 1" "$tmp/err"
has "--auto: the header's stages" "#define IPUP_PLAN_STAGES 2" "$tmp/out"
has "--auto: the header's split" "#define IPUP_PLAN_SPLIT_LIST {2}" "$tmp/out"
has "--auto: the header's batch" "#define IPUP_PLAN_BATCH 30 " "$tmp/out"
has "--auto: the header's memory" "#define IPUP_PLAN_IPU_MEMORY 4194304 " "$tmp/out"
has "--auto: the prediction in the comment" "predicted 26025 samples/s" "$tmp/out"

# nothing fits: the smallest memory that would
expect 2 "--auto, mlp at 256K on 2 IPUs" -- --auto --model mlp --ipus 2 --ipu-memory 256K
has "--auto: no plan fits, the smallest memory named" \
  "no plan fits 262144 bytes per IPU on 2 IPUs; the smallest memory that fits is 1720384 bytes per IPU" "$tmp/err"
expect 0 "--auto at exactly that memory fits" -- --auto --model mlp --ipus 2 --ipu-memory 1720384
expect 2 "--auto at one byte less does not" -- --auto --model mlp --ipus 2 --ipu-memory 1720383

# refusals
expect 2 "--auto without --ipu-memory" -- --auto --model mlp
has "--auto without --ipu-memory: says so" "--auto needs --ipu-memory BYTES" "$tmp/err"
expect 2 "--auto with --schedule" -- --auto --model mlp --ipu-memory 4M --schedule 1f1b
has "--auto with --schedule: says so" "--auto chooses --schedule itself; leave --schedule out" "$tmp/err"
expect 2 "--auto-table with --ipus" -- --auto-table --ipus 2
tool=build/mnist-train
expect 2 "mnist-train --plan auto without --ipu-memory" -- --plan auto --data "$tmp/data"
has "mnist-train --plan auto without --ipu-memory: says so" "--plan auto needs --ipu-memory BYTES" "$tmp/err"
expect 2 "mnist-train --plan auto with --splits" -- --plan auto --ipu-memory 4M --splits none
has "mnist-train --plan auto with --splits: says so" "--plan auto chooses --splits itself" "$tmp/err"
expect 2 "mnist-train --plan other" -- --plan balanced
expect 2 "mnist-train --plan auto, nothing fits" -- --plan auto --ipu-memory 256K --ipus 2 --data "$tmp/data"
has "mnist-train: the smallest memory named" "the smallest memory that fits is 1720384 bytes per IPU" "$tmp/err"
finish
