/* tests/test_predict.c - ipup_predict (ipupipe.h): the loss layer's input and the arg-max
   class of n samples, bit for bit equal to a plain forward over the kernels (ref_infer of
   ref_model.h: unfused, one micro-batch of cfg.microbatch samples after the other, the
   last one shorter), on the tiny mlp and cnn models, before and after training, on 1..S stages,
   every schedule, both runners; the error paths and their messages; no heap call.
   Linked with the allocator wrappers (LDFLAGS_test_predict in the Makefile). */
#define TINY_MODEL_HELGRIND /* helgrind annotations of the rings, where available */
#include "tiny_model.h" /* includes ipupipe.h */
#include "heap_count.h"
#include "ref_model.h"
#include "ttest.h"

#define POOL_BYTES (256 * 1024)
#define NMAX 64
#define WMAX 8
IPUP_ALIGN64 static uint8_t g_ipu[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 19];
static ipup_emu g_emu;

/* ------------------------------------------------------------------ data */
typedef struct feed_ctx { int32_t in_n, classes; } feed_ctx;
static void make_sample(const feed_ctx *f, int64_t idx, float *x, int32_t *label) {
    int32_t i, c, best = 0;
    float bv = -1e30f;
    for (i = 0; i < f->in_n; i++) x[i] = 2.0f * ipup_rng_uniform_f32(91, (uint64_t)idx, (uint64_t)i) - 1.0f;
    for (c = 0; c < f->classes; c++) {
        float v = 0.0f;
        for (i = 0; i < f->in_n; i++) v += x[i] * (float)(((i * 5 + c * 3) % 7) - 3);
        if (v > bv) { bv = v; best = c; }
    }
    *label = best;
}
static int feed(void *user, const ipup_feed *fd) {
    const feed_ctx *f = (const feed_ctx *)user;
    int32_t i;
    if (fd->row != f->in_n || !fd->labels) return -1;
    for (i = 0; i < fd->n; i++) make_sample(f, fd->sample0 + i, fd->x + (size_t)i * (size_t)f->in_n, fd->labels + i);
    return 0;
}

/* ------------------------------------------------------------------ reference forward */
static ref_model g_ref; /* ref_model.h */

/* the plain forward of n samples of x in micro-batches of B (no fusion, dropout off) with
   g_ref's model and weights: out (n, width), cls (n) as "first maximum" */
static void ref_predict(int32_t B, int32_t n, const float *x, float *out, int32_t *cls) {
    static float act[IPUP_MAX_LAYERS + 1][REF_ACT];
    int32_t L = g_ref.md.n_layers, W = g_ref.info[L - 1].in_n, in_n = g_ref.info[0].in_n, i0, i, j;
    for (i0 = 0; i0 < n; i0 += B) {
        int32_t Bn = n - i0 < B ? n - i0 : B;
        memcpy(act[0], x + (size_t)i0 * (size_t)in_n, (size_t)Bn * (size_t)in_n * sizeof(float));
        ref_infer(&g_ref, Bn, act);
        memcpy(out + (size_t)i0 * (size_t)W, act[L - 1], (size_t)Bn * (size_t)W * sizeof(float));
        for (i = 0; i < Bn; i++) {
            const float *z = act[L - 1] + (size_t)i * (size_t)W;
            int32_t best = 0;
            for (j = 1; j < W; j++) if (z[j] > z[best]) best = j;
            cls[i0 + i] = best;
        }
    }
}

static ipup_model_desc g_mlp, g_cnn;
static feed_ctx g_fmlp = {12, 4}, g_fcnn = {36, 3};
static float g_x[NMAX * 36], g_out[NMAX * WMAX], g_ref_out[NMAX * WMAX];
static int32_t g_cls[NMAX], g_ref_cls[NMAX], g_lab[NMAX];

static void setup(void) {
    int32_t i;
    tiny_model_or_exit(&g_mlp, 1, 1, 12, "dense16,gelu,dropout0.25,dense12,relu,dense8,relu,dense4,xent");
    tiny_model_or_exit(&g_cnn, 6, 6, 1, "conv4,relu,maxpool2,flatten,dense3,xent");
    for (i = 0; i < NMAX; i++) make_sample(&g_fcnn, 100000 + i, g_x + (size_t)i * 36, &g_lab[i]);
}

static ipup_config cfg_of(const ipup_model_desc *md, feed_ctx *f, int32_t S, ipup_sched_kind k, ipup_runner_kind run) {
    ipup_config c = tiny_config(md, S, 3, 4, 2, 4321, IPUP_OPT_MOMENTUM, 0.05f, feed, f);
    tiny_pools(&c, 8, g_ipu, NULL, POOL_BYTES, g_host, sizeof g_host);
    c.schedule = k;
    c.runner = run;
    return c;
}

/* predict n samples and compare with the reference; returns the number of mismatches */
static int check_predict(const ipup_model_desc *md, int32_t n, const char *what) {
    int32_t W = ipup_output_width(&g_emu), i;
    int rc, bad = 0;
    memset(g_out, 0xff, sizeof g_out);
    memset(g_cls, 0xff, sizeof g_cls);
    ref_set_model(&g_ref, md);
    ref_load(&g_ref, &g_emu);
    ref_predict(g_emu.core.B, n, g_x, g_ref_out, g_ref_cls);
    rc = ipup_predict(&g_emu, n, g_x, g_out, g_cls);
    if (rc) { TT_FAILF("%s: ipup_predict: %.300s", what, ipup_last_error(&g_emu)); return 1; }
    if (memcmp(g_out, g_ref_out, (size_t)n * (size_t)W * sizeof(float)) != 0) { TT_FAILF("%s: outputs differ from the plain forward", what); bad++; }
    for (i = 0; i < n; i++) if (g_cls[i] != g_ref_cls[i]) { TT_FAILF("%s: class of sample %d: %d, reference %d", what, (int)i, (int)g_cls[i], (int)g_ref_cls[i]); bad++; break; }
    /* the untouched tails stay as they were */
    if (n < NMAX && g_cls[n] != -1) { TT_FAILF("%s: cls written past n", what); bad++; }
    /* cls alone and out alone give the same */
    memset(g_cls, 0xff, sizeof g_cls);
    if (ipup_predict(&g_emu, n, g_x, NULL, g_cls) != IPUP_OK || memcmp(g_cls, g_ref_cls, (size_t)n * sizeof(int32_t)) != 0) { TT_FAILF("%s: cls without out differs", what); bad++; }
    memset(g_out, 0, sizeof g_out);
    if (ipup_predict(&g_emu, n, g_x, g_out, NULL) != IPUP_OK || memcmp(g_out, g_ref_out, (size_t)n * (size_t)W * sizeof(float)) != 0) { TT_FAILF("%s: out without cls differs", what); bad++; }
    return bad;
}

TTEST(output_width) {
    ipup_config c = cfg_of(&g_mlp, &g_fmlp, 2, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP);
    TT_EQ_INT(ipup_output_width(NULL), 0);
    memset(&g_emu, 0, sizeof g_emu);
    TT_EQ_INT(ipup_output_width(&g_emu), 0);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_output_width(&g_emu), 4);
    ipup_shutdown(&g_emu);
    c = cfg_of(&g_cnn, &g_fcnn, 1, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_output_width(&g_emu), 3);
    ipup_shutdown(&g_emu);
}

static const ipup_sched_kind k_all[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL, IPUP_SCHED_GPIPE,
                                        IPUP_SCHED_1F1B, IPUP_SCHED_INTERLEAVED_1F1B, IPUP_SCHED_ZBH1};

/* every model x stages x schedule x runner: predict before and after training, n = 1, a
   multiple of B and not, equal to the plain forward */
TTEST(bits_equal_plain_forward_everywhere) {
    static const int32_t ns[] = {1, 3, 7, 13, NMAX};
    int32_t mi, S, ki, ri, j, runs = 0;
    for (mi = 0; mi < 2; mi++) {
        const ipup_model_desc *md = mi ? &g_cnn : &g_mlp;
        feed_ctx *f = mi ? &g_fcnn : &g_fmlp;
        int32_t Smax = mi ? 3 : 4;
        if (mi) { int32_t i; for (i = 0; i < NMAX; i++) make_sample(&g_fcnn, 100000 + i, g_x + (size_t)i * 36, &g_lab[i]); }
        else { int32_t i; for (i = 0; i < NMAX; i++) make_sample(&g_fmlp, 100000 + i, g_x + (size_t)i * 12, &g_lab[i]); }
        for (S = 1; S <= Smax; S++)
            for (ki = 0; ki < (int32_t)(sizeof k_all / sizeof k_all[0]); ki++)
                for (ri = 0; ri < 2; ri++) {
                    char what[160];
                    ipup_config c = cfg_of(md, f, S, k_all[ki], ri ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP);
                    int rc = ipup_init(&g_emu, &c);
                    snprintf(what, sizeof what, "%s S=%d %s %s", mi ? "cnn" : "mlp", (int)S, ipup_sched_kind_name(k_all[ki]), ri ? "threads" : "coop");
                    if (rc == IPUP_ERR_CONFIG) continue; /* a schedule that needs another S */
                    if (rc) { TT_FAILF("%s: init: %.300s", what, ipup_last_error(&g_emu)); continue; }
                    for (j = 0; j < (int32_t)(sizeof ns / sizeof ns[0]); j++) check_predict(md, ns[j], what);
                    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
                    for (j = 0; j < (int32_t)(sizeof ns / sizeof ns[0]); j++) check_predict(md, ns[j], what);
                    ipup_shutdown(&g_emu);
                    /* after shutdown too (the host walks the table) */
                    check_predict(md, 7, what);
                    runs++;
                }
    }
    TT_CHECK(runs >= 2 * 7 * 2 * 2);
}

/* weights written through ipup_tensor_find + ipup_replicas_sync change the predictions
   exactly as the reference says */
TTEST(after_tensor_write) {
    ipup_config c = cfg_of(&g_mlp, &g_fmlp, 2, IPUP_SCHED_1F1B, IPUP_RUNNER_COOP);
    ipup_tensor_info t;
    int32_t i;
    c.replicas = 2;
    for (i = 0; i < NMAX; i++) make_sample(&g_fmlp, 100000 + i, g_x + (size_t)i * 12, &g_lab[i]);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense4.w", &t), IPUP_OK);
    for (i = 0; i < t.n; i++) t.data[i] = (float)((i * 13) % 7 - 3) * 0.125f;
    TT_EQ_INT(ipup_replicas_sync(&g_emu), IPUP_OK);
    check_predict(&g_mlp, 11, "after a tensor write");
    ipup_shutdown(&g_emu);
}

TTEST(argument_errors_have_messages) {
    ipup_config c = cfg_of(&g_mlp, &g_fmlp, 2, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP);
    TT_EQ_INT(ipup_predict(NULL, 1, g_x, g_out, g_cls), IPUP_ERR_ARG);
    memset(&g_emu, 0, sizeof g_emu);
    TT_EQ_INT(ipup_predict(&g_emu, 1, g_x, g_out, g_cls), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "not initialised");
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    g_cls[0] = 77;
    TT_EQ_INT(ipup_predict(&g_emu, -1, g_x, g_out, g_cls), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "n = -1");
    TT_EQ_INT(ipup_predict(&g_emu, 3, NULL, g_out, g_cls), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "x is NULL");
    TT_EQ_INT(g_cls[0], 77); /* nothing written */
    TT_EQ_INT(ipup_predict(&g_emu, 0, NULL, NULL, NULL), IPUP_OK);
    TT_EQ_INT(ipup_last_error(&g_emu)[0], 0);
    TT_EQ_INT(ipup_predict(&g_emu, 2, g_x, NULL, NULL), IPUP_OK); /* allowed: computes, keeps nothing */
    ipup_shutdown(&g_emu);
}

/* the memory report and the plan count the predict rows as scratch of the last stage */
TTEST(plan_counts_predict_scratch) {
    ipup_config c = cfg_of(&g_mlp, &g_fmlp, 2, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP);
    ipup_plan p;
    ipup_mem_report r;
    TT_EQ_INT(ipup_plan_config(&g_emu, &c, &p), IPUP_OK);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_memory_report(&g_emu, 1, &r), IPUP_OK);
    TT_EQ_INT(r.used, p.ipu_bytes[1]);
    TT_EQ_INT(r.by_category[IPUP_MEM_SCRATCH], p.mem[1].by_category[IPUP_MEM_SCRATCH]);
    TT_CHECK(g_emu.stage_rt[0][1].pred != NULL);
    TT_CHECK((uint8_t *)g_emu.stage_rt[0][1].pred >= g_ipu[1] && (uint8_t *)g_emu.stage_rt[0][1].pred < g_ipu[1] + POOL_BYTES);
    ipup_shutdown(&g_emu);
}

static void no_heap_run(ipup_runner_kind run) {
    ipup_config c = cfg_of(&g_cnn, &g_fcnn, 3, IPUP_SCHED_GPIPE, run);
    long before;
    int32_t i;
    for (i = 0; i < NMAX; i++) make_sample(&g_fcnn, 100000 + i, g_x + (size_t)i * 36, &g_lab[i]);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    before = g_heap_calls;
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_predict(&g_emu, 29, g_x, g_out, g_cls), IPUP_OK);
    TT_EQ_INT(ipup_predict(&g_emu, 3, g_x, NULL, g_cls), IPUP_OK);
    TT_EQ_INT(ipup_predict(&g_emu, -1, g_x, NULL, g_cls), IPUP_ERR_ARG);
    TT_EQ_INT(g_heap_calls - before, 0);
    ipup_shutdown(&g_emu);
}
TTEST(wrappers_count_calls) {
    void *(*volatile m)(size_t) = malloc;
    void (*volatile fr)(void *) = free;
    long before = g_heap_calls;
    fr(m(16));
    TT_EQ_INT(g_heap_calls - before, 2);
}
TTEST(no_heap_coop) { no_heap_run(IPUP_RUNNER_COOP); }
TTEST(no_heap_threads) { no_heap_run(IPUP_RUNNER_THREADS); }


/* the threaded runner with random delays before each op gives the cooperative bits */
static void delay_hook(void *user, int32_t ipu, const ipup_op *op) {
    volatile int32_t k, n = (int32_t)(ipup_rng_u64(5, (uint64_t)(op->stage * 131 + op->mb), (uint64_t)ipu) % 20000u);
    (void)user;
    for (k = 0; k < n; k++) { }
}
TTEST(threads_with_delays) {
    int32_t i, rep;
    for (i = 0; i < NMAX; i++) make_sample(&g_fmlp, 100000 + i, g_x + (size_t)i * 12, &g_lab[i]);
    for (rep = 0; rep < 3; rep++) {
        ipup_config c = cfg_of(&g_mlp, &g_fmlp, 4, rep == 1 ? IPUP_SCHED_SEQUENTIAL : IPUP_SCHED_GPIPE, IPUP_RUNNER_THREADS);
        int16_t map[4] = {0, 1, 0, 1};
        if (rep == 2) { c.stage_device = map; c.schedule = IPUP_SCHED_1F1B; }
        c.op_hook = delay_hook;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        check_predict(&g_mlp, NMAX, rep == 2 ? "threads, shared devices" : "threads with delays");
        ipup_shutdown(&g_emu);
    }
}

/* the cost model's figures of the forward-only table: gpipe on 3 IPUs, M = 4 */
TTEST(figures_of_the_forward_only_table) {
    ipup_config c = cfg_of(&g_cnn, &g_fcnn, 3, IPUP_SCHED_GPIPE, IPUP_RUNNER_COOP);
    ipup_predict_stats st, sq;
    int32_t i;
    memset(&st, 0, sizeof st);
    memset(&sq, 0, sizeof sq);
    for (i = 0; i < NMAX; i++) make_sample(&g_fcnn, 100000 + i, g_x + (size_t)i * 36, &g_lab[i]);
    TT_EQ_INT(ipup_predict_figures(NULL, &st), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_predict_figures(&g_emu, NULL), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_predict_figures(&g_emu, &st), IPUP_OK);
    TT_EQ_INT(st.schedule, IPUP_SCHED_GPIPE);
    TT_EQ_INT(st.steps, 3 + 4 - 1);
    TT_EQ_INT(st.microbatches, 4);
    TT_EQ_INT(st.inflight[0], 1);
    TT_EQ_INT(st.inflight[1], 2);
    TT_EQ_INT(st.inflight[2], 2);
    TT_CHECK(st.latency_seconds > 0.0 && st.wave_seconds > st.latency_seconds);
    TT_CHECK(st.samples_per_second > 3.0 / st.latency_seconds); /* pipelining beats one micro-batch at a time */
    TT_EQ_INT(ipup_predict(&g_emu, 29, g_x, g_out, g_cls), IPUP_OK); /* 10 micro-batches of 3: 3 waves of 4 */
    TT_EQ_INT(ipup_predict_figures(&g_emu, &st), IPUP_OK);
    TT_EQ_INT(st.last_samples, 29);
    TT_NEAR(st.last_seconds, 3.0 * st.wave_seconds, 1e-15);
    ipup_shutdown(&g_emu);
    /* sequential: one IPU at a time: no longer latency (a lock step of gpipe lasts its
       slowest stage), a lower rate */
    c.schedule = IPUP_SCHED_SEQUENTIAL;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_predict_figures(&g_emu, &sq), IPUP_OK);
    TT_EQ_INT(sq.steps, 3 * 4);
    TT_CHECK(sq.latency_seconds <= st.latency_seconds && sq.latency_seconds > 0.0);
    TT_CHECK(sq.samples_per_second < st.samples_per_second);
    ipup_shutdown(&g_emu);
    /* zb-h1 has no forward-only form: gpipe's runs */
    c.schedule = IPUP_SCHED_ZBH1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_predict_figures(&g_emu, &sq), IPUP_OK);
    TT_EQ_INT(sq.schedule, IPUP_SCHED_GPIPE);
    ipup_shutdown(&g_emu);
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(output_width),
        TT_CASE(bits_equal_plain_forward_everywhere),
        TT_CASE(after_tensor_write),
        TT_CASE(argument_errors_have_messages),
        TT_CASE(plan_counts_predict_scratch),
        TT_CASE(wrappers_count_calls),
        TT_CASE(no_heap_coop),
        TT_CASE(no_heap_threads),
        TT_CASE(threads_with_delays),
        TT_CASE(figures_of_the_forward_only_table),
    };
    setup();
    return TTEST_MAIN(cases, argc, argv);
}
