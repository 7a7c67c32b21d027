/* readme_port.h - what the device program of docs/embedded.md ("A device that learns in
   the field", taken out by readme_extract.sh) needs on the bare-metal board,
   force-included (-include) before its first line by firmware.mk's firmware-readme
   rules. The program's text stays exactly the page's; it only looks for these macros:
   - SAY_OUT(line): its one way out for text, here semihosting's SYS_WRITE0 (without it
     the program includes <stdio.h> and writes to stdout; newlib-nano's stdio would
     allocate its buffer with malloc, which this image must not link);
   - IPUPIPE_NO_THREADS: the cooperative runner only (no pthread, no atomics);
   - IPUPIPE_ASSERT: newlib's assert() prints through fiprintf (stdio and malloc), so a
     failed precondition prints its text through semihosting and ends the run (status 2).
   startup.c's reset handler calls main() and ends the QEMU run with its return value. */
#ifndef FW_README_PORT_H
#define FW_README_PORT_H

#include "semihost.h"

#define SAY_OUT(line) fw_puts(line)
#define IPUPIPE_NO_THREADS

static inline void fw_readme_assert(const char *what)
{
    fw_puts("DEVICE ASSERT: ");
    fw_puts(what);
    fw_puts("\n");
    fw_exit(2);
}
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : fw_readme_assert(#c))

#endif
