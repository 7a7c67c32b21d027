/* mnist-train.c - the pipelined MNIST trainer of ipupipe: the three seed tutorials
 * (TensorFlow 1 pipelining, Keras MNIST convnet, PopXL pipelining) as one C program
 * on the multi-IPU emulator of ipupipe.h, on real MNIST data, with no heap call after
 * startup.
 *
 *   build/mnist-train --model mlp|cnn|mlp-gelu [options]     (--help lists them)
 *
 * Startup reads the data, builds the model, plans the pools, allocates once (data,
 * pools, permutation, output buffers), initialises the emulator (which starts its
 * threads), opens the output files and loads --load. After that the program touches
 * no allocator until it exits: the epoch loop, the test evaluation, --save (POSIX
 * write + rename), --trace and --summary-json (written to descriptors opened at
 * startup, as "<path>.tmp" renamed over <path> only when the run succeeds) all run
 * on memory set up before. tests/test_mnist_noheap.c proves it by
 * counting allocator calls (it compiles this file with MNIST_TRAIN_NO_MAIN and
 * hooks MNIST_TRAIN_STARTUP_DONE / MNIST_TRAIN_RUN_DONE).
 *
 * Determinism: the shuffle of epoch e is a Fisher-Yates permutation driven by the
 * counter RNG of ipupipe_kernels.h keyed by (seed, tag + e, i); the augmentation
 * shift of the sample at position p of epoch e by (seed, tag + e, p); the learning
 * rate of epoch e is lr * decay^e. So a run resumed from a checkpoint written after
 * epoch k continues with the bits of an uninterrupted run.
 */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnist_ckpt.h"
#include "mnist_data.h"
#include "mnist_models.h"

#ifndef MNIST_TRAIN_STARTUP_DONE
#define MNIST_TRAIN_STARTUP_DONE() ((void)0)
#endif
#ifndef MNIST_TRAIN_RUN_DONE
#define MNIST_TRAIN_RUN_DONE() ((void)0)
#endif

#define MT_MAX_STAGES 16
#define MT_SHUFFLE_TAG UINT64_C(0x5348554646000000) /* "SHUFF" */
#define MT_AUGMENT_TAG UINT64_C(0x4155474d00000000) /* "AUGM" */

/* ------------------------------------------------------------------ options */
typedef struct {
    const char *model;
    const char *splits[MT_MAX_STAGES];
    int n_splits, splits_auto, splits_given, ipus;
    const char *schedule;
    int batch, accumulate, repeat, epochs, replicas, recompute, offload, augment;
    float lr, momentum, lr_decay;
    int lr_given, momentum_given, decay_given, augment_given, epochs_given;
    int optimizer, optimizer_given;
    const char *runner;
    uint64_t seed;
    int seed_given;
    const char *data;
    int train_limit, test_limit;
    const char *save, *load, *trace, *summary;
    int quiet, progress; /* progress: -1 auto (terminal), 0 off, 1 on */
    int strict;          /* Graphcore API rules of the schedule as errors */
} mt_opts;

static void mt_usage(FILE *f) {
    fprintf(f,
            "usage: mnist-train [options]\n"
            "  --model mlp|cnn|mlp-gelu     the network (default mlp: the TF1 tutorial's)\n"
            "  --splits LAYER...            first layer of each stage after the first (TF1 tutorial\n"
            "                               step 4); 'auto' balances the cost model over --ipus;\n"
            "                               'none': one stage on one IPU\n"
            "  --ipus N                     IPUs for --splits auto (default 2)\n"
            "  --schedule NAME              grouped|interleaved|sequential|gpipe|1f1b|\n"
            "                               interleaved-1f1b|zb-h1 (default grouped)\n"
            "  --batch-size B               micro-batch size\n"
            "  --batches-to-accumulate M    micro-batches per weight update (gradient accumulation)\n"
            "  --repeat-count N             steps per emulator call (on-device loop)\n"
            "  --epochs N                   total epochs (a resumed run continues up to N)\n"
            "  --learning-rate LR           base learning rate\n"
            "  --lr-decay D                 learning rate of epoch e = LR * D^e\n"
            "  --momentum MU                momentum coefficient (--optimizer momentum)\n"
            "  --optimizer sgd|momentum|adam\n"
            "  --augment PIXELS             random shift of training images (0: off)\n"
            "  --replicas R                 data-parallel replicas of the pipeline\n"
            "  --strict                     Graphcore's schedule rules (e.g. grouped: M %% 2S == 0)\n"
            "                               as errors instead of warnings\n"
            "  --recompute                  stash stage inputs only, recompute forwards\n"
            "  --offload                    optimizer state in streaming memory\n"
            "  --runner coop|threads        cooperative (one thread) or one thread per IPU\n"
            "  --seed N                     initialisation, shuffling, dropout (default 1)\n"
            "  --data DIR                   MNIST IDX files (default data/mnist; 'make data')\n"
            "  --train-limit N              use the first N training images\n"
            "  --test-limit N               use the first N test images\n"
            "  --save FILE                  checkpoint at the end (weights, optimizer state, step)\n"
            "  --load FILE                  resume from a checkpoint\n"
            "  --trace FILE.json            Chrome trace of one step (chrome://tracing, Perfetto)\n"
            "  --summary-json FILE          figures of the run as JSON\n"
            "  --progress / --no-progress   progress bar (default: when stdout is a terminal)\n"
            "  --quiet                      only the closing lines\n");
}

static unsigned mt_errors; /* messages printed; the fuzz target checks each refusal printed one */

static int mt_err(const char *fmt, ...) {
    va_list ap;
    mt_errors++;
    fprintf(stderr, "mnist-train: error: ");
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

static int mt_float(const char *flag, const char *v, float lo, float hi, float *out) {
    char *end;
    double x;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= (double)lo && x <= (double)hi))
        return mt_err("%s needs a number in [%g, %g], got '%s'", flag, (double)lo, (double)hi, v);
    *out = (float)x;
    return 0;
}

static int mt_parse(int argc, char **argv, mt_opts *o) {
    int i;
    memset(o, 0, sizeof *o);
    o->model = "mlp";
    o->runner = "coop";
    o->seed = 1;
    o->data = "data/mnist";
    o->progress = -1;
    o->ipus = 2;
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
            snprintf(flag, sizeof flag, "%s", a);
        }
#define MT_FLAG0(name) (strcmp(flag, name) == 0)
#define MT_VALUE()                                                                                          \
    do {                                                                                                    \
        if (!v) {                                                                                           \
            if (i + 1 >= argc) return mt_err("%s needs a value (see --help)", flag);                       \
            v = argv[++i];                                                                                  \
        }                                                                                                   \
    } while (0)
        if (MT_FLAG0("--help") || MT_FLAG0("-h")) {
            mt_usage(stdout);
            exit(0);
        } else if (MT_FLAG0("--model")) {
            MT_VALUE();
            o->model = v;
        } else if (MT_FLAG0("--splits")) {
            o->splits_given = 1;
            if (v) { /* --splits=a,b */
                static char buf[512];
                char *s, *tok;
                snprintf(buf, sizeof buf, "%s", v);
                for (s = buf; (tok = strtok(s, ", ")) != NULL; s = NULL) {
                    if (o->n_splits >= MT_MAX_STAGES - 1) return mt_err("--splits: at most %d splits", MT_MAX_STAGES - 1);
                    o->splits[o->n_splits++] = tok;
                }
            } else {
                while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                    if (o->n_splits >= MT_MAX_STAGES - 1) return mt_err("--splits: at most %d splits", MT_MAX_STAGES - 1);
                    o->splits[o->n_splits++] = argv[++i];
                }
            }
            if (o->n_splits == 1 && strcmp(o->splits[0], "auto") == 0) {
                o->splits_auto = 1;
                o->n_splits = 0;
            } else if (o->n_splits == 1 && strcmp(o->splits[0], "none") == 0) {
                o->n_splits = 0; /* one stage: the whole model on one IPU */
            }
        } else if (MT_FLAG0("--ipus")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, MT_MAX_STAGES, &o->ipus)) return 2;
        } else if (MT_FLAG0("--schedule")) {
            MT_VALUE();
            o->schedule = v;
        } else if (MT_FLAG0("--batch-size")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, 4096, &o->batch)) return 2;
        } else if (MT_FLAG0("--batches-to-accumulate") || MT_FLAG0("--gradient-accumulation")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, 1 << 16, &o->accumulate)) return 2;
        } else if (MT_FLAG0("--repeat-count")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, 1 << 20, &o->repeat)) return 2;
        } else if (MT_FLAG0("--epochs")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, 100000, &o->epochs)) return 2;
            o->epochs_given = 1;
        } else if (MT_FLAG0("--learning-rate")) {
            MT_VALUE();
            if (mt_float(flag, v, 0.0f, 100.0f, &o->lr)) return 2;
            if (!(o->lr > 0.0f)) return mt_err("--learning-rate must be > 0, got '%s'", v);
            o->lr_given = 1;
        } else if (MT_FLAG0("--lr-decay")) {
            MT_VALUE();
            if (mt_float(flag, v, 0.0f, 1.0f, &o->lr_decay)) return 2;
            o->decay_given = 1;
        } else if (MT_FLAG0("--momentum")) {
            MT_VALUE();
            if (mt_float(flag, v, 0.0f, 0.9999f, &o->momentum)) return 2;
            o->momentum_given = 1;
        } else if (MT_FLAG0("--optimizer")) {
            MT_VALUE();
            if (strcmp(v, "sgd") == 0) o->optimizer = MNIST_OPT_SGD;
            else if (strcmp(v, "momentum") == 0) o->optimizer = MNIST_OPT_MOMENTUM;
            else if (strcmp(v, "adam") == 0) o->optimizer = MNIST_OPT_ADAM;
            else return mt_err("--optimizer: unknown '%s' (sgd, momentum or adam)", v);
            o->optimizer_given = 1;
        } else if (MT_FLAG0("--augment")) {
            MT_VALUE();
            if (mt_int(flag, v, 0, 4, &o->augment)) return 2;
            o->augment_given = 1;
        } else if (MT_FLAG0("--replicas")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, IPUP_MAX_REPLICAS, &o->replicas)) return 2;
        } else if (MT_FLAG0("--strict")) {
            o->strict = 1;
        } else if (MT_FLAG0("--recompute")) {
            o->recompute = 1;
        } else if (MT_FLAG0("--offload")) {
            o->offload = 1;
        } else if (MT_FLAG0("--runner")) {
            MT_VALUE();
            o->runner = v;
        } else if (MT_FLAG0("--seed")) {
            char *end;
            MT_VALUE();
            errno = 0;
            o->seed = strtoull(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-') return mt_err("--seed needs a non-negative integer, got '%s'", v);
            o->seed_given = 1;
        } else if (MT_FLAG0("--data")) {
            MT_VALUE();
            o->data = v;
        } else if (MT_FLAG0("--train-limit")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, 1 << 30, &o->train_limit)) return 2;
        } else if (MT_FLAG0("--test-limit")) {
            MT_VALUE();
            if (mt_int(flag, v, 1, 1 << 30, &o->test_limit)) return 2;
        } else if (MT_FLAG0("--save")) {
            MT_VALUE();
            o->save = v;
        } else if (MT_FLAG0("--load")) {
            MT_VALUE();
            o->load = v;
        } else if (MT_FLAG0("--trace")) {
            MT_VALUE();
            o->trace = v;
        } else if (MT_FLAG0("--summary-json")) {
            MT_VALUE();
            o->summary = v;
        } else if (MT_FLAG0("--quiet")) {
            o->quiet = 1;
        } else if (MT_FLAG0("--progress")) {
            o->progress = 1;
        } else if (MT_FLAG0("--no-progress")) {
            o->progress = 0;
        } else {
            return mt_err("unknown option '%s' (see --help)", a);
        }
#undef MT_FLAG0
#undef MT_VALUE
    }
    {   /* two outputs into one file would overwrite each other */
        const char *out[3], *flag[3] = {"--save", "--trace", "--summary-json"};
        int x, y;
        out[0] = o->save;
        out[1] = o->trace;
        out[2] = o->summary;
        for (x = 0; x < 3; x++)
            for (y = x + 1; y < 3; y++)
                if (out[x] && out[y] && strcmp(out[x], out[y]) == 0)
                    return mt_err("%s and %s both name %s; give each output its own file", flag[x], flag[y], out[x]);
    }
    return 0;
}

/* ------------------------------------------------------------------ the run */
/* An output file (--trace, --summary-json). Its descriptor is opened at startup so that
 * writing it at the end needs no allocator. A regular file, or a new one, is written as
 * "<path>.tmp" and renamed over <path> only when the run and the write succeed: a run
 * that fails (a NaN stop, a full disk) leaves an older file as it was and no partial
 * or empty one. A device or a pipe (/dev/stdout, /dev/full, a FIFO) cannot be replaced
 * by a rename, so it is written directly. */
typedef struct {
    const char *path; /* what the user named */
    char *tmp;        /* "<path>.tmp", or NULL when written directly */
    int fd;           /* -1 when closed */
} mt_out;

typedef struct {
    mt_opts o;
    const mnist_model_spec *spec;
    mnist_geom geom[MNIST_MAX_LAYERS];
    int n_stages;
    int stage_first[MT_MAX_STAGES + 1]; /* user layer index of each stage's first layer */
    int emu_first[MNIST_MAX_LAYERS + 1]; /* user layer -> first emulator layer */
    ipup_model_desc desc;
    int32_t emu_split[MT_MAX_STAGES];
    ipup_config cfg;
    ipup_plan plan;
    ipup_emu *emu;
    ipup_sched_kind sched;
    /* data */
    mnist_info tr, te;
    float *xtr, *xte;
    int32_t *ytr, *yte;
    int32_t *perm;
    /* epoch state, read by the infeed */
    int epoch;
    int64_t epoch_step0, samples_per_step, steps_per_epoch;
    /* outputs */
    mt_out trace_out, summary_out;
    int tty;
    char *text; /* startup-allocated text buffer (memory report, JSON) */
    size_t text_cap;
    mnist_ckpt_tensor *tens;
    int n_tens;
} mt_run;

static double mt_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
/* CPU seconds of the whole process (all threads) */
static double mt_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Infeed: the samples at positions p .. p+n-1 of the current epoch's permutation,
 * shifted by up to `augment` pixels (zero fill). */
static int mt_infeed(void *user, int64_t step, int32_t replica, int32_t mb, int64_t sample0, int32_t n, float *x,
                     int32_t *labels) {
    mt_run *r = (mt_run *)user;
    int64_t p0 = sample0 - r->epoch_step0 * r->samples_per_step;
    int i, aug = r->o.augment;
    (void)step;
    (void)replica;
    (void)mb;
    if (p0 < 0 || p0 + n > r->tr.count) return -1;
    for (i = 0; i < n; i++) {
        int64_t p = p0 + i;
        int32_t k = r->perm[p];
        const float *src = r->xtr + (size_t)k * 784;
        float *dst = x + (size_t)i * 784;
        labels[i] = r->ytr[k];
        if (!aug) {
            memcpy(dst, src, 784 * sizeof(float));
        } else {
            uint64_t rr = ipup_rng_u64(r->o.seed, MT_AUGMENT_TAG + (uint64_t)r->epoch, (uint64_t)p);
            int dx = (int)(rr % (uint64_t)(2 * aug + 1)) - aug, dy = (int)((rr >> 16) % (uint64_t)(2 * aug + 1)) - aug;
            int yy, xx;
            for (yy = 0; yy < 28; yy++)
                for (xx = 0; xx < 28; xx++) {
                    int sy = yy - dy, sx = xx - dx;
                    dst[yy * 28 + xx] = (sy >= 0 && sy < 28 && sx >= 0 && sx < 28) ? src[sy * 28 + sx] : 0.0f;
                }
        }
    }
    return 0;
}

/* Fisher-Yates keyed by (seed, epoch): the permutation of epoch e. */
static void mt_shuffle(mt_run *r, int epoch) {
    int32_t i, n = r->tr.count;
    for (i = 0; i < n; i++) r->perm[i] = i;
    for (i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)ipup_rng_below(r->o.seed, MT_SHUFFLE_TAG + (uint64_t)epoch, (uint64_t)i, (uint64_t)i + 1);
        int32_t t = r->perm[i];
        r->perm[i] = r->perm[j];
        r->perm[j] = t;
    }
}

static int mt_fd_write(void *user, const void *data, size_t len) {
    int fd = *(int *)user;
    const char *p = (const char *)data;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Opens an output file at startup (see mt_out). Returns 0, or -1 with errno set. */
static int mt_out_open(mt_out *o, const char *path) {
    struct stat st;
    size_t n = strlen(path);
    int e;
    o->path = path;
    o->tmp = NULL;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        o->fd = open(path, O_WRONLY);
        return o->fd < 0 ? -1 : 0;
    }
    if (!(o->tmp = (char *)malloc(n + 5))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(o->tmp, path, n);
    memcpy(o->tmp + n, ".tmp", 5);
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o->fd < 0) {
        e = errno;
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
        return -1;
    }
    return 0;
}

/* Closes an output file. With keep, "<path>.tmp" is flushed to disk and renamed over
 * <path> (the pattern of mnist_ckpt_save); without it, or if that fails, the
 * temporary file is removed and <path> is left as it was. Returns 0 or an errno. */
static int mt_out_close(mt_out *o, int keep) {
    int e = 0;
    if (o->fd < 0) return 0;
    if (keep && o->tmp && fsync(o->fd) != 0) e = errno;
    if (close(o->fd) != 0 && keep && !e) e = errno;
    o->fd = -1;
    if (o->tmp) {
        if (keep && !e && rename(o->tmp, o->path) != 0) e = errno;
        if (!keep || e) unlink(o->tmp);
    }
    return e;
}

/* Ends an output whose bytes were all written (written != 0) or not: keeps it, or
 * drops it and says why. Returns 0 when <path> now holds the complete output. */
static int mt_out_finish(mt_out *o, const char *flag, int written) {
    int e = written ? 0 : (errno ? errno : EIO);
    if (!written) mt_out_close(o, 0);
    else e = mt_out_close(o, 1);
    if (!e) return 0;
    mt_err("%s: writing %s failed: %s%s%s", flag, o->path, strerror(e),
           e == ENOSPC || e == EFBIG || e == EDQUOT ? " (disk full or file size limit)" : "",
           o->tmp ? "; the file was not replaced (any older one is as it was)" : "");
    return e;
}

/* A run that fails after startup drops its unfinished outputs. */
static void mt_out_drop(mt_run *r) {
    mt_out_close(&r->trace_out, 0);
    mt_out_close(&r->summary_out, 0);
}

static const char *mt_opt_name(int k) { return k == MNIST_OPT_SGD ? "sgd" : k == MNIST_OPT_MOMENTUM ? "momentum" : "adam"; }

/* Lists the model's layer ids into buf. */
static void mt_layer_ids(const mnist_model_spec *m, char *buf, size_t cap) {
    int i;
    size_t n = 0;
    buf[0] = 0;
    for (i = 0; i < m->n_layers && n + 1 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", m->layers[i].id);
}

/* Cost of user layer i: forward + backward FLOPs per sample of its emulator layers
 * (ipup_model_info: the numbers the emulator's cost model charges). */
static double mt_layer_cost(const mt_run *r, int i) {
    static ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[256];
    double c = 0.0;
    int l;
    if (ipup_model_info(&r->desc, info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK) {
        const mnist_geom *g = &r->geom[i]; /* fallback: backward ~ 2x forward */
        return g->flops_fwd > 0 ? 3.0 * g->flops_fwd : 2.0 * (double)g->out_size;
    }
    for (l = r->emu_first[i]; l < r->emu_first[i + 1]; l++)
        c += (double)(info[l].flops_fwd + info[l].flops_bwd_dx + info[l].flops_bwd_dw);
    return c;
}

/* Balanced contiguous split of the user layers into k stages: minimises the largest
 * stage cost, then the sum of squared stage costs (exhaustive over split points; at
 * most 16 layers). */
static void mt_auto_split(mt_run *r, int k) {
    int L = r->spec->n_layers, best[MT_MAX_STAGES + 1], cur[MT_MAX_STAGES + 1], i;
    double best_cost = 1e300, best_sq = 1e300;
    /* enumerate increasing split points cur[1..k-1] in 1..L-1 */
    for (i = 0; i <= k; i++) cur[i] = i;
    cur[0] = 0;
    cur[k] = L;
    if (k > L) k = L;
    for (i = 1; i < k; i++) cur[i] = i;
    cur[k] = L;
    memcpy(best, cur, sizeof cur);
    for (;;) {
        double mx = 0, sq = 0;
        int s, j;
        cur[k] = L;
        for (s = 0; s < k; s++) {
            double c = 0;
            for (j = cur[s]; j < cur[s + 1]; j++) c += mt_layer_cost(r, j);
            if (c > mx) mx = c;
            sq += c * c;
        }
        /* the smallest bottleneck; among equal ones the most even (sum of squares) */
        if (mx < best_cost || (mx == best_cost && sq < best_sq)) {
            best_cost = mx;
            best_sq = sq;
            memcpy(best, cur, sizeof cur);
        }
        /* next combination */
        for (s = k - 1; s >= 1 && cur[s] == L - k + s; s--) {}
        if (s < 1) break;
        cur[s]++;
        for (j = s + 1; j < k; j++) cur[j] = cur[j - 1] + 1;
    }
    r->n_stages = k;
    for (i = 0; i <= k; i++) r->stage_first[i] = best[i];
}

/* Stage boundaries from --splits; errors name the problem. */
static int mt_stages(mt_run *r) {
    const mnist_model_spec *m = r->spec;
    const char *split_list[MT_MAX_STAGES];
    int n = 0, i, j;
    char ids[512], defsplits[256];
    mt_layer_ids(m, ids, sizeof ids);
    if (r->o.splits_auto) {
        if (r->o.ipus > m->n_layers)
            return mt_err("--splits auto: %d IPUs but the model has only %d layers (%s)", r->o.ipus, m->n_layers, ids);
        mt_auto_split(r, r->o.ipus);
        return 0;
    }
    if (r->o.splits_given) {
        for (i = 0; i < r->o.n_splits; i++) split_list[n++] = r->o.splits[i];
    } else {
        char *s, *tok;
        snprintf(defsplits, sizeof defsplits, "%s", m->splits);
        for (s = defsplits; (tok = strtok(s, " ")) != NULL; s = NULL) split_list[n++] = tok;
    }
    r->n_stages = n + 1;
    r->stage_first[0] = 0;
    for (i = 0; i < n; i++) {
        int found = -1;
        for (j = 0; j < m->n_layers; j++)
            if (strcmp(m->layers[j].id, split_list[i]) == 0) found = j;
        if (found < 0)
            return mt_err("--splits: unknown layer '%s'; the layers of model %s are: %s", split_list[i], m->name, ids);
        if (found <= r->stage_first[i]) {
            if (found == 0)
                return mt_err("--splits: stage 0 would be empty: '%s' is the first layer of the model (each split names "
                              "the first layer of the NEXT stage)",
                              split_list[i]);
            return mt_err("--splits: stage %d would be empty: '%s' does not come after '%s' (splits must follow the "
                          "layer order: %s)",
                          i, split_list[i], m->layers[r->stage_first[i]].id, ids);
        }
        r->stage_first[i + 1] = found;
    }
    r->stage_first[r->n_stages] = m->n_layers;
    return 0;
}

/* Builds the emulator model (ReLU/GELU as layers of their own) and the emulator split. */
static void mt_build_desc(mt_run *r) {
    const mnist_model_spec *m = r->spec;
    ipup_model_desc *d = &r->desc;
    int i;
    memset(d, 0, sizeof *d);
    d->in_h = MNIST_IMG;
    d->in_w = MNIST_IMG;
    d->in_c = 1;
    for (i = 0; i < m->n_layers; i++) {
        const mnist_layer_spec *L = &m->layers[i];
        ipup_layer *e = &d->layers[d->n_layers];
        r->emu_first[i] = d->n_layers;
        memset(e, 0, sizeof *e);
        snprintf(e->id, sizeof e->id, "%s", L->id);
        switch (L->kind) {
        case MNIST_L_FLATTEN: e->kind = IPUP_LAYER_FLATTEN; break;
        case MNIST_L_DENSE: e->kind = IPUP_LAYER_DENSE; e->units = L->out; break;
        case MNIST_L_CONV3X3: e->kind = IPUP_LAYER_CONV3X3; e->units = L->out; break;
        case MNIST_L_MAXPOOL2: e->kind = IPUP_LAYER_MAXPOOL2; break;
        case MNIST_L_DROPOUT: e->kind = IPUP_LAYER_DROPOUT; e->rate = L->p; break;
        default: e->kind = IPUP_LAYER_SOFTMAX_XENT; break;
        }
        d->n_layers++;
        if (L->act != MNIST_ACT_NONE) {
            e = &d->layers[d->n_layers++];
            memset(e, 0, sizeof *e);
            e->kind = L->act == MNIST_ACT_RELU ? IPUP_LAYER_RELU : IPUP_LAYER_GELU;
            snprintf(e->id, sizeof e->id, "%.15s.%s", L->id, L->act == MNIST_ACT_RELU ? "relu" : "gelu");
        }
    }
    r->emu_first[m->n_layers] = d->n_layers;
}

/* The emulator split: first emulator layer of each stage after the first. */
static void mt_build_split(mt_run *r) {
    int s;
    for (s = 1; s < r->n_stages; s++) r->emu_split[s - 1] = r->emu_first[r->stage_first[s]];
}

/* The model's recipe for every option not given, then the emulator model, the stages
 * of --splits, the schedule and the runner: what a run needs before it reads data.
 * 0, or 2 after a message naming the bad option. */
static int mt_resolve(mt_run *r, ipup_runner_kind *runner) {
    const mnist_model_spec *m = r->spec;
    mt_opts *o = &r->o;
    if (!o->batch) o->batch = m->batch;
    if (!o->accumulate) o->accumulate = m->accumulate;
    if (!o->repeat) o->repeat = m->repeat;
    if (!o->epochs_given) o->epochs = m->epochs;
    if (!o->replicas) o->replicas = 1;
    if (!o->optimizer_given) o->optimizer = m->optimizer;
    if (!o->lr_given) o->lr = o->optimizer == m->optimizer ? m->lr : o->optimizer == MNIST_OPT_ADAM ? 0.001f : 0.05f;
    if (!o->momentum_given) o->momentum = m->momentum;
    if (!o->decay_given) o->lr_decay = m->lr_decay;
    if (!o->augment_given) o->augment = m->augment;
    if (!o->schedule) o->schedule = m->schedule;
    mnist_model_geometry(m, r->geom);
    mt_build_desc(r);
    if (mt_stages(r)) return 2;
    mt_build_split(r);
    if (ipup_sched_kind_parse(o->schedule, &r->sched) != IPUP_OK)
        return mt_err("--schedule: unknown '%s' (grouped, interleaved, sequential, gpipe, 1f1b, interleaved-1f1b, zb-h1)",
                      o->schedule);
    if (ipup_runner_parse(o->runner, runner) != IPUP_OK)
        return mt_err("--runner: unknown '%s' (coop or threads)", o->runner);
    return 0;
}

/* The emulator configuration of a parsed run (model, split, schedule, batch shape,
 * optimizer, seed), its data through mt_infeed; pools are given later. */
static void mt_fill_config(mt_run *r, ipup_runner_kind runner) {
    ipup_config *c = &r->cfg;
    memset(c, 0, sizeof *c);
    c->model = &r->desc;
    c->stages = r->n_stages;
    c->split = r->n_stages > 1 ? r->emu_split : NULL;
    c->schedule = r->sched;
    c->strict = r->o.strict;
    c->microbatch = r->o.batch;
    c->microbatches = r->o.accumulate;
    c->repeat = r->o.repeat;
    c->replicas = r->o.replicas;
    c->opt.kind = r->o.optimizer == MNIST_OPT_SGD        ? IPUP_OPT_SGD
                  : r->o.optimizer == MNIST_OPT_MOMENTUM ? IPUP_OPT_MOMENTUM
                                                         : IPUP_OPT_ADAM;
    c->opt.lr = r->o.lr;
    c->opt.momentum = r->o.momentum;
    c->opt.beta1 = r->spec->beta1;
    c->opt.beta2 = r->spec->beta2;
    c->opt.eps = r->spec->eps;
    c->recompute = r->o.recompute;
    c->offload = r->o.offload;
    c->seed = r->o.seed;
    c->runner = runner;
    c->infeed = mt_infeed;
    c->infeed_user = r;
}

/* Gives r->cfg the IPU and streaming pools of r->plan, each 64-byte aligned, one after
 * another from mem (cap bytes). -1 when one would not fit with 128 bytes to spare. */
static int mt_carve_pools(mt_run *r, uint8_t *mem, size_t cap) {
    size_t off = 0;
    int i, P = r->plan.devices;
    for (i = 0; i < r->plan.ipus; i++) {
        size_t a = r->plan.ipu_bytes[i % P], st = r->plan.stream_bytes[i % P];
        if (off + a + st + 128 > cap) return -1;
        r->cfg.ipu[i].mem = mem + off;
        r->cfg.ipu[i].bytes = a;
        off += (a + 63) / 64 * 64;
        if (st) {
            r->cfg.stream[i].mem = mem + off;
            r->cfg.stream[i].bytes = st;
            off += (st + 63) / 64 * 64;
        }
    }
    return 0;
}

static void mt_fmt_bytes(char *buf, size_t cap, double b) {
    if (b >= 1048576.0) snprintf(buf, cap, "%.2f MB", b / 1048576.0);
    else if (b >= 1024.0) snprintf(buf, cap, "%.1f KB", b / 1024.0);
    else snprintf(buf, cap, "%.0f B", b);
}

static void mt_progress(const mt_run *r, int epoch, int64_t done, int64_t total, double loss, double acc, double sps,
                        int final) {
    char bar[41];
    int w = 30, k = total > 0 ? (int)(done * w / total) : w, i;
    for (i = 0; i < w; i++) bar[i] = i < k ? '=' : (i == k ? '>' : ' ');
    bar[w] = 0;
    printf("\rEpoch %d/%d [%s] %3d%%  loss %.4f  acc %6.2f%%  %.0f samples/s%s", epoch + 1, r->o.epochs, bar,
           total > 0 ? (int)(done * 100 / total) : 100, loss, acc, sps, final ? "\n" : "");
    fflush(stdout);
}

/* Appends to the startup-allocated text buffer. */
static size_t mt_cat(mt_run *r, size_t n, const char *fmt, ...) {
    va_list ap;
    int k;
    if (n >= r->text_cap) return n;
    va_start(ap, fmt);
    k = vsnprintf(r->text + n, r->text_cap - n, fmt, ap);
    va_end(ap);
    if (k < 0) return n;
    n += (size_t)k;
    return n < r->text_cap ? n : r->text_cap - 1;
}

/* Figures of the last run, for programs that compile this file in (bench_train.c). */
static double mnist_train_last_sps, mnist_train_last_accuracy, mnist_train_last_cpu_sps;

#ifdef MNIST_TRAIN_NO_MAIN
static int mnist_train_main(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
    static mt_run R_;
    mt_run *r = &R_;
    char err[1024], ids[512];
    mnist_ckpt_meta meta;
    int rc, i, s, start_epoch = 0, loaded = 0;
    int64_t samples_trained = 0;
    double t_cpu = 0.0, t_train = 0.0, last_loss = 0.0, sim_seconds = 0.0, busy_total = 0.0, idle_total = 0.0;
    double phase_util[IPUP_PHASES];
    int64_t test_correct = 0;
    double test_loss = 0.0, test_acc = 0.0, sps = 0.0;
    size_t pool_total = 0;
    uint8_t *pool_mem = NULL, *host_mem = NULL;
    size_t host_bytes = 0;
    ipup_runner_kind runner = IPUP_RUNNER_COOP;
    ipup_mem_report mem[IPUP_MAX_DEVICES];

    /* stdout gets a static buffer now, so printing after startup never allocates */
    {
        static char outbuf[1 << 14];
        static int outbuf_set;
        if (!outbuf_set) setvbuf(stdout, outbuf, _IOLBF, sizeof outbuf);
        outbuf_set = 1;
    }
    memset(r, 0, sizeof *r);
    memset(phase_util, 0, sizeof phase_util);
    r->trace_out.fd = r->summary_out.fd = -1;
    if ((rc = mt_parse(argc, argv, &r->o)) != 0) return rc;
    /* ---- model and recipe */
    r->spec = mnist_model_find(r->o.model);
    if (!r->spec) return mt_err("--model: unknown model '%s' (mlp, cnn or mlp-gelu)", r->o.model);
    if (r->o.load) {
        if (mnist_ckpt_peek(r->o.load, &meta, err) != MNIST_CKPT_OK) return mt_err("--load: %s", err);
        if (strcmp(meta.model, r->spec->name) != 0)
            return mt_err("--load: %s holds model '%s', this run trains '%s' (use --model %s)", r->o.load, meta.model,
                          r->spec->name, meta.model);
        if (r->o.seed_given && r->o.seed != meta.seed)
            fprintf(stderr, "mnist-train: note: --seed %llu ignored: resuming with the checkpoint's seed %llu\n",
                    (unsigned long long)r->o.seed, (unsigned long long)meta.seed);
        r->o.seed = meta.seed;
    }
    if ((rc = mt_resolve(r, &runner)) != 0) return rc;
    /* ---- data */
    if (mnist_probe(r->o.data, "train", &r->tr, err) < 0 || mnist_probe(r->o.data, "test", &r->te, err) < 0)
        return mt_err("%s", err);
    if (r->tr.rows != MNIST_IMG || r->tr.cols != MNIST_IMG || r->te.rows != MNIST_IMG || r->te.cols != MNIST_IMG)
        return mt_err("%s: images are %dx%d, the models take 28x28", r->o.data, r->tr.rows, r->tr.cols);
    if (r->o.train_limit && r->o.train_limit < r->tr.count) r->tr.count = r->o.train_limit;
    if (r->o.test_limit && r->o.test_limit < r->te.count) r->te.count = r->o.test_limit;
    r->samples_per_step = (int64_t)r->o.batch * r->o.accumulate * r->o.replicas;
    r->steps_per_epoch = r->tr.count / r->samples_per_step;
    if (r->steps_per_epoch < 1)
        return mt_err("one step needs %lld samples (batch %d x %d micro-batches x %d replicas) but only %d training "
                      "images are used; lower --batch-size/--batches-to-accumulate or raise --train-limit",
                      (long long)r->samples_per_step, r->o.batch, r->o.accumulate, r->o.replicas, r->tr.count);
    /* ---- emulator configuration and plan */
    {
        ipup_config *c = &r->cfg;
        mt_fill_config(r, runner);
        host_bytes = ipup_host_bytes(c);
        if (host_bytes == 0) host_bytes = 64;
        host_mem = (uint8_t *)aligned_alloc(64, (host_bytes + 63) / 64 * 64);
        r->emu = (ipup_emu *)aligned_alloc(64, (sizeof(ipup_emu) + 63) / 64 * 64);
        if (!host_mem || !r->emu) return mt_err("out of host memory");
        memset(r->emu, 0, sizeof *r->emu); /* a fresh emulator starts zeroed (ipup_init) */
        c->host.mem = host_mem;
        c->host.bytes = host_bytes;
        if ((rc = ipup_plan_config(r->emu, c, &r->plan)) != IPUP_OK)
            return mt_err("the pipeline cannot run: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc));
    }
    /* ---- the one allocation phase: data, pools, permutation, text, tensors */
    {
        int nipu = r->plan.ipus, P = r->plan.devices;
        pool_total = 64; /* each IPU's pools plus 128 spare bytes (alignment), as mt_carve_pools wants */
        for (i = 0; i < nipu; i++) pool_total += r->plan.ipu_bytes[i % P] + r->plan.stream_bytes[i % P] + 128;
        pool_mem = (uint8_t *)aligned_alloc(64, (pool_total + 63) / 64 * 64);
        r->xtr = (float *)malloc((size_t)r->tr.count * 784 * sizeof(float));
        r->ytr = (int32_t *)malloc((size_t)r->tr.count * sizeof(int32_t));
        r->xte = (float *)malloc((size_t)r->te.count * 784 * sizeof(float));
        r->yte = (int32_t *)malloc((size_t)r->te.count * sizeof(int32_t));
        r->perm = (int32_t *)malloc((size_t)r->tr.count * sizeof(int32_t));
        r->text_cap = 1 << 16;
        r->text = (char *)malloc(r->text_cap);
        if (!pool_mem || !r->xtr || !r->ytr || !r->xte || !r->yte || !r->perm || !r->text || !r->emu)
            return mt_err("out of host memory (%.1f MB of pools)", (double)pool_total / 1048576.0);
        memset(pool_mem, 0, pool_total);
        if (mt_carve_pools(r, pool_mem, pool_total) != 0) /* cannot happen: pool_total has the spare bytes */
            return mt_err("internal: the pools do not fit in %zu bytes", pool_total);
    }
    if (mnist_load(r->o.data, "train", r->tr.count, r->tr.count, r->xtr, r->ytr, &r->tr, err) < 0 ||
        mnist_load(r->o.data, "test", r->te.count, r->te.count, r->xte, r->yte, &r->te, err) < 0)
        return mt_err("%s", err);
    if ((rc = ipup_init(r->emu, &r->cfg)) != IPUP_OK)
        return mt_err("the pipeline cannot start: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc));
    /* checkpoint tensor list: every parameter and optimizer-state tensor */
    r->n_tens = (int)ipup_tensor_count(r->emu);
    r->tens = (mnist_ckpt_tensor *)calloc((size_t)(r->n_tens > 0 ? r->n_tens : 1), sizeof(mnist_ckpt_tensor));
    {
        static ipup_tensor_info infos[MNIST_CKPT_MAX_TENSORS];
        if (!r->tens || r->n_tens > MNIST_CKPT_MAX_TENSORS) return mt_err("too many tensors (%d)", r->n_tens);
        for (i = 0; i < r->n_tens; i++) {
            int d;
            ipup_tensor_get(r->emu, i, &infos[i]);
            r->tens[i].name = infos[i].name;
            r->tens[i].rank = infos[i].ndim;
            for (d = 0; d < infos[i].ndim && d < MNIST_CKPT_MAX_RANK; d++) r->tens[i].dims[d] = infos[i].shape[d];
            r->tens[i].data = infos[i].data;
        }
    }
    memset(&meta, 0, sizeof meta);
    snprintf(meta.model, sizeof meta.model, "%s", r->spec->name);
    if (r->o.load) {
        if (mnist_ckpt_load(r->o.load, &meta, r->tens, r->n_tens, err) != MNIST_CKPT_OK) {
            ipup_shutdown(r->emu);
            return mt_err("--load: %s", err);
        }
        ipup_replicas_sync(r->emu);
        ipup_set_step(r->emu, (int64_t)meta.step);
        if (meta.step != (uint64_t)meta.epoch * (uint64_t)r->steps_per_epoch) {
            ipup_shutdown(r->emu);
            return mt_err("--load: %s was saved after %u epochs at step %llu, but this run has %lld steps per epoch "
                          "(resume with the --batch-size, --batches-to-accumulate, --replicas and --train-limit of "
                          "the saved run)",
                          r->o.load, meta.epoch, (unsigned long long)meta.step, (long long)r->steps_per_epoch);
        }
        start_epoch = (int)meta.epoch;
        loaded = 1;
    }
    if (r->o.trace && mt_out_open(&r->trace_out, r->o.trace) != 0) {
        ipup_shutdown(r->emu);
        return mt_err("--trace: cannot create %s: %s", r->o.trace, strerror(errno));
    }
    if (r->o.summary && mt_out_open(&r->summary_out, r->o.summary) != 0) {
        int e = errno;
        mt_out_drop(r);
        ipup_shutdown(r->emu);
        return mt_err("--summary-json: cannot create %s: %s", r->o.summary, strerror(e));
    }
    r->tty = r->o.progress < 0 ? isatty(1) : r->o.progress;
    memset(mem, 0, sizeof mem);
    for (s = 0; s < r->plan.devices && s < IPUP_MAX_DEVICES; s++) ipup_memory_report(r->emu, s, &mem[s]);

    /* ---- what will run (like the tutorial) */
    if (!r->o.quiet) {
        const mnist_model_spec *m = r->spec;
        printf("Model %s (%s): %lld parameters\n", m->name, m->tutorial, (long long)r->plan.params);
        for (i = 0; i < m->n_layers; i++) {
            const mnist_geom *g = &r->geom[i];
            printf("  %-9s out (%d, %d, %d)%s", m->layers[i].id, g->oh, g->ow, g->oc,
                   m->layers[i].act == MNIST_ACT_RELU ? " relu" : m->layers[i].act == MNIST_ACT_GELU ? " gelu" : "");
            if (g->nw) printf("  %d weights", g->nw + g->nb);
            printf("\n");
        }
        printf("Pipeline: %d stage%s on %d IPU%s x %d replica%s, schedule %s, runner %s%s%s\n", r->n_stages,
               r->n_stages == 1 ? "" : "s", r->plan.devices, r->plan.devices == 1 ? "" : "s", r->plan.replicas,
               r->plan.replicas == 1 ? "" : "s", ipup_sched_kind_name(r->sched), r->o.runner,
               r->o.recompute ? ", recompute" : "", r->o.offload ? ", offload" : "");
        for (s = 0; s < r->n_stages; s++) {
            printf("  %d. ", s);
            for (i = r->stage_first[s]; i < r->stage_first[s + 1]; i++)
                printf("%s%s", i > r->stage_first[s] ? "-" : "", m->layers[i].id);
            printf("  (IPU%d)\n", r->plan.stage_device[s]);
        }
        printf("Training: batch %d x %d micro-batches x %d replica(s) = %lld samples per step, %lld steps per epoch, "
               "repeat count %d\n",
               r->o.batch, r->o.accumulate, r->o.replicas, (long long)r->samples_per_step,
               (long long)r->steps_per_epoch, r->o.repeat);
        printf("Optimizer %s", mt_opt_name(r->o.optimizer));
        if (r->o.optimizer == MNIST_OPT_MOMENTUM) printf(" (mu %g)", (double)r->o.momentum);
        printf(", learning rate %g (x%g per epoch), %d epoch%s, augment %d px, seed %llu\n", (double)r->o.lr,
               (double)r->o.lr_decay, r->o.epochs, r->o.epochs == 1 ? "" : "s", r->o.augment,
               (unsigned long long)r->o.seed);
        printf("Data: %d training and %d test images from %s\n", r->tr.count, r->te.count, r->o.data);
        printf("Memory per IPU:\n");
        for (s = 0; s < r->plan.devices && s < IPUP_MAX_DEVICES; s++) {
            char b[IPUP_MEM_CATEGORIES + 1][32];
            int c;
            mt_fmt_bytes(b[IPUP_MEM_CATEGORIES], sizeof b[0], (double)mem[s].used);
            for (c = 0; c < IPUP_MEM_CATEGORIES; c++) mt_fmt_bytes(b[c], sizeof b[0], (double)mem[s].by_category[c]);
            printf("  IPU%d: %s (", s, b[IPUP_MEM_CATEGORIES]);
            for (c = 0; c < IPUP_MEM_CATEGORIES; c++)
                printf("%s%s %s", c ? ", " : "", ipup_mem_category_name(c), b[c]);
            printf(")\n");
        }
        if (loaded)
            printf("Resumed from %s: epoch %u, step %llu\n", r->o.load, meta.epoch, (unsigned long long)meta.step);
        fflush(stdout);
    }
    MNIST_TRAIN_STARTUP_DONE();

    /* ---- training */
    for (r->epoch = start_epoch; r->epoch < r->o.epochs; r->epoch++) {
        double t0 = mt_now(), c0 = mt_cpu(), loss_sum = 0.0, lr = (double)r->o.lr;
        int64_t done = 0, correct = 0, micro = 0;
        int e;
        for (e = 0; e < r->epoch; e++) lr *= (double)r->o.lr_decay;
        ipup_set_learning_rate(r->emu, (float)lr);
        mt_shuffle(r, r->epoch);
        r->epoch_step0 = (int64_t)r->epoch * r->steps_per_epoch;
        while (done < r->steps_per_epoch) {
            ipup_run_stats st;
            int32_t k;
            memset(&st, 0, sizeof st);
            k = (int32_t)(r->steps_per_epoch - done < r->o.repeat ? r->steps_per_epoch - done : r->o.repeat);
            rc = ipup_run_steps(r->emu, k, &st);
            if (rc != IPUP_OK) {
                if (r->tty) printf("\n");
                mt_err("training stopped in epoch %d: %s (%s)", r->epoch + 1, ipup_last_error(r->emu),
                       ipup_result_str(rc));
                mt_out_drop(r);
                ipup_shutdown(r->emu);
                return 1;
            }
            done += k;
            micro += st.microbatches;
            loss_sum += st.loss_mean * (double)st.microbatches;
            correct += st.correct;
            sim_seconds += st.sim_seconds;
            for (s = 0; s < r->plan.ipus && s < IPUP_MAX_IPUS; s++) {
                busy_total += st.busy_seconds[s];
                idle_total += st.idle_seconds[s];
            }
            memcpy(phase_util, st.phase_utilisation, sizeof phase_util);
            if (r->tty && !r->o.quiet)
                mt_progress(r, r->epoch, done, r->steps_per_epoch, loss_sum / (double)micro,
                            100.0 * (double)correct / (double)(done * r->samples_per_step),
                            (double)(done * r->samples_per_step) / (mt_now() - t0), 0);
        }
        t_train += mt_now() - t0;
        t_cpu += mt_cpu() - c0;
        samples_trained += done * r->samples_per_step;
        last_loss = loss_sum / (double)micro;
        if (!r->o.quiet) {
            double acc = 100.0 * (double)correct / (double)(done * r->samples_per_step);
            double eps = (double)(done * r->samples_per_step) / (mt_now() - t0);
            if (r->tty) mt_progress(r, r->epoch, done, r->steps_per_epoch, last_loss, acc, eps, 1);
            else
                printf("Epoch %d/%d: loss %.4f, train accuracy %.2f%%, %.0f samples/s, learning rate %.5g\n",
                       r->epoch + 1, r->o.epochs, last_loss, acc, eps, lr);
            printf("Step %lld, Epoch %d, Mean loss: %.4f\n", (long long)ipup_get_step(r->emu), r->epoch + 1, last_loss);
            fflush(stdout);
        }
    }
    /* ---- test */
    if ((rc = ipup_evaluate(r->emu, r->te.count, r->xte, r->yte, &test_loss, &test_correct)) != IPUP_OK) {
        mt_err("evaluation failed: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc));
        mt_out_drop(r);
        ipup_shutdown(r->emu);
        return 1;
    }
    test_acc = 100.0 * (double)test_correct / (double)r->te.count;
    sps = t_train > 0 ? (double)samples_trained / t_train : 0.0;
    mnist_train_last_sps = sps;
    mnist_train_last_cpu_sps = t_cpu > 0 ? (double)samples_trained / t_cpu : 0.0;
    mnist_train_last_accuracy = test_acc;
    printf("Test accuracy: %.2f%%\n", test_acc);
    printf("Throughput: %.0f samples/s\n", sps);
    if (!r->o.quiet && busy_total + idle_total > 0)
        printf("Simulated IPU time: %.4f s for %lld samples, IPU utilisation %.1f%% (main phase %.1f%%)\n",
               sim_seconds, (long long)samples_trained, 100.0 * busy_total / (busy_total + idle_total),
               100.0 * phase_util[IPUP_PHASE_MAIN]);
    fflush(stdout);
    /* ---- outputs */
    rc = 0;
    if (r->o.save) {
        meta.step = (uint64_t)ipup_get_step(r->emu);
        meta.seed = r->o.seed;
        meta.epoch = (uint32_t)(r->epoch);
        snprintf(meta.model, sizeof meta.model, "%s", r->spec->name);
        if (mnist_ckpt_save(r->o.save, &meta, r->tens, r->n_tens, err) != MNIST_CKPT_OK) rc = mt_err("--save: %s", err);
        else if (!r->o.quiet) printf("Saved %s (epoch %u, step %llu)\n", r->o.save, meta.epoch, (unsigned long long)meta.step);
    }
    if (r->trace_out.fd >= 0) {
        errno = 0;
        if (mt_out_finish(&r->trace_out, "--trace", ipup_trace_write(r->emu, mt_fd_write, &r->trace_out.fd) == IPUP_OK))
            rc = 2;
    }
    if (r->summary_out.fd >= 0) {
        size_t n = 0;
        n = mt_cat(r, n, "{\n  \"model\": \"%s\",\n  \"test_accuracy\": %.4f,\n  \"train_samples_per_second\": %.1f,\n",
                   r->spec->name, test_acc / 100.0, sps);
        n = mt_cat(r, n, "  \"epochs\": %d,\n  \"final_loss\": %.6f,\n  \"steps\": %lld,\n", r->o.epochs,
                   last_loss, (long long)ipup_get_step(r->emu));
        n = mt_cat(r, n, "  \"ipus\": %d,\n  \"replicas\": %d,\n  \"schedule\": \"%s\",\n  \"runner\": \"%s\",\n",
                   r->plan.devices, r->plan.replicas, ipup_sched_kind_name(r->sched), r->o.runner);
        n = mt_cat(r, n, "  \"ipu_peak_memory_bytes\": [");
        for (s = 0; s < r->plan.devices && s < IPUP_MAX_DEVICES; s++) {
            ipup_mem_report mr;
            memset(&mr, 0, sizeof mr);
            ipup_memory_report(r->emu, s, &mr);
            n = mt_cat(r, n, "%s%zu", s ? ", " : "", mr.high_water);
        }
        n = mt_cat(r, n, "],\n  \"simulated_ipu_seconds\": %.6f,\n  \"ipu_utilisation\": %.4f,\n", sim_seconds,
                   busy_total + idle_total > 0 ? busy_total / (busy_total + idle_total) : 0.0);
        n = mt_cat(r, n,
                   "  \"phase_utilisation\": {\"ramp_up\": %.4f, \"main\": %.4f, \"ramp_down\": %.4f, \"update\": %.4f}\n}\n",
                   phase_util[IPUP_PHASE_RAMP_UP], phase_util[IPUP_PHASE_MAIN], phase_util[IPUP_PHASE_RAMP_DOWN],
                   phase_util[IPUP_PHASE_UPDATE]);
        errno = 0;
        if (mt_out_finish(&r->summary_out, "--summary-json", mt_fd_write(&r->summary_out.fd, r->text, n) == 0)) rc = 2;
    }
    (void)ids;
    MNIST_TRAIN_RUN_DONE();
    ipup_shutdown(r->emu);
    free(r->trace_out.tmp);
    free(r->summary_out.tmp);
    free(r->tens);
    free(r->emu);
    free(r->text);
    free(r->perm);
    free(r->yte);
    free(r->xte);
    free(r->ytr);
    free(r->xtr);
    free(pool_mem);
    free(host_mem);
    return rc;
}
