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
#  3. hostile flags: exit status 2 and one message naming the flag;
#  4. --mode anomaly --export-c (examples/common/export_c.h, a short run): the header says
#     its loss is mse, compiles under the house warnings with -Werror in gcc and clang
#     and as C++17 with g++, and tests/export_driver.c finds in one process that its
#     arrays hold the trained bits (FNV-1a) and that the generated predict gives the
#     reconstructions of ipup_predict bit for bit on random inputs; --export-name and
#     the default name; refusals (a directory, an unwritable path, bad names,
#     --export-name alone, --mode finetune) leave no file and no temporary.
# The bounds come from measured runs with a margin.
# About 3 s on a loaded 2-core machine, plus about 10 s of compiling for 4. Ends with
# `N passed, N failed`.
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
if grep -q '^  --export-c FILE.h' "$tmp/out" && grep -q '^  --export-name NAME' "$tmp/out"; then
  ok "--help lists --export-c and --export-name"
else bad "--help lists --export-c and --export-name" "$tmp/out"; fi

# ---- 4. --export-c: the autoencoder as a C header
short=(--mode anomaly --steps 40 --train 256 --test 16)
WARN=(-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror)
hdr=$tmp/ae.h
if $BIN "${short[@]}" --export-c "$hdr" > "$tmp/ex" 2> "$tmp/log" && [ -s "$hdr" ] \
   && grep -q "^exported $hdr: ae_predict, 8 weight arrays" "$tmp/ex"; then
  ok "anomaly --export-c writes a header of $(wc -c < "$hdr") bytes ($(grep -c '^static const float' "$hdr") arrays)"
else bad "anomaly --export-c writes a header" "$tmp/log"; fi
if grep -q '^#define AE_LOSS "mse"' "$hdr" && grep -q '^#define AE_OUT 64$' "$hdr" \
   && grep -q 'float \*out, int32_t \*cls' "$hdr" && ! grep -q 'float \*logits' "$hdr"; then
  ok "the header: AE_LOSS \"mse\", 64 outputs, predict(n, x, out, cls, scratch), no logits"
else bad "the header: AE_LOSS \"mse\", 64 outputs, predict(n, x, out, cls, scratch), no logits" "$hdr"; fi
if ! grep -q 'ipup_mse\|ipup_gelu\|/\* layer 6 ' "$hdr" && [ "$(grep -c '^    ipup_' "$hdr")" = 4 ] \
   && [ "$(grep -c '^    ipup_dense' "$hdr")" = 4 ]; then
  ok "the forward stops before the mse layer: 4 dense calls, no loss"
else bad "the forward stops before the mse layer: 4 dense calls, no loss" "$hdr"; fi
weights=$(hash_of "final weights" "$tmp/ex")
if [ -n "$weights" ] && grep -q "^#define AE_WEIGHTS_FNV1A UINT64_C(0x$weights)" "$hdr"; then
  ok "AE_WEIGHTS_FNV1A is the run's final weights ($weights)"
else bad "AE_WEIGHTS_FNV1A is the run's final weights ($weights)" "$hdr"; fi
for cc in gcc clang g++; do
  log=$tmp/ae-$cc.log
  case $cc in g++) std=(-std=c++17 -x c++) ;; *) std=(-std=c11 -Wstrict-prototypes) ;; esac
  if ! nice $cc "${std[@]}" "${WARN[@]}" -O1 -I. -DEXPORT_HEADER="\"$hdr\"" -DEXPORT_NAME=ae -DEXPORT_UPPER=AE \
       -DXD_HAS_SPLIT tests/export_driver.c -o "$tmp/drv" -lm -lpthread > "$log" 2>&1; then
    bad "the header compiles with $cc ${std[*]} -Werror" "$log"; continue
  fi
  ok "the header compiles with $cc ${std[*]} -Werror"
  if "$tmp/drv" - 100 > "$log" 2>&1 && ! grep -q FAIL "$log" && [ "$(grep -c '^ok' "$log")" = 2 ]; then
    ok "ae ($cc): weights exact, predict == ipup_predict bit for bit: $(sed -n 's/^ok   predict: //p' "$log")"
  else bad "ae ($cc): weights exact and predict == ipup_predict" "$log"; fi
done
$BIN "${short[@]}" --quiet --export-c "$tmp/x.h" --export-name sensor_ae > "$tmp/v" 2> "$tmp/log"
if grep -q '^static inline void sensor_ae_predict(' "$tmp/x.h" && grep -q '^#define SENSOR_AE_LOSS "mse"' "$tmp/x.h" \
   && ! grep -q '^exported' "$tmp/v"; then ok "--export-name sensor_ae: sensor_ae_predict, SENSOR_AE_LOSS (--quiet: no line)"
else bad "--export-name sensor_ae: sensor_ae_predict, SENSOR_AE_LOSS" "$tmp/log"; fi
$BIN "${short[@]}" --quiet --export-c "$tmp/7-ae.v2.h" > "$tmp/v" 2> "$tmp/log"
if grep -q '^static inline void m7_ae_predict(' "$tmp/7-ae.v2.h"; then ok "default name of 7-ae.v2.h: m7_ae"
else bad "default name of 7-ae.v2.h: m7_ae" "$tmp/log"; fi
mkdir -p "$tmp/adir"
hostile "--export-c: $tmp/adir is a directory, not a regular file; give the path of a file to write" \
  "${short[@]}" --export-c "$tmp/adir"
hostile "--export-c: cannot create $tmp/no/dir/n.h: No such file or directory (directory missing or not writable?); nothing was run" \
  "${short[@]}" --export-c "$tmp/no/dir/n.h"
hostile "--export-name: the name '9lives' must start with a letter (it prefixes C identifiers)" \
  "${short[@]}" --export-c "$tmp/n.h" --export-name 9lives
hostile "--export-name: the name 'my-net' has '-'; use letters, digits and '_' (it prefixes C identifiers)" \
  "${short[@]}" --export-c "$tmp/n.h" --export-name my-net
hostile "--export-name needs --export-c FILE.h" "${short[@]}" --export-name net
hostile "--export-c exports the autoencoder of --mode anomaly; --mode finetune has no export" \
  --mode finetune --export-c "$tmp/n.h"
if [ ! -e "$tmp/n.h" ] && [ -z "$(find "$tmp" -name '*.h.??????')" ]; then ok "a refused export leaves no file and no temporary"
else bad "a refused export leaves no file and no temporary"; fi

finish
