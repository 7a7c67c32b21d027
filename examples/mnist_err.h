/* mnist_err.h - the error messages of the MNIST file readers (mnist_data.h,
 * mnist_ckpt.h): one heap-free, stdio-free formatter and one way to say what failed.
 * MIT licence.
 *
 * Every refusal of a reader writes "<path>: <what the result code means>: <what>"
 * into the caller's buffer of MNIST_ERR_LEN bytes (mnist_err_fail) and returns the
 * code. mnist_err_fmt formats the <what> part: the snprintf contract (returns the
 * length it would write, NUL-terminates when cap > 0) for the conversions the
 * readers use: %d %i %u %x %X %c %s %%, flag '0', a width, length l or ll. It
 * touches no allocator and no stdio, so mnist_ckpt.h may save after a program's
 * startup phase. Thread safety: reentrant.
 */
#ifndef MNIST_ERR_H
#define MNIST_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MNIST_ERR_LEN 512

#if defined(__GNUC__) || defined(__clang__)
#define MNIST_ERR_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define MNIST_ERR_PRINTF_(f, a)
#endif

static inline void mnist_err_put_(char *buf, size_t cap, size_t *n, char c) {
    if (*n + 1 < cap) buf[*n] = c;
    (*n)++;
}

/* The digits of v in base 10 or 16, right-aligned in width (zero or space padded). */
static inline void mnist_err_num_(char *buf, size_t cap, size_t *n, unsigned long long v, int neg, int base,
                                  int upper, int width, int zero) {
    char d[24];
    int k = 0, len;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        d[k++] = digits[v % (unsigned)base];
        v /= (unsigned)base;
    } while (v);
    len = k + neg;
    if (neg && zero) mnist_err_put_(buf, cap, n, '-');
    for (; len < width; len++) mnist_err_put_(buf, cap, n, zero ? '0' : ' ');
    if (neg && !zero) mnist_err_put_(buf, cap, n, '-');
    while (k) mnist_err_put_(buf, cap, n, d[--k]);
}

static inline int mnist_err_vfmt(char *buf, size_t cap, const char *f, va_list ap) {
    size_t n = 0;
    for (; *f; f++) {
        int zero = 0, width = 0, lng = 0;
        if (*f != '%') {
            mnist_err_put_(buf, cap, &n, *f);
            continue;
        }
        f++;
        if (*f == '0') zero = 1, f++;
        while (*f >= '0' && *f <= '9') width = width * 10 + (*f++ - '0');
        while (*f == 'l') lng++, f++;
        switch (*f) {
        case 'd':
        case 'i': {
            long long v = lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int);
            unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
            mnist_err_num_(buf, cap, &n, u, v < 0, 10, 0, width, zero);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            unsigned long long u = lng >= 2 ? va_arg(ap, unsigned long long)
                                   : lng    ? va_arg(ap, unsigned long)
                                            : va_arg(ap, unsigned);
            mnist_err_num_(buf, cap, &n, u, 0, *f == 'u' ? 10 : 16, *f == 'X', width, zero);
            break;
        }
        case 'c': mnist_err_put_(buf, cap, &n, (char)va_arg(ap, int)); break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            while (*s) mnist_err_put_(buf, cap, &n, *s++);
            break;
        }
        case '%': mnist_err_put_(buf, cap, &n, '%'); break;
        default:
            if (!*f) f--; /* a lone '%' at the end */
            break;
        }
    }
    if (cap) buf[n < cap ? n : cap - 1] = 0;
    return (int)n;
}

static inline int mnist_err_fmt(char *buf, size_t cap, const char *f, ...) MNIST_ERR_PRINTF_(3, 4);
static inline int mnist_err_fmt(char *buf, size_t cap, const char *f, ...) {
    va_list ap;
    int n;
    va_start(ap, f);
    n = mnist_err_vfmt(buf, cap, f, ap);
    va_end(ap);
    return n;
}

/* err (MNIST_ERR_LEN bytes, may be NULL) = "<path>: <meaning>: <what>"; returns code. */
static inline int mnist_err_fail(char *err, int code, const char *meaning, const char *path, const char *what) {
    if (err) mnist_err_fmt(err, MNIST_ERR_LEN, "%s: %s: %s", path ? path : "(null)", meaning, what);
    return code;
}

#ifdef __cplusplus
}
#endif
#endif /* MNIST_ERR_H */
