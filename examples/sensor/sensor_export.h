/* sensor_export.h - `sensor-demo --mode anomaly --export-c FILE.h [--export-name NAME]`:
 * the trained autoencoder as one C header (examples/common/export_c.h) that needs only
 * ipupipe_kernels.h, for firmware that flags anomalies without the emulator. MIT licence.
 *
 *   se_open    at startup, once the emulator is initialised: can the model be exported
 *              (expc_check), and can FILE.h be written? The file is opened as
 *              ex_outfile.h's ex_out, with its checks (an empty path, a directory, a
 *              FIFO or a device is refused, never opened) and a temporary file next to
 *              it, so a missing or unwritable directory is refused before training.
 *   se_finish  after training: the header through the descriptor, then the temporary
 *              file flushed and renamed over FILE.h. A failed write or a failed run
 *              (se_drop) removes the temporary file and leaves an older FILE.h as it
 *              was: never a partial header.
 * Errors print one line through so_err. Needs POSIX (_POSIX_C_SOURCE 200809L). */
#ifndef SENSOR_EXPORT_H
#define SENSOR_EXPORT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export_c.h"
#include "ex_outfile.h"
#include "sensor_options.h"

typedef struct se_out {
    int asked; /* --export-c given */
    ex_out f;
} se_out;

/* --export-c at startup (e initialised); 0, or 2 after a message */
static inline int se_open(se_out *o, const char *path, const ipup_emu *e)
{
    char msg[512];
    o->asked = path != NULL;
    o->f.fd = -1;
    o->f.tmp = NULL;
    if (!path) return 0;
    if (expc_check(e, msg, sizeof msg) != IPUP_OK) {
        o->asked = 0;
        return so_err("--export-c: %s; nothing was run", msg);
    }
    if (ex_out_open(&o->f, "--export-c", path, msg, sizeof msg) == 0) return 0;
    o->asked = 0;
    return so_err("%s; nothing was run", msg);
}

/* a run that failed: no header, an older FILE.h as it was */
static inline void se_drop(se_out *o)
{
    if (o->asked) ex_out_free(&o->f);
    o->asked = 0;
}

/* after training: the header of e's model (prefix name, origin for its first comment)
   into o, put in place; 0, or 2 after a message */
static inline int se_finish(se_out *o, ipup_emu *e, const char *name, const char *origin, int quiet)
{
    char msg[512];
    expc_info info;
    int rc, err;
    if (!o->asked) return 0;
    errno = 0;
    rc = expc_write(e, name, origin, ex_fd_write, &o->f.fd, &info, msg, sizeof msg);
    if (rc != IPUP_OK && rc != IPUP_ERR_IO) {
        se_drop(o);
        return so_err("--export-c: %s", msg);
    }
    err = rc == IPUP_OK ? ex_out_close(&o->f, 1) : (errno ? errno : EIO);
    se_drop(o); /* frees the name; removes the temporary file when it is still there */
    if (err)
        return so_err("--export-c: writing %s failed: %s; the file was not replaced (any older one "
                      "is as it was)",
                      o->f.path, strerror(err));
    if (!quiet)
        printf("exported %s: %s_predict, %d weight arrays, %lld weights (FNV-1a %016llx), scratch %lld floats\n",
               o->f.path, name, (int)info.tensors, (long long)info.floats, (unsigned long long)info.fnv1a,
               (long long)info.scratch);
    return 0;
}

#endif
