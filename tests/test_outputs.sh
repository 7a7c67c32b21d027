#!/usr/bin/env bash
# tests/test_outputs.sh - a program's outputs against its inputs, outputs that are not
# regular files, empty output paths, and signals during I/O, in every tool that writes
# files (build/mnist-train, build/sensor-demo, build/ipupipe-plan, build/mnist-train-mpi;
# examples/common/ex_outfile.h's ex_files_check is the one rule they share):
#  1. an output naming a file the run reads (--load, an IDX file of --data), however
#     spelled (./, ../, a hard link, a symbolic link), is refused at startup with a
#     message naming both options, the input untouched; --save over --load (resuming
#     in place) stays allowed;
#  2. an output that exists and is not a regular file (a FIFO, a directory, /dev/null,
#     /dev/full) is refused at startup, without blocking;
#  3. an empty output path ('', --save=) is refused before any work;
#  4. SIGTERM and SIGINT end a run whose standard output is blocked on a full pipe
#     nobody reads, with the usual message and exit code (a helper compiled here keeps
#     the pipe full);
#  5. SIGTERM while the checkpoint is synced (an LD_PRELOAD shim raises it inside
#     fsync): the outputs are complete, the checkpoint equals an uninterrupted run's,
#     no temporary is left, and the run exits 143 saying it was interrupted;
#  6. mnist-train-mpi: every output option, both spellings, is written by rank 0 only
#     (ranks in separate working directories), and its messages say "mnist-train-mpi:".
# Ends with `N passed, N failed`; exits non-zero on any failure.
. "$(dirname "$0")/lib.sh"
BIN=build/mnist-train
SENSOR=build/sensor-demo
PLAN=build/ipupipe-plan
need_bin "$BIN"
need_bin "$SENSOR"
need_bin "$PLAN"
make_tmp outputs
syn=$tmp/syn
gen_syn "$syn" 256 64
common=(--data "$syn" --quiet --seed 5 --batch-size 8 --batches-to-accumulate 4 --repeat-count 2)
tmps() { compgen -G "$1.*.tmp" > /dev/null; } # PATH: a temporary "<PATH>.XXXXXX.tmp" exists
# refused_rc CODE NAME PATTERN CMD...: exit CODE within 30 s (SIGKILL 5 s after a SIGTERM
# it ignores), stderr matching PATTERN (ERE), no training; refused: CODE 2
refused_rc() {
  local code=$1 name=$2 want=$3 rc
  shift 3
  timeout -k 5 30 "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ "$rc" -eq "$code" ] && grep -qE -- "$want" "$tmp/err" && ! grep -qE 'Test accuracy|FNV-1a|^#define' "$tmp/out"
  then ok "$name (exit $rc: $(head -c 150 "$tmp/err"))"
  else bad "$name: exit $rc (wanted $code and /$want/)" "$tmp/err"; fi
}
refused() { refused_rc 2 "$@"; }

# ---- 1. outputs against inputs
"$BIN" "${common[@]}" --epochs 1 --save "$tmp/run.ckpt" > "$tmp/o.log" 2>&1 || give_up "a first run" "$tmp/o.log"
cp "$tmp/run.ckpt" "$tmp/run.orig"
cp -r "$syn" "$tmp/syn.orig"
# kept NAME PATTERN CMD...: refused, and the checkpoint and the data byte-identical after
# it (put back when not, so that one failure does not spread to the next case)
kept() {
  refused "$@"
  if cmp -s "$tmp/run.ckpt" "$tmp/run.orig" && diff -r "$syn" "$tmp/syn.orig" > /dev/null; then
    ok "$1: the checkpoint and the data are as they were"
  else
    bad "$1: an input changed: $(diff -rq "$syn" "$tmp/syn.orig"; cmp "$tmp/run.ckpt" "$tmp/run.orig")"
    rm -rf "$syn" && cp -r "$tmp/syn.orig" "$syn" && cp "$tmp/run.orig" "$tmp/run.ckpt"
  fi
}
kept "--summary-json onto the --load checkpoint (./ spelling)" \
  "--summary-json .*--load|--load .*--summary-json" "$BIN" "${common[@]}" --epochs 2 --load "$tmp/run.ckpt" \
  --summary-json "$tmp/./run.ckpt"
kept "--trace onto a label file of --data" "--trace .*--data|--data .*--trace" \
  "$BIN" "${common[@]}" --epochs 1 --trace "$syn/t10k-labels-idx1-ubyte"
kept "--export-c onto an image file of --data, spelled with ../" "--export-c .*--data|--data .*--export-c" \
  "$BIN" "${common[@]}" --epochs 1 --export-c "$syn/../syn/train-images-idx3-ubyte"
kept "--save onto a data file (--save=)" "--save .*--data|--data .*--save" \
  "$BIN" "${common[@]}" --epochs 1 --save="$syn/train-labels-idx1-ubyte"
ln "$tmp/run.ckpt" "$tmp/hard.json"
kept "--summary-json a hard link of the --load checkpoint" "--summary-json .*--load|--load .*--summary-json" \
  "$BIN" "${common[@]}" --epochs 2 --load "$tmp/run.ckpt" --summary-json "$tmp/hard.json"
ln -s "$syn/train-images-idx3-ubyte" "$tmp/link.json"
kept "--trace a symbolic link to a data file" "--trace .*--data|--data .*--trace" \
  "$BIN" "${common[@]}" --epochs 1 --trace "$tmp/link.json"
"$BIN" "${common[@]}" --epochs 2 --load "$tmp/run.ckpt" --save "$tmp/./run.ckpt" > "$tmp/o.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && ! cmp -s "$tmp/run.ckpt" "$tmp/run.orig"; then ok "--save over --load (resuming in place) still runs"
else bad "--save over --load: exit $rc" "$tmp/o.log"; fi

# ---- 2. outputs that are not regular files
mkfifo "$tmp/fifo"
mkdir "$tmp/adir"
for flag in --save --trace --summary-json --export-c; do
  refused "mnist-train $flag FIFO: refused, no hang" "$flag: .*fifo is a FIFO \(named pipe\), not a regular file" \
    "$BIN" "${common[@]}" --epochs 1 "$flag" "$tmp/fifo"
  refused "mnist-train $flag DIR" "$flag: .*adir is a directory, not a regular file" \
    "$BIN" "${common[@]}" --epochs 1 "$flag" "$tmp/adir"
  refused "mnist-train $flag /dev/null" "$flag: /dev/null is a character device, not a regular file" \
    "$BIN" "${common[@]}" --epochs 1 "$flag" /dev/null
done
refused "mnist-train --trace=/dev/full" "--trace: /dev/full is a character device, not a regular file" \
  "$BIN" "${common[@]}" --epochs 1 --trace=/dev/full
short=(--mode anomaly --steps 40 --train 256 --test 16)
refused "sensor-demo --export-c FIFO: refused, no hang" "--export-c: .*fifo is a FIFO \(named pipe\), not a regular file" \
  "$SENSOR" "${short[@]}" --export-c "$tmp/fifo"
refused "sensor-demo --export-c /dev/null" "--export-c: /dev/null is a character device, not a regular file" \
  "$SENSOR" "${short[@]}" --export-c /dev/null
refused_rc 1 "ipupipe-plan -o FIFO: refused, no hang" "-o: .*fifo is a FIFO \(named pipe\), not a regular file" \
  "$PLAN" --model mlp -o "$tmp/fifo"
refused_rc 1 "ipupipe-plan --output DIR" "--output: .*adir is a directory, not a regular file" \
  "$PLAN" --model mlp --output "$tmp/adir"
refused_rc 1 "ipupipe-plan --output=/dev/null" "--output: /dev/null is a character device, not a regular file" \
  "$PLAN" --model mlp --output=/dev/null
[ -p "$tmp/fifo" ] && [ -d "$tmp/adir" ] && [ -c /dev/null ] && ok "the FIFO, the directory and /dev/null are as they were" ||
  bad "a non-regular output was replaced"

# ---- 3. empty output paths
for flag in --save --trace --summary-json --export-c; do
  refused "mnist-train $flag ''" "$flag needs the path of a file to write, got ''" "$BIN" "${common[@]}" --epochs 1 "$flag" ""
  refused "mnist-train $flag=" "$flag needs the path of a file to write, got ''" "$BIN" "${common[@]}" --epochs 1 "$flag="
done
refused "sensor-demo --export-c ''" "--export-c needs the path of a file to write, got ''" "$SENSOR" "${short[@]}" --export-c ""
refused "ipupipe-plan -o ''" "-o needs the path of a file to write, got ''" "$PLAN" --model mlp -o ""
refused "ipupipe-plan --output=" "--output needs the path of a file to write, got ''" "$PLAN" --model mlp --output=

# ---- 4. a signal ends a run blocked writing its standard output into a full pipe
cc=${CC:-gcc}
cat > "$tmp/fullpipe.c" <<'CEOF'
/* fullpipe SIG PROGRAM ARGS...: runs PROGRAM with its stdout on a one-page pipe that
   nobody reads; once the pipe is full (the program blocked in write), sends SIG and
   prints "exit N" (or "signal N") when the program ends, "hung" after 30 s. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void nap(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, NULL); }
int main(int argc, char **argv) {
    int p[2], cap, st, n = 0, i, still;
    pid_t pid;
    if (argc < 3 || pipe(p) != 0) return 2;
    (void)fcntl(p[1], F_SETPIPE_SZ, 4096);
    cap = fcntl(p[1], F_GETPIPE_SZ);
    if ((pid = fork()) == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execv(argv[2], argv + 2);
        _exit(127);
    }
    close(p[1]);
    /* full: within a line of the capacity (a write that does not fit waits whole) and
       unchanged for half a second: the program is blocked in write() */
    for (i = 0, still = 0; i < 6000 && still < 50; i++) {
        int last = n;
        if (waitpid(pid, &st, WNOHANG) == pid) { printf("ended before the pipe filled\n"); return 1; }
        if (ioctl(p[0], FIONREAD, &n) != 0) return 2;
        still = n == last && n >= cap - 512 ? still + 1 : 0;
        nap(10);
    }
    if (still < 50) { printf("the pipe never filled (%d of %d bytes)\n", n, cap); kill(pid, SIGKILL); return 1; }
    kill(pid, atoi(argv[1]));
    for (i = 0; i < 3000; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            if (WIFEXITED(st)) printf("exit %d\n", WEXITSTATUS(st));
            else printf("signal %d\n", WTERMSIG(st));
            return 0;
        }
        nap(10);
    }
    printf("hung\n");
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return 1;
}
CEOF
if "$cc" -O1 -o "$tmp/fullpipe" "$tmp/fullpipe.c" 2> "$tmp/cc.log"; then
  for sig in TERM INT; do
    n=15; [ "$sig" = INT ] && n=2
    rm -f "$tmp/blk.ckpt"
    res=$("$tmp/fullpipe" "$n" "$BIN" "${common[@]/--quiet/--no-progress}" --epochs 100000 --save "$tmp/blk.ckpt" \
          2> "$tmp/blk.log")
    if [ "$res" = "exit $((128 + n))" ] && grep -q "interrupted by SIG$sig" "$tmp/blk.log" && [ ! -e "$tmp/blk.ckpt" ] &&
       ! tmps "$tmp/blk.ckpt"; then ok "SIG$sig ends a run blocked on a full stdout pipe: $res, the usual message"
    else bad "SIG$sig on a run blocked on a full stdout pipe: $res (wanted exit $((128 + n)))" "$tmp/blk.log"; fi
  done
else bad "cannot build the full-pipe helper" "$tmp/cc.log"; fi

# ---- 5. SIGTERM while the checkpoint is synced
cat > "$tmp/sigsync.c" <<'CEOF'
/* LD_PRELOAD shim: the first fsync() of a "*.tmp" file raises SIGTERM, then syncs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int fsync(int fd) {
    static int (*real)(int);
    static int done;
    char link[64], target[4096];
    ssize_t k;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    k = readlink(link, target, sizeof target - 1);
    if (!done && k > 4) {
        target[k] = 0;
        if (strcmp(target + k - 4, ".tmp") == 0) {
            done = 1;
            kill(getpid(), SIGTERM);
        }
    }
    return real(fd);
}
CEOF
if "$cc" -shared -fPIC -O1 -o "$tmp/sigsync.so" "$tmp/sigsync.c" -ldl 2> "$tmp/cc.log"; then
  "$BIN" "${common[@]}" --epochs 2 --save "$tmp/ref.ckpt" > "$tmp/o.log" 2>&1 || bad "the reference run" "$tmp/o.log"
  LD_PRELOAD="$tmp/sigsync.so" "$BIN" "${common[@]}" --epochs 2 --save "$tmp/sig.ckpt" --summary-json "$tmp/sig.json" \
    > "$tmp/o.log" 2>&1
  rc=$?
  if [ "$rc" -eq 143 ] && grep -q "interrupted by SIGTERM while the outputs were written" "$tmp/o.log" &&
     cmp -s "$tmp/ref.ckpt" "$tmp/sig.ckpt" && grep -q '"test_accuracy"' "$tmp/sig.json" && ! tmps "$tmp/sig.ckpt" &&
     ! tmps "$tmp/sig.json"; then
    ok "SIGTERM during the checkpoint's fsync: exit 143, outputs complete, the checkpoint equals the uninterrupted run's"
  else bad "SIGTERM during the checkpoint's fsync: exit $rc (wanted 143, complete outputs)" "$tmp/o.log"; fi
else bad "cannot build the fsync shim" "$tmp/cc.log"; fi

# ---- 6. mnist-train-mpi: outputs on rank 0 only, its own name in messages
if command -v mpicc > /dev/null 2>&1 && command -v mpirun > /dev/null 2>&1; then
  if make -s build/mnist-train-mpi > "$tmp/mk.log" 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
      OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
    mpi=$PWD/build/mnist-train-mpi
    mkdir -p "$tmp/r0" "$tmp/r1"
    outs=(--save=a.ckpt --trace t.json --summary-json=s.json --export-c=m.h --export-name net)
    timeout 120 mpirun --oversubscribe -np 1 -wdir "$tmp/r0" "$mpi" "${common[@]}" --epochs 1 "${outs[@]}" : \
      -np 1 -wdir "$tmp/r1" "$mpi" "${common[@]}" --epochs 1 "${outs[@]}" > "$tmp/mpi.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ -s "$tmp/r0/a.ckpt" ] && [ -s "$tmp/r0/t.json" ] && [ -s "$tmp/r0/s.json" ] &&
       [ -s "$tmp/r0/m.h" ] && [ -z "$(ls -A "$tmp/r1")" ]; then
      ok "mnist-train-mpi: --save=, --trace, --summary-json=, --export-c= written by rank 0 only"
    else bad "mnist-train-mpi outputs: exit $rc, rank 1 wrote: $(ls -A "$tmp/r1" | tr '\n' ' ')" "$tmp/mpi.log"; fi
    cp "$tmp/run.ckpt" "$tmp/run.now"
    timeout 120 mpirun --oversubscribe -np 2 "$mpi" "${common[@]}" --epochs 1 --load "$tmp/run.ckpt" \
      --summary-json "$tmp/run.ckpt" > "$tmp/mpi.log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] && grep -q "^mnist-train-mpi: error: .*--summary-json" "$tmp/mpi.log" &&
       ! grep -q "^mnist-train: " "$tmp/mpi.log" && cmp -s "$tmp/run.ckpt" "$tmp/run.now"; then
      ok "mnist-train-mpi: an output onto --load is refused, the message says mnist-train-mpi (exit $rc)"
    elif [ "$rc" -ne 0 ] && grep -q "^mnist-train-mpi: error: .*--summary-json" "$tmp/mpi.log"; then
      bad "mnist-train-mpi: the checkpoint changed" "$tmp/mpi.log"
    else bad "mnist-train-mpi: an output onto --load: exit $rc" "$tmp/mpi.log"; fi
  else bad "building build/mnist-train-mpi" "$tmp/mk.log"; fi
else bad "MPI is not installed: install the Debian packages openmpi-bin libopenmpi-dev (.ci/deps.sh test)"; fi

finish
