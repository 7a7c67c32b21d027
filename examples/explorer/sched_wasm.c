/* sched_wasm.c - ipupipe_sched.h for the browser: the schedule explorer's glue,
 * compiled with clang --target=wasm32 and wasm-ld, freestanding (no libc): memory
 * through the IPUPIPE_MEMSET/MEMCPY hooks (WebAssembly bulk-memory instructions), text
 * through the header's own formatter. The page (explorer.js) writes inputs into the
 * exported buffers, calls a function, and reads the document back from ex_out(); for the
 * async chart, the memory over time and the cursor it also reads the table's ops (ex_ops),
 * their BSP and async times (ex_timing) and what each device holds at each step
 * (ex_memory), all computed here over the table.
 * Build: make explorer (docs/schedules.md, the explorer). */
#define IPUPIPE_MEMSET(d, c, n) __builtin_memset((d), (c), (n))
#define IPUPIPE_MEMCPY(d, s, n) __builtin_memcpy((d), (s), (n))
#define IPUP_SCHED_MAX_STAGES 64
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_sched.h"

#define EX_EXPORT(name) __attribute__((export_name(#name)))
#define EX_MAX_S 32
#define EX_MAX_M 256
#define EX_MAX_OPS (3 * EX_MAX_S * EX_MAX_M + 4096)

/* the compiler may call these for struct copies; bulk-memory instructions do the work */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n) { return __builtin_memset(d, c, n); }
void *memcpy(void *d, const void *s, size_t n) { return __builtin_memcpy(d, s, n); }

static ipup_op g_ops[EX_MAX_OPS];
static uint64_t g_work[IPUP_SCHED_WORK_BYTES(EX_MAX_S, EX_MAX_M) / 8 + 8192];
static char g_in[1 << 18];   /* CSV text from the page */
static char g_out[1 << 21];  /* the document the page reads */
static char g_msg[4096];     /* warnings or the error */
static char g_maptext[1024]; /* the stage -> device mapping as typed ("0,[1,2],3"), NUL-terminated */
static ipup_stage_map g_cmap;
static int16_t g_map[EX_MAX_S];
static ipup_table g_t;
static ipup_sched_figures g_fig;
static ipup_sched_verify_info g_vi;
static int g_have, g_mark = -1;
static const char *g_name = "table";
static char g_csvname[32] = "csv:pasted";
static ipup_sched_cost g_cost;
static ipup_buf g_b;
static char g_title[512];    /* the SVG's title as the page writes it; "" = the header's */
/* activation bytes per stage (ex_act_set; g_act_on 0: none given, count activations) */
static int64_t g_act[EX_MAX_S];
static int g_act_on;
/* per op i of the current table: BSP start, BSP end, async start, async end (ex_timing) */
static double g_tm[4 * EX_MAX_OPS];
/* per device d and 0-based step k, d * T + k: activation bytes held, activations held
   (ex_memory); per op: the step of the op that frees an F op's activation, -1 */
#define EX_MAX_CELLS (1 << 19)
static double g_mem[EX_MAX_CELLS];
static int32_t g_held[EX_MAX_CELLS];
static int32_t g_free[EX_MAX_OPS];
static int32_t g_fop[EX_MAX_S * EX_MAX_M * IPUP_SCHED_MAX_BRANCHES]; /* F op of (m, s, branch) */
static double g_peak[IPUP_SCHED_MAX_STAGES];
static int32_t g_peak_step[IPUP_SCHED_MAX_STAGES];

EX_EXPORT(ex_in) char *ex_in(void) { return g_in; }
EX_EXPORT(ex_in_cap) int ex_in_cap(void) { return (int)sizeof g_in; }
EX_EXPORT(ex_out) char *ex_out(void) { return g_out; }
EX_EXPORT(ex_msg) char *ex_msg(void) { return g_msg; }
EX_EXPORT(ex_maptext) char *ex_maptext(void) { return g_maptext; }
EX_EXPORT(ex_maptext_cap) int ex_maptext_cap(void) { return (int)sizeof g_maptext; }
EX_EXPORT(ex_title) char *ex_title(void) { return g_title; }
EX_EXPORT(ex_title_cap) int ex_title_cap(void) { return (int)sizeof g_title; }
EX_EXPORT(ex_mark) int ex_mark(void) { return g_mark; }
EX_EXPORT(ex_kind_count) int ex_kind_count(void) { return IPUP_SCHED_KIND_COUNT; }
EX_EXPORT(ex_kind_name) const char *ex_kind_name(int k) { return ipup_sched_kind_name((ipup_sched_kind)k); }

/* the cost model of the next ex_generate / ex_check */
EX_EXPORT(ex_cost) void ex_cost(double f, double b, double i, double w, double exchange, double sync) {
    g_cost = ipup_sched_cost_default();
    g_cost.f = f; g_cost.b = b; g_cost.i = i; g_cost.w = w; g_cost.exchange = exchange; g_cost.sync = sync;
}

/* the mapping in g_maptext (nothing typed: the default, stage s on device s) into c;
   0, or the header's error code with g_msg saying what is wrong and the fix */
static int ex_mapping(int S, ipup_sched_config *c) {
    int n, k;
    for (k = 0; g_maptext[k] == ' ' || g_maptext[k] == '\t'; k++) {}
    if (!g_maptext[k]) return 0;
    n = ipup_sched_map_parse(g_maptext, &g_cmap, g_msg, sizeof g_msg);
    if (n < 1) return n;
    if (n != S) {
        ipup_snprintf(g_msg, sizeof g_msg, "the map gives %d stage%s, but S is %d: give one device (or one bracket of devices) per stage",
                      n, n == 1 ? "" : "s", S);
        return IPUP_ERR_CONFIG;
    }
    if (g_cmap.concurrent) {
        c->concurrent = &g_cmap;
        return 0;
    }
    for (k = 0; k < n; k++) g_map[k] = g_cmap.dev[k][0];
    c->stage_device = g_map;
    return 0;
}

/* generate, verify and measure one schedule (forward_only: the inference table); 0, or
   the header's error code (g_msg says why) */
EX_EXPORT(ex_generate) int ex_generate(int kind, int S, int M, int V, int devices, int strict, int forward_only) {
    ipup_sched_config c;
    char vmsg[512];
    int rc;
    g_have = 0;
    g_mark = -1;
    if (S < 1 || S > EX_MAX_S || M < 1 || M > EX_MAX_M) {
        ipup_snprintf(g_msg, sizeof g_msg, "the explorer takes 1 <= S <= %d and 1 <= M <= %d (the tool takes more)", EX_MAX_S, EX_MAX_M);
        return IPUP_ERR_ARG;
    }
    if (g_cost.f == 0.0 && g_cost.b == 0.0) g_cost = ipup_sched_cost_default();
    IPUPIPE_MEMSET(&c, 0, sizeof c);
    c.kind = (ipup_sched_kind)kind;
    c.stages = S;
    c.microbatches = M;
    c.virtual_stages = V;
    c.devices = devices;
    c.strict = strict;
    c.forward_only = forward_only;
    if ((rc = ex_mapping(S, &c)) != 0) return rc;
    rc = ipup_sched_generate(&c, g_ops, EX_MAX_OPS, &g_t, g_msg, sizeof g_msg);
    if (rc) return rc;
    rc = ipup_sched_verify(&g_t, g_work, sizeof g_work, &g_vi, vmsg, sizeof vmsg);
    if (rc) { ipup_snprintf(g_msg, sizeof g_msg, "internal error: the generated table fails verification: %s", vmsg); return rc; }
    ipup_sched_measure(&g_t, &g_cost, g_act_on ? g_act : NULL, g_work, sizeof g_work, &g_fig);
    g_name = ipup_sched_kind_name(c.kind);
    g_have = 1;
    return 0;
}

/* load the CSV in ex_in (len bytes), respace it if asked, verify: 0 valid, 1 invalid
   (ex_mark() is the 0-based step to mark, -1 if none), 2 unreadable; g_msg says why */
EX_EXPORT(ex_check) int ex_check(int len, int respace) {
    int32_t S, M, P, n;
    int rc;
    g_have = 0;
    g_mark = -1;
    if (len < 0 || len > (int)sizeof g_in) len = 0;
    if (g_cost.f == 0.0 && g_cost.b == 0.0) g_cost = ipup_sched_cost_default();
    rc = ipup_sched_csv_scan(g_in, (size_t)len, &S, &M, &P, &n, g_msg, sizeof g_msg);
    if (rc) return 2;
    if (S > EX_MAX_S || M > EX_MAX_M || n > EX_MAX_OPS || P > IPUP_SCHED_MAX_STAGES) {
        ipup_snprintf(g_msg, sizeof g_msg, "this table (S=%d, M=%d, %d ops) is larger than the explorer takes; use ipupipe-sched --check",
                      (int)S, (int)M, (int)n);
        return 2;
    }
    rc = ipup_sched_csv_load(g_in, (size_t)len, g_ops, EX_MAX_OPS, g_work, sizeof g_work, &g_t, g_msg, sizeof g_msg);
    if (rc) return 2;
    if (respace && ipup_sched_respace(&g_t, g_work, sizeof g_work, g_msg, sizeof g_msg)) return 1;
    g_have = 1;
    g_name = g_csvname;
    rc = ipup_sched_verify(&g_t, g_work, sizeof g_work, &g_vi, g_msg, sizeof g_msg);
    if (rc) { g_mark = g_vi.step; return 1; }
    g_msg[0] = '\0';
    ipup_sched_measure(&g_t, &g_cost, g_act_on ? g_act : NULL, g_work, sizeof g_work, &g_fig);
    return 0;
}

/* the current table as a document in ex_out: 0 json (as ipupipe-sched --format json),
   1 grid, 2 svg, 3 steps (the failing step marked), 4 csv, 5 grid with PopXL's stage
   numbers. Returns its length, or -1. */
EX_EXPORT(ex_render) int ex_render(int what, double svg_width) {
    ipup_sched_svg_opts so;
    int rc;
    if (!g_have) return -1;
    g_b.buf = g_out; g_b.cap = sizeof g_out; g_b.len = 0;
    IPUPIPE_MEMSET(&so, 0, sizeof so);
    so.width = svg_width;
    so.title = g_title[0] ? g_title : NULL;
    so.timing = IPUP_SCHED_TIMING_BSP; /* async needs so.work: the explorer's switch comes with its timing control */
    switch (what) {
    case 0: rc = ipup_sched_write_json(&g_t, &g_fig, g_name, g_msg, ipup_buf_write, &g_b); break;
    case 1: rc = ipup_sched_render_grid_ex(&g_t, IPUP_SCHED_GRID_STEPS, ipup_buf_write, &g_b); break;
    case 2: rc = ipup_sched_write_svg_ex(&g_t, &g_cost, g_mark < 0 ? &g_fig : NULL, &so, ipup_buf_write, &g_b); break;
    case 3: rc = ipup_sched_render_steps(&g_t, g_mark, ipup_buf_write, &g_b); break;
    case 4: rc = ipup_sched_write_csv(&g_t, ipup_buf_write, &g_b); break;
    case 5: rc = ipup_sched_render_grid_ex(&g_t, IPUP_SCHED_GRID_STEPS | IPUP_SCHED_GRID_POPXL, ipup_buf_write, &g_b); break;
    default: return -1;
    }
    if (rc || !ipup_buf_fits(&g_b)) return -1;
    return (int)g_b.len;
}

/* The current table's ops for the page: ex_ops() points at n = ex_n_ops() ipup_op records
   of 16 bytes (step int32, mb int32, stage int16, device int16, kind int8, overlap_index
   int8, branch_plus1 int8, reserved), sorted by (step, device). */
EX_EXPORT(ex_ops) const ipup_op *ex_ops(void) { return g_t.ops; }
EX_EXPORT(ex_n_ops) int ex_n_ops(void) { return g_have ? (int)g_t.n_ops : 0; }
EX_EXPORT(ex_steps) int ex_steps(void) { return g_have ? (int)g_t.steps : 0; }
EX_EXPORT(ex_devices) int ex_devices(void) { return g_have ? (int)g_t.devices : 0; }

/* the activation bytes of stage s per micro-batch for the next ex_generate / ex_check
   (the figures' stash_bytes, as --act-bytes) and ex_memory; ex_act_clear: none given */
EX_EXPORT(ex_act_clear) void ex_act_clear(void) {
    int s;
    for (s = 0; s < EX_MAX_S; s++) g_act[s] = 0;
    g_act_on = 0;
}
EX_EXPORT(ex_act_set) void ex_act_set(int s, double bytes) {
    if (s < 0 || s >= EX_MAX_S || !(bytes >= 0.0) || bytes > 9.0e15) return;
    g_act[s] = (int64_t)bytes;
    g_act_on = 1;
}

/* 1 when stage s has a branch on a device other than d: a value to or from it crosses
   (the rule of ipup_sched_measure, docs/schedules.md §4 and §9) */
static int ex_elsewhere(const ipup_table *t, int32_t s, int32_t d) {
    int32_t b;
    if (!t->concurrent || t->n_branches[s] <= 1) return t->stage_device[s] != d;
    for (b = 0; b < t->n_branches[s] && b < IPUP_SCHED_MAX_BRANCHES; b++)
        if (t->branch_device[s][b] != d) return 1;
    return 0;
}
/* 1 when the value op o makes goes to another device at the end of its step */
static int ex_crosses(const ipup_table *t, const ipup_op *o) {
    if (o->kind == IPUP_OP_F)
        return o->stage < t->stages - 1 && ex_elsewhere(t, o->stage + 1, o->device);
    if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_I)
        return o->stage > 0 && ex_elsewhere(t, o->stage - 1, o->device);
    return 0;
}

/* BSP placement into g_tm[4i], g_tm[4i+1]: every op of a step starts when the step starts;
   a step lasts its slowest op, plus the exchange when a value crosses devices, plus the
   sync (docs/schedules.md §4, as ipup_sched_measure's bsp_time) */
static void ex_timing_bsp(void) {
    int32_t i0 = 0, i1, i;
    double t0 = 0.0;
    while (i0 < g_t.n_ops) {
        double slowest = 0.0;
        int cross = 0;
        for (i1 = i0; i1 < g_t.n_ops && g_t.ops[i1].step == g_t.ops[i0].step; i1++) {
            double v = ipup_sched_op_cost(&g_cost, &g_t.ops[i1]);
            if (v > slowest) slowest = v;
            if (ex_crosses(&g_t, &g_t.ops[i1])) cross = 1;
        }
        for (i = i0; i < i1; i++) {
            g_tm[4 * i] = t0;
            g_tm[4 * i + 1] = t0 + ipup_sched_op_cost(&g_cost, &g_t.ops[i]);
        }
        t0 += slowest + (cross ? g_cost.exchange : 0.0) + g_cost.sync;
        i0 = i1;
    }
}

/* Per-op times of the current table into ex_tm(): 4 doubles per op (BSP start, BSP end,
   async start, async end). Async is ipup_sched_measure's rule (docs/schedules.md §4):
   each device runs its ops in table order, an op starts when its device is free and its
   inputs have arrived (F(s,m) needs F(s-1,m); B or I(s,m) needs F(s,m) and B or I(s+1,m);
   W(s,m) needs B or I(s,m); a value from another device arrives exchange later), so the
   largest async end equals the figures' async_time. Returns 0, or -1 without a table. */
EX_EXPORT(ex_tm) double *ex_tm(void) { return g_tm; }
EX_EXPORT(ex_timing) int ex_timing(void) {
    double free_at[IPUP_SCHED_MAX_STAGES];
    double *end_f = (double *)(void *)g_work, *end_b;
    int32_t S, M, i, d;
    if (!g_have) return -1;
    S = g_t.stages; M = g_t.microbatches;
    end_b = end_f + (size_t)S * (size_t)M;
    for (i = 0; i < S * M; i++) end_f[i] = end_b[i] = 0.0;
    for (d = 0; d < IPUP_SCHED_MAX_STAGES; d++) free_at[d] = 0.0;
    ex_timing_bsp();
    for (i = 0; i < g_t.n_ops; i++) {
        const ipup_op *o = &g_t.ops[i];
        int32_t s = o->stage, x = o->mb * S + s;
        double ready = 0.0, dep, start, end;
        d = o->device;
#define EX_DEP(arr, idx, src)                                                    \
    do {                                                                         \
        dep = (arr)[idx] + (ex_elsewhere(&g_t, src, d) ? g_cost.exchange : 0.0); \
        if (dep > ready) ready = dep;                                            \
    } while (0)
        if (o->kind == IPUP_OP_F) {
            if (s > 0) EX_DEP(end_f, x - 1, s - 1);
        } else if (o->kind == IPUP_OP_W) {
            EX_DEP(end_b, x, s);
        } else {
            EX_DEP(end_f, x, s);
            if (!g_t.forward_only && s < S - 1) EX_DEP(end_b, x + 1, s + 1);
        }
#undef EX_DEP
        start = free_at[d] > ready ? free_at[d] : ready;
        end = start + ipup_sched_op_cost(&g_cost, o);
        free_at[d] = end;
        if (o->kind == IPUP_OP_F) { if (end > end_f[x]) end_f[x] = end; }
        else if (o->kind != IPUP_OP_W && end > end_b[x]) end_b[x] = end;
        g_tm[4 * i + 2] = start;
        g_tm[4 * i + 3] = end;
    }
    return 0;
}

/* Memory over time (docs/schedules.md, the explorer): the activation of stage s, micro-batch
   m (and branch b of a concurrent stage) is held on the device of its F op from F's step to
   the step of the op that frees it, both counted: its B, or its W when the backward is split
   (the weight gradient still reads the stage's input; ipup_sched_measure's rule, so a
   device's peak equals the figures' peak_inflight_device and, with act bytes,
   stash_bytes_device whenever a device runs one op per step). Writes, for device d and
   0-based step k at d * T + k, the activations held (ex_held) and their bytes (ex_mem: the
   act bytes of each one's stage, 0 when none were given), and each device's peak
   (ex_peak: bytes, or activations when no bytes were given; ex_peak_step: its first step,
   0-based). A forward-only table stashes nothing: all zero. Returns 0, -1 without a table,
   -2 when P x T is beyond the explorer's buffers. */
EX_EXPORT(ex_mem) double *ex_mem(void) { return g_mem; }
EX_EXPORT(ex_held) int32_t *ex_held(void) { return g_held; }
EX_EXPORT(ex_free) int32_t *ex_free(void) { return g_free; }
EX_EXPORT(ex_peak) double ex_peak(int d) {
    return d >= 0 && d < IPUP_SCHED_MAX_STAGES ? g_peak[d] : 0.0;
}
EX_EXPORT(ex_peak_step) int ex_peak_step(int d) {
    return d >= 0 && d < IPUP_SCHED_MAX_STAGES ? g_peak_step[d] : -1;
}

/* the op index of each F op's freeing op's step into g_free; the held counts and bytes as
   differences (+ at F's step, - after the freeing step) in g_held and g_mem */
static void ex_memory_deltas(int32_t T) {
    int32_t S = g_t.stages, i;
    for (i = 0; i < g_t.n_ops; i++) {
        const ipup_op *o = &g_t.ops[i];
        int32_t key = (o->mb * S + o->stage) * IPUP_SCHED_MAX_BRANCHES + ipup_op_branch(o);
        g_free[i] = -1;
        if (o->kind == IPUP_OP_F) g_fop[key] = i;
        else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) g_free[g_fop[key]] = o->step;
    }
    for (i = 0; i < g_t.n_ops; i++) {
        const ipup_op *o = &g_t.ops[i];
        int32_t c0, c1;
        double bytes = g_act_on ? (double)g_act[o->stage] : 0.0;
        if (o->kind != IPUP_OP_F || g_free[i] < 0) continue;
        c0 = o->device * T + o->step;
        c1 = o->device * T + g_free[i] + 1;
        g_held[c0]++; g_mem[c0] += bytes;
        if (g_free[i] + 1 < T) { g_held[c1]--; g_mem[c1] -= bytes; }
    }
}

EX_EXPORT(ex_memory) int ex_memory(void) {
    int32_t T, P, d, k;
    if (!g_have) return -1;
    T = g_t.steps; P = g_t.devices;
    if ((int64_t)T * P > EX_MAX_CELLS || P > IPUP_SCHED_MAX_STAGES) return -2;
    for (k = 0; k < T * P; k++) { g_held[k] = 0; g_mem[k] = 0.0; }
    for (d = 0; d < P; d++) { g_peak[d] = 0.0; g_peak_step[d] = -1; }
    if (!g_t.forward_only) ex_memory_deltas(T);
    else for (k = 0; k < g_t.n_ops; k++) g_free[k] = -1;
    for (d = 0; d < P; d++) {
        for (k = 0; k < T; k++) {
            double v;
            if (k > 0) {
                g_held[d * T + k] += g_held[d * T + k - 1];
                g_mem[d * T + k] += g_mem[d * T + k - 1];
            }
            v = g_act_on ? g_mem[d * T + k] : (double)g_held[d * T + k];
            if (v > g_peak[d]) { g_peak[d] = v; g_peak_step[d] = k; }
        }
    }
    return 0;
}
