/* mps2_platform.h - the platform of the training firmware (fw_platform.h) on QEMU's
   Arm MPS2 boards (mps2-an386: Cortex-M4F, mps2-an500: Cortex-M7), and of the dual-core
   build on musca-b1 (dual/dual_config.h sets its timer and core name): semihosting output and
   exit (semihost.h), startup.c's stack figures, and the instruction counter. */
#ifndef FW_MPS2_PLATFORM_H
#define FW_MPS2_PLATFORM_H

#include <stdint.h>
#include "semihost.h"

uint32_t fw_stack_used(void); /* startup.c */
uint32_t fw_stack_size(void);

/* ACLE: __ARM_FP bit 3 = double precision in hardware (fpv5-d16 on the Cortex-M7) */
#ifdef FW_CPU_NAME /* set by dual/dual_config.h */
#elif defined(__ARM_FP) && (__ARM_FP & 8)
#define FW_CPU_NAME "Armv7E-M with a double-precision FPU (Cortex-M7 class)"
#else
#define FW_CPU_NAME "Armv7E-M with a single-precision FPU (Cortex-M4F class)"
#endif

/* ---- instruction counter: CMSDK APB timer 0 at 0x40000000 (Arm DDI 0479, "Cortex-M
   System Design Kit", timer: CTRL +0, VALUE +4, RELOAD +8), clocked at 25 MHz on QEMU's
   mps2 boards. Under `-icount shift=0` QEMU advances virtual time by 1 ns per executed
   instruction, so one timer tick = 40 instructions (resolution 40). Without -icount the
   ticks follow host time and mean nothing. */
#ifndef FW_TIMER_BASE
#define FW_TIMER_BASE 0x40000000u /* another board: dual/dual_config.h */
#define FW_INSNS_PER_TICK 40u
#endif
#define FW_TIMER ((volatile uint32_t *)FW_TIMER_BASE)
static inline void fw_timer_start(void)
{
    FW_TIMER[2] = 0xFFFFFFFFu;
    FW_TIMER[1] = 0xFFFFFFFFu;
    FW_TIMER[0] = 1u;
}
static inline uint32_t fw_timer_ticks(void) { return 0xFFFFFFFFu - FW_TIMER[1]; }

#endif
