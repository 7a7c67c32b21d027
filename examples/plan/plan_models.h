/* plan_models.h - the models build/ipupipe-plan knows by name: the three MNIST models and
 * the MLPerf Tiny networks
 * (texts, layer ids and default splits from examples/common/mnist_texts.h) with the
 * parts of the trainer's recipe that size the pools (micro-batch size, micro-batches,
 * repeat count, optimizer, schedule), and the recipe of a model text. MIT licence.
 *
 * The recipe numbers are examples/common/mnist_texts.h's, which the trainer's recipes
 * (examples/mnist/mnist_models.h) use too; tests/test_plan_tool.sh checks that the two
 * tables agree.
 */
#ifndef PLAN_MODELS_H
#define PLAN_MODELS_H

#include <string.h>

#include "ipupipe.h"
#include "mnist_texts.h"

#define PT_IMG 28 /* the MNIST models' input: 28x28x1 images */

typedef struct {
    const char *name;   /* --model NAME; "text" for a model text */
    const char *layers; /* ipup_model_parse text (a model text: what --model gave) */
    const char *ids;    /* space-separated ids of the layers that are not activations; NULL: the parser's */
    const char *splits; /* default --splits, space-separated */
    const char *schedule;
    int batch, microbatches, repeat;
    ipup_optimizer_kind optimizer;
    int in_h, in_w, in_c; /* the input shape unless --input says otherwise */
} pt_model;

static const pt_model pt_models[] = {
    {MNT_MLP_NAME, MNT_MLP_LAYERS, MNT_MLP_IDS, MNT_MLP_SPLITS, MNT_MLP_SCHEDULE, MNT_MLP_BATCH,
     MNT_MLP_MICROBATCHES, MNT_MLP_REPEAT, MNT_MLP_OPTIMIZER, PT_IMG, PT_IMG, 1},
    {MNT_CNN_NAME, MNT_CNN_LAYERS, MNT_CNN_IDS, MNT_CNN_SPLITS, MNT_CNN_SCHEDULE, MNT_CNN_BATCH,
     MNT_CNN_MICROBATCHES, MNT_CNN_REPEAT, MNT_CNN_OPTIMIZER, PT_IMG, PT_IMG, 1},
    {MNT_MLP_GELU_NAME, MNT_MLP_GELU_LAYERS, MNT_MLP_GELU_IDS, MNT_MLP_GELU_SPLITS,
     MNT_MLP_GELU_SCHEDULE, MNT_MLP_GELU_BATCH, MNT_MLP_GELU_MICROBATCHES, MNT_MLP_GELU_REPEAT,
     MNT_MLP_GELU_OPTIMIZER, PT_IMG, PT_IMG, 1},
    /* the MLPerf Tiny networks (docs/models.md); more than 32 layers: the tool defines
       IPUP_MAX_LAYERS 128 */
    {MNT_DS_CNN_NAME, MNT_DS_CNN_LAYERS, "", MNT_DS_CNN_SPLITS, MNT_DS_CNN_SCHEDULE, MNT_DS_CNN_BATCH,
     MNT_DS_CNN_MICROBATCHES, MNT_DS_CNN_REPEAT, MNT_DS_CNN_OPTIMIZER, MNT_DS_CNN_IN_H,
     MNT_DS_CNN_IN_W, MNT_DS_CNN_IN_C},
    {MNT_MOBILENET_NAME, MNT_MOBILENET_LAYERS, "", MNT_MOBILENET_SPLITS, MNT_MOBILENET_SCHEDULE,
     MNT_MOBILENET_BATCH, MNT_MOBILENET_MICROBATCHES, MNT_MOBILENET_REPEAT, MNT_MOBILENET_OPTIMIZER,
     MNT_MOBILENET_IN_H, MNT_MOBILENET_IN_W, MNT_MOBILENET_IN_C},
    {MNT_RESNET8_NAME, MNT_RESNET8_LAYERS, "", MNT_RESNET8_SPLITS, MNT_RESNET8_SCHEDULE,
     MNT_RESNET8_BATCH, MNT_RESNET8_MICROBATCHES, MNT_RESNET8_REPEAT, MNT_RESNET8_OPTIMIZER,
     MNT_RESNET8_IN_H, MNT_RESNET8_IN_W, MNT_RESNET8_IN_C},
    {MNT_RESNET8_FASHION_NAME, MNT_RESNET8_FASHION_LAYERS, "", MNT_RESNET8_SPLITS,
     MNT_RESNET8_SCHEDULE, MNT_RESNET8_BATCH, MNT_RESNET8_MICROBATCHES, MNT_RESNET8_REPEAT,
     MNT_RESNET8_OPTIMIZER, PT_IMG, PT_IMG, 1},
    {MNT_FC_AE_NAME, MNT_FC_AE_LAYERS, "", MNT_FC_AE_SPLITS, MNT_FC_AE_SCHEDULE, MNT_FC_AE_BATCH,
     MNT_FC_AE_MICROBATCHES, MNT_FC_AE_REPEAT, MNT_FC_AE_OPTIMIZER, MNT_FC_AE_IN_H, MNT_FC_AE_IN_W,
     MNT_FC_AE_IN_C},
};
#define PT_N_MODELS 8

/* A model text's recipe: one stage, batch 1, 1 micro-batch, repeat 1, SGD, Grouped. */
static const pt_model pt_text_model = {"text", "", NULL, "", "grouped", 1, 1, 1, IPUP_OPT_SGD, 0, 0, 0};

static inline const pt_model *pt_model_find(const char *name) {
    int i;
    for (i = 0; i < PT_N_MODELS; i++)
        if (strcmp(pt_models[i].name, name) == 0) return &pt_models[i];
    return NULL;
}

#endif /* PLAN_MODELS_H */
