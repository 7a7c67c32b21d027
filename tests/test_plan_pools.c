/* test_plan_pools.c - ipup_plan_pools, the plan in a scratch of
 * IPUP_PLAN_SCRATCH_BYTES(S, M), against ipup_plan_config on a whole ipup_emu: the same
 * plan (every byte of ipup_plan), the same code and the same message, over models,
 * stage counts, micro-batch counts, every schedule, recomputation, offload, replicas
 * and optimizers, refused configurations included; then its own refusals (scratch too
 * small by one byte, NULL scratch, NULL plan) and a scratch at every alignment; and the
 * host pool's outfeed room by runner.
 */
#include "ipupipe.h"
#include "ttest.h"
#include "tiny_model.h"

static ipup_emu pp_emu;
IPUP_ALIGN64 static uint8_t pp_host[1u << 20];
IPUP_ALIGN64 static uint8_t pp_scratch[IPUP_PLAN_SCRATCH_BYTES(8, 16) + 64];

/* one configuration both ways; 1 when they agree */
static int pp_same(const ipup_config *cfg, const char *what, int *planned) {
    ipup_config c = *cfg;
    ipup_plan a, b;
    char msg[IPUP_MSG_MAX];
    size_t bytes = IPUP_PLAN_SCRATCH_BYTES((size_t)(c.stages > 0 ? c.stages : 1), (size_t)(c.microbatches > 0 ? c.microbatches : 1));
    int ra, rb;
    c.host.mem = pp_host;
    c.host.bytes = sizeof pp_host;
    ra = ipup_plan_config(&pp_emu, &c, &a);
    rb = ipup_plan_pools(cfg, &b, pp_scratch, bytes, msg, sizeof msg);
    if (ra != rb) {
        TT_FAILF("%.60s: ipup_plan_config %d, ipup_plan_pools %d (%.150s)", what, ra, rb, msg);
        return 0;
    }
    if (ra != IPUP_OK) {
        if (strcmp(ipup_last_error(&pp_emu), msg) != 0 || !msg[0]) {
            TT_FAILF("%.60s: messages differ: '%.150s' and '%.150s'", what, ipup_last_error(&pp_emu), msg);
            return 0;
        }
        return 1;
    }
    (*planned)++;
    if (memcmp(&a, &b, sizeof a) != 0) {
        TT_FAILF("%s: the plans differ (IPU0 %zu and %zu bytes)", what, a.ipu_bytes[0], b.ipu_bytes[0]);
        return 0;
    }
    return 1;
}

TTEST(same_plan_as_ipup_plan_config) {
    static const char *const models[] = {"dense16,relu,dense8,relu,dense4,xent", "conv4,relu,maxpool2,flatten,dense4,xent",
                                         "dense12,gelu,dropout0.25,dense6,relu,dense3,xent"};
    static const int32_t shapes[3][3] = {{1, 1, 10}, {8, 8, 2}, {1, 1, 7}};
    static const int32_t Ms[] = {1, 2, 3, 4, 8, 16};
    ipup_model_desc m;
    int mi, S, k, sk, v, planned = 0, cases = 0;
    for (mi = 0; mi < 3; mi++) {
        tiny_model_or_exit(&m, shapes[mi][0], shapes[mi][1], shapes[mi][2], models[mi]);
        for (S = 1; S <= 4; S++)
            for (k = 0; k < (int)(sizeof Ms / sizeof Ms[0]); k++)
                for (sk = 0; sk <= IPUP_SCHED_ZBH1; sk++) /* dualpipe-v: test_dualpipe.sh */
                    for (v = 0; v < 4; v++) {
                        ipup_config c = tiny_config(&m, S, 1 + v, Ms[k], 1 + v % 2, 3, (ipup_optimizer_kind)(v % 3), 0.1f, NULL, NULL);
                        char what[160];
                        c.schedule = (ipup_sched_kind)sk;
                        c.recompute = v & 1;
                        c.offload = (v >> 1) & 1;
                        c.replicas = 1 + (v == 3);
                        if (sk == IPUP_SCHED_INTERLEAVED_1F1B) c.virtual_stages = 2;
                        ipup_snprintf(what, sizeof what, "model %d, S=%d, M=%d, %s, variant %d", mi, S, (int)Ms[k],
                                      ipup_sched_kind_name(c.schedule), v);
                        cases++;
                        if (!pp_same(&c, what, &planned)) return;
                    }
    }
    printf("    %d configurations, %d planned, the others refused alike\n", cases, planned);
    TT_CHECK(planned > cases / 2);
}

TTEST(scratch_bounds) {
    ipup_model_desc m;
    ipup_config c;
    ipup_plan p, ref;
    char msg[IPUP_MSG_MAX];
    size_t need = IPUP_PLAN_SCRATCH_BYTES(2, 4), off;
    tiny_model_or_exit(&m, 1, 1, 10, "dense16,relu,dense4,xent");
    c = tiny_config(&m, 2, 4, 4, 1, 3, IPUP_OPT_ADAM, 0.01f, NULL, NULL);
    /* the documented size: far below an ipup_emu */
    TT_CHECK(IPUP_PLAN_SCRATCH_BYTES(1, 1) < sizeof(ipup_emu) / 8);
    TT_CHECK(need == sizeof(ipup__core) + 64 + 3 * 2 * 4 * sizeof(ipup_op));
    TT_EQ_INT(ipup_plan_pools(&c, &ref, pp_scratch, need, msg, sizeof msg), IPUP_OK);
    TT_CHECK(ref.ipu_bytes[0] > 0 && ref.ipu_bytes[1] > 0);
    /* one byte less is refused, with the bytes to give */
    TT_EQ_INT(ipup_plan_pools(&c, &p, pp_scratch, need - 1, msg, sizeof msg), IPUP_ERR_CAPACITY);
    TT_CONTAINS(msg, "IPUP_PLAN_SCRATCH_BYTES(2, 4)");
    TT_EQ_INT(ipup_plan_pools(&c, &p, NULL, need, msg, sizeof msg), IPUP_ERR_CAPACITY);
    TT_CONTAINS(msg, "scratch is NULL");
    TT_EQ_INT(ipup_plan_pools(&c, NULL, pp_scratch, need, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CONTAINS(msg, "plan is NULL");
    TT_EQ_INT(ipup_plan_pools(NULL, &p, pp_scratch, need, msg, sizeof msg), IPUP_ERR_ARG);
    TT_CONTAINS(msg, "cfg.model is NULL");
    c.microbatches = 0x7fffffff;
    c.stages = 0x7fffffff;
    TT_CHECK(ipup_plan_pools(&c, &p, pp_scratch, need, msg, sizeof msg) < 0);
    TT_CHECK(msg[0] != 0);
    c.microbatches = 4;
    c.stages = 2;
    /* any alignment of the scratch: the same plan */
    for (off = 1; off < 64; off += 7) {
        TT_EQ_INT(ipup_plan_pools(&c, &p, pp_scratch + off, need, msg, sizeof msg), IPUP_OK);
        TT_CHECK(memcmp(&p, &ref, sizeof p) == 0);
    }
    /* no message buffer is fine */
    TT_EQ_INT(ipup_plan_pools(&c, &p, pp_scratch, need - 1, NULL, 0), IPUP_ERR_CAPACITY);
}

/* ipup_plan_config without a plan says so (it used to return IPUP_ERR_ARG with no text) */
TTEST(plan_config_null_plan) {
    ipup_model_desc m;
    ipup_config c;
    tiny_model_or_exit(&m, 1, 1, 10, "dense4,xent");
    c = tiny_config(&m, 1, 1, 1, 1, 3, IPUP_OPT_SGD, 0.1f, NULL, NULL);
    memset(&pp_emu, 0, sizeof pp_emu);
    TT_EQ_INT(ipup_plan_config(&pp_emu, &c, NULL), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&pp_emu), "ipup_plan_config: plan is NULL");
}

/* The threaded runner's outfeed rings hold a whole job's records (repeat x M, at most
   1024, rounded up to a power of two) so the IPU threads wake the host about once per
   job; the cooperative runner's hold one step's (M). The host pool differs by exactly
   those slots, and only in the threaded runner. */
TTEST(outfeed_room_by_runner) {
    static const int32_t reps[4] = {1, 10, 1000, 3};
    ipup_model_desc m;
    int k;
    tiny_model_or_exit(&m, 1, 1, 10, "dense8,relu,dense4,xent");
    for (k = 0; k < 4; k++) {
        ipup_config c = tiny_config(&m, 2, 4, 16, reps[k], 3, IPUP_OPT_SGD, 0.1f, NULL, NULL);
        size_t coop, thr, slot = ipup_ring_bytes(1, sizeof(ipup_outfeed_rec));
        uint32_t want = reps[k] == 1 ? 16u : reps[k] == 10 ? 256u : reps[k] == 1000 ? 1024u : 64u;
        c.replicas = 2;
        c.runner = IPUP_RUNNER_COOP;
        coop = ipup_host_bytes(&c);
        c.runner = IPUP_RUNNER_THREADS;
        thr = ipup_host_bytes(&c);
        TT_CHECK(coop > 0);
        if (thr - coop != 2u * (want - 16u) * slot)
            TT_FAILF("repeat %d: the threaded host pool is %zu bytes more than the cooperative one, not 2 x %u slots of %zu",
                     (int)reps[k], thr - coop, (unsigned)(want - 16u), slot);
    }
}

static const ttest_case cases[] = {
    TT_CASE(same_plan_as_ipup_plan_config),
    TT_CASE(outfeed_room_by_runner),
    TT_CASE(scratch_bounds),
    TT_CASE(plan_config_null_plan),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
