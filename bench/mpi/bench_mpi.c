/* bench/mpi/bench_mpi.c - figures of the MPI runner, measured in one run on 2 ranks
 * (make bench-mpi: mpirun -np 2), written to build/bench/bench_mpi.json:
 *   - samples/s of the MNIST mlp shape on 1 rank (cooperative, MPI_COMM_SELF), on 2
 *     replicas (2 ranks) and on a 2-stage pipeline (2 ranks), as ratios;
 *   - rank-to-rank bandwidth (persistent send/recv, loopback) and the fixed-order sum
 *     (scatter and chain) against MPI_Allreduce on the same buffer, at the mlp's
 *     gradient sizes;
 *   - the cost-model table for 2..64 ranks (pipeline depth x replicas) over a named
 *     interconnect, the fixed-order sums' time against a ring all-reduce's.
 */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_mpi.h"
#include "tiny_model.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define POOL (8u << 20)
IPUP_ALIGN64 static uint8_t g_pool[2][POOL], g_host[8u << 20];
static ipup_emu g_emu;
static ipup_mpi g_mp;
static ipup_model_desc g_model;
static int g_rank;
static float g_a[1 << 20], g_b[1 << 20];
static ipup_mpi_sum g_sum;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static void sample(int64_t s0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 784; j++) x[j] = (float)((s0 * 31 + i * 7 + j) % 255) / 255.0f;
    *label = (int32_t)((s0 + i) % 10);
}
static tiny_data g_data = {sample, 784};

/* samples/s of the mlp with R replicas and S stages over comm (NULL: cooperative alone) */
static double train_sps(MPI_Comm comm, int R, int S) {
    ipup_config c = tiny_config(&g_model, S, 16, 8, 8, 1, IPUP_OPT_SGD, 0.01f, tiny_infeed, &g_data);
    double t0, best = 0.0;
    int k;
    c.replicas = R;
    c.schedule = IPUP_SCHED_1F1B;
    tiny_pools(&c, 2, g_pool, NULL, POOL, g_host, sizeof g_host);
    memset(&g_emu, 0, sizeof g_emu);
    if (ipup_init(&g_emu, &c) != IPUP_OK || (comm != MPI_COMM_NULL && ipup_mpi_init(&g_mp, &g_emu, comm, 0) != IPUP_OK)) {
        fprintf(stderr, "bench_mpi: %s\n", ipup_last_error(&g_emu));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ipup_run(&g_emu, NULL);
    for (k = 0; k < 5; k++) {
        double sps;
        t0 = now();
        ipup_run(&g_emu, NULL);
        sps = 8.0 * 8.0 * 16.0 * R / (now() - t0);
        if (sps > best) best = sps;
    }
    if (comm != MPI_COMM_NULL) ipup_mpi_free(&g_mp);
    ipup_shutdown(&g_emu);
    return best;
}

/* GB/s of one rank-to-rank message of n floats (persistent requests), best of reps */
static double p2p_gbs(int n) {
    MPI_Request rq;
    double best = 1e30;
    int k;
    if (g_rank == 0) MPI_Send_init(g_a, n, MPI_FLOAT, 1, 5, MPI_COMM_WORLD, &rq);
    else MPI_Recv_init(g_b, n, MPI_FLOAT, 0, 5, MPI_COMM_WORLD, &rq);
    for (k = 0; k < 20; k++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        MPI_Start(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        if (now() - t0 < best) best = now() - t0;
    }
    MPI_Request_free(&rq);
    return 4.0 * n / best / 1e9;
}

/* GB/s (buffer bytes / time, best of 20) of ipup_mpi_sum with algo on n floats */
static double sum_gbs(int algo, int n) {
    float *bufs[1] = {g_a};
    size_t ns[1];
    char msg[256];
    double best = 1e30;
    int k;
    ns[0] = (size_t)n;
    if (ipup_mpi_sum_init(&g_sum, MPI_COMM_WORLD, algo, 1, bufs, ns, msg, sizeof msg) != IPUP_OK) {
        fprintf(stderr, "bench_mpi: %s\n", msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (k = 0; k < 20; k++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        ipup_mpi_sum_run(&g_sum);
        if (now() - t0 < best) best = now() - t0;
    }
    ipup_mpi_sum_free(&g_sum);
    return 4.0 * n / best / 1e9;
}

/* GB/s of MPI_Allreduce (sum, in place) on n floats, best of 20 */
static double allreduce_gbs(int n) {
    double best = 1e30;
    int k;
    for (k = 0; k < 20; k++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        MPI_Allreduce(MPI_IN_PLACE, g_b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (now() - t0 < best) best = now() - t0;
    }
    return 4.0 * n / best / 1e9;
}

/* Cost model past this machine. Interconnect: InfiniBand HDR, 200 Gb/s = 25 GB/s per
   link and about 1 us per message (NVIDIA ConnectX-6 product brief; the 1 us is the
   usual MPI latency quoted for HDR). Compute: the emulator's own Mk2 IPU model
   (ipup_cost_model defaults), per stage t_c = the step's compute over S stages, bubble
   (S-1)/(M+S-1) of 1F1B. Reduction of G bytes over R replicas: the fixed-order scatter
   (each rank sends and receives (R-1)/R G twice, to and from R-1 peers, chunks
   pipelined) = 2 (R-1)/R G/bw + 2 lat, the bytes of a ring all-reduce, which is
   2 (R-1)/R G/bw + 2 lat (Patarasuk and Yuan 2009); the chain (R-1 + R-1 hops
   pipelined in C-byte chunks) = 2 G/bw + 2 (R-1) (C/bw + lat). The runner uses the
   scatter up to IPUP_MPI_MAX_PEERS + 1 replicas, the chain past that. */
static void cost_table(FILE *f, double step_compute_s, double grad_bytes, int M) {
    const double bw = 25e9, lat = 1e-6, C = 4.0 * IPUP_MPI_CHUNK;
    int S, R;
    fprintf(f, "  \"cost_model\": {\"interconnect\": \"InfiniBand HDR 25 GB/s, 1 us\", \"rows\": [\n");
    printf("ranks  S x R   step (ms)  efficiency  sum used (us)  chain (us)  ring (us)\n");
    for (S = 1; S <= 8; S *= 2)
        for (R = 1; R * S <= 64; R *= 2) {
            double comp = step_compute_s / S * (double)(M + S - 1) / M;
            double g = grad_bytes / S;
            double chain = R > 1 ? 2.0 * g / bw + 2.0 * (R - 1) * (C / bw + lat) : 0.0;
            double ring = R > 1 ? 2.0 * (R - 1) / R * g / bw + 2.0 * (R - 1) * lat : 0.0;
            double used = R <= IPUP_MPI_MAX_PEERS + 1 ? ring : chain; /* scatter: a ring's cost */
            double step = comp + used + (S > 1 ? 2.0 * M * lat : 0.0), eff = step_compute_s / (S * step);
            if (R * S < 2) continue;
            printf("%5d  %d x %-2d  %9.3f  %9.1f%%  %13.1f  %10.1f  %9.1f\n", R * S, S, R, step * 1e3, 100.0 * eff, used * 1e6, chain * 1e6, ring * 1e6);
            fprintf(f, "    {\"ranks\": %d, \"stages\": %d, \"replicas\": %d, \"step_s\": %.6g, \"efficiency\": %.4f, \"sum_s\": %.6g, \"chain_s\": %.6g, \"ring_s\": %.6g},\n",
                    R * S, S, R, step, eff, used, chain, ring);
        }
    fprintf(f, "    {}]},\n");
}

int main(int argc, char **argv) {
    static const int sizes[3] = {203530, 66058, 1 << 20}; /* mlp 784-256-10 grads, its second half, 4 MB */
    double one = 0.0, rep, pipe, ch, ar;
    FILE *f = NULL;
    char msg[256];
    int k;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    tiny_model(&g_model, 28, 28, 1, "dense256,relu,dense256,relu,dense10,xent", msg, sizeof msg);
    if (g_rank == 0) one = train_sps(MPI_COMM_NULL, 1, 1); /* one rank alone */
    MPI_Barrier(MPI_COMM_WORLD);
    rep = train_sps(MPI_COMM_WORLD, 2, 1);
    pipe = train_sps(MPI_COMM_WORLD, 1, 2);
    if (g_rank == 0) {
        f = fopen("build/bench/bench_mpi.json", "w");
        if (!f) f = stderr;
        printf("mlp samples/s: 1 rank %.0f, 2 replicas %.0f (%.2fx), 2-stage pipeline %.0f (%.2fx)\n", one, rep, rep / one, pipe, pipe / one);
        fprintf(f, "{\n  \"one_rank_sps\": %.1f, \"replicas2_ratio\": %.3f, \"pipeline2_ratio\": %.3f,\n  \"bandwidth\": [\n", one, rep / one, pipe / one);
    }
    for (k = 0; k < 3; k++) {
        double p = p2p_gbs(sizes[k]);
        double sc = sum_gbs(IPUP_MPI_SUM_SCATTER, sizes[k]);
        ch = sum_gbs(IPUP_MPI_SUM_CHAIN, sizes[k]);
        ar = allreduce_gbs(sizes[k]);
        if (g_rank == 0) {
            printf("%8d floats: rank to rank %.2f GB/s; fixed-order sum: scatter %.2f GB/s, chain %.2f GB/s; MPI_Allreduce %.2f GB/s (scatter/allreduce %.2f)\n",
                   sizes[k], p, sc, ch, ar, sc / ar);
            fprintf(f, "    {\"floats\": %d, \"p2p_gbs\": %.3f, \"scatter_gbs\": %.3f, \"chain_gbs\": %.3f, \"allreduce_gbs\": %.3f},\n", sizes[k], p, sc, ch, ar);
        }
    }
    if (g_rank == 0) {
        fprintf(f, "    {}],\n");
        /* 1 step of the mlp at B 16 x M 8 on one Mk2 IPU: 6 * params * samples flops at 25% of 62.5 TFLOP/s */
        cost_table(f, 6.0 * 203530.0 * 128.0 / (62.5e12 * 0.25), 4.0 * 203530.0, 8);
        fprintf(f, "  \"note\": \"ratios measured in one run on this machine\"\n}\n");
        if (f != stderr) fclose(f);
    }
    MPI_Finalize();
    return 0;
}
