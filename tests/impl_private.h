/* tests/impl_private.h - private functions of the headers (ipup__*, static in every
 * translation unit that compiles an implementation) that tests call, under external names.
 * tests/ipupipe_impl.c (build/CONFIG/ipupipe.o) and tests/kernels_impl.c
 * (build/CONFIG/kernels.o) define them as calls of the private function, compiled with
 * the configuration's flags as the rest of that implementation, so a test linked to the
 * object checks the very function the library uses. */
#ifndef TESTS_IMPL_PRIVATE_H
#define TESTS_IMPL_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ipupipe.h (tests/ipupipe_impl.c) */
void tpriv_keep_warnings(char *warn, size_t warn_len, const char *w); /* ipup__keep_warnings */

/* ipupipe_kernels.h (tests/kernels_impl.c) */
float tpriv_expf(float x);                  /* ipup__expf */
uint16_t tpriv_f32_to_f16_1(float f);       /* ipup__f32_to_f16_1 */
float tpriv_f16_to_f32_1(uint16_t h);       /* ipup__f16_to_f32_1 */

#ifdef __cplusplus
}
#endif

#endif /* TESTS_IMPL_PRIVATE_H */
