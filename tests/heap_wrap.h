/* heap_wrap.h - the prototypes of the allocator wrappers a test links with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,
 * --wrap=posix_memalign (LDFLAGS_test_NAME in the Makefile): the test defines the
 * __wrap_ functions (what it counts) and calls the __real_ ones. */
#ifndef HEAP_WRAP_H
#define HEAP_WRAP_H
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__real_aligned_alloc(size_t al, size_t n);
int __real_posix_memalign(void **p, size_t al, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
void *__wrap_aligned_alloc(size_t al, size_t n);
int __wrap_posix_memalign(void **p, size_t al, size_t n);

#endif /* HEAP_WRAP_H */
