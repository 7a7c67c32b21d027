/* tests/test_popxl_rules.c - PopXL's rule that gradient accumulation is at least 2 x its
   pipeline stages (2S-1 for S model stages: forward and backward counted apart), asked for
   with ipup_sched_config.popxl and ipup_config.popxl: a warning (ipup_sched_generate's
   message, ipup_warnings), an error under strict, nothing without the convention. */
#include "tiny_model.h" /* includes ipupipe.h */
#include "ttest.h"

static ipup_op g_ops[4096];

/* ipup_sched_generate of gpipe, S model stages, M micro-batches: its code, msg its text */
static int gen(int32_t S, int32_t M, int32_t popxl, int32_t strict, char *msg, size_t len) {
    ipup_sched_config c;
    ipup_table t;
    memset(&c, 0, sizeof c);
    c.kind = IPUP_SCHED_GPIPE;
    c.stages = S;
    c.microbatches = M;
    c.popxl = popxl;
    c.strict = strict;
    return ipup_sched_generate(&c, g_ops, 4096, &t, msg, len);
}

TTEST(popxl_rule_in_the_schedule_generator) {
    char msg[512];
    /* 2 model stages = 3 PopXL stages: M >= 6 */
    TT_EQ_INT(gen(2, 4, 1, 0, msg, sizeof msg), IPUP_OK);
    TT_CONTAINS(msg, "PopXL: gradient accumulation M=4 is less than 2 x the 3 PopXL pipeline "
                     "stages (6); the PopXL tutorial asks for M >= 6 (an error under strict)");
    TT_EQ_INT(gen(2, 4, 1, 1, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "PopXL: gradient accumulation (M=4) must be at least 2 x the number of PopXL "
                     "pipeline stages (3 stages, forward and backward counted apart: 2 x 3 = 6); "
                     "use M=6 or more");
    TT_EQ_INT(gen(2, 6, 1, 1, msg, sizeof msg), IPUP_OK);
    TT_CHECK(strstr(msg, "PopXL") == NULL);
    /* 3 model stages = 5 PopXL stages (the tutorial's figure): M >= 10 */
    TT_EQ_INT(gen(3, 9, 1, 1, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "2 x 5 = 10); use M=10 or more");
    TT_EQ_INT(gen(3, 10, 1, 1, msg, sizeof msg), IPUP_OK);
    /* one stage is one PopXL stage: M >= 2 */
    TT_EQ_INT(gen(1, 1, 1, 1, msg, sizeof msg), IPUP_ERR_CONFIG);
    /* without the convention: no rule */
    TT_EQ_INT(gen(2, 4, 0, 1, msg, sizeof msg), IPUP_OK);
    TT_CHECK(strstr(msg, "PopXL") == NULL);
    /* popxl is 0 or 1 */
    TT_EQ_INT(gen(2, 8, 2, 0, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "popxl=2: use 0 (no PopXL rules) or 1 (PopXL's convention)");
}

#define POOL_BYTES (64 * 1024)
IPUP_ALIGN64 static uint8_t g_ipu[2][POOL_BYTES];
IPUP_ALIGN64 static uint8_t g_host[1 << 16];
static ipup_emu g_emu;

TTEST(popxl_rule_in_ipup_init) {
    ipup_model_desc md;
    ipup_config c;
    tiny_model_or_exit(&md, 1, 1, 6, "dense8,relu,dense4,xent");
    c = tiny_config(&md, 2, 2, 4, 1, 1, IPUP_OPT_SGD, 0.01f, NULL, NULL);
    c.schedule = IPUP_SCHED_GPIPE;
    tiny_pools(&c, 2, g_ipu, NULL, POOL_BYTES, g_host, sizeof g_host);
    c.popxl = 1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_CONTAINS(ipup_warnings(&g_emu), "gradient accumulation M=4 is less than 2 x the 3 PopXL");
    ipup_shutdown(&g_emu);
    c.strict = 1;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&g_emu), "must be at least 2 x the number of PopXL pipeline");
    c.microbatches = 6;
    TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
    TT_STREQ(ipup_warnings(&g_emu), "");
    ipup_shutdown(&g_emu);
}

static const ttest_case cases[] = {
    TT_CASE(popxl_rule_in_the_schedule_generator),
    TT_CASE(popxl_rule_in_ipup_init),
};

int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
