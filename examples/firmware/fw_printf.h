/* fw_printf.h - a small vsnprintf for the firmware proof: no heap, no stdio, no locale.
   newlib-nano's vsnprintf links _malloc_r/_realloc_r (its string sink can grow an
   asprintf buffer), which this firmware must not link; the ipupipe headers format their
   error messages through IPUPIPE_VSNPRINTF, which main.c points here.

   Supports what the headers use: flags "-+ 0#", width and precision (numbers or *),
   length modifiers hh h l ll z j t L, conversions d i u x X o c s p f F e E g G %.
   Floating point is printed by exact decimal scaling in double arithmetic (software on a
   single-precision FPU: slow, but only error messages and reports go through here);
   the last digit may differ from glibc's correctly rounded output (exact ties such as
   %.0f of 2.5 round up here, to even there).
   Like C99 vsnprintf: writes at most len-1 characters plus the NUL, returns the length
   the whole output would have. */
#ifndef FW_PRINTF_H
#define FW_PRINTF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fw_out { char *buf; size_t len, pos; } fw_out;

static inline void fw_out_c(fw_out *o, char c)
{
    if (o->buf && o->pos + 1 < o->len) o->buf[o->pos] = c;
    o->pos++;
}

static inline void fw_out_pad(fw_out *o, char c, int n)
{
    while (n-- > 0) fw_out_c(o, c);
}

/* emit a body of n chars with sign/prefix, honouring width, '-' and '0' */
static inline void fw_out_field(fw_out *o, const char *pre, int npre, const char *body, int nbody,
                         int zeros, int width, int left, int zero_pad)
{
    int total = npre + zeros + nbody, i;
    if (!left && !zero_pad) fw_out_pad(o, ' ', width - total);
    for (i = 0; i < npre; i++) fw_out_c(o, pre[i]);
    if (!left && zero_pad) fw_out_pad(o, '0', width - total);
    fw_out_pad(o, '0', zeros);
    for (i = 0; i < nbody; i++) fw_out_c(o, body[i]);
    if (left) fw_out_pad(o, ' ', width - total);
}

static inline int fw_utoa(char *tmp, uint64_t v, unsigned base, int upper)
{
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char rev[24];
    int n = 0, i;
    do { rev[n++] = dig[v % base]; v /= base; } while (v);
    for (i = 0; i < n; i++) tmp[i] = rev[n - 1 - i];
    return n;
}

/* digits of a non-negative finite double: fixed (%f) with prec decimals, or scientific
   (%e) with prec decimals; returns length written into tmp (size >= 400) */
static inline int fw_dtoa(char *tmp, double v, int prec, int sci, int *exp10_out)
{
    int e10 = 0, n = 0, i;
    double scale;
    char digs[64];
    int nd;
    if (prec > 40) prec = 40;
    if (sci && prec > 16) prec = 16; /* digits must stay below 2^64 */
    if (sci) {
        if (v != 0.0) {
            while (v >= 10.0) { v /= 10.0; e10++; }
            while (v < 1.0) { v *= 10.0; e10--; }
        }
        scale = 1.0;
        for (i = 0; i < prec; i++) scale *= 10.0;
        v = v * scale + 0.5;
        if (v >= 10.0 * scale) { v /= 10.0; e10++; }
        /* v < 10^(prec+1) <= 2^53 keeps the digits exact for prec <= 15 */
        nd = 0;
        {
            double q = v;
            int k;
            for (k = 0; k < prec + 1; k++) {
                double d = q - 10.0 * (double)(uint64_t)(q / 10.0);
                digs[nd++] = (char)('0' + (int)d);
                q = (double)(uint64_t)(q / 10.0);
            }
        }
        tmp[n++] = digs[nd - 1];
        if (prec > 0) tmp[n++] = '.';
        for (i = nd - 2; i >= 0; i--) tmp[n++] = digs[i];
        *exp10_out = e10;
        return n;
    }
    /* fixed (v < 1e18, see the caller): integer part exactly in uint64_t, fraction by
       scaling one decimal at a time */
    {
        uint64_t u;
        double fp;
        char irev[24];
        int ni = 0;
        scale = 1.0;
        for (i = 0; i < prec; i++) scale *= 10.0;
        v = v + 0.5 / scale;                 /* round at the last decimal */
        u = (uint64_t)v;
        fp = v - (double)u;
        do { irev[ni++] = (char)('0' + (int)(u % 10u)); u /= 10u; } while (u);
        for (i = ni - 1; i >= 0; i--) tmp[n++] = irev[i];
        if (prec > 0) {
            tmp[n++] = '.';
            for (i = 0; i < prec; i++) {
                int d;
                fp *= 10.0;
                d = (int)fp;
                if (d > 9) d = 9;
                tmp[n++] = (char)('0' + d);
                fp -= (double)d;
            }
        }
        *exp10_out = 0;
        return n;
    }
}

static inline int fw_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
    fw_out o;
    o.buf = buf; o.len = len; o.pos = 0;
    while (*fmt) {
        int left = 0, plus = 0, space = 0, zero = 0, alt = 0, width = 0, prec = -1, lmod = 0;
        char c = *fmt++;
        if (c != '%') { fw_out_c(&o, c); continue; }
        for (;; fmt++) {
            if (*fmt == '-') left = 1;
            else if (*fmt == '+') plus = 1;
            else if (*fmt == ' ') space = 1;
            else if (*fmt == '0') zero = 1;
            else if (*fmt == '#') alt = 1;
            else break;
        }
        if (*fmt == '*') { width = va_arg(ap, int); if (width < 0) { left = 1; width = -width; } fmt++; }
        else while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
        if (*fmt == '.') {
            fmt++; prec = 0;
            if (*fmt == '*') { prec = va_arg(ap, int); fmt++; }
            else while (*fmt >= '0' && *fmt <= '9') prec = prec * 10 + (*fmt++ - '0');
        }
        /* lmod: 0 int, 1 long, 2 long long, 3 size_t, 4 intmax_t, 5 ptrdiff_t, -1 char, -2 short */
        if (*fmt == 'h') { fmt++; lmod = -2; if (*fmt == 'h') { fmt++; lmod = -1; } }
        else if (*fmt == 'l') { fmt++; lmod = 1; if (*fmt == 'l') { fmt++; lmod = 2; } }
        else if (*fmt == 'z') { fmt++; lmod = 3; }
        else if (*fmt == 'j') { fmt++; lmod = 4; }
        else if (*fmt == 't') { fmt++; lmod = 5; }
        else if (*fmt == 'L') { fmt++; }
        c = *fmt ? *fmt++ : '\0';
        switch (c) {
        case 'd': case 'i': {
            int64_t v;
            uint64_t u;
            char tmp[24], pre[1];
            int n, np = 0, zeros;
            if (lmod == 1) v = va_arg(ap, long);
            else if (lmod == 2) v = va_arg(ap, long long);
            else if (lmod == 3) v = (int64_t)va_arg(ap, size_t);
            else if (lmod == 4) v = va_arg(ap, intmax_t);
            else if (lmod == 5) v = va_arg(ap, ptrdiff_t);
            else v = va_arg(ap, int);
            if (lmod == -1) v = (signed char)v;
            if (lmod == -2) v = (short)v;
            u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            if (v < 0) pre[np++] = '-'; else if (plus) pre[np++] = '+'; else if (space) pre[np++] = ' ';
            n = (prec == 0 && u == 0) ? 0 : fw_utoa(tmp, u, 10, 0);
            zeros = prec > n ? prec - n : 0;
            fw_out_field(&o, pre, np, tmp, n, zeros, width, left, zero && prec < 0);
            break;
        }
        case 'u': case 'x': case 'X': case 'o': case 'p': {
            uint64_t u;
            char tmp[24], pre[2];
            int n, np = 0, zeros;
            unsigned base = c == 'u' ? 10u : c == 'o' ? 8u : 16u;
            if (c == 'p') { u = (uint64_t)(uintptr_t)va_arg(ap, void *); alt = 1; }
            else if (lmod == 1) u = va_arg(ap, unsigned long);
            else if (lmod == 2) u = va_arg(ap, unsigned long long);
            else if (lmod == 3) u = va_arg(ap, size_t);
            else if (lmod == 4) u = va_arg(ap, uintmax_t);
            else if (lmod == 5) u = (uint64_t)va_arg(ap, ptrdiff_t);
            else u = va_arg(ap, unsigned int);
            if (lmod == -1) u = (unsigned char)u;
            if (lmod == -2) u = (unsigned short)u;
            n = (prec == 0 && u == 0) ? 0 : fw_utoa(tmp, u, base, c == 'X');
            if (alt && base == 16u && (u != 0 || c == 'p')) { pre[np++] = '0'; pre[np++] = c == 'X' ? 'X' : 'x'; }
            if (alt && base == 8u && (n == 0 || tmp[0] != '0')) pre[np++] = '0';
            zeros = prec > n ? prec - n : 0;
            fw_out_field(&o, pre, np, tmp, n, zeros, width, left, zero && prec < 0);
            break;
        }
        case 'c': {
            char ch = (char)va_arg(ap, int);
            fw_out_field(&o, "", 0, &ch, 1, 0, width, left, 0);
            break;
        }
        case 's': {
            const char *s = va_arg(ap, const char *);
            int n = 0;
            if (!s) s = "(null)";
            while (s[n] && (prec < 0 || n < prec)) n++;
            fw_out_field(&o, "", 0, s, n, 0, width, left, 0);
            break;
        }
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': {
            double v = va_arg(ap, double);
            char tmp[64], pre[1], etmp[8];
            int n, np = 0, e10 = 0, sci = (c == 'e' || c == 'E'), upper = (c == 'E' || c == 'G' || c == 'F');
            int gstyle = (c == 'g' || c == 'G');
            if (prec < 0) prec = 6;
            if (v != v) { fw_out_field(&o, "", 0, upper ? "NAN" : "nan", 3, 0, width, left, 0); break; }
            if (v < 0.0 || (v == 0.0 && 1.0 / v < 0.0)) { pre[np++] = '-'; v = -v; }
            else if (plus) pre[np++] = '+'; else if (space) pre[np++] = ' ';
            if (v > 1.7976931348623157e308) {
                fw_out_field(&o, pre, np, upper ? "INF" : "inf", 3, 0, width, left, 0);
                break;
            }
            if (gstyle) {
                /* C99 7.19.6.1: P = prec (1 if 0); X = exponent; %e if X < -4 or X >= P */
                int P = prec == 0 ? 1 : prec, x = 0;
                (void)fw_dtoa(tmp, v, P - 1, 1, &x);
                if (x < -4 || x >= P) { sci = 1; prec = P - 1; }
                else { sci = 0; prec = P - 1 - x; }
            }
            if (!sci && v >= 1e18) sci = 1; /* beyond exact uint64_t: print as %e */
            n = fw_dtoa(tmp, v, prec, sci, &e10);
            if (gstyle && !alt) {
                int k, dot = -1;
                for (k = 0; k < n; k++) if (tmp[k] == '.') dot = k;
                if (dot >= 0) { while (n > dot && tmp[n - 1] == '0') n--; if (n == dot + 1) n = dot; }
            }
            if (sci) {
                int ae = e10 < 0 ? -e10 : e10, k = 0;
                etmp[k++] = upper ? 'E' : 'e';
                etmp[k++] = e10 < 0 ? '-' : '+';
                if (ae >= 100) etmp[k++] = (char)('0' + ae / 100);
                etmp[k++] = (char)('0' + ae / 10 % 10);
                etmp[k++] = (char)('0' + ae % 10);
                {
                    int j;
                    for (j = 0; j < k; j++) tmp[n++] = etmp[j];
                }
            }
            fw_out_field(&o, pre, np, tmp, n, 0, width, left, zero);
            break;
        }
        case '%':
            fw_out_c(&o, '%');
            break;
        default: /* unknown conversion: print it as is */
            fw_out_c(&o, '%');
            if (c) fw_out_c(&o, c);
            break;
        }
    }
    if (o.buf && o.len > 0) o.buf[o.pos < o.len ? o.pos : o.len - 1] = '\0';
    return (int)o.pos;
}

static inline int fw_snprintf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = fw_vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n;
}

#endif
