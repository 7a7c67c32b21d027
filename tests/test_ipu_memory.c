/* test_ipu_memory.c - finite IPU memory (cfg.ipu_bytes), per-stage recomputation
 * (cfg.recompute_stages) and offload (IPUP_OFFLOAD_OPTIMIZER / _WEIGHTS / _ACTIVATIONS):
 *  - over cfg.ipu_bytes, ipup_plan_config, ipup_plan_pools and ipup_init return
 *    IPUP_ERR_OOM with the same message: the IPU, its stages, its bytes by category, the
 *    limit, and the remedies in the tutorials' order, each offload's saving equal to what
 *    the plan with that offload saves; at exactly the bytes needed, the plan passes;
 *  - for every offload x recomputation combination the plan's bytes are what ipup_init
 *    carves (one byte less is refused), and training gives the bits of the plain run;
 *  - the recomputation mask: cfg.recompute alone is every stage but the last; bits past
 *    the stage count are refused; recompute_saved follows the mask;
 *  - on the MNIST mlp and cnn, each offload costs fewer on-chip bytes than it saves
 *    (the chunked staging of the optimizer state: IPUPIPE_STAGING_FLOATS per slot);
 *  - an offload that would not save on-chip bytes is not applied, with a warning;
 *  - ipup_bytes_parse, ipup_offload_parse, ipup_stage_mask_parse.
 */
#include "ipupipe.h"
#include "mnist_models.h"
#include "tiny_model.h"
#include "ttest.h"

static ipup_emu im_emu;
IPUP_ALIGN64 static uint8_t im_host[1u << 22];
IPUP_ALIGN64 static uint8_t im_pool[8][1u << 18];
IPUP_ALIGN64 static uint8_t im_stream[8][1u << 18];
IPUP_ALIGN64 static uint8_t im_scratch[IPUP_PLAN_SCRATCH_BYTES(4, 8) + 64];

static const char *const im_text = "dense24,relu,dense16,relu,dense12,relu,dense8,relu,dense4,xent";

static void im_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 20; j++) x[j] = (float)((sample0 + i) * 7 + j * 3) / 97.0f - 0.5f;
    *label = (int32_t)((sample0 + i) % 4);
}
static tiny_data im_data = {im_sample, 20};
/* a conv model with an arg-max pool, dropout and a frozen layer, on 6x6x2 images */
static const char *const im_conv_text =
    "conv4,relu,maxpool2,flatten,dropout0.25,dense6:frozen,relu,dense4,xent";
static void im_sample_img(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    for (j = 0; j < 72; j++) x[j] = (float)(((sample0 + i) * 5 + j * 11) % 23) / 23.0f - 0.5f;
    *label = (int32_t)((sample0 + i) % 4);
}
static tiny_data im_data_img = {im_sample_img, 72};

/* the tiny model in S stages, B=3, M=6, Adam, 1f1b (stashes deeper than one) */
static ipup_config im_config(const ipup_model_desc *m, int32_t S) {
    ipup_config c = tiny_config(m, S, 3, 6, 2, 5, IPUP_OPT_ADAM, 0.01f, tiny_infeed, &im_data);
    c.schedule = IPUP_SCHED_1F1B;
    c.host.mem = im_host;
    c.host.bytes = sizeof im_host;
    return c;
}
/* pools of exactly the plan's bytes (minus `less` on IPU `short_ipu`) */
static void im_pools(ipup_config *c, const ipup_plan *p, int32_t short_ipu, size_t less) {
    int32_t i;
    for (i = 0; i < p->ipus; i++) {
        c->ipu[i].mem = im_pool[i];
        c->ipu[i].bytes = p->ipu_bytes[i % p->devices] - (i == short_ipu ? less : 0);
        c->stream[i].mem = p->stream_bytes[i % p->devices] ? im_stream[i] : NULL;
        c->stream[i].bytes = p->stream_bytes[i % p->devices];
    }
}
/* the weights of replica 0 after two steps (n floats into w); the plan's figures into p */
static int im_train(const ipup_config *cfg, float *w, size_t cap, size_t *n, ipup_plan *p) {
    ipup_config c = *cfg;
    int32_t t, k;
    int rc = ipup_plan_config(&im_emu, &c, p);
    ipup_mem_report m;
    *n = 0;
    if (rc) return rc;
    im_pools(&c, p, -1, 0);
    if ((rc = ipup_init(&im_emu, &c)) != IPUP_OK) return rc;
    for (k = 0; k < p->ipus; k++) {
        ipup_memory_report(&im_emu, k, &m);
        size_t want = p->ipu_bytes[k % p->devices], want_s = p->stream_bytes[k % p->devices];
        if (m.used != want || m.stream_used != want_s)
            TT_FAILF("IPU%d carves %zu + %zu stream, the plan said %zu + %zu", (int)k, m.used,
                     m.stream_used, want, want_s);
    }
    rc = ipup_run(&im_emu, NULL);
    for (t = 0; rc == IPUP_OK && t < ipup_tensor_count(&im_emu); t++) {
        ipup_tensor_info ti;
        ipup_tensor_get(&im_emu, t, &ti);
        if (*n + (size_t)ti.n > cap) break;
        memcpy(w + *n, ti.data, (size_t)ti.n * sizeof(float));
        *n += (size_t)ti.n;
    }
    ipup_shutdown(&im_emu);
    return rc;
}

TTEST(every_offload_and_recompute_gives_the_plain_bits_and_the_planned_bytes) {
    static float ref[8192], got[8192];
    ipup_model_desc m;
    size_t nr = 0, ng = 0;
    int32_t S, off, rec, cases = 0, img;
    ipup_plan p;
    for (img = 0; img < 2; img++)
    for (S = 1; S <= 3; S++) {
        ipup_config c;
        if (img) tiny_model_or_exit(&m, 6, 6, 2, im_conv_text);
        else tiny_model_or_exit(&m, 1, 1, 20, im_text);
        c = im_config(&m, S);
        if (img) c.infeed_user = &im_data_img;
        TT_EQ_INT(im_train(&c, ref, 8192, &nr, &p), IPUP_OK);
        TT_CHECK(nr > 100);
        for (off = 0; off <= IPUP_OFFLOAD_ALL; off++)
            for (rec = 0; rec < 3; rec++) {
                ipup_config d = c;
                d.offload = off;
                d.recompute = rec == 1;
                d.recompute_stages = rec == 2 ? (1u << S) - 1u : 0u; /* the last stage too */
                TT_EQ_INT(im_train(&d, got, 8192, &ng, &p), IPUP_OK);
                if (ng != nr || memcmp(ref, got, nr * sizeof(float)) != 0)
                    TT_FAILF("%s S=%d offload %d recompute %d: the weights differ from the plain run",
                             img ? "conv" : "dense", (int)S, (int)off, (int)rec);
                cases++;
                /* one byte less on the last IPU: refused */
                {
                    ipup_config e = d;
                    int32_t last = p.ipus - 1;
                    im_pools(&e, &p, last, 1);
                    TT_EQ_INT(ipup_init(&im_emu, &e), IPUP_ERR_OOM);
                    TT_CONTAINS(ipup_last_error(&im_emu), "out of memory");
                    ipup_shutdown(&im_emu);
                }
            }
    }
    printf("     %d offload x recomputation configurations, bits and bytes checked\n", cases);
}

/* the number after `key` in text, or 0 */
static size_t im_after(const char *text, const char *key) {
    const char *p = strstr(text, key);
    return p ? (size_t)strtoull(p + strlen(key), NULL, 10) : 0;
}

TTEST(over_the_limit_the_message_names_stage_bytes_and_remedies_in_order) {
    static const char *const order[] = {"recomputation of stage 0", "offload the optimizer state", "offload the weights",
                                        "offload the activations", "more stages", "smaller micro-batch"};
    ipup_model_desc m;
    ipup_config c;
    ipup_plan p, q;
    char msg[IPUP_MSG_MAX], text[IPUP_MSG_MAX];
    const char *prev;
    size_t need, bytes = IPUP_PLAN_SCRATCH_BYTES(2, 6);
    int i, bit;
    tiny_model_or_exit(&m, 1, 1, 20, im_text);
    c = im_config(&m, 2);
    c.schedule = IPUP_SCHED_GROUPED; /* deep stashes: recomputation saves */
    c.microbatch = 16;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &p), IPUP_OK);
    need = p.ipu_bytes[0] > p.ipu_bytes[1] ? p.ipu_bytes[0] : p.ipu_bytes[1];
    c.ipu_bytes = need; /* exactly enough */
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &q), IPUP_OK);
    c.ipu_bytes = p.ipu_bytes[0] - 1;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &q), IPUP_ERR_OOM);
    snprintf(text, sizeof text, "%s", ipup_last_error(&im_emu));
    printf("     %s\n", text);
    TT_EQ_INT(ipup_plan_pools(&c, &q, im_scratch, bytes, msg, sizeof msg), IPUP_ERR_OOM);
    TT_CHECK_MSG(strcmp(msg, text) == 0, "ipup_plan_pools says '%.200s'", msg);
    im_pools(&c, &p, -1, 0); /* pools large enough: the limit refuses */
    TT_EQ_INT(ipup_init(&im_emu, &c), IPUP_ERR_OOM);
    TT_CHECK_MSG(strcmp(ipup_last_error(&im_emu), text) == 0, "ipup_init says '%.200s'", ipup_last_error(&im_emu));
    ipup_shutdown(&im_emu);
    TT_CHECK(strstr(text, "IPU0 (replica 0, device 0) out of memory: stage 0 (layers ") != NULL);
    snprintf(msg, sizeof msg, "needs %zu bytes (weights %zu, grads %zu, optimizer %zu, stash %zu, exchange %zu, "
                              "scratch %zu) but the IPU has %zu (cfg.ipu_bytes)",
             p.ipu_bytes[0], p.mem[0].by_category[IPUP_MEM_WEIGHTS], p.mem[0].by_category[IPUP_MEM_GRADS],
             p.mem[0].by_category[IPUP_MEM_OPTIMIZER], p.mem[0].by_category[IPUP_MEM_STASH],
             p.mem[0].by_category[IPUP_MEM_EXCHANGE], p.mem[0].by_category[IPUP_MEM_SCRATCH], p.ipu_bytes[0] - 1);
    TT_CHECK_MSG(strstr(text, msg) != NULL, "the message lacks '%.200s'", msg);
    for (i = 0, prev = text; i < 6; i++) {
        const char *at = strstr(text, order[i]);
        if (!at || at < prev) TT_FAILF("'%s' missing or out of the tutorials' order", order[i]);
        else prev = at;
    }
    for (bit = 1; bit <= 4; bit <<= 1) { /* each offload saves what its plan says */
        static const char *const key[5] = {"", "IPUP_OFFLOAD_OPTIMIZER; saves ", "IPUP_OFFLOAD_WEIGHTS; saves ", "",
                                           "IPUP_OFFLOAD_ACTIVATIONS; saves "};
        ipup_config d = c;
        d.ipu_bytes = 0;
        d.offload = bit;
        TT_EQ_INT(ipup_plan_config(&im_emu, &d, &q), IPUP_OK);
        TT_EQ_INT(im_after(text, key[bit]), p.ipu_bytes[0] - q.ipu_bytes[0]);
    }
    { /* recomputation too, and it fits after all remedies but the last two */
        ipup_config d = c;
        size_t saves = im_after(text, "(cfg.recompute_stages; saves ");
        d.ipu_bytes = 0;
        d.recompute = 1;
        TT_EQ_INT(ipup_plan_config(&im_emu, &d, &q), IPUP_OK);
        TT_EQ_INT(saves, p.ipu_bytes[0] - q.ipu_bytes[0]);
    }
    /* with an offload on, it is not offered again */
    c.offload = IPUP_OFFLOAD_OPTIMIZER;
    c.ipu_bytes = 1024;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &q), IPUP_ERR_OOM);
    TT_CHECK(strstr(ipup_last_error(&im_emu), "offload the optimizer state") == NULL);
    TT_CONTAINS(ipup_last_error(&im_emu), "; IPU1 needs "); /* the other IPU over it too */
}

TTEST(recompute_mask_default_is_every_stage_but_the_last) {
    ipup_model_desc m;
    ipup_config c;
    ipup_plan none, dflt, all;
    tiny_model_or_exit(&m, 1, 1, 20, im_text);
    c = im_config(&m, 3);
    c.schedule = IPUP_SCHED_GROUPED;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &none), IPUP_OK);
    c.recompute = 1;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &dflt), IPUP_OK);
    c.recompute_stages = 7u;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &all), IPUP_OK);
    TT_CHECK(dflt.ipu_bytes[0] < none.ipu_bytes[0]);
    TT_EQ_INT(dflt.ipu_bytes[2], none.ipu_bytes[2]); /* the last stage does not recompute */
    TT_CHECK(all.ipu_bytes[2] != none.ipu_bytes[2]);  /* unless the mask says so */
    /* recompute_saved follows the mask (with no stage recomputing: the default's) */
    TT_EQ_INT(none.mem[2].recompute_saved, 0);
    TT_CHECK(all.mem[2].recompute_saved > 0);
    TT_EQ_INT(none.mem[0].recompute_saved, dflt.mem[0].recompute_saved);
    c.recompute_stages = 8u; /* stage 3 of 3 */
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &all), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&im_emu), "cfg.recompute_stages has bit 3 set but the model has 3 stages");
    c.recompute_stages = 0;
    c.offload = 8;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, &all), IPUP_ERR_CONFIG);
    TT_CONTAINS(ipup_last_error(&im_emu), "cfg.offload is 8");
}

/* on-chip bytes of every IPU of the MNIST model `name` (2 stages, its recipe) with `off` */
static void im_mnist(const char *name, int32_t off, ipup_plan *p) {
    const mnist_model_spec *s = mnist_model_find(name);
    static ipup_model_desc d;
    char msg[256];
    ipup_config c;
    TT_EQ_INT(mnist_model_desc(s, &d, msg, sizeof msg), IPUP_OK);
    c = tiny_config(&d, 2, s->batch, s->accumulate, 1, 1, IPUP_OPT_ADAM, 0.001f, NULL, NULL);
    c.host.mem = im_host;
    c.host.bytes = sizeof im_host;
    c.offload = off;
    TT_EQ_INT(ipup_plan_config(&im_emu, &c, p), IPUP_OK);
}

TTEST(mnist_offload_never_costs_more_on_chip_than_it_saves) {
    static const char *const models[] = {"mlp", "cnn"};
    int i, bit, d;
    for (i = 0; i < 2; i++) {
        ipup_plan base, p;
        im_mnist(models[i], 0, &base);
        for (bit = 1; bit <= 4; bit <<= 1) {
            im_mnist(models[i], bit, &p);
            for (d = 0; d < p.devices; d++) {
                size_t moved = p.stream_bytes[d];
                size_t staging = p.mem[d].by_category[IPUP_MEM_SCRATCH] - base.mem[d].by_category[IPUP_MEM_SCRATCH];
                TT_CHECK(p.ipu_bytes[d] <= base.ipu_bytes[d]);
                if (moved) {
                    TT_CHECK(staging < moved);
                    TT_EQ_INT(base.ipu_bytes[d] - p.ipu_bytes[d], moved - staging);
                }
                printf("     %s IPU%d offload %d: %zu bytes moved, %zu of staging, %zu -> %zu on chip\n", models[i], d,
                       bit, moved, staging, base.ipu_bytes[d], p.ipu_bytes[d]);
                if (bit == IPUP_OFFLOAD_OPTIMIZER) { /* two chunks of IPUPIPE_STAGING_FLOATS (Adam) */
                    TT_CHECK(moved > 0);
                    TT_CHECK(staging <= 2u * IPUPIPE_STAGING_FLOATS * sizeof(float));
                }
            }
        }
    }
}

/* an offload that would not save is not applied, and says so in the warnings */
TTEST(offload_not_applied_is_a_warning) {
    const mnist_model_spec *s = mnist_model_find("mlp");
    static ipup_model_desc d;
    char msg[IPUP_MSG_MAX];
    ipup_config c;
    ipup_plan p;
    TT_EQ_INT(mnist_model_desc(s, &d, msg, sizeof msg), IPUP_OK);
    c = tiny_config(&d, 2, s->batch, 4, 1, 1, IPUP_OPT_SGD, 0.1f, NULL, NULL);
    c.offload = IPUP_OFFLOAD_ACTIVATIONS;
    c.schedule = IPUP_SCHED_1F1B; /* the last stage stashes one entry */
    TT_EQ_INT(ipup_plan_pools(&c, &p, im_scratch, sizeof im_scratch, msg, sizeof msg), IPUP_OK);
    TT_CONTAINS(msg, "offload: stage 1 keeps its stash on chip: one entry of staging (");
    TT_CHECK(p.stream_bytes[0] > 0 && p.stream_bytes[1] == 0);
    c.offload = IPUP_OFFLOAD_OPTIMIZER; /* nothing to say */
    TT_EQ_INT(ipup_plan_pools(&c, &p, im_scratch, sizeof im_scratch, msg, sizeof msg), IPUP_OK);
    TT_CHECK(strstr(msg, "offload:") == NULL);
}

TTEST(parsers) {
    size_t b = 0;
    int32_t o = 0;
    uint32_t mask = 0;
    TT_EQ_INT(ipup_bytes_parse("256K", &b), IPUP_OK);
    TT_EQ_INT(b, 262144);
    TT_EQ_INT(ipup_bytes_parse("1M", &b), IPUP_OK);
    TT_EQ_INT(b, 1048576);
    TT_EQ_INT(ipup_bytes_parse("4MB", &b), IPUP_OK);
    TT_EQ_INT(b, 4194304);
    TT_EQ_INT(ipup_bytes_parse("2KiB", &b), IPUP_OK);
    TT_EQ_INT(b, 2048);
    TT_EQ_INT(ipup_bytes_parse("65536", &b), IPUP_OK);
    TT_EQ_INT(b, 65536);
    TT_EQ_INT(ipup_bytes_parse("4X", &b), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_bytes_parse("", &b), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_bytes_parse("-1", &b), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_bytes_parse("99999999999999999999", &b), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_bytes_parse("999999999999999999G", &b), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_offload_parse("optimizer,weights,activations", &o), IPUP_OK);
    TT_EQ_INT(o, IPUP_OFFLOAD_ALL);
    TT_EQ_INT(ipup_offload_parse("weights", &o), IPUP_OK);
    TT_EQ_INT(o, IPUP_OFFLOAD_WEIGHTS);
    TT_EQ_INT(ipup_offload_parse("none", &o), IPUP_OK);
    TT_EQ_INT(o, 0);
    TT_EQ_INT(ipup_offload_parse("weights,", &o), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_offload_parse("stash", &o), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_stage_mask_parse("0,1", &mask), IPUP_OK);
    TT_EQ_INT((int)mask, 3);
    TT_EQ_INT(ipup_stage_mask_parse("31", &mask), IPUP_OK);
    TT_CHECK(mask == 0x80000000u);
    TT_EQ_INT(ipup_stage_mask_parse("32", &mask), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_stage_mask_parse("1,1", &mask), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_stage_mask_parse("1,", &mask), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_stage_mask_parse("", &mask), IPUP_ERR_PARSE);
    TT_EQ_INT(ipup_bytes_parse(NULL, &b), IPUP_ERR_ARG);
}

static const ttest_case cases[] = {
    TT_CASE(every_offload_and_recompute_gives_the_plain_bits_and_the_planned_bytes),
    TT_CASE(over_the_limit_the_message_names_stage_bytes_and_remedies_in_order),
    TT_CASE(recompute_mask_default_is_every_stage_but_the_last),
    TT_CASE(mnist_offload_never_costs_more_on_chip_than_it_saves),
    TT_CASE(offload_not_applied_is_a_warning),
    TT_CASE(parsers),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
