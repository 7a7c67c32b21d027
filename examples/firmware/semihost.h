/* semihost.h - ARM semihosting output and exit for the ipupipe firmware proof,
   plus a tiny formatter so the firmware needs no stdio (newlib-nano's printf
   allocates its stdout buffer with malloc, which this firmware must not link).

   Semihosting: "Semihosting for AArch32 and AArch64", Arm IHI 0080: on M-profile
   the call is `BKPT 0xAB` with the operation in r0 and its argument in r1;
   SYS_WRITE0 = 0x04 (r1 = NUL-terminated string), SYS_EXIT = 0x18,
   SYS_EXIT_EXTENDED = 0x20 (r1 -> {reason, subcode}), reason
   ADP_Stopped_ApplicationExit = 0x20026. QEMU implements them with
   -semihosting-config enable=on. */
#ifndef FW_SEMIHOST_H
#define FW_SEMIHOST_H

#include <stdint.h>

static inline int fw_semihost_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline void fw_puts(const char *s) { (void)fw_semihost_call(0x04, s); }

/* Ends the QEMU run with exit status `code` (SYS_EXIT_EXTENDED). */
static inline void fw_exit(int code)
{
    uint32_t block[2];
    block[0] = 0x20026u;            /* ADP_Stopped_ApplicationExit */
    block[1] = (uint32_t)code;
    (void)fw_semihost_call(0x20, block);
    (void)fw_semihost_call(0x18, (const void *)(uintptr_t)0x20026u); /* fallback */
    for (;;) { __asm__ volatile("wfi"); }
}

/* ---- a line buffer and a few formatters (no stdio, no heap) ---- */
typedef struct fw_line { char buf[160]; int len; } fw_line;

static inline void fw_line_str(fw_line *l, const char *s)
{
    while (*s && l->len < (int)sizeof l->buf - 1) l->buf[l->len++] = *s++;
    l->buf[l->len] = '\0';
}

static inline void fw_line_u(fw_line *l, uint32_t v)
{
    char tmp[12]; int n = 0;
    do { tmp[n++] = (char)('0' + (int)(v % 10u)); v /= 10u; } while (v && n < 11);
    while (n > 0 && l->len < (int)sizeof l->buf - 1) l->buf[l->len++] = tmp[--n];
    l->buf[l->len] = '\0';
}

static inline void fw_line_i(fw_line *l, int32_t v)
{
    if (v < 0) { fw_line_str(l, "-"); fw_line_u(l, (uint32_t)(-(v + 1)) + 1u); }
    else fw_line_u(l, (uint32_t)v);
}

/* 64-bit unsigned, for instruction counts. */
static inline void fw_line_u64(fw_line *l, uint64_t v)
{
    char tmp[21]; int n = 0;
    do { tmp[n++] = (char)('0' + (int)(v % 10u)); v /= 10u; } while (v && n < 20);
    while (n > 0 && l->len < (int)sizeof l->buf - 1) l->buf[l->len++] = tmp[--n];
    l->buf[l->len] = '\0';
}

/* Fixed-point float with `dec` decimals (0..6), rounded half away from zero. */
static inline void fw_line_f(fw_line *l, float v, int dec)
{
    uint32_t scale = 1u, ip, fp;
    float a;
    int i;
    if (v != v) { fw_line_str(l, "nan"); return; }
    if (v < 0.0f) { fw_line_str(l, "-"); v = -v; }
    if (v > 4.0e9f) { fw_line_str(l, "inf"); return; }
    for (i = 0; i < dec; i++) scale *= 10u;
    a = v * (float)scale + 0.5f;
    if (a > 4.0e9f) { fw_line_u(l, (uint32_t)v); return; }
    ip = (uint32_t)a / scale;
    fp = (uint32_t)a % scale;
    fw_line_u(l, ip);
    if (dec > 0) {
        uint32_t d = scale / 10u;
        fw_line_str(l, ".");
        while (d > 0u) { char c[2]; c[0] = (char)('0' + (int)(fp / d % 10u)); c[1] = '\0'; fw_line_str(l, c); d /= 10u; }
    }
}

static inline void fw_line_end(fw_line *l)
{
    fw_line_str(l, "\n");
    fw_puts(l->buf);
    l->len = 0;
    l->buf[0] = '\0';
}

#endif
