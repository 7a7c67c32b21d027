/* fw_math.h - expf and logf in plain float arithmetic, the same bits on every IEEE-754
   target that does not fuse multiply-adds (C11 mode: gcc's -ffp-contract=off).
   Why: newlib's Cortex-M4 multilib links fdlibm's expf (ef_exp.o) while the Cortex-M7
   (double-precision FPU) multilib links Arm's optimized-routines expf (sf_exp.o, double
   arithmetic inside); both are accurate, but their last bits differ, so the same
   firmware trains to different weights on the two cores. Plugging these in through
   IPUPIPE_EXPF / IPUPIPE_LOGF (build with FW_EXTRA=-DFW_OWN_MATH) gives the same bits
   on both.
   expf: Cody-Waite range reduction x = k ln2 + r (W. J. Cody, W. Waite, "Software Manual
   for the Elementary Functions", 1980; ln2 split into a high part exact in float and a
   low part, the constants of fdlibm's e_expf.c), then the Taylor polynomial of e^r to
   degree 7 (|r| <= ln2/2: truncation < 2e-10 relative), scaled by 2^k through the
   exponent bits. logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(f),
   f = (m-1)/(m+1), by its series to f^9 (|f| <= 0.1716: truncation < 4e-10).
   Errors are about 1-2 ulp, plenty for training; not correctly rounded. */
#ifndef FW_MATH_H
#define FW_MATH_H

#include <stdint.h>
#include <string.h>

static inline float fw_bits_to_float(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static inline uint32_t fw_float_to_bits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }

static inline float fw_expf(float x)
{
    const float ln2_hi = 6.9314575195e-01f, ln2_lo = 1.4286067653e-06f, log2e = 1.4426950216e+00f;
    float r, p, kf;
    int32_t k;
    if (x != x) return x;
    if (x > 88.72283f) return fw_bits_to_float(0x7F800000u);   /* +inf */
    if (x < -103.97208f) return 0.0f;
    kf = x * log2e;
    k = (int32_t)(kf < 0.0f ? kf - 0.5f : kf + 0.5f);          /* round half away */
    kf = (float)k;
    r = (x - kf * ln2_hi) - kf * ln2_lo;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f + r * (1.0f / 24.0f + r * (1.0f / 120.0f +
        r * (1.0f / 720.0f + r * (1.0f / 5040.0f)))))));
    if (k > 127) return (p * 2.0f) * fw_bits_to_float((uint32_t)(k - 1 + 127) << 23); /* 2^128 overflows */
    if (k >= -126) return p * fw_bits_to_float((uint32_t)(k + 127) << 23);
    /* subnormal result: two exact steps */
    return (p * fw_bits_to_float((uint32_t)(k + 127 + 64) << 23)) * fw_bits_to_float((uint32_t)(127 - 64) << 23);
}

static inline float fw_logf(float x)
{
    const float ln2_hi = 6.9313812256e-01f, ln2_lo = 9.0580006145e-06f; /* fdlibm e_logf.c */
    uint32_t u = fw_float_to_bits(x);
    int32_t e = 0;
    float m, f, f2, s;
    if (x != x) return x;
    if (x < 0.0f) return fw_bits_to_float(0x7FC00000u);         /* NaN */
    if (x == 0.0f) return fw_bits_to_float(0xFF800000u);        /* -inf */
    if (u >= 0x7F800000u) return x;                             /* +inf */
    if (u < 0x00800000u) { x *= 8388608.0f; u = fw_float_to_bits(x); e = -23; } /* subnormal */
    e += (int32_t)(u >> 23) - 127;
    m = fw_bits_to_float((u & 0x007FFFFFu) | 0x3F800000u);      /* [1, 2) */
    if (m > 1.41421356f) { m *= 0.5f; e++; }
    f = (m - 1.0f) / (m + 1.0f);
    f2 = f * f;
    s = 2.0f * f * (1.0f + f2 * (1.0f / 3.0f + f2 * (1.0f / 5.0f + f2 * (1.0f / 7.0f + f2 * (1.0f / 9.0f)))));
    return ((float)e * ln2_lo + s) + (float)e * ln2_hi;
}

#endif
