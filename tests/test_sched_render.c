/* test_sched_render.c - the renderers' timing and memory view (docs/schedules.md §10):
 * ipup_sched_op_times agrees with ipup_sched_measure (async makespan = async_time, BSP
 * ends within bsp_time), ipup_sched_held's peaks equal measure's stash_bytes_device, the
 * bubbles the papers state hold over a grid of P and M (1F1B: (P-1)(F+B); ZB-H1:
 * (P-1)(F+I-W)), and the SVG and trace say which timing they draw, label chunks and
 * draw overlap cells (a DualPipeV table from PyTorch) as hatched halves. */
#include "ipupipe_sched.h"
#include "ttest.h"

#include <stdio.h>

#define MAXS 16
#define MAXM 40
static ipup_op g_ops[IPUP_SCHED_MAX_OPS(MAXS, MAXM)];
static uint64_t g_work[IPUP_SCHED_DRAW_WORK_BYTES(MAXS, MAXM, IPUP_SCHED_MAX_OPS(MAXS, MAXM)) / 8 + 1];
static double g_start[IPUP_SCHED_MAX_OPS(MAXS, MAXM)];
static int64_t g_held[IPUP_SCHED_MAX_OPS(MAXS, MAXM)];
static char g_buf[1 << 21];
static ipup_buf g_b;
static ipup_buf *gbuf(void) { g_b.buf = g_buf; g_b.cap = sizeof g_buf; g_b.len = 0; return &g_b; }

static int gen(ipup_sched_kind kind, int S, int M, int P, ipup_table *t) {
    ipup_sched_config c;
    char msg[1024];
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.stages = S;
    c.microbatches = M;
    c.devices = P;
    return ipup_sched_generate(&c, g_ops, (int32_t)(sizeof g_ops / sizeof g_ops[0]), t, msg, sizeof msg);
}

static void measure(const ipup_table *t, const ipup_sched_cost *c, const int64_t *act, ipup_sched_figures *f) {
    TT_EQ_INT(ipup_sched_measure(t, c, act, g_work, sizeof g_work, f), 0);
}

/* every schedule, S 2..6, M 1..12, two cost models: the async makespan of op_times is
   measure's async_time; under BSP every op ends by bsp_time and starts with its step */
TTEST(op_times_agree_with_measure) {
    static ipup_sched_figures f;
    ipup_sched_cost costs[2];
    int k, S, M, ci, i, n = 0;
    costs[0] = ipup_sched_cost_default();
    costs[1] = ipup_sched_cost_default();
    costs[1].f = 1.5; costs[1].b = 2.5; costs[1].i = 1.25; costs[1].w = 0.75; costs[1].exchange = 0.5;
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++)
        for (S = 2; S <= 6; S++)
            for (M = 1; M <= 12; M++)
                for (ci = 0; ci < 2; ci++) {
                    ipup_table t;
                    double end = 0.0;
                    if (gen((ipup_sched_kind)k, S, M, 0, &t)) continue;
                    measure(&t, &costs[ci], NULL, &f);
                    TT_EQ_INT(ipup_sched_op_times(&t, &costs[ci], IPUP_SCHED_TIMING_ASYNC, g_work, sizeof g_work, g_start), 0);
                    for (i = 0; i < t.n_ops; i++) {
                        double e = g_start[i] + ipup_sched_op_cost(&costs[ci], &t.ops[i]);
                        if (e > end) end = e;
                    }
                    if (end != f.async_time) { TT_CHECK(end == f.async_time); printf("kind %d S=%d M=%d\n", k, S, M); return; }
                    TT_EQ_INT(ipup_sched_op_times(&t, &costs[ci], IPUP_SCHED_TIMING_BSP, NULL, 0, g_start), 0);
                    for (i = 0; i < t.n_ops; i++) {
                        TT_CHECK(g_start[i] + ipup_sched_op_cost(&costs[ci], &t.ops[i]) <= f.bsp_time + 1e-9);
                        if (i > 0 && t.ops[i].step == t.ops[i - 1].step) TT_CHECK(g_start[i] == g_start[i - 1]);
                    }
                    n++;
                }
    TT_CHECK(n > 500);
}

/* held's peaks are measure's stash_bytes_device; a device holds 0 at the end */
TTEST(held_peaks_are_measures) {
    static ipup_sched_figures f;
    int64_t act[MAXS], peak[MAXS];
    int k, S, M, s, d, i;
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++)
        for (S = 2; S <= 6; S++)
            for (M = 1; M <= 12; M++) {
                ipup_table t;
                int64_t left[MAXS];
                if (gen((ipup_sched_kind)k, S, M, 0, &t)) continue;
                for (s = 0; s < S; s++) act[s] = 100 + s;
                measure(&t, NULL, act, &f);
                TT_EQ_INT(ipup_sched_held(&t, act, g_held, peak), 0);
                for (d = 0; d < t.devices; d++) TT_EQ_INT(peak[d], f.stash_bytes_device[d]);
                for (d = 0; d < MAXS; d++) left[d] = 0;
                for (i = 0; i < t.n_ops; i++) {
                    const ipup_op *o = &t.ops[i];
                    left[o->device] = g_held[i] - ((o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) ? act[o->stage] : 0);
                }
                for (d = 0; d < t.devices; d++) TT_EQ_INT(left[d], 0);
            }
    TT_EQ_INT(ipup_sched_held(NULL, NULL, NULL, NULL), IPUP_ERR_ARG);
}

/* The bubbles the Zero Bubble paper and the DualPipe repository state, per device:
   1F1B (P-1)(F+B), ZB-H1 (ZB1P) (P-1)(F+I-W) = (P-1)(F+B-2W), measured as async time -
   work / P over P = 2..8 and M = P..32 (M >= P, as their formulas assume) */
TTEST(paper_bubble_formulas) {
    static ipup_sched_figures f;
    ipup_sched_cost c = ipup_sched_cost_default();
    double fb[3][2] = {{1.0, 2.0}, {1.0, 1.0}, {2.0, 3.0}};
    int P, M, ci, n = 0;
    for (P = 2; P <= 8; P++)
        for (M = P; M <= 32; M += (M < 2 * P ? 1 : 5)) {
            ipup_table t;
            for (ci = 0; ci < 3; ci++) {
                c = ipup_sched_cost_default();
                c.f = fb[ci][0];
                c.b = fb[ci][1];
                TT_EQ_INT(gen(IPUP_SCHED_1F1B, P, M, 0, &t), 0);
                measure(&t, &c, NULL, &f);
                TT_NEAR(f.async_time - f.work / P, (P - 1) * (c.f + c.b), 1e-9);
            }
            c = ipup_sched_cost_default(); /* F = I = W = 1, the paper's T_F = T_B = T_W */
            TT_EQ_INT(gen(IPUP_SCHED_ZBH1, P, M, 0, &t), 0);
            measure(&t, &c, NULL, &f);
            TT_NEAR(f.async_time - f.work / P, (P - 1) * (c.f + c.i - c.w), 1e-9);
            TT_NEAR(f.async_time - f.work / P, (P - 1) * (c.f + (c.i + c.w) - 2.0 * c.w), 1e-9);
            n++;
        }
    TT_CHECK(n > 50);
}

static int svg(const ipup_table *t, ipup_sched_svg_opts *o) {
    return ipup_sched_write_svg_ex(t, NULL, NULL, o, ipup_buf_write, gbuf());
}

/* the SVG and the trace: the timing in the title, async needs scratch, chunk labels, the
   memory panel; BSP trace unchanged, async trace at op_times' starts */
TTEST(svg_and_trace_timing) {
    ipup_table t;
    ipup_sched_svg_opts o;
    memset(&o, 0, sizeof o);
    TT_EQ_INT(gen(IPUP_SCHED_1F1B, 4, 8, 0, &t), 0);
    TT_EQ_INT(svg(&t, &o), IPUP_ERR_CAPACITY); /* async by default, no work */
    o.work = g_work;
    o.work_bytes = sizeof g_work;
    TT_EQ_INT(svg(&t, &o), 0);
    TT_CONTAINS(g_buf, "   async (dataflow) time</text>");
    TT_CHECK(strstr(g_buf, ">ramp-up<") == NULL); /* phases are steps: BSP only */
    TT_CONTAINS(g_buf, ">32</text>"); /* axis to 33: the async time */
    o.timing = IPUP_SCHED_TIMING_BSP;
    TT_EQ_INT(svg(&t, &o), 0);
    TT_CONTAINS(g_buf, "   BSP (lock-step) time</text>");
    TT_CONTAINS(g_buf, ">40</text>");
    o.timing = 7;
    TT_EQ_INT(svg(&t, &o), IPUP_ERR_ARG);
    /* interleaved 1F1B on 2 devices: stage:mb labels, lighter 2nd stages */
    o.timing = IPUP_SCHED_TIMING_ASYNC;
    o.unit = 40.0;
    o.width = -1.0;
    TT_EQ_INT(gen(IPUP_SCHED_INTERLEAVED_1F1B, 4, 8, 2, &t), 0);
    TT_EQ_INT(svg(&t, &o), 0);
    TT_CONTAINS(g_buf, ">2:0</text>");
    TT_CONTAINS(g_buf, "fill=\"#a0cbe8\"");
    TT_CONTAINS(g_buf, "a device's 2nd stage");
    o.memory = 1;
    TT_EQ_INT(svg(&t, &o), 0);
    TT_CONTAINS(g_buf, "activations held per device (peak 5;");
    TT_CONTAINS(g_buf, ">peak 5</text>");
    TT_CONTAINS(g_buf, ">peak 3</text>");
    o.work_bytes = IPUP_SCHED_DRAW_WORK_BYTES(4, 8, t.n_ops) - 1;
    TT_EQ_INT(svg(&t, &o), IPUP_ERR_CAPACITY);
    /* the trace: BSP as before (phases), async at op_times' starts, no phases */
    TT_EQ_INT(gen(IPUP_SCHED_1F1B, 4, 8, 0, &t), 0);
    TT_EQ_INT(ipup_sched_write_trace_ex(&t, NULL, IPUP_SCHED_TIMING_ASYNC, NULL, 0, ipup_buf_write, gbuf()), IPUP_ERR_CAPACITY);
    TT_EQ_INT(ipup_sched_write_trace_ex(&t, NULL, IPUP_SCHED_TIMING_ASYNC, g_work, sizeof g_work, ipup_buf_write, gbuf()), 0);
    TT_CONTAINS(g_buf, "\"otherData\":{\"timing\":\"async (dataflow)\"}");
    TT_CHECK(strstr(g_buf, "\"cat\":\"phase\"") == NULL);
    TT_CONTAINS(g_buf, "{\"name\":\"U\",\"cat\":\"U\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":33000.000,");
    TT_EQ_INT(ipup_sched_write_trace(&t, NULL, ipup_buf_write, gbuf()), 0);
    TT_CONTAINS(g_buf, "{\"name\":\"U\",\"cat\":\"U\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":40000.000,");
    TT_CONTAINS(g_buf, "\"cat\":\"phase\"");
}

/* PyTorch's ScheduleDualPipeV, 4 ranks, 10 micro-batches (compute-only CSV; the team's fixture
   dualpipev_4rank_10mb.csv) */
static const char g_dualpipev_csv[] =
    "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,(0F7;7B3)OVERLAP_F_B"
    ",(7F4;0B0)OVERLAP_F_B,(0F8;7B4)OVERLAP_F_B,(7F5;0B1)OVERLAP_F_B,(0F9;7B5)OVERLAP_F_B,(7F"
    "6;0B2)OVERLAP_F_B,7B6,(7F7;0B3)OVERLAP_F_B,7B7,(7F8;0B4)OVERLAP_F_B,7B8,(7F9;0B5)OVERLAP"
    "_F_B,7B9,0I6,0W6,0I7,0W7,0I8,0W8,0I9,0W9\n"
    "1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,(1F6;6B2)OVERLAP_F_B,(6F4;1B0)OV"
    "ERLAP_F_B,(1F7;6B3)OVERLAP_F_B,(6F5;1B1)OVERLAP_F_B,(1F8;6B4)OVERLAP_F_B,(6F6;1B2)OVERLA"
    "P_F_B,(1F9;6B5)OVERLAP_F_B,(6F7;1B3)OVERLAP_F_B,6B6,(6F8;1B4)OVERLAP_F_B,6B7,(6F9;1B5)OV"
    "ERLAP_F_B,6B8,1B6,6I9,1I7,6W9,1I8,1W7,1I9,1W8,1W9\n"
    "2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,(2F5;5B1)OVERLAP_F_B,(5F4;2B0)OVERLAP_F_B,(2"
    "F6;5B2)OVERLAP_F_B,(5F5;2B1)OVERLAP_F_B,(2F7;5B3)OVERLAP_F_B,(5F6;2B2)OVERLAP_F_B,(2F8;5"
    "B4)OVERLAP_F_B,(5F7;2B3)OVERLAP_F_B,(2F9;5B5)OVERLAP_F_B,(5F8;2B4)OVERLAP_F_B,5B6,(5F9;2"
    "B5)OVERLAP_F_B,5B7,2B6,5B8,2I7,5I9,2I8,2W7,2I9,5W9,2W8,2W9\n"
    "3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,3F4,4B0,(4F4;3B0)OVERLAP_F_B,(3F5;4B1)OVERLAP_F_B,(4F5;3"
    "B1)OVERLAP_F_B,(3F6;4B2)OVERLAP_F_B,(4F6;3B2)OVERLAP_F_B,(3F7;4B3)OVERLAP_F_B,(4F7;3B3)O"
    "VERLAP_F_B,(3F8;4B4)OVERLAP_F_B,(4F8;3B4)OVERLAP_F_B,(3F9;4B5)OVERLAP_F_B,(4F9;3B5)OVERL"
    "AP_F_B,4B6,3B6,4B7,3B7,4I8,3I8,4I9,3I9,4W8,3W8,4W9,3W9\n";

/* PyTorch's ScheduleDualPipeV (4 ranks, 10 micro-batches): its "(a;b)OVERLAP_F_B" cells are
   drawn as the two hatched halves of one box */
TTEST(overlap_cells_hatched) {
    ipup_table t;
    ipup_sched_svg_opts o;
    char msg[512];
    const char *p;
    int halves = 0;
    TT_EQ_INT(ipup_sched_csv_load(g_dualpipev_csv, strlen(g_dualpipev_csv), g_ops, (int32_t)(sizeof g_ops / sizeof g_ops[0]), g_work, sizeof g_work, &t, msg,
                                  sizeof msg), 0);
    memset(&o, 0, sizeof o);
    o.timing = IPUP_SCHED_TIMING_BSP;
    TT_EQ_INT(svg(&t, &o), 0);
    TT_CONTAINS(g_buf, "<pattern id=\"ipup-hatch\"");
    TT_CONTAINS(g_buf, "hatched halves: overlapped F&amp;B in one slot");
    for (p = g_buf; (p = strstr(p, "fill=\"url(#ipup-hatch)\"/>")) != NULL; p++) halves++;
    TT_EQ_INT(halves, 2 * 41); /* the table has 41 overlap cells */
}

static ttest_case cases[] = {
    TT_CASE(op_times_agree_with_measure), TT_CASE(held_peaks_are_measures), TT_CASE(paper_bubble_formulas),
    TT_CASE(svg_and_trace_timing), TT_CASE(overlap_cells_hatched),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
