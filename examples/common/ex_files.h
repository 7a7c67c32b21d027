/* ex_files.h - what the MNIST file readers and writers (mnist_data.h, mnist_ckpt.h,
 * mnist_outfile.h) share: one way to say what failed, one way to open an input, one
 * way to create a temporary file next to an output. MIT licence.
 *
 * Messages: every refusal of a reader writes "<path>: <what the result code means>:
 * <what>" into the caller's buffer of EX_ERR_LEN bytes (ex_err_fail) and returns
 * the code. The <what> part is formatted by the library's ipup_snprintf
 * (ipupipe_sched.h: no allocator, no stdio); the program compiles ipupipe_sched.h's
 * implementation once (IPUPIPE_IMPLEMENTATION).
 *
 * Inputs (ex_open_input): opened once, without blocking (a FIFO would otherwise
 * wait for a writer forever), and refused unless they are regular files: a
 * directory, a FIFO, a socket or a device is named as such in the message.
 * EX_OPEN(path, flags) is the one open() of every reader; a test may define it
 * before the first include to count or fail the opens.
 *
 * Outputs: ex_tmp_create makes "<path>.XXXXXX.tmp" in the target's directory with
 * a name no other process holds (O_CREAT|O_EXCL|O_NOFOLLOW: an existing file or a
 * planted symbolic link is never opened), ex_dir_fsync makes a rename in that
 * directory durable.
 *
 * Needs POSIX: _POSIX_C_SOURCE 200809L before the first include. No heap, no globals:
 * reentrant.
 */
#ifndef EX_FILES_H
#define EX_FILES_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ipupipe_sched.h" /* ipup_snprintf */

#ifdef __cplusplus
extern "C" {
#endif

#define EX_ERR_LEN 512

#ifndef EX_OPEN
#define EX_OPEN(path, flags) open((path), (flags))
#endif
#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* err (EX_ERR_LEN bytes, may be NULL) = "<path>: <meaning>: <what>"; returns code. */
static inline int ex_err_fail(char *err, int code, const char *meaning, const char *path, const char *what) {
    if (err) (void)ipup_snprintf(err, EX_ERR_LEN, "%s: %s: %s", path ? path : "(null)", meaning, what);
    return code;
}

/* What a file of mode m is, for messages ("a directory", "a FIFO (named pipe)", ...). */
static inline const char *ex_file_kind(mode_t m) {
    if (S_ISREG(m)) return "a regular file";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* Opens path for reading once: no blocking on a FIFO, refused unless a regular file.
 * Returns the descriptor (the caller closes it; *st is its fstat), or -1 with `what`
 * (cap bytes) saying why; expect names what the caller wanted ("an IDX file"). */
static inline int ex_open_input(const char *path, const char *expect, struct stat *st, char *what, size_t cap) {
    int fd, e;
    do fd = EX_OPEN(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        e = errno;
        (void)ipup_snprintf(what, cap, "cannot open it: %s", strerror(e));
        errno = e;
        return -1;
    }
    if (fstat(fd, st) != 0) {
        e = errno;
        close(fd);
        (void)ipup_snprintf(what, cap, "cannot stat it: %s", strerror(e));
        errno = e;
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        (void)ipup_snprintf(what, cap, "it is %s, not %s (give the path of a regular file)", ex_file_kind(st->st_mode),
                            expect);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* Reads n bytes at offset off of fd (pread, EINTR retried). Returns the bytes read
 * (fewer only at end of file), or -1 with errno set. */
static inline long long mnist_pread_full(int fd, void *dst, size_t n, long long off) {
    unsigned char *p = (unsigned char *)dst;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, p + got, n - got, (off_t)(off + (long long)got));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    return (long long)got;
}

/* The length of path's directory part ("a/b/c" -> 1 + ... = 3: "a/b"; "c" -> 0: ".";
 * "/c" -> 1: "/"). */
static inline size_t mnist_dir_len(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return 0;
    return slash == path ? 1 : (size_t)(slash - path);
}

/* Creates "<path>.XXXXXX.tmp" (XXXXXX unique, 6 letters or digits) for writing into
 * tmp (cap bytes): O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644 before the umask. Returns the
 * descriptor, or -1 with errno set (ENAMETOOLONG when tmp is too small). */
static inline int ex_tmp_create(const char *path, char *tmp, size_t cap) {
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec ts;
    uint64_t x;
    size_t n = strlen(path), i;
    int attempt, fd;
    if (n + 12 > cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&ts;
    for (attempt = 0; attempt < 100; attempt++) {
        uint64_t z = (x += UINT64_C(0x9E3779B97F4A7C15)); /* splitmix64 (Steele, Lea, Flood 2014) */
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z ^= z >> 31;
        memcpy(tmp, path, n);
        tmp[n] = '.';
        for (i = 0; i < 6; i++, z /= 62) tmp[n + 1 + i] = al[z % 62];
        memcpy(tmp + n + 7, ".tmp", 5);
        do fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        while (fd < 0 && errno == EINTR);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

/* fsync of the directory that holds path (after a rename into it). 0, or an errno;
 * file systems that cannot sync a directory (EINVAL, EROFS) count as success. */
static inline int ex_dir_fsync(const char *path) {
    char dir[1100];
    size_t n = mnist_dir_len(path);
    int fd, e = 0;
    if (n >= sizeof dir) return ENAMETOOLONG;
    if (n == 0) memcpy(dir, ".", 2);
    else {
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    do fd = open(dir, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return errno;
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    close(fd);
    return e;
}

#ifdef __cplusplus
}
#endif
#endif /* EX_FILES_H */
