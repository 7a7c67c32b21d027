/* test_plan_overflow.c - the planning arithmetic of ipupipe.h at the sizes where int32
 * products wrap: an input of 65537 x 65537, a conv layer whose backward scratch
 * (IPUP_CONV3X3_BWD_SCRATCH) passes 2^31 floats, a layer output of more than 2^31
 * values, a stash entry whose offsets pass 2^31 floats with every input check passed,
 * micro-batches of 2^28 samples, and outfeed records beyond size_t. Each must be a clean
 * refusal by ipup_plan_config (and ipup_host_bytes returns 0, "no valid size"), with a
 * message naming the size and what to lower. The asan build runs this with
 * -fsanitize=undefined -fno-sanitize-recover=all: a signed overflow anywhere in the
 * planning aborts the test.
 */
#include "ipupipe.h"
#include "ttest.h"
#include "tiny_model.h"

static ipup_emu po_emu;
static ipup_plan po_plan;
static ipup_model_desc po_model;

/* plan `text` on an input h x w x c with micro-batch B (1 stage, 1 micro-batch) */
static int po_plan_model(int32_t h, int32_t w, int32_t c, const char *text, int32_t B) {
    ipup_config cfg;
    char msg[256];
    int rc = tiny_model(&po_model, h, w, c, text, msg, sizeof msg);
    if (rc != IPUP_OK) {
        printf("    model %s: %s\n", text, msg);
        return rc;
    }
    IPUPIPE_MEMSET(&cfg, 0, sizeof cfg);
    cfg.model = &po_model;
    cfg.microbatch = B;
    return ipup_plan_config(&po_emu, &cfg, &po_plan);
}

/* 65537 * 65537 wraps to 131073 in int32: the host plan used to size an invalid model */
TTEST(input_65537_squared) {
    ipup_config cfg;
    IPUPIPE_MEMSET(&po_model, 0, sizeof po_model);
    TT_EQ_INT(ipup_model_parse("dense2,xent", &po_model, NULL, 0), IPUP_OK);
    po_model.in_h = 65537; po_model.in_w = 65537; po_model.in_c = 4;
    IPUPIPE_MEMSET(&cfg, 0, sizeof cfg);
    cfg.model = &po_model;
    TT_CHECK(ipup_host_bytes(&cfg) == 0);
    TT_EQ_INT(ipup_plan_config(&po_emu, &cfg, &po_plan), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&po_emu), "model input shape (65537, 65537, 4) is more than 2^31-1 values");
    po_model.in_c = 1 << 30; /* h * w fits, h * w * c does not */
    po_model.in_h = 2; po_model.in_w = 2;
    TT_CHECK(ipup_host_bytes(&cfg) == 0);
}

/* 9 x 1000 x (5 + 705 x 705) = 4,473,270,000 floats: the int macro wrapped */
TTEST(conv_backward_scratch) {
    TT_EQ_INT(po_plan_model(707, 707, 1000, "conv5,flatten,dense2,xent", 1), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&po_emu), "layer 0 (conv5): the conv3x3 backward's scratch (IPUP_CONV3X3_BWD_SCRATCH: 9 x 1000 channels x (5 + 705 x 705))");
    TT_CONTAINS(ipup_last_error(&po_emu), "more than 2^31-1 floats; lower the input size or the channels");
    /* just below: 9 x 1000 x (5 + 400 x 400) floats plan */
    TT_EQ_INT(po_plan_model(402, 402, 1000, "conv5,flatten,dense2,xent", 1), IPUP_OK);
}

/* 39998 x 39998 x 2 outputs: h * w * c wrapped in int32 */
TTEST(layer_output_too_large) {
    ipup_layer_info info[4];
    char msg[256];
    TT_EQ_INT(tiny_model(&po_model, 40000, 40000, 1, "conv2,flatten,dense2,xent", msg, sizeof msg), IPUP_OK);
    TT_EQ_INT(ipup_model_info(&po_model, info, 4, msg, sizeof msg), IPUP_ERR_CONFIG);
    TT_CONTAINS(msg, "layer 0 (conv2): its output 39998 x 39998 x 2 is more than 2^31-1 values; use fewer units or channels");
}

/* one feature in, 1073741000 units, five relus: a relu whose output the next layer keeps
   keeps nothing (it reads that output), so relus 1, 3 and 5 each stash 1073741000 floats,
   and the third one's end and the labels' offset pass 2^31 while B x input is 1 */
TTEST(stash_offsets_past_int32) {
    TT_EQ_INT(po_plan_model(1, 1, 1, "dense1073741000,relu,relu,relu,relu,relu,xent", 1), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&po_emu), "stage 0: a stash entry (the inputs kept for the backward) needs 3221223001 floats with micro-batch 1, more than 2^31-1");
    TT_CONTAINS(ipup_last_error(&po_emu), "lower the micro-batch (cfg.microbatch) or put fewer layers in this stage (more stages)");
    /* two kept relus fit (1 + 2 x 1073741000 floats); the labels and the dlogits then pass 2^31 */
    TT_EQ_INT(po_plan_model(1, 1, 1, "dense1073741000,relu,relu,relu,xent", 1), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&po_emu), "labels) needs");
    /* the weights of one stage: 2 x 2^30 (weights and biases, padded) */
    TT_EQ_INT(po_plan_model(1, 1, 1, "dense1073741824,xent", 1), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&po_emu), "stage 0: the weights needs 2147483648 floats");
    /* 2^28 samples of 1 feature into 16 units: the activations are 2^32 floats */
    TT_EQ_INT(po_plan_model(1, 1, 1, "dense16,xent", 1 << 28), IPUP_ERR_CAPACITY);
    TT_CONTAINS(ipup_last_error(&po_emu), "an activation buffer needs 4294967296 floats with micro-batch 268435456");
}

/* repeat x replicas x micro-batches outfeed records beyond size_t: 0, not a wrapped size */
TTEST(host_records_past_size_t) {
    ipup_config cfg;
    char msg[256];
    TT_EQ_INT(tiny_model(&po_model, 1, 1, 4, "dense2,xent", msg, sizeof msg), IPUP_OK);
    IPUPIPE_MEMSET(&cfg, 0, sizeof cfg);
    cfg.model = &po_model;
    cfg.repeat = 0x7fffffff;
    cfg.replicas = 0x7fffffff;
    cfg.microbatches = 1 << 20;
    TT_CHECK(ipup_host_bytes(&cfg) == 0);
    cfg.replicas = 1;
    cfg.microbatches = 1;
    TT_CHECK(ipup_host_bytes(&cfg) > (size_t)0x7fffffff * sizeof(ipup_outfeed_rec) / 2u || sizeof(size_t) < 8u);
}

/* ring sizes saturate instead of wrapping */
TTEST(ring_bytes_saturate) {
    TT_CHECK(ipup_ring_bytes(1u << 31, (size_t)-1 / 4u) == (size_t)-1);
    TT_CHECK(ipup_ring_bytes(4u, (size_t)-1) == (size_t)-1);
    TT_CHECK(ipup_ring_bytes(4u, 100u) == 4u * 128u);
}

static const ttest_case cases[] = {
    TT_CASE(input_65537_squared), TT_CASE(conv_backward_scratch), TT_CASE(layer_output_too_large),
    TT_CASE(stash_offsets_past_int32), TT_CASE(host_records_past_size_t), TT_CASE(ring_bytes_saturate),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
