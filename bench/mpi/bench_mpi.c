/* bench/mpi/bench_mpi.c - figures of the MPI runner, measured in one run on 2 ranks
 * (make bench-mpi: mpirun -np 2), written to build/bench/bench_mpi.json:
 *   - samples/s of a model whose layers balance over 2 stages (784-512x4-10, the
 *     trainer's 16 x 32 samples per step) on 1 rank (cooperative), on 2 replicas (2
 *     ranks) and on a 2-stage pipeline (2 ranks), as ratios, 5 interleaved rounds;
 *   - rank-to-rank bandwidth (persistent send/recv, loopback) and the fixed-order sum
 *     (scatter and chain) against MPI_Allreduce on the same buffer, at the gradient
 *     sizes of the trainer's models (mlp, cnn, mlp-gelu);
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

/* the model: 784-512x4-10 with GELU (bench_emulator's), whose layers balance over 2
   stages (the bound is printed); the trainer's recipe, 16 micro-batches of 32 per step */
#define BM_MODEL "dense512,gelu,dense512,gelu,dense512,gelu,dense512,gelu,dense10,xent"
#define BM_B 32
#define BM_M 16
#define BM_REPEAT 4
#define BM_ROUNDS 5
#define POOL (32u << 20)
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

/* samples/s (the better of 2 timed runs after a warm-up) of the model with R replicas
   and S stages (the emulator's balanced split) over comm (MPI_COMM_NULL: cooperative,
   this rank alone) */
static double train_sps(MPI_Comm comm, int R, int S) {
    ipup_config c = tiny_config(&g_model, S, BM_B, BM_M, BM_REPEAT, 1, IPUP_OPT_SGD, 0.01f, tiny_infeed, &g_data);
    double best = 0.0;
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
    for (k = 0; k < 2; k++) {
        double sps, t0 = now();
        ipup_run(&g_emu, NULL);
        sps = (double)BM_REPEAT * BM_M * BM_B * R / (now() - t0);
        if (sps > best) best = sps;
    }
    if (comm != MPI_COMM_NULL) ipup_mpi_free(&g_mp);
    ipup_shutdown(&g_emu);
    return best;
}

/* The best a 2-stage pipeline of the model can do: total cost over the larger stage of the
   balanced split (ipup_balance_stages, which the emulator uses when no split is given;
   cost = per-sample FLOPs per layer, the input gradient only after a layer with weights) */
static double stage_bound(void) {
    static ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[256];
    int32_t split[1], l;
    double st[2] = {0.0, 0.0};
    int params_before = 0;
    if (ipup_model_info(&g_model, info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK ||
        ipup_balance_stages(&g_model, 2, split, msg, sizeof msg) != IPUP_OK)
        return 0.0;
    for (l = 0; l < g_model.n_layers; l++) {
        st[l >= split[0]] += (double)(info[l].flops_fwd + info[l].flops_bwd_dw + (params_before ? info[l].flops_bwd_dx : 0));
        if (info[l].n_w) params_before = 1;
    }
    return (st[0] + st[1]) / (st[0] > st[1] ? st[0] : st[1]);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], cmp_d);
    return v[n / 2];
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
    /* the gradients of the trainer's models: mlp, cnn, mlp-gelu (examples/mnist/mnist_models.h) */
    static const int sizes[3] = {244522, 34826, 932362};
    double one[BM_ROUNDS], rep[BM_ROUNDS], pipe[BM_ROUNDS], o, r, p2, ch, ar;
    FILE *f = NULL;
    char msg[256];
    int k;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    tiny_model(&g_model, 28, 28, 1, BM_MODEL, msg, sizeof msg);
    for (k = 0; k < BM_ROUNDS; k++) { /* interleaved, so a change of load hits all three */
        one[k] = g_rank == 0 ? train_sps(MPI_COMM_NULL, 1, 1) : 0.0; /* one rank alone */
        MPI_Barrier(MPI_COMM_WORLD);
        rep[k] = train_sps(MPI_COMM_WORLD, 2, 1);
        pipe[k] = train_sps(MPI_COMM_WORLD, 1, 2);
    }
    o = median(one, BM_ROUNDS);
    r = median(rep, BM_ROUNDS);
    p2 = median(pipe, BM_ROUNDS);
    if (g_rank == 0) {
        f = fopen("build/bench/bench_mpi.json", "w");
        if (!f) f = stderr;
        double bound = stage_bound();
        printf("784-512x4-10 (B %d x M %d), samples/s, median of %d interleaved rounds: 1 rank %.0f, 2 replicas %.0f (%.2fx), 2-stage pipeline %.0f (%.2fx; its split allows %.2fx)\n",
               BM_B, BM_M, BM_ROUNDS, o, r, r / o, p2, p2 / o, bound);
        fprintf(f, "{\n  \"one_rank_sps\": %.1f, \"replicas2_ratio\": %.3f, \"pipeline2_ratio\": %.3f, \"pipeline2_bound\": %.3f,\n  \"bandwidth\": [\n", o, r / o, p2 / o, bound);
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
        /* 1 step of the trainer's mlp (244,522 weights) at B 32 x M 16 on one Mk2 IPU:
           6 * weights * samples flops at 25 % of 62.5 TFLOP/s */
        cost_table(f, 6.0 * 244522.0 * 512.0 / (62.5e12 * 0.25), 4.0 * 244522.0, BM_M);
        fprintf(f, "  \"note\": \"ratios measured in one run on this machine\"\n}\n");
        if (f != stderr) fclose(f);
    }
    MPI_Finalize();
    return 0;
}
