/* riscv_semihost.h - semihosting output and exit of the ipupipe firmware on RISC-V: the
   same two calls as semihost.h (Arm), made through fw_riscv_semihost (crt0.S, the
   slli/ebreak/srai sequence of the RISC-V semihosting specification, which takes Arm's
   operation numbers: SYS_WRITE0 = 0x04, SYS_EXIT = 0x18, SYS_EXIT_EXTENDED = 0x20 with a
   {reason, subcode} block; reason ADP_Stopped_ApplicationExit = 0x20026). QEMU implements
   them with -semihosting-config enable=on. Should semihosting be off, fw_exit falls back
   to the virt board's SiFive test device ("finisher", QEMU hw/misc/sifive_test.c, at
   0x100000: 0x5555 exits 0, (code << 16) | 0x3333 exits with code). */
#ifndef FW_RISCV_SEMIHOST_H
#define FW_RISCV_SEMIHOST_H

#include <stdint.h>

int fw_riscv_semihost(int op, const void *arg); /* crt0.S */

#define FW_RISCV_TEST_DEVICE ((volatile uint32_t *)0x100000u)

static inline void fw_puts(const char *s) { (void)fw_riscv_semihost(0x04, s); }

/* ends the run through the SiFive test device (exit status `code`) */
static inline void fw_riscv_finish(int code)
{
    *FW_RISCV_TEST_DEVICE = code == 0 ? 0x5555u : ((uint32_t)code << 16) | 0x3333u;
}

/* Ends the QEMU run with exit status `code` (SYS_EXIT_EXTENDED). */
static inline void fw_exit(int code)
{
    uint32_t block[2];
    block[0] = 0x20026u;            /* ADP_Stopped_ApplicationExit */
    block[1] = (uint32_t)code;
    (void)fw_riscv_semihost(0x20, block);
    fw_riscv_finish(code);
    for (;;) { __asm__ volatile("wfi"); }
}

#endif
