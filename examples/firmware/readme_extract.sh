#!/usr/bin/env bash
# readme_extract.sh DOC OUTDIR PLAN-TOOL - takes the device program out of DOC
# (docs/embedded.md, "A device that learns in the field") and sizes its pools as the
# page says:
#   OUTDIR/device.c   the C block that follows the line `<!-- device.c -->`, as written
#                     (a #line directive first, so compiler messages point at DOC);
#   OUTDIR/plan.cmd   the build/ipupipe-plan command of the sh block that follows the line
#                     `<!-- device.sh -->` (continuation lines joined), as written;
#   OUTDIR/cc.cmd     that block's line that compiles device.c (`cc ...`), as written;
#   OUTDIR/pools.h    written by that plan command, run from the repository root with
#                     PLAN-TOOL in place of build/ipupipe-plan and OUTDIR/pools.h in
#                     place of its `-o pools.h`.
# Used by firmware.mk (make firmware-readme) and tests/test_readme_device.sh, so the
# image, the host build and the test compile exactly the page's text. Run from the
# repository root. Exit 0, or 1 with a message naming what is missing.
set -uo pipefail
readme=$1; out=$2; tool=$3
die() { echo "readme_extract.sh: $*" >&2; exit 1; }
[ -f "$readme" ] || die "$readme not found"
[ -x "$tool" ] || die "$tool is not built (make build/ipupipe-plan)"
mkdir -p "$out" || die "cannot create $out"

# block MARKER LANG: the lines of the fenced block right after the marker line, with
# the DOC line number of its first line on the first output line
block() {
  awk -v marker="<!-- $1 -->" -v lang="$2" '
    state == 0 && $0 == marker { state = 1; next }
    state == 1 { if ($0 == "```" lang) { state = 2; print NR + 1; next } exit 1 }
    state == 2 && /^```[ \t]*$/ { state = 3; exit }
    state == 2 { print }
    END { if (state != 3) exit 1 }' "$readme"
}

c=$(block device.c c) || die "$readme has no \`\`\`c block right after a line <!-- device.c -->"
sh=$(block device.sh sh) || die "$readme has no \`\`\`sh block right after a line <!-- device.sh -->"
if ! { printf '#line %s "%s"\n' "$(head -n 1 <<<"$c")" "$readme"; tail -n +2 <<<"$c"; } > "$out/device.c.tmp" ||
   ! mv "$out/device.c.tmp" "$out/device.c"; then die "cannot write $out/device.c"; fi

# the sh block's commands: continuation lines joined, comments cut
cmds=$(tail -n +2 <<<"$sh" | sed -e ':a' -e '/\\$/N; s/\\\n[ \t]*/ /; ta' | sed 's/[ \t]*#.*$//')
plan=$(grep -E '^build/ipupipe-plan ' <<<"$cmds") || die "the device.sh block has no build/ipupipe-plan command"
[ "$(grep -c '' <<<"$plan")" = 1 ] || die "the device.sh block has more than one build/ipupipe-plan command"
ccl=$(grep -E '^cc ' <<<"$cmds" | head -n 1) || die "the device.sh block has no line compiling device.c (cc ...)"
case " $plan " in
  *" -o pools.h "*) ;;
  *) die "the plan command does not write pools.h (-o pools.h): $plan" ;;
esac
printf '%s\n' "$plan" > "$out/plan.cmd"
printf '%s\n' "$ccl" > "$out/cc.cmd"

# the plan, as the page runs it, into OUTDIR/pools.h
read -r -a words <<<"$plan"
args=()
for ((i = 1; i < ${#words[@]}; i++)); do
  if [ "${words[i]}" = -o ] && [ "${words[i + 1]:-}" = pools.h ]; then args+=(-o "$out/pools.h"); i=$((i + 1))
  else args+=("${words[i]}"); fi
done
"$tool" "${args[@]}" > "$out/plan.log" 2>&1 || { cat "$out/plan.log" >&2; die "the plan command of $readme failed: $plan"; }
[ -s "$out/pools.h" ] || die "the plan command wrote no $out/pools.h"
exit 0
