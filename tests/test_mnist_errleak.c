/* test_mnist_errleak.c - mnist_train_main on its error paths returns every byte.
 *
 * A program may call mnist_train_main again and again (bench_train.c does). This test
 * calls it N times on configurations that fail after allocating: the out-of-memory path
 * (a sparse IDX file of 100,000,000 training images: the data buffers cannot be had)
 * and a model whose split names no layer. Linked with -Wl,--wrap= over the allocator
 * (LDFLAGS_test_mnist_errleak), it counts the blocks alive: after the first call (libc
 * may keep stdio buffers) every further call must leave the same number - before, each
 * out-of-memory call lost its pools and the emulator (about 3 MB a call).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

static long el_live, el_fails;

#include "ipupipe.h"
#include "mnist_trainer.h"

#include "idx_fixture.h"
#include "ttest.h"

/* the 300 GB request must fail with NULL, not abort the sanitizer build */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

#include "heap_wrap.h"

static void *el_got(void *p) {
    if (p) el_live++;
    else el_fails++;
    return p;
}
void *__wrap_malloc(size_t n) { return el_got(__real_malloc(n)); }
void *__wrap_calloc(size_t a, size_t b) { return el_got(__real_calloc(a, b)); }
void *__wrap_realloc(void *p, size_t n) {
    void *q = __real_realloc(p, n);
    if (!p) return el_got(q);
    if (q && !n) el_live--;
    return q;
}
void __wrap_free(void *p) {
    if (p) el_live--;
    __real_free(p);
}
void *__wrap_aligned_alloc(size_t al, size_t n) { return el_got(__real_aligned_alloc(al, n)); }
int __wrap_posix_memalign(void **p, size_t al, size_t n) {
    int rc = __real_posix_memalign(p, al, n);
    if (rc == 0) el_live++;
    else el_fails++;
    return rc;
}

static char el_dir[256];

static int el_call(const char *extra1, const char *extra2) {
    const char *argv[16];
    int argc = 0;
    argv[argc++] = "mnist-train";
    argv[argc++] = "--data";
    argv[argc++] = el_dir;
    argv[argc++] = "--quiet";
    argv[argc++] = "--batch-size";
    argv[argc++] = "8";
    if (extra1) argv[argc++] = extra1;
    if (extra2) argv[argc++] = extra2;
    argv[argc] = NULL;
    return mnist_train_main(argc, (char **)argv);
}

/* the training split as 100,000,000 images of 28x28: a sparse file, no data written */
static int el_big_split(void) {
    static const uint32_t di[3] = {100000000u, 28u, 28u}, dl[1] = {100000000u};
    unsigned char h[16];
    char path[300];
    size_t n;
    int fd;
    n = idx_header(h, 0x08, 3, di);
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", el_dir);
    if (fixture_write_file(path, h, n) != 0) return -1;
    if ((fd = open(path, O_WRONLY)) < 0) return -1;
    if (ftruncate(fd, (off_t)(16 + (int64_t)100000000 * 784)) != 0) { close(fd); return -1; }
    close(fd);
    n = idx_header(h, 0x08, 1, dl);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", el_dir);
    if (fixture_write_file(path, h, n) != 0) return -1;
    if ((fd = open(path, O_WRONLY)) < 0) return -1;
    if (ftruncate(fd, (off_t)(8 + 100000000)) != 0) { close(fd); return -1; }
    close(fd);
    return 0;
}

TTEST(out_of_memory_path_returns_everything) {
    long after_first, fails0;
    int i, rc;
    if (el_big_split() != 0) {
        printf("    (no sparse files here: skipped)\n");
        return;
    }
    rc = el_call(NULL, NULL);
    TT_EQ_INT(rc, 2);
    after_first = el_live;
    fails0 = el_fails;
    TT_CHECK(fails0 >= 1); /* the path under test: an allocation did fail */
    for (i = 0; i < 4; i++) {
        TT_EQ_INT(el_call(NULL, NULL), 2);
        TT_CHECK_MSG(el_live == after_first, "call %d: %ld blocks alive, %ld after the first call", i + 2, el_live, after_first);
    }
    TT_CHECK(el_fails >= fails0 + 4);
}

TTEST(refused_split_returns_everything) {
    long after_first;
    int i;
    TT_EQ_INT(el_call("--splits", "nolayer"), 2);
    after_first = el_live;
    for (i = 0; i < 4; i++) {
        TT_EQ_INT(el_call("--splits", "nolayer"), 2);
        TT_CHECK_MSG(el_live == after_first, "call %d: %ld blocks alive, %ld after the first call", i + 2, el_live, after_first);
    }
}

static const ttest_case cases[] = {TT_CASE(out_of_memory_path_returns_everything), TT_CASE(refused_split_returns_everything)};
int main(int argc, char **argv) {
    int rc;
    snprintf(el_dir, sizeof el_dir, "/tmp/ipupipe-errleak-%ld", (long)getpid());
    if (mkdir(el_dir, 0700) != 0 || idx_write_synthetic_set(el_dir, 64, 16) != 0) {
        printf("FAIL cannot write the IDX fixture in %s\n0 passed, 1 failed\n", el_dir);
        return 1;
    }
    rc = TTEST_MAIN(cases, argc, argv);
    idx_remove_synthetic_set(el_dir);
    rmdir(el_dir);
    return rc;
}
