/* plan_options.h - the command line of build/ipupipe-plan: its options (pt_opts), their
 * parsing (pt_parse), the usage text (pt_usage) and the error printer (pt_err). MIT
 * licence.
 *
 * The options are the configuration that sizes the pools, with the names and the
 * meaning of build/mnist-train's (so a plan command and a training command agree):
 * --batches-to-accumulate and --gradient-accumulation are synonyms of --microbatches.
 * The trainer's options that do not change the pools (--epochs, --data, --save, ...)
 * are refused with a message saying so. Every refusal prints one "ipupipe-plan: error:"
 * line and returns 2 (the exit code of a usage error).
 */
#ifndef PLAN_OPTIONS_H
#define PLAN_OPTIONS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipupipe.h"

#define PT_MAX_STAGES 16
#define PT_MAX_ARGS 256

typedef struct {
    const char *model;                 /* --model NAME|TEXT (default mlp) */
    const char *input;                 /* --input HxWxC as given, or NULL */
    int in_h, in_w, in_c;
    const char *splits[PT_MAX_STAGES]; /* --splits LAYER... */
    int n_splits, splits_auto, splits_given, stages, stages_given;
    const char *map;                   /* --map text, NULL: the schedule's own mapping */
    const char *schedule, *runner;     /* NULL: the model's recipe / coop */
    int batch, microbatches, repeat;   /* 0: the model's recipe */
    int replicas, ipus;                /* 0: not given */
    ipup_optimizer_kind optimizer;
    int optimizer_given, recompute, offload, strict;
    int auto_plan, auto_table;         /* --auto, --auto-table */
    size_t ipu_memory;                 /* --ipu-memory BYTES: on-chip bytes per IPU (0: none) */
    uint32_t recompute_stages;         /* --recompute-stages S0,S1,...: a bit per stage */
    int32_t dtype, accum_dtype, first_moment_dtype; /* --dtype, --accum-dtype, --first-moment-dtype */
    int32_t fp32_weights;                           /* --fp32-weights */
    float loss_scale;                  /* --loss-scale N (memory: none; carried into the header) */
    int loss_dynamic;                  /* --loss-scale dynamic */
    const char *out;                   /* -o FILE, NULL: stdout */
    const char *out_flag;              /* how -o was spelled (-o, --output), for messages */
    int argc;                          /* the command for the header's comment: argv without --input and -o */
    char *argv[PT_MAX_ARGS];
} pt_opts;

static void pt_usage(FILE *f) {
    fprintf(f,
            "usage: ipupipe-plan [--model NAME|TEXT] [--input HxWxC] [options] [-o FILE]\n"
            "  Prints a C header of #defines: the bytes of every IPU pool (IPUP_PLAN_IPU<i>_BYTES), its\n"
            "  streaming memory (IPUP_PLAN_STREAM<i>_BYTES), the host pool (IPUP_PLAN_HOST_BYTES) and the\n"
            "  IPUP_MAX_* limits the configuration needs, as ipup_plan_pools computes them, and the\n"
            "  configuration itself (IPUP_PLAN_MODEL_TEXT, IPUP_PLAN_BATCH, IPUP_PLAN_MICROBATCHES,\n"
            "  IPUP_PLAN_SCHEDULE, IPUP_PLAN_SPLIT_LIST, ...), so that a program fills ipup_config from it.\n"
            "  The options mean what build/mnist-train's of the same name do.\n"
            "  --model NAME|TEXT            mlp, cnn, mlp-gelu (the MNIST models, 28x28x1 images, with their\n"
            "                               recipes), ds-cnn, mobilenet-v1-0.25, resnet8, resnet8-fashion,\n"
            "                               fc-ae (MLPerf Tiny, their input shapes; docs/models.md),\n"
            "                               or a model text such as dense64,relu,dense10,xent\n"
            "                               (needs --input; recipe: 1 stage, B=1, M=1, SGD, grouped). Default mlp\n"
            "  --input HxWxC                input shape of one sample (a vector of N features: 1x1xN)\n"
            "  --batch-size B               micro-batch size (samples per micro-batch)\n"
            "  --microbatches M             micro-batches per weight update (gradient accumulation count);\n"
            "                               also --batches-to-accumulate M, --gradient-accumulation M\n"
            "  --repeat-count N             steps per ipup_run call (on-device loop)\n"
            "  --replicas R                 data-parallel replicas of the pipeline\n"
            "  --ipus N                     IPUs in all: N / (IPUs per replica) replicas (N a multiple of them)\n"
            "  --splits LAYER...            first layer of each stage after the first (layer ids: dense64,\n"
            "                               relu, dense32, relu_2, ...); 'none': one stage; 'auto': balance\n"
            "                               the layers' cost over --stages N stages (default 2)\n"
            "  --stages N                   stages for --splits auto\n"
            "  --map D0,D1,...              the IPU of each stage (default: the schedule's), e.g. 0,1,1,0;\n"
            "                               a bracket for a stage on several IPUs: 0,[1,2],3\n"
            "  --schedule NAME              grouped|interleaved|sequential|gpipe|1f1b|interleaved-1f1b|zb-h1\n"
            "                               |zb-h2|zb-v|v-min|v-half|looped-bfs|interleaved-zb|dualpipe-v\n"
            "  --strict                     Graphcore's schedule rules (grouped: M %% 2S == 0) as errors\n"
            "  --optimizer sgd|momentum|adam\n"
            "  --recompute                  stash stage inputs only, recompute forwards\n"
            "                               (every stage but the last)\n"
            "  --recompute-stages S0,S1,... the stages that recompute (e.g. 0,1)\n"
            "  --offload [WHAT,...]         to streaming memory: optimizer (the default),\n"
            "                               weights, activations, all\n"
            "  --ipu-memory BYTES           on-chip memory of each IPU (256K, 1M, 4MB): a\n"
            "                               plan over it is refused, with the remedies\n"
            "  --runner coop|threads        cooperative (one thread) or one thread per IPU (default coop)\n"
            );
    fprintf(f,
            "  --dtype float32|float16      storage of weights, activations, stashes and exchanges\n"
            "                               (float16 halves their bytes; the pools' bytes by category\n"
            "                               are then listed); --fp32-weights keeps the weights fp32\n"
            "  --accum-dtype float32|float16  gradient accumulators; --first-moment-dtype: Adam's m\n"
            "  --loss-scale N|dynamic       loss scaling (no bytes; carried into the header)\n"
            );
    fputs("  --auto                       choose the plan (ipup_plan_auto): stages and split,\n"
          "                               schedule, replicas, micro-batch size and count (their\n"
          "                               product: the model's samples per step, or --batch-size\n"
          "                               x --microbatches), recomputation and offload that fit\n"
          "                               --ipu-memory on --ipus N (default 1) with the most\n"
          "                               samples/s of the cost model; prints the plan (stderr)\n"
          "                               and its header. Not with --splits, --stages, --map,\n"
          "                               --schedule, --replicas, --recompute(-stages), --offload\n"
          "  --auto-table                 the plans --auto chooses for mlp, cnn and mlp-gelu at\n"
          "                               128K, 256K, 512K, 1M and 4M per IPU on 2 and 4 IPUs, with\n"
          "                               their predicted samples/s and those one ipup_run reports\n"
            "  -o, --output FILE            write the header to FILE (complete, or not at all); default stdout\n"
            "  -h, --help                   this text\n"
            "  example: ipupipe-plan --model dense64,relu,dense32,relu,dense10,xent --input 1x1x196 \\\n"
            "               --splits dense32 --batch-size 8 --microbatches 4 --optimizer sgd -o pools.h\n"
            "  Exit 0; 2 on a usage or configuration error; 1 when the header cannot be written.\n", f);
}

#if defined(__GNUC__) || defined(__clang__)
static int pt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
static int pt_err(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "ipupipe-plan: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 2;
}

static const char *pt_opt_name(ipup_optimizer_kind k) {
    return k == IPUP_OPT_SGD ? "sgd" : k == IPUP_OPT_MOMENTUM ? "momentum" : "adam";
}

static int pt_int(const char *flag, const char *v, int lo, int hi, int *out) {
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) return pt_err("%s needs an integer in %d..%d, got '%s'", flag, lo, hi, v);
    *out = (int)x;
    return 0;
}

/* "28x28x1" into h, w, c (each 1..65535); 0, or 2 after a message */
static int pt_shape(pt_opts *o, const char *v) {
    int *dim[3];
    const char *p = v;
    int k;
    dim[0] = &o->in_h;
    dim[1] = &o->in_w;
    dim[2] = &o->in_c;
    for (k = 0; k < 3; k++) {
        char *end;
        long x;
        errno = 0;
        x = strtol(p, &end, 10);
        if (errno || end == p || x < 1 || x > 65535 || *p == '+' || *p == '-' || (k < 2 && *end != 'x') || (k == 2 && *end))
            return pt_err("--input needs HxWxC, three integers in 1..65535 such as 28x28x1 or 1x1x64, got '%s'", v);
        *dim[k] = (int)x;
        p = end + 1;
    }
    o->input = v;
    return 0;
}

static int pt_add_split(pt_opts *o, const char *s) {
    if (o->n_splits >= PT_MAX_STAGES - 1) return pt_err("--splits: at most %d splits (%d stages)", PT_MAX_STAGES - 1, PT_MAX_STAGES);
    o->splits[o->n_splits++] = s;
    return 0;
}

/* --splits=a,b or --splits a b ... (the arguments up to the next option); 'auto' and
 * 'none' alone are words, not layers. */
static int pt_parse_splits(pt_opts *o, const char *v, int argc, char **argv, int *i) {
    o->splits_given = 1;
    o->n_splits = 0;
    o->splits_auto = 0;
    if (v) {
        static char buf[512];
        char *s, *tok;
        ipup_snprintf(buf, sizeof buf, "%s", v);
        for (s = buf; (tok = strtok(s, ", ")) != NULL; s = NULL)
            if (pt_add_split(o, tok)) return 2;
    } else {
        while (*i + 1 < argc && argv[*i + 1][0] != '-')
            if (pt_add_split(o, argv[++*i])) return 2;
    }
    if (o->n_splits == 1 && strcmp(o->splits[0], "auto") == 0) {
        o->splits_auto = 1;
        o->n_splits = 0;
    } else if (o->n_splits == 1 && strcmp(o->splits[0], "none") == 0) {
        o->n_splits = 0;
    }
    return 0;
}

/* --offload alone (the optimizer state), --offload=LIST or --offload LIST (a next
 * argument that is not an option) */
static int pt_parse_offload(pt_opts *o, const char *v, int argc, char **argv, int *i) {
    int32_t bits = IPUP_OFFLOAD_OPTIMIZER;
    if (!v && *i + 1 < argc && argv[*i + 1][0] != '-') v = argv[++*i];
    if (v && ipup_offload_parse(v, &bits) != IPUP_OK)
        return pt_err("--offload: unknown '%s' (a comma list of optimizer, weights, "
                      "activations; or all)", v);
    o->offload = (int)bits;
    return 0;
}

/* The options without a value; 1 when flag is one of them. */
static int pt_parse_switch(pt_opts *o, const char *flag) {
    if (strcmp(flag, "--strict") == 0) o->strict = 1;
    else if (strcmp(flag, "--recompute") == 0) o->recompute = 1;
    else if (strcmp(flag, "--auto") == 0) o->auto_plan = 1;
    else if (strcmp(flag, "--fp32-weights") == 0) o->fp32_weights = 1;
    else if (strcmp(flag, "--auto-table") == 0) o->auto_table = 1;
    else return 0;
    return 1;
}

/* The options with a value; 0, 2 after a message, or -1 when flag is none of them. */
static int pt_parse_value(pt_opts *o, const char *flag, const char *v) {
#define PT_IS(name) (strcmp(flag, name) == 0)
    if (PT_IS("--model")) o->model = v;
    else if (PT_IS("--input")) return pt_shape(o, v);
    else if (PT_IS("--batch-size")) return pt_int(flag, v, 1, 4096, &o->batch);
    else if (PT_IS("--microbatches") || PT_IS("--batches-to-accumulate") || PT_IS("--gradient-accumulation"))
        return pt_int(flag, v, 1, 1 << 16, &o->microbatches);
    else if (PT_IS("--repeat-count")) return pt_int(flag, v, 1, 1 << 20, &o->repeat);
    else if (PT_IS("--dtype") || PT_IS("--accum-dtype") || PT_IS("--first-moment-dtype")) {
        int32_t *dst = PT_IS("--dtype") ? &o->dtype : PT_IS("--accum-dtype") ? &o->accum_dtype : &o->first_moment_dtype;
        if (ipup_dtype_parse(v, dst) != IPUP_OK) return pt_err("%s: unknown '%s' (float32 or float16)", flag, v);
    } else if (PT_IS("--loss-scale")) {
        char *end;
        double x;
        if (strcmp(v, "dynamic") == 0) {
            o->loss_dynamic = 1;
            return 0;
        }
        x = strtod(v, &end);
        if (end == v || *end || !(x >= 1.0 && x <= 4.0e9))
            return pt_err("--loss-scale needs a number in [1, 4e9] or 'dynamic', got '%s'", v);
        o->loss_scale = (float)x;
    }
    else if (PT_IS("--replicas")) return pt_int(flag, v, 1, IPUP_MAX_REPLICAS, &o->replicas);
    else if (PT_IS("--ipus")) return pt_int(flag, v, 1, IPUP_MAX_IPUS, &o->ipus);
    else if (PT_IS("--ipu-memory")) {
        if (ipup_bytes_parse(v, &o->ipu_memory) != IPUP_OK || !o->ipu_memory)
            return pt_err("--ipu-memory needs a byte count > 0 such as 262144, 256K, 1M or "
                          "4MB, got '%s'", v);
    } else if (PT_IS("--recompute-stages")) {
        if (ipup_stage_mask_parse(v, &o->recompute_stages) != IPUP_OK)
            return pt_err("--recompute-stages needs a comma list of distinct stage indices "
                          "0..31 such as 0,1, got '%s'", v);
    }
    else if (PT_IS("--stages")) {
        o->stages_given = 1;
        return pt_int(flag, v, 1, PT_MAX_STAGES, &o->stages);
    } else if (PT_IS("--map")) o->map = v;
    else if (PT_IS("--schedule")) o->schedule = v;
    else if (PT_IS("--runner")) o->runner = v;
    else if (PT_IS("-o") || PT_IS("--output")) {
        o->out = v;
        o->out_flag = PT_IS("-o") ? "-o" : "--output";
    } else if (PT_IS("--optimizer")) {
        if (strcmp(v, "sgd") == 0) o->optimizer = IPUP_OPT_SGD;
        else if (strcmp(v, "momentum") == 0) o->optimizer = IPUP_OPT_MOMENTUM;
        else if (strcmp(v, "adam") == 0) o->optimizer = IPUP_OPT_ADAM;
        else return pt_err("--optimizer: unknown '%s' (sgd, momentum or adam)", v);
        o->optimizer_given = 1;
    } else return -1;
#undef PT_IS
    return 0;
}

/* An option this tool does not take: a clear word on what to do instead. */
static int pt_unknown(const char *a, const char *flag) {
    static const char *const trainer[] = {"--epochs", "--learning-rate", "--lr-decay", "--momentum", "--augment",
                                          "--seed", "--data", "--train-limit", "--test-limit", "--save", "--load",
                                          "--trace", "--summary-json", "--export-c", "--export-name", "--progress",
                                          "--no-progress", "--quiet"};
    size_t k;
    for (k = 0; k < sizeof trainer / sizeof trainer[0]; k++)
        if (strcmp(flag, trainer[k]) == 0)
            return pt_err("unknown option '%s': %s is build/mnist-train's and does not change the pools; leave it out "
                          "(see --help)",
                          a, flag);
    return pt_err("unknown option '%s' (see --help)", a);
}

/* 1 when flag is one of the options that take a value (pt_parse_value's) */
static int pt_takes_value(const char *flag) {
    static const char *const names[] = {"--model", "--input", "--batch-size", "--microbatches", "--batches-to-accumulate",
                                        "--gradient-accumulation", "--repeat-count", "--replicas", "--ipus", "--stages",
                                        "--map", "--schedule", "--runner", "-o", "--output",
                                        "--optimizer", "--ipu-memory", "--recompute-stages",
                                        "--dtype", "--accum-dtype", "--first-moment-dtype",
                                        "--loss-scale"};
    size_t k;
    for (k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(flag, names[k]) == 0) return 1;
    return 0;
}

/* argv into *o; 0, or 2 after a message. --help prints the usage and exits 0. */
static int pt_parse(int argc, char **argv, pt_opts *o) {
    int i, rc;
    memset(o, 0, sizeof *o);
    o->model = "mlp";
    o->stages = 2;
    o->argv[o->argc++] = argv[0];
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL, *eq = strchr(a, '=');
        char flag[64];
        int first = i;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            pt_usage(stdout);
            exit(0);
        }
        if (strncmp(a, "--", 2) != 0 && strcmp(a, "-o") != 0)
            return pt_err("unexpected argument '%s' (options start with --; see --help)", a);
        ipup_snprintf(flag, sizeof flag, "%.*s", eq && eq - a < 63 ? (int)(eq - a) : 63, a);
        if (eq && eq - a < 63) v = eq + 1;
        if (strcmp(flag, "--splits") == 0) rc = pt_parse_splits(o, v, argc, argv, &i);
        else if (strcmp(flag, "--offload") == 0) rc = pt_parse_offload(o, v, argc, argv, &i);
        else if (pt_parse_switch(o, flag)) rc = v ? pt_err("%s takes no value, got '%s'", flag, a) : 0;
        else if (!pt_takes_value(flag)) return pt_unknown(a, flag);
        else if (!v && i + 1 >= argc) return pt_err("%s needs a value (see --help)", flag);
        else rc = pt_parse_value(o, flag, v ? v : argv[++i]);
        if (rc) return rc;
        if (strcmp(flag, "--input") == 0 || strcmp(flag, "-o") == 0 || strcmp(flag, "--output") == 0) continue;
        for (; first <= i; first++) {
            if (o->argc >= PT_MAX_ARGS) return pt_err("too many arguments (at most %d)", PT_MAX_ARGS - 1);
            o->argv[o->argc++] = argv[first];
        }
    }
    if (o->auto_plan || o->auto_table) {
        const char *fixed = o->splits_given ? "--splits" : o->stages_given ? "--stages" : o->map ? "--map"
                            : o->schedule ? "--schedule" : o->replicas ? "--replicas" : o->recompute ? "--recompute"
                            : o->recompute_stages ? "--recompute-stages" : o->offload ? "--offload" : NULL;
        if (fixed) return pt_err("%s chooses %s itself; leave %s out", o->auto_plan ? "--auto" : "--auto-table", fixed, fixed);
        if (o->auto_table && (o->auto_plan || o->ipu_memory || o->ipus || o->out))
            return pt_err("--auto-table prints its own table of models, IPUs and memories; give it alone");
        if (o->auto_plan && !o->ipu_memory) return pt_err("--auto needs --ipu-memory BYTES (the on-chip memory of each IPU)");
        return 0;
    }
    if (o->stages_given && !o->splits_auto)
        return pt_err("--stages %d is the stage count of --splits auto; add --splits auto, or name the first layer of "
                      "each stage with --splits",
                      o->stages);
    return 0;
}

#endif /* PLAN_OPTIONS_H */
