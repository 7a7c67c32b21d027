/* mnist_models.h - the three MNIST models of the ipupipe trainer and a plain,
 * single-device reference training loop over ipupipe_kernels.h. MIT licence.
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
 * A dense layer owns its activation (the ids above name dense+ReLU as one layer,
 * as the TF1 tutorial does). Parameters: dense w (IN, OUT) and b (OUT); conv w
 * (3, 3, CI, CO) and b (CO); initialised Glorot-uniform keyed by (seed, 2*layer)
 * for w, zeros for b.
 *
 * The reference loop (mnist_ref_*) runs each micro-batch through all layers, adds
 * the gradients into one accumulator in micro-batch order and applies one update
 * per step: the loop the emulator of ipupipe.h is bit-identical to. The trainer
 * uses it to find recipes and its tests use it as an independent check.
 * No heap: the caller provides one float arena of mnist_ref_floats() floats.
 */
#ifndef MNIST_MODELS_H
#define MNIST_MODELS_H

#include <stdint.h>
#include <string.h>

#include "ipupipe_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MNIST_L_FLATTEN, MNIST_L_DENSE, MNIST_L_CONV3X3, MNIST_L_MAXPOOL2, MNIST_L_DROPOUT, MNIST_L_XENT };
enum { MNIST_ACT_NONE, MNIST_ACT_RELU, MNIST_ACT_GELU };
enum { MNIST_OPT_SGD, MNIST_OPT_MOMENTUM, MNIST_OPT_ADAM };

#define MNIST_MAX_LAYERS 16
#define MNIST_IMG 28
#define MNIST_CLASSES 10

typedef struct {
    const char *id;
    int kind;
    int out;   /* dense: units; conv: channels */
    int act;   /* MNIST_ACT_* */
    float p;   /* dropout rate */
} mnist_layer_spec;

/* A model and its default recipe. */
typedef struct {
    const char *name;
    const char *tutorial;
    const mnist_layer_spec *layers;
    int n_layers;
    const char *splits;  /* default --splits (space-separated first layers of stages 1..) */
    const char *mapping; /* default stage -> IPU mapping, NULL = stage s on IPU s */
    const char *schedule;
    int batch, accumulate, repeat, epochs;
    int optimizer;
    float lr, momentum, lr_decay; /* lr of epoch e = lr * lr_decay^e */
    float beta1, beta2, eps;
    int augment; /* random shift of each training image by up to this many pixels */
} mnist_model_spec;

static const mnist_layer_spec mnist_mlp_layers_[] = {
    {"flatten", MNIST_L_FLATTEN, 0, 0, 0.0f},         {"dense256", MNIST_L_DENSE, 256, MNIST_ACT_RELU, 0.0f},
    {"dense128", MNIST_L_DENSE, 128, MNIST_ACT_RELU, 0.0f}, {"dense64", MNIST_L_DENSE, 64, MNIST_ACT_RELU, 0.0f},
    {"dense32", MNIST_L_DENSE, 32, MNIST_ACT_RELU, 0.0f},   {"logits", MNIST_L_DENSE, 10, MNIST_ACT_NONE, 0.0f},
    {"cel", MNIST_L_XENT, 0, 0, 0.0f},
};
static const mnist_layer_spec mnist_cnn_layers_[] = {
    {"conv32", MNIST_L_CONV3X3, 32, MNIST_ACT_RELU, 0.0f}, {"pool1", MNIST_L_MAXPOOL2, 0, 0, 0.0f},
    {"conv64", MNIST_L_CONV3X3, 64, MNIST_ACT_RELU, 0.0f}, {"pool2", MNIST_L_MAXPOOL2, 0, 0, 0.0f},
    {"flatten", MNIST_L_FLATTEN, 0, 0, 0.0f},              {"dropout", MNIST_L_DROPOUT, 0, 0, 0.5f},
    {"logits", MNIST_L_DENSE, 10, MNIST_ACT_NONE, 0.0f},   {"cel", MNIST_L_XENT, 0, 0, 0.0f},
};
static const mnist_layer_spec mnist_gelu_layers_[] = {
    {"flatten", MNIST_L_FLATTEN, 0, 0, 0.0f},          {"fc1", MNIST_L_DENSE, 512, MNIST_ACT_GELU, 0.0f},
    {"fc2", MNIST_L_DENSE, 512, MNIST_ACT_GELU, 0.0f}, {"fc3", MNIST_L_DENSE, 512, MNIST_ACT_GELU, 0.0f},
    {"fc4", MNIST_L_DENSE, 10, MNIST_ACT_NONE, 0.0f},  {"loss", MNIST_L_XENT, 0, 0, 0.0f},
};

/* Default recipes (tuned with the reference loop; see README "Training MNIST"). */
static const mnist_model_spec mnist_models[] = {
    {"mlp", "TensorFlow 1 pipelining tutorial", mnist_mlp_layers_, 7, "dense32", NULL, "grouped", 32, 16, 10, 15,
     MNIST_OPT_MOMENTUM, 0.1f, 0.9f, 0.9f, 0.9f, 0.999f, 1e-8f, 1},
    {"cnn", "Keras MNIST convnet example", mnist_cnn_layers_, 8, "pool2", NULL, "grouped", 64, 4, 10, 8,
     MNIST_OPT_MOMENTUM, 0.1f, 0.9f, 0.85f, 0.9f, 0.999f, 1e-8f, 1},
    {"mlp-gelu", "PopXL pipelining tutorial", mnist_gelu_layers_, 6, "fc3", NULL, "grouped", 5, 6, 10, 1,
     MNIST_OPT_ADAM, 0.001f, 0.9f, 1.0f, 0.9f, 0.999f, 1e-8f, 0},
};
#define MNIST_N_MODELS 3

static inline const mnist_model_spec *mnist_model_find(const char *name) {
    int i;
    for (i = 0; i < MNIST_N_MODELS; i++)
        if (strcmp(mnist_models[i].name, name) == 0) return &mnist_models[i];
    return NULL;
}

/* Geometry of one layer for micro-batch B. */
typedef struct {
    int h, w, c;          /* input H, W, C (dense: 1, 1, IN) */
    int oh, ow, oc;       /* output */
    int in_size, out_size; /* per sample */
    int nw, nb;           /* parameter counts */
    long long w_off, b_off; /* offsets into the flat parameter array */
    double flops_fwd;     /* per sample */
} mnist_geom;

/* Fills g[0..n_layers-1]; returns the total parameter count. */
static inline long long mnist_model_geometry(const mnist_model_spec *m, mnist_geom *g) {
    int h = MNIST_IMG, w = MNIST_IMG, c = 1, i;
    long long off = 0;
    for (i = 0; i < m->n_layers; i++) {
        const mnist_layer_spec *L = &m->layers[i];
        mnist_geom *G = &g[i];
        memset(G, 0, sizeof *G);
        G->h = h;
        G->w = w;
        G->c = c;
        switch (L->kind) {
        case MNIST_L_FLATTEN: c = h * w * c; h = w = 1; break;
        case MNIST_L_DENSE:
            G->nw = h * w * c * L->out;
            G->nb = L->out;
            G->flops_fwd = 2.0 * G->nw;
            c = L->out;
            h = w = 1;
            break;
        case MNIST_L_CONV3X3:
            G->nw = 9 * c * L->out;
            G->nb = L->out;
            h -= 2;
            w -= 2;
            G->flops_fwd = 2.0 * G->nw * h * w;
            c = L->out;
            break;
        case MNIST_L_MAXPOOL2: h /= 2; w /= 2; break;
        default: break;
        }
        G->oh = h;
        G->ow = w;
        G->oc = c;
        G->in_size = G->h * G->w * G->c;
        G->out_size = h * w * c;
        G->w_off = off;
        off += G->nw;
        G->b_off = off;
        off += G->nb;
    }
    return off;
}

/* ---------------------------------------------------------------- reference loop */

typedef struct {
    const mnist_model_spec *m;
    mnist_geom g[MNIST_MAX_LAYERS];
    int B, L;
    long long np;
    float *params, *grads, *s1, *s2; /* (np) each; s1/s2 optimizer state */
    float *act[MNIST_MAX_LAYERS + 1]; /* act[i] = input of layer i, (B, in_size) */
    float *d0, *d1, *scratch;         /* gradient ping-pong (B, max size), conv scratch */
    uint64_t seed, step;              /* step = updates done */
    int t_adam;
} mnist_ref;

static inline long long mnist_ref_scratch_floats_(const mnist_model_spec *m, const mnist_geom *g, int B) {
    long long s = 0, k;
    int i;
    (void)B; /* the scratch macros may ignore some of their arguments */
    for (i = 0; i < m->n_layers; i++)
        if (m->layers[i].kind == MNIST_L_CONV3X3) {
            k = IPUP_CONV3X3_BWD_SCRATCH(B, g[i].h, g[i].w, g[i].c, g[i].oc);
            if (IPUP_CONV3X3_FWD_SCRATCH(B, g[i].h, g[i].w, g[i].c, g[i].oc) > k)
                k = IPUP_CONV3X3_FWD_SCRATCH(B, g[i].h, g[i].w, g[i].c, g[i].oc);
            if (k > s) s = k;
        }
    return s;
}

/* Floats the caller's arena needs for model m at micro-batch B. */
static inline long long mnist_ref_floats(const mnist_model_spec *m, int B) {
    mnist_geom g[MNIST_MAX_LAYERS];
    long long np, a = 0, mx = 0;
    memset(g, 0, sizeof g);
    np = mnist_model_geometry(m, g);
    int i;
    for (i = 0; i < m->n_layers; i++) {
        a += (long long)B * g[i].in_size;
        if (g[i].in_size > mx) mx = g[i].in_size;
        if (g[i].out_size > mx) mx = g[i].out_size;
    }
    a += (long long)B * g[m->n_layers - 1].out_size;
    return 4 * np + a + 2 * (long long)B * mx + mnist_ref_scratch_floats_(m, g, B) + 64;
}

/* Sets r up in arena (mnist_ref_floats(m, B) floats) and initialises the weights. */
static inline void mnist_ref_init(mnist_ref *r, const mnist_model_spec *m, int B, uint64_t seed, float *arena) {
    long long mx = 0;
    int i;
    memset(r, 0, sizeof *r);
    r->m = m;
    r->B = B;
    r->L = m->n_layers;
    r->seed = seed;
    r->np = mnist_model_geometry(m, r->g);
    r->params = arena;
    arena += r->np;
    r->grads = arena;
    arena += r->np;
    r->s1 = arena;
    arena += r->np;
    r->s2 = arena;
    arena += r->np;
    for (i = 0; i <= r->L; i++) {
        int sz = i < r->L ? r->g[i].in_size : r->g[r->L - 1].out_size;
        r->act[i] = arena;
        arena += (long long)B * sz;
        if (sz > mx) mx = sz;
    }
    r->d0 = arena;
    arena += B * mx;
    r->d1 = arena;
    arena += B * mx;
    r->scratch = arena;
    memset(r->params, 0, (size_t)(4 * r->np) * sizeof(float));
    for (i = 0; i < r->L; i++) {
        const mnist_geom *G = &r->g[i];
        if (G->nw) {
            int fan_in = m->layers[i].kind == MNIST_L_CONV3X3 ? 9 * G->c : G->in_size;
            int fan_out = m->layers[i].kind == MNIST_L_CONV3X3 ? 9 * G->oc : G->out_size;
            ipup_glorot_uniform_f32(fan_in, fan_out, G->nw, seed, (uint64_t)(2 * i), r->params + G->w_off);
        }
    }
}

/* Forward of one micro-batch x (B, 784); labels (B) or NULL. train = 1 applies
 * dropout keyed by (seed, step, sample_base*size + i). Returns the mean loss (0 when
 * labels is NULL); *correct gets the number of right arg-maxes; logits are in
 * act[L] ... the input of the loss layer. */
static inline float mnist_ref_forward(mnist_ref *r, const float *x, const int32_t *labels, int train,
                                      uint64_t sample_base, int *correct) {
    int i, B = r->B;
    float loss = 0.0f;
    memcpy(r->act[0], x, (size_t)B * (size_t)r->g[0].in_size * sizeof(float));
    for (i = 0; i < r->L; i++) {
        const mnist_layer_spec *S = &r->m->layers[i];
        const mnist_geom *G = &r->g[i];
        const float *in = r->act[i];
        float *out = r->act[i + 1];
        int n = B * G->out_size;
        switch (S->kind) {
        case MNIST_L_FLATTEN: memcpy(out, in, (size_t)n * sizeof(float)); break;
        case MNIST_L_DENSE:
            ipup_dense_fwd_f32(B, G->in_size, G->out_size, in, r->params + G->w_off, r->params + G->b_off, out);
            break;
        case MNIST_L_CONV3X3:
            ipup_conv3x3_fwd_f32(B, G->h, G->w, G->c, G->oc, in, r->params + G->w_off, r->params + G->b_off, out,
                                 r->scratch);
            break;
        case MNIST_L_MAXPOOL2: ipup_maxpool2_fwd_f32(B, G->h, G->w, G->c, in, out); break;
        case MNIST_L_DROPOUT:
            if (train)
                ipup_dropout_fwd_f32(n, S->p, r->seed, r->step, sample_base * (uint64_t)G->in_size, in, out);
            else
                memcpy(out, in, (size_t)n * sizeof(float));
            break;
        case MNIST_L_XENT:
            memcpy(out, in, (size_t)n * sizeof(float));
            if (labels) loss = ipup_softmax_xent_f32(B, G->in_size, in, labels, NULL, correct);
            break;
        default: break;
        }
        /* the activation is applied in place; the backward needs the post-activation
           value for ReLU (relu_bwd with y works the same as with x: y > 0 iff x > 0)
           and the pre-activation for GELU, kept in act[i+1] before the call: see bwd */
        if (S->act == MNIST_ACT_RELU) ipup_relu_fwd_f32(n, out, out);
    }
    return loss;
}

/* Forward + backward of one micro-batch, gradients ADDED into r->grads. */
static inline float mnist_ref_train_micro(mnist_ref *r, const float *x, const int32_t *labels,
                                          uint64_t sample_base, int *correct) {
    int i, B = r->B, L = r->L;
    float *dy = r->d0, *dx = r->d1, *t;
    float loss;
    /* GELU layers need their pre-activation: run forward keeping it (act holds
       pre-activation for GELU; the GELU output goes to the next layer via d-buffers) */
    int has_gelu = 0;
    for (i = 0; i < L; i++) has_gelu |= r->m->layers[i].act == MNIST_ACT_GELU;
    if (!has_gelu) {
        loss = mnist_ref_forward(r, x, labels, 1, sample_base, correct);
    } else {
        /* pure dense GELU chain: act[i+1] stores the pre-activation z, and the next
           layer's input is gelu(z) computed into d1 before the dense call */
        memcpy(r->act[0], x, (size_t)B * (size_t)r->g[0].in_size * sizeof(float));
        loss = 0.0f;
        for (i = 0; i < L; i++) {
            const mnist_layer_spec *S = &r->m->layers[i];
            const mnist_geom *G = &r->g[i];
            const float *in = r->act[i];
            if (i > 0 && r->m->layers[i - 1].act == MNIST_ACT_GELU) {
                ipup_gelu_fwd_f32(B * G->in_size, r->act[i], r->d1);
                in = r->d1;
            }
            if (S->kind == MNIST_L_DENSE)
                ipup_dense_fwd_f32(B, G->in_size, G->out_size, in, r->params + G->w_off, r->params + G->b_off,
                                   r->act[i + 1]);
            else if (S->kind == MNIST_L_XENT) {
                memcpy(r->act[i + 1], in, (size_t)B * (size_t)G->in_size * sizeof(float));
                loss = ipup_softmax_xent_f32(B, G->in_size, in, labels, NULL, correct);
            } else
                memcpy(r->act[i + 1], in, (size_t)B * (size_t)G->in_size * sizeof(float));
        }
    }
    /* loss gradient */
    ipup_softmax_xent_f32(B, r->g[L - 1].in_size, r->act[L - 1], labels, dy, NULL);
    for (i = L - 2; i >= 0; i--) {
        const mnist_layer_spec *S = &r->m->layers[i];
        const mnist_geom *G = &r->g[i];
        const float *in = r->act[i];
        int n = B * G->out_size;
        if (S->act == MNIST_ACT_RELU) ipup_relu_bwd_f32(n, r->act[i + 1], dy, dy);
        if (S->act == MNIST_ACT_GELU) ipup_gelu_bwd_f32(n, r->act[i + 1], dy, dy);
        if (i > 0 && r->m->layers[i - 1].act == MNIST_ACT_GELU) {
            /* the input of this dense layer was gelu(act[i]); rebuild it in dx's partner */
            ipup_gelu_fwd_f32(B * G->in_size, r->act[i], dx);
            in = dx;
        }
        switch (S->kind) {
        case MNIST_L_FLATTEN: continue; /* a view: dy is already dx */
        case MNIST_L_DENSE:
            if (in == dx) {
                /* input lives in dx: compute weight grads first, then dx */
                ipup_dense_bwd_f32(B, G->in_size, G->out_size, in, r->params + G->w_off, dy, NULL,
                                   r->grads + G->w_off, r->grads + G->b_off);
                ipup_dense_bwd_f32(B, G->in_size, G->out_size, in, r->params + G->w_off, dy, dx, NULL, NULL);
            } else {
                ipup_dense_bwd_f32(B, G->in_size, G->out_size, in, r->params + G->w_off, dy, i > 0 ? dx : NULL,
                                   r->grads + G->w_off, r->grads + G->b_off);
            }
            break;
        case MNIST_L_CONV3X3:
            ipup_conv3x3_bwd_f32(B, G->h, G->w, G->c, G->oc, in, r->params + G->w_off, dy, i > 0 ? dx : NULL,
                                 r->grads + G->w_off, r->grads + G->b_off, r->scratch);
            break;
        case MNIST_L_MAXPOOL2: ipup_maxpool2_bwd_f32(B, G->h, G->w, G->c, in, dy, dx); break;
        case MNIST_L_DROPOUT:
            ipup_dropout_bwd_f32(B * G->in_size, S->p, r->seed, r->step, sample_base * (uint64_t)G->in_size, dy, dx);
            break;
        default: break;
        }
        t = dy;
        dy = dx;
        dx = t;
    }
    return loss;
}

/* One optimizer update with the accumulated gradient of `micro` micro-batches;
 * zeroes the accumulator. */
static inline void mnist_ref_update(mnist_ref *r, int optimizer, float lr, float mu, float b1, float b2, float eps,
                                    int micro) {
    float scale = 1.0f / (float)micro;
    int n = (int)r->np;
    if (optimizer == MNIST_OPT_SGD) ipup_sgd_f32(n, lr, scale, r->params, r->grads);
    else if (optimizer == MNIST_OPT_MOMENTUM) ipup_momentum_f32(n, lr, mu, scale, r->params, r->s1, r->grads);
    else ipup_adam_f32(n, lr, b1, b2, eps, ++r->t_adam, scale, r->params, r->s1, r->s2, r->grads);
    ipup_zeros_f32(n, r->grads);
    r->step++;
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_MODELS_H */
