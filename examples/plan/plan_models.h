/* plan_models.h - the models build/ipupipe-plan knows by name: the three MNIST models
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
} pt_model;

static const pt_model pt_models[] = {
    {MNT_MLP_NAME, MNT_MLP_LAYERS, MNT_MLP_IDS, MNT_MLP_SPLITS, MNT_MLP_SCHEDULE, MNT_MLP_BATCH,
     MNT_MLP_MICROBATCHES, MNT_MLP_REPEAT, MNT_MLP_OPTIMIZER},
    {MNT_CNN_NAME, MNT_CNN_LAYERS, MNT_CNN_IDS, MNT_CNN_SPLITS, MNT_CNN_SCHEDULE, MNT_CNN_BATCH,
     MNT_CNN_MICROBATCHES, MNT_CNN_REPEAT, MNT_CNN_OPTIMIZER},
    {MNT_MLP_GELU_NAME, MNT_MLP_GELU_LAYERS, MNT_MLP_GELU_IDS, MNT_MLP_GELU_SPLITS,
     MNT_MLP_GELU_SCHEDULE, MNT_MLP_GELU_BATCH, MNT_MLP_GELU_MICROBATCHES, MNT_MLP_GELU_REPEAT,
     MNT_MLP_GELU_OPTIMIZER},
};
#define PT_N_MODELS 3

/* A model text's recipe: one stage, batch 1, 1 micro-batch, repeat 1, SGD, Grouped. */
static const pt_model pt_text_model = {"text", "", NULL, "", "grouped", 1, 1, 1, IPUP_OPT_SGD};

static inline const pt_model *pt_model_find(const char *name) {
    int i;
    for (i = 0; i < PT_N_MODELS; i++)
        if (strcmp(pt_models[i].name, name) == 0) return &pt_models[i];
    return NULL;
}

#endif /* PLAN_MODELS_H */
