/* fuzz_idx.c - libFuzzer target: the IDX reader of examples/mnist/mnist_data.h (the MNIST
 * image and label files). The reader takes paths, so the input is written to two
 * files of a private temporary directory: the first two bytes (little-endian) give
 * the length of the images file, the rest is the labels file. Both are then opened
 * as IDX (rank 3 and rank 1), probed as a split, and loaded into buffers of exactly
 * the size the probe reported (ASan catches any write beyond them); a refused load
 * must leave both buffers as they were.
 *
 *   make fuzz   (or build/fuzz/fuzz_idx tests/fuzz/corpus/idx)
 */
#define _POSIX_C_SOURCE 200809L
#include "idx_fixture.h"
#include "mnist_data.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[64], fz_img[128], fz_lab[128];

static void fz_cleanup(void) {
    unlink(fz_img);
    unlink(fz_lab);
    rmdir(fz_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mnist_idx_header h;
    mnist_info info;
    char err[EX_ERR_LEN];
    size_t n_img;
    int r;
    if (!fz_dir[0]) {
        /* a RAM disk when there is one: ten times the executions of a disk */
        snprintf(fz_dir, sizeof fz_dir, "/dev/shm/ipup_fuzz_idx_XXXXXX");
        if (!mkdtemp(fz_dir)) {
            snprintf(fz_dir, sizeof fz_dir, "/tmp/ipup_fuzz_idx_XXXXXX");
            if (!mkdtemp(fz_dir)) abort();
        }
        atexit(fz_cleanup);
        snprintf(fz_img, sizeof fz_img, "%s/images", fz_dir);
        snprintf(fz_lab, sizeof fz_lab, "%s/labels", fz_dir);
    }
    if (size < 2) return 0;
    n_img = (size_t)data[0] | ((size_t)data[1] << 8);
    data += 2;
    size -= 2;
    if (n_img > size) n_img = size;
    if (fixture_write_file(fz_img, data, n_img) != 0 || fixture_write_file(fz_lab, data + n_img, size - n_img) != 0)
        abort();

    err[0] = 0;
    r = mnist_idx_open(fz_img, 3, &h, NULL, err);
    if (r < 0 && (!err[0] || !strstr(err, fz_img))) abort(); /* the message names the file */
    r = mnist_idx_open(fz_lab, 1, &h, NULL, err);
    if (r < 0 && (!err[0] || !strstr(err, fz_lab))) abort();
    r = mnist_probe_files(fz_img, fz_lab, &info, err);
    if (r < 0) {
        if (!err[0]) abort();
    } else {
        size_t px, k;
        int i;
        float *x;
        int32_t *y;
        if (info.count < 1 || info.rows < 1 || info.cols < 1) abort();
        px = (size_t)info.count * (size_t)info.rows * (size_t)info.cols;
        if (px > size) abort(); /* the size check held: the file really has these pixels */
        x = (float *)malloc(px * sizeof(float));
        y = (int32_t *)malloc((size_t)info.count * sizeof(int32_t));
        if (!x || !y) abort();
        /* a buffer one item too small must be refused */
        if (info.count > 1 && mnist_load_files(fz_img, fz_lab, 0, info.count - 1, x, y, &info, err) != MNIST_E_CAPACITY)
            abort();
        for (i = 0; i < info.count; i++) y[i] = -7;
        for (k = 0; k < px; k++) x[k] = -7.0f;
        r = mnist_load_files(fz_img, fz_lab, 0, info.count, x, y, &info, err);
        if (r != MNIST_OK) { /* refused: nothing written (regress/idx/label-partial-output) */
            for (i = 0; i < info.count; i++)
                if (y[i] != -7) abort();
            for (k = 0; k < px; k++)
                if (x[k] != -7.0f) abort();
        }
        if (r == MNIST_OK) {
            for (i = 0; i < info.count; i++)
                if (y[i] < 0 || y[i] > 9) abort();
            for (i = 0; (size_t)i < px; i++)
                if (!(x[i] >= 0.0f && x[i] <= 1.0f)) abort();
        } else if (!err[0]) {
            abort();
        }
        free(x);
        free(y);
    }
    return 0;
}
