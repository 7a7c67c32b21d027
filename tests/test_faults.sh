#!/usr/bin/env bash
# tests/test_faults.sh - faults and hostile configurations of build/mnist-train.
#
#  1. SIGKILL while the checkpoint is being written (a real kill: an LD_PRELOAD shim,
#     written and compiled here, sends SIGKILL to the process in the middle of its
#     3rd write() to its temporary "*.tmp"): the previous checkpoint stays byte-identical and
#     loadable; resuming from it ends with the bytes of an uninterrupted run;
#  2. kill -9 from outside at spread-out moments of runs that end with --save over an
#     existing checkpoint: the file is always the old one or the complete new one;
#  3. a NaN/inf loss (learning rate 100) stops the run, exit 1, with a message naming
#     the step and the stage; the last good checkpoint stays intact, and so does an
#     older --summary-json (no empty --trace/--summary-json left behind);
#  4. unwritable paths and a full disk (`ulimit -f` for a real EFBIG; /dev/full refused)
#     for --save, --trace and --summary-json: clear errors, no crash, the previous
#     checkpoint intact, no temporary file left;
#  5. hostile configurations: M = 0, more IPUs/stages than the compiled maximum,
#     splits naming no layer or leaving a stage empty, more stages than layers,
#     replicas x stages beyond the IPUs, learning rate NaN/inf, and each is exit 2
#     with the message expected, nothing written;
#  6. integrity: FIFOs and directories as inputs, hostile checkpoints (NaN with a valid
#     CRC, absurd epoch, escape sequences, a 1 TB sparse file, a swap for a corrupt
#     file during --load), two runs saving to one path, outputs aliased by spelling,
#     links planted at temporary names, devices as --save, full disks on stdout,
#     unwritable --save directories at startup, SIGINT/SIGTERM/SIGHUP, and Valgrind
#     (no definite leak) over the hostile cases that stop at startup.
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
tmps() { compgen -G "$1.*.tmp" > /dev/null; } # PATH: a temporary "<PATH>.XXXXXX.tmp" exists

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
ktmp=$(ls "$tmp"/run.ckpt.*.tmp 2> /dev/null | head -n 1)
if [ "$rc" -eq 137 ] && [ -n "$ktmp" ] && [ -s "$ktmp" ]; then
  ok "killed by SIGKILL mid-write of the checkpoint (exit $rc, $(stat -c %s "$ktmp") bytes of its temporary written)"
else
  bad "the shim should kill the run mid-write (exit $rc, temporary ${ktmp:-none})" "$tmp/kill.log"
fi
rm -f "$tmp"/run.ckpt.*.tmp
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
tmps "$tmp/run.ckpt" && bad "a stale temporary was left after a successful save" || ok "no temporary after a successful save"

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
  rm -f "$tmp"/o.ckpt.*.tmp
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
cmp -s "$tmp/nan.ckpt" "$tmp/e1.ckpt" && ! tmps "$tmp/nan.ckpt" && ok "after the NaN stop the last good checkpoint is intact" ||
  bad "the NaN run changed the last good checkpoint"

# a failed run leaves no partial --summary-json / --trace and keeps an older summary
echo '{"old": 1}' > "$tmp/old.json"
cp "$tmp/old.json" "$tmp/sum.json"
rm -f "$tmp/tr.json"
"$BIN" "${common[@]}" --epochs 3 --learning-rate 100 --summary-json "$tmp/sum.json" --trace "$tmp/tr.json" > "$tmp/nan2.log" 2>&1
rc=$?
left=$(ls "$tmp" | grep -E '^(tr\.json|(sum|tr)\.json\..*tmp)$' | tr '\n' ' ')
if [ "$rc" -eq 1 ] && cmp -s "$tmp/sum.json" "$tmp/old.json" && [ -z "$left" ]; then
  ok "after the NaN stop: the previous --summary-json is intact, no --trace file or temporary left"
else
  bad "after the NaN stop (exit $rc): summary $(wc -c < "$tmp/sum.json") bytes (was 11), left behind: ${left:-nothing}" "$tmp/nan2.log"
fi

# ---- 4. unwritable paths and full disks
expect_log() { # NAME EXPECTED_RC PATTERN LOG RC: exit RC and a line of LOG matching PATTERN (ERE)
  if [ "$5" -eq "$2" ] && grep -qE "$3" "$4"; then ok "$1 (exit $5)"; else bad "$1: exit $5 (expected $2), wanted /$3/" "$4"; fi
}
"$BIN" "${common[@]}" --epochs 1 --save /nonexistent/dir/x.ckpt > "$tmp/o.log" 2>&1
expect_log "--save into a missing directory, at startup" 2 'save: cannot create /nonexistent/dir/x.ckpt: No such file or directory.*nothing was run' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --trace /nonexistent/t.json > "$tmp/o.log" 2>&1
expect_log "--trace into a missing directory" 2 'trace: cannot create /nonexistent/t.json' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --summary-json /nonexistent/s.json > "$tmp/o.log" 2>&1
expect_log "--summary-json into a missing directory" 2 'summary-json: cannot create' "$tmp/o.log" $?
# a device is no output file (refused at startup, tests/test_outputs.sh); the full disk
# of --trace is `ulimit -f` below
"$BIN" "${common[@]}" --epochs 1 --trace /dev/full > "$tmp/o.log" 2>&1
expect_log "--trace /dev/full refused at startup" 2 'trace: /dev/full is a character device, not a regular file.*nothing was run' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --summary-json /dev/full > "$tmp/o.log" 2>&1
expect_log "--summary-json /dev/full refused at startup" 2 'summary-json: /dev/full is a character device, not a regular file' "$tmp/o.log" $?
# a run that succeeds replaces an older summary and trace whole, leaving no temporary
echo '{"old": 1}' > "$tmp/rs.json"
echo '{"old": 2}' > "$tmp/rt.json"
"$BIN" "${common[@]}" --epochs 1 --summary-json "$tmp/rs.json" --trace "$tmp/rt.json" > "$tmp/o.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '"test_accuracy"' "$tmp/rs.json" && grep -q '"traceEvents"' "$tmp/rt.json" &&
  ! tmps "$tmp/rs.json" && ! tmps "$tmp/rt.json"; then
  ok "a good run replaces an older --summary-json and --trace, no temporary left"
else
  bad "a good run (exit $rc) did not replace the older outputs cleanly" "$tmp/o.log"
fi
# --trace to a regular file on a full disk (ulimit -f 2, a 1 KB limit: EFBIG): the older trace stays
cp "$tmp/old.json" "$tmp/ft.json"
( trap '' XFSZ; ulimit -f 2; exec "$BIN" "${common[@]}" --epochs 1 --trace "$tmp/ft.json" ) > "$tmp/o.log" 2>&1
expect_log "--trace on a full disk (ulimit -f 2: 1 KB)" 2 'trace: writing .*ft\.json failed: File too large.*not replaced' "$tmp/o.log" $?
cmp -s "$tmp/ft.json" "$tmp/old.json" && ! tmps "$tmp/ft.json" &&
  ok "after the failed --trace write the older trace is intact, no <path>.tmp left" || bad "the failed --trace write damaged the older trace"
# the summary cannot be created after the trace was opened: the trace temporary goes too
rm -f "$tmp/t2.json"
"$BIN" "${common[@]}" --epochs 1 --trace "$tmp/t2.json" --summary-json /nonexistent/s.json > "$tmp/o.log" 2>&1
expect_log "--summary-json unwritable after --trace opened" 2 'summary-json: cannot create /nonexistent/s.json' "$tmp/o.log" $?
[ ! -e "$tmp/t2.json" ] && ! tmps "$tmp/t2.json" && ok "the unwritable summary left no trace file or temporary" ||
  bad "the unwritable summary left $(ls "$tmp" | grep t2.json)"
"$BIN" "${common[@]}" --epochs 1 --trace "$tmp/same.json" --summary-json "$tmp/same.json" > "$tmp/o.log" 2>&1
expect_log "--trace and --summary-json naming one file" 2 'trace and --summary-json both name .*same\.json' "$tmp/o.log" $?
cp "$tmp/e1.ckpt" "$tmp/fs.ckpt"
( trap '' XFSZ; ulimit -f 64; exec "$BIN" "${common[@]}" --load "$tmp/fs.ckpt" --epochs 2 --save "$tmp/fs.ckpt" ) > "$tmp/o.log" 2>&1
expect_log "--save on a full disk (ulimit -f 64: write fails with EFBIG)" 2 'save: .*(File too large|No space).*disk full' "$tmp/o.log" $?
cmp -s "$tmp/fs.ckpt" "$tmp/e1.ckpt" && ! tmps "$tmp/fs.ckpt" &&
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
hostile "IPUs above the compiled maximum" 'ipus needs an integer in 1\.\.32' --ipus 33
hostile "stages above the compiled maximum" 'stages needs an integer in 1\.\.16' --splits auto --stages 17
hostile "IPUs not a multiple of the IPUs per replica" 'the model is sharded over 2 IPUs per replica, so the IPU count must be a multiple of 2' --ipus 3
hostile "--ipus and --replicas disagree" 'ipus 4 and --replicas 3 disagree' --ipus 4 --replicas 3
hostile "--map with too few IPUs" 'map gives 1 IPU, but the pipeline has 2 stages' --map 0
hostile "--map not a number" "map: mapping: 'x' at character 3 is not a device number" --map 0,x
hostile "--map ending with a comma" 'map: mapping: stage 2 has an empty device at character 5' --map 0,1,
hostile "--map beyond the compiled IPUs" 'stage 1 is on IPU 20; this build has IPUs 0\.\.15' --map 0,20
hostile "more splits than the compiled maximum" 'at most 15 splits' --splits a b c d e f g h i j k l m n o p
hostile "split naming no layer" "unknown layer 'dense999'; the layers of model mlp are" --splits dense999
hostile "split leaving stage 0 empty" 'stage 0 would be empty' --splits flatten
hostile "split leaving a middle stage empty" "stage 1 would be empty: 'dense128' does not come after 'dense128'" --splits dense128 dense128
hostile "splits out of layer order" "stage 1 would be empty: 'dense128' does not come after 'dense64'.*layer order" --splits dense64 dense128
hostile "more stages than layers" '12 stages but the model has only 11 layers' --splits auto --stages 12
hostile "replicas above the compiled maximum" 'replicas needs an integer in 1\.\.' --replicas 9
hostile "replicas x stages beyond the IPUs" '(IPUs|IPUP_MAX_IPUS)' --replicas 8 --splits dense256 dense128 dense64 dense32 logits
hostile "learning rate NaN" 'learning-rate needs a number in \[0, 100\], got .nan.' --learning-rate nan
hostile "learning rate inf" 'learning-rate needs a number' --learning-rate inf
hostile "unknown schedule" "schedule: unknown 'fastest'" --schedule fastest
hostile "unknown runner" "runner: unknown 'gpu'" --runner gpu
hostile "too many samples per step" 'one step needs 4096 samples' --batch-size 1024 --batches-to-accumulate 4
hostile "missing data directory" 'nonexistent.*(cannot open|make data)' --data /nonexistent
hostile "checkpoint of another model" "holds model 'mlp'" --model cnn --load "$tmp/e1.ckpt"

# ---- 6. integrity: hostile files, races, signals (each case names the finding it covers)
# ckedit FILE OFFSET BYTE...: writes the bytes at OFFSET and makes both CRC-32s valid
# again (zlib polynomial): the trainer header's (bytes 64..67, over 0..63) and the
# library state's (the last 4 bytes, over byte 68 up to them), so the reader's value and
# range checks are what refuse.
cat > "$tmp/ckedit.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    static unsigned char b[1 << 22];
    unsigned long c = 0xFFFFFFFFul, t;
    size_t n, i;
    int k, a;
    FILE *f = fopen(argv[1], "rb");
    if (argc < 4 || !f) return 2;
    n = fread(b, 1, sizeof b, f);
    fclose(f);
    for (a = 3; a < argc; a++) b[strtoul(argv[2], NULL, 0) + (size_t)(a - 3)] = (unsigned char)strtoul(argv[a], NULL, 0);
    for (i = 0; i < 64; i++) {
        t = (c ^ b[i]) & 0xFF;
        for (k = 0; k < 8; k++) t = (t & 1) ? 0xEDB88320ul ^ (t >> 1) : t >> 1;
        c = t ^ (c >> 8);
    }
    c ^= 0xFFFFFFFFul;
    for (k = 0; k < 4; k++) b[64 + (size_t)k] = (unsigned char)(c >> (8 * k));
    c = 0xFFFFFFFFul;
    for (i = 68; i + 4 < n; i++) {
        t = (c ^ b[i]) & 0xFF;
        for (k = 0; k < 8; k++) t = (t & 1) ? 0xEDB88320ul ^ (t >> 1) : t >> 1;
        c = t ^ (c >> 8);
    }
    c ^= 0xFFFFFFFFul;
    for (k = 0; k < 4; k++) b[n - 4 + (size_t)k] = (unsigned char)(c >> (8 * k));
    f = fopen(argv[1], "wb");
    return f && fwrite(b, 1, n, f) == n && fclose(f) == 0 ? 0 : 2;
}
CEOF
"$cc" -O1 -o "$tmp/ckedit" "$tmp/ckedit.c" 2> "$tmp/cc.log" || bad "cannot build ckedit" "$tmp/cc.log"
no_run() { ! grep -q 'Test accuracy' "$1"; } # LOG: the run stopped before training

# 1, 10, 14: the IDX reader: a FIFO and a directory as IDX files, test images of another shape
mkdir -p "$tmp/fifo" "$tmp/dird" "$tmp/shape"
cp "$syn"/* "$tmp/fifo/"; cp "$syn"/* "$tmp/dird/"; cp "$syn"/* "$tmp/shape/"
rm -f "$tmp/fifo/train-images-idx3-ubyte"; mkfifo "$tmp/fifo/train-images-idx3-ubyte"
timeout 20 "$BIN" "${base[@]}" --data "$tmp/fifo" > "$tmp/o.log" 2>&1
expect_log "10: a FIFO as IDX file is refused at open, no hang" 2 'train-images-idx3-ubyte: cannot open file: it is a FIFO \(named pipe\), not an IDX file' "$tmp/o.log" $?
rm -f "$tmp/dird/train-labels-idx1-ubyte"; mkdir "$tmp/dird/train-labels-idx1-ubyte"
"$BIN" "${base[@]}" --data "$tmp/dird" > "$tmp/o.log" 2>&1
expect_log "14: a directory as IDX file" 2 'it is a directory, not an IDX file' "$tmp/o.log" $?
grep -q 9223372036854775807 "$tmp/o.log" && bad "14: the directory message still shows a bogus size"
printf '\x00\x00\x00\x38\x00\x00\x00\x0e' | dd of="$tmp/shape/t10k-images-idx3-ubyte" bs=1 seek=8 conv=notrunc status=none
"$BIN" "${base[@]}" --data "$tmp/shape" > "$tmp/o.log" 2>&1
expect_log "14: test images 56x14 named as the test images" 2 'the test images are 56x14 \(rows x cols\), the models take 28x28' "$tmp/o.log" $?

# 14, 17: a sparse IDX file of 100,000,000 images: the allocation fails, the message says what for
mkdir -p "$tmp/big"; cp "$syn"/t10k-* "$tmp/big/"
printf '\x00\x00\x08\x03\x05\xf5\xe1\x00\x00\x00\x00\x1c\x00\x00\x00\x1c' > "$tmp/big/train-images-idx3-ubyte"
printf '\x00\x00\x08\x01\x05\xf5\xe1\x00' > "$tmp/big/train-labels-idx1-ubyte"
if truncate -s $((16 + 100000000 * 784)) "$tmp/big/train-images-idx3-ubyte" 2> /dev/null &&
   truncate -s $((8 + 100000000)) "$tmp/big/train-labels-idx1-ubyte"; then
  "$BIN" "${base[@]}" --data "$tmp/big" > "$tmp/o.log" 2>&1
  expect_log "14: a failed 300 GB allocation names what it was for" 2 'out of host memory: [0-9.]+ MB for 100000000 training and 64 test images' "$tmp/o.log" $?
else
  ok "14: (no sparse files here: the 300 GB allocation case is skipped)"
fi

# 2, 7, 8, 9, 10, 14: hostile checkpoints for --load (CRC made valid where it matters)
cp "$tmp/e1.ckpt" "$tmp/nanv.ckpt"; "$tmp/ckedit" "$tmp/nanv.ckpt" \
  $(( $(grep -boa 'dense256\.w' "$tmp/nanv.ckpt" | head -n 1 | cut -d: -f1) + 28 )) 0 0 0xc0 0x7f # element 2 of dense256.w
"$BIN" "${common[@]}" --epochs 2 --load "$tmp/nanv.ckpt" --save "$tmp/nanv.ckpt" > "$tmp/o.log" 2>&1
expect_log "7: NaN inside a checkpoint with a valid CRC" 2 'load: .*corrupt checkpoint: tensor dense256\.w holds NaN at element 2' "$tmp/o.log" $?
cp "$tmp/e1.ckpt" "$tmp/ep.ckpt"; "$tmp/ckedit" "$tmp/ep.ckpt" 24 0xff 0xff 0xff 0xff
"$BIN" "${common[@]}" --epochs 2 --load "$tmp/ep.ckpt" > "$tmp/o.log" 2>&1
expect_log "8: an absurd epoch field" 2 'header field epoch is 4294967295, above the limit 1000000' "$tmp/o.log" $?
cp "$tmp/e1.ckpt" "$tmp/esc.ckpt"; "$tmp/ckedit" "$tmp/esc.ckpt" 32 0x1b 0x5b 0x32 0x4a 0x07 0
"$BIN" "${common[@]}" --epochs 2 --load "$tmp/esc.ckpt" > "$tmp/o.log" 2>&1
expect_log "14: an escape sequence as model name is refused" 2 'model name field \(offset 32\) holds a byte that is not printable ASCII' "$tmp/o.log" $?
LC_ALL=C grep -q $'\x1b' "$tmp/o.log" && bad "14: the escape sequence reached the terminal"
cp "$tmp/e1.ckpt" "$tmp/sparse.ckpt"
if truncate -s 1T "$tmp/sparse.ckpt" 2> /dev/null || truncate -s 20G "$tmp/sparse.ckpt" 2> /dev/null; then
  timeout 20 "$BIN" "${common[@]}" --epochs 2 --load "$tmp/sparse.ckpt" > "$tmp/o.log" 2>&1
  expect_log "9: a huge sparse --load file is refused from its size (no CRC scan)" 2 'unexpected bytes after the state' "$tmp/o.log" $?
  rm -f "$tmp/sparse.ckpt"
else
  ok "9: (no sparse files here: skipped)"
fi
mkfifo "$tmp/load.fifo"
timeout 20 "$BIN" "${common[@]}" --load "$tmp/load.fifo" > "$tmp/o.log" 2>&1
expect_log "10: a FIFO as --load is refused at open, no hang" 2 'it is a FIFO \(named pipe\), not a checkpoint file' "$tmp/o.log" $?
# 2: a checkpoint swapped for a corrupt one while runs load it: never loaded, never re-saved
cp "$tmp/e1.ckpt" "$tmp/swap-bad.ckpt"; printf '\x55' | dd of="$tmp/swap-bad.ckpt" bs=1 seek=300 conv=notrunc status=none
( for i in $(seq 1 400); do cp "$tmp/e1.ckpt" "$tmp/sw1"; mv "$tmp/sw1" "$tmp/swap.ckpt"
    cp "$tmp/swap-bad.ckpt" "$tmp/sw2"; mv "$tmp/sw2" "$tmp/swap.ckpt"; done ) &
swp=$!
cp "$tmp/e1.ckpt" "$tmp/swap.ckpt"
allgood=1
for i in 1 2 3 4 5 6 7 8 9 10; do
  rm -f "$tmp/swap-out.ckpt"
  "$BIN" "${common[@]}" --epochs 1 --load "$tmp/swap.ckpt" --save "$tmp/swap-out.ckpt" > "$tmp/sw.log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && ! cmp -s "$tmp/swap-out.ckpt" "$tmp/e1.ckpt"; then allgood=0; echo "    run $i: exit 0 with other weights"; fi
  if [ "$rc" -ne 0 ] && [ -e "$tmp/swap-out.ckpt" ]; then allgood=0; echo "    run $i: exit $rc but saved"; fi
done
kill "$swp" 2> /dev/null; wait "$swp" 2> /dev/null
[ "$allgood" = 1 ] && ok "2: a checkpoint swapped for a corrupt one during --load: each run loads the good one or is refused" ||
  bad "2: a swapped checkpoint was loaded and saved again"

# 3: two runs saving to one path: neither touches the other's temporary; the result loads
printf 'another run is writing this temporary\n' > "$tmp/same.ckpt.tmp"
cp "$tmp/same.ckpt.tmp" "$tmp/foreign.tmp.copy"
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/same.ckpt" > "$tmp/o.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$tmp/same.ckpt.tmp" "$tmp/foreign.tmp.copy" && cmp -s "$tmp/same.ckpt" "$tmp/e1.ckpt"; then
  ok "3: a save leaves another run's temporary of the same path alone"
else bad "3: the save used or damaged another run's temporary (exit $rc)" "$tmp/o.log"; fi
"$BIN" "${common[@]}" --epochs 1 --seed 6 --save "$tmp/s6.ckpt" > /dev/null 2>&1
allgood=1
for i in 1 2 3; do
  "$BIN" "${common[@]}" --epochs 1 --save "$tmp/same.ckpt" > /dev/null 2>&1 & p1=$!
  "$BIN" "${common[@]}" --epochs 1 --seed 6 --save "$tmp/same.ckpt" > /dev/null 2>&1 & p2=$!
  wait "$p1"; r1=$?; wait "$p2"; r2=$?
  if [ "$r1" -ne 0 ] || [ "$r2" -ne 0 ] || ! { cmp -s "$tmp/same.ckpt" "$tmp/e1.ckpt" || cmp -s "$tmp/same.ckpt" "$tmp/s6.ckpt"; }; then allgood=0; fi
done
[ "$allgood" = 1 ] && ok "3: two concurrent runs saving to one path: both succeed, the file is one run's whole checkpoint" ||
  bad "3: concurrent saves to one path left a broken checkpoint"
rm -f "$tmp/same.ckpt.tmp"

# 4: outputs compared by identity, not spelling
mkdir -p "$tmp/out"; cp "$tmp/e1.ckpt" "$tmp/out/a.ckpt"
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/out/a.ckpt" --summary-json "$tmp/out/./a.ckpt" > "$tmp/o.log" 2>&1
expect_log "4: --save out/a.ckpt --summary-json out/./a.ckpt" 2 'save and --summary-json both name one file' "$tmp/o.log" $?
cmp -s "$tmp/out/a.ckpt" "$tmp/e1.ckpt" && no_run "$tmp/o.log" && ok "4: ... refused at startup, the checkpoint untouched" ||
  bad "4: the aliased outputs damaged the checkpoint"
rm -f "$tmp/out/n.ckpt"
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/out/n.ckpt" --trace "$tmp/out/../out/n.ckpt" > "$tmp/o.log" 2>&1
expect_log "4: one new file spelled two ways" 2 'save and --trace both name one file' "$tmp/o.log" $?
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/run.tmp" --trace "$tmp/run" > "$tmp/o.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q traceEvents "$tmp/run" && [ "$(head -c 8 "$tmp/run.tmp")" = IPUPCKPT ]; then
  ok "4: --save run.tmp --trace run: both outputs written"
else bad "4: --save run.tmp --trace run (exit $rc) lost an output" "$tmp/o.log"; fi

# 5: links planted at the old temporary names are never followed
printf 'victim one\n' > "$tmp/victim1"; printf 'victim two\n' > "$tmp/victim2"
cp "$tmp/victim1" "$tmp/v1.copy"; cp "$tmp/victim2" "$tmp/v2.copy"
ln -s "$tmp/victim1" "$tmp/l.ckpt.tmp"; ln -s "$tmp/victim2" "$tmp/l.json.tmp"
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/l.ckpt" --summary-json "$tmp/l.json" > "$tmp/o.log" 2>&1
r1=$?
"$BIN" "${common[@]}" --epochs 3 --learning-rate 100 --save "$tmp/l.ckpt" --summary-json "$tmp/l.json" > "$tmp/o2.log" 2>&1
r2=$?
if [ "$r1" -eq 0 ] && [ "$r2" -eq 1 ] && cmp -s "$tmp/victim1" "$tmp/v1.copy" && cmp -s "$tmp/victim2" "$tmp/v2.copy" &&
   [ -L "$tmp/l.ckpt.tmp" ]; then
  ok "5: links at <path>.tmp: a good and a failed run leave their targets byte-identical"
else bad "5: a planted link was followed (exits $r1, $r2)" "$tmp/o.log"; fi

# 6: --save onto a device is refused at startup, the device untouched
for dev in /dev/null /dev/full; do
  "$BIN" "${common[@]}" --epochs 1 --save "$dev" > "$tmp/o.log" 2>&1
  rc=$?
  if [ "$rc" -eq 2 ] && grep -q "save: $dev is a character device, not a regular file" "$tmp/o.log" && no_run "$tmp/o.log" &&
     [ -c "$dev" ]; then ok "6: --save $dev refused at startup, still a device"
  else bad "6: --save $dev (exit $rc)" "$tmp/o.log"; fi
done

# 11: a full disk on stdout is an error
"$BIN" "${common[@]}" --epochs 1 > /dev/full 2> "$tmp/o.log"
expect_log "11: mnist-train > /dev/full" 2 'writing the standard output failed: No space left on device' "$tmp/o.log" $?
SCHED=build/ipupipe-sched
if [ -x "$SCHED" ]; then
  allgood=1
  for fmt in grid steps csv json trace svg; do
    "$SCHED" -S 4 -M 8 --format "$fmt" > /dev/full 2> "$tmp/o.log"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q 'writing the standard output failed' "$tmp/o.log" || { allgood=0; echo "    --format $fmt: exit $rc"; }
  done
  [ "$allgood" = 1 ] && ok "11: ipupipe-sched > /dev/full: exit 2 with a message in every format" || bad "11: ipupipe-sched > /dev/full"
  mkfifo "$tmp/sched.fifo"
  timeout 20 "$SCHED" --check "$tmp/sched.fifo" > /dev/null 2> "$tmp/o.log"
  expect_log "10: ipupipe-sched --check FIFO, no hang" 2 'it is a FIFO \(named pipe\), not a schedule CSV file' "$tmp/o.log" $?
  "$SCHED" --check "$tmp" > /dev/null 2> "$tmp/o.log"
  expect_log "14: ipupipe-sched --check DIR" 2 'it is a directory, not a schedule CSV file' "$tmp/o.log" $?
  "$SCHED" -S 2 -M 2 --schedule gpipe --format csv > "$tmp/plain.csv" 2> /dev/null
  { printf '\xef\xbb\xbf'; cat "$tmp/plain.csv"; } > "$tmp/bom.csv"
  "$SCHED" --check "$tmp/bom.csv" > "$tmp/o.log" 2>&1
  expect_log "14: a CSV with a UTF-8 BOM is read" 0 'VALID' "$tmp/o.log" $?
else
  bad "$SCHED is missing (make $SCHED)"
fi

# 12: --save into a missing or unwritable directory fails at startup
mkdir -p "$tmp/ro"; chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
  "$BIN" "${common[@]}" --epochs 1 --save "$tmp/ro/x.ckpt" > "$tmp/o.log" 2>&1
  expect_log "12: --save into an unwritable directory, at startup" 2 'save: cannot create .*Permission denied' "$tmp/o.log" $?
fi
"$BIN" "${common[@]}" --epochs 1 --save /nonexistent/dir/x.ckpt > "$tmp/o.log" 2>&1
rc=$?
no_run "$tmp/o.log" && [ "$rc" -eq 2 ] && ok "12: --save into a missing directory stops before training" ||
  bad "12: --save into a missing directory trained first (exit $rc)" "$tmp/o.log"
chmod 755 "$tmp/ro"

# 13: SIGINT/SIGTERM/SIGHUP: stop at a step boundary, temporaries removed, older outputs intact
# (job control on: a background job of a non-interactive shell starts with SIGINT
# ignored, and an ignored signal stays ignored, as under nohup)
set -m
n=2
for sig in INT TERM HUP; do
  echo '{"old": 3}' > "$tmp/sig.json"; cp "$tmp/sig.json" "$tmp/sig.old"; rm -f "$tmp/sig.ckpt"
  "$BIN" "${common[@]}" --epochs 100000 --save "$tmp/sig.ckpt" --summary-json "$tmp/sig.json" --trace "$tmp/sig.trace" \
    > "$tmp/sig.log" 2>&1 &
  pid=$!
  for i in $(seq 1 200); do tmps "$tmp/sig.json" && break; sleep 0.05; done
  sleep 0.3
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  if [ "$rc" -eq $((128 + n)) ] && grep -qE "interrupted by SIG$sig at step [0-9]+ \(epoch [0-9]+\)" "$tmp/sig.log" &&
     cmp -s "$tmp/sig.json" "$tmp/sig.old" && [ ! -e "$tmp/sig.ckpt" ] && [ ! -e "$tmp/sig.trace" ] &&
     ! tmps "$tmp/sig.json" && ! tmps "$tmp/sig.trace"; then
    ok "13: SIG$sig: exit $rc, $(grep -o 'at step [0-9]*' "$tmp/sig.log"), no temporary left, the older summary intact"
  else
    bad "13: SIG$sig: exit $rc (wanted $((128 + n))), left: $(ls "$tmp" | grep -E '^sig\..*tmp$' | tr '\n' ' ')" "$tmp/sig.log"
  fi
  [ "$sig" = INT ] && n=15; [ "$sig" = TERM ] && n=1
done
set +m

# 14: --momentum takes its documented maximum
"$BIN" "${common[@]}" --epochs 1 --optimizer momentum --momentum 0.9999 > "$tmp/o.log" 2>&1
expect_log "14: --momentum 0.9999 is inside [0, 0.9999]" 0 'Test accuracy' "$tmp/o.log" $?

# 17: Valgrind on every hostile trainer case that stops at startup: no "definitely lost"
# (about 15 runs of under a second each; a valgrind build of the trainer is made here:
# the gcc build may use AVX-512, which Valgrind does not decode)
if command -v valgrind > /dev/null; then
  if "$cc" -std=c11 -O1 -g -mavx2 -mfma -I. -Iexamples/common -Iexamples/mnist examples/mnist/mnist-train.c -o "$tmp/mnist-train-vg" -lm -lpthread 2> "$tmp/cc.log"; then
    vgbad=""
    vgn=0
    vgcase() { # ARGS...: valgrind reports no definite leak and no error
      vgn=$((vgn + 1))
      valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 "$tmp/mnist-train-vg" "$@" \
        > /dev/null 2> "$tmp/vg.log"
      [ $? -eq 99 ] && { vgbad="$vgbad [$*]"; head -n 20 "$tmp/vg.log"; }
    }
    if [ -e "$tmp/big/train-images-idx3-ubyte" ]; then # the out-of-memory path itself, reached under valgrind
      vgcase "${base[@]}" --data "$tmp/big"
      if grep -q 'out of host memory' "$tmp/vg.log" && ! grep -q 'definitely lost' "$tmp/vg.log"; then
        ok "17: the out-of-memory path (100,000,000 images) loses nothing under valgrind"
      else
        bad "17: the out-of-memory path was not reached or lost memory: $(grep -m2 -E 'out of host|definitely' "$tmp/vg.log")"
      fi
    fi
    vgcase "${base[@]}" --data "$tmp/dird"
    vgcase "${base[@]}" --data "$tmp/shape"
    vgcase "${base[@]}" --data "$tmp/fifo"
    vgcase "${common[@]}" --epochs 2 --load "$tmp/nanv.ckpt"
    vgcase "${common[@]}" --epochs 2 --load "$tmp/ep.ckpt"
    vgcase "${common[@]}" --epochs 2 --load "$tmp/esc.ckpt"
    vgcase "${common[@]}" --epochs 2 --load "$tmp/load.fifo"
    vgcase "${common[@]}" --epochs 2 --load "$tmp/swap-bad.ckpt"
    vgcase "${common[@]}" --epochs 1 --save /dev/null
    vgcase "${common[@]}" --epochs 1 --save "$tmp/out/a.ckpt" --summary-json "$tmp/out/./a.ckpt"
    vgcase "${common[@]}" --epochs 1 --save /nonexistent/dir/x.ckpt
    vgcase "${common[@]}" --epochs 1 --trace "$tmp/t.json" --summary-json /nonexistent/s.json
    vgcase "${common[@]}" --epochs 3 --load "$tmp/e1.ckpt" --batch-size 4
    vgcase "${base[@]}" --replicas 8 --splits dense256 dense128 dense64 dense32 logits
    vgcase "${common[@]}" --epochs 3 --learning-rate 100 --summary-json "$tmp/vgs.json"
    [ -z "$vgbad" ] && ok "17: valgrind: no definite leak in $vgn hostile trainer runs" || bad "17: valgrind found leaks in:$vgbad"
  else
    bad "cannot build the valgrind trainer" "$tmp/cc.log"
  fi
else
  bad "valgrind is not installed (.ci/deps.sh test installs it)"
fi

finish
