/* riscv_platform.h - the platform of the training firmware (fw_platform.h) on QEMU's
   RISC-V virt board (rv32imafc): semihosting output and exit (riscv_semihost.h),
   riscv_startup.c's stack figures, and the instruction counter. */
#ifndef FW_RISCV_PLATFORM_H
#define FW_RISCV_PLATFORM_H

#include <stdint.h>
#include "riscv_semihost.h"

uint32_t fw_stack_used(void); /* riscv_startup.c */
uint32_t fw_stack_size(void);

#if defined(__riscv_flen) && __riscv_flen == 32
#define FW_CPU_NAME "RV32IMAFC (single-precision FPU), machine mode"
#else
#define FW_CPU_NAME "RV32 (no single-precision-only FPU: not the rv32imafc build)"
#endif

/* ---- instruction counter: the minstret CSR (0xB02), instructions retired, low 32
   bits (privileged spec 20211203, 3.1.11: "the number of instructions the hart has
   retired"); machine mode reads it without mcounteren. QEMU does not model a pipeline:
   with `-icount shift=0` it derives minstret (and mcycle alike) from its count of
   executed instructions, so the counter counts instructions, one per tick, and not
   cycles. Without -icount QEMU returns host time instead. Steps are far below 2^32
   instructions, so differences of the low 32 bits are exact. */
#define FW_INSNS_PER_TICK 1u
static inline uint32_t fw_riscv_minstret(void)
{
    uint32_t v;
    __asm__ volatile("csrr %0, minstret" : "=r"(v));
    return v;
}
static uint32_t fw_riscv_instret0;
static inline void fw_timer_start(void) { fw_riscv_instret0 = fw_riscv_minstret(); }
static inline uint32_t fw_timer_ticks(void) { return fw_riscv_minstret() - fw_riscv_instret0; }

#endif
