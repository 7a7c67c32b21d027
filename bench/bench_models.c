/* bench/bench_models.c - training speed of the four MLPerf Tiny reference networks
 * (examples/common/mnist_texts.h, docs/models.md) on 1 and 2 emulated IPUs.
 *
 * Each network trains on synthetic samples of its input shape (random values; random
 * labels, or the input as the autoencoder's target), micro-batch B = 8, M = 8
 * micro-batches per step, Adam, IPUPIPE_BENCH_STEPS (default 2) timed steps after one
 * warm-up step (DS-CNN twice as many, the autoencoder 40 times: a timed part of tenths of
 * a second):
 *   1ipu   1 stage, cooperative runner (the baseline)
 *   2ipu   2 stages split at the network's default split (mnist_texts.h: MNT_<M>_SPLITS),
 *          grouped schedule, one thread per IPU
 * The configurations of all networks run in IPUPIPE_BENCH_REPS (default 3, at most 15)
 * interleaved rounds (the machine is shared: a change of load hits a round's rows alike);
 * samples/s is from the median time, the 2-IPU speed-up is the median over the rounds of
 * the round's ratio to 1ipu (min..max beside it). Also: the training FLOPs per sample
 * (ipup_model_info: forward, weight gradients, input gradients after the first weight
 * layer) and the GFLOP/s as a fraction of one core's FMA peak measured in the same run
 * (examples/common/fma_peak.h), and the 1-IPU samples per second of process CPU time (what
 * a busy machine does not change much). The load average is printed before and after.
 * Writes build/bench/models.json.
 */
#define _POSIX_C_SOURCE 200809L
#define IPUP_MAX_LAYERS 128 /* MobileNetV1: 85 layers */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "ex_stages.h"
#include "fma_peak.h"
#include "mnist_texts.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BM_B 8
#define BM_M 8
#define BM_MAXREPS 15
#define BM_NETS 4
#define BM_CONFS 2

typedef struct {
    const char *name, *text, *split;
    int h, w, c;
    int steps_x; /* timed steps: this many times IPUPIPE_BENCH_STEPS (small networks run longer) */
} bm_net;

static const bm_net bm_nets[BM_NETS] = {
    {MNT_DS_CNN_NAME, MNT_DS_CNN_LAYERS, MNT_DS_CNN_SPLITS, MNT_DS_CNN_IN_H, MNT_DS_CNN_IN_W,
     MNT_DS_CNN_IN_C, 2},
    {MNT_MOBILENET_NAME, MNT_MOBILENET_LAYERS, MNT_MOBILENET_SPLITS, MNT_MOBILENET_IN_H,
     MNT_MOBILENET_IN_W, MNT_MOBILENET_IN_C, 1},
    {MNT_RESNET8_NAME, MNT_RESNET8_LAYERS, MNT_RESNET8_SPLITS, MNT_RESNET8_IN_H, MNT_RESNET8_IN_W,
     MNT_RESNET8_IN_C, 1},
    {MNT_FC_AE_NAME, MNT_FC_AE_LAYERS, MNT_FC_AE_SPLITS, MNT_FC_AE_IN_H, MNT_FC_AE_IN_W,
     MNT_FC_AE_IN_C, 40},
};

static ipup_model_desc bm_desc[BM_NETS];
static ipup_layer_info bm_info[IPUP_MAX_LAYERS];
static ipup_emu bm_emu;

static double bm_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* random inputs (keyed by the sample), random labels, or the input as the target */
static int bm_feed(void *user, const ipup_feed *f) {
    size_t i, n = (size_t)f->n * (size_t)f->row;
    (void)user;
    for (i = 0; i < n; i++)
        f->x[i] = ipup_rng_uniform_f32(3, (uint64_t)f->sample0, (uint64_t)i);
    if (f->labels)
        for (i = 0; i < (size_t)f->n; i++)
            f->labels[i] =
                (int32_t)ipup_rng_below(4, (uint64_t)f->sample0, i, (uint64_t)f->classes);
    if (f->targets) memcpy(f->targets, f->x, n * sizeof(float));
    return 0;
}

/* training FLOPs per sample: forward, weight gradients, and input gradients of every
   layer after the first one with weights (as the trainer counts them) */
static double bm_flops(const ipup_model_desc *d) {
    double fl = 0.0;
    int l, before = 0;
    if (ipup_model_info(d, bm_info, IPUP_MAX_LAYERS, NULL, 0) != IPUP_OK) return 0.0;
    for (l = 0; l < d->n_layers; l++) {
        const ipup_layer_info *I = &bm_info[l];
        fl += (double)I->flops_fwd + (double)I->flops_bwd_dw;
        if (before) fl += (double)I->flops_bwd_dx;
        if (I->n_w) before = 1;
    }
    return fl;
}

/* Seconds of `steps` - 1 steps of network k on 1 or 2 IPUs after a warm-up step, *cpu
   the process CPU seconds of them; -1 after a message. */
static double bm_run(int k, int ipus, int steps, double *cpu) {
    const bm_net *n = &bm_nets[k];
    ipup_config c;
    ipup_plan plan;
    void *pool[2] = {NULL, NULL}, *host = NULL;
    int32_t split[1];
    double t = -1.0, t0, c0;
    int i;
    memset(&c, 0, sizeof c);
    c.model = &bm_desc[k];
    c.stages = ipus;
    c.runner = ipus > 1 ? IPUP_RUNNER_THREADS : IPUP_RUNNER_COOP;
    c.schedule = IPUP_SCHED_GROUPED;
    c.microbatch = BM_B;
    c.microbatches = BM_M;
    c.repeat = 1 + (steps - 1) * n->steps_x;
    c.seed = 1;
    c.opt.kind = IPUP_OPT_ADAM;
    c.opt.lr = 0.001f;
    c.opt.beta1 = 0.9f;
    c.opt.beta2 = 0.999f;
    c.opt.eps = 1e-7f;
    c.infeed = bm_feed;
    if (ipus > 1) {
        split[0] = ex_find_layer(&bm_desc[k], n->split);
        c.split = split;
    }
    if (ipup_plan_config(&bm_emu, &c, &plan) != IPUP_OK) {
        fprintf(stderr, "%s on %d IPU(s): plan: %s\n", n->name, ipus, ipup_last_error(&bm_emu));
        return -1.0;
    }
    c.host.bytes = plan.host_bytes;
    c.host.mem = host = aligned_alloc(64, (plan.host_bytes + 63) / 64 * 64);
    for (i = 0; i < ipus; i++) {
        c.ipu[i].bytes = plan.ipu_bytes[i];
        c.ipu[i].mem = pool[i] = aligned_alloc(64, (plan.ipu_bytes[i] + 63) / 64 * 64);
    }
    if (ipup_init(&bm_emu, &c) != IPUP_OK) {
        fprintf(stderr, "%s on %d IPU(s): init: %s\n", n->name, ipus, ipup_last_error(&bm_emu));
    } else {
        if (ipup_run_steps(&bm_emu, 1, NULL) == IPUP_OK) { /* warm-up: page in the pools */
            t0 = bm_now();
            c0 = (double)clock();
            if (ipup_run_steps(&bm_emu, (steps - 1) * n->steps_x, NULL) == IPUP_OK) {
                t = bm_now() - t0;
                *cpu = ((double)clock() - c0) / CLOCKS_PER_SEC;
            }
        }
        if (t < 0.0)
            fprintf(stderr, "%s on %d IPU(s): run: %s\n", n->name, ipus, ipup_last_error(&bm_emu));
        ipup_shutdown(&bm_emu);
    }
    for (i = 0; i < 2; i++) free(pool[i]);
    free(host);
    return t;
}

/* the machine is shared: how busy it was (Linux; "?" elsewhere) */
static void bm_loadavg(char *buf) {
    FILE *la = fopen("/proc/loadavg", "r");
    if (!la) return;
    if (fgets(buf, 128, la)) buf[strcspn(buf, "\n")] = 0;
    fclose(la);
}

static int bm_cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double bm_median(const double *v, int n) {
    double t[BM_MAXREPS];
    memcpy(t, v, (size_t)n * sizeof(double));
    qsort(t, (size_t)n, sizeof t[0], bm_cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int main(void) {
    static double secs[BM_NETS][BM_CONFS][BM_MAXREPS], cpus[BM_NETS][BM_CONFS][BM_MAXREPS];
    static double ratio[BM_NETS][BM_MAXREPS];
    double cps[BM_NETS];
    double sps[BM_NETS][BM_CONFS], x[BM_NETS], lo[BM_NETS], hi[BM_NETS], fl[BM_NETS], peak;
    const char *peak_what = "";
    char msg[256], loadavg[2][128] = {"?", "?"};
    int k, r, cf, steps = 3, reps = 3, timed; /* steps: the warm-up and the timed ones */
    FILE *js;
    if (getenv("IPUPIPE_BENCH_STEPS")) steps = 1 + atoi(getenv("IPUPIPE_BENCH_STEPS"));
    if (getenv("IPUPIPE_BENCH_REPS")) reps = atoi(getenv("IPUPIPE_BENCH_REPS"));
    if (steps < 2) steps = 2;
    if (reps < 1) reps = 1;
    if (reps > BM_MAXREPS) reps = BM_MAXREPS;
    timed = steps - 1;
    for (k = 0; k < BM_NETS; k++) {
        if (ipup_model_parse(bm_nets[k].text, &bm_desc[k], msg, sizeof msg) != IPUP_OK) {
            fprintf(stderr, "%s: %s\n", bm_nets[k].name, msg);
            return 1;
        }
        bm_desc[k].in_h = bm_nets[k].h;
        bm_desc[k].in_w = bm_nets[k].w;
        bm_desc[k].in_c = bm_nets[k].c;
        fl[k] = bm_flops(&bm_desc[k]);
    }
    peak = fma_peak_gflops(1, &peak_what);
    bm_loadavg(loadavg[0]);
    printf("models bench: MLPerf Tiny networks, B=%d, M=%d, Adam, %d timed steps (DS-CNN x2, "
           "fc-ae x40) after a warm-up, median of %d "
           "interleaved rounds (kernels: %s; FMA peak %.0f GFLOP/s, %s; loadavg %s)\n",
           BM_B, BM_M, timed, reps, IPUP_KERNELS_SIMD, peak, peak_what, loadavg[0]);
    for (r = 0; r < reps; r++)
        for (k = 0; k < BM_NETS; k++)
            for (cf = 0; cf < BM_CONFS; cf++)
                if ((secs[k][cf][r] = bm_run(k, cf + 1, steps, &cpus[k][cf][r])) < 0.0) return 1;
    bm_loadavg(loadavg[1]);
    printf("%-18s %12s %12s %9s %13s %12s %10s %14s\n", "network", "1ipu samp/s", "2ipu samp/s",
           "speed-up", "(min..max)", "MFLOP/sample", "1ipu peak", "1ipu samp/cpu-s");
    js = fopen("build/bench/models.json", "w");
    if (!js) {
        perror("build/bench/models.json");
        return 1;
    }
    fprintf(js, "[\n");
    for (k = 0; k < BM_NETS; k++) {
        const double samples = (double)timed * bm_nets[k].steps_x * BM_B * BM_M;
        for (r = 0; r < reps; r++) ratio[k][r] = secs[k][0][r] / secs[k][1][r];
        for (cf = 0; cf < BM_CONFS; cf++) sps[k][cf] = samples / bm_median(secs[k][cf], reps);
        x[k] = bm_median(ratio[k], reps);
        cps[k] = samples / bm_median(cpus[k][0], reps);
        lo[k] = hi[k] = ratio[k][0];
        for (r = 1; r < reps; r++) {
            if (ratio[k][r] < lo[k]) lo[k] = ratio[k][r];
            if (ratio[k][r] > hi[k]) hi[k] = ratio[k][r];
        }
        const double frac = peak > 0.0 ? fl[k] * sps[k][0] * 1e-9 / peak : 0.0;
        printf("%-18s %12.0f %12.0f %8.2fx  (%.2f..%.2f) %12.2f %10.2f %14.0f\n", bm_nets[k].name,
               sps[k][0], sps[k][1], x[k], lo[k], hi[k], fl[k] * 1e-6, frac, cps[k]);
        fprintf(js,
                "  {\"name\": \"%s\", \"samples_per_second_1ipu\": %.1f, "
                "\"samples_per_second_2ipu\": %.1f, \"speedup_2ipu\": %.3f, \"speedup_min\": %.3f, "
                "\"speedup_max\": %.3f, \"rounds\": %d, "
                "\"train_flops_per_sample\": %.0f, \"samples_per_cpu_second_1ipu\": %.1f, "
                "\"fraction_of_fma_peak_1ipu\": %.3f}%s\n",
                bm_nets[k].name, sps[k][0], sps[k][1], x[k], lo[k], hi[k], reps, fl[k], cps[k],
                frac, k + 1 < BM_NETS ? "," : "");
    }
    fprintf(js, "]\n");
    fclose(js);
    printf("loadavg after: %s; wrote build/bench/models.json\n", loadavg[1]);
    return 0;
}
