#!/usr/bin/env bash
# tests/test_dualpipe.sh - DualPipeV (docs/schedules.md §3): the per-device orders equal
# PyTorch's ScheduleDualPipeV on every committed fixture (tests/fixtures/pytorch/dualpipev_*),
# the generated CSV (overlapped F&B cells) loads and verifies as it is, the rules are
# refused with a message naming them, and mnist-train --schedule dualpipe-v writes the
# checkpoint bytes of --schedule grouped on the same stages and map, on both runners.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
need_bin "$tool"
need_bin build/mnist-train
make_tmp dualpipe

# 1. PyTorch's per-device orders: each row of the fixture is one rank's actions in order;
#    ipupipe's row, its idle cells dropped, must read the same
n=0
for f in tests/fixtures/pytorch/dualpipev_*rank_*mb.csv; do
  b=$(basename "$f" .csv); P=${b#dualpipev_}; P=${P%%rank_*}; M=${b##*rank_}; M=${M%mb}
  if ! $tool -S $((2 * P)) -M "$M" --schedule dualpipe-v --format csv >"$tmp/g.csv" 2>"$tmp/err"; then
    bad "$b: generate P=$P M=$M" "$tmp/err"; continue
  fi
  sed 's/,,*/,/g; s/^,//; s/,$//' "$tmp/g.csv" >"$tmp/orders.csv"
  if cmp -s "$tmp/orders.csv" "$f"; then ok "$b: every device's order equals PyTorch's"
  else bad "$b: per-device order differs from PyTorch's ScheduleDualPipeV"; diff "$tmp/orders.csv" "$f" | head -4; fi
  n=$((n + 1))
  # the lock-step table with its OVERLAP_F_B cells is valid as written
  expect 0 "$b: the generated CSV verifies without --respace" -- --check "$tmp/g.csv"
done
[ "$n" -ge 6 ] && ok "$n PyTorch fixtures compared" || bad "only $n PyTorch fixtures found"
$tool -S 8 -M 10 --schedule dualpipe-v --format csv >"$tmp/g.csv"
has "an overlapped F&B cell in PyTorch's notation" "(0F7;7B3)OVERLAP_F_B" "$tmp/g.csv"

# 2. the rules, refused with IPUP_ERR_CONFIG (exit 2) and named
expect 2 "odd S" -- -S 7 -M 16 --schedule dualpipe-v
has "odd S: the rule" "S = 2P" "$tmp/err"
expect 2 "M < S" -- -S 8 -M 7 --schedule dualpipe-v
has "M < S: the rule" "needs M >= 2P = S" "$tmp/err"
expect 2 "not the V mapping" -- -S 4 -M 8 --schedule dualpipe-v --map 0,1,0,1
has "map: the rule" "needs the V mapping" "$tmp/err"
expect 0 "the V mapping given" -- -S 4 -M 8 --schedule dualpipe-v --map 0,1,1,0

# 3. the emulator: the bits of grouped on the same stages and map, both runners
syn=$tmp/syn
gen_syn "$syn" 640 100
common=(--data "$syn" --quiet --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 8
        --epochs 1 --stages 4 --map 0,1,1,0 --splits auto)
for model in mlp cnn; do
  lim=(); [ "$model" = cnn ] && lim=(--train-limit 128)
  for sched in grouped dualpipe-v; do
    for runner in coop threads; do
      if ! build/mnist-train "${common[@]}" "${lim[@]}" --model $model --schedule $sched --runner $runner \
           --save "$tmp/$model-$sched-$runner.ckpt" >"$tmp/log" 2>&1; then
        bad "$model $sched/$runner runs" "$tmp/log"
      fi
    done
  done
  for c in dualpipe-v-coop dualpipe-v-threads grouped-threads; do
    if cmp -s "$tmp/$model-grouped-coop.ckpt" "$tmp/$model-$c.ckpt"; then
      ok "$model $c: checkpoint identical to grouped/coop on map 0,1,1,0"
    else bad "$model $c: checkpoint differs from grouped/coop"; fi
  done
done

# 4. DualPipe (two model copies): per device DualPipeV's program of the half rank, the rules
#    named, the CSV verified once marked --dual; the trainer runs the copies as 2 replicas
#    of M/2 micro-batches, bit for bit --replicas 2 with half the accumulation count
expect 0 "dualpipe P=4 M=16" -- -S 8 -M 16 --schedule dualpipe
has "dualpipe: async time" "async time 49 " "$tmp/out"
expect 2 "dualpipe odd P" -- -S 6 -M 12 --schedule dualpipe
has "dualpipe odd P: the rule" "needs an even P" "$tmp/err"
expect 2 "dualpipe M odd" -- -S 8 -M 17 --schedule dualpipe
has "dualpipe M odd: the rule" "needs M even and M >= 2P" "$tmp/err"
expect 2 "dualpipe M < 2P" -- -S 8 -M 6 --schedule dualpipe
$tool -S 8 -M 16 --schedule dualpipe --format csv >"$tmp/dp.csv"
has "dualpipe CSV: an overlapped cell" ")OVERLAP_F_B" "$tmp/dp.csv"
expect 1 "dualpipe CSV without --dual: ops missing" -- --check "$tmp/dp.csv"
has "dualpipe CSV without --dual: rule 1" "rule 1" "$tmp/out"
expect 0 "dualpipe CSV with --dual" -- --check "$tmp/dp.csv" --dual
dp=(--data "$syn" --quiet --seed 7 --train-limit 512 --batch-size 8 --epochs 1 --stages 4 --splits auto)
for model in mlp cnn; do
  lim=(); [ "$model" = cnn ] && lim=(--train-limit 128)
  for runner in coop threads; do
    if ! build/mnist-train "${dp[@]}" "${lim[@]}" --model $model --runner $runner --schedule dualpipe \
         --batches-to-accumulate 8 --save "$tmp/$model-dp-$runner.ckpt" >"$tmp/log" 2>&1; then
      bad "$model dualpipe/$runner runs" "$tmp/log"
    fi
    if ! build/mnist-train "${dp[@]}" "${lim[@]}" --model $model --runner $runner --replicas 2 \
         --batches-to-accumulate 4 --save "$tmp/$model-r2-$runner.ckpt" >"$tmp/log" 2>&1; then
      bad "$model --replicas 2/$runner runs" "$tmp/log"
    fi
    if cmp -s "$tmp/$model-dp-$runner.ckpt" "$tmp/$model-r2-$runner.ckpt"; then
      ok "$model dualpipe/$runner: checkpoint identical to --replicas 2, M/2 ($(sha256sum <"$tmp/$model-dp-$runner.ckpt" | cut -c1-16))"
    else bad "$model dualpipe/$runner: checkpoint differs from --replicas 2 --batches-to-accumulate 4"; fi
  done
done
if build/mnist-train --data "$syn" --quiet --stages 3 --splits auto --schedule dualpipe --batches-to-accumulate 8 >"$tmp/log" 2>&1; then
  bad "dualpipe with 3 stages refused"
else has "dualpipe odd stages: the rule" "even number of stages" "$tmp/log"; fi

finish
