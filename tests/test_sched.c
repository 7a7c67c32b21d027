/* test_sched.c - the schedule generators of ipupipe_sched.h against independent
 * references: the closed forms of docs/schedules.md §3 (computed here op by op, then
 * compacted), and for 1F1B an as-early-as-possible placement of each device's
 * program computed by fixed-point iteration (a different algorithm from the
 * header's step-by-step simulation). */
#include "ipupipe_sched.h"
#include "ttest.h"

#define MAXS 8
#define MAXM 32
static ipup_op g_ops[IPUP_SCHED_MAX_OPS(64, 64)];
static int32_t g_ref[4][MAXS][MAXM]; /* expected step per (kind-1: F, B, I, W), stage, mb */

static int gen(ipup_sched_kind kind, int S, int M, ipup_table *t, char *msg, size_t len) {
    ipup_sched_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.stages = S;
    c.microbatches = M;
    return ipup_sched_generate(&c, g_ops, (int32_t)(sizeof g_ops / sizeof g_ops[0]), t, msg, len);
}

/* raw (uncompacted) step of an op under the closed forms of docs/schedules.md §3 */
static int raw_step(ipup_sched_kind kind, int S, int M, int k, int s, int m) {
    switch (kind) {
    case IPUP_SCHED_SEQUENTIAL: return k == IPUP_OP_F ? 2 * S * m + s : 2 * S * m + S + (S - 1 - s);
    case IPUP_SCHED_INTERLEAVED: return k == IPUP_OP_F ? s + 2 * m : 2 * S - 1 - s + 2 * m;
    case IPUP_SCHED_GPIPE: return k == IPUP_OP_F ? s + m : (M + S - 1) + (S - 1 - s) + m;
    case IPUP_SCHED_GROUPED:
        if (k == IPUP_OP_F) {
            int c = s + m; /* F-slot */
            return c < S ? c : S + 2 * (c - S) + 1;
        } else {
            int d = m + (S - 1 - s); /* B-slot */
            return S + 2 * d;
        }
    default: return -1;
    }
}

/* Expected table of a closed form: raw steps, then drop the columns no op uses. */
static int build_closed_ref(ipup_sched_kind kind, int S, int M) {
    static int used[4 * (MAXS + MAXM) * MAXS * 2 + 64];
    int nraw = 2 * S * M + 4 * (S + M) + 8, s, m, k, r, T = 0;
    if (nraw > (int)(sizeof used / sizeof used[0])) return -1;
    for (r = 0; r < nraw; r++) used[r] = 0;
    for (s = 0; s < S; s++)
        for (m = 0; m < M; m++)
            for (k = IPUP_OP_F; k <= IPUP_OP_B; k++) used[raw_step(kind, S, M, k, s, m)] = 1;
    for (r = 0; r < nraw; r++) used[r] = used[r] ? T++ : -1;
    for (s = 0; s < S; s++)
        for (m = 0; m < M; m++)
            for (k = IPUP_OP_F; k <= IPUP_OP_B; k++) g_ref[k - 1][s][m] = used[raw_step(kind, S, M, k, s, m)];
    return T;
}

/* Compare the generated table with g_ref cell by cell; also the table's invariants. */
static void check_against_ref(const ipup_table *t, int S, int M, int T, int kinds, const char *what) {
    int seen[4][MAXS][MAXM];
    int i, s, m, k, bad = 0;
    memset(seen, 0, sizeof seen);
    TT_EQ_INT(t->stages, S);
    TT_EQ_INT(t->microbatches, M);
    TT_EQ_INT(t->steps, T);
    TT_EQ_INT(t->n_ops, kinds * S * M);
    for (i = 0; i < t->n_ops && bad < 3; i++) {
        const ipup_op *o = &t->ops[i];
        if (i > 0) {
            const ipup_op *p = &t->ops[i - 1];
            if (!(p->step < o->step || (p->step == o->step && p->device < o->device))) {
                TT_FAILF("%s S=%d M=%d: ops %d,%d not sorted by (step, device)", what, S, M, i - 1, i);
                bad++;
            }
        }
        if (o->stage < 0 || o->stage >= S || o->mb < 0 || o->mb >= M || o->kind < 1 || o->kind > 4) {
            TT_FAILF("%s S=%d M=%d: op %d out of range", what, S, M, i);
            bad++;
            continue;
        }
        if (o->device != t->stage_device[o->stage]) {
            TT_FAILF("%s: op %d on device %d, stage %d mapped to %d", what, i, o->device, o->stage, t->stage_device[o->stage]);
            bad++;
        }
        if (seen[o->kind - 1][o->stage][o->mb]++) {
            TT_FAILF("%s S=%d M=%d: duplicate op kind %d s=%d m=%d", what, S, M, o->kind, o->stage, o->mb);
            bad++;
        }
        if (o->step != g_ref[o->kind - 1][o->stage][o->mb]) {
            TT_FAILF("%s S=%d M=%d: op %c(%d,%d) at step %d, expected %d", what, S, M, "?FBIW"[o->kind], o->stage, o->mb,
                     o->step, g_ref[o->kind - 1][o->stage][o->mb]);
            bad++;
        }
    }
    for (s = 0; s < S && !bad; s++)
        for (m = 0; m < M; m++)
            for (k = 0; k < 4; k++)
                if (g_ref[k][s][m] >= 0 && seen[k][s][m] != 1 && !(kinds == 2 && k >= 2)) {
                    TT_FAILF("%s S=%d M=%d: op kind %d s=%d m=%d missing", what, S, M, k + 1, s, m);
                    bad++;
                }
}

static void closed_form_sweep(ipup_sched_kind kind) {
    int S, M, maxM = ttest_slow() ? 12 : MAXM;
    char msg[1024];
    ipup_table t;
    for (S = 1; S <= MAXS; S++)
        for (M = 1; M <= maxM; M++) {
            int T, rc, k;
            for (k = 0; k < 4; k++) memset(g_ref[k], 0xff, sizeof g_ref[k]);
            T = build_closed_ref(kind, S, M);
            rc = gen(kind, S, M, &t, msg, sizeof msg);
            TT_CHECK_MSG(rc == IPUP_OK, "%s S=%d M=%d: rc %d: %.200s", ipup_sched_kind_name(kind), S, M, rc, msg);
            if (rc) return;
            check_against_ref(&t, S, M, T, 2, ipup_sched_kind_name(kind));
            if (ttest_failures_) return;
        }
}

TTEST(sequential_closed_form) { closed_form_sweep(IPUP_SCHED_SEQUENTIAL); }
TTEST(interleaved_closed_form) { closed_form_sweep(IPUP_SCHED_INTERLEAVED); }
TTEST(grouped_closed_form) { closed_form_sweep(IPUP_SCHED_GROUPED); }
TTEST(gpipe_closed_form) { closed_form_sweep(IPUP_SCHED_GPIPE); }

/* Closed-form step counts: T = 2SM (sequential), 2(M+S-1) (interleaved, gpipe, 1f1b). */
TTEST(step_counts) {
    int S, M;
    char msg[512];
    ipup_table t;
    for (S = 1; S <= MAXS; S++)
        for (M = 1; M <= MAXM; M += 3) {
            TT_EQ_INT(gen(IPUP_SCHED_SEQUENTIAL, S, M, &t, msg, sizeof msg), 0);
            TT_EQ_INT(t.steps, 2 * S * M);
            TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED, S, M, &t, msg, sizeof msg), 0);
            TT_EQ_INT(t.steps, 2 * (M + S - 1));
            TT_EQ_INT(gen(IPUP_SCHED_GPIPE, S, M, &t, msg, sizeof msg), 0);
            TT_EQ_INT(t.steps, 2 * (M + S - 1));
            TT_EQ_INT(gen(IPUP_SCHED_1F1B, S, M, &t, msg, sizeof msg), 0);
            TT_EQ_INT(t.steps, 2 * (M + S - 1));
        }
}

/* The worked tables of docs/schedules.md §3, S=4, M=8, as text. */
static void grid_of(const ipup_table *t, char *buf, size_t len) {
    int d, st, i;
    size_t n = 0;
    for (d = 0; d < t->devices; d++) {
        n += (size_t)snprintf(buf + n, len - n, "IPU%d ", d);
        for (st = 0; st < t->steps; st++) {
            int found = 0;
            for (i = 0; i < t->n_ops; i++)
                if (t->ops[i].step == st && t->ops[i].device == d) {
                    n += (size_t)snprintf(buf + n, len - n, " %c%d", "?FBIW"[t->ops[i].kind], t->ops[i].mb);
                    found = 1;
                }
            if (!found) n += (size_t)snprintf(buf + n, len - n, " ..");
        }
        n += (size_t)snprintf(buf + n, len - n, "\n");
    }
}

TTEST(worked_tables_s4_m8) {
    static const char *inter =
        "IPU0  F0 .. F1 .. F2 .. F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 .. B5 .. B6 .. B7\n"
        "IPU1  .. F0 .. F1 .. F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 .. B6 .. B7 ..\n"
        "IPU2  .. .. F0 .. F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 .. B7 .. ..\n"
        "IPU3  .. .. .. F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 .. .. ..\n";
    static const char *grouped =
        "IPU0  F0 F1 F2 F3 .. F4 .. F5 .. F6 B0 F7 B1 .. B2 .. B3 .. B4 B5 B6 B7\n"
        "IPU1  .. F0 F1 F2 .. F3 .. F4 B0 F5 B1 F6 B2 F7 B3 .. B4 .. B5 B6 B7 ..\n"
        "IPU2  .. .. F0 F1 .. F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 .. B6 B7 .. ..\n"
        "IPU3  .. .. .. F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 .. .. ..\n";
    char buf[4096], msg[512];
    ipup_table t;
    int32_t pk[IPUP_SCHED_MAX_STAGES];
    TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED, 4, 8, &t, msg, sizeof msg), 0);
    grid_of(&t, buf, sizeof buf);
    if (strcmp(buf, inter) != 0) printf("got:\n%s", buf);
    TT_CHECK(strcmp(buf, inter) == 0);
    TT_EQ_INT(ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES), 0);
    TT_CHECK(pk[0] == 4 && pk[1] == 3 && pk[2] == 2 && pk[3] == 1);
    TT_EQ_INT(gen(IPUP_SCHED_GROUPED, 4, 8, &t, msg, sizeof msg), 0);
    grid_of(&t, buf, sizeof buf);
    if (strcmp(buf, grouped) != 0) printf("got:\n%s", buf);
    TT_CHECK(strcmp(buf, grouped) == 0);
    TT_EQ_INT(ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES), 0);
    TT_CHECK(pk[0] == 7 && pk[1] == 5 && pk[2] == 3 && pk[3] == 1);
}

/* Peak in-flight: Interleaved and 1F1B min(M, S-s); Grouped min(M, 2(S-s)-1); GPipe M;
   Sequential 1; against an independent count over the reference steps. */
TTEST(peak_inflight_forms) {
    int S, M, s;
    char msg[512];
    ipup_table t;
    int32_t pk[IPUP_SCHED_MAX_STAGES] = {0};
    for (S = 1; S <= MAXS; S++)
        for (M = 1; M <= MAXM; M++) {
            gen(IPUP_SCHED_INTERLEAVED, S, M, &t, msg, sizeof msg);
            ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES);
            for (s = 0; s < S; s++) TT_EQ_INT(pk[s], M < S - s ? M : S - s);
            gen(IPUP_SCHED_1F1B, S, M, &t, msg, sizeof msg);
            ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES);
            for (s = 0; s < S; s++) TT_EQ_INT(pk[s], M < S - s ? M : S - s);
            gen(IPUP_SCHED_GROUPED, S, M, &t, msg, sizeof msg);
            ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES);
            for (s = 0; s < S; s++) TT_EQ_INT(pk[s], M < 2 * (S - s) - 1 ? M : 2 * (S - s) - 1);
            gen(IPUP_SCHED_GPIPE, S, M, &t, msg, sizeof msg);
            ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES);
            for (s = 0; s < S; s++) TT_EQ_INT(pk[s], M);
            gen(IPUP_SCHED_SEQUENTIAL, S, M, &t, msg, sizeof msg);
            ipup_sched_peak_inflight(&t, pk, IPUP_SCHED_MAX_STAGES);
            for (s = 0; s < S; s++) TT_EQ_INT(pk[s], 1);
            if (ttest_failures_) return;
        }
}

/* 1F1B reference: each device's program (min(S-1-s, M) warm-up F, then F/B pairs, then
   the remaining B) placed as early as dependencies allow, by fixed-point iteration. */
TTEST(one_f_one_b_program) {
    int S, M, maxM = ttest_slow() ? 10 : MAXM;
    char msg[512];
    ipup_table t;
    for (S = 1; S <= MAXS; S++)
        for (M = 1; M <= maxM; M++) {
            int prog_k[MAXS][2 * MAXM], prog_m[MAXS][2 * MAXM], len[MAXS];
            int s, k, changed = 1, T = 0;
            for (s = 0; s < S; s++) {
                int w = S - 1 - s < M ? S - 1 - s : M, nf = 0, nb = 0;
                len[s] = 0;
                while (nf < w) { prog_k[s][len[s]] = IPUP_OP_F; prog_m[s][len[s]++] = nf++; }
                while (nf < M) {
                    prog_k[s][len[s]] = IPUP_OP_F; prog_m[s][len[s]++] = nf++;
                    prog_k[s][len[s]] = IPUP_OP_B; prog_m[s][len[s]++] = nb++;
                }
                while (nb < M) { prog_k[s][len[s]] = IPUP_OP_B; prog_m[s][len[s]++] = nb++; }
            }
            for (k = 0; k < 2; k++) memset(g_ref[k], 0, sizeof g_ref[k]);
            while (changed) { /* steps only grow; converges to the earliest placement */
                changed = 0;
                for (s = 0; s < S; s++)
                    for (k = 0; k < len[s]; k++) {
                        int kk = prog_k[s][k], m = prog_m[s][k], e = 0;
                        if (k > 0) e = g_ref[prog_k[s][k - 1] - 1][s][prog_m[s][k - 1]] + 1;
                        if (kk == IPUP_OP_F && s > 0 && g_ref[0][s - 1][m] + 1 > e) e = g_ref[0][s - 1][m] + 1;
                        if (kk == IPUP_OP_B) {
                            if (g_ref[0][s][m] + 1 > e) e = g_ref[0][s][m] + 1;
                            if (s < S - 1 && g_ref[1][s + 1][m] + 1 > e) e = g_ref[1][s + 1][m] + 1;
                        }
                        if (e > g_ref[kk - 1][s][m]) { g_ref[kk - 1][s][m] = e; changed = 1; }
                    }
            }
            for (s = 0; s < S; s++)
                for (k = 0; k < M; k++)
                    if (g_ref[1][s][k] + 1 > T) T = g_ref[1][s][k] + 1;
            TT_EQ_INT(gen(IPUP_SCHED_1F1B, S, M, &t, msg, sizeof msg), 0);
            check_against_ref(&t, S, M, T, 2, "1f1b");
            if (ttest_failures_) return;
        }
}

/* ZB-H1 reference (Qi et al. 2024, H1 as specified in ipupipe_sched.h): each step, each
   stage runs its next F if ready and fewer than S-s forwards await their I and fewer
   than S micro-batches hold activations (1F1B's warm-up and peak); else its next I if
   its inputs are ready; else its next W. Written with per-op step arrays and counting,
   not the header's counters. For M >= S the paper's bubble (S-1)(F+B-W) with unit ops:
   T = 3M + S - 1. */
TTEST(zbh1_reference) {
    int S, M, maxM = ttest_slow() ? 8 : MAXM;
    char msg[512];
    ipup_table t;
    enum { NONE = 1 << 30 };
    for (S = 1; S <= MAXS; S++)
        for (M = 1; M <= maxM; M++) {
            int s, m, k, step = 0, left = 3 * S * M, T = 0;
            for (k = 0; k < 4; k++)
                for (s = 0; s < MAXS; s++)
                    for (m = 0; m < MAXM; m++) g_ref[k][s][m] = NONE;
            while (left > 0 && step < 10 * S * M + 10) {
                int pick_k[MAXS], pick_m[MAXS];
                for (s = 0; s < S; s++) {
                    int nf = 0, ni = 0, nw = 0;
                    for (m = 0; m < M; m++) {
                        nf += g_ref[0][s][m] < step;
                        ni += g_ref[2][s][m] < step;
                        nw += g_ref[3][s][m] < step;
                    }
                    pick_k[s] = 0;
                    pick_m[s] = 0;
                    if (nf < M && (s == 0 || g_ref[0][s - 1][nf] < step) && nf - ni < S - s && nf - nw < S) {
                        pick_k[s] = 1; pick_m[s] = nf;
                    } else if (ni < M && g_ref[0][s][ni] < step && (s == S - 1 || g_ref[2][s + 1][ni] < step)) {
                        pick_k[s] = 3; pick_m[s] = ni;
                    } else if (nw < M && g_ref[2][s][nw] < step) {
                        pick_k[s] = 4; pick_m[s] = nw;
                    }
                }
                for (s = 0; s < S; s++)
                    if (pick_k[s]) { g_ref[pick_k[s] - 1][s][pick_m[s]] = step; left--; T = step + 1; }
                step++;
            }
            TT_EQ_INT(left, 0);
            if (M >= S) TT_EQ_INT(T, 3 * M + S - 1);
            for (s = 0; s < MAXS; s++)
                for (m = 0; m < MAXM; m++) g_ref[1][s][m] = -1; /* no B ops */
            TT_EQ_INT(ipup_sched_generate(&(ipup_sched_config){IPUP_SCHED_ZBH1, S, M, 0, 0, NULL, 0, 0, NULL, 0}, g_ops,
                                          (int32_t)(sizeof g_ops / sizeof g_ops[0]), &t, msg, sizeof msg),
                      0);
            check_against_ref(&t, S, M, T, 3, "zb-h1");
            if (ttest_failures_) return;
        }
}

/* Phases as the Graphcore tutorials define them (docs/schedules.md §4), against a dense
   grid built here: ramp-up until every device in use is busy in one step, main from the
   first to the last such step, ramp-down after; a pipeline that never fills has no main,
   and its ramp-up ends at the first backward. Every schedule, S 1..8, M 1..32. Also: the
   "never fills" warning is given exactly when there is no main (sequential excepted),
   one micro-batch never fills a pipeline of 2+ devices (whole backwards), and the main
   phase is at least as busy as either ramp. */
static char g_busy[3 * MAXS * MAXM + MAXS][MAXS];
static void phases_case(ipup_sched_kind kind, int S, int M) {
    ipup_table t;
    char msg[2048];
    int32_t ph[6], i, st, d, inuse = 0, a = -1, b = -1, turn = -1, cnt[3] = {0, 0, 0}, len[3];
    char used[MAXS];
    if (gen(kind, S, M, &t, msg, sizeof msg) != 0) return; /* a rule error (e.g. V) */
    memset(g_busy, 0, sizeof g_busy);
    memset(used, 0, sizeof used);
    for (i = 0; i < t.n_ops; i++) {
        const ipup_op *o = &t.ops[i];
        g_busy[o->step][o->device] = 1;
        if (!used[o->device]) { used[o->device] = 1; inuse++; }
        if ((o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) && (turn < 0 || o->step < turn)) turn = o->step;
    }
    for (st = 0; st < t.steps; st++) {
        int n = 0;
        for (d = 0; d < t.devices; d++) n += g_busy[st][d];
        if (n == inuse) { if (a < 0) a = st; b = st; }
    }
    if (a < 0) { a = turn; b = turn - 1; }
    TT_EQ_INT(ipup_sched_phases(&t, ph), 0);
    TT_CHECK_MSG(ph[0] == 0 && ph[1] == a - 1 && ph[2] == a && ph[3] == b && ph[4] == b + 1 && ph[5] == t.steps - 1,
                 "%s S=%d M=%d: phases %d..%d %d..%d %d..%d, expected main %d..%d", ipup_sched_kind_name(kind), S, M,
                 (int)ph[0], (int)ph[1], (int)ph[2], (int)ph[3], (int)ph[4], (int)ph[5], (int)a, (int)b);
    if (kind != IPUP_SCHED_SEQUENTIAL && t.devices > 1)
        TT_CHECK_MSG((strstr(msg, "never fills") != NULL) == (b < a), "%s S=%d M=%d: warning '%.200s' but main %d..%d",
                     ipup_sched_kind_name(kind), S, M, msg, (int)a, (int)b);
    else
        TT_CHECK(strstr(msg, "never fills") == NULL);
    if (M == 1 && t.devices > 1 && !t.split_backward) TT_CHECK_MSG(b < a, "%s S=%d M=1 fills", ipup_sched_kind_name(kind), S);
    for (st = 0; st < t.steps; st++)
        for (d = 0; d < t.devices; d++) cnt[st < a ? 0 : st <= b ? 1 : 2] += g_busy[st][d];
    len[0] = a; len[1] = b - a + 1; len[2] = t.steps - 1 - b;
    if (len[1] > 0) {
        int p;
        for (p = 0; p < 3; p += 2)
            if (len[p] > 0)
                TT_CHECK_MSG((double)cnt[1] / len[1] >= (double)cnt[p] / len[p], "%s S=%d M=%d: main less busy than phase %d",
                             ipup_sched_kind_name(kind), S, M, p);
    }
}
TTEST(phases_as_the_tutorials_define_them) {
    int k, S, M;
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++)
        for (S = 1; S <= MAXS; S++)
            for (M = 1; M <= MAXM; M++) {
                phases_case((ipup_sched_kind)k, S, M);
                if (ttest_failures_ > 20) return;
            }
}

static const ttest_case cases[] = {
    TT_CASE(zbh1_reference),
    TT_CASE(sequential_closed_form), TT_CASE(interleaved_closed_form), TT_CASE(grouped_closed_form),
    TT_CASE(gpipe_closed_form),      TT_CASE(step_counts),             TT_CASE(worked_tables_s4_m8),
    TT_CASE(peak_inflight_forms),    TT_CASE(one_f_one_b_program),     TT_CASE(phases_as_the_tutorials_define_them),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
