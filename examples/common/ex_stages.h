/* ex_stages.h - the pipeline split and the IPU map as the programs take them from the
 * command line: --splits (the first layer of each stage after the first) and --map
 * (the IPU of each stage, a bracket for a concurrent stage). One place for the MNIST
 * trainer (examples/mnist/mnist_trainer.h) and the pool planner (examples/plan/
 * plan_tool.h), so both accept and refuse the same things with the same words.
 * MIT licence.
 *
 * Each function returns 0, or -1 with the message (without the program's prefix) in
 * msg, which the caller prints. No heap, no stdio. Include after ipupipe.h.
 */
#ifndef EX_STAGES_H
#define EX_STAGES_H

#include <string.h>

#include "ipupipe.h"

#define EX_STAGES_MSG 1024 /* room for a message that lists every layer id */

/* d's index of the layer named id, or -1. */
static inline int ex_find_layer(const ipup_model_desc *d, const char *id) {
    int l;
    for (l = 0; l < d->n_layers; l++)
        if (strcmp(d->layers[l].id, id) == 0) return l;
    return -1;
}

/* The stages of d: the split layers are given[0..n_given-1] when given is not NULL
 * (n_given may be 0: one stage), else the space-separated words of defaults; at most
 * max_stages - 1 splits (max_stages at most EX_MAX_STAGES). stage_first[s] is the first
 * layer of stage s, stage_first[*n_stages] = d->n_layers (room for max_stages + 1).
 * model and ids (the layer ids, for the message) name what a split could have been. */
#define EX_MAX_STAGES 64
static inline int ex_split_stages(const ipup_model_desc *d, const char *const *given, int n_given,
                                  const char *defaults, int max_stages, const char *model,
                                  const char *ids, int32_t *stage_first, int *n_stages, char *msg,
                                  size_t cap) {
    const char *list[EX_MAX_STAGES];
    char words[256];
    int n = 0, i;
    if (max_stages > EX_MAX_STAGES) max_stages = EX_MAX_STAGES;
    if (given) {
        for (i = 0; i < n_given && n < max_stages - 1; i++) list[n++] = given[i];
    } else {
        char *w = words;
        ipup_snprintf(words, sizeof words, "%s", defaults);
        while (n < max_stages - 1) { /* the words of defaults, cut in place */
            while (*w == ' ') w++;
            if (!*w) break;
            list[n++] = w;
            while (*w && *w != ' ') w++;
            if (*w) *w++ = 0;
        }
    }
    *n_stages = n + 1;
    stage_first[0] = 0;
    for (i = 0; i < n; i++) {
        int found = ex_find_layer(d, list[i]);
        if (found < 0) {
            ipup_snprintf(msg, cap, "--splits: unknown layer '%s'; the layers of model %s are: %s",
                          list[i], model, ids);
            return -1;
        }
        if (found <= stage_first[i]) {
            if (found == 0)
                ipup_snprintf(msg, cap,
                              "--splits: stage 0 would be empty: '%s' is the first layer of the "
                              "model (each split names the first layer of the NEXT stage)",
                              list[i]);
            else
                ipup_snprintf(msg, cap,
                              "--splits: stage %d would be empty: '%s' does not come after '%s' "
                              "(splits must follow the layer order: %s)",
                              i, list[i], d->layers[stage_first[i]].id, ids);
            return -1;
        }
        stage_first[i + 1] = found;
    }
    stage_first[*n_stages] = d->n_layers;
    return 0;
}

/* --map "0,1,0" or "0,[1,2],2,3": the IPU of each stage (TF's device_mapping), a bracket
 * for a concurrent stage, parsed by the library (ipup_sched_map_parse) into *cmap; one
 * entry per stage of n_stages, each IPU in 0..IPUP_MAX_DEVICES-1 (the schedule and the
 * emulator check the rest). map[s] gets each stage's first IPU, *n_map the entries. */
static inline int ex_stage_map(const char *text, int n_stages, ipup_stage_map *cmap,
                               int16_t *map, int *n_map, char *msg, size_t cap) {
    char why[512];
    int n, s, b;
    n = ipup_sched_map_parse(text, cmap, why, sizeof why);
    if (n < 0) {
        ipup_snprintf(msg, cap, "--map: %s", why);
        return -1;
    }
    if (n != n_stages) {
        ipup_snprintf(msg, cap,
                      "--map gives %d IPU%s, but the pipeline has %d stage%s: give one IPU per "
                      "stage (e.g. --map %s)",
                      n, n == 1 ? "" : "s", n_stages, n_stages == 1 ? "" : "s",
                      n_stages == 2 ? "0,1" : "0,1,0");
        return -1;
    }
    for (s = 0; s < n; s++)
        for (b = 0; b < cmap->n_dev[s]; b++)
            if (cmap->dev[s][b] >= IPUP_MAX_DEVICES) {
                ipup_snprintf(msg, cap,
                              "--map: stage %d is on IPU %d; this build has IPUs 0..%d "
                              "(IPUP_MAX_DEVICES)",
                              s, (int)cmap->dev[s][b], IPUP_MAX_DEVICES - 1);
                return -1;
            }
    for (s = 0; s < n; s++) map[s] = cmap->dev[s][0];
    *n_map = n;
    return 0;
}

#endif /* EX_STAGES_H */
