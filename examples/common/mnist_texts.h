/* mnist_texts.h - the MNIST models and the MLPerf Tiny networks as both programs that name them see them: the
 * trainer's recipes (examples/mnist/mnist_models.h) and the pool planner
 * (examples/plan/plan_models.h). Their names, their layers as model text
 * (ipup_model_parse), the ids the trainer gives their layers, their default splits, the
 * parts of the recipe that size the pools, and the function that names the layers.
 * Macros, so that static tables can use them. MIT licence.
 *
 *   MNT_<M>_NAME          the name of --model
 *   MNT_<M>_LAYERS        the model text; input 28x28x1 images, 10 classes
 *   MNT_<M>_IDS           space-separated ids of the layers that are not activations
 *   MNT_<M>_SPLITS        the default --splits: space-separated first layers of stages 1..
 *   MNT_<M>_SCHEDULE, _BATCH, _MICROBATCHES, _REPEAT, _OPTIMIZER
 *                         the recipe's schedule, micro-batch size, micro-batches per step,
 *                         steps per emulator call and optimizer
 */
#ifndef MNIST_TEXTS_H
#define MNIST_TEXTS_H

#include <string.h>

#include "ipupipe.h"

/* TensorFlow 1 pipelining tutorial */
#define MNT_MLP_NAME "mlp"
#define MNT_MLP_LAYERS "flatten,dense256,relu,dense128,relu,dense64,relu,dense32,relu,dense10,xent"
#define MNT_MLP_IDS "flatten dense256 dense128 dense64 dense32 logits cel"
#define MNT_MLP_SPLITS "dense32"
#define MNT_MLP_SCHEDULE "grouped"
#define MNT_MLP_BATCH 32
#define MNT_MLP_MICROBATCHES 16
#define MNT_MLP_REPEAT 10
#define MNT_MLP_OPTIMIZER IPUP_OPT_MOMENTUM

/* Keras MNIST convnet example */
#define MNT_CNN_NAME "cnn"
#define MNT_CNN_LAYERS "conv32,relu,maxpool2,conv64,relu,maxpool2,flatten,dropout0.5,dense10,xent"
#define MNT_CNN_IDS "conv32 pool1 conv64 pool2 flatten dropout logits cel"
#define MNT_CNN_SPLITS "pool2"
#define MNT_CNN_SCHEDULE "grouped"
#define MNT_CNN_BATCH 64
#define MNT_CNN_MICROBATCHES 4
#define MNT_CNN_REPEAT 10
#define MNT_CNN_OPTIMIZER IPUP_OPT_MOMENTUM

/* PopXL pipelining tutorial */
#define MNT_MLP_GELU_NAME "mlp-gelu"
#define MNT_MLP_GELU_LAYERS "flatten,dense512,gelu,dense512,gelu,dense512,gelu,dense10,xent"
#define MNT_MLP_GELU_IDS "flatten fc1 fc2 fc3 fc4 loss"
#define MNT_MLP_GELU_SPLITS "fc3"
#define MNT_MLP_GELU_SCHEDULE "grouped"
#define MNT_MLP_GELU_BATCH 5
#define MNT_MLP_GELU_MICROBATCHES 6
#define MNT_MLP_GELU_REPEAT 10
#define MNT_MLP_GELU_OPTIMIZER IPUP_OPT_ADAM

/* The MLPerf Tiny reference networks (docs/models.md: the Keras code they follow, their
 * counts). MNT_<M>_IN_H, _IN_W, _IN_C: the input shape; _CLASSES: the classes of the
 * softmax (0: the autoencoder, MSE against its input). Their layers keep the parser's
 * ids (ids ""): the default splits name them (at a residual block's start for ResNet-8:
 * "res_2" is the second block's marker). Adam, as the Keras code trains them. */
#define MNT_DS_CNN_BLOCK "dw3s1same,bn,relu,conv64k1s1same,bn,relu,"
#define MNT_DS_CNN_NAME "ds-cnn"
#define MNT_DS_CNN_LAYERS                                                              \
    "conv64k10x4s2same,bn,relu,dropout0.2," MNT_DS_CNN_BLOCK MNT_DS_CNN_BLOCK           \
    MNT_DS_CNN_BLOCK MNT_DS_CNN_BLOCK "dropout0.4,avgpool24x5,flatten,dense12,xent"
#define MNT_DS_CNN_IN_H 49
#define MNT_DS_CNN_IN_W 10
#define MNT_DS_CNN_IN_C 1
#define MNT_DS_CNN_CLASSES 12
#define MNT_DS_CNN_SPLITS "dw3s1same_3"
#define MNT_DS_CNN_SCHEDULE "grouped"
#define MNT_DS_CNN_BATCH 16
#define MNT_DS_CNN_MICROBATCHES 4
#define MNT_DS_CNN_REPEAT 10
#define MNT_DS_CNN_OPTIMIZER IPUP_OPT_ADAM

#define MNT_MBV1_BLOCK(S, N) "dw3s" #S "same,bn,relu,conv" #N "k1s1same,bn,relu,"
#define MNT_MOBILENET_NAME "mobilenet-v1-0.25"
#define MNT_MOBILENET_LAYERS                                                           \
    "conv8k3s2same,bn,relu," MNT_MBV1_BLOCK(1, 16) MNT_MBV1_BLOCK(2, 32)                \
    MNT_MBV1_BLOCK(1, 32) MNT_MBV1_BLOCK(2, 64) MNT_MBV1_BLOCK(1, 64)                    \
    MNT_MBV1_BLOCK(2, 128) MNT_MBV1_BLOCK(1, 128) MNT_MBV1_BLOCK(1, 128)                 \
    MNT_MBV1_BLOCK(1, 128) MNT_MBV1_BLOCK(1, 128) MNT_MBV1_BLOCK(1, 128)                 \
    MNT_MBV1_BLOCK(2, 256) MNT_MBV1_BLOCK(1, 256) "avgpool3,flatten,dense2,xent"
#define MNT_MOBILENET_IN_H 96
#define MNT_MOBILENET_IN_W 96
#define MNT_MOBILENET_IN_C 3
#define MNT_MOBILENET_CLASSES 2
#define MNT_MOBILENET_SPLITS "conv128k1s1same_2"
#define MNT_MOBILENET_SCHEDULE "grouped"
#define MNT_MOBILENET_BATCH 8
#define MNT_MOBILENET_MICROBATCHES 4
#define MNT_MOBILENET_REPEAT 4
#define MNT_MOBILENET_OPTIMIZER IPUP_OPT_ADAM

/* ResNet-8 with a final pool of P (the last map's side: 8 for 32x32, 7 for 28x28) */
#define MNT_RESNET8_TEXT(P)                                                            \
    "conv16k3s1same,bn,relu,res(conv16k3s1same,bn,relu,conv16k3s1same,bn),relu,"       \
    "res(conv32k3s2same,bn,relu,conv32k3s1same,bn|conv32k1s2same),relu,"                \
    "res(conv64k3s2same,bn,relu,conv64k3s1same,bn|conv64k1s2same),relu,"                \
    "avgpool" #P ",flatten,dense10,xent"
#define MNT_RESNET8_NAME "resnet8"
#define MNT_RESNET8_LAYERS MNT_RESNET8_TEXT(8)
#define MNT_RESNET8_IN_H 32
#define MNT_RESNET8_IN_W 32
#define MNT_RESNET8_IN_C 3
#define MNT_RESNET8_CLASSES 10
#define MNT_RESNET8_SPLITS "res_2"
#define MNT_RESNET8_SCHEDULE "grouped"
#define MNT_RESNET8_BATCH 32
#define MNT_RESNET8_MICROBATCHES 4
#define MNT_RESNET8_REPEAT 10
#define MNT_RESNET8_OPTIMIZER IPUP_OPT_ADAM
/* the same network on 28x28x1 images (Fashion-MNIST) */
#define MNT_RESNET8_FASHION_NAME "resnet8-fashion"
#define MNT_RESNET8_FASHION_LAYERS MNT_RESNET8_TEXT(7)

#define MNT_FC_AE_4 "dense128,bn,relu,dense128,bn,relu,dense128,bn,relu,dense128,bn,relu,"
#define MNT_FC_AE_NAME "fc-ae"
#define MNT_FC_AE_LAYERS MNT_FC_AE_4 "dense8,bn,relu," MNT_FC_AE_4 "dense640,mse"
#define MNT_FC_AE_IN_H 1
#define MNT_FC_AE_IN_W 1
#define MNT_FC_AE_IN_C 640
#define MNT_FC_AE_CLASSES 0
#define MNT_FC_AE_SPLITS "dense128_5"
#define MNT_FC_AE_SCHEDULE "grouped"
#define MNT_FC_AE_BATCH 32
#define MNT_FC_AE_MICROBATCHES 4
#define MNT_FC_AE_REPEAT 10
#define MNT_FC_AE_OPTIMIZER IPUP_OPT_ADAM

static inline int mnt_is_activation(ipup_layer_kind k) {
    return k == IPUP_LAYER_RELU || k == IPUP_LAYER_GELU;
}

/* Copies at most cap-1 bytes of the word at s (up to a space or the end) into d,
 * zero-filled; returns the rest of s. */
static inline const char *mnt_word(char *d, size_t cap, const char *s) {
    size_t n = 0;
    memset(d, 0, cap);
    while (*s == ' ') s++;
    while (*s && *s != ' ') {
        if (n + 1 < cap) d[n++] = *s;
        s++;
    }
    return s;
}

/* Names the layers of d as the trainer does: each layer that is not an activation takes
 * the next word of ids (MNT_<M>_IDS); an activation is "<previous id>.relu" or ".gelu"
 * (the previous id cut to 15 characters). An empty ids keeps the parser's ids. */
static inline void mnt_layer_ids(ipup_model_desc *d, const char *ids) {
    int l;
    if (!ids[0]) return; /* "": the parser's ids (the MLPerf Tiny networks) */
    for (l = 0; l < d->n_layers; l++) {
        ipup_layer *L = &d->layers[l];
        if (mnt_is_activation(L->kind) && l > 0) {
            char base[16];
            size_t k;
            mnt_word(base, sizeof base, d->layers[l - 1].id);
            memset(L->id, 0, sizeof L->id);
            k = strlen(base);
            memcpy(L->id, base, k);
            memcpy(L->id + k, L->kind == IPUP_LAYER_RELU ? ".relu" : ".gelu", 6);
        } else {
            ids = mnt_word(L->id, sizeof L->id, ids);
        }
    }
}

#endif /* MNIST_TEXTS_H */
