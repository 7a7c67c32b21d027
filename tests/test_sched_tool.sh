#!/usr/bin/env bash
# tests/test_sched_tool.sh - the ipupipe-sched tool: flags, formats, exit codes
# (0 valid, 1 invalid table, 2 usage/configuration error), CSV round trip through
# files, the PyTorch fixtures, --respace, --compare figures.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
make_tmp sched_tool
need_bin "$tool"
need_bin build/gcc/write_sched_fixtures

# The PyTorch schedule CSVs, written into $fix from the one copy in tests/sched_fixtures.h
fix=$tmp/pytorch
mkdir -p "$fix"
have_fix=0
if build/gcc/write_sched_fixtures "$fix"; then have_fix=1
else bad "writing the PyTorch fixture CSVs (build/gcc/write_sched_fixtures; its 5 checks are not run)"; fi

expect 0 "--help" -- --help
has "--help shows an example" "ipupipe-sched --stages 4 --microbatches 8 --schedule grouped" "$tmp/out"
has "--help documents --respace" "--respace" "$tmp/out"
expect 2 "no arguments is a usage error" --
expect 2 "--stages 0" -- --stages 0 --microbatches 4
has "--stages 0 says why" "--stages needs an integer 1..256" "$tmp/err"
expect 2 "unknown schedule" -- -S 4 -M 8 --schedule nope
expect 2 "bad cost" -- -S 4 -M 8 --cost F=x
expect 2 "bad cost key" -- -S 4 -M 8 --cost Q=1
# --cost takes what the library's SVG writer takes (IPUP_SCHED_COST_MIN..MAX, or 0), and
# says that rule when it refuses
rule="each value a finite number, 0 or from 2.2250738585072014e-308 (the smallest normal double) to 1e+15"
expect 0 "--cost F=1e15, the library's largest cost" -- -S 4 -M 8 --cost F=1e15,B=1e13 --format svg
expect 0 "--cost F=2.2250738585072014e-308, the smallest normal" -- -S 4 -M 8 --cost F=2.2250738585072014e-308 --format svg
for c in F=1e16 F=1e-310 B=nan sync=inf exchange=-1 F=1e999; do
  expect 2 "--cost $c is refused" -- -S 4 -M 8 --cost "$c"
  has "--cost $c: the message states the rule" "$rule" "$tmp/err"
done
# the pictures (SVG, trace) draw every op, ~160 bytes each: more than 262144 ops in one
# picture is refused before anything is written (the cell limit, -S 2 -M 2097152, was a
# 1.3 GB SVG), with the limit and what to use instead; the text formats stay available
lim="this tool draws at most 262144 ops (about 42 MB) in one picture: use fewer micro-batches or stages (-M, -S), or --format csv"
for a in "-S 2 -M 2097152 --format svg" "-S 2 -M 65537 --format trace" "--compare -S 2 -M 16384 --format svg" \
         "--compare -S 3 -M 32768 --map 0,[1,2],3 --format svg"; do
  # shellcheck disable=SC2086 # the words of $a are the options
  expect 2 "$a: refused, too many ops to draw" -- $a
  has "$a: the message names the limit and the remedy" "$lim" "$tmp/err"
  [ -s "$tmp/out" ] && bad "$a: wrote $(wc -c <"$tmp/out") bytes before refusing" "$tmp/out"
done
if "$tool" -S 2 -M 65536 --format svg >"$tmp/big.svg" 2>"$tmp/err" && [ "$(wc -c <"$tmp/big.svg")" -lt 45000000 ]; then
  ok "-S 2 -M 65536 --format svg (262144 ops, at the limit): $(wc -c <"$tmp/big.svg") bytes"
else bad "-S 2 -M 65536 --format svg at the limit" "$tmp/err"; fi
rm -f "$tmp/big.svg"
expect 0 "-S 2 -M 2097152 --format csv: the table of a picture too large to draw" -- -S 2 -M 2097152 --format csv
expect 2 "bad map" -- -S 3 -M 8 --map 0,a,1
expect 2 "map of the wrong length" -- -S 3 -M 8 --map 0,1
expect 2 "unknown flag" -- -S 4 -M 8 --frobnicate
expect 2 "--respace without --check" -- -S 4 -M 8 --respace
expect 2 "bad format" -- -S 4 -M 8 --format png
expect 2 "missing value" -- -S 4 -M
expect 2 "huge number" -- -S 99999999999999999999 -M 4

# the seed's example: grid of Grouped, S=4, M=8 (the worked table of docs/schedules.md §3)
expect 0 "grouped grid" -- --stages 4 --microbatches 8 --schedule grouped
has "grouped row IPU0" "IPU0  F0 F1 F2 F3 .. F4 .. F5 .. F6 B0 F7 B1 .. B2 .. B3 .. B4 B5 B6 B7" "$tmp/out"
has "grouped row IPU3" "IPU3  .. .. .. F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 .. .. .." "$tmp/out"
has "grouped title" "grouped  T=22  in-flight 7,5,3,1" "$tmp/out"
has "grouped first micro-batch" "first micro-batch done at step 11" "$tmp/out"
expect 0 "interleaved grid" -- -S 4 -M 8 --schedule interleaved
has "interleaved first micro-batch" "first micro-batch done at step 8" "$tmp/out"
has "interleaved row IPU1" "IPU1  .. F0 .. F1 .. F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 .. B6 .. B7 .." "$tmp/out"

# warnings and --strict (Graphcore's rules, per schedule)
expect 0 "interleaved M%S warning" -- -S 4 -M 6 --schedule interleaved
has "warning text" "gradient_accumulation_count (M=6)" "$tmp/out"
expect 2 "interleaved M%S strict" -- -S 4 -M 6 --schedule interleaved --strict
has "strict error text" "must be a multiple of the number of pipeline stages" "$tmp/err"
expect 0 "gpipe M<S strict is fine" -- -S 4 -M 2 --schedule gpipe --strict
expect 0 "shared IPU mapping 0,1,0" -- -S 3 -M 6 --schedule interleaved --map 0,1,0 --format steps
has "steps layout header" "Rank 0 Rank 1" "$tmp/out"
has "steps layout counts from 1" "Step 01: 0F0" "$tmp/out"

# the grid's step numbers (1-based) sit over their columns, every k-th when wide
ruler_ok=1
for args in "-S 4 -M 8" "-S 4 -M 64 --schedule 1f1b" "-S 12 -M 24" "-S 3 -M 6 --map 0,1,0 --schedule interleaved" "-S 2 -M 600 --schedule gpipe"; do
  # shellcheck disable=SC2086
  "$tool" $args -q >"$tmp/grid" 2>/dev/null
  if ! python3 - "$tmp/grid" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
ruler, row = lines[0], lines[1]
assert ruler.startswith("step")
starts = [m.start() for m in re.finditer(r"(?<= )\S", row[row.index(" "):])]
starts = [p + row.index(" ") for p in starts]          # where each cell's token begins
nums = [(m.start(), int(m.group())) for m in re.finditer(r"\d+", ruler)]
assert nums and nums[0][1] == 1, "numbering starts at 1"
for pos, n in nums:
    assert starts[n - 1] == pos, "step %d at column %d, its cell at %d" % (n, pos, starts[n - 1])
PY
  then ruler_ok=0; echo "    ruler wrong for: $args"; head -2 "$tmp/grid" | cut -c1-120; fi
done
if [ "$ruler_ok" = 1 ]; then ok "grid step numbers (1-based) over their columns, 5 tables"; else bad "grid step numbers"; fi

# --help: one % sign, sharding, the async column, PopXL
expect 0 "--help again" -- --help
has "--help prints % once" "M % S == 0" "$tmp/out"
hasnt "--help has no doubled %" '%%' "$tmp/out"
has "--help names sharding" "sharding = sequential" "$tmp/out"
has "--help explains async time" "Async time keeps each" "$tmp/out"
expect 0 "--schedule sharding" -- -S 4 -M 2 --schedule sharding
has "sharding is sequential" "sequential  T=16" "$tmp/out"

# phases as the tutorials define them, 1-based; "never fills" true to the table
expect 0 "phases S=4 M=8 grouped" -- -S 4 -M 8
has "phases 1-based" "phases (1-based steps): ramp-up 1..3, main 4..19, ramp-down 20..22" "$tmp/out"
expect 0 "M=1 never fills" -- -S 4 -M 1 --schedule gpipe
has "no main phase at M=1" "main none (the pipeline never fills" "$tmp/out"
has "never-fills warning at M=1" "the pipeline never fills (no step has all 4 devices busy" "$tmp/out"
for M in 3 4 5; do
  expect 0 "S=3 M=$M 1f1b fills" -- -S 3 -M $M --schedule 1f1b
  hasnt "S=3 M=$M: no never-fills warning" "never fills" "$tmp/out"
done
expect 0 "S=3 M=2 1f1b" -- -S 3 -M 2 --schedule 1f1b
has "S=3 M=2 never fills" "never fills" "$tmp/out"

# PopXL's numbering: 3 layers as 5 pipeline stages on IPUs 0,1,2,1,0
expect 0 "PopXL 5 stages" -- -S 5 -M 8 --map 0,1,2,1,0 --stage-numbering popxl --schedule interleaved
has "PopXL stage list" "3 layers = 5 pipeline stages (forward 0..2, backward 2..4) on IPUs 0,1,2,1,0" "$tmp/out"
has "PopXL IPU1 row" "IPU1  ..  1F0 ..  1F1 3B0 1F2 3B1" "$tmp/out"
has "PopXL IPU2 holds stage 2 both ways" "IPU2  ..  ..  2F0 2B0 2F1 2B1" "$tmp/out"
has "PopXL FIFO lengths" "stash FIFO length (backward stage - forward stage): 0->4: 4, 1->3: 2, 2->2: 0" "$tmp/out"
# PopXL's rule (its pipelining tutorial): gradient accumulation >= 2 x its pipeline stages
expect 0 "PopXL 3 stages, M=4: runs" -- -S 3 -M 4 --stage-numbering popxl --schedule gpipe
has "PopXL M < 2 x stages: the warning" "PopXL: gradient accumulation M=4 is less than 2 x the 3 PopXL pipeline stages (6); the PopXL tutorial asks for M >= 6 (an error under strict)" "$tmp/out"
expect 2 "PopXL M < 2 x stages under --strict" -- -S 3 -M 4 --stage-numbering popxl --schedule gpipe --strict
has "PopXL's error names the rule and the fix" "PopXL: gradient accumulation (M=4) must be at least 2 x the number of PopXL pipeline stages (3 stages, forward and backward counted apart: 2 x 3 = 6); use M=6 or more" "$tmp/err"
expect 0 "PopXL M = 2 x stages under --strict" -- -S 3 -M 6 --stage-numbering popxl --schedule gpipe --strict
hasnt "PopXL M = 2 x stages: no PopXL warning" "PopXL: gradient" "$tmp/out"
expect 2 "PopXL 5 stages need M >= 10 under --strict" -- -S 5 -M 8 --map 0,1,2,1,0 --stage-numbering popxl --schedule gpipe --strict
has "the 5-stage error asks for M=10" "2 x 5 = 10); use M=10 or more" "$tmp/err"
expect 0 "the model numbering has no PopXL rule" -- -S 2 -M 4 --schedule gpipe --strict
hasnt "no PopXL warning without --stage-numbering popxl" "PopXL" "$tmp/out"
expect 2 "PopXL even stage count" -- -S 4 -M 8 --stage-numbering popxl
expect 2 "PopXL map not symmetric" -- -S 5 -M 8 --map 0,1,2,3,0 --stage-numbering popxl
has "PopXL map error says why" "the same both ways" "$tmp/err"
expect 2 "interleaved-1f1b with a foreign map" -- -S 4 -M 8 --schedule interleaved-1f1b --map 0,0,1,1
has "says s mod P" "s mod P" "$tmp/err"
expect 0 "interleaved-1f1b V=2" -- -S 8 -M 8 --schedule interleaved-1f1b --virtual 2
has "interleaved-1f1b on 4 devices" "devices P=4" "$tmp/out"

# --compare: the teaching table, 57 vs 72
expect 0 "--compare" -- --compare --stages 4 --microbatches 16 --cost F=1,B=2
if grep -E '^grouped +4 +38 +57 ' "$tmp/out" >/dev/null; then ok "compare: grouped BSP 57"; else bad "compare: grouped BSP 57"; cat "$tmp/out"; fi
if grep -E '^interleaved +4 +38 +72 ' "$tmp/out" >/dev/null; then ok "compare: interleaved BSP 72"; else bad "compare: interleaved BSP 72"; fi
n=$(grep -cE '^(grouped|interleaved|sequential|gpipe|1f1b|interleaved-1f1b|zb-h1) ' "$tmp/out")
if [ "$n" -eq 7 ]; then ok "compare lists 7 schedules"; else bad "compare lists $n schedules"; fi
# --compare honours --act-bytes (stash column) and --format
expect 0 "--compare --act-bytes" -- --compare -S 4 -M 8 --act-bytes 1000
has "compare stash header" "stash bytes" "$tmp/out"
if grep -E '^grouped +4 +22 +33 .* 16000  7,5,3,1$' "$tmp/out" >/dev/null; then ok "compare: grouped stash 16000 (7+5+3+1 x 1000)"; else bad "compare: grouped stash"; cat "$tmp/out"; fi
if grep -E '^gpipe .* 32000  8,8,8,8$' "$tmp/out" >/dev/null; then ok "compare: gpipe stash 32000"; else bad "compare: gpipe stash"; fi
expect 0 "--compare csv" -- --compare -S 4 -M 8 --format csv
has "compare csv header" "schedule,devices,steps,bsp_time" "$tmp/out"
has "compare csv grouped" "grouped,4,22,33,0.272727,33,0.272727,11,yes,0,7 5 3 1" "$tmp/out"
# the schedules: one per name of --help's --schedule list that --compare -S 4 -M 16 runs
nk=$("$tool" --compare -S 4 -M 16 | awk 'NR > 3' | wc -l)
expect 0 "--compare json" -- --compare -S 4 -M 16 --format json --act-bytes 10
if command -v python3 >/dev/null && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g={x["schedule"]:x for x in d}; assert len(d)=='"$nk"' and g["grouped"]["bsp_time"]==57 and g["interleaved"]["bsp_time"]==72 and g["grouped"]["stash_bytes_total"]==10*sum(g["grouped"]["peak_inflight"])' "$tmp/out"; then ok "compare json: $nk schedules, 57 vs 72, stash"; else bad "compare json"; fi
expect 0 "--compare svg" -- --compare -S 4 -M 8 --format svg
n=$(grep -c '<svg ' "$tmp/out")
if [ "$n" -eq $((nk + 1)) ]; then ok "compare svg: $nk charts in one picture"; else bad "compare svg: $n <svg> elements"; fi
expect 2 "--compare trace is refused" -- --compare -S 4 -M 8 --format trace

# JSON, trace and SVG are well formed
expect 0 "json" -- -S 4 -M 8 --schedule zb-h1 --format json --act-bytes 1000
for k in schedule stages microbatches devices steps unit_utilisation bsp_time async_time bubble_fraction peak_inflight first_microbatch_done in_order warnings; do
  has "json key $k" "\"$k\":" "$tmp/out"
done
if command -v python3 >/dev/null; then
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["stages"]==4 and len(d["peak_inflight"])==4 and d["stash_bytes"][0]==1000*d["peak_inflight"][0]' "$tmp/out"; then ok "json parses"; else bad "json parses"; fi
  "$tool" -S 4 -M 8 --schedule 1f1b --format trace --timing bsp >"$tmp/trace.json"
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); ev=[e for e in d["traceEvents"] if e["ph"]=="X" and e["cat"] in "FBIW"]; assert len(ev)==64 and len([e for e in d["traceEvents"] if e.get("cat")=="U"])==4 and [e["name"] for e in d["traceEvents"] if e.get("cat")=="phase"]==["ramp-up","main","ramp-down"]' "$tmp/trace.json"; then ok "trace parses: 64 ops, 4 updates, 3 phases"; else bad "trace parses"; fi
  "$tool" -S 4 -M 8 --schedule 1f1b --format trace >"$tmp/trace.json" # async by default
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); ev=[e for e in d["traceEvents"] if e["ph"]=="X" and e["cat"] in "FBIW"]; assert len(ev)==64 and max(e["ts"]+e["dur"] for e in ev)==33000 and d["otherData"]["timing"].startswith("async")' "$tmp/trace.json"; then ok "async trace: ends at 33 (1f1b's async time)"; else bad "async trace"; fi
# --paper: the two tables, their stated bubbles met
expect 0 "--paper zb" -- --paper zb
if grep -E '^1F1B +\(p-1\)\(F\+I\+W\) +9 +9 ' "$tmp/out" >/dev/null && grep -E '^ZB-H1 +\(p-1\)\(F\+I-W\) +3 +3 ' "$tmp/out" >/dev/null; then ok "--paper zb: 9 and 3 as stated"; else bad "--paper zb"; cat "$tmp/out"; fi
expect 0 "--paper dualpipe -S 8 -M 32" -- --paper dualpipe -S 8 -M 32
cp "$tmp/out" "$tmp/out.paper"
if grep -E '^ZB1P +\(PP-1\)\(F\+B-2W\) +7 +7 ' "$tmp/out" >/dev/null; then ok "--paper dualpipe: ZB1P 7 as stated"; else bad "--paper dualpipe"; cat "$tmp/out"; fi
expect 2 "--paper needs a known table" -- --paper gpipe
# --compare like for like: every row on the same devices, -S 8 --devices 4 works for all
expect 0 "--compare -S 8 --devices 4" -- --compare -S 8 -M 16 --devices 4
n=$(grep -cE '^(grouped|interleaved|sequential|gpipe|1f1b|interleaved-1f1b|zb-h1) +4 ' "$tmp/out")
if [ "$n" -eq 7 ]; then ok "compare -S 8 --devices 4: 7 rows on 4 devices"; else bad "compare -S 8 --devices 4: $n rows on 4 devices"; fi
has "compare says it" "like for like: every row on P=4 devices; interleaved-1f1b, zb-v" "$tmp/out"
has "compare says dualpipe's stage cost" "dualpipe: two model copies (parameters 2x) on 8 stages, each stage 1/4 of a copy at the full cost" "$tmp/out"
if grep -E '^dualpipe +4 +24 +100 .* 98 ' "$tmp/out" >/dev/null; then ok "compare -S 8 --devices 4: dualpipe's row, 98 async"; else bad "compare: dualpipe row"; grep dualpipe "$tmp/out"; fi
if grep -E '^DualPipe +\(PP/2-1\)\(F&B\+B-3W\) +6 +3 ' "$tmp/out.paper" >/dev/null; then ok "--paper dualpipe: DualPipe stated 6, measured 3"; else bad "--paper dualpipe: DualPipe row"; fi
  "$tool" -S 4 -M 8 --schedule grouped --format svg >"$tmp/g.svg"
  if python3 -c 'import sys,xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); assert r.tag.endswith("svg")' "$tmp/g.svg"; then ok "svg parses as XML"; else bad "svg parses as XML"; fi
else
  echo "note: no python3: the 3 JSON/trace/SVG parse checks are skipped"
fi

# CSV round trip through a file, then --check
for s in grouped interleaved sequential gpipe 1f1b interleaved-1f1b zb-h1; do
  "$tool" -S 4 -M 8 --schedule $s --format csv >"$tmp/$s.csv"
  "$tool" --check "$tmp/$s.csv" --format csv >"$tmp/$s.2.csv"
  rc=$?
  if [ $rc -eq 0 ] && cmp -s "$tmp/$s.csv" "$tmp/$s.2.csv"; then ok "csv round trip $s"; else bad "csv round trip $s (exit $rc)"; fi
done
expect 0 "--check a valid table" -- --check "$tmp/grouped.csv"
has "--check says VALID" "VALID" "$tmp/out"
# a file name with a quote, markup, a control character and bytes that are not UTF-8
# reaches the JSON and SVG writers as the table's name: both documents stay well formed
if command -v python3 >/dev/null; then
  odd="$tmp/a\"<b>&'$(printf '\001\377\300')x.csv"
  cp "$tmp/grouped.csv" "$odd"
  "$tool" --check "$odd" --format json >"$tmp/odd.json" 2>"$tmp/err"
  if python3 -c 'import json,sys; json.loads(open(sys.argv[1], encoding="utf-8").read())' "$tmp/odd.json" 2>"$tmp/err"
  then ok "--check an odd file name: valid JSON"; else bad "--check an odd file name: invalid JSON" "$tmp/err"; fi
  "$tool" --check "$odd" --format svg >"$tmp/odd.svg" 2>"$tmp/err"
  if python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/odd.svg" 2>"$tmp/err"
  then ok "--check an odd file name: well-formed SVG"; else bad "--check an odd file name: SVG not well formed" "$tmp/err"; fi
fi
# invalid: 0B0 at step 1 before 1B0 at step 3
printf '0F0,0B0\n,1F0,1B0\n' >"$tmp/bad.csv"
expect 1 "--check an invalid table" -- --check "$tmp/bad.csv"
# steps are counted from 1 for people: 0B0 is in the 2nd column, 1B0 in the 3rd
has "marked step" "Step 2: 0B0    1F0    <-- ERROR HERE" "$tmp/out"
has "names device, step, op" "device 0, step 2: B(0,0) [0B0] needs B(1,0) [1B0] from device 1, which runs at step 3" "$tmp/out"
printf '0F0,0X0\n' >"$tmp/parse.csv"
expect 1 "--check a malformed CSV" -- --check "$tmp/parse.csv"
has "parse error with row/column" "row 1, column 2" "$tmp/err"
expect 2 "--check a missing file" -- --check "$tmp/nope.csv"
expect 0 "--respace per-device orders" -- --check "$tmp/bad.csv" --respace
# rows squashed to the left (per-device orders) need --respace
printf '0F0,0B0\n1F0,1B0\n' >"$tmp/squash.csv"
expect 1 "squashed rows are invalid" -- --check "$tmp/squash.csv"
has "hint to respace" "try --respace" "$tmp/out"
expect 0 "squashed rows respaced" -- --check "$tmp/squash.csv" --respace

# the schedules written by PyTorch's own tests
if [ "$have_fix" = 1 ]; then
  expect 0 "PyTorch zb1p loads and verifies" -- --check "$fix/zb1p_2rank_2stagep_compute.csv"
  expect 1 "PyTorch dualpipev needs --respace" -- --check "$fix/dualpipev_4rank_10mb.csv"
  has "dualpipev error marked" "<-- ERROR HERE" "$tmp/out"
  expect 0 "PyTorch dualpipev with --respace" -- --check "$fix/dualpipev_4rank_10mb.csv" --respace
  has "dualpipev 8 stages" "stages S=8" "$tmp/out"
fi

# --paper zb over a grid of P and M: each schedule's bubble in span equals the paper's
# formula (1F1B (p-1)(F+I+W), ZB-H1 (p-1)(F+I-W), ZB-H2 and ZB-V (p-1)(F+I-2W)), and the
# measured activations the stated ones
paper_bad=0
for P in 2 3 4 6 8; do
  for M in $((2 * P)) $((3 * P)) 32; do
    "$tool" --paper zb -S "$P" -M "$M" >"$tmp/paper" 2>&1 || paper_bad=$((paper_bad + 1))
    awk 'NR > 3 { n++; if ($3 + 0 != $6 + 0) bad++; if ($9 != "(stated" || $8 + 0 != $10 + 0) bad++ }
         END { exit !(n == 4 && bad == 0) }' "$tmp/paper" || { paper_bad=$((paper_bad + 1)); cat "$tmp/paper"; }
  done
done
if [ "$paper_bad" -eq 0 ]; then ok "--paper zb: the paper's bubble and memory on 15 (P, M)"
else bad "--paper zb: $paper_bad of 15 (P, M) differ from the paper's formulas"; fi

finish
