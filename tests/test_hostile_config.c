/* test_hostile_config.c - hostile configurations of the emulator (ipupipe.h) at the API
 * level: M = 0 means the default and M < 0 is refused, S above the
 * compiled maximum, splits naming no layer or leaving a stage empty, more stages than
 * IPUs allow, pools one byte too small, replicas x stages beyond IPUP_MAX_IPUS, and a
 * learning rate (or momentum, Adam beta, eps) that is NaN, infinite or negative.
 * Each must be refused by ipup_plan_config and ipup_init with the exact code and a
 * message naming the field and the fix; a refused ipup_init must leave the pools
 * unwritten. Also: a NaN loss stops a run with the step and the stage named and the
 * weights of the previous step kept (through the learning rate, not the data).
 */
#include "ipupipe.h"
#include "ttest.h"
#include "tiny_model.h"
#include "mlp_fixture.h"

#include <math.h>

#define HC_POOL (256 * 1024)
IPUP_ALIGN64 static uint8_t hc_ipu[IPUP_MAX_IPUS][HC_POOL];
IPUP_ALIGN64 static uint8_t hc_host[1 << 20];
static ipup_emu hc_emu;
static ipup_model_desc hc_model;

/* mlp_fixture.h's run (3 stages, micro-batches of 2, 4 a step), 1 step a run */
static ipup_config hc_cfg(void) { return mlp_fixture_config(&hc_model, 0, hc_ipu, HC_POOL, hc_host, sizeof hc_host); }

/* plan and init must both refuse with code; the message must contain words */
#define REFUSED(c, code, words)                                                                           \
    do {                                                                                                  \
        ipup_plan plan_;                                                                                  \
        int r_;                                                                                           \
        r_ = ipup_plan_config(&hc_emu, &(c), &plan_);                                                     \
        TT_EQ_INT(r_, (code));                                                                            \
        TT_CONTAINS(ipup_last_error(&hc_emu), (words));                                                   \
        memset(hc_ipu[0], 0xA5, 256);                                                                     \
        r_ = ipup_init(&hc_emu, &(c));                                                                    \
        TT_EQ_INT(r_, (code));                                                                            \
        TT_CONTAINS(ipup_last_error(&hc_emu), (words));                                                   \
        if (r_ == IPUP_OK) ipup_shutdown(&hc_emu);                                                        \
    } while (0)

TTEST(good_config_runs) {
    ipup_config c = hc_cfg();
    TT_EQ_INT(ipup_init(&hc_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run(&hc_emu, NULL), IPUP_OK);
    ipup_shutdown(&hc_emu);
}

TTEST(microbatches_zero_is_default_negative_refused) {
    ipup_config c = hc_cfg();
    ipup_plan p;
    c.microbatches = 0; /* documented: 0 means 1 */
    TT_EQ_INT(ipup_plan_config(&hc_emu, &c, &p), IPUP_OK);
    c.microbatches = -3;
    REFUSED(c, IPUP_ERR_CONFIG, "microbatches (-3)");
    c = hc_cfg();
    c.microbatch = -1;
    REFUSED(c, IPUP_ERR_CONFIG, "must be >= 1");
    c = hc_cfg();
    c.replicas = -2;
    REFUSED(c, IPUP_ERR_CONFIG, "replicas (-2)");
    c = hc_cfg();
    c.microbatch = 1 << 20;
    c.microbatches = 1 << 20;
    REFUSED(c, IPUP_ERR_CONFIG, "too large");
}

TTEST(stages_above_the_maximum) {
    ipup_config c = hc_cfg();
    c.stages = 7; /* 6 layers */
    REFUSED(c, IPUP_ERR_CONFIG, "7 stages but the model has only 6 layers");
    c.stages = IPUP_MAX_LAYERS + 1;
    REFUSED(c, IPUP_ERR_CONFIG, "stages");
    c.stages = -1;
    REFUSED(c, IPUP_ERR_CONFIG, "stages (-1)");
}

TTEST(splits_naming_no_layer_or_leaving_a_stage_empty) {
    ipup_config c = hc_cfg();
    int32_t out_of_range[2] = {2, 6}, empty[2] = {2, 2}, first[2] = {0, 3}, descending[2] = {4, 2};
    c.split = out_of_range;
    REFUSED(c, IPUP_ERR_CONFIG, "split[1] = 6");
    c.split = empty;
    REFUSED(c, IPUP_ERR_CONFIG, "stage 1 would be empty");
    c.split = first;
    REFUSED(c, IPUP_ERR_CONFIG, "stage 0 would be empty");
    c.split = descending;
    REFUSED(c, IPUP_ERR_CONFIG, "strictly increasing");
}

TTEST(more_stages_than_ipus_allow) {
    ipup_config c = hc_cfg();
    static const int16_t map_far[3] = {0, 1, IPUP_MAX_DEVICES}, map_neg[3] = {0, -1, 1};
    c.devices = 2;
    c.stage_device = map_far;
    REFUSED(c, IPUP_ERR_CONFIG, "IPU");
    c.stage_device = map_neg;
    REFUSED(c, IPUP_ERR_CONFIG, "IPU");
    c.stage_device = NULL;
    c.devices = IPUP_MAX_DEVICES + 1;
    REFUSED(c, IPUP_ERR_CONFIG, "IPU");
}

TTEST(replicas_times_stages_beyond_the_ipus) {
    ipup_config c = hc_cfg();
    c.stages = 6;
    c.replicas = IPUP_MAX_REPLICAS; /* 8 x 6 = 48 > 32 */
    REFUSED(c, IPUP_ERR_CONFIG, "IPUP_MAX_IPUS");
    c.replicas = IPUP_MAX_REPLICAS + 1;
    REFUSED(c, IPUP_ERR_CONFIG, "IPUP_MAX_REPLICAS");
}

TTEST(pool_one_byte_too_small) {
    ipup_config c = hc_cfg();
    ipup_plan p;
    int d;
    TT_EQ_INT(ipup_plan_config(&hc_emu, &c, &p), IPUP_OK);
    for (d = 0; d < p.devices; d++) c.ipu[d].bytes = p.ipu_bytes[d];
    TT_EQ_INT(ipup_init(&hc_emu, &c), IPUP_OK); /* exactly the plan: fits */
    ipup_shutdown(&hc_emu);
    c.ipu[1].bytes = p.ipu_bytes[1] - 1;
    TT_EQ_INT(ipup_init(&hc_emu, &c), IPUP_ERR_OOM);
    TT_CONTAINS(ipup_last_error(&hc_emu), "IPU1");
    TT_CONTAINS(ipup_last_error(&hc_emu), "the pool has");
    c.ipu[1].bytes = p.ipu_bytes[1];
    c.host.bytes = ipup_host_bytes(&c) - 1;
    TT_EQ_INT(ipup_init(&hc_emu, &c), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&hc_emu), "host pool too small");
    c.host.bytes = sizeof hc_host;
    c.ipu[2].mem = NULL;
    TT_EQ_INT(ipup_init(&hc_emu, &c), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&hc_emu), "cfg.ipu[2]");
}

/* 0 means the default; NaN, infinity and negative values are mistakes, not defaults */
TTEST(learning_rate_nan_inf_negative) {
    ipup_config c = hc_cfg();
    c.opt.lr = NAN;
    REFUSED(c, IPUP_ERR_CONFIG, "learning rate");
    c.opt.lr = INFINITY;
    REFUSED(c, IPUP_ERR_CONFIG, "learning rate");
    c.opt.lr = -0.1f;
    REFUSED(c, IPUP_ERR_CONFIG, "learning rate");
    c = hc_cfg();
    c.opt.kind = IPUP_OPT_MOMENTUM;
    c.opt.momentum = NAN;
    REFUSED(c, IPUP_ERR_CONFIG, "momentum");
    c = hc_cfg();
    c.opt.kind = IPUP_OPT_ADAM;
    c.opt.beta2 = 1.5f;
    REFUSED(c, IPUP_ERR_CONFIG, "beta2");
    c.opt.beta2 = 0.0f;
    c.opt.eps = -1e-8f;
    REFUSED(c, IPUP_ERR_CONFIG, "eps");
}

/* a loss that overflows to inf/NaN (learning rate 1e30: the weights grow to ~1e28, the
   next forward overflows): the run stops, names step and stage, and the weights stay
   those of the last good step */
TTEST(nan_loss_stops_and_keeps_last_good_weights) {
    ipup_config c = hc_cfg();
    static float before[4096];
    ipup_tensor_info t;
    int rc = IPUP_OK, k;
    int64_t step_before = 0;
    c.opt.lr = 1e30f;
    TT_EQ_INT(ipup_init(&hc_emu, &c), IPUP_OK);
    for (k = 0; k < 50 && rc == IPUP_OK; k++) {
        TT_EQ_INT(ipup_tensor_get(&hc_emu, 0, &t), IPUP_OK);
        memcpy(before, t.data, (size_t)t.n * sizeof(float));
        step_before = ipup_get_step(&hc_emu);
        rc = ipup_run(&hc_emu, NULL);
    }
    TT_EQ_INT(rc, IPUP_ERR_NUMERIC);
    TT_CONTAINS(ipup_last_error(&hc_emu), "NaN or infinite");
    TT_CONTAINS(ipup_last_error(&hc_emu), ", stage ");
    {
        char want[32];
        snprintf(want, sizeof want, "step %lld", (long long)step_before);
        TT_CONTAINS(ipup_last_error(&hc_emu), want);
    }
    TT_EQ_INT(ipup_get_step(&hc_emu), step_before);
    TT_EQ_INT(ipup_tensor_get(&hc_emu, 0, &t), IPUP_OK);
    TT_CHECK(memcmp(before, t.data, (size_t)t.n * sizeof(float)) == 0);
    for (k = 0; k < t.n; k++)
        if (!isfinite(t.data[k])) break;
    TT_CHECK_MSG(k == t.n, "a weight of the last good step is not finite");
    ipup_shutdown(&hc_emu);
}

TTEST(model_text_hostile) {
    ipup_model_desc m;
    char msg[512];
    memset(&m, 0, sizeof m);
    TT_EQ_INT(ipup_model_parse("dense10,bogus,xent", &m, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "bogus");
    /* an empty model: refused by the parser, or at the latest by ipup_init */
    msg[0] = 0;
    if (ipup_model_parse("", &m, msg, sizeof msg) == IPUP_OK) {
        ipup_config c = hc_cfg();
        c.model = &m;
        c.stages = 1;
        m.in_h = m.in_w = 1;
        m.in_c = 12;
        TT_CHECK(ipup_init(&hc_emu, &c) < 0);
        TT_CHECK(ipup_last_error(&hc_emu)[0] != 0);
    } else {
        TT_CHECK(msg[0] != 0);
    }
    TT_CHECK(ipup_model_parse("dense-5,xent", &m, msg, sizeof msg) < 0);
    TT_CHECK(ipup_model_parse("dense99999999999,xent", &m, msg, sizeof msg) < 0);
    TT_CHECK(ipup_model_parse("dropout1.5,dense4,xent", &m, msg, sizeof msg) < 0);
    TT_CHECK(ipup_model_parse("dropoutnan,dense4,xent", &m, msg, sizeof msg) < 0);
    {
        char many[5 * (IPUP_MAX_LAYERS + 1) + 8]; /* "relu," x (max + 1) + "xent" */
        int i;
        many[0] = 0;
        for (i = 0; i < IPUP_MAX_LAYERS + 1; i++) strcat(many, "relu,");
        strcat(many, "xent");
        TT_CHECK(ipup_model_parse(many, &m, msg, sizeof msg) < 0);
        TT_CHECK(msg[0] != 0);
    }
}

/* an input shape whose product wraps a 64-bit integer (2^21 x 2^21 x 2^22 = 2^64) or
   exceeds 2^31-1 values is refused as too large, and 2^31-1 itself passes that check */
TTEST(model_info_input_shape_overflow) {
    static const int32_t shapes[][3] = {{2097152, 2097152, 4194304}, {65536, 65536, 65536},
                                        {1, 2, 1073741824}, {2147483647, 2147483647, 2147483647}};
    ipup_model_desc m;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[512];
    size_t i;
    TT_EQ_INT(ipup_model_parse("relu,xent", &m, msg, sizeof msg), IPUP_OK);
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        m.in_h = shapes[i][0]; m.in_w = shapes[i][1]; m.in_c = shapes[i][2];
        msg[0] = 0;
        TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
        TT_CONTAINS(msg, "more than 2^31-1 values");
    }
    /* a conv whose FLOPs would reach 2^63: 46338 x 46338 positions x 9 x 238609294 weights */
    TT_EQ_INT(ipup_model_parse("conv238609294,xent", &m, msg, sizeof msg), IPUP_OK);
    m.in_h = 46340; m.in_w = 46340; m.in_c = 1;
    TT_EQ_INT(ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "is too large (its FLOPs pass 2^61)");
    TT_EQ_INT(ipup_model_parse("relu,xent", &m, msg, sizeof msg), IPUP_OK);
    m.in_h = 1; m.in_w = 1; m.in_c = 2147483647;
    msg[0] = 0;
    ipup_model_info(&m, info, IPUP_MAX_LAYERS, msg, sizeof msg);
    TT_CHECK(strstr(msg, "model input shape") == NULL);
}

/* replication from the IPU count: N / P replicas, refused with the multiples that work */
TTEST(replicas_from_the_ipu_count) {
    char msg[256];
    int32_t r = -1;
    TT_EQ_INT(ipup_replicas_for_ipus(8, 2, &r, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(r, 4);
    TT_STREQ(msg, "");
    TT_EQ_INT(ipup_replicas_for_ipus(3, 3, &r, msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(r, 1);
    r = -1;
    TT_EQ_INT(ipup_replicas_for_ipus(3, 2, &r, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_EQ_INT(r, -1);
    TT_CHECK(strstr(msg, "must be a multiple of 2") != NULL);
    TT_CHECK(strstr(msg, "use one of 2, 4, 6, 8") != NULL);
    TT_EQ_INT(ipup_replicas_for_ipus(2 * (IPUP_MAX_REPLICAS + 1), 2, &r, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CHECK(strstr(msg, "IPUP_MAX_REPLICAS") != NULL);
    TT_EQ_INT(ipup_replicas_for_ipus(0, 2, &r, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CHECK(msg[0] != 0);
    TT_EQ_INT(ipup_replicas_for_ipus(4, 2, NULL, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CHECK(strstr(msg, "NULL") != NULL);
}

static const ttest_case cases[] = {
    TT_CASE(replicas_from_the_ipu_count),
    TT_CASE(good_config_runs),
    TT_CASE(microbatches_zero_is_default_negative_refused),
    TT_CASE(stages_above_the_maximum),
    TT_CASE(splits_naming_no_layer_or_leaving_a_stage_empty),
    TT_CASE(more_stages_than_ipus_allow),
    TT_CASE(replicas_times_stages_beyond_the_ipus),
    TT_CASE(pool_one_byte_too_small),
    TT_CASE(learning_rate_nan_inf_negative),
    TT_CASE(nan_loss_stops_and_keeps_last_good_weights),
    TT_CASE(model_text_hostile), TT_CASE(model_info_input_shape_overflow),
};

int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
