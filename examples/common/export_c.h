/* export_c.h - writes a trained ipupipe model as one self-contained C header: the model
 * text, the input shape, every trained weight as a `static const float` array, and a
 * generated `<name>_predict` that needs only ipupipe_kernels.h (no emulator, no heap).
 * Used by mnist-train --export-c and by the firmware's inference image
 * (examples/firmware/gen_infer.c). MIT licence.
 *
 *   expc_name_check(name, msg, len)        is name a usable C prefix? (an identifier that
 *                                          starts with a letter, no C keyword, not ipup/ipupipe)
 *   expc_name_from_path(path, out, cap)    the default prefix: the file's base name
 *   expc_name_choose(path, given, out, cap, msg, len)
 *                                          --export-name or the default, checked (at startup)
 *   expc_check(e, msg, len)                can the model of e be exported? (before a run)
 *   expc_write(e, name, origin, write, user, &info, msg, len)
 *                                          the header through an ipup_write_fn
 *
 * The generated forward makes exactly the kernel calls of the emulator's evaluation
 * forward (ipupipe.h, ipup__stage_fwd with no stash entry): the same kernels, in the
 * same order, with the same shapes, in chunks of the emulator's micro-batch B. A dense
 * or conv layer followed by a ReLU in the same pipeline stage runs as the fused
 * ipup_dense_relu_fwd_f32 / ipup_conv3x3_relu_fwd_f32, as there; a ReLU that begins a
 * stage runs on its own; flatten and dropout (identity at inference) are views. So,
 * built with the same kernels and flags, `<name>_predict` gives the bits of
 * ipup_predict on the emulator it was exported from. The outputs are the input of the
 * loss layer, which the forward stops before (as ipup_predict does): the logits under a
 * softmax cross-entropy (xent) last layer, the model's predictions under a mean squared
 * error (mse) one; and their arg-max class (first on ties; for a regression model
 * usually not wanted: pass NULL). <NAME>_LOSS says which ("xent" or "mse").
 *
 * A concurrent stage (ipup_config.concurrent, docs/schedules.md §9) is exported as the one
 * layer its branches split: each weight array is the unsplit tensor (the branches' slices
 * concatenated along the output units), the forward computes all units in one call with
 * the element-wise layers after it unfused (as each branch runs them), and
 * <NAME>_MAP_TEXT gives the mapping it was trained on. Every text of the program's or the
 * user's that reaches the header (the origin, layer ids, tensor names) goes through
 * ex_escape.h, so no text can end a comment or a string early.
 *
 * Weights are printed with 9 significant digits ("%.8e"), which round-trips every
 * finite float through a correctly rounding compiler; <NAME>_WEIGHTS_FNV1A, the FNV-1a
 * hash of their bits computed here from the live tensors, and <name>_weights_fnv1a(),
 * the same hash of the arrays as compiled, let a program check that. A weight that is
 * NaN or infinite is refused (IPUP_ERR_NUMERIC) before anything is written.
 *
 * Writing allocates nothing (a 4 KB buffer on the stack), so the trainer calls it
 * after its startup allocations are done. Reads the emulator's stage layout
 * (e->core.S, e->core.stages[s].first/last), its micro-batch e->core.B and its layers
 * (e->core.layers).
 * Include after ipupipe.h; one translation unit defines IPUPIPE_IMPLEMENTATION.
 */
#ifndef EXPORT_C_H
#define EXPORT_C_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "ex_escape.h"
#include "ipupipe.h"

#define EXPC_NAME_MAX 32 /* characters of a prefix */

/* What expc_write wrote. */
typedef struct {
    int32_t tensors;   /* weight arrays */
    int64_t floats;    /* weights in them */
    int64_t scratch;   /* floats of scratch predict needs (the portable kernels') */
    uint64_t fnv1a;    /* <NAME>_WEIGHTS_FNV1A */
    char upper[EXPC_NAME_MAX + 1];
} expc_info;

#if defined(__GNUC__) || defined(__clang__)
static inline int expc_fail(char *msg, size_t len, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#endif
static inline int expc_fail(char *msg, size_t len, int code, const char *fmt, ...) {
    va_list ap;
    if (msg && len) {
        va_start(ap, fmt);
        ipup_vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

static inline int expc_is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static inline int expc_is_alnum(char c) { return expc_is_alpha(c) || (c >= '0' && c <= '9'); }

/* 1 when name is a keyword of C (C11 6.4.1, and C23's new ones): refused as a prefix */
static inline int expc_is_keyword(const char *name) {
    static const char *const kw[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert",
        "thread_local", "true", "typeof", "typeof_unqual"};
    size_t k;
    for (k = 0; k < sizeof kw / sizeof kw[0]; k++)
        if (strcmp(name, kw[k]) == 0) return 1;
    return 0;
}

/* 1 when the generated names of prefix name (name_..., NAME_...) would fall in the
   library's name spaces: ipup_ and ipup__ (functions, types), IPUP_ and IPUPIPE_ (macros).
   Compared without case, since both case forms are generated. */
static inline int expc_is_library_prefix(const char *name) {
    static const char *const lib[] = {"IPUP", "IPUPIPE"};
    size_t k, i;
    for (k = 0; k < 2; k++) {
        const char *p = lib[k];
        for (i = 0; p[i] && (name[i] == p[i] || name[i] == p[i] - 'A' + 'a'); i++) continue;
        if (!p[i] && (name[i] == 0 || name[i] == '_')) return 1;
    }
    return 0;
}

/* IPUP_OK when name is a usable prefix: a C identifier of 1..EXPC_NAME_MAX characters that
   starts with a letter (a leading '_' gives reserved identifiers, C11 7.1.3), is not a C
   keyword, and is not the library's prefix (ipup, ipupipe, ipup_..., any case); else
   IPUP_ERR_ARG with a message. The message quotes name escaped (ex_esc_c_string). */
static inline int expc_name_check(const char *name, char *msg, size_t len) {
    size_t i, n = name ? strlen(name) : 0;
    char q[4 * (EXPC_NAME_MAX + 2) + 8];
    ex_esc_c_string(name ? name : "", q, sizeof q);
    if (n == 0 || n > EXPC_NAME_MAX)
        return expc_fail(msg, len, IPUP_ERR_ARG, "the name '%s' must have 1 to %d characters", q, EXPC_NAME_MAX);
    if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
        return expc_fail(msg, len, IPUP_ERR_ARG, "the name '%s' must start with a letter (it prefixes C identifiers)",
                         q);
    for (i = 0; i < n; i++)
        if (!expc_is_alnum(name[i])) {
            char one[2], c[8];
            one[0] = name[i];
            one[1] = 0;
            ex_esc_c_string(one, c, sizeof c);
            return expc_fail(msg, len, IPUP_ERR_ARG,
                             "the name '%s' has '%s'; use letters, digits and '_' (it prefixes C identifiers)", q, c);
        }
    if (expc_is_keyword(name))
        return expc_fail(msg, len, IPUP_ERR_ARG, "the name '%s' is a C keyword (it prefixes C identifiers); give another",
                         q);
    if (expc_is_library_prefix(name))
        return expc_fail(msg, len, IPUP_ERR_ARG,
                         "the name '%s' would generate names in ipupipe's own name spaces (ipup_, IPUP_, IPUPIPE_), "
                         "which clash in a program that includes ipupipe.h; give another",
                         q);
    return IPUP_OK;
}

/* The default prefix of an export to path: its last component up to the first '.',
   every other character that cannot be in a C identifier as '_', with "m" in front
   when it would not start with a letter, cut to EXPC_NAME_MAX ("out/mlp-v2.h" -> "mlp_v2").
   "model" when nothing is left. out has cap >= EXPC_NAME_MAX + 1 bytes. */
static inline void expc_name_from_path(const char *path, char *out, size_t cap) {
    const char *base = path, *p;
    size_t n = 0;
    for (p = path; *p; p++)
        if (*p == '/') base = p + 1;
    if (*base && *base != '.' && !((*base >= 'a' && *base <= 'z') || (*base >= 'A' && *base <= 'Z')) && n + 1 < cap)
        out[n++] = 'm'; /* a name starts with a letter */
    for (p = base; *p && *p != '.' && n < EXPC_NAME_MAX && n + 1 < cap; p++) out[n++] = expc_is_alnum(*p) ? *p : '_';
    out[n] = 0;
    if (n == 0) ipup_snprintf(out, cap, "model");
}

/* The prefix of an export to path: given (--export-name) when not NULL, else the file's
   (expc_name_from_path), checked with expc_name_check. IPUP_OK and out (cap >=
   EXPC_NAME_MAX + 1), or IPUP_ERR_ARG with a message that names the option to change:
   "--export-name: ..." or "--export-c PATH: ...; give --export-name NAME". Tools call it
   at startup, so that a name they would refuse after training is refused before. */
static inline int expc_name_choose(const char *path, const char *given, char *out, size_t cap, char *msg,
                                   size_t len) {
    char why[400], p[256];
    if (given) {
        if (expc_name_check(given, why, sizeof why) != IPUP_OK)
            return expc_fail(msg, len, IPUP_ERR_ARG, "--export-name: %s", why);
        ipup_snprintf(out, cap, "%s", given);
        return IPUP_OK;
    }
    expc_name_from_path(path ? path : "", out, cap);
    if (expc_name_check(out, why, sizeof why) == IPUP_OK) return IPUP_OK;
    ex_esc_c_string(path ? path : "", p, sizeof p);
    {
        size_t n = strlen(why), k = strlen("; give another");
        if (n > k && strcmp(why + n - k, "; give another") == 0) why[n - k] = 0;
    }
    return expc_fail(msg, len, IPUP_ERR_ARG, "--export-c %s: %s; give --export-name NAME", p, why);
}

/* IPUP_OK when the model of the initialised emulator e can be exported; else
   IPUP_ERR_ARG (not initialised) or IPUP_ERR_UNSUPPORTED with a message naming the
   first layer that cannot be. */
static inline int expc_check(const ipup_emu *e, char *msg, size_t len) {
    int32_t l;
    if (!e || !e->initialised)
        return expc_fail(msg, len, IPUP_ERR_ARG, "the emulator is not initialised (call ipup_init first)");
    for (l = 0; l < e->core.n_layers; l++) {
        ipup_layer_kind k = e->core.layers[l].info.kind;
        int last = l == e->core.n_layers - 1;
        if ((k == IPUP_LAYER_SOFTMAX_XENT || k == IPUP_LAYER_MSE || k == IPUP_LAYER_BCE) && last) continue;
        if (k != IPUP_LAYER_SOFTMAX_XENT && k != IPUP_LAYER_MSE && k != IPUP_LAYER_BCE && k != IPUP_LAYER_NONE &&
            k <= IPUP_LAYER_RES_END && !last)
            continue;
        return expc_fail(msg, len, IPUP_ERR_UNSUPPORTED,
                         "layer %d '%s' (%s) cannot be exported: the C export knows every layer kind of the model text "
                         "under a softmax cross-entropy (xent), mean squared error (mse) or binary cross-entropy (bce) "
                         "last layer",
                         (int)l, e->core.model.layers[l].id, ipup_layer_kind_name(k));
    }
    return IPUP_OK;
}

/* 1 for a loss layer: xent, mse or bce (expc_check allows one, as the last layer). */
static inline int expc_is_loss(ipup_layer_kind k) {
    return k == IPUP_LAYER_SOFTMAX_XENT || k == IPUP_LAYER_MSE || k == IPUP_LAYER_BCE;
}

/* 1 when the model of e ends with an mse loss (a regression model), 0 for xent or bce (logits). */
static inline int expc_is_mse(const ipup_emu *e) { return e->core.layers[e->core.n_layers - 1].info.kind == IPUP_LAYER_MSE; }
/* the loss's name: "xent", "mse" or "bce" */
static inline const char *expc_loss_name(const ipup_emu *e) {
    return ipup_layer_kind_name(e->core.layers[e->core.n_layers - 1].info.kind);
}

/* Batch norm folding: a batch norm (inference mode: y = x s + t per channel, s = gamma /
   sqrt(var + eps), t = beta - mean s, as ipup_batchnorm_fwd_infer_f32 computes them) right
   after a dense, conv or depthwise layer is folded into that layer's arrays, w' = w s (each
   output unit's column) and b' = b s + t, and makes no call. The outputs then differ from
   ipup_predict's (which runs the two layers) by rounding only: (w x + b) s + t against
   (w s) x + (b s + t). Any other batch norm (after an activation, a pool, a block's add)
   runs as ipup_batchnorm_fwd_infer_f32 on its exported gamma, beta, mean and variance,
   with ipup_predict's bits. */
static inline int expc_bn_folds(const ipup_emu *e, int32_t l) {
    ipup_layer_kind k;
    if (l < 1 || l >= e->core.n_layers || e->core.layers[l].info.kind != IPUP_LAYER_BATCHNORM) return 0;
    k = e->core.layers[l - 1].info.kind;
    return k == IPUP_LAYER_DENSE || k == IPUP_LAYER_CONV3X3 || k == IPUP_LAYER_CONV2D || k == IPUP_LAYER_DWCONV;
}
static inline float expc_bn_eps(const ipup_emu *e, int32_t l) {
    return e->core.model.layers[l].eps > 0.0f ? e->core.model.layers[l].eps : 1e-3f;
}

/* ---------------------------------------------------------------- buffered output */

typedef struct {
    ipup_write_fn write;
    void *user;
    int failed;
    size_t len;
    char buf[4096];
} expc_out;

static inline void expc_flush(expc_out *o) {
    if (!o->failed && o->len && o->write(o->user, o->buf, o->len) != 0) o->failed = 1;
    o->len = 0;
}

#if defined(__GNUC__) || defined(__clang__)
static inline void expc_put(expc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
/* Appends formatted text (one piece is at most 1 KB). */
static inline void expc_put(expc_out *o, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    int k;
    va_start(ap, fmt);
    k = ipup_vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k >= sizeof tmp) k = (int)sizeof tmp - 1;
    if (o->len + (size_t)k > sizeof o->buf) expc_flush(o);
    memcpy(o->buf + o->len, tmp, (size_t)k);
    o->len += (size_t)k;
}

/* FNV-1a, 64-bit (Fowler, Noll, Vo: offset basis 14695981039346656037, prime
   1099511628211), over the IEEE-754 bits of n floats, each as 4 bytes little-endian. */
static inline uint64_t expc_fnv1a(uint64_t h, const float *x, int64_t n) {
    int64_t i;
    int k;
    for (i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        for (k = 0; k < 4; k++) {
            h ^= (u >> (8 * k)) & 0xFFu;
            h *= UINT64_C(1099511628211);
        }
    }
    return h;
}
#define EXPC_FNV_BASIS UINT64_C(14695981039346656037)

/* ---------------------------------------------------------------- the header's parts */

/* The model as ipup_model_parse text, into buf. */
static inline void expc_model_text(const ipup_emu *e, char *buf, size_t cap) {
    size_t n = 0;
    int32_t l;
    buf[0] = 0;
    for (l = 0; l < e->core.n_layers && n + 1 < cap; l++) {
        const ipup_layer *L = &e->core.model.layers[l];
        const ipup_layer_info *I = &e->core.layers[l].info;
        const ipup_layer_kind pk = l ? e->core.model.layers[l - 1].kind : IPUP_LAYER_NONE;
        const char *sep = (l && pk != IPUP_LAYER_RES_BEGIN && pk != IPUP_LAYER_RES_SHORTCUT &&
                           L->kind != IPUP_LAYER_RES_SHORTCUT && L->kind != IPUP_LAYER_RES_END) ? "," : "";
        const char *pad = L->same ? "same" : "valid";
        int k;
        switch (L->kind) {
        case IPUP_LAYER_CONV2D:
            k = ipup_snprintf(buf + n, cap - n, "%sconv%dk%dx%ds%dx%d%s", sep, (int)L->units, (int)I->kh, (int)I->kw,
                              (int)I->sh, (int)I->sw, pad);
            break;
        case IPUP_LAYER_DWCONV:
            k = ipup_snprintf(buf + n, cap - n, "%sdw%dx%ds%dx%d%s", sep, (int)I->kh, (int)I->kw, (int)I->sh, (int)I->sw, pad);
            break;
        case IPUP_LAYER_AVGPOOL:
            k = ipup_snprintf(buf + n, cap - n, "%savgpool%dx%ds%dx%d", sep, (int)I->kh, (int)I->kw, (int)I->sh, (int)I->sw);
            break;
        case IPUP_LAYER_LEAKY_RELU: k = ipup_snprintf(buf + n, cap - n, "%sleaky%.9g", sep, (double)L->alpha); break;
        case IPUP_LAYER_RES_BEGIN: k = ipup_snprintf(buf + n, cap - n, "%sres(", sep); break;
        case IPUP_LAYER_RES_SHORTCUT: k = ipup_snprintf(buf + n, cap - n, "|"); break;
        case IPUP_LAYER_RES_END: k = ipup_snprintf(buf + n, cap - n, ")"); break;
        case IPUP_LAYER_DENSE: k = ipup_snprintf(buf + n, cap - n, "%sdense%d", sep, (int)L->units); break;
        case IPUP_LAYER_CONV3X3: k = ipup_snprintf(buf + n, cap - n, "%sconv%d", sep, (int)L->units); break;
        case IPUP_LAYER_DROPOUT: k = ipup_snprintf(buf + n, cap - n, "%sdropout%g", sep, (double)L->rate); break;
        case IPUP_LAYER_MAXPOOL2: k = ipup_snprintf(buf + n, cap - n, "%smaxpool2", sep); break;
        case IPUP_LAYER_SOFTMAX_XENT: k = ipup_snprintf(buf + n, cap - n, "%sxent", sep); break;
        case IPUP_LAYER_MSE: k = ipup_snprintf(buf + n, cap - n, "%smse", sep); break;
        default: k = ipup_snprintf(buf + n, cap - n, "%s%s", sep, ipup_layer_kind_name(L->kind)); break;
        }
        if (k < 0) break;
        n += (size_t)k;
        if (n >= cap) n = cap - 1;
    }
}

/* Floats of one activation buffer per sample: the largest output of a layer that
   computes (views write nothing), and the largest tensor a residual block keeps. */
static inline int32_t expc_act_floats(const ipup_emu *e) {
    int32_t l, mx = 1;
    for (l = 0; l < e->core.n_layers; l++) {
        const ipup_layer_info *I = &e->core.layers[l].info;
        if (I->kind == IPUP_LAYER_FLATTEN || I->kind == IPUP_LAYER_DROPOUT || expc_is_loss(I->kind)) continue;
        if (I->out_n > mx) mx = I->out_n;
        if (I->in_n > mx && I->kind >= IPUP_LAYER_RES_BEGIN) mx = I->in_n;
    }
    return mx;
}
/* 1 when the model has residual blocks: two more buffers (the block input, the main output) */
static inline int expc_has_res(const ipup_emu *e) {
    int32_t l;
    for (l = 0; l < e->core.n_layers; l++)
        if (e->core.layers[l].info.kind == IPUP_LAYER_RES_BEGIN) return 1;
    return 0;
}
/* floats of scratch the general convolutions need (ipup_conv2d_scratch_floats: the same
   figure in every build) */
static inline int64_t expc_conv2d_scratch(const ipup_emu *e) {
    int32_t l;
    int64_t mx = 0;
    for (l = 0; l < e->core.n_layers; l++) {
        const ipup_layer_info *I = &e->core.layers[l].info;
        ipup_conv2d_shape sh;
        int64_t f;
        if (I->kind != IPUP_LAYER_CONV2D) continue;
        ipup_conv2d_shape_init(&sh, I->in_h, I->in_w, I->in_c, I->out_c, I->kh, I->kw, I->sh, I->sw,
                               e->core.model.layers[l].same);
        f = (int64_t)ipup_conv2d_scratch_floats(&sh, e->core.B);
        if (f > mx) mx = f;
    }
    return mx;
}

/* <NAME>_MAP_TEXT: the stage -> IPU mapping of a model with concurrent stages, as
   ipup_sched_map_parse reads it ("0,[1,2],2,3"); its branches are exported as one layer. */
static inline void expc_put_map(expc_out *o, const ipup_emu *e, const char *U) {
    int32_t s, b;
    expc_put(o, "#define %s_MAP_TEXT \"", U);
    for (s = 0; s < e->core.S; s++) {
        int32_t n = e->core.n_branches[s];
        expc_put(o, "%s", s ? "," : "");
        if (n <= 1) {
            expc_put(o, "%d", (int)e->core.stages[s].device);
            continue;
        }
        for (b = 0; b < n; b++)
            expc_put(o, "%s%d%s", b ? "," : "[", (int)e->core.lanes[e->core.first_lane[s] + b].device, b + 1 < n ? "" : "]");
    }
    expc_put(o, "\" /* the mapping it was trained on: a bracket is a concurrent stage, whose branches are\n"
                "   exported as the one layer they split (weights concatenated along the units) */\n");
}

/* 1 when the model has a batch norm */
static inline int expc_has_bn(const ipup_emu *e) {
    int32_t l;
    for (l = 0; l < e->core.n_layers; l++)
        if (e->core.layers[l].info.kind == IPUP_LAYER_BATCHNORM) return 1;
    return 0;
}
/* Appends a string of any length. */
static inline void expc_put_str(expc_out *o, const char *str) {
    size_t n = strlen(str), k;
    while (n) {
        if (o->len == sizeof o->buf) expc_flush(o);
        k = sizeof o->buf - o->len < n ? sizeof o->buf - o->len : n;
        memcpy(o->buf + o->len, str, k);
        o->len += k;
        str += k;
        n -= k;
    }
}

/* The comment that opens the header and its size macros. */
static inline void expc_put_head(expc_out *o, const ipup_emu *e, const char *name, const char *origin, const expc_info *info) {
    const char *U = info->upper, *out = expc_is_mse(e) ? "out" : "logits";
    static char text[4096]; /* off the stack of small targets; one export at a time */
    int32_t l, s, conv = 0;
    int mse = expc_is_mse(e);
    char org[1024];
    expc_model_text(e, text, sizeof text);
    ex_esc_c_comment(origin, org, sizeof org); /* the caller's text, maybe from a command line */
    expc_put(o, "/* %s.h - a trained ipupipe model as C (written by %s). Do not edit.\n", name, org);
    expc_put(o, "   model  ");
    expc_put_str(o, text);
    expc_put(o, "\n   input  %dx%dx%d (%d floats per sample, NHWC), output %d %s per sample\n",
             (int)e->core.model.in_h, (int)e->core.model.in_w, (int)e->core.model.in_c, (int)e->core.in_n, (int)e->core.classes,
             mse ? "predictions (the input of its mse loss)" : "logits");
    expc_put(o, "   Needs ipupipe_kernels.h only (define IPUPIPE_IMPLEMENTATION in one translation unit before\n"
                "   including it) and no heap:\n\n"
                "     void %s_predict(int32_t n, const float *x, float *%s, int32_t *cls, float *scratch);\n\n",
             name, out);
    if (mse)
        expc_put(o, "   x (n, %s_IN) inputs; out (n, %s_OUT) the model's predictions (the input of its mse loss) or\n"
                    "   NULL; cls (n) the arg-max of each row of out (first on ties, a NaN never wins), usually not\n"
                    "   wanted for regression: pass NULL; scratch: %s_SCRATCH_FLOATS floats the caller owns (e.g. a\n"
                    "   static array).\n", U, U, U);
    else
        expc_put(o, "   x (n, %s_IN) inputs; logits (n, %s_OUT) or NULL; cls (n) arg-max classes (first on ties, a\n"
                    "   NaN never wins) or NULL; scratch: %s_SCRATCH_FLOATS floats the caller owns (e.g. a static array).\n",
                 U, U, U);
    expc_put(o, "   The kernels run in chunks of %s_BATCH samples with the calls of the emulator's forward for\n"
                "   this model and split (examples/common/export_c.h), so the outputs have the bits of ipup_predict\n"
                "   built with the same kernels and compiler flags. */\n", U);
    expc_put(o, "#ifndef %s_EXPORT_H\n#define %s_EXPORT_H\n\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n"
                "#include \"ipupipe_kernels.h\"\n\n", U, U);
    expc_put(o, "#define %s_MODEL_TEXT \"", U);
    expc_put_str(o, text);
    expc_put(o, "\"\n#define %s_IN_H %d\n#define %s_IN_W %d\n#define %s_IN_C %d\n", U,
             (int)e->core.model.in_h, U, (int)e->core.model.in_w, U, (int)e->core.model.in_c);
    expc_put(o, "#define %s_LOSS \"%s\" /* the loss layer the forward stops before: xent or bce (logits), mse "
                "(predictions) */\n",
             U, expc_loss_name(e));
    if (expc_has_bn(e)) {
        int32_t nf = 0;
        for (l = 0; l < e->core.n_layers; l++) nf += expc_bn_folds(e, l);
        expc_put(o, "#define %s_BN_FOLDED %d /* batch norms folded into the dense, conv or depthwise layer before them (its\n"
                    "   arrays hold w s, b s + t): the outputs then differ from ipup_predict's by rounding only; the\n"
                    "   other batch norms run as there */\n", U, (int)nf);
    }
    expc_put(o, "#define %s_IN %d\n#define %s_OUT %d\n#define %s_BATCH %d /* samples per kernel call: the emulator's micro-batch */\n",
             U, (int)e->core.in_n, U, (int)e->core.classes, U, (int)e->core.B);
    expc_put(o, "#define %s_STAGES %d /* the pipeline stages it was trained on (they decide which ReLUs are fused) */\n",
             U, (int)e->core.S);
    if (e->core.S > 1) expc_put(o, "#define %s_SPLIT ", U); /* the first layer of stages 1.. (ipup_config.split) */
    for (s = 1; s < e->core.S; s++) expc_put(o, "%d%s", (int)e->core.stages[s].first, s + 1 < e->core.S ? ", " : "\n");
    if (e->core.has_concurrent) expc_put_map(o, e, U);
    expc_put(o, "#define %s_PARAMS %lld\n#define %s_WEIGHTS_FNV1A UINT64_C(0x%016llx) /* FNV-1a of the weights' bits */\n",
             U, (long long)info->floats, U, (unsigned long long)info->fnv1a);
    expc_put(o, "#define %s_ACT_FLOATS %d /* per sample, each of two activation buffers */\n", U, (int)expc_act_floats(e));
    expc_put(o, "#define %s_MAX_(a, b) ((a) > (b) ? (a) : (b))\n#define %s_CONV_SCRATCH ", U, U);
    for (l = 0; l < e->core.n_layers; l++) {
        const ipup_layer_info *I = &e->core.layers[l].info;
        if (I->kind != IPUP_LAYER_CONV3X3) continue;
        expc_put(o, "%s_MAX_(IPUP_CONV3X3_FWD_SCRATCH(%s_BATCH, %d, %d, %d, %d), ", U, U, (int)I->in_h, (int)I->in_w,
                 (int)I->in_c, (int)I->out_c);
        conv++;
    }
    expc_put(o, "%lld", (long long)(expc_conv2d_scratch(e) > 1 ? expc_conv2d_scratch(e) : 1));
    for (s = 0; s < conv; s++) expc_put(o, ")");
    expc_put(o, " /* floats */\n#define %s_SCRATCH_FLOATS (%d * %s_BATCH * %s_ACT_FLOATS + %s_CONV_SCRATCH)\n\n", U,
             expc_has_res(e) ? 4 : 2, U, U, U);
}

/* One exported weight array: parameter `role` ('w' or 'b') of layer `layer`, in the
   layer's own layout (dense w (IN, OUT), conv w (3, 3, CI, CO), b (units)). A layer of a
   concurrent stage has one tensor per branch ("dense128.w#0", "#1", ..., each holding
   its slice of the output units, the last dimension): the array is their concatenation
   along the units, the tensor the unsplit layer would have (docs/schedules.md §9). */
typedef struct {
    int32_t layer, nb;          /* nb: tensors (branches); 0: the layer has no such array */
    char role;
    int32_t rows, units, n;     /* n = rows x units */
    int32_t first[IPUP_SCHED_MAX_BRANCHES + 1]; /* first unit of each branch */
    ipup_tensor_info t[IPUP_SCHED_MAX_BRANCHES];
    ipup_tensor_info bn[4];     /* the folded batch norm's gamma, beta, mean, variance */
    int has_bn;
    float bn_eps;
} expc_array;

/* element i of tensor t as fp32, whichever type stores it (float16 weights: binary16) */
static inline float expc_value(const ipup_tensor_info *t, size_t i) {
    float v;
    if (t->data) return t->data[i];
    ipup_f16_to_f32(1, t->data_f16 + i, &v);
    return v;
}

/* The length of a tensor's name without its branch suffix "#<digits>" (ids may hold '#') */
static inline size_t expc_base_len(const char *name) {
    const char *h = strrchr(name, '#'), *p;
    if (!h || !h[1]) return strlen(name);
    for (p = h + 1; *p; p++)
        if (*p < '0' || *p > '9') return strlen(name);
    return (size_t)(h - name);
}

/* 'w', 'b', 'm' (a batch norm's running mean), 'v' (its variance) or 0: the role of
   parameter tensor t (the end of its name without a branch) */
static inline char expc_role(const ipup_tensor_info *t) {
    size_t n = expc_base_len(t->name);
    if (n > 5 && memcmp(t->name + n - 5, ".mean", 5) == 0) return 'm';
    if (n > 4 && memcmp(t->name + n - 4, ".var", 4) == 0) return 'v';
    return n ? t->name[n - 1] : 0;
}

/* The array of (layer, role) gathered from e's parameter tensors, in their order. */
static inline void expc_array_get(ipup_emu *e, int32_t layer, char role, expc_array *a) {
    int32_t i, n = ipup_tensor_count(e);
    ipup_tensor_info t;
    memset(a, 0, sizeof *a);
    a->layer = layer;
    a->role = role;
    for (i = 0; i < n && a->nb < IPUP_SCHED_MAX_BRANCHES; i++) {
        int32_t sl;
        if (ipup_tensor_get(e, i, &t) != IPUP_OK || t.kind != IPUP_TENSOR_PARAM || t.layer != layer ||
            expc_role(&t) != role)
            continue;
        sl = t.ndim > 0 && t.shape[t.ndim - 1] > 0 ? t.shape[t.ndim - 1] : 1;
        a->t[a->nb] = t;
        a->first[a->nb] = a->units;
        a->rows = t.n / sl;
        a->units += sl;
        a->nb++;
    }
    a->first[a->nb] = a->units;
    a->n = a->rows * a->units;
    if (a->nb && (role == 'w' || role == 'b') && expc_bn_folds(e, layer + 1)) {
        static const char roles[4] = {'w', 'b', 'm', 'v'};
        int r;
        for (r = 0; r < 4; r++)
            for (i = 0; i < n; i++)
                if (ipup_tensor_get(e, i, &t) == IPUP_OK && t.kind == IPUP_TENSOR_PARAM && t.layer == layer + 1 &&
                    expc_role(&t) == roles[r])
                    a->bn[r] = t;
        a->has_bn = 1;
        a->bn_eps = expc_bn_eps(e, layer + 1);
    }
}

/* element i of array a (row-major in the layer's layout) */
static inline float expc_array_at(const expc_array *a, int32_t i) {
    int32_t r = i / a->units, u = i % a->units, b = 0;
    float v, sc, sh;
    while (b + 1 < a->nb && u >= a->first[b + 1]) b++;
    v = expc_value(&a->t[b], (size_t)r * (size_t)(a->first[b + 1] - a->first[b]) + (size_t)(u - a->first[b]));
    if (!a->has_bn) return v;
    /* the folded batch norm of unit u: ipup_batchnorm_fwd_infer_f32's scale and shift */
    sc = expc_value(&a->bn[0], (size_t)u) / sqrtf(expc_value(&a->bn[3], (size_t)u) + a->bn_eps);
    sh = expc_value(&a->bn[1], (size_t)u) - expc_value(&a->bn[2], (size_t)u) * sc;
    return a->role == 'w' ? v * sc : v * sc + sh;
}

/* The arrays in the order of export: layer by layer, w then b (ipup_tensor_get's order
   of an unsplit model). *k (from 0) walks them; 0 when there is no more. */
static inline int expc_array_next(ipup_emu *e, int32_t *k, expc_array *a) {
    static const char roles[4] = {'w', 'b', 'm', 'v'};
    for (; *k < 4 * e->core.n_layers; (*k)++) {
        if (expc_bn_folds(e, *k / 4)) continue; /* in the layer before it */
        expc_array_get(e, *k / 4, roles[*k % 4], a);
        if (a->nb) {
            (*k)++;
            return 1;
        }
    }
    return 0;
}

/* The array's name in the emulator (its tensor's, without the branch suffix), escaped for
   a C string (ex_esc_c_string): ids are the program's text */
static inline void expc_array_name(const expc_array *a, char *out, size_t cap) {
    char base[IPUP_TENSOR_NAME_MAX];
    ipup_snprintf(base, sizeof base, "%.*s", (int)expc_base_len(a->t[0].name), a->t[0].name);
    ex_esc_c_string(base, out, cap);
}

/* One array as `static const float <name>_<w|b><layer>[n]`, 8 values a line. */
static inline void expc_put_array(expc_out *o, const char *name, const expc_array *a) {
    static const char folded[] = ", with the batch norm after it folded in";
    char q[4 * IPUP_TENSOR_NAME_MAX + 8], c[4 * IPUP_TENSOR_NAME_MAX + 8];
    int32_t i;
    expc_array_name(a, q, sizeof q);
    ex_esc_c_comment(q, c, sizeof c);
    expc_put(o, "/* %s (", c);
    for (i = 0; i < a->t[0].ndim; i++)
        expc_put(o, "%s%d", i ? ", " : "", (int)(i + 1 < a->t[0].ndim ? a->t[0].shape[i] : a->units));
    expc_put(o, ")%s%s */\nstatic const float %s_%c%d[%d] = {\n",
             a->nb > 1 ? ": its concurrent stage's branches, concatenated along the last dimension" : "",
             a->has_bn ? folded : "", name, a->role, (int)a->layer, (int)a->n);
    for (i = 0; i < a->n; i++)
        expc_put(o, "%.8ef,%s", (double)expc_array_at(a, i), (i % 8 == 7 || i == a->n - 1) ? "\n" : " ");
    expc_put(o, "};\n");
}

/* Every weight array (expc_array_next's order), then the table of them. Fills
   info->tensors. */
static inline void expc_put_weights(expc_out *o, ipup_emu *e, const char *name, expc_info *info) {
    static expc_array a; /* a few KB: off the stack of small targets; one export at a time */
    int32_t k = 0, n = 0;
    char q[4 * IPUP_TENSOR_NAME_MAX + 8];
    while (expc_array_next(e, &k, &a)) {
        expc_put_array(o, name, &a);
        n++;
    }
    info->tensors = n;
    expc_put(o, "\n#define %s_N_TENSORS %d\n", info->upper, (int)n);
    if (n == 0) return;
    expc_put(o, "/* the weight arrays in the order of ipup_tensor_get, with the emulator's names (of the unsplit\n"
                "   tensor for a concurrent stage's branches) */\n"
                "static const char *const %s_tensor_name[%d] = {", name, (int)n);
    for (k = 0; expc_array_next(e, &k, &a);) {
        expc_array_name(&a, q, sizeof q);
        expc_put(o, "\"%s\", ", q);
    }
    expc_put(o, "};\nstatic const float *const %s_tensor_data[%d] = {", name, (int)n);
    for (k = 0; expc_array_next(e, &k, &a);) expc_put(o, "%s_%c%d, ", name, a.role, (int)a.layer);
    expc_put(o, "};\nstatic const int32_t %s_tensor_n[%d] = {", name, (int)n);
    for (k = 0; expc_array_next(e, &k, &a);) expc_put(o, "%d, ", (int)a.n);
    expc_put(o, "};\n\n");
}

/* The hash helpers of the generated header. */
static inline void expc_put_hash(expc_out *o, const char *name, const expc_info *info) {
    expc_put(o, "/* FNV-1a, 64-bit, continuing from h, over the bits of n floats (4 bytes each, little-endian) */\n"
                "static inline uint64_t %s_fnv1a(uint64_t h, const float *x, int32_t n) {\n"
                "    int32_t i, k;\n    for (i = 0; i < n; i++) {\n        uint32_t u;\n"
                "        memcpy(&u, &x[i], sizeof u);\n"
                "        for (k = 0; k < 4; k++) { h ^= (u >> (8 * k)) & 0xFFu; h *= UINT64_C(1099511628211); }\n"
                "    }\n    return h;\n}\n", name);
    expc_put(o, "/* the hash of the weight arrays as compiled: equals %s_WEIGHTS_FNV1A when every bit survived */\n"
                "static inline uint64_t %s_weights_fnv1a(void) {\n    uint64_t h = UINT64_C(14695981039346656037);\n",
             info->upper, name);
    if (info->tensors)
        expc_put(o, "    int32_t t;\n    for (t = 0; t < %s_N_TENSORS; t++) h = %s_fnv1a(h, %s_tensor_data[t], %s_tensor_n[t]);\n",
                 info->upper, name, name, name);
    expc_put(o, "    return h;\n}\n\n");
}

/* ---------------------------------------------------------------- the forward */

/* Which of x (0), a (1), b (2) each call reads and writes, and what the forward uses. */
typedef struct {
    int cur, used_a, used_b, used_conv, used_r;
} expc_bufs;

/* x, a, b; r0, r1: a residual block's input and its main branch's output */
static inline const char *expc_buf_name(int b) {
    return b == 0 ? "x" : b == 1 ? "a" : b == 2 ? "b" : b == 3 ? "r0" : "r1";
}

/* The calls of the layer kinds from IPUP_LAYER_CONV2D on (as ipup__fwd_more makes them in evaluation) from
   buffer in into out (dst); returns 0 when the layer makes no call (a folded batch norm),
   -1 for the markers, which move buffers themselves. */
static inline int expc_put_more(expc_out *o, const ipup_emu *e, const char *name, int32_t l, const char *in,
                                const char *out, expc_bufs *bb) {
    const ipup_layer_info *I = &e->core.layers[l].info;
    const ipup_layer *L = &e->core.model.layers[l];
    switch (I->kind) {
    case IPUP_LAYER_CONV2D:
    case IPUP_LAYER_DWCONV: {
        ipup_conv2d_shape sh;
        int dw = I->kind == IPUP_LAYER_DWCONV;
        ipup_conv2d_shape_init(&sh, I->in_h, I->in_w, I->in_c, I->out_c, I->kh, I->kw, I->sh, I->sw, L->same);
        expc_put(o, "    {\n        static const ipup_conv2d_shape s = {%d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d};\n",
                 sh.h, sh.w, sh.ci, sh.co, sh.kh, sh.kw, sh.sh, sh.sw, sh.pad_top, sh.pad_left, sh.oh, sh.ow);
        expc_put(o, "        ipup_%s_fwd_f32(Bn, &s, %s, %s_w%d, %s_b%d, %s%s);\n    }\n", dw ? "dwconv2d" : "conv2d", in, name,
                 (int)l, name, (int)l, out, dw ? "" : ", conv");
        if (!dw) bb->used_conv = 1;
        return 1;
    }
    case IPUP_LAYER_BATCHNORM:
        if (expc_bn_folds(e, l)) return 0;
        expc_put(o, "    ipup_batchnorm_fwd_infer_f32(Bn * %d, %d, %s, %s_w%d, %s_b%d, %s_m%d, %s_v%d, %.9ef, %s);\n",
                 (int)(I->in_h * I->in_w), (int)I->in_c, in, name, (int)l, name, (int)l, name, (int)l, name, (int)l,
                 (double)expc_bn_eps(e, l), out);
        return 1;
    case IPUP_LAYER_AVGPOOL:
    case IPUP_LAYER_GAVGPOOL:
        expc_put(o, "    ipup_avgpool_fwd_f32(Bn, %d, %d, %d, %d, %d, %d, %d, %s, %s);\n", (int)I->in_h, (int)I->in_w,
                 (int)I->in_c, (int)I->kh, (int)I->kw, (int)I->sh, (int)I->sw, in, out);
        return 1;
    case IPUP_LAYER_LEAKY_RELU:
        expc_put(o, "    ipup_leaky_relu_fwd_f32(Bn * %d, %.9ef, %s, %s);\n", (int)I->in_n, (double)L->alpha, in, out);
        return 1;
    case IPUP_LAYER_SIGMOID:
    case IPUP_LAYER_TANH:
    case IPUP_LAYER_HSWISH:
        expc_put(o, "    ipup_%s_fwd_f32(Bn * %d, %s, %s);\n",
                 I->kind == IPUP_LAYER_SIGMOID ? "sigmoid" : I->kind == IPUP_LAYER_TANH ? "tanh" : "hard_swish",
                 (int)I->in_n, in, out);
        return 1;
    case IPUP_LAYER_RES_BEGIN:
        expc_put(o, "    memcpy(r0, %s, (size_t)Bn * %d * sizeof(float)); /* the block input */\n", in, (int)I->in_n);
        bb->used_r |= 1;
        return -1;
    case IPUP_LAYER_RES_SHORTCUT:
        expc_put(o, "    memcpy(r1, %s, (size_t)Bn * %d * sizeof(float)); /* the main output; the shortcut reads r0 */\n",
                 in, (int)I->in_n);
        bb->cur = 3;
        bb->used_r |= 2;
        return -1;
    case IPUP_LAYER_RES_END:
        expc_put(o, "    {\n        int32_t i_;\n        for (i_ = 0; i_ < Bn * %d; i_++) %s[i_] = %s[i_] + %s[i_];\n    }\n",
                 (int)I->in_n, out, e->core.layers[l].res_sc ? "r1" : in, e->core.layers[l].res_sc ? in : "r0");
        return 1;
    default: return 0;
    }
}

/* The call of layer l (fuse: with the ReLU at l + 1) from bufs->cur into the other
   activation buffer; views make no call. */
static inline void expc_put_call(expc_out *o, const ipup_emu *e, const char *name, int32_t l, int fuse, expc_bufs *bb) {
    const ipup_layer_info *I = &e->core.layers[l].info;
    int dst = bb->cur == 1 ? 2 : 1;
    const char *in = expc_buf_name(bb->cur), *out = expc_buf_name(dst);
    char id[4 * IPUP_ID_MAX + 8], id2[4 * IPUP_ID_MAX + 8]; /* the program's ids, escaped */
    ex_esc_c_comment(e->core.model.layers[l].id, id, sizeof id);
    ex_esc_c_comment(fuse ? e->core.model.layers[l + 1].id : "", id2, sizeof id2);
    if (I->kind == IPUP_LAYER_FLATTEN || I->kind == IPUP_LAYER_DROPOUT) {
        expc_put(o, "    /* layer %d %s (%s): a view, no call */\n", (int)l, id,
                 I->kind == IPUP_LAYER_FLATTEN ? "flatten" : "dropout, identity at inference");
        return;
    }
    expc_put(o, "    /* layer %d %s%s%s%s */\n", (int)l, id, fuse ? " and its ReLU, layer " : "", id2,
             expc_bn_folds(e, l) ? ": folded into the layer before it" : "");
    if (I->kind >= IPUP_LAYER_CONV2D) {
        int r = expc_put_more(o, e, name, l, in, out, bb);
        if (r <= 0) return;
    } else if (I->kind == IPUP_LAYER_DENSE)
        expc_put(o, "    ipup_dense%s_fwd_f32(Bn, %d, %d, %s, %s_w%d, %s_b%d, %s);\n", fuse ? "_relu" : "", (int)I->in_n,
                 (int)I->out_n, in, name, (int)l, name, (int)l, out);
    else if (I->kind == IPUP_LAYER_CONV3X3) {
        expc_put(o, "    ipup_conv3x3%s_fwd_f32(Bn, %d, %d, %d, %d, %s, %s_w%d, %s_b%d, %s, conv);\n", fuse ? "_relu" : "",
                 (int)I->in_h, (int)I->in_w, (int)I->in_c, (int)I->out_c, in, name, (int)l, name, (int)l, out);
        bb->used_conv = 1;
    } else if (I->kind == IPUP_LAYER_MAXPOOL2)
        expc_put(o, "    ipup_maxpool2_fwd_f32(Bn, %d, %d, %d, %s, %s);\n", (int)I->in_h, (int)I->in_w, (int)I->in_c, in,
                 out);
    else
        expc_put(o, "    ipup_%s_fwd_f32(Bn * %d, %s, %s);\n", I->kind == IPUP_LAYER_RELU ? "relu" : "gelu", (int)I->in_n,
                 in, out);
    if (dst == 1) bb->used_a = 1;
    else bb->used_b = 1;
    bb->cur = dst;
}

/* The layer calls of every stage, as ipup__stage_fwd makes them without a stash entry:
   dense or conv then a ReLU of the same stage fused. */
static inline void expc_put_layers(expc_out *o, const ipup_emu *e, const char *name, expc_bufs *bb) {
    int32_t s, l;
    for (s = 0; s < e->core.S; s++) {
        const ipup__stage *st = &e->core.stages[s];
        int branches = e->core.n_branches[s] > 1 ? e->core.n_branches[s] : 1;
        if (branches > 1)
            expc_put(o, "    /* stage %d: layers %d..%d, concurrent: its %d branches' output units are one layer's, "
                        "computed here at once, their ReLU unfused as in each branch */\n",
                     (int)s, (int)st->first, (int)st->last - 1, branches);
        else expc_put(o, "    /* stage %d: layers %d..%d */\n", (int)s, (int)st->first, (int)st->last - 1);
        for (l = st->first; l < st->last; l++) {
            ipup_layer_kind k = e->core.layers[l].info.kind;
            int fuse = branches == 1 && (k == IPUP_LAYER_DENSE || k == IPUP_LAYER_CONV3X3) && l + 1 < st->last &&
                       e->core.layers[l + 1].info.kind == IPUP_LAYER_RELU;
            if (expc_is_loss(k)) break; /* ipup_predict's result is the loss layer's input */
            expc_put_call(o, e, name, l, fuse, bb);
            l += fuse;
        }
    }
}

/* <name>_forward_ and <name>_predict. The body of the forward is written to a second
   pass's output only once the buffers it uses are known: the first pass counts. */
static inline void expc_put_forward(expc_out *o, const ipup_emu *e, const char *name, const char *U) {
    const char *out = expc_is_mse(e) ? "out" : "logits";
    int mse = expc_is_mse(e);
    expc_bufs bb;
    memset(&bb, 0, sizeof bb);
    {   /* dry run: which buffers the calls use */
        expc_out dry;
        memset(&dry, 0, sizeof dry);
        dry.failed = 1;
        expc_put_layers(&dry, e, name, &bb);
    }
    expc_put(o, "/* The forward of Bn <= %s_BATCH samples x (Bn, %s_IN); returns the %s (Bn, %s_OUT). */\n"
                "static inline const float *%s_forward_(int Bn, const float *x, float *scratch) {\n", U, U,
             mse ? "predictions" : "logits", U, name);
    if (bb.used_a) expc_put(o, "    float *a = scratch;\n");
    if (bb.used_b) expc_put(o, "    float *b = scratch + (size_t)%s_BATCH * %s_ACT_FLOATS;\n", U, U);
    if (bb.used_r & 1) expc_put(o, "    float *r0 = scratch + (size_t)2 * %s_BATCH * %s_ACT_FLOATS;\n", U, U);
    if (bb.used_r & 2) expc_put(o, "    float *r1 = scratch + (size_t)3 * %s_BATCH * %s_ACT_FLOATS;\n", U, U);
    if (bb.used_conv)
        expc_put(o, "    float *conv = scratch + (size_t)%d * %s_BATCH * %s_ACT_FLOATS;\n", bb.used_r ? 4 : 2, U, U);
    if (!bb.used_a && !bb.used_b) expc_put(o, "    (void)Bn;\n    (void)scratch;\n");
    {
        int last = bb.cur;
        memset(&bb, 0, sizeof bb);
        expc_put_layers(o, e, name, &bb);
        expc_put(o, "    return %s;\n}\n\n", expc_buf_name(last));
    }
    if (mse)
        expc_put(o, "/* out (n, %s_OUT) or NULL: the predictions (the input of the mse loss), and cls (n) or NULL:\n"
                    "   the arg-max of each row of out (usually not wanted for regression: pass NULL), of n samples\n"
                    "   x (n, %s_IN); scratch: %s_SCRATCH_FLOATS floats. */\n", U, U, U);
    else
        expc_put(o, "/* logits (n, %s_OUT) or NULL and cls (n) or NULL of n samples x (n, %s_IN); scratch:\n"
                    "   %s_SCRATCH_FLOATS floats. */\n", U, U, U);
    expc_put(o, "static inline void %s_predict(int32_t n, const float *x, float *%s, int32_t *cls, float *scratch) {\n"
                "    int32_t i, j, k;\n    for (i = 0; i < n; i += %s_BATCH) {\n"
                "        int32_t Bn = n - i < %s_BATCH ? n - i : %s_BATCH;\n"
                "        const float *y = %s_forward_((int)Bn, x + (size_t)i * %s_IN, scratch);\n"
                "        for (j = 0; j < Bn; j++) {\n            const float *row = y + (size_t)j * %s_OUT;\n"
                "            int32_t best = 0;\n            for (k = 0; k < %s_OUT; k++) {\n"
                "                if (%s) %s[(size_t)(i + j) * %s_OUT + (size_t)k] = row[k];\n"
                "                if (row[k] > row[best] || (row[best] != row[best] && row[k] == row[k])) best = k;\n"
                "            }\n"
                "            if (cls) cls[i + j] = best;\n        }\n    }\n}\n\n#endif\n",
             name, out, U, U, U, name, U, U, U, out, out, U);
}

/* NaN or infinity in a parameter: IPUP_ERR_NUMERIC naming it. Also counts the floats
   and hashes them into info, array by array as exported (expc_array_next). */
static inline int expc_scan(ipup_emu *e, expc_info *info, char *msg, size_t len) {
    static expc_array a;
    int32_t k = 0, j;
    char q[4 * IPUP_TENSOR_NAME_MAX + 8];
    info->floats = 0;
    info->fnv1a = EXPC_FNV_BASIS;
    while (expc_array_next(e, &k, &a)) {
        for (j = 0; j < a.n; j++) {
            float v = expc_array_at(&a, j);
            if (!(v - v == 0.0f)) {
                expc_array_name(&a, q, sizeof q);
                return expc_fail(msg, len, IPUP_ERR_NUMERIC,
                                 "weight %d of %s is %s: a model that diverged cannot be exported (lower the learning "
                                 "rate); nothing was written",
                                 (int)j, q, v != v ? "NaN" : "infinite");
            }
            info->fnv1a = expc_fnv1a(info->fnv1a, &v, 1);
        }
        info->floats += a.n;
    }
    return IPUP_OK;
}

/* Writes the header of the model of e (initialised; its current weights) through
   write(user, ...). name: the C prefix (expc_name_check), origin: what made it, for
   the first comment (any text: it is escaped, ex_esc_c_comment). IPUP_OK and *info, or the first error with a
   message: IPUP_ERR_ARG, IPUP_ERR_UNSUPPORTED, IPUP_ERR_NUMERIC (nothing written), or
   IPUP_ERR_IO when write failed (errno is write's). */
static inline int expc_write(ipup_emu *e, const char *name, const char *origin, ipup_write_fn write, void *user,
                      expc_info *info, char *msg, size_t len) {
    static expc_out o_; /* 4 KB: off the stack of small targets; one export at a time */
    expc_out *o = &o_;
    int rc;
    size_t i;
    if (msg && len) msg[0] = 0;
    if (!write || !info) return expc_fail(msg, len, IPUP_ERR_ARG, "expc_write: NULL write callback or info");
    memset(info, 0, sizeof *info);
    if ((rc = expc_name_check(name, msg, len)) != IPUP_OK || (rc = expc_check(e, msg, len)) != IPUP_OK ||
        (rc = expc_scan(e, info, msg, len)) != IPUP_OK)
        return rc;
    for (i = 0; name[i]; i++) info->upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
    info->upper[i] = 0;
    info->scratch = (expc_has_res(e) ? 4 : 2) * (int64_t)e->core.B * expc_act_floats(e) +
                    (expc_conv2d_scratch(e) > 1 ? expc_conv2d_scratch(e) : 1);
    memset(o, 0, sizeof *o);
    o->write = write;
    o->user = user;
    expc_put_head(o, e, name, origin ? origin : "examples/common/export_c.h", info);
    expc_put_weights(o, e, name, info);
    expc_put_hash(o, name, info);
    expc_put_forward(o, e, name, info->upper);
    expc_flush(o);
    if (o->failed) return expc_fail(msg, len, IPUP_ERR_IO, "writing the header failed");
    return IPUP_OK;
}

#endif /* EXPORT_C_H */
