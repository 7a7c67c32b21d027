/* tests/test_static2.c - two translation units that each define IPUPIPE_STATIC and
 * IPUPIPE_IMPLEMENTATION before including ipupipe.h (this file and tests/static2_b.c),
 * linked into one program: no symbol of the library may clash at link time, each TU uses
 * its own private copy (the function addresses differ) and both copies compute the same
 * bits (a schedule table, the dense and GELU kernels, two training steps of a tiny
 * two-stage emulator: tests/two_tu.h). The Makefile links the extra TU (SRCS_test_static2)
 * in every configuration; check-cxx also builds the pair as C++.
 */
#define IPUPIPE_STATIC
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "two_tu_checks.h"

void static2_b_work(two_tu_result *r); /* tests/static2_b.c */

/* IPUPIPE_STATIC: every public function is private to its TU */
TTEST(private_copies) {
    TT_CHECK(g_a.dense != NULL && g_b.dense != NULL && g_a.dense != g_b.dense);
    TT_CHECK(g_a.result_str != NULL && g_b.result_str != NULL && g_a.result_str != g_b.result_str);
    TT_CHECK(g_a.init != NULL && g_b.init != NULL && g_a.init != g_b.init);
}

/* the version macros are the same in every header this TU included */
TTEST(version) {
    TT_EQ_INT(IPUPIPE_VERSION_MAJOR, 0);
    TT_EQ_INT(IPUPIPE_VERSION_MINOR, 5);
    TT_EQ_INT(IPUPIPE_VERSION_PATCH, 0);
    TT_STREQ(IPUPIPE_VERSION_STRING, "0.5.0");
}

static const ttest_case cases[] = {
    TT_CASE(tu_a_results), TT_CASE(tu_b_results), TT_CASE(same_bits), TT_CASE(private_copies),
    TT_CASE(version),
};

int main(int argc, char **argv) {
    two_tu_work(&g_a);
    static2_b_work(&g_b);
    return TTEST_MAIN(cases, argc, argv);
}
