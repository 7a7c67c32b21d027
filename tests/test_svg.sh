#!/usr/bin/env bash
# tests/test_svg.sh - the SVG charts are slide-ready: no text is clipped by the canvas.
# For S in {2,4}, M in {1,8,64}, every schedule (and a few costs, widths and the
# --compare picture), the chart is rendered to PNG with rsvg-convert (Debian's
# librsvg2-bin) twice, with every rect and line hidden so only text is inked:
#   1. as written, on the canvas the renderer's own layout computed;
#   2. on a canvas 200 px larger on every side, the drawing moved in by 200 px.
# Text that sticks out of the canvas is cut off in render 1 and not in render 2, so
# the inked-pixel counts (tests/png_ink.py) differ; when every glyph is inside the
# canvas they are equal. Also: the canvas is at most --width (1600) wide, and the
# renders' PNGs are kept in build/svg-png/ for a look; costs far apart stay bounded.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
need_bin "$tool"
command -v rsvg-convert >/dev/null ||
  give_up "rsvg-convert is missing (Debian package librsvg2-bin; .ci/deps.sh test installs it)"
command -v python3 >/dev/null || give_up "python3 is missing (.ci/deps.sh test installs it)"
make_tmp svg
out=build/svg-png
mkdir -p "$out"

# text_only IN OUT PAD: hide rects and lines; PAD > 0 grows the canvas by PAD per side
text_only() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
src, dst, pad = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = open(src).read()
m = re.match(r'<svg xmlns="http://www.w3.org/2000/svg" width="(\d+)" height="(\d+)"', s)
w, h = int(m.group(1)), int(m.group(2))
head_end = s.index(">") + 1
body = s[head_end:s.rindex("</svg>")]
head = s[:head_end].replace('width="%d" height="%d"' % (w, h), 'width="%d" height="%d"' % (w + 2 * pad, h + 2 * pad), 1)
style = "<style>rect, line { display: none } text { fill: #000 }</style>"
open(dst, "w").write(head + style + '<g transform="translate(%d,%d)">' % (pad, pad) + body + "</g></svg>\n")
PY
}

check() { # NAME SVG
  local name=$1 svg=$2 w a b
  w=$(sed -n 's/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\([0-9]*\)".*/\1/p' "$svg" | head -1)
  if [ -n "$w" ] && [ "$w" -le 1600 ]; then ok "$name: canvas ${w} px wide (<= 1600)"; else bad "$name: canvas width '$w'"; fi
  text_only "$svg" "$tmp/t0.svg" 0
  text_only "$svg" "$tmp/t1.svg" 200
  if ! rsvg-convert "$tmp/t0.svg" -o "$tmp/t0.png" 2>"$tmp/err" || ! rsvg-convert "$tmp/t1.svg" -o "$tmp/t1.png" 2>>"$tmp/err"; then
    bad "$name: rsvg-convert failed" "$tmp/err"; return
  fi
  a=$(python3 tests/png_ink.py "$tmp/t0.png"); b=$(python3 tests/png_ink.py "$tmp/t1.png")
  if [ "$a" -gt 0 ] && [ "$a" -eq "$b" ]; then ok "$name: no clipped text ($a text pixels)"
  else bad "$name: text clipped ($a text pixels on the canvas, $b on a larger one)"; fi
  rsvg-convert "$svg" -o "$out/$name.png" 2>/dev/null
}

for S in 2 4; do
  for M in 1 8 64; do
    for k in grouped interleaved sequential gpipe 1f1b interleaved-1f1b zb-h1; do
      "$tool" -S $S -M $M --schedule $k --format svg >"$tmp/c.svg" 2>/dev/null
      check "$k-S$S-M$M" "$tmp/c.svg"
    done
  done
done
# unit costs (no time axis), a time axis with exchange, a narrow width, PopXL-size maps
"$tool" -S 4 -M 8 --cost B=1 --format svg >"$tmp/c.svg" 2>/dev/null; check "unit-costs-S4-M8" "$tmp/c.svg"
"$tool" -S 4 -M 1 --cost B=1 --format svg >"$tmp/c.svg" 2>/dev/null; check "unit-costs-S4-M1" "$tmp/c.svg"
"$tool" -S 4 -M 16 --cost F=1,B=2,exchange=0.5,sync=0.25 --format svg >"$tmp/c.svg" 2>/dev/null; check "exchange-S4-M16" "$tmp/c.svg"
"$tool" -S 8 -M 32 --schedule 1f1b --width 600 --format svg >"$tmp/c.svg" 2>/dev/null; check "width600-S8-M32" "$tmp/c.svg"
"$tool" -S 3 -M 6 --schedule interleaved --map 0,1,0 --format svg >"$tmp/c.svg" 2>/dev/null; check "shared-map" "$tmp/c.svg"
# --timing, --memory, --compare as small multiples for a 16:9 slide: 1600 x 900, no text
# under 14 px (every font-size, the root's included), nothing clipped
min_font() { grep -o 'font-size="[0-9.]*"' "$1" | tr -dc '0-9.\n' | sort -n | head -1; }
slide() { # NAME SVG
  local w h f
  w=$(sed -n 's/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\([0-9]*\)" height="\([0-9]*\)".*/\1x\2/p' "$1.svg" | head -1)
  f=$(min_font "$1.svg")
  if [ "$w" = 1600x900 ]; then ok "$2: 1600x900"; else bad "$2: canvas $w, not 1600x900"; fi
  if [ -n "$f" ] && [ "${f%.*}" -ge 14 ]; then ok "$2: smallest text $f px"; else bad "$2: text of $f px (< 14)"; fi
}
for P in 2 4 8; do
  "$tool" --compare -S $P -M 8 --format svg >"$tmp/cmp$P.svg" 2>/dev/null; slide "$tmp/cmp$P" "compare-S$P-M8"
  check "compare-S$P-M8" "$tmp/cmp$P.svg"
done
"$tool" --compare -S 8 -M 16 --devices 4 --timing bsp --format svg >"$tmp/cmpb.svg" 2>/dev/null; slide "$tmp/cmpb" "compare-S8-P4-bsp"
check "compare-S8-P4-bsp" "$tmp/cmpb.svg"
n=$(grep -c '<svg ' "$tmp/cmpb.svg")
# one chart per schedule --compare runs at these sizes (the grid's rows without a refusal)
nk=$("$tool" --compare -S 8 -M 16 --devices 4 | awk 'NR > 3 && !/ -- /' | wc -l)
if [ "$nk" -gt 7 ] && [ "$n" -eq $((nk + 1)) ]; then ok "compare svg: $nk small multiples"
else bad "compare svg: $n <svg> elements for $nk schedules"; fi
for k in 1f1b interleaved-1f1b zb-h1; do
  for tm in async bsp; do
    "$tool" -S 4 -M 8 --schedule $k --devices 2 --format svg --timing $tm --memory >"$tmp/m.svg" 2>/dev/null ||
      "$tool" -S 4 -M 8 --schedule $k --format svg --timing $tm --memory >"$tmp/m.svg" 2>/dev/null
    check "memory-$k-$tm" "$tmp/m.svg"
    f=$(min_font "$tmp/m.svg")
    if [ "${f%.*}" -ge 14 ]; then ok "memory-$k-$tm: text >= 14 px"; else bad "memory-$k-$tm: text of $f px"; fi
  done
done
"$tool" -S 4 -M 8 --schedule interleaved-1f1b --devices 2 --format svg --memory >"$tmp/m.svg" 2>/dev/null
has "memory panel marks the peak" '>peak 5</text>' "$tmp/m.svg"
has "chunks labelled stage:mb" '>2:0</text>' "$tmp/m.svg"
"$tool" -S 4 -M 8 --schedule 1f1b --format svg >"$tmp/a.svg" 2>/dev/null
has "default chart is async, its title says so" '   async (dataflow) time</text>' "$tmp/a.svg"
"$tool" -S 4 -M 8 --schedule 1f1b --format svg --timing bsp >"$tmp/b.svg" 2>/dev/null
has "--timing bsp says so" '   BSP (lock-step) time</text>' "$tmp/b.svg"
# the picture a student counts "time-step 11" on: unit costs, numbered steps
"$tool" -S 4 -M 8 --schedule grouped --cost B=1 --timing bsp --format svg >"$tmp/g.svg" 2>/dev/null
has "grouped chart numbers step 11" '>11</text>' "$tmp/g.svg"
has "chart title names schedule, sizes, costs, timing" '>grouped  S=4 M=8 P=4 T=22  cost F=1 B=1   BSP (lock-step) time<' "$tmp/g.svg"
hasnt "legend lists only the op kinds present" 'input grad I' "$tmp/g.svg"
"$tool" -S 4 -M 8 --schedule zb-h1 --format svg >"$tmp/z.svg" 2>/dev/null
if grep -q 'weight grad W' "$tmp/z.svg" && ! grep -q 'backward B<' "$tmp/z.svg"; then ok "zb-h1 legend: I and W, no B"; else bad "zb-h1 legend"; fi
# costs far apart (a fuzzer's input: F=16666666666, B=2): the longest step fits a band, so
# the chart is bounded and quick (it was a 1.3e11 px canvas with an axis of 3e9 ticks);
# axis labels that would touch are left out; never folding stops at 1048576 px
if timeout 10 "$tool" -S 3 -M 6 --cost F=16666666666 --format svg >"$tmp/far.svg" 2>/dev/null; then
  ok "costs far apart: written within 10 s ($(wc -c <"$tmp/far.svg") bytes)"; check "costs-far-apart" "$tmp/far.svg"
  if python3 - "$tmp/far.svg" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
for band in s.split('stroke="#555"/>\n')[1:]:
    xs = [(float(x), len(t)) for x, t in re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" fill="#555" text-anchor="middle">([^<]*)</text>', band.split('<text x="4"')[0])]
    for (x0, n0), (x1, n1) in zip(xs, xs[1:]):
        if x1 - n1 * 4.2 < x0 + n0 * 4.2 + 4: sys.exit(1)
PY
  then ok "costs far apart: no two axis labels touch"; else bad "costs far apart: axis labels overlap"; fi
else
  bad "costs far apart: ipupipe-sched did not finish within 10 s"
fi
timeout 10 "$tool" -S 3 -M 6 --cost F=1000000000000 --width -1 --format svg >"$tmp/wide.svg" 2>/dev/null
w=$(sed -n 's/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\([0-9]*\)".*/\1/p' "$tmp/wide.svg" | head -1)
if [ -n "$w" ] && [ "$w" -le 1048576 ]; then ok "--width -1 with F=1e12: canvas $w px (<= 1048576)"; else bad "--width -1 with F=1e12: canvas '$w'"; fi
# sequential at M=64 folds into bands instead of an 18,000 px strip
"$tool" -S 4 -M 64 --schedule sequential --timing bsp --format svg >"$tmp/s.svg" 2>/dev/null
n=$(grep -c '>IPU0<' "$tmp/s.svg")
if [ "$n" -ge 2 ]; then ok "sequential M=64 folds into $n bands"; else bad "sequential M=64 is one band"; fi
finish
