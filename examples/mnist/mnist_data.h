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
 * Pixels are scaled to [0, 1] (byte / 255), labels become int32; mnist_load_bytes_into
 * keeps them as bytes (mnist_pixels_to_float scales them later, to the same bits).
 *
 *     mnist_info ii;  char err[EX_ERR_LEN];
 *     if (mnist_probe("data/mnist", "train", &ii, err) < 0) { puts(err); exit(1); }
 *     float *x = ...;  // ii.count * ii.rows * ii.cols floats
 *     int32_t *y = ...; // ii.count ints
 *     mnist_info room = ii; // what the buffers hold: a changed file is refused
 *     mnist_load_into("data/mnist", "train", ii.count, &room, x, y, &ii, err);
 *
 * mnist_load_digest_into also hashes each file's header and the bytes of the items it
 * loads (FNV-1a, in the pass that reads them): mnist-train-mpi compares these digests
 * across its ranks, so that no rank trains on other data.
 *
 * File names: `<dir>/train-images-idx3-ubyte`, `<dir>/train-labels-idx1-ubyte`,
 * `<dir>/t10k-images-idx3-ubyte`, `<dir>/t10k-labels-idx1-ubyte` (split "train" or
 * "t10k"/"test"). The lower-level mnist_idx_* functions take explicit paths.
 *
 * Thread safety: every function is reentrant (no globals).
 * Each file is opened once (ex_files.h: a regular file, never a FIFO, a directory or
 * a device) and read through that one descriptor with pread: the size check, the
 * header and the data all come from the same file, so a file replaced while it is
 * read cannot make the reader write past the caller's buffers. A caller that sizes
 * its buffers from mnist_probe() and loads later passes that shape to
 * mnist_load_into() / mnist_load_files_into(), which refuse a file whose shape has
 * changed since. POSIX (open, pread): define _POSIX_C_SOURCE 200809L before the
 * first include; programs, not firmware. Messages are formatted by ex_files.h,
 * shared with mnist_ckpt.h.
 */
#ifndef MNIST_DATA_H
#define MNIST_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_files.h"
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

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

/* err = "<path>: <what the code means>: <what>" (ex_files.h) */
static inline int mnist_fail_(char *err, int code, const char *path, const char *what) {
    return ex_err_fail(err, code, mnist_result_str(code), path, what);
}

/* FNV-1a 64 (Fowler, Noll and Vo: offset basis 14695981039346656037, prime
 * 1099511628211) of n bytes, continuing h (0: start); the hash of ipup_mpi_hash
 * (ipupipe_mpi.h). The digests of mnist_load_digest_into. */
static inline uint64_t mnist_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    size_t i;
    if (!h) h = UINT64_C(14695981039346656037);
    for (i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(1099511628211);
    return h;
}

static inline uint32_t mnist_be32_(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* Checks the header of the file open on fd (size fsize) against expect_rank and the
 * file size. 0, or a negative code after a message naming path. */
static inline int mnist_idx_check_(int fd, long long fsize, const char *path, int expect_rank, mnist_idx_header *h,
                                   char *err) {
    unsigned char hb[4 + 4 * 3];
    char what[256];
    long long expect, got;
    uint64_t item = 1;
    int i, rank;
    if (fsize == 0) return mnist_fail_(err, MNIST_E_TRUNCATED, path, "the file is empty (0 bytes); run 'make data' again");
    got = mnist_pread_full(fd, hb, fsize < (long long)sizeof hb ? (size_t)fsize : sizeof hb, 0);
    if (got < 0) return mnist_fail_(err, MNIST_E_READ, path, "read failed in the header");
    if (got < 4) {
        ipup_snprintf(what, sizeof what, "only %lld bytes, shorter than the 4-byte magic number", got);
        return mnist_fail_(err, MNIST_E_TRUNCATED, path, what);
    }
    rank = hb[3];
    if (hb[0] != 0 || hb[1] != 0 || hb[2] != 0x08) {
        ipup_snprintf(what, sizeof what,
                      "magic bytes %02x %02x %02x %02x; an IDX file of unsigned bytes starts 00 00 08 0%d "
                      "(is it gzip-compressed or not an IDX file?)",
                      hb[0], hb[1], hb[2], hb[3], expect_rank);
        return mnist_fail_(err, MNIST_E_MAGIC, path, what);
    }
    if (rank != expect_rank) {
        ipup_snprintf(what, sizeof what, "rank %d in the magic number, expected %d (%s)", rank, expect_rank,
                      expect_rank == 3 ? "an images file: count x rows x cols" : "a labels file: count");
        return mnist_fail_(err, MNIST_E_RANK, path, what);
    }
    if (got < 4 + 4LL * rank) {
        ipup_snprintf(what, sizeof what, "only %lld bytes, shorter than the %d-byte header", fsize, 4 + 4 * rank);
        return mnist_fail_(err, MNIST_E_TRUNCATED, path, what);
    }
    h->rank = rank;
    for (i = 0; i < rank; i++) {
        h->dims[i] = mnist_be32_(hb + 4 + 4 * i);
        if (h->dims[i] == 0) {
            ipup_snprintf(what, sizeof what, "dimension %d is 0 (%s)", i, i == 0 ? "the file holds no items" : "empty items");
            return mnist_fail_(err, MNIST_E_DIMS, path, what);
        }
    }
    for (i = 1; i < rank; i++) item *= h->dims[i]; /* two 32-bit factors: fits 64 bits */
    if (h->dims[0] > 0x7fffffffu || item > 0x7fffffffu || (uint64_t)h->dims[0] * item > 0x7fffffffffffull) {
        ipup_snprintf(what, sizeof what, "dimensions %u x %llu are too large (count and item size must fit an int)",
                      (unsigned)h->dims[0], (unsigned long long)item);
        return mnist_fail_(err, MNIST_E_DIMS, path, what);
    }
    h->count = (int)h->dims[0];
    h->item_size = (int)item;
    h->data_offset = 4 + 4LL * rank;
    expect = h->data_offset + (long long)((uint64_t)h->dims[0] * item);
    if (fsize != expect) {
        ipup_snprintf(what, sizeof what, "the file is %lld bytes but its header (%u items of %d bytes) needs %lld%s", fsize,
                      (unsigned)h->dims[0], h->item_size, expect,
                      fsize < expect ? " (truncated download? run 'make data' again)" : " (trailing bytes)");
        return mnist_fail_(err, fsize < expect ? MNIST_E_TRUNCATED : MNIST_E_SIZE, path, what);
    }
    return MNIST_OK;
}

/* mnist_fnv1a of the header h was read from: the bytes mnist_idx_check_ accepted. */
static inline uint64_t mnist_idx_digest_header_(const mnist_idx_header *h) {
    unsigned char b[4 + 4 * 3];
    int i;
    b[0] = b[1] = 0;
    b[2] = 0x08;
    b[3] = (unsigned char)h->rank;
    for (i = 0; i < h->rank && i < 3; i++) {
        b[4 + 4 * i] = (unsigned char)(h->dims[i] >> 24);
        b[5 + 4 * i] = (unsigned char)(h->dims[i] >> 16);
        b[6 + 4 * i] = (unsigned char)(h->dims[i] >> 8);
        b[7 + 4 * i] = (unsigned char)h->dims[i];
    }
    return mnist_fnv1a(0, b, (size_t)(4 + 4 * i));
}

/* Opens `path` once (a regular file, never blocking on a FIFO) and checks its header
 * (expect_rank 3: images, 1: labels), including that the file size matches exactly.
 * Returns the descriptor (>= 0; the caller closes it and reads the data from
 * h->data_offset), or a negative code after a message. */
static inline int mnist_idx_open_fd(const char *path, int expect_rank, mnist_idx_header *h, char *err) {
    char what[256];
    struct stat st;
    int fd, r;
    if (!path || !h || (expect_rank != 1 && expect_rank != 3))
        return mnist_fail_(err, MNIST_E_ARG, path, "mnist_idx_open needs a path, a header and rank 1 or 3");
    memset(h, 0, sizeof *h);
    fd = ex_open_input(path, "an IDX file", &st, what, sizeof what);
    if (fd < 0) {
        if (errno == ENOENT) ipup_snprintf(what, sizeof what, "%s", "check the path, or run 'make data' to fetch MNIST");
        return mnist_fail_(err, MNIST_E_OPEN, path, what);
    }
    if ((r = mnist_idx_check_(fd, (long long)st.st_size, path, expect_rank, h, err)) < 0) {
        close(fd);
        return r;
    }
    return fd;
}

/* mnist_idx_open_fd as a stdio stream: on success `*fp_out` (if not NULL) is the open
 * file positioned at the data; the caller closes it. */
static inline int mnist_idx_open(const char *path, int expect_rank, mnist_idx_header *h, FILE **fp_out,
                                 char *err) {
    int fd;
    if (fp_out) *fp_out = NULL;
    if ((fd = mnist_idx_open_fd(path, expect_rank, h, err)) < 0) return fd;
    if (!fp_out) {
        close(fd);
        return MNIST_OK;
    }
    if (lseek(fd, (off_t)h->data_offset, SEEK_SET) != (off_t)h->data_offset || !(*fp_out = fdopen(fd, "rb"))) {
        close(fd);
        return mnist_fail_(err, MNIST_E_READ, path, "cannot position the file at its data");
    }
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
    int fd;
    if (!info) return mnist_fail_(err, MNIST_E_ARG, images_path, "mnist_probe_files needs an info pointer");
    memset(info, 0, sizeof *info);
    if ((fd = mnist_idx_open_fd(images_path, 3, &hi, err)) < 0) return fd;
    close(fd);
    if ((fd = mnist_idx_open_fd(labels_path, 1, &hl, err)) < 0) return fd;
    close(fd);
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

/* Labels: every one of the hl->count labels on fd checked to be 0..9 (pass 1, nothing
 * stored), then the first n stored (pass 2, checked again: a file changed in place
 * between the passes is refused rather than giving an out-of-range label) and, when
 * digest is not NULL, hashed into it (the labels stored, as they are stored). */
static inline int mnist_read_labels_(int fd, const mnist_idx_header *hl, int n, int32_t *labels, const char *path,
                                     uint64_t *digest, char *err) {
    unsigned char buf[4096];
    char what[256];
    int pass, i, j;
    for (pass = 0; pass < 2; pass++) {
        int end = pass == 0 ? hl->count : n;
        for (i = 0; i < end;) {
            int k = end - i < (int)sizeof buf ? end - i : (int)sizeof buf;
            if (mnist_pread_full(fd, buf, (size_t)k, hl->data_offset + i) != k)
                return mnist_fail_(err, MNIST_E_READ, path, "read failed in the label data (did the file change?)");
            for (j = 0; j < k; j++) {
                if (buf[j] > 9) {
                    ipup_snprintf(what, sizeof what, "label %d of item %d is out of range 0..9 (%s)", buf[j], i + j,
                                  pass ? "the file changed while it was read" : "corrupt file?");
                    return mnist_fail_(err, pass ? MNIST_E_READ : MNIST_E_LABEL, path, what);
                }
                if (pass) labels[i + j] = (int32_t)buf[j];
            }
            if (pass && digest) *digest = mnist_fnv1a(*digest, buf, (size_t)k);
            i += k;
        }
    }
    return MNIST_OK;
}

/* dst[j] = src[j] / 255.0f for j < n: the pixel scaling of every float image here. The
 * vector lanes divide exactly as the scalar code does (IEEE division, no reciprocal), so
 * both paths give the same bits. */
static inline void mnist_pixels_to_float(const unsigned char *src, size_t n, float *dst) {
    size_t j = 0;
#if defined(__AVX512F__)
    const __m512 k255 = _mm512_set1_ps(255.0f);
    for (; j < n / 16 * 16; j += 16)
        _mm512_storeu_ps(dst + j, _mm512_div_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                                                    _mm_loadu_si128((const __m128i *)(const void *)(src + j)))), k255));
#elif defined(__AVX2__)
    const __m256 k255 = _mm256_set1_ps(255.0f);
    for (; j < n / 8 * 8; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                                                    _mm_loadl_epi64((const __m128i *)(const void *)(src + j)))), k255));
#endif
    for (; j < n; j++) dst[j] = (float)src[j] / 255.0f;
}

/* The first n images on fd: as floats byte / 255 into images, or as the file's bytes
 * into bytes when that is not NULL; the bytes hashed into digest when it is not NULL. */
static inline int mnist_read_images_(int fd, const mnist_idx_header *hi, int n, float *images, unsigned char *bytes,
                                     const char *path, uint64_t *digest, char *err) {
    unsigned char buf[4096];
    long long total = (long long)n * hi->item_size, done = 0;
    while (done < total) {
        size_t k = (size_t)(total - done < (long long)sizeof buf ? total - done : (long long)sizeof buf);
        unsigned char *to = bytes ? bytes + done : buf;
        if (mnist_pread_full(fd, to, k, hi->data_offset + done) != (long long)k)
            return mnist_fail_(err, MNIST_E_READ, path, "read failed in the pixel data (did the file change?)");
        if (digest) *digest = mnist_fnv1a(*digest, to, k);
        if (!bytes) mnist_pixels_to_float(buf, k, images + done);
        done += (long long)k;
    }
    return MNIST_OK;
}

/* Loads min(limit, count) items (limit <= 0: all) of a split from explicit paths into
 * buffers sized for `room`: room->count items of room->rows x room->cols pixels
 * (rows = cols = 0: of the file's own shape). Each file is opened once and every check
 * (headers, sizes, counts, the shape against room, every label) is made on that one
 * descriptor before anything is stored, so a file replaced after the caller's probe
 * is refused, never read past the buffers. images (n, rows*cols) floats in [0, 1];
 * labels (n) int32 in 0..9. On success *info holds the loaded count and the shape. */
static inline int mnist_load_files_into_(const char *images_path, const char *labels_path, int limit,
                                         const mnist_info *room, float *images, unsigned char *bytes,
                                         int32_t *labels, mnist_info *info, uint64_t *digest, char *err) {
    mnist_idx_header hi, hl;
    char what[256];
    int fi = -1, fl = -1, r, n;
    if ((!images && !bytes) || !labels || !info || !room)
        return mnist_fail_(err, MNIST_E_ARG, images_path, "mnist_load_files needs image, label and info buffers");
    if ((fi = mnist_idx_open_fd(images_path, 3, &hi, err)) < 0) return fi;
    if ((fl = r = mnist_idx_open_fd(labels_path, 1, &hl, err)) < 0) goto done;
    r = MNIST_E_MISMATCH;
    if (hi.count != hl.count) {
        ipup_snprintf(what, sizeof what, "%d images but %d labels in the labels file (files from different splits?)",
                      hi.count, hl.count);
        goto fail;
    }
    r = MNIST_E_DIMS;
    if ((room->rows || room->cols) && ((int)hi.dims[1] != room->rows || (int)hi.dims[2] != room->cols)) {
        ipup_snprintf(what, sizeof what, "the images are %ux%u but the buffers were sized for %dx%d (did the file change "
                      "since it was probed?)", (unsigned)hi.dims[1], (unsigned)hi.dims[2], room->rows, room->cols);
        goto fail;
    }
    n = (limit > 0 && limit < hi.count) ? limit : hi.count;
    r = MNIST_E_CAPACITY;
    if (n > room->count) {
        ipup_snprintf(what, sizeof what, "%d items to load but the buffers hold %d; size them from mnist_probe", n,
                      room->count);
        goto fail;
    }
    if (digest) {
        digest[0] = mnist_idx_digest_header_(&hi);
        digest[1] = mnist_idx_digest_header_(&hl);
    }
    if ((r = mnist_read_labels_(fl, &hl, n, labels, labels_path, digest ? &digest[1] : NULL, err)) < 0) goto done;
    if ((r = mnist_read_images_(fi, &hi, n, images, bytes, images_path, digest ? &digest[0] : NULL, err)) < 0)
        goto done;
    info->count = n;
    info->rows = (int)hi.dims[1];
    info->cols = (int)hi.dims[2];
    r = MNIST_OK;
    goto done;
fail:
    r = mnist_fail_(err, r, images_path, what);
done:
    if (fl >= 0) close(fl);
    close(fi);
    return r;
}

static inline int mnist_load_files_into(const char *images_path, const char *labels_path, int limit,
                                        const mnist_info *room, float *images, int32_t *labels, mnist_info *info,
                                        char *err) {
    return mnist_load_files_into_(images_path, labels_path, limit, room, images, NULL, labels, info, NULL, err);
}

/* mnist_load_files_into with room for `capacity` items of the file's own shape. */
static inline int mnist_load_files(const char *images_path, const char *labels_path, int limit, int capacity,
                                   float *images, int32_t *labels, mnist_info *info, char *err) {
    mnist_info room;
    room.count = capacity;
    room.rows = room.cols = 0;
    return mnist_load_files_into(images_path, labels_path, limit, &room, images, labels, info, err);
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

/* The directory + split form of mnist_load_files_into. */
static inline int mnist_load_into(const char *dir, const char *split, int limit, const mnist_info *room, float *images,
                                  int32_t *labels, mnist_info *info, char *err) {
    char pi[MNIST_PATH_LEN], pl[MNIST_PATH_LEN];
    if (mnist_path(pi, sizeof pi, dir, split, 0) < 0 || mnist_path(pl, sizeof pl, dir, split, 1) < 0)
        return mnist_fail_(err, MNIST_E_ARG, dir, "directory name too long");
    return mnist_load_files_into(pi, pl, limit, room, images, labels, info, err);
}

/* mnist_load_into with the pixels kept as the file's bytes (n, rows*cols), 0..255: a
 * quarter of the memory; mnist_pixels_to_float gives the floats of mnist_load_into. */
static inline int mnist_load_bytes_into(const char *dir, const char *split, int limit, const mnist_info *room,
                                        unsigned char *images, int32_t *labels, mnist_info *info, char *err) {
    char pi[MNIST_PATH_LEN], pl[MNIST_PATH_LEN];
    if (mnist_path(pi, sizeof pi, dir, split, 0) < 0 || mnist_path(pl, sizeof pl, dir, split, 1) < 0)
        return mnist_fail_(err, MNIST_E_ARG, dir, "directory name too long");
    return mnist_load_files_into_(pi, pl, limit, room, NULL, images, labels, info, NULL, err);
}

/* mnist_load_into (bytes NULL) or mnist_load_bytes_into (images NULL) that also gives
 * digest[0] of the images file and digest[1] of the labels file: mnist_fnv1a of the
 * file's IDX header, then of the bytes of the items loaded, hashed in the one pass that
 * reads them. Equal digests of both files: the same shapes and the same samples (the
 * items past limit are not read and not hashed). */
static inline int mnist_load_digest_into(const char *dir, const char *split, int limit, const mnist_info *room,
                                         float *images, unsigned char *bytes, int32_t *labels, mnist_info *info,
                                         uint64_t digest[2], char *err) {
    char pi[MNIST_PATH_LEN], pl[MNIST_PATH_LEN];
    if (!digest) return mnist_fail_(err, MNIST_E_ARG, dir, "mnist_load_digest_into needs room for two digests");
    if (mnist_path(pi, sizeof pi, dir, split, 0) < 0 || mnist_path(pl, sizeof pl, dir, split, 1) < 0)
        return mnist_fail_(err, MNIST_E_ARG, dir, "directory name too long");
    return mnist_load_files_into_(pi, pl, limit, room, bytes ? NULL : images, bytes, labels, info, digest, err);
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_DATA_H */
