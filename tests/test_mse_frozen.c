/* tests/test_mse_frozen.c - regression and fine-tuning: the mean-squared-error kernel
   against finite differences, the mse loss layer and frozen layers in the emulator
   (ipupipe.h) against the plain gradient-accumulation loop of ref_model.h (bit for bit, over
   schedules, runners, stage counts, replicas, recomputation, offload), the infeed's view
   of a regression model, the memory a frozen layer saves, the tensor list, the parser's
   messages. */
#include "tiny_model.h" /* includes ipupipe.h */
#include "ref_model.h"
#include "ttest.h"

/* ------------------------------------------------------------------ pools */
#define POOL_BYTES (256 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_stream[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 20];
static ipup_emu g_emu;

/* ------------------------------------------------------------------ kernel */
/* the loss in double: mean over all B*N elements of (p - t)^2 */
static double ref_mse(int B, int N, const double *p, const float *t) {
    double s = 0.0;
    int i;
    for (i = 0; i < B * N; i++) s += (p[i] - (double)t[i]) * (p[i] - (double)t[i]);
    return s / (double)(B * N);
}

static void check_mse(int B, int N) {
    static float p[512], t[512], d[512], d2[512];
    static double pd[512];
    int i, n = B * N;
    double worst = 0.0, loss_ref;
    float loss;
    for (i = 0; i < n; i++) {
        p[i] = 2.0f * ipup_rng_uniform_f32(5, (uint64_t)n, (uint64_t)i) - 1.0f;
        t[i] = 2.0f * ipup_rng_uniform_f32(6, (uint64_t)n, (uint64_t)i) - 1.0f;
        pd[i] = (double)p[i];
    }
    loss = ipup_mse_f32(B, N, p, t, d);
    loss_ref = ref_mse(B, N, pd, t);
    TT_NEAR(loss, loss_ref, 1e-5 * (1.0 + loss_ref));
    /* central finite differences of the double loss (exact for a quadratic up to rounding) */
    for (i = 0; i < n; i++) {
        const double h = 1e-3;
        double lp, lm, g;
        pd[i] = (double)p[i] + h;
        lp = ref_mse(B, N, pd, t);
        pd[i] = (double)p[i] - h;
        lm = ref_mse(B, N, pd, t);
        pd[i] = (double)p[i];
        g = (lp - lm) / (2.0 * h);
        if (fabs(g - (double)d[i]) / (fabs(g) + 1e-6) > worst) worst = fabs(g - (double)d[i]) / (fabs(g) + 1e-6);
    }
    TT_CHECK_MSG(worst < 1e-4, "mse dpred vs FD B%d N%d: relative error %g", B, N, worst);
    /* NULL dpred: the same loss bits; dpred aliasing pred: the same gradient bits */
    TT_CHECK(ipup_mse_f32(B, N, p, t, NULL) == loss);
    memcpy(d2, p, (size_t)n * sizeof(float));
    TT_CHECK(ipup_mse_f32(B, N, d2, t, d2) == loss);
    TT_CHECK(memcmp(d2, d, (size_t)n * sizeof(float)) == 0);
}

TTEST(mse_kernel_finite_differences) {
    check_mse(1, 1);
    check_mse(1, 7);
    check_mse(3, 5);
    check_mse(4, 37);
    check_mse(16, 12);
}

TTEST(mse_kernel_values) {
    const float p[4] = {1.0f, 2.0f, 3.0f, 4.0f}, t[4] = {1.0f, 0.0f, 3.0f, 2.0f};
    float d[4];
    /* errors 0, 2, 0, 2: squares 0 + 4 + 0 + 4 = 8 over 4 elements */
    TT_CHECK(ipup_mse_f32(2, 2, p, t, d) == 2.0f);
    TT_CHECK(d[0] == 0.0f && d[1] == 1.0f && d[2] == 0.0f && d[3] == 1.0f); /* 2 * 2 / 4 */
    TT_CHECK(ipup_mse_f32(2, 2, t, t, d) == 0.0f);
}

/* ------------------------------------------------------------------ data */
typedef struct feed_ctx {
    int in_n, classes, tw; /* tw: target width of a regression model, else 0 */
    /* per replica (the threaded runner feeds the replicas concurrently): infeed calls, and
       those that saw the wrong fields */
    int calls[IPUP_MAX_REPLICAS], bad[IPUP_MAX_REPLICAS];
} feed_ctx;
static int sum_of(const int *v) {
    int i, n = 0;
    for (i = 0; i < IPUP_MAX_REPLICAS; i++) n += v[i];
    return n;
}

static void make_x(int in_n, int64_t idx, float *x) {
    int i;
    for (i = 0; i < in_n; i++) x[i] = 2.0f * ipup_rng_uniform_f32(91, (uint64_t)idx, (uint64_t)i) - 1.0f;
}
static int32_t make_label(int in_n, int classes, const float *x) {
    int i, c, best = 0;
    float bv = -1e30f;
    for (c = 0; c < classes; c++) {
        float v = 0.0f;
        for (i = 0; i < in_n; i++) v += x[i] * (float)(((i * 5 + c * 3) % 7) - 3);
        if (v > bv) { bv = v; best = c; }
    }
    return best;
}
/* a learnable regression target: a fixed linear map of x */
static void make_target(int in_n, int tw, const float *x, float *y) {
    int j;
    for (j = 0; j < tw; j++) y[j] = 0.5f * x[j % in_n] - 0.25f * x[(3 * j + 1) % in_n];
}

static void fill(const feed_ctx *f, int64_t sample0, int32_t n, float *x, int32_t *labels, float *targets) {
    int32_t i;
    for (i = 0; i < n; i++) {
        float *xi = x + (size_t)i * (size_t)f->in_n;
        make_x(f->in_n, sample0 + i, xi);
        if (f->tw) make_target(f->in_n, f->tw, xi, targets + (size_t)i * (size_t)f->tw);
        else labels[i] = make_label(f->in_n, f->classes, xi);
    }
}

static int feed(void *user, const ipup_feed *fd) {
    feed_ctx *f = (feed_ctx *)user;
    int ok = fd->row == f->in_n && fd->x;
    if (fd->replica < 0 || fd->replica >= IPUP_MAX_REPLICAS) return -1;
    f->calls[fd->replica]++;
    if (f->tw) ok = ok && fd->targets && !fd->labels && fd->classes == 0 && fd->target_width == f->tw;
    else ok = ok && fd->labels && !fd->targets && fd->classes == f->classes && fd->target_width == 0;
    if (!ok) { f->bad[fd->replica]++; return -1; }
    fill(f, fd->sample0, fd->n, fd->x, fd->labels, fd->targets);
    return 0;
}

/* ------------------------------------------------------------------ reference: the plain loop */
static ref_model g_ref; /* ref_model.h */
static float g_init_w[IPUP_MAX_LAYERS][REF_MAXF]; /* its weights when run_and_compare began */

/* frozen layers of e whose weights moved from their initial values; trained layers that
   did not move (training must change them) */
static int frozen_moved(ipup_emu *e, int *trained_still) {
    int32_t i, n = ipup_tensor_count(e), moved = 0;
    *trained_still = 0;
    for (i = 0; i < n; i++) {
        ipup_tensor_info t;
        int same;
        ipup_tensor_get(e, i, &t);
        if (t.kind != IPUP_TENSOR_PARAM || t.ndim == 1) continue;
        same = memcmp(g_init_w[t.layer], t.data, (size_t)t.n * sizeof(float)) == 0;
        if (e->core.model.layers[t.layer].frozen) moved += !same;
        else *trained_still += same;
    }
    return moved;
}

static ipup_config base_cfg(const ipup_model_desc *md, feed_ctx *fc) {
    ipup_config c = tiny_config(md, 0, 3, 4, 3, 4321, IPUP_OPT_SGD, 0.05f, feed, fc);
    tiny_pools(&c, 8, g_ipu, g_stream, POOL_BYTES, g_host, sizeof g_host);
    return c;
}

/* train with the emulator and the reference; return the number of differing tensors */
static int run_and_compare(ipup_config *c, feed_ctx *fc, int steps, const char *what) {
    int rc, bad, k, still = 0;
    memset(fc->bad, 0, sizeof fc->bad);
    rc = ipup_init(&g_emu, c);
    if (rc) { TT_FAILF("%s: init: %.400s", what, ipup_last_error(&g_emu)); return -1; }
    ref_begin(&g_ref, c, &g_emu);
    memcpy(g_init_w, g_ref.w, sizeof g_init_w);
    for (k = 0; k < steps; k += c->repeat) {
        int32_t n = steps - k < c->repeat ? steps - k : c->repeat, j;
        rc = ipup_run_steps(&g_emu, n, NULL);
        if (rc) { TT_FAILF("%s: run: %.400s", what, ipup_last_error(&g_emu)); ipup_shutdown(&g_emu); return -1; }
        for (j = 0; j < n; j++) ref_step(&g_ref, k + j, feed, fc);
    }
    TT_EQ_INT(sum_of(fc->bad), 0);
    bad = ref_diff(&g_ref, &g_emu, NULL);
    if (bad) TT_FAILF("%s: %d tensors differ from the plain loop", what, bad);
    TT_CHECK_MSG(frozen_moved(&g_emu, &still) == 0, "%s: a frozen layer's weights changed", what);
    TT_CHECK_MSG(still == 0, "%s: %d trained weight tensors did not change", what, still);
    ipup_shutdown(&g_emu);
    return bad;
}

static const ipup_sched_kind k_all[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL,
                                        IPUP_SCHED_GPIPE, IPUP_SCHED_1F1B, IPUP_SCHED_INTERLEAVED_1F1B, IPUP_SCHED_ZBH1};

/* every schedule x both runners x recomputation, 3 or 4 stages, the three optimizers */
static void every_schedule(const ipup_model_desc *md, feed_ctx *fc, const char *name) {
    int ks, runner, rec;
    for (ks = 0; ks < 7; ks++)
        for (runner = 0; runner < 2; runner++)
            for (rec = 0; rec < 2; rec++) {
                ipup_config c = base_cfg(md, fc);
                char what[160];
                c.schedule = k_all[ks];
                c.stages = 3;
                if (k_all[ks] == IPUP_SCHED_INTERLEAVED_1F1B) { c.stages = 4; c.devices = 2; c.virtual_stages = 2; }
                c.microbatches = k_all[ks] == IPUP_SCHED_GROUPED ? 6 : 4;
                c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
                c.recompute = rec;
                c.opt.kind = (ipup_optimizer_kind)((ks + rec) % 3);
                c.opt.lr = c.opt.kind == IPUP_OPT_ADAM ? 0.01f : 0.05f;
                snprintf(what, sizeof what, "%s %s/%s/recompute=%d", name, ipup_sched_kind_name(k_all[ks]), runner ? "threads" : "coop", rec);
                run_and_compare(&c, fc, 3, what);
            }
}

/* ------------------------------------------------------------------ mse */
static ipup_model_desc g_mse, g_mse_cnn;
static feed_ctx g_feed_mse = {12, 0, 8, {0}, {0}}, g_feed_mse_cnn = {36, 0, 5, {0}, {0}};

static void models(void) {
    tiny_model_or_exit(&g_mse, 1, 1, 12, "dense16,gelu,dense12,relu,dense8,mse");
    tiny_model_or_exit(&g_mse_cnn, 6, 6, 1, "conv4,relu,maxpool2,flatten,dense5,mse");
}

TTEST(mse_bit_identical_every_schedule) { every_schedule(&g_mse, &g_feed_mse, "mse"); }

TTEST(mse_bit_identical_cnn_replicas_offload) {
    int runner;
    for (runner = 0; runner < 2; runner++) {
        ipup_config c = base_cfg(&g_mse_cnn, &g_feed_mse_cnn);
        c.schedule = IPUP_SCHED_1F1B;
        c.stages = 2;
        c.replicas = 2;
        c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.opt.kind = IPUP_OPT_MOMENTUM;
        run_and_compare(&c, &g_feed_mse_cnn, 4, runner ? "mse cnn R=2 threads" : "mse cnn R=2 coop");
    }
    {
        ipup_config c = base_cfg(&g_mse_cnn, &g_feed_mse_cnn);
        c.schedule = IPUP_SCHED_ZBH1;
        c.stages = 3;
        c.offload = 1;
        c.recompute = 1;
        c.opt.kind = IPUP_OPT_ADAM;
        c.opt.lr = 0.01f;
        run_and_compare(&c, &g_feed_mse_cnn, 3, "mse cnn zb-h1 offload adam");
    }
}

/* the infeed of a regression model: targets of the loss input's width, no labels; the
   outfeed: the mse of each micro-batch (the plain loop's), correct 0; the loss falls */
TTEST(mse_feed_outfeed_and_loss_drop) {
    static float x[3 * 12], tg[3 * 8], act[IPUP_MAX_LAYERS + 1][REF_ACT], g[REF_ACT];
    ipup_config c = base_cfg(&g_mse, &g_feed_mse);
    const ipup_outfeed_rec *recs;
    ipup_run_stats st;
    int32_t n, i;
    double first, last;
    c.stages = 2;
    c.schedule = IPUP_SCHED_1F1B;
    c.repeat = 30;
    c.opt.kind = IPUP_OPT_ADAM;
    c.opt.lr = 0.01f;
    memset(g_feed_mse.calls, 0, sizeof g_feed_mse.calls);
    memset(g_feed_mse.bad, 0, sizeof g_feed_mse.bad);
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
    ref_begin(&g_ref, &c, &g_emu);
    /* the first micro-batch's loss from the initial weights, through the plain loop */
    fill(&g_feed_mse, 0, 3, x, NULL, tg);
    memcpy(act[0], x, sizeof x);
    ref_forward(&g_ref, 3, act, NULL, tg, g);
    TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_OK);
    TT_EQ_INT(sum_of(g_feed_mse.bad), 0);
    TT_EQ_INT(sum_of(g_feed_mse.calls), 30 * 4);
    recs = ipup_outfeed_records(&g_emu, &n);
    TT_EQ_INT(n, 30 * 4);
    if (n != 120) { ipup_shutdown(&g_emu); return; }
    TT_CHECK(recs[0].loss == ipup_mse_f32(3, 8, act[5], tg, NULL));
    for (i = 0; i < n; i++) TT_EQ_INT(recs[i].correct, 0);
    first = (double)(recs[0].loss + recs[1].loss + recs[2].loss + recs[3].loss);
    last = (double)(recs[n - 1].loss + recs[n - 2].loss + recs[n - 3].loss + recs[n - 4].loss);
    TT_CHECK_MSG(last < 0.5 * first, "mse loss %g -> %g: it should at least halve", first / 4, last / 4);
    TT_EQ_INT(st.correct, 0);
    ipup_shutdown(&g_emu);
}

/* evaluation of a regression model: ipup_evaluate refuses it (integer labels) with a
   message, ipup_evaluate_targets gives the loss of the plain forward */
TTEST(mse_evaluate_targets) {
    static float x[7 * 12], tg[7 * 8], act[IPUP_MAX_LAYERS + 1][REF_ACT], g[REF_ACT];
    int32_t labels[7] = {0};
    ipup_config c = base_cfg(&g_mse, &g_feed_mse);
    double sum = 0.0, want;
    int64_t corr = 0;
    c.stages = 3;
    c.microbatch = 4;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    ref_begin(&g_ref, &c, &g_emu);
    fill(&g_feed_mse, 1000, 7, x, NULL, tg);
    TT_EQ_INT(ipup_evaluate(&g_emu, 7, x, labels, &sum, &corr), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "ipup_evaluate_targets");
    TT_EQ_INT(ipup_evaluate_targets(&g_emu, 7, x, NULL, &sum), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "NULL");
    TT_EQ_INT(ipup_evaluate_targets(&g_emu, -1, x, tg, &sum), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&g_emu), "negative");
    TT_EQ_INT(ipup_evaluate_targets(&g_emu, 7, x, tg, &sum), IPUP_OK);
    /* chunks of 4 and 3 through the plain forward */
    memcpy(act[0], x, 4 * 12 * sizeof(float));
    ref_forward(&g_ref, 4, act, NULL, tg, g);
    want = (double)ipup_mse_f32(4, 8, act[5], tg, NULL) * 4.0;
    memcpy(act[0], x + 4 * 12, 3 * 12 * sizeof(float));
    ref_forward(&g_ref, 3, act, NULL, tg + 4 * 8, g);
    want += (double)ipup_mse_f32(3, 8, act[5], tg + 4 * 8, NULL) * 3.0;
    TT_CHECK_MSG(sum == want, "evaluate_targets %.9g, plain forward %.9g", sum, want);
    ipup_shutdown(&g_emu);
    {
        static ipup_emu fresh; /* zeroed: never initialised */
        TT_EQ_INT(ipup_evaluate_targets(&fresh, 7, x, tg, &sum), IPUP_ERR_ARG);
        TT_CONTAINS(ipup_last_error(&fresh), "ipup_init");
    }
}

TTEST(mse_parse_and_info) {
    ipup_model_desc m;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[512];
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,MSE", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(m.layers[1].kind, IPUP_LAYER_MSE);
    TT_CHECK(strcmp(m.layers[1].id, "mse") == 0);
    TT_CHECK(strcmp(ipup_layer_kind_name(IPUP_LAYER_MSE), "mse") == 0);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(info[1].in_n, 8);
    TT_EQ_INT(info[1].out_n, 1);
    TT_EQ_INT(info[1].stash_floats, 8);
    TT_EQ_INT(info[1].flops_bwd_dw, 0);
    /* a single output is a valid regression (xent needs 2 classes) */
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense1,mse", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_OK);
    /* mse not last: parsed, refused by ipup_model_info (and so ipup_init) with a message */
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,mse,dense4,xent", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "layer 1 (mse)");
    TT_CONTAINS(msg, "must be the last layer");
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,relu", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "(mse)");
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,mse2", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "at character 8, \"mse2\" (layer 1) is not understood");
    TT_CONTAINS(msg, "mse");
}

/* ------------------------------------------------------------------ frozen layers */
static ipup_model_desc g_frz_head, g_frz_mid, g_frz_cnn;
static feed_ctx g_feed_cls = {12, 4, 0, {0}, {0}}, g_feed_cnn = {36, 3, 0, {0}, {0}};

static void frozen_models(void) {
    /* a frozen body under a trained head; a frozen layer between trained ones (its input
       gradient is needed, its weight gradient is not); a frozen conv */
    tiny_model_or_exit(&g_frz_head, 1, 1, 12, "dense16:frozen,relu,dense12:frozen,relu,dense4,xent");
    tiny_model_or_exit(&g_frz_mid, 1, 1, 12, "dense16,gelu,dense12:frozen,relu,dense8,mse");
    tiny_model_or_exit(&g_frz_cnn, 6, 6, 1, "conv4:frozen,relu,maxpool2,flatten,dense3,xent");
}

TTEST(frozen_body_every_schedule) { every_schedule(&g_frz_head, &g_feed_cls, "frozen body"); }
TTEST(frozen_middle_every_schedule) { every_schedule(&g_frz_mid, &g_feed_mse, "frozen middle"); }

TTEST(frozen_cnn_stages_replicas_offload) {
    int runner;
    int32_t split[2] = {2, 4}; /* stage 0 = the frozen conv and its ReLU: no backward at all */
    for (runner = 0; runner < 2; runner++) {
        ipup_config c = base_cfg(&g_frz_cnn, &g_feed_cnn);
        c.schedule = IPUP_SCHED_1F1B;
        c.stages = 3;
        c.split = split;
        c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.recompute = runner;
        c.opt.kind = IPUP_OPT_ADAM;
        c.opt.lr = 0.01f;
        run_and_compare(&c, &g_feed_cnn, 3, runner ? "frozen cnn split threads" : "frozen cnn split coop");
    }
    for (runner = 0; runner < 2; runner++) { /* R = 2: the threads' sliced update too */
        ipup_config c = base_cfg(&g_frz_head, &g_feed_cls);
        c.schedule = IPUP_SCHED_GPIPE;
        c.stages = 2;
        c.replicas = 2;
        c.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
        c.opt.kind = IPUP_OPT_MOMENTUM;
        run_and_compare(&c, &g_feed_cls, 4, runner ? "frozen R=2 threads" : "frozen R=2 coop");
    }
    {
        ipup_config c = base_cfg(&g_frz_mid, &g_feed_mse);
        c.schedule = IPUP_SCHED_ZBH1;
        c.stages = 3;
        c.offload = 1;
        c.opt.kind = IPUP_OPT_ADAM;
        c.opt.lr = 0.01f;
        run_and_compare(&c, &g_feed_mse, 3, "frozen middle zb-h1 offload adam");
    }
}

static size_t r64(size_t n) { return (n + 63u) & ~(size_t)63u; }
static size_t r16(int32_t n) { return ((size_t)n + 15u) & ~(size_t)15u; }

/* the plan of a model with a frozen body against the same model trained everywhere: the
   same weights; gradients and Adam's state only for the trained layer; less stash (a
   frozen first layer keeps no input); the report names the saving */
TTEST(frozen_memory_saving_in_plan_and_report) {
    ipup_model_desc fz, full;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    ipup_plan pf, pa;
    ipup_mem_report rep;
    ipup_config c;
    const ipup_mem_report *a, *f;
    size_t trained, frozen;
    char text[2048];
    ipup_buf b;
    tiny_model_or_exit(&fz, 1, 1, 12, "dense32:frozen,relu,dense16:frozen,relu,dense4,mse");
    tiny_model_or_exit(&full, 1, 1, 12, "dense32,relu,dense16,relu,dense4,mse");
    ipup_model_info(&fz, info, IPUP_MAX_LAYERS, NULL, 0);
    trained = r16(info[4].n_w) + r16(info[4].n_b);
    frozen = r16(info[0].n_w) + r16(info[0].n_b) + r16(info[2].n_w) + r16(info[2].n_b);
    c = base_cfg(&full, &g_feed_mse);
    c.opt.kind = IPUP_OPT_ADAM;
    if (ipup_plan_config(&g_emu, &c, &pa)) { TT_FAILF("plan: %.400s", ipup_last_error(&g_emu)); return; }
    c.model = &fz;
    if (ipup_plan_config(&g_emu, &c, &pf)) { TT_FAILF("plan: %.400s", ipup_last_error(&g_emu)); return; }
    a = &pa.mem[0];
    f = &pf.mem[0];
    TT_EQ_INT(f->by_category[IPUP_MEM_WEIGHTS], a->by_category[IPUP_MEM_WEIGHTS]);
    TT_EQ_INT(f->by_category[IPUP_MEM_GRADS], r64(trained * sizeof(float)));
    TT_EQ_INT(a->by_category[IPUP_MEM_GRADS], r64((trained + frozen) * sizeof(float)));
    TT_EQ_INT(f->by_category[IPUP_MEM_OPTIMIZER], 2 * f->by_category[IPUP_MEM_GRADS]);
    TT_EQ_INT(a->by_category[IPUP_MEM_OPTIMIZER], 2 * a->by_category[IPUP_MEM_GRADS]);
    TT_CHECK(f->by_category[IPUP_MEM_STASH] < a->by_category[IPUP_MEM_STASH]);
    TT_EQ_INT(f->frozen_saved, 3 * frozen * sizeof(float));
    TT_EQ_INT(a->frozen_saved, 0);
    TT_CHECK(pf.ipu_bytes[0] + 3 * frozen * sizeof(float) <= pa.ipu_bytes[0]);
    /* the live emulator carves and reports the same */
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
    TT_EQ_INT(ipup_memory_report(&g_emu, 0, &rep), IPUP_OK);
    TT_EQ_INT(rep.by_category[IPUP_MEM_GRADS], f->by_category[IPUP_MEM_GRADS]);
    TT_EQ_INT(rep.by_category[IPUP_MEM_OPTIMIZER], f->by_category[IPUP_MEM_OPTIMIZER]);
    TT_EQ_INT(rep.used, f->used);
    b.buf = text; b.cap = sizeof text; b.len = 0;
    TT_EQ_INT(ipup_memory_report_write(&g_emu, ipup_buf_write, &b), IPUP_OK);
    TT_CONTAINS(text, "frozen-saves");
    {
        char want[64];
        snprintf(want, sizeof want, " %zu\n", f->frozen_saved);
        TT_CONTAINS(text, want);
    }
    ipup_shutdown(&g_emu);
}

/* frozen layers list their weights (PARAM) but no optimizer state; the trained layer's
   state tensors follow every parameter tensor; Adam's state moves, the frozen weights not */
TTEST(frozen_tensors) {
    static const char *const want[] = {"dense16.w", "dense16.b", "dense12.w", "dense12.b", "dense4.w", "dense4.b",
                                       "dense4.w.m", "dense4.b.m", "dense4.w.v", "dense4.b.v"};
    ipup_config c = base_cfg(&g_frz_head, &g_feed_cls);
    ipup_tensor_info t;
    int32_t i, n;
    int rc;
    c.stages = 2;
    c.opt.kind = IPUP_OPT_ADAM;
    c.opt.lr = 0.01f;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
    n = ipup_tensor_count(&g_emu);
    TT_EQ_INT(n, 10);
    for (i = 0; i < n && i < 10; i++) {
        TT_EQ_INT(ipup_tensor_get(&g_emu, i, &t), IPUP_OK);
        TT_CHECK_MSG(strcmp(t.name, want[i]) == 0, "tensor %d is %s, expected %s", (int)i, t.name, want[i]);
        TT_EQ_INT(t.kind, i < 6 ? IPUP_TENSOR_PARAM : IPUP_TENSOR_OPT_STATE);
    }
    TT_EQ_INT(ipup_tensor_get(&g_emu, 10, &t), IPUP_ERR_ARG);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense16.w", &t), IPUP_OK);
    TT_EQ_INT(t.n, 12 * 16);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense16.w.m", &t), IPUP_ERR_MISMATCH);
    TT_CONTAINS(ipup_last_error(&g_emu), "dense16.w.m");
    rc = ipup_run(&g_emu, NULL);
    TT_EQ_INT(rc, IPUP_OK);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense4.w.v", &t), IPUP_OK);
    {
        int32_t k, nz = 0;
        for (k = 0; k < t.n; k++) nz += t.data[k] != 0.0f;
        TT_CHECK_MSG(nz > t.n / 2, "Adam's v of the trained layer: %d of %d non-zero", (int)nz, (int)t.n);
    }
    ipup_shutdown(&g_emu);
    /* the same model trained everywhere: 3 layers x 2 tensors x (1 + 2 state slots) */
    {
        ipup_model_desc full;
        tiny_model_or_exit(&full, 1, 1, 12, "dense16,relu,dense12,relu,dense4,xent");
        c.model = &full;
        if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
        TT_EQ_INT(ipup_tensor_count(&g_emu), 18);
        ipup_shutdown(&g_emu);
    }
}

/* a frozen layer has no weight-gradient FLOPs (ipup_model_info, the balancer, the cost
   model); a stage of frozen layers only has no backward cost */
TTEST(frozen_flops_and_cost) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    ipup_config c;
    ipup_model_desc full;
    double t_full, t_frozen;
    int32_t split[1] = {2};
    TT_EQ_INT(ipup_model_info(&g_frz_cnn, info, IPUP_MAX_LAYERS, NULL, 0), IPUP_OK);
    TT_EQ_INT(info[0].frozen, 1);
    TT_EQ_INT(info[0].flops_bwd_dw, 0);
    TT_CHECK(info[0].flops_bwd_dx > 0);
    TT_EQ_INT(info[4].frozen, 0);
    TT_CHECK(info[4].flops_bwd_dw > 0);
    tiny_model_or_exit(&full, 6, 6, 1, "conv4,relu,maxpool2,flatten,dense3,xent");
    c = base_cfg(&full, &g_feed_cnn);
    c.stages = 2;
    c.split = split;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
    TT_CHECK(g_emu.core.stages[0].flops_w > 0);
    t_full = g_emu.step_seconds;
    ipup_shutdown(&g_emu);
    c.model = &g_frz_cnn;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.400s", ipup_last_error(&g_emu)); return; }
    TT_EQ_INT(g_emu.core.stages[0].flops_w, 0);
    TT_EQ_INT(g_emu.core.stages[0].flops_i, 0); /* nothing before the conv trains: no input gradient */
    TT_EQ_INT(g_emu.core.stages[0].n_grads, 0);
    TT_EQ_INT(g_emu.core.layers[0].stash_off, -1); /* its input is not stashed */
    t_frozen = g_emu.step_seconds;
    TT_CHECK_MSG(t_frozen < t_full, "simulated step: frozen %g s, trained %g s", t_frozen, t_full);
    ipup_shutdown(&g_emu);
}

TTEST(frozen_parse_and_errors) {
    ipup_model_desc m;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[512];
    TT_EQ_INT(tiny_model(&m, 6, 6, 1, "conv4:FROZEN,relu,flatten,dense8:frozen,dense3,xent", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(m.layers[0].frozen, 1);
    TT_CHECK(strcmp(m.layers[0].id, "conv4") == 0);
    TT_EQ_INT(m.layers[1].frozen, 0);
    TT_EQ_INT(m.layers[3].frozen, 1);
    TT_CHECK(strcmp(m.layers[3].id, "dense8") == 0);
    TT_EQ_INT(m.layers[4].frozen, 0);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_OK);
    /* a layer without parameters cannot be frozen */
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,relu:frozen,dense4,xent", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "at character 8, \"relu:frozen\" (layer 1) has no parameters to freeze");
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,dropout0.5:frozen,dense4,xent", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "\"dropout0.5:frozen\" (layer 1) has no parameters");
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,mse:frozen", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "\"mse:frozen\" (layer 1) has no parameters");
    /* unknown or empty suffixes */
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8:frosen,dense4,xent", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "at character 1, \"dense8:frosen\" (layer 0) has an unknown suffix");
    TT_CONTAINS(msg, ":frozen");
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8:,dense4,xent", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "has an unknown suffix");
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8:frozen:frozen,xent", msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "has an unknown suffix");
    /* every layer frozen: nothing to train */
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8:frozen,relu,dense4:frozen,xent", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "nothing to train");
    /* the flag set by hand on a layer without parameters */
    TT_EQ_INT(tiny_model(&m, 1, 1, 12, "dense8,relu,dense4,xent", msg, sizeof msg), IPUP_OK);
    m.layers[1].frozen = 1;
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "layer 1 (relu): relu has no parameters to freeze");
    {
        ipup_config c = base_cfg(&m, &g_feed_cls);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&g_emu), "no parameters to freeze");
    }
}

static const ttest_case cases[] = {
    TT_CASE(mse_kernel_finite_differences), TT_CASE(mse_kernel_values),
    TT_CASE(mse_bit_identical_every_schedule), TT_CASE(mse_bit_identical_cnn_replicas_offload),
    TT_CASE(mse_feed_outfeed_and_loss_drop), TT_CASE(mse_evaluate_targets),
    TT_CASE(mse_parse_and_info),
    TT_CASE(frozen_body_every_schedule), TT_CASE(frozen_middle_every_schedule),
    TT_CASE(frozen_cnn_stages_replicas_offload), TT_CASE(frozen_memory_saving_in_plan_and_report),
    TT_CASE(frozen_tensors), TT_CASE(frozen_flops_and_cost), TT_CASE(frozen_parse_and_errors),
};

int main(int argc, char **argv) {
    models();
    frozen_models();
    return TTEST_MAIN(cases, argc, argv);
}
