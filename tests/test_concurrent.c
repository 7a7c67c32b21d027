/* test_concurrent.c - concurrent pipeline stages (docs/schedules.md §9; TF IPU user
 * guide §6.5.7): the mapping parser, the generator, the verifier's branch rules and
 * their mutations, the figures against the serialised mapping, the CSV round trip, and
 * the emulator's cfg.concurrent (a plain mapping through it trains to the bits of
 * cfg.stage_device; a concurrent stage is refused with a message). */
#define TINY_MODEL_HELGRIND /* helgrind annotations of the rings, where available */
#include "tiny_model.h" /* ipupipe.h, for the emulator's cfg.concurrent */
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
        TT_CHECK_MSG(strstr(msg, bad[i].says) != NULL, "'%s': message '%.300s' lacks '%s'", bad[i].text, msg, bad[i].says);
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


/* ---- tables ---- */

#define CAP IPUP_SCHED_MAX_OPS(40, 32)
static ipup_op g_ops[CAP], g_ops2[CAP], g_mut[CAP + 4];
static uint64_t g_work[IPUP_SCHED_WORK_BYTES(40, 32) / 8 + 8];
static char g_text[1 << 16], g_text2[1 << 16];

static int gen_map(ipup_sched_kind kind, const char *map, int M, ipup_op *ops, ipup_table *t, char *msg, size_t len) {
    static ipup_stage_map sm;
    ipup_sched_config c;
    int S = ipup_sched_map_parse(map, &sm, msg, len);
    if (S < 1) return S;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.stages = S;
    c.microbatches = M;
    c.concurrent = &sm;
    return ipup_sched_generate(&c, ops, CAP, t, msg, len);
}

/* the serialised table of a mapping: each branch a plain stage */
static int gen_serial(ipup_sched_kind kind, const char *map, int M, ipup_op *ops, ipup_table *t) {
    ipup_stage_map sm;
    ipup_sched_config c;
    int16_t dev[IPUP_SCHED_MAX_STAGES];
    char msg[512];
    if (ipup_sched_map_parse(map, &sm, msg, sizeof msg) < 1) return -1;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.stages = ipup_sched_map_serialised(&sm, dev, IPUP_SCHED_MAX_STAGES);
    c.microbatches = M;
    c.stage_device = dev;
    return ipup_sched_generate(&c, ops, CAP, t, msg, sizeof msg);
}

static int verify(const ipup_table *t, ipup_sched_verify_info *vi, char *msg, size_t len) {
    return ipup_sched_verify(t, g_work, sizeof g_work, vi, msg, len);
}

/* an independent reading of a concurrent table: every (stage, micro-batch, kind) has
   exactly its branches, each on its device, all in one step; the steps obey the
   dependencies. Returns the number of problems. */
static int check_table(const ipup_table *t, const ipup_stage_map *sm) {
    static int step[3][IPUP_SCHED_MAX_STAGES][32], seen[3][IPUP_SCHED_MAX_STAGES][32];
    int i, s, m, k, bad = 0;
    memset(seen, 0, sizeof seen);
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        int b = o->branch_plus1 ? o->branch_plus1 - 1 : 0;
        k = o->kind == IPUP_OP_F ? 0 : 1;
        if (sm->n_dev[o->stage] == 1 && o->branch_plus1 != 0) bad++;
        if (sm->dev[o->stage][b] != o->device) bad++;
        if (seen[k][o->stage][o->mb] && step[k][o->stage][o->mb] != o->step) bad++;
        if (seen[k][o->stage][o->mb] & (1 << b)) bad++;
        seen[k][o->stage][o->mb] |= 1 << b;
        step[k][o->stage][o->mb] = o->step;
        if (i > 0 && t->ops[i - 1].step == o->step && t->ops[i - 1].device == o->device) bad++;
    }
    for (s = 0; s < sm->stages; s++)
        for (m = 0; m < t->microbatches; m++) {
            for (k = 0; k < 2; k++)
                if (seen[k][s][m] != (1 << sm->n_dev[s]) - 1) bad++;
            if (s > 0 && step[0][s][m] <= step[0][s - 1][m]) bad++;
            if (step[1][s][m] <= step[0][s][m]) bad++;
            if (s + 1 < sm->stages && step[1][s][m] <= step[1][s + 1][m]) bad++;
        }
    return bad;
}

TTEST(generate_guide_example) {
    ipup_table t;
    ipup_sched_verify_info vi;
    ipup_stage_map sm;
    char msg[1024];
    int i, same = 0;
    TT_EQ_INT(gen_map(IPUP_SCHED_GROUPED, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.concurrent, 1);
    TT_EQ_INT(t.stages, 4);
    TT_EQ_INT(t.devices, 4);
    TT_EQ_INT(t.n_ops, 2 * 5 * 8);
    TT_EQ_INT(t.n_branches[1], 2);
    TT_EQ_INT(t.branch_device[1][1], 2);
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
    TT_EQ_INT(vi.in_order, 1);
    ipup_sched_map_parse("0,[1,2],2,3", &sm, msg, sizeof msg);
    TT_EQ_INT(check_table(&t, &sm), 0);
    /* IPU1 and IPU2 busy at once with stage 1's two branches, for every op of stage 1 */
    for (i = 0; i + 1 < t.n_ops; i++)
        if (t.ops[i].stage == 1 && t.ops[i].device == 1 && t.ops[i + 1].stage == 1 && t.ops[i + 1].device == 2 &&
            t.ops[i].step == t.ops[i + 1].step && t.ops[i].mb == t.ops[i + 1].mb)
            same++;
    TT_EQ_INT(same, 16);
}

TTEST(generate_kinds_and_maps) {
    static const char *const maps[] = {"0,[1,2],2,3", "[0,1],2", "0,[1,2,3]", "[0,1],[2,3]", "0,[1,2],0", "[0,1,2,3,4,5,6,7]",
                                       "0,[2,1],3,[4,5,6],7", "[1,0],[0,1]"};
    static const ipup_sched_kind kinds[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL, IPUP_SCHED_GPIPE,
                                            IPUP_SCHED_1F1B};
    size_t a, k;
    int M;
    for (a = 0; a < sizeof maps / sizeof maps[0]; a++)
        for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (M = 1; M <= 9; M += 4) {
                ipup_table t;
                ipup_stage_map sm;
                ipup_sched_verify_info vi;
                ipup_sched_figures fg;
                int32_t peak[IPUP_SCHED_MAX_STAGES];
                char msg[1024];
                int rc = gen_map(kinds[k], maps[a], M, g_ops, &t, msg, sizeof msg), s;
                TT_CHECK_MSG(rc == 0, "%s %s M=%d: %.300s", ipup_sched_kind_name(kinds[k]), maps[a], M, msg);
                if (rc) continue;
                ipup_sched_map_parse(maps[a], &sm, msg, sizeof msg);
                TT_CHECK_MSG(verify(&t, &vi, msg, sizeof msg) == 0, "%s %s M=%d: %.300s", ipup_sched_kind_name(kinds[k]), maps[a], M, msg);
                TT_CHECK_MSG(check_table(&t, &sm) == 0, "%s %s M=%d: the table breaks the branch rules", ipup_sched_kind_name(kinds[k]),
                             maps[a], M);
                TT_EQ_INT(t.n_ops, 2 * M * ipup_sched_map_lanes(&sm));
                TT_EQ_INT(vi.in_order, 1);
                TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &fg), 0);
                TT_EQ_INT(ipup_sched_peak_inflight(&t, peak, IPUP_SCHED_MAX_STAGES), 0);
                for (s = 0; s < t.stages; s++) TT_EQ_INT(peak[s], fg.peak_inflight[s]);
                if (kinds[k] == IPUP_SCHED_SEQUENTIAL) TT_EQ_INT(t.steps, 2 * t.stages * M);
            }
}

/* a mapping without brackets through the concurrent field is the plain table */
TTEST(generate_plain_through_map) {
    ipup_table t, u;
    ipup_sched_config c;
    int16_t dev[3] = {0, 1, 0};
    char msg[512];
    int i;
    TT_EQ_INT(gen_map(IPUP_SCHED_INTERLEAVED, "0,1,0", 6, g_ops, &t, msg, sizeof msg), 0);
    memset(&c, 0, sizeof c);
    c.kind = IPUP_SCHED_INTERLEAVED; c.stages = 3; c.microbatches = 6; c.stage_device = dev;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops2, CAP, &u, msg, sizeof msg), 0);
    TT_EQ_INT(t.concurrent, 0);
    TT_EQ_INT(t.n_ops, u.n_ops);
    TT_EQ_INT(t.steps, u.steps);
    for (i = 0; i < t.n_ops; i++) TT_CHECK(memcmp(&g_ops[i], &g_ops2[i], sizeof(ipup_op)) == 0);
}

TTEST(generate_refusals) {
    ipup_table t;
    ipup_sched_config c;
    ipup_stage_map sm;
    int16_t dev[4] = {0, 1, 2, 3};
    char msg[1024];
    TT_EQ_INT(gen_map(IPUP_SCHED_ZBH1, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "zb-h1 does not take concurrent stages");
    TT_EQ_INT(gen_map(IPUP_SCHED_INTERLEAVED_1F1B, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "interleaved-1f1b does not take concurrent stages");
    ipup_sched_map_parse("0,[1,2],2,3", &sm, msg, sizeof msg);
    memset(&c, 0, sizeof c);
    c.kind = IPUP_SCHED_GROUPED; c.stages = 4; c.microbatches = 8; c.concurrent = &sm; c.stage_device = dev;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "either stage_device or concurrent");
    c.stage_device = NULL; c.forward_only = 1; /* once a silently ignored flag: a training table came back */
    t.n_ops = -1;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "grouped: concurrent stages (a stage on several devices) have no forward-only table; drop forward_only");
    TT_EQ_INT(t.n_ops, 0);
    c.forward_only = 0; c.stages = 5;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "the mapping has 4 stages but S=5");
    c.stages = 4; c.devices = 3;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "mapped to device 3, but the devices are 0..2");
    c.devices = 0;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, 79, &t, msg, sizeof msg), IPUP_ERR_CAPACITY);
    TT_CONTAINS(msg, "IPUP_SCHED_MAX_OPS(5, 8)");
    sm.dev[1][1] = 1; /* built by hand: a device twice */
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "lists device 1 twice");
    sm.dev[1][1] = 2; sm.n_dev[2] = 0;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "stage 2 has 0 devices");
    sm.n_dev[2] = 1; c.strict = 1; c.microbatches = 4;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "PipelineSchedule.Grouped");
}

/* The TF IPU user guide's example (§6.5.7, figures 6.4 and 6.5): stage 1 split over IPUs
   1 and 2 against the same model with stage 1's two halves as consecutive stages. The
   concurrent pipeline is shorter, finishes its first micro-batch sooner and stores
   fewer activations, under the guide's grouped schedule and the others. */
TTEST(guide_example_beats_serialised) {
    static const ipup_sched_kind kinds[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL, IPUP_SCHED_GPIPE,
                                            IPUP_SCHED_1F1B};
    size_t k;
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        ipup_table c, s;
        ipup_sched_figures fc, fs;
        int64_t act_c[4] = {1000, 1000, 1000, 1000}, act_s[5] = {1000, 1000, 1000, 1000, 1000};
        char msg[1024];
        const char *kn = ipup_sched_kind_name(kinds[k]);
        TT_EQ_INT(gen_map(kinds[k], "0,[1,2],2,3", 8, g_ops, &c, msg, sizeof msg), 0);
        TT_EQ_INT(gen_serial(kinds[k], "0,[1,2],2,3", 8, g_ops2, &s), 0);
        TT_EQ_INT(s.stages, 5);
        TT_EQ_INT(s.stage_device[3], 2);
        TT_EQ_INT(ipup_sched_measure(&c, NULL, act_c, g_work, sizeof g_work, &fc), 0);
        TT_EQ_INT(ipup_sched_measure(&s, NULL, act_s, g_work, sizeof g_work, &fs), 0);
        TT_CHECK_MSG(fc.steps < fs.steps, "%s: steps %d, serialised %d", kn, fc.steps, fs.steps);
        TT_CHECK_MSG(fc.bsp_time < fs.bsp_time, "%s: BSP time %g, serialised %g", kn, fc.bsp_time, fs.bsp_time);
        TT_CHECK_MSG(fc.first_mb_done < fs.first_mb_done, "%s: latency %d, serialised %d", kn, fc.first_mb_done, fs.first_mb_done);
        TT_CHECK_MSG(fc.inflight_total <= fs.inflight_total, "%s: stored %d, serialised %d", kn, fc.inflight_total, fs.inflight_total);
        TT_CHECK_MSG(fc.stash_total <= fs.stash_total, "%s: stash %lld, serialised %lld", kn, (long long)fc.stash_total,
                     (long long)fs.stash_total);
        if (kinds[k] == IPUP_SCHED_GROUPED) { /* the guide's schedule: strictly fewer */
            TT_CHECK(fc.inflight_total < fs.inflight_total);
            TT_CHECK(fc.stash_total < fs.stash_total);
        }
        TT_EQ_INT(fc.n_ops, fs.n_ops); /* the same work */
    }
}

/* the per-device figures against a direct count over a dense grid */
TTEST(device_figures) {
    ipup_table t;
    ipup_sched_figures fg;
    int64_t act[4] = {10, 200, 3000, 40000};
    char msg[512];
    int d, i, cur, peak, total = 0;
    int64_t bytes, pb;
    TT_EQ_INT(gen_map(IPUP_SCHED_1F1B, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_measure(&t, NULL, act, g_work, sizeof g_work, &fg), 0);
    for (d = 0; d < t.devices; d++) {
        cur = peak = 0; bytes = pb = 0;
        for (i = 0; i < t.n_ops; i++) {
            if (t.ops[i].device != d) continue;
            if (t.ops[i].kind == IPUP_OP_F) { cur++; bytes += act[t.ops[i].stage]; }
            else { cur--; bytes -= act[t.ops[i].stage]; }
            if (cur > peak) peak = cur;
            if (bytes > pb) pb = bytes;
        }
        TT_EQ_INT(fg.peak_inflight_device[d], peak);
        TT_CHECK(fg.stash_bytes_device[d] == pb);
        total += peak;
    }
    TT_EQ_INT(fg.inflight_total, total);
    TT_CHECK(fg.stash_bytes[1] == 2 * fg.peak_inflight[1] * act[1]); /* both branches keep their own */
}

/* ---- the verifier's branch rules, by mutation ---- */

static int mutate_verify(const ipup_table *t, int n, ipup_sched_verify_info *vi, char *msg, size_t len) {
    ipup_table u = *t;
    u.ops = g_mut;
    u.n_ops = n;
    u.cap_ops = CAP + 4;
    ipup_sched_sort(&u);
    return verify(&u, vi, msg, len);
}

static int cell_free(const ipup_table *t, int dev, int step) {
    int i;
    for (i = 0; i < t->n_ops; i++)
        if (t->ops[i].device == dev && t->ops[i].step == step) return 0;
    return 1;
}

/* Every move of one branch to a free cell of its device at another step is refused:
   rule 7 when the dependencies still hold, rule 3 or 4 when the next stage's op now
   runs no later than the moved branch. */
TTEST(mutation_branch_moved) {
    ipup_table t;
    char msg[1024];
    int i, st, rc, n7 = 0, n3 = 0, n4 = 0, tried = 0;
    TT_EQ_INT(gen_map(IPUP_SCHED_GROUPED, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), 0);
    for (i = 0; i < t.n_ops; i++) {
        if (ipup_op_branch(&t.ops[i]) < 0) continue;
        for (st = 0; st < t.steps; st++) {
            ipup_sched_verify_info vi;
            if (st == t.ops[i].step || !cell_free(&t, t.ops[i].device, st)) continue;
            memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)t.n_ops);
            g_mut[i].step = st;
            rc = mutate_verify(&t, t.n_ops, &vi, msg, sizeof msg);
            tried++;
            TT_CHECK_MSG(rc == IPUP_ERR_INVALID_TABLE, "branch %d of op %d moved to step %d: accepted", ipup_op_branch(&t.ops[i]), i,
                         st + 1);
            if (vi.rule == 7) { n7++; TT_CONTAINS(msg, "rule 7 (branches in one step)"); }
            else if (vi.rule == 3) { n3++; TT_CONTAINS(msg, "rule 3"); }
            else if (vi.rule == 4) n4++;
            else TT_FAILF("rule %d: %.300s", vi.rule, msg);
        }
    }
    TT_CHECK(tried > 100);
    TT_CHECK(n7 > 0);
    TT_CHECK(n3 > 0);
    TT_CHECK(n4 > 0);
}

TTEST(mutation_branch_structure) {
    ipup_table t;
    ipup_sched_verify_info vi;
    char msg[1024];
    int i, b1 = -1, plain = -1, n;
    TT_EQ_INT(gen_map(IPUP_SCHED_GROUPED, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), 0);
    for (i = 0; i < t.n_ops; i++) {
        if (b1 < 0 && ipup_op_branch(&t.ops[i]) == 1 && t.ops[i].kind == IPUP_OP_F) b1 = i;
        if (plain < 0 && t.ops[i].stage == 3) plain = i;
    }
    TT_CHECK(b1 >= 0 && plain >= 0);
    n = t.n_ops;
    /* a branch dropped: rule 1 names it */
    memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)n);
    g_mut[b1] = g_mut[n - 1];
    TT_EQ_INT(mutate_verify(&t, n - 1, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 1);
    TT_CONTAINS(msg, "branch 1 of F(1,0) [1F0] is missing (device 2)");
    /* a branch twice (a copy at a free step of its device) */
    memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)n);
    g_mut[n] = g_mut[b1];
    g_mut[n].step = t.steps; /* a new last column */
    t.steps++;
    TT_EQ_INT(mutate_verify(&t, n + 1, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    t.steps--;
    TT_EQ_INT(vi.rule, 1);
    TT_CONTAINS(msg, "appears twice");
    /* a branch on the other branch's device: rule 2 */
    memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)n);
    g_mut[b1].device = 3;
    if (cell_free(&t, 3, g_mut[b1].step)) {
        TT_EQ_INT(mutate_verify(&t, n, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
        TT_EQ_INT(vi.rule, 2);
        TT_CONTAINS(msg, "branch 1 of F(1,0) [1F0] runs on device 3, but that branch of stage 1 lives on device 2");
    } else TT_FAILF("device 3 is busy at step %d", g_mut[b1].step + 1);
    /* branch index beyond the stage's branches, and one on a plain stage: rule 1 */
    memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)n);
    g_mut[b1].branch_plus1 = 3;
    TT_EQ_INT(mutate_verify(&t, n, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 1);
    TT_CONTAINS(msg, "is marked as branch 2, but stage 1 has 2 branches");
    memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)n);
    g_mut[plain].branch_plus1 = 1;
    TT_EQ_INT(mutate_verify(&t, n, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 1);
    TT_CONTAINS(msg, "a plain stage: no branch index");
    /* the table's branch devices themselves: the same device twice */
    {
        ipup_table u = t;
        u.branch_device[1][1] = 1;
        TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
        TT_EQ_INT(vi.rule, 2);
        TT_CONTAINS(msg, "holds another branch of that stage");
        u = t;
        u.n_branches[2] = 0;
        TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
        TT_EQ_INT(vi.rule, 6);
    }
}

/* the whole op (both branches) moved before its input: rule 3 */
TTEST(mutation_whole_op) {
    ipup_table t;
    ipup_sched_verify_info vi;
    char msg[1024];
    int i, n;
    TT_EQ_INT(gen_map(IPUP_SCHED_SEQUENTIAL, "0,[1,2],2,3", 2, g_ops, &t, msg, sizeof msg), 0);
    n = t.n_ops;
    /* sequential: F(0,0) step 0, F(1,0) step 1 on IPU1+IPU2, F(2,0) step 2 on IPU2 */
    memcpy(g_mut, g_ops, sizeof(ipup_op) * (size_t)n);
    for (i = 0; i < n; i++)
        if (g_mut[i].stage == 1 && g_mut[i].kind == IPUP_OP_F && g_mut[i].mb == 0) g_mut[i].step = 0;
    TT_EQ_INT(mutate_verify(&t, n, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 3);
}

/* ---- CSV with the branch suffix ---- */

TTEST(csv_round_trip) {
    ipup_table t, u;
    ipup_sched_verify_info vi;
    ipup_buf b = {g_text, sizeof g_text, 0}, b2 = {g_text2, sizeof g_text2, 0};
    char msg[1024];
    int i;
    TT_EQ_INT(gen_map(IPUP_SCHED_INTERLEAVED, "0,[1,2],2,3", 4, g_ops, &t, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_write_csv(&t, ipup_buf_write, &b), 0);
    TT_CHECK(ipup_buf_fits(&b));
    TT_CONTAINS(g_text, "1F0.0");
    TT_CONTAINS(g_text, "1F0.1");
    TT_CONTAINS(g_text, "1B3.1");
    TT_CHECK(strstr(g_text, "0F0.") == NULL); /* plain stages have no suffix */
    TT_EQ_INT(ipup_sched_csv_load(g_text, b.len, g_ops2, CAP, g_work, sizeof g_work, &u, msg, sizeof msg), 0);
    TT_EQ_INT(u.concurrent, 1);
    TT_EQ_INT(u.n_branches[1], 2);
    TT_EQ_INT(u.n_branches[2], 1);
    TT_EQ_INT(u.branch_device[1][0], 1);
    TT_EQ_INT(u.branch_device[1][1], 2);
    TT_EQ_INT(u.stage_device[2], 2);
    TT_EQ_INT(u.n_ops, t.n_ops);
    TT_EQ_INT(u.steps, t.steps);
    for (i = 0; i < t.n_ops; i++) TT_CHECK(memcmp(&g_ops[i], &g_ops2[i], sizeof(ipup_op)) == 0);
    TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_write_csv(&u, ipup_buf_write, &b2), 0);
    TT_CHECK(strcmp(g_text, g_text2) == 0);
    /* bad suffixes and respace */
    TT_EQ_INT(ipup_sched_csv_load("0F0,1F0.8", 9, g_ops2, CAP, g_work, sizeof g_work, &u, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_CONTAINS(msg, "adds .0 to .7");
    TT_EQ_INT(ipup_sched_csv_load("0F0,1F0.", 8, g_ops2, CAP, g_work, sizeof g_work, &u, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_sched_csv_load("0F0,1F0.1x", 10, g_ops2, CAP, g_work, sizeof g_work, &u, msg, sizeof msg), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_sched_csv_load(g_text, b.len, g_ops2, CAP, g_work, sizeof g_work, &u, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_respace(&u, g_work, sizeof g_work, msg, sizeof msg), IPUP_ERR_UNSUPPORTED);
    TT_CONTAINS(msg, "concurrent stages");
}

/* rule 7 from a loaded CSV: a branch one column late, dependencies still met */
TTEST(csv_rule7) {
    ipup_table u;
    ipup_sched_verify_info vi;
    char msg[1024];
    const char *late = "0F0,,,,,,0B0\n,1F0.0,,,,1B0.0,\n,,1F0.1,2F0,2B0,1B0.1,\n";
    TT_EQ_INT(ipup_sched_csv_load(late, strlen(late), g_ops2, CAP, g_work, sizeof g_work, &u, msg, sizeof msg), 0);
    TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 7);
    TT_CONTAINS(msg, "device 1, step 2: branch 0 of F(1,0) [1F0] runs at step 2, another branch at step 3");
    TT_EQ_INT(vi.step, 1);
}

/* ---- rendering ---- */

TTEST(grid_shows_branches) {
    ipup_table t;
    ipup_buf b = {g_text, sizeof g_text, 0};
    char msg[512];
    const char *r1, *r2, *nl;
    TT_EQ_INT(gen_map(IPUP_SCHED_GROUPED, "0,[1,2],2,3", 8, g_ops, &t, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_render_grid(&t, ipup_buf_write, &b), 0);
    r1 = strstr(g_text, "IPU1");
    r2 = strstr(g_text, "IPU2");
    TT_CHECK(r1 && r2);
    if (!r1 || !r2) return;
    nl = strchr(r1, '\n');
    /* the branches of F(1,0) in the same column of both rows */
    TT_CHECK(nl && strstr(r1, "1F0.0") && strstr(r1, "1F0.0") < nl);
    TT_CHECK(strstr(r2, "1F0.1") && strstr(r1, "1F0.0") - r1 == strstr(r2, "1F0.1") - r2);
}


/* ---- the emulator: cfg.concurrent ---- */

static void emu_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t k;
    int64_t g = sample0 + i;
    for (k = 0; k < 36; k++) x[k] = (float)((g * 7 + k * 3) % 11) / 11.0f - 0.5f;
    *label = (int32_t)(g % 4);
}

static IPUP_ALIGN64 uint8_t g_ipu[8][1 << 18];
static IPUP_ALIGN64 uint8_t g_host[1 << 19];
static ipup_emu g_emu;

/* one run of the test models. model 0: an MLP on 36 features whose stage 1 is dense12,
   relu, dropout (split 2, 5, 7); model 1: a CNN on 6x6x1 whose stage 1 is conv6, relu
   (split 2, 4). */
typedef struct emu_run {
    int model;
    const char *map;             /* "0,[1,2],2,3"; a map without brackets is a plain run */
    ipup_sched_kind sched;
    ipup_runner_kind runner;
    ipup_optimizer_kind opt;
    int replicas, steps;         /* 0: 1 */
} emu_run;

typedef struct emu_out {
    int rc;
    char msg[600];
    int n;                       /* floats in w */
    float w[8192];               /* every parameter tensor, in tensor order */
    char names[64][IPUP_TENSOR_NAME_MAX];
    int off[64], len[64], nt;
    double loss;                 /* ipup_evaluate's mean loss on 32 samples after the run */
    size_t weights_bytes[8];     /* memory report: weights per IPU of replica 0 */
    double busy[8];
} emu_out;

static int emu_config(const emu_run *run, ipup_config *c, ipup_model_desc *m, ipup_stage_map *sm, int32_t *split, char *msg, size_t len) {
    static tiny_data data36 = {emu_sample, 36};
    int S;
    if (run->model == 0) {
        tiny_model_or_exit(m, 1, 1, 36, "dense8,relu,dense12,relu,dropout0.2,dense8,relu,dense4,xent");
        split[0] = 2; split[1] = 5; split[2] = 7;
    } else {
        tiny_model_or_exit(m, 6, 6, 1, "conv4,relu,conv6,relu,flatten,dense4,xent");
        split[0] = 2; split[1] = 4;
    }
    S = ipup_sched_map_parse(run->map, sm, msg, len);
    if (S < 1) return S;
    *c = tiny_config(m, S, 2, 4, run->steps ? run->steps : 3, 42, run->opt, 0.05f, tiny_infeed, &data36);
    c->opt.momentum = 0.9f;
    c->opt.beta1 = 0.9f; c->opt.beta2 = 0.999f; c->opt.eps = 1e-8f;
    if (run->opt == IPUP_OPT_ADAM) c->opt.lr = 0.01f;
    c->split = split;
    c->schedule = run->sched;
    c->runner = run->runner;
    c->replicas = run->replicas ? run->replicas : 1;
    c->concurrent = sm;
    tiny_pools(c, 8, g_ipu, NULL, sizeof g_ipu[0], g_host, sizeof g_host);
    return 0;
}

static void emu_go(const emu_run *run, emu_out *o) {
    static ipup_model_desc m;
    static ipup_stage_map sm;
    static float xs[32 * 36];
    static int32_t ls[32];
    ipup_config c;
    ipup_run_stats st;
    int32_t split[4], k, i;
    int64_t corr = 0;
    memset(o, 0, sizeof *o);
    if ((o->rc = emu_config(run, &c, &m, &sm, split, o->msg, sizeof o->msg)) != 0) return;
    if (run->model == 1) for (k = 0; k < 32; k++) emu_sample(1000, k, xs + k * 36, ls + k);
    else for (k = 0; k < 32; k++) emu_sample(1000, k, xs + k * 36, ls + k);
    memset(&g_emu, 0, sizeof g_emu);
    if ((o->rc = ipup_init(&g_emu, &c)) != 0) { ipup_snprintf(o->msg, sizeof o->msg, "%s", ipup_last_error(&g_emu)); return; }
    if ((o->rc = ipup_run(&g_emu, &st)) != 0) { ipup_snprintf(o->msg, sizeof o->msg, "%s", ipup_last_error(&g_emu)); ipup_shutdown(&g_emu); return; }
    for (k = 0; k < ipup_tensor_count(&g_emu) && o->nt < 64; k++) {
        ipup_tensor_info ti;
        if (ipup_tensor_get(&g_emu, k, &ti) || ti.kind != IPUP_TENSOR_PARAM) continue;
        ipup_snprintf(o->names[o->nt], IPUP_TENSOR_NAME_MAX, "%s", ti.name);
        o->off[o->nt] = o->n;
        o->len[o->nt] = ti.n;
        for (i = 0; i < ti.n && o->n < 8192; i++) o->w[o->n++] = ti.data[i];
        o->nt++;
    }
    for (k = 0; k < 8 && k < g_emu.core.P; k++) {
        ipup_mem_report mr;
        if (ipup_memory_report(&g_emu, k, &mr) == 0) o->weights_bytes[k] = mr.by_category[IPUP_MEM_WEIGHTS];
        o->busy[k] = st.busy_seconds[k];
    }
    ipup_evaluate(&g_emu, 32, xs, ls, &o->loss, &corr);
    o->loss /= 32.0;
    ipup_shutdown(&g_emu);
}

/* the tensor of o named name (-1 if none) */
static int emu_tensor(const emu_out *o, const char *name) {
    int k;
    for (k = 0; k < o->nt; k++) if (!strcmp(o->names[k], name)) return k;
    return -1;
}

/* the concurrent run's weights against the plain run's: every tensor of a plain stage,
   and the branches of the split layer put back together along the units; the largest
   |difference| over the largest |value| of each tensor */
static double emu_rel_diff(const emu_out *cc, const emu_out *pl, const char *split_layer, int units, int rows, int nbr) {
    double worst = 0.0;
    int k;
    for (k = 0; k < pl->nt; k++) {
        const char *nm = pl->names[k];
        double mx = 1e-30, df = 0.0;
        int i, isw = !strncmp(nm, split_layer, strlen(split_layer)) && nm[strlen(split_layer)] == '.';
        for (i = 0; i < pl->len[k]; i++) {
            float ref = pl->w[pl->off[k] + i], got;
            if (isw) { /* element (row, unit) lives in branch unit * nbr / units... found by the slices */
                int row = nm[strlen(split_layer) + 1] == 'w' ? i / units : 0, u = nm[strlen(split_layer) + 1] == 'w' ? i % units : i, b, u0 = 0;
                char want[IPUP_TENSOR_NAME_MAX];
                int t;
                for (b = 0; b < nbr; b++) {
                    int lo = b * units / nbr, hi = (b + 1) * units / nbr;
                    if (u >= lo && u < hi) { u0 = lo; break; }
                }
                ipup_snprintf(want, sizeof want, "%s#%d", nm, b);
                t = emu_tensor(cc, want);
                if (t < 0) return 1e30;
                got = cc->w[cc->off[t] + row * ((b + 1) * units / nbr - u0) + (u - u0)];
                (void)rows;
            } else {
                int t = emu_tensor(cc, nm);
                if (t < 0) return 1e30;
                got = cc->w[cc->off[t] + i];
            }
            if (fabs((double)ref) > mx) mx = fabs((double)ref);
            if (fabs((double)got - (double)ref) > df) df = fabs((double)got - (double)ref);
        }
        if (df / mx > worst) worst = df / mx;
    }
    return worst;
}

/* Every schedule that takes concurrent stages and both runners give the same bits; the
   weights stay within 1e-5 relative of the unsplit model (the branch order of the dx sum
   is the only difference); the split layer's tensors are named "dense12.w#0", "#1". */
TTEST(emulator_bits_and_unsplit) {
    static emu_out ref, plain, got;
    static const ipup_sched_kind kinds[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL, IPUP_SCHED_GPIPE,
                                            IPUP_SCHED_1F1B};
    emu_run run = {0, "0,[1,2],2,3", IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP, IPUP_OPT_MOMENTUM, 1, 3};
    size_t k;
    int rn;
    emu_go(&run, &ref);
    TT_CHECK_MSG(ref.rc == 0, "concurrent run: %d %.300s", ref.rc, ref.msg);
    if (ref.rc) return;
    TT_CHECK(emu_tensor(&ref, "dense12.w#0") >= 0 && emu_tensor(&ref, "dense12.b#1") >= 0);
    TT_EQ_INT(ref.len[emu_tensor(&ref, "dense12.w#1")], 8 * 6);
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (rn = 0; rn < 2; rn++) {
            run.sched = kinds[k];
            run.runner = rn ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
            emu_go(&run, &got);
            TT_CHECK_MSG(got.rc == 0, "%s %s: %.300s", ipup_sched_kind_name(kinds[k]), rn ? "threads" : "coop", got.msg);
            TT_CHECK_MSG(got.n == ref.n && memcmp(got.w, ref.w, (size_t)ref.n * sizeof(float)) == 0, "%s %s: other bits",
                         ipup_sched_kind_name(kinds[k]), rn ? "threads" : "coop");
        }
    run.map = "0,1,2,3";
    run.sched = IPUP_SCHED_GROUPED;
    run.runner = IPUP_RUNNER_COOP;
    emu_go(&run, &plain);
    TT_CHECK_MSG(plain.rc == 0, "plain run: %.300s", plain.msg);
    {
        double d = emu_rel_diff(&ref, &plain, "dense12", 12, 8, 2);
        printf("    concurrent vs unsplit (MLP, 3 steps): largest relative difference %.3g\n", d);
        TT_CHECK_MSG(d <= 1e-5, "concurrent vs unsplit: %g relative", d);
        TT_CHECK(d < 1e29);
        TT_NEAR(ref.loss, plain.loss, 1e-4);
    }
    /* memory: the split layer's weights spread over IPU1 and IPU2 */
    TT_CHECK(ref.weights_bytes[1] < plain.weights_bytes[1]);
    TT_CHECK(ref.weights_bytes[1] > 0 && ref.weights_bytes[2] > plain.weights_bytes[2]);
    TT_CHECK(ref.busy[1] < plain.busy[1]); /* each branch does its share */
}

/* the same with a conv layer split by output channels (NHWC concatenation), Adam, two
   replicas, both runners */
TTEST(emulator_conv_replicas_adam) {
    static emu_out a, b, plain;
    emu_run run = {1, "0,[1,2],3", IPUP_SCHED_INTERLEAVED, IPUP_RUNNER_COOP, IPUP_OPT_ADAM, 2, 2};
    emu_go(&run, &a);
    TT_CHECK_MSG(a.rc == 0, "coop: %.300s", a.msg);
    run.runner = IPUP_RUNNER_THREADS;
    emu_go(&run, &b);
    TT_CHECK_MSG(b.rc == 0, "threads: %.300s", b.msg);
    TT_CHECK(a.n > 0 && a.n == b.n && memcmp(a.w, b.w, (size_t)a.n * sizeof(float)) == 0);
    TT_CHECK(emu_tensor(&a, "conv6.w#1") >= 0);
    run.map = "0,1,2";
    run.runner = IPUP_RUNNER_COOP;
    emu_go(&run, &plain);
    TT_CHECK_MSG(plain.rc == 0, "plain: %.300s", plain.msg);
    if (a.rc == 0 && plain.rc == 0) {
        double d = emu_rel_diff(&a, &plain, "conv6", 6, 36, 2);
        printf("    concurrent vs unsplit (CNN, Adam, 2 replicas): largest relative difference %.3g\n", d);
        TT_CHECK_MSG(d <= 1e-5, "conv concurrent vs unsplit: %g relative", d);
    }
}

/* the initial weights of the branches are the unsplit tensor's slices, bit for bit */
TTEST(emulator_init_slices) {
    static ipup_model_desc m;
    static ipup_stage_map sm;
    static emu_out o;
    ipup_config c;
    int32_t split[4], i, j;
    ipup_tensor_info w0, w1, wf;
    static float full[8 * 12];
    emu_run run = {0, "0,1,2,3", IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP, IPUP_OPT_SGD, 1, 1};
    TT_EQ_INT(emu_config(&run, &c, &m, &sm, split, o.msg, sizeof o.msg), 0);
    memset(&g_emu, 0, sizeof g_emu);
    TT_EQ_INT(ipup_init(&g_emu, &c), 0);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense12.w", &wf), 0);
    memcpy(full, wf.data, sizeof full);
    ipup_shutdown(&g_emu);
    run.map = "0,[1,2],2,3";
    TT_EQ_INT(emu_config(&run, &c, &m, &sm, split, o.msg, sizeof o.msg), 0);
    memset(&g_emu, 0, sizeof g_emu);
    TT_EQ_INT(ipup_init(&g_emu, &c), 0);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense12.w#0", &w0), 0);
    TT_EQ_INT(ipup_tensor_find(&g_emu, "dense12.w#1", &w1), 0);
    TT_EQ_INT(w0.device, 1);
    TT_EQ_INT(w1.device, 2);
    TT_EQ_INT(w1.shape[1], 6);
    for (i = 0; i < 8; i++)
        for (j = 0; j < 12; j++) {
            float v = j < 6 ? w0.data[i * 6 + j] : w1.data[i * 6 + j - 6];
            TT_CHECK(memcmp(&v, &full[i * 12 + j], sizeof v) == 0);
        }
    ipup_shutdown(&g_emu);
}

/* ipup_predict with a concurrent stage (no forward-only table: stage after stage): the
   classes score as ipup_evaluate counts, and both runners give the same logits */
TTEST(emulator_predict_concurrent) {
    static ipup_model_desc m;
    static ipup_stage_map sm;
    static float xs[32 * 36], logits[2][32 * 4];
    static int32_t ls[32], cls[32];
    static char msg[512];
    ipup_config c;
    ipup_run_stats st;
    int32_t split[4], k, runner, hits;
    int64_t corr;
    for (k = 0; k < 32; k++) emu_sample(1000, k, xs + k * 36, ls + k);
    for (runner = 0; runner < 2; runner++) {
        emu_run run = {0, "0,[1,2],2,3", IPUP_SCHED_GROUPED, runner ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP, IPUP_OPT_SGD, 1, 2};
        TT_EQ_INT(emu_config(&run, &c, &m, &sm, split, msg, sizeof msg), 0);
        memset(&g_emu, 0, sizeof g_emu);
        TT_EQ_INT(ipup_init(&g_emu, &c), 0);
        TT_EQ_INT(ipup_run(&g_emu, &st), 0);
        TT_EQ_INT(ipup_output_width(&g_emu), 4);
        TT_EQ_INT(ipup_predict(&g_emu, 32, xs, logits[runner], cls), 0);
        corr = 0;
        TT_EQ_INT(ipup_evaluate(&g_emu, 32, xs, ls, NULL, &corr), 0);
        for (hits = 0, k = 0; k < 32; k++) hits += cls[k] == ls[k];
        TT_EQ_INT(hits, (int)corr);
        ipup_shutdown(&g_emu);
    }
    TT_CHECK(memcmp(logits[0], logits[1], sizeof logits[0]) == 0);
}

/* a frozen layer or a regression loss with a concurrent stage: refused, named */
TTEST(emulator_concurrent_refuses_frozen_and_mse) {
    static const char *texts[] = {"dense8,relu,dense12:frozen,relu,dense8,relu,dense4,xent", "dense8,relu,dense12,relu,dense8,relu,dense4,mse"};
    static const char *says[] = {"is frozen", "the mse loss"};
    static ipup_model_desc m;
    static ipup_stage_map sm;
    static char msg[512];
    static tiny_data d36 = {emu_sample, 36};
    int32_t split[3] = {2, 4, 6};
    int i;
    for (i = 0; i < 2; i++) {
        ipup_config c;
        tiny_model_or_exit(&m, 1, 1, 36, texts[i]);
        TT_CHECK(ipup_sched_map_parse("0,[1,2],2,3", &sm, msg, sizeof msg) == 4);
        c = tiny_config(&m, 4, 2, 4, 1, 42, IPUP_OPT_SGD, 0.05f, tiny_infeed, &d36);
        c.split = split;
        c.concurrent = &sm;
        tiny_pools(&c, 8, g_ipu, NULL, sizeof g_ipu[0], g_host, sizeof g_host);
        memset(&g_emu, 0, sizeof g_emu);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_UNSUPPORTED);
        TT_CHECK_MSG(strstr(ipup_last_error(&g_emu), says[i]) != NULL, "%.60s: '%.300s'", texts[i], ipup_last_error(&g_emu));
    }
}

TTEST(emulator_hostile) {
    static const struct { int model; const char *map; const char *says; int rc; } bad[] = {
        {0, "[0,1],2,2,3", "stage 0 is the first stage", IPUP_ERR_CONFIG},
        {0, "0,1,2,[3,4]", "stage 3 is the last stage", IPUP_ERR_CONFIG},
        {0, "0,[1,2],[3,4],5", "both concurrent", IPUP_ERR_CONFIG},
        {1, "0,[1,2,3,4,5,6,7],3", "splits conv6's 6 output units over 7 IPUs", IPUP_ERR_CONFIG},
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        static emu_out o;
        emu_run run = {bad[i].model, bad[i].map, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP, IPUP_OPT_SGD, 1, 1};
        emu_go(&run, &o);
        TT_CHECK_MSG(o.rc == bad[i].rc, "'%s': rc %d (%.200s)", bad[i].map, o.rc, o.msg);
        TT_CHECK_MSG(strstr(o.msg, bad[i].says) != NULL && o.msg[0], "'%s': message '%.300s' lacks '%s'", bad[i].map, o.msg, bad[i].says);
    }
    {
        static ipup_model_desc m;
        static ipup_stage_map sm;
        static emu_out o;
        ipup_config c;
        int32_t split[4];
        int16_t dev[4] = {0, 1, 2, 3};
        emu_run run = {0, "0,[1,2],2,3", IPUP_SCHED_ZBH1, IPUP_RUNNER_COOP, IPUP_OPT_SGD, 1, 1};
        emu_go(&run, &o);
        TT_EQ_INT(o.rc, IPUP_ERR_CONFIG);
        TT_CONTAINS(o.msg, "zb-h1 does not take concurrent stages");
        run.sched = IPUP_SCHED_GROUPED;
        TT_EQ_INT(emu_config(&run, &c, &m, &sm, split, o.msg, sizeof o.msg), 0);
        c.recompute = 1;
        memset(&g_emu, 0, sizeof g_emu);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_UNSUPPORTED);
        TT_CONTAINS(ipup_last_error(&g_emu), "recomputation");
        c.recompute = 0;
        c.stage_device = dev;
        memset(&g_emu, 0, sizeof g_emu);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&g_emu), "not both");
        c.stage_device = NULL;
        split[0] = 1; /* stage 1 starts at a relu */
        memset(&g_emu, 0, sizeof g_emu);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&g_emu), "holds layer 1 (relu, relu)");
        split[0] = 2;
        c.stages = 3; /* the map has 4 */
        memset(&g_emu, 0, sizeof g_emu);
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&g_emu), "maps 4 stages, but the model is split into 3");
        c.stages = 4;
        TT_EQ_INT(ipup_init(&g_emu, &c), IPUP_OK);
        {
            static ipup_transport tp; /* zero: refused before its hooks are looked at */
            TT_EQ_INT(ipup_set_transport(&g_emu, &tp), IPUP_ERR_UNSUPPORTED);
            TT_CONTAINS(ipup_last_error(&g_emu), "concurrent stages");
        }
        ipup_shutdown(&g_emu);
    }
}

/* a plain mapping through cfg.concurrent trains to the bits of cfg.stage_device */
TTEST(emulator_plain_map_through_concurrent) {
    static emu_out a, b;
    static ipup_model_desc m;
    static ipup_stage_map sm;
    ipup_config c;
    int32_t split[4], k, i, n = 0, same = 1;
    int16_t dev[4] = {0, 1, 0, 1};
    emu_run run = {0, "0,1,0,1", IPUP_SCHED_INTERLEAVED, IPUP_RUNNER_COOP, IPUP_OPT_MOMENTUM, 1, 2};
    emu_go(&run, &a);
    TT_CHECK_MSG(a.rc == 0, "%.300s", a.msg);
    TT_EQ_INT(emu_config(&run, &c, &m, &sm, split, b.msg, sizeof b.msg), 0);
    c.concurrent = NULL;
    c.stage_device = dev;
    memset(&g_emu, 0, sizeof g_emu);
    TT_EQ_INT(ipup_init(&g_emu, &c), 0);
    TT_EQ_INT(ipup_run(&g_emu, NULL), 0);
    for (k = 0; k < ipup_tensor_count(&g_emu); k++) {
        ipup_tensor_info ti;
        if (ipup_tensor_get(&g_emu, k, &ti) || ti.kind != IPUP_TENSOR_PARAM) continue;
        for (i = 0; i < ti.n; i++, n++) if (n >= a.n || memcmp(&a.w[n], &ti.data[i], sizeof(float))) same = 0;
    }
    ipup_shutdown(&g_emu);
    TT_EQ_INT(n, a.n);
    TT_CHECK(same);
}

/* the state stream of an emulator through memory */
static unsigned char g_state[1 << 16];
static size_t g_state_len;
static int state_put(void *user, const void *d, size_t n) {
    (void)user;
    if (n > sizeof g_state - g_state_len) return -1;
    memcpy(g_state + g_state_len, d, n);
    g_state_len += n;
    return 0;
}
static int state_get(void *user, uint64_t off, void *d, size_t n) {
    (void)user;
    if (off > g_state_len || n > g_state_len - off) return IPUP_STATE_END;
    memcpy(d, g_state + off, n);
    return 0;
}
/* the state of a run with map a, loaded into an emulator of map b: the result code, the
   message in msg */
static int state_across_maps(const char *a, const char *b, char *msg, size_t len) {
    static ipup_model_desc m;
    static ipup_stage_map sm;
    ipup_config c;
    int32_t split[4];
    int rc;
    emu_run run = {0, a, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP, IPUP_OPT_MOMENTUM, 1, 1};
    if (emu_config(&run, &c, &m, &sm, split, msg, len) != 0) return -100;
    memset(&g_emu, 0, sizeof g_emu);
    if (ipup_init(&g_emu, &c) != 0 || ipup_run(&g_emu, NULL) != 0) return -101;
    g_state_len = 0;
    rc = ipup_state_save(&g_emu, state_put, NULL);
    ipup_shutdown(&g_emu);
    if (rc) return -102;
    run.map = b;
    if (emu_config(&run, &c, &m, &sm, split, msg, len) != 0) return -103;
    memset(&g_emu, 0, sizeof g_emu);
    if (ipup_init(&g_emu, &c) != 0) return -104;
    rc = ipup_state_load(&g_emu, state_get, NULL);
    ipup_snprintf(msg, len, "%s", ipup_last_error(&g_emu));
    ipup_shutdown(&g_emu);
    return rc;
}

/* a state saved with one map of concurrent stages and loaded under another (or none) is
   refused with a message that names the map (--map, cfg.concurrent) and which side has
   the branches, not only "another model, optimizer or stage split" */
TTEST(state_across_maps_names_the_map) {
    static const struct { const char *a, *b, *words; } cases_[] = {
        {"0,[1,2],2,3", "0,1,2,3", "the file was saved with that stage split over IPUs, this emulator has it whole"},
        {"0,1,2,3", "0,[1,2],2,3", "this emulator splits the stage over IPUs, the file has it whole"},
        {"0,[1,2],2,3", "0,[1,2,3],2,3", "the file splits the stage over another set of IPUs"},
    };
    char msg[IPUP_MSG_MAX];
    size_t k;
    for (k = 0; k < sizeof cases_ / sizeof cases_[0]; k++) {
        int rc = state_across_maps(cases_[k].a, cases_[k].b, msg, sizeof msg);
        TT_CHECK_MSG(rc == IPUP_ERR_MISMATCH, "%s -> %s: %d %.300s", cases_[k].a, cases_[k].b, rc, msg);
        TT_CONTAINS(msg, cases_[k].words);
        TT_CONTAINS(msg, "saved with another --map, cfg.concurrent");
        TT_CONTAINS(msg, "map of concurrent stages (the tools' --map)");
    }
    TT_EQ_INT(state_across_maps("0,[1,2],2,3", "0,[1,2],2,3", msg, sizeof msg), IPUP_OK); /* the same map loads */
}

static const ttest_case cases[] = {
    TT_CASE(parse_plain),
    TT_CASE(parse_concurrent),
    TT_CASE(parse_hostile),
    TT_CASE(generate_guide_example),
    TT_CASE(generate_kinds_and_maps),
    TT_CASE(generate_plain_through_map),
    TT_CASE(generate_refusals),
    TT_CASE(guide_example_beats_serialised),
    TT_CASE(device_figures),
    TT_CASE(mutation_branch_moved),
    TT_CASE(mutation_branch_structure),
    TT_CASE(mutation_whole_op),
    TT_CASE(csv_round_trip),
    TT_CASE(csv_rule7),
    TT_CASE(grid_shows_branches),
    TT_CASE(emulator_bits_and_unsplit),
    TT_CASE(emulator_conv_replicas_adam),
    TT_CASE(emulator_init_slices),
    TT_CASE(emulator_hostile),
    TT_CASE(emulator_predict_concurrent),
    TT_CASE(emulator_concurrent_refuses_frozen_and_mse),
    TT_CASE(emulator_plain_map_through_concurrent),
    TT_CASE(state_across_maps_names_the_map),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
