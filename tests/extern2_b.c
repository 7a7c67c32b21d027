/* tests/extern2_b.c - the second translation unit of test_extern2 (see tests/test_extern2.c):
 * declarations only; every library call links to the definitions of test_extern2.c. */
#include "ipupipe.h"
#include "two_tu.h"

void extern2_b_work(two_tu_result *r);
void extern2_b_work(two_tu_result *r) { two_tu_work(r); }
