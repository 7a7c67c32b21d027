/* fw_print.h - printf-style output of the firmware images through semihosting, formatted
 * by the library's heap-free ipup_vsnprintf (newlib-nano's vsnprintf would link malloc).
 * Include it after ipupipe.h (or ipupipe_sched.h) and semihost.h. */
#ifndef FW_PRINT_H
#define FW_PRINT_H
#include <stdarg.h>

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void fw_printf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    (void)ipup_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fw_puts(buf);
}

#endif /* FW_PRINT_H */
