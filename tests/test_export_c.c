/* test_export_c.c - the library side of --export-c (examples/export_c.h), on a tiny
   emulator: what it refuses and the exact messages (an emulator not initialised, a
   weight that is NaN or infinite, a write that fails, names that are not C
   identifiers), the default names, and that a refusal writes nothing. The generated
   code itself is compiled and compared with ipup_predict by tests/test_export.sh. */
#define IPUPIPE_IMPLEMENTATION
#include "tiny_model.h"
#include "ttest.h"
#include "export_c.h"

IPUP_ALIGN64 static uint8_t g_ipu[2][1 << 16];
IPUP_ALIGN64 static uint8_t g_host[1 << 16];
static ipup_model_desc g_m;
static ipup_emu g_e;
static int g_writes;

static int count_write(void *user, const void *data, size_t len) {
    (void)user; (void)data; (void)len;
    g_writes++;
    return 0;
}
static int fail_write(void *user, const void *data, size_t len) {
    (void)user; (void)data; (void)len;
    g_writes++;
    return -1;
}

/* a 2-stage dense/relu model, initialised (weights from the seed) */
static void start(void) {
    ipup_config c;
    if (g_e.initialised) ipup_shutdown(&g_e);
    memset(&g_e, 0, sizeof g_e);
    tiny_model_or_exit(&g_m, 1, 1, 5, "dense4,relu,dense3,xent");
    c = tiny_config(&g_m, 2, 2, 4, 1, 9, IPUP_OPT_SGD, 0.1f, NULL, NULL);
    tiny_pools(&c, 2, g_ipu, NULL, sizeof g_ipu[0], g_host, sizeof g_host);
    if (ipup_init(&g_e, &c) != IPUP_OK) {
        printf("ipup_init: %s\n", ipup_last_error(&g_e));
        exit(1);
    }
}

TTEST(writes_a_header) {
    static char text[1 << 16];
    ipup_buf b = {text, sizeof text, 0};
    expc_info info;
    char msg[256];
    start();
    TT_EQ_INT(expc_write(&g_e, "tiny", "a test", ipup_buf_write, &b, &info, msg, sizeof msg), IPUP_OK);
    TT_STREQ(msg, "");
    TT_CHECK(ipup_buf_fits(&b));
    TT_EQ_INT(info.tensors, 4);
    TT_EQ_INT(info.floats, 5 * 4 + 4 + 4 * 3 + 3);
    TT_CHECK(strstr(text, "static inline void tiny_predict(int32_t n,") != NULL);
    TT_CHECK(strstr(text, "#define TINY_MODEL_TEXT \"dense4,relu,dense3,xent\"") != NULL);
    TT_CHECK(strstr(text, "ipup_dense_relu_fwd_f32(Bn, 5, 4, x, tiny_w0, tiny_b0, a);") != NULL);
    TT_CHECK(strstr(text, "#define TINY_BATCH 2 ") != NULL);
}

TTEST(not_initialised) {
    static ipup_emu zero;
    expc_info info;
    char msg[256];
    g_writes = 0;
    TT_EQ_INT(expc_write(&zero, "tiny", NULL, count_write, NULL, &info, msg, sizeof msg), IPUP_ERR_ARG);
    TT_STREQ(msg, "the emulator is not initialised (call ipup_init first)");
    TT_EQ_INT(expc_check(NULL, msg, sizeof msg), IPUP_ERR_ARG);
    TT_EQ_INT(g_writes, 0);
}

TTEST(non_finite_weight_refused) {
    ipup_tensor_info t;
    expc_info info;
    char msg[256];
    start();
    TT_EQ_INT(ipup_tensor_find(&g_e, "dense3.w", &t), IPUP_OK);
    t.data[5] = NAN;
    g_writes = 0;
    TT_EQ_INT(expc_write(&g_e, "tiny", NULL, count_write, NULL, &info, msg, sizeof msg), IPUP_ERR_NUMERIC);
    TT_STREQ(msg, "weight 5 of dense3.w is NaN: a model that diverged cannot be exported (lower the learning rate); "
                  "nothing was written");
    t.data[5] = -INFINITY;
    TT_EQ_INT(expc_write(&g_e, "tiny", NULL, count_write, NULL, &info, msg, sizeof msg), IPUP_ERR_NUMERIC);
    TT_CHECK(strstr(msg, "weight 5 of dense3.w is infinite") == msg);
    TT_EQ_INT(g_writes, 0);
}

TTEST(write_failure) {
    expc_info info;
    char msg[256];
    start();
    g_writes = 0;
    TT_EQ_INT(expc_write(&g_e, "tiny", NULL, fail_write, NULL, &info, msg, sizeof msg), IPUP_ERR_IO);
    TT_STREQ(msg, "writing the header failed");
    TT_EQ_INT(g_writes, 1); /* stops at the first failure */
}

TTEST(names) {
    char msg[256], out[EXPC_NAME_MAX + 1];
    TT_EQ_INT(expc_name_check("net_2", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(expc_name_check("2net", msg, sizeof msg), IPUP_ERR_ARG);
    TT_STREQ(msg, "the name '2net' must start with a letter or '_' (it prefixes C identifiers)");
    TT_EQ_INT(expc_name_check("a.b", msg, sizeof msg), IPUP_ERR_ARG);
    TT_STREQ(msg, "the name 'a.b' has '.'; use letters, digits and '_' (it prefixes C identifiers)");
    TT_EQ_INT(expc_name_check("", msg, sizeof msg), IPUP_ERR_ARG);
    TT_STREQ(msg, "the name '' must have 1 to 32 characters");
    TT_EQ_INT(expc_name_check(NULL, msg, sizeof msg), IPUP_ERR_ARG);
    expc_name_from_path("out/mlp-v2.h", out, sizeof out);
    TT_STREQ(out, "mlp_v2");
    expc_name_from_path("7.h", out, sizeof out);
    TT_STREQ(out, "m7");
    expc_name_from_path("dir/.h", out, sizeof out);
    TT_STREQ(out, "model");
    expc_name_from_path("abcdefghijabcdefghijabcdefghijabcdefghij.h", out, sizeof out);
    TT_EQ_INT(strlen(out), EXPC_NAME_MAX);
    TT_EQ_INT(expc_name_check(out, msg, sizeof msg), IPUP_OK);
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(writes_a_header), TT_CASE(not_initialised), TT_CASE(non_finite_weight_refused),
        TT_CASE(write_failure), TT_CASE(names),
    };
    int rc = TTEST_MAIN(cases, argc, argv);
    if (g_e.initialised) ipup_shutdown(&g_e);
    return rc;
}
