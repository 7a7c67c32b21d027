/* bench.c - how many instructions the kernels execute on a Cortex-M4F (QEMU mps2-an386,
   -icount shift=0): the portable kernels (ipup_*_portable, what every Cortex-M build ran
   before) against the path this build selects (IPUP_KERNELS_SIMD: "scalar-blocked", the
   register-blocked kernels for cores without SIMD), in the same image, at the firmware's
   shapes (fw_model.h: MLP 196-64-32-10, micro-batch 8) and at a small convolution.

   Counted are INSTRUCTIONS, not cycles: QEMU's -icount advances virtual time by one
   nanosecond per executed instruction and the CMSDK timer (main.c, fw_timer_*) counts
   that time; it models no pipeline, no memory wait state and no FPU latency (a VMLA.F32
   is one instruction here, three cycles on a Cortex-M4). Each figure is a mean over
   enough repetitions that the timer's resolution (40 instructions) is below 0.1 %.

   Per kernel: instructions per multiply-accumulate (MAC), portable and blocked; the
   outputs of both are compared bit for bit (memcmp). Then one training step of the
   firmware's MLP, 32 samples (4 micro-batches of 8, gradients accumulated, SGD), as
   main.c's plain kernel loop runs it, with each set of kernels: instructions per step
   and the final weights' hash, which must be the same. Exit 0 when every comparison
   held (make firmware-bench, firmware.mk). Before the step, the kernels' bits are
   compared at 300 more shapes (check_shapes), untimed. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "semihost.h"

static void fw_assert_fail(const char *what, const char *file, int line);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : fw_assert_fail(#c, __FILE__, __LINE__))
#define IPUPIPE_NO_THREADS
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"  /* the kernels, and ipup_vsnprintf for fw_print.h */
#include "fw_print.h"

#define BN 8   /* fw_model.h: micro-batch B, the layers, M micro-batches per step */
#define L0 196
#define L1 64
#define L2 32
#define L3 10
#define BM 4
#define LR 0.5f

/* CMSDK APB timer 0 under QEMU -icount shift=0: 40 instructions a tick (main.c) */
#define FW_TIMER ((volatile uint32_t *)0x40000000u)
#define INSNS_PER_TICK 40u
static uint32_t ticks(void) { return 0xFFFFFFFFu - FW_TIMER[1]; }

static void fw_assert_fail(const char *what, const char *file, int line)
{
    char buf[200];
    (void)ipup_snprintf(buf, sizeof buf, "BENCH ASSERT: %s at %s:%d\n", what, file, line);
    fw_puts(buf);
    fw_exit(2);
}

/* the model's tensors and one step's inputs; the kernel timings reuse them */
static float w1[L0 * L1], b1[L1], w2[L1 * L2], b2[L2], w3[L2 * L3], b3[L3];
static float g1[L0 * L1], gb1[L1], g2[L1 * L2], gb2[L2], g3[L2 * L3], gb3[L3];
static float xs[BM][BN * L0], h1[BN * L1], a1[BN * L1], h2[BN * L2], a2[BN * L2], lg[BN * L3];
static float dlg[BN * L3], da2[BN * L2], da1[BN * L1], out1[BN * L0], out2[BN * L0];
static float gdy[BN * L1]; /* the (B, OUT) gradient of the kernel timings */
static int32_t labels[BM][BN];
/* the small convolution: B 2, 10 x 10 x 4 -> 8 x 8 x 8 */
#define CB 2
#define CH 10
#define CI 4
#define CO 8
#define COUT (CB * (CH - 2) * (CH - 2) * CO)
static float cx[CB * CH * CH * CI], cw[9 * CI * CO], cb[CO], cdy[COUT], cy1[COUT], cy2[COUT];
static float cdx1[CB * CH * CH * CI], cdx2[CB * CH * CH * CI], cdw1[9 * CI * CO], cdw2[9 * CI * CO];

static int failures;

typedef void (*fwd_fn)(int, int, int, const float *, const float *, const float *, float *);
typedef void (*bwd_fn)(int, int, int, const float *, const float *, const float *, float *,
                       float *, float *);

static void fill(float *p, int n, uint64_t stream, float lo, float hi)
{
    int i;
    for (i = 0; i < n; i++) p[i] = lo + (hi - lo) * ipup_rng_uniform_f32(11u, stream, (uint64_t)i);
}

/* FNV-1a, 64-bit, over the bits of n floats (as main.c) */
static uint64_t fnv(uint64_t h, const float *x, int n)
{
    const uint8_t *p = (const uint8_t *)(const void *)x;
    size_t i;
    for (i = 0; i < (size_t)n * sizeof(float); i++) { h ^= p[i]; h *= UINT64_C(1099511628211); }
    return h;
}

/* instructions per call of `reps` calls that took t ticks */
static uint64_t insns(uint32_t t, int reps)
{
    return (uint64_t)t * INSNS_PER_TICK / (uint64_t)reps;
}

/* instructions per MAC as "I.II" (two decimals, rounded) into buf */
static const char *per_mac(char *buf, size_t cap, uint64_t instructions, long macs)
{
    uint64_t v = (instructions * 100u + (uint64_t)macs / 2u) / (uint64_t)macs;
    (void)ipup_snprintf(buf, cap, "%lu.%02lu", (unsigned long)(v / 100u),
                        (unsigned long)(v % 100u));
    return buf;
}

static void report(const char *kernel, const char *shape, long macs, int reps, uint32_t tp,
                   uint32_t tb, int same)
{
    char p[16], b[16];
    fw_printf("%-22s %-12s %7ld MACs: portable %6s, blocked %5s instructions/MAC (%lu.%lux fewer), "
              "bits %s\n", kernel, shape, macs, per_mac(p, sizeof p, insns(tp, reps), macs),
              per_mac(b, sizeof b, insns(tb, reps), macs), (unsigned long)(tp / (tb ? tb : 1u)),
              (unsigned long)(tp * 10u / (tb ? tb : 1u) % 10u), same ? "identical" : "DIFFERENT");
    if (!same) failures++;
}

#define TIME(t, reps, call)                                                                   \
    do {                                                                                      \
        int r_;                                                                               \
        uint32_t t0_ = ticks();                                                               \
        for (r_ = 0; r_ < (reps); r_++) { call; }                                             \
        (t) = ticks() - t0_;                                                                  \
    } while (0)

/* one dense layer's three kernels at (BN, in, out): x, w, dy from the model's arrays */
static void bench_dense(int in, int out, const float *x, const float *w, float *dw, float *db,
                        int with_dx, uint64_t sum[3][2])
{
    const long macs = (long)BN * in * out;
    const int reps = (int)(800000L / macs) + 1;
    const float *dy = gdy;
    char shape[24];
    uint32_t tp, tb;
    int same;
    (void)ipup_snprintf(shape, sizeof shape, "%dx%dx%d", BN, in, out);
    ipup_dense_fwd_f32_portable(BN, in, out, x, w, b1, out1);
    ipup_dense_fwd_f32(BN, in, out, x, w, b1, out2);
    same = memcmp(out1, out2, sizeof(float) * (size_t)(BN * out)) == 0;
    TIME(tp, reps, ipup_dense_fwd_f32_portable(BN, in, out, x, w, b1, out1));
    TIME(tb, reps, ipup_dense_fwd_f32(BN, in, out, x, w, b1, out2));
    report("dense forward", shape, macs, reps, tp, tb, same);
    sum[0][0] += insns(tp, reps); sum[0][1] += insns(tb, reps);
    if (with_dx) {
        ipup_dense_bwd_f32_portable(BN, in, out, x, w, dy, out1, NULL, NULL);
        ipup_dense_bwd_f32(BN, in, out, x, w, dy, out2, NULL, NULL);
        same = memcmp(out1, out2, sizeof(float) * (size_t)(BN * in)) == 0;
        TIME(tp, reps, ipup_dense_bwd_f32_portable(BN, in, out, x, w, dy, out1, NULL, NULL));
        TIME(tb, reps, ipup_dense_bwd_f32(BN, in, out, x, w, dy, out2, NULL, NULL));
        report("dense input gradient", shape, macs, reps, tp, tb, same);
        sum[1][0] += insns(tp, reps); sum[1][1] += insns(tb, reps);
    }
    ipup_zeros_f32(in * out, dw); ipup_zeros_f32(out, db);
    ipup_dense_bwd_f32_portable(BN, in, out, x, w, dy, NULL, dw, db);
    { /* the blocked dw and db into the same arrays from 0: compare by hash */
        const uint64_t h = fnv(fnv(UINT64_C(14695981039346656037), dw, in * out), db, out);
        ipup_zeros_f32(in * out, dw); ipup_zeros_f32(out, db);
        ipup_dense_bwd_f32(BN, in, out, x, w, dy, NULL, dw, db);
        same = h == fnv(fnv(UINT64_C(14695981039346656037), dw, in * out), db, out);
    }
    TIME(tp, reps, ipup_dense_bwd_f32_portable(BN, in, out, x, w, dy, NULL, dw, db));
    TIME(tb, reps, ipup_dense_bwd_f32(BN, in, out, x, w, dy, NULL, dw, db));
    report("dense weight gradient", shape, macs, reps, tp, tb, same);
    sum[2][0] += insns(tp, reps); sum[2][1] += insns(tb, reps);
}

static void bench_conv(void)
{
    const long macs = (long)COUT * 9 * CI;
    const int reps = 8;
    uint32_t tp, tb;
    int same;
    fill(cx, CB * CH * CH * CI, 20, -1.0f, 1.0f); fill(cw, 9 * CI * CO, 21, -0.5f, 0.5f);
    fill(cb, CO, 22, -0.1f, 0.1f); fill(cdy, COUT, 23, -1.0f, 1.0f);
    ipup_conv3x3_fwd_f32_portable(CB, CH, CH, CI, CO, cx, cw, cb, cy1);
    ipup_conv3x3_fwd_f32(CB, CH, CH, CI, CO, cx, cw, cb, cy2, NULL);
    same = memcmp(cy1, cy2, sizeof cy1) == 0;
    TIME(tp, reps, ipup_conv3x3_fwd_f32_portable(CB, CH, CH, CI, CO, cx, cw, cb, cy1));
    TIME(tb, reps, ipup_conv3x3_fwd_f32(CB, CH, CH, CI, CO, cx, cw, cb, cy2, NULL));
    report("conv3x3 forward", "2x10x10x4>8", macs, reps, tp, tb, same);
    ipup_conv3x3_bwd_f32_portable(CB, CH, CH, CI, CO, cx, cw, cdy, cdx1, NULL, NULL);
    ipup_conv3x3_bwd_f32(CB, CH, CH, CI, CO, cx, cw, cdy, cdx2, NULL, NULL, NULL);
    same = memcmp(cdx1, cdx2, sizeof cdx1) == 0;
    TIME(tp, reps,
         ipup_conv3x3_bwd_f32_portable(CB, CH, CH, CI, CO, cx, cw, cdy, cdx1, NULL, NULL));
    TIME(tb, reps, ipup_conv3x3_bwd_f32(CB, CH, CH, CI, CO, cx, cw, cdy, cdx2, NULL, NULL, NULL));
    report("conv3x3 input grad", "2x10x10x4>8", macs, reps, tp, tb, same);
    ipup_zeros_f32(9 * CI * CO, cdw1); ipup_zeros_f32(9 * CI * CO, cdw2);
    ipup_conv3x3_bwd_f32_portable(CB, CH, CH, CI, CO, cx, cw, cdy, NULL, cdw1, NULL);
    ipup_conv3x3_bwd_f32(CB, CH, CH, CI, CO, cx, cw, cdy, NULL, cdw2, NULL, NULL);
    same = memcmp(cdw1, cdw2, sizeof cdw1) == 0;
    TIME(tp, reps,
         ipup_conv3x3_bwd_f32_portable(CB, CH, CH, CI, CO, cx, cw, cdy, NULL, cdw1, NULL));
    TIME(tb, reps, ipup_conv3x3_bwd_f32(CB, CH, CH, CI, CO, cx, cw, cdy, NULL, cdw2, NULL, NULL));
    report("conv3x3 weight grad", "2x10x10x4>8", macs, reps, tp, tb, same);
}

/* The bits of the kernels over more shapes than the timed ones: odd reductions (the
   assembly's single step), the tile edges (rows or columns 1 to 3 past a multiple of 4),
   gradients added into non-zero values, a row of zeros in x (products of -0); dense (y with
   and without bias, dx, dw, db) and conv (y, with the ReLU, dx, dw, db). */
#define SB 9  /* the largest shape checked: dense B, IN, OUT; conv B 2, H = W 7, CI, CO */
#define SI 13
#define SO 10
#define SC 5
#define SK 9
static float sx[SB * SI], sw[SI * SO], sdy[SB * SO], sdx1[SB * SI], sdx2[SB * SI];
static float sdw1[SI * SO], sdw2[SI * SO], sdb1[SO], sdb2[SO], sy1[SB * SO], sy2[SB * SO];
static float ky1[2 * 5 * 5 * SK], ky2[2 * 5 * 5 * SK];
static float kx[2 * 7 * 7 * SC], kw[9 * SC * SK], kdy[2 * 5 * 5 * SK], kdx1[2 * 7 * 7 * SC],
    kdx2[2 * 7 * 7 * SC], kdw1[9 * SC * SK], kdw2[9 * SC * SK], kdb1[SK], kdb2[SK];

static int same_bits(const float *p, const float *q, int n)
{
    return memcmp(p, q, sizeof(float) * (size_t)n) == 0;
}

static void check_shapes(void)
{
    static const int bs[] = {1, 3, 4, 5, 8, 9}, ins[] = {1, 2, 4, 5, 7, 8, 13},
                     outs[] = {1, 3, 4, 6, 9, 10}, cis[] = {1, 3, 4, 5}, cos[] = {1, 3, 4, 9};
    int ib, ii, io, hw, n = 0, bad = 0;
    uint64_t s = 100;
    for (ib = 0; ib < 6; ib++)
        for (ii = 0; ii < 7; ii++)
            for (io = 0; io < 6; io++) {
                const int B = bs[ib], IN = ins[ii], OUT = outs[io];
                fill(sx, B * IN, s++, -1.0f, 1.0f); fill(sw, IN * OUT, s++, -1.0f, 1.0f);
                fill(sdy, B * OUT, s++, -1.0f, 1.0f); fill(sdw1, IN * OUT, s++, -1.0f, 1.0f);
                fill(sdb1, OUT, s++, -1.0f, 1.0f);
                if (n % 3 == 0) memset(sx, 0, sizeof(float) * (size_t)IN);
                memcpy(sdw2, sdw1, sizeof sdw1); memcpy(sdb2, sdb1, sizeof sdb1);
                ipup_dense_fwd_f32_portable(B, IN, OUT, sx, sw, n & 1 ? sdb1 : NULL, sy1);
                ipup_dense_fwd_f32(B, IN, OUT, sx, sw, n & 1 ? sdb1 : NULL, sy2);
                bad += !same_bits(sy1, sy2, B * OUT);
                ipup_dense_bwd_f32_portable(B, IN, OUT, sx, sw, sdy, sdx1, sdw1, sdb1);
                ipup_dense_bwd_f32(B, IN, OUT, sx, sw, sdy, sdx2, sdw2, sdb2);
                bad += !(same_bits(sdx1, sdx2, B * IN) && same_bits(sdw1, sdw2, IN * OUT) &&
                         same_bits(sdb1, sdb2, OUT));
                n++;
            }
    for (ii = 0; ii < 4; ii++)
        for (io = 0; io < 4; io++)
            for (hw = 3; hw <= 7; hw += 2) {
                const int CIn = cis[ii], COn = cos[io], nx = 2 * hw * hw * CIn;
                fill(kx, nx, s++, -1.0f, 1.0f); fill(kw, 9 * CIn * COn, s++, -1.0f, 1.0f);
                fill(kdy, 2 * (hw - 2) * (hw - 2) * COn, s++, -1.0f, 1.0f);
                fill(kdw1, 9 * CIn * COn, s++, -1.0f, 1.0f); fill(kdb1, COn, s++, -1.0f, 1.0f);
                memcpy(kdw2, kdw1, sizeof kdw1); memcpy(kdb2, kdb1, sizeof kdb1);
                ipup_conv3x3_fwd_f32_portable(2, hw, hw, CIn, COn, kx, kw, kdb1, ky1);
                ipup_relu_fwd_f32(2 * (hw - 2) * (hw - 2) * COn, ky1, ky1);
                ipup_conv3x3_relu_fwd_f32(2, hw, hw, CIn, COn, kx, kw, kdb1, ky2, NULL);
                bad += !same_bits(ky1, ky2, 2 * (hw - 2) * (hw - 2) * COn);
                ipup_conv3x3_bwd_f32_portable(2, hw, hw, CIn, COn, kx, kw, kdy, kdx1, kdw1, kdb1);
                ipup_conv3x3_bwd_f32(2, hw, hw, CIn, COn, kx, kw, kdy, kdx2, kdw2, kdb2, NULL);
                bad += !(same_bits(kdx1, kdx2, nx) && same_bits(kdw1, kdw2, 9 * CIn * COn) &&
                         same_bits(kdb1, kdb2, COn));
                n++;
            }
    fw_printf("the kernels' bits at %d more shapes (dense 1..9 x 1..13 x 1..10, conv "
              "2 x 3..7 x 3..7 x 1..5 > 1..9): %s\n", n, bad ? "DIFFERENT" : "identical");
    failures += bad;
}

/* the weights as main.c's fw_reference initialises them */
static void init_weights(void)
{
    ipup_glorot_uniform_f32(L0, L1, L0 * L1, 7u, 0, w1);
    ipup_glorot_uniform_f32(L1, L2, L1 * L2, 7u, 4, w2);
    ipup_glorot_uniform_f32(L2, L3, L2 * L3, 7u, 8, w3);
    ipup_zeros_f32(L1, b1); ipup_zeros_f32(L2, b2); ipup_zeros_f32(L3, b3);
}

/* one training step of main.c's plain loop (fw_reference) with the given dense kernels;
   returns its instructions, *hash = FNV-1a of the weights after it */
static uint32_t train_step(fwd_fn fwd, bwd_fn bwd, uint64_t *hash)
{
    uint32_t t0 = ticks(), t;
    int m;
    ipup_zeros_f32(L0 * L1, g1); ipup_zeros_f32(L1, gb1); ipup_zeros_f32(L1 * L2, g2);
    ipup_zeros_f32(L2, gb2); ipup_zeros_f32(L2 * L3, g3); ipup_zeros_f32(L3, gb3);
    for (m = 0; m < BM; m++) {
        fwd(BN, L0, L1, xs[m], w1, b1, h1);
        ipup_relu_fwd_f32(BN * L1, h1, a1);
        fwd(BN, L1, L2, a1, w2, b2, h2);
        ipup_relu_fwd_f32(BN * L2, h2, a2);
        fwd(BN, L2, L3, a2, w3, b3, lg);
        (void)ipup_softmax_xent_f32(BN, L3, lg, labels[m], dlg, NULL);
        bwd(BN, L2, L3, a2, w3, dlg, da2, g3, gb3);
        ipup_relu_bwd_f32(BN * L2, h2, da2, da2);
        bwd(BN, L1, L2, a1, w2, da2, da1, g2, gb2);
        ipup_relu_bwd_f32(BN * L1, h1, da1, da1);
        bwd(BN, L0, L1, xs[m], w1, da1, NULL, g1, gb1);
    }
    ipup_sgd_f32(L0 * L1, LR, 1.0f / BM, w1, g1); ipup_sgd_f32(L1, LR, 1.0f / BM, b1, gb1);
    ipup_sgd_f32(L1 * L2, LR, 1.0f / BM, w2, g2); ipup_sgd_f32(L2, LR, 1.0f / BM, b2, gb2);
    ipup_sgd_f32(L2 * L3, LR, 1.0f / BM, w3, g3); ipup_sgd_f32(L3, LR, 1.0f / BM, b3, gb3);
    t = ticks() - t0;
    *hash = fnv(UINT64_C(14695981039346656037), w1, L0 * L1);
    *hash = fnv(fnv(fnv(fnv(fnv(*hash, b1, L1), w2, L1 * L2), b2, L2), w3, L2 * L3), b3, L3);
    return t * INSNS_PER_TICK;
}

static void bench_step(void)
{
    uint64_t hp, hb;
    uint32_t ip, ib;
    const long macs = (long)BM * BN * (2L * (L0 * L1 + L1 * L2 + L2 * L3) + L1 * L2 + L2 * L3);
    init_weights();
    ip = train_step(ipup_dense_fwd_f32_portable, ipup_dense_bwd_f32_portable, &hp);
    init_weights();
    ib = train_step(ipup_dense_fwd_f32, ipup_dense_bwd_f32, &hb);
    fw_printf("training step, MLP %d-%d-%d-%d, %d samples (%d x %d, SGD), %ld MACs: portable %lu, "
              "blocked %lu instructions (%lu.%02lux fewer), weights FNV-1a %08lx%08lx %s\n",
              L0, L1, L2, L3, BM * BN, BM, BN, macs, (unsigned long)ip, (unsigned long)ib,
              (unsigned long)(ip / ib), (unsigned long)((uint64_t)ip * 100u / ib % 100u),
              (unsigned long)(hb >> 32), (unsigned long)(hb & 0xFFFFFFFFu),
              hp == hb ? "identical" : "DIFFERENT");
    if (hp != hb) failures++;
}

int main(void)
{
    static const char *const names[3] = {"dense forward", "dense input gradient",
                                         "dense weight gradient"};
    static const long all_macs[3] = {(long)BN * (L0 * L1 + L1 * L2 + L2 * L3),
                                     (long)BN * (L1 * L2 + L2 * L3),
                                     (long)BN * (L0 * L1 + L1 * L2 + L2 * L3)};
    uint64_t sum[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    int m, k;
    FW_TIMER[2] = 0xFFFFFFFFu; FW_TIMER[1] = 0xFFFFFFFFu; FW_TIMER[0] = 1u;
    fw_printf("firmware-bench: Cortex-M4F (QEMU mps2-an386, -icount shift=0), gcc %s %s, "
              "kernels \"%s\"; INSTRUCTIONS executed, not cycles\n", __VERSION__,
#ifdef __OPTIMIZE_SIZE__
              "-Os",
#else
              "-O2",
#endif
              IPUP_KERNELS_SIMD);
    for (m = 0; m < BM; m++) {
        fill(xs[m], BN * L0, 10u + (uint64_t)m, 0.0f, 1.0f);
        for (k = 0; k < BN; k++)
            labels[m][k] = (int32_t)ipup_rng_below(11u, 30u + (uint64_t)m, (uint64_t)k, L3);
    }
    init_weights();
    fill(gdy, BN * L1, 12, -0.1f, 0.1f);
    fill(b1, L1, 13, -0.1f, 0.1f);
    fill(a1, BN * L1, 14, 0.0f, 1.0f);
    fill(a2, BN * L2, 15, 0.0f, 1.0f);
    bench_dense(L0, L1, xs[0], w1, g1, gb1, 0, sum);
    bench_dense(L1, L2, a1, w2, g2, gb2, 1, sum);
    bench_dense(L2, L3, a2, w3, g3, gb3, 1, sum);
    for (k = 0; k < 3; k++) {
        char p[16], b[16];
        fw_printf("%-22s all layers   %7ld MACs: portable %6s, blocked %5s instructions/MAC\n",
                  names[k], all_macs[k], per_mac(p, sizeof p, sum[k][0], all_macs[k]),
                  per_mac(b, sizeof b, sum[k][1], all_macs[k]));
    }
    bench_conv();
    check_shapes();
    bench_step();
    if (failures) { fw_printf("BENCH FAILED: %d comparisons differ\n", failures); return 1; }
    fw_puts("BENCH OK\n");
    return 0;
}
