/* mnist_ckpt.h - checkpoint files of the ipupipe MNIST trainer. Public domain / MIT.
 *
 * A checkpoint holds what resuming a run needs and nothing that differs between
 * equivalent runs (no time stamps, no schedule, runner, replica or path names),
 * so two runs that end with the same weights write byte-identical files.
 *
 * The trainer writes and reads version 2 (the library's state behind a small header:
 * see the section "version 2" at the end). Version 1 below, a list of tensors, is kept
 * with its reader for its tests and fuzz target; the trainer refuses it by version.
 *
 * Format, version 1, every integer and float little-endian:
 *
 *   offset  size  field
 *        0     8  magic "IPUPCKPT"
 *        8     4  u32 format version (1)
 *       12     4  u32 number of tensors N (1..MNIST_CKPT_MAX_TENSORS)
 *       16     8  u64 step: weight updates done so far
 *       24     8  u64 seed of the run (initialisation, shuffling, dropout)
 *       32     4  u32 epochs completed
 *       36     4  u32 reserved, 0
 *       40    32  model name, NUL-padded ASCII ("mlp", "cnn", "mlp-gelu")
 *       72        N tensor records, in the order the trainer lists them:
 *                   u16  name length L (1..63), then L bytes of name (ASCII,
 *                        e.g. "dense256.w", "dense256.w.momentum", "fc1.b.adam_m")
 *                   u8   element type (1 = float32)
 *                   u8   rank r (1..4)
 *                   r x u32 dimensions (each >= 1)
 *                   prod(dims) x f32 values (IEEE-754 binary32 bits, row-major)
 *      end-4   4  u32 CRC-32 (IEEE 802.3 / zlib polynomial 0xEDB88320, reflected,
 *                 init and final xor 0xFFFFFFFF) of every byte before it
 *
 * Saving writes a temporary "<path>.XXXXXX.tmp" (a unique name, created with
 * O_EXCL|O_NOFOLLOW in <path>'s directory), fsyncs it, renames it over <path> (POSIX
 * rename is atomic) and fsyncs the directory, so a crash never leaves a half-written
 * checkpoint under <path> and two runs saving to one path never share a temporary.
 * A <path> that is not a regular file (a device, a FIFO) is refused, never replaced.
 * Loading opens the file once and reads it through that descriptor: the header
 * fields (magic, version, a printable model name, the model, the tensor count,
 * epoch and step in range), then the file size against what the expected tensors
 * imply (before any byte of the body is read: a huge sparse file costs nothing),
 * then one pass that checks every record (name, type, shape), every value (NaN or
 * infinity refused, naming the tensor) and the CRC-32 of exactly those bytes. Values
 * reach the caller's tensors only when all of that passed (mnist_ckpt_load_fd with
 * a staging buffer: even a file changed while it is read leaves them untouched).
 *
 * No heap, no stdio streams and no stdio formatting: POSIX open/read/write/fsync and
 * rename (declared in <stdio.h>) with stack buffers, messages formatted by
 * mnist_err.h, so a program may save after its startup phase without touching the
 * allocator. Thread safety: reentrant (no globals).
 *
 * Results are the library's codes (ipupipe_sched.h), each with a message naming the
 * file and what is wrong:
 *   MNIST_CKPT_OK        = IPUP_OK
 *   MNIST_CKPT_E_IO      = IPUP_ERR_IO        cannot open, read, write, rename
 *   MNIST_CKPT_E_CORRUPT = IPUP_ERR_CORRUPT   not a checkpoint or damaged: bad magic,
 *                                             bad CRC-32, truncated, bad structure
 *   MNIST_CKPT_E_MISMATCH = IPUP_ERR_MISMATCH a sound file of another format version,
 *                                             model, optimizer, tensor name or shape
 *   MNIST_CKPT_E_ARG     = IPUP_ERR_ARG       bad arguments of the caller
 *
 * Needs POSIX: define _POSIX_C_SOURCE 200809L (or _DEFAULT_SOURCE) before the
 * first #include of the translation unit when compiling with -std=c11.
 */
#ifndef MNIST_CKPT_H
#define MNIST_CKPT_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h> /* rename only */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipupipe_sched.h" /* the result codes */
#include "mnist_err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_CKPT_VERSION 1u
#define MNIST_CKPT_MAX_TENSORS 256
#define MNIST_CKPT_MAX_RANK 4
#define MNIST_CKPT_NAME_MAX 63
#define MNIST_CKPT_MODEL_LEN 32
#define MNIST_CKPT_HEADER_BYTES 72
#define MNIST_CKPT_ERR_LEN MNIST_ERR_LEN

#define MNIST_CKPT_OK IPUP_OK
#define MNIST_CKPT_E_IO IPUP_ERR_IO
#define MNIST_CKPT_E_CORRUPT IPUP_ERR_CORRUPT
#define MNIST_CKPT_E_MISMATCH IPUP_ERR_MISMATCH
#define MNIST_CKPT_E_ARG IPUP_ERR_ARG
/* earlier names: a file that is not a checkpoint is corrupt, another version a mismatch */
#define MNIST_CKPT_E_FORMAT MNIST_CKPT_E_CORRUPT
#define MNIST_CKPT_E_VERSION MNIST_CKPT_E_MISMATCH

/* One tensor: name, shape, values (float32, prod(dims) of them). */
typedef struct {
    const char *name;
    int rank;
    int dims[MNIST_CKPT_MAX_RANK];
    float *data;
} mnist_ckpt_tensor;

/* The run state besides the tensors. */
typedef struct {
    uint64_t step;
    uint64_t seed;
    uint32_t epoch;
    char model[MNIST_CKPT_MODEL_LEN];
} mnist_ckpt_meta;

/* What a result means for a checkpoint (the first words of every message). */
static inline const char *mnist_ckpt_result_str(int r) {
    switch (r) {
    case MNIST_CKPT_OK: return "ok";
    case MNIST_CKPT_E_IO: return "i/o error";
    case MNIST_CKPT_E_CORRUPT: return "corrupt checkpoint";
    case MNIST_CKPT_E_MISMATCH: return "checkpoint does not match this run";
    case MNIST_CKPT_E_ARG: return "bad argument";
    default: return "unknown result";
    }
}

/* err = "<path>: <meaning of code>: <what>" */
static inline int mnist_ckpt_fail_(char *err, int code, const char *path, const char *what) {
    return mnist_err_fail(err, code, mnist_ckpt_result_str(code), path, what);
}

/* CRC-32 (zlib), bytewise with a table built on the caller's stack. */
static inline void mnist_ckpt_crc_table_(uint32_t t[256]) {
    uint32_t i, k, c;
    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
    }
}
static inline uint32_t mnist_ckpt_crc_(const uint32_t t[256], uint32_t crc, const unsigned char *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) crc = t[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return crc;
}

static inline void mnist_ckpt_put32_(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static inline uint32_t mnist_ckpt_get32_(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint32_t mnist_ckpt_fbits_(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float mnist_ckpt_bitsf_(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Buffered writer on a file descriptor, CRC over everything written. */
typedef struct {
    int fd, failed;
    size_t n;
    uint32_t crc;
    uint32_t table[256];
    unsigned char buf[8192];
} mnist_ckpt_writer_;

static inline void mnist_ckpt_flush_(mnist_ckpt_writer_ *w) {
    size_t off = 0;
    while (!w->failed && off < w->n) {
        ssize_t k = write(w->fd, w->buf + off, w->n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) w->failed = errno ? errno : EIO;
        else off += (size_t)k;
    }
    w->n = 0;
}
static inline void mnist_ckpt_put_(mnist_ckpt_writer_ *w, const void *src, size_t n) {
    const unsigned char *p = (const unsigned char *)src;
    w->crc = mnist_ckpt_crc_(w->table, w->crc, p, n);
    while (n) {
        size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
        memcpy(w->buf + w->n, p, k);
        w->n += k;
        p += k;
        n -= k;
        if (w->n == sizeof w->buf) mnist_ckpt_flush_(w);
    }
}

/* Checks one tensor description; returns its element count or -1. */
static inline long long mnist_ckpt_count_(const mnist_ckpt_tensor *t) {
    long long c = 1;
    int i;
    size_t L;
    if (!t->name || (L = strlen(t->name)) == 0 || L > MNIST_CKPT_NAME_MAX || t->rank < 1 ||
        t->rank > MNIST_CKPT_MAX_RANK)
        return -1;
    for (i = 0; i < t->rank; i++) {
        if (t->dims[i] < 1) return -1;
        c *= t->dims[i];
        if (c > (1LL << 40)) return -1;
    }
    return c;
}

/* Header bytes of meta and n tensors into h (MNIST_CKPT_HEADER_BYTES). */
static inline void mnist_ckpt_header_bytes_(unsigned char *h, const mnist_ckpt_meta *meta, int n) {
    int i;
    memset(h, 0, MNIST_CKPT_HEADER_BYTES);
    memcpy(h, "IPUPCKPT", 8);
    mnist_ckpt_put32_(h + 8, MNIST_CKPT_VERSION);
    mnist_ckpt_put32_(h + 12, (uint32_t)n);
    mnist_ckpt_put32_(h + 16, (uint32_t)meta->step);
    mnist_ckpt_put32_(h + 20, (uint32_t)(meta->step >> 32));
    mnist_ckpt_put32_(h + 24, (uint32_t)meta->seed);
    mnist_ckpt_put32_(h + 28, (uint32_t)(meta->seed >> 32));
    mnist_ckpt_put32_(h + 32, meta->epoch);
    for (i = 0; i < MNIST_CKPT_MODEL_LEN - 1 && meta->model[i]; i++) h[40 + i] = (unsigned char)meta->model[i];
}

/* The whole file through w: header, records, CRC. */
static inline void mnist_ckpt_write_all_(mnist_ckpt_writer_ *w, const mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t,
                                         int n) {
    unsigned char h[MNIST_CKPT_HEADER_BYTES], b[8];
    int i, d;
    mnist_ckpt_header_bytes_(h, meta, n);
    mnist_ckpt_put_(w, h, sizeof h);
    for (i = 0; i < n; i++) {
        long long c = mnist_ckpt_count_(&t[i]), j;
        size_t L = strlen(t[i].name);
        b[0] = (unsigned char)L;
        b[1] = (unsigned char)(L >> 8);
        mnist_ckpt_put_(w, b, 2);
        mnist_ckpt_put_(w, t[i].name, L);
        b[0] = 1;
        b[1] = (unsigned char)t[i].rank;
        mnist_ckpt_put_(w, b, 2);
        for (d = 0; d < t[i].rank; d++) {
            mnist_ckpt_put32_(b, (uint32_t)t[i].dims[d]);
            mnist_ckpt_put_(w, b, 4);
        }
        for (j = 0; j < c; j++) {
            mnist_ckpt_put32_(b, mnist_ckpt_fbits_(t[i].data[j]));
            mnist_ckpt_put_(w, b, 4);
        }
    }
    mnist_ckpt_put32_(b, w->crc ^ 0xFFFFFFFFu);
    mnist_ckpt_put_(w, b, 4);
    mnist_ckpt_flush_(w);
}

/* 0 when path can be replaced by a rename: absent, or a regular file (a symbolic
 * link to one is replaced as a link). Otherwise -1 with what (cap bytes) saying why. */
static inline int mnist_ckpt_target_ok(const char *path, char *what, size_t cap) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        ipup_snprintf(what, cap, "cannot stat it: %s", strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode)) return 0;
    ipup_snprintf(what, cap, "it is %s, not a regular file; a checkpoint is only written to a regular file (give a "
                  "file path)", mnist_file_kind(st.st_mode));
    return -1;
}

/* Writes n tensors and meta to path, atomically: a temporary "<path>.XXXXXX.tmp" with
 * a unique name in path's directory (O_EXCL|O_NOFOLLOW: never an existing file or a
 * planted link), fsync, rename over path, fsync of the directory. A path that exists
 * and is not a regular file (a device, a FIFO, a directory) is refused, never
 * replaced. Uses about 11 KB of stack (write buffer, CRC table, names). */
static inline int mnist_ckpt_save(const char *path, const mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t, int n,
                                  char *err) {
    mnist_ckpt_writer_ w;
    char tmp[1100], what[300];
    int i;
    if (!path || !meta || !t || n < 1 || n > MNIST_CKPT_MAX_TENSORS)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "save needs a path, meta and 1..256 tensors");
    for (i = 0; i < n; i++)
        if (mnist_ckpt_count_(&t[i]) < 0 || !t[i].data) {
            ipup_snprintf(what, sizeof what, "tensor %d has a bad name, rank or shape", i);
            return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, what);
        }
    if (mnist_ckpt_target_ok(path, what, sizeof what) != 0) return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    memset(&w, 0, sizeof w);
    mnist_ckpt_crc_table_(w.table);
    w.crc = 0xFFFFFFFFu;
    w.fd = mnist_tmp_create(path, tmp, sizeof tmp);
    if (w.fd < 0) {
        ipup_snprintf(what, sizeof what, "cannot create the temporary file <path>.XXXXXX.tmp: %s (directory missing "
                      "or not writable?)", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    mnist_ckpt_write_all_(&w, meta, t, n);
    if (!w.failed && fsync(w.fd) != 0) w.failed = errno;
    if (close(w.fd) != 0 && !w.failed) w.failed = errno;
    if (!w.failed && mnist_ckpt_target_ok(path, what, sizeof what) != 0) w.failed = EEXIST;
    if (!w.failed && rename(tmp, path) != 0) w.failed = errno;
    if (w.failed) {
        unlink(tmp);
        if (w.failed == EEXIST) return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
        ipup_snprintf(what, sizeof what, "writing or renaming the temporary file failed: %s (disk full? directory "
                      "writable?)", strerror(w.failed));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    if ((i = mnist_dir_fsync(path)) != 0) {
        ipup_snprintf(what, sizeof what, "saved, but the directory could not be synced: %s", strerror(i));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    return MNIST_CKPT_OK;
}

/* ------------------------------------------------------------------ reading */

/* The largest epoch and step a checkpoint may hold (far beyond any real run; a
 * larger field is damage, refused before the program computes with it). */
#define MNIST_CKPT_MAX_EPOCH 1000000u
#define MNIST_CKPT_MAX_STEP (UINT64_C(1) << 48)

/* Buffered reader over one descriptor (pread from `off`), CRC over every byte read. */
typedef struct {
    int fd, failed;
    size_t pos, len;
    long long off; /* file offset of buf[len] */
    uint32_t crc;
    uint32_t table[256];
    unsigned char buf[8192];
} mnist_ckpt_reader_;

static inline void mnist_ckpt_reader_init_(mnist_ckpt_reader_ *r, int fd, long long off) {
    r->fd = fd;
    r->failed = 0;
    r->pos = r->len = 0;
    r->off = off;
    r->crc = 0xFFFFFFFFu;
    mnist_ckpt_crc_table_(r->table);
}

/* Reads n bytes (dst may be NULL to skip them, still in the CRC); 0, or -1 at end of
 * file or on a read error (r->failed). */
static inline int mnist_ckpt_get_(mnist_ckpt_reader_ *r, void *dst, size_t n) {
    unsigned char *p = (unsigned char *)dst;
    while (n) {
        size_t k;
        if (r->pos == r->len) {
            long long got = mnist_pread_full(r->fd, r->buf, sizeof r->buf, r->off);
            if (got <= 0) {
                if (got < 0) r->failed = errno ? errno : EIO;
                return -1;
            }
            r->pos = 0;
            r->len = (size_t)got;
            r->off += got;
        }
        k = r->len - r->pos < n ? r->len - r->pos : n;
        r->crc = mnist_ckpt_crc_(r->table, r->crc, r->buf + r->pos, k);
        if (p) {
            memcpy(p, r->buf + r->pos, k);
            p += k;
        }
        r->pos += k;
        n -= k;
    }
    return 0;
}

/* Printable ASCII (0x20..0x7e) of the first n bytes; else the index of the first other
 * byte. */
static inline int mnist_ckpt_unprintable_(const unsigned char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e) return (int)i;
    return -1;
}

/* The file size a checkpoint of the n tensors t has. */
static inline long long mnist_ckpt_file_bytes(const mnist_ckpt_tensor *t, int n) {
    long long total = MNIST_CKPT_HEADER_BYTES + 4;
    int i;
    for (i = 0; i < n; i++) total += 4 + (long long)strlen(t[i].name) + 4LL * t[i].rank + 4 * mnist_ckpt_count_(&t[i]);
    return total;
}

/* Checks the 72-byte header h of a file of fsize bytes and fills *meta from it (model,
 * step, seed, epoch). 0, or a code with what (cap bytes) saying why. */
static inline int mnist_ckpt_check_header_(const unsigned char *h, long long fsize, mnist_ckpt_meta *meta, char *what,
                                           size_t cap) {
    uint32_t ver = mnist_ckpt_get32_(h + 8);
    size_t L;
    if (fsize < MNIST_CKPT_HEADER_BYTES + 4) {
        ipup_snprintf(what, cap, "only %lld bytes, shorter than a checkpoint header", fsize);
        return MNIST_CKPT_E_CORRUPT;
    }
    if (memcmp(h, "IPUPCKPT", 8) != 0) {
        ipup_snprintf(what, cap, "the magic is not IPUPCKPT (not written by --save)");
        return MNIST_CKPT_E_CORRUPT;
    }
    if (ver != MNIST_CKPT_VERSION) {
        ipup_snprintf(what, cap, "version %u, this program reads version %u", ver, MNIST_CKPT_VERSION);
        return MNIST_CKPT_E_MISMATCH;
    }
    for (L = 0; L < MNIST_CKPT_MODEL_LEN && h[40 + L]; L++) {}
    if (L == MNIST_CKPT_MODEL_LEN || mnist_ckpt_unprintable_(h + 40, L) >= 0) {
        ipup_snprintf(what, cap, "the model name field (offset 40) %s", L == MNIST_CKPT_MODEL_LEN ? "has no NUL end"
                      : "holds a byte that is not printable ASCII");
        return MNIST_CKPT_E_CORRUPT;
    }
    memset(meta, 0, sizeof *meta);
    memcpy(meta->model, h + 40, L);
    meta->step = (uint64_t)mnist_ckpt_get32_(h + 16) | ((uint64_t)mnist_ckpt_get32_(h + 20) << 32);
    meta->seed = (uint64_t)mnist_ckpt_get32_(h + 24) | ((uint64_t)mnist_ckpt_get32_(h + 28) << 32);
    meta->epoch = mnist_ckpt_get32_(h + 32);
    if (meta->epoch > MNIST_CKPT_MAX_EPOCH || meta->step > MNIST_CKPT_MAX_STEP) {
        ipup_snprintf(what, cap, "header field %s is %llu, above the limit %llu (damaged file?)",
                      meta->epoch > MNIST_CKPT_MAX_EPOCH ? "epoch" : "step",
                      meta->epoch > MNIST_CKPT_MAX_EPOCH ? (unsigned long long)meta->epoch : (unsigned long long)meta->step,
                      meta->epoch > MNIST_CKPT_MAX_EPOCH ? (unsigned long long)MNIST_CKPT_MAX_EPOCH
                                                         : (unsigned long long)MNIST_CKPT_MAX_STEP);
        return MNIST_CKPT_E_CORRUPT;
    }
    return MNIST_CKPT_OK;
}

/* Opens path once for reading (a regular file; a FIFO, directory or device is refused
 * without blocking): the descriptor (the caller closes it), or -1 after a message. */
static inline int mnist_ckpt_open(const char *path, char *err) {
    char what[300];
    struct stat st;
    int fd = mnist_open_input(path, "a checkpoint file (written by --save)", &st, what, sizeof what);
    if (fd < 0) mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    return fd;
}

/* The header of the checkpoint open on fd (named path in messages) into *meta. */
static inline int mnist_ckpt_peek_fd(int fd, const char *path, mnist_ckpt_meta *meta, char *err) {
    unsigned char h[MNIST_CKPT_HEADER_BYTES];
    char what[300];
    struct stat st;
    long long got;
    int code;
    if (fstat(fd, &st) != 0) {
        ipup_snprintf(what, sizeof what, "cannot stat it: %s", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    memset(h, 0, sizeof h);
    got = mnist_pread_full(fd, h, sizeof h, 0);
    if (got < 0) {
        ipup_snprintf(what, sizeof what, "read failed: %s", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    code = mnist_ckpt_check_header_(h, got < (long long)sizeof h ? got : (long long)st.st_size, meta, what, sizeof what);
    if (code != MNIST_CKPT_OK) return mnist_ckpt_fail_(err, code, path, what);
    return MNIST_CKPT_OK;
}

/* A file whose size is not what the tensors t make: a walk over its record headers
 * (pread, no data read, no CRC) names the first tensor that differs, else the size.
 * Always returns a code after a message. */
static inline int mnist_ckpt_walk_(int fd, long long fsize, const char *path, const mnist_ckpt_tensor *t, int n,
                                   char *err) {
    unsigned char b[4 + MNIST_CKPT_NAME_MAX + 4 * MNIST_CKPT_MAX_RANK];
    char what[400];
    long long off = MNIST_CKPT_HEADER_BYTES, want = mnist_ckpt_file_bytes(t, n), body = fsize - 4;
    int i, d, code = MNIST_CKPT_E_CORRUPT;
    for (i = 0; i < n; i++) {
        size_t L = strlen(t[i].name), rec = 4 + L + 4 * (size_t)t[i].rank;
        uint32_t fl;
        if (off + 2 > body || mnist_pread_full(fd, b, 2, off) != 2) break;
        fl = (uint32_t)b[0] | ((uint32_t)b[1] << 8);
        if (fl == L && (off + (long long)rec > body || mnist_pread_full(fd, b, rec, off) != (long long)rec)) break;
        if (fl != L || memcmp(b + 2, t[i].name, L) != 0) {
            code = MNIST_CKPT_E_MISMATCH;
            if (fl == 0 || fl > MNIST_CKPT_NAME_MAX || off + 2 + fl > body ||
                mnist_pread_full(fd, b + 2, fl, off + 2) != (long long)fl || mnist_ckpt_unprintable_(b + 2, fl) >= 0)
                ipup_snprintf(what, sizeof what, "tensor %d has a damaged name (damaged or truncated file)", i), code = MNIST_CKPT_E_CORRUPT;
            else
                ipup_snprintf(what, sizeof what, "tensor %d is '%.*s', this run expects '%s' (another --optimizer?)", i,
                              (int)fl, (const char *)(b + 2), t[i].name);
            return mnist_ckpt_fail_(err, code, path, what);
        }
        if ((int)b[3 + L] != t[i].rank) {
            ipup_snprintf(what, sizeof what, "tensor %s has rank %u, this model expects %d", t[i].name, b[3 + L], t[i].rank);
            return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
        }
        for (d = 0; d < t[i].rank; d++)
            if (mnist_ckpt_get32_(b + 4 + L + 4 * d) != (uint32_t)t[i].dims[d]) {
                ipup_snprintf(what, sizeof what, "tensor %s dimension %d is %u, this model expects %d", t[i].name, d,
                              mnist_ckpt_get32_(b + 4 + L + 4 * d), t[i].dims[d]);
                return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
            }
        off += (long long)rec + 4 * mnist_ckpt_count_(&t[i]);
        if (off > body) {
            ipup_snprintf(what, sizeof what, "truncated in tensor %s: the file is %lld bytes, these tensors make %lld "
                          "(damaged or truncated file)", t[i].name, fsize, want);
            return mnist_ckpt_fail_(err, code, path, what);
        }
    }
    if (fsize < want)
        ipup_snprintf(what, sizeof what, "truncated at tensor %d: the file is %lld bytes, these tensors make %lld "
                      "(damaged or truncated file)", i, fsize, want);
    else
        ipup_snprintf(what, sizeof what, "the file is %lld bytes, these tensors make %lld: %lld unexpected bytes after "
                      "the last tensor", fsize, want, fsize - want);
    return mnist_ckpt_fail_(err, code, path, what);
}

/* The floats a staging buffer of mnist_ckpt_load_fd needs for the tensors t. */
static inline long long mnist_ckpt_stage_floats(const mnist_ckpt_tensor *t, int n) {
    long long c = 0;
    int i;
    for (i = 0; i < n; i++) c += mnist_ckpt_count_(&t[i]);
    return c;
}

/* One record (tensor i) through r: the name, type and shape compared with t (first
 * difference into what, *code set), the values checked finite, stored into dst when
 * it is not NULL. 0, or -1 when the file ends early. */
static inline int mnist_ckpt_scan_one_(mnist_ckpt_reader_ *r, const mnist_ckpt_tensor *t, int i, float *dst, int *code,
                                       char *what, size_t cap) {
    unsigned char b[MNIST_CKPT_NAME_MAX + 4];
    size_t L = strlen(t->name);
    long long c = mnist_ckpt_count_(t), j;
    int d;
    if (mnist_ckpt_get_(r, b, 2 + L) != 0) return -1;
    if (*code == MNIST_CKPT_OK && ((size_t)((uint32_t)b[0] | ((uint32_t)b[1] << 8)) != L || memcmp(b + 2, t->name, L))) {
        *code = MNIST_CKPT_E_MISMATCH;
        ipup_snprintf(what, cap, "tensor %d is not '%s' as this run expects (another --optimizer?)", i, t->name);
    }
    if (mnist_ckpt_get_(r, b, 2) != 0) return -1;
    if (*code == MNIST_CKPT_OK && (b[0] != 1 || (int)b[1] != t->rank)) {
        *code = b[0] != 1 ? MNIST_CKPT_E_CORRUPT : MNIST_CKPT_E_MISMATCH;
        if (b[0] != 1) ipup_snprintf(what, cap, "tensor %s: element type %u, expected 1 (float32)", t->name, b[0]);
        else ipup_snprintf(what, cap, "tensor %s has rank %u, this model expects %d", t->name, b[1], t->rank);
    }
    for (d = 0; d < t->rank; d++) {
        uint32_t dim;
        if (mnist_ckpt_get_(r, b, 4) != 0) return -1;
        dim = mnist_ckpt_get32_(b);
        if (*code == MNIST_CKPT_OK && dim != (uint32_t)t->dims[d]) {
            *code = MNIST_CKPT_E_MISMATCH;
            ipup_snprintf(what, cap, "tensor %s dimension %d is %u, this model expects %d", t->name, d, dim, t->dims[d]);
        }
    }
    for (j = 0; j < c; j++) {
        float v;
        if (mnist_ckpt_get_(r, b, 4) != 0) return -1;
        v = mnist_ckpt_bitsf_(mnist_ckpt_get32_(b));
        if (*code == MNIST_CKPT_OK && !(v - v == 0.0f)) {
            *code = MNIST_CKPT_E_CORRUPT;
            ipup_snprintf(what, cap, "tensor %s holds %s at element %lld (a run that diverged? resume from an earlier "
                          "checkpoint)", t->name, v != v ? "NaN" : "an infinity", j);
        }
        if (dst) dst[j] = v;
    }
    return 0;
}

/* One pass over a file of exactly the size of t, from offset 0 through one reader:
 * its header must be the bytes h0 read before, every byte is in the CRC, every
 * record is compared with t. dst: NULL (check only), stage (values one tensor after
 * another) or, with into_tensors, t[i].data. Returns the code after a message. */
static inline int mnist_ckpt_scan_(int fd, const char *path, const unsigned char *h0, const mnist_ckpt_tensor *t, int n,
                                   float *stage, int into_tensors, uint32_t *crc_out, char *err) {
    mnist_ckpt_reader_ r;
    unsigned char h[MNIST_CKPT_HEADER_BYTES], b[4];
    char what[400];
    int i, code = MNIST_CKPT_OK;
    uint32_t crc_file;
    mnist_ckpt_reader_init_(&r, fd, 0);
    if (mnist_ckpt_get_(&r, h, sizeof h) != 0 || memcmp(h, h0, sizeof h) != 0)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, "the file changed while it was read");
    for (i = 0; i < n; i++) {
        float *dst = into_tensors ? t[i].data : stage;
        if (mnist_ckpt_scan_one_(&r, &t[i], i, dst, &code, what, sizeof what) != 0) {
            ipup_snprintf(what, sizeof what, "truncated in tensor %s (the file changed while it was read?)%s%s", t[i].name,
                          r.failed ? ": " : "", r.failed ? strerror(r.failed) : "");
            return mnist_ckpt_fail_(err, r.failed ? MNIST_CKPT_E_IO : MNIST_CKPT_E_CORRUPT, path, what);
        }
        if (stage) stage += mnist_ckpt_count_(&t[i]);
    }
    *crc_out = r.crc ^ 0xFFFFFFFFu;
    r.crc = 0;
    if (mnist_ckpt_get_(&r, b, 4) != 0)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, "truncated in the CRC (the file changed while it was read?)");
    crc_file = mnist_ckpt_get32_(b);
    if (crc_file != *crc_out) {
        ipup_snprintf(what, sizeof what, "CRC-32 is %08x but the contents give %08x (damaged or truncated file)", crc_file,
                      *crc_out);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    if (code != MNIST_CKPT_OK) return mnist_ckpt_fail_(err, code, path, what);
    return MNIST_CKPT_OK;
}

/* Loads the checkpoint open on fd (named path in messages; mnist_ckpt_open) into the n
 * tensors t (names, order and shapes must match) after checking all of it: header
 * fields, the model (meta->model), the tensor count, the file size against what t
 * implies (before any byte of the body is read), then one pass that checks every
 * record and value (NaN or infinity refused with the tensor's name) and the CRC-32 of
 * exactly the bytes used. With stage (mnist_ckpt_stage_floats floats) that pass
 * stores the values there and they are copied into t only when everything passed: a
 * refused file leaves the tensors untouched even if it changes while it is read.
 * Without stage a second pass over the same descriptor stores them and must give the
 * same CRC (a file changed in place between the passes is refused, the tensors then
 * partly written). On success meta->step, seed and epoch are set from the file. */
static inline int mnist_ckpt_load_fd(int fd, const char *path, mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t, int n,
                                     float *stage, char *err) {
    unsigned char h[MNIST_CKPT_HEADER_BYTES];
    char what[300];
    mnist_ckpt_meta fm;
    struct stat st;
    uint32_t crc1 = 0, crc2 = 0, nt;
    int i, r;
    if (!path || !meta || !t || n < 1 || n > MNIST_CKPT_MAX_TENSORS)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "load needs a path, meta and 1..256 tensors");
    for (i = 0; i < n; i++)
        if (mnist_ckpt_count_(&t[i]) < 0 || !t[i].data)
            return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "a tensor has a bad name, rank or shape");
    if ((r = mnist_ckpt_peek_fd(fd, path, &fm, err)) != MNIST_CKPT_OK) return r;
    if (fstat(fd, &st) != 0 || mnist_pread_full(fd, h, sizeof h, 0) != (long long)sizeof h)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, "read failed in the header");
    if (strncmp(fm.model, meta->model, MNIST_CKPT_MODEL_LEN) != 0) {
        ipup_snprintf(what, sizeof what, "it holds model '%s', this run trains '%s' (use --model %s)", fm.model,
                      meta->model, fm.model);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    if ((nt = mnist_ckpt_get32_(h + 12)) != (uint32_t)n) {
        ipup_snprintf(what, sizeof what, "it holds %u tensors, this run has %d (another --optimizer than the saved run?)",
                      nt, n);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    if ((long long)st.st_size != mnist_ckpt_file_bytes(t, n)) return mnist_ckpt_walk_(fd, (long long)st.st_size, path, t, n, err);
    if ((r = mnist_ckpt_scan_(fd, path, h, t, n, stage, 0, &crc1, err)) != MNIST_CKPT_OK) return r;
    if (stage) {
        for (i = 0; i < n; i++) {
            size_t c = (size_t)mnist_ckpt_count_(&t[i]);
            memcpy(t[i].data, stage, c * sizeof(float));
            stage += c;
        }
    } else {
        if ((r = mnist_ckpt_scan_(fd, path, h, t, n, NULL, 1, &crc2, err)) != MNIST_CKPT_OK) return r;
        if (crc2 != crc1)
            return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, "the file changed while it was read");
    }
    meta->step = fm.step;
    meta->seed = fm.seed;
    meta->epoch = fm.epoch;
    return MNIST_CKPT_OK;
}

/* Reads only the header of path into *meta (model, step, seed, epoch: each field
 * checked); the full checks are mnist_ckpt_load's. A program that sets itself up from
 * the header and loads later should keep one descriptor (mnist_ckpt_open,
 * mnist_ckpt_peek_fd, mnist_ckpt_load_fd) so that both read the same file. */
static inline int mnist_ckpt_peek(const char *path, mnist_ckpt_meta *meta, char *err) {
    int fd, r;
    if (!path || !meta) return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "peek needs a path and meta");
    if ((fd = mnist_ckpt_open(path, err)) < 0) return MNIST_CKPT_E_IO;
    r = mnist_ckpt_peek_fd(fd, path, meta, err);
    close(fd);
    return r;
}

/* mnist_ckpt_load_fd on path, opened once, without a staging buffer. */
static inline int mnist_ckpt_load(const char *path, mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t, int n,
                                  char *err) {
    int fd, r;
    if (!path || !meta || !t || n < 1 || n > MNIST_CKPT_MAX_TENSORS)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "load needs a path, meta and 1..256 tensors");
    if ((fd = mnist_ckpt_open(path, err)) < 0) return MNIST_CKPT_E_IO;
    r = mnist_ckpt_load_fd(fd, path, meta, t, n, NULL, err);
    close(fd);
    return r;
}

/* ------------------------------------------------------------------ version 2: the
 * emulator's state (ipup_state_save of ipupipe.h, docs/state.md) behind a small trainer
 * header. Available when ipupipe.h is included before this header.
 *
 *   offset  size  field (little-endian)
 *        0     8  magic "IPUPCKPT"
 *        8     4  u32 format version (2)
 *       12     4  u32 reserved, 0
 *       16     8  u64 seed of the run (initialisation, shuffling, dropout)
 *       24     4  u32 epochs completed
 *       28     4  u32 reserved, 0
 *       32    32  model name, NUL-padded ASCII ("mlp", "cnn", "mlp-gelu")
 *       64     4  u32 CRC-32 (the library's, docs/state.md) of bytes 0..63
 *       68        the library's state stream: parameters, optimizer state, step, its own
 *                 magic, version, descriptor and CRC-32; the file ends with it
 *
 * Saving streams the state through a write callback into the temporary file (8 KB
 * writes), then fsync, rename and directory fsync as above. Loading reads it through a
 * pread callback; everything the library checks is checked before anything is applied
 * (docs/state.md), so a refused file leaves the emulator as it was. A version-1 file
 * (the tensor list of earlier versions) is refused with a "version" message. */
#ifdef IPUPIPE_H
#define MNIST_CKPT_STATE_VERSION 2u
#define MNIST_CKPT_STATE_HEAD 68

/* CRC-32 of the trainer header's first 64 bytes */
static inline uint32_t mnist_ckpt_head_crc_(const unsigned char *h) {
    uint32_t t[256];
    mnist_ckpt_crc_table_(t);
    return mnist_ckpt_crc_(t, 0xFFFFFFFFu, h, 64) ^ 0xFFFFFFFFu;
}

/* The trainer header of meta into h (MNIST_CKPT_STATE_HEAD bytes). */
static inline void mnist_ckpt_state_head_(unsigned char *h, const mnist_ckpt_meta *meta) {
    int i;
    memset(h, 0, MNIST_CKPT_STATE_HEAD);
    memcpy(h, "IPUPCKPT", 8);
    mnist_ckpt_put32_(h + 8, MNIST_CKPT_STATE_VERSION);
    mnist_ckpt_put32_(h + 16, (uint32_t)meta->seed);
    mnist_ckpt_put32_(h + 20, (uint32_t)(meta->seed >> 32));
    mnist_ckpt_put32_(h + 24, meta->epoch);
    for (i = 0; i < MNIST_CKPT_MODEL_LEN - 1 && meta->model[i]; i++) h[32 + i] = (unsigned char)meta->model[i];
    mnist_ckpt_put32_(h + 64, mnist_ckpt_head_crc_(h));
}

/* ipup_write_fn over the buffered file writer (its CRC is not used here) */
static inline int mnist_ckpt_state_put_(void *user, const void *data, size_t len) {
    mnist_ckpt_writer_ *w = (mnist_ckpt_writer_ *)user;
    mnist_ckpt_put_(w, data, len);
    return w->failed ? -1 : 0;
}

/* Writes meta and the state of e to path, atomically (as mnist_ckpt_save). */
static inline int mnist_ckpt_save_state(const char *path, const mnist_ckpt_meta *meta, ipup_emu *e, char *err) {
    mnist_ckpt_writer_ w;
    unsigned char h[MNIST_CKPT_STATE_HEAD];
    char tmp[1100], what[300];
    int i, rc = IPUP_OK;
    if (!path || !meta || !e || !ipup_state_bytes(e))
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "save needs a path, meta and an initialised emulator");
    if (mnist_ckpt_target_ok(path, what, sizeof what) != 0) return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    memset(&w, 0, sizeof w);
    mnist_ckpt_crc_table_(w.table);
    w.fd = mnist_tmp_create(path, tmp, sizeof tmp);
    if (w.fd < 0) {
        ipup_snprintf(what, sizeof what, "cannot create the temporary file <path>.XXXXXX.tmp: %s (directory missing "
                      "or not writable?)", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    mnist_ckpt_state_head_(h, meta);
    mnist_ckpt_put_(&w, h, sizeof h);
    if (!w.failed) rc = ipup_state_save(e, mnist_ckpt_state_put_, &w);
    if (!w.failed) mnist_ckpt_flush_(&w);
    if (!w.failed && rc != IPUP_OK) w.failed = EIO;
    if (!w.failed && fsync(w.fd) != 0) w.failed = errno;
    if (close(w.fd) != 0 && !w.failed) w.failed = errno;
    if (!w.failed && mnist_ckpt_target_ok(path, what, sizeof what) != 0) w.failed = EEXIST;
    if (!w.failed && rename(tmp, path) != 0) w.failed = errno;
    if (w.failed) {
        unlink(tmp);
        if (w.failed == EEXIST) return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
        ipup_snprintf(what, sizeof what, "writing or renaming the temporary file failed: %s (disk full? directory "
                      "writable?)", strerror(w.failed));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    if ((i = mnist_dir_fsync(path)) != 0) {
        ipup_snprintf(what, sizeof what, "saved, but the directory could not be synced: %s", strerror(i));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    return MNIST_CKPT_OK;
}

/* The trainer header of the file open on fd into *meta (model, seed, epoch; step from
 * the state's header, checked by the load). */
static inline int mnist_ckpt_peek_state_fd(int fd, const char *path, mnist_ckpt_meta *meta, char *err) {
    unsigned char h[MNIST_CKPT_STATE_HEAD + 32];
    char what[300];
    long long got;
    uint32_t v;
    size_t L;
    memset(h, 0, sizeof h);
    if ((got = mnist_pread_full(fd, h, sizeof h, 0)) < 0) {
        ipup_snprintf(what, sizeof what, "read failed: %s", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    if (got >= 12 && memcmp(h, "IPUPCKPT", 8) == 0 && (v = mnist_ckpt_get32_(h + 8)) != MNIST_CKPT_STATE_VERSION) {
        ipup_snprintf(what, sizeof what, "version %u%s, this program reads version %u (train again, or resume with "
                      "the program that wrote it)", v, v == 1 ? " (the tensor list of ipupipe 0.4.0 and earlier)" : "",
                      MNIST_CKPT_STATE_VERSION);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    if (got < MNIST_CKPT_STATE_HEAD) {
        ipup_snprintf(what, sizeof what, "only %lld bytes, shorter than a checkpoint header", got);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    if (memcmp(h, "IPUPCKPT", 8) != 0)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, "the magic is not IPUPCKPT (not written by --save)");
    if (mnist_ckpt_get32_(h + 64) != mnist_ckpt_head_crc_(h))
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, "the CRC-32 of the header does not match (damaged file)");
    for (L = 0; L < MNIST_CKPT_MODEL_LEN && h[32 + L]; L++) {}
    if (L == MNIST_CKPT_MODEL_LEN || mnist_ckpt_unprintable_(h + 32, L) >= 0) {
        ipup_snprintf(what, sizeof what, "the model name field (offset 32) %s", L == MNIST_CKPT_MODEL_LEN
                      ? "has no NUL end" : "holds a byte that is not printable ASCII");
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    if ((v = mnist_ckpt_get32_(h + 24)) > MNIST_CKPT_MAX_EPOCH) {
        ipup_snprintf(what, sizeof what, "header field epoch is %u, above the limit %u (damaged file?)", v,
                      MNIST_CKPT_MAX_EPOCH);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    memset(meta, 0, sizeof *meta);
    memcpy(meta->model, h + 32, L);
    meta->seed = (uint64_t)mnist_ckpt_get32_(h + 16) | ((uint64_t)mnist_ckpt_get32_(h + 20) << 32);
    meta->epoch = mnist_ckpt_get32_(h + 24);
    if (got >= MNIST_CKPT_STATE_HEAD + 32)
        meta->step = (uint64_t)mnist_ckpt_get32_(h + 68 + 24) | ((uint64_t)mnist_ckpt_get32_(h + 68 + 28) << 32);
    return MNIST_CKPT_OK;
}

/* ipup_read_fn over a descriptor: the bytes at MNIST_CKPT_STATE_HEAD + offset */
typedef struct mnist_ckpt_src_ {
    int fd, err;
} mnist_ckpt_src_;
static inline int mnist_ckpt_state_get_(void *user, uint64_t offset, void *data, size_t len) {
    mnist_ckpt_src_ *s = (mnist_ckpt_src_ *)user;
    long long got = mnist_pread_full(s->fd, data, len, MNIST_CKPT_STATE_HEAD + (long long)offset);
    if (got < 0) s->err = errno ? errno : EIO;
    return got == (long long)len ? 0 : got < 0 ? -1 : IPUP_STATE_END;
}

/* Loads the file open on fd into e: the header (model meta->model expected), then
 * ipup_state_load (all checks before anything is applied); no byte may follow the
 * state. On success meta gets the file's seed, epoch and step (e's step is set). */
static inline int mnist_ckpt_load_state_fd(int fd, const char *path, mnist_ckpt_meta *meta, ipup_emu *e, char *err) {
    mnist_ckpt_meta fm;
    mnist_ckpt_src_ src;
    unsigned char b[8];
    char what[900];
    struct stat st;
    const char *m;
    long long T;
    int rc;
    if (!path || !meta || !e) return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "load needs a path, meta and an emulator");
    if ((rc = mnist_ckpt_peek_state_fd(fd, path, &fm, err)) != MNIST_CKPT_OK) return rc;
    if (strncmp(fm.model, meta->model, MNIST_CKPT_MODEL_LEN) != 0) {
        ipup_snprintf(what, sizeof what, "it holds model '%s', this run trains '%s' (use --model %s)", fm.model,
                      meta->model, fm.model);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    if (fstat(fd, &st) == 0 && mnist_pread_full(fd, b, 8, MNIST_CKPT_STATE_HEAD + 16) == 8 &&
        mnist_ckpt_get32_(b + 4) == 0 && (T = (long long)mnist_ckpt_get32_(b)) > 0 &&
        (long long)st.st_size > MNIST_CKPT_STATE_HEAD + T) {
        ipup_snprintf(what, sizeof what, "%lld unexpected bytes after the state (damaged file?)",
                      (long long)st.st_size - MNIST_CKPT_STATE_HEAD - T);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    src.fd = fd;
    src.err = 0;
    if ((rc = ipup_state_load(e, mnist_ckpt_state_get_, &src)) != IPUP_OK) {
        m = ipup_last_error(e);
        if (strncmp(m, "ipup_state_load: ", 17) == 0) m += 17;
        ipup_snprintf(what, sizeof what, "%s%s%s", m, src.err ? ": " : "", src.err ? strerror(src.err) : "");
        return mnist_ckpt_fail_(err, rc, path, what);
    }
    meta->seed = fm.seed;
    meta->epoch = fm.epoch;
    meta->step = (uint64_t)ipup_get_step(e);
    return MNIST_CKPT_OK;
}
#endif /* IPUPIPE_H */
#ifdef __cplusplus
}
#endif
#endif /* MNIST_CKPT_H */
