/* tests/static2_b.c - the second translation unit of test_static2 (see tests/test_static2.c):
 * its own private copy of the whole library (IPUPIPE_STATIC + IPUPIPE_IMPLEMENTATION). */
#define IPUPIPE_STATIC
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h"
#include "two_tu.h"

void static2_b_work(two_tu_result *r);
void static2_b_work(two_tu_result *r) { two_tu_work(r); }
