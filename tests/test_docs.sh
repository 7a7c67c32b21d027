#!/usr/bin/env bash
# tests/test_docs.sh - every transcript in README.md and docs/*.md runs as shown.
#
# A transcript is a fenced block of kind `console`:
#
#     ```console
#     $ build/ipupipe-sched --schedule gpipe -S 4 -M 8 --measure
#     bubble 0.2727 ...
#     ```
#
# A line starting with "$ " is a command, run by bash from the repository root (after
# `make test` has built the tools); the lines after it, up to the next command or the
# end of the block, are what it prints (stdout and stderr together). Each command is
# one check: its output must equal the quoted lines, where
#   - a quoted line "..." stands for any number of lines (zero or more);
#   - "[...]" inside a quoted line stands for any text on that line (a speed, a time);
#   - trailing blanks are ignored.
# A command that exits non-zero fails unless the quoted output ends with a line
# "[exit N]" giving that status. A command may continue on the next line after a
# trailing backslash. Commands run with a 300 s limit each; TMPDIR is a fresh directory,
# so a transcript can write to "$TMPDIR/...". Files: README.md docs/*.md, or the files
# given as arguments. Ends with `N passed, N failed`.
. "$(dirname "$0")/lib.sh"
make_tmp docs

files=("$@")
[ "${#files[@]}" -gt 0 ] || files=(README.md docs/*.md)

# One record per command: FILE, LINE, the command, the expected lines (python3 splits the
# markdown; bash runs the commands).
python3 - "$tmp" "${files[@]}" <<'EOF' || { bad "could not read the transcripts"; finish; exit 1; }
import os, sys
out, files = sys.argv[1], sys.argv[2:]
n = 0
for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        cmd = None
        while i < len(lines) and lines[i].strip() != "```":
            ln = lines[i]
            if ln.startswith("$ "):
                if cmd is not None:
                    n += 1
                    open(f"{out}/t{n:04d}", "w").write("\n".join([path, str(start), cmd] + exp) + "\n")
                cmd, start, exp = ln[2:], i + 1, []
                while cmd.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd[:-1] + " " + lines[i].strip()
            elif cmd is not None:
                exp.append(ln)
            i += 1
        if cmd is not None:
            n += 1
            open(f"{out}/t{n:04d}", "w").write("\n".join([path, str(start), cmd] + exp) + "\n")
        i += 1
EOF

# Compares actual output ($1) with the expected lines ($2); prints the first difference.
match() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
act = [l.rstrip() for l in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")]
exp = [l.rstrip() for l in open(sys.argv[2], encoding="utf-8").read().split("\n")]
while act and act[-1] == "": act.pop()
while exp and exp[-1] == "": exp.pop()
def line_ok(e, a):
    if "[...]" not in e: return e == a
    return re.fullmatch(".*".join(re.escape(p) for p in e.split("[...]")), a) is not None
def ok(i, j, memo={}):
    key = (i, j)
    if key in memo: return memo[key]
    if i == len(exp): r = j == len(act)
    elif exp[i] == "...": r = any(ok(i + 1, k) for k in range(j, len(act) + 1))
    else: r = j < len(act) and line_ok(exp[i], act[j]) and ok(i + 1, j + 1)
    memo[key] = r
    return r
if ok(0, 0): sys.exit(0)
j = 0
for i, e in enumerate(exp):
    if e == "...": break
    if j >= len(act) or not line_ok(e, act[j]):
        print(f"    expected line {i + 1}: {e!r}")
        print(f"    printed  line {j + 1}: {act[j] if j < len(act) else '(end of output)'!r}")
        sys.exit(1)
    j += 1
print(f"    the output differs after the quoted lines ({len(act)} lines printed)")
sys.exit(1)
EOF
}

count=0
for rec in "$tmp"/t*; do
  [ -f "$rec" ] || continue
  count=$((count + 1))
  { IFS= read -r file; IFS= read -r line; IFS= read -r cmd; } < "$rec"
  tail -n +4 "$rec" > "$rec.exp"
  want=0
  last=$(grep -v '^[[:space:]]*$' "$rec.exp" | tail -n 1)
  if [[ $last =~ ^\[exit\ ([0-9]+)\]$ ]]; then
    want=${BASH_REMATCH[1]}
    # drop the status line from what must be printed
    awk -v n="$(grep -n '^\[exit [0-9]*\]$' "$rec.exp" | tail -n 1 | cut -d: -f1)" 'NR != n' "$rec.exp" > "$rec.exp2"
    mv "$rec.exp2" "$rec.exp"
  fi
  work=$(mktemp -d "$tmp/run.XXXXXX")
  TMPDIR=$work timeout 300 bash -c "$cmd" > "$rec.out" 2>&1
  rc=$?
  name="$file:$line: \$ ${cmd:0:90}"
  if [ "$rc" -ne "$want" ]; then
    bad "$name (exit $rc, the transcript says $want)" "$rec.out"
  elif diff_out=$(match "$rec.out" "$rec.exp"); then
    ok "$name"
  else
    bad "$name"
    echo "$diff_out"
  fi
done
[ "$count" -gt 0 ] || bad "no console transcript found in ${files[*]}"
finish
