#!/usr/bin/env bash
# tests/test_hygiene.sh - repository rules that no compiler checks. One check per rule,
# listing every hit (file:line):
#   1. no file names a path outside the repository: the parent-directory "shared" folder
#      (dot-dot, slash, "shared");
#   2. no file names an issue number: the word "issue" or "issues", a space, maybe a '#',
#      and a digit (case-insensitive); say what the thing is instead;
#   3. no C or C++ file includes a .c file (a source file is its own translation unit;
#      shared code goes in a header);
#   4. no allocator call (malloc family: malloc, calloc, realloc, free, aligned_alloc,
#      posix_memalign, memalign, valloc, strdup, strndup, then "(") anywhere in the text
#      of the library headers ipupipe*.h;
#   5. no function longer than 120 lines (end line minus start line, as Universal Ctags
#      reports them: ctags --fields=+ne --c-kinds=f) in ipupipe*.h and the .c and .h files
#      of the host programs' folders (examples/ except firmware/ and explorer/). Needs
#      Universal Ctags (Debian: universal-ctags; .ci/run installs it);
#   6. the top level holds only the project's own entries: the library headers ipupipe*.h,
#      Makefile, README.md, CHANGELOG.md, .gitignore, the package manifests that must sit
#      there (CMakeLists.txt, library.json for PlatformIO, library.properties for Arduino)
#      and the directories .ci bench cmake docs examples tests zephyr (a file a command
#      wrote into the checkout, then committed by mistake, fails here);
#   7. examples/ is laid out by program: a header of one program's folder
#      (examples/PROGRAM/) is included only from that folder, from examples/common/ never
#      by name of a program's header; tests/ and bench/ may include any. The firmware's
#      host generators (examples/firmware/gen_*.c) reproduce the MNIST and sensor programs'
#      runs and include their headers by design.
# Files: the tracked files of the git checkout (git ls-files), or every file outside
# build/, data/ and .git/ when this is not a checkout. The patterns below are assembled
# from pieces so that this file does not match them itself.
# Ends with `N passed, N failed`.
. "$(dirname "$0")/lib.sh"
MAXLEN=120

files=()
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  while IFS= read -r -d '' f; do [ -f "$f" ] && files+=("$f"); done < <(git ls-files -z)
else
  while IFS= read -r -d '' f; do files+=("${f#./}"); done < <(find . -type f \
    -not -path './build/*' -not -path './data/*' -not -path './.git/*' -print0)
fi
if [ "${#files[@]}" -eq 0 ]; then give_up "no files found"; fi

srcs=()
for f in "${files[@]}"; do
  case $f in *.c | *.h | *.cpp | *.cc | *.hpp) srcs+=("$f") ;; esac
done
libhdrs=()
for f in "${files[@]}"; do
  case $f in ipupipe*.h) libhdrs+=("$f") ;; esac
done

# report RULE HITS...: ok when there are none, else one failure listing them
report() {
  local rule=$1 hits=$2
  if [ -z "$hits" ]; then ok "$rule"; return; fi
  fail=$((fail + 1))
  echo "FAIL $rule: $(printf '%s\n' "$hits" | wc -l) hit(s)"
  printf '%s\n' "$hits" | head -n 60 | sed 's/^/    /'
}

# grep -I: text files only (fuzz corpora may hold binary files)
scan() { # ERE, grep options, files...
  local re=$1 opt=$2
  shift 2
  [ $# -gt 0 ] || return 0
  grep -n -I -H -E $opt -- "$re" "$@" 2> /dev/null
}

# 1. paths outside the repository
dots='\.\.'
outside="$dots/sha""red"
report "no file names the parent-directory shared folder" "$(scan "$outside" "" "${files[@]}")"

# 2. issue numbers
word='iss''ue'
issue_re="\\b${word}s?[[:space:]]+#?[0-9]"
report "no file names an issue number" "$(scan "$issue_re" -i "${files[@]}")"

# 3. a .c file included
inc='#[[:space:]]*incl''ude'
cinc_re="^[[:space:]]*$inc[[:space:]]*[\"<][^\">]*\\.c[\">]"
report "no C/C++ file includes a .c file" "$(scan "$cinc_re" "" "${srcs[@]}")"

# 4. the allocator in the library headers
al='al''loc'
heap_re="(^|[^-_[:alnum:]])(m$al|c$al|re$al|free|aligned_$al|posix_mem$al|mem$al|v$al|strdup|strndup)[[:space:]]*\\("
report "no malloc-family call in ipupipe*.h" "$(scan "$heap_re" "" "${libhdrs[@]}")"

# 5. long functions
if ! ctags --version 2> /dev/null | grep -q 'Universal Ctags'; then
  bad "functions of at most $MAXLEN lines: Universal Ctags not found (apt-get install universal-ctags)"
else
  fn_files=("${libhdrs[@]}")
  for f in "${files[@]}"; do
    case $f in examples/firmware/* | examples/explorer/*) ;; examples/*/*.c | examples/*/*.h) fn_files+=("$f") ;; esac
  done
  long=""
  for f in "${fn_files[@]}"; do
    l=$(ctags --language-force=C --fields=+ne -o - --c-kinds=f "$f" 2> /dev/null | awk -F'\t' -v max="$MAXLEN" '
      $4 == "f" {
        s = e = ""
        for (i = 5; i <= NF; i++) {
          if ($i ~ /^line:/) s = substr($i, 6)
          if ($i ~ /^end:/) e = substr($i, 5)
        }
        if (s != "" && e != "" && e - s > max) printf "%s:%d: %s is %d lines\n", FILENAME_, s, $1, e - s
      }' FILENAME_="$f")
    [ -n "$l" ] && long+="$l"$'\n'
  done
  report "no function over $MAXLEN lines in ipupipe*.h and the host programs' sources (${#fn_files[@]} files)" "${long%$'\n'}"
fi

# 6. the top level
stray=""
for f in "${files[@]}"; do
  case $f in
    */*) top=${f%%/*}; case $top in .ci | bench | cmake | docs | examples | tests | zephyr) ;; *) stray+="$f"$'\n' ;; esac ;;
    ipupipe*.h | Makefile | README.md | CHANGELOG.md | .gitignore) ;;
    CMakeLists.txt | library.json | library.properties) ;;
    *) stray+="$f"$'\n' ;;
  esac
done
report "the top level holds only the headers, Makefile, README.md, CHANGELOG.md, .gitignore, the package manifests, .ci, bench, cmake, docs, examples, tests, zephyr" "${stray%$'\n'}"

# 7. examples/ by program
cross=""
for f in "${files[@]}"; do
  case $f in examples/firmware/gen_*.c) continue ;; examples/*/*) ;; *) continue ;; esac
  dir=${f#examples/}; dir=${dir%%/*}
  while IFS= read -r inc; do
    [ -n "$inc" ] || continue
    for home in examples/*/"$inc"; do
      [ -f "$home" ] || continue
      hdir=${home#examples/}; hdir=${hdir%%/*}
      [ "$hdir" = "$dir" ] || [ "$hdir" = common ] || cross+="$f includes $home"$'\n'
    done
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
report "no examples/ program folder includes another program's header" "${cross%$'\n'}"

finish
