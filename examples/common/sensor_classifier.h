/* sensor_classifier.h - the fine-tuning part of the sensor example that runs both on the host
 * (examples/sensor/sensor_run.h, the firmware's generator) and on the bare-metal firmware
 * (examples/firmware/finetune.c): the two models, their settings, the emulator
 * configuration, the infeed over feature rows in memory, moving weights in and out of
 * an emulator by tensor name, the accuracy and the weight hash. MIT licence.
 *
 * No stdio, no libm and no heap: include it after ipupipe.h (any IPUP_MAX_* sizes with
 * room for 6 layers and 2 IPUs). Errors come back as ipupipe result codes with the text
 * in ipup_last_error(e).
 *
 * The models (classifier of the machine state from SD_FEATURES spectral features):
 *   pre-training  "dense32,relu,dense16,relu,dense4,xent"                every layer trains
 *   fine-tuning   "dense32:frozen,relu,dense16:frozen,relu,dense4,xent"  only the head trains
 * Stage 0 (IPU0) holds the body (layers 0..3), stage 1 (IPU1) the head (dense4, xent).
 * The fine-tuning model takes the layer ids of the pre-training model, so the tensors
 * "dense32.w", ... have the same names in both. */
#ifndef SENSOR_CLASSIFIER_H
#define SENSOR_CLASSIFIER_H

#include <stdint.h>

#include "ipupipe.h"

#define SF_IN 32         /* features per sample (SD_FEATURES of sensor_data.h) */
#define SF_H1 32
#define SF_H2 16
#define SF_CLASSES 4
#define SF_LAYERS 6
#define SF_SPLIT 4       /* first layer of stage 1 (the head) */
#define SF_PRETRAIN_TEXT "dense32,relu,dense16,relu,dense4,xent"
#define SF_FINETUNE_TEXT "dense32:frozen,relu,dense16:frozen,relu,dense4,xent"
#define SF_TENSORS 6     /* dense32.w .b, dense16.w .b, dense4.w .b */
#define SF_BODY_TENSORS 4
#define SF_N_WEIGHTS (SF_IN * SF_H1 + SF_H1 + SF_H1 * SF_H2 + SF_H2 + SF_H2 * SF_CLASSES + SF_CLASSES)

/* data sizes and run settings shared by the host run and the firmware */
#define SF_PRE_TRAIN 2048  /* machine A windows for pre-training */
#define SF_PRE_TEST 512    /* machine A held-out windows */
#define SF_SHOTS 64        /* machine B windows for fine-tuning (16 per state) */
#define SF_B_TEST 256      /* machine B held-out windows */
#define SF_SEED 1u

typedef struct sf_settings {
    int32_t stages, batch, accumulate, steps;
    ipup_optimizer opt;
    ipup_sched_kind schedule;
    ipup_runner_kind runner;
    uint64_t seed;
} sf_settings;

/* the defaults: pre-training (Adam) and fine-tuning (momentum SGD, so that the head has
   optimizer state and the frozen body visibly has none) */
static inline sf_settings sf_pretrain_defaults(void)
{
    sf_settings s;
    IPUPIPE_MEMSET(&s, 0, sizeof s);
    s.stages = 2; s.batch = 16; s.accumulate = 4; s.steps = 320;
    s.opt.kind = IPUP_OPT_ADAM; s.opt.lr = 0.003f;
    s.schedule = IPUP_SCHED_1F1B; s.runner = IPUP_RUNNER_COOP; s.seed = SF_SEED;
    return s;
}
static inline sf_settings sf_finetune_defaults(void)
{
    sf_settings s = sf_pretrain_defaults();
    s.batch = 8; s.accumulate = 2; s.steps = 60;
    s.opt.kind = IPUP_OPT_MOMENTUM; s.opt.lr = 0.05f; s.opt.momentum = 0.9f;
    return s;
}

/* the tensor names in the order of sf_weights */
static inline const char *sf_tensor_name(int t)
{
    static const char *const n[SF_TENSORS] = {"dense32.w", "dense32.b", "dense16.w", "dense16.b", "dense4.w", "dense4.b"};
    return t >= 0 && t < SF_TENSORS ? n[t] : "";
}
static inline int32_t sf_tensor_size(int t)
{
    static const int32_t n[SF_TENSORS] = {SF_IN * SF_H1, SF_H1, SF_H1 * SF_H2, SF_H2, SF_H2 * SF_CLASSES, SF_CLASSES};
    return t >= 0 && t < SF_TENSORS ? n[t] : 0;
}

/* every weight of the classifier, tensor after tensor (sf_tensor_name order) */
typedef struct sf_weights { float v[SF_N_WEIGHTS]; } sf_weights;

/* the model of `text` (SF_PRETRAIN_TEXT or SF_FINETUNE_TEXT) over SF_IN features, with
   the pre-training model's layer ids */
static inline int sf_model(ipup_model_desc *m, const char *text, char *msg, size_t msg_len)
{
    ipup_model_desc ids;
    int rc, l;
    IPUPIPE_MEMSET(m, 0, sizeof *m);
    IPUPIPE_MEMSET(&ids, 0, sizeof ids);
    m->in_h = 1; m->in_w = 1; m->in_c = SF_IN;
    if ((rc = ipup_model_parse(text, m, msg, msg_len)) != IPUP_OK) return rc;
    if ((rc = ipup_model_parse(SF_PRETRAIN_TEXT, &ids, msg, msg_len)) != IPUP_OK) return rc;
    if (m->n_layers != ids.n_layers) {
        ipup_snprintf(msg, msg_len, "model \"%s\" has %d layers, the pre-training model %d", text, (int)m->n_layers,
                      (int)ids.n_layers);
        return IPUP_ERR_CONFIG;
    }
    for (l = 0; l < m->n_layers; l++) IPUPIPE_MEMCPY(m->layers[l].id, ids.layers[l].id, sizeof m->layers[l].id);
    return IPUP_OK;
}

/* the rows the infeed hands out: sample j of the run is row j % n */
typedef struct sf_rows {
    const float *x;     /* n rows of `row` floats */
    const int32_t *y;   /* n labels */
    int32_t n, row;
} sf_rows;

/* ipup_infeed_fn over an sf_rows (read-only: safe on several threads) */
static inline int sf_infeed(void *user, const ipup_feed *f)
{
    const sf_rows *d = (const sf_rows *)user;
    int32_t i;
    if (!d || d->n <= 0 || f->row != d->row || !f->labels) return -1;
    for (i = 0; i < f->n; i++) {
        int64_t j = (f->sample0 + i) % d->n;
        IPUPIPE_MEMCPY(f->x + (size_t)i * (size_t)d->row, d->x + (size_t)j * (size_t)d->row, (size_t)d->row * sizeof(float));
        f->labels[i] = d->y[j];
    }
    return 0;
}

/* everything but the pools: stages, the split (SF_SPLIT on 2 stages, else balanced) */
static inline void sf_config(ipup_config *cfg, const ipup_model_desc *m, const sf_settings *s, sf_rows *rows)
{
    static const int32_t split[1] = {SF_SPLIT};
    IPUPIPE_MEMSET(cfg, 0, sizeof *cfg);
    cfg->model = m;
    cfg->stages = s->stages;
    cfg->split = s->stages == 2 ? split : NULL;
    cfg->schedule = s->schedule;
    cfg->microbatch = s->batch;
    cfg->microbatches = s->accumulate;
    cfg->repeat = 1;
    cfg->opt = s->opt;
    cfg->seed = s->seed;
    cfg->runner = s->runner;
    cfg->infeed = sf_infeed;
    cfg->infeed_user = rows;
}

/* tensor t of e, checked against its expected size */
static inline int sf_tensor(ipup_emu *e, int t, ipup_tensor_info *ti)
{
    int rc = ipup_tensor_find(e, sf_tensor_name(t), ti);
    if (rc != IPUP_OK) return rc;
    if (ti->n != sf_tensor_size(t)) {
        ipup_snprintf(e->core.msg, sizeof e->core.msg, "tensor %s has %d elements, the sensor classifier's has %d",
                      sf_tensor_name(t), (int)ti->n, (int)sf_tensor_size(t));
        return IPUP_ERR_MISMATCH;
    }
    return IPUP_OK;
}

/* copies the weights out of e (replica 0) into v[SF_N_WEIGHTS] */
static inline int sf_weights_get(ipup_emu *e, float *v)
{
    size_t off = 0;
    int t, rc;
    for (t = 0; t < SF_TENSORS; t++) {
        ipup_tensor_info ti;
        if ((rc = sf_tensor(e, t, &ti)) != IPUP_OK) return rc;
        IPUPIPE_MEMCPY(v + off, ti.data, (size_t)ti.n * sizeof(float));
        off += (size_t)ti.n;
    }
    return IPUP_OK;
}

/* writes the weights v[SF_N_WEIGHTS] into e and copies them to every replica */
static inline int sf_weights_put(ipup_emu *e, const float *v)
{
    size_t off = 0;
    int t, rc;
    for (t = 0; t < SF_TENSORS; t++) {
        ipup_tensor_info ti;
        if ((rc = sf_tensor(e, t, &ti)) != IPUP_OK) return rc;
        IPUPIPE_MEMCPY(ti.data, v + off, (size_t)ti.n * sizeof(float));
        off += (size_t)ti.n;
    }
    return ipup_replicas_sync(e);
}

/* FNV-1a, 64-bit (Fowler, Noll, Vo: offset basis 14695981039346656037, prime
   1099511628211) over the bytes of n floats, continuing from h */
#define SF_FNV_BASIS UINT64_C(14695981039346656037)
static inline uint64_t sf_fnv1a(uint64_t h, const float *x, int32_t n)
{
    const unsigned char *p = (const unsigned char *)(const void *)x;
    size_t i, bytes = (size_t)n * sizeof(float);
    for (i = 0; i < bytes; i++) { h ^= p[i]; h *= UINT64_C(1099511628211); }
    return h;
}
/* the hash of tensors first..last-1 of e (0 when one is missing: the message says why) */
static inline uint64_t sf_hash(ipup_emu *e, int first, int last)
{
    uint64_t h = SF_FNV_BASIS;
    int t;
    for (t = first; t < last; t++) {
        ipup_tensor_info ti;
        if (sf_tensor(e, t, &ti) != IPUP_OK) return 0;
        h = sf_fnv1a(h, ti.data, ti.n);
    }
    return h;
}

/* correct arg-max predictions of e on n rows */
static inline int sf_correct(ipup_emu *e, int32_t n, const float *x, const int32_t *y, int64_t *correct)
{
    *correct = 0;
    return ipup_evaluate(e, n, x, y, NULL, correct);
}

/* bytes of one category summed over the IPUs of replica 0 */
static inline size_t sf_mem(const ipup_emu *e, int32_t devices, int cat)
{
    size_t sum = 0;
    int32_t d;
    for (d = 0; d < devices; d++) {
        ipup_mem_report r;
        if (ipup_memory_report(e, d, &r) == IPUP_OK) sum += r.by_category[cat];
    }
    return sum;
}

#endif
