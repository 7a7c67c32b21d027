/* readme_device_heap.c - counts every heap call made while docs/embedded.md's device program
 * runs. tests/test_readme_device.sh compiles that page's device.c with
 * -Dmain=device_main and links it with this file (glibc on Linux only).
 *
 * What is counted: this file defines malloc, calloc, realloc, free, aligned_alloc,
 * posix_memalign and memalign, so every call in the process goes through them, the C
 * library's own calls included (glibc's "Replacing malloc"; a -Wl,--wrap seam would see
 * only the calls of the program's own objects). They hand the work to glibc's allocator
 * (__libc_malloc, ...) and count while device_main runs: ipup_init and everything after
 * it, the startup included. Two things happen before: stdout gets a static buffer
 * (setvbuf), the one allocation glibc's stdio would otherwise make at the program's first
 * line (a firmware's output has no buffer to allocate), and a self-check that the count
 * sees the C library's internal calls (strdup must count one).
 * Prints `heap calls during the program: N` and exits with device_main's status, or 1
 * when N > 0 or the self-check failed. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int device_main(void);
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t a, size_t b);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *__libc_memalign(size_t al, size_t n);
void *memalign(size_t al, size_t n);

static int counting;
static long calls;
static char *volatile probe; /* volatile: the compiler may not elide the probe's strdup + free */

void *malloc(size_t n) { calls += counting; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { calls += counting; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { calls += counting; return __libc_realloc(p, n); }
void free(void *p) { calls += counting && p; __libc_free(p); }
void *aligned_alloc(size_t al, size_t n) { calls += counting; return __libc_memalign(al, n); }
void *memalign(size_t al, size_t n) { calls += counting; return __libc_memalign(al, n); }
int posix_memalign(void **p, size_t al, size_t n) {
    calls += counting;
    *p = __libc_memalign(al, n);
    return *p ? 0 : 12; /* ENOMEM */
}

int main(void) {
    static char out[1 << 16];
    long seen;
    int rc;
    setvbuf(stdout, out, _IOFBF, sizeof out);
    counting = 1;
    probe = strdup("the C library's own call"); /* inside libc: must be counted */
    free(probe);
    seen = calls;
    calls = 0;
    rc = device_main();
    counting = 0;
    fflush(stdout);
    printf("heap calls during the program: %ld\n", calls);
    if (seen != 2) {
        printf("self-check failed: strdup + free counted %ld calls, not 2 (the count does not see libc's calls)\n", seen);
        return 1;
    }
    return rc ? rc : calls != 0;
}
