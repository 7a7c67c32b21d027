#!/usr/bin/env bash
# bench/mpi/bench_trainer_mpi.sh - the MNIST trainer over MPI, as users run it (make
# bench-mpi): samples/s of build/mnist-train on one IPU against mpirun -np 2
# build/mnist-train-mpi with 2 replicas and with a 2-stage pipeline (the balanced split,
# --splits auto --stages 2), 3 interleaved rounds, medians, as ratios of the same run.
# The mlp (784-256-128-64-32-10, micro-batch 32), one epoch of 32768 samples; the
# trainer's own "Throughput" line (training only, not the start-up). Writes
# build/bench/bench_mpi_trainer.json. Usage: bench_trainer_mpi.sh [MNIST_DIR]
set -u
data=${1:-data/mnist}
[ -f "$data/train-images-idx3-ubyte" ] || { echo "bench_trainer_mpi: no MNIST in $data (make data)"; exit 1; }
common=(--model mlp --data "$data" --epochs 1 --train-limit 32768 --test-limit 100 --quiet)
mpi=(timeout 600 mpirun --oversubscribe -np 2 build/mnist-train-mpi "${common[@]}")
sps() { "$@" 2>&1 | sed -n 's/^Throughput: \([0-9]*\) samples\/s.*/\1/p' | tail -n1; }
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
one=() rep=() st=()
for k in 1 2 3; do
  one+=("$(sps build/mnist-train "${common[@]}" --splits none)")
  rep+=("$(sps "${mpi[@]}" --splits none --replicas 2)")
  st+=("$(sps "${mpi[@]}" --splits auto --stages 2)")
done
for v in "${one[@]}" "${rep[@]}" "${st[@]}"; do
  [ -n "$v" ] || { echo "bench_trainer_mpi: a run printed no throughput"; exit 1; }
done
o=$(median "${one[@]}") r=$(median "${rep[@]}") s=$(median "${st[@]}")
rr=$(awk -v a="$r" -v b="$o" 'BEGIN { printf "%.2f", a / b }')
sr=$(awk -v a="$s" -v b="$o" 'BEGIN { printf "%.2f", a / b }')
echo "mnist-train mlp, samples/s (median of 3 interleaved rounds): 1 IPU $o; mpirun -np 2: 2 replicas $r (${rr}x), 2-stage pipeline $s (${sr}x)"
echo "  rounds: 1 IPU ${one[*]}; 2 replicas ${rep[*]}; 2 stages ${st[*]}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p build/bench
printf '{"model": "mlp", "one_ipu_sps": %s, "replicas2_sps": %s, "stages2_sps": %s, "replicas2_ratio": %s, "stages2_ratio": %s}\n' \
  "$o" "$r" "$s" "$rr" "$sr" > build/bench/bench_mpi_trainer.json
