/* test_mnist_models.c - the models of examples/mnist_models.h and an independent
 * check of the emulator: the trainer's emulator configuration (built as
 * mnist-train.c builds it: ReLU/GELU as layers of their own, the tutorial's split,
 * grouped schedule) gives after a few steps the same weight BITS as the plain
 * single-device reference loop of mnist_models.h, written separately from the
 * emulator (one micro-batch through all layers, gradients added in micro-batch
 * order, one update per step). Also: parameter counts agree with the emulator's. */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"

#include <stdlib.h>

#include "mnist_models.h"
#include "ttest.h"

#define TM_N 512 /* synthetic samples */

static float tm_x[TM_N * 784];
static int32_t tm_y[TM_N];

static void tm_data(void) {
    int i, j;
    for (i = 0; i < TM_N; i++) {
        tm_y[i] = i % 10;
        for (j = 0; j < 784; j++) {
            int row = j / 28, k = i % 10;
            tm_x[i * 784 + j] = (row >= 2 * k + 3 && row < 2 * k + 6) ? 0.8f : ipup_rng_uniform_f32(5, (uint64_t)i, (uint64_t)j) * 0.2f;
        }
    }
}

static int tm_infeed(void *user, int64_t step, int32_t replica, int32_t mb, int64_t sample0, int32_t n, float *x,
                     int32_t *labels) {
    (void)user;
    (void)step;
    (void)replica;
    (void)mb;
    if (sample0 < 0 || sample0 + n > TM_N) return -1;
    memcpy(x, tm_x + sample0 * 784, (size_t)n * 784 * sizeof(float));
    memcpy(labels, tm_y + sample0, (size_t)n * sizeof(int32_t));
    return 0;
}

/* The emulator model of spec m, as examples/mnist-train.c builds it. */
static void tm_desc(const mnist_model_spec *m, ipup_model_desc *d, int *emu_first) {
    int i;
    memset(d, 0, sizeof *d);
    d->in_h = 28;
    d->in_w = 28;
    d->in_c = 1;
    for (i = 0; i < m->n_layers; i++) {
        const mnist_layer_spec *L = &m->layers[i];
        ipup_layer *e = &d->layers[d->n_layers++];
        emu_first[i] = d->n_layers - 1;
        snprintf(e->id, sizeof e->id, "%s", L->id);
        e->kind = L->kind == MNIST_L_FLATTEN   ? IPUP_LAYER_FLATTEN
                  : L->kind == MNIST_L_DENSE   ? IPUP_LAYER_DENSE
                  : L->kind == MNIST_L_CONV3X3 ? IPUP_LAYER_CONV3X3
                  : L->kind == MNIST_L_MAXPOOL2 ? IPUP_LAYER_MAXPOOL2
                  : L->kind == MNIST_L_DROPOUT ? IPUP_LAYER_DROPOUT
                                               : IPUP_LAYER_SOFTMAX_XENT;
        e->units = L->out;
        e->rate = L->p;
        if (L->act != MNIST_ACT_NONE) {
            e = &d->layers[d->n_layers++];
            e->kind = L->act == MNIST_ACT_RELU ? IPUP_LAYER_RELU : IPUP_LAYER_GELU;
            snprintf(e->id, sizeof e->id, "%.15s.act", L->id);
        }
    }
    emu_first[m->n_layers] = d->n_layers;
}

/* Trains `steps` steps on the emulator and on the reference loop from the same
 * initial weights; returns the number of parameters whose bits differ (-1: setup). */
static long tm_compare(const char *model, int optimizer, int B, int M, int steps, ipup_runner_kind runner,
                       long long *params_out) {
    const mnist_model_spec *m = mnist_model_find(model);
    static ipup_model_desc d;
    static ipup_emu e;
    ipup_config cfg;
    ipup_plan plan;
    int emu_first[MNIST_MAX_LAYERS + 1], i, s, rc;
    int32_t split[1];
    uint8_t *mem;
    size_t total = 0, off = 0, host;
    float *arena;
    mnist_ref r;
    long diff = 0;
    if (!m) return -1;
    tm_desc(m, &d, emu_first);
    for (i = 0; i < m->n_layers; i++)
        if (strcmp(m->layers[i].id, m->splits) == 0) split[0] = emu_first[i];
    memset(&cfg, 0, sizeof cfg);
    cfg.model = &d;
    cfg.stages = 2;
    cfg.split = split;
    cfg.schedule = IPUP_SCHED_GROUPED;
    cfg.microbatch = B;
    cfg.microbatches = M;
    cfg.repeat = steps;
    cfg.opt.kind = optimizer == MNIST_OPT_SGD ? IPUP_OPT_SGD : optimizer == MNIST_OPT_MOMENTUM ? IPUP_OPT_MOMENTUM : IPUP_OPT_ADAM;
    cfg.opt.lr = optimizer == MNIST_OPT_ADAM ? 0.001f : 0.05f;
    cfg.opt.momentum = 0.9f;
    cfg.opt.beta1 = 0.9f;
    cfg.opt.beta2 = 0.999f;
    cfg.opt.eps = 1e-8f;
    cfg.seed = 3;
    cfg.runner = runner;
    cfg.infeed = tm_infeed;
    host = ipup_host_bytes(&cfg);
    mem = (uint8_t *)aligned_alloc(64, (host + 63) / 64 * 64 + 64);
    cfg.host.mem = mem;
    cfg.host.bytes = host;
    if (ipup_plan_config(&e, &cfg, &plan) != IPUP_OK) {
        printf("    plan: %s\n", ipup_last_error(&e));
        free(mem);
        return -1;
    }
    *params_out = plan.params;
    for (i = 0; i < plan.ipus; i++) total += (plan.ipu_bytes[i % plan.devices] + 63) / 64 * 64;
    {
        uint8_t *pools = (uint8_t *)aligned_alloc(64, total + 64);
        for (i = 0; i < plan.ipus; i++) {
            cfg.ipu[i].mem = pools + off;
            cfg.ipu[i].bytes = plan.ipu_bytes[i % plan.devices];
            off += (plan.ipu_bytes[i % plan.devices] + 63) / 64 * 64;
        }
        rc = ipup_init(&e, &cfg);
        if (rc != IPUP_OK) {
            printf("    init: %s\n", ipup_last_error(&e));
            free(pools);
            free(mem);
            return -1;
        }
        /* reference loop from the emulator's initial weights */
        arena = (float *)malloc((size_t)mnist_ref_floats(m, B) * sizeof(float));
        mnist_ref_init(&r, m, B, cfg.seed, arena);
        for (i = 0; i < m->n_layers; i++) {
            char name[64];
            ipup_tensor_info ti;
            if (!r.g[i].nw) continue;
            snprintf(name, sizeof name, "%s.w", m->layers[i].id);
            if (ipup_tensor_find(&e, name, &ti) != IPUP_OK || ti.n != r.g[i].nw) diff = -1;
            else memcpy(r.params + r.g[i].w_off, ti.data, (size_t)ti.n * sizeof(float));
            snprintf(name, sizeof name, "%s.b", m->layers[i].id);
            if (ipup_tensor_find(&e, name, &ti) != IPUP_OK || ti.n != r.g[i].nb) diff = -1;
            else memcpy(r.params + r.g[i].b_off, ti.data, (size_t)ti.n * sizeof(float));
        }
        if (diff == 0) {
            if (ipup_run(&e, NULL) != IPUP_OK) diff = -1;
            for (s = 0; s < steps; s++) {
                int mb;
                for (mb = 0; mb < M; mb++) {
                    int base = (s * M + mb) * B;
                    mnist_ref_train_micro(&r, tm_x + (size_t)base * 784, tm_y + base, (uint64_t)base, NULL);
                }
                mnist_ref_update(&r, optimizer, cfg.opt.lr, 0.9f, 0.9f, 0.999f, 1e-8f, M);
            }
            for (i = 0; i < m->n_layers && diff >= 0; i++) {
                char name[64];
                ipup_tensor_info ti;
                int k;
                if (!r.g[i].nw) continue;
                snprintf(name, sizeof name, "%s.w", m->layers[i].id);
                ipup_tensor_find(&e, name, &ti);
                for (k = 0; k < ti.n; k++) diff += memcmp(&ti.data[k], &r.params[r.g[i].w_off + k], 4) != 0;
                snprintf(name, sizeof name, "%s.b", m->layers[i].id);
                ipup_tensor_find(&e, name, &ti);
                for (k = 0; k < ti.n; k++) diff += memcmp(&ti.data[k], &r.params[r.g[i].b_off + k], 4) != 0;
            }
        }
        ipup_shutdown(&e);
        free(arena);
        free(pools);
    }
    free(mem);
    return diff;
}

static int tm_slow(void) {
    const char *s = getenv("IPUPIPE_TEST_SLOW");
    return s && *s && strcmp(s, "0") != 0;
}

TTEST(geometry_and_params) {
    mnist_geom g[MNIST_MAX_LAYERS];
    TT_EQ_INT(mnist_model_geometry(mnist_model_find("mlp"), g), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10);
    TT_EQ_INT(mnist_model_geometry(mnist_model_find("cnn"), g), 9 * 32 + 32 + 9 * 32 * 64 + 64 + 1600 * 10 + 10);
    TT_EQ_INT(g[3].out_size, 5 * 5 * 64); /* pool2 */
    TT_EQ_INT(mnist_model_geometry(mnist_model_find("mlp-gelu"), g), 784 * 512 + 512 + 2 * (512 * 512 + 512) + 5120 + 10);
    TT_CHECK(mnist_model_find("resnet") == NULL);
}

TTEST(emulator_equals_reference_loop_mlp) {
    long long params = 0;
    int steps = tm_slow() ? 1 : 3;
    int M = tm_slow() ? 2 : 4;
    TT_EQ_INT(tm_compare("mlp", MNIST_OPT_SGD, 8, M, steps, IPUP_RUNNER_COOP, &params), 0);
    TT_EQ_INT(params, 244522);
    TT_EQ_INT(tm_compare("mlp", MNIST_OPT_MOMENTUM, 8, M, steps, IPUP_RUNNER_THREADS, &params), 0);
}

TTEST(emulator_equals_reference_loop_mlp_gelu_adam) {
    long long params = 0;
    TT_EQ_INT(tm_compare("mlp-gelu", MNIST_OPT_ADAM, 5, tm_slow() ? 2 : 6, tm_slow() ? 1 : 2, IPUP_RUNNER_COOP, &params), 0);
    TT_EQ_INT(params, 932362);
}

static const ttest_case cases[] = {
    TT_CASE(geometry_and_params),
    TT_CASE(emulator_equals_reference_loop_mlp),
    TT_CASE(emulator_equals_reference_loop_mlp_gelu_adam),
};

int main(int argc, char **argv) {
    tm_data();
    return TTEST_MAIN(cases, argc, argv);
}
