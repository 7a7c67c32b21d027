#!/usr/bin/env bash
# tests/test_sensor.sh - end-to-end tests of build/sensor-demo, the sensor example.
#
#  1. --mode anomaly: the autoencoder's loss falls, every injected anomaly kind is
#     detected above its bound, the false-positive rate on fresh normal windows stays
#     low; the final weights have the same bits with the threaded runner and with
#     another schedule and IPU count, and other bits with another seed;
#  2. --mode finetune: pre-training learns machine A, fine-tuning only the head raises
#     the accuracy on machine B, the frozen body is bit for bit unchanged, the frozen
#     layers carve no gradient or optimizer bytes (the memory report against the plan
#     without ":frozen"); the same bits with threads and with another schedule;
#  3. hostile flags: exit status 2 and one message naming the flag.
# The bounds come from measured runs with a margin (the README gives the figures).
# About 3 s on a loaded 2-core machine. Ends with `N passed, N failed`.
. "$(dirname "$0")/lib.sh"
BIN=build/sensor-demo
need_bin "$BIN"
make_tmp sensor

# field VALUE-AFTER-PATTERN FILE: the first number after the sed pattern
num() { sed -n "s/.*$1 *\([0-9.]*\).*/\1/p" "$2" | head -n 1; }
hash_of() { sed -n "s/^$1 FNV-1a \([0-9a-f]*\)$/\1/p" "$2" | head -n 1; }
# check NAME AWK-CONDITION VALUES...: ok when the condition over a, b, c holds
check() {
  local name=$1 cond=$2
  shift 2
  if [ -n "${1:-}" ] && awk -v a="${1:-}" -v b="${2:-0}" -v c="${3:-0}" "BEGIN { exit !($cond) }"; then ok "$name ($*)"
  else bad "$name (got: $*)" "$tmp/log"; fi
}

# ---- 1. anomaly detection
if $BIN --mode anomaly --quiet > "$tmp/ae" 2> "$tmp/log"; then ok "anomaly run"; else bad "anomaly run" "$tmp/log"; fi
cp "$tmp/ae" "$tmp/log"
first=$(sed -n 's/^training: .*loss \([0-9.]*\) -> \([0-9.]*\).*/\1/p' "$tmp/ae")
last=$(sed -n 's/^training: .*loss \([0-9.]*\) -> \([0-9.]*\).*/\2/p' "$tmp/ae")
check "autoencoder loss: last < 0.02 x first" "b < 0.02 * a" "$first" "$last"
rate() { sed -n "s/^$1 *$2 .*= \([0-9.]*\)%$/\1/p" "$tmp/ae"; }
check "false positives on fresh normal windows <= 3%" "a <= 3" "$(rate 'false positives' normal)"
check "bearing impacts detected >= 95%" "a >= 95" "$(rate detection bearing-impacts)"
check "speed shift detected >= 95%" "a >= 95" "$(rate detection speed-shift)"
check "spike bursts detected >= 95%" "a >= 95" "$(rate detection spike-burst)"
check "saturation detected >= 60%" "a >= 60" "$(rate detection saturation)"
ref=$(hash_of "final weights" "$tmp/ae")
for v in "--runner threads" "--schedule grouped --ipus 3" "--schedule zb-h1 --runner threads" "--schedule gpipe --ipus 4"; do
  # shellcheck disable=SC2086
  $BIN --mode anomaly --quiet $v > "$tmp/v" 2> "$tmp/log"
  h=$(hash_of "final weights" "$tmp/v")
  if [ -n "$ref" ] && [ "$h" = "$ref" ] && cmp -s <(grep -v '^sensor-demo' "$tmp/ae") <(grep -v '^sensor-demo' "$tmp/v"); then
    ok "anomaly $v: same weights ($h) and figures"
  else bad "anomaly $v: weights $h, expected $ref" "$tmp/log"; fi
done
$BIN --mode anomaly --quiet --seed 2 > "$tmp/v" 2> "$tmp/log"
h=$(hash_of "final weights" "$tmp/v")
if [ -n "$h" ] && [ "$h" != "$ref" ]; then ok "another seed, other weights"; else bad "another seed, other weights ($h)"; fi

# ---- 2. fine-tuning with a frozen body
if $BIN --mode finetune --quiet > "$tmp/ft" 2> "$tmp/log"; then ok "finetune run"; else bad "finetune run" "$tmp/log"; fi
cp "$tmp/ft" "$tmp/log"
first=$(sed -n 's/^pre-training on machine A: .*loss \([0-9.]*\) -> \([0-9.]*\).*/\1/p' "$tmp/ft")
last=$(sed -n 's/^pre-training on machine A: .*loss \([0-9.]*\) -> \([0-9.]*\).*/\2/p' "$tmp/ft")
check "pre-training loss: last < 0.05 x first" "b < 0.05 * a" "$first" "$last"
acc() { sed -n "s/^$1.* = \([0-9.]*\)%$/\1/p" "$tmp/ft"; }
check "machine A held-out accuracy >= 95%" "a >= 95" "$(acc 'machine A held-out accuracy')"
before=$(acc 'machine B held-out accuracy before')
after=$(acc 'machine B held-out accuracy after')
check "machine B accuracy rises by >= 40 points with the head alone" "b - a >= 40" "$before" "$after"
check "machine B accuracy after fine-tuning >= 90%" "a >= 90" "$after"
b0=$(hash_of "frozen body before fine-tuning" "$tmp/ft")
b1=$(hash_of "frozen body after fine-tuning " "$tmp/ft")
if [ -n "$b0" ] && [ "$b0" = "$b1" ] && grep -q '^frozen body: bit-identical$' "$tmp/ft"; then ok "frozen body bit-identical ($b0)"
else bad "frozen body bit-identical ($b0 -> $b1)"; fi
mem=$(sed -n 's/^memory: gradient accumulators \([0-9]*\) bytes, optimizer state \([0-9]*\) bytes with the body frozen; \([0-9]*\) and \([0-9]*\) without.*/\1 \2 \3 \4/p' "$tmp/ft")
# shellcheck disable=SC2086
set -- $mem
check "frozen body: fewer gradient bytes than without :frozen" "a > 0 && a < b" "${1:-}" "${3:-}"
check "frozen body: fewer optimizer bytes than without :frozen" "a > 0 && a < b" "${2:-}" "${4:-}"
ref=$(hash_of "final weights" "$tmp/ft")
for v in "--runner threads" "--schedule gpipe" "--schedule grouped --runner threads"; do
  # shellcheck disable=SC2086
  $BIN --mode finetune --quiet $v > "$tmp/v" 2> "$tmp/log"
  h=$(hash_of "final weights" "$tmp/v")
  if [ -n "$ref" ] && [ "$h" = "$ref" ] && cmp -s <(grep -v '^pipeline' "$tmp/ft") <(grep -v '^pipeline' "$tmp/v"); then
    ok "finetune $v: same weights ($h) and figures"
  else bad "finetune $v: weights $h, expected $ref" "$tmp/log"; fi
done

# ---- 3. hostile flags
hostile() { # EXPECTED-TEXT ARGS...
  local want=$1
  shift
  "$BIN" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "^sensor-demo: error: .*$want" "$tmp/err" \
     && ! grep -q 'FNV-1a' "$tmp/out"; then ok "refused: $* ($(cat "$tmp/err"))"
  else bad "refused: $* (status $rc)" "$tmp/err"; fi
}
hostile "--mode is required"
hostile "--mode needs anomaly or finetune, got 'train'" --mode train
hostile "--ipus needs an integer in 1..4, got '0'" --mode anomaly --ipus 0
hostile "--ipus needs an integer in 1..4, got '9'" --mode anomaly --ipus 9
hostile "--ipus must be 2" --mode finetune --ipus 3
hostile "--batch-size needs an integer in 1..256, got '8x'" --mode anomaly --batch-size 8x
hostile "--steps needs an integer in 1..100000, got '-5'" --mode anomaly --steps -5
hostile "--percentile needs a number in \[50, 100\], got '101'" --mode anomaly --percentile 101
hostile "--learning-rate needs a number" --mode anomaly --learning-rate nan
hostile "--seed needs an integer in 0..2^64-1, got '-1'" --mode anomaly --seed -1
hostile "--schedule needs grouped" --mode anomaly --schedule fast
hostile "--runner needs coop or threads, got 'mpi'" --mode anomaly --runner mpi
hostile "--train needs a value" --mode anomaly --train
hostile "unknown option '--epochs'" --mode anomaly --epochs 3
if $BIN --help > "$tmp/out" 2>&1 && grep -q '^usage: sensor-demo' "$tmp/out"; then ok "--help prints the usage"
else bad "--help prints the usage" "$tmp/out"; fi

finish
