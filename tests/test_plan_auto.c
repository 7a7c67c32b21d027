/* test_plan_auto.c - the plan's prediction and the automatic plan.
 *
 * predicted_is_measured: ipup_plan.step_seconds and samples_per_second (ipup_plan_pools,
 * without running) equal, bit for bit, what ipup_run_stats reports after one ipup_run
 * (cfg.repeat steps, 1 and 3), over models, stage counts, schedules, recomputation,
 * offload and replicas.
 *
 * auto_is_exhaustive: ipup_plan_auto against a plain exhaustive search written here
 * (every stage count, every contiguous split, every schedule of the set, replicas, every
 * (B, M), every offload subset, every recompute mask; ipup_plan_pools on each, the best
 * that fits by the documented order): the same configuration and samples/s, over small
 * models, 2 and 3 IPUs, budgets from unlimited to nothing fits, samples per step fixed and
 * free; when nothing fits, the same smallest bytes per IPU in the message.
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
    rc = ipup_run(&pa_emu, &st);
    ipup_shutdown(&pa_emu);
    TT_CHECK_MSG(rc == IPUP_OK, "%s: ipup_run %d", what, rc);
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
                    ipup_config c = tiny_config(&m, S, 2 + v, 4 + 2 * (v & 1), 1 + (v & 2), 7,
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

/* ---- the exhaustive search, written apart from the library's ---- */
typedef struct {
    double rate;
    size_t bytes;
    int32_t ipus, S, kind, R, B, M, offload;
    uint32_t rec;
    int32_t split[IPUP_MAX_LAYERS];
} ex_pt;

typedef struct {
    const ipup_plan_request *rq;
    int32_t L, Smax, Bmax, Mmax;
    size_t budget;
    ex_pt best, small; /* the best that fits; the smallest bytes of any plan */
    long plans;
} ex_search;

/* the documented order: more samples/s, then fewer IPUs, S, kind, R, B, M, the split,
   offload, mask */
static int ex_better(const ex_pt *a, const ex_pt *b) {
    int32_t s;
    if (b->rate < 0.0) return 1;
    if (a->rate != b->rate) return a->rate > b->rate;
    if (a->ipus != b->ipus) return a->ipus < b->ipus;
    if (a->S != b->S) return a->S < b->S;
    if (a->kind != b->kind) return a->kind < b->kind;
    if (a->R != b->R) return a->R < b->R;
    if (a->B != b->B) return a->B < b->B;
    if (a->M != b->M) return a->M < b->M;
    for (s = 0; s < a->S - 1; s++)
        if (a->split[s] != b->split[s]) return a->split[s] < b->split[s];
    if (a->offload != b->offload) return a->offload < b->offload;
    return a->rec < b->rec;
}

static void ex_eval(ex_search *X, ex_pt *p) {
    ipup_config c = *X->rq->base;
    ipup_plan pl;
    int32_t d;
    c.stages = p->S;
    c.split = p->S > 1 ? p->split : NULL;
    c.schedule = (ipup_sched_kind)p->kind;
    c.replicas = p->R;
    c.microbatch = p->B;
    c.microbatches = p->M;
    c.offload = p->offload;
    c.recompute = 0;
    c.recompute_stages = p->rec;
    X->plans++;
    if (ipup_plan_pools(&c, &pl, pa_scratch, sizeof pa_scratch, NULL, 0) != IPUP_OK) return;
    if (pl.ipus > X->rq->ipus) return;
    p->bytes = 0;
    for (d = 0; d < pl.devices; d++)
        if (pl.ipu_bytes[d] > p->bytes) p->bytes = pl.ipu_bytes[d];
    p->ipus = pl.ipus;
    p->rate = pl.samples_per_second;
    if (X->small.rate < 0.0 || p->bytes < X->small.bytes) X->small = *p;
    if (p->bytes <= X->budget && ex_better(p, &X->best)) X->best = *p;
}

/* every offload subset the knobs allow, every mask */
static void ex_knobs(ex_search *X, ex_pt *p) {
    uint32_t knobs = X->rq->knobs ? X->rq->knobs : IPUP_AUTO_ALL;
    int32_t allowed = (int32_t)(knobs >> 1) & 7, off;
    uint32_t m, nm = (knobs & IPUP_AUTO_RECOMPUTE) ? 1u << p->S : 1u;
    for (off = 0; off <= 7; off++) {
        if ((off & allowed) != off) continue;
        for (m = 0; m < nm; m++) {
            p->offload = off;
            p->rec = m;
            ex_eval(X, p);
        }
    }
}

/* every split as a bit set of cut positions 1..L-1 with S-1 bits */
static void ex_splits(ex_search *X, ex_pt *p) {
    uint32_t cuts;
    for (cuts = 0; cuts < (1u << (X->L - 1)); cuts++) {
        int32_t n = 0, k;
        for (k = 0; k < X->L - 1; k++) if ((cuts >> k) & 1u) n++;
        if (n != p->S - 1) continue;
        n = 0;
        for (k = 0; k < X->L - 1; k++) if ((cuts >> k) & 1u) p->split[n++] = k + 1;
        ex_knobs(X, p);
    }
}

static void ex_run(ex_search *X, const ipup_plan_request *rq) {
    uint32_t kinds = rq->schedules ? rq->schedules : IPUP_AUTO_SCHEDULES_DEFAULT;
    uint32_t knobs = rq->knobs ? rq->knobs : IPUP_AUTO_ALL;
    int32_t N = rq->samples_per_step, Rmax = (knobs & IPUP_AUTO_REPLICAS) ? rq->ipus : 1;
    ex_pt p;
    memset(X, 0, sizeof *X);
    memset(&p, 0, sizeof p);
    X->rq = rq;
    X->L = rq->base->model->n_layers;
    X->Smax = rq->max_stages ? rq->max_stages : rq->ipus;
    if (X->Smax > X->L) X->Smax = X->L;
    X->Bmax = rq->max_microbatch ? rq->max_microbatch : 64;
    X->Mmax = rq->max_microbatches ? rq->max_microbatches : 64;
    X->budget = rq->ipu_bytes ? rq->ipu_bytes : (size_t)-1;
    X->best.rate = X->small.rate = -1.0;
    for (p.S = 1; p.S <= X->Smax; p.S++)
        for (p.kind = 0; p.kind < IPUP_SCHED_KIND_COUNT; p.kind++) {
            if (!((kinds >> p.kind) & 1u)) continue;
            for (p.R = 1; p.R <= Rmax; p.R++)
                for (p.B = 1; p.B <= X->Bmax; p.B++) {
                    if (N) {
                        if (N % (p.R * p.B)) continue;
                        p.M = N / (p.R * p.B);
                        if (p.M <= X->Mmax) ex_splits(X, &p);
                        continue;
                    }
                    if (p.B & (p.B - 1)) continue; /* free: powers of two */
                    for (p.M = 1; p.M <= X->Mmax; p.M *= 2) ex_splits(X, &p);
                }
        }
}

/* the library's answer against the exhaustive one; 1 when they agree */
static int pa_knobbed; /* cases whose best recomputes or offloads */
static int pa_partial; /* cases whose best recomputes some stages, not all */
static int pa_compare(const ipup_plan_request *rq, const char *what, int *fits, long *plans) {
    ex_search X;
    ipup_config best;
    ipup_plan plan;
    char msg[IPUP_MSG_MAX], want[64];
    int rc, s;
    ex_run(&X, rq);
    *plans += X.plans;
    rc = ipup_plan_auto(rq, &best, &plan, pa_scratch, sizeof pa_scratch, msg, sizeof msg);
    if (X.best.rate < 0.0) {
        TT_CHECK_MSG(rc == IPUP_ERR_OOM, "%.80s: nothing fits, yet ipup_plan_auto %d (%.300s)",
                     what, rc, msg);
        snprintf(want, sizeof want, "smallest memory that fits is %zu bytes", X.small.bytes);
        TT_CHECK_MSG(strstr(msg, want) != NULL, "%.80s: '%.300s' does not say '%s'", what, msg,
                     want);
        return rc == IPUP_ERR_OOM && strstr(msg, want);
    }
    (*fits)++;
    pa_knobbed += X.best.rec || X.best.offload;
    pa_partial += X.best.rec && X.best.rec != (1u << X.best.S) - 1u;
    if (rc != IPUP_OK) {
        TT_FAILF("%.80s: ipup_plan_auto %d (%.300s); the exhaustive search fits %.6g samples/s",
                 what, rc, msg, X.best.rate);
        return 0;
    }
    {
        int same = plan.samples_per_second == X.best.rate && best.stages == X.best.S &&
                   (int)best.schedule == X.best.kind && best.replicas == X.best.R &&
                   best.microbatch == X.best.B && best.microbatches == X.best.M &&
                   best.offload == X.best.offload && best.recompute_stages == X.best.rec;
        for (s = 0; same && s < X.best.S - 1; s++) same = best.split[s] == X.best.split[s];
        TT_CHECK_MSG(same,
                     "%s: auto S=%d %s R=%d B=%d M=%d off=%d rec=%x %.9g/s; exhaustive S=%d %s "
                     "R=%d B=%d M=%d off=%d rec=%x %.9g/s",
                     what, (int)best.stages, ipup_sched_kind_name(best.schedule),
                     (int)best.replicas, (int)best.microbatch, (int)best.microbatches,
                     (int)best.offload, (unsigned)best.recompute_stages,
                     plan.samples_per_second, (int)X.best.S,
                     ipup_sched_kind_name((ipup_sched_kind)X.best.kind), (int)X.best.R,
                     (int)X.best.B, (int)X.best.M, (int)X.best.offload, (unsigned)X.best.rec,
                     X.best.rate);
        return same;
    }
}

TTEST(auto_is_exhaustive) {
    static const char *const models[] = {"dense16,relu,dense8,relu,dense3,xent",
                                         "conv4,relu,maxpool2,flatten,dense3,xent",
                                         "dense24,gelu,dense12,dense3,xent",
                                         "conv8,relu,conv8,relu,flatten,dense3,xent"};
    static const int32_t shapes[4][3] = {{1, 1, 10}, {6, 6, 1}, {1, 1, 12}, {10, 10, 1}};
    static const double fractions[] = {0.0, 1.0, 0.8, 0.6, 0.5, 0.45, 0.4, 0.3, 0.15};
    ipup_model_desc m;
    int mi, ipus, f, mode, cases = 0, same = 0, fits = 0;
    long plans = 0;
    for (mi = 0; mi < 4; mi++) {
        tiny_model_or_exit(&m, shapes[mi][0], shapes[mi][1], shapes[mi][2], models[mi]);
        for (ipus = 2; ipus <= 3; ipus++)
            for (mode = 0; mode < 2; mode++) {
                ipup_config base = tiny_config(&m, 1, 1, 1, 1, 3,
                                               (ipup_optimizer_kind)(mi == 2 ? 2 : 1), 0.1f,
                                               NULL, NULL);
                ipup_plan_request rq;
                ipup_plan one;
                size_t top;
                if (ipus == 3 && (mi != 0 || ttest_slow())) continue; /* 3 IPUs: one model */
                memset(&rq, 0, sizeof rq);
                rq.base = &base;
                rq.ipus = ipus;
                rq.samples_per_step = mode ? 0 : 8;
                rq.max_microbatch = 4;
                rq.max_microbatches = 8;
                if (mode) rq.schedules = (1u << IPUP_SCHED_GROUPED) | (1u << IPUP_SCHED_1F1B);
                base.microbatch = 8; /* the bytes of one stage at B = 8: the budgets' scale */
                if (ipup_plan_pools(&base, &one, pa_scratch, sizeof pa_scratch, NULL, 0)) {
                    TT_FAILF("model %d does not plan", mi);
                    return;
                }
                base.microbatch = 1;
                top = one.ipu_bytes[0];
                for (f = 0; f < (int)(sizeof fractions / sizeof fractions[0]); f++) {
                    char what[160];
                    rq.ipu_bytes = (size_t)(fractions[f] * (double)top);
                    ipup_snprintf(what, sizeof what, "model %d, %d IPUs, %s, %zu bytes", mi, ipus,
                                  mode ? "M free" : "8 samples a step", rq.ipu_bytes);
                    cases++;
                    same += pa_compare(&rq, what, &fits, &plans);
                }
            }
    }
    printf("    %d cases (%d fit, %d of them with recomputation or offload, %d recomputing some "
           "stages only; %d fit nowhere), %ld plans of the exhaustive search: %d differences\n",
           cases, fits, pa_knobbed, pa_partial, cases - fits, plans, cases - same);
    TT_CHECK(same == cases && fits > cases / 2 && fits < cases && pa_partial > 0);
}

static const ttest_case cases[] = {TT_CASE(predicted_is_measured), TT_CASE(auto_is_exhaustive)};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
