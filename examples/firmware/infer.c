/* infer.c - the inference-only firmware image: a model trained on the host and exported
   as C (build/firmware/fw_net.h, written by gen_infer.c through examples/common/export_c.h)
   predicts the held-out MNIST images compiled into flash, on a bare-metal Cortex-M4F
   (QEMU mps2-an386). It links only ipupipe_kernels.h: no emulator, no heap, no threads,
   no formatter (the numbers are printed by hand).

   It prints the weights' hash (the arrays as compiled against the exporter's), the
   class of every held-out image, 50 to a line, the FNV-1a hash of the bits of all
   logits, the accuracy and the instructions per image, then INFER OK. check_infer.sh
   compares the class lines and the hash with ipup_predict's on the host
   (gen_infer.c, portable kernels): they must be identical. */
#include <stddef.h>
#include <stdint.h>
#include "semihost.h"

static void fw_assert_fail(const char *what, const char *file, int line);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : fw_assert_fail(#c, __FILE__, __LINE__))
#define IPUPIPE_IMPLEMENTATION
#include "fw_mnist.h" /* FW_PIXELS, FW_N_TEST, fw_test_x, fw_test_y (gen_mnist.c) */
#include "fw_net.h"   /* the exported model: fw_net_predict, FW_NET_* (gen_infer.c) */

typedef char fw_net_fits_the_data[FW_NET_IN == FW_PIXELS ? 1 : -1];

/* CMSDK APB timer 0 under QEMU -icount shift=0: 40 instructions a tick (see main.c) */
#define FW_TIMER ((volatile uint32_t *)0x40000000u)
#define FW_INSNS_PER_TICK 40u

static char fw_line[96];

static void fw_put_u(char **p, uint32_t v) {
    char d[10];
    int n = 0;
    do { d[n++] = (char)('0' + v % 10u); v /= 10u; } while (v);
    while (n) *(*p)++ = d[--n];
}
static void fw_put_s(char **p, const char *s) { while (*s) *(*p)++ = *s++; }
static void fw_put_hex64(char **p, uint64_t v) {
    int i;
    for (i = 15; i >= 0; i--) *(*p)++ = "0123456789abcdef"[(v >> (4 * i)) & 15u];
}
static void fw_end_line(char *p) {
    *p++ = '\n';
    *p = 0;
    fw_puts(fw_line);
}

static void fw_assert_fail(const char *what, const char *file, int line) {
    char *p = fw_line;
    (void)file;
    fw_put_s(&p, "INFER ASSERT at line ");
    fw_put_u(&p, (uint32_t)line);
    fw_end_line(p);
    fw_puts(what);
    fw_exit(2);
}

static float fw_scratch[FW_NET_SCRATCH_FLOATS];
static float fw_x[FW_NET_BATCH * FW_NET_IN], fw_logits[FW_NET_BATCH * FW_NET_OUT];
static int32_t fw_cls[FW_NET_BATCH];
static char fw_classes[FW_N_TEST];

/* every held-out image through fw_net_predict, FW_NET_BATCH at a time; returns the
   hash of all logits, the classes in fw_classes, the right ones in *correct */
static uint64_t fw_run(uint32_t *correct, uint32_t *ticks) {
    uint64_t h = UINT64_C(14695981039346656037);
    int32_t i, j, p;
    for (i = 0; i < FW_N_TEST; i += FW_NET_BATCH) {
        int32_t n = FW_N_TEST - i < FW_NET_BATCH ? FW_N_TEST - i : FW_NET_BATCH;
        uint32_t t0;
        for (j = 0; j < n; j++)
            for (p = 0; p < FW_PIXELS; p++) fw_x[j * FW_PIXELS + p] = (float)fw_test_x[i + j][p] * (1.0f / 255.0f);
        t0 = 0xFFFFFFFFu - FW_TIMER[1];
        fw_net_predict(n, fw_x, fw_logits, fw_cls, fw_scratch);
        *ticks += (0xFFFFFFFFu - FW_TIMER[1]) - t0;
        h = fw_net_fnv1a(h, fw_logits, n * FW_NET_OUT);
        for (j = 0; j < n; j++) {
            fw_classes[i + j] = (char)('0' + fw_cls[j]);
            *correct += fw_cls[j] == (int32_t)fw_test_y[i + j];
        }
    }
    return h;
}

static void fw_print_classes(void) {
    int32_t i, j;
    for (i = 0; i < FW_N_TEST; i += 50) {
        int32_t last = i + 49 < FW_N_TEST ? i + 49 : FW_N_TEST - 1;
        char *p = fw_line;
        fw_put_s(&p, "classes ");
        fw_put_u(&p, (uint32_t)i);
        *p++ = '-';
        fw_put_u(&p, (uint32_t)last);
        *p++ = ' ';
        for (j = i; j <= last; j++) *p++ = fw_classes[j];
        fw_end_line(p);
    }
}

int main(void) {
    uint64_t wh = fw_net_weights_fnv1a(), h;
    uint32_t correct = 0, ticks = 0;
    char *p = fw_line;
    FW_TIMER[2] = 0xFFFFFFFFu;
    FW_TIMER[1] = 0xFFFFFFFFu;
    FW_TIMER[0] = 1u;
    fw_puts("ipupipe inference firmware: " FW_NET_MODEL_TEXT ", exported from a host training run\n");
    fw_put_s(&p, "weights FNV-1a ");
    fw_put_hex64(&p, wh);
    fw_put_s(&p, wh == FW_NET_WEIGHTS_FNV1A ? " (as exported)" : " (DIFFERENT from the export)");
    fw_end_line(p);
    h = fw_run(&correct, &ticks);
    fw_print_classes();
    p = fw_line;
    fw_put_s(&p, "output FNV-1a ");
    fw_put_hex64(&p, h);
    fw_end_line(p);
    p = fw_line;
    fw_put_s(&p, "correct ");
    fw_put_u(&p, correct);
    *p++ = '/';
    fw_put_u(&p, FW_N_TEST);
    fw_put_s(&p, ", instructions per image ");
    fw_put_u(&p, ticks / FW_N_TEST * FW_INSNS_PER_TICK);
    fw_end_line(p);
    if (wh != FW_NET_WEIGHTS_FNV1A) return 1;
    fw_puts("INFER OK\n");
    return 0;
}
