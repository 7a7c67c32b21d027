/* mnist_ckpt.h - checkpoint files of the ipupipe MNIST trainer. Public domain / MIT.
 *
 * A thin file wrapper over the library's training state (ipup_state_save and
 * ipup_state_load of ipupipe.h, format in docs/state.md): a small trainer header with
 * what the library does not know (the seed, the epochs done, the model's name), then
 * the state stream, unchanged. A checkpoint holds nothing that differs between
 * equivalent runs (no time stamps, no schedule, runner, replica or path names), so two
 * runs that end with the same weights and stage split write byte-identical files.
 *
 * Format, version 2, every integer little-endian:
 *
 *   offset  size  field
 *        0     8  magic "IPUPCKPT"
 *        8     4  u32 format version (2)
 *       12     4  u32 reserved, 0
 *       16     8  u64 seed of the run (initialisation, shuffling, dropout)
 *       24     4  u32 epochs completed (at most MNIST_CKPT_MAX_EPOCH)
 *       28     4  u32 reserved, 0
 *       32    32  model name, NUL-padded printable ASCII ("mlp", "cnn", "mlp-gelu")
 *       64     4  u32 CRC-32 of bytes 0..63 (IEEE 802.3 / zlib: reflected polynomial
 *                 0xEDB88320, initial value and final xor 0xFFFFFFFF; the library's)
 *       68        the library's state stream (magic "IPUPSTAT", its own version, length,
 *                 step, descriptor of model, optimizer and stage split, every parameter
 *                 and optimizer-state tensor by name and shape, CRC-32); the file ends
 *                 with it
 *
 * Version 1 (ipupipe 0.4.0 and earlier: a list of tensors after a 72-byte header with
 * the same magic) is refused by its version: "version 1 (...), this program reads
 * version 2".
 *
 * Saving (mnist_ckpt_save_state) writes a temporary "<path>.XXXXXX.tmp" (a unique name,
 * created with O_EXCL|O_NOFOLLOW in <path>'s directory) through ipup_state_save, fsyncs
 * it, renames it over <path> (POSIX rename is atomic) and fsyncs the directory, so a
 * crash never leaves a half-written checkpoint under <path> and two runs saving to one
 * path never share a temporary. A <path> that is not a regular file (a device, a FIFO)
 * is refused, never replaced.
 *
 * Loading opens the file once (mnist_ckpt_open: a regular file, a FIFO or directory is
 * refused without blocking) and reads it through that descriptor: the trainer header
 * (magic, version, CRC-32, reserved fields, a printable model name, epoch in range),
 * the model name against the run's, the file's size against the state length its
 * header gives (bytes after the state, or a length that cannot be this emulator's, are
 * refused before the body is read: a huge sparse file costs nothing), then
 * ipup_state_load through a pread callback, which checks all of the state before it
 * applies a byte (docs/state.md). A refused file leaves the emulator's weights,
 * optimizer state and step untouched.
 *
 * No heap, no stdio streams and no stdio formatting: POSIX open/pread/write/fsync and
 * rename (declared in <stdio.h>) with stack buffers, messages formatted by
 * ex_files.h, so a program may save after its startup phase without touching the
 * allocator. Thread safety: reentrant (no globals); the emulator's own rules apply
 * (host thread, between runs).
 *
 * Results are the library's codes (ipupipe_sched.h), each with a message
 * "<path>: <meaning>: <what>" naming the file and what is wrong:
 *   MNIST_CKPT_OK         = IPUP_OK
 *   MNIST_CKPT_E_IO       = IPUP_ERR_IO        cannot open, read, write, rename
 *   MNIST_CKPT_E_CORRUPT  = IPUP_ERR_CORRUPT   not a checkpoint or damaged: bad magic,
 *                                              bad CRC-32, truncated, bad structure,
 *                                              NaN or infinity, bytes after the state
 *   MNIST_CKPT_E_MISMATCH = IPUP_ERR_MISMATCH  a sound file of another format version,
 *                                              model, optimizer, stage split or shape
 *   MNIST_CKPT_E_ARG      = IPUP_ERR_ARG       bad arguments of the caller
 *
 * Includes ipupipe.h (compile its implementation once, IPUPIPE_IMPLEMENTATION). Needs
 * POSIX: define _POSIX_C_SOURCE 200809L (or _DEFAULT_SOURCE) before the first #include
 * of the translation unit when compiling with -std=c11.
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

#include "ipupipe.h" /* ipup_state_*, the result codes */
#include "ex_files.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_CKPT_VERSION 2u
#define MNIST_CKPT_HEADER_BYTES 68 /* the trainer header; the state follows */
#define MNIST_CKPT_MODEL_LEN 32
#define MNIST_CKPT_ERR_LEN EX_ERR_LEN
/* The largest epoch a checkpoint may hold (far beyond any real run; a larger field is
 * damage, refused before the program computes with it). */
#define MNIST_CKPT_MAX_EPOCH 1000000u
/* earlier names of the version and the header length */
#define MNIST_CKPT_STATE_VERSION MNIST_CKPT_VERSION
#define MNIST_CKPT_STATE_HEAD MNIST_CKPT_HEADER_BYTES

#define MNIST_CKPT_OK IPUP_OK
#define MNIST_CKPT_E_IO IPUP_ERR_IO
#define MNIST_CKPT_E_CORRUPT IPUP_ERR_CORRUPT
#define MNIST_CKPT_E_MISMATCH IPUP_ERR_MISMATCH
#define MNIST_CKPT_E_ARG IPUP_ERR_ARG
/* earlier names: a file that is not a checkpoint is corrupt, another version a mismatch */
#define MNIST_CKPT_E_FORMAT MNIST_CKPT_E_CORRUPT
#define MNIST_CKPT_E_VERSION MNIST_CKPT_E_MISMATCH

/* The run state besides the emulator's: what the trainer header holds, and the step
 * (the state's, set by a load). */
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
    return ex_err_fail(err, code, mnist_ckpt_result_str(code), path, what);
}

/* CRC-32 (IEEE 802.3 / zlib) of n bytes, bit by bit (the header is 64 bytes; tests use
 * it to make edited files consistent). */
static inline uint32_t mnist_ckpt_crc32(const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
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
static inline uint64_t mnist_ckpt_get64_(const unsigned char *p) {
    return (uint64_t)mnist_ckpt_get32_(p) | ((uint64_t)mnist_ckpt_get32_(p + 4) << 32);
}

/* Printable ASCII (0x20..0x7e) of the first n bytes; else the index of the first other
 * byte. */
static inline int mnist_ckpt_unprintable_(const unsigned char *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e) return (int)i;
    return -1;
}

/* ------------------------------------------------------------------ saving */

/* Buffered writer on a file descriptor: the ipup_write_fn of the save. */
typedef struct {
    int fd, failed;
    size_t n;
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
    while (n) {
        size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
        memcpy(w->buf + w->n, p, k);
        w->n += k;
        p += k;
        n -= k;
        if (w->n == sizeof w->buf) mnist_ckpt_flush_(w);
    }
}
/* ipup_write_fn over the buffered file writer */
static inline int mnist_ckpt_state_put_(void *user, const void *data, size_t len) {
    mnist_ckpt_writer_ *w = (mnist_ckpt_writer_ *)user;
    mnist_ckpt_put_(w, data, len);
    return w->failed ? -1 : 0;
}

/* The trainer header of meta into h (MNIST_CKPT_HEADER_BYTES bytes). */
static inline void mnist_ckpt_header_(unsigned char *h, const mnist_ckpt_meta *meta) {
    int i;
    memset(h, 0, MNIST_CKPT_HEADER_BYTES);
    memcpy(h, "IPUPCKPT", 8);
    mnist_ckpt_put32_(h + 8, MNIST_CKPT_VERSION);
    mnist_ckpt_put32_(h + 16, (uint32_t)meta->seed);
    mnist_ckpt_put32_(h + 20, (uint32_t)(meta->seed >> 32));
    mnist_ckpt_put32_(h + 24, meta->epoch);
    for (i = 0; i < MNIST_CKPT_MODEL_LEN - 1 && meta->model[i]; i++) h[32 + i] = (unsigned char)meta->model[i];
    mnist_ckpt_put32_(h + 64, mnist_ckpt_crc32(h, 64));
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
                  "file path)", ex_file_kind(st.st_mode));
    return -1;
}

/* Writes meta and the state of e (initialised) to path, atomically: a temporary
 * "<path>.XXXXXX.tmp" with a unique name in path's directory (O_EXCL|O_NOFOLLOW: never
 * an existing file or a planted link), ipup_state_save through 8 KB writes, fsync,
 * rename over path, fsync of the directory. A path that exists and is not a regular
 * file (a device, a FIFO, a directory) is refused, never replaced. Uses about 10 KB of
 * stack (write buffer, names). */
static inline int mnist_ckpt_save_state(const char *path, const mnist_ckpt_meta *meta, ipup_emu *e, char *err) {
    mnist_ckpt_writer_ w;
    unsigned char h[MNIST_CKPT_HEADER_BYTES];
    char tmp[1100], what[300];
    int i, rc = IPUP_OK;
    if (!path || !meta || !e || !ipup_state_bytes(e))
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "save needs a path, meta and an initialised emulator");
    for (i = 0; i < MNIST_CKPT_MODEL_LEN && meta->model[i]; i++) {}
    if (i == 0 || i == MNIST_CKPT_MODEL_LEN || mnist_ckpt_unprintable_((const unsigned char *)meta->model, (size_t)i) >= 0)
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "the model name must be 1 to 31 printable ASCII characters");
    if (mnist_ckpt_target_ok(path, what, sizeof what) != 0) return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    memset(&w, 0, sizeof w);
    w.fd = ex_tmp_create(path, tmp, sizeof tmp);
    if (w.fd < 0) {
        ipup_snprintf(what, sizeof what, "cannot create the temporary file <path>.XXXXXX.tmp: %s (directory missing "
                      "or not writable?)", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    mnist_ckpt_header_(h, meta);
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
    if ((i = ex_dir_fsync(path)) != 0) {
        ipup_snprintf(what, sizeof what, "saved, but the directory could not be synced: %s", strerror(i));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    return MNIST_CKPT_OK;
}

/* ------------------------------------------------------------------ loading */

/* Opens path once for reading (a regular file; a FIFO, directory or device is refused
 * without blocking): the descriptor (the caller closes it), or -1 after a message. */
static inline int mnist_ckpt_open(const char *path, char *err) {
    char what[300];
    struct stat st;
    int fd = ex_open_input(path, "a checkpoint file (written by --save)", &st, what, sizeof what);
    if (fd < 0) mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    return fd;
}

/* Checks the trainer header h of which got bytes were read (the rest zero) and fills
 * *meta from it (model, seed, epoch). 0, or a code with what (cap bytes) saying why. */
static inline int mnist_ckpt_check_header_(const unsigned char *h, long long got, mnist_ckpt_meta *meta, char *what,
                                           size_t cap) {
    uint32_t v;
    size_t L;
    if (got >= 12 && memcmp(h, "IPUPCKPT", 8) == 0 && (v = mnist_ckpt_get32_(h + 8)) != MNIST_CKPT_VERSION) {
        ipup_snprintf(what, cap, "version %u%s, this program reads version %u (train again, or resume with the "
                      "program that wrote it)", v, v == 1 ? " (the tensor list of ipupipe 0.4.0 and earlier)" : "",
                      MNIST_CKPT_VERSION);
        return MNIST_CKPT_E_MISMATCH;
    }
    if (got < MNIST_CKPT_HEADER_BYTES) {
        ipup_snprintf(what, cap, "only %lld bytes, shorter than a checkpoint header", got);
        return MNIST_CKPT_E_CORRUPT;
    }
    if (memcmp(h, "IPUPCKPT", 8) != 0) {
        ipup_snprintf(what, cap, "the magic is not IPUPCKPT (not written by --save)");
        return MNIST_CKPT_E_CORRUPT;
    }
    if (mnist_ckpt_get32_(h + 64) != mnist_ckpt_crc32(h, 64)) {
        ipup_snprintf(what, cap, "the CRC-32 of the header does not match (damaged file)");
        return MNIST_CKPT_E_CORRUPT;
    }
    if (mnist_ckpt_get32_(h + 12) != 0 || mnist_ckpt_get32_(h + 28) != 0) {
        ipup_snprintf(what, cap, "the reserved header fields (offsets 12 and 28) are not 0 (not written by this "
                      "program)");
        return MNIST_CKPT_E_CORRUPT;
    }
    for (L = 0; L < MNIST_CKPT_MODEL_LEN && h[32 + L]; L++) {}
    if (L == MNIST_CKPT_MODEL_LEN || mnist_ckpt_unprintable_(h + 32, L) >= 0) {
        ipup_snprintf(what, cap, "the model name field (offset 32) %s", L == MNIST_CKPT_MODEL_LEN ? "has no NUL end"
                      : "holds a byte that is not printable ASCII");
        return MNIST_CKPT_E_CORRUPT;
    }
    for (v = (uint32_t)L; v < MNIST_CKPT_MODEL_LEN && !h[32 + v]; v++) {}
    if (v < MNIST_CKPT_MODEL_LEN) {
        ipup_snprintf(what, cap, "the model name field (offset 32) is not NUL-padded: byte %u after its end is not 0 "
                      "(not written by this program)", (unsigned)(32 + v));
        return MNIST_CKPT_E_CORRUPT;
    }
    if ((v = mnist_ckpt_get32_(h + 24)) > MNIST_CKPT_MAX_EPOCH) {
        ipup_snprintf(what, cap, "header field epoch is %u, above the limit %u (damaged file?)", v, MNIST_CKPT_MAX_EPOCH);
        return MNIST_CKPT_E_CORRUPT;
    }
    memset(meta, 0, sizeof *meta);
    memcpy(meta->model, h + 32, L);
    meta->seed = mnist_ckpt_get64_(h + 16);
    meta->epoch = v;
    return MNIST_CKPT_OK;
}

/* The trainer header of the file open on fd (named path in messages) into *meta:
 * model, seed, epoch, and the step of the state's header (checked by the load). */
static inline int mnist_ckpt_peek_state_fd(int fd, const char *path, mnist_ckpt_meta *meta, char *err) {
    unsigned char h[MNIST_CKPT_HEADER_BYTES + 32];
    char what[300];
    long long got;
    int code;
    if (!path || !meta) return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "peek needs a path and meta");
    memset(h, 0, sizeof h);
    if ((got = mnist_pread_full(fd, h, sizeof h, 0)) < 0) {
        ipup_snprintf(what, sizeof what, "read failed: %s", strerror(errno));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_IO, path, what);
    }
    if ((code = mnist_ckpt_check_header_(h, got, meta, what, sizeof what)) != MNIST_CKPT_OK)
        return mnist_ckpt_fail_(err, code, path, what);
    if (got >= MNIST_CKPT_HEADER_BYTES + 32) meta->step = mnist_ckpt_get64_(h + MNIST_CKPT_HEADER_BYTES + 24);
    return MNIST_CKPT_OK;
}

/* mnist_ckpt_peek_state_fd on path, opened once. */
static inline int mnist_ckpt_peek_state(const char *path, mnist_ckpt_meta *meta, char *err) {
    int fd, r;
    if (!path || !meta) return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "peek needs a path and meta");
    if ((fd = mnist_ckpt_open(path, err)) < 0) return MNIST_CKPT_E_IO;
    r = mnist_ckpt_peek_state_fd(fd, path, meta, err);
    close(fd);
    return r;
}

/* ipup_read_fn over a descriptor: the bytes at MNIST_CKPT_HEADER_BYTES + offset */
typedef struct mnist_ckpt_src_ {
    int fd, err;
} mnist_ckpt_src_;
static inline int mnist_ckpt_state_get_(void *user, uint64_t offset, void *data, size_t len) {
    mnist_ckpt_src_ *s = (mnist_ckpt_src_ *)user;
    long long got;
    if (offset > (uint64_t)1 << 52) return IPUP_STATE_END;
    got = mnist_pread_full(s->fd, data, len, MNIST_CKPT_HEADER_BYTES + (long long)offset);
    if (got < 0) s->err = errno ? errno : EIO;
    return got == (long long)len ? 0 : got < 0 ? -1 : IPUP_STATE_END;
}

/* The state's length T (from its header) against the file's size and against e, before
 * any byte of the body is read: bytes after the state are damage; a T far above e's
 * state (4 x + 64 KB) cannot load into e and is not read (a huge sparse file costs
 * nothing): damage when the file is shorter than T, else another run's state. Only a state header of this library's magic and version is looked at; the
 * library refuses any other at once. 0, or the code after a message. */
static inline int mnist_ckpt_check_size_(int fd, const char *path, const ipup_emu *e, char *err) {
    unsigned char b[24];
    char what[300];
    struct stat st;
    uint64_t T, mine = (uint64_t)ipup_state_bytes(e);
    if (fstat(fd, &st) != 0 || mnist_pread_full(fd, b, sizeof b, MNIST_CKPT_HEADER_BYTES) != (long long)sizeof b ||
        memcmp(b, "IPUPSTAT", 8) != 0 || mnist_ckpt_get32_(b + 8) != IPUP_STATE_VERSION)
        return MNIST_CKPT_OK;
    T = mnist_ckpt_get64_(b + 16);
    if (T > 4 * mine + 65536 && (uint64_t)st.st_size < MNIST_CKPT_HEADER_BYTES + T) {
        ipup_snprintf(what, sizeof what, "truncated: its state header gives %llu bytes of state, the file holds %llu "
                      "after the trainer header (damaged or incomplete file)", (unsigned long long)T,
                      (unsigned long long)((uint64_t)st.st_size - MNIST_CKPT_HEADER_BYTES));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    if (T > 4 * mine + 65536) {
        ipup_snprintf(what, sizeof what, "its state header gives %llu bytes of state, this run's state is %llu: not "
                      "this run's state (another model, or a damaged file); not read", (unsigned long long)T,
                      (unsigned long long)mine);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    if ((uint64_t)st.st_size > MNIST_CKPT_HEADER_BYTES + T) {
        ipup_snprintf(what, sizeof what, "%llu unexpected bytes after the state (damaged file?)",
                      (unsigned long long)((uint64_t)st.st_size - MNIST_CKPT_HEADER_BYTES - T));
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_CORRUPT, path, what);
    }
    return MNIST_CKPT_OK;
}

/* Loads the file open on fd (named path in messages; mnist_ckpt_open) into e: the
 * trainer header (the model meta->model expected), the size check, then
 * ipup_state_load through pread (all checks before anything is applied: a refused file
 * leaves e untouched). On success meta gets the file's seed, epoch and step (e's step
 * is set). */
static inline int mnist_ckpt_load_state_fd(int fd, const char *path, mnist_ckpt_meta *meta, ipup_emu *e, char *err) {
    mnist_ckpt_meta fm;
    mnist_ckpt_src_ src;
    char what[900];
    const char *m;
    int rc;
    if (!path || !meta || !e || !ipup_state_bytes(e))
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "load needs a path, meta and an initialised emulator");
    if ((rc = mnist_ckpt_peek_state_fd(fd, path, &fm, err)) != MNIST_CKPT_OK) return rc;
    if (strncmp(fm.model, meta->model, MNIST_CKPT_MODEL_LEN) != 0) {
        ipup_snprintf(what, sizeof what, "it holds model '%s', this run trains '%s' (use --model %s)", fm.model,
                      meta->model, fm.model);
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_MISMATCH, path, what);
    }
    if ((rc = mnist_ckpt_check_size_(fd, path, e, err)) != MNIST_CKPT_OK) return rc;
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

/* mnist_ckpt_load_state_fd on path, opened once. */
static inline int mnist_ckpt_load_state(const char *path, mnist_ckpt_meta *meta, ipup_emu *e, char *err) {
    int fd, r;
    if (!path || !meta || !e || !ipup_state_bytes(e))
        return mnist_ckpt_fail_(err, MNIST_CKPT_E_ARG, path, "load needs a path, meta and an initialised emulator");
    if ((fd = mnist_ckpt_open(path, err)) < 0) return MNIST_CKPT_E_IO;
    r = mnist_ckpt_load_state_fd(fd, path, meta, e, err);
    close(fd);
    return r;
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_CKPT_H */
