#!/usr/bin/env bash
# tests/test_faults.sh - faults and hostile configurations of build/mnist-train.
#
#  1. SIGKILL while the checkpoint is being written (a real kill: an LD_PRELOAD shim,
#     written and compiled here, sends SIGKILL to the process in the middle of its
#     3rd write() to "<path>.tmp"): the previous checkpoint stays byte-identical and
#     loadable; resuming from it ends with the bytes of an uninterrupted run;
#  2. kill -9 from outside at spread-out moments of runs that end with --save over an
#     existing checkpoint: the file is always the old one or the complete new one;
#  3. a NaN/inf loss (learning rate 100) stops the run, exit 1, with a message naming
#     the step and the stage; the last good checkpoint stays intact, and so does an
#     older --summary-json (no empty --trace/--summary-json left behind);
#  4. unwritable paths and a full disk (/dev/full, and `ulimit -f` for a real EFBIG)
#     for --save, --trace and --summary-json: clear errors, no crash, the previous
#     checkpoint intact, no temporary file left;
#  5. hostile configurations: M = 0, more IPUs/stages than the compiled maximum,
#     splits naming no layer or leaving a stage empty, more stages than layers,
#     replicas x stages beyond the IPUs, learning rate NaN/inf, and each is exit 2
#     with the message expected, nothing written.
# Synthetic IDX files are written here (tests/lib.sh: no network, no data/). Ends with
# `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
need_bin "$BIN"
make_tmp faults
syn=$tmp/syn
gen_syn "$syn" 256 64
base=(--data "$syn" --quiet --seed 5 --batch-size 8 --batches-to-accumulate 4 --repeat-count 2)
common=("${base[@]}" --splits dense128 dense32)

# ---- the kill shim: SIGKILL in the middle of the Nth write() to a "*.tmp" file
cc=${CC:-gcc}
cat > "$tmp/killwrite.c" <<'CEOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static long n_writes;
ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    char link[64], target[4096];
    ssize_t k;
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    k = readlink(link, target, sizeof target - 1);
    if (k > 4) {
        target[k] = 0;
        if (strcmp(target + k - 4, ".tmp") == 0) {
            const char *at = getenv("KILL_AT_WRITE");
            if (++n_writes >= (at ? atol(at) : 1)) {
                real(fd, buf, n / 2); /* half of this write reaches the file */
                kill(getpid(), SIGKILL);
            }
        }
    }
    return real(fd, buf, n);
}
CEOF
if ! "$cc" -shared -fPIC -O1 -o "$tmp/killwrite.so" "$tmp/killwrite.c" -ldl 2> "$tmp/cc.log"; then
  bad "cannot build the kill shim" "$tmp/cc.log"
fi

# ---- 1. SIGKILL during the checkpoint write; resume == uninterrupted
"$BIN" "${common[@]}" --epochs 3 --save "$tmp/full.ckpt" > "$tmp/full.log" 2>&1 || bad "uninterrupted 3-epoch run" "$tmp/full.log"
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/run.ckpt" > "$tmp/e1.log" 2>&1 || bad "1-epoch run" "$tmp/e1.log"
cp "$tmp/run.ckpt" "$tmp/e1.ckpt"
{ KILL_AT_WRITE=3 LD_PRELOAD="$tmp/killwrite.so" "$BIN" "${common[@]}" --load "$tmp/run.ckpt" --epochs 2 \
  --save "$tmp/run.ckpt" > "$tmp/kill.log" 2>&1; } 2> /dev/null
rc=$?
if [ "$rc" -eq 137 ] && [ -s "$tmp/run.ckpt.tmp" ]; then
  ok "killed by SIGKILL mid-write of the checkpoint (exit $rc, $(stat -c %s "$tmp/run.ckpt.tmp") bytes of <path>.tmp written)"
else
  bad "the shim should kill the run mid-write (exit $rc, tmp $(stat -c %s "$tmp/run.ckpt.tmp" 2>/dev/null || echo none))" "$tmp/kill.log"
fi
if cmp -s "$tmp/run.ckpt" "$tmp/e1.ckpt"; then ok "after the kill the previous checkpoint is byte-identical"
else bad "after the kill the previous checkpoint changed"; fi
if "$BIN" "${common[@]}" --load "$tmp/run.ckpt" --epochs 2 --save "$tmp/run.ckpt" > "$tmp/r2.log" 2>&1 &&
   "$BIN" "${common[@]}" --load "$tmp/run.ckpt" --epochs 3 --save "$tmp/run.ckpt" > "$tmp/r3.log" 2>&1; then
  ok "the surviving checkpoint loads and the run resumes to epoch 3"
else
  bad "resuming from the surviving checkpoint failed" "$tmp/r2.log"
fi
if cmp -s "$tmp/run.ckpt" "$tmp/full.ckpt"; then ok "killed + resumed run ends bit-identical to the uninterrupted run"
else bad "killed + resumed run differs from the uninterrupted run"; fi
[ -e "$tmp/run.ckpt.tmp" ] && bad "a stale <path>.tmp was left after a successful save" || ok "no <path>.tmp after a successful save"

# kill at every write of the save (1st, middle, last but one): the old file survives each time
nw=$(( ($(stat -c %s "$tmp/e1.ckpt") + 8191) / 8192 ))
allgood=1
for at in 1 $(( (nw + 1) / 2 )) $(( nw > 1 ? nw - 1 : 1 )); do
  cp "$tmp/e1.ckpt" "$tmp/k.ckpt"
  { KILL_AT_WRITE=$at LD_PRELOAD="$tmp/killwrite.so" "$BIN" "${common[@]}" --load "$tmp/k.ckpt" --epochs 2 \
    --save "$tmp/k.ckpt" > "$tmp/k.log" 2>&1; } 2> /dev/null
  rc=$?
  if [ "$rc" -ne 137 ] || ! cmp -s "$tmp/k.ckpt" "$tmp/e1.ckpt"; then allgood=0; echo "    kill at write $at: exit $rc"; fi
done
[ "$allgood" = 1 ] && ok "SIGKILL at write 1, $(( (nw + 1) / 2 )) and $(( nw > 1 ? nw - 1 : 1 )) of $nw: previous checkpoint intact each time" ||
  bad "a kill at some write damaged the previous checkpoint"

# ---- 2. kill -9 from outside at spread-out moments (the save may or may not have happened)
"$BIN" "${common[@]}" --epochs 2 --save "$tmp/two.ckpt" > /dev/null 2>&1
t0=$(date +%s%N)
"$BIN" "${common[@]}" --epochs 2 --save "$tmp/x.ckpt" > /dev/null 2>&1
t1=$(date +%s%N)
dur=$(( (t1 - t0) / 1000 ))   # microseconds of one run
states=""
allgood=1
for frac in 10 30 50 70 85 95 100 110; do
  cp "$tmp/e1.ckpt" "$tmp/o.ckpt"
  "$BIN" "${common[@]}" --load "$tmp/o.ckpt" --epochs 2 --save "$tmp/o.ckpt" > /dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v d="$dur" -v f="$frac" 'BEGIN { printf "%.6f", d * f / 100 / 1e6 }')"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  if cmp -s "$tmp/o.ckpt" "$tmp/e1.ckpt"; then states="$states old"
  elif cmp -s "$tmp/o.ckpt" "$tmp/two.ckpt"; then states="$states new"
  else allgood=0; states="$states BROKEN"; fi
  rm -f "$tmp/o.ckpt.tmp"
done
[ "$allgood" = 1 ] && ok "kill -9 at 10..110% of a run: checkpoint always old or complete new ($states )" ||
  bad "kill -9 left a checkpoint that is neither old nor new:$states"

# ---- 3. NaN / inf loss
cp "$tmp/e1.ckpt" "$tmp/nan.ckpt"
"$BIN" "${common[@]}" --load "$tmp/nan.ckpt" --epochs 3 --learning-rate 100 --save "$tmp/nan.ckpt" > "$tmp/nan.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -qE 'step [0-9]+, stage [0-9]+' "$tmp/nan.log" && grep -q 'NaN or infinite' "$tmp/nan.log"; then
  ok "NaN/inf loss stops the run (exit 1): $(grep -o 'step [0-9]*, stage [0-9]*' "$tmp/nan.log" | head -n 1)"
else
  bad "NaN/inf loss: exit $rc, expected 1 with step and stage named" "$tmp/nan.log"
fi
cmp -s "$tmp/nan.ckpt" "$tmp/e1.ckpt" && [ ! -e "$tmp/nan.ckpt.tmp" ] && ok "after the NaN stop the last good checkpoint is intact" ||
  bad "the NaN run changed the last good checkpoint"

# a failed run leaves no partial --summary-json / --trace and keeps an older summary
echo '{"old": 1}' > "$tmp/old.json"
cp "$tmp/old.json" "$tmp/sum.json"
rm -f "$tmp/tr.json"
"$BIN" "${common[@]}" --epochs 3 --learning-rate 100 --summary-json "$tmp/sum.json" --trace "$tmp/tr.json" > "$tmp/nan2.log" 2>&1
rc=$?
left=$(ls "$tmp" | grep -E '^(tr\.json|sum\.json\.tmp|tr\.json\.tmp)$' | tr '\n' ' ')
if [ "$rc" -eq 1 ] && cmp -s "$tmp/sum.json" "$tmp/old.json" && [ -z "$left" ]; then
  ok "after the NaN stop: the previous --summary-json is intact, no --trace file or temporary left"
else
  bad "after the NaN stop (exit $rc): summary $(wc -c < "$tmp/sum.json") bytes (was 11), left behind: ${left:-nothing}" "$tmp/nan2.log"
fi

# ---- 4. unwritable paths and full disks
expect() { # NAME EXPECTED_RC PATTERN LOG
  if [ "$5" -eq "$2" ] && grep -qE "$3" "$4"; then ok "$1 (exit $5)"; else bad "$1: exit $5 (expected $2), wanted /$3/" "$4"; fi
}
"$BIN" "${common[@]}" --epochs 1 --save /nonexistent/dir/x.ckpt > "$tmp/o.log" 2>&1
expect "--save into a missing directory" 2 'cannot create the temporary file.*No such file or directory' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --trace /nonexistent/t.json > "$tmp/o.log" 2>&1
expect "--trace into a missing directory" 2 'trace: cannot create /nonexistent/t.json' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --summary-json /nonexistent/s.json > "$tmp/o.log" 2>&1
expect "--summary-json into a missing directory" 2 'summary-json: cannot create' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --trace /dev/full > "$tmp/o.log" 2>&1
expect "--trace on a full disk (/dev/full)" 2 'trace: writing /dev/full failed' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --summary-json /dev/full > "$tmp/o.log" 2>&1
expect "--summary-json on a full disk (/dev/full)" 2 'summary-json: writing /dev/full failed' "$tmp/o.log" $?
# a run that succeeds replaces an older summary and trace whole, leaving no temporary
echo '{"old": 1}' > "$tmp/rs.json"
echo '{"old": 2}' > "$tmp/rt.json"
"$BIN" "${common[@]}" --epochs 1 --summary-json "$tmp/rs.json" --trace "$tmp/rt.json" > "$tmp/o.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '"test_accuracy"' "$tmp/rs.json" && grep -q '"traceEvents"' "$tmp/rt.json" &&
  [ ! -e "$tmp/rs.json.tmp" ] && [ ! -e "$tmp/rt.json.tmp" ]; then
  ok "a good run replaces an older --summary-json and --trace, no temporary left"
else
  bad "a good run (exit $rc) did not replace the older outputs cleanly" "$tmp/o.log"
fi
# --trace to a regular file on a full disk (ulimit -f 2, a 1 KB limit: EFBIG): the older trace stays
cp "$tmp/old.json" "$tmp/ft.json"
( trap '' XFSZ; ulimit -f 2; exec "$BIN" "${common[@]}" --epochs 1 --trace "$tmp/ft.json" ) > "$tmp/o.log" 2>&1
expect "--trace on a full disk (ulimit -f 2: 1 KB)" 2 'trace: writing .*ft\.json failed: File too large.*not replaced' "$tmp/o.log" $?
cmp -s "$tmp/ft.json" "$tmp/old.json" && [ ! -e "$tmp/ft.json.tmp" ] &&
  ok "after the failed --trace write the older trace is intact, no <path>.tmp left" || bad "the failed --trace write damaged the older trace"
# the summary cannot be created after the trace was opened: the trace temporary goes too
rm -f "$tmp/t2.json"
"$BIN" "${common[@]}" --epochs 1 --trace "$tmp/t2.json" --summary-json /nonexistent/s.json > "$tmp/o.log" 2>&1
expect "--summary-json unwritable after --trace opened" 2 'summary-json: cannot create /nonexistent/s.json' "$tmp/o.log" $?
[ ! -e "$tmp/t2.json" ] && [ ! -e "$tmp/t2.json.tmp" ] && ok "the unwritable summary left no trace file or temporary" ||
  bad "the unwritable summary left $(ls "$tmp" | grep t2.json)"
"$BIN" "${common[@]}" --epochs 1 --trace "$tmp/same.json" --summary-json "$tmp/same.json" > "$tmp/o.log" 2>&1
expect "--trace and --summary-json naming one file" 2 'trace and --summary-json both name .*same\.json' "$tmp/o.log" $?
cp "$tmp/e1.ckpt" "$tmp/fs.ckpt"
( trap '' XFSZ; ulimit -f 64; exec "$BIN" "${common[@]}" --load "$tmp/fs.ckpt" --epochs 2 --save "$tmp/fs.ckpt" ) > "$tmp/o.log" 2>&1
expect "--save on a full disk (ulimit -f 64: write fails with EFBIG)" 2 'save: .*(File too large|No space).*disk full' "$tmp/o.log" $?
cmp -s "$tmp/fs.ckpt" "$tmp/e1.ckpt" && [ ! -e "$tmp/fs.ckpt.tmp" ] &&
  ok "after the failed save the previous checkpoint is intact, no <path>.tmp left" || bad "the failed save damaged the previous checkpoint"

# ---- 5. hostile configurations: exit 2, the message, nothing written
hostile() { # NAME PATTERN ARGS...
  local name=$1 pat=$2
  shift 2
  rm -f "$tmp/h.ckpt" "$tmp/h.json"
  "$BIN" "${base[@]}" --epochs 1 --save "$tmp/h.ckpt" --summary-json "$tmp/h.json" "$@" > "$tmp/h.log" 2>&1
  local rc=$?
  if [ "$rc" -eq 2 ] && grep -qE "$pat" "$tmp/h.log" && [ ! -e "$tmp/h.ckpt" ] && [ ! -e "$tmp/h.json" ]; then ok "config: $name"
  else bad "config: $name: exit $rc, wanted 2 and /$pat/, no output files" "$tmp/h.log"; fi
}
hostile "M = 0" 'batches-to-accumulate needs an integer in 1\.\.' --batches-to-accumulate 0
hostile "batch size 0" 'batch-size needs an integer in 1\.\.' --batch-size 0
hostile "IPUs above the compiled maximum" 'ipus needs an integer in 1\.\.16' --splits auto --ipus 17
hostile "more splits than the compiled maximum" 'at most 15 splits' --splits a b c d e f g h i j k l m n o p
hostile "split naming no layer" "unknown layer 'dense999'; the layers of model mlp are" --splits dense999
hostile "split leaving stage 0 empty" 'stage 0 would be empty' --splits flatten
hostile "split leaving a middle stage empty" "stage 1 would be empty: 'dense128' does not come after 'dense128'" --splits dense128 dense128
hostile "splits out of layer order" "stage 1 would be empty: 'dense128' does not come after 'dense64'.*layer order" --splits dense64 dense128
hostile "more stages (IPUs) than layers" '12 IPUs but the model has only 11 layers' --splits auto --ipus 12
hostile "replicas above the compiled maximum" 'replicas needs an integer in 1\.\.' --replicas 9
hostile "replicas x stages beyond the IPUs" '(IPUs|IPUP_MAX_IPUS)' --replicas 8 --splits dense256 dense128 dense64 dense32 logits
hostile "learning rate NaN" 'learning-rate needs a number in \[0, 100\], got .nan.' --learning-rate nan
hostile "learning rate inf" 'learning-rate needs a number' --learning-rate inf
hostile "unknown schedule" "schedule: unknown 'fastest'" --schedule fastest
hostile "unknown runner" "runner: unknown 'gpu'" --runner gpu
hostile "too many samples per step" 'one step needs 4096 samples' --batch-size 1024 --batches-to-accumulate 4
hostile "missing data directory" 'nonexistent.*(cannot open|make data)' --data /nonexistent
hostile "checkpoint of another model" "holds model 'mlp'" --model cnn --load "$tmp/e1.ckpt"

finish
