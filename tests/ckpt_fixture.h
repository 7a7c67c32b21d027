/* ckpt_fixture.h - checkpoints (examples/mnist_ckpt.h) for the tests and the fuzz
 * target: the small dense-layer tensor set their files are built around, and the
 * trailing CRC-32 made to match after a test or the fuzzer has edited the bytes.
 * Include after mnist_ckpt.h. All static inline: each includer uses only some. */
#ifndef IPUPIPE_TESTS_CKPT_FIXTURE_H
#define IPUPIPE_TESTS_CKPT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Describes dense.w (d0, d1) on w and dense.b (d1) on b in t[0..1], and when v is not
 * NULL dense.w.momentum (d0, d1) on v in t[2]. Zeroes the entries it fills first.
 * Returns the number of tensors, 2 or 3 (tests/fuzz/corpus/ckpt uses 6, 4 and all 3). */
static inline int ckpt_fixture_tensors(mnist_ckpt_tensor *t, int d0, int d1, float *w, float *b, float *v) {
    int n = v ? 3 : 2;
    memset(t, 0, (size_t)n * sizeof *t);
    t[0].name = "dense.w";
    t[0].rank = 2;
    t[0].dims[0] = d0;
    t[0].dims[1] = d1;
    t[0].data = w;
    t[1].name = "dense.b";
    t[1].rank = 1;
    t[1].dims[0] = d1;
    t[1].data = b;
    if (v) {
        t[2].name = "dense.w.momentum";
        t[2].rank = 2;
        t[2].dims[0] = d0;
        t[2].dims[1] = d1;
        t[2].data = v;
    }
    return n;
}

/* Rewrites the last 4 bytes of the n-byte file image b (n >= 4) as the CRC-32 of the
 * bytes before them, little-endian, as mnist_ckpt_save writes it. */
static inline void ckpt_fixture_fix_crc(unsigned char *b, size_t n) {
    uint32_t tab[256], c;
    mnist_ckpt_crc_table_(tab);
    c = mnist_ckpt_crc_(tab, 0xFFFFFFFFu, b, n - 4) ^ 0xFFFFFFFFu;
    b[n - 4] = (unsigned char)c;
    b[n - 3] = (unsigned char)(c >> 8);
    b[n - 2] = (unsigned char)(c >> 16);
    b[n - 1] = (unsigned char)(c >> 24);
}

#endif
