/* nolibc.c - compiled by check_nolibc.sh with -ffreestanding -nostdinc (only the
   compiler's own <stddef.h> <stdint.h> <stdarg.h>, no C library headers at all): with
   every platform hook of the three headers defined, they need nothing from libc. The
   object's undefined symbols must be these my_* hooks, the compiler's runtime helpers
   and, at most, the memcpy/memset/memcmp/memmove that GCC itself may emit for struct
   copies (GCC requires them even freestanding: "Other Builtins" in its manual). */
#include <stddef.h>
void *my_memcpy(void *d, const void *s, size_t n);
void *my_memset(void *d, int c, size_t n);
float my_expf(float x);
float my_logf(float x);
float my_sqrtf(float x);
void my_panic(const char *what);
#define IPUPIPE_ASSERT(c) ((c) ? (void)0 : my_panic(#c))
#define IPUPIPE_MEMCPY(d, s, n) my_memcpy((d), (s), (n))
#define IPUPIPE_MEMSET(d, c, n) my_memset((d), (c), (n))
#define IPUPIPE_EXPF(x) my_expf(x)
#define IPUPIPE_LOGF(x) my_logf(x)
#define IPUPIPE_SQRTF(x) my_sqrtf(x)
#define IPUPIPE_NO_THREADS
#define IPUPIPE_IMPLEMENTATION
#include "ipupipe.h" /* and with it ipupipe_kernels.h and ipupipe_sched.h */
