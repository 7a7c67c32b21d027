/* mnist_err.h - the error messages of the MNIST file readers (mnist_data.h,
 * mnist_ckpt.h): one way to say what failed. MIT licence.
 *
 * Every refusal of a reader writes "<path>: <what the result code means>: <what>"
 * into the caller's buffer of MNIST_ERR_LEN bytes (mnist_err_fail) and returns the
 * code. The <what> part is formatted by the library's ipup_snprintf (ipupipe_sched.h:
 * no allocator, no stdio, so mnist_ckpt.h may save after a program's startup phase);
 * the program compiles ipupipe_sched.h's implementation once (IPUPIPE_IMPLEMENTATION).
 * Thread safety: reentrant.
 */
#ifndef MNIST_ERR_H
#define MNIST_ERR_H

#include <stddef.h>
#include <stdint.h>
#include "ipupipe_sched.h" /* ipup_snprintf */

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_ERR_LEN 512

/* err (MNIST_ERR_LEN bytes, may be NULL) = "<path>: <meaning>: <what>"; returns code. */
static inline int mnist_err_fail(char *err, int code, const char *meaning, const char *path, const char *what) {
    if (err) (void)ipup_snprintf(err, MNIST_ERR_LEN, "%s: %s: %s", path ? path : "(null)", meaning, what);
    return code;
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_ERR_H */
