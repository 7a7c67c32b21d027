/* host_platform.h - the platform of the training firmware (fw_platform.h) as a host
   process (-DFW_HOST_PLATFORM): stdout, exit(), no instruction counter (the "instructions"
   figures print 0) and no stack figures. firmware.mk builds main.c so with the portable
   kernels (-DIPUPIPE_NO_SIMD, no -march) and fw_math.h (-DFW_OWN_MATH): the reference
   whose weights the RISC-V run must reproduce bit for bit (make firmware-riscv-run). */
#ifndef FW_HOST_PLATFORM_H
#define FW_HOST_PLATFORM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FW_CPU_NAME "host build (portable kernels), the reference of the RISC-V run"
#define FW_INSNS_PER_TICK 0u

static inline void fw_puts(const char *s) { (void)fputs(s, stdout); }
static inline void fw_exit(int code) { (void)fflush(stdout); exit(code); }
static inline void fw_timer_start(void) {}
static inline uint32_t fw_timer_ticks(void) { return 0u; }
static inline uint32_t fw_stack_used(void) { return 0u; }
static inline uint32_t fw_stack_size(void) { return 0u; }

#endif
