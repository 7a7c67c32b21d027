/* mnist_outfile.h - the trainer's output files (--trace, --summary-json): opened at
 * startup, written at the end without an allocator, put in place only when complete.
 * MIT licence.
 *
 * The file itself is ex_outfile.h's ex_out (a temporary file renamed into place when
 * complete; a device or a pipe written directly); this adds the trainer's startup
 * checks and messages. Every output path is checked at startup (mt_out_check_all): its
 * directory exists and takes a new file, it is not a directory, a checkpoint is not a
 * device or a pipe, and no two outputs name one file (compared by device and inode, so
 * "out/./a" and "out/a" are one file).
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

#include "ex_files.h"
#include "mnist_options.h"
#include "ex_outfile.h"

/* Ends an output whose bytes were all written (written != 0) or not: keeps it, or
 * drops it and says why. Returns 0 when <path> now holds the complete output. */
static int mt_out_finish(ex_out *o, const char *flag, int written) {
    int e = written ? 0 : (errno ? errno : EIO);
    if (!written) ex_out_close(o, 0);
    else e = ex_out_close(o, 1);
    if (!e) return 0;
    mt_err("%s: writing %s failed: %s%s%s", flag, o->path, strerror(e),
           e == ENOSPC || e == EFBIG || e == EDQUOT ? " (disk full or file size limit)" : "",
           o->tmp ? "; the file was not replaced (any older one is as it was)" : "");
    return e;
}

/* What one output is, for comparing outputs by identity rather than by spelling: an
 * existing file is its device and inode; a file still to be created is its
 * directory's device and inode and its last name component. */
typedef struct {
    dev_t dev;
    ino_t ino;
    const char *name; /* NULL for an existing file */
} mt_out_id;

/* The identity of path; 0, or -1 with errno set (its directory does not exist). */
static int mt_out_identify(const char *path, mt_out_id *id) {
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

static int mt_out_same(const mt_out_id *a, const mt_out_id *b) {
    if (a->dev != b->dev || a->ino != b->ino || !a->name != !b->name) return 0;
    return !a->name || strcmp(a->name, b->name) == 0;
}

/* Startup check of one output: a directory is refused, and so is a non-regular file
 * for a checkpoint (regular_only); where a temporary file will be written, one is
 * created and removed in the target's directory now, so an unwritable or missing
 * directory fails before the run, not after it. 0, or 2 after a message. */
static int mt_out_probe(const char *flag, const char *path, int regular_only) {
    struct stat st;
    char tmp[1100];
    int fd;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode) || regular_only)
            return mt_err("%s: %s is %s, not a regular file; give the path of a file to write%s", flag, path,
                          ex_file_kind(st.st_mode), regular_only ? " (a checkpoint is never written to a device or "
                                                                      "a pipe)" : "");
        return 0; /* a device or a pipe: written directly */
    }
    if ((fd = ex_tmp_create(path, tmp, sizeof tmp)) < 0)
        return mt_err("%s: cannot create %s: %s (directory missing or not writable?); nothing was run", flag, path,
                      strerror(errno));
    close(fd);
    unlink(tmp);
    return 0;
}

/* Every output path (NULL: not asked for) checked at startup: writable (mt_out_probe)
 * and no two naming the same file, however spelled (mt_out_id). 0, or 2 after a
 * message. */
static int mt_out_check_all(const char *const *paths, const char *const *flags, int n) {
    mt_out_id id[8];
    int x, y, rc;
    for (x = 0; x < n && x < 8; x++) {
        if (!paths[x]) continue;
        if ((rc = mt_out_probe(flags[x], paths[x], x == 0)) != 0) return rc;
        if (mt_out_identify(paths[x], &id[x]) != 0)
            return mt_err("%s: cannot create %s: %s", flags[x], paths[x], strerror(errno));
        for (y = 0; y < x; y++)
            if (paths[y] && mt_out_same(&id[x], &id[y]))
                return mt_err("%s and %s both name one file (%s and %s); give each output its own file", flags[y],
                              flags[x], paths[y], paths[x]);
    }
    return 0;
}

#endif /* MNIST_OUTFILE_H */
