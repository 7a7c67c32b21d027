/* heap_count.h - counting allocator wrappers for a test linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,
 * --wrap=posix_memalign (LDFLAGS_test_NAME in the Makefile): every call of these
 * functions made by the test's translation unit (the test and the headers compiled into
 * it) adds one to g_heap_calls, then goes to the real one. Include it in exactly one file
 * of the test program. */
#ifndef HEAP_COUNT_H
#define HEAP_COUNT_H
#include "heap_wrap.h"

static long g_heap_calls;
void *__wrap_malloc(size_t n) { g_heap_calls++; return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { g_heap_calls++; return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { g_heap_calls++; return __real_realloc(p, n); }
void __wrap_free(void *p) { g_heap_calls++; __real_free(p); }
void *__wrap_aligned_alloc(size_t al, size_t n) { g_heap_calls++; return __real_aligned_alloc(al, n); }
int __wrap_posix_memalign(void **p, size_t al, size_t n) { g_heap_calls++; return __real_posix_memalign(p, al, n); }

#endif /* HEAP_COUNT_H */
