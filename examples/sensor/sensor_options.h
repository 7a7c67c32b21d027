/* sensor_options.h - the command line of the sensor example (examples/sensor/sensor-demo.c):
 * the options (so_opts), their parser (so_parse), the usage text and the error printer
 * every part of the example reports through (so_err). MIT licence.
 *
 * Parsing only reads argv: it opens nothing and starts nothing. A refusal prints one
 * line on stderr naming the flag, what it got and what it takes, and returns 2 (the
 * exit code of a usage error). */
#ifndef SENSOR_OPTIONS_H
#define SENSOR_OPTIONS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipupipe.h"
#include "export_c.h" /* expc_name_check */

enum { SO_MODE_NONE = 0, SO_MODE_ANOMALY, SO_MODE_FINETUNE };

typedef struct so_opts {
    int mode;
    int ipus, batch, accumulate, steps, finetune_steps, train, test;
    float lr, percentile;
    int lr_given;
    ipup_sched_kind schedule;
    ipup_runner_kind runner;
    uint64_t seed;
    int quiet;
    const char *export_c, *export_name; /* --export-c FILE.h, --export-name NAME (anomaly) */
} so_opts;

static inline void so_usage(FILE *f)
{
    fprintf(f,
            "usage: sensor-demo --mode anomaly|finetune [options]\n"
            "  --mode anomaly     autoencoder on normal vibration windows of machine A (mse loss),\n"
            "                     threshold = a percentile of the reconstruction error on held-out\n"
            "                     normal windows, detection rate of four injected anomaly kinds\n"
            "  --mode finetune    machine-state classifier pre-trained on machine A, then its body\n"
            "                     frozen (dense32:frozen, dense16:frozen) and only the head trained\n"
            "                     on a few windows of machine B\n"
            "  --ipus N           emulated IPUs (pipeline stages; default 2; finetune: 2)\n"
            "  --schedule NAME    grouped|interleaved|sequential|gpipe|1f1b|interleaved-1f1b|zb-h1\n"
            "                     (default 1f1b)\n"
            "  --runner coop|threads   one host thread, or one thread per IPU (default coop)\n"
            "  --batch-size B     micro-batch size (default: anomaly 16, finetune 16 then 8)\n"
            "  --batches-to-accumulate M   micro-batches per update (default 4, fine-tuning 2)\n"
            "  --steps N          training steps (anomaly: autoencoder; finetune: pre-training)\n"
            "  --finetune-steps N fine-tuning steps on machine B (default 60)\n"
            "  --learning-rate LR learning rate of the training (Adam; fine-tuning keeps 0.05)\n"
            "  --train N          training windows (default 2048)\n"
            "  --test N           held-out windows per kind (anomaly; default 512)\n"
            "  --percentile P     threshold percentile of the held-out normal errors (default 99)\n"
            "  --seed N           data and initialisation (default 1)\n"
            "  --export-c FILE.h  anomaly: after training, the autoencoder as a C header (weights as\n"
            "                     const arrays and a <name>_predict that needs only ipupipe_kernels.h;\n"
            "                     examples/common/export_c.h); written to a temporary file, then renamed\n"
            "  --export-name NAME prefix of its C names (default: FILE's base name)\n"
            "  --quiet            only the closing figures\n");
}

static unsigned so_errors; /* messages printed */

#if defined(__GNUC__) || defined(__clang__)
static inline int so_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
static inline int so_err(const char *fmt, ...)
{
    va_list ap;
    so_errors++;
    fprintf(stderr, "sensor-demo: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 2;
}

static inline int so_int(const char *flag, const char *v, long lo, long hi, int *out)
{
    char *end;
    long x;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return so_err("%s needs an integer in %ld..%ld, got '%s'", flag, lo, hi, v);
    *out = (int)x;
    return 0;
}

static inline int so_float(const char *flag, const char *v, double lo, double hi, float *out)
{
    char *end;
    double x;
    errno = 0;
    x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        return so_err("%s needs a number in [%g, %g], got '%s'", flag, lo, hi, v);
    *out = (float)x;
    return 0;
}

static inline int so_seed(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long x;
    errno = 0;
    if (*v == '-' || *v == '+') return so_err("--seed needs an integer in 0..2^64-1, got '%s'", v);
    x = strtoull(v, &end, 10);
    if (errno || end == v || *end) return so_err("--seed needs an integer in 0..2^64-1, got '%s'", v);
    *out = (uint64_t)x;
    return 0;
}

/* the options with a word as value; 0, 2 after a message, -1 when flag is not one */
static inline int so_parse_word(so_opts *o, const char *flag, const char *v)
{
    if (strcmp(flag, "--mode") == 0) {
        if (strcmp(v, "anomaly") == 0) o->mode = SO_MODE_ANOMALY;
        else if (strcmp(v, "finetune") == 0) o->mode = SO_MODE_FINETUNE;
        else return so_err("--mode needs anomaly or finetune, got '%s'", v);
        return 0;
    }
    if (strcmp(flag, "--schedule") == 0) {
        if (ipup_sched_kind_parse(v, &o->schedule) != IPUP_OK)
            return so_err("--schedule needs grouped, interleaved, sequential, gpipe, 1f1b, interleaved-1f1b or zb-h1, got '%s'", v);
        return 0;
    }
    if (strcmp(flag, "--runner") == 0) {
        if (ipup_runner_parse(v, &o->runner) != IPUP_OK) return so_err("--runner needs coop or threads, got '%s'", v);
        return 0;
    }
    if (strcmp(flag, "--seed") == 0) return so_seed(v, &o->seed);
    if (strcmp(flag, "--export-c") == 0) {
        if (!*v) return so_err("--export-c needs the path of a file to write, got ''");
        o->export_c = v;
        return 0;
    }
    if (strcmp(flag, "--export-name") == 0) {
        o->export_name = v;
        return 0;
    }
    return -1;
}

/* the numeric options; 0, 2 after a message, -1 when flag is not one */
static inline int so_parse_number(so_opts *o, const char *flag, const char *v)
{
#define SO_IS(name) (strcmp(flag, name) == 0)
    if (SO_IS("--ipus")) return so_int(flag, v, 1, 4, &o->ipus);
    if (SO_IS("--batch-size")) return so_int(flag, v, 1, 256, &o->batch);
    if (SO_IS("--batches-to-accumulate")) return so_int(flag, v, 1, 64, &o->accumulate);
    if (SO_IS("--steps")) return so_int(flag, v, 1, 100000, &o->steps);
    if (SO_IS("--finetune-steps")) return so_int(flag, v, 1, 100000, &o->finetune_steps);
    if (SO_IS("--train")) return so_int(flag, v, 16, 1 << 20, &o->train);
    if (SO_IS("--test")) return so_int(flag, v, 16, 1 << 20, &o->test);
    if (SO_IS("--percentile")) return so_float(flag, v, 50.0, 100.0, &o->percentile);
    if (SO_IS("--learning-rate")) {
        o->lr_given = 1;
        return so_float(flag, v, 1e-6, 10.0, &o->lr);
    }
#undef SO_IS
    return -1;
}

/* 1 when flag takes a value */
static inline int so_takes_value(const char *flag)
{
    static const char *const names[] = {"--mode", "--schedule", "--runner", "--seed", "--ipus", "--batch-size",
                                        "--batches-to-accumulate", "--steps", "--finetune-steps", "--train",
                                        "--test", "--percentile", "--learning-rate", "--export-c", "--export-name"};
    size_t k;
    for (k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(flag, names[k]) == 0) return 1;
    return 0;
}

/* one option at argv[*i] (--flag v or --flag=v); 0 or 2 after a message */
static inline int so_parse_one(so_opts *o, int argc, char **argv, int *i)
{
    char flag[64];
    const char *a = argv[*i], *eq = strchr(a, '='), *v;
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    int rc;
    if (strcmp(a, "--quiet") == 0) { o->quiet = 1; return 0; }
    if (len >= sizeof flag || strncmp(a, "--", 2) != 0) return so_err("unknown option '%s' (--help lists them)", a);
    memcpy(flag, a, len);
    flag[len] = 0;
    if (!so_takes_value(flag)) return so_err("unknown option '%s' (--help lists them)", flag);
    if (eq) v = eq + 1;
    else if (*i + 1 < argc) v = argv[++*i];
    else return so_err("%s needs a value", flag);
    if ((rc = so_parse_word(o, flag, v)) >= 0) return rc;
    return so_parse_number(o, flag, v);
}

/* --export-c and --export-name together; 0 or 2 after a message */
static inline int so_check_export(const so_opts *o)
{
    char msg[640], name[EXPC_NAME_MAX + 1];
    if (o->export_name && !o->export_c) return so_err("--export-name needs --export-c FILE.h");
    if (o->export_c && o->mode != SO_MODE_ANOMALY)
        return so_err("--export-c exports the autoencoder of --mode anomaly; --mode finetune has no export");
    if (o->export_c && expc_name_choose(o->export_c, o->export_name, name, sizeof name, msg, sizeof msg) != IPUP_OK)
        return so_err("%s", msg); /* the name the export will have, refused before training */
    return 0;
}

/* the defaults, then argv; 0, 1 (--help printed) or 2 after a message */
static inline int so_parse(so_opts *o, int argc, char **argv)
{
    int i;
    memset(o, 0, sizeof *o);
    o->ipus = 2; o->batch = 0; o->accumulate = 0; o->steps = 0; o->finetune_steps = 0;
    o->train = 2048; o->test = 512; o->percentile = 99.0f; o->seed = 1;
    o->schedule = IPUP_SCHED_1F1B; o->runner = IPUP_RUNNER_COOP;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) { so_usage(stdout); return 1; }
        if (so_parse_one(o, argc, argv, &i) != 0) return 2;
    }
    if (o->mode == SO_MODE_NONE) return so_err("--mode is required: anomaly or finetune (--help lists the options)");
    if (o->mode == SO_MODE_FINETUNE && o->ipus != 2)
        return so_err("--mode finetune runs the body on IPU0 and the head on IPU1: --ipus must be 2, got %d", o->ipus);
    return so_check_export(o);
}

#endif
