#include "ttest.h"
TTEST(arith) { TT_CHECK(1 + 1 == 2); TT_NEAR(0.1 + 0.2, 0.3, 1e-12); TT_EQ_INT(3, 3); TT_STREQ("a", "a"); TT_CONTAINS("hello", "ell"); }
static const ttest_case cases[] = { TT_CASE(arith) };
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
