/* tests/two_tu.h - the work each translation unit of the two-TU link tests does with
 * ipupipe.h (tests/test_static2.c + tests/static2_b.c, tests/test_extern2.c +
 * tests/extern2_b.c). Include it after ipupipe.h; everything here is static, so each TU
 * gets its own copy and calls the library functions its own TU sees: with
 * IPUPIPE_STATIC that is the TU's private copy of the library, without it the one
 * extern definition of the program.
 *
 * two_tu_work() generates a 1F1B schedule table, runs a dense forward and a GELU on
 * fixed inputs, and trains a tiny two-stage emulator (cooperative runner) for two steps.
 * It records a digest of each result and the addresses of three library functions, so
 * the caller can check that the TUs computed the same bits and whether they share the
 * functions.
 */
#ifndef TWO_TU_H
#define TWO_TU_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*two_tu_dense_fn)(int B, int IN, int OUT, const float *x, const float *w,
                                const float *b, float *y);
typedef const char *(*two_tu_str_fn)(int code);
typedef int (*two_tu_init_fn)(ipup_emu *e, const ipup_config *cfg);

typedef struct two_tu_result {
    int sched_rc;              /* ipup_sched_generate */
    int32_t n_ops, steps;
    uint64_t ops_digest;       /* FNV-1a of the op array */
    float dense_y[6];          /* ipup_dense_fwd_f32 of 2x3 by 3x3, bias */
    uint64_t gelu_digest;      /* FNV-1a of ipup_gelu_fwd_f32 over 37 values */
    int emu_init_rc, emu_run_rc;
    int32_t emu_tensors;
    uint64_t emu_digest;       /* FNV-1a of every tensor after training */
    double emu_loss;           /* the run's mean loss */
    char emu_msg[160];         /* ipup_last_error on failure */
    const char *ok_str;        /* ipup_result_str(IPUP_OK) */
    two_tu_dense_fn dense;     /* &ipup_dense_fwd_f32 (ipupipe_kernels.h) */
    two_tu_str_fn result_str;  /* &ipup_result_str (ipupipe_sched.h) */
    two_tu_init_fn init;       /* &ipup_init (ipupipe.h) */
} two_tu_result;

static uint64_t two_tu_fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= c[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}
#define TWO_TU_FNV0 UINT64_C(1469598103934665603)

/* 16 inputs, label = the index of the largest of the first 4 */
static int two_tu_feed(void *user, const ipup_feed *f) {
    int32_t i, j, best, n = f->n;
    int64_t sample0 = f->sample0;
    float *x = f->x;
    int32_t *labels = f->labels;
    (void)user;
    if (f->row != 16) return -1;
    for (i = 0; i < n; i++) {
        float *xi = x + (size_t)i * 16u;
        for (j = 0; j < 16; j++)
            xi[j] = 2.0f * ipup_rng_uniform_f32(11, (uint64_t)(sample0 + i), (uint64_t)j) - 1.0f;
        best = 0;
        for (j = 1; j < 4; j++)
            if (xi[j] > xi[best]) best = j;
        labels[i] = best;
    }
    return 0;
}

static void two_tu_copy(char *dst, size_t cap, const char *src) { /* truncating, NUL-terminated */
    size_t i;
    for (i = 0; i + 1 < cap && src && src[i]; i++) dst[i] = src[i];
    dst[i] = '\0';
}

#define TWO_TU_POOL (256 * 1024)

static void two_tu_emulator(two_tu_result *r) {
    static ipup_emu emu; /* 53 KB: not on the stack */
    static ipup_model_desc model;
    static ipup_config cfg;
    IPUP_ALIGN64 static uint8_t ipu[2][TWO_TU_POOL], host[TWO_TU_POOL]; /* the order C++ needs */
    ipup_run_stats st;
    int32_t i;
    memset(&model, 0, sizeof model);
    memset(&cfg, 0, sizeof cfg);
    memset(&st, 0, sizeof st);
    model.in_h = 1; model.in_w = 1; model.in_c = 16;
    if (ipup_model_parse("dense8,relu,dense4,xent", &model, r->emu_msg, sizeof r->emu_msg) != IPUP_OK) {
        r->emu_init_rc = -1;
        return;
    }
    cfg.model = &model;
    cfg.stages = 2;
    cfg.schedule = IPUP_SCHED_1F1B;
    cfg.microbatch = 4; cfg.microbatches = 4; cfg.repeat = 2;
    cfg.seed = 5;
    cfg.opt.kind = IPUP_OPT_SGD; cfg.opt.lr = 0.1f;
    cfg.runner = IPUP_RUNNER_COOP;
    cfg.infeed = two_tu_feed;
    cfg.ipu[0].mem = ipu[0]; cfg.ipu[0].bytes = sizeof ipu[0];
    cfg.ipu[1].mem = ipu[1]; cfg.ipu[1].bytes = sizeof ipu[1];
    cfg.host.mem = host;     cfg.host.bytes = sizeof host;
    r->emu_init_rc = ipup_init(&emu, &cfg);
    if (r->emu_init_rc != IPUP_OK) {
        two_tu_copy(r->emu_msg, sizeof r->emu_msg, ipup_last_error(&emu));
        return;
    }
    r->emu_run_rc = ipup_run(&emu, &st);
    if (r->emu_run_rc != IPUP_OK) two_tu_copy(r->emu_msg, sizeof r->emu_msg, ipup_last_error(&emu));
    r->emu_loss = st.loss_mean;
    r->emu_tensors = ipup_tensor_count(&emu);
    r->emu_digest = TWO_TU_FNV0;
    for (i = 0; i < r->emu_tensors; i++) {
        ipup_tensor_info t;
        if (ipup_tensor_get(&emu, i, &t) != IPUP_OK) continue;
        r->emu_digest = two_tu_fnv(r->emu_digest, t.name, strlen(t.name));
        r->emu_digest = two_tu_fnv(r->emu_digest, t.data, (size_t)t.n * sizeof(float));
    }
    ipup_shutdown(&emu);
}

static void two_tu_work(two_tu_result *r) {
    static ipup_op ops[IPUP_SCHED_MAX_OPS(4, 8)];
    static const float x[6] = {1.0f, -2.0f, 0.5f, 3.0f, 0.25f, -1.0f};
    static const float w[9] = {0.5f, 1.0f, -1.0f, 2.0f, 0.0f, 0.25f, -0.5f, 1.5f, 1.0f};
    static const float b[3] = {0.125f, -0.25f, 1.0f};
    float g_in[37], g_out[37];
    ipup_sched_config sc;
    ipup_table t;
    char msg[256];
    int i;
    memset(r, 0, sizeof *r);
    memset(&sc, 0, sizeof sc);
    memset(&t, 0, sizeof t);
    sc.kind = IPUP_SCHED_1F1B;
    sc.stages = 4;
    sc.microbatches = 8;
    r->sched_rc = ipup_sched_generate(&sc, ops, IPUP_SCHED_MAX_OPS(4, 8), &t, msg, sizeof msg);
    r->n_ops = t.n_ops;
    r->steps = t.steps;
    r->ops_digest = two_tu_fnv(TWO_TU_FNV0, ops, (size_t)(t.n_ops > 0 ? t.n_ops : 0) * sizeof ops[0]);
    ipup_dense_fwd_f32(2, 3, 3, x, w, b, r->dense_y);
    for (i = 0; i < 37; i++) g_in[i] = (float)(i - 18) * 0.25f;
    ipup_gelu_fwd_f32(37, g_in, g_out);
    r->gelu_digest = two_tu_fnv(TWO_TU_FNV0, g_out, sizeof g_out);
    two_tu_emulator(r);
    r->ok_str = ipup_result_str(IPUP_OK);
    r->dense = ipup_dense_fwd_f32;
    r->result_str = ipup_result_str;
    r->init = ipup_init;
}

#endif /* TWO_TU_H */
