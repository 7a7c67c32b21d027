/* test_half.c - ipup_f32_to_f16 / ipup_f16_to_f32 (whatever path this build selected:
 * IPUP_HALF_CVT) and the portable scalar conversions against a reference written here
 * independently: a half is decoded from its fields in double arithmetic (s 2^(e-15) (1 + m/1024)
 * or s 2^-14 m/1024), and a float is rounded by searching the sorted table of all finite
 * positive halves for its two neighbours and comparing distances in double (ties to the even
 * bit pattern; at or past 65520 = 65504 + half an ulp: infinity), per IEEE 754-2008 4.3.1.
 * Checked: all 65,536 halves decode exactly and round-trip (NaNs come back NaN, same sign,
 * quiet, same payload); floats: every midpoint between adjacent halves and its neighbours a
 * float ulp either side, powers of two across the whole range, and a stride through all
 * 2^32 bit patterns; arrays of every length 0..40 at odd offsets (SIMD body and tail).
 * ipup_f32_to_f16_sr (stochastic rounding): the two neighbours only, the share rounded up,
 * specials, and the same bits however the array is cut into calls.
 */
#include "ipupipe_kernels.h"
#include "impl_private.h" /* the scalar conversions, linked from build/CONFIG/kernels.o */
#include "ttest.h"

#include <stdint.h>

static double ref_half_value[0x7C00]; /* finite positive halves, increasing with the bits */

static double ref_decode(uint16_t h) { /* finite halves only */
    const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    const double mag = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return s ? -mag : mag;
}
static void ref_init(void) {
    int i;
    for (i = 0; i < 0x7C00; i++) ref_half_value[i] = ref_decode((uint16_t)i);
}
static uint16_t ref_encode(float f) { /* not NaN */
    const double a = fabs((double)f);
    const uint16_t sign = signbit(f) ? 0x8000 : 0;
    int lo = 0, hi = 0x7BFF;
    if (a >= 65520.0) return (uint16_t)(sign | 0x7C00);
    if (a >= 65504.0) return (uint16_t)(sign | 0x7BFF);
    while (hi - lo > 1) { /* ref_half_value[lo] <= a < ref_half_value[hi] */
        const int mid = (lo + hi) / 2;
        if (ref_half_value[mid] <= a) lo = mid;
        else hi = mid;
    }
    {
        const double dl = a - ref_half_value[lo], dh = ref_half_value[hi] - a;
        const int pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
        return (uint16_t)(sign | pick);
    }
}
static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* one float through both the public function (in a block of 37, so SIMD paths see it in a
   vector and the tail) and the portable scalar function */
static int check_one(float f) {
    float blk[37];
    uint16_t out[37];
    uint16_t want, got_p;
    int i, bad = 0;
    for (i = 0; i < 37; i++) blk[i] = f;
    ipup_f32_to_f16(37, blk, out);
    got_p = tpriv_f32_to_f16_1(f);
    if (f != f) {
        const uint32_t u = f_bits(f);
        want = (uint16_t)(((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x3FFu));
    } else want = ref_encode(f);
    for (i = 0; i < 37; i++)
        if (out[i] != want) bad = 1;
    if (got_p != want) bad = 1;
    if (bad)
        TT_FAILF("float 0x%08x (%.9g): want half 0x%04x, public 0x%04x (lane 0) 0x%04x (tail),"
                 " portable 0x%04x",
                 (unsigned)f_bits(f), (double)f, want, out[0], out[36], got_p);
    return bad;
}

TTEST(path_named) {
    printf("    conversion path: %s (kernels %s)\n", IPUP_HALF_CVT, IPUP_KERNELS_SIMD);
    TT_CHECK(strlen(IPUP_HALF_CVT) > 0);
}

TTEST(all_halves_decode_and_round_trip) {
    static uint16_t h[65536], back[65536];
    static float f[65536];
    int i, bad = 0;
    for (i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    ipup_f16_to_f32(65536, h, f);
    ipup_f32_to_f16(65536, f, back);
    for (i = 0; i < 65536 && bad < 8; i++) {
        const int e = (i >> 10) & 0x1F, m = i & 0x3FF;
        const float fp = tpriv_f16_to_f32_1((uint16_t)i);
        if (e == 0x1F && m) { /* NaN: quiet, sign and payload kept */
            const uint32_t want = ((uint32_t)(i & 0x8000) << 16) | 0x7FC00000u |
                                  ((uint32_t)m << 13);
            if (f_bits(f[i]) != want || f_bits(fp) != want ||
                back[i] != (uint16_t)(i | 0x200)) {
                TT_FAILF("NaN half 0x%04x: float 0x%08x / portable 0x%08x (want 0x%08x),"
                         " back 0x%04x", i, (unsigned)f_bits(f[i]), (unsigned)f_bits(fp),
                         (unsigned)want, back[i]);
                bad++;
            }
            continue;
        }
        {
            const double want = e == 0x1F ? ((i & 0x8000) ? -HUGE_VAL : HUGE_VAL)
                                          : ref_decode((uint16_t)i);
            const int neg = !!(i & 0x8000);
            const int sign_ok = !!signbit(f[i]) == neg && !!signbit(fp) == neg;
            if ((double)f[i] != want || (double)fp != want || !sign_ok || back[i] != h[i] ||
                tpriv_f32_to_f16_1(f[i]) != h[i]) {
                TT_FAILF("half 0x%04x: float %.9g / portable %.9g (want %.9g), back 0x%04x",
                         i, (double)f[i], (double)fp, want, back[i]);
                bad++;
            }
        }
    }
}

TTEST(float_sweep_against_reference) {
    uint32_t u, k;
    int bad = 0, e;
    uint64_t count = 0;
    /* every midpoint between adjacent finite halves (and 65504..65536), +-1 float ulp */
    for (k = 0; k < 0x7C00 && bad < 8; k++) {
        const double lo = ref_decode((uint16_t)k);
        const double hi = k + 1 < 0x7C00 ? ref_decode((uint16_t)(k + 1)) : 65536.0;
        const float mid = (float)((lo + hi) / 2.0); /* exact: 12 significant bits */
        const uint32_t mb = f_bits(mid);
        int d;
        for (d = -1; d <= 1; d++) {
            const uint32_t b = mb + (uint32_t)d;
            bad += check_one(bits_f(b));
            bad += check_one(bits_f(b | 0x80000000u));
            count += 2;
        }
        bad += check_one((float)lo);
        count++;
    }
    /* powers of two and their neighbours over the whole float range, and the specials */
    for (e = 0; e < 255 && bad < 8; e++) {
        const uint32_t p = (uint32_t)e << 23;
        bad += check_one(bits_f(p));
        bad += check_one(bits_f(p + 1u));
        bad += check_one(bits_f(p | 0x7FFFFFu));
        bad += check_one(bits_f(p | 0x80000000u));
        count += 4;
    }
    bad += check_one(bits_f(0x7F800000u)) + check_one(bits_f(0xFF800000u)); /* +-inf */
    bad += check_one(bits_f(0x7FC00000u)) + check_one(bits_f(0xFFC00001u)); /* quiet NaNs */
    bad += check_one(bits_f(0x7F800001u)) + check_one(bits_f(0x7FA00000u)); /* signalling */
    bad += check_one(bits_f(0x7F802000u));
    /* a stride through every bit pattern (prime, so every residue class is visited) */
    {
        const uint32_t stride = ttest_slow() ? 1000003u : 4099u;
        for (u = 0; bad < 8; u += stride) {
            bad += check_one(bits_f(u));
            count++;
            if (u > 0xFFFFFFFFu - stride) break;
        }
    }
    printf("    %llu floats checked\n", (unsigned long long)count);
}

TTEST(lengths_and_offsets) {
    float src[64], back[64];
    uint16_t h[64];
    int n, off, i;
    for (i = 0; i < 64; i++) src[i] = (float)(i - 30) * 0.3712f;
    for (n = 0; n <= 40; n++)
        for (off = 0; off < 3; off++) {
            for (i = 0; i < 64; i++) h[i] = 0xABCD;
            ipup_f32_to_f16(n, src + off, h + off);
            for (i = 0; i < 64; i++) {
                const uint16_t want = i >= off && i < off + n ? ref_encode(src[i]) : 0xABCD;
                TT_CHECK_MSG(h[i] == want, "n %d off %d: h[%d] 0x%04x want 0x%04x", n, off, i,
                             h[i], want);
            }
            for (i = 0; i < 64; i++) back[i] = -7.0f;
            ipup_f16_to_f32(n, h + off, back + off);
            for (i = 0; i < 64; i++) {
                const double want = i >= off && i < off + n ? ref_decode(h[i]) : -7.0;
                TT_CHECK_MSG((double)back[i] == want, "n %d off %d: back[%d] %.9g want %.9g",
                             n, off, i, (double)back[i], want);
            }
        }
}

/* ipup_f32_to_f16_sr: every result is one of the two halves around the float (searched in
   the reference table; the float itself when a half holds it); over 65,536 elements of the
   same value the share rounded up is the value's fraction of the gap to within 1/128; the
   bits do not depend on how the array is cut into calls; infinities, NaNs and overflow as
   rounding to nearest; 65504 < |x| < 65520 stays 65504. */
static uint16_t ref_below(float f) { /* the largest half <= |f| (finite, below 65504) */
    const double a = fabs((double)f);
    int lo = 0, hi = 0x7BFF;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (ref_half_value[mid] <= a) lo = mid;
        else hi = mid;
    }
    return (uint16_t)lo;
}
TTEST(stochastic_rounding) {
    static float x[65536];
    static uint16_t y[65536], z[65536];
    static const float vals[6] = {0.1f, -1.3f, 3.0e-6f, 1000.7f, 6.1e-5f, -2.5e-8f};
    int v, i, bad = 0;
    ref_init();
    for (v = 0; v < 6; v++) {
        const uint16_t lo = ref_below(vals[v]), sign = vals[v] < 0.0f ? 0x8000 : 0;
        const double a = fabs((double)vals[v]), gap = ref_half_value[lo + 1] - ref_half_value[lo];
        const double frac = (a - ref_half_value[lo]) / gap;
        int up = 0;
        for (i = 0; i < 65536; i++) x[i] = vals[v];
        ipup_f32_to_f16_sr(65536, x, y, 42, 7, 0);
        for (i = 0; i < 65536; i++) {
            if (y[i] == (sign | (lo + 1))) up++;
            else if (y[i] != (sign | lo)) bad++;
        }
        TT_CHECK_MSG(fabs((double)up / 65536.0 - frac) < 1.0 / 128.0,
                     "%g: %d of 65536 rounded up, expected a share of %.4f", (double)vals[v],
                     up, frac);
    }
    TT_EQ_INT(bad, 0);
    /* halves themselves, specials, overflow; and the cut into calls */
    for (i = 0; i < 65536; i++) x[i] = sinf((float)i * 0.37f) * (float)(1 + i % 300);
    x[0] = 0.5f; x[1] = -0.0f; x[2] = bits_f(0x7F800000u); x[3] = bits_f(0xFFC00000u);
    x[4] = 70000.0f; x[5] = 65510.0f; x[6] = -65519.0f; x[7] = 2.0f * 65504.0f;
    ipup_f32_to_f16_sr(65536, x, y, 3, 9, 100);
    TT_EQ_INT(y[0], 0x3800); TT_EQ_INT(y[1], 0x8000); TT_EQ_INT(y[2], 0x7C00);
    TT_CHECK((y[3] & 0x7C00) == 0x7C00 && (y[3] & 0x3FF) && (y[3] & 0x8000));
    TT_EQ_INT(y[4], 0x7C00); TT_EQ_INT(y[5], 0x7BFF); TT_EQ_INT(y[6], 0xFBFF);
    TT_EQ_INT(y[7], 0x7C00);
    for (i = 8; i < 65536; i++) {
        const uint16_t lo = ref_below(x[i]), m = (uint16_t)(y[i] & 0x7FFF);
        if (m != lo && !(m == lo + 1 && ref_half_value[lo] != fabs((double)x[i]))) bad++;
    }
    TT_EQ_INT(bad, 0);
    for (i = 0; i < 65536;) { /* the same bits in calls of 1..40 elements */
        const int n = 1 + (i * 7) % 40 < 65536 - i ? 1 + (i * 7) % 40 : 65536 - i;
        ipup_f32_to_f16_sr(n, x + i, z + i, 3, 9, 100 + (uint64_t)i);
        i += n;
    }
    TT_CHECK(memcmp(y, z, sizeof y) == 0);
    ipup_f32_to_f16_sr(65536, x, z, 3, 10, 100); /* another stream: other bits */
    TT_CHECK(memcmp(y, z, sizeof y) != 0);
}

static const ttest_case cases[] = {
    TT_CASE(path_named),
    TT_CASE(all_halves_decode_and_round_trip),
    TT_CASE(float_sweep_against_reference),
    TT_CASE(lengths_and_offsets),
    TT_CASE(stochastic_rounding),
};
int main(int argc, char **argv) {
    ref_init();
    return TTEST_MAIN(cases, argc, argv);
}
