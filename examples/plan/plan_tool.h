/* plan_tool.h - build/ipupipe-plan (examples/plan/ipupipe-plan.c is its main): the pools of
 * one pipeline configuration as a C header of #defines, so that a firmware sizes its
 * static arrays in the same build that compiles it. MIT licence.
 *
 *   build/ipupipe-plan --model dense64,relu,dense32,relu,dense10,xent --input 1x1x196 \
 *       --splits dense32 --batch-size 8 --batches-to-accumulate 4 --optimizer sgd -o pools.h
 *
 * The configuration flags are the trainer's (mnist_options.h, parsed by mt_parse and
 * completed by mt_resolve; the trainer's run-only flags such as --epochs or --data are
 * accepted and change nothing). --model is one of the trainer's MNIST models (input
 * 28x28x1) or a model text of ipup_model_parse, which needs --input HxWxC (a flat
 * vector of N features: 1x1xN) and whose recipe defaults are batch 1, 1 micro-batch,
 * repeat 1, SGD, schedule grouped, one stage (--splits names layer ids, as
 * ipup_model_parse gives them: dense64, relu, dense32, relu_2, ...). The sizes are
 * ipup_plan_pools' (exactly what ipup_init carves), in a scratch of
 * IPUP_PLAN_SCRATCH_BYTES(S, M) bytes. The header gives, for IPU i = replica * devices
 * + device, IPUP_PLAN_IPU<i>_BYTES and IPUP_PLAN_STREAM<i>_BYTES, then
 * IPUP_PLAN_HOST_BYTES, the counts, and IPUP_PLAN_MAX_* with the IPUP_MAX_* limits of
 * ipupipe.h set to them when not defined yet (include it before ipupipe.h to shrink
 * ipup_emu to the configuration; after it, the limits are checked with #error).
 * -o FILE writes a temporary file renamed over FILE when complete (mnist_outfile.h).
 * The schedule's warnings go to stderr ("warnings:", as ipupipe-sched prints them) and
 * into the header's comment. Exit 0, 2 on a usage or configuration error, 1 when the
 * output cannot be written; every refusal prints one "ipupipe-plan: error: " line.
 *
 * Needs POSIX (_POSIX_C_SOURCE 200809L before the first include) and ipupipe.h with
 * its implementation in the same program.
 */
#ifndef PLAN_TOOL_H
#define PLAN_TOOL_H

#define MT_PROG "ipupipe-plan"
#include "mnist_trainer.h"

#define PT_MAX_ARGS 256

typedef struct {
    mt_run r;                 /* the trainer's configured run: options, desc, stages, cfg, plan */
    const char *input, *out;  /* --input HxWxC, -o FILE */
    int in_h, in_w, in_c;
    int argc;                 /* the trainer's arguments: argv without --input and -o */
    char *argv[PT_MAX_ARGS];
    char warn[IPUP_MSG_MAX];  /* the schedule's warnings (ipup_plan_pools' msg) */
    mnist_model_spec text;    /* the recipe of a model text */
} pt_tool;

static void pt_usage(FILE *f) {
    fprintf(f,
            "usage: ipupipe-plan --model NAME|TEXT [--input HxWxC] [trainer options] [-o FILE]\n"
            "  Prints a C header of #defines: the bytes of every IPU pool (IPUP_PLAN_IPU<i>_BYTES), its\n"
            "  streaming memory (IPUP_PLAN_STREAM<i>_BYTES), the host pool (IPUP_PLAN_HOST_BYTES) and the\n"
            "  IPUP_MAX_* limits the configuration needs, as ipup_plan_pools computes them.\n"
            "  --model NAME|TEXT    mlp, cnn, mlp-gelu (28x28x1 images), or a model text such as\n"
            "                       dense64,relu,dense10,xent (needs --input)\n"
            "  --input HxWxC        input shape of one sample (a vector of N features: 1x1xN)\n"
            "  -o, --output FILE    write the header to FILE (complete, or not at all); default stdout\n"
            "  example: ipupipe-plan --model dense64,relu,dense32,relu,dense10,xent --input 1x1x196 \\\n"
            "               --splits dense32 --batch-size 8 --batches-to-accumulate 4 --optimizer sgd -o pools.h\n"
            "The configuration options are the trainer's:\n");
    mt_usage(f);
}

/* "28x28x1" into h, w, c (each 1..65535); 0, or 2 after a message */
static int pt_shape(pt_tool *t, const char *v) {
    int *dim[3];
    const char *p = v;
    int k;
    dim[0] = &t->in_h;
    dim[1] = &t->in_w;
    dim[2] = &t->in_c;
    for (k = 0; k < 3; k++) {
        char *end;
        long x;
        errno = 0;
        x = strtol(p, &end, 10);
        if (errno || end == p || x < 1 || x > 65535 || *p == '+' || *p == '-' || (k < 2 && *end != 'x') || (k == 2 && *end))
            return mt_err("--input needs HxWxC, three integers in 1..65535 such as 28x28x1 or 1x1x64, got '%s'", v);
        *dim[k] = (int)x;
        p = end + 1;
    }
    t->input = v;
    return 0;
}

/* One of the tool's own flags at argv[*i] (--input, -o/--output, --help): 1 when taken,
 * 0 when not one of them, -1 after a message (exit code 2). */
static int pt_own_flag(pt_tool *t, int argc, char **argv, int *i) {
    const char *a = argv[*i], *v = NULL;
    int input = strncmp(a, "--input", 7) == 0 && (a[7] == 0 || a[7] == '=');
    int out = strcmp(a, "-o") == 0 || (strncmp(a, "--output", 8) == 0 && (a[8] == 0 || a[8] == '='));
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        pt_usage(stdout);
        exit(0);
    }
    if (!input && !out) return 0;
    if (strchr(a, '=')) v = strchr(a, '=') + 1;
    else if (*i + 1 < argc) v = argv[++*i];
    else return mt_err("%s needs a value (see --help)", a), -1;
    if (input) return pt_shape(t, v) ? -1 : 1;
    if (!*v) return mt_err("%s needs a file name", a), -1;
    t->out = v;
    return 1;
}

/* argv into the tool's flags and the trainer's options; 0, or 2 after a message */
static int pt_args(pt_tool *t, int argc, char **argv) {
    int i, rc;
    t->argc = 0;
    t->argv[t->argc++] = argv[0];
    for (i = 1; i < argc; i++) {
        if ((rc = pt_own_flag(t, argc, argv, &i)) < 0) return 2;
        if (rc) continue;
        if (t->argc >= PT_MAX_ARGS) return mt_err("too many arguments (at most %d)", PT_MAX_ARGS - 1);
        t->argv[t->argc++] = argv[i];
    }
    return mt_parse(t->argc, t->argv, &t->r.o);
}

/* The recipe of a model text: what the trainer would assume with no MNIST recipe. */
static void pt_text_spec(pt_tool *t) {
    static const mnist_model_spec base = {"text", "model text", "", "", "", "grouped", 1, 1, 1, 1, IPUP_OPT_SGD, 0.01f,
                                          0.9f, 1.0f, 0.9f, 0.999f, 1e-8f, 0};
    t->text = base;
    t->text.layers = t->r.o.model;
}

/* A model text: parsed, its input shape, its stages, schedule and runner (mt_configure
 * for a desc that is not an MNIST model). 0, or 2 after a message. */
static int pt_configure_text(pt_tool *t) {
    mt_run *r = &t->r;
    char msg[256];
    memset(&r->desc, 0, sizeof r->desc);
    if (ipup_model_parse(r->o.model, &r->desc, msg, sizeof msg) != IPUP_OK)
        return mt_err("--model: '%s' is neither mlp, cnn nor mlp-gelu, nor a model text: %s", r->o.model, msg);
    if (!t->input)
        return mt_err("--model %s: a model text needs --input HxWxC (the shape of one sample, e.g. 1x1x64)", r->o.model);
    r->desc.in_h = t->in_h;
    r->desc.in_w = t->in_w;
    r->desc.in_c = t->in_c;
    if (ipup_model_info(&r->desc, r->info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK)
        return mt_err("--model %s on --input %s: %s", r->o.model, t->input, msg);
    r->n_layers = mnist_model_layers(&r->desc, r->layer_first);
    if (mt_stages(r)) return 2;
    if (ipup_sched_kind_parse(r->o.schedule, &r->sched) != IPUP_OK)
        return mt_err("--schedule: unknown '%s' (grouped, interleaved, sequential, gpipe, 1f1b, interleaved-1f1b, zb-h1)",
                      r->o.schedule);
    if (ipup_runner_parse(r->o.runner, &r->runner) != IPUP_OK)
        return mt_err("--runner: unknown '%s' (coop or threads)", r->o.runner);
    return 0;
}

/* The configuration: an MNIST model with its recipe (and --input, if given, as its
 * input shape), or a model text; then the emulator's ipup_config. 0, or 2. */
static int pt_configure(pt_tool *t) {
    mt_run *r = &t->r;
    char msg[256];
    r->spec = mnist_model_find(r->o.model);
    if (!r->spec) {
        pt_text_spec(t);
        r->spec = &t->text;
        mt_resolve(&r->o, r->spec);
        if (pt_configure_text(t)) return 2;
    } else {
        mt_resolve(&r->o, r->spec);
        if (mt_configure(r)) return 2;
        if (t->input) {
            r->desc.in_h = t->in_h;
            r->desc.in_w = t->in_w;
            r->desc.in_c = t->in_c;
            if (ipup_model_info(&r->desc, r->info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK)
                return mt_err("--model %s on --input %s: %s", r->o.model, t->input, msg);
        }
    }
    mt_fill_config(r, r->runner);
    return 0;
}

/* ipup_plan_pools in a scratch of exactly IPUP_PLAN_SCRATCH_BYTES(S, M); 0, or 2. */
static int pt_plan(pt_tool *t) {
    mt_run *r = &t->r;
    size_t bytes = IPUP_PLAN_SCRATCH_BYTES((size_t)r->cfg.stages, (size_t)r->cfg.microbatches);
    void *scratch = malloc(bytes);
    int rc;
    if (!scratch) return mt_err("out of host memory: %zu bytes of plan scratch", bytes);
    rc = ipup_plan_pools(&r->cfg, &r->plan, scratch, bytes, t->warn, sizeof t->warn);
    free(scratch);
    if (rc != IPUP_OK) {
        const char *m = t->warn;
        return mt_err("the pipeline cannot run: %s (%s)", m, ipup_result_str(rc));
    }
    return 0;
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

/* The header's comment: the command, the model, the pipeline, the warnings. */
static void pt_write_comment(const pt_tool *t, FILE *f) {
    const mt_run *r = &t->r;
    const ipup_config *c = &r->cfg;
    const char *w;
    int i;
    pt_put(f, "/* Generated by ipupipe-plan (ipupipe %s); do not edit. The pool sizes of one\n"
              "   configuration as ipup_plan_pools computes them: exactly what ipup_init carves.\n   command: ipupipe-plan",
           IPUPIPE_VERSION_STRING);
    for (i = 1; i < t->argc; i++) pt_put(f, " %s", t->argv[i]);
    if (t->input) pt_put(f, " --input %s", t->input);
    pt_put(f, "\n   model: %s on input %dx%dx%d: %d layers, %lld parameters\n", r->spec == &t->text ? r->o.model : r->spec->layers,
           (int)r->desc.in_h, (int)r->desc.in_w, (int)r->desc.in_c, (int)r->desc.n_layers, (long long)r->plan.params);
    pt_put(f, "   pipeline: %d stage(s) starting at layers", (int)r->plan.stages);
    for (i = 0; i < r->plan.stages; i++) pt_put(f, "%s%d", i ? "," : " ", (int)r->plan.split[i]);
    pt_put(f, ", %d IPU(s) x %d replica(s), schedule %s, micro-batch %d x %d micro-batches, repeat %d,\n"
              "   optimizer %s, recompute %s, offload %s\n",
           (int)r->plan.devices, (int)r->plan.replicas, ipup_sched_kind_name(c->schedule), (int)c->microbatch,
           (int)c->microbatches, (int)c->repeat, mt_opt_name(c->opt.kind), c->recompute ? "on" : "off",
           c->offload ? "on" : "off");
    for (w = t->warn; *w;) { /* one warning per line, no comment terminator inside */
        const char *e = strchr(w, '\n');
        int n = e ? (int)(e - w) : (int)strlen(w);
        pt_put(f, "   warning: %.*s\n", n, w);
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

/* The header: pools, counts, limits. */
static void pt_write_header(const pt_tool *t, FILE *f) {
    const ipup_plan *p = &t->r.plan;
    int i, s;
    pt_write_comment(t, f);
    pt_put(f, "#ifndef IPUPIPE_PLAN_H\n#define IPUPIPE_PLAN_H\n\n");
    pt_put(f, "/* pools of IPU i = replica * IPUP_PLAN_DEVICES + device: cfg.ipu[i], cfg.stream[i] */\n");
    for (i = 0; i < p->ipus; i++) {
        int d = i % p->devices;
        pt_put(f, "#define IPUP_PLAN_IPU%d_BYTES %zu /* replica %d, device %d: stage", i, p->ipu_bytes[d], i / p->devices, d);
        for (s = 0; s < p->stages; s++)
            if (p->stage_device[s] == d) pt_put(f, " %d (stash depth %d)", s, (int)p->stash_depth[s]);
        pt_put(f, " */\n");
    }
    for (i = 0; i < p->ipus; i++)
        pt_put(f, "#define IPUP_PLAN_STREAM%d_BYTES %zu /* streaming memory (offloaded optimizer state) */\n", i,
               p->stream_bytes[i % p->devices]);
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
    pt_write_limit(f, "MAX_LAYERS", t->r.desc.n_layers > 3 ? (int)t->r.desc.n_layers : 3, "layers of the model (at least 3)");
    pt_write_limit(f, "MAX_DEVICES", (int)p->devices, "IPUs per replica");
    pt_write_limit(f, "MAX_REPLICAS", (int)p->replicas, "replicas");
    pt_write_limit(f, "MAX_IPUS", (int)p->ipus, "replicas x IPUs");
    pt_write_limit(f, "SCHED_MAX_STAGES", p->stages > 2 ? (int)p->stages : 2, "pipeline stages (at least 2)");
    pt_put(f, "\n#endif /* IPUPIPE_PLAN_H */\n");
}

/* The header to stdout, or to -o FILE through a temporary file renamed when complete. */
static int pt_output(const pt_tool *t) {
    ex_out out;
    FILE *f;
    int ok;
    if (!t->out) {
        pt_write_header(t, stdout);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : (mt_err("writing the header to stdout failed: %s", strerror(errno)), 1);
    }
    if (ex_out_open(&out, t->out) != 0) return mt_err("-o: cannot create %s: %s", t->out, strerror(errno)), 1;
    if (!(f = fdopen(dup(out.fd), "w"))) {
        ex_out_free(&out);
        return mt_err("-o: %s: %s", t->out, strerror(errno)), 1;
    }
    pt_write_header(t, f);
    ok = fflush(f) == 0 && !ferror(f);
    ok = (fclose(f) == 0) && ok;
    ok = mt_out_finish(&out, "-o", ok) == 0;
    ex_out_free(&out);
    return ok ? 0 : 1;
}

/* The whole program: 0, 1 (output) or 2 (usage or configuration). */
static int pt_main(int argc, char **argv) {
    static pt_tool t;
    int rc;
    (void)mnist_train_main; /* the trainer's parts are used, not its main */
    memset(&t, 0, sizeof t);
    if ((rc = pt_args(&t, argc, argv)) != 0) return rc;
    if ((rc = pt_configure(&t)) != 0) return rc;
    if ((rc = pt_plan(&t)) != 0) return rc;
    if (t.warn[0]) fprintf(stderr, "warnings:\n%s", t.warn);
    return pt_output(&t);
}

#endif /* PLAN_TOOL_H */
