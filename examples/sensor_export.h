/* sensor_export.h - `sensor-demo --mode anomaly --export-c FILE.h [--export-name NAME]`:
 * the trained autoencoder as one C header (examples/export_c.h) that needs only
 * ipupipe_kernels.h, for firmware that flags anomalies without the emulator. MIT licence.
 *
 *   se_open    at startup, once the emulator is initialised: can the model be exported
 *              (expc_check), and can FILE.h be written? A directory is refused; a
 *              regular or new file gets a temporary "<FILE.h>.XXXXXX" next to it
 *              (mkstemp: a new name, never an existing file or link), so an unwritable
 *              or missing directory is refused before training; a device or a pipe
 *              (/dev/stdout) is written directly.
 *   se_finish  after training: the header through the descriptor, then the temporary
 *              file flushed to disk and renamed over FILE.h (the directory synced). A
 *              failed write or a failed run (se_drop) removes the temporary file and
 *              leaves an older FILE.h as it was: never a partial header.
 * Errors print one line through so_err. Needs POSIX (_POSIX_C_SOURCE 200809L). */
#ifndef SENSOR_EXPORT_H
#define SENSOR_EXPORT_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_c.h"
#include "sensor_options.h"

#define SE_PATH_MAX 1024

typedef struct se_out {
    const char *path;      /* FILE.h as given; NULL: no export asked for */
    char tmp[SE_PATH_MAX]; /* the temporary file, "" when written directly */
    int fd;                /* -1 when closed */
} se_out;

/* ipup_write_fn over the descriptor *(int *)user; 0, or -1 with errno set */
static inline int se_fd_write(void *user, const void *data, size_t len)
{
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

/* the temporary file next to o->path, mode 0644 less the umask (mkstemp's is 0600);
   0, or -1 with errno set */
static inline int se_tmp_create(se_out *o)
{
    mode_t mask;
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", o->path);
    if (n < 0 || (size_t)n >= sizeof o->tmp) {
        o->tmp[0] = 0;
        errno = ENAMETOOLONG;
        return -1;
    }
    if ((o->fd = mkstemp(o->tmp)) < 0) {
        o->tmp[0] = 0;
        return -1;
    }
    mask = umask(0); /* startup, one thread: read the umask and put it back */
    umask(mask);
    (void)fchmod(o->fd, (mode_t)(0644 & ~mask)); /* not fatal: the file would stay 0600 */
    return 0;
}

/* --export-c at startup (e initialised); 0, or 2 after a message */
static inline int se_open(se_out *o, const char *path, const ipup_emu *e)
{
    char msg[512];
    struct stat st;
    o->path = path;
    o->tmp[0] = 0;
    o->fd = -1;
    if (!path) return 0;
    if (expc_check(e, msg, sizeof msg) != IPUP_OK) return so_err("--export-c: %s; nothing was run", msg);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return so_err("--export-c: %s is a directory, not a regular file; give the path of a file to write", path);
        if ((o->fd = open(path, O_WRONLY)) >= 0) return 0;
    } else if (se_tmp_create(o) == 0) return 0;
    return so_err("--export-c: cannot create %s: %s (directory missing or not writable?); nothing was run", path,
                  strerror(errno));
}

/* closes o; the temporary file is removed (keep == 0) or flushed, renamed over the
   path and its directory synced. 0 or an errno (the temporary file then removed). */
static inline int se_close(se_out *o, int keep)
{
    int e = 0;
    if (o->fd < 0) return 0;
    if (keep && o->tmp[0] && fsync(o->fd) != 0) e = errno;
    if (close(o->fd) != 0 && keep && !e) e = errno;
    o->fd = -1;
    if (!o->tmp[0]) return e;
    if (keep && !e && rename(o->tmp, o->path) != 0) e = errno;
    if (!keep || e) unlink(o->tmp);
    else {
        char dir[SE_PATH_MAX];
        const char *slash = strrchr(o->path, '/');
        int d;
        if (!slash) snprintf(dir, sizeof dir, ".");
        else snprintf(dir, sizeof dir, "%.*s", slash == o->path ? 1 : (int)(slash - o->path), o->path);
        if ((d = open(dir, O_RDONLY)) >= 0) {
            if (fsync(d) != 0 && errno != EINVAL && errno != EROFS) e = errno;
            close(d);
        }
    }
    o->tmp[0] = 0;
    return e;
}

/* a run that failed: no header, an older FILE.h as it was */
static inline void se_drop(se_out *o) { se_close(o, 0); }

/* after training: the header of e's model (prefix name, origin for its first comment)
   into o, put in place; 0, or 2 after a message */
static inline int se_finish(se_out *o, ipup_emu *e, const char *name, const char *origin, int quiet)
{
    char msg[512];
    expc_info info;
    int rc, err, direct = !o->tmp[0];
    if (o->fd < 0) return 0;
    errno = 0;
    rc = expc_write(e, name, origin, se_fd_write, &o->fd, &info, msg, sizeof msg);
    if (rc != IPUP_OK && rc != IPUP_ERR_IO) {
        se_drop(o);
        return so_err("--export-c: %s", msg);
    }
    err = rc == IPUP_OK ? se_close(o, 1) : (errno ? errno : EIO);
    if (rc != IPUP_OK) se_drop(o);
    if (err)
        return so_err("--export-c: writing %s failed: %s%s", o->path, strerror(err),
                      direct ? "" : "; the file was not replaced (any older one is as it was)");
    if (!quiet)
        printf("exported %s: %s_predict, %d weight arrays, %lld weights (FNV-1a %016llx), scratch %lld floats\n",
               o->path, name, (int)info.tensors, (long long)info.floats, (unsigned long long)info.fnv1a,
               (long long)info.scratch);
    return 0;
}

#endif
