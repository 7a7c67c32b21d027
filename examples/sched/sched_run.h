/* sched_run.h - what ipupipe-sched does with parsed options (sched_cli.h): generate,
 * verify, measure and print a table (run_generate), load and check a CSV (run_check),
 * or compare every schedule (run_compare); each returns the tool's exit status. The
 * header's writers send the documents straight to stdout. Static functions, no exit():
 * used by the tool and by its fuzz target. */
#ifndef SCHED_RUN_H
#define SCHED_RUN_H

#include "sched_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOOL_MAX_FILE (256u << 20)

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

/* the header's writers print through this: user is the FILE */
static int file_write(void *user, const void *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)user) == len ? 0 : -1;
}

/* the grid with its 1-based step numbers on top */
static int print_grid(const ipup_table *t) {
    return ipup_sched_render_grid_ex(t, IPUP_SCHED_GRID_STEPS, file_write, stdout) ? -1 : 0;
}

/* PopXL's view: the pipeline stages, their IPUs and each stash FIFO's length */
static int print_popxl(const ipup_table *t) {
    int32_t L = t->stages, n = 2 * t->stages - 1, s;
    printf("PopXL numbering: %d layers = %d pipeline stages (forward 0..%d, backward %d..%d) on IPUs ", (int)L, (int)n, (int)(L - 1),
           (int)(L - 1), (int)(n - 1));
    for (s = 0; s < n; s++) printf("%s%d", s ? "," : "", (int)t->stage_device[s < L ? s : n - 1 - s]);
    printf("\n");
    if (ipup_sched_render_grid_ex(t, IPUP_SCHED_GRID_STEPS | IPUP_SCHED_GRID_POPXL, file_write, stdout)) return -1;
    printf("stash FIFO length (backward stage - forward stage):");
    for (s = 0; s < L; s++) printf(" %d->%d: %d%s", (int)s, (int)(n - 1 - s), (int)(n - 1 - 2 * s), s + 1 < L ? "," : "");
    printf("\n");
    return 0;
}
static int print_steps(const ipup_table *t, int32_t mark, FILE *f) {
    return ipup_sched_render_steps(t, mark, file_write, f) ? -1 : 0;
}

/* one phase as 1-based steps ("4..19"), or "none" when empty */
static void print_range(const char *name, const int32_t r[2], const char *none) {
    if (r[1] < r[0]) printf("%s none%s", name, none);
    else printf("%s %d..%d", name, (int)r[0] + 1, (int)r[1] + 1);
}
static void print_phases(const ipup_sched_figures *fg) {
    printf("phases (1-based steps): ");
    print_range("ramp-up", fg->ramp_up, "");
    printf(", ");
    print_range("main", fg->main_phase, " (the pipeline never fills: no step has every device busy)");
    printf(", ");
    print_range("ramp-down", fg->ramp_down, "");
    printf("\n");
}

/* the figures of a forward-only table (docs/schedules.md §8) */
static void print_figures_fwd(const ipup_table *t, const ipup_sched_figures *fg, const ipup_sched_cost *c) {
    int s;
    printf("forward only (inference): steps T=%d  devices P=%d  stages S=%d  micro-batches M=%d  ops=%d\n", (int)fg->steps,
           (int)fg->devices, (int)fg->stages, (int)fg->microbatches, (int)fg->n_ops);
    printf("unit utilisation %.4f\n", fg->unit_utilisation);
    printf("cost model F=%g exchange=%g sync=%g\n", c->f, c->exchange, c->sync);
    printf("BSP time %.6g  (bubble %.4f)\n", fg->bsp_time, fg->bubble_bsp);
    printf("async time %.6g  (bubble %.4f)\n", fg->async_time, fg->bubble_async);
    printf("latency of one micro-batch %.6g (BSP time), %d steps\n", fg->fwd_latency, (int)fg->fwd_latency_steps);
    printf("throughput in steady state %.6g micro-batches per time unit (BSP)\n", fg->fwd_throughput);
    printf("in-flight inputs per stage (no stash):");
    for (s = 0; s < t->stages; s++) printf(" %d", (int)fg->peak_inflight[s]);
    printf("\n");
    if (fg->stash_total > 0) {
        printf("activation bytes in flight per stage:");
        for (s = 0; s < t->stages; s++) printf(" %lld", (long long)fg->stash_bytes[s]);
        printf("  (total %lld)\n", (long long)fg->stash_total);
    }
    printf("first micro-batch done at step %d (1-based; micro-batch %d)\n", (int)fg->first_mb_done, (int)fg->first_mb);
    print_phases(fg);
}

/* concurrent stages: the stages with their devices, and what each device holds */
static void print_device_figures(const ipup_table *t, const ipup_sched_figures *fg) {
    int s, b, d;
    printf("stage -> devices:");
    for (s = 0; s < t->stages; s++) {
        printf("%s", s ? "," : " ");
        if (t->n_branches[s] > 1) {
            printf("[");
            for (b = 0; b < t->n_branches[s]; b++) printf("%s%d", b ? "," : "", (int)t->branch_device[s][b]);
            printf("]");
        } else printf("%d", (int)t->stage_device[s]);
    }
    printf("  (a bracket: one stage, a branch per IPU, all in one step)\n");
    printf("peak in-flight per device:");
    for (d = 0; d < t->devices; d++) printf(" %d", (int)fg->peak_inflight_device[d]);
    printf("  (activations stored: %d)\n", (int)fg->inflight_total);
    if (fg->stash_total > 0) {
        printf("stash bytes per device:");
        for (d = 0; d < t->devices; d++) printf(" %lld", (long long)fg->stash_bytes_device[d]);
        printf("\n");
    }
}

static void print_figures(const ipup_table *t, const ipup_sched_figures *fg, const ipup_sched_cost *c) {
    int s;
    if (t->forward_only) { print_figures_fwd(t, fg, c); return; }
    printf("steps T=%d  devices P=%d  stages S=%d  micro-batches M=%d  ops=%d\n", (int)fg->steps, (int)fg->devices, (int)fg->stages,
           (int)fg->microbatches, (int)fg->n_ops);
    printf("unit utilisation %.4f\n", fg->unit_utilisation);
    printf("cost model F=%g B=%g I=%g W=%g exchange=%g sync=%g\n", c->f, c->b, c->i, c->w, c->exchange, c->sync);
    printf("BSP time %.6g  (bubble %.4f)\n", fg->bsp_time, fg->bubble_bsp);
    printf("async time %.6g  (bubble %.4f)\n", fg->async_time, fg->bubble_async);
    printf("peak in-flight per stage:");
    for (s = 0; s < t->stages; s++) printf(" %d", (int)fg->peak_inflight[s]);
    printf("\n");
    if (t->devices < t->stages) { /* stages share a device: what each device holds at most */
        printf("peak in-flight per device:");
        for (s = 0; s < t->devices; s++) printf(" %d", (int)fg->peak_inflight_device[s]);
        printf("\n");
    }
    if (fg->stash_total > 0) {
        printf("stash bytes per stage:");
        for (s = 0; s < t->stages; s++) printf(" %lld", (long long)fg->stash_bytes[s]);
        printf("  (total %lld)\n", (long long)fg->stash_total);
    }
    if (t->concurrent) print_device_figures(t, fg);
    printf("first micro-batch done at step %d (1-based; micro-batch %d)\n", (int)fg->first_mb_done, (int)fg->first_mb);
    print_phases(fg);
    printf("in-order accumulation: %s\n", fg->in_order ? "yes" : "no");
}

/* The SVG and the trace draw every op, about 160 bytes each (measured: 157 for the SVG,
   170 for the trace at -S 2 -M 65536), so their size follows the ops, not the canvas the
   cost checks bound: at the cell limit (-S 2 -M 2097152) an SVG was 1.3 GB. Past
   TOOL_DRAW_MAX_OPS ops in one picture (about 40 MB) they are refused before anything is
   drawn; the text formats write a few bytes a cell (grid, steps, csv: at most about
   120 MB at the cell limit) and are the way to see larger tables. */
#define TOOL_DRAW_MAX_OPS (1 << 18)
#define TOOL_DRAW_OP_BYTES 160.0

/* 0 when a picture of ops ops (what: "--format svg", ...) is within TOOL_DRAW_MAX_OPS; else
   2 after a message naming the limit and what to do instead */
static int draw_refused(const char *what, long long ops) {
    if (ops <= TOOL_DRAW_MAX_OPS) return 0;
    fprintf(stderr,
            "ipupipe-sched: %s draws every op: %lld ops here, about %.0f MB; this tool draws at most %d ops "
            "(about %.0f MB) in one picture: use fewer micro-batches or stages (-M, -S), or --format csv, grid "
            "or steps, which write the table in a few bytes a cell\n",
            what, ops, (double)ops * TOOL_DRAW_OP_BYTES / 1e6, TOOL_DRAW_MAX_OPS,
            TOOL_DRAW_MAX_OPS * TOOL_DRAW_OP_BYTES / 1e6);
    return 2;
}

/* --act-bytes as the library takes it (NULL: 1 unit per stage and micro-batch) */
static const int64_t *act_or_null(const opts *o, int32_t S, int64_t *act) {
    int s;
    if (o->nact == 0) return NULL;
    for (s = 0; s < S; s++) act[s] = o->nact == 1 ? o->act[0] : (s < o->nact ? o->act[s] : 0);
    return act;
}

/* the SVG with --timing and --memory: the scratch they need allocated here */
static int write_svg_with(const opts *o, const ipup_table *t, const ipup_sched_figures *fg, ipup_sched_svg_opts *so,
                          ipup_write_fn wr, void *user) {
    int64_t act[IPUP_SCHED_MAX_STAGES];
    int rc;
    so->timing = o->timing;
    so->memory = o->memory;
    so->act_bytes = act_or_null(o, t->stages, act);
    so->work_bytes = IPUP_SCHED_DRAW_WORK_BYTES(t->stages, t->microbatches, t->n_ops);
    so->work = malloc(so->work_bytes);
    if (!so->work) return IPUP_ERR_CAPACITY;
    rc = ipup_sched_write_svg_ex(t, &o->cost, fg, so, wr, user);
    free(so->work);
    so->work = NULL;
    return rc;
}

/* the trace with --timing */
static int write_trace(const opts *o, const ipup_table *t) {
    size_t n = IPUP_SCHED_DRAW_WORK_BYTES(t->stages, t->microbatches, t->n_ops);
    void *work = malloc(n);
    int rc = work ? ipup_sched_write_trace_ex(t, &o->cost, o->timing, work, n, file_write, stdout) : IPUP_ERR_CAPACITY;
    free(work);
    return rc;
}

/* the SVG with the tool's title (schedule, sizes, costs) and --width/--unit */
static int write_svg(const opts *o, const ipup_table *t, const ipup_sched_figures *fg, const char *name, ipup_write_fn wr, void *user) {
    ipup_sched_svg_opts so;
    char title[200];
    const ipup_sched_cost *c = &o->cost;
    memset(&so, 0, sizeof so);
    so.width = o->svg_width;
    so.unit = o->svg_unit;
    if (t->forward_only)
        ipup_snprintf(title, sizeof title, "%.60s forward only  S=%d M=%d P=%d T=%d  cost F=%g", name, (int)t->stages, (int)t->microbatches,
                      (int)t->devices, (int)t->steps, c->f);
    else if (t->split_backward)
        ipup_snprintf(title, sizeof title, "%.60s  S=%d M=%d P=%d T=%d  cost F=%g I=%g W=%g", name, (int)t->stages, (int)t->microbatches,
                      (int)t->devices, (int)t->steps, c->f, c->i, c->w);
    else
        ipup_snprintf(title, sizeof title, "%.60s  S=%d M=%d P=%d T=%d  cost F=%g B=%g", name, (int)t->stages, (int)t->microbatches,
                      (int)t->devices, (int)t->steps, c->f, c->b);
    if (c->exchange != 0.0 || c->sync != 0.0)
        ipup_snprintf(title + strlen(title), sizeof title - strlen(title), " exchange=%g sync=%g", c->exchange, c->sync);
    so.title = title;
    return write_svg_with(o, t, fg, &so, wr, user);
}

/* --memory as text (grid, steps) or JSON: the activations each device holds at the end of
   every step (ipup_sched_held: from F to its B, or W when split) and its peak */
static int print_memory(const opts *o, const ipup_table *t, int json) {
    int64_t act[IPUP_SCHED_MAX_STAGES], peak[IPUP_SCHED_MAX_STAGES], *held = (int64_t *)malloc(((size_t)t->n_ops + 1) * 8);
    const int64_t *a = act_or_null(o, t->stages, act);
    int32_t d, i, step;
    if (!held || ipup_sched_held(t, a, held, peak)) { free(held); return -1; }
    if (json) printf("{\"held_peak_device\":[");
    else printf("activations held per device (%s; from F to its B, or W when split)\npeak:", a ? "bytes" : "stage micro-batches");
    for (d = 0; d < t->devices; d++) printf("%s%lld", json ? (d ? "," : "") : " ", (long long)peak[d]);
    if (json) printf("],\"held_at_step_end\":[");
    else printf("\nat the end of each step (columns: steps 1..%d)\n", (int)t->steps);
    for (d = 0; d < t->devices; d++) {
        int64_t cur = 0;
        if (json) printf("%s[", d ? "," : "");
        else printf("IPU%d ", (int)d);
        for (step = 0, i = 0; step < t->steps; step++) {
            for (; i < t->n_ops && t->ops[i].step <= step; i++) {
                const ipup_op *op = &t->ops[i];
                if (op->device != d) continue;
                cur = held[i];
                if ((op->kind == IPUP_OP_B || op->kind == IPUP_OP_W) && !t->forward_only) cur -= a ? a[op->stage] : 1;
            }
            if (json) printf("%s%lld", step ? "," : "", (long long)cur);
            else printf(" %2lld", (long long)cur);
        }
        printf("%s", json ? "]" : "\n");
    }
    if (json) printf("]}\n");
    free(held);
    return 0;
}

static int emit(const opts *o, const ipup_table *t, const ipup_sched_figures *fg, const char *name, const char *warnings) {
    int rc;
    if (!strcmp(o->format, "grid") || !strcmp(o->format, "steps")) {
        if (!o->quiet) {
            int s;
            printf("%s  T=%d  in-flight ", name, (int)t->steps);
            for (s = 0; s < t->stages; s++) printf("%s%d", s ? "," : "", (int)fg->peak_inflight[s]);
            printf("\n");
        }
        if (!strcmp(o->format, "grid")) rc = o->popxl ? print_popxl(t) : print_grid(t);
        else rc = print_steps(t, -1, stdout);
        if (!o->quiet) {
            printf("\n");
            print_figures(t, fg, &o->cost);
            if (warnings && *warnings) printf("warnings:\n%s", warnings);
        }
        if (o->memory && !rc) rc = print_memory(o, t, 0);
        return rc;
    }
    if (!strcmp(o->format, "svg") && draw_refused("--format svg", t->n_ops)) return -1;
    if (!strcmp(o->format, "trace") && draw_refused("--format trace", t->n_ops)) return -1;
    if (!strcmp(o->format, "csv")) rc = ipup_sched_write_csv(t, file_write, stdout);
    else if (!strcmp(o->format, "json") && o->memory) rc = print_memory(o, t, 1);
    else if (!strcmp(o->format, "json")) rc = ipup_sched_write_json(t, fg, name, warnings, file_write, stdout);
    else if (!strcmp(o->format, "trace")) rc = write_trace(o, t);
    else rc = write_svg(o, t, fg, name, file_write, stdout);
    if (rc) return -1;
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
    c.stage_device = o->nmap && !o->cmap.concurrent ? o->map : NULL;
    c.concurrent = o->cmap.concurrent ? &o->cmap : NULL;
    c.strict = o->strict;
    c.popxl = o->popxl; /* PopXL's rule M >= 2 x its pipeline stages */
    c.forward_only = o->forward_only;
    if (mem_alloc(&m, o->stages, o->microbatches, IPUP_SCHED_MAX_OPS(ipup_sched_map_lanes(&o->cmap), o->microbatches))) {
        fprintf(stderr, "ipupipe-sched: out of memory\n");
        return 2;
    }
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

/* Opens path for reading: a regular file only (a FIFO would block, a directory reads
 * as nothing); -1 with why (cap bytes) saying what it is instead. */
static int open_regular(const char *path, char *why, size_t cap) {
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        ipup_snprintf(why, cap, "%s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ipup_snprintf(why, cap, "it is %s, not a schedule CSV file (give the path of a regular file)",
                      S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                      : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "not a regular file");
        close(fd);
        return -1;
    }
    return fd;
}

/* The whole file (malloc'd; a UTF-8 byte order mark at its start dropped), or NULL
 * with why (cap bytes) saying why not. */
static char *read_file(const char *path, size_t *len, char *why, size_t cap_why) {
    int fd = open_regular(path, why, cap_why);
    char *b;
    size_t cap = 1 << 16, n = 0;
    if (fd < 0) return NULL;
    b = (char *)malloc(cap);
    for (;;) {
        ssize_t r;
        if (b && n == cap) {
            char *nb = cap < TOOL_MAX_FILE ? (char *)realloc(b, cap * 2) : NULL;
            if (!nb) free(b);
            b = nb;
            cap *= 2;
        }
        if (!b) { /* too large (limit 256 MiB) or out of memory */
            ipup_snprintf(why, cap_why, "too large (limit 256 MiB) or out of memory");
            close(fd);
            return NULL;
        }
        r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            ipup_snprintf(why, cap_why, "%s", strerror(errno));
            free(b);
            close(fd);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n >= 3 && (unsigned char)b[0] == 0xEF && (unsigned char)b[1] == 0xBB && (unsigned char)b[2] == 0xBF) {
        memmove(b, b + 3, n - 3);
        n -= 3;
    }
    *len = n;
    return b;
}

static int run_check(const opts *o) {
    size_t len = 0;
    char why[200], *text = read_file(o->check, &len, why, sizeof why), msg[4096], name[300];
    int32_t S, M, P, n;
    tool_mem m;
    ipup_table t;
    ipup_sched_verify_info vi;
    ipup_sched_figures *fg;
    int64_t act[IPUP_SCHED_MAX_STAGES];
    int rc;
    if (!text) {
        fprintf(stderr, "ipupipe-sched: cannot read '%s': %s\n", o->check, why);
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
    t.dual = o->dual; /* a CSV cannot say it holds two model copies (docs/schedules.md §3) */
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
        if (!o->dual && vi.rule == 1 && vi.step < 0)
            printf("hint: if the table is DualPipe's (two model copies, each micro-batch on half the stages), try --dual\n");
        mem_free(&m);
        return 1;
    }
    fg = (ipup_sched_figures *)malloc(sizeof *fg);
    if (!fg) { mem_free(&m); return 2; }
    fill_act(o, S, act);
    ipup_sched_measure(&t, &o->cost, act, m.work, m.work_bytes, fg);
    ipup_snprintf(name, sizeof name, "csv:%.250s%s%s", o->check, o->respace ? " (respaced)" : "", o->dual ? " (dual)" : "");
    if (!strcmp(o->format, "grid") && !o->quiet) printf("VALID %s\n", o->check);
    rc = emit(o, &t, fg, name, "");
    free(fg);
    mem_free(&m);
    return rc ? 2 : 0;
}

/* ---- --compare like for like: every row on the same P devices ----
   A schedule that runs several stages per device (chunks, virtual stages) runs
   stages_per_device x P stages, each at 1/stages_per_device of a one-stage-per-device
   stage's cost (and activations); the others run P stages. When -S differs from P every
   stage's cost is scaled so that each row does the same work: S x (F + B) per micro-batch. */
static int stages_per_device(int kind) {
    switch (kind) {
    case IPUP_SCHED_INTERLEAVED_1F1B: return 2;
    case IPUP_SCHED_ZBV: case IPUP_SCHED_VMIN: case IPUP_SCHED_VHALF:
    case IPUP_SCHED_LOOPED_BFS: case IPUP_SCHED_INTERLEAVED_ZB: case IPUP_SCHED_DUALPIPE_V: return 2;
    case IPUP_SCHED_DUALPIPE: return 2; /* one stage of each model copy: see copy_stages */
    default: return 1;
    }
}

typedef struct cmp_row {
    int kind, per_device;
    int32_t stages, devices; /* of the table generated */
    double scale[IPUP_SCHED_MAX_STAGES];
    ipup_sched_cost cost;    /* o->cost with the stage scale */
    int64_t act[IPUP_SCHED_MAX_STAGES];
    int have_act;
} cmp_row;

/* the devices every row of --compare runs on */
static int compare_devices(const opts *o) {
    int s, P = 0;
    if (o->devices) return o->devices;
    if (!o->nmap) return o->stages;
    for (s = 0; s < o->nmap; s++)
        if (o->map[s] + 1 > P) P = o->map[s] + 1;
    return P;
}

/* one schedule of --compare: its table, cost and figures (1 when it cannot be generated: why in msg) */
static int compare_one_row(const opts *o, int k, tool_mem *m, ipup_table *t, ipup_sched_figures *fg, cmp_row *r, char *msg,
                           size_t len) {
    ipup_sched_config c;
    int P = compare_devices(o), s, copy_stages;
    int64_t total = 0;
    memset(&c, 0, sizeof c);
    memset(r, 0, sizeof *r);
    r->kind = k;
    r->per_device = stages_per_device(k);
    c.kind = (ipup_sched_kind)k;
    c.microbatches = o->microbatches;
    c.strict = o->strict;
    c.forward_only = o->forward_only;
    if (o->nmap && r->per_device == 1) { /* the mapping given, as before */
        c.stages = o->stages;
        c.devices = o->devices;
        c.stage_device = o->map;
        c.virtual_stages = o->virt;
    } else {
        c.stages = r->per_device * P;
        c.devices = P;
        c.virtual_stages = r->per_device > 1 ? r->per_device : 0;
    }
    if (c.stages > IPUP_SCHED_MAX_STAGES) {
        ipup_snprintf(msg, len, "%d stages on %d devices is more than %d stages", (int)c.stages, P, IPUP_SCHED_MAX_STAGES);
        return 1;
    }
    r->stages = c.stages;
    r->devices = P;
    r->cost = o->cost;
    /* dualpipe: each of its 2P stages is 1/P of a model copy, and a micro-batch runs P */
    copy_stages = k == IPUP_SCHED_DUALPIPE ? c.stages / 2 : c.stages;
    for (s = 0; s < c.stages; s++) r->scale[s] = (double)o->stages / (double)copy_stages;
    r->cost.stage_scale = r->scale;
    if (ipup_sched_generate(&c, m->ops, m->cap, t, msg, len)) {
        char *nl = strchr(msg, '\n');
        if (nl) *nl = '\0';
        return 1;
    }
    if (o->nact) { /* the model's activations, shared evenly by the stages of this table */
        for (s = 0; s < o->stages; s++) total += o->nact == 1 ? o->act[0] : o->act[s];
        for (s = 0; s < c.stages; s++) r->act[s] = total / copy_stages;
        r->have_act = 1;
    }
    ipup_sched_measure(t, &r->cost, r->have_act ? r->act : NULL, m->work, m->work_bytes, fg);
    return 0;
}
static int compare_one(const opts *o, int k, tool_mem *m, ipup_table *t, ipup_sched_figures *fg, char *msg, size_t len) {
    static cmp_row r;
    return compare_one_row(o, k, m, t, fg, &r, msg, len);
}

/* the note under --compare's header: the devices, and the rows with several stages per device */
static void compare_note(const opts *o) {
    int k, P = compare_devices(o), any = 0;
    printf("like for like: every row on P=%d devices", P);
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) {
        if (stages_per_device(k) == 1 || k == IPUP_SCHED_DUALPIPE) continue;
        printf("%s%s", any ? ", " : "; ", ipup_sched_kind_name((ipup_sched_kind)k));
        any = 1;
    }
    if (any) printf(" on %d stages (2 per device), each stage at 1/2 the cost", 2 * P);
    printf("; dualpipe: two model copies (parameters 2x) on %d stages, each stage 1/%d of a copy at the full cost", 2 * P, P);
    if (o->stages != P) printf("; the %d stages' work spread evenly over each row's stages", o->stages);
    printf("\n");
}

/* one row of --compare --forward-only: latency, throughput, in-flight inputs */
static void compare_row_fwd(const opts *o, const char *name, const ipup_table *t, const ipup_sched_figures *fg) {
    int s;
    if (!strcmp(o->format, "csv"))
        printf("%s,%d,%d,%.6g,%.6g,%.6g,%d,%.6g,%lld,", name, (int)t->devices, (int)t->steps, fg->bsp_time, fg->async_time, fg->fwd_latency,
               (int)fg->fwd_latency_steps, fg->fwd_throughput, (long long)fg->stash_total);
    else {
        printf("%-17s %3d %6d %9.6g %9.6g %8.6g %6d %10.6g  ", name, (int)t->devices, (int)t->steps, fg->bsp_time, fg->async_time,
               fg->fwd_latency, (int)fg->fwd_latency_steps, fg->fwd_throughput);
        if (o->nact) printf("%12lld  ", (long long)fg->stash_total);
    }
    for (s = 0; s < t->stages; s++) printf("%s%d", s ? (strcmp(o->format, "csv") ? "," : " ") : "", (int)fg->peak_inflight[s]);
    printf("\n");
}
static void compare_header_fwd(const opts *o) {
    if (!strcmp(o->format, "csv")) {
        printf("schedule,devices,steps,bsp_time,async_time,latency,latency_steps,throughput,inflight_bytes_total,inflight\n");
        return;
    }
    printf("forward only (inference)  S=%d M=%d  cost F=%g exchange=%g sync=%g\n", o->stages, o->microbatches, o->cost.f, o->cost.exchange,
           o->cost.sync);
    compare_note(o);
    printf("%-17s %3s %6s %9s %9s %8s %6s %10s  %s%s\n", "schedule", "P", "steps", "BSP time", "async", "latency", "steps", "throughput",
           o->nact ? "bytes in flight  " : "", "in-flight inputs per stage");
}

static void compare_row(const opts *o, int k, const ipup_table *t, const ipup_sched_figures *fg) {
    int s;
    const char *name = ipup_sched_kind_name((ipup_sched_kind)k);
    if (t->forward_only) { compare_row_fwd(o, name, t, fg); return; }
    if (!strcmp(o->format, "csv")) {
        printf("%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%d,%s,%lld,", name, (int)t->devices, (int)t->steps, fg->bsp_time, fg->bubble_bsp,
               fg->async_time, fg->bubble_async, (int)fg->first_mb_done, fg->in_order ? "yes" : "no", (long long)fg->stash_total);
        for (s = 0; s < t->stages; s++) printf("%s%d", s ? " " : "", (int)fg->peak_inflight[s]);
        printf("\n");
        return;
    }
    printf("%-17s %3d %6d %9.6g %7.4f %9.6g %7.4f %6d %5s  ", name, (int)t->devices, (int)t->steps, fg->bsp_time, fg->bubble_bsp,
           fg->async_time, fg->bubble_async, (int)fg->first_mb_done, fg->in_order ? "yes" : "no");
    if (o->nact) printf("%12lld  ", (long long)fg->stash_total);
    for (s = 0; s < t->stages; s++) printf("%s%d", s ? "," : "", (int)fg->peak_inflight[s]);
    printf("\n");
}

/* --compare --format svg: small multiples on a 16:9 slide, 1600 x 900 px, text 14 px and
   more: one chart per schedule in a grid (1, 2 or 3 columns), all on one time scale (the
   slowest row fits its cell), one legend under them. The cells are nested <svg> elements. */
#define CMP_W 1600.0
#define CMP_H 900.0
#define CMP_TOP 34.0
#define CMP_LEGEND 30.0
static void compare_svg_legend(double y, int overlap) {
    static const char *const names[8] = {"forward F", "backward B", "input grad I", "weight grad W", "update U", "idle",
                                         "lighter: 2nd stage on a device, label stage:mb", "hatched: F&amp;B overlapped"};
    /* the hatch pattern is defined by the chart that has overlapped cells */
    static const char *const fills[8] = {"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#dddddd", "#a0cbe8",
                                         "url(#ipup-hatch)"};
    double x = 8.0;
    int k;
    for (k = 0; k < (overlap ? 8 : 7); k++) {
        printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#999\" stroke-width=\"0.5\"/>"
               "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, y, fills[k], x + 18.0, y + 12.0, names[k]);
        x += 18.0 + 8.4 * (double)(strlen(names[k]) - (k == 7 ? 4 : 0)) + 16.0; /* "&amp;" is one */
    }
}

static int compare_svg(const opts *o, tool_mem *m, ipup_sched_figures *fg) {
    static cmp_row r;
    static opts oc;
    ipup_buf b[IPUP_SCHED_KIND_COUNT];
    double longest = 1.0, cell_w, cell_h, unit, row_h;
    int k, n = 0, cols, rows, at = 0, P = compare_devices(o), rc = 0, overlap = 0;
    int32_t i;
    long long ops = 0;
    memset(b, 0, sizeof b);
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) { /* the ops and the longest time, before drawing */
        ipup_table t;
        char msg[2048];
        double tm;
        if (compare_one_row(o, k, m, &t, fg, &r, msg, sizeof msg)) continue;
        ops += t.n_ops;
        tm = o->timing == IPUP_SCHED_TIMING_BSP ? fg->bsp_time : fg->async_time;
        if (tm > longest) longest = tm;
        n++;
    }
    if (draw_refused("--compare --format svg (one chart per schedule)", ops)) return 2;
    if (n == 0) { fprintf(stderr, "ipupipe-sched: --compare: no schedule takes these sizes\n"); return 2; }
    cols = n <= 3 ? 1 : n <= 8 ? 2 : n <= 12 ? 3 : 4;
    rows = (n + cols - 1) / cols;
    cell_w = (CMP_W - 8.0) / cols;
    cell_h = (CMP_H - CMP_TOP - CMP_LEGEND) / rows;
    unit = (cell_w - 8.0 - 56.0 - 16.0) / (longest + 1.0);
    /* a cell: title 32, the gap or the step numbers, the rows, the axis 24, margins 16 */
    row_h = (cell_h - 32.0 - (o->timing == IPUP_SCHED_TIMING_BSP ? 40.0 : 6.0) - 24.0 - 16.0) / P;
    if (row_h > 30.0) row_h = 30.0;
    if (row_h < 16.0) {
        fprintf(stderr, "ipupipe-sched: --compare --format svg: %d devices do not fit a 1600 x 900 slide with %d charts "
                        "(rows under 16 px); use fewer devices, or --format svg for one schedule\n", P, n);
        return 2;
    }
    printf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"monospace\" font-size=\"14\">\n"
           "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", CMP_W, CMP_H);
    printf("<text x=\"8\" y=\"24\" font-size=\"18\" font-weight=\"bold\">S=%d M=%d on P=%d devices, cost F=%g B=%g I=%g W=%g: "
           "%s time, one scale; *: %d stages, 2 per device, each at 1/2 the cost</text>\n", o->stages, o->microbatches, P,
           o->cost.f, o->cost.b, o->cost.i, o->cost.w, o->timing == IPUP_SCHED_TIMING_BSP ? "BSP (lock-step)" : "async (dataflow)",
           2 * P);
    for (k = 0; k < IPUP_SCHED_KIND_COUNT && !rc; k++) {
        ipup_table t;
        ipup_sched_svg_opts so;
        char msg[2048], title[160];
        if (compare_one_row(o, k, m, &t, fg, &r, msg, sizeof msg)) continue;
        oc = *o;
        oc.cost = r.cost;
        oc.memory = 0;
        if (r.have_act) { oc.nact = r.stages; memcpy(oc.act, r.act, sizeof r.act); }
        else oc.nact = 0;
        memset(&so, 0, sizeof so);
        /* *: 2 stages per device at 1/2 the cost (the header says so); dualpipe's stages are
           each a part of one of its two model copies, at the full cost */
        ipup_snprintf(title, sizeof title, "%s%s", ipup_sched_kind_name((ipup_sched_kind)k),
                      k == IPUP_SCHED_DUALPIPE ? " (2 copies)" : r.per_device > 1 ? "*" : "");
        for (i = 0; i < t.n_ops; i++) overlap |= t.ops[i].overlap_index > 0;
        ipup_snprintf(title + strlen(title), sizeof title - strlen(title), ": %.4g, bubble %.2f",
                      o->timing == IPUP_SCHED_TIMING_BSP ? fg->bsp_time : fg->async_time,
                      o->timing == IPUP_SCHED_TIMING_BSP ? fg->bubble_bsp : fg->bubble_async);
        so.title = title;
        so.width = cell_w - 8.0;
        so.unit = unit;
        so.row_height = row_h;
        so.no_legend = 1;
        b[k].cap = 0; /* the size first, then the picture */
        write_svg_with(&oc, &t, fg, &so, ipup_buf_write, &b[k]);
        b[k].cap = b[k].len + 1;
        b[k].len = 0;
        b[k].buf = (char *)malloc(b[k].cap);
        if (!b[k].buf) { rc = 2; break; }
        if (write_svg_with(&oc, &t, fg, &so, ipup_buf_write, &b[k])) { rc = 2; break; }
        printf("<svg x=\"%.0f\" y=\"%.0f\" %s", 4.0 + cell_w * (at % cols), CMP_TOP + cell_h * (at / cols),
               b[k].buf + 5); /* "<svg " replaced by one with its place */
        at++;
    }
    compare_svg_legend(CMP_H - CMP_LEGEND + 6.0, overlap);
    printf("</svg>\n");
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) free(b[k].buf);
    return rc;
}

/* ---- --compare with concurrent stages: the mapping against its serialised form ---- */

/* one of the two: the concurrent mapping (ser 0) or its serialised form (ser 1), with
   the stage's --act-bytes on each of its branches */
static int conc_one(const opts *o, int ser, tool_mem *m, ipup_table *t, ipup_sched_figures *fg, char *msg, size_t len) {
    ipup_sched_config c;
    int16_t map[IPUP_SCHED_MAX_STAGES];
    int64_t act[IPUP_SCHED_MAX_STAGES], a[IPUP_SCHED_MAX_STAGES];
    int s, b, n = 0;
    memset(&c, 0, sizeof c);
    c.kind = o->kind;
    c.microbatches = o->microbatches;
    c.devices = o->devices;
    c.strict = o->strict;
    fill_act(o, o->stages, a);
    if (ser) {
        c.stages = ipup_sched_map_serialised(&o->cmap, map, IPUP_SCHED_MAX_STAGES);
        if (c.stages < 1) { ipup_snprintf(msg, len, "the serialised mapping has more than %d stages", IPUP_SCHED_MAX_STAGES); return 1; }
        c.stage_device = map;
        for (s = 0; s < o->stages; s++)
            for (b = 0; b < o->cmap.n_dev[s]; b++) act[n++] = a[s];
    } else {
        c.stages = o->stages;
        c.concurrent = &o->cmap;
        memcpy(act, a, sizeof act);
    }
    if (ipup_sched_generate(&c, m->ops, m->cap, t, msg, len)) return 1;
    ipup_sched_measure(t, &o->cost, act, m->work, m->work_bytes, fg);
    return 0;
}

static void conc_row(const opts *o, const char *name, const ipup_table *t, const ipup_sched_figures *fg) {
    int d;
    const int csv = !strcmp(o->format, "csv");
    if (csv)
        printf("%s,%d,%d,%d,%.6g,%.6g,%d,%d,%lld,", name, (int)t->stages, (int)t->devices, (int)t->steps, fg->bsp_time, fg->async_time,
               (int)fg->first_mb_done, (int)fg->inflight_total, (long long)fg->stash_total);
    else
        printf("%-11s %3d %3d %6d %9.6g %9.6g %6d %7d %12lld  ", name, (int)t->stages, (int)t->devices, (int)t->steps, fg->bsp_time,
               fg->async_time, (int)fg->first_mb_done, (int)fg->inflight_total, (long long)fg->stash_total);
    for (d = 0; d < t->devices; d++) printf("%s%d", d ? (csv ? " " : ",") : "", (int)fg->peak_inflight_device[d]);
    printf("\n");
}

/* the two charts stacked in one picture (nested <svg> elements, as compare_svg) */
static int conc_svg(const opts *o, tool_mem *m, ipup_sched_figures *fg) {
    static const char *const names[2] = {"concurrent", "serialised"};
    ipup_buf b[2];
    double w[2] = {0.0, 0.0}, h[2] = {0.0, 0.0}, W = 0.0, y = 0.0;
    int k, rc = 0;
    long long ops = 0;
    memset(b, 0, sizeof b);
    for (k = 0; k < 2; k++) { /* the ops of the picture, before drawing it */
        ipup_table t;
        char msg[2048];
        if (!conc_one(o, k, m, &t, fg, msg, sizeof msg)) ops += t.n_ops;
    }
    if (draw_refused("--compare --format svg (the concurrent and the serialised chart)", ops)) return 2;
    for (k = 0; k < 2 && !rc; k++) {
        ipup_table t;
        char msg[2048];
        if (conc_one(o, k, m, &t, fg, msg, sizeof msg)) { fprintf(stderr, "ipupipe-sched: %s: %s\n", names[k], msg); rc = 2; break; }
        b[k].cap = 0;
        write_svg(o, &t, fg, names[k], ipup_buf_write, &b[k]); /* the size first */
        b[k].cap = b[k].len + 1;
        b[k].len = 0;
        b[k].buf = (char *)malloc(b[k].cap);
        if (!b[k].buf) { rc = 2; break; }
        write_svg(o, &t, fg, names[k], ipup_buf_write, &b[k]);
        if (sscanf(b[k].buf, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lf\" height=\"%lf\"", &w[k], &h[k]) != 2) rc = 2;
        if (w[k] > W) W = w[k];
    }
    if (!rc) {
        printf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", W, h[0] + h[1]);
        for (k = 0; k < 2; k++) {
            printf("<svg y=\"%.0f\" %s", y, b[k].buf + 5); /* "<svg " replaced by one with its y */
            y += h[k];
        }
        printf("</svg>\n");
    }
    free(b[0].buf);
    free(b[1].buf);
    return rc;
}

/* --compare --map with brackets: the concurrent pipeline and the serialised one (each
   branch a stage of its own), for the one schedule of --schedule */
static int run_compare_concurrent(const opts *o) {
    static const char *const names[2] = {"concurrent", "serialised"};
    tool_mem m;
    ipup_table t;
    char msg[2048];
    int ser, rc = 0, lanes = ipup_sched_map_lanes(&o->cmap);
    ipup_sched_figures *fg = (ipup_sched_figures *)malloc(sizeof *fg);
    if (!fg || mem_alloc(&m, lanes, o->microbatches, 0)) { fprintf(stderr, "ipupipe-sched: out of memory\n"); free(fg); return 2; }
    if (!strcmp(o->format, "json")) printf("[");
    else if (!strcmp(o->format, "csv"))
        printf("mapping,stages,devices,steps,bsp_time,async_time,first_mb_done,activations_stored,stash_bytes_total,peak_inflight_device\n");
    else if (strcmp(o->format, "svg")) {
        printf("%s  S=%d M=%d  concurrent stages against the serialised mapping  cost F=%g B=%g\n", ipup_sched_kind_name(o->kind),
               o->stages, o->microbatches, o->cost.f, o->cost.b);
        printf("%-11s %3s %3s %6s %9s %9s %6s %7s %12s  %s\n", "mapping", "S", "P", "steps", "BSP time", "async", "1st mb", "stored",
               "stash bytes", "peak in-flight per device");
    }
    if (!strcmp(o->format, "svg")) {
        rc = conc_svg(o, &m, fg);
        free(fg);
        mem_free(&m);
        return rc;
    }
    for (ser = 0; ser < 2; ser++) {
        if (conc_one(o, ser, &m, &t, fg, msg, sizeof msg)) {
            fprintf(stderr, "ipupipe-sched: %s: %s\n", names[ser], msg);
            rc = 2;
            break;
        }
        if (!strcmp(o->format, "json")) {
            printf("%s", ser ? ",\n" : "\n");
            ipup_sched_write_json(&t, fg, names[ser], msg, file_write, stdout);
        } else conc_row(o, names[ser], &t, fg);
    }
    if (!strcmp(o->format, "json")) printf("]\n");
    free(fg);
    mem_free(&m);
    return rc;
}

/* ---- --paper: the tables of the Zero Bubble paper and of the DualPipe repository ----
   Each row: the schedule, its name there, the bubble stated there (idle time per device, a
   formula of P and the costs), and the activation memory stated there (the most a device
   holds, in units of one micro-batch's activations of 1/P of the model: M_B in the paper,
   "PP" in the repository). Measured: bubble = async time - work / P (ipup_sched_measure), the
   memory = the largest ipup_sched_figures.stash_bytes_device, a chunk holding 1/2. Costs:
   the tool's --cost, by default F=1 B=2 I=W=1, the setting both assume (the paper's
   T_F = T_B = T_W; the repository's F&B taken as F + B, no overlap gain). */
typedef struct paper_row {
    const char *label;
    int kind;
    const char *bubble_text;
    double (*bubble)(int P, const ipup_sched_cost *c);
    const char *memory_text;
    double (*memory)(int P);
} paper_row;
/* B is the full backward (I + W) */
static double paper_bubble_1f1b(int P, const ipup_sched_cost *c) { return (P - 1) * (c->f + c->b); }
/* the paper's (p-1)(T_F + T_B - T_W) with its T_B the input gradient I; = (PP-1)(F+B-2W) */
static double paper_bubble_zbh1(int P, const ipup_sched_cost *c) { return (P - 1) * (c->f + c->i - c->w); }
static double paper_memory_p(int P) { return P; }
/* ZB-H2 and ZB-V: (p-1)(T_F + T_B - 2 T_W), T_B the input gradient I (0 when F = I = W) */
static double paper_bubble_zbh2(int P, const ipup_sched_cost *c) { return (P - 1) * (c->f + c->i - 2.0 * c->w); }
static double paper_memory_2p_1(int P) { return 2.0 * P - 1.0; }
/* the repository's (PP/2-1)(F&B+B-3W), F&B = F + B (no overlap gain) */
static double paper_bubble_dualpipe(int P, const ipup_sched_cost *c) { return (P / 2 - 1) * (c->f + 2 * c->b - 3 * c->w); }
static double paper_memory_p_1(int P) { return P + 1; }
/* Zero Bubble Pipeline Parallelism (Qi, Wan, Huang, Lin; ICLR 2024), §3 and Table 1 */
static const paper_row paper_zb[] = {
    {"1F1B", IPUP_SCHED_1F1B, "(p-1)(F+I+W)", paper_bubble_1f1b, "p", paper_memory_p},
    {"ZB-H1", IPUP_SCHED_ZBH1, "(p-1)(F+I-W)", paper_bubble_zbh1, "p", paper_memory_p},
    {"ZB-H2", IPUP_SCHED_ZBH2, "(p-1)(F+I-2W)", paper_bubble_zbh2, "2p-1", paper_memory_2p_1},
    {"ZB-V", IPUP_SCHED_ZBV, "(p-1)(F+I-2W)", paper_bubble_zbh2, "p", paper_memory_p},
};
/* deepseek-ai/DualPipe, README.md, "Pipeline Bubbles and Memory Usage Comparison" */
static const paper_row paper_dualpipe[] = {
    {"1F1B", IPUP_SCHED_1F1B, "(PP-1)(F+B)", paper_bubble_1f1b, "PP", paper_memory_p},
    {"ZB1P", IPUP_SCHED_ZBH1, "(PP-1)(F+B-2W)", paper_bubble_zbh1, "PP", paper_memory_p},
    /* F&B = F + B; DualPipe's stages each 1/PP of a model copy (parameters 2x), DualPipeV's
       chunks 1/2PP of the model, at half the cost */
    {"DualPipe", IPUP_SCHED_DUALPIPE, "(PP/2-1)(F&B+B-3W)", paper_bubble_dualpipe, "PP+1", paper_memory_p_1},
    {"DualPipeV", IPUP_SCHED_DUALPIPE_V, "(PP/2-1)(F&B+B-3W)", paper_bubble_dualpipe, "PP+1", paper_memory_p_1},
};

/* The most idle time any device has between the start of its first op and the end of its
   last, async: the bubble of a device whose iterations follow each other without a gap (the
   paper's steady state, where the optimizer step's post-validation lets the next iteration
   start at once), as against the makespan's bubble. -1 when the times cannot be computed. */
static double paper_span_idle(const ipup_table *t, const ipup_sched_cost *c, tool_mem *m) {
    static double start[IPUP_SCHED_MAX_OPS(64, 256)];
    double first[IPUP_SCHED_MAX_STAGES], last[IPUP_SCHED_MAX_STAGES], busy[IPUP_SCHED_MAX_STAGES], worst = 0.0;
    int32_t i, d;
    if (t->n_ops > (int32_t)(sizeof start / sizeof start[0]) ||
        ipup_sched_op_times(t, c, IPUP_SCHED_TIMING_ASYNC, m->work, m->work_bytes, start))
        return -1.0;
    for (d = 0; d < t->devices; d++) {
        first[d] = -1.0;
        last[d] = busy[d] = 0.0;
    }
    for (i = 0; i < t->n_ops; i++) {
        const ipup_op *op = &t->ops[i];
        double len = ipup_sched_op_cost(c, op), end = start[i] + len;
        if (first[op->device] < 0.0 || start[i] < first[op->device]) first[op->device] = start[i];
        if (end > last[op->device]) last[op->device] = end;
        busy[op->device] += len;
    }
    for (d = 0; d < t->devices; d++)
        if (first[d] >= 0.0 && last[d] - first[d] - busy[d] > worst) worst = last[d] - first[d] - busy[d];
    return worst;
}

static int run_paper(const opts *o) {
    const int zb = !strcmp(o->paper, "zb");
    const paper_row *rows = zb ? paper_zb : paper_dualpipe;
    const int n = zb ? (int)(sizeof paper_zb / sizeof paper_zb[0]) : (int)(sizeof paper_dualpipe / sizeof paper_dualpipe[0]);
    static opts oc;
    static cmp_row r;
    ipup_sched_figures *fg = (ipup_sched_figures *)malloc(sizeof *fg);
    tool_mem m;
    int k, d, P = compare_devices(o), rc = 0;
    if (!fg || mem_alloc(&m, 2 * P > o->stages ? 2 * P : o->stages, o->microbatches, 0)) {
        fprintf(stderr, "ipupipe-sched: out of memory\n");
        free(fg);
        return 2;
    }
    oc = *o;
    oc.stages = P; /* the tables count per device: P stages of 1/P of the model */
    oc.devices = P;
    oc.nact = 1;
    oc.act[0] = 2; /* 2 per 1/P of the model: a chunk (1/2P) holds 1 */
    printf("%s\n", zb ? "Zero Bubble Pipeline Parallelism (Qi et al., ICLR 2024): bubble and activation memory"
                      : "DualPipe (deepseek-ai/DualPipe README): bubble and activation memory");
    printf("P=%d devices, M=%d micro-batches, cost F=%g B=%g I=%g W=%g (%s), async time\n", P, o->microbatches, o->cost.f, o->cost.b,
           o->cost.i, o->cost.w, zb ? "the paper's T_F = T_B = T_W: F = I = W, B = I + W" : "B the full backward = I + W; F&B = F + B");
    printf("%-10s %-18s %5s %8s %7s %7s  %-8s %s\n", "schedule", "stated bubble", "=", "measured", "rate", "in span", "stated",
           "activations (peak per device)");
    for (k = 0; k < n; k++) {
        ipup_table t;
        char msg[2048];
        double stated, measured, act = 0.0;
        if (compare_one_row(&oc, rows[k].kind, &m, &t, fg, &r, msg, sizeof msg)) {
            printf("%-10s -- %s\n", rows[k].label, msg);
            rc = 2;
            continue;
        }
        stated = rows[k].bubble(P, &o->cost);
        measured = fg->async_time - fg->work / P;
        for (d = 0; d < t.devices; d++)
            if ((double)fg->stash_bytes_device[d] / 2.0 > act) act = (double)fg->stash_bytes_device[d] / 2.0;
        printf("%-10s %-18s %5.4g %8.4g %7.4f %7.4g  %-8s %.4g (stated %g)\n", rows[k].label, rows[k].bubble_text, stated, measured,
               fg->bubble_async, paper_span_idle(&t, &r.cost, &m), rows[k].memory_text, act, rows[k].memory(P));
    }
    free(fg);
    mem_free(&m);
    return rc;
}

static int run_compare(const opts *o) {
    int k, first = 1, rc = 0;
    tool_mem m;
    if (o->paper) return run_paper(o);
    if (o->cmap.concurrent) return run_compare_concurrent(o);
    ipup_sched_figures *fg = (ipup_sched_figures *)malloc(sizeof *fg);
    int S_max = 2 * compare_devices(o) > o->stages ? 2 * compare_devices(o) : o->stages;
    if (S_max > IPUP_SCHED_MAX_STAGES) S_max = IPUP_SCHED_MAX_STAGES;
    if (!fg || mem_alloc(&m, S_max, o->microbatches, 0)) { fprintf(stderr, "ipupipe-sched: out of memory\n"); free(fg); return 2; }
    if (!strcmp(o->format, "svg")) {
        rc = compare_svg(o, &m, fg);
        free(fg);
        mem_free(&m);
        return rc ? 2 : 0;
    }
    if (!strcmp(o->format, "json")) printf("[");
    else if (o->forward_only) compare_header_fwd(o);
    else if (!strcmp(o->format, "csv"))
        printf("schedule,devices,steps,bsp_time,bubble,async_time,bubble_async,first_mb_done,in_order,stash_bytes_total,peak_inflight\n");
    else {
        printf("S=%d M=%d  cost F=%g B=%g I=%g W=%g exchange=%g sync=%g\n", o->stages, o->microbatches, o->cost.f, o->cost.b, o->cost.i,
               o->cost.w, o->cost.exchange, o->cost.sync);
        compare_note(o);
        printf("%-17s %3s %6s %9s %7s %9s %7s %6s %5s  %s%s\n", "schedule", "P", "steps", "BSP time", "bubble", "async", "bubble",
               "1st mb", "order", o->nact ? " stash bytes  " : "", "peak in-flight per stage");
    }
    for (k = 0; k < IPUP_SCHED_KIND_COUNT; k++) {
        ipup_table t;
        char msg[2048];
        if (compare_one(o, k, &m, &t, fg, msg, sizeof msg)) {
            if (!strcmp(o->format, "grid") || !strcmp(o->format, "steps"))
                printf("%-17s  -- %s\n", ipup_sched_kind_name((ipup_sched_kind)k), msg);
            else fprintf(stderr, "%s: %s\n", ipup_sched_kind_name((ipup_sched_kind)k), msg);
            continue;
        }
        if (!strcmp(o->format, "json")) {
            printf("%s", first ? "\n" : ",\n");
            if (ipup_sched_write_json(&t, fg, ipup_sched_kind_name((ipup_sched_kind)k), msg, file_write, stdout)) rc = -1;
        } else compare_row(o, k, &t, fg);
        first = 0;
    }
    if (!strcmp(o->format, "json")) printf("]\n");
    free(fg);
    mem_free(&m);
    return rc ? 2 : 0;
}

#endif /* SCHED_RUN_H */
