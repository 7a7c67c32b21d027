/* bench/bench_emulator.c - wall-clock throughput of the emulator on this machine.
 *
 * Model: 784 -> dense512,gelu x4 -> dense10 -> xent (five dense layers, ~1.33 M parameters),
 * micro-batch B = 32, M = 16 micro-batches per step, SGD. The automatic split puts
 * [dense784, gelu, dense512, gelu] | [dense512, gelu, dense512, gelu, dense10, xent] on the
 * two IPUs: equal FLOPs once you count that the first layer needs no input gradient.
 * (A four-layer 784-512-512-512-10 model cannot be split evenly in two: its
 * best split leaves 2/3 of the work on one IPU, capping any 2-stage pipeline at 1.5x.)
 *
 * Configurations, all in one run:
 *   one-ipu            1 stage, cooperative runner (the baseline: no pipelining)
 *   two-ipu-sequential 2 stages, sequential schedule (sharding: one IPU busy at a time)
 *   two-ipu-coop       2 stages, grouped (Graphcore's default), cooperative runner
 *   two-ipu-threads    2 stages, grouped, one thread per IPU
 *   two-ipu-1f1b       2 stages, 1F1B, one thread per IPU (no slack: every op waits for
 *                      the other IPU's previous op, so hand-off latency and the uneven
 *                      F/B split of the two stages show; grouped stashes one more
 *                      micro-batch and hides them)
 *   two-replicas       1 stage x 2 replicas, one thread per IPU, all-reduce per step
 * Prints wall-clock samples/s and the speed-up over one-ipu, the process CPU time per
 * sample (the runners' overhead, independent of how busy the machine is), the cost model's simulated
 * Mk2 samples/s (deterministic, independent of the machine's load); writes
 * build/bench/emulator.json.
 * Targets on a 2-core machine: two-ipu-threads (a 2-stage grouped pipeline) and
 * two-replicas >= 1.85x one-ipu.
 * IPUPIPE_BENCH_STEPS (default 12) steps are timed after one warm-up step; the
 * configurations run in IPUPIPE_BENCH_REPS (default 5, at most 15) interleaved rounds
 * (the machine is shared: a load change hits every configuration of a round alike); each
 * speed-up is the median over the rounds of the round's ratio to one-ipu, printed with
 * its min..max, and samples/s is from the median time.
 * IPUPIPE_BENCH_ONLY=name runs one configuration (for profiling; no speed-ups, no file).
 */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define IN 784
#define NSAMPLES 2048
#define POOL (40u << 20)
#define MAXREPS 15

IPUP_ALIGN64 static uint8_t pools[4][POOL];
IPUP_ALIGN64 static uint8_t host[8u << 20];
static float data_x[NSAMPLES * IN];
static int32_t data_y[NSAMPLES];
static ipup_emu emu;
static ipup_emu work;

static int feed(void *user, const ipup_feed *f) {
    int64_t s0 = f->sample0 % (NSAMPLES - f->n);
    (void)user;
    memcpy(f->x, data_x + s0 * IN, (size_t)f->n * IN * sizeof(float));
    memcpy(f->labels, data_y + s0, (size_t)f->n * sizeof(int32_t));
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bconf {
    const char *name;
    int stages, replicas;
    ipup_sched_kind sched;
    ipup_runner_kind runner;
} bconf;

/* one timed run of configuration b: wall seconds of `steps` steps after a warm-up step;
   *cpu: process CPU-us per sample, *sim, *util: the cost model's samples/s and main-phase
   utilisation. 0, or 1 after printing why. */
static int run_conf(const bconf *b, const ipup_model_desc *m, int steps, double *secs, double *cpu, double *sim,
                    double *util) {
    ipup_config c;
    ipup_plan plan;
    ipup_run_stats st;
    double t0, c0;
    int rc, i;
    memset(&c, 0, sizeof c);
    c.model = m;
    c.stages = b->stages;
    c.replicas = b->replicas;
    c.schedule = b->sched;
    c.runner = b->runner;
    c.microbatch = 32;
    c.microbatches = 16;
    c.repeat = steps;
    c.seed = 1;
    c.opt.kind = IPUP_OPT_SGD;
    c.opt.lr = 0.01f;
    c.infeed = feed;
    c.host.mem = host;
    c.host.bytes = sizeof host;
    for (i = 0; i < 4; i++) { c.ipu[i].mem = pools[i]; c.ipu[i].bytes = POOL; }
    rc = ipup_plan_config(&work, &c, &plan);
    if (rc) { fprintf(stderr, "%s: plan: %s\n", b->name, ipup_last_error(&work)); return 1; }
    rc = ipup_init(&emu, &c);
    if (rc) { fprintf(stderr, "%s: init: %s\n", b->name, ipup_last_error(&emu)); return 1; }
    ipup_run_steps(&emu, 1, NULL); /* warm-up: page in the pools, wake the threads */
    t0 = now_s();
    c0 = (double)clock();
    rc = ipup_run_steps(&emu, steps, &st);
    *secs = now_s() - t0;
    if (rc) { fprintf(stderr, "%s: run: %s\n", b->name, ipup_last_error(&emu)); return 1; }
    *cpu = ((double)clock() - c0) / CLOCKS_PER_SEC / (double)st.samples * 1e6;
    *sim = st.samples_per_second;
    *util = st.phase_utilisation[IPUP_PHASE_MAIN];
    ipup_shutdown(&emu);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(const double *v, int n) {
    double t[MAXREPS];
    memcpy(t, v, (size_t)n * sizeof(double));
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int main(void) {
    static const bconf confs[] = {
        {"one-ipu", 1, 1, IPUP_SCHED_1F1B, IPUP_RUNNER_COOP},
        {"two-ipu-sequential", 2, 1, IPUP_SCHED_SEQUENTIAL, IPUP_RUNNER_COOP},
        {"two-ipu-coop", 2, 1, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP},
        {"two-ipu-threads", 2, 1, IPUP_SCHED_GROUPED, IPUP_RUNNER_THREADS},
        {"two-ipu-1f1b", 2, 1, IPUP_SCHED_1F1B, IPUP_RUNNER_THREADS},
        {"two-replicas", 1, 2, IPUP_SCHED_1F1B, IPUP_RUNNER_THREADS},
    };
    enum { NCONF = (int)(sizeof confs / sizeof confs[0]) };
    static double secs[NCONF][MAXREPS], ratio[NCONF][MAXREPS];
    double sps[NCONF], x[NCONF], lo[NCONF], hi[NCONF], sim[NCONF], util[NCONF], cpu[NCONF], simbase;
    const char *only = getenv("IPUPIPE_BENCH_ONLY");
    ipup_model_desc m;
    char msg[256], loadavg[128] = "?";
    int i, k, rep, steps = 12, reps = 5;
    FILE *js;
    if (getenv("IPUPIPE_BENCH_STEPS")) steps = atoi(getenv("IPUPIPE_BENCH_STEPS"));
    if (getenv("IPUPIPE_BENCH_REPS")) reps = atoi(getenv("IPUPIPE_BENCH_REPS"));
    if (steps < 1) steps = 1;
    if (reps < 1) reps = 1;
    if (reps > MAXREPS) reps = MAXREPS;
    for (i = 0; i < NSAMPLES * IN; i++) data_x[i] = ipup_rng_uniform_f32(5, 0, (uint64_t)i);
    for (i = 0; i < NSAMPLES; i++) data_y[i] = (int32_t)ipup_rng_below(5, 1, (uint64_t)i, 10);
    memset(&m, 0, sizeof m);
    m.in_h = 1; m.in_w = 1; m.in_c = IN;
    if (ipup_model_parse("dense512,gelu,dense512,gelu,dense512,gelu,dense512,gelu,dense10,xent", &m, msg, sizeof msg)) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    {
        /* the machine is shared: say how busy it was (Linux; absent elsewhere) */
        FILE *la = fopen("/proc/loadavg", "r");
        if (la) {
            if (fgets(loadavg, sizeof loadavg, la)) loadavg[strcspn(loadavg, "\n")] = 0;
            fclose(la);
        }
    }
    printf("emulator bench: 784-512x4-10 GELU MLP, B=32, M=16, SGD, %d timed steps, median of %d interleaved rounds "
           "(kernels: %s; loadavg %s)\n", steps, reps, IPUP_KERNELS_SIMD, loadavg);
    printf("%-20s %5s %8s %8s %12s %9s %13s %13s | %14s %9s %9s\n", "config", "ipus", "replicas", "runner", "samples/s",
           "speed-up", "(min..max)", "cpu-us/sample", "sim samples/s", "sim-x", "sim-util");
    /* rounds: every configuration once per round, so a change of the machine's load hits
       all of them alike; a configuration's speed-up in a round is over that round's
       one-ipu, and the median over the rounds counts */
    for (k = 0; k < NCONF; k++) { sim[k] = 1.0; util[k] = cpu[k] = 0.0; }
    for (rep = 0; rep < reps; rep++)
        for (k = 0; k < NCONF; k++) {
            secs[k][rep] = 1.0;
            if (only && strcmp(only, confs[k].name) != 0) continue;
            if (run_conf(&confs[k], &m, steps, &secs[k][rep], &cpu[k], &sim[k], &util[k])) return 1;
        }
    simbase = sim[0];
    for (k = 0; k < NCONF; k++) {
        const bconf *b = &confs[k];
        const double samples = (double)steps * 16.0 * 32.0 * (double)b->replicas;
        for (rep = 0; rep < reps; rep++) ratio[k][rep] = secs[0][rep] / secs[k][rep] * (double)b->replicas; /* samples/s */
        sps[k] = samples / median(secs[k], reps);
        x[k] = median(ratio[k], reps);
        lo[k] = hi[k] = ratio[k][0];
        for (rep = 1; rep < reps; rep++) {
            if (ratio[k][rep] < lo[k]) lo[k] = ratio[k][rep];
            if (ratio[k][rep] > hi[k]) hi[k] = ratio[k][rep];
        }
        if (only && strcmp(only, b->name) != 0) continue;
        if (only) { /* no baseline was run */
            printf("%-20s %5d %8d %8s %12.0f %9s %13s %13.1f | %14.0f %9s %9.2f\n", b->name, b->stages * b->replicas,
                   b->replicas, b->runner == IPUP_RUNNER_THREADS ? "threads" : "coop", sps[k], "-", "-", cpu[k], sim[k], "-",
                   util[k]);
            continue;
        }
        printf("%-20s %5d %8d %8s %12.0f %8.2fx  (%.2f..%.2f) %13.1f | %14.0f %8.2fx %9.2f\n", b->name,
               b->stages * b->replicas, b->replicas, b->runner == IPUP_RUNNER_THREADS ? "threads" : "coop", sps[k], x[k],
               lo[k], hi[k], cpu[k], sim[k], sim[k] / simbase, util[k]);
    }
    if (only) return 0; /* one configuration: no baseline, no file */
    js = fopen("build/bench/emulator.json", "w");
    if (!js) { perror("build/bench/emulator.json"); return 1; }
    fprintf(js, "[\n");
    for (k = 0; k < NCONF; k++) {
        const bconf *b = &confs[k];
        fprintf(js, "  {\"name\": \"%s\", \"ipus\": %d, \"replicas\": %d, \"runner\": \"%s\", \"samples_per_second\": %.1f, \"speedup_vs_one_ipu\": %.3f, \"speedup_min\": %.3f, \"speedup_max\": %.3f, \"rounds\": %d, \"simulated_samples_per_second\": %.1f, \"simulated_speedup\": %.3f, \"cpu_us_per_sample\": %.2f}%s\n",
                b->name, b->stages * b->replicas, b->replicas, b->runner == IPUP_RUNNER_THREADS ? "threads" : "coop",
                sps[k], x[k], lo[k], hi[k], reps, sim[k], sim[k] / simbase, cpu[k], k + 1 < NCONF ? "," : "");
    }
    fprintf(js, "]\n");
    fclose(js);
    printf("targets: two-ipu-threads %.2fx (a 2-stage grouped pipeline, >= 1.85x), two-replicas %.2fx (>= 1.85x); "
           "medians of per-round ratios; wrote build/bench/emulator.json\n", x[3], x[5]);
    return 0;
}
