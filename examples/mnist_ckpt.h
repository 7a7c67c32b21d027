/* mnist_ckpt.h - checkpoint files of the ipupipe MNIST trainer. Public domain / MIT.
 *
 * A checkpoint holds what resuming a run needs and nothing that differs between
 * equivalent runs (no time stamps, no schedule, runner, replica or path names),
 * so two runs that end with the same weights write byte-identical files.
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
 * Saving writes "<path>.tmp", fsyncs it and renames it over <path> (POSIX rename
 * is atomic), so a crash never leaves a half-written checkpoint under <path>.
 * Loading reads the file twice: the first pass checks the size, magic, version,
 * CRC, model name and every tensor's name, type and shape against what the
 * caller expects; only then does the second pass copy values into the caller's
 * tensors, so a refused file leaves them untouched.
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

/* Writes n tensors and meta to path, atomically (path.tmp + fsync + rename).
 * Uses about 10 KB of stack (write buffer and CRC table). */
static inline int mnist_ckpt_save(const char *path, const mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t, int n,
                                  char *err) {
    mnist_ckpt_writer_ w;
    char tmp[1100], what[200];
    unsigned char h[MNIST_CKPT_HEADER_BYTES], b[8];
    int i, d;
    if (!path || !meta || !t || n < 1 || n > MNIST_CKPT_MAX_TENSORS)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "save needs a path, meta and 1..256 tensors");
    for (i = 0; i < n; i++)
        if (mnist_ckpt_count_(&t[i]) < 0 || !t[i].data) {
            ipup_snprintf(what, sizeof what, "tensor %d has a bad name, rank or shape", i);
            return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, what);
        }
    if (strlen(path) + 5 > sizeof tmp) return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "path too long");
    strcpy(tmp, path);
    strcat(tmp, ".tmp");
    memset(&w, 0, sizeof w);
    mnist_ckpt_crc_table_(w.table);
    w.crc = 0xFFFFFFFFu;
    w.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (w.fd < 0) {
        ipup_snprintf(what, sizeof what, "cannot create the temporary file <path>.tmp: %s (directory missing or not writable?)",
                 strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    memset(h, 0, sizeof h);
    memcpy(h, "IPUPCKPT", 8);
    mnist_ckpt_put32_(h + 8, MNIST_CKPT_VERSION);
    mnist_ckpt_put32_(h + 12, (uint32_t)n);
    mnist_ckpt_put32_(h + 16, (uint32_t)meta->step);
    mnist_ckpt_put32_(h + 20, (uint32_t)(meta->step >> 32));
    mnist_ckpt_put32_(h + 24, (uint32_t)meta->seed);
    mnist_ckpt_put32_(h + 28, (uint32_t)(meta->seed >> 32));
    mnist_ckpt_put32_(h + 32, meta->epoch);
    for (i = 0; i < MNIST_CKPT_MODEL_LEN - 1 && meta->model[i]; i++) h[40 + i] = (unsigned char)meta->model[i];
    mnist_ckpt_put_(&w, h, sizeof h);
    for (i = 0; i < n; i++) {
        long long c = mnist_ckpt_count_(&t[i]), j;
        size_t L = strlen(t[i].name);
        b[0] = (unsigned char)L;
        b[1] = (unsigned char)(L >> 8);
        mnist_ckpt_put_(&w, b, 2);
        mnist_ckpt_put_(&w, t[i].name, L);
        b[0] = 1;
        b[1] = (unsigned char)t[i].rank;
        mnist_ckpt_put_(&w, b, 2);
        for (d = 0; d < t[i].rank; d++) {
            mnist_ckpt_put32_(b, (uint32_t)t[i].dims[d]);
            mnist_ckpt_put_(&w, b, 4);
        }
        for (j = 0; j < c; j++) {
            mnist_ckpt_put32_(b, mnist_ckpt_fbits_(t[i].data[j]));
            mnist_ckpt_put_(&w, b, 4);
        }
    }
    mnist_ckpt_put32_(b, w.crc ^ 0xFFFFFFFFu);
    mnist_ckpt_put_(&w, b, 4);
    mnist_ckpt_flush_(&w);
    if (!w.failed && fsync(w.fd) != 0) w.failed = errno;
    if (close(w.fd) != 0 && !w.failed) w.failed = errno;
    if (!w.failed && rename(tmp, path) != 0) w.failed = errno;
    if (w.failed) {
        unlink(tmp);
        ipup_snprintf(what, sizeof what, "writing or renaming the temporary file failed: %s (disk full? directory writable?)",
                 strerror(w.failed));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    return MNIST_CKPT_OK;
}

/* Buffered reader. */
typedef struct {
    int fd, failed;
    size_t pos, len;
    long long total; /* bytes consumed */
    uint32_t crc;
    uint32_t table[256];
    unsigned char buf[8192];
} mnist_ckpt_reader_;

/* Reads n bytes (dst may be NULL to skip); returns 0 or -1 at end of file. */
static inline int mnist_ckpt_get_(mnist_ckpt_reader_ *r, void *dst, size_t n, int crc) {
    unsigned char *p = (unsigned char *)dst;
    while (n) {
        size_t k;
        if (r->pos == r->len) {
            ssize_t got;
            do got = read(r->fd, r->buf, sizeof r->buf);
            while (got < 0 && errno == EINTR);
            if (got <= 0) {
                if (got < 0) r->failed = errno;
                return -1;
            }
            r->pos = 0;
            r->len = (size_t)got;
        }
        k = r->len - r->pos < n ? r->len - r->pos : n;
        if (crc) r->crc = mnist_ckpt_crc_(r->table, r->crc, r->buf + r->pos, k);
        if (p) {
            memcpy(p, r->buf + r->pos, k);
            p += k;
        }
        r->pos += k;
        r->total += (long long)k;
        n -= k;
    }
    return 0;
}

/* One pass over the file. copy = 0: check everything against meta/t (meta->model
 * must match, tensors must match in order, names, type and shape); copy = 1: also
 * store values into t[i].data. */
static inline int mnist_ckpt_pass_(const char *path, mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t, int n,
                                   int copy, char *err) {
    mnist_ckpt_reader_ r;
    unsigned char h[MNIST_CKPT_HEADER_BYTES], b[8];
    char what[400], name[MNIST_CKPT_NAME_MAX + 1], model[MNIST_CKPT_MODEL_LEN];
    struct stat st;
    uint32_t ver, nt, crc_file, crc_calc;
    int i, d, code = MNIST_CKPT_OK;
    memset(&r, 0, sizeof r);
    mnist_ckpt_crc_table_(r.table);
    r.crc = 0xFFFFFFFFu;
    r.fd = open(path, O_RDONLY);
    if (r.fd < 0) {
        ipup_snprintf(what, sizeof what, "cannot open it: %s", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
#define MNIST_CKPT_BAIL_(c, ...)                                                                                       \
    do {                                                                                                               \
        ipup_snprintf(what, sizeof what, __VA_ARGS__);                                                                      \
        code = (c);                                                                                                    \
        goto done;                                                                                                     \
    } while (0)
    if (fstat(r.fd, &st) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_IO, "cannot stat it: %s", strerror(errno));
    if (st.st_size < MNIST_CKPT_HEADER_BYTES + 4 || mnist_ckpt_get_(&r, h, sizeof h, 1) != 0)
        MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "only %lld bytes, shorter than a checkpoint header",
                         (long long)st.st_size);
    if (memcmp(h, "IPUPCKPT", 8) != 0)
        MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "the magic is not IPUPCKPT (not written by --save)");
    ver = mnist_ckpt_get32_(h + 8);
    if (ver != MNIST_CKPT_VERSION)
        MNIST_CKPT_BAIL_(MNIST_CKPT_E_MISMATCH, "version %u, this program reads version %u", ver, MNIST_CKPT_VERSION);
    /* The CRC first (a corrupt file is reported as corrupt, not as a mismatch). */
    if (!copy) {
        long long body = (long long)st.st_size - 4 - (long long)sizeof h;
        while (body > 0) {
            size_t k = body > (long long)sizeof b ? sizeof b : (size_t)body;
            if (mnist_ckpt_get_(&r, NULL, k, 1) != 0) break;
            body -= (long long)k;
        }
        if (mnist_ckpt_get_(&r, b, 4, 0) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_IO, "read failed");
        crc_file = mnist_ckpt_get32_(b);
        crc_calc = r.crc ^ 0xFFFFFFFFu;
        if (crc_file != crc_calc)
            MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "CRC-32 is %08x but the contents give %08x (damaged or truncated file)",
                             crc_file, crc_calc);
        if (lseek(r.fd, (off_t)sizeof h, SEEK_SET) != (off_t)sizeof h) MNIST_CKPT_BAIL_(MNIST_CKPT_E_IO, "seek failed");
        r.pos = r.len = 0;
        r.total = (long long)sizeof h;
    }
    memcpy(model, h + 40, MNIST_CKPT_MODEL_LEN);
    model[MNIST_CKPT_MODEL_LEN - 1] = 0;
    if (strncmp(model, meta->model, MNIST_CKPT_MODEL_LEN) != 0)
        MNIST_CKPT_BAIL_(MNIST_CKPT_E_MISMATCH, "it holds model '%s', this run trains '%s' (use --model %s)", model,
                         meta->model, model);
    nt = mnist_ckpt_get32_(h + 12);
    if (nt != (uint32_t)n)
        MNIST_CKPT_BAIL_(MNIST_CKPT_E_MISMATCH,
                         "it holds %u tensors, this run has %d (another --optimizer than the saved run?)", nt, n);
    for (i = 0; i < n; i++) {
        uint32_t L, dim;
        long long c = mnist_ckpt_count_(&t[i]), j;
        if (mnist_ckpt_get_(&r, b, 2, 0) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "truncated at tensor %d", i);
        L = (uint32_t)b[0] | ((uint32_t)b[1] << 8);
        if (L == 0 || L > MNIST_CKPT_NAME_MAX) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "tensor %d: name length %u", i, L);
        if (mnist_ckpt_get_(&r, name, L, 0) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "truncated at tensor %d", i);
        name[L] = 0;
        if (strcmp(name, t[i].name) != 0)
            MNIST_CKPT_BAIL_(MNIST_CKPT_E_MISMATCH, "tensor %d is '%s', this run expects '%s' (another --optimizer?)", i,
                             name, t[i].name);
        if (mnist_ckpt_get_(&r, b, 2, 0) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "truncated at tensor %s", name);
        if (b[0] != 1) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "tensor %s: element type %u, expected 1 (float32)", name, b[0]);
        if ((int)b[1] != t[i].rank)
            MNIST_CKPT_BAIL_(MNIST_CKPT_E_MISMATCH, "tensor %s has rank %u, this model expects %d", name, b[1], t[i].rank);
        for (d = 0; d < t[i].rank; d++) {
            if (mnist_ckpt_get_(&r, b, 4, 0) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "truncated at tensor %s", name);
            dim = mnist_ckpt_get32_(b);
            if (dim != (uint32_t)t[i].dims[d])
                MNIST_CKPT_BAIL_(MNIST_CKPT_E_MISMATCH, "tensor %s dimension %d is %u, this model expects %d", name, d,
                                 dim, t[i].dims[d]);
        }
        if (copy) {
            for (j = 0; j < c; j++) {
                if (mnist_ckpt_get_(&r, b, 4, 0) != 0) MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "truncated in %s", name);
                t[i].data[j] = mnist_ckpt_bitsf_(mnist_ckpt_get32_(b));
            }
        } else if (mnist_ckpt_get_(&r, NULL, (size_t)c * 4, 0) != 0) {
            MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "truncated in tensor %s", name);
        }
    }
    if (r.total != (long long)st.st_size - 4)
        MNIST_CKPT_BAIL_(MNIST_CKPT_E_CORRUPT, "%lld unexpected bytes after the last tensor",
                         (long long)st.st_size - 4 - r.total);
    if (copy) {
        meta->step = (uint64_t)mnist_ckpt_get32_(h + 16) | ((uint64_t)mnist_ckpt_get32_(h + 20) << 32);
        meta->seed = (uint64_t)mnist_ckpt_get32_(h + 24) | ((uint64_t)mnist_ckpt_get32_(h + 28) << 32);
        meta->epoch = mnist_ckpt_get32_(h + 32);
    }
done:
#undef MNIST_CKPT_BAIL_
    close(r.fd);
    if (code != MNIST_CKPT_OK) return mnist_ckpt_fail_(err, code, path, what);
    return MNIST_CKPT_OK;
}

/* Reads only the header of path into *meta (model, step, seed, epoch) so a program
 * can set itself up (seed, model) before it loads the tensors; the full checks
 * (CRC, names, shapes) are mnist_ckpt_load's. */
static inline int mnist_ckpt_peek(const char *path, mnist_ckpt_meta *meta, char *err) {
    unsigned char h[MNIST_CKPT_HEADER_BYTES];
    char what[200];
    size_t got = 0;
    int fd;
    if (!path || !meta) return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "peek needs a path and meta");
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        ipup_snprintf(what, sizeof what, "cannot open it: %s", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    while (got < sizeof h) {
        ssize_t k = read(fd, h + got, sizeof h - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (got < sizeof h) {
        ipup_snprintf(what, sizeof what, "only %u bytes, shorter than a checkpoint header", (unsigned)got);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    if (memcmp(h, "IPUPCKPT", 8) != 0)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, "the magic is not IPUPCKPT (not written by --save)");
    if (mnist_ckpt_get32_(h + 8) != MNIST_CKPT_VERSION) {
        ipup_snprintf(what, sizeof what, "version %u, this program reads version %u", mnist_ckpt_get32_(h + 8),
                 MNIST_CKPT_VERSION);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    memset(meta, 0, sizeof *meta);
    memcpy(meta->model, h + 40, MNIST_CKPT_MODEL_LEN);
    meta->model[MNIST_CKPT_MODEL_LEN - 1] = 0;
    meta->step = (uint64_t)mnist_ckpt_get32_(h + 16) | ((uint64_t)mnist_ckpt_get32_(h + 20) << 32);
    meta->seed = (uint64_t)mnist_ckpt_get32_(h + 24) | ((uint64_t)mnist_ckpt_get32_(h + 28) << 32);
    meta->epoch = mnist_ckpt_get32_(h + 32);
    return MNIST_CKPT_OK;
}

/* Loads path into the n tensors t (names, order and shapes must match) after
 * checking the whole file. meta->model names the model the caller trains; on
 * success meta->step, seed and epoch are set from the file. */
static inline int mnist_ckpt_load(const char *path, mnist_ckpt_meta *meta, const mnist_ckpt_tensor *t, int n,
                                  char *err) {
    int i, r;
    if (!path || !meta || !t || n < 1 || n > MNIST_CKPT_MAX_TENSORS)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "load needs a path, meta and 1..256 tensors");
    for (i = 0; i < n; i++)
        if (mnist_ckpt_count_(&t[i]) < 0 || !t[i].data)
            return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "a tensor has a bad name, rank or shape");
    if ((r = mnist_ckpt_pass_(path, meta, t, n, 0, err)) != MNIST_CKPT_OK) return r;
    return mnist_ckpt_pass_(path, meta, t, n, 1, err);
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_CKPT_H */
