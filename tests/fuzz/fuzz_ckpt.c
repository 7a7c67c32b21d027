/* fuzz_ckpt.c - libFuzzer target: the trainer's checkpoint loader of examples/mnist/mnist_ckpt.h
 * (version 2: mnist_ckpt_peek_state, mnist_ckpt_load_state over a file) and the
 * library's ipup_state_load through an in-memory read callback, into the emulator of
 * tests/ckpt_fixture.h (dense4,relu,dense3,xent on 6 inputs, two stages, momentum; one
 * step run). The trainer expects model "fuzz".
 *
 * The first input byte is a mode; the rest is the file. Mode bits 0..3 make an edited
 * file consistent again so that the checks behind each checksum are reached (otherwise
 * nearly every mutation stops at a CRC): bit 0 the trainer header's CRC-32, bit 1 the
 * state's length field (= what the file holds after the header), bit 2 the state's
 * fingerprint (the descriptor's CRC-32), bit 3 the state's CRC-32 (the last 4 bytes).
 * Bit 6: the memory callback fails (returns -7) for reads past the middle of the stream.
 * The memory load reads the file from byte 68 (after the trainer header), or all of a
 * shorter file.
 *
 * Oracles, besides ASan and UBSan: a refusal is a file code (corrupt or mismatch; i/o
 * only from the failing callback) with a message that names the file (trainer) or the
 * call (library) and holds no control byte, and leaves every tensor and the step of the
 * emulator untouched; an accepted file is canonical: ipup_state_save writes back exactly
 * the bytes that were loaded, and the trainer header is exactly the one a save of the
 * returned meta writes.
 *
 *   make fuzz   (or build/fuzz/fuzz_ckpt tests/fuzz/corpus/ckpt; seeds: ckpt_seeds.c)
 */
#define _POSIX_C_SOURCE 200809L
#include "mnist_ckpt.h"
#include "ckpt_fixture.h"
#include "idx_fixture.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[64], fz_path[128];
static ckpt_fixture_emu fz;
static unsigned char fz_before[1 << 14], fz_after[1 << 14];
static size_t fz_before_n;

static void fz_cleanup(void) {
    unlink(fz_path);
    rmdir(fz_dir);
    ipup_shutdown(&fz.emu);
}

static void fz_setup(void) {
    snprintf(fz_dir, sizeof fz_dir, "/dev/shm/ipup_fuzz_ckpt_XXXXXX");
    if (!mkdtemp(fz_dir)) {
        snprintf(fz_dir, sizeof fz_dir, "/tmp/ipup_fuzz_ckpt_XXXXXX");
        if (!mkdtemp(fz_dir)) abort();
    }
    snprintf(fz_path, sizeof fz_path, "%s/c.ckpt", fz_dir);
    if (ckpt_fixture_start(&fz, NULL, 2, IPUP_OPT_MOMENTUM) != IPUP_OK || ipup_run(&fz.emu, NULL) != IPUP_OK) abort();
    atexit(fz_cleanup);
}

static void fz_snap(void) {
    fz_before_n = ckpt_fixture_snap(&fz.emu, fz_before, sizeof fz_before);
    if (!fz_before_n) abort();
}
static int fz_untouched(void) {
    size_t n = ckpt_fixture_snap(&fz.emu, fz_after, sizeof fz_after);
    return n == fz_before_n && memcmp(fz_after, fz_before, n) == 0;
}
static int fz_no_control(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) return 0;
    return 1;
}

/* the stream in memory, for ipup_state_load and for the re-save */
typedef struct fz_mem {
    const unsigned char *p;
    size_t n, fail_from; /* reads that reach fail_from fail (SIZE_MAX: none) */
} fz_mem;
static int fz_read(void *user, uint64_t offset, void *data, size_t len) {
    const fz_mem *m = (const fz_mem *)user;
    if (offset + len > m->fail_from) return -7;
    if (offset > m->n || len > m->n - offset) return IPUP_STATE_END;
    memcpy(data, m->p + offset, len);
    return 0;
}
static unsigned char fz_out[1 << 13];
static size_t fz_out_n;
static int fz_write(void *user, const void *data, size_t len) {
    (void)user;
    if (len > sizeof fz_out - fz_out_n) return -1;
    memcpy(fz_out + fz_out_n, data, len);
    fz_out_n += len;
    return 0;
}
/* after an accepted load: the emulator writes back exactly the loaded stream */
static void fz_canonical(const unsigned char *stream, size_t n) {
    fz_out_n = 0;
    if (ipup_state_save(&fz.emu, fz_write, NULL) != IPUP_OK) abort();
    if (fz_out_n > n || memcmp(fz_out, stream, fz_out_n) != 0) abort();
}

/* the trainer's peek and load of the file */
static void fz_trainer(const unsigned char *file, size_t n) {
    mnist_ckpt_meta meta;
    unsigned char h[MNIST_CKPT_HEADER_BYTES];
    char err[MNIST_CKPT_ERR_LEN];
    int r;
    err[0] = 0;
    r = mnist_ckpt_peek_state(fz_path, &meta, err);
    if (r != MNIST_CKPT_OK && (r != MNIST_CKPT_E_CORRUPT && r != MNIST_CKPT_E_MISMATCH)) abort();
    if (r != MNIST_CKPT_OK && (!strstr(err, fz_path) || !fz_no_control(err))) abort();
    if (r == MNIST_CKPT_OK && (meta.model[MNIST_CKPT_MODEL_LEN - 1] != 0 || meta.epoch > MNIST_CKPT_MAX_EPOCH)) abort();
    memset(&meta, 0, sizeof meta);
    snprintf(meta.model, sizeof meta.model, "fuzz");
    fz_snap();
    err[0] = 0;
    r = mnist_ckpt_load_state(fz_path, &meta, &fz.emu, err);
    if (r != MNIST_CKPT_OK) {
        if (r != MNIST_CKPT_E_CORRUPT && r != MNIST_CKPT_E_MISMATCH) abort();
        if (!strstr(err, fz_path) || !fz_no_control(err) || !fz_untouched()) abort();
        return;
    }
    if (n < MNIST_CKPT_HEADER_BYTES || meta.step != (uint64_t)ipup_get_step(&fz.emu)) abort();
    mnist_ckpt_header_(h, &meta);
    if (memcmp(h, file, sizeof h) != 0) abort();
    fz_canonical(file + MNIST_CKPT_HEADER_BYTES, n - MNIST_CKPT_HEADER_BYTES);
}

/* the library's load of the stream in memory */
static void fz_library(const unsigned char *file, size_t n, int failing) {
    fz_mem m;
    const char *msg;
    int r;
    m.p = n >= MNIST_CKPT_HEADER_BYTES ? file + MNIST_CKPT_HEADER_BYTES : file;
    m.n = n >= MNIST_CKPT_HEADER_BYTES ? n - MNIST_CKPT_HEADER_BYTES : n;
    m.fail_from = failing ? m.n / 2 : SIZE_MAX;
    fz_snap();
    r = ipup_state_load(&fz.emu, fz_read, &m);
    if (r != IPUP_OK) {
        msg = ipup_last_error(&fz.emu);
        if (r != IPUP_ERR_CORRUPT && r != IPUP_ERR_MISMATCH && !(failing && r == IPUP_ERR_IO)) abort();
        if (strncmp(msg, "ipup_state_load: ", 17) != 0 || !fz_no_control(msg) || !fz_untouched()) abort();
        return;
    }
    fz_canonical(m.p, m.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static unsigned char file[1 << 13];
    size_t n;
    if (!fz_dir[0]) fz_setup();
    if (size < 1 || size - 1 > sizeof file) return 0;
    n = size - 1;
    if (n) memcpy(file, data + 1, n);
    if (data[0] & 1u) ckpt_fixture_fix_header_crc(file, n);
    if (data[0] & 2u) ckpt_fixture_fix_state_len(file, n);
    if (data[0] & 4u) ckpt_fixture_fix_fingerprint(file, n);
    if (data[0] & 8u) ckpt_fixture_fix_state_crc(file, n);
    if (fixture_write_file(fz_path, file, n) != 0) abort();
    fz_trainer(file, n);
    fz_library(file, n, (data[0] & 0x40u) != 0);
    return 0;
}
