#!/usr/bin/env bash
# tests/test_mpi.sh - the MPI runner (ipupipe_mpi.h) on loopback, bounded (about 30 s):
#  1. every built-in schedule x replicas {1, 2} x stages {1, 2, 4} over 1, 2, 4 and 8
#     ranks gives the cooperative runner's bits (tests/mpi/mpi_bits.c, 42 configurations),
#     and 4 replicas x stages {1, 2} (14 more); ipup_mpi_sum (scatter and chain) equals
#     the left fold in rank order on 2, 3, 4 and 8 ranks;
#  2. build/mnist-train-mpi --save equals build/mnist-train --save byte for byte
#     (2 replicas on 4 ranks; a 1f1b pipeline on 2 ranks);
#  heap calls per step inside OpenMPI do not grow with the steps (tests/mpi/mpi_heap.c);
#  ipupipe_mpi.h compiles as C++;
#  3. a wrong rank count, a rank with another configuration, a rank that reads other data
#     (the same --data in another -wdir, one byte different) and a concurrent map end
#     every rank with a message; a rank killed mid-run ends the job with a message,
#     within 60 s.
# Needs OpenMPI (Debian: openmpi-bin libopenmpi-dev; `make test` installs them through
# .ci/deps.sh): without it this gate fails and says so.
. "$(dirname "$0")/lib.sh"
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  give_up "MPI is not installed: install the Debian packages openmpi-bin libopenmpi-dev (.ci/deps.sh test)"
fi
make -s build/mpi/mpi_bits build/mpi/mpi_heap build/mnist-train-mpi build/mnist-train >/dev/null || give_up "building the MPI programs"
make_tmp mpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
  OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() { local n=$1; shift; timeout 120 mpirun --oversubscribe -np "$n" "$@"; }

# 1. bits
total=0 total4=0 total_own=0 kinds_own=0
for n in 1 2 3 4 8; do
  if run "$n" build/mpi/mpi_bits >"$tmp/bits$n.log" 2>&1; then
    c=$(sed -n 's/^configs //p' "$tmp/bits$n.log"); total=$((total + c))
    c4=$(sed -n 's/^configs4 //p' "$tmp/bits$n.log"); total4=$((total4 + c4))
    co=$(sed -n 's/^configs_own //p' "$tmp/bits$n.log"); total_own=$((total_own + co))
    kinds_own=$(sed -n 's/^kinds_own //p' "$tmp/bits$n.log")
    ok "mpi_bits on $n ranks: $(tail -n1 "$tmp/bits$n.log"), $((c + c4)) configurations"
  else bad "mpi_bits on $n ranks" "$tmp/bits$n.log"; fi
done
[ "$total" -eq 42 ] && ok "42 configurations (7 schedules x 2 x 3) compared" || bad "compared $total configurations, not 42"
# the schedules with a mapping of their own (zb-h2, the V and looped ones, dualpipe-v): 4
# stages, 1 and 2 replicas each
[ "$kinds_own" -gt 0 ] && [ "$total_own" -eq $((2 * kinds_own)) ] &&
  ok "$total_own configurations of the $kinds_own schedules with their own mapping compared" ||
  bad "compared $total_own configurations of the $kinds_own schedules with their own mapping, not $((2 * kinds_own))"
[ "$total4" -eq 14 ] && ok "14 configurations with 4 replicas (7 schedules x stages 1, 2) compared" || bad "compared $total4 configurations with 4 replicas, not 14"

# heap calls inside OpenMPI per step (tests/mpi/mpi_heap.c) and the header as C++
if run 4 build/mpi/mpi_heap >"$tmp/heap.log" 2>&1; then ok "heap calls do not grow with the steps: $(grep 'run of 16' "$tmp/heap.log")"
else bad "heap calls per step" "$tmp/heap.log"; fi
printf '#define IPUPIPE_IMPLEMENTATION\n#include "ipupipe_mpi.h"\nint main(void){return 0;}\n' >"$tmp/cxx.cpp"
if mpicxx -std=c++17 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wdouble-promotion -Werror -I. "$tmp/cxx.cpp" -o "$tmp/cxx" >"$tmp/cxx.log" 2>&1
then ok "ipupipe_mpi.h compiles as C++ (mpicxx, -Werror)"; else bad "ipupipe_mpi.h as C++" "$tmp/cxx.log"; fi

# 2. the trainer's checkpoint
gen_syn "$tmp/syn" 640 100
common=(--data "$tmp/syn" --quiet --seed 7 --train-limit 512 --batch-size 8 --batches-to-accumulate 4 --epochs 2)
train_pair() { # name ranks options...
  local name=$1 n=$2; shift 2
  build/mnist-train "${common[@]}" "$@" --save "$tmp/$name.coop" >"$tmp/$name.coop.log" 2>&1 || { bad "$name: cooperative run" "$tmp/$name.coop.log"; return; }
  if run "$n" build/mnist-train-mpi "${common[@]}" "$@" --save "$tmp/$name.mpi" >"$tmp/$name.mpi.log" 2>&1 &&
     cmp -s "$tmp/$name.coop" "$tmp/$name.mpi"; then ok "$name: --save over $n ranks equals the cooperative file"
  else bad "$name: --save over $n ranks differs or failed" "$tmp/$name.mpi.log"; fi
}
train_pair mlp-r2 4 --model mlp --replicas 2
train_pair mlp-1f1b 2 --model mlp --schedule 1f1b --optimizer adam
train_pair mlp-f16-r2 4 --model mlp --replicas 2 --dtype float16  # binary16 weights

# 3. faults
start=$SECONDS
if run 3 build/mnist-train-mpi "${common[@]}" --model mlp --replicas 2 >"$tmp/np.log" 2>&1; then bad "3 ranks for 4 IPUs was accepted"
elif grep -q "mpirun started 3 ranks; run mpirun -np 4" "$tmp/np.log"; then ok "a wrong rank count: every rank stops with 'run mpirun -np 4'"
else bad "a wrong rank count: no clear message" "$tmp/np.log"; fi
if timeout 120 mpirun --oversubscribe -np 1 build/mnist-train-mpi "${common[@]}" --model mlp --seed 1 : \
     -np 1 build/mnist-train-mpi "${common[@]}" --model mlp --seed 2 >"$tmp/fp.log" 2>&1; then bad "ranks with different seeds were accepted"
elif grep -q "rank 1's configuration differs from rank 0's" "$tmp/fp.log"; then ok "a rank with another configuration: the job stops with a message"
else bad "a mismatched rank: no clear message" "$tmp/fp.log"; fi
# the same --data string naming other files on each rank (mpirun -wdir, as on nodes with
# their own copies): the data a rank reads is part of the agreement, so a byte that differs
# in the samples a rank reads stops every rank before training, naming the rank and the
# file; a byte past --train-limit (never read) does not matter
rel=(--data d "${common[@]:2}" --model mlp) # d: a directory in each rank's -wdir
ranks_in() { # DIR N [OPTION...]: adds to app N ranks started in DIR (an MPMD launch)
  [ ${#app[@]} -eq 0 ] || app+=(:)
  app+=(-wdir "$1" -np "$2" "$PWD/build/mnist-train-mpi" "${rel[@]}" "${@:3}")
}
mpmd_data() { # log file offset: the byte at offset of wb/d/file differs; 1 rank in wa, 1 in wb
  rm -rf "$tmp/wa" "$tmp/wb"; mkdir -p "$tmp/wa" "$tmp/wb"
  cp -r "$tmp/syn" "$tmp/wa/d" && cp -r "$tmp/syn" "$tmp/wb/d"
  printf '\x07' | dd of="$tmp/wb/d/$2" bs=1 seek="$3" conv=notrunc status=none
  app=(); ranks_in "$tmp/wa" 1; ranks_in "$tmp/wb" 1
  timeout 120 mpirun --oversubscribe "${app[@]}" >"$tmp/$1.log" 2>&1
}
for f in train-labels-idx1-ubyte:8 train-images-idx3-ubyte:$((16 + 511 * 784 + 400)) t10k-labels-idx1-ubyte:107 \
         t10k-images-idx3-ubyte:16; do
  if mpmd_data "wdir-${f%%:*}" "${f%%:*}" "${f##*:}"; then bad "ranks reading another ${f%%:*} were accepted" "$tmp/wdir-${f%%:*}.log"
  elif grep -q "rank 1's d/${f%%:*} differs from rank 0's" "$tmp/wdir-${f%%:*}.log"; then
    ok "ranks reading another ${f%%:*} (mpirun -wdir): every rank stops, naming rank 1 and the file"
  else bad "ranks reading another ${f%%:*}: no clear message" "$tmp/wdir-${f%%:*}.log"; fi
done
if mpmd_data wdir-unread train-labels-idx1-ubyte $((8 + 600)); then ok "a byte past --train-limit on one rank (never read) is accepted"
else bad "a byte that no rank reads stopped the run" "$tmp/wdir-unread.log"; fi
printf '\x07' | dd of="$tmp/wb/d/train-labels-idx1-ubyte" bs=1 seek=8 conv=notrunc status=none # a label read
app=(); ranks_in "$tmp/wa" 2 --replicas 2; ranks_in "$tmp/wb" 1 --replicas 2; ranks_in "$tmp/wa" 1 --replicas 2
if timeout 120 mpirun --oversubscribe "${app[@]}" >"$tmp/wdir4.log" 2>&1; then bad "4 ranks, rank 2 reading another file, were accepted"
elif grep -q "rank 2's d/train-labels-idx1-ubyte differs from rank 0's" "$tmp/wdir4.log"; then
  ok "4 ranks, rank 2 started in another directory: every rank stops, naming rank 2"
else bad "4 ranks, rank 2 reading another file: no clear message" "$tmp/wdir4.log"; fi
if run 3 build/mnist-train-mpi "${common[@]}" --model mlp --map "0,[1,2],2" --splits auto --stages 3 >"$tmp/conc.log" 2>&1; then bad "a concurrent map over MPI was accepted"
elif grep -q "concurrent stages .* the MPI runner does not carry" "$tmp/conc.log"; then ok "a concurrent map over MPI: every rank stops with a message"
else bad "a concurrent map over MPI: no clear message" "$tmp/conc.log"; fi
gen_syn "$tmp/big" 60000 100
( timeout 120 mpirun --oversubscribe -np 2 build/mnist-train-mpi --data "$tmp/big" --quiet --model mlp --epochs 50 >"$tmp/kill.log" 2>&1; echo $? >"$tmp/kill.rc" ) &
sleep 4
victim=$(pgrep -f "build/mnist-train-mpi --data $tmp/big" | tail -n1)
t0=$SECONDS
[ -n "$victim" ] && kill -9 "$victim"
wait
el=$((SECONDS - t0))
if [ -n "$victim" ] && [ "$(cat "$tmp/kill.rc")" != 0 ] && [ "$(cat "$tmp/kill.rc")" != 124 ] && [ $el -le 60 ] &&
   grep -qiE "signal 9|killed" "$tmp/kill.log"; then ok "a killed rank ends the job in ${el} s with a message"
else bad "a killed rank (pid ${victim:-none}, rc $(cat "$tmp/kill.rc"), ${el} s)" "$tmp/kill.log"; fi
echo "(MPI gate: $((SECONDS - start + 0)) s of faults)"
finish
