/* mnist_trainer.h - one run of the pipelined MNIST trainer: setup, training, report,
 * and mnist_train_main, the whole program (examples/mnist/mnist-train.c is its main).
 * MIT licence.
 *
 *   mt_setup    the command line (mnist_options.h), the model and its stages
 *               (mt_configure: mnist_models.h, ipup_balance_stages for --splits auto),
 *               the data (mnist_feed.h), the plan, the one allocation phase (data,
 *               pools, permutation, text buffer), the emulator (ipup_init starts its
 *               threads), the checkpoint tensors and --load, the output files
 *               (mnist_outfile.h);
 *   mt_train    the epochs: ipup_run_steps over the infeed, the per-epoch lines;
 *   mt_report   the test evaluation, the closing lines, --save, --trace and
 *               --summary-json;
 *   mt_cleanup  the one way out of every run, good or failed: ipup_shutdown once
 *               (when ipup_init succeeded), unfinished outputs dropped, memory freed.
 *
 * After mt_setup the run touches no allocator until mt_cleanup: the epoch loop, the
 * test evaluation, --save (POSIX write + rename) and the outputs (written to
 * descriptors opened at startup) all run on memory set up before, and stdout has a
 * static buffer. tests/test_mnist_noheap.c proves it by counting allocator calls
 * between the hooks MNIST_TRAIN_STARTUP_DONE() and MNIST_TRAIN_RUN_DONE() (define
 * them before the include).
 *
 * Include after ipupipe.h; one translation unit defines IPUPIPE_IMPLEMENTATION.
 * Needs POSIX: _POSIX_C_SOURCE 200809L before the first include.
 */
#ifndef MNIST_TRAINER_H
#define MNIST_TRAINER_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ex_escape.h"
#include "ex_stages.h"
#include "fma_peak.h"
#include "ipupipe.h"
#include "mnist_ckpt.h"
#include "mnist_feed.h"
#include "mnist_models.h"
#include "mnist_options.h"
#include "mnist_outfile.h"

#ifndef MNIST_TRAIN_STARTUP_DONE
#define MNIST_TRAIN_STARTUP_DONE() ((void)0)
#endif
#ifndef MNIST_TRAIN_RUN_DONE
#define MNIST_TRAIN_RUN_DONE() ((void)0)
#endif

typedef struct {
    mt_opts o;
    const mnist_model_spec *spec;
    ipup_model_desc desc; /* the emulator's model: activations are layers of their own */
    ipup_layer_info info[IPUP_MAX_LAYERS];
    int n_layers;                             /* the tutorial's layers (mnist_model_layers) */
    int32_t layer_first[IPUP_MAX_LAYERS + 1]; /* desc index of each one's first layer */
    int n_stages;
    int32_t stage_first[MT_MAX_STAGES + 1]; /* desc index of each stage's first layer */
    int16_t map[MT_MAX_STAGES];              /* --map: the IPU of each stage (plain mapping) */
    int n_map;                               /* 0: the schedule's default mapping */
    ipup_stage_map cmap;                     /* --map as parsed; cmap.concurrent: some stage on several IPUs */
    ipup_config cfg;
    ipup_plan plan;
    ipup_emu *emu;
    int emu_started; /* ipup_init succeeded: ipup_shutdown is due */
    ipup_sched_kind sched;
    ipup_runner_kind runner;
    mt_feed feed;
    int64_t steps_per_epoch;
    uint8_t *host_mem, *pool_mem;
    /* checkpoint */
    mnist_ckpt_meta meta;
    int start_epoch, loaded, epoch;
    int load_fd;  /* --load, opened once at startup (-1: none) */
    int32_t *pred_cls; /* the test images' predicted classes (ipup_predict), startup-allocated */
    /* --test-batch-size: the evaluation emulator (ev), the trained weights copied in before
       the test, as PopXL's test session; NULL when the test uses the training micro-batch */
    ipup_emu *ev;
    int ev_started;
    ipup_config ev_cfg;
    ipup_plan ev_plan;
    uint8_t *ev_host, *ev_mem; /* its host pool, its IPU pools */
    float *pred_out;   /* an autoencoder's reconstructions of the test samples, startup-allocated */
    /* outputs */
    ex_out trace_out, summary_out;
    int tty;
    char *text; /* startup-allocated text buffer (the JSON summary) */
    size_t text_cap;
    ipup_mem_report mem[IPUP_MAX_DEVICES];
    /* figures of the run */
    int64_t samples_trained;
    double t_train, t_cpu, last_loss, sim_seconds, busy_total, idle_total, test_acc, sps;
    int64_t ls_skipped; /* dynamic loss scaling: steps skipped since ipup_init */
    double phase_util[IPUP_PHASES];
    double phase_sec[IPUP_PHASES];   /* per step; main is 0 when the pipeline never fills */
    double launch_total, step_sec;   /* the cost model's launches (summed) and pipeline step */
    int64_t calls, steps_trained;    /* emulator calls and steps of this run */
    float *bench_x;                  /* --infeed-benchmark: one micro-batch (startup-allocated) */
    int64_t out_recs, out_rows;      /* --outfeed: records and output rows the host received */
    int64_t out_last_step;           /* the step of the last record */
    double out_loss, out_sum;        /* their losses summed; their outputs summed */
    int32_t out_width;
    int32_t *bench_y;
    char err[1024];
    ex_out export_out; /* --export-c (examples/common/export_c.h) */
    double plan_predicted; /* --plan auto: the plan's samples/s (ipup_plan.samples_per_second) */
    double plan_step;      /* --plan auto: the plan's step_seconds */
} mt_run;

/* Figures of the last run, for programs that call mnist_train_main (bench_train.c). */
static double mnist_train_last_sps, mnist_train_last_accuracy, mnist_train_last_cpu_sps;
/* --infeed-benchmark: the host feed's samples/s and the simulated IPUs' (mt_infeed_bench) */
static double mnist_train_last_feed_sps, mnist_train_last_ipu_sps;
static double mnist_train_last_flops; /* training FLOPs per sample (mt_train_flops) */

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

/* ------------------------------------------------------------------ model and stages */

/* The ids of the tutorial's layers (all = 0) or of every layer of the desc (all = 1),
 * ", "-separated, into buf. */
static void mt_layer_ids(const mt_run *r, int all, char *buf, size_t cap) {
    int i, n = all ? r->desc.n_layers : r->n_layers;
    size_t k = 0;
    buf[0] = 0;
    for (i = 0; i < n && k + 1 < cap; i++)
        k += (size_t)ipup_snprintf(buf + k, cap - k, "%s%s", i ? ", " : "",
                              r->desc.layers[all ? i : r->layer_first[i]].id);
}

/* --splits auto: the library's balance of the emulator's cost over the desc's layers
 * (ipup_balance_stages: the smallest largest stage, then the smallest sum of squares). */
static int mt_auto_stages(mt_run *r) {
    int32_t split[MT_MAX_STAGES];
    char ids[512], msg[256];
    int s, rc;
    if (r->o.stages > r->desc.n_layers) {
        mt_layer_ids(r, 1, ids, sizeof ids);
        return mt_err("--splits auto: %d stages but the model has only %d layers (%s)", r->o.stages, r->desc.n_layers, ids);
    }
    if ((rc = ipup_balance_stages(&r->desc, r->o.stages, split, msg, sizeof msg)) != IPUP_OK)
        return mt_err("--splits auto: %s (%s)", msg, ipup_result_str(rc));
    r->n_stages = r->o.stages;
    r->stage_first[0] = 0;
    for (s = 1; s < r->n_stages; s++) r->stage_first[s] = split[s - 1];
    r->stage_first[r->n_stages] = r->desc.n_layers;
    return 0;
}

/* Stage boundaries from --splits (or the model's default); errors name the problem.
 * A split names a layer of the desc: one of the tutorial's layers, or an activation. */
static int mt_stages(mt_run *r) {
    char ids[512], msg[EX_STAGES_MSG];
    if (r->o.splits_auto) return mt_auto_stages(r);
    mt_layer_ids(r, 0, ids, sizeof ids);
    if (ex_split_stages(&r->desc, r->o.splits_given ? r->o.splits : NULL, r->o.n_splits, r->spec->splits,
                        MT_MAX_STAGES, r->spec->name, ids, r->stage_first, &r->n_stages, msg, sizeof msg))
        return mt_err("%s", msg);
    return 0;
}

/* --map "0,1,0" or "0,[1,2],2,3": the IPU of each stage (TF's device_mapping), a bracket
 * for a concurrent stage (user guide §6.5.7), parsed by the library (ipup_sched_map_parse);
 * one entry per stage, each IPU in 0..IPUP_MAX_DEVICES-1; the schedule and the emulator
 * check the rest. */
static int mt_parse_map(mt_run *r) {
    char msg[EX_STAGES_MSG];
    if (!r->o.map) return 0;
    if (ex_stage_map(r->o.map, r->n_stages, &r->cmap, r->map, &r->n_map, msg, sizeof msg)) return mt_err("%s", msg);
    return 0;
}

/* --schedule dualpipe (docs/schedules.md §3, "DualPipe in the emulator"): DualPipe's two
 * model copies, each fed M/2 of the M micro-batches and their gradients summed in a fixed
 * order, are two data-parallel replicas of M/2 micro-batches; the trainer runs them as
 * --replicas 2 with half the accumulation count on 1f1b (each copy's P stages on P IPUs),
 * so the checkpoint is that run's, bit for bit. The rules are DualPipe's (P even, M even,
 * M >= 2P), P being the stages of one copy. 0, or 2 after a message. */
static int mt_dualpipe(mt_run *r) {
    int P = r->n_stages, M = r->o.accumulate, s;
    if (r->sched != IPUP_SCHED_DUALPIPE) return 0;
    for (s = 0; s < r->n_map; s++)
        if (r->cmap.concurrent || r->map[s] != s)
            return mt_err("--schedule dualpipe puts stage s of each model copy on IPU s: drop --map "
                          "(each copy's stages run in order on IPUs 0..%d)", P - 1);
    if (P % 2 != 0)
        return mt_err("--schedule dualpipe needs an even number of stages P (two copies fed from both "
                      "ends of P IPUs), not %d: use --stages %d", P, P + 1);
    if (M % 2 != 0 || M < 2 * P)
        return mt_err("--schedule dualpipe needs --batches-to-accumulate M even and M >= 2P = %d (M/2 "
                      "per model copy), not %d", 2 * P, M);
    if (r->o.ipus || r->o.replicas > 1)
        return mt_err("--schedule dualpipe runs its two model copies as 2 replicas; drop --ipus and "
                      "--replicas");
    r->o.replicas = 2;
    r->o.accumulate = M / 2;
    r->sched = IPUP_SCHED_1F1B;
    if (!r->o.quiet)
        printf("Schedule dualpipe: two model copies of %d stages = 2 replicas x %d micro-batches on "
               "1f1b, parameters 2x\n", P, M / 2);
    return 0;
}

/* The emulator model of the resolved options, its stages, schedule and runner: what a
 * run needs before it reads data. 0, or 2 after a message naming the bad option. */
static int mt_configure(mt_run *r) {
    char msg[256];
    if (mnist_model_desc(r->spec, &r->desc, msg, sizeof msg) != IPUP_OK ||
        ipup_model_info(&r->desc, r->info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK)
        return mt_err("model %s: %s", r->spec->name, msg);
    r->n_layers = mnist_model_layers(&r->desc, r->layer_first);
    if (mt_stages(r) || mt_parse_map(r)) return 2;
    if (ipup_sched_kind_parse(r->o.schedule, &r->sched) != IPUP_OK)
        return mt_err("--schedule: unknown '%s' (grouped, interleaved, sequential, gpipe, 1f1b, "
                      "interleaved-1f1b, zb-h1, zb-h2, zb-v, v-min, v-half, looped-bfs, "
                      "interleaved-zb, dualpipe-v, dualpipe)",
                      r->o.schedule);
    if (mt_dualpipe(r)) return 2;
#ifdef MNIST_TRAIN_EXTRA_RUNNER /* a program that adds a runner (mnist-train-mpi.c: "mpi") */
    if (mt_name_eq(r->o.runner, MNIST_TRAIN_EXTRA_RUNNER)) r->runner = IPUP_RUNNER_COOP;
    else
#endif
    if (ipup_runner_parse(r->o.runner, &r->runner) != IPUP_OK)
        return mt_err("--runner: unknown '%s' (coop or threads)", r->o.runner);
    return 0;
}

/* --ipus N (Graphcore's auto_select_ipus): the IPUs one replica uses are the devices of
 * the schedule table of the configured stages; ipup_replicas_for_ipus gives the replica
 * count, which --replicas, when given too, must equal. Without --ipus: --replicas or 1. */
static int mt_resolve_replicas(mt_run *r) {
    ipup_sched_config sc;
    ipup_table t;
    ipup_op *ops;
    char msg[512];
    int32_t R = 0;
    int rc;
    if (!r->o.ipus) {
        if (!r->o.replicas) r->o.replicas = 1;
        return 0;
    }
    memset(&sc, 0, sizeof sc);
    sc.kind = r->sched;
    sc.stages = r->n_stages;
    sc.microbatches = r->o.accumulate;
    sc.stage_device = r->n_map && !r->cmap.concurrent ? r->map : NULL;
    sc.concurrent = r->n_map && r->cmap.concurrent ? &r->cmap : NULL;
    ops = (ipup_op *)malloc(sizeof *ops * (size_t)IPUP_SCHED_MAX_OPS(ipup_sched_map_lanes(&r->cmap) > sc.stages ? ipup_sched_map_lanes(&r->cmap) : sc.stages, sc.microbatches));
    if (!ops) return mt_err("out of host memory for the schedule table of %d stages x %d micro-batches", sc.stages, sc.microbatches);
    rc = ipup_sched_generate(&sc, ops, IPUP_SCHED_MAX_OPS(ipup_sched_map_lanes(&r->cmap) > sc.stages ? ipup_sched_map_lanes(&r->cmap) : sc.stages, sc.microbatches), &t, msg, sizeof msg);
    free(ops);
    if (rc != IPUP_OK)
        return mt_err("the pipeline cannot run: schedule %s with %d stages and %d micro-batches: %s (%s)",
                      ipup_sched_kind_name(r->sched), sc.stages, sc.microbatches, msg, ipup_result_str(rc));
    if (ipup_replicas_for_ipus(r->o.ipus, t.devices, &R, msg, sizeof msg) != IPUP_OK) return mt_err("--ipus: %s", msg);
    if (r->o.replicas && r->o.replicas != R)
        return mt_err("--ipus %d and --replicas %d disagree: one replica of the pipeline uses %d IPU%s, so %d IPUs are %d "
                      "replica%s; give --ipus or --replicas alone",
                      r->o.ipus, r->o.replicas, t.devices, t.devices == 1 ? "" : "s", r->o.ipus, R, R == 1 ? "" : "s");
    r->o.replicas = R;
    return 0;
}

/* Graphcore allocates IPUs in powers of two ("The number of IPUs occupied by the model is
 * always a power of two due to the required ring structure for communication": Graphcore's
 * Memory and Performance Optimisation guide, §7 "Scaling an application over multiple
 * replicas"). The replicas x IPUs of the plan, when there are replicas: one replica's IPU
 * count is the schedule rules' (ipupipe_sched.h warns about it). A warning, an error
 * under --strict (2 after the message). */
static int mt_check_ipus_pow2(const mt_run *r) {
    int n = r->plan.ipus, up = 1;
    if (r->plan.replicas < 2 || (n & (n - 1)) == 0) return 0;
    while (up < n) up *= 2;
    if (r->o.strict && (r->plan.devices & (r->plan.devices - 1)) != 0)
        return mt_err("%d IPUs (%d replicas x %d IPUs) is not a power of two: Graphcore "
                      "allocates IPUs in powers of two (1, 2, 4, 8, 16, 32, 64), and one "
                      "replica's %d IPUs make no power of two with any replica count; map the "
                      "stages onto 1, 2, 4 or 8 IPUs (--map), or drop --strict",
                      n, r->plan.replicas, r->plan.devices, r->plan.devices);
    if (r->o.strict)
        return mt_err("%d IPUs (%d replicas x %d IPUs) is not a power of two: Graphcore "
                      "allocates IPUs in powers of two (1, 2, 4, 8, 16, 32, 64); use %d or %d "
                      "IPUs in all, or drop --strict",
                      n, r->plan.replicas, r->plan.devices, up / 2, up);
    fprintf(stderr,
            MT_PROG ": warning: %d IPUs (%d replicas x %d IPUs) is not a power of two; "
                    "Graphcore allocates IPUs in powers of two, so this run would occupy %d "
                    "(an error under --strict)\n",
            n, r->plan.replicas, r->plan.devices, up);
    return 0;
}

/* --outfeed: the emulator's outfeed callback (ipup_config.outfeed), on the host thread during
 * the run (ipupipe.h: ipup_outfeed_rec): counts what arrives. */
static void mt_outfeed(void *user, const ipup_outfeed_rec *rec) {
    mt_run *r = (mt_run *)user;
    int32_t i, n = rec->n * rec->width;
    r->out_recs++;
    r->out_last_step = rec->step;
    r->out_loss += (double)rec->loss;
    if (!rec->outputs) return;
    r->out_rows += rec->n;
    r->out_width = rec->width;
    for (i = 0; i < n; i++) r->out_sum += (double)rec->outputs[i];
}

/* The emulator configuration of a configured run (model, split, schedule, batch
 * shape, optimizer, seed), its data through mt_infeed; pools are given later. */
static void mt_fill_config(mt_run *r, ipup_runner_kind runner) {
    ipup_config *c = &r->cfg;
    memset(c, 0, sizeof *c);
    c->model = &r->desc;
    c->stages = r->n_stages;
    c->split = r->n_stages > 1 ? &r->stage_first[1] : NULL;
    c->stage_device = r->n_map && !r->cmap.concurrent ? r->map : NULL;
    c->concurrent = r->n_map && r->cmap.concurrent ? &r->cmap : NULL;
    c->schedule = r->sched;
    c->strict = r->o.strict;
    c->microbatch = r->o.batch;
    c->microbatches = r->o.accumulate;
    c->repeat = r->o.repeat;
    c->replicas = r->o.replicas;
    c->opt.kind = r->o.optimizer;
    c->opt.lr = r->o.lr;
    c->opt.momentum = r->o.momentum;
    c->opt.beta1 = r->spec->beta1;
    c->opt.beta2 = r->spec->beta2;
    c->opt.eps = r->o.adam_eps;
    c->opt.weight_decay = r->o.weight_decay;
    c->opt.no_bias_correction = r->o.no_bias_correction;
    c->recompute = r->o.recompute;
    c->offload = r->o.offload;
    c->recompute_stages = r->o.recompute_stages;
    c->ipu_bytes = r->o.ipu_memory;
    c->dtype = r->o.dtype;
    c->fp32_weights = r->o.fp32_weights;
    c->accum_dtype = r->o.accum_dtype;
    c->opt.first_moment_dtype = r->o.first_moment_dtype;
    c->loss_scale = r->o.loss_scale;
    c->loss_scale_dynamic = r->o.loss_dynamic;
    c->loss_scale_period = r->o.loss_period;
    c->seed = r->o.seed;
    c->runner = runner;
    c->infeed = mt_infeed;
    c->infeed_user = &r->feed;
    /* --launch-seconds 0 is "none", which the library spells IPUP_LAUNCH_OFF (its 0 is the
       default) */
    if (r->o.launch_given)
        c->cost.launch_seconds = r->o.launch_seconds > 0.0 ? r->o.launch_seconds : IPUP_LAUNCH_OFF;
    c->cost.synthetic_data = r->o.synthetic;
    if (r->o.outfeed) {
        c->outfeed_mode = r->o.outfeed - 1;
        c->outfeed = mt_outfeed;
        c->outfeed_user = r;
    }
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

/* ------------------------------------------------------------------ setup */

/* The output files checked before anything runs, against each other and against the
 * files the run reads (mnist_outfile.h). A program whose process writes no outputs (an
 * MPI rank other than 0) defines MNIST_TRAIN_WRITES_OUTPUTS() as 0 for it: every output
 * option is then dropped (mt_drop_outputs), whichever way it was spelled. */
static int mt_check_output_paths(mt_run *r) {
#ifdef MNIST_TRAIN_WRITES_OUTPUTS
    if (!(MNIST_TRAIN_WRITES_OUTPUTS())) mt_drop_outputs(&r->o);
#endif
    return mt_out_check_all(r->o.save, r->o.trace, r->o.summary, r->o.export_c, r->o.load,
                            r->o.data);
}

/* The command line, the output paths, the model, --load's header (model and seed: the
 * file stays open for mt_setup_emulator), the recipe, the stages. 0, or the exit code
 * after a message. */
static int mt_setup_args(mt_run *r, int argc, char **argv) {
    ipup_optimizer_kind opt;
    int rc;
    if ((rc = mt_parse(argc, argv, &r->o)) != 0) return rc;
    r->spec = mnist_model_find(r->o.model);
    if (!r->spec)
        return mt_err("--model: unknown model '%s' (mlp, cnn, mlp-gelu, ds-cnn, mobilenet-v1-0.25, resnet8, "
                      "resnet8-fashion or fc-ae)", r->o.model);
    if ((rc = mt_check_output_paths(r)) != 0) return rc;
    if (r->o.load) {
        mnist_ckpt_meta *meta = &r->meta;
        if ((r->load_fd = mnist_ckpt_open(r->o.load, r->err)) < 0 ||
            mnist_ckpt_peek_state_fd(r->load_fd, r->o.load, meta, r->err) != MNIST_CKPT_OK)
            return mt_err("--load: %s", r->err);
        if (strcmp(meta->model, r->spec->name) != 0)
            return mt_err("--load: %s holds model '%s', this run trains '%s' (use --model %s)", r->o.load, meta->model,
                          r->spec->name, meta->model);
        if (r->o.seed_given && r->o.seed != meta->seed)
            fprintf(stderr,
                    MT_PROG ": note: --seed %llu ignored: resuming with the checkpoint's seed %llu\n",
                    (unsigned long long)r->o.seed, (unsigned long long)meta->seed);
        r->o.seed = meta->seed;
    }
    opt = r->o.optimizer_given ? r->o.optimizer : r->spec->optimizer;
    if (r->o.adam_given && opt != IPUP_OPT_ADAM)
        return mt_err("--%s is an option of Adam, but this run trains with %s; add --optimizer "
                      "adam or drop it", r->o.adam_given, mt_opt_name(opt));
    mt_resolve(&r->o, r->spec);
    return mt_configure(r);
}

/* --test-batch-size N (N other than the training micro-batch): the evaluation emulator,
 * as PopXL tests with a micro-batch of 80 in a session of its own into which the trained
 * weights are copied. Its configuration is the training one (model, stages, mapping,
 * schedule, micro-batches per wave) with micro-batch N, one replica, the cooperative
 * runner and SGD (no optimizer state: it never updates); its pools come from its own plan,
 * allocated here at startup like the others. 0, or 2 after a message. */
static int mt_setup_eval_memory(mt_run *r) {
    size_t host, total = 0, off;
    int i, rc;
    if (!r->o.test_batch || r->o.test_batch == r->o.batch) return 0;
    r->ev_cfg = r->cfg;
    r->ev_cfg.microbatch = r->o.test_batch;
    r->ev_cfg.replicas = 1;
    r->ev_cfg.repeat = 1;
    r->ev_cfg.runner = IPUP_RUNNER_COOP;
    r->ev_cfg.opt.kind = IPUP_OPT_SGD;
    r->ev_cfg.offload = 0;
    r->ev_cfg.strict = 0; /* the training configuration's rules were checked already */
    memset(r->ev_cfg.ipu, 0, sizeof r->ev_cfg.ipu);
    memset(r->ev_cfg.stream, 0, sizeof r->ev_cfg.stream);
    host = (ipup_host_bytes(&r->ev_cfg) + 63) / 64 * 64;
    if (host == 0) host = 64;
    r->ev = (ipup_emu *)aligned_alloc(64, (sizeof(ipup_emu) + 63) / 64 * 64);
    r->ev_host = (uint8_t *)aligned_alloc(64, host);
    if (!r->ev || !r->ev_host)
        return mt_err("out of host memory for the evaluation emulator (--test-batch-size)");
    memset(r->ev, 0, sizeof *r->ev);
    r->ev_cfg.host.mem = r->ev_host;
    r->ev_cfg.host.bytes = host;
    if ((rc = ipup_plan_config(r->ev, &r->ev_cfg, &r->ev_plan)) != IPUP_OK)
        return mt_err("--test-batch-size %d: the evaluation pipeline cannot run: %s (%s)",
                      r->o.test_batch, ipup_last_error(r->ev), ipup_result_str(rc));
    for (i = 0; i < r->ev_plan.ipus; i++)
        total += (r->ev_plan.ipu_bytes[i % r->ev_plan.devices] + 63) / 64 * 64;
    r->ev_mem = (uint8_t *)mt_alloc_huge(total + 64);
    if (!r->ev_mem)
        return mt_err("out of host memory: %.1f MB for the evaluation emulator "
                      "(--test-batch-size %d)", (double)total / 1048576.0, r->o.test_batch);
    memset(r->ev_mem, 0, total + 64); /* touched now, at startup */
    for (off = 0, i = 0; i < r->ev_plan.ipus; i++) {
        r->ev_cfg.ipu[i].mem = r->ev_mem + off;
        r->ev_cfg.ipu[i].bytes = r->ev_plan.ipu_bytes[i % r->ev_plan.devices];
        off += (r->ev_cfg.ipu[i].bytes + 63) / 64 * 64;
    }
    return 0;
}

/* --plan auto: ipup_plan_auto over the configured model and the recipe's samples per
 * step; its stages, schedule, batch shape, replicas, recomputation and offload replace the
 * options'. 0, or 2 after a message (naming the smallest memory that fits). */
static int mt_plan_auto(mt_run *r) {
    static ipup_config base, best;
    static ipup_plan plan;
    ipup_plan_request rq;
    size_t bytes = IPUP_PLAN_SCRATCH_BYTES(IPUP_MAX_DEVICES, 64);
    void *scratch;
    char msg[IPUP_MSG_MAX];
    int rc, s;
    mt_fill_config(r, r->runner);
    base = r->cfg;
    memset(&rq, 0, sizeof rq);
    rq.base = &base;
    rq.ipus = r->o.ipus ? r->o.ipus : 1;
    rq.ipu_bytes = r->o.ipu_memory;
    rq.samples_per_step = r->o.batch * r->o.accumulate;
    if (!(scratch = malloc(bytes))) return mt_err("out of host memory: %zu bytes of plan scratch", bytes);
    rc = ipup_plan_auto(&rq, &best, &plan, scratch, bytes, msg, sizeof msg);
    free(scratch);
    if (rc != IPUP_OK) return mt_err("--plan auto: %s (%s)", msg, ipup_result_str(rc));
    r->n_stages = best.stages;
    for (s = 0; s < best.stages; s++) r->stage_first[s] = plan.split[s];
    r->stage_first[best.stages] = r->desc.n_layers;
    r->n_map = 0;
    r->sched = best.schedule;
    r->o.batch = best.microbatch;
    r->o.accumulate = best.microbatches;
    r->o.replicas = best.replicas;
    r->o.ipus = 0; /* the plan's replicas */
    r->o.recompute = 0;
    r->o.recompute_stages = best.recompute_stages;
    r->o.offload = best.offload;
    r->plan_predicted = plan.samples_per_second;
    r->plan_step = plan.step_seconds;
    printf("Plan auto for %zu bytes per IPU on %d IPU%s: %d stage%s, schedule %s, %d replica%s, batch %d x %d "
           "micro-batches, predicted %.0f samples/s (simulated)\n",
           rq.ipu_bytes, (int)rq.ipus, rq.ipus == 1 ? "" : "s", (int)best.stages, best.stages == 1 ? "" : "s",
           ipup_sched_kind_name(best.schedule), (int)best.replicas, best.replicas == 1 ? "" : "s",
           (int)best.microbatch, (int)best.microbatches, plan.samples_per_second);
    return 0;
}

/* The data's shapes, the step geometry, the plan, then the one allocation phase
 * (host memory, emulator, pools, data, permutation, text) and the data. */
static int mt_setup_memory(mt_run *r) {
    mt_feed *f = &r->feed;
    size_t host_bytes, pool_total = 64; /* each IPU's pools plus 128 spare bytes, as mt_carve_pools wants */
    int i, rc;
    if (r->o.plan && mt_plan_auto(r)) return 2;
    if (mt_resolve_replicas(r)) return 2;
    f->in_h = r->spec->in_h;
    f->in_w = r->spec->in_w;
    f->in_c = r->spec->in_c;
    f->row = f->in_h * f->in_w * f->in_c;
    f->classes = r->spec->classes;
    f->synthetic = strcmp(r->o.data, "synthetic") == 0;
    if (r->o.synthetic && (f->row != MT_PIXELS || f->classes != MNIST_CLASSES))
        return mt_err("--synthetic-data makes 28x28x1 images of 10 classes; this model takes "
                      "%dx%dx%d: use --data synthetic (data of the model's shape)",
                      f->in_h, f->in_w, f->in_c);
    if (r->o.synthetic) mt_feed_synthetic_probe(f, r->o.train_limit, r->o.test_limit);
    else if (mt_feed_probe(f, r->o.data, r->o.train_limit, r->o.test_limit, r->err) < 0)
        return mt_err("%s", r->err);
    f->seed = r->o.seed;
    f->augment = r->o.augment;
    f->samples_per_step = (int64_t)r->o.batch * r->o.accumulate * r->o.replicas;
    r->steps_per_epoch = f->tr.count / f->samples_per_step;
    if (r->steps_per_epoch < 1)
        return mt_err("one step needs %lld samples (batch %d x %d micro-batches x %d replicas) but only %d training "
                      "images are used; lower --batch-size/--batches-to-accumulate or raise --train-limit",
                      (long long)f->samples_per_step, r->o.batch, r->o.accumulate, r->o.replicas, f->tr.count);
    mt_fill_config(r, r->runner);
    host_bytes = ipup_host_bytes(&r->cfg);
    if (host_bytes == 0) host_bytes = 64;
    r->host_mem = (uint8_t *)aligned_alloc(64, (host_bytes + 63) / 64 * 64);
    r->emu = (ipup_emu *)aligned_alloc(64, (sizeof(ipup_emu) + 63) / 64 * 64);
    if (!r->host_mem || !r->emu)
        return mt_err("out of host memory: %.1f MB for the emulator's host buffers", (double)host_bytes / 1048576.0);
    memset(r->emu, 0, sizeof *r->emu); /* a fresh ipup_emu starts zeroed (ipupipe.h) */
    r->cfg.host.mem = r->host_mem;
    r->cfg.host.bytes = host_bytes;
    if ((rc = ipup_plan_config(r->emu, &r->cfg, &r->plan)) != IPUP_OK)
        return mt_err("the pipeline cannot run: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc));
    if (mt_check_ipus_pow2(r)) return 2;
    for (i = 0; i < r->plan.ipus; i++)
        pool_total += r->plan.ipu_bytes[i % r->plan.devices] + r->plan.stream_bytes[i % r->plan.devices] + 128;
    r->pool_mem = (uint8_t *)mt_alloc_huge(pool_total);
    r->text_cap = 1 << 16;
    r->text = (char *)malloc(r->text_cap);
    if (!r->pool_mem || !r->text)
        return mt_err("out of host memory: %.1f MB of IPU pools", (double)pool_total / 1048576.0);
    memset(r->pool_mem, 0, pool_total); /* touched now, at startup: no page fault in the timed steps */
    if (mt_feed_alloc(f) != 0)
        return mt_err("out of host memory: %.1f MB for %d training and %d test images; lower --train-limit or "
                      "--test-limit", mt_feed_bytes(f) / 1048576.0, f->tr.count, f->te.count);
    if (!(r->pred_cls = (int32_t *)malloc((size_t)(f->te.count > 0 ? f->te.count : 1) * sizeof(int32_t))))
        return mt_err("out of host memory: the classes of %d test images", f->te.count);
    if (!f->classes &&
        !(r->pred_out = (float *)malloc((size_t)(f->te.count > 0 ? f->te.count : 1) * (size_t)f->row * sizeof(float))))
        return mt_err("out of host memory: the reconstructions of %d test samples", f->te.count);
    memset(r->pool_mem, 0, pool_total);
    if (mt_carve_pools(r, r->pool_mem, pool_total) != 0) /* cannot happen: pool_total has the spare bytes */
        return mt_err("internal: the pools do not fit in %zu bytes", pool_total);
    if ((rc = mt_setup_eval_memory(r)) != 0) return rc;
    if (r->o.infeed_bench) {
        r->bench_x = (float *)malloc((size_t)r->o.batch * MT_PIXELS * sizeof(float));
        r->bench_y = (int32_t *)malloc((size_t)r->o.batch * sizeof(int32_t));
        if (!r->bench_x || !r->bench_y) return mt_err("out of host memory: the infeed benchmark's micro-batch");
    }
    if (r->o.synthetic) mt_feed_synthetic(f); /* made once; --data is not read */
    else if (mt_feed_load(f, r->o.data, r->err) < 0) return mt_err("%s", r->err);
    return 0;
}

/* ipup_init (which starts the emulator's threads), --load (ipup_state_load through the file). */
static int mt_setup_emulator(mt_run *r) {
    mnist_ckpt_meta *meta = &r->meta;
    sigset_t stop, old;
    int rc;
    sigemptyset(&stop); /* the emulator's threads start with SIGINT, SIGTERM, SIGHUP blocked: */
    sigaddset(&stop, SIGINT); /* they reach the main thread, whose blocking I/O they interrupt */
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    rc = ipup_init(r->emu, &r->cfg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != IPUP_OK)
        return mt_err("the pipeline cannot start: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc));
    r->emu_started = 1;
    if (ipup_warnings(r->emu)[0]) fprintf(stderr, "warnings:\n%s", ipup_warnings(r->emu)); /* as ipupipe-sched */
    if (r->ev) { /* the cooperative runner: no threads to start */
        if ((rc = ipup_init(r->ev, &r->ev_cfg)) != IPUP_OK)
            return mt_err("--test-batch-size %d: the evaluation pipeline cannot start: %s (%s)",
                          r->o.test_batch, ipup_last_error(r->ev), ipup_result_str(rc));
        r->ev_started = 1;
    }
    memset(meta, 0, sizeof *meta);
    ipup_snprintf(meta->model, sizeof meta->model, "%s", r->spec->name);
    if (!r->o.load) return 0;
    if (mnist_ckpt_load_state_fd(r->load_fd, r->o.load, meta, r->emu, r->err) != MNIST_CKPT_OK)
        return mt_err("--load: %s", r->err);
    if (meta->seed != r->o.seed)
        return mt_err("--load: %s changed while it was read (seed %llu, first read as %llu)", r->o.load,
                      (unsigned long long)meta->seed, (unsigned long long)r->o.seed);
    if (meta->step != (uint64_t)meta->epoch * (uint64_t)r->steps_per_epoch)
        return mt_err("--load: %s was saved after %u epochs at step %llu, but this run has %lld steps per epoch "
                      "(resume with the --batch-size, --batches-to-accumulate, --replicas and --train-limit of "
                      "the saved run)",
                      r->o.load, meta->epoch, (unsigned long long)meta->step, (long long)r->steps_per_epoch);
    r->start_epoch = (int)meta->epoch;
    r->loaded = 1;
    return 0;
}

/* The output files (opened now so that writing them needs no allocator), the
 * terminal, the memory report. */
static int mt_setup_outputs(mt_run *r) {
    int s;
    if (r->o.trace && ex_out_open(&r->trace_out, "--trace", r->o.trace, r->err, sizeof r->err) != 0)
        return mt_err("%s; nothing was run", r->err);
    if (r->o.summary &&
        ex_out_open(&r->summary_out, "--summary-json", r->o.summary, r->err, sizeof r->err) != 0)
        return mt_err("%s; nothing was run", r->err);
    if (r->o.export_c) {
        if (expc_check(r->emu, r->err, sizeof r->err) != IPUP_OK) return mt_err("--export-c: %s; nothing was run", r->err);
        if (ex_out_open(&r->export_out, "--export-c", r->o.export_c, r->err, sizeof r->err) != 0)
            return mt_err("%s; nothing was run", r->err);
    }
    r->tty = r->o.progress < 0 ? isatty(1) : r->o.progress;
    memset(r->mem, 0, sizeof r->mem);
    for (s = 0; s < r->plan.devices && s < IPUP_MAX_DEVICES; s++) ipup_memory_report(r->emu, s, &r->mem[s]);
    return 0;
}

/* Everything a run needs before its first step. 0, or the exit code after a message. */
static int mt_setup(mt_run *r, int argc, char **argv) {
    int rc;
    if ((rc = mt_setup_args(r, argc, argv)) != 0) return rc;
    if ((rc = mt_setup_memory(r)) != 0) return rc;
#ifdef MNIST_TRAIN_DATA_READY /* const char *(const mt_feed *, const char *dir): NULL, or why not */
    {
        const char *why = MNIST_TRAIN_DATA_READY(&r->feed, r->o.data);
        if (why) return mt_err("%s", why);
    }
#endif
    if ((rc = mt_setup_emulator(r)) != 0) return rc;
#ifdef MNIST_TRAIN_EMU_READY /* const char *(ipup_emu *): NULL, or why the run cannot go on */
    {
        const char *why = MNIST_TRAIN_EMU_READY(r->emu);
        if (why) return mt_err("%s", why);
    }
#endif
    return mt_setup_outputs(r);
}

/* ------------------------------------------------------------------ what will run */

static void mt_fmt_bytes(char *buf, size_t cap, double b) {
    if (b >= 1048576.0) ipup_snprintf(buf, cap, "%.2f MB", b / 1048576.0);
    else if (b >= 1024.0) ipup_snprintf(buf, cap, "%.1f KB", b / 1024.0);
    else ipup_snprintf(buf, cap, "%.0f B", b);
}

/* The tutorial's layers: output shape (the loss layer: its input), activation, weights. */
static void mt_print_model(const mt_run *r) {
    int i;
    printf("Model %s (%s): %lld parameters\n", r->spec->name, r->spec->tutorial, (long long)r->plan.params);
    for (i = 0; i < r->n_layers; i++) {
        int first = r->layer_first[i], last = r->layer_first[i + 1] - 1;
        const ipup_layer_info *I = &r->info[last];
        int loss = I->kind == IPUP_LAYER_SOFTMAX_XENT;
        printf("  %-9s out (%d, %d, %d)%s", r->desc.layers[first].id, loss ? I->in_h : I->out_h, loss ? I->in_w : I->out_w,
               loss ? I->in_c : I->out_c,
               last == first ? "" : I->kind == IPUP_LAYER_RELU ? " relu" : I->kind == IPUP_LAYER_GELU ? " gelu" : "");
        if (r->info[first].n_w) printf("  %d weights", r->info[first].n_w + r->info[first].n_b);
        printf("\n");
    }
}

/* The stages, each as its layers joined by '-' (an activation in the stage of its
 * layer is not named), and the IPU of each. */
static void mt_print_pipeline(const mt_run *r) {
    int s, l;
    char ipus[32] = "", rec[64] = "", off[64] = "";
    if (r->o.recompute_stages) { /* --recompute-stages: name them */
        int k, n = ipup_snprintf(rec, sizeof rec, ", recompute stages");
        for (k = 0; k < 32 && n > 0 && (size_t)n < sizeof rec; k++)
            if ((r->o.recompute_stages >> k) & 1u)
                n += ipup_snprintf(rec + n, sizeof rec - (size_t)n, "%s%d",
                                   n > 18 ? "," : " ", k);
    } else if (r->o.recompute) {
        ipup_snprintf(rec, sizeof rec, ", recompute");
    }
    if (r->o.offload) /* plain --offload (the optimizer state) as before; else what */
        ipup_snprintf(off, sizeof off, ", offload%s%s%s%s", r->o.offload == 1 ? "" : " ",
                      r->o.offload == 1 ? "" : (r->o.offload & 1) ? "optimizer" : "",
                      (r->o.offload & 2) ? (r->o.offload & 1 ? ",weights" : "weights") : "",
                      (r->o.offload & 4) ? (r->o.offload & 3 ? ",activations" : "activations")
                                         : "");
    if (r->plan.replicas > 1) ipup_snprintf(ipus, sizeof ipus, " = %d IPUs", r->plan.ipus);
    printf("Pipeline: %d stage%s on %d IPU%s x %d replica%s%s, schedule %s%s, runner %s%s%s\n", r->n_stages,
           r->n_stages == 1 ? "" : "s", r->plan.devices, r->plan.devices == 1 ? "" : "s", r->plan.replicas,
           r->plan.replicas == 1 ? "" : "s", ipus, ipup_sched_kind_name(r->sched),
           mt_name_eq(r->o.schedule, "sharding") ? " (sharding: no pipelining, one IPU at work at a time)" : "",
           r->o.runner, rec, off);
    for (s = 0; s < r->n_stages; s++) {
        printf("  %d. ", s);
        for (l = r->stage_first[s]; l < r->stage_first[s + 1]; l++)
            if (l == r->stage_first[s] || !mnist_is_activation(r->desc.layers[l].kind))
                printf("%s%s", l > r->stage_first[s] ? "-" : "", r->desc.layers[l].id);
        if (r->n_map && r->cmap.n_dev[s] > 1) {
            int b;
            printf("  (IPU%d", (int)r->cmap.dev[s][0]);
            for (b = 1; b < r->cmap.n_dev[s]; b++) printf("+IPU%d", (int)r->cmap.dev[s][b]);
            printf(": concurrent, split by output units)\n");
        } else printf("  (IPU%d)\n", r->plan.stage_device[s]);
    }
}

static void mt_print_recipe(const mt_run *r) {
    const mt_opts *o = &r->o;
    printf("Training: batch %d x %d micro-batches x %d replica(s) = %lld samples per step, %lld steps per epoch, "
           "repeat count %d\n",
           o->batch, o->accumulate, o->replicas, (long long)r->feed.samples_per_step, (long long)r->steps_per_epoch,
           o->repeat);
    /* the TF1 tutorial's "examples per step": one session step runs the repeat loop */
    printf("Examples per emulator call: %lld x repeat count %d = %lld (the TF1 pipelining tutorial's examples per step)\n",
           (long long)r->feed.samples_per_step, o->repeat, (long long)r->feed.samples_per_step * o->repeat);
    printf("Optimizer %s", mt_opt_name(o->optimizer));
    if (o->optimizer == IPUP_OPT_MOMENTUM) printf(" (mu %g)", (double)o->momentum);
    if (o->optimizer == IPUP_OPT_ADAM) {
        printf(" (eps %g", (double)o->adam_eps);
        if (o->weight_decay > 0.0f) printf(", decoupled weight decay %g", (double)o->weight_decay);
        printf("%s)", o->no_bias_correction ? ", no bias correction" : "");
    }
    printf(", learning rate %g (x%g per epoch), %d epoch%s, augment %d px, seed %llu\n", (double)o->lr,
           (double)o->lr_decay, o->epochs, o->epochs == 1 ? "" : "s", o->augment, (unsigned long long)o->seed);
    if (o->synthetic)
        printf("Data: synthetic, %d training and %d test images of random pixels and labels made once in host "
               "memory (nothing read; no infeed cost in the cost model)\n",
               r->feed.tr.count, r->feed.te.count);
    else printf("Data: %d training and %d test images from %s\n", r->feed.tr.count, r->feed.te.count, o->data);
    if (r->ev)
        printf("Test: micro-batch %d x %d micro-batches per wave (--test-batch-size), the "
               "trained weights copied into an evaluation pipeline of their own, as PopXL's "
               "test session\n", o->test_batch, o->accumulate);
    if (o->dtype || o->accum_dtype || o->first_moment_dtype || o->loss_scale > 0.0f || o->loss_dynamic) {
        printf("Precision: storage %s (weights %s), accumulators %s", ipup_dtype_name(o->dtype),
               o->dtype && !o->fp32_weights ? "float16, rounded stochastically" : "float32",
               ipup_dtype_name(o->accum_dtype));
        if (o->first_moment_dtype) printf(", Adam first moment %s", ipup_dtype_name(o->first_moment_dtype));
        if (o->loss_dynamic)
            printf(", dynamic loss scaling from %g", o->loss_scale > 0.0f ? (double)o->loss_scale : 32768.0);
        else if (o->loss_scale > 0.0f) printf(", loss scale %g", (double)o->loss_scale);
        printf("\n");
    }
}

static void mt_print_memory(const mt_run *r) {
    int s, c;
    printf("Memory per IPU:\n");
    for (s = 0; s < r->plan.devices && s < IPUP_MAX_DEVICES; s++) {
        char b[IPUP_MEM_CATEGORIES + 1][32];
        mt_fmt_bytes(b[IPUP_MEM_CATEGORIES], sizeof b[0], (double)r->mem[s].used);
        for (c = 0; c < IPUP_MEM_CATEGORIES; c++) mt_fmt_bytes(b[c], sizeof b[0], (double)r->mem[s].by_category[c]);
        printf("  IPU%d: %s (", s, b[IPUP_MEM_CATEGORIES]);
        for (c = 0; c < IPUP_MEM_CATEGORIES; c++) printf("%s%s %s", c ? ", " : "", ipup_mem_category_name(c), b[c]);
        printf(")");
        if (r->mem[s].stream_used) { /* offload */
            mt_fmt_bytes(b[0], sizeof b[0], (double)r->mem[s].stream_used);
            printf(" + streaming memory %s", b[0]);
        }
        printf("\n");
    }
}

/* What will run (like the tutorial). */
static void mt_print_setup(const mt_run *r) {
    mt_print_model(r);
    mt_print_pipeline(r);
    mt_print_recipe(r);
    mt_print_memory(r);
    if (r->loaded)
        printf("Resumed from %s: epoch %u, step %llu\n", r->o.load, r->meta.epoch, (unsigned long long)r->meta.step);
    fflush(stdout);
}

/* ------------------------------------------------------------------ signals */

/* SIGINT, SIGTERM and SIGHUP set this flag; the run stops at the next step boundary
 * (mt_interrupted), its unfinished outputs are dropped by mt_cleanup and the program
 * exits 128 + the signal's number after a message. The handler is installed without
 * SA_RESTART, so a signal also ends a blocking call of the main thread (a write to a
 * standard output nobody reads) with EINTR instead of restarting it; and when standard
 * output is a pipe or a socket, the handler makes it non-blocking, so no later line can
 * block the way out (mt_check_stdout drops what the reader does not take and puts the
 * blocking mode back). A signal that arrives while the outputs are written lets them
 * complete (each is renamed into place whole) and is reported after them. */
static volatile sig_atomic_t mt_signal_seen;
static const int mt_signals[3] = {SIGINT, SIGTERM, SIGHUP};
static int mt_stdout_fl = -1; /* stdout's file status flags if a pipe or a socket, else -1 */

static void mt_on_signal(int sig) {
    int e = errno; /* fcntl is async-signal-safe (POSIX); errno kept for the interrupted code */
    mt_signal_seen = sig;
    if (mt_stdout_fl >= 0) (void)fcntl(STDOUT_FILENO, F_SETFL, mt_stdout_fl | O_NONBLOCK);
    errno = e;
}

/* Installs the handler (install = 1, the old actions into old[3]; a signal the
 * program was started with ignored is left ignored) or puts the old actions back
 * (install = 0). */
static void mt_signals_set(int install, struct sigaction *old) {
    struct sigaction sa;
    struct stat st;
    int i;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = mt_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read or write returns EINTR */
    if (install)
        mt_stdout_fl = fstat(STDOUT_FILENO, &st) == 0 &&
                               (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
                           ? fcntl(STDOUT_FILENO, F_GETFL)
                           : -1;
    for (i = 0; i < 3; i++) {
        if (!install) sigaction(mt_signals[i], &old[i], NULL);
        else if (sigaction(mt_signals[i], NULL, &old[i]) == 0 && old[i].sa_handler != SIG_IGN)
            sigaction(mt_signals[i], &sa, NULL); /* an ignored signal stays ignored (nohup, background jobs) */
    }
    if (!install) mt_stdout_fl = -1;
}

static const char *mt_signal_name(int sig) {
    return sig == SIGINT    ? "SIGINT"
           : sig == SIGTERM ? "SIGTERM"
           : sig == SIGHUP  ? "SIGHUP"
                            : "a signal";
}

/* The message of a run stopped by a signal; returns its exit code, 128 + signal. */
static int mt_interrupted(const mt_run *r, const char *where) {
    int sig = (int)mt_signal_seen;
    if (r->tty) printf("\n");
    mt_err("interrupted by %s %s; stopped there: nothing was saved, older output files are as they were",
           mt_signal_name(sig), where);
    return 128 + sig;
}

/* A signal that arrived while the outputs were written (they were completed first):
 * the message and 128 + signal, whatever rc the writing had. */
static int mt_interrupted_writing(int rc) {
    int sig = (int)mt_signal_seen;
    mt_err("interrupted by %s while the outputs were written; training had ended, so they were "
           "completed first%s",
           mt_signal_name(sig),
           rc ? " (the message above names the one that failed; it was not replaced)"
              : ", each renamed into place whole");
    return 128 + sig;
}

/* ------------------------------------------------------------------ training */

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

/* Epoch r->epoch: its learning rate and permutation, its steps, its lines. 0, 1 after
 * a message when the emulator stops, 128 + signal when a signal stopped it. */
static int mt_train_epoch(mt_run *r) {
    double t0 = mt_now(), c0 = mt_cpu(), loss_sum = 0.0, lr = (double)r->o.lr, sps, acc;
    int64_t done = 0, correct = 0, micro = 0, spstep = r->feed.samples_per_step;
    int e, s, rc;
    for (e = 0; e < r->epoch; e++) lr *= (double)r->o.lr_decay;
    ipup_set_learning_rate(r->emu, (float)lr);
    mt_feed_epoch(&r->feed, r->epoch, (int64_t)r->epoch * r->steps_per_epoch);
    while (done < r->steps_per_epoch) {
        ipup_run_stats st;
        int32_t k = (int32_t)(r->steps_per_epoch - done < r->o.repeat ? r->steps_per_epoch - done : r->o.repeat);
        if (mt_signal_seen) {
            char where[96];
            ipup_snprintf(where, sizeof where, "at step %lld (epoch %d)", (long long)ipup_get_step(r->emu), r->epoch + 1);
            return mt_interrupted(r, where);
        }
        memset(&st, 0, sizeof st);
        if ((rc = ipup_run_steps(r->emu, k, &st)) != IPUP_OK) {
            if (r->tty) printf("\n");
            mt_err("training stopped in epoch %d: %s (%s)", r->epoch + 1, ipup_last_error(r->emu), ipup_result_str(rc));
            return 1;
        }
        done += k;
        micro += st.microbatches;
        loss_sum += st.loss_mean * (double)st.microbatches;
        correct += st.correct;
        r->sim_seconds += st.sim_seconds;
        r->ls_skipped = st.skipped_steps;
        r->launch_total += st.launch_seconds;
        r->step_sec = st.step_seconds;
        r->calls++;
        r->steps_trained += k;
        for (s = 0; s < r->plan.ipus && s < IPUP_MAX_IPUS; s++) {
            r->busy_total += st.busy_seconds[s];
            r->idle_total += st.idle_seconds[s];
        }
        memcpy(r->phase_util, st.phase_utilisation, sizeof r->phase_util);
        memcpy(r->phase_sec, st.phase_seconds, sizeof r->phase_sec);
        if (r->tty && !r->o.quiet)
            mt_progress(r, r->epoch, done, r->steps_per_epoch, loss_sum / (double)micro,
                        100.0 * (double)correct / (double)(done * spstep),
                        (double)(done * spstep) / (mt_now() - t0), 0);
    }
    r->t_train += mt_now() - t0;
    r->t_cpu += mt_cpu() - c0;
    r->samples_trained += done * spstep;
    r->last_loss = loss_sum / (double)micro;
    if (r->o.quiet) return 0;
    acc = 100.0 * (double)correct / (double)(done * spstep);
    sps = (double)(done * spstep) / (mt_now() - t0);
    if (r->tty) mt_progress(r, r->epoch, done, r->steps_per_epoch, r->last_loss, acc, sps, 1);
    else if (!r->feed.classes) /* an autoencoder: no accuracy */
        printf("Epoch %d/%d: loss %.6f, %.0f samples/s, learning rate %.5g\n", r->epoch + 1, r->o.epochs,
               r->last_loss, sps, lr);
    else
        printf("Epoch %d/%d: loss %.4f, train accuracy %.2f%%, %.0f samples/s, learning rate %.5g\n", r->epoch + 1,
               r->o.epochs, r->last_loss, acc, sps, lr);
    printf("Step %lld, Epoch %d, Mean loss: %.4f\n", (long long)ipup_get_step(r->emu), r->epoch + 1, r->last_loss);
    fflush(stdout);
    return 0;
}

/* The epochs from the start (or the resumed) epoch to --epochs. 0, 1, or 128 + a
 * signal's number. */
static int mt_train(mt_run *r) {
    int rc;
    for (r->epoch = r->start_epoch; r->epoch < r->o.epochs; r->epoch++)
        if ((rc = mt_train_epoch(r)) != 0) return rc;
    return 0;
}

/* ------------------------------------------------------------------ report */

/* Appends to the startup-allocated text buffer. */
#if defined(__GNUC__) || defined(__clang__)
static size_t mt_cat(mt_run *r, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
static size_t mt_cat(mt_run *r, size_t n, const char *fmt, ...) {
    va_list ap;
    int k;
    if (n >= r->text_cap) return n;
    va_start(ap, fmt);
    k = ipup_vsnprintf(r->text + n, r->text_cap - n, fmt, ap);
    va_end(ap);
    if (k < 0) return n;
    n += (size_t)k;
    return n < r->text_cap ? n : r->text_cap - 1;
}

/* The figures of the run as JSON into r->text; returns its length. */
static size_t mt_summary_text(mt_run *r) {
    size_t n = 0;
    int s;
    double busy = r->busy_total, all = r->busy_total + r->idle_total;
    char model[256], runner[128]; /* texts into JSON through its escaper (ex_escape.h) */
    ex_esc_json(r->spec->name, model, sizeof model);
    ex_esc_json(r->o.runner, runner, sizeof runner);
    n = mt_cat(r, n, "{\n  \"model\": \"%s\",\n  \"test_accuracy\": %.4f,\n  \"train_samples_per_second\": %.1f,\n",
               model, r->test_acc / 100.0, r->sps);
    n = mt_cat(r, n, "  \"epochs\": %d,\n  \"final_loss\": %.6f,\n  \"steps\": %lld,\n", r->o.epochs, r->last_loss,
               (long long)ipup_get_step(r->emu));
    n = mt_cat(r, n, "  \"ipus\": %d,\n  \"replicas\": %d,\n  \"schedule\": \"%s\",\n  \"runner\": \"%s\",\n",
               r->plan.devices, r->plan.replicas, ipup_sched_kind_name(r->sched), runner);
    n = mt_cat(r, n, "  \"ipu_peak_memory_bytes\": [");
    for (s = 0; s < r->plan.devices && s < IPUP_MAX_DEVICES; s++) {
        ipup_mem_report mr;
        memset(&mr, 0, sizeof mr);
        ipup_memory_report(r->emu, s, &mr);
        n = mt_cat(r, n, "%s%zu", s ? ", " : "", mr.high_water);
    }
    n = mt_cat(r, n, "],\n  \"simulated_ipu_seconds\": %.6f,\n  \"ipu_utilisation\": %.4f,\n", r->sim_seconds,
               all > 0 ? busy / all : 0.0);
    n = mt_cat(r, n, "  \"simulated_step_seconds\": %.9f,\n  \"simulated_launch_seconds\": %.9f,\n",
               r->steps_trained ? r->sim_seconds / (double)r->steps_trained : 0.0, r->launch_total);
    n = mt_cat(r, n,
               "  \"phase_utilisation\": {\"ramp_up\": %.4f, \"main\": %.4f, \"ramp_down\": %.4f, \"update\": %.4f}\n}\n",
               r->phase_util[IPUP_PHASE_RAMP_UP], r->phase_util[IPUP_PHASE_MAIN], r->phase_util[IPUP_PHASE_RAMP_DOWN],
               r->phase_util[IPUP_PHASE_UPDATE]);
    return n;
}

/* --export-c: the model as a C header (examples/common/export_c.h), written to the file opened
   at startup and put in place only when complete. 0, or 2 after a message. */
static int mt_write_export(mt_run *r) {
    char name[EXPC_NAME_MAX + 1], origin[160];
    expc_info info;
    int rc;
    if (expc_name_choose(r->o.export_c, r->o.export_name, name, sizeof name, r->err, sizeof r->err) != IPUP_OK) {
        ex_out_close(&r->export_out, 0); /* checked at startup (mt_check_outputs): not reached */
        return mt_err("%s", r->err);
    }
    ipup_snprintf(origin, sizeof origin, "mnist-train --model %s, seed %llu, at step %lld", r->spec->name,
                  (unsigned long long)r->o.seed, (long long)ipup_get_step(r->emu));
    errno = 0;
    rc = expc_write(r->emu, name, origin, ex_fd_write, &r->export_out.fd, &info, r->err, sizeof r->err);
    if (rc != IPUP_OK && rc != IPUP_ERR_IO) {
        ex_out_close(&r->export_out, 0);
        return mt_err("--export-c: %s", r->err);
    }
    if (mt_out_finish(&r->export_out, "--export-c", rc == IPUP_OK)) return 2;
    if (!r->o.quiet)
        printf("Exported %s: %s_predict, %d weight arrays, %lld weights (FNV-1a %016llx), scratch %lld floats at "
               "batch %d\n",
               r->o.export_c, name, (int)info.tensors, (long long)info.floats, (unsigned long long)info.fnv1a,
               (long long)info.scratch, (int)r->o.batch);
    return 0;
}

/* --save, --trace, --summary-json, --export-c. 0, or the exit code after a message. */
static int mt_write_outputs(mt_run *r) {
    int rc = 0;
    if (r->o.save) {
        mnist_ckpt_meta *meta = &r->meta;
        meta->step = (uint64_t)ipup_get_step(r->emu);
        meta->seed = r->o.seed;
        meta->epoch = (uint32_t)(r->epoch);
        ipup_snprintf(meta->model, sizeof meta->model, "%s", r->spec->name);
        if (mnist_ckpt_save_state(r->o.save, meta, r->emu, r->err) != MNIST_CKPT_OK) rc = mt_err("--save: %s", r->err);
        else if (!r->o.quiet)
            printf("Saved %s (epoch %u, step %llu)\n", r->o.save, meta->epoch, (unsigned long long)meta->step);
    }
    if (r->trace_out.fd >= 0) {
        errno = 0;
        if (mt_out_finish(&r->trace_out, "--trace", ipup_trace_write(r->emu, ex_fd_write, &r->trace_out.fd) == IPUP_OK))
            rc = 2;
    }
    if (r->summary_out.fd >= 0) {
        size_t n = mt_summary_text(r);
        errno = 0;
        if (mt_out_finish(&r->summary_out, "--summary-json", ex_fd_write(&r->summary_out.fd, r->text, n) == 0)) rc = 2;
    }
    if (r->export_out.fd >= 0 && mt_write_export(r)) rc = 2;
    return rc;
}

/* Training FLOPs per sample (ipup_model_info's: forward, weight gradient, and the input
   gradient once an earlier layer has parameters), the rate they ran at, and that rate as a
   fraction of one core's FMA peak measured now (fma_peak.h, ~25 ms). */
static double mt_train_flops(const mt_run *r) {
    double fl = 0.0;
    int l, params_before = 0;
    for (l = 0; l < r->desc.n_layers; l++) {
        const ipup_layer_info *I = &r->info[l];
        fl += (double)I->flops_fwd + (double)I->flops_bwd_dw + (params_before ? (double)I->flops_bwd_dx : 0.0);
        if (I->n_w) params_before = 1;
    }
    return fl;
}
static void mt_print_peak(const mt_run *r) {
    double fl = mt_train_flops(r), peak = fma_peak_gflops(1, NULL);
    if (!(peak > 0.0) || !(r->sps > 0.0)) return;
    printf("Compute: %.2f MFLOP per training sample, %.1f GFLOP/s = %.2f of one core's measured FMA peak (%.0f GFLOP/s)\n",
           fl * 1e-6, fl * r->sps * 1e-9, fl * r->sps * 1e-9 / peak, peak);
}

/* --test-batch-size: the trained weights (replica 0's parameter tensors) into the
   evaluation emulator, by name; IPUP_OK or the library's code (its message in r->ev) */
static int mt_eval_weights(mt_run *r) {
    int32_t i, j, n = ipup_tensor_count(r->emu);
    float buf[256];
    for (i = 0; i < n; i++) {
        ipup_tensor_info a, b;
        int rc = ipup_tensor_get(r->emu, i, &a);
        if (rc == IPUP_OK && a.kind != IPUP_TENSOR_PARAM) continue;
        if (rc == IPUP_OK) rc = ipup_tensor_find(r->ev, a.name, &b);
        if (rc != IPUP_OK) return rc;
        if (b.n != a.n) return IPUP_ERR_ARG; /* cannot happen: the same model and stages */
        for (j = 0; j < a.n && rc == IPUP_OK; j += 256) { /* whichever type stores them */
            const int32_t k = a.n - j < 256 ? a.n - j : 256;
            rc = ipup_tensor_read(r->emu, &a, j, k, buf);
            if (rc == IPUP_OK) rc = ipup_tensor_write(r->ev, &b, j, k, buf);
        }
        if (rc != IPUP_OK) return rc;
    }
    return ipup_replicas_sync(r->ev);
}

/* The test images through ipup_predict (the pipelined forward-only table over the IPUs):
   the number predicted right; -1 after the message */
static int64_t mt_test_correct(mt_run *r) {
    int64_t ok = 0;
    int32_t i;
    ipup_emu *e = r->ev ? r->ev : r->emu;
    int rc = r->ev ? mt_eval_weights(r) : IPUP_OK;
    if (rc == IPUP_OK) rc = ipup_predict(e, r->feed.te.count, r->feed.xte, NULL, r->pred_cls);
    if (rc != IPUP_OK) {
        mt_err("evaluation failed: %s (%s)", ipup_last_error(e), ipup_result_str(rc));
        return -1;
    }
    for (i = 0; i < r->feed.te.count; i++) ok += r->pred_cls[i] == r->feed.yte[i];
    return ok;
}
/* An autoencoder's test (--data synthetic: every second sample an anomaly): each sample's
   reconstruction error (mean squared, ipup_predict's output against the input) as its
   anomaly score; prints the ROC AUC of normal against anomalous samples (the chance that
   an anomaly scores above a normal sample, ties count half: the Mann-Whitney statistic,
   by pairs) and the mean errors; r->test_acc = 100 AUC. 0, or -1 after the message. */
static int mt_test_auc(mt_run *r) {
    const mt_feed *f = &r->feed;
    const size_t row = (size_t)f->row;
    double err_sum[2] = {0.0, 0.0}, pairs = 0.0, above = 0.0;
    int64_t n[2] = {0, 0};
    int32_t i, j;
    int rc = ipup_predict(r->emu, f->te.count, f->xte, r->pred_out, NULL);
    if (rc != IPUP_OK) {
        mt_err("evaluation failed: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc));
        return -1;
    }
    for (i = 0; i < f->te.count; i++) { /* the scores, over the reconstructions */
        const float *x = f->xte + (size_t)i * row;
        float *o = r->pred_out + (size_t)i * row;
        double e = 0.0;
        size_t k;
        for (k = 0; k < row; k++) e += ((double)o[k] - (double)x[k]) * ((double)o[k] - (double)x[k]);
        o[0] = (float)(e / (double)row);
        err_sum[f->yte[i] != 0] += (double)o[0];
        n[f->yte[i] != 0]++;
    }
    for (i = 0; i < f->te.count; i++)
        for (j = 0; j < f->te.count; j++)
            if (f->yte[i] != 0 && f->yte[j] == 0) {
                const float a = r->pred_out[(size_t)i * row], b = r->pred_out[(size_t)j * row];
                pairs += 1.0;
                above += a > b ? 1.0 : a == b ? 0.5 : 0.0;
            }
    r->test_acc = pairs > 0.0 ? 100.0 * above / pairs : 0.0;
    printf("Test AUC: %.4f (%lld normal and %lld anomalous samples; mean reconstruction error %.6f and %.6f)\n",
           r->test_acc / 100.0, (long long)n[0], (long long)n[1], n[0] ? err_sum[0] / (double)n[0] : 0.0,
           n[1] ? err_sum[1] / (double)n[1] : 0.0);
    return 0;
}

/* the simulated inference figures of the test evaluation (ipup_predict_figures) */
static void mt_print_inference(const mt_run *r) {
    ipup_predict_stats ps;
    if (ipup_predict_figures(r->ev ? r->ev : r->emu, &ps) != IPUP_OK) return;
    if (ps.steps == 0) { /* concurrent stages: no forward-only table, no figures */
        printf("Simulated inference: %lld test images stage after stage (concurrent stages have no forward-only table)\n",
               (long long)ps.last_samples);
        return;
    }
    printf("Simulated inference: %lld test images in %.4f s, %.0f samples/s in steady state, latency %.2f us per "
           "micro-batch (forward-only %s table, %d steps per %d micro-batches)\n",
           (long long)ps.last_samples, ps.last_seconds, ps.samples_per_second, ps.latency_seconds * 1e6,
           ipup_sched_kind_name(ps.schedule), (int)ps.steps, (int)ps.microbatches);
}

/* The simulated time per step: the pipeline step and the launches of the emulator calls
 * spread over their steps (the host loop's cost, which --repeat-count amortises). */
static void mt_print_host_loop(const mt_run *r) {
    double per = r->sim_seconds / (double)r->steps_trained, l = r->launch_total / (double)r->steps_trained;
    printf("Simulated time per step: %.2f us (pipeline %.2f us + launch %.2f us: %lld emulator call%s x %.2f us "
           "over %lld steps)\n",
           per * 1e6, r->step_sec * 1e6, l * 1e6, (long long)r->calls, r->calls == 1 ? "" : "s",
           r->calls ? r->launch_total / (double)r->calls * 1e6 : 0.0, (long long)r->steps_trained);
}

/* --outfeed: what reached the host during the run */
static void mt_print_outfeed(const mt_run *r) {
    printf("Outfeed (%s): %lld records delivered during the run, the last of step %lld", r->o.outfeed == 1 ? "loss"
           : r->o.outfeed == 2 ? "outputs" : "both", (long long)r->out_recs, (long long)r->out_last_step);
    if (r->o.outfeed != 2 && r->out_recs) printf(", mean loss %.4f", r->out_loss / (double)r->out_recs);
    if (r->out_rows)
        printf(", %lld output rows of %d floats (mean %.4f)", (long long)r->out_rows, (int)r->out_width,
               r->out_sum / ((double)r->out_rows * (double)r->out_width));
    printf("\n");
}

/* The test evaluation, the closing lines, the outputs. 0, or the exit code. */
static int mt_report(mt_run *r) {
    int64_t test_correct;
    double all = r->busy_total + r->idle_total;
    int rc;
#ifdef MNIST_TRAIN_BEFORE_REPORT /* e.g. bring every stage's weights to this process */
    MNIST_TRAIN_BEFORE_REPORT(r->emu);
#endif
    if (!r->feed.classes) {
        if (mt_test_auc(r) < 0) return 1;
    } else {
        if ((test_correct = mt_test_correct(r)) < 0) return 1;
        r->test_acc = 100.0 * (double)test_correct / (double)r->feed.te.count;
    }
    r->sps = r->t_train > 0 ? (double)r->samples_trained / r->t_train : 0.0;
    mnist_train_last_sps = r->sps;
    mnist_train_last_cpu_sps = r->t_cpu > 0 ? (double)r->samples_trained / r->t_cpu : 0.0;
    mnist_train_last_accuracy = r->test_acc;
    mnist_train_last_flops = mt_train_flops(r);
    if (r->feed.classes) printf("Test accuracy: %.2f%%\n", r->test_acc);
    if (r->o.loss_dynamic)
        printf("Dynamic loss scaling: %lld step%s skipped on overflow, scale now %g\n", (long long)r->ls_skipped,
               r->ls_skipped == 1 ? "" : "s", (double)ipup_loss_scale(r->emu));
    printf("Throughput: %.0f samples/s\n", r->sps);
    if (r->o.plan && r->sim_seconds > 0.0) { /* the cost model's figure against the plan's */
        /* the plan predicts calls of cfg.repeat steps; this run's calls (a shorter last one)
           pay the launch more often: its prediction from the plan's step and launch */
        double pred = r->plan_step * (double)r->steps_trained + r->launch_total;
        printf("Simulated throughput: %.0f samples/s (--plan auto predicted %.0f for these %lld "
               "steps in %lld call%s; %.0f for calls of %d steps)\n",
               (double)r->samples_trained / r->sim_seconds,
               pred > 0.0 ? (double)r->samples_trained / pred : 0.0,
               (long long)r->steps_trained, (long long)r->calls, r->calls == 1 ? "" : "s",
               r->plan_predicted, r->o.repeat);
    }
    if (!r->o.quiet) mt_print_peak(r);
    if (!r->o.quiet && all > 0 && r->phase_sec[IPUP_PHASE_MAIN] > 0.0)
        printf("Simulated IPU time: %.4f s for %lld samples, IPU utilisation %.1f%% (main phase %.1f%%)\n",
               r->sim_seconds, (long long)r->samples_trained, 100.0 * r->busy_total / all,
               100.0 * r->phase_util[IPUP_PHASE_MAIN]);
    else if (!r->o.quiet && all > 0) /* the phases as the tutorials define them (docs/schedules.md §4) */
        printf("Simulated IPU time: %.4f s for %lld samples, IPU utilisation %.1f%% (no main phase: the pipeline never "
               "fills)\n",
               r->sim_seconds, (long long)r->samples_trained, 100.0 * r->busy_total / all);
    if (!r->o.quiet && r->steps_trained > 0) mt_print_host_loop(r);
    if (!r->o.quiet && r->o.outfeed) mt_print_outfeed(r);
    if (!r->o.quiet) mt_print_inference(r);
    fflush(stdout);
    if (mt_signal_seen) return mt_interrupted(r, "after the test evaluation");
    rc = mt_write_outputs(r);
    if (mt_signal_seen) rc = mt_interrupted_writing(rc);
    MNIST_TRAIN_RUN_DONE();
    return rc;
}

/* ------------------------------------------------------------------ the program */

/* The one way out: the emulator shut down once (if it started), unfinished outputs
 * dropped, every startup allocation freed. */
static void mt_cleanup(mt_run *r) {
    if (r->emu_started) ipup_shutdown(r->emu);
    r->emu_started = 0;
    if (r->ev_started) ipup_shutdown(r->ev);
    r->ev_started = 0;
    free(r->ev);
    free(r->ev_mem);
    free(r->ev_host);
    r->ev = NULL;
    r->ev_mem = r->ev_host = NULL;
    ex_out_free(&r->trace_out);
    ex_out_free(&r->summary_out);
    ex_out_free(&r->export_out);
    if (r->load_fd >= 0) close(r->load_fd);
    r->load_fd = -1;
    free(r->pred_cls);
    r->pred_cls = NULL;
    free(r->bench_x);
    free(r->bench_y);
    r->bench_x = NULL;
    r->bench_y = NULL;
    free(r->pred_out);
    r->pred_out = NULL;
    free(r->emu);
    free(r->text);
    mt_feed_free(&r->feed);
    free(r->pool_mem);
    free(r->host_mem);
    r->emu = NULL;
    r->text = NULL;
    r->pool_mem = r->host_mem = NULL;
}

/* Every line the run printed reached stdout: flushed and checked (a full disk, a
 * closed pipe). Returns rc, or 2 after a message when rc was 0 and stdout failed.
 * After a signal (stdout a pipe or a socket, made non-blocking by mt_on_signal): what
 * its reader does not take now is dropped (stdout onto /dev/null: the exit flush
 * cannot block either), and the blocking mode is put back. */
static int mt_check_stdout(int rc) {
    int bad = fflush(stdout) != 0, e = errno;
    if (ferror(stdout)) bad = 1;
    clearerr(stdout);
    if (mt_signal_seen && mt_stdout_fl >= 0) {
        int stuck = bad && (e == EAGAIN || e == EWOULDBLOCK || e == EINTR);
        int fd = stuck ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
        (void)fcntl(STDOUT_FILENO, F_SETFL, mt_stdout_fl);
        if (fd >= 0) {
            mt_err("the standard output was not read (a full pipe?): its last lines were dropped");
            dup2(fd, STDOUT_FILENO);
            close(fd);
            (void)fflush(stdout);
            clearerr(stdout);
            return rc;
        }
    }
    if (!bad) return rc;
    mt_err("writing the standard output failed: %s (disk full or closed pipe?)", strerror(e ? e : EIO));
    return rc ? rc : 2;
}

/* --infeed-benchmark (the TF user guide's dataset_benchmark): the host feed, mt_infeed over
 * every micro-batch of epoch 0 into one micro-batch of host memory, timed on this thread,
 * against what the simulated IPUs consume: one emulator call of --repeat-count steps
 * (launch included), samples / its simulated seconds. Nothing is saved. 0, or 1 after a
 * message. */
static int mt_infeed_bench(mt_run *r) {
    ipup_feed fd;
    ipup_run_stats st;
    int64_t t, n = 0, spstep = r->feed.samples_per_step;
    int32_t k = (int32_t)(r->steps_per_epoch < r->o.repeat ? r->steps_per_epoch : r->o.repeat);
    double t0, dt, feed_sps, ipu_sps;
    int rc;
    memset(&fd, 0, sizeof fd);
    fd.n = r->o.batch;
    fd.row = MT_PIXELS;
    fd.classes = 10;
    fd.x = r->bench_x;
    fd.labels = r->bench_y;
    mt_feed_epoch(&r->feed, 0, 0);
    t0 = mt_now();
    for (t = 0; t < r->steps_per_epoch * spstep; t += r->o.batch, n += r->o.batch) {
        fd.sample0 = t;
        if (mt_infeed(&r->feed, &fd) != 0) return mt_err("--infeed-benchmark: the infeed failed at sample %lld", (long long)t);
    }
    dt = mt_now() - t0;
    memset(&st, 0, sizeof st);
    if ((rc = ipup_run_steps(r->emu, k, &st)) != IPUP_OK)
        return mt_err("--infeed-benchmark: %s (%s)", ipup_last_error(r->emu), ipup_result_str(rc)), 1;
    feed_sps = dt > 0.0 ? (double)n / dt : 0.0;
    ipu_sps = st.samples_per_second;
    mnist_train_last_feed_sps = feed_sps;
    mnist_train_last_ipu_sps = ipu_sps;
    printf("Infeed benchmark: the host feed delivers %.0f samples/s (%lld samples of epoch 1 in %.4f s, one thread%s)\n",
           feed_sps, (long long)n, dt, r->o.augment ? ", augmented" : "");
    printf("Simulated IPUs consume %.0f samples/s (one emulator call of %d steps: %lld samples in %.6f s, launch "
           "included%s)\n",
           ipu_sps, (int)k, (long long)st.samples, st.sim_seconds,
           r->o.synthetic ? "; synthetic data: no infeed cost" : "");
    printf("Feed / IPUs: %.2fx: %s\n", ipu_sps > 0.0 ? feed_sps / ipu_sps : 0.0,
           feed_sps >= ipu_sps ? "the host feed keeps up"
                               : "the host feed is the bottleneck (the IPUs would wait for it)");
    fflush(stdout);
    return 0;
}

/* The trainer: setup, training, report, cleanup. Returns the exit code: 0, 1 (the
 * run failed), 2 (usage, data, checkpoint or output error, stdout included), 128 +
 * signal (SIGINT, SIGTERM or SIGHUP stopped it at a step boundary, or arrived while the
 * outputs were written). */
static int mnist_train_main(int argc, char **argv) {
    static mt_run R_;
    static char outbuf[1 << 14];
    static int outbuf_set;
    struct sigaction old_actions[3];
    mt_run *r = &R_;
    int rc;
    if (!outbuf_set) setvbuf(stdout, outbuf, _IOLBF, sizeof outbuf); /* printing never allocates */
    outbuf_set = 1;
    memset(r, 0, sizeof *r);
    r->trace_out.fd = r->summary_out.fd = r->load_fd = -1;
    r->export_out.fd = -1;
    mt_signal_seen = 0;
    mt_signals_set(1, old_actions);
    rc = mt_setup(r, argc, argv);
    if (rc == 0 && mt_signal_seen) rc = mt_interrupted(r, "during startup");
    if (rc == 0) {
        if (!r->o.quiet) mt_print_setup(r);
        MNIST_TRAIN_STARTUP_DONE();
        if (r->o.infeed_bench) rc = mt_infeed_bench(r);
        else {
            rc = mt_train(r);
            if (rc == 0) rc = mt_report(r);
        }
    }
    mt_cleanup(r);
    rc = mt_check_stdout(rc);
    mt_signals_set(0, old_actions);
    return rc;
}

#endif /* MNIST_TRAINER_H */
