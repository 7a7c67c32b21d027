/* test_fw_math.c - host test of fw_math.h (run by `make firmware`): fw_expf and fw_logf
   against the C library's double exp and log over their ranges, and the special values. */
#include <math.h>
#include <stdio.h>
#include "fw_math.h"

int main(void)
{
    double max_e = 0.0, max_l = 0.0;
    float x;
    int fails = 0, checks = 0;
    for (x = -87.0f; x < 88.5f; x += 0.00731f) {   /* normal results */
        double r = exp((double)x), err = fabs(((double)fw_expf(x) - r) / r);
        if (err > max_e) max_e = err;
    }
    for (x = 1e-37f; x < 3e38f; x *= 1.00913f) {   /* absolute error for |log| < 1 */
        double r = log((double)x), err = fabs((double)fw_logf(x) - r) / (fabs(r) > 1.0 ? fabs(r) : 1.0);
        if (err > max_l) max_l = err;
    }
#define CHECK(c) do { checks++; if (!(c)) { fails++; printf("FAIL fw_math: %s\n", #c); } } while (0)
    CHECK(max_e < 2.5e-7);  /* ~2 ulp */
    CHECK(max_l < 2.5e-7);
    CHECK(fw_expf(0.0f) == 1.0f);
    CHECK(fw_logf(1.0f) == 0.0f);
    CHECK(isinf(fw_expf(100.0f)) && fw_expf(100.0f) > 0.0f);
    CHECK(fw_expf(-200.0f) == 0.0f);
    CHECK(fw_expf(-100.0f) > 0.0f && fw_expf(-100.0f) < 1e-43f); /* subnormal, not flushed */
    CHECK(isinf(fw_logf(0.0f)) && fw_logf(0.0f) < 0.0f);
    CHECK(isnan(fw_logf(-1.0f)));
    CHECK(isnan(fw_expf(NAN)) && isnan(fw_logf(NAN)));
    CHECK(fabs((double)fw_logf(1e-40f) - log(1e-40)) < 1e-5);      /* subnormal input */
    if (fails) { printf("FAIL fw_math: %d of %d checks failed\n", fails, checks); return 1; }
    printf("fw_math: all %d checks hold (max relative error expf %.2g, logf %.2g)\n", checks, max_e, max_l);
    return 0;
}
