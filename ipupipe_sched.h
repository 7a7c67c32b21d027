/* ipupipe_sched.h - v0.2.0 - pipeline schedule tables for ipupipe - MIT licence
 *
 * Generate, verify, measure, render and exchange (CSV) the pipeline schedule tables
 * of ipupipe. The contract is ../shared/design/SCHEDULES.md (the op model, the
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
 */
#ifndef IPUPIPE_SCHED_H
#define IPUPIPE_SCHED_H

#include <stddef.h>
#include <stdint.h>

#ifndef IPUP_SCHED_DEF
#ifdef IPUPIPE_STATIC
#define IPUP_SCHED_DEF static
#else
#define IPUP_SCHED_DEF extern
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define IPUP__SCHED_UNUSED __attribute__((unused))
#else
#define IPUP__SCHED_UNUSED
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
IPUP_SCHED_DEF const char *ipup_result_str(int code);
#define IPUP__RESULT_STR_FROM_SCHED 1
#endif

/* ---- tables ---- */
#ifndef IPUP_SCHED_MAX_STAGES
#define IPUP_SCHED_MAX_STAGES 256 /* compile-time maximum S (and P); overridable */
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
    int8_t pad_[3]; /* pad_[0]: order inside a CSV overlap cell; otherwise 0 */
} ipup_op;          /* 16 bytes */

typedef struct ipup_table {
    int32_t stages, microbatches, devices, steps;
    int32_t n_ops, cap_ops;
    ipup_op *ops; /* ops (cap_ops): caller-provided, sorted by (step, device); n_ops = 2*S*M,
                     or 3*S*M when split */
    int32_t split_backward; /* 1 when the backward is I + W ops (some or all of them) */
    int16_t stage_device[IPUP_SCHED_MAX_STAGES]; /* stage -> device; -1 beyond stages */
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

typedef struct ipup_sched_config { /* zero = default */
    ipup_sched_kind kind;
    int32_t stages, microbatches;
    int32_t devices;              /* 0: as many as the mapping needs */
    int32_t virtual_stages;       /* interleaved-1f1b: stages per device V (0: S/devices when
                                     devices is given, else 2 when S is even, else 1) */
    const int16_t *stage_device;  /* stage_device (stages) or NULL: default mapping s -> s */
    int32_t strict;               /* Graphcore (and Megatron) API rules as errors */
} ipup_sched_config;

/* Generate a table into ops (cap_ops). msg (msg_len) receives the error text, or on
   success the warnings, one per line ("" if none). Returns IPUP_OK, IPUP_ERR_ARG,
   IPUP_ERR_CONFIG or IPUP_ERR_CAPACITY. */
IPUP_SCHED_DEF int ipup_sched_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                                       ipup_table *out, char *msg, size_t msg_len);
/* "grouped", "interleaved", "sequential", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"
   (case-insensitive; '_' or '-' alike; also "zbh1", "i1f1b"). IPUP_ERR_PARSE if unknown. */
IPUP_SCHED_DEF int ipup_sched_kind_parse(const char *name, ipup_sched_kind *out);
IPUP_SCHED_DEF const char *ipup_sched_kind_name(ipup_sched_kind kind);
/* per-stage peak in-flight micro-batches (SCHEDULES.md §4) into out (n_out >= stages) */
IPUP_SCHED_DEF int ipup_sched_peak_inflight(const ipup_table *t, int32_t *out, int32_t n_out);

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_SCHED_H */

/* ======================================================================== */
#ifdef IPUPIPE_IMPLEMENTATION
#ifndef IPUPIPE_SCHED_IMPLEMENTED
#define IPUPIPE_SCHED_IMPLEMENTED

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(IPUP__RESULT_STR_FROM_SCHED) && !defined(IPUP__RESULT_STR_DONE)
#define IPUP__RESULT_STR_DONE 1
IPUP_SCHED_DEF IPUP__SCHED_UNUSED const char *ipup_result_str(int code) {
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

/* ---- messages ---- */
static IPUP__SCHED_UNUSED void ipup__msgv(char *msg, size_t len, int append, const char *fmt, va_list ap) {
    size_t used;
    if (!msg || len == 0) return;
    used = append ? strlen(msg) : 0;
    if (used >= len) return;
    vsnprintf(msg + used, len - used, fmt, ap);
}
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static IPUP__SCHED_UNUSED int ipup__err(char *msg, size_t len, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ipup__msgv(msg, len, 0, fmt, ap);
    va_end(ap);
    return code;
}
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static IPUP__SCHED_UNUSED void ipup__warn(char *msg, size_t len, int *count, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (msg && len) {
        size_t used = strlen(msg);
        if (used + 1 < len) {
            vsnprintf(msg + used, len - used, fmt, ap);
            used = strlen(msg);
            if (used + 1 < len) { msg[used] = '\n'; msg[used + 1] = '\0'; }
        }
    }
    va_end(ap);
    (*count)++;
}

static const char *const ipup__kind_names[IPUP_SCHED_KIND_COUNT] = {
    "grouped", "interleaved", "sequential", "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"};

IPUP_SCHED_DEF IPUP__SCHED_UNUSED const char *ipup_sched_kind_name(ipup_sched_kind kind) {
    int k = (int)kind;
    if (k < 0 || k >= IPUP_SCHED_KIND_COUNT) return "unknown";
    return ipup__kind_names[k];
}

/* compare ignoring case and treating '_' as '-' */
static IPUP__SCHED_UNUSED int ipup__name_eq(const char *a, const char *b) {
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

IPUP_SCHED_DEF IPUP__SCHED_UNUSED int ipup_sched_kind_parse(const char *name, ipup_sched_kind *out) {
    int k;
    if (!name || !out) return IPUP_ERR_ARG;
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++)
        if (ipup__name_eq(name, ipup__kind_names[k])) { *out = (ipup_sched_kind)k; return IPUP_OK; }
    if (ipup__name_eq(name, "zbh1") || ipup__name_eq(name, "zero-bubble")) { *out = IPUP_SCHED_ZBH1; return IPUP_OK; }
    if (ipup__name_eq(name, "i1f1b") || ipup__name_eq(name, "interleaved1f1b")) { *out = IPUP_SCHED_INTERLEAVED_1F1B; return IPUP_OK; }
    if (ipup__name_eq(name, "pipedream-flush")) { *out = IPUP_SCHED_1F1B; return IPUP_OK; }
    if (ipup__name_eq(name, "fill-drain")) { *out = IPUP_SCHED_GPIPE; return IPUP_OK; }
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

static IPUP__SCHED_UNUSED void ipup__emit(ipup__gen *g, int32_t dev, int32_t stage, int32_t mb, int kind) {
    ipup_op *o = &g->ops[g->n++];
    o->step = g->t;
    o->mb = mb;
    o->stage = (int16_t)stage;
    o->device = (int16_t)dev;
    o->kind = (int8_t)kind;
    o->pad_[0] = o->pad_[1] = o->pad_[2] = 0;
}

/* The op of stage s at raw (uncompacted) step t under a closed form (SCHEDULES.md §3),
   or 0 when idle. */
static IPUP__SCHED_UNUSED int ipup__closed_op(int kind, int32_t S, int32_t M, int32_t t, int32_t s, int32_t *mb) {
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
static IPUP__SCHED_UNUSED int64_t ipup__closed_prio(int kind, int32_t S, int32_t M, int opk, int32_t s, int32_t m) {
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
static IPUP__SCHED_UNUSED int ipup__prog_1f1b(int32_t S, int32_t M, int32_t s, int32_t k, int32_t *mb) {
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
   Virtual index -> (chunk, micro-batch) in groups of P micro-batches; a last partial
   group (M % P != 0, outside Megatron's rule) keeps the same order with a smaller group. */
static IPUP__SCHED_UNUSED void ipup__megatron_vidx(int32_t P, int32_t V, int32_t M, int32_t idx, int32_t *chunk, int32_t *mb) {
    int32_t g = idx / (P * V), base = g * P, gs = M - base < P ? M - base : P;
    int32_t j = idx - g * P * V;
    *chunk = j / gs;
    *mb = base + j % gs;
}
static IPUP__SCHED_UNUSED int ipup__prog_megatron(int32_t P, int32_t V, int32_t M, int32_t r, int32_t k, int32_t *stage, int32_t *mb) {
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

/* Step-by-step placement: at each step every device runs at most one op whose inputs
   were produced in strictly earlier steps (counters are the state before the step).
   Each kind of op runs in increasing micro-batch order on each stage, so the state is
   three counters per stage and every table it makes accumulates in order. */
static IPUP__SCHED_UNUSED int ipup__run_dynamic(ipup__gen *g, char *msg, size_t msg_len) {
    int32_t nF[IPUP_SCHED_MAX_STAGES], nG[IPUP_SCHED_MAX_STAGES], nW[IPUP_SCHED_MAX_STAGES];
    int32_t pos[IPUP_SCHED_MAX_STAGES];
    int32_t chs[IPUP_SCHED_MAX_STAGES], chm[IPUP_SCHED_MAX_STAGES];
    int8_t chk[IPUP_SCHED_MAX_STAGES];
    const int32_t S = g->S, M = g->M, P = g->P;
    int64_t total = (int64_t)(g->split ? 3 : 2) * S * M, done = 0;
    int32_t s, d;
    for (s = 0; s < S; s++) nF[s] = nG[s] = nW[s] = 0;
    for (d = 0; d < P; d++) pos[d] = 0;
#define IPUP__RDY_F(s_, m_) ((m_) < M && nF[s_] == (m_) && ((s_) == 0 || nF[(s_)-1] > (m_)))
#define IPUP__RDY_G(s_, m_) ((m_) < M && nG[s_] == (m_) && nF[s_] > (m_) && ((s_) == S - 1 || nG[(s_) + 1] > (m_)))
#define IPUP__RDY_W(s_, m_) ((m_) < M && nW[s_] == (m_) && nG[s_] > (m_))
    while (done < total) {
        int any = 0;
        for (d = 0; d < P; d++) {
            int best_k = 0;
            int64_t best_key = 0;
            int32_t best_s = -1, best_m = -1;
            chk[d] = 0;
            if (g->kind == IPUP_SCHED_INTERLEAVED_1F1B && g->V > 1) {
                int32_t st, m;
                int k;
                if (pos[d] >= 2 * M * g->V) continue;
                k = ipup__prog_megatron(P, g->V, M, d, pos[d], &st, &m);
                if (k == IPUP_OP_F ? IPUP__RDY_F(st, m) : IPUP__RDY_G(st, m)) {
                    best_k = k; best_s = st; best_m = m;
                }
            } else {
                for (s = g->first[d]; s >= 0; s = g->next[s]) {
                    int k = 0;
                    int32_t m = -1;
                    int64_t key = 0;
                    if (g->kind == IPUP_SCHED_1F1B || g->kind == IPUP_SCHED_INTERLEAVED_1F1B) {
                        if (nF[s] + nG[s] >= 2 * M) continue;
                        k = ipup__prog_1f1b(S, M, s, nF[s] + nG[s], &m);
                        if (!(k == IPUP_OP_F ? IPUP__RDY_F(s, m) : IPUP__RDY_G(s, m))) continue;
                        /* backward first (frees memory), then lower micro-batch */
                        key = (k == IPUP_OP_F ? ((int64_t)1 << 40) : 0) + (int64_t)m * 1024 + (S - s);
                    } else if (g->kind == IPUP_SCHED_ZBH1) {
                        /* ZB-H1 (Qi et al. 2024, §3.1): I as soon as it can run (the critical
                           path); F while the stage has fewer than S-s forwards awaiting their
                           I (1F1B's warm-up) and fewer than S micro-batches holding
                           activations (1F1B's peak); W otherwise, filling the bubbles. */
                        if (IPUP__RDY_G(s, nG[s])) { k = IPUP_OP_I; m = nG[s]; key = 0; }
                        else if (IPUP__RDY_F(s, nF[s]) && nF[s] - nG[s] < S - s && nF[s] - nW[s] < S) {
                            k = IPUP_OP_F; m = nF[s]; key = (int64_t)1 << 40;
                        } else if (IPUP__RDY_W(s, nW[s])) { k = IPUP_OP_W; m = nW[s]; key = (int64_t)2 << 40; }
                        else continue;
                        key += (int64_t)m * 1024 + (S - s);
                    } else { /* list scheduling in the closed form's order */
                        int64_t kf = -1, kb = -1;
                        if (IPUP__RDY_F(s, nF[s])) kf = ipup__closed_prio(g->kind, S, M, IPUP_OP_F, s, nF[s]);
                        if (IPUP__RDY_G(s, nG[s])) kb = ipup__closed_prio(g->kind, S, M, IPUP_OP_B, s, nG[s]);
                        if (kf < 0 && kb < 0) continue;
                        if (kb >= 0 && (kf < 0 || kb <= kf)) { k = IPUP_OP_B; m = nG[s]; key = kb * 2; }
                        else { k = IPUP_OP_F; m = nF[s]; key = kf * 2 + 1; }
                        key = key * 1024 + s;
                    }
                    if (best_k == 0 || key < best_key) { best_k = k; best_key = key; best_s = s; best_m = m; }
                }
            }
            if (best_k) { chk[d] = (int8_t)best_k; chs[d] = best_s; chm[d] = best_m; any = 1; }
        }
        if (!any) {
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: no device can run an op at step %d (%lld of %lld ops placed): the "
                             "schedule deadlocks with this stage -> device mapping; try the default mapping",
                             ipup_sched_kind_name((ipup_sched_kind)g->kind), (int)g->t, (long long)done, (long long)total);
        }
        for (d = 0; d < P; d++) {
            if (!chk[d]) continue;
            ipup__emit(g, d, chs[d], chm[d], chk[d]);
            if (chk[d] == IPUP_OP_F) nF[chs[d]]++;
            else if (chk[d] == IPUP_OP_W) nW[chs[d]]++;
            else nG[chs[d]]++;
            pos[d]++;
            done++;
        }
        g->t++;
    }
#undef IPUP__RDY_F
#undef IPUP__RDY_G
#undef IPUP__RDY_W
    return IPUP_OK;
}

static IPUP__SCHED_UNUSED int ipup__is_pow2(int32_t x) { return x > 0 && (x & (x - 1)) == 0; }
static IPUP__SCHED_UNUSED int32_t ipup__pow2_ceil(int32_t x) {
    int32_t p = 1;
    while (p < x && p < (1 << 30)) p *= 2;
    return p;
}

IPUP_SCHED_DEF IPUP__SCHED_UNUSED int ipup_sched_generate(const ipup_sched_config *cfg, ipup_op *ops, int32_t cap_ops,
                                                         ipup_table *out, char *msg, size_t msg_len) {
    ipup__gen g;
    int32_t S, M, P, V = 1, s, d, maxdev = -1, need;
    int kind, nwarn = 0, rc;
    const char *kname;
    if (msg && msg_len) msg[0] = '\0';
    if (!cfg || !out) return ipup__err(msg, msg_len, IPUP_ERR_ARG, "ipup_sched_generate: cfg and out must not be NULL");
    memset(out, 0, sizeof *out);
    for (s = 0; s < IPUP_SCHED_MAX_STAGES; s++) out->stage_device[s] = -1;
    kind = (int)cfg->kind;
    if (kind < 0 || kind >= IPUP_SCHED_KIND_COUNT)
        return ipup__err(msg, msg_len, IPUP_ERR_ARG, "unknown schedule kind %d (valid: 0..%d, see ipup_sched_kind)", kind,
                         IPUP_SCHED_KIND_COUNT - 1);
    kname = ipup__kind_names[kind];
    S = cfg->stages;
    M = cfg->microbatches;
    if (S < 1 || S > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: stages S=%d is out of range: need 1 <= S <= %d (IPUP_SCHED_MAX_STAGES)",
                         kname, (int)S, IPUP_SCHED_MAX_STAGES);
    if (M < 1 || M > IPUP_SCHED_MAX_MICROBATCHES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: micro-batches M=%d is out of range: need 1 <= M <= %d", kname, (int)M,
                         IPUP_SCHED_MAX_MICROBATCHES);
    if (cfg->devices < 0 || cfg->devices > IPUP_SCHED_MAX_STAGES)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: devices P=%d is out of range: need 0 (automatic) or 1..%d", kname,
                         (int)cfg->devices, IPUP_SCHED_MAX_STAGES);
    if (cfg->virtual_stages < 0)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: virtual stages V=%d must be >= 0 (0 = automatic)", kname,
                         (int)cfg->virtual_stages);
    memset(&g, 0, sizeof g);
    g.S = S; g.M = M; g.kind = kind;
    g.split = kind == IPUP_SCHED_ZBH1;
    /* mapping */
    if (kind == IPUP_SCHED_INTERLEAVED_1F1B) {
        V = cfg->virtual_stages;
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
            g.map[s] = (int16_t)(s % P);
            if (cfg->stage_device && cfg->stage_device[s] != s % P)
                return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                                 "interleaved-1f1b places stage s on device s mod P (Megatron virtual stages), but the "
                                 "mapping puts stage %d on device %d instead of %d; drop the mapping and give V instead",
                                 (int)s, (int)cfg->stage_device[s], (int)(s % P));
        }
        maxdev = P - 1;
    } else {
        if (cfg->virtual_stages > 1)
            ipup__warn(msg, msg_len, &nwarn, "%s: virtual stages V=%d ignored (only interleaved-1f1b uses them)", kname,
                       (int)cfg->virtual_stages);
        for (s = 0; s < S; s++) {
            int32_t dv = cfg->stage_device ? cfg->stage_device[s] : s;
            if (dv < 0 || dv >= IPUP_SCHED_MAX_STAGES || (cfg->devices > 0 && dv >= cfg->devices)) {
                if (msg && msg_len) msg[0] = '\0';
                return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                                 "%s: stage %d is mapped to device %d, but the devices are 0..%d; fix the mapping (the "
                                 "default puts stage s on device s) or raise the device count",
                                 kname, (int)s, (int)dv, (int)((cfg->devices > 0 ? cfg->devices : IPUP_SCHED_MAX_STAGES) - 1));
            }
            g.map[s] = (int16_t)dv;
            if (dv > maxdev) maxdev = dv;
        }
        P = cfg->devices > 0 ? cfg->devices : maxdev + 1;
    }
    g.P = P;
    g.V = V;
    for (d = 0; d < P; d++) { g.inv[d] = -1; g.first[d] = -1; }
    for (s = S - 1; s >= 0; s--) {
        d = g.map[s];
        g.next[s] = g.first[d];
        g.first[d] = (int16_t)s;
        if (g.inv[d] >= 0 || g.next[s] >= 0) g.shared = 1;
        g.inv[d] = (int16_t)s;
    }
    if (g.shared)
        for (d = 0; d < P; d++) g.inv[d] = -1;
    for (d = 0; d < P; d++)
        if (g.first[d] < 0)
            ipup__warn(msg, msg_len, &nwarn, "%s: device %d runs no stage (idle for the whole step)", kname, (int)d);
    /* per-schedule API rules (SCHEDULES.md §5): warnings, errors under strict */
    if (kind == IPUP_SCHED_INTERLEAVED && M % S != 0) {
        if (cfg->strict) {
            if (msg && msg_len) msg[0] = '\0';
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "PipelineSchedule.Interleaved: gradient_accumulation_count (M=%d) must be a multiple of the "
                             "number of pipeline stages (S=%d); use M=%d or %d",
                             (int)M, (int)S, (int)(M / S * S > 0 ? M / S * S : S), (int)((M / S + 1) * S));
        }
        ipup__warn(msg, msg_len, &nwarn,
                   "PipelineSchedule.Interleaved: gradient_accumulation_count (M=%d) is not a multiple of the number of "
                   "pipeline stages (S=%d) (an error on Graphcore's API and under strict)",
                   (int)M, (int)S);
    }
    if (kind == IPUP_SCHED_GROUPED && M % (2 * S) != 0) {
        if (cfg->strict) {
            if (msg && msg_len) msg[0] = '\0';
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "PipelineSchedule.Grouped: gradient_accumulation_count (M=%d) must be a multiple of 2 x the "
                             "number of pipeline stages (2S=%d); use M=%d",
                             (int)M, (int)(2 * S), (int)((M / (2 * S) + 1) * 2 * S));
        }
        ipup__warn(msg, msg_len, &nwarn,
                   "PipelineSchedule.Grouped: gradient_accumulation_count (M=%d) is not a multiple of 2 x the number of "
                   "pipeline stages (2S=%d) (an error on Graphcore's API and under strict)",
                   (int)M, (int)(2 * S));
    }
    if ((kind == IPUP_SCHED_INTERLEAVED || kind == IPUP_SCHED_GROUPED || kind == IPUP_SCHED_SEQUENTIAL) && !ipup__is_pow2(P)) {
        if (cfg->strict) {
            if (msg && msg_len) msg[0] = '\0';
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "%s: the model uses %d IPUs, but multi-IPU devices come in powers of two (1, 2, 4, 8, 16, 32, "
                             "64); map the stages onto %d IPUs",
                             kname, (int)P, (int)ipup__pow2_ceil(P));
        }
        ipup__warn(msg, msg_len, &nwarn,
                   "%s: %d IPUs is not a power of two; Graphcore multi-IPU devices come in 1, 2, 4, 8, 16, 32 or 64 IPUs "
                   "(an error under strict)",
                   kname, (int)P);
    }
    if (kind == IPUP_SCHED_INTERLEAVED_1F1B && V > 1 && M % P != 0) {
        if (cfg->strict) {
            if (msg && msg_len) msg[0] = '\0';
            return ipup__err(msg, msg_len, IPUP_ERR_CONFIG,
                             "interleaved-1f1b: Megatron-LM requires the number of micro-batches (M=%d) to be a multiple of "
                             "the pipeline-parallel size (P=%d); use M=%d",
                             (int)M, (int)P, (int)((M / P + 1) * P));
        }
        ipup__warn(msg, msg_len, &nwarn,
                   "interleaved-1f1b: M=%d is not a multiple of P=%d (Megatron-LM's rule); the last group of micro-batches "
                   "is smaller (an error under strict)",
                   (int)M, (int)P);
    }
    if (kind != IPUP_SCHED_SEQUENTIAL && S > 1 && M < 2 * P && P > 1)
        ipup__warn(msg, msg_len, &nwarn, "%s: M=%d < 2P=%d: the pipeline never fills (most devices idle most of the time)",
                   kname, (int)M, (int)(2 * P));
    /* capacity */
    if ((int64_t)(g.split ? 3 : 2) * S * M > (int64_t)0x7fffffff)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: S x M = %lld is too large", kname, (long long)S * M);
    need = (g.split ? 3 : 2) * S * M;
    if (!ops || cap_ops < need) {
        if (msg && msg_len) msg[0] = '\0';
        return ipup__err(msg, msg_len, IPUP_ERR_CAPACITY,
                         "%s: the table needs %d ops but the ops array holds %d; size it with IPUP_SCHED_MAX_OPS(%d, %d)",
                         kname, (int)need, ops ? (int)cap_ops : 0, (int)S, (int)M);
    }
    g.ops = ops;
    /* place */
    if (kind == IPUP_SCHED_SEQUENTIAL) {
        int32_t m;
        for (m = 0; m < M; m++) {
            for (s = 0; s < S; s++) { ipup__emit(&g, g.map[s], s, m, IPUP_OP_F); g.t++; }
            for (s = S - 1; s >= 0; s--) { ipup__emit(&g, g.map[s], s, m, IPUP_OP_B); g.t++; }
        }
    } else if ((kind == IPUP_SCHED_INTERLEAVED || kind == IPUP_SCHED_GROUPED || kind == IPUP_SCHED_GPIPE) && !g.shared) {
        int32_t raw = S + 2 * (M + S) + 2, t;
        for (t = 0; t < raw && g.n < need; t++) {
            int32_t before = g.n, m = 0;
            for (d = 0; d < P; d++) {
                int k;
                s = g.inv[d];
                if (s < 0) continue;
                k = ipup__closed_op(kind, S, M, t, s, &m);
                if (k) ipup__emit(&g, d, s, m, k);
            }
            if (g.n > before) g.t++; /* compaction: all-idle columns are dropped */
        }
    } else {
        rc = ipup__run_dynamic(&g, msg, msg_len);
        if (rc) return rc;
    }
    if (g.n != need)
        return ipup__err(msg, msg_len, IPUP_ERR_CONFIG, "%s: internal error: placed %d of %d ops", kname, (int)g.n, (int)need);
    out->stages = S;
    out->microbatches = M;
    out->devices = P;
    out->steps = g.t;
    out->n_ops = g.n;
    out->cap_ops = cap_ops;
    out->ops = ops;
    out->split_backward = g.split;
    for (s = 0; s < S; s++) out->stage_device[s] = g.map[s];
    return IPUP_OK;
}

IPUP_SCHED_DEF IPUP__SCHED_UNUSED int ipup_sched_peak_inflight(const ipup_table *t, int32_t *out, int32_t n_out) {
    int32_t cur[IPUP_SCHED_MAX_STAGES];
    int32_t i, s;
    if (!t || !out || (!t->ops && t->n_ops > 0)) return IPUP_ERR_ARG;
    if (t->stages < 1 || t->stages > IPUP_SCHED_MAX_STAGES || n_out < t->stages) return IPUP_ERR_ARG;
    for (s = 0; s < t->stages; s++) cur[s] = out[s] = 0;
    /* ops are in step order; a stage runs at most one op per step, so counting op by op
       gives the count after each step. */
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *o = &t->ops[i];
        s = o->stage;
        if (s < 0 || s >= t->stages) return IPUP_ERR_INVALID_TABLE;
        if (o->kind == IPUP_OP_F) {
            if (++cur[s] > out[s]) out[s] = cur[s];
        } else if (o->kind == IPUP_OP_B || o->kind == IPUP_OP_W) {
            cur[s]--;
        }
    }
    return IPUP_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* IPUPIPE_SCHED_IMPLEMENTED */
#endif /* IPUPIPE_IMPLEMENTATION */
