# tests/lib.sh - what the shell tests share. Source it first thing:
#     . "$(dirname "$0")/lib.sh"
# It moves to the repository root and gives:
#   ok NAME / bad NAME [LOG...]  count a check (bad shows the first lines of each LOG)
#   expect CODE NAME -- ARGS...  run "$tool" ARGS (the script sets tool=...; stdout in
#                                $tmp/out, stderr in $tmp/err); a check: it exits with CODE
#   has NAME TEXT FILE           a check: FILE contains TEXT (a fixed string, not a regex)
#   hasnt NAME TEXT FILE         a check: FILE does not contain TEXT
#   give_up MESSAGE [LOG]        count a failure, print the totals and exit 1 (a test
#                                that cannot go on: a missing tool or build)
#   need_bin PATH                give up when a binary is not built
#   make_tmp NAME                $tmp: a fresh directory, removed on exit
#   gen_syn DIR NTRAIN NTEST     small synthetic MNIST IDX files (no network, no data/)
#   finish                       prints `N passed, N failed`; status 1 on any failure
set -u
cd "$(dirname "$0")/.." || exit 1
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
  local log
  fail=$((fail + 1))
  echo "FAIL $1"
  shift
  for log in "$@"; do
    if [ -n "$log" ] && [ -f "$log" ]; then sed 's/^/    /' "$log" | head -n 15; fi
  done
  return 0
}
expect() {
  local code=$1 name=$2 rc
  shift 3
  "$tool" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq "$code" ]; then ok "$name (exit $rc)"; else bad "$name: exit $rc, expected $code" "$tmp/out" "$tmp/err"; fi
}
has() {
  if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1: '$2' not in $3" "$3"; fi
}
hasnt() {
  if grep -qF -- "$2" "$3"; then bad "$1: '$2' in $3" "$3"; else ok "$1"; fi
}
give_up() {
  bad "$@"
  finish
  exit 1
}
need_bin() {
  if [ ! -x "$1" ]; then give_up "$1 is missing (make $1)"; fi
}
make_tmp() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ipup_$1.XXXXXX") || exit 1
  trap 'rm -rf "$tmp"' EXIT
}
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

# One split of the set: image i has label k = i mod 10 and lights rows 2k+3..2k+5 on
# fixed noise, so a small model learns it in an epoch. IDX: big-endian magic
# 0x00000803 / 0x00000801 and counts, then the bytes (LeCun's MNIST page).
gen_idx() { # DIR SPLIT COUNT
  LC_ALL=C awk -v n="$3" -v img="$1/$2-images-idx3-ubyte" -v lbl="$1/$2-labels-idx1-ubyte" '
    function be32(v, f) { printf "%c%c%c%c", int(v/16777216)%256, int(v/65536)%256, int(v/256)%256, v%256 > f }
    BEGIN {
      printf "%c%c%c%c", 0, 0, 8, 3 > img; be32(n, img); be32(28, img); be32(28, img)
      printf "%c%c%c%c", 0, 0, 8, 1 > lbl; be32(n, lbl)
      for (i = 0; i < n; i++) {
        k = i % 10; printf "%c", k > lbl
        for (j = 0; j < 784; j++) {
          row = int(j / 28)
          v = (row >= 2*k + 3 && row < 2*k + 6) ? 200 : (i*31 + j*7) % 40
          printf "%c", v > img
        }
      }
    }'
}
gen_syn() { # DIR NTRAIN NTEST
  mkdir -p "$1"
  gen_idx "$1" train "$2"
  gen_idx "$1" t10k "$3"
  if [ "$(stat -c %s "$1/train-images-idx3-ubyte")" != $((16 + $2 * 784)) ]; then
    give_up "could not write synthetic IDX files into $1"
  fi
}
