/* finetune.c - the fine-tuning firmware image of ipupipe: a pre-trained body frozen, only
   the head trained, on a bare-metal Cortex-M4F (QEMU mps2-an386). No heap, no threads,
   no OS.

   The sensor example's machine-state classifier (examples/common/sensor_classifier.h: normal,
   imbalance, misalignment, bearing fault from 32 spectral features of a vibration
   window) was pre-trained on machine A on the build host; gen_finetune.c wrote its
   weights, machine B's data and the host's figures of this same run into fw_finetune.c/.h.
   On the device:
   1. ipup_init of "dense32:frozen,relu,dense16:frozen,relu,dense4,xent" on two emulated
      IPUs (body on IPU0, head on IPU1) with static pools sized by the generator's plan;
   2. the pre-trained weights go in by tensor name (ipup_tensor_find, ipup_replicas_sync);
   3. accuracy on machine B's held-out windows, the frozen body's hash;
   4. the head is trained on machine B's few windows (momentum SGD, 1F1B schedule,
      cooperative runner, IPUPIPE_NO_THREADS);
   5. accuracy again; the body must be bit for bit what it was, the final weights and the
      accuracies must equal the host's run of the same fine-tuning (same headers,
      portable kernels, fw_math.h's expf/logf), the accuracy must rise by FT_MIN_GAIN
      points; then FINETUNE OK (exit 0). */
#include <stddef.h>
#include <stdint.h>
#include "semihost.h"

static void ft_assert_fail(const char *what, const char *file, int line);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : ft_assert_fail(#c, __FILE__, __LINE__))
#define IPUPIPE_IMPLEMENTATION
#include "ft_config.h"   /* fw_math.h's expf/logf, IPUPIPE_NO_THREADS, sizes, ipupipe.h, sensor_classifier.h */
#include "fw_finetune.h" /* generated: pool sizes, weights, machine B's data, the host's figures */
#include "fw_print.h"    /* fw_printf */

uint32_t fw_stack_used(void); /* startup.c */
uint32_t fw_stack_size(void);

#ifndef FT_MIN_GAIN
#define FT_MIN_GAIN 30   /* percentage points of held-out accuracy on machine B */
#endif

IPUP_ALIGN64 static uint8_t ft_ipu0[FT_IPU0_BYTES];
IPUP_ALIGN64 static uint8_t ft_ipu1[FT_IPU1_BYTES];
IPUP_ALIGN64 static uint8_t ft_host[FT_HOST_BYTES];
static ipup_emu ft_emu;
static int32_t ft_shot_labels[FT_N_SHOTS], ft_test_labels[FT_N_TEST];

static void ft_assert_fail(const char *what, const char *file, int line)
{
    char buf[256];
    (void)ipup_snprintf(buf, sizeof buf, "FIRMWARE ASSERT: %s at %s:%d\n", what, file, line);
    fw_puts(buf);
    fw_exit(2);
}


static void ft_hex(const char *what, uint64_t h)
{
    fw_printf("%s FNV-1a %08lx%08lx\n", what, (unsigned long)(h >> 32), (unsigned long)(h & 0xFFFFFFFFu));
}

/* 1. the pools, the plan check, ipup_init; 2. the pre-trained weights */
static int ft_setup(ipup_emu *e, ipup_config *cfg, ipup_model_desc *m, const sf_settings *s, sf_rows *rows)
{
    static ipup_plan plan;
    char msg[160];
    int32_t i;
    if (sf_model(m, SF_FINETUNE_TEXT, msg, sizeof msg) != IPUP_OK) { fw_printf("FINETUNE FAILED: model: %s\n", msg); return 1; }
    for (i = 0; i < FT_N_SHOTS; i++) ft_shot_labels[i] = (int32_t)ft_shots_y[i];
    for (i = 0; i < FT_N_TEST; i++) ft_test_labels[i] = (int32_t)ft_test_y[i];
    rows->x = ft_shots_x; rows->y = ft_shot_labels; rows->n = FT_N_SHOTS; rows->row = SF_IN;
    sf_config(cfg, m, s, rows);
    cfg->ipu[0].mem = ft_ipu0; cfg->ipu[0].bytes = sizeof ft_ipu0;
    cfg->ipu[1].mem = ft_ipu1; cfg->ipu[1].bytes = sizeof ft_ipu1;
    cfg->host.mem = ft_host; cfg->host.bytes = sizeof ft_host;
    if (ipup_plan_config(e, cfg, &plan) != IPUP_OK) { fw_printf("FINETUNE FAILED: plan: %s\n", ipup_last_error(e)); return 1; }
    if (plan.ipu_bytes[0] > sizeof ft_ipu0 || plan.ipu_bytes[1] > sizeof ft_ipu1 || plan.host_bytes > sizeof ft_host) {
        fw_printf("FINETUNE FAILED: fw_finetune.h is out of date: the plan needs %lu, %lu and %lu bytes\n",
                  (unsigned long)plan.ipu_bytes[0], (unsigned long)plan.ipu_bytes[1], (unsigned long)plan.host_bytes);
        return 1;
    }
    if (ipup_init(e, cfg) != IPUP_OK || sf_weights_put(e, ft_weights) != IPUP_OK) {
        fw_printf("FINETUNE FAILED: %s\n", ipup_last_error(e));
        return 1;
    }
    return 0;
}

/* correct predictions on machine B's held-out windows (-1 after a message) */
static int64_t ft_accuracy(ipup_emu *e)
{
    int64_t c = 0;
    if (sf_correct(e, FT_N_TEST, ft_test_x, ft_test_labels, &c) != IPUP_OK) {
        fw_printf("FINETUNE FAILED: evaluate: %s\n", ipup_last_error(e));
        return -1;
    }
    return c;
}

/* 4. the head's training */
static int ft_train(ipup_emu *e, int32_t steps)
{
    int32_t s;
    for (s = 0; s < steps; s++) {
        ipup_run_stats st;
        if (ipup_run_steps(e, 1, &st) != IPUP_OK) {
            fw_printf("FINETUNE FAILED: step %d: %s\n", (int)s, ipup_last_error(e));
            return 1;
        }
        if (s % 10 == 0 || s == steps - 1) fw_printf("step %d loss %.4f\n", (int)s, st.loss_mean);
    }
    return 0;
}

static void ft_memory(const ipup_emu *e)
{
    int32_t ipu;
    for (ipu = 0; ipu < 2; ipu++) {
        ipup_mem_report r;
        if (ipup_memory_report(e, ipu, &r) != IPUP_OK) continue;
        fw_printf("IPU%d pool %lu bytes: weights %lu, grads %lu, optimizer %lu, stash %lu, exchange %lu, scratch %lu\n",
                  (int)ipu, (unsigned long)r.capacity, (unsigned long)r.by_category[IPUP_MEM_WEIGHTS],
                  (unsigned long)r.by_category[IPUP_MEM_GRADS], (unsigned long)r.by_category[IPUP_MEM_OPTIMIZER],
                  (unsigned long)r.by_category[IPUP_MEM_STASH], (unsigned long)r.by_category[IPUP_MEM_EXCHANGE],
                  (unsigned long)r.by_category[IPUP_MEM_SCRATCH]);
    }
    fw_printf("sizeof(ipup_emu) %lu, stack used %lu of %lu\n", (unsigned long)sizeof(ipup_emu),
              (unsigned long)fw_stack_used(), (unsigned long)fw_stack_size());
}

/* 5. the figures and the checks; 1 when every promise held */
static int ft_report(ipup_emu *e, int64_t before, int64_t after, uint64_t body0)
{
    uint64_t body1 = sf_hash(e, 0, SF_BODY_TENSORS), all = sf_hash(e, 0, SF_TENSORS);
    int ok = 1;
    fw_printf("machine B held-out accuracy before fine-tuning %ld/%d = %.2f%%\n", (long)before, FT_N_TEST,
              100.0 * (double)before / FT_N_TEST);
    fw_printf("machine B held-out accuracy after fine-tuning %ld/%d = %.2f%%\n", (long)after, FT_N_TEST,
              100.0 * (double)after / FT_N_TEST);
    ft_hex("frozen body before", body0);
    ft_hex("frozen body after ", body1);
    ft_hex("final weights", all);
    ft_hex("host's final weights", FT_HOST_ALL_HASH);
    ft_memory(e);
    if (body0 != body1 || body0 != FT_HOST_BODY_HASH) { fw_printf("FINETUNE FAILED: the frozen body changed\n"); ok = 0; }
    if (all != FT_HOST_ALL_HASH || before != FT_HOST_BEFORE || after != FT_HOST_AFTER) {
        fw_printf("FINETUNE FAILED: not the host's bits (host: before %d, after %d)\n", (int)FT_HOST_BEFORE, (int)FT_HOST_AFTER);
        ok = 0;
    } else fw_printf("same bits as the host's run of the same fine-tuning: final weights and both accuracies\n");
    if ((after - before) * 100 < (int64_t)FT_MIN_GAIN * FT_N_TEST) {
        fw_printf("FINETUNE FAILED: the accuracy rose by less than %d points\n", FT_MIN_GAIN);
        ok = 0;
    }
    return ok;
}

int main(void)
{
    static ipup_model_desc model;
    static ipup_config cfg;
    static sf_rows rows;
    sf_settings s = sf_finetune_defaults();
    ipup_emu *e = &ft_emu;
    int64_t before, after;
    uint64_t body0;
    int ok;
    fw_printf("ipupipe fine-tuning firmware: \"%s\", %d machine B windows, %d held-out, %d steps of %d x %d\n",
              SF_FINETUNE_TEXT, FT_N_SHOTS, FT_N_TEST, (int)s.steps, (int)s.batch, (int)s.accumulate);
    if (ft_setup(e, &cfg, &model, &s, &rows) || (before = ft_accuracy(e)) < 0) return 1;
    body0 = sf_hash(e, 0, SF_BODY_TENSORS);
    if (ft_train(e, s.steps) || (after = ft_accuracy(e)) < 0) return 1;
    ok = ft_report(e, before, after, body0);
    ipup_shutdown(e);
    if (!ok) return 1;
    fw_puts("FINETUNE OK\n");
    return 0;
}
