/* fw_platform.h - what the training firmware (main.c) needs from the machine it runs on,
   one header per platform, chosen here by the compiler's target:
     fw_puts(s), fw_exit(code)        text out, end of the run with an exit status
     fw_timer_start(), fw_timer_ticks(), FW_INSNS_PER_TICK
                                      a free-running counter of executed instructions, in
                                      ticks of FW_INSNS_PER_TICK instructions (0 where
                                      nothing counts them)
     fw_stack_used(), fw_stack_size() the stack's high-water mark and size, bytes
     FW_CPU_NAME                      the core, for the first line of output
   mps2_platform.h: the Cortex-M boards of QEMU (semihost.h, a CMSDK timer);
   riscv/riscv_platform.h: QEMU's RISC-V virt board (semihosting, the minstret CSR);
   host_platform.h (-DFW_HOST_PLATFORM): the same program as a host process, the
   reference whose bits the RISC-V run must have (firmware.mk, firmware-riscv-run). */
#ifndef FW_PLATFORM_H
#define FW_PLATFORM_H

#if defined(FW_HOST_PLATFORM)
#include "host_platform.h"
#elif defined(__riscv)
#include "riscv/riscv_platform.h"
#elif defined(__arm__)
#include "mps2_platform.h"
#else
#error "fw_platform.h: no platform for this target (define FW_HOST_PLATFORM for a host build)"
#endif

#endif
