/* test_fw_printf.c - host test of fw_printf.h (run by `make firmware`): compares
   fw_snprintf with the C library's snprintf on the formats the ipupipe headers and the
   firmware use, including truncation and the returned length. */
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
#include "fw_printf.h"

static int fails, checks;

#define CMP(...) do { \
    char a_[128], b_[128]; int ra_, rb_; \
    ra_ = fw_snprintf(a_, sizeof a_, __VA_ARGS__); \
    rb_ = snprintf(b_, sizeof b_, __VA_ARGS__); \
    checks++; \
    if (ra_ != rb_ || strcmp(a_, b_) != 0) { \
        fails++; printf("FAIL line %d: %s -> fw \"%s\" (%d), libc \"%s\" (%d)\n", __LINE__, #__VA_ARGS__, a_, ra_, b_, rb_); } \
} while (0)

int main(void)
{
    char small[8];
    int r;
    CMP("plain text");
    CMP("%d|%i|%5d|%-5d|%05d|%+d|% d", 42, -7, 3, 3, -3, 9, 9);
    CMP("%u %x %X %o %#x %#o %08x", 4000000000u, 255u, 255u, 8u, 255u, 8u, 0xbeefu);
    CMP("%ld %lu %lld %llu", -123456789L, 123456789UL, -9000000000000LL, 18000000000000000000ULL);
    CMP("%zu %td %jd", (size_t)12345, (ptrdiff_t)-5, (intmax_t)-99);
    CMP("%hd %hhu", (short)-3, (unsigned char)200);
    CMP("%s|%10s|%-10s|%.2s|%c|%%", "abc", "right", "left", "truncate", 'Z');
    CMP("%*d|%-*d|%.*f", 6, 12, 6, 12, 3, 3.14159);
    CMP("%.0f %.1f %.2f %.4f %f", 2.6, 0.05, 1.005, 0.00012, 123456.789);
    CMP("%.3f %.3f %8.3f %-8.2f| %+.2f %010.3f", -0.0005, 1e-9, 3.5, 2.25, 7.0, -1.5);
    CMP("%.2f %.2f", 1e15, 123456789012.25);
    CMP("%e %.2e %E %.0e", 12345.678, 0.000123, 1e-10, 5e20);
    CMP("%g %g %g %g %g %g", 0.0001, 100000.0, 1e6, 1e-5, 3.14159265, 250.0);
    CMP("%.3g %.10g %g", 0.00012345, 1.0 / 3.0, 0.0);
    CMP("%f %e %g", 1.0 / 0.0 - 1.0 / 0.0 == 0.0 ? 1.0 : 2.0, 1.5, -2.5);
    CMP("%5.1f%% of %d bytes", 62.25, 1024);
    CMP("%lld samples, loss %.4f, acc %.2f%%", (long long)512, 0.123456, 83.671875);
    /* truncation: NUL-terminated, returns the full length */
    r = fw_snprintf(small, sizeof small, "%s-%d", "abcdef", 12345);
    checks++;
    if (r != 12 || strcmp(small, "abcdef-") != 0) { fails++; printf("FAIL truncation: \"%s\" %d\n", small, r); }
    r = fw_snprintf(NULL, 0, "%d", 123);
    checks++;
    if (r != 3) { fails++; printf("FAIL size query: %d\n", r); }
    /* not the "N passed, N failed" form: make test's total stays CI's closing line */
    if (fails) printf("FAIL fw_printf: %d of %d checks failed\n", fails, checks);
    else printf("fw_printf: all %d checks agree with the C library\n", checks);
    return fails != 0;
}
