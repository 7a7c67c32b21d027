#!/usr/bin/env bash
# tests/test_readme.sh - every C and C++ code block of README.md compiles (and the
# runnable ones run), so the README cannot drift from the headers.
#
# Blocks: a fence opened with ```c is C that must also be valid C++ (the headers promise
# both): it is compiled with gcc and clang (-std=c11 and the Makefile's WARN) and with g++
# and clang++ (-std=c++17 and the Makefile's CXXWARN), all at -O1 -march=native so the
# optimiser's warnings fire too. A fence opened with ```cpp or ```c++ is C++ only (g++,
# clang++). Other fences (sh, text, ...) are not compiled.
#
# The convention, per block:
#   - By default a block is a COMPLETE translation unit, compiled exactly as written (no
#     include or definition added). If it defines `int main(`, it is linked and run (it
#     must exit 0 within 30 s and need no data files); otherwise it is only compiled (-c),
#     so it may call functions it merely declares.
#   - A block whose opening fence is immediately preceded by the line `<!-- fragment -->`
#     is a FRAGMENT: statements (and declarations) of a function body. Its preprocessor
#     lines (`#...`, with their continuation lines) are moved, in order, to file scope,
#     after <stdio.h> <stdlib.h> <string.h> <stdint.h>, and after
#     `#define IPUPIPE_IMPLEMENTATION` + `#include "ipupipe.h"` unless the fragment
#     includes an ipupipe header itself; the other lines become the body of
#     `int main(void) { ... return 0; }`, which is linked and run.
#   - `<!-- fragment no-run -->` or `<!-- no-run -->` (same place): compiled and linked,
#     not run.
#   - `<!-- device.c -->` (same place): the device program, which includes the pools.h that
#     the README's build/ipupipe-plan command writes; tests/test_readme_device.sh compiles
#     it (gcc, clang, g++, clang++), runs it and builds it for the firmware. Skipped here.
# Compiler messages point at README.md lines (#line directives); a failing block shows
# its compiler errors. The generated sources are in build/readme/.
# Usage: tests/test_readme.sh [README]  (default README.md). Ends with `N passed, N failed`.
. "$(dirname "$0")/lib.sh"
readme=${1:-README.md}
dir=build/readme
rm -rf "$dir"
mkdir -p "$dir"

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

[ -f "$readme" ] || { bad "$readme not found"; finish; exit 1; }

# 1. split the README: $dir/bLINE.body (the block's lines) and one manifest line per
#    compiled block: LINE LANG KIND RUN (KIND complete|fragment, RUN run|no-run).
#    Every fence is tracked so a ``` line inside a sh block does not open a C block.
awk -v dir="$dir" '
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
' "$readme" > "$dir/manifest"

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
  body=$dir/b$line.body
  src=$dir/b$line.src
  if [ "$kind" = fragment ]; then gen_fragment "$line" "$body" > "$src"
  else { printf '#line %d "%s"\n' $((line + 1)) "$readme"; cat "$body"; } > "$src"; fi
  link=0
  if [ "$kind" = fragment ] || grep -qE '^[[:space:]]*int[[:space:]]+main[[:space:]]*\(' "$body"; then link=1; fi
  case $lang in
    c) compilers="gcc clang g++ clang++" ;;
    *) compilers="g++ clang++" ;;
  esac
  for cc in $compilers; do
    case $cc in
      gcc | clang) flags="$CSTD $WARN $OPT -x c" ;;
      *) flags="-std=c++17 $CXXWARN $OPT -x c++" ;;
    esac
    what="$readme:$line [$lang $kind] $cc"
    out=$dir/b$line-$cc
    log=$out.log
    # shellcheck disable=SC2086 # the flag lists are word lists
    if [ "$link" = 1 ]; then
      $cc $flags -I. "$src" -x none -o "$out" $LIBS > "$log" 2>&1
    else
      $cc $flags -I. -c "$src" -o "$out.o" > "$log" 2>&1
    fi
    rc=$?
    if [ "$rc" -ne 0 ]; then
      fail=$((fail + 1))
      echo "FAIL $what: does not $([ "$link" = 1 ] && echo "compile and link" || echo compile) (source $src)"
      { grep -E "error|warning|undefined reference|in expansion of macro" "$log" || cat "$log"; } | head -n 25 | sed 's/^/    /'
      continue
    fi
    if [ "$link" = 1 ] && [ "$run" = run ]; then
      timeout 30 "./$out" > "$out.run" 2>&1
      rc=$?
      if [ "$rc" -ne 0 ]; then bad "$what: compiled, but the program exits $rc (source $src)" "$out.run"; continue; fi
      ok "$what: compiled, linked, ran"
    elif [ "$link" = 1 ]; then
      ok "$what: compiled and linked (no-run)"
    else
      ok "$what: compiled (a translation unit without main)"
    fi
  done
done < "$dir/manifest"
if [ "$nblocks" -eq 0 ]; then bad "$readme: no C or C++ code block found"; fi
finish
