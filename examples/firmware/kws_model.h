/* kws_model.h - the keyword-spotting fine-tuning of the firmware (kws.c) and of its host
   generator (gen_kws.c), in one place: DS-CNN as model text, the pipeline of the
   fine-tuning, the infeed over samples in memory, the weights moved in by tensor name and
   the hash of the weights. MIT licence.

   DS-CNN is MLPerf Tiny's keyword-spotting reference network (mlcommons/tiny,
   benchmark/training/keyword_spotting/keras_model.py, model_name 'ds_cnn'): 49x10x1 MFCC
   input; conv 64 10x4 stride 2 'same', batch norm, ReLU; four blocks of depthwise 3x3
   'same' + batch norm + ReLU + conv 64 1x1 + batch norm + ReLU; average pooling 24x5
   (the Keras code's int(49/2) x int(10/2)) to 1x1; flatten; dense 12 (softmax).
   KWS_PRETRAIN_TEXT is that network with its two dropouts (0.2 after the first block of
   layers, 0.4 before the pooling), every layer training; KWS_FINETUNE_TEXT is the same
   network for fine-tuning the classifier: every conv, dw and bn ":frozen" (a frozen bn
   runs in inference mode, from its running mean and variance), the dropouts left out (the
   frozen body computes what it computes at inference), only dense12 trains. The layer ids
   are the parser's, the same in both texts (the dropouts carry none of the others'), so
   the tensors "conv64k10x4s2same.w", "bn.w", ... have the same names in both.

   The pipeline: 2 emulated IPUs, the body (layers up to flatten) on IPU0, the head
   (dense12, xent) on IPU1, the cooperative runner, 1F1B, micro-batches of KWS_BATCH
   samples, KWS_ACCUM of them per step, momentum SGD. With the body frozen nothing below
   dense12 keeps a stash entry or runs a backward.

   No stdio, no libm, no heap: include it after ipupipe.h (IPUP_MAX_LAYERS >= 31). */
#ifndef KWS_MODEL_H
#define KWS_MODEL_H

#include <stdint.h>

#include "ipupipe.h"

#define KWS_H 49
#define KWS_W 10
#define KWS_IN (KWS_H * KWS_W) /* one channel */
#define KWS_CLASSES 12
#define KWS_BLOCK(F) "dw3s1same" F ",bn" F ",relu,conv64k1s1same" F ",bn" F ",relu,"
#define KWS_PRETRAIN_TEXT                                                                          \
    "conv64k10x4s2same,bn,relu,dropout0.2," KWS_BLOCK("") KWS_BLOCK("") KWS_BLOCK("")              \
        KWS_BLOCK("") "dropout0.4,avgpool24x5,flatten,dense12,xent"
#define KWS_FINETUNE_TEXT                                                                          \
    "conv64k10x4s2same:frozen,bn:frozen,relu," KWS_BLOCK(":frozen") KWS_BLOCK(":frozen")           \
        KWS_BLOCK(":frozen") KWS_BLOCK(":frozen") "avgpool24x5,flatten,dense12,xent"
#define KWS_HEAD_ID "dense12" /* the first layer of stage 1 */

/* the fine-tuning's settings (the device's and the host's run) */
#ifndef KWS_BATCH
#define KWS_BATCH 1 /* samples per micro-batch: see the RAM figures in docs/embedded.md */
#endif
#ifndef KWS_ACCUM
#define KWS_ACCUM 8 /* micro-batches per step */
#endif
#ifndef KWS_STEPS
#define KWS_STEPS 6 /* optimizer steps */
#endif
#ifndef KWS_LR
#define KWS_LR 0.05f
#endif
#define KWS_MOMENTUM 0.9f
#define KWS_SEED 1u

/* the model of `text` over 49x10x1 inputs (its layer ids are the parser's) */
static inline int kws_model(ipup_model_desc *m, const char *text, char *msg, size_t msg_len)
{
    IPUPIPE_MEMSET(m, 0, sizeof *m);
    m->in_h = KWS_H;
    m->in_w = KWS_W;
    m->in_c = 1;
    return ipup_model_parse(text, m, msg, msg_len);
}

/* the index of the layer with id `id` in m, -1 if none */
static inline int32_t kws_layer(const ipup_model_desc *m, const char *id)
{
    int32_t l;
    size_t k;
    for (l = 0; l < m->n_layers; l++) {
        for (k = 0; id[k] && m->layers[l].id[k] == id[k]; k++) {}
        if (!id[k] && !m->layers[l].id[k]) return l;
    }
    return -1;
}

/* the samples the infeed hands out: sample j of the run is row j % n */
typedef struct kws_rows {
    const float *x;   /* n rows of KWS_IN floats */
    const int32_t *y; /* n labels */
    int32_t n;
} kws_rows;

/* ipup_infeed_fn over a kws_rows */
static inline int kws_infeed(void *user, const ipup_feed *f)
{
    const kws_rows *d = (const kws_rows *)user;
    int32_t i;
    if (!d || d->n <= 0 || f->row != KWS_IN || !f->labels) return -1;
    for (i = 0; i < f->n; i++) {
        int64_t j = (f->sample0 + i) % d->n;
        IPUPIPE_MEMCPY(f->x + (size_t)i * KWS_IN, d->x + (size_t)j * KWS_IN,
                       KWS_IN * sizeof(float));
        f->labels[i] = d->y[j];
    }
    return 0;
}

/* the fine-tuning's configuration of the fine-tuning model m, pools excepted
   (split: the caller's storage for the one split point) */
static inline int kws_config(ipup_config *cfg, const ipup_model_desc *m, int32_t *split,
                             kws_rows *rows)
{
    IPUPIPE_MEMSET(cfg, 0, sizeof *cfg);
    if ((*split = kws_layer(m, KWS_HEAD_ID)) < 0) return IPUP_ERR_CONFIG;
    cfg->model = m;
    cfg->stages = 2;
    cfg->split = split;
    cfg->schedule = IPUP_SCHED_1F1B;
    cfg->microbatch = KWS_BATCH;
    cfg->microbatches = KWS_ACCUM;
    cfg->repeat = 1;
    cfg->opt.kind = IPUP_OPT_MOMENTUM;
    cfg->opt.lr = KWS_LR;
    cfg->opt.momentum = KWS_MOMENTUM;
    cfg->seed = KWS_SEED;
    cfg->runner = IPUP_RUNNER_COOP;
    cfg->infeed = kws_infeed;
    cfg->infeed_user = rows;
    return IPUP_OK;
}

/* a tensor the weights table carries: parameters and batch-norm statistics, not the
   optimizer's state */
static inline int kws_is_weight(const ipup_tensor_info *ti)
{
    return ti->kind != IPUP_TENSOR_OPT_STATE && ti->kind != IPUP_TENSOR_GRAD;
}

/* writes the n_t tensors of the weights table (names[i]: n[i] floats at v + off[i]) into e
   by name, then to every replica; every weight tensor of e must be in the table (nothing
   keeps its initial value) */
static inline int kws_weights_put(ipup_emu *e, int32_t n_t, const char *const *names,
                                  const int32_t *off, const int32_t *n, const float *v)
{
    int32_t i, found = 0;
    int rc;
    for (i = 0; i < n_t; i++) {
        ipup_tensor_info ti;
        if ((rc = ipup_tensor_find(e, names[i], &ti)) != IPUP_OK) return rc;
        if (ti.n != n[i]) {
            ipup_snprintf(e->core.msg, sizeof e->core.msg,
                          "tensor %s has %d elements, the weights table %d", names[i], (int)ti.n,
                          (int)n[i]);
            return IPUP_ERR_MISMATCH;
        }
        IPUPIPE_MEMCPY(ti.data, v + off[i], (size_t)ti.n * sizeof(float));
    }
    for (i = 0; i < ipup_tensor_count(e); i++) {
        ipup_tensor_info ti;
        if (ipup_tensor_get(e, i, &ti) == IPUP_OK && kws_is_weight(&ti)) found++;
    }
    if (found != n_t) {
        ipup_snprintf(e->core.msg, sizeof e->core.msg,
                      "the model has %d weight tensors, the weights table %d", (int)found,
                      (int)n_t);
        return IPUP_ERR_MISMATCH;
    }
    return ipup_replicas_sync(e);
}

/* FNV-1a, 64-bit (Fowler, Noll, Vo: offset basis 14695981039346656037, prime
   1099511628211) over the bytes of the weight tensors of stage `stage` (-1: every stage),
   in tensor order */
static inline uint64_t kws_hash(ipup_emu *e, int32_t stage)
{
    uint64_t h = UINT64_C(14695981039346656037);
    int32_t i;
    for (i = 0; i < ipup_tensor_count(e); i++) {
        ipup_tensor_info ti;
        const unsigned char *p;
        size_t k;
        if (ipup_tensor_get(e, i, &ti) != IPUP_OK || !kws_is_weight(&ti)) continue;
        if (stage >= 0 && ti.stage != stage) continue;
        p = (const unsigned char *)(const void *)ti.data;
        for (k = 0; k < (size_t)ti.n * sizeof(float); k++) {
            h ^= p[k];
            h *= UINT64_C(1099511628211);
        }
    }
    return h;
}

#endif
