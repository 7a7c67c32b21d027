/* idx_fixture.h - IDX files (the MNIST format read by examples/mnist/mnist_data.h) for the
 * tests, the fuzz targets and bench/bench_train.c.
 *
 *   idx_put_be32        one big-endian header field
 *   idx_header          magic 00 00 TYPE RANK and RANK big-endian dimensions, into a
 *                       buffer; any type, rank and dimensions, so broken headers too
 *   fixture_write_file  bytes to a file (IDX or not)
 *   idx_write_synthetic_split / idx_write_synthetic_set / idx_remove_synthetic_set
 *                       synthetic 28x28 digits as DIR/SPLIT-{images-idx3,labels-idx1}-ubyte
 *
 * All static inline: each includer uses only some of them. */
#ifndef IPUPIPE_TESTS_IDX_FIXTURE_H
#define IPUPIPE_TESTS_IDX_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Stores v at p most significant byte first (the IDX header byte order). */
static inline void idx_put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Writes an IDX header into buf: 00 00 type rank, then dims[0..rank-1] big-endian.
 * Returns its length, 4 + 4 * rank (buf must hold that). Nothing is checked, so a
 * caller can build any broken header (wrong type, rank, zero or huge dimensions). */
static inline size_t idx_header(unsigned char *buf, int type, int rank, const uint32_t *dims) {
    int d;
    buf[0] = 0;
    buf[1] = 0;
    buf[2] = (unsigned char)type;
    buf[3] = (unsigned char)rank;
    for (d = 0; d < rank; d++) idx_put_be32(buf + 4 + 4 * d, dims[d]);
    return 4 + 4 * (size_t)rank;
}

/* Writes the n bytes at p to path (created or truncated). Returns 0, or -1 when the
 * file cannot be created, written or closed; the caller decides how to fail. */
static inline int fixture_write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    int bad;
    if (!f) return -1;
    bad = n && fwrite(p, 1, n, f) != n;
    if (fclose(f) != 0) bad = 1;
    return bad ? -1 : 0;
}

/* Byte j (0..783) of synthetic digit i: class k = i % 10 lights rows 2k+3..2k+5 at
 * 200, everything else is fixed noise (i*31 + j*7) % 40 - a small model learns it in
 * an epoch. The same pattern as gen_idx in tests/lib.sh. */
static inline unsigned char idx_synthetic_pixel(int i, int j) {
    int row = j / 28, k = i % 10;
    return (unsigned char)((row >= 2 * k + 3 && row < 2 * k + 6) ? 200 : (i * 31 + j * 7) % 40);
}

/* Writes dir/SPLIT-images-idx3-ubyte (n synthetic 28x28 digits) and
 * dir/SPLIT-labels-idx1-ubyte (label i % 10). No heap. Returns 0 or -1. */
static inline int idx_write_synthetic_split(const char *dir, const char *split, int n) {
    char p[512];
    unsigned char h[16], row[784];
    uint32_t dims[3];
    FILE *f;
    int i, j, bad = 0;
    dims[0] = (uint32_t)n;
    dims[1] = 28;
    dims[2] = 28;
    snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte", dir, split);
    if (!(f = fopen(p, "wb"))) return -1;
    if (fwrite(h, 1, idx_header(h, 8, 3, dims), f) != 16) bad = 1;
    for (i = 0; i < n && !bad; i++) {
        for (j = 0; j < 784; j++) row[j] = idx_synthetic_pixel(i, j);
        if (fwrite(row, 1, 784, f) != 784) bad = 1;
    }
    if (fclose(f) != 0 || bad) return -1;
    snprintf(p, sizeof p, "%s/%s-labels-idx1-ubyte", dir, split);
    if (!(f = fopen(p, "wb"))) return -1;
    if (fwrite(h, 1, idx_header(h, 8, 1, dims), f) != 8) bad = 1;
    for (i = 0; i < n && !bad; i++)
        if (fputc(i % 10, f) == EOF) bad = 1;
    if (fclose(f) != 0 || bad) return -1;
    return 0;
}

/* The train and t10k splits (n_train and n_test digits) into dir; 0 or -1. */
static inline int idx_write_synthetic_set(const char *dir, int n_train, int n_test) {
    if (idx_write_synthetic_split(dir, "train", n_train) != 0) return -1;
    return idx_write_synthetic_split(dir, "t10k", n_test);
}

/* Removes the four files idx_write_synthetic_set wrote (not dir itself). */
static inline void idx_remove_synthetic_set(const char *dir) {
    static const char *const names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    char p[512];
    int i;
    for (i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        remove(p);
    }
}

#endif
