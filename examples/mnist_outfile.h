/* mnist_outfile.h - the trainer's output files (--trace, --summary-json): opened at
 * startup, written at the end without an allocator, put in place only when complete.
 * MIT licence.
 *
 * An output's descriptor is opened at startup so that writing it at the end needs no
 * allocator. A regular file, or a new one, is written as "<path>.tmp" and renamed over
 * <path> only when the run and the write succeed: a run that fails (a NaN stop, a
 * full disk) leaves an older file as it was and no partial or empty one. A device or
 * a pipe (/dev/stdout, /dev/full, a FIFO) cannot be replaced by a rename, so it is
 * written directly. mt_fd_write is an ipup_write_fn over a descriptor.
 *
 * Needs POSIX (_POSIX_C_SOURCE 200809L before the first include) and mt_err
 * (mnist_options.h).
 */
#ifndef MNIST_OUTFILE_H
#define MNIST_OUTFILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnist_options.h"

typedef struct {
    const char *path; /* what the user named */
    char *tmp;        /* "<path>.tmp", or NULL when written directly */
    int fd;           /* -1 when closed */
} mt_out;

/* Writes len bytes to the descriptor *(int *)user; 0, or -1 with errno set. */
static int mt_fd_write(void *user, const void *data, size_t len) {
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
static int mt_out_open(mt_out *o, const char *path) {
    struct stat st;
    size_t n = strlen(path);
    int e;
    o->path = path;
    o->tmp = NULL;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        o->fd = open(path, O_WRONLY);
        return o->fd < 0 ? -1 : 0;
    }
    if (!(o->tmp = (char *)malloc(n + 5))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(o->tmp, path, n);
    memcpy(o->tmp + n, ".tmp", 5);
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o->fd < 0) {
        e = errno;
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
        return -1;
    }
    return 0;
}

/* Closes an output file. With keep, "<path>.tmp" is flushed to disk and renamed over
 * <path> (the pattern of mnist_ckpt_save); without it, or if that fails, the
 * temporary file is removed and <path> is left as it was. Returns 0 or an errno.
 * Closing a closed output does nothing. */
static int mt_out_close(mt_out *o, int keep) {
    int e = 0;
    if (o->fd < 0) return 0;
    if (keep && o->tmp && fsync(o->fd) != 0) e = errno;
    if (close(o->fd) != 0 && keep && !e) e = errno;
    o->fd = -1;
    if (o->tmp) {
        if (keep && !e && rename(o->tmp, o->path) != 0) e = errno;
        if (!keep || e) unlink(o->tmp);
    }
    return e;
}

/* Ends an output whose bytes were all written (written != 0) or not: keeps it, or
 * drops it and says why. Returns 0 when <path> now holds the complete output. */
static int mt_out_finish(mt_out *o, const char *flag, int written) {
    int e = written ? 0 : (errno ? errno : EIO);
    if (!written) mt_out_close(o, 0);
    else e = mt_out_close(o, 1);
    if (!e) return 0;
    mt_err("%s: writing %s failed: %s%s%s", flag, o->path, strerror(e),
           e == ENOSPC || e == EFBIG || e == EDQUOT ? " (disk full or file size limit)" : "",
           o->tmp ? "; the file was not replaced (any older one is as it was)" : "");
    return e;
}

/* Drops an output that was not finished (closed, temporary file removed) and frees
 * its name. */
static void mt_out_free(mt_out *o) {
    mt_out_close(o, 0);
    free(o->tmp);
    o->tmp = NULL;
}

#endif /* MNIST_OUTFILE_H */
