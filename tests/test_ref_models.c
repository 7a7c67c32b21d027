/* test_ref_models.c - the four MLPerf Tiny reference networks (examples/common/mnist_texts.h,
 * docs/models.md): ipup_model_info's counts equal what Keras's model.summary() gives for the
 * mlcommons/tiny code, and each network trains a step over 2 and 4 IPUs with the same bits
 * as on 1 IPU (both runners, several schedules).
 *
 * The Keras numbers are derived by hand from the reference code (docs/models.md says how):
 * trainable and non-trainable parameters as model.summary() prints them, MACs of one
 * forward pass of one sample (conv kh*kw*ci*co*oh*ow, depthwise kh*kw*c*oh*ow, dense
 * in*out). MobileNet has 85 layers: this test compiles the implementation itself with
 * IPUP_MAX_LAYERS 128 (an OWN_IMPL_TEST).
 */
#define IPUP_MAX_LAYERS 128
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "mnist_texts.h"
#include "ttest.h"

#include <stdint.h>

typedef struct {
    const char *name, *text;
    int h, w, c, classes;
    long long trainable, nontrainable, macs; /* Keras / MLPerf Tiny */
} rm_net;

static const rm_net rm_nets[] = {
    {MNT_DS_CNN_NAME, MNT_DS_CNN_LAYERS, 49, 10, 1, 12, 23756, 1152, 2656768},
    {MNT_MOBILENET_NAME, MNT_MOBILENET_LAYERS, 96, 96, 3, 2, 216322, 5472, 7489664},
    {MNT_RESNET8_NAME, MNT_RESNET8_LAYERS, 32, 32, 3, 10, 78186, 480, 12501632},
    {MNT_FC_AE_NAME, MNT_FC_AE_LAYERS, 1, 1, 640, 0, 267928, 2064, 264192},
    {MNT_RESNET8_FASHION_NAME, MNT_RESNET8_FASHION_LAYERS, 28, 28, 1, 10, 77898, 480, 9345920},
};
#define RM_NETS ((int)(sizeof rm_nets / sizeof rm_nets[0]))

static ipup_model_desc rm_desc;
static ipup_layer_info rm_info[IPUP_MAX_LAYERS];

static int rm_parse(const rm_net *n, ipup_model_desc *d) {
    char msg[256];
    memset(d, 0, sizeof *d);
    if (ipup_model_parse(n->text, d, msg, sizeof msg) != IPUP_OK) {
        TT_FAILF("%s: %s", n->name, msg);
        return -1;
    }
    d->in_h = n->h;
    d->in_w = n->w;
    d->in_c = n->c;
    return 0;
}

TTEST(keras_counts) {
    int i, l;
    for (i = 0; i < RM_NETS; i++) {
        const rm_net *n = &rm_nets[i];
        long long tr = 0, nt = 0, macs = 0;
        char msg[256];
        if (rm_parse(n, &rm_desc)) continue;
        if (ipup_model_info(&rm_desc, rm_info, IPUP_MAX_LAYERS, msg, sizeof msg) != IPUP_OK) {
            TT_FAILF("%s: %s", n->name, msg);
            continue;
        }
        for (l = 0; l < rm_desc.n_layers; l++) {
            const ipup_layer_info *I = &rm_info[l];
            if (!I->frozen) tr += (long long)I->n_w + I->n_b;
            nt += I->n_nontrain;
            macs += I->macs;
        }
        TT_CHECK_MSG(tr == n->trainable, "%s: trainable %lld, Keras %lld", n->name, tr,
                     n->trainable);
        TT_CHECK_MSG(nt == n->nontrainable, "%s: non-trainable %lld, Keras %lld", n->name, nt,
                     n->nontrainable);
        TT_CHECK_MSG(macs == n->macs, "%s: MACs %lld, Keras %lld", n->name, macs, n->macs);
        printf("    %-18s trainable %7lld non-trainable %5lld MACs %9lld (%d layers)\n", n->name,
               tr, nt, macs, (int)rm_desc.n_layers);
    }
}

/* ---------------------------------------------------------------- same bits over IPUs */

#define RM_B 2 /* micro-batch */
#define RM_M 4 /* micro-batches per step */

/* deterministic inputs with some structure: a class-dependent offset plus noise */
static int rm_feed(void *user, const ipup_feed *f) {
    int i, k;
    (void)user;
    for (i = 0; i < f->n; i++) {
        const uint64_t s = (uint64_t)(f->sample0 + i);
        const int32_t y = f->classes ? (int32_t)(s % (uint64_t)f->classes) : 0;
        for (k = 0; k < f->row; k++)
            f->x[(size_t)i * (size_t)f->row + (size_t)k] =
                ipup_rng_uniform_f32(11, s, (uint64_t)k) + (k % 7 == y % 7 ? 0.5f : 0.0f);
        if (f->labels) f->labels[i] = y;
    }
    if (f->targets)
        memcpy(f->targets, f->x, (size_t)f->n * (size_t)f->target_width * sizeof(float));
    return 0;
}

static ipup_emu rm_emu;

/* FNV-1a over every tensor's bytes and the step's mean loss */
static uint64_t rm_hash(ipup_emu *e, double loss) {
    uint64_t h = UINT64_C(1469598103934665603);
    int32_t i, n = ipup_tensor_count(e);
    size_t k;
    for (i = 0; i < n; i++) {
        ipup_tensor_info t;
        const unsigned char *p;
        if (ipup_tensor_get(e, i, &t) != IPUP_OK) return 0;
        p = (const unsigned char *)t.data;
        for (k = 0; k < (size_t)t.n * sizeof(float); k++) h = (h ^ p[k]) * UINT64_C(1099511628211);
    }
    {
        const unsigned char *p = (const unsigned char *)&loss;
        for (k = 0; k < sizeof loss; k++) h = (h ^ p[k]) * UINT64_C(1099511628211);
    }
    return h;
}

/* One step of d on `stages` IPUs (balanced split); the hash of the state after it, or 0. */
static uint64_t rm_step(const char *name, const ipup_model_desc *d, int stages,
                        ipup_sched_kind sched, ipup_runner_kind runner) {
    ipup_config c;
    ipup_plan plan;
    ipup_run_stats st;
    void *pool[4] = {NULL, NULL, NULL, NULL}, *host = NULL;
    uint64_t h = 0;
    int i;
    memset(&c, 0, sizeof c);
    c.model = d;
    c.stages = stages;
    c.schedule = sched;
    c.runner = runner;
    c.microbatch = RM_B;
    c.microbatches = RM_M;
    c.repeat = 1;
    c.seed = 7;
    c.opt.kind = IPUP_OPT_MOMENTUM;
    c.opt.lr = 0.01f;
    c.opt.momentum = 0.9f;
    c.infeed = rm_feed;
    if (ipup_plan_config(&rm_emu, &c, &plan) != IPUP_OK) {
        TT_FAILF("%s on %d IPUs: plan: %.300s", name, stages, ipup_last_error(&rm_emu));
        return 0;
    }
    c.host.bytes = plan.host_bytes;
    c.host.mem = host = aligned_alloc(64, (plan.host_bytes + 63) / 64 * 64);
    for (i = 0; i < stages; i++) {
        c.ipu[i].bytes = plan.ipu_bytes[i];
        c.ipu[i].mem = pool[i] = aligned_alloc(64, (plan.ipu_bytes[i] + 63) / 64 * 64 + 64);
    }
    if (ipup_init(&rm_emu, &c) != IPUP_OK) {
        TT_FAILF("%s on %d IPUs: init: %.300s", name, stages, ipup_last_error(&rm_emu));
    } else {
        if (ipup_run_steps(&rm_emu, 1, &st) != IPUP_OK)
            TT_FAILF("%s on %d IPUs: run: %.300s", name, stages, ipup_last_error(&rm_emu));
        else
            h = rm_hash(&rm_emu, st.loss_mean);
        ipup_shutdown(&rm_emu);
    }
    for (i = 0; i < 4; i++) free(pool[i]);
    free(host);
    return h;
}

TTEST(same_bits_over_ipus) {
    static const struct {
        int stages;
        ipup_sched_kind sched;
        ipup_runner_kind runner;
    } confs[] = {
        {2, IPUP_SCHED_1F1B, IPUP_RUNNER_THREADS},   {4, IPUP_SCHED_INTERLEAVED, IPUP_RUNNER_COOP},
        {2, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP},    {2, IPUP_SCHED_GPIPE, IPUP_RUNNER_THREADS},
        {4, IPUP_SCHED_GROUPED, IPUP_RUNNER_THREADS}, {4, IPUP_SCHED_ZBH1, IPUP_RUNNER_COOP},
    };
    /* under Valgrind and the sanitizers (ttest_slow): one 2-IPU and one 4-IPU configuration */
    const int n_confs = ttest_slow() ? 2 : (int)(sizeof confs / sizeof confs[0]);
    int i, k;
    for (i = 0; i < 4; i++) { /* the four reference networks */
        const rm_net *n = &rm_nets[i];
        uint64_t ref;
        if (rm_parse(n, &rm_desc)) continue;
        ref = rm_step(n->name, &rm_desc, 1, IPUP_SCHED_GROUPED, IPUP_RUNNER_COOP);
        TT_CHECK_MSG(ref != 0, "%s: no reference step", n->name);
        for (k = 0; k < n_confs; k++) {
            uint64_t h =
                rm_step(n->name, &rm_desc, confs[k].stages, confs[k].sched, confs[k].runner);
            TT_CHECK_MSG(h == ref, "%s on %d IPUs, %s, %s runner: state %016llx, 1 IPU %016llx",
                         n->name, confs[k].stages, ipup_sched_kind_name(confs[k].sched),
                         confs[k].runner == IPUP_RUNNER_THREADS ? "threads" : "coop",
                         (unsigned long long)h, (unsigned long long)ref);
        }
    }
}

static const ttest_case cases[] = {TT_CASE(keras_counts), TT_CASE(same_bits_over_ipus)};

int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
