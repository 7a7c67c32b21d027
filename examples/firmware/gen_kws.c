/* gen_kws.c - host program of the keyword-spotting firmware image (kws.c): runs at build
   time and writes OUT.c / OUT.h with what the device needs and what it must get:

   - the pre-trained weights of DS-CNN (kws_model.h's KWS_PRETRAIN_TEXT), trained here
     briefly on synthetic keywords of speaker A (below), every tensor by name: the
     parameters and the batch norms' running mean and variance;
   - speaker B's few fine-tuning samples and held-out samples, with labels;
   - the figures of the same fine-tuning on this host (kws_model.h's pipeline: ipupipe's
     portable kernels, fw_math.h's expf/logf, the same settings): correct predictions on
     speaker B's held-out samples before and after, the loss of each step, the FNV-1a
     hashes of the frozen body and of all weights. The device compares its own.
   It also checks that its plan of the fine-tuning pipeline (ipup_plan_config) has the
   bytes of the header build/ipupipe-plan wrote (POOLS), which the device's pools use.

   Floats are written as C99 hexadecimal literals: exact.

   Synthetic keywords (a stand-in for 49 frames x 10 MFCCs of a one-second utterance):
   12 classes as MLPerf Tiny's (silence, unknown, ten words). A word is a sequence of
   KD_SEQ "phones", each a fixed random spectral signature over the 10 coefficients held
   for a few frames under a triangular envelope, at a random position and duration, over
   noise; "unknown" strings random phones, "silence" is noise alone. A speaker maps a
   signature s[c] to gain[c] s[c] + offset[c] and stretches the durations: speaker A
   (pre-training) is the identity, speaker B (the device) is not.

   usage: gen_kws --plan-args        the fine-tuning pipeline as ipupipe-plan arguments
          gen_kws POOLS OUT          writes OUT.c and OUT.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define IPUPIPE_IMPLEMENTATION
#include "fw_math.h"
#define IPUPIPE_EXPF(x) fw_expf(x)
#define IPUPIPE_LOGF(x) fw_logf(x)
#define IPUPIPE_NO_THREADS
#define IPUP_MAX_LAYERS 40 /* the pre-training text has 33 layers */
#include "ipupipe.h"
#include "kws_model.h"
#include "mnist_texts.h" /* the trainer's named models: MNT_DS_CNN_LAYERS */

#define KD_SEED 7u
#define KD_PHONES 24
#define KD_SEQ 3
#define KD_PRE_TRAIN 1536 /* speaker A samples for pre-training */
#define KD_PRE_TEST 192   /* speaker A held-out samples */
#define KD_SHOTS 24       /* speaker B samples for fine-tuning (2 per class) */
#define KD_B_TEST 48      /* speaker B held-out samples (4 per class) */
#define KD_PRE_BATCH 16
#define KD_PRE_STEPS 96 /* pre-training steps (Adam) */
#define KD_MAX_TENSORS 64

typedef struct kd_speaker {
    float gain[KWS_W], offset[KWS_W], stretch;
} kd_speaker;

static float kd_u(uint64_t a, uint64_t b) { return ipup_rng_uniform_f32(KD_SEED, a, b); }

/* speaker B: a channel (gain 0.6..1.4 and an offset within +-0.4 per coefficient) and
   slower speech (durations x 1.25) */
static void kd_speakers(kd_speaker *a, kd_speaker *b)
{
    int c;
    for (c = 0; c < KWS_W; c++) {
        a->gain[c] = 1.0f;
        a->offset[c] = 0.0f;
        b->gain[c] = 0.6f + 0.8f * kd_u(3, (uint64_t)c);
        b->offset[c] = 0.4f * (2.0f * kd_u(4, (uint64_t)c) - 1.0f);
    }
    a->stretch = 1.0f;
    b->stretch = 1.25f;
}

/* sample i of set `set` (a stream of its own) by speaker sp into x (KWS_IN); its label */
static int32_t kd_sample(const kd_speaker *sp, uint64_t set, uint64_t i, float *x)
{
    int32_t y = (int32_t)(i % KWS_CLASSES), j, t, c, ph[KD_SEQ], dur[KD_SEQ], total = 0, t0;
    uint64_t key = (set << 32) + i;
    float amp = 0.8f + 0.4f * kd_u(16, key);
    for (t = 0; t < KWS_H; t++)
        for (c = 0; c < KWS_W; c++)
            x[t * KWS_W + c] =
                0.25f * (2.0f * kd_u(17 + set, i * KWS_IN + (uint64_t)(t * KWS_W + c)) - 1.0f) +
                sp->offset[c];
    if (y == 0) return y; /* silence */
    for (j = 0; j < KD_SEQ; j++) {
        uint64_t w =
            y == 1 ? KD_SEQ * key + (uint64_t)j : (uint64_t)(y * 8 + j); /* unknown: per sample */
        float base = 4.0f + (float)(int)(6.0f * kd_u(y == 1 ? 18 : 5, w));
        ph[j] = (int32_t)((float)KD_PHONES * kd_u(y == 1 ? 19 : 6, w));
        dur[j] =
            (int32_t)(base * sp->stretch * (0.85f + 0.3f * kd_u(20, key * KD_SEQ + (uint64_t)j)) +
                      0.5f);
        if (dur[j] < 2) dur[j] = 2;
        total += dur[j];
    }
    t0 = total < KWS_H ? (int32_t)((float)(KWS_H - total + 1) * kd_u(21, key)) : 0;
    for (j = 0; j < KD_SEQ; t0 += dur[j], j++)
        for (t = t0; t < t0 + dur[j] && t < KWS_H; t++) {
            float pos = 2.0f * ((float)(t - t0) + 0.5f) / (float)dur[j] - 1.0f;
            float env = amp * (1.0f - 0.5f * (pos < 0.0f ? -pos : pos));
            for (c = 0; c < KWS_W; c++)
                x[t * KWS_W + c] +=
                    env * sp->gain[c] * (2.0f * kd_u(2, (uint64_t)(ph[j] * KWS_W + c)) - 1.0f);
        }
    return y;
}

typedef struct kd_set {
    float *x;
    int32_t *y;
    int32_t n;
} kd_set;

static int kd_make(kd_set *s, const kd_speaker *sp, uint64_t set, int32_t n)
{
    int32_t i;
    s->n = n;
    s->x = (float *)malloc((size_t)n * KWS_IN * sizeof(float));
    s->y = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    if (!s->x || !s->y) {
        fprintf(stderr, "gen_kws: out of memory\n");
        return 1;
    }
    for (i = 0; i < n; i++) s->y[i] = kd_sample(sp, set, (uint64_t)i, s->x + (size_t)i * KWS_IN);
    return 0;
}

/* one emulator with pools the plan sizes (malloc: this is the host) */
typedef struct kd_emu {
    ipup_emu e;
    ipup_plan plan;
    uint8_t *mem[3];
} kd_emu;
static kd_emu kd_pre, kd_ft;

static int kd_start(kd_emu *r, ipup_config *cfg, const char *what)
{
    size_t hb = ipup_host_bytes(cfg);
    int32_t d;
    memset(&r->e, 0, sizeof r->e);
    r->mem[2] = (uint8_t *)aligned_alloc(64, (hb + 63) / 64 * 64 + 64);
    if (!r->mem[2]) {
        fprintf(stderr, "gen_kws: out of memory\n");
        return 1;
    }
    cfg->host.mem = r->mem[2];
    cfg->host.bytes = hb;
    if (ipup_plan_config(&r->e, cfg, &r->plan) != IPUP_OK) {
        fprintf(stderr, "gen_kws: %s: ipup_plan_config: %s\n", what, ipup_last_error(&r->e));
        return 1;
    }
    for (d = 0; d < r->plan.devices; d++) {
        r->mem[d] = (uint8_t *)aligned_alloc(64, (r->plan.ipu_bytes[d] + 63) / 64 * 64 + 64);
        if (!r->mem[d]) {
            fprintf(stderr, "gen_kws: out of memory\n");
            return 1;
        }
        cfg->ipu[d].mem = r->mem[d];
        cfg->ipu[d].bytes = r->plan.ipu_bytes[d];
    }
    if (ipup_init(&r->e, cfg) != IPUP_OK) {
        fprintf(stderr, "gen_kws: %s: ipup_init: %s\n", what, ipup_last_error(&r->e));
        return 1;
    }
    return 0;
}

static int64_t kd_correct(ipup_emu *e, const kd_set *s)
{
    int64_t c = 0;
    if (ipup_evaluate(e, s->n, s->x, s->y, NULL, &c) != IPUP_OK) {
        fprintf(stderr, "gen_kws: evaluate: %s\n", ipup_last_error(e));
        return -1;
    }
    return c;
}

/* the weights table: every weight tensor of the pre-trained emulator */
static char kd_names[KD_MAX_TENSORS][IPUP_TENSOR_NAME_MAX];
static int32_t kd_off[KD_MAX_TENSORS], kd_n[KD_MAX_TENSORS], kd_n_t, kd_total;
static float *kd_w;

static int kd_weights_get(ipup_emu *e)
{
    int32_t i;
    ipup_tensor_info ti;
    kd_n_t = kd_total = 0;
    for (i = 0; i < ipup_tensor_count(e); i++)
        if (ipup_tensor_get(e, i, &ti) == IPUP_OK && kws_is_weight(&ti)) kd_total += ti.n;
    if (!(kd_w = (float *)malloc((size_t)kd_total * sizeof(float)))) return 1;
    for (i = 0, kd_total = 0; i < ipup_tensor_count(e); i++) {
        if (ipup_tensor_get(e, i, &ti) != IPUP_OK || !kws_is_weight(&ti)) continue;
        if (kd_n_t == KD_MAX_TENSORS) {
            fprintf(stderr, "gen_kws: more than %d tensors\n", KD_MAX_TENSORS);
            return 1;
        }
        snprintf(kd_names[kd_n_t], sizeof kd_names[kd_n_t], "%s", ti.name);
        kd_off[kd_n_t] = kd_total;
        kd_n[kd_n_t] = ti.n;
        memcpy(kd_w + kd_total, ti.data, (size_t)ti.n * sizeof(float));
        kd_total += ti.n;
        kd_n_t++;
    }
    return 0;
}

/* pre-training on speaker A: every layer, one stage, Adam; the batch norms' momentum
   0.9 instead of Keras' 0.99 so that their running statistics settle in these few steps */
static int kd_pretrain(const kd_set *a, const kd_set *at, const kd_set *bt, int64_t *acc_a,
                       int64_t *acc_b)
{
    static ipup_model_desc m;
    ipup_config cfg;
    kws_rows rows;
    char msg[256];
    int32_t l, s;
    if (kws_model(&m, KWS_PRETRAIN_TEXT, msg, sizeof msg) != IPUP_OK) {
        fprintf(stderr, "gen_kws: %s\n", msg);
        return 1;
    }
    for (l = 0; l < m.n_layers; l++)
        if (m.layers[l].kind == IPUP_LAYER_BATCHNORM) m.layers[l].momentum = 0.9f;
    rows.x = a->x;
    rows.y = a->y;
    rows.n = a->n;
    memset(&cfg, 0, sizeof cfg);
    cfg.model = &m;
    cfg.stages = 1;
    cfg.microbatch = KD_PRE_BATCH;
    cfg.microbatches = 1;
    cfg.repeat = 1;
    cfg.opt.kind = IPUP_OPT_ADAM;
    cfg.opt.lr = 0.003f;
    cfg.seed = KWS_SEED;
    cfg.runner = IPUP_RUNNER_COOP;
    cfg.infeed = kws_infeed;
    cfg.infeed_user = &rows;
    if (kd_start(&kd_pre, &cfg, "pre-training")) return 1;
    for (s = 0; s < KD_PRE_STEPS; s++) {
        ipup_run_stats st;
        if (ipup_run_steps(&kd_pre.e, 1, &st) != IPUP_OK) {
            fprintf(stderr, "gen_kws: pre-training: %s\n", ipup_last_error(&kd_pre.e));
            return 1;
        }
        if (s % 16 == 0 || s == KD_PRE_STEPS - 1)
            printf("gen_kws: pre-training step %d loss %.4f\n", (int)s, st.loss_mean);
    }
    if ((*acc_a = kd_correct(&kd_pre.e, at)) < 0 || (*acc_b = kd_correct(&kd_pre.e, bt)) < 0)
        return 1;
    return kd_weights_get(&kd_pre.e);
}

/* the host's run of the device's fine-tuning */
typedef struct kd_figs {
    int64_t before, after;
    uint64_t body, all;
    double loss[KWS_STEPS];
    size_t ipu_bytes[2], host_bytes;
} kd_figs;

static int kd_finetune(const kd_set *b, const kd_set *bt, kd_figs *f)
{
    static ipup_model_desc m;
    static int32_t split;
    static const char *names[KD_MAX_TENSORS];
    ipup_config cfg;
    kws_rows rows;
    char msg[256];
    int32_t s;
    if (kws_model(&m, KWS_FINETUNE_TEXT, msg, sizeof msg) != IPUP_OK) {
        fprintf(stderr, "gen_kws: %s\n", msg);
        return 1;
    }
    rows.x = b->x;
    rows.y = b->y;
    rows.n = b->n;
    if (kws_config(&cfg, &m, &split, &rows) != IPUP_OK) {
        fprintf(stderr, "gen_kws: no layer %s\n", KWS_HEAD_ID);
        return 1;
    }
    if (kd_start(&kd_ft, &cfg, "fine-tuning")) return 1;
    f->ipu_bytes[0] = kd_ft.plan.ipu_bytes[0];
    f->ipu_bytes[1] = kd_ft.plan.ipu_bytes[1];
    f->host_bytes = kd_ft.plan.host_bytes;
    for (s = 0; s < kd_n_t; s++) names[s] = kd_names[s];
    if (kws_weights_put(&kd_ft.e, kd_n_t, names, kd_off, kd_n, kd_w) != IPUP_OK) {
        fprintf(stderr, "gen_kws: fine-tuning: %s\n", ipup_last_error(&kd_ft.e));
        return 1;
    }
    if ((f->before = kd_correct(&kd_ft.e, bt)) < 0) return 1;
    f->body = kws_hash(&kd_ft.e, 0);
    for (s = 0; s < KWS_STEPS; s++) {
        ipup_run_stats st;
        if (ipup_run_steps(&kd_ft.e, 1, &st) != IPUP_OK) {
            fprintf(stderr, "gen_kws: fine-tuning: %s\n", ipup_last_error(&kd_ft.e));
            return 1;
        }
        f->loss[s] = st.loss_mean;
    }
    if ((f->after = kd_correct(&kd_ft.e, bt)) < 0) return 1;
    if (kws_hash(&kd_ft.e, 0) != f->body) {
        fprintf(stderr, "gen_kws: the frozen body changed\n");
        return 1;
    }
    f->all = kws_hash(&kd_ft.e, -1);
    return 0;
}

/* the value of `#define NAME <number>` in the header at path, or -1 */
static long kd_define(const char *path, const char *name)
{
    char line[512];
    size_t k = strlen(name);
    long v = -1;
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "#define ", 8) && !strncmp(line + 8, name, k) && line[8 + k] == ' ')
            v = strtol(line + 9 + k, NULL, 10);
    fclose(f);
    return v;
}

static int kd_check_pools(const char *pools, const kd_figs *f)
{
    long p0 = kd_define(pools, "IPUP_PLAN_IPU0_BYTES"),
         p1 = kd_define(pools, "IPUP_PLAN_IPU1_BYTES"),
         ph = kd_define(pools, "IPUP_PLAN_HOST_BYTES");
    if (p0 != (long)f->ipu_bytes[0] || p1 != (long)f->ipu_bytes[1] || ph != (long)f->host_bytes) {
        fprintf(stderr,
                "gen_kws: %s plans %ld, %ld and %ld bytes (IPU0, IPU1, host), this program's "
                "ipup_plan_config %zu, %zu and %zu: make it again with gen_kws --plan-args\n",
                pools, p0, p1, ph, f->ipu_bytes[0], f->ipu_bytes[1], f->host_bytes);
        return 1;
    }
    return 0;
}

static void kd_floats(FILE *f, const char *name, const float *v, size_t n)
{
    size_t i;
    fprintf(f, "const float %s[%zu] = {\n", name, n);
    for (i = 0; i < n; i++)
        fprintf(f, "%af,%s", (double)v[i], (i % 6 == 5 || i + 1 == n) ? "\n" : " ");
    fprintf(f, "};\n");
}
static void kd_ints(FILE *f, const char *type, const char *name, const int32_t *v, size_t n)
{
    size_t i;
    fprintf(f, "const %s %s[%zu] = {\n", type, name, n);
    for (i = 0; i < n; i++)
        fprintf(f, "%d,%s", (int)v[i], (i % 16 == 15 || i + 1 == n) ? "\n" : "");
    fprintf(f, "};\n");
}

static void kd_header(FILE *h, const kd_set *b, const kd_set *bt, const kd_figs *f, int64_t acc_a,
                      int64_t acc_b)
{
    int s;
    fprintf(h, "/* generated by examples/firmware/gen_kws.c: do not edit, do not commit */\n"
               "#ifndef FW_KWS_H\n#define FW_KWS_H\n#include <stdint.h>\n");
    fprintf(h, "#define KWS_N_TENSORS %d\n#define KWS_N_WEIGHTS %d\n", (int)kd_n_t, (int)kd_total);
    fprintf(h, "#define KWS_N_SHOTS %d\n#define KWS_N_TEST %d\n", (int)b->n, (int)bt->n);
    fprintf(h,
            "/* pre-training on speaker A, %d steps of %d: held-out accuracy %lld/%d (speaker A), "
            "%lld/%d (speaker B) */\n",
            KD_PRE_STEPS, KD_PRE_BATCH, (long long)acc_a, KD_PRE_TEST, (long long)acc_b,
            (int)bt->n);
    fprintf(h, "/* the host's run of the same fine-tuning */\n");
    fprintf(h, "#define KWS_HOST_BEFORE %lld\n#define KWS_HOST_AFTER %lld\n", (long long)f->before,
            (long long)f->after);
    fprintf(h,
            "#define KWS_HOST_BODY_HASH UINT64_C(0x%016llx)\n#define KWS_HOST_ALL_HASH "
            "UINT64_C(0x%016llx)\n",
            (unsigned long long)f->body, (unsigned long long)f->all);
    fprintf(h, "#define KWS_HOST_LOSSES {");
    for (s = 0; s < KWS_STEPS; s++) fprintf(h, "%s%a", s ? ", " : "", f->loss[s]);
    fprintf(h, "}\n");
    fprintf(h, "extern const char *const kws_tensor_names[%d];\n", (int)kd_n_t);
    fprintf(h, "extern const int32_t kws_tensor_off[%d], kws_tensor_n[%d];\n", (int)kd_n_t,
            (int)kd_n_t);
    fprintf(h, "extern const float kws_weights[%d];\n", (int)kd_total);
    fprintf(h, "extern const float kws_shots_x[%d];\nextern const uint8_t kws_shots_y[%d];\n",
            (int)b->n * KWS_IN, (int)b->n);
    fprintf(h, "extern const float kws_test_x[%d];\nextern const uint8_t kws_test_y[%d];\n#endif\n",
            (int)bt->n * KWS_IN, (int)bt->n);
}

static int kd_write(const char *base, const kd_set *b, const kd_set *bt, const kd_figs *f,
                    int64_t acc_a, int64_t acc_b)
{
    char path[512];
    FILE *c, *h;
    int32_t i;
    int bad;
    snprintf(path, sizeof path, "%s.h", base);
    if (!(h = fopen(path, "w"))) {
        fprintf(stderr, "gen_kws: cannot write %s\n", path);
        return 1;
    }
    kd_header(h, b, bt, f, acc_a, acc_b);
    bad = fclose(h) != 0;
    snprintf(path, sizeof path, "%s.c", base);
    if (bad || !(c = fopen(path, "w"))) {
        fprintf(stderr, "gen_kws: cannot write %s\n", path);
        return 1;
    }
    fprintf(c, "/* generated by examples/firmware/gen_kws.c: do not edit, do not commit */\n"
               "#include \"fw_kws.h\"\n");
    fprintf(c, "const char *const kws_tensor_names[%d] = {\n", (int)kd_n_t);
    for (i = 0; i < kd_n_t; i++) fprintf(c, "    \"%s\",\n", kd_names[i]);
    fprintf(c, "};\n");
    kd_ints(c, "int32_t", "kws_tensor_off", kd_off, (size_t)kd_n_t);
    kd_ints(c, "int32_t", "kws_tensor_n", kd_n, (size_t)kd_n_t);
    kd_floats(c, "kws_weights", kd_w, (size_t)kd_total);
    kd_floats(c, "kws_shots_x", b->x, (size_t)b->n * KWS_IN);
    kd_ints(c, "uint8_t", "kws_shots_y", b->y, (size_t)b->n);
    kd_floats(c, "kws_test_x", bt->x, (size_t)bt->n * KWS_IN);
    kd_ints(c, "uint8_t", "kws_test_y", bt->y, (size_t)bt->n);
    if (fclose(c) != 0) {
        fprintf(stderr, "gen_kws: write error on %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static kd_figs f;
    kd_speaker spa, spb;
    kd_set a, at, b, bt;
    int64_t acc_a = 0, acc_b = 0;
    if (argc == 2 && !strcmp(argv[1], "--plan-args")) {
        printf("--model %s --input %dx%dx1 --splits %s --schedule 1f1b --batch-size %d "
               "--batches-to-accumulate %d --repeat-count 1 --optimizer momentum --runner coop\n",
               KWS_FINETUNE_TEXT, KWS_H, KWS_W, KWS_HEAD_ID, KWS_BATCH, KWS_ACCUM);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr,
                "usage: gen_kws --plan-args | gen_kws POOLS OUT (writes OUT.c and OUT.h)\n");
        return 2;
    }
#ifdef MNT_DS_CNN_LAYERS
    if (strcmp(KWS_PRETRAIN_TEXT, MNT_DS_CNN_LAYERS) != 0) {
        fprintf(stderr, "gen_kws: KWS_PRETRAIN_TEXT (kws_model.h) is not the trainer's ds-cnn "
                        "(MNT_DS_CNN_LAYERS, mnist_texts.h): make them the same network\n");
        return 1;
    }
#endif
    kd_speakers(&spa, &spb);
    if (kd_make(&a, &spa, 1, KD_PRE_TRAIN) || kd_make(&at, &spa, 2, KD_PRE_TEST) ||
        kd_make(&b, &spb, 3, KD_SHOTS) || kd_make(&bt, &spb, 4, KD_B_TEST))
        return 1;
    if (kd_pretrain(&a, &at, &bt, &acc_a, &acc_b) || kd_finetune(&b, &bt, &f) ||
        kd_check_pools(argv[1], &f) || kd_write(argv[2], &b, &bt, &f, acc_a, acc_b))
        return 1;
    printf("gen_kws: pre-trained on speaker A (held-out accuracy %lld/%d, speaker B %lld/%d); "
           "host fine-tuning on speaker B: %lld/%d before, %lld/%d after, loss %.4f -> %.4f, "
           "final weights FNV-1a %016llx\n",
           (long long)acc_a, KD_PRE_TEST, (long long)acc_b, KD_B_TEST, (long long)f.before,
           KD_B_TEST, (long long)f.after, KD_B_TEST, f.loss[0], f.loss[KWS_STEPS - 1],
           (unsigned long long)f.all);
    return 0;
}
