/* plan_models.h - the models build/ipupipe-plan knows by name: the three MNIST models
 * (texts, layer ids and default splits from examples/common/mnist_texts.h) with the
 * parts of the trainer's recipe that size the pools (micro-batch size, micro-batches,
 * repeat count, optimizer, schedule), and the recipe of a model text. MIT licence.
 *
 * The recipe numbers are those of examples/mnist/mnist_models.h (mnist_models[]);
 * tests/test_plan_tool.sh compiles both tables and checks that they agree.
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
    {MNT_MLP_NAME, MNT_MLP_LAYERS, MNT_MLP_IDS, MNT_MLP_SPLITS, "grouped", 32, 16, 10, IPUP_OPT_MOMENTUM},
    {MNT_CNN_NAME, MNT_CNN_LAYERS, MNT_CNN_IDS, MNT_CNN_SPLITS, "grouped", 64, 4, 10, IPUP_OPT_MOMENTUM},
    {MNT_MLP_GELU_NAME, MNT_MLP_GELU_LAYERS, MNT_MLP_GELU_IDS, MNT_MLP_GELU_SPLITS, "grouped", 5, 6, 10, IPUP_OPT_ADAM},
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

static inline int pt_is_activation(ipup_layer_kind k) { return k == IPUP_LAYER_RELU || k == IPUP_LAYER_GELU; }

/* Copies at most cap-1 bytes of the word at s (up to a space or the end) into d,
 * zero-filled; returns the rest of s. */
static inline const char *pt_word(char *d, size_t cap, const char *s) {
    size_t n = 0;
    memset(d, 0, cap);
    while (*s == ' ') s++;
    while (*s && *s != ' ') {
        if (n + 1 < cap) d[n++] = *s;
        s++;
    }
    return s;
}

/* The ids the trainer gives a named model's layers (mnist_model_desc): each layer that
 * is not an activation takes the next word of m->ids; an activation is "<previous
 * id>.relu" or ".gelu" (the previous id cut to 15 characters). */
static inline void pt_model_ids(const pt_model *m, ipup_model_desc *d) {
    const char *ids = m->ids;
    int l;
    for (l = 0; l < d->n_layers; l++) {
        ipup_layer *L = &d->layers[l];
        if (pt_is_activation(L->kind) && l > 0) {
            char base[16];
            size_t k;
            pt_word(base, sizeof base, d->layers[l - 1].id);
            memset(L->id, 0, sizeof L->id);
            k = strlen(base);
            memcpy(L->id, base, k);
            memcpy(L->id + k, L->kind == IPUP_LAYER_RELU ? ".relu" : ".gelu", 6);
        } else {
            ids = pt_word(L->id, sizeof L->id, ids);
        }
    }
}

#endif /* PLAN_MODELS_H */
