/* ex_outfile.h - an output file of the example programs, opened at startup and put in
 * place only when complete (mnist-train's --trace, --summary-json and --save checks,
 * ipupipe-plan -o, sensor-demo --export-c). MIT licence.
 *
 * A regular file, or a new one, is written as a temporary "<path>.XXXXXX.tmp" (a unique
 * name, O_EXCL|O_NOFOLLOW, ex_files.h) and renamed over <path> only when the run and
 * the write succeed: a run that fails (a NaN stop, a full disk) leaves an older file as
 * it was and no partial or empty one. A device or a pipe (/dev/stdout, /dev/full, a
 * FIFO) cannot be replaced by a rename, so it is written directly. The descriptor is
 * opened at startup, so writing at the end needs no allocator. ex_fd_write is an
 * ipup_write_fn over a descriptor. Messages are the caller's (mnist_outfile.h says them
 * for the trainer). Needs POSIX (_POSIX_C_SOURCE 200809L before the first include).
 */
#ifndef EX_OUTFILE_H
#define EX_OUTFILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_files.h"

typedef struct {
    const char *path; /* what the user named */
    char *tmp;        /* "<path>.XXXXXX.tmp", or NULL when written directly */
    int fd;           /* -1 when closed */
} ex_out;

/* Writes len bytes to the descriptor *(int *)user; 0, or -1 with errno set. */
static inline int ex_fd_write(void *user, const void *data, size_t len) {
    int fd = *(int *)user;
    const char *p = (const char *)data;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Opens an output file at startup (see above). Returns 0, or -1 with errno set. */
static inline int ex_out_open(ex_out *o, const char *path) {
    struct stat st;
    size_t cap = strlen(path) + 16;
    int e;
    o->path = path;
    o->tmp = NULL;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        return o->fd < 0 ? -1 : 0;
    }
    if (!(o->tmp = (char *)malloc(cap))) {
        errno = ENOMEM;
        return -1;
    }
    o->fd = ex_tmp_create(path, o->tmp, cap);
    if (o->fd < 0) {
        e = errno;
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
        return -1;
    }
    return 0;
}

/* Closes an output file. With keep, the temporary file is flushed to disk, renamed
 * over <path> (the pattern of mnist_ckpt_save_state) and the directory synced; without it,
 * or if that fails, the temporary file is removed and <path> is left as it was.
 * Returns 0 or an errno. Closing a closed output does nothing. */
static inline int ex_out_close(ex_out *o, int keep) {
    int e = 0;
    if (o->fd < 0) return 0;
    if (keep && o->tmp && fsync(o->fd) != 0) e = errno;
    if (close(o->fd) != 0 && keep && !e) e = errno;
    o->fd = -1;
    if (o->tmp) {
        if (keep && !e && rename(o->tmp, o->path) != 0) e = errno;
        if (!keep || e) unlink(o->tmp);
        else e = ex_dir_fsync(o->path);
    }
    return e;
}

/* Drops an output that was not finished (closed, temporary file removed) and frees
 * its name. */
static inline void ex_out_free(ex_out *o) {
    ex_out_close(o, 0);
    free(o->tmp);
    o->tmp = NULL;
}

#endif /* EX_OUTFILE_H */
