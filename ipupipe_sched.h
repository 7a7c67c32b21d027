/* ipupipe_sched.h - v0.4.0 - pipeline schedule tables for ipupipe - MIT licence (see end of file)
 *
 * Generate, verify, measure, render and exchange (CSV) the pipeline schedule tables
 * of ipupipe. The contract is docs/schedules.md (the op model, the
 * dependency rules, the closed forms, the figures, the file formats).
 *
 * USAGE
 *   In exactly one C or C++ file:
 *       #define IPUPIPE_IMPLEMENTATION
 *       #include "ipupipe_sched.h"
 *   Elsewhere include it without the define. Define IPUPIPE_STATIC to make every
 *   function static to one translation unit. IPUPIPE_NO_ERROR_STRINGS compiles the
 *   result-code strings out (ipup_result_str returns "").
 *
 * MEMORY
 *   No allocation, ever. A table lives in a caller-provided ipup_op array of
 *   IPUP_SCHED_MAX_OPS(S, M) entries (IPUP_SCHED_CELLS is the same). The verifier,
 *   the measure, the CSV loader and --respace take a caller-provided scratch array of
 *   IPUP_SCHED_WORK_BYTES(S, M) bytes, aligned to 8 bytes (a static uint64_t or
 *   double array). Renderers write into a caller-provided char buffer and report the
 *   length they need, like snprintf.
 *
 * EXAMPLE
 *       static ipup_op ops[IPUP_SCHED_MAX_OPS(4, 8)];
 *       ipup_sched_config cfg; ipup_table t; char msg[512];
 *       memset(&cfg, 0, sizeof cfg);
 *       cfg.kind = IPUP_SCHED_GROUPED; cfg.stages = 4; cfg.microbatches = 8;
 *       if (ipup_sched_generate(&cfg, ops, IPUP_SCHED_MAX_OPS(4, 8), &t, msg, sizeof msg))
 *           fprintf(stderr, "%s\n", msg);
 *
 * THREAD SAFETY
 *   Every function is reentrant: it touches only its arguments (no global state).
 *   Tables may be read from several threads at once.
 *
 * STACK
 *   Per call at most about 40 x IPUP_SCHED_MAX_STAGES bytes (10 KB at the default 256);
 *   define IPUP_SCHED_MAX_STAGES smaller before the include on small MCUs.
 *
 * LIBC
 *   IPUPIPE_MEMSET, IPUPIPE_MEMCPY are overridable macros; <string.h> is included
 *   only for their defaults. No stdio: text goes through the header's own formatter
 *   (ipup_snprintf) and documents through a write callback (ipup_write_fn).
 *
 * SPEED
 *   Everything is linear in the number of ops (the table is sparse: a list of ops,
 *   never a T x P grid), except the renderers of the grid/CSV (linear in T x P).
 *
 * SCHEDULES (ipup_sched_kind, names for ipup_sched_kind_parse)
 *   grouped (default), interleaved, sequential: Graphcore's PipelineSchedule.*
 *   gpipe: fill-drain (Huang et al. 2019)
 *   1f1b: PipeDream-Flush (Narayanan et al. 2021; PyTorch Schedule1F1B)
 *   interleaved-1f1b: Megatron-LM virtual stages (Narayanan et al., SC'21), stage s
 *       on device s mod P, P = S / V
 *   zb-h1: zero bubble H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024):
 *       backward split into I (input gradient) and W (weight gradient), W filling
 *       bubbles, peak in-flight no higher than 1F1B's peak (S micro-batches).
 *
 * PLACEMENT (how each table is made; all of them accumulate in order: on every stage
 * the weight-gradient ops run in increasing micro-batch, so every schedule trains to
 * the same bits)
 *   sequential, interleaved, grouped, gpipe: the closed forms of docs/schedules.md §3 (any
 *       mapping with one stage per device), then all-idle columns removed.
 *   1f1b: each stage's program placed as early as dependencies allow.
 *   interleaved-1f1b: each device's Megatron program placed as early as dependencies
 *       allow; for M % P != 0 (outside Megatron's rule; a warning, an error under
 *       strict) the program of the next multiple of P with the extra micro-batches'
 *       ops left out.
 *   zb-h1: per step and stage: F if 1F1B's warm-up and peak allow it, else I, else W.
 *       With F = I = W this has the paper's bubble (S-1)(F+B-W): T = 3M + S - 1.
 *   several stages on one device (e.g. mapping 0,1,0): list scheduling, each step
 *       every device runs the ready op the schedule ranks first (closed-form step,
 *       or backward before forward for 1f1b, F/I/W as above for zb-h1); grouped keeps
 *       its all-forward / all-backward steps.
 */
#define IPUPIPE_VERSION_MAJOR 0
#define IPUPIPE_VERSION_MINOR 4
#define IPUPIPE_VERSION_PATCH 0
#define IPUPIPE_VERSION_STRING "0.4.0"

#ifndef IPUPIPE_SCHED_H
#define IPUPIPE_SCHED_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifndef IPUPIPE_DEF
#ifdef IPUPIPE_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define IPUPIPE_DEF static __attribute__((unused))
#else
#define IPUPIPE_DEF static
#endif
#else
#define IPUPIPE_DEF extern
#endif
#endif
#ifndef IPUP__UNUSED          /* for private static helpers that some builds do not call */
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__UNUSED __attribute__((unused))
#else
#define IPUP__UNUSED
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- result codes: one list for the whole library (ipupipe.h uses it too) ---- */
#ifndef IPUP_RESULT_LIST
#define IPUP_RESULT_LIST(X)                                                              \
    X(IPUP_OK, 0, "ok")                                                                  \
    X(IPUP_ERR_ARG, -1, "bad argument (NULL pointer or value out of range)")             \
    X(IPUP_ERR_CONFIG, -2, "configuration the schedule or model cannot run")             \
    X(IPUP_ERR_CAPACITY, -3, "a caller-provided array or pool is too small")             \
    X(IPUP_ERR_INVALID_TABLE, -4, "the schedule table breaks a dependency rule")         \
    X(IPUP_ERR_PARSE, -5, "malformed text, CSV or arguments")                            \
    X(IPUP_ERR_IO, -6, "input/output error")                                             \
    X(IPUP_ERR_OOM, -7, "device memory pool exhausted")                                  \
    X(IPUP_ERR_FROZEN, -8, "allocation after the pools were frozen")                     \
    X(IPUP_ERR_NUMERIC, -9, "NaN or infinity")                                           \
    X(IPUP_ERR_CORRUPT, -10, "corrupt file (bad checksum or magic, or truncated)")       \
    X(IPUP_ERR_MISMATCH, -11, "file, shape or version does not match")                   \
    X(IPUP_ERR_UNSUPPORTED, -12, "unsupported")                                          \
    X(IPUP_ERR_THREAD, -13, "thread error")
#define IPUP__RESULT_ENUM(name, value, text) name = value,
typedef enum ipup_result { IPUP_RESULT_LIST(IPUP__RESULT_ENUM) IPUP_RESULT_LAST_ = -13 } ipup_result;
#undef IPUP__RESULT_ENUM
/* The text of a result code ("" when IPUPIPE_NO_ERROR_STRINGS; "unknown result" for
   codes not in the list). */
IPUPIPE_DEF const char *ipup_result_str(int code);
#define IPUP__RESULT_STR_FROM_SCHED 1
#endif

/* ---- text formatting: no heap, no stdio ----
   The C99 snprintf contract: returns the length the whole text needs (without the NUL;
   -1 above INT_MAX), writes at most len bytes, NUL-terminated when len > 0; buf may be
   NULL when len is 0. Standard conversions only: flags - 0 + space #, width and
   precision (also *), sizes hh h l ll z, conversions d i u o x X c s p f F e E g G %.
   The output is glibc's, byte for byte: doubles are converted exactly (round half to
   even), "inf"/"nan" with their sign, "(nil)" for a NULL %p. */
#ifndef IPUP__PRINTF
#if defined(__GNUC__) || defined(__clang__)
#define IPUP__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IPUP__PRINTF(f, a)
#endif
#endif
IPUPIPE_DEF int ipup_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap) IPUP__PRINTF(3, 0);
IPUPIPE_DEF int ipup_snprintf(char *buf, size_t len, const char *fmt, ...) IPUP__PRINTF(3, 4);

/* ---- output: documents go through a write callback ----
   write receives the text piece by piece and returns 0 when it took all len bytes,
   non-zero on failure. */
typedef int (*ipup_write_fn)(void *user, const void *data, size_t len);
/* A text in memory: give ipup_buf_write and &b to any writer. It copies what fits
   (buf stays NUL-terminated when cap > 0), adds every byte offered to len and always
   returns 0: the writer finishes, len is the size the whole text needs (without the
   NUL) and the text was cut when len >= cap (ipup_buf_fits is 0). buf may be NULL with
   cap 0 to ask the size. */
typedef struct ipup_buf {
    char *buf;
    size_t cap, len;
} ipup_buf;
IPUPIPE_DEF int ipup_buf_write(void *user /* ipup_buf * */, const void *data, size_t n);
static inline int ipup_buf_fits(const ipup_buf *b) { return b->len < b->cap; }

/* ---- tables ---- */
#ifndef IPUP_SCHED_MAX_STAGES
#define IPUP_SCHED_MAX_STAGES 256 /* compile-time maximum S (and P); overridable */
#endif
#ifndef IPUP_SCHED_MAX_BRANCHES
#define IPUP_SCHED_MAX_BRANCHES 8 /* most devices (branches) of one concurrent stage; overridable, 1..8 */
#endif
#if IPUP_SCHED_MAX_BRANCHES < 1 || IPUP_SCHED_MAX_BRANCHES > 8
#error "IPUP_SCHED_MAX_BRANCHES must be 1..8 (the verifier keeps the branches seen in one byte)"
#endif
/* Largest micro-batch count accepted (keeps 3*S*M and the work sizes in range). */
#define IPUP_SCHED_MAX_MICROBATCHES (1 << 22)

typedef enum ipup_op_kind { IPUP_OP_F = 1, IPUP_OP_B = 2, IPUP_OP_I = 3, IPUP_OP_W = 4 } ipup_op_kind;

typedef struct ipup_op {
    int32_t step;   /* 0-based time step (column) */
    int32_t mb;     /* micro-batch */
    int16_t stage;
    int16_t device; /* row */
    int8_t kind;    /* ipup_op_kind */
    int8_t overlap_index; /* position inside a CSV overlap cell "(a;b)OVERLAP_F_B" (0, 1, ...);
                             0 for any other op */
    int8_t branch_plus1;  /* 0 for an op of a plain stage; b + 1 for branch b of a concurrent
                             stage (read it with ipup_op_branch) */
    int8_t reserved_;     /* 0 */
} ipup_op;
#ifdef __cplusplus
static_assert(sizeof(ipup_op) == 16, "ipup_op is 16 bytes");
#else
_Static_assert(sizeof(ipup_op) == 16, "ipup_op is 16 bytes");
#endif

typedef struct ipup_table {
    int32_t stages, microbatches, devices, steps;
    int32_t n_ops, cap_ops;
    ipup_op *ops; /* ops (cap_ops): caller-provided, sorted by (step, device); n_ops = 2*S*M,
                     or 3*S*M when split */
    int32_t split_backward; /* 1 when the backward is I + W ops (some or all of them) */
    int16_t stage_device[IPUP_SCHED_MAX_STAGES]; /* stage -> device; -1 beyond stages */
    int32_t forward_only;   /* 1: an inference table, F ops only (n_ops = S*M; §8) */
    /* concurrent stages (docs/schedules.md §9); all zero in a plain table */
    int32_t concurrent;                           /* 1 when some stage runs as branches on several devices */
    int8_t n_branches[IPUP_SCHED_MAX_STAGES];     /* concurrent: branches of stage s (1 = plain stage) */
    int16_t branch_device[IPUP_SCHED_MAX_STAGES][IPUP_SCHED_MAX_BRANCHES]; /* concurrent: device of branch b */
} ipup_table;

#define IPUP_SCHED_MAX_OPS(S, M) (3 * (S) * (M)) /* enough ops for any built-in schedule */
#define IPUP_SCHED_CELLS(S, M) IPUP_SCHED_MAX_OPS(S, M)
/* Scratch bytes for verify / measure / respace / CSV load of an S x M table. */
#define IPUP_SCHED_WORK_BYTES(S, M) \
    ((size_t)32 * (size_t)(S) * (size_t)(M) + (size_t)8 * (size_t)(M) + (size_t)256)

typedef enum ipup_sched_kind {
    IPUP_SCHED_GROUPED = 0, /* default */
    IPUP_SCHED_INTERLEAVED,
    IPUP_SCHED_SEQUENTIAL,
    IPUP_SCHED_GPIPE,
    IPUP_SCHED_1F1B,
    IPUP_SCHED_INTERLEAVED_1F1B,
    IPUP_SCHED_ZBH1
} ipup_sched_kind;
#define IPUP_SCHED_KIND_COUNT 7

/* A stage -> devices mapping with concurrent stages (docs/schedules.md §9): stage s runs
   on n_dev[s] devices dev[s][0..n_dev[s]-1], one branch per device (n_dev[s] = 1: a plain
   stage). ipup_sched_map_parse reads it from text such as "0,[1,2],2,3". */
typedef struct ipup_stage_map {
    int32_t stages;     /* S */
    int32_t concurrent; /* 1 when some stage has n_dev > 1 */
    int8_t n_dev[IPUP_SCHED_MAX_STAGES];
    int16_t dev[IPUP_SCHED_MAX_STAGES][IPUP_SCHED_MAX_BRANCHES];
} ipup_stage_map;

typedef struct ipup_sched_config { /* zero = default */
    ipup_sched_kind kind;
    int32_t stages, microbatches;
    int32_t devices;              /* 0: as many as the mapping needs */
    int32_t virtual_stages;       /* interleaved-1f1b: stages per device V (0: S/devices when
                                     devices is given, else 2 when S is even, else 1) */
    const int16_t *stage_device;  /* stage_device (stages) or NULL: default mapping s -> s */
    int32_t strict;               /* Graphcore (and Megatron) API rules as errors */
    int32_t forward_only;         /* inference: F ops only (docs/schedules.md §8); grouped, gpipe,
                                     1f1b, sequential, interleaved-1f1b; interleaved, zb-h1 and
                                     concurrent stages have no forward-only form (IPUP_ERR_CONFIG) */
    const ipup_stage_map *concurrent; /* NULL, or the mapping with concurrent stages (then
                                     stage_device is NULL; docs/schedules.md §9) */
} ipup_sched_config;

/* Generate a table into ops (cap_ops). msg (msg_len) receives the error text, or on
   success the warnings, one per line ("" if none). Returns IPUP_OK, IPUP_ERR_ARG,
   IPUP_ERR_CONFIG or IPUP_ERR_CAPACITY. */
IPUPIPE_DEF int ipup_sched_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                                       ipup_table *out, char *msg, size_t msg_len);
/* "grouped", "interleaved", "sequential", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"
   (case-insensitive; '_' or '-' alike; also "zbh1", "i1f1b"). IPUP_ERR_PARSE if unknown. */
IPUPIPE_DEF int ipup_sched_kind_parse(const char *name, ipup_sched_kind *out);
IPUPIPE_DEF const char *ipup_sched_kind_name(ipup_sched_kind kind);
/* per-stage peak in-flight micro-batches (docs/schedules.md §4) into out (n_out >= stages) */
IPUPIPE_DEF int ipup_sched_peak_inflight(const ipup_table *t, int32_t *out, int32_t n_out);

/* ---- ops ---- */
/* PyTorch's compute-only token of an op, "<stage><F|B|I|W><mb>" (e.g. "2B7"), into
   buf (len); returns its length. */
IPUPIPE_DEF int ipup_sched_op_str(const ipup_op *op, char *buf, size_t len);
/* Sort t->ops by (step, device, position in an overlap cell). In place (heapsort),
   no allocation; O(n log n). */
IPUPIPE_DEF void ipup_sched_sort(ipup_table *t);

/* ---- verify (docs/schedules.md §2) ---- */
typedef struct ipup_sched_verify_info {
    int32_t rule;               /* 0 valid; 1..5: the rule of docs/schedules.md §2 that broke;
                                   6: table structure (sizes, ranges, sorting) */
    int32_t step, device;       /* where: the failing op's 0-based step index (messages say step + 1) and
                                   device (-1 when the op is missing) */
    int32_t op_index;           /* index of the failing op in ops, -1 */
    int32_t stage, mb, kind;    /* the op that is wrong or missing (-1 when not about one op) */
    int32_t in_order;           /* 1 when every stage's weight-gradient ops (B or W) run in increasing m */
    int32_t out_of_order_stage; /* first stage that breaks in-order accumulation, -1 */
} ipup_sched_verify_info;
/* Check every rule of docs/schedules.md §2 on any table (built-in or loaded). work
   (work_bytes >= IPUP_SCHED_WORK_BYTES(S, M), 8-byte aligned) is scratch. Returns
   IPUP_OK, IPUP_ERR_INVALID_TABLE (msg names the device, the step, the op and the fix;
   info says where), IPUP_ERR_ARG or IPUP_ERR_CAPACITY (work too small). info may be
   NULL. */
IPUPIPE_DEF int ipup_sched_verify(const ipup_table *t, void *work, size_t work_bytes, ipup_sched_verify_info *info,
                                     char *msg, size_t msg_len);

/* ---- measure (docs/schedules.md §4) ---- */
typedef struct ipup_sched_cost {
    double f, b, i, w;          /* cost of one op of each kind (time units) */
    double exchange;            /* BSP: added to a step when a value crosses devices at its end;
                                   async: delay of a value that crosses devices */
    double sync;                /* BSP: added to every step */
    const double *stage_scale;  /* stage_scale (stages) or NULL: per-stage factor on op costs */
} ipup_sched_cost;
/* F=1, B=2, I=1, W=1, exchange=0, sync=0 (docs/schedules.md §4). */
IPUPIPE_DEF ipup_sched_cost ipup_sched_cost_default(void);
/* Cost of one op under a cost model. */
IPUPIPE_DEF double ipup_sched_op_cost(const ipup_sched_cost *c, const ipup_op *op);

typedef struct ipup_sched_figures {
    int32_t stages, microbatches, devices, steps, n_ops;
    double unit_utilisation;       /* busy cells / (T x P) */
    double work;                   /* sum of op costs */
    double bsp_time;               /* sum over steps of (max op cost + exchange if a value crosses + sync) */
    double async_time;             /* makespan, each device running its ops in table order asap */
    double bubble_bsp, bubble_async; /* 1 - work / (P x time) */
    int32_t first_mb_done;         /* 1-based step at which the first micro-batch has all its ops done */
    int32_t first_mb;              /* that micro-batch */
    int32_t ramp_up[2], main_phase[2], ramp_down[2]; /* inclusive 0-based step ranges; [a, a-1] is
                                      empty. ipup_sched_phases: main from the first to the last step
                                      in which every device in use is busy */
    int32_t in_order;              /* in-order accumulation (see verify) */
    int32_t peak_inflight[IPUP_SCHED_MAX_STAGES];
    int64_t stash_bytes[IPUP_SCHED_MAX_STAGES]; /* peak_inflight x act_bytes per stage */
    int64_t stash_total;
    /* forward-only tables (docs/schedules.md §8; 0 for training tables). There
       peak_inflight[s] counts the inputs of stage s that exist at once (made by F(s-1, m)
       or fed for F(0, m), alive until the end of the step of F(s, m)): no stash, and
       stash_bytes = that x act_bytes (the bytes of one micro-batch's input of stage s). */
    double fwd_latency;            /* BSP time from the start of F(0,m)'s step to the end of F(S-1,m)'s,
                                      the longest over m */
    int32_t fwd_latency_steps;     /* steps from F(0,m) to F(S-1,m), both counted, the longest over m */
    double fwd_throughput;         /* steady state under BSP timing: (M-1) / (end of F(S-1,M-1)'s step -
                                      end of F(S-1,0)'s) micro-batches per time unit; 1 / fwd_latency
                                      when M = 1 */
    /* per device (docs/schedules.md §9): the most micro-batches whose activations device d
       holds at once (over all its stages and branches; a branch counts on its own device),
       the most bytes it stashes at once (act_bytes per stage and branch), and the sum over
       devices of the first: the activations stored in the whole pipeline at its peaks */
    int32_t peak_inflight_device[IPUP_SCHED_MAX_STAGES];
    int64_t stash_bytes_device[IPUP_SCHED_MAX_STAGES];
    int32_t inflight_total;
} ipup_sched_figures;
/* Figures of a valid table (verify first). cost NULL: defaults. act_bytes (stages) or
   NULL: bytes a stage keeps per micro-batch in flight (with recomputation only its
   input). work as for verify. */
IPUPIPE_DEF int ipup_sched_measure(const ipup_table *t, const ipup_sched_cost *cost, const int64_t *act_bytes, void *work,
                                      size_t work_bytes, ipup_sched_figures *out);
/* The phases of a table as the Graphcore tutorials define them (docs/schedules.md §4):
   ramp-up until every device that runs any op is busy in one step, main from that step
   to the last step in which they all are, ramp-down after. A pipeline that never fills
   has no main phase: its ramp-up ends where the first backward (B or I) starts. out[6] =
   ramp-up, main, ramp-down as inclusive 0-based step ranges [first, last]; [x, x-1] is
   empty. Ops must be sorted by step. Returns IPUP_ERR_ARG on a bad table. */
IPUPIPE_DEF int ipup_sched_phases(const ipup_table *t, int32_t out[6]);

/* ---- render and exchange ----
   Every writer sends its document through write(user, data, len), in pieces, and
   returns IPUP_OK, IPUP_ERR_ARG (bad table or arguments, nothing written) or
   IPUP_ERR_IO as soon as write returns non-zero (it is not called again). To get the
   text in memory, pass ipup_buf_write and an ipup_buf. */
/* Text grid, rows = devices ("IPU0  F0 .. B0"); cells show the stage too when a device
   holds several stages ("2F0"). */
IPUPIPE_DEF int ipup_sched_render_grid(const ipup_table *t, ipup_write_fn write, void *user);
/* PopXL's numbering (docs/schedules.md §3, PopXL view): the forward and the backward of a
   model stage are separate pipeline stages. With S model stages, F(s) is pipeline stage
   s and B/I/W(s) is 2S-2-s, so S model stages are 2S-1 pipeline stages and the last
   model stage's forward and backward share stage S-1. The activation stash of model
   stage s is a FIFO of length (2S-2-s) - s. */
IPUPIPE_DEF int32_t ipup_sched_popxl_stage(int32_t stages, const ipup_op *op);
/* The grid of ipup_sched_render_grid with every cell named by its PopXL pipeline stage
   ("3B0": the backward of model stage 1 of 3). */
IPUPIPE_DEF int ipup_sched_render_grid_popxl(const ipup_table *t, ipup_write_fn write, void *user);
/* The grid with options: IPUP_SCHED_GRID_STEPS adds a first line "step  1  2 ..." with
   the 1-based step numbers over their columns (every k-th column when the numbers are
   wider than a cell); IPUP_SCHED_GRID_POPXL names the cells by PopXL's stages. */
#define IPUP_SCHED_GRID_STEPS 1
#define IPUP_SCHED_GRID_POPXL 2
IPUPIPE_DEF int ipup_sched_render_grid_ex(const ipup_table *t, int flags, ipup_write_fn write, void *user);
/* PyTorch's _format_pipeline_order layout (rows "Step NN:", columns "Rank i"), with the
   steps numbered from 1 as a person counts them (PyTorch counts from 0); the row of the
   0-based step index mark_step (>= 0) ends with " <-- ERROR HERE". */
IPUPIPE_DEF int ipup_sched_render_steps(const ipup_table *t, int32_t mark_step, ipup_write_fn write, void *user);
/* PyTorch compute-only CSV: one row per device, one cell per step, empty = idle. */
IPUPIPE_DEF int ipup_sched_write_csv(const ipup_table *t, ipup_write_fn write, void *user);
/* Chrome trace JSON ({"traceEvents": [...]}, ph "X", pid = device), BSP timing from the
   cost model, 1 time unit = 1 ms: one event per op (named like the CSV, "0F0"; a colour
   per kind in cname), the update U on every device, and the phases as spans on a track
   of their own (pid = P). Opens in Perfetto and chrome://tracing. */
IPUPIPE_DEF int ipup_sched_write_trace(const ipup_table *t, const ipup_sched_cost *cost, ipup_write_fn write, void *user);
/* SVG Gantt chart: devices as rows, op widths from the cost model (BSP timing), the
   weight update U after the last step, phases (from fig, may be NULL) marked. */
IPUPIPE_DEF int ipup_sched_write_svg(const ipup_table *t, const ipup_sched_cost *cost, const ipup_sched_figures *fig,
                                     ipup_write_fn write, void *user);
/* Layout of the SVG (zero = default). */
typedef struct ipup_sched_svg_opts {
    double unit;       /* px per cost unit; 0: 24, shrunk down to 8 to fit width (further
                          when one step is longer than the width: costs far apart) */
    double width;      /* widest canvas in px: longer tables fold into bands of time, one
                          under the other; 0: 1600; < 0: never fold. Never more than
                          1048576 px either way */
    const char *title; /* NULL: "S=.. M=.. P=.. T=..  F=.. B=.." (the sizes and costs) */
} ipup_sched_svg_opts;
/* The slide-ready chart: a title, 1-based step numbers over the columns, a time axis
   when the costs are not all 1, the phases shaded and labelled where the label fits, a
   legend wrapped to the canvas with only the op kinds present. Text stays inside the
   canvas; ipup_sched_write_svg is this with opts NULL. IPUP_ERR_ARG for a bad table, a
   NULL write, or a cost or stage scale that is negative, NaN, infinite or above 1e15. */
IPUPIPE_DEF int ipup_sched_write_svg_ex(const ipup_table *t, const ipup_sched_cost *cost, const ipup_sched_figures *fig,
                                        const ipup_sched_svg_opts *opts, ipup_write_fn write, void *user);
/* One JSON object with the figures: schedule, stages, microbatches, devices, steps,
   unit_utilisation, bsp_time, async_time, bubble_fraction, bubble_fraction_async,
   peak_inflight, stash_bytes, first_microbatch_done, phases, in_order, warnings. */
IPUPIPE_DEF int ipup_sched_write_json(const ipup_table *t, const ipup_sched_figures *fig, const char *schedule,
                                      const char *warnings, ipup_write_fn write, void *user);

/* Read PyTorch's compute-only CSV (docs/schedules.md §6): rows = devices, cells
   "<stage><F|B|I|W><mb>", empty = idle, "(a;b)OVERLAP_F_B" = two ops in one slot. In
   the older notation a B followed by a W of the same stage and micro-batch is the
   input gradient (loaded as I). The stage -> device map is inferred from where each
   stage first appears (verify checks the rest). First ipup_sched_csv_scan to learn
   the sizes, then ipup_sched_csv_load with arrays of those sizes. Errors:
   IPUP_ERR_PARSE with row and column, IPUP_ERR_CAPACITY. */
IPUPIPE_DEF int ipup_sched_csv_scan(const char *text, size_t text_len, int32_t *stages, int32_t *microbatches,
                                       int32_t *devices, int32_t *n_ops, char *msg, size_t msg_len);
IPUPIPE_DEF int ipup_sched_csv_load(const char *text, size_t text_len, ipup_op *ops, int32_t cap_ops, void *work,
                                       size_t work_bytes, ipup_table *out, char *msg, size_t msg_len);
/* Re-place the ops of each device, keeping each device's order, as early as their
   dependencies allow (like PyTorch's schedule simulator): turns per-device orders
   into a lock-step table. Overlap cells become two consecutive steps. Compacts.
   Returns IPUP_ERR_INVALID_TABLE when the orders deadlock or an op is missing. */
IPUPIPE_DEF int ipup_sched_respace(ipup_table *t, void *work, size_t work_bytes, char *msg, size_t msg_len);

/* ---- concurrent pipeline stages (docs/schedules.md §9; TF IPU user guide §6.5.7) ----
   A concurrent stage is one stage run as several branches, one per device, on the same
   micro-batch in the same step. In a table every branch is its own op on its own
   device row; its branch_plus1 holds branch + 1 (0 for an op of a plain stage). */
/* The branch of an op of a concurrent stage (0..n-1), or -1 for an op of a plain stage. */
static inline int ipup_op_branch(const ipup_op *op) { return op->branch_plus1 > 0 ? op->branch_plus1 - 1 : -1; }
/* Parse a stage -> device mapping: device numbers separated by commas, one per stage,
   where a bracketed list is one stage on several devices: "0,1,2,1,0", "0,[1,2],2,3".
   Spaces and tabs around numbers and signs are ignored. Devices are 0..255, at most
   IPUP_SCHED_MAX_BRANCHES per bracket and all distinct, brackets do not nest, at most
   IPUP_SCHED_MAX_STAGES stages. Returns the stage count, or IPUP_ERR_ARG (NULL
   argument) / IPUP_ERR_PARSE with msg saying what is wrong, where, and the fix. */
IPUPIPE_DEF int ipup_sched_map_parse(const char *text, ipup_stage_map *out, char *msg, size_t msg_len);
/* The serialised form of a mapping: each concurrent stage's branches become consecutive
   plain stages on their devices (0,[1,2],2,3 -> 0,1,2,2,3). Writes the plain mapping
   into stage_device (cap entries) and returns its stage count, or IPUP_ERR_CAPACITY. */
IPUPIPE_DEF int ipup_sched_map_serialised(const ipup_stage_map *map, int16_t *stage_device, int32_t cap);
/* The sum over stages of their branch counts: size a concurrent table's ops with
   IPUP_SCHED_MAX_OPS(ipup_sched_map_lanes(map), M). */
IPUPIPE_DEF int32_t ipup_sched_map_lanes(const ipup_stage_map *map);

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_SCHED_H */

/* ======================================================================== */
#ifdef IPUPIPE_IMPLEMENTATION
#ifndef IPUPIPE_SCHED_IMPLEMENTED
#define IPUPIPE_SCHED_IMPLEMENTED

/* libc memory functions, overridable like stb (same names as ipupipe_kernels.h);
   <string.h> is included only for the defaults. No other string.h function is used. */
#if !defined(IPUPIPE_MEMSET) || !defined(IPUPIPE_MEMCPY)
#include <string.h>
#endif
#ifndef IPUPIPE_MEMSET
#define IPUPIPE_MEMSET(d, c, n) memset((d), (c), (n))
#endif
#ifndef IPUPIPE_MEMCPY
#define IPUPIPE_MEMCPY(d, s, n) memcpy((d), (s), (n))
#endif
#ifdef __cplusplus
extern "C" {
#endif

#if defined(IPUP__RESULT_STR_FROM_SCHED) && !defined(IPUP__RESULT_STR_DONE)
#define IPUP__RESULT_STR_DONE 1
IPUPIPE_DEF const char *ipup_result_str(int code) {
#ifdef IPUPIPE_NO_ERROR_STRINGS
    (void)code;
    return "";
#else
#define IPUP__RESULT_CASE(name, value, text) \
    case value: return #name ": " text;
    switch (code) { IPUP_RESULT_LIST(IPUP__RESULT_CASE) default: break; }
#undef IPUP__RESULT_CASE
    return "unknown result";
#endif
}
#endif

/* ---- string helpers: the one copy of each for all three headers (no <string.h>) ----
   ipup__name_eq compares every option and schedule name: ASCII case folded, '_' equal
   to '-'. */
static IPUP__UNUSED int ipup__name_eq(const char *a, const char *b) {
    for (;; a++, b++) {
        int ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (ca >= 'A' && ca <= 'Z') ca += 'a' - 'A';
        if (cb >= 'A' && cb <= 'Z') cb += 'a' - 'A';
        if (ca == '_') ca = '-';
        if (cb == '_') cb = '-';
        if (ca != cb) return 0;
        if (!ca) return 1;
    }
}

static IPUP__UNUSED size_t ipup__strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
static IPUP__UNUSED const char *ipup__strchr(const char *s, int c) {
    for (; *s; s++)
        if (*s == (char)c) return s;
    return c == 0 ? s : NULL;
}
static IPUP__UNUSED int ipup__memeq(const char *a, const char *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* ---- formatter: ipup_vsnprintf (C99 snprintf contract, glibc's output) ----
   Output goes to an ipup__out: bytes beyond cap are counted, not stored, so the same
   code measures (buf NULL) and writes. Doubles are converted exactly: a finite double
   is m x 2^e, so it equals N x 10^-k with N = m x 2^e (e >= 0, k = 0) or N = m x 5^k
   (e < 0, k = -e); N (at most 767 digits) is held in base 10^9 limbs on the stack and
   rounded half to even, as glibc does in the default rounding mode. */
typedef struct ipup__out {
    char *buf;
    size_t cap; /* bytes that may be stored (the NUL excluded) */
    size_t pos; /* bytes produced so far */
} ipup__out;

static IPUP__UNUSED void ipup__putc(ipup__out *o, char c) {
    if (o->pos < o->cap) o->buf[o->pos] = c;
    o->pos++;
}
static IPUP__UNUSED void ipup__putn(ipup__out *o, const char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) ipup__putc(o, s[i]);
}
static IPUP__UNUSED void ipup__putpad(ipup__out *o, char c, size_t n) {
    while (n--) ipup__putc(o, c);
}

typedef struct ipup__spec {
    int minus, plus, space, zero, alt; /* flags - + space 0 # */
    int width;                         /* 0: none */
    int prec;                          /* -1: none */
    int size;                          /* 0, 'H' (hh), 'h', 'l', 'L' (ll), 'z' */
    char conv;
} ipup__spec;

/* Pads the text made of prefix (sign, 0x), zeros (precision or 0 flag) and body (blen
   bytes, from body() or from str) to the field width. */
typedef void (*ipup__body_fn)(ipup__out *o, const void *arg);
static IPUP__UNUSED void ipup__field(ipup__out *o, const ipup__spec *sp, const char *prefix, size_t zeros, const char *str,
                                    ipup__body_fn body, const void *arg, int zero_fill) {
    size_t plen = ipup__strlen(prefix), blen, total, pad;
    if (body) {
        ipup__out cnt;
        cnt.buf = NULL; cnt.cap = 0; cnt.pos = 0;
        body(&cnt, arg);
        blen = cnt.pos;
    } else blen = ipup__strlen(str);
    total = plen + zeros + blen;
    pad = (size_t)sp->width > total ? (size_t)sp->width - total : 0;
    if (!sp->minus && !zero_fill) ipup__putpad(o, ' ', pad);
    ipup__putn(o, prefix, plen);
    if (!sp->minus && zero_fill) ipup__putpad(o, '0', pad);
    ipup__putpad(o, '0', zeros);
    if (body) body(o, arg);
    else ipup__putn(o, str, blen);
    if (sp->minus) ipup__putpad(o, ' ', pad);
}

/* d i u o x X p: magnitude v, neg for a negative signed value */
static IPUP__UNUSED void ipup__fmt_int(ipup__out *o, const ipup__spec *sp, uint64_t v, int neg) {
    char dig[24], prefix[4];
    const char *hex = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    unsigned base = sp->conv == 'o' ? 8u : (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') ? 16u : 10u;
    int nd = 0, i, zeros, np = 0, is_signed = sp->conv == 'd' || sp->conv == 'i' || sp->conv == 'p';
    char txt[24];
    uint64_t x = v;
    while (x > 0) {
        uint64_t q = x / base;
        dig[nd++] = hex[x - q * base];
        x = q;
    }
    if (nd == 0 && sp->prec != 0) dig[nd++] = '0';
    for (i = 0; i < nd; i++) txt[i] = dig[nd - 1 - i];
    txt[nd] = '\0';
    zeros = sp->prec > nd ? sp->prec - nd : 0;
    if (sp->conv == 'o' && sp->alt && zeros == 0 && (nd == 0 || txt[0] != '0')) zeros = 1;
    if (is_signed) {
        if (neg) prefix[np++] = '-';
        else if (sp->plus) prefix[np++] = '+';
        else if (sp->space) prefix[np++] = ' ';
    }
    if ((sp->alt && v != 0 && (sp->conv == 'x' || sp->conv == 'X')) || sp->conv == 'p') {
        prefix[np++] = '0';
        prefix[np++] = sp->conv == 'X' ? 'X' : 'x';
    }
    prefix[np] = '\0';
    ipup__field(o, sp, prefix, (size_t)zeros, txt, NULL, NULL, sp->zero && sp->prec < 0);
}

#define IPUP__DEC_LIMBS 96 /* base 10^9: N < 10^767 needs 86 */
typedef struct ipup__dec {
    uint32_t l[IPUP__DEC_LIMBS]; /* N in base 10^9, least significant limb first */
    int nl, nd;                   /* limbs, decimal digits (0 for zero) */
    int exp10;                    /* value = d0.d1d2... x 10^exp10 (0 for zero) */
    int last_nz;                  /* index of the last nonzero digit, -1 for zero */
} ipup__dec;

static const uint32_t ipup__pow10[10] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
                                         1000000000u};

static IPUP__UNUSED void ipup__dec_mul(ipup__dec *d, uint32_t f) {
    uint64_t carry = 0;
    int i;
    for (i = 0; i < d->nl; i++) {
        uint64_t x = (uint64_t)d->l[i] * f + carry;
        d->l[i] = (uint32_t)(x % 1000000000u);
        carry = x / 1000000000u;
    }
    while (carry && d->nl < IPUP__DEC_LIMBS) {
        d->l[d->nl++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
}

/* the exact decimal digits of |v| (v finite) */
static IPUP__UNUSED void ipup__dec_init(ipup__dec *d, double v) {
    uint64_t bits, m;
    int e, i, k = 0, p;
    uint32_t top;
    IPUPIPE_MEMCPY(&bits, &v, sizeof bits);
    m = bits & (((uint64_t)1 << 52) - 1);
    e = (int)((bits >> 52) & 0x7ff);
    if (e == 0) e = -1074;
    else { m |= (uint64_t)1 << 52; e -= 1075; }
    d->nl = d->nd = d->exp10 = 0;
    d->last_nz = -1;
    if (m == 0) return;
    while ((m & 1) == 0 && e < 0) { m >>= 1; e++; }
    d->l[0] = (uint32_t)(m % 1000000000u);
    d->l[1] = (uint32_t)(m / 1000000000u % 1000000000u);
    d->nl = d->l[1] ? 2 : 1;
    if (m >= (uint64_t)1000000000u * 1000000000u) d->l[d->nl++] = (uint32_t)(m / 1000000000u / 1000000000u);
    if (e >= 0) {
        for (; e >= 30; e -= 30) ipup__dec_mul(d, (uint32_t)1 << 30);
        if (e) ipup__dec_mul(d, (uint32_t)1 << e);
    } else {
        for (k = -e; k >= 13; k -= 13) ipup__dec_mul(d, 1220703125u); /* 5^13 */
        for (; k > 0; k--) ipup__dec_mul(d, 5u);
        k = -e;
    }
    for (top = d->l[d->nl - 1], p = 0; top; top /= 10u) p++;
    d->nd = 9 * (d->nl - 1) + p;
    d->exp10 = d->nd - 1 - k;
    for (i = 0; d->l[i] == 0; i++) {}
    for (p = 0; d->l[i] % ipup__pow10[p + 1] == 0; p++) {}
    d->last_nz = d->nd - 1 - (9 * i + p);
}

static IPUP__UNUSED int ipup__dec_digit(const ipup__dec *d, int64_t j) {
    int64_t p;
    if (j < 0 || j >= d->nd) return 0;
    p = d->nd - 1 - j;
    return (int)(d->l[p / 9] / ipup__pow10[p % 9] % 10u);
}

/* The digits of d kept to the first n significant ones, rounded half to even. */
typedef struct ipup__rnd {
    const ipup__dec *d;
    int64_t n, q; /* kept digits; up: the digit q gets +1 and the kept ones after it are 0 */
    int up, one;  /* one: rounded up to 10^exp10 (a 1 and zeros) */
    int exp10;
} ipup__rnd;

static IPUP__UNUSED void ipup__round(ipup__rnd *r, const ipup__dec *d, int64_t n) {
    int dn, up;
    int64_t q;
    r->d = d; r->up = r->one = 0; r->q = -1; r->exp10 = d->exp10;
    if (n > (int64_t)d->nd + 1) n = d->nd + 1;
    r->n = n < 0 ? 0 : n;
    if (n < 0 || d->nd == 0) return; /* below half a unit of the last kept place: 0 */
    dn = ipup__dec_digit(d, n);
    up = dn > 5 || (dn == 5 && (d->last_nz > n || (n > 0 && (ipup__dec_digit(d, n - 1) & 1))));
    if (!up) return;
    for (q = n - 1; q >= 0 && ipup__dec_digit(d, q) == 9; q--) {}
    if (q < 0) { r->one = 1; r->exp10 = d->exp10 + 1; }
    else { r->up = 1; r->q = q; }
}

static IPUP__UNUSED int ipup__rdigit(const ipup__rnd *r, int64_t j) {
    if (j < 0) return 0;
    if (r->one) return j == 0;
    if (j >= r->n) return 0;
    if (r->up && j >= r->q) return j == r->q ? ipup__dec_digit(r->d, j) + 1 : 0;
    return ipup__dec_digit(r->d, j);
}

/* the body of f e g conversions: digits of r in the style 'f' or 'e' with prec digits
   after the point */
typedef struct ipup__fbody {
    const ipup__rnd *r;
    int prec, alt, style, upper;
} ipup__fbody;

static IPUP__UNUSED void ipup__fbody_put(ipup__out *o, const void *arg) {
    const ipup__fbody *b = (const ipup__fbody *)arg;
    const ipup__rnd *r = b->r;
    int64_t E = r->exp10, p;
    if (b->style == 'f') {
        if (E < 0) ipup__putc(o, '0');
        for (p = E; p >= 0; p--) ipup__putc(o, (char)('0' + ipup__rdigit(r, E - p)));
        if (b->prec > 0 || b->alt) ipup__putc(o, '.');
        for (p = 1; p <= b->prec; p++) ipup__putc(o, (char)('0' + ipup__rdigit(r, E + p)));
    } else {
        char ex[8];
        int n = 0;
        uint32_t a = (uint32_t)(E < 0 ? -E : E);
        ipup__putc(o, (char)('0' + ipup__rdigit(r, 0)));
        if (b->prec > 0 || b->alt) ipup__putc(o, '.');
        for (p = 1; p <= b->prec; p++) ipup__putc(o, (char)('0' + ipup__rdigit(r, p)));
        ipup__putc(o, b->upper ? 'E' : 'e');
        ipup__putc(o, E < 0 ? '-' : '+');
        do { ex[n++] = (char)('0' + a % 10u); a /= 10u; } while (a);
        if (n < 2) ex[n++] = '0';
        while (n) ipup__putc(o, ex[--n]);
    }
}

/* f F e E g G */
static IPUP__UNUSED void ipup__fmt_double(ipup__out *o, const ipup__spec *sp, double v) {
    ipup__dec d;
    ipup__rnd r;
    ipup__fbody b;
    uint64_t bits;
    char sign[2] = {0, 0};
    int c = sp->conv, upper = c == 'F' || c == 'E' || c == 'G', prec = sp->prec < 0 ? 6 : sp->prec;
    IPUPIPE_MEMCPY(&bits, &v, sizeof bits);
    if (bits >> 63) sign[0] = '-';
    else if (sp->plus) sign[0] = '+';
    else if (sp->space) sign[0] = ' ';
    if (((bits >> 52) & 0x7ff) == 0x7ff) { /* inf, nan: no zero padding */
        int nan = (bits & (((uint64_t)1 << 52) - 1)) != 0;
        ipup__field(o, sp, sign, 0, nan ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), NULL, NULL, 0);
        return;
    }
    ipup__dec_init(&d, v);
    b.r = &r; b.alt = sp->alt; b.upper = upper;
    if (c == 'f' || c == 'F') {
        ipup__round(&r, &d, (int64_t)d.exp10 + 1 + prec);
        b.style = 'f'; b.prec = prec;
    } else if (c == 'e' || c == 'E') {
        ipup__round(&r, &d, (int64_t)prec + 1);
        b.style = 'e'; b.prec = prec;
    } else { /* g: %e's exponent X after rounding to P digits picks the style */
        int P = prec == 0 ? 1 : prec, X;
        ipup__round(&r, &d, P);
        X = r.exp10;
        if (P > X && X >= -4) { b.style = 'f'; b.prec = P - 1 - X; }
        else { b.style = 'e'; b.prec = P - 1; }
        if (!sp->alt) /* drop trailing zeros of the fraction */
            while (b.prec > 0 && ipup__rdigit(&r, b.style == 'f' ? (int64_t)X + b.prec : (int64_t)b.prec) == 0) b.prec--;
    }
    ipup__field(o, sp, sign, 0, "", ipup__fbody_put, &b, sp->zero);
}

/* one conversion after its '%'; returns the character after it */
static IPUP__UNUSED const char *ipup__fmt_spec(const char *f, ipup__spec *sp, va_list *ap) {
    IPUPIPE_MEMSET(sp, 0, sizeof *sp);
    sp->prec = -1;
    for (;; f++) {
        if (*f == '-') sp->minus = 1;
        else if (*f == '+') sp->plus = 1;
        else if (*f == ' ') sp->space = 1;
        else if (*f == '0') sp->zero = 1;
        else if (*f == '#') sp->alt = 1;
        else break;
    }
    if (*f == '*') {
        int w = va_arg(*ap, int);
        if (w < 0) { sp->minus = 1; w = w == -2147483647 - 1 ? 2147483647 : -w; }
        sp->width = w;
        f++;
    } else
        for (; *f >= '0' && *f <= '9'; f++) sp->width = sp->width > 214748363 ? 2147483647 : sp->width * 10 + (*f - '0');
    if (*f == '.') {
        f++;
        sp->prec = 0;
        if (*f == '*') {
            sp->prec = va_arg(*ap, int);
            if (sp->prec < 0) sp->prec = -1;
            f++;
        } else
            for (; *f >= '0' && *f <= '9'; f++) sp->prec = sp->prec > 214748363 ? 2147483647 : sp->prec * 10 + (*f - '0');
    }
    if (f[0] == 'h' && f[1] == 'h') { sp->size = 'H'; f += 2; }
    else if (f[0] == 'l' && f[1] == 'l') { sp->size = 'L'; f += 2; }
    else if (*f == 'h' || *f == 'l' || *f == 'z') sp->size = *f++;
    sp->conv = *f;
    return *f ? f + 1 : f;
}

/* fetch the argument of a d i u o x X conversion */
static IPUP__UNUSED uint64_t ipup__fmt_intarg(const ipup__spec *sp, va_list *ap, int *neg) {
    int64_t s;
    *neg = 0;
    if (sp->conv != 'd' && sp->conv != 'i') {
        switch (sp->size) {
        case 'H': return (unsigned char)va_arg(*ap, unsigned);
        case 'h': return (unsigned short)va_arg(*ap, unsigned);
        case 'l': return va_arg(*ap, unsigned long);
        case 'L': return va_arg(*ap, unsigned long long);
        case 'z': return va_arg(*ap, size_t);
        default: return va_arg(*ap, unsigned);
        }
    }
    switch (sp->size) {
    case 'H': s = (signed char)va_arg(*ap, int); break;
    case 'h': s = (short)va_arg(*ap, int); break;
    case 'l': s = va_arg(*ap, long); break;
    case 'L': s = va_arg(*ap, long long); break;
    case 'z': s = va_arg(*ap, ptrdiff_t); break;
    default: s = va_arg(*ap, int); break;
    }
    *neg = s < 0;
    return s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
}

static IPUP__UNUSED void ipup__fmt_arg(ipup__out *o, const ipup__spec *sp, va_list *ap) {
    int neg;
    uint64_t v;
    switch (sp->conv) {
    case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
        v = ipup__fmt_intarg(sp, ap, &neg);
        ipup__fmt_int(o, sp, v, neg);
        break;
    case 'p': {
        const void *p = va_arg(*ap, void *);
        if (p) { ipup__fmt_int(o, sp, (uint64_t)(uintptr_t)p, 0); break; }
        ipup__field(o, sp, "", 0, "(nil)", NULL, NULL, 0);
        break;
    }
    case 'c': { /* a NUL character counts as one byte too */
        char ch = (char)(unsigned char)va_arg(*ap, int);
        size_t pad = sp->width > 1 ? (size_t)sp->width - 1 : 0;
        if (!sp->minus) ipup__putpad(o, ' ', pad);
        ipup__putc(o, ch);
        if (sp->minus) ipup__putpad(o, ' ', pad);
        break;
    }
    case 's': {
        const char *s = va_arg(*ap, const char *);
        size_t n = 0, pad;
        if (!s) s = sp->prec < 0 || sp->prec >= 6 ? "(null)" : ""; /* glibc's spelling */
        while ((sp->prec < 0 || n < (size_t)sp->prec) && s[n]) n++; /* reads no further */
        pad = (size_t)sp->width > n ? (size_t)sp->width - n : 0;
        if (!sp->minus) ipup__putpad(o, ' ', pad);
        ipup__putn(o, s, n);
        if (sp->minus) ipup__putpad(o, ' ', pad);
        break;
    }
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G':
        ipup__fmt_double(o, sp, va_arg(*ap, double));
        break;
    default: break;
    }
}

IPUPIPE_DEF int ipup_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap) {
    ipup__out o;
    va_list aq;
    o.buf = buf;
    o.cap = buf && len ? len - 1 : 0;
    o.pos = 0;
    if (!fmt) fmt = "";
    va_copy(aq, ap);
    while (*fmt) {
        const char *start = fmt;
        ipup__spec sp;
        if (*fmt != '%') { ipup__putc(&o, *fmt++); continue; }
        fmt = ipup__fmt_spec(fmt + 1, &sp, &aq);
        if (sp.conv == '%') ipup__putc(&o, '%');
        else if (ipup__strchr("diouxXpcsfFeEgG", sp.conv) && sp.conv) ipup__fmt_arg(&o, &sp, &aq);
        else ipup__putn(&o, start, (size_t)(fmt - start)); /* not a conversion: as written */
    }
    va_end(aq);
    if (buf && len) buf[o.pos < o.cap ? o.pos : o.cap] = '\0';
    return o.pos > 2147483647u ? -1 : (int)o.pos;
}

IPUPIPE_DEF int ipup_snprintf(char *buf, size_t len, const char *fmt, ...) {
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = ipup_vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- messages ---- */
static IPUP__UNUSED void ipup__msgv(char *msg, size_t len, int append, const char *fmt, va_list ap) {
    size_t used;
    if (!msg || len == 0) return;
    used = append ? ipup__strlen(msg) : 0;
    if (used >= len) return;
    ipup_vsnprintf(msg + used, len - used, fmt, ap);
}
static IPUP__PRINTF(4, 5) IPUP__UNUSED int ipup__err(char *msg, size_t len, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ipup__msgv(msg, len, 0, fmt, ap);
    va_end(ap);
    return code;
}
static IPUP__PRINTF(4, 5) IPUP__UNUSED void ipup__warn(char *msg, size_t len, int *count, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (msg && len) {
        size_t used = ipup__strlen(msg);
        if (used + 1 < len) {
            ipup_vsnprintf(msg + used, len - used, fmt, ap);
            used = ipup__strlen(msg);
            if (used + 1 < len) { msg[used] = '\n'; msg[used + 1] = '\0'; }
        }
    }
    va_end(ap);
    (*count)++;
}

static const char *const ipup__kind_names[IPUP_SCHED_KIND_COUNT] = {
    "grouped", "interleaved", "sequential", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"};

IPUPIPE_DEF const char *ipup_sched_kind_name(ipup_sched_kind kind) {
    int k = (int)kind;
    if (k < 0 || k >= IPUP_SCHED_KIND_COUNT) return "unknown";
    return ipup__kind_names[k];
}

IPUPIPE_DEF int ipup_sched_kind_parse(const char *name, ipup_sched_kind *out) {
    int k;
    if (!name || !out) return IPUP_ERR_ARG;
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++)
        if (ipup__name_eq(name, ipup__kind_names[k])) { *out = (ipup_sched_kind)k; return IPUP_OK; }
    if (ipup__name_eq(name, "zbh1") || ipup__name_eq(name, "zero-bubble")) { *out = IPUP_SCHED_ZBH1; return IPUP_OK; }
    if (ipup__name_eq(name, "i1f1b") || ipup__name_eq(name, "interleaved1f1b")) { *out = IPUP_SCHED_INTERLEAVED_1F1B; return IPUP_OK; }
    if (ipup__name_eq(name, "pipedream-flush")) { *out = IPUP_SCHED_1F1B; return IPUP_OK; }
    if (ipup__name_eq(name, "fill-drain")) { *out = IPUP_SCHED_GPIPE; return IPUP_OK; }
    /* TF's sharding: the model split over IPUs, one IPU working at a time */
    if (ipup__name_eq(name, "sharding")) { *out = IPUP_SCHED_SEQUENTIAL; return IPUP_OK; }
    return IPUP_ERR_PARSE;
}

/* ---- generator ---- */
typedef struct ipup__gen {
    int32_t S, M, P, V, kind, split, shared;
    int16_t map[IPUP_SCHED_MAX_STAGES];
    int16_t inv[IPUP_SCHED_MAX_STAGES];  /* device -> its stage when one stage per device, else -1 */
    int16_t first[IPUP_SCHED_MAX_STAGES]; /* device -> first stage on it, -1 */
    int16_t next[IPUP_SCHED_MAX_STAGES];  /* stage -> next stage on the same device, -1 */
    ipup_op *ops;
    int32_t n, t; /* ops written; next output step */
} ipup__gen;

static IPUP__UNUSED void ipup__emit(ipup__gen *g, int32_t dev, int32_t stage, int32_t mb, int kind) {
    ipup_op *o = &g->ops[g->n++];
    o->step = g->t;
    o->mb = mb;
    o->stage = (int16_t)stage;
    o->device = (int16_t)dev;
    o->kind = (int8_t)kind;
    o->overlap_index = o->branch_plus1 = o->reserved_ = 0;
}

/* The op of stage s at raw (uncompacted) step t under a closed form (docs/schedules.md §3),
   or 0 when idle. */
static IPUP__UNUSED int ipup__closed_op(int kind, int32_t S, int32_t M, int32_t t, int32_t s, int32_t *mb) {
    int32_t u, c, d;
    switch (kind) {
    case IPUP_SCHED_INTERLEAVED: /* F(s,m) at s+2m; B(s,m) at 2S-1-s+2m */
        u = t - s;
        if (u >= 0 && (u & 1) == 0 && u / 2 < M) { *mb = u / 2; return IPUP_OP_F; }
        u = t - (2 * S - 1 - s);
        if (u >= 0 && (u & 1) == 0 && u / 2 < M) { *mb = u / 2; return IPUP_OP_B; }
        return 0;
    case IPUP_SCHED_GPIPE: /* F(s,m) at s+m; B(s,m) at (M+S-1)+(S-1-s)+m */
        u = t - s;
        if (u >= 0 && u < M) { *mb = u; return IPUP_OP_F; }
        u = t - (M + S - 1) - (S - 1 - s);
        if (u >= 0 && u < M) { *mb = u; return IPUP_OP_B; }
        return 0;
    case IPUP_SCHED_GROUPED:
        /* F-slot c holds F(s, c-s); B-slot d holds B(s, d-(S-1-s)); F-slots 0..S-1 at
           steps 0..S-1, then B-slot d at S+2d and F-slot c >= S at S+2(c-S)+1. */
        if (t < S) {
            c = t;
        } else {
            u = t - S;
            if ((u & 1) == 0) {
                d = u / 2;
                u = d - (S - 1 - s);
                if (u >= 0 && u < M) { *mb = u; return IPUP_OP_B; }
                return 0;
            }
            c = S + (u - 1) / 2;
        }
        u = c - s;
        if (u >= 0 && u < M) { *mb = u; return IPUP_OP_F; }
        return 0;
    default: return 0;
    }
}

/* Raw step of an op under a closed form: the priority of list scheduling when stages
   share a device. */
static IPUP__UNUSED int64_t ipup__closed_prio(int kind, int32_t S, int32_t M, int opk, int32_t s, int32_t m) {
    int64_t c, d;
    switch (kind) {
    case IPUP_SCHED_INTERLEAVED: return opk == IPUP_OP_F ? s + 2 * (int64_t)m : 2 * (int64_t)S - 1 - s + 2 * (int64_t)m;
    case IPUP_SCHED_GPIPE: return opk == IPUP_OP_F ? (int64_t)s + m : (int64_t)M + S - 1 + (S - 1 - s) + m;
    default: /* grouped */
        if (opk == IPUP_OP_F) {
            c = (int64_t)s + m;
            return c < S ? c : S + 2 * (c - S) + 1;
        }
        d = (int64_t)m + S - 1 - s;
        return S + 2 * d;
    }
}

/* 1F1B (PipeDream-Flush) program of stage s, position k: min(S-1-s, M) warm-up
   forwards, then F,B pairs until the forwards are done, then the remaining Bs. */
static IPUP__UNUSED int ipup__prog_1f1b(int32_t S, int32_t M, int32_t s, int32_t k, int32_t *mb) {
    int32_t w = S - 1 - s < M ? S - 1 - s : M, r, steady;
    if (k < w) { *mb = k; return IPUP_OP_F; }
    r = k - w;
    steady = M - w;
    if (r < 2 * steady) {
        if ((r & 1) == 0) { *mb = w + r / 2; return IPUP_OP_F; }
        *mb = r / 2;
        return IPUP_OP_B;
    }
    *mb = r - steady;
    return IPUP_OP_B;
}

/* Megatron-LM interleaved 1F1B program of device r (of P), position k, V chunks
   (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_
   interleaving): warm-up (P-r-1)*2 + (V-1)*P forwards, then 1F1B, then cool-down.
   Virtual index -> (chunk, micro-batch) in groups of P micro-batches (a last partial
   group keeps the same order with a smaller group; the generator does not use it: for
   M % P != 0 it pads to a multiple of P with phantom micro-batches instead). */
static IPUP__UNUSED void ipup__megatron_vidx(int32_t P, int32_t V, int32_t M, int32_t idx, int32_t *chunk, int32_t *mb) {
    int32_t g = idx / (P * V), base = g * P, gs = M - base < P ? M - base : P;
    int32_t j = idx - g * P * V;
    *chunk = j / gs;
    *mb = base + j % gs;
}
static IPUP__UNUSED int ipup__prog_megatron(int32_t P, int32_t V, int32_t M, int32_t r, int32_t k, int32_t *stage, int32_t *mb) {
    int32_t total = M * V, warm = (P - r - 1) * 2 + (V - 1) * P, r2, steady, idx, chunk;
    int kind;
    if (warm > total) warm = total;
    if (k < warm) { idx = k; kind = IPUP_OP_F; }
    else {
        r2 = k - warm;
        steady = total - warm;
        if (r2 < 2 * steady) {
            if ((r2 & 1) == 0) { idx = warm + r2 / 2; kind = IPUP_OP_F; }
            else { idx = r2 / 2; kind = IPUP_OP_B; }
        } else { idx = r2 - steady; kind = IPUP_OP_B; }
    }
    ipup__megatron_vidx(P, V, M, idx, &chunk, mb);
    if (kind == IPUP_OP_B) chunk = V - 1 - chunk;
    *stage = chunk * P + r;
    return kind;
}

/* ---- dynamic placement ----
   Step by step: at each step every device runs at most one op whose inputs were
   produced in strictly earlier steps (the counters are the state before the step).
   Each kind of op runs in increasing micro-batch order on each stage, so the state is
   three counters per stage and every table it makes accumulates in order. Which ready
   op a device runs is the schedule's rule: a row of ipup__dyn_rules per schedule kind
   (adding a schedule = adding a row). */
typedef struct ipup__dyn {
    const ipup__gen *g;
    int32_t nF[IPUP_SCHED_MAX_STAGES], nG[IPUP_SCHED_MAX_STAGES], nW[IPUP_SCHED_MAX_STAGES]; /* F, B/I, W done */
    int32_t pos[IPUP_SCHED_MAX_STAGES]; /* device -> position in its program (interleaved-1f1b) */
    int phase; /* grouped: IPUP_OP_F or IPUP_OP_B, the kind of every op of this step; else 0 */
} ipup__dyn;

typedef struct ipup__cand { /* an op a device may run, and its rank (lower runs first) */
    int k;
    int32_t s, m;
    int64_t key;
} ipup__cand;

static IPUP__UNUSED int ipup__rdy_f(const ipup__dyn *y, int32_t s, int32_t m) {
    return m < y->g->M && y->nF[s] == m && (s == 0 || y->nF[s - 1] > m);
}
static IPUP__UNUSED int ipup__rdy_g(const ipup__dyn *y, int32_t s, int32_t m) {
    return m < y->g->M && y->nG[s] == m && y->nF[s] > m && (s == y->g->S - 1 || y->nG[s + 1] > m);
}
static IPUP__UNUSED int ipup__rdy_w(const ipup__dyn *y, int32_t s, int32_t m) {
    return m < y->g->M && y->nW[s] == m && y->nG[s] > m;
}

/* 1f1b (and interleaved-1f1b with V = 1): the stage's own program; backward first
   (frees memory), then lower micro-batch */
static IPUP__UNUSED int ipup__rank_1f1b(const ipup__dyn *y, int32_t s, ipup__cand *c) {
    const int32_t S = y->g->S, M = y->g->M;
    if (y->nF[s] + y->nG[s] >= 2 * M) return 0;
    c->k = ipup__prog_1f1b(S, M, s, y->nF[s] + y->nG[s], &c->m);
    if (!(c->k == IPUP_OP_F ? ipup__rdy_f(y, s, c->m) : ipup__rdy_g(y, s, c->m))) return 0;
    c->key = (c->k == IPUP_OP_F ? ((int64_t)1 << 40) : 0) + (int64_t)c->m * 1024 + (S - s);
    return 1;
}

/* ZB-H1 (Qi et al. 2024, §3.1): F while the stage has fewer than S-s forwards awaiting
   their I (1F1B's warm-up and steady state) and fewer than S micro-batches holding
   activations (1F1B's peak, that of stage 0); else I as soon as its gradient has
   arrived; else W, which so fills the bubbles (stage s postpones up to s of them). With
   F = I = W this reaches the paper's bubble (S-1)(F+B-W): T = 3M + S - 1 steps for
   M >= S. */
static IPUP__UNUSED int ipup__rank_zbh1(const ipup__dyn *y, int32_t s, ipup__cand *c) {
    const int32_t S = y->g->S;
    if (ipup__rdy_f(y, s, y->nF[s]) && y->nF[s] - y->nG[s] < S - s && y->nF[s] - y->nW[s] < S) {
        c->k = IPUP_OP_F; c->m = y->nF[s]; c->key = 0;
    } else if (ipup__rdy_g(y, s, y->nG[s])) {
        c->k = IPUP_OP_I; c->m = y->nG[s]; c->key = (int64_t)1 << 40;
    } else if (ipup__rdy_w(y, s, y->nW[s])) {
        c->k = IPUP_OP_W; c->m = y->nW[s]; c->key = (int64_t)2 << 40;
    } else return 0;
    c->key += (int64_t)c->m * 1024 + (S - s);
    return 1;
}

/* grouped, interleaved, gpipe on shared devices: list scheduling in the closed form's
   order (the raw step of each op), restricted to this step's phase for grouped */
static IPUP__UNUSED int ipup__rank_closed(const ipup__dyn *y, int32_t s, ipup__cand *c) {
    const ipup__gen *g = y->g;
    int64_t kf = -1, kb = -1;
    if (ipup__rdy_f(y, s, y->nF[s])) kf = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_F, s, y->nF[s]);
    if (ipup__rdy_g(y, s, y->nG[s])) kb = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_B, s, y->nG[s]);
    if (y->phase == IPUP_OP_F) kb = -1;
    if (y->phase == IPUP_OP_B) kf = -1;
    if (kf < 0 && kb < 0) return 0;
    if (kb >= 0 && (kf < 0 || kb <= kf)) { c->k = IPUP_OP_B; c->m = y->nG[s]; c->key = kb * 2; }
    else { c->k = IPUP_OP_F; c->m = y->nF[s]; c->key = kf * 2 + 1; }
    c->key = c->key * 1024 + s;
    return 1;
}

/* Grouped keeps its rule with shared devices: every step is all-forward or
   all-backward, the kind of the most urgent ready op. */
static IPUP__UNUSED int ipup__phase_grouped(const ipup__dyn *y) {
    const ipup__gen *g = y->g;
    int64_t bk = -1, v;
    int32_t s;
    int phase = 0;
    for (s = 0; s < g->S; s++) {
        if (ipup__rdy_f(y, s, y->nF[s])) {
            v = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_F, s, y->nF[s]) * 2 + 1;
            if (bk < 0 || v < bk) { bk = v; phase = IPUP_OP_F; }
        }
        if (ipup__rdy_g(y, s, y->nG[s])) {
            v = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_B, s, y->nG[s]) * 2;
            if (bk < 0 || v < bk) { bk = v; phase = IPUP_OP_B; }
        }
    }
    return phase;
}

typedef int (*ipup__rank_fn)(const ipup__dyn *y, int32_t s, ipup__cand *c);

/* the best-ranked ready op among the stages of device d (inline: each caller passes a
   constant rank, which the compiler then calls directly) */
static inline int ipup__pick_stages(ipup__dyn *y, int32_t d, ipup__rank_fn rank, ipup__cand *best) {
    int32_t s;
    best->k = 0;
    for (s = y->g->first[d]; s >= 0; s = y->g->next[s]) {
        ipup__cand c;
        if (!rank(y, s, &c)) continue;
        c.s = s;
        if (best->k == 0 || c.key < best->key) *best = c;
    }
    return best->k != 0;
}

/* interleaved-1f1b with V > 1: device d's Megatron program, its next op when ready.
   M % P != 0: the program of Mp = ceil(M/P)*P micro-batches with the ops of the phantom
   ones (m >= M) skipped; dropping ops from a deadlock-free program keeps it
   deadlock-free. */
static IPUP__UNUSED int ipup__pick_megatron(ipup__dyn *y, int32_t d, ipup__cand *best) {
    const ipup__gen *g = y->g;
    int32_t st = 0, m = 0, Mp = (g->M + g->P - 1) / g->P * g->P;
    int k = 0;
    best->k = 0;
    if (g->V <= 1) return ipup__pick_stages(y, d, ipup__rank_1f1b, best);
    while (y->pos[d] < 2 * Mp * g->V) {
        k = ipup__prog_megatron(g->P, g->V, Mp, d, y->pos[d], &st, &m);
        if (m < g->M) break;
        y->pos[d]++;
    }
    if (y->pos[d] >= 2 * Mp * g->V) return 0;
    if (!(k == IPUP_OP_F ? ipup__rdy_f(y, st, m) : ipup__rdy_g(y, st, m))) return 0;
    best->k = k; best->s = st; best->m = m; best->key = 0;
    return 1;
}

static IPUP__UNUSED int ipup__pick_closed(ipup__dyn *y, int32_t d, ipup__cand *best) {
    return ipup__pick_stages(y, d, ipup__rank_closed, best);
}
static IPUP__UNUSED int ipup__pick_1f1b(ipup__dyn *y, int32_t d, ipup__cand *best) {
    return ipup__pick_stages(y, d, ipup__rank_1f1b, best);
}
static IPUP__UNUSED int ipup__pick_zbh1(ipup__dyn *y, int32_t d, ipup__cand *best) {
    return ipup__pick_stages(y, d, ipup__rank_zbh1, best);
}

typedef struct ipup__dyn_rule {
    int (*pick)(ipup__dyn *y, int32_t d, ipup__cand *best); /* device d's op this step, 0: idle */
    int (*phase)(const ipup__dyn *y); /* NULL, or the kind of all ops of the step */
} ipup__dyn_rule;

/* one row per ipup_sched_kind, in its order (sequential never shares a step: unused) */
static const ipup__dyn_rule ipup__dyn_rules[IPUP_SCHED_KIND_COUNT] = {
    {ipup__pick_closed, ipup__phase_grouped}, /* grouped */
    {ipup__pick_closed, NULL},                /* interleaved */
    {ipup__pick_closed, NULL},                /* sequential */
    {ipup__pick_closed, NULL},                /* gpipe */
    {ipup__pick_1f1b, NULL},                  /* 1f1b */
    {ipup__pick_megatron, NULL},              /* interleaved-1f1b */
    {ipup__pick_zbh1, NULL},                  /* zb-h1 */
};

static IPUP__UNUSED int ipup__run_dynamic(ipup__gen *g, char *msg, size_t msg_len) {
    const ipup__dyn_rule *r = &ipup__dyn_rules[g->kind];
    ipup__dyn y;
    ipup__cand pick;
    int32_t chs[IPUP_SCHED_MAX_STAGES], chm[IPUP_SCHED_MAX_STAGES], s, d;
    int8_t chk[IPUP_SCHED_MAX_STAGES];
    int64_t total = (int64_t)(g->split ? 3 : 2) * g->S * g->M, done = 0;
    y.g = g;
    for (s = 0; s < g->S; s++) y.nF[s] = y.nG[s] = y.nW[s] = 0;
    for (d = 0; d < g->P; d++) y.pos[d] = 0;
    while (done < total) {
        int any = 0;
        y.phase = r->phase ? r->phase(&y) : 0;
        for (d = 0; d < g->P; d++) {
            chk[d] = 0;
            if (!r->pick(&y, d, &pick)) continue;
            chk[d] = (int8_t)pick.k; chs[d] = pick.s; chm[d] = pick.m; any = 1;
        }
        if (!any)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: no device can run an op at step %d (%lld of %lld ops placed): the "
                             "schedule deadlocks with this stage -> device mapping; try the default mapping",
                             ipup_sched_kind_name((ipup_sched_kind)g->kind), (int)g->t + 1, (long long)done, (long long)total);
        for (d = 0; d < g->P; d++) {
            if (!chk[d]) continue;
            ipup__emit(g, d, chs[d], chm[d], chk[d]);
            if (chk[d] == IPUP_OP_F) y.nF[chs[d]]++;
            else if (chk[d] == IPUP_OP_W) y.nW[chs[d]]++;
            else y.nG[chs[d]]++;
            y.pos[d]++;
            done++;
        }
        g->t++;
    }
    return IPUP_OK;
}

static IPUP__UNUSED int ipup__is_pow2(int32_t x) { return x > 0 && (x & (x - 1)) == 0; }
static IPUP__UNUSED int32_t ipup__pow2_ceil(int32_t x) {
    int32_t p = 1;
    while (p < x && p < (1 << 30)) p *= 2;
    return p;
}

/* validate: kind, S, M, devices and V in range */
static IPUP__UNUSED int ipup__gen_validate(const ipup_sched_config *cfg, char *msg, size_t msg_len) {
    int kind = (int)cfg->kind;
    const char *kname;
    if (kind < 0 || kind >= IPUP_SCHED_KIND_COUNT)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "unknown schedule kind %d (valid: 0..%d, see ipup_sched_kind)", kind,
                         IPUP_SCHED_KIND_COUNT - 1);
    kname = ipup__kind_names[kind];
    if (cfg->stages < 1 || cfg->stages > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: stages S=%d is out of range: need 1 <= S <= %d (IPUP_SCHED_MAX_STAGES)",
                         kname, (int)cfg->stages, IPUP_SCHED_MAX_STAGES);
    if (cfg->microbatches < 1 || cfg->microbatches > IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: micro-batches M=%d is out of range: need 1 <= M <= %d", kname,
                         (int)cfg->microbatches, IPUP_SCHED_MAX_MICROBATCHES);
    if (cfg->devices < 0 || cfg->devices > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: devices P=%d is out of range: need 0 (automatic) or 1..%d", kname,
                         (int)cfg->devices, IPUP_SCHED_MAX_STAGES);
    if (cfg->virtual_stages < 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: virtual stages V=%d must be >= 0 (0 = automatic)", kname,
                         (int)cfg->virtual_stages);
    return IPUP_OK;
}

/* map, interleaved-1f1b: V stages per device, stage s on device s mod P, P = S / V */
static IPUP__UNUSED int ipup__gen_map_virtual(ipup__gen *g, const ipup_sched_config *cfg, char *msg, size_t msg_len) {
    int32_t S = g->S, V = cfg->virtual_stages, P, s;
    if (V == 0) {
        if (cfg->devices > 0) {
            if (S % cfg->devices != 0)
                return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                                 "interleaved-1f1b: %d stages cannot be spread evenly over %d devices (each device holds "
                                 "V = S/P stages); choose S a multiple of P",
                                 (int)S, (int)cfg->devices);
            V = S / cfg->devices;
        } else V = (S % 2 == 0) ? 2 : 1;
    }
    if (V > S || S % V != 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "interleaved-1f1b: S=%d stages with V=%d virtual stages per device: S must be a multiple of V "
                         "(S = P x V, stage s on device s mod P); choose V among the divisors of S",
                         (int)S, (int)V);
    P = S / V;
    if (cfg->devices > 0 && cfg->devices != P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "interleaved-1f1b: S=%d stages, V=%d per device needs P=%d devices, but devices=%d; drop one of "
                         "--devices/--virtual or make S = P x V",
                         (int)S, (int)V, (int)P, (int)cfg->devices);
    for (s = 0; s < S; s++) {
        g->map[s] = (int16_t)(s % P);
        if (cfg->stage_device && cfg->stage_device[s] != s % P)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "interleaved-1f1b places stage s on device s mod P (Megatron virtual stages), but the "
                             "mapping puts stage %d on device %d instead of %d; drop the mapping and give V instead",
                             (int)s, (int)cfg->stage_device[s], (int)(s % P));
    }
    g->P = P;
    g->V = V;
    return IPUP_OK;
}

/* map, other schedules: the given stage -> device mapping (default s -> s) */
static IPUP__UNUSED int ipup__gen_map_given(ipup__gen *g, const ipup_sched_config *cfg, int *nwarn, char *msg, size_t msg_len) {
    const char *kname = ipup__kind_names[g->kind];
    int32_t s, maxdev = -1;
    if (cfg->virtual_stages > 1)
        ipup__warn(msg, msg_len, nwarn, "%s: virtual stages V=%d ignored (only interleaved-1f1b uses them)", kname,
                   (int)cfg->virtual_stages);
    for (s = 0; s < g->S; s++) {
        int32_t dv = cfg->stage_device ? cfg->stage_device[s] : s;
        if (dv < 0 || dv >= IPUP_SCHED_MAX_STAGES || (cfg->devices > 0 && dv >= cfg->devices)) {
            if (msg && msg_len) msg[0] = '\0';
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: stage %d is mapped to device %d, but the devices are 0..%d; fix the mapping (the "
                             "default puts stage s on device s) or raise the device count",
                             kname, (int)s, (int)dv, (int)((cfg->devices > 0 ? cfg->devices : IPUP_SCHED_MAX_STAGES) - 1));
        }
        g->map[s] = (int16_t)dv;
        if (dv > maxdev) maxdev = dv;
    }
    g->P = cfg->devices > 0 ? cfg->devices : maxdev + 1;
    g->V = 1;
    return IPUP_OK;
}

/* map: stage -> device, then per device its stages (first/next), whether stages share a
   device, and a warning per idle device */
static IPUP__UNUSED int ipup__gen_map(ipup__gen *g, const ipup_sched_config *cfg, int *nwarn, char *msg, size_t msg_len) {
    int32_t s, d;
    int rc = g->kind == IPUP_SCHED_INTERLEAVED_1F1B ? ipup__gen_map_virtual(g, cfg, msg, msg_len)
                                                    : ipup__gen_map_given(g, cfg, nwarn, msg, msg_len);
    if (rc) return rc;
    for (d = 0; d < g->P; d++) { g->inv[d] = -1; g->first[d] = -1; }
    for (s = g->S - 1; s >= 0; s--) {
        d = g->map[s];
        g->next[s] = g->first[d];
        g->first[d] = (int16_t)s;
        if (g->inv[d] >= 0 || g->next[s] >= 0) g->shared = 1;
        g->inv[d] = (int16_t)s;
    }
    if (g->shared)
        for (d = 0; d < g->P; d++) g->inv[d] = -1;
    for (d = 0; d < g->P; d++)
        if (g->first[d] < 0)
            ipup__warn(msg, msg_len, nwarn, "%s: device %d runs no stage (idle for the whole step)", ipup__kind_names[g->kind], (int)d);
    return IPUP_OK;
}

/* A per-schedule API rule (docs/schedules.md §5) that does not hold: the error text
   under strict, else the warning. */
static IPUP__UNUSED int ipup__gen_rule(int strict, int *nwarn, char *msg, size_t msg_len, const char *err, const char *warn) {
    if (strict) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s", err);
    }
    ipup__warn(msg, msg_len, nwarn, "%s", warn);
    return IPUP_OK;
}

/* the per-schedule API rules (docs/schedules.md §5): warnings, errors under strict */
static IPUP__UNUSED int ipup__gen_rules(const ipup__gen *g, int strict, int *nwarn, char *msg, size_t msg_len) {
    char e[400], w[400];
    const char *kname = ipup__kind_names[g->kind];
    const int32_t S = g->S, M = g->M, P = g->P;
    const int kind = g->kind;
    int rc = IPUP_OK;
    if (kind == IPUP_SCHED_INTERLEAVED && M % S != 0) {
        ipup_snprintf(e, sizeof e, "PipelineSchedule.Interleaved: gradient_accumulation_count (M=%d) must be a multiple of the "
                      "number of pipeline stages (S=%d); use M=%d or %d",
                      (int)M, (int)S, (int)(M / S * S > 0 ? M / S * S : S), (int)((M / S + 1) * S));
        ipup_snprintf(w, sizeof w, "PipelineSchedule.Interleaved: gradient_accumulation_count (M=%d) is not a multiple of the "
                      "number of pipeline stages (S=%d) (an error on Graphcore's API and under strict)",
                      (int)M, (int)S);
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, e, w)) != IPUP_OK) return rc;
    }
    if (kind == IPUP_SCHED_GROUPED && M % (2 * S) != 0) {
        ipup_snprintf(e, sizeof e, "PipelineSchedule.Grouped: gradient_accumulation_count (M=%d) must be a multiple of 2 x the "
                      "number of pipeline stages (2S=%d); use M=%d",
                      (int)M, (int)(2 * S), (int)((M / (2 * S) + 1) * 2 * S));
        ipup_snprintf(w, sizeof w, "PipelineSchedule.Grouped: gradient_accumulation_count (M=%d) is not a multiple of 2 x the "
                      "number of pipeline stages (2S=%d) (an error on Graphcore's API and under strict)",
                      (int)M, (int)(2 * S));
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, e, w)) != IPUP_OK) return rc;
    }
    if ((kind == IPUP_SCHED_INTERLEAVED || kind == IPUP_SCHED_GROUPED || kind == IPUP_SCHED_SEQUENTIAL) && !ipup__is_pow2(P)) {
        ipup_snprintf(e, sizeof e, "%s: the model uses %d IPUs, but multi-IPU devices come in powers of two (1, 2, 4, 8, 16, 32, "
                      "64); map the stages onto %d IPUs",
                      kname, (int)P, (int)ipup__pow2_ceil(P));
        ipup_snprintf(w, sizeof w, "%s: %d IPUs is not a power of two; Graphcore multi-IPU devices come in 1, 2, 4, 8, 16, 32 or "
                      "64 IPUs (an error under strict)",
                      kname, (int)P);
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, e, w)) != IPUP_OK) return rc;
    }
    if (kind == IPUP_SCHED_INTERLEAVED_1F1B && g->V > 1 && M % P != 0) {
        ipup_snprintf(e, sizeof e, "interleaved-1f1b: Megatron-LM requires the number of micro-batches (M=%d) to be a multiple "
                      "of the pipeline-parallel size (P=%d); use M=%d",
                      (int)M, (int)P, (int)((M / P + 1) * P));
        ipup_snprintf(w, sizeof w, "interleaved-1f1b: M=%d is not a multiple of P=%d (Megatron-LM's rule); placed as Megatron's "
                      "program for M=%d with the ops of the %d extra micro-batches left out (an error under strict)",
                      (int)M, (int)P, (int)((M + P - 1) / P * P), (int)((M + P - 1) / P * P - M));
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, e, w)) != IPUP_OK) return rc;
    }
    return IPUP_OK;
}

/* place every op: sequential in order, the closed forms column by column (all-idle
   columns dropped) when each device holds one stage, else the dynamic placement */
static IPUP__UNUSED int ipup__gen_place(ipup__gen *g, int32_t need, char *msg, size_t msg_len) {
    const int kind = g->kind;
    int32_t s, d, m;
    if (kind == IPUP_SCHED_SEQUENTIAL) {
        for (m = 0; m < g->M; m++) {
            for (s = 0; s < g->S; s++) { ipup__emit(g, g->map[s], s, m, IPUP_OP_F); g->t++; }
            for (s = g->S - 1; s >= 0; s--) { ipup__emit(g, g->map[s], s, m, IPUP_OP_B); g->t++; }
        }
        return IPUP_OK;
    }
    if ((kind == IPUP_SCHED_INTERLEAVED || kind == IPUP_SCHED_GROUPED || kind == IPUP_SCHED_GPIPE) && !g->shared) {
        int32_t raw = g->S + 2 * (g->M + g->S) + 2, t;
        for (t = 0; t < raw && g->n < need; t++) {
            int32_t before = g->n;
            for (d = 0; d < g->P; d++) {
                int k;
                s = g->inv[d];
                if (s < 0) continue;
                k = ipup__closed_op(kind, g->S, g->M, t, s, &m);
                if (k) ipup__emit(g, d, s, m, k);
            }
            if (g->n > before) g->t++; /* compaction: all-idle columns are dropped */
        }
        return IPUP_OK;
    }
    return ipup__run_dynamic(g, msg, msg_len);
}

/* "never fills", true to the table: no step has every device in use busy (the phases of
   §4 have no main). Sequential never overlaps stages by design and is not warned about. */
static IPUP__UNUSED void ipup__gen_fill_warning(const ipup_table *t, int kind, int *nwarn, char *msg, size_t msg_len) {
    int32_t ph[6];
    if (kind == IPUP_SCHED_SEQUENTIAL || t->devices < 2 || ipup_sched_phases(t, ph) != IPUP_OK || ph[3] >= ph[2]) return;
    ipup__warn(msg, msg_len, nwarn,
               "%s: S=%d M=%d: the pipeline never fills (no step has all %d devices busy; more micro-batches fill it)",
               ipup__kind_names[kind], (int)t->stages, (int)t->microbatches, (int)t->devices);
}

static int ipup__fwd_generate(ipup__gen *g, const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops, ipup_table *out,
                              int *nwarn, char *msg, size_t msg_len); /* forward-only block */
static int ipup__conc_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops, ipup_table *out, char *msg,
                               size_t msg_len); /* concurrent stages, docs/schedules.md §9 */

IPUPIPE_DEF int ipup_sched_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops, ipup_table *out, char *msg,
                                    size_t msg_len) {
    ipup__gen g;
    int32_t s, need;
    int nwarn = 0, rc;
    const char *kname;
    if (msg && msg_len) msg[0] = '\0';
    if (!cfg || !out) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "ipup_sched_generate: cfg and out must not be NULL");
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    for (s = 0; s < IPUP_SCHED_MAX_STAGES; s++) out->stage_device[s] = -1;
    if ((rc = ipup__gen_validate(cfg, msg, msg_len)) != IPUP_OK) return rc;
    if (cfg->concurrent) return ipup__conc_generate(cfg, ops, cap_ops, out, msg, msg_len); /* §9 */
    IPUPIPE_MEMSET(&g, 0, sizeof g);
    g.S = cfg->stages; g.M = cfg->microbatches; g.kind = (int)cfg->kind;
    g.split = g.kind == IPUP_SCHED_ZBH1;
    kname = ipup__kind_names[g.kind];
    if ((rc = ipup__gen_map(&g, cfg, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    if (cfg->forward_only) return ipup__fwd_generate(&g, cfg, ops, cap_ops, out, &nwarn, msg, msg_len);
    if ((rc = ipup__gen_rules(&g, cfg->strict, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    /* capacity */
    if ((int64_t)(g.split ? 3 : 2) * g.S * g.M > (int64_t)0x7fffffff)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: S x M = %lld is too large", kname, (long long)g.S * g.M);
    need = (g.split ? 3 : 2) * g.S * g.M;
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s: the table needs %d ops but the ops array holds %d; size it with IPUP_SCHED_MAX_OPS(%d, %d)",
                         kname, (int)need, ops ? (int)cap_ops : 0, (int)g.S, (int)g.M);
    }
    g.ops = ops;
    if ((rc = ipup__gen_place(&g, need, msg, msg_len)) != IPUP_OK) return rc;
    if (g.n != need)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: internal error: placed %d of %d ops", kname, (int)g.n, (int)need);
    out->stages = g.S;
    out->microbatches = g.M;
    out->devices = g.P;
    out->steps = g.t;
    out->n_ops = g.n;
    out->cap_ops = cap_ops;
    out->ops = ops;
    out->split_backward = g.split;
    for (s = 0; s < g.S; s++) out->stage_device[s] = g.map[s];
    ipup__gen_fill_warning(out, g.kind, &nwarn, msg, msg_len);
    return IPUP_OK;
}

static int ipup__fwd_inflight(const ipup_table *t, int32_t *peak); /* forward-only block */
IPUPIPE_DEF int ipup_sched_peak_inflight(const ipup_table *t, int32_t *out, int32_t n_out) {
    int32_t cur[IPUP_SCHED_MAX_STAGES];
    int32_t i, s;
    if (!t || !out || (!t->ops && t->n_ops > 0)) return IPUP_ERR_ARG;
    if (t->stages < 1 || t->stages > IPUP_SCHED_MAX_STAGES || n_out < t->stages) return IPUP_ERR_ARG;
    if (t->forward_only) return ipup__fwd_inflight(t, out);
    for (s = 0; s < t->stages; s++) cur[s] = out[s] = 0;
    /* ops are in step order; a stage runs at most one op per step, so counting op by op
       gives the count after each step. */
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        s = o->stage;
        if (s < 0 || s >= t->stages) return IPUP_ERR_INVALID_TABLE;
        if (ipup_op_branch(o) > 0) continue; /* a concurrent stage counts on branch 0 */
        if (o->kind == IPUP_OP_F) {
            if (++cur[s] > out[s]) out[s] = cur[s];
        } else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) {
            cur[s]--;
        }
    }
    return IPUP_OK;
}


/* ---- ops ---- */
static IPUP__UNUSED char ipup__kind_char(int k) {
    return k == IPUP_OP_F ? 'F' : k == IPUP_OP_B ? 'B' : k == IPUP_OP_I ? 'I' : k == IPUP_OP_W ? 'W' : '?';
}

IPUPIPE_DEF int ipup_sched_op_str(const ipup_op *op, char *buf, size_t len) {
    int n;
    if (!op || !buf || len == 0) return 0;
    if (ipup_op_branch(op) >= 0) /* a branch of a concurrent stage: "1F3.1" (§9) */
        n = ipup_snprintf(buf, len, "%d%c%d.%d", (int)op->stage, ipup__kind_char(op->kind), (int)op->mb, ipup_op_branch(op));
    else n = ipup_snprintf(buf, len, "%d%c%d", (int)op->stage, ipup__kind_char(op->kind), (int)op->mb);
    return n < 0 ? 0 : n;
}

/* op as text for messages: "B(2,3) [2B3]" */
static IPUP__UNUSED const char *ipup__op_desc(char *buf, size_t len, int kind, int32_t s, int32_t m) {
    ipup_snprintf(buf, len, "%c(%d,%d) [%d%c%d]", ipup__kind_char(kind), (int)s, (int)m, (int)s, ipup__kind_char(kind), (int)m);
    return buf;
}

static IPUP__UNUSED int ipup__op_less(const ipup_op *a, const ipup_op *b) {
    if (a->step != b->step) return a->step < b->step;
    if (a->device != b->device) return a->device < b->device;
    return a->overlap_index < b->overlap_index;
}

static IPUP__UNUSED void ipup__sift(ipup_op *v, int32_t root, int32_t n) {
    for (;;) {
        int32_t c = 2 * root + 1;
        ipup_op tmp;
        if (c >= n) return;
        if (c + 1 < n && ipup__op_less(&v[c], &v[c + 1])) c++;
        if (!ipup__op_less(&v[root], &v[c])) return;
        tmp = v[root]; v[root] = v[c]; v[c] = tmp;
        root = c;
    }
}

IPUPIPE_DEF void ipup_sched_sort(ipup_table *t) {
    int32_t n, i;
    ipup_op tmp;
    if (!t || !t->ops || t->n_ops < 2) return;
    n = t->n_ops;
    for (i = 1; i < n; i++) /* already sorted: the common case, linear */
        if (ipup__op_less(&t->ops[i], &t->ops[i - 1])) break;
    if (i == n) return;
    for (i = n / 2 - 1; i >= 0; i--) ipup__sift(t->ops, i, n);
    for (i = n - 1; i > 0; i--) {
        tmp = t->ops[0]; t->ops[0] = t->ops[i]; t->ops[i] = tmp;
        ipup__sift(t->ops, 0, i);
    }
}

/* ---- work arrays ---- */
static IPUP__UNUSED int ipup__work_ok(const ipup_table *t, const void *work, size_t work_bytes) {
    if (!work || ((uintptr_t)work & 7u) != 0) return 0;
    return work_bytes >= IPUP_SCHED_WORK_BYTES(t->stages, t->microbatches);
}

/* Basic shape checks shared by verify/measure/respace; 0 when fine. */
static IPUP__UNUSED int ipup__table_shape(const ipup_table *t, char *msg, size_t msg_len) {
    if (!t) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table is NULL");
    if (t->stages < 1 || t->stages > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d stages; need 1..%d", (int)t->stages, IPUP_SCHED_MAX_STAGES);
    if (t->microbatches < 1 || t->microbatches > IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d micro-batches; need 1..%d", (int)t->microbatches,
                         IPUP_SCHED_MAX_MICROBATCHES);
    if (t->devices < 1 || t->devices > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d devices; need 1..%d", (int)t->devices, IPUP_SCHED_MAX_STAGES);
    if (t->n_ops < 0 || (t->n_ops > 0 && !t->ops))
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d ops but no ops array", (int)t->n_ops);
    return 0;
}

/* ---- verify (docs/schedules.md §2) ----
   One function per rule. Pass 1 runs rules 1 and 2 op by op in table order (ranges,
   one op per device per step and sorting, the stage's device, each op once), then
   rule 1's completeness; pass 2 the dependency rules 3, 4, 5 op by op in step order,
   so the first violation in time is the one reported; then the in-order property. */
typedef struct ipup__ver {
    const ipup_table *t;
    ipup_sched_verify_info *info;
    char *msg;
    size_t msg_len;
    int32_t S, M, P;
    int32_t *stF, *stG, *stW; /* step of F, of B or I, of W per (m*S + s); -1: not seen */
    int8_t *kG;               /* IPUP_OP_B or IPUP_OP_I per (m*S + s); 0: not seen */
    char a[80], b[80];        /* op texts for messages */
} ipup__ver;

/* info about op i, and its text in v->a */
static IPUP__UNUSED void ipup__ver_op(ipup__ver *v, int rule, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    ipup_sched_verify_info *in = v->info;
    in->rule = rule; in->op_index = i; in->step = o->step; in->device = o->device;
    in->stage = o->stage; in->mb = o->mb; in->kind = o->kind;
    ipup__op_desc(v->a, sizeof v->a, o->kind, o->stage, o->mb);
}

/* rule 2: every stage has a device */
static IPUP__UNUSED int ipup__ver_mapping(ipup__ver *v) {
    int32_t s;
    for (s = 0; s < v->S; s++) {
        if (v->t->stage_device[s] < 0 || v->t->stage_device[s] >= v->P) {
            v->info->rule = 2; v->info->stage = s;
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "rule 2 (stage on its device): stage %d has no device (mapping gives %d, devices are 0..%d); "
                             "every stage needs its ops on one device",
                             (int)s, (int)v->t->stage_device[s], (int)(v->P - 1));
        }
    }
    return IPUP_OK;
}

/* rule 1: op i's indices are in range */
static IPUP__UNUSED int ipup__ver_range(ipup__ver *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int k = o->kind;
    if (o->stage < 0 || o->stage >= v->S || o->mb < 0 || o->mb >= v->M || k < IPUP_OP_F || k > IPUP_OP_W || o->step < 0 ||
        o->step >= v->t->steps || o->device < 0 || o->device >= v->P) {
        ipup_sched_verify_info *in = v->info;
        in->rule = 1; in->op_index = i; in->step = o->step; in->device = o->device;
        in->stage = o->stage; in->mb = o->mb; in->kind = k;
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (indices in range): op %d (stage %d, micro-batch %d, kind %d, step %d, device %d) is out "
                         "of range: stages 0..%d, micro-batches 0..%d, kinds F B I W, steps 1..%d, devices 0..%d",
                         (int)i, (int)o->stage, (int)o->mb, k, (int)o->step + 1, (int)o->device, (int)(v->S - 1),
                         (int)(v->M - 1), (int)v->t->steps, (int)(v->P - 1));
    }
    return IPUP_OK;
}

/* rule 2: op i is alone in its cell (device, step); the table structure: ops sorted by
   (step, device) */
static IPUP__UNUSED int ipup__ver_cell(ipup__ver *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    if (i > 0) {
        const ipup_op *p = &v->t->ops[i - 1];
        if (p->step == o->step && p->device == o->device) {
            ipup__ver_op(v, 2, i);
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "rule 2 (one op per device per step): device %d, step %d runs %s and %s; move one of them to "
                             "another step",
                             (int)o->device, (int)o->step + 1, ipup__op_desc(v->b, sizeof v->b, p->kind, p->stage, p->mb), v->a);
        }
        if (p->step > o->step || (p->step == o->step && p->device > o->device)) {
            ipup__ver_op(v, 6, i);
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "table structure: ops %d and %d are not sorted by (step, device) (device %d, step %d: %s "
                             "comes after step %d); call ipup_sched_sort first",
                             (int)(i - 1), (int)i, (int)o->device, (int)o->step + 1, v->a, (int)p->step + 1);
        }
    }
    return IPUP_OK;
}

/* rule 2: op i is alone in its cell and on its stage's device; the table structure */
static IPUP__UNUSED int ipup__ver_device(ipup__ver *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int16_t home = v->t->stage_device[o->stage];
    int rc = ipup__ver_cell(v, i);
    if (rc != IPUP_OK) return rc;
    if (o->device != home) {
        ipup__ver_op(v, 2, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 2 (stage on its device): device %d, step %d: %s runs on device %d, but stage %d lives on "
                         "device %d (its weights and stash are there); move it to device %d",
                         (int)o->device, (int)o->step + 1, v->a, (int)o->device, (int)o->stage, (int)home, (int)home);
    }
    return IPUP_OK;
}

/* rule 1: op i appears once (and a backward is B or I + W, not both); records its step */
static IPUP__UNUSED int ipup__ver_once(ipup__ver *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int k = o->kind;
    int64_t x = (int64_t)o->mb * v->S + o->stage;
    int32_t *slot = k == IPUP_OP_F ? v->stF : k == IPUP_OP_W ? v->stW : v->stG;
    if (slot[x] >= 0) {
        ipup__ver_op(v, 1, i);
        if ((k == IPUP_OP_B || k == IPUP_OP_I) && v->kG[x] != k)
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "rule 1 (each op once): device %d, step %d: %s, but the same stage and micro-batch already "
                             "has %s at step %d; a backward is either B or I + W, not both",
                             (int)o->device, (int)o->step + 1, v->a, ipup__op_desc(v->b, sizeof v->b, v->kG[x], o->stage, o->mb),
                             (int)slot[x] + 1);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (each op once): device %d, step %d: %s appears twice (also at step %d); remove one",
                         (int)o->device, (int)o->step + 1, v->a, (int)slot[x] + 1);
    }
    slot[x] = o->step;
    if (k == IPUP_OP_B || k == IPUP_OP_I) v->kG[x] = (int8_t)k;
    return IPUP_OK;
}

static int ipup__fwd_ver_complete(ipup__ver *v);          /* forward-only block */
static int ipup__fwd_ver_kind(ipup__ver *v, int32_t i);  /* forward-only block */
/* rule 1: every op present, and nothing else (no W after a full B) */
static IPUP__UNUSED int ipup__ver_complete(ipup__ver *v) {
    int32_t s, m;
    if (v->t->forward_only) return ipup__fwd_ver_complete(v);
    for (m = 0; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            int64_t x = (int64_t)m * v->S + s;
            int32_t home = v->t->stage_device[s];
            int miss = 0;
            ipup_sched_verify_info *in = v->info;
            if (v->stF[x] < 0) miss = IPUP_OP_F;
            else if (v->stG[x] < 0) miss = v->stW[x] >= 0 ? IPUP_OP_I : IPUP_OP_B;
            else if (v->kG[x] == IPUP_OP_I && v->stW[x] < 0) miss = IPUP_OP_W;
            if (miss) {
                in->rule = 1; in->op_index = -1; in->step = -1; in->device = home;
                in->stage = s; in->mb = m; in->kind = miss;
                return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                                 "rule 1 (every op once): %s is missing (stage %d lives on device %d); add it to a free step "
                                 "of device %d after its inputs",
                                 ipup__op_desc(v->a, sizeof v->a, miss, s, m), (int)s, (int)home, (int)home);
            }
            if (v->kG[x] == IPUP_OP_B && v->stW[x] >= 0) {
                in->rule = 1; in->step = v->stW[x]; in->device = home;
                in->stage = s; in->mb = m; in->kind = IPUP_OP_W;
                return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                                 "rule 1 (nothing else appears): device %d, step %d: %s, but the backward of stage %d, "
                                 "micro-batch %d is a full B (it already computes the weight gradient); write I instead of B "
                                 "or drop the W",
                                 (int)home, (int)v->stW[x] + 1, ipup__op_desc(v->a, sizeof v->a, IPUP_OP_W, s, m), (int)s, (int)m);
            }
        }
    return IPUP_OK;
}

/* A dependency an op waits for: kind, stage, and the step it runs at. */
typedef struct ipup__dep {
    int kind;
    int32_t stage, step;
} ipup__dep;

/* rule 3: F(s,m) after F(s-1,m) */
static IPUP__UNUSED int ipup__ver_rule3(const ipup__ver *v, const ipup_op *o, int64_t x, ipup__dep *d) {
    if (o->stage > 0 && v->stF[x - 1] >= o->step) { d->kind = IPUP_OP_F; d->stage = o->stage - 1; d->step = v->stF[x - 1]; return 3; }
    return 0;
}
/* rule 4: B/I(s,m) after F(s,m) and after the backward of stage s+1 */
static IPUP__UNUSED int ipup__ver_rule4(const ipup__ver *v, const ipup_op *o, int64_t x, ipup__dep *d) {
    if (v->stF[x] >= o->step) { d->kind = IPUP_OP_F; d->stage = o->stage; d->step = v->stF[x]; return 4; }
    if (o->stage < v->S - 1 && v->stG[x + 1] >= o->step) {
        d->kind = v->kG[x + 1]; d->stage = o->stage + 1; d->step = v->stG[x + 1];
        return 4;
    }
    return 0;
}
/* rule 5: W(s,m) after I(s,m) */
static IPUP__UNUSED int ipup__ver_rule5(const ipup__ver *v, const ipup_op *o, int64_t x, ipup__dep *d) {
    if (v->stG[x] >= o->step) { d->kind = IPUP_OP_I; d->stage = o->stage; d->step = v->stG[x]; return 5; }
    return 0;
}

/* pass 2: rules 3, 4, 5 op by op in step order */
static IPUP__UNUSED int ipup__ver_deps(ipup__ver *v) {
    static const char *const what[3] = {"forward after the previous stage's forward",
                                        "backward after its forward and the next stage's backward",
                                        "weight gradient after the input gradient"};
    int32_t i;
    for (i = 0; i < v->t->n_ops; i++) {
        const ipup_op *o = &v->t->ops[i];
        int64_t x = (int64_t)o->mb * v->S + o->stage;
        ipup__dep d;
        int rule = o->kind == IPUP_OP_F ? ipup__ver_rule3(v, o, x, &d)
                   : o->kind == IPUP_OP_W ? ipup__ver_rule5(v, o, x, &d)
                                          : ipup__ver_rule4(v, o, x, &d);
        if (!rule) continue;
        ipup__ver_op(v, rule, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule %d (%s): device %d, step %d: %s needs %s from device %d, which runs at step %d; a value "
                         "made in step t is usable from step t+1, so move %s to step %d or later",
                         rule, what[rule - 3], (int)o->device, (int)o->step + 1, v->a,
                         ipup__op_desc(v->b, sizeof v->b, d.kind, d.stage, o->mb), (int)v->t->stage_device[d.stage],
                         (int)d.step + 1, v->a, (int)(d.step + 2));
    }
    return IPUP_OK;
}

/* the in-order property: weight-gradient ops (B or W) of each stage in increasing m */
static IPUP__UNUSED void ipup__ver_in_order(ipup__ver *v) {
    ipup_sched_verify_info *in = v->info;
    int32_t s, m;
    in->in_order = 1;
    for (m = 1; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            int64_t x = (int64_t)m * v->S + s;
            int32_t a0 = v->kG[x - v->S] == IPUP_OP_B ? v->stG[x - v->S] : v->stW[x - v->S];
            int32_t a1 = v->kG[x] == IPUP_OP_B ? v->stG[x] : v->stW[x];
            if (a1 < a0 && (in->in_order || s < in->out_of_order_stage)) {
                in->in_order = 0;
                in->out_of_order_stage = s;
            }
        }
}

static int ipup__ver_conc(ipup__ver *v); /* a table with concurrent stages, docs/schedules.md §9 */
static int ipup__stage_elsewhere(const ipup_table *t, int32_t s, int32_t d);

/* the scratch arrays (work is checked by the caller) */
static IPUP__UNUSED void ipup__ver_init(ipup__ver *v, const ipup_table *t, void *work, ipup_sched_verify_info *info, char *msg,
                                        size_t msg_len) {
    int64_t SM = (int64_t)t->stages * t->microbatches;
    v->t = t; v->info = info; v->msg = msg; v->msg_len = msg_len;
    v->S = t->stages; v->M = t->microbatches; v->P = t->devices;
    v->stF = (int32_t *)work;
    v->stG = v->stF + SM;
    v->stW = v->stG + SM;
    v->kG = (int8_t *)(void *)((uint8_t *)work + (size_t)12 * (size_t)SM); /* SM bytes */
    IPUPIPE_MEMSET(v->stF, 0xff, (size_t)12 * (size_t)SM); /* stF, stG, stW: -1 */
    IPUPIPE_MEMSET(v->kG, 0, (size_t)SM);
}

IPUPIPE_DEF int ipup_sched_verify(const ipup_table *t, void *work, size_t work_bytes, ipup_sched_verify_info *info, char *msg,
                                  size_t msg_len) {
    ipup_sched_verify_info dummy;
    ipup__ver v;
    int32_t i;
    int rc;
    if (!info) info = &dummy;
    IPUPIPE_MEMSET(info, 0, sizeof *info);
    info->step = info->device = info->op_index = info->stage = info->mb = info->kind = -1;
    info->out_of_order_stage = -1;
    if (msg && msg_len) msg[0] = '\0';
    rc = ipup__table_shape(t, msg, msg_len);
    if (rc) { info->rule = 6; return rc; }
    if (!ipup__work_ok(t, work, work_bytes))
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "verify: work must be 8-byte aligned and hold IPUP_SCHED_WORK_BYTES(%d, %d) = %lld bytes (got %lld)",
                         (int)t->stages, (int)t->microbatches, (long long)IPUP_SCHED_WORK_BYTES(t->stages, t->microbatches),
                         (long long)work_bytes);
    ipup__ver_init(&v, t, work, info, msg, msg_len);
    if ((rc = ipup__ver_mapping(&v)) != IPUP_OK) return rc;
    if (t->concurrent) return ipup__ver_conc(&v); /* §9 */
    for (i = 0; i < t->n_ops; i++) /* pass 1 */
        if ((rc = ipup__ver_range(&v, i)) != IPUP_OK || (rc = ipup__ver_device(&v, i)) != IPUP_OK ||
            (rc = ipup__fwd_ver_kind(&v, i)) != IPUP_OK || (rc = ipup__ver_once(&v, i)) != IPUP_OK)
            return rc;
    if ((rc = ipup__ver_complete(&v)) != IPUP_OK) return rc;
    if ((rc = ipup__ver_deps(&v)) != IPUP_OK) return rc; /* pass 2 */
    ipup__ver_in_order(&v);
    info->step = info->device = info->op_index = info->stage = info->mb = info->kind = -1;
    return IPUP_OK;
}

/* ---- measure ---- */
IPUPIPE_DEF ipup_sched_cost ipup_sched_cost_default(void) {
    ipup_sched_cost c;
    IPUPIPE_MEMSET(&c, 0, sizeof c);
    c.f = 1.0;
    c.b = 2.0;
    c.i = 1.0;
    c.w = 1.0;
    return c;
}

IPUPIPE_DEF double ipup_sched_op_cost(const ipup_sched_cost *c, const ipup_op *op) {
    double v;
    switch (op->kind) {
    case IPUP_OP_F: v = c->f; break;
    case IPUP_OP_B: v = c->b; break;
    case IPUP_OP_I: v = c->i; break;
    default: v = c->w; break;
    }
    if (c->stage_scale) v *= c->stage_scale[op->stage];
    return v;
}

/* 1 when the value an op produces goes to another device at the end of its step */
static IPUP__UNUSED int ipup__crosses(const ipup_table *t, const ipup_op *o) {
    if (o->kind == IPUP_OP_F) return o->stage < t->stages - 1 && ipup__stage_elsewhere(t, o->stage + 1, o->device);
    if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) return o->stage > 0 && ipup__stage_elsewhere(t, o->stage - 1, o->device);
    return 0;
}

static void ipup__measure_device(const ipup_table *t, const ipup_op *o, const int64_t *act_bytes, int32_t *devcur,
                                 int64_t *devbytes, ipup_sched_figures *out); /* §9 */

static void ipup__fwd_measure(const ipup_table *t, const ipup_sched_cost *c, const int64_t *act_bytes, const double *finF,
                              double *stepF, ipup_sched_figures *out); /* forward-only block */
IPUPIPE_DEF int ipup_sched_measure(const ipup_table *t, const ipup_sched_cost *cost, const int64_t *act_bytes,
                                                        void *work, size_t work_bytes, ipup_sched_figures *out) {
    ipup_sched_cost dc = ipup_sched_cost_default();
    double devfree[IPUP_SCHED_MAX_STAGES], devwork[IPUP_SCHED_MAX_STAGES];
    int32_t lastwg[IPUP_SCHED_MAX_STAGES];
    int32_t cur[IPUP_SCHED_MAX_STAGES], devcur[IPUP_SCHED_MAX_STAGES];
    int64_t devbytes[IPUP_SCHED_MAX_STAGES];
    double *finF, *finG, stepmax = 0.0, makespan = 0.0;
    int32_t *left;
    int32_t S, M, P, n, i, s, d, cross = 0;
    int64_t SM;
    if (!out || ipup__table_shape(t, NULL, 0)) return IPUP_ERR_ARG;
    if (!ipup__work_ok(t, work, work_bytes)) return IPUP_ERR_CAPACITY;
    if (!cost) cost = &dc;
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    S = t->stages; M = t->microbatches; P = t->devices; n = t->n_ops;
    SM = (int64_t)S * M;
    finF = (double *)work; /* scratch: finF (SM doubles), finG (SM doubles), left (M int32) */
    finG = (double *)(void *)((uint8_t *)work + (size_t)8 * (size_t)SM);
    left = (int32_t *)(void *)((uint8_t *)work + (size_t)16 * (size_t)SM);
    for (i = 0; i < SM; i++) finF[i] = finG[i] = -1.0;
    for (i = 0; i < M; i++) left[i] = 0;
    for (d = 0; d < P; d++) { devfree[d] = 0.0; devwork[d] = 0.0; devcur[d] = 0; devbytes[d] = 0; }
    for (s = 0; s < S; s++) { lastwg[s] = -1; cur[s] = 0; }
    out->stages = S; out->microbatches = M; out->devices = P; out->steps = t->steps; out->n_ops = n;
    out->in_order = 1;
    out->first_mb_done = -1; out->first_mb = -1;
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->stage < 0 || o->stage >= S || o->mb < 0 || o->mb >= M || o->device < 0 || o->device >= P || o->kind < 1 ||
            o->kind > 4 || (i > 0 && o->step < t->ops[i - 1].step))
            return IPUP_ERR_INVALID_TABLE;
        left[o->mb]++;
    }
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        int64_t x = (int64_t)o->mb * S + o->stage;
        double c = ipup_sched_op_cost(cost, o), ready = 0.0, start, fin, dep;
        s = o->stage; d = o->device;
        /* BSP: close the previous step */
        if (i > 0 && o->step != t->ops[i - 1].step) {
            out->bsp_time += stepmax + (cross ? cost->exchange : 0.0) + cost->sync;
            stepmax = 0.0; cross = 0;
        }
        if (c > stepmax) stepmax = c;
        if (ipup__crosses(t, o)) cross = 1;
        /* async: inputs arrive (plus exchange when they cross devices) */
#define IPUP__DEP(arr, idx, dst)                                                            \
    do {                                                                                    \
        if ((arr)[idx] < 0.0) return IPUP_ERR_INVALID_TABLE;                                \
        dep = (arr)[idx] + (ipup__stage_elsewhere(t, dst, d) ? cost->exchange : 0.0);       \
        if (dep > ready) ready = dep;                                                       \
    } while (0)
        if (o->kind == IPUP_OP_F) {
            if (s > 0) IPUP__DEP(finF, x - 1, s - 1);
        } else if (o->kind == IPUP_OP_W) {
            IPUP__DEP(finG, x, s);
        } else {
            IPUP__DEP(finF, x, s);
            if (s < S - 1) IPUP__DEP(finG, x + 1, s + 1);
        }
#undef IPUP__DEP
        start = devfree[d] > ready ? devfree[d] : ready;
        fin = start + c;
        devfree[d] = fin;
        if (fin > makespan) makespan = fin;
        if (o->kind == IPUP_OP_F) { if (fin > finF[x]) finF[x] = fin; } /* the latest branch */
        else if (o->kind != IPUP_OP_W && fin > finG[x]) finG[x] = fin;
        devwork[d] += c;
        out->work += c;
        ipup__measure_device(t, o, act_bytes, devcur, devbytes, out); /* §9: per device */
        /* in-flight and in-order (a concurrent stage: counted on branch 0) */
        if (ipup_op_branch(o) > 0) {
        } else if (o->kind == IPUP_OP_F) {
            if (++cur[s] > out->peak_inflight[s]) out->peak_inflight[s] = cur[s];
        } else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) {
            cur[s]--;
            if (o->mb < lastwg[s]) out->in_order = 0;
            lastwg[s] = o->mb;
        }
        if (--left[o->mb] == 0 && out->first_mb_done < 0) {
            out->first_mb_done = o->step + 1;
            out->first_mb = o->mb;
        }
    }
    if (n > 0) out->bsp_time += stepmax + (cross ? cost->exchange : 0.0) + cost->sync;
    out->async_time = makespan;
    out->unit_utilisation = t->steps > 0 ? (double)n / ((double)t->steps * (double)P) : 0.0;
    out->bubble_bsp = out->bsp_time > 0.0 ? 1.0 - out->work / ((double)P * out->bsp_time) : 0.0;
    out->bubble_async = makespan > 0.0 ? 1.0 - out->work / ((double)P * makespan) : 0.0;
    for (s = 0; s < S; s++) {
        out->stash_bytes[s] = (int64_t)out->peak_inflight[s] * (act_bytes ? act_bytes[s] : 0);
        if (t->concurrent && t->n_branches[s] > 1) out->stash_bytes[s] *= t->n_branches[s]; /* each branch keeps its own (§9) */
        out->stash_total += out->stash_bytes[s];
    }
    for (d = 0; d < P; d++) out->inflight_total += out->peak_inflight_device[d];
    {
        int32_t ph[6];
        ipup_sched_phases(t, ph);
        out->ramp_up[0] = ph[0]; out->ramp_up[1] = ph[1];
        out->main_phase[0] = ph[2]; out->main_phase[1] = ph[3];
        out->ramp_down[0] = ph[4]; out->ramp_down[1] = ph[5];
    }
    if (t->forward_only) ipup__fwd_measure(t, cost, act_bytes, finF, finG, out);
    return IPUP_OK;
}


/* ---- text writer: documents through ipup_write_fn, staged in small pieces ---- */
IPUPIPE_DEF int ipup_buf_write(void *user, const void *data, size_t n) {
    ipup_buf *b = (ipup_buf *)user;
    if (!b) return 0;
    if (b->buf && b->cap > 0) {
        size_t at = b->len < b->cap - 1 ? b->len : b->cap - 1, k = n < b->cap - 1 - at ? n : b->cap - 1 - at;
        if (k) IPUPIPE_MEMCPY(b->buf + at, data, k);
        b->buf[at + k] = '\0';
    }
    b->len += n;
    return 0;
}

typedef struct ipup__w {
    ipup_write_fn write;
    void *user;
    int err;      /* write failed: nothing more is sent */
    size_t n;     /* bytes staged in tmp */
    char tmp[512];
} ipup__w;

static IPUP__UNUSED void ipup__wflush(ipup__w *w) {
    if (!w->err && w->n && w->write(w->user, w->tmp, w->n) != 0) w->err = 1;
    w->n = 0;
}
static IPUP__UNUSED void ipup__wput(ipup__w *w, const char *s, size_t n) {
    if (w->err) return;
    if (w->n + n > sizeof w->tmp) {
        ipup__wflush(w);
        if (n > sizeof w->tmp) {
            if (!w->err && w->write(w->user, s, n) != 0) w->err = 1;
            return;
        }
    }
    IPUPIPE_MEMCPY(w->tmp + w->n, s, n);
    w->n += n;
}
static IPUP__UNUSED void ipup__ws(ipup__w *w, const char *s) { ipup__wput(w, s, ipup__strlen(s)); }
static IPUP__PRINTF(2, 3) IPUP__UNUSED void ipup__wf(ipup__w *w, const char *fmt, ...) {
    char tmp[256];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = ipup_vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) ipup__wput(w, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
static IPUP__UNUSED void ipup__wpad(ipup__w *w, size_t n) {
    while (n--) ipup__wput(w, " ", 1);
}
static IPUP__UNUSED int ipup__wend(ipup__w *w) {
    ipup__wflush(w);
    return w->err ? IPUP_ERR_IO : IPUP_OK;
}
static IPUP__UNUSED void ipup__winit(ipup__w *w, ipup_write_fn write, void *user) {
    w->write = write; w->user = user; w->err = 0; w->n = 0;
}

/* a device holds several stages */
static IPUP__UNUSED int ipup__shared_devices(const ipup_table *t) {
    int32_t seen[IPUP_SCHED_MAX_STAGES], s, d;
    if (t->concurrent) return 1; /* cells name the stage and branch, "1F3.1" (§9) */
    for (d = 0; d < IPUP_SCHED_MAX_STAGES; d++) seen[d] = 0;
    for (s = 0; s < t->stages; s++) {
        d = t->stage_device[s];
        if (d < 0 || d >= IPUP_SCHED_MAX_STAGES) continue;
        if (seen[d]++) return 1;
    }
    return 0;
}

/* with_stage: 0 = "F0", 1 = "2F0" (the stage), -S = "3B0" with PopXL's stage numbers */
static IPUP__UNUSED int ipup__grid_token(const ipup_op *o, int with_stage, char *buf, size_t len) {
    int n;
    if (with_stage < 0)
        n = ipup_snprintf(buf, len, "%d%c%d", (int)ipup_sched_popxl_stage(-with_stage, o), ipup__kind_char(o->kind), (int)o->mb);
    else if (with_stage) n = ipup_sched_op_str(o, buf, len);
    else n = ipup_snprintf(buf, len, "%c%d", ipup__kind_char(o->kind), (int)o->mb);
    return n < 0 ? 0 : n;
}

IPUPIPE_DEF int32_t ipup_sched_popxl_stage(int32_t stages, const ipup_op *op) {
    if (!op) return -1;
    return op->kind == IPUP_OP_F ? op->stage : 2 * stages - 2 - op->stage;
}

/* one grid cell: " " and the op's token (or ".." when idle), padded to cw */
static IPUP__UNUSED void ipup__grid_cell(ipup__w *w, const ipup_op *o, int ws, int cw) {
    char tok[48];
    int n = o ? ipup__grid_token(o, ws, tok, sizeof tok) : 2;
    ipup__wput(w, " ", 1);
    ipup__wput(w, o ? tok : "..", (size_t)n);
    ipup__wpad(w, (size_t)(cw - n));
}

/* 1 when the ops are in (step, device) order, so each device's ops are in step order */
static IPUP__UNUSED int ipup__step_sorted(const ipup_table *t) {
    int32_t i;
    for (i = 1; i < t->n_ops; i++) {
        const ipup_op *p = &t->ops[i - 1], *o = &t->ops[i];
        if (p->step > o->step || (p->step == o->step && p->device > o->device)) return 0;
    }
    return 1;
}

/* The cells of device d's row, the last op of a cell shown (a valid table has one).
   Sorted tables in one pass over the ops; others a window of steps at a time. */
static IPUP__UNUSED void ipup__grid_row(ipup__w *w, const ipup_table *t, int32_t d, int ws, int cw, int sorted) {
    int32_t win[256], base, col = 0, i, k;
    const ipup_op *pend = NULL;
    if (sorted) {
        for (i = 0; i < t->n_ops; i++) {
            const ipup_op *o = &t->ops[i];
            if (o->device != d || o->step < 0 || o->step >= t->steps) continue;
            if (pend && o->step != pend->step) { ipup__grid_cell(w, pend, ws, cw); col++; }
            for (; col < o->step; col++) ipup__grid_cell(w, NULL, ws, cw);
            pend = o;
        }
        if (pend) { ipup__grid_cell(w, pend, ws, cw); col++; }
        for (; col < t->steps; col++) ipup__grid_cell(w, NULL, ws, cw);
        return;
    }
    for (base = 0; base < t->steps && !w->err; base += 256) {
        int32_t nw = t->steps - base < 256 ? t->steps - base : 256;
        for (k = 0; k < nw; k++) win[k] = -1;
        for (i = 0; i < t->n_ops; i++)
            if (t->ops[i].device == d && t->ops[i].step >= base && t->ops[i].step < base + nw) win[t->ops[i].step - base] = i;
        for (k = 0; k < nw; k++) ipup__grid_cell(w, win[k] >= 0 ? &t->ops[win[k]] : NULL, ws, cw);
    }
}

/* the step-number line over the grid: numbers at the columns c with c % k == 0, where k
   (1, 2, 5, 10, ...) leaves room for the widest number */
static IPUP__UNUSED void ipup__grid_ruler(ipup__w *w, const ipup_table *t, int lw, int cw) {
    char num[16];
    int32_t k = 1, m = 0, c, digits = ipup_snprintf(num, sizeof num, "%d", (int)t->steps);
    int64_t pos;
    while ((int64_t)k * (cw + 1) < (int64_t)digits + 1) { k *= m % 3 == 1 ? 5 : 2; if (m % 3 == 1) k /= 2; m++; }
    ipup__ws(w, "step");
    ipup__wpad(w, (size_t)(lw > 4 ? lw - 4 : 0));
    pos = lw > 4 ? lw : 4;
    for (c = 0; c < t->steps && !w->err; c += k) {
        int64_t at = (int64_t)lw + 2 + (int64_t)c * (cw + 1); /* a cell is " " + token, after the label and a space */
        int n = ipup_snprintf(num, sizeof num, "%d", (int)c + 1);
        if (at > pos) ipup__wpad(w, (size_t)(at - pos));
        ipup__wput(w, num, (size_t)n);
        pos = (at > pos ? at : pos) + n;
    }
    ipup__ws(w, "\n");
}

static IPUP__UNUSED int ipup__render_grid(const ipup_table *t, int flags, ipup_write_fn write, void *user) {
    const int popxl = (flags & IPUP_SCHED_GRID_POPXL) != 0;
    ipup__w w;
    char tok[48], lab[32];
    int ws, cw = 2, lw = 0, n, i, sorted;
    int32_t d;
    if (ipup__table_shape(t, NULL, 0) || t->steps < 0 || !write) return IPUP_ERR_ARG;
    ws = popxl ? -(int)t->stages : ipup__shared_devices(t);
    for (i = 0; i < t->n_ops; i++) {
        n = ipup__grid_token(&t->ops[i], ws, tok, sizeof tok);
        if (n > cw) cw = n;
    }
    for (d = 0; d < t->devices; d++) {
        n = ipup_snprintf(lab, sizeof lab, "IPU%d", (int)d);
        if (n > lw) lw = n;
    }
    sorted = ipup__step_sorted(t);
    ipup__winit(&w, write, user);
    if (flags & IPUP_SCHED_GRID_STEPS) ipup__grid_ruler(&w, t, lw, cw);
    for (d = 0; d < t->devices && !w.err; d++) {
        n = ipup_snprintf(lab, sizeof lab, "IPU%d", (int)d);
        ipup__wput(&w, lab, (size_t)n);
        ipup__wpad(&w, (size_t)(lw - n + 1));
        ipup__grid_row(&w, t, d, ws, cw, sorted);
        ipup__wput(&w, "\n", 1);
    }
    return ipup__wend(&w);
}
IPUPIPE_DEF int ipup_sched_render_grid(const ipup_table *t, ipup_write_fn write, void *user) {
    return ipup__render_grid(t, 0, write, user);
}
IPUPIPE_DEF int ipup_sched_render_grid_popxl(const ipup_table *t, ipup_write_fn write, void *user) {
    return ipup__render_grid(t, IPUP_SCHED_GRID_POPXL, write, user);
}
IPUPIPE_DEF int ipup_sched_render_grid_ex(const ipup_table *t, int flags, ipup_write_fn write, void *user) {
    return ipup__render_grid(t, flags, write, user);
}

IPUPIPE_DEF int ipup_sched_render_steps(const ipup_table *t, int32_t mark_step, ipup_write_fn write, void *user) {
    ipup__w w;
    int32_t colw[IPUP_SCHED_MAX_STAGES];
    char tok[48], lab[32];
    int32_t d, st, i, j, digits = 1, n;
    if (ipup__table_shape(t, NULL, 0) || t->steps < 0 || !write) return IPUP_ERR_ARG;
    ipup__winit(&w, write, user);
    /* PyTorch: step labels "Step " + zero-padded index; columns "Rank i" */
    for (n = t->steps; n >= 10; n /= 10) digits++; /* labels are 1-based: Step 1 .. Step T */
    for (d = 0; d < t->devices; d++) colw[d] = ipup_snprintf(lab, sizeof lab, "Rank %d", (int)d);
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->device < 0 || o->device >= t->devices) continue;
        n = ipup_sched_op_str(o, tok, sizeof tok);
        if (n > colw[o->device]) colw[o->device] = n;
    }
    ipup__wpad(&w, (size_t)(5 + digits + 2));
    for (d = 0; d < t->devices; d++) {
        n = ipup_snprintf(lab, sizeof lab, "Rank %d", (int)d);
        if (d) ipup__ws(&w, " ");
        ipup__ws(&w, lab);
        ipup__wpad(&w, (size_t)(colw[d] - n));
    }
    ipup__ws(&w, "\n");
    i = 0;
    for (st = 0; st < t->steps && !w.err; st++) {
        {
            char num[16];
            int nd = ipup_snprintf(num, sizeof num, "%d", (int)st + 1);
            ipup__ws(&w, "Step ");
            while (nd++ < digits) ipup__ws(&w, "0");
            ipup__ws(&w, num);
            ipup__ws(&w, ": ");
        }
        j = i;
        for (d = 0; d < t->devices; d++) {
            int32_t k = j;
            n = 0;
            tok[0] = '\0';
            /* ops of this step are sorted by device; a device may hold several (invalid table) */
            while (k < t->n_ops && t->ops[k].step == st && t->ops[k].device < d) k++;
            if (k < t->n_ops && t->ops[k].step == st && t->ops[k].device == d) n = ipup_sched_op_str(&t->ops[k], tok, sizeof tok);
            if (d) ipup__ws(&w, " ");
            ipup__ws(&w, tok);
            ipup__wpad(&w, (size_t)(colw[d] > n ? colw[d] - n : 0));
        }
        while (i < t->n_ops && t->ops[i].step <= st) i++;
        if (st == mark_step) ipup__ws(&w, " <-- ERROR HERE");
        ipup__ws(&w, "\n");
    }
    return ipup__wend(&w);
}

IPUPIPE_DEF int ipup_sched_write_csv(const ipup_table *t, ipup_write_fn write, void *user) {
    ipup__w w;
    char tok[48];
    int32_t d, i;
    if (ipup__table_shape(t, NULL, 0) || t->steps < 0 || !write) return IPUP_ERR_ARG;
    ipup__winit(&w, write, user);
    for (d = 0; d < t->devices && !w.err; d++) {
        int32_t col = 0; /* cells written so far in this row */
        for (i = 0; i < t->n_ops; i++) {
            const ipup_op *o = &t->ops[i];
            int n;
            if (o->device != d) continue;
            while (col < o->step) { if (col) ipup__ws(&w, ","); col++; }
            if (col == o->step) {
                if (col) ipup__ws(&w, ",");
                col++;
            } else {
                continue; /* a second op in the same cell (invalid table): not representable */
            }
            n = ipup_sched_op_str(o, tok, sizeof tok);
            ipup__wput(&w, tok, (size_t)n);
        }
        while (col < t->steps) { if (col) ipup__ws(&w, ","); col++; }
        ipup__ws(&w, "\n");
    }
    return ipup__wend(&w);
}

/* BSP cost of the step made of ops [i0, i1): its slowest op, the exchange if any op crosses
   devices, and the sync. */
static IPUP__UNUSED double ipup__step_cost(const ipup_table *t, const ipup_sched_cost *c, int32_t i0, int32_t i1) {
    double mx = 0.0;
    int cross = 0;
    int32_t i;
    for (i = i0; i < i1; i++) {
        double v = ipup_sched_op_cost(c, &t->ops[i]);
        if (v > mx) mx = v;
        if (ipup__crosses(t, &t->ops[i])) cross = 1;
    }
    return mx + (cross ? c->exchange : 0.0) + c->sync;
}

/* One past the last op of the step that ops[i] starts (ops are sorted by step). */
static IPUP__UNUSED int32_t ipup__step_end(const ipup_table *t, int32_t i) {
    int32_t j = i;
    while (j < t->n_ops && t->ops[j].step == t->ops[i].step) j++;
    return j;
}

IPUPIPE_DEF int ipup_sched_phases(const ipup_table *t, int32_t out[6]) {
    uint8_t used[IPUP_SCHED_MAX_STAGES];
    int32_t i = 0, d, inuse = 0, a = -1, b = -1, turn = -1, T;
    if (!out || ipup__table_shape(t, NULL, 0)) return IPUP_ERR_ARG;
    T = t->steps;
    IPUPIPE_MEMSET(used, 0, sizeof used);
    for (i = 0; i < t->n_ops; i++) {
        d = t->ops[i].device;
        if (d >= 0 && d < t->devices && !used[d]) { used[d] = 1; inuse++; }
        if ((t->ops[i].kind == IPUP_OP_B || t->ops[i].kind == IPUP_OP_I) && (turn < 0 || t->ops[i].step < turn))
            turn = t->ops[i].step;
    }
    /* a step is full when it holds one op on each device in use (a valid table has at
       most one op per device and step; ops are sorted by step) */
    i = 0;
    while (i < t->n_ops) {
        int32_t j = ipup__step_end(t, i);
        if (j - i >= inuse && inuse > 0) {
            if (a < 0) a = t->ops[i].step;
            b = t->ops[i].step;
        }
        i = j;
    }
    if (a < 0) { /* never fills: no main; ramp-up until the first backward */
        a = turn < 0 ? T : turn;
        b = a - 1;
    }
    out[0] = 0; out[1] = a - 1;
    out[2] = a; out[3] = b;
    out[4] = b + 1; out[5] = T - 1;
    return IPUP_OK;
}

/* Walks the ops in step order with the BSP start time of their step: a step starts when the
   one before it ends (ipup__step_cost). */
typedef struct {
    const ipup_table *t;
    const ipup_sched_cost *c;
    int32_t i, end; /* next op; one past the current step */
    double now, next; /* start of the current step; start of the next */
} ipup__timed;
static IPUP__UNUSED void ipup__timed_init(ipup__timed *it, const ipup_table *t, const ipup_sched_cost *c) {
    it->t = t;
    it->c = c;
    it->i = it->end = 0;
    it->now = it->next = 0.0;
}
/* the next op (its step starts at it->now), or NULL after the last */
static IPUP__UNUSED const ipup_op *ipup__timed_next(ipup__timed *it) {
    if (it->i >= it->t->n_ops) return NULL;
    if (it->i == it->end) {
        it->end = ipup__step_end(it->t, it->i);
        it->now = it->next;
        it->next = it->now + ipup__step_cost(it->t, it->c, it->i, it->end);
    }
    return &it->t->ops[it->i++];
}

/* Chrome's reserved colour names, one per op kind (F B I W) and for the update */
static const char *const ipup__trace_cname[5] = {"thread_state_running", "thread_state_iowait", "terrible", "olive",
                                                 "rail_animation"};

/* the phases (ipup_sched_phases) as spans on their own track, pid = P */
static IPUP__UNUSED void ipup__trace_phases(ipup__w *w, const ipup_table *t, const ipup_sched_cost *c, double total) {
    static const char *const names[3] = {"ramp-up", "main", "ramp-down"};
    int32_t ph[6], p, i = 0;
    double at[4] = {0.0, total, total, total}, now = 0.0;
    if (ipup_sched_phases(t, ph) || !t->ops) return;
    while (i < t->n_ops) {
        int32_t j = ipup__step_end(t, i), st = t->ops[i].step;
        double sc = ipup__step_cost(t, c, i, j);
        if (st < ph[2]) at[1] = now + sc;
        if (st <= ph[3]) at[2] = now + sc;
        now += sc;
        i = j;
    }
    if (ph[3] < ph[2]) at[2] = at[1];
    ipup__wf(w, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"phases\"}}", (int)t->devices);
    for (p = 0; p < 3; p++) {
        if (ph[2 * p + 1] < ph[2 * p]) continue;
        ipup__wf(w,
                 ",\n{\"name\":\"%s\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
                 "\"args\":{\"first_step\":%d,\"last_step\":%d}}",
                 names[p], (int)t->devices, at[p] * 1000.0, (at[p + 1] - at[p]) * 1000.0, (int)ph[2 * p], (int)ph[2 * p + 1]);
    }
}

IPUPIPE_DEF int ipup_sched_write_trace(const ipup_table *t, const ipup_sched_cost *cost, ipup_write_fn write, void *user) {
    ipup_sched_cost dc = ipup_sched_cost_default();
    ipup__w w;
    ipup__timed it;
    const ipup_op *o;
    int32_t d;
    int first = 1;
    if (ipup__table_shape(t, NULL, 0) || !write) return IPUP_ERR_ARG;
    if (!cost) cost = &dc;
    ipup__winit(&w, write, user);
    ipup__ws(&w, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    for (d = 0; d < t->devices; d++) {
        ipup__wf(&w, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"IPU%d\"}}", first ? "" : ",\n",
                 (int)d, (int)d);
        first = 0;
    }
    ipup__timed_init(&it, t, cost);
    while (!w.err && (o = ipup__timed_next(&it)) != NULL) {
        char tok[48];
        ipup_sched_op_str(o, tok, sizeof tok);
        ipup__wf(&w,
                 ",\n{\"name\":\"%s\",\"cat\":\"%c\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,\"cname\":\"%s\","
                 "\"args\":{\"stage\":%d,\"microbatch\":%d,\"step\":%d}}",
                 tok, ipup__kind_char(o->kind), (int)o->device, it.now * 1000.0, ipup_sched_op_cost(cost, o) * 1000.0,
                 ipup__trace_cname[(o->kind - 1) & 3], (int)o->stage, (int)o->mb, (int)o->step);
    }
    /* the update U after the last step on every device (one unit, as in the SVG), then the phases */
    for (d = 0; d < t->devices && t->n_ops > 0 && !t->forward_only; d++)
        ipup__wf(&w, ",\n{\"name\":\"U\",\"cat\":\"U\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":1000.000,\"cname\":\"%s\"}",
                 (int)d, it.next * 1000.0, ipup__trace_cname[4]);
    ipup__trace_phases(&w, t, cost, it.next);
    ipup__ws(&w, "\n]}\n");
    return ipup__wend(&w);
}

/* ---- SVG: layout first (sizes, bands), then drawing band by band ---- */
#define IPUP__SVG_CW 6.6   /* width of a character of the 11 px monospace font */
#define IPUP__SVG_LEFT 56.0
#define IPUP__SVG_RIGHT 16.0
#define IPUP__SVG_ROWH 26.0
#define IPUP__SVG_TOP 34.0 /* the title line */
#define IPUP__SVG_MAXW 1048576.0 /* the widest canvas in px, whatever the costs or options */
typedef struct ipup__svg {
    const ipup_table *t;
    const ipup_sched_cost *c;
    const ipup_sched_figures *fig;
    double unit, band_time, total, ext, W, H, band_h, ph_t[4];
    int32_t bands, kinds, timed, legend_lines;
    char title[200];
} ipup__svg;

static const char *const ipup__svg_fill[5] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1"};
static const char *const ipup__svg_phname[3] = {"ramp-up", "main", "ramp-down"};
static const char *const ipup__svg_phfill[3] = {"#fff3e0", "#e8f5e9", "#e3f2fd"};

/* The op index where the band starting at op i (its step starting at time bs) ends, and
   that band's end time: steps go in until one would pass band_time (a band holds at
   least one step). */
static IPUP__UNUSED int32_t ipup__svg_band(const ipup__svg *g, int32_t i, double bs, double *be) {
    double now = bs;
    while (i < g->t->n_ops) {
        int32_t j = ipup__step_end(g->t, i);
        double sc = ipup__step_cost(g->t, g->c, i, j);
        if (now > bs && now + sc - bs > g->band_time + 1e-9) break;
        now += sc;
        i = j;
    }
    *be = now;
    return i;
}

/* legend items: F B I W present, U, idle, the phases present; their count and widths */
static IPUP__UNUSED int ipup__svg_legend_item(const ipup__svg *g, int k, const char **name, const char **fill) {
    static const char *const kn[5] = {"forward F", "backward B", "input grad I", "weight grad W", "update U"};
    if (k < 4) { *name = kn[k]; *fill = ipup__svg_fill[k]; return (g->kinds >> k) & 1; }
    if (k == 4) { *name = kn[4]; *fill = ipup__svg_fill[4]; return !g->t->forward_only; }
    if (k == 5) { *name = "idle"; *fill = "#dddddd"; return 1; }
    *name = ipup__svg_phname[k - 6]; *fill = ipup__svg_phfill[k - 6];
    return g->fig && g->ph_t[k - 5] > g->ph_t[k - 6];
}
static IPUP__UNUSED double ipup__svg_item_w(const char *name) { return 16.0 + (double)ipup__strlen(name) * IPUP__SVG_CW + 14.0; }

static IPUP__UNUSED void ipup__svg_default_title(ipup__svg *g) {
    const ipup_table *t = g->t;
    const ipup_sched_cost *c = g->c;
    if (t->split_backward)
        ipup_snprintf(g->title, sizeof g->title, "S=%d M=%d P=%d T=%d   cost F=%g I=%g W=%g exchange=%g sync=%g", (int)t->stages,
                      (int)t->microbatches, (int)t->devices, (int)t->steps, c->f, c->i, c->w, c->exchange, c->sync);
    else
        ipup_snprintf(g->title, sizeof g->title, "S=%d M=%d P=%d T=%d   cost F=%g B=%g exchange=%g sync=%g", (int)t->stages,
                      (int)t->microbatches, (int)t->devices, (int)t->steps, c->f, c->b, c->exchange, c->sync);
}

/* every cost and stage scale a number in [0, 1e15]: the total stays in double range */
static IPUP__UNUSED int ipup__svg_cost_ok(const ipup_sched_cost *c, int32_t stages) {
    const double v[6] = {c->f, c->b, c->i, c->w, c->exchange, c->sync};
    int32_t k;
    for (k = 0; k < 6; k++)
        if (!(v[k] >= 0.0 && v[k] <= 1e15)) return 0;
    for (k = 0; c->stage_scale && k < stages; k++)
        if (!(c->stage_scale[k] >= 0.0 && c->stage_scale[k] <= 1e15)) return 0;
    return 1;
}

/* sizes: total time, phase times, unit, bands, canvas */
static IPUP__UNUSED void ipup__svg_layout(ipup__svg *g, const ipup_sched_svg_opts *o) {
    const ipup_table *t = g->t;
    double maxw = o && o->width != 0.0 ? o->width : 1600.0, x = 8.0, bs = 0.0, be, maxstep = 0.0;
    int32_t i = 0, j, bound[3], ph = 0, k;
    g->kinds = 0;
    for (i = 0; i < t->n_ops; i++) {
        double cst = ipup_sched_op_cost(g->c, &t->ops[i]);
        if (t->ops[i].kind >= 1 && t->ops[i].kind <= 4) g->kinds |= 1 << (t->ops[i].kind - 1);
        if (cst != 1.0) g->timed = 1;
    }
    if (g->c->exchange != 0.0 || g->c->sync != 0.0) g->timed = 1;
    if (g->fig) { bound[0] = g->fig->main_phase[0]; bound[1] = g->fig->ramp_down[0]; }
    else { bound[0] = 0; bound[1] = t->steps; }
    bound[2] = t->steps;
    g->ph_t[0] = 0.0;
    for (i = 0; i < t->n_ops; i = j) {
        double sc;
        j = ipup__step_end(t, i);
        sc = ipup__step_cost(t, g->c, i, j);
        while (ph < 3 && t->ops[i].step >= bound[ph]) g->ph_t[++ph] = g->total;
        g->total += sc;
        if (sc > maxstep) maxstep = sc;
    }
    while (ph < 3) g->ph_t[++ph] = g->total;
    if (maxw > IPUP__SVG_MAXW) maxw = IPUP__SVG_MAXW;
    g->unit = o && o->unit > 0.0 ? o->unit : 24.0;
    if (!(o && o->unit > 0.0) && maxw > 0.0 && IPUP__SVG_LEFT + IPUP__SVG_RIGHT + (g->total + 1.0) * g->unit > maxw) {
        g->unit = (maxw - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / (g->total + 1.0);
        if (g->unit < 8.0) g->unit = 8.0;
    }
    /* a band holds whole steps, so the longest step must fit one (costs far apart, e.g.
       F=1e10 B=2, would otherwise make a canvas of 1e11 px and an axis of 1e9 ticks):
       shrink, and the ops too narrow for their labels go without; unfolded, the canvas
       stops at IPUP__SVG_MAXW */
    if (maxw > 0.0 && (maxstep + 1.0) * g->unit > maxw - IPUP__SVG_LEFT - IPUP__SVG_RIGHT)
        g->unit = (maxw - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / (maxstep + 1.0);
    if (maxw <= 0.0 && (g->total + 1.0) * g->unit > IPUP__SVG_MAXW - IPUP__SVG_LEFT - IPUP__SVG_RIGHT)
        g->unit = (IPUP__SVG_MAXW - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / (g->total + 1.0);
    g->band_time = maxw > 0.0 ? (maxw - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / g->unit - 1.0 : g->total + 1.0;
    if (g->band_time < 1.0) g->band_time = 1.0;
    for (i = 0, g->bands = 0, g->ext = 1.0; i < t->n_ops || g->bands == 0; g->bands++) {
        i = ipup__svg_band(g, i, bs, &be);
        if (be - bs + (i >= t->n_ops ? 1.0 : 0.0) > g->ext) g->ext = be - bs + (i >= t->n_ops ? 1.0 : 0.0);
        bs = be;
    }
    if (o && o->title) ipup_snprintf(g->title, sizeof g->title, "%s", o->title);
    else ipup__svg_default_title(g);
    g->W = IPUP__SVG_LEFT + g->ext * g->unit + IPUP__SVG_RIGHT;
    if (g->W < 16.0 + (double)ipup__strlen(g->title) * 7.8) g->W = 16.0 + (double)ipup__strlen(g->title) * 7.8;
    if (g->W < 320.0) g->W = 320.0;
    g->legend_lines = 1;
    for (k = 0; k < 9; k++) {
        const char *nm, *fl;
        if (!ipup__svg_legend_item(g, k, &nm, &fl)) continue;
        if (x + ipup__svg_item_w(nm) > g->W - 8.0 && x > 8.0) { g->legend_lines++; x = 8.0; }
        x += ipup__svg_item_w(nm);
    }
    g->band_h = 16.0 + 14.0 + IPUP__SVG_ROWH * (double)t->devices + (g->timed ? 18.0 : 0.0) + 10.0;
    g->H = IPUP__SVG_TOP + g->band_h * (double)g->bands + 18.0 * (double)g->legend_lines + 6.0;
}

/* XML text: & < > escaped */
static IPUP__UNUSED void ipup__svg_text(ipup__w *w, const char *s) {
    for (; *s; s++) {
        if (*s == '<') ipup__ws(w, "&lt;");
        else if (*s == '>') ipup__ws(w, "&gt;");
        else if (*s == '&') ipup__ws(w, "&amp;");
        else ipup__wput(w, s, 1);
    }
}

/* a band's background: phase shading and labels (where they fit), device labels, idle */
static IPUP__UNUSED void ipup__svg_band_bg(ipup__w *w, const ipup__svg *g, double y, double bs, double be, int last) {
    const double L = IPUP__SVG_LEFT, u = g->unit, rows = IPUP__SVG_ROWH * (double)g->t->devices;
    int32_t p, d;
    for (p = 0; g->fig && p < 3; p++) {
        double a = g->ph_t[p] > bs ? g->ph_t[p] : bs, b = g->ph_t[p + 1] < be ? g->ph_t[p + 1] : be;
        if (b <= a) continue;
        ipup__wf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", L + (a - bs) * u, y, (b - a) * u,
                 30.0 + rows, ipup__svg_phfill[p]);
        if ((double)ipup__strlen(ipup__svg_phname[p]) * IPUP__SVG_CW + 4.0 <= (b - a) * u)
            ipup__wf(w, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", L + (a - bs) * u + 2.0, y + 11.0, ipup__svg_phname[p]);
        if (a > bs)
            ipup__wf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"4,3\"/>\n",
                     L + (a - bs) * u, y, L + (a - bs) * u, y + 30.0 + rows);
    }
    for (d = 0; d < g->t->devices; d++) {
        double yy = y + 30.0 + IPUP__SVG_ROWH * (double)d;
        ipup__wf(w, "<text x=\"4\" y=\"%.1f\">IPU%d</text>\n", yy + 16.0, (int)d);
        ipup__wf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#dddddd\"/>\n", L, yy + 2.0, (be - bs) * u,
                 IPUP__SVG_ROWH - 4.0);
        if (last)
            ipup__wf(w,
                     "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"white\"><title>update U</title>"
                     "</rect><text x=\"%.1f\" y=\"%.1f\" fill=\"white\">U</text>\n",
                     L + (be - bs) * u, yy + 2.0, u, IPUP__SVG_ROWH - 4.0, ipup__svg_fill[4], L + (be - bs) * u + u / 2.0 - 3.3,
                     yy + 17.0);
    }
}

/* the time axis under a band: ticks 1, 2, 5, 10, ... units apart, at least 40 px (at most
   one per 40 px of the band); a label that would touch the one before it is left out
   (long labels such as "3.35e+10" at 40 px) */
static IPUP__UNUSED void ipup__svg_axis(ipup__w *w, const ipup__svg *g, double y, double bs, double be) {
    double tick = 1.0, v, label_end = -1e300;
    int m = 0, left = (int)((be - bs) * g->unit / 40.0) + 2;
    while (tick * g->unit < 40.0 && m < 2200) { tick *= m % 3 == 1 ? 2.5 : 2.0; m++; }
    ipup__wf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", IPUP__SVG_LEFT, y, IPUP__SVG_LEFT + (be - bs) * g->unit, y);
    for (v = (double)(int64_t)(bs / tick) * tick; v <= be + 1e-9 && left-- > 0; v += tick) {
        double x = IPUP__SVG_LEFT + (v - bs) * g->unit;
        char num[32];
        int n;
        if (v < bs - 1e-9) continue;
        n = ipup_snprintf(num, sizeof num, "%g", v);
        ipup__wf(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>", x, y, x, y + 3.0);
        if (x + (double)n * IPUP__SVG_CW / 2.0 <= g->W - 2.0 && x - (double)n * IPUP__SVG_CW / 2.0 >= label_end + 4.0) {
            ipup__wf(w, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555\" text-anchor=\"middle\">%s</text>\n", x, y + 13.0, num);
            label_end = x + (double)n * IPUP__SVG_CW / 2.0;
        }
    }
}

/* the ops of one band (ops i .. end), their step numbers above the rows */
static IPUP__UNUSED void ipup__svg_band_ops(ipup__w *w, const ipup__svg *g, double y, double bs, int32_t i, int32_t end) {
    const ipup_table *t = g->t;
    double now = bs, label_end = -1.0;
    while (i < end && !w->err) {
        int32_t j = ipup__step_end(t, i), k;
        double x = IPUP__SVG_LEFT + (now - bs) * g->unit;
        char num[16];
        int n = ipup_snprintf(num, sizeof num, "%d", (int)t->ops[i].step + 1);
        if (x >= label_end + 3.0) {
            ipup__wf(w, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555\">%s</text>\n", x + 1.0, y + 26.0, num);
            label_end = x + 1.0 + (double)n * 6.0;
        }
        for (k = i; k < j; k++) {
            const ipup_op *o = &t->ops[k];
            double c = ipup_sched_op_cost(g->c, o), yy = y + 30.0 + IPUP__SVG_ROWH * (double)o->device;
            char tok[48], mb[16];
            int nm = ipup_snprintf(mb, sizeof mb, "%d", (int)o->mb);
            ipup_sched_op_str(o, tok, sizeof tok);
            ipup__wf(w,
                     "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"white\"><title>%s step "
                     "%d</title></rect>",
                     x, yy + 2.0, c * g->unit, IPUP__SVG_ROWH - 4.0, ipup__svg_fill[(o->kind - 1) & 3], tok, (int)o->step + 1);
            if (c * g->unit >= (double)nm * IPUP__SVG_CW + 4.0)
                ipup__wf(w, "<text x=\"%.1f\" y=\"%.1f\" fill=\"white\">%s</text>", x + 2.5, yy + 17.0, mb);
            ipup__ws(w, "\n");
        }
        now += ipup__step_cost(t, g->c, i, j);
        i = j;
    }
}

static IPUP__UNUSED void ipup__svg_legend(ipup__w *w, const ipup__svg *g) {
    double x = 8.0, y = IPUP__SVG_TOP + g->band_h * (double)g->bands;
    int k;
    for (k = 0; k < 9; k++) {
        const char *nm, *fl;
        if (!ipup__svg_legend_item(g, k, &nm, &fl)) continue;
        if (x + ipup__svg_item_w(nm) > g->W - 8.0 && x > 8.0) { y += 18.0; x = 8.0; }
        ipup__wf(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#999\" stroke-width=\"0.5\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, y, fl, x + 16.0, y + 10.0, nm);
        x += ipup__svg_item_w(nm);
    }
}

IPUPIPE_DEF int ipup_sched_write_svg_ex(const ipup_table *t, const ipup_sched_cost *cost, const ipup_sched_figures *fig,
                                        const ipup_sched_svg_opts *opts, ipup_write_fn write, void *user) {
    ipup_sched_cost dc = ipup_sched_cost_default();
    ipup__svg g;
    ipup__w w;
    int32_t i = 0, b;
    double bs = 0.0;
    if (ipup__table_shape(t, NULL, 0) || !write) return IPUP_ERR_ARG;
    IPUPIPE_MEMSET(&g, 0, sizeof g);
    g.t = t; g.c = cost ? cost : &dc; g.fig = fig;
    if (!ipup__svg_cost_ok(g.c, t->stages)) return IPUP_ERR_ARG;
    ipup__svg_layout(&g, opts);
    ipup__winit(&w, write, user);
    ipup__wf(&w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"monospace\" font-size=\"11\">\n",
             g.W, g.H);
    ipup__ws(&w, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"8\" y=\"20\" font-size=\"13\" font-weight=\"bold\">");
    ipup__svg_text(&w, g.title);
    ipup__ws(&w, "</text>\n");
    for (b = 0; b < g.bands && !w.err; b++) {
        double be, y = IPUP__SVG_TOP + g.band_h * (double)b;
        int32_t end = ipup__svg_band(&g, i, bs, &be);
        ipup__svg_band_bg(&w, &g, y, bs, be, end >= t->n_ops && !t->forward_only);
        ipup__svg_band_ops(&w, &g, y, bs, i, end);
        if (g.timed) ipup__svg_axis(&w, &g, y + 30.0 + IPUP__SVG_ROWH * (double)t->devices + 2.0, bs, be);
        i = end;
        bs = be;
    }
    ipup__svg_legend(&w, &g);
    ipup__ws(&w, "</svg>\n");
    return ipup__wend(&w);
}

IPUPIPE_DEF int ipup_sched_write_svg(const ipup_table *t, const ipup_sched_cost *cost, const ipup_sched_figures *fig,
                                     ipup_write_fn write, void *user) {
    return ipup_sched_write_svg_ex(t, cost, fig, NULL, write, user);
}

static IPUP__UNUSED void ipup__wjson_str(ipup__w *w, const char *s) {
    ipup__ws(w, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { char e[2]; e[0] = '\\'; e[1] = (char)c; ipup__wput(w, e, 2); }
        else if (c == '\n') ipup__ws(w, "\\n");
        else if (c < 0x20) ipup__wf(w, "\\u%04x", c);
        else ipup__wput(w, (const char *)&c, 1);
    }
    ipup__ws(w, "\"");
}

static void ipup__json_conc(ipup__w *w, const ipup_table *t, const ipup_sched_figures *fig); /* §9 */

IPUPIPE_DEF int ipup_sched_write_json(const ipup_table *t, const ipup_sched_figures *fig, const char *schedule,
                                      const char *warnings, ipup_write_fn write, void *user) {
    ipup__w w;
    int32_t s;
    if (ipup__table_shape(t, NULL, 0) || !fig || !write) return IPUP_ERR_ARG;
    ipup__winit(&w, write, user);
    ipup__ws(&w, "{\"schedule\":");
    ipup__wjson_str(&w, schedule ? schedule : "table");
    ipup__wf(&w, ",\"stages\":%d,\"microbatches\":%d,\"devices\":%d,\"steps\":%d,\"ops\":%d", (int)t->stages, (int)t->microbatches,
             (int)t->devices, (int)t->steps, (int)t->n_ops);
    ipup__wf(&w, ",\"stage_device\":[");
    for (s = 0; s < t->stages; s++) ipup__wf(&w, "%s%d", s ? "," : "", (int)t->stage_device[s]);
    ipup__wf(&w, "],\"split_backward\":%s", t->split_backward ? "true" : "false");
    if (t->forward_only) /* forward-only block (docs/schedules.md §8) */
        ipup__wf(&w, ",\"forward_only\":true,\"latency\":%.6g,\"latency_steps\":%d,\"throughput\":%.6g", fig->fwd_latency,
                 (int)fig->fwd_latency_steps, fig->fwd_throughput);
    ipup__wf(&w, ",\"unit_utilisation\":%.6g,\"work\":%.6g,\"bsp_time\":%.6g,\"async_time\":%.6g", fig->unit_utilisation, fig->work,
             fig->bsp_time, fig->async_time);
    ipup__wf(&w, ",\"bubble_fraction\":%.6g,\"bubble_fraction_async\":%.6g", fig->bubble_bsp, fig->bubble_async);
    ipup__ws(&w, ",\"peak_inflight\":[");
    for (s = 0; s < t->stages; s++) ipup__wf(&w, "%s%d", s ? "," : "", (int)fig->peak_inflight[s]);
    ipup__ws(&w, "],\"stash_bytes\":[");
    for (s = 0; s < t->stages; s++) ipup__wf(&w, "%s%lld", s ? "," : "", (long long)fig->stash_bytes[s]);
    ipup__wf(&w, "],\"stash_bytes_total\":%lld", (long long)fig->stash_total);
    ipup__wf(&w, ",\"first_microbatch_done\":%d", (int)fig->first_mb_done);
    ipup__wf(&w, ",\"phases\":{\"ramp_up\":[%d,%d],\"main\":[%d,%d],\"ramp_down\":[%d,%d]}", (int)fig->ramp_up[0], (int)fig->ramp_up[1],
             (int)fig->main_phase[0], (int)fig->main_phase[1], (int)fig->ramp_down[0], (int)fig->ramp_down[1]);
    if (t->concurrent) ipup__json_conc(&w, t, fig); /* §9: only for a table with concurrent stages */
    ipup__wf(&w, ",\"in_order\":%s,\"warnings\":[", fig->in_order ? "true" : "false");
    if (warnings) {
        const char *p = warnings;
        int firstw = 1;
        while (*p) {
            const char *e = ipup__strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : ipup__strlen(p);
            if (n > 0) {
                char line[1024];
                if (n >= sizeof line) n = sizeof line - 1;
                IPUPIPE_MEMCPY(line, p, n);
                line[n] = '\0';
                if (!firstw) ipup__ws(&w, ",");
                ipup__wjson_str(&w, line);
                firstw = 0;
            }
            p += e ? (size_t)(e - p) + 1 : ipup__strlen(p);
        }
    }
    ipup__ws(&w, "]}\n");
    return ipup__wend(&w);
}


/* ---- CSV (PyTorch compute-only format) ---- */
#define IPUP__CSV_MAX_CELL 128     /* longest cell accepted, in characters */
#define IPUP__CSV_MAX_COLS (1 << 26) /* cells per row */

static int ipup__csv_branch(const char *p, size_t n, size_t i, int *br); /* §9 */
static void ipup__csv_branches(ipup_table *t);

/* Parse one compute token "<stage><F|B|I|W><mb>" in p[0..n), with an optional branch
   suffix ".<b>" (docs/schedules.md §9) into *br (b + 1, else 0). 0 when fine. */
static IPUP__UNUSED int ipup__csv_token(const char *p, size_t n, int32_t *stage, int *kind, int32_t *mb, int *br) {
    size_t i = 0, nd;
    int64_t v;
    for (v = 0, nd = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++, nd++) {
        if (nd >= 9) return -1;
        v = v * 10 + (p[i] - '0');
    }
    if (nd == 0 || i >= n) return -1;
    *stage = (int32_t)v;
    switch (p[i]) {
    case 'F': *kind = IPUP_OP_F; break;
    case 'B': *kind = IPUP_OP_B; break;
    case 'I': *kind = IPUP_OP_I; break;
    case 'W': *kind = IPUP_OP_W; break;
    default: return -1;
    }
    for (i++, v = 0, nd = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++, nd++) {
        if (nd >= 9) return -1;
        v = v * 10 + (p[i] - '0');
    }
    if (nd == 0 || ipup__csv_branch(p, n, i, br)) return -1;
    *mb = (int32_t)v;
    return 0;
}

typedef struct ipup__csv_ctx {
    int32_t rows, max_stage, max_mb, n_ops, steps;
    ipup_op *ops; /* NULL on the scan pass */
    int32_t cap;
} ipup__csv_ctx;

static IPUP__UNUSED void ipup__csv_show(char *dst, size_t dlen, const char *p, size_t n) {
    size_t i, k = 0;
    for (i = 0; i < n && k + 4 < dlen && i < 40; i++) {
        unsigned char c = (unsigned char)p[i];
        dst[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (i < n && k + 4 < dlen) { dst[k++] = '.'; dst[k++] = '.'; dst[k++] = '.'; }
    dst[k] = '\0';
}

/* add one op found in row r, cell c (1-based in messages) */
static IPUP__UNUSED int ipup__csv_add(ipup__csv_ctx *x, const char *p, size_t n, int32_t r, int32_t c, int sub, char *msg,
                                          size_t msg_len) {
    int32_t st, mb;
    int k, br;
    char show[64];
    if (ipup__csv_token(p, n, &st, &k, &mb, &br)) {
        ipup__csv_show(show, sizeof show, p, n);
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                         "CSV row %d, column %d: '%s' is not a compute action <stage><F|B|I|W><micro-batch> such as 0F3 "
                         "(the compute-only format has no communication actions; stage and micro-batch have at most 9 digits; "
                         "a branch of a concurrent stage adds .0 to .%d, e.g. 1F3.1)",
                         (int)(r + 1), (int)(c + 1), show, IPUP_SCHED_MAX_BRANCHES - 1);
    }
    if (st >= IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV row %d, column %d: stage %d is beyond the maximum %d (IPUP_SCHED_MAX_STAGES)",
                         (int)(r + 1), (int)(c + 1), (int)st, IPUP_SCHED_MAX_STAGES - 1);
    if (mb >= IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV row %d, column %d: micro-batch %d is beyond the maximum %d", (int)(r + 1),
                         (int)(c + 1), (int)mb, IPUP_SCHED_MAX_MICROBATCHES - 1);
    if (x->n_ops >= 0x3fffffff) return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV: too many ops");
    if (x->ops) {
        ipup_op *o;
        if (x->n_ops >= x->cap)
            return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY, "CSV: more ops than the ops array holds (%d)", (int)x->cap);
        o = &x->ops[x->n_ops];
        o->step = c; o->mb = mb; o->stage = (int16_t)st; o->device = (int16_t)r; o->kind = (int8_t)k;
        o->overlap_index = (int8_t)sub; o->branch_plus1 = (int8_t)br; o->reserved_ = 0;
    }
    x->n_ops++;
    if (st > x->max_stage) x->max_stage = st;
    if (mb > x->max_mb) x->max_mb = mb;
    if (c + 1 > x->steps) x->steps = c + 1;
    return 0;
}

static IPUP__UNUSED int ipup__csv_parse(const char *text, size_t text_len, ipup__csv_ctx *x, char *msg, size_t msg_len) {
    size_t pos = 0;
    int rc;
    x->rows = 0; x->max_stage = -1; x->max_mb = -1; x->n_ops = 0; x->steps = 0;
    if (!text) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "CSV text is NULL");
    if (text_len > ((size_t)1 << 31)) return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV: text longer than 2 GiB");
    while (pos < text_len) {
        size_t end = pos, cs;
        int32_t r = x->rows, c = 0;
        while (end < text_len && text[end] != '\n') end++;
        if (r >= IPUP_SCHED_MAX_STAGES)
            return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV: more than %d rows (one row per device)", IPUP_SCHED_MAX_STAGES);
        cs = pos;
        for (;;) { /* cells of this row */
            size_t ce = cs, a, b;
            while (ce < end && text[ce] != ',') ce++;
            a = cs; b = ce;
            while (a < b && (text[a] == ' ' || text[a] == '\t')) a++;
            while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r')) b--;
            if (b - a > IPUP__CSV_MAX_CELL)
                return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV row %d, column %d: cell longer than %d characters", (int)(r + 1),
                                 (int)(c + 1), IPUP__CSV_MAX_CELL);
            if (b > a) {
                if (text[a] == '(') {
                    /* "(0F7;7B3)OVERLAP_F_B": two ops in one slot */
                    size_t close = a, q, sub = 0;
                    static const char suffix[] = "OVERLAP_F_B";
                    char show[64];
                    while (close < b && text[close] != ')') close++;
                    if (close >= b || b - close - 1 != sizeof suffix - 1 || !ipup__memeq(text + close + 1, suffix, sizeof suffix - 1)) {
                        ipup__csv_show(show, sizeof show, text + a, b - a);
                        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                                         "CSV row %d, column %d: '%s' is not an overlap cell of the form (0F7;7B3)OVERLAP_F_B",
                                         (int)(r + 1), (int)(c + 1), show);
                    }
                    q = a + 1;
                    while (q <= close) {
                        size_t e = q;
                        while (e < close && text[e] != ';') e++;
                        if (sub >= 4)
                            return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV row %d, column %d: more than 4 ops in one overlap cell",
                                             (int)(r + 1), (int)(c + 1));
                        rc = ipup__csv_add(x, text + q, e - q, r, c, (int)sub, msg, msg_len);
                        if (rc) return rc;
                        sub++;
                        q = e + 1;
                    }
                } else {
                    rc = ipup__csv_add(x, text + a, b - a, r, c, 0, msg, msg_len);
                    if (rc) return rc;
                }
            }
            if (ce >= end) break;
            cs = ce + 1;
            if (++c >= IPUP__CSV_MAX_COLS)
                return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV row %d: more than %d cells", (int)(r + 1), IPUP__CSV_MAX_COLS);
        }
        x->rows++;
        pos = end + 1; /* a final newline does not start another row */
    }
    if (x->rows == 0 || x->n_ops == 0)
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV: no ops found (expected rows of cells such as 0F0,,0F1,0B0)");
    return 0;
}

IPUPIPE_DEF int ipup_sched_csv_scan(const char *text, size_t text_len, int32_t *stages, int32_t *microbatches,
                                                         int32_t *devices, int32_t *n_ops, char *msg, size_t msg_len) {
    ipup__csv_ctx x;
    int rc;
    if (msg && msg_len) msg[0] = '\0';
    IPUPIPE_MEMSET(&x, 0, sizeof x);
    rc = ipup__csv_parse(text, text_len, &x, msg, msg_len);
    if (rc) return rc;
    if (stages) *stages = x.max_stage + 1;
    if (microbatches) *microbatches = x.max_mb + 1;
    if (devices) *devices = x.rows;
    if (n_ops) *n_ops = x.n_ops;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_sched_csv_load(const char *text, size_t text_len, ipup_op *ops, int32_t cap_ops, void *work,
                                                         size_t work_bytes, ipup_table *out, char *msg, size_t msg_len) {
    ipup__csv_ctx x;
    int32_t S, M, i, s;
    uint8_t *hasW;
    int64_t SM;
    int rc;
    if (msg && msg_len) msg[0] = '\0';
    if (!out) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "csv_load: out is NULL");
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    for (s = 0; s < IPUP_SCHED_MAX_STAGES; s++) out->stage_device[s] = -1;
    IPUPIPE_MEMSET(&x, 0, sizeof x);
    rc = ipup__csv_parse(text, text_len, &x, msg, msg_len); /* sizes first */
    if (rc) return rc;
    S = x.max_stage + 1;
    M = x.max_mb + 1;
    if (!ops || cap_ops < x.n_ops)
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY, "csv_load: the CSV has %d ops but the ops array holds %d", (int)x.n_ops,
                         ops ? (int)cap_ops : 0);
    if (!work || ((uintptr_t)work & 7u) || work_bytes < IPUP_SCHED_WORK_BYTES(S, M))
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY, "csv_load: work must be 8-byte aligned and hold IPUP_SCHED_WORK_BYTES(%d, %d) = %lld bytes",
                         (int)S, (int)M, (long long)IPUP_SCHED_WORK_BYTES(S, M));
    x.ops = ops;
    x.cap = cap_ops;
    rc = ipup__csv_parse(text, text_len, &x, msg, msg_len);
    if (rc) return rc;
    SM = (int64_t)S * M;
    hasW = (uint8_t *)work;
    IPUPIPE_MEMSET(hasW, 0, (size_t)SM);
    for (i = 0; i < x.n_ops; i++) {
        const ipup_op *o = &ops[i];
        if (o->kind == IPUP_OP_W) hasW[(int64_t)o->mb * S + o->stage] = 1;
        if (out->stage_device[o->stage] < 0) out->stage_device[o->stage] = o->device; /* first appearance, row-major */
    }
    for (i = 0; i < x.n_ops; i++) {
        ipup_op *o = &ops[i];
        /* older notation: B followed by W of the same stage and micro-batch = input gradient */
        if (o->kind == IPUP_OP_B && hasW[(int64_t)o->mb * S + o->stage]) o->kind = IPUP_OP_I;
        if (o->kind == IPUP_OP_I || o->kind == IPUP_OP_W) out->split_backward = 1;
    }
    out->forward_only = x.n_ops > 0; /* a CSV of F ops only is a forward-only table (§8) */
    for (i = 0; i < x.n_ops; i++) if (ops[i].kind != IPUP_OP_F) out->forward_only = 0;
    out->stages = S;
    out->microbatches = M;
    out->devices = x.rows;
    out->steps = x.steps;
    out->n_ops = x.n_ops;
    out->cap_ops = cap_ops;
    out->ops = ops;
    ipup__csv_branches(out); /* §9, before the sort: first appearance row by row */
    ipup_sched_sort(out);
    return IPUP_OK;
}

/* ---- respace ---- */
IPUPIPE_DEF int ipup_sched_respace(ipup_table *t, void *work, size_t work_bytes, char *msg, size_t msg_len) {
    int32_t beg[IPUP_SCHED_MAX_STAGES + 1], cur[IPUP_SCHED_MAX_STAGES], pick[IPUP_SCHED_MAX_STAGES];
    int32_t *idx, *stF, *stG, *stW;
    int32_t S, M, P, n, i, d, tt = 0, placed = 0;
    int64_t SM;
    int rc;
    char a[80], b[80];
    if (msg && msg_len) msg[0] = '\0';
    rc = ipup__table_shape(t, msg, msg_len);
    if (rc) return rc;
    if (t->concurrent) /* §9 */
        return ipup__err(msg, msg_len, IPUP_ERR_UNSUPPORTED, "respace: the table has concurrent stages (branch suffixes such as "
                         "1F3.1), whose branches must share a step; respace reads per-device orders and cannot keep them "
                         "together: write the table in lock-step columns instead");
    if (!ipup__work_ok(t, work, work_bytes))
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY, "respace: work must be 8-byte aligned and hold IPUP_SCHED_WORK_BYTES(%d, %d) bytes",
                         (int)t->stages, (int)t->microbatches);
    S = t->stages; M = t->microbatches; P = t->devices; n = t->n_ops;
    SM = (int64_t)S * M;
    if ((int64_t)n > 3 * SM)
        return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE, "respace: %d ops is more than 3 x S x M = %lld: some op appears twice",
                         (int)n, (long long)(3 * SM));
    ipup_sched_sort(t);
    idx = (int32_t *)work;
    stF = idx + n;
    stG = stF + SM;
    stW = stG + SM;
    for (i = 0; i < SM; i++) stF[i] = stG[i] = stW[i] = -1;
    for (d = 0; d <= P; d++) beg[d] = 0;
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->device < 0 || o->device >= P || o->stage < 0 || o->stage >= S || o->mb < 0 || o->mb >= M || o->kind < 1 || o->kind > 4)
            return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE, "respace: op %d is out of range (stage %d, micro-batch %d, device %d)",
                             (int)i, (int)o->stage, (int)o->mb, (int)o->device);
        beg[o->device + 1]++;
    }
    for (d = 0; d < P; d++) beg[d + 1] += beg[d];
    for (d = 0; d < P; d++) cur[d] = beg[d];
    for (i = 0; i < n; i++) idx[cur[t->ops[i].device]++] = i; /* each device's ops in table order */
    for (d = 0; d < P; d++) cur[d] = beg[d];
    while (placed < n) {
        int any = 0;
        for (d = 0; d < P; d++) {
            const ipup_op *o;
            int64_t x;
            int ok;
            pick[d] = -1;
            if (cur[d] >= beg[d + 1]) continue;
            o = &t->ops[idx[cur[d]]];
            x = (int64_t)o->mb * S + o->stage;
#define IPUP__DONE(v) ((v) >= 0 && (v) < tt)
            if (o->kind == IPUP_OP_F) ok = o->stage == 0 || IPUP__DONE(stF[x - 1]);
            else if (o->kind == IPUP_OP_W) ok = IPUP__DONE(stG[x]);
            else ok = IPUP__DONE(stF[x]) && (o->stage == S - 1 || IPUP__DONE(stG[x + 1]));
#undef IPUP__DONE
            if (ok) { pick[d] = idx[cur[d]]; any = 1; }
        }
        if (!any) {
            for (d = 0; d < P; d++) {
                const ipup_op *o;
                int64_t x;
                int dk;
                int32_t ds;
                if (cur[d] >= beg[d + 1]) continue;
                o = &t->ops[idx[cur[d]]];
                x = (int64_t)o->mb * S + o->stage;
                if (o->kind == IPUP_OP_F) { dk = IPUP_OP_F; ds = o->stage - 1; }
                else if (o->kind == IPUP_OP_W) { dk = IPUP_OP_I; ds = o->stage; }
                else if (stF[x] < 0) { dk = IPUP_OP_F; ds = o->stage; }
                else { dk = IPUP_OP_B; ds = o->stage + 1; }
                return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE,
                                 "respace: the per-device orders deadlock at step %d: device %d waits to run %s, which needs %s "
                                 "(missing, or queued behind another waiting op); reorder the rows",
                                 (int)tt + 1, (int)d, ipup__op_desc(a, sizeof a, o->kind, o->stage, o->mb),
                                 ipup__op_desc(b, sizeof b, dk, ds, o->mb));
            }
        }
        for (d = 0; d < P; d++) {
            ipup_op *o;
            int32_t *slot;
            int64_t x;
            if (pick[d] < 0) continue;
            o = &t->ops[pick[d]];
            x = (int64_t)o->mb * S + o->stage;
            slot = o->kind == IPUP_OP_F ? stF : o->kind == IPUP_OP_W ? stW : stG;
            if (slot[x] >= 0)
                return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE, "respace: %s appears twice (device %d); remove one",
                                 ipup__op_desc(a, sizeof a, o->kind, o->stage, o->mb), (int)o->device);
            slot[x] = tt;
            o->step = tt;
            o->overlap_index = 0;
            cur[d]++;
            placed++;
        }
        tt++;
    }
    t->steps = tt;
    ipup_sched_sort(t);
    return IPUP_OK;
}


/* ---- forward-only tables (inference; docs/schedules.md §8) ----
   F ops only: every F(s,m) once, F(s,m) after F(s-1,m), one op per device per step, each
   stage's forwards in increasing m. Placement: sequential one op at a time (F(s,m) at
   step m*S + s, no overlap: sharding); every other kind list-scheduled step by step, each
   device running its ready forward of lowest rank (ipup__fwd_key). With one stage per
   device that is F(s,m) at step s+m: the fill of grouped and gpipe, and what 1F1B's
   warm-up becomes when no backward ever comes; interleaved-1f1b ranks by Megatron's
   forward order (chunks in groups of P micro-batches). Graphcore's interleaved alternates
   forward and backward steps and zb-h1 splits the backward: neither has a forward-only
   form. */
static int64_t ipup__fwd_key(const ipup__gen *g, int32_t s, int32_t m) {
    if (g->kind == IPUP_SCHED_INTERLEAVED_1F1B && g->V > 1) {
        int32_t P = g->P, base = m / P * P, gs = g->M - base < P ? g->M - base : P;
        return (int64_t)(m / P) * P * g->V + (int64_t)(s / P) * gs + (m - base);
    }
    return ((int64_t)s + m) * g->S + (g->S - 1 - s); /* the older micro-batch first on a tie */
}

static void ipup__fwd_place(ipup__gen *g) {
    int32_t nF[IPUP_SCHED_MAX_STAGES], pick[IPUP_SCHED_MAX_STAGES], s, d, m;
    int64_t done = 0, total = (int64_t)g->S * g->M;
    if (g->kind == IPUP_SCHED_SEQUENTIAL) {
        for (m = 0; m < g->M; m++)
            for (s = 0; s < g->S; s++) { ipup__emit(g, g->map[s], s, m, IPUP_OP_F); g->t++; }
        return;
    }
    for (s = 0; s < g->S; s++) nF[s] = 0;
    while (done < total) { /* every step runs at least the oldest ready forward: no deadlock */
        for (d = 0; d < g->P; d++) {
            int64_t best = -1, key;
            pick[d] = -1;
            for (s = g->first[d]; s >= 0; s = g->next[s]) {
                m = nF[s];
                if (m >= g->M || (s > 0 && nF[s - 1] <= m)) continue;
                key = ipup__fwd_key(g, s, m);
                if (pick[d] < 0 || key < best) { pick[d] = s; best = key; }
            }
        }
        for (d = 0; d < g->P; d++) {
            if (pick[d] < 0) continue;
            ipup__emit(g, d, pick[d], nF[pick[d]], IPUP_OP_F);
            nF[pick[d]]++;
            done++;
        }
        g->t++;
    }
}

static int ipup__fwd_generate(ipup__gen *g, const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops, ipup_table *out,
                              int *nwarn, char *msg, size_t msg_len) {
    const char *kname = ipup__kind_names[g->kind];
    char e[300], w[300];
    int32_t s, need;
    int rc;
    if (g->kind == IPUP_SCHED_INTERLEAVED || g->kind == IPUP_SCHED_ZBH1) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s has no forward-only form: %s; for inference use grouped (Graphcore's pipelined inference), "
                         "gpipe, 1f1b, sequential or interleaved-1f1b",
                         kname, g->kind == IPUP_SCHED_ZBH1 ? "its rule splits the backward into I and W, and inference has no backward"
                                                           : "it alternates forward and backward steps, and inference has no backward");
    }
    if ((g->kind == IPUP_SCHED_GROUPED || g->kind == IPUP_SCHED_SEQUENTIAL) && !ipup__is_pow2(g->P)) {
        ipup_snprintf(e, sizeof e, "%s: the model uses %d IPUs, but multi-IPU devices come in powers of two (1, 2, 4, 8, 16, 32, 64); "
                      "map the stages onto %d IPUs", kname, (int)g->P, (int)ipup__pow2_ceil(g->P));
        ipup_snprintf(w, sizeof w, "%s: %d IPUs is not a power of two; Graphcore multi-IPU devices come in 1, 2, 4, 8, 16, 32 or 64 IPUs "
                      "(an error under strict)", kname, (int)g->P);
        if ((rc = ipup__gen_rule(cfg->strict, nwarn, msg, msg_len, e, w)) != IPUP_OK) return rc;
    }
    need = g->S * g->M; /* S <= 256, M <= 2^22: no overflow */
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s (forward only): the table needs %d ops but the ops array holds %d; size it with S x M = %d ops "
                         "(IPUP_SCHED_MAX_OPS(%d, %d) is enough)",
                         kname, (int)need, ops ? (int)cap_ops : 0, (int)need, (int)g->S, (int)g->M);
    }
    g->ops = ops;
    ipup__fwd_place(g);
    out->stages = g->S; out->microbatches = g->M; out->devices = g->P; out->steps = g->t;
    out->n_ops = g->n; out->cap_ops = cap_ops; out->ops = ops;
    out->split_backward = 0;
    out->forward_only = 1;
    for (s = 0; s < g->S; s++) out->stage_device[s] = g->map[s];
    ipup__gen_fill_warning(out, g->kind, nwarn, msg, msg_len);
    return IPUP_OK;
}

/* rule 1 of a forward-only table: only F ops appear */
static int ipup__fwd_ver_kind(ipup__ver *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    if (!v->t->forward_only || o->kind == IPUP_OP_F) return IPUP_OK;
    ipup__ver_op(v, 1, i);
    return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                     "rule 1 (nothing else appears): device %d, step %d: %s in a forward-only table (inference runs no "
                     "backward); remove it, or make it a training table with every backward",
                     (int)o->device, (int)o->step + 1, v->a);
}
/* rule 1 of a forward-only table: every F(s,m) present */
static int ipup__fwd_ver_complete(ipup__ver *v) {
    int32_t s, m;
    for (m = 0; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            ipup_sched_verify_info *in = v->info;
            int32_t home = v->t->stage_device[s];
            if (v->stF[(int64_t)m * v->S + s] >= 0) continue;
            in->rule = 1; in->op_index = -1; in->step = -1; in->device = home;
            in->stage = s; in->mb = m; in->kind = IPUP_OP_F;
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "rule 1 (every op once): %s is missing from the forward-only table (stage %d lives on device %d); "
                             "add it to a free step of device %d%s",
                             ipup__op_desc(v->a, sizeof v->a, IPUP_OP_F, s, m), (int)s, (int)home, (int)home,
                             s > 0 ? " after the previous stage's forward" : "");
        }
    return IPUP_OK;
}

/* in-flight inputs per stage (the doc of ipup_sched_figures): in each step the inputs it
   makes (F(s-1,m) for stage s, and the feed of F(0,m)) join first, then the ones its
   forwards consume leave */
static int ipup__fwd_inflight(const ipup_table *t, int32_t *peak) {
    int32_t live[IPUP_SCHED_MAX_STAGES], S = t->stages, i = 0, j, k, s;
    for (s = 0; s < S; s++) live[s] = peak[s] = 0;
    for (k = 0; k < t->n_ops; k++)
        if (t->ops[k].stage < 0 || t->ops[k].stage >= S || t->ops[k].kind != IPUP_OP_F || (k > 0 && t->ops[k].step < t->ops[k - 1].step))
            return IPUP_ERR_INVALID_TABLE;
    while (i < t->n_ops) {
        j = ipup__step_end(t, i);
        for (k = i; k < j; k++) {
            s = t->ops[k].stage;
            if (s == 0 && ++live[0] > peak[0]) peak[0] = live[0];
            if (s + 1 < S && ++live[s + 1] > peak[s + 1]) peak[s + 1] = live[s + 1];
        }
        for (k = i; k < j; k++) live[t->ops[k].stage]--;
        i = j;
    }
    return IPUP_OK;
}

/* the longest latency in steps (from the step of F(0,m) to that of F(S-1,m), both
   counted); first: scratch of S*M doubles */
static void ipup__fwd_steps(const ipup_table *t, double *first, ipup_sched_figures *out) {
    int32_t S = t->stages, k;
    for (k = 0; k < t->n_ops; k++) {
        const ipup_op *o = &t->ops[k];
        int64_t x0 = (int64_t)o->mb * S;
        if (o->stage == 0) first[x0] = (double)o->step;
        if (o->stage == S - 1 && o->step - (int32_t)first[x0] + 1 > out->fwd_latency_steps)
            out->fwd_latency_steps = o->step - (int32_t)first[x0] + 1;
    }
}

/* latency, throughput and in-flight inputs of a forward-only table under BSP timing (the
   lock step of measure's bsp_time: a step lasts its slowest op, plus exchange when a
   value crosses devices, plus sync); start0: scratch of S*M doubles (the BSP start of each
   F(0,m), at m*S) */
static void ipup__fwd_measure(const ipup_table *t, const ipup_sched_cost *c, const int64_t *act_bytes, const double *finF,
                              double *start0, ipup_sched_figures *out) {
    int32_t S = t->stages, M = t->microbatches, i = 0, j, k, s;
    double now = 0.0, first_end = 0.0, last_end = 0.0;
    (void)finF; /* the async ends: the figures are BSP's, as the IPU runs */
    out->fwd_latency = 0.0;
    out->fwd_latency_steps = 0;
    while (i < t->n_ops) {
        double mx = 0.0, end;
        int cross = 0;
        j = ipup__step_end(t, i);
        for (k = i; k < j; k++) {
            double oc = ipup_sched_op_cost(c, &t->ops[k]);
            if (oc > mx) mx = oc;
            if (ipup__crosses(t, &t->ops[k])) cross = 1;
        }
        end = now + mx + (cross ? c->exchange : 0.0) + c->sync;
        for (k = i; k < j; k++) {
            const ipup_op *o = &t->ops[k];
            int64_t x0 = (int64_t)o->mb * S;
            if (o->stage == 0) start0[x0] = now;
            if (o->stage != S - 1) continue;
            if (end - start0[x0] > out->fwd_latency) out->fwd_latency = end - start0[x0];
            if (o->mb == 0) first_end = end;
            if (o->mb == M - 1) last_end = end;
        }
        now = end;
        i = j;
    }
    ipup__fwd_steps(t, start0, out);
    if (M > 1 && last_end > first_end) out->fwd_throughput = (double)(M - 1) / (last_end - first_end);
    else out->fwd_throughput = out->fwd_latency > 0.0 ? 1.0 / out->fwd_latency : 0.0;
    ipup__fwd_inflight(t, out->peak_inflight);
    out->stash_total = 0;
    for (s = 0; s < S; s++) {
        out->stash_bytes[s] = (int64_t)out->peak_inflight[s] * (act_bytes ? act_bytes[s] : 0);
        out->stash_total += out->stash_bytes[s];
    }
}

/* ==== concurrent pipeline stages (docs/schedules.md §9) ====
   The mapping parser, the serialised mapping, the generator of concurrent tables
   (gang list scheduling: every branch of an op in one step), and the verifier's
   branch rules. Kept in one block; the rest of the header calls in at a few marked
   places (generate, verify, measure, CSV). */

/* parser state: the text, the position, the stage being read */
typedef struct ipup__mp {
    const char *s;
    size_t i;
    char *msg;
    size_t msg_len;
    ipup_stage_map *out;
} ipup__mp;

static IPUP__UNUSED void ipup__mp_blank(ipup__mp *p) {
    while (p->s[p->i] == ' ' || p->s[p->i] == '\t') p->i++;
}

/* what the character at the position is, for messages */
static IPUP__UNUSED const char *ipup__mp_what(const ipup__mp *p, char *buf, size_t len) {
    char c = p->s[p->i];
    if (c == '\0') return "the end of the text";
    if ((unsigned char)c < 32 || (unsigned char)c > 126) ipup_snprintf(buf, len, "byte 0x%02x", (unsigned)(unsigned char)c);
    else ipup_snprintf(buf, len, "'%c'", c);
    return buf;
}

/* one device number of stage st at the position (after blanks) */
static IPUP__UNUSED int ipup__mp_num(ipup__mp *p, int32_t st, int32_t *dev) {
    char w[16];
    int32_t v = 0;
    size_t start;
    ipup__mp_blank(p);
    start = p->i;
    if (p->s[p->i] == '[')
        return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                         "mapping: '[' at character %d is inside the bracket of stage %d; brackets do not nest (a "
                         "concurrent stage lists its devices once, e.g. 0,[1,2],3)",
                         (int)p->i + 1, (int)st);
    if (p->s[p->i] == ',' || p->s[p->i] == ']' || p->s[p->i] == '\0')
        return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                         "mapping: stage %d has an empty device at character %d (found %s where a device number "
                         "belongs); give one device number per stage, e.g. 0,1,2 or 0,[1,2],3",
                         (int)st, (int)p->i + 1, ipup__mp_what(p, w, sizeof w));
    while (p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        if (v < 100000) v = v * 10 + (p->s[p->i] - '0');
        p->i++;
    }
    if (p->i == start)
        return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                         "mapping: %s at character %d is not a device number (stage %d); devices are numbers 0..%d, "
                         "e.g. 0,1,2 or 0,[1,2],3",
                         ipup__mp_what(p, w, sizeof w), (int)p->i + 1, (int)st, IPUP_SCHED_MAX_STAGES - 1);
    if (v >= IPUP_SCHED_MAX_STAGES)
        return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                         "mapping: device %.12s of stage %d (character %d) is out of range; devices are 0..%d", p->s + start,
                         (int)st, (int)start + 1, IPUP_SCHED_MAX_STAGES - 1);
    *dev = v;
    ipup__mp_blank(p);
    return IPUP_OK;
}

/* a bracket "[a,b,...]" of stage st, the position on the '[' */
static IPUP__UNUSED int ipup__mp_bracket(ipup__mp *p, int32_t st) {
    size_t open = p->i;
    int32_t n = 0, k, d;
    int rc;
    char w[16];
    p->i++;
    for (;;) {
        if ((rc = ipup__mp_num(p, st, &d)) != IPUP_OK) {
            if (p->s[p->i] == ']' && n == 0)
                return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                                 "mapping: stage %d is an empty bracket (character %d); list its devices, e.g. [1,2]",
                                 (int)st, (int)open + 1);
            if (p->s[p->i] == '\0')
                return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                                 "mapping: the bracket of stage %d opened at character %d is not closed; add ']'", (int)st,
                                 (int)open + 1);
            return rc;
        }
        for (k = 0; k < n; k++)
            if (p->out->dev[st][k] == d)
                return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                                 "mapping: stage %d lists device %d twice; the branches of a concurrent stage run on "
                                 "distinct IPUs (e.g. [1,2])",
                                 (int)st, (int)d);
        if (n == IPUP_SCHED_MAX_BRANCHES)
            return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                             "mapping: stage %d lists more than %d devices (IPUP_SCHED_MAX_BRANCHES); split it over at "
                             "most %d IPUs or raise IPUP_SCHED_MAX_BRANCHES before the include",
                             (int)st, IPUP_SCHED_MAX_BRANCHES, IPUP_SCHED_MAX_BRANCHES);
        p->out->dev[st][n++] = (int16_t)d;
        if (p->s[p->i] == ']') break;
        if (p->s[p->i] != ',')
            return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                             p->s[p->i] == '\0' ? "mapping: the bracket of stage %d opened at character %d is not closed "
                                                  "(%s at character %d); add ']'"
                                                : "mapping: in the bracket of stage %d (opened at character %d), %s at "
                                                  "character %d; separate its devices with commas and close it with ']'",
                             (int)st, (int)open + 1, ipup__mp_what(p, w, sizeof w), (int)p->i + 1);
        p->i++;
    }
    p->i++;
    p->out->n_dev[st] = (int8_t)n;
    if (n > 1) p->out->concurrent = 1;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_sched_map_parse(const char *text, ipup_stage_map *out, char *msg, size_t msg_len) {
    ipup__mp p;
    int32_t st = 0, d;
    int rc;
    char w[16];
    if (msg && msg_len) msg[0] = '\0';
    if (!text || !out) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "ipup_sched_map_parse: text and out must not be NULL");
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    p.s = text; p.i = 0; p.msg = msg; p.msg_len = msg_len; p.out = out;
    ipup__mp_blank(&p);
    if (text[p.i] == '\0')
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                         "mapping is empty; give one device per stage, e.g. 0,1,2 or 0,[1,2],3 (a bracket: one stage on several IPUs)");
    for (;;) {
        if (st == IPUP_SCHED_MAX_STAGES)
            return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "mapping: more than %d stages (IPUP_SCHED_MAX_STAGES)",
                             IPUP_SCHED_MAX_STAGES);
        ipup__mp_blank(&p);
        if (text[p.i] == '[') {
            if ((rc = ipup__mp_bracket(&p, st)) != IPUP_OK) { out->stages = 0; return rc; }
            ipup__mp_blank(&p);
        } else {
            if (text[p.i] == ']')
                return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "mapping: ']' at character %d closes no bracket; open it "
                                 "with '[' (e.g. 0,[1,2],3)", (int)p.i + 1);
            if ((rc = ipup__mp_num(&p, st, &d)) != IPUP_OK) return rc;
            out->dev[st][0] = (int16_t)d;
            out->n_dev[st] = 1;
        }
        st++;
        if (text[p.i] == '\0') break;
        if (text[p.i] != ',')
            return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                             text[p.i] == ']' ? "mapping: %s at character %d closes no bracket; open it with '[' (e.g. 0,[1,2],3)"
                                              : "mapping: %s at character %d after stage %d; separate the stages with commas",
                             ipup__mp_what(&p, w, sizeof w), (int)p.i + 1, (int)st - 1);
        p.i++;
    }
    out->stages = st;
    return st;
}

IPUPIPE_DEF int ipup_sched_map_serialised(const ipup_stage_map *map, int16_t *stage_device, int32_t cap) {
    int32_t s, b, n = 0;
    if (!map || !stage_device || map->stages < 1 || map->stages > IPUP_SCHED_MAX_STAGES) return IPUP_ERR_ARG;
    for (s = 0; s < map->stages; s++)
        for (b = 0; b < map->n_dev[s]; b++) {
            if (n >= cap) return IPUP_ERR_CAPACITY;
            stage_device[n++] = map->dev[s][b];
        }
    return n;
}

IPUPIPE_DEF int32_t ipup_sched_map_lanes(const ipup_stage_map *map) {
    int32_t s, n = 0;
    if (!map) return 0;
    for (s = 0; s < map->stages && s < IPUP_SCHED_MAX_STAGES; s++) n += map->n_dev[s] > 0 ? map->n_dev[s] : 1;
    return n;
}

/* -- generate (docs/schedules.md §9) -- */

/* the concurrent mapping against the config: its kind, S, devices; fills g->map (branch
   0's device) and g->P */
static IPUP__UNUSED int ipup__conc_config(const ipup_sched_config *cfg, ipup__gen *g, int *nwarn, char *msg, size_t msg_len) {
    const ipup_stage_map *mp = cfg->concurrent;
    const char *kname = ipup__kind_names[g->kind];
    int32_t s, b, k, maxdev = -1, lim = cfg->devices > 0 ? cfg->devices : IPUP_SCHED_MAX_STAGES;
    uint8_t used[IPUP_SCHED_MAX_STAGES];
    if (g->kind == IPUP_SCHED_INTERLEAVED_1F1B || g->kind == IPUP_SCHED_ZBH1)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s does not take concurrent stages (a stage on several IPUs); use grouped, interleaved, "
                         "sequential, gpipe or 1f1b, or a mapping without brackets",
                         kname);
    if (cfg->stage_device)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: give the mapping once, either stage_device or concurrent (which also holds plain stages)", kname);
    if (mp->stages != g->S)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: the mapping has %d stages but S=%d; give one entry per stage", kname,
                         (int)mp->stages, (int)g->S);
    IPUPIPE_MEMSET(used, 0, sizeof used);
    for (s = 0; s < g->S; s++) {
        if (mp->n_dev[s] < 1 || mp->n_dev[s] > IPUP_SCHED_MAX_BRANCHES)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: stage %d has %d devices; a stage runs on 1..%d (IPUP_SCHED_MAX_BRANCHES)",
                             kname, (int)s, (int)mp->n_dev[s], IPUP_SCHED_MAX_BRANCHES);
        for (b = 0; b < mp->n_dev[s]; b++) {
            int32_t d = mp->dev[s][b];
            if (d < 0 || d >= lim)
                return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: branch %d of stage %d is mapped to device %d, but the devices are "
                                 "0..%d; fix the mapping or raise the device count", kname, (int)b, (int)s, (int)d, (int)(lim - 1));
            for (k = 0; k < b; k++)
                if (mp->dev[s][k] == d)
                    return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: stage %d lists device %d twice; its branches run on "
                                     "distinct devices", kname, (int)s, (int)d);
            used[d] = 1;
            if (d > maxdev) maxdev = d;
        }
        g->map[s] = mp->dev[s][0];
    }
    g->P = cfg->devices > 0 ? cfg->devices : maxdev + 1;
    g->V = 1;
    if (cfg->virtual_stages > 1)
        ipup__warn(msg, msg_len, nwarn, "%s: virtual stages V=%d ignored (only interleaved-1f1b uses them)", kname,
                   (int)cfg->virtual_stages);
    for (k = 0; k < g->P; k++)
        if (!used[k]) ipup__warn(msg, msg_len, nwarn, "%s: device %d runs no stage (idle for the whole step)", kname, (int)k);
    return IPUP_OK;
}

/* every branch of op (s, m, kind) at the current step, branch b on its device */
static IPUP__UNUSED void ipup__conc_emit(ipup__gen *g, const ipup_stage_map *mp, int32_t s, int32_t m, int kind) {
    int32_t b, n = mp->n_dev[s];
    for (b = 0; b < n; b++) {
        ipup__emit(g, mp->dev[s][b], s, m, kind);
        g->ops[g->n - 1].branch_plus1 = (int8_t)(n > 1 ? b + 1 : 0);
    }
}

/* the op each stage would run now, by the schedule's rank; 1 when there is one */
static IPUP__UNUSED int ipup__conc_cand(ipup__dyn *y, int32_t s, ipup__cand *c) {
    int ok = y->g->kind == IPUP_SCHED_1F1B ? ipup__rank_1f1b(y, s, c) : ipup__rank_closed(y, s, c);
    c->s = s;
    return ok;
}

/* one step of gang list scheduling: the ready ops in rank order, each placed when every
   device of its stage is free in this step; returns how many ops were placed */
static IPUP__UNUSED int32_t ipup__conc_step(ipup__gen *g, ipup__dyn *y, const ipup_stage_map *mp) {
    ipup__cand c[IPUP_SCHED_MAX_STAGES];
    uint8_t busy[IPUP_SCHED_MAX_STAGES], take[IPUP_SCHED_MAX_STAGES];
    int32_t nc = 0, s, i, j, b, placed = 0;
    IPUPIPE_MEMSET(busy, 0, sizeof busy);
    y->phase = g->kind == IPUP_SCHED_GROUPED ? ipup__phase_grouped(y) : 0;
    for (s = 0; s < g->S; s++)
        if (ipup__conc_cand(y, s, &c[nc])) take[nc++] = 0;
    for (;;) {
        int32_t best = -1, free_all = 1;
        for (i = 0; i < nc; i++)
            if (!take[i] && (best < 0 || c[i].key < c[best].key)) best = i;
        if (best < 0) break;
        take[best] = 2; /* considered */
        for (b = 0; b < mp->n_dev[c[best].s]; b++)
            if (busy[mp->dev[c[best].s][b]]) free_all = 0;
        if (!free_all) continue;
        take[best] = 1;
        for (b = 0; b < mp->n_dev[c[best].s]; b++) busy[mp->dev[c[best].s][b]] = 1;
    }
    for (j = 0; j < nc; j++) { /* the counters change after the step: readiness is the state before it */
        if (take[j] != 1) continue;
        ipup__conc_emit(g, mp, c[j].s, c[j].m, c[j].k);
        if (c[j].k == IPUP_OP_F) y->nF[c[j].s]++;
        else y->nG[c[j].s]++;
        placed++;
    }
    return placed;
}

/* place every op of a concurrent mapping: sequential one op (all its branches) per step,
   the others by gang list scheduling in the schedule's order */
static IPUP__UNUSED int ipup__conc_place(ipup__gen *g, const ipup_stage_map *mp, char *msg, size_t msg_len) {
    ipup__dyn y;
    int64_t total = (int64_t)2 * g->S * g->M, done = 0;
    int32_t s, m;
    if (g->kind == IPUP_SCHED_SEQUENTIAL) {
        for (m = 0; m < g->M; m++) {
            for (s = 0; s < g->S; s++) { ipup__conc_emit(g, mp, s, m, IPUP_OP_F); g->t++; }
            for (s = g->S - 1; s >= 0; s--) { ipup__conc_emit(g, mp, s, m, IPUP_OP_B); g->t++; }
        }
        return IPUP_OK;
    }
    IPUPIPE_MEMSET(&y, 0, sizeof y);
    y.g = g;
    while (done < total) {
        int32_t k = ipup__conc_step(g, &y, mp);
        if (k == 0)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: no stage can run an op at step %d (%lld of %lld ops placed): the schedule deadlocks with "
                             "this concurrent mapping; try another mapping",
                             ipup__kind_names[g->kind], (int)g->t + 1, (long long)done, (long long)total);
        done += k;
        g->t++;
    }
    return IPUP_OK;
}

/* the table of a mapping with concurrent stages (ipup_sched_generate's path for
   cfg->concurrent); a mapping without brackets goes the plain way */
static IPUP__UNUSED int ipup__conc_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops, ipup_table *out, char *msg,
                                            size_t msg_len) {
    const ipup_stage_map *mp = cfg->concurrent;
    ipup__gen g;
    int32_t s, b, lanes = ipup_sched_map_lanes(mp);
    int64_t need;
    int nwarn = 0, rc;
    IPUPIPE_MEMSET(&g, 0, sizeof g);
    g.S = cfg->stages; g.M = cfg->microbatches; g.kind = (int)cfg->kind;
    if (!mp->concurrent && !cfg->stage_device && mp->stages == cfg->stages) {
        ipup_sched_config c = *cfg;
        int16_t plain[IPUP_SCHED_MAX_STAGES];
        for (s = 0; s < cfg->stages; s++) plain[s] = mp->dev[s][0];
        c.concurrent = NULL;
        c.stage_device = plain;
        return ipup_sched_generate(&c, ops, cap_ops, out, msg, msg_len);
    }
    if ((rc = ipup__conc_config(cfg, &g, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    if (cfg->forward_only) { /* the emulator's ipup_predict runs such a pipeline stage after stage */
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: concurrent stages (a stage on several devices) have no forward-only table; drop forward_only "
                         "for the training table, or give each stage one device for an inference table",
                         ipup__kind_names[g.kind]);
    }
    if ((rc = ipup__gen_rules(&g, cfg->strict, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    need = (int64_t)2 * lanes * g.M;
    if (need > 0x3fffffff) return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: the table is too large", ipup__kind_names[g.kind]);
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s: the table needs %d ops but the ops array holds %d; size it with IPUP_SCHED_MAX_OPS(%d, %d) "
                         "(%d = ipup_sched_map_lanes, the stages counted once per branch)",
                         ipup__kind_names[g.kind], (int)need, ops ? (int)cap_ops : 0, (int)lanes, (int)g.M, (int)lanes);
    }
    g.ops = ops;
    if ((rc = ipup__conc_place(&g, mp, msg, msg_len)) != IPUP_OK) return rc;
    out->stages = g.S; out->microbatches = g.M; out->devices = g.P; out->steps = g.t;
    out->n_ops = g.n; out->cap_ops = cap_ops; out->ops = ops; out->split_backward = 0;
    out->concurrent = 1;
    for (s = 0; s < g.S; s++) {
        out->stage_device[s] = g.map[s];
        out->n_branches[s] = mp->n_dev[s];
        for (b = 0; b < mp->n_dev[s]; b++) out->branch_device[s][b] = mp->dev[s][b];
    }
    ipup_sched_sort(out);
    ipup__gen_fill_warning(out, g.kind, &nwarn, msg, msg_len);
    return IPUP_OK;
}

/* -- verify: the branch rules (docs/schedules.md §2.6, §2.7) -- */

/* rule 2: every stage's branches on distinct devices in range (branch 0 = stage_device) */
static IPUP__UNUSED int ipup__ver_conc_map(ipup__ver *v) {
    int32_t s, b, k;
    for (s = 0; s < v->S; s++) {
        int32_t n = v->t->n_branches[s];
        if (n < 1 || n > IPUP_SCHED_MAX_BRANCHES || v->t->branch_device[s][0] != v->t->stage_device[s]) {
            v->info->rule = 6; v->info->stage = s;
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "table structure: stage %d has %d branches (need 1..%d) or branch 0 is not on stage_device[%d]; "
                             "fill n_branches and branch_device of a concurrent table",
                             (int)s, (int)n, IPUP_SCHED_MAX_BRANCHES, (int)s);
        }
        for (b = 0; b < n; b++) {
            int32_t d = v->t->branch_device[s][b];
            for (k = 0; k < b; k++)
                if (v->t->branch_device[s][k] == d) d = -1;
            if (d < 0 || d >= v->P) {
                v->info->rule = 2; v->info->stage = s;
                return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                                 "rule 2 (branches on the stage's devices): branch %d of stage %d is on device %d, which is "
                                 "out of range 0..%d or holds another branch of that stage; each branch needs a device of its own",
                                 (int)b, (int)s, (int)v->t->branch_device[s][b], (int)(v->P - 1));
            }
        }
    }
    return IPUP_OK;
}

/* rules 1 and 2 for op i of a concurrent table: a branch the stage has, on its device,
   alone in its cell, sorted; records the latest step of each (stage, micro-batch, kind) */
static IPUP__UNUSED int ipup__ver_conc_op(ipup__ver *v, uint8_t *mask, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int32_t n = v->t->n_branches[o->stage], b = ipup_op_branch(o), home, kk;
    int64_t x = (int64_t)o->mb * v->S + o->stage;
    int32_t *slot = o->kind == IPUP_OP_F ? v->stF : o->kind == IPUP_OP_W ? v->stW : v->stG;
    uint8_t bit;
    if ((n > 1) != (b >= 0) || b >= n) {
        ipup__ver_op(v, 1, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (branches of a concurrent stage): device %d, step %d: %s is marked as branch %d, but stage "
                         "%d has %d branch%s (%s); fix the branch index",
                         (int)o->device, (int)o->step + 1, v->a, (int)b, (int)o->stage, (int)n, n == 1 ? "" : "es",
                         n == 1 ? "a plain stage: no branch index" : "branches 0..n-1");
    }
    home = n > 1 ? v->t->branch_device[o->stage][b] : v->t->stage_device[o->stage];
    if (o->device != home) {
        ipup__ver_op(v, 2, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 2 (branch on its device): device %d, step %d: branch %d of %s runs on device %d, but that "
                         "branch of stage %d lives on device %d (its slice of the weights is there); move it to device %d",
                         (int)o->device, (int)o->step + 1, (int)(b < 0 ? 0 : b), v->a, (int)o->device, (int)o->stage, (int)home,
                         (int)home);
    }
    kk = o->kind == IPUP_OP_F ? 0 : o->kind == IPUP_OP_W ? 2 : 1;
    bit = (uint8_t)(1u << (b < 0 ? 0 : b % 8));
    if ((mask[x * 3 + kk] & bit) || (kk == 1 && v->kG[x] && v->kG[x] != o->kind)) {
        ipup__ver_op(v, 1, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (each op once per branch): device %d, step %d: branch %d of %s appears twice, or its backward "
                         "mixes B and I (another branch ran at step %d); remove one",
                         (int)o->device, (int)o->step + 1, (int)(b < 0 ? 0 : b), v->a, (int)slot[x] + 1);
    }
    mask[x * 3 + kk] |= bit;
    if (o->step > slot[x]) slot[x] = o->step;
    if (kk == 1) v->kG[x] = o->kind;
    return IPUP_OK;
}

/* rule 1: every branch of every op present */
static IPUP__UNUSED int ipup__ver_conc_full(ipup__ver *v, const uint8_t *mask) {
    int32_t s, m, b, kk;
    for (m = 0; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            int32_t n = v->t->n_branches[s];
            int64_t x = (int64_t)m * v->S + s;
            uint8_t full = (uint8_t)(n >= 8 ? 0xffu : (1u << n) - 1u);
            for (kk = 0; kk < 3; kk++) {
                int kind = kk == 0 ? (int)IPUP_OP_F : kk == 2 ? (int)IPUP_OP_W : (int)v->kG[x];
                if ((kk == 2 && v->kG[x] != IPUP_OP_I) || mask[x * 3 + kk] == full) continue;
                for (b = 0; b < n && (mask[x * 3 + kk] >> (b % 8) & 1u); b++) {}
                v->info->rule = 1; v->info->op_index = -1; v->info->step = -1;
                v->info->device = v->t->branch_device[s][b]; v->info->stage = s; v->info->mb = m; v->info->kind = kind;
                return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                                 "rule 1 (every branch once): branch %d of %s is missing (device %d); a concurrent stage's "
                                 "op runs on each of its %d devices, all in one step",
                                 (int)b, ipup__op_desc(v->a, sizeof v->a, kind, s, m), (int)v->t->branch_device[s][b], (int)n);
            }
        }
    return IPUP_OK;
}

/* rule 7: every branch of an op in the step of the others */
static IPUP__UNUSED int ipup__ver_conc_together(ipup__ver *v) {
    int32_t i;
    for (i = 0; i < v->t->n_ops; i++) {
        const ipup_op *o = &v->t->ops[i];
        int64_t x = (int64_t)o->mb * v->S + o->stage;
        int32_t last = o->kind == IPUP_OP_F ? v->stF[x] : o->kind == IPUP_OP_W ? v->stW[x] : v->stG[x];
        if (o->step == last) continue;
        ipup__ver_op(v, 7, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 7 (branches in one step): device %d, step %d: branch %d of %s runs at step %d, another branch at "
                         "step %d; the branches of a concurrent stage compute on the same micro-batch at once, so move it to "
                         "step %d",
                         (int)o->device, (int)o->step + 1, ipup_op_branch(o), v->a, (int)o->step + 1, (int)last + 1,
                         (int)last + 1);
    }
    return IPUP_OK;
}

/* ipup_sched_verify of a concurrent table: rules 1 and 2 per branch, then rules 3 to 5
   against the latest branch of each dependency, then rule 7 */
static IPUP__UNUSED int ipup__ver_conc(ipup__ver *v) {
    int64_t SM = (int64_t)v->S * v->M;
    uint8_t *mask = (uint8_t *)v->kG + SM; /* 3 bytes per (stage, micro-batch): F, B/I, W branches seen */
    int32_t i;
    int rc;
    IPUPIPE_MEMSET(mask, 0, (size_t)(3 * SM));
    if ((rc = ipup__ver_conc_map(v)) != IPUP_OK) return rc;
    for (i = 0; i < v->t->n_ops; i++) {
        if ((rc = ipup__ver_range(v, i)) != IPUP_OK) return rc;
        if ((rc = ipup__ver_cell(v, i)) != IPUP_OK) return rc;
        if ((rc = ipup__ver_conc_op(v, mask, i)) != IPUP_OK) return rc;
    }
    if ((rc = ipup__ver_complete(v)) != IPUP_OK || (rc = ipup__ver_conc_full(v, mask)) != IPUP_OK) return rc;
    if ((rc = ipup__ver_deps(v)) != IPUP_OK || (rc = ipup__ver_conc_together(v)) != IPUP_OK) return rc;
    ipup__ver_in_order(v);
    v->info->step = v->info->device = v->info->op_index = v->info->stage = v->info->mb = v->info->kind = -1;
    return IPUP_OK;
}

/* 1 when stage s has a branch on a device other than d (a value to or from it crosses) */
static IPUP__UNUSED int ipup__stage_elsewhere(const ipup_table *t, int32_t s, int32_t d) {
    int32_t b;
    if (!t->concurrent || t->n_branches[s] <= 1) return t->stage_device[s] != d;
    for (b = 0; b < t->n_branches[s] && b < IPUP_SCHED_MAX_BRANCHES; b++)
        if (t->branch_device[s][b] != d) return 1;
    return 0;
}

/* -- measure: what each device holds (docs/schedules.md §9) -- */
static IPUP__UNUSED void ipup__measure_device(const ipup_table *t, const ipup_op *o, const int64_t *act_bytes, int32_t *devcur,
                                              int64_t *devbytes, ipup_sched_figures *out) {
    int32_t d = o->device;
    int64_t a = act_bytes ? act_bytes[o->stage] : 0;
    (void)t;
    if (o->kind == IPUP_OP_F) {
        if (++devcur[d] > out->peak_inflight_device[d]) out->peak_inflight_device[d] = devcur[d];
        devbytes[d] += a;
        if (devbytes[d] > out->stash_bytes_device[d]) out->stash_bytes_device[d] = devbytes[d];
    } else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) {
        devcur[d]--;
        devbytes[d] -= a;
    }
}

/* -- CSV: the branch suffix "1F3.1" (docs/schedules.md §6, §9) -- */

/* after the token's micro-batch: nothing, or ".<branch>" (0..IPUP_SCHED_MAX_BRANCHES-1);
   the branch + 1 into *br (0 without a suffix); 0 when fine */
static IPUP__UNUSED int ipup__csv_branch(const char *p, size_t n, size_t i, int *br) {
    *br = 0;
    if (i == n) return 0;
    if (p[i] != '.' || i + 2 != n || p[i + 1] < '0' || p[i + 1] >= '0' + IPUP_SCHED_MAX_BRANCHES) return -1;
    *br = p[i + 1] - '0' + 1;
    return 0;
}

/* a loaded table with branch suffixes: the branches of each stage and their devices,
   from where each (stage, branch) first appears, rows top to bottom (verify checks the
   rest) */
static IPUP__UNUSED void ipup__csv_branches(ipup_table *t) {
    int32_t i, s, b;
    for (i = 0; i < t->n_ops; i++)
        if (ipup_op_branch(&t->ops[i]) >= 0) t->concurrent = 1;
    if (!t->concurrent) return;
    for (s = 0; s < t->stages; s++) {
        t->n_branches[s] = 1;
        for (b = 0; b < IPUP_SCHED_MAX_BRANCHES; b++) t->branch_device[s][b] = -1;
    }
    for (i = 0; i < t->n_ops; i++) { /* in (device, step) order as parsed: first appearance */
        const ipup_op *o = &t->ops[i];
        b = ipup_op_branch(o) < 0 ? 0 : ipup_op_branch(o);
        if (b + 1 > t->n_branches[o->stage]) t->n_branches[o->stage] = (int8_t)(b + 1);
        if (t->branch_device[o->stage][b] < 0) t->branch_device[o->stage][b] = o->device;
    }
    for (s = 0; s < t->stages; s++) {
        if (t->branch_device[s][0] < 0) t->branch_device[s][0] = t->stage_device[s];
        t->stage_device[s] = t->branch_device[s][0];
    }
}

/* -- JSON: the branches and what each device holds (docs/schedules.md §6, §9) -- */
static IPUP__UNUSED void ipup__json_conc(ipup__w *w, const ipup_table *t, const ipup_sched_figures *fig) {
    int32_t s, b, d;
    ipup__ws(w, ",\"stage_devices\":[");
    for (s = 0; s < t->stages; s++) {
        ipup__ws(w, s ? ",[" : "[");
        for (b = 0; b < t->n_branches[s] && b < IPUP_SCHED_MAX_BRANCHES; b++) ipup__wf(w, "%s%d", b ? "," : "", (int)t->branch_device[s][b]);
        ipup__ws(w, "]");
    }
    ipup__ws(w, "],\"peak_inflight_device\":[");
    for (d = 0; d < t->devices; d++) ipup__wf(w, "%s%d", d ? "," : "", (int)fig->peak_inflight_device[d]);
    ipup__ws(w, "],\"stash_bytes_device\":[");
    for (d = 0; d < t->devices; d++) ipup__wf(w, "%s%lld", d ? "," : "", (long long)fig->stash_bytes_device[d]);
    ipup__wf(w, "],\"activations_stored\":%d", (int)fig->inflight_total);
}

/* ==== end of concurrent pipeline stages ==== */

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_SCHED_IMPLEMENTED */
#endif /* IPUPIPE_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License
Copyright (c) 2026 the ipupipe authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
