/* test_kernels.c - ipupipe_kernels.h against independent references:
 *   - every backward against central finite differences of a double-precision forward
 *     (plain scalar loops, tests/ref_kernels.h), on random inputs, odd sizes and batch 1;
 *   - every forward against the same double-precision scalar loops;
 *   - the SIMD path (whatever this build selected) against the *_portable path within 1e-5
 *     (norm-wise relative), and the same bits on a second run;
 *   - exact-size heap arrays, so ASan / Valgrind catch any access outside them.
 * Under IPUPIPE_TEST_SLOW=1 (Valgrind, sanitizers) the big shapes are skipped or shrunk.
 */
#include "ipupipe_kernels.h"
#include "impl_private.h" /* ipup__expf, linked from build/CONFIG/kernels.o */
#include "ref_kernels.h" /* in double: REF_KERNELS_FLOAT is not defined */
#include "ttest.h"

#include <stdint.h>
#include <stdlib.h>

/* ------------------------------------------------------------ test helpers */

/* the test's own generator (xorshift64*, Vigna 2016), independent of the library's RNG */
static uint64_t trng_state = 88172645463325252u;
static double trand(void) { /* uniform in [-1, 1) */
    trng_state ^= trng_state >> 12;
    trng_state ^= trng_state << 25;
    trng_state ^= trng_state >> 27;
    return (double)((trng_state * 2685821657736338717u) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
static float *falloc(size_t n) { /* exact size: ASan/Valgrind see any overrun */
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!p) abort();
    return p;
}
static double *dalloc(size_t n) {
    double *p = (double *)malloc((n ? n : 1) * sizeof(double));
    if (!p) abort();
    return p;
}
static double *dzeros(size_t n) { /* the bias of the references for "no bias" */
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
static void to_double(size_t n, const float *f, double *d) {
    size_t i;
    for (i = 0; i < n; i++) d[i] = (double)f[i];
}
/* max |a-b| / max(max |b|, floor) */
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
    double m = 1e-30, e = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
        if (!(d <= e)) e = d;
    }
    return e / m;
}

/* ------------------------------------------------------------ double references */

/* ref_dense, ref_dense_bwd_data, ref_dense_bwd_w, ref_conv, ref_conv_bwd: tests/ref_kernels.h */

static double ref_gelu(double v) {
    return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
}
static void ref_maxpool(int B, int H, int W, int C, const double *x, double *y) {
    int n, oh, ow, c, i, j;
    for (n = 0; n < B; n++)
        for (oh = 0; oh < H / 2; oh++)
            for (ow = 0; ow < W / 2; ow++)
                for (c = 0; c < C; c++) {
                    double m = -HUGE_VAL;
                    for (i = 0; i < 2; i++)
                        for (j = 0; j < 2; j++) {
                            double v = x[((n * H + 2 * oh + i) * W + 2 * ow + j) * C + c];
                            if (v > m) m = v;
                        }
                    y[((n * (H / 2) + oh) * (W / 2) + ow) * C + c] = m;
                }
}
static double ref_xent(int B, int C, const double *l, const int32_t *lab) {
    double tot = 0.0;
    int r, c;
    for (r = 0; r < B; r++) {
        double mx = l[r * C], s;
        for (c = 1; c < C; c++) if (l[r * C + c] > mx) mx = l[r * C + c];
        s = exp(l[r * C] - mx);
        for (c = 1; c < C; c++) s += exp(l[r * C + c] - mx);
        tot += log(s) + mx - l[r * C + lab[r]];
    }
    return tot / B;
}
static double dot(size_t n, const double *a, const double *b) {
    double s = 0.0;
    size_t i;
    for (i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Generic central finite difference: grad[i] = (L(p + h e_i) - L(p - h e_i)) / 2h where
   L is evaluated by `loss` in double. */
typedef double (*loss_fn)(void *ctx);
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

/* ------------------------------------------------------------ dense */

typedef struct { int B, IN, OUT; double *x, *w, *b, *r, *y; } dense_ctx;
static double dense_loss(void *vc) {
    dense_ctx *c = (dense_ctx *)vc;
    ref_dense(c->B, c->IN, c->OUT, c->x, c->w, c->b, c->y);
    return dot((size_t)(c->B * c->OUT), c->y, c->r);
}

static void check_dense(int B, int IN, int OUT, int use_fd) {
    size_t nx = (size_t)B * (size_t)IN, nw = (size_t)IN * (size_t)OUT, ny = (size_t)B * (size_t)OUT;
    float *x = frand(nx, 1.0), *w = frand(nw, 0.5), *b = frand((size_t)OUT, 0.5);
    float *dy = frand(ny, 1.0), *y = falloc(ny), *y2 = falloc(ny);
    float *dx = falloc(nx), *dw = frand(nw, 1.0), *db = frand((size_t)OUT, 1.0);
    float *dw0 = falloc(nw), *db0 = falloc((size_t)OUT);
    double *xd = dalloc(nx), *wd = dalloc(nw), *bd = dalloc((size_t)OUT), *rd = dalloc(ny),
           *yd = dalloc(ny), *g = dalloc(nw > nx ? nw : nx), *zd = dzeros((size_t)OUT);
    dense_ctx c;
    double e;
    size_t i;
    memcpy(dw0, dw, nw * sizeof(float));
    memcpy(db0, db, (size_t)OUT * sizeof(float));
    to_double(nx, x, xd); to_double(nw, w, wd); to_double((size_t)OUT, b, bd); to_double(ny, dy, rd);

    /* forward against the scalar double loop, with and without bias */
    ipup_dense_fwd_f32(B, IN, OUT, x, w, b, y);
    ref_dense(B, IN, OUT, xd, wd, bd, yd);
    e = relerr_fd(ny, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "dense fwd %dx%dx%d rel err %g", B, IN, OUT, e);
    ipup_dense_fwd_f32(B, IN, OUT, x, w, NULL, y);
    ref_dense(B, IN, OUT, xd, wd, zd, yd);
    e = relerr_fd(ny, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "dense fwd (no bias) %dx%dx%d rel err %g", B, IN, OUT, e);

    /* backward: dx written, dw/db added */
    for (i = 0; i < nx; i++) dx[i] = 1e30f; /* must be overwritten */
    ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, dx, dw, db);
    for (i = 0; i < nw; i++) dw[i] -= dw0[i];
    for (i = 0; i < (size_t)OUT; i++) db[i] -= db0[i];

    c.B = B; c.IN = IN; c.OUT = OUT; c.x = xd; c.w = wd; c.b = bd; c.r = rd; c.y = yd;
    if (use_fd) {
        fd_grad(xd, nx, 1e-3, dense_loss, &c, g);
        e = relerr_fd(nx, dx, g, 1.0);
        TT_CHECK_MSG(e < 1e-4, "dense dx vs FD %dx%dx%d rel err %g", B, IN, OUT, e);
        fd_grad(wd, nw, 1e-3, dense_loss, &c, g);
        e = relerr_fd(nw, dw, g, 1.0);
        TT_CHECK_MSG(e < 1e-4, "dense dw vs FD %dx%dx%d rel err %g", B, IN, OUT, e);
        fd_grad(bd, (size_t)OUT, 1e-3, dense_loss, &c, g);
        e = relerr_fd((size_t)OUT, db, g, 1.0);
        TT_CHECK_MSG(e < 1e-4, "dense db vs FD %dx%dx%d rel err %g", B, IN, OUT, e);
    } else { /* analytic double references (too big for FD under the time budget) */
        ref_dense_bwd_data(B, IN, OUT, wd, rd, g);
        e = relerr_fd(nx, dx, g, 1.0);
        TT_CHECK_MSG(e < 1e-5, "dense dx %dx%dx%d rel err %g", B, IN, OUT, e);
        for (i = 0; i < nw; i++) g[i] = 0.0; /* ref_dense_bwd_w accumulates */
        ref_dense_bwd_w(B, IN, OUT, xd, rd, g);
        e = relerr_fd(nw, dw, g, 1.0);
        TT_CHECK_MSG(e < 2e-5, "dense dw %dx%dx%d rel err %g", B, IN, OUT, e);
    }

    /* NULL outputs are skipped; dx-only and dw-only give the same numbers as the full call */
    {
        float *dxs = falloc(nx), *dws = falloc(nw), *dbs = falloc((size_t)OUT), *dbk = falloc((size_t)OUT);
        memcpy(dws, dw0, nw * sizeof(float));
        memcpy(dbs, db0, (size_t)OUT * sizeof(float));
        memcpy(dbk, db0, (size_t)OUT * sizeof(float));
        ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, NULL, dws, NULL); /* W op */
        ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, dxs, NULL, NULL); /* I op */
        TT_CHECK(memcmp(dbk, dbs, (size_t)OUT * sizeof(float)) == 0);
        ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, NULL, NULL, dbs);
        for (i = 0; i < nw; i++) dws[i] -= dw0[i];
        for (i = 0; i < (size_t)OUT; i++) dbs[i] -= dbk[i];
        TT_CHECK_MSG(memcmp(dxs, dx, nx * sizeof(float)) == 0, "dense dx-only differs from full call");
        TT_CHECK_MSG(memcmp(dws, dw, nw * sizeof(float)) == 0, "dense dw-only differs from full call");
        TT_CHECK_MSG(memcmp(dbs, db, (size_t)OUT * sizeof(float)) == 0, "dense db-only differs from full call");
        free(dxs); free(dws); free(dbs); free(dbk);
    }

    /* SIMD vs portable, and determinism */
    ipup_dense_fwd_f32(B, IN, OUT, x, w, b, y);
    ipup_dense_fwd_f32_portable(B, IN, OUT, x, w, b, y2);
    e = relerr_ff(ny, y, y2);
    TT_CHECK_MSG(e < 1e-5, "dense fwd simd vs portable %dx%dx%d rel %g", B, IN, OUT, e);
    ipup_dense_fwd_f32(B, IN, OUT, x, w, b, y2);
    TT_CHECK_MSG(memcmp(y, y2, ny * sizeof(float)) == 0, "dense fwd not bitwise repeatable");
    {
        float *dxa = falloc(nx), *dxb = falloc(nx), *dwa = falloc(nw), *dwb = falloc(nw);
        float *dba = falloc((size_t)OUT), *dbb = falloc((size_t)OUT);
        memcpy(dwa, dw0, nw * sizeof(float)); memcpy(dwb, dw0, nw * sizeof(float));
        memcpy(dba, db0, (size_t)OUT * sizeof(float)); memcpy(dbb, db0, (size_t)OUT * sizeof(float));
        ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, dxa, dwa, dba);
        ipup_dense_bwd_f32_portable(B, IN, OUT, x, w, dy, dxb, dwb, dbb);
        e = relerr_ff(nx, dxa, dxb);
        TT_CHECK_MSG(e < 1e-5, "dense dx simd vs portable %dx%dx%d rel %g", B, IN, OUT, e);
        e = relerr_ff(nw, dwa, dwb);
        TT_CHECK_MSG(e < 1e-5, "dense dw simd vs portable %dx%dx%d rel %g", B, IN, OUT, e);
        e = relerr_ff((size_t)OUT, dba, dbb);
        TT_CHECK_MSG(e < 1e-5, "dense db simd vs portable %dx%dx%d rel %g", B, IN, OUT, e);
        memcpy(dwb, dw0, nw * sizeof(float)); memcpy(dbb, db0, (size_t)OUT * sizeof(float));
        ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, dxb, dwb, dbb);
        TT_CHECK_MSG(memcmp(dxa, dxb, nx * sizeof(float)) == 0 &&
                         memcmp(dwa, dwb, nw * sizeof(float)) == 0 &&
                         memcmp(dba, dbb, (size_t)OUT * sizeof(float)) == 0,
                     "dense bwd not bitwise repeatable %dx%dx%d", B, IN, OUT);
        free(dxa); free(dxb); free(dwa); free(dwb); free(dba); free(dbb);
    }
    free(x); free(w); free(b); free(dy); free(y); free(y2); free(dx); free(dw); free(db);
    free(dw0); free(db0); free(xd); free(wd); free(bd); free(rd); free(yd); free(g); free(zd);
}

TTEST(dense_fd) {
    check_dense(1, 1, 1, 1);
    check_dense(1, 5, 3, 1);
    check_dense(3, 7, 5, 1);
    check_dense(5, 17, 19, 1);
    check_dense(9, 13, 35, 1);
    check_dense(2, 3, 70, 1);
}
TTEST(dense_bigger) {
    check_dense(13, 33, 47, 0);
    check_dense(17, 70, 33, 0);
    if (!ttest_slow()) {
        check_dense(32, 784, 256, 0);
        check_dense(16, 256, 128, 0);
        check_dense(64, 32, 10, 0);
        check_dense(7, 300, 129, 0);
        check_dense(25, 129, 300, 0);
    } else {
        check_dense(32, 100, 64, 0);
    }
}
/* degenerate sizes: zero-width products are sums over nothing */
TTEST(dense_degenerate) {
    float x[6] = {1, 2, 3, 4, 5, 6}, w[1] = {0}, b[3] = {0.5f, -1.0f, 2.0f}, y[6], dy[6] = {1, 2, 3, 4, 5, 6};
    float dx[6], db[3] = {0, 0, 0};
    int i;
    ipup_dense_fwd_f32(2, 0, 3, x, w, b, y); /* IN = 0: y = b */
    for (i = 0; i < 6; i++) TT_CHECK(y[i] == b[i % 3]);
    ipup_dense_bwd_f32(2, 0, 3, x, w, dy, NULL, NULL, db); /* IN = 0: db still sums dy */
    TT_CHECK(db[0] == 5.0f && db[1] == 7.0f && db[2] == 9.0f);
    for (i = 0; i < 6; i++) dx[i] = 1e30f;
    ipup_dense_bwd_f32(2, 3, 0, x, w, dy, dx, NULL, NULL); /* OUT = 0: dx = 0 */
    for (i = 0; i < 6; i++) TT_CHECK(dx[i] == 0.0f);
    ipup_dense_fwd_f32(0, 3, 3, x, w, b, y); /* B = 0: nothing, no crash */
}

/* dw and db accumulate: two calls add twice (what gradient accumulation relies on) */
TTEST(dense_accumulates) {
    const int B = 3, IN = 5, OUT = 4;
    float *x = frand(15, 1.0), *w = frand(20, 1.0), *dy = frand(12, 1.0);
    float dw1[20] = {0}, dw2[20] = {0}, db1[4] = {0}, db2[4] = {0};
    int i;
    ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, NULL, dw1, db1);
    ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, NULL, dw2, db2);
    ipup_dense_bwd_f32(B, IN, OUT, x, w, dy, NULL, dw2, db2);
    for (i = 0; i < 20; i++) TT_NEAR(dw2[i], 2.0f * dw1[i], 1e-6);
    for (i = 0; i < 4; i++) TT_NEAR(db2[i], 2.0f * db1[i], 1e-6);
    TT_CHECK(fabsf(dw1[7]) > 0.0f);
    free(x); free(w); free(dy);
}

/* ------------------------------------------------------------ conv3x3 */

typedef struct { int B, H, W, CI, CO; double *x, *w, *b, *r, *y; } conv_ctx;
static double conv_loss(void *vc) {
    conv_ctx *c = (conv_ctx *)vc;
    ref_conv(c->B, c->H, c->W, c->CI, c->CO, c->x, c->w, c->b, c->y);
    return dot((size_t)(c->B * (c->H - 2) * (c->W - 2) * c->CO), c->y, c->r);
}

static void check_conv(int B, int H, int W, int CI, int CO, int use_fd) {
    size_t nx = (size_t)(B * H * W * CI), nw = (size_t)(9 * CI * CO), nb = (size_t)CO;
    size_t ny = (size_t)(B * (H - 2) * (W - 2) * CO);
    size_t nsb = (size_t)IPUP_CONV3X3_BWD_SCRATCH(B, H, W, CI, CO);
    size_t nsf = (size_t)IPUP_CONV3X3_FWD_SCRATCH(B, H, W, CI, CO);
    float *x = frand(nx, 1.0), *w = frand(nw, 0.5), *b = frand(nb, 0.5), *dy = frand(ny, 1.0);
    float *y = falloc(ny), *y2 = falloc(ny), *dx = falloc(nx), *dx2 = falloc(nx);
    float *dw = frand(nw, 1.0), *db = frand(nb, 1.0), *dw0 = falloc(nw), *db0 = falloc(nb);
    float *dw2 = falloc(nw), *db2 = falloc(nb), *sb = falloc(nsb), *sf = falloc(nsf);
    double *xd = dalloc(nx), *wd = dalloc(nw), *bd = dalloc(nb), *rd = dalloc(ny), *yd = dalloc(ny);
    double *g = dalloc(nx > nw ? nx : nw), *zd = dzeros(nb);
    conv_ctx c;
    double e;
    size_t i;
    memcpy(dw0, dw, nw * sizeof(float)); memcpy(db0, db, nb * sizeof(float));
    to_double(nx, x, xd); to_double(nw, w, wd); to_double(nb, b, bd); to_double(ny, dy, rd);

    ipup_conv3x3_fwd_f32(B, H, W, CI, CO, x, w, b, y, sf);
    ref_conv(B, H, W, CI, CO, xd, wd, bd, yd);
    e = relerr_fd(ny, y, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "conv fwd B%d %dx%dx%d->%d rel err %g", B, H, W, CI, CO, e);
    ipup_conv3x3_fwd_f32(B, H, W, CI, CO, x, w, NULL, y2, NULL);
    ref_conv(B, H, W, CI, CO, xd, wd, zd, yd);
    e = relerr_fd(ny, y2, yd, 1.0);
    TT_CHECK_MSG(e < 1e-5, "conv fwd (no bias, NULL scratch) rel err %g", e);

    for (i = 0; i < nx; i++) dx[i] = 1e30f;
    ipup_conv3x3_bwd_f32(B, H, W, CI, CO, x, w, dy, dx, dw, db, sb);
    for (i = 0; i < nw; i++) dw[i] -= dw0[i];
    for (i = 0; i < nb; i++) db[i] -= db0[i];
    c.B = B; c.H = H; c.W = W; c.CI = CI; c.CO = CO;
    c.x = xd; c.w = wd; c.b = bd; c.r = rd; c.y = yd;
    if (use_fd) {
        fd_grad(xd, nx, 1e-3, conv_loss, &c, g);
        e = relerr_fd(nx, dx, g, 1.0);
        TT_CHECK_MSG(e < 1e-4, "conv dx vs FD B%d %dx%dx%d->%d rel err %g", B, H, W, CI, CO, e);
        fd_grad(wd, nw, 1e-3, conv_loss, &c, g);
        e = relerr_fd(nw, dw, g, 1.0);
        TT_CHECK_MSG(e < 1e-4, "conv dw vs FD B%d %dx%dx%d->%d rel err %g", B, H, W, CI, CO, e);
        fd_grad(bd, nb, 1e-3, conv_loss, &c, g);
        e = relerr_fd(nb, db, g, 1.0);
        TT_CHECK_MSG(e < 1e-4, "conv db vs FD rel err %g", e);
    } else { /* analytic double references: the transposed loops of ref_conv */
        double *gx = (double *)calloc(nx + 1, sizeof(double)), *gw = (double *)calloc(nw + 1, sizeof(double));
        double *gb = (double *)calloc(nb + 1, sizeof(double));
        if (!gx || !gw || !gb) abort();
        ref_conv_bwd(B, H, W, CI, CO, xd, wd, rd, gx, gw, gb);
        e = relerr_fd(nx, dx, gx, 1.0);
        TT_CHECK_MSG(e < 1e-5, "conv dx B%d %dx%dx%d->%d rel err %g", B, H, W, CI, CO, e);
        e = relerr_fd(nw, dw, gw, 1.0);
        TT_CHECK_MSG(e < 2e-5, "conv dw B%d %dx%dx%d->%d rel err %g", B, H, W, CI, CO, e);
        e = relerr_fd(nb, db, gb, 1.0);
        TT_CHECK_MSG(e < 2e-5, "conv db B%d %dx%dx%d->%d rel err %g", B, H, W, CI, CO, e);
        free(gx); free(gw); free(gb);
    }
    /* SIMD vs portable (dx with and without scratch), determinism */
    ipup_conv3x3_fwd_f32_portable(B, H, W, CI, CO, x, w, b, y2);
    e = relerr_ff(ny, y, y2);
    TT_CHECK_MSG(e < 1e-5, "conv fwd simd vs portable rel %g", e);
    ipup_conv3x3_fwd_f32(B, H, W, CI, CO, x, w, b, y2, sf);
    TT_CHECK_MSG(memcmp(y, y2, ny * sizeof(float)) == 0, "conv fwd not bitwise repeatable");
    memcpy(dw2, dw0, nw * sizeof(float)); memcpy(db2, db0, nb * sizeof(float));
    ipup_conv3x3_bwd_f32_portable(B, H, W, CI, CO, x, w, dy, dx2, dw2, db2);
    for (i = 0; i < nw; i++) dw2[i] -= dw0[i];
    for (i = 0; i < nb; i++) db2[i] -= db0[i];
    e = relerr_ff(nx, dx, dx2);
    TT_CHECK_MSG(e < 1e-5, "conv dx simd vs portable rel %g", e);
    e = relerr_ff(nw, dw, dw2);
    TT_CHECK_MSG(e < 1e-5, "conv dw simd vs portable rel %g", e);
    e = relerr_ff(nb, db, db2);
    TT_CHECK_MSG(e < 1e-5, "conv db simd vs portable rel %g", e);
    ipup_conv3x3_bwd_f32(B, H, W, CI, CO, x, w, dy, dx2, NULL, NULL, NULL);
    e = relerr_ff(nx, dx2, dx);
    TT_CHECK_MSG(e < 1e-5, "conv dx (NULL scratch) vs scratch rel %g", e);
    ipup_conv3x3_bwd_f32(B, H, W, CI, CO, x, w, dy, dx2, NULL, NULL, sb);
    TT_CHECK_MSG(memcmp(dx, dx2, nx * sizeof(float)) == 0, "conv dx not bitwise repeatable");
    memcpy(dw2, dw0, nw * sizeof(float));
    ipup_conv3x3_bwd_f32(B, H, W, CI, CO, x, w, dy, NULL, dw2, NULL, sb);
    for (i = 0; i < nw; i++) dw2[i] -= dw0[i];
    TT_CHECK_MSG(memcmp(dw, dw2, nw * sizeof(float)) == 0, "conv dw not bitwise repeatable");
    /* db alone (no dw) gives the bits of db computed together with dw */
    memcpy(db2, db0, nb * sizeof(float));
    ipup_conv3x3_bwd_f32(B, H, W, CI, CO, x, w, dy, NULL, NULL, db2, NULL);
    for (i = 0; i < nb; i++) db2[i] -= db0[i];
    TT_CHECK_MSG(memcmp(db, db2, nb * sizeof(float)) == 0, "conv db-only differs from the full call");

    free(x); free(w); free(b); free(dy); free(y); free(y2); free(dx); free(dx2); free(dw);
    free(db); free(dw0); free(db0); free(dw2); free(db2); free(sb); free(sf);
    free(xd); free(wd); free(bd); free(rd); free(yd); free(g); free(zd);
}

TTEST(conv_fd) {
    check_conv(1, 3, 3, 1, 1, 1);
    check_conv(1, 5, 6, 2, 3, 1);
    check_conv(2, 5, 7, 1, 48, 1); /* one input channel: the fixed 3-long segment kernel */
    check_conv(2, 7, 5, 3, 17, ttest_slow() ? 0 : 1);
    check_conv(1, 6, 9, 5, 33, ttest_slow() ? 0 : 1); /* FD is O(n^2): native runs only */
}
TTEST(conv_bigger) {
    if (!ttest_slow()) {
        check_conv(2, 28, 28, 1, 32, 0);
        check_conv(2, 13, 13, 32, 64, 0);
        check_conv(3, 11, 14, 7, 19, 0);
    } else {
        check_conv(1, 12, 11, 4, 20, 0);
    }
}

/* ------------------------------------------------------------ activations */

TTEST(relu) {
    const int n = 37;
    float *x = frand((size_t)n, 2.0), *y = falloc((size_t)n), *dy = frand((size_t)n, 1.0), *dx = falloc((size_t)n);
    int i;
    x[3] = 0.0f;
    ipup_relu_fwd_f32(n, x, y);
    ipup_relu_bwd_f32(n, x, dy, dx);
    for (i = 0; i < n; i++) {
        TT_CHECK(y[i] == (x[i] > 0.0f ? x[i] : 0.0f));
        if (i != 3) { /* FD away from the kink */
            double h = 1e-4, xv = (double)x[i];
            double fd = ((xv + h > 0 ? xv + h : 0.0) - (xv - h > 0 ? xv - h : 0.0)) / (2 * h);
            TT_NEAR(dx[i], fd * (double)dy[i], 1e-6);
        }
    }
    TT_CHECK(dx[3] == 0.0f); /* subgradient 0 at 0 */
    ipup_relu_fwd_f32(n, x, x); /* in place */
    TT_CHECK(memcmp(x, y, (size_t)n * sizeof(float)) == 0);
    free(x); free(y); free(dy); free(dx);
}

TTEST(gelu) {
    const int n = 41;
    float *x = frand((size_t)n, 4.0), *y = falloc((size_t)n), *dy = frand((size_t)n, 1.0), *dx = falloc((size_t)n);
    int i;
    ipup_gelu_fwd_f32(n, x, y);
    ipup_gelu_bwd_f32(n, x, dy, dx);
    for (i = 0; i < n; i++) {
        double xv = (double)x[i], h = 1e-5;
        double fd = (ref_gelu(xv + h) - ref_gelu(xv - h)) / (2 * h);
        TT_NEAR(y[i], ref_gelu(xv), 2e-6 * (1.0 + fabs(xv)));
        TT_NEAR(dx[i], fd * (double)dy[i], 2e-5);
    }
    /* known points: gelu(0) = 0, gelu'(0) = 0.5, large x -> x, very negative -> 0 */
    {
        float p[4] = {0.0f, 10.0f, -10.0f, 1.0f}, q[4], one[4] = {1, 1, 1, 1}, d[4];
        ipup_gelu_fwd_f32(4, p, q);
        ipup_gelu_bwd_f32(4, p, one, d);
        TT_NEAR(q[0], 0.0, 0.0);
        TT_NEAR(q[1], 10.0, 1e-5);
        TT_NEAR(q[2], 0.0, 1e-5);
        TT_NEAR(d[0], 0.5, 1e-7);
        TT_NEAR(q[3], 0.8411920, 1e-6); /* 0.5(1+tanh(0.79788456*1.044715)) */
    }
    free(x); free(y); free(dy); free(dx);
}

/* GELU over a wide range (SIMD body and scalar tail), extremes and NaN; its exp helper */
TTEST(gelu_range) {
    const int n = 1003;
    float *x = falloc((size_t)n), *y = falloc((size_t)n), *dy = falloc((size_t)n), *dx = falloc((size_t)n);
    double maxe = 0.0, maxd = 0.0;
    int i;
    for (i = 0; i < n; i++) {
        x[i] = (float)(-20.0 + 40.0 * i / (n - 1));
        dy[i] = 1.0f;
    }
    x[5] = 100.0f; x[6] = -100.0f; x[7] = 1e30f; x[8] = -1e30f; x[9] = 0.0f; x[10] = -0.0f;
    ipup_gelu_fwd_f32(n, x, y);
    ipup_gelu_bwd_f32(n, x, dy, dx);
    for (i = 0; i < n; i++) {
        double v = (double)x[i], h = 1e-4 * (1.0 + fabs(v));
        double e = fabs((double)y[i] - ref_gelu(v)) / (1.0 + fabs(v));
        if (e > maxe) maxe = e;
        if (fabs(v) < 50.0) {
            double fd = (ref_gelu(v + h) - ref_gelu(v - h)) / (2.0 * h);
            double d = fabs((double)dx[i] - fd);
            if (d > maxd) maxd = d;
        }
    }
    TT_CHECK_MSG(maxe < 1e-6, "gelu max error %g", maxe);
    TT_CHECK_MSG(maxd < 1e-5, "gelu' max error %g", maxd);
    TT_CHECK(y[5] == 100.0f && fabsf(y[6]) < 1e-30f && y[7] == 1e30f && fabsf(y[8]) < 1e-6f);
    /* NaN in, NaN out, in the SIMD body (index 3) and the tail */
    x[3] = NAN; x[n - 1] = NAN;
    ipup_gelu_fwd_f32(n, x, y);
    ipup_gelu_bwd_f32(n, x, dy, dx);
    TT_CHECK(isnan(y[3]) && isnan(y[n - 1]) && isnan(dx[3]) && isnan(dx[n - 1]));
    /* in place equals out of place */
    memcpy(dx, x, (size_t)n * sizeof(float));
    ipup_gelu_fwd_f32(n, dx, dx);
    TT_CHECK(memcmp(dx + 11, y + 11, (size_t)(n - 12) * sizeof(float)) == 0);
    /* the exp helper: relative error against libm's double exp */
    maxe = 0.0;
    for (i = 0; i <= 2000; i++) {
        double v = -87.0 + 175.0 * i / 2000.0;
        double e = fabs((double)tpriv_expf((float)v) - exp((double)(float)v)) / exp((double)(float)v);
        if (e > maxe) maxe = e;
    }
    TT_CHECK_MSG(maxe < 3e-7, "exp helper max rel error %g", maxe);
    TT_CHECK(tpriv_expf(0.0f) == 1.0f);
    free(x); free(y); free(dy); free(dx);
}

/* ------------------------------------------------------------ softmax cross-entropy */

typedef struct { int B, C; double *l; const int32_t *lab; } xent_ctx;
static double xent_loss(void *vc) {
    xent_ctx *c = (xent_ctx *)vc;
    return ref_xent(c->B, c->C, c->l, c->lab);
}

static void check_xent(int B, int C) {
    size_t n = (size_t)B * (size_t)C;
    float *l = frand(n, 3.0), *d = falloc(n);
    double *ld = dalloc(n), *g = dalloc(n);
    int32_t *lab = (int32_t *)malloc((size_t)B * sizeof(int32_t));
    int r, c, correct = -1, want = 0;
    float loss;
    double e;
    xent_ctx ctx;
    for (r = 0; r < B; r++) lab[r] = (int32_t)((r * 7 + 3) % C);
    to_double(n, l, ld);
    for (r = 0; r < B; r++) {
        int am = 0;
        for (c = 1; c < C; c++) if (l[r * C + c] > l[r * C + am]) am = c;
        if (am == lab[r]) want++;
    }
    loss = ipup_softmax_xent_f32(B, C, l, lab, d, &correct);
    TT_NEAR(loss, ref_xent(B, C, ld, lab), 1e-5 * (1.0 + fabs((double)loss)));
    TT_EQ_INT(correct, want);
    ctx.B = B; ctx.C = C; ctx.l = ld; ctx.lab = lab;
    fd_grad(ld, n, 1e-4, xent_loss, &ctx, g);
    e = relerr_fd(n, d, g, 1e-3);
    TT_CHECK_MSG(e < 1e-4, "xent dlogits vs FD B%d C%d rel %g", B, C, e);
    /* loss-only call (NULL dlogits, NULL correct) gives the same loss */
    TT_CHECK(ipup_softmax_xent_f32(B, C, l, lab, NULL, NULL) == loss);
    free(l); free(d); free(ld); free(g); free(lab);
}

TTEST(softmax_xent) {
    check_xent(1, 1);
    check_xent(1, 10);
    check_xent(3, 7);
    check_xent(17, 10);
    check_xent(4, 37);
}

TTEST(softmax_xent_stable_and_ties) {
    float l[3 * 4] = {1e4f, -1e4f, 0.0f, 5.0f,     /* huge logits */
                      -1e4f, -1e4f, -1e4f, -1e4f,  /* all equal: arg-max is 0 */
                      2.0f, 3.0f, 3.0f, 1.0f};     /* tie: first (1) wins */
    int32_t lab[3] = {1, 0, 1};
    float d[12];
    int correct = -1, i;
    float loss = ipup_softmax_xent_f32(3, 4, l, lab, d, &correct);
    TT_CHECK(isfinite(loss));
    for (i = 0; i < 12; i++) TT_CHECK(isfinite(d[i]));
    /* row 0: loss 2e4 exactly in double; row 1: log 4; row 2: log(e^-1+1+1+e^-2) */
    TT_NEAR(loss, (2e4 + log(4.0) + log(exp(-1.0) + 2.0 + exp(-2.0))) / 3.0, 1e-2);
    TT_EQ_INT(correct, 2); /* rows 1 and 2: ties go to the first maximum (0, then 1) */
    TT_NEAR(d[0], 1.0 / 3.0, 1e-7);
    TT_NEAR(d[1], -1.0 / 3.0, 1e-7);
    TT_NEAR(d[4], (0.25 - 1.0) / 3.0, 1e-7);
    /* rows of dlogits sum to zero */
    for (i = 0; i < 3; i++) TT_NEAR(d[4 * i] + d[4 * i + 1] + d[4 * i + 2] + d[4 * i + 3], 0.0, 1e-6);
}

/* ------------------------------------------------------------ max-pool */

typedef struct { int B, H, W, C; double *x, *r, *y; } pool_ctx;
static double pool_loss(void *vc) {
    pool_ctx *c = (pool_ctx *)vc;
    ref_maxpool(c->B, c->H, c->W, c->C, c->x, c->y);
    return dot((size_t)(c->B * (c->H / 2) * (c->W / 2) * c->C), c->y, c->r);
}
static void check_pool(int B, int H, int W, int C) {
    size_t nx = (size_t)(B * H * W * C), ny = (size_t)(B * (H / 2) * (W / 2) * C), i;
    float *x = falloc(nx), *y = falloc(ny), *dy = frand(ny, 1.0), *dx = falloc(nx);
    double *xd = dalloc(nx), *yd = dalloc(ny), *rd = dalloc(ny), *g = dalloc(nx);
    pool_ctx c;
    double e;
    /* distinct values at least 1e-2 apart, shuffled, so FD with h = 1e-3 never crosses a tie */
    for (i = 0; i < nx; i++) x[i] = (float)((double)((i * 7919u) % nx) * 0.01 - 0.3);
    to_double(nx, x, xd); to_double(ny, dy, rd);
    ipup_maxpool2_fwd_f32(B, H, W, C, x, y);
    ref_maxpool(B, H, W, C, xd, yd);
    e = relerr_fd(ny, y, yd, 1.0);
    TT_CHECK_MSG(e == 0.0, "maxpool fwd differs: %g", e);
    for (i = 0; i < nx; i++) dx[i] = 1e30f;
    ipup_maxpool2_bwd_f32(B, H, W, C, x, dy, dx);
    c.B = B; c.H = H; c.W = W; c.C = C; c.x = xd; c.r = rd; c.y = yd;
    fd_grad(xd, nx, 1e-3, pool_loss, &c, g);
    e = relerr_fd(nx, dx, g, 1.0);
    TT_CHECK_MSG(e < 1e-6, "maxpool dx vs FD B%d %dx%dx%d rel %g", B, H, W, C, e);
    free(x); free(y); free(dy); free(dx); free(xd); free(yd); free(rd); free(g);
}
TTEST(maxpool) {
    check_pool(1, 2, 2, 1);
    check_pool(1, 5, 7, 3);  /* odd: last row/col dropped (floor) */
    check_pool(2, 6, 4, 17);
    if (!ttest_slow()) check_pool(3, 26, 26, 5);
    else check_pool(1, 9, 10, 3);
}
TTEST(maxpool_ties_first) {
    float x[2 * 2 * 2] = {1, 5, 1, 5, 0, 5, 1, 4}; /* C=2: channel 0 ties (0,0),(0,1),(1,1); channel 1 (0,0),(0,1),(1,0) */
    float dy[2] = {3, 7}, y[2], dx[8];
    ipup_maxpool2_fwd_f32(1, 2, 2, 2, x, y);
    TT_CHECK(y[0] == 1.0f && y[1] == 5.0f);
    ipup_maxpool2_bwd_f32(1, 2, 2, 2, x, dy, dx);
    TT_CHECK(dx[0] == 3.0f && dx[2] == 0.0f && dx[6] == 0.0f && dx[4] == 0.0f);
    TT_CHECK(dx[1] == 7.0f && dx[3] == 0.0f && dx[5] == 0.0f && dx[7] == 0.0f);
}

/* ------------------------------------------------------------ dropout */

TTEST(dropout) {
    const int n = ttest_slow() ? 4000 : 40000;
    const float p = 0.3f;
    float *x = frand((size_t)n, 1.0), *y = falloc((size_t)n), *y2 = falloc((size_t)n);
    float *dy = frand((size_t)n, 1.0), *dx = falloc((size_t)n), *part = falloc(100);
    int i, kept = 0, agree = 1, same_other = 0;
    for (i = 0; i < n; i++) if (x[i] == 0.0f) x[i] = 0.5f;
    ipup_dropout_fwd_f32(n, p, 42, 7, 1000, x, y);
    ipup_dropout_bwd_f32(n, p, 42, 7, 1000, dy, dx);
    for (i = 0; i < n; i++) {
        int k = y[i] != 0.0f;
        kept += k;
        if (k) {
            TT_NEAR(y[i], (double)x[i] / (1.0 - (double)p), 1e-6);
            if (!(dx[i] == dy[i] * (1.0f / (1.0f - p)))) agree = 0;
        } else if (dx[i] != 0.0f) agree = 0;
        /* the mask is the library's counter RNG keyed by (seed, step, offset + i) */
        if (k != (ipup_rng_uniform_f32(42, 7, 1000 + (uint64_t)i) >= p)) agree = 0;
    }
    TT_CHECK(agree);
    /* keep rate 0.7 within 5 sigma */
    TT_NEAR((double)kept / n, 0.7, 5.0 * sqrt(0.21 / n));
    /* recomputed forward: same bits; a slice with its offset sees the same mask */
    ipup_dropout_fwd_f32(n, p, 42, 7, 1000, x, y2);
    TT_CHECK(memcmp(y, y2, (size_t)n * sizeof(float)) == 0);
    ipup_dropout_fwd_f32(100, p, 42, 7, 1000 + 500, x + 500, part);
    TT_CHECK(memcmp(part, y + 500, 100 * sizeof(float)) == 0);
    /* another step gives another mask */
    ipup_dropout_fwd_f32(n, p, 42, 8, 1000, x, y2);
    for (i = 0; i < n; i++) same_other += (y[i] != 0.0f) == (y2[i] != 0.0f);
    TT_CHECK(same_other < n - n / 10);
    /* p = 0: identity; p = 1: zeros; in place */
    ipup_dropout_fwd_f32(n, 0.0f, 1, 2, 3, x, y2);
    TT_CHECK(memcmp(x, y2, (size_t)n * sizeof(float)) == 0);
    ipup_dropout_fwd_f32(n, 1.0f, 1, 2, 3, x, y2);
    for (i = 0; i < n; i++) if (y2[i] != 0.0f) { TT_FAILF("p=1 kept %d", i); break; }
    memcpy(y2, x, (size_t)n * sizeof(float));
    ipup_dropout_fwd_f32(n, p, 42, 7, 1000, y2, y2);
    TT_CHECK(memcmp(y, y2, (size_t)n * sizeof(float)) == 0);
    free(x); free(y); free(y2); free(dy); free(dx); free(part);
}

/* dropout backward against FD of a double forward that rebuilds the documented mask */
typedef struct { int n; double p; double *x, *r; } drop_ctx;
static double drop_loss(void *vc) {
    drop_ctx *c = (drop_ctx *)vc;
    double L = 0.0;
    int i;
    for (i = 0; i < c->n; i++)
        if ((double)ipup_rng_uniform_f32(5, 9, 77 + (uint64_t)i) >= c->p) L += c->r[i] * c->x[i] / (1.0 - c->p);
    return L;
}
TTEST(dropout_fd) {
    const int n = 53;
    float *x = frand((size_t)n, 1.0), *y = falloc((size_t)n), *dy = frand((size_t)n, 1.0), *dx = falloc((size_t)n);
    double *xd = dalloc((size_t)n), *rd = dalloc((size_t)n), *g = dalloc((size_t)n), e;
    drop_ctx c;
    to_double((size_t)n, x, xd); to_double((size_t)n, dy, rd);
    c.n = n; c.p = (double)0.25f; c.x = xd; c.r = rd;
    ipup_dropout_fwd_f32(n, 0.25f, 5, 9, 77, x, y);
    ipup_dropout_bwd_f32(n, 0.25f, 5, 9, 77, dy, dx);
    fd_grad(xd, (size_t)n, 1e-3, drop_loss, &c, g);
    e = relerr_fd((size_t)n, dx, g, 1.0);
    TT_CHECK_MSG(e < 1e-6, "dropout dx vs FD rel %g", e);
    {   /* forward against the same double loop, element by element */
        int i, bad = 0;
        for (i = 0; i < n; i++) {
            double want = (double)ipup_rng_uniform_f32(5, 9, 77 + (uint64_t)i) >= c.p ? xd[i] / (1.0 - c.p) : 0.0;
            if (fabs((double)y[i] - want) > 1e-6) bad++;
        }
        TT_EQ_INT(bad, 0);
    }
    free(x); free(y); free(dy); free(dx); free(xd); free(rd); free(g);
}

/* ------------------------------------------------------------ RNG and initialisers */

TTEST(rng) {
    /* ipup_mix64(s) is the first output of splitmix64 seeded with s; published test vector
       of Vigna's splitmix64.c with seed 1234567: 6457827717110365317 */
    TT_CHECK(ipup_mix64(1234567u) == UINT64_C(6457827717110365317));
    TT_CHECK(ipup_rng_u64(1, 2, 3) == ipup_rng_u64(1, 2, 3));
    TT_CHECK(ipup_rng_u64(1, 2, 3) != ipup_rng_u64(1, 3, 2));
    TT_CHECK(ipup_rng_u64(1, 2, 3) != ipup_rng_u64(2, 2, 3));
    {
        int i, hist[10] = {0}, ok = 1;
        double mean = 0.0;
        const int n = 20000;
        for (i = 0; i < n; i++) {
            float u = ipup_rng_uniform_f32(9, 1, (uint64_t)i);
            uint64_t k = ipup_rng_below(9, 2, (uint64_t)i, 10);
            if (!(u >= 0.0f && u < 1.0f) || k >= 10) ok = 0;
            else hist[k]++;
            mean += (double)u;
        }
        TT_CHECK(ok);
        TT_NEAR(mean / n, 0.5, 5.0 * sqrt(1.0 / 12.0 / n));
        for (i = 0; i < 10; i++) TT_NEAR(hist[i], n / 10, 5.0 * sqrt(n * 0.09));
    }
    /* ipup_rng_below against a 128-bit product computed another way (double-checked by
       splitting into 16-bit digits) */
    {
        uint64_t r = ipup_rng_u64(5, 6, 7), n = UINT64_C(0xFFFFFFFFFFFF1234), hi = 0;
        unsigned long long d[8] = {0};
        int i, j;
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++) {
                unsigned long long prod = ((r >> (16 * i)) & 0xFFFF) * ((n >> (16 * j)) & 0xFFFF);
                d[i + j] += prod;
            }
        for (i = 0; i < 7; i++) { d[i + 1] += d[i] >> 16; d[i] &= 0xFFFF; }
        for (i = 7; i >= 4; i--) hi = (hi << 16) | (uint64_t)d[i];
        TT_CHECK(ipup_rng_below(5, 6, 7, n) == hi);
    }
}

TTEST(init) {
    const int fi = 784, fo = 256, n = ttest_slow() ? 20000 : fi * fo;
    float *w = falloc((size_t)n), *w2 = falloc((size_t)n);
    double limit = sqrt(6.0 / (fi + fo)), s = 0.0, s2 = 0.0;
    int i, inside = 1;
    ipup_glorot_uniform_f32(fi, fo, n, 123, 4, w);
    for (i = 0; i < n; i++) {
        if (!(fabs((double)w[i]) <= limit)) inside = 0;
        s += (double)w[i];
        s2 += (double)w[i] * (double)w[i];
    }
    TT_CHECK(inside);
    TT_NEAR(s / n, 0.0, 5.0 * limit / sqrt(3.0 * n));
    TT_NEAR(s2 / n, limit * limit / 3.0, 0.02 * limit * limit);
    /* element i depends only on (seed, stream, i), and is (2u-1)*limit */
    TT_NEAR(w[17], (2.0 * (double)ipup_rng_uniform_f32(123, 4, 17) - 1.0) * limit, 1e-7);
    ipup_glorot_uniform_f32(fi, fo, 100, 123, 4, w2);
    TT_CHECK(memcmp(w, w2, 100 * sizeof(float)) == 0);
    ipup_glorot_uniform_f32(fi, fo, 100, 123, 5, w2);
    TT_CHECK(memcmp(w, w2, 100 * sizeof(float)) != 0);
    ipup_zeros_f32(n, w);
    for (i = 0; i < n; i++) if (w[i] != 0.0f) { TT_FAILF("zeros: w[%d] = %g", i, (double)w[i]); break; }
    free(w); free(w2);
}

/* ------------------------------------------------------------ optimizers and add */

TTEST(optimizers) {
    const int n = 29, steps = 5;
    const float lr = 0.01f, mu = 0.9f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f, scale = 1.0f / 6.0f;
    float *w1 = frand((size_t)n, 1.0), *w2 = falloc((size_t)n), *w3 = falloc((size_t)n);
    float *v2 = falloc((size_t)n), *m3 = falloc((size_t)n), *v3 = falloc((size_t)n), *g = falloc((size_t)n);
    double *d1 = dalloc((size_t)n), *d2 = dalloc((size_t)n), *d3 = dalloc((size_t)n);
    double *dv2 = dalloc((size_t)n), *dm3 = dalloc((size_t)n), *dv3 = dalloc((size_t)n);
    int i, t;
    memcpy(w2, w1, (size_t)n * sizeof(float)); memcpy(w3, w1, (size_t)n * sizeof(float));
    to_double((size_t)n, w1, d1); to_double((size_t)n, w1, d2); to_double((size_t)n, w1, d3);
    ipup_zeros_f32(n, v2); ipup_zeros_f32(n, m3); ipup_zeros_f32(n, v3);
    for (i = 0; i < n; i++) dv2[i] = dm3[i] = dv3[i] = 0.0;
    for (t = 1; t <= steps; t++) {
        for (i = 0; i < n; i++) g[i] = (float)(trand() * 6.0);
        ipup_sgd_f32(n, lr, scale, w1, g);
        ipup_momentum_f32(n, lr, mu, scale, w2, v2, g);
        ipup_adam_f32(n, lr, b1, b2, eps, t, scale, w3, m3, v3, g);
        for (i = 0; i < n; i++) {
            double gs = (double)g[i] * (double)scale;
            double mh, vh;
            d1[i] -= (double)lr * gs;
            dv2[i] = (double)mu * dv2[i] + gs;
            d2[i] -= (double)lr * dv2[i];
            dm3[i] = (double)b1 * dm3[i] + (1.0 - (double)b1) * gs;
            dv3[i] = (double)b2 * dv3[i] + (1.0 - (double)b2) * gs * gs;
            mh = dm3[i] / (1.0 - pow((double)b1, t));
            vh = dv3[i] / (1.0 - pow((double)b2, t));
            d3[i] -= (double)lr * mh / (sqrt(vh) + (double)eps);
        }
    }
    for (i = 0; i < n; i++) {
        TT_NEAR(w1[i], d1[i], 1e-6);
        TT_NEAR(w2[i], d2[i], 1e-6);
        TT_NEAR(v2[i], dv2[i], 1e-6);
        TT_NEAR(w3[i], d3[i], 2e-6);
        TT_NEAR(m3[i], dm3[i], 1e-6);
        TT_NEAR(v3[i], dv3[i], 1e-6);
    }
    /* Adam's first step moves each weight by about lr (bias correction at work) */
    {
        float w = 0.0f, m = 0.0f, v = 0.0f, gg = 3.0f;
        ipup_adam_f32(1, 0.01f, 0.9f, 0.999f, 1e-8f, 1, 1.0f, &w, &m, &v, &gg);
        TT_NEAR(w, -0.01, 1e-6);
    }
    free(w1); free(w2); free(w3); free(v2); free(m3); free(v3); free(g);
    free(d1); free(d2); free(d3); free(dv2); free(dm3); free(dv3);
}

TTEST(add_accumulate) {
    float acc[7] = {1, 2, 3, 4, 5, 6, 7}, x[7] = {0.5f, -1, 0, 2, 3, -6, 1e-3f};
    int i;
    ipup_add_f32(7, acc, x);
    for (i = 0; i < 7; i++) TT_CHECK(acc[i] == (float)(i + 1) + x[i]);
}

/* ------------------------------------------------------------ vector paths: scalar bits */

/* Values with every special case of the element-wise kernels: ties, +-0, NaN, +-inf. */
static void special_fill(size_t n, float *x, unsigned salt) {
    static const float sp[8] = {0.0f, -0.0f, 1.0f, 1.0f, -2.5f, INFINITY, -INFINITY, 0.25f};
    size_t i;
    for (i = 0; i < n; i++) x[i] = ((i * 2654435761u + salt) >> 7) % 3 == 0 ? sp[(i + salt) % 8] : (float)trand();
    if (n > 5) x[5] = NAN;
}
/* the scalar loops the kernels vectorise, written out here: the vector paths must give
   exactly their bits (NaN, -0, ties and tails included) */
static void scalar_pool_bwd(int B, int H, int W, int C, const float *x, const float *dy, float *dx) {
    int n, oh, ow, c;
    memset(dx, 0, (size_t)(B * H * W * C) * sizeof(float));
    for (n = 0; n < B; n++) for (oh = 0; oh < H / 2; oh++) for (ow = 0; ow < W / 2; ow++)
        for (c = 0; c < C; c++) {
            size_t o[4], best;
            float m;
            int k;
            o[0] = ((size_t)(n * H + 2 * oh) * (size_t)W + (size_t)(2 * ow)) * (size_t)C + (size_t)c;
            o[1] = o[0] + (size_t)C; o[2] = o[0] + (size_t)(W * C); o[3] = o[2] + (size_t)C;
            best = o[0]; m = x[best];
            for (k = 1; k < 4; k++) if (x[o[k]] > m) { m = x[o[k]]; best = o[k]; }
            dx[best] = dy[((n * (H / 2) + oh) * (W / 2) + ow) * C + c];
        }
}
static void check_pool_bits(int B, int H, int W, int C) {
    size_t nx = (size_t)(B * H * W * C), ny = (size_t)(B * (H / 2) * (W / 2) * C), i;
    float *x = falloc(nx), *y = falloc(ny), *dy = falloc(ny), *dx = falloc(nx), *ref = falloc(nx), *yr = falloc(ny);
    uint8_t *idx = (uint8_t *)malloc(ny);
    size_t masked = 0;
    TT_CHECK(idx != NULL);
    if (!idx) return;
    special_fill(nx, x, 3u);
    special_fill(ny, dy, 5u);
    for (i = 0; i + 1 < nx; i += 7) x[i + 1] = x[i]; /* more ties */
    x[0] = x[C] = x[(size_t)W * (size_t)C] = x[(size_t)(W + 1) * (size_t)C] = -1.0f; /* a window that ReLU zeroes */
    ipup_maxpool2_fwd_f32(B, H, W, C, x, y);
    {
        int n, oh, ow, c, k;
        for (n = 0; n < B; n++) for (oh = 0; oh < H / 2; oh++) for (ow = 0; ow < W / 2; ow++)
            for (c = 0; c < C; c++) {
                size_t o0 = ((size_t)(n * H + 2 * oh) * (size_t)W + (size_t)(2 * ow)) * (size_t)C + (size_t)c;
                size_t o[3];
                float m = x[o0];
                o[0] = o0 + (size_t)C; o[1] = o0 + (size_t)(W * C); o[2] = o[1] + (size_t)C;
                for (k = 0; k < 3; k++) if (x[o[k]] > m) m = x[o[k]];
                yr[((n * (H / 2) + oh) * (W / 2) + ow) * C + c] = m;
            }
    }
    TT_CHECK_MSG(memcmp(y, yr, ny * sizeof(float)) == 0, "maxpool fwd bits B%d %dx%dx%d", B, H, W, C);
    for (i = 0; i < nx; i++) dx[i] = 1e30f;
    ipup_maxpool2_bwd_f32(B, H, W, C, x, dy, dx);
    scalar_pool_bwd(B, H, W, C, x, dy, ref);
    TT_CHECK_MSG(memcmp(dx, ref, nx * sizeof(float)) == 0, "maxpool bwd bits B%d %dx%dx%d", B, H, W, C);
    /* the arg-max bytes instead of the input: the same y, the same dx */
    for (i = 0; i < ny; i++) { y[i] = 1e30f; idx[i] = 99; }
    ipup_maxpool2_fwd_idx_f32(B, H, W, C, x, y, idx, 0);
    TT_CHECK_MSG(memcmp(y, yr, ny * sizeof(float)) == 0, "maxpool fwd_idx y bits B%d %dx%dx%d", B, H, W, C);
    for (i = 0; i < nx; i++) dx[i] = 1e30f;
    ipup_maxpool2_bwd_idx_f32(B, H, W, C, idx, dy, dx);
    TT_CHECK_MSG(memcmp(dx, ref, nx * sizeof(float)) == 0, "maxpool bwd_idx bits B%d %dx%dx%d", B, H, W, C);
    /* fused ReLU backward: the bits of pool backward, then ReLU backward with x = relu(z) */
    ipup_relu_fwd_f32((int)nx, x, x);
    scalar_pool_bwd(B, H, W, C, x, dy, ref);
    for (i = 0; i < nx; i++) ref[i] = x[i] > 0.0f ? ref[i] : 0.0f;
    for (i = 0; i < nx; i++) dx[i] = 1e30f;
    ipup_maxpool2_relu_bwd_f32(B, H, W, C, x, dy, dx);
    TT_CHECK_MSG(memcmp(dx, ref, nx * sizeof(float)) == 0, "maxpool+relu bwd bits B%d %dx%dx%d", B, H, W, C);
    ipup_maxpool2_fwd_f32(B, H, W, C, x, yr);
    ipup_maxpool2_fwd_idx_f32(B, H, W, C, x, y, idx, 1);
    TT_CHECK_MSG(memcmp(y, yr, ny * sizeof(float)) == 0, "maxpool fwd_idx relu y bits B%d %dx%dx%d", B, H, W, C);
    for (i = 0; i < ny; i++) masked += idx[i] == 4;
    TT_CHECK_MSG(masked > 0 && masked < ny, "maxpool fwd_idx relu: %zu of %zu windows masked (some, not all)", masked, ny);
    for (i = 0; i < nx; i++) dx[i] = 1e30f;
    ipup_maxpool2_bwd_idx_f32(B, H, W, C, idx, dy, dx);
    TT_CHECK_MSG(memcmp(dx, ref, nx * sizeof(float)) == 0, "maxpool+relu bwd_idx bits B%d %dx%dx%d", B, H, W, C);
    free(x); free(y); free(dy); free(dx); free(ref); free(yr); free(idx);
}
TTEST(vector_paths_scalar_bits) {
    const int n = 1000 + 13; /* vectors, then a tail */
    float *x = falloc((size_t)n), *dy = falloc((size_t)n), *y = falloc((size_t)n), *r = falloc((size_t)n);
    float *w = falloc((size_t)n), *v = falloc((size_t)n), *wr = falloc((size_t)n), *vr = falloc((size_t)n);
    const float lr = 0.37f, mu = 0.9f, sc = 1.0f / 3.0f, p = 0.3f, ds = 1.0f / (1.0f - 0.3f);
    int i;
    special_fill((size_t)n, x, 1u);
    special_fill((size_t)n, dy, 2u);
    ipup_relu_fwd_f32(n, x, y);
    for (i = 0; i < n; i++) r[i] = x[i] > 0.0f ? x[i] : 0.0f;
    TT_CHECK(memcmp(y, r, (size_t)n * sizeof(float)) == 0);
    ipup_relu_bwd_f32(n, x, dy, y);
    for (i = 0; i < n; i++) r[i] = x[i] > 0.0f ? dy[i] : 0.0f;
    TT_CHECK(memcmp(y, r, (size_t)n * sizeof(float)) == 0);
    memcpy(y, x, (size_t)n * sizeof(float));
    ipup_add_f32(n, y, dy);
    for (i = 0; i < n; i++) r[i] = x[i] + dy[i];
    TT_CHECK(memcmp(y, r, (size_t)n * sizeof(float)) == 0);
    ipup_dropout_fwd_f32(n, p, 11, 12, 1u << 20, x, y);
    for (i = 0; i < n; i++) r[i] = ipup_rng_uniform_f32(11, 12, (1u << 20) + (uint64_t)i) >= p ? x[i] * ds : 0.0f;
    TT_CHECK(memcmp(y, r, (size_t)n * sizeof(float)) == 0);
    for (i = 0; i < n; i++) { w[i] = wr[i] = (float)trand(); v[i] = vr[i] = (float)trand(); }
    ipup_sgd_f32(n, lr, sc, w, dy);
    for (i = 0; i < n; i++) { float gs = dy[i] * sc; float st = lr * gs; wr[i] = wr[i] - st; }
    TT_CHECK(memcmp(w, wr, (size_t)n * sizeof(float)) == 0);
    ipup_momentum_f32(n, lr, mu, sc, w, v, dy);
    for (i = 0; i < n; i++) {
        float gs = dy[i] * sc, m1 = mu * vr[i], vi = m1 + gs, st = lr * vi;
        vr[i] = vi;
        wr[i] = wr[i] - st;
    }
    TT_CHECK(memcmp(w, wr, (size_t)n * sizeof(float)) == 0 && memcmp(v, vr, (size_t)n * sizeof(float)) == 0);
    {   /* dense or conv then ReLU fused: the bits of the two kernels one after the other */
        static const int shp[3][3] = {{32, 784, 256}, {5, 37, 10}, {3, 9, 33}};
        int q;
        for (q = 0; q < 3; q++) {
            const int B = shp[q][0], IN = shp[q][1], OUT = shp[q][2];
            float *xx = frand((size_t)(B * IN), 1.0), *ww = frand((size_t)(IN * OUT), 1.0), *bb = frand((size_t)OUT, 1.0);
            float *y1 = falloc((size_t)(B * OUT)), *y2 = falloc((size_t)(B * OUT));
            ipup_dense_fwd_f32(B, IN, OUT, xx, ww, bb, y1);
            ipup_relu_fwd_f32(B * OUT, y1, y1);
            ipup_dense_relu_fwd_f32(B, IN, OUT, xx, ww, bb, y2);
            TT_CHECK_MSG(memcmp(y1, y2, (size_t)(B * OUT) * sizeof(float)) == 0, "dense+relu %dx%dx%d", B, IN, OUT);
            free(xx); free(ww); free(bb); free(y1); free(y2);
        }
        for (q = 0; q < 3; q++) {
            static const int cs[3][5] = {{2, 28, 28, 1, 32}, {1, 13, 13, 32, 64}, {2, 7, 9, 3, 19}};
            const int B = cs[q][0], H = cs[q][1], W = cs[q][2], CI = cs[q][3], CO = cs[q][4];
            const size_t ny = (size_t)(B * (H - 2) * (W - 2) * CO);
            float *xx = frand((size_t)(B * H * W * CI), 1.0), *ww = frand((size_t)(9 * CI * CO), 1.0), *bb = frand((size_t)CO, 1.0);
            float *y1 = falloc(ny), *y2 = falloc(ny);
            ipup_conv3x3_fwd_f32(B, H, W, CI, CO, xx, ww, bb, y1, NULL);
            ipup_relu_fwd_f32((int)ny, y1, y1);
            ipup_conv3x3_relu_fwd_f32(B, H, W, CI, CO, xx, ww, bb, y2, NULL);
            TT_CHECK_MSG(memcmp(y1, y2, ny * sizeof(float)) == 0, "conv+relu B%d %dx%dx%d->%d", B, H, W, CI, CO);
            free(xx); free(ww); free(bb); free(y1); free(y2);
        }
    }
    {   /* the gradient check's finiteness test: inf or NaN anywhere, vector part or tail */
        static const size_t where[4] = {0, 17, 1000, 1012};
        int q;
        for (i = 0; i < n; i++) r[i] = (float)trand();
        TT_CHECK(ipup__finite_f32((size_t)n, r) == 1);
        for (q = 0; q < 8; q++) {
            const float keep = r[where[q % 4]];
            r[where[q % 4]] = q < 4 ? INFINITY : NAN;
            TT_CHECK_MSG(ipup__finite_f32((size_t)n, r) == 0, "non-finite at %d not seen", (int)where[q % 4]);
            r[where[q % 4]] = keep;
        }
    }
    check_pool_bits(2, 6, 4, 16);  /* C a multiple of 16 (and of 8) */
    check_pool_bits(1, 5, 7, 32);  /* odd H, W: the uncovered row and column are zero */
    check_pool_bits(2, 24, 24, 64);
    check_pool_bits(1, 6, 6, 24);  /* AVX2 vectors, portable on AVX-512 */
    check_pool_bits(1, 4, 6, 7);
    free(x); free(dy); free(y); free(r); free(w); free(v); free(wr); free(vr);
}

TTEST(flatten_is_view) {
    /* dense over a flattened NHWC tensor == dense over the same bytes as (B, H*W*C) */
    float x[2 * 2 * 3 * 2], w[12 * 3], y1[2 * 3], y2[2 * 3];
    int i;
    for (i = 0; i < 24; i++) x[i] = (float)i * 0.1f - 1.0f;
    for (i = 0; i < 36; i++) w[i] = (float)(i % 5) * 0.2f - 0.4f;
    TT_EQ_INT(IPUP_FLATTEN_DIM(2, 3, 2), 12);
    ipup_dense_fwd_f32(2, IPUP_FLATTEN_DIM(2, 3, 2), 3, x, w, NULL, y1);
    ipup_dense_fwd_f32_portable(2, 12, 3, x, w, NULL, y2);
    for (i = 0; i < 6; i++) TT_NEAR(y1[i], y2[i], 1e-6);
}

TTEST(simd_path_named) {
    printf("    kernels path: %s\n", IPUP_KERNELS_SIMD);
#if defined(IPUPIPE_SCALAR_BLOCKED) && IPUPIPE_SCALAR_BLOCKED
    TT_STREQ(IPUP_KERNELS_SIMD, "scalar-blocked"); /* forced, or a Cortex-M / RV32F build */
#elif defined(IPUPIPE_NO_SIMD)
    TT_STREQ(IPUP_KERNELS_SIMD, "portable");
#elif defined(__AVX512F__)
    TT_STREQ(IPUP_KERNELS_SIMD, "avx512");
#elif defined(__AVX2__) && defined(__FMA__)
    TT_STREQ(IPUP_KERNELS_SIMD, "avx2");
#else
    TT_STREQ(IPUP_KERNELS_SIMD, "portable");
#endif
}

static const ttest_case cases[] = {
    TT_CASE(dense_fd),       TT_CASE(dense_bigger),  TT_CASE(dense_accumulates), TT_CASE(dense_degenerate),
    TT_CASE(conv_fd),        TT_CASE(conv_bigger),   TT_CASE(relu),
    TT_CASE(gelu),           TT_CASE(gelu_range),    TT_CASE(softmax_xent),  TT_CASE(softmax_xent_stable_and_ties),
    TT_CASE(maxpool),        TT_CASE(maxpool_ties_first), TT_CASE(dropout), TT_CASE(dropout_fd),
    TT_CASE(rng),            TT_CASE(init),          TT_CASE(optimizers),
    TT_CASE(add_accumulate), TT_CASE(flatten_is_view), TT_CASE(vector_paths_scalar_bits), TT_CASE(simd_path_named),
};
int main(int argc, char **argv) { return TTEST_MAIN(cases, argc, argv); }
