/* tests/two_tu_checks.h - the checks test_static2.c and test_extern2.c share: each TU's
 * two_tu_work() (tests/two_tu.h) must give the expected, and identical, results. */
#ifndef TWO_TU_CHECKS_H
#define TWO_TU_CHECKS_H

#include "two_tu.h"
#include "ttest.h"

static two_tu_result g_a, g_b; /* this TU's results, the other TU's */

/* what one TU computed: the schedule, the kernels, the emulator */
static void two_tu_check_one(const char *tu, const two_tu_result *r) {
    static const float dense_want[6] = {-3.625f, 1.5f, 0.0f, 2.625f, 1.25f, -2.9375f};
    int i;
    TT_CHECK_MSG(r->sched_rc == IPUP_OK, "%s: ipup_sched_generate returned %d", tu, r->sched_rc);
    TT_CHECK_MSG(r->n_ops == 2 * 4 * 8, "%s: 1F1B 4x8 has %d ops, want 64", tu, (int)r->n_ops);
    TT_CHECK_MSG(r->steps > 0, "%s: %d steps", tu, (int)r->steps);
    for (i = 0; i < 6; i++)
        TT_CHECK_MSG(r->dense_y[i] == dense_want[i], "%s: dense y[%d] = %g, want %g", tu, i,
                     (double)r->dense_y[i], (double)dense_want[i]);
    TT_CHECK_MSG(r->emu_init_rc == IPUP_OK, "%s: ipup_init returned %d: %s", tu, r->emu_init_rc, r->emu_msg);
    TT_CHECK_MSG(r->emu_run_rc == IPUP_OK, "%s: ipup_run returned %d: %s", tu, r->emu_run_rc, r->emu_msg);
    TT_CHECK_MSG(r->emu_tensors >= 4, "%s: %d tensors, want at least 4 (two dense layers)", tu,
                 (int)r->emu_tensors);
    TT_CHECK_MSG(r->emu_loss > 0.0 && r->emu_loss < 10.0, "%s: mean loss %g", tu, r->emu_loss);
    TT_CHECK_MSG(r->ok_str && r->ok_str[0], "%s: ipup_result_str(IPUP_OK) is empty", tu);
}

TTEST(tu_a_results) { two_tu_check_one("TU a", &g_a); }
TTEST(tu_b_results) { two_tu_check_one("TU b", &g_b); }

/* both TUs computed the same bits */
TTEST(same_bits) {
    TT_EQ_INT(g_a.n_ops, g_b.n_ops);
    TT_EQ_INT(g_a.steps, g_b.steps);
    TT_CHECK(g_a.ops_digest == g_b.ops_digest);
    TT_CHECK(memcmp(g_a.dense_y, g_b.dense_y, sizeof g_a.dense_y) == 0);
    TT_CHECK(g_a.gelu_digest == g_b.gelu_digest);
    TT_EQ_INT(g_a.emu_tensors, g_b.emu_tensors);
    TT_CHECK(g_a.emu_digest == g_b.emu_digest);
    TT_CHECK(memcmp(&g_a.emu_loss, &g_b.emu_loss, sizeof g_a.emu_loss) == 0);
    TT_STREQ(g_a.ok_str, g_b.ok_str);
}

#endif /* TWO_TU_CHECKS_H */
