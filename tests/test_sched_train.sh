#!/usr/bin/env bash
# tests/test_sched_train.sh - the schedules zb-h2, zb-v, v-min, v-half, looped-bfs and
# interleaved-zb train in the emulator, on both runners, to the bytes of --schedule
# grouped with the same 4 stages on the same map (docs/schedules.md §3):
#   zb-v, v-min, v-half       the V, --map 0,1,1,0 (2 IPUs)
#   looped-bfs, interleaved-zb the loop, --map 0,1,0,1 (2 IPUs)
#   zb-h2                     one stage per IPU (4 IPUs)
# and a mapping a schedule cannot run is refused with its rule.
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
need_bin "$BIN"
make_tmp sched_train
syn=$tmp/syn
gen_syn "$syn" 640 100
common=(--data "$syn" --quiet --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 8
        --repeat-count 3 --model mlp --epochs 1)
four=(--splits dense128 dense64 dense32)

# train MAP SCHEDULE RUNNER: its checkpoint into $tmp/MAP-SCHEDULE-RUNNER.ckpt
train() {
  local map=$1 sched=$2 runner=$3 m=()
  [ "$map" != default ] && m=(--map "$map")
  $BIN "${common[@]}" "${four[@]}" "${m[@]}" --schedule "$sched" --runner "$runner" \
    --save "$tmp/$map-$sched-$runner.ckpt" > "$tmp/log" 2>&1
}

for group in "0,1,1,0 zb-v v-min v-half" "0,1,0,1 looped-bfs interleaved-zb" "default zb-h2"; do
  set -- $group
  map=$1; shift
  if ! train "$map" grouped coop; then bad "grouped on map $map runs" "$tmp/log"; continue; fi
  ref=$tmp/$map-grouped-coop.ckpt
  for sched in grouped "$@"; do
    for runner in coop threads; do
      [ "$sched/$runner" = grouped/coop ] && continue
      if ! train "$map" "$sched" "$runner"; then bad "$sched/$runner on map $map runs" "$tmp/log"; continue; fi
      f=$tmp/$map-$sched-$runner.ckpt
      if cmp -s "$ref" "$f"; then
        ok "$sched/$runner on map $map: sha256 $(sha256sum < "$f" | cut -c1-16) = grouped's"
      else bad "$sched/$runner on map $map: checkpoint differs from grouped's"; fi
    done
  done
done

# a mapping off the V, and an odd stage count, are refused with the rule
if $BIN "${common[@]}" "${four[@]}" --map 0,1,0,1 --schedule zb-v > "$tmp/log" 2>&1; then
  bad "zb-v on map 0,1,0,1 is refused"
else has "zb-v on map 0,1,0,1 names the V" "zb-v places stage s on the V" "$tmp/log"; fi
if $BIN "${common[@]}" --splits dense128 dense64 --schedule v-half > "$tmp/log" 2>&1; then
  bad "v-half with 3 stages is refused"
else has "v-half with 3 stages names the rule" "v-half needs S = 2 x devices" "$tmp/log"; fi
finish
