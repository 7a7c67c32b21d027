/* semihost.h - ARM semihosting output and exit for the ipupipe firmware proof (no
   stdio: newlib-nano's printf allocates its stdout buffer with malloc, which this
   firmware must not link; text is formatted by the library's ipup_vsnprintf).

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

#endif
