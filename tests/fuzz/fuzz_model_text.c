/* fuzz_model_text.c - libFuzzer target: the model text parser of ipupipe.h and what a
 * parsed model goes through before any pool exists: ipup_model_parse, ipup_model_info,
 * ipup_balance_stages for every stage count, ipup_host_bytes and ipup_plan_config.
 *
 * Input: byte 0 = input side (1..32), byte 1 = input channels (1..4), byte 2 = stage
 * count (1..4), byte 3 = micro-batch size (1..16), the rest = the model text ("dense64,
 * relu,dense10,xent"), NUL-terminated on a copy. Oracles besides ASan+UBSan: every
 * refusal says what is wrong (a message); a parsed model's layer ids are unique; the
 * shapes chain (each layer's input is the previous layer's output, all positive); a
 * balanced split is strictly increasing inside 1..L-1; a refused plan has a message.
 *
 *   make fuzz   (or build/fuzz/fuzz_model_text tests/fuzz/corpus/model_text)
 */
#include "ipupipe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static ipup_emu fz_emu;
static ipup_model_desc fz_model;
static ipup_layer_info fz_info[IPUP_MAX_LAYERS];
static ipup_config fz_cfg;
static ipup_plan fz_plan;

/* the shapes of consecutive layers chain and every size is positive */
static void fz_check_info(const ipup_model_desc *m, const ipup_layer_info *info) {
    int32_t l, k;
    for (l = 0; l < m->n_layers; l++) {
        if (info[l].in_n <= 0 || info[l].out_n <= 0) abort();
        if (l > 0 && info[l].in_n != info[l - 1].out_n) abort();
        for (k = 0; k < l; k++)
            if (strcmp(m->layers[k].id, m->layers[l].id) == 0) abort();
    }
}

/* every stage count: a split strictly increasing inside 1..L-1, or a refusal with a message */
static void fz_check_balance(const ipup_model_desc *m) {
    int32_t split[IPUP_MAX_LAYERS];
    char msg[256];
    int32_t s, i;
    for (s = 1; s <= m->n_layers + 1 && s <= IPUP_MAX_LAYERS; s++) {
        msg[0] = 0;
        if (ipup_balance_stages(m, s, split, msg, sizeof msg) != IPUP_OK) {
            if (!msg[0]) abort();
            continue;
        }
        if (s > m->n_layers) abort(); /* more stages than layers must be refused */
        for (i = 0; i < s - 1; i++)
            if (split[i] < 1 || split[i] >= m->n_layers || (i > 0 && split[i] <= split[i - 1])) abort();
    }
}

/* plan without pools; a refusal must say why */
static void fz_check_plan(const ipup_model_desc *m, int32_t stages, int32_t batch) {
    memset(&fz_cfg, 0, sizeof fz_cfg);
    memset(&fz_emu, 0, sizeof fz_emu);
    fz_cfg.model = m;
    fz_cfg.stages = stages <= m->n_layers ? stages : m->n_layers;
    fz_cfg.microbatch = batch;
    fz_cfg.microbatches = 2 * fz_cfg.stages;
    (void)ipup_host_bytes(&fz_cfg);
    if (ipup_plan_config(&fz_emu, &fz_cfg, &fz_plan) != IPUP_OK && !ipup_last_error(&fz_emu)[0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char msg[512];
    char *text;
    int32_t side, chan, stages, batch;
    if (size < 4) return 0;
    side = 1 + data[0] % 32;
    chan = 1 + data[1] % 4;
    stages = 1 + data[2] % 4;
    batch = 1 + data[3] % 16;
    text = (char *)malloc(size - 4 + 1);
    if (!text) return 0;
    memcpy(text, data + 4, size - 4);
    text[size - 4] = 0;
    memset(&fz_model, 0, sizeof fz_model);
    fz_model.in_h = side;
    fz_model.in_w = side;
    fz_model.in_c = chan;
    msg[0] = 0;
    if (ipup_model_parse(text, &fz_model, msg, sizeof msg) != IPUP_OK) {
        free(text);
        if (!msg[0]) abort();
        return 0;
    }
    free(text);
    msg[0] = 0;
    if (ipup_model_info(&fz_model, fz_info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK) {
        if (!msg[0]) abort();
        return 0;
    }
    fz_check_info(&fz_model, fz_info);
    fz_check_balance(&fz_model);
    fz_check_plan(&fz_model, stages, batch);
    return 0;
}
