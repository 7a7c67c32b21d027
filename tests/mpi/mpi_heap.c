/* tests/mpi/mpi_heap.c - heap calls inside a step of the MPI runner, OpenMPI's
 * included. malloc, calloc, realloc, free, posix_memalign, aligned_alloc and memalign
 * are defined here (forwarding to glibc's __libc_* entry points), so the calls of
 * libmpi and its plugins land here too (the executable's definitions come first in
 * symbol lookup), not only those of this file as with -Wl,--wrap. Runs of 1, 4 and 16
 * steps (replicas 2 x 2 stages on 4 ranks) after a warm-up run: the count must not grow
 * with the number of steps. The runs are made 3 times and each size keeps its smallest
 * count (of the most of any rank): OpenMPI's shared-memory transport sometimes allocates
 * once when a message arrives before its receive is posted, which the load of the
 * machine decides; an allocation per step would show in every attempt. Prints the counts
 * and `N passed, N failed` on rank 0.
 */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_mpi.h"
#include "tiny_model.h"

#include <stdio.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static volatile long g_calls;
void *malloc(size_t n) { g_calls++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { g_calls++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { g_calls++; return __libc_realloc(p, n); }
void free(void *p) { if (p) g_calls++; __libc_free(p); }
void *memalign(size_t a, size_t n) { g_calls++; return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { g_calls++; return __libc_memalign(a, n); }
int posix_memalign(void **p, size_t a, size_t n) {
    g_calls++;
    *p = __libc_memalign(a, n);
    return *p ? 0 : 12;
}

#define POOL (256 * 1024)
IPUP_ALIGN64 static uint8_t g_pool[IPUP_MAX_IPUS][POOL], g_host[1 << 20];
static ipup_emu g_emu;
static ipup_mpi g_mp;
static ipup_model_desc g_model;

static void sample(int64_t s0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 12; j++) x[j] = (float)((s0 + i + j) % 7) * 0.1f;
    *label = (int32_t)((s0 + i) % 4);
}
static tiny_data g_data = {sample, 12};

int main(int argc, char **argv) {
    static const int32_t steps[3] = {1, 4, 16};
    long calls[3], worst[3], best[3] = {-1, -1, -1}, setup, warm;
    int rank, k, a, pass = 0, fail = 0;
    char msg[256];
    ipup_config c;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tiny_model(&g_model, 1, 1, 12, "dense64,relu,dense32,relu,dense16,relu,dense4,xent", msg, sizeof msg);
    c = tiny_config(&g_model, 2, 4, 8, 16, 3, IPUP_OPT_MOMENTUM, 0.05f, tiny_infeed, &g_data);
    c.replicas = 2;
    c.schedule = IPUP_SCHED_1F1B;
    tiny_pools(&c, IPUP_MAX_IPUS, g_pool, NULL, POOL, g_host, sizeof g_host);
    if (ipup_init(&g_emu, &c) != IPUP_OK || ipup_mpi_init(&g_mp, &g_emu, MPI_COMM_WORLD, 0) != IPUP_OK) {
        fprintf(stderr, "setup: %s\n", ipup_last_error(&g_emu));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    setup = g_calls; /* MPI_Init and ipup_mpi_init: proves the counter sees libmpi's calls */
    { long w0 = g_calls; ipup_run_steps(&g_emu, 16, NULL); warm = g_calls - w0; } /* first-use allocations */
    for (a = 0; a < 3; a++) {
        for (k = 0; k < 3; k++) {
            long c0 = g_calls;
            int rc = ipup_run_steps(&g_emu, steps[k], NULL);
            calls[k] = g_calls - c0;
            if (rc != IPUP_OK) fail++;
        }
        MPI_Reduce(calls, worst, 3, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
        for (k = 0; k < 3; k++) if (best[k] < 0 || worst[k] < best[k]) best[k] = worst[k];
    }
    if (rank == 0) {
        printf("heap calls in MPI_Init + ipup_init + ipup_mpi_init (rank 0): %ld; in the first run of 16 steps: %ld\n", setup, warm);
        if (setup > 0) pass++;
        else { fail++; printf("FAIL the counter saw no allocation of OpenMPI\n"); }
        for (k = 0; k < 3; k++) printf("heap calls in a run of %2d steps (most of any rank, fewest of 3 attempts): %ld\n", (int)steps[k], best[k]);
        if (best[2] <= best[0]) pass++;
        else {
            fail++;
            printf("FAIL the heap calls grow with the number of steps\n");
        }
        printf("%d passed, %d failed\n", pass, fail);
    }
    ipup_mpi_free(&g_mp);
    ipup_shutdown(&g_emu);
    MPI_Finalize();
    return fail ? 1 : 0;
}
