#!/usr/bin/env bash
# tests/test_readme.sh - the code and command blocks of README.md and docs/embedded.md
# compile and run, so the pages cannot drift from the headers.
#
# C blocks: a fence opened with ```c is C that must also be valid C++ (the headers promise
# both): it is compiled with gcc and clang (-std=c11 and the Makefile's WARN) and with g++
# and clang++ (-std=c++17 and the Makefile's CXXWARN), all at -O1 -march=native so the
# optimiser's warnings fire too. A fence opened with ```cpp or ```c++ is C++ only (g++,
# clang++). The convention, per block:
#   - By default a block is a COMPLETE translation unit, compiled exactly as written (no
#     include or definition added). If it defines `int main(`, it is linked and run in
#     the test's directory (it must exit 0 within 30 s and need no data files);
#     otherwise it is only compiled (-c), so it may call functions it merely declares.
#   - A block whose opening fence is immediately preceded by the line `<!-- fragment -->`
#     is a FRAGMENT: statements (and declarations) of a function body. Its preprocessor
#     lines (`#...`, with their continuation lines) are moved, in order, to file scope,
#     after <stdio.h> <stdlib.h> <string.h> <stdint.h>, and after
#     `#define IPUPIPE_IMPLEMENTATION` + `#include "ipupipe.h"` unless the fragment
#     includes an ipupipe header itself; the other lines become the body of
#     `int main(void) { ... return 0; }`, which is linked and run.
#   - `<!-- fragment no-run -->` or `<!-- no-run -->` (same place): compiled and linked,
#     not run.
#   - `<!-- device.c -->` (same place): the device program of docs/embedded.md, which
#     includes the pools.h its build/ipupipe-plan command writes;
#     tests/test_readme_device.sh builds and runs it. Skipped here.
# Command blocks (```sh):
#   - `<!-- save: NAME -->` before any block: the block is also written to the file NAME
#     of a fresh directory that holds copies of the headers, as a reader saves it "next to
#     the headers";
#   - `<!-- run -->` before a ```sh block: its lines run there with bash (60 s limit), as
#     written, and what they print must equal the ```text block after the next line
#     `<!-- output -->` (trailing blanks aside);
#   - every other ```sh block: each `make` command names targets the Makefile has (the
#     commands themselves take minutes to hours: `make test` and `make check` run them).
# Compiler messages point at the page's lines (#line directives); a failing block shows
# its compiler errors. The generated sources are in build/readme/.
# Usage: tests/test_readme.sh [FILE...]  (default README.md docs/embedded.md); the
# compilers of a block run README_JOBS at a time (default 2). Ends with
# `N passed, N failed`.
. "$(dirname "$0")/lib.sh"
pages=("$@")
[ "${#pages[@]}" -gt 0 ] || pages=(README.md docs/embedded.md)
dir=build/readme
rm -rf "$dir"
mkdir -p "$dir"
root=$PWD

# the house flags, from the Makefile (one definition)
mkvar() { make -s --no-print-directory --eval 'readme-print-%: ; @echo $($*)' "readme-print-$1" 2>/dev/null; }
WARN=$(mkvar WARN)
CXXWARN=$(mkvar CXXWARN)
CSTD=$(mkvar CSTD)
LIBS=$(mkvar LIBS)
if [ -z "$WARN" ] || [ -z "$CXXWARN" ] || [ -z "$CSTD" ]; then
  bad "could not read WARN, CXXWARN and CSTD from the Makefile"
  finish
  exit 1
fi
OPT="-O1 -march=native"

# the Makefile's targets (its database, read without running a recipe), for the make
# commands of the command blocks
make -npq .DEFAULT 2>/dev/null | sed -n 's/^\([^#%:= \t][^:= \t]*\):.*/\1/p' | sort -u > "$dir/targets"

# check_cc CC: compile (and link, run) the block of the loop in check_page with CC; prints
# its `ok` or `FAIL` line (run in a subshell: check_page counts the printed lines)
check_cc() {
  local cc=$1 flags what out log rc
  case $cc in
    gcc | clang) flags="$CSTD $WARN $OPT -x c" ;;
    *) flags="-std=c++17 $CXXWARN $OPT -x c++" ;;
  esac
  what="$readme:$line [$lang $kind] $cc"
  out=$pdir/b$line-$cc
  log=$out.log
  # shellcheck disable=SC2086 # the flag lists are word lists
  if [ "$link" = 1 ]; then
    $cc $flags -I. "$src" -x none -o "$out" $LIBS > "$log" 2>&1
  else
    $cc $flags -I. -c "$src" -o "$out.o" > "$log" 2>&1
  fi
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL $what: does not $([ "$link" = 1 ] && echo "compile and link" || echo compile) (source $src)"
    { grep -E "error|warning|undefined reference|in expansion of macro" "$log" || cat "$log"; } | head -n 25 | sed 's/^/    /'
    return
  fi
  if [ "$link" = 1 ] && [ "$run" = run ]; then
    (cd "$pdir" && timeout 30 "$root/$out") > "$out.run" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then bad "$what: compiled, but the program exits $rc (source $src)" "$out.run"; return; fi
    ok "$what: compiled, linked, ran"
  elif [ "$link" = 1 ]; then
    ok "$what: compiled and linked (no-run)"
  else
    ok "$what: compiled (a translation unit without main)"
  fi
}

check_page() { # PAGE: every block of one page
readme=$1
pdir=$dir/$(basename "$readme" .md)
mkdir -p "$pdir"
[ -f "$readme" ] || { bad "$readme not found"; return; }

# 1. split the README: $dir/bLINE.body (the block's lines) and one manifest line per
#    compiled block: LINE LANG KIND RUN (KIND complete|fragment, RUN run|no-run).
#    Every fence is tracked so a ``` line inside a sh block does not open a C block.
awk -v dir="$pdir" '
  function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
  !infence && /^[ \t]*```/ {
    lang = trim(substr(trim($0), 4)); infence = 1; start = NR; capture = 0
    if ((lang == "c" || lang == "cpp" || lang == "c++") && prev !~ /^[ \t]*<!--[ \t]*device\.c[ \t]*-->[ \t]*$/) {
      capture = 1
      kind = (prev ~ /^[ \t]*<!--[ \t]*fragment([ \t]+no-run)?[ \t]*-->[ \t]*$/) ? "fragment" : "complete"
      run = (prev ~ /^[ \t]*<!--.*no-run.*-->[ \t]*$/) ? "no-run" : "run"
      body = dir "/b" NR ".body"
      printf "" > body
    }
    next
  }
  infence && /^[ \t]*```[ \t]*$/ {
    if (capture) { close(body); print start, lang, kind, run }
    infence = 0; capture = 0; prev = $0; next
  }
  infence { if (capture) print > body; next }
  { prev = $0 }
  END { if (infence) print start, "unterminated", "-", "-" }
' "$readme" > "$pdir/manifest"

# 2. the source of one block: complete as written, fragment wrapped (see the header)
gen_fragment() { # LINE BODY > source
  awk -v first="$(( $1 + 1 ))" -v readme="$readme" '
    { line[NR] = $0 }
    END {
      n = NR; hdr = 0
      for (i = 1; i <= n; i++) {
        if (cont || line[i] ~ /^[ \t]*#/) {
          pp[i] = 1
          if (line[i] ~ /#[ \t]*include[ \t]*"ipupipe(_kernels|_sched)?\.h"/) hdr = 1
          cont = (line[i] ~ /\\$/)
        }
      }
      print "#include <stdio.h>"
      print "#include <stdlib.h>"
      print "#include <string.h>"
      print "#include <stdint.h>"
      if (!hdr) { print "#define IPUPIPE_IMPLEMENTATION"; print "#include \"ipupipe.h\"" }
      for (i = 1; i <= n; i++) if (pp[i]) { printf "#line %d \"%s\"\n%s\n", first + i - 1, readme, line[i] }
      print "int main(void) {"
      for (i = 1; i <= n; i++) if (!pp[i]) { printf "#line %d \"%s\"\n%s\n", first + i - 1, readme, line[i] }
      print "return 0;"
      print "}"
    }' "$2"
}

nblocks=0
while read -r line lang kind run; do
  if [ "$lang" = unterminated ]; then bad "$readme:$line: code fence never closed"; continue; fi
  nblocks=$((nblocks + 1))
  body=$pdir/b$line.body
  src=$pdir/b$line.src
  if [ "$kind" = fragment ]; then gen_fragment "$line" "$body" > "$src"
  else { printf '#line %d "%s"\n' $((line + 1)) "$readme"; cat "$body"; } > "$src"; fi
  link=0
  if [ "$kind" = fragment ] || grep -qE '^[[:space:]]*int[[:space:]]+main[[:space:]]*\(' "$body"; then link=1; fi
  case $lang in
    c) compilers="gcc clang g++ clang++" ;;
    *) compilers="g++ clang++" ;;
  esac
  # the compilers of a block run at the same time (JOBS at most, default 2); their
  # results are printed in the order of $compilers and counted from the printed lines
  for cc in $compilers; do
    check_cc "$cc" > "$pdir/b$line-$cc.res" &
    while [ "$(jobs -rp | wc -l)" -ge "${README_JOBS:-2}" ]; do wait -n; done
  done
  wait
  for cc in $compilers; do
    cat "$pdir/b$line-$cc.res"
    pass=$((pass + $(grep -c '^ok   ' "$pdir/b$line-$cc.res")))
    fail=$((fail + $(grep -c '^FAIL ' "$pdir/b$line-$cc.res")))
  done
done < "$pdir/manifest"
if [ "$nblocks" -eq 0 ]; then bad "$readme: no C or C++ code block found"; fi
commands "$readme" "$pdir"
}

# commands PAGE DIR: the saved files, the run blocks and their output, the make targets
commands() {
  local page=$1 pdir=$2 work=$2/work
  mkdir -p "$work"
  cp ipupipe*.h "$work/"
  python3 - "$page" "$work" <<'PY' || bad "$page: could not read its command blocks"
import re, sys
page, work = sys.argv[1], sys.argv[2]
lines = open(page, encoding="utf-8").read().split("\n")
blocks, i = [], 0           # (marker line before the fence, lang, first line number, body)
while i < len(lines):
    m = re.match(r"^\s*```(\S*)\s*$", lines[i])
    if not m:
        i += 1; continue
    start, lang, body = i + 1, m.group(1), []
    i += 1
    while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
        body.append(lines[i]); i += 1
    prev = lines[start - 2].strip() if start >= 2 else ""
    blocks.append((prev, lang, start, body))
    i += 1
n = {"run": 0, "make": 0}
for k, (prev, lang, start, body) in enumerate(blocks):
    m = re.fullmatch(r"<!--\s*save:\s*(\S+)\s*-->", prev)
    if m:
        open(f"{work}/{m.group(1)}", "w").write("\n".join(body) + "\n")
    if lang != "sh":
        continue
    if prev == "<!-- run -->":
        out = next((b for b in blocks[k + 1:] if b[0] == "<!-- output -->"), None)
        n["run"] += 1
        open(f"{work}/run{n['run']}.sh", "w").write("\n".join(body) + "\n")
        open(f"{work}/run{n['run']}.want", "w").write("\n".join(l.rstrip() for l in out[3]) + "\n" if out else "")
        open(f"{work}/run{n['run']}.line", "w").write(f"{start}\n")
        continue
    cmds = re.sub(r"\\\n\s*", " ", "\n".join(body)).split("\n")
    for c in cmds:
        c = re.sub(r"\s+#.*$", "", c).strip()
        if c.startswith("make "):
            n["make"] += 1
            open(f"{work}/make{n['make']}", "w").write(f"{start}\n{c}\n")
PY
  local f line want
  for f in "$work"/run*.sh; do
    [ -f "$f" ] || continue
    line=$(cat "${f%.sh}.line")
    want=${f%.sh}.want
    if [ ! -s "$want" ]; then bad "$page:$line: a <!-- run --> block without a \`\`\`text block after <!-- output -->"; continue; fi
    (cd "$work" && timeout 60 bash "$(basename "$f")") 2>&1 | sed 's/[ \t]*$//' > "${f%.sh}.got"
    if diff "$want" "${f%.sh}.got" > "${f%.sh}.diff"; then ok "$page:$line: the commands run as written and print the quoted output"
    else bad "$page:$line: the commands' output differs from the quoted one" "${f%.sh}.diff"; fi
  done
  for f in "$work"/make*; do
    [ -f "$f" ] || continue
    line=$(head -n 1 "$f")
    local cmd t missing=""
    cmd=$(tail -n +2 "$f")
    for t in ${cmd#make }; do
      case $t in -* | *=*) continue ;; esac
      grep -qxF -- "$t" "$dir/targets" || missing="$missing $t"
    done
    if [ -z "$missing" ]; then ok "$page:$line: '$cmd': the Makefile has the target(s)"
    else bad "$page:$line: '$cmd': no such Makefile target:$missing"; fi
  done
}

for page in "${pages[@]}"; do check_page "$page"; done
finish
