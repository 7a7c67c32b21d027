/* mnist_models.h - the three MNIST models of the ipupipe trainer as models of
 * ipupipe.h (ipup_model_desc, built by ipup_model_parse from text), their default
 * recipes, and a plain single-device reference training loop over
 * ipupipe_kernels.h. MIT licence.
 *
 * Models (one per seed tutorial), input 28x28x1 images, 10 classes:
 *
 *   mlp       TensorFlow 1 pipelining tutorial: flatten -> dense256 -> dense128 ->
 *             dense64 -> dense32 (each with ReLU) -> logits -> softmax cross-entropy.
 *             Layer ids: flatten dense256 dense128 dense64 dense32 logits cel.
 *   cnn       Keras MNIST convnet example: conv32 (3x3, ReLU) -> pool1 (2x2) ->
 *             conv64 (3x3, ReLU) -> pool2 -> flatten -> dropout (0.5) -> logits ->
 *             cel. Default split before pool2, as in the tutorial.
 *   mlp-gelu  PopXL pipelining tutorial: flatten -> fc1, fc2, fc3 (512, GELU) -> fc4
 *             (10) -> loss. Stage 0 = flatten fc1 fc2, stage 1 = fc3 fc4 loss.
 *
 * The layers are the library's (ipup_layer_kind): an activation is a layer of its
 * own, named "<id>.relu" / "<id>.gelu" after the layer before it. The tutorials name
 * a dense or conv layer together with its activation ("dense256" is dense + ReLU);
 * mnist_model_layers groups the desc's layers that way (the trainer's --splits and
 * listing use those names). Shapes, parameter counts and FLOPs are ipup_model_info's.
 * Parameters: dense w (IN, OUT) and b (OUT); conv w (3, 3, CI, CO) and b (CO).
 *
 * The reference loop (mnist_ref_*) runs each micro-batch through all layers, adds
 * the gradients into one accumulator in micro-batch order and applies one update
 * per step: the loop the emulator of ipupipe.h is bit-identical to. Its tests use
 * it as an independent check of the emulator's pipelining. Weights are initialised
 * Glorot-uniform keyed by (seed, 2 * layer) as the emulator does, biases zero.
 * No heap: the caller provides one float arena of mnist_ref_floats() floats.
 *
 * Needs ipupipe.h (declarations; one translation unit defines IPUPIPE_IMPLEMENTATION).
 */
#ifndef MNIST_MODELS_H
#define MNIST_MODELS_H

#include <stdint.h>
#include <string.h>

#include "ipupipe.h"
#include "ex_stages.h"   /* examples/common: ex_find_layer */
#include "mnist_texts.h" /* examples/common: the models' names, texts, ids and default splits */

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_IMG 28
#define MNIST_CLASSES 10

/* A model and its default recipe. */
typedef struct {
    const char *name;
    const char *tutorial;
    const char *layers; /* ipup_model_parse text */
    const char *ids;    /* space-separated ids of the layers that are not activations */
    const char *splits; /* default --splits (space-separated first layers of stages 1..) */
    const char *schedule;
    int batch, accumulate, repeat, epochs;
    ipup_optimizer_kind optimizer;
    float lr, momentum, lr_decay; /* lr of epoch e = lr * lr_decay^e */
    float beta1, beta2, eps;
    int augment; /* random shift of each training image by up to this many pixels */
    int in_h, in_w, in_c; /* the input shape (28x28x1: the MNIST files) */
    int classes;          /* softmax classes; 0: an autoencoder (MSE against its input) */
} mnist_model_spec;

/* Default recipes (tuned with the reference loop; see docs/tutorials.md, "The TF1
 * tutorial's four steps on MNIST"); the texts and the parts that size the pools are
 * examples/common/mnist_texts.h's. */
static const mnist_model_spec mnist_models[] = {
    {MNT_MLP_NAME, "TensorFlow 1 pipelining tutorial", MNT_MLP_LAYERS, MNT_MLP_IDS, MNT_MLP_SPLITS,
     MNT_MLP_SCHEDULE, MNT_MLP_BATCH, MNT_MLP_MICROBATCHES, MNT_MLP_REPEAT, 15, MNT_MLP_OPTIMIZER,
     0.1f, 0.9f, 0.9f, 0.9f, 0.999f, 1e-8f, 1, MNIST_IMG, MNIST_IMG, 1, MNIST_CLASSES},
    {MNT_CNN_NAME, "Keras MNIST convnet example", MNT_CNN_LAYERS, MNT_CNN_IDS, MNT_CNN_SPLITS,
     MNT_CNN_SCHEDULE, MNT_CNN_BATCH, MNT_CNN_MICROBATCHES, MNT_CNN_REPEAT, 8, MNT_CNN_OPTIMIZER,
     0.1f, 0.9f, 0.85f, 0.9f, 0.999f, 1e-8f, 1, MNIST_IMG, MNIST_IMG, 1, MNIST_CLASSES},
    {MNT_MLP_GELU_NAME, "PopXL pipelining tutorial", MNT_MLP_GELU_LAYERS, MNT_MLP_GELU_IDS,
     MNT_MLP_GELU_SPLITS, MNT_MLP_GELU_SCHEDULE, MNT_MLP_GELU_BATCH, MNT_MLP_GELU_MICROBATCHES,
     MNT_MLP_GELU_REPEAT, 1, MNT_MLP_GELU_OPTIMIZER, 0.001f, 0.9f, 1.0f, 0.9f, 0.999f, 1e-5f, 0,
     MNIST_IMG, MNIST_IMG, 1, MNIST_CLASSES},
    /* the MLPerf Tiny networks (docs/models.md); all but resnet8-fashion take --data synthetic */
    {MNT_DS_CNN_NAME, "MLPerf Tiny keyword spotting", MNT_DS_CNN_LAYERS, "", MNT_DS_CNN_SPLITS,
     MNT_DS_CNN_SCHEDULE, MNT_DS_CNN_BATCH, MNT_DS_CNN_MICROBATCHES, MNT_DS_CNN_REPEAT, 5,
     MNT_DS_CNN_OPTIMIZER, 0.001f, 0.9f, 1.0f, 0.9f, 0.999f, 1e-7f, 0, MNT_DS_CNN_IN_H,
     MNT_DS_CNN_IN_W, MNT_DS_CNN_IN_C, MNT_DS_CNN_CLASSES},
    {MNT_MOBILENET_NAME, "MLPerf Tiny visual wake words", MNT_MOBILENET_LAYERS, "",
     MNT_MOBILENET_SPLITS, MNT_MOBILENET_SCHEDULE, MNT_MOBILENET_BATCH, MNT_MOBILENET_MICROBATCHES,
     MNT_MOBILENET_REPEAT, 2, MNT_MOBILENET_OPTIMIZER, 0.001f, 0.9f, 1.0f, 0.9f, 0.999f, 1e-7f, 0,
     MNT_MOBILENET_IN_H, MNT_MOBILENET_IN_W, MNT_MOBILENET_IN_C, MNT_MOBILENET_CLASSES},
    {MNT_RESNET8_NAME, "MLPerf Tiny image classification", MNT_RESNET8_LAYERS, "",
     MNT_RESNET8_SPLITS, MNT_RESNET8_SCHEDULE, MNT_RESNET8_BATCH, MNT_RESNET8_MICROBATCHES,
     MNT_RESNET8_REPEAT, 3, MNT_RESNET8_OPTIMIZER, 0.001f, 0.9f, 1.0f, 0.9f, 0.999f, 1e-7f, 0,
     MNT_RESNET8_IN_H, MNT_RESNET8_IN_W, MNT_RESNET8_IN_C, MNT_RESNET8_CLASSES},
    {MNT_RESNET8_FASHION_NAME, "MLPerf Tiny's ResNet-8 on 28x28x1 (Fashion-MNIST)",
     MNT_RESNET8_FASHION_LAYERS, "", MNT_RESNET8_SPLITS, MNT_RESNET8_SCHEDULE, MNT_RESNET8_BATCH,
     MNT_RESNET8_MICROBATCHES, MNT_RESNET8_REPEAT, 9, MNT_RESNET8_OPTIMIZER, 0.001f, 0.9f, 0.85f,
     0.9f, 0.999f, 1e-7f, 1, MNIST_IMG, MNIST_IMG, 1, MNIST_CLASSES},
    {MNT_FC_AE_NAME, "MLPerf Tiny anomaly detection", MNT_FC_AE_LAYERS, "", MNT_FC_AE_SPLITS,
     MNT_FC_AE_SCHEDULE, MNT_FC_AE_BATCH, MNT_FC_AE_MICROBATCHES, MNT_FC_AE_REPEAT, 10,
     MNT_FC_AE_OPTIMIZER, 0.001f, 0.9f, 1.0f, 0.9f, 0.999f, 1e-7f, 0, MNT_FC_AE_IN_H,
     MNT_FC_AE_IN_W, MNT_FC_AE_IN_C, MNT_FC_AE_CLASSES},
};
#define MNIST_N_MODELS 8

static inline const mnist_model_spec *mnist_model_find(const char *name) {
    int i;
    for (i = 0; i < MNIST_N_MODELS; i++)
        if (strcmp(mnist_models[i].name, name) == 0) return &mnist_models[i];
    return NULL;
}

static inline int mnist_is_activation(ipup_layer_kind k) { return mnt_is_activation(k); }

/* The emulator model of m: its layers parsed by ipup_model_parse, its input shape
 * (28x28x1 for the MNIST models), and the ids of m->ids (an activation gets "<previous id>.relu"/".gelu",
 * the previous id cut to 15 characters). IPUP_OK or the library's code and msg. */
static inline int mnist_model_desc(const mnist_model_spec *m, ipup_model_desc *d, char *msg, size_t msg_len) {
    int rc;
    memset(d, 0, sizeof *d);
    if ((rc = ipup_model_parse(m->layers, d, msg, msg_len)) != IPUP_OK) return rc;
    d->in_h = m->in_h;
    d->in_w = m->in_w;
    d->in_c = m->in_c;
    mnt_layer_ids(d, m->ids);
    return IPUP_OK;
}

/* The tutorial's layers of d: each layer that is not an activation, with the
 * activations that follow it. first[i] = d's index of layer i's first layer,
 * first[n] = d->n_layers (first has room for d->n_layers + 1). Returns n. */
static inline int mnist_model_layers(const ipup_model_desc *d, int32_t *first) {
    int32_t l, n = 0;
    for (l = 0; l < d->n_layers; l++)
        if (l == 0 || !mnist_is_activation(d->layers[l].kind)) first[n++] = l;
    first[n] = d->n_layers;
    return (int)n;
}

/* d's index of the layer named id, or -1. */
static inline int mnist_model_find_layer(const ipup_model_desc *d, const char *id) { return ex_find_layer(d, id); }

/* Total parameter count of d (ipup_model_info), or -1 when d is not a valid model. */
static inline long long mnist_model_params(const ipup_model_desc *d) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    long long n = 0;
    int l;
    if (ipup_model_info(d, info, IPUP_MAX_LAYERS, NULL, 0) != IPUP_OK) return -1;
    for (l = 0; l < d->n_layers; l++) n += (long long)info[l].n_w + info[l].n_b;
    return n;
}

/* ---------------------------------------------------------------- reference loop */

typedef struct {
    const ipup_model_desc *d;
    ipup_layer_info info[IPUP_MAX_LAYERS];
    long long w_off[IPUP_MAX_LAYERS], b_off[IPUP_MAX_LAYERS]; /* into the flat parameter array */
    int B, L;
    long long np;
    float *params, *grads, *s1, *s2; /* (np) each; s1/s2 optimizer state */
    float *act[IPUP_MAX_LAYERS + 1]; /* act[l] = input of layer l, (B, in_n) */
    float *d0, *d1, *scratch;        /* gradient ping-pong (B, max size), conv scratch */
    uint64_t seed, step;             /* step = updates done */
    int t_adam;
} mnist_ref;

/* Floats of conv scratch for layer info I at micro-batch B. */
static inline long long mnist_ref_conv_scratch_(const ipup_layer_info *I, int B) {
    long long f = IPUP_CONV3X3_FWD_SCRATCH(B, I->in_h, I->in_w, I->in_c, I->out_c);
    long long b = IPUP_CONV3X3_BWD_SCRATCH(B, I->in_h, I->in_w, I->in_c, I->out_c);
    (void)B; /* the scratch macros may ignore some of their arguments */
    return f > b ? f : b;
}

/* Floats the caller's arena needs for model d at micro-batch B (0: d is invalid). */
static inline long long mnist_ref_floats(const ipup_model_desc *d, int B) {
    ipup_layer_info info[IPUP_MAX_LAYERS];
    long long np = 0, a = 0, mx = 0, scratch = 0;
    int l;
    if (ipup_model_info(d, info, IPUP_MAX_LAYERS, NULL, 0) != IPUP_OK) return 0;
    for (l = 0; l < d->n_layers; l++) {
        np += (long long)info[l].n_w + info[l].n_b;
        a += (long long)B * info[l].in_n;
        if (info[l].in_n > mx) mx = info[l].in_n;
        if (info[l].out_n > mx) mx = info[l].out_n;
        if (info[l].kind == IPUP_LAYER_CONV3X3 && mnist_ref_conv_scratch_(&info[l], B) > scratch)
            scratch = mnist_ref_conv_scratch_(&info[l], B);
    }
    a += (long long)B * info[d->n_layers - 1].out_n;
    return 4 * np + a + 2 * (long long)B * mx + scratch + 64;
}

/* Sets r up in arena (mnist_ref_floats(d, B) floats) and initialises the weights.
 * IPUP_OK, or the code of ipup_model_info. */
static inline int mnist_ref_init(mnist_ref *r, const ipup_model_desc *d, int B, uint64_t seed, float *arena) {
    long long mx = 0, off = 0;
    int l, rc;
    memset(r, 0, sizeof *r);
    if ((rc = ipup_model_info(d, r->info, IPUP_MAX_LAYERS, NULL, 0)) != IPUP_OK) return rc;
    r->d = d;
    r->B = B;
    r->L = d->n_layers;
    r->seed = seed;
    for (l = 0; l < r->L; l++) {
        r->w_off[l] = off;
        off += r->info[l].n_w;
        r->b_off[l] = off;
        off += r->info[l].n_b;
    }
    r->np = off;
    r->params = arena;
    r->grads = arena + r->np;
    r->s1 = arena + 2 * r->np;
    r->s2 = arena + 3 * r->np;
    arena += 4 * r->np;
    for (l = 0; l <= r->L; l++) {
        int sz = l < r->L ? r->info[l].in_n : r->info[r->L - 1].out_n;
        r->act[l] = arena;
        arena += (long long)B * sz;
        if (sz > mx) mx = sz;
    }
    r->d0 = arena;
    r->d1 = arena + B * mx;
    r->scratch = arena + 2 * B * mx;
    memset(r->params, 0, (size_t)(4 * r->np) * sizeof(float));
    for (l = 0; l < r->L; l++) {
        const ipup_layer_info *I = &r->info[l];
        int conv = I->kind == IPUP_LAYER_CONV3X3;
        if (I->n_w)
            ipup_glorot_uniform_f32(conv ? 9 * I->in_c : I->in_n, conv ? 9 * I->out_c : I->out_n, I->n_w, seed,
                                    (uint64_t)(2 * l), r->params + r->w_off[l]);
    }
    return IPUP_OK;
}

/* Forward of one micro-batch x (B, 784); labels (B) or NULL. train = 1 applies
 * dropout keyed by (seed, step, sample_base*size + i). Returns the mean loss (0 when
 * labels is NULL); *correct gets the number of right arg-maxes; act[L-1] holds the
 * logits (the input of the loss layer). */
static inline float mnist_ref_forward(mnist_ref *r, const float *x, const int32_t *labels, int train,
                                      uint64_t sample_base, int *correct) {
    int l, B = r->B;
    float loss = 0.0f;
    memcpy(r->act[0], x, (size_t)B * (size_t)r->info[0].in_n * sizeof(float));
    for (l = 0; l < r->L; l++) {
        const ipup_layer_info *I = &r->info[l];
        const float *in = r->act[l], *w = r->params + r->w_off[l], *b = r->params + r->b_off[l];
        float *out = r->act[l + 1];
        int n = B * I->out_n;
        switch (I->kind) {
        case IPUP_LAYER_DENSE: ipup_dense_fwd_f32(B, I->in_n, I->out_n, in, w, b, out); break;
        case IPUP_LAYER_CONV3X3: ipup_conv3x3_fwd_f32(B, I->in_h, I->in_w, I->in_c, I->out_c, in, w, b, out, r->scratch); break;
        case IPUP_LAYER_MAXPOOL2: ipup_maxpool2_fwd_f32(B, I->in_h, I->in_w, I->in_c, in, out); break;
        case IPUP_LAYER_RELU: ipup_relu_fwd_f32(n, in, out); break;
        case IPUP_LAYER_GELU: ipup_gelu_fwd_f32(n, in, out); break;
        case IPUP_LAYER_DROPOUT:
            if (train)
                ipup_dropout_fwd_f32(n, r->d->layers[l].rate, r->seed, r->step, sample_base * (uint64_t)I->in_n, in, out);
            else
                memcpy(out, in, (size_t)n * sizeof(float));
            break;
        case IPUP_LAYER_SOFTMAX_XENT:
            if (labels) loss = ipup_softmax_xent_f32(B, I->in_n, in, labels, NULL, correct);
            break;
        default: memcpy(out, in, (size_t)n * sizeof(float)); break; /* flatten: a view */
        }
    }
    return loss;
}

/* Forward + backward of one micro-batch, gradients ADDED into r->grads. */
static inline float mnist_ref_train_micro(mnist_ref *r, const float *x, const int32_t *labels,
                                          uint64_t sample_base, int *correct) {
    int l, B = r->B, L = r->L;
    float *dy = r->d0, *dx = r->d1, *t;
    float loss = mnist_ref_forward(r, x, labels, 1, sample_base, correct);
    ipup_softmax_xent_f32(B, r->info[L - 1].in_n, r->act[L - 1], labels, dy, NULL); /* dlogits */
    for (l = L - 2; l >= 0; l--) {
        const ipup_layer_info *I = &r->info[l];
        const float *in = r->act[l], *w = r->params + r->w_off[l];
        float *gw = r->grads + r->w_off[l], *gb = r->grads + r->b_off[l];
        int n = B * I->in_n;
        switch (I->kind) {
        case IPUP_LAYER_DENSE: ipup_dense_bwd_f32(B, I->in_n, I->out_n, in, w, dy, l > 0 ? dx : NULL, gw, gb); break;
        case IPUP_LAYER_CONV3X3:
            ipup_conv3x3_bwd_f32(B, I->in_h, I->in_w, I->in_c, I->out_c, in, w, dy, l > 0 ? dx : NULL, gw, gb, r->scratch);
            break;
        case IPUP_LAYER_MAXPOOL2: ipup_maxpool2_bwd_f32(B, I->in_h, I->in_w, I->in_c, in, dy, dx); break;
        case IPUP_LAYER_RELU: ipup_relu_bwd_f32(n, in, dy, dx); break;
        case IPUP_LAYER_GELU: ipup_gelu_bwd_f32(n, in, dy, dx); break;
        case IPUP_LAYER_DROPOUT:
            ipup_dropout_bwd_f32(n, r->d->layers[l].rate, r->seed, r->step, sample_base * (uint64_t)I->in_n, dy, dx);
            break;
        default: continue; /* flatten: a view, dy is already dx */
        }
        t = dy;
        dy = dx;
        dx = t;
    }
    return loss;
}

/* One optimizer update with the accumulated gradient of `micro` micro-batches;
 * zeroes the accumulator. */
static inline void mnist_ref_update(mnist_ref *r, ipup_optimizer_kind optimizer, float lr, float mu, float b1, float b2,
                                    float eps, int micro) {
    float scale = 1.0f / (float)micro;
    int n = (int)r->np;
    if (optimizer == IPUP_OPT_SGD) ipup_sgd_f32(n, lr, scale, r->params, r->grads);
    else if (optimizer == IPUP_OPT_MOMENTUM) ipup_momentum_f32(n, lr, mu, scale, r->params, r->s1, r->grads);
    else ipup_adam_f32(n, lr, b1, b2, eps, ++r->t_adam, scale, r->params, r->s1, r->s2, r->grads);
    ipup_zeros_f32(n, r->grads);
    r->step++;
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_MODELS_H */
