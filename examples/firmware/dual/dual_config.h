/* dual_config.h - the settings of the dual-core build of main.c (make firmware-dual):
   main.c includes this first when FW_DUAL is defined, and dual_main.h (the dual-core
   main) in place of its own main. */
#ifndef FW_DUAL_CONFIG_H
#define FW_DUAL_CONFIG_H
#define IPUPIPE_ATOMICS            /* keep the atomic rings under IPUPIPE_NO_THREADS */
#define FW_CPU_NAME "Armv8-M Mainline with a single-precision FPU (two Cortex-M33, SSE-200)"
#define FW_TIMER_BASE 0x50000000u  /* SSE-200 CMSDK timer0, Secure alias (SSE-200 TRM) */
#define FW_INSNS_PER_TICK 25u      /* its PCLK is MAINCLK, 40 MHz on QEMU's musca-b1 */
#pragma GCC diagnostic ignored "-Wunused-function" /* main.c's save/restore is not used */
#endif
