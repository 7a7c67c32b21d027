/* main.c - the ipupipe firmware proof: pipelined training of a small MLP on real MNIST
   images on a bare-metal Cortex-M4F (QEMU mps2-an386) or RV32IMAFC (QEMU RISC-V virt).
   No heap, no threads, no OS.

   What it does, in order:
   1. the plain gradient-accumulation loop, kernels only, for FW_CHECK_STEPS steps (the
      reference: ipupipe_kernels.h alone, weights initialised as ipupipe.h documents);
   2. the emulator (ipupipe.h) with two emulated IPUs whose pools are static arrays here,
      the cooperative runner, the Grouped schedule and gradient accumulation over
      FW_M micro-batches: the same FW_CHECK_STEPS steps, then a comparison of the bits
      of every weight with the reference, by hash (docs/architecture.md: every schedule
      gives the bits of the plain loop);
   3. training on to FW_EPOCHS epochs over the FW_N_TRAIN compiled-in images, printing
      the loss and the instructions of every step;
   4. the accuracy on FW_N_TEST held-out images (t10k set), the memory report of each
      IPU pool by category, the stack high-water mark, then FIRMWARE OK (exit 0) when
      the loss fell, the accuracy passed FW_MIN_ACC and the bits matched.
   5. the state (ipup_state_save) written after half the steps into a flash stand-in in
      pages of FW_PAGE bytes, then a "reboot" (ipup_shutdown, ipup_init: fresh weights),
      ipup_state_load from the flash and the second half run again: its final weights
      must have the bits of the uninterrupted run (hash of both printed; run.sh checks).

   Output, exit, the instruction counter (QEMU -icount) and the stack figures come from
   the platform layer, fw_platform.h (mps2_platform.h, riscv/riscv_platform.h, and
   host_platform.h for the host reference build). */
#ifdef FW_DUAL /* the dual-core build (make firmware-dual): its settings */
#include "dual/dual_config.h"
#endif
#include <stddef.h>
#include <stdint.h>
#include "fw_platform.h"

/* ---- what the headers need from the platform (docs/embedded.md, "Porting") ---- */
static void fw_assert_fail(const char *what, const char *file, int line);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : fw_assert_fail(#c, __FILE__, __LINE__))
#ifdef FW_OWN_MATH                  /* the same expf/logf bits on every core: fw_math.h */
#include "fw_math.h"
#define IPUPIPE_EXPF(x) fw_expf(x)
#define IPUPIPE_LOGF(x) fw_logf(x)
#endif
#define IPUPIPE_IMPLEMENTATION
#include "fw_model.h" /* the network and pipeline settings; sets IPUPIPE_NO_THREADS and the
                         IPUP_MAX_* sizes, includes ipupipe.h */
#include "fw_pools.h" /* IPUP_PLAN_IPU0_BYTES, IPUP_PLAN_IPU1_BYTES, IPUP_PLAN_HOST_BYTES:
                         written in this build by build/ipupipe-plan (firmware.mk); its
                         IPUP_MAX_* checks pass with fw_model.h's limits */
#include "fw_print.h" /* fw_printf */
#if IPUP_PLAN_DEVICES != FW_STAGES || IPUP_PLAN_IPUS != 2
#error "fw_pools.h was planned for another pipeline than fw_model.h's (firmware.mk's FW_PLAN_FLAGS)"
#endif

/* ---- run settings ---- */
#ifndef FW_EPOCHS
#define FW_EPOCHS 12
#endif
#ifndef FW_CHECK_STEPS
#define FW_CHECK_STEPS 2  /* steps compared bit for bit with the plain loop */
#endif
#ifndef FW_MIN_ACC
#define FW_MIN_ACC 75     /* percent */
#endif
#define FW_STEP_SAMPLES (FW_MB * FW_M)
#define FW_STEPS_PER_EPOCH (FW_N_TRAIN / FW_STEP_SAMPLES)
#define FW_TOTAL_STEPS (FW_EPOCHS * FW_STEPS_PER_EPOCH)

/* The pools: one static array per emulated IPU and one for the host side, exactly the
   sizes the plan asks for (64-byte aligned, as ipupipe.h recommends; the plan's sizes are
   multiples of 64, so the three follow one another in one block with no padding). */
static struct fw_pool_block {
    IPUP_ALIGN64 uint8_t ipu0[IPUP_PLAN_IPU0_BYTES];
    IPUP_ALIGN64 uint8_t ipu1[IPUP_PLAN_IPU1_BYTES];
    IPUP_ALIGN64 uint8_t host[IPUP_PLAN_HOST_BYTES];
} fw_pools;
#define fw_ipu0 fw_pools.ipu0
#define fw_ipu1 fw_pools.ipu1
#define fw_host fw_pools.host
static ipup_emu fw_emu;

static void fw_assert_fail(const char *what, const char *file, int line)
{
    char buf[256];
    (void)ipup_snprintf(buf, sizeof buf, "FIRMWARE ASSERT: %s at %s:%d\n", what, file, line);
    fw_puts(buf);
    fw_exit(2);
}


/* ---- the data: which training image is sample j of the run ----
   Epoch k = j / N visits the images in a permutation drawn by Fisher-Yates with the
   counter-based RNG keyed by (seed, 1000 + k, i): the same on every platform. */
static uint16_t fw_order[FW_N_TRAIN];
static int64_t fw_order_epoch = -1;

static int fw_train_index(int64_t sample)
{
    int64_t epoch = sample / FW_N_TRAIN;
    int i;
    if (epoch != fw_order_epoch) {
        for (i = 0; i < FW_N_TRAIN; i++) fw_order[i] = (uint16_t)i;
        for (i = FW_N_TRAIN - 1; i > 0; i--) {
            int j = (int)ipup_rng_below(FW_SEED, 1000u + (uint64_t)epoch, (uint64_t)i, (uint64_t)i + 1u);
            uint16_t t = fw_order[i]; fw_order[i] = fw_order[j]; fw_order[j] = t;
        }
        fw_order_epoch = epoch;
    }
    return fw_order[sample % FW_N_TRAIN];
}

/* x (n, FW_PIXELS) in [0, 1], labels (n): images sample0 .. sample0+n-1 of the run */
static void fw_fill(int64_t sample0, int32_t n, float *x, int32_t *labels)
{
    int32_t i, p;
    for (i = 0; i < n; i++) {
        int k = fw_train_index(sample0 + i);
        for (p = 0; p < FW_PIXELS; p++) x[i * FW_PIXELS + p] = (float)fw_train_x[k][p] * (1.0f / 255.0f);
        labels[i] = (int32_t)fw_train_y[k];
    }
}

/* the emulator's infeed callback (ipup_infeed_fn) */
static int fw_infeed(void *user, const ipup_feed *f)
{
    (void)user;
    if (f->row != FW_PIXELS || !f->labels) return -1;
    fw_fill(f->sample0, f->n, f->x, f->labels);
    return 0;
}

/* ---- where the instructions of a step go: the emulator's op hook (called just before
   each op) timestamps every op; the ticks up to the next op are the op's, runner and
   exchange overhead included (F of stage 0 also includes the infeed callback). What
   follows the step's last op (its last B(0), the all-reduce, the update) is the tail. */
static uint32_t fw_op_ticks[2][FW_STAGES], fw_op_n[2][FW_STAGES], fw_tail_ticks;
static uint32_t fw_hook_t0;
static int fw_hook_kind = -1, fw_hook_stage;

static void fw_op_hook(void *user, int32_t ipu, const ipup_op *op)
{
    uint32_t now = fw_timer_ticks();
    (void)user; (void)ipu;
    if (fw_hook_kind >= 0) {
        fw_op_ticks[fw_hook_kind][fw_hook_stage] += now - fw_hook_t0;
        fw_op_n[fw_hook_kind][fw_hook_stage]++;
    }
    fw_hook_kind = op->kind == IPUP_OP_F ? 0 : 1;
    fw_hook_stage = op->stage < FW_STAGES ? op->stage : FW_STAGES - 1;
    fw_hook_t0 = now;
}

/* called after each step: the time since the last op is the tail */
static void fw_hook_step_end(void)
{
    if (fw_hook_kind >= 0) fw_tail_ticks += fw_timer_ticks() - fw_hook_t0;
    fw_hook_kind = -1;
}

static void fw_print_op_costs(int steps)
{
    int s;
    uint32_t b0 = fw_op_n[1][0] ? fw_op_ticks[1][0] / fw_op_n[1][0] : 0u;
    fw_printf("instructions per op (mean over the run, runner overhead included):");
    for (s = 0; s < FW_STAGES; s++)
        fw_printf(" F(%d) %lu", s, (unsigned long)(fw_op_n[0][s] ? fw_op_ticks[0][s] / fw_op_n[0][s] * FW_INSNS_PER_TICK : 0u));
    for (s = 0; s < FW_STAGES; s++)
        fw_printf(" B(%d) %lu", s, (unsigned long)(fw_op_n[1][s] ? fw_op_ticks[1][s] / fw_op_n[1][s] * FW_INSNS_PER_TICK : 0u));
    fw_printf("; last B(0) + all-reduce + SGD update %lu (update alone ~%lu)\n",
              (unsigned long)(fw_tail_ticks / (uint32_t)steps * FW_INSNS_PER_TICK),
              (unsigned long)((fw_tail_ticks / (uint32_t)steps > b0 ? fw_tail_ticks / (uint32_t)steps - b0 : 0u) * FW_INSNS_PER_TICK));
}

/* ---- the reference: the plain gradient-accumulation loop with the kernels only ----
   Weights as ipupipe.h documents its initialisation: glorot_uniform(fan_in, fan_out, n,
   seed, stream = 2 * layer index), biases zero. Everything (weights, gradients,
   activations) lives in the pools' bytes, which are free until ipup_init carves them:
   the reference costs no RAM of its own. What survives is a 64-bit FNV-1a hash of the
   bits of every weight, compared with the same hash of the emulator's weights. */
typedef struct fw_ref {
    float w1[FW_PIXELS * FW_H1], b1[FW_H1], w2[FW_H1 * FW_H2], b2[FW_H2], w3[FW_H2 * FW_C], b3[FW_C];
    float g1[FW_PIXELS * FW_H1], gb1[FW_H1], g2[FW_H1 * FW_H2], gb2[FW_H2], g3[FW_H2 * FW_C], gb3[FW_C];
    float x[FW_MB * FW_PIXELS], h1[FW_MB * FW_H1], a1[FW_MB * FW_H1], h2[FW_MB * FW_H2],
          a2[FW_MB * FW_H2], lg[FW_MB * FW_C], dlg[FW_MB * FW_C], da2[FW_MB * FW_H2], da1[FW_MB * FW_H1];
    int32_t lab[FW_MB];
} fw_ref;
typedef char fw_ref_fits_in_the_pools[sizeof(fw_ref) <= sizeof(struct fw_pool_block) ? 1 : -1];

/* FNV-1a, 64-bit (Fowler, Noll, Vo; offset basis 14695981039346656037, prime 1099511628211)
   over the bytes of n floats, continuing from h */
static uint64_t fw_fnv1a(uint64_t h, const float *x, int32_t n)
{
    const uint8_t *p = (const uint8_t *)(const void *)x;
    size_t i, bytes = (size_t)n * sizeof(float);
    for (i = 0; i < bytes; i++) { h ^= p[i]; h *= UINT64_C(1099511628211); }
    return h;
}
#define FW_FNV_BASIS UINT64_C(14695981039346656037)

/* FW_DTYPE 1 (cfg.dtype float16): x (n) rounded to binary16 as the emulator stores every
   op's output and its initial weights (nothing with float32) */
static void fw_h(float *x, int32_t n)
{
    uint16_t h[64];
    int32_t i;
    for (i = 0; FW_DTYPE && i < n; i += 64) {
        const int k = n - i < 64 ? (int)(n - i) : 64;
        ipup_f32_to_f16(k, x + i, h);
        ipup_f16_to_f32(k, h, x + i);
    }
}

/* One SGD update of n weights w (layer `layer`, tensor 0 w or 1 b) at step `step`; FW_DTYPE 1:
   then stored as binary16 with the emulator's stochastic rounding (docs/api.md, "Half
   precision": seed cfg.seed ^ 0x73746f6368617374, stream (step << 12) | (4 layer + tensor),
   offset the element's index) */
static void fw_sgd(int32_t n, float *w, const float *g, int step, int layer, int tensor)
{
    uint16_t h[64];
    int32_t i;
    ipup_sgd_f32(n, FW_LR, 1.0f / FW_M, w, g);
    for (i = 0; FW_DTYPE && i < n; i += 64) {
        const int k = n - i < 64 ? (int)(n - i) : 64;
        ipup_f32_to_f16_sr(k, w + i, h, FW_SEED ^ UINT64_C(0x73746f6368617374),
                           ((uint64_t)step << 12) | (uint64_t)(4 * layer + tensor), (uint64_t)i);
        ipup_f16_to_f32(k, h, w + i);
    }
}

/* runs `steps` steps; returns the hash of w1 b1 w2 b2 w3 b3 */
static uint64_t fw_reference(int steps, uint32_t *ticks_per_step)
{
    fw_ref *k = (fw_ref *)(void *)&fw_pools;
    float loss = 0.0f;
    uint64_t h = FW_FNV_BASIS;
    int s, m;
    ipup_glorot_uniform_f32(FW_PIXELS, FW_H1, FW_PIXELS * FW_H1, FW_SEED, 0, k->w1);
    ipup_glorot_uniform_f32(FW_H1, FW_H2, FW_H1 * FW_H2, FW_SEED, 4, k->w2);
    ipup_glorot_uniform_f32(FW_H2, FW_C, FW_H2 * FW_C, FW_SEED, 8, k->w3);
    fw_h(k->w1, FW_PIXELS * FW_H1); /* FW_DTYPE 1: the weights start rounded to binary16 */
    fw_h(k->w2, FW_H1 * FW_H2);
    fw_h(k->w3, FW_H2 * FW_C);
    ipup_zeros_f32(FW_H1, k->b1); ipup_zeros_f32(FW_H2, k->b2); ipup_zeros_f32(FW_C, k->b3);
    for (s = 0; s < steps; s++) {
        uint32_t t0 = fw_timer_ticks();
        ipup_zeros_f32(FW_PIXELS * FW_H1, k->g1); ipup_zeros_f32(FW_H1, k->gb1);
        ipup_zeros_f32(FW_H1 * FW_H2, k->g2); ipup_zeros_f32(FW_H2, k->gb2);
        ipup_zeros_f32(FW_H2 * FW_C, k->g3); ipup_zeros_f32(FW_C, k->gb3);
        loss = 0.0f;
        for (m = 0; m < FW_M; m++) {
            fw_fill(((int64_t)s * FW_M + m) * FW_MB, FW_MB, k->x, k->lab);
            fw_h(k->x, FW_MB * FW_PIXELS);
            ipup_dense_fwd_f32(FW_MB, FW_PIXELS, FW_H1, k->x, k->w1, k->b1, k->h1);
            fw_h(k->h1, FW_MB * FW_H1);
            ipup_relu_fwd_f32(FW_MB * FW_H1, k->h1, k->a1);
            ipup_dense_fwd_f32(FW_MB, FW_H1, FW_H2, k->a1, k->w2, k->b2, k->h2);
            fw_h(k->h2, FW_MB * FW_H2);
            ipup_relu_fwd_f32(FW_MB * FW_H2, k->h2, k->a2);
            ipup_dense_fwd_f32(FW_MB, FW_H2, FW_C, k->a2, k->w3, k->b3, k->lg);
            fw_h(k->lg, FW_MB * FW_C);
            loss += ipup_softmax_xent_f32(FW_MB, FW_C, k->lg, k->lab, k->dlg, NULL);
            fw_h(k->dlg, FW_MB * FW_C);
            ipup_dense_bwd_f32(FW_MB, FW_H2, FW_C, k->a2, k->w3, k->dlg, k->da2, k->g3, k->gb3);
            fw_h(k->da2, FW_MB * FW_H2);
            ipup_relu_bwd_f32(FW_MB * FW_H2, k->h2, k->da2, k->da2);
            ipup_dense_bwd_f32(FW_MB, FW_H1, FW_H2, k->a1, k->w2, k->da2, k->da1, k->g2, k->gb2);
            fw_h(k->da1, FW_MB * FW_H1);
            ipup_relu_bwd_f32(FW_MB * FW_H1, k->h1, k->da1, k->da1);
            ipup_dense_bwd_f32(FW_MB, FW_PIXELS, FW_H1, k->x, k->w1, k->da1, NULL, k->g1, k->gb1);
        }
        fw_sgd(FW_PIXELS * FW_H1, k->w1, k->g1, s, 0, 0); /* layers 0, 2, 4 (the ReLUs between) */
        fw_sgd(FW_H1, k->b1, k->gb1, s, 0, 1);
        fw_sgd(FW_H1 * FW_H2, k->w2, k->g2, s, 2, 0);
        fw_sgd(FW_H2, k->b2, k->gb2, s, 2, 1);
        fw_sgd(FW_H2 * FW_C, k->w3, k->g3, s, 4, 0);
        fw_sgd(FW_C, k->b3, k->gb3, s, 4, 1);
        *ticks_per_step = fw_timer_ticks() - t0;
        fw_printf("reference step %d loss %.4f instructions %lu\n", s, (double)(loss / FW_M),
                  (unsigned long)(*ticks_per_step * FW_INSNS_PER_TICK));
    }
    h = fw_fnv1a(h, k->w1, FW_PIXELS * FW_H1); h = fw_fnv1a(h, k->b1, FW_H1);
    h = fw_fnv1a(h, k->w2, FW_H1 * FW_H2);     h = fw_fnv1a(h, k->b2, FW_H2);
    h = fw_fnv1a(h, k->w3, FW_H2 * FW_C);      h = fw_fnv1a(h, k->b3, FW_C);
    return h;
}

/* the same hash over the emulator's weights (0 when a tensor is missing) */
static uint64_t fw_emu_hash(ipup_emu *e)
{
    static const char *const names[6] = {"dense" FW_STR(FW_H1) ".w", "dense" FW_STR(FW_H1) ".b",
                                         "dense" FW_STR(FW_H2) ".w", "dense" FW_STR(FW_H2) ".b",
                                         "dense" FW_STR(FW_C) ".w", "dense" FW_STR(FW_C) ".b"};
    static const int32_t n[6] = {FW_PIXELS * FW_H1, FW_H1, FW_H1 * FW_H2, FW_H2, FW_H2 * FW_C, FW_C};
    uint64_t h = FW_FNV_BASIS;
    int t;
    for (t = 0; t < 6; t++) {
        ipup_tensor_info ti;
        if (ipup_tensor_find(e, names[t], &ti) != IPUP_OK || ti.n != n[t]) {
            fw_printf("compare: tensor %s not found or of the wrong size: %s\n", names[t], ipup_last_error(e));
            return 0;
        }
        if (ti.data) {
            h = fw_fnv1a(h, ti.data, ti.n);
        } else { /* FW_DTYPE 1: binary16, hashed as the fp32 values the reference holds */
            float v[64];
            int32_t i;
            for (i = 0; i < ti.n; i += 64) {
                const int32_t k = ti.n - i < 64 ? ti.n - i : 64;
                ipup_tensor_read(e, &ti, i, k, v);
                h = fw_fnv1a(h, v, k);
            }
        }
    }
    return h;
}

static void fw_print_memory(ipup_emu *e, const ipup_plan *plan)
{
    int32_t ipu, c;
    fw_printf("memory per emulated IPU (bytes; carved at startup / high-water touched):\n");
    for (ipu = 0; ipu < plan->ipus; ipu++) {
        ipup_mem_report rep;
        if (ipup_memory_report(e, ipu, &rep) != IPUP_OK) continue;
        fw_printf("  IPU%d pool %lu: used %lu, high-water %lu\n", (int)ipu, (unsigned long)rep.capacity,
                  (unsigned long)rep.used, (unsigned long)rep.high_water);
        for (c = 0; c < IPUP_MEM_CATEGORIES; c++)
            fw_printf("    %-10s %7lu / %7lu\n", ipup_mem_category_name(c),
                      (unsigned long)rep.by_category[c], (unsigned long)rep.peak_by_category[c]);
    }
    fw_printf("  host pool %lu: plan %lu (schedule table, infeed/outfeed rings)\n",
              (unsigned long)sizeof fw_host, (unsigned long)plan->host_bytes);
    fw_printf("  sizeof(ipup_emu) %lu, stack used %lu of %lu\n", (unsigned long)sizeof(ipup_emu),
              (unsigned long)fw_stack_used(), (unsigned long)fw_stack_size());
}

/* what the training loop measured, for the closing report */
typedef struct fw_summary {
    float first, first8, last8;     /* loss of step 0, sums of the first and last 8 steps */
    uint64_t ticks_sum;             /* timer ticks of all pipelined steps */
    int bits_ok;                    /* the weights after FW_CHECK_STEPS equal the plain loop's */
} fw_summary;

/* 2. plan (the pools must be large enough), ipup_init, the schedule table on the MCU */
static int fw_setup(ipup_emu *e, ipup_config *cfg, ipup_plan *plan, ipup_model_desc *model)
{
    static const size_t have[2] = {sizeof fw_ipu0, sizeof fw_ipu1};
    static char grid[512];
    char msg[128];
    ipup_buf out;
    int i;
    if (fw_model(model, msg, sizeof msg) != IPUP_OK) { fw_printf("FIRMWARE FAILED: model: %s\n", msg); return 1; }
    fw_config(cfg, model);
    cfg->infeed = fw_infeed;
    cfg->op_hook = fw_op_hook;
    cfg->ipu[0].mem = fw_ipu0; cfg->ipu[0].bytes = sizeof fw_ipu0;
    cfg->ipu[1].mem = fw_ipu1; cfg->ipu[1].bytes = sizeof fw_ipu1;
    cfg->host.mem = fw_host; cfg->host.bytes = sizeof fw_host;
    if (ipup_plan_config(e, cfg, plan) != IPUP_OK) { /* e is scratch here; ipup_init overwrites it */
        fw_printf("FIRMWARE FAILED: plan: %s\n", ipup_last_error(e));
        return 1;
    }
    fw_printf("plan: IPU0 needs %lu bytes (pool %lu), IPU1 %lu (pool %lu), host %lu (pool %lu); stash depth %d, %d\n",
              (unsigned long)plan->ipu_bytes[0], (unsigned long)sizeof fw_ipu0,
              (unsigned long)plan->ipu_bytes[1], (unsigned long)sizeof fw_ipu1,
              (unsigned long)plan->host_bytes, (unsigned long)sizeof fw_host,
              (int)plan->stash_depth[0], (int)plan->stash_depth[1]);
    for (i = 0; i < plan->devices && i < 2; i++)
        if (plan->ipu_bytes[i] != have[i]) { /* exactly: the plan of fw_pools.h is this configuration's */
            fw_printf("FIRMWARE FAILED: fw_pools.h does not match fw_model.h: IPU%d needs %lu bytes, its pool has %lu "
                      "(firmware.mk's FW_PLAN_FLAGS must say what fw_config says)\n",
                      i, (unsigned long)plan->ipu_bytes[i], (unsigned long)have[i]);
            return 1;
        }
    if (ipup_init(e, cfg) != IPUP_OK) { fw_printf("FIRMWARE FAILED: ipup_init: %s\n", ipup_last_error(e)); return 1; }
    out.buf = grid; out.cap = sizeof grid; out.len = 0;  /* the table the runner follows */
    if (ipup_sched_render_grid(&e->core.table, ipup_buf_write, &out) == IPUP_OK && ipup_buf_fits(&out))
        fw_printf("schedule (grouped, S=%d, M=%d; rows = emulated IPUs, columns = time steps):\n%s",
                  FW_STAGES, FW_M, grid);
    return 0;
}

/* ---- the state across a "reboot": ipup_state_save into a region standing in for
   flash, written in pages of FW_PAGE bytes (a flash driver programs whole pages; the
   last one is padded with 0xFF, as erased flash reads), ipup_state_load back from it.
   The region is a NOLOAD section of the linker script's FLASH (QEMU's SSRAM1 is
   writable), so it costs no RAM; it holds the weights plus a few hundred bytes of
   descriptor and record heads (ipup_state_bytes, checked when saving). */
#define FW_PAGE 256u
#define FW_SAVE_STEP (FW_TOTAL_STEPS / 2)
#define FW_FLASH_BYTES ((FW_N_PARAMS * 4u + 2048u + FW_PAGE - 1u) / FW_PAGE * FW_PAGE)
__attribute__((section(".flash_store"))) static uint8_t fw_flash[FW_FLASH_BYTES];
typedef struct fw_pager {
    uint8_t page[FW_PAGE];
    uint32_t fill, pages;
} fw_pager;

/* programs page n of the flash stand-in; -1 when the region is full */
static int fw_flash_program(uint32_t n, const uint8_t *page)
{
    uint32_t i;
    if ((n + 1u) * FW_PAGE > FW_FLASH_BYTES) return -1;
    for (i = 0; i < FW_PAGE; i++) fw_flash[n * FW_PAGE + i] = page[i];
    return 0;
}
/* ipup_write_fn: collects bytes into the page buffer, programs every full page */
static int fw_flash_write(void *user, const void *data, size_t len)
{
    fw_pager *p = (fw_pager *)user;
    const uint8_t *b = (const uint8_t *)data;
    size_t i;
    for (i = 0; i < len; i++) {
        p->page[p->fill++] = b[i];
        if (p->fill == FW_PAGE) {
            if (fw_flash_program(p->pages, p->page) != 0) return -1;
            p->pages++;
            p->fill = 0;
        }
    }
    return 0;
}
/* ipup_read_fn: the flash stand-in is memory-mapped, any offset can be read */
static int fw_flash_read(void *user, uint64_t offset, void *data, size_t len)
{
    uint8_t *d = (uint8_t *)data;
    size_t i;
    (void)user;
    if (offset > FW_FLASH_BYTES || len > FW_FLASH_BYTES - (size_t)offset) return IPUP_STATE_END;
    for (i = 0; i < len; i++) d[i] = fw_flash[(size_t)offset + i];
    return 0;
}

/* the state after FW_SAVE_STEP steps into the flash stand-in, page by page */
static int fw_save_state(ipup_emu *e)
{
    static fw_pager pg;
    uint32_t t0 = fw_timer_ticks();
    pg.fill = pg.pages = 0;
    if (ipup_state_bytes(e) > FW_FLASH_BYTES || ipup_state_save(e, fw_flash_write, &pg) != IPUP_OK) {
        fw_printf("FIRMWARE FAILED: saving the state (%lu bytes, flash region %lu): %s\n",
                  (unsigned long)ipup_state_bytes(e), (unsigned long)FW_FLASH_BYTES, ipup_last_error(e));
        return 1;
    }
    if (pg.fill) { /* the last page, padded as erased flash */
        while (pg.fill < FW_PAGE) pg.page[pg.fill++] = 0xFFu;
        if (fw_flash_program(pg.pages++, pg.page) != 0) return 1;
    }
    fw_printf("state saved after step %d: %lu bytes in %lu pages of %u bytes (instructions %lu)\n", FW_SAVE_STEP,
              (unsigned long)ipup_state_bytes(e), (unsigned long)pg.pages, FW_PAGE,
              (unsigned long)((fw_timer_ticks() - t0) * FW_INSNS_PER_TICK));
    return 0;
}

/* The "reboot": shut the emulator down, initialise it again (fresh weights), restore the
   state saved after FW_SAVE_STEP steps from the flash stand-in and run the remaining
   steps; the final weights must have the bits of the uninterrupted run (hash). 1 when
   they do. */
static int fw_reboot_and_resume(ipup_emu *e, const ipup_config *cfg, uint64_t hash)
{
    uint64_t h;
    int step, rc;
    ipup_shutdown(e);
    if (ipup_init(e, cfg) != IPUP_OK) { fw_printf("FIRMWARE FAILED: re-init: %s\n", ipup_last_error(e)); return 0; }
    if ((rc = ipup_state_load(e, fw_flash_read, NULL)) != IPUP_OK || ipup_get_step(e) != FW_SAVE_STEP) {
        fw_printf("FIRMWARE FAILED: restoring the state: %s (%s)\n", ipup_last_error(e), ipup_result_str(rc));
        return 0;
    }
    for (step = FW_SAVE_STEP; step < FW_TOTAL_STEPS; step++)
        if (ipup_run_steps(e, 1, NULL) != IPUP_OK) {
            fw_printf("FIRMWARE FAILED: resumed step %d: %s\n", step, ipup_last_error(e));
            return 0;
        }
    h = fw_emu_hash(e);
    fw_printf("state restore: rebooted, restored at step %d, ran %d more steps: final weights FNV-1a resumed %08lx%08lx, "
              "uninterrupted %08lx%08lx: %s\n", FW_SAVE_STEP, FW_TOTAL_STEPS - FW_SAVE_STEP,
              (unsigned long)(h >> 32), (unsigned long)(h & 0xFFFFFFFFu), (unsigned long)(hash >> 32),
              (unsigned long)(hash & 0xFFFFFFFFu), h == hash ? "identical" : "DIFFERENT");
    return h == hash;
}


/* 3. FW_TOTAL_STEPS pipelined steps; after FW_CHECK_STEPS the weights are compared with
   the plain loop's (ref_hash) */
static int fw_train(ipup_emu *e, uint64_t ref_hash, fw_summary *sum)
{
    ipup_run_stats st;
    int step;
    for (step = 0; step < FW_TOTAL_STEPS; step++) {
        uint32_t t0 = fw_timer_ticks(), ticks;
        int rc = ipup_run_steps(e, 1, &st);
        fw_hook_step_end();
        ticks = fw_timer_ticks() - t0;
        if (rc != IPUP_OK) { fw_printf("FIRMWARE FAILED: step %d: %s\n", step, ipup_last_error(e)); return 1; }
        sum->ticks_sum += ticks;
        if (step == 0) sum->first = (float)st.loss_mean;
        if (step < 8) sum->first8 += (float)st.loss_mean;
        if (step >= FW_TOTAL_STEPS - 8) sum->last8 += (float)st.loss_mean;
        fw_printf("step %d loss %.4f instructions %lu\n", step, st.loss_mean,
                  (unsigned long)(ticks * FW_INSNS_PER_TICK));
        if (step + 1 == FW_CHECK_STEPS) {
            uint64_t emu_hash = fw_emu_hash(e);
            fw_printf("bit-identity after %d steps, FNV-1a of all %d weights: pipelined %08lx%08lx, plain loop %08lx%08lx: %s\n",
                      FW_CHECK_STEPS, FW_N_PARAMS, (unsigned long)(emu_hash >> 32), (unsigned long)(emu_hash & 0xFFFFFFFFu),
                      (unsigned long)(ref_hash >> 32), (unsigned long)(ref_hash & 0xFFFFFFFFu),
                      emu_hash == ref_hash ? "identical" : "DIFFERENT");
            sum->bits_ok = emu_hash == ref_hash;
        }
        if (step + 1 == FW_SAVE_STEP && fw_save_state(e)) return 1;
    }
    return 0;
}

/* 4. held-out accuracy, in chunks of one micro-batch */
static int fw_evaluate(ipup_emu *e, int64_t *correct, double *eloss)
{
    static float ex[FW_MB * FW_PIXELS];
    static int32_t ey[FW_MB];
    int32_t i;
    for (i = 0; i < FW_N_TEST; i += FW_MB) {
        int32_t n = FW_N_TEST - i < FW_MB ? FW_N_TEST - i : FW_MB, j, p;
        for (j = 0; j < n; j++) {
            for (p = 0; p < FW_PIXELS; p++) ex[j * FW_PIXELS + p] = (float)fw_test_x[i + j][p] * (1.0f / 255.0f);
            ey[j] = (int32_t)fw_test_y[i + j];
        }
        if (ipup_evaluate(e, n, ex, ey, eloss, correct) != IPUP_OK) {
            fw_printf("FIRMWARE FAILED: evaluate: %s\n", ipup_last_error(e));
            return 1;
        }
    }
    return 0;
}

/* the closing figures; returns 1 when every promise held */
static int fw_report(ipup_emu *e, const ipup_plan *plan, const fw_summary *sum, uint32_t ref_ticks,
                     int64_t correct, double eloss)
{
    uint64_t emu_hash = fw_emu_hash(e);
    int ok = sum->bits_ok;
    fw_printf("first loss %.4f, mean of the first 8 steps %.4f, of the last 8 %.4f\n",
              (double)sum->first, (double)(sum->first8 / 8.0f), (double)(sum->last8 / 8.0f));
    fw_printf("held-out accuracy %ld/%d = %.2f%% (loss %.4f)\n", (long)correct, FW_N_TEST,
              100.0 * (double)correct / (double)FW_N_TEST, eloss / (double)FW_N_TEST);
    fw_printf("instructions per step: pipelined %lu (mean of %d), plain loop %lu\n",
              (unsigned long)(sum->ticks_sum / FW_TOTAL_STEPS * FW_INSNS_PER_TICK), FW_TOTAL_STEPS,
              (unsigned long)(ref_ticks * FW_INSNS_PER_TICK));
    fw_printf("final weights FNV-1a %08lx%08lx (expf/logf: %s)\n", (unsigned long)(emu_hash >> 32),
              (unsigned long)(emu_hash & 0xFFFFFFFFu),
#ifdef FW_OWN_MATH
              "fw_math.h"
#else
              "the C library's"
#endif
              );
    fw_print_op_costs(FW_TOTAL_STEPS);
    fw_print_memory(e, plan);
    if (!(sum->last8 < 0.5f * sum->first8)) { fw_printf("FIRMWARE FAILED: the loss did not fall to half\n"); ok = 0; }
    if (correct * 100 < (int64_t)FW_N_TEST * FW_MIN_ACC) {
        fw_printf("FIRMWARE FAILED: held-out accuracy below %d%%\n", FW_MIN_ACC);
        ok = 0;
    }
    return ok;
}

#ifdef FW_DUAL
#include "dual/dual_main.h" /* the dual-core main: stage 1 on core 1 */
#else
int main(void)
{
    static ipup_model_desc model;
    static ipup_config cfg;
    static ipup_plan plan;
    static fw_summary sum;
    ipup_emu *e = &fw_emu;
    uint64_t ref_hash;
    uint32_t ref_ticks = 0;
    double eloss = 0.0;
    int64_t correct = 0;
    int ok;

    fw_timer_start();
    fw_printf("ipupipe firmware: %s, MLP %d-%d-%d-%d (\"%s\"), %d train / %d held-out MNIST images (%dx%d)\n",
              FW_CPU_NAME, FW_PIXELS, FW_H1, FW_H2, FW_C, FW_MODEL_TEXT, FW_N_TRAIN, FW_N_TEST, FW_SIDE, FW_SIDE);
    fw_printf("pipeline: %d stages on %d emulated IPUs, grouped schedule, B=%d, M=%d, SGD lr %.2f, %d steps\n",
              FW_STAGES, FW_STAGES, FW_MB, FW_M, (double)FW_LR, FW_TOTAL_STEPS);
    ref_hash = fw_reference(FW_CHECK_STEPS, &ref_ticks); /* 1. the plain loop */
    if (fw_setup(e, &cfg, &plan, &model) || fw_train(e, ref_hash, &sum) || fw_evaluate(e, &correct, &eloss))
        return 1;
    ok = fw_report(e, &plan, &sum, ref_ticks, correct, eloss);
    ok = fw_reboot_and_resume(e, &cfg, fw_emu_hash(e)) && ok; /* 5. save, reboot, restore */
    ipup_shutdown(e);
    if (!ok) return 1;
    fw_puts("FIRMWARE OK\n");
    return 0;
}
#endif
