/* mnist_data.h - IDX reader and MNIST dataset of the ipupipe examples. Public domain / MIT.
 *
 * Reads the IDX files of MNIST (LeCun et al., http://yann.lecun.com/exdb/mnist/:
 * big-endian header: two zero bytes, a type byte (0x08 = unsigned byte), a rank
 * byte, then `rank` 32-bit big-endian dimensions, then the data). Every check is
 * made before anything is read into the caller's buffers:
 *
 *   - the file opens, is not empty and holds a whole header;
 *   - magic: zero bytes, type 0x08, rank 3 for images, 1 for labels;
 *   - every dimension is non-zero; the item count and the item size fit an int
 *     and their product does not overflow (computed in 64 bits, checked);
 *   - the file size equals header + product of the dimensions, exactly;
 *   - labels are in 0..9; images and labels hold the same count.
 *
 * A failure returns a negative MNIST_E_* code and writes a message that names the
 * file and what is wrong into the caller's `err` buffer; nothing crashes.
 *
 * No heap: the caller sizes its buffers from mnist_probe() and passes them in.
 * Pixels are scaled to [0, 1] (byte / 255), labels become int32.
 *
 *     mnist_info ii;  char err[MNIST_ERR_LEN];
 *     if (mnist_probe("data/mnist", "train", &ii, err) < 0) { puts(err); exit(1); }
 *     float *x = ...;  // ii.count * ii.rows * ii.cols floats
 *     int32_t *y = ...; // ii.count ints
 *     mnist_load("data/mnist", "train", ii.count, x, y, &ii, err);
 *
 * File names: `<dir>/train-images-idx3-ubyte`, `<dir>/train-labels-idx1-ubyte`,
 * `<dir>/t10k-images-idx3-ubyte`, `<dir>/t10k-labels-idx1-ubyte` (split "train" or
 * "t10k"/"test"). The lower-level mnist_idx_* functions take explicit paths.
 *
 * Thread safety: every function is reentrant (no globals).
 * Reads with stdio (fopen/fread); include it in programs, not in firmware. Messages
 * are formatted by mnist_err.h, shared with mnist_ckpt.h.
 */
#ifndef MNIST_DATA_H
#define MNIST_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mnist_err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_PATH_LEN 1024

#define MNIST_RESULTS(X)                                                              \
    X(MNIST_OK, 0, "ok")                                                              \
    X(MNIST_E_OPEN, -1, "cannot open file")                                          \
    X(MNIST_E_TRUNCATED, -2, "file truncated or empty")                              \
    X(MNIST_E_MAGIC, -3, "bad magic number")                                         \
    X(MNIST_E_RANK, -4, "wrong rank")                                                \
    X(MNIST_E_DIMS, -5, "bad dimensions")                                            \
    X(MNIST_E_SIZE, -6, "file size does not match header")                           \
    X(MNIST_E_LABEL, -7, "label out of range")                                       \
    X(MNIST_E_MISMATCH, -8, "image and label counts differ")                         \
    X(MNIST_E_CAPACITY, -9, "buffer too small")                                      \
    X(MNIST_E_READ, -10, "read error")                                               \
    X(MNIST_E_ARG, -11, "bad argument")

typedef enum {
#define MNIST_ENUM_(name, val, str) name = val,
    MNIST_RESULTS(MNIST_ENUM_)
#undef MNIST_ENUM_
    MNIST_RESULT_END_ = 1
} mnist_result;

/* One IDX file's header. dims[0] is the item count. */
typedef struct {
    int rank;
    uint32_t dims[3];
    int count;     /* dims[0] */
    int item_size; /* product of dims[1..rank-1] (1 for rank 1) */
    long long data_offset;
} mnist_idx_header;

/* A split: `count` images of rows x cols. */
typedef struct {
    int count, rows, cols;
} mnist_info;

static inline const char *mnist_result_str(int r) {
    switch (r) {
#define MNIST_CASE_(name, val, str) case val: return str;
        MNIST_RESULTS(MNIST_CASE_)
#undef MNIST_CASE_
    default: return "unknown result";
    }
}

/* err = "<path>: <what the code means>: <what>" (mnist_err.h) */
static inline int mnist_fail_(char *err, int code, const char *path, const char *what) {
    return mnist_err_fail(err, code, mnist_result_str(code), path, what);
}

static inline uint32_t mnist_be32_(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* Reads and checks the header of `path` (expect_rank 3: images, 1: labels),
 * including that the file size matches exactly. On success `*fp_out` (if not NULL)
 * is the open file positioned at the data; the caller closes it. */
static inline int mnist_idx_open(const char *path, int expect_rank, mnist_idx_header *h, FILE **fp_out,
                                 char *err) {
    unsigned char hb[4 + 4 * 3];
    char what[256];
    FILE *f;
    long long fsize, expect;
    uint64_t item = 1;
    int i, rank;
    if (fp_out) *fp_out = NULL;
    if (!path || !h || (expect_rank != 1 && expect_rank != 3))
        return mnist_fail_(err, MNIST_E_ARG, path, "mnist_idx_open needs a path, a header and rank 1 or 3");
    memset(h, 0, sizeof *h);
    f = fopen(path, "rb");
    if (!f) return mnist_fail_(err, MNIST_E_OPEN, path, "check the path, or run 'make data' to fetch MNIST");
    if (fseek(f, 0, SEEK_END) != 0 || (fsize = (long long)ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return mnist_fail_(err, MNIST_E_READ, path, "cannot determine the file size");
    }
    if (fsize == 0) {
        fclose(f);
        return mnist_fail_(err, MNIST_E_TRUNCATED, path, "the file is empty (0 bytes); run 'make data' again");
    }
    if (fsize < 4 || fread(hb, 1, 4, f) != 4) {
        fclose(f);
        ipup_snprintf(what, sizeof what, "only %lld bytes, shorter than the 4-byte magic number", fsize);
        return mnist_fail_(err, MNIST_E_TRUNCATED, path, what);
    }
    rank = hb[3];
    if (hb[0] != 0 || hb[1] != 0 || hb[2] != 0x08) {
        fclose(f);
        ipup_snprintf(what, sizeof what,
                 "magic bytes %02x %02x %02x %02x; an IDX file of unsigned bytes starts 00 00 08 0%d "
                 "(is it gzip-compressed or not an IDX file?)",
                 hb[0], hb[1], hb[2], hb[3], expect_rank);
        return mnist_fail_(err, MNIST_E_MAGIC, path, what);
    }
    if (rank != expect_rank) {
        fclose(f);
        ipup_snprintf(what, sizeof what, "rank %d in the magic number, expected %d (%s)", rank, expect_rank,
                 expect_rank == 3 ? "an images file: count x rows x cols" : "a labels file: count");
        return mnist_fail_(err, MNIST_E_RANK, path, what);
    }
    if (fsize < 4 + 4LL * rank || fread(hb + 4, 1, (size_t)(4 * rank), f) != (size_t)(4 * rank)) {
        fclose(f);
        ipup_snprintf(what, sizeof what, "only %lld bytes, shorter than the %d-byte header", fsize, 4 + 4 * rank);
        return mnist_fail_(err, MNIST_E_TRUNCATED, path, what);
    }
    h->rank = rank;
    for (i = 0; i < rank; i++) {
        h->dims[i] = mnist_be32_(hb + 4 + 4 * i);
        if (h->dims[i] == 0) {
            fclose(f);
            ipup_snprintf(what, sizeof what, "dimension %d is 0 (%s)", i, i == 0 ? "the file holds no items" : "empty items");
            return mnist_fail_(err, MNIST_E_DIMS, path, what);
        }
    }
    for (i = 1; i < rank; i++) item *= h->dims[i]; /* two 32-bit factors: fits 64 bits */
    if (h->dims[0] > 0x7fffffffu || item > 0x7fffffffu || (uint64_t)h->dims[0] * item > 0x7fffffffffffull) {
        fclose(f);
        ipup_snprintf(what, sizeof what, "dimensions %u x %llu are too large (count and item size must fit an int)",
                 (unsigned)h->dims[0], (unsigned long long)item);
        return mnist_fail_(err, MNIST_E_DIMS, path, what);
    }
    h->count = (int)h->dims[0];
    h->item_size = (int)item;
    h->data_offset = 4 + 4LL * rank;
    expect = h->data_offset + (long long)((uint64_t)h->dims[0] * item);
    if (fsize != expect) {
        fclose(f);
        ipup_snprintf(what, sizeof what, "the file is %lld bytes but its header (%u items of %d bytes) needs %lld%s", fsize,
                 (unsigned)h->dims[0], h->item_size, expect,
                 fsize < expect ? " (truncated download? run 'make data' again)" : " (trailing bytes)");
        return mnist_fail_(err, fsize < expect ? MNIST_E_TRUNCATED : MNIST_E_SIZE, path, what);
    }
    if (fp_out)
        *fp_out = f;
    else
        fclose(f);
    return MNIST_OK;
}

/* Builds "<dir>/<split>-images-idx3-ubyte" (which = 0) or "-labels-idx1-ubyte" (1).
 * split "test" means "t10k". */
static inline int mnist_path(char *out, size_t cap, const char *dir, const char *split, int which) {
    const char *s = (split && strcmp(split, "test") == 0) ? "t10k" : split;
    int n = ipup_snprintf(out, cap, "%s/%s-%s", dir ? dir : ".", s ? s : "train",
                     which == 0 ? "images-idx3-ubyte" : "labels-idx1-ubyte");
    return (n < 0 || (size_t)n >= cap) ? MNIST_E_ARG : MNIST_OK;
}

/* Checks both files of a split from explicit paths and returns their shape. */
static inline int mnist_probe_files(const char *images_path, const char *labels_path, mnist_info *info,
                                    char *err) {
    mnist_idx_header hi, hl;
    char what[256];
    int r;
    if (!info) return mnist_fail_(err, MNIST_E_ARG, images_path, "mnist_probe_files needs an info pointer");
    memset(info, 0, sizeof *info);
    if ((r = mnist_idx_open(images_path, 3, &hi, NULL, err)) < 0) return r;
    if ((r = mnist_idx_open(labels_path, 1, &hl, NULL, err)) < 0) return r;
    if (hi.count != hl.count) {
        ipup_snprintf(what, sizeof what, "%d images but %d labels in the labels file (files from different splits?)",
                 hi.count, hl.count);
        return mnist_fail_(err, MNIST_E_MISMATCH, images_path, what);
    }
    info->count = hi.count;
    info->rows = (int)hi.dims[1];
    info->cols = (int)hi.dims[2];
    return MNIST_OK;
}

/* Loads min(limit, count) items (limit <= 0: all) of a split from explicit paths.
 * images (n, rows*cols) floats in [0, 1]; labels (n) int32 in 0..9; `capacity` is
 * the number of items both buffers can hold. On success *info holds the loaded
 * count. Every label is checked (also those beyond the limit). */
static inline int mnist_load_files(const char *images_path, const char *labels_path, int limit, int capacity,
                                   float *images, int32_t *labels, mnist_info *info, char *err) {
    mnist_idx_header hi, hl;
    FILE *fi = NULL, *fl = NULL;
    unsigned char buf[4096];
    char what[256];
    long long total, done = 0;
    int r, n, i;
    if (!images || !labels || !info)
        return mnist_fail_(err, MNIST_E_ARG, images_path, "mnist_load_files needs image, label and info buffers");
    if ((r = mnist_probe_files(images_path, labels_path, info, err)) < 0) return r;
    n = (limit > 0 && limit < info->count) ? limit : info->count;
    if (n > capacity) {
        ipup_snprintf(what, sizeof what, "%d items to load but the buffers hold %d; size them from mnist_probe", n,
                 capacity);
        return mnist_fail_(err, MNIST_E_CAPACITY, images_path, what);
    }
    if ((r = mnist_idx_open(labels_path, 1, &hl, &fl, err)) < 0) return r;
    /* labels, pass 1: check all of them before anything is written */
    for (i = 0; i < hl.count;) {
        int k = hl.count - i < (int)sizeof buf ? hl.count - i : (int)sizeof buf, j;
        if (fread(buf, 1, (size_t)k, fl) != (size_t)k) {
            fclose(fl);
            return mnist_fail_(err, MNIST_E_READ, labels_path, "read failed in the label data");
        }
        for (j = 0; j < k; j++)
            if (buf[j] > 9) {
                fclose(fl);
                ipup_snprintf(what, sizeof what, "label %d of item %d is out of range 0..9 (corrupt file?)", buf[j], i + j);
                return mnist_fail_(err, MNIST_E_LABEL, labels_path, what);
            }
        i += k;
    }
    /* pass 2: keep the first n */
    if (fseek(fl, (long)hl.data_offset, SEEK_SET) != 0) {
        fclose(fl);
        return mnist_fail_(err, MNIST_E_READ, labels_path, "seek failed in the label data");
    }
    for (i = 0; i < n;) {
        int k = n - i < (int)sizeof buf ? n - i : (int)sizeof buf, j;
        if (fread(buf, 1, (size_t)k, fl) != (size_t)k) {
            fclose(fl);
            return mnist_fail_(err, MNIST_E_READ, labels_path, "read failed in the label data");
        }
        for (j = 0; j < k; j++) labels[i + j] = (int32_t)buf[j];
        i += k;
    }
    fclose(fl);
    if ((r = mnist_idx_open(images_path, 3, &hi, &fi, err)) < 0) return r;
    total = (long long)n * hi.item_size;
    while (done < total) {
        size_t k = (size_t)(total - done < (long long)sizeof buf ? total - done : (long long)sizeof buf), j;
        if (fread(buf, 1, k, fi) != k) {
            fclose(fi);
            return mnist_fail_(err, MNIST_E_READ, images_path, "read failed in the pixel data");
        }
        for (j = 0; j < k; j++) images[done + (long long)j] = (float)buf[j] / 255.0f;
        done += (long long)k;
    }
    fclose(fi);
    info->count = n;
    return MNIST_OK;
}

/* Directory + split ("train", "t10k" or "test") forms of the two functions above. */
static inline int mnist_probe(const char *dir, const char *split, mnist_info *info, char *err) {
    char pi[MNIST_PATH_LEN], pl[MNIST_PATH_LEN];
    if (mnist_path(pi, sizeof pi, dir, split, 0) < 0 || mnist_path(pl, sizeof pl, dir, split, 1) < 0)
        return mnist_fail_(err, MNIST_E_ARG, dir, "directory name too long");
    return mnist_probe_files(pi, pl, info, err);
}

static inline int mnist_load(const char *dir, const char *split, int limit, int capacity, float *images,
                             int32_t *labels, mnist_info *info, char *err) {
    char pi[MNIST_PATH_LEN], pl[MNIST_PATH_LEN];
    if (mnist_path(pi, sizeof pi, dir, split, 0) < 0 || mnist_path(pl, sizeof pl, dir, split, 1) < 0)
        return mnist_fail_(err, MNIST_E_ARG, dir, "directory name too long");
    return mnist_load_files(pi, pl, limit, capacity, images, labels, info, err);
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_DATA_H */
