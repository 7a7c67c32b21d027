/* test_thread_stall.c - an IPU thread that ends its step early must stop the others.
 * An op of ipup__exec that finds no data or no room where it never waits (its stash full
 * before a forward, empty before a backward) can only come from a broken invariant; the
 * op hook breaks one on purpose (the stash counters of the stage it is about to run).
 * ipup_run must then return IPUP_ERR_INVALID_TABLE naming the op, on the cooperative
 * runner and on the threaded one, promptly (a watchdog alarm fails the test instead of
 * hanging: before, the other IPU threads and the host waited forever), with the steps
 * before it completed, and the emulator must run again afterwards. Run under TSan too.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <unistd.h>
#define TINY_MODEL_HELGRIND
#include "tiny_model.h" /* includes ipupipe.h */
#include "mlp_fixture.h"
#include "ttest.h"

#define TS_POOL (128 * 1024)
IPUP_ALIGN64 static uint8_t ts_ipu[IPUP_MAX_IPUS][TS_POOL];
IPUP_ALIGN64 static uint8_t ts_host[1 << 20];
static ipup_emu ts_emu;
static ipup_model_desc ts_model;

/* the op to break: kind, stage, micro-batch and step (replica 0) */
typedef struct ts_break { int kind; int32_t stage, mb; int64_t step; int hits; } ts_break;

static void ts_hook(void *user, int32_t ipu, const ipup_op *op) {
    ts_break *b = (ts_break *)user;
    ipup__stage_rt *rt;
    (void)ipu;
    if ((int)op->kind != b->kind || op->stage != b->stage || op->mb != b->mb) return;
    /* this thread owns the stage: only it touches the stage's stash counters */
    rt = &ts_emu.stage_rt[0][op->stage];
    if (b->hits++ != (int)b->step) return;
    if (b->kind == IPUP_OP_F) rt->stash_count = (uint32_t)ts_emu.core.stages[op->stage].depth; /* "stash full" */
    else rt->stash_count = rt->wstash_count; /* "stash empty" */
}

static void ts_watchdog(int sig) {
    static const char m[] = "FAIL an IPU thread's early stop left the others waiting (no return within 30 s)\n0 passed, 1 failed\n";
    (void)sig;
    if (write(1, m, sizeof m - 1) < 0) _exit(3);
    _exit(2);
}

/* mlp_fixture.h's run (3 stages x 1 replica, 4 micro-batches of 2), 4 steps a run; break
   `b` (its step-th matching op) and expect the run to stop there with `want` in the message */
static void ts_case(ipup_runner_kind runner, ts_break b, const char *want, int32_t steps_done) {
    ipup_config c;
    ipup_run_stats st;
    int rc;
    c = mlp_fixture_config(&ts_model, 4, ts_ipu, TS_POOL, ts_host, sizeof ts_host);
    c.runner = runner;
    c.op_hook = ts_hook;
    c.op_hook_user = &b;
    rc = ipup_init(&ts_emu, &c);
    TT_EQ_INT(rc, IPUP_OK);
    if (rc) { printf("    %s\n", ipup_last_error(&ts_emu)); return; }
    alarm(30u);
    rc = ipup_run(&ts_emu, &st);
    alarm(0u);
    TT_EQ_INT(rc, IPUP_ERR_INVALID_TABLE);
    TT_CONTAINS(ipup_last_error(&ts_emu), want);
    TT_EQ_INT(st.steps, steps_done);
    /* the emulator runs again: the next run does not hit the break (hits counted on) */
    alarm(30u);
    rc = ipup_run(&ts_emu, &st);
    alarm(0u);
    TT_EQ_INT(rc, IPUP_OK);
    TT_EQ_INT(st.steps, 4);
    ipup_shutdown(&ts_emu);
}

/* stage 1's forward of micro-batch 0 at its 3rd occurrence (step 2): its stash "full" */
TTEST(forward_stash_full_coop) {
    ts_break b = {IPUP_OP_F, 1, 0, 2, 0};
    ts_case(IPUP_RUNNER_COOP, b, "internal: op F(1,0) of replica 0", 2);
}
TTEST(forward_stash_full_threads) {
    ts_break b = {IPUP_OP_F, 1, 0, 2, 0};
    ts_case(IPUP_RUNNER_THREADS, b, "internal: op F(1,0) of replica 0 (IPU1) at step 2 found no data or no room", 2);
}
/* stage 0's backward of micro-batch 3 at step 1: its stash "empty" */
TTEST(backward_stash_empty_threads) {
    ts_break b = {IPUP_OP_B, 0, 3, 1, 0};
    ts_case(IPUP_RUNNER_THREADS, b, "internal: op B(0,3) of replica 0 (IPU0) at step 1 found no data or no room", 1);
}
TTEST(backward_stash_empty_coop) {
    ts_break b = {IPUP_OP_B, 0, 3, 1, 0};
    ts_case(IPUP_RUNNER_COOP, b, "internal: op B(0,3) of replica 0", 1);
}

static const ttest_case cases[] = {
    TT_CASE(forward_stash_full_coop), TT_CASE(forward_stash_full_threads),
    TT_CASE(backward_stash_empty_threads), TT_CASE(backward_stash_empty_coop),
};
int main(int argc, char **argv) {
    signal(SIGALRM, ts_watchdog);
    return TTEST_MAIN(cases, argc, argv);
}
