/* sensor_finetune.h - `sensor-demo --mode finetune`: a machine-state classifier (normal,
 * imbalance, misalignment, bearing fault) pre-trained on machine A, then moved to
 * machine B by training only its head on a few windows of B while the body is frozen.
 * MIT licence.
 *
 *   1. data: spectral features (sensor_data.h) of machine A (training and held-out
 *      windows) and of machine B (SF_SHOTS fine-tuning windows, SF_B_TEST held-out);
 *   2. pre-training: SF_PRETRAIN_TEXT on 2 emulated IPUs, every layer trains; the
 *      weights leave the emulator by name (ipup_tensor_find, sf_weights_get);
 *   3. fine-tuning: SF_FINETUNE_TEXT (the body "dense32:frozen,relu,dense16:frozen,relu"
 *      on IPU0, the head "dense4,xent" on IPU1) starts from those weights
 *      (sf_weights_put: ipup_tensor_find + ipup_replicas_sync), is trained on machine B's
 *      few windows, and the frozen body must come out bit for bit as it went in.
 * The memory report of the fine-tuning emulator is compared with the plan of the same
 * pipeline without ":frozen": the frozen layers carve no gradient accumulators and no
 * optimizer state.
 *
 * The firmware (examples/firmware/finetune.c) runs step 3 with the default settings on
 * the weights and data its generator (examples/firmware/gen_finetune.c) wrote from steps
 * 1 and 2 of this file. */
#ifndef SENSOR_FINETUNE_H
#define SENSOR_FINETUNE_H

#include "sensor_data.h"
#include "sensor_classifier.h"
#include "sensor_run.h"

/* the data of the run (host memory, allocated by sft_data) */
typedef struct sft_data {
    float *a_x, *a_tx, *b_x, *b_tx;     /* feature rows */
    int32_t *a_y, *a_ty, *b_y, *b_ty;   /* labels */
    int32_t n_a, n_at, n_b, n_bt;
} sft_data;

/* the figures of the run */
typedef struct sft_figs {
    sr_loss pre, ft;
    int64_t acc_a, acc_b_pre, acc_b_before, acc_b_after;   /* correct predictions */
    uint64_t body_before, body_after, head_after, all_after;
    size_t grads_frozen, opt_frozen, grads_full, opt_full; /* bytes over both IPUs */
} sft_figs;

static inline void sft_data_free(sft_data *d)
{
    free(d->a_x); free(d->a_tx); free(d->b_x); free(d->b_tx);
    free(d->a_y); free(d->a_ty); free(d->b_y); free(d->b_ty);
    memset(d, 0, sizeof *d);
}

/* n_a machine A training rows; the other sizes are SF_PRE_TEST, SF_SHOTS, SF_B_TEST */
static inline int sft_data_make(sft_data *d, int32_t n_a, uint64_t seed)
{
    memset(d, 0, sizeof *d);
    d->n_a = n_a; d->n_at = SF_PRE_TEST; d->n_b = SF_SHOTS; d->n_bt = SF_B_TEST;
    d->a_x = sr_floats((size_t)d->n_a * SF_IN, "machine A training features");
    d->a_tx = sr_floats((size_t)d->n_at * SF_IN, "machine A held-out features");
    d->b_x = sr_floats((size_t)d->n_b * SF_IN, "machine B fine-tuning features");
    d->b_tx = sr_floats((size_t)d->n_bt * SF_IN, "machine B held-out features");
    d->a_y = (int32_t *)malloc((size_t)d->n_a * sizeof(int32_t));
    d->a_ty = (int32_t *)malloc((size_t)d->n_at * sizeof(int32_t));
    d->b_y = (int32_t *)malloc((size_t)d->n_b * sizeof(int32_t));
    d->b_ty = (int32_t *)malloc((size_t)d->n_bt * sizeof(int32_t));
    if (!d->a_x || !d->a_tx || !d->b_x || !d->b_tx || !d->a_y || !d->a_ty || !d->b_y || !d->b_ty)
        return so_err("out of host memory for the sensor data") != 0;
    sd_feature_set(&sd_machine_a, seed, SD_STREAM_A_TRAIN, d->n_a, d->a_x, d->a_y);
    sd_feature_set(&sd_machine_a, seed, SD_STREAM_A_TEST, d->n_at, d->a_tx, d->a_ty);
    sd_feature_set(&sd_machine_b, seed, SD_STREAM_B_SHOTS, d->n_b, d->b_x, d->b_y);
    sd_feature_set(&sd_machine_b, seed, SD_STREAM_B_TEST, d->n_bt, d->b_tx, d->b_ty);
    return 0;
}

/* step 2: pre-training on machine A; w gets the weights */
static inline int sft_pretrain(const sf_settings *s, const sft_data *d, int quiet, sf_weights *w, sft_figs *f)
{
    static ipup_model_desc model;
    sr_emu r;
    sf_rows rows = {d->a_x, d->a_y, d->n_a, SF_IN};
    char msg[256];
    int rc = 1;
    if (sf_model(&model, SF_PRETRAIN_TEXT, msg, sizeof msg) != IPUP_OK) return so_err("pre-training model: %s", msg) != 0;
    memset(&r, 0, sizeof r);
    sf_config(&r.cfg, &model, s, &rows);
    if (sr_start(&r, "pre-training") || sr_train(&r, s->steps, "pre-training (machine A)", quiet, &f->pre)) goto out;
    if (sf_correct(r.e, d->n_at, d->a_tx, d->a_ty, &f->acc_a) != IPUP_OK ||
        sf_correct(r.e, d->n_bt, d->b_tx, d->b_ty, &f->acc_b_pre) != IPUP_OK || sf_weights_get(r.e, w->v) != IPUP_OK) {
        so_err("pre-training: %s", ipup_last_error(r.e));
        goto out;
    }
    rc = 0;
out:
    sr_stop(&r);
    return rc;
}

/* the gradient and optimizer bytes of the fine-tuning pipeline without ":frozen" (a plan
   on the free emulator) */
static inline int sft_plan_unfrozen(const sf_settings *s, sft_figs *f)
{
    static ipup_model_desc model;
    static ipup_plan plan;
    ipup_config cfg;
    char msg[256];
    if (sf_model(&model, SF_PRETRAIN_TEXT, msg, sizeof msg) != IPUP_OK) return so_err("model: %s", msg) != 0;
    sf_config(&cfg, &model, s, NULL);
    memset(&sr_emu_store, 0, sizeof sr_emu_store);
    if (ipup_plan_config(&sr_emu_store, &cfg, &plan) != IPUP_OK)
        return so_err("plan of the unfrozen model: %s", ipup_last_error(&sr_emu_store)) != 0;
    f->grads_full = sr_plan_mem(&plan, IPUP_MEM_GRADS);
    f->opt_full = sr_plan_mem(&plan, IPUP_MEM_OPTIMIZER);
    return 0;
}

/* step 3: the head trained on machine B's few windows, the body frozen */
static inline int sft_finetune(const sf_settings *s, const sft_data *d, int quiet, const sf_weights *w, sft_figs *f)
{
    static ipup_model_desc model;
    sr_emu r;
    sf_rows rows = {d->b_x, d->b_y, d->n_b, SF_IN};
    char msg[256];
    int rc = 1;
    if (sft_plan_unfrozen(s, f)) return 1;
    if (sf_model(&model, SF_FINETUNE_TEXT, msg, sizeof msg) != IPUP_OK) return so_err("fine-tuning model: %s", msg) != 0;
    memset(&r, 0, sizeof r);
    sf_config(&r.cfg, &model, s, &rows);
    if (sr_start(&r, "fine-tuning")) goto out;
    if (sf_weights_put(r.e, w->v) != IPUP_OK || sf_correct(r.e, d->n_bt, d->b_tx, d->b_ty, &f->acc_b_before) != IPUP_OK) {
        so_err("fine-tuning: %s", ipup_last_error(r.e));
        goto out;
    }
    f->body_before = sf_hash(r.e, 0, SF_BODY_TENSORS);
    f->grads_frozen = sf_mem(r.e, r.plan.devices, IPUP_MEM_GRADS);
    f->opt_frozen = sf_mem(r.e, r.plan.devices, IPUP_MEM_OPTIMIZER);
    if (sr_train(&r, s->steps, "fine-tuning (machine B, body frozen)", quiet, &f->ft)) goto out;
    if (sf_correct(r.e, d->n_bt, d->b_tx, d->b_ty, &f->acc_b_after) != IPUP_OK) {
        so_err("fine-tuning: %s", ipup_last_error(r.e));
        goto out;
    }
    f->body_after = sf_hash(r.e, 0, SF_BODY_TENSORS);
    f->head_after = sf_hash(r.e, SF_BODY_TENSORS, SF_TENSORS);
    f->all_after = sf_hash(r.e, 0, SF_TENSORS);
    rc = 0;
out:
    sr_stop(&r);
    return rc;
}

/* the settings of the two runs from the options (the defaults are sensor_classifier.h's) */
static inline void sft_settings(const so_opts *o, sf_settings *pre, sf_settings *ft)
{
    *pre = sf_pretrain_defaults();
    *ft = sf_finetune_defaults();
    pre->schedule = ft->schedule = o->schedule;
    pre->runner = ft->runner = o->runner;
    pre->seed = ft->seed = o->seed;
    if (o->batch) pre->batch = ft->batch = o->batch;
    if (o->accumulate) pre->accumulate = ft->accumulate = o->accumulate;
    if (o->steps) pre->steps = o->steps;
    if (o->finetune_steps) ft->steps = o->finetune_steps;
    if (o->lr_given) pre->opt.lr = o->lr;
}

static inline double sft_pct(int64_t c, int32_t n) { return n ? 100.0 * (double)c / (double)n : 0.0; }

static inline void sft_report(const sft_data *d, const sft_figs *f, const sf_settings *pre, const sf_settings *ft)
{
    printf("pre-training on machine A: %d steps, loss %.4f -> %.4f (mean of the first and last 5 steps)\n",
           (int)pre->steps, f->pre.first, f->pre.last);
    printf("machine A held-out accuracy: %lld/%d = %.2f%%\n", (long long)f->acc_a, (int)d->n_at, sft_pct(f->acc_a, d->n_at));
    printf("machine B held-out accuracy before fine-tuning: %lld/%d = %.2f%%\n", (long long)f->acc_b_before,
           (int)d->n_bt, sft_pct(f->acc_b_before, d->n_bt));
    printf("fine-tuning on %d machine B windows: %d steps, loss %.4f -> %.4f\n", (int)d->n_b, (int)ft->steps,
           f->ft.first, f->ft.last);
    printf("machine B held-out accuracy after fine-tuning: %lld/%d = %.2f%%\n", (long long)f->acc_b_after,
           (int)d->n_bt, sft_pct(f->acc_b_after, d->n_bt));
    printf("memory: gradient accumulators %zu bytes, optimizer state %zu bytes with the body frozen; "
           "%zu and %zu without \":frozen\"\n", f->grads_frozen, f->opt_frozen, f->grads_full, f->opt_full);
    sr_print_hash("frozen body before fine-tuning", f->body_before);
    sr_print_hash("frozen body after fine-tuning ", f->body_after);
    printf("frozen body: %s\n", f->body_before == f->body_after ? "bit-identical" : "CHANGED");
    sr_print_hash("head after fine-tuning", f->head_after);
    sr_print_hash("final weights", f->all_after);
}

/* the whole run; the process's exit code */
static inline int sft_main(const so_opts *o)
{
    static sf_weights w;
    static sft_figs f;
    sf_settings pre, ft;
    sft_data d;
    int rc = 1;
    sft_settings(o, &pre, &ft);
    printf("sensor-demo finetune: pre-train \"%s\" on machine A, fine-tune \"%s\" on machine B\n",
           SF_PRETRAIN_TEXT, SF_FINETUNE_TEXT);
    printf("pipeline: 2 emulated IPUs (body on IPU0, head on IPU1), %s schedule, %s runner, seed %llu\n",
           ipup_sched_kind_name(o->schedule), o->runner == IPUP_RUNNER_THREADS ? "threads" : "coop",
           (unsigned long long)o->seed);
    if (sft_data_make(&d, o->train, o->seed) == 0 && sft_pretrain(&pre, &d, o->quiet, &w, &f) == 0 &&
        sft_finetune(&ft, &d, o->quiet, &w, &f) == 0) {
        sft_report(&d, &f, &pre, &ft);
        rc = 0;
    }
    sft_data_free(&d);
    return rc;
}

#endif
