/* tests/test_noheap.c - no heap call after startup.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free (Makefile:
 * LDFLAGS_test_noheap), so every call of these functions made by this translation unit -
 * the test and all of ipupipe.h, ipupipe_kernels.h and ipupipe_sched.h compiled into it -
 * goes through the counters below. The test first proves the counters see calls, then
 * freezes an emulator (ipup_init: pools carved, threads created) and counts from there to
 * exit: training runs with both runners, replicas, recomputation, offload, Adam, the
 * outfeed, evaluation, the trace, the memory report, checkpoint iteration, shutdown.
 * Expected: zero calls. (Calls glibc makes internally, e.g. inside pthread_create during
 * ipup_init, do not pass through --wrap; they happen at startup anyway.)
 */
#include "ipupipe.h"
#include "ttest.h"
#include "tiny_model.h"

#include "heap_count.h"

#define POOL (256 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[4][POOL], g_stream[4][POOL], g_host[1 << 19];
static ipup_emu g_emu;
static float g_x[64 * 20];
static int32_t g_y[64];
static char g_sink[1 << 16];
static size_t g_sink_len;
static double g_loss_seen;

/* 20 features, 5 random classes (the features do not depend on the label) */
static void sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 20; j++) x[j] = ipup_rng_uniform_f32(3, (uint64_t)(sample0 + i), (uint64_t)j) - 0.5f;
    *label = (int32_t)ipup_rng_below(3, (uint64_t)(sample0 + i), 99, 5);
}
static tiny_data g_data = {sample, 20};
static void outfeed(void *user, const ipup_outfeed_rec *r) { (void)user; g_loss_seen += (double)r->loss; }
static int sink(void *user, const void *d, size_t n) {
    (void)user;
    if (g_sink_len + n > sizeof g_sink) return -1;
    memcpy(g_sink + g_sink_len, d, n);
    g_sink_len += n;
    return 0;
}

TTEST(wrappers_count_calls) {
    /* through volatile pointers, so the compiler cannot elide the pair */
    void *(*volatile m)(size_t) = malloc;
    void *(*volatile re)(void *, size_t) = realloc;
    void (*volatile fr)(void *) = free;
    long before = g_heap_calls;
    void *p = m(16);
    p = re(p, 32);
    fr(p);
    TT_EQ_INT(g_heap_calls - before, 3);
}

static void train_everything(ipup_runner_kind runner) {
    ipup_model_desc m;
    ipup_config c;
    ipup_run_stats st;
    int32_t i, n;
    long at_freeze;
    double ls = 0.0;
    int64_t cor = 0;
    TT_EQ_INT(tiny_model(&m, 1, 1, 20, "dense32,relu,dropout0.1,dense16,gelu,dense5,xent", NULL, 0), IPUP_OK);
    /* 2 stages, micro-batches of 4, 4 a step, 3 steps a run, seed 0 */
    c = tiny_config(&m, 2, 4, 4, 3, 0, IPUP_OPT_ADAM, 0.01f, tiny_infeed, &g_data);
    c.replicas = 2;
    c.schedule = IPUP_SCHED_ZBH1;
    c.recompute = 1;
    c.offload = 1;
    c.runner = runner;
    c.outfeed = outfeed;
    tiny_pools(&c, 4, g_ipu, g_stream, POOL, g_host, sizeof g_host);
    for (i = 0; i < 64 * 20; i++) g_x[i] = ipup_rng_uniform_f32(4, 0, (uint64_t)i);
    for (i = 0; i < 64; i++) g_y[i] = i % 5;

    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK); /* startup: may allocate (threads) */
    at_freeze = g_heap_calls;                  /* frozen from here on */
    for (i = 0; i < 3; i++) TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_OK);
    TT_EQ_INT(ipup_run_steps(&g_emu, 2, NULL), IPUP_OK);
    TT_EQ_INT(ipup_set_learning_rate(&g_emu, 0.005f), IPUP_OK);
    TT_EQ_INT(ipup_set_learning_rate(&g_emu, NAN), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_OK);
    TT_EQ_INT(ipup_evaluate(&g_emu, 64, g_x, g_y, &ls, &cor), IPUP_OK);
    g_sink_len = 0;
    TT_EQ_INT(ipup_trace_write(&g_emu, sink, NULL), IPUP_OK);
    g_sink_len = 0;
    TT_EQ_INT(ipup_memory_report_write(&g_emu, sink, NULL), IPUP_OK);
    n = ipup_tensor_count(&g_emu);
    for (i = 0; i < n; i++) {
        ipup_tensor_info t;
        TT_EQ_INT(ipup_tensor_get(&g_emu, i, &t), IPUP_OK);
    }
    TT_EQ_INT(ipup_replicas_sync(&g_emu), IPUP_OK);
    ipup_shutdown(&g_emu);
    TT_EQ_INT(ipup_get_step(&g_emu), 14);
    TT_CHECK(g_loss_seen > 0.0);
    TT_CHECK(g_sink_len > 100);
    TT_EQ_INT(g_heap_calls - at_freeze, 0);
}

TTEST(no_heap_after_freeze_coop) { train_everything(IPUP_RUNNER_COOP); }
TTEST(no_heap_after_freeze_threads) { train_everything(IPUP_RUNNER_THREADS); }

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(wrappers_count_calls),
        TT_CASE(no_heap_after_freeze_coop),
        TT_CASE(no_heap_after_freeze_threads),
    };
    return TTEST_MAIN(cases, argc, argv);
}
