/* ex_outfile.h - the output files of the example programs: checked at startup against
 * each other and against the files the program reads, opened at startup, put in place
 * only when complete (mnist-train's --save, --trace, --summary-json, --export-c,
 * ipupipe-plan -o, sensor-demo --export-c). MIT licence.
 *
 * Startup check (ex_files_check, the one rule of every tool): an output path is not
 * empty; it names a new file or a regular file (a directory, a FIFO, a socket or a
 * device is refused, never opened: opening a FIFO for writing waits for a reader for
 * ever); its directory takes a new file (a temporary one is created and removed now,
 * so a missing or unwritable directory fails before the run, not after it); no two
 * outputs name one file, and no output names a file the program reads, however spelled
 * (compared by device and inode: "out/./a", "../out/a", a hard or a symbolic link are
 * one file; a file still to be created is its directory's device and inode and its
 * name). An output may name the one input it is meant to replace (mnist-train's --save
 * over --load: resuming in place).
 *
 * Writing: the output is a temporary "<path>.XXXXXX.tmp" (a unique name,
 * O_EXCL|O_NOFOLLOW, ex_files.h) renamed over <path> only when the run and the write
 * succeed: a run that fails (a NaN stop, a full disk, a signal) leaves an older file as
 * it was and no partial or empty one. The descriptor is opened at startup, so writing
 * at the end needs no allocator. ex_fd_write is an ipup_write_fn over a descriptor.
 * Messages go into the caller's buffer (EX_ERR_LEN bytes is enough); the caller prints
 * them. Needs POSIX (_POSIX_C_SOURCE 200809L before the first include).
 */
#ifndef EX_OUTFILE_H
#define EX_OUTFILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_files.h"

typedef struct {
    const char *path; /* what the user named */
    char *tmp;        /* "<path>.XXXXXX.tmp" while open, else NULL */
    int fd;           /* -1 when closed */
} ex_out;

/* One file a command line names, for ex_files_check. */
typedef struct {
    const char *flag;     /* the option that names it ("--save", "--data") */
    const char *path;     /* NULL: not given */
    int output;           /* 1: the program writes it, 0: the program reads it */
    const char *replaces; /* an output: the flag of the input it may replace ("--load"), or NULL */
} ex_file_use;

/* Appends one entry to f (its count *n); the list of a command line in one line each. */
static inline void ex_file_add(ex_file_use *f, int *n, const char *flag, const char *path,
                               int output, const char *replaces) {
    f[*n].flag = flag;
    f[*n].path = path;
    f[*n].output = output;
    f[*n].replaces = replaces;
    ++*n;
}

/* What a path names, compared by identity rather than by spelling: an existing file is
 * its device and inode; a file still to be created is its directory's and its name. */
typedef struct {
    dev_t dev;
    ino_t ino;
    const char *name; /* NULL for an existing file */
} ex_file_id;

/* Writes len bytes to the descriptor *(int *)user; 0, or -1 with errno set. */
static inline int ex_fd_write(void *user, const void *data, size_t len) {
    int fd = *(int *)user;
    const char *p = (const char *)data;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR) continue; /* outputs are regular files: the write goes on */
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* The identity of path (see ex_file_id); 0, or -1 with errno set (neither it nor its
 * directory exists). */
static inline int ex_file_identify(const char *path, ex_file_id *id) {
    struct stat st;
    char dir[1100];
    size_t n = mnist_dir_len(path);
    id->name = NULL;
    if (stat(path, &st) == 0) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return 0;
    }
    if (n >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (n == 0) memcpy(dir, ".", 2);
    else {
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    if (stat(dir, &st) != 0) return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->name = path + n + (path[n] == '/');
    return 0;
}

/* 1 when a and b name one file. */
static inline int ex_file_same(const ex_file_id *a, const ex_file_id *b) {
    if (a->dev != b->dev || a->ino != b->ino || !a->name != !b->name) return 0;
    return !a->name || strcmp(a->name, b->name) == 0;
}

/* The startup check of one output path (flag names it in the message): not empty, a
 * new or a regular file, in a directory that takes a new file. 0, or -1 with msg (cap
 * bytes) saying why. */
static inline int ex_out_check(const char *flag, const char *path, char *msg, size_t cap) {
    struct stat st;
    char tmp[1100];
    int fd;
    if (!path || !*path) {
        (void)ipup_snprintf(msg, cap, "%s needs the path of a file to write, got ''", flag);
        return -1;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        (void)ipup_snprintf(msg, cap, "%s: %s is %s, not a regular file; give the path of a file to write",
                            flag, path, ex_file_kind(st.st_mode));
        return -1;
    }
    if ((fd = ex_tmp_create(path, tmp, sizeof tmp)) < 0) {
        (void)ipup_snprintf(msg, cap, "%s: cannot create %s: %s (directory missing or not "
                            "writable?)",
                            flag, path, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(tmp);
    return 0;
}

/* The message of two entries of ex_files_check that name one file (o an output). */
static inline void ex_files_clash_(const ex_file_use *o, const ex_file_use *x, char *msg,
                                   size_t cap) {
    if (x->output)
        (void)ipup_snprintf(msg, cap,
                            "%s and %s both name one file (%s and %s); give each output its own "
                            "file",
                            x->flag, o->flag, x->path, o->path);
    else
        (void)ipup_snprintf(msg, cap,
                            "%s %s names %s, a file that %s reads; writing it would destroy that "
                            "input: give %s another path",
                            o->flag, o->path, x->path, x->flag, o->flag);
}

/* Every file of a command line (f[0..n-1]; at most 32, entries with a NULL path are not
 * given) checked at startup: each output by ex_out_check, and no output naming the file
 * of another entry, output or input, unless it replaces that input (replaces). 0, or -1
 * with msg (cap bytes) naming both options. An input that does not exist is skipped:
 * its reader says so. */
static inline int ex_files_check(const ex_file_use *f, int n, char *msg, size_t cap) {
    ex_file_id id[32];
    int ok[32], x, y;
    if (n > 32) n = 32;
    for (x = 0; x < n; x++) {
        ok[x] = 0;
        if (!f[x].path) continue;
        if (f[x].output && ex_out_check(f[x].flag, f[x].path, msg, cap) != 0) return -1;
        ok[x] = ex_file_identify(f[x].path, &id[x]) == 0 && (f[x].output || !id[x].name);
    }
    for (x = 0; x < n; x++)
        for (y = 0; y < n; y++) {
            const ex_file_use *o = &f[x], *i = &f[y];
            if (x == y || !ok[x] || !ok[y] || !o->output || (i->output && y > x))
                continue; /* (two outputs: compared once) */
            if (!ex_file_same(&id[x], &id[y])) continue;
            if (!i->output && o->replaces && strcmp(o->replaces, i->flag) == 0) continue;
            ex_files_clash_(o, i, msg, cap);
            return -1;
        }
    return 0;
}

/* Opens an output at startup: ex_out_check's refusals, then the temporary file created
 * and kept open. 0, or -1 with msg (cap bytes) naming flag and saying why. */
static inline int ex_out_open(ex_out *o, const char *flag, const char *path, char *msg,
                              size_t cap) {
    size_t len = path ? strlen(path) + 16 : 0;
    int e;
    o->path = path;
    o->tmp = NULL;
    o->fd = -1;
    if (ex_out_check(flag, path, msg, cap) != 0) return -1;
    if (!(o->tmp = (char *)malloc(len))) {
        (void)ipup_snprintf(msg, cap, "%s: out of memory for the name of %s", flag, path);
        return -1;
    }
    o->fd = ex_tmp_create(path, o->tmp, len);
    if (o->fd < 0) {
        e = errno;
        free(o->tmp);
        o->tmp = NULL;
        (void)ipup_snprintf(msg, cap, "%s: cannot create %s: %s (directory missing or not "
                            "writable?)",
                            flag, path, strerror(e));
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
    if (keep && fsync(o->fd) != 0) e = errno;
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
