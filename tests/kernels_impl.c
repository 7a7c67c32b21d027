/* tests/kernels_impl.c - ipupipe_kernels.h's implementation alone (no other header of the
 * library), compiled once per build configuration into build/CONFIG/kernels.o; the tests
 * of the kernels header alone (Makefile: KERNEL_LIB_TESTS) include only its declarations
 * and are linked to it. The private functions they call get external names here
 * (tests/impl_private.h). */
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe_kernels.h"
#include "impl_private.h"

float tpriv_expf(float x) { return ipup__expf(x); }
uint16_t tpriv_f32_to_f16_1(float f) { return ipup__f32_to_f16_1(f); }
float tpriv_f16_to_f32_1(uint16_t h) { return ipup__f16_to_f32_1(h); }
