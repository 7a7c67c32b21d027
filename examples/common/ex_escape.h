/* ex_escape.h - text a user typed (a path, an argument, a layer id, a model text) made safe
 * for the generated file it goes into: one helper per output language, each writing into
 * a caller's buffer (no heap, no stdio). MIT licence.
 *
 *   ex_esc_c_comment(s, out, cap)  inside a C block comment, on one line
 *   ex_esc_c_string(s, out, cap)   between the quotes of a C string literal
 *   ex_esc_xml(s, out, cap)        XML 1.0 character data or an attribute value (SVG)
 *   ex_esc_json(s, out, cap)       between the quotes of a JSON string (RFC 8259)
 *
 * Each returns the length written (out is always terminated; cap >= 1). When the
 * escaped text does not fit, it ends at the last whole escape that fits and "..."
 * follows, so a cut never leaves half an escape. What each guarantees:
 *
 * - C comment: no "* /" or "/ *" pair (without the space), so the text can neither end
 *   the comment nor make gcc's -Wcomment fire; it does not begin with '/' nor end with
 *   '*', so it cannot form one with what is around it either; no two '?' in a row (no
 *   trigraph, C11 5.2.1.1, which could splice lines); no newline; a backslash, control
 *   bytes and bytes >= 0x80 as the text "\xHH".
 * - C string: '"', '\\' and '?' (trigraphs) escaped with a backslash; every byte outside
 *   ' '..'~' as a three-digit octal escape, so a following digit is never absorbed.
 * - XML: & < > " ' as entities; the control characters XML 1.0 forbids (2.2 Char: all
 *   below 0x20 but tab, newline and carriage return) and every byte that is not part of
 *   well-formed UTF-8 as U+FFFD (&#xFFFD;); well-formed UTF-8 is kept.
 * - JSON: '"' and '\\' escaped, control characters as \n, \t, \r or \u00XX; bytes that
 *   are not well-formed UTF-8 as \ufffd (a JSON text is UTF-8, RFC 8259 section 8.1);
 *   well-formed UTF-8 is kept.
 * Well-formed UTF-8 is that of the Unicode Standard, table 3-7 (RFC 3629, section 4):
 * no overlong forms, no surrogates, nothing above U+10FFFF.
 */
#ifndef EX_ESCAPE_H
#define EX_ESCAPE_H

#include <stddef.h>
#include <string.h>

typedef struct {
    char *out;
    size_t cap, n;
    int full; /* an escape did not fit: "..." ends the text */
} ex_esc_buf;

/* appends piece (k bytes) whole, or marks the buffer full (and appends nothing more) */
static inline void ex_esc_put(ex_esc_buf *b, const char *piece, size_t k) {
    if (b->full) return;
    if (b->n + k + 4 > b->cap) { /* room for "..." and the terminator */
        b->full = 1;
        if (b->n + 4 <= b->cap) {
            memcpy(b->out + b->n, "...", 3);
            b->n += 3;
        }
        return;
    }
    memcpy(b->out + b->n, piece, k);
    b->n += k;
}

static inline size_t ex_esc_end(ex_esc_buf *b) {
    if (b->cap) b->out[b->n < b->cap ? b->n : b->cap - 1] = 0;
    return b->n;
}

static inline void ex_esc_init(ex_esc_buf *b, char *out, size_t cap) {
    b->out = out;
    b->cap = cap;
    b->n = 0;
    b->full = 0;
    if (cap) out[0] = 0;
}

/* The length (2..4) of the well-formed UTF-8 sequence of a multi-byte character at s,
   or 0 (Unicode Standard, table 3-7). s is terminated, so reading stops at its end. */
static inline int ex_utf8_len(const unsigned char *s) {
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    int n, i;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;      /* no overlong form */
        else if (c == 0xED) hi = 0x9F; /* no surrogate */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;      /* no overlong form */
        else if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

static inline char ex_esc_hex(unsigned v) { return "0123456789abcdef"[v & 15u]; }

static inline size_t ex_esc_c_comment(const char *s, char *out, size_t cap) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    ex_esc_buf b;
    ex_esc_init(&b, out, cap);
    if (*p == '/') ex_esc_put(&b, " ", 1);
    for (; *p; p++) {
        unsigned char c = *p;
        if (c < 0x20 || c >= 0x7F || c == '\\') {
            char e[4] = {'\\', 'x', ex_esc_hex(c >> 4), ex_esc_hex(c)};
            ex_esc_put(&b, e, 4);
            continue;
        }
        ex_esc_put(&b, (const char *)p, 1);
        if ((c == '*' && (p[1] == '/' || !p[1])) || (c == '/' && p[1] == '*') ||
            (c == '?' && p[1] == '?'))
            ex_esc_put(&b, " ", 1);
    }
    return ex_esc_end(&b);
}

static inline size_t ex_esc_c_string(const char *s, char *out, size_t cap) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    ex_esc_buf b;
    ex_esc_init(&b, out, cap);
    for (; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\' || c == '?') {
            char e[2] = {'\\', (char)c};
            ex_esc_put(&b, e, 2);
        } else if (c < 0x20 || c >= 0x7F) {
            char e[4] = {'\\', (char)('0' + (c >> 6)), (char)('0' + ((c >> 3) & 7)),
                         (char)('0' + (c & 7))};
            ex_esc_put(&b, e, 4);
        } else ex_esc_put(&b, (const char *)p, 1);
    }
    return ex_esc_end(&b);
}

static inline size_t ex_esc_xml(const char *s, char *out, size_t cap) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    ex_esc_buf b;
    ex_esc_init(&b, out, cap);
    while (*p) {
        unsigned char c = *p;
        int k = c >= 0x80 ? ex_utf8_len(p) : 1;
        if (c == '&') ex_esc_put(&b, "&amp;", 5);
        else if (c == '<') ex_esc_put(&b, "&lt;", 4);
        else if (c == '>') ex_esc_put(&b, "&gt;", 4);
        else if (c == '"') ex_esc_put(&b, "&quot;", 6);
        else if (c == '\'') ex_esc_put(&b, "&apos;", 6);
        else if (k == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
            ex_esc_put(&b, "&#xFFFD;", 8);
            k = 1;
        } else ex_esc_put(&b, (const char *)p, (size_t)k);
        p += k;
    }
    return ex_esc_end(&b);
}

static inline size_t ex_esc_json(const char *s, char *out, size_t cap) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    ex_esc_buf b;
    ex_esc_init(&b, out, cap);
    while (*p) {
        unsigned char c = *p;
        int k = c >= 0x80 ? ex_utf8_len(p) : 1;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            ex_esc_put(&b, e, 2);
        } else if (c == '\n') ex_esc_put(&b, "\\n", 2);
        else if (c == '\t') ex_esc_put(&b, "\\t", 2);
        else if (c == '\r') ex_esc_put(&b, "\\r", 2);
        else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', ex_esc_hex(c >> 4), ex_esc_hex(c)};
            ex_esc_put(&b, e, 6);
        } else if (k == 0) {
            ex_esc_put(&b, "\\ufffd", 6);
            k = 1;
        } else ex_esc_put(&b, (const char *)p, (size_t)k);
        p += k;
    }
    return ex_esc_end(&b);
}

#endif /* EX_ESCAPE_H */
