#!/usr/bin/env bash
# tests/api_names.sh - the public names of the library headers, one per line:
#     NAME KIND HEADER        (KIND: function, type, tag, constant, macro, switch)
# sorted by name; a name declared in several headers (IPUPIPE_DEF, the version macros)
# is printed once per header. Usage: tests/api_names.sh [HEADER...] (default: the four
# headers ipupipe_kernels.h ipupipe_sched.h ipupipe.h ipupipe_mpi.h, from the repository
# root). tests/test_api_doc.sh checks docs/api.md against this list.
#
# THE RULE. A header's declaration part is every line before its implementation section
# (the first line `#ifdef IPUPIPE_IMPLEMENTATION` or `#if defined(IPUPIPE_IMPLEMENTATION)`).
# Comments, string literals and line continuations are removed or joined first; the
# `extern "C" {` / `}` pair of `#ifdef __cplusplus` does not count as a brace. Public are,
# in the declaration part:
#   function  the name before the first '(' of a statement that starts with IPUPIPE_DEF,
#             or of a `static inline` function defined at file scope;
#   type      the name a file-scope typedef declares (the last identifier of the
#             statement outside braces, or NAME of a function-pointer `(*NAME)`);
#   tag       NAME of `struct NAME {`, `enum NAME {`, `union NAME {`;
#   constant  each enumerator of an enum body (the first identifier after '{' or ','; a
#             macro call in the body is skipped), and NAME of each X(NAME, ...) entry of
#             an X-macro list #defined there (IPUP_RESULT_LIST: the result codes);
#   macro     NAME of every `#define NAME`;
# and, anywhere in the header (the implementation section included):
#   switch    every name tested by #if, #ifdef, #ifndef or #elif (what a user may define
#             before the include: IPUPIPE_NO_THREADS, IPUPIPE_SPIN, IPUP_MAX_LAYERS ...).
# Of these, only names that start with ipup_, IPUP_ or IPUPIPE_ are kept, and these are
# dropped: private names (ipup__*, IPUP__*), names ending in '_' (the enum sentinel
# IPUP_RESULT_LAST_; the pad_ fields are not names of this kind anyway), include guards
# (IPUPIPE_H, IPUPIPE_*_H) and the once-only guards of the implementation sections
# (IPUPIPE_*_IMPLEMENTED, IPUPIPE_*_IMPLEMENTATION_DONE). Struct fields are not names of
# their own: docs/api.md documents them in the table of their type.
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- ipupipe_kernels.h ipupipe_sched.h ipupipe.h ipupipe_mpi.h

api_names_of() { # HEADER
  LC_ALL=C awk -v hdr="$1" '
    function keep(n) {
      if (n !~ /^(ipup_|IPUP_|IPUPIPE_)/) return 0
      if (n ~ /^(ipup__|IPUP__)/ || n ~ /_$/) return 0
      if (n ~ /^IPUPIPE(_[A-Z0-9]+)*_H$/) return 0
      if (n ~ /^IPUPIPE_[A-Z0-9_]*_(IMPLEMENTED|IMPLEMENTATION_DONE)$/) return 0
      return 1
    }
    # one kind per name: the first of function, type, tag, constant, macro, switch
    function out(n, kind) {
      if (!keep(n)) return
      if (!(n in best) || rank[kind] < rank[best[n]]) best[n] = kind
    }
    # strip comments and string literals (state carried across lines in incom)
    function strip(s,    r, c, c2, i, n, instr) {
      r = ""; n = length(s); instr = 0
      for (i = 1; i <= n; i++) {
        c = substr(s, i, 1); c2 = substr(s, i, 2)
        if (incom) { if (c2 == "*/") { incom = 0; i++ } continue }
        if (instr) { if (c == "\\") i++; else if (c == instr) { instr = 0; r = r "\"\"" } continue }
        if (c2 == "/*") { incom = 1; i++; r = r " "; continue }
        if (c2 == "//") break
        if (c == "\"" || c == "\047") { instr = c; continue }
        r = r c
      }
      return r
    }
    # the C tokens of the declaration part (statements, braces, enum bodies)
    function token(t) {
      if (t == "{") {
        if (depth == 0) {
          body = "other"
          for (k = ntok; k >= 1; k--) if (stmt[k] == "(") { body = "function"; break }
          if (ntok >= 2 && stmt[ntok - 1] ~ /^(struct|enum|union)$/) out(stmt[ntok], "tag")
        }
        depth++
        isenum[depth] = (depth == 1 && ntok >= 1 && (stmt[ntok] == "enum" || (ntok >= 2 && stmt[ntok - 1] == "enum")))
        if (isenum[depth]) { expect = 1; pdepth = 0 }
        if (depth == 1) stmt[++ntok] = "{"
        return
      }
      if (t == "}") {
        if (depth > 0) depth--
        if (depth == 0) { stmt[++ntok] = "}"; if (body == "function") { finish_stmt(); } }
        return
      }
      if (depth > 0) {                         # inside braces: only enum bodies matter
        if (!isenum[depth]) return
        if (t == "(") { pdepth++; return }
        if (t == ")") { pdepth--; if (pdepth == 0) expect = 1; return }
        if (pdepth > 0) return
        if (t == ",") { expect = 1; return }
        if (expect && t ~ /^[A-Za-z_]/) { pending = t; expect = 0; return }
        return
      }
      stmt[++ntok] = t
      if (t == ";") finish_stmt()
    }
    function finish_stmt(   k, name) {
      if (ntok >= 1 && stmt[1] == "IPUPIPE_DEF" || (ntok >= 2 && stmt[1] == "static" && stmt[2] == "inline")) {
        for (k = 2; k <= ntok; k++) if (stmt[k] == "(") { out(stmt[k - 1], "function"); break }
      } else if (stmt[1] == "typedef") {
        name = ""
        for (k = 1; k + 3 <= ntok; k++) if (stmt[k] == "(" && stmt[k + 1] == "*" && stmt[k + 3] == ")") { name = stmt[k + 2]; break }
        if (name == "") for (k = ntok; k >= 1; k--) if (stmt[k] ~ /^[A-Za-z_]/) { name = stmt[k]; break }
        if (name != "") out(name, "type")
      }
      ntok = 0
    }
    function tokens(s,    t) {
      while (s != "") {
        if (match(s, /^[ \t]+/)) { s = substr(s, RLENGTH + 1); continue }
        if (match(s, /^[A-Za-z_][A-Za-z0-9_]*/)) t = substr(s, 1, RLENGTH)
        else if (match(s, /^[0-9][A-Za-z0-9_.]*/)) t = substr(s, 1, RLENGTH)
        else { t = substr(s, 1, 1); RLENGTH = 1 }
        s = substr(s, RLENGTH + 1)
        # an enumerator is the identifier that starts an element, unless a "(" follows it
        if (pending != "") { if (t != "(") out(pending, "constant"); pending = "" }
        token(t)
      }
    }
    BEGIN {
      impl = 0; incom = 0; depth = 0; ntok = 0; cont = ""; skipcxx = 0; pending = ""
      rank["function"] = 1; rank["type"] = 2; rank["tag"] = 3; rank["constant"] = 4; rank["macro"] = 5; rank["switch"] = 6
    }
    END { for (n in best) print n, best[n], hdr }
    {
      line = strip($0)
      if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cont = cont line " "; next }
      line = cont line; cont = ""
      if (line ~ /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif)[ \t(!]/) {
        s = line; sub(/^[ \t]*#[ \t]*[a-z]+/, "", s)
        while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) { out(substr(s, RSTART, RLENGTH), "switch"); s = substr(s, RSTART + RLENGTH) }
      }
      if (impl) next
      if (line ~ /^[ \t]*#[ \t]*(ifdef[ \t]+IPUPIPE_IMPLEMENTATION|if[ \t]+defined[ \t]*\([ \t]*IPUPIPE_IMPLEMENTATION)/) { impl = 1; next }
      if (line ~ /^[ \t]*#/) {
        skipcxx = (line ~ /^[ \t]*#[ \t]*ifdef[ \t]+__cplusplus[ \t]*$/)
        if (match(line, /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) {
          d = substr(line, RSTART, RLENGTH); sub(/^[ \t]*#[ \t]*define[ \t]+/, "", d); out(d, "macro")
          s = line
          while (match(s, /[^A-Za-z0-9_]X[ \t]*\([ \t]*[A-Za-z_][A-Za-z0-9_]*/)) {
            x = substr(s, RSTART, RLENGTH); sub(/^.X[ \t]*\([ \t]*/, "", x); out(x, "constant"); s = substr(s, RSTART + RLENGTH)
          }
        }
        next
      }
      if (skipcxx) { skipcxx = 0; if (line ~ /^[ \t]*(extern[ \t]*""[ \t]*\{|\})[ \t]*$/) next }
      tokens(line)
    }' "$1"
}

for h in "$@"; do
  if [ ! -f "$h" ]; then echo "api_names.sh: no header $h" >&2; exit 1; fi
  api_names_of "$h"
done | LC_ALL=C sort
