/* sched_cli.h - the command line of ipupipe-sched: its options and the parser of an
 * argument list into them. Static functions, no exit(): used by the tool
 * (examples/sched/ipupipe-sched.c) and by its fuzz target (tests/fuzz/fuzz_sched_cli.c).
 * Include ipupipe_sched.h (with its implementation, in one file) before it. */
#ifndef SCHED_CLI_H
#define SCHED_CLI_H

#include "ipupipe_sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_MAX_CELLS (1 << 22) /* S x M limit of this tool (memory ~ 100 bytes per cell) */

typedef struct opts {
    int stages, microbatches, devices, virt, strict, respace, compare, quiet, have_kind, help;
    int dual; /* --dual: the --check CSV is a dual table (DualPipe's two model copies) */
    int popxl; /* --stage-numbering popxl: -S and --map count PopXL's pipeline stages */
    double svg_width, svg_unit; /* --width, --unit of the SVG (0 = automatic) */
    ipup_sched_kind kind;
    int nmap;
    int16_t map[IPUP_SCHED_MAX_STAGES];
    int nact;
    int64_t act[IPUP_SCHED_MAX_STAGES];
    ipup_sched_cost cost;
    const char *format, *check;
    int forward_only; /* --forward-only: inference tables, F ops only (docs/schedules.md §8) */
    ipup_stage_map cmap; /* --map as parsed; cmap.concurrent: some stage on several IPUs ("0,[1,2],2,3") */
    int timing;          /* --timing: IPUP_SCHED_TIMING_ASYNC (default) or _BSP */
    int memory;          /* --memory: the activations held per device over time */
    const char *paper;   /* --paper zb|dualpipe: a paper's table (with --compare) */
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
        /* the library's rule (ipup_sched_write_svg_ex): 0, or a normal number up to the max;
           a value that underflows or overflows strtod is outside it too */
        if (errno || *end || !(v == 0.0 || (v >= IPUP_SCHED_COST_MIN && v <= IPUP_SCHED_COST_MAX))) return -1;
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

/* PopXL counts the forward and the backward of a model stage as two pipeline stages
   (2L-1 for L model stages, the last holding both): -S gives those, --map one IPU per
   pipeline stage, the backward of a model stage on its forward's IPU (0,1,2,1,0). Folds
   them into L model stages. */
static int popxl_fold(opts *o) {
    int n = o->stages, L, s;
    if (n % 2 == 0)
        return usage_error("--stage-numbering popxl: -S counts PopXL pipeline stages, 2L-1 for L layers (odd: 1, 3, 5, ...)%s", "");
    L = (n + 1) / 2;
    if (o->nmap) {
        if (o->nmap != n) return usage_error("--map gives %s devices, but it needs one per PopXL stage", o->nmap < n ? "fewer" : "more");
        for (s = 0; s < L; s++)
            if (o->map[s] != o->map[n - 1 - s])
                return usage_error("--stage-numbering popxl: PopXL stages s and 2L-2-s are the forward and backward of one "
                                   "layer and run on one IPU; --map must read the same both ways (e.g. 0,1,2,1,0)%s", "");
        o->nmap = L;
    }
    if (o->nact > 1) return usage_error("--stage-numbering popxl: --act-bytes takes one value%s", "");
    o->stages = L;
    return 0;
}

/* --map: one device per stage, a bracket for a concurrent stage ("0,[1,2],2,3") */
static int parse_map(const char *v, opts *o) {
    char msg[300], text[700];
    int k, n = strlen(v) > 8192 ? IPUP_ERR_PARSE : ipup_sched_map_parse(v, &o->cmap, msg, sizeof msg);
    if (n < 1) {
        if (strlen(v) > 8192) ipup_snprintf(msg, sizeof msg, "the text is longer than 8192 characters");
        ipup_snprintf(text, sizeof text, "--map needs device numbers 0..255 separated by commas (e.g. 0,1,0; a bracket puts one "
                      "stage on several IPUs: 0,[1,2],2,3), not '%.80s%s': %s", v, strlen(v) > 80 ? "..." : "", msg);
        return usage_error("%s", text);
    }
    for (k = 0; k < n; k++) o->map[k] = o->cmap.dev[k][0];
    o->nmap = n;
    return 0;
}

/* --timing, --memory, --paper: -1 when a is none of them, else the values it took (0 or 1),
   or 2 after a usage error */
static int parse_draw_option(const char *a, const char *v, opts *o) {
    if (!strcmp(a, "--memory")) { o->memory = 1; return 0; }
    if (strcmp(a, "--timing") && strcmp(a, "--paper")) return -1;
    if (!v) return usage_error("option %s needs a value", a);
    if (!strcmp(a, "--timing")) {
        if (!strcmp(v, "async")) o->timing = IPUP_SCHED_TIMING_ASYNC;
        else if (!strcmp(v, "bsp")) o->timing = IPUP_SCHED_TIMING_BSP;
        else return usage_error("--timing must be async (dataflow: each op when its inputs and its device are free) or bsp "
                                "(lock-step: every step as long as its slowest op), not '%s'", v);
        return 1;
    }
    if (strcmp(v, "zb") && strcmp(v, "dualpipe"))
        return usage_error("--paper must be zb (the Zero Bubble paper's table) or dualpipe (the DualPipe repository's), not '%s'", v);
    o->paper = v;
    o->compare = 1;
    return 1;
}

/* --paper: P = 4, M = 16 unless given; 0, or 2 after a usage error */
static int paper_defaults(opts *o) {
    if (!o->paper) return 0;
    if (!o->stages) o->stages = 4;
    if (!o->microbatches) o->microbatches = 16;
    if (o->nmap || o->cmap.concurrent || o->forward_only || o->nact)
        return usage_error("--paper takes -S, -M, --devices, --cost and --timing only (its table fixes the rest)%s", "");
    return 0;
}

static int parse_args(int argc, char **argv, opts *o) {
    int i, rc;
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
                return usage_error("unknown schedule '%s' (grouped, interleaved, sequential, gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-h2, zb-v, v-min, v-half, looped-bfs, interleaved-zb, dualpipe-v, dualpipe)", v);
            o->have_kind = 1;
        } else if (!strcmp(a, "--virtual")) {
            NEEDV();
            if (parse_int(v, 1, IPUP_SCHED_MAX_STAGES, &o->virt)) return usage_error("--virtual needs an integer 1..256, not '%s'", v);
        } else if (!strcmp(a, "--devices")) {
            NEEDV();
            if (parse_int(v, 1, IPUP_SCHED_MAX_STAGES, &o->devices)) return usage_error("--devices needs an integer 1..256, not '%s'", v);
        } else if (!strcmp(a, "--map")) {
            NEEDV();
            if (parse_map(v, o)) return 2;
        } else if (!strcmp(a, "--act-bytes")) {
            NEEDV();
            o->nact = parse_int_list(v, 0, 1LL << 40, o->act, IPUP_SCHED_MAX_STAGES);
            if (o->nact < 1) return usage_error("--act-bytes needs byte counts separated by commas, not '%s'", v);
        } else if (!strcmp(a, "--cost")) {
            NEEDV();
            if (parse_cost(v, &o->cost)) {
                char rule[400];
                ipup_snprintf(rule, sizeof rule, "--cost needs KEY=VALUE pairs (keys F, B, I, W, exchange, sync; "
                              "each value a finite number, 0 or from %.17g (the smallest normal double) to %g), "
                              "not '%%s'", IPUP_SCHED_COST_MIN, IPUP_SCHED_COST_MAX);
                return usage_error(rule, v);
            }
        } else if (!strcmp(a, "--format")) {
            NEEDV();
            if (strcmp(v, "grid") && strcmp(v, "steps") && strcmp(v, "csv") && strcmp(v, "json") && strcmp(v, "trace") &&
                strcmp(v, "svg"))
                return usage_error("--format must be grid, steps, csv, json, trace or svg, not '%s'", v);
            o->format = v;
        } else if (!strcmp(a, "--stage-numbering")) {
            NEEDV();
            if (!strcmp(v, "popxl")) o->popxl = 1;
            else if (!strcmp(v, "model")) o->popxl = 0;
            else return usage_error("--stage-numbering must be model or popxl, not '%s'", v);
        } else if (!strcmp(a, "--width") || !strcmp(a, "--unit")) {
            int px;
            NEEDV();
            if (parse_int(v, a[2] == 'w' ? -1 : 1, 100000, &px) || (a[2] == 'w' && px >= 0 && px < 200))
                return usage_error(a[2] == 'w' ? "--width needs a pixel count 200..100000, or -1 (never fold), not '%s'"
                                               : "--unit needs pixels per cost unit 1..100000, not '%s'", v);
            if (a[2] == 'w') o->svg_width = px;
            else o->svg_unit = px;
        } else if ((rc = parse_draw_option(a, v, o)) >= 0) {
            if (rc > 1) return rc;
            i += rc;
        } else if (!strcmp(a, "--check")) {
            NEEDV();
            o->check = v;
        } else if (!strcmp(a, "--respace")) {
            o->respace = 1;
        } else if (!strcmp(a, "--dual")) {
            o->dual = 1;
        } else if (!strcmp(a, "--strict")) {
            o->strict = 1;
        } else if (!strcmp(a, "--compare")) {
            o->compare = 1;
        } else if (!strcmp(a, "--forward-only")) {
            o->forward_only = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o->quiet = 1;
        } else {
            return usage_error("unknown argument '%s'", a);
        }
#undef NEEDV
    }
    if (o->check) {
        if (o->compare) return usage_error("--check and --compare do not go together%s", "");
        if (o->forward_only)
            return usage_error("--check reads the kind of table from the file (a CSV of F ops only is a forward-only table); drop --forward-only%s", "");
        return 0;
    }
    if (o->respace) return usage_error("--respace goes with --check FILE.csv%s", "");
    if (o->dual) return usage_error("--dual goes with --check FILE.csv (a generated dualpipe table is dual already)%s", "");
    if (o->compare && !strcmp(o->format, "trace"))
        return usage_error("--compare prints grid (its table), csv, json or svg, not trace%s", "");
    if (o->popxl && o->forward_only)
        return usage_error("--stage-numbering popxl counts forward and backward stages; a forward-only table has no backward (drop one of them)%s", "");
    if (o->forward_only && o->cmap.concurrent)
        return usage_error("--forward-only does not take concurrent stages (a bracket in --map): they have no forward-only "
                           "table; drop --forward-only for the training table, or give each stage one IPU%s", "");
    if (o->popxl && o->cmap.concurrent)
        return usage_error("--stage-numbering popxl does not take concurrent stages (a bracket in --map)%s", "");
    if (o->popxl && (o->compare || strcmp(o->format, "grid")))
        return usage_error("--stage-numbering popxl draws the grid of one schedule (no --compare, --format grid)%s", "");
    if (paper_defaults(o)) return 2;
    if (!o->stages || !o->microbatches) return usage_error("give --stages S and --microbatches M (or --check FILE.csv)%s", "");
    if (o->popxl && popxl_fold(o)) return 2;
    if ((long long)o->stages * o->microbatches > TOOL_MAX_CELLS)
        return usage_error("S x M is above this tool's limit of 4194304 cells%s", "");
    if (o->nmap && o->nmap != o->stages)
        return usage_error("--map gives %s devices, but it needs one per stage", o->nmap < o->stages ? "fewer" : "more");
    if (o->nact > 1 && o->nact != o->stages) return usage_error("--act-bytes needs 1 value or one per stage%s", "");
    return 0;
}

#endif /* SCHED_CLI_H */
