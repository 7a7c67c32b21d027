/* tests/test_extern2.c - the usual layout of a program of two translation units: this one
 * defines IPUPIPE_IMPLEMENTATION before including ipupipe.h (the one extern definition of
 * every function), tests/extern2_b.c only includes the declarations. Both run the same
 * work (tests/two_tu.h: a schedule table, the dense and GELU kernels, two training steps
 * of a tiny two-stage emulator); the results must be right and identical, and both TUs
 * must see the same function addresses. The Makefile links the extra TU
 * (SRCS_test_extern2) in every configuration; check-cxx also builds the pair as C++.
 */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "two_tu_checks.h"

void extern2_b_work(two_tu_result *r); /* tests/extern2_b.c */

/* one definition of each public function, shared by both TUs */
TTEST(shared_definitions) {
    TT_CHECK(g_a.dense != NULL && g_a.dense == g_b.dense);
    TT_CHECK(g_a.result_str != NULL && g_a.result_str == g_b.result_str);
    TT_CHECK(g_a.init != NULL && g_a.init == g_b.init);
    TT_CHECK(g_a.ok_str == g_b.ok_str); /* the same string table */
}

static const ttest_case cases[] = {
    TT_CASE(tu_a_results), TT_CASE(tu_b_results), TT_CASE(same_bits), TT_CASE(shared_definitions),
};

int main(int argc, char **argv) {
    two_tu_work(&g_a);
    extern2_b_work(&g_b);
    return TTEST_MAIN(cases, argc, argv);
}
