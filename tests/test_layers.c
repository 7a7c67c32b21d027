/* tests/test_layers.c - the layers of issue 30 in the emulator (ipupipe.h): general and
   depthwise convolutions, batch norm (trained, frozen), average and global average pools,
   residual blocks with and without a shortcut branch, sigmoid, tanh, leaky ReLU,
   hard-swish and the binary cross-entropy loss. Every schedule kind over 1, 2 and 4 stages
   on both runners (and replicas, recomputation) gives the bits of a plain single-stage
   run, running statistics included; one step's gradient matches central finite
   differences of the training loss; a state round trip restores the running statistics;
   ipup_predict gives ipup_evaluate's forward; the model text's errors name the position. */
#include "tiny_model.h" /* includes ipupipe.h */
#include "ttest.h"

#define POOL_BYTES (1024 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_stream[8][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 20];
IPUP_ALIGN64 static uint8_t g_ipu_ref[2][POOL_BYTES]; /* the plain run's, alive beside g_emu */
IPUP_ALIGN64 static uint8_t g_stream_ref[2][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host_ref[1 << 20];
static ipup_emu g_emu, g_ref;

/* ------------------------------------------------------------------ data */
typedef struct feed_ctx {
    int in_n, classes, tw; /* tw: float targets (bce), else integer labels of `classes` */
} feed_ctx;

static void make_x(int in_n, int64_t idx, float *x) {
    int i;
    for (i = 0; i < in_n; i++)
        x[i] = 2.0f * ipup_rng_uniform_f32(17, (uint64_t)idx, (uint64_t)i) - 1.0f;
}
static int feed(void *user, const ipup_feed *fd) {
    const feed_ctx *f = (const feed_ctx *)user;
    int32_t i, j, c;
    if (fd->row != f->in_n) return -1;
    for (i = 0; i < fd->n; i++) {
        float *x = fd->x + (size_t)i * (size_t)f->in_n, v = 0.0f;
        make_x(f->in_n, fd->sample0 + i, x);
        if (f->tw) {
            if (!fd->targets) return -1;
            for (j = 0; j < f->tw; j++)
                fd->targets[(size_t)i * (size_t)f->tw + (size_t)j] = x[j % f->in_n] > 0 ? 1.0f : 0.0f;
            continue;
        }
        if (!fd->labels) return -1;
        for (j = 0; j < f->in_n; j++) v += x[j] * (float)((j % 5) - 2);
        c = (int32_t)((v > 0 ? v : -v) * 3.0f) % f->classes;
        fd->labels[i] = c;
    }
    return 0;
}

/* ------------------------------------------------------------------ models */
static const char k_mixed[] =
    "conv8k3s2same,bn,relu,dw3s1same,bn,relu,conv8k1,res(conv8k3s1same,bn,relu,conv8k3s1same,bn),"
    "relu,avgpool2,gavgpool,flatten,dense10,xent";
static const char k_short[] =
    "conv4k3x2s1x2valid,leaky0.2,res(conv6k3s2same,bn,hswish,dw3same|conv6k1s2,bn),tanh,"
    "avgpool2x1s1,flatten,dense5,xent";
static const char k_bce[] = "dense8,sigmoid,dense8,tanh,dense8,leaky0.1,bn,dense8,hswish,dense4,bce";
static ipup_model_desc g_mixed, g_short, g_bce;
static feed_ctx g_f_mixed = {8 * 8 * 2, 10, 0}, g_f_short = {7 * 6 * 1, 5, 0},
                g_f_bce = {6, 0, 4};

static void models(void) {
    tiny_model_or_exit(&g_mixed, 8, 8, 2, k_mixed);
    tiny_model_or_exit(&g_short, 7, 6, 1, k_short);
    tiny_model_or_exit(&g_bce, 1, 1, 6, k_bce);
}

static ipup_config base_cfg(const ipup_model_desc *md, feed_ctx *fc) {
    ipup_config c = tiny_config(md, 1, 3, 4, 2, 99, IPUP_OPT_MOMENTUM, 0.05f, feed, fc);
    tiny_pools(&c, 8, g_ipu, g_stream, POOL_BYTES, g_host, sizeof g_host);
    c.schedule = IPUP_SCHED_GPIPE;
    return c;
}

/* tensors of kind PARAM (weights, biases, running statistics) of a and b that differ */
static int diff_params(ipup_emu *a, ipup_emu *b, char *first, size_t cap) {
    int32_t i, n = ipup_tensor_count(a), bad = 0;
    if (n != ipup_tensor_count(b)) return -1;
    for (i = 0; i < n; i++) {
        ipup_tensor_info ta, tb;
        ipup_tensor_get(a, i, &ta);
        ipup_tensor_get(b, i, &tb);
        if (ta.kind != IPUP_TENSOR_PARAM) continue;
        if (ta.n != tb.n || memcmp(ta.data, tb.data, (size_t)ta.n * sizeof(float)) != 0) {
            if (!bad) snprintf(first, cap, "%s", ta.name);
            bad++;
        }
    }
    return bad;
}

/* the plain single-stage run of cfg c (2 runs of c.repeat steps, its replicas) into g_ref */
static int plain_run(const ipup_config *c0) {
    ipup_config c = *c0;
    c.stages = 1; c.devices = 0; c.virtual_stages = 0; c.schedule = IPUP_SCHED_GPIPE;
    c.runner = IPUP_RUNNER_COOP; c.recompute = 0; c.split = NULL;
    tiny_pools(&c, 2, g_ipu_ref, g_stream_ref, POOL_BYTES, g_host_ref, sizeof g_host_ref);
    if (ipup_init(&g_ref, &c)) { TT_FAILF("plain init: %.300s", ipup_last_error(&g_ref)); return -1; }
    if (ipup_run(&g_ref, NULL) || ipup_run(&g_ref, NULL)) {
        TT_FAILF("plain run: %.300s", ipup_last_error(&g_ref));
        ipup_shutdown(&g_ref);
        return -1;
    }
    return 0;
}

/* init c (with the fall-backs the kinds need: S = 2P, S = P x V), run it as plain_run
   runs; 1 when it ran and matched, 0 when no configuration of the kind fits, -1 on a
   difference */
static int run_matches(ipup_config c, const char *what) {
    char first[64] = "";
    int rc, bad, tries;
    for (tries = 0; tries < 3; tries++) {
        if (tries == 1) { if (c.stages < 2) return 0; c.devices = c.stages / 2; }
        if (tries == 2) { c.devices = c.stages / 2; c.virtual_stages = 2; }
        rc = ipup_init(&g_emu, &c);
        if (rc == IPUP_OK) break;
    }
    if (rc != IPUP_OK) return 0;
    if (ipup_run(&g_emu, NULL) || ipup_run(&g_emu, NULL)) {
        TT_FAILF("%s: run: %.300s", what, ipup_last_error(&g_emu));
        ipup_shutdown(&g_emu);
        return -1;
    }
    bad = diff_params(&g_emu, &g_ref, first, sizeof first);
    if (bad) TT_FAILF("%s: %d parameter tensors differ from the plain run (first %s)", what, bad, first);
    ipup_shutdown(&g_emu);
    return bad ? -1 : 1;
}

/* every schedule kind x 1, 2, 4 stages x both runners against the plain run */
static void every_schedule(const ipup_model_desc *md, feed_ctx *fc, const char *name) {
    ipup_config c = base_cfg(md, fc);
    int k, si, runner, ran = 0, kinds_ran = 0;
    static const int32_t stages[3] = {1, 2, 4};
    if (plain_run(&c)) return;
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) {
        int any = 0;
        for (si = 0; si < 3; si++)
            for (runner = 0; runner < 2; runner++) {
                ipup_config x = base_cfg(md, fc);
                char what[160];
                int r;
                x.schedule = (ipup_sched_kind)k;
                x.stages = stages[si];
                x.runner = runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
                x.opt.kind = IPUP_OPT_MOMENTUM;
                snprintf(what, sizeof what, "%s %s S=%d %s", name,
                         ipup_sched_kind_name((ipup_sched_kind)k), (int)x.stages,
                         runner ? "threads" : "coop");
                r = run_matches(x, what);
                ran += r > 0;
                any |= r > 0;
            }
        kinds_ran += any;
    }
    ipup_shutdown(&g_ref);
    printf("    %s: %d configurations of %d schedule kinds gave the plain run's bits\n", name, ran,
           kinds_ran);
    TT_CHECK_MSG(kinds_ran >= IPUP_SCHED_KIND_COUNT - 1, "%s: only %d schedule kinds ran", name,
                 kinds_ran);
}

TTEST(mixed_every_schedule_bits) { every_schedule(&g_mixed, &g_f_mixed, "mixed"); }
TTEST(shortcut_every_schedule_bits) { every_schedule(&g_short, &g_f_short, "shortcut"); }
TTEST(bce_every_schedule_bits) { every_schedule(&g_bce, &g_f_bce, "bce"); }
/* frozen conv2d, depthwise and batch norm (inference mode) before trained layers; an
   autoencoder-like stack of dense, batch norm, ReLU under mse */
TTEST(frozen_and_mse_every_schedule_bits) {
    static ipup_model_desc fz, ae;
    static feed_ctx f_ae = {6, 0, 6};
    tiny_model_or_exit(&fz, 8, 8, 2,
                       "conv4k3s2same:frozen,bn:frozen,relu,dw3same:frozen,bn,hswish,flatten,dense10,xent");
    tiny_model_or_exit(&ae, 1, 1, 6, "dense16,bn,relu,dense4,bn,relu,dense16,bn,relu,dense6,mse");
    every_schedule(&fz, &g_f_mixed, "frozen");
    every_schedule(&ae, &f_ae, "mse");
}

/* replicas, recomputation, zb-h1's W ops, Adam against the plain single-stage run (with
   the same replicas: the all-reduce sums the replicas' gradients in replica order, the
   running statistics fold the micro-batches in the order r M + m) */
TTEST(replicas_recompute_zb) {
    static const ipup_model_desc *mds[3] = {&g_mixed, &g_short, &g_bce};
    static feed_ctx *fcs[3] = {&g_f_mixed, &g_f_short, &g_f_bce};
    int m, v;
    for (m = 0; m < 3; m++)
        for (v = 0; v < 3; v++) {
            ipup_config c = base_cfg(mds[m], fcs[m]);
            char what[96];
            c.opt.kind = IPUP_OPT_ADAM;
            c.opt.lr = 0.01f;
            c.stages = 2;
            c.schedule = v == 0 ? IPUP_SCHED_ZBH1 : IPUP_SCHED_1F1B;
            c.recompute = v != 1;
            c.replicas = v == 1 ? 2 : 1;
            c.runner = v == 2 ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
            snprintf(what, sizeof what, "model %d variant %d", m, v);
            if (plain_run(&c)) continue;
            TT_CHECK_MSG(run_matches(c, what) == 1, "%s did not run", what);
            ipup_shutdown(&g_ref);
        }
}

/* ------------------------------------------------------------------ gradient */
/* the training loss of one step from the current weights: run a step with a learning rate
   too small to matter and read its outfeed record (the forward before the update) */
static float train_loss(ipup_emu *e) {
    const ipup_outfeed_rec *r;
    int32_t n;
    ipup_set_step(e, 0);
    if (ipup_run_steps(e, 1, NULL)) return NAN;
    r = ipup_outfeed_records(e, &n);
    return n == 1 ? r[0].loss : NAN;
}

/* one SGD step with lr 1 and M = 1: w0 - w1 is the gradient; a few entries of every
   trained weight tensor against central differences of the training loss (batch
   statistics: the training mode's). */
static void gradient_check(const ipup_model_desc *md, feed_ctx *fc, const char *name) {
    static float keep[64][4096], w1[64][4096];
    ipup_config c = base_cfg(md, fc);
    int32_t n, t, checked = 0, worst_t = -1;
    double worst = 0.0;
    c.microbatches = 1;
    c.microbatch = 4;
    c.repeat = 1;
    c.opt.kind = IPUP_OPT_SGD;
    c.opt.lr = 1.0f;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("%s: init: %.300s", name, ipup_last_error(&g_emu)); return; }
    n = ipup_tensor_count(&g_emu);
    /* the initial values of every tensor, then one step */
    for (t = 0; t < n && t < 64; t++) {
        ipup_tensor_info ti;
        ipup_tensor_get(&g_emu, t, &ti);
        if (ti.n <= 4096) memcpy(keep[t], ti.data, (size_t)ti.n * sizeof(float));
    }
    TT_EQ_INT(ipup_run_steps(&g_emu, 1, NULL), IPUP_OK);
    for (t = 0; t < n && t < 64; t++) { /* after the step (w1: keep - w1 is the gradient) */
        ipup_tensor_info ti;
        ipup_tensor_get(&g_emu, t, &ti);
        if (ti.n <= 4096) memcpy(w1[t], ti.data, (size_t)ti.n * sizeof(float));
    }
    for (t = 0; t < n && t < 64; t++) {
        ipup_tensor_info ti;
        int32_t idx[3], k;
        ipup_tensor_get(&g_emu, t, &ti);
        if (ti.kind != IPUP_TENSOR_PARAM || ti.n > 4096) continue;
        if (strstr(ti.name, ".mean") || strstr(ti.name, ".var")) continue;
        if (md->layers[ti.layer].frozen) continue;
        idx[0] = 0; idx[1] = ti.n / 2; idx[2] = ti.n - 1;
        for (k = 0; k < 3; k++) {
            const float h = 1e-2f;
            int32_t j = idx[k], u;
            float g = keep[t][j] - w1[t][j], lp, lm;
            double err;
            /* every tensor back to its initial values, then +-h on entry j */
            for (u = 0; u < n && u < 64; u++) {
                ipup_tensor_info tu;
                ipup_tensor_get(&g_emu, u, &tu);
                if (tu.n <= 4096) memcpy(tu.data, keep[u], (size_t)tu.n * sizeof(float));
            }
            ti.data[j] = keep[t][j] + h;
            lp = train_loss(&g_emu);
            for (u = 0; u < n && u < 64; u++) {
                ipup_tensor_info tu;
                ipup_tensor_get(&g_emu, u, &tu);
                if (tu.n <= 4096) memcpy(tu.data, keep[u], (size_t)tu.n * sizeof(float));
            }
            ti.data[j] = keep[t][j] - h;
            lm = train_loss(&g_emu);
            err = fabs((double)(lp - lm) / (2.0 * (double)h) - (double)g) /
                  (fabs((double)g) + 2e-3);
            if (err > worst) { worst = err; worst_t = t; }
            checked++;
        }
    }
    {
        ipup_tensor_info tw;
        if (worst_t >= 0) ipup_tensor_get(&g_emu, worst_t, &tw);
        printf("    %s: %d gradient entries against central differences, worst relative "
               "error %.3g (%s)\n", name, (int)checked, worst, worst_t >= 0 ? tw.name : "-");
    }
    TT_CHECK_MSG(checked >= 12, "%s: only %d entries checked", name, (int)checked);
    TT_CHECK_MSG(worst < 0.02, "%s: gradient vs central differences: relative error %g", name,
                 worst);
    ipup_shutdown(&g_emu);
}

/* the mixed and shortcut models with smooth activations in place of the ReLUs (a central
   difference across a kink is off by up to the kink's jump; the bce model keeps its leaky
   ReLU, whose inputs sit away from 0 at these weights) */
TTEST(gradient_finite_differences) {
    ipup_model_desc a, b;
    tiny_model_or_exit(&a, 8, 8, 2,
                       "conv8k3s2same,bn,tanh,dw3s1same,bn,sigmoid,conv8k1,res(conv8k3s1same,bn,"
                       "tanh,conv8k3s1same,bn),hswish,avgpool2,gavgpool,flatten,dense10,xent");
    tiny_model_or_exit(&b, 7, 6, 1,
                       "conv4k3x2s1x2valid,tanh,res(conv6k3s2same,bn,hswish,dw3same|conv6k1s2,bn),"
                       "tanh,avgpool2x1s1,flatten,dense5,xent");
    gradient_check(&a, &g_f_mixed, "mixed (smooth)");
    gradient_check(&b, &g_f_short, "shortcut (smooth)");
    gradient_check(&g_bce, &g_f_bce, "bce");
}

/* ------------------------------------------------------------------ state, predict */
static uint8_t g_state[1 << 20];
static size_t g_state_n;
static int st_write(void *user, const void *data, size_t len) {
    (void)user;
    if (g_state_n + len > sizeof g_state) return 1;
    memcpy(g_state + g_state_n, data, len);
    g_state_n += len;
    return 0;
}
static int st_read(void *user, uint64_t off, void *data, size_t len) {
    (void)user;
    if (off + len > g_state_n) return IPUP_STATE_END;
    memcpy(data, g_state + off, len);
    return 0;
}

TTEST(state_round_trip_running_statistics) {
    ipup_config c = base_cfg(&g_mixed, &g_f_mixed);
    ipup_tensor_info mean, var;
    char first[64] = "";
    c.stages = 2;
    c.schedule = IPUP_SCHED_1F1B;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.300s", ipup_last_error(&g_emu)); return; }
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "bn_3.mean", &mean), IPUP_OK);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "bn_3.var", &var), IPUP_OK);
    TT_EQ_INT(mean.ndim, 1);
    TT_EQ_INT(mean.shape[0], 8);
    TT_CHECK_MSG(mean.data[0] != 0.0f && var.data[0] != 1.0f, "the running statistics moved");
    g_state_n = 0;
    TT_EQ_INT(ipup_state_save(&g_emu, st_write, NULL), IPUP_OK);
    TT_EQ_INT((int)g_state_n, (int)ipup_state_bytes(&g_emu));
    /* a second emulator, trained on: the load brings back the first's bits */
    tiny_pools(&c, 2, g_ipu_ref, g_stream_ref, POOL_BYTES, g_host_ref, sizeof g_host_ref);
    if (ipup_init(&g_ref, &c)) { TT_FAILF("init 2: %.300s", ipup_last_error(&g_ref)); ipup_shutdown(&g_emu); return; }
    TT_EQ_INT(ipup_run(&g_ref, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_ref, NULL), IPUP_OK);
    TT_CHECK(diff_params(&g_emu, &g_ref, first, sizeof first) > 0);
    TT_EQ_INT(ipup_state_load(&g_ref, st_read, NULL), IPUP_OK);
    TT_EQ_INT(diff_params(&g_emu, &g_ref, first, sizeof first), 0);
    /* and both train on to the same bits */
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_ref, NULL), IPUP_OK);
    TT_EQ_INT(diff_params(&g_emu, &g_ref, first, sizeof first), 0);
    ipup_shutdown(&g_ref);
    ipup_shutdown(&g_emu);
    { /* a leaky ReLU of another alpha (the same id): the descriptor tells them apart */
        ipup_model_desc other = g_bce;
        ipup_config cb = base_cfg(&g_bce, &g_f_bce);
        if (ipup_init(&g_emu, &cb)) { TT_FAILF("init bce: %.300s", ipup_last_error(&g_emu)); return; }
        g_state_n = 0;
        TT_EQ_INT(ipup_state_save(&g_emu, st_write, NULL), IPUP_OK);
        ipup_shutdown(&g_emu);
        other.layers[5].alpha = 0.2f;
        cb.model = &other;
        if (ipup_init(&g_emu, &cb)) { TT_FAILF("init other: %.300s", ipup_last_error(&g_emu)); return; }
        TT_EQ_INT(ipup_state_load(&g_emu, st_read, NULL), IPUP_ERR_MISMATCH);
        TT_CONTAINS(ipup_last_error(&g_emu), "layer 5 (leaky0.1) has another kernel");
        ipup_shutdown(&g_emu);
    }
}

/* ipup_predict's output rows are the loss layer's input of ipup_evaluate's forward (the
   batch norms in inference mode on the running statistics) */
TTEST(predict_equals_evaluate_forward) {
    static const ipup_model_desc *mds[3] = {&g_mixed, &g_short, &g_bce};
    static feed_ctx *fcs[3] = {&g_f_mixed, &g_f_short, &g_f_bce};
    static float x[11 * 128], out[11 * 16], out1[11 * 16];
    int m;
    for (m = 0; m < 3; m++) {
        ipup_config c = base_cfg(mds[m], fcs[m]);
        int32_t w, i;
        c.stages = m == 2 ? 4 : 2;
        c.schedule = IPUP_SCHED_1F1B;
        if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.300s", ipup_last_error(&g_emu)); continue; }
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        for (i = 0; i < 11; i++) make_x(fcs[m]->in_n, 5000 + i, x + (size_t)i * (size_t)fcs[m]->in_n);
        w = ipup_output_width(&g_emu);
        TT_EQ_INT(ipup_predict(&g_emu, 11, x, out, NULL), IPUP_OK);
        /* one sample at a time through the same forward: the same bits per row (batch norm
           in inference mode has no batch dependence) */
        for (i = 0; i < 11; i++)
            TT_EQ_INT(ipup_predict(&g_emu, 1, x + (size_t)i * (size_t)fcs[m]->in_n,
                                   out1 + (size_t)i * (size_t)w, NULL), IPUP_OK);
        TT_CHECK_MSG(memcmp(out, out1, (size_t)(11 * w) * sizeof(float)) == 0,
                     "model %d: predict rows depend on the batch", m);
        if (fcs[m]->tw) { /* bce: the loss of evaluate_targets from predict's logits */
            static float tg[11 * 4];
            double sum = 0.0, want = 0.0;
            int32_t j;
            for (i = 0; i < 11 * 4; i++) tg[i] = (float)(i % 2);
            TT_EQ_INT(ipup_evaluate_targets(&g_emu, 11, x, tg, &sum), IPUP_OK);
            for (i = 0; i < 11; i += 3) {
                j = 11 - i < 3 ? 11 - i : 3;
                want += (double)ipup_bce_logits_f32(j, 4, out + (size_t)i * 4, tg + (size_t)i * 4, NULL) * j;
            }
            TT_CHECK_MSG(sum == want, "bce: evaluate %.9g, predict's logits %.9g", sum, want);
        } else {
            int32_t lab[11];
            double sum = 0.0, want = 0.0;
            int64_t corr = 0;
            for (i = 0; i < 11; i++) lab[i] = i % 5;
            TT_EQ_INT(ipup_evaluate(&g_emu, 11, x, lab, &sum, &corr), IPUP_OK);
            for (i = 0; i < 11; i += 3) {
                int32_t j = 11 - i < 3 ? 11 - i : 3;
                want += (double)ipup_softmax_xent_f32(j, w, out + (size_t)i * (size_t)w, lab + i,
                                                      NULL, NULL) * j;
            }
            TT_CHECK_MSG(sum == want, "model %d: evaluate %.9g, predict's logits %.9g", m, sum,
                         want);
        }
        ipup_shutdown(&g_emu);
    }
}

/* ------------------------------------------------------------------ frozen, splits, text */
/* bn:frozen runs in inference mode: its gamma, beta and running statistics never move, the
   layers before it still train */
TTEST(frozen_batch_norm) {
    ipup_model_desc md;
    ipup_config c;
    ipup_tensor_info g, m, w;
    float g0, w0;
    tiny_model_or_exit(&md, 8, 8, 2, "conv4k3s2same,bn:frozen,relu,flatten,dense10,xent");
    c = base_cfg(&md, &g_f_mixed);
    c.stages = 2;
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.300s", ipup_last_error(&g_emu)); return; }
    ipup_tensor_find(&g_emu, "bn.w", &g);
    ipup_tensor_find(&g_emu, "bn.mean", &m);
    ipup_tensor_find(&g_emu, "conv4k3s2same.w", &w);
    g0 = g.data[1]; w0 = w.data[1];
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_CHECK(g.data[1] == g0 && m.data[1] == 0.0f);
    TT_CHECK(w.data[1] != w0);
    ipup_shutdown(&g_emu);
}

/* the stash entry: what each backward reads, per micro-batch of B = 3: the conv's input
   (the stage input, 3 x 128), the batch norm's input (3 x 64; its mean and 1/std sit in the
   gradient block's slots), the ReLU's input (3 x 64, no later layer of the stage keeps its
   output), the dense layer's input (3 x 64), the labels (3) and the logits' gradient
   (3 x 10): 993 floats, 1008 with the 16-float rounding; the pool's and the residual
   block's buffers are scratch */
TTEST(stash_entry_floats) {
    ipup_model_desc md;
    ipup_config c;
    tiny_model_or_exit(&md, 8, 8, 2, "conv4k3s2same,bn,relu,flatten,dense10,xent");
    c = base_cfg(&md, &g_f_mixed);
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.300s", ipup_last_error(&g_emu)); return; }
    TT_EQ_INT((int)g_emu.core.stages[0].entry_floats, 1008);
    TT_EQ_INT((int)g_emu.core.stages[0].res_floats, 0);
    /* the gradient block: conv w (72, 80 rounded to 16) b (4: 16), bn gamma, beta (16 each),
       its statistics (R M = 4 slots of 2 x 16), dense w (640) b (16) */
    TT_EQ_INT((int)g_emu.core.stages[0].n_grads, 80 + 16 + 32 + 4 * 32 + 640 + 16);
    /* the parameter block: those and the running mean and variance (2 x 16) */
    TT_EQ_INT((int)g_emu.core.stages[0].n_params, 80 + 16 + 32 + 4 * 32 + 640 + 16 + 32);
    ipup_shutdown(&g_emu);
    tiny_model_or_exit(&md, 8, 8, 2, "conv4k3s2same,res(conv4k3same,relu|conv4k1),flatten,dense10,xent");
    c = base_cfg(&md, &g_f_mixed);
    if (ipup_init(&g_emu, &c)) { TT_FAILF("init: %.300s", ipup_last_error(&g_emu)); return; }
    TT_EQ_INT((int)g_emu.core.stages[0].res_floats, 3 * 64); /* 4x4x4 per sample */
    ipup_shutdown(&g_emu);
}

/* a split inside a residual block is refused with a message naming the block; the
   balanced split never puts one there */
TTEST(split_never_inside_block) {
    ipup_config c = base_cfg(&g_mixed, &g_f_mixed);
    int32_t split[3] = {3, 9, 15}, s, L = g_mixed.n_layers;
    c.stages = 2;
    split[0] = 9; /* inside res(...) (layers 7..13) */
    c.split = split;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "inside the residual block of layer 7 (res)");
    split[0] = 7; /* at the block's start: fine */
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    ipup_shutdown(&g_emu);
    for (s = 2; s <= 8; s++) {
        char msg[512];
        int32_t sp[8], k;
        TT_EQ_INT(ipup_balance_stages(&g_mixed, s, sp, msg, sizeof msg), IPUP_OK);
        for (k = 0; k < s - 1; k++) TT_CHECK_MSG(sp[k] <= 7 || sp[k] >= 14, "split %d at %d", s, sp[k]);
    }
    {
        char msg[512];
        int32_t sp[32];
        TT_EQ_INT(ipup_balance_stages(&g_mixed, L - 5, sp, msg, sizeof msg), IPUP_ERR_CONFIG);
        TT_CONTAINS(msg, "outside its residual blocks");
    }
}

static void parse_err(const char *text, const char *want) {
    ipup_model_desc md;
    char msg[1024];
    TT_EQ_INT(ipup_model_parse(text, &md, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CHECK_MSG(strstr(msg, want) != NULL, "\"%.60s\": message \"%.300s\" lacks \"%.60s\"", text, msg, want);
}

TTEST(parse_errors_name_the_position) {
    parse_err("conv8k3,bn,conv64k10x4s,relu,xent", "at character 12, \"conv64k10x4s\" is not understood");
    parse_err("dense8,,xent", "at character 8, \"\" is empty");
    parse_err("dw3s1samee,xent", "at character 1, \"dw3s1samee\"");
    parse_err("avgpool,xent", "at character 1, \"avgpool\"");
    parse_err("res(dense4,relu", "not closed");
    parse_err("res(dense4|),xent", "at character 12");
    parse_err("res(dense4,res(relu)),xent", "do not nest");
    parse_err("dense4),xent", "at character 7, \")\" is outside a residual block");
    parse_err("res(dense4|relu|relu),xent", "at most one '|'");
    parse_err("res(dense4)relu,xent", "at character 12, \"r\" follows a residual block");
    parse_err("relu:frozen,xent", "at character 1, \"relu:frozen\" has no parameters");
    parse_err("bn:cold,xent", "unknown suffix");
    parse_err("dense4,xent,", "ends the text");
}

TTEST(parse_ids_and_fields) {
    ipup_model_desc md;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[512];
    TT_EQ_INT(ipup_model_parse("conv64k10x4s2same,bn,res(dw3,bn|conv64k1s1x2valid),bn,leaky,xent",
                               &md, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(md.n_layers, 11);
    TT_STREQ(md.layers[0].id, "conv64k10x4s2same");
    TT_EQ_INT(md.layers[0].kind, IPUP_LAYER_CONV2D);
    TT_EQ_INT(md.layers[0].kh, 10);
    TT_EQ_INT(md.layers[0].kw, 4);
    TT_EQ_INT(md.layers[0].sh, 2);
    TT_EQ_INT(md.layers[0].same, 1);
    TT_STREQ(md.layers[1].id, "bn");
    TT_STREQ(md.layers[2].id, "res");
    TT_EQ_INT(md.layers[2].kind, IPUP_LAYER_RES_BEGIN);
    TT_STREQ(md.layers[4].id, "bn_2");
    TT_EQ_INT(md.layers[5].kind, IPUP_LAYER_RES_SHORTCUT);
    TT_EQ_INT(md.layers[6].sw, 2);
    TT_EQ_INT(md.layers[7].kind, IPUP_LAYER_RES_END);
    TT_STREQ(md.layers[8].id, "bn_3");
    TT_EQ_INT(md.layers[9].kind, IPUP_LAYER_LEAKY_RELU);
    TT_CHECK(md.layers[9].alpha == 0.3f);
    TT_STREQ(md.layers[7].id, "add");
    /* the DS-CNN stem's shapes, parameters and MACs (Keras: (25, 5, 64), 2,624 parameters,
       25 x 5 x 64 x 40 = 320,000 MACs) */
    TT_EQ_INT(ipup_model_parse("conv64k10x4s2same,bn,relu,flatten,dense12,xent", &md, msg, sizeof msg),
              IPUP_OK);
    md.in_h = 49; md.in_w = 10; md.in_c = 1;
    TT_EQ_INT(ipup_model_info(&md, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(info[0].out_h, 25);
    TT_EQ_INT(info[0].out_w, 5);
    TT_EQ_INT(info[0].n_w + info[0].n_b, 2624);
    TT_EQ_INT((int)info[0].macs, 320000);
    TT_EQ_INT(info[0].pad_top, 4);
    TT_EQ_INT(info[0].pad_left, 1);
    TT_EQ_INT(info[1].n_w + info[1].n_b, 128);
    TT_EQ_INT(info[1].n_nontrain, 128);
}

static const ttest_case cases[] = {
    TT_CASE(parse_errors_name_the_position),
    TT_CASE(parse_ids_and_fields),
    TT_CASE(split_never_inside_block),
    TT_CASE(stash_entry_floats),
    TT_CASE(mixed_every_schedule_bits),
    TT_CASE(shortcut_every_schedule_bits),
    TT_CASE(bce_every_schedule_bits),
    TT_CASE(frozen_and_mse_every_schedule_bits),
    TT_CASE(replicas_recompute_zb),
    TT_CASE(gradient_finite_differences),
    TT_CASE(state_round_trip_running_statistics),
    TT_CASE(predict_equals_evaluate_forward),
    TT_CASE(frozen_batch_norm),
};

int main(int argc, char **argv) {
    models();
    return TTEST_MAIN(cases, argc, argv);
}
