/* sched_wasm.c - ipupipe_sched.h for the browser: the schedule explorer's glue,
 * compiled with clang --target=wasm32 and wasm-ld, freestanding (no libc): memory
 * through the IPUPIPE_MEMSET/MEMCPY hooks (WebAssembly bulk-memory instructions), text
 * through the header's own formatter. The page (explorer.js) writes inputs into the
 * exported buffers, calls a function, and reads the document back from ex_out().
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

EX_EXPORT(ex_in) char *ex_in(void) { return g_in; }
EX_EXPORT(ex_in_cap) int ex_in_cap(void) { return (int)sizeof g_in; }
EX_EXPORT(ex_out) char *ex_out(void) { return g_out; }
EX_EXPORT(ex_msg) char *ex_msg(void) { return g_msg; }
EX_EXPORT(ex_maptext) char *ex_maptext(void) { return g_maptext; }
EX_EXPORT(ex_maptext_cap) int ex_maptext_cap(void) { return (int)sizeof g_maptext; }
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
    ipup_sched_measure(&g_t, &g_cost, NULL, g_work, sizeof g_work, &g_fig);
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
    ipup_sched_measure(&g_t, &g_cost, NULL, g_work, sizeof g_work, &g_fig);
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
