/* main.c - the ipupipe firmware proof: trains a small MLP on real MNIST images on a
   bare-metal Cortex-M4F (QEMU mps2-an386), no heap, no threads, no OS.
   Step 1 of the issue: kernels only (plain gradient-accumulation loop). */
#include <stdint.h>
#include "semihost.h"
#include "fw_mnist.h"

static void fw_assert_fail(const char *what, const char *file, int line);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : fw_assert_fail(#c, __FILE__, __LINE__))
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_kernels.h"

uint32_t fw_stack_used(void);

/* ---- configuration ---- */
#ifndef FW_MB
#define FW_MB 8          /* micro-batch size */
#endif
#ifndef FW_M
#define FW_M 4           /* micro-batches per step (gradient accumulation count) */
#endif
#ifndef FW_EPOCHS
#define FW_EPOCHS 8
#endif
#ifndef FW_LR
#define FW_LR 0.5f
#endif
#define FW_SEED 7u
#define FW_H1 64
#define FW_H2 32
#define FW_C 10
#define FW_STEPS_PER_EPOCH (FW_N_TRAIN / (FW_MB * FW_M))

/* ---- instruction counter: CMSDK APB timer 0 (0x40000000, 25 MHz in QEMU's mps2);
   with -icount shift=0 QEMU advances virtual time 1 ns per instruction, so one timer
   tick is 40 instructions. Without -icount the figure is host-time based: meaningless. */
#define FW_TIMER ((volatile uint32_t *)0x40000000u)
static void fw_timer_start(void) { FW_TIMER[2] = 0xFFFFFFFFu; FW_TIMER[1] = 0xFFFFFFFFu; FW_TIMER[0] = 1u; }
static uint32_t fw_timer_ticks(void) { return 0xFFFFFFFFu - FW_TIMER[1]; }

static void fw_assert_fail(const char *what, const char *file, int line)
{
    fw_line l = {{0}, 0};
    fw_line_str(&l, "FIRMWARE ASSERT: "); fw_line_str(&l, what);
    fw_line_str(&l, " at "); fw_line_str(&l, file); fw_line_str(&l, ":"); fw_line_i(&l, line);
    fw_line_end(&l);
    fw_exit(2);
}

/* ---- the model: 196 -> 64 relu -> 32 relu -> 10, softmax cross-entropy ---- */
static float w1[FW_PIXELS * FW_H1], b1[FW_H1], w2[FW_H1 * FW_H2], b2[FW_H2], w3[FW_H2 * FW_C], b3[FW_C];
static float g1[FW_PIXELS * FW_H1], gb1[FW_H1], g2[FW_H1 * FW_H2], gb2[FW_H2], g3[FW_H2 * FW_C], gb3[FW_C];
static float xin[FW_MB * FW_PIXELS], h1[FW_MB * FW_H1], a1[FW_MB * FW_H1], h2[FW_MB * FW_H2],
             a2[FW_MB * FW_H2], lg[FW_MB * FW_C], dlg[FW_MB * FW_C], da2[FW_MB * FW_H2], da1[FW_MB * FW_H1];
static int32_t lab[FW_MB];
static uint16_t order[FW_N_TRAIN];

static void load_batch(const uint8_t (*X)[FW_PIXELS], const uint8_t *Y, const uint16_t *idx, int n)
{
    int i, j;
    for (i = 0; i < n; i++) {
        for (j = 0; j < FW_PIXELS; j++) xin[i * FW_PIXELS + j] = (float)X[idx[i]][j] * (1.0f / 255.0f);
        lab[i] = (int32_t)Y[idx[i]];
    }
}

static float forward(int n, int *correct, int train)
{
    float loss;
    ipup_dense_fwd_f32(n, FW_PIXELS, FW_H1, xin, w1, b1, h1);
    ipup_relu_fwd_f32(n * FW_H1, h1, a1);
    ipup_dense_fwd_f32(n, FW_H1, FW_H2, a1, w2, b2, h2);
    ipup_relu_fwd_f32(n * FW_H2, h2, a2);
    ipup_dense_fwd_f32(n, FW_H2, FW_C, a2, w3, b3, lg);
    loss = ipup_softmax_xent_f32(n, FW_C, lg, lab, train ? dlg : NULL, correct);
    return loss;
}

static void backward(int n)
{
    ipup_dense_bwd_f32(n, FW_H2, FW_C, a2, w3, dlg, da2, g3, gb3);
    ipup_relu_bwd_f32(n * FW_H2, h2, da2, da2);
    ipup_dense_bwd_f32(n, FW_H1, FW_H2, a1, w2, da2, da1, g2, gb2);
    ipup_relu_bwd_f32(n * FW_H1, h1, da1, da1);
    ipup_dense_bwd_f32(n, FW_PIXELS, FW_H1, xin, w1, da1, NULL, g1, gb1);
}

int main(void)
{
    fw_line l = {{0}, 0};
    int epoch, step, m, i, gstep = 0, correct, total;
    float first = 0.0f, last = 0.0f;
    fw_timer_start();
    fw_line_str(&l, "ipupipe firmware: MLP "); fw_line_i(&l, FW_PIXELS); fw_line_str(&l, "-64-32-10, ");
    fw_line_i(&l, FW_N_TRAIN); fw_line_str(&l, " train / "); fw_line_i(&l, FW_N_TEST);
    fw_line_str(&l, " held-out MNIST images"); fw_line_end(&l);

    ipup_glorot_uniform_f32(FW_PIXELS, FW_H1, FW_PIXELS * FW_H1, FW_SEED, 1, w1);
    ipup_glorot_uniform_f32(FW_H1, FW_H2, FW_H1 * FW_H2, FW_SEED, 2, w2);
    ipup_glorot_uniform_f32(FW_H2, FW_C, FW_H2 * FW_C, FW_SEED, 3, w3);
    ipup_zeros_f32(FW_H1, b1); ipup_zeros_f32(FW_H2, b2); ipup_zeros_f32(FW_C, b3);
    for (i = 0; i < FW_N_TRAIN; i++) order[i] = (uint16_t)i;

    for (epoch = 0; epoch < FW_EPOCHS; epoch++) {
        /* Fisher-Yates with the counter-based RNG keyed by (seed, epoch, i) */
        for (i = FW_N_TRAIN - 1; i > 0; i--) {
            int j = (int)ipup_rng_below(FW_SEED, (uint64_t)epoch + 100u, (uint64_t)i, (uint64_t)i + 1u);
            uint16_t t = order[i]; order[i] = order[j]; order[j] = t;
        }
        for (step = 0; step < FW_STEPS_PER_EPOCH; step++, gstep++) {
            float loss = 0.0f;
            uint32_t t0 = fw_timer_ticks();
            ipup_zeros_f32(FW_PIXELS * FW_H1, g1); ipup_zeros_f32(FW_H1, gb1);
            ipup_zeros_f32(FW_H1 * FW_H2, g2); ipup_zeros_f32(FW_H2, gb2);
            ipup_zeros_f32(FW_H2 * FW_C, g3); ipup_zeros_f32(FW_C, gb3);
            for (m = 0; m < FW_M; m++) {
                load_batch(fw_train_x, fw_train_y, order + (step * FW_M + m) * FW_MB, FW_MB);
                loss += forward(FW_MB, NULL, 1);
                backward(FW_MB);
            }
            ipup_sgd_f32(FW_PIXELS * FW_H1, FW_LR, 1.0f / FW_M, w1, g1);
            ipup_sgd_f32(FW_H1, FW_LR, 1.0f / FW_M, b1, gb1);
            ipup_sgd_f32(FW_H1 * FW_H2, FW_LR, 1.0f / FW_M, w2, g2);
            ipup_sgd_f32(FW_H2, FW_LR, 1.0f / FW_M, b2, gb2);
            ipup_sgd_f32(FW_H2 * FW_C, FW_LR, 1.0f / FW_M, w3, g3);
            ipup_sgd_f32(FW_C, FW_LR, 1.0f / FW_M, b3, gb3);
            loss /= (float)FW_M;
            if (gstep == 0) first = loss;
            last = loss;
            fw_line_str(&l, "step "); fw_line_i(&l, gstep); fw_line_str(&l, " loss ");
            fw_line_f(&l, loss, 4); fw_line_str(&l, " instructions ");
            fw_line_u64(&l, (uint64_t)(fw_timer_ticks() - t0) * 40u); fw_line_end(&l);
        }
    }
    correct = 0; total = 0;
    for (i = 0; i + FW_MB <= FW_N_TEST; i += FW_MB) {
        uint16_t idx[FW_MB]; int j, c = 0;
        for (j = 0; j < FW_MB; j++) idx[j] = (uint16_t)(i + j);
        load_batch(fw_test_x, fw_test_y, idx, FW_MB);
        (void)forward(FW_MB, &c, 0);
        correct += c; total += FW_MB;
    }
    fw_line_str(&l, "first loss "); fw_line_f(&l, first, 4); fw_line_str(&l, " last loss "); fw_line_f(&l, last, 4); fw_line_end(&l);
    fw_line_str(&l, "held-out accuracy "); fw_line_i(&l, correct); fw_line_str(&l, "/"); fw_line_i(&l, total);
    fw_line_str(&l, " = "); fw_line_f(&l, 100.0f * (float)correct / (float)total, 2); fw_line_str(&l, "%"); fw_line_end(&l);
    fw_line_str(&l, "stack used "); fw_line_u(&l, fw_stack_used()); fw_line_str(&l, " bytes"); fw_line_end(&l);
    if (!(last < first) || correct * 100 < total * 70) {
        fw_puts("FIRMWARE FAILED: loss did not fall or held-out accuracy below 70%\n");
        return 1;
    }
    fw_puts("FIRMWARE OK\n");
    return 0;
}
