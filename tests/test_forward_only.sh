#!/usr/bin/env bash
# tests/test_forward_only.sh - forward-only (inference) tables in ipupipe-sched: the
# flag, the tables of every kind that has one, the refusals, the figures (latency,
# steady-state throughput, in-flight inputs), every format, the CSV round trip with F-only
# rows, mutated F-only CSVs refused by the verifier, and the trainer's inference line.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
make_tmp forward_only
need_bin "$tool"

expect 0 "--help" -- --help
has "--help documents --forward-only" "--forward-only            inference: F ops only" "$tmp/out"

# the fill of grouped / gpipe / 1f1b: F(s,m) at step s+m
for k in grouped gpipe 1f1b; do
  expect 0 "$k forward only" -- -S 4 -M 6 --schedule $k --forward-only
  has "$k row IPU0" "IPU0  F0 F1 F2 F3 F4 F5 .. .. .." "$tmp/out"
  has "$k row IPU3" "IPU3  .. .. .. F0 F1 F2 F3 F4 F5" "$tmp/out"
  has "$k title" "$k  T=9  in-flight 1,2,2,2" "$tmp/out"
  has "$k latency" "latency of one micro-batch 4 (BSP time), 4 steps" "$tmp/out"
  has "$k throughput" "throughput in steady state 1 micro-batches per time unit (BSP)" "$tmp/out"
  hasnt "$k has no backward" "B0" "$tmp/out"
done
# sequential (sharding): one IPU at a time, F(s,m) at step m*S+s
expect 0 "sequential forward only" -- -S 3 -M 2 --schedule sequential --forward-only
has "sequential row IPU2" "IPU2  .. .. F0 .. .. F1" "$tmp/out"
has "sequential throughput" "throughput in steady state 0.333333 micro-batches per time unit (BSP)" "$tmp/out"
has "sequential in flight" "in-flight inputs per stage (no stash): 1 1 1" "$tmp/out"
# interleaved-1f1b: Megatron's forward order on P = 2 devices
expect 0 "interleaved-1f1b forward only" -- -S 4 -M 4 --schedule interleaved-1f1b --forward-only
has "interleaved-1f1b IPU0" "IPU0  0F0 0F1 2F0 2F1 0F2 0F3 2F2 2F3 .." "$tmp/out"
has "interleaved-1f1b IPU1" "IPU1  ..  1F0 1F1 3F0 3F1 1F2 1F3 3F2 3F3" "$tmp/out"
# no forward-only form
expect 2 "interleaved refused" -- -S 4 -M 8 --schedule interleaved --forward-only
has "interleaved says why" "interleaved has no forward-only form: it alternates forward and backward steps" "$tmp/err"
expect 2 "zb-h1 refused" -- -S 4 -M 8 --schedule zb-h1 --forward-only
has "zb-h1 says why" "its rule splits the backward into I and W" "$tmp/err"
expect 2 "--forward-only with --check" -- --check "$tmp/none.csv" --forward-only
expect 2 "--forward-only with popxl numbering" -- -S 3 -M 4 --forward-only --stage-numbering popxl
expect 2 "--forward-only with concurrent stages" -- -S 3 -M 4 --schedule gpipe --map '0,[1,2],3' --forward-only
has "concurrent stages: says why" "--forward-only does not take concurrent stages (a bracket in --map)" "$tmp/err"
hasnt "concurrent stages: no table printed" "1B0" "$tmp/out"
expect 2 "strict: 3 IPUs for grouped" -- -S 3 -M 4 --forward-only --strict
expect 0 "not strict: a warning" -- -S 3 -M 4 --forward-only
has "power-of-two warning" "3 IPUs is not a power of two" "$tmp/out"
# shared devices: list scheduling, one op per device per step
expect 0 "mapping 0,1,0" -- -S 3 -M 3 --schedule gpipe --map 0,1,0 --forward-only
has "mapping 0,1,0 IPU0" "IPU0  0F0 0F1 2F0 0F2 2F1 2F2" "$tmp/out"

# figures with costs and activation bytes
expect 0 "costs" -- -S 3 -M 4 --schedule gpipe --forward-only --cost F=2,exchange=1 --act-bytes 100
has "BSP latency with exchange" "latency of one micro-batch 9 (BSP time), 3 steps" "$tmp/out"
has "bytes in flight" "activation bytes in flight per stage: 100 200 200  (total 500)" "$tmp/out"

# every format
expect 0 "json" -- -S 4 -M 8 --forward-only --format json
has "json fields" '"forward_only":true,"latency":4,"latency_steps":4,"throughput":1' "$tmp/out"
expect 0 "svg" -- -S 4 -M 8 --forward-only --format svg
has "svg title" "grouped forward only  S=4 M=8" "$tmp/out"
hasnt "svg has no update" "update U" "$tmp/out"
expect 0 "trace" -- -S 4 -M 8 --forward-only --format trace
hasnt "trace has no update" '"name":"U"' "$tmp/out"
has "trace has F ops" '"name":"3F7"' "$tmp/out"
expect 0 "steps layout" -- -S 3 -M 2 --forward-only --format steps
has "steps row" "Step 3:        1F1    2F0" "$tmp/out"
expect 0 "compare" -- -S 4 -M 8 --forward-only --compare
has "compare header" "forward only (inference)  S=4 M=8" "$tmp/out"
has "compare sequential" "sequential          4     32        32        11        4      4       0.25  1,1,1,1" "$tmp/out"
has "compare zb-h1 refused" "zb-h1              -- zb-h1 has no forward-only form" "$tmp/out"
expect 0 "compare csv" -- -S 4 -M 8 --forward-only --compare --format csv
has "compare csv row" "gpipe,4,11,11,11,4,4,1,0,1 2 2 2" "$tmp/out"

# CSV round trip: an F-only CSV loads as a forward-only table with the same figures
for k in grouped sequential interleaved-1f1b; do
  "$tool" -S 4 -M 6 --schedule $k --forward-only --format csv >"$tmp/$k.csv"
  "$tool" -S 4 -M 6 --schedule $k --forward-only --quiet >"$tmp/$k.grid"
  expect 0 "$k CSV checks" -- --check "$tmp/$k.csv"
  has "$k CSV is forward only" "forward only (inference)" "$tmp/out"
  expect 0 "$k CSV again" -- --check "$tmp/$k.csv" --format csv
  if cmp -s "$tmp/out" "$tmp/$k.csv"; then ok "$k CSV round trip is byte-identical"; else bad "$k CSV round trip differs"; fi
  expect 0 "$k CSV grid" -- --check "$tmp/$k.csv" --quiet
  if diff <(sed 1d "$tmp/$k.grid") <(sed 1d "$tmp/out") >/dev/null; then ok "$k CSV grid equals the generated"; else bad "$k CSV grid differs"; fi
done
# mutations of an F-only CSV: the verifier names the broken rule
printf '0F0,0F1,0F2\n,1F0,1F1\n' >"$tmp/missing.csv"
expect 1 "missing F refused" -- --check "$tmp/missing.csv"
has "missing F named" "[1F2] is missing from the forward-only table" "$tmp/out"
printf '0F0,0F1\n1F0,1F1\n' >"$tmp/early.csv"
expect 1 "F before its input refused" -- --check "$tmp/early.csv"
has "rule 3 named" "rule 3 (forward after the previous stage's forward)" "$tmp/out"
printf '0F0,0F0\n,1F0\n' >"$tmp/twice.csv"
expect 1 "F twice refused" -- --check "$tmp/twice.csv"
has "twice named" "appears twice" "$tmp/out"
printf '0F1,0F0,\n,1F1,1F0\n' >"$tmp/order.csv"
expect 0 "out-of-order forwards are a valid table" -- --check "$tmp/order.csv"
printf '0F0,,1F0\n,0F1,\n' >"$tmp/device.csv"
expect 1 "stage on two devices refused" -- --check "$tmp/device.csv"
has "rule 2 named" "rule 2" "$tmp/out"
printf '0F0,0F1\n,1F0,1F1,1B0\n' >"$tmp/mixed.csv"
expect 1 "a training CSV missing its backward" -- --check "$tmp/mixed.csv"
has "training rules apply" "is missing" "$tmp/out"
printf '0F1,0F0\n,1F0,1F1\n' >"$tmp/perdevice.csv"
expect 0 "--respace of an F-only CSV" -- --check "$tmp/perdevice.csv" --respace
has "respaced forward only" "forward only (inference)" "$tmp/out"

# the trainer's test evaluation goes through ipup_predict and prints its figures
if [ -x build/mnist-train ]; then
  gen_syn "$tmp/syn" 240 50
  build/mnist-train --model mlp --data "$tmp/syn" --epochs 1 --batch-size 4 --batches-to-accumulate 4 >"$tmp/train" 2>&1
  has "trainer accuracy line" "Test accuracy:" "$tmp/train"
  has "trainer inference line" "Simulated inference: 50 test images in" "$tmp/train"
  build/mnist-train --model mlp --data "$tmp/syn" --epochs 1 --batch-size 4 --batches-to-accumulate 4 --runner threads >"$tmp/train2" 2>&1
  if [ "$(grep 'Test accuracy' "$tmp/train")" = "$(grep 'Test accuracy' "$tmp/train2")" ]; then ok "threads give the same test accuracy"; else bad "threads change the test accuracy"; fi
else
  bad "build/mnist-train is missing"
fi
finish
