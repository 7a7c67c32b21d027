/* startup.c - reset and fault handlers of the ipupipe firmware proof (Cortex-M4F).
   No CMSIS, no vendor startup: the vector table (ARMv7-M ARM, B1.5.3: word 0 is
   the initial main stack pointer, word 1 the reset handler), .data copy and .bss
   clear from the linker script's symbols, the FPU enabled through CPACR
   (0xE000ED88, CP10/CP11 full access, ARMv7-M ARM B3.2.20), the stack painted
   so main can report its high-water mark, then main(); its return value ends
   the QEMU run through semihosting. */
#include <stdint.h>
#include "semihost.h"

extern uint32_t _data_load, _data_start, _data_end, _bss_start, _bss_end;
extern uint32_t _stack_bottom, _stack_top;

int main(void);
void Reset_Handler(void);
void Fault_Handler(void);

#define FW_STACK_PAINT 0x57AC57ACu

void Reset_Handler(void)
{
    uint32_t *src = &_data_load, *dst = &_data_start;
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    uint32_t *sp;
    while (dst < &_data_end) *dst++ = *src++;
    for (dst = &_bss_start; dst < &_bss_end; ) *dst++ = 0u;
    *cpacr |= (0xFu << 20);                       /* CP10, CP11: full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    /* paint the stack below the current frame (256 bytes of margin) */
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (dst = &_stack_bottom; dst < sp - 64; ) *dst++ = FW_STACK_PAINT;
    fw_exit(main());
}

/* Bytes of stack ever used: the first unpainted word from the bottom. */
uint32_t fw_stack_used(void);
uint32_t fw_stack_used(void)
{
    const uint32_t *p = &_stack_bottom;
    while (p < &_stack_top && *p == FW_STACK_PAINT) p++;
    return (uint32_t)((uintptr_t)&_stack_top - (uintptr_t)p);
}

/* Bytes reserved for the stack by the linker script. */
uint32_t fw_stack_size(void);
uint32_t fw_stack_size(void)
{
    return (uint32_t)((uintptr_t)&_stack_top - (uintptr_t)&_stack_bottom);
}

void Fault_Handler(void)
{
    fw_puts("FIRMWARE FAULT: hard/bus/usage/memmanage fault (stack overflow or bad access)\n");
    fw_exit(3);
}

typedef void (*fw_vector)(void);
__attribute__((section(".vectors"), used))
const fw_vector fw_vector_table[16] = {
    (fw_vector)(uintptr_t)&_stack_top, /* initial MSP */
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMon */
    0,
    Fault_Handler, /* PendSV */
    Fault_Handler, /* SysTick */
};
