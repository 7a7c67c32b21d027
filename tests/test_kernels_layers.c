/* test_kernels_layers.c - the layer kernels of MLPerf Tiny's networks in ipupipe_kernels.h
 * (conv2d, depthwise conv, batch norm, average pooling, sigmoid, tanh, leaky ReLU,
 * hard-swish, binary cross-entropy on logits) against references written here:
 *   - forwards against plain loops in double, written from the definitions and not from
 *     the library's code (the convolutions pad the input explicitly, then correlate);
 *   - backwards against central finite differences of those forwards (small shapes: FD
 *     costs a forward per element) and, at the reference networks' shapes, against
 *     the transposed loops in double (the adjoint of the forward loop);
 *   - the build's path (SIMD or not) against the *_portable references; the same bits on
 *     a second call; a dx-only plus a dw/db-only call give the bits of one full call;
 *   - ipup_conv2d_shape_init against 'same' computed here (ceil(in / stride) and the
 *     TensorFlow padding rule), and its refusals.
 * Tolerances (max |a - b| / max(max |b|, 1), the float kernel against double):
 *   - forwards 1e-5: a float sum of K products has a relative error below K * 6e-8 in the
 *     worst case and about sqrt(K) * 6e-8 for random signs; K is at most 576 here;
 *   - backwards 2e-5 (the weight gradient sums up to B * oh * ow = 6912 terms);
 *   - against FD 1e-4: FD in double is exact to ~1e-10 on these (near-)linear losses, the
 *     rest is the float kernel's own error;
 *   - element-wise forwards per element against libm in double, 4e-7 relative (the
 *     header's e^x is within 2e-7, plus the roundings of the formula).
 * Exact-size heap arrays, so ASan / Valgrind catch any access outside them. Under
 * IPUPIPE_TEST_SLOW=1 the big shapes shrink.
 */
#include "ipupipe_kernels.h"
#include "ttest.h"

#include <limits.h>

/* gcc in ISO C mode (-std=c11) does not contract a * b + c into an FMA
   (-ffp-contract=off), so there the memory-bound kernels' vector loops, which make the
   scalar operations lane by lane, give the portable kernels' bits; clang contracts by
   default (-ffp-contract=on), so its portable kernels round differently */
#if defined(__GNUC__) && !defined(__clang__)
#define EXACT_PORTABLE 1
#else
#define EXACT_PORTABLE 0
#endif
#include <stdint.h>
#include <stdlib.h>

/* ------------------------------------------------------------ helpers */

/* the test's own generator (xorshift64*, Vigna 2016), independent of the library's RNG */
static uint64_t trng_state = 0x9E3779B97F4A7C15u;
static double trand(void) { /* uniform in [-1, 1) */
    trng_state ^= trng_state >> 12;
    trng_state ^= trng_state << 25;
    trng_state ^= trng_state >> 27;
    return (double)((trng_state * 2685821657736338717u) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
static float *falloc(size_t n) {
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!p) abort();
    return p;
}
static double *dalloc(size_t n) {
    double *p = (double *)calloc(n ? n : 1, sizeof(double));
    if (!p) abort();
    return p;
}
static float *frand(size_t n, double scale) {
    float *p = falloc(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = (float)(trand() * scale);
    return p;
}
static float *fcopy(size_t n, const float *a) {
    float *p = falloc(n);
    memcpy(p, a, n * sizeof(float));
    return p;
}
static double *todouble(size_t n, const float *f) {
    double *d = dalloc(n);
    size_t i;
    for (i = 0; i < n; i++) d[i] = (double)f[i];
    return d;
}
/* max |a - b| / max(max |b|, floor) */
static double relerr_fd(size_t n, const float *a, const double *b, double floor_) {
    double m = floor_, e = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (fabs(b[i]) > m) m = fabs(b[i]);
        if (!(fabs((double)a[i] - b[i]) <= e)) e = fabs((double)a[i] - b[i]);
    }
    return e / m;
}
static double relerr_ff(size_t n, const float *a, const float *b) {
    double *bd = todouble(n, b), e = relerr_fd(n, a, bd, 1e-30);
    free(bd);
    return e;
}
/* a - b element by element into a (the increment of an accumulated gradient) */
static void fsub(size_t n, float *a, const float *b) {
    size_t i;
    for (i = 0; i < n; i++) a[i] -= b[i];
}
static double dot(size_t n, const double *a, const double *b) {
    double s = 0.0;
    size_t i;
    for (i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
typedef double (*loss_fn)(void *ctx);
/* central differences: grad[i] = (L(p + h e_i) - L(p - h e_i)) / 2h, L in double */
static void fd_grad(double *p, size_t n, double h, loss_fn loss, void *ctx, double *grad) {
    size_t i;
    for (i = 0; i < n; i++) {
        double keep = p[i], lp, lm;
        p[i] = keep + h; lp = loss(ctx);
        p[i] = keep - h; lm = loss(ctx);
        p[i] = keep;
        grad[i] = (lp - lm) / (2.0 * h);
    }
}

/* ------------------------------------------------------------ convolution references */

/* The geometry, computed here from TensorFlow's documented rule (tf.nn, "Notes on
   padding"): 'same': out = ceil(in / s), pad_total = max((out - 1) s + k - in, 0),
   pad_before = floor(pad_total / 2); 'valid': out = ceil((in - k + 1) / s). */
typedef struct {
    size_t B, h, w, ci, co, kh, kw, sh, sw, oh, ow, pt, pl, pb, pr;
    int same, dw;
} cgeo;
static void geo_dim(int in, int k, int s, int same, size_t *out, size_t *before, size_t *after) {
    if (same) {
        const int o = (in + s - 1) / s;
        int total = (o - 1) * s + k - in;
        if (total < 0) total = 0;
        *out = (size_t)o;
        *before = (size_t)(total / 2);
        *after = (size_t)(total - total / 2);
    } else {
        *out = (size_t)((in - k + 1 + s - 1) / s);
        *before = *after = 0;
    }
}
static cgeo geo(int B, int h, int w, int ci, int co, int kh, int kw, int sh, int sw, int same,
                int depthwise) {
    cgeo g;
    g.B = (size_t)B; g.h = (size_t)h; g.w = (size_t)w; g.ci = (size_t)ci;
    g.co = (size_t)(depthwise ? ci : co); g.kh = (size_t)kh; g.kw = (size_t)kw;
    g.sh = (size_t)sh; g.sw = (size_t)sw; g.same = same; g.dw = depthwise;
    geo_dim(h, kh, sh, same, &g.oh, &g.pt, &g.pb);
    geo_dim(w, kw, sw, same, &g.ow, &g.pl, &g.pr);
    return g;
}
/* x zero-padded explicitly: (B, h + pt + pb, w + pl + pr, ci) */
static double *pad_input(const cgeo *g, const double *x) {
    const size_t HP = g->h + g->pt + g->pb, WP = g->w + g->pl + g->pr;
    double *p = dalloc((size_t)g->B * (size_t)HP * (size_t)WP * (size_t)g->ci);
    size_t n, i, j, c;
    for (n = 0; n < g->B; n++)
        for (i = 0; i < g->h; i++)
            for (j = 0; j < g->w; j++)
                for (c = 0; c < g->ci; c++)
                    p[(((size_t)n * HP + (size_t)(i + g->pt)) * WP + (size_t)(j + g->pl)) *
                          (size_t)g->ci + (size_t)c] =
                        x[(((size_t)n * g->h + (size_t)i) * g->w + (size_t)j) * (size_t)g->ci +
                          (size_t)c];
    return p;
}
/* y = valid strided correlation of the padded x with w, + b: full conv (w (kh, kw, ci, co))
   or depthwise (w (kh, kw, c)) */
static void ref_conv_fwd(const cgeo *g, const double *x, const double *w, const double *b,
                         double *y) {
    const size_t HP = g->h + g->pt + g->pb, WP = g->w + g->pl + g->pr;
    double *xp = pad_input(g, x);
    size_t n, oh, ow, o, i, j, c;
    for (n = 0; n < g->B; n++)
        for (oh = 0; oh < g->oh; oh++)
            for (ow = 0; ow < g->ow; ow++)
                for (o = 0; o < g->co; o++) {
                    double s = b ? b[o] : 0.0;
                    for (i = 0; i < g->kh; i++)
                        for (j = 0; j < g->kw; j++) {
                            const double *xr = xp + (((size_t)n * HP + (size_t)(oh * g->sh + i)) *
                                                         WP + (size_t)(ow * g->sw + j)) *
                                                        (size_t)g->ci;
                            if (g->dw)
                                s += xr[o] * w[((size_t)i * g->kw + (size_t)j) * g->co + (size_t)o];
                            else
                                for (c = 0; c < g->ci; c++)
                                    s += xr[c] * w[(((size_t)i * g->kw + (size_t)j) * g->ci +
                                                    (size_t)c) * g->co + (size_t)o];
                        }
                    y[(((size_t)n * g->oh + (size_t)oh) * g->ow + (size_t)ow) * g->co +
                      (size_t)o] = s;
                }
    free(xp);
}
/* the adjoint of ref_conv_fwd for dy: gx (written), gw, gb (written), scattered through the
   padded input and cropped */
static void ref_conv_bwd(const cgeo *g, const double *x, const double *w, const double *dy,
                         double *gx, double *gw, double *gb) {
    const size_t HP = g->h + g->pt + g->pb, WP = g->w + g->pl + g->pr;
    const size_t nw = g->kh * g->kw * (g->dw ? 1 : g->ci) * g->co;
    double *xp = pad_input(g, x), *gp = dalloc((size_t)g->B * HP * WP * (size_t)g->ci);
    size_t n, oh, ow, o, i, j, c;
    memset(gw, 0, nw * sizeof(double));
    memset(gb, 0, (size_t)g->co * sizeof(double));
    for (n = 0; n < g->B; n++)
        for (oh = 0; oh < g->oh; oh++)
            for (ow = 0; ow < g->ow; ow++)
                for (o = 0; o < g->co; o++) {
                    const double d = dy[(((size_t)n * g->oh + (size_t)oh) * g->ow + (size_t)ow) *
                                            g->co + (size_t)o];
                    gb[o] += d;
                    for (i = 0; i < g->kh; i++)
                        for (j = 0; j < g->kw; j++) {
                            const size_t xo = (((size_t)n * HP + (size_t)(oh * g->sh + i)) * WP +
                                               (size_t)(ow * g->sw + j)) * (size_t)g->ci;
                            if (g->dw) {
                                const size_t wo = (i * g->kw + j) * g->co + o;
                                gw[wo] += xp[xo + (size_t)o] * d;
                                gp[xo + (size_t)o] += w[wo] * d;
                            } else
                                for (c = 0; c < g->ci; c++) {
                                    const size_t wo = (((size_t)i * g->kw + (size_t)j) * g->ci +
                                                       (size_t)c) * g->co + (size_t)o;
                                    gw[wo] += xp[xo + (size_t)c] * d;
                                    gp[xo + (size_t)c] += w[wo] * d;
                                }
                        }
                }
    for (n = 0; n < g->B; n++)
        for (i = 0; i < g->h; i++)
            for (j = 0; j < g->w; j++)
                for (c = 0; c < g->ci; c++)
                    gx[(((size_t)n * g->h + (size_t)i) * g->w + (size_t)j) * g->ci + (size_t)c] =
                        gp[(((size_t)n * HP + (size_t)(i + g->pt)) * WP + (size_t)(j + g->pl)) *
                               g->ci + (size_t)c];
    free(xp); free(gp);
}

typedef struct { const cgeo *g; double *x, *w, *b, *r, *y; } conv_ctx;
static double conv_loss(void *vc) {
    conv_ctx *c = (conv_ctx *)vc;
    ref_conv_fwd(c->g, c->x, c->w, c->b, c->y);
    return dot(c->g->B * c->g->oh * c->g->ow * c->g->co, c->y, c->r);
}

/* the library's call for either kind */
static void lib_fwd(const cgeo *g, const ipup_conv2d_shape *s, const float *x, const float *w,
                    const float *b, float *y, float *scratch, int portable) {
    if (g->dw && portable) ipup_dwconv2d_fwd_f32_portable((int)g->B, s, x, w, b, y);
    else if (g->dw) ipup_dwconv2d_fwd_f32((int)g->B, s, x, w, b, y);
    else if (portable) ipup_conv2d_fwd_f32_portable((int)g->B, s, x, w, b, y);
    else ipup_conv2d_fwd_f32((int)g->B, s, x, w, b, y, scratch);
}
static void lib_bwd(const cgeo *g, const ipup_conv2d_shape *s, const float *x, const float *w,
                    const float *dy, float *dx, float *dw, float *db, float *scratch,
                    int portable) {
    if (g->dw && portable) ipup_dwconv2d_bwd_f32_portable((int)g->B, s, x, w, dy, dx, dw, db);
    else if (g->dw) ipup_dwconv2d_bwd_f32((int)g->B, s, x, w, dy, dx, dw, db);
    else if (portable) ipup_conv2d_bwd_f32_portable((int)g->B, s, x, w, dy, dx, dw, db);
    else ipup_conv2d_bwd_f32((int)g->B, s, x, w, dy, dx, dw, db, scratch);
}

/* One convolution: shape, forward, backward (FD or adjoint), path agreement, bits. */
static void check_conv2d(int B, int h, int w, int ci, int co, int kh, int kw, int sh, int sw,
                         int same, int depthwise, int use_fd) {
    const cgeo g = geo(B, h, w, ci, co, kh, kw, sh, sw, same, depthwise);
    ipup_conv2d_shape s;
    const size_t nx = g.B * g.h * g.w * g.ci, ny = g.B * g.oh * g.ow * g.co,
                 nw = g.kh * g.kw * (depthwise ? 1 : g.ci) * g.co, nb = g.co;
    size_t nsc, i;
    float *x, *wt, *b, *dy, *y, *y2, *dx, *dx2, *dw, *dw0, *dw2, *db, *db0, *db2, *sc;
    double *xd, *wd, *bd, *rd, *yd, *gx, *gw, *gb, e;
    char tag[128];
    conv_ctx c;
    snprintf(tag, sizeof tag, "%s B%d %dx%dx%d->%d k%dx%d s%dx%d %s", depthwise ? "dw" : "conv",
             B, h, w, ci, (int)g.co, kh, kw, sh, sw, same ? "same" : "valid");
    TT_CHECK_MSG(ipup_conv2d_shape_init(&s, h, w, ci, (int)g.co, kh, kw, sh, sw, same) == 0,
                 "%s: shape refused", tag);
    TT_CHECK_MSG((size_t)s.oh == g.oh && (size_t)s.ow == g.ow && (size_t)s.pad_top == g.pt &&
                     (size_t)s.pad_left == g.pl,
                 "%s: shape %dx%d pad %d,%d, expected %zux%zu pad %zu,%zu", tag, s.oh, s.ow,
                 s.pad_top, s.pad_left, g.oh, g.ow, g.pt, g.pl);
    if ((size_t)s.oh != g.oh || (size_t)s.ow != g.ow) return;
    nsc = ipup_conv2d_scratch_floats(&s, B);
    x = frand(nx, 1.0); wt = frand(nw, 0.5); b = frand(nb, 0.5); dy = frand(ny, 1.0);
    y = falloc(ny); y2 = falloc(ny); dx = falloc(nx); dx2 = falloc(nx);
    dw0 = frand(nw, 1.0); db0 = frand(nb, 1.0); dw = fcopy(nw, dw0); db = fcopy(nb, db0);
    dw2 = fcopy(nw, dw0); db2 = fcopy(nb, db0); sc = falloc(nsc);
    xd = todouble(nx, x); wd = todouble(nw, wt); bd = todouble(nb, b); rd = todouble(ny, dy);
    yd = dalloc(ny); gx = dalloc(nx); gw = dalloc(nw); gb = dalloc(nb);

    lib_fwd(&g, &s, x, wt, b, y, sc, 0);
    ref_conv_fwd(&g, xd, wd, bd, yd);
    e = relerr_fd(ny, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "%s: fwd rel err %g", tag, e);
    lib_fwd(&g, &s, x, wt, NULL, y2, NULL, 0); /* no bias, no scratch */
    ref_conv_fwd(&g, xd, wd, NULL, yd);
    e = relerr_fd(ny, y2, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "%s: fwd (no bias, NULL scratch) rel err %g", tag, e);

    for (i = 0; i < nx; i++) dx[i] = 1e30f; /* written, not added to */
    lib_bwd(&g, &s, x, wt, dy, dx, dw, db, sc, 0);
    fsub(nw, dw, dw0); fsub(nb, db, db0);
    if (use_fd) {
        c.g = &g; c.x = xd; c.w = wd; c.b = bd; c.r = rd; c.y = yd;
        fd_grad(xd, nx, 1e-3, conv_loss, &c, gx);
        fd_grad(wd, nw, 1e-3, conv_loss, &c, gw);
        fd_grad(bd, nb, 1e-3, conv_loss, &c, gb);
    } else
        ref_conv_bwd(&g, xd, wd, rd, gx, gw, gb);
    e = relerr_fd(nx, dx, gx, 1.0);
    TT_CHECK_MSG(e < (use_fd ? 1e-4 : 2e-5), "%s: dx rel err %g", tag, e);
    e = relerr_fd(nw, dw, gw, 1.0);
    TT_CHECK_MSG(e < (use_fd ? 1e-4 : 2e-5), "%s: dw rel err %g", tag, e);
    e = relerr_fd(nb, db, gb, 1.0);
    TT_CHECK_MSG(e < (use_fd ? 1e-4 : 2e-5), "%s: db rel err %g", tag, e);

    /* the build's path against the portable reference, and repeatability */
    lib_fwd(&g, &s, x, wt, b, y2, NULL, 1);
    e = relerr_ff(ny, y, y2);
    TT_CHECK_MSG(e < 1e-5, "%s: fwd vs portable rel %g", tag, e);
#if EXACT_PORTABLE
    if (depthwise) /* the vector loops make the portable kernel's operations */
        TT_CHECK_MSG(memcmp(y, y2, ny * sizeof(float)) == 0, "%s: fwd bits differ", tag);
#endif
    lib_fwd(&g, &s, x, wt, b, y2, sc, 0);
    TT_CHECK_MSG(memcmp(y, y2, ny * sizeof(float)) == 0, "%s: fwd not repeatable", tag);
    lib_bwd(&g, &s, x, wt, dy, dx2, dw2, db2, NULL, 1);
    fsub(nw, dw2, dw0); fsub(nb, db2, db0);
    e = relerr_ff(nx, dx2, dx);
    TT_CHECK_MSG(e < 1e-5, "%s: dx vs portable rel %g", tag, e);
    e = relerr_ff(nw, dw2, dw);
    TT_CHECK_MSG(e < 1e-5, "%s: dw vs portable rel %g", tag, e);
    e = relerr_ff(nb, db2, db);
    TT_CHECK_MSG(e < 1e-5, "%s: db vs portable rel %g", tag, e);
#if EXACT_PORTABLE
    if (depthwise)
        TT_CHECK_MSG(memcmp(dx, dx2, nx * sizeof(float)) == 0 &&
                         memcmp(dw, dw2, nw * sizeof(float)) == 0 &&
                         memcmp(db, db2, nb * sizeof(float)) == 0,
                     "%s: bwd bits differ from the portable kernel's", tag);
#endif
    /* dx alone, then dw and db alone: the bits of the full call */
    lib_bwd(&g, &s, x, wt, dy, dx2, NULL, NULL, sc, 0);
    TT_CHECK_MSG(memcmp(dx, dx2, nx * sizeof(float)) == 0, "%s: dx-only call differs", tag);
    memcpy(dw2, dw0, nw * sizeof(float)); memcpy(db2, db0, nb * sizeof(float));
    lib_bwd(&g, &s, x, wt, dy, NULL, dw2, db2, sc, 0);
    fsub(nw, dw2, dw0); fsub(nb, db2, db0);
    TT_CHECK_MSG(memcmp(dw, dw2, nw * sizeof(float)) == 0, "%s: dw-only call differs", tag);
    TT_CHECK_MSG(memcmp(db, db2, nb * sizeof(float)) == 0, "%s: db with dw differs", tag);
    memcpy(db2, db0, nb * sizeof(float));
    lib_bwd(&g, &s, x, wt, dy, NULL, NULL, db2, sc, 0);
    fsub(nb, db2, db0);
    TT_CHECK_MSG(memcmp(db, db2, nb * sizeof(float)) == 0, "%s: db-only call differs", tag);
    /* NULL scratch: another path (the portable one where scratch is needed), same values */
    memcpy(dw2, dw0, nw * sizeof(float)); memcpy(db2, db0, nb * sizeof(float));
    lib_bwd(&g, &s, x, wt, dy, dx2, dw2, db2, NULL, 0);
    fsub(nw, dw2, dw0); fsub(nb, db2, db0);
    e = relerr_ff(nx, dx2, dx);
    TT_CHECK_MSG(e < 1e-5, "%s: dx (NULL scratch) rel %g", tag, e);
    e = relerr_ff(nw, dw2, dw);
    TT_CHECK_MSG(e < 1e-5, "%s: dw (NULL scratch) rel %g", tag, e);

    free(x); free(wt); free(b); free(dy); free(y); free(y2); free(dx); free(dx2); free(dw);
    free(dw0); free(dw2); free(db); free(db0); free(db2); free(sc);
    free(xd); free(wd); free(bd); free(rd); free(yd); free(gx); free(gw); free(gb);
}

TTEST(conv2d_shape) {
    ipup_conv2d_shape s;
    /* DS-CNN's first layer: 49x10, k10x4, s2, same -> 25x5, padding 9 rows (4 before),
       2 columns (1 before) */
    TT_EQ_INT(ipup_conv2d_shape_init(&s, 49, 10, 1, 64, 10, 4, 2, 2, 1), 0);
    TT_EQ_INT(s.oh, 25); TT_EQ_INT(s.ow, 5); TT_EQ_INT(s.pad_top, 4); TT_EQ_INT(s.pad_left, 1);
    TT_EQ_INT(s.h, 49); TT_EQ_INT(s.w, 10); TT_EQ_INT(s.ci, 1); TT_EQ_INT(s.co, 64);
    TT_EQ_INT(s.kh, 10); TT_EQ_INT(s.kw, 4); TT_EQ_INT(s.sh, 2); TT_EQ_INT(s.sw, 2);
    /* MobileNet: 96x96 k3 s2 same -> 48x48, total padding 1: none before, one after */
    TT_EQ_INT(ipup_conv2d_shape_init(&s, 96, 96, 3, 8, 3, 3, 2, 2, 1), 0);
    TT_EQ_INT(s.oh, 48); TT_EQ_INT(s.ow, 48); TT_EQ_INT(s.pad_top, 0); TT_EQ_INT(s.pad_left, 0);
    /* ResNet-8's shortcut: 1x1 s2 on 32x32 -> 16x16, no padding either way */
    TT_EQ_INT(ipup_conv2d_shape_init(&s, 32, 32, 16, 32, 1, 1, 2, 2, 1), 0);
    TT_EQ_INT(s.oh, 16); TT_EQ_INT(s.pad_top, 0);
    /* valid: floor((in - k) / s) + 1 */
    TT_EQ_INT(ipup_conv2d_shape_init(&s, 7, 8, 2, 3, 3, 2, 2, 3, 0), 0);
    TT_EQ_INT(s.oh, 3); TT_EQ_INT(s.ow, 3); TT_EQ_INT(s.pad_top, 0); TT_EQ_INT(s.pad_left, 0);
    /* same with the kernel larger than the input: padding on both sides */
    TT_EQ_INT(ipup_conv2d_shape_init(&s, 2, 1, 1, 1, 5, 3, 1, 1, 1), 0);
    TT_EQ_INT(s.oh, 2); TT_EQ_INT(s.ow, 1); TT_EQ_INT(s.pad_top, 2); TT_EQ_INT(s.pad_left, 1);
    TT_EQ_INT((long long)ipup_conv2d_scratch_floats(&s, 3), 5 * 3 * 1 + 2 * 1 * 15);
    TT_EQ_INT((long long)ipup_conv2d_scratch_floats(NULL, 3), 0);
}

TTEST(conv2d_shape_refused) {
    ipup_conv2d_shape s;
    const int bad[][9] = { /* h w ci co kh kw sh sw same */
        {0, 5, 1, 1, 1, 1, 1, 1, 0},  {5, 0, 1, 1, 1, 1, 1, 1, 1},  {5, 5, 0, 1, 1, 1, 1, 1, 0},
        {5, 5, 1, 0, 1, 1, 1, 1, 0},  {5, 5, 1, 1, 0, 1, 1, 1, 1},  {5, 5, 1, 1, 1, -1, 1, 1, 0},
        {5, 5, 1, 1, 1, 1, 0, 1, 0},  {5, 5, 1, 1, 1, 1, 1, -2, 1}, {5, 5, 1, 1, 6, 1, 1, 1, 0},
        {5, 5, 1, 1, 1, 6, 1, 1, 0},  {-5, 5, 1, 1, 1, 1, 1, 1, 1},
        {65536, 65536, 1, 1, 1, 1, 1, 1, 0},      /* the input passes INT_MAX elements */
        {2000, 2000, 64, 64, 3, 3, 1, 1, 1},      /* im2col: 4e6 positions x 576 taps */
        {1, 1, 46341, 46341, 1, 1, 1, 1, 0},      /* the kernel: ci co > INT_MAX */
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int *a = bad[i];
        memset(&s, 0x5A, sizeof s);
        TT_CHECK_MSG(ipup_conv2d_shape_init(&s, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                            a[8]) == -1,
                     "case %zu accepted", i);
        TT_CHECK_MSG(s.h == 0 && s.oh == 0 && s.kh == 0, "case %zu: shape not zeroed", i);
    }
    TT_EQ_INT(ipup_conv2d_shape_init(NULL, 5, 5, 1, 1, 1, 1, 1, 1, 0), -1);
    /* the largest accepted: exactly INT_MAX-bounded pieces stay accepted */
    TT_EQ_INT(ipup_conv2d_shape_init(&s, 5, 5, 1, 1, 5, 5, 1, 1, 0), 0);
    TT_EQ_INT(s.oh, 1);
}

TTEST(conv2d_fd) {
    check_conv2d(1, 5, 4, 2, 3, 3, 3, 1, 1, 1, 0, 1);
    check_conv2d(3, 7, 6, 3, 5, 3, 2, 2, 2, 1, 0, 1);   /* odd sizes, stride 2, same */
    check_conv2d(1, 9, 7, 1, 17, 5, 3, 2, 1, 0, 0, 1);  /* valid, mixed strides */
    check_conv2d(3, 4, 5, 2, 4, 1, 1, 2, 2, 1, 0, 1);   /* 1x1 s2 */
    check_conv2d(1, 6, 6, 4, 6, 1, 1, 1, 1, 0, 0, 1);   /* 1x1 s1 */
    check_conv2d(1, 2, 3, 1, 2, 5, 4, 1, 1, 1, 0, 1);   /* kernel beyond the input (same) */
    check_conv2d(3, 11, 6, 1, 20, 10, 4, 2, 2, 1, 0, ttest_slow() ? 0 : 1); /* DS-CNN's, small */
}

TTEST(conv2d_networks) {
    if (ttest_slow()) {
        check_conv2d(1, 13, 10, 1, 16, 10, 4, 2, 2, 1, 0, 0);
        check_conv2d(1, 9, 9, 3, 8, 3, 3, 2, 2, 1, 0, 0);
        return;
    }
    check_conv2d(1, 49, 10, 1, 64, 10, 4, 2, 2, 1, 0, 0);   /* DS-CNN, B = 1 and 3 */
    check_conv2d(3, 49, 10, 1, 64, 10, 4, 2, 2, 1, 0, 0);
    check_conv2d(3, 25, 5, 64, 64, 1, 1, 1, 1, 1, 0, 0);    /* DS-CNN pointwise */
    check_conv2d(1, 96, 96, 3, 8, 3, 3, 2, 2, 1, 0, 0);     /* MobileNet's first */
    check_conv2d(3, 48, 48, 8, 16, 1, 1, 1, 1, 1, 0, 0);    /* MobileNet pointwise */
    check_conv2d(1, 32, 32, 3, 16, 3, 3, 1, 1, 1, 0, 0);    /* ResNet-8 */
    check_conv2d(3, 32, 32, 16, 16, 3, 3, 1, 1, 1, 0, 0);
    check_conv2d(3, 32, 32, 16, 32, 3, 3, 2, 2, 1, 0, 0);
    check_conv2d(3, 32, 32, 16, 32, 1, 1, 2, 2, 1, 0, 0);   /* shortcut, same and valid */
    check_conv2d(1, 32, 32, 16, 32, 1, 1, 2, 2, 0, 0, 0);
    check_conv2d(3, 16, 16, 32, 64, 3, 3, 2, 2, 1, 0, 0);
    check_conv2d(3, 13, 11, 7, 19, 3, 3, 1, 1, 0, 0, 0);    /* odd, valid, = conv3x3's shape */
    check_conv2d(1, 15, 17, 5, 33, 4, 5, 3, 2, 1, 0, 0);
}

TTEST(dwconv2d_fd) {
    check_conv2d(1, 5, 4, 3, 0, 3, 3, 1, 1, 1, 1, 1);
    check_conv2d(3, 7, 6, 5, 0, 3, 3, 2, 2, 1, 1, 1);
    check_conv2d(1, 9, 7, 17, 0, 5, 3, 2, 1, 0, 1, 1);
    check_conv2d(3, 2, 3, 2, 0, 5, 4, 1, 1, 1, 1, 1);
    check_conv2d(1, 6, 5, 33, 0, 3, 3, 1, 1, 1, 1, ttest_slow() ? 0 : 1);
}

TTEST(dwconv2d_networks) {
    if (ttest_slow()) {
        check_conv2d(1, 9, 5, 16, 0, 3, 3, 1, 1, 1, 1, 0);
        return;
    }
    check_conv2d(1, 25, 5, 64, 0, 3, 3, 1, 1, 1, 1, 0);     /* DS-CNN */
    check_conv2d(3, 25, 5, 64, 0, 3, 3, 1, 1, 1, 1, 0);
    check_conv2d(3, 48, 48, 8, 0, 3, 3, 1, 1, 1, 1, 0);     /* MobileNet s1 and s2 */
    check_conv2d(3, 48, 48, 16, 0, 3, 3, 2, 2, 1, 1, 0);
    check_conv2d(1, 3, 3, 64, 0, 3, 3, 1, 1, 1, 1, 0);
    check_conv2d(3, 13, 11, 21, 0, 3, 3, 2, 2, 0, 1, 0);    /* odd, valid */
}

/* ------------------------------------------------------------ batch norm */

#define IX(r, c) ((size_t)(r) * (size_t)C + (size_t)(c)) /* element (r, c) of an (N, C) array */

typedef struct { int N, C; double eps, *x, *g, *b, *r, *y; } bn_ctx;
/* Ioffe & Szegedy, Algorithm 1, in double: the biased variance of the batch */
static void ref_bn_train(int N, int C, double eps, const double *x, const double *g,
                         const double *b, double *y, double *mean, double *var) {
    int r, c;
    for (c = 0; c < C; c++) {
        double m = 0.0, v = 0.0;
        for (r = 0; r < N; r++) m += x[IX(r, c)];
        m /= N;
        for (r = 0; r < N; r++) v += (x[IX(r, c)] - m) * (x[IX(r, c)] - m);
        v /= N;
        if (mean) mean[c] = m;
        if (var) var[c] = v;
        for (r = 0; r < N; r++)
            y[IX(r, c)] = g[c] * (x[IX(r, c)] - m) / sqrt(v + eps) + b[c];
    }
}
static double bn_loss(void *vc) {
    bn_ctx *c = (bn_ctx *)vc;
    ref_bn_train(c->N, c->C, c->eps, c->x, c->g, c->b, c->y, NULL, NULL);
    return dot((size_t)c->N * (size_t)c->C, c->y, c->r);
}

static void check_bn(int N, int C, int use_fd) {
    const size_t n = (size_t)N * (size_t)C;
    const float eps = 1e-3f;
    float *x = frand(n, 2.0), *g = frand((size_t)C, 1.0), *b = frand((size_t)C, 1.0);
    float *dy = frand(n, 1.0), *y = falloc(n), *y2 = falloc(n), *dx = falloc(n);
    float *mean = falloc((size_t)C), *inv = falloc((size_t)C), *dg = frand((size_t)C, 1.0);
    float *db = frand((size_t)C, 1.0), *dg0 = fcopy((size_t)C, dg), *db0 = fcopy((size_t)C, db);
    float *rm = frand((size_t)C, 1.0), *rv = falloc((size_t)C), *rm0, *rv0;
    double *xd, *gd, *bd, *rd, *yd = dalloc(n), *md = dalloc((size_t)C), *vd = dalloc((size_t)C);
    double *gx = dalloc(n), *gg = dalloc((size_t)C), *gb = dalloc((size_t)C), e;
    bn_ctx c;
    size_t i;
    int k;
    /* channel means differ (by up to 3.5: x - mean loses about |mean| 6e-8 to rounding, which
       the normalisation multiplies by invstd, up to 1/sqrt(eps) = 32 for a flat channel) */
    for (i = 0; i < n; i++) x[i] += (float)(i % (size_t)C % 8) * 0.5f;
    for (k = 0; k < C; k++) rv[k] = 0.5f + (float)k * 0.01f;
    rm0 = fcopy((size_t)C, rm); rv0 = fcopy((size_t)C, rv);
    xd = todouble(n, x); gd = todouble((size_t)C, g); bd = todouble((size_t)C, b);
    rd = todouble(n, dy);

    ipup_batchnorm_fwd_train_f32(N, C, x, g, b, eps, y, mean, inv);
    ref_bn_train(N, C, (double)eps, xd, gd, bd, yd, md, vd);
    e = relerr_fd(n, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "bn N%d C%d: fwd rel err %g", N, C, e);
    for (k = 0; k < C; k++) {
        TT_NEAR(mean[k], md[k], 1e-5 * (1.0 + fabs(md[k])));
        TT_NEAR(inv[k], 1.0 / sqrt(vd[k] + (double)eps), 1e-5 / sqrt(vd[k] + (double)eps));
    }
    memcpy(y2, x, n * sizeof(float)); /* y may alias x */
    ipup_batchnorm_fwd_train_f32(N, C, y2, g, b, eps, y2, mean, inv);
    TT_CHECK_MSG(memcmp(y, y2, n * sizeof(float)) == 0, "bn fwd in place differs");

    ipup_batchnorm_bwd_f32(N, C, x, g, mean, inv, dy, dx, dg, db);
    fsub((size_t)C, dg, dg0); fsub((size_t)C, db, db0);
    c.N = N; c.C = C; c.eps = (double)eps; c.x = xd; c.g = gd; c.b = bd; c.r = rd; c.y = yd;
    if (use_fd) {
        fd_grad(xd, n, 1e-4, bn_loss, &c, gx);
        fd_grad(gd, (size_t)C, 1e-4, bn_loss, &c, gg);
        fd_grad(bd, (size_t)C, 1e-4, bn_loss, &c, gb);
    } else { /* the textbook gradient in double */
        int r;
        for (k = 0; k < C; k++) {
            double sdy = 0.0, sdyx = 0.0, is = 1.0 / sqrt(vd[k] + (double)eps);
            for (r = 0; r < N; r++) {
                sdy += rd[(size_t)r * (size_t)C + (size_t)k];
                sdyx += rd[IX(r, k)] * (xd[IX(r, k)] - md[k]) * is;
            }
            gg[k] = sdyx; gb[k] = sdy;
            for (r = 0; r < N; r++)
                gx[(size_t)r * (size_t)C + (size_t)k] = gd[k] * is / N *
                    (N * rd[IX(r, k)] - sdy - (xd[IX(r, k)] - md[k]) * is * sdyx);
        }
    }
    e = relerr_fd(n, dx, gx, 1.0);
    TT_CHECK_MSG(e < 1e-4, "bn N%d C%d: dx rel err %g", N, C, e);
    e = relerr_fd((size_t)C, dg, gg, 1.0);
    TT_CHECK_MSG(e < 1e-4, "bn N%d C%d: dgamma rel err %g", N, C, e);
    e = relerr_fd((size_t)C, db, gb, 1.0);
    TT_CHECK_MSG(e < 1e-4, "bn N%d C%d: dbeta rel err %g", N, C, e);
    memcpy(dx, dy, n * sizeof(float)); /* dx may alias dy; NULL gradients skipped */
    ipup_batchnorm_bwd_f32(N, C, x, g, mean, inv, dx, dx, NULL, NULL);
    e = relerr_fd(n, dx, gx, 1.0);
    TT_CHECK_MSG(e < 1e-4, "bn N%d C%d: dx in place rel err %g", N, C, e);

    /* inference mode against its formula; its backward against FD of it (linear in x) */
    ipup_batchnorm_fwd_infer_f32(N, C, x, g, b, rm, rv, eps, y);
    for (i = 0; i < n; i++) {
        const size_t k2 = i % (size_t)C;
        yd[i] = gd[k2] * (xd[i] - (double)rm[k2]) / sqrt((double)rv[k2] + (double)eps) + bd[k2];
        gx[i] = rd[i] * gd[k2] / sqrt((double)rv[k2] + (double)eps);
    }
    e = relerr_fd(n, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "bn infer N%d C%d: fwd rel err %g", N, C, e);
    ipup_batchnorm_bwd_infer_f32(N, C, g, rv, eps, dy, dx);
    e = relerr_fd(n, dx, gx, 1.0);
    TT_CHECK_MSG(e < 1e-5, "bn infer N%d C%d: dx rel err %g", N, C, e);

    /* running statistics: Keras's update with the biased batch variance */
    ipup_batchnorm_running_f32(C, N, 0.99f, mean, inv, eps, rm, rv);
    for (k = 0; k < C; k++) {
        TT_NEAR(rm[k], 0.99 * (double)rm0[k] + 0.01 * md[k], 1e-6 * (1.0 + fabs(md[k])));
        TT_NEAR(rv[k], 0.99 * (double)rv0[k] + 0.01 * vd[k], 2e-6 * (1.0 + vd[k]));
    }
    memcpy(rm0, rm, (size_t)C * sizeof(float));
    ipup_batchnorm_running_f32(C, 0, 0.99f, mean, inv, eps, rm, rv); /* empty batch */
    TT_CHECK(memcmp(rm, rm0, (size_t)C * sizeof(float)) == 0);

    free(x); free(g); free(b); free(dy); free(y); free(y2); free(dx); free(mean); free(inv);
    free(dg); free(db); free(dg0); free(db0); free(rm); free(rv); free(rm0); free(rv0);
    free(xd); free(gd); free(bd); free(rd); free(yd); free(md); free(vd); free(gx); free(gg);
    free(gb);
}

TTEST(batchnorm_fd) {
    check_bn(1, 3, 1);  /* one row: zero variance, xhat 0 */
    check_bn(5, 3, 1);
    check_bn(12, 17, 1);
    check_bn(7, 70, ttest_slow() ? 0 : 1); /* more than 64 channels: two chunks */
}
TTEST(batchnorm_networks) {
    check_bn(3 * 25 * 5, 64, 0);              /* DS-CNN, B = 3 */
    check_bn(ttest_slow() ? 48 : 3 * 48 * 48, 8, 0); /* MobileNet's first */
    check_bn(3 * 32 * 32, 16, 0);             /* ResNet-8 (no bn in its reference, but cheap) */
    check_bn(3, 128, 0);                      /* FC autoencoder: B = 3 rows of 128 */
}

/* ------------------------------------------------------------ average pooling */

static void check_avgpool(int B, int H, int W, int C, int kh, int kw, int sh, int sw) {
    const size_t Bz = (size_t)B, Hz = (size_t)H, Wz = (size_t)W, Cz = (size_t)C;
    const size_t khz = (size_t)kh, kwz = (size_t)kw, shz = (size_t)sh, swz = (size_t)sw;
    const size_t OH = (Hz - khz) / shz + 1, OW = (Wz - kwz) / swz + 1;
    const size_t nx = Bz * Hz * Wz * Cz, ny = Bz * OH * OW * Cz;
    float *x = frand(nx, 1.0), *dy = frand(ny, 1.0), *y = falloc(ny), *dx = falloc(nx);
    double *yd = dalloc(ny), *gx = dalloc(nx), e, area = (double)(kh * kw);
    size_t n, oh, ow, c, i, j;
    for (n = 0; n < Bz; n++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++)
                for (c = 0; c < Cz; c++) {
                    const size_t yo = ((n * OH + oh) * OW + ow) * Cz + c;
                    double s = 0.0;
                    for (i = 0; i < khz; i++)
                        for (j = 0; j < kwz; j++) {
                            const size_t xo =
                                ((n * Hz + oh * shz + i) * Wz + ow * swz + j) * Cz + c;
                            s += (double)x[xo];
                            gx[xo] += (double)dy[yo] / area; /* d(mean)/dx = 1/(kh kw) */
                        }
                    yd[yo] = s / area;
                }
    for (j = 0; j < nx; j++) dx[j] = 1e30f;
    ipup_avgpool_fwd_f32(B, H, W, C, kh, kw, sh, sw, x, y);
    ipup_avgpool_bwd_f32(B, H, W, C, kh, kw, sh, sw, dy, dx);
    e = relerr_fd(ny, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-6, "avgpool B%d %dx%dx%d k%dx%d s%dx%d: fwd rel %g", B, H, W, C, kh, kw,
                 sh, sw, e);
    e = relerr_fd(nx, dx, gx, 1.0);
    TT_CHECK_MSG(e < 1e-6, "avgpool B%d %dx%dx%d k%dx%d s%dx%d: dx rel %g", B, H, W, C, kh, kw,
                 sh, sw, e);
    free(x); free(dy); free(y); free(dx); free(yd); free(gx);
}
TTEST(avgpool) {
    check_avgpool(1, 25, 5, 64, 24, 5, 24, 5); /* DS-CNN: the last row is in no window */
    check_avgpool(3, 25, 5, 64, 24, 5, 24, 5);
    check_avgpool(3, 8, 8, 64, 8, 8, 8, 8);    /* ResNet-8: global */
    check_avgpool(3, 3, 3, 64, 3, 3, 3, 3);    /* MobileNet: global 3x3 */
    check_avgpool(3, 7, 9, 5, 3, 2, 2, 1);     /* overlapping windows, odd sizes */
    check_avgpool(1, 6, 6, 17, 2, 2, 2, 2);
    check_avgpool(2, 5, 4, 3, 1, 1, 1, 1);     /* identity */
}

/* ------------------------------------------------------------ element-wise */

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }
static double hswish(double v) {
    double r = v + 3.0 < 0.0 ? 0.0 : v + 3.0 > 6.0 ? 6.0 : v + 3.0;
    return v * r / 6.0;
}
/* per element: |a - b| <= rel |b| + abs_ */
static int close_el(float a, double b, double rel, double abs_) {
    return fabs((double)a - b) <= rel * fabs(b) + abs_;
}
TTEST(activations) {
    enum { N = 2003 }; /* odd: vector body and scalar tail */
    float *x = falloc(N), *y = falloc(N), *y2 = falloc(N), *dy = frand(N, 1.0), *dx = falloc(N);
    float *dx2 = falloc(N);
    const float alpha = 0.3f;
    int i, bad = 0;
    for (i = 0; i < N; i++) x[i] = (float)(trand() * 12.0);
    x[0] = 0.0f; x[1] = -3.0f; x[2] = 3.0f; x[3] = 0.625f; x[4] = -0.625f; x[5] = 1e-6f;
    x[6] = 90.0f; x[7] = -90.0f; x[8] = -0.0f; x[9] = 0.62499994f;
    ipup_sigmoid_fwd_f32(N, x, y);
    for (i = 0; i < N; i++) bad += !close_el(y[i], sigm((double)x[i]), 4e-7, 1e-38);
    TT_CHECK_MSG(bad == 0, "sigmoid: %d elements off", bad);
    ipup_sigmoid_bwd_f32(N, y, dy, dx);
    for (bad = 0, i = 0; i < N; i++) { /* from the float output, as the kernel: 1 - y is
                                          exact (Sterbenz) for y >= 0.5 */
        const double s = (double)y[i];
        bad += !close_el(dx[i], (double)dy[i] * s * (1.0 - s), 4e-7, 1e-45);
    }
    TT_CHECK_MSG(bad == 0, "sigmoid bwd: %d elements off", bad);
    ipup_tanh_fwd_f32(N, x, y);
    for (bad = 0, i = 0; i < N; i++) bad += !close_el(y[i], tanh((double)x[i]), 4e-7, 1e-45);
    TT_CHECK_MSG(bad == 0, "tanh: %d elements off", bad);
    ipup_tanh_bwd_f32(N, y, dy, dx);
    for (bad = 0, i = 0; i < N; i++) {
        const double t = tanh((double)x[i]);
        bad += !close_el(dx[i], (double)dy[i] * (1.0 - t * t), 2e-6, 1e-7);
    }
    TT_CHECK_MSG(bad == 0, "tanh bwd: %d elements off", bad);
    ipup_leaky_relu_fwd_f32(N, alpha, x, y);
    ipup_leaky_relu_bwd_f32(N, alpha, x, dy, dx);
    for (bad = 0, i = 0; i < N; i++) {
        bad += y[i] != (x[i] > 0.0f ? x[i] : alpha * x[i]);
        bad += dx[i] != (x[i] > 0.0f ? dy[i] : alpha * dy[i]);
    }
    TT_CHECK_MSG(bad == 0, "leaky relu: %d elements off", bad);
    ipup_hard_swish_fwd_f32(N, x, y);
    ipup_hard_swish_bwd_f32(N, x, dy, dx);
    for (bad = 0, i = 0; i < N; i++) {
        const double v = (double)x[i];
        const double d = v <= -3.0 ? 0.0 : v >= 3.0 ? 1.0 : (2.0 * v + 3.0) / 6.0;
        bad += !close_el(y[i], hswish(v), 3e-7, 1e-45);
        bad += !close_el(dx[i], (double)dy[i] * d, 3e-7, 1e-45);
    }
    TT_CHECK_MSG(bad == 0, "hard-swish: %d elements off", bad);
    /* every output may alias its input; NaN passes through */
    memcpy(y2, x, N * sizeof(float));
    ipup_tanh_fwd_f32(N, y2, y2);
    ipup_tanh_fwd_f32(N, x, y);
    TT_CHECK(memcmp(y, y2, N * sizeof(float)) == 0);
    memcpy(dx2, dy, N * sizeof(float));
    ipup_sigmoid_bwd_f32(N, y, dx2, dx2);
    ipup_sigmoid_bwd_f32(N, y, dy, dx);
    TT_CHECK(memcmp(dx, dx2, N * sizeof(float)) == 0);
    x[20] = NAN; x[N - 1] = NAN;
    ipup_sigmoid_fwd_f32(N, x, y); TT_CHECK(y[20] != y[20] && y[N - 1] != y[N - 1]);
    ipup_tanh_fwd_f32(N, x, y); TT_CHECK(y[20] != y[20] && y[N - 1] != y[N - 1]);
    ipup_hard_swish_fwd_f32(N, x, y); TT_CHECK(y[20] != y[20]);
    free(x); free(y); free(y2); free(dy); free(dx); free(dx2);
}

/* the vector loops against the scalar code (a call of one element takes the scalar path):
   the same operations, so the same bits where the compiler does not contract (gcc);
   within 4e-7 relative elsewhere; NaN in, NaN out */
TTEST(activations_vector_bits) {
    enum { N = 515 };
    float *x = falloc(N), *dy = frand(N, 1.0), *a = falloc(N), *b = falloc(N);
    int k, i, bad;
    for (i = 0; i < N; i++) x[i] = (float)(trand() * (i < 256 ? 4.0 : 100.0));
    x[3] = NAN; x[7] = -0.0f; x[8] = 0.0f; x[9] = -3.0f; x[10] = 3.0f; x[11] = 0.625f;
    x[12] = -0.625f; x[13] = INFINITY; x[14] = -INFINITY;
    for (k = 0; k < 8; k++) {
        for (i = -1; i < N; i++) {
            const int n = i < 0 ? N : 1, o = i < 0 ? 0 : i;
            float *out = (i < 0 ? a : b) + o;
            switch (k) {
            case 0: ipup_sigmoid_fwd_f32(n, x + o, out); break;
            case 1: ipup_tanh_fwd_f32(n, x + o, out); break;
            case 2: ipup_hard_swish_fwd_f32(n, x + o, out); break;
            case 3: ipup_leaky_relu_fwd_f32(n, 0.3f, x + o, out); break;
            case 4: ipup_sigmoid_bwd_f32(n, x + o, dy + o, out); break;
            case 5: ipup_tanh_bwd_f32(n, x + o, dy + o, out); break;
            case 6: ipup_hard_swish_bwd_f32(n, x + o, dy + o, out); break;
            default: ipup_leaky_relu_bwd_f32(n, 0.3f, x + o, dy + o, out);
            }
            if (i < 0) i = -1; /* the whole array first, then element by element */
        }
        for (bad = 0, i = 0; i < N; i++) {
            const int nan_a = a[i] != a[i], nan_b = b[i] != b[i];
#if EXACT_PORTABLE
            bad += nan_a != nan_b || (!nan_a && memcmp(&a[i], &b[i], sizeof(float)) != 0);
#else
            /* a contracted 1 - y y of a backward cancels differently: the operands' scale */
            const double xa = fabs((double)x[i]),
                         scale = k >= 4 ? 4e-7 * fabs((double)dy[i]) * (1.0 + xa * xa) : 1e-40;
            bad += nan_a != nan_b ||
                   (!nan_a && a[i] != b[i] && !close_el(a[i], (double)b[i], 4e-7, scale));
#endif
        }
        TT_CHECK_MSG(bad == 0, "activation kind %d: %d elements differ from the scalar code", k,
                     bad);
        TT_CHECK_MSG(k >= 3 || a[3] != a[3], "activation kind %d: NaN not passed through", k);
    }
    free(x); free(dy); free(a); free(b);
}

/* FD of each activation on a few points away from its kinks, in the library's float
   forward (the backward's formula against the forward it belongs to) */
TTEST(activations_fd) {
    const float pts[] = {-5.0f, -2.5f, -1.0f, -0.3f, 0.2f, 0.6f, 0.7f, 1.5f, 2.9f, 4.0f};
    const float h = 1e-2f;
    int i, k;
    for (i = 0; i < 10; i++) {
        float v[3] = {pts[i] - h, pts[i] + h, pts[i]}, y[3], one = 1.0f, d;
        for (k = 0; k < 4; k++) {
            double fd, tol = 2e-4;
            switch (k) {
            case 0: ipup_sigmoid_fwd_f32(3, v, y); ipup_sigmoid_bwd_f32(1, y + 2, &one, &d); break;
            case 1: ipup_tanh_fwd_f32(3, v, y); ipup_tanh_bwd_f32(1, y + 2, &one, &d); break;
            case 2: ipup_leaky_relu_fwd_f32(3, 0.3f, v, y);
                    ipup_leaky_relu_bwd_f32(1, 0.3f, v + 2, &one, &d); break;
            default: ipup_hard_swish_fwd_f32(3, v, y); ipup_hard_swish_bwd_f32(1, v + 2, &one, &d);
            }
            fd = ((double)y[1] - (double)y[0]) / (2.0 * (double)h);
            if (k == 1 || k == 0) tol = 1e-3; /* O(h^2) curvature term */
            TT_CHECK_MSG(fabs(fd - (double)d) < tol, "activation %d at %g: %g vs FD %g", k,
                         (double)pts[i], (double)d, fd);
        }
    }
}

typedef struct { int B, N; double *z, *t; } bce_ctx;
static double ref_bce(void *vc) {
    bce_ctx *c = (bce_ctx *)vc;
    double s = 0.0;
    size_t i;
    for (i = 0; i < (size_t)c->B * (size_t)c->N; i++) { /* -t log p - (1 - t) log(1 - p) */
        const double p = sigm(c->z[i]);
        s += -c->t[i] * log(p) - (1.0 - c->t[i]) * log1p(-p);
    }
    return s / ((double)c->B * c->N);
}
static void check_bce(int B, int N, double zscale) {
    const size_t n = (size_t)B * (size_t)N;
    float *z = frand(n, zscale), *t = falloc(n), *dz = falloc(n), *dz2 = fcopy(n, z);
    double *g = dalloc(n), e, ref;
    bce_ctx c;
    float loss, loss2;
    size_t i;
    for (i = 0; i < n; i++)
        t[i] = i % 3 == 0 ? 1.0f : i % 3 == 1 ? 0.0f : (float)(0.5 + 0.5 * trand());
    c.B = B; c.N = N; c.z = todouble(n, z); c.t = todouble(n, t);
    loss = ipup_bce_logits_f32(B, N, z, t, dz);
    ref = ref_bce(&c);
    TT_CHECK_MSG(fabs((double)loss - ref) <= 2e-6 * (1.0 + ref), "bce B%d N%d: %.9g vs %.9g", B,
                 N, (double)loss, ref);
    fd_grad(c.z, n, 1e-5, ref_bce, &c, g);
    e = relerr_fd(n, dz, g, 1e-30);
    TT_CHECK_MSG(e < 1e-4, "bce B%d N%d: dz rel err %g", B, N, e);
    loss2 = ipup_bce_logits_f32(B, N, dz2, t, dz2); /* dz may alias z */
    TT_CHECK(loss2 == loss && memcmp(dz, dz2, n * sizeof(float)) == 0);
    TT_CHECK(ipup_bce_logits_f32(B, N, z, t, NULL) == loss);
    free(z); free(t); free(dz); free(dz2); free(g); free(c.z); free(c.t);
}
TTEST(bce_logits) {
    check_bce(1, 1, 3.0);
    check_bce(3, 7, 3.0);
    check_bce(4, 640, 8.0); /* the autoencoder's width, logits up to 8 */
    {   /* stable at extreme logits: no inf, no NaN */
        float z[4] = {200.0f, -200.0f, 90.0f, -90.0f}, t[4] = {1.0f, 0.0f, 0.0f, 1.0f}, dz[4];
        float l = ipup_bce_logits_f32(1, 4, z, t, dz);
        TT_NEAR(l, (0.0 + 0.0 + 90.0 + 90.0) / 4.0, 1e-4);
        TT_NEAR(dz[0], 0.0, 1e-12); TT_NEAR(dz[1], 0.0, 1e-12);
        TT_NEAR(dz[2], 0.25, 1e-7); TT_NEAR(dz[3], -0.25, 1e-7);
    }
}

static const ttest_case cases[] = {
    TT_CASE(conv2d_shape),  TT_CASE(conv2d_shape_refused), TT_CASE(conv2d_fd),
    TT_CASE(conv2d_networks), TT_CASE(dwconv2d_fd),        TT_CASE(dwconv2d_networks),
    TT_CASE(batchnorm_fd),  TT_CASE(batchnorm_networks),   TT_CASE(avgpool),
    TT_CASE(activations),   TT_CASE(activations_vector_bits), TT_CASE(activations_fd),
    TT_CASE(bce_logits),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
