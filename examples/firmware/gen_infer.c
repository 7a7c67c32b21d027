/* gen_infer.c - host tool of the inference-only firmware (infer.c): trains the
   firmware's network (fw_model.h: the same model, split, schedule, B, M and SGD as the
   training firmware) on the same compiled-in MNIST images (fw_mnist.c, gen_mnist.c's
   output) with the emulator, exports it as C with examples/common/export_c.h, and writes what
   the firmware must print: ipup_predict's classes of the held-out images and the FNV-1a
   hash of all its output bits.

   Built with the portable kernels (-DIPUPIPE_NO_SIMD, no -march), the ones the
   Cortex-M build compiles, and with fw_math.h's expf/logf for training (the forward of
   this model calls neither), so check_infer.sh can ask for the same bits.

   usage: gen_infer OUT_MODEL.h OUT_EXPECT.txt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fw_math.h"
#define IPUPIPE_EXPF(x) fw_expf(x)
#define IPUPIPE_LOGF(x) fw_logf(x)
#define IPUPIPE_IMPLEMENTATION
#include "fw_model.h"
#include "export_c.h"

#ifndef FW_INFER_EPOCHS
#define FW_INFER_EPOCHS 12
#endif

/* the training images in order, epoch after epoch, as the training firmware scales them */
static int gi_infeed(void *user, const ipup_feed *f) {
    int32_t i, p;
    (void)user;
    if (f->row != FW_PIXELS || !f->labels) return -1;
    for (i = 0; i < f->n; i++) {
        int k = (int)((f->sample0 + i) % FW_N_TRAIN);
        for (p = 0; p < FW_PIXELS; p++) f->x[i * FW_PIXELS + p] = (float)fw_train_x[k][p] * (1.0f / 255.0f);
        f->labels[i] = (int32_t)fw_train_y[k];
    }
    return 0;
}

static int gi_file_write(void *user, const void *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)user) == len ? 0 : -1;
}

/* the emulator of fw_model.h with pools from the heap (a host tool), trained */
static int gi_train(ipup_emu *e, ipup_config *cfg, ipup_model_desc *m) {
    static ipup_emu work;
    ipup_plan plan;
    ipup_run_stats st;
    char msg[256];
    int32_t d;
    if (fw_model(m, msg, sizeof msg) != IPUP_OK) return fprintf(stderr, "gen_infer: model: %s\n", msg), 1;
    fw_config(cfg, m);
    cfg->infeed = gi_infeed;
    cfg->host.bytes = 1 << 20;
    cfg->host.mem = aligned_alloc(64, cfg->host.bytes);
    if (!cfg->host.mem || ipup_plan_config(&work, cfg, &plan) != IPUP_OK)
        return fprintf(stderr, "gen_infer: plan: %s\n", ipup_last_error(&work)), 1;
    for (d = 0; d < plan.ipus; d++) {
        cfg->ipu[d].bytes = plan.ipu_bytes[d];
        cfg->ipu[d].mem = aligned_alloc(64, (plan.ipu_bytes[d] + 63) / 64 * 64);
        if (!cfg->ipu[d].mem) return fprintf(stderr, "gen_infer: out of memory\n"), 1;
    }
    if (ipup_init(e, cfg) != IPUP_OK) return fprintf(stderr, "gen_infer: ipup_init: %s\n", ipup_last_error(e)), 1;
    for (d = 0; d < FW_INFER_EPOCHS * (FW_N_TRAIN / (FW_MB * FW_M)); d++) /* fw_config: repeat 1 */
        if (ipup_run_steps(e, 1, &st) != IPUP_OK)
            return fprintf(stderr, "gen_infer: training step %d: %s\n", (int)d, ipup_last_error(e)), 1;
    printf("gen_infer: trained %s on %d images for %d epochs, last loss %.4f\n", FW_MODEL_TEXT, FW_N_TRAIN,
           FW_INFER_EPOCHS, st.loss_mean);
    return 0;
}

/* ipup_predict on the held-out images; the lines infer.c prints, into f */
static int gi_expect(ipup_emu *e, FILE *f) {
    static float x[FW_N_TEST * FW_PIXELS], out[FW_N_TEST * FW_C];
    static int32_t cls[FW_N_TEST];
    int32_t i, p, correct = 0;
    for (i = 0; i < FW_N_TEST; i++)
        for (p = 0; p < FW_PIXELS; p++) x[i * FW_PIXELS + p] = (float)fw_test_x[i][p] * (1.0f / 255.0f);
    if (ipup_output_width(e) != FW_C || ipup_predict(e, FW_N_TEST, x, out, cls) != IPUP_OK)
        return fprintf(stderr, "gen_infer: ipup_predict: %s\n", ipup_last_error(e)), 1;
    for (i = 0; i < FW_N_TEST; i++) {
        if (i % 50 == 0) fprintf(f, "%sclasses %d-%d ", i ? "\n" : "", (int)i, (int)(i + 49 < FW_N_TEST ? i + 49 : FW_N_TEST - 1));
        fputc('0' + (int)cls[i], f);
        correct += cls[i] == (int32_t)fw_test_y[i];
    }
    fprintf(f, "\noutput FNV-1a %016llx\ncorrect %d/%d\n",
            (unsigned long long)expc_fnv1a(EXPC_FNV_BASIS, out, (int64_t)FW_N_TEST * FW_C), (int)correct, FW_N_TEST);
    return 0;
}

int main(int argc, char **argv) {
    static ipup_emu e;
    static ipup_model_desc m;
    static ipup_config cfg;
    expc_info info;
    char msg[512];
    FILE *f;
    int rc;
    if (argc != 3) return fprintf(stderr, "usage: gen_infer OUT_MODEL.h OUT_EXPECT.txt\n"), 2;
    if (gi_train(&e, &cfg, &m)) return 1;
    if (!(f = fopen(argv[1], "w"))) return fprintf(stderr, "gen_infer: cannot write %s\n", argv[1]), 1;
    rc = expc_write(&e, "fw_net", "examples/firmware/gen_infer.c", gi_file_write, f, &info, msg, sizeof msg);
    if (fclose(f) != 0 || rc != IPUP_OK) return fprintf(stderr, "gen_infer: export to %s: %s\n", argv[1], msg), 1;
    printf("gen_infer: exported %s: %lld weights, FNV-1a %016llx\n", argv[1], (long long)info.floats,
           (unsigned long long)info.fnv1a);
    if (!(f = fopen(argv[2], "w"))) return fprintf(stderr, "gen_infer: cannot write %s\n", argv[2]), 1;
    rc = gi_expect(&e, f);
    if (fclose(f) != 0 || rc) return fprintf(stderr, "gen_infer: writing %s failed\n", argv[2]), 1;
    ipup_shutdown(&e);
    return 0;
}
