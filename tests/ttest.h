/* ttest.h - the tiny test framework of ipupipe's own tests (no external library).
 *
 * A test file includes this header once, defines tests with TTEST(name) { ... },
 * registers them in a table and calls ttest_main():
 *
 *     TTEST(adds) { TT_CHECK(1 + 1 == 2); TT_NEAR(0.1f + 0.2f, 0.3f, 1e-6); }
 *     static const ttest_case cases[] = { TT_CASE(adds) };
 *     int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
 *
 * Every check that fails prints file:line and what was compared; a test fails
 * when any of its checks fails. The binary prints one line per test and ends with
 * `N passed, N failed` (counting tests), exiting 1 on any failure. An argument
 * runs only the tests whose name contains it. ttest_slow() tells a test to run fewer
 * steps or smaller shapes (under Valgrind and the sanitizers).
 */
#ifndef TTEST_H
#define TTEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*ttest_fn)(void);
typedef struct {
    const char *name;
    ttest_fn fn;
} ttest_case;

/* Failures of the test now running. */
static int ttest_failures_;
static const char *ttest_current_;

#define TTEST(name) static void ttest_##name(void)
#define TT_CASE(name) { #name, ttest_##name }

static void ttest_fail_(const char *file, int line, const char *what) {
    if (ttest_failures_ < 8) /* keep the log short when a loop fails many times */
        printf("    %s:%d: %s: %s\n", file, line, ttest_current_, what);
    ttest_failures_++;
}

/* Fail with a printf-style message. */
#define TT_FAILF(...)                                                          \
    do {                                                                       \
        char ttest_buf_[512];                                                  \
        snprintf(ttest_buf_, sizeof ttest_buf_, __VA_ARGS__);                  \
        ttest_fail_(__FILE__, __LINE__, ttest_buf_);                           \
    } while (0)

#define TT_CHECK(cond)                                                         \
    do {                                                                       \
        if (!(cond)) ttest_fail_(__FILE__, __LINE__, "expected " #cond);       \
    } while (0)

#define TT_CHECK_MSG(cond, ...)                                                \
    do {                                                                       \
        if (!(cond)) TT_FAILF(__VA_ARGS__);                                    \
    } while (0)

#define TT_EQ_INT(a, b)                                                        \
    do {                                                                       \
        long long ttest_a_ = (long long)(a), ttest_b_ = (long long)(b);        \
        if (ttest_a_ != ttest_b_)                                              \
            TT_FAILF("%s == %s: %lld != %lld", #a, #b, ttest_a_, ttest_b_);    \
    } while (0)

/* |a - b| <= tol (absolute), computed in double. NaN never passes. */
#define TT_NEAR(a, b, tol)                                                     \
    do {                                                                       \
        double ttest_a_ = (double)(a), ttest_b_ = (double)(b);                 \
        if (!(fabs(ttest_a_ - ttest_b_) <= (double)(tol)))                     \
            TT_FAILF("%s ~ %s: %.9g vs %.9g (tol %g)", #a, #b, ttest_a_,       \
                     ttest_b_, (double)(tol));                                 \
    } while (0)

#define TT_STREQ(a, b)                                                         \
    do {                                                                       \
        const char *ttest_a_ = (a), *ttest_b_ = (b);                           \
        if (!ttest_a_ || !ttest_b_ || strcmp(ttest_a_, ttest_b_) != 0)         \
            TT_FAILF("%s == %s: \"%s\" != \"%s\"", #a, #b,                     \
                     ttest_a_ ? ttest_a_ : "(null)",                           \
                     ttest_b_ ? ttest_b_ : "(null)");                          \
    } while (0)

/* strstr(hay, needle) != NULL */
#define TT_CONTAINS(hay, needle)                                               \
    do {                                                                       \
        const char *ttest_h_ = (hay), *ttest_n_ = (needle);                    \
        if (!ttest_h_ || !strstr(ttest_h_, ttest_n_))                          \
            TT_FAILF("%s should contain \"%s\"; it is \"%.300s\"", #hay,       \
                     ttest_n_, ttest_h_ ? ttest_h_ : "(null)");                \
    } while (0)

/* 1 when IPUPIPE_TEST_SLOW is set, not empty and not 0 (`make test` sets it to 1 for
   Valgrind and the sanitizers), else 0. */
static inline int ttest_slow(void) {
    const char *s = getenv("IPUPIPE_TEST_SLOW");
    return s && *s && strcmp(s, "0") != 0;
}

static int ttest_main_(const ttest_case *cases, size_t n, int argc, char **argv) {
    int passed = 0, failed = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (argc > 1 && !strstr(cases[i].name, argv[1])) continue;
        ttest_current_ = cases[i].name;
        ttest_failures_ = 0;
        cases[i].fn();
        if (ttest_failures_) {
            printf("FAIL %s (%d failed checks)\n", cases[i].name, ttest_failures_);
            failed++;
        } else {
            printf("ok   %s\n", cases[i].name);
            passed++;
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#define TTEST_MAIN(cases, argc, argv)                                          \
    ttest_main_((cases), sizeof(cases) / sizeof((cases)[0]), (argc), (argv))

#endif /* TTEST_H */
