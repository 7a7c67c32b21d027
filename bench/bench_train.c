/* bench_train.c - end-to-end training speed of the MNIST trainer, as users build and run it.
 *
 *   build/bench/bench_train            the whole benchmark (make bench)
 *   build/bench/bench_train --once M DIR K   one run of model M (mlp|cnn) on the data in
 *                        DIR and 1/K of the samples, with its default pipeline and on one
 *                        IPU: a "ROW" line each (the parent runs the -Os and portable
 *                        builds so; the portable one trains on 1/8: it is that much slower)
 *
 * Everything is mnist_train_main (examples/mnist/mnist_trainer.h), the program build/mnist-train
 * is, with one epoch of --train-limit samples and the infeed (shuffle, augmentation) in
 * the timed part. The Makefile builds this file three times: build/bench/bench_train with
 * the tools' flags (-O2 -march=native), bench_train_Os (-Os -march=native: what firmware
 * builds use) and bench_train_portable (-O2, no -march: the portable kernels). In one run,
 * interleaved so a change of load hits every row alike, 3 rounds of:
 *   1. one core (cooperative runner): mlp (micro-batch 32) and cnn (micro-batch 64), each
 *      with its default pipeline (2 emulated IPUs, grouped) and on one IPU, in this
 *      process (-O2) and in the -Os and portable builds (child processes);
 *   2. PyTorch (Debian's python3-torch, bench/pytorch_mnist.py: one thread, the same
 *      layers, micro-batch and update) when /usr/bin/python3 can import torch; otherwise
 *      the table says it is not installed (no constant stands in for it);
 * then 5 interleaved rounds of the threaded runner on the machine's cores: 2 replicas and
 * a 2-stage grouped pipeline (the balanced split, --splits auto --stages 2) against one IPU
 * (cooperative runner), with CPU-seconds per sample beside the wall-clock ratio and the
 * most a 2-stage split of the model's layers can give (total FLOPs / larger stage); then
 * the infeed benchmark (--infeed-benchmark, the TF user guide's dataset_benchmark): the
 * samples/s the trainer's infeed delivers on one thread against the samples/s the
 * simulated IPUs of the default pipeline consume (launch included), each model, 3 rounds,
 * the ratio of the two measured in the same run. Figures are medians over the rounds, as fractions
 * of one core's FMA peak measured in the same run (examples/common/fma_peak.h). The load average
 * is printed before and after. Writes build/bench/train.json. Uses data/mnist when
 * present, else synthetic IDX files of the same size written to /tmp.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE (Linux) for mt_alloc_huge */
#include <stdint.h>
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "mnist_trainer.h"

#include "idx_fixture.h"

#define BT_ROUNDS 3
#define BT_TROUNDS 5
#define BT_PY "/usr/bin/python3"

static const char *bt_data = "data/mnist";
static int bt_div = 1; /* --once: train on 1/bt_div of the samples (the slow portable build) */

typedef struct {
    double sps[BT_TROUNDS], cpu[BT_TROUNDS]; /* per round: samples/s wall, per CPU-second */
    int n;
} bt_series;

/* One run of mnist_train_main; *sps and *cpu_sps get its figures. 0 or -1. */
static int bt_train(const char *model, const char *runner, const char *layout, double *sps, double *cpu_sps,
                    double *flops) {
    const int cnn = strcmp(model, "cnn") == 0;
    const char *argv[32];
    char limit[32];
    int argc = 0;
    snprintf(limit, sizeof limit, "%d", (cnn ? 4096 : 32768) / bt_div);
    argv[argc++] = "mnist-train";
    argv[argc++] = "--model";
    argv[argc++] = model;
    argv[argc++] = "--batch-size";
    argv[argc++] = cnn ? "64" : "32";
    argv[argc++] = "--train-limit";
    argv[argc++] = limit;
    argv[argc++] = "--test-limit";
    argv[argc++] = "100";
    argv[argc++] = "--epochs";
    argv[argc++] = "1";
    argv[argc++] = "--data";
    argv[argc++] = bt_data;
    argv[argc++] = "--quiet";
    argv[argc++] = "--runner";
    argv[argc++] = runner;
    if (strcmp(layout, "1ipu") == 0) {
        argv[argc++] = "--splits";
        argv[argc++] = "none";
    } else if (strcmp(layout, "2replicas") == 0) {
        argv[argc++] = "--splits";
        argv[argc++] = "none";
        argv[argc++] = "--replicas";
        argv[argc++] = "2";
    } else if (strcmp(layout, "2stages") == 0) { /* the balanced split over 2 IPUs */
        argv[argc++] = "--splits";
        argv[argc++] = "auto";
        argv[argc++] = "--stages";
        argv[argc++] = "2";
    } else if (strcmp(layout, "infeed") == 0) { /* the default pipeline's infeed benchmark */
        argv[argc++] = "--infeed-benchmark";
    } /* "pipeline": the model's default split over 2 IPUs, grouped schedule */
    argv[argc] = NULL;
    fflush(stdout);
    if (mnist_train_main(argc, (char **)argv) != 0) {
        fprintf(stderr, "bench_train: %s %s %s failed\n", model, runner, layout);
        return -1;
    }
    *sps = mnist_train_last_sps;
    *cpu_sps = mnist_train_last_cpu_sps;
    if (flops) *flops = mnist_train_last_flops;
    return 0;
}

static int bt_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double bt_median(const double *v, int n) {
    double s[BT_TROUNDS];
    int i;
    if (n <= 0) return 0.0;
    for (i = 0; i < n; i++) s[i] = v[i];
    qsort(s, (size_t)n, sizeof s[0], bt_cmp);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}
static void bt_minmax(const double *v, int n, double *lo, double *hi) {
    int i;
    *lo = *hi = n > 0 ? v[0] : 0.0;
    for (i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

static void bt_loadavg(double la[3]) {
    FILE *f = fopen("/proc/loadavg", "r");
    la[0] = la[1] = la[2] = -1.0;
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3) la[0] = la[1] = la[2] = -1.0;
        fclose(f);
    }
}

/* --once MODEL: the default pipeline and one IPU, one line each: "ROW layout sps cpu_sps" */
static int bt_once(const char *model) {
    static const char *layouts[2] = {"pipeline", "1ipu"};
    int i;
    for (i = 0; i < 2; i++) {
        double s, c;
        if (bt_train(model, "coop", layouts[i], &s, &c, NULL) != 0) return 1;
        printf("ROW %s %.1f %.1f\n", layouts[i], s, c);
    }
    return 0;
}

/* A child build's --once run: its two figures into sps[0..1]; -1 when it could not run. */
static int bt_child(const char *exe, const char *model, int div, double sps[2]) {
    char cmd[512], line[256], layout[32];
    double s, c;
    int got = 0;
    FILE *p;
    snprintf(cmd, sizeof cmd, "%s --once %s %s %d", exe, model, bt_data, div);
    p = popen(cmd, "r");
    if (!p) return -1;
    while (fgets(line, sizeof line, p)) {
        if (sscanf(line, "ROW %31s %lf %lf", layout, &s, &c) != 3) continue;
        if (strcmp(layout, "pipeline") == 0) { sps[0] = s; got |= 1; }
        if (strcmp(layout, "1ipu") == 0) { sps[1] = s; got |= 2; }
    }
    return pclose(p) == 0 && got == 3 ? 0 : -1;
}

/* PyTorch's samples/s on model (bench/pytorch_mnist.py), or -1 when it did not run */
static double bt_pytorch(const char *model) {
    char cmd[256];
    double s = -1.0;
    FILE *p;
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 %s bench/pytorch_mnist.py %s 1.0 2>/dev/null", BT_PY, model);
    p = popen(cmd, "r");
    if (!p) return -1.0;
    if (fscanf(p, "samples_per_second %lf", &s) != 1) s = -1.0;
    if (pclose(p) != 0) s = -1.0;
    return s;
}
static int bt_have_torch(void) {
    return system(BT_PY " -c 'import torch' >/dev/null 2>&1") == 0;
}

typedef struct {
    const char *model;
    double flops;                         /* per training sample */
    double o2[2][BT_ROUNDS];              /* -O2 in-process: [pipeline, 1ipu][round] */
    double os[2][BT_ROUNDS], pt[2][BT_ROUNDS];
    double torch[BT_ROUNDS];
    int os_ok, pt_ok, torch_ok;
    bt_series base, rep, pipe;           /* threaded rounds */
    double feed[BT_ROUNDS], ipu[BT_ROUNDS]; /* infeed benchmark: host feed, simulated IPUs */
} bt_model;

/* The one-core rounds of model m: -O2 here, -Os and portable children, PyTorch. */
static int bt_one_core(bt_model *m, int torch) {
    int k;
    m->os_ok = m->pt_ok = 1;
    m->torch_ok = torch;
    for (k = 0; k < BT_ROUNDS; k++) {
        double c, child[2];
        if (bt_train(m->model, "coop", "pipeline", &m->o2[0][k], &c, &m->flops) != 0) return -1;
        if (bt_train(m->model, "coop", "1ipu", &m->o2[1][k], &c, NULL) != 0) return -1;
        if (m->os_ok && bt_child("build/bench/bench_train_Os", m->model, 1, child) == 0) {
            m->os[0][k] = child[0];
            m->os[1][k] = child[1];
        } else m->os_ok = 0;
        if (m->pt_ok && bt_child("build/bench/bench_train_portable", m->model, 8, child) == 0) {
            m->pt[0][k] = child[0];
            m->pt[1][k] = child[1];
        } else m->pt_ok = 0;
        if (m->torch_ok) {
            m->torch[k] = bt_pytorch(m->model);
            if (m->torch[k] <= 0.0) m->torch_ok = 0;
        }
    }
    return 0;
}

/* The threaded rounds of model m: one IPU (cooperative), 2 replicas, 2 stages (threads). */
static int bt_threads(bt_model *m) {
    int k;
    m->base.n = m->rep.n = m->pipe.n = 0;
    for (k = 0; k < BT_TROUNDS; k++) {
        if (bt_train(m->model, "coop", "1ipu", &m->base.sps[k], &m->base.cpu[k], NULL) != 0) return -1;
        if (bt_train(m->model, "threads", "2replicas", &m->rep.sps[k], &m->rep.cpu[k], NULL) != 0) return -1;
        if (bt_train(m->model, "threads", "2stages", &m->pipe.sps[k], &m->pipe.cpu[k], NULL) != 0) return -1;
        m->base.n = m->rep.n = m->pipe.n = k + 1;
    }
    return 0;
}

/* The infeed benchmark of model m, BT_ROUNDS rounds. */
static int bt_infeed(bt_model *m) {
    int k;
    for (k = 0; k < BT_ROUNDS; k++) {
        double s, c;
        if (bt_train(m->model, "coop", "infeed", &s, &c, NULL) != 0) return -1;
        m->feed[k] = mnist_train_last_feed_sps;
        m->ipu[k] = mnist_train_last_ipu_sps;
    }
    return 0;
}
static void bt_print_infeed(const bt_model *m) {
    double f = bt_median(m->feed, BT_ROUNDS), u = bt_median(m->ipu, BT_ROUNDS);
    printf("%-4s host feed %10.0f samples/s, simulated IPUs %10.0f samples/s: feed / IPUs %.2fx (%s)\n", m->model, f,
           u, f / u, f >= u ? "keeps up" : "the feed is the bottleneck");
}

/* The best a 2-stage pipeline can do on model: total cost over the larger stage of the
   balanced split (ipup_balance_stages; cost = its per-sample FLOPs per layer), or 0. */
static double bt_stage_bound(const char *model) {
    static ipup_model_desc d;
    static ipup_layer_info info[IPUP_MAX_LAYERS];
    char msg[256];
    int32_t split[1], l;
    double st[2] = {0.0, 0.0};
    int params_before = 0;
    if (mnist_model_desc(mnist_model_find(model), &d, msg, sizeof msg) != 0 ||
        ipup_model_info(&d, info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK ||
        ipup_balance_stages(&d, 2, split, msg, sizeof msg) != IPUP_OK)
        return 0.0;
    for (l = 0; l < d.n_layers; l++) {
        st[l >= split[0]] += (double)(info[l].flops_fwd + info[l].flops_bwd_dw + (params_before ? info[l].flops_bwd_dx : 0) + 1);
        if (info[l].n_w) params_before = 1;
    }
    return (st[0] + st[1]) / (st[0] > st[1] ? st[0] : st[1]);
}

/* ratio of series a over the baseline, round by round (interleaved pairs) */
static void bt_ratios(const bt_series *a, const bt_series *base, double *med, double *lo, double *hi) {
    double r[BT_TROUNDS];
    int i;
    for (i = 0; i < a->n; i++) r[i] = a->sps[i] / base->sps[i];
    *med = bt_median(r, a->n);
    bt_minmax(r, a->n, lo, hi);
}

static const char *bt_layout_name[2] = {"2 IPUs grouped", "1 IPU"};

/* the one-core table: -O2, -Os, portable, fractions of peak, targets */
static void bt_print_core(const bt_model *m, double peak) {
    int j;
    for (j = 0; j < 2; j++) {
        const double o2 = bt_median(m->o2[j], BT_ROUNDS), os = bt_median(m->os[j], BT_ROUNDS);
        const double pt = bt_median(m->pt[j], BT_ROUNDS), f = m->flops * 1e-9 / peak;
        printf("%-4s %-15s %9.0f %5.2f ", m->model, bt_layout_name[j], o2, o2 * f);
        if (m->os_ok) printf("%9.0f %5.2f %5.2fx ", os, os * f, o2 / os);
        else printf("%9s %5s %6s ", "failed", "", "");
        if (m->pt_ok) printf("%9.0f %5.2f\n", pt, pt * f);
        else printf("%9s\n", "failed");
    }
}

static void bt_print_torch(const bt_model *m, int torch) {
    const double o2 = bt_median(m->o2[1], BT_ROUNDS), o2p = bt_median(m->o2[0], BT_ROUNDS);
    const double t = bt_median(m->torch, BT_ROUNDS);
    if (!torch) {
        printf("PyTorch %s: not installed (apt-get install python3-torch), no ratio\n", m->model);
        return;
    }
    if (!m->torch_ok) {
        printf("PyTorch %s: bench/pytorch_mnist.py failed, no ratio\n", m->model);
        return;
    }
    printf("PyTorch %s, 1 thread: %.0f samples/s in this run; ipupipe -O2 1 IPU / PyTorch = %.1fx, 2 IPUs / PyTorch = %.1fx\n",
           m->model, t, o2 / t, o2p / t);
}

static void bt_print_threads(const bt_model *m) {
    double med, lo, hi;
    const double cb = 1e6 / bt_median(m->base.cpu, m->base.n);
    bt_ratios(&m->rep, &m->base, &med, &lo, &hi);
    printf("%-4s 2 replicas / 1 IPU  %.2fx (%.2f..%.2f)   CPU-us per sample %.1f vs %.1f\n", m->model, med, lo, hi,
           1e6 / bt_median(m->rep.cpu, m->rep.n), cb);
    bt_ratios(&m->pipe, &m->base, &med, &lo, &hi);
    printf("%-4s 2 stages   / 1 IPU  %.2fx (%.2f..%.2f)   CPU-us per sample %.1f vs %.1f   (balanced split: at most %.2fx)\n",
           m->model, med, lo, hi, 1e6 / bt_median(m->pipe.cpu, m->pipe.n), cb, bt_stage_bound(m->model));
}

static void bt_json_row(FILE *js, const bt_model *m, int j, double peak) {
    const double o2 = bt_median(m->o2[j], BT_ROUNDS), os = bt_median(m->os[j], BT_ROUNDS);
    const double pt = bt_median(m->pt[j], BT_ROUNDS), f = m->flops * 1e-9 / peak;
    fprintf(js, "    {\"model\": \"%s\", \"layout\": \"%s\", \"flops_per_sample\": %.0f, "
                "\"O2\": {\"samples_per_second\": %.1f, \"fraction_of_peak\": %.4f}, ",
            m->model, j ? "1ipu" : "2ipu_grouped", m->flops, o2, o2 * f);
    if (m->os_ok) fprintf(js, "\"Os\": {\"samples_per_second\": %.1f, \"fraction_of_peak\": %.4f, \"O2_over_Os\": %.3f}, ", os, os * f, o2 / os);
    else fprintf(js, "\"Os\": null, ");
    if (m->pt_ok) fprintf(js, "\"portable\": {\"samples_per_second\": %.1f, \"fraction_of_peak\": %.4f}, ", pt, pt * f);
    else fprintf(js, "\"portable\": null, ");
    if (m->torch_ok) fprintf(js, "\"pytorch_samples_per_second\": %.1f, \"ratio_to_pytorch\": %.3f}", bt_median(m->torch, BT_ROUNDS), o2 / bt_median(m->torch, BT_ROUNDS));
    else fprintf(js, "\"pytorch_samples_per_second\": null, \"ratio_to_pytorch\": null}");
}

static void bt_json_threads(FILE *js, const bt_model *m) {
    double a, alo, ahi, b, blo, bhi;
    bt_ratios(&m->rep, &m->base, &a, &alo, &ahi);
    bt_ratios(&m->pipe, &m->base, &b, &blo, &bhi);
    fprintf(js, "    {\"model\": \"%s\", \"rounds\": %d, \"baseline\": \"1 IPU, cooperative runner\", "
                "\"stages2_split\": \"--splits auto --stages 2\", \"replicas2_ratio\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}, "
                "\"stages2_grouped_ratio\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}, "
                "\"stages2_bound\": %.3f, "
                "\"cpu_us_per_sample\": {\"1ipu\": %.2f, \"replicas2\": %.2f, \"stages2\": %.2f}}",
            m->model, m->base.n, a, alo, ahi, b, blo, bhi, bt_stage_bound(m->model), 1e6 / bt_median(m->base.cpu, m->base.n),
            1e6 / bt_median(m->rep.cpu, m->rep.n), 1e6 / bt_median(m->pipe.cpu, m->pipe.n));
}

static void bt_json(const bt_model *ms, int n, double peak, double peak2, const double la0[3], const double la1[3],
                    int torch, int synthetic) {
    FILE *js = fopen("build/bench/train.json", "w");
    int i, j;
    if (!js) {
        fprintf(stderr, "bench_train: cannot write build/bench/train.json\n");
        return;
    }
    fprintf(js, "{\n  \"peak_gflops\": %.2f, \"peak_gflops_at_end\": %.2f, \"simd\": \"%s\", \"synthetic_data\": %s,\n",
            peak, peak2, IPUP_KERNELS_SIMD, synthetic ? "true" : "false");
    fprintf(js, "  \"load_average_start\": [%.2f, %.2f, %.2f], \"load_average_end\": [%.2f, %.2f, %.2f],\n",
            la0[0], la0[1], la0[2], la1[0], la1[1], la1[2]);
    fprintf(js, "  \"pytorch_installed\": %s, \"rounds\": %d,\n  \"one_core\": [\n", torch ? "true" : "false", BT_ROUNDS);
    for (i = 0; i < n; i++)
        for (j = 0; j < 2; j++) {
            bt_json_row(js, &ms[i], j, peak);
            fprintf(js, "%s\n", i == n - 1 && j == 1 ? "" : ",");
        }
    fprintf(js, "  ],\n  \"threaded\": [\n");
    for (i = 0; i < n; i++) {
        bt_json_threads(js, &ms[i]);
        fprintf(js, "%s\n", i == n - 1 ? "" : ",");
    }
    fprintf(js, "  ],\n  \"infeed_benchmark\": [\n");
    for (i = 0; i < n; i++) {
        double f = bt_median(ms[i].feed, BT_ROUNDS), u = bt_median(ms[i].ipu, BT_ROUNDS);
        fprintf(js, "    {\"model\": \"%s\", \"feed_samples_per_second\": %.1f, \"ipu_samples_per_second\": %.1f, "
                "\"feed_over_ipus\": %.3f}%s\n", ms[i].model, f, u, f / u, i == n - 1 ? "" : ",");
    }
    fprintf(js, "  ]\n}\n");
    fclose(js);
}

static void bt_report(const bt_model *ms, int n, double peak, double peak2, const double la0[3], const double la1[3],
                      int torch, int synthetic) {
    int i;
    printf("\none core, cooperative runner: samples/s and fraction of the FMA peak, median of %d interleaved rounds\n", BT_ROUNDS);
    printf("%-4s %-15s %9s %5s %9s %5s %6s %9s %5s\n", "", "", "-O2", "peak", "-Os", "peak", "O2/Os", "portable", "peak");
    for (i = 0; i < n; i++) bt_print_core(&ms[i], peak);
    printf("targets (-O2, 2 IPUs grouped): mlp >= 0.70 of peak, cnn >= 0.60 and >= 5x PyTorch; -Os within 1.5x of -O2\n");
    for (i = 0; i < n; i++) bt_print_torch(&ms[i], torch);
    printf("\nthreaded runner (one thread per IPU) vs one IPU (cooperative), median of %d interleaved rounds (min..max)\n", BT_TROUNDS);
    for (i = 0; i < n; i++) bt_print_threads(&ms[i]);
    printf("targets: 2 replicas >= 1.85x, 2 stages >= 1.85x\n");
    printf("\ninfeed benchmark (the user guide's dataset_benchmark; --infeed-benchmark): the trainer's infeed on one\n"
           "thread against what the simulated IPUs of the default pipeline consume, median of %d rounds\n", BT_ROUNDS);
    for (i = 0; i < n; i++) bt_print_infeed(&ms[i]);
    printf("FMA peak at the end: %.1f GFLOP/s (start %.1f); load average at the end %.2f %.2f %.2f\n", peak2, peak,
           la1[0], la1[1], la1[2]);
    bt_json(ms, n, peak, peak2, la0, la1, torch, synthetic);
}

int main(int argc, char **argv) {
    static char dir[256];
    bt_model models[2];
    double peak, peak2, la0[3], la1[3];
    const char *what = "";
    int i, synthetic = 0, torch;
    if (argc == 5 && strcmp(argv[1], "--once") == 0) { /* --once MODEL DATA_DIR DIVISOR */
        bt_data = argv[3];
        bt_div = atoi(argv[4]) > 0 ? atoi(argv[4]) : 1;
        return bt_once(argv[2]);
    }
    {
        FILE *f = fopen("data/mnist/train-images-idx3-ubyte", "rb");
        if (f) fclose(f);
        else {
            snprintf(dir, sizeof dir, "/tmp/ipup_bench_train_XXXXXX");
            if (!mkdtemp(dir)) return 1;
            if (idx_write_synthetic_set(dir, 32768, 1000) != 0) return 1;
            bt_data = dir;
            synthetic = 1;
        }
    }
    bt_loadavg(la0);
    peak = fma_peak_gflops(0, &what);
    torch = bt_have_torch();
    printf("MNIST trainer end to end (mnist_train_main, infeed included), %s data; load average %.2f %.2f %.2f\n",
           synthetic ? "synthetic" : "real", la0[0], la0[1], la0[2]);
    printf("one core's fp32 FMA peak, measured: %.1f GFLOP/s (%s); kernels path of this build: %s\n", peak, what,
           IPUP_KERNELS_SIMD);
    memset(models, 0, sizeof models);
    models[0].model = "mlp";
    models[1].model = "cnn";
    for (i = 0; i < 2; i++)
        if (bt_one_core(&models[i], torch) != 0) return 1;
    for (i = 0; i < 2; i++)
        if (bt_threads(&models[i]) != 0) return 1;
    for (i = 0; i < 2; i++)
        if (bt_infeed(&models[i]) != 0) return 1;
    peak2 = fma_peak_gflops(0, NULL);
    bt_loadavg(la1);
    bt_report(models, 2, peak, peak2, la0, la1, torch, synthetic);
    if (synthetic) {
        idx_remove_synthetic_set(dir);
        rmdir(dir);
    }
    return 0;
}
