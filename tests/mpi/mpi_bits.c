/* tests/mpi/mpi_bits.c - the MPI runner (ipupipe_mpi.h) against the cooperative runner:
 * every built-in schedule x replicas {1, 2} x stages {1, 2, 4}, and 4 replicas x stages
 * {1, 2}, whose IPU count equals the number of ranks runs here (tests/test_mpi.sh starts
 * it with 1, 2, 3, 4 and 8 ranks). Each rank also runs the cooperative reference
 * in-process; the weights, the optimizer state and every outfeed record must be the
 * same bits. Then ipup_mpi_sum over all ranks, both algorithms, on data whose sum
 * depends on the order of the adds, against the left fold in rank order. Prints the
 * configurations it ran (`configs N`, `configs4 N`) and `N passed, N failed` on rank 0.
 * Small chunks here, so the sums cross buffers and parts in many messages.
 */
#define IPUP_MPI_CHUNK 64
#define IPUP_MPI_MAX_CHUNKS 4096
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_mpi.h"
#include "tiny_model.h"

#include <stdio.h>
#include <string.h>

#define POOL (256 * 1024)
IPUP_ALIGN64 static uint8_t g_pool_ref[IPUP_MAX_IPUS][POOL], g_pool_mpi[IPUP_MAX_IPUS][POOL];
IPUP_ALIGN64 static uint8_t g_host_ref[1 << 20], g_host_mpi[1 << 20];
static ipup_emu g_ref, g_mpi;
static ipup_mpi g_mp;
static ipup_model_desc g_model;
static int g_rank, g_size, g_pass, g_fail;

static void sample(int64_t s0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    uint64_t k = (uint64_t)(s0 + i);
    for (j = 0; j < 12; j++) x[j] = (float)((k * 2654435761u + (uint64_t)j * 40503u) % 1000u) / 500.0f - 1.0f;
    *label = (int32_t)(k % 4u);
}
static tiny_data g_data = {sample, 12};

static void check(int ok, const char *what, const char *cfg) {
    if (ok) g_pass++;
    else {
        g_fail++;
        fprintf(stderr, "FAIL rank %d: %s (%s)\n", g_rank, what, cfg);
    }
}

static ipup_config make_cfg(int kind, int R, int S, int opt, uint8_t (*pools)[POOL], uint8_t *host) {
    ipup_config c = tiny_config(&g_model, S, 2, 4, 3, 7, (ipup_optimizer_kind)opt, 0.05f, tiny_infeed, &g_data);
    c.schedule = (ipup_sched_kind)kind;
    c.replicas = R;
    if (kind == IPUP_SCHED_INTERLEAVED_1F1B && S >= 4) c.virtual_stages = 2;
    tiny_pools(&c, IPUP_MAX_IPUS, pools, NULL, POOL, host, sizeof g_host_ref);
    return c;
}

/* the two emulators agree on this rank's stages of its replica and on replica 0 */
static void compare(const char *name) {
    int32_t s, n, n2, i, r = g_rank / g_mpi.core.P, d = g_rank % g_mpi.core.P;
    const ipup_outfeed_rec *a = ipup_outfeed_records(&g_ref, &n), *b = ipup_outfeed_records(&g_mpi, &n2);
    int same = n == n2;
    for (i = 0; same && i < n; i++)
        same = a[i].step == b[i].step && a[i].replica == b[i].replica && a[i].mb == b[i].mb &&
               memcmp(&a[i].loss, &b[i].loss, sizeof(float)) == 0 && a[i].correct == b[i].correct;
    check(same, "outfeed records", name);
    for (s = 0; s < g_ref.core.S; s++) {
        size_t np = g_ref.core.stages[s].n_params * sizeof(float), ns = g_ref.core.stages[s].n_state * sizeof(float);
        if (g_ref.core.stages[s].device == d) {
            check(memcmp(g_ref.stage_rt[r][s].params, g_mpi.stage_rt[r][s].params, np) == 0, "own weights", name);
            check(!ns || memcmp(g_ref.stage_rt[r][s].state, g_mpi.stage_rt[r][s].state, ns) == 0, "own optimizer state", name);
        }
        check(memcmp(g_ref.stage_rt[0][s].params, g_mpi.stage_rt[0][s].params, np) == 0, "replica 0 weights (shared)", name);
        check(!ns || memcmp(g_ref.stage_rt[0][s].state, g_mpi.stage_rt[0][s].state, ns) == 0, "replica 0 state (shared)", name);
    }
}

static int run_one(int kind, int R, int S) {
    char name[96];
    int opt = (kind + R + S) % 3, k;
    ipup_config cr = make_cfg(kind, R, S, opt, g_pool_ref, g_host_ref);
    ipup_config cm = make_cfg(kind, R, S, opt, g_pool_mpi, g_host_mpi);
    ipup_snprintf(name, sizeof name, "%s R=%d S=%d opt %d", ipup_sched_kind_name((ipup_sched_kind)kind), R, S, opt);
    ipup_shutdown(&g_ref);
    ipup_shutdown(&g_mpi);
    memset(&g_ref, 0, sizeof g_ref);
    memset(&g_mpi, 0, sizeof g_mpi);
    if (ipup_init(&g_ref, &cr) != IPUP_OK) {
        if (g_rank == 0) fprintf(stderr, "FAIL %s: ipup_init: %s\n", name, ipup_last_error(&g_ref));
        g_fail++;
        return 0;
    }
    if (g_ref.core.n_ipus != g_size) return 0; /* another rank count runs it */
    check(ipup_init(&g_mpi, &cm) == IPUP_OK, "ipup_init", name);
    check(ipup_mpi_init(&g_mp, &g_mpi, MPI_COMM_WORLD, 0) == IPUP_OK, ipup_last_error(&g_mpi), name);
    for (k = 0; k < 2; k++) { /* two runs: the rings and requests carry over */
        check(ipup_run(&g_ref, NULL) == IPUP_OK, "cooperative run", name);
        check(ipup_run(&g_mpi, NULL) == IPUP_OK, ipup_last_error(&g_mpi), name);
    }
    ipup_mpi_share_state(&g_mp);
    compare(name);
    ipup_mpi_free(&g_mp);
    return 1;
}

/* rank q's value i: magnitudes 1e-3..1e7 and both signs, so that the order of the adds
   shows in the bits */
static float sum_val(int q, int i) {
    uint64_t k = ((uint64_t)(q + 1) * 2654435761u) ^ ((uint64_t)i * 40503u);
    float m = (float)(k % 997u) / 7.0f - 70.0f;
    return (q % 3 == 0) ? m * 1.0e5f : ((q % 3 == 1) ? m * 1.0e-3f : -m * 1.0e5f + (float)(i % 5));
}

/* ipup_mpi_sum (algo) over every rank on three buffers against the left fold 0..size-1 */
static void sum_check(int algo) {
    enum { N0 = 5, N1 = 3001, N2 = 130 };
    static float b0[N0], b1[N1], b2[N2];
    float *bufs[3] = {b0, b1, b2};
    size_t ns[3] = {N0, N1, N2};
    static ipup_mpi_sum sum;
    char msg[256], name[64];
    int b, i, q, same = 1, order_shows = 0;
    ipup_snprintf(name, sizeof name, "ipup_mpi_sum %s on %d ranks", algo ? "chain" : "scatter", g_size);
    for (b = 0; b < 3; b++)
        for (i = 0; i < (int)ns[b]; i++) bufs[b][i] = sum_val(g_rank, 10000 * b + i);
    if (ipup_mpi_sum_init(&sum, MPI_COMM_WORLD, algo, 3, bufs, ns, msg, sizeof msg) != IPUP_OK) {
        /* the scatter stages at most IPUP_MPI_MAX_PEERS other ranks: refused with a message */
        check(algo == IPUP_MPI_SUM_SCATTER && g_size > IPUP_MPI_MAX_PEERS + 1 && strstr(msg, "IPUP_MPI_MAX_PEERS"), msg, name);
        return;
    }
    check(ipup_mpi_sum_run(&sum) == IPUP_OK && ipup_mpi_sum_run(&sum) == IPUP_OK, "run", name);
    for (b = 0; b < 3; b++)
        for (i = 0; i < (int)ns[b]; i++) {
            float acc = sum_val(0, 10000 * b + i), rev = sum_val(g_size - 1, 10000 * b + i), two;
            for (q = 1; q < g_size; q++) acc += sum_val(q, 10000 * b + i);
            for (q = g_size - 2; q >= 0; q--) rev += sum_val(q, 10000 * b + i);
            order_shows |= memcmp(&acc, &rev, sizeof acc) != 0;
            /* the second run adds size copies of the first sum, in rank order */
            two = acc;
            for (q = 1; q < g_size; q++) two += acc;
            same &= memcmp(&bufs[b][i], &two, sizeof two) == 0;
        }
    check(same, "the sum equals the left fold in rank order, bit for bit", name);
    check(g_size < 3 || order_shows, "the data's sum depends on the order (the check can fail)", name);
    ipup_mpi_sum_free(&sum);
}

int main(int argc, char **argv) {
    int kind, R, S, configs = 0, configs4 = 0, configs_own = 0, fails = 0;
    char msg[256];
    (void)argc; (void)argv;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (tiny_model(&g_model, 1, 1, 12, "dense16,gelu,dropout0.25,dense12,relu,dense8,relu,dense4,xent", msg, sizeof msg)) {
        fprintf(stderr, "model: %s\n", msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (kind = 0; kind <= (int)IPUP_SCHED_ZBH1; kind++)
        for (R = 1; R <= 2; R++)
            for (S = 1; S <= 4; S *= 2) configs += run_one(kind, R, S);
    for (kind = 0; kind <= (int)IPUP_SCHED_ZBH1; kind++)
        for (S = 1; S <= 2; S++) configs4 += run_one(kind, 4, S);
    /* the schedules with a mapping of their own, 4 stages: zb-h2 on 4 devices, the V and
       looped ones and dualpipe-v on 2 (2 stages per rank), 1 and 2 replicas (dualpipe runs
       as 2 replicas of another schedule: the replica configurations above) */
    for (kind = (int)IPUP_SCHED_ZBH1 + 1; kind < (int)IPUP_SCHED_DUALPIPE; kind++)
        for (R = 1; R <= 2; R++) configs_own += run_one(kind, R, 4);
    sum_check(IPUP_MPI_SUM_SCATTER);
    sum_check(IPUP_MPI_SUM_CHAIN);
    MPI_Allreduce(&g_fail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("configs %d\nconfigs4 %d\nconfigs_own %d\nkinds_own %d\n%d passed, %d failed\n", configs, configs4,
               configs_own, (int)IPUP_SCHED_DUALPIPE - (int)IPUP_SCHED_ZBH1 - 1, g_pass, fails);
    ipup_shutdown(&g_ref);
    ipup_shutdown(&g_mpi);
    MPI_Finalize();
    return fails ? 1 : 0;
}
