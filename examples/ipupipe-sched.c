/* ipupipe-sched - generate, verify, measure, draw and exchange pipeline schedule tables.
 *
 * A program on top of ipupipe_sched.h (the header does no allocation; this tool
 * allocates its arrays with malloc once, sized by the header's macros). Run with
 * --help for the manual. Exit status: 0 valid, 1 invalid table, 2 usage or
 * configuration error.
 */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_sched.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_MAX_CELLS (1 << 22) /* S x M limit of this tool (memory ~ 100 bytes per cell) */
#define TOOL_MAX_FILE (256u << 20)

static const char *usage_text =
    "usage: ipupipe-sched --stages S --microbatches M [--schedule NAME] [options]\n"
    "       ipupipe-sched --check FILE.csv [--respace] [options]\n"
    "       ipupipe-sched --compare --stages S --microbatches M [--cost ...]\n"
    "\n"
    "Generate a pipeline schedule table (rows = devices/IPUs, columns = time steps), verify\n"
    "it against the dependency rules, and print it with its figures (SCHEDULES.md).\n"
    "\n"
    "  --stages S, -S S          pipeline stages (1..256)\n"
    "  --microbatches M, -M M    micro-batches = gradient accumulation count\n"
    "  --schedule NAME           grouped (default), interleaved, sequential (Graphcore),\n"
    "                            gpipe, 1f1b, interleaved-1f1b (Megatron), zb-h1 (zero bubble)\n"
    "  --virtual V               interleaved-1f1b: stages per device (S = P x V)\n"
    "  --devices P               number of devices (default: as the mapping needs)\n"
    "  --map d0,d1,...           stage -> device mapping, e.g. 0,1,0 (stage 2 back on IPU0)\n"
    "  --cost F=1,B=2,I=1,W=1,exchange=0,sync=0\n"
    "                            cost model for BSP/async time (any subset of the keys)\n"
    "  --act-bytes a0,a1,...     activation bytes each stage stashes per micro-batch\n"
    "                            (one value for all stages, or one per stage)\n"
    "  --strict                  Graphcore's API rules (Interleaved: M %% S == 0; Grouped:\n"
    "                            M %% 2S == 0; power-of-two IPUs) as errors, not warnings\n"
    "  --format FMT              grid (default), steps (PyTorch layout), csv (PyTorch\n"
    "                            compute-only), json, trace (Chrome/Perfetto), svg\n"
    "  --check FILE.csv          load a PyTorch compute-only CSV and verify it; exit 0 and\n"
    "                            the figures when valid, exit 1 and the marked table if not\n"
    "  --respace                 with --check: place each device's ops as early as their\n"
    "                            dependencies allow (rows written as per-device orders)\n"
    "  --compare                 every schedule side by side for S, M and the costs\n"
    "  --quiet                   with grid/steps: the table only, no figures\n"
    "  --help                    this text\n"
    "\n"
    "Examples:\n"
    "  ipupipe-sched --stages 4 --microbatches 8 --schedule grouped\n"
    "  ipupipe-sched --compare --stages 4 --microbatches 16 --cost F=1,B=2\n"
    "  ipupipe-sched -S 3 -M 6 --schedule interleaved --map 0,1,0 --format steps\n"
    "  ipupipe-sched -S 4 -M 8 --schedule zb-h1 --format svg > zbh1.svg\n"
    "  ipupipe-sched --check zb1p.csv --respace --format json\n"
    "\n"
    "Exit status: 0 valid table, 1 invalid table, 2 usage or configuration error.\n";

typedef struct opts {
    int stages, microbatches, devices, virt, strict, respace, compare, quiet, have_kind, help;
    ipup_sched_kind kind;
    int nmap;
    int16_t map[IPUP_SCHED_MAX_STAGES];
    int nact;
    int64_t act[IPUP_SCHED_MAX_STAGES];
    ipup_sched_cost cost;
    const char *format, *check;
} opts;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "ipupipe-sched: ");
    fprintf(stderr, fmt, arg ? arg : "");
    fprintf(stderr, "\n(run ipupipe-sched --help for the options)\n");
    return 2;
}

/* strict integer in [lo, hi] */
static int parse_int(const char *s, long lo, long hi, int *out) {
    char *end;
    long v;
    if (!s || !*s || strlen(s) > 20) return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* comma list of integers into out (max n); returns count or -1 */
static int parse_int_list(const char *s, long long lo, long long hi, int64_t *out, int n) {
    int k = 0;
    const char *p = s;
    if (!s || !*s || strlen(s) > 8192) return -1;
    for (;;) {
        char buf[32], *end;
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        long long v;
        if (len == 0 || len >= sizeof buf || k >= n) return -1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno || *end || v < lo || v > hi) return -1;
        out[k++] = (int64_t)v;
        if (!c) break;
        p = c + 1;
    }
    return k;
}

static int key_eq(const char *a, size_t n, const char *b) {
    size_t i;
    if (strlen(b) != n) return 0;
    for (i = 0; i < n; i++) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != b[i]) return 0;
    }
    return 1;
}

static int parse_cost(const char *s, ipup_sched_cost *c) {
    const char *p = s;
    if (!s || !*s || strlen(s) > 1024) return -1;
    for (;;) {
        const char *comma = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = comma ? (size_t)(comma - p) : strlen(p), klen;
        char buf[64], *end;
        double v;
        if (!eq || eq >= p + len) return -1;
        klen = (size_t)(eq - p);
        if (len - klen - 1 == 0 || len - klen - 1 >= sizeof buf) return -1;
        memcpy(buf, eq + 1, len - klen - 1);
        buf[len - klen - 1] = '\0';
        errno = 0;
        v = strtod(buf, &end);
        if (errno || *end || !(v >= 0.0) || v > 1e12) return -1;
        if (key_eq(p, klen, "f")) c->f = v;
        else if (key_eq(p, klen, "b")) c->b = v;
        else if (key_eq(p, klen, "i")) c->i = v;
        else if (key_eq(p, klen, "w")) c->w = v;
        else if (key_eq(p, klen, "exchange")) c->exchange = v;
        else if (key_eq(p, klen, "sync")) c->sync = v;
        else return -1;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, opts *o) {
    int i;
    memset(o, 0, sizeof *o);
    o->cost = ipup_sched_cost_default();
    o->format = "grid";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                            \
    do {                                                                   \
        if (!v) return usage_error("option %s needs a value", a);          \
        i++;                                                               \
    } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            o->help = 1;
            return 0;
        } else if (!strcmp(a, "--stages") || !strcmp(a, "-S")) {
            NEEDV();
            if (parse_int(v, 1, IPUP_SCHED_MAX_STAGES, &o->stages)) return usage_error("--stages needs an integer 1..256, not '%s'", v);
        } else if (!strcmp(a, "--microbatches") || !strcmp(a, "-M")) {
            NEEDV();
            if (parse_int(v, 1, IPUP_SCHED_MAX_MICROBATCHES, &o->microbatches))
                return usage_error("--microbatches needs an integer 1..4194304, not '%s'", v);
        } else if (!strcmp(a, "--schedule")) {
            NEEDV();
            if (ipup_sched_kind_parse(v, &o->kind))
                return usage_error("unknown schedule '%s' (grouped, interleaved, sequential, gpipe, 1f1b, interleaved-1f1b, zb-h1)", v);
            o->have_kind = 1;
        } else if (!strcmp(a, "--virtual")) {
            NEEDV();
            if (parse_int(v, 1, IPUP_SCHED_MAX_STAGES, &o->virt)) return usage_error("--virtual needs an integer 1..256, not '%s'", v);
        } else if (!strcmp(a, "--devices")) {
            NEEDV();
            if (parse_int(v, 1, IPUP_SCHED_MAX_STAGES, &o->devices)) return usage_error("--devices needs an integer 1..256, not '%s'", v);
        } else if (!strcmp(a, "--map")) {
            int64_t tmp[IPUP_SCHED_MAX_STAGES];
            int k, n;
            NEEDV();
            n = parse_int_list(v, 0, IPUP_SCHED_MAX_STAGES - 1, tmp, IPUP_SCHED_MAX_STAGES);
            if (n < 1) return usage_error("--map needs device numbers 0..255 separated by commas (e.g. 0,1,0), not '%s'", v);
            for (k = 0; k < n; k++) o->map[k] = (int16_t)tmp[k];
            o->nmap = n;
        } else if (!strcmp(a, "--act-bytes")) {
            NEEDV();
            o->nact = parse_int_list(v, 0, 1LL << 40, o->act, IPUP_SCHED_MAX_STAGES);
            if (o->nact < 1) return usage_error("--act-bytes needs byte counts separated by commas, not '%s'", v);
        } else if (!strcmp(a, "--cost")) {
            NEEDV();
            if (parse_cost(v, &o->cost))
                return usage_error("--cost needs KEY=VALUE pairs (keys F, B, I, W, exchange, sync; values >= 0), not '%s'", v);
        } else if (!strcmp(a, "--format")) {
            NEEDV();
            if (strcmp(v, "grid") && strcmp(v, "steps") && strcmp(v, "csv") && strcmp(v, "json") && strcmp(v, "trace") &&
                strcmp(v, "svg"))
                return usage_error("--format must be grid, steps, csv, json, trace or svg, not '%s'", v);
            o->format = v;
        } else if (!strcmp(a, "--check")) {
            NEEDV();
            o->check = v;
        } else if (!strcmp(a, "--respace")) {
            o->respace = 1;
        } else if (!strcmp(a, "--strict")) {
            o->strict = 1;
        } else if (!strcmp(a, "--compare")) {
            o->compare = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o->quiet = 1;
        } else {
            return usage_error("unknown argument '%s'", a);
        }
#undef NEEDV
    }
    if (o->check) {
        if (o->compare) return usage_error("--check and --compare do not go together%s", "");
        return 0;
    }
    if (o->respace) return usage_error("--respace goes with --check FILE.csv%s", "");
    if (!o->stages || !o->microbatches) return usage_error("give --stages S and --microbatches M (or --check FILE.csv)%s", "");
    if ((long long)o->stages * o->microbatches > TOOL_MAX_CELLS)
        return usage_error("S x M is above this tool's limit of 4194304 cells%s", "");
    if (o->nmap && o->nmap != o->stages)
        return usage_error("--map gives %s devices, but it needs one per stage", o->nmap < o->stages ? "fewer" : "more");
    if (o->nact > 1 && o->nact != o->stages) return usage_error("--act-bytes needs 1 value or one per stage%s", "");
    return 0;
}

typedef struct tool_mem {
    ipup_op *ops;
    void *work;
    size_t work_bytes;
    int32_t cap;
} tool_mem;

static int mem_alloc(tool_mem *m, int32_t S, int32_t M, int32_t n_ops) {
    size_t cap = (size_t)IPUP_SCHED_MAX_OPS((size_t)S, (size_t)M);
    if ((size_t)n_ops > cap) cap = (size_t)n_ops;
    m->cap = (int32_t)cap;
    m->ops = (ipup_op *)malloc(cap * sizeof(ipup_op));
    m->work_bytes = IPUP_SCHED_WORK_BYTES(S, M);
    m->work = malloc(m->work_bytes); /* malloc'd memory is 8-byte aligned */
    if (m->ops && m->work) return 0;
    free(m->ops);
    free(m->work);
    m->ops = NULL;
    m->work = NULL;
    return -1;
}
static void mem_free(tool_mem *m) {
    free(m->ops);
    free(m->work);
    m->ops = NULL;
    m->work = NULL;
}

typedef int (*writer_fn)(const ipup_table *, const void *, const void *, char *, size_t, size_t *);

/* print whatever a header writer produces (asks its size first) */
static int print_grid(const ipup_table *t) {
    size_t n = 0;
    char *b;
    ipup_sched_render_grid(t, NULL, 0, &n);
    b = (char *)malloc(n + 1);
    if (!b) return -1;
    ipup_sched_render_grid(t, b, n + 1, &n);
    fputs(b, stdout);
    free(b);
    return 0;
}
static int print_steps(const ipup_table *t, int32_t mark, FILE *f) {
    size_t n = 0;
    char *b;
    ipup_sched_render_steps(t, mark, NULL, 0, &n);
    b = (char *)malloc(n + 1);
    if (!b) return -1;
    ipup_sched_render_steps(t, mark, b, n + 1, &n);
    fputs(b, f);
    free(b);
    return 0;
}

static void print_figures(const ipup_table *t, const ipup_sched_figures *fg, const ipup_sched_cost *c) {
    int s;
    printf("steps T=%d  devices P=%d  stages S=%d  micro-batches M=%d  ops=%d\n", (int)fg->steps, (int)fg->devices, (int)fg->stages,
           (int)fg->microbatches, (int)fg->n_ops);
    printf("unit utilisation %.4f\n", fg->unit_utilisation);
    printf("cost model F=%g B=%g I=%g W=%g exchange=%g sync=%g\n", c->f, c->b, c->i, c->w, c->exchange, c->sync);
    printf("BSP time %.6g  (bubble %.4f)\n", fg->bsp_time, fg->bubble_bsp);
    printf("async time %.6g  (bubble %.4f)\n", fg->async_time, fg->bubble_async);
    printf("peak in-flight per stage:");
    for (s = 0; s < t->stages; s++) printf(" %d", (int)fg->peak_inflight[s]);
    printf("\n");
    if (fg->stash_total > 0) {
        printf("stash bytes per stage:");
        for (s = 0; s < t->stages; s++) printf(" %lld", (long long)fg->stash_bytes[s]);
        printf("  (total %lld)\n", (long long)fg->stash_total);
    }
    printf("first micro-batch done at step %d (1-based; micro-batch %d)\n", (int)fg->first_mb_done, (int)fg->first_mb);
    printf("phases (0-based steps): ramp-up %d..%d, main %d..%d, ramp-down %d..%d\n", (int)fg->ramp_up[0], (int)fg->ramp_up[1],
           (int)fg->main_phase[0], (int)fg->main_phase[1], (int)fg->ramp_down[0], (int)fg->ramp_down[1]);
    printf("in-order accumulation: %s\n", fg->in_order ? "yes" : "no");
}

static int emit(const opts *o, const ipup_table *t, const ipup_sched_figures *fg, const char *name, const char *warnings) {
    size_t n = 0;
    char *b = NULL;
    int rc = 0;
    if (!strcmp(o->format, "grid") || !strcmp(o->format, "steps")) {
        if (!o->quiet) {
            int s;
            printf("%s  T=%d  in-flight ", name, (int)t->steps);
            for (s = 0; s < t->stages; s++) printf("%s%d", s ? "," : "", (int)fg->peak_inflight[s]);
            printf("\n");
        }
        if (!strcmp(o->format, "grid")) rc = print_grid(t);
        else rc = print_steps(t, -1, stdout);
        if (!o->quiet) {
            printf("\n");
            print_figures(t, fg, &o->cost);
            if (warnings && *warnings) printf("warnings:\n%s", warnings);
        }
        return rc;
    }
#define RUN(call_null, call_buf)                       \
    do {                                               \
        call_null;                                     \
        b = (char *)malloc(n + 1);                     \
        if (!b) return -1;                             \
        call_buf;                                      \
    } while (0)
    if (!strcmp(o->format, "csv")) RUN(ipup_sched_write_csv(t, NULL, 0, &n), ipup_sched_write_csv(t, b, n + 1, &n));
    else if (!strcmp(o->format, "json"))
        RUN(ipup_sched_write_json(t, fg, name, warnings, NULL, 0, &n), ipup_sched_write_json(t, fg, name, warnings, b, n + 1, &n));
    else if (!strcmp(o->format, "trace"))
        RUN(ipup_sched_write_trace(t, &o->cost, NULL, 0, &n), ipup_sched_write_trace(t, &o->cost, b, n + 1, &n));
    else RUN(ipup_sched_write_svg(t, &o->cost, fg, NULL, 0, &n), ipup_sched_write_svg(t, &o->cost, fg, b, n + 1, &n));
#undef RUN
    fputs(b, stdout);
    free(b);
    if (warnings && *warnings && strcmp(o->format, "json")) fprintf(stderr, "warnings:\n%s", warnings);
    return 0;
}

static void fill_act(const opts *o, int32_t S, int64_t *act) {
    int s;
    for (s = 0; s < S; s++) act[s] = o->nact == 0 ? 0 : o->nact == 1 ? o->act[0] : (s < o->nact ? o->act[s] : 0);
}

static int run_generate(const opts *o) {
    ipup_sched_config c;
    ipup_table t;
    ipup_sched_figures *fg;
    ipup_sched_verify_info vi;
    tool_mem m;
    char msg[4096];
    int64_t act[IPUP_SCHED_MAX_STAGES];
    int rc;
    memset(&c, 0, sizeof c);
    c.kind = o->kind;
    c.stages = o->stages;
    c.microbatches = o->microbatches;
    c.devices = o->devices;
    c.virtual_stages = o->virt;
    c.stage_device = o->nmap ? o->map : NULL;
    c.strict = o->strict;
    if (mem_alloc(&m, o->stages, o->microbatches, 0)) { fprintf(stderr, "ipupipe-sched: out of memory\n"); return 2; }
    rc = ipup_sched_generate(&c, m.ops, m.cap, &t, msg, sizeof msg);
    if (rc) {
        fprintf(stderr, "ipupipe-sched: %s\n", msg);
        mem_free(&m);
        return 2;
    }
    {
        char vmsg[1024];
        rc = ipup_sched_verify(&t, m.work, m.work_bytes, &vi, vmsg, sizeof vmsg);
        if (rc) { /* a generator bug: say so loudly */
            fprintf(stderr, "ipupipe-sched: generated table fails verification: %s\n", vmsg);
            mem_free(&m);
            return 1;
        }
    }
    fg = (ipup_sched_figures *)malloc(sizeof *fg);
    if (!fg) { mem_free(&m); return 2; }
    fill_act(o, o->stages, act);
    ipup_sched_measure(&t, &o->cost, act, m.work, m.work_bytes, fg);
    rc = emit(o, &t, fg, ipup_sched_kind_name(o->kind), msg);
    free(fg);
    mem_free(&m);
    return rc ? 2 : 0;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *b;
    size_t cap = 1 << 16, n = 0;
    if (!f) return NULL;
    b = (char *)malloc(cap);
    if (!b) {
        fclose(f);
        return NULL;
    }
    for (;;) {
        size_t r;
        if (n == cap) {
            char *nb = NULL;
            if (cap < TOOL_MAX_FILE) nb = (char *)realloc(b, cap * 2);
            if (!nb) { /* too large (limit 256 MiB) or out of memory */
                free(b);
                fclose(f);
                errno = 0;
                return NULL;
            }
            b = nb;
            cap *= 2;
        }
        r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    *len = n;
    return b;
}

static int run_check(const opts *o) {
    size_t len = 0;
    char *text = read_file(o->check, &len), msg[4096], name[300];
    int32_t S, M, P, n;
    tool_mem m;
    ipup_table t;
    ipup_sched_verify_info vi;
    ipup_sched_figures *fg;
    int64_t act[IPUP_SCHED_MAX_STAGES];
    int rc;
    if (!text) {
        fprintf(stderr, "ipupipe-sched: cannot read '%s': %s\n", o->check, errno ? strerror(errno) : "too large (limit 256 MiB)");
        return 2;
    }
    rc = ipup_sched_csv_scan(text, len, &S, &M, &P, &n, msg, sizeof msg);
    if (rc) {
        fprintf(stderr, "ipupipe-sched: %s: %s\n", o->check, msg);
        free(text);
        return 1;
    }
    if ((long long)S * M > TOOL_MAX_CELLS) {
        fprintf(stderr, "ipupipe-sched: %s: S x M = %lld is above this tool's limit\n", o->check, (long long)S * M);
        free(text);
        return 2;
    }
    if (mem_alloc(&m, S, M, n)) { fprintf(stderr, "ipupipe-sched: out of memory\n"); free(text); return 2; }
    rc = ipup_sched_csv_load(text, len, m.ops, m.cap, m.work, m.work_bytes, &t, msg, sizeof msg);
    free(text);
    if (rc) {
        fprintf(stderr, "ipupipe-sched: %s: %s\n", o->check, msg);
        mem_free(&m);
        return 1;
    }
    if (o->respace) {
        rc = ipup_sched_respace(&t, m.work, m.work_bytes, msg, sizeof msg);
        if (rc) {
            fprintf(stderr, "ipupipe-sched: %s: %s\n", o->check, msg);
            mem_free(&m);
            return 1;
        }
    }
    rc = ipup_sched_verify(&t, m.work, m.work_bytes, &vi, msg, sizeof msg);
    if (rc) {
        printf("INVALID %s: %s\n", o->check, msg);
        if (vi.rule == 1 && vi.step < 0) printf("(the missing op has no step to mark)\n");
        print_steps(&t, vi.step, stdout);
        if (!o->respace) printf("hint: if the rows are per-device orders rather than lock-step columns, try --respace\n");
        mem_free(&m);
        return 1;
    }
    fg = (ipup_sched_figures *)malloc(sizeof *fg);
    if (!fg) { mem_free(&m); return 2; }
    fill_act(o, S, act);
    ipup_sched_measure(&t, &o->cost, act, m.work, m.work_bytes, fg);
    snprintf(name, sizeof name, "csv:%.250s%s", o->check, o->respace ? " (respaced)" : "");
    if (!strcmp(o->format, "grid") && !o->quiet) printf("VALID %s\n", o->check);
    rc = emit(o, &t, fg, name, "");
    free(fg);
    mem_free(&m);
    return rc ? 2 : 0;
}

static int run_compare(const opts *o) {
    int k, s;
    tool_mem m;
    ipup_sched_figures *fg = (ipup_sched_figures *)malloc(sizeof *fg);
    if (!fg || mem_alloc(&m, o->stages, o->microbatches, 0)) { fprintf(stderr, "ipupipe-sched: out of memory\n"); free(fg); return 2; }
    printf("S=%d M=%d  cost F=%g B=%g I=%g W=%g exchange=%g sync=%g\n", o->stages, o->microbatches, o->cost.f, o->cost.b, o->cost.i,
           o->cost.w, o->cost.exchange, o->cost.sync);
    printf("%-17s %3s %6s %9s %7s %9s %7s %6s %5s  %s\n", "schedule", "P", "steps", "BSP time", "bubble", "async", "bubble", "1st mb",
           "order", "peak in-flight per stage");
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) {
        ipup_sched_config c;
        ipup_table t;
        char msg[2048];
        int rc;
        memset(&c, 0, sizeof c);
        c.kind = (ipup_sched_kind)k;
        c.stages = o->stages;
        c.microbatches = o->microbatches;
        c.devices = k == IPUP_SCHED_INTERLEAVED_1F1B ? 0 : o->devices;
        c.virtual_stages = o->virt;
        c.stage_device = o->nmap && k != IPUP_SCHED_INTERLEAVED_1F1B ? o->map : NULL;
        c.strict = o->strict;
        rc = ipup_sched_generate(&c, m.ops, m.cap, &t, msg, sizeof msg);
        if (rc) {
            char *nl = strchr(msg, '\n');
            if (nl) *nl = '\0';
            printf("%-17s  -- %s\n", ipup_sched_kind_name(c.kind), msg);
            continue;
        }
        ipup_sched_measure(&t, &o->cost, NULL, m.work, m.work_bytes, fg);
        printf("%-17s %3d %6d %9.6g %7.4f %9.6g %7.4f %6d %5s  ", ipup_sched_kind_name(c.kind), (int)t.devices, (int)t.steps,
               fg->bsp_time, fg->bubble_bsp, fg->async_time, fg->bubble_async, (int)fg->first_mb_done, fg->in_order ? "yes" : "no");
        for (s = 0; s < t.stages; s++) printf("%s%d", s ? "," : "", (int)fg->peak_inflight[s]);
        printf("\n");
    }
    free(fg);
    mem_free(&m);
    return 0;
}

/* A fuzzer (or another program) can include this file with IPUPIPE_SCHED_TOOL_NO_MAIN
   and call parse_args() / tool_main() directly: nothing here calls exit(). */
static int tool_main(int argc, char **argv) {
    static opts o;
    int rc;
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    rc = parse_args(argc, argv, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (o.check) return run_check(&o);
    if (o.compare) return run_compare(&o);
    return run_generate(&o);
}

#ifndef IPUPIPE_SCHED_TOOL_NO_MAIN
int main(int argc, char **argv) { return tool_main(argc, argv); }
#endif
