/* test_sched_verify.c - verifier, measure, renderers, CSV and respace of ipupipe_sched.h.
 *
 * The verifier is checked against an independent brute-force reference of the rules of
 * docs/schedules.md §2 on every single mutation of valid tables (drop, duplicate, swap two
 * cells of a device, move an op one step earlier across a dependency, put a stage on a
 * second device): it must agree with the reference on each, and the mutations that
 * break a rule must all be caught. */
#include "ipupipe_sched.h"
#include "sched_fixtures.h"
#include "ttest.h"

#define CAP_OPS IPUP_SCHED_MAX_OPS(16, 64)
/* the kinds these tests generate with any S and mapping: grouped .. zb-h1 (the later kinds
   fix their mapping, the V or the loop: tests/test_sched_pytorch.c covers them) */
#define N_KINDS (IPUP_SCHED_ZBH1 + 1) /* dualpipe-v: dualpipev_tables */
static ipup_op g_ops[CAP_OPS], g_mut[CAP_OPS + 8], g_ops2[CAP_OPS];
static uint64_t g_work[IPUP_SCHED_WORK_BYTES(16, 64) / 8 + 8];
static char g_buf[1 << 20];
static ipup_buf g_b;

/* g_buf (cap bytes of it) as a writer's target: pass ipup_buf_write, gbuf(cap) */
static ipup_buf *gbuf(size_t cap) {
    g_b.buf = g_buf;
    g_b.cap = cap;
    g_b.len = 0;
    return &g_b;
}

static int gen_full(ipup_sched_kind kind, int S, int M, int V, const int16_t *map, ipup_op *ops, ipup_table *t, char *msg,
                    size_t len) {
    ipup_sched_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.stages = S;
    c.microbatches = M;
    c.virtual_stages = V;
    c.stage_device = map;
    return ipup_sched_generate(&c, ops, CAP_OPS, t, msg, len);
}
static int gen(ipup_sched_kind kind, int S, int M, ipup_table *t) {
    char msg[1024];
    return gen_full(kind, S, M, 0, NULL, g_ops, t, msg, sizeof msg);
}

static int verify(const ipup_table *t, ipup_sched_verify_info *vi, char *msg, size_t len) {
    return ipup_sched_verify(t, g_work, sizeof g_work, vi, msg, len);
}

/* ---- independent reference of docs/schedules.md §2: 1 when valid ---- */
static int ref_valid(const ipup_table *t) {
    static int32_t st[5][IPUP_SCHED_MAX_STAGES][64];
    static int32_t cnt[5][IPUP_SCHED_MAX_STAGES][64];
    int S = t->stages, M = t->microbatches, i, j, s, m;
    if (M > 64) return -1;
    memset(cnt, 0, sizeof cnt);
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->stage < 0 || o->stage >= S || o->mb < 0 || o->mb >= M || o->kind < 1 || o->kind > 4) return 0;
        if (o->device != t->stage_device[o->stage]) return 0; /* rule 2: stage on its device */
        for (j = 0; j < i; j++)                                 /* rule 2: one op per device per step */
            if (t->ops[j].step == o->step && t->ops[j].device == o->device) return 0;
        cnt[o->kind][o->stage][o->mb]++;
        st[o->kind][o->stage][o->mb] = o->step;
    }
    for (s = 0; s < S; s++)
        for (m = 0; m < M; m++) {
            int split = cnt[IPUP_OP_I][s][m] || cnt[IPUP_OP_W][s][m];
            int g = split ? IPUP_OP_I : IPUP_OP_B;
            if (cnt[IPUP_OP_F][s][m] != 1) return 0;
            if (split && (cnt[IPUP_OP_I][s][m] != 1 || cnt[IPUP_OP_W][s][m] != 1 || cnt[IPUP_OP_B][s][m] != 0)) return 0;
            if (!split && cnt[IPUP_OP_B][s][m] != 1) return 0;
            if (s > 0 && st[IPUP_OP_F][s][m] <= st[IPUP_OP_F][s - 1][m]) return 0;   /* rule 3 */
            if (st[g][s][m] <= st[IPUP_OP_F][s][m]) return 0;                         /* rule 4 */
            if (split && st[IPUP_OP_W][s][m] <= st[IPUP_OP_I][s][m]) return 0;        /* rule 5 */
        }
    for (s = 0; s + 1 < S; s++)
        for (m = 0; m < M; m++) {
            int g0 = (cnt[IPUP_OP_I][s][m] ? IPUP_OP_I : IPUP_OP_B), g1 = (cnt[IPUP_OP_I][s + 1][m] ? IPUP_OP_I : IPUP_OP_B);
            if (st[g0][s][m] <= st[g1][s + 1][m]) return 0; /* rule 4 */
        }
    return 1;
}

static ipup_table mut_table(const ipup_table *t) {
    ipup_table u = *t;
    u.ops = g_mut;
    u.cap_ops = CAP_OPS + 8;
    return u;
}

/* the step layout marks the failing step */
static void check_marked(const ipup_table *u, const ipup_sched_verify_info *vi) {
    char key[32];
    const char *line;
    if (vi->step < 0) return;
    TT_EQ_INT(ipup_sched_render_steps(u, vi->step, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    /* rows are numbered from 1 (Step 1 .. Step T), zero-padded to the digits of T */
    snprintf(key, sizeof key, "Step %0*d: ", u->steps >= 100 ? 3 : u->steps >= 10 ? 2 : 1, vi->step + 1);
    line = strstr(g_buf, key);
    TT_CHECK_MSG(line != NULL, "no row %s", key);
    if (line) {
        const char *nl = strchr(line, '\n');
        const char *mark = strstr(line, "<-- ERROR HERE");
        TT_CHECK(mark && nl && mark < nl);
        if (nl) TT_CHECK(strstr(nl, "<-- ERROR HERE") == NULL); /* only one row marked */
    }
}

static int g_rejected, g_accepted;

/* verify u; compare with the reference; 1 when they agree */
static int judge(ipup_table *u, const char *what, int expect_invalid) {
    ipup_sched_verify_info vi;
    char msg[1024];
    int rc, ref;
    ipup_sched_sort(u);
    rc = verify(u, &vi, msg, sizeof msg);
    ref = ref_valid(u);
    if (expect_invalid && ref) {
        TT_FAILF("%s: the reference says the mutation is valid", what);
        return 0;
    }
    if ((rc == IPUP_OK) != (ref == 1)) {
        TT_FAILF("%s: verifier rc %d, reference %d: %.300s", what, rc, ref, msg);
        return 0;
    }
    if (rc) {
        g_rejected++;
        TT_EQ_INT(rc, IPUP_ERR_INVALID_TABLE);
        TT_CHECK(vi.rule >= 1 && vi.rule <= 5);
        if (vi.step >= 0) { /* names the device, the step and the op */
            char tok[32];
            TT_CONTAINS(msg, "device");
            TT_CONTAINS(msg, "step");
            snprintf(tok, sizeof tok, "(%d,%d)", vi.stage, vi.mb);
            TT_CONTAINS(msg, tok);
            check_marked(u, &vi);
        }
    } else g_accepted++;
    return 1;
}

static void mutate_all(const ipup_table *t, const char *name) {
    int n = t->n_ops, i, j;
    char what[128];
    ipup_table u;
    /* drop one op */
    for (i = 0; i < n; i++) {
        u = mut_table(t);
        memcpy(g_mut, t->ops, (size_t)i * sizeof(ipup_op));
        memcpy(g_mut + i, t->ops + i + 1, (size_t)(n - i - 1) * sizeof(ipup_op));
        u.n_ops = n - 1;
        snprintf(what, sizeof what, "%s drop op %d", name, i);
        if (!judge(&u, what, 1)) return;
    }
    /* duplicate one op (in a new last column, so nothing else collides) */
    for (i = 0; i < n; i++) {
        u = mut_table(t);
        memcpy(g_mut, t->ops, (size_t)n * sizeof(ipup_op));
        g_mut[n] = t->ops[i];
        g_mut[n].step = t->steps;
        u.n_ops = n + 1;
        u.steps = t->steps + 1;
        snprintf(what, sizeof what, "%s duplicate op %d", name, i);
        if (!judge(&u, what, 1)) return;
    }
    /* swap two cells of one device (ops or idle cells): valid or not, agree with the reference */
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++) {
            int32_t a;
            if (t->ops[i].device != t->ops[j].device) continue;
            u = mut_table(t);
            memcpy(g_mut, t->ops, (size_t)n * sizeof(ipup_op));
            a = g_mut[i].step;
            g_mut[i].step = g_mut[j].step;
            g_mut[j].step = a;
            snprintf(what, sizeof what, "%s swap ops %d,%d", name, i, j);
            if (!judge(&u, what, 0)) return;
        }
    /* move an op into an earlier step of its device (idle cell): covers "one step earlier" */
    for (i = 0; i < n; i++) {
        int32_t s2;
        for (s2 = t->ops[i].step - 1; s2 >= 0 && s2 >= t->ops[i].step - 2; s2--) {
            int busy = 0;
            for (j = 0; j < n; j++) busy |= t->ops[j].device == t->ops[i].device && t->ops[j].step == s2;
            if (busy) continue;
            u = mut_table(t);
            memcpy(g_mut, t->ops, (size_t)n * sizeof(ipup_op));
            g_mut[i].step = s2;
            snprintf(what, sizeof what, "%s move op %d to step %d", name, i, s2);
            if (!judge(&u, what, 0)) return;
        }
    }
    /* one step earlier across a dependency: an op whose input is made in the step before */
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        int dep = 0;
        for (j = 0; j < n; j++) {
            const ipup_op *p = &t->ops[j];
            if (p->step != o->step - 1 || p->mb != o->mb) continue;
            if (o->kind == IPUP_OP_F && p->kind == IPUP_OP_F && p->stage == o->stage - 1) dep = 1;
            if ((o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) && p->kind == IPUP_OP_F && p->stage == o->stage) dep = 1;
            if ((o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) && (p->kind == IPUP_OP_B || p->kind == IPUP_OP_I) &&
                p->stage == o->stage + 1)
                dep = 1;
            if (o->kind == IPUP_OP_W && p->kind == IPUP_OP_I && p->stage == o->stage) dep = 1;
        }
        if (!dep) continue;
        u = mut_table(t);
        memcpy(g_mut, t->ops, (size_t)n * sizeof(ipup_op));
        g_mut[i].step--;
        snprintf(what, sizeof what, "%s op %d one step earlier across its dependency", name, i);
        if (!judge(&u, what, 1)) return;
    }
    /* put a stage on two devices: one op moves to another device (in a new column) */
    if (t->devices > 1)
        for (i = 0; i < n; i++) {
            u = mut_table(t);
            memcpy(g_mut, t->ops, (size_t)n * sizeof(ipup_op));
            g_mut[i].device = (int16_t)((g_mut[i].device + 1) % t->devices);
            snprintf(what, sizeof what, "%s op %d on a second device", name, i);
            if (!judge(&u, what, 1)) return;
        }
}

TTEST(verifier_accepts_builtins) {
    int k, S, M, maxM = ttest_slow() ? 8 : 32;
    char msg[1024];
    ipup_table t;
    ipup_sched_verify_info vi;
    for (k = 0; k < N_KINDS; k++)
        for (S = 1; S <= 8; S++)
            for (M = 1; M <= maxM; M++) {
                int rc = gen((ipup_sched_kind)k, S, M, &t);
                TT_CHECK_MSG(rc == 0, "%s S=%d M=%d rc %d", ipup_sched_kind_name((ipup_sched_kind)k), S, M, rc);
                if (rc) return;
                rc = verify(&t, &vi, msg, sizeof msg);
                TT_CHECK_MSG(rc == 0, "%s S=%d M=%d: %.300s", ipup_sched_kind_name((ipup_sched_kind)k), S, M, msg);
                TT_CHECK_MSG(vi.in_order == 1, "%s S=%d M=%d not in order", ipup_sched_kind_name((ipup_sched_kind)k), S, M);
                TT_EQ_INT(ref_valid(&t), 1);
                TT_EQ_INT(t.n_ops, (k == IPUP_SCHED_ZBH1 ? 3 : 2) * S * M);
                if (ttest_failures_) return;
            }
}

TTEST(verifier_rejects_mutations) {
    static const int sizes[][2] = {{1, 3}, {2, 3}, {3, 4}, {4, 5}, {4, 8}};
    int k, z, nz = ttest_slow() ? 3 : 5;
    ipup_table t;
    char name[64];
    g_rejected = g_accepted = 0;
    for (k = 0; k < N_KINDS; k++)
        for (z = 0; z < nz; z++) {
            TT_EQ_INT(gen((ipup_sched_kind)k, sizes[z][0], sizes[z][1], &t), 0);
            snprintf(name, sizeof name, "%s S=%d M=%d", ipup_sched_kind_name((ipup_sched_kind)k), sizes[z][0], sizes[z][1]);
            mutate_all(&t, name);
            if (ttest_failures_) return;
        }
    printf("    mutations rejected %d, valid swaps/moves accepted %d\n", g_rejected, g_accepted);
    TT_CHECK(g_rejected > 1000);
}

/* specific messages */
TTEST(verifier_messages) {
    ipup_table t, u;
    ipup_sched_verify_info vi;
    char msg[1024];
    int i;
    TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED, 4, 8, &t), 0);
    /* B(2,0) (step 5) moved to the idle step 3 of device 2, before B(3,0) at step 4 */
    u = mut_table(&t);
    memcpy(g_mut, t.ops, (size_t)t.n_ops * sizeof(ipup_op));
    for (i = 0; i < t.n_ops; i++)
        if (g_mut[i].kind == IPUP_OP_B && g_mut[i].stage == 2 && g_mut[i].mb == 0) g_mut[i].step = 3;
    ipup_sched_sort(&u);
    TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 4);
    TT_EQ_INT(vi.step, 3);
    TT_EQ_INT(vi.device, 2);
    TT_CONTAINS(msg, "device 2, step 4"); /* index 3: the fourth step, as people count */
    TT_CONTAINS(msg, "B(2,0) [2B0]");
    TT_CONTAINS(msg, "B(3,0)");
    TT_CONTAINS(msg, "which runs at step 5"); /* B(3,0) at index 4 */
    TT_CONTAINS(msg, "step 6 or later");
    /* unsorted table */
    u = mut_table(&t);
    memcpy(g_mut, t.ops, (size_t)t.n_ops * sizeof(ipup_op));
    {
        ipup_op tmp = g_mut[0];
        g_mut[0] = g_mut[5];
        g_mut[5] = tmp;
    }
    TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 6);
    TT_CONTAINS(msg, "ipup_sched_sort");
    /* work too small, NULL table */
    TT_EQ_INT(ipup_sched_verify(&t, g_work, 16, &vi, msg, sizeof msg), IPUP_ERR_CAPACITY);
    TT_CONTAINS(msg, "IPUP_SCHED_WORK_BYTES");
    TT_EQ_INT(ipup_sched_verify(NULL, g_work, sizeof g_work, &vi, msg, sizeof msg), IPUP_ERR_ARG);
    /* missing op */
    u = mut_table(&t);
    memcpy(g_mut, t.ops, (size_t)t.n_ops * sizeof(ipup_op));
    u.n_ops = t.n_ops - 1; /* drops B(0,7), the last op */
    TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 1);
    TT_CONTAINS(msg, "B(0,7) [0B7] is missing");
    TT_STREQ(ipup_result_str(IPUP_ERR_INVALID_TABLE), "IPUP_ERR_INVALID_TABLE: the schedule table breaks a dependency rule");
    TT_STREQ(ipup_result_str(IPUP_OK), "IPUP_OK: ok");
    TT_STREQ(ipup_result_str(42), "unknown result");
}

/* ---- generation: configurations ---- */
TTEST(config_errors_and_warnings) {
    ipup_sched_config c;
    ipup_table t;
    char msg[1024];
    int16_t map[4] = {0, 1, 0, 1};
    memset(&c, 0, sizeof c);
    c.kind = IPUP_SCHED_INTERLEAVED; c.stages = 4; c.microbatches = 6;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    TT_CONTAINS(msg, "gradient_accumulation_count (M=6)");
    TT_CONTAINS(msg, "multiple of the number of pipeline stages (S=4)");
    c.strict = 1;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "PipelineSchedule.Interleaved");
    TT_CONTAINS(msg, "must be a multiple");
    c.microbatches = 8;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    TT_CHECK(msg[0] == 0);
    c.kind = IPUP_SCHED_GROUPED; c.microbatches = 12;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "2 x the number of pipeline stages (2S=8)");
    c.strict = 0;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    TT_CONTAINS(msg, "PipelineSchedule.Grouped");
    /* per schedule, never blanket: GPipe with M < S is fine (only the fill warning) */
    c.kind = IPUP_SCHED_GPIPE; c.microbatches = 2; c.strict = 1;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    TT_CONTAINS(msg, "never fills");
    /* power-of-two IPUs: Graphcore schedules only */
    c.kind = IPUP_SCHED_GROUPED; c.stages = 3; c.microbatches = 12; c.strict = 1;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "powers of two");
    c.kind = IPUP_SCHED_1F1B;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    /* ranges */
    c.stages = 0;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "stages S=0");
    c.stages = 4; c.microbatches = 0;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "M=0");
    c.microbatches = 8; c.devices = 2; c.strict = 0;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "stage 2 is mapped to device 2");
    c.stage_device = map;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.devices, 2);
    /* capacity */
    c.devices = 0; c.stage_device = NULL;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, 10, &t, msg, sizeof msg), IPUP_ERR_CAPACITY);
    TT_CONTAINS(msg, "IPUP_SCHED_MAX_OPS(4, 8)");
    TT_EQ_INT(ipup_sched_generate(NULL, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_ARG);
    /* interleaved-1f1b: mapping is s mod P; S must be a multiple of V; Megatron's M % P */
    c.kind = IPUP_SCHED_INTERLEAVED_1F1B; c.stages = 6; c.virtual_stages = 4;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "multiple of V");
    c.virtual_stages = 2; c.microbatches = 7;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), 0);
    TT_CONTAINS(msg, "Megatron");
    c.strict = 1;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "multiple of the pipeline-parallel size (P=3)");
    c.strict = 0; c.microbatches = 6; c.stage_device = map;
    c.stages = 4;
    {
        int16_t m2[4] = {0, 0, 1, 1};
        c.stage_device = m2;
        TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
        TT_CONTAINS(msg, "s mod P");
    }
    /* kind names */
    {
        ipup_sched_kind k;
        int i;
        for (i = 0; i < N_KINDS; i++) {
            TT_EQ_INT(ipup_sched_kind_parse(ipup_sched_kind_name((ipup_sched_kind)i), &k), 0);
            TT_EQ_INT(k, i);
        }
        TT_EQ_INT(ipup_sched_kind_parse("ZB_H1", &k), 0);
        TT_EQ_INT(k, IPUP_SCHED_ZBH1);
        TT_EQ_INT(ipup_sched_kind_parse("nope", &k), IPUP_ERR_PARSE);
    }
}

/* Several stages on one device (PopXL's 0,1,0 and others): every schedule honours the
   mapping, verifies, accumulates in order. */
TTEST(shared_device_mappings) {
    static const int16_t maps[][6] = {{0, 1, 0, 0, 0, 0}, {0, 0, 1, 1, 0, 0}, {0, 1, 1, 0, 0, 0}, {0, 1, 2, 0, 1, 2}, {1, 0, 2, 3, 0, 0}};
    static const int nst[] = {3, 4, 4, 6, 4};
    int k, z, M;
    char msg[1024];
    ipup_table t;
    ipup_sched_verify_info vi;
    for (k = 0; k < N_KINDS; k++) {
        if (k == IPUP_SCHED_INTERLEAVED_1F1B) continue;
        for (z = 0; z < 5; z++)
            for (M = 1; M <= 16; M++) {
                int rc = gen_full((ipup_sched_kind)k, nst[z], M, 0, maps[z], g_ops, &t, msg, sizeof msg);
                int s;
                TT_CHECK_MSG(rc == 0, "%s map %d M=%d: %.200s", ipup_sched_kind_name((ipup_sched_kind)k), z, M, msg);
                if (rc) return;
                for (s = 0; s < nst[z]; s++) TT_EQ_INT(t.stage_device[s], maps[z][s]);
                if (k == IPUP_SCHED_GROUPED) { /* every step all-forward or all-backward */
                    int i;
                    for (i = 1; i < t.n_ops; i++)
                        if (t.ops[i].step == t.ops[i - 1].step && (t.ops[i].kind == IPUP_OP_F) != (t.ops[i - 1].kind == IPUP_OP_F))
                            TT_FAILF("grouped map %d M=%d: step %d mixes forward and backward", z, M, t.ops[i].step);
                }
                rc = verify(&t, &vi, msg, sizeof msg);
                TT_CHECK_MSG(rc == 0, "%s map %d M=%d: %.300s", ipup_sched_kind_name((ipup_sched_kind)k), z, M, msg);
                TT_CHECK(vi.in_order);
                if (ttest_failures_) return;
            }
    }
}

/* Megatron interleaved 1F1B: each device runs its program (Megatron-LM schedules.py:
   warm-up (P-r-1)*2 + (V-1)*P forwards, 1F1B, cool-down; chunk of forward k is
   (k mod PV) / P, micro-batch (k / PV) P + k mod P; backward chunks reversed) in order. */
TTEST(interleaved_1f1b_megatron_program) {
    int P, V, g, M;
    char msg[1024];
    ipup_table t;
    ipup_sched_verify_info vi;
    for (P = 1; P <= 4; P++)
        for (V = 2; V <= 4; V++)
            for (g = 1; g <= 8; g++) {
                int S = P * V, r, total;
                M = g * P;
                total = M * V;
                TT_EQ_INT(gen_full(IPUP_SCHED_INTERLEAVED_1F1B, S, M, V, NULL, g_ops, &t, msg, sizeof msg), 0);
                TT_EQ_INT(t.devices, P);
                TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
                TT_CHECK(vi.in_order);
                for (r = 0; r < P; r++) {
                    int warm = (P - r - 1) * 2 + (V - 1) * P, k = 0, nf = 0, nb = 0, i;
                    if (warm > total) warm = total;
                    for (i = 0; i < t.n_ops; i++) {
                        const ipup_op *o = &t.ops[i];
                        int isf, idx, chunk, mb;
                        if (o->device != r) continue;
                        isf = k < warm ? 1 : (nf < total && ((k - warm) % 2 == 0 || nb >= total)) ? 1 : 0;
                        if (k >= warm && nf >= total) isf = 0;
                        idx = isf ? nf++ : nb++;
                        chunk = (idx % (P * V)) / P;
                        mb = (idx / (P * V)) * P + idx % P;
                        if (!isf) chunk = V - 1 - chunk;
                        if (o->kind != (isf ? IPUP_OP_F : IPUP_OP_B) || o->stage != chunk * P + r || o->mb != mb) {
                            TT_FAILF("P=%d V=%d M=%d device %d op %d: got %c(%d,%d), Megatron program says %c(%d,%d)", P, V, M, r, k,
                                     "?FBIW"[o->kind], o->stage, o->mb, isf ? 'F' : 'B', chunk * P + r, mb);
                            return;
                        }
                        k++;
                    }
                }
            }
    /* M % P != 0 (outside Megatron's rule): Megatron's program for the next multiple of P
       with the extra micro-batches' ops left out; runs (no deadlock), verifies, in order,
       and each device keeps the relative order of the padded program */
    for (P = 2; P <= 6; P++)
        for (V = 2; V <= 3; V++)
            for (M = 1; M <= 20; M++) {
                int S = P * V, Mp = (M + P - 1) / P * P, r;
                TT_EQ_INT(gen_full(IPUP_SCHED_INTERLEAVED_1F1B, S, M, V, NULL, g_ops, &t, msg, sizeof msg), 0);
                if (M % P) TT_CONTAINS(msg, "Megatron");
                TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
                TT_CHECK(vi.in_order);
                for (r = 0; r < P; r++) {
                    int total = Mp * V, warm = (P - r - 1) * 2 + (V - 1) * P, k = 0, nf = 0, nb = 0, i = 0;
                    if (warm > total) warm = total;
                    for (k = 0; k < 2 * total; k++) { /* walk the padded program, match real ops */
                        int isf = k < warm || (nf < total && ((k - warm) % 2 == 0 || nb >= total));
                        int idx, chunk, mb;
                        if (k >= warm && nf >= total) isf = 0;
                        idx = isf ? nf++ : nb++;
                        chunk = (idx % (P * V)) / P;
                        mb = (idx / (P * V)) * P + idx % P;
                        if (!isf) chunk = V - 1 - chunk;
                        if (mb >= M) continue;
                        while (i < t.n_ops && t.ops[i].device != r) i++;
                        if (i >= t.n_ops || t.ops[i].stage != chunk * P + r || t.ops[i].mb != mb ||
                            t.ops[i].kind != (isf ? IPUP_OP_F : IPUP_OP_B)) {
                            TT_FAILF("P=%d V=%d M=%d device %d: op %d differs from the padded program", P, V, M, r, i);
                            return;
                        }
                        i++;
                    }
                }
                if (ttest_failures_) return;
            }
}

/* ZB-H1: I/W split, in order, peak in-flight never above 1F1B's peak min(M, S); with
   F=I=W=1 (B=2) its BSP time is never worse than 1F1B's. */
TTEST(zbh1_properties) {
    int S, M;
    char msg[1024];
    ipup_table t;
    ipup_sched_figures fz, f1;
    ipup_sched_cost c = ipup_sched_cost_default();
    for (S = 1; S <= 8; S++)
        for (M = 1; M <= 24; M++) {
            int s, improved;
            TT_EQ_INT(gen_full(IPUP_SCHED_1F1B, S, M, 0, NULL, g_ops, &t, msg, sizeof msg), 0);
            TT_EQ_INT(ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f1), 0);
            TT_EQ_INT(gen_full(IPUP_SCHED_ZBH1, S, M, 0, NULL, g_ops, &t, msg, sizeof msg), 0);
            TT_EQ_INT(t.split_backward, 1);
            TT_EQ_INT(ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &fz), 0);
            for (s = 0; s < S; s++) TT_CHECK(fz.peak_inflight[s] <= (M < S ? M : S));
            TT_CHECK(fz.in_order);
            TT_NEAR(fz.work, f1.work, 1e-9);
            improved = fz.bsp_time <= f1.bsp_time + 1e-9;
            TT_CHECK_MSG(improved, "S=%d M=%d: zb-h1 BSP %g > 1f1b %g", S, M, fz.bsp_time, f1.bsp_time);
            if (ttest_failures_) return;
        }
}

/* ---- measure ---- */
TTEST(measure_seed_facts) {
    ipup_table t;
    ipup_sched_figures f;
    ipup_sched_cost c = ipup_sched_cost_default(); /* F=1, B=2 */
    int S, M;
    TT_EQ_INT(gen(IPUP_SCHED_GROUPED, 4, 16, &t), 0);
    TT_EQ_INT(ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f), 0);
    TT_NEAR(f.bsp_time, 57.0, 1e-9);
    TT_EQ_INT(f.first_mb_done, 11);
    TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED, 4, 16, &t), 0);
    TT_EQ_INT(ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f), 0);
    TT_NEAR(f.bsp_time, 72.0, 1e-9);
    TT_EQ_INT(f.first_mb_done, 8);
    TT_NEAR(f.work, 4 * 16 * 3, 1e-9); /* ideal 3M per device */
    /* first micro-batch completion: Interleaved 2S; Grouped 3S-1 when M >= S, else 2S+M-1 */
    for (S = 1; S <= 8; S++)
        for (M = 1; M <= 32; M++) {
            gen(IPUP_SCHED_INTERLEAVED, S, M, &t);
            ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f);
            TT_EQ_INT(f.first_mb_done, 2 * S);
            TT_EQ_INT(f.first_mb, 0);
            gen(IPUP_SCHED_GROUPED, S, M, &t);
            ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f);
            TT_EQ_INT(f.first_mb_done, M >= S ? 3 * S - 1 : 2 * S + M - 1);
            /* Grouped steps are homogeneous: BSP time = (M+S-1) F-steps + (M+S-1) B-steps */
            TT_NEAR(f.bsp_time, (M + S - 1) * (c.f + c.b), 1e-9);
            /* GPipe async makespan: 3(M+S-1) with F=1, B=2; sequential: everything in series */
            gen(IPUP_SCHED_GPIPE, S, M, &t);
            ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f);
            TT_NEAR(f.async_time, 3.0 * (M + S - 1), 1e-9);
            gen(IPUP_SCHED_SEQUENTIAL, S, M, &t);
            ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f);
            TT_NEAR(f.async_time, 3.0 * S * M, 1e-9);
            TT_NEAR(f.bsp_time, 3.0 * S * M, 1e-9);
            TT_NEAR(f.bubble_bsp, 1.0 - 1.0 / S, 1e-12);
            if (ttest_failures_) return;
        }
}

/* BSP time recomputed from its definition by scanning a dense grid, sync and exchange
   adding what they should, bubbles, stash, utilisation and phases. */
TTEST(measure_definitions) {
    static double cell[64][64];
    ipup_table t;
    ipup_sched_figures f, f2;
    ipup_sched_cost c = ipup_sched_cost_default();
    int k, i, d, st;
    int64_t act[8] = {100, 200, 300, 400, 500, 600, 700, 800};
    c.f = 1.5; c.b = 2.25; c.i = 1.25; c.w = 0.75;
    for (k = 0; k < N_KINDS; k++) {
        double bsp = 0.0, work = 0.0;
        int s;
        TT_EQ_INT(gen((ipup_sched_kind)k, 4, 6, &t), 0);
        TT_CHECK(t.steps <= 64);
        memset(cell, 0, sizeof cell);
        for (i = 0; i < t.n_ops; i++) {
            double v = t.ops[i].kind == IPUP_OP_F ? c.f : t.ops[i].kind == IPUP_OP_B ? c.b : t.ops[i].kind == IPUP_OP_I ? c.i : c.w;
            cell[t.ops[i].step][t.ops[i].device] = v;
            work += v;
        }
        for (st = 0; st < t.steps; st++) {
            double mx = 0.0;
            for (d = 0; d < t.devices; d++) mx = cell[st][d] > mx ? cell[st][d] : mx;
            bsp += mx;
        }
        TT_EQ_INT(ipup_sched_measure(&t, &c, act, g_work, sizeof g_work, &f), 0);
        TT_NEAR(f.bsp_time, bsp, 1e-9);
        TT_NEAR(f.work, work, 1e-9);
        TT_NEAR(f.bubble_bsp, 1.0 - work / (t.devices * bsp), 1e-12);
        TT_NEAR(f.unit_utilisation, (double)t.n_ops / (t.steps * t.devices), 1e-12);
        TT_CHECK(f.async_time <= f.bsp_time + 1e-9); /* no global barriers: never slower */
        for (s = 0; s < 4; s++) TT_EQ_INT(f.stash_bytes[s], f.peak_inflight[s] * act[s]);
        TT_EQ_INT(f.stash_total, f.stash_bytes[0] + f.stash_bytes[1] + f.stash_bytes[2] + f.stash_bytes[3]);
        /* sync is paid once per step */
        c.sync = 0.5;
        TT_EQ_INT(ipup_sched_measure(&t, &c, act, g_work, sizeof g_work, &f2), 0);
        TT_NEAR(f2.bsp_time - f.bsp_time, 0.5 * t.steps, 1e-9);
        c.sync = 0.0;
        /* exchange: default mapping, something crosses devices in most steps */
        c.exchange = 1.0;
        TT_EQ_INT(ipup_sched_measure(&t, &c, act, g_work, sizeof g_work, &f2), 0);
        TT_CHECK(f2.bsp_time > f.bsp_time);
        TT_CHECK(f2.async_time >= f.async_time);
        c.exchange = 0.0;
        if (k == IPUP_SCHED_INTERLEAVED) {
            /* phases as the tutorials define them: IPU0 idles every other step until it
               runs F(0,S-1) at 2S-2 = 6, from where all four IPUs are busy; the last step
               with all busy is IPU0's B(0,M-S) at 2M-1 = 11 (F(s,m) at s+2m, B at 2S-1-s+2m) */
            TT_EQ_INT(f.ramp_up[0], 0); TT_EQ_INT(f.ramp_up[1], 5);
            TT_EQ_INT(f.main_phase[0], 6); TT_EQ_INT(f.main_phase[1], 11);
            TT_EQ_INT(f.ramp_down[0], 12); TT_EQ_INT(f.ramp_down[1], t.steps - 1);
        }
    }
    /* everything on one device: no exchange ever */
    {
        int16_t one[4] = {0, 0, 0, 0};
        char msg[512];
        TT_EQ_INT(gen_full(IPUP_SCHED_SEQUENTIAL, 4, 4, 0, one, g_ops, &t, msg, sizeof msg), 0);
        c.exchange = 5.0;
        TT_EQ_INT(ipup_sched_measure(&t, &c, NULL, g_work, sizeof g_work, &f), 0);
        TT_NEAR(f.bsp_time, 4 * 4 * (c.f + c.b), 1e-9);
    }
}

/* ---- renderers ---- */
TTEST(renderers) {
    ipup_table t;
    ipup_sched_figures f;
    size_t n, n2;
    int i, count;
    const char *p;
    TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED, 4, 8, &t), 0);
    TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &f), 0);
    TT_EQ_INT(ipup_sched_render_grid(&t, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    n = g_b.len;
    {
        static const char row0[] = "IPU0  F0 .. F1 .. F2 .. F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 .. B5 .. B6 .. B7\n";
        TT_CHECK(strncmp(g_buf, row0, sizeof row0 - 1) == 0);
    }
    TT_EQ_INT(n, strlen(g_buf));
    /* too small a buffer: the text does not fit, and the size needed */
    TT_EQ_INT(ipup_sched_render_grid(&t, ipup_buf_write, gbuf(10)), IPUP_OK);
    TT_CHECK(!ipup_buf_fits(&g_b));
    n2 = g_b.len;
    TT_EQ_INT(n2, n);
    /* the step-number line (1-based, over the cells), then the same grid */
    TT_EQ_INT(ipup_sched_render_grid_ex(&t, IPUP_SCHED_GRID_STEPS, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    {
        static const char ruler[] = "step  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15 16 17 18 19 20 21 22\n"
                                    "IPU0  F0 .. F1 .. F2 .. F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 .. B5 .. B6 .. B7\n";
        TT_CHECK(strncmp(g_buf, ruler, sizeof ruler - 1) == 0);
    }
    TT_EQ_INT(g_b.len, n + 72); /* the grid plus the ruler: 71 characters and a newline */
    TT_EQ_INT(ipup_sched_render_steps(&t, 3, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    n = g_b.len;
    {
        /* PyTorch's layout (header indented by len("Step 00") + 2, columns padded to the
           widest cell), the rows numbered from 1 */
        static const char head[] = "         Rank 0 Rank 1 Rank 2 Rank 3\nStep 01: 0F0                        \n";
        TT_CHECK(strncmp(g_buf, head, sizeof head - 1) == 0);
    }
    TT_CONTAINS(g_buf, "Step 04:        1F1           3F0    <-- ERROR HERE\n");
    TT_CONTAINS(g_buf, "Step 05: 0F2           2F1    3B0   \n");
    TT_EQ_INT(ipup_sched_render_steps(&t, 3, ipup_buf_write, gbuf(20)), IPUP_OK);
    TT_CHECK(!ipup_buf_fits(&g_b));
    n2 = g_b.len;
    TT_EQ_INT(n2, n);
    TT_EQ_INT(ipup_sched_write_csv(&t, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    TT_CHECK(strncmp(g_buf, "0F0,,0F1,,0F2,,0F3,0B0,", 23) == 0);
    TT_EQ_INT(ipup_sched_write_trace(&t, NULL, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    TT_CHECK(strncmp(g_buf, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", 39) == 0);
    for (count = 0, p = g_buf; (p = strstr(p, "\"ph\":\"X\"")) != NULL; p++) count++;
    TT_EQ_INT(count, t.n_ops + t.devices + 3); /* the ops, an update per device, 3 phase spans */
    for (count = 0, p = g_buf; (p = strstr(p, "\"cname\":\"thread_state_running\"")) != NULL; p++) count++;
    TT_EQ_INT(count, t.n_ops / 2); /* one colour for the forwards */
    TT_CONTAINS(g_buf, "\"name\":\"3B7\"");
    /* interleaved S=4 M=8: ramp-up steps 0..5 cost 1,1,1,1,2,2 (B=2 from step 4); main steps 6..15 cost 2 each */
    TT_CONTAINS(g_buf, "{\"name\":\"main\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":4,\"tid\":0,\"ts\":8000.000,"
                       "\"dur\":20000.000,\"args\":{\"first_step\":6,\"last_step\":15}}");
    TT_CONTAINS(g_buf, "{\"name\":\"U\",\"cat\":\"U\",\"ph\":\"X\",\"pid\":3,\"tid\":0,\"ts\":40000.000,");
    TT_EQ_INT(ipup_sched_write_svg(&t, NULL, &f, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    TT_CHECK(strncmp(g_buf, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    for (count = 0, p = g_buf; (p = strstr(p, "<title>")) != NULL; p++) count++;
    TT_EQ_INT(count, t.n_ops + t.devices); /* one tooltip per op, one per device's update U */
    TT_CONTAINS(g_buf, "<title>3B7 step 19</title>"); /* B(3,7) at index 18: 1-based in the tooltip */
    /* the default title, with the timing (ipup_sched_write_svg draws BSP time) */
    TT_CONTAINS(g_buf, ">S=4 M=8 P=4 T=22   cost F=1 B=2 exchange=0 sync=0   BSP (lock-step) time<");
    TT_CHECK(strstr(g_buf, "input grad I") == NULL && strstr(g_buf, "weight grad W") == NULL); /* only kinds present */
    TT_CONTAINS(g_buf, ">ramp-up<");
    TT_CONTAINS(g_buf, ">main<");
    TT_CONTAINS(g_buf, ">ramp-down<");
    TT_CONTAINS(g_buf, ">U<");
    TT_CONTAINS(g_buf, "</svg>\n");
    TT_EQ_INT(ipup_sched_write_json(&t, &f, "interleaved", "w1\nw2\n", ipup_buf_write, gbuf(sizeof g_buf)), 0);
    {
        static const char *keys[] = {"\"schedule\":\"interleaved\"", "\"stages\":4", "\"microbatches\":8", "\"devices\":4",
                                     "\"steps\":22", "\"unit_utilisation\":", "\"bsp_time\":", "\"async_time\":",
                                     "\"bubble_fraction\":", "\"peak_inflight\":[4,3,2,1]", "\"first_microbatch_done\":8",
                                     "\"in_order\":true", "\"warnings\":[\"w1\",\"w2\"]"};
        for (i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++) TT_CONTAINS(g_buf, keys[i]);
    }
    /* a device with several stages shows the stage in grid cells */
    {
        int16_t map[3] = {0, 1, 0};
        char msg[512];
        TT_EQ_INT(gen_full(IPUP_SCHED_INTERLEAVED, 3, 6, 0, map, g_ops, &t, msg, sizeof msg), 0);
        TT_EQ_INT(ipup_sched_render_grid(&t, ipup_buf_write, gbuf(sizeof g_buf)), 0);
        TT_CHECK(strncmp(g_buf, "IPU0  0F0 ", 10) == 0);
        TT_CONTAINS(g_buf, "2F0");
    }
}

/* ---- the write callback: failures, ipup_buf ---- */
typedef struct failing {
    size_t budget, taken; /* accepts budget bytes, then fails */
    int failed, calls_after;
} failing;
static int failing_write(void *user, const void *data, size_t len) {
    failing *f = (failing *)user;
    (void)data;
    if (f->failed) { f->calls_after++; return -1; }
    if (f->taken + len > f->budget) { f->failed = 1; return -1; }
    f->taken += len;
    return 0;
}

/* writer k of the six on table t into (write, user) */
static int write_doc(int k, const ipup_table *t, const ipup_sched_figures *f, ipup_write_fn write, void *user) {
    switch (k) {
    case 0: return ipup_sched_render_grid(t, write, user);
    case 1: return ipup_sched_render_steps(t, 2, write, user);
    case 2: return ipup_sched_write_csv(t, write, user);
    case 3: return ipup_sched_write_trace(t, NULL, write, user);
    case 4: return ipup_sched_write_svg(t, NULL, f, write, user);
    default: return ipup_sched_write_json(t, f, "zb-h1", "a warning\n", write, user);
    }
}

TTEST(writers_io_error_and_buf) {
    static char full[1 << 16];
    ipup_table t;
    ipup_sched_figures f;
    int k;
    TT_EQ_INT(gen(IPUP_SCHED_ZBH1, 4, 8, &t), 0);
    TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &f), 0);
    for (k = 0; k < 6; k++) {
        static const size_t budgets[] = {0, 1, 100, 600, 5000};
        ipup_buf q = {NULL, 0, 0};
        size_t L, cap;
        int b;
        /* the size query (NULL, 0), then the whole text */
        TT_EQ_INT(write_doc(k, &t, &f, ipup_buf_write, &q), IPUP_OK);
        L = q.len;
        TT_CHECK(L > 100 && L < sizeof full);
        TT_CHECK(!ipup_buf_fits(&q));
        q.buf = full; q.cap = sizeof full; q.len = 0;
        TT_EQ_INT(write_doc(k, &t, &f, ipup_buf_write, &q), IPUP_OK);
        TT_EQ_INT(q.len, L);
        TT_EQ_INT(strlen(full), L);
        TT_CHECK(ipup_buf_fits(&q));
        /* cut texts: a NUL-terminated prefix, len the full size */
        for (cap = 1; cap < L + 3; cap += cap < 40 ? 1 : 97) {
            ipup_buf c = {g_buf, cap, 0};
            memset(g_buf, 'x', cap + 8);
            TT_EQ_INT(write_doc(k, &t, &f, ipup_buf_write, &c), IPUP_OK);
            TT_EQ_INT(c.len, L);
            TT_EQ_INT(ipup_buf_fits(&c), cap > L);
            TT_EQ_INT(strlen(g_buf), cap - 1 < L ? cap - 1 : L);
            TT_CHECK(memcmp(g_buf, full, strlen(g_buf)) == 0);
            TT_EQ_INT(g_buf[cap], 'x'); /* nothing past cap */
        }
        /* a writer that fails: IPUP_ERR_IO, and no call after the failure */
        for (b = 0; b < 5; b++) {
            failing fw = {budgets[b], 0, 0, 0};
            TT_EQ_INT(write_doc(k, &t, &f, failing_write, &fw), budgets[b] >= L ? IPUP_OK : IPUP_ERR_IO);
            TT_EQ_INT(fw.calls_after, 0);
            TT_CHECK(fw.taken <= budgets[b]);
        }
        {
            failing fw = {(size_t)-1, 0, 0, 0};
            TT_EQ_INT(write_doc(k, &t, &f, failing_write, &fw), IPUP_OK);
            TT_EQ_INT(fw.taken, L);
        }
        /* no callback: a bad argument */
        TT_EQ_INT(write_doc(k, &t, &f, NULL, NULL), IPUP_ERR_ARG);
    }
    {
        ipup_buf z = {g_buf, 1, 0};
        g_buf[0] = 'x';
        TT_EQ_INT(ipup_buf_write(&z, "abc", 3), 0);
        TT_EQ_INT(g_buf[0], 0);
        TT_EQ_INT(z.len, 3);
        TT_EQ_INT(ipup_buf_write(&z, "de", 2), 0);
        TT_EQ_INT(z.len, 5);
    }
}

/* ---- CSV ---- */
static int load(const char *text, ipup_table *t, char *msg, size_t len) {
    return ipup_sched_csv_load(text, strlen(text), g_ops2, CAP_OPS, g_work, sizeof g_work, t, msg, len);
}

/* The SVG with costs far apart stays bounded: the longest step fits the width (it was a
   1.3e11 px canvas with an axis of 3e9 ticks, found by the fuzzer), never folding stops at
   1048576 px, and a cost that is negative, NaN, infinite, subnormal or above 1e15 is refused
   (0 and the smallest normal double are taken). */
TTEST(svg_costs_far_apart) {
    ipup_table t;
    ipup_sched_cost c = ipup_sched_cost_default();
    ipup_sched_svg_opts o;
    volatile double zero = 0.0; /* NaN and infinity made at run time */
    double scale[3] = {1.0, 1.0, 1.0}, bad[8];
    int k, w = 0;
    bad[0] = -1.0; bad[1] = zero / zero; bad[2] = 1.0 / zero; bad[3] = 1e16; bad[4] = 1e-310;
    bad[5] = IPUP_SCHED_COST_MAX; bad[6] = IPUP_SCHED_COST_MIN; bad[7] = 0.0;
    TT_EQ_INT(gen(IPUP_SCHED_GROUPED, 3, 6, &t), 0);
    c.f = 16666666666.0;
    TT_EQ_INT(ipup_sched_write_svg(&t, &c, NULL, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    TT_CHECK(ipup_buf_fits(&g_b) && g_b.len < 200000);
    TT_CHECK(sscanf(g_buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\"", &w) == 1 && w == 1600);
    memset(&o, 0, sizeof o);
    o.width = -1.0; /* never fold */
    c.f = 1e12;
    /* zeroed options are async timing, which needs scratch */
    TT_EQ_INT(ipup_sched_write_svg_ex(&t, &c, NULL, &o, ipup_buf_write, gbuf(sizeof g_buf)), IPUP_ERR_CAPACITY);
    o.timing = IPUP_SCHED_TIMING_BSP;
    TT_EQ_INT(ipup_sched_write_svg_ex(&t, &c, NULL, &o, ipup_buf_write, gbuf(sizeof g_buf)), 0);
    TT_CHECK(sscanf(g_buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\"", &w) == 1 && w <= 1048576 && w > 1000000);
    for (k = 0; k < 8; k++) {
        c = ipup_sched_cost_default();
        c.b = bad[k];
        TT_EQ_INT(ipup_sched_write_svg(&t, &c, NULL, ipup_buf_write, gbuf(sizeof g_buf)), k < 5 ? IPUP_ERR_ARG : 0);
    }
    scale[1] = 1e-310; /* a subnormal stage scale */
    c = ipup_sched_cost_default();
    c.stage_scale = scale;
    TT_EQ_INT(ipup_sched_write_svg(&t, &c, NULL, ipup_buf_write, gbuf(sizeof g_buf)), IPUP_ERR_ARG);
    scale[1] = 1.0;
    c = ipup_sched_cost_default();
    c.stage_scale = scale;
    scale[2] = 1.0 / zero;
    TT_EQ_INT(ipup_sched_write_svg(&t, &c, NULL, ipup_buf_write, gbuf(sizeof g_buf)), IPUP_ERR_ARG);
}

TTEST(csv_round_trip) {
    int k, S, M, i;
    char msg[1024];
    ipup_table t, u;
    for (k = 0; k < N_KINDS; k++)
        for (S = 1; S <= 6; S++)
            for (M = 1; M <= 12; M += 1 + (ttest_slow() ? 3 : 0)) {
                int s;
                TT_EQ_INT(gen((ipup_sched_kind)k, S, M, &t), 0);
                TT_EQ_INT(ipup_sched_write_csv(&t, ipup_buf_write, gbuf(sizeof g_buf)), 0);
                TT_EQ_INT(load(g_buf, &u, msg, sizeof msg), 0);
                TT_EQ_INT(u.stages, S); TT_EQ_INT(u.microbatches, M);
                TT_EQ_INT(u.devices, t.devices); TT_EQ_INT(u.steps, t.steps);
                TT_EQ_INT(u.n_ops, t.n_ops); TT_EQ_INT(u.split_backward, t.split_backward);
                for (s = 0; s < S; s++) TT_EQ_INT(u.stage_device[s], t.stage_device[s]);
                TT_CHECK(memcmp(u.ops, t.ops, (size_t)t.n_ops * sizeof(ipup_op)) == 0);
                if (k == IPUP_SCHED_ZBH1) { /* older notation: B followed by W = input gradient */
                    for (i = 0; g_buf[i]; i++)
                        if (g_buf[i] == 'I') g_buf[i] = 'B';
                    TT_EQ_INT(load(g_buf, &u, msg, sizeof msg), 0);
                    TT_CHECK(memcmp(u.ops, t.ops, (size_t)t.n_ops * sizeof(ipup_op)) == 0);
                }
                if (ttest_failures_) return;
            }
}

TTEST(csv_parse_errors) {
    static const struct { const char *text, *want; } bad[] = {
        {"0F0,0X1\n", "row 1, column 2: '0X1'"},
        {"0F0\n1F0,SEND_F1\n", "row 2, column 2"},
        {"0F0,F1\n", "column 2"},
        {"0F0,0F\n", "'0F'"},
        {"0F1234567890\n", "at most 9 digits"},
        {"999F0\n", "stage 999"},
        {"(0F0;1B0)OVERLAP\n", "OVERLAP_F_B"},
        {"(0F0;1B0\n", "overlap cell"},
        {"", "no ops"},
        {",,,\n\n", "no ops"},
        {"0F0,0F1x\n", "'0F1x'"},
        {"0F0, 0 F1\n", "'0 F1'"},
    };
    ipup_table t;
    char msg[1024];
    int i;
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        int rc = load(bad[i].text, &t, msg, sizeof msg);
        TT_CHECK_MSG(rc == IPUP_ERR_PARSE, "case %d: rc %d", i, rc);
        TT_CONTAINS(msg, bad[i].want);
    }
    /* tolerated: spaces, CRLF, trailing empty cells, missing final newline */
    TT_EQ_INT(load(" 0F0 ,0B0,\r\n", &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.n_ops, 2);
    TT_EQ_INT(t.steps, 2);
    TT_EQ_INT(load("0F0,,1B0\n,1F0", &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.devices, 2);
    TT_EQ_INT(ipup_sched_verify(&t, g_work, sizeof g_work, NULL, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    /* overlap cell: two ops in one slot, F first */
    TT_EQ_INT(load("0F0,(0F1;0B0)OVERLAP_F_B,0B1\n", &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.n_ops, 4);
    TT_EQ_INT(t.ops[1].step, 1); TT_EQ_INT(t.ops[1].kind, IPUP_OP_F);
    TT_EQ_INT(t.ops[2].step, 1); TT_EQ_INT(t.ops[2].kind, IPUP_OP_B);
    TT_EQ_INT(ipup_sched_verify(&t, g_work, sizeof g_work, NULL, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_CONTAINS(msg, "one op per device per step");
    TT_EQ_INT(ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_verify(&t, g_work, sizeof g_work, NULL, msg, sizeof msg), 0);
    TT_EQ_INT(t.steps, 4);
    /* capacity */
    TT_EQ_INT(ipup_sched_csv_load("0F0,0B0\n", 8, g_ops2, 1, g_work, sizeof g_work, &t, msg, sizeof msg), IPUP_ERR_CAPACITY);
}

/* random bytes and random edits of a valid CSV: never a crash, only clean codes */
TTEST(csv_fuzz_smoke) {
    static const char alphabet[] = "0123456789FBIW,;()\n\r OVERLAP_F_B-x";
    uint32_t seed = 12345;
    int it, n_it = ttest_slow() ? 300 : 3000;
    char text[256], msg[512];
    ipup_table t;
    int ok = 0, parse = 0;
    for (it = 0; it < n_it; it++) {
        int len, i, rc;
        seed = seed * 1664525u + 1013904223u;
        len = (int)(seed >> 24) % 200;
        if (it % 2) {
            strcpy(text, "0F0,1F0,(0F1;1B0)OVERLAP_F_B,0B0,,1W0\n,1F1,1B1,0B1,0W1\n");
            len = (int)strlen(text);
            for (i = 0; i < 3; i++) {
                seed = seed * 1664525u + 1013904223u;
                text[(seed >> 8) % (uint32_t)len] = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            }
        } else {
            for (i = 0; i < len; i++) {
                seed = seed * 1664525u + 1013904223u;
                text[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
            }
        }
        text[len] = '\0';
        rc = ipup_sched_csv_load(text, (size_t)len, g_ops2, CAP_OPS, g_work, sizeof g_work, &t, msg, sizeof msg);
        TT_CHECK(rc == 0 || rc == IPUP_ERR_PARSE || rc == IPUP_ERR_CAPACITY);
        if (rc == 0) {
            ok++;
            rc = ipup_sched_verify(&t, g_work, sizeof g_work, NULL, msg, sizeof msg);
            TT_CHECK(rc == 0 || rc == IPUP_ERR_INVALID_TABLE);
            rc = ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg);
            TT_CHECK(rc == 0 || rc == IPUP_ERR_INVALID_TABLE);
        } else if (rc == IPUP_ERR_PARSE) parse++;
    }
    TT_CHECK(ok > 0 && parse > 0);
}

/* the two schedules written by PyTorch's own tests */
TTEST(pytorch_fixtures) {
    ipup_table t;
    ipup_sched_verify_info vi;
    ipup_sched_figures f;
    char msg[1024];
    int32_t S = 0, M = 0, P = 0, n = 0, s;
    TT_EQ_INT(ipup_sched_csv_scan(fixture_zb1p, strlen(fixture_zb1p), &S, &M, &P, &n, msg, sizeof msg), 0);
    TT_EQ_INT(S, 4); TT_EQ_INT(M, 8); TT_EQ_INT(P, 2); TT_EQ_INT(n, 96);
    TT_EQ_INT(load(fixture_zb1p, &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.split_backward, 1);
    TT_EQ_INT(t.stage_device[0], 0); TT_EQ_INT(t.stage_device[1], 1);
    TT_EQ_INT(t.stage_device[2], 0); TT_EQ_INT(t.stage_device[3], 1);
    for (s = 0, n = 0; s < t.n_ops; s++) n += t.ops[s].kind == IPUP_OP_I;
    TT_EQ_INT(n, 32); /* every old-notation B had its W: all are input gradients */
    /* its columns happen to be a valid lock-step table already */
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
    TT_EQ_INT(vi.in_order, 1);
    TT_EQ_INT(ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg), 0);
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);

    TT_EQ_INT(load(fixture_dualpipev, &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.stages, 8); TT_EQ_INT(t.microbatches, 10); TT_EQ_INT(t.devices, 4);
    for (s = 0; s < 4; s++) {
        TT_EQ_INT(t.stage_device[s], s); /* V shape: rank r holds r and 7-r */
        TT_EQ_INT(t.stage_device[7 - s], s);
    }
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE); /* per-device orders, overlap cells */
    TT_EQ_INT(ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg), 0);
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
    TT_EQ_INT(vi.in_order, 1);
    TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &f), 0);
    TT_EQ_INT(f.peak_inflight[0], 8);
}

/* respace of a built-in table is the identity for as-early-as-possible schedules and
   never makes a table longer; respace of shifted rows restores validity */
TTEST(respace_builtins) {
    int k, S, M, i;
    char msg[1024];
    ipup_table t;
    for (k = 0; k < N_KINDS; k++)
        for (S = 1; S <= 6; S++)
            for (M = 1; M <= 10; M++) {
                int T0;
                TT_EQ_INT(gen((ipup_sched_kind)k, S, M, &t), 0);
                memcpy(g_ops2, g_ops, (size_t)t.n_ops * sizeof(ipup_op));
                T0 = t.steps;
                TT_EQ_INT(ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg), 0);
                TT_CHECK(t.steps <= T0);
                TT_EQ_INT(verify(&t, NULL, msg, sizeof msg), 0);
                if (k == IPUP_SCHED_1F1B || k == IPUP_SCHED_GPIPE || k == IPUP_SCHED_ZBH1)
                    TT_CHECK(memcmp(g_ops, g_ops2, (size_t)t.n_ops * sizeof(ipup_op)) == 0);
                /* squash every row to the left (pure per-device order): respace makes it valid again */
                TT_EQ_INT(gen((ipup_sched_kind)k, S, M, &t), 0);
                {
                    int32_t next[IPUP_SCHED_MAX_STAGES] = {0};
                    for (i = 0; i < t.n_ops; i++) g_ops[i].step = next[g_ops[i].device]++;
                    ipup_sched_sort(&t);
                    t.steps = 3 * M * S;
                }
                TT_EQ_INT(ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg), 0);
                TT_EQ_INT(verify(&t, NULL, msg, sizeof msg), 0);
                if (ttest_failures_) return;
            }
    /* a deadlock is reported, not looped on */
    TT_EQ_INT(load("0B0,0F0\n", &t, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_respace(&t, g_work, sizeof g_work, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_CONTAINS(msg, "deadlock");
    TT_CONTAINS(msg, "B(0,0)");
}

/* random configurations (kinds, sizes, mappings, V, devices, strict): the generator
   either refuses with IPUP_ERR_CONFIG and a message, or makes a table that verifies,
   accumulates in order and honours the mapping */
TTEST(random_configs) {
    uint32_t seed = 987654321u;
    int it, n_it = ttest_slow() ? 300 : 4000, made = 0, refused = 0;
    char msg[1024];
    for (it = 0; it < n_it; it++) {
        ipup_sched_config c;
        ipup_table t;
        ipup_sched_verify_info vi;
        int16_t map[12];
        int s, rc, P;
#define RND(n) (seed = seed * 1664525u + 1013904223u, (int)((seed >> 8) % (uint32_t)(n)))
        memset(&c, 0, sizeof c);
        c.kind = (ipup_sched_kind)RND(IPUP_SCHED_KIND_COUNT);
        c.stages = 1 + RND(12);
        c.microbatches = 1 + RND(20);
        c.strict = RND(4) == 0;
        if (RND(3) == 0) c.virtual_stages = RND(4);
        P = 1 + RND(c.stages);
        if (RND(2)) {
            for (s = 0; s < c.stages; s++) map[s] = (int16_t)RND(P);
            c.stage_device = map;
        }
        if (RND(4) == 0) c.devices = RND(8);
#undef RND
        rc = ipup_sched_generate(&c, g_ops, CAP_OPS, &t, msg, sizeof msg);
        if (rc) {
            TT_CHECK_MSG(rc == IPUP_ERR_CONFIG && msg[0], "rc %d for kind %d S=%d M=%d: %.200s", rc, (int)c.kind, c.stages,
                         c.microbatches, msg);
            refused++;
            continue;
        }
        made++;
        rc = verify(&t, &vi, msg, sizeof msg);
        TT_CHECK_MSG(rc == 0, "kind %d S=%d M=%d: %.300s", (int)c.kind, c.stages, c.microbatches, msg);
        TT_CHECK(vi.in_order);
        if (c.stage_device && c.kind != IPUP_SCHED_INTERLEAVED_1F1B)
            for (s = 0; s < c.stages; s++) TT_EQ_INT(t.stage_device[s], map[s]);
        if (ttest_failures_) return;
    }
    /* half the kinds fix their mapping (the V, the loop) and refuse most random ones */
    printf("random configurations: %d made, %d refused\n", made, refused);
    TT_CHECK(made > n_it / 4 && refused > 0);
}

/* DualPipeV (docs/schedules.md §3): every table of S = 4..16 (even) and M = S..32 is valid,
   in order, with overlapped F&B cells that survive the CSV round trip, and costs F + B per
   such cell in BSP time */
TTEST(dualpipev_tables) {
    char msg[1024], csv[65536];
    ipup_table t, u;
    ipup_sched_verify_info vi;
    ipup_sched_figures f;
    int S, M, i, pairs;
    for (S = 4; S <= 16; S += 2)
        for (M = S; M <= 32; M += ttest_slow() ? 7 : 1) {
            ipup_buf b = {csv, sizeof csv - 1, 0};
            TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE_V, S, M, &t), 0);
            TT_EQ_INT(t.devices, S / 2);
            TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
            TT_EQ_INT(vi.in_order, 1);
            for (i = 1, pairs = 0; i < t.n_ops; i++)
                pairs += t.ops[i].step == t.ops[i - 1].step && t.ops[i].device == t.ops[i - 1].device;
            TT_CHECK(pairs > 0);
            TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &f), 0);
            TT_CHECK(f.unit_utilisation <= 1.0);
            TT_EQ_INT(ipup_sched_write_csv(&t, ipup_buf_write, &b), 0);
            csv[b.len] = '\0';
            TT_CHECK(strstr(csv, ")OVERLAP_F_B") != NULL);
            TT_EQ_INT(ipup_sched_csv_load(csv, b.len, g_ops2, CAP_OPS, g_work, sizeof g_work, &u, msg,
                                          sizeof msg), 0);
            TT_EQ_INT(u.n_ops, t.n_ops);
            TT_CHECK(memcmp(u.ops, t.ops, (size_t)t.n_ops * sizeof(ipup_op)) == 0);
            if (ttest_failures_) return;
        }
    /* an overlap cell costs F + B = 3 in BSP time: a one-device table with one such cell */
    TT_EQ_INT(load("0F0,1F0,(0F1;1B0)OVERLAP_F_B,1F1,0B0,1B1,0B1\n", &t, msg, sizeof msg), 0);
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
    TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &f), 0);
    TT_CHECK(f.bsp_time == 1.0 + 1.0 + 3.0 + 1.0 + 2.0 + 2.0 + 2.0);
    /* a pair of the same stage, or B before F, is still two ops in one cell */
    TT_EQ_INT(load("0F0,(0F1;0B0)OVERLAP_F_B,0B1\n", &t, msg, sizeof msg), 0);
    TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 2);
    /* the rules */
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE_V, 5, 10, &t), IPUP_ERR_CONFIG);
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE_V, 8, 7, &t), IPUP_ERR_CONFIG);
}


/* DualPipe (docs/schedules.md §3): a dual table (two model copies); every table of P = 2..8
   (even) and M = 2P..32 (even) is valid and in order; device d's program is DualPipeV's
   program of half rank min(d, P-1-d) on P/2 devices with M/2 micro-batches, its two chunks
   renamed to d's stages of the two copies (DeepSeek's DualPipe.step and DualPipeV.step have
   the same eight steps); a micro-batch runs only its copy's stages; a loaded CSV verifies
   once marked dual */
static int dual_order(const ipup_table *t, int d, ipup_op *row) {
    int i, n = 0;
    for (i = 0; i < t->n_ops; i++)
        if (t->ops[i].device == d) row[n++] = t->ops[i];
    return n;
}
TTEST(dualpipe_tables) {
    static ipup_op rv[CAP_OPS], rd[CAP_OPS], vops[CAP_OPS];
    char msg[1024], csv[65536];
    ipup_table t, v, u;
    ipup_sched_verify_info vi;
    ipup_sched_figures f;
    int P, M, d, i, n, nv, nf;
    for (P = 2; P <= 8; P += 2)
        for (M = 2 * P; M <= 32; M += ttest_slow() ? 6 : 2) {
            TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 2 * P, M, &t), 0);
            TT_EQ_INT(t.dual, 1);
            TT_EQ_INT(t.devices, P);
            TT_EQ_INT(verify(&t, &vi, msg, sizeof msg), 0);
            TT_EQ_INT(vi.in_order, 1);
            for (i = 0, nf = 0; i < t.n_ops; i++) {
                const ipup_op *o = &t.ops[i];
                TT_CHECK((o->stage < P) == (o->mb < M / 2));
                nf += o->kind == IPUP_OP_F;
            }
            TT_EQ_INT(nf, P * M); /* each micro-batch through one copy's P stages */
            TT_EQ_INT(gen_full(IPUP_SCHED_DUALPIPE_V, P, M / 2, 0, NULL, vops, &v, msg, sizeof msg), 0);
            for (d = 0; d < P; d++) {
                int h = d < P - 1 - d ? d : P - 1 - d, ph0 = d < P / 2 ? d : 2 * P - 1 - d;
                n = dual_order(&t, d, rd);
                nv = dual_order(&v, h, rv);
                TT_EQ_INT(n, nv);
                for (i = 0; i < n && i < nv; i++) {
                    int st = rv[i].stage == h ? ph0 : d < P / 2 ? 2 * P - 1 - d : d; /* or the other's */
                    TT_EQ_INT(rd[i].kind, rv[i].kind);
                    TT_EQ_INT(rd[i].overlap_index, rv[i].overlap_index);
                    TT_EQ_INT(rd[i].stage, st);
                    TT_EQ_INT(rd[i].mb, rv[i].mb + (st >= P ? M / 2 : 0));
                }
            }
            TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &f), 0);
            TT_CHECK(f.work == (double)P * M * 3.0); /* F + B (or F + I + W) per pair */
            if (ttest_failures_) return;
        }
    /* the CSV cannot say dual: loaded, copy A's micro-batches lack stages P.., until marked */
    {
        ipup_buf b = {csv, sizeof csv - 1, 0};
        TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 8, 16, &t), 0);
        TT_EQ_INT(ipup_sched_write_csv(&t, ipup_buf_write, &b), 0);
        TT_EQ_INT(ipup_sched_csv_load(csv, b.len, g_ops2, CAP_OPS, g_work, sizeof g_work, &u, msg, sizeof msg), 0);
        TT_EQ_INT(u.dual, 0);
        TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
        TT_EQ_INT(vi.rule, 1);
        u.dual = 1;
        TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), 0);
        TT_CHECK(memcmp(u.ops, t.ops, (size_t)t.n_ops * sizeof(ipup_op)) == 0);
        /* respace of the per-device orders honours the two chains */
        TT_EQ_INT(ipup_sched_respace(&u, g_work, sizeof g_work, msg, sizeof msg), 0);
        TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), 0);
    }
    /* an op of the other copy's stage is out of range; B of a copy's last stage needs no B */
    memcpy(g_mut, t.ops, (size_t)t.n_ops * sizeof(ipup_op));
    u = t;
    u.ops = g_mut;
    for (i = 0; i < u.n_ops && !(g_mut[i].stage == 0 && g_mut[i].kind == IPUP_OP_F); i++) {}
    g_mut[i].mb = 15;
    TT_EQ_INT(verify(&u, &vi, msg, sizeof msg), IPUP_ERR_INVALID_TABLE);
    TT_EQ_INT(vi.rule, 1);
    TT_CHECK(strstr(msg, "copy B") != NULL);
    /* the rules: P even, M even and >= 2P, the V mapping, no forward-only form */
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 6, 12, &t), IPUP_ERR_CONFIG);
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 7, 14, &t), IPUP_ERR_CONFIG);
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 8, 7, &t), IPUP_ERR_CONFIG);
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 8, 17, &t), IPUP_ERR_CONFIG);
    TT_EQ_INT(gen(IPUP_SCHED_DUALPIPE, 8, 6, &t), IPUP_ERR_CONFIG);
    {
        static const int16_t bad_map[4] = {0, 1, 0, 1};
        TT_EQ_INT(gen_full(IPUP_SCHED_DUALPIPE, 4, 8, 0, bad_map, g_ops, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
        TT_CHECK(strstr(msg, "V mapping") != NULL);
    }
}

static const ttest_case cases[] = {
    TT_CASE(random_configs),
    TT_CASE(verifier_accepts_builtins), TT_CASE(verifier_rejects_mutations), TT_CASE(verifier_messages),
    TT_CASE(config_errors_and_warnings), TT_CASE(shared_device_mappings),   TT_CASE(interleaved_1f1b_megatron_program),
    TT_CASE(zbh1_properties),           TT_CASE(measure_seed_facts),         TT_CASE(measure_definitions),
    TT_CASE(renderers),                 TT_CASE(svg_costs_far_apart),                 TT_CASE(writers_io_error_and_buf),                 TT_CASE(csv_round_trip),             TT_CASE(csv_parse_errors),
    TT_CASE(csv_fuzz_smoke),            TT_CASE(pytorch_fixtures),           TT_CASE(respace_builtins),
    TT_CASE(dualpipev_tables),          TT_CASE(dualpipe_tables),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }

