/* test_half_train.c - half precision in the emulator (cfg.dtype, accum_dtype, loss scaling,
 * opt.first_moment_dtype):
 *   - a two-stage float16 run gives the bits of a plain loop written here over the kernels
 *     that rounds every op's output to binary16 (and, with accum_dtype float16, the
 *     accumulators after every micro-batch): the stash and the rings keep binary16 without
 *     losing a bit; the same weights on the threaded runner;
 *   - the stash and exchange bytes of float16 are half those of float32 (plan and report);
 *   - a power-of-two static loss scale leaves the fp32 bits unchanged (dloss times 2^k and the
 *     gradients divided by 2^k are exact);
 *   - an overflowing gradient stops a run with IPUP_ERR_NUMERIC without dynamic scaling, and
 *     with it the step is skipped (weights unchanged), counted, and the scale halved;
 *   - Adam's first moment in float16 holds binary16 values; bad settings are refused.
 */
#include "tiny_model.h"
#include "ttest.h"

#include <math.h>

#define IN 8
#define H1 16
#define H2 12
#define CL 4
#define BATCH 4
#define MB 2
#define POOL (1u << 20)

static ipup_emu g_emu, g_emu2;
static IPUP_ALIGN64 uint8_t g_ipu[2][POOL], g_host[POOL];

static void sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int64_t j = sample0 + i;
    int k;
    for (k = 0; k < IN; k++) x[k] = sinf((float)(j * 7 + k * 3) * 0.37f) * 1.3f;
    *label = (int32_t)(j % CL);
}
static tiny_data g_data = {sample, IN};

static ipup_model_desc g_model;
static ipup_config cfg_of(int32_t stages, ipup_optimizer_kind opt) {
    ipup_config c;
    static const int32_t split[1] = {2};
    tiny_model_or_exit(&g_model, 1, 1, IN, "dense16,relu,dense12,relu,dense4,xent");
    c = tiny_config(&g_model, stages, BATCH, MB, 1, 11, opt, 0.5f, tiny_infeed, &g_data);
    c.split = stages == 2 ? split : NULL;
    tiny_pools(&c, stages, g_ipu, NULL, POOL, g_host, POOL);
    return c;
}
static float hround(float v) {
    uint16_t h;
    float r;
    ipup_f32_to_f16(1, &v, &h);
    ipup_f16_to_f32(1, &h, &r);
    return r;
}
static void hround_n(float *x, int n) {
    int i;
    for (i = 0; i < n; i++) x[i] = hround(x[i]);
}
static void get(ipup_emu *e, const char *name, float *dst, int n) {
    ipup_tensor_info t;
    TT_EQ_INT(ipup_tensor_find(e, name, &t), IPUP_OK);
    TT_EQ_INT(t.n, n);
    TT_EQ_INT(ipup_tensor_read(e, &t, 0, n, dst), IPUP_OK);
}

/* the plain loop: steps of MB micro-batches, SGD, every op's output rounded to binary16 */
typedef struct ref_net {
    float w1[IN * H1], b1[H1], w3[H1 * H2], b3[H2], w2[H2 * CL], b2[CL];
} ref_net;
static void ref_steps(ref_net *n, int t0, int steps, int accum16, float lr) {
    int t, m;
    for (t = t0; t < t0 + steps; t++) {
        float g1[IN * H1] = {0}, gb1[H1] = {0}, g3[H1 * H2] = {0}, gb3[H2] = {0};
        float g2[H2 * CL] = {0}, gb2[CL] = {0};
        for (m = 0; m < MB; m++) {
            float x[BATCH * IN], z1[BATCH * H1], a1[BATCH * H1], z2[BATCH * CL], dl[BATCH * CL];
            float da1[BATCH * H1], dz1[BATCH * H1], z3[BATCH * H2], a3[BATCH * H2];
            float da3[BATCH * H2], dz3[BATCH * H2];
            int32_t lab[BATCH];
            int i, corr;
            for (i = 0; i < BATCH; i++)
                sample(((int64_t)t * MB + m) * BATCH, i, x + i * IN, lab + i);
            hround_n(x, BATCH * IN);
            ipup_dense_fwd_f32(BATCH, IN, H1, x, n->w1, n->b1, z1);
            hround_n(z1, BATCH * H1);
            ipup_relu_fwd_f32(BATCH * H1, z1, a1);
            ipup_dense_fwd_f32(BATCH, H1, H2, a1, n->w3, n->b3, z3);
            hround_n(z3, BATCH * H2);
            ipup_relu_fwd_f32(BATCH * H2, z3, a3);
            ipup_dense_fwd_f32(BATCH, H2, CL, a3, n->w2, n->b2, z2);
            hround_n(z2, BATCH * CL);
            (void)ipup_softmax_xent_f32(BATCH, CL, z2, lab, dl, &corr);
            hround_n(dl, BATCH * CL);
            ipup_dense_bwd_f32(BATCH, H2, CL, a3, n->w2, dl, da3, g2, gb2);
            hround_n(da3, BATCH * H2);
            ipup_relu_bwd_f32(BATCH * H2, a3, da3, dz3);
            ipup_dense_bwd_f32(BATCH, H1, H2, a1, n->w3, dz3, da1, g3, gb3);
            hround_n(da1, BATCH * H1);
            ipup_relu_bwd_f32(BATCH * H1, a1, da1, dz1);
            hround_n(dz1, BATCH * H1);
            ipup_dense_bwd_f32(BATCH, IN, H1, x, n->w1, dz1, NULL, g1, gb1);
            if (accum16) {
                hround_n(g1, IN * H1); hround_n(gb1, H1); hround_n(g2, H2 * CL); hround_n(gb2, CL);
                hround_n(g3, H1 * H2); hround_n(gb3, H2);
            }
        }
        ipup_sgd_f32(IN * H1, lr, 1.0f / MB, n->w1, g1);
        ipup_sgd_f32(H1, lr, 1.0f / MB, n->b1, gb1);
        ipup_sgd_f32(H1 * H2, lr, 1.0f / MB, n->w3, g3);
        ipup_sgd_f32(H2, lr, 1.0f / MB, n->b3, gb3);
        ipup_sgd_f32(H2 * CL, lr, 1.0f / MB, n->w2, g2);
        ipup_sgd_f32(CL, lr, 1.0f / MB, n->b2, gb2);
    }
}
static void net_of(ipup_emu *e, ref_net *n) {
    get(e, "dense16.w", n->w1, IN * H1);
    get(e, "dense16.b", n->b1, H1);
    get(e, "dense12.w", n->w3, H1 * H2);
    get(e, "dense12.b", n->b3, H2);
    get(e, "dense4.w", n->w2, H2 * CL);
    get(e, "dense4.b", n->b2, CL);
}

/* ipup_predict (forward-only table, binary16 rings) and ipup_evaluate on 11 samples give
   the rounded forward of the reference */
static void check_predict(ref_net *n) {
    enum { NS = 11 };
    float x[NS * IN], got[NS * CL], want[NS * CL], xr[NS * IN], z1[NS * H1], z3[NS * H2];
    int32_t lab[NS];
    int i, c;
    double loss = 0.0;
    int64_t correct = 0;
    for (i = 0; i < NS; i++) sample(1000, i, x + i * IN, lab + i);
    memcpy(xr, x, sizeof x);
    hround_n(xr, NS * IN);
    ipup_dense_fwd_f32(NS, IN, H1, xr, n->w1, n->b1, z1);
    hround_n(z1, NS * H1);
    ipup_relu_fwd_f32(NS * H1, z1, z1);
    ipup_dense_fwd_f32(NS, H1, H2, z1, n->w3, n->b3, z3);
    hround_n(z3, NS * H2);
    ipup_relu_fwd_f32(NS * H2, z3, z3);
    ipup_dense_fwd_f32(NS, H2, CL, z3, n->w2, n->b2, want);
    hround_n(want, NS * CL);
    TT_EQ_INT(ipup_predict(&g_emu, NS, x, got, NULL), IPUP_OK);
    TT_CHECK_MSG(memcmp(got, want, sizeof got) == 0,
                 "ipup_predict differs from the rounded forward");
    TT_EQ_INT(ipup_evaluate(&g_emu, NS, x, lab, &loss, &correct), IPUP_OK);
    for (i = 0, c = 0; i < NS; i++) {
        int k, best = 0;
        for (k = 1; k < CL; k++) if (want[i * CL + k] > want[i * CL + best]) best = k;
        c += best == lab[i];
    }
    TT_EQ_INT(correct, c);
}

/* the weights of a float16 run with fp32 master weights (cfg.fp32_weights) */
static void check_reference(int accum16, ipup_runner_kind runner, ipup_sched_kind sched) {
    ipup_config c = cfg_of(2, IPUP_OPT_SGD);
    ref_net ref, got;
    c.dtype = IPUP_DTYPE_F16;
    c.fp32_weights = 1;
    c.accum_dtype = accum16 ? IPUP_DTYPE_F16 : IPUP_DTYPE_F32;
    c.runner = runner;
    c.schedule = sched;
    c.repeat = 3;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    net_of(&g_emu, &ref);
    ref_steps(&ref, 0, 3, accum16, 0.5f);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    net_of(&g_emu, &got);
    TT_CHECK_MSG(memcmp(&ref, &got, sizeof ref) == 0,
                 "accum %d runner %d schedule %d: the weights differ from the reference loop's",
                 accum16, (int)runner, (int)sched);
    check_predict(&got);
    ipup_shutdown(&g_emu);
}

TTEST(dtype_names) {
    int32_t d = -1;
    TT_EQ_INT(ipup_dtype_parse("float16", &d), IPUP_OK);
    TT_EQ_INT(d, IPUP_DTYPE_F16);
    TT_EQ_INT(ipup_dtype_parse("FP32", &d), IPUP_OK);
    TT_EQ_INT(d, IPUP_DTYPE_F32);
    TT_EQ_INT(ipup_dtype_parse("bfloat16", &d), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_dtype_parse(NULL, &d), IPUP_ERR_ARG);
    TT_STREQ(ipup_dtype_name(IPUP_DTYPE_F16), "float16");
    TT_STREQ(ipup_dtype_name(IPUP_DTYPE_F32), "float32");
}

/* the binary16 value next to r (a binary16 value) on the other side of a */
static float hother(float r, float a) {
    uint16_t h;
    float o;
    ipup_f32_to_f16(1, &r, &h);
    if ((r < 0.0f ? -r : r) > (a < 0.0f ? -a : a)) h--; /* magnitude down */
    else h++;
    ipup_f16_to_f32(1, &h, &o);
    return o;
}
/* Binary16 weights (cfg.dtype float16 without fp32_weights): stored as binary16, and after
   every step each weight is one of the two binary16 values around the fp32 update the
   rounded loop makes from the step's weights (the value itself when binary16 holds it);
   *away counts those rounded away from the nearest. *first: the weights of the first
   configuration, which every other must give bit for bit. */
static void check_w16(int accum16, ipup_runner_kind runner, ipup_sched_kind sched,
                      ref_net *first, int *have_first, int *away) {
    ipup_config c = cfg_of(2, IPUP_OPT_SGD);
    ipup_tensor_info ti;
    ref_net ref, got;
    int t;
    size_t i, bad = 0;
    c.dtype = IPUP_DTYPE_F16;
    c.accum_dtype = accum16 ? IPUP_DTYPE_F16 : IPUP_DTYPE_F32;
    c.runner = runner;
    c.schedule = sched;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense12.w", &ti), IPUP_OK);
    TT_CHECK(ti.data == NULL && ti.data_f16 != NULL);
    for (t = 0; t < 3; t++) {
        const float *a = (const float *)(const void *)&ref, *b = (const float *)(const void *)&got;
        net_of(&g_emu, &ref);
        ref_steps(&ref, t, 1, accum16, 0.5f);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        net_of(&g_emu, &got);
        for (i = 0; i < sizeof ref / sizeof(float); i++) {
            const float r = hround(a[i]);
            if (b[i] == r) continue;
            if (r != a[i] && b[i] == hother(r, a[i])) (*away)++;
            else bad++;
        }
    }
    TT_CHECK_MSG(bad == 0, "accum %d runner %d schedule %d: %zu weights are neither binary16 "
                 "neighbour of the fp32 update", accum16, (int)runner, (int)sched, bad);
    if (!*have_first) { *first = got; *have_first = 1; }
    else TT_CHECK_MSG(memcmp(first, &got, sizeof got) == 0,
                      "accum %d runner %d schedule %d: the bits differ from the first run's",
                      accum16, (int)runner, (int)sched);
    check_predict(&got);
    ipup_shutdown(&g_emu);
}

TTEST(float16_weights_round_stochastically) {
    ref_net first;
    int have = 0, away = 0;
    check_w16(0, IPUP_RUNNER_COOP, IPUP_SCHED_GROUPED, &first, &have, &away);
    check_w16(0, IPUP_RUNNER_COOP, IPUP_SCHED_1F1B, &first, &have, &away);
    check_w16(0, IPUP_RUNNER_COOP, IPUP_SCHED_ZBH1, &first, &have, &away);
#ifndef IPUPIPE_NO_THREADS
    check_w16(0, IPUP_RUNNER_THREADS, IPUP_SCHED_1F1B, &first, &have, &away);
#endif
    /* of the 4 x 3 x (about 460) updates some go to the farther neighbour */
    TT_CHECK_MSG(away > 0, "no weight was rounded away from the nearest binary16 value");
    have = 0;
    check_w16(1, IPUP_RUNNER_COOP, IPUP_SCHED_GPIPE, &first, &have, &away);
}

/* A dense layer of more than IPUPIPE_W16_CHUNK_FLOATS weights (dense1024 over 64 inputs:
   65,536) is unpacked a chunk of rows at a time: its forward, the input gradient it sends
   back and its weight gradient agree with the fp32-weights run from the same weights (to
   binary16's precision), and every schedule and runner gives the same bits. */
static ipup_config chunked_cfg(ipup_model_desc *m, int fp32w, ipup_sched_kind k, int threads) {
    static const int32_t split[1] = {2};
    ipup_config c;
    tiny_model_or_exit(m, 1, 1, IN, "dense64,relu,dense1024,relu,dense4,xent");
    c = tiny_config(m, 2, BATCH, MB, 1, 11, IPUP_OPT_SGD, 0.5f, tiny_infeed, &g_data);
    c.split = split;
    c.dtype = IPUP_DTYPE_F16;
    c.fp32_weights = fp32w;
    c.schedule = k;
#ifndef IPUPIPE_NO_THREADS
    c.runner = threads ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
#else
    (void)threads;
#endif
    return c;
}
static void copy_weights(ipup_emu *from, ipup_emu *to) {
    static float buf[1024 * 64];
    int32_t i, n = ipup_tensor_count(from);
    for (i = 0; i < n; i++) {
        ipup_tensor_info a, b;
        TT_EQ_INT(ipup_tensor_get(from, i, &a), IPUP_OK);
        TT_EQ_INT(ipup_tensor_find(to, a.name, &b), IPUP_OK);
        TT_EQ_INT(ipup_tensor_read(from, &a, 0, a.n, buf), IPUP_OK);
        TT_EQ_INT(ipup_tensor_write(to, &b, 0, b.n, buf), IPUP_OK);
    }
}
TTEST(float16_chunked_dense) {
    static IPUP_ALIGN64 uint8_t ipu2[2][POOL], host2[POOL];
    static float wa[1024 * 64], wb[1024 * 64];
    static const char *const names[3] = {"dense64.w", "dense1024.w", "dense4.w"};
    static const ipup_sched_kind kinds[3] = {IPUP_SCHED_GROUPED, IPUP_SCHED_1F1B, IPUP_SCHED_ZBH1};
    ipup_model_desc ma, mb;
    ipup_config ca = chunked_cfg(&ma, 0, IPUP_SCHED_GROUPED, 0), cb;
    float xa[11 * IN], pa[11 * 4], pb[11 * 4];
    int32_t i, j, k, far = 0;
    cb = chunked_cfg(&mb, 1, IPUP_SCHED_GROUPED, 0);
    tiny_pools(&ca, 2, g_ipu, NULL, POOL, g_host, POOL);
    tiny_pools(&cb, 2, ipu2, NULL, POOL, host2, POOL);
    TT_EQ_INT(ipup_init(&g_emu, &ca), IPUP_OK);
    TT_EQ_INT(ipup_init(&g_emu2, &cb), IPUP_OK);
    copy_weights(&g_emu, &g_emu2);
    for (i = 0; i < 11; i++) { int32_t lab; sample(500, i, xa + i * IN, &lab); }
    TT_EQ_INT(ipup_predict(&g_emu, 11, xa, pa, NULL), IPUP_OK);
    TT_EQ_INT(ipup_predict(&g_emu2, 11, xa, pb, NULL), IPUP_OK);
    for (i = 0; i < 11 * 4; i++)
        TT_CHECK_MSG(fabsf(pa[i] - pb[i]) <= 1e-2f * (1.0f + fabsf(pb[i])), "output %d: %g %g",
                     (int)i, (double)pa[i], (double)pb[i]);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu2, NULL), IPUP_OK);
    for (k = 0; k < 3; k++) { /* one step of SGD: each weight within binary16's spacing */
        ipup_tensor_info ta, tb;
        TT_EQ_INT(ipup_tensor_find(&g_emu, names[k], &ta), IPUP_OK);
        TT_EQ_INT(ipup_tensor_find(&g_emu2, names[k], &tb), IPUP_OK);
        TT_EQ_INT(ipup_tensor_read(&g_emu, &ta, 0, ta.n, wa), IPUP_OK);
        TT_EQ_INT(ipup_tensor_read(&g_emu2, &tb, 0, tb.n, wb), IPUP_OK);
        for (j = 0; j < ta.n; j++)
            far += fabsf(wa[j] - wb[j]) > 1.0f / 1024.0f * fabsf(wb[j]) + 1e-7f;
    }
    TT_CHECK_MSG(far == 0, "%d weights differ from the fp32-weights step by more than 2^-10",
                 (int)far);
    ipup_shutdown(&g_emu2);
    {
        ipup_tensor_info t;
        TT_EQ_INT(ipup_tensor_find(&g_emu, "dense1024.w", &t), IPUP_OK);
        TT_EQ_INT(ipup_tensor_read(&g_emu, &t, 0, t.n, wa), IPUP_OK);
    }
    ipup_shutdown(&g_emu);
    for (k = 0; k < 4; k++) { /* the same bits on other schedules and the threaded runner */
        ipup_config c = chunked_cfg(&mb, 0, kinds[k % 3], k == 3);
        ipup_tensor_info t;
        tiny_pools(&c, 2, g_ipu, NULL, POOL, g_host, POOL);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
        TT_EQ_INT(ipup_tensor_find(&g_emu, "dense1024.w", &t), IPUP_OK);
        TT_EQ_INT(ipup_tensor_read(&g_emu, &t, 0, t.n, wb), IPUP_OK);
        TT_CHECK_MSG(memcmp(wa, wb, (size_t)t.n * sizeof(float)) == 0, "schedule %d", (int)k);
        ipup_shutdown(&g_emu);
    }
}

TTEST(float16_run_is_the_rounded_loop) {
    check_reference(0, IPUP_RUNNER_COOP, IPUP_SCHED_GROUPED);
    check_reference(0, IPUP_RUNNER_COOP, IPUP_SCHED_1F1B);
    check_reference(0, IPUP_RUNNER_COOP, IPUP_SCHED_ZBH1);
    check_reference(1, IPUP_RUNNER_COOP, IPUP_SCHED_GPIPE);
#ifndef IPUPIPE_NO_THREADS
    check_reference(0, IPUP_RUNNER_THREADS, IPUP_SCHED_1F1B);
    check_reference(1, IPUP_RUNNER_THREADS, IPUP_SCHED_GROUPED);
#endif
}

TTEST(float16_halves_stash_and_exchange) {
    ipup_config c = cfg_of(2, IPUP_OPT_SGD);
    ipup_plan p32, p16;
    int d;
    c.microbatch = 64; /* entries large enough that the 64-byte rounding does not matter */
    TT_EQ_INT(ipup_plan_config(&g_emu2, &c, &p32), IPUP_OK);
    c.dtype = IPUP_DTYPE_F16;
    TT_EQ_INT(ipup_plan_config(&g_emu2, &c, &p16), IPUP_OK);
    for (d = 0; d < 2; d++) {
        const size_t s32 = p32.mem[d].by_category[IPUP_MEM_STASH],
                     s16 = p16.mem[d].by_category[IPUP_MEM_STASH],
                     x32 = p32.mem[d].by_category[IPUP_MEM_EXCHANGE],
                     x16 = p16.mem[d].by_category[IPUP_MEM_EXCHANGE];
        TT_CHECK_MSG(s16 * 2 <= s32 + 512 && s16 * 2 + 512 >= s32, "IPU%d stash %zu -> %zu", d,
                     s32, s16);
        TT_CHECK_MSG(x16 * 2 <= x32 + 512 && x16 * 2 + 512 >= x32, "IPU%d exchange %zu -> %zu",
                     d, x32, x16);
        TT_CHECK_MSG(p16.mem[d].by_category[IPUP_MEM_WEIGHTS] * 2 <=
                             p32.mem[d].by_category[IPUP_MEM_WEIGHTS] + 128,
                     "IPU%d weights %zu -> %zu", d, p32.mem[d].by_category[IPUP_MEM_WEIGHTS],
                     p16.mem[d].by_category[IPUP_MEM_WEIGHTS]);
    }
    /* ipup_init carves what the plan says */
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    for (d = 0; d < 2; d++) {
        ipup_mem_report r;
        TT_EQ_INT(ipup_memory_report(&g_emu, d, &r), IPUP_OK);
        TT_EQ_INT(r.used, p16.ipu_bytes[d]);
        TT_EQ_INT(r.by_category[IPUP_MEM_STASH], p16.mem[d].by_category[IPUP_MEM_STASH]);
    }
    ipup_shutdown(&g_emu);
}

/* the weights of a run of `steps` with configuration c */
static void run_weights(ipup_config *c, int steps, ref_net *out, int expect, ipup_run_stats *st) {
    c->repeat = steps;
    TT_EQ_INT(ipup_init(&g_emu, c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, st), expect);
    net_of(&g_emu, out);
    ipup_shutdown(&g_emu);
}

TTEST(power_of_two_loss_scale_keeps_fp32_bits) {
    ipup_config c = cfg_of(2, IPUP_OPT_MOMENTUM);
    ref_net a, b;
    run_weights(&c, 4, &a, IPUP_OK, NULL);
    c = cfg_of(2, IPUP_OPT_MOMENTUM);
    c.loss_scale = 1024.0f;
    run_weights(&c, 4, &b, IPUP_OK, NULL);
    TT_CHECK(memcmp(&a, &b, sizeof a) == 0);
    c = cfg_of(2, IPUP_OPT_MOMENTUM); /* and a scale that is not a power of two changes them */
    c.loss_scale = 1000.0f;
    run_weights(&c, 4, &b, IPUP_OK, NULL);
    TT_CHECK(memcmp(&a, &b, sizeof a) != 0);
}

TTEST(overflow_stops_or_skips) {
    ipup_config c = cfg_of(2, IPUP_OPT_SGD);
    ipup_run_stats st;
    ref_net before, after;
    c.dtype = IPUP_DTYPE_F16;
    c.loss_scale = 1.0e9f; /* dloss x 1e9 overflows binary16 */
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_ERR_NUMERIC);
    TT_CHECK(strstr(ipup_last_error(&g_emu), "NaN or infinite") != NULL);
    ipup_shutdown(&g_emu);

    c = cfg_of(2, IPUP_OPT_SGD);
    c.dtype = IPUP_DTYPE_F16;
    c.loss_scale = 1.0e9f;
    c.loss_scale_dynamic = 1;
    c.loss_scale_period = 1000;
    c.repeat = 1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    net_of(&g_emu, &before);
    TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_OK); /* the first step overflows: skipped */
    net_of(&g_emu, &after);
    TT_CHECK(memcmp(&before, &after, sizeof before) == 0);
    TT_EQ_INT(st.skipped_steps, 1);
    TT_NEAR(st.loss_scale, 0.5e9f, 1.0);
    TT_NEAR(ipup_loss_scale(&g_emu), 0.5e9f, 1.0);
    TT_EQ_INT(ipup_get_step(&g_emu), 1); /* a skipped step still counts as a step */
    ipup_shutdown(&g_emu);

    /* 40 steps: the scale falls until the gradients fit, then training proceeds; the same
       bits on both runners */
    c.repeat = 40;
    run_weights(&c, 40, &before, IPUP_OK, &st);
    TT_CHECK_MSG(st.skipped_steps > 5 && st.skipped_steps < 40, "skipped %lld",
                 (long long)st.skipped_steps);
    TT_CHECK(st.loss_scale < 1.0e9f / 32.0f);
    TT_CHECK(isfinite(before.w1[0]) && isfinite(before.w2[3]));
#ifndef IPUPIPE_NO_THREADS
    c.runner = IPUP_RUNNER_THREADS;
    run_weights(&c, 40, &after, IPUP_OK, &st);
    TT_CHECK(memcmp(&before, &after, sizeof before) == 0);
#endif
}

TTEST(dynamic_scale_grows_after_clean_steps) {
    ipup_config c = cfg_of(2, IPUP_OPT_SGD);
    ipup_run_stats st;
    ref_net w;
    c.dtype = IPUP_DTYPE_F16;
    c.loss_scale = 8.0f;
    c.loss_scale_dynamic = 1;
    c.loss_scale_period = 3;
    run_weights(&c, 7, &w, IPUP_OK, &st);
    TT_EQ_INT(st.skipped_steps, 0);
    TT_NEAR(st.loss_scale, 32.0f, 0.0); /* doubled after steps 3 and 6 */
}

TTEST(adam_first_moment_float16) {
    ipup_config c = cfg_of(1, IPUP_OPT_ADAM);
    ipup_tensor_info t;
    int i, exact = 1;
    c.opt.first_moment_dtype = IPUP_DTYPE_F16;
    c.repeat = 3;
    c.opt.lr = 0.01f;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&g_emu, NULL), IPUP_OK);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense16.w.m", &t), IPUP_OK);
    for (i = 0; i < t.n; i++)
        if (hround(t.data[i]) != t.data[i]) exact = 0;
    TT_CHECK(exact);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense16.w.v", &t), IPUP_OK);
    for (i = 0, exact = 1; i < t.n; i++)
        if (hround(t.data[i]) != t.data[i]) exact = 0;
    TT_CHECK(!exact); /* the second moment stays fp32 */
    ipup_shutdown(&g_emu);
}

TTEST(bad_settings_refused) {
    ipup_config c = cfg_of(2, IPUP_OPT_SGD);
    c.dtype = 7;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CHECK(strstr(ipup_last_error(&g_emu), "cfg.dtype is 7") != NULL);
    c = cfg_of(2, IPUP_OPT_SGD);
    c.accum_dtype = -1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CHECK(strstr(ipup_last_error(&g_emu), "cfg.accum_dtype") != NULL);
    c = cfg_of(2, IPUP_OPT_SGD);
    c.loss_scale = -2.0f;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CHECK(strstr(ipup_last_error(&g_emu), "cfg.loss_scale") != NULL);
    c = cfg_of(2, IPUP_OPT_SGD);
    c.loss_scale_period = -1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CHECK(strstr(ipup_last_error(&g_emu), "loss_scale_period") != NULL);
    TT_NEAR(ipup_loss_scale(NULL), 0.0f, 0.0);
}

/* an mse model (float targets in the label region, binary16 in the stash and the rings)
   with a frozen layer: the same weights on every schedule and runner, fp16-exact outputs */
static int mse_infeed(void *user, const ipup_feed *f) {
    int32_t i, k;
    (void)user;
    if (!f->targets || f->target_width != 3) return -1;
    for (i = 0; i < f->n; i++) {
        const int64_t j = f->sample0 + i;
        for (k = 0; k < IN; k++) f->x[i * IN + k] = cosf((float)(j * 5 + k) * 0.21f);
        for (k = 0; k < 3; k++) f->targets[i * 3 + k] = sinf((float)(j + k) * 0.13f) * 0.7f;
    }
    return 0;
}
TTEST(float16_mse_and_frozen) {
    static const int32_t split[1] = {2};
    static const ipup_sched_kind kinds[3] = {IPUP_SCHED_GROUPED, IPUP_SCHED_1F1B, IPUP_SCHED_ZBH1};
    ipup_model_desc m;
    float first[3 * 16], w[3 * 16];
    int k, r;
    tiny_model_or_exit(&m, 1, 1, IN, "dense16:frozen,relu,dense16,relu,dense3,mse");
    for (k = 0; k < 3; k++)
        for (r = 0; r < 2; r++) {
            ipup_config c =
                tiny_config(&m, 2, BATCH, MB, 5, 3, IPUP_OPT_SGD, 0.1f, mse_infeed, NULL);
            ipup_tensor_info t;
            ipup_run_stats st;
            c.split = split;
            c.dtype = IPUP_DTYPE_F16;
            c.schedule = kinds[k];
            c.runner = r ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
#ifdef IPUPIPE_NO_THREADS
            c.runner = IPUP_RUNNER_COOP;
#endif
            tiny_pools(&c, 2, g_ipu, NULL, POOL, g_host, POOL);
            TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
            TT_EQ_INT(ipup_run(&g_emu, &st), IPUP_OK);
            TT_CHECK(st.loss_mean > 0.0 && st.loss_mean < 10.0);
            TT_EQ_INT(ipup_tensor_find(&g_emu, "dense3.w", &t), IPUP_OK);
            TT_EQ_INT(ipup_tensor_read(&g_emu, &t, 0, 3 * 16, k || r ? w : first), IPUP_OK);
            if (k || r)
                TT_CHECK_MSG(memcmp(w, first, sizeof w) == 0, "schedule %d runner %d", k, r);
            ipup_shutdown(&g_emu);
        }
}

static const ttest_case cases[] = {
    TT_CASE(float16_mse_and_frozen),
    TT_CASE(float16_weights_round_stochastically),
    TT_CASE(float16_chunked_dense),
    TT_CASE(dtype_names),
    TT_CASE(float16_run_is_the_rounded_loop),
    TT_CASE(float16_halves_stash_and_exchange),
    TT_CASE(power_of_two_loss_scale_keeps_fp32_bits),
    TT_CASE(overflow_stops_or_skips),
    TT_CASE(dynamic_scale_grows_after_clean_steps),
    TT_CASE(adam_first_moment_float16),
    TT_CASE(bad_settings_refused),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
