#!/usr/bin/env bash
# tests/test_concurrent.sh - concurrent pipeline stages in ipupipe-sched (--map with a
# bracket, docs/schedules.md §9): the drawing, --compare against the serialised mapping,
# the CSV with branch suffixes through --check (valid, and mutated), hostile mappings.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
make_tmp concurrent
need_bin "$tool"

# the TF IPU user guide's example: stage 1 on IPUs 1 and 2, stage 2 on IPU 2
expect 0 "the guide's concurrent pipeline" -- --map "0,[1,2],2,3" -S 4 -M 8
has "the mapping is named" "stage -> devices: 0,[1,2],2,3" "$tmp/out"
has "per-device in-flight" "peak in-flight per device:" "$tmp/out"
# every op of stage 1 has its two branches in one column, on IPU1 and IPU2
awk '/^IPU1 /{for(i=2;i<=NF;i++) a[i]=$i} /^IPU2 /{for(i=2;i<=NF;i++) b[i]=$i}
     END{n=0; bad=0; for(i in a) if (a[i] ~ /^1[FB][0-9]+\.0$/) { n++; t=a[i]; sub(/\.0$/, ".1", t); if (b[i] != t) bad++ }
         exit !(n == 16 && bad == 0)}' "$tmp/out" && ok "IPU1 and IPU2 run the branches of every op of stage 1 in one step" \
  || bad "branches not in one step" "$tmp/out"

expect 0 "--compare against the serialised mapping" -- --map "0,[1,2],2,3" -S 4 -M 8 --compare --act-bytes 1000
has "compare has the concurrent row" "concurrent    4   4" "$tmp/out"
has "compare has the serialised row" "serialised    5   4" "$tmp/out"
# the concurrent row has fewer steps, an earlier first micro-batch and fewer stored activations
awk '$1=="concurrent"{s1=$4; l1=$7; a1=$8; b1=$9} $1=="serialised"{s2=$4; l2=$7; a2=$8; b2=$9}
     END{exit !(s1 < s2 && l1 < l2 && a1 < a2 && b1 < b2)}' "$tmp/out" \
  && ok "concurrent: fewer steps, lower latency, fewer stored activations and stash bytes" || bad "compare figures" "$tmp/out"
expect 0 "--compare csv" -- --map "0,[1,2],2,3" -S 4 -M 8 --compare --format csv
has "compare csv header" "mapping,stages,devices,steps" "$tmp/out"
[ "$(wc -l <"$tmp/out")" -eq 3 ] && ok "compare csv: header and two rows" || bad "compare csv rows" "$tmp/out"
expect 0 "--compare json" -- --map "0,[1,2],2,3" -S 4 -M 8 --compare --format json
has "compare json names both" '"schedule":"serialised"' "$tmp/out"
expect 0 "--compare svg" -- --map "0,[1,2],2,3" -S 4 -M 8 --compare --format svg
[ "$(grep -c '<svg' "$tmp/out")" -eq 3 ] && ok "compare svg: two charts in one picture" || bad "compare svg" "$tmp/out"
expect 0 "json of the concurrent pipeline" -- --map "0,[1,2],2,3" -S 4 -M 8 --format json
has "json lists each stage's devices" '"stage_devices":[[0],[1,2],[2],[3]]' "$tmp/out"
has "json has the stored activations" '"activations_stored":22' "$tmp/out"
expect 0 "json of a plain table" -- -S 4 -M 8 --format json
hasnt "a plain table's json has no branch fields" stage_devices "$tmp/out"
expect 0 "svg of the concurrent pipeline" -- --map "0,[1,2],2,3" -S 4 -M 8 --format svg
has "svg tooltips name the branches" "1F0.1 step 2" "$tmp/out"
for k in grouped interleaved sequential gpipe 1f1b; do
  expect 0 "$k with a concurrent stage" -- --map "[0,1],2,[3,4,5]" -S 3 -M 6 --schedule $k
done
expect 2 "zb-h1 refuses concurrent stages" -- --map "0,[1,2],2,3" -S 4 -M 8 --schedule zb-h1
has "zb-h1 says why" "zb-h1 does not take concurrent stages" "$tmp/err"
expect 2 "popxl numbering refuses brackets" -- --map "0,[1,2],0" -S 3 -M 8 --stage-numbering popxl
expect 2 "map with 4 stages for -S 5" -- --map "0,[1,2],2,3" -S 5 -M 8
for m in "0,[1,[2]],3" "0,[1,1],2,3" "0,[],2,3" "0,[1,2,2,3" "0,1],2,3" "0,[1,2,3,4,5,6,7,8,9],2,3" "0,[1 2],2,3"; do
  expect 2 "hostile map '$m'" -- --map "$m" -S 4 -M 8
  has "hostile map '$m' has a message" "mapping:" "$tmp/err"
done

# CSV: the branch suffix survives a round trip through --check
"$tool" --map "0,[1,2],2,3" -S 4 -M 8 --format csv >"$tmp/c.csv"
has "csv carries branch suffixes" "1F0.0" "$tmp/c.csv"
expect 0 "--check of the concurrent CSV" -- --check "$tmp/c.csv" --format csv
cmp -s "$tmp/out" "$tmp/c.csv" && ok "csv round trip is byte-identical" || bad "csv round trip differs" "$tmp/out"
# mutation: move one branch of 1F0 to an idle column after the next stage's F(2,0): rule 3
awk -F, 'NR==3{OFS=","; for(i=1;i<=NF;i++) if ($i=="1F0.1") { $i=""; j=i } ; $(j+5)="1F0.1" } {print}' \
  "$tmp/c.csv" >"$tmp/m.csv"
expect 1 "a branch moved out of its step is invalid" -- --check "$tmp/m.csv"
has "the verdict is rule 3, all branches before the next stage" "rule 3 (forward after the previous stage's forward)" "$tmp/out"
# mutation: drop a branch
sed '2s/1B7\.0//' "$tmp/c.csv" >"$tmp/d.csv"
expect 1 "a missing branch is invalid" -- --check "$tmp/d.csv"
has "missing branch named" "branch 0 of B(1,7) [1B7] is missing" "$tmp/out"
# respace cannot keep branches together
expect 1 "--respace refuses concurrent tables" -- --check "$tmp/c.csv" --respace
has "respace says why" "concurrent stages" "$tmp/err"
finish
