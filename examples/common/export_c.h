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
        if ((k == IPUP_LAYER_SOFTMAX_XENT || k == IPUP_LAYER_MSE) && last) continue;
        if (k == IPUP_LAYER_DENSE || k == IPUP_LAYER_CONV3X3 || k == IPUP_LAYER_RELU || k == IPUP_LAYER_GELU ||
            k == IPUP_LAYER_MAXPOOL2 || k == IPUP_LAYER_FLATTEN || k == IPUP_LAYER_DROPOUT)
            if (!last) continue;
        return expc_fail(msg, len, IPUP_ERR_UNSUPPORTED,
                         "layer %d '%s' (%s) cannot be exported: the C export knows dense, conv3x3, maxpool2, flatten, "
                         "relu, gelu and dropout layers under a softmax cross-entropy (xent) or mean squared error (mse) "
                         "last layer",
                         (int)l, e->core.model.layers[l].id, ipup_layer_kind_name(k));
    }
    return IPUP_OK;
}

/* 1 for a loss layer: xent or mse (expc_check allows one, as the last layer). */
static inline int expc_is_loss(ipup_layer_kind k) { return k == IPUP_LAYER_SOFTMAX_XENT || k == IPUP_LAYER_MSE; }

/* 1 when the model of e ends with an mse loss (a regression model), 0 for xent. */
static inline int expc_is_mse(const ipup_emu *e) { return e->core.layers[e->core.n_layers - 1].info.kind == IPUP_LAYER_MSE; }

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
        const char *sep = l ? "," : "";
        int k;
        switch (L->kind) {
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
   computes (views write nothing). */
static inline int32_t expc_act_floats(const ipup_emu *e) {
    int32_t l, mx = 1;
    for (l = 0; l < e->core.n_layers; l++) {
        const ipup_layer_info *I = &e->core.layers[l].info;
        if (I->kind == IPUP_LAYER_FLATTEN || I->kind == IPUP_LAYER_DROPOUT || expc_is_loss(I->kind)) continue;
        if (I->out_n > mx) mx = I->out_n;
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

/* The comment that opens the header and its size macros. */
static inline void expc_put_head(expc_out *o, const ipup_emu *e, const char *name, const char *origin, const expc_info *info) {
    const char *U = info->upper, *out = expc_is_mse(e) ? "out" : "logits";
    char text[512];
    int32_t l, s, conv = 0;
    int mse = expc_is_mse(e);
    char org[1024];
    expc_model_text(e, text, sizeof text);
    ex_esc_c_comment(origin, org, sizeof org); /* the caller's text, maybe from a command line */
    expc_put(o, "/* %s.h - a trained ipupipe model as C (written by %s). Do not edit.\n", name, org);
    expc_put(o, "   model  %s\n   input  %dx%dx%d (%d floats per sample, NHWC), output %d %s per sample\n", text,
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
    expc_put(o, "#define %s_MODEL_TEXT \"%s\"\n#define %s_IN_H %d\n#define %s_IN_W %d\n#define %s_IN_C %d\n", U, text, U,
             (int)e->core.model.in_h, U, (int)e->core.model.in_w, U, (int)e->core.model.in_c);
    expc_put(o, "#define %s_LOSS \"%s\" /* the loss layer the forward stops before: xent (logits) or mse (predictions) */\n",
             U, mse ? "mse" : "xent");
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
    expc_put(o, "1");
    for (s = 0; s < conv; s++) expc_put(o, ")");
    expc_put(o, " /* floats */\n#define %s_SCRATCH_FLOATS (2 * %s_BATCH * %s_ACT_FLOATS + %s_CONV_SCRATCH)\n\n", U, U, U, U);
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
} expc_array;

/* The length of a tensor's name without its branch suffix "#<digits>" (ids may hold '#') */
static inline size_t expc_base_len(const char *name) {
    const char *h = strrchr(name, '#'), *p;
    if (!h || !h[1]) return strlen(name);
    for (p = h + 1; *p; p++)
        if (*p < '0' || *p > '9') return strlen(name);
    return (size_t)(h - name);
}

/* 'w', 'b' or 0: the role of parameter tensor t (the end of its name without a branch) */
static inline char expc_role(const ipup_tensor_info *t) {
    size_t n = expc_base_len(t->name);
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
}

/* element i of array a (row-major in the layer's layout) */
static inline float expc_array_at(const expc_array *a, int32_t i) {
    int32_t r = i / a->units, u = i % a->units, b = 0;
    while (b + 1 < a->nb && u >= a->first[b + 1]) b++;
    return a->t[b].data[(size_t)r * (size_t)(a->first[b + 1] - a->first[b]) + (size_t)(u - a->first[b])];
}

/* The arrays in the order of export: layer by layer, w then b (ipup_tensor_get's order
   of an unsplit model). *k (from 0) walks them; 0 when there is no more. */
static inline int expc_array_next(ipup_emu *e, int32_t *k, expc_array *a) {
    for (; *k < 2 * e->core.n_layers; (*k)++) {
        expc_array_get(e, *k / 2, *k % 2 ? 'b' : 'w', a);
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
    char q[4 * IPUP_TENSOR_NAME_MAX + 8], c[4 * IPUP_TENSOR_NAME_MAX + 8];
    int32_t i;
    expc_array_name(a, q, sizeof q);
    ex_esc_c_comment(q, c, sizeof c);
    expc_put(o, "/* %s (", c);
    for (i = 0; i < a->t[0].ndim; i++)
        expc_put(o, "%s%d", i ? ", " : "", (int)(i + 1 < a->t[0].ndim ? a->t[0].shape[i] : a->units));
    expc_put(o, ")%s */\nstatic const float %s_%c%d[%d] = {\n",
             a->nb > 1 ? ": its concurrent stage's branches, concatenated along the last dimension" : "", name, a->role,
             (int)a->layer, (int)a->n);
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
    int cur, used_a, used_b, used_conv;
} expc_bufs;

static inline const char *expc_buf_name(int b) { return b == 0 ? "x" : b == 1 ? "a" : "b"; }

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
    expc_put(o, "    /* layer %d %s%s%s */\n", (int)l, id, fuse ? " and its ReLU, layer " : "", id2);
    if (I->kind == IPUP_LAYER_DENSE)
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
    if (bb.used_conv) expc_put(o, "    float *conv = scratch + (size_t)2 * %s_BATCH * %s_ACT_FLOATS;\n", U, U);
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
    info->scratch = 2 * (int64_t)e->core.B * expc_act_floats(e) + 1;
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
