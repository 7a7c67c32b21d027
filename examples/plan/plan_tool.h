/* plan_tool.h - build/ipupipe-plan (examples/plan/ipupipe-plan.c is its main): the pools of
 * one pipeline configuration, and the configuration itself, as a C header of #defines, so
 * that a firmware sizes its static arrays and fills its ipup_config from one place, in
 * the same build that compiles it. MIT licence.
 *
 *   build/ipupipe-plan --model dense64,relu,dense32,relu,dense10,xent --input 1x1x196 \
 *       --splits dense32 --batch-size 8 --microbatches 4 --optimizer sgd -o pools.h
 *
 * The options are plan_options.h's (the configuration options of build/mnist-train, with
 * the same names and meaning; --help lists them). --model is one of the named models
 * (plan_models.h: the MNIST models and the MLPerf Tiny networks, their input shape unless
 * --input says otherwise, the trainer's recipe for
 * what is not given) or a model text of ipup_model_parse, which needs --input HxWxC (a
 * flat vector of N features: 1x1xN) and whose recipe is batch 1, 1 micro-batch, repeat 1,
 * SGD, schedule grouped, one stage (--splits names layer ids as ipup_model_parse gives
 * them: dense64, relu, dense32, relu_2, ...). --ipus N gives N / (IPUs of one replica)
 * replicas, the IPUs of one replica being those of the schedule (ipup_plan.devices).
 *
 * The sizes are ipup_plan_pools' (exactly what ipup_init carves), in a scratch of
 * IPUP_PLAN_SCRATCH_BYTES(S, M) bytes. The header gives, for IPU i = replica * devices +
 * device, IPUP_PLAN_IPU<i>_BYTES and IPUP_PLAN_STREAM<i>_BYTES, then IPUP_PLAN_HOST_BYTES,
 * the counts, IPUP_PLAN_MAX_* with the IPUP_MAX_* limits of ipupipe.h set to them when
 * not defined yet (include it before ipupipe.h to shrink ipup_emu to the configuration;
 * after it, the limits are checked with #error), and the configuration (pt_write_config:
 * IPUP_PLAN_MODEL_TEXT, IPUP_PLAN_INPUT_H/W/C, IPUP_PLAN_BATCH, IPUP_PLAN_MICROBATCHES,
 * IPUP_PLAN_REPEAT, IPUP_PLAN_SCHEDULE, IPUP_PLAN_SPLIT_LIST, IPUP_PLAN_MAP_TEXT,
 * IPUP_PLAN_MAP_CONCURRENT, IPUP_PLAN_STAGE_DEVICE_LIST, IPUP_PLAN_STRICT,
 * IPUP_PLAN_OPTIMIZER, IPUP_PLAN_RECOMPUTE, IPUP_PLAN_OFFLOAD, IPUP_PLAN_RECOMPUTE_STAGES,
 * IPUP_PLAN_IPU_MEMORY, IPUP_PLAN_RUNNER).
 * -o FILE writes a temporary file renamed over FILE when complete (ex_outfile.h).
 * The schedule's warnings go to stderr ("warnings:", as ipupipe-sched prints them) and
 * into the header's comment. Exit 0, 2 on a usage or configuration error, 1 when the
 * output cannot be written; every refusal prints one "ipupipe-plan: error: " line.
 *
 * Needs POSIX (_POSIX_C_SOURCE 200809L before the first include) and ipupipe.h with
 * its implementation in the same program.
 */
#ifndef PLAN_TOOL_H
#define PLAN_TOOL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ex_escape.h"
#include "ex_outfile.h"
#include "ex_stages.h"
#include "ipupipe.h"
#include "plan_models.h"
#include "plan_options.h"

typedef struct {
    pt_opts o;
    const pt_model *m;   /* the named model, or &text */
    pt_model text;       /* the recipe of a model text */
    ipup_model_desc desc;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    int n_layers;                             /* layers that are not activations */
    int32_t layer_first[IPUP_MAX_LAYERS + 1]; /* desc index of each of them */
    int n_stages;
    int32_t stage_first[PT_MAX_STAGES + 1];   /* desc index of each stage's first layer */
    int16_t map[PT_MAX_STAGES];               /* --map: the IPU of each stage (plain mapping) */
    int n_map;                                /* 0: the schedule's own mapping */
    ipup_stage_map cmap;                      /* --map as parsed */
    ipup_config cfg;
    ipup_plan plan;
    char warn[IPUP_MSG_MAX]; /* the schedule's warnings (ipup_plan_pools' msg) */
} pt_tool;

/* The ids of the layers that are not activations (all = 0) or of every layer (all = 1),
 * ", "-separated, into buf. */
static void pt_layer_ids(const pt_tool *t, int all, char *buf, size_t cap) {
    int i, n = all ? t->desc.n_layers : t->n_layers;
    size_t k = 0;
    buf[0] = 0;
    for (i = 0; i < n && k + 1 < cap; i++)
        k += (size_t)ipup_snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", t->desc.layers[all ? i : t->layer_first[i]].id);
}

/* --splits auto: the library's balance of the emulator's cost over the layers
 * (ipup_balance_stages) into --stages stages. 0, or 2 after a message. */
static int pt_auto_stages(pt_tool *t) {
    int32_t split[PT_MAX_STAGES];
    char ids[512], msg[256];
    int s, rc;
    if (t->o.stages > t->desc.n_layers) {
        pt_layer_ids(t, 1, ids, sizeof ids);
        return pt_err("--splits auto: %d stages but the model has only %d layers (%s); give a smaller --stages",
                      t->o.stages, t->desc.n_layers, ids);
    }
    if ((rc = ipup_balance_stages(&t->desc, t->o.stages, split, msg, sizeof msg)) != IPUP_OK)
        return pt_err("--splits auto: %s (%s)", msg, ipup_result_str(rc));
    t->n_stages = t->o.stages;
    t->stage_first[0] = 0;
    for (s = 1; s < t->n_stages; s++) t->stage_first[s] = split[s - 1];
    t->stage_first[t->n_stages] = t->desc.n_layers;
    return 0;
}

/* The stage boundaries of --splits (or the model's default), by the trainer's rules
 * (examples/common/ex_stages.h). 0, or 2 after a message. */
static int pt_stages(pt_tool *t) {
    char ids[512], msg[EX_STAGES_MSG];
    if (t->o.splits_auto) return pt_auto_stages(t);
    pt_layer_ids(t, t->m == &t->text, ids, sizeof ids);
    if (ex_split_stages(&t->desc, t->o.splits_given ? t->o.splits : NULL, t->o.n_splits, t->m->splits,
                        PT_MAX_STAGES, t->m->name, ids, t->stage_first, &t->n_stages, msg, sizeof msg))
        return pt_err("%s", msg);
    return 0;
}

/* --map "0,1,0" or "0,[1,2],2,3" (ipup_sched_map_parse): one entry per stage, each IPU
 * in 0..IPUP_MAX_DEVICES-1. 0, or 2 after a message. */
static int pt_parse_map(pt_tool *t) {
    char msg[EX_STAGES_MSG];
    if (!t->o.map) return 0;
    if (ex_stage_map(t->o.map, t->n_stages, &t->cmap, t->map, &t->n_map, msg, sizeof msg)) return pt_err("%s", msg);
    return 0;
}

/* The model: a named one (its ids and input shape) or a model text (needs --input);
 * --input, when given, is the input shape. 0, or 2 after a message. */
static int pt_model_setup(pt_tool *t) {
    const char *model = t->o.model;
    char msg[256];
    t->m = pt_model_find(model);
    if (!t->m) {
        t->text = pt_text_model;
        t->text.layers = model;
        t->m = &t->text;
    }
    memset(&t->desc, 0, sizeof t->desc);
    if (ipup_model_parse(t->m->layers, &t->desc, msg, sizeof msg) != IPUP_OK) {
        if (t->m != &t->text) return pt_err("model %s: %s", model, msg);
        return pt_err("--model: '%s' is neither mlp, cnn nor mlp-gelu, nor a model text: %s", model, msg);
    }
    if (t->m->ids) mnt_layer_ids(&t->desc, t->m->ids);
    if (t->m == &t->text && !t->o.input)
        return pt_err("--model %s: a model text needs --input HxWxC (the shape of one sample, e.g. 1x1x64)", model);
    t->desc.in_h = t->o.input ? t->o.in_h : t->m->in_h;
    t->desc.in_w = t->o.input ? t->o.in_w : t->m->in_w;
    t->desc.in_c = t->o.input ? t->o.in_c : t->m->in_c;
    if (ipup_model_info(&t->desc, t->info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK) {
        if (!t->o.input) return pt_err("model %s: %s", model, msg);
        return pt_err("--model %s on --input %s: %s", model, t->o.input, msg);
    }
    return 0;
}

/* The configuration: the model, its stages and mapping, the recipe for every option
 * not given, then ipup_config (pools are the plan's). 0, or 2 after a message. */
static int pt_configure(pt_tool *t) {
    pt_opts *o = &t->o;
    ipup_config *c = &t->cfg;
    ipup_sched_kind sched;
    ipup_runner_kind runner;
    int32_t l, n = 0;
    if (pt_model_setup(t)) return 2;
    for (l = 0; l < t->desc.n_layers; l++)
        if (l == 0 || !mnt_is_activation(t->desc.layers[l].kind)) t->layer_first[n++] = l;
    t->layer_first[n] = t->desc.n_layers;
    t->n_layers = (int)n;
    if (pt_stages(t) || pt_parse_map(t)) return 2;
    if (!o->schedule) o->schedule = t->m->schedule;
    if (!o->runner) o->runner = "coop";
    if (ipup_sched_kind_parse(o->schedule, &sched) != IPUP_OK)
        return pt_err("--schedule: unknown '%s' (grouped, interleaved, sequential, gpipe, 1f1b, interleaved-1f1b, zb-h1)",
                      o->schedule);
    if (ipup_runner_parse(o->runner, &runner) != IPUP_OK) return pt_err("--runner: unknown '%s' (coop or threads)", o->runner);
    memset(c, 0, sizeof *c);
    c->model = &t->desc;
    c->stages = t->n_stages;
    c->split = t->n_stages > 1 ? &t->stage_first[1] : NULL;
    c->stage_device = t->n_map && !t->cmap.concurrent ? t->map : NULL;
    c->concurrent = t->n_map && t->cmap.concurrent ? &t->cmap : NULL;
    c->schedule = sched;
    c->strict = o->strict;
    c->microbatch = o->batch ? o->batch : t->m->batch;
    c->microbatches = o->microbatches ? o->microbatches : t->m->microbatches;
    c->repeat = o->repeat ? o->repeat : t->m->repeat;
    c->replicas = o->replicas && !o->ipus ? o->replicas : 1;
    c->opt.kind = o->optimizer_given ? o->optimizer : t->m->optimizer;
    c->recompute = o->recompute;
    c->offload = o->offload;
    c->recompute_stages = o->recompute_stages;
    c->ipu_bytes = o->ipu_memory;
    c->runner = runner;
    c->dtype = o->dtype;
    c->fp32_weights = o->fp32_weights;
    c->accum_dtype = o->accum_dtype;
    c->opt.first_moment_dtype = o->first_moment_dtype;
    c->loss_scale = o->loss_scale;
    c->loss_scale_dynamic = o->loss_dynamic;
    return 0;
}

/* ipup_plan_pools in a scratch of exactly IPUP_PLAN_SCRATCH_BYTES(S, M), S counting each
 * branch of a concurrent stage; 0, or 2. */
static int pt_plan_once(pt_tool *t) {
    /* a concurrent stage's table has ops per branch: its stages are counted per branch */
    int32_t lanes = t->cfg.concurrent ? ipup_sched_map_lanes(t->cfg.concurrent) : t->cfg.stages;
    size_t bytes = IPUP_PLAN_SCRATCH_BYTES((size_t)(lanes > t->cfg.stages ? lanes : t->cfg.stages),
                                           (size_t)t->cfg.microbatches);
    void *scratch = malloc(bytes);
    int rc;
    if (!scratch) return pt_err("out of host memory: %zu bytes of plan scratch", bytes);
    rc = ipup_plan_pools(&t->cfg, &t->plan, scratch, bytes, t->warn, sizeof t->warn);
    free(scratch);
    if (rc != IPUP_OK) return pt_err("the pipeline cannot run: %s (%s)", t->warn, ipup_result_str(rc));
    return 0;
}

/* The plan; with --ipus N, first one replica's (its IPUs: plan.devices), then that of
 * N / plan.devices replicas (ipup_replicas_for_ipus), which --replicas must equal. */
static int pt_plan(pt_tool *t) {
    const pt_opts *o = &t->o;
    char msg[512];
    int32_t R = 0, D;
    if (pt_plan_once(t)) return 2;
    if (!o->ipus) return 0;
    D = t->plan.devices;
    if (ipup_replicas_for_ipus(o->ipus, D, &R, msg, sizeof msg) != IPUP_OK) return pt_err("--ipus: %s", msg);
    if (o->replicas && o->replicas != R)
        return pt_err("--ipus %d and --replicas %d disagree: one replica of the pipeline uses %d IPU%s, so %d IPUs are %d "
                      "replica%s; give --ipus or --replicas alone",
                      o->ipus, o->replicas, (int)D, D == 1 ? "" : "s", o->ipus, (int)R, R == 1 ? "" : "s");
    if (R == 1) return 0;
    t->cfg.replicas = R;
    return pt_plan_once(t);
}

/* the largest IPU pool of a plan */
static size_t pt_auto_largest(const ipup_plan *p) {
    size_t m = 0;
    int d;
    for (d = 0; d < p->devices; d++)
        if (p->ipu_bytes[d] > m) m = p->ipu_bytes[d];
    return m;
}

/* The plan of --auto in a few words: "2 stages at 0,7, 1f1b, 1 replica, B 32 x M 16,
 * recompute 0x1, offload optimizer" */
static void pt_auto_words(const ipup_config *c, const ipup_plan *p, char *buf, size_t cap) {
    static const char *const off[8] = {"none", "optimizer", "weights", "optimizer+weights", "activations",
                                       "optimizer+activations", "weights+activations", "all"};
    size_t n = (size_t)ipup_snprintf(buf, cap, "%d stage%s at ", (int)p->stages, p->stages == 1 ? "" : "s");
    int s;
    for (s = 0; s < p->stages && n < cap; s++) n += (size_t)ipup_snprintf(buf + n, cap - n, "%s%d", s ? "," : "", (int)p->split[s]);
    if (n < cap)
        ipup_snprintf(buf + n, cap - n, ", %s, %d replica%s, B %d x M %d, recompute 0x%x, offload %s",
                      ipup_sched_kind_name(c->schedule), (int)c->replicas, c->replicas == 1 ? "" : "s", (int)c->microbatch,
                      (int)c->microbatches, (unsigned)c->recompute_stages, off[c->offload & 7]);
}

/* The base configuration of --auto for model t->m: its optimizer and repeat count, the
 * coop runner; the search request: --ipus (default 1), --ipu-memory, the recipe's samples
 * per step (or --batch-size x --microbatches). */
static void pt_auto_request(pt_tool *t, ipup_config *base, ipup_plan_request *rq) {
    const pt_opts *o = &t->o;
    memset(base, 0, sizeof *base);
    base->model = &t->desc;
    base->opt.kind = o->optimizer_given ? o->optimizer : t->m->optimizer;
    base->repeat = o->repeat ? o->repeat : t->m->repeat;
    memset(rq, 0, sizeof *rq);
    rq->base = base;
    rq->ipus = o->ipus ? o->ipus : 1;
    rq->ipu_bytes = o->ipu_memory;
    rq->samples_per_step = (o->batch ? o->batch : t->m->batch) * (o->microbatches ? o->microbatches : t->m->microbatches);
}

/* ipup_plan_auto into t->cfg and t->plan (t->cfg.split points into t->plan); rc of the
 * library, its message in t->warn. */
static int pt_auto_plan(pt_tool *t) {
    static ipup_config base;
    ipup_plan_request rq;
    size_t bytes = IPUP_PLAN_SCRATCH_BYTES(IPUP_MAX_DEVICES, 64);
    void *scratch = malloc(bytes);
    int rc;
    if (!scratch) return IPUP_ERR_CAPACITY;
    pt_auto_request(t, &base, &rq);
    rc = ipup_plan_auto(&rq, &t->cfg, &t->plan, scratch, bytes, t->warn, sizeof t->warn);
    free(scratch);
    return rc;
}

/* --auto: the model, then the plan the library chooses, said on stderr. 0, or 2. */
static int pt_auto(pt_tool *t) {
    char words[256];
    int rc, s;
    if (pt_model_setup(t)) return 2;
    if ((rc = pt_auto_plan(t)) != IPUP_OK) {
        if (rc == IPUP_ERR_CAPACITY && !t->warn[0]) return pt_err("out of host memory for the plan's scratch");
        return pt_err("--auto: %s (%s)", t->warn, ipup_result_str(rc));
    }
    t->warn[0] = 0;
    t->n_stages = t->plan.stages;
    for (s = 0; s < t->plan.stages; s++) t->stage_first[s] = t->plan.split[s];
    t->stage_first[t->n_stages] = t->desc.n_layers;
    pt_auto_words(&t->cfg, &t->plan, words, sizeof words);
    fprintf(stderr, "auto plan for %zu bytes per IPU on %d IPU%s: %s; %d IPU%s, largest pool %zu bytes; predicted %.0f "
                    "samples/s\n",
            t->o.ipu_memory, t->o.ipus ? t->o.ipus : 1, t->o.ipus > 1 ? "s" : "", words, (int)t->plan.ipus,
            t->plan.ipus == 1 ? "" : "s", pt_auto_largest(&t->plan), t->plan.samples_per_second);
    return 0;
}

/* the samples/s one ipup_run (cfg.repeat steps) reports for t's configuration (zero images and
 * labels: the simulated time does not depend on them); < 0 when it cannot run */
static int pt_zero_feed(void *user, const ipup_feed *f) {
    (void)user;
    memset(f->x, 0, (size_t)f->n * (size_t)f->row * sizeof(float));
    if (f->labels) memset(f->labels, 0, (size_t)f->n * sizeof(int32_t));
    if (f->targets) memset(f->targets, 0, (size_t)f->n * (size_t)f->target_width * sizeof(float));
    return 0;
}
static double pt_measure(pt_tool *t) {
    static ipup_emu emu;
    ipup_config c = t->cfg;
    ipup_run_stats st;
    void *mem[2 * IPUP_MAX_IPUS + 1];
    int i, n = 0, ok = 1;
    size_t hb = ipup_host_bytes(&c);
    memset(mem, 0, sizeof mem);
    c.infeed = pt_zero_feed;
    for (i = 0; i < t->plan.ipus && ok; i++) {
        size_t a = (t->plan.ipu_bytes[i % t->plan.devices] + 63) / 64 * 64, b = t->plan.stream_bytes[i % t->plan.devices];
        c.ipu[i].mem = mem[n++] = aligned_alloc(64, a ? a : 64);
        c.ipu[i].bytes = a;
        if (b) {
            c.stream[i].mem = mem[n++] = aligned_alloc(64, (b + 63) / 64 * 64);
            c.stream[i].bytes = b;
            ok = c.stream[i].mem != NULL;
        }
        ok = ok && c.ipu[i].mem;
    }
    c.host.mem = mem[n++] = aligned_alloc(64, (hb + 63) / 64 * 64);
    c.host.bytes = hb;
    memset(&emu, 0, sizeof emu);
    ok = ok && c.host.mem && ipup_init(&emu, &c) == IPUP_OK;
    ok = ok && ipup_run(&emu, &st) == IPUP_OK;
    ipup_shutdown(&emu);
    for (i = 0; i < n; i++) free(mem[i]);
    return ok ? st.samples_per_second : -1.0;
}

/* --auto-table: the plans of the three MNIST models at five memories on 2 and 4 IPUs. */
static int pt_auto_table(void) {
    static const char *const models[3] = {"mlp", "cnn", "mlp-gelu"};
    static const char *const mem_text[5] = {"128K", "256K", "512K", "1M", "4M"};
    static const size_t mem[5] = {128u << 10, 256u << 10, 512u << 10, 1u << 20, 4u << 20};
    static pt_tool t;
    char words[256];
    int mi, ipus, k, rc;
    printf("%-8s %4s %6s  %-70s %12s %12s\n", "model", "IPUs", "memory", "plan (first layer of each stage, ...)",
           "predicted/s", "measured/s");
    for (mi = 0; mi < 3; mi++)
        for (ipus = 2; ipus <= 4; ipus += 2) {
            size_t need = 0; /* the smallest bytes per IPU that fit: below it nothing does */
            for (k = 0; k < 5; k++) {
                memset(&t, 0, sizeof t);
                t.o.model = models[mi];
                t.o.ipus = ipus;
                t.o.ipu_memory = mem[k];
                if (pt_model_setup(&t)) return 2;
                rc = need && mem[k] < need ? IPUP_ERR_OOM : pt_auto_plan(&t);
                if (rc == IPUP_ERR_OOM) {
                    const char *at = strstr(t.warn, "fits is ");
                    if (at) need = (size_t)strtoull(at + 8, NULL, 10);
                    printf("%-8s %4d %6s  does not fit: needs %zu bytes per IPU\n", models[mi], ipus, mem_text[k], need);
                    continue;
                }
                if (rc != IPUP_OK) return pt_err("--auto-table: %s %d IPUs %s: %s", models[mi], ipus, mem_text[k], t.warn);
                pt_auto_words(&t.cfg, &t.plan, words, sizeof words);
                printf("%-8s %4d %6s  %-70s %12.0f %12.0f\n", models[mi], ipus, mem_text[k], words,
                       t.plan.samples_per_second, pt_measure(&t));
            }
        }
    return fflush(stdout) == 0 ? 0 : 1;
}

/* printf into the output (a FILE); the write error is seen at the end */
#if defined(__GNUC__) || defined(__clang__)
static void pt_put(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
static void pt_put(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

/* s through one of ex_escape.h's escapers into the output: what the user typed never
 * reaches the header as it is (a "* /" in an argument would end the comment) */
static void pt_put_esc(FILE *f, size_t (*esc)(const char *, char *, size_t), const char *s) {
    size_t cap = 8 * strlen(s) + 8; /* the longest escape of one byte is 8 bytes */
    char *buf = (char *)malloc(cap);
    if (!buf) { /* out of memory: nothing of s rather than s unescaped */
        pt_put(f, "(?)");
        return;
    }
    esc(s, buf, cap);
    pt_put(f, "%s", buf);
    free(buf);
}

/* The header's comment: the command, the model, the pipeline, the warnings; every text
 * of the user's in it through ex_esc_c_comment. */
static void pt_write_comment(const pt_tool *t, FILE *f) {
    const ipup_config *c = &t->cfg;
    const ipup_plan *p = &t->plan;
    const char *w;
    int i;
    pt_put(f, "/* Generated by ipupipe-plan (ipupipe %s); do not edit. The pool sizes of one\n"
              "   configuration as ipup_plan_pools computes them: exactly what ipup_init carves.\n   command: ipupipe-plan",
           IPUPIPE_VERSION_STRING);
    for (i = 1; i < t->o.argc; i++) {
        pt_put(f, " ");
        pt_put_esc(f, ex_esc_c_comment, t->o.argv[i]);
    }
    if (t->o.input) {
        pt_put(f, " --input ");
        pt_put_esc(f, ex_esc_c_comment, t->o.input);
    }
    pt_put(f, "\n   model: ");
    pt_put_esc(f, ex_esc_c_comment, t->m->layers);
    pt_put(f, " on input %dx%dx%d: %d layers, %lld parameters\n", (int)t->desc.in_h, (int)t->desc.in_w,
           (int)t->desc.in_c, (int)t->desc.n_layers, (long long)p->params);
    pt_put(f, "   pipeline: %d stage(s) starting at layers", (int)p->stages);
    for (i = 0; i < p->stages; i++) pt_put(f, "%s%d", i ? "," : " ", (int)p->split[i]);
    pt_put(f, ", %d IPU(s) x %d replica(s), schedule %s, micro-batch %d x %d micro-batches, repeat %d,\n"
              "   optimizer %s, recompute %s, offload %s\n",
           (int)p->devices, (int)p->replicas, ipup_sched_kind_name(c->schedule), (int)c->microbatch, (int)c->microbatches,
           (int)c->repeat, pt_opt_name(c->opt.kind),
           c->recompute || c->recompute_stages ? "on" : "off", c->offload ? "on" : "off");
    if (t->o.auto_plan)
        pt_put(f, "   chosen by --auto (ipup_plan_auto) for %zu bytes per IPU on %d IPU(s):\n"
                  "   recompute_stages 0x%x, offload bits %d; predicted %.0f samples/s, a step of\n"
                  "   %.3f us (the cost model)\n",
               t->o.ipu_memory, t->o.ipus ? t->o.ipus : 1, (unsigned)c->recompute_stages,
               (int)c->offload, p->samples_per_second, p->step_seconds * 1e6);
    for (w = t->warn; *w;) { /* one warning per line */
        const char *e = strchr(w, '\n');
        size_t n = e ? (size_t)(e - w) : strlen(w);
        char line[IPUP_MSG_MAX];
        ipup_snprintf(line, sizeof line, "%.*s", (int)n, w);
        pt_put(f, "   warning: ");
        pt_put_esc(f, ex_esc_c_comment, line);
        pt_put(f, "\n");
        w += n + (e ? 1 : 0);
    }
    pt_put(f, "*/\n");
}

/* One IPUP_MAX_* limit: IPUP_PLAN_MAX_<name>, and the limit set to it, or checked. */
static void pt_write_limit(FILE *f, const char *name, int need, const char *what) {
    pt_put(f, "#define IPUP_PLAN_%s %d /* %s */\n", name, need, what);
    pt_put(f, "#ifndef IPUP_%s\n#define IPUP_%s IPUP_PLAN_%s\n#elif IPUP_%s < IPUP_PLAN_%s\n"
              "#error \"IPUP_%s is below what this configuration needs (%d: %s)\"\n#endif\n",
           name, name, name, name, name, name, need, what);
}

/* s as a C string literal (ex_esc_c_string) */
static void pt_put_cstr(FILE *f, const char *s) {
    pt_put(f, "\"");
    pt_put_esc(f, ex_esc_c_string, s);
    pt_put(f, "\"");
}

/* The configuration the pools are for, as defines a program fills ipup_config from. */
static void pt_write_config(const pt_tool *t, FILE *f) {
    static const char *const sched[] = {
        "IPUP_SCHED_GROUPED", "IPUP_SCHED_INTERLEAVED", "IPUP_SCHED_SEQUENTIAL",
        "IPUP_SCHED_GPIPE", "IPUP_SCHED_1F1B", "IPUP_SCHED_INTERLEAVED_1F1B", "IPUP_SCHED_ZBH1",
        "IPUP_SCHED_ZBH2", "IPUP_SCHED_ZBV", "IPUP_SCHED_VMIN", "IPUP_SCHED_VHALF",
        "IPUP_SCHED_LOOPED_BFS", "IPUP_SCHED_INTERLEAVED_ZB", "IPUP_SCHED_DUALPIPE_V",
        "IPUP_SCHED_DUALPIPE"};
    _Static_assert(sizeof sched / sizeof sched[0] == IPUP_SCHED_KIND_COUNT,
                   "one name per ipup_sched_kind, in its order");
    static const char *const opt[3] = {"IPUP_OPT_SGD", "IPUP_OPT_MOMENTUM", "IPUP_OPT_ADAM"};
    const ipup_config *c = &t->cfg;
    const ipup_plan *p = &t->plan;
    int s;
    pt_put(f, "\n/* the configuration of these pools, for ipup_config: the model is\n"
              "   ipup_model_parse(IPUP_PLAN_MODEL_TEXT) with in_h, in_w, in_c = IPUP_PLAN_INPUT_H, _W, _C */\n");
    pt_put(f, "#define IPUP_PLAN_MODEL_TEXT ");
    pt_put_cstr(f, t->m->layers);
    pt_put(f, "\n#define IPUP_PLAN_INPUT_H %d\n#define IPUP_PLAN_INPUT_W %d\n#define IPUP_PLAN_INPUT_C %d\n",
           (int)t->desc.in_h, (int)t->desc.in_w, (int)t->desc.in_c);
    pt_put(f, "#define IPUP_PLAN_BATCH %d /* cfg.microbatch: samples per micro-batch */\n", (int)c->microbatch);
    pt_put(f, "#define IPUP_PLAN_MICROBATCHES %d /* cfg.microbatches: micro-batches per step */\n", (int)c->microbatches);
    pt_put(f, "#define IPUP_PLAN_REPEAT %d /* cfg.repeat: steps per ipup_run */\n", (int)c->repeat);
    pt_put(f, "#define IPUP_PLAN_SCHEDULE %s /* cfg.schedule */\n", sched[c->schedule]);
    pt_put(f, "#define IPUP_PLAN_STRICT %d /* cfg.strict */\n", (int)c->strict);
    pt_put(f, "/* cfg.split = IPUP_PLAN_STAGES > 1 ? split : NULL with static const int32_t split[] =\n"
              "   IPUP_PLAN_SPLIT_LIST: the first layer of stages 1.. ({0} with one stage) */\n#define IPUP_PLAN_SPLIT_LIST {");
    for (s = 1; s < p->stages; s++) pt_put(f, "%s%d", s > 1 ? ", " : "", (int)p->split[s]);
    pt_put(f, "%s}\n", p->stages > 1 ? "" : "0");
    pt_put(f, "/* --map (\"\": the schedule's own mapping, cfg.stage_device = NULL); a plain map is\n"
              "   cfg.stage_device = IPUP_PLAN_STAGE_DEVICE_LIST (int16_t), a concurrent one (a stage on\n"
              "   several IPUs) cfg.concurrent from ipup_sched_map_parse(IPUP_PLAN_MAP_TEXT) */\n#define IPUP_PLAN_MAP_TEXT ");
    pt_put_cstr(f, t->o.map ? t->o.map : "");
    pt_put(f, "\n#define IPUP_PLAN_MAP_CONCURRENT %d\n#define IPUP_PLAN_STAGE_DEVICE_LIST {", t->n_map && t->cmap.concurrent ? 1 : 0);
    for (s = 0; s < p->stages; s++) pt_put(f, "%s%d", s ? ", " : "", (int)p->stage_device[s]);
    pt_put(f, "} /* the IPU of each stage, as planned */\n");
    pt_put(f, "#define IPUP_PLAN_OPTIMIZER %s /* cfg.opt.kind; lr, momentum, betas: the program's */\n", opt[c->opt.kind]);
    pt_put(f, "#define IPUP_PLAN_RECOMPUTE %d /* cfg.recompute */\n#define IPUP_PLAN_OFFLOAD %d /* cfg.offload */\n",
           (int)c->recompute, (int)c->offload);
    pt_put(f, "#define IPUP_PLAN_RECOMPUTE_STAGES 0x%xu /* cfg.recompute_stages (0: as "
              "cfg.recompute says) */\n",
           (unsigned)c->recompute_stages);
    pt_put(f, "#define IPUP_PLAN_IPU_MEMORY %zu /* cfg.ipu_bytes (0: unlimited) */\n",
           c->ipu_bytes);
    pt_put(f, "#define IPUP_PLAN_RUNNER %s /* cfg.runner */\n",
           c->runner == IPUP_RUNNER_THREADS ? "IPUP_RUNNER_THREADS" : "IPUP_RUNNER_COOP");
    pt_put(f, "#define IPUP_PLAN_DTYPE %s /* cfg.dtype */\n#define IPUP_PLAN_ACCUM_DTYPE %s /* cfg.accum_dtype */\n"
              "#define IPUP_PLAN_FIRST_MOMENT_DTYPE %s /* cfg.opt.first_moment_dtype */\n",
           c->dtype ? "IPUP_DTYPE_F16" : "IPUP_DTYPE_F32", c->accum_dtype ? "IPUP_DTYPE_F16" : "IPUP_DTYPE_F32",
           c->opt.first_moment_dtype ? "IPUP_DTYPE_F16" : "IPUP_DTYPE_F32");
    pt_put(f, "#define IPUP_PLAN_FP32_WEIGHTS %d /* cfg.fp32_weights */\n", (int)c->fp32_weights);
    pt_put(f, "#define IPUP_PLAN_LOSS_SCALE %gf /* cfg.loss_scale (0: none) */\n"
              "#define IPUP_PLAN_LOSS_SCALE_DYNAMIC %d /* cfg.loss_scale_dynamic */\n",
           (double)c->loss_scale, (int)c->loss_scale_dynamic);
}

/* The stages device d holds, for its pool's comment: "stage 0 (stash depth 4), stage 1
 * branch 1 of 2 (stash depth 3)", or "no stage". A concurrent stage's branches are on the
 * devices of its bracket (--map), each with the stage's stash depth. */
static void pt_write_stages_of(const pt_tool *t, FILE *f, int d) {
    const ipup_plan *p = &t->plan;
    int s, b, n = 0;
    for (s = 0; s < p->stages; s++) {
        int branches = t->n_map && t->cmap.concurrent ? t->cmap.n_dev[s] : 1;
        for (b = 0; b < branches; b++) {
            int dev = branches > 1 ? t->cmap.dev[s][b] : p->stage_device[s];
            if (dev != d) continue;
            pt_put(f, "%s stage %d", n++ ? "," : "", s);
            if (branches > 1) pt_put(f, " branch %d of %d", b, branches);
            pt_put(f, " (stash depth %d)", (int)p->stash_depth[s]);
        }
    }
    if (!n) pt_put(f, " no stage");
}

/* Branches of the concurrent stages of --map: in all (lanes), and the most of one stage. */
static void pt_branches(const pt_tool *t, int *lanes, int *most) {
    int s;
    *lanes = 0;
    *most = 1;
    if (!t->n_map || !t->cmap.concurrent) return;
    for (s = 0; s < t->plan.stages; s++) {
        if (t->cmap.n_dev[s] > 1) *lanes += t->cmap.n_dev[s];
        if (t->cmap.n_dev[s] > *most) *most = t->cmap.n_dev[s];
    }
}

/* The header: pools, counts, limits, configuration. */
static void pt_write_header(const pt_tool *t, FILE *f) {
    const ipup_plan *p = &t->plan;
    int i, lanes, most;
    pt_branches(t, &lanes, &most);
    pt_write_comment(t, f);
    pt_put(f, "#ifndef IPUPIPE_PLAN_H\n#define IPUPIPE_PLAN_H\n\n");
    pt_put(f, "/* pools of IPU i = replica * IPUP_PLAN_DEVICES + device: cfg.ipu[i], cfg.stream[i] */\n");
    pt_put(f, "/* each pool 64-byte aligned, as the sizes assume: IPUP_ALIGN64 static uint8_t\n"
              "   ipu0[IPUP_PLAN_IPU0_BYTES]; an unaligned pool needs up to 63 bytes more */\n");
    for (i = 0; i < p->devices && p->ipu_bytes[i]; i++) continue;
    if (i < p->devices)
        pt_put(f, "/* an IPU of 0 bytes runs no stage: ipup_init still wants a pool (cfg.ipu[i].mem not NULL) */\n");
    for (i = 0; i < p->ipus; i++) {
        int d = i % p->devices;
        pt_put(f, "#define IPUP_PLAN_IPU%d_BYTES %zu /* replica %d, device %d:", i, p->ipu_bytes[d], i / p->devices, d);
        pt_write_stages_of(t, f, d);
        pt_put(f, " */\n");
    }
    if (t->cfg.dtype || t->cfg.accum_dtype) /* what the storage types change */
        for (i = 0; i < p->devices; i++) {
            int c;
            pt_put(f, "/* device %d by category (%s storage):", i, ipup_dtype_name(t->cfg.dtype));
            for (c = 0; c < IPUP_MEM_CATEGORIES; c++)
                pt_put(f, "%s %s %zu", c ? "," : "", ipup_mem_category_name(c), p->mem[i].by_category[c]);
            pt_put(f, " */\n");
        }
    for (i = 0; i < p->ipus; i++)
        pt_put(f, "#define IPUP_PLAN_STREAM%d_BYTES %zu /* streaming memory (offloaded %s) */\n", i,
               p->stream_bytes[i % p->devices],
               t->cfg.offload > 1 ? "tensors, cfg.offload" : "optimizer state");
    pt_put(f, "#define IPUP_PLAN_HOST_BYTES %zu /* cfg.host: schedule table, feed rings, outfeed records */\n",
           p->host_bytes);
    pt_put(f, "/* the same per IPU as initialisers: static const size_t ipu_bytes[] = IPUP_PLAN_IPU_BYTES_LIST; */\n");
    pt_put(f, "#define IPUP_PLAN_IPU_BYTES_LIST {");
    for (i = 0; i < p->ipus; i++) pt_put(f, "%s%zu", i ? ", " : "", p->ipu_bytes[i % p->devices]);
    pt_put(f, "}\n#define IPUP_PLAN_STREAM_BYTES_LIST {");
    for (i = 0; i < p->ipus; i++) pt_put(f, "%s%zu", i ? ", " : "", p->stream_bytes[i % p->devices]);
    pt_put(f, "}\n");
    pt_put(f, "#define IPUP_PLAN_STAGES %d\n#define IPUP_PLAN_DEVICES %d\n#define IPUP_PLAN_REPLICAS %d\n"
              "#define IPUP_PLAN_IPUS %d\n#define IPUP_PLAN_PARAMS %lld\n\n",
           (int)p->stages, (int)p->devices, (int)p->replicas, (int)p->ipus, (long long)p->params);
    pt_put(f, "/* the smallest limits of ipupipe.h this configuration fits: set when not defined yet\n"
              "   (include this header before ipupipe.h to shrink ipup_emu), else checked */\n");
    /* floors: with IPUP_MAX_LAYERS 2 or IPUP_SCHED_MAX_STAGES 1, gcc's -Wmaybe-uninitialized
       and -Warray-bounds flag one- and two-element arrays of the headers at -O2/-O3 (false
       alarms, but -Werror builds stop); the bytes they cost are a few dozen */
    pt_write_limit(f, "MAX_LAYERS", t->desc.n_layers > 3 ? (int)t->desc.n_layers : 3, "layers of the model (at least 3)");
    pt_write_limit(f, "MAX_DEVICES", (int)p->devices, "IPUs per replica");
    pt_write_limit(f, "MAX_REPLICAS", (int)p->replicas, "replicas");
    pt_write_limit(f, "MAX_IPUS", (int)p->ipus, "replicas x IPUs");
    /* its default is IPUP_MAX_DEVICES, which the header may have lowered below the branches */
    pt_write_limit(f, "MAX_BRANCH_LANES", lanes > 2 ? lanes : 2, "branches of the concurrent stages in all (at least 2)");
    pt_write_limit(f, "SCHED_MAX_BRANCHES", most > 2 ? most : 2, "most branches of one stage (at least 2)");
    /* the schedule library numbers IPUs below IPUP_SCHED_MAX_STAGES too (ipup_sched_map_parse) */
    if (p->devices > p->stages)
        pt_write_limit(f, "SCHED_MAX_STAGES", (int)p->devices, "IPUs per replica, more than the stages (at least 2)");
    else
        pt_write_limit(f, "SCHED_MAX_STAGES", p->stages > 2 ? (int)p->stages : 2, "pipeline stages (at least 2)");
    pt_write_config(t, f);
    pt_put(f, "\n#endif /* IPUPIPE_PLAN_H */\n");
}

/* Ends the -o output whose bytes were all written (written != 0) or not: keeps it, or
 * drops it and says why. 0 when the file now holds the complete header. */
static int pt_out_finish(ex_out *o, int written) {
    int e = written ? 0 : (errno ? errno : EIO);
    if (!written) ex_out_close(o, 0);
    else e = ex_out_close(o, 1);
    if (!e) return 0;
    pt_err("-o: writing %s failed: %s%s%s", o->path, strerror(e),
           e == ENOSPC || e == EFBIG || e == EDQUOT ? " (disk full or file size limit)" : "",
           o->tmp ? "; the file was not replaced (any older one is as it was)" : "");
    return e;
}

/* The header to stdout, or to -o FILE through a temporary file renamed when complete. */
static int pt_output(const pt_tool *t) {
    char msg[EX_ERR_LEN];
    ex_out out;
    FILE *f;
    int ok;
    if (!t->o.out) {
        pt_write_header(t, stdout);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : (pt_err("writing the header to stdout failed: %s", strerror(errno)), 1);
    }
    if (ex_out_open(&out, t->o.out_flag, t->o.out, msg, sizeof msg) != 0)
        return pt_err("%s", msg), 1;
    if (!(f = fdopen(dup(out.fd), "w"))) {
        ex_out_free(&out);
        return pt_err("-o: %s: %s", t->o.out, strerror(errno)), 1;
    }
    pt_write_header(t, f);
    ok = fflush(f) == 0 && !ferror(f);
    ok = (fclose(f) == 0) && ok;
    ok = pt_out_finish(&out, ok) == 0;
    ex_out_free(&out);
    return ok ? 0 : 1;
}

/* The whole program: 0, 1 (output) or 2 (usage or configuration). -o is checked before
 * any work (ex_outfile.h's ex_out_check: an empty path is a usage error, 2; a directory,
 * a FIFO, a device or a directory that takes no new file is 1). */
static int pt_main(int argc, char **argv) {
    static pt_tool t;
    char msg[EX_ERR_LEN];
    int rc;
    memset(&t, 0, sizeof t);
    if ((rc = pt_parse(argc, argv, &t.o)) != 0) return rc;
    if (t.o.out && ex_out_check(t.o.out_flag, t.o.out, msg, sizeof msg) != 0)
        return pt_err("%s", msg), *t.o.out ? 1 : 2;
    if (t.o.auto_table) return pt_auto_table();
    if (t.o.auto_plan) {
        if ((rc = pt_auto(&t)) != 0) return rc;
        return pt_output(&t);
    }
    if ((rc = pt_configure(&t)) != 0) return rc;
    if ((rc = pt_plan(&t)) != 0) return rc;
    if (t.warn[0]) fprintf(stderr, "warnings:\n%s", t.warn);
    return pt_output(&t);
}

#endif /* PLAN_TOOL_H */
