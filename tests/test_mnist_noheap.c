/* test_mnist_noheap.c - the MNIST trainer makes no heap call after startup.
 *
 * Runs the trainer (mnist_train_main of examples/mnist/mnist_trainer.h) and links
 * with -Wl,--wrap=malloc,... (LDFLAGS_test_mnist_noheap in the Makefile): every
 * allocator call made by the trainer, the emulator and the kernels goes through the
 * counters below. The trainer's hooks mark the end of startup and the end of the
 * run (after training, test evaluation, --save, --trace and --summary-json, before
 * the teardown frees); between them the count must be zero. Calls libc makes
 * internally (e.g. inside fopen) are not seen by --wrap; the trainer avoids stdio
 * after startup for its files (POSIX write) and gives stdout a static buffer.
 *
 * The data are small IDX files written by the test (no network, no data/). */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>

static int nh_counting;
static long nh_calls, nh_total;
static void nh_startup_done(void) {
    nh_counting = 1;
    nh_calls = 0;
}
static void nh_run_done(void) { nh_counting = 0; }
#define MNIST_TRAIN_STARTUP_DONE() nh_startup_done()
#define MNIST_TRAIN_RUN_DONE() nh_run_done()

#include "ipupipe.h"
#include "mnist_trainer.h"

#include "idx_fixture.h"
#include "scratch_dir.h"
#include "ttest.h"

#include "heap_wrap.h"

#define NH_COUNT()                                                                                                     \
    do {                                                                                                               \
        nh_total++;                                                                                                    \
        if (nh_counting) nh_calls++;                                                                                   \
    } while (0)
void *__wrap_malloc(size_t n) {
    NH_COUNT();
    return __real_malloc(n);
}
void *__wrap_calloc(size_t a, size_t b) {
    NH_COUNT();
    return __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n) {
    NH_COUNT();
    return __real_realloc(p, n);
}
void __wrap_free(void *p) {
    NH_COUNT();
    __real_free(p);
}
void *__wrap_aligned_alloc(size_t al, size_t n) {
    NH_COUNT();
    return __real_aligned_alloc(al, n);
}
int __wrap_posix_memalign(void **p, size_t al, size_t n) {
    NH_COUNT();
    return __real_posix_memalign(p, al, n);
}

static char nh_dir[256];

/* Runs the trainer with the given extra flags; returns its exit code. */
static int nh_run(const char *const *extra, int n_extra) {
    const char *argv[64];
    char path[300];
    int argc = 0, i;
    static char save_path[300], trace_path[300], json_path[300];
    argv[argc++] = "mnist-train";
    argv[argc++] = "--data";
    argv[argc++] = nh_dir;
    argv[argc++] = "--quiet";
    argv[argc++] = "--test-limit";
    argv[argc++] = ttest_slow() ? "4" : "100";
    snprintf(save_path, sizeof save_path, "%s/run.ckpt", nh_dir);
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", nh_dir);
    snprintf(json_path, sizeof json_path, "%s/summary.json", nh_dir);
    argv[argc++] = "--save";
    argv[argc++] = save_path;
    argv[argc++] = "--trace";
    argv[argc++] = trace_path;
    argv[argc++] = "--summary-json";
    argv[argc++] = json_path;
    for (i = 0; i < n_extra; i++) argv[argc++] = extra[i];
    (void)path;
    nh_calls = -1;
    return mnist_train_main(argc, (char **)argv);
}

TTEST(mlp_coop_no_heap_after_startup) {
    const char *a[] = {"--epochs", "2", "--train-limit", ttest_slow() ? "128" : "1024", "--batch-size", "16",
                       "--batches-to-accumulate", "4", "--repeat-count", "3"};
    long before = nh_total;
    TT_EQ_INT(nh_run(a, 10), 0);
    TT_EQ_INT(nh_calls, 0);
    TT_CHECK(nh_total > before); /* the counters do see the startup allocations */
}

TTEST(mlp_threads_replicas_no_heap_after_startup) {
    const char *a[] = {"--epochs", "1", "--train-limit", ttest_slow() ? "64" : "512", "--batch-size", "8", "--batches-to-accumulate", "4",
                       "--runner", "threads", "--replicas", "2", "--schedule", "1f1b", "--optimizer", "adam"};
    TT_EQ_INT(nh_run(a, 16), 0);
    TT_EQ_INT(nh_calls, 0);
}

TTEST(cnn_recompute_offload_resume_no_heap_after_startup) {
    char load_arg[300], copy[300];
    const char *lim = ttest_slow() ? "8" : "128", *bs = ttest_slow() ? "2" : "8";
    const char *a[] = {"--model", "cnn", "--epochs", "1", "--train-limit", lim, "--batch-size", bs,
                       "--batches-to-accumulate", "4", "--recompute", "--offload"};
    const char *b[] = {"--model", "cnn", "--epochs", "2", "--train-limit", lim, "--batch-size", bs,
                       "--batches-to-accumulate", "4", "--recompute", "--offload", "--load", load_arg};
    TT_EQ_INT(nh_run(a, 12), 0);
    TT_EQ_INT(nh_calls, 0);
    snprintf(copy, sizeof copy, "%s/run.ckpt", nh_dir);
    snprintf(load_arg, sizeof load_arg, "%s/epoch1.ckpt", nh_dir);
    TT_EQ_INT(rename(copy, load_arg), 0);
    TT_EQ_INT(nh_run(b, 14), 0);
    TT_EQ_INT(nh_calls, 0);
}

/* --test-batch-size: the evaluation pipeline is set up at startup too; with PopXL's Adam */
TTEST(mlp_gelu_test_batch_no_heap_after_startup) {
    const char *a[] = {"--model", "mlp-gelu", "--epochs", "1", "--train-limit",
                       ttest_slow() ? "60" : "300", "--test-batch-size", "80", "--weight-decay",
                       "0.01", "--no-bias-correction", "--runner", "threads"};
    TT_EQ_INT(nh_run(a, 13), 0);
    TT_EQ_INT(nh_calls, 0);
}

static const ttest_case cases[] = {
    TT_CASE(mlp_gelu_test_batch_no_heap_after_startup),
    TT_CASE(mlp_coop_no_heap_after_startup),
    TT_CASE(mlp_threads_replicas_no_heap_after_startup),
    TT_CASE(cnn_recompute_offload_resume_no_heap_after_startup),
};

int main(int argc, char **argv) {
    int r, i;
    const char *files[] = {"run.ckpt", "epoch1.ckpt", "trace.json", "summary.json"};
    scratch_dir(nh_dir, sizeof nh_dir, "mnist_noheap");
    /* synthetic digits: class k lights a band of rows; deterministic noise */
    if (idx_write_synthetic_set(nh_dir, ttest_slow() ? 128 : 1024, ttest_slow() ? 20 : 100) != 0) {
        perror(nh_dir);
        return 2;
    }
    r = TTEST_MAIN(cases, argc, argv);
    idx_remove_synthetic_set(nh_dir);
    for (i = 0; i < 4; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", nh_dir, files[i]);
        remove(p);
    }
    rmdir(nh_dir);
    return r;
}
