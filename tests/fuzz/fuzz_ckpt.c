/* fuzz_ckpt.c - libFuzzer target: the checkpoint reader of examples/mnist_ckpt.h
 * (mnist_ckpt_peek, mnist_ckpt_load, mnist_ckpt_load_fd). The first input byte is a
 * mode: bit 0 set = the harness rewrites the trailing CRC-32 so that it matches
 * (otherwise nearly every mutation stops at the checksum and the structure checks
 * behind it would never be reached). The rest is the file, written to a private
 * temporary directory. The reader expects model "fuzz" with three tensors:
 * dense.w (6, 4), dense.b (4), dense.w.momentum (6, 4). Each input is loaded twice:
 * mnist_ckpt_load (two passes on one descriptor) and mnist_ckpt_open +
 * mnist_ckpt_load_fd with a staging buffer. A refused file must leave the tensors
 * untouched and its message free of control bytes; an accepted one finite values.
 *
 *   make fuzz   (or build/fuzz/fuzz_ckpt tests/fuzz/corpus/ckpt)
 */
#define _POSIX_C_SOURCE 200809L
#define IPUPIPE_IMPLEMENTATION /* ipup_snprintf, used by the readers' messages */
#include "mnist_ckpt.h"
#include "ckpt_fixture.h"
#include "idx_fixture.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[64], fz_path[128];
static float fz_w[24], fz_b[4], fz_v[24];

static void fz_cleanup(void) {
    unlink(fz_path);
    rmdir(fz_dir);
}

static void fz_fill(void) {
    int i;
    for (i = 0; i < 24; i++) fz_w[i] = fz_v[i] = 12345.0f;
    for (i = 0; i < 4; i++) fz_b[i] = 12345.0f;
}
static int fz_untouched(void) {
    int i;
    for (i = 0; i < 24; i++)
        if (fz_w[i] != 12345.0f || fz_v[i] != 12345.0f) return 0;
    for (i = 0; i < 4; i++)
        if (fz_b[i] != 12345.0f) return 0;
    return 1;
}

/* A refused file is corrupt (magic, CRC, truncation, structure) or another run's
 * (version, model, tensors): the library's two codes for files, never anything else. */
static int fz_file_code(int r) { return r == MNIST_CKPT_E_CORRUPT || r == MNIST_CKPT_E_MISMATCH; }

/* A refused load names the file, says corrupt or mismatch, copies nothing, and never
 * sends a control byte of the file to the terminal; an accepted one holds only finite
 * values. */
static void fz_check(int r, const char *err) {
    int i;
    const char *c;
    if (r != MNIST_CKPT_OK) {
        if (!err[0] || !strstr(err, fz_path) || !fz_file_code(r)) abort();
        if (!fz_untouched()) abort(); /* refused: nothing copied */
        for (c = err; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f) abort();
        return;
    }
    for (i = 0; i < 24; i++)
        if (!(fz_w[i] - fz_w[i] == 0.0f) || !(fz_v[i] - fz_v[i] == 0.0f)) abort();
    for (i = 0; i < 4; i++)
        if (!(fz_b[i] - fz_b[i] == 0.0f)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mnist_ckpt_tensor t[3];
    mnist_ckpt_meta meta;
    char err[MNIST_CKPT_ERR_LEN];
    uint8_t *file;
    size_t n;
    int r;
    if (!fz_dir[0]) {
        snprintf(fz_dir, sizeof fz_dir, "/dev/shm/ipup_fuzz_ckpt_XXXXXX");
        if (!mkdtemp(fz_dir)) {
            snprintf(fz_dir, sizeof fz_dir, "/tmp/ipup_fuzz_ckpt_XXXXXX");
            if (!mkdtemp(fz_dir)) abort();
        }
        snprintf(fz_path, sizeof fz_path, "%s/c.ckpt", fz_dir);
        atexit(fz_cleanup);
    }
    if (size < 1) return 0;
    n = size - 1;
    file = (uint8_t *)malloc(n ? n : 1);
    if (!file) abort();
    if (n) memcpy(file, data + 1, n);
    if ((data[0] & 1u) && n >= 4) ckpt_fixture_fix_crc(file, n);
    if (fixture_write_file(fz_path, file, n) != 0) abort();
    free(file);

    err[0] = 0;
    r = mnist_ckpt_peek(fz_path, &meta, err);
    if (r != MNIST_CKPT_OK && (!err[0] || !strstr(err, fz_path) || !fz_file_code(r))) abort();
    if (r == MNIST_CKPT_OK && meta.model[MNIST_CKPT_MODEL_LEN - 1] != 0) abort();

    ckpt_fixture_tensors(t, 6, 4, fz_w, fz_b, fz_v);
    memset(&meta, 0, sizeof meta);
    snprintf(meta.model, sizeof meta.model, "fuzz");
    fz_fill();
    err[0] = 0;
    r = mnist_ckpt_load(fz_path, &meta, t, 3, err);
    fz_check(r, err);
    { /* the trainer's way: one descriptor, values staged until everything passed */
        static float stage[24 + 4 + 24];
        int fd = mnist_ckpt_open(fz_path, err);
        if (fd < 0) abort(); /* a regular file that was just written */
        fz_fill();
        err[0] = 0;
        r = mnist_ckpt_load_fd(fd, fz_path, &meta, t, 3, stage, err);
        close(fd);
        fz_check(r, err);
    }
    return 0;
}
