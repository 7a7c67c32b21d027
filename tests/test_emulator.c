/* tests/test_emulator.c - the multi-IPU emulator (ipupipe.h): bit-identity of every
   schedule and both runners against the plain gradient-accumulation loop of
   ref_model.h, rings across the 32-bit wrap, replication, recomputation, offload, errors, NaN, the
   threaded stress test, trace, memory report, checkpoints.
   Also run under ThreadSanitizer and helgrind (IPUPIPE_TEST_SLOW=1: fewer steps). */
#define _POSIX_C_SOURCE 200809L /* nanosleep for the delay hook */
#include <sched.h>
#include <time.h>
#define TINY_MODEL_HELGRIND /* helgrind annotations of the rings, where available */
#define IPUPIPE_RING_START 0xFFFFFFF0u /* every ring of every run crosses the 32-bit wrap */
#define IPUPIPE_CHUNK_BYTES 600 /* conv4,relu,maxpool2 (256 bytes a sample) runs 2 samples at a time */
#define IPUPIPE_IMPLEMENTATION
#include "tiny_model.h" /* includes ipupipe.h */
#include "ref_model.h"
#include "ttest.h"

/* ------------------------------------------------------------------ pools */
#define POOL_BYTES (512 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_stream[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 20];
IPUP_ALIGN64 static uint8_t g_ipu2[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host2[1 << 20];
static ipup_emu g_emu, g_emu2;

/* ------------------------------------------------------------------ data */
typedef struct feed_ctx {
    int in_n, classes;
    int64_t nan_step; /* -1: none */
} feed_ctx;

/* synthetic, learnable: label = argmax over classes of a fixed projection of x */
static void make_sample(int in_n, int classes, int64_t idx, float *x, int32_t *label) {
    int i, c, best = 0;
    float bv = -1e30f;
    for (i = 0; i < in_n; i++) x[i] = 2.0f * ipup_rng_uniform_f32(77, (uint64_t)idx, (uint64_t)i) - 1.0f;
    for (c = 0; c < classes; c++) {
        float v = 0.0f;
        for (i = 0; i < in_n; i++) v += x[i] * (float)(((i * 7 + c * 3) % 5) - 2);
        if (v > bv) { bv = v; best = c; }
    }
    *label = best;
}

static int feed(void *user, const ipup_feed *fd) {
    feed_ctx *f = (feed_ctx *)user;
    int32_t i;
    if (fd->row != f->in_n || fd->classes != f->classes || !fd->labels) return -1;
    for (i = 0; i < fd->n; i++)
        make_sample(f->in_n, f->classes, fd->sample0 + i, fd->x + (size_t)i * (size_t)f->in_n, fd->labels + i);
    if (fd->step == f->nan_step) fd->x[0] = NAN;
    return 0;
}

/* ------------------------------------------------------------------ reference: the plain loop */
static ref_model g_ref; /* ref_model.h */

static ipup_model_desc g_mlp, g_cnn;
static feed_ctx g_feed_mlp = {12, 4, -1}, g_feed_cnn = {36, 3, -1};

static void models(void) {
    char msg[256];
    if (tiny_model(&g_mlp, 1, 1, 12, "dense16,gelu,dropout0.25,dense12,relu,dense8,relu,dense4,xent", msg, sizeof msg))
        printf("parse: %s\n", msg);
    if (tiny_model(&g_cnn, 6, 6, 1, "conv4,relu,maxpool2,flatten,dense3,xent", msg, sizeof msg))
        printf("parse: %s\n", msg);
}

static ipup_config base_cfg(const ipup_model_desc *md, feed_ctx *fc) {
    /* micro-batches of 3, 4 a step, 3 steps a run, seed 1234; 1 stage unless a test sets c.stages */
    ipup_config c = tiny_config(md, 0, 3, 4, 3, 1234, IPUP_OPT_SGD, 0.05f, feed, fc);
    tiny_pools(&c, 8, g_ipu, g_stream, POOL_BYTES, g_host, sizeof g_host);
    return c;
}

/* train with the emulator and the reference; return the number of differing tensors */
static int run_and_compare(ipup_config *c, feed_ctx *fc, int steps, const char *what) {
    int rc, bad, k;
    double md;
    rc = ipup_init(&g_emu, c);
    if (rc) { TT_FAILF("%s: init: %.400s", what, ipup_last_error(&g_emu)); return -1; }
    ref_begin(&g_ref, c, &g_emu);
    for (k = 0; k < steps; k += c->repeat) {
        int32_t n = steps - k < c->repeat ? steps - k : c->repeat, j;
        rc = ipup_run_steps(&g_emu, n, NULL);
        if (rc) { TT_FAILF("%s: run: %.400s", what, ipup_last_error(&g_emu)); ipup_shutdown(&g_emu); return -1; }
        for (j = 0; j < n; j++) ref_step(&g_ref, k + j, feed, fc);
    }
    TT_EQ_INT(ipup_get_step(&g_emu), steps);
    bad = ref_diff(&g_ref, &g_emu, &md);
    if (bad) TT_FAILF("%s: %d tensors differ from the plain loop (max |diff| %g)", what, bad, md);
    ipup_shutdown(&g_emu);
    return bad;
}

/* ------------------------------------------------------------------ tests */
TTEST(ring_wraps_32bit) {
    IPUP_ALIGN64 static uint8_t buf[8 * 64];
    ipup_ring r;
    uint32_t i, next_in = 0, next_out = 0;
    TT_EQ_INT(ipup_ring_init(&r, buf, sizeof buf, 6, 4, 0), IPUP_ERR_ARG); /* not a power of two */
    TT_EQ_INT(ipup_ring_init(&r, buf, 64, 8, 4, 0), IPUP_ERR_CAPACITY);
    TT_EQ_INT(ipup_ring_init(&r, buf, sizeof buf, 8, 4, 0xFFFFFFF0u), IPUP_OK);
    TT_CHECK(ipup_ring_peek(&r) == NULL);
    for (i = 0; i < 200; i++) {
        /* push up to 3, pop up to 2: the fill level moves, indices cross 2^32 */
        int k;
        for (k = 0; k < 3; k++) {
            uint32_t *p = (uint32_t *)ipup_ring_reserve(&r);
            if (!p) { TT_CHECK(ipup_ring_count(&r) == 8); break; }
            *p = next_in++;
            ipup_ring_commit(&r);
        }
        for (k = 0; k < 2; k++) {
            uint32_t *p = (uint32_t *)ipup_ring_peek(&r);
            if (!p) break;
            if (*p != next_out) TT_FAILF("popped %u, expected %u", *p, next_out);
            next_out++;
            ipup_ring_release(&r);
        }
        TT_EQ_INT(ipup_ring_count(&r), next_in - next_out);
    }
    TT_CHECK(IPUP__LOAD_ACQ(&r.head) < 0x1000u); /* wrapped */
    TT_EQ_INT(r.peak, 8);
}

/* two threads through one ring across the wrap: every value arrives once, in order */
typedef struct ring_job { ipup_ring *r; uint32_t n; } ring_job;
static void *ring_producer(void *arg) {
    ring_job *j = (ring_job *)arg;
    uint32_t i;
    for (i = 0; i < j->n; i++) {
        uint32_t *p;
        while ((p = (uint32_t *)ipup_ring_reserve(j->r)) == NULL) sched_yield();
        p[0] = i;
        p[1] = i * 2654435761u;
        ipup_ring_commit(j->r);
    }
    return NULL;
}
TTEST(ring_spsc_threads) {
    IPUP_ALIGN64 static uint8_t buf[4 * 64];
    ipup_ring r;
    ring_job job;
    pthread_t th;
    uint32_t i, bad = 0;
    TT_EQ_INT(ipup_ring_init(&r, buf, sizeof buf, 4, 8, 0xFFFFFF00u), IPUP_OK);
    job.r = &r;
    job.n = ttest_slow() ? 2000 : 200000;
    TT_EQ_INT(pthread_create(&th, NULL, ring_producer, &job), 0);
    for (i = 0; i < job.n; i++) {
        const uint32_t *p;
        while ((p = (const uint32_t *)ipup_ring_peek(&r)) == NULL) sched_yield();
        if (p[0] != i || p[1] != i * 2654435761u) bad++;
        ipup_ring_release(&r);
    }
    pthread_join(th, NULL);
    TT_EQ_INT(bad, 0);
    TT_EQ_INT(ipup_ring_count(&r), 0);
    TT_EQ_INT(IPUP__LOAD_ACQ(&r.head), 0xFFFFFF00u + job.n);
}

TTEST(model_parse_and_info) {
    ipup_model_desc m;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[256];
    TT_EQ_INT(tiny_model(&m, 28, 28, 1, "conv8,relu,maxpool2,flatten,dense256,relu,dense256,dropout0.5,dense10,xent", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(m.n_layers, 10);
    TT_STREQ(m.layers[4].id, "dense256");
    TT_STREQ(m.layers[6].id, "dense256_2");
    TT_NEAR(m.layers[7].rate, 0.5, 1e-7);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(info[0].out_h, 26);
    TT_EQ_INT(info[2].out_h, 13);
    TT_EQ_INT(info[4].in_n, 13 * 13 * 8);
    TT_EQ_INT(info[4].n_w, 13 * 13 * 8 * 256);
    TT_EQ_INT(info[0].n_w, 9 * 8);
    TT_EQ_INT(info[4].flops_fwd, 2LL * 13 * 13 * 8 * 256 + 256);
    TT_EQ_INT(ipup_model_parse("dense10,bogus,xent", &m, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "layer 1");
    TT_EQ_INT(ipup_model_parse("", &m, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "empty model");
    TT_EQ_INT(ipup_model_parse("dense10,relu", &m, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "last layer");
}

static const ipup_sched_kind k_all[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL,
                                        IPUP_SCHED_GPIPE, IPUP_SCHED_1F1B, IPUP_SCHED_INTERLEAVED_1F1B, IPUP_SCHED_ZBH1};

/* every schedule x both runners x recompute on/off: the plain loop's bits */
TTEST(bit_identical_every_schedule) {
    int ks, runner, rec;
    int steps = ttest_slow() ? 2 : 3;
    for (ks = 0; ks < 7; ks++) {
        for (runner = 0; runner < 2; runner++) {
            for (rec = 0; rec < 2; rec++) {
                ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
                char what[128];
                c.schedule = k_all[ks];
                c.stages = 3;
                if (k_all[ks] == IPUP_SCHED_INTERLEAVED_1F1B) { c.stages = 4; c.devices = 2; c.virtual_stages = 2; }
                c.microbatches = k_all[ks] == IPUP_SCHED_GROUPED ? 6 : 4;
                c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
                c.recompute = rec;
                c.opt.kind = (ks % 3 == 0) ? IPUP_OPT_SGD : (ks % 3 == 1) ? IPUP_OPT_MOMENTUM : IPUP_OPT_ADAM;
                c.opt.lr = c.opt.kind == IPUP_OPT_ADAM ? 0.01f : 0.05f;
                snprintf(what, sizeof what, "%s/%s/recompute=%d", ipup_sched_kind_name(k_all[ks]), runner ? "threads" : "coop", rec);
                run_and_compare(&c, &g_feed_mlp, steps, what);
            }
        }
    }
}

TTEST(bit_identical_cnn_and_mapping) {
    int runner;
    for (runner = 0; runner < 2; runner++) {
        ipup_config c = base_cfg(&g_cnn, &g_feed_cnn);
        static const int16_t map[3] = {0, 1, 0}; /* stage 2 back on IPU0 (PopXL tutorial) */
        int32_t split[2] = {2, 4};
        c.schedule = IPUP_SCHED_1F1B;
        c.stages = 3;
        c.split = split;
        c.stage_device = map;
        c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.recompute = runner;
        c.opt.kind = IPUP_OPT_MOMENTUM;
        run_and_compare(&c, &g_feed_cnn, 3, runner ? "cnn threads" : "cnn coop");
    }
    {
        ipup_config c = base_cfg(&g_cnn, &g_feed_cnn);
        c.schedule = IPUP_SCHED_ZBH1;
        c.stages = 2;
        c.runner = IPUP_RUNNER_THREADS;
        run_and_compare(&c, &g_feed_cnn, 3, "cnn zb-h1");
        c.recompute = 1;
        c.stages = 3;
        c.opt.kind = IPUP_OPT_ADAM;
        c.opt.lr = 0.01f;
        run_and_compare(&c, &g_feed_cnn, 3, "cnn zb-h1 recompute adam");
    }
}

/* random configurations (fixed seeds): stage count, split, schedule, M, B, runner,
   recomputation, optimizer; every one that the schedule accepts must give the plain loop's
   bits */
TTEST(random_configurations_match_plain_loop) {
    int k, ran = 0, n = ttest_slow() ? 6 : 40;
    for (k = 0; k < n; k++) {
        ipup_config c = base_cfg((k & 1) ? &g_cnn : &g_mlp, (k & 1) ? &g_feed_cnn : &g_feed_mlp);
        const ipup_model_desc *md = c.model;
        int32_t split[IPUP_MAX_LAYERS];
        int32_t L = md->n_layers, S, i, j;
        char what[160];
        uint64_t h = ipup_rng_u64(2024, (uint64_t)k, 0);
        S = 1 + (int32_t)(h % (uint64_t)(L < 5 ? L : 5));
        /* S-1 distinct cut points in 1..L-1, ascending */
        for (i = 0, j = 1; i < S - 1; i++) {
            int32_t room = (L - 1) - j - (S - 2 - i); /* cut points left after this one */
            split[i] = j + (int32_t)(ipup_rng_u64(2024, (uint64_t)k, 10 + (uint64_t)i) % (uint64_t)(room + 1));
            j = split[i] + 1;
        }
        c.stages = S;
        c.split = S > 1 ? split : NULL;
        c.schedule = k_all[(h >> 8) % 7];
        c.microbatches = 1 + (int32_t)((h >> 16) % 6);
        c.microbatch = 1 + (int32_t)((h >> 24) % 4);
        c.runner = ((h >> 32) & 1) ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.recompute = (int32_t)((h >> 33) & 1);
        c.opt.kind = (ipup_optimizer_kind)((h >> 34) % 3);
        c.opt.lr = c.opt.kind == IPUP_OPT_ADAM ? 0.01f : 0.05f;
        c.repeat = 2;
        if (c.schedule == IPUP_SCHED_INTERLEAVED_1F1B && S % 2 == 0 && S >= 4) { c.devices = 2; c.virtual_stages = S / 2; }
        if (ipup_init(&g_emu, &c) != IPUP_OK) continue; /* e.g. interleaved-1f1b with an odd S */
        ipup_shutdown(&g_emu);
        snprintf(what, sizeof what, "random #%d: %s S=%d M=%d B=%d %s recompute=%d opt=%d", k,
                 ipup_sched_kind_name(c.schedule), (int)S, (int)c.microbatches, (int)c.microbatch,
                 c.runner ? "threads" : "coop", (int)c.recompute, (int)c.opt.kind);
        run_and_compare(&c, (k & 1) ? &g_feed_cnn : &g_feed_mlp, 3, what);
        ran++;
    }
    TT_CHECK_MSG(ran >= n / 2, "only %d of %d random configurations ran", ran, n);
}

/* copy replica-0 parameters of e into a flat array */
static size_t snapshot(ipup_emu *e, float *out, size_t cap) {
    int32_t i, n = ipup_tensor_count(e);
    size_t pos = 0;
    for (i = 0; i < n; i++) {
        ipup_tensor_info t;
        ipup_tensor_get(e, i, &t);
        if (t.kind != IPUP_TENSOR_PARAM) continue;
        if (pos + (size_t)t.n <= cap) memcpy(out + pos, t.data, (size_t)t.n * sizeof(float));
        pos += (size_t)t.n;
    }
    return pos;
}

TTEST(replication) {
    static float a[8192], b[8192], c1[8192];
    size_t n, i;
    double md = 0.0;
    int rc;
    ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
    /* 2 replicas x M=4 vs 1 replica x M=8: same samples, different summation order */
    c.schedule = IPUP_SCHED_1F1B;
    c.stages = 2;
    c.replicas = 2;
    c.opt.kind = IPUP_OPT_MOMENTUM;
    c.runner = IPUP_RUNNER_THREADS;
    rc = ipup_init(&g_emu, &c);
    TT_CHECK_MSG(rc == 0, "init: %.400s", ipup_last_error(&g_emu));
    if (rc) return;
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    n = snapshot(&g_emu, a, 8192);
    /* replica 1 holds the same weights as replica 0 (same update on the same sums) */
    for (i = 0; i < (size_t)g_emu.core.S; i++)
        TT_CHECK(memcmp(g_emu.stage_rt[0][i].params, g_emu.stage_rt[1][i].params, g_emu.core.stages[i].n_params * sizeof(float)) == 0);
    ipup_shutdown(&g_emu);
    c.runner = IPUP_RUNNER_COOP;
    rc = ipup_init(&g_emu, &c);
    TT_CHECK(rc == 0);
    if (rc) return;
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(snapshot(&g_emu, c1, 8192), n);
    TT_CHECK_MSG(memcmp(a, c1, n * sizeof(float)) == 0, "replicated: threads and coop differ");
    ipup_shutdown(&g_emu);
    c.replicas = 1;
    c.microbatches = 8;
    rc = ipup_init(&g_emu, &c);
    TT_CHECK(rc == 0);
    if (rc) return;
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(snapshot(&g_emu, b, 8192), n);
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > md) md = d;
    }
    /* tolerance: float sums of 8 micro-batch gradients in another order, 3 steps */
    TT_CHECK_MSG(md < 1e-5, "replicated vs single replica: max |diff| %g", md);
    TT_CHECK_MSG(md > 0.0 || memcmp(a, b, n * sizeof(float)) == 0, "impossible");
    ipup_shutdown(&g_emu);
}

/* replicas: threads == coop bit for bit under other schedules too (with recomputation and
   random delays) */
static void delay_hook(void *user, int32_t ipu, const ipup_op *op);
TTEST(replication_runners_identical) {
    static float a[8192], b[8192];
    static uint64_t ctr[IPUP_MAX_IPUS];
    static const ipup_sched_kind ks[3] = {IPUP_SCHED_GROUPED, IPUP_SCHED_ZBH1, IPUP_SCHED_INTERLEAVED_1F1B};
    int k;
    for (k = 0; k < 3; k++) {
        ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
        size_t n;
        c.schedule = ks[k];
        c.stages = 4;
        c.devices = ks[k] == IPUP_SCHED_INTERLEAVED_1F1B ? 2 : 0;
        c.replicas = 2; /* up to 8 IPUs, 8 pools */
        c.recompute = 1;
        c.opt.kind = IPUP_OPT_ADAM;
        c.opt.lr = 0.01f;
        if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.300s", ipup_last_error(&g_emu)); return; }
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        n = snapshot(&g_emu, a, 8192);
        ipup_shutdown(&g_emu);
        c.runner = IPUP_RUNNER_THREADS;
        c.op_hook = delay_hook;
        c.op_hook_user = ctr;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        TT_EQ_INT(snapshot(&g_emu, b, 8192), n);
        TT_CHECK_MSG(memcmp(a, b, n * sizeof(float)) == 0, "%s: replicated threads != coop", ipup_sched_kind_name(ks[k]));
        ipup_shutdown(&g_emu);
    }
}

/* random delays before ops: the threads interleave differently, bits stay the same */
static void delay_hook(void *user, int32_t ipu, const ipup_op *op) {
    volatile uint64_t *ctr = (volatile uint64_t *)user;
    uint64_t h = ipup_rng_u64(99, (uint64_t)ipu, (uint64_t)op->step * 131u + (uint64_t)op->mb + ctr[ipu]);
    ctr[ipu]++;
    if ((h & 3u) == 0) {
        struct timespec ts;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)(h >> 40) % 200000;
        nanosleep(&ts, NULL);
    } else if ((h & 3u) == 1) {
        sched_yield();
    }
}

TTEST(threaded_stress_random_delays) {
    static uint64_t ctr[IPUP_MAX_IPUS];
    int ks;
    int steps = ttest_slow() ? 2 : 12;
    for (ks = 0; ks < 7; ks += ttest_slow() ? 3 : 1) {
        ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
        char what[64];
        c.schedule = k_all[ks];
        c.stages = 4;
        c.devices = k_all[ks] == IPUP_SCHED_INTERLEAVED_1F1B ? 2 : 0;
        c.microbatches = 8;
        c.repeat = 4;
        c.runner = IPUP_RUNNER_THREADS;
        c.recompute = ks & 1;
        c.op_hook = delay_hook;
        c.op_hook_user = ctr;
        snprintf(what, sizeof what, "stress %s", ipup_sched_kind_name(k_all[ks]));
        run_and_compare(&c, &g_feed_mlp, steps, what);
    }
}

TTEST(offload_same_bits_and_memory) {
    static float a[8192], b[8192];
    size_t n;
    ipup_mem_report m0, m1;
    ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
    c.schedule = IPUP_SCHED_GPIPE;
    c.stages = 2;
    c.opt.kind = IPUP_OPT_ADAM;
    c.opt.lr = 0.01f;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    n = snapshot(&g_emu, a, 8192);
    ipup_memory_report(&g_emu, 0, &m0);
    ipup_shutdown(&g_emu);
    c.offload = 1;
    c.runner = IPUP_RUNNER_THREADS;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(snapshot(&g_emu, b, 8192), n);
    TT_CHECK(memcmp(a, b, n * sizeof(float)) == 0);
    ipup_memory_report(&g_emu, 0, &m1);
    TT_CHECK(m0.by_category[IPUP_MEM_OPTIMIZER] > 0);
    TT_EQ_INT(m1.by_category[IPUP_MEM_OPTIMIZER], 0);
    TT_EQ_INT(m1.stream_used, m0.by_category[IPUP_MEM_OPTIMIZER]);
    TT_EQ_INT(m0.offload_saved, m0.by_category[IPUP_MEM_OPTIMIZER]);
    ipup_shutdown(&g_emu);
}

/* A stage without weights (gelu, dropout) has no optimizer state to offload: its plan
   asks for 0 streaming bytes, so a caller gives that IPU no streaming pool. Found by
   fuzz_train_cli (memset of a NULL state pointer). The bits match without offload in
   every build; the NULL pointer itself is caught only by the ASan+UBSan build
   (make check-asan: nonnull-attribute, -fno-sanitize-recover). */
TTEST(offload_stage_without_weights) {
    static float a[8192], b[8192];
    static const int32_t split[2] = {1, 3}; /* dense16 | gelu, dropout | dense12 ... */
    ipup_plan plan;
    size_t n;
    int k;
    for (k = 0; k < 2; k++) {
        ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
        c.schedule = IPUP_SCHED_GROUPED;
        c.stages = 3;
        c.split = split;
        c.opt.kind = k ? IPUP_OPT_MOMENTUM : IPUP_OPT_ADAM;
        c.opt.lr = 0.01f;
        c.opt.momentum = 0.9f;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        n = snapshot(&g_emu, a, 8192);
        ipup_shutdown(&g_emu);
        c.offload = 1;
        TT_EQ_INT(ipup_plan_config(&g_emu, &c, &plan), IPUP_OK);
        TT_CHECK(plan.stream_bytes[0] > 0);
        TT_EQ_INT(plan.stream_bytes[1], 0);
        c.stream[1].mem = NULL;
        c.stream[1].bytes = 0;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        TT_EQ_INT(snapshot(&g_emu, b, 8192), n);
        TT_CHECK(memcmp(a, b, n * sizeof(float)) == 0);
        ipup_shutdown(&g_emu);
    }
}

TTEST(plan_sizes_pools_exactly) {
    ipup_plan plan;
    ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
    int d, rc;
    c.schedule = IPUP_SCHED_GROUPED;
    c.stages = 3;
    c.microbatches = 6;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &plan), IPUP_OK);
    TT_EQ_INT(plan.devices, 3);
    TT_EQ_INT(plan.stash_depth[0], 5); /* grouped: min(M, 2(S-s)-1) */
    TT_EQ_INT(plan.stash_depth[1], 3);
    TT_EQ_INT(plan.stash_depth[2], 1);
    for (d = 0; d < 3; d++) c.ipu[d].bytes = plan.ipu_bytes[d];
    c.host.bytes = plan.host_bytes;
    rc = ipup_init(&g_emu, &c);
    TT_CHECK_MSG(rc == 0, "exact pools: %.400s", ipup_last_error(&g_emu));
    if (rc == 0) {
        ipup_mem_report m;
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        ipup_memory_report(&g_emu, 0, &m);
        TT_EQ_INT(m.used, plan.ipu_bytes[0]);
        TT_CHECK(m.high_water <= m.used);
        TT_CHECK(m.peak_by_category[IPUP_MEM_STASH] > 0);
        ipup_shutdown(&g_emu);
    }
    c.ipu[0].bytes = plan.ipu_bytes[0] - 1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_OOM);
    TT_CONTAINS(ipup_last_error(&g_emu), "IPU0");
    TT_CONTAINS(ipup_last_error(&g_emu), "stage 0");
    TT_CONTAINS(ipup_last_error(&g_emu), "recomputation");
    /* recomputation stashes less */
    {
        ipup_plan p2;
        c.recompute = 1;
        TT_EQ_INT(ipup_plan_config(&g_emu, &c, &p2), IPUP_OK);
        TT_CHECK(p2.mem[0].by_category[IPUP_MEM_STASH] < plan.mem[0].by_category[IPUP_MEM_STASH]);
        TT_CHECK(p2.ipu_bytes[0] < plan.ipu_bytes[0]);
    }
}

/* A ReLU that ends a stage before a max-pool keeps no input: the pool's backward on the
   next stage applies its mask (the bits stay those of bit_identical_cnn_and_mapping). So
   stage 0 of conv,relu | maxpool,... stashes what stage 0 of conv | relu,maxpool,... does
   (the conv's input only), and the same goes for the exchange the conv writes into. */
TTEST(relu_ending_a_stage_before_a_pool_keeps_no_input) {
    ipup_plan after_relu, before_relu;
    ipup_config c = base_cfg(&g_cnn, &g_feed_cnn);
    int32_t split_after[1] = {2}, split_before[1] = {1};
    c.schedule = IPUP_SCHED_GROUPED;
    c.stages = 2;
    c.split = split_after;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &after_relu), IPUP_OK);
    c.split = split_before;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &before_relu), IPUP_OK);
    TT_EQ_INT(after_relu.stash_depth[0], before_relu.stash_depth[0]);
    TT_CHECK(after_relu.mem[0].by_category[IPUP_MEM_STASH] > 0);
    TT_EQ_INT(after_relu.mem[0].by_category[IPUP_MEM_STASH], before_relu.mem[0].by_category[IPUP_MEM_STASH]);
}

/* conv4,relu,maxpool2,flatten,dense3,xent on 6x6x1 images, micro-batch 3: a stash entry
   keeps the image (36 x 3 floats), the pool's arg-max bytes (16 x 3 bytes: 12 floats), the
   dense's input (16 x 3), the labels (3) and dlogits (3 x 3), rounded up to 16 floats; the
   ReLU and the pool keep no activation. Split after the ReLU, stage 1 reads its input
   (4x4x4 a sample) from the ring slot and its entry has no copy of it; with recomputation
   that input and the labels are all it keeps (195 floats, 208 rounded).
   Every such layout trains to the plain loop's bits, on threads too. */
static size_t stash_bytes(int32_t depth, size_t entry_floats) {
    return ((size_t)depth * entry_floats * sizeof(float) + 63u) & ~(size_t)63u;
}
TTEST(argmax_pools_keep_a_byte_per_output) {
    ipup_plan one, two;
    ipup_config c = base_cfg(&g_cnn, &g_feed_cnn);
    int32_t split[1] = {2}, split3[2] = {2, 4}, runner;
    static const int16_t map[3] = {0, 1, 0};
    c.schedule = IPUP_SCHED_GROUPED;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &one), IPUP_OK);
    TT_EQ_INT(one.mem[0].by_category[IPUP_MEM_STASH], stash_bytes(one.stash_depth[0], 192));
    c.stages = 2;
    c.split = split;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &two), IPUP_OK);
    TT_EQ_INT(two.mem[0].by_category[IPUP_MEM_STASH], stash_bytes(two.stash_depth[0], 112));
    TT_EQ_INT(two.mem[1].by_category[IPUP_MEM_STASH], stash_bytes(two.stash_depth[1], 80));
    c.recompute = 1;
    c.recompute_stages = 3u; /* the last stage too (cfg.recompute alone: all but the last) */
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &two), IPUP_OK);
    TT_EQ_INT(two.mem[1].by_category[IPUP_MEM_STASH], stash_bytes(two.stash_depth[1], 208));
    for (runner = 0; runner < 2; runner++) {
        c = base_cfg(&g_cnn, &g_feed_cnn);
        c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.stages = 2;
        c.split = split;
        c.schedule = IPUP_SCHED_GROUPED;
        run_and_compare(&c, &g_feed_cnn, 3, runner ? "split after the ReLU, threads" : "split after the ReLU, coop");
        c.stages = 3;
        c.split = split3;
        c.stage_device = map;
        c.schedule = IPUP_SCHED_1F1B;
        run_and_compare(&c, &g_feed_cnn, 3, runner ? "3 stages on 0,1,0, threads" : "3 stages on 0,1,0, coop");
    }
}

TTEST(bad_configurations) {
    ipup_config c = base_cfg(&g_cnn, &g_feed_cnn);
    int32_t split[2] = {3, 3};
    static const int16_t map[2] = {0, 5};
    c.stages = 7;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "only 6 layers");
    c.stages = 3;
    c.split = split;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "empty");
    c.split = NULL;
    c.stages = 2;
    c.devices = 2;
    c.stage_device = map;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "IPU 5");
    c.stage_device = NULL;
    c.devices = 0;
    c.stages = 3;
    c.schedule = IPUP_SCHED_INTERLEAVED_1F1B;
    c.devices = 2;
    c.virtual_stages = 2; /* 3 stages do not fill 2 devices x 2 virtual stages */
    TT_CHECK(ipup_init(&g_emu, &c) < 0);
    TT_CONTAINS(ipup_last_error(&g_emu), "interleaved-1f1b");
    c = base_cfg(&g_cnn, &g_feed_cnn);
    c.opt.lr = NAN;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "learning rate cfg.opt.lr is nan");
    c.opt.lr = -0.5f;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "is -0.5:");
    c.opt.lr = 0.0f;
    c.opt.beta2 = 1.5f;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "beta2 cfg.opt.beta2 is 1.5:");
    c = base_cfg(&g_cnn, &g_feed_cnn);
    c.ipu[0].bytes = 1000;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_OOM);
    TT_CONTAINS(ipup_last_error(&g_emu), "IPU0");
    TT_CONTAINS(ipup_last_error(&g_emu), "the pool has");
    c = base_cfg(&g_cnn, &g_feed_cnn);
    c.host.bytes = 100;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&g_emu), "host pool");
    c = base_cfg(&g_cnn, &g_feed_cnn);
    c.ipu[1].mem = NULL;
    c.stages = 2;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "cfg.ipu[1]");
}

TTEST(nan_is_an_error_naming_step_and_stage) {
    int runner;
    for (runner = 0; runner < 4; runner++) { /* 2, 3: two replicas */
        feed_ctx fc = g_feed_mlp;
        ipup_config c = base_cfg(&g_mlp, &fc);
        static float before[8192], after[8192];
        size_t n;
        fc.nan_step = 1;
        c.schedule = IPUP_SCHED_1F1B;
        c.stages = 3;
        c.repeat = 3;
        c.runner = (runner & 1) ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.replicas = runner >= 2 ? 2 : 1;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run_steps(&g_emu, 1, NULL), IPUP_OK);
        n = snapshot(&g_emu, before, 8192);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_ERR_NUMERIC);
        /* the NaN input dies in a ReLU on the way to the loss, but not in the first
           layer's weight gradient */
        TT_CONTAINS(ipup_last_error(&g_emu), "step 1, stage 0 (IPU");
        TT_CONTAINS(ipup_last_error(&g_emu), "dense16.w is NaN or infinite");
        TT_EQ_INT(ipup_get_step(&g_emu), 1);
        snapshot(&g_emu, after, 8192);
        TT_CHECK(memcmp(before, after, n * sizeof(float)) == 0); /* step 1 not applied */
        /* the emulator is usable again: from step 2 the data is finite */
        ipup_set_step(&g_emu, 2);
        TT_EQ_INT(ipup_run_steps(&g_emu, 1, NULL), IPUP_OK);
        TT_EQ_INT(ipup_get_step(&g_emu), 3);
        ipup_shutdown(&g_emu);
    }
}

static int failing_feed(void *user, const ipup_feed *fd) {
    if (fd->step == 2 && fd->mb == 1) return -1;
    return feed(user, fd);
}

TTEST(infeed_failure_stops_cleanly) {
    int runner;
    for (runner = 0; runner < 2; runner++) {
        ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
        ipup_run_stats st;
        c.infeed = failing_feed;
        c.schedule = IPUP_SCHED_GROUPED;
        c.stages = 3;
        c.repeat = 3;
        c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_ERR_IO);
        TT_CONTAINS(ipup_last_error(&g_emu), "step 2");
        TT_EQ_INT(ipup_get_step(&g_emu), 2);
        TT_EQ_INT(st.steps, 2);
        ipup_shutdown(&g_emu);
    }
}

static char g_trace[1 << 16];
static size_t g_trace_len;
static int trace_sink(void *user, const void *data, size_t len) {
    (void)user;
    if (g_trace_len + len >= sizeof g_trace) return -1;
    memcpy(g_trace + g_trace_len, data, len);
    g_trace_len += len;
    g_trace[g_trace_len] = 0;
    return 0;
}

/* a writer that succeeds g_fail_after times, then fails (and counts every call) */
static int g_fail_after, g_fail_calls;
static int failing_sink(void *user, const void *data, size_t len) {
    (void)user; (void)data; (void)len;
    return g_fail_calls++ < g_fail_after ? 0 : -1;
}

TTEST(cost_model_trace_and_stats) {
    ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
    ipup_run_stats st;
    c.schedule = IPUP_SCHED_1F1B;
    c.stages = 3;
    c.microbatches = 6;
    /* a toy model: make compute the only cost so the phases show the pipeline shape */
    c.cost.sync_cycles = 1e-9;
    c.cost.link_bytes_per_s = 1e30;
    c.cost.host_bytes_per_s = 1e30;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_OK);
    TT_EQ_INT(st.steps, 3);
    TT_EQ_INT(st.microbatches, 18);
    TT_EQ_INT(st.samples, 54);
    TT_CHECK(st.loss_mean > 0.5 && st.loss_mean < 3.0);
    TT_CHECK(st.sim_seconds > 0.0);
    TT_NEAR(st.sim_seconds, 3.0 * st.step_seconds + st.launch_seconds, 1e-15);
    TT_NEAR(st.launch_seconds, (3e-3 - 175e-6) * 937.0 / 936.0, 1e-15); /* the default launch */
    TT_NEAR(st.busy_seconds[1] + st.idle_seconds[1], st.sim_seconds, 1e-12);
    TT_CHECK_MSG(st.phase_utilisation[IPUP_PHASE_MAIN] > st.phase_utilisation[IPUP_PHASE_RAMP_UP],
                 "utilisation ramp-up %g main %g ramp-down %g", st.phase_utilisation[0], st.phase_utilisation[1], st.phase_utilisation[2]);
    TT_CHECK(st.phase_utilisation[IPUP_PHASE_MAIN] <= 1.0 + 1e-9);
    TT_CHECK(st.mem_high_water[0] > 0 && st.mem_high_water[0] <= st.mem_used[0]);
    g_trace_len = 0;
    TT_EQ_INT(ipup_trace_write(&g_emu, trace_sink, NULL), IPUP_OK);
    TT_CHECK(strncmp(g_trace, "{\"traceEvents\":[", 16) == 0);
    TT_CONTAINS(g_trace, "\"ph\":\"X\"");
    TT_CONTAINS(g_trace, "\"ph\":\"s\"");
    TT_CONTAINS(g_trace, "\"ph\":\"f\"");
    TT_CONTAINS(g_trace, "\"name\":\"update\"");
    TT_CONTAINS(g_trace, "IPU2 (replica 0, device 2)");
    TT_CHECK(strcmp(g_trace + g_trace_len - 4, "\n]}\n") == 0);
    g_trace_len = 0;
    TT_EQ_INT(ipup_memory_report_write(&g_emu, trace_sink, NULL), IPUP_OK);
    TT_CHECK(strncmp(g_trace, "IPU   weights grads optimizer stash exchange scratch | used", 59) == 0);
    TT_CONTAINS(g_trace, "\nIPU2 ");
    TT_CHECK(g_trace_len > 0 && g_trace[g_trace_len - 1] == '\n');
    {   /* a failing writer stops the report (and the trace) with IPUP_ERR_IO */
        g_fail_after = 1;
        TT_EQ_INT(ipup_memory_report_write(&g_emu, failing_sink, NULL), IPUP_ERR_IO);
        TT_EQ_INT(g_fail_calls, 2);
        g_fail_after = 3;
        g_fail_calls = 0;
        TT_EQ_INT(ipup_trace_write(&g_emu, failing_sink, NULL), IPUP_ERR_IO);
        TT_EQ_INT(g_fail_calls, 4);
        TT_EQ_INT(ipup_memory_report_write(&g_emu, NULL, NULL), IPUP_ERR_ARG);
        TT_EQ_INT(ipup_memory_report_write(NULL, trace_sink, NULL), IPUP_ERR_ARG);
    }
    {   /* outfeed records in order with the loss of each micro-batch */
        int32_t n;
        const ipup_outfeed_rec *r = ipup_outfeed_records(&g_emu, &n);
        TT_EQ_INT(n, 18);
        TT_EQ_INT(r[7].step, 1);
        TT_EQ_INT(r[7].mb, 1);
    }
    ipup_shutdown(&g_emu);
}

TTEST(checkpoint_roundtrip_and_eval) {
    /* train 2 steps, copy every tensor (weights + Adam state) and the step into a second
       emulator, train both 2 more steps: identical bits */
    ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
    ipup_config c2;
    int32_t i, n;
    static float a[8192], b[8192];
    static float x[64 * 12];
    static int32_t lab[64];
    double loss0 = 0.0, loss1 = 0.0;
    int64_t cor0 = 0, cor1 = 0;
    c.schedule = IPUP_SCHED_1F1B;
    c.stages = 2;
    c.opt.kind = IPUP_OPT_ADAM;
    c.opt.lr = 0.02f;
    c.repeat = 10;
    c2 = c;
    tiny_pools(&c2, 8, g_ipu2, g_stream, POOL_BYTES, g_host2, sizeof g_host2);
    c2.schedule = IPUP_SCHED_GPIPE;
    c2.runner = IPUP_RUNNER_THREADS;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_init(&g_emu2, &c2), IPUP_OK);
    for (i = 0; i < 64; i++) make_sample(12, 4, 100000 + i, x + i * 12, lab + i);
    TT_EQ_INT(ipup_evaluate(&g_emu, 64, x, lab, &loss0, &cor0), IPUP_OK);
    TT_EQ_INT(ipup_run_steps(&g_emu, 2, NULL), IPUP_OK);
    n = ipup_tensor_count(&g_emu);
    TT_EQ_INT(n, 4 * 2 * 3); /* 4 dense layers x (w, b) x (param, m, v) */
    for (i = 0; i < n; i++) {
        ipup_tensor_info t, u;
        ipup_tensor_get(&g_emu, i, &t);
        TT_EQ_INT(ipup_tensor_find(&g_emu2, t.name, &u), IPUP_OK);
        TT_EQ_INT(u.n, t.n);
        memcpy(u.data, t.data, (size_t)t.n * sizeof(float));
    }
    {
        ipup_tensor_info t;
        TT_EQ_INT(ipup_tensor_get(&g_emu, 1, &t), IPUP_OK);
        TT_STREQ(t.name, "dense16.b");
        TT_EQ_INT(ipup_tensor_get(&g_emu, 8, &t), IPUP_OK);
        TT_STREQ(t.name, "dense16.w.m");
        TT_EQ_INT(t.kind, IPUP_TENSOR_OPT_STATE);
        TT_EQ_INT(ipup_tensor_get(&g_emu, 16, &t), IPUP_OK);
        TT_STREQ(t.name, "dense16.w.v");
        TT_EQ_INT(t.ndim, 2);
        TT_EQ_INT(t.shape[0], 12);
        TT_EQ_INT(t.shape[1], 16);
    }
    ipup_replicas_sync(&g_emu2);
    ipup_set_step(&g_emu2, ipup_get_step(&g_emu));
    TT_EQ_INT(ipup_run_steps(&g_emu, 2, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run_steps(&g_emu2, 2, NULL), IPUP_OK);
    n = (int32_t)snapshot(&g_emu, a, 8192);
    TT_EQ_INT((int32_t)snapshot(&g_emu2, b, 8192), n);
    TT_CHECK(memcmp(a, b, (size_t)n * sizeof(float)) == 0);
    /* learning: more training lowers the held-out loss */
    if (!ttest_slow()) TT_EQ_INT(ipup_run_steps(&g_emu, 10, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run_steps(&g_emu, 10, NULL), IPUP_OK);
    TT_EQ_INT(ipup_evaluate(&g_emu, 64, x, lab, &loss1, &cor1), IPUP_OK);
    TT_CHECK_MSG(loss1 < loss0, "held-out loss %g -> %g", loss0 / 64, loss1 / 64);
    TT_CHECK_MSG(cor1 > cor0 || cor1 > 40, "correct %lld -> %lld", (long long)cor0, (long long)cor1);
    ipup_shutdown(&g_emu);
    ipup_shutdown(&g_emu2);
    ipup_shutdown(&g_emu2); /* twice is fine */
    {   /* after shutdown: tensors stay readable, a threaded run is refused instead of hanging */
        ipup_tensor_info t;
        TT_EQ_INT(ipup_tensor_get(&g_emu2, 0, &t), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu2, NULL), IPUP_ERR_ARG);
        TT_CONTAINS(ipup_last_error(&g_emu2), "ipup_shutdown");
    }
}

TTEST(balanced_split) {
    /* no split given: the dynamic programme balances FLOPs (fwd + bwd) */
    ipup_model_desc m;
    ipup_plan p;
    ipup_config c;
    tiny_model(&m, 1, 1, 784, "dense512,gelu,dense512,gelu,dense512,gelu,dense512,gelu,dense10,xent", NULL, 0);
    memset(&c, 0, sizeof c);
    c.model = &m;
    c.stages = 2;
    c.microbatches = 4;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &p), IPUP_OK);
    TT_EQ_INT(p.split[1], 4); /* [dense, gelu, dense, gelu] | [dense, gelu, dense, gelu, dense10, xent] */
    TT_EQ_INT(p.params, 784LL * 512 + 512 + 3 * (512 * 512 + 512) + 5130);
}

/* ------------------------------------------------------------------ ipup_balance_stages */
/* the stage cost of ipup_balance_stages' contract, from ipup_model_info */
static void bal_costs(const ipup_model_desc *m, int64_t *cost) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    int32_t l, any = 0;
    char msg[256];
    if (ipup_model_info(m, info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK) { printf("info: %s\n", msg); exit(2); }
    for (l = 0; l < m->n_layers; l++) {
        cost[l] = info[l].flops_fwd + info[l].flops_bwd_dw + (any ? info[l].flops_bwd_dx : 0) + 1;
        if (info[l].n_w) any = 1;
    }
}
/* largest stage cost and sum of squares of the split first[0..S] (first[S] = L) */
static void bal_score(const int64_t *cost, const int32_t *first, int32_t S, int64_t *mx, unsigned long long *sq) {
    int32_t s, l;
    *mx = 0;
    *sq = 0;
    for (s = 0; s < S; s++) {
        int64_t c = 0;
        for (l = first[s]; l < first[s + 1]; l++) c += cost[l];
        if (c > *mx) *mx = c;
        *sq += (unsigned long long)c * (unsigned long long)c;
    }
}
/* every split of L layers into S stages: the best (largest, then sum of squares) */
static void bal_brute(const int64_t *cost, int32_t *first, int32_t s, int32_t S, int32_t L, int64_t *best_mx,
                      unsigned long long *best_sq) {
    int32_t b;
    if (s == S) {
        int64_t mx;
        first[S] = L;
        unsigned long long sq;
        bal_score(cost, first, S, &mx, &sq);
        if (*best_mx < 0 || mx < *best_mx || (mx == *best_mx && sq < *best_sq)) { *best_mx = mx; *best_sq = sq; }
        return;
    }
    for (b = first[s - 1] + 1; b <= L - (S - s); b++) {
        first[s] = b;
        bal_brute(cost, first, s + 1, S, L, best_mx, best_sq);
    }
}

/* counts the splits whose largest stage is mx but whose sum of squares exceeds sq */
static void bal_count_worse(const int64_t *cost, int32_t *first, int32_t s, int32_t S, int32_t L, int64_t mx,
                            unsigned long long sq, int32_t *count) {
    int32_t b;
    if (s == S) {
        int64_t m2;
        first[S] = L;
        unsigned long long q2;
        bal_score(cost, first, S, &m2, &q2);
        if (m2 == mx && q2 > sq) (*count)++;
        return;
    }
    for (b = first[s - 1] + 1; b <= L - (S - s); b++) {
        first[s] = b;
        bal_count_worse(cost, first, s + 1, S, L, mx, sq, count);
    }
}

TTEST(balance_stages_matches_brute_force) {
    /* random models of 2..10 layers (repeated kinds make ties of the largest stage
       common, so the sum-of-squares rule is exercised), every stage count */
    static const char *const kinds[] = {"dense4", "dense8", "dense16", "relu", "gelu", "dropout0.5", "dense8", "relu"};
    int32_t k, checked = 0, ties = 0;
    for (k = 0; k < 300; k++) {
        char text[256];
        size_t pos = 0;
        int32_t n = 1 + (int32_t)ipup_rng_below(7, (uint64_t)k, 0, 9), i, S;
        ipup_model_desc m;
        int64_t cost[IPUP_MAX_LAYERS];
        for (i = 0; i < n; i++)
            pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s,", kinds[ipup_rng_below(7, (uint64_t)k, 1 + (uint64_t)i, 8)]);
        snprintf(text + pos, sizeof text - pos, "dense3,xent");
        tiny_model_or_exit(&m, 1, 1, 1 + (int32_t)ipup_rng_below(7, (uint64_t)k, 99, 12), text);
        bal_costs(&m, cost);
        for (S = 1; S <= m.n_layers; S++) {
            int32_t split[IPUP_MAX_LAYERS], first[IPUP_MAX_LAYERS + 1], s;
            int64_t mx, best_mx = -1;
            unsigned long long sq, best_sq = 0;
            char msg[256];
            ipup_plan p;
            ipup_config c;
            TT_EQ_INT(ipup_balance_stages(&m, S, split, msg, sizeof msg), IPUP_OK);
            TT_STREQ(msg, "");
            first[0] = 0;
            for (s = 1; s < S; s++) first[s] = split[s - 1];
            first[S] = m.n_layers;
            for (s = 0; s < S; s++) TT_CHECK_MSG(first[s] < first[s + 1], "model %s, %d stages: stage %d empty", text, (int)S, (int)s);
            bal_score(cost, first, S, &mx, &sq);
            {
                int32_t scratch[IPUP_MAX_LAYERS + 1];
                scratch[0] = 0;
                bal_brute(cost, scratch, 1, S, m.n_layers, &best_mx, &best_sq);
            }
            TT_CHECK_MSG(mx == best_mx && sq == best_sq, "model %s, %d stages: got max %lld sq %llu, brute force %lld %llu", text,
                         (int)S, (long long)mx, sq, (long long)best_mx, best_sq);
            /* splits as balanced by the largest stage but less even: the second rule
               decides (a single lexicographic programme gets some of these wrong) */
            {
                int32_t alt[IPUP_MAX_LAYERS + 1];
                int32_t worse = 0;
                alt[0] = 0;
                bal_count_worse(cost, alt, 1, S, m.n_layers, best_mx, best_sq, &worse);
                if (worse) ties++;
            }
            /* the emulator's default split is this one */
            memset(&c, 0, sizeof c);
            c.model = &m;
            c.stages = S;
            TT_EQ_INT(ipup_plan_config(&g_emu, &c, &p), IPUP_OK);
            for (s = 0; s < S; s++) TT_EQ_INT(p.split[s], first[s]);
            checked++;
        }
    }
    TT_CHECK(checked > 1000);
    TT_CHECK_MSG(ties > 50, "only %d cases where the sum of squares decides", (int)ties);
}

TTEST(balance_stages_errors) {
    ipup_model_desc m;
    int32_t split[8];
    char msg[256];
    tiny_model_or_exit(&m, 1, 1, 6, "dense8,relu,dense4,xent");
    TT_EQ_INT(ipup_balance_stages(&m, 5, split, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "5 stages but the model has only 4 layers");
    TT_CONTAINS(msg, "use at most 4 stages");
    TT_EQ_INT(ipup_balance_stages(&m, 0, split, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CONTAINS(msg, "0 stages; give 1 or more");
    TT_EQ_INT(ipup_balance_stages(&m, -3, split, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CONTAINS(msg, "-3 stages");
    TT_EQ_INT(ipup_balance_stages(NULL, 2, split, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CONTAINS(msg, "model is NULL");
    TT_EQ_INT(ipup_balance_stages(&m, 2, NULL, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CONTAINS(msg, "split is NULL; it needs stages - 1 = 1 entries");
    TT_EQ_INT(ipup_balance_stages(&m, 1, NULL, msg, sizeof msg), IPUP_OK); /* nothing to write */
    TT_EQ_INT(ipup_balance_stages(&m, 2, split, NULL, 0), IPUP_OK);        /* no message wanted */
    TT_EQ_INT(ipup_balance_stages(&m, 9, split, NULL, 0), IPUP_ERR_CONFIG);
    m.layers[3].kind = IPUP_LAYER_RELU; /* no loss at the end: ipup_model_info's error */
    TT_EQ_INT(ipup_balance_stages(&m, 2, split, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "last layer");
}

TTEST(pools_freeze_after_init) {
    /* a live emulator refuses what would carve its pools again (ipup_init, ipup_plan_config)
       and runs on untouched; ipup_shutdown releases the pools. Both runners. */
    static float before[REF_MAXF];
    int k;
    for (k = 0; k < 2; k++) {
        ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
        ipup_plan p;
        ipup_tensor_info t;
        c.stages = 3;
        c.runner = k ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        TT_EQ_INT(ipup_tensor_get(&g_emu, 0, &t), IPUP_OK);
        memcpy(before, t.data, (size_t)t.n * sizeof(float));
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_FROZEN);
        TT_CONTAINS(ipup_last_error(&g_emu), "ipup_init on an emulator that is already initialised: its pools are frozen");
        TT_CONTAINS(ipup_last_error(&g_emu), "call ipup_shutdown first");
        TT_EQ_INT(ipup_plan_config(&g_emu, &c, &p), IPUP_ERR_FROZEN);
        TT_CONTAINS(ipup_last_error(&g_emu), "ipup_plan_config on an emulator that is already initialised");
        TT_CONTAINS(ipup_last_error(&g_emu), "plan with another (scratch) ipup_emu, or call ipup_shutdown first");
        TT_EQ_INT(ipup_tensor_get(&g_emu, 0, &t), IPUP_OK);
        TT_CHECK(memcmp(before, t.data, (size_t)t.n * sizeof(float)) == 0);
        TT_EQ_INT(ipup_get_step(&g_emu), 3);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK); /* the threads are still there */
        TT_EQ_INT(ipup_get_step(&g_emu), 6);
        ipup_shutdown(&g_emu);
        ipup_shutdown(&g_emu); /* twice is fine */
        TT_EQ_INT(ipup_plan_config(&g_emu, &c, &p), IPUP_OK);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        ipup_shutdown(&g_emu);
    }
    {   /* a refused ipup_init freezes nothing: the next one needs no ipup_shutdown */
        ipup_config c = base_cfg(&g_mlp, &g_feed_mlp);
        c.ipu[0].bytes = 64;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_OOM);
        c = base_cfg(&g_mlp, &g_feed_mlp);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        ipup_shutdown(&g_emu);
    }
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(ring_wraps_32bit),
        TT_CASE(ring_spsc_threads),
        TT_CASE(model_parse_and_info),
        TT_CASE(bit_identical_every_schedule),
        TT_CASE(bit_identical_cnn_and_mapping),
        TT_CASE(random_configurations_match_plain_loop),
        TT_CASE(replication),
        TT_CASE(threaded_stress_random_delays),
        TT_CASE(replication_runners_identical),
        TT_CASE(offload_same_bits_and_memory),
        TT_CASE(offload_stage_without_weights),
        TT_CASE(plan_sizes_pools_exactly), TT_CASE(relu_ending_a_stage_before_a_pool_keeps_no_input),
        TT_CASE(argmax_pools_keep_a_byte_per_output),
        TT_CASE(bad_configurations),
        TT_CASE(nan_is_an_error_naming_step_and_stage),
        TT_CASE(infeed_failure_stops_cleanly),
        TT_CASE(cost_model_trace_and_stats),
        TT_CASE(checkpoint_roundtrip_and_eval),
        TT_CASE(balanced_split),
        TT_CASE(balance_stages_matches_brute_force),
        TT_CASE(balance_stages_errors),
        TT_CASE(pools_freeze_after_init),
    };
    models();
    return TTEST_MAIN(cases, argc, argv);
}
