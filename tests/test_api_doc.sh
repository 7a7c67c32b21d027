#!/usr/bin/env bash
# tests/test_api_doc.sh - docs/api.md documents exactly the public names of the four
# library headers (ipupipe_kernels.h, ipupipe_sched.h, ipupipe.h, ipupipe_mpi.h).
#
# PUBLIC NAMES come from tests/api_names.sh; its header comment is the rule. In short: in
# the declaration part of each header (before its implementation section) the functions
# declared with IPUPIPE_DEF or defined `static inline`, the typedef'd types, the struct /
# enum tags, the enum constants (the result codes of the X-macro list too) and the
# #define'd macros; anywhere in the header the names tested by #if / #ifdef / #ifndef /
# #elif (the compile-time switches). Only names starting with ipup_, IPUP_ or IPUPIPE_;
# never private names (ipup__*, IPUP__*, names ending in '_'), include guards
# (IPUPIPE_H, IPUPIPE_*_H) or the implementation sections' once-only guards.
#
# AN ENTRY of docs/api.md is a backtick span whose text is NAME or NAME(...), NAME starting
# with ipup_, IPUP_ or IPUPIPE_, found
#   - in a Markdown heading line (#, ##, ... followed by a space), any span of it, or
#   - in the FIRST cell of a table row (a line starting with '|'), any span of that cell;
# outside fenced code blocks. Every other mention of a name (prose, other cells, code) is
# not an entry.
#
# CHECKS, one line each, a failing one names the name:
#   1. the extraction works: every header gives names, a sample of known public names is
#      found and a sample of private names is not;
#   2. every public name has an entry (one FAIL per missing name);
#   3. every entry names a public name (one FAIL per stale or misspelt entry, with its line);
#   4. no name has two entries (one FAIL per name).
# Needs bash, grep, sed, awk and sort. Ends with `N passed, N failed`.
. "$(dirname "$0")/lib.sh"

doc=docs/api.md
headers=(ipupipe_kernels.h ipupipe_sched.h ipupipe.h ipupipe_mpi.h)
make_tmp api_doc

# 1. the public names
if ! bash tests/api_names.sh "${headers[@]}" > "$tmp/names.all" 2> "$tmp/names.err"; then
  bad "tests/api_names.sh failed" "$tmp/names.err"
  finish
  exit 1
fi
empty=""
for h in "${headers[@]}"; do
  grep -q " $h\$" "$tmp/names.all" || empty+=" $h"
done
# a sample: a function, an inline function, a type, a tag-only name, an X-macro constant,
# an enum constant, a macro, a switch of the implementation section
want="ipup_init ipup_relu_fwd_f32 ipup_op ipup_emu IPUP_ERR_THREAD IPUP_PHASES IPUP_ALIGN64 IPUPIPE_SPIN ipup_mpi_sum_algo"
drop="ipup__core IPUP__UNUSED IPUP__CORE_FIELDS IPUP_RESULT_LAST_ IPUPIPE_H IPUPIPE_KERNELS_H IPUPIPE_EMU_IMPLEMENTED IPUPIPE_KERNELS_IMPLEMENTATION_DONE IPUP_GELU_K0"
missing_w=""
for n in $want; do grep -q "^$n " "$tmp/names.all" || missing_w+=" $n"; done
found_d=""
for n in $drop; do grep -q "^$n " "$tmp/names.all" && found_d+=" $n"; done
awk '{print $1}' "$tmp/names.all" | LC_ALL=C sort -u > "$tmp/names"
npub=$(wc -l < "$tmp/names")
if [ -n "$empty$missing_w$found_d" ]; then
  bad "extraction of the public names:${empty:+ no names from$empty;}${missing_w:+ misses$missing_w;}${found_d:+ lists private$found_d}"
else
  ok "extraction of the public names: $npub names from ${#headers[@]} headers, the known ones found, private ones left out"
fi

# 2-4. the entries of docs/api.md
if [ ! -f "$doc" ]; then
  bad "$doc is missing"
  finish
  exit 1
fi
LC_ALL=C awk '
  function spans(s, line,    t) {
    while (match(s, /`[^`]*`/)) {
      t = substr(s, RSTART + 1, RLENGTH - 2)
      s = substr(s, RSTART + RLENGTH)
      if (t ~ /^(ipup_|IPUP_|IPUPIPE_)[A-Za-z0-9_]*(\(.*\))?$/) { sub(/\(.*$/, "", t); print t, line }
    }
  }
  /^[ \t]*(```|~~~)/ { fence = !fence; next }
  fence { next }
  /^#+[ \t]/ { spans($0, NR); next }
  /^\|/ {
    cell = substr($0, 2)
    k = index(cell, "|")
    if (k > 0) cell = substr(cell, 1, k - 1)
    spans(cell, NR)
  }' "$doc" > "$tmp/entries"
nent=$(wc -l < "$tmp/entries")

# 2. every public name has an entry
miss=0
while read -r n kind h; do
  if ! grep -q "^$n " "$tmp/entries"; then
    bad "$doc has no entry for $n ($kind, $h)"
    miss=$((miss + 1))
  fi
done < <(awk '!seen[$1]++' "$tmp/names.all")
[ "$miss" -eq 0 ] && ok "every one of the $npub public names has an entry in $doc"

# 3. every entry names a public name
stale=0
while read -r n line; do
  if ! grep -qx "$n" "$tmp/names"; then
    bad "$doc line $line has an entry for $n, which none of the headers declares"
    stale=$((stale + 1))
  fi
done < "$tmp/entries"
[ "$stale" -eq 0 ] && ok "each of the $nent entries of $doc names a public name of the headers"

# 4. one entry per name
dups=$(awk '{ n[$1]++; l[$1] = l[$1] " " $2 } END { for (k in n) if (n[k] > 1) print k, "lines" l[k] }' "$tmp/entries" | LC_ALL=C sort)
if [ -z "$dups" ]; then
  ok "no name has two entries in $doc"
else
  while read -r n rest; do bad "$n has more than one entry in $doc ($rest)"; done <<< "$dups"
fi

finish
