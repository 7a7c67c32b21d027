/* test_sched_pytorch.c - the generators of zb-h2, zb-v, v-min, v-half, looped-bfs and
 * interleaved-zb: valid, in-order tables over a grid of P and M, their rules, and the
 * per-device orders of zb-v, looped-bfs and interleaved-zb against PyTorch's.
 *
 * The fixtures (the .csv files of tests/fixtures/pytorch, or the directory in IPUP_PYTORCH_DIR) are
 * the compute-only CSVs of PyTorch's ScheduleZBVZeroBubble, ScheduleLoopedBFS and
 * ScheduleInterleavedZeroBubble (torch/distributed/pipelining/schedules.py), named
 * zbv_p<P>_m<M>.csv, looped_bfs_p<P>_v<V>_m<M>.csv, interleaved_zb_p<P>_v<V>_m<M>.csv
 * (how they were made: docs/schedules.md §3). Each row's ops, in order, must equal the
 * generator's device order; looped-bfs runs each stage's backwards in increasing
 * micro-batch where PyTorch runs them decreasing, so its B micro-batches are compared as
 * M-1-m (docs/schedules.md §3). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipupipe_sched.h"
#include "ttest.h"

#define MAXS 32
#define MAXM 32
#define CAP IPUP_SCHED_MAX_OPS(MAXS, MAXM)
static ipup_op g_ops[CAP], g_ref[CAP];
static uint64_t g_work[IPUP_SCHED_WORK_BYTES(MAXS, MAXM) / 8 + 8];
static char g_text[1 << 20];

static const ipup_sched_kind new_kinds[] = {IPUP_SCHED_ZBH2,  IPUP_SCHED_ZBV,
                                            IPUP_SCHED_VMIN,  IPUP_SCHED_VHALF,
                                            IPUP_SCHED_LOOPED_BFS, IPUP_SCHED_INTERLEAVED_ZB};

static int gen(ipup_sched_kind kind, int S, int M, int P, ipup_table *t, char *msg, size_t len) {
    ipup_sched_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.stages = S;
    c.microbatches = M;
    c.devices = P;
    return ipup_sched_generate(&c, g_ops, CAP, t, msg, len);
}

/* the ops of device d in step order (tables are sorted by step, then device) */
static int row_ops(const ipup_table *t, int d, const ipup_op **out, int cap) {
    int i, n = 0;
    for (i = 0; i < t->n_ops && n < cap; i++)
        if (t->ops[i].device == d) out[n++] = &t->ops[i];
    return n;
}

/* every new schedule, P = 1..8 devices, M = 1..32: valid, in order, the mapping it states,
   the backward split as stated */
TTEST(valid_in_order_grid) {
    size_t k;
    int P, M, s, n = 0;
    char msg[1024];
    for (k = 0; k < sizeof new_kinds / sizeof new_kinds[0]; k++)
        for (P = 1; P <= 8; P++)
            for (M = 1; M <= MAXM; M++) {
                ipup_table t;
                ipup_sched_verify_info vi;
                int S = new_kinds[k] == IPUP_SCHED_ZBH2 ? P : 2 * P;
                int rc = gen(new_kinds[k], S, M, P, &t, msg, sizeof msg);
                if (new_kinds[k] == IPUP_SCHED_INTERLEAVED_ZB && M % (M / P > 1 ? M / P : 1)) {
                    TT_EQ_INT(rc, IPUP_ERR_CONFIG);
                    TT_CONTAINS(msg, "multiple of its number of rounds");
                    continue;
                }
                TT_CHECK_MSG(rc == 0, "%s P=%d M=%d: %.300s", ipup_sched_kind_name(new_kinds[k]), P,
                             M, msg);
                if (rc) return;
                TT_EQ_INT(t.devices, P);
                TT_EQ_INT(t.split_backward, new_kinds[k] != IPUP_SCHED_LOOPED_BFS);
                TT_EQ_INT(ipup_sched_verify(&t, g_work, sizeof g_work, &vi, msg, sizeof msg), 0);
                TT_CHECK(vi.in_order);
                for (s = 0; s < S; s++) {
                    int want = new_kinds[k] == IPUP_SCHED_ZBH2          ? s
                               : new_kinds[k] == IPUP_SCHED_LOOPED_BFS ||
                                       new_kinds[k] == IPUP_SCHED_INTERLEAVED_ZB
                                   ? s % P
                               : s < P ? s
                                       : S - 1 - s;
                    TT_EQ_INT(t.stage_device[s], want);
                }
                n++;
                if (ttest_failures_) return;
            }
    TT_CHECK(n > 6 * 8 * 32 - 8 * 32);
}

/* the constraints, each refused with a message naming its rule */
TTEST(rules_refused) {
    ipup_table t;
    char msg[1024];
    ipup_sched_config c;
    int16_t bad_map[4] = {0, 1, 0, 1};
    TT_EQ_INT(gen(IPUP_SCHED_ZBV, 5, 8, 0, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "zb-v needs S = 2 x devices");
    TT_EQ_INT(gen(IPUP_SCHED_VMIN, 8, 8, 3, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "v-min needs S = 2 x devices");
    memset(&c, 0, sizeof c);
    c.kind = IPUP_SCHED_VHALF; c.stages = 4; c.microbatches = 8; c.stage_device = bad_map;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "v-half places stage s on the V");
    c.kind = IPUP_SCHED_LOOPED_BFS; c.stage_device = NULL; c.virtual_stages = 3;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "looped-bfs: S=4 stages with V=3");
    TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED_ZB, 8, 9, 4, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "interleaved-zb needs M to be a multiple of its number of rounds");
    c.kind = IPUP_SCHED_ZBV; c.virtual_stages = 0; c.forward_only = 1;
    TT_EQ_INT(ipup_sched_generate(&c, g_ops, CAP, &t, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "zb-v has no forward-only form");
}

/* names, and their parse */
TTEST(names) {
    static const char *names[] = {"zb-h2", "zb-v", "v-min", "v-half", "looped-bfs",
                                  "interleaved-zb"};
    size_t k;
    ipup_sched_kind kind;
    for (k = 0; k < 6; k++) {
        TT_STREQ(ipup_sched_kind_name(new_kinds[k]), names[k]);
        TT_EQ_INT(ipup_sched_kind_parse(names[k], &kind), 0);
        TT_EQ_INT((int)kind, (int)new_kinds[k]);
    }
    TT_EQ_INT(ipup_sched_kind_parse("ZBV", &kind), 0);
    TT_EQ_INT((int)kind, (int)IPUP_SCHED_ZBV);
    TT_EQ_INT(ipup_sched_kind_parse("zb1p", &kind), 0);
    TT_EQ_INT((int)kind, (int)IPUP_SCHED_INTERLEAVED_ZB);
}

/* The figures of docs/schedules.md at P = 4, M = 16 (F=1, B=2, I=W=1): zb-h2 with 2S-1 on
   stage 0 and zb-v at the bound of 6M steps + 3; v-half and v-min at their papers' peaks. */
TTEST(figures_p4_m16) {
    ipup_table t;
    char msg[512];
    int32_t peak[8];
    TT_EQ_INT(gen(IPUP_SCHED_ZBH2, 4, 16, 0, &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.steps, 3 * 16 + 3);
    ipup_sched_peak_inflight(&t, peak, 8);
    TT_EQ_INT(peak[0], 2 * 4 - 1);
    TT_EQ_INT(gen(IPUP_SCHED_ZBV, 8, 16, 0, &t, msg, sizeof msg), 0);
    TT_EQ_INT(t.steps, 6 * 16 + 3);
    TT_EQ_INT(gen(IPUP_SCHED_VHALF, 8, 16, 0, &t, msg, sizeof msg), 0);
    ipup_sched_peak_inflight(&t, peak, 8);
    TT_EQ_INT(peak[0] + peak[7], 6); /* (p+2)//2 = 3 whole-device micro-batches */
    TT_EQ_INT(gen(IPUP_SCHED_VMIN, 8, 16, 0, &t, msg, sizeof msg), 0);
    ipup_sched_peak_inflight(&t, peak, 8);
    TT_EQ_INT(peak[0] + peak[7], 4); /* (p+4)//3 = 2 */
}

/* v-min's and v-half's closed forms (docs/schedules.md §3) at P = 2..12, M = 1..32, default
   cost (F = I = W = 1, the paper's T_F = T_B = T_W): the peak per device, in stage
   micro-batches (half a device's layers), is at most twice the paper's (Qi et al. 2024;
   the authors' table: V-Min (p+4)//3, V-Half (p+2)//2 micro-batches, 1F1B p), and
   equals it once M >= 2P; there the async time is 6M + c(P), c(P) the warm-up and
   cool-down the squeezed building block leaves: v-min 4P-5 (4P-7 when 3 divides P),
   v-half 3P-4 for odd P, 3P-7 for even P >= 4, 1 at P = 2. 1F1B's peak on the same P
   devices is p whole-device micro-batches (checked too). */
TTEST(v_min_v_half_paper_bounds_grid) {
    static ipup_sched_figures fg;
    ipup_table t;
    char msg[512];
    int P, M, k, d, n = 0;
    int32_t peak[MAXS];
    for (P = 2; P <= 12; P++) {
        TT_EQ_INT(gen(IPUP_SCHED_1F1B, P, 2 * P, 0, &t, msg, sizeof msg), 0);
        ipup_sched_peak_inflight(&t, peak, MAXS);
        TT_EQ_INT(peak[0], P); /* 1F1B: p */
        for (k = 0; k < 2; k++)
            for (M = 1; M <= MAXM; M++) {
                const int vmin = k == 0;
                const int bound = 2 * (vmin ? (P + 4) / 3 : (P + 2) / 2);
                const int c = vmin ? 4 * P - 5 - (P % 3 == 0 ? 2 : 0)
                              : P == 2 ? 1 : P % 2 ? 3 * P - 4 : 3 * P - 7;
                int most = 0;
                TT_EQ_INT(gen(vmin ? IPUP_SCHED_VMIN : IPUP_SCHED_VHALF, 2 * P, M, 0, &t, msg,
                              sizeof msg),
                          0);
                TT_EQ_INT(ipup_sched_verify(&t, g_work, sizeof g_work, NULL, msg, sizeof msg), 0);
                TT_EQ_INT(ipup_sched_measure(&t, NULL, NULL, g_work, sizeof g_work, &fg), 0);
                for (d = 0; d < P; d++) {
                    TT_CHECK_MSG(fg.peak_inflight_device[d] <= bound, "%s P=%d M=%d d=%d: %d > %d",
                                 vmin ? "v-min" : "v-half", P, M, d,
                                 (int)fg.peak_inflight_device[d], bound);
                    if (fg.peak_inflight_device[d] > most) most = fg.peak_inflight_device[d];
                }
                if (M < 2 * P) continue;
                TT_EQ_INT(most, bound);
                TT_CHECK_MSG(fg.async_time == 6.0 * M + c, "%s P=%d M=%d: async %g, want %d",
                             vmin ? "v-min" : "v-half", P, M, fg.async_time, 6 * M + c);
                n++;
                if (ttest_failures_) return;
            }
    }
    TT_CHECK(n > 200);
}

/* each new schedule through the CSV writer and loader, and through respace: the same
   table back (its orders are placed as early as they allow, so respace changes nothing) */
TTEST(csv_and_respace_round_trip) {
    static char text[1 << 16];
    size_t k;
    int i;
    char msg[512];
    for (k = 0; k < sizeof new_kinds / sizeof new_kinds[0]; k++) {
        ipup_table t, u;
        ipup_buf b = {text, sizeof text, 0};
        int S = new_kinds[k] == IPUP_SCHED_ZBH2 ? 4 : 8;
        TT_EQ_INT(gen(new_kinds[k], S, 8, 0, &t, msg, sizeof msg), 0);
        TT_EQ_INT(ipup_sched_write_csv(&t, ipup_buf_write, &b), 0);
        TT_CHECK(ipup_buf_fits(&b));
        TT_EQ_INT(ipup_sched_csv_load(text, b.len, g_ref, CAP, g_work, sizeof g_work, &u, msg,
                                      sizeof msg),
                  0);
        TT_EQ_INT(u.n_ops, t.n_ops);
        TT_EQ_INT(u.steps, t.steps);
        for (i = 0; i < t.n_ops; i++)
            TT_CHECK(memcmp(&u.ops[i], &t.ops[i], sizeof t.ops[i]) == 0);
        TT_EQ_INT(ipup_sched_respace(&u, g_work, sizeof g_work, msg, sizeof msg), 0);
        TT_EQ_INT(u.steps, t.steps);
        for (i = 0; i < t.n_ops; i++) TT_EQ_INT(u.ops[i].step, t.ops[i].step);
        if (ttest_failures_) return;
    }
}

/* one fixture: its name gives the kind and sizes; each row's op order must equal the
   generator's device order. Returns 1 when compared. */
static int compare_fixture(const char *dir, const char *name) {
    char path[512], msg[1024];
    int P = 0, V = 2, M = 0, d, i, looped = 0;
    ipup_sched_kind kind;
    ipup_table mine, ref;
    FILE *f;
    size_t len;
    if (sscanf(name, "zbv_p%d_m%d.csv", &P, &M) == 2) kind = IPUP_SCHED_ZBV;
    else if (sscanf(name, "looped_bfs_p%d_v%d_m%d.csv", &P, &V, &M) == 3) {
        kind = IPUP_SCHED_LOOPED_BFS;
        looped = 1;
    } else if (sscanf(name, "interleaved_zb_p%d_v%d_m%d.csv", &P, &V, &M) == 3)
        kind = IPUP_SCHED_INTERLEAVED_ZB;
    else {
        TT_FAILF("%s: unknown fixture name", name);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    TT_CHECK_MSG(f != NULL, "%.300s: cannot open", path);
    if (!f) return 0;
    len = fread(g_text, 1, sizeof g_text - 1, f);
    fclose(f);
    TT_CHECK_MSG(ipup_sched_csv_load(g_text, len, g_ref, CAP, g_work, sizeof g_work, &ref, msg,
                                     sizeof msg) == 0,
                 "%s: %.300s", name, msg);
    TT_CHECK_MSG(gen(kind, P * V, M, P, &mine, msg, sizeof msg) == 0, "%s: %.300s", name, msg);
    if (ttest_failures_) return 0;
    TT_EQ_INT(ref.devices, P);
    TT_EQ_INT(ref.n_ops, mine.n_ops);
    for (d = 0; d < P && !ttest_failures_; d++) {
        static const ipup_op *a[CAP], *b[CAP];
        int na = row_ops(&mine, d, a, CAP), nb = row_ops(&ref, d, b, CAP);
        TT_EQ_INT(na, nb);
        for (i = 0; i < na && i < nb; i++) {
            int ref_mb = looped && b[i]->kind == IPUP_OP_B ? M - 1 - b[i]->mb : b[i]->mb;
            if (a[i]->kind != b[i]->kind || a[i]->stage != b[i]->stage || a[i]->mb != ref_mb) {
                char x[32], y[32];
                ipup_sched_op_str(a[i], x, sizeof x);
                ipup_sched_op_str(b[i], y, sizeof y);
                TT_FAILF("%s: device %d, op %d: ipupipe %s, PyTorch %s", name, d, i, x, y);
                break;
            }
        }
    }
    return !ttest_failures_;
}

/* every fixture of the directory (at least one of each family) */
TTEST(pytorch_orders) {
    const char *dir = getenv("IPUP_PYTORCH_DIR");
    DIR *dp;
    struct dirent *e;
    int n = 0, zbv = 0, bfs = 0, izb = 0;
    if (!dir || !*dir) dir = "tests/fixtures/pytorch";
    dp = opendir(dir);
    TT_CHECK_MSG(dp != NULL, "cannot open %s (run from the repository root)", dir);
    if (!dp) return;
    while ((e = readdir(dp)) != NULL && !ttest_failures_) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 4, ".csv") != 0) continue;
        if (strncmp(e->d_name, "dualpipev_", 10) == 0) continue; /* tests/test_dualpipe.sh */
        if (!compare_fixture(dir, e->d_name)) break;
        n++;
        zbv += strncmp(e->d_name, "zbv_", 4) == 0;
        bfs += strncmp(e->d_name, "looped_bfs_", 11) == 0;
        izb += strncmp(e->d_name, "interleaved_zb_", 15) == 0;
    }
    closedir(dp);
    printf("compared %d PyTorch tables (zbv %d, looped-bfs %d, interleaved-zb %d): %s\n", n, zbv,
           bfs, izb, ttest_failures_ ? "a disagreement" : "0 disagreements");
    TT_CHECK(zbv > 0 && bfs > 0 && izb > 0);
}

static const ttest_case cases[] = {
    TT_CASE(valid_in_order_grid), TT_CASE(rules_refused), TT_CASE(names),
    TT_CASE(figures_p4_m16), TT_CASE(v_min_v_half_paper_bounds_grid),
    TT_CASE(csv_and_respace_round_trip), TT_CASE(pytorch_orders),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
