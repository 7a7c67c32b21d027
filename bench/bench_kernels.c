/* bench_kernels.c - speed of the hot kernels of ipupipe_kernels.h against this machine's
 * measured single-core fp32 FMA peak and against a naive triple loop timed in the same run.
 *
 *   build/bench/bench_kernels [--quick] [--layers] [--json PATH]
 *
 * 1. Peak: a micro-benchmark of many independent FMA chains (24 accumulators, enough to
 *    hide the FMA latency on any x86 core), in the widest vector the CPU has (zmm with
 *    AVX-512, ymm with AVX2): examples/common/fma_peak.h, shared with bench_train and the trainer.
 * 2. Dense forward, backward-data (dx = dy W^T) and backward-weights (dW += x^T dy) at the
 *    MNIST MLP shapes (784-256-128-64-32-10) with batch 16, 32 and 64; conv3x3 forward and
 *    backward at the Keras MNIST CNN shapes, batch 64: 28x28x1 -> 26x26x32 and
 *    13x13x32 -> 11x11x64 (the first layer's backward has no dx: nothing consumes it).
 * Each figure is the best of several timed batches of calls (the machine is shared).
 * Table on stdout; one JSON object per measurement in build/bench/kernels.json.
 */
#define _POSIX_C_SOURCE 199309L
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_kernels.h"
#include "fma_peak.h"
#define REF_KERNELS_FLOAT
#include "ref_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double budget = 0.12; /* seconds per timed measurement */

/* ------------------------------------------------------------ FMA peak */

/* examples/common/fma_peak.h: many short trials of 24 independent zmm FMA chains (12 ymm, 8
   scalar), the best one; the loops are chosen at run time, so every build of this file
   divides by the machine's peak */
static double measure_peak(const char **what) { return fma_peak_gflops(0, what); }

/* ------------------------------------------------------------ naive references */

/* ref_dense, ref_dense_bwd_data, ref_dense_bwd_w, ref_conv, ref_conv_bwd (in float): the
   scalar loops tests/test_kernels.c checks against, from tests/ref_kernels.h */

/* ------------------------------------------------------------ timing */

typedef struct {
    int kind; /* 0 dense fwd, 1 dense bwd-data, 2 dense bwd-w, 3 conv fwd, 4 conv bwd (+dx), 5 conv bwd (no dx) */
    int naive;
    int B, IN, OUT, H, W, CI, CO;
    float *x, *w, *b, *y, *dy, *dx, *dw, *db, *scratch;
} job;

static void run(const job *j) {
    switch (j->kind) {
    case 0:
        if (j->naive) ref_dense(j->B, j->IN, j->OUT, j->x, j->w, j->b, j->y);
        else ipup_dense_fwd_f32(j->B, j->IN, j->OUT, j->x, j->w, j->b, j->y);
        break;
    case 1:
        if (j->naive) ref_dense_bwd_data(j->B, j->IN, j->OUT, j->w, j->dy, j->dx);
        else ipup_dense_bwd_f32(j->B, j->IN, j->OUT, j->x, j->w, j->dy, j->dx, NULL, NULL);
        break;
    case 2:
        if (j->naive) ref_dense_bwd_w(j->B, j->IN, j->OUT, j->x, j->dy, j->dw);
        else ipup_dense_bwd_f32(j->B, j->IN, j->OUT, j->x, j->w, j->dy, NULL, j->dw, NULL);
        break;
    case 3:
        if (j->naive) ref_conv(j->B, j->H, j->W, j->CI, j->CO, j->x, j->w, j->b, j->y);
        else ipup_conv3x3_fwd_f32(j->B, j->H, j->W, j->CI, j->CO, j->x, j->w, j->b, j->y, NULL);
        break;
    default:
        if (j->naive) ref_conv_bwd(j->B, j->H, j->W, j->CI, j->CO, j->x, j->w, j->dy, j->kind == 4 ? j->dx : NULL, j->dw, j->db);
        else ipup_conv3x3_bwd_f32(j->B, j->H, j->W, j->CI, j->CO, j->x, j->w, j->dy, j->kind == 4 ? j->dx : NULL, j->dw, j->db, j->scratch);
        break;
    }
}

/* best seconds per call over many short batches of calls (~2 ms each): the machine is
   shared, and the fastest batch is the one that had its core to itself */
static double time_job(const job *j, double seconds, int min_trials) {
    double t0 = now(), t, best = 1e30;
    long reps = 1, i;
    int trial;
    run(j); /* warm up, caches */
    t = now() - t0;
    if (t > 0.0 && t < 0.002) reps = (long)(0.002 / t) + 1;
    t0 = now();
    for (trial = 0; trial < 400 && (trial < min_trials || now() - t0 < seconds); trial++) {
        double s = now();
        for (i = 0; i < reps; i++) run(j);
        s = (now() - s) / (double)reps;
        if (s < best) best = s;
    }
    return best;
}

/* 64-byte aligned, as the emulator carves every tensor (ipupipe.h pools): a row of 256
   floats then starts on a cache line, as it does in training; malloc's 16-byte offset
   would make every vector of such a row straddle two lines */
static float *buf(size_t n) {
    float *p = (float *)aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    size_t i;
    uint64_t s = n;
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (i = 0; i < n; i++) p[i] = ipup_rng_uniform_f32(7, s, i) - 0.5f;
    return p;
}

/* The same products with the weights (forward) or the weight gradient (backward) evicted
   from the core's caches before each timed call, as training finds them: between two
   micro-batches of the mlp's 784x256 layer the core also reads that layer's other 800 KB
   tensor, the stash and the next images, more than its L2 holds. One call per timing, each
   after writing a buffer of `evict_bytes` (8 MB, bigger than the L2s of today's cores); the
   median call of `trials` (at most 256), as training meets a typical call, not the luckiest. */
static char *evict_buf;
static const size_t evict_bytes = (size_t)8 << 20;
static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double time_cold(const job *j, int trials) {
    double t[256];
    int trial;
    size_t i;
    if (trials > 256) trials = 256;
    for (trial = 0; trial < trials; trial++) {
        for (i = 0; i < evict_bytes; i += 64) evict_buf[i] = (char)(evict_buf[i] + 1);
        t[trial] = now();
        run(j);
        t[trial] = now() - t[trial];
    }
    qsort(t, (size_t)trials, sizeof t[0], cmp_double);
    return t[trials / 2];
}

static FILE *json;
static int json_first = 1;
static double peak;
static int below_target = 0;

static void report(const char *name, const char *shape, double flops, job *j, double target) {
    double t, tn, g, gn;
    j->naive = 0;
    t = time_job(j, budget, 20);
    j->naive = 1;
    tn = time_job(j, budget * 0.5, 3);
    g = flops / t * 1e-9;
    gn = flops / tn * 1e-9;
    printf("%-22s %-24s %8.1f %7.3f %8.2f %7.1fx %s\n", name, shape, g, g / peak, gn, g / gn,
           target > 0 ? (g / peak >= target ? "(target met)" : "(BELOW target)") : "");
    if (target > 0 && g / peak < target) below_target++;
    if (json) {
        fprintf(json,
                "%s  {\"name\": \"%s\", \"shape\": \"%s\", \"gflops\": %.3f, \"peak_gflops\": %.3f, "
                "\"fraction_of_peak\": %.4f, \"naive_gflops\": %.3f, \"simd\": \"%s\"}",
                json_first ? "" : ",\n", name, shape, g, peak, g / peak, gn, IPUP_KERNELS_SIMD);
        json_first = 0;
    }
    fflush(stdout);
}

static void report_cold(const char *name, const char *shape, double flops, job *j) {
    double t, g;
    j->naive = 0;
    t = time_cold(j, budget >= 0.1 ? 200 : 50);
    g = flops / t * 1e-9;
    printf("%-22s %-24s %8.1f %7.3f %8s %8s (cold: %s evicted first; median call)\n", name, shape, g, g / peak, "-",
           "-", j->kind == 0 ? "w" : "dw");
    if (json) {
        fprintf(json,
                "%s  {\"name\": \"%s\", \"shape\": \"%s\", \"cold\": true, \"statistic\": \"median\", \"gflops\": %.3f, "
                "\"peak_gflops\": %.3f, \"fraction_of_peak\": %.4f, \"simd\": \"%s\"}",
                json_first ? "" : ",\n", name, shape, g, peak, g / peak, IPUP_KERNELS_SIMD);
        json_first = 0;
    }
    fflush(stdout);
}

/* ------------------------------------------------------------ the layer kernels */

/* One layer-kernel call: the kernels of MLPerf Tiny's networks (conv2d, depthwise, batch
   norm, average pooling, activations) at their shapes. portable: the *_portable reference
   (conv2d and depthwise; the "naive" column of their rows). */
typedef struct {
    int kind, portable, B, N, C, kh, kw, sh, sw;
    ipup_conv2d_shape s;
    float *x, *w, *b, *y, *dy, *dx, *dw, *db, *scratch, *g, *beta, *mean, *inv;
} ljob;
enum { L_CONV_FWD, L_CONV_BWD, L_CONV_BWD_W, L_DW_FWD, L_DW_BWD, L_BN_FWD, L_BN_BWD,
       L_POOL_FWD, L_POOL_BWD, L_SIGMOID, L_TANH, L_HSWISH, L_ADD };

static void lrun(const ljob *j) {
    const ipup_conv2d_shape *s = &j->s;
    switch (j->kind) {
    case L_CONV_FWD:
        if (j->portable) ipup_conv2d_fwd_f32_portable(j->B, s, j->x, j->w, j->b, j->y);
        else ipup_conv2d_fwd_f32(j->B, s, j->x, j->w, j->b, j->y, j->scratch);
        break;
    case L_CONV_BWD: case L_CONV_BWD_W: {
        float *dx = j->kind == L_CONV_BWD ? j->dx : NULL;
        if (j->portable) ipup_conv2d_bwd_f32_portable(j->B, s, j->x, j->w, j->dy, dx, j->dw, j->db);
        else ipup_conv2d_bwd_f32(j->B, s, j->x, j->w, j->dy, dx, j->dw, j->db, j->scratch);
        break;
    }
    case L_DW_FWD:
        if (j->portable) ipup_dwconv2d_fwd_f32_portable(j->B, s, j->x, j->w, j->b, j->y);
        else ipup_dwconv2d_fwd_f32(j->B, s, j->x, j->w, j->b, j->y);
        break;
    case L_DW_BWD:
        if (j->portable) ipup_dwconv2d_bwd_f32_portable(j->B, s, j->x, j->w, j->dy, j->dx, j->dw, j->db);
        else ipup_dwconv2d_bwd_f32(j->B, s, j->x, j->w, j->dy, j->dx, j->dw, j->db);
        break;
    case L_BN_FWD:
        ipup_batchnorm_fwd_train_f32(j->N, j->C, j->x, j->g, j->beta, 1e-3f, j->y, j->mean, j->inv);
        break;
    case L_BN_BWD:
        ipup_batchnorm_bwd_f32(j->N, j->C, j->x, j->g, j->mean, j->inv, j->dy, j->dx, j->dw, j->db);
        break;
    case L_POOL_FWD:
        ipup_avgpool_fwd_f32(j->B, s->h, s->w, j->C, j->kh, j->kw, j->sh, j->sw, j->x, j->y);
        break;
    case L_POOL_BWD:
        ipup_avgpool_bwd_f32(j->B, s->h, s->w, j->C, j->kh, j->kw, j->sh, j->sw, j->dy, j->dx);
        break;
    case L_SIGMOID: ipup_sigmoid_fwd_f32(j->N, j->x, j->y); break;
    case L_TANH: ipup_tanh_fwd_f32(j->N, j->x, j->y); break;
    case L_HSWISH: ipup_hard_swish_fwd_f32(j->N, j->x, j->y); break;
    default: ipup_add_f32(j->N, j->y, j->x); break; /* the stream-add of the bandwidth */
    }
}
/* best seconds per call, as time_job */
static double time_ljob(const ljob *j, double seconds, int min_trials) {
    double t0 = now(), t, best = 1e30;
    long reps = 1, i;
    int trial;
    lrun(j);
    t = now() - t0;
    if (t > 0.0 && t < 0.002) reps = (long)(0.002 / t) + 1;
    t0 = now();
    for (trial = 0; trial < 400 && (trial < min_trials || now() - t0 < seconds); trial++) {
        double s = now();
        for (i = 0; i < reps; i++) lrun(j);
        s = (now() - s) / (double)reps;
        if (s < best) best = s;
    }
    return best;
}
static void json_row(const char *name, const char *shape, const char *fields) {
    if (!json) return;
    fprintf(json, "%s  {\"name\": \"%s\", \"shape\": \"%s\", %s, \"simd\": \"%s\"}",
            json_first ? "" : ",\n", name, shape, fields, IPUP_KERNELS_SIMD);
    json_first = 0;
}
/* memory bandwidth of the stream-add acc += x (read 2 floats, write 1: 12 bytes an
   element) over arrays of `bytes` in all: what a kernel touching that many bytes can
   move at best, from the cache level that holds them */
static double measure_bw(size_t bytes) {
    ljob j;
    size_t n = bytes / 12 < 64 ? 64 : bytes / 12;
    double t;
    memset(&j, 0, sizeof j);
    j.kind = L_ADD; j.N = (int)n; j.x = buf(n); j.y = buf(n);
    t = time_ljob(&j, budget, 10);
    free(j.x); free(j.y);
    return 12.0 * (double)n / t * 1e-9;
}
static double peak_dram_bw;

/* a conv2d row: GFLOP/s, fraction of the FMA peak, the portable reference's GFLOP/s */
static void lreport_flops(const char *name, const char *shape, double flops, ljob *j,
                          double target) {
    double t, tp, g, gp;
    char f[256];
    j->portable = 0;
    t = time_ljob(j, budget, 20);
    j->portable = 1;
    tp = time_ljob(j, budget * 0.3, 3);
    j->portable = 0;
    g = flops / t * 1e-9; gp = flops / tp * 1e-9;
    printf("%-22s %-24s %8.1f %7.3f %8.2f %7.1fx %s\n", name, shape, g, g / peak, gp, g / gp,
           target > 0 ? (g / peak >= target ? "(target met)" : "(BELOW target)") : "");
    if (target > 0 && g / peak < target) below_target++;
    snprintf(f, sizeof f, "\"gflops\": %.3f, \"peak_gflops\": %.3f, \"fraction_of_peak\": %.4f, "
             "\"portable_gflops\": %.3f", g, peak, g / peak, gp);
    json_row(name, shape, f);
    fflush(stdout);
}
/* a memory-bound row: the bytes the kernel must move at least (each input read once, each
   output written once) per second, against the stream-add bandwidth over as many bytes */
static void lreport_bytes(const char *name, const char *shape, double bytes, ljob *j) {
    double t = time_ljob(j, budget, 20), bw = measure_bw((size_t)bytes), gbs = bytes / t * 1e-9;
    char f[256];
    printf("%-22s %-24s %8.1f %7.3f %8.1f %8.1f (GB/s; of the stream-add at that size)\n", name,
           shape, gbs, gbs / bw, bw, peak_dram_bw);
    snprintf(f, sizeof f, "\"gbytes_per_s\": %.3f, \"bandwidth_gbytes_per_s\": %.3f, "
             "\"fraction_of_bandwidth\": %.4f, \"dram_gbytes_per_s\": %.3f", gbs, bw, gbs / bw,
             peak_dram_bw);
    json_row(name, shape, f);
    fflush(stdout);
}

static void lalloc(ljob *j, size_t nx, size_t ny, size_t nw, size_t nb) {
    j->x = buf(nx); j->dx = buf(nx); j->y = buf(ny); j->dy = buf(ny);
    j->w = buf(nw); j->dw = buf(nw); j->b = buf(nb); j->db = buf(nb);
    j->g = buf(nb); j->beta = buf(nb); j->mean = buf(nb); j->inv = buf(nb);
    j->scratch = buf(ipup_conv2d_scratch_floats(&j->s, j->B) + 1);
}
static void lfree(ljob *j) {
    free(j->x); free(j->dx); free(j->y); free(j->dy); free(j->w); free(j->dw); free(j->b);
    free(j->db); free(j->g); free(j->beta); free(j->mean); free(j->inv); free(j->scratch);
}

/* the convolutions of DS-CNN, MobileNetV1 0.25 and ResNet-8 at batch 8: forward, backward
   (dx, dw, db; only dw, db for a first layer, whose dx nothing consumes) */
static void bench_conv2d(void) {
    static const struct { const char *net; int h, w, ci, co, k1, k2, s, first; } cs[] = {
        {"ds-cnn", 49, 10, 1, 64, 10, 4, 2, 1},   {"ds-cnn", 25, 5, 64, 64, 1, 1, 1, 0},
        {"mobilenet", 96, 96, 3, 8, 3, 3, 2, 1},  {"mobilenet", 48, 48, 8, 16, 1, 1, 1, 0},
        {"mobilenet", 6, 6, 128, 128, 1, 1, 1, 0}, {"resnet8", 32, 32, 3, 16, 3, 3, 1, 1},
        {"resnet8", 32, 32, 16, 16, 3, 3, 1, 0},  {"resnet8", 32, 32, 16, 32, 3, 3, 2, 0},
        {"resnet8", 16, 16, 32, 32, 3, 3, 1, 0},  {"resnet8", 32, 32, 16, 32, 1, 1, 2, 0},
    };
    size_t c;
    for (c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        ljob j;
        char shape[64];
        double f;
        const int kxk = cs[c].k1 > 1 || cs[c].s > 1; /* the target: strided or k x k */
        memset(&j, 0, sizeof j);
        j.B = 8;
        if (ipup_conv2d_shape_init(&j.s, cs[c].h, cs[c].w, cs[c].ci, cs[c].co, cs[c].k1,
                                   cs[c].k2, cs[c].s, cs[c].s, 1)) exit(3);
        lalloc(&j, (size_t)(8 * cs[c].h * cs[c].w * cs[c].ci), (size_t)(8 * j.s.oh * j.s.ow * cs[c].co),
               (size_t)(cs[c].k1 * cs[c].k2 * cs[c].ci * cs[c].co), (size_t)cs[c].co);
        f = 2.0 * 8 * j.s.oh * j.s.ow * (double)(cs[c].k1 * cs[c].k2 * cs[c].ci) * cs[c].co;
        snprintf(shape, sizeof shape, "8x%dx%dx%d->%d k%dx%ds%d", cs[c].h, cs[c].w, cs[c].ci,
                 cs[c].co, cs[c].k1, cs[c].k2, cs[c].s);
        j.kind = L_CONV_FWD;
        lreport_flops("conv2d_fwd", shape, f, &j, kxk ? 0.5 : 0.0);
        if (cs[c].first) {
            j.kind = L_CONV_BWD_W;
            lreport_flops("conv2d_bwd(dw,db)", shape, f, &j, 0.0);
        } else {
            j.kind = L_CONV_BWD;
            lreport_flops("conv2d_bwd(dx,dw,db)", shape, 2.0 * f, &j, 0.0);
        }
        lfree(&j);
    }
}

static void bench_memory_bound(void) {
    static const struct { int h, w, c, s; } ds[] = {{25, 5, 64, 1}, {48, 48, 8, 1}, {48, 48, 16, 2},
                                                    {6, 6, 128, 1}};
    static const struct { int n, c; } bs[] = {{8 * 25 * 5, 64}, {8 * 48 * 48, 8}, {8 * 32 * 32, 16},
                                              {8, 128}};
    static const struct { int h, w, c, kh, kw; } ps[] = {{25, 5, 64, 24, 5}, {8, 8, 64, 8, 8},
                                                         {3, 3, 64, 3, 3}};
    size_t i;
    ljob j;
    char shape[64];
    peak_dram_bw = measure_bw((size_t)192 << 20);
    printf("stream-add bandwidth (acc += x) over 192 MB: %.1f GB/s (DRAM); the memory-bound rows "
           "below give GB/s, the fraction of the stream-add over as many bytes, its GB/s, DRAM's\n",
           peak_dram_bw);
    for (i = 0; i < sizeof ds / sizeof ds[0]; i++) {
        double nx, ny;
        memset(&j, 0, sizeof j);
        j.B = 8;
        if (ipup_conv2d_shape_init(&j.s, ds[i].h, ds[i].w, ds[i].c, ds[i].c, 3, 3, ds[i].s, ds[i].s, 1))
            exit(3);
        nx = 8.0 * ds[i].h * ds[i].w * ds[i].c; ny = 8.0 * j.s.oh * j.s.ow * ds[i].c;
        lalloc(&j, (size_t)nx, (size_t)ny, (size_t)(9 * ds[i].c), (size_t)ds[i].c);
        snprintf(shape, sizeof shape, "8x%dx%dx%d k3s%d", ds[i].h, ds[i].w, ds[i].c, ds[i].s);
        j.kind = L_DW_FWD;
        lreport_bytes("dwconv2d_fwd", shape, 4.0 * (nx + ny), &j);
        j.kind = L_DW_BWD;
        lreport_bytes("dwconv2d_bwd(dx,dw,db)", shape, 4.0 * (2.0 * nx + ny), &j);
        lfree(&j);
    }
    for (i = 0; i < sizeof bs / sizeof bs[0]; i++) {
        const double n = (double)bs[i].n * bs[i].c;
        memset(&j, 0, sizeof j);
        j.N = bs[i].n; j.C = bs[i].c;
        lalloc(&j, (size_t)n, (size_t)n, (size_t)bs[i].c, (size_t)bs[i].c);
        snprintf(shape, sizeof shape, "N%d C%d", bs[i].n, bs[i].c);
        j.kind = L_BN_FWD;
        lreport_bytes("batchnorm_fwd_train", shape, 8.0 * n, &j);
        j.kind = L_BN_BWD;
        lreport_bytes("batchnorm_bwd", shape, 12.0 * n, &j);
        lfree(&j);
    }
    for (i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        const double nx = 8.0 * ps[i].h * ps[i].w * ps[i].c, ny = 8.0 * ps[i].c;
        memset(&j, 0, sizeof j);
        j.B = 8; j.C = ps[i].c; j.kh = ps[i].kh; j.kw = ps[i].kw; j.sh = ps[i].kh; j.sw = ps[i].kw;
        j.s.h = ps[i].h; j.s.w = ps[i].w;
        lalloc(&j, (size_t)nx, (size_t)ny, 1, 1);
        snprintf(shape, sizeof shape, "8x%dx%dx%d k%dx%d", ps[i].h, ps[i].w, ps[i].c, ps[i].kh,
                 ps[i].kw);
        j.kind = L_POOL_FWD;
        lreport_bytes("avgpool_fwd", shape, 4.0 * (nx + ny), &j);
        j.kind = L_POOL_BWD;
        lreport_bytes("avgpool_bwd", shape, 4.0 * (nx + ny), &j);
        lfree(&j);
    }
    {   /* activations on MobileNet's first feature map, batch 8 */
        static const char *names[3] = {"sigmoid_fwd", "tanh_fwd", "hard_swish_fwd"};
        const int n = 8 * 48 * 48 * 8;
        int k;
        memset(&j, 0, sizeof j);
        j.N = n;
        lalloc(&j, (size_t)n, (size_t)n, 1, 1);
        for (k = 0; k < 3; k++) {
            j.kind = L_SIGMOID + k;
            lreport_bytes(names[k], "147456", 8.0 * n, &j);
        }
        lfree(&j);
    }
}

int main(int argc, char **argv) {
    static const int dims[6] = {784, 256, 128, 64, 32, 10};
    static const int batches[3] = {32, 16, 64};
    const char *json_path = "build/bench/kernels.json", *what;
    int a, bi, l, layers_only = 0;
    double t_start = now();
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick")) budget = 0.03;
        else if (!strcmp(argv[a], "--layers")) layers_only = 1;
        else if (!strcmp(argv[a], "--json") && a + 1 < argc) json_path = argv[++a];
        else {
            fprintf(stderr, "usage: %s [--quick] [--layers] [--json PATH]\n", argv[0]);
            return 2;
        }
    }
    peak = measure_peak(&what);
    printf("ipupipe_kernels.h path: %s; single-core fp32 FMA peak measured: %.1f GFLOP/s (%s)\n",
           IPUP_KERNELS_SIMD, peak, what);
    printf("%-22s %-24s %8s %7s %8s %8s\n", "kernel", "shape", "GFLOP/s", "of peak", "naive", "speed-up");
    json = fopen(json_path, "w");
    if (!json) fprintf(stderr, "warning: cannot write %s; table only\n", json_path);
    else fprintf(json, "[\n");

    for (bi = 0; bi < (layers_only ? 0 : 3); bi++)
        for (l = 0; l < 5; l++) {
            int B = batches[bi], IN = dims[l], OUT = dims[l + 1], k;
            char shape[64];
            double flops = 2.0 * B * IN * OUT;
            job j;
            const double target = (B == 32 && IN == 784) ? 0.70 : 0.0;
            memset(&j, 0, sizeof j);
            j.B = B; j.IN = IN; j.OUT = OUT;
            j.x = buf((size_t)(B * IN)); j.w = buf((size_t)(IN * OUT)); j.b = buf((size_t)OUT);
            j.y = buf((size_t)(B * OUT)); j.dy = buf((size_t)(B * OUT)); j.dx = buf((size_t)(B * IN));
            j.dw = buf((size_t)(IN * OUT));
            snprintf(shape, sizeof shape, "%dx%dx%d", B, IN, OUT);
            for (k = 0; k < 3; k++) {
                static const char *names[3] = {"dense_fwd", "dense_bwd_data", "dense_bwd_weights"};
                j.kind = k;
                report(names[k], shape, flops, &j, target);
            }
            if (IN == 784 && B != 16) { /* the mlp's big layer as training meets it; at 64, two
                                           micro-batches' worth of rows per pass over w or dw */
                evict_buf = (char *)buf(evict_bytes / sizeof(float));
                j.kind = 0;
                report_cold("dense_fwd", shape, flops, &j);
                j.kind = 2;
                report_cold("dense_bwd_weights", shape, flops, &j);
                free(evict_buf);
            }
            free(j.x); free(j.w); free(j.b); free(j.y); free(j.dy); free(j.dx); free(j.dw);
        }

    {
        static const int cs[2][4] = {{28, 28, 1, 32}, {13, 13, 32, 64}};
        int c;
        for (c = 0; c < (layers_only ? 0 : 2); c++) {
            const int B = 64, H = cs[c][0], W = cs[c][1], CI = cs[c][2], CO = cs[c][3];
            const int OH = H - 2, OW = W - 2;
            double f1 = 2.0 * B * OH * OW * 9.0 * CI * CO;
            char shape[64];
            job j;
            memset(&j, 0, sizeof j);
            j.B = B; j.H = H; j.W = W; j.CI = CI; j.CO = CO;
            j.x = buf((size_t)(B * H * W * CI)); j.w = buf((size_t)(9 * CI * CO)); j.b = buf((size_t)CO);
            j.y = buf((size_t)(B * OH * OW * CO)); j.dy = buf((size_t)(B * OH * OW * CO));
            j.dx = buf((size_t)(B * H * W * CI)); j.dw = buf((size_t)(9 * CI * CO)); j.db = buf((size_t)CO);
            j.scratch = buf((size_t)IPUP_CONV3X3_BWD_SCRATCH(B, H, W, CI, CO));
            snprintf(shape, sizeof shape, "%dx%dx%dx%d->%d", B, H, W, CI, CO);
            j.kind = 3;
            report("conv3x3_fwd", shape, f1, &j, 0.45);
            if (c == 0) {
                j.kind = 5;
                report("conv3x3_bwd(dw,db)", shape, f1, &j, 0.45);
                j.kind = 4;
                report("conv3x3_bwd(dx,dw,db)", shape, 2.0 * f1, &j, 0.0);
            } else {
                j.kind = 4;
                report("conv3x3_bwd(dx,dw,db)", shape, 2.0 * f1, &j, 0.45);
            }
            free(j.x); free(j.w); free(j.b); free(j.y); free(j.dy); free(j.dx); free(j.dw);
            free(j.db); free(j.scratch);
        }
    }
    printf("%-22s %-24s %8s %7s %8s %8s\n", "layer kernel", "shape (batch 8)", "GFLOP/s",
           "of peak", "portable", "speed-up");
    bench_conv2d();
    bench_memory_bound();
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
        printf("wrote %s\n", json_path);
    }
    {   /* the peak again at the end: a loaded machine shows up as a difference */
        const char *what2;
        double peak2 = measure_peak(&what2);
        printf("FMA peak measured again at the end: %.1f GFLOP/s (start: %.1f)%s\n", peak2, peak,
               peak2 > 1.1 * peak || peak2 < 0.9 * peak ? " - the machine was busy: figures are noisy" : "");
    }
    printf("%d measurement(s) below their target; bench took %.1f s\n", below_target, now() - t_start);
    return 0;
}
