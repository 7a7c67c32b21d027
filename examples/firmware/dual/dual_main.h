/* dual_main.h - the dual-core firmware's main, included by main.c in place of its own
   when FW_DUAL is defined (dual_config.h has the settings): the firmware's pipelined trainer on two cores: stage 0 (IPU 0) on core 0,
   stage 1 (IPU 1) on core 1 of an SSE-200 (two Cortex-M33 sharing SRAM; QEMU musca-b1),
   no OS. The network, data, plan and checks are main.c's;
   the library's device runner (ipup_set_devices, ipup_run_device) runs IPU 1's row of
   every step on core 1 while ipup_run_steps runs IPU 0's row on core 0.

   Synchronisation: the library's C11 atomics (rings: acquire loads and release stores of
   head and tail; the step barrier and the job counters: acq_rel fetch-add), which gcc
   compiles for Armv8-M Mainline to LDA / STL and LDAEX / STLEX loops (no DMB needed:
   Armv8-M's load-acquire and store-release are ordered, Armv8-M ARM B7.2); the platform
   part here is the wait and the wake: a core with nothing to do sleeps in WFE, and after
   every release store the other core may wait for, DSB (the store has completed) then
   SEV (wake the other core). WFE's event register keeps an SEV sent between the library's
   check and the WFE, so no wake-up is lost. In QEMU (7.2) SEV does nothing and WFE gives
   the round-robin vCPU loop to the other core, with the same effect.

   Run order: the plain loop for FW_CHECK_STEPS steps (main.c's reference); the emulator
   on both cores for FW_TOTAL_STEPS steps, with the bits compared to the plain loop after
   FW_CHECK_STEPS; the held-out accuracy; then the same steps again on core 0 alone with
   the cooperative runner (core 1 idle): its final weights must have the dual run's bits,
   and its instructions per step are the single-core figure the two cores are compared
   with.

   Instructions per core: under -icount shift=0 QEMU's virtual clock advances 1 ns per
   instruction executed by either core (one vCPU runs at a time), so timer ticks
   between two points on core 0 count both cores. Each core adds up the ticks it spends
   inside its WFE (the other core running), and a core's own instructions over a step are
   the step's ticks minus its own WFE ticks. They are instructions, not cycles. */
#ifndef FW_DUAL_MAIN_H
#define FW_DUAL_MAIN_H
#include <stdatomic.h>

/* SSE-200 system control registers, Secure alias (SSE-200 TRM, "System control
   registers"): INITSVTOR1 +0x114 (core 1's vector table), CPUWAIT +0x118 (bit n = 1:
   core n held at reset; bit 1 is set after reset) */
#define DUAL_SYSCTL ((volatile uint32_t *)0x50021000u)
#define DUAL_INITSVTOR1 (0x114u / 4u)
#define DUAL_CPUWAIT (0x118u / 4u)
extern const void *const fw_core1_vectors[16]; /* dual_core1.c */
uint32_t fw_core1_stack_used(void);
void fw_core1_main(void);

/* per core: ticks spent inside WFE (while the other core ran), and the open WFE */
typedef struct dual_core_stat {
    volatile uint32_t yield_ticks, waits, in_wfe, since;
} dual_core_stat;
static dual_core_stat dual_stat[2];
static _Atomic uint32_t dual_go;      /* core 0: a new emulator is ready, core 1 enters */
static _Atomic uint32_t dual_up;      /* core 1: running */
static _Atomic int32_t dual_core1_rc; /* core 1: ipup_run_device's last code */

/* after a release store: DSB (it has completed) then SEV (wake the other core) */
static void dual_sev(void) { __asm__ volatile("dsb\n\tsev" ::: "memory"); }

/* sleep until an event, counting the ticks core `c` spends asleep */
static void dual_wfe(int c)
{
    dual_core_stat *s = &dual_stat[c];
    uint32_t t0 = fw_timer_ticks();
    s->since = t0;
    s->in_wfe = 1u;
    __asm__ volatile("wfe" ::: "memory");
    s->yield_ticks += fw_timer_ticks() - t0;
    s->in_wfe = 0u;
    s->waits++;
}

/* ipup_device_sync: IPU 1 is core 1; IPU 0 and the host (ipu 2) are core 0 */
static void dual_wait(void *user, int32_t ipu) { (void)user; dual_wfe(ipu == 1 ? 1 : 0); }
static void dual_wake(void *user, int32_t ipu) { (void)user; (void)ipu; dual_sev(); }
static const ipup_device_sync dual_sync = {NULL, dual_wait, dual_wake};

/* core c's WFE ticks so far, an open WFE included (read by core 0 while core 1 sleeps) */
static uint32_t dual_yielded(int c)
{
    const dual_core_stat *s = &dual_stat[c];
    uint32_t y = s->yield_ticks;
    if (s->in_wfe) y += fw_timer_ticks() - s->since;
    return y;
}

/* core 1: wait for an emulator, serve it until ipup_shutdown, wait for the next one */
void fw_core1_main(void)
{
    uint32_t seen = 0u;
    atomic_store_explicit(&dual_up, 1u, memory_order_release);
    dual_sev();
    for (;;) {
        while (atomic_load_explicit(&dual_go, memory_order_acquire) == seen) dual_wfe(1);
        seen = atomic_load_explicit(&dual_go, memory_order_acquire);
        atomic_store_explicit(&dual_core1_rc, (int32_t)ipup_run_device(&fw_emu, 1), memory_order_release);
        dual_sev();
    }
}

/* core 0: release core 1 (INITSVTOR1, then CPUWAIT bit 1 cleared) and wait until it runs */
static void dual_start_core1(void)
{
    DUAL_SYSCTL[DUAL_INITSVTOR1] = (uint32_t)(uintptr_t)fw_core1_vectors;
    __asm__ volatile("dsb" ::: "memory");
    DUAL_SYSCTL[DUAL_CPUWAIT] &= ~2u;
    while (!atomic_load_explicit(&dual_up, memory_order_acquire)) dual_wfe(0);
}

/* what the two runs measured; per step, each core's ticks for the median */
static uint32_t dual_steps[2][FW_TOTAL_STEPS];
typedef struct dual_sum {
    uint64_t own[2], single;        /* instructions: per core (dual run), core 0 alone */
    float first8, last8;
    uint64_t hash_dual, hash_single;
} dual_sum;

/* FW_TOTAL_STEPS steps on both cores, each step's instructions per core printed */
static int dual_train(ipup_emu *e, uint64_t ref_hash, dual_sum *sum)
{
    ipup_run_stats st;
    int step;
    for (step = 0; step < FW_TOTAL_STEPS; step++) {
        uint32_t t0 = fw_timer_ticks(), y0 = dual_yielded(0), y1 = dual_yielded(1), dt, o0, o1;
        int rc = ipup_run_steps(e, 1, &st);
        dt = fw_timer_ticks() - t0;
        o0 = dt - (dual_yielded(0) - y0);
        o1 = dt - (dual_yielded(1) - y1);
        if (rc != IPUP_OK) { fw_printf("FIRMWARE FAILED: dual step %d: %s\n", step, ipup_last_error(e)); return 1; }
        sum->own[0] += o0;
        sum->own[1] += o1;
        dual_steps[0][step] = o0;
        dual_steps[1][step] = o1;
        if (step < 8) sum->first8 += (float)st.loss_mean;
        if (step >= FW_TOTAL_STEPS - 8) sum->last8 += (float)st.loss_mean;
        fw_printf("step %d loss %.4f instructions core 0 %lu core 1 %lu\n", step, st.loss_mean,
                  (unsigned long)(o0 * FW_INSNS_PER_TICK), (unsigned long)(o1 * FW_INSNS_PER_TICK));
        if (step + 1 == FW_CHECK_STEPS) {
            uint64_t h = fw_emu_hash(e);
            fw_printf("bit-identity after %d steps, FNV-1a of all %d weights: two cores %08lx%08lx, plain loop "
                      "%08lx%08lx: %s\n", FW_CHECK_STEPS, FW_N_PARAMS, (unsigned long)(h >> 32),
                      (unsigned long)(h & 0xFFFFFFFFu), (unsigned long)(ref_hash >> 32),
                      (unsigned long)(ref_hash & 0xFFFFFFFFu), h == ref_hash ? "identical" : "DIFFERENT");
            if (h != ref_hash) return 1;
        }
    }
    sum->hash_dual = fw_emu_hash(e);
    return 0;
}

/* the same steps with the cooperative runner on core 0 alone (core 1 asleep) */
static int dual_single(ipup_emu *e, const ipup_config *cfg, dual_sum *sum)
{
    int step;
    if (ipup_init(e, cfg) != IPUP_OK) { fw_printf("FIRMWARE FAILED: re-init: %s\n", ipup_last_error(e)); return 1; }
    for (step = 0; step < FW_TOTAL_STEPS; step++) {
        uint32_t t0 = fw_timer_ticks(), y0 = dual_yielded(0);
        if (ipup_run_steps(e, 1, NULL) != IPUP_OK) {
            fw_printf("FIRMWARE FAILED: single-core step %d: %s\n", step, ipup_last_error(e));
            return 1;
        }
        sum->single += (fw_timer_ticks() - t0) - (dual_yielded(0) - y0);
    }
    sum->hash_single = fw_emu_hash(e);
    return 0;
}

/* the median of core c's steps (insertion sort in place; the order is not needed after) */
static uint32_t dual_median(int c)
{
    uint32_t *v = dual_steps[c];
    int i, j;
    for (i = 1; i < FW_TOTAL_STEPS; i++)
        for (j = i; j > 0 && v[j - 1] > v[j]; j--) { uint32_t t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return v[FW_TOTAL_STEPS / 2];
}

static void dual_report(const dual_sum *sum, int64_t correct, double eloss)
{
    unsigned long i0 = (unsigned long)(sum->own[0] / FW_TOTAL_STEPS * FW_INSNS_PER_TICK);
    unsigned long i1 = (unsigned long)(sum->own[1] / FW_TOTAL_STEPS * FW_INSNS_PER_TICK);
    unsigned long is = (unsigned long)(sum->single / FW_TOTAL_STEPS * FW_INSNS_PER_TICK);
    fw_printf("mean of the first 8 steps' loss %.4f, of the last 8 %.4f\n", (double)(sum->first8 / 8.0f),
              (double)(sum->last8 / 8.0f));
    fw_printf("held-out accuracy %ld/%d = %.2f%% (loss %.4f)\n", (long)correct, FW_N_TEST,
              100.0 * (double)correct / (double)FW_N_TEST, eloss / (double)FW_N_TEST);
    fw_printf("instructions per step (mean of %d; instructions, not cycles): core 0 %lu (%lu%%), core 1 %lu "
              "(%lu%%), one core alone %lu (100%%)\n", FW_TOTAL_STEPS, i0, is ? i0 * 100ul / is : 0ul, i1,
              is ? i1 * 100ul / is : 0ul, is);
    fw_printf("instructions per step (median of %d): core 0 %lu, core 1 %lu (a mean above its median: "
              "QEMU's round-robin switch every 10^8 instructions, when both cores had work, adds the other "
              "core's run to one step of the core it interrupted)\n", FW_TOTAL_STEPS,
              (unsigned long)dual_median(0) * FW_INSNS_PER_TICK, (unsigned long)dual_median(1) * FW_INSNS_PER_TICK);
    fw_printf("final weights FNV-1a %08lx%08lx (two cores), %08lx%08lx (one core): %s\n",
              (unsigned long)(sum->hash_dual >> 32), (unsigned long)(sum->hash_dual & 0xFFFFFFFFu),
              (unsigned long)(sum->hash_single >> 32), (unsigned long)(sum->hash_single & 0xFFFFFFFFu),
              sum->hash_dual == sum->hash_single ? "identical" : "DIFFERENT");
    fw_printf("final weights FNV-1a %08lx%08lx (expf/logf: %s)\n", (unsigned long)(sum->hash_dual >> 32),
              (unsigned long)(sum->hash_dual & 0xFFFFFFFFu),
#ifdef FW_OWN_MATH
              "fw_math.h"
#else
              "the C library's"
#endif
              );
    fw_printf("WFE sleeps: core 0 %lu, core 1 %lu; stack used: core 0 %lu of %lu, core 1 %lu\n",
              (unsigned long)dual_stat[0].waits, (unsigned long)dual_stat[1].waits, (unsigned long)fw_stack_used(),
              (unsigned long)fw_stack_size(), (unsigned long)fw_core1_stack_used());
}

int main(void)
{
    static ipup_model_desc model;
    static ipup_config cfg;
    static ipup_plan plan;
    static dual_sum sum;
    ipup_emu *e = &fw_emu;
    uint64_t ref_hash;
    uint32_t ref_ticks = 0;
    double eloss = 0.0;
    int64_t correct = 0;

    fw_timer_start();
    fw_printf("ipupipe dual-core firmware: %s, MLP %d-%d-%d-%d, %d train / %d held-out MNIST images\n", FW_CPU_NAME,
              FW_PIXELS, FW_H1, FW_H2, FW_C, FW_N_TRAIN, FW_N_TEST);
    fw_printf("pipeline: stage 0 (IPU0) on core 0, stage 1 (IPU1) on core 1, grouped schedule, B=%d, M=%d, %d steps\n",
              FW_MB, FW_M, FW_TOTAL_STEPS);
    dual_start_core1();
    fw_printf("core 1 released (INITSVTOR1 %08lx, CPUWAIT %lu) and running\n",
              (unsigned long)DUAL_SYSCTL[DUAL_INITSVTOR1], (unsigned long)DUAL_SYSCTL[DUAL_CPUWAIT]);
    ref_hash = fw_reference(FW_CHECK_STEPS, &ref_ticks);
    if (fw_setup(e, &cfg, &plan, &model)) return 1;
    ipup_shutdown(e); /* again without main.c's op hook, which is not written for two cores */
    cfg.op_hook = NULL;
    if (ipup_init(e, &cfg) != IPUP_OK || ipup_set_devices(e, &dual_sync) != IPUP_OK) {
        fw_printf("FIRMWARE FAILED: device runner: %s\n", ipup_last_error(e));
        return 1;
    }
    atomic_fetch_add_explicit(&dual_go, 1u, memory_order_release); /* core 1: ipup_run_device */
    dual_sev();
    if (dual_train(e, ref_hash, &sum) || fw_evaluate(e, &correct, &eloss)) return 1;
    ipup_shutdown(e); /* core 1 leaves ipup_run_device */
    if (atomic_load_explicit(&dual_core1_rc, memory_order_acquire) != IPUP_OK) {
        fw_printf("FIRMWARE FAILED: ipup_run_device on core 1 returned %d\n", (int)dual_core1_rc);
        return 1;
    }
    if (dual_single(e, &cfg, &sum)) return 1;
    dual_report(&sum, correct, eloss);
    ipup_shutdown(e);
    if (sum.hash_dual != sum.hash_single || !(sum.last8 < 0.5f * sum.first8) ||
        correct * 100 < (int64_t)FW_N_TEST * FW_MIN_ACC) {
        fw_printf("FIRMWARE FAILED: the bits differ, the loss did not fall to half or the accuracy is below %d%%\n",
                  FW_MIN_ACC);
        return 1;
    }
    fw_puts("FIRMWARE DUAL OK\n");
    return 0;
}
#endif
