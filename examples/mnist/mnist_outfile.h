/* mnist_outfile.h - the trainer's output files (--trace, --summary-json): opened at
 * startup, written at the end without an allocator, put in place only when complete.
 * MIT licence.
 *
 * The file itself is ex_outfile.h's ex_out (a temporary file renamed into place when
 * complete); this adds the trainer's list of files and its messages. Every output path
 * is checked at startup (mt_out_check_all, ex_outfile.h's ex_files_check): not empty,
 * a new or a regular file (never a directory, a FIFO or a device), in a directory that
 * takes a new file, and no output naming another output or a file the run reads
 * (--load, the IDX files of --data), compared by device and inode, so "out/./a",
 * "out/a" and a link to it are one file. --save may name --load's file (resuming in
 * place replaces the checkpoint atomically).
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
#include "mnist_data.h" /* mnist_path */
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

/* Every file of the run checked at startup (ex_outfile.h's ex_files_check): the
 * outputs (NULL: not asked for) as files to write, against each other and against what
 * the run reads (--load, the four IDX files of --data); --save may replace --load.
 * 0, or 2 after a message. */
static int mt_out_check_all(const char *save, const char *trace, const char *summary,
                            const char *export_c, const char *load, const char *data) {
    static const char *const split[2] = {"train", "t10k"};
    char idx[4][1100], msg[EX_ERR_LEN + 1100];
    ex_file_use f[9];
    int k, n = 0;
    ex_file_add(f, &n, "--save", save, 1, "--load");
    ex_file_add(f, &n, "--trace", trace, 1, NULL);
    ex_file_add(f, &n, "--summary-json", summary, 1, NULL);
    ex_file_add(f, &n, "--export-c", export_c, 1, NULL);
    ex_file_add(f, &n, "--load", load, 0, NULL);
    for (k = 0; k < 4; k++) {
        int ok = data && mnist_path(idx[k], sizeof idx[k], data, split[k / 2], k % 2) == MNIST_OK;
        ex_file_add(f, &n, "--data", ok ? idx[k] : NULL, 0, NULL);
    }
    if (ex_files_check(f, n, msg, sizeof msg) != 0) return mt_err("%s; nothing was run", msg);
    return 0;
}

#endif /* MNIST_OUTFILE_H */
