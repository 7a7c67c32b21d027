/* tests/test_eval_batch.c - the test micro-batch (PopXL tests with a micro-batch of 80 while
   training with 5; the trainer's --test-batch-size): an emulator of micro-batch 80 with the
   weights of one trained at micro-batch 5 predicts every sample with the same bits (logits
   and classes), so the test accuracy is the same; ipup_evaluate's correct count is the same
   and its loss sum (chunk mean x chunk size, summed in chunk order) the same up to that
   order of summation. Models: dense + GELU (the PopXL tutorial's kind) and conv + max-pool
   + dropout, 2 stages, both runners. */
#include "tiny_model.h" /* includes ipupipe.h */
#include "ttest.h"

#define N_TEST 403 /* not a multiple of 5 or 80: short last micro-batches */
#define POOL_BYTES (512 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[2][2][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[2][1 << 18];
static ipup_emu g_train, g_test;
static float g_x[N_TEST * 64], g_out[2][N_TEST * 8];
static int32_t g_labels[N_TEST], g_cls[2][N_TEST];
static int32_t g_in_n;

static void sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int64_t s = sample0 + i;
    int32_t j;
    for (j = 0; j < g_in_n; j++)
        x[j] = (float)sin(0.11 * (double)(s * 13 + j * 7)) + 0.2f * (float)(s % 4 == j % 4);
    *label = (int32_t)(s % 4);
}
static tiny_data g_data = {sample, 0};

static ipup_config config(const ipup_model_desc *md, int32_t B, int k, ipup_runner_kind runner) {
    ipup_config c = tiny_config(md, 2, B, 6, 2, 5, IPUP_OPT_ADAM, 0.01f, tiny_infeed, &g_data);
    tiny_pools(&c, 2, g_ipu[k], NULL, POOL_BYTES, g_host[k], sizeof g_host[k]);
    c.runner = runner;
    c.opt.eps = 1e-5f;
    return c;
}

/* train at micro-batch 5, copy the weights into a micro-batch-80 emulator, predict and
   evaluate N_TEST samples with both */
static void check(const char *text, int32_t h, int32_t w, int32_t ch, ipup_runner_kind runner) {
    ipup_model_desc md;
    ipup_config a, b;
    double loss[2] = {0.0, 0.0};
    int64_t correct[2] = {0, 0};
    int32_t i, n, k;
    tiny_model_or_exit(&md, h, w, ch, text);
    g_in_n = g_data.in_n = h * w * ch;
    a = config(&md, 5, 0, runner);
    b = config(&md, 80, 1, IPUP_RUNNER_COOP);
    TT_EQ_INT(ipup_init(&g_train, &a), IPUP_OK);
    TT_EQ_INT(ipup_init(&g_test, &b), IPUP_OK);
    for (k = 0; k < 3; k++) TT_EQ_INT(ipup_run(&g_train, NULL), IPUP_OK);
    n = ipup_tensor_count(&g_train);
    for (i = 0; i < n; i++) { /* the trained weights, by name, as the trainer copies them */
        ipup_tensor_info t, u;
        ipup_tensor_get(&g_train, i, &t);
        if (t.kind != IPUP_TENSOR_PARAM) continue;
        TT_EQ_INT(ipup_tensor_find(&g_test, t.name, &u), IPUP_OK);
        TT_EQ_INT(u.n, t.n);
        memcpy(u.data, t.data, (size_t)t.n * sizeof(float));
    }
    TT_EQ_INT(ipup_replicas_sync(&g_test), IPUP_OK);
    for (i = 0; i < N_TEST; i++) sample(100000, i, g_x + (size_t)i * (size_t)g_in_n, &g_labels[i]);
    TT_EQ_INT(ipup_predict(&g_train, N_TEST, g_x, g_out[0], g_cls[0]), IPUP_OK);
    TT_EQ_INT(ipup_predict(&g_test, N_TEST, g_x, g_out[1], g_cls[1]), IPUP_OK);
    TT_CHECK_MSG(memcmp(g_out[0], g_out[1],
                        (size_t)N_TEST * (size_t)ipup_output_width(&g_train) * sizeof(float)) == 0,
                 "%s: the logits at micro-batch 80 differ from those at 5", text);
    TT_CHECK_MSG(memcmp(g_cls[0], g_cls[1], sizeof g_cls[0]) == 0, "%s: the classes differ", text);
    TT_EQ_INT(ipup_evaluate(&g_train, N_TEST, g_x, g_labels, &loss[0], &correct[0]), IPUP_OK);
    TT_EQ_INT(ipup_evaluate(&g_test, N_TEST, g_x, g_labels, &loss[1], &correct[1]), IPUP_OK);
    TT_CHECK_MSG(correct[0] == correct[1], "%s: %lld correct at 5, %lld at 80", text,
                 (long long)correct[0], (long long)correct[1]);
    /* the loss sum: each chunk's mean (a float) times its size, summed in chunk order;
       other chunks, other roundings: equal to a few float ulps of the sum */
    TT_NEAR(loss[0], loss[1], 1e-5 * fabs(loss[0]) + 1e-6);
    printf("    %-40s runner %d: %lld/%d correct at micro-batch 5 and 80; loss sums %.9g and "
           "%.9g\n", text, (int)runner, (long long)correct[0], N_TEST, loss[0], loss[1]);
    ipup_shutdown(&g_train);
    ipup_shutdown(&g_test);
}

TTEST(test_batch_80_same_predictions_as_5) {
    check("dense16,gelu,dense16,gelu,dense4,xent", 1, 1, 12, IPUP_RUNNER_COOP);
    check("dense16,gelu,dense16,gelu,dense4,xent", 1, 1, 12, IPUP_RUNNER_THREADS);
    check("conv4,relu,maxpool2,flatten,dropout0.25,dense4,xent", 6, 6, 1, IPUP_RUNNER_COOP);
}

static const ttest_case cases[] = {TT_CASE(test_batch_80_same_predictions_as_5)};

int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
