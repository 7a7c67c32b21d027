/* crt0.S - reset entry, trap entry and semihosting call of the ipupipe firmware on
   QEMU's RISC-V `virt` board (rv32imafc, ilp32f, machine mode, no OpenSBI: -bios none).

   QEMU's virt reset vector (at 0x1000) jumps to the start of DRAM, 0x80000000, with the
   hart id in a0; virt.ld places .text.init there. _start: hart 0 runs, any other parks
   in wfi; gp (the linker's __global_pointer$, for gp-relative relaxation), sp (the top
   of the stack of virt.ld), mtvec (direct mode: every trap to fw_riscv_trap_entry), the
   FPU on (mstatus.FS = Initial, bits 14:13; with FS = Off every F instruction is illegal:
   RISC-V privileged spec 20211203, 3.1.6.6), fcsr = 0 (round to nearest even, flags
   clear), a PMP guard below the stack (below), then the C part, fw_riscv_start
   (riscv_startup.c). */

#define MSTATUS_FS_INITIAL 0x2000

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    csrr    t0, mhartid
    bnez    t0, fw_riscv_park
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, _stack_top
    la      t0, fw_riscv_trap_entry
    csrw    mtvec, t0
    li      t0, MSTATUS_FS_INITIAL
    csrs    mstatus, t0
    csrwi   fcsr, 0
    /* Stack guard: PMP entry 0 covers the 256 bytes below the stack (_stack_guard,
       256-aligned) as a naturally aligned power-of-two region (A = NAPOT, pmpaddr =
       base/4 | (size/8 - 1)) with no R/W/X permission and the L bit, which makes the
       entry apply to machine mode too (privileged spec, 3.7.1): a stack overflow becomes
       a store access fault that the trap handler reports, instead of silent corruption.
       Accesses that match no entry stay allowed in machine mode. */
    la      t0, _stack_guard
    srli    t0, t0, 2
    ori     t0, t0, 0x1f
    csrw    pmpaddr0, t0
    li      t0, 0x98            /* L (0x80) | A = NAPOT (0x18), R = W = X = 0 */
    csrw    pmpcfg0, t0
    call    fw_riscv_start
fw_riscv_park:
    wfi
    j       fw_riscv_park

/* Every trap (exception or interrupt: none is enabled) ends the run: on its own stack
   (virt.ld's _trap_stack_top, so that a stack overflow can still be reported), the
   cause, the faulting pc and the trap value go to fw_riscv_trap, which does not return. */
    .text
    .balign 4
    .globl fw_riscv_trap_entry
fw_riscv_trap_entry:
    la      sp, _trap_stack_top
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    call    fw_riscv_trap
    j       fw_riscv_park

/* int fw_riscv_semihost(int op, const void *arg): the RISC-V semihosting call (the
   RISC-V Semihosting specification, riscv-software-src/riscv-semihosting: Arm's
   semihosting operations, with the operation in a0, the argument in a1, the result in
   a0), made by the three 32-bit instructions slli x0,x0,0x1f; ebreak; srai x0,x0,7,
   which must not be compressed (norvc). QEMU recognises the sequence with
   -semihosting-config enable=on, and only within one page (the 16-byte alignment keeps
   the three in one aligned 16-byte block); without it the ebreak is an ordinary
   breakpoint trap. */
    .balign 16
    .globl fw_riscv_semihost
fw_riscv_semihost:
    .option push
    .option norvc
    slli    x0, x0, 0x1f
    ebreak
    srai    x0, x0, 7
    .option pop
    ret
