/* ipupipe_sched.h - v0.5.0 - pipeline schedule tables for ipupipe - MIT licence (see end of file)
 *
 * Generate, verify, measure, render and exchange (CSV) the pipeline schedule tables
 * of ipupipe. The contract is docs/schedules.md (the op model, the
 * dependency rules, the closed forms, the figures, the file formats).
 *
 * CONTENTS
 *   Each section starts with a one-line comment that opens with ">>TAG:"; grep -n '>>TAG'
 *   ipupipe_sched.h finds its declarations, then its implementation. The sections, in
 *   order (* implementation only):
 *     result-codes   the result codes of the whole library
 *     strings*       string helpers shared by the three headers
 *     format         ipup_snprintf: text formatting, no heap, no stdio
 *     output         the write callback of every document; ipup_buf, a text in memory
 *     messages*      error and warning texts into the caller's msg
 *     tables         ops, tables, stage -> device mappings, array sizes
 *     generate       the schedules; ipup_sched_generate
 *     ops            an op as text; the sort
 *     verify         the rules of docs/schedules.md §2
 *     measure        costs, figures, phases, in-flight counts (§4)
 *     grid           the table as a text grid, and as PyTorch's steps
 *     trace          Chrome trace JSON
 *     svg            the SVG Gantt chart
 *     json           the figures as JSON
 *     csv            PyTorch's compute-only CSV, written and read
 *     respace        per-device orders into a lock-step table
 *     forward-only*  the tables of inference (§8)
 *     concurrent     concurrent pipeline stages (§9)
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
 *   zb-h2: zero bubble H2 (same paper): a longer warm-up, peak 2S-1 on stage 0.
 *   zb-v, v-min, v-half: on the V, S = 2P, device d holds stages d and 2P-1-d: PyTorch's
 *       ScheduleZBVZeroBubble (the paper's ZB-V); V-Min and V-Half (Qi et al., "Pipeline
 *       Parallelism with Controllable Memory", 2024), about 1/3 and 1/2 of 1F1B's memory.
 *   looped-bfs, interleaved-zb: stage s on device s mod P, S = P x V: PyTorch's
 *       ScheduleLoopedBFS and ScheduleInterleavedZeroBubble (ZB1P).
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
 *   zb-h2: as zb-h1 with the limits 2(S-s)-1 and 2S-1.
 *   zb-v, looped-bfs, interleaved-zb: PyTorch's per-device orders (looped-bfs with each
 *       stage's backwards in increasing micro-batch), each op placed as early as its
 *       inputs allow in its device's order.
 *   v-min, v-half: per step and device: F of its second stage, I (second, first stage),
 *       F of its first stage within the activation budget (P+1, ceil(2P/3)+1), W.
 *   several stages on one device (e.g. mapping 0,1,0): list scheduling, each step
 *       every device runs the ready op the schedule ranks first (closed-form step,
 *       or backward before forward for 1f1b, F/I/W as above for zb-h1); grouped keeps
 *       its all-forward / all-backward steps.
 */
#define IPUPIPE_VERSION_MAJOR 0
#define IPUPIPE_VERSION_MINOR 5
#define IPUPIPE_VERSION_PATCH 0
#define IPUPIPE_VERSION_STRING "0.5.0"

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

/* >>result-codes: one list of result codes for the whole library (ipupipe.h uses it too) */
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
typedef enum ipup_result {
    IPUP_RESULT_LIST(IPUP__RESULT_ENUM) IPUP_RESULT_LAST_ = -13
} ipup_result;
#undef IPUP__RESULT_ENUM
/* The text of a result code ("" when IPUPIPE_NO_ERROR_STRINGS; "unknown result" for
   codes not in the list). */
IPUPIPE_DEF const char *ipup_result_str(int code);
#define IPUP__RESULT_STR_FROM_SCHED 1
#endif

/* >>format: ipup_snprintf, text formatting with no heap and no stdio */
/* The C99 snprintf contract: returns the length the whole text needs (without the NUL;
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
IPUPIPE_DEF int ipup_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
    IPUP__PRINTF(3, 0);
IPUPIPE_DEF int ipup_snprintf(char *buf, size_t len, const char *fmt, ...) IPUP__PRINTF(3, 4);

/* >>output: documents go through a write callback, or into memory */
/* write receives the text piece by piece and returns 0 when it took all len bytes,
   non-zero on failure. Every writer of this header (the grid, trace, SVG, JSON and CSV
   sections) sends its document through write(user, data, len), in pieces, and returns
   IPUP_OK, IPUP_ERR_ARG (bad table or arguments, nothing written) or IPUP_ERR_IO as soon
   as write returns non-zero (it is not called again). To get the text in memory, pass
   ipup_buf_write and an ipup_buf. */
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

/* >>tables: ops, tables and stage -> device mappings, with the sizes of their arrays */
#ifndef IPUP_SCHED_MAX_STAGES
#define IPUP_SCHED_MAX_STAGES 256 /* compile-time maximum S (and P); overridable */
#endif
#ifndef IPUP_SCHED_MAX_BRANCHES
/* most devices (branches) of one concurrent stage; overridable, 1..8 */
#define IPUP_SCHED_MAX_BRANCHES 8
#endif
#if IPUP_SCHED_MAX_BRANCHES < 1 || IPUP_SCHED_MAX_BRANCHES > 8
#error "IPUP_SCHED_MAX_BRANCHES must be 1..8 (the verifier keeps the branches seen in one byte)"
#endif
/* Largest micro-batch count accepted (keeps 3*S*M and the work sizes in range). */
#define IPUP_SCHED_MAX_MICROBATCHES (1 << 22)

typedef enum ipup_op_kind {
    IPUP_OP_F = 1,
    IPUP_OP_B = 2,
    IPUP_OP_I = 3,
    IPUP_OP_W = 4
} ipup_op_kind;

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
    int32_t concurrent; /* 1 when some stage runs as branches on several devices */
    int8_t n_branches[IPUP_SCHED_MAX_STAGES]; /* concurrent: branches of stage s, 1 = plain */
    /* concurrent: branch_device[s][b] is the device of branch b of stage s */
    int16_t branch_device[IPUP_SCHED_MAX_STAGES][IPUP_SCHED_MAX_BRANCHES];
    /* 1: a dual table (DualPipe, docs/schedules.md §3): two model copies on the V mapping,
       S = 2P and M both even; copy A is stages 0..P-1 and micro-batches 0..M/2-1, copy B is
       stages P..2P-1 and micro-batches M/2..M-1; a micro-batch runs only its copy's stages,
       stages 0 and P take the input, stages P-1 and 2P-1 the loss; n_ops = S*M or 3*S*M/2.
       0 in every other table */
    int32_t dual;
} ipup_table;

#define IPUP_SCHED_MAX_OPS(S, M) (3 * (S) * (M)) /* enough ops for any built-in schedule */
#define IPUP_SCHED_CELLS(S, M) IPUP_SCHED_MAX_OPS(S, M)
/* Scratch bytes for verify / measure / respace / CSV load of an S x M table. */
#define IPUP_SCHED_WORK_BYTES(S, M) \
    ((size_t)32 * (size_t)(S) * (size_t)(M) + (size_t)8 * (size_t)(M) + (size_t)256)

/* A stage -> devices mapping with concurrent stages (docs/schedules.md §9): stage s runs
   on n_dev[s] devices dev[s][0..n_dev[s]-1], one branch per device (n_dev[s] = 1: a plain
   stage). ipup_sched_map_parse reads it from text such as "0,[1,2],2,3". */
typedef struct ipup_stage_map {
    int32_t stages;     /* S */
    int32_t concurrent; /* 1 when some stage has n_dev > 1 */
    int8_t n_dev[IPUP_SCHED_MAX_STAGES];
    int16_t dev[IPUP_SCHED_MAX_STAGES][IPUP_SCHED_MAX_BRANCHES];
} ipup_stage_map;

/* >>generate: the schedules, and ipup_sched_generate that makes their tables */
typedef enum ipup_sched_kind {
    IPUP_SCHED_GROUPED = 0, /* default */
    IPUP_SCHED_INTERLEAVED,
    IPUP_SCHED_SEQUENTIAL,
    IPUP_SCHED_GPIPE,
    IPUP_SCHED_1F1B,
    IPUP_SCHED_INTERLEAVED_1F1B,
    IPUP_SCHED_ZBH1,
    IPUP_SCHED_ZBH2,          /* zero bubble H2 (Qi et al., ICLR 2024) */
    IPUP_SCHED_ZBV,           /* zero bubble V: PyTorch's ScheduleZBVZeroBubble, S = 2P */
    IPUP_SCHED_VMIN,          /* V-Min (Qi et al. 2024, controllable memory), S = 2P */
    IPUP_SCHED_VHALF,         /* V-Half (same), S = 2P */
    IPUP_SCHED_LOOPED_BFS,    /* PyTorch's ScheduleLoopedBFS (Lamy-Poirier 2022), S = P x V */
    IPUP_SCHED_INTERLEAVED_ZB, /* PyTorch's ScheduleInterleavedZeroBubble (ZB1P), S = P x V */
    IPUP_SCHED_DUALPIPE_V, /* DeepSeek's DualPipeV, PyTorch's ScheduleDualPipeV: S = 2P stages on
                             the V mapping, overlapped F&B cells (docs/schedules.md §3) */
    IPUP_SCHED_DUALPIPE /* DeepSeek's DualPipe: two model copies fed from both ends, a dual
                           table (ipup_table.dual) of S = 2P stages on the V mapping (§3) */
} ipup_sched_kind;
#define IPUP_SCHED_KIND_COUNT 15

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
                                     concurrent stages have no forward-only form
                                     (IPUP_ERR_CONFIG) */
    const ipup_stage_map *concurrent; /* NULL, or the mapping with concurrent stages (then
                                     stage_device is NULL; docs/schedules.md §9) */
    int32_t popxl;                /* 1: PopXL's convention is in use (its pipeline stages are
                                     2S-1: a stage's forward and backward count apart, the
                                     last stage's once) and its rule that gradient
                                     accumulation M >= 2 x those stages is checked: a warning,
                                     an error under strict */
} ipup_sched_config;

/* Generate a table into ops (cap_ops). msg (msg_len) receives the error text, or on
   success the warnings, one per line ("" if none). Returns IPUP_OK, IPUP_ERR_ARG,
   IPUP_ERR_CONFIG or IPUP_ERR_CAPACITY. */
IPUPIPE_DEF int ipup_sched_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                                       ipup_table *out, char *msg, size_t msg_len);
/* "grouped", "interleaved", "sequential", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1",
   "zb-h2", "zb-v", "v-min", "v-half", "looped-bfs", "interleaved-zb", "dualpipe-v",
   "dualpipe" (case-insensitive; '_' or '-' alike; also "zbh1", "i1f1b", "zbv", "zb1p",
   "dualpipev").
   IPUP_ERR_PARSE if unknown. */
IPUPIPE_DEF int ipup_sched_kind_parse(const char *name, ipup_sched_kind *out);
IPUPIPE_DEF const char *ipup_sched_kind_name(ipup_sched_kind kind);

/* >>ops: an op as text, and the sort of a table's ops */
/* PyTorch's compute-only token of an op, "<stage><F|B|I|W><mb>" (e.g. "2B7"), into
   buf (len); returns its length. */
IPUPIPE_DEF int ipup_sched_op_str(const ipup_op *op, char *buf, size_t len);
/* Sort t->ops by (step, device, position in an overlap cell). In place (heapsort),
   no allocation; O(n log n). */
IPUPIPE_DEF void ipup_sched_sort(ipup_table *t);

/* >>verify: every rule of docs/schedules.md §2, on any table */
typedef struct ipup_sched_verify_info {
    int32_t rule;               /* 0 valid; 1..5: the rule of docs/schedules.md §2 that broke;
                                   6: table structure (sizes, ranges, sorting) */
    int32_t step, device;       /* where: the failing op's 0-based step index (messages say
                                   step + 1) and device (-1 when the op is missing) */
    int32_t op_index;           /* index of the failing op in ops, -1 */
    int32_t stage, mb, kind;    /* the op that is wrong or missing (-1 when not about one op) */
    int32_t in_order;           /* 1 when every stage's weight-gradient ops (B or W) run in
                                   increasing m */
    int32_t out_of_order_stage; /* first stage that breaks in-order accumulation, -1 */
} ipup_sched_verify_info;
/* Check every rule of docs/schedules.md §2 on any table (built-in or loaded). work
   (work_bytes >= IPUP_SCHED_WORK_BYTES(S, M), 8-byte aligned) is scratch. Returns
   IPUP_OK, IPUP_ERR_INVALID_TABLE (msg names the device, the step, the op and the fix;
   info says where), IPUP_ERR_ARG or IPUP_ERR_CAPACITY (work too small). info may be
   NULL. */
IPUPIPE_DEF int ipup_sched_verify(const ipup_table *t, void *work, size_t work_bytes,
                                  ipup_sched_verify_info *info, char *msg, size_t msg_len);

/* >>measure: costs, a table's figures, phases and in-flight counts (docs/schedules.md §4) */
typedef struct ipup_sched_cost {
    double f, b, i, w;          /* cost of one op of each kind (time units) */
    double exchange;            /* BSP: added to a step when a value crosses devices at its end;
                                   async: delay of a value that crosses devices */
    double sync;                /* BSP: added to every step */
    const double *stage_scale;  /* stage_scale (stages) or NULL: per-stage factor on op costs */
} ipup_sched_cost;
/* The costs and stage scales the SVG writer takes (and ipupipe-sched's --cost): 0, or from
   IPUP_SCHED_COST_MIN (DBL_MIN, the smallest normal double) to IPUP_SCHED_COST_MAX, so
   that a table's sums stay in double range and no cost is subnormal. */
#define IPUP_SCHED_COST_MIN 2.2250738585072014e-308
#define IPUP_SCHED_COST_MAX 1e15
/* F=1, B=2, I=1, W=1, exchange=0, sync=0 (docs/schedules.md §4). */
IPUPIPE_DEF ipup_sched_cost ipup_sched_cost_default(void);
/* Cost of one op under a cost model. */
IPUPIPE_DEF double ipup_sched_op_cost(const ipup_sched_cost *c, const ipup_op *op);

typedef struct ipup_sched_figures {
    int32_t stages, microbatches, devices, steps, n_ops;
    double unit_utilisation;       /* busy cells / (T x P) */
    double work;                   /* sum of op costs */
    double bsp_time;               /* sum over steps of (max op cost + exchange if a value
                                      crosses + sync) */
    double async_time;             /* makespan, each device running its ops in table order asap */
    double bubble_bsp, bubble_async; /* 1 - work / (P x time) */
    int32_t first_mb_done;         /* 1-based step at which the first micro-batch has all its
                                      ops done */
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
    double fwd_latency;            /* BSP time from the start of F(0,m)'s step to the end of
                                      F(S-1,m)'s, the longest over m */
    int32_t fwd_latency_steps;     /* steps from F(0,m) to F(S-1,m), both counted, the longest
                                      over m */
    double fwd_throughput;         /* steady state under BSP timing: (M-1) / (end of
                                      F(S-1,M-1)'s step - end of F(S-1,0)'s) micro-batches per
                                      time unit; 1 / fwd_latency when M = 1 */
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
IPUPIPE_DEF int ipup_sched_measure(const ipup_table *t, const ipup_sched_cost *cost,
                                   const int64_t *act_bytes, void *work, size_t work_bytes,
                                   ipup_sched_figures *out);
/* The phases of a table as the Graphcore tutorials define them (docs/schedules.md §4):
   ramp-up until every device that runs any op is busy in one step, main from that step
   to the last step in which they all are, ramp-down after. A pipeline that never fills
   has no main phase: its ramp-up ends where the first backward (B or I) starts. out[6] =
   ramp-up, main, ramp-down as inclusive 0-based step ranges [first, last]; [x, x-1] is
   empty. Ops must be sorted by step. Returns IPUP_ERR_ARG on a bad table. */
IPUPIPE_DEF int ipup_sched_phases(const ipup_table *t, int32_t out[6]);
/* per-stage peak in-flight micro-batches (docs/schedules.md §4) into out (n_out >= stages) */
IPUPIPE_DEF int ipup_sched_peak_inflight(const ipup_table *t, int32_t *out, int32_t n_out);

/* >>grid: the table as text, a grid of devices x steps, and PyTorch's steps view */
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
IPUPIPE_DEF int ipup_sched_render_grid_ex(const ipup_table *t, int flags, ipup_write_fn write,
                                          void *user);
/* PyTorch's _format_pipeline_order layout (rows "Step NN:", columns "Rank i"), with the
   steps numbered from 1 as a person counts them (PyTorch counts from 0); the row of the
   0-based step index mark_step (>= 0) ends with " <-- ERROR HERE". */
IPUPIPE_DEF int ipup_sched_render_steps(const ipup_table *t, int32_t mark_step, ipup_write_fn write,
                                        void *user);

/* >>trace: the Chrome trace JSON, for Perfetto and chrome://tracing */
/* Chrome trace JSON ({"traceEvents": [...]}, ph "X", pid = device), BSP timing from the
   cost model, 1 time unit = 1 ms: one event per op (named like the CSV, "0F0"; a colour
   per kind in cname), the update U on every device, and the phases as spans on a track
   of their own (pid = P). Opens in Perfetto and chrome://tracing. */
IPUPIPE_DEF int ipup_sched_write_trace(const ipup_table *t, const ipup_sched_cost *cost,
                                       ipup_write_fn write, void *user);
/* The trace with a timing (IPUP_SCHED_TIMING_ASYNC or _BSP; ipup_sched_write_trace is BSP):
   async needs work (IPUP_SCHED_DRAW_WORK_BYTES(S, M, n_ops), 8-byte aligned; else
   IPUP_ERR_CAPACITY) and has no phase track (phases are made of steps). */
IPUPIPE_DEF int ipup_sched_write_trace_ex(const ipup_table *t, const ipup_sched_cost *cost,
                                          int timing, void *work, size_t work_bytes,
                                          ipup_write_fn write, void *user);

/* >>svg: the SVG Gantt chart */
/* SVG Gantt chart: devices as rows, op widths from the cost model (BSP timing), the
   weight update U after the last step, phases (from fig, may be NULL) marked. */
IPUPIPE_DEF int ipup_sched_write_svg(const ipup_table *t, const ipup_sched_cost *cost,
                                     const ipup_sched_figures *fig, ipup_write_fn write,
                                     void *user);
/* Layout of the SVG (zero = default). */
typedef struct ipup_sched_svg_opts {
    double unit;       /* px per cost unit; 0: 24, shrunk down to 8 to fit width (further
                          when one step is longer than the width: costs far apart) */
    double width;      /* widest canvas in px: longer tables fold into bands of time, one
                          under the other; 0: 1600; < 0: never fold. Never more than
                          1048576 px either way */
    const char *title; /* NULL: "S=.. M=.. P=.. T=..  F=.. B=.." (the sizes and costs) */
    /* fields added in 0.5.0 (docs/schedules.md §10): */
    int32_t timing;    /* IPUP_SCHED_TIMING_ASYNC (0, the default) or IPUP_SCHED_TIMING_BSP */
    void *work;        /* async timing or memory: scratch of work_bytes >=
                          IPUP_SCHED_DRAW_WORK_BYTES(S, M, n_ops), 8-byte aligned */
    size_t work_bytes;
    int32_t memory;    /* 1: a panel under the chart, the activation bytes each device holds
                          over time (ipup_sched_held), its peak marked */
    const int64_t *act_bytes; /* memory: bytes per stage and micro-batch (stages); NULL: 1 */
    double row_height; /* px per device row; 0: 30 */
    int32_t no_legend; /* 1: a small multiple: no legend, the title as given (without the
                          timing: the picture around it names it) */
} ipup_sched_svg_opts;
/* The slide-ready chart: a title, 1-based step numbers over the columns, a time axis
   when the costs are not all 1, the phases shaded and labelled where the label fits, a
   legend wrapped to the canvas with only the op kinds present. Text stays inside the
   canvas; ipup_sched_write_svg is this with opts NULL, which draws BSP time (it has no
   scratch). With opts, timing 0 is async (the default: each op where the threaded runner
   runs it; no step numbers, one band scaled to the width, no phases) and needs opts->work;
   the title says which timing it is. Boxes are labelled by micro-batch, "stage:mb" on a
   device holding several stages, and shaded lighter for a device's second (fourth, ...)
   stage; the two ops of an overlap cell (overlap_index) are drawn as the halves of one
   hatched box. IPUP_ERR_CAPACITY when async or memory lack work. IPUP_ERR_ARG for a bad
   table, a
   NULL write, or a cost or stage scale that is not 0 or in [IPUP_SCHED_COST_MIN,
   IPUP_SCHED_COST_MAX] (negative, NaN, infinite, subnormal or above 1e15). */
IPUPIPE_DEF int ipup_sched_write_svg_ex(const ipup_table *t, const ipup_sched_cost *cost,
                                        const ipup_sched_figures *fig,
                                        const ipup_sched_svg_opts *opts, ipup_write_fn write,
                                        void *user);

/* >>timing: where each op runs in time (BSP or async), and the activations held */
/* The two timings of a table (docs/schedules.md §10). Async: each op starts when its inputs
   (plus the exchange when they cross devices) and its device are free, each device running
   its ops in table order, as the threaded runner and PyTorch's ranks run; its makespan is
   ipup_sched_figures.async_time. BSP: an op starts with its step, which lasts as long as its
   slowest op (plus exchange and sync); the total is bsp_time. */
#define IPUP_SCHED_TIMING_ASYNC 0
#define IPUP_SCHED_TIMING_BSP 1
/* Scratch of the drawing functions (SVG, trace) for async timing or the memory view. */
#define IPUP_SCHED_DRAW_WORK_BYTES(S, M, n_ops) \
    ((size_t)16 * (size_t)(S) * (size_t)(M) + (size_t)16 * (size_t)(n_ops) + (size_t)256)
/* The start time of every op (start: n_ops doubles; an op ends at start + its cost) under
   timing. work (IPUP_SCHED_DRAW_WORK_BYTES(S, M, 0), 8-byte aligned) is needed for async
   only (NULL for BSP). Returns IPUP_OK, IPUP_ERR_ARG (bad table, cost or timing),
   IPUP_ERR_CAPACITY (work too small) or IPUP_ERR_INVALID_TABLE (an input not made before
   its use: verify first). */
IPUPIPE_DEF int ipup_sched_op_times(const ipup_table *t, const ipup_sched_cost *cost, int timing,
                                    void *work, size_t work_bytes, double *start);
/* Activation bytes each device holds (docs/schedules.md §10): an activation of stage s and
   micro-batch m is held on the device of the op from the start of F(s, m) to the end of the
   op that last reads it, B(s, m), or W(s, m) when the backward is split (W reads the
   stage's input). held[i] (n_ops, may be NULL) = the bytes ops[i]'s device holds while op i
   runs; peak[d] (devices entries, may be NULL) = the most device d holds at once (equal to
   ipup_sched_figures.stash_bytes_device with the same act_bytes). act_bytes (stages) or
   NULL: 1 per stage and micro-batch. Ops in step order (a valid table). Forward-only tables
   hold no stash: all 0. Returns IPUP_OK or IPUP_ERR_ARG. */
IPUPIPE_DEF int ipup_sched_held(const ipup_table *t, const int64_t *act_bytes, int64_t *held,
                                int64_t *peak);

/* >>json: the figures as one JSON object */
/* One JSON object with the figures: schedule, stages, microbatches, devices, steps,
   unit_utilisation, bsp_time, async_time, bubble_fraction, bubble_fraction_async,
   peak_inflight, stash_bytes, first_microbatch_done, phases, in_order, warnings. */
IPUPIPE_DEF int ipup_sched_write_json(const ipup_table *t, const ipup_sched_figures *fig,
                                      const char *schedule, const char *warnings,
                                      ipup_write_fn write, void *user);

/* >>csv: PyTorch's compute-only CSV (docs/schedules.md §6), written and read */
/* PyTorch compute-only CSV: one row per device, one cell per step, empty = idle. */
IPUPIPE_DEF int ipup_sched_write_csv(const ipup_table *t, ipup_write_fn write, void *user);
/* Read PyTorch's compute-only CSV (docs/schedules.md §6): rows = devices, cells
   "<stage><F|B|I|W><mb>", empty = idle, "(a;b)OVERLAP_F_B" = two ops in one slot. In
   the older notation a B followed by a W of the same stage and micro-batch is the
   input gradient (loaded as I). The stage -> device map is inferred from where each
   stage first appears (verify checks the rest). First ipup_sched_csv_scan to learn
   the sizes, then ipup_sched_csv_load with arrays of those sizes. Errors:
   IPUP_ERR_PARSE with row and column, IPUP_ERR_CAPACITY. */
IPUPIPE_DEF int ipup_sched_csv_scan(const char *text, size_t text_len, int32_t *stages,
                                    int32_t *microbatches, int32_t *devices, int32_t *n_ops,
                                    char *msg, size_t msg_len);
IPUPIPE_DEF int ipup_sched_csv_load(const char *text, size_t text_len, ipup_op *ops,
                                    int32_t cap_ops, void *work, size_t work_bytes, ipup_table *out,
                                    char *msg, size_t msg_len);

/* >>respace: per-device orders turned into a lock-step table */
/* Re-place the ops of each device, keeping each device's order, as early as their
   dependencies allow (like PyTorch's schedule simulator): turns per-device orders
   into a lock-step table. Overlap cells become two consecutive steps. Compacts.
   Returns IPUP_ERR_INVALID_TABLE when the orders deadlock or an op is missing. */
IPUPIPE_DEF int ipup_sched_respace(ipup_table *t, void *work, size_t work_bytes, char *msg,
                                   size_t msg_len);

/* >>concurrent: concurrent pipeline stages (docs/schedules.md §9; TF IPU user guide §6.5.7) */
/* A concurrent stage is one stage run as several branches, one per device, on the same
   micro-batch in the same step. In a table every branch is its own op on its own
   device row; its branch_plus1 holds branch + 1 (0 for an op of a plain stage). */
/* The branch of an op of a concurrent stage (0..n-1), or -1 for an op of a plain stage. */
static inline int ipup_op_branch(const ipup_op *op) {
    return op->branch_plus1 > 0 ? op->branch_plus1 - 1 : -1;
}
/* Parse a stage -> device mapping: device numbers separated by commas, one per stage,
   where a bracketed list is one stage on several devices: "0,1,2,1,0", "0,[1,2],2,3".
   Spaces and tabs around numbers and signs are ignored. Devices are 0..255, at most
   IPUP_SCHED_MAX_BRANCHES per bracket and all distinct, brackets do not nest, at most
   IPUP_SCHED_MAX_STAGES stages. Returns the stage count, or IPUP_ERR_ARG (NULL
   argument) / IPUP_ERR_PARSE with msg saying what is wrong, where, and the fix. */
IPUPIPE_DEF int ipup_sched_map_parse(const char *text, ipup_stage_map *out, char *msg,
                                     size_t msg_len);
/* The serialised form of a mapping: each concurrent stage's branches become consecutive
   plain stages on their devices (0,[1,2],2,3 -> 0,1,2,2,3). Writes the plain mapping
   into stage_device (cap entries) and returns its stage count, or IPUP_ERR_CAPACITY. */
IPUPIPE_DEF int ipup_sched_map_serialised(const ipup_stage_map *map, int16_t *stage_device,
                                          int32_t cap);
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

/* >>result-codes: ipup_result_str, the text of each result code */
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

/* >>strings: string helpers, the one copy of each for all three headers (no <string.h>) */
/* ipup__name_eq compares every option and schedule name: ASCII case folded, '_' equal
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

/* >>format: ipup_vsnprintf, the C99 snprintf contract with glibc's output */
/* Output goes to an ipup__out: bytes beyond cap are counted, not stored, so the same
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
static IPUP__UNUSED void ipup__field(ipup__out *o, const ipup__spec *sp, const char *prefix,
                                     size_t zeros, const char *str, ipup__body_fn body,
                                     const void *arg, int zero_fill) {
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
    char digits_rev[24], prefix[4];
    const char *hex = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    unsigned base = sp->conv == 'o'                                           ? 8u
                    : (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') ? 16u
                                                                              : 10u;
    int n_digits = 0, i, zeros, n_prefix = 0,
        is_signed = sp->conv == 'd' || sp->conv == 'i' || sp->conv == 'p';
    char text[24];
    uint64_t x = v;
    while (x > 0) {
        uint64_t q = x / base;
        digits_rev[n_digits++] = hex[x - q * base];
        x = q;
    }
    if (n_digits == 0 && sp->prec != 0) digits_rev[n_digits++] = '0';
    for (i = 0; i < n_digits; i++) text[i] = digits_rev[n_digits - 1 - i];
    text[n_digits] = '\0';
    zeros = sp->prec > n_digits ? sp->prec - n_digits : 0;
    if (sp->conv == 'o' && sp->alt && zeros == 0 && (n_digits == 0 || text[0] != '0')) zeros = 1;
    if (is_signed) {
        if (neg) prefix[n_prefix++] = '-';
        else if (sp->plus) prefix[n_prefix++] = '+';
        else if (sp->space) prefix[n_prefix++] = ' ';
    }
    if ((sp->alt && v != 0 && (sp->conv == 'x' || sp->conv == 'X')) || sp->conv == 'p') {
        prefix[n_prefix++] = '0';
        prefix[n_prefix++] = sp->conv == 'X' ? 'X' : 'x';
    }
    prefix[n_prefix] = '\0';
    ipup__field(o, sp, prefix, (size_t)zeros, text, NULL, NULL, sp->zero && sp->prec < 0);
}

#define IPUP__DEC_LIMBS 96 /* base 10^9: N < 10^767 needs 86 */
typedef struct ipup__decimal {
    uint32_t limb[IPUP__DEC_LIMBS]; /* N in base 10^9, least significant limb first */
    int n_limbs, n_digits;           /* limbs in use, decimal digits (0 for zero) */
    int exp10;                       /* value = d0.d1d2... x 10^exp10 (0 for zero) */
    int last_nonzero;                /* index of the last nonzero digit, -1 for zero */
} ipup__decimal;

static const uint32_t ipup__pow10[10] = {1u,      10u,      100u,      1000u,      10000u,
                                         100000u, 1000000u, 10000000u, 100000000u, 1000000000u};

static IPUP__UNUSED void ipup__decimal_mul(ipup__decimal *d, uint32_t f) {
    uint64_t carry = 0;
    int i;
    for (i = 0; i < d->n_limbs; i++) {
        uint64_t x = (uint64_t)d->limb[i] * f + carry;
        d->limb[i] = (uint32_t)(x % 1000000000u);
        carry = x / 1000000000u;
    }
    while (carry && d->n_limbs < IPUP__DEC_LIMBS) {
        d->limb[d->n_limbs++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
}

/* the exact decimal digits of |v| (v finite) */
static IPUP__UNUSED void ipup__decimal_init(ipup__decimal *d, double v) {
    uint64_t bits, m;
    int e, i, k = 0, p;
    uint32_t top;
    IPUPIPE_MEMCPY(&bits, &v, sizeof bits);
    m = bits & (((uint64_t)1 << 52) - 1);
    e = (int)((bits >> 52) & 0x7ff);
    if (e == 0) e = -1074;
    else { m |= (uint64_t)1 << 52; e -= 1075; }
    d->n_limbs = d->n_digits = d->exp10 = 0;
    d->last_nonzero = -1;
    if (m == 0) return;
    while ((m & 1) == 0 && e < 0) { m >>= 1; e++; }
    d->limb[0] = (uint32_t)(m % 1000000000u);
    d->limb[1] = (uint32_t)(m / 1000000000u % 1000000000u);
    d->n_limbs = d->limb[1] ? 2 : 1;
    if (m >= (uint64_t)1000000000u * 1000000000u)
        d->limb[d->n_limbs++] = (uint32_t)(m / 1000000000u / 1000000000u);
    if (e >= 0) {
        for (; e >= 30; e -= 30) ipup__decimal_mul(d, (uint32_t)1 << 30);
        if (e) ipup__decimal_mul(d, (uint32_t)1 << e);
    } else {
        for (k = -e; k >= 13; k -= 13) ipup__decimal_mul(d, 1220703125u); /* 5^13 */
        for (; k > 0; k--) ipup__decimal_mul(d, 5u);
        k = -e;
    }
    for (top = d->limb[d->n_limbs - 1], p = 0; top; top /= 10u) p++;
    d->n_digits = 9 * (d->n_limbs - 1) + p;
    d->exp10 = d->n_digits - 1 - k;
    for (i = 0; d->limb[i] == 0; i++) {}
    for (p = 0; d->limb[i] % ipup__pow10[p + 1] == 0; p++) {}
    d->last_nonzero = d->n_digits - 1 - (9 * i + p);
}

static IPUP__UNUSED int ipup__decimal_digit(const ipup__decimal *d, int64_t j) {
    int64_t p;
    if (j < 0 || j >= d->n_digits) return 0;
    p = d->n_digits - 1 - j;
    return (int)(d->limb[p / 9] / ipup__pow10[p % 9] % 10u);
}

/* The digits of d kept to the first n significant ones, rounded half to even. */
typedef struct ipup__rounded {
    const ipup__decimal *dec;
    int64_t n_kept;  /* digits kept */
    int64_t bump_at; /* bumped: the digit bump_at gets +1 and the kept ones after it are 0 */
    int bumped;
    int rolled_over; /* all kept digits were 9: rounded up to 10^exp10 (a 1 and zeros) */
    int exp10;
} ipup__rounded;

static IPUP__UNUSED void ipup__round_digits(ipup__rounded *r, const ipup__decimal *d, int64_t n) {
    int dn, up;
    int64_t q;
    r->dec = d; r->bumped = r->rolled_over = 0; r->bump_at = -1; r->exp10 = d->exp10;
    if (n > (int64_t)d->n_digits + 1) n = d->n_digits + 1;
    r->n_kept = n < 0 ? 0 : n;
    if (n < 0 || d->n_digits == 0) return; /* below half a unit of the last kept place: 0 */
    dn = ipup__decimal_digit(d, n);
    up = dn > 5 ||
         (dn == 5 && (d->last_nonzero > n || (n > 0 && (ipup__decimal_digit(d, n - 1) & 1))));
    if (!up) return;
    for (q = n - 1; q >= 0 && ipup__decimal_digit(d, q) == 9; q--) {}
    if (q < 0) { r->rolled_over = 1; r->exp10 = d->exp10 + 1; }
    else { r->bumped = 1; r->bump_at = q; }
}

static IPUP__UNUSED int ipup__rounded_digit(const ipup__rounded *r, int64_t j) {
    if (j < 0) return 0;
    if (r->rolled_over) return j == 0;
    if (j >= r->n_kept) return 0;
    if (r->bumped && j >= r->bump_at)
        return j == r->bump_at ? ipup__decimal_digit(r->dec, j) + 1 : 0;
    return ipup__decimal_digit(r->dec, j);
}

/* the body of f e g conversions: digits of r in the style 'f' or 'e' with prec digits
   after the point */
typedef struct ipup__float_body {
    const ipup__rounded *r;
    int prec, alt, style, upper;
} ipup__float_body;

static IPUP__UNUSED void ipup__float_body_put(ipup__out *o, const void *arg) {
    const ipup__float_body *b = (const ipup__float_body *)arg;
    const ipup__rounded *r = b->r;
    int64_t E = r->exp10, p;
    if (b->style == 'f') {
        if (E < 0) ipup__putc(o, '0');
        for (p = E; p >= 0; p--) ipup__putc(o, (char)('0' + ipup__rounded_digit(r, E - p)));
        if (b->prec > 0 || b->alt) ipup__putc(o, '.');
        for (p = 1; p <= b->prec; p++) ipup__putc(o, (char)('0' + ipup__rounded_digit(r, E + p)));
    } else {
        char ex[8];
        int n = 0;
        uint32_t a = (uint32_t)(E < 0 ? -E : E);
        ipup__putc(o, (char)('0' + ipup__rounded_digit(r, 0)));
        if (b->prec > 0 || b->alt) ipup__putc(o, '.');
        for (p = 1; p <= b->prec; p++) ipup__putc(o, (char)('0' + ipup__rounded_digit(r, p)));
        ipup__putc(o, b->upper ? 'E' : 'e');
        ipup__putc(o, E < 0 ? '-' : '+');
        do { ex[n++] = (char)('0' + a % 10u); a /= 10u; } while (a);
        if (n < 2) ex[n++] = '0';
        while (n) ipup__putc(o, ex[--n]);
    }
}

/* f F e E g G */
static IPUP__UNUSED void ipup__fmt_double(ipup__out *o, const ipup__spec *sp, double v) {
    ipup__decimal d;
    ipup__rounded r;
    ipup__float_body b;
    uint64_t bits;
    char sign[2] = {0, 0};
    int c = sp->conv, upper = c == 'F' || c == 'E' || c == 'G', prec = sp->prec < 0 ? 6 : sp->prec;
    IPUPIPE_MEMCPY(&bits, &v, sizeof bits);
    if (bits >> 63) sign[0] = '-';
    else if (sp->plus) sign[0] = '+';
    else if (sp->space) sign[0] = ' ';
    if (((bits >> 52) & 0x7ff) == 0x7ff) { /* inf, nan: no zero padding */
        int nan = (bits & (((uint64_t)1 << 52) - 1)) != 0;
        ipup__field(o, sp, sign, 0, nan ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), NULL,
                    NULL, 0);
        return;
    }
    ipup__decimal_init(&d, v);
    b.r = &r; b.alt = sp->alt; b.upper = upper;
    if (c == 'f' || c == 'F') {
        ipup__round_digits(&r, &d, (int64_t)d.exp10 + 1 + prec);
        b.style = 'f'; b.prec = prec;
    } else if (c == 'e' || c == 'E') {
        ipup__round_digits(&r, &d, (int64_t)prec + 1);
        b.style = 'e'; b.prec = prec;
    } else { /* g: %e's exponent X after rounding to P digits picks the style */
        int P = prec == 0 ? 1 : prec, X;
        ipup__round_digits(&r, &d, P);
        X = r.exp10;
        if (P > X && X >= -4) { b.style = 'f'; b.prec = P - 1 - X; }
        else { b.style = 'e'; b.prec = P - 1; }
        if (!sp->alt) /* drop trailing zeros of the fraction */
            while (b.prec > 0 && ipup__rounded_digit(&r, b.style == 'f' ? (int64_t)X + b.prec
                                                                        : (int64_t)b.prec) == 0)
                b.prec--;
    }
    ipup__field(o, sp, sign, 0, "", ipup__float_body_put, &b, sp->zero);
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
        for (; *f >= '0' && *f <= '9'; f++)
            sp->width = sp->width > 214748363 ? 2147483647 : sp->width * 10 + (*f - '0');
    if (*f == '.') {
        f++;
        sp->prec = 0;
        if (*f == '*') {
            sp->prec = va_arg(*ap, int);
            if (sp->prec < 0) sp->prec = -1;
            f++;
        } else
            for (; *f >= '0' && *f <= '9'; f++)
                sp->prec = sp->prec > 214748363 ? 2147483647 : sp->prec * 10 + (*f - '0');
    }
    if (f[0] == 'h' && f[1] == 'h') { sp->size = 'H'; f += 2; }
    else if (f[0] == 'l' && f[1] == 'l') { sp->size = 'L'; f += 2; }
    else if (*f == 'h' || *f == 'l' || *f == 'z') sp->size = *f++;
    sp->conv = *f;
    return *f ? f + 1 : f;
}

/* fetch the argument of a d i u o x X conversion */
static IPUP__UNUSED uint64_t ipup__fmt_int_arg(const ipup__spec *sp, va_list *ap, int *neg) {
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
        v = ipup__fmt_int_arg(sp, ap, &neg);
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

/* >>output: ipup_buf_write, and the writer that stages a document in small pieces */
IPUPIPE_DEF int ipup_buf_write(void *user, const void *data, size_t n) {
    ipup_buf *b = (ipup_buf *)user;
    if (!b) return 0;
    if (b->buf && b->cap > 0) {
        size_t at = b->len < b->cap - 1 ? b->len : b->cap - 1,
               k = n < b->cap - 1 - at ? n : b->cap - 1 - at;
        if (k) IPUPIPE_MEMCPY(b->buf + at, data, k);
        b->buf[at + k] = '\0';
    }
    b->len += n;
    return 0;
}

typedef struct ipup__writer {
    ipup_write_fn write;
    void *user;
    int err;       /* write failed: nothing more is sent */
    size_t staged; /* bytes staged in buf */
    char buf[512];
} ipup__writer;

static IPUP__UNUSED void ipup__writer_flush(ipup__writer *w) {
    if (!w->err && w->staged && w->write(w->user, w->buf, w->staged) != 0) w->err = 1;
    w->staged = 0;
}
static IPUP__UNUSED void ipup__write_bytes(ipup__writer *w, const char *s, size_t n) {
    if (w->err) return;
    if (w->staged + n > sizeof w->buf) {
        ipup__writer_flush(w);
        if (n > sizeof w->buf) {
            if (!w->err && w->write(w->user, s, n) != 0) w->err = 1;
            return;
        }
    }
    IPUPIPE_MEMCPY(w->buf + w->staged, s, n);
    w->staged += n;
}
static IPUP__UNUSED void ipup__write_str(ipup__writer *w, const char *s) {
    ipup__write_bytes(w, s, ipup__strlen(s));
}
static IPUP__PRINTF(2, 3) IPUP__UNUSED void ipup__write_fmt(ipup__writer *w, const char *fmt, ...) {
    char tmp[256];
    int n;
    va_list ap;
    va_start(ap, fmt);
    n = ipup_vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) ipup__write_bytes(w, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
static IPUP__UNUSED void ipup__write_pad(ipup__writer *w, size_t n) {
    while (n--) ipup__write_bytes(w, " ", 1);
}
static IPUP__UNUSED int ipup__writer_end(ipup__writer *w) {
    ipup__writer_flush(w);
    return w->err ? IPUP_ERR_IO : IPUP_OK;
}
static IPUP__UNUSED void ipup__writer_init(ipup__writer *w, ipup_write_fn write, void *user) {
    w->write = write; w->user = user; w->err = 0; w->staged = 0;
}

/* >>messages: error and warning texts into the caller's msg buffer */
static IPUP__UNUSED void ipup__msgv(char *msg, size_t len, int append, const char *fmt,
                                    va_list ap) {
    size_t used;
    if (!msg || len == 0) return;
    used = append ? ipup__strlen(msg) : 0;
    if (used >= len) return;
    ipup_vsnprintf(msg + used, len - used, fmt, ap);
}
static IPUP__PRINTF(4, 5) IPUP__UNUSED int ipup__err(char *msg, size_t len, int code,
                                                     const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ipup__msgv(msg, len, 0, fmt, ap);
    va_end(ap);
    return code;
}
static IPUP__PRINTF(4, 5) IPUP__UNUSED void ipup__warn(char *msg, size_t len, int *count,
                                                       const char *fmt, ...) {
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

/* >>tables: the checks every reader of a table makes (its shape, the scratch size) */
static IPUP__UNUSED int ipup__work_ok(const ipup_table *t, const void *work, size_t work_bytes) {
    if (!work || ((uintptr_t)work & 7u) != 0) return 0;
    return work_bytes >= IPUP_SCHED_WORK_BYTES(t->stages, t->microbatches);
}

/* Basic shape checks shared by verify/measure/respace; 0 when fine. */
static IPUP__UNUSED int ipup__table_shape(const ipup_table *t, char *msg, size_t msg_len) {
    if (!t) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table is NULL");
    if (t->stages < 1 || t->stages > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d stages; need 1..%d",
                         (int)t->stages, IPUP_SCHED_MAX_STAGES);
    if (t->microbatches < 1 || t->microbatches > IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d micro-batches; need 1..%d",
                         (int)t->microbatches, IPUP_SCHED_MAX_MICROBATCHES);
    if (t->devices < 1 || t->devices > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d devices; need 1..%d",
                         (int)t->devices, IPUP_SCHED_MAX_STAGES);
    if (t->n_ops < 0 || (t->n_ops > 0 && !t->ops))
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "table has %d ops but no ops array",
                         (int)t->n_ops);
    if (t->dual && (t->stages % 2 != 0 || t->microbatches % 2 != 0 || t->concurrent ||
                    t->forward_only))
        return ipup__err(msg, msg_len, IPUP_ERR_ARG,
                         "a dual table (two model copies, DualPipe) needs an even S (got %d) and "
                         "an even M (got %d), no concurrent stages and not forward-only",
                         (int)t->stages, (int)t->microbatches);
    return 0;
}

/* A dual table (ipup_table.dual, DualPipe, docs/schedules.md §3) is two pipelines of S/2
   stages: stage s starts its copy (takes the input) / ends it (takes the loss), and
   micro-batch m runs stage s, by these; in any other table the chain is 0..S-1. */
static IPUP__UNUSED int ipup__first_stage(const ipup_table *t, int32_t s) {
    return s == 0 || (t->dual && s == t->stages / 2);
}
static IPUP__UNUSED int ipup__last_stage(const ipup_table *t, int32_t s) {
    return s == t->stages - 1 || (t->dual && s == t->stages / 2 - 1);
}
static IPUP__UNUSED int ipup__runs(const ipup_table *t, int32_t s, int32_t m) {
    return !t->dual || (s < t->stages / 2) == (m < t->microbatches / 2);
}

/* >>generate: schedule names, the closed forms, the placement, ipup_sched_generate */
static const char *const ipup__kind_names[IPUP_SCHED_KIND_COUNT] = {
    "grouped", "interleaved", "sequential", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1",
    "zb-h2",   "zb-v",        "v-min",      "v-half", "looped-bfs", "interleaved-zb",
    "dualpipe-v", "dualpipe"};

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
    if (ipup__name_eq(name, "zbh1") || ipup__name_eq(name, "zero-bubble")) {
        *out = IPUP_SCHED_ZBH1;
        return IPUP_OK;
    }
    if (ipup__name_eq(name, "i1f1b") || ipup__name_eq(name, "interleaved1f1b")) {
        *out = IPUP_SCHED_INTERLEAVED_1F1B;
        return IPUP_OK;
    }
    if (ipup__name_eq(name, "zb1p")) { *out = IPUP_SCHED_INTERLEAVED_ZB; return IPUP_OK; }
    if (ipup__name_eq(name, "zbv")) { *out = IPUP_SCHED_ZBV; return IPUP_OK; }
    if (ipup__name_eq(name, "zbh2")) { *out = IPUP_SCHED_ZBH2; return IPUP_OK; }
    if (ipup__name_eq(name, "pipedream-flush")) { *out = IPUP_SCHED_1F1B; return IPUP_OK; }
    if (ipup__name_eq(name, "fill-drain")) { *out = IPUP_SCHED_GPIPE; return IPUP_OK; }
    if (ipup__name_eq(name, "dualpipev")) { *out = IPUP_SCHED_DUALPIPE_V; return IPUP_OK; }
    /* TF's sharding: the model split over IPUs, one IPU working at a time */
    if (ipup__name_eq(name, "sharding")) { *out = IPUP_SCHED_SEQUENTIAL; return IPUP_OK; }
    return IPUP_ERR_PARSE;
}

typedef struct ipup__gen {
    int32_t S, M, P, V, kind;
    int32_t split_backward; /* B split into I + W (zb-h1) */
    int32_t shared_devices; /* some device holds several stages */
    int16_t stage_device[IPUP_SCHED_MAX_STAGES]; /* stage -> device */
    int16_t device_stage[IPUP_SCHED_MAX_STAGES]; /* device -> its stage when one stage per device,
                                                    else -1 */
    int16_t first_stage[IPUP_SCHED_MAX_STAGES];  /* device -> first stage on it, -1 */
    int16_t next_stage[IPUP_SCHED_MAX_STAGES];   /* stage -> next stage on the same device, -1 */
    ipup_op *ops;
    int32_t n_ops; /* ops written */
    int32_t step;  /* the step the next op goes into */
} ipup__gen;

static IPUP__UNUSED void ipup__emit(ipup__gen *g, int32_t dev, int32_t stage, int32_t mb,
                                    int kind) {
    ipup_op *o = &g->ops[g->n_ops++];
    o->step = g->step;
    o->mb = mb;
    o->stage = (int16_t)stage;
    o->device = (int16_t)dev;
    o->kind = (int8_t)kind;
    o->overlap_index = o->branch_plus1 = o->reserved_ = 0;
}

/* The op of stage s at raw (uncompacted) step t under a closed form (docs/schedules.md §3),
   or 0 when idle. */
static IPUP__UNUSED int ipup__closed_op(int kind, int32_t S, int32_t M, int32_t t, int32_t s,
                                        int32_t *mb) {
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
static IPUP__UNUSED int64_t ipup__closed_prio(int kind, int32_t S, int32_t M, int opk, int32_t s,
                                              int32_t m) {
    int64_t c, d;
    switch (kind) {
    case IPUP_SCHED_INTERLEAVED:
        return opk == IPUP_OP_F ? s + 2 * (int64_t)m : 2 * (int64_t)S - 1 - s + 2 * (int64_t)m;
    case IPUP_SCHED_GPIPE:
        return opk == IPUP_OP_F ? (int64_t)s + m : (int64_t)M + S - 1 + (S - 1 - s) + m;
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
    int32_t warmup = S - 1 - s < M ? S - 1 - s : M, rest, steady;
    if (k < warmup) { *mb = k; return IPUP_OP_F; }
    rest = k - warmup;
    steady = M - warmup;
    if (rest < 2 * steady) {
        if ((rest & 1) == 0) { *mb = warmup + rest / 2; return IPUP_OP_F; }
        *mb = rest / 2;
        return IPUP_OP_B;
    }
    *mb = rest - steady;
    return IPUP_OP_B;
}

/* Megatron-LM interleaved 1F1B program of device r (of P), position k, V chunks
   (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_
   interleaving): warm-up (P-r-1)*2 + (V-1)*P forwards, then 1F1B, then cool-down.
   Virtual index -> (chunk, micro-batch) in groups of P micro-batches (a last partial
   group keeps the same order with a smaller group; the generator does not use it: for
   M % P != 0 it pads to a multiple of P with phantom micro-batches instead). */
static IPUP__UNUSED void ipup__megatron_virtual_index(int32_t P, int32_t V, int32_t M, int32_t idx,
                                                      int32_t *chunk, int32_t *mb) {
    int32_t group = idx / (P * V), base = group * P, group_size = M - base < P ? M - base : P;
    int32_t j = idx - group * P * V;
    *chunk = j / group_size;
    *mb = base + j % group_size;
}
static IPUP__UNUSED int ipup__prog_megatron(int32_t P, int32_t V, int32_t M, int32_t r, int32_t k,
                                            int32_t *stage, int32_t *mb) {
    int32_t total = M * V, warm = (P - r - 1) * 2 + (V - 1) * P, rest, steady, idx, chunk;
    int kind;
    if (warm > total) warm = total;
    if (k < warm) { idx = k; kind = IPUP_OP_F; }
    else {
        rest = k - warm;
        steady = total - warm;
        if (rest < 2 * steady) {
            if ((rest & 1) == 0) { idx = warm + rest / 2; kind = IPUP_OP_F; }
            else { idx = rest / 2; kind = IPUP_OP_B; }
        } else { idx = rest - steady; kind = IPUP_OP_B; }
    }
    ipup__megatron_virtual_index(P, V, M, idx, &chunk, mb);
    if (kind == IPUP_OP_B) chunk = V - 1 - chunk;
    *stage = chunk * P + r;
    return kind;
}

/* -- dynamic placement --
   Step by step: at each step every device runs at most one op whose inputs were
   produced in strictly earlier steps (the counters are the state before the step).
   Each kind of op runs in increasing micro-batch order on each stage, so the state is
   three counters per stage and every table it makes accumulates in order. Which ready
   op a device runs is the schedule's rule: a row of ipup__dyn_rules per schedule kind
   (adding a schedule = adding a row). */
typedef struct ipup__dyn_state {
    const ipup__gen *g;
    /* per stage, the ops done: F, B or I, W (each kind in increasing micro-batch) */
    int32_t n_fwd[IPUP_SCHED_MAX_STAGES], n_bwd[IPUP_SCHED_MAX_STAGES];
    int32_t n_wgrad[IPUP_SCHED_MAX_STAGES];
    int32_t program_pos[IPUP_SCHED_MAX_STAGES]; /* device -> position in its program
                                                   (interleaved-1f1b) */
    int phase; /* grouped: IPUP_OP_F or IPUP_OP_B, the kind of every op of this step; else 0 */
} ipup__dyn_state;

typedef struct ipup__candidate { /* an op a device may run, and its rank (lower runs first) */
    int kind;
    int32_t stage, mb;
    int64_t key;
} ipup__candidate;

static IPUP__UNUSED int ipup__ready_fwd(const ipup__dyn_state *y, int32_t s, int32_t m) {
    return m < y->g->M && y->n_fwd[s] == m && (s == 0 || y->n_fwd[s - 1] > m);
}
static IPUP__UNUSED int ipup__ready_bwd(const ipup__dyn_state *y, int32_t s, int32_t m) {
    return m < y->g->M && y->n_bwd[s] == m && y->n_fwd[s] > m &&
           (s == y->g->S - 1 || y->n_bwd[s + 1] > m);
}
static IPUP__UNUSED int ipup__ready_wgrad(const ipup__dyn_state *y, int32_t s, int32_t m) {
    return m < y->g->M && y->n_wgrad[s] == m && y->n_bwd[s] > m;
}

/* 1f1b (and interleaved-1f1b with V = 1): the stage's own program; backward first
   (frees memory), then lower micro-batch */
static IPUP__UNUSED int ipup__rank_1f1b(const ipup__dyn_state *y, int32_t s, ipup__candidate *c) {
    const int32_t S = y->g->S, M = y->g->M;
    if (y->n_fwd[s] + y->n_bwd[s] >= 2 * M) return 0;
    c->kind = ipup__prog_1f1b(S, M, s, y->n_fwd[s] + y->n_bwd[s], &c->mb);
    if (!(c->kind == IPUP_OP_F ? ipup__ready_fwd(y, s, c->mb) : ipup__ready_bwd(y, s, c->mb)))
        return 0;
    c->key = (c->kind == IPUP_OP_F ? ((int64_t)1 << 40) : 0) + (int64_t)c->mb * 1024 + (S - s);
    return 1;
}

/* ZB-H1 (Qi et al. 2024, §3.1): F while the stage has fewer than S-s forwards awaiting
   their I (1F1B's warm-up and steady state) and fewer than S micro-batches holding
   activations (1F1B's peak, that of stage 0); else I as soon as its gradient has
   arrived; else W, which so fills the bubbles (stage s postpones up to s of them). With
   F = I = W this reaches the paper's bubble (S-1)(F+B-W): T = 3M + S - 1 steps for
   M >= S. */
/* the zero-bubble rank: F while fewer than fwd_cap micro-batches wait for their I and fewer
   than held_cap for their W, else I, else W */
static IPUP__UNUSED int ipup__rank_zb(const ipup__dyn_state *y, int32_t s, ipup__candidate *c,
                                      int32_t fwd_cap, int32_t held_cap) {
    const int32_t S = y->g->S;
    if (ipup__ready_fwd(y, s, y->n_fwd[s]) && y->n_fwd[s] - y->n_bwd[s] < fwd_cap &&
        y->n_fwd[s] - y->n_wgrad[s] < held_cap) {
        c->kind = IPUP_OP_F; c->mb = y->n_fwd[s]; c->key = 0;
    } else if (ipup__ready_bwd(y, s, y->n_bwd[s])) {
        c->kind = IPUP_OP_I; c->mb = y->n_bwd[s]; c->key = (int64_t)1 << 40;
    } else if (ipup__ready_wgrad(y, s, y->n_wgrad[s])) {
        c->kind = IPUP_OP_W; c->mb = y->n_wgrad[s]; c->key = (int64_t)2 << 40;
    } else return 0;
    c->key += (int64_t)c->mb * 1024 + (S - s);
    return 1;
}
static IPUP__UNUSED int ipup__rank_zbh1(const ipup__dyn_state *y, int32_t s, ipup__candidate *c) {
    return ipup__rank_zb(y, s, c, y->g->S - s, y->g->S);
}

/* grouped, interleaved, gpipe on shared devices: list scheduling in the closed form's
   order (the raw step of each op), restricted to this step's phase for grouped */
static IPUP__UNUSED int ipup__rank_closed(const ipup__dyn_state *y, int32_t s, ipup__candidate *c) {
    const ipup__gen *g = y->g;
    int64_t kf = -1, kb = -1;
    if (ipup__ready_fwd(y, s, y->n_fwd[s]))
        kf = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_F, s, y->n_fwd[s]);
    if (ipup__ready_bwd(y, s, y->n_bwd[s]))
        kb = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_B, s, y->n_bwd[s]);
    if (y->phase == IPUP_OP_F) kb = -1;
    if (y->phase == IPUP_OP_B) kf = -1;
    if (kf < 0 && kb < 0) return 0;
    if (kb >= 0 && (kf < 0 || kb <= kf)) {
        c->kind = IPUP_OP_B;
        c->mb = y->n_bwd[s];
        c->key = kb * 2;
    } else {
        c->kind = IPUP_OP_F;
        c->mb = y->n_fwd[s];
        c->key = kf * 2 + 1;
    }
    c->key = c->key * 1024 + s;
    return 1;
}

/* Grouped keeps its rule with shared devices: every step is all-forward or
   all-backward, the kind of the most urgent ready op. */
static IPUP__UNUSED int ipup__phase_grouped(const ipup__dyn_state *y) {
    const ipup__gen *g = y->g;
    int64_t best_key = -1, v;
    int32_t s;
    int phase = 0;
    for (s = 0; s < g->S; s++) {
        if (ipup__ready_fwd(y, s, y->n_fwd[s])) {
            v = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_F, s, y->n_fwd[s]) * 2 + 1;
            if (best_key < 0 || v < best_key) { best_key = v; phase = IPUP_OP_F; }
        }
        if (ipup__ready_bwd(y, s, y->n_bwd[s])) {
            v = ipup__closed_prio(g->kind, g->S, g->M, IPUP_OP_B, s, y->n_bwd[s]) * 2;
            if (best_key < 0 || v < best_key) { best_key = v; phase = IPUP_OP_B; }
        }
    }
    return phase;
}

typedef int (*ipup__rank_fn)(const ipup__dyn_state *y, int32_t s, ipup__candidate *c);

/* the best-ranked ready op among the stages of device d (inline: each caller passes a
   constant rank, which the compiler then calls directly) */
static inline int ipup__pick_stages(ipup__dyn_state *y, int32_t d, ipup__rank_fn rank,
                                    ipup__candidate *best) {
    int32_t s;
    best->kind = 0;
    for (s = y->g->first_stage[d]; s >= 0; s = y->g->next_stage[s]) {
        ipup__candidate c;
        if (!rank(y, s, &c)) continue;
        c.stage = s;
        if (best->kind == 0 || c.key < best->key) *best = c;
    }
    return best->kind != 0;
}

/* interleaved-1f1b with V > 1: device d's Megatron program, its next op when ready.
   M % P != 0: the program of m_padded = ceil(M/P)*P micro-batches with the ops of the phantom
   ones (m >= M) skipped; dropping ops from a deadlock-free program keeps it
   deadlock-free. */
static IPUP__UNUSED int ipup__pick_megatron(ipup__dyn_state *y, int32_t d, ipup__candidate *best) {
    const ipup__gen *g = y->g;
    int32_t stage = 0, m = 0, m_padded = (g->M + g->P - 1) / g->P * g->P;
    int k = 0;
    best->kind = 0;
    if (g->V <= 1) return ipup__pick_stages(y, d, ipup__rank_1f1b, best);
    while (y->program_pos[d] < 2 * m_padded * g->V) {
        k = ipup__prog_megatron(g->P, g->V, m_padded, d, y->program_pos[d], &stage, &m);
        if (m < g->M) break;
        y->program_pos[d]++;
    }
    if (y->program_pos[d] >= 2 * m_padded * g->V) return 0;
    if (!(k == IPUP_OP_F ? ipup__ready_fwd(y, stage, m) : ipup__ready_bwd(y, stage, m))) return 0;
    best->kind = k; best->stage = stage; best->mb = m; best->key = 0;
    return 1;
}

static IPUP__UNUSED int ipup__pick_closed(ipup__dyn_state *y, int32_t d, ipup__candidate *best) {
    return ipup__pick_stages(y, d, ipup__rank_closed, best);
}
static IPUP__UNUSED int ipup__pick_1f1b(ipup__dyn_state *y, int32_t d, ipup__candidate *best) {
    return ipup__pick_stages(y, d, ipup__rank_1f1b, best);
}
static IPUP__UNUSED int ipup__pick_zbh1(ipup__dyn_state *y, int32_t d, ipup__candidate *best) {
    return ipup__pick_stages(y, d, ipup__rank_zbh1, best);
}

typedef struct ipup__dyn_rule {
    /* device d's op this step, 0: idle */
    int (*pick)(ipup__dyn_state *y, int32_t d, ipup__candidate *best);
    int (*phase)(const ipup__dyn_state *y); /* NULL, or the kind of all ops of the step */
} ipup__dyn_rule;

static int ipup__pick_zbh2(ipup__dyn_state *y, int32_t d, ipup__candidate *best);
/* one row per ipup_sched_kind, in its order (sequential never shares a step: unused) */
static const ipup__dyn_rule ipup__dyn_rules[IPUP_SCHED_KIND_COUNT] = {
    {ipup__pick_closed, ipup__phase_grouped}, /* grouped */
    {ipup__pick_closed, NULL},                /* interleaved */
    {ipup__pick_closed, NULL},                /* sequential */
    {ipup__pick_closed, NULL},                /* gpipe */
    {ipup__pick_1f1b, NULL},                  /* 1f1b */
    {ipup__pick_megatron, NULL},              /* interleaved-1f1b */
    {ipup__pick_zbh1, NULL},                  /* zb-h1 */
    {ipup__pick_zbh2, NULL},                  /* zb-h2 */
    {NULL, NULL},                             /* zb-v: ipup__gen_programs */
    {NULL, NULL},                             /* v-min: ipup__gen_programs */
    {NULL, NULL},                             /* v-half: ipup__gen_programs */
    {NULL, NULL},                             /* looped-bfs: ipup__gen_programs */
    {NULL, NULL},                             /* interleaved-zb: ipup__gen_programs */
    {ipup__pick_closed, NULL},                /* dualpipe-v: unused (ipup__dpv_generate) */
    {ipup__pick_closed, NULL},                /* dualpipe: unused (ipup__dp_generate) */
};

static IPUP__UNUSED int ipup__run_dynamic(ipup__gen *g, char *msg, size_t msg_len) {
    const ipup__dyn_rule *rule = &ipup__dyn_rules[g->kind];
    ipup__dyn_state y;
    ipup__candidate pick;
    int32_t chosen_stage[IPUP_SCHED_MAX_STAGES], chosen_mb[IPUP_SCHED_MAX_STAGES], s, d;
    int8_t chosen_kind[IPUP_SCHED_MAX_STAGES];
    int64_t total = (int64_t)(g->split_backward ? 3 : 2) * g->S * g->M, done = 0;
    y.g = g;
    for (s = 0; s < g->S; s++) y.n_fwd[s] = y.n_bwd[s] = y.n_wgrad[s] = 0;
    for (d = 0; d < g->P; d++) y.program_pos[d] = 0;
    while (done < total) {
        int any = 0;
        y.phase = rule->phase ? rule->phase(&y) : 0;
        for (d = 0; d < g->P; d++) {
            chosen_kind[d] = 0;
            if (!rule->pick(&y, d, &pick)) continue;
            chosen_kind[d] = (int8_t)pick.kind;
            chosen_stage[d] = pick.stage;
            chosen_mb[d] = pick.mb;
            any = 1;
        }
        if (!any)
            return ipup__err(
                msg, msg_len, IPUP_ERR_CONFIG,
                "%s: no device can run an op at step %d (%lld of %lld ops placed): the schedule "
                "deadlocks with this stage -> device mapping; try the default mapping",
                ipup_sched_kind_name((ipup_sched_kind)g->kind), (int)g->step + 1, (long long)done,
                (long long)total);
        for (d = 0; d < g->P; d++) {
            if (!chosen_kind[d]) continue;
            ipup__emit(g, d, chosen_stage[d], chosen_mb[d], chosen_kind[d]);
            if (chosen_kind[d] == IPUP_OP_F) y.n_fwd[chosen_stage[d]]++;
            else if (chosen_kind[d] == IPUP_OP_W) y.n_wgrad[chosen_stage[d]]++;
            else y.n_bwd[chosen_stage[d]]++;
            y.program_pos[d]++;
            done++;
        }
        g->step++;
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
static IPUP__UNUSED int ipup__gen_validate(const ipup_sched_config *cfg, char *msg,
                                           size_t msg_len) {
    int kind = (int)cfg->kind;
    const char *kname;
    if (kind < 0 || kind >= IPUP_SCHED_KIND_COUNT)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG,
                         "unknown schedule kind %d (valid: 0..%d, see ipup_sched_kind)", kind,
                         IPUP_SCHED_KIND_COUNT - 1);
    kname = ipup__kind_names[kind];
    if (cfg->stages < 1 || cfg->stages > IPUP_SCHED_MAX_STAGES)
        return ipup__err(
            msg, msg_len, IPUP_ERR_CONFIG,
            "%s: stages S=%d is out of range: need 1 <= S <= %d (IPUP_SCHED_MAX_STAGES)", kname,
            (int)cfg->stages, IPUP_SCHED_MAX_STAGES);
    if (cfg->microbatches < 1 || cfg->microbatches > IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: micro-batches M=%d is out of range: need 1 <= M <= %d", kname,
                         (int)cfg->microbatches, IPUP_SCHED_MAX_MICROBATCHES);
    if (cfg->devices < 0 || cfg->devices > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: devices P=%d is out of range: need 0 (automatic) or 1..%d", kname,
                         (int)cfg->devices, IPUP_SCHED_MAX_STAGES);
    if (cfg->virtual_stages < 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: virtual stages V=%d must be >= 0 (0 = automatic)", kname,
                         (int)cfg->virtual_stages);
    if (cfg->popxl != 0 && cfg->popxl != 1)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: popxl=%d: use 0 (no PopXL rules) or 1 (PopXL's convention)", kname,
                         (int)cfg->popxl);
    return IPUP_OK;
}

/* map, interleaved-1f1b: V stages per device, stage s on device s mod P, P = S / V */
static IPUP__UNUSED int ipup__gen_map_virtual(ipup__gen *g, const ipup_sched_config *cfg, char *msg,
                                              size_t msg_len) {
    int32_t S = g->S, V = cfg->virtual_stages, P, s;
    if (V == 0) {
        if (cfg->devices > 0) {
            if (S % cfg->devices != 0)
                return ipup__err(
                    msg, msg_len, IPUP_ERR_CONFIG,
                    "interleaved-1f1b: %d stages cannot be spread evenly over %d devices (each "
                    "device holds V = S/P stages); choose S a multiple of P",
                    (int)S, (int)cfg->devices);
            V = S / cfg->devices;
        } else V = (S % 2 == 0) ? 2 : 1;
    }
    if (V > S || S % V != 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "interleaved-1f1b: S=%d stages with V=%d virtual stages per device: S "
                         "must be a multiple of V (S = P x V, stage s on device s mod P); choose V "
                         "among the divisors of S",
                         (int)S, (int)V);
    P = S / V;
    if (cfg->devices > 0 && cfg->devices != P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "interleaved-1f1b: S=%d stages, V=%d per device needs P=%d devices, but "
                         "devices=%d; drop one of --devices/--virtual or make S = P x V",
                         (int)S, (int)V, (int)P, (int)cfg->devices);
    for (s = 0; s < S; s++) {
        g->stage_device[s] = (int16_t)(s % P);
        if (cfg->stage_device && cfg->stage_device[s] != s % P)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "interleaved-1f1b places stage s on device s mod P (Megatron virtual "
                             "stages), but the mapping puts stage %d on device %d instead of %d; "
                             "drop the mapping and give V instead",
                             (int)s, (int)cfg->stage_device[s], (int)(s % P));
    }
    g->P = P;
    g->V = V;
    return IPUP_OK;
}

/* map, other schedules: the given stage -> device mapping (default s -> s) */
static IPUP__UNUSED int ipup__gen_map_given(ipup__gen *g, const ipup_sched_config *cfg, int *nwarn,
                                            char *msg, size_t msg_len) {
    const char *kname = ipup__kind_names[g->kind];
    int32_t s, max_device = -1;
    if (cfg->virtual_stages > 1)
        ipup__warn(msg, msg_len, nwarn,
                   "%s: virtual stages V=%d ignored (only interleaved-1f1b uses them)", kname,
                   (int)cfg->virtual_stages);
    for (s = 0; s < g->S; s++) {
        int32_t dev = cfg->stage_device ? cfg->stage_device[s] : s;
        if (dev < 0 || dev >= IPUP_SCHED_MAX_STAGES || (cfg->devices > 0 && dev >= cfg->devices)) {
            if (msg && msg_len) msg[0] = '\0';
            return ipup__err(
                msg, msg_len, IPUP_ERR_CONFIG,
                "%s: stage %d is mapped to device %d, but the devices are 0..%d; fix the mapping "
                "(the default puts stage s on device s) or raise the device count",
                kname, (int)s, (int)dev,
                (int)((cfg->devices > 0 ? cfg->devices : IPUP_SCHED_MAX_STAGES) - 1));
        }
        g->stage_device[s] = (int16_t)dev;
        if (dev > max_device) max_device = dev;
    }
    g->P = cfg->devices > 0 ? cfg->devices : max_device + 1;
    g->V = 1;
    return IPUP_OK;
}

static int ipup__kind_vshape(int kind);
static int ipup__kind_looped(int kind);
static int ipup__gen_map_vshape(ipup__gen *g, const ipup_sched_config *cfg, char *msg,
                                size_t msg_len);
static int ipup__gen_map_looped(ipup__gen *g, const ipup_sched_config *cfg, char *msg,
                                size_t msg_len);
/* map: stage -> device, then per device its stages (first/next), whether stages share a
   device, and a warning per idle device */
static IPUP__UNUSED int ipup__gen_map(ipup__gen *g, const ipup_sched_config *cfg, int *nwarn,
                                      char *msg, size_t msg_len) {
    int32_t s, d;
    int rc = g->kind == IPUP_SCHED_INTERLEAVED_1F1B ? ipup__gen_map_virtual(g, cfg, msg, msg_len)
             : ipup__kind_vshape(g->kind)           ? ipup__gen_map_vshape(g, cfg, msg, msg_len)
             : ipup__kind_looped(g->kind)           ? ipup__gen_map_looped(g, cfg, msg, msg_len)
                                          : ipup__gen_map_given(g, cfg, nwarn, msg, msg_len);
    if (rc) return rc;
    for (d = 0; d < g->P; d++) { g->device_stage[d] = -1; g->first_stage[d] = -1; }
    for (s = g->S - 1; s >= 0; s--) {
        d = g->stage_device[s];
        g->next_stage[s] = g->first_stage[d];
        g->first_stage[d] = (int16_t)s;
        if (g->device_stage[d] >= 0 || g->next_stage[s] >= 0) g->shared_devices = 1;
        g->device_stage[d] = (int16_t)s;
    }
    if (g->shared_devices)
        for (d = 0; d < g->P; d++) g->device_stage[d] = -1;
    for (d = 0; d < g->P; d++)
        if (g->first_stage[d] < 0)
            ipup__warn(msg, msg_len, nwarn, "%s: device %d runs no stage (idle for the whole step)",
                       ipup__kind_names[g->kind], (int)d);
    return IPUP_OK;
}

/* A per-schedule API rule (docs/schedules.md §5) that does not hold: the error text
   under strict, else the warning. */
static IPUP__UNUSED int ipup__gen_rule(int strict, int *nwarn, char *msg, size_t msg_len,
                                       const char *err, const char *warn) {
    if (strict) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s", err);
    }
    ipup__warn(msg, msg_len, nwarn, "%s", warn);
    return IPUP_OK;
}

/* the per-schedule API rules (docs/schedules.md §5): warnings, errors under strict */
static IPUP__UNUSED int ipup__gen_rules(const ipup__gen *g, int strict, int *nwarn, char *msg,
                                        size_t msg_len) {
    char err_text[400], warn_text[400];
    const char *kname = ipup__kind_names[g->kind];
    const int32_t S = g->S, M = g->M, P = g->P;
    const int kind = g->kind;
    int rc = IPUP_OK;
    if (kind == IPUP_SCHED_INTERLEAVED && M % S != 0) {
        ipup_snprintf(err_text, sizeof err_text,
                      "PipelineSchedule.Interleaved: gradient_accumulation_count (M=%d) must be a "
                      "multiple of the number of pipeline stages (S=%d); use M=%d or %d",
                      (int)M, (int)S, (int)(M / S * S > 0 ? M / S * S : S), (int)((M / S + 1) * S));
        ipup_snprintf(
            warn_text, sizeof warn_text,
            "PipelineSchedule.Interleaved: gradient_accumulation_count (M=%d) is not a multiple of "
            "the number of pipeline stages (S=%d) (an error on Graphcore's API and under strict)",
            (int)M, (int)S);
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, err_text, warn_text)) != IPUP_OK)
            return rc;
    }
    if (kind == IPUP_SCHED_GROUPED && M % (2 * S) != 0) {
        ipup_snprintf(err_text, sizeof err_text,
                      "PipelineSchedule.Grouped: gradient_accumulation_count (M=%d) must be a "
                      "multiple of 2 x the number of pipeline stages (2S=%d); use M=%d",
                      (int)M, (int)(2 * S), (int)((M / (2 * S) + 1) * 2 * S));
        ipup_snprintf(
            warn_text, sizeof warn_text,
            "PipelineSchedule.Grouped: gradient_accumulation_count (M=%d) is not a multiple of 2 x "
            "the number of pipeline stages (2S=%d) (an error on Graphcore's API and under strict)",
            (int)M, (int)(2 * S));
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, err_text, warn_text)) != IPUP_OK)
            return rc;
    }
    if ((kind == IPUP_SCHED_INTERLEAVED || kind == IPUP_SCHED_GROUPED ||
         kind == IPUP_SCHED_SEQUENTIAL) &&
        !ipup__is_pow2(P)) {
        ipup_snprintf(err_text, sizeof err_text,
                      "%s: the model uses %d IPUs, but multi-IPU devices come in powers of two (1, "
                      "2, 4, 8, 16, 32, 64); map the stages onto %d IPUs",
                      kname, (int)P, (int)ipup__pow2_ceil(P));
        ipup_snprintf(warn_text, sizeof warn_text,
                      "%s: %d IPUs is not a power of two; Graphcore multi-IPU devices come in 1, "
                      "2, 4, 8, 16, 32 or 64 IPUs (an error under strict)",
                      kname, (int)P);
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, err_text, warn_text)) != IPUP_OK)
            return rc;
    }
    if (kind == IPUP_SCHED_INTERLEAVED_1F1B && g->V > 1 && M % P != 0) {
        ipup_snprintf(err_text, sizeof err_text,
                      "interleaved-1f1b: Megatron-LM requires the number of micro-batches (M=%d) "
                      "to be a multiple of the pipeline-parallel size (P=%d); use M=%d",
                      (int)M, (int)P, (int)((M / P + 1) * P));
        ipup_snprintf(warn_text, sizeof warn_text,
                      "interleaved-1f1b: M=%d is not a multiple of P=%d (Megatron-LM's rule); "
                      "placed as Megatron's program for M=%d with the ops of the %d extra "
                      "micro-batches left out (an error under strict)",
                      (int)M, (int)P, (int)((M + P - 1) / P * P), (int)((M + P - 1) / P * P - M));
        if ((rc = ipup__gen_rule(strict, nwarn, msg, msg_len, err_text, warn_text)) != IPUP_OK)
            return rc;
    }
    return IPUP_OK;
}

static int ipup__gen_programs(ipup__gen *g, char *msg, size_t msg_len);
/* place every op: sequential in order, the closed forms column by column (all-idle
   columns dropped) when each device holds one stage, else the dynamic placement */
static IPUP__UNUSED int ipup__gen_place(ipup__gen *g, int32_t need, char *msg, size_t msg_len) {
    const int kind = g->kind;
    int32_t s, d, m;
    if (kind == IPUP_SCHED_SEQUENTIAL) {
        for (m = 0; m < g->M; m++) {
            for (s = 0; s < g->S; s++) {
                ipup__emit(g, g->stage_device[s], s, m, IPUP_OP_F);
                g->step++;
            }
            for (s = g->S - 1; s >= 0; s--) {
                ipup__emit(g, g->stage_device[s], s, m, IPUP_OP_B);
                g->step++;
            }
        }
        return IPUP_OK;
    }
    if ((kind == IPUP_SCHED_INTERLEAVED || kind == IPUP_SCHED_GROUPED ||
         kind == IPUP_SCHED_GPIPE) &&
        !g->shared_devices) {
        int32_t raw = g->S + 2 * (g->M + g->S) + 2, t;
        for (t = 0; t < raw && g->n_ops < need; t++) {
            int32_t before = g->n_ops;
            for (d = 0; d < g->P; d++) {
                int k;
                s = g->device_stage[d];
                if (s < 0) continue;
                k = ipup__closed_op(kind, g->S, g->M, t, s, &m);
                if (k) ipup__emit(g, d, s, m, k);
            }
            if (g->n_ops > before) g->step++; /* compaction: all-idle columns are dropped */
        }
        return IPUP_OK;
    }
    if (ipup__kind_vshape(kind) || ipup__kind_looped(kind))
        return ipup__gen_programs(g, msg, msg_len);
    return ipup__run_dynamic(g, msg, msg_len);
}

/* "never fills", true to the table: no step has every device in use busy (the phases of
   §4 have no main). Sequential never overlaps stages by design and is not warned about. */
static IPUP__UNUSED void ipup__gen_fill_warning(const ipup_table *t, int kind, int *nwarn,
                                                char *msg, size_t msg_len) {
    int32_t ph[6];
    if (kind == IPUP_SCHED_SEQUENTIAL || t->devices < 2 || ipup_sched_phases(t, ph) != IPUP_OK ||
        ph[3] >= ph[2])
        return;
    ipup__warn(msg, msg_len, nwarn,
               "%s: S=%d M=%d: the pipeline never fills (no step has all %d devices busy; more "
               "micro-batches fill it)",
               ipup__kind_names[kind], (int)t->stages, (int)t->microbatches, (int)t->devices);
}

/* -- zb-h2, zb-v, v-min, v-half, looped-bfs, interleaved-zb (docs/schedules.md §3) --
   zb-h2 is placed step by step (a row of ipup__dyn_rules); zb-v, looped-bfs and
   interleaved-zb are PyTorch's per-device orders and v-min, v-half the controllable-memory
   paper's (ipup__prog_vcm), written device by device and then placed as early as
   dependencies allow (ipup__gen_programs). Every one runs each kind of op (F, B or I, W) of a stage in
   increasing micro-batch, so all of them accumulate in order. */

static IPUP__UNUSED int ipup__kind_vshape(int kind) {
    return kind == IPUP_SCHED_ZBV || kind == IPUP_SCHED_VMIN || kind == IPUP_SCHED_VHALF;
}
static IPUP__UNUSED int ipup__kind_looped(int kind) {
    return kind == IPUP_SCHED_LOOPED_BFS || kind == IPUP_SCHED_INTERLEAVED_ZB;
}
/* the schedules whose backward is split into I and W */
static IPUP__UNUSED int ipup__kind_split(int kind) {
    return kind == IPUP_SCHED_ZBH1 || kind == IPUP_SCHED_ZBH2 || kind == IPUP_SCHED_ZBV ||
           kind == IPUP_SCHED_VMIN || kind == IPUP_SCHED_VHALF ||
           kind == IPUP_SCHED_INTERLEAVED_ZB;
}

/* ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3.1 and Fig. 3): as
   ZB-H1, but stage s runs F while fewer than 2(S-s)-1 of its forwards await their I (the
   steps before its first I can arrive, so the warm-up has no bubble) and fewer than 2S-1
   micro-batches hold activations (the paper's peak, 2p-1, on stage 0); else I; else W. */
static IPUP__UNUSED int ipup__rank_zbh2(const ipup__dyn_state *y, int32_t s, ipup__candidate *c) {
    return ipup__rank_zb(y, s, c, 2 * (y->g->S - s) - 1, 2 * y->g->S - 1);
}
static IPUP__UNUSED int ipup__pick_zbh2(ipup__dyn_state *y, int32_t d, ipup__candidate *best) {
    return ipup__pick_stages(y, d, ipup__rank_zbh2, best);
}

/* map, zb-v, v-min, v-half: the V, device d holds stages d and 2P-1-d, S = 2P */
static IPUP__UNUSED int ipup__gen_map_vshape(ipup__gen *g, const ipup_sched_config *cfg,
                                             char *msg, size_t msg_len) {
    const char *kname = ipup__kind_names[g->kind];
    int32_t S = g->S, P = S / 2, s;
    if (S % 2 != 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s needs S = 2 x devices (device d holds stages d and 2P-1-d, the V), "
                         "but S=%d is odd; use S=%d",
                         kname, (int)S, (int)(S + 1));
    if (cfg->devices > 0 && cfg->devices != P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s needs S = 2 x devices (device d holds stages d and 2P-1-d), but S=%d "
                         "and devices=%d; use S=%d or devices=%d",
                         kname, (int)S, (int)cfg->devices, (int)(2 * cfg->devices), (int)P);
    if (cfg->virtual_stages != 0 && cfg->virtual_stages != 2)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s holds exactly 2 stages per device (the V), but V=%d; drop V", kname,
                         (int)cfg->virtual_stages);
    for (s = 0; s < S; s++) {
        int32_t dev = s < P ? s : S - 1 - s;
        g->stage_device[s] = (int16_t)dev;
        if (cfg->stage_device && cfg->stage_device[s] != dev)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s places stage s on the V (device d holds stages d and 2P-1-d), "
                             "but the mapping puts stage %d on device %d instead of %d; drop the "
                             "mapping or give the V (for S=4: 0,1,1,0)",
                             kname, (int)s, (int)cfg->stage_device[s], (int)dev);
    }
    g->P = P;
    g->V = 2;
    return IPUP_OK;
}

/* map, looped-bfs, interleaved-zb: V stages per device, stage s on device s mod P (as
   interleaved-1f1b; PyTorch's "loop" style) */
static IPUP__UNUSED int ipup__gen_map_looped(ipup__gen *g, const ipup_sched_config *cfg,
                                             char *msg, size_t msg_len) {
    const char *kname = ipup__kind_names[g->kind];
    int32_t S = g->S, V = cfg->virtual_stages, P, s;
    if (V == 0) {
        if (cfg->devices > 0) {
            if (S % cfg->devices != 0)
                return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                                 "%s: %d stages cannot be spread evenly over %d devices (each "
                                 "device holds V = S/P stages); choose S a multiple of P",
                                 kname, (int)S, (int)cfg->devices);
            V = S / cfg->devices;
        } else V = (S % 2 == 0) ? 2 : 1;
    }
    if (V > S || S % V != 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: S=%d stages with V=%d stages per device: S must be a multiple of V "
                         "(S = P x V, stage s on device s mod P); choose V among the divisors of S",
                         kname, (int)S, (int)V);
    P = S / V;
    if (cfg->devices > 0 && cfg->devices != P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: S=%d stages, V=%d per device needs P=%d devices, but devices=%d; "
                         "drop one of --devices/--virtual or make S = P x V",
                         kname, (int)S, (int)V, (int)P, (int)cfg->devices);
    for (s = 0; s < S; s++) {
        g->stage_device[s] = (int16_t)(s % P);
        if (cfg->stage_device && cfg->stage_device[s] != s % P)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s places stage s on device s mod P, but the mapping puts stage %d "
                             "on device %d instead of %d; drop the mapping and give V instead",
                             kname, (int)s, (int)cfg->stage_device[s], (int)(s % P));
    }
    g->P = P;
    g->V = V;
    return IPUP_OK;
}

/* PopXL's rule (its pipelining tutorial: "the gradient_accumulation factor needs to be >=
   2 * number of pipeline stages"), with PopXL's count of pipeline stages, 2S-1 for S model
   stages: a warning, an error under strict. Only when cfg->popxl asks for the convention. */
static IPUP__UNUSED int ipup__gen_rule_popxl(const ipup__gen *g, const ipup_sched_config *cfg,
                                             int *nwarn, char *msg, size_t msg_len) {
    char err_text[400], warn_text[400];
    const int32_t stages = 2 * g->S - 1, need = 2 * (2 * g->S - 1);
    if (!cfg->popxl || g->M >= need) return IPUP_OK;
    ipup_snprintf(err_text, sizeof err_text,
                  "PopXL: gradient accumulation (M=%d) must be at least 2 x the number of PopXL "
                  "pipeline stages (%d stages, forward and backward counted apart: 2 x %d = %d); "
                  "use M=%d or more",
                  (int)g->M, (int)stages, (int)stages, (int)need, (int)need);
    ipup_snprintf(warn_text, sizeof warn_text,
                  "PopXL: gradient accumulation M=%d is less than 2 x the %d PopXL pipeline "
                  "stages (%d); the PopXL tutorial asks for M >= %d (an error under strict)",
                  (int)g->M, (int)stages, (int)need, (int)need);
    return ipup__gen_rule(cfg->strict, nwarn, msg, msg_len, err_text, warn_text);
}

/* PyTorch's ScheduleInterleavedZeroBubble needs M to be a multiple of its number of rounds,
   max(1, M / P) (torch/distributed/pipelining/schedules.py); always an error, as there */
static IPUP__UNUSED int ipup__gen_rules_sgen(const ipup__gen *g, char *msg, size_t msg_len) {
    int32_t rounds = g->M / g->P > 1 ? g->M / g->P : 1;
    if (g->kind == IPUP_SCHED_INTERLEAVED_ZB && g->M % rounds != 0) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "interleaved-zb needs M to be a multiple of its number of rounds, "
                         "max(1, M / P) = %d (PyTorch's ScheduleInterleavedZeroBubble), but M=%d "
                         "with P=%d; use M=%d or M=%d (a multiple of P, or M < 2P)",
                         (int)rounds, (int)g->M, (int)g->P, (int)(g->M / g->P * g->P),
                         (int)((g->M / g->P + 1) * g->P));
    }
    return IPUP_OK;
}

/* looped-bfs program of device d (PyTorch's ScheduleLoopedBFS, after Lamy-Poirier,
   "Breadth-First Pipeline Parallelism", 2022): every forward of its first stage, then of
   the next, ...; then the backwards stage by stage from the last. PyTorch runs each
   stage's backwards from micro-batch M-1 down to 0; ipupipe runs them from 0 up (in-order
   accumulation, the same bits as every other schedule): the only difference. */
static IPUP__UNUSED void ipup__prog_looped_bfs(ipup__gen *g, int32_t d) {
    int32_t v, m;
    for (v = 0; v < g->V; v++)
        for (m = 0; m < g->M; m++) ipup__emit(g, d, v * g->P + d, m, IPUP_OP_F);
    for (v = g->V - 1; v >= 0; v--)
        for (m = 0; m < g->M; m++) ipup__emit(g, d, v * g->P + d, m, IPUP_OP_B);
}

/* the op of kind k of stage s on device d, its micro-batch the stage's count of that kind
   (cnt: [3][IPUP_SCHED_MAX_STAGES] by local stage index s / P: F, I, W) */
static IPUP__UNUSED void ipup__prog_next(ipup__gen *g, int32_t d, int32_t s, int k,
                                         int32_t (*cnt)[IPUP_SCHED_MAX_STAGES]) {
    int32_t *c = &cnt[k == IPUP_OP_F ? 0 : k == IPUP_OP_W ? 2 : 1][s / g->P];
    ipup__emit(g, d, s, (*c)++, k);
}

/* interleaved-zb program of device d: PyTorch's ScheduleInterleavedZeroBubble (ZB1P of Qi
   et al. 2024 on V looped stages; _get_1f1b_rank_ops with zero bubble): warm-up
   min((V-1) R + P-1-d, M V) forwards, R = M / max(1, M / P) micro-batches per round; then
   for each remaining forward an F, an I and, after the first d of them, the oldest W; then
   the remaining I each with the oldest W; then the remaining Ws. Op k's stage: forwards
   chunk (k / R) mod V, backwards chunk V-1 - ((k - warm-up) / R) mod V. */
static IPUP__UNUSED void ipup__prog_interleaved_zb(ipup__gen *g, int32_t d,
                                                   int32_t (*cnt)[IPUP_SCHED_MAX_STAGES]) {
    const int32_t P = g->P, V = g->V, M = g->M;
    const int32_t rounds = M / P > 1 ? M / P : 1, per_round = M / rounds;
    const int32_t mb_ops = V * M;
    int32_t warm = (V - 1) * per_round + (P - 1 - d), op, wk = 0, n_bwd = 0;
    if (warm > mb_ops) warm = mb_ops;
#define IPUP__FSTAGE(k) ((((k) / per_round) % V) * P + d)
#define IPUP__BSTAGE(k) ((V - 1 - (((k) - warm) / per_round) % V) * P + d)
    for (op = 0; op < mb_ops + warm; op++) {
        if (op < mb_ops) ipup__prog_next(g, d, IPUP__FSTAGE(op), IPUP_OP_F, cnt);
        if (op < warm) continue;
        ipup__prog_next(g, d, IPUP__BSTAGE(op), IPUP_OP_I, cnt);
        n_bwd++;
        if (op - warm >= d) {
            ipup__prog_next(g, d, IPUP__BSTAGE(warm + wk), IPUP_OP_W, cnt);
            wk++;
        }
    }
    for (; wk < n_bwd; wk++) ipup__prog_next(g, d, IPUP__BSTAGE(warm + wk), IPUP_OP_W, cnt);
#undef IPUP__FSTAGE
#undef IPUP__BSTAGE
}

/* zb-v program of device d: PyTorch's ScheduleZBVZeroBubble (torch/distributed/pipelining/
   schedules.py; the ZB-V of Qi et al., ICLR 2024, §6), stage a = d, b = 2P-1-d, built for
   n = max(2P-1, M) micro-batches with the ops of micro-batches >= M left out: 2(P-d)-1
   F(a); d pairs F(b) F(a); P-d triples F(b) I(b) W(b); while forwards remain, F(a) (if any
   left) I(a) W(a) F(b) I(b) W(b); d pairs I(a) I(b); P-d pairs I(a) W(a); the remaining
   W(b), then W(a). */
static IPUP__UNUSED void ipup__prog_zbv(ipup__gen *g, int32_t d,
                                       int32_t (*cnt)[IPUP_SCHED_MAX_STAGES]) {
    const int32_t P = g->P, a = d, b = 2 * P - 1 - d;
    const int32_t n = 2 * P - 1 > g->M ? 2 * P - 1 : g->M;
    int32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0, w0, w1, i;
    /* the ops of micro-batches >= M (n > M) are counted but not emitted */
#define IPUP__ZBV(s, k, m)                                                                   \
    do {                                                                                     \
        if ((m) < g->M) ipup__emit(g, d, (s), (m), (k));                                     \
    } while (0)
    (void)cnt;
    for (i = 0; i < 2 * (P - d) - 1; i++, f0++) IPUP__ZBV(a, IPUP_OP_F, f0);
    for (i = 0; i < d; i++, f0++, f1++) {
        IPUP__ZBV(b, IPUP_OP_F, f1);
        IPUP__ZBV(a, IPUP_OP_F, f0);
    }
    for (i = 0; i < P - d; i++, f1++, b1++) {
        IPUP__ZBV(b, IPUP_OP_F, f1);
        IPUP__ZBV(b, IPUP_OP_I, b1);
        IPUP__ZBV(b, IPUP_OP_W, b1);
    }
    while (f1 < f0 || f0 < n) {
        if (f0 < n) { IPUP__ZBV(a, IPUP_OP_F, f0); f0++; }
        IPUP__ZBV(a, IPUP_OP_I, b0);
        IPUP__ZBV(a, IPUP_OP_W, b0);
        b0++;
        IPUP__ZBV(b, IPUP_OP_F, f1);
        IPUP__ZBV(b, IPUP_OP_I, b1);
        IPUP__ZBV(b, IPUP_OP_W, b1);
        f1++; b1++;
    }
    w0 = b0; w1 = b1;
    for (i = 0; i < d; i++, b0++, b1++) {
        IPUP__ZBV(a, IPUP_OP_I, b0);
        IPUP__ZBV(b, IPUP_OP_I, b1);
    }
    for (i = 0; i < P - d; i++, b0++, w0++) {
        IPUP__ZBV(a, IPUP_OP_I, b0);
        IPUP__ZBV(a, IPUP_OP_W, w0);
    }
    for (; w1 < b1; w1++) IPUP__ZBV(b, IPUP_OP_W, w1);
    for (; w0 < b0; w0++) IPUP__ZBV(a, IPUP_OP_W, w0);
#undef IPUP__ZBV
}

/* v-min and v-half programs: Qi, Wan, Amar, Lin, "Pipeline Parallelism with Controllable
   Memory" (2024, arXiv 2405.15362, §3-§4), as its repository builds them
   (sail-sg/zero-bubble-pipeline-parallelism, the v-half/v-min scheduler). Work in unit
   slots (every op one slot). Device d holds a = d (down the V) and b = 2P-1-d (up); per
   device and micro-batch six ops: list 0 F(a), 1 F(b), 2 I(b), 3 I(a), 4 W(b), 5 W(a).
   1. The building block: micro-batch 0's F(a), F(b), I(b), I(a) at fixed offsets
      (ipup__vcm_offset), repeated every 6 slots for each micro-batch (6 ops a device).
   2. Squeeze, twice. Pass 1: Ws in the free slots (one list, "the next W"), then every op
      of the warm-up (before device 0's first I(a)) and of the cool-down (after device 0's
      last F(a)), in slot order, moves to the earliest free slot its inputs allow that keeps
      the device's peak within the pattern's; then every op as early as its inputs and its
      device's order allow. Pass 2: the same without the Ws, on the cool-down only.
   3. The Ws in the free slots again, now W(b) before W(a). Each device's order is its ops by
      slot; the table places them as early as dependencies allow (as zb-v's).
   The lists live in g->ops (6PM entries): list t of device d at (6d + t) M, its step field
   the slot; in pass 1 the single W list fills lists 4 and 5 (2M entries). */
static IPUP__UNUSED int32_t *ipup__vs(ipup__gen *g, int32_t d, int t, int32_t k) {
    return &g->ops[((int64_t)d * 6 + t) * g->M + k].step;
}
/* the length of list t when the device has nt lists (5: one W list of 2M) */
static IPUP__UNUSED int32_t ipup__vlen(const ipup__gen *g, int t, int nt) {
    return nt == 5 && t == 4 ? 2 * g->M : g->M;
}
/* the building block, the slot of micro-batch 0's F(a), F(b), I(b), I(a) on device d (t = 0..3),
   as the repository gives it: V-Min F(a) d, F(b) 2P-1-d, I(b) 2P+g+d, I(a) 4P+g-1-d, g = 2 when
   3 divides P; V-Half 2d, 3P-2-d, 3P+g+2d-1, 6P+g-2-d, g = 3 when P is even */
static IPUP__UNUSED int32_t ipup__vcm_offset(int kind, int32_t P, int32_t d, int t) {
    int32_t gap;
    if (kind == IPUP_SCHED_VMIN) {
        gap = P % 3 == 0 ? 2 : 0;
        return t == 0 ? d : t == 1 ? 2 * P - 1 - d : t == 2 ? 2 * P + gap + d : 4 * P + gap - 1 - d;
    }
    gap = P % 2 == 0 ? 3 : 0;
    return t == 0 ? 2 * d : t == 1 ? 3 * P - 2 - d : t == 2 ? 3 * P + gap + 2 * d - 1
                                                                : 6 * P + gap - 2 - d;
}
/* the list whose next op (p[t]) of device d is at slot x, or -1 */
static IPUP__UNUSED int ipup__vcm_head(ipup__gen *g, int32_t d, int32_t x, const int32_t *p,
                                       int nt) {
    int t;
    for (t = 0; t < nt; t++)
        if (p[t] < ipup__vlen(g, t, nt) && *ipup__vs(g, d, t, p[t]) == x) return t;
    return -1;
}
static IPUP__UNUSED int32_t ipup__vcm_last(ipup__gen *g, int32_t d, int nt) {
    int32_t last = 0, v;
    int t;
    for (t = 0; t < nt; t++)
        if ((v = *ipup__vs(g, d, t, ipup__vlen(g, t, nt) - 1)) > last) last = v;
    return last;
}
/* the Ws into device d's free slots, in slot order: one list (split 0), or W(b) (list 4)
   before W(a) (list 5); the rest after the last op */
static IPUP__UNUSED void ipup__vcm_put_w(ipup__gen *g, int32_t d, int split) {
    int32_t p[4] = {0, 0, 0, 0}, pend[2] = {0, 0}, n[2] = {0, 0};
    const int32_t last = ipup__vcm_last(g, d, 4);
    int32_t x;
    int t, w;
    for (x = 0; x <= last; x++) {
        if ((t = ipup__vcm_head(g, d, x, p, 4)) >= 0) {
            p[t]++;
            if (t >= 2) pend[split ? t - 2 : 0]++;
            continue;
        }
        for (w = 0; w < 2; w++)
            if (pend[w]) {
                *ipup__vs(g, d, 4 + w, n[w]++) = x;
                pend[w]--;
                break;
            }
    }
    for (w = 0; w < 2; w++)
        for (; pend[w] > 0; pend[w]--) *ipup__vs(g, d, 4 + w, n[w]++) = x++;
}
/* device d's peak, in stage micro-batches: +1 at each F, -1 at each W; with nt = 4 (no W
   lists) a W runs in each free slot while an I awaits one */
static IPUP__UNUSED int32_t ipup__vcm_mem(ipup__gen *g, int32_t d, int nt) {
    int32_t p[6] = {0, 0, 0, 0, 0, 0}, cur = 0, peak = 0, waiting = 0, x;
    const int32_t last = ipup__vcm_last(g, d, nt);
    int t;
    for (x = 0; x <= last; x++) {
        if ((t = ipup__vcm_head(g, d, x, p, nt)) >= 0) {
            p[t]++;
            cur += t < 2 ? 1 : t == 4 ? -1 : 0;
            if (t == 2 || t == 3) waiting++;
        } else if (nt == 4 && waiting) {
            cur--;
            waiting--;
        }
        if (cur > peak) peak = cur;
    }
    return peak;
}
/* the slot of device d's k-th I (0-based) of either stage */
static IPUP__UNUSED int32_t ipup__vcm_kth_i(ipup__gen *g, int32_t d, int32_t k) {
    int32_t i = 0, j = 0, x = 0;
    for (; k >= 0; k--) {
        if (j >= g->M || (i < g->M && *ipup__vs(g, d, 2, i) < *ipup__vs(g, d, 3, j)))
            x = *ipup__vs(g, d, 2, i++);
        else x = *ipup__vs(g, d, 3, j++);
    }
    return x;
}
/* the latest slot of op (d, t, k)'s inputs: the op before it on the V, the same micro-batch's
   op before it on the device, its k-th I (a W), the previous micro-batch's op of the list */
static IPUP__UNUSED int32_t ipup__vcm_deps(ipup__gen *g, int32_t d, int t, int32_t k) {
    int32_t dep = -1, v;
#define IPUP__VDEP(e) do { v = (e); if (v > dep) dep = v; } while (0)
    if ((t == 0 || t == 2) && d > 0) IPUP__VDEP(*ipup__vs(g, d - 1, t, k));
    if ((t == 1 || t == 3) && d + 1 < g->P) IPUP__VDEP(*ipup__vs(g, d + 1, t, k));
    if (t > 0 && t < 4) IPUP__VDEP(*ipup__vs(g, d, t - 1, k));
    if (t == 4) IPUP__VDEP(ipup__vcm_kth_i(g, d, k));
    if (k > 0) IPUP__VDEP(*ipup__vs(g, d, t, k - 1));
#undef IPUP__VDEP
    return dep;
}
/* every op (5 lists, one W list) at the earliest unit slot its inputs and its device's order
   allow, in slot order (each device's order kept) */
static IPUP__UNUSED void ipup__vcm_eager(ipup__gen *g) {
    int32_t p[IPUP_SCHED_MAX_STAGES][6], free_at[IPUP_SCHED_MAX_STAGES], d, x, last = 0;
    int t;
    for (d = 0; d < g->P; d++) {
        for (t = 0; t < 6; t++) p[d][t] = 0;
        free_at[d] = 0;
        if (ipup__vcm_last(g, d, 5) > last) last = ipup__vcm_last(g, d, 5);
    }
    for (x = 0; x <= last; x++)
        for (d = 0; d < g->P; d++) {
            int32_t k, at;
            if ((t = ipup__vcm_head(g, d, x, p[d], 5)) < 0) continue;
            k = p[d][t]++;
            if (t < 4) at = ipup__vcm_deps(g, d, t, k) + 1; /* a W: its device's order */
            else at = k > 0 ? *ipup__vs(g, d, 4, k - 1) + 1 : 0;
            if (at < free_at[d]) at = free_at[d];
            *ipup__vs(g, d, t, k) = at;
            free_at[d] = at + 1;
        }
}
/* is slot x of device d taken by an op already placed (the first p[t] of each list)? */
static IPUP__UNUSED int ipup__vcm_taken(ipup__gen *g, int32_t d, int32_t x, const int32_t *p,
                                        int nt) {
    int t;
    for (t = 0; t < nt; t++) {
        int32_t lo = 0, hi = p[t]; /* each list is in increasing slot */
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2, v = *ipup__vs(g, d, t, mid);
            if (v == x) return 1;
            if (v < x) lo = mid + 1;
            else hi = mid;
        }
    }
    return 0;
}
/* one squeeze pass (step 2 above): with_w 1 is pass 1, 0 pass 2 */
static IPUP__UNUSED void ipup__vcm_squeeze(ipup__gen *g, int with_w) {
    int32_t p[IPUP_SCHED_MAX_STAGES][6], d, x, last = 0, bound = 0;
    const int nt = with_w ? 5 : 4;
    int t, phase = 0;
    for (d = 0; d < g->P; d++) {
        if (with_w) ipup__vcm_put_w(g, d, 0);
        for (t = 0; t < 6; t++) p[d][t] = 0;
        if (ipup__vcm_mem(g, d, nt) > bound) bound = ipup__vcm_mem(g, d, nt);
        if (ipup__vcm_last(g, d, nt) > last) last = ipup__vcm_last(g, d, nt);
    }
    for (x = 0; x <= last; x++)
        for (d = 0; d < g->P; d++) {
            int32_t k, *slot, at;
            if ((t = ipup__vcm_head(g, d, x, p[d], nt)) < 0) continue;
            k = p[d][t]++;
            if (t == 3 && d == 0 && phase == 0) phase = 1; /* device 0's first I(a) */
            if (phase == 1) {
                if (t == 0 && k == g->M - 1) phase = 2; /* the last F(a) */
                continue;
            }
            if (phase == 0 && !with_w) continue;
            slot = ipup__vs(g, d, t, k);
            for (at = ipup__vcm_deps(g, d, t, k) + 1; at < x; at++) {
                if (ipup__vcm_taken(g, d, at, p[d], nt)) continue;
                *slot = at;
                if (ipup__vcm_mem(g, d, nt) <= bound) break;
            }
            if (at >= x) *slot = x;
        }
    for (d = 0; d < g->P && !with_w; d++) ipup__vcm_put_w(g, d, 0);
    ipup__vcm_eager(g);
}
/* the programs of every device, device d's 6M ops at g->ops + 6dM in its order */
static IPUP__UNUSED void ipup__prog_vcm(ipup__gen *g) {
    const int32_t P = g->P, M = g->M;
    int32_t d, k;
    int t;
    for (d = 0; d < P; d++)
        for (t = 0; t < 4; t++)
            for (k = 0; k < M; k++)
                *ipup__vs(g, d, t, k) = ipup__vcm_offset(g->kind, P, d, t) + 6 * k;
    ipup__vcm_squeeze(g, 1);
    ipup__vcm_squeeze(g, 0);
    for (d = 0; d < P; d++) {
        ipup_table blk;
        ipup__vcm_put_w(g, d, 1);
        for (t = 0; t < 6; t++)
            for (k = 0; k < M; k++) {
                ipup_op *o = &g->ops[((int64_t)d * 6 + t) * M + k];
                o->mb = k;
                o->stage = (int16_t)(t == 0 || t == 3 || t == 5 ? d : 2 * P - 1 - d);
                o->device = (int16_t)d;
                o->kind = (int8_t)(t < 2 ? IPUP_OP_F : t < 4 ? IPUP_OP_I : IPUP_OP_W);
                o->overlap_index = o->branch_plus1 = o->reserved_ = 0;
            }
        IPUPIPE_MEMSET(&blk, 0, sizeof blk);
        blk.ops = g->ops + (int64_t)d * 6 * M;
        blk.n_ops = blk.cap_ops = 6 * M;
        ipup_sched_sort(&blk); /* by slot: the device's order */
    }
    g->n_ops = 6 * P * M;
}

/* zb-v, looped-bfs, interleaved-zb: each device's program written into g->ops device by
   device, then every op placed at the earliest step its inputs allow, in its device's
   order (as ipup_sched_respace does: a dataflow run of the orders, in lock step). The ops
   end sorted by (step, device) in ipup_sched_generate. */
static IPUP__UNUSED int ipup__gen_programs(ipup__gen *g, char *msg, size_t msg_len) {
    int32_t begin[IPUP_SCHED_MAX_STAGES + 1], pos[IPUP_SCHED_MAX_STAGES];
    int32_t cnt[3][IPUP_SCHED_MAX_STAGES];
    int32_t d, s, placed = 0;
    ipup__dyn_state y;
    if (g->kind == IPUP_SCHED_VMIN || g->kind == IPUP_SCHED_VHALF) ipup__prog_vcm(g);
    for (d = 0; d < g->P; d++) {
        begin[d] = g->n_ops;
        if (g->kind == IPUP_SCHED_VMIN || g->kind == IPUP_SCHED_VHALF) {
            begin[d] = 6 * d * g->M;
            continue;
        }
        for (s = 0; s < IPUP_SCHED_MAX_STAGES; s++) cnt[0][s] = cnt[1][s] = cnt[2][s] = 0;
        if (g->kind == IPUP_SCHED_LOOPED_BFS) ipup__prog_looped_bfs(g, d);
        else if (g->kind == IPUP_SCHED_INTERLEAVED_ZB) ipup__prog_interleaved_zb(g, d, cnt);
        else ipup__prog_zbv(g, d, cnt);
    }
    begin[g->P] = g->n_ops;
    y.g = g;
    for (s = 0; s < g->S; s++) y.n_fwd[s] = y.n_bwd[s] = y.n_wgrad[s] = 0;
    for (d = 0; d < g->P; d++) pos[d] = begin[d];
    while (placed < g->n_ops) {
        int any = 0;
        for (d = 0; d < g->P; d++) {
            const ipup_op *o = pos[d] < begin[d + 1] ? &g->ops[pos[d]] : NULL;
            int ok = o && (o->kind == IPUP_OP_F   ? ipup__ready_fwd(&y, o->stage, o->mb)
                           : o->kind == IPUP_OP_W ? ipup__ready_wgrad(&y, o->stage, o->mb)
                                                  : ipup__ready_bwd(&y, o->stage, o->mb));
            y.program_pos[d] = ok; /* this step's pick */
            any |= ok;
        }
        if (!any)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: internal error: the device orders deadlock at step %d (%d of "
                             "%d ops placed)",
                             ipup__kind_names[g->kind], (int)g->step + 1, (int)placed,
                             (int)g->n_ops);
        for (d = 0; d < g->P; d++) {
            ipup_op *o;
            if (!y.program_pos[d]) continue;
            o = &g->ops[pos[d]++];
            o->step = g->step;
            if (o->kind == IPUP_OP_F) y.n_fwd[o->stage]++;
            else if (o->kind == IPUP_OP_W) y.n_wgrad[o->stage]++;
            else y.n_bwd[o->stage]++;
            placed++;
        }
        g->step++;
    }
    return IPUP_OK;
}

static int ipup__fwd_generate(ipup__gen *g, const ipup_sched_config *cfg, ipup_op *ops,
                              int32_t cap_ops, ipup_table *out, int *nwarn, char *msg,
                              size_t msg_len); /* forward-only block */
static int ipup__conc_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                               ipup_table *out, char *msg,
                               size_t msg_len); /* concurrent stages, docs/schedules.md §9 */
static int ipup__dpv_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                              ipup_table *out, char *msg, size_t msg_len);
static int ipup__dp_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                             ipup_table *out, char *msg, size_t msg_len); /* DualPipeV */

IPUPIPE_DEF int ipup_sched_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                                    ipup_table *out, char *msg, size_t msg_len) {
    ipup__gen g;
    int32_t s, need;
    int nwarn = 0, rc;
    const char *kname;
    if (msg && msg_len) msg[0] = '\0';
    if (!cfg || !out)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG,
                         "ipup_sched_generate: cfg and out must not be NULL");
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    for (s = 0; s < IPUP_SCHED_MAX_STAGES; s++) out->stage_device[s] = -1;
    if ((rc = ipup__gen_validate(cfg, msg, msg_len)) != IPUP_OK) return rc;
    if (cfg->concurrent) return ipup__conc_generate(cfg, ops, cap_ops, out, msg, msg_len); /* §9 */
    if (cfg->kind == IPUP_SCHED_DUALPIPE_V) return ipup__dpv_generate(cfg, ops, cap_ops, out, msg,
                                                                      msg_len);
    if (cfg->kind == IPUP_SCHED_DUALPIPE) return ipup__dp_generate(cfg, ops, cap_ops, out, msg,
                                                                   msg_len);
    IPUPIPE_MEMSET(&g, 0, sizeof g);
    g.S = cfg->stages; g.M = cfg->microbatches; g.kind = (int)cfg->kind;
    g.split_backward = ipup__kind_split(g.kind);
    kname = ipup__kind_names[g.kind];
    if ((rc = ipup__gen_map(&g, cfg, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    if (cfg->forward_only)
        return ipup__fwd_generate(&g, cfg, ops, cap_ops, out, &nwarn, msg, msg_len);
    if ((rc = ipup__gen_rules(&g, cfg->strict, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    if ((rc = ipup__gen_rule_popxl(&g, cfg, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    if ((rc = ipup__gen_rules_sgen(&g, msg, msg_len)) != IPUP_OK) return rc;
    /* capacity */
    if ((int64_t)(g.split_backward ? 3 : 2) * g.S * g.M > (int64_t)0x7fffffff)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: S x M = %lld is too large", kname,
                         (long long)g.S * g.M);
    need = (g.split_backward ? 3 : 2) * g.S * g.M;
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s: the table needs %d ops but the ops array holds %d; size it with "
                         "IPUP_SCHED_MAX_OPS(%d, %d)",
                         kname, (int)need, ops ? (int)cap_ops : 0, (int)g.S, (int)g.M);
    }
    g.ops = ops;
    if ((rc = ipup__gen_place(&g, need, msg, msg_len)) != IPUP_OK) return rc;
    if (g.n_ops != need)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: internal error: placed %d of %d ops",
                         kname, (int)g.n_ops, (int)need);
    out->stages = g.S;
    out->microbatches = g.M;
    out->devices = g.P;
    out->steps = g.step;
    out->n_ops = g.n_ops;
    out->cap_ops = cap_ops;
    out->ops = ops;
    out->split_backward = g.split_backward;
    for (s = 0; s < g.S; s++) out->stage_device[s] = g.stage_device[s];
    ipup_sched_sort(out); /* ipup__gen_programs places device by device */
    ipup__gen_fill_warning(out, g.kind, &nwarn, msg, msg_len);
    return IPUP_OK;
}

/* >>ops: op tokens and descriptions, the sort */
static IPUP__UNUSED char ipup__kind_char(int k) {
    return k == IPUP_OP_F   ? 'F'
           : k == IPUP_OP_B ? 'B'
           : k == IPUP_OP_I ? 'I'
           : k == IPUP_OP_W ? 'W'
                            : '?';
}

IPUPIPE_DEF int ipup_sched_op_str(const ipup_op *op, char *buf, size_t len) {
    int n;
    if (!op || !buf || len == 0) return 0;
    if (ipup_op_branch(op) >= 0) /* a branch of a concurrent stage: "1F3.1" (§9) */
        n = ipup_snprintf(buf, len, "%d%c%d.%d", (int)op->stage, ipup__kind_char(op->kind),
                          (int)op->mb, ipup_op_branch(op));
    else
        n = ipup_snprintf(buf, len, "%d%c%d", (int)op->stage, ipup__kind_char(op->kind),
                          (int)op->mb);
    return n < 0 ? 0 : n;
}

/* op as text for messages: "B(2,3) [2B3]" */
static IPUP__UNUSED const char *ipup__op_desc(char *buf, size_t len, int kind, int32_t s,
                                              int32_t m) {
    ipup_snprintf(buf, len, "%c(%d,%d) [%d%c%d]", ipup__kind_char(kind), (int)s, (int)m, (int)s,
                  ipup__kind_char(kind), (int)m);
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

/* >>verify: ipup_sched_verify, two passes over the ops */
/* One function per rule. Pass 1 runs rules 1 and 2 op by op in table order (ranges,
   one op per device per step and sorting, the stage's device, each op once), then
   rule 1's completeness; pass 2 the dependency rules 3, 4, 5 op by op in step order,
   so the first violation in time is the one reported; then the in-order property. */
typedef struct ipup__verifier {
    const ipup_table *t;
    ipup_sched_verify_info *info;
    char *msg;
    size_t msg_len;
    int32_t S, M, P;
    /* per (m*S + s): the step of F, of B or I, of W; -1: not seen */
    int32_t *step_fwd, *step_bwd, *step_wgrad;
    int8_t *bwd_kind;                 /* IPUP_OP_B or IPUP_OP_I per (m*S + s); 0: not seen */
    char op_text[80], other_text[80]; /* op texts for messages */
} ipup__verifier;

/* info about op i, and its text in v->a */
static IPUP__UNUSED void ipup__ver_op(ipup__verifier *v, int rule, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    ipup_sched_verify_info *in = v->info;
    in->rule = rule; in->op_index = i; in->step = o->step; in->device = o->device;
    in->stage = o->stage; in->mb = o->mb; in->kind = o->kind;
    ipup__op_desc(v->op_text, sizeof v->op_text, o->kind, o->stage, o->mb);
}

/* rule 2: every stage has a device */
static IPUP__UNUSED int ipup__ver_mapping(ipup__verifier *v) {
    int32_t s;
    for (s = 0; s < v->S; s++) {
        if (v->t->stage_device[s] < 0 || v->t->stage_device[s] >= v->P) {
            v->info->rule = 2; v->info->stage = s;
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "rule 2 (stage on its device): stage %d has no device (mapping gives "
                             "%d, devices are 0..%d); every stage needs its ops on one device",
                             (int)s, (int)v->t->stage_device[s], (int)(v->P - 1));
        }
    }
    return IPUP_OK;
}

/* rule 1: op i's indices are in range */
static IPUP__UNUSED int ipup__ver_range(ipup__verifier *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int k = o->kind;
    if (o->stage < 0 || o->stage >= v->S || o->mb < 0 || o->mb >= v->M || k < IPUP_OP_F ||
        k > IPUP_OP_W || o->step < 0 || o->step >= v->t->steps || o->device < 0 ||
        o->device >= v->P) {
        ipup_sched_verify_info *in = v->info;
        in->rule = 1; in->op_index = i; in->step = o->step; in->device = o->device;
        in->stage = o->stage; in->mb = o->mb; in->kind = k;
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (indices in range): op %d (stage %d, micro-batch %d, kind %d, "
                         "step %d, device %d) is out of range: stages 0..%d, micro-batches 0..%d, "
                         "kinds F B I W, steps 1..%d, devices 0..%d",
                         (int)i, (int)o->stage, (int)o->mb, k, (int)o->step + 1, (int)o->device,
                         (int)(v->S - 1), (int)(v->M - 1), (int)v->t->steps, (int)(v->P - 1));
    }
    if (!ipup__runs(v->t, o->stage, o->mb)) {
        int b = o->mb >= v->M / 2;
        ipup__ver_op(v, 1, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (indices in range): device %d, step %d: %s, but in this dual "
                         "table (two model copies, DualPipe) micro-batch %d belongs to copy %c, "
                         "which runs stages %d..%d only",
                         (int)o->device, (int)o->step + 1, v->op_text, (int)o->mb, b ? 'B' : 'A',
                         (int)(b ? v->S / 2 : 0), (int)(b ? v->S - 1 : v->S / 2 - 1));
    }
    return IPUP_OK;
}

/* rule 2.2's one exception, the overlapped F&B cell (docs/schedules.md §2): p then o in
   one cell, an F (position 0) and a B or I (position 1) of another stage */
static IPUP__UNUSED int ipup__overlap_pair(const ipup_op *p, const ipup_op *o) {
    return p->overlap_index == 0 && o->overlap_index == 1 && p->kind == IPUP_OP_F &&
           (o->kind == IPUP_OP_B || o->kind == IPUP_OP_I) && p->stage != o->stage &&
           ipup_op_branch(p) < 0 && ipup_op_branch(o) < 0;
}

/* rule 2: op i is alone in its cell (device, step), or the second op of an overlapped F&B
   cell; the table structure: ops sorted by (step, device) */
static IPUP__UNUSED int ipup__ver_cell(ipup__verifier *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    if (i > 0) {
        const ipup_op *p = &v->t->ops[i - 1];
        if (p->step == o->step && p->device == o->device && !ipup__overlap_pair(p, o)) {
            ipup__ver_op(v, 2, i);
            return ipup__err(
                v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                "rule 2 (one op per device per step): device %d, step %d runs %s and %s; move one "
                "of them to another step (only an overlapped F&B cell holds two: the F of one "
                "stage first, then the B or I of another)",
                (int)o->device, (int)o->step + 1,
                ipup__op_desc(v->other_text, sizeof v->other_text, p->kind, p->stage, p->mb),
                v->op_text);
        }
        if (p->step > o->step || (p->step == o->step && p->device > o->device)) {
            ipup__ver_op(v, 6, i);
            return ipup__err(
                v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                "table structure: ops %d and %d are not sorted by (step, device) (device %d, step "
                "%d: %s comes after step %d); call ipup_sched_sort first",
                (int)(i - 1), (int)i, (int)o->device, (int)o->step + 1, v->op_text,
                (int)p->step + 1);
        }
    }
    return IPUP_OK;
}

/* rule 2: op i is alone in its cell and on its stage's device; the table structure */
static IPUP__UNUSED int ipup__ver_device(ipup__verifier *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int16_t home = v->t->stage_device[o->stage];
    int rc = ipup__ver_cell(v, i);
    if (rc != IPUP_OK) return rc;
    if (o->device != home) {
        ipup__ver_op(v, 2, i);
        return ipup__err(
            v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
            "rule 2 (stage on its device): device %d, step %d: %s runs on device %d, but stage %d "
            "lives on device %d (its weights and stash are there); move it to device %d",
            (int)o->device, (int)o->step + 1, v->op_text, (int)o->device, (int)o->stage, (int)home,
            (int)home);
    }
    return IPUP_OK;
}

/* rule 1: op i appears once (and a backward is B or I + W, not both); records its step */
static IPUP__UNUSED int ipup__ver_once(ipup__verifier *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int k = o->kind;
    int64_t x = (int64_t)o->mb * v->S + o->stage;
    int32_t *slot = k == IPUP_OP_F ? v->step_fwd : k == IPUP_OP_W ? v->step_wgrad : v->step_bwd;
    if (slot[x] >= 0) {
        ipup__ver_op(v, 1, i);
        if ((k == IPUP_OP_B || k == IPUP_OP_I) && v->bwd_kind[x] != k)
            return ipup__err(
                v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                "rule 1 (each op once): device %d, step %d: %s, but the same stage and micro-batch "
                "already has %s at step %d; a backward is either B or I + W, not both",
                (int)o->device, (int)o->step + 1, v->op_text,
                ipup__op_desc(v->other_text, sizeof v->other_text, v->bwd_kind[x], o->stage, o->mb),
                (int)slot[x] + 1);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 1 (each op once): device %d, step %d: %s appears twice (also at "
                         "step %d); remove one",
                         (int)o->device, (int)o->step + 1, v->op_text, (int)slot[x] + 1);
    }
    slot[x] = o->step;
    if (k == IPUP_OP_B || k == IPUP_OP_I) v->bwd_kind[x] = (int8_t)k;
    return IPUP_OK;
}

static int ipup__fwd_ver_complete(ipup__verifier *v);          /* forward-only block */
static int ipup__fwd_ver_kind(ipup__verifier *v, int32_t i);  /* forward-only block */
/* rule 1: every op present, and nothing else (no W after a full B) */
static IPUP__UNUSED int ipup__ver_complete(ipup__verifier *v) {
    int32_t s, m;
    if (v->t->forward_only) return ipup__fwd_ver_complete(v);
    for (m = 0; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            int64_t x = (int64_t)m * v->S + s;
            int32_t home = v->t->stage_device[s];
            int missing = 0;
            ipup_sched_verify_info *in = v->info;
            if (!ipup__runs(v->t, s, m)) continue; /* a dual table: the other copy's */
            if (v->step_fwd[x] < 0) missing = IPUP_OP_F;
            else if (v->step_bwd[x] < 0) missing = v->step_wgrad[x] >= 0 ? IPUP_OP_I : IPUP_OP_B;
            else if (v->bwd_kind[x] == IPUP_OP_I && v->step_wgrad[x] < 0) missing = IPUP_OP_W;
            if (missing) {
                in->rule = 1; in->op_index = -1; in->step = -1; in->device = home;
                in->stage = s; in->mb = m; in->kind = missing;
                return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                                 "rule 1 (every op once): %s is missing (stage %d lives on device "
                                 "%d); add it to a free step of device %d after its inputs",
                                 ipup__op_desc(v->op_text, sizeof v->op_text, missing, s, m),
                                 (int)s, (int)home, (int)home);
            }
            if (v->bwd_kind[x] == IPUP_OP_B && v->step_wgrad[x] >= 0) {
                in->rule = 1; in->step = v->step_wgrad[x]; in->device = home;
                in->stage = s; in->mb = m; in->kind = IPUP_OP_W;
                return ipup__err(
                    v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                    "rule 1 (nothing else appears): device %d, step %d: %s, but the backward of "
                    "stage %d, micro-batch %d is a full B (it already computes the weight "
                    "gradient); write I instead of B or drop the W",
                    (int)home, (int)v->step_wgrad[x] + 1,
                    ipup__op_desc(v->op_text, sizeof v->op_text, IPUP_OP_W, s, m), (int)s, (int)m);
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
static IPUP__UNUSED int ipup__ver_rule3(const ipup__verifier *v, const ipup_op *o, int64_t x,
                                        ipup__dep *d) {
    if (!ipup__first_stage(v->t, o->stage) && v->step_fwd[x - 1] >= o->step) {
        d->kind = IPUP_OP_F;
        d->stage = o->stage - 1;
        d->step = v->step_fwd[x - 1];
        return 3;
    }
    return 0;
}
/* rule 4: B/I(s,m) after F(s,m) and after the backward of stage s+1 */
static IPUP__UNUSED int ipup__ver_rule4(const ipup__verifier *v, const ipup_op *o, int64_t x,
                                        ipup__dep *d) {
    if (v->step_fwd[x] >= o->step) {
        d->kind = IPUP_OP_F;
        d->stage = o->stage;
        d->step = v->step_fwd[x];
        return 4;
    }
    if (!ipup__last_stage(v->t, o->stage) && v->step_bwd[x + 1] >= o->step) {
        d->kind = v->bwd_kind[x + 1]; d->stage = o->stage + 1; d->step = v->step_bwd[x + 1];
        return 4;
    }
    return 0;
}
/* rule 5: W(s,m) after I(s,m) */
static IPUP__UNUSED int ipup__ver_rule5(const ipup__verifier *v, const ipup_op *o, int64_t x,
                                        ipup__dep *d) {
    if (v->step_bwd[x] >= o->step) {
        d->kind = IPUP_OP_I;
        d->stage = o->stage;
        d->step = v->step_bwd[x];
        return 5;
    }
    return 0;
}

/* pass 2: rules 3, 4, 5 op by op in step order */
static IPUP__UNUSED int ipup__ver_deps(ipup__verifier *v) {
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
        return ipup__err(
            v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
            "rule %d (%s): device %d, step %d: %s needs %s from device %d, which runs at step %d; "
            "a value made in step t is usable from step t+1, so move %s to step %d or later",
            rule, what[rule - 3], (int)o->device, (int)o->step + 1, v->op_text,
            ipup__op_desc(v->other_text, sizeof v->other_text, d.kind, d.stage, o->mb),
            (int)v->t->stage_device[d.stage], (int)d.step + 1, v->op_text, (int)(d.step + 2));
    }
    return IPUP_OK;
}

/* the in-order property: weight-gradient ops (B or W) of each stage in increasing m */
static IPUP__UNUSED void ipup__ver_in_order(ipup__verifier *v) {
    ipup_sched_verify_info *in = v->info;
    int32_t s, m;
    in->in_order = 1;
    for (m = 1; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            int64_t x = (int64_t)m * v->S + s;
            int32_t a0 = v->bwd_kind[x - v->S] == IPUP_OP_B ? v->step_bwd[x - v->S]
                                                            : v->step_wgrad[x - v->S];
            int32_t a1 = v->bwd_kind[x] == IPUP_OP_B ? v->step_bwd[x] : v->step_wgrad[x];
            if (!ipup__runs(v->t, s, m) || !ipup__runs(v->t, s, m - 1)) continue; /* dual */
            if (a1 < a0 && (in->in_order || s < in->out_of_order_stage)) {
                in->in_order = 0;
                in->out_of_order_stage = s;
            }
        }
}

/* a table with concurrent stages, docs/schedules.md §9 */
static int ipup__ver_conc(ipup__verifier *v);

/* the scratch arrays (work is checked by the caller) */
static IPUP__UNUSED void ipup__ver_init(ipup__verifier *v, const ipup_table *t, void *work,
                                        ipup_sched_verify_info *info, char *msg, size_t msg_len) {
    int64_t SM = (int64_t)t->stages * t->microbatches;
    v->t = t; v->info = info; v->msg = msg; v->msg_len = msg_len;
    v->S = t->stages; v->M = t->microbatches; v->P = t->devices;
    v->step_fwd = (int32_t *)work;
    v->step_bwd = v->step_fwd + SM;
    v->step_wgrad = v->step_bwd + SM;
    v->bwd_kind = (int8_t *)(void *)((uint8_t *)work + (size_t)12 * (size_t)SM); /* SM bytes */
    /* step_fwd, step_bwd, step_wgrad: -1 */
    IPUPIPE_MEMSET(v->step_fwd, 0xff, (size_t)12 * (size_t)SM);
    IPUPIPE_MEMSET(v->bwd_kind, 0, (size_t)SM);
}

IPUPIPE_DEF int ipup_sched_verify(const ipup_table *t, void *work, size_t work_bytes,
                                  ipup_sched_verify_info *info, char *msg, size_t msg_len) {
    ipup_sched_verify_info dummy;
    ipup__verifier v;
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
                         "verify: work must be 8-byte aligned and hold IPUP_SCHED_WORK_BYTES(%d, "
                         "%d) = %lld bytes (got %lld)",
                         (int)t->stages, (int)t->microbatches,
                         (long long)IPUP_SCHED_WORK_BYTES(t->stages, t->microbatches),
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

/* >>measure: costs, BSP and async times, phases, in-flight counts, ipup_sched_measure */
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

/* 1 when stage s has a branch on a device other than d (a value to or from it crosses) */
static IPUP__UNUSED int ipup__stage_elsewhere(const ipup_table *t, int32_t s, int32_t d) {
    int32_t b;
    if (!t->concurrent || t->n_branches[s] <= 1) return t->stage_device[s] != d;
    for (b = 0; b < t->n_branches[s] && b < IPUP_SCHED_MAX_BRANCHES; b++)
        if (t->branch_device[s][b] != d) return 1;
    return 0;
}

/* 1 when the value an op produces goes to another device at the end of its step */
static IPUP__UNUSED int ipup__crosses(const ipup_table *t, const ipup_op *o) {
    if (o->kind == IPUP_OP_F)
        return !ipup__last_stage(t, o->stage) &&
               ipup__stage_elsewhere(t, o->stage + 1, o->device);
    if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_I)
        return !ipup__first_stage(t, o->stage) &&
               ipup__stage_elsewhere(t, o->stage - 1, o->device);
    return 0;
}

/* BSP cost of the step made of ops [i0, i1): its slowest cell (an overlapped F&B cell
   costs its two ops), the exchange if any op crosses devices, and the sync. */
static IPUP__UNUSED double ipup__step_cost(const ipup_table *t, const ipup_sched_cost *c,
                                           int32_t i0, int32_t i1) {
    double slowest = 0.0, v = 0.0;
    int cross = 0;
    int32_t i;
    for (i = i0; i < i1; i++) {
        double op = ipup_sched_op_cost(c, &t->ops[i]);
        v = i > i0 && t->ops[i].device == t->ops[i - 1].device ? v + op : op;
        if (v > slowest) slowest = v;
        if (ipup__crosses(t, &t->ops[i])) cross = 1;
    }
    return slowest + (cross ? c->exchange : 0.0) + c->sync;
}

/* One past the last op of the step that ops[i] starts (ops are sorted by step). */
static IPUP__UNUSED int32_t ipup__step_end(const ipup_table *t, int32_t i) {
    int32_t j = i;
    while (j < t->n_ops && t->ops[j].step == t->ops[i].step) j++;
    return j;
}

IPUPIPE_DEF int ipup_sched_phases(const ipup_table *t, int32_t out[6]) {
    uint8_t device_used[IPUP_SCHED_MAX_STAGES];
    int32_t i = 0, d, n_in_use = 0, main_first = -1, main_last = -1, first_bwd_step = -1, T;
    if (!out || ipup__table_shape(t, NULL, 0)) return IPUP_ERR_ARG;
    T = t->steps;
    IPUPIPE_MEMSET(device_used, 0, sizeof device_used);
    for (i = 0; i < t->n_ops; i++) {
        d = t->ops[i].device;
        if (d >= 0 && d < t->devices && !device_used[d]) { device_used[d] = 1; n_in_use++; }
        if ((t->ops[i].kind == IPUP_OP_B || t->ops[i].kind == IPUP_OP_I) &&
            (first_bwd_step < 0 || t->ops[i].step < first_bwd_step))
            first_bwd_step = t->ops[i].step;
    }
    /* a step is full when it holds one op on each device in use (a valid table has at
       most one op per device and step; ops are sorted by step) */
    i = 0;
    while (i < t->n_ops) {
        int32_t j = ipup__step_end(t, i), k, cells = 0;
        for (k = i; k < j; k++) /* an overlapped F&B cell is one device's */
            cells += k == i || t->ops[k].device != t->ops[k - 1].device;
        if (cells >= n_in_use && n_in_use > 0) {
            if (main_first < 0) main_first = t->ops[i].step;
            main_last = t->ops[i].step;
        }
        i = j;
    }
    if (main_first < 0) { /* never fills: no main; ramp-up until the first backward */
        main_first = first_bwd_step < 0 ? T : first_bwd_step;
        main_last = main_first - 1;
    }
    out[0] = 0; out[1] = main_first - 1;
    out[2] = main_first; out[3] = main_last;
    out[4] = main_last + 1; out[5] = T - 1;
    return IPUP_OK;
}

static int ipup__fwd_inflight(const ipup_table *t, int32_t *peak); /* forward-only block */
IPUPIPE_DEF int ipup_sched_peak_inflight(const ipup_table *t, int32_t *out, int32_t n_out) {
    int32_t cur[IPUP_SCHED_MAX_STAGES];
    int32_t i, s;
    if (!t || !out || (!t->ops && t->n_ops > 0)) return IPUP_ERR_ARG;
    if (t->stages < 1 || t->stages > IPUP_SCHED_MAX_STAGES || n_out < t->stages)
        return IPUP_ERR_ARG;
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

/* one op's change to what its device holds (docs/schedules.md §9): micro-batches in flight and
   stashed bytes, a branch of a concurrent stage counted on its own device */
static IPUP__UNUSED void ipup__measure_device(const ipup_table *t, const ipup_op *o,
                                              const int64_t *act_bytes, int32_t *device_inflight,
                                              int64_t *device_bytes, ipup_sched_figures *out) {
    int32_t d = o->device;
    int64_t act = act_bytes ? act_bytes[o->stage] : 0;
    (void)t;
    if (o->kind == IPUP_OP_F) {
        if (++device_inflight[d] > out->peak_inflight_device[d])
            out->peak_inflight_device[d] = device_inflight[d];
        device_bytes[d] += act;
        if (device_bytes[d] > out->stash_bytes_device[d])
            out->stash_bytes_device[d] = device_bytes[d];
    } else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) {
        device_inflight[d]--;
        device_bytes[d] -= act;
    }
}

static void ipup__fwd_measure(const ipup_table *t, const ipup_sched_cost *c,
                              const int64_t *act_bytes, const double *end_fwd, double *start0,
                              ipup_sched_figures *out); /* forward-only block */
/* ipup_sched_measure's figures from its totals (work, bsp_time, async_time, the peaks):
   utilisation, bubbles, stash bytes, in-flight total, phases */
static void ipup__measure_totals(const ipup_table *t, const int64_t *act_bytes,
                                 ipup_sched_figures *out) {
    int32_t i, s, d, busy = 0, P = t->devices;
    for (i = 0; i < t->n_ops; i++) /* busy cells: an overlapped F&B cell is one */
        busy += !(i > 0 && t->ops[i].step == t->ops[i - 1].step &&
                  t->ops[i].device == t->ops[i - 1].device);
    out->unit_utilisation = t->steps > 0 ? (double)busy / ((double)t->steps * (double)P) : 0.0;
    out->bubble_bsp = out->bsp_time > 0.0 ? 1.0 - out->work / ((double)P * out->bsp_time) : 0.0;
    out->bubble_async =
        out->async_time > 0.0 ? 1.0 - out->work / ((double)P * out->async_time) : 0.0;
    for (s = 0; s < t->stages; s++) {
        out->stash_bytes[s] = (int64_t)out->peak_inflight[s] * (act_bytes ? act_bytes[s] : 0);
        /* each branch keeps its own (§9) */
        if (t->concurrent && t->n_branches[s] > 1) out->stash_bytes[s] *= t->n_branches[s];
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
}

IPUPIPE_DEF int ipup_sched_measure(const ipup_table *t, const ipup_sched_cost *cost,
                                   const int64_t *act_bytes, void *work, size_t work_bytes,
                                   ipup_sched_figures *out) {
    ipup_sched_cost default_cost = ipup_sched_cost_default();
    double device_free_at[IPUP_SCHED_MAX_STAGES], device_work[IPUP_SCHED_MAX_STAGES];
    int32_t last_wgrad_mb[IPUP_SCHED_MAX_STAGES];
    int32_t inflight[IPUP_SCHED_MAX_STAGES], device_inflight[IPUP_SCHED_MAX_STAGES];
    int64_t device_bytes[IPUP_SCHED_MAX_STAGES];
    double *end_fwd, *end_bwd, step_max = 0.0, makespan = 0.0, cell_cost = 0.0;
    int32_t *ops_left;
    int32_t S, M, P, n, i, s, d, crosses = 0;
    int64_t SM;
    if (!out || ipup__table_shape(t, NULL, 0)) return IPUP_ERR_ARG;
    if (!ipup__work_ok(t, work, work_bytes)) return IPUP_ERR_CAPACITY;
    if (!cost) cost = &default_cost;
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    S = t->stages; M = t->microbatches; P = t->devices; n = t->n_ops;
    SM = (int64_t)S * M;
    /* scratch: end_fwd (SM doubles), end_bwd (SM doubles), ops_left (M int32) */
    end_fwd = (double *)work;
    end_bwd = (double *)(void *)((uint8_t *)work + (size_t)8 * (size_t)SM);
    ops_left = (int32_t *)(void *)((uint8_t *)work + (size_t)16 * (size_t)SM);
    for (i = 0; i < SM; i++) end_fwd[i] = end_bwd[i] = -1.0;
    for (i = 0; i < M; i++) ops_left[i] = 0;
    for (d = 0; d < P; d++) {
        device_free_at[d] = 0.0;
        device_work[d] = 0.0;
        device_inflight[d] = 0;
        device_bytes[d] = 0;
    }
    for (s = 0; s < S; s++) { last_wgrad_mb[s] = -1; inflight[s] = 0; }
    out->stages = S; out->microbatches = M; out->devices = P; out->steps = t->steps; out->n_ops = n;
    out->in_order = 1;
    out->first_mb_done = -1; out->first_mb = -1;
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->stage < 0 || o->stage >= S || o->mb < 0 || o->mb >= M || o->device < 0 ||
            o->device >= P || o->kind < 1 || o->kind > 4 || (i > 0 && o->step < t->ops[i - 1].step))
            return IPUP_ERR_INVALID_TABLE;
        ops_left[o->mb]++;
    }
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        int64_t x = (int64_t)o->mb * S + o->stage;
        double op_cost = ipup_sched_op_cost(cost, o), ready = 0.0, start, end, dep_end;
        s = o->stage; d = o->device;
        /* BSP: close the previous step */
        if (i > 0 && o->step != t->ops[i - 1].step) {
            out->bsp_time += step_max + (crosses ? cost->exchange : 0.0) + cost->sync;
            step_max = 0.0; crosses = 0;
        }
        /* an overlapped F&B cell runs its F, then its B: the cell costs both */
        cell_cost = i > 0 && o->step == t->ops[i - 1].step && o->device == t->ops[i - 1].device
                        ? cell_cost + op_cost
                        : op_cost;
        if (cell_cost > step_max) step_max = cell_cost;
        if (ipup__crosses(t, o)) crosses = 1;
        /* async: inputs arrive (plus exchange when they cross devices) */
#define IPUP__DEP(arr, idx, dst)                                                          \
    do {                                                                                  \
        if ((arr)[idx] < 0.0) return IPUP_ERR_INVALID_TABLE;                              \
        dep_end = (arr)[idx] + (ipup__stage_elsewhere(t, dst, d) ? cost->exchange : 0.0); \
        if (dep_end > ready) ready = dep_end;                                             \
    } while (0)
        if (o->kind == IPUP_OP_F) {
            if (!ipup__first_stage(t, s)) IPUP__DEP(end_fwd, x - 1, s - 1);
        } else if (o->kind == IPUP_OP_W) {
            IPUP__DEP(end_bwd, x, s);
        } else {
            IPUP__DEP(end_fwd, x, s);
            if (!ipup__last_stage(t, s)) IPUP__DEP(end_bwd, x + 1, s + 1);
        }
#undef IPUP__DEP
        start = device_free_at[d] > ready ? device_free_at[d] : ready;
        end = start + op_cost;
        device_free_at[d] = end;
        if (end > makespan) makespan = end;
        if (o->kind == IPUP_OP_F) { if (end > end_fwd[x]) end_fwd[x] = end; } /* latest branch */
        else if (o->kind != IPUP_OP_W && end > end_bwd[x]) end_bwd[x] = end;
        device_work[d] += op_cost;
        out->work += op_cost;
        /* §9: per device */
        ipup__measure_device(t, o, act_bytes, device_inflight, device_bytes, out);
        /* in-flight and in-order (a concurrent stage: counted on branch 0) */
        if (ipup_op_branch(o) > 0) {
        } else if (o->kind == IPUP_OP_F) {
            if (++inflight[s] > out->peak_inflight[s]) out->peak_inflight[s] = inflight[s];
        } else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) {
            inflight[s]--;
            if (o->mb < last_wgrad_mb[s]) out->in_order = 0;
            last_wgrad_mb[s] = o->mb;
        }
        if (--ops_left[o->mb] == 0 && out->first_mb_done < 0) {
            out->first_mb_done = o->step + 1;
            out->first_mb = o->mb;
        }
    }
    if (n > 0) out->bsp_time += step_max + (crosses ? cost->exchange : 0.0) + cost->sync;
    out->async_time = makespan;
    ipup__measure_totals(t, act_bytes, out);
    if (t->forward_only) ipup__fwd_measure(t, cost, act_bytes, end_fwd, end_bwd, out);
    return IPUP_OK;
}

/* >>timing: op start times under BSP or async timing, and the activations held */
static int ipup__svg_cost_ok(const ipup_sched_cost *c, int32_t stages); /* >>svg */
/* BSP: every op starts with its step (ipup__step_cost) */
static IPUP__UNUSED void ipup__times_bsp(const ipup_table *t, const ipup_sched_cost *c,
                                         double *start) {
    int32_t i = 0, k;
    double now = 0.0;
    while (i < t->n_ops) {
        int32_t j = ipup__step_end(t, i);
        for (k = i; k < j; k++) start[k] = now;
        now += ipup__step_cost(t, c, i, j);
        i = j;
    }
}

/* Async, by the rules of ipup_sched_measure's async time (docs/schedules.md §4): each device
   runs its ops in table order, an op starts when its device is free and its inputs have
   arrived (plus the exchange when they cross devices); F(s, m) waits for F(s-1, m), B or I
   for F(s, m) and B/I(s+1, m), W for B/I(s, m); of a concurrent stage's branches the latest
   counts. test_sched_render checks the makespan against measure's async_time. */
IPUPIPE_DEF int ipup_sched_op_times(const ipup_table *t, const ipup_sched_cost *cost, int timing,
                                    void *work, size_t work_bytes, double *start) {
    ipup_sched_cost default_cost = ipup_sched_cost_default();
    double free_at[IPUP_SCHED_MAX_STAGES], *end_fwd, *end_bwd;
    int64_t SM, x;
    int32_t i, S, d;
    if (ipup__table_shape(t, NULL, 0) || !start || (timing != IPUP_SCHED_TIMING_ASYNC &&
                                                    timing != IPUP_SCHED_TIMING_BSP))
        return IPUP_ERR_ARG;
    if (!cost) cost = &default_cost;
    if (!ipup__svg_cost_ok(cost, t->stages)) return IPUP_ERR_ARG;
    for (i = 1; i < t->n_ops; i++)
        if (t->ops[i].step < t->ops[i - 1].step) return IPUP_ERR_ARG;
    if (timing == IPUP_SCHED_TIMING_BSP) { ipup__times_bsp(t, cost, start); return IPUP_OK; }
    S = t->stages;
    SM = (int64_t)S * t->microbatches;
    if (!work || ((uintptr_t)work & 7u) || work_bytes < IPUP_SCHED_DRAW_WORK_BYTES(S,
        t->microbatches, 0)) return IPUP_ERR_CAPACITY;
    end_fwd = (double *)work;
    end_bwd = end_fwd + SM;
    for (x = 0; x < SM; x++) end_fwd[x] = end_bwd[x] = -1.0;
    for (d = 0; d < IPUP_SCHED_MAX_STAGES; d++) free_at[d] = 0.0;
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        double ready = 0.0, end, dep[2] = {-2.0, -2.0};
        int32_t s = o->stage, dst[2] = {0, 0}, k;
        d = o->device;
        if (s < 0 || s >= S || o->mb < 0 || o->mb >= t->microbatches || d < 0 || d >= t->devices)
            return IPUP_ERR_INVALID_TABLE;
        x = (int64_t)o->mb * S + s;
        if (o->kind == IPUP_OP_F) {
            if (!ipup__first_stage(t, s)) { dep[0] = end_fwd[x - 1]; dst[0] = s - 1; }
        } else if (o->kind == IPUP_OP_W) {
            dep[0] = end_bwd[x]; dst[0] = s;
        } else {
            dep[0] = end_fwd[x]; dst[0] = s;
            if (!ipup__last_stage(t, s)) { dep[1] = end_bwd[x + 1]; dst[1] = s + 1; }
        }
        for (k = 0; k < 2; k++) {
            double at;
            if (dep[k] < -1.5) continue;
            if (dep[k] < 0.0) return IPUP_ERR_INVALID_TABLE;
            at = dep[k] + (ipup__stage_elsewhere(t, dst[k], d) ? cost->exchange : 0.0);
            if (at > ready) ready = at;
        }
        start[i] = free_at[d] > ready ? free_at[d] : ready;
        end = start[i] + ipup_sched_op_cost(cost, o);
        free_at[d] = end;
        if (o->kind == IPUP_OP_F) { if (end > end_fwd[x]) end_fwd[x] = end; }
        else if (o->kind != IPUP_OP_W && end > end_bwd[x]) end_bwd[x] = end;
    }
    return IPUP_OK;
}

/* 1 when op i (of a table's ops) releases its stage's activation: a B, or a W */
static IPUP__UNUSED int ipup__releases(const ipup_op *o) {
    return o->kind == IPUP_OP_B || o->kind == IPUP_OP_W;
}

IPUPIPE_DEF int ipup_sched_held(const ipup_table *t, const int64_t *act_bytes, int64_t *held,
                                int64_t *peak) {
    int64_t now[IPUP_SCHED_MAX_STAGES], top[IPUP_SCHED_MAX_STAGES];
    int32_t i, d;
    if (ipup__table_shape(t, NULL, 0)) return IPUP_ERR_ARG;
    for (d = 0; d < IPUP_SCHED_MAX_STAGES; d++) now[d] = top[d] = 0;
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        int64_t a;
        d = o->device;
        if (d < 0 || d >= t->devices || o->stage < 0 || o->stage >= t->stages ||
            (i > 0 && o->step < t->ops[i - 1].step))
            return IPUP_ERR_ARG;
        a = t->forward_only ? 0 : act_bytes ? act_bytes[o->stage] : 1;
        if (o->kind == IPUP_OP_F) now[d] += a;
        if (now[d] > top[d]) top[d] = now[d];
        if (held) held[i] = now[d];
        if (ipup__releases(o)) now[d] -= a;
    }
    for (d = 0; peak && d < t->devices; d++) peak[d] = top[d];
    return IPUP_OK;
}

/* >>grid: the text grids, rows of devices, and PyTorch's steps view */
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
        n = ipup_snprintf(buf, len, "%d%c%d", (int)ipup_sched_popxl_stage(-with_stage, o),
                          ipup__kind_char(o->kind), (int)o->mb);
    else if (with_stage) n = ipup_sched_op_str(o, buf, len);
    else n = ipup_snprintf(buf, len, "%c%d", ipup__kind_char(o->kind), (int)o->mb);
    return n < 0 ? 0 : n;
}

IPUPIPE_DEF int32_t ipup_sched_popxl_stage(int32_t stages, const ipup_op *op) {
    if (!op) return -1;
    return op->kind == IPUP_OP_F ? op->stage : 2 * stages - 2 - op->stage;
}

/* one grid cell: " " and the op's token (or ".." when idle), padded to cell_width */
static IPUP__UNUSED void ipup__grid_cell(ipup__writer *w, const ipup_op *o, int with_stage,
                                         int cell_width) {
    char tok[48];
    int n = o ? ipup__grid_token(o, with_stage, tok, sizeof tok) : 2;
    ipup__write_bytes(w, " ", 1);
    ipup__write_bytes(w, o ? tok : "..", (size_t)n);
    ipup__write_pad(w, (size_t)(cell_width - n));
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
static IPUP__UNUSED void ipup__grid_row(ipup__writer *w, const ipup_table *t, int32_t d,
                                        int with_stage, int cell_width, int sorted) {
    int32_t window[256], base, col = 0, i, k;
    const ipup_op *pending = NULL;
    if (sorted) {
        for (i = 0; i < t->n_ops; i++) {
            const ipup_op *o = &t->ops[i];
            if (o->device != d || o->step < 0 || o->step >= t->steps) continue;
            if (pending && o->step != pending->step) {
                ipup__grid_cell(w, pending, with_stage, cell_width);
                col++;
            }
            for (; col < o->step; col++) ipup__grid_cell(w, NULL, with_stage, cell_width);
            pending = o;
        }
        if (pending) { ipup__grid_cell(w, pending, with_stage, cell_width); col++; }
        for (; col < t->steps; col++) ipup__grid_cell(w, NULL, with_stage, cell_width);
        return;
    }
    for (base = 0; base < t->steps && !w->err; base += 256) {
        int32_t n_window = t->steps - base < 256 ? t->steps - base : 256;
        for (k = 0; k < n_window; k++) window[k] = -1;
        for (i = 0; i < t->n_ops; i++)
            if (t->ops[i].device == d && t->ops[i].step >= base && t->ops[i].step < base + n_window)
                window[t->ops[i].step - base] = i;
        for (k = 0; k < n_window; k++)
            ipup__grid_cell(w, window[k] >= 0 ? &t->ops[window[k]] : NULL, with_stage, cell_width);
    }
}

/* the step-number line over the grid: numbers at the columns c with c % every == 0, where every
   (1, 2, 5, 10, ...) leaves room for the widest number */
static IPUP__UNUSED void ipup__grid_ruler(ipup__writer *w, const ipup_table *t, int label_width,
                                          int cell_width) {
    char num[16];
    int32_t every = 1, m = 0, c, digits = ipup_snprintf(num, sizeof num, "%d", (int)t->steps);
    int64_t pos;
    while ((int64_t)every * (cell_width + 1) < (int64_t)digits + 1) {
        every *= m % 3 == 1 ? 5 : 2;
        if (m % 3 == 1) every /= 2;
        m++;
    }
    ipup__write_str(w, "step");
    ipup__write_pad(w, (size_t)(label_width > 4 ? label_width - 4 : 0));
    pos = label_width > 4 ? label_width : 4;
    for (c = 0; c < t->steps && !w->err; c += every) {
        /* a cell is " " + token, after the label and a space */
        int64_t at = (int64_t)label_width + 2 + (int64_t)c * (cell_width + 1);
        int n = ipup_snprintf(num, sizeof num, "%d", (int)c + 1);
        if (at > pos) ipup__write_pad(w, (size_t)(at - pos));
        ipup__write_bytes(w, num, (size_t)n);
        pos = (at > pos ? at : pos) + n;
    }
    ipup__write_str(w, "\n");
}

static IPUP__UNUSED int ipup__render_grid(const ipup_table *t, int flags, ipup_write_fn write,
                                          void *user) {
    const int popxl = (flags & IPUP_SCHED_GRID_POPXL) != 0;
    ipup__writer w;
    char tok[48], label[32];
    int with_stage, cell_width = 2, label_width = 0, n, i, sorted;
    int32_t d;
    if (ipup__table_shape(t, NULL, 0) || t->steps < 0 || !write) return IPUP_ERR_ARG;
    with_stage = popxl ? -(int)t->stages : ipup__shared_devices(t);
    for (i = 0; i < t->n_ops; i++) {
        n = ipup__grid_token(&t->ops[i], with_stage, tok, sizeof tok);
        if (n > cell_width) cell_width = n;
    }
    for (d = 0; d < t->devices; d++) {
        n = ipup_snprintf(label, sizeof label, "IPU%d", (int)d);
        if (n > label_width) label_width = n;
    }
    sorted = ipup__step_sorted(t);
    ipup__writer_init(&w, write, user);
    if (flags & IPUP_SCHED_GRID_STEPS) ipup__grid_ruler(&w, t, label_width, cell_width);
    for (d = 0; d < t->devices && !w.err; d++) {
        n = ipup_snprintf(label, sizeof label, "IPU%d", (int)d);
        ipup__write_bytes(&w, label, (size_t)n);
        ipup__write_pad(&w, (size_t)(label_width - n + 1));
        ipup__grid_row(&w, t, d, with_stage, cell_width, sorted);
        ipup__write_bytes(&w, "\n", 1);
    }
    return ipup__writer_end(&w);
}
IPUPIPE_DEF int ipup_sched_render_grid(const ipup_table *t, ipup_write_fn write, void *user) {
    return ipup__render_grid(t, 0, write, user);
}
IPUPIPE_DEF int ipup_sched_render_grid_popxl(const ipup_table *t, ipup_write_fn write, void *user) {
    return ipup__render_grid(t, IPUP_SCHED_GRID_POPXL, write, user);
}
IPUPIPE_DEF int ipup_sched_render_grid_ex(const ipup_table *t, int flags, ipup_write_fn write,
                                          void *user) {
    return ipup__render_grid(t, flags, write, user);
}

IPUPIPE_DEF int ipup_sched_render_steps(const ipup_table *t, int32_t mark_step, ipup_write_fn write,
                                        void *user) {
    ipup__writer w;
    int32_t col_width[IPUP_SCHED_MAX_STAGES];
    char tok[48], label[32];
    int32_t d, step, i, j, digits = 1, n;
    if (ipup__table_shape(t, NULL, 0) || t->steps < 0 || !write) return IPUP_ERR_ARG;
    ipup__writer_init(&w, write, user);
    /* PyTorch: step labels "Step " + zero-padded index; columns "Rank i" */
    for (n = t->steps; n >= 10; n /= 10) digits++; /* labels are 1-based: Step 1 .. Step T */
    for (d = 0; d < t->devices; d++)
        col_width[d] = ipup_snprintf(label, sizeof label, "Rank %d", (int)d);
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->device < 0 || o->device >= t->devices) continue;
        n = ipup_sched_op_str(o, tok, sizeof tok);
        if (n > col_width[o->device]) col_width[o->device] = n;
    }
    ipup__write_pad(&w, (size_t)(5 + digits + 2));
    for (d = 0; d < t->devices; d++) {
        n = ipup_snprintf(label, sizeof label, "Rank %d", (int)d);
        if (d) ipup__write_str(&w, " ");
        ipup__write_str(&w, label);
        ipup__write_pad(&w, (size_t)(col_width[d] - n));
    }
    ipup__write_str(&w, "\n");
    i = 0;
    for (step = 0; step < t->steps && !w.err; step++) {
        {
            char num[16];
            int n_digits = ipup_snprintf(num, sizeof num, "%d", (int)step + 1);
            ipup__write_str(&w, "Step ");
            while (n_digits++ < digits) ipup__write_str(&w, "0");
            ipup__write_str(&w, num);
            ipup__write_str(&w, ": ");
        }
        j = i;
        for (d = 0; d < t->devices; d++) {
            int32_t k = j;
            n = 0;
            tok[0] = '\0';
            /* ops of this step are sorted by device; a device may hold several (invalid table) */
            while (k < t->n_ops && t->ops[k].step == step && t->ops[k].device < d) k++;
            if (k < t->n_ops && t->ops[k].step == step && t->ops[k].device == d)
                n = ipup_sched_op_str(&t->ops[k], tok, sizeof tok);
            if (d) ipup__write_str(&w, " ");
            ipup__write_str(&w, tok);
            ipup__write_pad(&w, (size_t)(col_width[d] > n ? col_width[d] - n : 0));
        }
        while (i < t->n_ops && t->ops[i].step <= step) i++;
        if (step == mark_step) ipup__write_str(&w, " <-- ERROR HERE");
        ipup__write_str(&w, "\n");
    }
    return ipup__writer_end(&w);
}

/* >>trace: the Chrome trace JSON */
/* Walks the ops in step order with the BSP start time of their step: a step starts when the
   one before it ends (ipup__step_cost). */
typedef struct {
    const ipup_table *t;
    const ipup_sched_cost *c;
    int32_t i, end; /* next op; one past the current step */
    double now, next; /* start of the current step; start of the next */
} ipup__timed;
static IPUP__UNUSED void ipup__timed_init(ipup__timed *it, const ipup_table *t,
                                          const ipup_sched_cost *c) {
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
static const char *const ipup__trace_cname[5] = {"thread_state_running", "thread_state_iowait",
                                                 "terrible", "olive", "rail_animation"};

/* the phases (ipup_sched_phases) as spans on their own track, pid = P */
static IPUP__UNUSED void ipup__trace_phases(ipup__writer *w, const ipup_table *t,
                                            const ipup_sched_cost *c, double total) {
    static const char *const names[3] = {"ramp-up", "main", "ramp-down"};
    int32_t phase_steps[6], p, i = 0;
    double phase_at[4] = {0.0, total, total, total}, now = 0.0;
    if (ipup_sched_phases(t, phase_steps) || !t->ops) return;
    while (i < t->n_ops) {
        int32_t j = ipup__step_end(t, i), step = t->ops[i].step;
        double step_cost = ipup__step_cost(t, c, i, j);
        if (step < phase_steps[2]) phase_at[1] = now + step_cost;
        if (step <= phase_steps[3]) phase_at[2] = now + step_cost;
        now += step_cost;
        i = j;
    }
    if (phase_steps[3] < phase_steps[2]) phase_at[2] = phase_at[1];
    ipup__write_fmt(w,
                    ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{"
                    "\"name\":\"phases\"}}",
                    (int)t->devices);
    for (p = 0; p < 3; p++) {
        if (phase_steps[2 * p + 1] < phase_steps[2 * p]) continue;
        ipup__write_fmt(w,
                        ",\n{\"name\":\"%s\",\"cat\":\"phase\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"first_step\":%d,\"last_step\":%d}}",
                        names[p], (int)t->devices, phase_at[p] * 1000.0,
                        (phase_at[p + 1] - phase_at[p]) * 1000.0, (int)phase_steps[2 * p],
                        (int)phase_steps[2 * p + 1]);
    }
}

/* the scratch of a drawing: op_times' arrays, then start (n_ops doubles), then held (n_ops
   int64); NULL when work is too small or misaligned */
static IPUP__UNUSED double *ipup__draw_start(const ipup_table *t, void *work, size_t work_bytes) {
    if (!work || ((uintptr_t)work & 7u) ||
        work_bytes < IPUP_SCHED_DRAW_WORK_BYTES(t->stages, t->microbatches, t->n_ops))
        return NULL;
    return (double *)work + 2 * (int64_t)t->stages * t->microbatches;
}

IPUPIPE_DEF int ipup_sched_write_trace(const ipup_table *t, const ipup_sched_cost *cost,
                                       ipup_write_fn write, void *user) {
    return ipup_sched_write_trace_ex(t, cost, IPUP_SCHED_TIMING_BSP, NULL, 0, write, user);
}

IPUPIPE_DEF int ipup_sched_write_trace_ex(const ipup_table *t, const ipup_sched_cost *cost,
                                          int timing, void *work, size_t work_bytes,
                                          ipup_write_fn write, void *user) {
    ipup_sched_cost default_cost = ipup_sched_cost_default();
    ipup__writer w;
    ipup__timed it;
    const ipup_op *o;
    double *start = NULL, end_all = 0.0;
    int32_t d;
    int first = 1, rc;
    if (ipup__table_shape(t, NULL, 0) || !write) return IPUP_ERR_ARG;
    if (timing != IPUP_SCHED_TIMING_ASYNC && timing != IPUP_SCHED_TIMING_BSP) return IPUP_ERR_ARG;
    if (!cost) cost = &default_cost;
    if (timing == IPUP_SCHED_TIMING_ASYNC) {
        start = ipup__draw_start(t, work, work_bytes);
        if (!start) return IPUP_ERR_CAPACITY;
        rc = ipup_sched_op_times(t, cost, timing, work, work_bytes, start);
        if (rc) return rc;
    }
    ipup__writer_init(&w, write, user);
    ipup__write_str(&w, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    for (d = 0; d < t->devices; d++) {
        ipup__write_fmt(&w,
                        "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{"
                        "\"name\":\"IPU%d\"}}",
                        first ? "" : ",\n", (int)d, (int)d);
        first = 0;
    }
    ipup__timed_init(&it, t, cost);
    while (!w.err && (o = ipup__timed_next(&it)) != NULL) {
        char tok[48];
        double at = start ? start[it.i - 1] : it.now, dur = ipup_sched_op_cost(cost, o);
        if (at + dur > end_all) end_all = at + dur;
        ipup_sched_op_str(o, tok, sizeof tok);
        ipup__write_fmt(
            &w,
            ",\n{\"name\":\"%s\",\"cat\":\"%c\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,"
            "\"dur\":%.3f,\"cname\":\"%s\",\"args\":{\"stage\":%d,\"microbatch\":%d,\"step\":%d}}",
            tok, ipup__kind_char(o->kind), (int)o->device, at * 1000.0, dur * 1000.0,
            ipup__trace_cname[(o->kind - 1) & 3], (int)o->stage, (int)o->mb, (int)o->step);
    }
    if (!start) end_all = it.next;
    /* the update U after the last op on every device (one unit, as in the SVG), then the
       phases (BSP: they are made of steps) */
    for (d = 0; d < t->devices && t->n_ops > 0 && !t->forward_only; d++)
        ipup__write_fmt(&w,
                        ",\n{\"name\":\"U\",\"cat\":\"U\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":"
                        "%.3f,\"dur\":1000.000,\"cname\":\"%s\"}",
                        (int)d, end_all * 1000.0, ipup__trace_cname[4]);
    if (!start) ipup__trace_phases(&w, t, cost, it.next);
    ipup__write_str(&w, start ? "\n],\"otherData\":{\"timing\":\"async (dataflow)\"}}\n"
                              : "\n]}\n");
    return ipup__writer_end(&w);
}

/* >>svg: the SVG Gantt chart: layout first (sizes, bands), then drawing band by band */
#define IPUP__SVG_FS 14.0      /* the font size of every text but the title (16, bold) */
#define IPUP__SVG_CHAR_W 8.4   /* width of a character of the 14 px monospace font */
#define IPUP__SVG_LEFT 56.0
#define IPUP__SVG_RIGHT 16.0
#define IPUP__SVG_ROW_H 30.0   /* default row height */
#define IPUP__SVG_TOP 32.0     /* the title line */
#define IPUP__SVG_AXIS_H 24.0  /* the time axis under a band */
#define IPUP__SVG_MEM_ROW 36.0 /* a device's row of the memory panel */
#define IPUP__SVG_MAX_W 1048576.0 /* the widest canvas in px, whatever the costs or options */
typedef struct ipup__svg {
    const ipup_table *t;
    const ipup_sched_cost *c;
    const ipup_sched_figures *fig;
    const ipup_sched_svg_opts *opts;
    const double *start;  /* async (or memory): each op's start time; NULL: BSP steps */
    int64_t *held;        /* memory: ipup_sched_held's held, NULL without the panel */
    int64_t peak[IPUP_SCHED_MAX_STAGES], peak_all;
    int16_t chunk[IPUP_SCHED_MAX_STAGES]; /* stage -> its rank among its device's stages */
    double unit, band_time, total;
    double extent;        /* the longest band, in cost units (with the update after the last) */
    double width, height; /* the canvas, px */
    double band_height, head, row_h;
    double phase_time[4]; /* the phases' bounds in time: ramp-up, main, ramp-down, end */
    int32_t bands;
    int32_t kinds_present; /* bit k - 1 for each op kind k in the table */
    int32_t timed, legend_lines, async, shared, chunks, overlap;
    char title[300];
} ipup__svg;

static const char *const ipup__svg_fill[5] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f",
                                              "#b07aa1"};
/* a device's second (fourth, ...) stage: the lighter tints of the same colours */
static const char *const ipup__svg_fill_light[4] = {"#a0cbe8", "#ffbe7d", "#ff9d9a", "#8cd17d"};
static const char *const ipup__svg_phase_name[3] = {"ramp-up", "main", "ramp-down"};
static const char *const ipup__svg_phase_fill[3] = {"#fff3e0", "#e8f5e9", "#e3f2fd"};

/* The op index where the band starting at op i (its step starting at time band_start) ends, and
   that band's end time: steps go in until one would pass band_time (a band holds at
   least one step). Async time (or the memory panel): one band of every op. */
static IPUP__UNUSED int32_t ipup__svg_band(const ipup__svg *chart, int32_t i, double band_start,
                                           double *band_end) {
    double now = band_start;
    if (chart->start) { *band_end = chart->total; return chart->t->n_ops; }
    while (i < chart->t->n_ops) {
        int32_t j = ipup__step_end(chart->t, i);
        double step_cost = ipup__step_cost(chart->t, chart->c, i, j);
        if (now > band_start && now + step_cost - band_start > chart->band_time + 1e-9) break;
        now += step_cost;
        i = j;
    }
    *band_end = now;
    return i;
}

/* legend items: F B I W present, U, idle, the phases present, a second stage per device,
   overlapped ops; their count and widths */
#define IPUP__SVG_LEGEND_ITEMS 11
static IPUP__UNUSED int ipup__svg_legend_item(const ipup__svg *chart, int k, const char **name,
                                              const char **fill) {
    static const char *const names[5] = {"forward F", "backward B", "input grad I", "weight grad W",
                                         "update U"};
    if (k < 4) {
        *name = names[k];
        *fill = ipup__svg_fill[k];
        return (chart->kinds_present >> k) & 1;
    }
    if (k == 4) { *name = names[4]; *fill = ipup__svg_fill[4]; return !chart->t->forward_only; }
    if (k == 5) { *name = "idle"; *fill = "#dddddd"; return 1; }
    if (k == 9) {
        *name = chart->t->dual ? "lighter: model copy B (stages S/2..S-1); label stage:mb"
                               : "lighter: a device's 2nd stage (chunk); label stage:mb";
        *fill = ipup__svg_fill_light[0];
        return chart->chunks;
    }
    if (k == 10) {
        *name = "hatched halves: overlapped F&B in one slot";
        *fill = "url(#ipup-hatch)";
        return chart->overlap;
    }
    *name = ipup__svg_phase_name[k - 6]; *fill = ipup__svg_phase_fill[k - 6];
    return chart->fig && !chart->async && chart->phase_time[k - 5] > chart->phase_time[k - 6];
}
static IPUP__UNUSED double ipup__svg_item_width(const char *name) {
    return 18.0 + (double)ipup__strlen(name) * IPUP__SVG_CHAR_W + 16.0;
}

static IPUP__UNUSED void ipup__svg_default_title(ipup__svg *chart) {
    const ipup_table *t = chart->t;
    const ipup_sched_cost *c = chart->c;
    if (t->split_backward)
        ipup_snprintf(chart->title, sizeof chart->title,
                      "S=%d M=%d P=%d T=%d   cost F=%g I=%g W=%g exchange=%g sync=%g",
                      (int)t->stages, (int)t->microbatches, (int)t->devices, (int)t->steps, c->f,
                      c->i, c->w, c->exchange, c->sync);
    else
        ipup_snprintf(chart->title, sizeof chart->title,
                      "S=%d M=%d P=%d T=%d   cost F=%g B=%g exchange=%g sync=%g", (int)t->stages,
                      (int)t->microbatches, (int)t->devices, (int)t->steps, c->f, c->b, c->exchange,
                      c->sync);
}

/* one cost or stage scale: 0, or in [IPUP_SCHED_COST_MIN, IPUP_SCHED_COST_MAX] (NaN fails) */
static IPUP__UNUSED int ipup__cost_value_ok(double v) {
    return v == 0.0 || (v >= IPUP_SCHED_COST_MIN && v <= IPUP_SCHED_COST_MAX);
}
/* every cost and stage scale so: the total stays in double range */
static IPUP__UNUSED int ipup__svg_cost_ok(const ipup_sched_cost *c, int32_t stages) {
    const double v[6] = {c->f, c->b, c->i, c->w, c->exchange, c->sync};
    int32_t k;
    for (k = 0; k < 6; k++)
        if (!ipup__cost_value_ok(v[k])) return 0;
    for (k = 0; c->stage_scale && k < stages; k++)
        if (!ipup__cost_value_ok(c->stage_scale[k])) return 0;
    return 1;
}

/* 1 when op i shares its slot with another (an overlap cell, "(a;b)OVERLAP_F_B") */
static IPUP__UNUSED int ipup__svg_overlapped(const ipup_table *t, int32_t i) {
    const ipup_op *o = &t->ops[i];
    if (o->overlap_index > 0) return 1;
    return i + 1 < t->n_ops && t->ops[i + 1].overlap_index > 0 && t->ops[i + 1].step == o->step &&
           t->ops[i + 1].device == o->device;
}

/* what the chart shows: op kinds, a time axis, chunks, overlap cells; the total time and the
   phases' bounds in time */
static IPUP__UNUSED void ipup__svg_contents(ipup__svg *chart, double *max_step_cost) {
    const ipup_table *t = chart->t;
    int32_t i, j, s, phase_bound[3], phase = 0, n_on[IPUP_SCHED_MAX_STAGES];
    chart->kinds_present = 0;
    for (s = 0; s < IPUP_SCHED_MAX_STAGES; s++) n_on[s] = 0;
    for (s = 0; s < t->stages; s++) {
        int16_t d = t->stage_device[s];
        chart->chunk[s] = (int16_t)(d >= 0 && d < IPUP_SCHED_MAX_STAGES ? n_on[d]++ : 0);
        if (chart->chunk[s] > 0 && !t->concurrent) chart->chunks = 1;
    }
    chart->shared = ipup__shared_devices(t);
    for (i = 0; i < t->n_ops; i++) {
        double op_cost = ipup_sched_op_cost(chart->c, &t->ops[i]);
        if (t->ops[i].kind >= 1 && t->ops[i].kind <= 4)
            chart->kinds_present |= 1 << (t->ops[i].kind - 1);
        if (op_cost != 1.0) chart->timed = 1;
        if (t->ops[i].overlap_index > 0) chart->overlap = 1;
        if (chart->async && chart->start[i] + op_cost > chart->total)
            chart->total = chart->start[i] + op_cost;
    }
    if (chart->c->exchange != 0.0 || chart->c->sync != 0.0 || chart->async) chart->timed = 1;
    if (chart->fig) {
        phase_bound[0] = chart->fig->main_phase[0];
        phase_bound[1] = chart->fig->ramp_down[0];
    } else {
        phase_bound[0] = 0;
        phase_bound[1] = t->steps;
    }
    phase_bound[2] = t->steps;
    chart->phase_time[0] = 0.0;
    for (i = 0; i < t->n_ops; i = j) {
        double sc, bsp_total = chart->async ? 0.0 : chart->total;
        j = ipup__step_end(t, i);
        sc = ipup__step_cost(t, chart->c, i, j);
        while (phase < 3 && t->ops[i].step >= phase_bound[phase])
            chart->phase_time[++phase] = bsp_total;
        if (!chart->async) chart->total += sc;
        if (sc > *max_step_cost) *max_step_cost = sc;
    }
    while (phase < 3) chart->phase_time[++phase] = chart->total;
}

/* sizes: total time, phase times, unit, bands, canvas */
static IPUP__UNUSED void ipup__svg_layout(ipup__svg *chart, const ipup_sched_svg_opts *opts) {
    const ipup_table *t = chart->t;
    double max_width = opts && opts->width != 0.0 ? opts->width : 1600.0, legend_x = 8.0,
           band_start = 0.0, band_end, max_step_cost = 0.0;
    int32_t i, k;
    ipup__svg_contents(chart, &max_step_cost);
    if (chart->start) max_step_cost = chart->total; /* one band */
    if (max_width > IPUP__SVG_MAX_W) max_width = IPUP__SVG_MAX_W;
    chart->unit = opts && opts->unit > 0.0 ? opts->unit : 24.0;
    if (!(opts && opts->unit > 0.0) && max_width > 0.0 &&
        IPUP__SVG_LEFT + IPUP__SVG_RIGHT + (chart->total + 1.0) * chart->unit > max_width) {
        chart->unit = (max_width - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / (chart->total + 1.0);
        if (chart->unit < 8.0 && !chart->start) chart->unit = 8.0;
    }
    /* a band holds whole steps, so the longest step must fit one (costs far apart, e.g.
       F=1e10 B=2, would otherwise make a canvas of 1e11 px and an axis of 1e9 ticks):
       shrink, and the ops too narrow for their labels go without; unfolded, the canvas
       stops at IPUP__SVG_MAX_W */
    if (max_width > 0.0 &&
        (max_step_cost + 1.0) * chart->unit > max_width - IPUP__SVG_LEFT - IPUP__SVG_RIGHT)
        chart->unit = (max_width - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / (max_step_cost + 1.0);
    if ((max_width <= 0.0 || chart->start) &&
        (chart->total + 1.0) * chart->unit > IPUP__SVG_MAX_W - IPUP__SVG_LEFT - IPUP__SVG_RIGHT)
        chart->unit = (IPUP__SVG_MAX_W - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / (chart->total + 1.0);
    chart->band_time = max_width > 0.0
                           ? (max_width - IPUP__SVG_LEFT - IPUP__SVG_RIGHT) / chart->unit - 1.0
                           : chart->total + 1.0;
    if (chart->band_time < 1.0) chart->band_time = 1.0;
    for (i = 0, chart->bands = 0, chart->extent = 1.0; i < t->n_ops || chart->bands == 0;
         chart->bands++) {
        i = ipup__svg_band(chart, i, band_start, &band_end);
        if (band_end - band_start + (i >= t->n_ops ? 1.0 : 0.0) > chart->extent)
            chart->extent = band_end - band_start + (i >= t->n_ops ? 1.0 : 0.0);
        band_start = band_end;
    }
    if (opts && opts->title)
        ipup_snprintf(chart->title, sizeof chart->title, "%.200s", opts->title);
    else ipup__svg_default_title(chart);
    if (!(opts && opts->no_legend)) /* a small multiple: the picture around it says it */
        ipup_snprintf(chart->title + ipup__strlen(chart->title),
                      sizeof chart->title - ipup__strlen(chart->title), "   %s",
                      chart->async ? "async (dataflow) time" : "BSP (lock-step) time");
    chart->width = IPUP__SVG_LEFT + chart->extent * chart->unit + IPUP__SVG_RIGHT;
    if (chart->width < 16.0 + (double)ipup__strlen(chart->title) * 9.9)
        chart->width = 16.0 + (double)ipup__strlen(chart->title) * 9.9;
    if (chart->width < 320.0) chart->width = 320.0;
    chart->legend_lines = opts && opts->no_legend ? 0 : 1;
    for (k = 0; k < IPUP__SVG_LEGEND_ITEMS && chart->legend_lines; k++) {
        const char *name, *fill;
        if (!ipup__svg_legend_item(chart, k, &name, &fill)) continue;
        if (legend_x + ipup__svg_item_width(name) > chart->width - 8.0 && legend_x > 8.0) {
            chart->legend_lines++;
            legend_x = 8.0;
        }
        legend_x += ipup__svg_item_width(name);
    }
    chart->row_h = opts && opts->row_height > 0.0 ? opts->row_height : IPUP__SVG_ROW_H;
    /* above the rows: the phase labels and the step numbers (BSP), a gap (async) */
    chart->head = chart->async ? 6.0 : 40.0;
    chart->band_height = chart->head + chart->row_h * (double)t->devices +
                         (chart->timed ? IPUP__SVG_AXIS_H : 0.0) + 10.0;
    chart->height = IPUP__SVG_TOP + chart->band_height * (double)chart->bands +
                    (chart->held ? 26.0 + IPUP__SVG_MEM_ROW * (double)t->devices + 8.0 : 0.0) +
                    22.0 * (double)chart->legend_lines + 6.0;
}

/* The length (1..4) of the well-formed UTF-8 sequence at s (RFC 3629: no overlong form,
   no surrogate, at most U+10FFFF), 0 when the bytes there are not one */
static IPUP__UNUSED int ipup__utf8_len(const unsigned char *s) {
    int n, i;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) n = 3;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4) n = 4;
    else return 0;
    for (i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
    if (n == 3 && s[0] == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
    if (n == 3 && s[0] == 0xED && s[1] >= 0xA0) return 0; /* UTF-16 surrogate */
    if (n == 4 && s[0] == 0xF0 && s[1] < 0x90) return 0; /* overlong */
    if (n == 4 && s[0] == 0xF4 && s[1] >= 0x90) return 0; /* above U+10FFFF */
    return n;
}

/* XML text: & < > " escaped (text or a double-quoted attribute); control characters XML
   1.0 forbids and bytes that are not well-formed UTF-8 become U+FFFD, so any title gives a
   well-formed document */
static IPUP__UNUSED void ipup__svg_text(ipup__writer *w, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = ipup__utf8_len(p);
        if (*p == '<') ipup__write_str(w, "&lt;");
        else if (*p == '>') ipup__write_str(w, "&gt;");
        else if (*p == '&') ipup__write_str(w, "&amp;");
        else if (*p == '"') ipup__write_str(w, "&quot;");
        else if (n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r'))
            ipup__write_str(w, "\xEF\xBF\xBD");
        else ipup__write_bytes(w, (const char *)p, (size_t)n);
        p += n ? n : 1;
    }
}

/* a band's background: phase shading and labels (where they fit), device labels, idle */
static IPUP__UNUSED void ipup__svg_band_bg(ipup__writer *w, const ipup__svg *chart, double y,
                                           double bs, double be, int last) {
    const double left = IPUP__SVG_LEFT, unit = chart->unit,
                 rows = chart->row_h * (double)chart->t->devices;
    int32_t phase, d;
    for (phase = 0; chart->fig && !chart->async && phase < 3; phase++) {
        double from = chart->phase_time[phase] > bs ? chart->phase_time[phase] : bs,
               to = chart->phase_time[phase + 1] < be ? chart->phase_time[phase + 1] : be;
        if (to <= from) continue;
        ipup__write_fmt(
            w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
            left + (from - bs) * unit, y, (to - from) * unit, chart->head + rows,
            ipup__svg_phase_fill[phase]);
        if ((double)ipup__strlen(ipup__svg_phase_name[phase]) * IPUP__SVG_CHAR_W + 4.0 <=
            (to - from) * unit)
            ipup__write_fmt(w, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                            left + (from - bs) * unit + 2.0, y + 15.0, ipup__svg_phase_name[phase]);
        if (from > bs)
            ipup__write_fmt(w,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
                            "stroke-dasharray=\"4,3\"/>\n",
                            left + (from - bs) * unit, y, left + (from - bs) * unit,
                            y + chart->head + rows);
    }
    for (d = 0; d < chart->t->devices; d++) {
        double row_y = y + chart->head + chart->row_h * (double)d;
        ipup__write_fmt(w, "<text x=\"4\" y=\"%.1f\">IPU%d</text>\n",
                        row_y + chart->row_h / 2.0 + 5.0, (int)d);
        ipup__write_fmt(
            w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#dddddd\"/>\n",
            left, row_y + 2.0, (be - bs) * unit, chart->row_h - 4.0);
        if (last)
            ipup__write_fmt(w,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"%s\" stroke=\"white\"><title>update U</title></rect>%s",
                            left + (be - bs) * unit, row_y + 2.0, unit, chart->row_h - 4.0,
                            ipup__svg_fill[4], unit >= 12.0 ? "" : "\n");
        if (last && unit >= 12.0)
            ipup__write_fmt(w, "<text x=\"%.1f\" y=\"%.1f\" fill=\"white\">U</text>\n",
                            left + (be - bs) * unit + unit / 2.0 - 4.2,
                            row_y + chart->row_h / 2.0 + 5.0);
    }
}

/* the time axis under a band: ticks 1, 2, 5, 10, ... units apart, at least 48 px (at most
   one per 48 px of the band); a label that would touch the one before it is left out
   (long labels such as "3.35e+10" at 48 px) */
static IPUP__UNUSED void ipup__svg_axis(ipup__writer *w, const ipup__svg *chart, double y,
                                        double band_start, double band_end) {
    double tick = 1.0, v, label_end = -1e300;
    int m = 0, left = (int)((band_end - band_start) * chart->unit / 48.0) + 2;
    while (tick * chart->unit < 48.0 && m < 2200) { tick *= m % 3 == 1 ? 2.5 : 2.0; m++; }
    while (tick * chart->unit >= 480.0 && tick > 1e-300 && m < 4400) {
        tick /= m % 3 == 1 ? 2.5 : 2.0;
        m++;
    }
    ipup__write_fmt(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n",
                    IPUP__SVG_LEFT, y, IPUP__SVG_LEFT + (band_end - band_start) * chart->unit, y);
    for (v = (double)(int64_t)(band_start / tick) * tick; v <= band_end + 1e-9 && left-- > 0;
         v += tick) {
        double x = IPUP__SVG_LEFT + (v - band_start) * chart->unit;
        char num[32];
        int n;
        if (v < band_start - 1e-9) continue;
        n = ipup_snprintf(num, sizeof num, "%g", v);
        ipup__write_fmt(w,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>",
                        x, y, x, y + 3.0);
        if (x + (double)n * IPUP__SVG_CHAR_W / 2.0 <= chart->width - 2.0 &&
            x - (double)n * IPUP__SVG_CHAR_W / 2.0 >= label_end + 4.0) {
            ipup__write_fmt(w,
                            "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" "
                            "text-anchor=\"middle\">%s</text>\n",
                            x, y + 17.0, num);
            label_end = x + (double)n * IPUP__SVG_CHAR_W / 2.0;
        }
    }
}

/* one op's box: its kind's colour (lighter for a device's second stage), half a box for each
   op of an overlap cell, hatched; its label (micro-batch, or stage:mb on a device of several
   stages) where it fits */
static IPUP__UNUSED void ipup__svg_op(ipup__writer *w, const ipup__svg *chart, int32_t i, double x,
                                      double y) {
    const ipup_op *o = &chart->t->ops[i];
    double op_cost = ipup_sched_op_cost(chart->c, o), bw = op_cost * chart->unit,
           row_y = y + chart->head + chart->row_h * (double)o->device, by = row_y + 2.0,
           bh = chart->row_h - 4.0;
    int light = chart->chunk[o->stage] % 2 == 1 && !chart->t->concurrent,
        half = ipup__svg_overlapped(chart->t, i);
    char tok[48], label[32];
    int n;
    if (half) { bh /= 2.0; if (o->overlap_index > 0) by += bh; }
    ipup_sched_op_str(o, tok, sizeof tok);
    ipup__write_fmt(w,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                    "stroke=\"white\"><title>%s step %d</title></rect>",
                    x, by, bw, bh,
                    light ? ipup__svg_fill_light[(o->kind - 1) & 3]
                          : ipup__svg_fill[(o->kind - 1) & 3],
                    tok, (int)o->step + 1);
    if (half)
        ipup__write_fmt(w,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"url(#ipup-hatch)\"/>",
                        x, by, bw, bh);
    n = chart->shared ? ipup_snprintf(label, sizeof label, "%d:%d", (int)o->stage, (int)o->mb)
                      : 0;
    if (n == 0 || (double)n * IPUP__SVG_CHAR_W + 4.0 > bw)
        n = ipup_snprintf(label, sizeof label, "%d", (int)o->mb);
    if ((double)n * IPUP__SVG_CHAR_W + 4.0 <= bw && bh >= 14.0)
        ipup__write_fmt(w, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>", x + 2.5,
                        by + bh / 2.0 + 5.0, light ? "#222" : "white", label);
    ipup__write_str(w, "\n");
}

/* the ops of one band (ops i .. end), their step numbers above the rows (BSP) */
static IPUP__UNUSED void ipup__svg_band_ops(ipup__writer *w, const ipup__svg *chart, double y,
                                            double band_start, int32_t i, int32_t end) {
    const ipup_table *t = chart->t;
    double now = band_start, label_end = -1.0;
    if (chart->async) {
        for (; i < end && !w->err; i++)
            ipup__svg_op(w, chart, i, IPUP__SVG_LEFT + chart->start[i] * chart->unit, y);
        return;
    }
    while (i < end && !w->err) {
        int32_t j = ipup__step_end(t, i), k;
        double x = IPUP__SVG_LEFT + (now - band_start) * chart->unit;
        char num[16];
        int n = ipup_snprintf(num, sizeof num, "%d", (int)t->ops[i].step + 1);
        if (x >= label_end + 4.0 && x + 1.0 + (double)n * IPUP__SVG_CHAR_W <= chart->width) {
            ipup__write_fmt(w, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\">%s</text>\n", x + 1.0,
                            y + 34.0, num);
            label_end = x + 1.0 + (double)n * IPUP__SVG_CHAR_W;
        }
        for (k = i; k < j; k++) ipup__svg_op(w, chart, k, x, y);
        now += ipup__step_cost(t, chart->c, i, j);
        i = j;
    }
}

static IPUP__UNUSED void ipup__svg_legend(ipup__writer *w, const ipup__svg *chart, double y) {
    double x = 8.0;
    int k;
    for (k = 0; k < IPUP__SVG_LEGEND_ITEMS && chart->legend_lines; k++) {
        const char *name, *fill;
        if (!ipup__svg_legend_item(chart, k, &name, &fill)) continue;
        if (x + ipup__svg_item_width(name) > chart->width - 8.0 && x > 8.0) { y += 22.0; x = 8.0; }
        ipup__write_fmt(
            w,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#999\" "
            "stroke-width=\"0.5\"/><text x=\"%.1f\" y=\"%.1f\">",
            x, y, fill, x + 18.0, y + 12.0);
        ipup__svg_text(w, name);
        ipup__write_str(w, "</text>\n");
        x += ipup__svg_item_width(name);
    }
}

/* the memory panel under the chart: per device, the activation bytes it holds over time
   (ipup_sched_held) as a filled step curve on one scale, the first time it holds its peak
   marked with a red line and "peak N" */
static IPUP__UNUSED void ipup__svg_memory(ipup__writer *w, const ipup__svg *chart, double y0) {
    const ipup_table *t = chart->t;
    const double h = IPUP__SVG_MEM_ROW - 10.0;
    int32_t d, i;
    ipup__write_fmt(w, "<text x=\"8\" y=\"%.1f\">activations held per device (peak %lld; "
                    "from F to its B, or W when split)</text>\n", y0 + 17.0,
                    (long long)chart->peak_all);
    for (d = 0; d < t->devices && !w->err; d++) {
        double row_y = y0 + 26.0 + IPUP__SVG_MEM_ROW * (double)d, base = row_y + 4.0 + h,
               px = -1.0;
        int64_t cur = 0;
        ipup__write_fmt(w, "<text x=\"4\" y=\"%.1f\">IPU%d</text>\n", row_y + 22.0, (int)d);
        ipup__write_fmt(w, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"#f4f4f4\"/>\n<path fill=\"#c9b3d9\" stroke=\"#6b4c85\" "
                        "d=\"M%.1f %.1f", IPUP__SVG_LEFT, row_y + 4.0, chart->total * chart->unit,
                        h, IPUP__SVG_LEFT, base);
        for (i = 0; i < t->n_ops && !w->err; i++) {
            const ipup_op *o = &t->ops[i];
            double xs, xe;
            int64_t a;
            if (o->device != d) continue;
            xs = IPUP__SVG_LEFT + chart->start[i] * chart->unit;
            xe = xs + ipup_sched_op_cost(chart->c, o) * chart->unit;
            ipup__write_fmt(w, " H%.1f V%.1f", xs,
                            base - h * (double)chart->held[i] / (double)chart->peak_all);
            if (px < 0.0 && chart->held[i] == chart->peak[d] && chart->peak[d] > 0) px = xs;
            cur = chart->held[i];
            if (ipup__releases(o)) {
                a = t->forward_only ? 0
                    : chart->opts->act_bytes ? chart->opts->act_bytes[o->stage] : 1;
                cur -= a;
                ipup__write_fmt(w, " H%.1f V%.1f", xe,
                                base - h * (double)cur / (double)chart->peak_all);
            }
        }
        ipup__write_fmt(w, " H%.1f V%.1f Z\"/>\n", IPUP__SVG_LEFT + chart->total * chart->unit,
                        base);
        if (px >= 0.0) {
            char num[48];
            int n = ipup_snprintf(num, sizeof num, "peak %lld", (long long)chart->peak[d]);
            double tx = px + 4.0;
            if (tx + (double)n * IPUP__SVG_CHAR_W > chart->width - 4.0)
                tx = px - 4.0 - (double)n * IPUP__SVG_CHAR_W;
            ipup__write_fmt(w, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                            "stroke=\"#d62728\" stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" "
                            "fill=\"#d62728\">%s</text>\n", px, row_y + 2.0, px, base, tx,
                            row_y + 16.0, num);
        }
    }
}

/* the start times (async, or any timing with the memory panel) and what is held, in
   opts->work; 0, or the error */
static IPUP__UNUSED int ipup__svg_times(ipup__svg *chart, const ipup_sched_svg_opts *opts) {
    const ipup_table *t = chart->t;
    double *start;
    int32_t d;
    int rc;
    if (!chart->async && !opts->memory) return 0;
    start = ipup__draw_start(t, opts->work, opts->work_bytes);
    if (!start) return IPUP_ERR_CAPACITY;
    rc = ipup_sched_op_times(t, chart->c, opts->timing, opts->work, opts->work_bytes, start);
    if (rc) return rc;
    chart->start = start;
    if (!opts->memory) return 0;
    chart->held = (int64_t *)(void *)(start + t->n_ops);
    rc = ipup_sched_held(t, opts->act_bytes, chart->held, chart->peak);
    chart->peak_all = 1;
    for (d = 0; d < t->devices; d++)
        if (chart->peak[d] > chart->peak_all) chart->peak_all = chart->peak[d];
    return rc;
}

IPUPIPE_DEF int ipup_sched_write_svg_ex(const ipup_table *t, const ipup_sched_cost *cost,
                                        const ipup_sched_figures *fig,
                                        const ipup_sched_svg_opts *opts, ipup_write_fn write,
                                        void *user) {
    ipup_sched_cost default_cost = ipup_sched_cost_default();
    ipup__svg chart;
    ipup__writer w;
    int32_t i = 0, band;
    double band_start = 0.0, y = IPUP__SVG_TOP;
    int rc;
    if (ipup__table_shape(t, NULL, 0) || !write) return IPUP_ERR_ARG;
    if (opts && opts->timing != IPUP_SCHED_TIMING_ASYNC && opts->timing != IPUP_SCHED_TIMING_BSP)
        return IPUP_ERR_ARG;
    IPUPIPE_MEMSET(&chart, 0, sizeof chart);
    chart.t = t; chart.c = cost ? cost : &default_cost; chart.fig = fig; chart.opts = opts;
    chart.async = opts && opts->timing == IPUP_SCHED_TIMING_ASYNC;
    if (!ipup__svg_cost_ok(chart.c, t->stages)) return IPUP_ERR_ARG;
    if (opts && (rc = ipup__svg_times(&chart, opts)) != 0) return rc;
    ipup__svg_layout(&chart, opts);
    ipup__writer_init(&w, write, user);
    ipup__write_fmt(&w,
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                    "font-family=\"monospace\" font-size=\"14\">\n",
                    chart.width, chart.height);
    ipup__write_str(&w, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    if (chart.overlap)
        ipup__write_str(&w, "<defs><pattern id=\"ipup-hatch\" width=\"6\" height=\"6\" "
                            "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#000\" "
                            "stroke-opacity=\"0.5\" stroke-width=\"2\"/></pattern></defs>\n");
    ipup__write_str(&w, "<text x=\"8\" y=\"22\" font-size=\"16\" font-weight=\"bold\">");
    ipup__svg_text(&w, chart.title);
    ipup__write_str(&w, "</text>\n");
    for (band = 0; band < chart.bands && !w.err; band++) {
        double band_end;
        int32_t end = ipup__svg_band(&chart, i, band_start, &band_end);
        y = IPUP__SVG_TOP + chart.band_height * (double)band;
        ipup__svg_band_bg(&w, &chart, y, band_start, band_end, end >= t->n_ops && !t->forward_only);
        ipup__svg_band_ops(&w, &chart, y, band_start, i, end);
        if (chart.timed)
            ipup__svg_axis(&w, &chart, y + chart.head + chart.row_h * (double)t->devices + 2.0,
                           band_start, band_end);
        i = end;
        band_start = band_end;
    }
    y = IPUP__SVG_TOP + chart.band_height * (double)chart.bands;
    if (chart.held) {
        ipup__svg_memory(&w, &chart, y);
        y += 26.0 + IPUP__SVG_MEM_ROW * (double)t->devices + 8.0;
    }
    ipup__svg_legend(&w, &chart, y);
    ipup__write_str(&w, "</svg>\n");
    return ipup__writer_end(&w);
}

IPUPIPE_DEF int ipup_sched_write_svg(const ipup_table *t, const ipup_sched_cost *cost,
                                     const ipup_sched_figures *fig, ipup_write_fn write,
                                     void *user) {
    return ipup_sched_write_svg_ex(t, cost, fig, NULL, write, user);
}

/* >>json: the figures as one JSON object */
/* a table with concurrent stages: the branches and what each device holds (docs/schedules.md
   §6, §9) */
static IPUP__UNUSED void ipup__json_conc(ipup__writer *w, const ipup_table *t,
                                         const ipup_sched_figures *fig) {
    int32_t s, b, d;
    ipup__write_str(w, ",\"stage_devices\":[");
    for (s = 0; s < t->stages; s++) {
        ipup__write_str(w, s ? ",[" : "[");
        for (b = 0; b < t->n_branches[s] && b < IPUP_SCHED_MAX_BRANCHES; b++)
            ipup__write_fmt(w, "%s%d", b ? "," : "", (int)t->branch_device[s][b]);
        ipup__write_str(w, "]");
    }
    ipup__write_str(w, "],\"peak_inflight_device\":[");
    for (d = 0; d < t->devices; d++)
        ipup__write_fmt(w, "%s%d", d ? "," : "", (int)fig->peak_inflight_device[d]);
    ipup__write_str(w, "],\"stash_bytes_device\":[");
    for (d = 0; d < t->devices; d++)
        ipup__write_fmt(w, "%s%lld", d ? "," : "", (long long)fig->stash_bytes_device[d]);
    ipup__write_fmt(w, "],\"activations_stored\":%d", (int)fig->inflight_total);
}

/* a JSON string (RFC 8259): " and \\ escaped, control characters as \\n or \\u00XX, bytes
   that are not well-formed UTF-8 as U+FFFD */
static IPUP__UNUSED void ipup__write_json_str(ipup__writer *w, const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    ipup__write_str(w, "\"");
    while (*p) {
        int n = ipup__utf8_len(p);
        if (*p == '"' || *p == '\\') {
            char e[2];
            e[0] = '\\';
            e[1] = (char)*p;
            ipup__write_bytes(w, e, 2);
        } else if (*p == '\n') ipup__write_str(w, "\\n");
        else if (*p < 0x20) ipup__write_fmt(w, "\\u%04x", (unsigned)*p);
        else if (n == 0) ipup__write_str(w, "\xEF\xBF\xBD");
        else ipup__write_bytes(w, (const char *)p, (size_t)n);
        p += n ? n : 1;
    }
    ipup__write_str(w, "\"");
}

IPUPIPE_DEF int ipup_sched_write_json(const ipup_table *t, const ipup_sched_figures *fig,
                                      const char *schedule, const char *warnings,
                                      ipup_write_fn write, void *user) {
    ipup__writer w;
    int32_t s;
    if (ipup__table_shape(t, NULL, 0) || !fig || !write) return IPUP_ERR_ARG;
    ipup__writer_init(&w, write, user);
    ipup__write_str(&w, "{\"schedule\":");
    ipup__write_json_str(&w, schedule ? schedule : "table");
    ipup__write_fmt(&w, ",\"stages\":%d,\"microbatches\":%d,\"devices\":%d,\"steps\":%d,\"ops\":%d",
                    (int)t->stages, (int)t->microbatches, (int)t->devices, (int)t->steps,
                    (int)t->n_ops);
    ipup__write_fmt(&w, ",\"stage_device\":[");
    for (s = 0; s < t->stages; s++)
        ipup__write_fmt(&w, "%s%d", s ? "," : "", (int)t->stage_device[s]);
    ipup__write_fmt(&w, "],\"split_backward\":%s", t->split_backward ? "true" : "false");
    if (t->forward_only) /* forward-only block (docs/schedules.md §8) */
        ipup__write_fmt(
            &w, ",\"forward_only\":true,\"latency\":%.6g,\"latency_steps\":%d,\"throughput\":%.6g",
            fig->fwd_latency, (int)fig->fwd_latency_steps, fig->fwd_throughput);
    ipup__write_fmt(
        &w, ",\"unit_utilisation\":%.6g,\"work\":%.6g,\"bsp_time\":%.6g,\"async_time\":%.6g",
        fig->unit_utilisation, fig->work, fig->bsp_time, fig->async_time);
    ipup__write_fmt(&w, ",\"bubble_fraction\":%.6g,\"bubble_fraction_async\":%.6g", fig->bubble_bsp,
                    fig->bubble_async);
    ipup__write_str(&w, ",\"peak_inflight\":[");
    for (s = 0; s < t->stages; s++)
        ipup__write_fmt(&w, "%s%d", s ? "," : "", (int)fig->peak_inflight[s]);
    ipup__write_str(&w, "],\"stash_bytes\":[");
    for (s = 0; s < t->stages; s++)
        ipup__write_fmt(&w, "%s%lld", s ? "," : "", (long long)fig->stash_bytes[s]);
    ipup__write_fmt(&w, "],\"stash_bytes_total\":%lld", (long long)fig->stash_total);
    ipup__write_fmt(&w, ",\"first_microbatch_done\":%d", (int)fig->first_mb_done);
    ipup__write_fmt(&w, ",\"phases\":{\"ramp_up\":[%d,%d],\"main\":[%d,%d],\"ramp_down\":[%d,%d]}",
                    (int)fig->ramp_up[0], (int)fig->ramp_up[1], (int)fig->main_phase[0],
                    (int)fig->main_phase[1], (int)fig->ramp_down[0], (int)fig->ramp_down[1]);
    if (t->concurrent) ipup__json_conc(&w, t, fig); /* §9: a table with concurrent stages */
    ipup__write_fmt(&w, ",\"in_order\":%s,\"warnings\":[", fig->in_order ? "true" : "false");
    if (warnings) {
        const char *p = warnings;
        int first_warning = 1;
        while (*p) {
            const char *eol = ipup__strchr(p, '\n');
            size_t n = eol ? (size_t)(eol - p) : ipup__strlen(p);
            if (n > 0) {
                char line[1024];
                if (n >= sizeof line) n = sizeof line - 1;
                IPUPIPE_MEMCPY(line, p, n);
                line[n] = '\0';
                if (!first_warning) ipup__write_str(&w, ",");
                ipup__write_json_str(&w, line);
                first_warning = 0;
            }
            p += eol ? (size_t)(eol - p) + 1 : ipup__strlen(p);
        }
    }
    ipup__write_str(&w, "]}\n");
    return ipup__writer_end(&w);
}

/* >>csv: PyTorch's compute-only CSV: the writer, the scanner and the loader */
#define IPUP__CSV_MAX_CELL 128     /* longest cell accepted, in characters */
#define IPUP__CSV_MAX_COLS (1 << 26) /* cells per row */

/* the branch suffix of a token, "1F3.1" (docs/schedules.md §6, §9): after the micro-batch,
   nothing or ".<branch>" (0..IPUP_SCHED_MAX_BRANCHES-1); the branch + 1 into *br (0 without
   a suffix); 0 when fine */
static IPUP__UNUSED int ipup__csv_branch(const char *p, size_t n, size_t i, int *br) {
    *br = 0;
    if (i == n) return 0;
    if (p[i] != '.' || i + 2 != n || p[i + 1] < '0' || p[i + 1] >= '0' + IPUP_SCHED_MAX_BRANCHES)
        return -1;
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

IPUPIPE_DEF int ipup_sched_write_csv(const ipup_table *t, ipup_write_fn write, void *user) {
    ipup__writer w;
    char tok[48];
    int32_t d, i;
    if (ipup__table_shape(t, NULL, 0) || t->steps < 0 || !write) return IPUP_ERR_ARG;
    ipup__writer_init(&w, write, user);
    for (d = 0; d < t->devices && !w.err; d++) {
        int32_t col = 0; /* cells written so far in this row */
        for (i = 0; i < t->n_ops; i++) {
            const ipup_op *o = &t->ops[i];
            int n;
            if (o->device != d) continue;
            while (col < o->step) { if (col) ipup__write_str(&w, ","); col++; }
            if (col == o->step) {
                if (col) ipup__write_str(&w, ",");
                col++;
            } else {
                continue; /* a second op in the same cell (invalid table): not representable */
            }
            if (i + 1 < t->n_ops && ipup__overlap_pair(o, &t->ops[i + 1]) &&
                t->ops[i + 1].step == o->step && t->ops[i + 1].device == d) {
                /* PyTorch's overlapped F&B cell, "(0F7;7B3)OVERLAP_F_B" */
                ipup__write_str(&w, "(");
                n = ipup_sched_op_str(o, tok, sizeof tok);
                ipup__write_bytes(&w, tok, (size_t)n);
                ipup__write_str(&w, ";");
                o = &t->ops[++i];
                n = ipup_sched_op_str(o, tok, sizeof tok);
                ipup__write_bytes(&w, tok, (size_t)n);
                ipup__write_str(&w, ")OVERLAP_F_B");
                continue;
            }
            n = ipup_sched_op_str(o, tok, sizeof tok);
            ipup__write_bytes(&w, tok, (size_t)n);
        }
        while (col < t->steps) { if (col) ipup__write_str(&w, ","); col++; }
        ipup__write_str(&w, "\n");
    }
    return ipup__writer_end(&w);
}

/* Parse one compute token "<stage><F|B|I|W><mb>" in p[0..n), with an optional branch
   suffix ".<b>" (docs/schedules.md §9) into *br (b + 1, else 0). 0 when fine. */
static IPUP__UNUSED int ipup__csv_token(const char *p, size_t n, int32_t *stage, int *kind,
                                        int32_t *mb, int *br) {
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

/* add one op found at (row, col), both 0-based (messages count from 1) */
static IPUP__UNUSED int ipup__csv_add(ipup__csv_ctx *x, const char *p, size_t n, int32_t row,
                                      int32_t col, int sub, char *msg, size_t msg_len) {
    int32_t stage, mb;
    int kind, branch_plus1;
    char show[64];
    if (ipup__csv_token(p, n, &stage, &kind, &mb, &branch_plus1)) {
        ipup__csv_show(show, sizeof show, p, n);
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                         "CSV row %d, column %d: '%s' is not a compute action "
                         "<stage><F|B|I|W><micro-batch> such as 0F3 (the compute-only format has "
                         "no communication actions; stage and micro-batch have at most 9 digits; a "
                         "branch of a concurrent stage adds .0 to .%d, e.g. 1F3.1)",
                         (int)(row + 1), (int)(col + 1), show, IPUP_SCHED_MAX_BRANCHES - 1);
    }
    if (stage >= IPUP_SCHED_MAX_STAGES)
        return ipup__err(
            msg, msg_len, IPUP_ERR_PARSE,
            "CSV row %d, column %d: stage %d is beyond the maximum %d (IPUP_SCHED_MAX_STAGES)",
            (int)(row + 1), (int)(col + 1), (int)stage, IPUP_SCHED_MAX_STAGES - 1);
    if (mb >= IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                         "CSV row %d, column %d: micro-batch %d is beyond the maximum %d",
                         (int)(row + 1), (int)(col + 1), (int)mb, IPUP_SCHED_MAX_MICROBATCHES - 1);
    if (x->n_ops >= 0x3fffffff) return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV: too many ops");
    if (x->ops) {
        ipup_op *o;
        if (x->n_ops >= x->cap)
            return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                             "CSV: more ops than the ops array holds (%d)", (int)x->cap);
        o = &x->ops[x->n_ops];
        o->step = col;
        o->mb = mb;
        o->stage = (int16_t)stage;
        o->device = (int16_t)row;
        o->kind = (int8_t)kind;
        o->overlap_index = (int8_t)sub; o->branch_plus1 = (int8_t)branch_plus1; o->reserved_ = 0;
    }
    x->n_ops++;
    if (stage > x->max_stage) x->max_stage = stage;
    if (mb > x->max_mb) x->max_mb = mb;
    if (col + 1 > x->steps) x->steps = col + 1;
    return 0;
}

static IPUP__UNUSED int ipup__csv_parse(const char *text, size_t text_len, ipup__csv_ctx *x,
                                        char *msg, size_t msg_len) {
    size_t pos = 0;
    int rc;
    x->rows = 0; x->max_stage = -1; x->max_mb = -1; x->n_ops = 0; x->steps = 0;
    if (!text) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "CSV text is NULL");
    if (text_len > ((size_t)1 << 31))
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV: text longer than 2 GiB");
    while (pos < text_len) {
        size_t end = pos, cell_start;
        int32_t row = x->rows, col = 0;
        while (end < text_len && text[end] != '\n') end++;
        if (row >= IPUP_SCHED_MAX_STAGES)
            return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                             "CSV: more than %d rows (one row per device)", IPUP_SCHED_MAX_STAGES);
        cell_start = pos;
        for (;;) { /* cells of this row */
            size_t cell_end = cell_start, from, to;
            while (cell_end < end && text[cell_end] != ',') cell_end++;
            from = cell_start; to = cell_end;
            while (from < to && (text[from] == ' ' || text[from] == '\t')) from++;
            while (to > from &&
                   (text[to - 1] == ' ' || text[to - 1] == '\t' || text[to - 1] == '\r'))
                to--;
            if (to - from > IPUP__CSV_MAX_CELL)
                return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                                 "CSV row %d, column %d: cell longer than %d characters",
                                 (int)(row + 1), (int)(col + 1), IPUP__CSV_MAX_CELL);
            if (to > from) {
                if (text[from] == '(') {
                    /* "(0F7;7B3)OVERLAP_F_B": two ops in one slot */
                    size_t close = from, tok_start, sub = 0;
                    static const char suffix[] = "OVERLAP_F_B";
                    char show[64];
                    while (close < to && text[close] != ')') close++;
                    if (close >= to || to - close - 1 != sizeof suffix - 1 ||
                        !ipup__memeq(text + close + 1, suffix, sizeof suffix - 1)) {
                        ipup__csv_show(show, sizeof show, text + from, to - from);
                        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                                         "CSV row %d, column %d: '%s' is not an overlap cell of "
                                         "the form (0F7;7B3)OVERLAP_F_B",
                                         (int)(row + 1), (int)(col + 1), show);
                    }
                    tok_start = from + 1;
                    while (tok_start <= close) {
                        size_t tok_end = tok_start;
                        while (tok_end < close && text[tok_end] != ';') tok_end++;
                        if (sub >= 4)
                            return ipup__err(
                                msg, msg_len, IPUP_ERR_PARSE,
                                "CSV row %d, column %d: more than 4 ops in one overlap cell",
                                (int)(row + 1), (int)(col + 1));
                        rc = ipup__csv_add(x, text + tok_start, tok_end - tok_start, row, col,
                                           (int)sub, msg, msg_len);
                        if (rc) return rc;
                        sub++;
                        tok_start = tok_end + 1;
                    }
                } else {
                    rc = ipup__csv_add(x, text + from, to - from, row, col, 0, msg, msg_len);
                    if (rc) return rc;
                }
            }
            if (cell_end >= end) break;
            cell_start = cell_end + 1;
            if (++col >= IPUP__CSV_MAX_COLS)
                return ipup__err(msg, msg_len, IPUP_ERR_PARSE, "CSV row %d: more than %d cells",
                                 (int)(row + 1), IPUP__CSV_MAX_COLS);
        }
        x->rows++;
        pos = end + 1; /* a final newline does not start another row */
    }
    if (x->rows == 0 || x->n_ops == 0)
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                         "CSV: no ops found (expected rows of cells such as 0F0,,0F1,0B0)");
    return 0;
}

IPUPIPE_DEF int ipup_sched_csv_scan(const char *text, size_t text_len, int32_t *stages,
                                    int32_t *microbatches, int32_t *devices, int32_t *n_ops,
                                    char *msg, size_t msg_len) {
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

IPUPIPE_DEF int ipup_sched_csv_load(const char *text, size_t text_len, ipup_op *ops,
                                    int32_t cap_ops, void *work, size_t work_bytes, ipup_table *out,
                                    char *msg, size_t msg_len) {
    ipup__csv_ctx x;
    int32_t S, M, i, s;
    uint8_t *has_w;
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
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "csv_load: the CSV has %d ops but the ops array holds %d", (int)x.n_ops,
                         ops ? (int)cap_ops : 0);
    if (!work || ((uintptr_t)work & 7u) || work_bytes < IPUP_SCHED_WORK_BYTES(S, M))
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "csv_load: work must be 8-byte aligned and hold IPUP_SCHED_WORK_BYTES(%d, "
                         "%d) = %lld bytes",
                         (int)S, (int)M, (long long)IPUP_SCHED_WORK_BYTES(S, M));
    x.ops = ops;
    x.cap = cap_ops;
    rc = ipup__csv_parse(text, text_len, &x, msg, msg_len);
    if (rc) return rc;
    SM = (int64_t)S * M;
    has_w = (uint8_t *)work;
    IPUPIPE_MEMSET(has_w, 0, (size_t)SM);
    for (i = 0; i < x.n_ops; i++) {
        const ipup_op *o = &ops[i];
        if (o->kind == IPUP_OP_W) has_w[(int64_t)o->mb * S + o->stage] = 1;
        /* first appearance, row-major */
        if (out->stage_device[o->stage] < 0) out->stage_device[o->stage] = o->device;
    }
    for (i = 0; i < x.n_ops; i++) {
        ipup_op *o = &ops[i];
        /* older notation: B followed by W of the same stage and micro-batch = input gradient */
        if (o->kind == IPUP_OP_B && has_w[(int64_t)o->mb * S + o->stage]) o->kind = IPUP_OP_I;
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

/* >>respace: each device's order kept, every op placed as early as its inputs allow */
IPUPIPE_DEF int ipup_sched_respace(ipup_table *t, void *work, size_t work_bytes, char *msg,
                                   size_t msg_len) {
    int32_t dev_begin[IPUP_SCHED_MAX_STAGES + 1], dev_next[IPUP_SCHED_MAX_STAGES],
        pick[IPUP_SCHED_MAX_STAGES];
    int32_t *dev_ops, *step_fwd, *step_bwd, *step_wgrad;
    int32_t S, M, P, n, i, d, step = 0, placed = 0;
    int64_t SM;
    int rc;
    char op_text[80], dep_text[80];
    if (msg && msg_len) msg[0] = '\0';
    rc = ipup__table_shape(t, msg, msg_len);
    if (rc) return rc;
    if (t->concurrent) /* §9 */
        return ipup__err(
            msg, msg_len, IPUP_ERR_UNSUPPORTED,
            "respace: the table has concurrent stages (branch suffixes such as 1F3.1), whose "
            "branches must share a step; respace reads per-device orders and cannot keep them "
            "together: write the table in lock-step columns instead");
    if (!ipup__work_ok(t, work, work_bytes))
        return ipup__err(
            msg, msg_len, IPUP_ERR_CAPACITY,
            "respace: work must be 8-byte aligned and hold IPUP_SCHED_WORK_BYTES(%d, %d) bytes",
            (int)t->stages, (int)t->microbatches);
    S = t->stages; M = t->microbatches; P = t->devices; n = t->n_ops;
    SM = (int64_t)S * M;
    if ((int64_t)n > 3 * SM)
        return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE,
                         "respace: %d ops is more than 3 x S x M = %lld: some op appears twice",
                         (int)n, (long long)(3 * SM));
    ipup_sched_sort(t);
    dev_ops = (int32_t *)work;
    step_fwd = dev_ops + n;
    step_bwd = step_fwd + SM;
    step_wgrad = step_bwd + SM;
    for (i = 0; i < SM; i++) step_fwd[i] = step_bwd[i] = step_wgrad[i] = -1;
    for (d = 0; d <= P; d++) dev_begin[d] = 0;
    for (i = 0; i < n; i++) {
        const ipup_op *o = &t->ops[i];
        if (o->device < 0 || o->device >= P || o->stage < 0 || o->stage >= S || o->mb < 0 ||
            o->mb >= M || o->kind < 1 || o->kind > 4)
            return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE,
                             "respace: op %d is out of range (stage %d, micro-batch %d, device %d)",
                             (int)i, (int)o->stage, (int)o->mb, (int)o->device);
        dev_begin[o->device + 1]++;
    }
    for (d = 0; d < P; d++) dev_begin[d + 1] += dev_begin[d];
    for (d = 0; d < P; d++) dev_next[d] = dev_begin[d];
    /* each device's ops in table order */
    for (i = 0; i < n; i++) dev_ops[dev_next[t->ops[i].device]++] = i;
    for (d = 0; d < P; d++) dev_next[d] = dev_begin[d];
    while (placed < n) {
        int any = 0;
        for (d = 0; d < P; d++) {
            const ipup_op *o;
            int64_t x;
            int ok;
            pick[d] = -1;
            if (dev_next[d] >= dev_begin[d + 1]) continue;
            o = &t->ops[dev_ops[dev_next[d]]];
            x = (int64_t)o->mb * S + o->stage;
#define IPUP__DONE(v) ((v) >= 0 && (v) < step)
            if (o->kind == IPUP_OP_F)
                ok = ipup__first_stage(t, o->stage) || IPUP__DONE(step_fwd[x - 1]);
            else if (o->kind == IPUP_OP_W) ok = IPUP__DONE(step_bwd[x]);
            else ok = IPUP__DONE(step_fwd[x]) &&
                      (ipup__last_stage(t, o->stage) || IPUP__DONE(step_bwd[x + 1]));
#undef IPUP__DONE
            if (ok) { pick[d] = dev_ops[dev_next[d]]; any = 1; }
        }
        if (!any) {
            for (d = 0; d < P; d++) {
                const ipup_op *o;
                int64_t x;
                int dep_kind;
                int32_t dep_stage;
                if (dev_next[d] >= dev_begin[d + 1]) continue;
                o = &t->ops[dev_ops[dev_next[d]]];
                x = (int64_t)o->mb * S + o->stage;
                if (o->kind == IPUP_OP_F) { dep_kind = IPUP_OP_F; dep_stage = o->stage - 1; }
                else if (o->kind == IPUP_OP_W) { dep_kind = IPUP_OP_I; dep_stage = o->stage; }
                else if (step_fwd[x] < 0) { dep_kind = IPUP_OP_F; dep_stage = o->stage; }
                else { dep_kind = IPUP_OP_B; dep_stage = o->stage + 1; }
                return ipup__err(
                    msg, msg_len, IPUP_ERR_INVALID_TABLE,
                    "respace: the per-device orders deadlock at step %d: device %d waits to run "
                    "%s, which needs %s (missing, or queued behind another waiting op); reorder "
                    "the rows",
                    (int)step + 1, (int)d,
                    ipup__op_desc(op_text, sizeof op_text, o->kind, o->stage, o->mb),
                    ipup__op_desc(dep_text, sizeof dep_text, dep_kind, dep_stage, o->mb));
            }
        }
        for (d = 0; d < P; d++) {
            ipup_op *o;
            int32_t *slot;
            int64_t x;
            if (pick[d] < 0) continue;
            o = &t->ops[pick[d]];
            x = (int64_t)o->mb * S + o->stage;
            slot = o->kind == IPUP_OP_F ? step_fwd : o->kind == IPUP_OP_W ? step_wgrad : step_bwd;
            if (slot[x] >= 0)
                return ipup__err(msg, msg_len, IPUP_ERR_INVALID_TABLE,
                                 "respace: %s appears twice (device %d); remove one",
                                 ipup__op_desc(op_text, sizeof op_text, o->kind, o->stage, o->mb),
                                 (int)o->device);
            slot[x] = step;
            o->step = step;
            o->overlap_index = 0;
            dev_next[d]++;
            placed++;
        }
        step++;
    }
    t->steps = step;
    ipup_sched_sort(t);
    return IPUP_OK;
}

/* >>forward-only: the tables of inference, F ops only (docs/schedules.md §8) */
/* F ops only: every F(s,m) once, F(s,m) after F(s-1,m), one op per device per step, each
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
        int32_t P = g->P, base = m / P * P, group_size = g->M - base < P ? g->M - base : P;
        return (int64_t)(m / P) * P * g->V + (int64_t)(s / P) * group_size + (m - base);
    }
    return ((int64_t)s + m) * g->S + (g->S - 1 - s); /* the older micro-batch first on a tie */
}

static void ipup__fwd_place(ipup__gen *g) {
    int32_t n_fwd[IPUP_SCHED_MAX_STAGES], pick[IPUP_SCHED_MAX_STAGES], s, d, m;
    int64_t done = 0, total = (int64_t)g->S * g->M;
    if (g->kind == IPUP_SCHED_SEQUENTIAL) {
        for (m = 0; m < g->M; m++)
            for (s = 0; s < g->S; s++) {
                ipup__emit(g, g->stage_device[s], s, m, IPUP_OP_F);
                g->step++;
            }
        return;
    }
    for (s = 0; s < g->S; s++) n_fwd[s] = 0;
    while (done < total) { /* every step runs at least the oldest ready forward: no deadlock */
        for (d = 0; d < g->P; d++) {
            int64_t best = -1, key;
            pick[d] = -1;
            for (s = g->first_stage[d]; s >= 0; s = g->next_stage[s]) {
                m = n_fwd[s];
                if (m >= g->M || (s > 0 && n_fwd[s - 1] <= m)) continue;
                key = ipup__fwd_key(g, s, m);
                if (pick[d] < 0 || key < best) { pick[d] = s; best = key; }
            }
        }
        for (d = 0; d < g->P; d++) {
            if (pick[d] < 0) continue;
            ipup__emit(g, d, pick[d], n_fwd[pick[d]], IPUP_OP_F);
            n_fwd[pick[d]]++;
            done++;
        }
        g->step++;
    }
}

static int ipup__fwd_generate(ipup__gen *g, const ipup_sched_config *cfg, ipup_op *ops,
                              int32_t cap_ops, ipup_table *out, int *nwarn, char *msg,
                              size_t msg_len) {
    const char *kname = ipup__kind_names[g->kind];
    char err_text[300], warn_text[300];
    int32_t s, need;
    int rc;
    if (g->kind > IPUP_SCHED_ZBH1) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s has no forward-only form: it orders forwards around the backward; "
                         "for inference use grouped, gpipe, 1f1b, sequential or interleaved-1f1b",
                         kname);
    }
    if (g->kind == IPUP_SCHED_INTERLEAVED || g->kind == IPUP_SCHED_ZBH1) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(
            msg, msg_len, IPUP_ERR_CONFIG,
            "%s has no forward-only form: %s; for inference use grouped (Graphcore's pipelined "
            "inference), gpipe, 1f1b, sequential or interleaved-1f1b",
            kname,
            g->kind == IPUP_SCHED_ZBH1
                ? "its rule splits the backward into I and W, and inference has no backward"
                : "it alternates forward and backward steps, and inference has no backward");
    }
    if ((g->kind == IPUP_SCHED_GROUPED || g->kind == IPUP_SCHED_SEQUENTIAL) &&
        !ipup__is_pow2(g->P)) {
        ipup_snprintf(err_text, sizeof err_text,
                      "%s: the model uses %d IPUs, but multi-IPU devices come in powers of two (1, "
                      "2, 4, 8, 16, 32, 64); map the stages onto %d IPUs",
                      kname, (int)g->P, (int)ipup__pow2_ceil(g->P));
        ipup_snprintf(warn_text, sizeof warn_text,
                      "%s: %d IPUs is not a power of two; Graphcore multi-IPU devices come in 1, "
                      "2, 4, 8, 16, 32 or 64 IPUs (an error under strict)",
                      kname, (int)g->P);
        if ((rc = ipup__gen_rule(cfg->strict, nwarn, msg, msg_len, err_text, warn_text)) != IPUP_OK)
            return rc;
    }
    need = g->S * g->M; /* S <= 256, M <= 2^22: no overflow */
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s (forward only): the table needs %d ops but the ops array holds %d; "
                         "size it with S x M = %d ops (IPUP_SCHED_MAX_OPS(%d, %d) is enough)",
                         kname, (int)need, ops ? (int)cap_ops : 0, (int)need, (int)g->S, (int)g->M);
    }
    g->ops = ops;
    ipup__fwd_place(g);
    out->stages = g->S; out->microbatches = g->M; out->devices = g->P; out->steps = g->step;
    out->n_ops = g->n_ops; out->cap_ops = cap_ops; out->ops = ops;
    out->split_backward = 0;
    out->forward_only = 1;
    for (s = 0; s < g->S; s++) out->stage_device[s] = g->stage_device[s];
    ipup__gen_fill_warning(out, g->kind, nwarn, msg, msg_len);
    return IPUP_OK;
}

/* rule 1 of a forward-only table: only F ops appear */
static int ipup__fwd_ver_kind(ipup__verifier *v, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    if (!v->t->forward_only || o->kind == IPUP_OP_F) return IPUP_OK;
    ipup__ver_op(v, 1, i);
    return ipup__err(
        v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
        "rule 1 (nothing else appears): device %d, step %d: %s in a forward-only table (inference "
        "runs no backward); remove it, or make it a training table with every backward",
        (int)o->device, (int)o->step + 1, v->op_text);
}
/* rule 1 of a forward-only table: every F(s,m) present */
static int ipup__fwd_ver_complete(ipup__verifier *v) {
    int32_t s, m;
    for (m = 0; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            ipup_sched_verify_info *in = v->info;
            int32_t home = v->t->stage_device[s];
            if (v->step_fwd[(int64_t)m * v->S + s] >= 0) continue;
            in->rule = 1; in->op_index = -1; in->step = -1; in->device = home;
            in->stage = s; in->mb = m; in->kind = IPUP_OP_F;
            return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                             "rule 1 (every op once): %s is missing from the forward-only table "
                             "(stage %d lives on device %d); add it to a free step of device %d%s",
                             ipup__op_desc(v->op_text, sizeof v->op_text, IPUP_OP_F, s, m), (int)s,
                             (int)home, (int)home,
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
        if (t->ops[k].stage < 0 || t->ops[k].stage >= S || t->ops[k].kind != IPUP_OP_F ||
            (k > 0 && t->ops[k].step < t->ops[k - 1].step))
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
static void ipup__fwd_measure(const ipup_table *t, const ipup_sched_cost *c,
                              const int64_t *act_bytes, const double *end_fwd, double *start0,
                              ipup_sched_figures *out) {
    int32_t S = t->stages, M = t->microbatches, i = 0, j, k, s;
    double now = 0.0, first_end = 0.0, last_end = 0.0;
    (void)end_fwd; /* the async ends: the figures are BSP's, as the IPU runs */
    out->fwd_latency = 0.0;
    out->fwd_latency_steps = 0;
    while (i < t->n_ops) {
        double slowest = 0.0, end;
        int cross = 0;
        j = ipup__step_end(t, i);
        for (k = i; k < j; k++) {
            double op_cost = ipup_sched_op_cost(c, &t->ops[k]);
            if (op_cost > slowest) slowest = op_cost;
            if (ipup__crosses(t, &t->ops[k])) cross = 1;
        }
        end = now + slowest + (cross ? c->exchange : 0.0) + c->sync;
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
    if (M > 1 && last_end > first_end)
        out->fwd_throughput = (double)(M - 1) / (last_end - first_end);
    else out->fwd_throughput = out->fwd_latency > 0.0 ? 1.0 / out->fwd_latency : 0.0;
    ipup__fwd_inflight(t, out->peak_inflight);
    out->stash_total = 0;
    for (s = 0; s < S; s++) {
        out->stash_bytes[s] = (int64_t)out->peak_inflight[s] * (act_bytes ? act_bytes[s] : 0);
        out->stash_total += out->stash_bytes[s];
    }
}

/* >>concurrent: concurrent pipeline stages: a stage run as branches on several devices (§9) */
/* The mapping parser, the serialised mapping, the generator of concurrent tables
   (gang list scheduling: every branch of an op in one step), and the verifier's
   branch rules. ipup_sched_generate and ipup_sched_verify call in here; the branches'
   share of measure, CSV and JSON sits in those sections (ipup__measure_device,
   ipup__csv_branch, ipup__csv_branches, ipup__json_conc). */

/* parser state: the text, the position, the stage being read */
typedef struct ipup__map_parser {
    const char *text;
    size_t pos;
    char *msg;
    size_t msg_len;
    ipup_stage_map *out;
} ipup__map_parser;

static IPUP__UNUSED void ipup__map_skip_blanks(ipup__map_parser *p) {
    while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t') p->pos++;
}

/* what the character at the position is, for messages */
static IPUP__UNUSED const char *ipup__map_what(const ipup__map_parser *p, char *buf, size_t len) {
    char c = p->text[p->pos];
    if (c == '\0') return "the end of the text";
    if ((unsigned char)c < 32 || (unsigned char)c > 126)
        ipup_snprintf(buf, len, "byte 0x%02x", (unsigned)(unsigned char)c);
    else ipup_snprintf(buf, len, "'%c'", c);
    return buf;
}

/* one device number of stage `stage` at the position (after blanks) */
static IPUP__UNUSED int ipup__map_device(ipup__map_parser *p, int32_t stage, int32_t *dev) {
    char what[16];
    int32_t value = 0;
    size_t start;
    ipup__map_skip_blanks(p);
    start = p->pos;
    if (p->text[p->pos] == '[')
        return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                         "mapping: '[' at character %d is inside the bracket of stage %d; brackets "
                         "do not nest (a concurrent stage lists its devices once, e.g. 0,[1,2],3)",
                         (int)p->pos + 1, (int)stage);
    if (p->text[p->pos] == ',' || p->text[p->pos] == ']' || p->text[p->pos] == '\0')
        return ipup__err(
            p->msg, p->msg_len, IPUP_ERR_PARSE,
            "mapping: stage %d has an empty device at character %d (found %s where a device number "
            "belongs); give one device number per stage, e.g. 0,1,2 or 0,[1,2],3",
            (int)stage, (int)p->pos + 1, ipup__map_what(p, what, sizeof what));
    while (p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
        if (value < 100000) value = value * 10 + (p->text[p->pos] - '0');
        p->pos++;
    }
    if (p->pos == start)
        return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                         "mapping: %s at character %d is not a device number (stage %d); devices "
                         "are numbers 0..%d, e.g. 0,1,2 or 0,[1,2],3",
                         ipup__map_what(p, what, sizeof what), (int)p->pos + 1, (int)stage,
                         IPUP_SCHED_MAX_STAGES - 1);
    if (value >= IPUP_SCHED_MAX_STAGES)
        return ipup__err(
            p->msg, p->msg_len, IPUP_ERR_PARSE,
            "mapping: device %.12s of stage %d (character %d) is out of range; devices are 0..%d",
            p->text + start, (int)stage, (int)start + 1, IPUP_SCHED_MAX_STAGES - 1);
    *dev = value;
    ipup__map_skip_blanks(p);
    return IPUP_OK;
}

/* a bracket "[a,b,...]" of stage `stage`, the position on the '[' */
static IPUP__UNUSED int ipup__map_bracket(ipup__map_parser *p, int32_t stage) {
    size_t open = p->pos;
    int32_t n_dev = 0, k, dev;
    int rc;
    char what[16];
    p->pos++;
    for (;;) {
        if ((rc = ipup__map_device(p, stage, &dev)) != IPUP_OK) {
            if (p->text[p->pos] == ']' && n_dev == 0)
                return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                                 "mapping: stage %d is an empty bracket (character %d); list its "
                                 "devices, e.g. [1,2]",
                                 (int)stage, (int)open + 1);
            if (p->text[p->pos] == '\0')
                return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                                 "mapping: the bracket of stage %d opened at character %d is not "
                                 "closed; add ']'",
                                 (int)stage, (int)open + 1);
            return rc;
        }
        for (k = 0; k < n_dev; k++)
            if (p->out->dev[stage][k] == dev)
                return ipup__err(p->msg, p->msg_len, IPUP_ERR_PARSE,
                                 "mapping: stage %d lists device %d twice; the branches of a "
                                 "concurrent stage run on distinct IPUs (e.g. [1,2])",
                                 (int)stage, (int)dev);
        if (n_dev == IPUP_SCHED_MAX_BRANCHES)
            return ipup__err(
                p->msg, p->msg_len, IPUP_ERR_PARSE,
                "mapping: stage %d lists more than %d devices (IPUP_SCHED_MAX_BRANCHES); split it "
                "over at most %d IPUs or raise IPUP_SCHED_MAX_BRANCHES before the include",
                (int)stage, IPUP_SCHED_MAX_BRANCHES, IPUP_SCHED_MAX_BRANCHES);
        p->out->dev[stage][n_dev++] = (int16_t)dev;
        if (p->text[p->pos] == ']') break;
        if (p->text[p->pos] != ',')
            return ipup__err(
                p->msg, p->msg_len, IPUP_ERR_PARSE,
                p->text[p->pos] == '\0'
                    ? "mapping: the bracket of stage %d opened at character %d is not closed (%s "
                      "at character %d); add ']'"
                    : "mapping: in the bracket of stage %d (opened at character %d), %s at "
                      "character %d; separate its devices with commas and close it with ']'",
                (int)stage, (int)open + 1, ipup__map_what(p, what, sizeof what), (int)p->pos + 1);
        p->pos++;
    }
    p->pos++;
    p->out->n_dev[stage] = (int8_t)n_dev;
    if (n_dev > 1) p->out->concurrent = 1;
    return IPUP_OK;
}

IPUPIPE_DEF int ipup_sched_map_parse(const char *text, ipup_stage_map *out, char *msg,
                                     size_t msg_len) {
    ipup__map_parser p;
    int32_t stage = 0, d;
    int rc;
    char what[16];
    if (msg && msg_len) msg[0] = '\0';
    if (!text || !out)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG,
                         "ipup_sched_map_parse: text and out must not be NULL");
    IPUPIPE_MEMSET(out, 0, sizeof *out);
    p.text = text; p.pos = 0; p.msg = msg; p.msg_len = msg_len; p.out = out;
    ipup__map_skip_blanks(&p);
    if (text[p.pos] == '\0')
        return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                         "mapping is empty; give one device per stage, e.g. 0,1,2 or 0,[1,2],3 (a "
                         "bracket: one stage on several IPUs)");
    for (;;) {
        if (stage == IPUP_SCHED_MAX_STAGES)
            return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                             "mapping: more than %d stages (IPUP_SCHED_MAX_STAGES)",
                             IPUP_SCHED_MAX_STAGES);
        ipup__map_skip_blanks(&p);
        if (text[p.pos] == '[') {
            if ((rc = ipup__map_bracket(&p, stage)) != IPUP_OK) { out->stages = 0; return rc; }
            ipup__map_skip_blanks(&p);
        } else {
            if (text[p.pos] == ']')
                return ipup__err(msg, msg_len, IPUP_ERR_PARSE,
                                 "mapping: ']' at character %d closes no bracket; open it with '[' "
                                 "(e.g. 0,[1,2],3)",
                                 (int)p.pos + 1);
            if ((rc = ipup__map_device(&p, stage, &d)) != IPUP_OK) return rc;
            out->dev[stage][0] = (int16_t)d;
            out->n_dev[stage] = 1;
        }
        stage++;
        if (text[p.pos] == '\0') break;
        if (text[p.pos] != ',')
            return ipup__err(
                msg, msg_len, IPUP_ERR_PARSE,
                text[p.pos] == ']'
                    ? "mapping: %s at character %d closes no bracket; open it with '[' (e.g. "
                      "0,[1,2],3)"
                    : "mapping: %s at character %d after stage %d; separate the stages with commas",
                ipup__map_what(&p, what, sizeof what), (int)p.pos + 1, (int)stage - 1);
        p.pos++;
    }
    out->stages = stage;
    return stage;
}

IPUPIPE_DEF int ipup_sched_map_serialised(const ipup_stage_map *map, int16_t *stage_device,
                                          int32_t cap) {
    int32_t s, b, n = 0;
    if (!map || !stage_device || map->stages < 1 || map->stages > IPUP_SCHED_MAX_STAGES)
        return IPUP_ERR_ARG;
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
    for (s = 0; s < map->stages && s < IPUP_SCHED_MAX_STAGES; s++)
        n += map->n_dev[s] > 0 ? map->n_dev[s] : 1;
    return n;
}

/* -- generate (docs/schedules.md §9) -- */

/* the concurrent mapping against the config: its kind, S, devices; fills g->map (branch
   0's device) and g->P */
static IPUP__UNUSED int ipup__conc_config(const ipup_sched_config *cfg, ipup__gen *g, int *nwarn,
                                          char *msg, size_t msg_len) {
    const ipup_stage_map *map = cfg->concurrent;
    const char *kname = ipup__kind_names[g->kind];
    int32_t s, b, k, max_device = -1,
                     dev_limit = cfg->devices > 0 ? cfg->devices : IPUP_SCHED_MAX_STAGES;
    uint8_t used[IPUP_SCHED_MAX_STAGES];
    if (g->kind == IPUP_SCHED_INTERLEAVED_1F1B || g->kind >= IPUP_SCHED_ZBH1)
        return ipup__err(
            msg, msg_len, IPUP_ERR_CONFIG,
            "%s does not take concurrent stages (a stage on several IPUs); use grouped, "
            "interleaved, sequential, gpipe or 1f1b, or a mapping without brackets",
            kname);
    if (cfg->stage_device)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: give the mapping once, either stage_device or concurrent (which also "
                         "holds plain stages)",
                         kname);
    if (map->stages != g->S)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: the mapping has %d stages but S=%d; give one entry per stage", kname,
                         (int)map->stages, (int)g->S);
    IPUPIPE_MEMSET(used, 0, sizeof used);
    for (s = 0; s < g->S; s++) {
        if (map->n_dev[s] < 1 || map->n_dev[s] > IPUP_SCHED_MAX_BRANCHES)
            return ipup__err(
                msg, msg_len, IPUP_ERR_CONFIG,
                "%s: stage %d has %d devices; a stage runs on 1..%d (IPUP_SCHED_MAX_BRANCHES)",
                kname, (int)s, (int)map->n_dev[s], IPUP_SCHED_MAX_BRANCHES);
        for (b = 0; b < map->n_dev[s]; b++) {
            int32_t d = map->dev[s][b];
            if (d < 0 || d >= dev_limit)
                return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                                 "%s: branch %d of stage %d is mapped to device %d, but the "
                                 "devices are 0..%d; fix the mapping or raise the device count",
                                 kname, (int)b, (int)s, (int)d, (int)(dev_limit - 1));
            for (k = 0; k < b; k++)
                if (map->dev[s][k] == d)
                    return ipup__err(
                        msg, msg_len, IPUP_ERR_CONFIG,
                        "%s: stage %d lists device %d twice; its branches run on distinct devices",
                        kname, (int)s, (int)d);
            used[d] = 1;
            if (d > max_device) max_device = d;
        }
        g->stage_device[s] = map->dev[s][0];
    }
    g->P = cfg->devices > 0 ? cfg->devices : max_device + 1;
    g->V = 1;
    if (cfg->virtual_stages > 1)
        ipup__warn(msg, msg_len, nwarn,
                   "%s: virtual stages V=%d ignored (only interleaved-1f1b uses them)", kname,
                   (int)cfg->virtual_stages);
    for (k = 0; k < g->P; k++)
        if (!used[k])
            ipup__warn(msg, msg_len, nwarn, "%s: device %d runs no stage (idle for the whole step)",
                       kname, (int)k);
    return IPUP_OK;
}

/* every branch of op (s, m, kind) at the current step, branch b on its device */
static IPUP__UNUSED void ipup__conc_emit(ipup__gen *g, const ipup_stage_map *map, int32_t s,
                                         int32_t m, int kind) {
    int32_t b, n = map->n_dev[s];
    for (b = 0; b < n; b++) {
        ipup__emit(g, map->dev[s][b], s, m, kind);
        g->ops[g->n_ops - 1].branch_plus1 = (int8_t)(n > 1 ? b + 1 : 0);
    }
}

/* the op each stage would run now, by the schedule's rank; 1 when there is one */
static IPUP__UNUSED int ipup__conc_candidate(ipup__dyn_state *y, int32_t s, ipup__candidate *c) {
    int ok = y->g->kind == IPUP_SCHED_1F1B ? ipup__rank_1f1b(y, s, c) : ipup__rank_closed(y, s, c);
    c->stage = s;
    return ok;
}

/* one step of gang list scheduling: the ready ops in rank order, each placed when every
   device of its stage is free in this step; returns how many ops were placed */
static IPUP__UNUSED int32_t ipup__conc_step(ipup__gen *g, ipup__dyn_state *y,
                                            const ipup_stage_map *map) {
    ipup__candidate cand[IPUP_SCHED_MAX_STAGES];
    uint8_t busy[IPUP_SCHED_MAX_STAGES], take[IPUP_SCHED_MAX_STAGES];
    int32_t n_cand = 0, s, i, j, b, placed = 0;
    IPUPIPE_MEMSET(busy, 0, sizeof busy);
    y->phase = g->kind == IPUP_SCHED_GROUPED ? ipup__phase_grouped(y) : 0;
    for (s = 0; s < g->S; s++)
        if (ipup__conc_candidate(y, s, &cand[n_cand])) take[n_cand++] = 0;
    for (;;) {
        int32_t best = -1, free_all = 1;
        for (i = 0; i < n_cand; i++)
            if (!take[i] && (best < 0 || cand[i].key < cand[best].key)) best = i;
        if (best < 0) break;
        take[best] = 2; /* considered */
        for (b = 0; b < map->n_dev[cand[best].stage]; b++)
            if (busy[map->dev[cand[best].stage][b]]) free_all = 0;
        if (!free_all) continue;
        take[best] = 1;
        for (b = 0; b < map->n_dev[cand[best].stage]; b++) busy[map->dev[cand[best].stage][b]] = 1;
    }
    /* the counters change after the step: readiness is the state before it */
    for (j = 0; j < n_cand; j++) {
        if (take[j] != 1) continue;
        ipup__conc_emit(g, map, cand[j].stage, cand[j].mb, cand[j].kind);
        if (cand[j].kind == IPUP_OP_F) y->n_fwd[cand[j].stage]++;
        else y->n_bwd[cand[j].stage]++;
        placed++;
    }
    return placed;
}

/* place every op of a concurrent mapping: sequential one op (all its branches) per step,
   the others by gang list scheduling in the schedule's order */
static IPUP__UNUSED int ipup__conc_place(ipup__gen *g, const ipup_stage_map *map, char *msg,
                                         size_t msg_len) {
    ipup__dyn_state y;
    int64_t total = (int64_t)2 * g->S * g->M, done = 0;
    int32_t s, m;
    if (g->kind == IPUP_SCHED_SEQUENTIAL) {
        for (m = 0; m < g->M; m++) {
            for (s = 0; s < g->S; s++) { ipup__conc_emit(g, map, s, m, IPUP_OP_F); g->step++; }
            for (s = g->S - 1; s >= 0; s--) { ipup__conc_emit(g, map, s, m, IPUP_OP_B); g->step++; }
        }
        return IPUP_OK;
    }
    IPUPIPE_MEMSET(&y, 0, sizeof y);
    y.g = g;
    while (done < total) {
        int32_t k = ipup__conc_step(g, &y, map);
        if (k == 0)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: no stage can run an op at step %d (%lld of %lld ops placed): the "
                             "schedule deadlocks with this concurrent mapping; try another mapping",
                             ipup__kind_names[g->kind], (int)g->step + 1, (long long)done,
                             (long long)total);
        done += k;
        g->step++;
    }
    return IPUP_OK;
}

/* the table of a mapping with concurrent stages (ipup_sched_generate's path for
   cfg->concurrent); a mapping without brackets goes the plain way */
static IPUP__UNUSED int ipup__conc_generate(const ipup_sched_config *cfg, ipup_op *ops,
                                            int32_t cap_ops, ipup_table *out, char *msg,
                                            size_t msg_len) {
    const ipup_stage_map *map = cfg->concurrent;
    ipup__gen g;
    int32_t s, b, lanes = ipup_sched_map_lanes(map);
    int64_t need;
    int nwarn = 0, rc;
    IPUPIPE_MEMSET(&g, 0, sizeof g);
    g.S = cfg->stages; g.M = cfg->microbatches; g.kind = (int)cfg->kind;
    if (!map->concurrent && !cfg->stage_device && map->stages == cfg->stages) {
        ipup_sched_config plain_cfg = *cfg;
        int16_t plain[IPUP_SCHED_MAX_STAGES];
        for (s = 0; s < cfg->stages; s++) plain[s] = map->dev[s][0];
        plain_cfg.concurrent = NULL;
        plain_cfg.stage_device = plain;
        return ipup_sched_generate(&plain_cfg, ops, cap_ops, out, msg, msg_len);
    }
    if ((rc = ipup__conc_config(cfg, &g, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    /* the emulator's ipup_predict runs such a pipeline stage after stage */
    if (cfg->forward_only) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "%s: concurrent stages (a stage on several devices) have no forward-only "
                         "table; drop forward_only for the training table, or give each stage one "
                         "device for an inference table",
                         ipup__kind_names[g.kind]);
    }
    if ((rc = ipup__gen_rules(&g, cfg->strict, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    if ((rc = ipup__gen_rule_popxl(&g, cfg, &nwarn, msg, msg_len)) != IPUP_OK) return rc;
    need = (int64_t)2 * lanes * g.M;
    if (need > 0x3fffffff)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: the table is too large",
                         ipup__kind_names[g.kind]);
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s: the table needs %d ops but the ops array holds %d; size it with "
                         "IPUP_SCHED_MAX_OPS(%d, %d) (%d = ipup_sched_map_lanes, the stages "
                         "counted once per branch)",
                         ipup__kind_names[g.kind], (int)need, ops ? (int)cap_ops : 0, (int)lanes,
                         (int)g.M, (int)lanes);
    }
    g.ops = ops;
    if ((rc = ipup__conc_place(&g, map, msg, msg_len)) != IPUP_OK) return rc;
    out->stages = g.S; out->microbatches = g.M; out->devices = g.P; out->steps = g.step;
    out->n_ops = g.n_ops; out->cap_ops = cap_ops; out->ops = ops; out->split_backward = 0;
    out->concurrent = 1;
    for (s = 0; s < g.S; s++) {
        out->stage_device[s] = g.stage_device[s];
        out->n_branches[s] = map->n_dev[s];
        for (b = 0; b < map->n_dev[s]; b++) out->branch_device[s][b] = map->dev[s][b];
    }
    ipup_sched_sort(out);
    ipup__gen_fill_warning(out, g.kind, &nwarn, msg, msg_len);
    return IPUP_OK;
}

/* -- verify: the branch rules (docs/schedules.md §2.6, §2.7) -- */

/* rule 2: every stage's branches on distinct devices in range (branch 0 = stage_device) */
static IPUP__UNUSED int ipup__ver_conc_map(ipup__verifier *v) {
    int32_t s, b, k;
    for (s = 0; s < v->S; s++) {
        int32_t n = v->t->n_branches[s];
        if (n < 1 || n > IPUP_SCHED_MAX_BRANCHES ||
            v->t->branch_device[s][0] != v->t->stage_device[s]) {
            v->info->rule = 6; v->info->stage = s;
            return ipup__err(
                v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                "table structure: stage %d has %d branches (need 1..%d) or branch 0 is not on "
                "stage_device[%d]; fill n_branches and branch_device of a concurrent table",
                (int)s, (int)n, IPUP_SCHED_MAX_BRANCHES, (int)s);
        }
        for (b = 0; b < n; b++) {
            int32_t d = v->t->branch_device[s][b];
            for (k = 0; k < b; k++)
                if (v->t->branch_device[s][k] == d) d = -1;
            if (d < 0 || d >= v->P) {
                v->info->rule = 2; v->info->stage = s;
                return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                                 "rule 2 (branches on the stage's devices): branch %d of stage %d "
                                 "is on device %d, which is out of range 0..%d or holds another "
                                 "branch of that stage; each branch needs a device of its own",
                                 (int)b, (int)s, (int)v->t->branch_device[s][b], (int)(v->P - 1));
            }
        }
    }
    return IPUP_OK;
}

/* rules 1 and 2 for op i of a concurrent table: a branch the stage has, on its device,
   alone in its cell, sorted; records the latest step of each (stage, micro-batch, kind) */
static IPUP__UNUSED int ipup__ver_conc_op(ipup__verifier *v, uint8_t *mask, int32_t i) {
    const ipup_op *o = &v->t->ops[i];
    int32_t n_branches = v->t->n_branches[o->stage], branch = ipup_op_branch(o), home, kind_slot;
    int64_t x = (int64_t)o->mb * v->S + o->stage;
    int32_t *slot = o->kind == IPUP_OP_F   ? v->step_fwd
                    : o->kind == IPUP_OP_W ? v->step_wgrad
                                           : v->step_bwd;
    uint8_t bit;
    if ((n_branches > 1) != (branch >= 0) || branch >= n_branches) {
        ipup__ver_op(v, 1, i);
        return ipup__err(
            v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
            "rule 1 (branches of a concurrent stage): device %d, step %d: %s is marked as branch "
            "%d, but stage %d has %d branch%s (%s); fix the branch index",
            (int)o->device, (int)o->step + 1, v->op_text, (int)branch, (int)o->stage,
            (int)n_branches, n_branches == 1 ? "" : "es",
            n_branches == 1 ? "a plain stage: no branch index" : "branches 0..n-1");
    }
    home = n_branches > 1 ? v->t->branch_device[o->stage][branch] : v->t->stage_device[o->stage];
    if (o->device != home) {
        ipup__ver_op(v, 2, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 2 (branch on its device): device %d, step %d: branch %d of %s runs "
                         "on device %d, but that branch of stage %d lives on device %d (its slice "
                         "of the weights is there); move it to device %d",
                         (int)o->device, (int)o->step + 1, (int)(branch < 0 ? 0 : branch),
                         v->op_text, (int)o->device, (int)o->stage, (int)home, (int)home);
    }
    kind_slot = o->kind == IPUP_OP_F ? 0 : o->kind == IPUP_OP_W ? 2 : 1;
    bit = (uint8_t)(1u << (branch < 0 ? 0 : branch % 8));
    if ((mask[x * 3 + kind_slot] & bit) ||
        (kind_slot == 1 && v->bwd_kind[x] && v->bwd_kind[x] != o->kind)) {
        ipup__ver_op(v, 1, i);
        return ipup__err(
            v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
            "rule 1 (each op once per branch): device %d, step %d: branch %d of %s appears twice, "
            "or its backward mixes B and I (another branch ran at step %d); remove one",
            (int)o->device, (int)o->step + 1, (int)(branch < 0 ? 0 : branch), v->op_text,
            (int)slot[x] + 1);
    }
    mask[x * 3 + kind_slot] |= bit;
    if (o->step > slot[x]) slot[x] = o->step;
    if (kind_slot == 1) v->bwd_kind[x] = o->kind;
    return IPUP_OK;
}

/* rule 1: every branch of every op present */
static IPUP__UNUSED int ipup__ver_conc_full(ipup__verifier *v, const uint8_t *mask) {
    int32_t s, m, branch, kind_slot;
    for (m = 0; m < v->M; m++)
        for (s = 0; s < v->S; s++) {
            int32_t n_branches = v->t->n_branches[s];
            int64_t x = (int64_t)m * v->S + s;
            uint8_t full = (uint8_t)(n_branches >= 8 ? 0xffu : (1u << n_branches) - 1u);
            for (kind_slot = 0; kind_slot < 3; kind_slot++) {
                int kind = kind_slot == 0   ? (int)IPUP_OP_F
                           : kind_slot == 2 ? (int)IPUP_OP_W
                                            : (int)v->bwd_kind[x];
                if ((kind_slot == 2 && v->bwd_kind[x] != IPUP_OP_I) ||
                    mask[x * 3 + kind_slot] == full)
                    continue;
                for (branch = 0;
                     branch < n_branches && (mask[x * 3 + kind_slot] >> (branch % 8) & 1u);
                     branch++) {}
                v->info->rule = 1; v->info->op_index = -1; v->info->step = -1;
                v->info->device = v->t->branch_device[s][branch];
                v->info->stage = s;
                v->info->mb = m;
                v->info->kind = kind;
                return ipup__err(
                    v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                    "rule 1 (every branch once): branch %d of %s is missing (device %d); a "
                    "concurrent stage's op runs on each of its %d devices, all in one step",
                    (int)branch, ipup__op_desc(v->op_text, sizeof v->op_text, kind, s, m),
                    (int)v->t->branch_device[s][branch], (int)n_branches);
            }
        }
    return IPUP_OK;
}

/* rule 7: every branch of an op in the step of the others */
static IPUP__UNUSED int ipup__ver_conc_together(ipup__verifier *v) {
    int32_t i;
    for (i = 0; i < v->t->n_ops; i++) {
        const ipup_op *o = &v->t->ops[i];
        int64_t x = (int64_t)o->mb * v->S + o->stage;
        int32_t last = o->kind == IPUP_OP_F   ? v->step_fwd[x]
                       : o->kind == IPUP_OP_W ? v->step_wgrad[x]
                                              : v->step_bwd[x];
        if (o->step == last) continue;
        ipup__ver_op(v, 7, i);
        return ipup__err(v->msg, v->msg_len, IPUP_ERR_INVALID_TABLE,
                         "rule 7 (branches in one step): device %d, step %d: branch %d of %s runs "
                         "at step %d, another branch at step %d; the branches of a concurrent "
                         "stage compute on the same micro-batch at once, so move it to step %d",
                         (int)o->device, (int)o->step + 1, ipup_op_branch(o), v->op_text,
                         (int)o->step + 1, (int)last + 1, (int)last + 1);
    }
    return IPUP_OK;
}

/* ipup_sched_verify of a concurrent table: rules 1 and 2 per branch, then rules 3 to 5
   against the latest branch of each dependency, then rule 7 */
static IPUP__UNUSED int ipup__ver_conc(ipup__verifier *v) {
    int64_t SM = (int64_t)v->S * v->M;
    /* 3 bytes per (stage, micro-batch): the branches seen of F, of B or I, of W */
    uint8_t *mask = (uint8_t *)v->bwd_kind + SM;
    int32_t i;
    int rc;
    IPUPIPE_MEMSET(mask, 0, (size_t)(3 * SM));
    if ((rc = ipup__ver_conc_map(v)) != IPUP_OK) return rc;
    for (i = 0; i < v->t->n_ops; i++) {
        if ((rc = ipup__ver_range(v, i)) != IPUP_OK) return rc;
        if ((rc = ipup__ver_cell(v, i)) != IPUP_OK) return rc;
        if ((rc = ipup__ver_conc_op(v, mask, i)) != IPUP_OK) return rc;
    }
    if ((rc = ipup__ver_complete(v)) != IPUP_OK || (rc = ipup__ver_conc_full(v, mask)) != IPUP_OK)
        return rc;
    if ((rc = ipup__ver_deps(v)) != IPUP_OK || (rc = ipup__ver_conc_together(v)) != IPUP_OK)
        return rc;
    ipup__ver_in_order(v);
    v->info->step = v->info->device = v->info->op_index = v->info->stage = v->info->mb =
        v->info->kind = -1;
    return IPUP_OK;
}

/* >>dualpipe: DualPipeV (docs/schedules.md §3, "DualPipeV") */
/* Each device's program follows DeepSeek's DualPipeV (github.com/deepseek-ai/DualPipe,
   dualpipe/dualpipev.py, DualPipeV.step: steps 1 to 8) as PyTorch's ScheduleDualPipeV
   writes it (torch/distributed/pipelining/schedules.py, _calculate_single_rank_operations):
   device d holds chunk 0 = stage d and chunk 1 = stage 2P-1-d; an overlapped F&B cell is
   an F of one chunk and a full B of the other in one slot; an I queues its W, and a W
   takes the oldest queued one. The programs are then placed in lock step, each slot at
   the first step in which all its inputs were made in earlier steps. */
#define IPUP__DPV_QUEUE (2 * IPUP_SCHED_MAX_STAGES + 8)
typedef struct ipup__dpv {
    ipup_op *ops;
    int32_t n, cap, slot, P, d;
    int32_t stage[2], nf[2], nb[2]; /* the chunks' stages, next F and next B/I micro-batch */
    int32_t queue[IPUP__DPV_QUEUE], q_head, q_len; /* pending W: chunk << 24 | mb */
    int overflow;
} ipup__dpv;

static IPUP__UNUSED void ipup__dpv_put(ipup__dpv *p, int c, int32_t mb, int kind, int idx) {
    if (p->n < p->cap) {
        ipup_op *o = &p->ops[p->n];
        o->step = p->slot; o->mb = mb; o->stage = (int16_t)p->stage[c];
        o->device = (int16_t)p->d; o->kind = (int8_t)kind; o->overlap_index = (int8_t)idx;
        o->branch_plus1 = o->reserved_ = 0;
    }
    p->n++;
}

/* one op alone in its slot: F, B, or I (which queues its W) of chunk c */
static IPUP__UNUSED void ipup__dpv_one(ipup__dpv *p, int c, int kind) {
    int32_t mb = kind == IPUP_OP_F ? p->nf[c]++ : p->nb[c]++;
    ipup__dpv_put(p, c, mb, kind, 0);
    p->slot++;
    if (kind != IPUP_OP_I) return;
    if (p->q_len >= IPUP__DPV_QUEUE) { p->overflow = 1; return; }
    p->queue[(p->q_head + p->q_len++) % IPUP__DPV_QUEUE] = c << 24 | mb;
}

/* an overlapped F&B slot: F of chunk cf, then the full B of the other chunk */
static IPUP__UNUSED void ipup__dpv_pair(ipup__dpv *p, int cf) {
    ipup__dpv_put(p, cf, p->nf[cf]++, IPUP_OP_F, 0);
    ipup__dpv_put(p, 1 - cf, p->nb[1 - cf]++, IPUP_OP_B, 1);
    p->slot++;
}

/* the W of the oldest pending I, if any */
static IPUP__UNUSED void ipup__dpv_w(ipup__dpv *p) {
    int32_t x;
    if (!p->q_len) return;
    x = p->queue[p->q_head];
    p->q_head = (p->q_head + 1) % IPUP__DPV_QUEUE;
    p->q_len--;
    ipup__dpv_put(p, x >> 24, x & 0xffffff, IPUP_OP_W, 0);
    p->slot++;
}

/* device p->d's program, DualPipeV.step's eight steps (M micro-batches) */
static IPUP__UNUSED void ipup__dpv_program(ipup__dpv *p, int32_t M) {
    const int32_t P = p->P, d = p->d;
    int32_t i, n6 = d + 1;
    int zb = 0;
    for (i = 0; i < 2 * (P - d - 1); i++) ipup__dpv_one(p, 0, IPUP_OP_F); /* 1: F0 */
    for (i = 0; i < d + 1; i++) {                                          /* 2: F0 F1 */
        ipup__dpv_one(p, 0, IPUP_OP_F);
        ipup__dpv_one(p, 1, IPUP_OP_F);
    }
    for (i = 0; i < P - d - 1; i++) { /* 3: I1 W F1 (zero bubble) */
        ipup__dpv_one(p, 1, IPUP_OP_I);
        ipup__dpv_w(p);
        ipup__dpv_one(p, 1, IPUP_OP_F);
    }
    for (i = 0; i < M - 2 * P + d + 1; i++) { /* 4: F0&B1, F1&B0 */
        if (i == 0 && d == P - 1) { /* the turn of the V: not overlapped (a smaller bubble) */
            ipup__dpv_one(p, 0, IPUP_OP_F);
            ipup__dpv_one(p, 1, IPUP_OP_B);
        } else {
            ipup__dpv_pair(p, 0);
        }
        ipup__dpv_pair(p, 1);
    }
    for (i = 0; i < P - d - 1; i++) { /* 5: B1, F1&B0 */
        ipup__dpv_one(p, 1, IPUP_OP_B);
        ipup__dpv_pair(p, 1);
    }
    for (i = 0; i < n6; i++) { /* 6: B1 B0, the second half split (zero bubble) */
        if (i == n6 / 2 && d % 2 == 1) zb = 1;
        ipup__dpv_one(p, 1, zb ? IPUP_OP_I : IPUP_OP_B);
        if (i == n6 / 2 && d % 2 == 0) zb = 1;
        ipup__dpv_one(p, 0, zb ? IPUP_OP_I : IPUP_OP_B);
    }
    for (i = 0; i < P - d - 1; i++) { /* 7: W, B0 */
        ipup__dpv_w(p);
        ipup__dpv_one(p, 0, zb ? IPUP_OP_I : IPUP_OP_B);
    }
    for (i = 0; i < d + 1; i++) ipup__dpv_w(p); /* 8: W */
}

/* the slot at ops[i] (one op, or an F&B pair) is ready at this step: its inputs were made
   before it (done_f / done_b: F and B-or-I ops of each stage done, all in increasing m).
   half 0: one chain of stages 0..S-1; half > 0 (DualPipe): two, 0..half-1 and half..S-1 */
static IPUP__UNUSED int ipup__dpv_ready(const ipup_op *o, int32_t S, int32_t half,
                                        const int32_t *done_f, const int32_t *done_b) {
    int32_t s = o->stage, m = o->mb;
    if (o->kind == IPUP_OP_F) return s == 0 || s == half || done_f[s - 1] > m;
    if (o->kind == IPUP_OP_W) return done_b[s] > m;
    return done_f[s] > m && (s == S - 1 || s + 1 == half || done_b[s + 1] > m);
}

/* place the device-major programs (ops[start[d] .. start[d+1])) in lock step */
static IPUP__UNUSED int32_t ipup__dpv_place(ipup_op *ops, int32_t S, int32_t P, int32_t half,
                                            const int32_t *start) {
    int32_t done_f[IPUP_SCHED_MAX_STAGES], done_b[IPUP_SCHED_MAX_STAGES];
    int32_t pos[IPUP_SCHED_MAX_STAGES], take[IPUP_SCHED_MAX_STAGES], d, s, j, t = 0, left;
    for (s = 0; s < S; s++) done_f[s] = done_b[s] = 0;
    for (d = 0; d < P; d++) pos[d] = start[d];
    left = start[P];
    while (left > 0) {
        int any = 0;
        for (d = 0; d < P; d++) {
            int32_t i = pos[d], n = 0;
            take[d] = 0;
            if (i >= start[d + 1]) continue;
            n = i + 1 < start[d + 1] && ops[i + 1].overlap_index == 1 ? 2 : 1;
            for (j = 0; j < n; j++)
                if (!ipup__dpv_ready(&ops[i + j], S, half, done_f, done_b)) break;
            if (j == n) { take[d] = n; any = 1; }
        }
        if (!any) return -1;
        for (d = 0; d < P; d++) {
            for (j = 0; j < take[d]; j++) {
                ipup_op *o = &ops[pos[d] + j];
                o->step = t;
                if (o->kind == IPUP_OP_F) done_f[o->stage]++;
                else if (o->kind != IPUP_OP_W) done_b[o->stage]++;
            }
            pos[d] += take[d];
            left -= take[d];
        }
        t++;
    }
    return t;
}

/* the rules of DualPipeV (docs/schedules.md §5): S = 2P even, the V mapping, M >= S */
static IPUP__UNUSED int ipup__dpv_config(const ipup_sched_config *cfg, char *msg,
                                         size_t msg_len) {
    int32_t S = cfg->stages, P = S / 2, s;
    if (cfg->forward_only)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe-v has no forward-only form (its cells pair a forward with a "
                         "backward); use gpipe or 1f1b for inference");
    if (S % 2 != 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe-v: S=%d stages is odd; DualPipeV puts two stages on each "
                         "device (S = 2P, device d holds stages d and 2P-1-d): use an even S",
                         (int)S);
    if (cfg->devices != 0 && cfg->devices != P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe-v: %d devices for S=%d stages; DualPipeV runs S = 2P stages "
                         "on P = S/2 = %d devices (give %d, or 0)",
                         (int)cfg->devices, (int)S, (int)P, (int)P);
    if (cfg->virtual_stages != 0 && cfg->virtual_stages != 2)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe-v: V=%d; DualPipeV has exactly 2 stages per device (give 2, "
                         "or 0)", (int)cfg->virtual_stages);
    for (s = 0; cfg->stage_device && s < S; s++) {
        int32_t want = s < P ? s : S - 1 - s;
        if (cfg->stage_device[s] != want)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "dualpipe-v: stage %d is mapped to device %d; DualPipeV needs the "
                             "V mapping (device d holds stages d and 2P-1-d: stage %d on device "
                             "%d)", (int)s, (int)cfg->stage_device[s], (int)s, (int)want);
    }
    if (cfg->microbatches < S)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe-v: M=%d micro-batches < S=%d stages; DualPipeV needs M >= "
                         "2P = S (as DeepSeek's dualpipev.py and PyTorch's ScheduleDualPipeV)",
                         (int)cfg->microbatches, (int)S);
    return IPUP_OK;
}

static int ipup__dpv_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                              ipup_table *out, char *msg, size_t msg_len) {
    ipup__dpv p; /* about 2 KB, most of it the W queue */
    int32_t S = cfg->stages, M = cfg->microbatches, P = S / 2, d, s, T;
    int32_t start[IPUP_SCHED_MAX_STAGES + 1];
    int rc;
    if ((rc = ipup__dpv_config(cfg, msg, msg_len)) != IPUP_OK) return rc;
    if ((int64_t)3 * S * M > (int64_t)0x7fffffff)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "dualpipe-v: S x M = %lld is too large",
                         (long long)S * M);
    IPUPIPE_MEMSET(&p, 0, sizeof p);
    p.ops = ops; p.cap = ops ? cap_ops : 0; p.P = P;
    for (d = 0; d < P; d++) {
        start[d] = p.n;
        p.d = d; p.slot = 0; p.q_head = p.q_len = 0;
        p.stage[0] = d; p.stage[1] = S - 1 - d;
        p.nf[0] = p.nf[1] = p.nb[0] = p.nb[1] = 0;
        ipup__dpv_program(&p, M);
        if (p.overflow || p.q_len || p.nf[0] != M || p.nf[1] != M || p.nb[0] != M ||
            p.nb[1] != M)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "dualpipe-v: internal error: device %d's program is incomplete",
                             (int)d);
    }
    start[P] = p.n;
    if (p.n > p.cap)
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "dualpipe-v: the table needs %d ops but the ops array holds %d; size it "
                         "with IPUP_SCHED_MAX_OPS(%d, %d)",
                         (int)p.n, ops ? (int)cap_ops : 0, (int)S, (int)M);
    T = ipup__dpv_place(ops, S, P, 0, start);
    if (T < 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "dualpipe-v: internal error: deadlock");
    out->stages = S; out->microbatches = M; out->devices = P; out->steps = T;
    out->n_ops = p.n; out->cap_ops = cap_ops; out->ops = ops;
    out->split_backward = 0;
    for (d = 0; d < p.n; d++) if (ops[d].kind == IPUP_OP_I) out->split_backward = 1;
    for (s = 0; s < S; s++) out->stage_device[s] = (int16_t)(s < P ? s : S - 1 - s);
    ipup_sched_sort(out);
    return IPUP_OK;
}

/* >>dualpipe: DualPipe (docs/schedules.md §3, "DualPipe") */
/* DeepSeek's DualPipe (github.com/deepseek-ai/DualPipe, dualpipe/dualpipe.py, DualPipe.step)
   on P ranks runs the same eight steps as DualPipeV on P/2 ranks: rank d follows the program
   of half rank h = min(d, P-1-d) with M/2 micro-batches per direction, its phase 0 the copy
   whose first half d lies in (copy A below P/2, copy B from P/2), phase 1 the other. Here
   copy A is stages 0..P-1 (stage d on device d) with micro-batches 0..M/2-1, copy B stages
   P..2P-1 (stage 2P-1-d on device d) with M/2..M-1: a dual table (ipup_table.dual). */
static IPUP__UNUSED int ipup__dp_config(const ipup_sched_config *cfg, char *msg,
                                        size_t msg_len) {
    int32_t S = cfg->stages, P = S / 2, M = cfg->microbatches, s;
    if (cfg->forward_only)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe has no forward-only form (its cells pair a forward with a "
                         "backward); use gpipe or 1f1b for inference");
    if (S % 2 != 0 || P % 2 != 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe: S=%d stages; DualPipe runs two model copies of P stages on P "
                         "devices (S = 2P stages, device d holds stages d and 2P-1-d) and needs "
                         "an even P (as DeepSeek's dualpipe.py): use S = 4, 8, 12, ...", (int)S);
    if (cfg->devices != 0 && cfg->devices != P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe: %d devices for S=%d stages; DualPipe runs S = 2P stages on "
                         "P = S/2 = %d devices (give %d, or 0)",
                         (int)cfg->devices, (int)S, (int)P, (int)P);
    if (cfg->virtual_stages != 0 && cfg->virtual_stages != 2)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe: V=%d; DualPipe has exactly 2 stages per device, one of each "
                         "copy (give 2, or 0)", (int)cfg->virtual_stages);
    for (s = 0; cfg->stage_device && s < S; s++) {
        int32_t want = s < P ? s : S - 1 - s;
        if (cfg->stage_device[s] != want)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "dualpipe: stage %d is mapped to device %d; DualPipe needs the V "
                             "mapping (device d holds stage d of copy A and stage 2P-1-d of "
                             "copy B: stage %d on device %d)",
                             (int)s, (int)cfg->stage_device[s], (int)s, (int)want);
    }
    if (M % 2 != 0 || M < 2 * P)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                         "dualpipe: M=%d micro-batches; DualPipe needs M even and M >= 2P = %d "
                         "(M/2 per copy, at least P each, as DeepSeek's dualpipe.py)",
                         (int)M, (int)(2 * P));
    return IPUP_OK;
}

static int ipup__dp_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                             ipup_table *out, char *msg, size_t msg_len) {
    ipup__dpv p; /* about 2 KB, most of it the W queue */
    int32_t S = cfg->stages, M = cfg->microbatches, P = S / 2, H = M / 2, d, i, T;
    int32_t start[IPUP_SCHED_MAX_STAGES + 1];
    int rc;
    if ((rc = ipup__dp_config(cfg, msg, msg_len)) != IPUP_OK) return rc;
    if ((int64_t)3 * S * M > (int64_t)0x7fffffff)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "dualpipe: S x M = %lld is too large",
                         (long long)S * M);
    IPUPIPE_MEMSET(&p, 0, sizeof p);
    p.ops = ops; p.cap = ops ? cap_ops : 0; p.P = P / 2;
    for (d = 0; d < P; d++) {
        int b = d >= P / 2; /* phase 0 is copy B from the middle on */
        start[d] = p.n;
        p.d = d < P - 1 - d ? d : P - 1 - d; p.slot = 0; p.q_head = p.q_len = 0;
        p.stage[b] = d; p.stage[1 - b] = S - 1 - d;
        p.nf[0] = p.nf[1] = p.nb[0] = p.nb[1] = 0; /* copy-local micro-batches 0..H-1 */
        ipup__dpv_program(&p, H);
        if (p.overflow || p.q_len || p.nf[0] != H || p.nf[1] != H || p.nb[0] != H ||
            p.nb[1] != H)
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "dualpipe: internal error: device %d's program is incomplete",
                             (int)d);
        for (i = start[d]; i < p.n && i < p.cap; i++) ops[i].device = (int16_t)d;
    }
    start[P] = p.n;
    if (p.n > p.cap)
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "dualpipe: the table needs %d ops but the ops array holds %d; size it "
                         "with IPUP_SCHED_MAX_OPS(%d, %d)",
                         (int)p.n, ops ? (int)cap_ops : 0, (int)S, (int)M);
    T = ipup__dpv_place(ops, S, P, P, start);
    if (T < 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "dualpipe: internal error: deadlock");
    out->stages = S; out->microbatches = M; out->devices = P; out->steps = T;
    out->n_ops = p.n; out->cap_ops = cap_ops; out->ops = ops;
    out->split_backward = 0; out->dual = 1;
    for (i = 0; i < p.n; i++) {
        if (ops[i].stage >= P) ops[i].mb += H; /* copy B's micro-batches */
        if (ops[i].kind == IPUP_OP_I) out->split_backward = 1;
    }
    for (i = 0; i < S; i++) out->stage_device[i] = (int16_t)(i < P ? i : S - 1 - i);
    ipup_sched_sort(out);
    return IPUP_OK;
}

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
