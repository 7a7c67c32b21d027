/* test_errors.c - every error a public call of ipupipe.h returns on an emulator comes
 * with a message of its own: the argument errors (a call before ipup_init, after a failed
 * ipup_init, NULL pointers, indices out of range, a failing write callback) are listed in
 * one table and each is run on an emulator whose message was planted first ("stale"):
 * the call must fail with its code and replace the planted text with one naming the
 * call. Then the schedule's warnings: kept by the emulator (ipup_warnings) exactly as
 * ipup_sched_generate gives them, cleared by the next ipup_init, given by ipup_plan_pools
 * too.
 */
#include "ipupipe.h"
#include "ttest.h"
#include "tiny_model.h"
#include "impl_private.h" /* ipup__keep_warnings, linked from build/CONFIG/ipupipe.o */

#define ER_POOL (64u << 10)
IPUP_ALIGN64 static uint8_t er_ipu[4 * ER_POOL];
IPUP_ALIGN64 static uint8_t er_host[64u << 10];
static ipup_emu er_emu;
static ipup_model_desc er_model;

static void er_sample(int64_t sample0, int32_t i, float *x, int32_t *label) {
    int32_t k;
    for (k = 0; k < 8; k++) x[k] = (float)((sample0 + i + k) % 5) * 0.25f;
    *label = (int32_t)((sample0 + i) % 3);
}
static tiny_data er_data = {er_sample, 8};

/* a 2-stage MLP on 8 features, 3 classes, B=2, M=4, in pools of ER_POOL bytes */
static ipup_config er_config(int32_t M) {
    ipup_config c;
    tiny_model_or_exit(&er_model, 1, 1, 8, "dense8,relu,dense3,xent");
    c = tiny_config(&er_model, 2, 2, M, 1, 5, IPUP_OPT_SGD, 0.1f, tiny_infeed, &er_data);
    tiny_pools(&c, 2, er_ipu, NULL, ER_POOL, er_host, sizeof er_host);
    return c;
}

static int er_write_ok(void *user, const void *data, size_t len) { (void)user; (void)data; (void)len; return 0; }
static int er_write_fails(void *user, const void *data, size_t len) { (void)user; (void)data; (void)len; return 1; }

/* ---- the calls, each with the arguments of one error ---- */
static float er_x[16];
static int32_t er_labels[2] = {0, 1};
static int er_run(ipup_emu *e) { return ipup_run(e, NULL); }
static int er_run_steps(ipup_emu *e) { return ipup_run_steps(e, 1, NULL); }
static int er_eval(ipup_emu *e) { return ipup_evaluate(e, 2, er_x, er_labels, NULL, NULL); }
static int er_eval_nolabels(ipup_emu *e) { return ipup_evaluate(e, 2, er_x, NULL, NULL, NULL); }
static int er_eval_nox(ipup_emu *e) { return ipup_evaluate(e, 2, NULL, er_labels, NULL, NULL); }
static int er_eval_negative(ipup_emu *e) { return ipup_evaluate(e, -1, er_x, er_labels, NULL, NULL); }
static int er_eval_badlabel(ipup_emu *e) {
    static const int32_t bad[2] = {0, 7};
    return ipup_evaluate(e, 2, er_x, bad, NULL, NULL);
}
static int er_tget(ipup_emu *e) {
    ipup_tensor_info t;
    return ipup_tensor_get(e, 0, &t);
}
static int er_tget_index(ipup_emu *e) {
    ipup_tensor_info t;
    return ipup_tensor_get(e, ipup_tensor_count(e), &t);
}
static int er_tget_negative(ipup_emu *e) {
    ipup_tensor_info t;
    return ipup_tensor_get(e, -1, &t);
}
static int er_tget_null(ipup_emu *e) { return ipup_tensor_get(e, 0, NULL); }
static int er_tfind(ipup_emu *e) {
    ipup_tensor_info t;
    return ipup_tensor_find(e, "dense8.w", &t);
}
static int er_tfind_missing(ipup_emu *e) {
    ipup_tensor_info t;
    return ipup_tensor_find(e, "nope.w", &t);
}
static int er_tfind_null(ipup_emu *e) {
    ipup_tensor_info t;
    return ipup_tensor_find(e, NULL, &t);
}
static int er_sync(ipup_emu *e) { return ipup_replicas_sync(e); }
static int er_mem(ipup_emu *e) {
    ipup_mem_report m;
    return ipup_memory_report(e, 0, &m);
}
static int er_mem_ipu(ipup_emu *e) {
    ipup_mem_report m;
    return ipup_memory_report(e, 2, &m);
}
static int er_mem_null(ipup_emu *e) { return ipup_memory_report(e, 0, NULL); }
static int er_memw(ipup_emu *e) { return ipup_memory_report_write(e, er_write_ok, NULL); }
static int er_memw_null(ipup_emu *e) { return ipup_memory_report_write(e, NULL, NULL); }
static int er_memw_io(ipup_emu *e) { return ipup_memory_report_write(e, er_write_fails, NULL); }
static int er_trace(ipup_emu *e) { return ipup_trace_write(e, er_write_ok, NULL); }
static int er_trace_null(ipup_emu *e) { return ipup_trace_write(e, NULL, NULL); }
static int er_trace_io(ipup_emu *e) { return ipup_trace_write(e, er_write_fails, NULL); }
static int er_transport(ipup_emu *e) {
    static ipup_transport tp; /* every hook NULL */
    return ipup_set_transport(e, &tp);
}
static int er_lr(ipup_emu *e) { return ipup_set_learning_rate(e, -1.0f); }

typedef struct {
    const char *what;
    int live;            /* 1: on an initialised emulator, 0: before ipup_init */
    int (*call)(ipup_emu *e);
    int code;
    const char *says;    /* part of the message */
} er_case;

static const er_case er_cases[] = {
    {"ipup_run before ipup_init", 0, er_run, IPUP_ERR_ARG, "ipup_run: the emulator is not initialised"},
    {"ipup_run_steps before ipup_init", 0, er_run_steps, IPUP_ERR_ARG, "ipup_run_steps: the emulator is not initialised"},
    {"ipup_evaluate before ipup_init", 0, er_eval, IPUP_ERR_ARG, "ipup_evaluate: the emulator is not initialised"},
    {"ipup_tensor_get before ipup_init", 0, er_tget, IPUP_ERR_ARG, "ipup_tensor_get: the emulator is not initialised"},
    {"ipup_tensor_find before ipup_init", 0, er_tfind, IPUP_ERR_ARG, "ipup_tensor_find: the emulator is not initialised"},
    {"ipup_replicas_sync before ipup_init", 0, er_sync, IPUP_ERR_ARG, "ipup_replicas_sync: the emulator is not initialised"},
    {"ipup_memory_report before ipup_init", 0, er_mem, IPUP_ERR_ARG, "ipup_memory_report: the emulator is not initialised"},
    {"ipup_memory_report_write before ipup_init", 0, er_memw, IPUP_ERR_ARG, "ipup_memory_report_write: the emulator is not initialised"},
    {"ipup_trace_write before ipup_init", 0, er_trace, IPUP_ERR_ARG, "ipup_trace_write: the emulator is not initialised"},
    {"ipup_set_transport before ipup_init", 0, er_transport, IPUP_ERR_ARG, "ipup_set_transport: the emulator is not initialised"},
    {"ipup_set_learning_rate of -1", 0, er_lr, IPUP_ERR_ARG, "ipup_set_learning_rate: the learning rate is -1"},
    {"ipup_evaluate with NULL labels", 1, er_eval_nolabels, IPUP_ERR_ARG, "ipup_evaluate: labels is NULL"},
    {"ipup_evaluate with NULL x", 1, er_eval_nox, IPUP_ERR_ARG, "ipup_evaluate: x is NULL"},
    {"ipup_evaluate with n = -1", 1, er_eval_negative, IPUP_ERR_ARG, "ipup_evaluate: n = -1"},
    {"ipup_evaluate with label 7 of 3 classes", 1, er_eval_badlabel, IPUP_ERR_ARG, "label 7 of sample 1 is outside 0..2"},
    {"ipup_tensor_get past the last tensor", 1, er_tget_index, IPUP_ERR_ARG, "ipup_tensor_get: index 4 is outside 0..3"},
    {"ipup_tensor_get of -1", 1, er_tget_negative, IPUP_ERR_ARG, "ipup_tensor_get: index -1 is outside 0..3"},
    {"ipup_tensor_get with NULL out", 1, er_tget_null, IPUP_ERR_ARG, "ipup_tensor_get: out is NULL"},
    {"ipup_tensor_find of a missing name", 1, er_tfind_missing, IPUP_ERR_MISMATCH, "no tensor named \"nope.w\""},
    {"ipup_tensor_find with NULL name", 1, er_tfind_null, IPUP_ERR_ARG, "ipup_tensor_find: name is NULL"},
    {"ipup_memory_report of IPU 2 of 2", 1, er_mem_ipu, IPUP_ERR_ARG, "ipup_memory_report: IPU 2 is outside 0..1"},
    {"ipup_memory_report with NULL out", 1, er_mem_null, IPUP_ERR_ARG, "ipup_memory_report: out is NULL"},
    {"ipup_memory_report_write with NULL write", 1, er_memw_null, IPUP_ERR_ARG, "ipup_memory_report_write: write is NULL"},
    {"ipup_memory_report_write with a failing write", 1, er_memw_io, IPUP_ERR_IO, "ipup_memory_report_write: the write callback failed"},
    {"ipup_trace_write with NULL write", 1, er_trace_null, IPUP_ERR_ARG, "ipup_trace_write: write is NULL"},
    {"ipup_trace_write with a failing write", 1, er_trace_io, IPUP_ERR_IO, "ipup_trace_write: the write callback failed"},
    {"ipup_set_transport without hooks", 1, er_transport, IPUP_ERR_ARG, "ipup_set_transport: every hook"},
};

/* each case on a planted message: the code, and a fresh message naming the call */
TTEST(every_error_sets_its_message) {
    size_t k;
    for (k = 0; k < sizeof er_cases / sizeof er_cases[0]; k++) {
        const er_case *c = &er_cases[k];
        int rc;
        ipup_shutdown(&er_emu);
        memset(&er_emu, 0, sizeof er_emu);
        if (c->live) {
            ipup_config cfg = er_config(4);
            TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
        }
        ipup_snprintf(er_emu.core.msg, sizeof er_emu.core.msg, "stale text of an earlier call");
        rc = c->call(&er_emu);
        TT_CHECK_MSG(rc == c->code, "%s: returned %d (%s), expected %d", c->what, rc, ipup_result_str(rc), c->code);
        TT_CHECK_MSG(strstr(ipup_last_error(&er_emu), c->says) != NULL, "%s: message '%.200s' lacks '%s'", c->what,
                     ipup_last_error(&er_emu), c->says);
        TT_CHECK_MSG(strstr(ipup_last_error(&er_emu), "stale") == NULL, "%s: the planted message is still there", c->what);
    }
    ipup_shutdown(&er_emu);
}

/* the same calls on an initialised emulator with good arguments succeed (the table
   tests the arguments, not a broken emulator) */
TTEST(good_arguments_succeed) {
    ipup_config cfg = er_config(4);
    ipup_tensor_info t;
    ipup_mem_report m;
    memset(&er_emu, 0, sizeof er_emu);
    TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
    TT_EQ_INT(er_run(&er_emu), IPUP_OK);
    TT_EQ_INT(er_eval(&er_emu), IPUP_OK);
    TT_EQ_INT(ipup_tensor_count(&er_emu), 4);
    TT_EQ_INT(ipup_tensor_get(&er_emu, 3, &t), IPUP_OK);
    TT_EQ_INT(er_tfind(&er_emu), IPUP_OK);
    TT_EQ_INT(ipup_memory_report(&er_emu, 1, &m), IPUP_OK);
    TT_EQ_INT(er_memw(&er_emu), IPUP_OK);
    TT_EQ_INT(er_trace(&er_emu), IPUP_OK);
    TT_EQ_INT(er_sync(&er_emu), IPUP_OK);
    /* a failed call, then a good evaluate: no old text is left */
    TT_EQ_INT(er_eval_nolabels(&er_emu), IPUP_ERR_ARG);
    TT_EQ_INT(er_eval(&er_emu), IPUP_OK);
    TT_CHECK(ipup_last_error(&er_emu)[0] == 0);
    ipup_shutdown(&er_emu);
}

/* a failed ipup_init (an IPU pool one byte short), then ipup_run: the run's own message,
   not the init's */
TTEST(run_after_failed_init) {
    ipup_config cfg = er_config(4);
    ipup_plan plan;
    memset(&er_emu, 0, sizeof er_emu);
    TT_EQ_INT(ipup_plan_config(&er_emu, &cfg, &plan), IPUP_OK);
    cfg.ipu[1].bytes = plan.ipu_bytes[1] - 1;
    TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_ERR_OOM);
    TT_CONTAINS(ipup_last_error(&er_emu), "out of memory");
    TT_EQ_INT(ipup_run(&er_emu, NULL), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&er_emu), "ipup_run: the emulator is not initialised");
    TT_CHECK(strstr(ipup_last_error(&er_emu), "out of memory") == NULL);
    TT_EQ_INT(er_eval(&er_emu), IPUP_ERR_ARG);
    TT_CONTAINS(ipup_last_error(&er_emu), "ipup_evaluate: the emulator is not initialised");
    /* and with a pool of the planned size it starts */
    cfg.ipu[1].bytes = plan.ipu_bytes[1];
    TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
    TT_CHECK(ipup_last_error(&er_emu)[0] == 0);
    ipup_shutdown(&er_emu);
}

/* the warnings ipup_sched_generate gives for the emulator's table */
static void er_sched_warnings(int32_t S, int32_t M, ipup_sched_kind kind, char *w, size_t cap) {
    static ipup_op ops[IPUP_SCHED_MAX_OPS(4, 16)];
    ipup_sched_config sc;
    ipup_table t;
    memset(&sc, 0, sizeof sc);
    sc.kind = kind;
    sc.stages = S;
    sc.microbatches = M;
    if (ipup_sched_generate(&sc, ops, IPUP_SCHED_MAX_OPS(4, 16), &t, w, cap) != IPUP_OK) w[0] = 0;
}

TTEST(warnings_are_kept) {
    static const int32_t Ms[] = {1, 2, 3, 4, 5, 6, 8};
    char want[IPUP_MSG_MAX], got[IPUP_MSG_MAX];
    size_t k;
    int warned = 0, clean = 0;
    TT_STREQ(ipup_warnings(NULL), "");
    for (k = 0; k < sizeof Ms / sizeof Ms[0]; k++) {
        ipup_config cfg = er_config(Ms[k]);
        ipup_plan plan;
        static uint8_t scratch[IPUP_PLAN_SCRATCH_BYTES(2, 8)];
        er_sched_warnings(2, Ms[k], IPUP_SCHED_GROUPED, want, sizeof want);
        memset(&er_emu, 0, sizeof er_emu);
        TT_CHECK(ipup_warnings(&er_emu)[0] == 0);
        TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
        TT_CHECK_MSG(strcmp(ipup_warnings(&er_emu), want) == 0, "M=%d: ipup_warnings '%.150s', the generator '%.150s'", (int)Ms[k], ipup_warnings(&er_emu), want);
        TT_EQ_INT(ipup_plan_pools(&cfg, &plan, scratch, sizeof scratch, got, sizeof got), IPUP_OK);
        TT_CHECK_MSG(strcmp(got, want) == 0, "M=%d: ipup_plan_pools '%.150s', the generator '%.150s'", (int)Ms[k], got, want);
        if (want[0]) warned++;
        else clean++;
        ipup_shutdown(&er_emu);
    }
    TT_CHECK(warned >= 3 && clean >= 2); /* M = 1, 2, 3, 5, 6 break M % 2S == 0; 4 and 8 do not */
    /* the Grouped rule's text, and M=1: one micro-batch, the pipeline never fills */
    {
        ipup_config cfg = er_config(3);
        memset(&er_emu, 0, sizeof er_emu);
        TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
        TT_CONTAINS(ipup_warnings(&er_emu), "(M=3) is not a multiple of 2 x the number of pipeline stages");
        ipup_shutdown(&er_emu);
        cfg = er_config(1);
        TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
        TT_CONTAINS(ipup_warnings(&er_emu), "never fills");
        ipup_shutdown(&er_emu);
        /* the next ipup_init replaces them: a clean configuration leaves none */
        cfg = er_config(4);
        TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_OK);
        TT_CHECK(ipup_warnings(&er_emu)[0] == 0);
        ipup_shutdown(&er_emu);
        /* under strict the rule is an error, with the same text */
        cfg = er_config(3);
        cfg.strict = 1;
        TT_EQ_INT(ipup_init(&er_emu, &cfg), IPUP_ERR_CONFIG);
        TT_CONTAINS(ipup_last_error(&er_emu), "(M=3) must be a multiple of 2 x the number of pipeline stages");
    }
}

/* warnings longer than IPUP_WARN_MAX are cut after the last whole line */
TTEST(warnings_cut_at_a_line) {
    char w[40];
    tpriv_keep_warnings(w, sizeof w, "first warning\nsecond warning that is long enough to be cut off\n");
    TT_STREQ(w, "first warning\n");
    tpriv_keep_warnings(w, sizeof w, "short\n");
    TT_STREQ(w, "short\n");
    tpriv_keep_warnings(w, sizeof w, "");
    TT_STREQ(w, "");
}

static const ttest_case cases[] = {
    TT_CASE(every_error_sets_its_message), TT_CASE(good_arguments_succeed), TT_CASE(run_after_failed_init),
    TT_CASE(warnings_are_kept), TT_CASE(warnings_cut_at_a_line),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
