/* tests/sizes.c - prints the memory the emulator's own structures take in one
   configuration of the compile-time limits: sizeof(ipup_emu), the fixed part of
   ipup_plan_pools' scratch (IPUP_PLAN_SCRATCH_BYTES(0, 0): the plan's working state and
   the alignment slack) and the whole scratch for a 2-stage, 4-micro-batch plan.
   `make sizes` compiles it once per configuration (-D flags in the Makefile's sizes rule)
   and runs each build; docs/embedded.md quotes the output as a transcript that
   tests/test_docs.sh re-runs. Declarations only: no IPUPIPE_IMPLEMENTATION. */
#include <stdio.h>
#include "ipupipe.h"

#ifdef IPUPIPE_NO_THREADS
#define SIZES_THREADS "no "
#else
#define SIZES_THREADS "yes"
#endif

int main(void)
{
    printf("%-7s %6d %7d %8d %4d %12d %16zu %14zu %14zu\n", SIZES_THREADS,
           (int)IPUP_MAX_LAYERS, (int)IPUP_MAX_DEVICES, (int)IPUP_MAX_REPLICAS, (int)IPUP_MAX_IPUS,
           (int)IPUP_SCHED_MAX_STAGES, sizeof(ipup_emu), IPUP_PLAN_SCRATCH_BYTES(0, 0),
           IPUP_PLAN_SCRATCH_BYTES(2, 4));
    return 0;
}
