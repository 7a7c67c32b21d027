/* dual_core1.c - core 1's vector table and reset handler (the dual-core firmware).
   Core 1 of the SSE-200 is held at reset (CPUWAIT bit 1 = 1 after reset, SSE-200 TRM,
   system control registers); core 0 writes this table's address to INITSVTOR1 and
   clears the bit, and core 1 then starts like any Armv8-M core: its MSP from word 0, its
   reset handler from word 1 (Armv8-M ARM, B3.30 "Vector tables"). .data and .bss are
   core 0's work, done before the release. Each core has its own CPACR (the FPU is enabled
   per core) and its own stack, painted here so dual_main.h can report its high-water
   mark. */
#include <stdint.h>
#include "semihost.h"

extern uint32_t _stack1_bottom, _stack1_top;
void fw_core1_reset(void);
void fw_core1_fault(void);
void fw_core1_main(void);   /* dual_main.h */
uint32_t fw_core1_stack_used(void);

#define FW_STACK1_PAINT 0x57AC57ACu

void fw_core1_reset(void)
{
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    uint32_t *p, *sp;
    *cpacr |= (0xFu << 20);                       /* CP10, CP11: full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (p = &_stack1_bottom; p < sp - 64; ) *p++ = FW_STACK1_PAINT;
    fw_core1_main();
    for (;;) __asm__ volatile("wfe");
}

/* bytes of core 1's stack ever used */
uint32_t fw_core1_stack_used(void)
{
    const uint32_t *p = &_stack1_bottom;
    while (p < &_stack1_top && *p == FW_STACK1_PAINT) p++;
    return (uint32_t)((uintptr_t)&_stack1_top - (uintptr_t)p);
}

void fw_core1_fault(void)
{
    fw_puts("FIRMWARE FAULT on core 1: hard/bus/usage/memmanage fault\n");
    fw_exit(3);
}

typedef void (*fw_vector1)(void);
__attribute__((section(".vectors1"), used, aligned(128)))
const fw_vector1 fw_core1_vectors[16] = {
    (fw_vector1)(uintptr_t)&_stack1_top, /* initial MSP */
    fw_core1_reset,
    fw_core1_fault, fw_core1_fault, fw_core1_fault, fw_core1_fault, fw_core1_fault, /* NMI..UsageFault */
    fw_core1_fault, /* SecureFault (Armv8-M) */
    0, 0, 0,
    fw_core1_fault, /* SVCall */
    fw_core1_fault, /* DebugMon */
    0,
    fw_core1_fault, /* PendSV */
    fw_core1_fault, /* SysTick */
};
