/* tests/test_host_loop.c - the host's side of a run (ipupipe.h): the launch cost of each
   ipup_run (cost.launch_seconds, its default fitted to the Keras tutorial's figures, its
   refusals), synthetic data (cost.synthetic_data: no infeed time, no infeed event), and the
   outfeed as TF1 has it (cfg.outfeed_mode: loss, the last stage's outputs, both), streamed
   to the callback during the run in (step, replica, mb) order through bounded rings in the
   host pool, with outputs bit for bit those of ipup_predict on the same weights, on both
   runners; the host pool's bytes for the rings. Also run under ThreadSanitizer. */
#define _POSIX_C_SOURCE 200809L /* nanosleep for the slow callback */
#define TINY_MODEL_HELGRIND /* helgrind annotations of the rings, where available */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "tiny_model.h" /* includes ipupipe.h */
#include "ttest.h"

#define POOL_BYTES (256 * 1024)
#define IN_N 12
#define W_OUT 4
IPUP_ALIGN64 static uint8_t g_ipu[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 20];
static ipup_emu g_emu;
static ipup_model_desc g_mlp;

/* ------------------------------------------------------------------ data */
static void make_sample(int64_t idx, float *x, int32_t *label) {
    int32_t i;
    for (i = 0; i < IN_N; i++) x[i] = 2.0f * ipup_rng_uniform_f32(57, (uint64_t)idx, (uint64_t)i) - 1.0f;
    *label = (int32_t)(ipup_rng_u64(58, (uint64_t)idx, 0) % W_OUT);
}
/* the infeed: every sample from its global index; counts its calls (threads: atomically) */
static ipup_atomic_u32 g_fed;
static int feed(void *user, const ipup_feed *fd) {
    int32_t i;
    (void)user;
    if (fd->row != IN_N || !fd->labels) return -1;
    for (i = 0; i < fd->n; i++) make_sample(fd->sample0 + i, fd->x + (size_t)i * IN_N, fd->labels + i);
    (void)IPUP__FETCH_ADD(&g_fed, 1u);
    return 0;
}

/* ------------------------------------------------------------------ the outfeed callback */
#define MAXREC 256
typedef struct seen {
    int32_t n;
    ipup_outfeed_rec rec[MAXREC];
    float rows[MAXREC][8 * W_OUT];    /* a copy of each record's outputs (B <= 8) */
    uint32_t fed_at[MAXREC];          /* infeed calls when the record arrived */
    int null_outputs;                 /* records whose outputs were NULL */
    int slow;                         /* sleep 200 us in each call (a slow host) */
} seen;
static seen g_seen;
static void on_rec(void *user, const ipup_outfeed_rec *r) {
    seen *s = (seen *)user;
    if (s->n >= MAXREC) return;
    s->rec[s->n] = *r;
    s->fed_at[s->n] = IPUP__LOAD_ACQ(&g_fed);
    if (r->outputs) memcpy(s->rows[s->n], r->outputs, (size_t)r->n * (size_t)r->width * sizeof(float));
    else s->null_outputs++;
    s->n++;
    if (s->slow) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

static ipup_config cfg_of(int32_t S, int32_t R, int32_t M, int32_t repeat, ipup_runner_kind run,
                          int32_t mode) {
    ipup_config c = tiny_config(&g_mlp, S, 3, M, repeat, 99, IPUP_OPT_SGD, 0.05f, feed, NULL);
    tiny_pools(&c, 8, g_ipu, NULL, POOL_BYTES, g_host, sizeof g_host);
    c.replicas = R;
    c.runner = run;
    c.outfeed_mode = mode;
    c.outfeed = on_rec;
    c.outfeed_user = &g_seen;
    return c;
}

/* ------------------------------------------------------------------ launch cost */
TTEST(launch_cost_per_run) {
    const double L = (3e-3 - 175e-6) * 937.0 / 936.0; /* the Keras tutorial's fit */
    ipup_run_stats a, b;
    ipup_config c = cfg_of(2, 1, 4, 1, IPUP_RUNNER_COOP, IPUP_OUTFEED_LOSS);
    c.outfeed = NULL;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &a), IPUP_OK);
    TT_NEAR(a.launch_seconds, L, 1e-18);
    TT_NEAR(L, 2.828e-3, 1e-6);
    TT_NEAR(a.sim_seconds, a.step_seconds + L, 1e-15);
    TT_NEAR(a.busy_seconds[0] + a.idle_seconds[0], a.sim_seconds, 1e-15); /* the IPUs wait */
    TT_NEAR(a.samples_per_second, (double)a.samples / a.sim_seconds, 1e-6);
    ipup_shutdown(&g_emu);
    /* repeat 10: one launch for 10 steps, so a step costs step + L / 10 */
    c.repeat = 10;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &b), IPUP_OK);
    TT_NEAR(b.sim_seconds, 10.0 * b.step_seconds + L, 1e-15);
    TT_NEAR(b.step_seconds, a.step_seconds, 1e-18);
    TT_CHECK(b.sim_seconds / 10.0 < a.sim_seconds);
    /* a shorter call pays the whole launch too */
    TT_EQ_INT(ipup_run_steps(&g_emu, 3, &b), IPUP_OK);
    TT_NEAR(b.sim_seconds, 3.0 * b.step_seconds + L, 1e-15);
    ipup_shutdown(&g_emu);
    /* IPUP_LAUNCH_OFF (or any value below 1e-12): none; a value: that value */
    c.cost.launch_seconds = IPUP_LAUNCH_OFF;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &b), IPUP_OK);
    TT_CHECK(b.launch_seconds == 0.0);
    TT_CHECK(b.sim_seconds == 10.0 * b.step_seconds);
    ipup_shutdown(&g_emu);
    c.cost.launch_seconds = 0.5;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &b), IPUP_OK);
    TT_NEAR(b.sim_seconds, 10.0 * b.step_seconds + 0.5, 1e-12);
    ipup_shutdown(&g_emu);
}

TTEST(launch_cost_refusals) {
    static const double bad[] = {-1.0, -1e-300, (double)NAN, (double)INFINITY, 2e9};
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ipup_config c = cfg_of(2, 1, 4, 1, IPUP_RUNNER_COOP, IPUP_OUTFEED_LOSS);
        c.cost.launch_seconds = bad[i];
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&g_emu), "cfg.cost.launch_seconds");
        TT_CONTAINS(ipup_last_error(&g_emu), "IPUP_LAUNCH_OFF");
        ipup_shutdown(&g_emu);
    }
    {
        ipup_config c = cfg_of(2, 1, 4, 1, IPUP_RUNNER_COOP, IPUP_OUTFEED_LOSS);
        c.cost.synthetic_data = 2;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&g_emu), "cfg.cost.synthetic_data is 2");
        ipup_shutdown(&g_emu);
    }
}

/* ------------------------------------------------------------------ synthetic data */
static char g_trace[1 << 18];
static size_t g_trace_len;
static int trace_sink(void *user, const void *data, size_t len) {
    (void)user;
    if (g_trace_len + len >= sizeof g_trace) return -1;
    memcpy(g_trace + g_trace_len, data, len);
    g_trace_len += len;
    g_trace[g_trace_len] = 0;
    return 0;
}
TTEST(synthetic_data_has_no_infeed_cost) {
    ipup_run_stats a, b;
    ipup_config c = cfg_of(2, 1, 4, 1, IPUP_RUNNER_COOP, IPUP_OUTFEED_LOSS);
    c.outfeed = NULL;
    c.cost.host_bytes_per_s = 1e6; /* a slow host link: the infeed dominates */
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &a), IPUP_OK);
    g_trace_len = 0;
    TT_EQ_INT(ipup_trace_write(&g_emu, trace_sink, NULL), IPUP_OK);
    TT_CONTAINS(g_trace, "\"name\":\"infeed\"");
    ipup_shutdown(&g_emu);
    c.cost.synthetic_data = 1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &b), IPUP_OK);
    g_trace_len = 0;
    TT_EQ_INT(ipup_trace_write(&g_emu, trace_sink, NULL), IPUP_OK);
    TT_CHECK(strstr(g_trace, "\"name\":\"infeed\"") == NULL);
    /* 4 infeeds of 3 x (12 + 1) floats at 1 MB/s: 4 x 156 us less (the 4 F(0,m) columns) */
    TT_NEAR(a.step_seconds - b.step_seconds, 4.0 * 3.0 * 13.0 * 4.0 / 1e6, 1e-9);
    TT_CHECK(a.loss_mean == b.loss_mean); /* the same training */
    ipup_shutdown(&g_emu);
}

/* ------------------------------------------------------------------ outfeed */
/* One run of `steps` steps: the records arrive in (step, replica, mb) order, each before
   the infeed has run far ahead (so during the run), as the mode shapes them, and equal to
   ipup_outfeed_records' loss records. */
static void check_stream(int32_t S, int32_t R, int32_t M, ipup_runner_kind run, int32_t mode) {
    const int32_t steps = 4;
    ipup_config c = cfg_of(S, R, M, steps, run, mode);
    const ipup_outfeed_rec *recs;
    int32_t n, i;
    char what[96];
    snprintf(what, sizeof what, "S=%d R=%d M=%d %s mode %d", (int)S, (int)R, (int)M,
             run == IPUP_RUNNER_THREADS ? "threads" : "coop", (int)mode);
    memset(&g_seen, 0, sizeof g_seen);
    IPUP__STORE_REL(&g_fed, 0u);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    recs = ipup_outfeed_records(&g_emu, &n);
    TT_CHECK_MSG(g_seen.n == steps * R * M && n == g_seen.n, "%s: %d records, %d kept", what,
                 (int)g_seen.n, (int)n);
    for (i = 0; i < g_seen.n && i < n; i++) {
        const ipup_outfeed_rec *r = &g_seen.rec[i];
        int32_t t = i / (R * M), rr = (i / M) % R, m = i % M;
        TT_CHECK_MSG(r->step == t && r->replica == rr && r->mb == m, "%s: record %d is (%d,%d,%d)",
                     what, (int)i, (int)r->step, (int)r->replica, (int)r->mb);
        TT_CHECK(r->n == 3 && r->width == W_OUT);
        TT_CHECK(recs[i].outputs == NULL && recs[i].step == r->step && recs[i].mb == r->mb);
        if (mode == IPUP_OUTFEED_OUTPUTS) TT_CHECK(r->loss == 0.0f && r->correct == 0);
        else TT_CHECK(r->loss == recs[i].loss && r->correct == recs[i].correct && r->loss > 0.0f);
    }
    TT_EQ_INT(g_seen.null_outputs, mode == IPUP_OUTFEED_LOSS ? g_seen.n : 0);
    /* during the run: when step 0's first record arrived, at most two steps were fed (the
       cooperative runner: not even all of step 0's micro-batches of the later replicas) */
    TT_CHECK_MSG(g_seen.fed_at[0] <= (uint32_t)(2 * R * M) && g_seen.fed_at[0] < (uint32_t)(steps * R * M),
                 "%s: %u infeeds before the first record", what, g_seen.fed_at[0]);
    if (run == IPUP_RUNNER_COOP)
        for (i = 0; i < g_seen.n; i++) /* record (t, r, m) arrives before step t + 1 is fed */
            TT_CHECK(g_seen.fed_at[i] <= (uint32_t)((g_seen.rec[i].step + 1) * R * M));
    ipup_shutdown(&g_emu);
}
TTEST(outfeed_streams_during_the_run) {
    static const int32_t shapes[][3] = {{1, 1, 2}, {2, 1, 4}, {3, 1, 5}, {2, 2, 4}, {3, 2, 3}, {1, 3, 2}};
    int32_t k, run, mode;
    for (k = 0; k < 6; k++)
        for (run = 0; run < 2; run++)
            for (mode = 0; mode < 3; mode++)
                check_stream(shapes[k][0], shapes[k][1], shapes[k][2],
                             run ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP, mode);
}

/* the outputs of step 0 are ipup_predict's rows on the initial weights, on every replica */
static void check_outputs(int32_t S, int32_t R, ipup_runner_kind run) {
    const int32_t M = 4, B = 3, n = R * M * B;
    static float x[64 * IN_N], want[64 * W_OUT];
    int32_t lab, i;
    ipup_config c = cfg_of(S, R, M, 1, run, IPUP_OUTFEED_BOTH);
    for (i = 0; i < n; i++) make_sample(i, x + (size_t)i * IN_N, &lab); /* step 0's samples */
    memset(&g_seen, 0, sizeof g_seen);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_predict(&g_emu, n, x, want, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(g_seen.n, R * M);
    for (i = 0; i < g_seen.n; i++) {
        /* sample0 = (replica * M + mb) * B: record i's rows start at sample i * B */
        TT_CHECK_MSG(memcmp(g_seen.rows[i], want + (size_t)i * (size_t)B * W_OUT, (size_t)B * W_OUT * sizeof(float)) == 0,
                     "S=%d R=%d %s: record %d's outputs differ from ipup_predict's", (int)S, (int)R,
                     run == IPUP_RUNNER_THREADS ? "threads" : "coop", (int)i);
    }
    ipup_shutdown(&g_emu);
}
TTEST(outfeed_outputs_equal_predict) {
    int32_t S, R, run;
    for (S = 1; S <= 3; S++)
        for (R = 1; R <= 2; R++)
            for (run = 0; run < 2; run++) check_outputs(S, R, run ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP);
}

/* the device runner (IPU 0 on this thread, the others on pthreads through ipup_run_device):
   the same stream in the same order, the outputs of the cooperative runner's bits */
static void dev_wait(void *user, int32_t ipu) { (void)user; (void)ipu; (void)sched_yield(); }
static void dev_wake(void *user, int32_t ipu) { (void)user; (void)ipu; }
static const ipup_device_sync g_sync = {NULL, dev_wait, dev_wake};
typedef struct dev_arg { ipup_emu *e; int32_t ipu; int rc; } dev_arg;
static void *dev_main(void *arg) {
    dev_arg *d = (dev_arg *)arg;
    d->rc = ipup_run_device(d->e, d->ipu);
    return NULL;
}
static seen g_coop;
TTEST(outfeed_device_runner) {
    ipup_config c = cfg_of(2, 2, 4, 3, IPUP_RUNNER_COOP, IPUP_OUTFEED_BOTH);
    pthread_t th[3];
    dev_arg dev[3];
    int32_t q, i;
    memset(&g_seen, 0, sizeof g_seen);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    ipup_shutdown(&g_emu);
    g_coop = g_seen;
    memset(&g_seen, 0, sizeof g_seen);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_set_devices(&g_emu, &g_sync), IPUP_OK);
    for (q = 0; q < 3; q++) {
        dev[q].e = &g_emu; dev[q].ipu = q + 1; dev[q].rc = -1;
        TT_CHECK(pthread_create(&th[q], NULL, dev_main, &dev[q]) == 0);
    }
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    ipup_shutdown(&g_emu);
    for (q = 0; q < 3; q++) {
        pthread_join(th[q], NULL);
        TT_EQ_INT(dev[q].rc, IPUP_OK);
    }
    TT_EQ_INT(g_seen.n, 3 * 2 * 4);
    TT_EQ_INT(g_coop.n, g_seen.n);
    for (i = 0; i < g_seen.n; i++) {
        TT_CHECK(g_seen.rec[i].step == i / 8 && g_seen.rec[i].replica == (i / 4) % 2 && g_seen.rec[i].mb == i % 4);
        TT_CHECK(g_seen.rec[i].loss == g_coop.rec[i].loss);
        TT_CHECK(memcmp(g_seen.rows[i], g_coop.rows[i], 3 * W_OUT * sizeof(float)) == 0);
    }
}

/* a slow host: the last stage waits for ring room, the records still all arrive in order */
TTEST(outfeed_slow_callback_threads) {
    memset(&g_seen, 0, sizeof g_seen);
    g_seen.slow = 1;
    {
        ipup_config c = cfg_of(2, 2, 4, 6, IPUP_RUNNER_THREADS, IPUP_OUTFEED_BOTH);
        int32_t i;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        TT_EQ_INT(g_seen.n, 6 * 2 * 4);
        for (i = 0; i < g_seen.n; i++)
            TT_CHECK(g_seen.rec[i].step == i / 8 && g_seen.rec[i].replica == (i / 4) % 2 &&
                     g_seen.rec[i].mb == i % 4);
        ipup_shutdown(&g_emu);
    }
    g_seen.slow = 0;
}

/* The host pool: each replica's ring holds a step's records (the next power of two of M
   slots), a slot being the record (64 bytes) and the outputs; a pool one byte short is
   refused; a bad mode is refused. */
TTEST(outfeed_ring_bytes) {
    const int32_t R = 2, M = 5, B = 3, cap = 8; /* ring_cap(5) */
    ipup_config c = cfg_of(2, R, M, 16, IPUP_RUNNER_THREADS, IPUP_OUTFEED_LOSS);
    size_t loss_cb, outs, both, none, rec = (sizeof(ipup_outfeed_rec) + 63u) / 64u * 64u;
    size_t slot = (64u + (size_t)B * W_OUT * sizeof(float) + 63u) / 64u * 64u;
    loss_cb = ipup_host_bytes(&c);
    c.outfeed_mode = IPUP_OUTFEED_OUTPUTS;
    outs = ipup_host_bytes(&c);
    c.outfeed_mode = IPUP_OUTFEED_BOTH;
    both = ipup_host_bytes(&c);
    c.outfeed_mode = IPUP_OUTFEED_LOSS;
    c.outfeed = NULL; /* no callback: the threaded runner's ring holds the whole job's records */
    none = ipup_host_bytes(&c);
    TT_CHECK(outs == both);
    TT_EQ_INT((long long)(outs - loss_cb), (long long)((size_t)R * (size_t)cap * (slot - rec)));
    TT_EQ_INT((long long)(none - loss_cb), (long long)((size_t)R * (size_t)(128 - cap) * rec)); /* 16 x 5 -> 128 */
    c = cfg_of(2, R, M, 16, IPUP_RUNNER_THREADS, IPUP_OUTFEED_BOTH);
    c.host.bytes = both - 1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&g_emu), "host pool too small");
    ipup_shutdown(&g_emu);
    c.host.bytes = both;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    ipup_shutdown(&g_emu);
    c.outfeed_mode = 3;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "cfg.outfeed_mode is 3");
    ipup_shutdown(&g_emu);
}

/* the outputs travel over the host link: F(S-1,m) costs B x W x 4 bytes more */
TTEST(outfeed_outputs_cost) {
    ipup_run_stats a, b;
    ipup_config c = cfg_of(2, 1, 4, 1, IPUP_RUNNER_COOP, IPUP_OUTFEED_LOSS);
    c.cost.host_bytes_per_s = 1e6;
    c.cost.synthetic_data = 1; /* no infeed: the 4 F(1,m) are their columns' longest ops */
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &a), IPUP_OK);
    ipup_shutdown(&g_emu);
    c.outfeed_mode = IPUP_OUTFEED_OUTPUTS;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, &b), IPUP_OK);
    TT_NEAR(b.step_seconds - a.step_seconds, 4.0 * 3.0 * W_OUT * 4.0 / 1e6, 1e-9);
    ipup_shutdown(&g_emu);
}

/* the transport runner brings every process the loss records, not the outputs */
static void *tp_ring(void *u, ipup_ring *r) { (void)u; (void)r; return NULL; }
static void tp_void(void *u, ipup_ring *r) { (void)u; (void)r; }
static int tp_step(void *u, int64_t t) { (void)u; (void)t; return 0; }
static int tp_end(void *u, int64_t t, int32_t k) { (void)u; (void)t; (void)k; return 0; }
TTEST(outfeed_outputs_not_over_a_transport) {
    ipup_transport tp = {NULL, 0, tp_ring, tp_ring, tp_void, tp_void, tp_step, tp_step, tp_end};
    ipup_config c = cfg_of(2, 1, 4, 1, IPUP_RUNNER_COOP, IPUP_OUTFEED_OUTPUTS);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_set_transport(&g_emu, &tp), IPUP_ERR_UNSUPPORTED);
    TT_CONTAINS(ipup_last_error(&g_emu), "IPUP_OUTFEED_LOSS");
    ipup_shutdown(&g_emu);
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(launch_cost_per_run),
        TT_CASE(launch_cost_refusals),
        TT_CASE(synthetic_data_has_no_infeed_cost),
        TT_CASE(outfeed_streams_during_the_run),
        TT_CASE(outfeed_outputs_equal_predict),
        TT_CASE(outfeed_slow_callback_threads),
        TT_CASE(outfeed_device_runner),
        TT_CASE(outfeed_ring_bytes),
        TT_CASE(outfeed_outputs_cost),
        TT_CASE(outfeed_outputs_not_over_a_transport),
    };
    tiny_model_or_exit(&g_mlp, 1, 1, IN_N, "dense16,relu,dense8,relu,dense4,xent");
    return TTEST_MAIN(cases, argc, argv);
}
