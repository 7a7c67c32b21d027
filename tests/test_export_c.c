/* test_export_c.c - the library side of --export-c (examples/common/export_c.h), on a tiny
   emulator: what it refuses and the exact messages (an emulator not initialised, a
   weight that is NaN or infinite, a write that fails, names that are not C
   identifiers, a loss layer that is not last, a layer kind it does not know), the
   default names, that a refusal writes nothing, and the header of an mse model. The generated
   code itself is compiled and compared with ipup_predict by tests/test_export.sh. */
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

/* a 2-stage dense/relu model under the loss text (xent or mse), initialised (weights
   from the seed) */
static void start_with(const char *text) {
    ipup_config c;
    if (g_e.initialised) ipup_shutdown(&g_e);
    memset(&g_e, 0, sizeof g_e);
    tiny_model_or_exit(&g_m, 1, 1, 5, text);
    c = tiny_config(&g_m, 2, 2, 4, 1, 9, IPUP_OPT_SGD, 0.1f, NULL, NULL);
    tiny_pools(&c, 2, g_ipu, NULL, sizeof g_ipu[0], g_host, sizeof g_host);
    if (ipup_init(&g_e, &c) != IPUP_OK) {
        printf("ipup_init: %s\n", ipup_last_error(&g_e));
        exit(1);
    }
}
static void start(void) { start_with("dense4,relu,dense3,xent"); }

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
    TT_CHECK(strstr(text, "#define TINY_LOSS \"xent\" ") != NULL);
    TT_CHECK(strstr(text, "float *logits, int32_t *cls, float *scratch) {") != NULL);
}

/* an mse (regression) model: same predict signature, outputs named as predictions, the
   forward stops before the loss as for xent */
TTEST(mse_header) {
    static char text[1 << 16];
    ipup_buf b = {text, sizeof text, 0};
    expc_info info;
    char msg[256];
    start_with("dense4,relu,dense3,mse");
    TT_EQ_INT(expc_check(&g_e, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(expc_write(&g_e, "reg", "a test", ipup_buf_write, &b, &info, msg, sizeof msg), IPUP_OK);
    TT_STREQ(msg, "");
    TT_CHECK(ipup_buf_fits(&b));
    TT_EQ_INT(info.tensors, 4);
    TT_CHECK(strstr(text, "#define REG_MODEL_TEXT \"dense4,relu,dense3,mse\"") != NULL);
    TT_CHECK(strstr(text, "#define REG_LOSS \"mse\" ") != NULL);
    TT_CHECK(strstr(text, "#define REG_OUT 3\n") != NULL);
    TT_CHECK(strstr(text, "output 3 predictions (the input of its mse loss) per sample") != NULL);
    TT_CHECK(strstr(text, "static inline void reg_predict(int32_t n, const float *x, float *out, int32_t *cls, "
                          "float *scratch) {") != NULL);
    TT_CHECK(strstr(text, "usually not wanted for regression: pass NULL") != NULL);
    TT_CHECK(strstr(text, "ipup_dense_fwd_f32(Bn, 4, 3, ") != NULL);
    TT_CHECK(strstr(text, "ipup_mse") == NULL && strstr(text, "ipup_gelu") == NULL);
    TT_CHECK(strstr(text, "/* layer 3 ") == NULL); /* no call, no comment for the loss layer */
    TT_CHECK(strstr(text, "float *logits") == NULL);
    TT_EQ_INT(info.scratch, 2 * 2 * 4 + 1); /* act floats 4: the loss's 3 inputs, not counted twice */
}

/* a loss layer anywhere but last, or a kind the export does not know: refused with the
   layer's index, name and kind. The emulator refuses such models itself, so the
   layers of an initialised one are changed behind its back. */
TTEST(layer_refused) {
    expc_info info;
    char msg[256];
    start_with("dense4,relu,dense3,mse");
    g_e.core.layers[1].info.kind = IPUP_LAYER_MSE;
    TT_EQ_INT(expc_check(&g_e, msg, sizeof msg), IPUP_ERR_UNSUPPORTED);
    TT_CHECK(strcmp(msg, "layer 1 'relu' (mse) cannot be exported: the C export knows every layer kind of the "
                         "model text under a softmax cross-entropy (xent), mean squared error (mse) or binary "
                         "cross-entropy (bce) last layer") == 0); /* TT_STREQ's message would not fit */
    g_e.core.layers[1].info.kind = IPUP_LAYER_SOFTMAX_XENT;
    TT_EQ_INT(expc_check(&g_e, msg, sizeof msg), IPUP_ERR_UNSUPPORTED);
    TT_CHECK(strstr(msg, "layer 1 'relu' (xent) cannot be exported") == msg);
    g_e.core.layers[1].info.kind = IPUP_LAYER_NONE;
    g_writes = 0;
    TT_EQ_INT(expc_write(&g_e, "tiny", NULL, count_write, NULL, &info, msg, sizeof msg), IPUP_ERR_UNSUPPORTED);
    TT_CHECK(strstr(msg, "layer 1 'relu' (none) cannot be exported") == msg);
    TT_EQ_INT(g_writes, 0);
    g_e.core.layers[1].info.kind = IPUP_LAYER_RELU;
    g_e.core.layers[3].info.kind = IPUP_LAYER_DENSE; /* the loss replaced: no loss last */
    TT_EQ_INT(expc_check(&g_e, msg, sizeof msg), IPUP_ERR_UNSUPPORTED);
    TT_CHECK(strstr(msg, "layer 3 'mse' (dense) cannot be exported") == msg);
    g_e.core.layers[3].info.kind = IPUP_LAYER_MSE;
    TT_EQ_INT(expc_check(&g_e, msg, sizeof msg), IPUP_OK);
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
    TT_STREQ(msg, "the name '2net' must start with a letter (it prefixes C identifiers)");
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

/* names whose generated identifiers clash with the library or the language: ipup_predict
   and IPUP_IN would be ipupipe.h's name spaces (ipup_, IPUP_, IPUPIPE_), a leading '_'
   gives reserved identifiers, a keyword is refused; the tools' startup check names the
   option to change */
TTEST(names_that_clash) {
    static const char *const refused[] = {"ipup", "IPUP", "Ipup", "ipup_net", "IPUP_NET", "ipupipe", "IPUPIPE_x",
                                          "iPuPiPe", "_net", "__x", "int", "while", "bool", "static_assert"};
    char msg[256], out[EXPC_NAME_MAX + 1];
    size_t k;
    for (k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        TT_EQ_INT(expc_name_check(refused[k], msg, sizeof msg), IPUP_ERR_ARG);
        TT_CHECK(msg[0] != 0);
    }
    TT_EQ_INT(expc_name_check("ipup", msg, sizeof msg), IPUP_ERR_ARG);
    TT_CHECK(strcmp(msg, "the name 'ipup' would generate names in ipupipe's own name spaces (ipup_, IPUP_, "
                         "IPUPIPE_), which clash in a program that includes ipupipe.h; give another") == 0);
    TT_EQ_INT(expc_name_check("int", msg, sizeof msg), IPUP_ERR_ARG);
    TT_STREQ(msg, "the name 'int' is a C keyword (it prefixes C identifiers); give another");
    TT_EQ_INT(expc_name_check("ipupx", msg, sizeof msg), IPUP_OK); /* IPUPX_IN: not IPUP_ */
    TT_EQ_INT(expc_name_check("ipupipe2", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(expc_name_check("integer", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(expc_name_choose("out/ipup.h", NULL, out, sizeof out, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CHECK(strncmp(msg, "--export-c out/ipup.h: the name 'ipup' would generate", 53) == 0);
    TT_CHECK(strstr(msg, "; give --export-name NAME") != NULL);
    TT_EQ_INT(expc_name_choose("out/ipup.h", "net", out, sizeof out, msg, sizeof msg), IPUP_OK);
    TT_STREQ(out, "net");
    TT_EQ_INT(expc_name_choose("x.h", "a\"b", out, sizeof out, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CHECK(strcmp(msg, "--export-name: the name 'a\\\"b' has '\\\"'; use letters, digits and '_' (it prefixes C "
                         "identifiers)") == 0);
    expc_name_from_path("_x.h", out, sizeof out);
    TT_STREQ(out, "m_x");
    expc_name_from_path("-x.h", out, sizeof out);
    TT_STREQ(out, "m_x");
}

/* a program's layer ids and the origin are text: "* /" in them cannot end a comment of
   the header, '"' cannot end a string (ex_escape.h) */
TTEST(hostile_text_escaped) {
    static char text[1 << 16];
    ipup_buf b = {text, sizeof text, 0};
    expc_info info;
    char msg[256];
    start();
    ipup_snprintf(g_e.core.model.layers[0].id, IPUP_ID_MAX, "d*/ #x /*\"");
    TT_EQ_INT(expc_write(&g_e, "tiny", "run */ #define INJECTED 1 /* of ?\?/", ipup_buf_write, &b, &info, msg, sizeof msg),
              IPUP_OK);
    TT_CHECK(strstr(text, "(written by run * / #define INJECTED 1 / * of ? ?/)") != NULL);
    TT_CHECK(strstr(text, "/* layer 0 d* / #x / *\" and its ReLU") != NULL);
    TT_CHECK(strstr(text, "\"d*/ #x /*\\\".w\", ") != NULL);
    TT_EQ_INT(info.tensors, 4); /* the '#' of the id is no branch suffix */
    TT_CHECK(strstr(text, "#define INJECTED") == NULL || strstr(text, "\n#define INJECTED") == NULL);
}

/* the four escapers of examples/common/ex_escape.h on the texts that would break their
   languages, and a cut that keeps escapes whole */
TTEST(escapers) {
    char out[128];
    TT_EQ_INT((int)ex_esc_c_comment("a*/b/*c", out, sizeof out), 9);
    TT_STREQ(out, "a* /b/ *c");
    ex_esc_c_comment("/x*", out, sizeof out);
    TT_STREQ(out, " /x* ");
    ex_esc_c_comment("p\n?\?/\\\x01\xc3\xa9", out, sizeof out);
    TT_STREQ(out, "p\\x0a? ?/\\x5c\\x01\\xc3\\xa9");
    ex_esc_c_string("a\"b\\c?\?/\n\x7f" "1", out, sizeof out);
    TT_STREQ(out, "a\\\"b\\\\c\\?\\?/\\012\\1771");
    ex_esc_xml("<a href='x'>&\"\x01\xc3\xa9\xff\xed\xa0\x80", out, sizeof out);
    TT_STREQ(out, "&lt;a href=&apos;x&apos;&gt;&amp;&quot;&#xFFFD;\xc3\xa9&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;");
    ex_esc_json("\"\\\n\t\x01\xe2\x82\xac\xc0\xaf", out, sizeof out);
    TT_STREQ(out, "\\\"\\\\\\n\\t\\u0001\xe2\x82\xac\\ufffd\\ufffd");
    TT_EQ_INT((int)ex_esc_json("\x01\x01\x01", out, 12), 9); /* "\u0001" + "..." */
    TT_STREQ(out, "\\u0001...");
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {
        TT_CASE(writes_a_header), TT_CASE(not_initialised), TT_CASE(non_finite_weight_refused),
        TT_CASE(write_failure), TT_CASE(names), TT_CASE(mse_header), TT_CASE(layer_refused),
        TT_CASE(names_that_clash), TT_CASE(hostile_text_escaped), TT_CASE(escapers),
    };
    int rc = TTEST_MAIN(cases, argc, argv);
    if (g_e.initialised) ipup_shutdown(&g_e);
    return rc;
}
