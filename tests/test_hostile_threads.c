/* test_hostile_threads.c - the threaded runner of ipupipe.h under stress:
 * more IPU threads than cores (6 stages x 2 replicas = 12 threads on this 2-core
 * machine), random delays and yields before ops, many steps, every schedule. It must
 * never deadlock (a watchdog alarm fails the test instead of hanging), never lose or
 * reorder a micro-batch (the outfeed records are exactly (step, replica, mb) in order,
 * none missing, none twice) and match the cooperative runner bit for bit (every
 * record's loss and every weight and optimizer-state tensor). Also run under
 * ThreadSanitizer and helgrind (IPUPIPE_TEST_SLOW=1: fewer steps and schedules).
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#define TINY_MODEL_HELGRIND /* helgrind annotations of the rings, where available */
#include "tiny_model.h" /* includes ipupipe.h */
#include "ttest.h"

#define HT_POOL (128 * 1024)
#define HT_MAX_RECS 4096
IPUP_ALIGN64 static uint8_t ht_ipu[IPUP_MAX_IPUS][HT_POOL];
IPUP_ALIGN64 static uint8_t ht_host[1 << 20];
static ipup_emu ht_emu;
static ipup_model_desc ht_model;

typedef struct ht_log {
    int32_t n;
    ipup_outfeed_rec rec[HT_MAX_RECS];
} ht_log;
static ht_log ht_coop, ht_thr;

static void ht_outfeed(void *user, const ipup_outfeed_rec *r) {
    ht_log *l = (ht_log *)user;
    if (l->n < HT_MAX_RECS) l->rec[l->n] = *r;
    l->n++;
}

/* 12 features, 4 random classes: uniform noise plus 1 on the features j with j % 4 == label */
static void ht_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t j;
    *label = (int32_t)ipup_rng_below(5, (uint64_t)(sample0 + i), 0, 4);
    for (j = 0; j < 12; j++)
        x[j] = ipup_rng_uniform_f32(6, (uint64_t)(sample0 + i), (uint64_t)j) + (j % 4 == *label ? 1.0f : 0.0f);
}
static tiny_data ht_data = {ht_sample, 12};

/* random delay / yield before an op; the counter makes every call different */
static volatile uint64_t ht_ctr[IPUP_MAX_IPUS];
static void ht_delay(void *user, int32_t ipu, const ipup_op *op) {
    uint64_t h = ipup_rng_u64(1234, (uint64_t)ipu, (uint64_t)op->step * 7919u + (uint64_t)op->mb * 31u + ht_ctr[ipu]);
    (void)user;
    ht_ctr[ipu] = ht_ctr[ipu] + 1;
    switch (h & 7u) {
    case 0: {
        struct timespec ts;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)((h >> 32) % 300000u); /* up to 0.3 ms */
        nanosleep(&ts, NULL);
        break;
    }
    case 1:
    case 2: sched_yield(); break;
    default: break;
    }
}

static void ht_watchdog(int sig) {
    static const char m[] = "FAIL threaded runner: no progress within the watchdog time (deadlock?)\n0 passed, 1 failed\n";
    (void)sig;
    if (write(1, m, sizeof m - 1) < 0) _exit(3);
    _exit(2);
}

static ipup_config ht_cfg(ipup_sched_kind kind, ipup_runner_kind runner, ht_log *log) {
    ipup_config c;
    tiny_model_or_exit(&ht_model, 1, 1, 12, "dense16,relu,dense12,gelu,dense8,relu,dense4,xent");
    /* 6 stages, micro-batches of 2, 6 a step, 5 steps a run, seed 42 */
    c = tiny_config(&ht_model, 6, 2, 6, 5, 42, IPUP_OPT_ADAM, 0.01f, tiny_infeed, &ht_data);
    c.schedule = kind;
    if (kind == IPUP_SCHED_INTERLEAVED_1F1B) {
        c.devices = 3;
        c.virtual_stages = 2;
    }
    c.replicas = 2;
    c.recompute = kind == IPUP_SCHED_GPIPE || kind == IPUP_SCHED_1F1B;
    c.runner = runner;
    c.outfeed = ht_outfeed;
    c.outfeed_user = log;
    if (runner == IPUP_RUNNER_THREADS) c.op_hook = ht_delay;
    tiny_pools(&c, IPUP_MAX_IPUS, ht_ipu, NULL, HT_POOL, ht_host, sizeof ht_host);
    return c;
}

/* runs `steps` steps; returns 0 and leaves the tensors in `out` (n floats) */
static int ht_train(ipup_sched_kind kind, ipup_runner_kind runner, ht_log *log, int steps, float *out, size_t cap,
                    size_t *n_out) {
    ipup_config c = ht_cfg(kind, runner, log);
    int32_t i, nt;
    size_t n = 0;
    int done = 0, rc;
    log->n = 0;
    rc = ipup_init(&ht_emu, &c);
    if (rc) {
        TT_FAILF("init %s: %.300s", ipup_sched_kind_name(kind), ipup_last_error(&ht_emu));
        return -1;
    }
    while (done < steps) {
        int32_t k = steps - done < c.repeat ? steps - done : c.repeat;
        alarm(ttest_slow() ? 600u : 120u);
        rc = ipup_run_steps(&ht_emu, k, NULL);
        alarm(0);
        if (rc) {
            TT_FAILF("run %s: %.300s", ipup_sched_kind_name(kind), ipup_last_error(&ht_emu));
            ipup_shutdown(&ht_emu);
            return -1;
        }
        done += k;
    }
    nt = ipup_tensor_count(&ht_emu);
    for (i = 0; i < nt; i++) {
        ipup_tensor_info t;
        ipup_tensor_get(&ht_emu, i, &t);
        if (n + (size_t)t.n <= cap) memcpy(out + n, t.data, (size_t)t.n * sizeof(float));
        n += (size_t)t.n;
    }
    *n_out = n;
    ipup_shutdown(&ht_emu);
    return n <= cap ? 0 : -1;
}

/* the records must be exactly (step, replica, mb) for step 0..steps-1, replica 0..1,
   mb 0..5, in that order */
static int ht_sequence_ok(const ht_log *l, int steps, const char *what) {
    int32_t i = 0, s, r, m;
    if (l->n != steps * 2 * 6) {
        TT_FAILF("%s: %d outfeed records, expected %d (lost or duplicated micro-batches)", what, (int)l->n, steps * 12);
        return 0;
    }
    for (s = 0; s < steps; s++)
        for (r = 0; r < 2; r++)
            for (m = 0; m < 6; m++, i++) {
                const ipup_outfeed_rec *x = &l->rec[i];
                if (x->step != s || x->replica != r || x->mb != m) {
                    TT_FAILF("%s: record %d is (step %lld, replica %d, mb %d), expected (%d, %d, %d)", what, (int)i,
                             (long long)x->step, (int)x->replica, (int)x->mb, (int)s, (int)r, (int)m);
                    return 0;
                }
            }
    return 1;
}

static float ht_w_coop[1 << 15], ht_w_thr[1 << 15];

TTEST(threads_vs_coop_under_stress_every_schedule) {
    static const ipup_sched_kind kinds[] = {IPUP_SCHED_GROUPED, IPUP_SCHED_INTERLEAVED, IPUP_SCHED_SEQUENTIAL,
                                            IPUP_SCHED_GPIPE,   IPUP_SCHED_1F1B,        IPUP_SCHED_INTERLEAVED_1F1B,
                                            IPUP_SCHED_ZBH1};
    int steps = ttest_slow() ? 3 : 40, k, rounds = ttest_slow() ? 1 : 2, round;
    for (k = 0; k < 7; k += ttest_slow() ? 3 : 1) {
        size_t nc = 0, nthr = 0, i;
        const char *name = ipup_sched_kind_name(kinds[k]);
        if (ht_train(kinds[k], IPUP_RUNNER_COOP, &ht_coop, steps, ht_w_coop, sizeof ht_w_coop / sizeof(float), &nc))
            continue;
        TT_CHECK(ht_sequence_ok(&ht_coop, steps, name));
        for (round = 0; round < rounds; round++) {
            if (ht_train(kinds[k], IPUP_RUNNER_THREADS, &ht_thr, steps, ht_w_thr, sizeof ht_w_thr / sizeof(float), &nthr))
                continue;
            if (!ht_sequence_ok(&ht_thr, steps, name)) continue;
            for (i = 0; i < (size_t)ht_thr.n; i++)
                if (memcmp(&ht_thr.rec[i].loss, &ht_coop.rec[i].loss, sizeof(float)) != 0 ||
                    ht_thr.rec[i].correct != ht_coop.rec[i].correct) {
                    TT_FAILF("%s: record %d: threads loss %.9g correct %d, coop %.9g %d", name, (int)i,
                             (double)ht_thr.rec[i].loss, (int)ht_thr.rec[i].correct, (double)ht_coop.rec[i].loss,
                             (int)ht_coop.rec[i].correct);
                    break;
                }
            TT_EQ_INT(nthr, nc);
            TT_CHECK_MSG(memcmp(ht_w_thr, ht_w_coop, nc * sizeof(float)) == 0,
                         "%s: weights/optimizer state after %d steps differ between threads and coop", name, steps);
        }
    }
}

/* the same emulator run again and again (threads reused), with a NaN in the middle:
   the threads stop cleanly and keep working afterwards */
TTEST(threads_survive_repeated_runs_and_errors) {
    ipup_config c = ht_cfg(IPUP_SCHED_1F1B, IPUP_RUNNER_THREADS, &ht_thr);
    int k, runs = ttest_slow() ? 4 : 60;
    float lr_ok = c.opt.lr;
    TT_EQ_INT(ipup_init(&ht_emu, &c), IPUP_OK);
    for (k = 0; k < runs; k++) {
        int rc;
        ht_thr.n = 0;
        ipup_set_learning_rate(&ht_emu, k % 10 == 5 ? 1e30f : lr_ok);
        alarm(ttest_slow() ? 600u : 120u);
        rc = ipup_run_steps(&ht_emu, 1 + k % 5, NULL);
        alarm(0);
        if (k % 10 == 5) {
            TT_CHECK(rc == IPUP_OK || rc == IPUP_ERR_NUMERIC); /* 1e30 may or may not overflow */
        } else if (rc != IPUP_OK && rc != IPUP_ERR_NUMERIC) {
            TT_FAILF("run %d: %.300s", k, ipup_last_error(&ht_emu));
        }
    }
    ipup_shutdown(&ht_emu);
}

static const ttest_case cases[] = {
    TT_CASE(threads_vs_coop_under_stress_every_schedule),
    TT_CASE(threads_survive_repeated_runs_and_errors),
};

int main(int argc, char **argv) {
    signal(SIGALRM, ht_watchdog);
    return TTEST_MAIN(cases, argc, argv);
}
