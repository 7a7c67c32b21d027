/* mnist_options.h - the command line of the MNIST trainer (examples/mnist/mnist-train.c):
 * the options (mt_opts), their parsing (mt_parse), the usage text (mt_usage), the
 * model's recipe for every option not given (mt_resolve), and the error printer every
 * part of the trainer reports through (mt_err, counted in mt_errors so that a fuzz
 * target can check that each refusal printed a message). MIT licence.
 *
 * Parsing only reads argv and the model table: it opens no file and starts nothing,
 * so tests and fuzz targets call it directly. Errors print one line on stderr and
 * return 2 (the trainer's exit code for a usage error).
 */
#ifndef MNIST_OPTIONS_H
#define MNIST_OPTIONS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_c.h"
#include "ipupipe.h"
#include "mnist_models.h"

#define MT_MAX_STAGES 16

typedef struct {
    const char *model;
    const char *splits[MT_MAX_STAGES];
    int n_splits, splits_auto, splits_given, stages, ipus; /* ipus: 0 = not given */
    const char *schedule;
    const char *map; /* --map text, NULL: the schedule's default mapping */
    int batch, accumulate, repeat, epochs, replicas, recompute, offload, augment;
    float lr, momentum, lr_decay;
    int lr_given, momentum_given, decay_given, augment_given, epochs_given;
    ipup_optimizer_kind optimizer;
    int optimizer_given;
    float adam_eps, weight_decay;      /* --adam-eps (0: the recipe's), --weight-decay */
    int no_bias_correction;            /* --no-bias-correction */
    const char *adam_given;            /* the last Adam option given ("adam-eps", ...), or NULL */
    int test_batch;                    /* --test-batch-size (0: the training micro-batch) */
    const char *runner;
    uint64_t seed;
    int seed_given;
    const char *data;
    int train_limit, test_limit;
    const char *save, *load, *trace, *summary;
    int quiet, progress; /* progress: -1 auto (terminal), 0 off, 1 on */
    int strict;          /* Graphcore API rules of the schedule as errors */
    size_t ipu_memory;   /* --ipu-memory: on-chip bytes per IPU (0: unlimited) */
    uint32_t recompute_stages; /* --recompute-stages: a bit per stage (0: --recompute's default) */
    const char *export_c, *export_name; /* --export-c FILE.h, --export-name NAME (examples/common/export_c.h) */
    int32_t dtype, accum_dtype, first_moment_dtype; /* --dtype, --accum-dtype, --first-moment-dtype */
    int32_t fp32_weights;                           /* --fp32-weights */
    float loss_scale;    /* --loss-scale N (0: none) */
    int loss_dynamic;    /* --loss-scale dynamic */
    int loss_period;     /* --loss-scale-period N (0: the library's 2000) */
    const char *plan;    /* --plan auto: ipup_plan_auto chooses the pipeline (NULL: the options') */
    double launch_seconds; /* --launch-seconds S (launch_given): the cost model's per-call launch */
    int launch_given;
    int synthetic;       /* --synthetic-data: random images made once in host memory, no infeed cost */
    int infeed_bench;    /* --infeed-benchmark: the host feed's samples/s against the IPUs' */
    int outfeed;         /* --outfeed loss|outputs|both: 1 + IPUP_OUTFEED_*, 0 = not given */
} mt_opts;

static void mt_usage(FILE *f) {
    fprintf(f,
            "usage: mnist-train [options]\n"
            "  --model mlp|cnn|mlp-gelu     the network (default mlp: the TF1 tutorial's); also the\n"
            "                               MLPerf Tiny networks ds-cnn, mobilenet-v1-0.25, resnet8,\n"
            "                               fc-ae (--data synthetic) and resnet8-fashion\n"
            "  --splits LAYER...            first layer of each stage after the first (TF1 tutorial\n"
            "                               step 4); 'auto' balances the cost model over --stages;\n"
            "                               'none': one stage on one IPU\n"
            "  --stages N                   stages for --splits auto (default 2)\n"
            "  --ipus N                     IPUs in all: N / (IPUs per replica) replicas of the\n"
            "                               pipeline (Graphcore's auto_select_ipus); N must be a\n"
            "                               multiple of the IPUs one replica uses\n"
            "  --map D0,D1,...              the IPU of each stage (TF's device_mapping; default\n"
            "                               stage s on IPU s), e.g. 0,1,1,0\n"
            "  --schedule NAME              grouped|interleaved|sequential|gpipe|1f1b|\n"
            "                               interleaved-1f1b|zb-h1|zb-h2|zb-v|v-min|v-half|\n"
            "                               looped-bfs|interleaved-zb|dualpipe-v|dualpipe\n"
            "                               (default grouped); zb-v,\n"
            "                               v-min, v-half, dualpipe-v need the V: 2 stages per IPU, e.g.\n"
            "                               --stages 4 --map 0,1,1,0; looped-bfs and\n"
            "                               interleaved-zb stage s on IPU s mod P, e.g. --stages 4\n"
            "                               --map 0,1,0,1; sharding: the model split over IPUs\n"
            "                               without pipelining, one IPU at work at a time\n"
            "                               (= sequential); dualpipe: two model copies,\n"
            "                               run as 2 replicas x M/2 micro-batches (P even,\n"
            "                               M even, M >= 2P)\n"
            "  --batch-size B               micro-batch size\n"
            "  --batches-to-accumulate M    micro-batches per weight update (gradient accumulation)\n"
            "  --repeat-count N             steps per emulator call (on-device loop)\n"
            "  --epochs N                   total epochs (a resumed run continues up to N)\n"
            "  --learning-rate LR           base learning rate\n"
            "  --lr-decay D                 learning rate of epoch e = LR * D^e\n"
            "  --momentum MU                momentum coefficient (--optimizer momentum)\n"
            "  --optimizer sgd|momentum|adam\n"
            "  --adam-eps EPS               Adam's epsilon (default: the model's recipe; mlp-gelu\n"
            "                               1e-5 as the PopXL tutorial, the others 1e-8)\n"
            "  --weight-decay WD            Adam's decoupled weight decay (AdamW, as PopXL's\n"
            "                               adam_updater): w -= lr * (update + WD * w); default 0\n"
            "  --no-bias-correction         Adam without bias correction (PopXL's\n"
            "                               bias_correction=False)\n"
            );
    fprintf(f, /* two strings: C11 compilers need only support 4095 characters in one */
            "  --augment PIXELS             random shift of training images (0: off)\n"
            "  --replicas R                 data-parallel replicas of the pipeline\n"
            "  --strict                     Graphcore's schedule rules (e.g. grouped: M %% 2S == 0)\n"
            "                               as errors instead of warnings\n"
            "  --recompute                  stash stage inputs only, recompute forwards (every\n"
            "                               stage but the last, as Graphcore does)\n"
            "  --recompute-stages S0,S1,... the stages that recompute (e.g. 0,1)\n"
            "  --offload [WHAT,...]         to streaming memory: optimizer (the default),\n"
            "                               weights, activations, all\n"
            "  --ipu-memory BYTES           on-chip memory of each IPU (256K, 1M, 4MB): a\n"
            "                               plan that does not fit is refused, with remedies\n"
            );
    fprintf(f,
            "  --dtype float32|float16      storage of weights, activations, stashes and exchanges\n"
            "                               (float16: IEEE binary16, arithmetic in fp32, the weights'\n"
            "                               updates rounded stochastically)\n"
            "  --fp32-weights               with --dtype float16: keep the weights fp32 (master weights)\n"
            "  --accum-dtype float32|float16  gradient accumulators (TF1's gradient_accumulation_dtype)\n"
            "  --loss-scale N|dynamic       multiply the loss by N, divide the gradients (dynamic: start\n"
            "                               at 32768, or at N when both are given; halve and skip the\n"
            "                               step on overflow, double after --loss-scale-period N clean\n"
            "                               steps, default 2000)\n"
            "  --first-moment-dtype float32|float16  Adam's m (PopXL's first_order_dtype)\n"
            );
    fprintf(f,
            "  --launch-seconds S           the cost model's launch of each emulator call (the host\n"
            "                               loop; default 0.002828, the Keras tutorial's; 0: none)\n"
            "  --synthetic-data             random images and labels made once in host memory: no\n"
            "                               reads of --data, no infeed cost in the cost model (the\n"
            "                               TF user guide's synthetic-data mode)\n"
            "  --infeed-benchmark           time the infeed over one epoch against the samples/s the\n"
            "                               simulated IPUs consume (the user guide's\n"
            "                               dataset_benchmark), then stop: no training\n"
            "  --outfeed loss|outputs|both  what the outfeed carries to the host during the run (TF1's\n"
            "                               outfeed): the loss records, the last stage's outputs (the\n"
            "                               loss layer's input rows), or both; a closing line counts them\n"
            );
    fputs("  --plan auto                  the pipeline that fits --ipu-memory on --ipus N\n"
          "                               (default 1) with the most simulated samples/s\n"
          "                               (ipup_plan_auto): stages, split, schedule, replicas,\n"
          "                               batch size x micro-batches (the recipe's samples per\n"
          "                               step), recomputation, offload\n"
            "  --runner coop|threads        cooperative (one thread) or one thread per IPU\n"
            "  --seed N                     initialisation, shuffling, dropout (default 1)\n"
            "  --data DIR                   MNIST IDX files (default data/mnist; 'make data'; Fashion-\n"
            "                               MNIST: 'make data-fashion', data/fashion-mnist);\n"
            "                               'synthetic': made-up data of the model's input shape\n"
            "  --train-limit N              use the first N training images\n"
            "  --test-limit N               use the first N test images\n"
            "  --test-batch-size N          micro-batch of the test evaluation (PopXL tests with\n"
            "                               80 while training with 5); default --batch-size\n"
            "  --save FILE                  checkpoint at the end (weights, optimizer state, step)\n"
            "  --load FILE                  resume from a checkpoint\n"
            "  --trace FILE.json            Chrome trace of one step (chrome://tracing, Perfetto)\n"
            "  --summary-json FILE          figures of the run as JSON\n"
            "  --export-c FILE.h            the trained model as a C header: weights as const arrays and a\n"
            "                               predict function that needs only ipupipe_kernels.h\n"
            "  --export-name NAME           prefix of its C names (default: FILE's base name)\n"
            "  --progress / --no-progress   progress bar (default: when stdout is a terminal)\n"
            "  --quiet                      only the closing lines\n", f);
}

/* Option values (schedule, runner) compare as the library's names do: ASCII case
 * folded, '_' equal to '-'. */
static inline int mt_name_eq(const char *a, const char *b) {
    for (;; a++, b++) {
        int ca = (unsigned char)*a, cb = (unsigned char)*b;
        if (ca >= 'A' && ca <= 'Z') ca += 'a' - 'A';
        if (cb >= 'A' && cb <= 'Z') cb += 'a' - 'A';
        if ((ca == '_' ? '-' : ca) != (cb == '_' ? '-' : cb)) return 0;
        if (!ca) return 1;
    }
}

static unsigned mt_errors; /* messages printed; the fuzz target checks each refusal printed one */
#ifndef MT_PROG
#define MT_PROG "mnist-train" /* the program named in front of each message (define it first to name another) */
#endif

#if defined(__GNUC__) || defined(__clang__)
static int mt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
static int mt_err(const char *fmt, ...) {
    va_list ap;
    mt_errors++;
    fprintf(stderr, "%s: error: ", MT_PROG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 2;
}

static int mt_int(const char *flag, const char *v, int lo, int hi, int *out) {
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return mt_err("%s needs an integer in %d..%d, got '%s'", flag, lo, hi, v);
    *out = (int)x;
    return 0;
}

/* A number in [lo, hi], compared as the double the user wrote (so "0.9999" is inside
 * [0, 0.9999]), stored as a float. */
static int mt_float(const char *flag, const char *v, double lo, double hi, float *out) {
    char *end;
    double x;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        return mt_err("%s needs a number in [%g, %g], got '%s'", flag, lo, hi, v);
    *out = (float)x;
    return 0;
}

static const char *mt_opt_name(ipup_optimizer_kind k) {
    return k == IPUP_OPT_SGD ? "sgd" : k == IPUP_OPT_MOMENTUM ? "momentum" : "adam";
}

/* Adds one --splits value; 2 after a message when there are too many. */
static int mt_add_split(mt_opts *o, const char *s) {
    if (o->n_splits >= MT_MAX_STAGES - 1) return mt_err("--splits: at most %d splits", MT_MAX_STAGES - 1);
    o->splits[o->n_splits++] = s;
    return 0;
}

/* --splits=a,b or --splits a b ... (the arguments up to the next option); 'auto' and
 * 'none' alone are words, not layers. */
static int mt_parse_splits(mt_opts *o, const char *v, int argc, char **argv, int *i) {
    o->splits_given = 1;
    if (v) {
        static char buf[512];
        char *s, *tok;
        ipup_snprintf(buf, sizeof buf, "%s", v);
        for (s = buf; (tok = strtok(s, ", ")) != NULL; s = NULL)
            if (mt_add_split(o, tok)) return 2;
    } else {
        while (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
            if (mt_add_split(o, argv[++*i])) return 2;
    }
    if (o->n_splits == 1 && strcmp(o->splits[0], "auto") == 0) {
        o->splits_auto = 1;
        o->n_splits = 0;
    } else if (o->n_splits == 1 && strcmp(o->splits[0], "none") == 0) {
        o->n_splits = 0; /* one stage: the whole model on one IPU */
    }
    return 0;
}

/* --offload alone (the optimizer state), --offload=LIST or --offload LIST (a next
 * argument that is not an option) */
static int mt_parse_offload(mt_opts *o, const char *v, int argc, char **argv, int *i) {
    int32_t bits = IPUP_OFFLOAD_OPTIMIZER;
    if (!v && *i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) v = argv[++*i];
    if (v && ipup_offload_parse(v, &bits) != IPUP_OK)
        return mt_err("--offload: unknown '%s' (a comma list of optimizer, weights, activations; "
                      "or all)", v);
    o->offload = (int)bits;
    return 0;
}

/* The options without a value; 1 when flag is one of them. */
static int mt_parse_switch(mt_opts *o, const char *flag) {
    if (strcmp(flag, "--strict") == 0) o->strict = 1;
    else if (strcmp(flag, "--recompute") == 0) o->recompute = 1;
    else if (strcmp(flag, "--fp32-weights") == 0) o->fp32_weights = 1;
    else if (strcmp(flag, "--no-bias-correction") == 0) {
        o->no_bias_correction = 1;
        o->adam_given = "no-bias-correction";
    }
    else if (strcmp(flag, "--quiet") == 0) o->quiet = 1;
    else if (strcmp(flag, "--progress") == 0) o->progress = 1;
    else if (strcmp(flag, "--no-progress") == 0) o->progress = 0;
    else if (strcmp(flag, "--synthetic-data") == 0) o->synthetic = 1;
    else if (strcmp(flag, "--infeed-benchmark") == 0) o->infeed_bench = 1;
    else return 0;
    return 1;
}

/* 1 when flag takes a value (given as --flag=v or as the next argument). */
static int mt_takes_value(const char *flag) {
    static const char *const names[] = {
        "--model",         "--ipus",      "--stages",    "--map",       "--schedule",  "--batch-size", "--batches-to-accumulate",
        "--gradient-accumulation", "--repeat-count", "--epochs", "--learning-rate", "--lr-decay",
        "--momentum",      "--optimizer", "--augment",   "--replicas",   "--runner",
        "--seed",          "--data",      "--train-limit", "--test-limit", "--save",
        "--load",          "--trace",     "--summary-json", "--export-c", "--export-name",
        "--adam-eps",      "--weight-decay", "--test-batch-size", "--ipu-memory",
        "--recompute-stages", "--dtype", "--accum-dtype", "--loss-scale",
        "--loss-scale-period", "--first-moment-dtype", "--plan", "--launch-seconds", "--outfeed"};
    size_t k;
    for (k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(flag, names[k]) == 0) return 1;
    return 0;
}

/* The numeric options; 0, 2 after a message, or -1 when flag is not one of them. */
static int mt_parse_number(mt_opts *o, const char *flag, const char *v) {
#define MT_IS(name) (strcmp(flag, name) == 0)
    if (MT_IS("--ipus")) return mt_int(flag, v, 1, IPUP_MAX_IPUS, &o->ipus);
    if (MT_IS("--stages")) return mt_int(flag, v, 1, MT_MAX_STAGES, &o->stages);
    if (MT_IS("--batch-size")) return mt_int(flag, v, 1, 4096, &o->batch);
    if (MT_IS("--batches-to-accumulate") || MT_IS("--gradient-accumulation"))
        return mt_int(flag, v, 1, 1 << 16, &o->accumulate);
    if (MT_IS("--repeat-count")) return mt_int(flag, v, 1, 1 << 20, &o->repeat);
    if (MT_IS("--replicas")) return mt_int(flag, v, 1, IPUP_MAX_REPLICAS, &o->replicas);
    if (MT_IS("--train-limit")) return mt_int(flag, v, 1, 1 << 30, &o->train_limit);
    if (MT_IS("--test-limit")) return mt_int(flag, v, 1, 1 << 30, &o->test_limit);
    if (MT_IS("--test-batch-size")) return mt_int(flag, v, 1, 4096, &o->test_batch);
    if (MT_IS("--weight-decay")) {
        o->adam_given = "weight-decay";
        return mt_float(flag, v, 0.0, 1.0, &o->weight_decay);
    }
    if (MT_IS("--adam-eps")) {
        o->adam_given = "adam-eps";
        if (mt_float(flag, v, 0.0, 1.0, &o->adam_eps)) return 2;
        if (!(o->adam_eps > 0.0f))
            return mt_err("--adam-eps must be > 0 (e.g. 1e-8 or 1e-5), got '%s'", v);
        return 0;
    }
    if (MT_IS("--epochs")) {
        o->epochs_given = 1;
        return mt_int(flag, v, 1, 100000, &o->epochs);
    }
    if (MT_IS("--augment")) {
        o->augment_given = 1;
        return mt_int(flag, v, 0, 4, &o->augment);
    }
    if (MT_IS("--learning-rate")) {
        if (mt_float(flag, v, 0.0, 100.0, &o->lr)) return 2;
        if (!(o->lr > 0.0f)) return mt_err("--learning-rate must be > 0, got '%s'", v);
        o->lr_given = 1;
        return 0;
    }
    if (MT_IS("--lr-decay")) {
        o->decay_given = 1;
        return mt_float(flag, v, 0.0, 1.0, &o->lr_decay);
    }
    if (MT_IS("--momentum")) {
        o->momentum_given = 1;
        return mt_float(flag, v, 0.0, 0.9999, &o->momentum);
    }
    if (MT_IS("--loss-scale-period")) return mt_int(flag, v, 1, 1 << 30, &o->loss_period);
    if (MT_IS("--loss-scale")) {
        if (strcmp(v, "dynamic") == 0) {
            o->loss_dynamic = 1;
            return 0;
        }
        if (mt_float(flag, v, 1.0, 4.0e9, &o->loss_scale)) return 2;
        return 0;
    }
    if (MT_IS("--dtype") || MT_IS("--accum-dtype") || MT_IS("--first-moment-dtype")) {
        int32_t *dst = MT_IS("--dtype") ? &o->dtype : MT_IS("--accum-dtype") ? &o->accum_dtype : &o->first_moment_dtype;
        if (ipup_dtype_parse(v, dst) != IPUP_OK) return mt_err("%s: unknown '%s' (float32 or float16)", flag, v);
    }
    if (MT_IS("--launch-seconds")) {
        char *end;
        errno = 0;
        o->launch_seconds = strtod(v, &end);
        if (errno || end == v || *end || !(o->launch_seconds >= 0.0 && o->launch_seconds <= 1e3))
            return mt_err("--launch-seconds needs seconds in [0, 1000] (0: no launch cost), got '%s'", v);
        o->launch_given = 1;
        return 0;
    }
    if (MT_IS("--seed")) {
        char *end;
        errno = 0;
        o->seed = strtoull(v, &end, 10);
        if (errno || end == v || *end || v[0] == '-') return mt_err("--seed needs a non-negative integer, got '%s'", v);
        o->seed_given = 1;
        return 0;
    }
    return -1;
}

/* The options with a value; 0 or 2 after a message. flag is one of mt_takes_value's. */
static int mt_parse_value(mt_opts *o, const char *flag, const char *v) {
    int rc = mt_parse_number(o, flag, v);
    if (rc >= 0) return rc;
    if (MT_IS("--model")) o->model = v;
    else if (MT_IS("--schedule")) o->schedule = v;
    else if (MT_IS("--map")) o->map = v;
    else if (MT_IS("--runner")) o->runner = v;
    else if (MT_IS("--data")) o->data = v;
    else if (MT_IS("--save")) o->save = v;
    else if (MT_IS("--load")) o->load = v;
    else if (MT_IS("--trace")) o->trace = v;
    else if (MT_IS("--summary-json")) o->summary = v;
    else if (MT_IS("--export-c")) o->export_c = v;
    else if (MT_IS("--export-name")) o->export_name = v;
    else if (MT_IS("--plan")) {
        if (strcmp(v, "auto") != 0) return mt_err("--plan: unknown '%s' (auto: the plan ipup_plan_auto chooses)", v);
        o->plan = v;
    }
    else if (MT_IS("--ipu-memory")) {
        if (ipup_bytes_parse(v, &o->ipu_memory) != IPUP_OK || !o->ipu_memory)
            return mt_err("--ipu-memory needs a byte count > 0 such as 262144, 256K, 1M or 4MB, "
                          "got '%s'", v);
    } else if (MT_IS("--recompute-stages")) {
        if (ipup_stage_mask_parse(v, &o->recompute_stages) != IPUP_OK)
            return mt_err("--recompute-stages needs a comma list of distinct stage indices "
                          "0..31 such as 0,1, got '%s'", v);
    }
    else if (MT_IS("--outfeed")) {
        if (strcmp(v, "loss") == 0) o->outfeed = 1 + IPUP_OUTFEED_LOSS;
        else if (strcmp(v, "outputs") == 0) o->outfeed = 1 + IPUP_OUTFEED_OUTPUTS;
        else if (strcmp(v, "both") == 0) o->outfeed = 1 + IPUP_OUTFEED_BOTH;
        else return mt_err("--outfeed: unknown '%s' (loss, outputs or both)", v);
    }
    else if (MT_IS("--optimizer")) {
        if (strcmp(v, "sgd") == 0) o->optimizer = IPUP_OPT_SGD;
        else if (strcmp(v, "momentum") == 0) o->optimizer = IPUP_OPT_MOMENTUM;
        else if (strcmp(v, "adam") == 0) o->optimizer = IPUP_OPT_ADAM;
        else return mt_err("--optimizer: unknown '%s' (sgd, momentum or adam)", v);
        o->optimizer_given = 1;
    }
#undef MT_IS
    return 0;
}

/* Two outputs into one file would overwrite each other. */
static int mt_check_outputs(const mt_opts *o) {
    const char *out[4], *flag[4] = {"--save", "--trace", "--summary-json", "--export-c"};
    int x, y;
    out[0] = o->save;
    out[1] = o->trace;
    out[2] = o->summary;
    out[3] = o->export_c;
    if (o->export_name && !o->export_c) return mt_err("--export-name needs --export-c FILE.h");
    if (o->export_c) { /* the name the export will have, refused now rather than after training */
        char msg[640], name[EXPC_NAME_MAX + 1];
        if (expc_name_choose(o->export_c, o->export_name, name, sizeof name, msg, sizeof msg) != IPUP_OK)
            return mt_err("%s", msg);
    }
    for (x = 0; x < 4; x++)
        for (y = x + 1; y < 4; y++)
            if (out[x] && out[y] && *out[x] && strcmp(out[x], out[y]) == 0)
                return mt_err("%s and %s both name %s; give each output its own file", flag[x], flag[y], out[x]);
    return 0;
}

/* Drops every output option (--save, --trace, --summary-json, --export-c and its
 * --export-name), however spelled: the rule of a process that writes no files (an MPI
 * rank other than 0, mnist-train-mpi.c). After mt_parse, which checked them. */
static inline void mt_drop_outputs(mt_opts *o) {
    o->save = o->trace = o->summary = o->export_c = o->export_name = NULL;
}

/* argv into *o (defaults for what is not given; the model's recipe is mt_resolve's).
 * 0, or 2 after a message. --help prints the usage and exits 0. */
static int mt_parse(int argc, char **argv, mt_opts *o) {
    int i, rc;
    memset(o, 0, sizeof *o);
    o->model = "mlp";
    o->runner = "coop";
    o->seed = 1;
    o->data = "data/mnist";
    o->progress = -1;
    o->stages = 2;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        char flag[64];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) != 0) return mt_err("unexpected argument '%s' (options start with --; see --help)", a);
        if (eq && (size_t)(eq - a) < sizeof flag) {
            memcpy(flag, a, (size_t)(eq - a));
            flag[eq - a] = 0;
            v = eq + 1;
        } else {
            ipup_snprintf(flag, sizeof flag, "%s", a);
        }
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            mt_usage(stdout);
            exit(0);
        }
        if (strcmp(flag, "--splits") == 0) rc = mt_parse_splits(o, v, argc, argv, &i);
        else if (strcmp(flag, "--offload") == 0) rc = mt_parse_offload(o, v, argc, argv, &i);
        else if (mt_parse_switch(o, flag)) rc = 0;
        else if (!mt_takes_value(flag)) return mt_err("unknown option '%s' (see --help)", a);
        else if (!v && i + 1 >= argc) return mt_err("%s needs a value (see --help)", flag);
        else rc = mt_parse_value(o, flag, v ? v : argv[++i]);
        if (rc) return rc;
    }
    if (o->plan) { /* what --plan auto chooses itself */
        const char *fixed = o->splits_given ? "--splits" : o->map ? "--map" : o->schedule ? "--schedule"
                            : o->replicas ? "--replicas" : o->recompute ? "--recompute"
                            : o->recompute_stages ? "--recompute-stages" : o->offload ? "--offload" : NULL;
        if (fixed) return mt_err("--plan auto chooses %s itself; leave %s out", fixed, fixed);
        if (!o->ipu_memory) return mt_err("--plan auto needs --ipu-memory BYTES (the on-chip memory of each IPU)");
    }
    return mt_check_outputs(o);
}

/* The model's recipe for every option the command line did not give. */
static void mt_resolve(mt_opts *o, const mnist_model_spec *m) {
    if (!o->batch) o->batch = m->batch;
    if (!o->accumulate) o->accumulate = m->accumulate;
    if (!o->repeat) o->repeat = m->repeat;
    if (!o->epochs_given) o->epochs = m->epochs;
    if (!o->optimizer_given) o->optimizer = m->optimizer;
    if (!o->lr_given) o->lr = o->optimizer == m->optimizer ? m->lr : o->optimizer == IPUP_OPT_ADAM ? 0.001f : 0.05f;
    if (!o->momentum_given) o->momentum = m->momentum;
    if (!o->decay_given) o->lr_decay = m->lr_decay;
    if (!o->augment_given) o->augment = m->augment;
    if (!o->schedule) o->schedule = m->schedule;
    if (!(o->adam_eps > 0.0f)) o->adam_eps = m->eps;
}

#endif /* MNIST_OPTIONS_H */
