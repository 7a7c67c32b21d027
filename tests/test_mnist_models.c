/* test_mnist_models.c - the models of examples/mnist/mnist_models.h and an independent
 * check of the emulator: the trainer's emulator model (mnist_model_desc: ReLU/GELU
 * as layers of their own) with the tutorial's split and the grouped schedule gives
 * after a few steps the same weight BITS as the plain
 * single-device reference loop of mnist_models.h, written separately from the
 * emulator (one micro-batch through all layers, gradients added in micro-batch
 * order, one update per step). Also: parameter counts agree with the emulator's. */
#define _POSIX_C_SOURCE 200809L
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

static int tm_infeed(void *user, const ipup_feed *f) {
    (void)user;
    if (f->sample0 < 0 || f->sample0 + f->n > TM_N || f->row != 784) return -1;
    memcpy(f->x, tm_x + f->sample0 * 784, (size_t)f->n * 784 * sizeof(float));
    memcpy(f->labels, tm_y + f->sample0, (size_t)f->n * sizeof(int32_t));
    return 0;
}

/* Trains `steps` steps on the emulator and on the reference loop from the same
 * initial weights; returns the number of parameters whose bits differ (-1: setup). */
static long tm_compare(const char *model, ipup_optimizer_kind optimizer, int B, int M, int steps, ipup_runner_kind runner,
                       long long *params_out) {
    const mnist_model_spec *m = mnist_model_find(model);
    static ipup_model_desc d;
    static ipup_emu e;
    ipup_config cfg;
    ipup_plan plan;
    int l, i, s, rc;
    int32_t split[1];
    uint8_t *mem;
    size_t total = 0, off = 0, host;
    float *arena;
    mnist_ref r;
    long diff = 0;
    if (!m || mnist_model_desc(m, &d, NULL, 0) != IPUP_OK) return -1;
    split[0] = mnist_model_find_layer(&d, m->splits);
    memset(&cfg, 0, sizeof cfg);
    cfg.model = &d;
    cfg.stages = 2;
    cfg.split = split;
    cfg.schedule = IPUP_SCHED_GROUPED;
    cfg.microbatch = B;
    cfg.microbatches = M;
    cfg.repeat = steps;
    cfg.opt.kind = optimizer;
    cfg.opt.lr = optimizer == IPUP_OPT_ADAM ? 0.001f : 0.05f;
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
        arena = (float *)malloc((size_t)mnist_ref_floats(&d, B) * sizeof(float));
        if (mnist_ref_init(&r, &d, B, cfg.seed, arena) != IPUP_OK) diff = -1;
        for (l = 0; l < d.n_layers && diff == 0; l++) {
            char name[64];
            ipup_tensor_info ti;
            if (!r.info[l].n_w) continue;
            snprintf(name, sizeof name, "%s.w", d.layers[l].id);
            if (ipup_tensor_find(&e, name, &ti) != IPUP_OK || ti.n != r.info[l].n_w) diff = -1;
            else memcpy(r.params + r.w_off[l], ti.data, (size_t)ti.n * sizeof(float));
            snprintf(name, sizeof name, "%s.b", d.layers[l].id);
            if (ipup_tensor_find(&e, name, &ti) != IPUP_OK || ti.n != r.info[l].n_b) diff = -1;
            else memcpy(r.params + r.b_off[l], ti.data, (size_t)ti.n * sizeof(float));
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
            for (l = 0; l < d.n_layers && diff >= 0; l++) {
                char name[64];
                ipup_tensor_info ti;
                int k;
                if (!r.info[l].n_w) continue;
                snprintf(name, sizeof name, "%s.w", d.layers[l].id);
                ipup_tensor_find(&e, name, &ti);
                for (k = 0; k < ti.n; k++) diff += memcmp(&ti.data[k], &r.params[r.w_off[l] + k], 4) != 0;
                snprintf(name, sizeof name, "%s.b", d.layers[l].id);
                ipup_tensor_find(&e, name, &ti);
                for (k = 0; k < ti.n; k++) diff += memcmp(&ti.data[k], &r.params[r.b_off[l] + k], 4) != 0;
            }
        }
        ipup_shutdown(&e);
        free(arena);
        free(pools);
    }
    free(mem);
    return diff;
}

/* The desc of each model, built by ipup_model_parse: layers, ids, shapes and
 * parameter counts (ipup_model_info), and the tutorial's layers it groups. */
static ipup_model_desc tm_d;
static long long tm_params(const char *model) {
    if (mnist_model_desc(mnist_model_find(model), &tm_d, NULL, 0) != IPUP_OK) return -1;
    return mnist_model_params(&tm_d);
}

TTEST(geometry_and_params) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    int32_t first[IPUP_MAX_LAYERS + 1];
    int l;
    TT_EQ_INT(tm_params("mlp"), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10);
    TT_EQ_INT(tm_d.n_layers, 11);
    TT_STREQ(tm_d.layers[2].id, "dense256.relu");
    TT_EQ_INT(tm_d.layers[2].kind, IPUP_LAYER_RELU);
    TT_STREQ(tm_d.layers[9].id, "logits");
    TT_EQ_INT(tm_d.layers[9].units, 10);
    TT_STREQ(tm_d.layers[10].id, "cel");
    TT_EQ_INT(mnist_model_layers(&tm_d, first), 7);
    TT_EQ_INT(first[1], 1);
    TT_EQ_INT(first[2], 3);
    TT_EQ_INT(first[7], 11);
    TT_EQ_INT(mnist_model_find_layer(&tm_d, "dense32"), 7);
    TT_EQ_INT(tm_params("cnn"), 9 * 32 + 32 + 9 * 32 * 64 + 64 + 1600 * 10 + 10);
    TT_EQ_INT(ipup_model_info(&tm_d, info, IPUP_MAX_LAYERS, NULL, 0), IPUP_OK);
    l = mnist_model_find_layer(&tm_d, "pool2");
    TT_EQ_INT(l, 5);
    TT_EQ_INT(info[l].out_n, 5 * 5 * 64);
    TT_CHECK(tm_d.layers[mnist_model_find_layer(&tm_d, "dropout")].rate == 0.5f);
    TT_EQ_INT(mnist_model_layers(&tm_d, first), 8);
    TT_EQ_INT(tm_params("mlp-gelu"), 784 * 512 + 512 + 2 * (512 * 512 + 512) + 5120 + 10);
    TT_STREQ(tm_d.layers[2].id, "fc1.gelu");
    TT_EQ_INT(mnist_model_layers(&tm_d, first), 6);
    TT_CHECK(mnist_model_find("resnet") == NULL);
}

TTEST(emulator_equals_reference_loop_mlp) {
    long long params = 0;
    int steps = ttest_slow() ? 1 : 3;
    int M = ttest_slow() ? 2 : 4;
    TT_EQ_INT(tm_compare("mlp", IPUP_OPT_SGD, 8, M, steps, IPUP_RUNNER_COOP, &params), 0);
    TT_EQ_INT(params, 244522);
    TT_EQ_INT(tm_compare("mlp", IPUP_OPT_MOMENTUM, 8, M, steps, IPUP_RUNNER_THREADS, &params), 0);
}

TTEST(emulator_equals_reference_loop_mlp_gelu_adam) {
    long long params = 0;
    TT_EQ_INT(tm_compare("mlp-gelu", IPUP_OPT_ADAM, 5, ttest_slow() ? 2 : 6, ttest_slow() ? 1 : 2, IPUP_RUNNER_COOP, &params), 0);
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
