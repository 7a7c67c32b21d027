/* test_format.c - ipup_snprintf / ipup_vsnprintf of ipupipe_sched.h against the C
 * library's snprintf (glibc: the output must be byte-identical, return value too).
 * Differential over many formats and values: integers of every size modifier at
 * their limits, doubles from random bit patterns, integers, powers of ten, exact
 * halfway cases, denormals, huge and tiny values, inf, nan, negative zero, every
 * precision 0..17 and some long ones, widths and flags; strings, characters and
 * pointers; truncation into short buffers and the NULL/0 size query.
 * Formats are built at run time, so the compiler's format checks do not apply. */
#include "ipupipe_sched.h"
#include "ttest.h"

#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>

static int g_cases;

/* under Valgrind and the sanitizers (IPUPIPE_TEST_SLOW) fewer random values */
static int scaled(int n) { return ttest_slow() ? n / 2 : n; }
static int every(int n) { return ttest_slow() ? 2 * n : n; }

/* Format with both and compare; also the length query (NULL, 0). */
static void cmp(const char *fmt, ...) {
    static char want[4096], got[4096];
    va_list ap, aq, ar;
    int rw, rg, rq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    va_copy(ar, ap);
    rw = vsnprintf(want, sizeof want, fmt, ap);
    memset(got, 'Z', sizeof got);
    rg = ipup_vsnprintf(got, sizeof got, fmt, aq);
    rq = ipup_vsnprintf(NULL, 0, fmt, ar);
    va_end(ar);
    va_end(aq);
    va_end(ap);
    g_cases++;
    if (rw != rg || rq != rw || (rw >= 0 && memcmp(want, got, (size_t)rw < sizeof want ? (size_t)rw + 1 : sizeof want) != 0))
        TT_FAILF("format \"%s\": libc %d \"%.200s\", ipup %d (query %d) \"%.200s\"", fmt, rw, want, rg, rq, got);
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { /* xorshift64* */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ull;
}
static double bits_double(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* "%<flags><width>.<prec><conv>"; width/prec < 0: none */
static const char *mkfmt(char *f, size_t n, const char *flags, int width, int prec, const char *size, char conv) {
    char w[16] = "", p[16] = "";
    if (width >= 0) snprintf(w, sizeof w, "%d", width);
    if (prec >= 0) snprintf(p, sizeof p, ".%d", prec);
    snprintf(f, n, "%%%s%s%s%s%c", flags, w, p, size, conv);
    return f;
}

static const char *const g_flags[] = {"", "-", "+", " ", "0", "#", "-+", "+0", " 0", "#0", "-#", "+#", "- ", "-0", "+ #0"};
#define NFLAGS ((int)(sizeof g_flags / sizeof g_flags[0]))

TTEST(integers_at_their_limits) {
    static const long long sv[] = {0, 1, -1, 7, -7, 42, 127, -128, 255, 32767, -32768, 65535, INT_MAX, INT_MIN,
                                   (long long)INT_MAX + 1, LLONG_MAX, LLONG_MIN, 1000000000, -999999999};
    static const char convs[] = "diuoxX";
    char f[64];
    int i, c, fl, w, p;
    for (i = 0; i < (int)(sizeof sv / sizeof sv[0]); i++) {
        long long v = sv[i];
        for (c = 0; convs[c]; c++) {
            char cv = convs[c];
            int sgn = cv == 'd' || cv == 'i';
            for (fl = 0; fl < NFLAGS; fl++) {
                if (strchr(g_flags[fl], '#') && sgn) continue; /* # with d i is undefined */
                static const int wp[6][2] = {{-1, -1}, {22, -1}, {1, 0}, {-1, 21}, {7, 3}, {0, 10}};
                w = wp[(i + c + fl) % 6][0];
                p = wp[(i + c + fl) % 6][1];
                mkfmt(f, sizeof f, g_flags[fl], w, p, "", cv);
                if (sgn) cmp(f, (int)v);
                else cmp(f, (unsigned)v);
                mkfmt(f, sizeof f, g_flags[fl], w, p, "hh", cv);
                if (sgn) cmp(f, (int)(signed char)v);
                else cmp(f, (unsigned)(unsigned char)v);
                mkfmt(f, sizeof f, g_flags[fl], w, p, "h", cv);
                if (sgn) cmp(f, (int)(short)v);
                else cmp(f, (unsigned)(unsigned short)v);
                mkfmt(f, sizeof f, g_flags[fl], w, p, "l", cv);
                if (sgn) cmp(f, (long)v);
                else cmp(f, (unsigned long)v);
                mkfmt(f, sizeof f, g_flags[fl], w, p, "ll", cv);
                if (sgn) cmp(f, v);
                else cmp(f, (unsigned long long)v);
                mkfmt(f, sizeof f, g_flags[fl], w, p, "z", cv);
                if (sgn) cmp(f, (ptrdiff_t)v);
                else cmp(f, (size_t)v);
            }
        }
    }
    cmp("%zu %zx %llu %llo", SIZE_MAX, SIZE_MAX, ULLONG_MAX, ULLONG_MAX);
    cmp("%hhu %hu %u %lu", (unsigned)UCHAR_MAX, (unsigned)USHRT_MAX, UINT_MAX, ULONG_MAX);
    cmp("%d%%|%5d|%-5d|%05d|%.0d|%.0x|%#.0o|%#o|%#x|%#X", 3, 4, 5, 6, 0, 0u, 0u, 0u, 0u, 0u);
    cmp("%+.3d|% .3d|%+05d|% 05d|%-+5d|%010.4d", 5, 5, -5, 5, 5, -42);
}

/* The double formats of one value: every conversion, precisions 0..17, some flags and
   widths; a few long precisions. */
static void doubles_of(double v, int full) {
    static const char convs[] = "fFeEgG";
    char f[64];
    int c, p;
    for (c = 0; convs[c]; c++) {
        cmp(mkfmt(f, sizeof f, "", -1, -1, "", convs[c]), v);
        if (full) {
            for (p = 0; p <= 17; p++) cmp(mkfmt(f, sizeof f, "", -1, p, "", convs[c]), v);
        } else {
            p = (int)(rnd() % 18);
            cmp(mkfmt(f, sizeof f, "", -1, p, "", convs[c]), v);
        }
        cmp(mkfmt(f, sizeof f, g_flags[rnd() % NFLAGS], (int)(rnd() % 30), (int)(rnd() % 20) - 1, "", convs[c]), v);
    }
}

TTEST(doubles_special) {
    static const char convs[] = "fFeEgG";
    const double inf = bits_double(0x7ff0000000000000ull), nan = bits_double(0x7ff8000000000000ull);
    const double vals[] = {0.0, -0.0, inf, -inf, nan, -nan, bits_double(0x7ff0000000000001ull), 1.0, -1.0,
                           DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_EPSILON};
    char f[64];
    int i, c, fl;
    for (i = 0; i < (int)(sizeof vals / sizeof vals[0]); i++) {
        doubles_of(vals[i], 1);
        for (c = 0; convs[c]; c++)
            for (fl = 0; fl < NFLAGS; fl++) {
                static const int wp[3][2] = {{12, -1}, {1, 0}, {25, 3}};
                cmp(mkfmt(f, sizeof f, g_flags[fl], wp[(fl + c) % 3][0], wp[(fl + c) % 3][1], "", convs[c]), vals[i]);
            }
    }
    /* every digit of the extremes */
    cmp("%.1074f", DBL_TRUE_MIN);
    cmp("%.1100e", DBL_TRUE_MIN);
    cmp("%.800g", -DBL_MIN);
    cmp("%.330f|%.320e", DBL_MAX, DBL_MAX);
    cmp("%.40f|%.40e|%.60g", 0.1, 1.0 / 3.0, 2.0 / 3.0);
    cmp("%lf %lg %le", 1.5, 2.5, 3.5);
}

TTEST(doubles_random_bits) {
    int i;
    for (i = 0; i < scaled(220); i++) doubles_of(bits_double(rnd()), i < 6);
    for (i = 0; i < scaled(40); i++) { /* denormals */
        uint64_t b = rnd() >> (12 + rnd() % 52);
        doubles_of(bits_double(b | (rnd() & 0x8000000000000000ull)), 0);
    }
    for (i = 0; i < scaled(100); i++) { /* exponents near 1, where %f and %g show many digits */
        uint64_t b = (rnd() & 0x800fffffffffffffull) | ((uint64_t)(1023 - 60 + rnd() % 120) << 52);
        doubles_of(bits_double(b), 0);
    }
}

TTEST(doubles_decimal_values) {
    double p;
    int i, k;
    for (p = 1.0, i = 0; i <= 308; i++, p *= 10.0) { /* powers of ten (as rounded in binary) */
        if (i < 40 || i % every(2) == 0) doubles_of(p, i < 8);
        if (i % every(4) == 0) doubles_of(-1.0 / p, 0);
    }
    for (i = 0; i < scaled(60); i++) { /* integers and integer-ish values */
        long long v = (long long)(rnd() >> (rnd() % 64));
        doubles_of((double)v, 0);
        doubles_of((double)(i - 150), 0);
    }
    /* exact halfway cases: x.5, x.25, x.125 ... round half to even at the cut */
    for (i = 0; i < 16; i++)
        for (k = 1; k <= 8; k++) {
            double v = ((double)i + 0.5) / (double)(1 << (k - 1));
            char f[48]; /* room for three 11-character ints: gcc's -Wformat-truncation */
            snprintf(f, sizeof f, "%%.%df|%%.%de|%%.%dg", k - 1, k, k + 1);
            cmp(f, v, v, v);
            cmp(f, -v, -v, -v);
            cmp("%.0f %.1f %.2f %.3f %.0e %.1e %.0g %.1g %.2g", v, v, v, v, v, v, v, v, v);
        }
    cmp("%.0f %.0f %.0f %.0f %.0f %.0f", 0.5, 1.5, 2.5, 3.5, -0.5, -2.5);
    cmp("%.1f %.1f %.1f %.2f %.2f", 0.25, 0.35, 0.45, 1.005, 1.125);
    cmp("%.0e %.0e %.1e %g %g %g", 9.5, 8.5, 9.95, 999999.5, 9999995.0, 0.00001);
    cmp("%g %g %g %g %G %#g %#.0g %#.0f %#.0e", 100000.0, 1000000.0, 1e-4, 1e-5, 1e-10, 1.0, 2.0, 3.0, 4.0);
    cmp("%.3g|%10.4f|%-10.2e|%+.3e|% .0f|%08.3f|%-08.3f|%+08.2e", 123456.0, 3.14159, 2.5e-7, 1e100, 7.0, -3.5, 3.5, 12.0);
}

TTEST(strings_chars_pointers) {
    const char *volatile nul = NULL; /* glibc's "(null)" */
    int x;
    cmp("[%s][%10s][%-10s][%.2s][%5.1s][%-5.0s][%.10s]", "abc", "abc", "abc", "abc", "abc", "abc", "abc");
    cmp("[%s][%.3s][%.6s][%8s][%-8.7s]", nul, nul, nul, nul, nul);
    cmp("[%c][%5c][%-5c][%c]", 'a', 'b', 'c', 200);
    cmp("[%p][%20p][%-20p][%p][%8p][%-8p]", (void *)&x, (void *)&x, (void *)&x, (void *)0, (void *)0, (void *)0);
    cmp("[%*d][%-*d][%*d][%.*d][%.*d][%*.*f][%.*s]", 6, 42, 6, 42, -6, 42, 4, 42, -3, 42, 10, 3, 2.5, 2, "abc");
    cmp("[%*.*e][%.*g][%*s]", -12, 2, 1234.5, 0, 0.5, 3, "");
    cmp("100%% [%%]");
    cmp("%y and %5y"); /* not conversions: written as they are */
    cmp("");
    cmp("plain text, no conversion");
    {
        char big[3000];
        memset(big, 'q', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        cmp("%s|%.100s|%3000s", big, big, "x");
    }
}

/* A text of n bytes into buffers of every size up to n + 2: same bytes, NUL, return. */
TTEST(truncation_and_return_value) {
    static const char *fmts[] = {"%d-%s-%.3f", "%s", "%20.10e", "%x%X%o"};
    char want[256], got[256];
    size_t len;
    int i, rw, rg;
    for (i = 0; i < 4; i++) {
        for (len = 0; len < 40; len++) {
            memset(want, '#', sizeof want);
            memset(got, '#', sizeof got);
            switch (i) {
            case 0: rw = snprintf(want, len, fmts[0], -123, "abc", 2.0 / 3.0); rg = ipup_snprintf(got, len, fmts[0], -123, "abc", 2.0 / 3.0); break;
            case 1: rw = snprintf(want, len, fmts[1], "0123456789abcdefghij"); rg = ipup_snprintf(got, len, fmts[1], "0123456789abcdefghij"); break;
            case 2: rw = snprintf(want, len, fmts[2], 1e-300); rg = ipup_snprintf(got, len, fmts[2], 1e-300); break;
            default: rw = snprintf(want, len, fmts[3], 0xdeadu, 0xbeefu, 0777u); rg = ipup_snprintf(got, len, fmts[3], 0xdeadu, 0xbeefu, 0777u); break;
            }
            g_cases++;
            TT_EQ_INT(rg, rw);
            TT_CHECK_MSG(memcmp(want, got, sizeof want) == 0, "format %s, len %d: \"%.60s\" vs \"%.60s\"", fmts[i], (int)len, want, got);
        }
    }
    TT_EQ_INT(ipup_snprintf(NULL, 0, "%s=%d", "abc", 12345), 9);
    TT_EQ_INT(ipup_snprintf(got, 1, "%s", "abc"), 3);
    TT_EQ_INT(got[0], 0);
    got[0] = 'x';
    TT_EQ_INT(ipup_snprintf(got, 0, "%s", "abc"), 3); /* len 0: buf untouched */
    TT_EQ_INT(got[0], 'x');
    printf("    %d formats compared with the C library\n", g_cases);
}

static const ttest_case cases[] = {
    TT_CASE(integers_at_their_limits), TT_CASE(doubles_special),       TT_CASE(doubles_random_bits),
    TT_CASE(doubles_decimal_values),   TT_CASE(strings_chars_pointers), TT_CASE(truncation_and_return_value),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
