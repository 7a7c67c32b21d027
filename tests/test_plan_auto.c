/* test_plan_auto.c - the plan's prediction and the automatic plan.
 *
 * predicted_is_measured: ipup_plan.step_seconds and samples_per_second (ipup_plan_pools,
 * without running) equal, bit for bit, what ipup_run_stats reports after a run of one
 * step, over models, stage counts, schedules, recomputation, offload and replicas.
 */
#include "ipupipe.h"
#include "ttest.h"
#include "tiny_model.h"

#define PA_IPUS 8
#define PA_POOL (256u * 1024u)
static ipup_emu pa_emu;
IPUP_ALIGN64 static uint8_t pa_ipu[PA_IPUS * PA_POOL];
IPUP_ALIGN64 static uint8_t pa_stream[PA_IPUS * PA_POOL];
IPUP_ALIGN64 static uint8_t pa_host[1u << 20];
IPUP_ALIGN64 static uint8_t pa_scratch[IPUP_PLAN_SCRATCH_BYTES(8, 16) + 64];

static void pa_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t k;
    for (k = 0; k < 10; k++) x[k] = (float)((sample0 + i + k) % 7) * 0.1f;
    *label = (int32_t)((sample0 + i) % 3);
}

/* the plan of c against one step of ipup_run; 1 when planned and compared */
static int pa_predict_one(const ipup_config *cfg, const char *what) {
    ipup_config c = *cfg;
    ipup_plan p;
    ipup_run_stats st;
    char msg[IPUP_MSG_MAX];
    int rc = ipup_plan_pools(&c, &p, pa_scratch, sizeof pa_scratch, msg, sizeof msg);
    if (rc != IPUP_OK) return 0;
    if (p.ipus > PA_IPUS || p.ipu_bytes[0] > PA_POOL) return 0;
    tiny_pools(&c, p.ipus, pa_ipu, pa_stream, PA_POOL, pa_host, sizeof pa_host);
    rc = ipup_init(&pa_emu, &c);
    TT_CHECK_MSG(rc == IPUP_OK, "%s: ipup_init %d: %s", what, rc, ipup_last_error(&pa_emu));
    if (rc != IPUP_OK) return 0;
    rc = ipup_run_steps(&pa_emu, 1, &st);
    ipup_shutdown(&pa_emu);
    TT_CHECK_MSG(rc == IPUP_OK, "%s: ipup_run_steps %d", what, rc);
    TT_CHECK_MSG(p.step_seconds > 0.0 && p.step_seconds == st.step_seconds,
                 "%s: predicted step %.17g s, measured %.17g s", what, p.step_seconds,
                 st.step_seconds);
    TT_CHECK_MSG(p.samples_per_second == st.samples_per_second,
                 "%s: predicted %.17g samples/s, measured %.17g", what, p.samples_per_second,
                 st.samples_per_second);
    return 1;
}

TTEST(predicted_is_measured) {
    static const char *const models[] = {"dense16,relu,dense8,relu,dense3,xent",
                                         "dense12,gelu,dropout0.25,dense6,relu,dense3,xent"};
    static tiny_data data = {pa_sample, 10};
    ipup_model_desc m;
    int mi, S, sk, v, cases = 0, compared = 0;
    for (mi = 0; mi < 2; mi++) {
        tiny_model_or_exit(&m, 1, 1, 10, models[mi]);
        for (S = 1; S <= 4; S++)
            for (sk = 0; sk < IPUP_SCHED_KIND_COUNT; sk++)
                for (v = 0; v < 4; v++) {
                    ipup_config c = tiny_config(&m, S, 2 + v, 4 + 2 * (v & 1), 1, 7,
                                                (ipup_optimizer_kind)(v % 3), 0.05f,
                                                tiny_infeed, &data);
                    char what[160];
                    if (sk == IPUP_SCHED_DUALPIPE) continue; /* two copies: test_dualpipe.sh */
                    c.schedule = (ipup_sched_kind)sk;
                    c.recompute = v & 1;
                    c.offload = (v >> 1) & 1;
                    c.replicas = 1 + (v == 2);
                    ipup_snprintf(what, sizeof what, "model %d, S=%d, %s, variant %d", mi, S,
                                  ipup_sched_kind_name(c.schedule), v);
                    cases++;
                    compared += pa_predict_one(&c, what);
                }
    }
    printf("    %d configurations, %d planned and run: predicted == measured\n", cases,
           compared);
    TT_CHECK(compared > cases / 3);
}

static const ttest_case cases[] = {TT_CASE(predicted_is_measured)};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
