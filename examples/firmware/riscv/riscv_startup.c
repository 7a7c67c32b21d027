/* riscv_startup.c - the C part of the ipupipe firmware's start on QEMU's RISC-V virt
   board, after crt0.S (stack, gp, mtvec, FPU, stack guard): .data copied from its load
   address in the "flash" part of RAM (virt.ld), .bss cleared, the stack painted so main
   can report its high-water mark, then main(); its return value ends the QEMU run
   through semihosting. The trap handler reports the trap and ends the run with status 3.
   The counterpart of startup.c (Cortex-M). */
#include <stdint.h>
#include "riscv_semihost.h"

extern uint32_t _data_load, _data_start, _data_end, _bss_start, _bss_end;
extern uint32_t _stack_bottom, _stack_top;

int main(void);
void fw_riscv_start(void);
void fw_riscv_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval);
uint32_t fw_stack_used(void);
uint32_t fw_stack_size(void);

#define FW_STACK_PAINT 0x57AC57ACu

void fw_riscv_start(void)
{
    uint32_t *src = &_data_load, *dst = &_data_start, *sp;
    while (dst < &_data_end) *dst++ = *src++;
    for (dst = &_bss_start; dst < &_bss_end; ) *dst++ = 0u;
    /* paint the stack below the current frame (256 bytes of margin) */
    __asm__ volatile("mv %0, sp" : "=r"(sp));
    for (dst = &_stack_bottom; dst < sp - 64; ) *dst++ = FW_STACK_PAINT;
    fw_exit(main());
}

/* Bytes of stack ever used: the first unpainted word from the bottom. */
uint32_t fw_stack_used(void)
{
    const uint32_t *p = &_stack_bottom;
    while (p < &_stack_top && *p == FW_STACK_PAINT) p++;
    return (uint32_t)((uintptr_t)&_stack_top - (uintptr_t)p);
}

/* Bytes reserved for the stack by the linker script. */
uint32_t fw_stack_size(void)
{
    return (uint32_t)((uintptr_t)&_stack_top - (uintptr_t)&_stack_bottom);
}

/* "0x" and 8 hex digits of v at p; returns the end */
static char *fw_riscv_hex(char *p, uint32_t v)
{
    int i;
    *p++ = '0'; *p++ = 'x';
    for (i = 28; i >= 0; i -= 4) *p++ = "0123456789abcdef"[(v >> i) & 0xFu];
    return p;
}

static char *fw_riscv_text(char *p, const char *s)
{
    while (*s) *p++ = *s++;
    return p;
}

/* mcause's exception codes (privileged spec 20211203, table 3.6) */
static const char *fw_riscv_cause(uint32_t mcause)
{
    static const char *const names[16] = {
        "instruction address misaligned", "instruction access fault", "illegal instruction",
        "breakpoint", "load address misaligned", "load access fault",
        "store address misaligned", "store access fault (a stack overflow into the PMP guard?)",
        "ecall from U-mode", "ecall from S-mode", "reserved", "ecall from M-mode",
        "instruction page fault", "load page fault", "reserved", "store page fault"};
    if (mcause & 0x80000000u) return "interrupt (none is enabled)";
    return mcause < 16u ? names[mcause] : "reserved";
}

/* Called by crt0.S's trap entry on its own stack; never returns. A breakpoint is the
   semihosting call itself trapping (QEMU without -semihosting-config enable=on): nothing
   can be printed then, the SiFive test device ends the run. */
void fw_riscv_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval)
{
    char buf[200], *p = buf;
    if (mcause == 3u) {
        fw_riscv_finish(3);
        for (;;) { __asm__ volatile("wfi"); }
    }
    p = fw_riscv_text(p, "FIRMWARE TRAP: mcause ");
    p = fw_riscv_hex(p, mcause);
    p = fw_riscv_text(p, " (");
    p = fw_riscv_text(p, fw_riscv_cause(mcause));
    p = fw_riscv_text(p, "), mepc ");
    p = fw_riscv_hex(p, mepc);
    p = fw_riscv_text(p, ", mtval ");
    p = fw_riscv_hex(p, mtval);
    p = fw_riscv_text(p, "\n");
    *p = '\0';
    fw_puts(buf);
    fw_exit(3);
}
