/* test_devices.c - the device runner (ipup_set_devices, ipup_run_device): the IPUs of one
 * emulator on threads the caller starts, synchronised by the library's atomics and the
 * caller's wait/wake hooks (what a microcontroller does with WFE and SEV, here with
 * sched_yield). mlp_fixture.h's run has 3 stages: IPU 0 runs in ipup_run on this thread,
 * IPUs 1 and 2 in ipup_run_device on two pthreads. The weights after 3 runs must have the
 * cooperative runner's bits, the records the same losses; an infeed failure must come
 * back as the cooperative runner's error; ipup_shutdown must bring both threads back; the
 * misuses must fail with a message naming the fix.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include "tiny_model.h" /* includes ipupipe.h */
#include "mlp_fixture.h"
#include "ttest.h"

#define TD_POOL (128 * 1024)
#define TD_RUNS 3
IPUP_ALIGN64 static uint8_t td_ipu[IPUP_MAX_IPUS][TD_POOL];
IPUP_ALIGN64 static uint8_t td_host[1 << 20];
static ipup_emu td_emu;
static ipup_model_desc td_model;

/* the hooks: wait yields the core; wake has nothing to do (nobody sleeps for long); both
   count their calls, which proves the library went through them */
static long td_waits, td_wakes;
static pthread_mutex_t td_count_lock = PTHREAD_MUTEX_INITIALIZER;
static void td_wait(void *user, int32_t ipu) {
    (void)user; (void)ipu;
    pthread_mutex_lock(&td_count_lock);
    td_waits++;
    pthread_mutex_unlock(&td_count_lock);
    (void)sched_yield();
}
static void td_wake(void *user, int32_t ipu) {
    (void)user; (void)ipu;
    pthread_mutex_lock(&td_count_lock);
    td_wakes++;
    pthread_mutex_unlock(&td_count_lock);
}
static const ipup_device_sync td_sync = {NULL, td_wait, td_wake};

typedef struct td_dev { ipup_emu *e; int32_t ipu; int rc; } td_dev;
static void *td_device_main(void *arg) {
    td_dev *d = (td_dev *)arg;
    d->rc = ipup_run_device(d->e, d->ipu);
    return NULL;
}

/* FNV-1a 64 over the bits of every tensor (weights and biases) */
static uint64_t td_hash(ipup_emu *e) {
    uint64_t h = UINT64_C(14695981039346656037);
    ipup_tensor_info ti;
    int32_t i;
    size_t b;
    for (i = 0; ipup_tensor_get(e, i, &ti) == IPUP_OK; i++) {
        const unsigned char *p = (const unsigned char *)ti.data;
        for (b = 0; b < (size_t)ti.n * sizeof(float); b++) { h ^= p[b]; h *= UINT64_C(1099511628211); }
    }
    return h;
}

/* TD_RUNS runs of the fixture; devices: on two pthreads through ipup_run_device. The hash
   of the weights and the losses of every run's records. */
static uint64_t td_train(int devices, double loss[TD_RUNS], int fail_at_run) {
    ipup_config c;
    ipup_run_stats st;
    pthread_t th[2];
    td_dev dev[2];
    uint64_t h;
    int32_t q, k;
    c = mlp_fixture_config(&td_model, 2, td_ipu, TD_POOL, td_host, sizeof td_host);
    if (ipup_init(&td_emu, &c) != IPUP_OK) { TT_FAILF("ipup_init: %s", ipup_last_error(&td_emu)); return 0; }
    TT_EQ_INT(td_emu.core.n_ipus, 3);
    if (devices) {
        TT_EQ_INT(ipup_set_devices(&td_emu, &td_sync), IPUP_OK);
        for (q = 0; q < 2; q++) {
            dev[q].e = &td_emu; dev[q].ipu = q + 1; dev[q].rc = -1;
            TT_CHECK(pthread_create(&th[q], NULL, td_device_main, &dev[q]) == 0);
        }
    }
    for (k = 0; k < TD_RUNS; k++) {
        int rc;
        if (k == fail_at_run) mlp_fixture_data.in_n = 0; /* tiny_infeed fails: row != in_n */
        rc = ipup_run(&td_emu, &st);
        mlp_fixture_data.in_n = MLP_FIXTURE_IN;
        if (k == fail_at_run) {
            TT_EQ_INT(rc, IPUP_ERR_IO);
            TT_CONTAINS(ipup_last_error(&td_emu), "infeed");
            loss[k] = -1.0;
            continue;
        }
        TT_EQ_INT(rc, IPUP_OK);
        TT_EQ_INT(st.steps, 2);
        loss[k] = st.loss_mean;
    }
    h = td_hash(&td_emu);
    ipup_shutdown(&td_emu); /* returns once both device threads have left */
    if (devices)
        for (q = 0; q < 2; q++) {
            TT_CHECK(pthread_join(th[q], NULL) == 0);
            TT_EQ_INT(dev[q].rc, IPUP_OK);
        }
    return h;
}

TTEST(devices_give_the_cooperative_bits) {
    double lc[TD_RUNS], ld[TD_RUNS];
    uint64_t hc = td_train(0, lc, -1), hd;
    int k;
    td_waits = td_wakes = 0;
    hd = td_train(1, ld, -1);
    TT_CHECK_MSG(hc == hd, "weights after %d runs: cooperative %016llx, devices %016llx", TD_RUNS,
                 (unsigned long long)hc, (unsigned long long)hd);
    for (k = 0; k < TD_RUNS; k++) TT_CHECK_MSG(lc[k] == ld[k], "run %d loss %.9g vs %.9g", k, lc[k], ld[k]);
    TT_CHECK(td_wakes > 0); /* every ring commit and release went through the hook */
    TT_CHECK(td_waits > 0); /* the job waits at least */
}

TTEST(devices_infeed_failure_is_the_cooperative_error) {
    double lc[TD_RUNS], ld[TD_RUNS];
    uint64_t hc = td_train(0, lc, 1), hd = td_train(1, ld, 1);
    TT_CHECK_MSG(hc == hd, "weights after a failed run: cooperative %016llx, devices %016llx",
                 (unsigned long long)hc, (unsigned long long)hd);
    TT_CHECK(lc[2] == ld[2]);
}

TTEST(devices_misuse_is_refused) {
    ipup_config c;
    ipup_device_sync half = {NULL, td_wait, NULL};
    c = mlp_fixture_config(&td_model, 2, td_ipu, TD_POOL, td_host, sizeof td_host);
    TT_EQ_INT(ipup_init(&td_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_run_device(&td_emu, 1), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&td_emu), "ipup_set_devices first");
    TT_EQ_INT(ipup_set_devices(&td_emu, &half), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&td_emu), "wake must both be set");
    TT_EQ_INT(ipup_set_devices(&td_emu, &td_sync), IPUP_OK);
    TT_EQ_INT(ipup_run_device(&td_emu, 0), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&td_emu), "outside 1..2");
    TT_EQ_INT(ipup_set_devices(&td_emu, NULL), IPUP_OK); /* back to the cooperative runner */
    ipup_shutdown(&td_emu);
    TT_EQ_INT(ipup_set_devices(&td_emu, &td_sync), IPUP_ERR_ARG); /* shut down */
    TT_CONTAINS(ipup_last_error(&td_emu), "call ipup_init again");
    c.runner = IPUP_RUNNER_THREADS;
    TT_EQ_INT(ipup_init(&td_emu, &c), IPUP_OK);
    TT_EQ_INT(ipup_set_devices(&td_emu, &td_sync), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&td_emu), "runner = IPUP_RUNNER_COOP");
    ipup_shutdown(&td_emu);
}

int main(int argc, char **argv) {
    static const ttest_case cases[] = {TT_CASE(devices_give_the_cooperative_bits),
                                       TT_CASE(devices_infeed_failure_is_the_cooperative_error),
                                       TT_CASE(devices_misuse_is_refused)};
    return TTEST_MAIN(cases, argc, argv);
}
